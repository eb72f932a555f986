// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: sizes, tuning constants and the statistics every part shares. The geometry
// comes from the generated soc.h. Theory of operation: sw/firmware/README.md.
#pragma once
#include <stdint.h>

#include "ftl/ftl.h"
#include "ftl/policy.h"
#include "hal.h"

// ---- sizes
#define NDIE ATS_NDIE
#define BLOCKS ATS_BLOCKS
#define PPB ATS_PAGES_PER_BLOCK
#define NBLK (NDIE * BLOCKS)
#define PW (ATS_PAGE_BYTES / 4)
#define NLBA ATS_NUM_LBAS
#define NTX ATS_NUM_TX
#define MAX_LOG 4096u            // records a recovery can hold (the checkpoint policy keeps the log below half)
#define CK_BLK0 0u               // checkpoint blocks: die 0 block 0 and ck_blk1 (never in a plan)
#define MAX_CK_PAGES 64u
// ATS_HW_SLOG (soc.h, the configuration's `slog`): the core has the backend's S-Log (SLOG = 1): the
// recovery loads F into it (op 7 SLOAD); ATS_HW_SLOG_PPNS its LPGN -> PPN table's entries
#ifndef ATS_HW_SLOG
#define ATS_HW_SLOG 0
#endif
#ifndef ATS_HW_SLOG_PPNS
#define ATS_HW_SLOG_PPNS 0u
#endif
// the S-Log (README "S-Log"; docs/persistence.md section 10): F's table (the backend's SLOG_LPNS x
// SLOG_FRAGS), the log pages and records a recovery keeps, its cache of log-page data
#ifdef ATS_HW_SLOG_LPNS          // the core's index entries (soc.h: the configuration's slog_lpns)
#define SLOG_LPNS (ATS_HW_SLOG_LPNS + 0u)
#else
#define SLOG_LPNS 256u
#endif
#define SLOG_FRAGS 4u
#ifndef SLOG_PG                  // log pages a recovery keeps (more: the recovery fails, ATS_E_FULL)
#define SLOG_PG 256u
#endif
// records a recovery parses: as many as the log pages it keeps (every record starts at a log page)
#define SLOG_RECS SLOG_PG
// the active log's log pages stay below SLOG_PG (ftl/policy.c ats_hk_ckpt_due, ats_hk_urgent): a
// checkpoint when the log pages written since the last one reach SLOG_CKPT_PG; the host's
// write-backs held from SLOG_HOLD_PG until it is written (the quarter above: the log pages written
// between two passes, and those before a checkpoint that its recovery keeps: seq >= scan_from, a
// transaction open at the checkpoint; docs/persistence.md section 10.5 "Limits")
#define SLOG_CKPT_PG (SLOG_PG / 2u)
#define SLOG_HOLD_PG (SLOG_PG / 2u + SLOG_PG / 4u)
#ifndef SLOG_CACHE               // log pages held in RAM (tests/system/test_slog_fw.py builds it with 2)
#define SLOG_CACHE ((16384u / ATS_PAGE_BYTES) > 2u ? (16384u / ATS_PAGE_BYTES) : 2u)
#endif
#define SLOG_WORDS (2u + SLOG_LPNS * (3u + 5u * SLOG_FRAGS))   // the checkpoint's S-Log section at most
// the merge policy (ftl/policy.c ats_sl_*, docs/architecture.md section 11.6, README "S-Log"), with
// ATS_HW_SLOG: live log pages allowed (a recovery keeps SLOG_PG), merging on above SLOG_HI (or the
// index above 3/4 full, or the oldest fragment near the end of the backend's LPGN -> PPN table), off
// below SLOG_LO with the index below half full; at most SLOG_STEP MERGEs a housekeeping pass
#define SLOG_MAX 256u
#define SLOG_HI 192u
#define SLOG_LO 128u
#define SLOG_STEP 8u
// GC's and the checkpoint's wait, write-backs held, until the backend receives no S-Log record
// (ftl/policy.c ats_sl_rx_wait; architecture.md 11.6): at most this many cycles (the drain's bound)
#define SLOG_RX_WAIT 5000000u
// ... asleep between two reads of op 7 rop 6 at most this many cycles (a record's last words raise no
// wake source; ACT does when a block is taken or a request completes)
#define SLOG_RX_POLL 512u
_Static_assert(SLOG_FRAGS <= ATS_SL_MAX_FRAGS, "ats_sl_ent_t holds SLOG_FRAGS fragments");
_Static_assert(SLOG_LO < SLOG_HI && SLOG_HI < SLOG_MAX, "S-Log merge thresholds");

// ---- housekeeping policy (README "Checkpoints", "Garbage collection", "Wear levelling"; the
// decisions are ftl/policy.c's, these are its parameters)
// a checkpoint when the active log (next_seq - scan_from) reaches this: half of what a recovery can
// hold, and at most a quarter of the device's pages (recovery reads stay a small share of the device)
#define LOG_CKPT ((MAX_LOG / 2u) < (NBLK * PPB / 4u) ? (MAX_LOG / 2u) : (NBLK * PPB / 4u))
#define PLAN_TAIL 32u            // erased blocks a plan lists per die: the checkpoint's plan stays the same
                                 // size whatever the capacity (B5)
#define PLAN_LOW 2u              // a checkpoint when a die has fewer planned blocks left and erased ones wait
#define GC_LOW 6u                // GC starts when a die has fewer free (planned + erased) blocks
#define GC_HIGH 9u               // and stops when it has this many
#define GC_URGENT 3u             // below this, the host's write-backs are held (wb_hold) until GC and a
                                 // checkpoint have brought the die back to GC_URGENT free blocks
#define RELOC_RESERVE 2u         // a checkpoint plans the erased blocks GC made at once below this room + 2
#define GC_SLACK (ATS_WIN + PPB / 2u)   // GC starts a block only when room() * PPB holds its valid pages
                                 // and this many more (write-backs accepted before the hold, a failure)
#define HOST_ROOM (NDIE + 2u)    // below this many erased blocks for the backend, host write-backs wait
#define WL_SPREAD 8u             // static wear levelling above this erase-count spread
#define IDLE_WAIT 100000u        // the main loop's longest sleep after a pass that changed nothing (cycles;
                                 // what wakes it earlier: main.c)
#define EC_FACTORY 0xFFFFu       // erase count of a factory bad block (never erased; in every checkpoint)

// scratch tables every use writes first: not cleared at start (linker.ld .noinit)
#define NOINIT __attribute__((section(".noinit")))

extern ats_geo_t G;
extern int boot_st;              // the boot's status (0: ready); `status` shows a failed boot

// ---- statistics (console `stats`, GET_LOG)
typedef struct {
    uint64_t recoveries, recovery_cycles, recovery_pages, recovery_records, recovery_prefix;
    uint64_t recovery_applied, recovery_aborted_tx;
    uint64_t checkpoints, ckpt_cycles, ckpt_pages;
    uint64_t ck_phase[4];                  // checkpoint cycles: drain, plan, mapping, NAND (console `log`)
    uint64_t gc_runs, gc_relocs, gc_stale, gc_erases, wl_static, erase_fail, grown_bad, factory_bad;
    uint64_t nreads, starved, gc_urgent;
    uint64_t no_space, ckpt_fail;          // passes with no space (write-backs held for good), failed checkpoints
    uint64_t shutdowns;                    // checkpoints asked for by a clean shutdown (ADM_SHUT_TAG)
    uint64_t recovery_ignored;             // records of the last recovery with a txid above NTX (ignored)
    uint64_t boot_cycles;
    // the S-Log merge policy (console `slog`): index reads (dumps), MERGE answers 0 / 1 / 2 / 3 (and
    // any other), MERGEs GC issued, GC blocks kept for an unmergeable LPN, dumps above SLOG_MAX live pages
    uint64_t sl_dumps, sl_merged, sl_stale, sl_nothing, sl_unreadable, sl_gc_merges, sl_gc_kept, sl_over;
    // the waits for no record being received (sl_rx_wait): GC's (gc_block: housekeeping, static wear
    // levelling, the console's `gc D B`), the checkpoint's; the pumps (each a read of rop 6 that
    // answered 1 before the wait's bound, followed by the supply and a sleep: a read answering 1 past
    // the bound ends the wait with -9 and is not counted); the waits that failed (-9 / -7)
    uint64_t sl_rx_waits_gc, sl_rx_waits_ckpt, sl_rx_polls, sl_rx_fails;
    // GC's write-back holds (gc_block, from sl_gc_hold to sl_gc_end: the wait, the index read, the
    // merges and the page moves): how many, the longest and the total in cycles
    uint64_t sl_holds, sl_hold_max, sl_hold_total;
} fw_stats_t;
extern fw_stats_t S;
