// SPDX-License-Identifier: Apache-2.0
// ats_sata_rdbuf: the SATA front end's read-data buffer (rtl/sata/README.md "ats_sata_rdbuf").
// The core's window writes (s_hwr: bursts of consecutive words, `addr` constant per burst, window
// address = tag * 2^17 + byte offset) are stored in a ring of DEPTH words and cut into segments:
// a segment ends at a burst's last word or after SEGMAX words. Segments wait in a queue of SQ
// entries; the head is offered (seg_valid, its tag, byte offset and words). `seg_start` streams the
// head's words on m_dat (again and again if asked: a Data FIS answered R_ERR is re-sent from here);
// `seg_pop` releases it. `present[t]`: a word of tag t is in the buffer (queued or in an open
// segment): the completion of tag t waits for it to be sent.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_rdbuf #(
    parameter int DEPTH  = 2048,
    parameter int SEGMAX = 1024,
    parameter int SQ     = 8      // segment queue entries (power of two)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    input  wire logic         s_hwr_valid,
    output wire logic         s_hwr_ready,
    input  wire logic [31:0]  s_hwr_addr,
    input  wire logic [31:0]  s_hwr_data,
    input  wire logic         s_hwr_last,
    output wire logic         seg_valid,
    output wire logic [5:0]   seg_tag,
    output wire logic [16:0]  seg_off,
    output wire logic [11:0]  seg_ndw,
    input  wire logic         seg_start,
    input  wire logic         seg_pop,
    output wire logic         m_dat_valid,
    input  wire logic         m_dat_ready,
    output wire logic [31:0]  m_dat_data,
    output wire logic         m_dat_last,
    output wire logic [32:0]  present    // registered: a push shows here 2 clocks later
);
    localparam int AW = $clog2(DEPTH);
    localparam int QW = $clog2(SQ);
    localparam int SW = (DEPTH > 1024) ? 8 : 16;
    localparam int NS = 32 / SW;

    if (SEGMAX * 2 > DEPTH || SEGMAX > 2048) begin : g_check
        $fatal(1, "ats_sata_rdbuf: DEPTH must hold two segments of SEGMAX <= 2048 words (%m)");
    end

    // segment queue
    logic [5:0]    q_tag_q   [SQ];
    logic [16:0]   q_off_q   [SQ];
    logic [11:0]   q_ndw_q   [SQ];
    logic [AW-1:0] q_start_q [SQ];
    logic [QW-1:0] q_wp_q, q_rp_q;
    logic [QW:0]   q_cnt_q;
    // open segment / burst
    logic          o_v_q;
    logic [5:0]    o_tag_q;
    logic [16:0]   o_off_q;
    logic [11:0]   o_ndw_q;
    logic [AW-1:0] o_start_q;
    logic          inb_q;          // inside a burst (a segment was cut at SEGMAX)
    logic [16:0]   b_off_q;        // byte offset of the burst's next word
    logic [AW:0]   wr_q, base_q;   // write pointer, start of the oldest retained word

    wire logic push = s_hwr_valid && s_hwr_ready;
    // registered: room for one more word and one more segment after this clock's push
    logic ready_q;
    assign s_hwr_ready = ready_q;

    wire logic [16:0] w_off = inb_q ? b_off_q : s_hwr_addr[16:0];
    wire logic [11:0] w_ndw = o_v_q ? o_ndw_q + 12'd1 : 12'd1;
    wire logic close = push && (s_hwr_last || w_ndw == 12'(SEGMAX));

    assign seg_valid = (q_cnt_q != '0);
    assign seg_tag   = q_tag_q[q_rp_q];
    assign seg_off   = q_off_q[q_rp_q];
    assign seg_ndw   = q_ndw_q[q_rp_q];

    logic [32:0] pres_d, pres_q;
    logic [SQ-1:0] q_live;
    always_comb begin
        // entry i is live when it lies between the read and write pointers
        for (int i = 0; i < SQ; i++)
            q_live[i] = (QW'(QW'(i) - q_rp_q) < QW'(q_cnt_q)) || (q_cnt_q == (QW + 1)'(SQ));
        pres_d = '0;
        for (int i = 0; i < SQ; i++)
            if (q_live[i] && q_tag_q[i] <= 6'd32) pres_d[q_tag_q[i]] = 1'b1;
        if (o_v_q && o_tag_q <= 6'd32) pres_d[o_tag_q] = 1'b1;
    end
    assign present = pres_q;

    /* verilator lint_off UNUSEDSIGNAL */
    wire logic unused = ^s_hwr_addr[31:23];
    /* verilator lint_on UNUSEDSIGNAL */

    // reader
    logic [AW-1:0] rd_q;
    logic [11:0]   rem_q;          // words still to issue
    logic          v1_q, v2_q, l1_q, l2_q;
    logic [32:0]   oq_q [4];
    logic [1:0]    oq_wp_q, oq_rp_q;
    logic [2:0]    oq_cnt_q;
    logic [31:0]   rd_data;
    wire logic pop = m_dat_valid && m_dat_ready;
    wire logic issue = (rem_q != '0) && (3'(oq_cnt_q) + 3'(v1_q) + 3'(v2_q) < 3'd4);
    assign m_dat_valid = (oq_cnt_q != 3'd0);
    assign m_dat_data  = oq_q[oq_rp_q][31:0];
    assign m_dat_last  = oq_q[oq_rp_q][32];

    for (genvar i = 0; i < NS; i++) begin : g_ram
        ats_ram_sdp #(.WIDTH(SW), .DEPTH(DEPTH)) u_ram (
            .clk(clk), .wr_en(push), .wr_addr(wr_q[AW-1:0]), .wr_data(s_hwr_data[SW*i +: SW]),
            .rd_addr(rd_q), .rd_data(rd_data[SW*i +: SW]));
    end

    always_ff @(posedge clk) begin
        pres_q <= rst ? '0 : pres_d;
        ready_q <= !rst && ((wr_q - base_q) + (AW + 1)'(push) < (AW + 1)'(DEPTH))
                        && (q_cnt_q + (QW + 1)'(close) < (QW + 1)'(SQ));
        if (v2_q) oq_q[oq_wp_q] <= {l2_q, rd_data};
        if (close) begin
            q_tag_q[q_wp_q]   <= o_v_q ? o_tag_q : s_hwr_addr[22:17];
            q_off_q[q_wp_q]   <= o_v_q ? o_off_q : w_off;
            q_ndw_q[q_wp_q]   <= w_ndw;
            q_start_q[q_wp_q] <= o_v_q ? o_start_q : wr_q[AW-1:0];
        end
        if (push && !o_v_q) begin
            o_tag_q   <= s_hwr_addr[22:17];
            o_off_q   <= w_off;
            o_start_q <= wr_q[AW-1:0];
        end
        if (push) begin
            o_ndw_q <= w_ndw;
            b_off_q <= w_off + 17'd4;
        end
        if (seg_start) rd_q <= q_start_q[q_rp_q];
        else if (issue) rd_q <= rd_q + 1'b1;
        if (rst) begin
            q_wp_q <= '0;
            q_rp_q <= '0;
            q_cnt_q <= '0;
            o_v_q <= 1'b0;
            inb_q <= 1'b0;
            wr_q <= '0;
            base_q <= '0;
            rem_q <= '0;
            v1_q <= 1'b0;
            v2_q <= 1'b0;
            l1_q <= 1'b0;
            l2_q <= 1'b0;
            oq_wp_q <= '0;
            oq_rp_q <= '0;
            oq_cnt_q <= '0;
        end else begin
            if (push) begin
                wr_q  <= wr_q + 1'b1;
                o_v_q <= !close;
                inb_q <= !s_hwr_last;
            end
            if (close) q_wp_q <= q_wp_q + 1'b1;
            if (seg_pop) begin
                q_rp_q <= q_rp_q + 1'b1;
                base_q <= base_q + (AW + 1)'(q_ndw_q[q_rp_q]);
            end
            q_cnt_q <= q_cnt_q + (QW + 1)'(close) - (QW + 1)'(seg_pop);
            if (seg_start) rem_q <= q_ndw_q[q_rp_q];
            else if (issue) rem_q <= rem_q - 1'b1;
            v1_q <= issue && !seg_start;
            l1_q <= (rem_q == 12'd1);
            v2_q <= v1_q;
            l2_q <= l1_q;
            if (v2_q) oq_wp_q <= oq_wp_q + 1'b1;
            if (pop) oq_rp_q <= oq_rp_q + 1'b1;
            oq_cnt_q <= oq_cnt_q + 3'(v2_q) - 3'(pop);
        end
    end
endmodule

`resetall
