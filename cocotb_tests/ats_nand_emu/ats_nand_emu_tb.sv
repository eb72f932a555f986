// SPDX-License-Identifier: Apache-2.0
// ats_nand_emu_tb: the emulator and the die model (its reference, sim/nand/ats_nand_die.sv) on the
// same ONFI pins. The pins come from the test (`sel_chan` = 0: a Python ONFI host) or from the
// channel controller ats_nand_chan (`sel_chan` = 1: one way, pin timings in cycles from the die's
// minimums, its data and R/B# from the emulator). Both devices answer on their own outputs (die_*,
// emu_*) and the test compares them. The emulator's DRAM port goes to a Python model (random
// latency and backpressure); its bad-block port is driven by the test. Simulation only.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_emu_tb #(
    parameter int PLANES          = 2,
    parameter int BLOCKS          = 16,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int PAGE_BYTES      = 512,
    parameter int SPARE_BYTES     = 16,
    parameter int T_R_NS          = 40000,
    parameter int T_PROG_NS       = 200000,
    parameter int T_BERS_NS       = 2000000,
    parameter int T_RST_NS        = 5000,
    parameter int ARRAY_TIME_DIV  = 10,
    parameter int CLK_PS          = 10000,
    parameter int SYNC_STAGES     = 1,
    parameter int DRAM_DW         = 64,
    parameter int DRAM_AW         = 16,
    parameter int DRAM_BASE       = 1000,
    // interface minimums of the die model (ps): the host respects them
    parameter int T_WP_PS         = 50000,
    parameter int T_WH_PS         = 30000,
    parameter int T_RP_PS         = 50000,
    parameter int T_REH_PS        = 30000,
    parameter int T_CLS_PS        = 50000,
    parameter int T_CLH_PS        = 20000,
    parameter int T_CS_PS         = 70000,
    parameter int T_DS_PS         = 40000,
    parameter int T_DH_PS         = 20000,
    parameter int T_WB_PS         = 200000,
    parameter int T_RR_PS         = 40000,
    parameter int T_ADL_PS        = 200000,
    parameter int T_WHR_PS        = 120000,
    parameter int T_RHW_PS        = 200000
) (
    input  wire logic                       clk,
    input  wire logic                       rst,
    input  wire logic                       power_ok,
    input  wire logic                       ce_n,
    input  wire logic                       cle,
    input  wire logic                       ale,
    input  wire logic                       we_n,
    input  wire logic                       re_n,
    input  wire logic                       wp_n,
    input  wire logic [7:0]                 dq_i,
    input  wire logic                       sel_chan,     // 1: the pins from ats_nand_chan
    // ats_nand_chan's request side (one way)
    input  wire logic                       s_cmd_valid,
    output wire logic                       s_cmd_ready,
    input  wire logic [2:0]                 s_cmd_op,
    input  wire logic [7:0]                 s_cmd_tag,
    input  wire logic [23:0]                s_cmd_row,
    input  wire logic [15:0]                s_cmd_col,
    input  wire logic [13:0]                s_cmd_len,
    input  wire logic                       s_wdata_valid,
    output wire logic                       s_wdata_ready,
    input  wire logic [7:0]                 s_wdata_data,
    input  wire logic                       s_wdata_last,
    output wire logic                       m_rdata_valid,
    input  wire logic                       m_rdata_ready,
    output wire logic [7:0]                 m_rdata_data,
    output wire logic [7:0]                 m_rdata_tag,
    output wire logic                       m_rdata_last,
    output wire logic                       m_cpl_valid,
    input  wire logic                       m_cpl_ready,
    output wire logic [7:0]                 m_cpl_tag,
    output wire logic [2:0]                 m_cpl_status,
    // the die model
    output wire logic [7:0]                 die_dq_o,
    output wire logic                       die_dq_oe,
    output wire logic                       die_rb_n,
    output wire logic [31:0]                viol_count,
    // the emulator
    output wire logic [7:0]                 emu_dq_o,
    output wire logic                       emu_dq_oe,
    output wire logic                       emu_rb_n,
    output wire logic                       emu_init_done,
    input  wire logic                       s_bad_valid,
    output wire logic                       s_bad_ready,
    input  wire logic [$clog2(BLOCKS)-1:0]  s_bad_block,
    input  wire logic                       s_bad_set,
    output wire logic                       m_dram_cmd_valid,
    input  wire logic                       m_dram_cmd_ready,
    output wire logic                       m_dram_cmd_we,
    output wire logic [DRAM_AW-1:0]         m_dram_cmd_addr,
    output wire logic                       m_dram_wdata_valid,
    input  wire logic                       m_dram_wdata_ready,
    output wire logic [DRAM_DW-1:0]         m_dram_wdata_data,
    output wire logic [DRAM_DW/8-1:0]       m_dram_wdata_we,
    input  wire logic                       s_dram_rdata_valid,
    output wire logic                       s_dram_rdata_ready,
    input  wire logic [DRAM_DW-1:0]         s_dram_rdata_data
);
    // ---- the pins: the test's or the controller's
    localparam int ROW_BYTES = PAGE_BYTES + SPARE_BYTES;
    function automatic int cyc(input int ps);
        cyc = (ps + CLK_PS - 1) / CLK_PS;
    endfunction
    logic       c_ce_n, c_cle, c_ale, c_we_n, c_re_n, c_wp_n;
    logic [7:0] c_dq;
    logic       p_ce_n, p_cle, p_ale, p_we_n, p_re_n, p_wp_n;
    logic [7:0] p_dq;
    assign p_ce_n = sel_chan ? c_ce_n : ce_n;
    assign p_cle  = sel_chan ? c_cle  : cle;
    assign p_ale  = sel_chan ? c_ale  : ale;
    assign p_we_n = sel_chan ? c_we_n : we_n;
    assign p_re_n = sel_chan ? c_re_n : re_n;
    assign p_wp_n = sel_chan ? c_wp_n : wp_n;
    assign p_dq   = sel_chan ? c_dq   : dq_i;

    ats_nand_chan #(
        .WAYS(1), .TAG_W(8), .ROW_W(24), .COL_W(16), .LEN_W(14), .MAX_LEN(ROW_BYTES),
        // the die's minimums in cycles; CLE/ALE/DQ change with WE# falling, so tWP also covers
        // tCLS/tALS/tDS
        .T_WP(cyc(T_WP_PS > T_CLS_PS ? (T_WP_PS > T_DS_PS ? T_WP_PS : T_DS_PS) : (T_CLS_PS > T_DS_PS ? T_CLS_PS : T_DS_PS))),
        .T_WH(cyc(T_WH_PS > T_CLH_PS ? T_WH_PS : T_CLH_PS)), .T_RP(cyc(T_RP_PS)), .T_REH(cyc(T_REH_PS)),
        .T_WB(cyc(T_WB_PS) + 1), .T_WHR(cyc(T_WHR_PS) + 1), .T_ADL(cyc(T_ADL_PS) + 1), .T_RR(cyc(T_RR_PS) + 1),
        .T_RHW(cyc(T_RHW_PS) + 1), .T_CS(cyc(T_CS_PS) + 1)
    ) u_chan (
        .clk, .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_op, .s_cmd_tag, .s_cmd_way(1'b0),
        .s_cmd_row, .s_cmd_col, .s_cmd_len,
        .s_wdata_valid, .s_wdata_ready, .s_wdata_data, .s_wdata_last,
        .m_rdata_valid, .m_rdata_ready, .m_rdata_data, .m_rdata_tag, .m_rdata_last,
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_status,
        .nand_ce_n(c_ce_n), .nand_cle(c_cle), .nand_ale(c_ale), .nand_we_n(c_we_n), .nand_re_n(c_re_n),
        .nand_wp_n(c_wp_n), .nand_dq_o(c_dq), .nand_dq_i(emu_dq_oe ? emu_dq_o : 8'hFF), .nand_rb_n(emu_rb_n)
    );

    ats_nand_die #(
        .PLANES(PLANES), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .PAGE_BYTES(PAGE_BYTES),
        .SPARE_BYTES(SPARE_BYTES), .T_R_NS(T_R_NS), .T_PROG_NS(T_PROG_NS), .T_BERS_NS(T_BERS_NS),
        .T_RST_NS(T_RST_NS), .ARRAY_TIME_DIV(ARRAY_TIME_DIV),
        .T_WP_PS(T_WP_PS), .T_WH_PS(T_WH_PS), .T_RP_PS(T_RP_PS), .T_REH_PS(T_REH_PS), .T_CLS_PS(T_CLS_PS),
        .T_CLH_PS(T_CLH_PS), .T_CS_PS(T_CS_PS), .T_DS_PS(T_DS_PS), .T_DH_PS(T_DH_PS), .T_WB_PS(T_WB_PS),
        .T_RR_PS(T_RR_PS), .T_ADL_PS(T_ADL_PS), .T_WHR_PS(T_WHR_PS), .T_RHW_PS(T_RHW_PS)
    ) u_die (
        // the system reset is a power cut of the emulated die (rtl/nand_emu/README.md "Power loss"):
        // the reference sees it as one
        .clk(clk), .power_ok(power_ok && !rst), .ce_n(p_ce_n), .cle(p_cle), .ale(p_ale), .we_n(p_we_n),
        .re_n(p_re_n), .wp_n(p_wp_n), .dq_i(p_dq), .dq_o(die_dq_o), .dq_oe(die_dq_oe), .rb_n(die_rb_n),
        .viol_count(viol_count)
    );

    ats_nand_emu #(
        .PLANES(PLANES), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .PAGE_BYTES(PAGE_BYTES),
        .SPARE_BYTES(SPARE_BYTES), .T_R_NS(T_R_NS), .T_PROG_NS(T_PROG_NS), .T_BERS_NS(T_BERS_NS),
        .T_RST_NS(T_RST_NS), .ARRAY_TIME_DIV(ARRAY_TIME_DIV), .CLK_PS(CLK_PS), .SYNC_STAGES(SYNC_STAGES),
        .DRAM_DW(DRAM_DW), .DRAM_AW(DRAM_AW), .DRAM_BASE(DRAM_BASE)
    ) u_emu (
        .clk(clk), .rst(rst), .init_done(emu_init_done),
        .power_ok(power_ok), .ce_n(p_ce_n), .cle(p_cle), .ale(p_ale), .we_n(p_we_n), .re_n(p_re_n),
        .wp_n(p_wp_n), .dq_i(p_dq), .dq_o(emu_dq_o), .dq_oe(emu_dq_oe), .rb_n(emu_rb_n),
        .s_bad_valid(s_bad_valid), .s_bad_ready(s_bad_ready), .s_bad_block(s_bad_block), .s_bad_set(s_bad_set),
        .m_dram_cmd_valid(m_dram_cmd_valid), .m_dram_cmd_ready(m_dram_cmd_ready), .m_dram_cmd_we(m_dram_cmd_we),
        .m_dram_cmd_addr(m_dram_cmd_addr), .m_dram_wdata_valid(m_dram_wdata_valid),
        .m_dram_wdata_ready(m_dram_wdata_ready), .m_dram_wdata_data(m_dram_wdata_data),
        .m_dram_wdata_we(m_dram_wdata_we), .s_dram_rdata_valid(s_dram_rdata_valid),
        .s_dram_rdata_ready(s_dram_rdata_ready), .s_dram_rdata_data(s_dram_rdata_data)
    );
endmodule

`resetall
