// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the housekeeping pass of the main loop and the firmware-port wait hook (README
// "Garbage collection", "No space", "Checkpoints"). What to do is decided by ftl/policy.c over HK.
#pragma once
#include "fw.h"

extern ats_hk_t HK;                    // the policy's state: hold_wb, no_space, GC hysteresis, ...

// supply, grown bad blocks, the write-back hold, a checkpoint if due, GC on the dies that want it,
// static wear levelling, the no-space state
void housekeeping(void);
// while the firmware waits for one of its own firmware-port commands (hal_set_wait_hook); returns
// the wake sources after which it runs again
uint32_t wait_hook(void);
// the main loop's changes of state (blocks handed, bad blocks taken, checkpoints, GC and wear
// levelling steps, hold and no-space changes, admin answers, console lines): a pass that changed
// nothing is followed by a wait (main.c)
extern uint32_t hk_work;
// after boot: the host comes in with write-backs held when the room is short
void hk_boot_hold(void);
