// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the housekeeping pass of the main loop and the firmware-port wait hook (README
// "Garbage collection", "No space", "Checkpoints"). What to do is decided by ftl/policy.c over HK.
#pragma once
#include "fw.h"

extern ats_hk_t HK;                    // the policy's state: hold_wb, no_space, GC hysteresis, ...

// supply, grown bad blocks, the write-back hold, a checkpoint if due, GC on the dies that want it,
// static wear levelling, the no-space state
void housekeeping(void);
// while the firmware waits for one of its own firmware-port commands (hal_set_wait_hook)
void wait_hook(void);
// after boot: the host comes in with write-backs held when the room is short
void hk_boot_hold(void);
