// SPDX-License-Identifier: Apache-2.0
// ats_nand_chan_tb: test top: one ats_nand_chan driving WAYS ats_nand_die models on a shared bus.
// Small, fast geometry; array times divided by 100 (the brief allows scaled times in tests). The
// controller's pin timings are the dies' mode-0 minimums rounded up to 10 ns clock cycles.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_chan_tb #(
    parameter int WAYS            = 4,
    parameter int PAGE_BYTES      = 256,
    parameter int SPARE_BYTES     = 8,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int BLOCKS          = 8,
    parameter int T_CMDWIN        = 32,
    parameter int SUSP_MIN        = 32     // (the pages here are 264 bytes: the product's 128 scaled)
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              power_ok,
    input  wire logic              s_cmd_valid,
    output wire logic              s_cmd_ready,
    input  wire logic [2:0]        s_cmd_op,
    input  wire logic [7:0]        s_cmd_tag,
    input  wire logic [2:0]        s_cmd_way,
    input  wire logic [23:0]       s_cmd_row,
    input  wire logic [15:0]       s_cmd_col,
    input  wire logic [13:0]       s_cmd_len,
    input  wire logic              s_wdata_valid,
    output wire logic              s_wdata_ready,
    input  wire logic [7:0]        s_wdata_data,
    input  wire logic              s_wdata_last,
    output wire logic              m_rdata_valid,
    input  wire logic              m_rdata_ready,
    output wire logic [7:0]        m_rdata_data,
    output wire logic [7:0]        m_rdata_tag,
    output wire logic              m_rdata_last,
    output wire logic              m_cpl_valid,
    input  wire logic              m_cpl_ready,
    output wire logic [7:0]        m_cpl_tag,
    output wire logic [2:0]        m_cpl_status,
    output wire logic [31:0]       viol_0,
    output wire logic [31:0]       viol_1,
    output wire logic [31:0]       viol_2,
    output wire logic [31:0]       viol_3,
    output logic      [31:0]       susp_cnt     // READ data transfers suspended (SUSP_MIN)
);
    localparam int WAY_W = (WAYS > 1) ? $clog2(WAYS) : 1;
    logic [WAYS-1:0] ce_n, rb_n, oe;
    logic cle, ale, we_n, re_n, wp_n;
    logic [7:0] dq_c, dq_d [WAYS];
    logic [31:0] viol [WAYS];

    ats_nand_chan #(
        .WAYS(WAYS), .TAG_W(8), .ROW_W(24), .COL_W(16), .LEN_W(14), .MAX_LEN(PAGE_BYTES + SPARE_BYTES),
        // 100 MHz: mode-0 tWP 50, tWH 30, tRP 50, tREH 30 ns (+1 cycle margin), tWB 200, tWHR 120,
        // tADL 200, tRR 40, tRHW 200 ns, CE# setup 70 ns
        .T_WP(6), .T_WH(4), .T_RP(6), .T_REH(4), .T_WB(21), .T_WHR(13), .T_ADL(21), .T_RR(5),
        .T_RHW(21), .T_CS(3), .T_CMDWIN(T_CMDWIN), .SUSP_MIN(SUSP_MIN)
    ) u_chan (
        .clk, .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_op, .s_cmd_tag, .s_cmd_way(s_cmd_way[WAY_W-1:0]),
        .s_cmd_row, .s_cmd_col, .s_cmd_len,
        .s_wdata_valid, .s_wdata_ready, .s_wdata_data, .s_wdata_last,
        .m_rdata_valid, .m_rdata_ready, .m_rdata_data, .m_rdata_tag, .m_rdata_last,
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_status,
        .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
        .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
    );

    for (genvar w = 0; w < WAYS; w++) begin : g_die
        ats_nand_die #(
            .DIE_ID(w), .PLANES(1), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
            .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(100)
        ) u_die (
            .clk, .power_ok, .ce_n(ce_n[w]), .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c),
            .dq_o(dq_d[w]), .dq_oe(oe[w]), .rb_n(rb_n[w]), .viol_count(viol[w])
        );
    end

    // the shared bus: whichever die drives it (at most one: CE# selects)
    logic [7:0] dq_bus;
    always_comb begin
        dq_bus = 8'h00;
        for (int w = 0; w < WAYS; w++) if (oe[w]) dq_bus = dq_bus | dq_d[w];
    end
    always_ff @(posedge clk) begin
        if (rst) susp_cnt <= '0;
        else if (u_chan.susp_now) susp_cnt <= susp_cnt + 1'b1;
    end
    assign viol_0 = viol[0];
    assign viol_1 = (WAYS > 1) ? viol[(WAYS > 1) ? 1 : 0] : 32'd0;
    assign viol_2 = (WAYS > 2) ? viol[(WAYS > 2) ? 2 : 0] : 32'd0;
    assign viol_3 = (WAYS > 3) ? viol[(WAYS > 3) ? 3 : 0] : 32'd0;
endmodule

`resetall
