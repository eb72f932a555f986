// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: static wear levelling (wear.h).
#include "wear.h"

#include "blocks.h"
#include "gc.h"

uint16_t wl_lo;                                // the lowest erase count the last look saw
int wl_over;                                   // an erase since then went past wl_lo + WL_SPREAD

void wl_step(void) {
    if (!wl_dirty) return;                     // nothing erased or retired since the last look
    wl_dirty = wl_over = 0;
    uint32_t lo = 0xFFFFu;                     // (the same blocks as ats_wl_static_victim's spread)
    for (uint32_t i = 0; i < NBLK; i++)
        if (blk_state[i] != B_BAD && blk_state[i] != B_CKPT && erase_cnt[i] < lo) lo = erase_cnt[i];
    wl_lo = (uint16_t)lo;
    const int best = ats_wl_static_victim(blk_state, erase_cnt, NBLK, WL_SPREAD);
    if (best < 0) return;
    if (gc_block((uint32_t)best / BLOCKS, (uint32_t)best % BLOCKS) == ATS_OK) S.wl_static++;   // moves done
}
