// SPDX-License-Identifier: Apache-2.0
// ats_nand_array: NUM_CHAN x WAYS ats_nand_die models on NUM_CHAN shared channel buses, as test tops
// wire them under a controller (ats_nand_subsys_tb, ats_ssd_core_tb). Die (c, w) has DIE_ID
// c * WAYS + w, CE# / R/B# bit c * WAYS + w, and fault seeds of its own (k + 16 * DIE_ID for the k-th
// fault kind). Interface timings: the FAST set (minimums for a
// controller at 10 ns, as the channel tests use); array times divided by ARRAY_TIME_DIV. Fault
// rates: 0 here, set at run time with ATS_NAND_FAULTS (sim/nand/ats_nand_store.cpp). The bus read
// back by the controller is the OR of the dies that drive it (CE# selects at most one).
// Simulation only.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_array #(
    parameter int NUM_CHAN        = 2,
    parameter int WAYS            = 2,
    parameter int BLOCKS          = 16,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int PAGE_BYTES      = 512,
    parameter int SPARE_BYTES     = 64,
    parameter int ARRAY_TIME_DIV  = 1,
    parameter int T_BERS_NS       = 2000000
) (
    input  wire logic                       clk,
    input  wire logic                       power_ok,
    input  wire logic [NUM_CHAN*WAYS-1:0]   ce_n,
    input  wire logic [NUM_CHAN-1:0]        cle,
    input  wire logic [NUM_CHAN-1:0]        ale,
    input  wire logic [NUM_CHAN-1:0]        we_n,
    input  wire logic [NUM_CHAN-1:0]        re_n,
    input  wire logic [NUM_CHAN-1:0]        wp_n,
    input  wire logic [NUM_CHAN*8-1:0]      dq_i,      // from the controller
    output logic      [NUM_CHAN*8-1:0]      dq_o,      // to the controller
    output wire logic [NUM_CHAN*WAYS-1:0]   rb_n,
    output logic      [31:0]                viol_total
);
    localparam int NDIE = NUM_CHAN * WAYS;
    logic [NDIE-1:0] oe;
    logic [7:0]      dq_d [NDIE];
    logic [31:0]     viol [NDIE];

    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_chan
        for (genvar w = 0; w < WAYS; w++) begin : g_die
            localparam int D = c * WAYS + w;
            ats_nand_die #(
                .DIE_ID(D), .PLANES(1), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
                .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(ARRAY_TIME_DIV),
                .T_BERS_NS(T_BERS_NS),
                .BAD_SEED(1 + 16 * D), .PFAIL_SEED(2 + 16 * D), .EFAIL_SEED(3 + 16 * D),
                .FLIP_SEED(4 + 16 * D), .TEAR_SEED(5 + 16 * D),
                .T_WP_PS(10000), .T_WH_PS(7000), .T_RP_PS(10000), .T_REH_PS(7000), .T_CLS_PS(10000),
                .T_CLH_PS(5000), .T_CS_PS(15000), .T_DS_PS(7000), .T_DH_PS(5000), .T_WB_PS(100000),
                .T_RR_PS(20000), .T_ADL_PS(70000), .T_WHR_PS(60000), .T_RHW_PS(100000)
            ) u_die (
                .clk, .power_ok, .ce_n(ce_n[D]), .cle(cle[c]), .ale(ale[c]), .we_n(we_n[c]),
                .re_n(re_n[c]), .wp_n(wp_n[c]), .dq_i(dq_i[c*8 +: 8]), .dq_o(dq_d[D]),
                .dq_oe(oe[D]), .rb_n(rb_n[D]), .viol_count(viol[D])
            );
        end
        always_comb begin
            dq_o[c*8 +: 8] = 8'h00;
            for (int w = 0; w < WAYS; w++) if (oe[c*WAYS + w]) dq_o[c*8 +: 8] = dq_o[c*8 +: 8] | dq_d[c*WAYS + w];
        end
    end

    always_comb begin
        viol_total = 32'd0;
        for (int d = 0; d < NDIE; d++) viol_total = viol_total + viol[d];
    end
endmodule

`resetall
