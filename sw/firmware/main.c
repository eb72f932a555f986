// SPDX-License-Identifier: Apache-2.0
// atomssd firmware (VexRiscv): boot, format, recovery, free-block supply, checkpoints, garbage
// collection, wear levelling, bad blocks, statistics and the UART console. Theory of operation,
// block states and the checkpoint protocol: sw/firmware/README.md; on-flash format and recovery:
// docs/persistence.md. Every function returns an ats_status_t (0 OK) unless it returns a value.
#include <string.h>

#include "ftl/ftl.h"
#include "hal.h"

// ---- sizes (the geometry comes from the generated soc.h)
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
#define EC_FACTORY 0xFFFFu       // erase count of a factory bad block (never erased; in every checkpoint)

enum { B_FREE = 0, B_PLAN, B_OPEN, B_USED, B_BAD, B_CKPT };   // block states (README "Block states")

// ---- state (main RAM)
static ats_geo_t G;
static uint8_t blk_state[NBLK];
static uint8_t blk_retire[NBLK];       // grown bad: relocate its pages, never erase or reuse it
static uint16_t erase_cnt[NBLK];
static uint16_t vc_base[NBLK];         // valid pages restored by recovery (hardware counts are deltas)
static uint32_t blk_age[NBLK];         // checkpoint number when the block was handed out
// the current checkpoint's plan: per die, blocks in hand-out order; plan_pos = next to hand out
static uint16_t plan[NBLK];
static uint16_t plan_len[NDIE], plan_pos[NDIE];
// blocks of the plan that the durable checkpoint's plan also holds: supply() hands out no further.
// While a checkpoint is written, the blocks it adds to the plan are not durable yet (a cut would
// recover from the previous checkpoint, whose plan lacks them, and miss their pages)
static uint16_t plan_ok[NDIE];
// blocks handed out per die since they became needed, with the next_seq at hand-out
static uint16_t hl_blk[NDIE][BLOCKS];
static uint64_t hl_seq[NDIE][BLOCKS];
static uint16_t hl_len[NDIE];
static uint32_t ck_blk = CK_BLK0;      // block holding the current checkpoint
// the second checkpoint block: the first block of die 0 after block 0 without the factory bad mark
// (block 1 unless it is factory bad; persistence.md section 5), found by format and by recovery
static uint32_t ck_blk1 = 1u;
static int boot_st;                    // the boot's status (0: ready); `status` shows a failed boot
static uint32_t ckpt_no;
static uint64_t ck_seq_base, ck_scan_from;
static uint32_t bad_list[NBLK];
static uint32_t n_bad;
static int hold_wb;                    // write-backs held while blocks run short (GC_URGENT)
static uint8_t gc_on[NDIE];            // GC hysteresis per die (GC_LOW, GC_HIGH)
static int supply_ok;                  // the plan is this boot's own (recovery has finished reading the old one)
// per-die census of the block states for the main loop (erased blocks, a grown bad block still
// holding pages), recounted only after a change: housekeeping stays O(dies), not O(blocks)
static int census_dirty = 1;           // a block state / retire mark changed since the last count
static int wl_dirty = 1;               // an erase count or a bad block changed since wl_step looked
static uint16_t n_free[NDIE];
static uint8_t n_retired[NDIE];
static uint8_t gc_none[NDIE];          // the last GC look at the die found no block worth collecting
static int no_space;                   // write-backs held and no block can be freed (README "No space")
// recovery / checkpoint scratch. NOINIT: not cleared at start (linker.ld .noinit), because every
// use writes them first: l2p (recover sets every LPN), recs (the scan fills 0..n-1), rp_* (ats_replay
// initialises what it reads), map_* (filled up to n_map before a checkpoint writes or parses them)
#define NOINIT __attribute__((section(".noinit")))
static uint32_t l2p[NLBA] NOINIT;
static ats_rec_t recs[MAX_LOG] NOINIT;
static int32_t rp_next[MAX_LOG] NOINIT, rp_head[NTX + 1] NOINIT, rp_tail[NTX + 1] NOINIT;
static uint32_t ck_pages[MAX_CK_PAGES][PW] NOINIT;
static uint32_t map_lpn[NLBA] NOINIT, map_ppn[NLBA] NOINIT;

// ---- statistics (console `stats`, GET_LOG later)
static struct {
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
} S;


static inline uint32_t bi(uint32_t d, uint32_t b) { return d * BLOCKS + b; }

static uint32_t vc_hw(uint32_t d, uint32_t b) {
    ats_vc_addr_write(bi(d, b));
    (void)ats_vc_addr_read();
    return ats_vc_data_read();
}
static uint32_t valid_pages(uint32_t d, uint32_t b) { return (vc_base[bi(d, b)] + vc_hw(d, b)) & 511u; }

// ---- NAND helpers
static int nread(uint32_t d, uint32_t b, uint32_t p, fw_rsp_t *r) {
    S.nreads++;
    return hal_fw_nread(d, b, p, r);
}
static int nerase(uint32_t d, uint32_t b) {
    fw_rsp_t r;
    hal_fw_nerase(d, b, &r);
    if (r.status != N_OK) return ATS_E_NAND;
    erase_cnt[bi(d, b)]++;
    wl_dirty = 1;
    return ATS_OK;
}
static uint32_t remap(uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t *mapped) {
    fw_rsp_t r;
    hal_fw_remap(rop, lpn, ppn, &r);
    if (mapped) *mapped = r.mapped;
    return r.status == 0 ? r.ppn : 0xFFFFFFFFu;
}

static void mark_bad(uint32_t d, uint32_t b) {
    if (blk_state[bi(d, b)] == B_BAD) return;
    census_dirty = wl_dirty = 1;
    blk_state[bi(d, b)] = B_BAD;
    if (n_bad < NBLK) bad_list[n_bad++] = (d << 16) | b;
}

// ---- free-block supply: hand each die asking for a block the next block of its plan
static void supply(void) {
    uint32_t need = ats_blk_need_read();
    for (uint32_t d = 0; need && d < NDIE; d++) {
        if (!((need >> d) & 1u)) continue;
        if (plan_pos[d] >= plan_ok[d]) {
            if (plan_pos[d] >= plan_len[d]) S.starved++;   // (not: a checkpoint is making more durable)
            continue;
        }
        while (ST_BIT(FREE_PENDING)) {
        }
        const uint32_t b = plan[bi(d, plan_pos[d])];
        // the next_seq before the block is handed: its pages carry this seq at least - WIN
        hl_blk[d][hl_len[d]] = (uint16_t)b;
        hl_seq[d][hl_len[d]] = hal_next_seq();
        hl_len[d]++;
        plan_pos[d]++;
        blk_state[bi(d, b)] = B_OPEN;
        blk_age[bi(d, b)] = ckpt_no;
        ats_free_write(((d / ATS_WAYS) << CSR_ATS_FREE_CHAN_OFFSET) | ((d % ATS_WAYS) << CSR_ATS_FREE_WAY_OFFSET) |
                       (b << CSR_ATS_FREE_BLOCK_OFFSET));
        need = ats_blk_need_read();
    }
}

// grown bad blocks from the backend: the block was closed early; its pages stay until GC moves them
static void take_bad(void) {
    while (ST_BIT(BAD_VALID)) {
        const uint32_t v = ats_bad_read();
        const uint32_t d = ((v >> CSR_ATS_BAD_CHAN_OFFSET) & 7u) * ATS_WAYS + ((v >> CSR_ATS_BAD_WAY_OFFSET) & 3u);
        const uint32_t b = (v >> CSR_ATS_BAD_BLOCK_OFFSET) & 0xFFFu;
        ats_bad_pop_write(1);
        if (d < NDIE && b < BLOCKS) {
            blk_retire[bi(d, b)] = 1;
            census_dirty = 1;
            S.grown_bad++;
        }
    }
}

// ---- checkpoint (README "Checkpoints"): hold, drain, note seq and open transactions, release,
// read the mapping, write the pages to the other checkpoint block
static void census(void) {
    if (!census_dirty) return;
    census_dirty = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        uint32_t f = 0, r = 0;
        for (uint32_t b = 0; b < BLOCKS; b++) {
            f += blk_state[bi(d, b)] == B_FREE;
            r += blk_retire[bi(d, b)] && blk_state[bi(d, b)] == B_USED;
        }
        n_free[d] = (uint16_t)f;
        n_retired[d] = (uint8_t)(r ? 1u : 0u);
    }
}

// erased blocks the backend can still open without a new checkpoint: the durable plans' blocks not
// handed yet, and every die's next-block register that holds a block (BLK_NEED low). A lower bound
// of the room for pages (the open blocks' last pages are not counted)
static uint32_t room(void) {
    const uint32_t need = ats_blk_need_read();
    uint32_t r = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        r += (uint32_t)(plan_ok[d] - plan_pos[d]);
        r += ((need >> d) & 1u) ? 0u : 1u;
    }
    return r;
}

// planned (not yet handed) + erased blocks of die d
static uint32_t free_count(uint32_t d) {
    census();
    return (uint32_t)(plan_len[d] - plan_pos[d]) + n_free[d];
}

static const uint32_t *ck_page_fn(void *ctx, uint32_t idx) {
    (void)ctx;
    return idx < MAX_CK_PAGES ? ck_pages[idx] : 0;
}

// l2p_known: the mapping is l2p[] (right after recovery: no LOOKUP needed)
static int ckpt_write_map(int l2p_known) {
    const uint64_t t0 = hal_cycles();
    census_dirty = 1;                                  // plan and block states change below
    // 1. drain: every accepted request completed, none accepted meanwhile
    hal_ctrl(hal_ctrl_host_en(), 1);
    while (hal_cpl_seq() != hal_next_seq()) {
        supply();                                      // a page waiting for a block must get one
        take_bad();
        if (hal_cycles() - t0 > 5000000u) {
            hal_ctrl(hal_ctrl_host_en(), (uint32_t)hold_wb);
            return ATS_E_STATE;
        }
    }
    const uint64_t seq_base = hal_next_seq();
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
    hal_ctrl(hal_ctrl_host_en(), (uint32_t)hold_wb);
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
    uint32_t n_map = 0;
    for (uint32_t lpn = 0; lpn < NLBA; lpn++) {
        uint32_t mapped = 0, ppn = l2p_known ? l2p[lpn] : 0;
        if (l2p_known) mapped = ppn != ATS_UNMAPPED;
        else ppn = remap(R_LOOKUP, lpn, 0, &mapped);
        if (mapped && ppn != 0xFFFFFFFFu) {
            map_lpn[n_map] = lpn;
            map_ppn[n_map] = ppn;
            n_map++;
        }
    }
    ats_ckpt_t c;
    memset(&c, 0, sizeof c);
    c.version = 2;
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

static int ckpt_write(void) { return ckpt_write_map(0); }

// ---- garbage collection of one block (README "GC"): move its valid pages through RELOC, erase it
static ats_gc_policy_t gc_policy = ATS_GC_COST_BENEFIT;

static int gc_block(uint32_t d, uint32_t b) {
    census_dirty = 1;
    // the valid count says how many pages still map here: the scan stops once it has met them all
    // (pages become invalid, never valid, while GC runs: no host write maps into an old block)
    const uint32_t v0 = valid_pages(d, b);
    const int empty = v0 == 0 && !blk_retire[bi(d, b)];   // nothing to move: erase only
    // a block is started only when the backend has room for all its valid pages (and GC_SLACK pages
    // more; a block is opened only when the one before is full, so room() blocks hold room() * PPB
    // pages): a block left half-copied spends room and frees nothing (issue 34: with the room used
    // up that way and no erased block left, GC copied nothing and the host waited for good)
    if (v0 != 0 && room() * PPB < v0 + GC_SLACK) return ATS_E_NOSPACE;
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
        // only a checkpoint can plan (the firmware would wait inside the RELOC: no checkpoint)
        if (room() == 0) return ATS_E_NOSPACE;
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
static int gc_step(uint32_t d, int tight) {
    static uint32_t cand[BLOCKS], val[BLOCKS], age[BLOCKS];
    uint32_t n = 0;
    for (uint32_t b = 0; b < BLOCKS; b++) {
        if (blk_state[bi(d, b)] != B_USED) continue;
        const uint32_t v = valid_pages(d, b);
        if (tight && blk_retire[bi(d, b)] && v != 0) continue;
        cand[n] = b;
        val[n] = v;
        age[n] = ckpt_no - blk_age[bi(d, b)];
        n++;
    }
    int k = ats_gc_pick(tight ? ATS_GC_GREEDY : gc_policy, val, age, n, PPB);
    for (uint32_t i = 0; i < n; i++)            // a grown bad block first: its pages move out
        if (blk_retire[bi(d, cand[i])] && (!tight || val[i] == 0)) k = (int)i;
    // every old block full of valid pages: moving one frees nothing (static wear levelling moves
    // cold blocks, wl_step)
    gc_none[d] = k < 0;
    if (k < 0) return ATS_E_NOSPACE;
    const int st = gc_block(d, cand[k]);
    if (st == ATS_OK) S.gc_runs++;
    return st;
}

// static wear levelling: when the spread is large, move the coldest old block (its data is cold)
static void wl_step(void) {
    if (!wl_dirty) return;                     // nothing erased or retired since the last look
    wl_dirty = 0;
    static uint8_t usable[NBLK];
    for (uint32_t i = 0; i < NBLK; i++) usable[i] = blk_state[i] != B_BAD && blk_state[i] != B_CKPT;
    if (!ats_wl_static_due(erase_cnt, usable, NBLK, WL_SPREAD)) return;
    int best = -1;
    for (uint32_t i = 0; i < NBLK; i++)
        if (blk_state[i] == B_USED && (best < 0 || erase_cnt[i] < erase_cnt[(uint32_t)best])) best = (int)i;
    if (best < 0) return;
    if (gc_block((uint32_t)best / BLOCKS, (uint32_t)best % BLOCKS) == ATS_OK) S.wl_static++;   // moves done
}

// ---- format (a blank device): factory bad-block scan, blank check, first checkpoint
// Formats only a blank device (persistence.md section 5): every good block's page 0 reads erased,
// the checkpoint blocks excepted (they hold nothing but checkpoints, e.g. the first one, torn by a
// cut). A device with data but no readable checkpoint is refused (ATS_E_NOTBLANK): nothing is
// erased, the boot stops in the "not ready" state (main)
static int format_device(void) {
    census_dirty = wl_dirty = 1;
    hal_puts("format: factory bad-block scan\n");
    memset(blk_state, B_FREE, sizeof blk_state);
    static uint8_t pg0_erased[NBLK];
    for (uint32_t d = 0; d < NDIE; d++)
        for (uint32_t b = 0; b < BLOCKS; b++) {
            fw_rsp_t r;
            nread(d, b, 0, &r);
            pg0_erased[bi(d, b)] = r.status == N_ERASED;
            if (r.mapped) {                      // the bad-block mark (NREAD's mapped bit)
                mark_bad(d, b);
                erase_cnt[bi(d, b)] = EC_FACTORY;   // persisted: recovery counts the factory ones by it
                S.factory_bad++;
            }
        }
    // the checkpoint blocks: block 0 and the first good block after it (block 0 is good on every
    // NAND part; a die 0 without two good blocks cannot hold checkpoints)
    ck_blk1 = 1u;
    while (ck_blk1 < BLOCKS && blk_state[bi(0, ck_blk1)] == B_BAD) ck_blk1++;
    if (blk_state[bi(0, CK_BLK0)] == B_BAD || ck_blk1 >= BLOCKS) {
        hal_puts("format: refused: die 0 has no two good blocks for the checkpoints\n");
        return ATS_E_NAND;
    }
    uint32_t held = 0, first = 0;
    for (uint32_t i = 0; i < NBLK; i++) {
        if (blk_state[i] == B_BAD || pg0_erased[i] || i == bi(0, CK_BLK0) || i == bi(0, ck_blk1)) continue;
        if (!held) first = i;
        held++;
    }
    if (held) {
        hal_printf("format: refused: not blank, %u good blocks hold data (first %u/%u); nothing erased\n", held,
                   first / BLOCKS, first % BLOCKS);
        return ATS_E_NOTBLANK;
    }
    // the second checkpoint block may hold a torn first checkpoint of an earlier format: erased now
    // (the first checkpoint goes to block 0, which ckpt_write erases first)
    if (!pg0_erased[bi(0, ck_blk1)] && nerase(0, ck_blk1) != ATS_OK) return ATS_E_NAND;
    blk_state[bi(0, CK_BLK0)] = blk_state[bi(0, ck_blk1)] = B_CKPT;
    for (uint32_t d = 0; d < NDIE; d++) plan_len[d] = plan_pos[d] = plan_ok[d] = hl_len[d] = 0;
    supply_ok = 1;
    ck_blk = ck_blk1;                            // the first checkpoint goes to block 0
    ckpt_no = 0;
    return ckpt_write();
}

// ---- recovery (docs/persistence.md section 6)
static uint32_t rec_pages;

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

static int recover(void) {
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
    // 5. restart: the mapping into the remap engine, valid-count bases, the next seq
    memset(vc_base, 0, sizeof vc_base);
    for (uint32_t lpn = 0; lpn < NLBA; lpn++) {
        const uint32_t ppn = l2p[lpn];
        if (ppn == ATS_UNMAPPED) continue;
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
    st = ckpt_write_map(1);
    S.recovery_cycles = hal_cycles() - t0;
    hal_printf("recovery: %u pages read, %llu cycles\n", rec_pages, (unsigned long long)S.recovery_cycles);
    return st;
}

static void erase_range(uint32_t *emin, uint32_t *emax) {
    *emin = 0xFFFF;
    *emax = 0;
    for (uint32_t i = 0; i < NBLK; i++) {
        if (blk_state[i] == B_BAD || blk_state[i] == B_CKPT) continue;
        if (erase_cnt[i] < *emin) *emin = erase_cnt[i];
        if (erase_cnt[i] > *emax) *emax = erase_cnt[i];
    }
}

// ---- console (UART): status, stats, bbt, log
static char line[64];
static uint32_t line_n;

static void cmd_status(void) {
    uint32_t cnt[6] = {0};
    for (uint32_t i = 0; i < NBLK; i++) cnt[blk_state[i]]++;
    if (boot_st != ATS_OK) hal_printf("status: device not ready (boot %d)\n", boot_st);
    hal_printf("status: host %s, checkpoint %u in block %u, seq_base %llu, next_seq %llu, cpl_seq %llu\n",
               hal_ctrl_host_en() ? "enabled" : "disabled", ckpt_no, ck_blk, (unsigned long long)ck_seq_base,
               (unsigned long long)hal_next_seq(), (unsigned long long)hal_cpl_seq());
    hal_printf("blocks: free %u plan %u open %u used %u bad %u ckpt %u; GC policy %s; room %u%s%s\n", cnt[0], cnt[1],
               cnt[2], cnt[3], cnt[4], cnt[5], gc_policy == ATS_GC_GREEDY ? "greedy" : "cost-benefit", room(),
               hold_wb ? ", write-backs held" : "", no_space ? ", no space" : "");
}

static void cmd_stats(void) {
    const uint64_t host = ats_cnt_host_pages_read(), prog = ats_cnt_nand_prog_read();
    uint32_t emin, emax;
    erase_range(&emin, &emax);
    hal_printf("stats: host_pages %llu nand_programs %llu wa_x1000 %llu nand_reads %u fw_reads %llu ecc_corrected %u "
               "program_fail %u read_err %u erases %u relocs %u\n",
               (unsigned long long)host, (unsigned long long)prog,
               (unsigned long long)(host ? prog * 1000u / host : 0u), ats_cnt_nand_read_read(),
               (unsigned long long)S.nreads, ats_cnt_ecc_corr_read(), ats_cnt_prog_fail_read(),
               ats_cnt_read_err_read(), ats_cnt_erases_read(), ats_cnt_relocs_read());
    hal_printf("stats: gc_runs %llu gc_relocs %llu gc_stale %llu gc_erases %llu wl_static %llu erase_min %u erase_max %u "
               "grown_bad %llu factory_bad %llu starved %llu gc_urgent %llu no_space %llu ckpt_fail %llu\n",
               (unsigned long long)S.gc_runs, (unsigned long long)S.gc_relocs, (unsigned long long)S.gc_stale,
               (unsigned long long)S.gc_erases, (unsigned long long)S.wl_static, emin, emax,
               (unsigned long long)S.grown_bad, (unsigned long long)S.factory_bad, (unsigned long long)S.starved,
               (unsigned long long)S.gc_urgent, (unsigned long long)S.no_space, (unsigned long long)S.ckpt_fail);
    hal_printf("stats: recoveries %llu recovery_cycles %llu recovery_pages %llu recovery_records %llu "
               "recovery_ignored %llu checkpoints %llu ckpt_pages %llu ckpt_cycles %llu proto_err %u\n",
               (unsigned long long)S.recoveries, (unsigned long long)S.recovery_cycles,
               (unsigned long long)S.recovery_pages, (unsigned long long)S.recovery_records,
               (unsigned long long)S.recovery_ignored,
               (unsigned long long)S.checkpoints, (unsigned long long)S.ckpt_pages,
               (unsigned long long)S.ckpt_cycles, ats_cnt_proto_err_read());
}

static void cmd_bbt(void) {
    hal_printf("bbt: %u bad blocks:", n_bad);
    for (uint32_t i = 0; i < n_bad; i++) hal_printf(" %u/%u", bad_list[i] >> 16, bad_list[i] & 0xFFFFu);
    hal_puts("\n");
}

static void cmd_log(void) {
    hal_printf("log: checkpoint cycles: drain %llu plan %llu mapping %llu nand %llu\n",
               (unsigned long long)S.ck_phase[0], (unsigned long long)S.ck_phase[1],
               (unsigned long long)S.ck_phase[2], (unsigned long long)S.ck_phase[3]);
    hal_printf("log: checkpoint %u seq_base %llu scan_from %llu next_seq %llu (active log %llu records)\n", ckpt_no,
               (unsigned long long)ck_seq_base, (unsigned long long)ck_scan_from, (unsigned long long)hal_next_seq(),
               (unsigned long long)(hal_next_seq() - ck_scan_from));
    for (uint32_t d = 0; d < NDIE; d++) {
        hal_printf("log: die %u handed", d);
        for (uint32_t i = 0; i < hl_len[d]; i++) hal_printf(" %u", hl_blk[d][i]);
        hal_printf("; plan left %u\n", (uint32_t)(plan_len[d] - plan_pos[d]));
    }
}

// `scan <n>`: the full-device scan that a recovery without a bounded log needs (TxFlash reads every
// page), timed on a sample: the first n pages of every die in scan order (blocks from 0 without the
// checkpoint and bad blocks, pages 0..PPB-1), read one at a time like recovery's reads (benchmark B5)
static void cmd_scan(uint32_t n) {
    const uint64_t t0 = hal_cycles();
    uint32_t pages = 0, written = 0, erased = 0, failed = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        uint32_t k = 0;
        for (uint32_t b = 0; b < BLOCKS && k < n; b++) {
            if (blk_state[bi(d, b)] == B_BAD || blk_state[bi(d, b)] == B_CKPT) continue;
            for (uint32_t p = 0; p < PPB && k < n; p++, k++) {
                fw_rsp_t r;
                nread(d, b, p, &r);
                pages++;
                if (r.status == N_OK) {
                    spare_t sp;
                    hal_spare(&sp);                 // the scan's record: lpn, seq, flags
                    written++;
                } else if (r.status == N_ERASED) {
                    erased++;
                } else {
                    failed++;
                }
            }
        }
    }
    hal_printf("scan: %u pages (%u written, %u erased, %u failed), %llu cycles\n", pages, written, erased, failed,
               (unsigned long long)(hal_cycles() - t0));
}

static uint32_t parse_u32(const char *p) {
    uint32_t v = 0;
    while (*p == ' ') p++;
    while (*p >= '0' && *p <= '9' && v < 100000000u) v = v * 10u + (uint32_t)(*p++ - '0');
    return v;
}

static void console(void) {
    int ch;
    while ((ch = hal_getc()) >= 0) {
        if (ch == '\r' || ch == '\n') {
            line[line_n] = 0;
            if (!strcmp(line, "status")) cmd_status();
            else if (!strcmp(line, "stats")) cmd_stats();
            else if (!strcmp(line, "bbt")) cmd_bbt();
            else if (!strcmp(line, "log")) cmd_log();
            else if (!strcmp(line, "ckpt")) hal_printf("ckpt: %d\n", ckpt_write());
            else if (!strcmp(line, "gc greedy")) gc_policy = ATS_GC_GREEDY;
            else if (!strcmp(line, "gc cb")) gc_policy = ATS_GC_COST_BENEFIT;
            else if (line[0] == 's' && line[1] == 'c' && line[2] == 'a' && line[3] == 'n' && line[4] == ' ') cmd_scan(parse_u32(line + 5));
            else if (line_n) hal_printf("unknown command '%s' (status, stats, bbt, log, ckpt, gc greedy, gc cb, scan N)\n", line);
            if (line_n) hal_puts("> ");
            line_n = 0;
        } else if (line_n + 1u < sizeof line) {
            line[line_n++] = (char)ch;
        }
    }
}

// ---- admin commands from the host (docs/architecture.md section 1.1): IDENTIFY, GET_LOG
#define ADM_IDENTIFY 9u
#define ADM_GET_LOG 10u
#define ADM_MAGIC 0x41545344u      // "DSTA" in memory order: the answer is an atomssd one
#define ADM_SHUT_TAG 0xFFu         // a GET_LOG with this tag: a checkpoint first (the NVMe front end's
                                   // clean shutdown, docs/host-interface.md "Shutdown")
static uint32_t adm_w[ATS_ADM_WORDS];

static void adm_put64(uint32_t k, uint64_t v) {
    adm_w[2u * k] = (uint32_t)v;
    adm_w[2u * k + 1u] = (uint32_t)(v >> 32);
}

static void admin(void) {
    const uint32_t a = ats_adm_read();
    if (!((a >> CSR_ATS_ADM_PENDING_OFFSET) & 1u)) return;
    const uint32_t op = (a >> CSR_ATS_ADM_OP_OFFSET) & 0xFu;
    const uint32_t tag = (a >> CSR_ATS_ADM_TAG_OFFSET) & 0xFFu;
    if (op == ADM_GET_LOG && tag == ADM_SHUT_TAG) {
        // clean shutdown: the host's FLUSH has completed; a checkpoint now, so that the next power-on
        // replays no log (recovery reads the checkpoint and the open blocks only); then the answer,
        // whose completion lets the front end report the shutdown complete (CSTS.SHST = 2)
        int st = ATS_E_STATE;
        for (int i = 0; i < 3 && st != ATS_OK; i++) st = ckpt_write();
        S.shutdowns++;
        if (st != ATS_OK) S.ckpt_fail++;
        hal_printf("shutdown: checkpoint %u: %d\n", ckpt_no, st);
    }
    memset(adm_w, 0, sizeof adm_w);
    uint32_t n = 0;
    if (op == ADM_IDENTIFY) {
        const uint32_t v[] = {ADM_MAGIC, 1u, ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, ATS_SPARE_BYTES,
                              NLBA, NTX, ATS_TX_ENTRIES, ATS_QDEPTH, 8u, 2u, (uint32_t)S.factory_bad, n_bad};
        n = sizeof v / sizeof v[0];
        for (uint32_t i = 0; i < n; i++) adm_w[i] = v[i];
    } else if (op == ADM_GET_LOG) {
        const uint64_t host = ats_cnt_host_pages_read(), prog = ats_cnt_nand_prog_read();
        uint32_t emin, emax;
        erase_range(&emin, &emax);
        const uint64_t v[] = {host, host * ATS_PAGE_BYTES, prog, prog * ATS_PAGE_BYTES,
                              host ? prog * 1000u / host : 0u, ats_cnt_nand_read_read(), ats_cnt_ecc_corr_read(),
                              ats_cnt_prog_fail_read(), ats_cnt_read_err_read(), ats_cnt_erases_read(), S.gc_runs,
                              S.gc_relocs, S.gc_erases, S.wl_static, S.grown_bad, S.factory_bad, S.recoveries,
                              S.recovery_cycles, S.recovery_pages, S.recovery_records, S.checkpoints, S.ckpt_pages,
                              emin, emax, S.gc_urgent, S.starved, hal_cycles(), ATS_SYS_CLK_HZ, S.no_space,
                              S.ckpt_fail, S.shutdowns, S.recovery_ignored};
        n = 2u * (sizeof v / sizeof v[0]);
        for (uint32_t k = 0; k < n / 2u; k++) adm_put64(k, v[k]);
    } else {
        ats_adm_result_write(0);
        ats_adm_done_write(0x01);       // BAD_OP (the module takes only 9 and 10: never here)
        return;
    }
    for (uint32_t i = 0; i < ATS_ADM_WORDS; i++) ats_adm_data_write(adm_w[i]);
    ats_adm_result_write(4u * n);
    ats_adm_done_write(0);
}

// ---- main loop
// while a firmware command waits (a RELOC or a checkpoint page may need a block): keep supplying
// (not while recovery still reads the old plan: supply_ok)
static void wait_hook(void) {
    if (!supply_ok) return;
    supply();
    take_bad();
    // the host's write-backs wait as soon as the room runs short, not only at the next housekeeping
    // pass: a checkpoint's mapping read or a GC block takes hundreds of thousands of cycles, in which
    // the host used up every planned block (issue 34: the next checkpoint's drain then waited for a
    // block that only that checkpoint could plan). Released by housekeeping only
    if (!hold_wb && room() < HOST_ROOM) {
        hold_wb = 1;
        hal_ctrl(hal_ctrl_host_en(), 1);
    }
}

static void housekeeping(void) {
    supply();
    take_bad();
    // GC per die with hysteresis: on below GC_LOW free blocks (planned + erased), off at GC_HIGH, so
    // that erased blocks come in batches and one checkpoint plans several of them
    for (uint32_t d = 0; d < NDIE; d++) {
        const uint32_t f = free_count(d);
        if (f < GC_LOW) gc_on[d] = 1;
        if (f >= GC_HIGH) gc_on[d] = 0;
    }
    // a die below GC_URGENT: the host's write-backs wait (the buffer fills, then host commands
    // wait) until GC and a checkpoint have planned blocks again
    // Also while the dies' durable plans together hold fewer than RELOC_RESERVE + 1 blocks: erased
    // blocks a die has but no checkpoint planned yet cannot take a write-back, and the write-backs
    // accepted before the next checkpoint's drain must all find a block, or the drain never ends
    // (the checkpoint that would plan the erased blocks waits for them: a deadlock seen under a
    // full-device fill when the host used up the last planned blocks between two passes)
    // (a die whose old blocks are all full of valid pages does not count: GC cannot help it, and the
    // backend writes to the other dies). And while the backend has fewer than HOST_ROOM erased
    // blocks (room(): the durable plans and the dies' next-block registers): GC needs
    // RELOC_RESERVE + 1 of them to copy a block, and the write-backs accepted before a hold
    // (WIN at most, and program failures close blocks) must still find one
    int urgent = room() < HOST_ROOM;
    for (uint32_t d = 0; d < NDIE; d++) urgent |= free_count(d) < GC_URGENT && !gc_none[d];
    if (urgent != hold_wb) {
        hold_wb = urgent;
        hal_ctrl(1, (uint32_t)hold_wb);
    }
    S.gc_urgent += (uint64_t)urgent;
    // checkpoint: the log grows long, or a die's plan runs low and a checkpoint would give it more:
    // erased blocks wait for a plan (GC started GC_LOW - PLAN_LOW blocks earlier: they come in a
    // batch), or handed blocks wait to become old data that GC may collect
    // Also while write-backs are held and erased blocks wait for a plan (they are room only once a
    // checkpoint plans them): in batches of NDIE blocks while GC can go on collecting, at once when the
    // room is too short for another GC block or the last pass collected none
    static int gc_moved;                   // the last pass collected a block
    int ck = (hal_next_seq() - ck_scan_from) >= LOG_CKPT;
    if (hold_wb && !ck) {
        uint32_t wait = 0;
        for (uint32_t d = 0; d < NDIE; d++)
            if ((uint32_t)(plan_len[d] - plan_pos[d]) < PLAN_TAIL) wait += free_count(d) - (uint32_t)(plan_len[d] - plan_pos[d]);
        ck = wait != 0 && (wait >= NDIE || !gc_moved || room() < RELOC_RESERVE + 2u);
    }
    for (uint32_t d = 0; d < NDIE && !ck; d++) {
        const uint32_t left = (uint32_t)(plan_len[d] - plan_pos[d]);
        if (left >= PLAN_LOW) continue;
        ck |= hl_len[d] > 2u;
        ck |= !hold_wb && free_count(d) > left;   // erased blocks wait (while held: the batches above)
    }
    int progress = 0;
    if (ck) {
        int st = ckpt_write();
        if (st != ATS_OK) {
            S.ckpt_fail++;
            hal_printf("checkpoint failed: %d\n", st);
        }
    }
    // GC: one block on every die with GC on (or a grown bad block to move out of); every die while
    // write-backs are held
    int any = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        census();
        if (gc_on[d] || n_retired[d] || hold_wb) {
            // a die with nothing to collect (every old block full of valid pages: cold data) does
            // not hold off static wear levelling, which is what moves such blocks
            const int st = gc_step(d, hold_wb);
            progress |= st == ATS_OK;
            if (st != ATS_E_NOSPACE) any = 1;
        }
    }
    if (!any) wl_step();
    gc_moved = progress;
    // no space (README "No space"): write-backs held, no block collected, no erased block waiting for
    // a plan, three passes in a row: the device cannot write any more (its good blocks hold valid
    // pages or too little room is left to move them). Said once on the console; counted (GET_LOG)
    static uint32_t stuck;
    census();
    uint32_t waiting = 0;
    for (uint32_t d = 0; d < NDIE; d++) waiting += n_free[d];
    if (hold_wb && !progress && waiting == 0) {
        if (stuck < 3u && ++stuck == 3u) {
            no_space = 1;
            hal_no_space(1);   // writes, FLUSH, ... complete NO_SPACE instead of waiting (CTRL.no_space)
            hal_printf("no space: write-backs held, no block can be freed (%u bad blocks, room %u)\n", n_bad,
                       room());
        }
    } else {
        if (no_space) {
            hal_no_space(0);
            hal_puts("no space: cleared\n");
        }
        stuck = 0;
        no_space = 0;
    }
    S.no_space += (uint64_t)no_space;
}

int main(void) {
    const uint64_t t0 = hal_cycles();
    hal_puts("\natomssd firmware\n");
    if (ats_geo_init(&G, ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, NLBA, NTX) != ATS_OK) {
        hal_puts("bad geometry\n");
        for (;;) {
        }
    }
    while (!ST_BIT(INIT_DONE)) {
    }
    hal_set_wait_hook(wait_hook);
    hal_printf("nand: %u channels x %u ways, %u blocks x %u pages x %u bytes; %u LBAs; %u transactions\n",
               ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, NLBA, NTX);
    int st = recover();
    if (st == ATS_E_NOCKPT) {
        // blank (never formatted) only if the checkpoint blocks read erased
        st = format_device();
        hal_printf("format: %d, %u factory bad blocks\n", st, (uint32_t)S.factory_bad);
    } else if (st != ATS_OK) {
        hal_printf("recovery failed: %d\n", st);
    }
    if (st != ATS_OK) {
        boot_st = st;
        hal_puts("device not ready\n");
        for (;;) console();
    }
    S.boot_cycles = hal_cycles() - t0;
    // the host comes in with write-backs held when the room is short (a recovery of a device that was
    // short of blocks plans no erased block): write-backs accepted now would wait for a block that
    // only the next checkpoint can plan, and that checkpoint's drain would wait for them (issue 34,
    // test_system seed 20: `checkpoint failed: -7` after a cut). GC and checkpoints make room first
    supply();
    hold_wb = room() < HOST_ROOM;
    hal_ctrl(1, (uint32_t)hold_wb);
    hal_printf("ready (boot %llu cycles)\n> ", (unsigned long long)S.boot_cycles);
    for (;;) {
        housekeeping();
        admin();
        console();
    }
}
