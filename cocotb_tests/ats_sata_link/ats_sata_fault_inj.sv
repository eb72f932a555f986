// SPDX-License-Identifier: Apache-2.0
// ats_sata_fault_inj (test bench only): one direction of a PHY-less SATA link, one register
// stage, with one fault injected per arming. Arm: change `seq` with `kind`, `n`, `mask`, `prim`
// set; `hits` counts faults applied. Kinds:
//   1 FLIP  XOR `mask` into data dword number `n` (0 = first after SOF; the CRC is a data dword)
//           of the next frame that has one; junk after CONT is not counted
//   2 DROP  replace the next dword equal to primitive `prim` by ALIGN (the receiver removes
//           ALIGN: as if the dword had been lost)
//   3 CONT  at the next primitive P repeated (P P) that is not HOLD/HOLDA/SOF/EOF/ALIGN/CONT,
//           send CONT instead, then junk data dwords while the input stays P (ALIGN passes),
//           at most `n` of them; the first other dword passes and ends the run
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_fault_inj (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic [31:0] in_data,
    input  wire logic [3:0]  in_k,
    output wire logic [31:0] out_data,
    output wire logic [3:0]  out_k,
    input  wire logic [7:0]  seq,
    input  wire logic [1:0]  kind,
    input  wire logic [11:0] n,
    input  wire logic [31:0] mask,
    input  wire logic [31:0] prim,
    output wire logic [15:0] hits
);
    localparam logic [31:0] ALIGN = 32'h7B4A_4ABC, CONT = 32'h9999_AA7C, SOF = 32'h3737_B57C,
                            EOF = 32'hD5D5_B57C, HOLD = 32'hD5D5_AA7C, HOLDA = 32'h9595_AA7C;

    logic [7:0]  seq_q;
    logic        armed_q, in_frame_q, in_cont_q, run_q;
    logic [11:0] cnt_q;
    logic [31:0] prev_q, lfsr_q, od_q;
    logic [3:0]  ok_q;
    logic [15:0] hits_q;

    wire logic is_p    = (in_k == 4'b0001);
    wire logic is_d    = (in_k == 4'b0000);
    wire logic is_al   = is_p && in_data == ALIGN;
    wire logic rep_ok  = is_p && in_data == prev_q && in_data != HOLD && in_data != HOLDA &&
                         in_data != SOF && in_data != EOF && in_data != ALIGN && in_data != CONT;

    assign out_data = od_q;
    assign out_k    = ok_q;
    assign hits     = hits_q;

    always_ff @(posedge clk) begin
        od_q <= in_data;
        ok_q <= in_k;
        lfsr_q <= {lfsr_q[30:0], lfsr_q[31] ^ lfsr_q[21] ^ lfsr_q[1] ^ lfsr_q[0]};
        if (is_p && !is_al) prev_q <= in_data;
        if (is_p && in_data == SOF) in_frame_q <= 1'b1;
        else if (is_p && in_data == EOF) in_frame_q <= 1'b0;
        if (is_p && in_data == CONT) in_cont_q <= 1'b1;
        else if (is_p && !is_al) in_cont_q <= 1'b0;
        if (rst) begin
            seq_q <= seq;
            armed_q <= 1'b0;
            run_q <= 1'b0;
            hits_q <= '0;
            in_frame_q <= 1'b0;
            in_cont_q <= 1'b0;
            lfsr_q <= 32'h1234_5679;
            prev_q <= '0;
        end else begin
            if (seq != seq_q) begin
                seq_q   <= seq;
                armed_q <= (kind != 2'd0);
                cnt_q   <= '0;
                run_q   <= 1'b0;
            end else if (armed_q) begin
                unique case (kind)
                    2'd1: begin
                        if (is_p && in_data == SOF) cnt_q <= '0;
                        else if (in_frame_q && is_d && !in_cont_q) begin
                            if (cnt_q == n) begin
                                od_q    <= in_data ^ mask;
                                armed_q <= 1'b0;
                                hits_q  <= hits_q + 1'b1;
                            end
                            cnt_q <= cnt_q + 1'b1;
                        end
                    end
                    2'd2: begin
                        if (is_p && in_data == prim) begin
                            od_q    <= ALIGN;
                            armed_q <= 1'b0;
                            hits_q  <= hits_q + 1'b1;
                        end
                    end
                    2'd3: begin
                        if (!run_q) begin
                            if (rep_ok) begin
                                od_q  <= CONT;
                                run_q <= 1'b1;
                                cnt_q <= '0;
                            end
                        end else if (is_al) begin
                            // passes
                        end else if (is_p && in_data == prev_q && cnt_q != n) begin
                            od_q  <= lfsr_q;
                            ok_q  <= 4'b0000;
                            cnt_q <= cnt_q + 1'b1;
                        end else begin
                            // the first other dword passes (a primitive ends the CONT run);
                            // a repeat past the limit is sent as the primitive itself
                            run_q   <= 1'b0;
                            armed_q <= 1'b0;
                            hits_q  <= hits_q + 1'b1;
                        end
                    end
                    default: armed_q <= 1'b0;
                endcase
            end
        end
    end
endmodule

`resetall
