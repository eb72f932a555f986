// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: garbage collection (README "Garbage collection"): one block of a die per call.
// The decisions (victim, admission, RELOC room) are ftl/policy.c's.
#pragma once
#include "fw.h"

extern ats_gc_policy_t gc_policy;      // console `gc greedy` / `gc cb`
// move block b's valid pages through RELOC and erase it (a grown bad block: mark it bad instead).
// ATS_E_NOSPACE: not started (or stopped) for want of room; ATS_E_STATE: a page still maps here
int gc_block(uint32_t d, uint32_t b);
// collect the victim of die d (tight: write-backs are held). ATS_E_NOSPACE: nothing worth collecting
int gc_step(uint32_t d, int tight);
