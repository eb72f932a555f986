// SPDX-License-Identifier: Apache-2.0
// ats_nvme_arb2: two streams into one, round robin, never switching under a beat that is offered
// and not taken, and (BURST = 1) never inside a burst (from its first beat taken until the beat with
// `last` taken). Used by ats_nvme for the front end's shared ports (rtl/nvme/README.md "ats_nvme").
//
// - Unlocked, the input chosen is the one offering; when both offer, the one not chosen the last
//   time a choice was made between the two (`turn`). The output is a mux (no register): m_valid and
//   m_data follow the chosen input in the same cycle, s*_ready = m_ready for the chosen input only.
// - Locked to an input while m_valid is high and m_ready low, and with BURST from a taken beat
//   without `last` until the `last` beat is taken (m_valid is then the locked input's valid: gaps
//   inside a burst keep the lock). With BURST = 0, `last` is ignored.
// - m_sel: the input the output shows (0 or 1).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nvme_arb2 #(
    parameter int W     = 32,    // payload bits
    parameter bit BURST = 1'b0   // keep the choice from a burst's first beat to its last
) (
    input  wire logic         clk,
    input  wire logic         rst,
    input  wire logic         s0_valid,
    output      logic         s0_ready,
    input  wire logic [W-1:0] s0_data,
    input  wire logic         s0_last,
    input  wire logic         s1_valid,
    output      logic         s1_ready,
    input  wire logic [W-1:0] s1_data,
    input  wire logic         s1_last,
    output      logic         m_valid,
    input  wire logic         m_ready,
    output      logic [W-1:0] m_data,
    output      logic         m_last,
    output      logic         m_sel
);
    if (W < 1) begin : g_check_w
        $fatal(1, "ats_nvme_arb2: W must be at least 1 (%m)");
    end

    logic lock_q, sel_q, turn_q;           // turn_q: input 1 goes first when both offer
    logic pick;
    always_comb begin
        if (lock_q)                pick = sel_q;
        else if (s0_valid && s1_valid) pick = turn_q;
        else                       pick = s1_valid;
    end
    assign m_sel    = pick;
    assign m_valid  = pick ? s1_valid : s0_valid;
    assign m_data   = pick ? s1_data : s0_data;
    assign m_last   = pick ? s1_last : s0_last;
    assign s0_ready = !pick && m_ready;
    assign s1_ready = pick && m_ready;

    always_ff @(posedge clk) begin
        if (m_valid && !m_ready) begin
            lock_q <= 1'b1;
        end else if (m_valid && m_ready) begin
            lock_q <= BURST && !m_last;
        end
        // (no beat offered: a burst in progress keeps its lock, an idle output stays unlocked)
        sel_q <= pick;
        if (!lock_q && s0_valid && s1_valid) turn_q <= !pick;
        if (rst) begin
            lock_q <= 1'b0; sel_q <= 1'b0; turn_q <= 1'b0;
        end
    end
endmodule

`resetall
