// SPDX-License-Identifier: Apache-2.0
// ats_sata_pkg: SATA link-layer constants and functions shared by the rtl/sata blocks: primitive
// dwords (SATA 3.x, "Primitive encoding": byte 0 is K28.3 or, for ALIGN, K28.5, bytes 1..3 are data
// characters, first byte in bits 7:0, charisk 4'b0001), the frame CRC-32 and the frame scrambler.
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_sata_pkg;

    // primitive dwords (charisk 4'b0001)
    localparam logic [31:0] PRIM_ALIGN   = 32'h7B4A_4ABC;  // K28.5 D10.2 D10.2 D27.3
    localparam logic [31:0] PRIM_CONT    = 32'h9999_AA7C;  // K28.3 D10.5 D25.4 D25.4
    localparam logic [31:0] PRIM_DMAT    = 32'hB536_367C;  // K28.3 D22.1 D22.1 D21.5
    localparam logic [31:0] PRIM_EOF     = 32'hD5D5_B57C;  // K28.3 D21.5 D21.6 D21.6
    localparam logic [31:0] PRIM_HOLD    = 32'hD5D5_AA7C;  // K28.3 D10.5 D21.6 D21.6
    localparam logic [31:0] PRIM_HOLDA   = 32'h9595_AA7C;  // K28.3 D10.5 D21.4 D21.4
    localparam logic [31:0] PRIM_PMACK   = 32'h9595_957C;  // K28.3 D21.4 D21.4 D21.4
    localparam logic [31:0] PRIM_PMNAK   = 32'hF5F5_957C;  // K28.3 D21.4 D21.7 D21.7
    localparam logic [31:0] PRIM_PMREQ_P = 32'h1717_B57C;  // K28.3 D21.5 D23.0 D23.0
    localparam logic [31:0] PRIM_PMREQ_S = 32'h7575_957C;  // K28.3 D21.4 D21.3 D21.3
    localparam logic [31:0] PRIM_R_ERR   = 32'h5656_B57C;  // K28.3 D21.5 D22.2 D22.2
    localparam logic [31:0] PRIM_R_IP    = 32'h5555_B57C;  // K28.3 D21.5 D21.2 D21.2
    localparam logic [31:0] PRIM_R_OK    = 32'h3535_B57C;  // K28.3 D21.5 D21.1 D21.1
    localparam logic [31:0] PRIM_R_RDY   = 32'h4A4A_957C;  // K28.3 D21.4 D10.2 D10.2
    localparam logic [31:0] PRIM_SOF     = 32'h3737_B57C;  // K28.3 D21.5 D23.1 D23.1
    localparam logic [31:0] PRIM_SYNC    = 32'hB5B5_957C;  // K28.3 D21.4 D21.5 D21.5
    localparam logic [31:0] PRIM_WTRM    = 32'h5858_B57C;  // K28.3 D21.5 D24.2 D24.2
    localparam logic [31:0] PRIM_X_RDY   = 32'h5757_B57C;  // K28.3 D21.5 D23.2 D23.2

    // primitive classes inside the link (received dwords are decoded to these); plain constants
    // rather than an enum, so that the functions below read in Yosys as well as in Verilator
    localparam int PW = 4;
    localparam logic [PW-1:0] P_NONE  = 4'd0;   // no primitive: a data dword, or none (ALIGN removed)
    localparam logic [PW-1:0] P_ALIGN = 4'd1;
    localparam logic [PW-1:0] P_CONT  = 4'd2;
    localparam logic [PW-1:0] P_SYNC  = 4'd3;
    localparam logic [PW-1:0] P_R_RDY = 4'd4;
    localparam logic [PW-1:0] P_R_OK  = 4'd5;
    localparam logic [PW-1:0] P_R_ERR = 4'd6;
    localparam logic [PW-1:0] P_R_IP  = 4'd7;
    localparam logic [PW-1:0] P_X_RDY = 4'd8;
    localparam logic [PW-1:0] P_WTRM  = 4'd9;
    localparam logic [PW-1:0] P_SOF   = 4'd10;
    localparam logic [PW-1:0] P_EOF   = 4'd11;
    localparam logic [PW-1:0] P_HOLD  = 4'd12;
    localparam logic [PW-1:0] P_HOLDA = 4'd13;
    localparam logic [PW-1:0] P_PM    = 4'd14;  // PMREQ_P / PMREQ_S received; PMNAK sent
    localparam logic [PW-1:0] P_OTHER = 4'd15;  // any other K dword (DMAT, PMACK, unknown, violation)

    // The primitives the link decodes, as a table (row i: dword and class), for a decode in two
    // register stages (match flags, then class) instead of one deep compare-and-encode.
    localparam int NDEC = 17;
    localparam logic [NDEC*32-1:0] DEC_WORD = {
        PRIM_PMACK, PRIM_DMAT, PRIM_PMREQ_S, PRIM_PMREQ_P, PRIM_HOLDA, PRIM_HOLD, PRIM_EOF,
        PRIM_SOF, PRIM_WTRM, PRIM_X_RDY, PRIM_R_IP, PRIM_R_ERR, PRIM_R_OK, PRIM_R_RDY, PRIM_SYNC,
        PRIM_CONT, PRIM_ALIGN};
    localparam logic [NDEC*PW-1:0] DEC_CLASS = {
        P_OTHER, P_OTHER, P_PM, P_PM, P_HOLDA, P_HOLD, P_EOF,
        P_SOF, P_WTRM, P_X_RDY, P_R_IP, P_R_ERR, P_R_OK, P_R_RDY, P_SYNC,
        P_CONT, P_ALIGN};

    // (functions assign their name and use no `return`: Yosys's reader)
    // the dword the link sends for a primitive class (P_PM sends PMNAK; P_NONE/P_OTHER send SYNC)
    function automatic logic [31:0] prim_word(input logic [PW-1:0] p);
        logic [31:0] w;
        case (p)
            P_ALIGN: w = PRIM_ALIGN;
            P_CONT:  w = PRIM_CONT;
            P_R_RDY: w = PRIM_R_RDY;
            P_R_OK:  w = PRIM_R_OK;
            P_R_ERR: w = PRIM_R_ERR;
            P_R_IP:  w = PRIM_R_IP;
            P_X_RDY: w = PRIM_X_RDY;
            P_WTRM:  w = PRIM_WTRM;
            P_SOF:   w = PRIM_SOF;
            P_EOF:   w = PRIM_EOF;
            P_HOLD:  w = PRIM_HOLD;
            P_HOLDA: w = PRIM_HOLDA;
            P_PM:    w = PRIM_PMNAK;
            default: w = PRIM_SYNC;
        endcase
        prim_word = w;
    endfunction

    // CRC-32 of a frame: polynomial 0x04C11DB7, seed 0x52325032, each dword taken as a 32-bit number
    // and shifted in most significant bit first, no reflection, no final inversion. The CRC over the
    // frame's dwords followed by its CRC dword is 0 (the receiver's check).
    localparam logic [31:0] CRC_SEED = 32'h5232_5032;
    localparam logic [31:0] CRC_POLY = 32'h04C1_1DB7;

    // bit-serial definition (the reference; the link uses the tables below, checked against it)
    function automatic logic [31:0] crc_next_serial(input logic [31:0] crc, input logic [31:0] d);
        logic [31:0] c;
        c = crc ^ d;
        for (int i = 0; i < 32; i++) begin
            c = c[31] ? ((c << 1) ^ CRC_POLY) : (c << 1);
        end
        crc_next_serial = c;
    endfunction

    // The CRC step is linear: crc_next(c, d) = M * (c ^ d) over GF(2). Row i of M (bit j set: input
    // bit j feeds output bit i), generated from crc_next_serial: each output bit is one XOR of at most
    // 17 inputs, which synthesis builds as a balanced tree (the unrolled loop gives a deep chain).
    localparam logic [32*32-1:0] CRC_M = {
        32'hFB808B20, 32'h7DC04590, 32'hBEE022C8, 32'h5F701164, 32'h2FB808B2, 32'h97DC0459,
        32'hB06E890C, 32'h58374486, 32'hAC1BA243, 32'hAD8D5A01, 32'hAD462620, 32'h56A31310,
        32'h2B518988, 32'h95A8C4C4, 32'hCAD46262, 32'h656A3131, 32'h493593B8, 32'h249AC9DC,
        32'h924D64EE, 32'hC926B277, 32'h9F13D21B, 32'hB409622D, 32'h21843A36, 32'h90C21D1B,
        32'h33E185AD, 32'h627049F6, 32'h313824FB, 32'hE31C995D, 32'h8A0EC78E, 32'hC50763C7,
        32'h19033AC3, 32'hF7011641
    };

    function automatic logic [31:0] crc_mul(input logic [31:0] x);
        logic [31:0] r;
        for (int i = 0; i < 32; i++) r[i] = ^(x & CRC_M[32*i +: 32]);
        crc_mul = r;
    endfunction

    function automatic logic [31:0] crc_next(input logic [31:0] crc, input logic [31:0] d);
        crc_next = crc_mul(crc ^ d);
    endfunction

    // Scrambler: LFSR x^16 + x^15 + x^13 + x^4 + 1 (Galois form, feedback mask 16'hA011), all ones at
    // SOF; 32 shifts per data dword, the bit shifted out of bit 15 at shift i is bit i of the dword's
    // XOR word. The first word after SOF is 32'hC2D2768D.
    localparam logic [15:0] SCR_SEED = 16'hFFFF;

    // {state after 32 shifts, the 32-bit XOR word}, bit-serial (the reference)
    function automatic logic [47:0] scr_step_serial(input logic [15:0] s);
        logic [15:0] st;
        logic [31:0] w;
        st = s;
        for (int i = 0; i < 32; i++) begin
            w[i] = st[15];
            st = {st[14:0], 1'b0} ^ (st[15] ? 16'hA011 : 16'h0000);
        end
        scr_step_serial = {st, w};
    endfunction

    // the same as a table: bit i of {state, word} is the XOR of the state bits set in row i
    // (at most 10), generated from scr_step_serial
    localparam logic [48*16-1:0] SCR_M = {
        16'h6E70, 16'h5948, 16'h2CA4, 16'hF822, 16'h7C11, 16'hBE08,
        16'h5F04, 16'h2F82, 16'h97C1, 16'h4BE0, 16'h25F0, 16'h12F8,
        16'hE70C, 16'h7386, 16'hB9C3, 16'hDCE1, 16'hDCE1, 16'hB9C3,
        16'h7386, 16'hE70C, 16'hCE19, 16'h9C33, 16'h3866, 16'h70CD,
        16'hE19B, 16'hC337, 16'h866E, 16'h0CDC, 16'h19B9, 16'h3372,
        16'h66E5, 16'hCDCB, 16'h9B97, 16'h372E, 16'h6E5C, 16'hDCB8,
        16'hB970, 16'h72E0, 16'hE5C0, 16'hCB80, 16'h9700, 16'h2E00,
        16'h5C00, 16'hB800, 16'h7000, 16'hE000, 16'hC000, 16'h8000
    };

    function automatic logic [47:0] scr_step(input logic [15:0] s);
        logic [47:0] r;
        for (int i = 0; i < 48; i++) r[i] = ^(s & SCR_M[16*i +: 16]);
        scr_step = r;
    endfunction

    // M * (the XOR word scr_step gives for state s), as a table over s (at most 13 bits a row): the
    // receiver's CRC contribution of a data dword is M*d ^ M*w, with M*w ready a stage early
    localparam logic [32*16-1:0] SCR_MW = {
        16'hC626, 16'h8C4C, 16'hC479, 16'h88F3, 16'h11E7, 16'hFF2E,
        16'h387B, 16'h70F6, 16'h3D0D, 16'hBC3D, 16'hBE5C, 16'h7CB9,
        16'hF973, 16'h2E06, 16'h80ED, 16'h01DA, 16'h1973, 16'h32E7,
        16'hB92E, 16'hAEBC, 16'h9B5F, 16'hF098, 16'hFBF6, 16'h2B0C,
        16'h4CDF, 16'h8378, 16'h06F0, 16'hCBC7, 16'h51A9, 16'h7FB2,
        16'hE5A2, 16'h0D63
    };

    function automatic logic [31:0] scr_mw(input logic [15:0] s);
        logic [31:0] r;
        for (int i = 0; i < 32; i++) r[i] = ^(s & SCR_MW[16*i +: 16]);
        scr_mw = r;
    endfunction

endpackage

`resetall
