// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: housekeeping (housekeeping.h). The order of the steps is the firmware's; every
// decision is an ftl/policy.c function of HK.
#include "housekeeping.h"

#include "blocks.h"
#include "ckpt.h"
#include "gc.h"
#include "wear.h"

static uint8_t gc_on[NDIE];            // GC hysteresis per die (GC_LOW, GC_HIGH)
static uint8_t gc_none[NDIE];          // the last GC look at the die found no block worth collecting

ats_hk_t HK = {
    .ndie = NDIE, .ppb = PPB, .gc_low = GC_LOW, .gc_high = GC_HIGH, .gc_urgent = GC_URGENT,
    .plan_low = PLAN_LOW, .plan_tail = PLAN_TAIL, .host_room = HOST_ROOM, .reloc_reserve = RELOC_RESERVE,
    .gc_slack = GC_SLACK, .log_ckpt = LOG_CKPT,
    .plan_len = plan_len, .plan_pos = plan_pos, .plan_ok = plan_ok, .hl_len = hl_len, .n_free = n_free,
    .n_retired = n_retired, .gc_on = gc_on, .gc_none = gc_none,
};

uint32_t hk_work;

// keep supplying while a firmware command waits (a RELOC or a checkpoint page may need a block; not
// while recovery still reads the old plan: supply_ok). Runs again when something it looks at may have
// changed: a grown bad block, BLK_NEED or NEXT_SEQ (the sticky ACT), otherwise when the command ends
uint32_t wait_hook(void) {
    if (!supply_ok) return 0;
    supply();
    take_bad();
    // the host's write-backs wait as soon as the room runs short, not only at the next housekeeping
    // pass (issue 34: the next checkpoint's drain waited for a block that only that checkpoint could
    // plan). Released by housekeeping only. (The hook runs in every poll of a firmware command: the
    // BLK_NEED read only while the hold is off)
    if (!HK.hold_wb && ats_hk_hold_now(&HK, room())) {
        HK.hold_wb = 1;
        hal_ctrl(hal_ctrl_host_en(), 1);
        hk_work++;
    }
    return WK(BAD) | WK(ACT);
}

void hk_boot_hold(void) {
    // a recovery of a device that was short of blocks plans no erased block: write-backs accepted now
    // would wait for a block that only the next checkpoint can plan, and that checkpoint's drain
    // would wait for them (issue 34, test_system seed 20: `checkpoint failed: -7` after a cut)
    supply();
    HK.hold_wb = room() < HOST_ROOM;
    hal_ctrl(1, (uint32_t)HK.hold_wb);
}

// the policy's state that a pass may change without a firmware-port operation (hysteresis, the
// no-space count, ...): a pass that changes it counts as work (hk_work)
static uint32_t hk_sig(void) {
    uint32_t h = (uint32_t)HK.hold_wb | (uint32_t)HK.no_space << 1 | (uint32_t)HK.gc_moved << 2 | HK.stuck << 3;
    for (uint32_t d = 0; d < NDIE; d++)
        h = h * 31u + ((uint32_t)gc_on[d] | (uint32_t)gc_none[d] << 1 | (uint32_t)n_retired[d] << 2 |
                       (uint32_t)n_free[d] << 3 | (uint32_t)plan_pos[d] << 16);
    return h;
}

void housekeeping(void) {
    const uint32_t sig = hk_sig();
    supply();
    take_bad();
    census();
    // GC per die with hysteresis, so that erased blocks come in batches and one checkpoint plans
    // several of them
    ats_hk_gc_hyst(&HK);
    // the host's write-backs wait (the buffer fills, then host commands wait) while a die runs short
    // or the room does, until GC and a checkpoint have planned blocks again
    const int urgent = ats_hk_urgent(&HK, room());
    if (urgent != HK.hold_wb) {
        hk_work++;
        HK.hold_wb = urgent;
        hal_ctrl(1, (uint32_t)HK.hold_wb);
    }
    S.gc_urgent += (uint64_t)urgent;
    // checkpoint: the log grows long, a die's plan runs low, or (held) erased blocks wait for a plan
    if (ats_hk_ckpt_due(&HK, hal_next_seq() - ck_scan_from, room())) {
        hk_work++;
        const int st = ckpt_write();
        if (st != ATS_OK) {
            S.ckpt_fail++;
            hal_printf("checkpoint failed: %d\n", st);
        }
    }
    // GC: one block on every die that wants it; static wear levelling when no die's GC had work, or
    // when an erase took the spread past WL_SPREAD and write-backs are not held (ats_hk_wl_due)
    ats_hk_pass_begin(&HK);
    for (uint32_t d = 0; d < NDIE; d++) {
        census();
        if (ats_hk_gc_wanted(&HK, d)) {
            const uint8_t none = gc_none[d];
            const int st = gc_step(d, HK.hold_wb);
            hk_work += st != ATS_E_NOSPACE || gc_none[d] != none;
            ats_hk_gc_done(&HK, st);
        }
    }
    if (ats_hk_wl_due(&HK, wl_over)) {
        hk_work += (uint32_t)wl_dirty;         // (wl_step looks only when something was erased or retired)
        wl_step();
    }
    // no space (README "No space"): said once on the console; counted (GET_LOG)
    census();
    const uint32_t stuck = HK.stuck;
    const int ns = ats_hk_pass_end(&HK);
    hk_work += ns != ATS_HK_NS_SAME || HK.stuck != stuck;
    if (ns == ATS_HK_NS_ENTER) {
        hal_no_space(1);   // writes, FLUSH, ... complete NO_SPACE instead of waiting (CTRL.no_space)
        hal_printf("no space: write-backs held, no block can be freed (%u bad blocks, room %u)\n", n_bad, room());
    } else if (ns == ATS_HK_NS_CLEAR) {
        hal_no_space(0);
        hal_puts("no space: cleared\n");
    }
    S.no_space += (uint64_t)HK.no_space;
    hk_work += hk_sig() != sig;
}
