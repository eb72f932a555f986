// SPDX-License-Identifier: Apache-2.0
// arb2_props: formal wrapper of ats_nvme_arb2 (rtl/nvme/ats_nvme_arb2.sv), BURST = 0 and 1.
// Proved, given the stream rules on s0_ / s1_ (assumed):
//   - the stream rules on m_ (valid held, data / last / sel stable until taken);
//   - every output beat is exactly one input beat, of the input m_sel names, with its payload
//     (the output is a mux: beat for beat in the same cycle; no input beat taken without an output
//     beat, never both inputs at once);
//   - BURST = 1: from a beat without `last` taken until the `last` beat is taken, every beat comes
//     from the same input (m_sel does not change inside a burst);
//   - no starvation: while an input offers a beat and waits, the other input gets at most two
//     beats (BURST = 0) or two bursts (BURST = 1) through (round robin; the first of the two may be
//     the one the output was locked to when the wait began).
`default_nettype none

module arb2_props #(
    parameter int W     = 4,
    parameter bit BURST = 1'b0
) (
    input wire logic         clk,
    input wire logic         rst,
    input wire logic         s0_valid,
    input wire logic [W-1:0] s0_data,
    input wire logic         s0_last,
    input wire logic         s1_valid,
    input wire logic [W-1:0] s1_data,
    input wire logic         s1_last,
    input wire logic         m_ready
);
    logic s0_ready, s1_ready, m_valid, m_last, m_sel;
    logic [W-1:0] m_data;
    ats_nvme_arb2 #(.W(W), .BURST(BURST)) dut (.*);

    (* keep *) wire logic f_lock_q, f_sel_q, f_turn_q;

    logic f_ok = 1'b0;
    always_ff @(posedge clk) f_ok <= f_ok || rst;
    initial assume (rst);

    ats_fv_stream #(.W(W + 1), .ENV(1'b1)) u_s0 (.clk, .rst, .ok(f_ok), .valid(s0_valid),
        .ready(s0_ready), .data({s0_last, s0_data}));
    ats_fv_stream #(.W(W + 1), .ENV(1'b1)) u_s1 (.clk, .rst, .ok(f_ok), .valid(s1_valid),
        .ready(s1_ready), .data({s1_last, s1_data}));
    // the output is a mux: it may show a beat in the cycle of a reset, so no RST_LOW
    ats_fv_stream #(.W(W + 2), .ENV(1'b0), .RST_LOW(1'b0)) u_m (.clk, .rst, .ok(f_ok),
        .valid(m_valid), .ready(m_ready), .data({m_sel, m_last, m_data}));

    wire logic s0_fire = s0_valid && s0_ready;
    wire logic s1_fire = s1_valid && s1_ready;
    wire logic m_fire  = m_valid && m_ready;

    // bursts and waits, from the ports
    logic       burst_q = 1'b0, burst_sel_q;   // inside a burst of input burst_sel_q
    logic [2:0] wait0_q = '0, wait1_q = '0;    // beats (BURST: bursts) of the other input while waiting
    always_ff @(posedge clk) begin
        if (m_fire) begin
            burst_q     <= BURST && !m_last;
            burst_sel_q <= m_sel;
        end
        if (!s0_valid || s0_fire) wait0_q <= '0;
        else if (s1_fire && (!BURST || s1_last)) wait0_q <= wait0_q + 1'b1;
        if (!s1_valid || s1_fire) wait1_q <= '0;
        else if (s0_fire && (!BURST || s0_last)) wait1_q <= wait1_q + 1'b1;
        if (rst) begin
            burst_q <= 1'b0;
            wait0_q <= '0;
            wait1_q <= '0;
        end
    end

    always_comb if (f_ok) begin
        assert (m_fire == (s0_fire || s1_fire));
        assert (!(s0_ready && s1_ready));
        assert (m_valid == (m_sel ? s1_valid : s0_valid));
        assert ({m_last, m_data} == (m_sel ? {s1_last, s1_data} : {s0_last, s0_data}));
        if (BURST) assert (!burst_q || m_sel == burst_sel_q);
        assert (wait0_q <= 3'd2);
        assert (wait1_q <= 3'd2);
        // invariants (induction)
        assert (!burst_q || f_lock_q);
        if (!BURST) assert (!f_lock_q || m_valid || rst);
        assert (!(wait1_q == 3'd1 && f_lock_q && !f_sel_q) || f_turn_q);
        assert (!(wait1_q == 3'd2) || (f_lock_q ? f_sel_q : f_turn_q));
        assert (!(wait0_q == 3'd1 && f_lock_q && f_sel_q) || !f_turn_q);
        assert (!(wait0_q == 3'd2) || (f_lock_q ? !f_sel_q : !f_turn_q));
        assert (!f_lock_q || m_sel == f_sel_q);
        if (BURST) assert (!burst_q || burst_sel_q == f_sel_q);
    end
endmodule

`default_nettype wire
