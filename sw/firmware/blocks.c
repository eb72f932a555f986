// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the block table, the free-block supply, bad blocks, the census (blocks.h).
#include "blocks.h"

#include "ckpt.h"
#include "housekeeping.h"
#include "wear.h"

uint8_t blk_state[NBLK];
uint8_t blk_retire[NBLK];
uint16_t erase_cnt[NBLK];
uint16_t vc_base[NBLK];
uint32_t blk_age[NBLK];
uint16_t plan[NBLK];
uint16_t plan_len[NDIE], plan_pos[NDIE];
// While a checkpoint is written, the blocks it adds to the plan are not durable yet (a cut would
// recover from the previous checkpoint, whose plan lacks them, and miss their pages)
uint16_t plan_ok[NDIE];
uint16_t hl_blk[NDIE][BLOCKS];
uint64_t hl_seq[NDIE][BLOCKS];
uint16_t hl_len[NDIE];
uint32_t bad_list[NBLK];
uint32_t n_bad;
int supply_ok;
// housekeeping stays O(dies), not O(blocks): the census is recounted only after a change
int census_dirty = 1;
int wl_dirty = 1;
uint16_t n_free[NDIE];
uint8_t n_retired[NDIE];

static uint32_t vc_hw(uint32_t d, uint32_t b) {
    ats_vc_addr_write(bi(d, b));
    (void)ats_vc_addr_read();
    return ats_vc_data_read();
}
uint32_t valid_pages(uint32_t d, uint32_t b) { return (vc_base[bi(d, b)] + vc_hw(d, b)) & 511u; }

// ---- NAND helpers
int nread(uint32_t d, uint32_t b, uint32_t p, fw_rsp_t *r) {
    S.nreads++;
    return hal_fw_nread(d, b, p, r);
}
int nerase(uint32_t d, uint32_t b) {
    fw_rsp_t r;
    hal_fw_nerase(d, b, &r);
    if (r.status != N_OK) return ATS_E_NAND;
    // saturates at EC_FACTORY - 1: 0xFFFF is the factory-bad mark every checkpoint carries
    // (persistence.md section 5), so a good block's count never becomes it
    if (erase_cnt[bi(d, b)] < EC_FACTORY - 1u) erase_cnt[bi(d, b)]++;
    wl_dirty = 1;
    if (blk_state[bi(d, b)] != B_CKPT && erase_cnt[bi(d, b)] > (uint32_t)wl_lo + WL_SPREAD) wl_over = 1;
    return ATS_OK;
}
uint32_t remap(uint32_t rop, uint32_t lpn, uint32_t ppn, uint32_t *mapped) {
    fw_rsp_t r;
    hal_fw_remap(rop, lpn, ppn, &r);
    if (mapped) *mapped = r.mapped;
    return r.status == 0 ? r.ppn : 0xFFFFFFFFu;
}

void mark_bad(uint32_t d, uint32_t b) {
    if (blk_state[bi(d, b)] == B_BAD) return;
    census_dirty = wl_dirty = 1;
    blk_state[bi(d, b)] = B_BAD;
    if (n_bad < NBLK) bad_list[n_bad++] = (d << 16) | b;
}

// ---- free-block supply: hand each die asking for a block the next block of its plan
void supply(void) {
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
        hk_work++;
        ats_free_write(((d / ATS_WAYS) << CSR_ATS_FREE_CHAN_OFFSET) | ((d % ATS_WAYS) << CSR_ATS_FREE_WAY_OFFSET) |
                       (b << CSR_ATS_FREE_BLOCK_OFFSET));
        need = ats_blk_need_read();
    }
}

// grown bad blocks from the backend: the block was closed early; its pages stay until GC moves them
void take_bad(void) {
    while (ST_BIT(BAD_VALID)) {
        const uint32_t v = ats_bad_read();
        const uint32_t d = ((v >> CSR_ATS_BAD_CHAN_OFFSET) & 7u) * ATS_WAYS + ((v >> CSR_ATS_BAD_WAY_OFFSET) & 3u);
        const uint32_t b = (v >> CSR_ATS_BAD_BLOCK_OFFSET) & 0xFFFu;
        ats_bad_pop_write(1);
        hk_work++;
        if (d < NDIE && b < BLOCKS) {
            blk_retire[bi(d, b)] = 1;
            census_dirty = 1;
            S.grown_bad++;
        }
    }
}

void census(void) {
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
uint32_t room(void) { return ats_hk_room(&HK, ats_blk_need_read()); }

void erase_range(uint32_t *emin, uint32_t *emax) {
    *emin = 0xFFFF;
    *emax = 0;
    for (uint32_t i = 0; i < NBLK; i++) {
        if (blk_state[i] == B_BAD || blk_state[i] == B_CKPT) continue;
        if (erase_cnt[i] < *emin) *emin = erase_cnt[i];
        if (erase_cnt[i] > *emax) *emax = erase_cnt[i];
    }
}
