// SPDX-License-Identifier: Apache-2.0
// ats_ssd_bench_top: benchmark harness top (B2, B3). Wires the ordered command queue (ats_cmdq) to
// the write buffer (ats_wbuf) through the dispatch/done streams of docs/architecture.md section 9,
// and exposes the host command/completion streams (sections 1, 2), the write buffer's host-memory
// DMA ports and its media ports (section 4) to the cocotb host and media models. No logic of its
// own besides the wiring: everything measured is the blocks under test.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_ssd_bench_top #(
    parameter int DEPTH       = 32,     // command queue entries (2..64)
    parameter int NUM_LBAS    = 16384,  // logical pages (4 KiB LBAs)
    parameter int NUM_TX      = 32,     // transactions accepted by the queue
    parameter int NUM_SLOTS   = 64,     // write buffer page slots (power of two, 2..1024)
    parameter int PAGE_BYTES  = 4096,   // bytes per page
    parameter int THRESH_PCT  = 90,     // background writeback threshold, % of slots not yet durable
    parameter int NUM_WAITERS = 8,      // FLUSH/FUA waiters in the write buffer
    parameter bit PLP         = 1'b0,   // write buffer power-loss protection (supercapacitor)
    parameter int PLP_BUDGET_PAGES = 0  // pages the PLP dump may program (PLP: 1..65535; writes are held to it)
) (
    input  wire logic        clk,
    input  wire logic        rst,              // synchronous, active high
    // host command descriptors (section 1)
    input  wire logic        s_cmd_valid,
    output wire logic        s_cmd_ready,
    input  wire logic [3:0]  s_cmd_op,
    input  wire logic [7:0]  s_cmd_tag,
    input  wire logic [47:0] s_cmd_lba,
    input  wire logic [15:0] s_cmd_nlb,
    input  wire logic [5:0]  s_cmd_txid,
    input  wire logic [3:0]  s_cmd_flags,
    input  wire logic [1:0]  s_cmd_attr,
    input  wire logic [1:0]  s_cmd_prio,
    input  wire logic [31:0] s_cmd_dptr,
    input  wire logic [31:0] s_cmd_aux,
    // completions (section 2)
    output wire logic        m_cpl_valid,
    input  wire logic        m_cpl_ready,
    output wire logic [7:0]  m_cpl_tag,
    output wire logic [7:0]  m_cpl_status,
    output wire logic [31:0] m_cpl_result,
    // host memory DMA (section 9)
    output wire logic        m_hrd_valid,
    input  wire logic        m_hrd_ready,
    output wire logic [31:0] m_hrd_addr,
    output wire logic [15:0] m_hrd_len,
    input  wire logic        s_hrd_valid,
    output wire logic        s_hrd_ready,
    input  wire logic [31:0] s_hrd_data,
    input  wire logic        s_hrd_last,
    output wire logic        m_hwr_valid,
    input  wire logic        m_hwr_ready,
    output wire logic [31:0] m_hwr_addr,
    output wire logic [31:0] m_hwr_data,
    output wire logic        m_hwr_last,
    // media (section 4)
    output wire logic        m_wb_valid,
    input  wire logic        m_wb_ready,
    output wire logic        m_wb_op,
    output wire logic [7:0]  m_wb_slot,
    output wire logic [31:0] m_wb_lpn,
    output wire logic [5:0]  m_wb_txid,
    output wire logic [15:0] m_wb_epoch,
    output wire logic [1:0]  m_wb_kind,
    output wire logic        m_wb_fua,
    output wire logic [7:0]  m_wb_tag,
    output wire logic        m_wbd_valid,
    input  wire logic        m_wbd_ready,
    output wire logic [31:0] m_wbd_data,
    output wire logic        m_wbd_last,
    input  wire logic        s_wbc_valid,
    output wire logic        s_wbc_ready,
    input  wire logic [7:0]  s_wbc_tag,
    input  wire logic [7:0]  s_wbc_status,
    input  wire logic [15:0] s_wbc_ppn,
    output wire logic        m_rd_valid,
    input  wire logic        m_rd_ready,
    output wire logic [31:0] m_rd_lpn,
    output wire logic [5:0]  m_rd_txid,
    output wire logic [7:0]  m_rd_tag,
    input  wire logic        s_rdd_valid,
    output wire logic        s_rdd_ready,
    input  wire logic [31:0] s_rdd_data,
    input  wire logic        s_rdd_last,
    input  wire logic [7:0]  s_rdd_status,
    input  wire logic [7:0]  s_rdd_tag,
    // status and counters for the statistics
    output wire logic [$clog2(DEPTH+1)-1:0] q_occupancy,  // command queue entries in use
    output wire logic [15:0] q_epoch,
    output wire logic        q_err_spurious,
    output wire logic [31:0] cnt_host_pages,
    output wire logic [31:0] cnt_coalesced,
    output wire logic [31:0] cnt_wb_pages,
    output wire logic [47:0] cnt_media_bytes,
    output wire logic [31:0] cnt_proto_err,
    output wire logic [7:0]  dirty_pages,
    // power loss (write buffer): level, sticky until rst; dump finished / budget exhausted
    input  wire logic        pwr_fail,
    output wire logic        dump_done,
    output wire logic        dump_short
);
    if (NUM_LBAS < 2) begin : g_check_lbas
        $fatal(1, "ats_ssd_bench_top: NUM_LBAS must be >= 2 (%m)");
    end

    // dispatch (queue -> write buffer) and done (write buffer -> queue), section 9
    logic        disp_valid, disp_ready;
    logic [3:0]  disp_op, disp_flags;
    logic [7:0]  disp_tag;
    logic [47:0] disp_lba;
    logic [15:0] disp_nlb, disp_epoch;
    logic [5:0]  disp_txid;
    logic [1:0]  disp_attr, disp_prio;
    logic [31:0] disp_dptr, disp_aux;
    logic        done_valid, done_ready;
    logic [7:0]  done_tag, done_status;
    logic [31:0] done_result;

    ats_cmdq #(
        .DEPTH  (DEPTH),
        .NUM_LBA(49'(NUM_LBAS)),
        .NUM_TX (NUM_TX)
    ) u_cmdq (
        .clk          (clk),
        .rst          (rst),
        .s_cmd_valid  (s_cmd_valid),
        .s_cmd_ready  (s_cmd_ready),
        .s_cmd_op     (s_cmd_op),
        .s_cmd_tag    (s_cmd_tag),
        .s_cmd_lba    (s_cmd_lba),
        .s_cmd_nlb    (s_cmd_nlb),
        .s_cmd_txid   (s_cmd_txid),
        .s_cmd_flags  (s_cmd_flags),
        .s_cmd_attr   (s_cmd_attr),
        .s_cmd_prio   (s_cmd_prio),
        .s_cmd_dptr   (s_cmd_dptr),
        .s_cmd_aux    (s_cmd_aux),
        .m_disp_valid (disp_valid),
        .m_disp_ready (disp_ready),
        .m_disp_op    (disp_op),
        .m_disp_tag   (disp_tag),
        .m_disp_lba   (disp_lba),
        .m_disp_nlb   (disp_nlb),
        .m_disp_txid  (disp_txid),
        .m_disp_flags (disp_flags),
        .m_disp_attr  (disp_attr),
        .m_disp_prio  (disp_prio),
        .m_disp_dptr  (disp_dptr),
        .m_disp_aux   (disp_aux),
        .m_disp_epoch (disp_epoch),
        .s_done_valid (done_valid),
        .s_done_ready (done_ready),
        .s_done_tag   (done_tag),
        .s_done_status(done_status),
        .s_done_result(done_result),
        .m_cpl_valid  (m_cpl_valid),
        .m_cpl_ready  (m_cpl_ready),
        .m_cpl_tag    (m_cpl_tag),
        .m_cpl_status (m_cpl_status),
        .m_cpl_result (m_cpl_result),
        .epoch        (q_epoch),
        .occupancy    (q_occupancy),
        .err_spurious (q_err_spurious)
    );

    logic [31:0] cnt_wb_unmaps, cnt_read_hits, cnt_read_misses, cnt_wb_fail;

    logic wb_busy;
    logic [31:0] cnt_slog_err;          // the wbuf's S-Log counter (FRAG_SLOTS = 0 here)
    ats_wbuf #(
        .NUM_SLOTS  (NUM_SLOTS),
        .PAGE_BYTES (PAGE_BYTES),
        .NUM_LBAS   (NUM_LBAS),
        .THRESH_PCT (THRESH_PCT),
        .NUM_WAITERS(NUM_WAITERS),
        .PLP        (PLP),
        .PLP_BUDGET_PAGES(PLP_BUDGET_PAGES)
    ) u_wbuf (
        .clk            (clk),
        .rst            (rst),
        .s_disp_valid   (disp_valid),
        .s_disp_ready   (disp_ready),
        .s_disp_op      (disp_op),
        .s_disp_tag     (disp_tag),
        .s_disp_lba     (disp_lba),
        .s_disp_nlb     (disp_nlb),
        .s_disp_txid    (disp_txid),
        .s_disp_flags   (disp_flags),
        .s_disp_attr    (disp_attr),
        .s_disp_prio    (disp_prio),
        .s_disp_dptr    (disp_dptr),
        .s_disp_aux     (disp_aux),
        .s_disp_epoch   (disp_epoch),
        .m_done_valid   (done_valid),
        .m_done_ready   (done_ready),
        .m_done_tag     (done_tag),
        .m_done_status  (done_status),
        .m_done_result  (done_result),
        .m_hrd_valid    (m_hrd_valid),
        .m_hrd_ready    (m_hrd_ready),
        .m_hrd_addr     (m_hrd_addr),
        .m_hrd_len      (m_hrd_len),
        .s_hrd_valid    (s_hrd_valid),
        .s_hrd_ready    (s_hrd_ready),
        .s_hrd_data     (s_hrd_data),
        .s_hrd_last     (s_hrd_last),
        .m_hwr_valid    (m_hwr_valid),
        .m_hwr_ready    (m_hwr_ready),
        .m_hwr_addr     (m_hwr_addr),
        .m_hwr_data     (m_hwr_data),
        .m_hwr_last     (m_hwr_last),
        .m_wb_valid     (m_wb_valid),
        .m_wb_ready     (m_wb_ready),
        .m_wb_op        (m_wb_op),
        /* verilator lint_off PINCONNECTEMPTY */
        .m_wb_rec       (),                     // TX = 0: always 0
        .m_wb_slog      (),                     // FRAG_SLOTS = 0: always 0
        /* verilator lint_on PINCONNECTEMPTY */
        .m_wb_slot      (m_wb_slot),
        .m_wb_lpn       (m_wb_lpn),
        .m_wb_txid      (m_wb_txid),
        .m_wb_epoch     (m_wb_epoch),
        .m_wb_kind      (m_wb_kind),
        .m_wb_fua       (m_wb_fua),
        .m_wb_tag       (m_wb_tag),
        .m_wbd_valid    (m_wbd_valid),
        .m_wbd_ready    (m_wbd_ready),
        .m_wbd_data     (m_wbd_data),
        .m_wbd_last     (m_wbd_last),
        .s_wbc_valid    (s_wbc_valid),
        .s_wbc_ready    (s_wbc_ready),
        .s_wbc_tag      (s_wbc_tag),
        .s_wbc_status   (s_wbc_status),
        .s_wbc_ppn      (s_wbc_ppn),
        .m_rd_valid     (m_rd_valid),
        .m_rd_ready     (m_rd_ready),
        .m_rd_lpn       (m_rd_lpn),
        .m_rd_txid      (m_rd_txid),
        .m_rd_tag       (m_rd_tag),
        .s_rdd_valid    (s_rdd_valid),
        .s_rdd_ready    (s_rdd_ready),
        .s_rdd_data     (s_rdd_data),
        .s_rdd_last     (s_rdd_last),
        .s_rdd_status   (s_rdd_status),
        .s_rdd_tag      (s_rdd_tag),
        .pwr_fail       (pwr_fail),
        .plp_budget     (16'(PLP_BUDGET_PAGES)),  // runtime budget tied to the design value
        .no_space       (1'b0),                   // (firmware's bit; no firmware here)
        .dump_done      (dump_done),
        .dump_short     (dump_short),
        .cnt_host_pages (cnt_host_pages),
        .cnt_coalesced  (cnt_coalesced),
        .cnt_wb_pages   (cnt_wb_pages),
        .cnt_wb_unmaps  (cnt_wb_unmaps),
        .cnt_media_bytes(cnt_media_bytes),
        .cnt_read_hits  (cnt_read_hits),
        .cnt_read_misses(cnt_read_misses),
        .cnt_wb_fail    (cnt_wb_fail),
        .cnt_proto_err  (cnt_proto_err),
        .cnt_slog_err   (cnt_slog_err),         // FRAG_SLOTS = 0: always 0
        .dirty_pages    (dirty_pages),
        .busy           (wb_busy)       // the SoC core's simulation clock gate only
    );

    // counters the benches do not report (power loss is not part of B2/B3)
    logic unused_ok;
    assign unused_ok = ^{cnt_slog_err, cnt_wb_unmaps, cnt_read_hits, cnt_read_misses, cnt_wb_fail, wb_busy};
endmodule

`resetall
