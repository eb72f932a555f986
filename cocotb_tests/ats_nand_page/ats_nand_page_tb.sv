// SPDX-License-Identifier: Apache-2.0
// ats_nand_page_tb: test top: one ats_nand_page (its ats_nand_chan, BCH encoder and decoder) driving
// WAYS ats_nand_die models on a shared bus, with a common power_ok (power-cut tests). Small, fast
// geometry; array times divided by 100. The dies use the FAST (timing-mode-5 class) interface
// minimums of atstb.onfi at a 10 ns clock; the controller's cycle counts meet them with margin and
// the dies check them (viol_count). Faults come from ATS_NAND_FAULTS at run time (no rebuild).
// arr_rd_<w> counts the array reads started on die w (READ PAGE confirm 30h latched on the pins).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_page_tb #(
    parameter int WAYS            = 4,
    parameter int PAGE_BYTES      = 1024,
    parameter int SPARE_BYTES     = 64,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int BLOCKS          = 8,
    parameter int DEBUG_OPS       = 1,
    parameter int ERASED_THR      = 8
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              power_ok,
    input  wire logic              s_cmd_valid,
    output wire logic              s_cmd_ready,
    input  wire logic [7:0]        s_cmd_tag,
    input  wire logic [2:0]        s_cmd_op,
    input  wire logic [1:0]        s_cmd_way,
    input  wire logic [11:0]       s_cmd_block,
    input  wire logic [7:0]        s_cmd_page,
    input  wire logic [7:0]        s_cmd_slot,
    input  wire logic              s_wdata_valid,
    output wire logic              s_wdata_ready,
    input  wire logic [31:0]       s_wdata_data,
    input  wire logic              s_wdata_last,
    output wire logic              m_rdata_valid,
    input  wire logic              m_rdata_ready,
    output wire logic [31:0]       m_rdata_data,
    output wire logic [7:0]        m_rdata_tag,
    output wire logic [7:0]        m_rdata_slot,
    output wire logic              m_rdata_last,
    output wire logic              m_cpl_valid,
    input  wire logic              m_cpl_ready,
    output wire logic [7:0]        m_cpl_tag,
    output wire logic [7:0]        m_cpl_slot,
    output wire logic [2:0]        m_cpl_status,
    output wire logic [7:0]        m_cpl_corrected,
    output wire logic              m_cpl_bad_mark,
    output wire logic              m_cpl_rel,
    output wire logic              m_cpl_rd,
    output wire logic [31:0]       viol_0,
    output wire logic [31:0]       viol_1,
    output wire logic [31:0]       viol_2,
    output wire logic [31:0]       viol_3,
    output wire logic [31:0]       arr_rd_0,
    output wire logic [31:0]       arr_rd_1,
    output wire logic [31:0]       arr_rd_2,
    output wire logic [31:0]       arr_rd_3
);
    localparam int WAY_W = (WAYS > 1) ? $clog2(WAYS) : 1;
    logic [WAYS-1:0] ce_n, rb_n, oe;
    logic cle, ale, we_n, re_n, wp_n;
    logic [7:0] dq_c, dq_d [WAYS];
    logic [31:0] viol [WAYS];
    logic [7:0] dq_bus;

    ats_nand_page #(
        .WAYS(WAYS), .TAG_W(8), .SLOT_W(8), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES),
        .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS), .ERASED_THR(ERASED_THR),
        .DEBUG_OPS(DEBUG_OPS),
        // 100 MHz against the FAST set: tWP 10, tWH 7, tRP 10, tREH 7, tWB 100, tWHR 60, tADL 70,
        // tRR 20, tRHW 100, tCS 15 ns
        .T_WP(2), .T_WH(1), .T_RP(2), .T_REH(1), .T_WB(11), .T_WHR(7), .T_ADL(8), .T_RR(3),
        .T_RHW(11), .T_CS(2)
    ) u_page (
        .clk, .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_tag, .s_cmd_op, .s_cmd_way(s_cmd_way[WAY_W-1:0]),
        .s_cmd_block, .s_cmd_page, .s_cmd_slot,
        .s_wdata_valid, .s_wdata_ready, .s_wdata_data, .s_wdata_last,
        .m_rdata_valid, .m_rdata_ready, .m_rdata_data, .m_rdata_tag, .m_rdata_slot, .m_rdata_last,
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_slot, .m_cpl_status, .m_cpl_corrected,
        .m_cpl_bad_mark, .m_cpl_rel, .m_cpl_rd,
        .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
        .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
    );

    for (genvar w = 0; w < WAYS; w++) begin : g_die
        ats_nand_die #(
            .DIE_ID(w), .PLANES(1), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
            .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(100),
            // every die its own fault generators (the model's default seeds are the same for all
            // dies, so every die would fail the same program / erase numbers)
            .BAD_SEED(1 + 16 * w), .PFAIL_SEED(2 + 16 * w), .EFAIL_SEED(3 + 16 * w),
            .FLIP_SEED(4 + 16 * w), .TEAR_SEED(5 + 16 * w),
            .T_WP_PS(10000), .T_WH_PS(7000), .T_RP_PS(10000), .T_REH_PS(7000), .T_CLS_PS(10000),
            .T_CLH_PS(5000), .T_CS_PS(15000), .T_DS_PS(7000), .T_DH_PS(5000), .T_WB_PS(100000),
            .T_RR_PS(20000), .T_ADL_PS(70000), .T_WHR_PS(60000), .T_RHW_PS(100000)
        ) u_die (
            .clk, .power_ok, .ce_n(ce_n[w]), .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c),
            .dq_o(dq_d[w]), .dq_oe(oe[w]), .rb_n(rb_n[w]), .viol_count(viol[w])
        );
    end

    // the shared bus: whichever die drives it (at most one: CE# selects)
    always_comb begin
        dq_bus = 8'h00;
        for (int w = 0; w < WAYS; w++) if (oe[w]) dq_bus = dq_bus | dq_d[w];
    end
    // array reads per die, counted on the pins: a command cycle 30h (CLE, WE# rising, CE# low)
    logic [31:0] arr_rd [4];
    initial for (int w = 0; w < 4; w++) arr_rd[w] = 32'd0;
    always @(posedge we_n) begin
        for (int w = 0; w < WAYS && w < 4; w++)
            if (!ce_n[w] && cle && !ale && dq_c == 8'h30) arr_rd[w] <= arr_rd[w] + 32'd1;
    end
    assign arr_rd_0 = arr_rd[0];
    assign arr_rd_1 = arr_rd[1];
    assign arr_rd_2 = arr_rd[2];
    assign arr_rd_3 = arr_rd[3];
    assign viol_0 = viol[0];
    assign viol_1 = (WAYS > 1) ? viol[(WAYS > 1) ? 1 : 0] : 32'd0;
    assign viol_2 = (WAYS > 2) ? viol[(WAYS > 2) ? 2 : 0] : 32'd0;
    assign viol_3 = (WAYS > 3) ? viol[(WAYS > 3) ? 3 : 0] : 32'd0;
endmodule

`resetall
