// SPDX-License-Identifier: Apache-2.0
// Contention coverage of test_ats_nvme.py: in every ats_nvme_arb2 (bound by module name), `n` counts
// the rising edges at which both inputs offered a beat (s0_valid and s1_valid). The test reads the
// four shared ports' counters at the end (u_wwarb, u_qarb, u_carb, u_rdarb .u_contend.n): counted in
// the model instead of Python reading 8 signals at every edge. Simulation only.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nvme_tb_contend (
    input wire logic clk,
    input wire logic a,
    input wire logic b
);
`ifndef SYNTHESIS
    int unsigned n = 0;
    always_ff @(posedge clk) if (a && b) n <= n + 1;
`endif
endmodule

bind ats_nvme_arb2 ats_nvme_tb_contend u_contend (.clk, .a(s0_valid), .b(s1_valid));

`resetall
