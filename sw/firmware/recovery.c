// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: recovery (recovery.h; docs/persistence.md section 6).
#include "recovery.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"

// scratch, NOINIT (not cleared at start): l2p (recover sets every LPN), recs (the scan fills 0..n-1),
// rp_* (ats_replay initialises what it reads)
static uint32_t l2p[NLBA] NOINIT;
static ats_rec_t recs[MAX_LOG] NOINIT;
static int32_t rp_next[MAX_LOG] NOINIT, rp_head[NTX + 1] NOINIT, rp_tail[NTX + 1] NOINIT;
static uint32_t rec_pages;

static const uint32_t *ck_page_fn(void *ctx, uint32_t idx) {
    (void)ctx;
    return idx < MAX_CK_PAGES ? ck_pages[idx] : 0;
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
    } else if (buf[1] == 2u && buf[2] == 0u && buf[3] >= 1u && buf[3] <= MAX_CK_PAGES && buf[3] <= PPB) {
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
        if (s.kind != ATS_KIND_CKPT || s.seq != seq || buf[0] != ATS_CKPT_MAGIC || buf[1] != 2u || buf[2] != i ||
            buf[3] != np)
            return ATS_E_FORMAT;
        for (uint32_t w = 0; w < PW; w++) ck_pages[i][w] = buf[w];
    }
    ats_ckpt_t t = *c;
    t.seq_base = seq;
    const int st = ats_ckpt_parse(&G, &t, ck_page_fn, 0);
    if (st != ATS_OK) return st;
    *c = t;
    return ATS_OK;
}

static int find_checkpoint(ats_ckpt_t *c, uint32_t *blk_out) {
    uint64_t seq[2] = {0, 0};
    uint32_t no[2] = {0, 0}, np[2] = {0, 0};
    int ok[2], bad = 0;
    ok[0] = ck_head(CK_BLK0, 0, &seq[0], &no[0], &np[0], &bad);
    // block 1 is not read when block 0 holds a version-1 checkpoint (the offline format's); the
    // second checkpoint block is the first one after block 0 without the factory bad mark
    ok[1] = 0;
    ck_blk1 = 1u;
    if (!(ok[0] && ck_head_pg[0][1] == 1u))
        for (bad = 1; bad && ck_blk1 < BLOCKS; ck_blk1 += (uint32_t)bad)
            ok[1] = ck_head(ck_blk1, 1, &seq[1], &no[1], &np[1], &bad);
    if (ck_blk1 >= BLOCKS) ck_blk1 = 1u;       // no good block after block 0: no second checkpoint block
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
                if (!any_seq || s.seq > max_seq) max_seq = s.seq;
                any_seq = 1;
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
    if (overflow) hal_printf("recovery: %u records beyond MAX_LOG dropped (the highest seqs)\n", overflow);
    // 3. durable prefix, 4. replay
    const uint32_t np = ats_prefix(recs, n, c.scan_from);
    ats_replay_t rp;
    memset(&rp, 0, sizeof rp);
    rp.l2p = l2p;
    rp.nlba = NLBA;
    rp.ntx = NTX;
    rp.next = rp_next;
    rp.head = rp_head;
    rp.tail = rp_tail;
    st = ats_replay(&rp, recs, np, c.seq_base);
    if (st != ATS_OK) return st;
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
