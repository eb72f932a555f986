// SPDX-License-Identifier: Apache-2.0
// ats_nand_bench_cpl_merge: round-robin merge of N completion streams {tag, status} into one
// registered stream (the scheduler takes the channels' completions as one stream). One beat per
// cycle at most; the input after the last granted one has the highest priority. Benchmark glue.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_bench_cpl_merge #(
    parameter int N = 8
) (
    input  wire logic           clk,
    input  wire logic           rst,
    input  wire logic [N-1:0]   s_cpl_valid,
    output logic      [N-1:0]   s_cpl_ready,
    input  wire logic [N*8-1:0] s_cpl_tag,
    input  wire logic [N*3-1:0] s_cpl_status,
    output wire logic           m_cpl_valid,
    input  wire logic           m_cpl_ready,
    output wire logic [7:0]     m_cpl_tag,
    output wire logic [2:0]     m_cpl_status
);
    localparam int IDX_W = (N > 1) ? $clog2(N) : 1;

    if (N < 1 || N > 16) begin : g_check_n
        $fatal(1, "ats_nand_bench_cpl_merge: N must be 1..16 (%m)");
    end

    logic             out_v_q;
    logic [7:0]       out_tag_q;
    logic [2:0]       out_st_q;
    logic [IDX_W-1:0] last_q;       // last granted input
    logic             take;
    logic [IDX_W-1:0] pick;
    logic             any;

    assign m_cpl_valid  = out_v_q;
    assign m_cpl_tag    = out_tag_q;
    assign m_cpl_status = out_st_q;
    assign take         = !out_v_q || m_cpl_ready;

    // first valid input after last_q (wrapping)
    always_comb begin
        any = 1'b0;
        pick = '0;
        for (int k = N; k >= 1; k--) begin
            logic [IDX_W-1:0] i;
            i = IDX_W'((int'(last_q) + k) % N);
            if (s_cpl_valid[i]) begin
                any = 1'b1;
                pick = i;
            end
        end
        s_cpl_ready = '0;
        if (take && any) s_cpl_ready[pick] = 1'b1;
    end

    always_ff @(posedge clk) begin
        if (take) begin
            out_v_q <= any;
            if (any) begin
                out_tag_q <= s_cpl_tag[8*pick +: 8];
                out_st_q  <= s_cpl_status[3*pick +: 3];
                last_q    <= pick;
            end
        end
        if (rst) begin
            out_v_q <= 1'b0;
            last_q  <= '0;
        end
    end
endmodule

`resetall
