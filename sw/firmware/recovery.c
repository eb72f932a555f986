// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: recovery (recovery.h; docs/persistence.md section 6).
#include "recovery.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"

// scratch, NOINIT (not cleared at start): l2p (recover sets every LPN; ckpt.c's ck_l2p), recs (the
// scan fills 0..n-1), rp_* (ats_slog_replay initialises what it reads)
static uint32_t *const l2p = ck_l2p;
static ats_rec_t recs[MAX_LOG] NOINIT;
static int32_t rp_next[MAX_LOG] NOINIT, rp_head[NTX + 1] NOINIT, rp_tail[NTX + 1] NOINIT;
static uint32_t rec_pages;

static const uint32_t *ck_page_fn(void *ctx, uint32_t idx) {
    (void)ctx;
    return idx < MAX_CK_PAGES ? ck_pages[idx] : 0;
}


// ---- the S-Log (README "S-Log"; persistence.md section 10.5). The log pages the scan kept (seq >=
// scan_from, well formed), sorted by LPGN; their data in a cache of SLOG_CACHE pages (filled by the
// scan, read again from the NAND on a miss). With no log page in the scan every step is a no-op.
static ats_lpage_t sl_pg[SLOG_PG] NOINIT;
static int16_t sl_slot[SLOG_PG] NOINIT;             // cache slot of sl_pg[i], -1: not held
static int16_t sl_owner[SLOG_CACHE] NOINIT;         // the page a slot holds, -1: none
static uint32_t sl_cache[SLOG_CACHE][PW] NOINIT;
static uint32_t sl_tmp[PW] NOINIT;
static uint32_t sl_lpgns[SLOG_PG] NOINIT, sl_start[SLOG_RECS] NOINIT, sl_b[SLOG_RECS] NOINIT, sl_fl[3u * ATS_SLOG_MAX_CF * SLOG_RECS] NOINIT;
static ats_slog_rec_t sl_rec[SLOG_RECS] NOINIT;     // the records that parse, by commit point
static uint32_t sl_npg, sl_nrec, sl_over, sl_clock, sl_rereads;

static const ats_lpage_t *sl_page_fn(void *ctx, uint32_t lpgn) {
    (void)ctx;
    uint32_t lo = 0, hi = sl_npg;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2u;
        if (sl_pg[mid].lpgn < lpgn) lo = mid + 1u;
        else hi = mid;
    }
    if (lo >= sl_npg || sl_pg[lo].lpgn != lpgn) return 0;
    ats_lpage_t *p = &sl_pg[lo];
    if (sl_slot[lo] < 0) {                          // a miss: the page again from the NAND
        const uint32_t k = sl_clock++ % SLOG_CACHE;
        if (sl_owner[k] >= 0) sl_slot[sl_owner[k]] = -1;
        sl_owner[k] = -1;
        fw_rsp_t r;
        nread(ats_ppn_die(&G, p->ppn), ats_ppn_block(&G, p->ppn), ats_ppn_page(&G, p->ppn), &r);
        rec_pages++;
        sl_rereads++;
        if (r.status != N_OK) return 0;             // read before, not now: missing
        volatile uint32_t *buf = hal_buf();
        for (uint32_t w = 0; w < PW; w++) sl_cache[k][w] = buf[w];
        sl_owner[k] = (int16_t)lo;
        sl_slot[lo] = (int16_t)k;
    }
    p->data = (const uint8_t *)sl_cache[sl_slot[lo]];
    return p;
}

// the page the scan kept at a PPN (recs[0..n): after ats_prefix every record is still there)
static uint32_t sl_nscan;
static const ats_rec_t *sl_at_fn(void *ctx, uint32_t ppn) {
    (void)ctx;
    for (uint32_t i = 0; i < sl_nscan; i++)
        if (recs[i].ppn == ppn) return &recs[i];
    return 0;
}

// the i-th record (stream order) whose commit point is seq: records packed into one log page share it
// (sl_rec sorted by commit_seq, ties in the order ats_slog_find met them)
static const ats_slog_rec_t *sl_commit_fn(void *ctx, uint64_t seq, uint32_t i) {
    (void)ctx;
    uint32_t lo = 0, hi = sl_nrec;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2u;
        if (sl_rec[mid].commit_seq < seq) lo = mid + 1u;
        else hi = mid;
    }
    lo += i;                                   // sl_rec: by commit point, ties in stream order
    return lo < sl_nrec && sl_rec[lo].commit_seq == seq ? &sl_rec[lo] : 0;
}

// a valid kind-1 SLOG page of the scan (data in hal_buf): the LPGN counter, and kept when seq >=
// scan_from (section 10.5 step 4: every valid log page counts for the counter)
static void sl_scan_page(const spare_t *sp, uint32_t ppn, uint64_t scan_from) {
    volatile uint32_t *buf = hal_buf();
    for (uint32_t w = 0; w < PW; w++) sl_tmp[w] = buf[w];
    uint16_t first, used;
    if (ats_slog_page((const uint8_t *)sl_tmp, ATS_PAGE_BYTES, sp->epoch, &first, &used) != ATS_OK) return;
    if (sp->epoch + 1u > slog_lpgn) slog_lpgn = sp->epoch + 1u;
    if (sp->seq < scan_from) return;
    if (sl_npg >= SLOG_PG) { sl_over++; return; }
    ats_lpage_t *p = &sl_pg[sl_npg];
    p->seq = sp->seq;
    p->ppn = ppn;
    p->lpgn = sp->epoch;
    p->first = first;
    p->used = used;
    p->data = 0;
    sl_slot[sl_npg] = -1;
    if (sl_npg < SLOG_CACHE) {                      // the first SLOG_CACHE pages stay in RAM
        for (uint32_t w = 0; w < PW; w++) sl_cache[sl_npg][w] = sl_tmp[w];
        sl_slot[sl_npg] = (int16_t)sl_npg;
        sl_owner[sl_npg] = (int16_t)sl_npg;
    }
    sl_npg++;
}

#if ATS_HW_SLOG
// a log page's LPGN for SLOAD: a kept page of this scan, else its spare (a page before scan_from that
// F names through the checkpoint): a readable kind-1 SLOG page, or the recovery fails
static int sl_lpgn_of(void *ctx, uint32_t ppn, uint32_t *lpgn) {
    (void)ctx;
    for (uint32_t i = 0; i < sl_npg; i++)
        if (sl_pg[i].ppn == ppn) { *lpgn = sl_pg[i].lpgn; return ATS_OK; }
    fw_rsp_t r;
    spare_t s;
    nread(ats_ppn_die(&G, ppn), ats_ppn_block(&G, ppn), ats_ppn_page(&G, ppn), &r);
    if (r.status != N_OK) return ATS_E_NAND;
    hal_spare(&s);
    if (s.kind != ATS_KIND_LOG || !(s.flags & ATS_F_SLOG)) return ATS_E_FORMAT;
    *lpgn = s.epoch;
    return ATS_OK;
}

static int sl_sload(void *ctx, uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t epoch, uint64_t seq) {
    (void)ctx;
    fw_rsp_t r;
    hal_fw_sload(rop, lpn, ppn, epoch, seq, &r);
    if (r.status == 0) return ATS_OK;
    hal_printf("recovery: sload rop %u lpn %u ppn %u lpgn %u: status %#x\n", rop, lpn, ppn, epoch, r.status);
    return r.status == 0x04u ? ATS_E_FULL : ATS_E_STATE;     // TX_FULL: the backend's index is full
}

static uint32_t sl_hw_pages[2u * SLOG_PG] NOINIT;     // the live log pages (<= SLOG_PG: else ATS_E_FULL)

static int sl_hw_load(void) {
    uint32_t npg = 0;
    const int st = ats_slog_hw_load(&SL, slog_lpgn, sl_lpgn_of, 0, sl_sload, 0, ATS_HW_SLOG_PPNS, sl_hw_pages,
                                    SLOG_PG, &npg);
    if (st < 0) {
        hal_printf("recovery: slog: hardware load failed: %d\n", st);
        return st;
    }
    if (SL.n) hal_printf("recovery: slog: loaded lpgn %u, %u log pages, %u LPNs\n", slog_lpgn, npg, SL.n);
    // (no merge policy yet, architecture 11.6: live pages SLOG_PPNS LPGNs apart share a table entry)
    if (st > 0) hal_printf("recovery: slog: %d older log pages share a table entry with a newer one: "
                           "their fragments read MEDIA_ERROR\n", st);
    return ATS_OK;
}
#endif

// the kept pages by (LPGN, seq), an LPGN met again dropped (the lower seq stays: section 10.1), then
// the records (ats_slog_find / ats_slog_parse) by commit point and their completeness flags
static int sl_records(uint32_t *nfl, uint32_t *nbad, uint32_t *npart) {
    for (uint32_t i = 1; i < sl_npg; i++) {        // insertion sort, the cache slots moving along
        const ats_lpage_t x = sl_pg[i];
        const int16_t xs = sl_slot[i];
        uint32_t j = i;
        for (; j > 0 && (sl_pg[j - 1u].lpgn > x.lpgn || (sl_pg[j - 1u].lpgn == x.lpgn && sl_pg[j - 1u].seq > x.seq)); j--) {
            sl_pg[j] = sl_pg[j - 1u];
            sl_slot[j] = sl_slot[j - 1u];
        }
        sl_pg[j] = x;
        sl_slot[j] = xs;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < sl_npg; i++) {
        if (k && sl_pg[k - 1u].lpgn == sl_pg[i].lpgn) {
            if (sl_slot[i] >= 0) sl_owner[sl_slot[i]] = -1;
            continue;
        }
        sl_pg[k] = sl_pg[i];
        sl_slot[k] = sl_slot[i];
        k++;
    }
    sl_npg = k;
    for (uint32_t i = 0; i < SLOG_CACHE; i++) sl_owner[i] = -1;
    for (uint32_t i = 0; i < sl_npg; i++) {
        if (sl_slot[i] >= 0) sl_owner[sl_slot[i]] = (int16_t)i;
        sl_lpgns[i] = sl_pg[i].lpgn;
    }
    const int nf = ats_slog_find(ATS_PAGE_BYTES, sl_page_fn, 0, sl_lpgns, sl_npg, sl_start, sl_b, SLOG_RECS, nbad, npart);
    if (nf < 0) return nf;
    uint32_t n = 0;
    *nfl = 0;
    for (uint32_t i = 0; i < (uint32_t)nf; i++) {
        ats_slog_rec_t r;
        if (ats_slog_parse(ATS_PAGE_BYTES, sl_page_fn, 0, sl_start[i], sl_b[i], &r) != ATS_OK) continue;
        for (uint32_t f = 0; f < r.ncf; f++) {
            sl_fl[3u * *nfl] = r.cf_txid[f];
            sl_fl[3u * *nfl + 1u] = r.cf_reclen[f];
            sl_fl[3u * *nfl + 2u] = r.cf_lpgn[f];
            (*nfl)++;
        }
        uint32_t j = n++;                          // by commit point
        for (; j > 0 && sl_rec[j - 1u].commit_seq > r.commit_seq; j--) sl_rec[j] = sl_rec[j - 1u];
        sl_rec[j] = r;
    }
    sl_nrec = n;
    return ATS_OK;
}

// section 6 "Old pages": page p of block b of die d is old when it reads valid, kind 0 or 1, with a
// seq below the checkpoint's seq_base (each probe is a page read of step 2)
typedef struct { uint32_t d, b, n_old; uint64_t seq_base; } old_ctx_t;
static int page_old(void *ctx, uint32_t p) {
    old_ctx_t *x = (old_ctx_t *)ctx;
    fw_rsp_t r;
    nread(x->d, x->b, p, &r);
    rec_pages++;
    if (r.status != N_OK) return 0;
    spare_t s;
    hal_spare(&s);
    const int old = (s.kind == ATS_KIND_DATA || s.kind == ATS_KIND_LOG) && s.seq < x->seq_base;
    x->n_old += (uint32_t)old;
    return old;
}

// persistence.md section 6 step 1. A checkpoint block holds at most one checkpoint, from page 0
// (the firmware erases the block before every attempt; version 1 is one page): page 0 of each
// block says its seq, number and page count, and only the newest candidate's other pages are read
// (the older one's only if the newest is incomplete or does not parse). Same result as reading
// both blocks whole (the oracle), at 2 + n page reads instead of 2n.
static uint32_t ck_head_pg[2][PW] NOINIT;

// page 0 of block blk (slot h of ck_head_pg): 1 when it starts a checkpoint; *bad: it carries the
// factory bad mark
static int ck_head(uint32_t blk, uint32_t h, uint64_t *seq, uint32_t *no, uint32_t *np, int *bad) {
    fw_rsp_t r;
    nread(0, blk, 0, &r);
    rec_pages++;
    *bad = r.mapped != 0;
    if (r.status != N_OK || *bad) return 0;
    spare_t s;
    hal_spare(&s);
    volatile uint32_t *buf = hal_buf();
    if (s.kind != ATS_KIND_CKPT || buf[0] != ATS_CKPT_MAGIC) return 0;
    if (buf[1] == 1u) {
        *np = 1u;
        *no = 0u;
    } else if ((buf[1] == 2u || buf[1] == 3u) && buf[2] == 0u && buf[3] >= 1u && buf[3] <= MAX_CK_PAGES && buf[3] <= PPB) {
        *np = buf[3];
        *no = buf[ATS_CKPT_HDR_WORDS + 6u];      // the stream's ckpt_no (section 5)
    } else {
        return 0;
    }
    *seq = s.seq;
    for (uint32_t w = 0; w < PW; w++) ck_head_pg[h][w] = buf[w];
    return 1;
}

// the other pages of the checkpoint whose page 0 is in slot h; parses it into c
static int ck_load(uint32_t blk, uint32_t h, uint64_t seq, uint32_t np, ats_ckpt_t *c) {
    for (uint32_t w = 0; w < PW; w++) ck_pages[0][w] = ck_head_pg[h][w];
    for (uint32_t i = 1; i < np; i++) {
        fw_rsp_t r;
        nread(0, blk, i, &r);
        rec_pages++;
        if (r.status != N_OK) return ATS_E_FORMAT;           // torn, erased or unreadable
        spare_t s;
        hal_spare(&s);
        volatile uint32_t *buf = hal_buf();
        if (s.kind != ATS_KIND_CKPT || s.seq != seq || buf[0] != ATS_CKPT_MAGIC || buf[1] != ck_head_pg[h][1] || buf[2] != i ||
            buf[3] != np)
            return ATS_E_FORMAT;
        for (uint32_t w = 0; w < PW; w++) ck_pages[i][w] = buf[w];
    }
    ats_ckpt_t t = *c;
    t.seq_base = seq;
    const int st = ats_ckpt_parse(&G, &t, ck_page_fn, 0);
    if (st != ATS_OK) return st;
    // version 3: a section that ats_slog_ckpt_get refuses makes the checkpoint one that does not
    // parse (persistence.md section 10.4); read again into l2p by recover()
    uint32_t lpgn;
    SL.n = 0;
    if (t.version == 3u && ats_slog_ckpt_get(&SL, l2p, NLBA, sl_words, t.n_slog, &lpgn) < 0) return ATS_E_FORMAT;
    *c = t;
    return ATS_OK;
}

// a version-1 checkpoint (the core tests' offline format, persistence.md section 6 step 1) in a
// checkpoint block: its device has no second checkpoint block (its plans may hold die 0 block 1), so
// the checkpoints after a recovery would have nowhere safe to go: refused before anything is written
static int ck_v1_refused(uint32_t blk) {
    hal_printf("recovery: block %u holds a version-1 checkpoint (an offline format's): refused, nothing written\n", blk);
    return ATS_E_FORMAT;
}

static int find_checkpoint(ats_ckpt_t *c, uint32_t *blk_out) {
    uint64_t seq[2] = {0, 0};
    uint32_t no[2] = {0, 0}, np[2] = {0, 0};
    int ok[2], bad = 0;
    ok[0] = ck_head(CK_BLK0, 0, &seq[0], &no[0], &np[0], &bad);
    if (ok[0] && ck_head_pg[0][1] == 1u) return ck_v1_refused(CK_BLK0);
    // the second checkpoint block: the first one after block 0 without the factory bad mark
    ok[1] = 0;
    ck_blk1 = 1u;
    for (bad = 1; bad && ck_blk1 < BLOCKS; ck_blk1 += (uint32_t)bad)
        ok[1] = ck_head(ck_blk1, 1, &seq[1], &no[1], &np[1], &bad);
    if (ck_blk1 >= BLOCKS) ck_blk1 = 1u;       // no good block after block 0: no second checkpoint block
    if (ok[1] && ck_head_pg[1][1] == 1u) return ck_v1_refused(ck_blk1);
    // the newest first (seq, then number); the other if the newest is incomplete
    const uint32_t first = (ok[1] && (!ok[0] || seq[1] > seq[0] || (seq[1] == seq[0] && no[1] >= no[0]))) ? 1u : 0u;
    for (uint32_t k = 0; k < 2; k++) {
        const uint32_t h = k ? 1u - first : first;
        if (!ok[h]) continue;
        const uint32_t blk = h ? ck_blk1 : CK_BLK0;
        if (ck_load(blk, h, seq[h], np[h], c) == ATS_OK) {
            *blk_out = blk;
            return ATS_OK;
        }
    }
    return ATS_E_NOCKPT;                       // no complete checkpoint (as before the first one)
}

int recover(void) {
    census_dirty = wl_dirty = 1;
    const uint64_t t0 = hal_cycles();
    rec_pages = 0;
    ats_ckpt_t c;
    memset(&c, 0, sizeof c);
    static uint16_t ck_plan_len[NDIE];
    c.plan_len = ck_plan_len;
    c.plan = plan;
    c.bad = bad_list;
    c.cap_bad = NBLK;
    c.erase_cnt = erase_cnt;
    c.map_lpn = map_lpn;
    c.map_ppn = map_ppn;
    c.cap_map = NLBA;
    c.slog = sl_words;
    c.cap_slog = SLOG_WORDS;
    uint32_t blk;
    int st = find_checkpoint(&c, &blk);
    if (st != ATS_OK) return st;
    ck_blk = blk;
    ckpt_no = c.ckpt_no;
    ck_seq_base = c.seq_base;
    ck_scan_from = c.scan_from;
    n_bad = c.n_bad;
    for (uint32_t i = 0; i < NLBA; i++) l2p[i] = ATS_UNMAPPED;
    for (uint32_t i = 0; i < c.n_map; i++)
        if (map_lpn[i] < NLBA) l2p[map_lpn[i]] = map_ppn[i];
    // section 10.5 step 1: F and the bases from the S-Log section (version 3; else F = [], LPGN 0)
    SL.n = 0;
    slog_lpgn = 0;
    if (c.version == 3u && ats_slog_ckpt_get(&SL, l2p, NLBA, sl_words, c.n_slog, &slog_lpgn) < 0) return ATS_E_FORMAT;
    sl_npg = sl_nrec = sl_over = sl_rereads = 0;
    for (uint32_t i = 0; i < SLOG_CACHE; i++) sl_owner[i] = -1;
    // block states: checkpoint blocks, bad blocks, plan blocks; everything else holds old pages
    for (uint32_t i = 0; i < NBLK; i++) { blk_state[i] = B_USED; blk_retire[i] = 0; }
    blk_state[bi(0, CK_BLK0)] = blk_state[bi(0, ck_blk1)] = B_CKPT;
    for (uint32_t i = 0; i < n_bad; i++) {
        const uint32_t d = bad_list[i] >> 16, b = bad_list[i] & 0xFFFFu;
        if (d < NDIE && b < BLOCKS) blk_state[bi(d, b)] = B_BAD;
    }
    // the factory bad blocks among the table's (IDENTIFY word 14, GET_LOG 15): format gave each the
    // erase count EC_FACTORY, which every checkpoint carries (persistence.md section 5); no NAND read
    S.factory_bad = 0;
    for (uint32_t i = 0; i < n_bad; i++) {
        const uint32_t d = bad_list[i] >> 16, b = bad_list[i] & 0xFFFFu;
        if (d < NDIE && b < BLOCKS) S.factory_bad += erase_cnt[bi(d, b)] == EC_FACTORY;
    }
    // 2. scan the plan of each die: pages 0.. until the first erased page; a block whose page 0
    //    is erased was never opened: it and the rest of the plan stay erased (free)
    uint32_t n = 0, overflow = 0;
    uint64_t max_seq = c.seq_base ? c.seq_base - 1u : 0u;
    int any_seq = 0;
    // "Old pages" (section 6): with no transaction open at the checkpoint (scan_from = seq_base), a
    // block whose page 0 is older than seq_base is read from the page ats_scan_resume finds, not from
    // page 1. With the S-Log only from a version-3 checkpoint (its slog_lpgn stands for the LPGNs of
    // the log pages not read; a version-2 one leaves the LPGN counter to the scan, section 10.5 step 4)
#if defined(ATS_SCAN_FROM_0)
    const int skip_old = 0;                     // every block from page 0 (bench/recovery: the rule before)
#elif ATS_HW_SLOG
    const int skip_old = c.scan_from == c.seq_base && c.seq_base > 0u && c.version == 3u;
#else
    const int skip_old = c.scan_from == c.seq_base && c.seq_base > 0u;
#endif
    const uint32_t pages0 = rec_pages;
    uint32_t searched = 0, unread = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        plan_len[d] = ck_plan_len[d];
        int open = 1;
        for (uint32_t i = 0; i < plan_len[d]; i++) {
            const uint32_t b = plan[bi(d, i)];
            if (!open) { blk_state[bi(d, b)] = B_FREE; continue; }
            for (uint32_t p = 0; p < PPB; p++) {
                fw_rsp_t r;
                nread(d, b, p, &r);
                rec_pages++;
                if (r.status == N_ERASED) {
                    if (p == 0) { open = 0; blk_state[bi(d, b)] = B_FREE; }
                    break;
                }
                if (r.status != N_OK) continue;        // torn or failed: skipped
                spare_t s;
                hal_spare(&s);
                if ((s.kind != ATS_KIND_DATA && s.kind != ATS_KIND_LOG)) continue;
                if (p == 0u && skip_old && s.seq < c.seq_base) {
                    old_ctx_t x = {d, b, 0u, c.seq_base};
                    const uint32_t from = ats_scan_resume(PPB, page_old, &x, 0);
                    searched++;
                    unread += from - 1u - x.n_old;  // pages 1..from-1 not probed (the probes there were old)
                    p = from - 1u;                  // the loop's p++: the scan goes on at page `from`
                    continue;
                }
                if (!any_seq || s.seq > max_seq) max_seq = s.seq;
                any_seq = 1;
                if (s.kind == ATS_KIND_LOG && (s.flags & ATS_F_SLOG)) sl_scan_page(&s, ats_ppn(&G, d, b, p), c.scan_from);
                if (s.seq < c.scan_from) continue;
                // at most MAX_LOG records: the lowest seqs (ats_log_add), so that the durable prefix
                // is cut at a seq, never holed by a record dropped in scan order
                ats_rec_t x;
                x.seq = s.seq;
                x.ppn = ats_ppn(&G, d, b, p);
                x.lpn = s.lpn;
                x.epoch = s.epoch;
                x.txid = (uint8_t)s.txid;
                x.kind = (uint8_t)s.kind;
                x.flags = (uint8_t)s.flags;
                x.pad = 0;
                n = ats_log_add(recs, n, MAX_LOG, &x, &overflow);
            }
        }
    }
    hal_printf("recovery: scan: %u pages read, %u blocks searched past their old pages, %u pages not read\n",
               rec_pages - pages0, searched, unread);
    if (overflow) hal_printf("recovery: %u records beyond MAX_LOG dropped (the highest seqs)\n", overflow);
    // 3. durable prefix, 4. replay
    const uint32_t np = ats_prefix(recs, n, c.scan_from);
    // the S-Log's records (none without log pages)
    uint32_t nfl = 0, sl_bad = 0, sl_part = 0;
    // more log pages than the table keeps: a record could miss a page it has and be taken as partial,
    // a committed transaction dropped; the recovery fails instead (as past SLOG_RECS records)
    if (sl_over) {
        hal_printf("recovery: slog: %u log pages over SLOG_PG %u\n", sl_over, SLOG_PG);
        return ATS_E_FULL;
    }
    if (sl_npg && (st = sl_records(&nfl, &sl_bad, &sl_part)) != ATS_OK) return st;
    ats_replay_t rp;
    memset(&rp, 0, sizeof rp);
    rp.l2p = l2p;
    rp.nlba = NLBA;
    rp.ntx = NTX;
    rp.next = rp_next;
    rp.head = rp_head;
    rp.tail = rp_tail;
    ats_slog_replay_t srp;
    memset(&srp, 0, sizeof srp);
    srp.tab = &SL;
    srp.commit = sl_commit_fn;
    srp.pg = sl_page_fn;
    srp.page_bytes = ATS_PAGE_BYTES;
    // without a log page and with F = [] the S-Log part changes nothing (a MERGE page is then a RELOC
    // page: F stays empty): the replay without it, as before (B5's recovery cycles)
    st = ats_slog_replay(&rp, (sl_npg || SL.n) ? &srp : 0, recs, np, c.seq_base);
    if (st != ATS_OK) return st;
    // section 10.5 step 3: the records after the gap in commit-point order, each applied when complete
    const uint64_t prefix_end = np ? recs[np - 1u].seq + 1u : c.scan_from;
    uint32_t sl_after = 0, sl_flagged = 0;
    sl_nscan = n;
    for (uint32_t i = 0; i < sl_nrec; i++) {
        const ats_slog_rec_t *r = &sl_rec[i];
        if (r->commit_seq < prefix_end || r->txid > NTX) continue;
        int skipped = 0;
        const int ok = ats_slog_complete(&SL, l2p, NLBA, ATS_PAGE_BYTES, sl_page_fn, 0, r, sl_at_fn, 0, sl_fl, nfl, 1,
                                         &skipped);
        if (ok < 0) return ok;
        if (!ok) continue;
        if ((st = ats_slog_apply(&SL, l2p, NLBA, ATS_PAGE_BYTES, sl_page_fn, 0, r, 1)) != ATS_OK) return st;
        sl_after++;
        sl_flagged += (uint32_t)skipped;
    }
    if (sl_npg || sl_over || SL.n)
        hal_printf("recovery: slog: %u log pages (%u over SLOG_PG, %u read again), %u records (%u bad, %u partial), "
                   "commits %u, after the gap %u (%u by flag), merges %u/%u stale, F %u LPNs, next lpgn %u\n",
                   sl_npg, sl_over, sl_rereads, sl_nrec, sl_bad, sl_part, srp.slog_commits, sl_after, sl_flagged,
                   srp.merges, srp.merges_stale, SL.n, slog_lpgn);
    // 5. restart: the mapping into the remap engine, valid-count bases, the next seq. The mapping
    //    also goes into map_lpn / map_ppn (the checkpoint's, no longer needed) for step 6's checkpoint
    memset(vc_base, 0, sizeof vc_base);
    uint32_t n_map = 0;
    for (uint32_t lpn = 0; lpn < NLBA; lpn++) {
        const uint32_t ppn = l2p[lpn];
        if (ppn == ATS_UNMAPPED) continue;
        map_lpn[n_map] = lpn;
        map_ppn[n_map] = ppn;
        n_map++;
        remap(R_MAP_WRITE, lpn, ppn, 0);
        const uint32_t d = ats_ppn_die(&G, ppn), b = ats_ppn_block(&G, ppn);
        if (d < NDIE && b < BLOCKS) vc_base[bi(d, b)]++;
    }
    const uint64_t next = any_seq ? max_seq + 1u : c.seq_base;
    fw_rsp_t r;
    hal_fw_seqset(next > c.seq_base ? next : c.seq_base, &r);
    if (r.status != 0) return ATS_E_STATE;
#if ATS_HW_SLOG
    // section 10.5 step 4 in the hardware (SLOAD): the LPGN counter, the live log pages, F
    if ((st = sl_hw_load()) != ATS_OK) return st;
#endif
    for (uint32_t d = 0; d < NDIE; d++) { plan_len[d] = plan_pos[d] = plan_ok[d] = hl_len[d] = 0; }
    supply_ok = 1;
    S.recoveries++;
    S.recovery_pages = rec_pages;
    S.recovery_records = n;
    S.recovery_prefix = np;
    S.recovery_applied = rp.applied;
    S.recovery_aborted_tx = rp.dropped_open;
    S.recovery_ignored = rp.ignored;
    if (rp.ignored) hal_printf("recovery: %u records with a txid above %u ignored\n", rp.ignored, NTX);
    hal_printf("recovery: checkpoint %u (block %u, seq_base %llu, scan_from %llu, %u mappings); %u records, "
               "prefix %u; applied %u, trims %u, relocs %u/%u stale, commits %u, aborts %u, open tx dropped %u; "
               "next seq %llu\n",
               c.ckpt_no, ck_blk, (unsigned long long)c.seq_base, (unsigned long long)c.scan_from, c.n_map, n, np,
               rp.applied, rp.trims, rp.relocs_applied, rp.relocs_stale, rp.commits, rp.aborts, rp.dropped_open,
               (unsigned long long)next);
    // 6. a new checkpoint (the recovered mapping, a plan of erased blocks) before any host write
    st = ckpt_write_list(n_map);
    S.recovery_cycles = hal_cycles() - t0;
    hal_printf("recovery: %u pages read, %llu cycles\n", rec_pages, (unsigned long long)S.recovery_cycles);
    return st;
}
