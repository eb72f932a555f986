// SPDX-License-Identifier: Apache-2.0
// ats_nand_ssx_merge: round-robin merge of N valid/ready streams (W payload bits + last) into one
// registered stream that also carries the input number. The input after the last granted one has
// the highest priority (fair: every waiting input is served within N grants). With LOCK = 1 a
// grant of a beat without `last` locks the merge on that input until its `last` beat, so the
// packets (pages) of different inputs are never interleaved; with LOCK = 0 every beat is
// arbitrated on its own (`last` is passed through). One beat a cycle; s_ready depends on m_ready
// (the output register is reloaded when it is free or taken): put an ats_nand_ssx_slice behind it
// where a registered ready is needed. Used by ats_nand_subsys.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_ssx_merge #(
    parameter int N    = 2,   // inputs, 1..16
    parameter int W    = 8,   // payload bits per input
    parameter int LOCK = 0,   // 1: hold the grant from a non-last beat up to the input's last beat
    // derived (do not override)
    parameter int IDX_W = (N > 1) ? $clog2(N) : 1
) (
    input  wire logic             clk,
    input  wire logic             rst,       // synchronous, active high
    input  wire logic [N-1:0]     s_valid,
    output logic      [N-1:0]     s_ready,
    input  wire logic [N*W-1:0]   s_data,    // input i: bits [i*W +: W]
    input  wire logic [N-1:0]     s_last,
    output wire logic             m_valid,
    input  wire logic             m_ready,
    output wire logic [W-1:0]     m_data,
    output wire logic             m_last,
    output wire logic [IDX_W-1:0] m_idx      // input the beat came from
);
    if (N < 1 || N > 16) begin : g_check_n
        $fatal(1, "ats_nand_ssx_merge: N must be 1..16 (%m)");
    end
    if (LOCK != 0 && LOCK != 1) begin : g_check_lock
        $fatal(1, "ats_nand_ssx_merge: LOCK must be 0 or 1 (%m)");
    end

    logic             out_v_q, out_last_q;
    logic [W-1:0]     out_d_q;
    logic [IDX_W-1:0] out_idx_q;
    logic [IDX_W-1:0] last_q;     // last granted input
    logic             lock_q;     // LOCK: the grant stays on last_q until its last beat
    logic             take, any;
    logic [IDX_W-1:0] pick;

    assign m_valid = out_v_q;
    assign m_data  = out_d_q;
    assign m_last  = out_last_q;
    assign m_idx   = out_idx_q;
    assign take    = !out_v_q || m_ready;

    always_comb begin
        any  = 1'b0;
        pick = last_q;
        if (LOCK != 0 && lock_q) begin
            any = s_valid[last_q];
        end else begin
            // first valid input after last_q, wrapping (the loop runs downwards: the last hit wins)
            for (int k = N; k >= 1; k--) begin
                if (s_valid[(int'(last_q) + k) % N]) begin
                    any  = 1'b1;
                    pick = IDX_W'((int'(last_q) + k) % N);
                end
            end
        end
        s_ready = '0;
        if (take && any) s_ready[pick] = 1'b1;
    end

    always_ff @(posedge clk) begin
        if (take && any) begin
            out_d_q    <= s_data[pick*W +: W];
            out_last_q <= s_last[pick];
            out_idx_q  <= pick;
        end
        if (rst) begin
            out_v_q <= 1'b0;
            last_q  <= '0;
            lock_q  <= 1'b0;
        end else if (take) begin
            out_v_q <= any;
            if (any) begin
                last_q <= pick;
                lock_q <= (LOCK != 0) && !s_last[pick];
            end
        end
    end
endmodule

`resetall
