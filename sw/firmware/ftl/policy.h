// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the housekeeping policy as pure functions over a state struct (no hardware
// access, no globals). Built into the firmware (housekeeping.c, gc.c, wear.c call them) and for the
// host (sw/firmware/tests/test_policy.py, against a plain-Python model of sw/firmware/README.md
// "Garbage collection", "No space", "Wear levelling"). The firmware does what these decide.
#pragma once
#include <stdint.h>

#include "ftl.h"

// block states (sw/firmware/README.md "Block states")
enum { ATS_B_FREE = 0, ATS_B_PLAN, ATS_B_OPEN, ATS_B_USED, ATS_B_BAD, ATS_B_CKPT };

#define ATS_HK_MAX_DIE 32u   // 8 channels x 4 ways

// the housekeeping state. Per-die tables [ndie] are owned by the caller: the block table's counts
// (read only here) and the policy's own flags (gc_on, gc_none, written here and by the GC step)
typedef struct {
    // configuration (sw/firmware/fw.h)
    uint32_t ndie, ppb;
    uint32_t gc_low, gc_high;     // GC on below gc_low free blocks, off at gc_high (hysteresis)
    uint32_t gc_urgent;           // below this many free blocks a die holds the host's write-backs
    uint32_t plan_low, plan_tail; // a checkpoint when a die has fewer planned blocks left; plan size
    uint32_t host_room;           // below this room() the host's write-backs are held
    uint32_t reloc_reserve;       // while held, erased blocks are planned at once below reloc_reserve + 2
    uint32_t gc_slack;            // pages of room a GC block needs beyond its valid pages
    uint32_t pad0;
    uint64_t log_ckpt;            // a checkpoint when the active log reaches this many records
    // the block table (sw/firmware/blocks.c): the plan, the handed blocks still needed, the census
    const uint16_t *plan_len, *plan_pos, *plan_ok, *hl_len;
    const uint16_t *n_free;       // erased blocks not in a plan
    const uint8_t *n_retired;     // 1: the die holds a grown bad block still to be moved out
    // the policy's state
    uint8_t *gc_on;               // GC hysteresis
    uint8_t *gc_none;             // the last GC look found no block worth collecting (set by the GC step)
    int32_t hold_wb;              // the host's write-backs are held
    int32_t no_space;             // the no-space state (CTRL.no_space)
    int32_t gc_moved;             // the last pass collected a block
    int32_t pass_progress;        // this pass: some die collected a block
    int32_t pass_busy;            // this pass: some die's GC had work (did not answer ATS_E_NOSPACE)
    uint32_t stuck;               // passes in a row without progress while held (no space at 3)
    // the S-Log's log pages (README "S-Log", docs/persistence.md section 10.5): a recovery keeps at
    // most SLOG_PG of them and parses at most SLOG_RECS records (every record starts at a log page).
    // A checkpoint when the log pages written since the last one reach slog_ckpt; the host's
    // write-backs (and so the device's S-Log records) held from slog_hold until that checkpoint is
    // written. 0: no rule (no S-Log in the core)
    uint32_t slog_ckpt, slog_hold;
    uint32_t slog_pages;          // log pages written since the last checkpoint (the caller's, each pass)
    int32_t pass_wait;            // this pass: a GC step or the checkpoint answered ATS_E_TIMEOUT (a record
                                  // still received)
    uint32_t wait_run;            // passes in a row with pass_wait (at most ATS_HK_WAIT_PASSES)
} ats_hk_t;

// from the ATS_HK_WAIT_PASSES-th pass in a row whose wait for a record being received ran out, such a
// pass counts towards no space like any other (README "No space"): with SLOG_RX_WAIT = 5M cycles and
// at most two waits a pass (the checkpoint's, one GC step's), a record stuck for good delays the
// no-space state by at most 2 x 10M cycles
#define ATS_HK_WAIT_PASSES 3u

// planned (not yet handed) + erased blocks of die d
uint32_t ats_hk_free(const ats_hk_t *h, uint32_t d);
// room(): erased blocks the backend can open without a new checkpoint: the durable plans' blocks not
// handed yet, plus every die whose next-block register holds a block (bit d of `need` low)
uint32_t ats_hk_room(const ats_hk_t *h, uint32_t need);
// GC hysteresis per die: on below gc_low free blocks, off at gc_high
void ats_hk_gc_hyst(ats_hk_t *h);
// whether the host's write-backs must be held this pass: room < host_room, a die below gc_urgent
// free blocks whose GC has something to collect (gc_none clear), or slog_pages >= slog_hold
// (slog_hold != 0)
int ats_hk_urgent(const ats_hk_t *h, uint32_t room);
// between passes (the firmware's wait hook): 1 when the hold must be set now (never released here):
// room < host_room or the S-Log rule above
int ats_hk_hold_now(const ats_hk_t *h, uint32_t room);
// whether this pass takes a checkpoint (log_len = next_seq - scan_from of the last checkpoint; also
// slog_pages >= slog_ckpt, slog_ckpt != 0)
int ats_hk_ckpt_due(const ats_hk_t *h, uint64_t log_len, uint32_t room);
// a pass: pass_begin (before the checkpoint), ckpt_done with the checkpoint's status if one ran, then
// per die (after the census) gc_wanted (0 for every die once the checkpoint or a step answered
// ATS_E_TIMEOUT: no later die's GC this pass) and, if it ran, gc_done with the step's status; then
// wl_due (static wear levelling this pass), then pass_end
void ats_hk_pass_begin(ats_hk_t *h);
void ats_hk_ckpt_done(ats_hk_t *h, int st);
int ats_hk_gc_wanted(const ats_hk_t *h, uint32_t d);
void ats_hk_gc_done(ats_hk_t *h, int st);
// over: the spread may be past WL_SPREAD (wear.c wl_over); 0 after a step answered ATS_E_TIMEOUT
int ats_hk_wl_due(const ats_hk_t *h, int over);
// the end of a pass (after the census): gc_moved, and the no-space state: entered after three passes
// in a row with write-backs held, no block collected and no erased block waiting for a plan (a pass
// with pass_wait, i.e. the checkpoint or a step answered ATS_E_TIMEOUT, does not count, the state and
// the count stay, unless it is the ATS_HK_WAIT_PASSES-th pass with pass_wait in a row or later: then
// it counts as above); left as soon as one of those ends. Returns ATS_HK_NS_ENTER / ATS_HK_NS_CLEAR when it changes, else 0
enum { ATS_HK_NS_CLEAR = -1, ATS_HK_NS_SAME = 0, ATS_HK_NS_ENTER = 1 };
int ats_hk_pass_end(ats_hk_t *h);

// GC admission: a block with `valid` pages is started only when room * ppb >= valid + gc_slack (an
// empty block always: erase only); each RELOC only while room >= 1
int ats_hk_gc_start(const ats_hk_t *h, uint32_t room, uint32_t valid);
int ats_hk_reloc_ok(uint32_t room);
// GC victim among a die's used blocks. tight = write-backs are held. A block is a candidate unless
// tight and it is a grown bad block with valid pages (moving them frees no block)
int ats_gc_candidate(int tight, int retired, uint32_t valid);
// over the candidates [n]: the pick of the policy (greedy when tight; ats_gc_pick), overridden by the
// last grown bad block among them (its pages move out first). -1: none worth collecting
int ats_gc_victim(ats_gc_policy_t pol, int tight, const uint32_t *valid, const uint32_t *age, const uint8_t *retired,
                  uint32_t n, uint32_t ppb);
// static wear levelling: when the erase-count spread over good blocks (not bad, not a checkpoint
// block) exceeds `spread`, the used block with the fewest erases (the lowest index of a tie); -1: none
int ats_wl_static_victim(const uint8_t *state, const uint16_t *erase_cnt, uint32_t n, uint32_t spread);

// ---- the S-Log merge policy (docs/architecture.md section 11.6; sw/firmware/README.md "S-Log").
// One entry of the backend's S-Log index as the firmware read it (op 7 rops 3, 4; the base by LOOKUP
// and the log pages' PPNs by rop 5 only when GC needs them)
#define ATS_SL_MAX_FRAGS 8u
typedef struct {
    uint32_t lpn;
    uint32_t nf;                      // |F| (0: a reservation only)
    uint32_t pend;                    // fragments of a held record (become F at its completion)
    uint32_t base;                    // the LPN's L2P (ATS_UNMAPPED: not read or unmapped)
    uint32_t lpgn[ATS_SL_MAX_FRAGS];  // fragment j's log page (LPGN), j = 0 the oldest
    uint32_t ppn[ATS_SL_MAX_FRAGS];   // that log page's PPN (rop 5; ATS_UNMAPPED: not in the table / not read)
} ats_sl_ent_t;

typedef struct {
    // configuration (fw.h): log pages SLOG_MAX, SLOG_HI, SLOG_LO; the backend's SLOG_LPNS, SLOG_PPNS
    uint32_t max, hi, lo, lpns, ppns;
    // the backend's counters (rop 6), the last read
    uint32_t next;                    // the next LPGN
    uint32_t used;                    // index entries in use
    // the last dump (ats_sl_recount), kept up to date by the merges since
    int32_t valid;                    // a dump was taken (else live and oldest are unknown)
    uint32_t dump_next, dump_used;    // the counters when it was taken
    uint32_t live;                    // distinct log pages holding a fragment of a (not yet merged) entry
    int32_t has_old;                  // some entry not skipped holds a fragment
    uint32_t oldest;                  // the oldest fragment's LPGN among them (has_old)
    int32_t on;                       // the capacity hysteresis (on above hi / 3/4, off below lo and 1/2)
    int32_t stall;                    // the last look wanted a merge and found no entry to merge
} ats_sl_t;

// a pass's counters (rop 6): stores them; a change of either clears stall
void ats_sl_ctr(ats_sl_t *s, uint32_t next, uint32_t used);
// the live log pages at most: the dump's, plus every log page written since (next - dump_next)
uint32_t ats_sl_live_ub(const ats_sl_t *s);
// the oldest live fragment is within ppns / 4 of leaving the backend's LPGN -> PPN table:
// next - oldest > ppns - ppns / 4 (32-bit LPGN arithmetic)
int ats_sl_aged(const ats_sl_t *s);
// whether this pass must read the index (a dump): entries in use and (no dump yet, or a merge may be
// wanted: on, live_ub > hi, used > 3/4 lpns, aged), unless stalled on the same counters
int ats_sl_need_dump(const ats_sl_t *s);
// after a dump (fresh: dump_next/dump_used := the counters) or a merge (fresh 0): live from the
// fragments of every entry [n], oldest from those of the entries not skipped (skip may be NULL: an
// unmergeable LPN does not keep the age rule on; scratch: n * ATS_SL_MAX_FRAGS words)
void ats_sl_recount(ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip, uint32_t *scratch,
                    int fresh);
// the hysteresis (updates on) and the decision: 1 = merge this pass (on, or aged)
int ats_sl_want(ats_sl_t *s);
// the next entry to merge: nf > 0, not skip[i], the oldest fragment 0 (largest next - lpgn[0]; a tie:
// the lowest i); -1: none
int ats_sl_pick(const ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip);
// the backend answers a fragment's LPGN (rop 4) in its low w bits (FW_RSP_PPN is PPN_W bits wide):
// ats_sl_ext_back (ftl.h) with ref = the whole counter (rop 6 with epoch 1) gives the 32-bit LPGN
// one merge step: ats_sl_want, then ats_sl_pick; wanted with nothing to pick sets stall (no dump
// until a counter moves). -1: no merge now
int ats_sl_step(ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip);
// the firmware's list of (lpn, lpgn[0]) pairs whose MERGE answered 3 (unreadable): skip[i] for every
// entry that matches one; pairs matching no entry with nf > 0 are dropped (F changed: retried).
// Returns the list's new length
uint32_t ats_sl_skip(const ats_sl_ent_t *e, uint32_t n, uint32_t *bad_lpn, uint32_t *bad_lpgn, uint32_t nbad,
                     uint8_t *skip);
// GC (victim block b of die d): entry e must be merged before the block is erased or relocated: it
// has fragments (nf or pend) and its base or one of its fragments' log pages lies in the block
int ats_sl_gc_lpn(const ats_geo_t *g, const ats_sl_ent_t *e, uint32_t d, uint32_t b);

// ---- GC's and the checkpoint's index read with the S-Log (docs/architecture.md section 11.6 "GC"):
// after write-backs are held, the backend may still be receiving an S-Log record it accepted before
// the hold, whose fragments are not yet in its index (`pend`); the firmware port's op 7 rop 6 answers
// `mapped` = 1 while one is (rtl/backend/README.md "Firmware port"), and under the hold, once 0, it
// stays 0. The port as these functions see it (the firmware's: housekeeping.c; a model in the tests):
typedef struct {
    void *ctx;
    // op 7 rop 6 with epoch 0: ATS_OK with *used = the index entries in use (FW_RSP_DATA) and *rx =
    // FW_RSP_MAPPED; any other value: the port answered an error status
    int (*ctr)(void *ctx, uint32_t *used, uint32_t *rx);
    uint64_t (*now)(void *ctx);       // the cycle counter
    // after every read that answered rx = 1 and before the next one (the timeout not yet reached):
    // the caller's work while it waits (the firmware hands out blocks, which the record's wait for
    // its full pages' issue may need, then sleeps a while); NULL: none
    void (*pump)(void *ctx);
} ats_sl_port_t;
// with write-backs held (the caller's CTRL.wb_hold): rop 6 read until it answers rx = 0, for at most
// `limit` cycles from the call. ATS_OK: *used = that read's entries in use (every record the backend
// accepted is in the index, held with `pend` or applied); ATS_E_TIMEOUT: still rx = 1 after `limit`
// cycles (a record waits for earlier requests' issue, i.e. for a block); ATS_E_STATE: the port
// answered an error. Never more than one read after `limit` has passed; `pump` runs once between
// two reads (never after the last)
int ats_sl_rx_wait(const ats_sl_port_t *p, uint64_t limit, uint32_t *used) __attribute__((warn_unused_result));
