// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: static wear levelling (README "Wear levelling"). Dynamic wear levelling is the
// checkpoint's plan order (ckpt.c, ats_wl_order).
#pragma once
#include "fw.h"

// when the erase-count spread exceeds WL_SPREAD, collect the coldest used block (ats_wl_static_victim);
// looks only after an erase or a new bad block (wl_dirty)
void wl_step(void);
