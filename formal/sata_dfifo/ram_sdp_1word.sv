// SPDX-License-Identifier: Apache-2.0
// ats_ram_sdp, formal stand-in: read by formal/sata_dfifo/sata_dfifo.sby in place of
// rtl/common/ats_ram_sdp.sv (same module name, parameters and ports, read latency 2). It keeps one
// word only, the one at address f_a, a constant the solver chooses (anyconst); a read of any other
// address, or of f_a in the cycle it is written (unspecified in the real RAM too), returns arbitrary
// data (anyseq). Every behaviour of the real RAM is one of this one's: formal/ram_sdp proves that a
// read in cycle r returns in r + 2 the last data written at its address before r, and here that
// holds at f_a. A proof that follows one word written at f_a therefore holds for the real RAM, and
// the solver sees WIDTH free RAM bits instead of DEPTH x WIDTH.
// Only the formal flow reads this file (read -formal); it is not part of any .f list.
`default_nettype none

module ats_ram_sdp #(
    parameter int WIDTH = 18,
    parameter int DEPTH = 1024
) (
    input  wire logic                     clk,
    input  wire logic                     wr_en,
    input  wire logic [$clog2(DEPTH)-1:0] wr_addr,
    input  wire logic [WIDTH-1:0]         wr_data,
    input  wire logic [$clog2(DEPTH)-1:0] rd_addr,
    output wire logic [WIDTH-1:0]         rd_data
);
    (* anyconst, keep *) logic [$clog2(DEPTH)-1:0] f_a;    // the address kept
    (* anyseq *)         logic [WIDTH-1:0]         f_junk; // what any other read returns
    logic [WIDTH-1:0] word_q, rd_q, out_q;
    wire logic wr_a = wr_en && wr_addr == f_a;
    always_ff @(posedge clk) begin
        if (wr_a) word_q <= wr_data;
        rd_q  <= (rd_addr == f_a && !wr_a) ? word_q : f_junk;   // the RAM's read register
        out_q <= rd_q;                                           // its output register
    end
    assign rd_data = out_q;
endmodule

`default_nettype wire
