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
// The S-Log: a checkpoint starts a new active log, so the log pages (records) a recovery must parse
// stay below what it keeps (SLOG_PG, SLOG_RECS) only if no record is accepted past slog_hold before
// the checkpoint that slog_ckpt asked for is durable
static int slog_held(const ats_hk_t *h) { return h->slog_hold != 0u && h->slog_pages >= h->slog_hold; }

int ats_hk_urgent(const ats_hk_t *h, uint32_t room) {
    int urgent = room < h->host_room || slog_held(h);
    for (uint32_t d = 0; d < h->ndie; d++) urgent |= ats_hk_free(h, d) < h->gc_urgent && !h->gc_none[d];
    return urgent;
}

// a checkpoint's mapping read or a GC block takes hundreds of thousands of cycles, in which the host
// could use up every planned block: the hold is set as soon as the room runs short (issue 34)
int ats_hk_hold_now(const ats_hk_t *h, uint32_t room) { return !h->hold_wb && (room < h->host_room || slog_held(h)); }

int ats_hk_ckpt_due(const ats_hk_t *h, uint64_t log_len, uint32_t room) {
    int ck = log_len >= h->log_ckpt || (h->slog_ckpt != 0u && h->slog_pages >= h->slog_ckpt);
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

void ats_hk_pass_begin(ats_hk_t *h) { h->pass_progress = h->pass_busy = h->pass_wait = 0; }

// one block on every die with GC on, or holding a grown bad block to move out of; every die while
// write-backs are held. None after the checkpoint or a step this pass answered ATS_E_TIMEOUT (its wait
// for an S-Log record being received ran out: a later die's step would wait the same SLOG_RX_WAIT for
// nothing)
int ats_hk_gc_wanted(const ats_hk_t *h, uint32_t d) {
    return !h->pass_wait && (h->gc_on[d] || h->n_retired[d] || h->hold_wb);
}

// a die with nothing to collect (ATS_E_NOSPACE: every old block full of valid pages, cold data, or no
// room to start one) does not hold off static wear levelling, which is what moves such blocks
// (issue 34: it did, and static wear levelling never ran)
void ats_hk_gc_done(ats_hk_t *h, int st) {
    h->pass_progress |= st == ATS_OK;
    if (st != ATS_E_NOSPACE) h->pass_busy = 1;
    h->pass_wait |= st == ATS_E_TIMEOUT;
}

// over: an erase since the last look took a block more than WL_SPREAD above the lowest count that
// look saw (wear.c): then wear levelling also runs in a pass with GC work, unless write-backs are held
// (a host that kept GC busy starved it, and the spread grew to WL_SPREAD + 3: test_wear_static)
// (none after ATS_E_TIMEOUT: its gc_block would wait the same way)
int ats_hk_wl_due(const ats_hk_t *h, int over) { return !h->pass_wait && (!h->pass_busy || (over && !h->hold_wb)); }

// a checkpoint that answered ATS_E_TIMEOUT (its wait for a record being received ran out): no GC and
// no static wear levelling this pass either (each would wait for the same record)
void ats_hk_ckpt_done(ats_hk_t *h, int st) { h->pass_wait |= st == ATS_E_TIMEOUT; }

int ats_hk_pass_end(ats_hk_t *h) {
    h->gc_moved = h->pass_progress;
    // passes in a row with a wait that ran out (saturates at ATS_HK_WAIT_PASSES)
    if (!h->pass_wait) h->wait_run = 0;
    else if (h->wait_run < ATS_HK_WAIT_PASSES) h->wait_run++;
    uint32_t waiting = 0;
    for (uint32_t d = 0; d < h->ndie; d++) waiting += h->n_free[d];
    if (h->hold_wb && !h->pass_progress && waiting == 0) {
        // a pass whose wait for a record being received ran out is no evidence of no space: not
        // counted, unless it is the ATS_HK_WAIT_PASSES-th such pass in a row or later (a record
        // stuck for good must not keep the device out of no space)
        if (h->pass_wait && h->wait_run < ATS_HK_WAIT_PASSES) return ATS_HK_NS_SAME;
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

// ---- the S-Log merge policy (policy.h; docs/architecture.md section 11.6)
void ats_sl_ctr(ats_sl_t *s, uint32_t next, uint32_t used) {
    if (next != s->next || used != s->used) s->stall = 0;
    s->next = next;
    s->used = used;
}

uint32_t ats_sl_live_ub(const ats_sl_t *s) {
    const uint64_t ub = (uint64_t)s->live + (uint32_t)(s->next - s->dump_next);
    return ub > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)ub;
}

int ats_sl_aged(const ats_sl_t *s) {
    return s->valid && s->has_old && (uint32_t)(s->next - s->oldest) > s->ppns - s->ppns / 4u;
}

static int sl_full(const ats_sl_t *s) { return (uint64_t)s->used * 4u > (uint64_t)s->lpns * 3u; }

int ats_sl_need_dump(const ats_sl_t *s) {
    if (s->used == 0u) return 0;
    if (!s->valid) return 1;
    if (s->stall) return 0;   // nothing it could merge, and neither counter moved since
    return s->on || ats_sl_live_ub(s) > s->hi || sl_full(s) || ats_sl_aged(s);
}

// shell sort (the firmware sorts up to SLOG_LPNS x SLOG_FRAGS LPGNs: no O(n^2))
static void sl_sort(uint32_t *a, uint32_t n) {
    uint32_t gap = 1;
    while (gap < n / 3u) gap = gap * 3u + 1u;
    for (; gap > 0; gap /= 3u)
        for (uint32_t i = gap; i < n; i++) {
            const uint32_t v = a[i];
            uint32_t j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap) a[j] = a[j - gap];
            a[j] = v;
        }
}

void ats_sl_recount(ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip, uint32_t *scratch,
                    int fresh) {
    uint32_t k = 0, oldest_age = 0;
    s->has_old = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < e[i].nf && j < ATS_SL_MAX_FRAGS; j++) {
            // ages relative to the dump's counter: LPGNs compare across a 32-bit wrap
            const uint32_t age = (uint32_t)(s->next - e[i].lpgn[j]);
            scratch[k++] = age;
            if (skip && skip[i]) continue;
            if (!s->has_old || age > oldest_age) {
                oldest_age = age;
                s->oldest = e[i].lpgn[j];
                s->has_old = 1;
            }
        }
    sl_sort(scratch, k);
    uint32_t live = 0;
    for (uint32_t i = 0; i < k; i++) live += i == 0u || scratch[i] != scratch[i - 1u];
    if (fresh) {
        s->dump_next = s->next;
        s->dump_used = s->used;
        s->live = live;
    } else {
        // the merges' recount covers the entries of the dump only: pages written since stay in
        // live_ub through next - dump_next, so live never grows here
        if (live < s->live) s->live = live;
    }
    s->valid = 1;
}

int ats_sl_want(ats_sl_t *s) {
    const uint32_t ub = ats_sl_live_ub(s);
    if (s->used == 0u) s->on = 0;
    else if (ub > s->hi || sl_full(s)) s->on = 1;
    else if (ub < s->lo && (uint64_t)s->used * 2u < s->lpns) s->on = 0;
    return s->used != 0u && (s->on || ats_sl_aged(s));
}

int ats_sl_pick(const ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip) {
    int best = -1;
    uint32_t best_age = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (e[i].nf == 0u || (skip && skip[i])) continue;
        const uint32_t age = (uint32_t)(s->next - e[i].lpgn[0]);
        if (best < 0 || age > best_age) {
            best = (int)i;
            best_age = age;
        }
    }
    return best;
}


int ats_sl_step(ats_sl_t *s, const ats_sl_ent_t *e, uint32_t n, const uint8_t *skip) {
    if (!ats_sl_want(s)) return -1;
    const int k = ats_sl_pick(s, e, n, skip);
    if (k < 0) s->stall = 1;
    return k;
}

uint32_t ats_sl_skip(const ats_sl_ent_t *e, uint32_t n, uint32_t *bad_lpn, uint32_t *bad_lpgn, uint32_t nbad,
                     uint8_t *skip) {
    for (uint32_t i = 0; i < n; i++) skip[i] = 0;
    uint32_t k = 0;
    for (uint32_t b = 0; b < nbad; b++) {
        int found = 0;
        for (uint32_t i = 0; i < n; i++)
            if (e[i].nf != 0u && e[i].lpn == bad_lpn[b] && e[i].lpgn[0] == bad_lpgn[b]) {
                skip[i] = 1;
                found = 1;
            }
        if (!found) continue;
        bad_lpn[k] = bad_lpn[b];
        bad_lpgn[k] = bad_lpgn[b];
        k++;
    }
    return k;
}

static int sl_in_block(const ats_geo_t *g, uint32_t ppn, uint32_t d, uint32_t b) {
    return ppn != ATS_UNMAPPED && ats_ppn_die(g, ppn) == d && ats_ppn_block(g, ppn) == b;
}

int ats_sl_gc_lpn(const ats_geo_t *g, const ats_sl_ent_t *e, uint32_t d, uint32_t b) {
    if (e->nf == 0u && e->pend == 0u) return 0;
    if (sl_in_block(g, e->base, d, b)) return 1;
    for (uint32_t j = 0; j < e->nf && j < ATS_SL_MAX_FRAGS; j++)
        if (sl_in_block(g, e->ppn[j], d, b)) return 1;
    return 0;
}

int ats_sl_rx_wait(const ats_sl_port_t *p, uint64_t limit, uint32_t *used) {
    const uint64_t t0 = p->now(p->ctx);
    for (;;) {
        uint32_t u = 0, rx = 0;
        if (p->ctr(p->ctx, &u, &rx) != ATS_OK) return ATS_E_STATE;
        if (!rx) {
            *used = u;
            return ATS_OK;
        }
        if (p->now(p->ctx) - t0 > limit) return ATS_E_TIMEOUT;   // (a read at exactly t0 + limit: one more)
        if (p->pump) p->pump(p->ctx);
    }
}
