// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: static wear levelling (wear.h).
#include "wear.h"

#include "blocks.h"
#include "gc.h"

void wl_step(void) {
    if (!wl_dirty) return;                     // nothing erased or retired since the last look
    wl_dirty = 0;
    const int best = ats_wl_static_victim(blk_state, erase_cnt, NBLK, WL_SPREAD);
    if (best < 0) return;
    if (gc_block((uint32_t)best / BLOCKS, (uint32_t)best % BLOCKS) == ATS_OK) S.wl_static++;   // moves done
}
