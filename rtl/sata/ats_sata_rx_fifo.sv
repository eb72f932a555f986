// SPDX-License-Identifier: Apache-2.0
// ats_sata_rx_fifo: synchronous FIFO for the SATA link's received FIS dwords, in block RAM
// (two ats_ram_sdp, read latency 2) with a 4-entry register output queue that hides the RAM
// latency: one word a cycle in and out, first word out 4 cycles after it is written.
// `level` counts every word written and not yet read out (RAM, reads in flight, output queue);
// `s_ready` comes from a register: high when the level was at most DEPTH - 2 a clock earlier (so a
// word always fits; the last entry is used only when the FIFO drains meanwhile: timing over depth).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_rx_fifo #(
    parameter int WIDTH = 35,   // word width; at most 36 (two 18-bit RAM halves)
    parameter int DEPTH = 512   // words; power of two, 16..1024 (one DP16KD per half at x18)
) (
    input  wire logic                     clk,
    input  wire logic                     rst,      // synchronous, active high
    input  wire logic                     s_valid,
    output wire logic                     s_ready,
    input  wire logic [WIDTH-1:0]         s_data,
    output wire logic                     m_valid,
    input  wire logic                     m_ready,
    output wire logic [WIDTH-1:0]         m_data,
    output wire logic [$clog2(DEPTH):0]   level
);
    localparam int AW = $clog2(DEPTH);
    localparam int LW = 18;                 // low half width
    localparam int HW = WIDTH - LW;         // high half width
    if ((DEPTH & (DEPTH - 1)) != 0) begin : g_check_pow2
        $fatal(1, "ats_sata_rx_fifo: DEPTH must be a power of two (%m)");
    end
    if (DEPTH < 16 || DEPTH > 1024) begin : g_check_depth
        $fatal(1, "ats_sata_rx_fifo: DEPTH must be 16..1024 (%m)");
    end
    if (WIDTH <= LW || WIDTH > 2 * LW) begin : g_check_width
        $fatal(1, "ats_sata_rx_fifo: WIDTH must be 19..36 (%m)");
    end

    logic [AW-1:0] wr_ptr_q, rd_ptr_q;
    logic [AW:0]   ram_cnt_q;               // words in RAM whose read is not issued yet
    logic [AW:0]   level_q;
    logic          v1_q, v2_q;              // read issued 1 / 2 cycles ago
    logic [WIDTH-1:0] oq_q [4];             // output queue
    logic [1:0]    oq_wp_q, oq_rp_q;
    logic [2:0]    oq_cnt_q;
    logic [WIDTH-1:0] rd_data;

    wire logic push = s_valid && s_ready;
    wire logic pop  = m_valid && m_ready;
    // a read is issued when the output queue is sure to have room for it when it lands
    wire logic issue = (ram_cnt_q != '0) && (3'(oq_cnt_q) + 3'(v1_q) + 3'(v2_q) < 3'd4);

    logic        ready_q;            // the level was at most DEPTH - 2 a clock ago: a word fits now
    assign s_ready = ready_q;
    assign level   = level_q;
    assign m_valid = (oq_cnt_q != 3'd0);
    assign m_data  = oq_q[oq_rp_q];

    ats_ram_sdp #(.WIDTH(LW), .DEPTH(DEPTH)) u_ram_lo (
        .clk(clk), .wr_en(push), .wr_addr(wr_ptr_q), .wr_data(s_data[LW-1:0]),
        .rd_addr(rd_ptr_q), .rd_data(rd_data[LW-1:0]));
    ats_ram_sdp #(.WIDTH(HW), .DEPTH(DEPTH)) u_ram_hi (
        .clk(clk), .wr_en(push), .wr_addr(wr_ptr_q), .wr_data(s_data[WIDTH-1:LW]),
        .rd_addr(rd_ptr_q), .rd_data(rd_data[WIDTH-1:LW]));

    always_ff @(posedge clk) begin
        if (v2_q) oq_q[oq_wp_q] <= rd_data;
        if (rst) begin
            wr_ptr_q  <= '0;
            rd_ptr_q  <= '0;
            ram_cnt_q <= '0;
            level_q   <= '0;
            ready_q   <= 1'b1;
            v1_q      <= 1'b0;
            v2_q      <= 1'b0;
            oq_wp_q   <= '0;
            oq_rp_q   <= '0;
            oq_cnt_q  <= '0;
        end else begin
            if (push) wr_ptr_q <= wr_ptr_q + 1'b1;
            if (issue) rd_ptr_q <= rd_ptr_q + 1'b1;
            ram_cnt_q <= ram_cnt_q + (AW + 1)'(push) - (AW + 1)'(issue);
            level_q   <= level_q + (AW + 1)'(push) - (AW + 1)'(pop);
            ready_q   <= (level_q <= (AW + 1)'(DEPTH - 2));
            v1_q      <= issue;
            v2_q      <= v1_q;
            if (v2_q) oq_wp_q <= oq_wp_q + 1'b1;
            if (pop) oq_rp_q <= oq_rp_q + 1'b1;
            oq_cnt_q  <= oq_cnt_q + 3'(v2_q) - 3'(pop);
        end
    end

`ifndef SYNTHESIS
    // the header's accounting: every word written and not read out is in the RAM, in a read in
    // flight or in the output queue; a read is issued only with room in the queue for it; a word
    // pushed always fits (s_ready registered from the level a clock earlier)
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (level_q == ram_cnt_q + (AW + 1)'(v1_q) + (AW + 1)'(v2_q) + (AW + 1)'(oq_cnt_q))
                else $error("ats_sata_rx_fifo: level %0d out of step with its parts (%m)", level_q);
            assert (4'(oq_cnt_q) + 4'(v1_q) + 4'(v2_q) <= 4'd4)
                else $error("ats_sata_rx_fifo: output queue overrun (%m)");
            assert (!push || level_q - (AW + 1)'(pop) < (AW + 1)'(DEPTH))
                else $error("ats_sata_rx_fifo: a word pushed into a full FIFO (%m)");
            assert (!pop || oq_cnt_q != 3'd0)
                else $error("ats_sata_rx_fifo: a word popped from an empty queue (%m)");
        end
    end
`endif
endmodule

`resetall
