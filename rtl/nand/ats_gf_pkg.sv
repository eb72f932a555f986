// SPDX-License-Identifier: Apache-2.0
// ats_gf_pkg: GF(2^m) arithmetic shared by the BCH blocks (ats_bch_dec, ats_bch_bm).
// Elements are GF_W-bit vectors (polynomial basis, bit i = coefficient of alpha^i), zero above bit
// m-1, so that one package serves every field width m <= GF_W; the field is given to each function
// by m and its primitive polynomial poly (with the x^m term, e.g. 'h201B for m = 13).
// A linear map of GF(2^m) over GF(2) ("times a constant", squaring) is held as its columns: the
// image of alpha^i at [i*GF_W +: GF_W] (zero for i >= m); gf_cmul applies one as an XOR matrix.
// Callers refer to the functions as ats_gf_pkg::name (Yosys does not support `import` inside a
// module) and cast to and from their own width: M'(ats_gf_pkg::gf_cmul(GF_W'(a), cols)).
// Runtime (synthesised) functions: gf_cmul, gf_mul_part, gf_frob. The others are meant for
// elaboration-time constants (tables); they are plain shift-and-add.
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_gf_pkg;
    localparam int GF_W  = 16;              // widest supported field
    localparam int GF_WW = GF_W * GF_W;     // a linear map as GF_W columns of GF_W bits

    // x * alpha. poly is an int (callers pass their POLY parameter as is) of which only the low
    // GF_W + 1 bits can be non-zero: the waiver is for the unused high bits of that argument.
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [GF_W-1:0] gf_mulx(input logic [GF_W-1:0] x, input int m,
                                                input int poly);
        logic [GF_W:0] y;
        y = {x, 1'b0};
        if (x[m-1]) y = y ^ (GF_W + 1)'(poly);
        gf_mulx = y[GF_W-1:0];
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // the part of a*b from the bits b[i], lo <= i < hi (shift and add). Lets a caller split one
    // multiplier into registered halves; gf_mul_part(a, b, m, poly, 0, m) is the full product.
    // (The waiver: as for gf_mulx, only the low GF_W bits of poly are used.)
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [GF_W-1:0] gf_mul_part(input logic [GF_W-1:0] a,
                                                    input logic [GF_W-1:0] b, input int m,
                                                    input int poly, input int lo, input int hi);
        logic [GF_W-1:0] p, x;
        p = '0;
        x = a;
        for (int i = 0; i < GF_W; i++) begin
            if (i >= lo && i < hi && i < m && b[i]) p = p ^ x;
            // x * alpha as gf_mulx computes it, written out: this function is inlined at every
            // runtime call, and a nested call per step doubled Yosys's elaboration time
            x = {x[GF_W-2:0], 1'b0} ^ (GF_W'(poly) & {GF_W{x[m-1]}});
        end
        gf_mul_part = p;
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // alpha^e, e >= 0 (square and multiply on e mod 2^m - 1)
    function automatic logic [GF_W-1:0] gf_pow(input int e, input int m, input int poly);
        logic [GF_W-1:0] r, b;
        int x;
        r = 1;
        b = 2;
        x = e % ((1 << m) - 1);
        for (int i = 0; i < m; i++) begin
            if (((x >> i) & 1) != 0) r = gf_mul_part(r, b, m, poly, 0, m);
            b = gf_mul_part(b, b, m, poly, 0, m);
        end
        gf_pow = r;
    endfunction

    // columns of "times c": c * alpha^i, i = 0..m-1
    function automatic logic [GF_WW-1:0] gf_cols(input logic [GF_W-1:0] c, input int m,
                                                 input int poly);
        logic [GF_WW-1:0] v;
        logic [GF_W-1:0]  x;
        v = '0;
        x = c;
        for (int i = 0; i < m; i++) begin
            v[i*GF_W +: GF_W] = x;
            x = gf_mulx(x, m, poly);
        end
        gf_cols = v;
    endfunction

    // columns of the squaring map: alpha^(2i), i = 0..m-1 (two steps of x * alpha a column: an
    // elaboration-time constant, and Yosys evaluates constant functions slowly)
    function automatic logic [GF_WW-1:0] gf_sq_cols(input int m, input int poly);
        logic [GF_WW-1:0] v;
        logic [GF_W-1:0]  x;
        v = '0;
        x = 1;
        for (int i = 0; i < m; i++) begin
            v[i*GF_W +: GF_W] = x;
            x = gf_mulx(gf_mulx(x, m, poly), m, poly);
        end
        gf_sq_cols = v;
    endfunction

    // a linear map given by its columns applied to a: a constant XOR matrix in hardware
    function automatic logic [GF_W-1:0] gf_cmul(input logic [GF_W-1:0] a,
                                                input logic [GF_WW-1:0] cols);
        logic [GF_W-1:0] p;
        p = '0;
        for (int i = 0; i < GF_W; i++) p = p ^ (a[i] ? cols[i*GF_W +: GF_W] : '0);
        gf_cmul = p;
    endfunction

    // a^(2^e): e squarings, sq = gf_sq_cols(m, poly); e a constant at the call
    function automatic logic [GF_W-1:0] gf_frob(input logic [GF_W-1:0] a, input int e,
                                                input logic [GF_WW-1:0] sq);
        logic [GF_W-1:0] r;
        r = a;
        for (int k = 0; k < e; k++) r = gf_cmul(r, sq);
        gf_frob = r;
    endfunction

    // i = odd_part(i) * 2^two_exp(i), i >= 1 (syndrome S_i = S_odd^(2^e) of a binary code)
    function automatic int odd_part(input int i);
        int o;
        o = i;
        while (o % 2 == 0) o = o / 2;
        odd_part = o;
    endfunction
    function automatic int two_exp(input int i);
        int o, e;
        o = i;
        e = 0;
        while (o % 2 == 0) begin
            o = o / 2;
            e++;
        end
        two_exp = e;
    endfunction
endpackage

`resetall
