// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the checkpoint writer (ckpt.h; README "Checkpoints").
#include "ckpt.h"

#include <string.h>

#include "blocks.h"
#include "housekeeping.h"

uint32_t ck_blk = CK_BLK0;
uint32_t ck_blk1 = 1u;
uint32_t ckpt_no;
uint64_t ck_seq_base, ck_scan_from;
// NOINIT: filled up to n_map / the page count before a checkpoint writes or parses them
uint32_t ck_pages[MAX_CK_PAGES][PW] NOINIT;
uint32_t map_lpn[NLBA] NOINIT, map_ppn[NLBA] NOINIT;
static uint32_t sl_lpn[SLOG_LPNS];
static uint8_t sl_nf[SLOG_LPNS];
static ats_frag_t sl_frag[SLOG_LPNS * SLOG_FRAGS] NOINIT;
ats_slog_tab_t SL = {SLOG_LPNS, SLOG_FRAGS, 0, sl_lpn, sl_nf, sl_frag};
uint32_t slog_lpgn;
uint32_t sl_words[SLOG_WORDS] NOINIT;
uint32_t ck_l2p[NLBA] NOINIT;

#if ATS_HW_SLOG
// the LPNs of the backend's index come as the port's PPN_W low bits (rtl/backend/README.md op 7 rop 3)
_Static_assert(NLBA <= (1ull << ATS_PPN_W), "an LPN must fit the firmware port's ppn field");
static uint32_t hw_lpn[SLOG_LPNS];
static uint8_t hw_nf[SLOG_LPNS];
static ats_frag_t hw_frag[SLOG_LPNS * SLOG_FRAGS] NOINIT;
static ats_slog_tab_t HW = {SLOG_LPNS, SLOG_FRAGS, 0, hw_lpn, hw_nf, hw_frag};

static void sread(uint32_t rop, uint32_t lpn, uint32_t epoch, fw_rsp_t *r) { hal_fw_sread(rop, lpn, epoch, r); }

// F from the backend's index (docs/persistence.md section 10.4, rtl/backend/README.md "Firmware port"
// op 7 rops 3-6), read while write-backs are held and every accepted request has completed (exact at
// seq_base): per slot 0 .. SLOG_LPNS - 1 its entry (LPN, |F|), each fragment (LPGN, byte, off, len),
// its log page's PPN (sl_log_page); each entry's base = its LOOKUP now (into ck_l2p). A fragment
// keeps its record's commit point when the old table holds it (same LPN, page, byte, off, len), else
// seq_base - 1 (logged by the device since: all the recovery asks of a checkpointed fragment's seq is
// that it is below seq_base, section 10.4). A fragment whose log page neither names (the device reads
// it MEDIA_ERROR) goes into the section as an unknown page (PPN ATS_UNMAPPED, its LPGN): never a
// refusal. On success SL and slog_lpgn become what the hardware said. ATS_E_STATE (the index answered
// what a correct backend never does: a slot below SLOG_LPNS or a fragment below |F| not status 0, slot
// SLOG_LPNS not BAD_FIELD, an entry on an LPN >= NLBA or with fragments on an unmapped LPN), ATS_E_FULL:
// nothing changed then
static int ckpt_slog_hw(uint64_t seq_base) {
    fw_rsp_t r;
    sread(SL_RD_CTR, 0, 1, &r);
    if (r.status != 0) return ATS_E_STATE;
    const uint32_t ctr = r.data;                       // the whole LPGN counter (epoch bit 0 = 1)
    HW.n = 0;
    for (uint32_t slot = 0; slot <= SLOG_LPNS; slot++) {
        sread(SL_RD_ENTRY, slot, 0, &r);
        if (slot == SLOG_LPNS) {                       // past the index: BAD_FIELD, nothing else
            if (r.status == 0x07u) break;
            hal_printf("ckpt: slog: slot %u answered status %u (not BAD_FIELD)\n", slot, r.status);
            return ATS_E_STATE;
        }
        if (r.status != 0) {
            hal_printf("ckpt: slog: slot %u status %u\n", slot, r.status);
            return ATS_E_STATE;
        }
        if (!r.mapped) continue;
        const uint32_t lpn = r.ppn, nf = r.data & 0xFFu;
        if (lpn >= NLBA) {
            hal_printf("ckpt: slog: slot %u lpn %u out of range\n", slot, lpn);
            return ATS_E_STATE;
        }
        if (!nf) continue;                             // a reservation only
        fw_rsp_t lk;
        hal_fw_remap(R_LOOKUP, lpn, 0, &lk);
        if (lk.status != 0 || !lk.mapped) {
            hal_printf("ckpt: slog: lpn %u has %u fragments and no base\n", lpn, nf);
            return ATS_E_STATE;
        }
        ck_l2p[lpn] = lk.ppn;
        const int of = ats_slog_lookup(&SL, lpn);
        for (uint32_t j = 0; j < nf; j++) {
            sread(SL_RD_FRAG, slot, j, &r);
            if (r.status != 0) return ATS_E_STATE;
            ats_frag_t f;
            memset(&f, 0, sizeof f);
            const uint32_t lg = ats_sl_ext_back(r.ppn, ctr, ATS_PPN_W);   // the LPGN from its low PPN_W bits
            f.doff = (uint16_t)((r.data & 0x3FFu) * 4u);
            f.off = (uint16_t)(((r.data >> 10) & 0x3FFu) * 4u);
            f.len = (uint16_t)(((r.data >> 20) & 0x3FFu) * 4u);
            f.ppn = sl_log_page(lpn, lg, r.data);
            if (f.ppn == ATS_UNMAPPED) {               // section 10.4's unknown page: reads MEDIA_ERROR
                f.lpgn = lg;
                hal_printf("ckpt: slog: lpn %u fragment %u (lpgn %u): log page unknown (MEDIA_ERROR)\n", lpn, j,
                           lg);
            }
            f.seq = seq_base - 1u;
            for (uint32_t i = 0; of >= 0 && i < SL.nf[of]; i++) {
                const ats_frag_t *o = &SL.f[(uint32_t)of * SL.frags + i];
                if (o->ppn == f.ppn && o->doff == f.doff && o->off == f.off && o->len == f.len &&
                    (f.ppn != ATS_UNMAPPED || o->lpgn == f.lpgn))
                    f.seq = o->seq;
            }
            if (ats_slog_append(&HW, lpn, &f) != ATS_OK) return ATS_E_FULL;
        }
    }
    SL.n = HW.n;
    memcpy(SL.lpn, HW.lpn, HW.n * sizeof HW.lpn[0]);
    memcpy(SL.nf, HW.nf, HW.n * sizeof HW.nf[0]);
    memcpy(SL.f, HW.f, HW.n * SLOG_FRAGS * sizeof HW.f[0]);
    slog_lpgn = ctr;
    return ATS_OK;
}
#endif

// F's section (version 3) for the mapping map_lpn / map_ppn[0..n_map) (ascending LPNs): each LPN's
// base is its mapping now; an LPN unmapped since (a TRIM) leaves F (section 10.5: F[lpn] = [] then).
// With ATS_HW_SLOG, F and the bases (ck_l2p) were read at seq_base (ckpt_slog_hw): used as they are.
// Returns the section's words (0: F is empty and the device has no S-Log: version 2) or ATS_E_FULL.
// A device with the S-Log writes the section (version 3) also when F is empty: its slog_lpgn lets the
// next recovery skip the old pages of its plan blocks (persistence.md section 6 step 2 "Old pages")
static int ckpt_slog(uint32_t n_map) {
    for (uint32_t e = SL.n; !ATS_HW_SLOG && e-- > 0;) {
        const uint32_t lpn = SL.lpn[e];
        uint32_t lo = 0, hi = n_map;               // binary search of the ascending list
        while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2u;
            if (map_lpn[mid] < lpn) lo = mid + 1u;
            else hi = mid;
        }
        if (lpn < NLBA && lo < n_map && map_lpn[lo] == lpn && map_ppn[lo] != ATS_UNMAPPED) ck_l2p[lpn] = map_ppn[lo];
        else ats_slog_clear(&SL, lpn);
    }
    if (!SL.n && !ATS_HW_SLOG) return 0;
    return ats_slog_ckpt_put(&SL, ck_l2p, NLBA, slog_lpgn, sl_words, SLOG_WORDS);
}

// lookup: the mapping by LOOKUP of every LPN; else the list in map_lpn / map_ppn[0..n_known)
static int ckpt_write_map(int lookup, uint32_t n_known) {
    const uint64_t t0 = hal_cycles();
    census_dirty = 1;                                  // plan and block states change below
    // 1. drain: every accepted request completed, none accepted meanwhile; with the S-Log first no
    //    record being received (sl_rx_wait: under the hold it stays so), so that the drained table
    //    holds no part of a record whose later log pages are still to come (architecture.md 11.7)
    hal_ctrl(hal_ctrl_host_en(), 1);
#if ATS_HW_SLOG
    {
        uint32_t used;
        const int st = sl_rx_wait(0, &used);
        if (st != ATS_OK) {
            hal_ctrl(hal_ctrl_host_en(), (uint32_t)HK.hold_wb);
            return st;
        }
    }
#endif
    const uint64_t td = hal_cycles();                  // the drain's own bound (after the S-Log wait)
    while (hal_cpl_seq() != hal_next_seq()) {
        hal_wait_clr_act();
        supply();                                      // a page waiting for a block must get one
        take_bad();
        if (hal_cycles() - td > 5000000u) {
            hal_ctrl(hal_ctrl_host_en(), (uint32_t)HK.hold_wb);
            return ATS_E_STATE;
        }
        // asleep until drained, or a block may be needed (ACT: BLK_NEED changed), or the time is up
        hal_wait(WK(DRAIN) | WK(ACT) | WK(BAD) | WK(DEADLINE), td + 5000001u);
    }
    const uint64_t seq_base = hal_next_seq();
#if ATS_HW_SLOG
    {   // the S-Log as the backend holds it at seq_base, before write-backs go on
        const int st = ckpt_slog_hw(seq_base);
        if (st != ATS_OK) {
            hal_ctrl(hal_ctrl_host_en(), (uint32_t)HK.hold_wb);
            return st;
        }
    }
#endif
    uint64_t t1 = hal_cycles();
    S.ck_phase[0] += t1 - t0;
    uint64_t scan_from = seq_base;
    for (uint32_t t = 1; t <= NTX; t++) {
        ats_txs_addr_write(t);
        (void)ats_txs_addr_read();
        if (ats_txs_read() & 1u) {
            const uint64_t s = ((uint64_t)ats_txs_seq_read());
            if (s < scan_from) scan_from = s;
        }
    }
    // write-backs go on while the mapping is read and written, unless blocks are short: then the
    // host would use up the plan's blocks before the checkpoint that adds more is durable
    hal_ctrl(hal_ctrl_host_en(), (uint32_t)HK.hold_wb);
    // 2. the plan: per die the handed blocks that may hold records >= scan_from (block i holds
    //    seqs below the hand-out seq of block i + 2), then the erased blocks (fewest erases first)
    for (uint32_t d = 0; d < NDIE; d++) {
        uint32_t first = 0;
        for (uint32_t i = 0; i + 2u < hl_len[d]; i++)
            if (hl_seq[d][i + 2u] <= scan_from) first = i + 1u;
        uint32_t n = 0;
        for (uint32_t i = first; i < hl_len[d]; i++) {
            hl_blk[d][n] = hl_blk[d][i];
            hl_seq[d][n] = hl_seq[d][i];
            plan[bi(d, n)] = hl_blk[d][n];
            n++;
        }
        hl_len[d] = (uint16_t)n;
        const uint32_t handed = n;
        // blocks a failed checkpoint planned (never durable, never handed) go back to the pool
        for (uint32_t i = plan_ok[d]; i < plan_len[d]; i++)
            if (blk_state[bi(d, plan[bi(d, i)])] == B_PLAN) blk_state[bi(d, plan[bi(d, i)])] = B_FREE;
        // not yet handed blocks of the old plan stay first, then the erased pool by erase count
        for (uint32_t i = plan_pos[d]; i < plan_ok[d]; i++) plan[bi(d, n++)] = plan[bi(d, i)];
        plan_ok[d] = (uint16_t)n;
        {
            static uint16_t ec[BLOCKS], cb[BLOCKS], ord[BLOCKS];
            uint32_t k = 0;
            for (uint32_t b = 0; b < BLOCKS; b++)
                if (blk_state[bi(d, b)] == B_FREE) { ec[k] = erase_cnt[bi(d, b)]; cb[k++] = (uint16_t)b; }
            // the erased tail: the PLAN_TAIL least-worn erased blocks (erased blocks left out are
            // free all the same; a recovery treats them as old data and GC erases them once more)
            k = ats_wl_order(ec, ord, k, PLAN_TAIL);
            for (uint32_t i = 0; i < k; i++) {
                blk_state[bi(d, cb[ord[i]])] = B_PLAN;
                plan[bi(d, n++)] = cb[ord[i]];
            }
        }
        plan_len[d] = (uint16_t)n;
        plan_pos[d] = (uint16_t)handed;
    }
    uint64_t t2 = hal_cycles();
    S.ck_phase[1] += t2 - t1;
    // 3. the mapping (fuzzy: read after seq_base; replay from seq_base fixes what moved since)
    const uint32_t n_map = lookup ? hal_fw_lookups(0, NLBA, map_lpn, map_ppn) : n_known;
    const int n_slog = ckpt_slog(n_map);
    if (n_slog < 0) return n_slog;
    ats_ckpt_t c;
    memset(&c, 0, sizeof c);
    c.version = n_slog ? 3u : 2u;               // 3: the S-Log device always, else while F is not empty (10.4)
    c.slog = sl_words;
    c.n_slog = (uint32_t)n_slog;
    c.cap_slog = SLOG_WORDS;
    c.seq_base = seq_base;
    c.scan_from = scan_from;
    c.ckpt_no = ckpt_no + 1u;
    c.n_map = n_map;
    c.n_bad = n_bad;
    c.plan_len = plan_len;
    c.plan = plan;
    c.bad = bad_list;
    c.cap_bad = NBLK;
    c.erase_cnt = erase_cnt;
    c.map_lpn = map_lpn;
    c.map_ppn = map_ppn;
    c.cap_map = NLBA;
    const uint32_t np = ats_ckpt_pages(&G, &c);
    if (np > PPB || np > MAX_CK_PAGES) return ATS_E_FULL;
    t1 = hal_cycles();
    S.ck_phase[2] += t1 - t2;
    // 4. the other checkpoint block: erase, program; a failure retries the whole checkpoint
    const uint32_t blk = (ck_blk == CK_BLK0) ? ck_blk1 : CK_BLK0;
    int ok = 0;
    for (int attempt = 0; attempt < 4 && !ok; attempt++) {
        if (nerase(0, blk) != ATS_OK) continue;
        ok = 1;
        for (uint32_t i = 0; i < np && ok; i++) {
            ats_ckpt_page(&G, &c, i, ck_pages[0]);
            volatile uint32_t *buf = hal_buf();
            for (uint32_t k = 0; k < PW; k++) buf[k] = ck_pages[0][k];
            fw_rsp_t r;
            hal_fw_nprog(0, blk, i, ATS_NO_LPN, seq_base, ATS_KIND_CKPT, &r);
            if (r.status != N_OK) ok = 0;
        }
    }
    if (!ok) return ATS_E_NAND;
    for (uint32_t d = 0; d < NDIE; d++) plan_ok[d] = plan_len[d];
    ck_blk = blk;
    ckpt_no = c.ckpt_no;
    ck_seq_base = seq_base;
    ck_scan_from = scan_from;
    // 5. blocks handed before and no longer needed are old data now: GC may take them
    for (uint32_t d = 0; d < NDIE; d++)
        for (uint32_t b = 0; b < BLOCKS; b++) {
            if (blk_state[bi(d, b)] != B_OPEN) continue;
            int needed = 0;
            for (uint32_t i = 0; i < hl_len[d]; i++) needed |= hl_blk[d][i] == b;
            if (!needed) blk_state[bi(d, b)] = B_USED;
        }
    census_dirty = 1;
    S.ck_phase[3] += hal_cycles() - t1;
    S.checkpoints++;
    S.ckpt_pages += np;
    S.ckpt_cycles += hal_cycles() - t0;
    return ATS_OK;
}

int ckpt_write(void) { return ckpt_write_map(1, 0); }
int ckpt_write_list(uint32_t n_map) { return ckpt_write_map(0, n_map); }
