// SPDX-License-Identifier: Apache-2.0
// ats_bch_bm: inversionless Berlekamp-Massey for binary BCH codes (t iterations: the odd steps of
// the full algorithm have zero discrepancy and are folded into the even ones). Takes the odd
// syndromes S_1, S_3, .., S_(2T-1) of a sector, derives the even ones (S_2j = S_j^2), and returns the
// error-locator polynomial Lambda(x) (a non-zero multiple of the normalised one) and the LFSR length
// L. Four cycles an iteration (discrepancy products, discrepancy sum, update products, update),
// 4*T + 1 cycles from start to done. Lambda holds T+1 coefficients: when L > T it is truncated, and
// the caller must treat the sector as uncorrectable (which it does).
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets a form with the same registers that computes the products, the discrepancy and
// the even syndromes only in the cycle that registers them (README_ecc.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_bch_bm #(
    parameter int M = 13,   // GF(2^M)
    parameter int POLY = 'h201B, // primitive polynomial of GF(2^M), with its x^M term
    parameter int T = 8     // correctable errors
) (
    input  wire logic                 clk,
    input  wire logic                 rst,        // synchronous, active high
    input  wire logic                 start,      // one cycle; ignored unless idle (busy low)
    input  wire logic [T*M-1:0]       syn_odd,    // S_(2i+1) at [i*M +: M]
    output wire logic                 busy,
    output wire logic                 done,       // one cycle: lambda/len valid until the next start
    output wire logic [(T+1)*M-1:0]   lambda,     // Lambda_j at [j*M +: M]
    output wire logic [LEN_W-1:0]     len         // LFSR length L
);
    localparam int LEN_W = $clog2(2 * T + 1);     // L <= 2T-1
    localparam int K_W   = $clog2(T + 1);
    localparam int QN    = 2 * T - 2;             // queued syndromes S_2 .. S_(2T-1)

    if (T < 2) begin : g_check_t
        $fatal(1, "ats_bch_bm: T must be at least 2 (%m)");
    end
    if (POLY >> M != 1) begin : g_check_poly
        $fatal(1, "ats_bch_bm: POLY must have degree M (%m)");
    end

    // GF(2^M) helpers: ats_gf_pkg (elements GF_W bits wide there, M here)
    localparam int GF_W  = ats_gf_pkg::GF_W;
    localparam int GF_WW = ats_gf_pkg::GF_WW;
    localparam logic [GF_WW-1:0] SQ = ats_gf_pkg::gf_sq_cols(M, POLY);   // squaring map
    if (M < 2 || M > GF_W) begin : g_check_m
        $fatal(1, "ats_bch_bm: M must be in 2..%0d (ats_gf_pkg::GF_W) (%m)", GF_W);
    end

    // the part of a*b from the bits b[i], LO <= i < HI (a multiplier split in two halves, each half
    // registered: half the logic depth of a full GF(2^M) product between registers)
    localparam int HALF = M / 2;
    function automatic logic [M-1:0] mul_part(input logic [M-1:0] a, input logic [M-1:0] b,
                                             input int lo, input int hi);
        mul_part = M'(ats_gf_pkg::gf_mul_part(GF_W'(a), GF_W'(b), M, POLY, lo, hi));
    endfunction

    typedef enum logic [2:0] {ST_IDLE, ST_MUL, ST_SUM, ST_PRD, ST_UPD} bm_state_e;
    bm_state_e state_q, state_d;

    logic [M-1:0]     lam_q [T+1];        // Lambda
    logic [M-1:0]     b_q   [T+1];        // correction polynomial B
    logic [M-1:0]     win_q [T+1];        // win_q[j] = S_(2k+1-j) (0 for indices < 1)
    logic [M-1:0]     que_q [QN];         // S_(2k+2), S_(2k+3), ...
    // products as two registered halves (_l: low bits of the second operand, _h: high bits)
    logic [M-1:0]     prod_l_q [T+1];     // Lambda_j * S_(2k+1-j)
    logic [M-1:0]     prod_h_q [T+1];
    logic [M-1:0]     pa_l_q   [T+1];     // gamma * Lambda_j
    logic [M-1:0]     pa_h_q   [T+1];
    logic [M-1:0]     pb_l_q   [T+1];     // delta * B_(j-1)
    logic [M-1:0]     pb_h_q   [T+1];
    logic [M-1:0]     gam_q;              // gamma (previous non-zero discrepancy)
    logic [M-1:0]     del_q;              // discrepancy
    logic [LEN_W-1:0] len_q;
    logic [K_W-1:0]   k_q;                // iteration
    logic             done_q;

    // all syndromes S_1 .. S_(2T-1) from the odd ones
    logic [M-1:0] syn_all [2*T];          // index i = S_i (index 0 unused)
    assign syn_all[0] = '0;
`ifdef ATS_SYNTH_FORM
    for (genvar i = 1; i < 2 * T; i++) begin : g_syn
        localparam int O = ats_gf_pkg::odd_part(i);   // S_i = S_O^(2^E)
        localparam int E = ats_gf_pkg::two_exp(i);
        assign syn_all[i] = M'(ats_gf_pkg::gf_frob(GF_W'(syn_odd[((O - 1) / 2) * M +: M]), E, SQ));
    end
`else
    // simulation form: the even syndromes only in the cycle a start loads them (zero otherwise)
    logic take;
    assign take = (state_q == ST_IDLE) && start;
    for (genvar i = 1; i < 2 * T; i++) begin : g_syn
        localparam int O = ats_gf_pkg::odd_part(i);   // S_i = S_O^(2^E)
        localparam int E = ats_gf_pkg::two_exp(i);
        always_comb begin
            if (take) syn_all[i] = M'(ats_gf_pkg::gf_frob(GF_W'(syn_odd[((O - 1) / 2) * M +: M]), E, SQ));
            else      syn_all[i] = '0;
        end
    end
`endif

    logic [M-1:0] del_sum;
    always_comb begin
        del_sum = '0;
`ifndef ATS_SYNTH_FORM
        if (state_q == ST_SUM)                  // (simulation form: only when del_q loads it)
`endif
        for (int j = 0; j <= T; j++) del_sum = del_sum ^ prod_l_q[j] ^ prod_h_q[j];
    end

    logic upd_len, upd_len_q;              // length change: delta != 0 and 2L <= 2k
    assign upd_len = (del_q != '0) && ({1'b0, len_q} <= {1'b0, LEN_W'(k_q)});

    always_comb begin
        state_d = state_q;
        case (state_q)
            ST_IDLE: if (start) state_d = ST_MUL;
            ST_MUL:  state_d = ST_SUM;
            ST_SUM:  state_d = ST_PRD;
            ST_PRD:  state_d = ST_UPD;
            ST_UPD:  state_d = (k_q == K_W'(T - 1)) ? ST_IDLE : ST_MUL;
            default: state_d = ST_IDLE;
        endcase
    end

    // the products, combinational from registers (outside the clocked block: Yosys inlines each
    // function call's temporaries into the process that holds it, and one process holding all 54
    // multipliers costs minutes of proc_mux)
    logic [M-1:0] prod_l_d [T+1], prod_h_d [T+1], pa_l_d [T+1], pa_h_d [T+1];
    logic [M-1:0] pb_l_d [T+1], pb_h_d [T+1];
`ifdef ATS_SYNTH_FORM
    for (genvar j = 0; j <= T; j++) begin : g_prod
        assign prod_l_d[j] = mul_part(lam_q[j], win_q[j], 0, HALF);
        assign prod_h_d[j] = mul_part(lam_q[j], win_q[j], HALF, M);
        assign pa_l_d[j]   = mul_part(lam_q[j], gam_q, 0, HALF);
        assign pa_h_d[j]   = mul_part(lam_q[j], gam_q, HALF, M);
        if (j == 0) begin : g_b0
            assign pb_l_d[j] = '0;
            assign pb_h_d[j] = '0;
        end else begin : g_b
            assign pb_l_d[j] = mul_part(b_q[j-1], del_q, 0, HALF);
            assign pb_h_d[j] = mul_part(b_q[j-1], del_q, HALF, M);
        end
    end
`else
    // simulation form: each product only in the state that registers it (zero otherwise)
    always_comb begin
        for (int j = 0; j <= T; j++) begin
            prod_l_d[j] = '0;
            prod_h_d[j] = '0;
            pa_l_d[j]   = '0;
            pa_h_d[j]   = '0;
            pb_l_d[j]   = '0;
            pb_h_d[j]   = '0;
            if (state_q == ST_MUL) begin
                prod_l_d[j] = mul_part(lam_q[j], win_q[j], 0, HALF);
                prod_h_d[j] = mul_part(lam_q[j], win_q[j], HALF, M);
            end
            if (state_q == ST_PRD) begin
                pa_l_d[j] = mul_part(lam_q[j], gam_q, 0, HALF);
                pa_h_d[j] = mul_part(lam_q[j], gam_q, HALF, M);
                if (j > 0) begin
                    pb_l_d[j] = mul_part(b_q[(j > 0) ? j - 1 : 0], del_q, 0, HALF);
                    pb_h_d[j] = mul_part(b_q[(j > 0) ? j - 1 : 0], del_q, HALF, M);
                end
            end
        end
    end
`endif

    always_ff @(posedge clk) begin
`ifdef ATS_SYNTH_FORM
        case (state_q)
            ST_IDLE: if (start) begin
                for (int j = 0; j <= T; j++) begin
                    lam_q[j] <= (j == 0) ? M'(1) : '0;
                    b_q[j]   <= (j == 0) ? M'(1) : '0;
                    win_q[j] <= (j == 0) ? syn_all[1] : '0;
                end
                for (int i = 0; i < QN; i++) que_q[i] <= syn_all[i + 2];
                gam_q <= M'(1);
                len_q <= '0;
                k_q   <= '0;
            end
            ST_MUL: for (int j = 0; j <= T; j++) begin
                prod_l_q[j] <= prod_l_d[j];
                prod_h_q[j] <= prod_h_d[j];
            end
            ST_SUM: del_q <= del_sum;
            ST_PRD: for (int j = 0; j <= T; j++) begin
                upd_len_q <= upd_len;                   // registered for ST_UPD (Fmax)
                pa_l_q[j] <= pa_l_d[j];
                pa_h_q[j] <= pa_h_d[j];
                pb_l_q[j] <= pb_l_d[j];
                pb_h_q[j] <= pb_h_d[j];
            end
            ST_UPD: begin
                // Lambda <- gamma*Lambda + delta*x*B
                for (int j = 0; j <= T; j++) lam_q[j] <= pa_l_q[j] ^ pa_h_q[j] ^ pb_l_q[j] ^ pb_h_q[j];
                if (upd_len_q) begin                    // B <- x*Lambda, L <- 2k+1-L
                    for (int j = 0; j <= T; j++) b_q[j] <= (j == 0) ? '0 : lam_q[j-1];
                    len_q <= LEN_W'(2 * k_q + 1) - len_q;
                    gam_q <= del_q;
                end else begin                          // B <- x^2*B
                    for (int j = 0; j <= T; j++) b_q[j] <= (j < 2) ? '0 : b_q[j-2];
                end
                // next window: S_(2k+3-j)
                for (int j = 2; j <= T; j++) win_q[j] <= win_q[j-2];
                win_q[1] <= que_q[0];
                win_q[0] <= que_q[1];
                for (int i = 0; i < QN; i++) que_q[i] <= (i + 2 < QN) ? que_q[i+2] : '0;
                k_q <= k_q + 1'b1;
            end
            default: ;
        endcase
`else
        // simulation form: every array register written as a whole, in the cycles it loads (a
        // simulator copies it then and does nothing in the other cycles; per-element writes cost
        // a flag per element in every cycle); the same next state as the synthesis form above
        case (state_q)
            ST_IDLE: if (start) begin : s_load
                logic [M-1:0] lam_n [T+1], b_n [T+1], win_n [T+1], que_n [QN];
                for (int j = 0; j <= T; j++) begin
                    lam_n[j] = (j == 0) ? M'(1) : '0;
                    b_n[j]   = (j == 0) ? M'(1) : '0;
                    win_n[j] = (j == 0) ? syn_all[1] : '0;
                end
                for (int i = 0; i < QN; i++) que_n[i] = syn_all[i + 2];
                lam_q <= lam_n;
                b_q   <= b_n;
                win_q <= win_n;
                que_q <= que_n;
                gam_q <= M'(1);
                len_q <= '0;
                k_q   <= '0;
            end
            ST_MUL: begin
                prod_l_q <= prod_l_d;
                prod_h_q <= prod_h_d;
            end
            ST_SUM: del_q <= del_sum;
            ST_PRD: begin
                upd_len_q <= upd_len;
                pa_l_q <= pa_l_d;
                pa_h_q <= pa_h_d;
                pb_l_q <= pb_l_d;
                pb_h_q <= pb_h_d;
            end
            ST_UPD: begin : s_upd
                logic [M-1:0] lam_n [T+1], b_n [T+1], win_n [T+1], que_n [QN];
                for (int j = 0; j <= T; j++) lam_n[j] = pa_l_q[j] ^ pa_h_q[j] ^ pb_l_q[j] ^ pb_h_q[j];
                if (upd_len_q) begin
                    for (int j = 0; j <= T; j++) b_n[j] = (j == 0) ? '0 : lam_q[(j > 0) ? j - 1 : 0];
                    len_q <= LEN_W'(2 * k_q + 1) - len_q;
                    gam_q <= del_q;
                end else begin
                    for (int j = 0; j <= T; j++) b_n[j] = (j < 2) ? '0 : b_q[(j > 1) ? j - 2 : 0];
                end
                for (int j = 2; j <= T; j++) win_n[j] = win_q[j-2];
                win_n[1] = que_q[0];
                win_n[0] = que_q[1];
                for (int i = 0; i < QN; i++) que_n[i] = (i + 2 < QN) ? que_q[(i + 2 < QN) ? i + 2 : 0] : '0;
                lam_q <= lam_n;
                b_q   <= b_n;
                win_q <= win_n;
                que_q <= que_n;
                k_q <= k_q + 1'b1;
            end
            default: ;
        endcase
`endif
        done_q <= (state_q == ST_UPD) && (k_q == K_W'(T - 1));
        if (rst) begin
            state_q <= ST_IDLE;
            done_q  <= 1'b0;
        end else begin
            state_q <= state_d;
        end
    end

    assign busy = (state_q != ST_IDLE);
    assign done = done_q;
    for (genvar j = 0; j <= T; j++) begin : g_lam
        assign lambda[j*M +: M] = lam_q[j];
    end
    assign len = len_q;
endmodule

`resetall
