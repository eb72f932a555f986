// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: garbage collection (gc.h).
#include "gc.h"

#include "blocks.h"
#include "ckpt.h"
#include "housekeeping.h"

ats_gc_policy_t gc_policy = ATS_GC_COST_BENEFIT;

#if ATS_HW_SLOG
// blocks GC left because an LPN whose base or live log page is there could not be merged
// (unreadable): no candidates until such an LPN's F changes (sl_bad_gen)
static uint8_t gc_keep[NBLK];
static uint32_t gc_keep_gen;
#endif

static int gc_move(uint32_t d, uint32_t b);

// with the S-Log (architecture.md 11.6): the write-backs held and no record being received
// (sl_gc_hold), the LPNs whose base or live log page is in the block merged (sl_gc), the pages moved,
// only then the hold released (sl_gc_end); a block that still holds a pinned base or live log page is
// neither relocated nor erased (kept). A failed wait (a record still received after SLOG_RX_WAIT
// cycles, or a port error) or a port error in the index read: nothing (more) merged, the block not
// collected now and not kept (the pass's later dies and static wear levelling skip GC after
// ATS_E_TIMEOUT: ats_hk_gc_wanted, ats_hk_wl_due)
int gc_block(uint32_t d, uint32_t b) {
#if ATS_HW_SLOG
    int st = sl_gc_hold();
    if (st == ATS_OK) {
        st = sl_gc(d, b);
        if (st == ATS_OK) {
            st = gc_move(d, b);
        } else if (st == ATS_E_NAND) {   // an LPN there could not be merged: kept
            gc_keep[bi(d, b)] = 1;
            gc_keep_gen = sl_bad_gen;
            S.sl_gc_kept++;
            st = ATS_E_STATE;
        }                                // (ATS_E_STATE: a port error, not kept)
    }
    sl_gc_end();
    return st;
#else
    return gc_move(d, b);
#endif
}

static int gc_move(uint32_t d, uint32_t b) {
    census_dirty = 1;
    // the valid count says how many pages still map here: the scan stops once it has met them all
    // (pages become invalid, never valid, while GC runs: no host write maps into an old block)
    const uint32_t v0 = valid_pages(d, b);
    const int empty = v0 == 0 && !blk_retire[bi(d, b)];   // nothing to move: erase only
    // a block is started only when the backend has room for all its valid pages (ats_hk_gc_start)
    if (v0 != 0 && !ats_hk_gc_start(&HK, room(), v0)) return ATS_E_NOSPACE;
    uint32_t met = 0;
    for (uint32_t p = 0; p < PPB && !empty && (met < v0 || blk_retire[bi(d, b)]); p++) {
        fw_rsp_t r;
        nread(d, b, p, &r);
        if (r.status == N_ERASED) break;
        if (r.status != N_OK) continue;
        spare_t s;
        hal_spare(&s);
        if (s.kind != ATS_KIND_DATA || s.lpn >= NLBA) continue;
        const uint32_t ppn = ats_ppn(&G, d, b, p);
        uint32_t mapped;
        const uint32_t cur = remap(R_LOOKUP, s.lpn, 0, &mapped);
        if (!mapped || cur != ppn) continue;
        met++;
        // the copy goes to whichever die has room: never start one that could wait for a block
        // only a checkpoint can plan (ats_hk_reloc_ok)
        if (!ats_hk_reloc_ok(room())) return ATS_E_NOSPACE;
        // the page is in the buffer (NREAD): RELOC streams it; applied only if still mapped there
        hal_fw_reloc(s.lpn, ppn, &r);
        if (r.status == 0) S.gc_relocs++;
        else S.gc_stale++;
    }
    if (blk_retire[bi(d, b)]) {
        mark_bad(d, b);
        return ATS_OK;
    }
    if (valid_pages(d, b) != 0) return ATS_E_STATE;   // a page still maps here: keep the block
    if (nerase(d, b) != ATS_OK) {
        S.erase_fail++;
        mark_bad(d, b);
        return ATS_E_NAND;
    }
    blk_state[bi(d, b)] = B_FREE;
    census_dirty = 1;
    S.gc_erases++;
    return ATS_OK;
}

// tight: write-backs are held for room (hold_wb): the block that costs the least room (greedy), and
// no grown bad block with pages to move (moving them frees no block)
int gc_step(uint32_t d, int tight) {
    static uint32_t cand[BLOCKS], val[BLOCKS], age[BLOCKS];
    static uint8_t ret[BLOCKS];
    uint32_t n = 0;
#if ATS_HW_SLOG
    if (gc_keep_gen != sl_bad_gen) {
        for (uint32_t i = 0; i < NBLK; i++) gc_keep[i] = 0;
        gc_keep_gen = sl_bad_gen;
    }
#endif
    for (uint32_t b = 0; b < BLOCKS; b++) {
        if (blk_state[bi(d, b)] != B_USED) continue;
#if ATS_HW_SLOG
        if (gc_keep[bi(d, b)]) continue;
#endif
        const uint32_t v = valid_pages(d, b);
        if (!ats_gc_candidate(tight, blk_retire[bi(d, b)], v)) continue;
        cand[n] = b;
        val[n] = v;
        age[n] = ckpt_no - blk_age[bi(d, b)];
        ret[n] = blk_retire[bi(d, b)];
        n++;
    }
    const int k = ats_gc_victim(gc_policy, tight, val, age, ret, n, PPB);
    // every old block full of valid pages: moving one frees nothing (static wear levelling moves
    // cold blocks, wl_step)
    HK.gc_none[d] = k < 0;
    if (k < 0) return ATS_E_NOSPACE;
    const int st = gc_block(d, cand[k]);
    if (st == ATS_OK) S.gc_runs++;
    return st;
}
