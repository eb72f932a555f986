// SPDX-License-Identifier: Apache-2.0
// merge_props: formal wrapper of ats_nand_ssx_merge (rtl/nand/ats_nand_ssx_merge.sv) for N inputs,
// IN_REG 0 or 1 (tasks in merge.sby). Proved, given the stream rules on every s_ input (assumed):
//   - the stream rules on m_ (valid held; data, last, idx stable until taken; valid low after reset);
//   - m_idx < N; for any one input (f_i, chosen by the solver), its beats come out once each, in
//     order, intact, tagged m_idx = f_i (ats_fv_track; 1 beat inside, 2 with IN_REG: its buffer
//     (granted or not: the grant register holds only the index) and the output register);
//   - fairness as the header states: while input f_i offers a beat (with IN_REG: holds one in its
//     buffer) and is not granted, the other inputs are granted at most N - 1 beats.
// f_* wires are the block's registers, tied in by the .sby script (`connect`).
`default_nettype none

module merge_props #(
    parameter int N      = 3,
    parameter int W      = 4,
    parameter int IN_REG = 0,
    localparam int IDX_W = (N > 1) ? $clog2(N) : 1
) (
    input wire logic           clk,
    input wire logic           rst,
    input wire logic [N-1:0]   s_valid,
    input wire logic [N*W-1:0] s_data,
    input wire logic [N-1:0]   s_last,
    input wire logic           m_ready
);
    logic [N-1:0]     s_ready;
    logic             m_valid, m_last;
    logic [W-1:0]     m_data;
    logic [IDX_W-1:0] m_idx;
    ats_nand_ssx_merge #(.N(N), .W(W), .IN_REG(IN_REG)) dut (.*);

    (* keep *) wire logic [N-1:0]     f_a_valid, f_a_ready, f_ib_v, f_ib_last;
    (* keep *) wire logic [N*W-1:0]   f_ib_d;
    (* keep *) wire logic [IDX_W-1:0] f_last_q;
    (* keep *) wire logic             f_g_v;     // IN_REG: the grant register (0 without IN_REG)
    (* keep *) wire logic [IDX_W-1:0] f_g_idx;

    logic f_ok = 1'b0;
    always_ff @(posedge clk) f_ok <= f_ok || rst;
    initial assume (rst);

    for (genvar i = 0; i < N; i++) begin : g_s
        ats_fv_stream #(.W(W + 1), .ENV(1'b1)) u_s (.clk, .rst, .ok(f_ok), .valid(s_valid[i]),
            .ready(s_ready[i]), .data({s_last[i], s_data[i*W +: W]}));
    end
    ats_fv_stream #(.W(W + 1 + IDX_W), .ENV(1'b0)) u_m (.clk, .rst, .ok(f_ok), .valid(m_valid),
        .ready(m_ready), .data({m_idx, m_last, m_data}));

    (* anyconst *) logic [IDX_W-1:0] f_i;   // the input followed
    always_comb assume (int'(f_i) < N);

    localparam int CAP = (IN_REG != 0) ? 2 : 1;
    logic [2:0]   cnt, pos;
    logic         trk;
    logic [W:0]   trk_data;
    ats_fv_track #(.W(W + 1), .CW(3), .CAP(CAP)) u_trk (
        .clk, .rst, .ok(f_ok),
        .in_fire(s_valid[f_i] && s_ready[f_i]), .in_data({s_last[f_i], s_data[f_i*W +: W]}),
        .out_fire(m_valid && m_ready && m_idx == f_i), .out_data({m_last, m_data}),
        .cnt, .trk, .pos, .trk_data);

    // grants to other inputs while f_i's arbitrated beat waits
    logic [IDX_W:0] wait_q = '0;
    wire logic others = |(f_a_valid & f_a_ready & ~(N'(1) << f_i));
    always_ff @(posedge clk) begin
        if (rst || !f_a_valid[f_i] || f_a_ready[f_i]) wait_q <= '0;
        else if (others) wait_q <= wait_q + 1'b1;
    end
    // inputs strictly after last_q up to f_i (round-robin distance, N when last_q == f_i)
    wire logic [IDX_W:0] dist = (f_i == f_last_q) ? (IDX_W + 1)'(N)
                              : (IDX_W + 1)'((int'(f_i) + N - int'(f_last_q)) % N);
    wire logic out_i = m_valid && m_idx == f_i;

    always_comb if (f_ok) begin
        assert (!m_valid || int'(m_idx) < N);
        assert (int'(wait_q) <= N - 1);
        // invariants (induction)
        assert (int'(f_last_q) < N);
        // (IN_REG: an input granted (f_g_v, f_g_idx) is taken before any later grant; last_q is
        // the last grant, so one granted other input is still to be taken ahead of f_i)
        if (f_g_v && f_g_idx == f_i) assert (int'(wait_q) <= N - 1);
        else assert (wait_q == '0 || int'(wait_q) + int'(dist) + int'(f_g_v) <= N);
        if (IN_REG != 0) assert (!f_g_v || f_g_idx == f_last_q);
        if (IN_REG != 0) begin
            assert (cnt == 3'(out_i) + 3'(f_ib_v[f_i]));
            assert (!(trk && pos == 3'd0 && out_i) || {m_last, m_data} == trk_data);
            assert (!(trk && ((pos == 3'd0 && !out_i) || pos == 3'd1))
                    || {f_ib_last[f_i], f_ib_d[f_i*W +: W]} == trk_data);
        end else begin
            assert (cnt == 3'(out_i));
            assert (!(trk && pos == 3'd0) || {m_last, m_data} == trk_data);
        end
    end
endmodule

`default_nettype wire
