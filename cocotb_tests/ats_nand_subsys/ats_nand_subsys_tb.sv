// SPDX-License-Identifier: Apache-2.0
// ats_nand_subsys_tb: test top: one ats_nand_subsys (scheduler + NUM_CHAN page controllers) driving
// NUM_CHAN x WAYS ats_nand_die models (one shared bus per channel), common power_ok. The per-channel
// s_ndata streams are broken out as s_ndata<c>_* (c < 4) so that cocotb drives each as its own
// stream. Dies: FAST interface minimums at a 10 ns clock (as the page test), array times divided
// by ARRAY_TIME_DIV, DIE_ID = c * WAYS + w, own fault seeds per die. Coverage counters (test only):
//   cov_chan_ovl: cycles in which >= 2 channels had a data strobe (WE#/RE# falling with CLE = ALE
//                 = 0 and a CE# low) within the last 16 cycles (two channels move data at once);
//   cov_die_ovl:  cycles in which some channel had >= 2 dies busy (R/B# low) after init_done;
//   viol_total:   protocol violations seen by all dies.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_subsys_tb #(
    parameter int NUM_CHAN        = 2,
    parameter int WAYS            = 2,
    parameter int DEPTH           = 16,
    parameter int PAGE_BYTES      = 1024,
    parameter int SPARE_BYTES     = 64,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int BLOCKS          = 8,
    parameter int ARRAY_TIME_DIV  = 10,
    parameter int T_BERS_NS       = 300000   // block erase (ns, before ARRAY_TIME_DIV)
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              power_ok,
    input  wire logic              reads_first,
    input  wire logic              s_nreq_valid,
    output wire logic              s_nreq_ready,
    input  wire logic [7:0]        s_nreq_tag,
    input  wire logic [1:0]        s_nreq_op,
    input  wire logic [2:0]        s_nreq_chan,
    input  wire logic [1:0]        s_nreq_way,
    input  wire logic [11:0]       s_nreq_block,
    input  wire logic [7:0]        s_nreq_page,
    input  wire logic              s_nreq_head,
    input  wire logic              s_nreq_prio_read,
    input  wire logic [7:0]        s_nreq_slot,
    output wire logic              m_nfetch_valid,
    input  wire logic              m_nfetch_ready,
    output wire logic [2:0]        m_nfetch_chan,
    output wire logic [7:0]        m_nfetch_tag,
    output wire logic [7:0]        m_nfetch_slot,
    input  wire logic              s_ndata0_valid,
    output wire logic              s_ndata0_ready,
    input  wire logic [31:0]       s_ndata0_data,
    input  wire logic              s_ndata0_last,
    input  wire logic              s_ndata1_valid,
    output wire logic              s_ndata1_ready,
    input  wire logic [31:0]       s_ndata1_data,
    input  wire logic              s_ndata1_last,
    input  wire logic              s_ndata2_valid,
    output wire logic              s_ndata2_ready,
    input  wire logic [31:0]       s_ndata2_data,
    input  wire logic              s_ndata2_last,
    input  wire logic              s_ndata3_valid,
    output wire logic              s_ndata3_ready,
    input  wire logic [31:0]       s_ndata3_data,
    input  wire logic              s_ndata3_last,
    output wire logic              m_ndata_valid,
    input  wire logic              m_ndata_ready,
    output wire logic [31:0]       m_ndata_data,
    output wire logic              m_ndata_last,
    output wire logic [7:0]        m_ndata_tag,
    output wire logic [7:0]        m_ndata_slot,
    output wire logic [2:0]        m_ndata_chan,
    output wire logic [15:0]       m_ndata_widx,
    output wire logic              m_ncpl_valid,
    input  wire logic              m_ncpl_ready,
    output wire logic [7:0]        m_ncpl_tag,
    output wire logic [2:0]        m_ncpl_status,
    output wire logic [7:0]        m_ncpl_corrected,
    output wire logic              m_ncpl_bad_mark,
    output wire logic              err_spurious,
    output wire logic              init_done,
    output wire logic [15:0]       rb_n_all,
    output wire logic [31:0]       viol_total,
    output logic      [31:0]       cov_chan_ovl,
    output logic      [31:0]       cov_die_ovl,
    output logic      [31:0]       spurious_cnt
);
    localparam int NDIE = NUM_CHAN * WAYS;
    if (NUM_CHAN > 4 || NDIE > 16) begin : g_check
        $fatal(1, "ats_nand_subsys_tb: at most 4 channels and 16 dies (%m)");
    end
    logic [NUM_CHAN-1:0]       nd_valid, nd_ready, nd_last;
    logic [NUM_CHAN*32-1:0]    nd_data;
    logic [3:0]                v4, l4, r4;
    logic [127:0]              d4;
    assign v4 = {s_ndata3_valid, s_ndata2_valid, s_ndata1_valid, s_ndata0_valid};
    assign l4 = {s_ndata3_last, s_ndata2_last, s_ndata1_last, s_ndata0_last};
    assign d4 = {s_ndata3_data, s_ndata2_data, s_ndata1_data, s_ndata0_data};
    assign nd_valid = v4[NUM_CHAN-1:0];
    assign nd_last  = l4[NUM_CHAN-1:0];
    assign nd_data  = d4[NUM_CHAN*32-1:0];
    always_comb begin
        r4 = '0;
        r4[NUM_CHAN-1:0] = nd_ready;
    end
    assign {s_ndata3_ready, s_ndata2_ready, s_ndata1_ready, s_ndata0_ready} = r4;

    logic [NDIE-1:0]      ce_n, rb_n;
    logic [NUM_CHAN-1:0]  cle, ale, we_n, re_n, wp_n;
    logic [NUM_CHAN*8-1:0] dq_c, dq_bus;

    ats_nand_subsys #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .DEPTH(DEPTH), .SLOT_W(8), .PAGE_BYTES(PAGE_BYTES),
        .SPARE_BYTES(SPARE_BYTES), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS),
        // 100 MHz against the FAST set (as ats_nand_page_tb)
        .T_WP(2), .T_WH(1), .T_RP(2), .T_REH(1), .T_WB(11), .T_WHR(7), .T_ADL(8), .T_RR(3),
        .T_RHW(11), .T_CS(2)
    ) u_dut (
        .clk, .rst, .reads_first,
        .s_nreq_valid, .s_nreq_ready, .s_nreq_tag, .s_nreq_op, .s_nreq_chan, .s_nreq_way,
        .s_nreq_block, .s_nreq_page, .s_nreq_head, .s_nreq_prio_read, .s_nreq_slot,
        .m_nfetch_valid, .m_nfetch_ready, .m_nfetch_chan, .m_nfetch_tag, .m_nfetch_slot,
        .s_ndata_valid(nd_valid), .s_ndata_ready(nd_ready), .s_ndata_data(nd_data),
        .s_ndata_last(nd_last),
        .m_ndata_valid, .m_ndata_ready, .m_ndata_data, .m_ndata_last, .m_ndata_tag, .m_ndata_slot,
        .m_ndata_chan, .m_ndata_widx,
        .m_ncpl_valid, .m_ncpl_ready, .m_ncpl_tag, .m_ncpl_status, .m_ncpl_corrected,
        .m_ncpl_bad_mark, .err_spurious, .init_done,
        .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
        .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
    );

    ats_nand_array #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
        .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(ARRAY_TIME_DIV),
        .T_BERS_NS(T_BERS_NS)
    ) u_dies (
        .clk, .power_ok, .ce_n, .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c), .dq_o(dq_bus), .rb_n,
        .viol_total
    );
    assign rb_n_all = 16'(rb_n) | ~16'((1 << NDIE) - 1);

    // stream rules on every m_ port (rtl/common/ats_stream_check.sv; the block's merges and slices
    // inside are checked by the binds at the end of this file)
    ats_stream_check #(.W(19), .NAME("m_nfetch")) u_chk_nfetch (.clk, .rst, .valid(m_nfetch_valid),
        .ready(m_nfetch_ready), .data({m_nfetch_chan, m_nfetch_tag, m_nfetch_slot}));
    ats_stream_check #(.W(68), .NAME("m_ndata")) u_chk_ndata (.clk, .rst, .valid(m_ndata_valid),
        .ready(m_ndata_ready), .data({m_ndata_data, m_ndata_last, m_ndata_tag, m_ndata_slot,
                                      m_ndata_chan, m_ndata_widx}));
    ats_stream_check #(.W(20), .NAME("m_ncpl")) u_chk_ncpl (.clk, .rst, .valid(m_ncpl_valid),
        .ready(m_ncpl_ready), .data({m_ncpl_tag, m_ncpl_status, m_ncpl_corrected, m_ncpl_bad_mark}));

    // coverage (behavioural, test only)
    logic [NUM_CHAN-1:0] we_p, re_p;
    logic [4:0]          act [NUM_CHAN];
    initial begin
        cov_chan_ovl = 32'd0;
        cov_die_ovl  = 32'd0;
        spurious_cnt = 32'd0;
        for (int c = 0; c < NUM_CHAN; c++) act[c] = 5'd0;
        we_p = '1;
        re_p = '1;
    end
    always @(posedge clk) begin
        int n_act, n_busy;
        logic die_ovl;
        n_act = 0;
        die_ovl = 1'b0;
        for (int c = 0; c < NUM_CHAN; c++) begin
            if (((we_p[c] && !we_n[c]) || (re_p[c] && !re_n[c])) && !cle[c] && !ale[c] &&
                ce_n[c*WAYS +: WAYS] != '1) begin
                act[c] <= 5'd16;
            end else if (act[c] != 5'd0) begin
                act[c] <= act[c] - 5'd1;
            end
            if (act[c] != 5'd0) n_act++;
            n_busy = 0;
            for (int w = 0; w < WAYS; w++) if (!rb_n[c*WAYS + w]) n_busy++;
            if (n_busy >= 2) die_ovl = 1'b1;
        end
        we_p <= we_n;
        re_p <= re_n;
        if (!rst && n_act >= 2) cov_chan_ovl <= cov_chan_ovl + 32'd1;
        if (!rst && power_ok && init_done && die_ovl) cov_die_ovl <= cov_die_ovl + 32'd1;
        if (!rst && err_spurious) spurious_cnt <= spurious_cnt + 32'd1;
    end
endmodule

// the stream rules inside ats_nand_subsys: the output of every merge and slice, and what the
// channels hand to them (the slices' inputs)
bind ats_nand_ssx_merge ats_stream_check #(.W(W + 1 + IDX_W), .NAME("ssx_merge m_")) u_chk_m (
    .clk, .rst, .valid(m_valid), .ready(m_ready), .data({m_data, m_last, m_idx}));
bind ats_nand_ssx_slice ats_stream_check #(.W(W), .NAME("ssx_slice m_")) u_chk_m (
    .clk, .rst, .valid(m_valid), .ready(m_ready), .data(m_data));
bind ats_nand_ssx_slice ats_stream_check #(.W(W), .NAME("ssx_slice s_")) u_chk_s (
    .clk, .rst, .valid(s_valid), .ready(s_ready), .data(s_data));

`resetall
