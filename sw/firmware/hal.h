// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: hardware access. Every register comes from the generated csr.h / soc.h (the
// CSRs of soc/ats_litex.py); nothing here writes an address by hand except the page buffer's base,
// which is the generated mem.h's ATSBUF_BASE.
#pragma once
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "ftl/ftl.h"

// generated (tools/contract.py, build/gen/include): the host command contract ATS_OP_* / ATS_STS_*
// (rtl/common/ats_host_pkg.sv) and the remap engine's ATS_REMAP_OP_* / ATS_REMAP_STS_* (its SpinalHDL
// source through build/gen/remap_default/params.json)
#include <ats_host.h>
#include <ats_remap.h>

// firmware-port operations (rtl/backend/README.md "Firmware port")
enum { FW_NREAD = 0, FW_NPROG = 1, FW_NERASE = 2, FW_REMAP = 3, FW_RELOC = 4, FW_SEQSET = 5, FW_MERGE = 6, FW_SLOAD = 7 };
// op 7 SLOAD's rops (rtl/backend/README.md "Firmware port"): loads 0-2, index reads 3-6
enum {
    SL_LPGN = 0, SL_PPN = 1, SL_INSERT = 2, SL_RD_ENTRY = 3, SL_RD_FRAG = 4, SL_RD_PPN = 5, SL_RD_CTR = 6
};
// remap operations (architecture.md section 3)
enum {
    R_MAP_WRITE = ATS_REMAP_OP_MAP_WRITE, R_LOOKUP = ATS_REMAP_OP_LOOKUP, R_TX_WRITE = ATS_REMAP_OP_TX_WRITE,
    R_TX_LOOKUP = ATS_REMAP_OP_TX_LOOKUP, R_COMMIT = ATS_REMAP_OP_COMMIT, R_ABORT = ATS_REMAP_OP_ABORT,
    R_UNMAP = ATS_REMAP_OP_UNMAP
};
// NAND status (NREAD / NPROG / NERASE responses)
enum { N_OK = 0, N_PROGRAM_FAIL = 1, N_ERASE_FAIL = 2, N_UNCORR = 3, N_BAD_REQ = 4, N_ERASED = 5 };

typedef struct {
    uint32_t status, mapped, beats, ppn, data;
} fw_rsp_t;

static inline volatile uint32_t *hal_buf(void) { return (volatile uint32_t *)ATSBUF_BASE; }

// status bits (CSR fields)
static inline uint32_t hal_status(void) { return ats_status_read(); }
#define ST_BIT(name) ((hal_status() >> CSR_ATS_STATUS_##name##_OFFSET) & 1u)

uint64_t hal_cycles(void);
uint64_t hal_next_seq(void);
uint64_t hal_cpl_seq(void);
void hal_ctrl(uint32_t host_en, uint32_t wb_hold);
uint32_t hal_ctrl_host_en(void);
// CTRL.no_space: 1 = commands that need new media space complete NO_SPACE (README "No space")
void hal_no_space(uint32_t on);

// wait for an event (the wait unit, rtl/soc/README.md "ats_wait"): the CPU stops in a read of the
// wait word until a source in `mask` (WK(...) bits of WAIT_MASK) is pending; with WK(DEADLINE) also
// when CYCLES reaches `deadline`; the unit ends any wait within 2^19 + 1 cycles (WK_TIMEOUT in the
// answer). Returns the sources pending at the wake (WAIT_PENDING's layout)
#define WK(name) (1u << CSR_ATS_WAIT_MASK_##name##_OFFSET)
#define WK_TIMEOUT (1u << 31)
uint32_t hal_wait(uint32_t mask, uint64_t deadline);
// clears the sticky WK(ACT) (activity: host command, completion, BLK_NEED or NEXT_SEQ change)
static inline void hal_wait_clr_act(void) { ats_wait_clr_write(WK(ACT)); }

// firmware-port operations, each writing only the CSRs it uses, waiting for the response
// fn runs while the firmware waits for one of its own bridge commands (never re-entered); it returns
// the wake sources (WK bits) at which it wants to run again while the command is in progress
void hal_set_wait_hook(uint32_t (*fn)(void));
int hal_fw_nread(uint32_t die, uint32_t block, uint32_t page, fw_rsp_t *r);
int hal_fw_nerase(uint32_t die, uint32_t block, fw_rsp_t *r);
int hal_fw_nprog(uint32_t die, uint32_t block, uint32_t page, uint32_t lpn, uint64_t seq, uint32_t kind, fw_rsp_t *r);
int hal_fw_remap(uint32_t rop, uint32_t lpn, uint32_t ppn, fw_rsp_t *r);
// LOOKUP of lpn0 .. lpn0 + n - 1, one at a time: the mapped ones (status OK) into lpns / ppns, in
// LPN order; returns their number
uint32_t hal_fw_lookups(uint32_t lpn0, uint32_t n, uint32_t *lpns, uint32_t *ppns);
int hal_fw_reloc(uint32_t lpn, uint32_t ppn, fw_rsp_t *r);
int hal_fw_seqset(uint64_t seq, fw_rsp_t *r);
// op 7 SLOAD (a core built with SLOG = 1: ATS_HW_SLOG): the S-Log's loads after a recovery
int hal_fw_sload(uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t epoch, uint64_t seq, fw_rsp_t *r);
// op 7 SLOAD's index reads (rop 3 SREAD-ENTRY: lpn = slot; 4 SREAD-FRAG: lpn = slot, epoch = fragment;
// 5 SREAD-PPN: epoch = LPGN; 6 SREAD-CTR): status, mapped, ppn (its low PPN_W bits) and data in *r
int hal_fw_sread(uint32_t rop, uint32_t lpn, uint32_t epoch, fw_rsp_t *r);
// op 6 MERGE of lpn (SLOG = 1): status 0 merged (ppn = the new page), 1 stale, 2 nothing to merge,
// 3 a base or fragment unreadable (rtl/backend/README.md "Firmware port")
int hal_fw_merge(uint32_t lpn, fw_rsp_t *r);
// the NREAD spare words in the page buffer after an NREAD
typedef struct {
    uint32_t lpn, epoch;
    uint64_t seq;
    uint8_t txid, kind, flags;
} spare_t;
void hal_spare(spare_t *s);

// UART
void hal_putc(char c);
int hal_getc(void);   // -1: none
void hal_puts(const char *s);
void hal_printf(const char *fmt, ...);
