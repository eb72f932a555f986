// SPDX-License-Identifier: Apache-2.0
// ram_sdp_props: formal wrapper of ats_ram_sdp (rtl/common/ats_ram_sdp.sv), behavioural form.
// Proved for any address A (chosen by the solver): a read of A in cycle r returns, in cycle r + 2,
// the data of the last write of A before cycle r (a write of A in cycle r itself leaves the read
// unspecified, as the header says), whatever the writes to other addresses and the reads before.
// f_mem is the RAM's contents, tied in by the .sby script after `memory_map`: the invariant that
// makes k-induction close (the word at A equals the last data written there).
`default_nettype none

module ram_sdp_props #(
    parameter int WIDTH = 3,
    parameter int DEPTH = 4,
    localparam int AW = $clog2(DEPTH)
) (
    input wire logic             clk,
    input wire logic             wr_en,
    input wire logic [AW-1:0]    wr_addr,
    input wire logic [WIDTH-1:0] wr_data,
    input wire logic [AW-1:0]    rd_addr
);
    logic [WIDTH-1:0] rd_data;
    ats_ram_sdp #(.WIDTH(WIDTH), .DEPTH(DEPTH)) dut (.*);

    (* keep *) wire logic [DEPTH*WIDTH-1:0] f_mem;   // word i at [i*WIDTH +: WIDTH]
    (* keep *) wire logic [WIDTH-1:0]       f_rd_q;

    (* anyconst *) logic [AW-1:0] f_a;
    logic             known_q = 1'b0;   // A has been written
    logic [WIDTH-1:0] val_q;            // the last data written to A
    logic             chk1_q = 1'b0, chk2_q = 1'b0;
    logic [WIDTH-1:0] exp1_q, exp2_q;
    always_ff @(posedge clk) begin
        if (wr_en && wr_addr == f_a) begin
            known_q <= 1'b1;
            val_q   <= wr_data;
        end
        chk1_q <= known_q && rd_addr == f_a && !(wr_en && wr_addr == f_a);
        exp1_q <= val_q;
        chk2_q <= chk1_q;
        exp2_q <= exp1_q;
    end

    always_comb begin
        assert (!chk2_q || rd_data == exp2_q);
        // invariants (induction)
        assert (!known_q || f_mem[f_a*WIDTH +: WIDTH] == val_q);
        assert (!chk1_q || f_rd_q == exp1_q);
    end
endmodule

`default_nettype wire
