// SPDX-License-Identifier: Apache-2.0
// Test top of the shared Berlekamp-Massey unit: four ats_bch_dec (EXT_BM = 1) around one
// ats_bch_bm_arb, as ats_nand_subsys connects them (one decoder per channel; LANES as
// ats_nand_page picks it for the default NAND timing). Channel c's streams
// are s<c>_data_*, m<c>_data_*, m<c>_status_*; bm_req / bm_gnt / bm_done are visible for the
// arbiter checks of test_ats_bch_dec_shared.py.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_bch_dec_shared_tb #(
    parameter int M = 13,
    parameter int T = 8,
    parameter int K = 512,
    parameter int LANES = 4     // the page controller's choice at 4 bus cycles a byte
) (
    input  wire logic       clk,
    input  wire logic       rst,
`define ATS_TB_CH_PORTS(c) \
    input  wire logic       s``c``_data_valid, \
    output wire logic       s``c``_data_ready, \
    input  wire logic [7:0] s``c``_data_data, \
    input  wire logic       s``c``_data_last, \
    output wire logic       m``c``_data_valid, \
    input  wire logic       m``c``_data_ready, \
    output wire logic [7:0] m``c``_data_data, \
    output wire logic       m``c``_data_last, \
    output wire logic       m``c``_status_valid, \
    input  wire logic       m``c``_status_ready, \
    output wire logic [7:0] m``c``_status_corrected, \
    output wire logic       m``c``_status_uncorrectable,
    `ATS_TB_CH_PORTS(0)
    `ATS_TB_CH_PORTS(1)
    `ATS_TB_CH_PORTS(2)
    `ATS_TB_CH_PORTS(3)
`undef ATS_TB_CH_PORTS
    output wire logic [3:0] bm_req,
    output wire logic [3:0] bm_gnt,
    output wire logic [3:0] bm_done
);
    localparam int N     = 4;
    localparam int POLY  = (M == 13) ? 'h201B : 'h4443;
    localparam int LEN_W = $clog2(2 * T + 1);

    logic [N*T*M-1:0]   syn;
    logic [(T+1)*M-1:0] lambda;
    logic [LEN_W-1:0]   len;

    ats_bch_bm_arb #(.N(N), .M(M), .POLY(POLY), .T(T)) u_arb (
        .clk, .rst, .req(bm_req), .syn, .gnt(bm_gnt), .done(bm_done), .lambda, .len);

`define ATS_TB_CH_DEC(c) \
    ats_bch_dec #(.M(M), .T(T), .K(K), .OUT_DEPTH(4), .EXT_BM(1'b1), .LANES(LANES)) u_dec``c`` ( \
        .clk, .rst, \
        .s_data_valid(s``c``_data_valid), .s_data_ready(s``c``_data_ready), \
        .s_data_data(s``c``_data_data), .s_data_last(s``c``_data_last), \
        .m_data_valid(m``c``_data_valid), .m_data_ready(m``c``_data_ready), \
        .m_data_data(m``c``_data_data), .m_data_last(m``c``_data_last), \
        .m_status_valid(m``c``_status_valid), .m_status_ready(m``c``_status_ready), \
        .m_status_corrected(m``c``_status_corrected), .m_status_uncorrectable(m``c``_status_uncorrectable), \
        .bm_req(bm_req[c]), .bm_syn(syn[c*T*M +: T*M]), .bm_gnt(bm_gnt[c]), .bm_done(bm_done[c]), \
        .bm_lambda_i(lambda), .bm_len_i(len));
    `ATS_TB_CH_DEC(0)
    `ATS_TB_CH_DEC(1)
    `ATS_TB_CH_DEC(2)
    `ATS_TB_CH_DEC(3)
`undef ATS_TB_CH_DEC
endmodule

`resetall
