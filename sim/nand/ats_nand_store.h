// SPDX-License-Identifier: Apache-2.0
// ats_nand_store: sparse flash array of one simulated NAND die (storage behind ats_nand_die.sv).
// Only programmed pages use memory. Faults (factory bad blocks, program/erase failure, read bit
// flips, torn pages/blocks after a power cut) each draw from their own seeded generator, so a run
// is reproducible and changing one fault's rate does not move the others.
//
// The SystemVerilog die calls the extern "C" functions below through DPI-C (handle = chandle);
// a plain C++ harness may call them too (ats_nand_save / ats_nand_load to keep an image).
// With an image, every change is also journaled to <image>.log (README.md "Journal"): a process
// killed without a power-off loses nothing.
#pragma once
#include <cstdint>

#ifdef __cplusplus
extern "C" {
#endif

// Program/erase result bits (return value of ats_nand_program / ats_nand_erase).
#define ATS_NAND_FAIL        1u  // status FAIL: the operation failed (fault or bad block)
#define ATS_NAND_NOT_ERASED  2u  // misuse: page was already programmed (content = old AND new)
#define ATS_NAND_OUT_OF_ORDER 4u // misuse: a higher page of the block was already programmed

// Create a die's store. Rates: *_ppm per million (bad blocks: of blocks; pfail/efail: of
// operations), flip_ppb per 10^9 bits read. image: file to load now if it exists ("" = none);
// the same file is written at each power-off and reloaded at each power-on (ats_nand_power), the
// journal <image>.log replayed after it when it continues that image.
void *ats_nand_open(int die_id, int planes, int blocks, int pages_per_block, int page_bytes,
                    int spare_bytes, int bad_ppm, int bad_seed, int pfail_ppm, int pfail_seed,
                    int efail_ppm, int efail_seed, int flip_ppb, int flip_seed, int tear_seed,
                    const char *image);
void ats_nand_close(void *h);
// Page register (one per die): fill with 0xFF, byte get/set (column = main data then spare).
void ats_nand_reg_fill(void *h);
int ats_nand_reg_get(void *h, int col);
void ats_nand_reg_set(void *h, int col, int value);
// Array operations. read: array -> register with bit flips; returns the number of bits flipped.
int ats_nand_read_page(void *h, int row);
int ats_nand_program(void *h, int row);  // register -> array; ATS_NAND_* bits
int ats_nand_erase(void *h, int block);  // ATS_NAND_* bits
// Interrupted operations (power cut or RESET while busy): page torn / block indeterminate.
void ats_nand_tear_page(void *h, int row);
void ats_nand_tear_block(void *h, int block);
// ONFI parameter page byte (256-byte page, offsets of ONFI 1.0, CRC-16 in bytes 254-255).
int ats_nand_param_byte(void *h, int idx);
// Power edge: on = 0 saves the image (if any), on = 1 reloads it (if any).
void ats_nand_power(void *h, int on);
// Image file: returns 0 on success. ats_nand_load fails without changing the die (-1 cannot open,
// -2 not an image, -3 ends early, -4 format version other than 1, -5 another geometry).
int ats_nand_save(void *h, const char *path);
int ats_nand_load(void *h, const char *path);
// "" while the die's own image loaded (or there is none); else why the image file was refused at the
// last open / power-on: the die then never writes that file or its journal (README.md "Image file").
// The SystemVerilog die checks it after open and power-on and stops the run with $fatal.
const char *ats_nand_image_error(void *h);
// Before the die's own $error: under Verilator, keep that one error from stopping the run.
void ats_nand_error_nonfatal(void);
// At the end of the run (final): take those errors off Verilator's error count (exit status 0
// unless other errors happened); the violations stay visible in the log and in viol_count.
void ats_nand_error_forgive(void);
// Violation reporting mode of the dies: ATS_NAND_VIOL=stop|count|quiet (or 2|1|0) if set, else dflt
// (the die's VIOL_ERROR parameter). An unknown value is reported and treated as "stop".
int ats_nand_viol_mode(int dflt);
// Introspection for harnesses and debug (never used by the tests to decide what is correct).
int ats_nand_pages_stored(void *h);
int ats_nand_is_factory_bad(void *h, int block);
// Handle of die `die_id` opened in this process (nullptr if none): for C++ harnesses.
void *ats_nand_handle(int die_id);
// The array timer (the SoC simulator's cycle skipping, sim/soc/README.md "Cycle skipping"): a die
// built with ATS_SIM_SKIP reports when its array operation ends (busy_end in the die's time unit,
// ns; t < 0: not busy); ats_nand_next_busy_end() is the earliest over the open dies (< 0: none busy).
void ats_nand_busy_until(void *h, double t);
double ats_nand_next_busy_end(void);

#ifdef __cplusplus
}
#endif
