// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: housekeeping (housekeeping.h). The order of the steps is the firmware's; every
// decision is an ftl/policy.c function of HK.
#include "housekeeping.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"
#include "gc.h"
#include "wear.h"

static uint8_t gc_on[NDIE];            // GC hysteresis per die (GC_LOW, GC_HIGH)
static uint8_t gc_none[NDIE];          // the last GC look at the die found no block worth collecting

ats_hk_t HK = {
    .ndie = NDIE, .ppb = PPB, .gc_low = GC_LOW, .gc_high = GC_HIGH, .gc_urgent = GC_URGENT,
    .plan_low = PLAN_LOW, .plan_tail = PLAN_TAIL, .host_room = HOST_ROOM, .reloc_reserve = RELOC_RESERVE,
    .gc_slack = GC_SLACK, .log_ckpt = LOG_CKPT,
#if ATS_HW_SLOG
    .slog_ckpt = SLOG_CKPT_PG, .slog_hold = SLOG_HOLD_PG,
#endif
    .plan_len = plan_len, .plan_pos = plan_pos, .plan_ok = plan_ok, .hl_len = hl_len, .n_free = n_free,
    .n_retired = n_retired, .gc_on = gc_on, .gc_none = gc_none,
};

uint32_t hk_work;

#if ATS_HW_SLOG
// ---- the S-Log merge policy (README "S-Log"; decisions: ftl/policy.c ats_sl_*)
ats_sl_t SLP = {.max = SLOG_MAX, .hi = SLOG_HI, .lo = SLOG_LO, .lpns = SLOG_LPNS, .ppns = ATS_HW_SLOG_PPNS};
static ats_sl_ent_t sl_ent[SLOG_LPNS] NOINIT;          // the last index read (sl_dump), sl_n entries
static uint32_t sl_n;
static uint32_t sl_scratch[SLOG_LPNS * ATS_SL_MAX_FRAGS] NOINIT;
static uint32_t sl_fdata[SLOG_LPNS][ATS_SL_MAX_FRAGS] NOINIT;   // rop 4's data of each fragment read
static uint8_t sl_skip[SLOG_LPNS];
static uint32_t sl_bad_lpn[SLOG_LPNS], sl_bad_lpgn[SLOG_LPNS], sl_nbad;   // MERGE answered unreadable
uint32_t sl_bad_gen;
static int sl_held;
static uint64_t sl_hold_t0;                            // the cycle GC's hold began (sl_gc_hold)
static uint32_t sl_hold_used;                          // `used` of the hold's wait (rop 6 under the hold)
static uint64_t sl_seq = ~0ull;                        // NEXT_SEQ when the counters were last read

// the log page of LPGN lg when the LPGN -> PPN table no longer names it (an older page in its entry):
// a page of the old table's list `of` (the fragment's LPN) with the same byte, off and len whose spare
// says log page lg (one NREAD each). ATS_UNMAPPED: none
static uint32_t old_page(int of, const ats_frag_t *f, uint32_t lg) {
    if (of < 0) return ATS_UNMAPPED;
    for (uint32_t i = 0; i < SL.nf[of]; i++) {
        const ats_frag_t *o = &SL.f[(uint32_t)of * SL.frags + i];
        if (o->ppn == ATS_UNMAPPED || o->doff != f->doff || o->off != f->off || o->len != f->len) continue;
        fw_rsp_t r;
        spare_t sp;
        nread(ats_ppn_die(&G, o->ppn), ats_ppn_block(&G, o->ppn), ats_ppn_page(&G, o->ppn), &r);
        if (r.status != N_OK) continue;
        hal_spare(&sp);
        if (sp.kind == ATS_KIND_LOG && (sp.flags & ATS_F_SLOG) && sp.epoch == lg) return o->ppn;
    }
    return ATS_UNMAPPED;
}

uint32_t sl_log_page(uint32_t lpn, uint32_t lg, uint32_t rop4_data) {
    fw_rsp_t pt;
    hal_fw_sread(SL_RD_PPN, 0, lg, &pt);
    if (pt.status == 0 && pt.mapped) return pt.ppn;
    ats_frag_t f;
    memset(&f, 0, sizeof f);
    f.doff = (uint16_t)((rop4_data & 0x3FFu) * 4u);
    f.off = (uint16_t)(((rop4_data >> 10) & 0x3FFu) * 4u);
    f.len = (uint16_t)(((rop4_data >> 20) & 0x3FFu) * 4u);
    return old_page(ats_slog_lookup(&SL, lpn), &f, lg);
}

// rop 6: the entries in use (epoch 0) and the whole 32-bit LPGN counter (epoch 1: FW_RSP_PPN carries
// only its low ATS_PPN_W bits). ATS_E_STATE: the port answered an error (SLP keeps the last values)
static int sl_ctr(void) {
    fw_rsp_t r, c;
    hal_fw_sread(SL_RD_CTR, 0, 0, &r);
    hal_fw_sread(SL_RD_CTR, 0, 1, &c);
    if (r.status != 0 || c.status != 0) return ATS_E_STATE;
    ats_sl_ctr(&SLP, c.data, r.data);
    return ATS_OK;
}

// the index: every slot (rop 3), its fragments' LPGNs (rop 4); with pages also each fragment's log
// page PPN (rop 5) and the base of every entry with fragments (LOOKUP). An entry that changes while
// it is read keeps the fragments read before the change (rop 4 answers BAD_FIELD past |F|).
// ATS_E_STATE: rop 3 or rop 6 answered an error (an entry or the counter unknown: GC must not trust
// this read; the merge policy's pass goes on with it)
static int sl_dump(int pages) {
    int st = ATS_OK;
    sl_n = 0;
    for (uint32_t i = 0; i < SLOG_LPNS; i++) {
        fw_rsp_t r;
        hal_fw_sread(SL_RD_ENTRY, i, 0, &r);
        if (r.status != 0) st = ATS_E_STATE;
        if (r.status != 0 || !r.mapped) continue;
        ats_sl_ent_t *e = &sl_ent[sl_n++];
        e->lpn = r.ppn;
        e->nf = r.data & 0xFFu;
        if (e->nf > ATS_SL_MAX_FRAGS) e->nf = ATS_SL_MAX_FRAGS;
        e->pend = (r.data >> 16) & 0xFFu;
        e->base = ATS_UNMAPPED;
        for (uint32_t j = 0; j < e->nf; j++) {
            hal_fw_sread(SL_RD_FRAG, i, j, &r);
            if (r.status != 0) {
                e->nf = j;
                break;
            }
            e->lpgn[j] = r.ppn;                        // low bits: extended below
            e->ppn[j] = ATS_UNMAPPED;
            sl_fdata[sl_n - 1u][j] = r.data;
        }
    }
    // the counter after the reads: every fragment read is older than it
    if (sl_ctr() != ATS_OK) st = ATS_E_STATE;
    for (uint32_t k = 0; k < sl_n; k++) {
        ats_sl_ent_t *e = &sl_ent[k];
        for (uint32_t j = 0; j < e->nf; j++) {
            e->lpgn[j] = ats_sl_ext_back(e->lpgn[j], SLP.next, ATS_PPN_W);
            if (!pages) continue;
            // the table, else the firmware's list (a page the table no longer names may still be
            // live and named by the durable checkpoint: GC must see it in its block); ATS_UNMAPPED:
            // unknown (sl_gc says why that block may go)
            e->ppn[j] = sl_log_page(e->lpn, e->lpgn[j], sl_fdata[k][j]);
        }
        if (pages && (e->nf || e->pend)) {
            uint32_t mapped;
            const uint32_t cur = remap(R_LOOKUP, e->lpn, 0, &mapped);
            if (mapped) e->base = cur;
        }
    }
    S.sl_dumps++;
    const uint32_t nb = ats_sl_skip(sl_ent, sl_n, sl_bad_lpn, sl_bad_lpgn, sl_nbad, sl_skip);
    if (nb < sl_nbad) sl_bad_gen++;
    sl_nbad = nb;
    ats_sl_recount(&SLP, sl_ent, sl_n, sl_skip, sl_scratch, 1);
    S.sl_over += (uint64_t)(SLP.live > SLOG_MAX);
    return st;
}

// MERGE of entry i: 0 merged, 1 stale, 2 nothing (F emptied meanwhile): F[lpn] is empty now (the
// firmware's copy too); 3 (or any other answer) unreadable: the base or a fragment cannot be read,
// F unchanged, the host's reads of the LPN answer MEDIA_ERROR; the LPN is skipped (by merges and by
// GC, whose block keeps it) until its F changes (a write, TRIM or new fragment list)
static int sl_merge(uint32_t i) {
    ats_sl_ent_t *e = &sl_ent[i];
    fw_rsp_t r;
    hal_fw_merge(e->lpn, &r);
    if (r.status > 2u) {
        S.sl_unreadable++;
        hal_printf("slog: merge lpn %u: status %u (unreadable: not merged again until its F changes)\n", e->lpn,
                   r.status);
        sl_skip[i] = 1;
        if (sl_nbad < SLOG_LPNS) {
            sl_bad_lpn[sl_nbad] = e->lpn;
            sl_bad_lpgn[sl_nbad] = e->lpgn[0];
            sl_nbad++;
        }
        ats_sl_recount(&SLP, sl_ent, sl_n, sl_skip, sl_scratch, 0);   // no longer the age rule's oldest
        return ATS_E_NAND;
    }
    if (r.status == 0u) S.sl_merged++;
    else if (r.status == 1u) S.sl_stale++;
    else S.sl_nothing++;
    ats_slog_clear(&SL, e->lpn);
    e->nf = e->pend = 0;
    ats_sl_recount(&SLP, sl_ent, sl_n, sl_skip, sl_scratch, 0);
    return ATS_OK;
}

// a pass: the counters when NEXT_SEQ moved since the last read (every change of the index but a
// reservation comes with a request, which takes a seq; a pass without one costs no firmware-port
// operation, so the main loop can sleep); the index when the policy may want a merge; then at most
// SLOG_STEP MERGEs, oldest fragment first. None in a pass whose wait for a record being received
// ran out (HK.pass_wait: a MERGE waits, unbounded, while one is received; the next pass looks again)
static void sl_pass(void) {
    if (HK.pass_wait) return;
    const uint64_t ns = hal_next_seq();
    if (ns == sl_seq) return;
    sl_seq = ns;
    (void)sl_ctr();
    if (!ats_sl_need_dump(&SLP)) {
        (void)ats_sl_want(&SLP);
        return;
    }
    (void)sl_dump(0);
    for (uint32_t k = 0; k < SLOG_STEP; k++) {
        const int i = ats_sl_step(&SLP, sl_ent, sl_n, sl_skip);
        if (i < 0) break;
        (void)sl_merge((uint32_t)i);
    }
}

// the log pages written since the last durable checkpoint into HK.slog_pages (the checkpoint rule
// by log pages, ftl/policy.c): the LPGN counter (read again only when NEXT_SEQ moved: every log
// page comes with a request) less the counter that checkpoint read at its seq_base (slog_lpgn,
// taken when ck_seq_base changes: a checkpoint that failed after reading it does not count)
static uint64_t sl_pg_seq = ~0ull, sl_ck_seq = ~0ull;
static uint32_t sl_ck_lpgn;
static void sl_pages(void) {
    const uint64_t ns = hal_next_seq();
    if (ns != sl_pg_seq) {
        sl_pg_seq = ns;
        (void)sl_ctr();
    }
    if (ck_seq_base != sl_ck_seq) {
        sl_ck_seq = ck_seq_base;
        sl_ck_lpgn = slog_lpgn;
    }
    const int32_t n = (int32_t)(SLP.next - sl_ck_lpgn);
    HK.slog_pages = n > 0 ? (uint32_t)n : 0u;
}

// ats_sl_rx_wait's port: rop 6 (epoch 0), the cycle counter and, between two reads, the drain's
// work (ckpt.c): blocks handed out (the record may wait for the issue of the data pages before it,
// its own and other transactions', and they for a block: BLK_NEED), grown bad blocks taken, then asleep until ACT (BLK_NEED or NEXT_SEQ changed, a
// completion), a bad block or SLOG_RX_POLL cycles (the record's last words raise no wake source)
static int rx_ctr(void *ctx, uint32_t *used, uint32_t *rx) {
    (void)ctx;
    fw_rsp_t r;
    hal_fw_sread(SL_RD_CTR, 0, 0, &r);
    if (r.status != 0) return ATS_E_STATE;
    *used = r.data;
    *rx = r.mapped;
    return ATS_OK;
}
static uint64_t rx_now(void *ctx) {
    (void)ctx;
    return hal_cycles();
}
static void rx_pump(void *ctx) {
    (void)ctx;
    S.sl_rx_polls++;
    hal_wait_clr_act();
    supply();
    take_bad();
    (void)hal_wait(WK(ACT) | WK(BAD) | WK(DEADLINE), hal_cycles() + SLOG_RX_POLL);
}

int sl_rx_wait(int gc, uint32_t *used) {
    static const ats_sl_port_t port = {0, rx_ctr, rx_now, rx_pump};
    if (gc) S.sl_rx_waits_gc++;
    else S.sl_rx_waits_ckpt++;
    const int st = ats_sl_rx_wait(&port, SLOG_RX_WAIT, used);
    if (st != ATS_OK) {
        S.sl_rx_fails++;
        hal_printf("slog: wait for no record being received: %d\n", st);
    }
    return st;
}

int sl_gc_hold(void) {
    // no S-Log record is accepted from here to sl_gc_end (held from before the index read until the
    // block's pages are moved, architecture 11.6): no fragment gets a base in the block; a record
    // accepted before the hold shows its fragments (pend) only once received: waited for first
    sl_hold_t0 = hal_cycles();
    hal_ctrl(hal_ctrl_host_en(), 1);
    sl_held = 1;
    return sl_rx_wait(1, &sl_hold_used);
}

int sl_gc(uint32_t d, uint32_t b) {
    // `used` as the hold's wait read it (rop 6 after the hold, answering no record received: exact
    // until sl_gc_end, as no record is accepted meanwhile). 0: no entry can hold a fragment now
    if (sl_hold_used == 0u) return ATS_OK;   // (the hold stays: a record sealed before the move could
                                             // name a base in the block that this look did not see)
    if (sl_dump(1) != ATS_OK) return ATS_E_STATE;   // a port error: the block not collected now
    int st = ATS_OK;
    for (uint32_t i = 0; i < sl_n; i++) {
        // a live fragment's page is found by the table or by the firmware's list SL (sl_log_page).
        // One neither names is not looked for: SL names every page the durable checkpoint names
        // (each checkpoint's SL takes every live fragment's page from the table or the previous SL),
        // so that checkpoint names it as an unknown page, or it was logged after the checkpoint (its
        // block is in the active log, handed and not a GC victim until the next one); either way
        // neither the device (MEDIA_ERROR) nor a recovery reads it, and its block may be erased
        if (!ats_sl_gc_lpn(&G, &sl_ent[i], d, b)) continue;
        if (sl_skip[i]) {
            st = ATS_E_NAND;
            continue;
        }
        S.sl_gc_merges++;
        if (sl_merge(i) != ATS_OK) st = ATS_E_NAND;
    }
    return st;
}

void sl_gc_end(void) {
    if (sl_held) {
        hal_ctrl(hal_ctrl_host_en(), (uint32_t)HK.hold_wb);
        // how long the host's write-backs waited for this GC block (console `slog` hold_*)
        const uint64_t dt = hal_cycles() - sl_hold_t0;
        S.sl_holds++;
        S.sl_hold_total += dt;
        if (dt > S.sl_hold_max) S.sl_hold_max = dt;
    }
    sl_held = 0;
}
#endif

// keep supplying while a firmware command waits (a RELOC or a checkpoint page may need a block; not
// while recovery still reads the old plan: supply_ok). Runs again when something it looks at may have
// changed: a grown bad block, BLK_NEED or NEXT_SEQ (the sticky ACT), otherwise when the command ends
uint32_t wait_hook(void) {
    if (!supply_ok) return 0;
    supply();
    take_bad();
    // the host's write-backs wait as soon as the room runs short, not only at the next housekeeping
    // pass (issue 34: the next checkpoint's drain waited for a block that only that checkpoint could
    // plan). Released by housekeeping only. (The hook runs in every poll of a firmware command: the
    // BLK_NEED read only while the hold is off; the S-Log's log pages as the last pass counted them,
    // no firmware-port read inside another command)
    if (!HK.hold_wb && ats_hk_hold_now(&HK, room())) {
        HK.hold_wb = 1;
        hal_ctrl(hal_ctrl_host_en(), 1);
        hk_work++;
    }
    return WK(BAD) | WK(ACT);
}

void hk_boot_hold(void) {
    // a recovery of a device that was short of blocks plans no erased block: write-backs accepted now
    // would wait for a block that only the next checkpoint can plan, and that checkpoint's drain
    // would wait for them (issue 34, test_system seed 20: `checkpoint failed: -7` after a cut)
    supply();
    HK.hold_wb = room() < HOST_ROOM;
    hal_ctrl(1, (uint32_t)HK.hold_wb);
}

// the policy's state that a pass may change without a firmware-port operation (hysteresis, the
// no-space count, ...): a pass that changes it counts as work (hk_work)
static uint32_t hk_sig(void) {
    uint32_t h = (uint32_t)HK.hold_wb | (uint32_t)HK.no_space << 1 | (uint32_t)HK.gc_moved << 2 | HK.stuck << 3;
    for (uint32_t d = 0; d < NDIE; d++)
        h = h * 31u + ((uint32_t)gc_on[d] | (uint32_t)gc_none[d] << 1 | (uint32_t)n_retired[d] << 2 |
                       (uint32_t)n_free[d] << 3 | (uint32_t)plan_pos[d] << 16);
    return h;
}

void housekeeping(void) {
    const uint32_t sig = hk_sig();
    supply();
    take_bad();
    census();
    // GC per die with hysteresis, so that erased blocks come in batches and one checkpoint plans
    // several of them
    ats_hk_gc_hyst(&HK);
#if ATS_HW_SLOG
    sl_pages();
#endif
    // the host's write-backs wait (the buffer fills, then host commands wait) while a die runs short
    // or the room does, until GC and a checkpoint have planned blocks again, or while the S-Log's
    // log pages since the last checkpoint near what a recovery keeps, until the next one
    const int urgent = ats_hk_urgent(&HK, room());
    if (urgent != HK.hold_wb) {
        hk_work++;
        HK.hold_wb = urgent;
        hal_ctrl(1, (uint32_t)HK.hold_wb);
    }
    S.gc_urgent += (uint64_t)urgent;
    ats_hk_pass_begin(&HK);
    // checkpoint: the log grows long (requests, or S-Log log pages), a die's plan runs low, or (held)
    // erased blocks wait for a plan. ATS_E_TIMEOUT (its wait for a record being received ran out):
    // no GC, static wear levelling or S-Log merge this pass (ats_hk_ckpt_done, sl_pass)
    if (ats_hk_ckpt_due(&HK, hal_next_seq() - ck_scan_from, room())) {
        hk_work++;
        const int st = ckpt_write();
        ats_hk_ckpt_done(&HK, st);
        if (st != ATS_OK) {
            S.ckpt_fail++;
            hal_printf("checkpoint failed: %d\n", st);
        }
    }
    // GC: one block on every die that wants it; static wear levelling when no die's GC had work, or
    // when an erase took the spread past WL_SPREAD and write-backs are not held (ats_hk_wl_due)
    for (uint32_t d = 0; d < NDIE; d++) {
        census();
        if (ats_hk_gc_wanted(&HK, d)) {
            const uint8_t none = gc_none[d];
            const int st = gc_step(d, HK.hold_wb);
            hk_work += st != ATS_E_NOSPACE || gc_none[d] != none;
            ats_hk_gc_done(&HK, st);
            if (st == ATS_E_TIMEOUT) {   // (no later die's GC this pass: ats_hk_gc_wanted)
                supply();
                take_bad();
            }
        }
    }
    if (ats_hk_wl_due(&HK, wl_over)) {
        hk_work += (uint32_t)wl_dirty;         // (wl_step looks only when something was erased or retired)
        wl_step();
    }
    // no space (README "No space"): said once on the console; counted (GET_LOG)
    census();
    const uint32_t stuck = HK.stuck;
    const int ns = ats_hk_pass_end(&HK);
    hk_work += ns != ATS_HK_NS_SAME || HK.stuck != stuck;
    if (ns == ATS_HK_NS_ENTER) {
        hal_no_space(1);   // writes, FLUSH, ... complete NO_SPACE instead of waiting (CTRL.no_space)
        hal_printf("no space: write-backs held, no block can be freed (%u bad blocks, room %u)\n", n_bad, room());
    } else if (ns == ATS_HK_NS_CLEAR) {
        hal_no_space(0);
        hal_puts("no space: cleared\n");
    }
    S.no_space += (uint64_t)HK.no_space;
#if ATS_HW_SLOG
    sl_pass();
#endif
    hk_work += hk_sig() != sig;
}
