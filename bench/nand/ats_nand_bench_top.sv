// SPDX-License-Identifier: Apache-2.0
// ats_nand_bench_top: benchmark B7 (NAND bandwidth vs channels x ways). The real ats_nand_sched
// feeds NUM_CHAN ats_nand_chan controllers, each with WAYS ats_nand_die models on its ONFI SDR
// bus. A per-channel ats_nand_bench_adapter maps scheduler commands to channel requests, makes
// PROGRAM data and checks READ data; ats_nand_bench_cpl_merge merges the channels' completions
// into the scheduler. The traffic generator and the measurement are in C++ (bench_nand_main.cpp),
// on the scheduler's s_nreq / m_ncpl streams. Plain Verilator, no tracing. See README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_bench_top #(
    parameter int NUM_CHAN    = 8,
    parameter int WAYS        = 4,
    parameter int DEPTH       = 64,       // scheduler request table (64: 2 per die at 8 x 4, B7 README)
    // die geometry
    parameter int BLOCKS      = 4096,     // per die (scheduler block field is 12 bits)
    parameter int PPB_LOG2    = 6,        // 64 pages per block
    parameter int PAGE_BYTES  = 4096,
    parameter int SPARE_BYTES = 224,
    // array times (ns), preset; benchmarks do not scale them
    parameter int T_R_NS      = 40000,
    parameter int T_PROG_NS   = 200000,
    parameter int T_BERS_NS   = 2000000,
    // channel pin timings in clk cycles (100 MHz: 10 ns)
    parameter int C_WP = 1, parameter int C_WH = 1, parameter int C_RP = 1, parameter int C_REH = 1,
    parameter int C_WB = 10, parameter int C_WHR = 6, parameter int C_ADL = 7, parameter int C_RR = 2,
    parameter int C_RHW = 10, parameter int C_CS = 1,
    // interface minimums the dies check (ps): ONFI SDR timing mode 5
    parameter int D_WP = 10000, parameter int D_WH = 7000, parameter int D_RP = 10000,
    parameter int D_REH = 7000, parameter int D_CLS = 10000, parameter int D_CLH = 5000,
    parameter int D_CS = 15000, parameter int D_DS = 7000, parameter int D_DH = 5000,
    parameter int D_WB = 100000, parameter int D_RR = 20000, parameter int D_ADL = 70000,
    parameter int D_WHR = 60000, parameter int D_RHW = 100000
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic        power_ok,
    input  wire logic        die_clk,        // times the dies' array operations and R/B#
    input  wire logic [NUM_CHAN*WAYS-1:0] die_clk_en,  // idle dies get no clock edges (speed)
    input  wire logic [31:0] seed,
    output wire logic        init_done,      // every channel has RESET its dies
    // physical requests (traffic generator)
    input  wire logic        s_nreq_valid,
    output wire logic        s_nreq_ready,
    input  wire logic [7:0]  s_nreq_tag,
    input  wire logic [1:0]  s_nreq_op,
    input  wire logic [2:0]  s_nreq_chan,
    input  wire logic [1:0]  s_nreq_way,
    input  wire logic [11:0] s_nreq_block,
    input  wire logic [7:0]  s_nreq_page,
    // completions
    output wire logic        m_ncpl_valid,
    input  wire logic        m_ncpl_ready,
    output wire logic [7:0]  m_ncpl_tag,
    output wire logic [2:0]  m_ncpl_status,
    // checks
    output wire logic [31:0] viol_total,     // die protocol/timing violations
    output wire logic [31:0] err_data,       // wrong read bytes
    output wire logic [31:0] err_status,     // non-OK channel completions
    output wire logic [31:0] err_proto,      // adapter length/tag/address mismatches
    output wire logic [31:0] err_spurious,   // scheduler dropped completions
    output wire logic [63:0] bytes_bus      // data bytes moved on all buses (read + written)
);
    localparam int WAY_W = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int ROW_BYTES = PAGE_BYTES + SPARE_BYTES;

    if (NUM_CHAN < 1 || NUM_CHAN > 8 || WAYS < 1 || WAYS > 4) begin : g_check
        $fatal(1, "ats_nand_bench_top: NUM_CHAN 1..8, WAYS 1..4 (%m)");
    end

    // ------------------------------------------------------------------ scheduler
    logic [NUM_CHAN-1:0]    cc_valid, cc_ready;
    logic [NUM_CHAN*8-1:0]  cc_tag, cc_page, cc_slot;
    logic [NUM_CHAN*2-1:0]  cc_op, cc_way;
    logic [NUM_CHAN*12-1:0] cc_block;
    logic                   ccpl_valid, ccpl_ready;
    logic [7:0]             ccpl_tag;
    logic [2:0]             ccpl_status;
    logic [7:0]             ncpl_corr;
    logic                   spur;

    ats_nand_sched #(.DEPTH(DEPTH), .NUM_CHAN(NUM_CHAN), .NUM_WAYS(WAYS), .SLOT_W(8)) u_sched (
        .clk, .rst, .reads_first(1'b0),
        .s_nreq_valid, .s_nreq_ready, .s_nreq_tag, .s_nreq_op, .s_nreq_chan, .s_nreq_way,
        .s_nreq_block, .s_nreq_page, .s_nreq_head(1'b0), .s_nreq_prio_read(1'b0), .s_nreq_slot(8'd0),
        .m_ccmd_valid(cc_valid), .m_ccmd_ready(cc_ready), .m_ccmd_tag(cc_tag), .m_ccmd_op(cc_op),
        .m_ccmd_way(cc_way), .m_ccmd_block(cc_block), .m_ccmd_page(cc_page), .m_ccmd_slot(cc_slot),
        .s_ccpl_valid(ccpl_valid), .s_ccpl_ready(ccpl_ready), .s_ccpl_tag(ccpl_tag),
        .s_ccpl_status(ccpl_status), .s_ccpl_corrected(8'd0), .s_ccpl_rel(1'b0), // no page controller: no releases
        .m_ncpl_valid, .m_ncpl_ready, .m_ncpl_tag, .m_ncpl_status, .m_ncpl_corrected(ncpl_corr),
        .err_spurious(spur)
    );

    // ------------------------------------------------------------------ channels
    logic [NUM_CHAN-1:0]    acpl_valid, acpl_ready, idone;
    logic [NUM_CHAN*8-1:0]  acpl_tag;
    logic [NUM_CHAN*3-1:0]  acpl_status;
    logic [31:0]            e_data [NUM_CHAN], e_status [NUM_CHAN], e_proto [NUM_CHAN];
    logic [31:0]            b_rd [NUM_CHAN], b_wr [NUM_CHAN];
    logic [31:0]            viol [NUM_CHAN*WAYS];

    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_chan
        logic             cmd_valid, cmd_ready, wd_valid, wd_ready, wd_last, rd_valid, rd_ready, rd_last;
        logic             cpl_valid, cpl_ready;
        logic [2:0]       cmd_op, cpl_status;
        logic [7:0]       cmd_tag, wd_data, rd_data, rd_tag, cpl_tag;
        logic [WAY_W-1:0] cmd_way;
        logic [23:0]      cmd_row;
        logic [15:0]      cmd_col;
        logic [13:0]      cmd_len;
        logic [WAYS-1:0]  ce_n, rb_n, oe;
        logic             cle, ale, we_n, re_n, wp_n;
        logic [7:0]       dq_c, dq_bus;
        logic [7:0]       dq_d [WAYS];

        ats_nand_bench_adapter #(
            .WAYS(WAYS), .PPB_LOG2(PPB_LOG2), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES)
        ) u_adapt (
            .clk, .rst, .chan_id(3'(c)), .seed, .init_done(idone[c]),
            .s_ccmd_valid(cc_valid[c]), .s_ccmd_ready(cc_ready[c]), .s_ccmd_tag(cc_tag[8*c +: 8]),
            .s_ccmd_op(cc_op[2*c +: 2]), .s_ccmd_way(cc_way[2*c +: 2]), .s_ccmd_block(cc_block[12*c +: 12]),
            .s_ccmd_page(cc_page[8*c +: 8]),
            .m_cmd_valid(cmd_valid), .m_cmd_ready(cmd_ready), .m_cmd_op(cmd_op), .m_cmd_tag(cmd_tag),
            .m_cmd_way(cmd_way), .m_cmd_row(cmd_row), .m_cmd_col(cmd_col), .m_cmd_len(cmd_len),
            .m_wdata_valid(wd_valid), .m_wdata_ready(wd_ready), .m_wdata_data(wd_data), .m_wdata_last(wd_last),
            .s_rdata_valid(rd_valid), .s_rdata_ready(rd_ready), .s_rdata_data(rd_data), .s_rdata_tag(rd_tag),
            .s_rdata_last(rd_last),
            .s_cpl_valid(cpl_valid), .s_cpl_ready(cpl_ready), .s_cpl_tag(cpl_tag), .s_cpl_status(cpl_status),
            .m_cpl_valid(acpl_valid[c]), .m_cpl_ready(acpl_ready[c]), .m_cpl_tag(acpl_tag[8*c +: 8]),
            .m_cpl_status(acpl_status[3*c +: 3]),
            .err_data(e_data[c]), .err_status(e_status[c]), .err_proto(e_proto[c]),
            .bytes_read(b_rd[c]), .bytes_written(b_wr[c])
        );

        ats_nand_chan #(
            .WAYS(WAYS), .TAG_W(8), .ROW_W(24), .COL_W(16), .LEN_W(14), .MAX_LEN(ROW_BYTES),
            .T_WP(C_WP), .T_WH(C_WH), .T_RP(C_RP), .T_REH(C_REH), .T_WB(C_WB), .T_WHR(C_WHR),
            .T_ADL(C_ADL), .T_RR(C_RR), .T_RHW(C_RHW), .T_CS(C_CS)
        ) u_chan (
            .clk, .rst,
            .s_cmd_valid(cmd_valid), .s_cmd_ready(cmd_ready), .s_cmd_op(cmd_op), .s_cmd_tag(cmd_tag),
            .s_cmd_way(cmd_way), .s_cmd_row(cmd_row), .s_cmd_col(cmd_col), .s_cmd_len(cmd_len),
            .s_wdata_valid(wd_valid), .s_wdata_ready(wd_ready), .s_wdata_data(wd_data), .s_wdata_last(wd_last),
            .m_rdata_valid(rd_valid), .m_rdata_ready(rd_ready), .m_rdata_data(rd_data), .m_rdata_tag(rd_tag),
            .m_rdata_last(rd_last),
            .m_cpl_valid(cpl_valid), .m_cpl_ready(cpl_ready), .m_cpl_tag(cpl_tag), .m_cpl_status(cpl_status),
            .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
            .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
        );

        for (genvar w = 0; w < WAYS; w++) begin : g_die
            ats_nand_die #(
                .DIE_ID(c * WAYS + w), .PLANES(1), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(1 << PPB_LOG2),
                .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES),
                .T_R_NS(T_R_NS), .T_PROG_NS(T_PROG_NS), .T_BERS_NS(T_BERS_NS), .ARRAY_TIME_DIV(1),
                .T_WP_PS(D_WP), .T_WH_PS(D_WH), .T_RP_PS(D_RP), .T_REH_PS(D_REH), .T_CLS_PS(D_CLS),
                .T_CLH_PS(D_CLH), .T_CS_PS(D_CS), .T_DS_PS(D_DS), .T_DH_PS(D_DH), .T_WB_PS(D_WB),
                .T_RR_PS(D_RR), .T_ADL_PS(D_ADL), .T_WHR_PS(D_WHR), .T_RHW_PS(D_RHW),
                .VIOL_ERROR(0)
            ) u_die (
                .clk(die_clk & die_clk_en[c * WAYS + w]), .power_ok, .ce_n(ce_n[w]), .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c),
                .dq_o(dq_d[w]), .dq_oe(oe[w]), .rb_n(rb_n[w]), .viol_count(viol[c * WAYS + w])
            );
        end

        // the shared bus: whichever die drives it (CE# selects at most one)
        always_comb begin
            dq_bus = 8'h00;
            for (int w = 0; w < WAYS; w++) if (oe[w]) dq_bus = dq_bus | dq_d[w];
        end
    end

    ats_nand_bench_cpl_merge #(.N(NUM_CHAN)) u_merge (
        .clk, .rst,
        .s_cpl_valid(acpl_valid), .s_cpl_ready(acpl_ready), .s_cpl_tag(acpl_tag), .s_cpl_status(acpl_status),
        .m_cpl_valid(ccpl_valid), .m_cpl_ready(ccpl_ready), .m_cpl_tag(ccpl_tag), .m_cpl_status(ccpl_status)
    );

    // ------------------------------------------------------------------ check totals
    logic [31:0] spur_q;
    always_ff @(posedge clk) begin
        if (spur) spur_q <= spur_q + 1'b1;
        if (rst) spur_q <= '0;
    end

    logic [31:0] s_viol, s_data, s_status, s_proto;
    logic [63:0] s_bytes;
    always_comb begin
        s_viol = '0; s_data = '0; s_status = '0; s_proto = '0; s_bytes = '0;
        for (int i = 0; i < NUM_CHAN * WAYS; i++) s_viol = s_viol + viol[i];
        for (int c = 0; c < NUM_CHAN; c++) begin
            s_data   = s_data + e_data[c];
            s_status = s_status + e_status[c];
            s_proto  = s_proto + e_proto[c];
            s_bytes  = s_bytes + 64'(b_rd[c]) + 64'(b_wr[c]);
        end
    end
    assign viol_total   = s_viol;
    assign err_data     = s_data;
    assign err_status   = s_status;
    assign err_proto    = s_proto;
    assign err_spurious = spur_q;
    assign bytes_bus    = s_bytes;
    assign init_done    = &idone;

    logic unused;
    assign unused = ^{cc_slot, ncpl_corr};
endmodule

`resetall
