// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: admin commands (admin.h).
#include "admin.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"

// opcodes and the shutdown tag: the generated ats_host.h (rtl/common/ats_host_pkg.sv, through hal.h)
#define ADM_IDENTIFY ATS_OP_IDENTIFY
#define ADM_GET_LOG ATS_OP_GET_LOG
#define ADM_FEATURE ATS_OP_FEATURE
#define ADM_MAGIC 0x41545344u      // "DSTA" in memory order: the answer is an atomssd one
#define ADM_SHUT_TAG ATS_TAG_SHUTDOWN   // a GET_LOG with this tag: a checkpoint first (the NVMe front end's
                                        // clean shutdown, docs/host-interface.md "Shutdown")
static uint32_t adm_w[ATS_ADM_WORDS];

static void adm_put64(uint32_t k, uint64_t v) {
    adm_w[2u * k] = (uint32_t)v;
    adm_w[2u * k + 1u] = (uint32_t)(v >> 32);
}

// FEATURE (docs/architecture.md §1.2): get (nlb 0) or set (nlb 1) the device setting `fid`; returns
// the status, *value = the setting after the command. Volatile: the CSRs reset at power-on.
static int feature(uint32_t fid, uint32_t fid_hi, uint32_t nlb, uint32_t val, uint32_t *value) {
    *value = 0;
    if (fid_hi || nlb > 1u) return ATS_STS_BAD_FIELD;
    switch (fid) {
#ifdef ATS_HW_SLOG_OPEN_PAGE
    case ATS_FEAT_SEAL_TIME:                  // the open log page's seal time, cycles (CSR SLOG_SEALT)
        if (nlb) {
            if (val > 0xFFFFu) return ATS_STS_BAD_FIELD;
            ats_slog_sealt_write(val);
        }
        *value = ats_slog_sealt_read();
        return ATS_STS_OK;
#endif
    default:
        (void)val;
        return ATS_STS_BAD_FIELD;             // unknown, or not in this build
    }
}

void admin(void) {
    const uint32_t a = ats_adm_read();
    if (!((a >> CSR_ATS_ADM_PENDING_OFFSET) & 1u)) return;
    const uint32_t op = (a >> CSR_ATS_ADM_OP_OFFSET) & 0xFu;
    const uint32_t tag = (a >> CSR_ATS_ADM_TAG_OFFSET) & 0xFFu;
    if (op == ADM_GET_LOG && tag == ADM_SHUT_TAG) {
        // clean shutdown: the host's FLUSH has completed; a checkpoint now, so that the next power-on
        // replays no log (recovery reads the checkpoint and the open blocks only); then the answer,
        // whose completion lets the front end report the shutdown complete (CSTS.SHST = 2)
        int st = ATS_E_STATE;
        for (int i = 0; i < 3 && st != ATS_OK; i++) st = ckpt_write();
        S.shutdowns++;
        if (st != ATS_OK) S.ckpt_fail++;
        hal_printf("shutdown: checkpoint %u: %d\n", ckpt_no, st);
    }
    if (op == ADM_FEATURE) {                  // no data: the status and the value only
        const uint32_t arg = ats_adm_arg_read();
        uint32_t value;
        const int st = feature(ats_adm_lba_read(), (arg >> CSR_ATS_ADM_ARG_LBA_HI_OFFSET) & 1u,
                               (arg >> CSR_ATS_ADM_ARG_NLB_OFFSET) & 0xFFFFu, ats_adm_aux_read(), &value);
        ats_adm_result_write(value);
        ats_adm_done_write((uint32_t)st);
        return;
    }
    memset(adm_w, 0, sizeof adm_w);
    uint32_t n = 0;
    if (op == ADM_IDENTIFY) {
        const uint32_t v[] = {ADM_MAGIC, 1u, ATS_NUM_CHAN, ATS_WAYS, BLOCKS, PPB, ATS_PAGE_BYTES, ATS_SPARE_BYTES,
                              NLBA, NTX, ATS_TX_ENTRIES, ATS_QDEPTH, 8u, 2u, (uint32_t)S.factory_bad, n_bad};
        n = sizeof v / sizeof v[0];
        for (uint32_t i = 0; i < n; i++) adm_w[i] = v[i];
    } else if (op == ADM_GET_LOG) {
        const uint64_t host = ats_cnt_host_pages_read(), prog = ats_cnt_nand_prog_read();
        uint32_t emin, emax;
        erase_range(&emin, &emax);
        const uint64_t v[] = {host, host * ATS_PAGE_BYTES, prog, prog * ATS_PAGE_BYTES,
                              host ? prog * 1000u / host : 0u, ats_cnt_nand_read_read(), ats_cnt_ecc_corr_read(),
                              ats_cnt_prog_fail_read(), ats_cnt_read_err_read(), ats_cnt_erases_read(), S.gc_runs,
                              S.gc_relocs, S.gc_erases, S.wl_static, S.grown_bad, S.factory_bad, S.recoveries,
                              S.recovery_cycles, S.recovery_pages, S.recovery_records, S.checkpoints, S.ckpt_pages,
                              emin, emax, S.gc_urgent, S.starved, hal_cycles(), ATS_SYS_CLK_HZ, S.no_space,
                              S.ckpt_fail, S.shutdowns, S.recovery_ignored};
        n = 2u * (sizeof v / sizeof v[0]);
        for (uint32_t k = 0; k < n / 2u; k++) adm_put64(k, v[k]);
    } else {
        ats_adm_result_write(0);
        ats_adm_done_write(0x01);       // BAD_OP (the module takes only 9, 10 and 11: never here)
        return;
    }
    for (uint32_t i = 0; i < ATS_ADM_WORDS; i++) ats_adm_data_write(adm_w[i]);
    ats_adm_result_write(4u * n);
    ats_adm_done_write(0);
}
