// SPDX-License-Identifier: Apache-2.0
// ats_bch_dec: binary BCH decoder for one NAND sector (codeword = K data bytes + P = M*T/8 parity
// bytes, as ats_bch_enc writes it), one byte a cycle in and out. Stages:
//   1. input: the odd syndromes S_1, S_3, .. S_(2T-1) are computed byte-parallel (Horner) while the
//      codeword streams in; the K data bytes go to one of two sector slots of a block RAM.
//   2. ats_bch_bm: inversionless Berlekamp-Massey, error locator Lambda and its length L: the
//      decoder's own (EXT_BM = 0, an N = 1 ats_bch_bm_arb) or one shared by several decoders
//      (EXT_BM = 1, bm_* ports to ats_bch_bm_arb), asked as soon as a sector's syndromes are in.
//   3. Chien search, LANES positions a cycle (8: a byte a cycle; 4 or 2: a byte in 2 or 4 cycles,
//      fewer Chien registers), parity positions after the data ones, in step with the read of the
//      buffered sector: every data bit at a root of Lambda is flipped as it streams out
//      (m_data_*, K bytes, m_data_last on the last), then one status beat per sector (m_status_*).
// Status: corrected = bits corrected (data and parity), uncorrectable = 1 when L > T, deg(Lambda) !=
// L, or the number of roots in the codeword != L; corrected is then 0, and the sector's data (which
// streamed out before the verdict, raw if L > T or deg != L, else with the flips at the roots found)
// must be discarded by the user. The status beat is offered once the sector's last data byte is in
// the output FIFO (sector order; the n-th status belongs to the n-th sector).
// Throughput: the back end needs (8/LANES)(K + P) + ~LANES + 9 cycles a sector (BM runs for the
// next sector while the current one is searched; own or shared, EXT_BM), the input K + P; the next
// sector streams in while the current one is decoded. Details: rtl/nand/README_ecc.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets a form with the same next state that computes the syndrome step, the Chien sums
// and the root count only in the cycles that register them, and the syndrome and Chien steps
// (constant GF products, linear) by look-up tables filled at time 0 (README_ecc.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_bch_dec #(
    parameter int M         = 13,   // Galois field GF(2^M): 13 (512 B sectors) or 14 (1 KiB sectors)
    parameter int T         = 8,    // correctable bits per sector; M*T a multiple of 8
    parameter int K         = 512,  // data bytes per sector; power of two
    parameter int OUT_DEPTH = 4,    // output FIFO entries (4 sustains a byte a cycle); power of two
    parameter bit EXT_BM    = 1'b0, // 1: Berlekamp-Massey is outside (bm_* ports, ats_bch_bm_arb
                                    // shared by several decoders); 0: the decoder's own BM
    parameter int LANES     = 8     // Chien positions a cycle: 8 (a byte a cycle), 4 or 2 (a byte
                                    // in 2 / 4 cycles; LANES*T Chien registers instead of 8T)
) (
    input  wire logic       clk,
    input  wire logic       rst,                 // synchronous, active high
    // codeword in: K data bytes then P parity bytes, s_data_last on the last (checked in simulation)
    input  wire logic       s_data_valid,
    output wire logic       s_data_ready,
    input  wire logic [7:0] s_data_data,
    input  wire logic       s_data_last,
    // corrected sector data out: K bytes, m_data_last on the last
    output wire logic       m_data_valid,
    input  wire logic       m_data_ready,
    output wire logic [7:0] m_data_data,
    output wire logic       m_data_last,
    // one status beat per sector, after its data
    output wire logic       m_status_valid,
    input  wire logic       m_status_ready,
    output wire logic [7:0] m_status_corrected,
    output wire logic       m_status_uncorrectable,
    // EXT_BM = 1: the shared Berlekamp-Massey unit (ats_bch_bm_arb; its header has the protocol).
    // EXT_BM = 0: bm_req / bm_syn are driven but unused, the inputs are ignored (tie them to 0).
    output wire logic                       bm_req,      // syndromes on bm_syn wait for BM
    output wire logic [T*M-1:0]             bm_syn,      // S_(2i+1) at [i*M +: M]
    input  wire logic                       bm_gnt,      // BM takes bm_syn at this edge
    input  wire logic                       bm_done,     // this decoder's Lambda / L, this cycle
    input  wire logic [(T+1)*M-1:0]         bm_lambda_i,
    input  wire logic [$clog2(2*T+1)-1:0]   bm_len_i
);
    localparam int POLY   = (M == 13) ? 'h201B : (M == 14) ? 'h4443 : 0;  // primitive polynomials
    localparam int Q      = (1 << M) - 1;       // multiplicative order of alpha
    localparam int R      = M * T;              // parity bits
    localparam int P      = R / 8;              // parity bytes
    localparam int NB     = K + P;              // codeword bytes
    localparam int NBITS  = 8 * NB;             // shortened code length n
    localparam int AW     = $clog2(K);          // byte address inside a slot
    localparam int CNT_W  = $clog2(NB);
    localparam int LEN_W  = $clog2(2 * T + 1);
    localparam int ROOT_W = $clog2(NBITS + 1);
    localparam int CR_W   = $clog2(OUT_DEPTH + 1);
    localparam int FP_W   = $clog2(OUT_DEPTH);
    localparam int SUBS   = 8 / LANES;          // Chien cycles a byte
    localparam int SUB_W  = (SUBS > 1) ? $clog2(SUBS) : 1;

    if (POLY == 0) begin : g_check_m
        $fatal(1, "ats_bch_dec: M must be 13 or 14 (%m)");
    end
    if (R % 8 != 0 || T < 2 || T > 255) begin : g_check_t
        $fatal(1, "ats_bch_dec: T must be in 2..255 with M*T a multiple of 8 (%m)");
    end
    if (K < 2 || (K & (K - 1)) != 0) begin : g_check_k
        $fatal(1, "ats_bch_dec: K must be a power of two, at least 2 (%m)");
    end
    if (NBITS > Q) begin : g_check_len
        $fatal(1, "ats_bch_dec: K + parity exceeds the code length 2^M-1 (%m)");
    end
    if (LANES != 2 && LANES != 4 && LANES != 8) begin : g_check_lanes
        $fatal(1, "ats_bch_dec: LANES must be 2, 4 or 8 (%m)");
    end
    if (OUT_DEPTH < 4 || (OUT_DEPTH & (OUT_DEPTH - 1)) != 0) begin : g_check_depth
        $fatal(1, "ats_bch_dec: OUT_DEPTH must be a power of two, at least 4 (%m)");
    end

    // ---- GF(2^M) helpers (ats_gf_pkg) and constant tables -----------------------------------
    localparam int GF_W  = ats_gf_pkg::GF_W;
    localparam int GF_WW = ats_gf_pkg::GF_WW;       // a constant multiplier: its GF_W columns
    if (M > GF_W) begin : g_check_gfw
        $fatal(1, "ats_bch_dec: M exceeds ats_gf_pkg::GF_W (%m)");
    end

    function automatic logic [M-1:0] apow(input int e);               // alpha^e, e >= 0
        apow = M'(ats_gf_pkg::gf_pow(e, M, POLY));
    endfunction
    function automatic logic [M-1:0] gmul(input logic [M-1:0] a, input logic [M-1:0] b);  // a*b
        gmul = M'(ats_gf_pkg::gf_mul_part(GF_W'(a), GF_W'(b), M, POLY, 0, M));
    endfunction
    function automatic logic [GF_WW-1:0] ccols(input logic [M-1:0] c); // columns of "times c"
        ccols = ats_gf_pkg::gf_cols(GF_W'(c), M, POLY);
    endfunction
    function automatic logic [M-1:0] cmul(input logic [M-1:0] a, input logic [GF_WW-1:0] cc);
        cmul = M'(ats_gf_pkg::gf_cmul(GF_W'(a), cc));                 // a constant XOR matrix
    endfunction

    // constant tables, entry e at [e*W +: W] (W = GF_WW for multipliers, M for elements). Each
    // steps through its powers of alpha with one product an entry: Yosys evaluates constant
    // functions slowly, and a square-and-multiply per entry (gf_pow) took about a minute here.
    function automatic logic [T*GF_WW-1:0] tab_g();      // Chien start of term j (1..T) at the
        logic [T*GF_WW-1:0] v;                            // first position: alpha^(-j(n-1)),
        logic [M-1:0] g, gj;                              // entry j-1
        g  = apow(Q - (NBITS - 1) % Q);                   // alpha^(-(n-1))
        gj = M'(1);
        for (int j = 1; j <= T; j++) begin
            gj = gmul(gj, g);
            v[(j-1)*GF_WW +: GF_WW] = ccols(gj);
        end
        tab_g = v;
    endfunction
    function automatic logic [T*GF_WW-1:0] tab_aj();     // alpha^j, entry j-1: one bit lane on
        logic [T*GF_WW-1:0] v;
        logic [M-1:0] c;
        c = M'(1);
        for (int j = 1; j <= T; j++) begin
            c = gmul(c, M'(2));
            v[(j-1)*GF_WW +: GF_WW] = ccols(c);
        end
        tab_aj = v;
    endfunction
    function automatic logic [T*GF_WW-1:0] tab_alj();    // alpha^(LANES*j), entry j-1: one Chien
        logic [T*GF_WW-1:0] v;                            // step (LANES positions) on
        logic [M-1:0] al, c;
        al = apow(LANES);
        c  = al;
        for (int j = 1; j <= T; j++) begin
            v[(j-1)*GF_WW +: GF_WW] = ccols(c);
            c = gmul(c, al);
        end
        tab_alj = v;
    endfunction
    function automatic logic [8*T*M-1:0] tab_syn();       // alpha^((2i+1)*b), entry i*8+b
        logic [8*T*M-1:0] v;
        logic [M-1:0] s, c;
        s = M'(2);                                        // alpha^(2i+1)
        for (int i = 0; i < T; i++) begin
            c = M'(1);
            for (int b = 0; b < 8; b++) begin
                v[(i*8+b)*M +: M] = c;
                c = gmul(c, s);
            end
            s = gmul(s, M'(4));
        end
        tab_syn = v;
    endfunction
    function automatic logic [T*GF_WW-1:0] tab_a8e();    // alpha^(8(2i+1)), entry i
        logic [T*GF_WW-1:0] v;
        logic [M-1:0] a8, a16, c;
        a8  = apow(8);
        a16 = gmul(a8, a8);
        c   = a8;
        for (int i = 0; i < T; i++) begin
            v[i*GF_WW +: GF_WW] = ccols(c);
            c = gmul(c, a16);
        end
        tab_a8e = v;
    endfunction
    localparam logic [T*GF_WW-1:0]   GJ  = tab_g();
    localparam logic [T*GF_WW-1:0]   AJ  = tab_aj();
    localparam logic [T*GF_WW-1:0]   ALJ = tab_alj();
    localparam logic [8*T*M-1:0]     SYB = tab_syn();
    localparam logic [T*GF_WW-1:0]   A8E = tab_a8e();

    // ---- stage 1: input, syndromes, sector buffer ---------------------------------------------
    logic [CNT_W-1:0] icnt_q;           // byte index in the incoming codeword
    logic             wslot_q;          // slot being filled
    logic             rslot_q;          // slot being read by the back end
    logic [1:0]       full_q;           // slot holds a sector not yet read out
    logic             syn_full_q;       // syn_q holds a complete sector's syndromes
    logic [T*M-1:0]   syn_q;            // S_(2i+1) at [i*M +: M]
    logic [T*M-1:0]   syn_d;
    logic             s_fire;
    logic             fire_q;           // a byte was accepted in the previous cycle (wr_data_q)
    logic             wr_en_q;
    logic [AW:0]      wr_addr_q, rd_addr;
    logic [7:0]       wr_data_q, rd_data;
    logic             bm_start;
    logic             slot_free;        // back end has read the last data byte of slot rslot_q
    logic             ready_q;          // registered s_data_ready
    logic             last_in_q;        // icnt_q == NB-1
    logic             in_done;          // last byte of a codeword accepted
    logic             syn_full_d, wslot_d;
    logic [1:0]       full_d;

    assign s_data_ready = ready_q;
    assign s_fire       = s_data_valid && ready_q;
    assign in_done      = s_fire && last_in_q;
    // next-cycle slot state, so that s_data_ready comes straight from a register
    always_comb begin
        syn_full_d = in_done ? 1'b1 : (bm_start ? 1'b0 : syn_full_q);
        wslot_d    = wslot_q ^ in_done;
        full_d     = full_q;
        if (in_done)   full_d[wslot_q] = 1'b1;
        if (slot_free) full_d[rslot_q] = 1'b0;
    end

`ifdef ATS_SYNTH_FORM
    for (genvar i = 0; i < T; i++) begin : g_syn
        logic [M-1:0] acc;                                   // Horner step at alpha^(2i+1)
        always_comb begin
            acc = cmul(syn_q[i*M +: M], A8E[i*GF_WW +: GF_WW]);   // syn_q is 0 at a sector start
            for (int b = 0; b < 8; b++) begin                // bit b has degree b in the byte
                if (wr_data_q[b]) acc = acc ^ SYB[(i*8+b)*M +: M];
            end
        end
        assign syn_d[i*M +: M] = acc;
    end
`else
    // simulation form: the same Horner step, only when loaded (fire_q), as three look-ups a lane.
    // The step is linear over GF(2) in the syndrome and in the byte, so it is the XOR of the images
    // of the syndrome's low byte, of its high M-8 bits and of the byte, each a table of that lane
    // filled at time 0 from the synthesis form's own products (cmul by A8E, the XOR of SYB):
    // README_ecc.md "Simulation cost"
    localparam int SH_N = 1 << (M - 8);
    logic [M-1:0] syn_tl [T][256];                           // (S & 'hFF) * alpha^(8(2i+1))
    logic [M-1:0] syn_th [T][SH_N];                          // (S >> 8 << 8) * alpha^(8(2i+1))
    logic [M-1:0] syn_tb [T][256];                           // the byte's sum of SYB entries
    initial begin
        for (int i = 0; i < T; i++) begin
            for (int v = 0; v < 256; v++) begin
                syn_tl[i][v] = cmul(M'(v), A8E[i*GF_WW +: GF_WW]);
                syn_tb[i][v] = '0;
                for (int b = 0; b < 8; b++) begin
                    if (v[b]) syn_tb[i][v] = syn_tb[i][v] ^ SYB[(i*8+b)*M +: M];
                end
            end
            for (int v = 0; v < SH_N; v++) syn_th[i][v] = cmul(M'(v << 8), A8E[i*GF_WW +: GF_WW]);
        end
    end
    for (genvar i = 0; i < T; i++) begin : g_syn
        logic [M-1:0] acc;                                   // Horner step at alpha^(2i+1)
        always_comb begin
            acc = '0;
            if (fire_q) acc = syn_tl[i][syn_q[i*M +: 8]] ^ syn_th[i][syn_q[i*M+8 +: M-8]]
                              ^ syn_tb[i][wr_data_q];
        end
        assign syn_d[i*M +: M] = acc;
    end
`endif

    // one cycle after acceptance (fire_q, wr_data_q: keeps the fan-out off the ready loop); cleared
    // in the cycle after Berlekamp-Massey took the syndromes (bm_start_q: the grant's cone, which
    // starts at BM's state, stays off the 8M-bit reset, Fmax). Exact: no byte is taken in the grant
    // cycle (the input is stalled while syn_full_q), so fire_q is low in the next one, and the next
    // sector's first Horner step (fire_q, two cycles after the grant at the earliest) sees zeros
    logic bm_start_q;
    always_ff @(posedge clk) begin
        bm_start_q <= !rst && bm_start;
        if (rst || bm_start_q) syn_q <= '0;
        else if (fire_q)       syn_q <= syn_d;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && bm_start_q && fire_q)
            $error("ats_bch_dec: a syndrome step in the cycle after the grant (%m)");
    end
`endif

    // buffer writes are registered once (the slot is read only after its sector has left BM)
    always_ff @(posedge clk) begin
        fire_q    <= !rst && s_fire;
        wr_en_q   <= !rst && s_fire && (icnt_q < CNT_W'(K));
        wr_addr_q <= {wslot_q, icnt_q[AW-1:0]};
        wr_data_q <= s_data_data;
    end

    ats_ram_sdp #(
        .WIDTH(8),
        .DEPTH(2 * K)
    ) u_buf (
        .clk    (clk),
        .wr_en  (wr_en_q),
        .wr_addr(wr_addr_q),
        .wr_data(wr_data_q),
        .rd_addr(rd_addr),
        .rd_data(rd_data)
    );

    // ---- stage 2: Berlekamp-Massey -----------------------------------------------------------
    // A sector's syndromes go to BM as soon as they are complete and the Lambda register lamc_q is
    // free (it is emptied when the Chien search takes it, BE_CINIT), so BM runs (and, shared, waits
    // for its grant) while the previous sector is still searched and output. One job in flight.
    typedef enum logic [2:0] {BE_IDLE, BE_DEG, BE_PRE, BE_CINIT, BE_CHIEN, BE_DRAIN, BE_STAT} be_state_e;
    be_state_e be_q, be_d;

    logic                 bm_done_w;
    logic [(T+1)*M-1:0]   bm_lambda;
    logic [LEN_W-1:0]     bm_len;
    logic                 req;
    logic                 bm_pend_q;     // granted, result not yet back
    logic                 lam_full_q;    // lamc_q / lenc_q / nz_q hold a result not yet searched

    // (!fire_q: syn_q takes the last byte's Horner step in the cycle after it was accepted)
    assign req    = syn_full_q && !fire_q && !lam_full_q && !bm_pend_q;
    assign bm_req = req;
    assign bm_syn = syn_q;

    if (EXT_BM) begin : g_ext_bm
        assign bm_start  = bm_gnt;
        assign bm_done_w = bm_done;
        assign bm_lambda = bm_lambda_i;
        assign bm_len    = bm_len_i;
    end else begin : g_own_bm
        logic unused_bm;
        assign unused_bm = ^{bm_gnt, bm_done, bm_lambda_i, bm_len_i};
        // SYN_REG = 1 here too: the grant (from bm_pend_q / lam_full_q / syn_full_q) only loads
        // the syndrome copy, and BM starts from a register one cycle later. With the grant as BM's
        // start the request cone drove BM's whole state reset: the page controller's slowest path
        // (nand_page 138.6 -> 128.7 MHz mean over seeds 1-3, issue 36). One cycle per sector, hidden
        // behind the previous sector's Chien search like the shared unit's.
        ats_bch_bm_arb #(
            .N(1), .M(M), .POLY(POLY), .T(T), .SYN_REG(1'b1)
        ) u_bm (
            .clk   (clk),
            .rst   (rst),
            .req   (req),
            .syn   (syn_q),
            .gnt   (bm_start),
            .done  (bm_done_w),
            .lambda(bm_lambda),
            .len   (bm_len)
        );
    end

    // ---- stage 3: Chien search and output ----------------------------------------------------
    // One register per lane k (0..LANES-1) and locator term j (1..T): in sub-step s (0..SUBS-1) of
    // byte c, lane k evaluates position p = 8c + s*LANES + k (bit 7 - s*LANES - k of the byte; bit 7
    // is the higher degree) and r_q[k*T+j-1] = Lambda_j * alpha^(j(p-(n-1))), stepped by
    // alpha^(LANES*j) a cycle. The evaluation of a lane is then a plain XOR of its T registers and
    // Lambda_0: every register feeds only its own update and one sum (short, local nets: Fmax), at
    // the cost of LANES*T registers instead of T. LANES < 8 takes SUBS = 8/LANES cycles a byte
    // with LANES/8 of the registers and step matrices (issue 38: the board's LUTs).
    logic [M-1:0]      r_q [LANES*T];
`ifndef ATS_SYNTH_FORM
    // simulation form: "times alpha^(LANES*j)" of a Chien register, by its low byte and its high
    // M-8 bits, entry j-1, filled at time 0 from the synthesis form's matrices (ALJ)
    logic [M-1:0]      chn_tl [T][256];
    logic [M-1:0]      chn_th [T][SH_N];
    initial begin
        for (int j = 0; j < T; j++) begin
            for (int v = 0; v < 256; v++) chn_tl[j][v] = cmul(M'(v), ALJ[j*GF_WW +: GF_WW]);
            for (int v = 0; v < SH_N; v++) chn_th[j][v] = cmul(M'(v << 8), ALJ[j*GF_WW +: GF_WW]);
        end
    end
`endif
    logic [(T+1)*M-1:0] lamc_q;          // Lambda_j * alpha^(-j(n-1)), taken from BM at its done
                                         // (next to the Chien registers: the BM register is far
                                         // away), then stepped by alpha^j a cycle in the pre-roll
    logic [LEN_W-1:0]  lenc_q;           // L, taken with lamc_q
    logic [M-1:0]      lam0_q;
    logic              apply_q;          // L <= T and deg(Lambda) == L: flip bits at roots
    logic [LEN_W-1:0]  len_q;
    logic [CNT_W-1:0]  ccnt_q;           // byte index of the Chien search / read
    logic [ROOT_W-1:0] roots_q;
    logic [CR_W-1:0]   credit_q;         // output FIFO entries + reads in flight
    logic              issue, issue_data;
    logic              sub_last;         // this issue is the byte's last sub-step (1 if SUBS = 1)
    logic              issue_byte;       // a data-phase issue that completes a byte

    // degree of Lambda, in two registered steps: non-zero flags taken at bm_done (with lamc_q), the
    // degree one cycle later (deg_q follows nz_q), used in BE_CINIT at least two cycles after done
    logic [T:1]       nz_q;
    logic [LEN_W-1:0] deg, deg_q;
    always_comb begin
        deg = '0;
        for (int j = 1; j <= T; j++) begin
            if (nz_q[j]) deg = LEN_W'(j);
        end
    end

    // issue (a Chien step and, in the data phase, a buffer read) is a register, computed one cycle
    // ahead from the next-cycle state (credit included), because it is the clock enable of every
    // Chien register (8*T*M flip-flops): no logic between a flip-flop and that net.
    // issue_q in cycle t is exactly "state BE_CHIEN and (parity phase or an output credit free)" of
    // cycle t. c_lastd_q/c_lastp_q = (ccnt_q == K-1) / (ccnt_q == NB-1), kept as registers.
    logic            issue_q, issue_d, chien_d, data_ph_q, data_ph_d, c_lastd_q, c_lastp_q;
    logic            cinit_q;            // cinit_q = (be_q == BE_CINIT), the last pre-roll cycle
    // pre-roll (BE_PRE, LANES-1 cycles, and BE_CINIT): lane k takes lamc_q in its cycle ld_q[k]
    // (lamc_q then holds Lambda_j * alpha^(j(k-(n-1))), its start value) while lamc_q steps by
    // alpha^j: no start-value multipliers per lane (LANES*T constant matrices less than a one-cycle
    // load)
    logic [LANES-2:0] ld_q;              // one-hot: lane loading in this cycle (the last: cinit_q)
    logic [LANES-1:0] ld_d;
    logic            ldn_q;              // ld_q != 0 (the lanes' load / step select)
    logic [LANES-1:0] r_en_q;            // lane k's enable: ld_q[k] || issue
    logic [CR_W-1:0] credit_d;
    logic            pop;                // output FIFO pop
    assign issue      = issue_q;
    assign issue_data = issue_q && data_ph_q;
    assign rd_addr    = {rslot_q, ccnt_q[AW-1:0]};
    assign issue_byte = issue_data && sub_last;
    assign slot_free  = issue_byte && c_lastd_q;
    assign ld_d = (be_q == BE_DEG) ? LANES'(1) : {ld_q, 1'b0};
    always_comb begin
        chien_d   = cinit_q || ((be_q == BE_CHIEN) && !(issue_q && sub_last && c_lastp_q));
        data_ph_d = cinit_q || (data_ph_q && !(issue_q && sub_last && c_lastd_q));
        credit_d  = credit_q + CR_W'(issue_byte) - CR_W'(pop);
        issue_d   = chien_d && (!data_ph_d || (credit_d != CR_W'(OUT_DEPTH)));
    end

    // sub-step of the byte (SUBS > 1): sub_q counts the issues of byte ccnt_q, sub_last_q marks its
    // last one (a register: it gates the byte's end flags and the FIFO credit)
    if (SUBS == 1) begin : g_sub1
        assign sub_last = 1'b1;
    end else begin : g_subn
        logic [SUB_W-1:0]        sub_q;
        logic                    sub_last_q;
        assign sub_last = sub_last_q;
        always_ff @(posedge clk) begin
            if (cinit_q) begin
                sub_q      <= '0;
                sub_last_q <= 1'b0;
            end else if (issue) begin
                sub_q      <= sub_q + 1'b1;                 // wraps after SUBS (a power of two)
                sub_last_q <= (sub_q == SUB_W'(SUBS - 2));
            end
        end
    end

    // Chien evaluations of the LANES positions of this sub-step
    logic [M-1:0] ev [LANES];
    for (genvar k = 0; k < LANES; k++) begin : g_ev
        always_comb begin
            ev[k] = lam0_q;
`ifndef ATS_SYNTH_FORM
            if (issue)                         // (simulation form: only what s1 goes on to use)
`endif
            for (int j = 0; j < T; j++) ev[k] = ev[k] ^ r_q[k*T+j];
        end
    end

    // pipeline: issue (r_q) -> s1 (ev_q, buffer read) -> s2 (mask_q, rd_data) -> output FIFO;
    // root count: s3 (pop_q: roots in mask_q) -> s4 (roots_q has them) -> verdict register
    logic             s1_valid_q, s1_out_q, s1_last_q;
    logic [M-1:0]     ev_q [LANES];
    logic             s2_valid_q, s2_out_q, s2_last_q;
    logic [7:0]       mask_q;            // the byte's root mask, LANES bits shifted in a sub-step
    logic [7:0]       mask_d;
    logic             s3_valid_q, s4_valid_q;
    logic [3:0]       pop_q;             // roots among the LANES positions of the s2 sub-step

    always_comb begin
        mask_d = 8'(mask_q << LANES);    // (LANES = 8: the new byte only)
        for (int k = 0; k < LANES; k++) mask_d[LANES-1-k] = (ev_q[k] == '0);
    end

    logic [3:0] mask_pop;
    always_comb begin
        mask_pop = '0;
`ifndef ATS_SYNTH_FORM
        if (s2_valid_q)                        // (simulation form: only when pop_q takes it)
`endif
        for (int b = 0; b < LANES; b++) mask_pop = mask_pop + 4'(mask_q[b]);  // the newest bits
    end

    // status
    logic       st_valid_q;
    logic [7:0] st_corr_q;
    logic       st_unc_q;
    logic       verdict_q;               // apply_q && roots == L, settled once the s4 stage is empty

    always_comb begin
        be_d = be_q;
        case (be_q)
            BE_IDLE:  if (lam_full_q) be_d = BE_DEG;
            BE_DEG:   be_d = BE_PRE;
            BE_PRE:   if (ld_q[LANES-2]) be_d = BE_CINIT;
            BE_CINIT: be_d = BE_CHIEN;
            BE_CHIEN: if (issue && sub_last && c_lastp_q) be_d = BE_DRAIN;
            BE_DRAIN: if (!s1_valid_q && !s2_valid_q && !s3_valid_q && !s4_valid_q) be_d = BE_STAT;
            BE_STAT:  if (!st_valid_q || m_status_ready) be_d = BE_IDLE;
            default:  be_d = BE_IDLE;
        endcase
    end

    // output FIFO
    logic [8:0]      fifo_q [OUT_DEPTH];
    logic [FP_W-1:0] fwp_q, frp_q;
    logic [CR_W-1:0] fcnt_q;
    assign m_data_valid = (fcnt_q != '0);
    assign pop          = m_data_valid && m_data_ready;
    assign m_data_data  = fifo_q[frp_q][7:0];
    assign m_data_last  = fifo_q[frp_q][8];

    always_ff @(posedge clk) begin
        // datapath
`ifdef ATS_SYNTH_FORM
        for (int k = 0; k < LANES; k++) begin
            if (r_en_q[k]) begin
                for (int j = 1; j <= T; j++) begin
                    r_q[k*T+j-1] <= ldn_q ? lamc_q[j*M +: M]
                                          : cmul(r_q[k*T+j-1], ALJ[(j-1)*GF_WW +: GF_WW]);
                end
            end
        end
`else
        // simulation form: the Chien registers written as one array in the cycles they load (a
        // simulator copies it then, instead of a flag per register in every cycle), the step by
        // alpha^(LANES*j) as two look-ups (chn_tl, chn_th: linear, as the syndrome tables)
        if (r_en_q != '0) begin : s_chien
            logic [M-1:0] r_n [LANES*T];
            for (int k = 0; k < LANES; k++) begin
                for (int j = 1; j <= T; j++) begin
                    if (!r_en_q[k])  r_n[k*T+j-1] = r_q[k*T+j-1];
                    else if (ldn_q)  r_n[k*T+j-1] = lamc_q[j*M +: M];
                    else             r_n[k*T+j-1] = chn_tl[j-1][r_q[k*T+j-1][7:0]]
                                                    ^ chn_th[j-1][r_q[k*T+j-1][M-1:8]];
                end
            end
            r_q <= r_n;
        end
`endif
        if (bm_done_w) begin
            lamc_q[M-1:0] <= bm_lambda[M-1:0];
            for (int j = 1; j <= T; j++) lamc_q[j*M +: M] <= cmul(bm_lambda[j*M +: M], GJ[(j-1)*GF_WW +: GF_WW]);
            lenc_q <= bm_len;
        end else if (ldn_q) begin
            for (int j = 1; j <= T; j++) lamc_q[j*M +: M] <= cmul(lamc_q[j*M +: M], AJ[(j-1)*GF_WW +: GF_WW]);
        end
        if (bm_done_w) begin
            for (int j = 1; j <= T; j++) nz_q[j] <= (bm_lambda[j*M +: M] != '0);
        end
        if (cinit_q) begin
            lam0_q  <= lamc_q[M-1:0];
            len_q   <= lenc_q;
            apply_q <= ({1'b0, lenc_q} <= (LEN_W + 1)'(T)) && (deg_q == lenc_q);
        end
`ifdef ATS_SYNTH_FORM
        for (int k = 0; k < LANES; k++) ev_q[k] <= ev[k];
`else
        if (issue) for (int k = 0; k < LANES; k++) ev_q[k] <= ev[k];   // (simulation form: when used)
`endif
        s1_out_q  <= issue_byte;
        s1_last_q <= c_lastd_q;
`ifdef ATS_SYNTH_FORM
        if (LANES == 8 || s1_valid_q) mask_q <= mask_d;   // (LANES < 8: shifts only with a sub-step)
`else
        if (s1_valid_q) mask_q <= mask_d;
`endif
        s2_out_q  <= s1_valid_q && s1_out_q;
        s2_last_q <= s1_last_q;
        pop_q     <= s2_valid_q ? mask_pop : 4'd0;
        verdict_q <= apply_q && (roots_q == ROOT_W'(len_q));
        if (s2_out_q) fifo_q[fwp_q] <= {s2_last_q, rd_data ^ (apply_q ? mask_q : 8'h00)};
        if (be_q == BE_STAT && (!st_valid_q || m_status_ready)) begin
            st_unc_q  <= !verdict_q;
            st_corr_q <= verdict_q ? 8'(len_q) : 8'h00;    // verdict: roots_q == len_q
        end

        // control
        if (s_fire) begin
            icnt_q    <= last_in_q ? '0 : icnt_q + 1'b1;
            last_in_q <= (icnt_q == CNT_W'(NB - 2));
        end
        deg_q <= deg;
        full_q     <= full_d;
        wslot_q    <= wslot_d;
        syn_full_q <= syn_full_d;
        ready_q    <= !syn_full_d && !full_d[wslot_d];
        if (cinit_q) begin
            ccnt_q    <= '0;
            c_lastd_q <= 1'b0;                // K >= 2
            c_lastp_q <= 1'b0;
        end else if (issue && sub_last) begin
            ccnt_q    <= ccnt_q + 1'b1;
            c_lastd_q <= (ccnt_q == CNT_W'(K - 2));
            c_lastp_q <= (ccnt_q == CNT_W'(NB - 2));
        end
        data_ph_q <= data_ph_d;
        issue_q   <= issue_d;
        cinit_q   <= ld_q[LANES-2];           // BE_PRE's last cycle is followed by BE_CINIT
        ld_q      <= ld_d[LANES-2:0];
        ldn_q     <= (ld_d != '0);
        r_en_q    <= ld_d | {LANES{issue_d}};
        if (bm_start)       bm_pend_q <= 1'b1;
        else if (bm_done_w) bm_pend_q <= 1'b0;
        if (bm_done_w)      lam_full_q <= 1'b1;
        else if (cinit_q)   lam_full_q <= 1'b0;
        if (slot_free) rslot_q <= !rslot_q;
        roots_q <= cinit_q ? '0 : roots_q + ROOT_W'(pop_q);
        s1_valid_q <= issue;
        s2_valid_q <= s1_valid_q;
        s3_valid_q <= s2_valid_q;
        s4_valid_q <= s3_valid_q;
        credit_q <= credit_d;
        if (s2_out_q) fwp_q <= fwp_q + 1'b1;
        if (pop) frp_q <= frp_q + 1'b1;
        fcnt_q <= fcnt_q + CR_W'(s2_out_q) - CR_W'(pop);
        if (m_status_ready) st_valid_q <= 1'b0;
        if (be_q == BE_STAT && (!st_valid_q || m_status_ready)) st_valid_q <= 1'b1;
        be_q <= be_d;

        if (rst) begin
            icnt_q     <= '0;
            last_in_q  <= 1'b0;
            wslot_q    <= 1'b0;
            rslot_q    <= 1'b0;
            full_q     <= '0;
            syn_full_q <= 1'b0;
            ready_q    <= 1'b0;
            be_q       <= BE_IDLE;
            issue_q    <= 1'b0;
            r_en_q     <= '0;
            ld_q       <= '0;
            ldn_q      <= 1'b0;
            cinit_q    <= 1'b0;
            data_ph_q  <= 1'b0;
            bm_pend_q  <= 1'b0;
            lam_full_q <= 1'b0;
            s1_valid_q <= 1'b0;
            s2_valid_q <= 1'b0;
            s3_valid_q <= 1'b0;
            s4_valid_q <= 1'b0;
            s2_out_q   <= 1'b0;
            pop_q      <= '0;
            credit_q   <= '0;
            fwp_q      <= '0;
            frp_q      <= '0;
            fcnt_q     <= '0;
            st_valid_q <= 1'b0;
        end
    end

    assign m_status_valid         = st_valid_q;
    assign m_status_corrected     = st_corr_q;
    assign m_status_uncorrectable = st_unc_q;

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && s_fire && (s_data_last != (icnt_q == CNT_W'(NB - 1)))) begin
            $error("ats_bch_dec: s_data_last does not match the codeword length %0d (%m)", NB);
        end
        if (!rst && bm_start && !req) begin
            $error("ats_bch_dec: Berlekamp-Massey grant without a request (%m)");
        end
        if (!rst && bm_done_w && (!bm_pend_q || lam_full_q)) begin
            $error("ats_bch_dec: Berlekamp-Massey result without a job or with Lambda full (%m)");
        end
    end
`endif
endmodule

`resetall
