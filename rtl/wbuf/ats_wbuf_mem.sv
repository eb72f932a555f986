// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_mem: the write buffer's page memory, 32-bit words, one write port and one read port,
// read latency 2 (address in cycle r, data in cycle r+2). Built from ats_ram_sdp bit slices so that
// every slice is one ECP5 DP16KD and a read never needs a multiplexer across cascaded RAMs:
// DEPTH <= 1K: 2 x 16 bits, <= 2K: 4 x 8, <= 4K: 8 x 4, <= 8K: 16 x 2, <= 16K: 32 x 1 (32 blocks).
// Deeper: banks of 16K words (32 x 1 each) chosen by the address's top bits; a read's bank is
// registered twice beside the latency of 2, so the only added logic is one multiplexer level behind
// the block RAMs' outputs and the latency stays 2. A parent that must stay small checks its own
// depth (ats_wbuf: its page memory within 16K words with ATS_ECP5_BRAM).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_wbuf_mem #(
    parameter int DEPTH = 1024  // 32-bit words; power of two
) (
    input  wire logic                     clk,
    input  wire logic                     wr_en,
    input  wire logic [$clog2(DEPTH)-1:0] wr_addr,
    input  wire logic [31:0]              wr_data,
    input  wire logic [$clog2(DEPTH)-1:0] rd_addr,
    output wire logic [31:0]              rd_data
);
    localparam int BD = (DEPTH > 16384) ? 16384 : DEPTH;   // words a bank
    localparam int NB = DEPTH / BD;                          // banks
    localparam int BA = $clog2(BD);                          // address bits in a bank
    // slice width: the widest DP16KD shape holding BD words
    localparam int SW = (BD <= 1024) ? 16 : (BD <= 2048) ? 8 : (BD <= 4096) ? 4 :
                        (BD <= 8192) ? 2 : 1;
    localparam int NS = 32 / SW;  // number of slices

    if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_check_depth
        $fatal(1, "ats_wbuf_mem: DEPTH must be a power of two >= 2 (%m)");
    end

    logic [31:0] b_rd [NB];
    for (genvar b = 0; b < NB; b++) begin : g_bank
        logic b_we;
        if (NB == 1) begin : g_one
            assign b_we = wr_en;
        end else begin : g_sel
            assign b_we = wr_en && wr_addr[$clog2(DEPTH)-1:BA] == ($clog2(DEPTH)-BA)'(b);
        end
        for (genvar i = 0; i < NS; i++) begin : g_slice
            ats_ram_sdp #(
                .WIDTH(SW),
                .DEPTH(BD)
            ) u_ram (
                .clk    (clk),
                .wr_en  (b_we),
                .wr_addr(wr_addr[BA-1:0]),
                .wr_data(wr_data[i*SW +: SW]),
                .rd_addr(rd_addr[BA-1:0]),
                .rd_data(b_rd[b][i*SW +: SW])
            );
        end
    end
    if (NB == 1) begin : g_rd1
        assign rd_data = b_rd[0];
    end else begin : g_rdn
        localparam int BW = $clog2(NB);
        logic [BW-1:0] bk1_q, bk2_q;   // the read's bank, in step with the RAMs' latency of 2
        always_ff @(posedge clk) begin
            bk1_q <= rd_addr[$clog2(DEPTH)-1:BA];
            bk2_q <= bk1_q;
        end
        assign rd_data = b_rd[bk2_q];
    end
endmodule

`resetall
