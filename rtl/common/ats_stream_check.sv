// SPDX-License-Identifier: Apache-2.0
// ats_stream_check: simulation-only checker of one valid/ready stream (the rules the formal proofs
// in formal/ state with ats_fv_stream): after reset, valid is never X; a beat offered and not taken
// (valid && !ready at a clock edge) is offered again at the next edge with the same payload
// (valid held, payload stable until taken). A reset withdraws any beat. Immediate assertions
// (Verilator --assert, which every cocotb build uses): a violation is an %Error that stops the
// simulation and fails the test. Instantiated by test tops or bound (`bind`) to a block's ports;
// empty under SYNTHESIS. NAME is printed in the message.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_stream_check #(
    parameter int    W    = 1,          // payload bits (every field that must stay stable)
    parameter string NAME = "stream"    // printed in the messages
) (
    input wire logic         clk,
    input wire logic         rst,
    input wire logic         valid,
    input wire logic         ready,
    input wire logic [W-1:0] data
);
`ifndef SYNTHESIS
    // held_q starts low (a check before the first reset would see a random register otherwise)
    /* verilator lint_off PROCASSINIT */
    logic         held_q = 1'b0;   // a beat was offered and not taken at the last edge
    /* verilator lint_on PROCASSINIT */
    logic [W-1:0] data_q;
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (!$isunknown(valid))
                else $error("ats_stream_check %s: valid is X (%m)", NAME);
            if (held_q) begin
                assert (valid)
                    else $error("ats_stream_check %s: valid dropped before the beat was taken (%m)", NAME);
                assert (!valid || data == data_q)
                    else $error("ats_stream_check %s: payload changed before the beat was taken: %h -> %h (%m)",
                                NAME, data_q, data);
            end
        end
        held_q <= !rst && valid && !ready;
        data_q <= data;
    end
`else
    logic unused;
    assign unused = ^{clk, rst, valid, ready, data};
`endif
endmodule

`resetall
