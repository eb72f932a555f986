// SPDX-License-Identifier: Apache-2.0
// ats_nand_ssx_merge: round-robin merge of N valid/ready streams (W payload bits + last) into one
// registered stream that also carries the input number. The input after the last granted one has
// the highest priority (fair: every waiting input is served within N grants). Every beat is
// arbitrated on its own (`last` is passed through: the packets of different inputs interleave; a
// consumer tells them apart by a field of the payload). One beat a cycle; s_ready depends on m_ready
// (the output register is reloaded when it is free or taken): put an ats_nand_ssx_slice behind it
// where a registered ready is needed. With IN_REG = 1 every input first goes into a one-beat
// buffer and s_ready[i] is that buffer's "empty" register: no path from one input's valid to another
// input's ready (the merge's pick stays behind registers), and the pick is registered on its own
// (a grant register: which input goes next) before the output register takes that input's buffer
// by the registered index: the round-robin decode of the N buffers' valids and the N:1 payload
// mux are in different cycles (Fmax: the decode, 2 x NUM_CHAN wide, was a board's critical path).
// IN_REG = 1 costs two cycles from a buffer's valid to m_valid (one more than IN_REG = 0 after the
// buffer) and allows one beat per input every three cycles, still one beat a cycle in all (for
// rare beats: completions). Used by ats_nand_subsys.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_ssx_merge #(
    parameter int N    = 2,   // inputs, 1..16
    parameter int W    = 8,   // payload bits per input
    parameter int IN_REG = 0, // 1: a one-beat buffer per input, s_ready registered
    // derived (do not override)
    parameter int IDX_W = (N > 1) ? $clog2(N) : 1
) (
    input  wire logic             clk,
    input  wire logic             rst,       // synchronous, active high
    input  wire logic [N-1:0]     s_valid,
    output wire logic [N-1:0]     s_ready,
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
    if (IN_REG != 0 && IN_REG != 1) begin : g_check_inreg
        $fatal(1, "ats_nand_ssx_merge: IN_REG must be 0 or 1 (%m)");
    end

    // the arbitrated inputs: the ports, or (IN_REG) the input buffers
    logic [N-1:0]     a_valid, a_ready, a_last;
    logic [N*W-1:0]   a_data;
    if (IN_REG != 0) begin : g_inreg
        logic [N-1:0]   ib_v_q, ib_last_q;
        logic [N*W-1:0] ib_d_q;
        assign s_ready = ~ib_v_q;
        assign a_valid = ib_v_q;
        assign a_data  = ib_d_q;
        assign a_last  = ib_last_q;
        always_ff @(posedge clk) begin
            for (int i = 0; i < N; i++) begin
                if (!ib_v_q[i]) begin
                    ib_d_q[i*W +: W] <= s_data[i*W +: W];
                    ib_last_q[i]     <= s_last[i];
                end
                if (!ib_v_q[i] && s_valid[i]) ib_v_q[i] <= 1'b1;
                else if (a_ready[i]) ib_v_q[i] <= 1'b0;
            end
            if (rst) ib_v_q <= '0;
        end
    end else begin : g_direct
        assign a_valid = s_valid;
        assign a_data  = s_data;
        assign a_last  = s_last;
        assign s_ready = a_ready;
    end

    logic             out_v_q, out_last_q;
    logic [W-1:0]     out_d_q;
    logic [IDX_W-1:0] out_idx_q;
    logic [IDX_W-1:0] last_q;     // last granted input
    logic             take, any;
    logic [IDX_W-1:0] pick;

    assign m_valid = out_v_q;
    assign m_data  = out_d_q;
    assign m_last  = out_last_q;
    assign m_idx   = out_idx_q;
    assign take    = !out_v_q || m_ready;

    if (IN_REG == 0) begin : g_pick_comb
        always_comb begin
            any  = 1'b0;
            pick = last_q;
            // first valid input after last_q, wrapping (the loop runs downwards: the last hit wins)
            for (int k = N; k >= 1; k--) begin
                if (a_valid[(int'(last_q) + k) % N]) begin
                    any  = 1'b1;
                    pick = IDX_W'((int'(last_q) + k) % N);
                end
            end
            a_ready = '0;
            if (take && any) a_ready[pick] = 1'b1;
        end

        always_ff @(posedge clk) begin
            if (take && any) begin
                out_d_q    <= a_data[pick*W +: W];
                out_last_q <= a_last[pick];
                out_idx_q  <= pick;
            end
            if (rst) begin
                out_v_q <= 1'b0;
                last_q  <= '0;
            end else if (take) begin
                out_v_q <= any;
                if (any) last_q <= pick;
            end
        end
    end else begin : g_pick_reg
        // grant register: input g_idx_q (one-hot g_oh_q, 0 when empty) goes to the output register
        // next; its buffer stays full until then, so it is left out of the next pick
        logic             g_v_q, g_free;
        logic [IDX_W-1:0] g_idx_q;
        logic [N-1:0]     g_oh_q, elig;
        assign g_free = !g_v_q || take;
        assign elig   = a_valid & ~g_oh_q;
        always_comb begin
            any  = 1'b0;
            pick = last_q;
            for (int k = N; k >= 1; k--) begin
                if (elig[(int'(last_q) + k) % N]) begin
                    any  = 1'b1;
                    pick = IDX_W'((int'(last_q) + k) % N);
                end
            end
            a_ready = (take && g_v_q) ? g_oh_q : '0;
        end

        always_ff @(posedge clk) begin
            if (take && g_v_q) begin
                out_d_q    <= a_data[g_idx_q*W +: W];
                out_last_q <= a_last[g_idx_q];
                out_idx_q  <= g_idx_q;
            end
            if (g_free && any) g_idx_q <= pick;
            if (rst) begin
                out_v_q <= 1'b0;
                g_v_q   <= 1'b0;
                g_oh_q  <= '0;
                last_q  <= '0;
            end else begin
                if (take) out_v_q <= g_v_q;
                if (g_free) begin
                    g_v_q  <= any;
                    g_oh_q <= any ? N'(1) << pick : '0;
                    if (any) last_q <= pick;
                end
            end
        end
`ifndef SYNTHESIS
        // (plain immediate assertions: also proved by formal/merge, which reads this file)
        always_ff @(posedge clk) begin
            if (!rst) begin
                assert (g_oh_q == (g_v_q ? N'(1) << g_idx_q : '0));   // one-hot = the index
                assert (!g_v_q || a_valid[g_idx_q]);                  // the granted buffer is full
            end
        end
`endif
    end
endmodule

`resetall
