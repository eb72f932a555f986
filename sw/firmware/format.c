// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: format (format.h).
#include "format.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"

// ---- format (a blank device): factory bad-block scan, blank check, first checkpoint
// Formats only a blank device (persistence.md section 5): every good block's page 0 reads erased,
// the checkpoint blocks excepted (they hold nothing but checkpoints, e.g. the first one, torn by a
// cut). A device with data but no readable checkpoint is refused (ATS_E_NOTBLANK): nothing is
// erased, the boot stops in the "not ready" state (main)
int format_device(void) {
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
    // an empty mapping: nothing was mapped since reset (recovery found no checkpoint before it wrote
    // any mapping), so the NLBA LOOKUPs of ckpt_write would all answer unmapped
    return ckpt_write_list(0);
}
