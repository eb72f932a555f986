// SPDX-License-Identifier: Apache-2.0
// ats_bch_bm_arb: one Berlekamp-Massey unit (ats_bch_bm) shared by N BCH decoders (ats_bch_dec with
// EXT_BM = 1, one per NAND channel). BM is busy 4T + 1 cycles a sector (about 6 % of a decoding
// channel's cycles, 0.5 % of all cycles), so one unit serves every channel (issue 38: the four
// per-channel BMs were about half of the decoders' LUTs).
// Protocol, per decoder i:
//   req[i]  level: the decoder holds a complete sector's odd syndromes on syn[i] (stable while req)
//   gnt[i]  one cycle: the unit takes syn[i] at this edge (the decoder clears its syndromes a cycle later); the
//           decoder drops req from the next cycle on and keeps at most one job in flight
//   done[i] one cycle: lambda / len are this decoder's result in this cycle only (capture them)
// Arbitration: round robin over the requesting decoders from the one after the last granted, so a
// request waits for at most N - 1 other jobs (each 4T + 3 cycles with SYN_REG) before its grant.
// A job is never mixed up: the owner is registered with the grant and only its done bit rises.
// The granted syndromes are registered here and BM starts one cycle after the grant (no
// channel-to-channel mux in front of BM's Frobenius maps, and the grant cone stays off BM's state
// reset: Fmax), also for N = 1 (a decoder's own BM). SYN_REG must be 1: the form with the grant as
// BM's start (SYN_REG = 0, d23527b) was removed, nothing used it after af87212.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_bch_bm_arb #(
    parameter int N       = 4,           // decoders, 1..8
    parameter int M       = 13,          // GF(2^M)
    parameter int POLY    = 'h201B,      // primitive polynomial, with its x^M term
    parameter int T       = 8,           // correctable errors
    parameter bit SYN_REG = 1'b1         // register the granted syndromes (must be 1, see above)
) (
    input  wire logic                    clk,
    input  wire logic                    rst,        // synchronous, active high
    input  wire logic [N-1:0]            req,
    input  wire logic [N*T*M-1:0]        syn,        // decoder i: S_(2k+1) at [(i*T+k)*M +: M]
    output wire logic [N-1:0]            gnt,
    output wire logic [N-1:0]            done,
    output wire logic [(T+1)*M-1:0]      lambda,     // Lambda_j at [j*M +: M], valid with done
    output wire logic [$clog2(2*T+1)-1:0] len        // LFSR length L, valid with done
);
    localparam int IW = (N > 1) ? $clog2(N) : 1;

    if (N < 1 || N > 8) begin : g_check_n
        $fatal(1, "ats_bch_bm_arb: N must be 1..8 (%m)");
    end
    if (!SYN_REG) begin : g_check_reg
        $fatal(1, "ats_bch_bm_arb: SYN_REG must be 1 (the unregistered form was removed) (%m)");
    end

    logic           bm_start, bm_busy, bm_done;
    logic [T*M-1:0] bm_syn;
    logic [IW-1:0]  owner_q;             // decoder of the job in BM
    logic           free;                // a grant may be given in this cycle
    logic [IW-1:0]  pick;                // round-robin choice among req
    logic           any;
    logic [IW-1:0]  last_q;              // last granted decoder

    always_comb begin
        any  = 1'b0;
        pick = last_q;
        // first requester after last_q, cyclically (last_q itself comes last)
        for (int o = N; o >= 1; o--) begin
            if (req[(32'(last_q) + o) % N]) begin
                any  = 1'b1;
                pick = IW'((32'(last_q) + o) % N);
            end
        end
    end

    logic           go_q;                // BM starts in this cycle with syn_q
    logic [T*M-1:0] syn_q;               // the granted decoder's syndromes
    assign free     = !bm_busy && !go_q;
    assign bm_start = go_q;
    assign bm_syn   = syn_q;
    // syn_q is loaded in every free cycle (enable free, not free && any: the requests stay off the
    // enable of its T*M flip-flops, Fmax); BM reads it only from go_q on, one cycle after a grant
    // loaded it, and it holds while BM runs (free is low)
    always_ff @(posedge clk) begin
        if (free) syn_q <= syn[32'(pick)*T*M +: T*M];
        go_q <= !rst && free && any;
    end

    always_ff @(posedge clk) begin
        if (free && any) begin
            owner_q <= pick;
            last_q  <= pick;
        end
        if (rst) last_q <= '0;
    end

    for (genvar i = 0; i < N; i++) begin : g_out
        assign gnt[i]  = free && any && (pick == IW'(i));
        assign done[i] = bm_done && (owner_q == IW'(i));
    end

    ats_bch_bm #(
        .M   (M),
        .POLY(POLY),
        .T   (T)
    ) u_bm (
        .clk    (clk),
        .rst    (rst),
        .start  (bm_start),
        .syn_odd(bm_syn),
        .busy   (bm_busy),
        .done   (bm_done),
        .lambda (lambda),
        .len    (len)
    );

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && bm_start && bm_busy) begin
            $error("ats_bch_bm_arb: Berlekamp-Massey started while busy (%m)");
        end
    end
`endif
endmodule

`resetall
