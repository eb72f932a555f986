// SPDX-License-Identifier: Apache-2.0
// ats_bch_enc: systematic binary BCH encoder for one NAND sector, one byte a cycle. Passes the K
// data bytes of a sector through (registered) while a byte-parallel LFSR divides them by the
// generator polynomial g(x), then appends the P = M*T/8 parity bytes (remainder, x^(R-1) first) and
// marks the last parity byte with m_data_last. Bit 7 of a byte is sent first (higher degree).
// Code, bit order and generator polynomials: rtl/nand/README_ecc.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets the remainder's byte step as a look-up table filled at time 0 from lfsr8
// (linear: the shifted remainder XOR the image of its top byte XOR the input byte; README_ecc.md
// "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_bch_enc #(
    parameter int M = 13,   // Galois field GF(2^M): 13 (512 B sectors) or 14 (1 KiB sectors)
    parameter int T = 8,    // correctable bits per sector; M*T must be a multiple of 8
    parameter int K = 512   // data bytes per sector
) (
    input  wire logic       clk,
    input  wire logic       rst,             // synchronous, active high
    // sector data in: K bytes, s_data_last on the K-th (checked in simulation only)
    input  wire logic       s_data_valid,
    output wire logic       s_data_ready,
    input  wire logic [7:0] s_data_data,
    input  wire logic       s_data_last,
    // codeword out: K data bytes then P parity bytes, m_data_last on the last parity byte
    output wire logic       m_data_valid,
    input  wire logic       m_data_ready,
    output wire logic [7:0] m_data_data,
    output wire logic       m_data_last
);
    localparam int R    = M * T;                  // parity bits (= deg g for the supported codes)
    localparam int P    = R / 8;                  // parity bytes
    localparam int CNT_W = $clog2((K > P) ? K : P);

    // generator polynomials without their x^R term (computed by cocotb_tests/lib/atstb/bch_model.py,
    // which the tests use to check every codeword; the decoder never uses g, so a wrong entry fails
    // the decoder tests too)
    function automatic logic [255:0] gen_low(input int m, input int t);
        logic [255:0] g;
        g = '0;
        if (m == 13 && t == 8)  g = 256'h15f914e07b0c138741c5c4fb23;
        if (m == 13 && t == 16) g = 256'hcbbe3f0dbec563b5fb20ff07f7aa45ff026fb378a601cdd0fdd1;
        if (m == 14 && t == 4)  g = 256'h4274b322a225b3;
        if (m == 14 && t == 8)  g = 256'hfe7b97fe53843c7659e273cd5c2d;
        if (m == 14 && t == 12) g = 256'h20bba549566ba23004bf345d7adc79eae3330c560d;
        if (m == 14 && t == 16) g = 256'hcc240c704aa34914c2a29120594f7fd7e3c3d59844e9ed89aa8376cf;
        gen_low = g;
    endfunction
    localparam logic [255:0] GEN_ALL = gen_low(M, T);
    localparam logic [R-1:0] GEN     = GEN_ALL[R-1:0];

    if (GEN_ALL == '0) begin : g_check_code
        $fatal(1, "ats_bch_enc: no generator polynomial for M=%0d T=%0d (%m)", M, T);
    end
    if (8 * (K + P) > (1 << M) - 1) begin : g_check_len
        $fatal(1, "ats_bch_enc: K + parity exceeds the code length 2^M-1 (%m)");
    end
    if (K < 2) begin : g_check_k
        $fatal(1, "ats_bch_enc: K must be at least 2 (%m)");
    end

    // remainder after one more byte, bit 7 first: r <- (r*x + d_b*x^R) mod g, eight times
    function automatic logic [R-1:0] lfsr8(input logic [R-1:0] r, input logic [7:0] d);
        logic [R-1:0] x;
        logic fb;
        x = r;
        for (int b = 7; b >= 0; b--) begin
            fb = x[R-1] ^ d[b];
            x  = {x[R-2:0], 1'b0} ^ (fb ? GEN : '0);
        end
        lfsr8 = x;
    endfunction
`ifndef ATS_SYNTH_FORM
    // simulation form: lfsr8(r, d) = (r << 8) ^ lfsr8(0, r[R-1 -: 8] ^ d), entry v = lfsr8(0, v)
    logic [R-1:0] lfsr_t [256];
    initial begin
        for (int v = 0; v < 256; v++) lfsr_t[v] = lfsr8('0, 8'(v));
    end
`endif

    logic             par_mode_q, par_mode_d;    // emitting parity bytes
    logic [CNT_W-1:0] cnt_q, cnt_d;              // byte index in the data / parity part
    logic [R-1:0]     rem_q, rem_d;              // LFSR remainder

    // Output: a 2-entry FIFO (two registers, write / read pointers). The encoder advances when the
    // FIFO has space by a registered flag (space_q), so m_data_ready drives only the read pointer
    // and the count: no combinational path from the consumer into the encoder's clock enables
    // (remainder, counter, mode), Fmax. With a ready consumer the FIFO holds one byte and the
    // encoder still moves a byte a cycle; latency stays one cycle.
    logic [8:0]       of_q [2];                  // {last, data}
    logic             of_wp_q, of_rp_q;
    logic [1:0]       of_n_q, of_n_d;
    logic             space_q;                   // of_n_q != 2
    logic             ov_q;                      // of_n_q != 0
    logic             push, pop, s_fire, adv;
    logic [7:0]       push_data;
    logic             push_last;
    assign s_data_ready = !par_mode_q && space_q;
    assign s_fire       = s_data_valid && s_data_ready;
    assign adv          = par_mode_q && space_q;         // a parity byte leaves
    assign push         = s_fire || adv;
    assign pop          = ov_q && m_data_ready;
    assign of_n_d       = of_n_q + {1'b0, push} - {1'b0, pop};
    assign push_data    = par_mode_q ? rem_q[R-1 -: 8] : s_data_data;
    assign push_last    = par_mode_q && (cnt_q == CNT_W'(P - 1));

    always_comb begin
        par_mode_d = par_mode_q;
        cnt_d      = cnt_q;
        rem_d      = rem_q;
        if (s_fire) begin
`ifdef ATS_SYNTH_FORM
            rem_d = lfsr8(rem_q, s_data_data);           // rem_q is 0 at a sector start
`else
            rem_d = {rem_q[R-9:0], 8'h00} ^ lfsr_t[rem_q[R-1 -: 8] ^ s_data_data];
`endif
            cnt_d = cnt_q + 1'b1;
            if (cnt_q == CNT_W'(K - 1)) begin
                par_mode_d = 1'b1;
                cnt_d      = '0;
            end
        end else if (adv) begin
            rem_d = {rem_q[R-9:0], 8'h00};
            cnt_d = cnt_q + 1'b1;
            if (cnt_q == CNT_W'(P - 1)) begin
                par_mode_d = 1'b0;
                cnt_d      = '0;
            end
        end
    end

    always_ff @(posedge clk) begin
        // the remainder is 0 after reset and after its last parity byte has been shifted out
        rem_q <= rst ? '0 : rem_d;
        if (push) of_q[of_wp_q] <= {push_last, push_data};
        if (rst) begin
            par_mode_q <= 1'b0;
            cnt_q      <= '0;
            of_wp_q    <= 1'b0;
            of_rp_q    <= 1'b0;
            of_n_q     <= '0;
            space_q    <= 1'b0;                          // ready one cycle after reset
            ov_q       <= 1'b0;
        end else begin
            par_mode_q <= par_mode_d;
            cnt_q      <= cnt_d;
            if (push) of_wp_q <= !of_wp_q;
            if (pop)  of_rp_q <= !of_rp_q;
            of_n_q     <= of_n_d;
            space_q    <= (of_n_d != 2'd2);
            ov_q       <= (of_n_d != 2'd0);
        end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && s_fire && (s_data_last != (cnt_q == CNT_W'(K - 1)))) begin
            $error("ats_bch_enc: s_data_last does not match the sector length K=%0d (%m)", K);
        end
    end
`endif

    assign m_data_valid = ov_q;
    assign m_data_data  = of_q[of_rp_q][7:0];
    assign m_data_last  = of_q[of_rp_q][8];
endmodule

`resetall
