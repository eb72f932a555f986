// SPDX-License-Identifier: Apache-2.0
// slice_props: formal wrapper of ats_nand_ssx_slice (rtl/nand/ats_nand_ssx_slice.sv).
// Proved: the stream rules on m_ (valid held and payload stable until taken, valid low after a
// reset) given them on s_; every beat out once, in order, intact (ats_fv_track, 2 beats at most);
// full throughput: s_ready is low only when two beats are held (a register slice, no bubble).
// f_* wires are the block's registers, tied in by the .sby script (`connect`): the invariants that
// make k-induction close.
`default_nettype none

module slice_props #(
    parameter int W = 8
) (
    input wire logic         clk,
    input wire logic         rst,
    input wire logic         s_valid,
    input wire logic [W-1:0] s_data,
    input wire logic         m_ready
);
    logic         s_ready, m_valid;
    logic [W-1:0] m_data;
    ats_nand_ssx_slice #(.W(W)) dut (.*);

    (* keep *) wire logic         f_v_q, f_sk_v_q;
    (* keep *) wire logic [W-1:0] f_sk_q;

    logic f_ok = 1'b0;   // a reset has been seen: the block's state is defined
    always_ff @(posedge clk) f_ok <= f_ok || rst;
    initial assume (rst);
    ats_fv_stream #(.W(W), .ENV(1'b1)) u_s (.clk, .rst, .ok(f_ok), .valid(s_valid), .ready(s_ready), .data(s_data));
    ats_fv_stream #(.W(W), .ENV(1'b0)) u_m (.clk, .rst, .ok(f_ok), .valid(m_valid), .ready(m_ready), .data(m_data));

    logic [2:0]   cnt, pos;
    logic         trk;
    logic [W-1:0] trk_data;
    ats_fv_track #(.W(W), .CW(3), .CAP(2)) u_trk (
        .clk, .rst, .ok(f_ok), .in_fire(s_valid && s_ready), .in_data(s_data),
        .out_fire(m_valid && m_ready), .out_data(m_data), .cnt, .trk, .pos, .trk_data);

    always_comb if (f_ok) begin
        assert (s_ready == (cnt < 3'd2));                    // no bubble: takes a beat unless full
        // invariants (induction)
        assert (cnt == 3'(f_v_q) + 3'(f_sk_v_q));
        assert (f_v_q || !f_sk_v_q);
        assert (!(trk && pos == 3'd0) || m_data == trk_data);
        assert (!(trk && pos == 3'd1) || f_sk_q == trk_data);
    end
endmodule

`default_nettype wire
