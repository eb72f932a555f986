// SPDX-License-Identifier: Apache-2.0
// ats_udp_host_ram: the UDP host link's command buffer, one write port and one read port, 32-bit
// words, read data registered (one cycle). Yosys maps it onto DP16KD blocks (DEPTH / 512 of them).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_udp_host_ram #(
    parameter int DEPTH = 8192          // words, a power of two
) (
    input  wire logic                     clk,
    input  wire logic                     wr_en,
    input  wire logic [$clog2(DEPTH)-1:0] wr_addr,
    input  wire logic [31:0]              wr_data,
    input  wire logic [$clog2(DEPTH)-1:0] rd_addr,
    output logic      [31:0]              rd_data
);
    if ((DEPTH & (DEPTH - 1)) != 0 || DEPTH < 2) begin : g_check
        $fatal(1, "ats_udp_host_ram: DEPTH must be a power of two (%m)");
    end

    logic [31:0] mem [DEPTH];

    always_ff @(posedge clk) begin
        if (wr_en) mem[wr_addr] <= wr_data;
        rd_data <= mem[rd_addr];
    end
endmodule

`resetall
