// SPDX-License-Identifier: Apache-2.0
// ats_fv_track: no beat lost, duplicated or reordered between one input stream and one output
// stream of a block that holds at most CAP beats and passes them on in order (a FIFO view).
// It counts the beats inside the block (cnt) and follows one beat that the solver picks (any beat:
// f_pick is free), remembering its payload and how many beats are ahead of it (pos); when that beat
// leaves, its payload must be the one that came in. A beat dropped, duplicated or swapped changes
// which beat leaves at position 0 and, the payload being free, the solver finds a mismatch.
// The wrapper states its block's internal invariants in terms of cnt / trk / pos / trk_data so that
// k-induction closes.
`default_nettype none

module ats_fv_track #(
    parameter int W   = 8,   // payload bits
    parameter int CW  = 3,   // counter bits (CAP < 2**CW)
    parameter int CAP = 2    // beats the block holds at most
) (
    input  wire logic          clk,
    input  wire logic          rst,
    input  wire logic          ok,         // a reset has been seen (the wrapper's f_ok)
    input  wire logic          in_fire,    // a beat enters (valid && ready)
    input  wire logic [W-1:0]  in_data,
    input  wire logic          out_fire,   // a beat leaves (valid && ready)
    input  wire logic [W-1:0]  out_data,
    output      logic [CW-1:0] cnt,        // beats inside
    output      logic          trk,        // the picked beat is inside
    output      logic [CW-1:0] pos,        // beats ahead of it
    output      logic [W-1:0]  trk_data    // its payload
);
    (* anyseq *) logic f_pick;
    logic [CW-1:0] cnt_q = '0, pos_q = '0;
    logic          trk_q = 1'b0;
    logic [W-1:0]  trk_d_q;
    assign cnt = cnt_q;
    assign trk = trk_q;
    assign pos = pos_q;
    assign trk_data = trk_d_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            cnt_q <= '0;
            trk_q <= 1'b0;
        end else begin
            cnt_q <= cnt_q + CW'(in_fire) - CW'(out_fire);
            if (trk_q && out_fire) begin
                if (pos_q == '0) trk_q <= 1'b0;
                else pos_q <= pos_q - 1'b1;
            end
            if (!trk_q && in_fire && f_pick) begin
                trk_q   <= 1'b1;
                trk_d_q <= in_data;
                pos_q   <= cnt_q - CW'(out_fire);
            end
        end
    end

    always_comb if (ok) begin
        assert (!out_fire || cnt_q != '0);                          // nothing leaves that did not enter
        assert (cnt_q <= CW'(CAP));                                 // never more than CAP inside
        assert (!trk_q || pos_q < cnt_q);
        assert (!(trk_q && out_fire && pos_q == '0) || out_data == trk_d_q);   // in order, intact
    end
endmodule

`default_nettype wire
