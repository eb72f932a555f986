// SPDX-License-Identifier: Apache-2.0
// ats_core_bench_top: benchmark top of `make bench-core`. The whole device core ats_ssd_core
// (command queue -> write buffer -> backend -> remap engine + NAND subsystem -> NAND pins) driving
// NUM_CHAN x WAYS ats_nand_die models (sim/nand/ats_nand_array: ONFI SDR timing mode 5 interface
// minimums, array times of the die defaults = the FEMU preset, tR 40 us / tPROG 200 us, not scaled).
// The host (descriptors, completions, host memory) and the firmware's block supply are modelled in
// C++ (bench_core_main.cpp); the firmware port (raw NAND ops, GC) stays idle. Besides the core's ports, a few internal counters are brought out by
// hierarchical reference for the measurement (read hits, dirty / held slots, queue occupancy, and
// for B1 the handshakes a TX_COMMIT goes through: dispatch, writeback record, NAND program, remap
// COMMIT request and response, write-buffer completion).
// Simulation only (Verilator). See README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_core_bench_top #(
    parameter int NUM_CHAN        = 4,
    parameter int WAYS            = 2,
    parameter int PAGE_BYTES      = 4096,
    parameter int SPARE_BYTES     = 224,
    parameter int PAGES_PER_BLOCK = 64,
    parameter int BLOCKS          = 128,
    parameter int NUM_LBAS        = 16384,
    parameter int NUM_TX          = 32,
    parameter int QDEPTH          = 32,
    parameter int NUM_SLOTS       = 16,
    parameter int WIN             = 8,
    parameter int RD_SLOTS        = 32,
    parameter int SCHED_DEPTH     = 32,
    parameter int REMAP_LPN_W     = 32,     // remap_default preset (build/gen/remap_default/params.json)
    parameter int REMAP_PPN_W     = 16,
    parameter int REMAP_TXID_W    = 6,
    parameter int REMAP_CNT_W     = 7,
    parameter int T_BERS_NS       = 2000000,
    // ONFI pin timings in clk cycles: the core's defaults (125 MHz against ONFI mode 5)
    parameter int T_WP = 2, parameter int T_WH = 2, parameter int T_RP = 2, parameter int T_REH = 2,
    parameter int T_WB = 20, parameter int T_WHR = 12, parameter int T_ADL = 14, parameter int T_RR = 4,
    parameter int T_RHW = 20, parameter int T_CS = 4
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic        power_ok,
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
    output wire logic        m_cpl_valid,
    input  wire logic        m_cpl_ready,
    output wire logic [7:0]  m_cpl_tag,
    output wire logic [7:0]  m_cpl_status,
    output wire logic [31:0] m_cpl_result,
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
    input  wire logic        s_free_valid,
    output wire logic        s_free_ready,
    output wire logic [NUM_CHAN*WAYS-1:0] blk_need,
    input  wire logic [2:0]  s_free_chan,
    input  wire logic [1:0]  s_free_way,
    input  wire logic [11:0] s_free_block,
    output wire logic        m_bad_valid,
    input  wire logic        m_bad_ready,
    output wire logic [2:0]  m_bad_chan,
    output wire logic [1:0]  m_bad_way,
    output wire logic [11:0] m_bad_block,
    output wire logic        init_done,
    output wire logic        no_free_block,
    output wire logic [63:0] next_seq,
    output wire logic [31:0] cnt_host_pages,
    output wire logic [31:0] cnt_coalesced,
    output wire logic [31:0] cnt_nand_prog,
    output wire logic [31:0] cnt_nand_read,
    output wire logic [31:0] cnt_ecc_corr,
    output wire logic [31:0] cnt_prog_fail,
    output wire logic [31:0] cnt_read_err,
    output wire logic [31:0] cnt_proto_err,
    output wire logic        err_spurious,
    output wire logic [31:0] cnt_erases,
    output wire logic [31:0] cnt_relocs,
    output wire logic        fwr_valid,          // a firmware-port response (never expected: the port is idle)
    output wire logic [31:0] viol_total,
    // measurement taps (hierarchical references into the core)
    output wire logic [31:0] tap_read_hits,      // write buffer: read pages served from a slot
    output wire logic [31:0] tap_read_misses,    // write buffer: read pages asked of the backend
    output wire logic [7:0]  tap_dirty,          // write buffer: dirty slots not yet issued
    output wire logic [7:0]  tap_held,           // write buffer: dirty + issued, not yet durable
    output wire logic [7:0]  tap_q_occ,          // command queue occupancy
    // event taps (handshakes inside the core) for the read-miss latency breakdown
    output wire logic        tap_rd_fire,        // write buffer -> backend read request (m_rd)
    output wire logic        tap_nreq_rd_fire,   // backend -> NAND subsystem READ request
    output wire logic        tap_nreq_pg_fire,   // backend -> NAND subsystem PROGRAM request
    output wire logic        tap_ncpl_fire,      // NAND subsystem completion (any)
    output wire logic [7:0]  tap_ncpl_tag,
    output wire logic [7:0]  tap_nreq_tag,
    output wire logic        tap_rdd_last_fire,  // backend -> write buffer, last word of a read
    output wire logic [7:0]  tap_rd_tag,         // read id of the m_rd request
    output wire logic [7:0]  tap_rdd_tag,        // read id of the page on s_rdd
    output wire logic        tap_wb_fire,        // write buffer -> backend writeback request
    output wire logic        tap_wbc_fire,       // backend -> write buffer writeback completion
    output wire logic [NUM_CHAN*WAYS-1:0] tap_rb_n, // die R/B# pins (0 = array busy)
    output wire logic [NUM_CHAN-1:0] tap_re_n,   // channel RE# pins (a falling edge: one byte out)
    output wire logic [NUM_CHAN*WAYS-1:0] tap_die_held, // scheduler: die picked, its completion not yet taken
    // event taps for B1 (a TX_COMMIT through the core, +run=b1): the command on its way
    output wire logic        tap_disp_fire,      // command queue -> write buffer dispatch
    output wire logic [3:0]  tap_disp_op,
    output wire logic        tap_done_fire,      // write buffer -> command queue completion
    output wire logic [1:0]  tap_wb_rec,         // rec of the writeback request (2 = commit record)
    output wire logic        tap_nfetch_fire,    // NAND subsystem asks the backend for a page's data
    output wire logic        tap_rq_fire,        // backend -> remap engine request accepted
    output wire logic [3:0]  tap_rq_op,          // (4 = COMMIT)
    output wire logic [7:0]  tap_rq_tag,
    output wire logic        tap_rs_fire,        // remap engine -> backend response taken
    output wire logic [7:0]  tap_rs_tag,
    output wire logic [3:0]  tap_rs_status,
    output wire logic [REMAP_CNT_W-1:0] tap_rs_count,
    output wire logic        tap_commit_active   // remap engine: a COMMIT's entries are being applied
);
    localparam int NDIE = NUM_CHAN * WAYS;
    logic [NDIE-1:0]       ce_n, rb_n;
    logic [NUM_CHAN-1:0]   cle, ale, we_n, re_n, wp_n;
    logic [NUM_CHAN*8-1:0] dq_c, dq_bus;
    logic [8:0]            vc_data;
    logic                  fw_ready, fwd_ready, fwr_last, fwr_mapped;
    logic [7:0]            fwr_status;
    logic [31:0]           fwr_data;
    logic [REMAP_PPN_W-1:0] fwr_ppn;

    ats_ssd_core #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES),
        .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS), .NUM_LBAS(NUM_LBAS), .NUM_TX(NUM_TX),
        .QDEPTH(QDEPTH), .NUM_SLOTS(NUM_SLOTS), .WIN(WIN), .RD_SLOTS(RD_SLOTS), .SCHED_DEPTH(SCHED_DEPTH),
        .REMAP_LPN_W(REMAP_LPN_W), .REMAP_PPN_W(REMAP_PPN_W), .REMAP_TXID_W(REMAP_TXID_W),
        .REMAP_CNT_W(REMAP_CNT_W),
        .T_WP(T_WP), .T_WH(T_WH), .T_RP(T_RP), .T_REH(T_REH), .T_WB(T_WB), .T_WHR(T_WHR),
        .T_ADL(T_ADL), .T_RR(T_RR), .T_RHW(T_RHW), .T_CS(T_CS)
    ) u_core (
        .clk, .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_op, .s_cmd_tag, .s_cmd_lba, .s_cmd_nlb, .s_cmd_txid,
        .s_cmd_flags, .s_cmd_attr, .s_cmd_prio, .s_cmd_dptr, .s_cmd_aux,
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_status, .m_cpl_result,
        .m_hrd_valid, .m_hrd_ready, .m_hrd_addr, .m_hrd_len, .s_hrd_valid, .s_hrd_ready, .s_hrd_data,
        .s_hrd_last, .m_hwr_valid, .m_hwr_ready, .m_hwr_addr, .m_hwr_data, .m_hwr_last,
        .s_free_valid, .s_free_ready, .blk_need, .s_free_chan, .s_free_way, .s_free_block,
        .m_bad_valid, .m_bad_ready, .m_bad_chan, .m_bad_way, .m_bad_block,
        .vc_addr(15'd0), .vc_data, .wb_hold(1'b0), .cpl_seq(), .txs_addr(6'd0), .txs_open(), .txs_seq(),
        // firmware port (raw NAND ops, remap requests, GC relocation): idle in these benchmarks
        .s_fw_valid(1'b0), .s_fw_ready(fw_ready), .s_fw_op(3'd0), .s_fw_chan(3'd0), .s_fw_way(2'd0),
        .s_fw_block(12'd0), .s_fw_page(8'd0), .s_fw_rop(4'd0), .s_fw_txid(6'd0), .s_fw_lpn(32'd0),
        .s_fw_ppn('0), .s_fw_seq(64'd0), .s_fw_epoch(32'd0), .s_fw_flags(8'd0), .s_fw_kind(2'd0),
        .s_fwd_valid(1'b0), .s_fwd_ready(fwd_ready), .s_fwd_data(32'd0), .s_fwd_last(1'b0),
        .m_fwr_valid(fwr_valid), .m_fwr_ready(1'b1), .m_fwr_status(fwr_status), .m_fwr_data(fwr_data),
        .m_fwr_last(fwr_last), .m_fwr_ppn(fwr_ppn), .m_fwr_mapped(fwr_mapped),
        .cnt_erases, .cnt_relocs,
        .pwr_fail(1'b0), .init_done, .no_free_block, .next_seq,
        .cnt_host_pages, .cnt_coalesced, .cnt_nand_prog, .cnt_nand_read, .cnt_ecc_corr, .cnt_prog_fail,
        .cnt_read_err, .cnt_proto_err, .err_spurious,
        .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
        .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
    );

    ats_nand_array #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
        .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(1), .T_BERS_NS(T_BERS_NS)
    ) u_dies (
        .clk, .power_ok, .ce_n, .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c), .dq_o(dq_bus), .rb_n,
        .viol_total
    );

    assign tap_read_hits   = u_core.wb_cnt_hits;
    assign tap_read_misses = u_core.wb_cnt_misses;
    assign tap_dirty       = u_core.wb_dirty;
    assign tap_held        = 8'(u_core.u_wbuf.held_cnt_q);
    assign tap_q_occ       = 8'(u_core.q_occ);
    assign tap_rd_fire       = u_core.rd_valid && u_core.rd_ready;
    assign tap_nreq_rd_fire  = u_core.nq_valid && u_core.nq_ready && u_core.nq_op == 2'd0;
    assign tap_nreq_pg_fire  = u_core.nq_valid && u_core.nq_ready && u_core.nq_op == 2'd1;
    assign tap_ncpl_fire     = u_core.nc_valid && u_core.nc_ready;
    assign tap_ncpl_tag      = u_core.nc_tag;
    assign tap_nreq_tag      = u_core.nq_tag;
    assign tap_rdd_last_fire = u_core.rdd_valid && u_core.rdd_ready && u_core.rdd_last;
    assign tap_rd_tag        = u_core.rd_tag;
    assign tap_rdd_tag       = u_core.rdd_tag;
    assign tap_wb_fire       = u_core.wb_valid && u_core.wb_ready;
    assign tap_wbc_fire      = u_core.wbc_valid && u_core.wbc_ready;
    assign tap_rb_n          = rb_n;
    assign tap_re_n          = re_n;
    assign tap_die_held      = u_core.u_nand.u_sched.busy_q;
    assign tap_disp_fire     = u_core.disp_valid && u_core.disp_ready;
    assign tap_disp_op       = u_core.disp_op;
    assign tap_done_fire     = u_core.done_valid && u_core.done_ready;
    assign tap_wb_rec        = u_core.wb_rec;
    assign tap_nfetch_fire   = u_core.nf_valid && u_core.nf_ready;
    assign tap_rq_fire       = u_core.rq_valid && u_core.rq_ready;
    assign tap_rq_op         = u_core.rq_op;
    assign tap_rq_tag        = u_core.rq_tag;
    assign tap_rs_fire       = u_core.rs_valid && u_core.rs_ready;
    assign tap_rs_tag        = u_core.rs_tag;
    assign tap_rs_status     = u_core.rs_status;
    assign tap_rs_count      = u_core.rs_count;
    assign tap_commit_active = u_core.commit_active;

    logic unused;
    assign unused = ^{vc_data, fw_ready, fwd_ready, fwr_status, fwr_data, fwr_last, fwr_ppn, fwr_mapped};
endmodule

`resetall
