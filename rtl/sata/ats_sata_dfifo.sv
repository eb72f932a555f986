// SPDX-License-Identifier: Apache-2.0
// ats_sata_dfifo: the receive data FIFO of the SATA front end (32-bit words, block RAM) with
// speculative writes: words pushed since the last `commit` are invisible to the reader; `rollback`
// drops them (a Data FIS whose CRC turned out bad never reaches the reader). `commit` and
// `rollback` act on the words pushed before their cycle (a push in the same cycle is included in a
// commit and dropped by a rollback).
//   s_valid/s_ready/s_data  push (s_ready, registered: room for one more word after the last clock's push)
//   m_valid/m_ready/m_data  committed words, in order (2-cycle RAM read hidden by a 4-word queue)
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_dfifo #(
    parameter int DEPTH = 2048   // words; power of two, 512 or 2048 (8-bit slices) / 1024 (16-bit)
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic        s_valid,
    output wire logic        s_ready,
    input  wire logic [31:0] s_data,
    input  wire logic        commit,
    input  wire logic        rollback,
    output wire logic        m_valid,
    input  wire logic        m_ready,
    output wire logic [31:0] m_data
);
    localparam int AW = $clog2(DEPTH);
    localparam int SW = (DEPTH > 1024) ? 8 : 16;   // RAM slice width (one DP16KD each)
    localparam int NS = 32 / SW;

    if ((DEPTH & (DEPTH - 1)) != 0 || DEPTH < 64 || DEPTH > 2048) begin : g_check_depth
        $fatal(1, "ats_sata_dfifo: DEPTH must be a power of two, 64..2048 (%m)");
    end

    logic [AW:0] wr_q, cm_q, rd_q;           // speculative write, committed, issued-read pointers
    logic        v1_q, v2_q;
    logic [31:0] oq_q [4];
    logic [1:0]  oq_wp_q, oq_rp_q;
    logic [2:0]  oq_cnt_q;
    logic [31:0] rd_data;

    wire logic push  = s_valid && s_ready;
    wire logic pop   = m_valid && m_ready;
    wire logic issue = (cm_q != rd_q) && (3'(oq_cnt_q) + 3'(v1_q) + 3'(v2_q) < 3'd4);

    // registered: words held after this clock's push (reads issued this clock not counted) < DEPTH
    logic ready_q;
    assign s_ready = ready_q;
    assign m_valid = (oq_cnt_q != 3'd0);
    assign m_data  = oq_q[oq_rp_q];

    for (genvar i = 0; i < NS; i++) begin : g_ram
        ats_ram_sdp #(.WIDTH(SW), .DEPTH(DEPTH)) u_ram (
            .clk(clk), .wr_en(push), .wr_addr(wr_q[AW-1:0]), .wr_data(s_data[SW*i +: SW]),
            .rd_addr(rd_q[AW-1:0]), .rd_data(rd_data[SW*i +: SW]));
    end

    always_ff @(posedge clk) begin
        if (v2_q) oq_q[oq_wp_q] <= rd_data;
        ready_q <= !rst && ((wr_q - rd_q) + (AW + 1)'(push) < (AW + 1)'(DEPTH));
        if (rst) begin
            wr_q     <= '0;
            cm_q     <= '0;
            rd_q     <= '0;
            v1_q     <= 1'b0;
            v2_q     <= 1'b0;
            oq_wp_q  <= '0;
            oq_rp_q  <= '0;
            oq_cnt_q <= '0;
        end else begin
            if (rollback)  wr_q <= cm_q;
            else if (push) wr_q <= wr_q + 1'b1;
            if (commit)    cm_q <= wr_q + (AW + 1)'(push);
            if (issue) rd_q <= rd_q + 1'b1;
            v1_q <= issue;
            v2_q <= v1_q;
            if (v2_q) oq_wp_q <= oq_wp_q + 1'b1;
            if (pop) oq_rp_q <= oq_rp_q + 1'b1;
            oq_cnt_q <= oq_cnt_q + 3'(v2_q) - 3'(pop);
        end
    end

`ifndef SYNTHESIS
    // the pointers' order (read issued <= committed <= written, at most DEPTH words held), the
    // output queue's room for the reads in flight, and no push into a full FIFO
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (cm_q - rd_q <= wr_q - rd_q && wr_q - rd_q <= (AW + 1)'(DEPTH))
                else $error("ats_sata_dfifo: pointers out of order: wr %0d cm %0d rd %0d (%m)", wr_q, cm_q, rd_q);
            assert (4'(oq_cnt_q) + 4'(v1_q) + 4'(v2_q) <= 4'd4)
                else $error("ats_sata_dfifo: output queue overrun (%m)");
            assert (!push || wr_q - rd_q < (AW + 1)'(DEPTH))
                else $error("ats_sata_dfifo: a word pushed into a full FIFO (%m)");
        end
    end
`endif
endmodule

`resetall
