// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the UART console (console.h).
#include "console.h"

#include <string.h>

#include "blocks.h"
#include "ckpt.h"
#include "gc.h"
#include "housekeeping.h"

static char line[64];
static uint32_t line_n;

static void cmd_status(void) {
    uint32_t cnt[6] = {0};
    for (uint32_t i = 0; i < NBLK; i++) cnt[blk_state[i]]++;
    if (boot_st != ATS_OK) hal_printf("status: device not ready (boot %d)\n", boot_st);
    hal_printf("status: host %s, checkpoint %u in block %u, seq_base %llu, next_seq %llu, cpl_seq %llu\n",
               hal_ctrl_host_en() ? "enabled" : "disabled", ckpt_no, ck_blk, (unsigned long long)ck_seq_base,
               (unsigned long long)hal_next_seq(), (unsigned long long)hal_cpl_seq());
    hal_printf("blocks: free %u plan %u open %u used %u bad %u ckpt %u; GC policy %s; room %u%s%s\n", cnt[0], cnt[1],
               cnt[2], cnt[3], cnt[4], cnt[5], gc_policy == ATS_GC_GREEDY ? "greedy" : "cost-benefit", room(),
               HK.hold_wb ? ", write-backs held" : "", HK.no_space ? ", no space" : "");
}

static void cmd_stats(void) {
    const uint64_t host = ats_cnt_host_pages_read(), prog = ats_cnt_nand_prog_read();
    uint32_t emin, emax;
    erase_range(&emin, &emax);
    hal_printf("stats: host_pages %llu nand_programs %llu wa_x1000 %llu nand_reads %u fw_reads %llu ecc_corrected %u "
               "program_fail %u read_err %u erases %u relocs %u\n",
               (unsigned long long)host, (unsigned long long)prog,
               (unsigned long long)(host ? prog * 1000u / host : 0u), ats_cnt_nand_read_read(),
               (unsigned long long)S.nreads, ats_cnt_ecc_corr_read(), ats_cnt_prog_fail_read(),
               ats_cnt_read_err_read(), ats_cnt_erases_read(), ats_cnt_relocs_read());
    hal_printf("stats: gc_runs %llu gc_relocs %llu gc_stale %llu gc_erases %llu wl_static %llu erase_min %u erase_max %u "
               "grown_bad %llu factory_bad %llu starved %llu gc_urgent %llu no_space %llu ckpt_fail %llu\n",
               (unsigned long long)S.gc_runs, (unsigned long long)S.gc_relocs, (unsigned long long)S.gc_stale,
               (unsigned long long)S.gc_erases, (unsigned long long)S.wl_static, emin, emax,
               (unsigned long long)S.grown_bad, (unsigned long long)S.factory_bad, (unsigned long long)S.starved,
               (unsigned long long)S.gc_urgent, (unsigned long long)S.no_space, (unsigned long long)S.ckpt_fail);
    hal_printf("stats: recoveries %llu recovery_cycles %llu recovery_pages %llu recovery_records %llu "
               "recovery_ignored %llu checkpoints %llu ckpt_pages %llu ckpt_cycles %llu proto_err %u\n",
               (unsigned long long)S.recoveries, (unsigned long long)S.recovery_cycles,
               (unsigned long long)S.recovery_pages, (unsigned long long)S.recovery_records,
               (unsigned long long)S.recovery_ignored,
               (unsigned long long)S.checkpoints, (unsigned long long)S.ckpt_pages,
               (unsigned long long)S.ckpt_cycles, ats_cnt_proto_err_read());
}

static void cmd_bbt(void) {
    hal_printf("bbt: %u bad blocks:", n_bad);
    for (uint32_t i = 0; i < n_bad; i++) hal_printf(" %u/%u", bad_list[i] >> 16, bad_list[i] & 0xFFFFu);
    hal_puts("\n");
}

static void cmd_log(void) {
    hal_printf("log: checkpoint cycles: drain %llu plan %llu mapping %llu nand %llu\n",
               (unsigned long long)S.ck_phase[0], (unsigned long long)S.ck_phase[1],
               (unsigned long long)S.ck_phase[2], (unsigned long long)S.ck_phase[3]);
    hal_printf("log: checkpoint %u seq_base %llu scan_from %llu next_seq %llu (active log %llu records)\n", ckpt_no,
               (unsigned long long)ck_seq_base, (unsigned long long)ck_scan_from, (unsigned long long)hal_next_seq(),
               (unsigned long long)(hal_next_seq() - ck_scan_from));
    for (uint32_t d = 0; d < NDIE; d++) {
        hal_printf("log: die %u handed", d);
        for (uint32_t i = 0; i < hl_len[d]; i++) hal_printf(" %u", hl_blk[d][i]);
        hal_printf("; plan left %u\n", (uint32_t)(plan_len[d] - plan_pos[d]));
    }
}

// `slog`: the S-Log's fragment lists F (README "S-Log"): the next LPGN, then per LPN its base and
// its fragments in order, each log PPN / byte in it / off / len / record seq
static void cmd_slog(void) {
    hal_printf("slog: lpgn %u, %u lpns\n", slog_lpgn, SL.n);
#if ATS_HW_SLOG
    // the merge policy (README "S-Log"): the backend's counters and the last index read, the counts
    hal_printf("slog: merge: next %u used %u live %u (at most %u) oldest %u on %d stall %d; dumps %llu merged %llu "
               "stale %llu nothing %llu unreadable %llu gc_merges %llu gc_kept %llu over %llu "
               "rx_waits_gc %llu rx_waits_ckpt %llu rx_polls %llu rx_fails %llu "
               "holds %llu hold_max %llu hold_total %llu\n",
               SLP.next, SLP.used, SLP.live, ats_sl_live_ub(&SLP), SLP.has_old ? SLP.oldest : 0u, SLP.on, SLP.stall,
               (unsigned long long)S.sl_dumps, (unsigned long long)S.sl_merged, (unsigned long long)S.sl_stale,
               (unsigned long long)S.sl_nothing, (unsigned long long)S.sl_unreadable,
               (unsigned long long)S.sl_gc_merges, (unsigned long long)S.sl_gc_kept, (unsigned long long)S.sl_over,
               (unsigned long long)S.sl_rx_waits_gc, (unsigned long long)S.sl_rx_waits_ckpt,
               (unsigned long long)S.sl_rx_polls, (unsigned long long)S.sl_rx_fails, (unsigned long long)S.sl_holds,
               (unsigned long long)S.sl_hold_max, (unsigned long long)S.sl_hold_total);
#endif
    for (uint32_t e = 0; e < SL.n; e++) {
        hal_printf("slog %u:", SL.lpn[e]);
        for (uint32_t i = 0; i < SL.nf[e]; i++) {
            const ats_frag_t *f = &SL.f[e * SL.frags + i];
            hal_printf(" %u/%u/%u/%u/%llu", f->ppn, f->doff, f->off, f->len, (unsigned long long)f->seq);
        }
        hal_printf("\n");
    }
}

// `scan <n>`: the full-device scan that a recovery without a bounded log needs (TxFlash reads every
// page), timed on a sample: the first n pages of every die in scan order (blocks from 0 without the
// checkpoint and bad blocks, pages 0..PPB-1), read one at a time like recovery's reads (benchmark B5)
static void cmd_scan(uint32_t n) {
    const uint64_t t0 = hal_cycles();
    uint32_t pages = 0, written = 0, erased = 0, failed = 0;
    for (uint32_t d = 0; d < NDIE; d++) {
        uint32_t k = 0;
        for (uint32_t b = 0; b < BLOCKS && k < n; b++) {
            if (blk_state[bi(d, b)] == B_BAD || blk_state[bi(d, b)] == B_CKPT) continue;
            for (uint32_t p = 0; p < PPB && k < n; p++, k++) {
                fw_rsp_t r;
                nread(d, b, p, &r);
                pages++;
                if (r.status == N_OK) {
                    spare_t sp;
                    hal_spare(&sp);                 // the scan's record: lpn, seq, flags
                    written++;
                } else if (r.status == N_ERASED) {
                    erased++;
                } else {
                    failed++;
                }
            }
        }
    }
    hal_printf("scan: %u pages (%u written, %u erased, %u failed), %llu cycles\n", pages, written, erased, failed,
               (unsigned long long)(hal_cycles() - t0));
}

static uint32_t parse_u32(const char *p) {
    uint32_t v = 0;
    while (*p == ' ') p++;
    while (*p >= '0' && *p <= '9' && v < 100000000u) v = v * 10u + (uint32_t)(*p++ - '0');
    return v;
}

// `gc D B`: one GC of used block B of die D now (gc_block: with the S-Log its LPNs merged first;
// tests/system/test_slog_merge.py), its status
static void cmd_gc(const char *p) {
    while (*p == ' ') p++;
    const uint32_t d = parse_u32(p);
    while (*p >= '0' && *p <= '9') p++;
    const uint32_t b = parse_u32(p);
    if (d >= NDIE || b >= BLOCKS || blk_state[bi(d, b)] != B_USED) {
        hal_printf("gc: %u/%u is not a used block\n", d, b);
        return;
    }
    const int st = gc_block(d, b);
    if (st == ATS_OK) S.gc_runs++;
    hal_printf("gc: %u/%u: %d\n", d, b, st);
}

void console(void) {
    int ch;
    while ((ch = hal_getc()) >= 0) {
        if (ch == '\r' || ch == '\n') {
            line[line_n] = 0;
            if (!strcmp(line, "status")) cmd_status();
            else if (!strcmp(line, "stats")) cmd_stats();
            else if (!strcmp(line, "bbt")) cmd_bbt();
            else if (!strcmp(line, "log")) cmd_log();
            else if (!strcmp(line, "slog")) cmd_slog();
            else if (!strcmp(line, "ckpt")) hal_printf("ckpt: %d\n", ckpt_write());
            else if (!strcmp(line, "gc greedy")) gc_policy = ATS_GC_GREEDY;
            else if (!strcmp(line, "gc cb")) gc_policy = ATS_GC_COST_BENEFIT;
            else if (line[0] == 'g' && line[1] == 'c' && line[2] == ' ' && line[3] >= '0' && line[3] <= '9') cmd_gc(line + 3);
            else if (line[0] == 's' && line[1] == 'c' && line[2] == 'a' && line[3] == 'n' && line[4] == ' ') cmd_scan(parse_u32(line + 5));
            else if (line_n) hal_printf("unknown command '%s' (status, stats, bbt, log, slog, ckpt, gc greedy, gc cb, gc D B, scan N)\n", line);
            if (line_n) hal_puts("> ");
            line_n = 0;
        } else if (line_n + 1u < sizeof line) {
            line[line_n++] = (char)ch;
        }
    }
}
