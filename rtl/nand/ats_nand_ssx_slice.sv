// SPDX-License-Identifier: Apache-2.0
// ats_nand_ssx_slice: full-throughput register slice (skid buffer) for one valid/ready stream of
// W payload bits. Both s_ready and m_valid / m_data come from registers, so it cuts every
// combinational path through the stream (ready and valid/data), at one beat a cycle.
// Used by ats_nand_subsys on its output streams.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_ssx_slice #(
    parameter int W = 32   // payload bits
) (
    input  wire logic         clk,
    input  wire logic         rst,      // synchronous, active high
    input  wire logic         s_valid,
    output wire logic         s_ready,
    input  wire logic [W-1:0] s_data,
    output wire logic         m_valid,
    input  wire logic         m_ready,
    output wire logic [W-1:0] m_data
);
    if (W < 1) begin : g_check_w
        $fatal(1, "ats_nand_ssx_slice: W must be >= 1 (%m)");
    end

    logic         v_q, sk_v_q;   // output register / skid register hold a beat
    logic [W-1:0] d_q, sk_q;

    assign s_ready = !sk_v_q;
    assign m_valid = v_q;
    assign m_data  = d_q;

    always_ff @(posedge clk) begin
        if (!v_q || m_ready) begin
            // the output register is free at this edge: skid first, else the input
            if (sk_v_q) begin
                d_q <= sk_q;
            end else if (s_valid) begin
                d_q <= s_data;
            end
        end else if (s_valid && !sk_v_q) begin
            sk_q <= s_data;
        end
        if (rst) begin
            v_q    <= 1'b0;
            sk_v_q <= 1'b0;
        end else if (!v_q || m_ready) begin
            v_q    <= sk_v_q || s_valid;
            sk_v_q <= 1'b0;
        end else if (s_valid && !sk_v_q) begin
            sk_v_q <= 1'b1;
        end
    end
endmodule

`resetall
