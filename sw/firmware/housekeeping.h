// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the housekeeping pass of the main loop and the firmware-port wait hook (README
// "Garbage collection", "No space", "Checkpoints"). What to do is decided by ftl/policy.c over HK.
#pragma once
#include "fw.h"

extern ats_hk_t HK;                    // the policy's state: hold_wb, no_space, GC hysteresis, ...

// supply, grown bad blocks, the write-back hold, a checkpoint if due, GC on the dies that want it,
// static wear levelling, the no-space state
void housekeeping(void);
// while the firmware waits for one of its own firmware-port commands (hal_set_wait_hook); returns
// the wake sources after which it runs again
uint32_t wait_hook(void);
// the main loop's changes of state (blocks handed, bad blocks taken, checkpoints, GC and wear
// levelling steps, hold and no-space changes, admin answers, console lines): a pass that changed
// nothing is followed by a wait (main.c)
extern uint32_t hk_work;
// after boot: the host comes in with write-backs held when the room is short
void hk_boot_hold(void);

#if ATS_HW_SLOG
// the S-Log merge policy's state (ftl/policy.c ats_sl_*; README "S-Log")
extern ats_sl_t SLP;
// bumped when an LPN whose MERGE answered unreadable left the skip list (its F changed): GC's kept
// blocks (gc.c) may be tried again
extern uint32_t sl_bad_gen;
// GC of block b of die d (architecture.md 11.6), in gc_block's order: sl_gc_hold holds the host's
// write-backs (no S-Log record is accepted meanwhile) and waits until no record is being received
// (sl_rx_wait; any failure: nothing merged, the block not collected now, not kept); then sl_gc takes
// that wait's `used` and, when the index holds entries, reads the index with the log pages' PPNs and
// the bases, and MERGEs every LPN whose base or live log page lies in the block. ATS_OK: none is left
// there; ATS_E_NAND: one could not be merged (unreadable): the block must not be erased or relocated
// (kept); ATS_E_STATE: the index read answered a port error (the block not collected now, not kept).
// The hold stays until sl_gc_end (after the relocations), also when `used` is 0; sl_gc_end counts its
// cycles (console `slog` holds / hold_max / hold_total)
int sl_gc_hold(void) __attribute__((warn_unused_result));
int sl_gc(uint32_t d, uint32_t b);
// with write-backs held: waits (bounded, SLOG_RX_WAIT cycles) until the backend is receiving no S-Log
// record (op 7 rop 6's mapped 0: every record it accepted is in its index as `pend` or applied, and
// none starts until the hold ends; ftl/policy.c ats_sl_rx_wait). Between two reads of rop 6 it hands
// out blocks and takes bad blocks (as the checkpoint's drain does), then sleeps until ACT, BAD or
// SLOG_RX_POLL cycles. gc: GC's wait (else the checkpoint's). ATS_OK (*used: the entries in use, as
// rop 6 answered with no record received), ATS_E_TIMEOUT, ATS_E_STATE (counted: console `slog`
// rx_waits_gc / rx_waits_ckpt / rx_polls (the pumps) / rx_fails)
int sl_rx_wait(int gc, uint32_t *used) __attribute__((warn_unused_result));
void sl_gc_end(void);
// the log page (PPN) of a live fragment of `lpn` with LPGN lg and rop 4 `data` {len/4, off/4, pofs/4}:
// the backend's LPGN -> PPN table (rop 5), else the firmware's list SL (a page of lpn's list with the
// same byte, off and len whose spare says log page lg; one NREAD each). ATS_UNMAPPED: neither names it
// (the device reads it MEDIA_ERROR). The checkpoint's (ckpt.c) and GC's (sl_dump) one lookup
uint32_t sl_log_page(uint32_t lpn, uint32_t lg, uint32_t data);
#endif
