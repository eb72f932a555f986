// SPDX-License-Identifier: Apache-2.0
// sata_dfifo_props: formal wrapper of ats_sata_dfifo (rtl/sata/ats_sata_dfifo.sv), DEPTH = 64 (the
// smallest the block takes), its two 16-bit RAM slices read as the one-word stand-in
// formal/sata_dfifo/ram_sdp_1word.sv (one address f_a kept, any data elsewhere; the real RAM is
// proved in formal/ram_sdp). Assumed: the stream rules on s_; commit and rollback never in the same
// cycle (the frame layer gives one verdict per FIS). Proved:
//   - the stream rules on m_ (valid held, data stable until taken, valid low after a reset);
//   - speculative writes against an independent model (c committed words, u uncommitted after
//     them): nothing leaves that is not committed (a word pushed since the last commit is never
//     visible); a commit makes the words pushed before it and in its cycle visible; a rollback drops
//     them and a word pushed in its cycle;
//   - every committed word out once, in order, intact: one word the solver picks among those written
//     at f_a, followed through the RAM, the two read stages and the 4-entry output queue; an
//     uncommitted one is dropped by a rollback and never leaves;
//   - no overrun: at most DEPTH words in the RAM (a pushed word always fits), at most 4 in the read
//     stages and the queue; `s_ready` only with room for one more word.
// f_* wires are the block's registers and the stand-in's, tied in by the .sby script.
`default_nettype none

module sata_dfifo_props #(
    parameter int DEPTH = 64,
    localparam int AW = $clog2(DEPTH),
    localparam int CW = AW + 2            // model counters: up to DEPTH + 4 words inside
) (
    input wire logic        clk,
    input wire logic        rst,
    input wire logic        s_valid,
    input wire logic [31:0] s_data,
    input wire logic        commit,
    input wire logic        rollback,
    input wire logic        m_ready
);
    logic        s_ready, m_valid;
    logic [31:0] m_data;
    ats_sata_dfifo #(.DEPTH(DEPTH)) dut (.*);

    (* keep *) wire logic [AW-1:0] f_a0, f_a1;           // the stand-in slices' kept address
    (* keep *) wire logic [15:0]   f_w0, f_w1;           // their word at that address
    (* keep *) wire logic [15:0]   f_rd0, f_out0, f_rd1, f_out1;  // read / output registers
    (* keep *) wire logic [4*32-1:0] f_oq;               // output queue entry i at [i*32 +: 32]
    (* keep *) wire logic [AW:0]   f_wr, f_cm, f_rd;
    (* keep *) wire logic          f_v1, f_v2, f_ready;
    (* keep *) wire logic [1:0]    f_oq_rp, f_oq_wp;
    (* keep *) wire logic [2:0]    f_oq_cnt;

    logic f_ok = 1'b0;
    always_ff @(posedge clk) f_ok <= f_ok || rst;
    initial assume (rst);
    always_comb assume (!(commit && rollback));
    always_comb assume (f_a0 == f_a1);                   // both slices keep the same address

    ats_fv_stream #(.W(32), .ENV(1'b1)) u_s (.clk, .rst, .ok(f_ok), .valid(s_valid),
        .ready(s_ready), .data(s_data));
    ats_fv_stream #(.W(32), .ENV(1'b0)) u_m (.clk, .rst, .ok(f_ok), .valid(m_valid),
        .ready(m_ready), .data(m_data));

    // the model: c committed words (in order, the reader's), u uncommitted after them; one word the
    // solver picks (f_pick) among those written at f_a, followed with its payload and the number of
    // words ahead of it (pos): committed while pos < c
    wire logic push = s_valid && s_ready;
    wire logic pop  = m_valid && m_ready;
    (* anyseq *) logic f_pick;
    logic [CW-1:0] c = '0, u = '0, pos = '0;
    logic          trk = 1'b0;
    logic [31:0]   trk_data;
    logic [AW:0]   trk_p;
    always_ff @(posedge clk) begin
        if (rst) begin
            c   <= '0;
            u   <= '0;
            trk <= 1'b0;
        end else begin
            if (rollback) begin
                c <= c - CW'(pop);
                u <= '0;
            end else if (commit) begin
                c <= c + u + CW'(push) - CW'(pop);
                u <= '0;
            end else begin
                c <= c - CW'(pop);
                u <= u + CW'(push);
            end
            if (trk) begin
                if (rollback && pos >= c) trk <= 1'b0;             // uncommitted: dropped
                else if (pop) begin
                    if (pos == '0) trk <= 1'b0;
                    else pos <= pos - 1'b1;
                end
            end else if (push && !rollback && f_pick && f_wr[AW-1:0] == f_a0) begin
                trk      <= 1'b1;
                trk_data <= s_data;
                trk_p    <= f_wr;
                pos      <= c + u - CW'(pop);
            end
        end
    end

    // where the tracked word is: the output queue, the RAM's output register (v2), its read
    // register (v1), or the RAM at rd + k4 (in_ram; then at f_a, its write pointer trk_p = rd + k4)
    wire logic [CW-1:0] k_oq = CW'(f_oq_cnt);
    wire logic [CW-1:0] k2   = pos - k_oq;
    wire logic [CW-1:0] k3   = k2 - CW'(f_v2);
    wire logic [CW-1:0] k4   = k3 - CW'(f_v1);
    wire logic [1:0]    oq_i = f_oq_rp + pos[1:0];
    wire logic [AW-1:0] ram_i = f_rd[AW-1:0] + k4[AW-1:0];
    // pointer distances, modulo 2 DEPTH, each its own wire: Yosys sizes a cast's operand by the
    // context (CW'(a - b) would subtract at CW bits)
    wire logic [AW:0] d_wc = f_wr - f_cm, d_cr = f_cm - f_rd, d_wr = f_wr - f_rd;
    wire logic in_ram = pos >= k_oq && !(f_v2 && k2 == '0) && !(f_v1 && k3 == '0);
    wire logic [AW:0] d_tp = trk_p - f_rd;               // the tracked word's pointer - rd

    always_comb if (f_ok) begin
        // the promises
        assert (!pop || c != '0);                                   // only committed words leave
        assert (!(trk && pop && pos == '0) || m_data == trk_data);  // in order, intact
        assert (!push || d_wr < (AW + 1)'(DEPTH));                  // a pushed word fits
        assert (!trk || pos < c + u);
        // invariants (induction)
        assert (u == CW'(d_wc));
        assert (c == CW'(d_cr) + CW'(f_v1) + CW'(f_v2) + CW'(f_oq_cnt));
        assert (d_cr <= d_wr);
        // lemmas (the first two follow from the lines above, the third ties the tracked word's write
        // pointer to k4): stated, they take the 1-step induction from 3 min to 10 s
        assert (CW'(d_cr) + CW'(d_wc) == CW'(d_wr));
        assert (c + u == CW'(d_wr) + CW'(f_v1) + CW'(f_v2) + CW'(f_oq_cnt));
        assert (!(trk && in_ram) || (k4 < CW'(d_wr) && d_tp == k4[AW:0]));
        assert (d_wr <= (AW + 1)'(DEPTH));
        assert (!f_ready || d_wr <= (AW + 1)'(DEPTH - 1));
        assert (4'(f_v1) + 4'(f_v2) + 4'(f_oq_cnt) <= 4'd4);
        assert (f_oq_wp == f_oq_rp + f_oq_cnt[1:0]);
        assert (m_valid == (f_oq_cnt != 3'd0));
        if (trk) begin
            if (pos < k_oq) assert (f_oq[oq_i*32 +: 32] == trk_data);
            else if (f_v2 && k2 == '0) assert ({f_out1, f_out0} == trk_data);
            else if (f_v1 && k3 == '0) assert ({f_rd1, f_rd0} == trk_data);
            else assert (ram_i == f_a0 && trk_p[AW-1:0] == f_a0 && {f_w1, f_w0} == trk_data);
        end
    end
endmodule

`default_nettype wire
