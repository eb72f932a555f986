// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: static wear levelling (README "Wear levelling"). Dynamic wear levelling is the
// checkpoint's plan order (ckpt.c, ats_wl_order).
#pragma once
#include "fw.h"

// when the erase-count spread exceeds WL_SPREAD, collect the coldest used block (ats_wl_static_victim);
// looks only after an erase or a new bad block (wl_dirty)
void wl_step(void);
// set by an erase that takes a block (not a checkpoint block) more than WL_SPREAD above wl_lo, the
// lowest count of the last look; cleared by the look. Housekeeping then lets wear levelling run in a
// pass with GC work too (ats_hk_wl_due). A stale wl_lo only adds or omits such a look; the look in a
// pass without GC work is as before
extern uint16_t wl_lo;
extern int wl_over;
