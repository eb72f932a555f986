// SPDX-License-Identifier: Apache-2.0
// atomssd firmware (VexRiscv): boot and the main loop. The parts, one file each (README "Layout"):
// blocks.c (block table, free-block supply, bad blocks), ckpt.c (checkpoint writer), recovery.c,
// format.c, gc.c and wear.c (garbage collection, static wear levelling), housekeeping.c (the main
// loop's pass; its decisions are ftl/policy.c's), console.c, admin.c. Theory of operation:
// sw/firmware/README.md; on-flash format and recovery: docs/persistence.md. Every function returns
// an ats_status_t (0 OK) unless it returns a value.
#include "admin.h"
#include "blocks.h"
#include "console.h"
#include "format.h"
#include "housekeeping.h"
#include "recovery.h"

#ifndef SLOG_THR_BOOT
#define SLOG_THR_BOOT 512      // bytes: the paper's threshold (issue 40)
#endif

ats_geo_t G;
int boot_st;
fw_stats_t S;

int main(void) {
    const uint64_t t0 = hal_cycles();
    hal_puts("\natomssd firmware\n");
    if (ats_geo_init(&G, ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, NLBA, NTX) != ATS_OK) {
        hal_puts("bad geometry\n");
        for (;;) {
        }
    }
    while (!ST_BIT(INIT_DONE)) {
    }
    hal_set_wait_hook(wait_hook);
    hal_printf("nand: %u channels x %u ways, %u blocks x %u pages x %u bytes; %u LBAs; %u transactions\n",
               ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, NLBA, NTX);
    int st = recover();
    if (st == ATS_E_NOCKPT) {
        // blank (never formatted) only if the checkpoint blocks read erased
        st = format_device();
        hal_printf("format: %d, %u factory bad blocks\n", st, (uint32_t)S.factory_bad);
    } else if (st != ATS_OK) {
        hal_printf("recovery failed: %d\n", st);
    }
    if (st != ATS_OK) {
        boot_st = st;
        hal_puts("device not ready\n");
        for (;;) console();
    }
#ifdef ATS_HW_FRAG_SLOTS
    // the write buffer has FRAG slots (soc.h): DIFFWRITEs shorter than SLOG_THR bytes (the core uses
    // min(SLOG_THR, page bytes - 16)) become S-Log fragments; set before the host comes in (the CSR
    // resets to 0: every DIFFWRITE a read-modify-write). docs/architecture.md section 11.1
    ats_slog_thr_write(SLOG_THR_BOOT);
#endif
    S.boot_cycles = hal_cycles() - t0;
    // the host comes in with write-backs held when the room is short (housekeeping.c); GC and
    // checkpoints make room first
    hk_boot_hold();
    hal_printf("ready (boot %llu cycles)\n> ", (unsigned long long)S.boot_cycles);
    // the main loop: a pass of housekeeping, admin and console; after a pass that changed nothing
    // (no block handed, no firmware-port operation, no policy state changed: hk_work, FW_OPS) the
    // CPU sleeps in the wait unit until the host or the core does something the next pass could
    // answer (ACT: a command accepted, a completion taken, BLK_NEED or NEXT_SEQ changed; a grown bad
    // block, an admin command, a UART character, the power-fail input) or IDLE_WAIT cycles pass
    for (;;) {
        const uint32_t w0 = hk_work, ops0 = ats_fw_ops_read();
        hal_wait_clr_act();
        housekeeping();
        admin();
        console();
        if (hk_work == w0 && ats_fw_ops_read() == ops0)
            hal_wait(WK(ACT) | WK(BAD) | WK(ADM) | WK(UART) | WK(PWR) | WK(DEADLINE), hal_cycles() + IDLE_WAIT);
    }
}
