// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the housekeeping policy (policy.h; sw/firmware/README.md "Garbage collection",
// "No space", "Wear levelling"). Pure: reads and writes only the state struct and its tables.
#include "policy.h"

static uint32_t plan_left(const ats_hk_t *h, uint32_t d) { return (uint32_t)(h->plan_len[d] - h->plan_pos[d]); }

uint32_t ats_hk_free(const ats_hk_t *h, uint32_t d) { return plan_left(h, d) + h->n_free[d]; }

uint32_t ats_hk_room(const ats_hk_t *h, uint32_t need) {
    uint32_t r = 0;
    for (uint32_t d = 0; d < h->ndie; d++) {
        r += (uint32_t)(h->plan_ok[d] - h->plan_pos[d]);
        r += ((need >> d) & 1u) ? 0u : 1u;
    }
    return r;
}

// erased blocks come in batches (GC on at gc_low, off at gc_high), so that one checkpoint plans
// several of them (issue 13: without it, a checkpoint per erased block and GC behind the host)
void ats_hk_gc_hyst(ats_hk_t *h) {
    for (uint32_t d = 0; d < h->ndie; d++) {
        const uint32_t f = ats_hk_free(h, d);
        if (f < h->gc_low) h->gc_on[d] = 1;
        if (f >= h->gc_high) h->gc_on[d] = 0;
    }
}

// a die below gc_urgent: the host's write-backs wait until GC and a checkpoint have planned blocks
// again (a die whose old blocks are all full of valid pages does not count: GC cannot help it, and
// the backend writes to the other dies). And while room < host_room: erased blocks no checkpoint
// planned yet cannot take a write-back, and the write-backs accepted before the next checkpoint's
// drain must all find a block, or the drain never ends (issue 13's second hang, issue 34)
int ats_hk_urgent(const ats_hk_t *h, uint32_t room) {
    int urgent = room < h->host_room;
    for (uint32_t d = 0; d < h->ndie; d++) urgent |= ats_hk_free(h, d) < h->gc_urgent && !h->gc_none[d];
    return urgent;
}

// a checkpoint's mapping read or a GC block takes hundreds of thousands of cycles, in which the host
// could use up every planned block: the hold is set as soon as the room runs short (issue 34)
int ats_hk_hold_now(const ats_hk_t *h, uint32_t room) { return !h->hold_wb && room < h->host_room; }

int ats_hk_ckpt_due(const ats_hk_t *h, uint64_t log_len, uint32_t room) {
    int ck = log_len >= h->log_ckpt;
    // while held, erased blocks are room only once a checkpoint plans them: in batches of ndie blocks
    // while GC goes on collecting, at once when the room is too short for another GC block or the
    // last pass collected none
    if (h->hold_wb && !ck) {
        uint32_t wait = 0;
        for (uint32_t d = 0; d < h->ndie; d++)
            if (plan_left(h, d) < h->plan_tail) wait += h->n_free[d];
        ck = wait != 0 && (wait >= h->ndie || !h->gc_moved || room < h->reloc_reserve + 2u);
    }
    // a die's plan runs low: handed blocks wait to become old data GC may collect, or erased blocks
    // wait for a plan (while held: the batches above)
    for (uint32_t d = 0; d < h->ndie && !ck; d++) {
        const uint32_t left = plan_left(h, d);
        if (left >= h->plan_low) continue;
        ck |= h->hl_len[d] > 2u;
        ck |= !h->hold_wb && ats_hk_free(h, d) > left;
    }
    return ck;
}

void ats_hk_pass_begin(ats_hk_t *h) { h->pass_progress = h->pass_busy = 0; }

// one block on every die with GC on, or holding a grown bad block to move out of; every die while
// write-backs are held
int ats_hk_gc_wanted(const ats_hk_t *h, uint32_t d) { return h->gc_on[d] || h->n_retired[d] || h->hold_wb; }

// a die with nothing to collect (ATS_E_NOSPACE: every old block full of valid pages, cold data, or no
// room to start one) does not hold off static wear levelling, which is what moves such blocks
// (issue 34: it did, and static wear levelling never ran)
void ats_hk_gc_done(ats_hk_t *h, int st) {
    h->pass_progress |= st == ATS_OK;
    if (st != ATS_E_NOSPACE) h->pass_busy = 1;
}

// over: an erase since the last look took a block more than WL_SPREAD above the lowest count that
// look saw (wear.c): then wear levelling also runs in a pass with GC work, unless write-backs are held
// (a host that kept GC busy starved it, and the spread grew to WL_SPREAD + 3: test_wear_static)
int ats_hk_wl_due(const ats_hk_t *h, int over) { return !h->pass_busy || (over && !h->hold_wb); }

int ats_hk_pass_end(ats_hk_t *h) {
    h->gc_moved = h->pass_progress;
    uint32_t waiting = 0;
    for (uint32_t d = 0; d < h->ndie; d++) waiting += h->n_free[d];
    if (h->hold_wb && !h->pass_progress && waiting == 0) {
        if (h->stuck < 3u && ++h->stuck == 3u) {
            h->no_space = 1;
            return ATS_HK_NS_ENTER;
        }
        return ATS_HK_NS_SAME;
    }
    const int was = h->no_space;
    h->stuck = 0;
    h->no_space = 0;
    return was ? ATS_HK_NS_CLEAR : ATS_HK_NS_SAME;
}

// a block left half-copied spends room and frees nothing (issue 34: with the room used up that way
// and no erased block left, GC copied nothing, pass after pass, and the host waited for good). The
// backend opens a block only when the one before is full: room blocks hold room * ppb pages
int ats_hk_gc_start(const ats_hk_t *h, uint32_t room, uint32_t valid) {
    return valid == 0u || (uint64_t)room * h->ppb >= (uint64_t)valid + h->gc_slack;
}

// never a RELOC that could wait for a block only a checkpoint can plan (the firmware would wait
// inside it, and no checkpoint runs then)
int ats_hk_reloc_ok(uint32_t room) { return room != 0u; }

int ats_gc_candidate(int tight, int retired, uint32_t valid) { return !(tight && retired && valid != 0u); }

int ats_gc_victim(ats_gc_policy_t pol, int tight, const uint32_t *valid, const uint32_t *age, const uint8_t *retired,
                  uint32_t n, uint32_t ppb) {
    int k = ats_gc_pick(tight ? ATS_GC_GREEDY : pol, valid, age, n, ppb);
    for (uint32_t i = 0; i < n; i++)   // a grown bad block first: its pages move out
        if (retired[i] && (!tight || valid[i] == 0u)) k = (int)i;
    return k;
}

int ats_wl_static_victim(const uint8_t *state, const uint16_t *erase_cnt, uint32_t n, uint32_t spread) {
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (state[i] == ATS_B_BAD || state[i] == ATS_B_CKPT) continue;
        if (erase_cnt[i] < lo) lo = erase_cnt[i];
        if (erase_cnt[i] > hi) hi = erase_cnt[i];
    }
    if (!(hi >= lo && hi - lo > spread)) return -1;
    int best = -1;
    for (uint32_t i = 0; i < n; i++)
        if (state[i] == ATS_B_USED && (best < 0 || erase_cnt[i] < erase_cnt[(uint32_t)best])) best = (int)i;
    return best;
}
