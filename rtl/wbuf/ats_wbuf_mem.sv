// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_mem: the write buffer's page memory, 32-bit words, one write port and one read port,
// read latency 2 (address in cycle r, data in cycle r+2). Built from ats_ram_sdp bit slices so that
// every slice is one ECP5 DP16KD and a read never needs a multiplexer across cascaded RAMs:
// DEPTH <= 1K: 2 x 16 bits, <= 2K: 4 x 8, <= 4K: 8 x 4, <= 8K: 16 x 2, <= 16K: 32 x 1 (32 blocks).
// Deeper buffers belong in DRAM (not built yet): refused at elaboration with ATS_ECP5_BRAM.
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
    // slice width: the widest DP16KD shape holding DEPTH words
    localparam int SW = (DEPTH <= 1024) ? 16 : (DEPTH <= 2048) ? 8 : (DEPTH <= 4096) ? 4 :
                        (DEPTH <= 8192) ? 2 : 1;
    localparam int NS = 32 / SW;  // number of slices

    if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_check_depth
        $fatal(1, "ats_wbuf_mem: DEPTH must be a power of two >= 2 (%m)");
    end
`ifdef ATS_ECP5_BRAM
    if (DEPTH > 16384) begin : g_check_bram
        $fatal(1, "ats_wbuf_mem: more than 16K words (64 KiB) of on-chip buffer is not supported (%m)");
    end
`endif

    for (genvar i = 0; i < NS; i++) begin : g_slice
        ats_ram_sdp #(
            .WIDTH(SW),
            .DEPTH(DEPTH)
        ) u_ram (
            .clk    (clk),
            .wr_en  (wr_en),
            .wr_addr(wr_addr),
            .wr_data(wr_data[i*SW +: SW]),
            .rd_addr(rd_addr),
            .rd_data(rd_data[i*SW +: SW])
        );
    end
endmodule

`resetall
