// SPDX-License-Identifier: Apache-2.0
// ats_nand_page_wr: the write half of ats_nand_page. PROGRAM: s_wdata words (data, then the 5
// metadata words) -> CRC-32C and the BCH encoder (GF(2^13), t = 8 per 512 B sector) -> the page
// image in bus order on m_cdata (data, 0xFF mark, metadata codeword, sector parity from a small
// buffer); PROGRAM_RAW: words straight to m_cdata; a rejected PROGRAM's words are drained.
// Jobs start one cycle after the top accepted the request (start_* go to registers only); wr_idle
// and every output are registers or a decode of registers. Page format and timing:
// rtl/nand/README_page.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets the CRC-32C byte step as a look-up table filled at time 0 from
// ats_nand_pkg::crc32c_byte (same values; README_page.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_nand_page_wr #(
    parameter int WAYS        = 4,     // dies on the channel (1..8)
    parameter int PAGE_BYTES  = 4096,  // data bytes per page: a multiple of 512 (1..32 sectors)
    parameter int SPARE_BYTES = 224    // spare bytes per page (PROGRAM_RAW image length)
) (
    input  wire logic                 clk,
    input  wire logic                 rst,           // synchronous, active high

    // job start: the request accepted this cycle (the top's acceptance; registered here)
    input  wire logic                 start_prog,    // a good PROGRAM
    input  wire logic                 start_praw,    // a good PROGRAM_RAW
    input  wire logic                 start_drain,   // a rejected PROGRAM / PROGRAM_RAW
    input  wire logic                 start_drain_prog, // start_drain: it was a PROGRAM (not RAW)
    input  wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] start_way,
    output wire logic                 wr_idle,       // registered: a PROGRAM (or drain) may start

    // PROGRAM data (ats_nand_page s_wdata)
    input  wire logic                 s_wdata_valid,
    output wire logic                 s_wdata_ready,
    input  wire logic [31:0]          s_wdata_data,
    input  wire logic                 s_wdata_last,

    // page image bytes to ats_nand_chan s_wdata (a 2-entry FIFO's registers)
    output wire logic                 m_cdata_valid,
    input  wire logic                 m_cdata_ready,
    output wire logic [7:0]           m_cdata_data,
    output wire logic                 m_cdata_last,

    // framing error (`last` misplaced) of the PROGRAM being written, from registers
    output wire logic                 poison_valid,
    output wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] poison_way
);
    localparam int WAY_W      = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int K          = 512;                       // data bytes per sector
    localparam int PAR        = 13;                        // parity bytes per codeword (M 13, T 8)
    localparam int CW         = K + PAR;                   // codeword bytes
    localparam int SECT       = PAGE_BYTES / K;            // data sectors per page
    localparam int META_B     = 19;                        // metadata bytes (section 6)
    localparam int MCW_PAD    = K - (META_B + 4);          // implicit leading zero bytes
    localparam int RAW_LEN    = PAGE_BYTES + SPARE_BYTES;
    localparam int PAGE_WORDS = PAGE_BYTES / 4;
    localparam int RAW_WORDS  = RAW_LEN / 4;
    localparam int META_WORDS = 5;
    localparam int PAR_N      = SECT * PAR;                // write-path parity bytes
    localparam int PAR_AW     = $clog2(PAR_N);
    localparam int SEC_W      = $clog2(SECT + 2);          // codeword index (SECT = metadata codeword)
    localparam int WCNT_W     = $clog2(RAW_WORDS + META_WORDS + 1);

    // =================================================================================================
    // Encoder
    // =================================================================================================
    logic       enc_in_valid, enc_in_ready, enc_in_last;
    logic [7:0] enc_in_data;
    logic       enc_out_valid, enc_out_ready, enc_out_last;
    logic [7:0] enc_out_data;

    ats_bch_enc #(.M(13), .T(8), .K(K)) u_enc (
        .clk, .rst,
        .s_data_valid(enc_in_valid), .s_data_ready(enc_in_ready), .s_data_data(enc_in_data),
        .s_data_last(enc_in_last),
        .m_data_valid(enc_out_valid), .m_data_ready(enc_out_ready), .m_data_data(enc_out_data),
        .m_data_last(enc_out_last)
    );

    // =================================================================================================
    // Job start, one cycle after acceptance (registered: the acceptance logic does not fan out into
    // every write-path register in the same cycle)
    // =================================================================================================
    typedef enum logic [1:0] {WS_NONE, WS_PROG, WS_PRAW, WS_DRAIN} wr_start_e;
    wr_start_e         ws_q;
    logic [WAY_W-1:0]  ws_way_q;
    logic              ws_drain_prog_q;  // WS_DRAIN: the rejected request was a PROGRAM (not RAW)
    always_ff @(posedge clk) begin
        ws_q <= WS_NONE;
        if (start_prog) ws_q <= WS_PROG;
        else if (start_praw) ws_q <= WS_PRAW;
        else if (start_drain) ws_q <= WS_DRAIN;
        ws_way_q <= start_way;
        ws_drain_prog_q <= start_drain_prog;
        if (rst) ws_q <= WS_NONE;
    end

    // =================================================================================================
    // Write path: s_wdata words -> (CRC, encoder) -> chan bytes; sector parity into a small buffer
    // =================================================================================================
    // bytes for the chan go through a 2-entry FIFO: the write path sees only registered state of
    // it, and the chan sees only this FIFO's registers (its own s_wdata_ready is a register)
    logic       wb_valid, wb_ready, wb_last;
    logic [7:0] wb_data;
    // (ats_nand_fifo2: a write enable never depends on the chan's ready)
    ats_nand_fifo2 #(.W(9)) u_wq (
        .clk, .rst,
        .s_valid(wb_valid), .s_ready(wb_ready), .s_data({wb_last, wb_data}),
        .m_valid(m_cdata_valid), .m_ready(m_cdata_ready), .m_data({m_cdata_last, m_cdata_data})
    );

    typedef enum logic [2:0] {WI_IDLE, WI_DATA, WI_META, WI_MCW, WI_RAW, WI_DRAIN} wr_in_e;
    typedef enum logic [2:0] {WO_IDLE, WO_DATA, WO_BBM, WO_MCW, WO_PAR} wr_out_e;
    wr_in_e            wi_st_q, wi_st_d;
    wr_out_e           wo_st_q, wo_st_d;
    logic [WAY_W-1:0]  wr_way_q, wr_way_d;       // PROGRAM being written (for the poison flag)
    logic              wr_poison_q, wr_poison_d;
    logic [WCNT_W-1:0] wcnt_q, wcnt_d;           // words left (RAW, DRAIN) / metadata word index
    logic [$clog2(PAGE_BYTES+1)-1:0] wbyte_q, wbyte_d;  // data bytes into the encoder
    logic [9:0]        wpos_q, wpos_d;           // byte in the encoder input codeword (0..511)
    logic [9:0]        opos_q, opos_d;           // byte in the encoder output codeword (0..524)
    logic              opar_q, opar_d;           // opos_q >= K: parity bytes (registered: Fmax)
    logic              odrop_q, odrop_d;         // metadata codeword: opos_q < MCW_PAD (zeros)
    logic [SEC_W-1:0]  osec_q, osec_d;           // encoder output codeword
    logic [PAR_AW-1:0] pidx_q, pidx_d;           // parity buffer index (write, then read)
    logic [31:0]       wcrc_q, wcrc_d;
    logic [1:0]        mph_q, mph_d;             // metadata codeword input: 0 zeros, 1 metadata,
                                                 // 3 one idle cycle (CRC pipeline), 2 CRC
    logic [8*META_B-1:0] wmeta_q, wmeta_d;       // metadata in spare byte order (shifts out)
    logic [32*META_WORDS-1:0] wmw_q, wmw_d;      // metadata words as received (w4 on top)
    logic [META_WORDS-1:0] wmo_q, wmo_d;         // metadata word index, one-hot
    logic              wc_z_q, wc_z_d;           // wcnt_q == 0 (registered compare, Fmax)
    logic              wc_1_q, wc_1_d;           // wcnt_q == 1
    // write CRC, one stage behind the encoder input: the byte (unpacked data or metadata) is
    // registered first, so the CRC register sees one source and a register enable (Fmax)
    logic              wc_v_q, wc_v_d;
    logic [7:0]        wc_b_q, wc_b_d;
    // word unpacker
    logic              up_v_q, up_v_d;
    logic [31:0]       up_w_q, up_w_d;
    logic [1:0]        up_i_q, up_i_d;
    logic [7:0]        up_byte;
    assign up_byte = up_w_q[7:0];                // the word shifts right a byte at a time

    logic [7:0]        par_mem [PAR_N];          // sector parity of the PROGRAM being written
    logic              par_we;
    logic [7:0]        par_rd;
    // The buffer is read one byte ahead into pr_q (Fmax: the LUT RAM's read mux is off the
    // page-image FIFO's entries): ra_q is 0 outside WO_PAR and pidx_q + 1 in it, pr_q is loaded in
    // every cycle outside WO_PAR (so it holds byte 0 when WO_PAR starts) and at each byte taken in
    // it, so pr_q = par_mem[pidx_q] in every WO_PAR cycle (checked below)
    logic [PAR_AW-1:0] ra_q, ra_d;
    logic [7:0]        pr_q;
    assign par_rd = par_mem[ra_q];
    always_ff @(posedge clk) if (par_we) par_mem[pidx_q] <= enc_out_data;

    // registered from the current (not next) state: free one cycle after both sides went idle,
    // if no job start is pending (Fmax: the write FSMs' next-state logic is not on this path)
    logic wr_idle_q;
    assign wr_idle = wr_idle_q;
    always_ff @(posedge clk) begin
        wr_idle_q <= (wi_st_q == WI_IDLE) && (wo_st_q == WO_IDLE) && (ws_q == WS_NONE) &&
                     !start_prog && !start_praw && !start_drain;
        if (rst) wr_idle_q <= 1'b1;
    end

    // the poison flag of the PROGRAM being written, for the top's per-way context (the completion
    // is much later)
    assign poison_valid = wr_poison_q &&
                          (wi_st_q == WI_DATA || wi_st_q == WI_META || wi_st_q == WI_MCW);
    assign poison_way   = wr_way_q;

    // encoder input bytes pass a 2-entry FIFO (registered data and ready): the input mux
    // (unpacked word byte / metadata / CRC) and the encoder's remainder update are in different
    // cycles (Fmax). ats_nand_fifo2: a write enable depends on its registers only, never on the
    // encoder's ready
    logic       ei_valid, ei_ready, ei_last;
    logic [7:0] ei_data;
    ats_nand_fifo2 #(.W(9)) u_eq (
        .clk, .rst,
        .s_valid(ei_valid), .s_ready(ei_ready), .s_data({ei_last, ei_data}),
        .m_valid(enc_in_valid), .m_ready(enc_in_ready), .m_data({enc_in_last, enc_in_data})
    );

`ifndef ATS_SYNTH_FORM
    // simulation form: crc32c_byte(c, b) = (c >> 8) ^ crc32c_byte(0, c[7:0] ^ b) (reflected, linear)
    logic [31:0] crc_t [256];
    initial begin
        for (int v = 0; v < 256; v++) crc_t[v] = ats_nand_pkg::crc32c_byte(32'h0, 8'(v));
    end
`endif
    logic wd_take;   // a word is taken from s_wdata
    // Input words pass a 2-entry FIFO (pointers, registered ready = not full): s_wdata_valid /
    // _data / _last reach only the FIFO's registers, the input FSM sees registered words (Fmax:
    // out of context the input port logic was placed far from the FSM, 8.6 ns). It may hold the
    // next PROGRAM's first words before that request is accepted: harmless, s_wdata carries only
    // PROGRAM data in request order.
    logic        iw_ready, iw_valid, iw_last;
    logic [31:0] iw_data;
    ats_nand_fifo2 #(.W(33)) u_iw (
        .clk, .rst,
        .s_valid(s_wdata_valid), .s_ready(iw_ready), .s_data({s_wdata_last, s_wdata_data}),
        .m_valid(iw_valid), .m_ready(wd_take), .m_data({iw_last, iw_data})
    );
    always_comb begin
        wi_st_d = wi_st_q; wo_st_d = wo_st_q; wr_way_d = wr_way_q; wr_poison_d = wr_poison_q;
        wcnt_d = wcnt_q; wbyte_d = wbyte_q; wpos_d = wpos_q; opos_d = opos_q; osec_d = osec_q;
        opar_d = opar_q; odrop_d = odrop_q;
        pidx_d = pidx_q; wcrc_d = wcrc_q; wmeta_d = wmeta_q; mph_d = mph_q;
        ra_d = (wo_st_q == WO_PAR) ? ra_q : '0;
        wmw_d = wmw_q; wmo_d = wmo_q; wc_z_d = wc_z_q; wc_1_d = wc_1_q;
        wc_v_d = 1'b0; wc_b_d = (wi_st_q == WI_DATA) ? up_byte : wmeta_q[7:0];
`ifdef ATS_SYNTH_FORM
        if (wc_v_q) wcrc_d = ats_nand_pkg::crc32c_byte(wcrc_q, wc_b_q);
`else
        if (wc_v_q) wcrc_d = (wcrc_q >> 8) ^ crc_t[wcrc_q[7:0] ^ wc_b_q];
`endif
        up_v_d = up_v_q; up_w_d = up_w_q; up_i_d = up_i_q;
        wd_take = 1'b0;
        ei_valid = 1'b0; ei_data = 8'h00; ei_last = (wpos_q == 10'(K - 1));
        enc_out_ready = 1'b0;
        wb_valid = 1'b0; wb_data = 8'hFF; wb_last = 1'b0;
        par_we = 1'b0;

        // ---- input side --------------------------------------------------------------------------
        unique case (wi_st_q)
            WI_IDLE: ;
            WI_DATA: begin
                // data words, unpacked, into the encoder; CRC over every data byte
                if (!up_v_q && iw_valid) begin
                    wd_take = 1'b1;
                    up_v_d = 1'b1; up_w_d = iw_data; up_i_d = 2'd0;
                    if (iw_last) wr_poison_d = 1'b1;     // `last` inside the data
                end
                ei_valid = up_v_q;
                ei_data = up_byte;
                if (up_v_q && ei_ready) begin
                    wc_v_d = 1'b1;
                    up_i_d = up_i_q + 1'b1;
                    up_w_d = up_w_q >> 8;
                    if (up_i_q == 2'd3) up_v_d = 1'b0;
                    wpos_d = (wpos_q == 10'(K - 1)) ? '0 : wpos_q + 1'b1;
                    wbyte_d = wbyte_q + 1'b1;
                    if (32'(wbyte_q) == PAGE_BYTES - 1) begin
                        wi_st_d = WI_META;
                        wmo_d = META_WORDS'(1);
                    end
                end
            end
            WI_META: begin
                // five metadata words into the spare-order register
                if (iw_valid) begin
                    wd_take = 1'b1;
                    // words shift in as they come (one enable, no word decode); they are put in
                    // spare order during the metadata codeword's zero phase (below)
                    if (iw_last != wmo_q[META_WORDS-1]) wr_poison_d = 1'b1;
                    wmw_d = {iw_data, wmw_q[32*META_WORDS-1:32]};
                    wmo_d = wmo_q << 1;
                    if (wmo_q[META_WORDS-1]) begin
                        wi_st_d = WI_MCW;
                        wpos_d = '0;
                        mph_d = 2'd0;
                    end
                end
            end
            WI_MCW: begin
                // metadata codeword: implicit zeros, metadata (CRC'd), then the CRC
                // (phase registers, not position compares, drive the encoder input: Fmax)
                // metadata words (complete from the 2nd cycle of this state) to spare order:
                // a fixed permutation, loaded during the zeros (w0 = wmw_q[31:0] .. w4 on top)
                if (mph_q == 2'd0) begin
                    wmeta_d[31:0]    = wmw_q[31:0];                 // lpn
                    wmeta_d[39:32]   = wmw_q[135:128];              // txid
                    wmeta_d[47:40]   = wmw_q[143:136];              // kind
                    wmeta_d[111:48]  = wmw_q[95:32];                // seq
                    wmeta_d[143:112] = wmw_q[127:96];               // epoch
                    wmeta_d[151:144] = wmw_q[151:144];              // flags
                end
                ei_valid = (mph_q != 2'd3);
                // CRC bytes: the final CRC register itself, inverted (and poisoned), shifted out
                ei_data = (mph_q == 2'd0) ? 8'h00 : (mph_q == 2'd1) ? wmeta_q[7:0] :
                          (~wcrc_q[7:0] ^ {8{wr_poison_q}});
                if (mph_q == 2'd3) begin
                    mph_d = 2'd2;                   // the last metadata byte's CRC step is done
                end else if (ei_ready) begin
                    if (mph_q == 2'd1) begin
                        wc_v_d = 1'b1;
                        wmeta_d = wmeta_q >> 8;
                    end
                    if (mph_q == 2'd2) wcrc_d = wcrc_q >> 8;
                    if (wpos_q == 10'(MCW_PAD - 1)) mph_d = 2'd1;
                    if (wpos_q == 10'(MCW_PAD + META_B - 1)) mph_d = 2'd3;
                    wpos_d = wpos_q + 1'b1;
                    if (wpos_q == 10'(K - 1)) wi_st_d = WI_IDLE;
                end
            end
            WI_RAW: begin
                // PROGRAM_RAW: words straight to the chan, no ECC
                if (!up_v_q && iw_valid && !wc_z_q) begin
                    wd_take = 1'b1;
                    up_v_d = 1'b1; up_w_d = iw_data; up_i_d = 2'd0;
                    wcnt_d = wcnt_q - 1'b1;
                    wc_z_d = wc_1_q; wc_1_d = (wcnt_q == WCNT_W'(2));
                end
                wb_valid = up_v_q;
                wb_data = up_byte;
                wb_last = wc_z_q && (up_i_q == 2'd3);
                if (up_v_q && wb_ready) begin
                    up_i_d = up_i_q + 1'b1;
                    up_w_d = up_w_q >> 8;
                    if (up_i_q == 2'd3) begin
                        up_v_d = 1'b0;
                        if (wc_z_q) wi_st_d = WI_IDLE;
                    end
                end
            end
            WI_DRAIN: begin
                // the data of a rejected PROGRAM is consumed and dropped
                if (iw_valid) begin
                    wd_take = 1'b1;
                    wcnt_d = wcnt_q - 1'b1;
                    wc_z_d = wc_1_q; wc_1_d = (wcnt_q == WCNT_W'(2));
                    if (wc_1_q) wi_st_d = WI_IDLE;
                end
            end
            default: wi_st_d = WI_IDLE;
        endcase

        // ---- output side (ECC PROGRAM): encoder bytes to the chan, parity to its buffer ------------
        unique case (wo_st_q)
            WO_IDLE: ;
            WO_DATA: begin
                if (!opar_q) begin
                    wb_valid = enc_out_valid;
                    wb_data = enc_out_data;
                    enc_out_ready = wb_ready;
                end else begin
                    enc_out_ready = 1'b1;
                    par_we = enc_out_valid;
                end
                if (enc_out_valid && enc_out_ready) begin
                    if (opar_q) pidx_d = pidx_q + 1'b1;
                    opos_d = opos_q + 1'b1;
                    if (opos_q == 10'(K - 1)) opar_d = 1'b1;
                    if (opos_q == 10'(CW - 1)) begin
                        opar_d = 1'b0;
                        opos_d = '0;
                        osec_d = osec_q + 1'b1;
                        if (32'(osec_q) == SECT - 1) wo_st_d = WO_BBM;
                    end
                end
            end
            WO_BBM: begin
                wb_valid = 1'b1;                  // spare byte 0: bad-block mark stays 0xFF
                wb_data = 8'hFF;
                if (wb_ready) begin
                    wo_st_d = WO_MCW;
                    odrop_d = 1'b1;
                end
            end
            WO_MCW: begin
                if (odrop_q) begin
                    enc_out_ready = 1'b1;            // the implicit zeros are not stored
                end else begin
                    wb_valid = enc_out_valid;
                    wb_data = enc_out_data;
                    enc_out_ready = wb_ready;
                end
                if (enc_out_valid && enc_out_ready) begin
                    opos_d = opos_q + 1'b1;
                    if (opos_q == 10'(MCW_PAD - 1)) odrop_d = 1'b0;
                    if (opos_q == 10'(CW - 1)) begin
                        wo_st_d = WO_PAR;
                        pidx_d = '0;
                        ra_d = PAR_AW'(1);
                    end
                end
            end
            WO_PAR: begin
                wb_valid = 1'b1;
                wb_data = pr_q;
                wb_last = (32'(pidx_q) == PAR_N - 1);
                if (wb_ready) begin
                    pidx_d = pidx_q + 1'b1;
                    ra_d = ra_q + 1'b1;
                    if (32'(pidx_q) == PAR_N - 1) wo_st_d = WO_IDLE;
                end
            end
            default: wo_st_d = WO_IDLE;
        endcase

        // ---- job start ---------------------------------------------------------------------------
        if (ws_q == WS_PROG) begin
            wi_st_d = WI_DATA; wo_st_d = WO_DATA; wr_way_d = ws_way_q; wr_poison_d = 1'b0;
            wbyte_d = '0; wpos_d = '0; opos_d = '0; osec_d = '0; pidx_d = '0; opar_d = 1'b0;
            wcrc_d = 32'hFFFF_FFFF; up_v_d = 1'b0; wc_v_d = 1'b0;
        end else if (ws_q == WS_PRAW) begin
            wi_st_d = WI_RAW; wcnt_d = WCNT_W'(RAW_WORDS); up_v_d = 1'b0;
            wc_z_d = 1'b0; wc_1_d = (RAW_WORDS == 1);
        end else if (ws_q == WS_DRAIN) begin
            wi_st_d = WI_DRAIN;
            wcnt_d = WCNT_W'(ws_drain_prog_q ? PAGE_WORDS + META_WORDS : RAW_WORDS);
            wc_z_d = 1'b0;
            wc_1_d = ws_drain_prog_q ? (PAGE_WORDS + META_WORDS == 1) : (RAW_WORDS == 1);
        end
    end
    assign s_wdata_ready = iw_ready;

    always_ff @(posedge clk) begin
        wr_way_q <= wr_way_d; wr_poison_q <= wr_poison_d; wcnt_q <= wcnt_d; wbyte_q <= wbyte_d;
        wpos_q <= wpos_d; opos_q <= opos_d; opar_q <= opar_d; odrop_q <= odrop_d; osec_q <= osec_d; pidx_q <= pidx_d; wcrc_q <= wcrc_d;
        wmeta_q <= wmeta_d; up_w_q <= up_w_d; up_i_q <= up_i_d; mph_q <= mph_d;
        wmw_q <= wmw_d; wmo_q <= wmo_d; wc_z_q <= wc_z_d; wc_1_q <= wc_1_d;
        wc_v_q <= wc_v_d; wc_b_q <= wc_b_d;
        ra_q <= ra_d;
        if (wo_st_q != WO_PAR || wb_ready) pr_q <= par_rd;
        wi_st_q <= wi_st_d; wo_st_q <= wo_st_d; up_v_q <= up_v_d;
        if (rst) begin
            wi_st_q <= WI_IDLE; wo_st_q <= WO_IDLE; up_v_q <= 1'b0; wc_v_q <= 1'b0;
        end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && wo_st_q == WO_PAR && pr_q != par_mem[pidx_q])
            $error("ats_nand_page_wr: parity read-ahead pr_q out of step at byte %0d (%m)", pidx_q);
    end
`endif

    logic unused_last;
    assign unused_last = enc_out_last;   // framing is by count
endmodule

`resetall
