// SPDX-License-Identifier: Apache-2.0
// ats_nand_page: one NAND channel's page controller. Turns page requests (READ, PROGRAM, ERASE and
// raw bring-up ops) into ONFI operations on an ats_nand_chan with WAYS dies, and puts one shared
// BCH encoder and decoder (GF(2^13), t = 8 per 512 B sector), the spare-area metadata
// (architecture.md section 6), a CRC-32C over data + metadata, erased-page detection and the
// factory bad-block mark on the data path.
// Page layout: PAGE_BYTES data, then spare = [0] 0xFF bad-block mark (never written as anything
// else), [1..19] metadata, [20..23] CRC-32C, [24..36] BCH parity of the metadata codeword
// (metadata + CRC as a shortened codeword: 489 implicit leading zero bytes), [37..] 13 parity bytes
// per data sector; the rest of the spare stays erased.
// A READ is one array read: the chan fetches data + used spare in one pass into a per-channel page
// buffer (block RAM: PAGE_BYTES data bytes + a double-buffered spare area); the decode job then
// feeds each sector with its parity, and the metadata codeword, from the buffer to the decoder.
// The theory of operation, stream formats and timing are in rtl/nand/README_page.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_page #(
    parameter int WAYS            = 4,     // dies on the channel (1..8)
    parameter int TAG_W           = 8,     // request tag (echoed)
    parameter int SLOT_W          = 8,     // page-buffer slot (opaque, echoed)
    parameter int PAGE_BYTES      = 4096,  // data bytes per page: a multiple of 512 (1..32 sectors)
    parameter int SPARE_BYTES     = 224,   // spare bytes per page (>= 37 + 13 * sectors)
    parameter int PAGES_PER_BLOCK = 64,    // pages per block, power of two, <= 256
    parameter int BLOCKS          = 4096,  // blocks per die, power of two, <= 4096
    parameter int ERASED_THR      = 8,     // a codeword with at most this many 0 bits reads as erased
    parameter int BAD_MARK_THR    = 4,     // spare byte 0 with at least this many 0 bits: bad block
    parameter int DEBUG_OPS       = 1,     // 1: ops 6 PROGRAM_RAW and 7 READ_RAW; 0: they are BAD_REQ
    // ONFI pin timings in clock cycles, passed to ats_nand_chan (see README_chan.md)
    parameter int T_WP            = 2,
    parameter int T_WH            = 2,
    parameter int T_RP            = 2,
    parameter int T_REH           = 2,
    parameter int T_WB            = 20,
    parameter int T_WHR           = 12,
    parameter int T_ADL           = 14,
    parameter int T_RR            = 4,
    parameter int T_RHW           = 20,
    parameter int T_CS            = 4
) (
    input  wire logic                 clk,
    input  wire logic                 rst,           // synchronous, active high

    // page requests (fields of ats_nand_sched m_ccmd_*, op widened to 3 bits)
    input  wire logic                 s_cmd_valid,
    output wire logic                 s_cmd_ready,
    input  wire logic [TAG_W-1:0]     s_cmd_tag,
    input  wire logic [2:0]           s_cmd_op,      // READ 0, PROGRAM 1, ERASE 2, RESET 3, READ_ID 4,
                                                     // READ_PARAM 5, PROGRAM_RAW 6, READ_RAW 7
    input  wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] s_cmd_way,
    input  wire logic [11:0]          s_cmd_block,
    input  wire logic [7:0]           s_cmd_page,
    input  wire logic [SLOT_W-1:0]    s_cmd_slot,

    // PROGRAM data: PAGE_BYTES/4 data words then 5 metadata words (PROGRAM_RAW: (PAGE_BYTES +
    // SPARE_BYTES)/4 words), byte 0 in bits 7:0, `last` on the final word, in request order
    input  wire logic                 s_wdata_valid,
    output wire logic                 s_wdata_ready,
    input  wire logic [31:0]          s_wdata_data,
    input  wire logic                 s_wdata_last,

    // READ data: PAGE_BYTES/4 corrected data words then 5 metadata words (same format as in);
    // READ_RAW / READ_ID / READ_PARAM: raw words
    output wire logic                 m_rdata_valid,
    input  wire logic                 m_rdata_ready,
    output wire logic [31:0]          m_rdata_data,
    output wire logic [TAG_W-1:0]     m_rdata_tag,
    output wire logic [SLOT_W-1:0]    m_rdata_slot,
    output wire logic                 m_rdata_last,

    // completions (a read's follows its last data word)
    output wire logic                 m_cpl_valid,
    input  wire logic                 m_cpl_ready,
    output wire logic [TAG_W-1:0]     m_cpl_tag,
    output wire logic [SLOT_W-1:0]    m_cpl_slot,
    output wire logic [2:0]           m_cpl_status,  // OK 0, PROGRAM_FAIL 1, ERASE_FAIL 2,
                                                     // UNCORRECTABLE 3, BAD_REQ 4, ERASED 5
    output wire logic [7:0]           m_cpl_corrected, // bits corrected in the page (saturating)
    output wire logic                 m_cpl_bad_mark,  // READ: spare byte 0 is a bad-block mark

    // ONFI pins (docs/nand-pins.md)
    output wire logic [WAYS-1:0]      nand_ce_n,
    output wire logic                 nand_cle,
    output wire logic                 nand_ale,
    output wire logic                 nand_we_n,
    output wire logic                 nand_re_n,
    output wire logic                 nand_wp_n,
    output wire logic [7:0]           nand_dq_o,
    input  wire logic [7:0]           nand_dq_i,
    input  wire logic [WAYS-1:0]      nand_rb_n
);
    // ---- derived sizes --------------------------------------------------------------------------
    localparam int WAY_W      = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int K          = 512;                       // data bytes per sector
    localparam int PAR        = 13;                        // parity bytes per codeword (M 13, T 8)
    localparam int CW         = K + PAR;                   // codeword bytes
    localparam int SECT       = PAGE_BYTES / K;            // data sectors per page
    localparam int META_B     = 19;                        // metadata bytes (section 6)
    localparam int MCW_D      = META_B + 4;                // metadata + CRC: metadata codeword data
    localparam int MCW_PAD    = K - MCW_D;                 // implicit leading zero bytes
    localparam int SP_DPAR    = 1 + MCW_D + PAR;           // spare offset of sector 0's parity (37)
    localparam int SPARE_USED = SP_DPAR + SECT * PAR;      // spare bytes written by PROGRAM
    localparam int PROG_LEN   = PAGE_BYTES + SPARE_USED;
    localparam int RAW_LEN    = PAGE_BYTES + SPARE_BYTES;
    localparam int PAGE_WORDS = PAGE_BYTES / 4;
    localparam int RAW_WORDS  = RAW_LEN / 4;
    localparam int META_WORDS = 5;
    localparam int LEN_W      = $clog2(RAW_LEN + 1);
    localparam int PG_W       = $clog2(PAGES_PER_BLOCK);
    localparam int BLK_W      = $clog2(BLOCKS);
    localparam int RD_LEN     = PAGE_BYTES + SPARE_USED;   // READ: one fetch of data + used spare
    localparam int SPB_AW     = $clog2(SPARE_USED);        // spare-buffer half address bits
    localparam int SPR_AW     = SPB_AW + 1;                // spare RAM: two halves (double buffer)
    localparam int DB_AW      = $clog2(PAGE_BYTES);        // page (data) buffer address bits
    localparam int BANK_AW    = (DB_AW > 11) ? 11 : DB_AW; // one bank: one 2K x 9 block RAM
    localparam int BANKS      = (PAGE_BYTES + (1 << BANK_AW) - 1) >> BANK_AW;
    localparam int BK_W       = (BANKS > 1) ? $clog2(BANKS) : 1;
    localparam int PAR_N      = SECT * PAR;                // write-path parity bytes
    localparam int PAR_AW     = $clog2(PAR_N);
    localparam int SEC_W      = $clog2(SECT + 2);          // codeword index (SECT = metadata codeword)
    localparam int WCNT_W     = $clog2(RAW_WORDS + META_WORDS + 1);
    localparam int ZC_W       = $clog2(ERASED_THR + 2);
    localparam int ID_LEN     = 4;                         // READ_ID bytes
    localparam int PARAM_LEN  = 256;                       // READ_PARAM bytes (one copy)
    localparam int FIFO_D     = 4;                         // decoder input FIFO entries
    localparam logic [31:0] CRC_POLY = 32'h82F63B78;      // CRC-32C (Castagnoli), reflected

    localparam logic [2:0] OP_READ = 3'd0, OP_PROG = 3'd1, OP_ERASE = 3'd2, OP_RESET = 3'd3,
                           OP_RDID = 3'd4, OP_PARAM = 3'd5, OP_PRAW = 3'd6, OP_RRAW = 3'd7;
    // completion status (PROGRAM_FAIL 1 and ERASE_FAIL 2 come from the chan as they are)
    localparam logic [2:0] ST_OK = 3'd0, ST_UNCORR = 3'd3, ST_BAD = 3'd4, ST_ERASED = 3'd5;

    // ---- elaboration-time checks ------------------------------------------------------------------
    if (WAYS < 1 || WAYS > 8) begin : g_check_ways
        $fatal(1, "ats_nand_page: WAYS must be 1..8 (%m)");
    end
    if (PAGE_BYTES % K != 0 || SECT < 1 || SECT > 32) begin : g_check_page
        $fatal(1, "ats_nand_page: PAGE_BYTES must be 512 .. 16384, a multiple of 512 (%m)");
    end
    if (SPARE_USED > SPARE_BYTES) begin : g_check_spare
        $fatal(1, "ats_nand_page: SPARE_BYTES too small for mark + metadata + CRC + parity (%m)");
    end
    if (RAW_LEN % 4 != 0 || RAW_LEN > 65535) begin : g_check_raw
        $fatal(1, "ats_nand_page: PAGE_BYTES + SPARE_BYTES must be a multiple of 4, < 64 KiB (%m)");
    end
    if (PAGES_PER_BLOCK < 2 || PAGES_PER_BLOCK > 256 ||
        (PAGES_PER_BLOCK & (PAGES_PER_BLOCK - 1)) != 0) begin : g_check_ppb
        $fatal(1, "ats_nand_page: PAGES_PER_BLOCK must be a power of two, 2..256 (%m)");
    end
    if (BLOCKS < 2 || BLOCKS > 4096 || (BLOCKS & (BLOCKS - 1)) != 0 || BLK_W + PG_W > 24)
    begin : g_check_blocks
        $fatal(1, "ats_nand_page: BLOCKS must be a power of two, 2..4096, row <= 24 bits (%m)");
    end
    if ((2 << SPB_AW) > 2048) begin : g_check_spram
        $fatal(1, "ats_nand_page: the double spare buffer must fit one 2K x 9 block RAM (%m)");
    end
    if (ERASED_THR < 0 || ERASED_THR > 64 || BAD_MARK_THR < 1 || BAD_MARK_THR > 8)
    begin : g_check_thr
        $fatal(1, "ats_nand_page: ERASED_THR 0..64, BAD_MARK_THR 1..8 (%m)");
    end

    // ---- helpers -----------------------------------------------------------------------------------
    function automatic logic [31:0] crc_byte(input logic [31:0] c, input logic [7:0] b);
        logic [31:0] x;
        x = c ^ {24'b0, b};
        for (int i = 0; i < 8; i++) x = x[0] ? ((x >> 1) ^ CRC_POLY) : (x >> 1);
        crc_byte = x;
    endfunction
    function automatic logic [3:0] zeros8(input logic [7:0] b);
        logic [3:0] n;
        n = '0;
        for (int i = 0; i < 8; i++) n = n + {3'b0, !b[i]};
        zeros8 = n;
    endfunction

    // =================================================================================================
    // Channel, encoder, decoder
    // =================================================================================================
    logic              ch_cmd_valid, ch_cmd_ready;
    logic [2:0]        ch_cmd_op;
    logic [WAY_W-1:0]  ch_cmd_way;
    logic [23:0]       ch_cmd_row;
    logic [15:0]       ch_cmd_col;
    logic [LEN_W-1:0]  ch_cmd_len;
    logic              ch_wd_valid, ch_wd_ready, ch_wd_last;
    logic [7:0]        ch_wd_data;
    logic              cr_valid, cr_ready, cr_last;      // chan read data (before the FIFO)
    logic [7:0]        cr_data;
    logic [WAY_W-1:0]  cr_tag;
    logic              ch_rd_valid, ch_rd_ready, ch_rd_last;  // read data after the FIFO
    logic [7:0]        ch_rd_data;
    logic [WAY_W-1:0]  ch_rd_tag;
    logic              ch_cpl_valid, ch_cpl_ready;
    logic [WAY_W-1:0]  ch_cpl_tag;
    logic [2:0]        ch_cpl_status;

    ats_nand_chan #(
        .WAYS(WAYS), .TAG_W(WAY_W), .ROW_W(24), .COL_W(16), .LEN_W(LEN_W), .MAX_LEN(RAW_LEN),
        .T_WP(T_WP), .T_WH(T_WH), .T_RP(T_RP), .T_REH(T_REH), .T_WB(T_WB), .T_WHR(T_WHR),
        .T_ADL(T_ADL), .T_RR(T_RR), .T_RHW(T_RHW), .T_CS(T_CS)
    ) u_chan (
        .clk, .rst,
        .s_cmd_valid(ch_cmd_valid), .s_cmd_ready(ch_cmd_ready), .s_cmd_op(ch_cmd_op),
        .s_cmd_tag(ch_cmd_way), .s_cmd_way(ch_cmd_way), .s_cmd_row(ch_cmd_row),
        .s_cmd_col(ch_cmd_col), .s_cmd_len(ch_cmd_len),
        .s_wdata_valid(ch_wd_valid), .s_wdata_ready(ch_wd_ready), .s_wdata_data(ch_wd_data),
        .s_wdata_last(ch_wd_last),
        .m_rdata_valid(cr_valid), .m_rdata_ready(cr_ready), .m_rdata_data(cr_data),
        .m_rdata_tag(cr_tag), .m_rdata_last(cr_last),
        .m_cpl_valid(ch_cpl_valid), .m_cpl_ready(ch_cpl_ready), .m_cpl_tag(ch_cpl_tag),
        .m_cpl_status(ch_cpl_status),
        .nand_ce_n, .nand_cle, .nand_ale, .nand_we_n, .nand_re_n, .nand_wp_n, .nand_dq_o,
        .nand_dq_i, .nand_rb_n
    );

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

    logic       dec_in_valid, dec_in_ready, dec_in_last;
    logic [7:0] dec_in_data;
    logic       dec_out_valid, dec_out_ready, dec_out_last;
    logic [7:0] dec_out_data;
    logic       dec_st_valid, dec_st_ready, dec_st_uncorr;
    logic [7:0] dec_st_corr;

    ats_bch_dec #(.M(13), .T(8), .K(K), .OUT_DEPTH(4)) u_dec (
        .clk, .rst,
        .s_data_valid(dec_in_valid), .s_data_ready(dec_in_ready), .s_data_data(dec_in_data),
        .s_data_last(dec_in_last),
        .m_data_valid(dec_out_valid), .m_data_ready(dec_out_ready), .m_data_data(dec_out_data),
        .m_data_last(dec_out_last),
        .m_status_valid(dec_st_valid), .m_status_ready(dec_st_ready),
        .m_status_corrected(dec_st_corr), .m_status_uncorrectable(dec_st_uncorr)
    );

    // =================================================================================================
    // Per-way request context and request acceptance
    // =================================================================================================
    logic                busy_q   [WAYS];   // a request of this way is in progress
    logic [2:0]          op_q     [WAYS];
    logic [TAG_W-1:0]    tag_q    [WAYS];
    logic [SLOT_W-1:0]   slot_q   [WAYS];
    logic                poison_q [WAYS];   // PROGRAM: wdata framing error (completes BAD_REQ)
    logic                bbm_q    [WAYS];   // READ: spare byte 0 is a bad-block mark

    // request checks: a bad request never reaches the chan
    logic cmd_bad, cmd_is_prog, cmd_uses_row;
    always_comb begin
        cmd_uses_row = (s_cmd_op == OP_READ || s_cmd_op == OP_PROG || s_cmd_op == OP_ERASE ||
                        s_cmd_op == OP_PRAW || s_cmd_op == OP_RRAW);
        cmd_is_prog  = (s_cmd_op == OP_PROG) || (s_cmd_op == OP_PRAW && DEBUG_OPS != 0);
        cmd_bad = ((s_cmd_op == OP_PRAW || s_cmd_op == OP_RRAW) && DEBUG_OPS == 0) ||
                  (32'(s_cmd_way) >= WAYS) ||
                  (cmd_uses_row && (32'(s_cmd_block) >= BLOCKS || 32'(s_cmd_page) >= PAGES_PER_BLOCK));
    end

    logic wr_idle;          // write path free (a PROGRAM, or the drain of a bad one, may start)
    logic cpl_bad_ok;       // the completion register takes a BAD_REQ this cycle
    logic way_free;
    assign way_free = (32'(s_cmd_way) < WAYS) && !busy_q[s_cmd_way];

    // A BAD_REQ is parked in a register (bad_v_q) until the completion register takes it, so the
    // request handshake never depends on the completion arbitration (Fmax). The chan's s_cmd_ready
    // is a register (its request stage) and wr_idle is a register: acceptance is a few LUT levels
    // from registers and inputs only.
    logic user_good_valid, user_take_good, cmd_take_bad;
    logic             bad_v_q;           // a BAD_REQ completion is waiting for the cpl register
    logic [TAG_W-1:0]  bad_tag_q;
    logic [SLOT_W-1:0] bad_slot_q;
    assign user_good_valid = s_cmd_valid && !cmd_bad && way_free && (!cmd_is_prog || wr_idle);
    assign cmd_take_bad    = s_cmd_valid && cmd_bad && !bad_v_q && (!cmd_is_prog || wr_idle);
    assign user_take_good  = user_good_valid && ch_cmd_ready;
    assign s_cmd_ready     = user_take_good || cmd_take_bad;

    // write-path job start, one cycle after acceptance (registered: the acceptance logic does not
    // fan out into every write-path register in the same cycle)
    typedef enum logic [1:0] {WS_NONE, WS_PROG, WS_PRAW, WS_DRAIN} wr_start_e;
    wr_start_e         ws_q;
    logic [WAY_W-1:0]  ws_way_q;
    logic              ws_drain_prog_q;  // WS_DRAIN: the rejected request was a PROGRAM (not RAW)
    always_ff @(posedge clk) begin
        ws_q <= WS_NONE;
        if (user_take_good && s_cmd_op == OP_PROG) ws_q <= WS_PROG;
        else if (user_take_good && s_cmd_op == OP_PRAW) ws_q <= WS_PRAW;
        else if (cmd_take_bad && cmd_is_prog) ws_q <= WS_DRAIN;
        ws_way_q <= s_cmd_way;
        ws_drain_prog_q <= (s_cmd_op == OP_PROG);
        if (cmd_take_bad) begin
            bad_v_q <= 1'b1;
            bad_tag_q <= s_cmd_tag;
            bad_slot_q <= s_cmd_slot;
        end else if (cpl_bad_ok) begin
            bad_v_q <= 1'b0;
        end
        if (rst) begin
            ws_q <= WS_NONE;
            bad_v_q <= 1'b0;
        end
    end

    logic [23:0] cmd_row;
    assign cmd_row = 24'({s_cmd_block[BLK_W-1:0], s_cmd_page[PG_W-1:0]});

    // a READ is one chan READ (one array read) of the data and the used spare, column 0
    always_comb begin
        ch_cmd_valid = user_good_valid;
        ch_cmd_way   = s_cmd_way;
        ch_cmd_row   = cmd_row;
        ch_cmd_col   = '0;
        unique case (s_cmd_op)
            OP_READ:  begin ch_cmd_op = OP_READ;  ch_cmd_len = LEN_W'(RD_LEN); end
            OP_PROG:  begin ch_cmd_op = OP_PROG;  ch_cmd_len = LEN_W'(PROG_LEN); end
            OP_ERASE: begin ch_cmd_op = OP_ERASE; ch_cmd_len = LEN_W'(RD_LEN); end   // len unused
            OP_RESET: begin ch_cmd_op = OP_RESET; ch_cmd_len = LEN_W'(RD_LEN); end   // len unused
            OP_RDID:  begin ch_cmd_op = OP_RDID;  ch_cmd_len = LEN_W'(ID_LEN); end
            OP_PARAM: begin ch_cmd_op = OP_PARAM; ch_cmd_len = LEN_W'(PARAM_LEN); end
            OP_PRAW:  begin ch_cmd_op = OP_PROG;  ch_cmd_len = LEN_W'(RAW_LEN); end
            default:  begin ch_cmd_op = OP_READ;  ch_cmd_len = LEN_W'(RAW_LEN); end   // READ_RAW
        endcase
    end

    // =================================================================================================
    // Write path: s_wdata words -> (CRC, encoder) -> chan bytes; sector parity into a small buffer
    // =================================================================================================
    // bytes for the chan go through a 2-entry FIFO: the write path sees only registered state of
    // it, and the chan sees only this FIFO's registers (its own s_wdata_ready is a register)
    logic       wb_valid, wb_ready, wb_last;
    logic [7:0] wb_data;
    // (two registers with write / read pointers: a write enable never depends on the chan's ready)
    logic [8:0] wq_q [2];
    logic [1:0] wq_n_q;
    logic       wq_wp_q, wq_rp_q;
    logic       wq_pop, wq_push;
    assign wb_ready    = (wq_n_q != 2'd2);
    assign wq_push     = wb_valid && wb_ready;
    assign ch_wd_valid = (wq_n_q != 2'd0);
    assign ch_wd_data  = wq_q[wq_rp_q][7:0];
    assign ch_wd_last  = wq_q[wq_rp_q][8];
    assign wq_pop      = ch_wd_valid && ch_wd_ready;
    always_ff @(posedge clk) begin
        if (wq_push) wq_q[wq_wp_q] <= {wb_last, wb_data};
        if (wq_push) wq_wp_q <= !wq_wp_q;
        if (wq_pop) wq_rp_q <= !wq_rp_q;
        wq_n_q <= wq_n_q + {1'b0, wq_push} - {1'b0, wq_pop};
        if (rst) begin
            wq_n_q <= '0; wq_wp_q <= 1'b0; wq_rp_q <= 1'b0;
        end
    end

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
    assign par_rd = par_mem[pidx_q];
    always_ff @(posedge clk) if (par_we) par_mem[pidx_q] <= enc_out_data;

    // registered from the current (not next) state: free one cycle after both sides went idle,
    // if no job start is pending (Fmax: the write FSMs' next-state logic is not on this path)
    logic wr_idle_q;
    assign wr_idle = wr_idle_q;
    always_ff @(posedge clk) begin
        wr_idle_q <= (wi_st_q == WI_IDLE) && (wo_st_q == WO_IDLE) && (ws_q == WS_NONE) &&
                     !(user_take_good && (s_cmd_op == OP_PROG || s_cmd_op == OP_PRAW)) &&
                     !(cmd_take_bad && cmd_is_prog);
        if (rst) wr_idle_q <= 1'b1;
    end

    // encoder input bytes pass a 2-entry FIFO (registered data and ready): the input mux
    // (unpacked word byte / metadata / CRC) and the encoder's remainder update are in different
    // cycles (Fmax). Two registers with write / read pointers: a write enable depends on the push
    // only, never on the encoder's ready
    logic       ei_valid, ei_ready, ei_last;
    logic [7:0] ei_data;
    logic [8:0] eq_q [2];
    logic [1:0] eq_n_q;
    logic       eq_wp_q, eq_rp_q;
    logic       eq_push, eq_pop;
    assign ei_ready     = (eq_n_q != 2'd2);
    assign eq_push      = ei_valid && ei_ready;
    assign enc_in_valid = (eq_n_q != 2'd0);
    assign enc_in_data  = eq_q[eq_rp_q][7:0];
    assign enc_in_last  = eq_q[eq_rp_q][8];
    assign eq_pop       = enc_in_valid && enc_in_ready;
    always_ff @(posedge clk) begin
        if (eq_push) eq_q[eq_wp_q] <= {ei_last, ei_data};
        if (eq_push) eq_wp_q <= !eq_wp_q;
        if (eq_pop) eq_rp_q <= !eq_rp_q;
        eq_n_q <= eq_n_q + {1'b0, eq_push} - {1'b0, eq_pop};
        if (rst) begin
            eq_n_q <= '0; eq_wp_q <= 1'b0; eq_rp_q <= 1'b0;
        end
    end

    logic wd_take;   // a word is taken from s_wdata
    // Input words pass a 2-entry FIFO (pointers, registered ready = not full): s_wdata_valid /
    // _data / _last reach only the FIFO's registers, the input FSM sees registered words (Fmax:
    // out of context the input port logic was placed far from the FSM, 8.6 ns). It may hold the
    // next PROGRAM's first words before that request is accepted: harmless, s_wdata carries only
    // PROGRAM data in request order.
    logic [32:0] iw_q [2];
    logic [1:0]  iw_n_q;
    logic        iw_wp_q, iw_rp_q, iw_ready, iw_valid, iw_last;
    logic [31:0] iw_data;
    assign iw_ready = (iw_n_q != 2'd2);
    assign iw_valid = (iw_n_q != 2'd0);
    assign {iw_last, iw_data} = iw_q[iw_rp_q];
    always_ff @(posedge clk) begin
        if (s_wdata_valid && iw_ready) begin
            iw_q[iw_wp_q] <= {s_wdata_last, s_wdata_data};
            iw_wp_q <= !iw_wp_q;
        end
        if (wd_take) iw_rp_q <= !iw_rp_q;
        iw_n_q <= iw_n_q + {1'b0, s_wdata_valid && iw_ready} - {1'b0, wd_take};
        if (rst) begin
            iw_n_q <= '0; iw_wp_q <= 1'b0; iw_rp_q <= 1'b0;
        end
    end
    always_comb begin
        wi_st_d = wi_st_q; wo_st_d = wo_st_q; wr_way_d = wr_way_q; wr_poison_d = wr_poison_q;
        wcnt_d = wcnt_q; wbyte_d = wbyte_q; wpos_d = wpos_q; opos_d = opos_q; osec_d = osec_q;
        opar_d = opar_q; odrop_d = odrop_q;
        pidx_d = pidx_q; wcrc_d = wcrc_q; wmeta_d = wmeta_q; mph_d = mph_q;
        wmw_d = wmw_q; wmo_d = wmo_q; wc_z_d = wc_z_q; wc_1_d = wc_1_q;
        wc_v_d = 1'b0; wc_b_d = (wi_st_q == WI_DATA) ? up_byte : wmeta_q[7:0];
        if (wc_v_q) wcrc_d = crc_byte(wcrc_q, wc_b_q);
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
                    end
                end
            end
            WO_PAR: begin
                wb_valid = 1'b1;
                wb_data = par_rd;
                wb_last = (32'(pidx_q) == PAR_N - 1);
                if (wb_ready) begin
                    pidx_d = pidx_q + 1'b1;
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
        wi_st_q <= wi_st_d; wo_st_q <= wo_st_d; up_v_q <= up_v_d;
        if (rst) begin
            wi_st_q <= WI_IDLE; wo_st_q <= WO_IDLE; up_v_q <= 1'b0; wc_v_q <= 1'b0;
        end
    end

    // =================================================================================================
    // Read path, part 1: chan read data routing. READ fetch (data + used spare, one array read)
    // -> page buffer; raw reads -> word packer. Decode job: page buffer -> decoder input.
    // =================================================================================================
    // chan read bytes enter a 2-entry FIFO with their route, decided from the way's context when
    // the byte arrives: the chan sees a registered ready, the routing logic registered inputs
    localparam int RQ_W = 8 + WAY_W + 2;
    logic [RQ_W-1:0] rq_q [2];
    logic [1:0]      rq_n_q;
    logic            rq_push, rq_pop;
    logic            cr_raw;
    assign cr_raw   = (op_q[cr_tag] != OP_READ);
    assign cr_ready = (rq_n_q == 2'd0);   // one byte at a time: >= 2 cycles a byte on the bus
    assign rq_push  = cr_valid && cr_ready;
    assign rq_pop   = ch_rd_valid && ch_rd_ready;
    logic route_raw;   // else: READ fetch, into the page buffer
    assign ch_rd_valid = (rq_n_q != 2'd0);
    assign {route_raw, ch_rd_last, ch_rd_tag, ch_rd_data} = rq_q[0];
    always_ff @(posedge clk) begin
        if (rq_pop) rq_q[0] <= rq_q[1];
        if (rq_push) rq_q[(rq_n_q == 2'd0 || (rq_n_q == 2'd1 && rq_pop)) ? 0 : 1] <=
            {cr_raw, cr_last, cr_tag, cr_data};
        rq_n_q <= rq_n_q + {1'b0, rq_push} - {1'b0, rq_pop};
        if (rst) rq_n_q <= '0;
    end

    // m_rdata output register (written by the raw packer or by the decode job, never both)
    // Every word is loaded while the register is empty (!ro_v_q), and the sources are exclusive
    // (raw words only without a decode job), so the payload follows its source whenever the
    // register is empty: only ro_v_q depends on the load conditions (Fmax).
    logic              ro_v_q, ro_v_d, ro_last_q;
    logic [31:0]       ro_data_q;
    logic [TAG_W-1:0]  ro_tag_q;
    logic [SLOT_W-1:0] ro_slot_q;
    assign m_rdata_valid = ro_v_q;
    assign m_rdata_data  = ro_data_q;
    assign m_rdata_tag   = ro_tag_q;
    assign m_rdata_slot  = ro_slot_q;
    assign m_rdata_last  = ro_last_q;

    // decode job (one page at a time through the decoder)
    logic             dj_v_q;               // a decode job is active
    logic [WAY_W-1:0] dj_way_q;
    logic             dj_half_q;            // its spare-buffer half
    logic [TAG_W-1:0]  djt_tag_q;           // its request's tag and slot
    logic [SLOT_W-1:0] djt_slot_q;
    logic             dj_start, dj_done;

    // raw packer
    logic [23:0] rp_w_q;
    logic [1:0]  rp_n_q;
    logic        rp_word;                   // this byte completes a word
    logic [TAG_W-1:0]  rw_tag_q;            // tag and slot of the raw read being packed
    logic [SLOT_W-1:0] rw_slot_q;
    assign rp_word = (rp_n_q == 2'd3) || ch_rd_last;

    // ---- page buffer: PAGE_BYTES data bytes (BANKS block RAMs) + 2 x 2^SPB_AW spare bytes ----------
    // Fill: the bytes of a READ fetch, data then spare, in bus order. The spare is double-buffered
    // (the next fill writes the half the running decode job does not read); a data byte may be
    // written once the running decode job has read that address (ahead_q), so the next page's fetch
    // overlaps the decode of this one. full_q: a filled page waits for its decode job.
    logic              fl_mid_q;            // a fill is under way (its first byte taken)
    logic              fl_sp_q;             // the fill is in the spare part
    logic [DB_AW-1:0]  fl_da_q;             // next data address
    logic [DB_AW:0]    fl_da2_q;            // fl_da_q + 2 (kept as a register: ahead_q, Fmax)
    logic [SPB_AW-1:0] fl_sa_q;             // next spare address
    logic              fl_half_q;           // spare half of the next fill
    logic              full_q;              // a filled page waits for the decoder
    logic [WAY_W-1:0]  full_way_q;
    logic              full_half_q;
    logic              ahead_q;             // the decode job has read past fl_da_q (or none runs)
    logic              fl_take;
    logic              fill_rdy;
    logic [DB_AW-1:0]  fi_da_q, fi_da_d;    // decode job: next data-buffer read address
    logic              fi_past_q;           // decode job: every data-buffer byte read
    assign fill_rdy = (fl_mid_q || !full_q) && (fl_sp_q || ahead_q);
    assign fl_take  = ch_rd_valid && ch_rd_ready && !route_raw;

    logic [BK_W-1:0]  db_wbank, db_rbank;
    logic [7:0]       db_rd [BANKS];
    logic [SPR_AW-1:0] sp_waddr, sp_raddr;
    logic [7:0]        sp_rdata;
    logic              sp_we;
    assign db_wbank = (BANKS > 1) ? BK_W'(fl_da_q >> BANK_AW) : '0;
    assign db_rbank = (BANKS > 1) ? BK_W'(fi_da_q >> BANK_AW) : '0;
    for (genvar b = 0; b < BANKS; b++) begin : g_pbuf
        ats_ram_sdp #(.WIDTH(8), .DEPTH(1 << BANK_AW)) u_data (
            .clk, .wr_en(fl_take && !fl_sp_q && db_wbank == BK_W'(b)),
            .wr_addr(fl_da_q[BANK_AW-1:0]), .wr_data(ch_rd_data),
            .rd_addr(fi_da_q[BANK_AW-1:0]), .rd_data(db_rd[b])
        );
    end
    assign sp_we    = fl_take && fl_sp_q;
    assign sp_waddr = {fl_half_q, fl_sa_q};
    ats_ram_sdp #(.WIDTH(8), .DEPTH(1 << SPR_AW)) u_spare (
        .clk, .wr_en(sp_we), .wr_addr(sp_waddr), .wr_data(ch_rd_data),
        .rd_addr(sp_raddr), .rd_data(sp_rdata)
    );

    always_ff @(posedge clk) begin
        if (fl_take) begin
            if (ch_rd_last) begin
                fl_mid_q <= 1'b0;
                fl_sp_q <= 1'b0;
                fl_da_q <= '0;
                fl_da2_q <= (DB_AW + 1)'(2);
                fl_sa_q <= '0;
                fl_half_q <= !fl_half_q;
                full_q <= 1'b1;
                full_way_q <= ch_rd_tag;
                full_half_q <= fl_half_q;
            end else begin
                fl_mid_q <= 1'b1;
                if (fl_sp_q) begin
                    fl_sa_q <= fl_sa_q + 1'b1;
                end else begin
                    fl_da_q <= fl_da_q + 1'b1;
                    fl_da2_q <= fl_da2_q + 1'b1;
                    if (32'(fl_da_q) == PAGE_BYTES - 1) fl_sp_q <= 1'b1;
                end
            end
        end
        if (dj_start) full_q <= 1'b0;
        // registered, conservative: fi_da_q only grows inside a job, fl_da_q by at most 1 a cycle
        ahead_q <= !dj_start && (!dj_v_q || fi_past_q || ((DB_AW + 1)'(fi_da_q) > fl_da2_q));
        if (rst) begin
            fl_mid_q <= 1'b0; fl_sp_q <= 1'b0; fl_da_q <= '0; fl_sa_q <= '0; fl_half_q <= 1'b0;
            fl_da2_q <= (DB_AW + 1)'(2); full_q <= 1'b0; ahead_q <= 1'b0;
        end
    end

    // decoder input FIFO, fed through a 3-stage pipeline (block RAM read latency 2, then the source
    // mux into a register; the zero count of the byte is taken from that register into the FIFO).
    // occ_q counts the bytes in the pipeline and the FIFO: the feed pushes while occ_q < FIFO_D.
    typedef enum logic [2:0] {FI_IDLE, FI_DATA, FI_PAR, FI_PAD, FI_MCW, FI_DONE} fi_e;
    localparam logic [1:0] PS_ZERO = 2'd0, PS_DATA = 2'd1, PS_SPARE = 2'd2;
    fi_e               fi_st_q, fi_st_d;
    logic [SEC_W-1:0]  fi_sec_q, fi_sec_d;
    logic [9:0]        fi_pos_q, fi_pos_d;
    logic [SPB_AW-1:0] fi_ra_q, fi_ra_d;     // next spare-buffer read address (a register: BRAM)
    logic              pp1_v_q, pp2_v_q, pp3_v_q, pp3_cnt_q;
    logic [1:0]        pp1_src_q, pp2_src_q;
    logic [BK_W-1:0]   pp1_bk_q, pp2_bk_q;
    logic [7:0]        pp3_b_q;
    logic              pp_push;
    logic [1:0]        pp_src;
    logic [11:0]       fifo_q [FIFO_D];     // {zero bits to count (0 for the implicit zeros), byte}
    logic [$clog2(FIFO_D+1)-1:0] fifo_n_q, occ_q;
    logic [$clog2(FIFO_D)-1:0]   fifo_wp_q, fifo_rp_q;
    logic              fifo_push, fifo_pop;
    logic [11:0]       fifo_in, fifo_out;
    logic [7:0]        fifo_in_b;
    logic              credit;
    assign credit = (32'(occ_q) < FIFO_D);
    assign dj_start = full_q && !dj_v_q && (fi_st_q == FI_IDLE);

    always_comb begin
        fi_st_d = fi_st_q; fi_sec_d = fi_sec_q; fi_pos_d = fi_pos_q; fi_ra_d = fi_ra_q;
        fi_da_d = fi_da_q;
        pp_push = 1'b0; pp_src = PS_ZERO;
        sp_raddr = {dj_half_q, fi_ra_q};
        // chan read bytes: raw ones to the packer (not during a decode job: they share m_rdata),
        // READ fetch ones into the page buffer
        if (route_raw) ch_rd_ready = !dj_v_q && (!rp_word || !ro_v_q);
        else           ch_rd_ready = fill_rdy;
        unique case (fi_st_q)
            // the positions are set when the feed goes idle (and at reset), so the job start only
            // moves the state (Fmax: dj_start drives no address register)
            FI_IDLE: if (dj_start) fi_st_d = FI_DATA;
            FI_DATA: if (credit) begin
                pp_push = 1'b1; pp_src = PS_DATA;
                fi_da_d = fi_da_q + 1'b1;
                fi_pos_d = fi_pos_q + 1'b1;
                if (fi_pos_q == 10'(K - 1)) begin
                    fi_st_d = FI_PAR;
                    fi_pos_d = '0;
                end
            end
            FI_PAR: if (credit) begin
                pp_push = 1'b1; pp_src = PS_SPARE;
                fi_pos_d = fi_pos_q + 1'b1;
                fi_ra_d = fi_ra_q + 1'b1;
                if (fi_pos_q == 10'(PAR - 1)) begin
                    fi_pos_d = '0;
                    fi_sec_d = fi_sec_q + 1'b1;
                    fi_st_d = (32'(fi_sec_q) == SECT - 1) ? FI_PAD : FI_DATA;
                end
            end
            FI_PAD: if (credit) begin
                pp_push = 1'b1; pp_src = PS_ZERO;
                fi_pos_d = fi_pos_q + 1'b1;
                if (fi_pos_q == 10'(MCW_PAD - 1)) begin
                    fi_st_d = FI_MCW;
                    fi_pos_d = '0;
                    fi_ra_d = SPB_AW'(1);            // metadata codeword: spare bytes 1..36
                end
            end
            FI_MCW: if (credit) begin
                pp_push = 1'b1; pp_src = PS_SPARE;
                fi_pos_d = fi_pos_q + 1'b1;
                fi_ra_d = fi_ra_q + 1'b1;
                if (fi_pos_q == 10'(MCW_D + PAR - 1)) fi_st_d = FI_DONE;
            end
            FI_DONE: if (!dj_v_q) begin              // the job has completed
                fi_st_d = FI_IDLE; fi_sec_d = '0; fi_pos_d = '0; fi_da_d = '0;
                fi_ra_d = SPB_AW'(SP_DPAR);          // sector parity is contiguous in the spare
            end
            default: fi_st_d = FI_IDLE;
        endcase
    end

    assign fifo_in_b = (pp2_src_q == PS_DATA) ? db_rd[pp2_bk_q] :
                       (pp2_src_q == PS_SPARE) ? sp_rdata : 8'h00;
    assign fifo_push = pp3_v_q;
    assign fifo_in   = {pp3_cnt_q ? zeros8(pp3_b_q) : 4'd0, pp3_b_q};
    assign fifo_out  = fifo_q[fifo_rp_q];
    assign fifo_pop  = dec_in_valid && dec_in_ready;
    assign dec_in_valid = (fifo_n_q != '0);
    assign dec_in_data  = fifo_out[7:0];

    // decoder input position: codeword boundaries; zero count (erased detection) one cycle behind
    // the decoder input (the popped byte's count is registered first; the decoder's first
    // corrected byte of a codeword comes >= 4T cycles after its last input byte)
    logic [SEC_W-1:0]  di_sec_q;
    logic [9:0]        di_pos_q;
    logic [ZC_W-1:0]   di_zc_q;
    logic              zp_v_q, zp_last_q;     // popped byte: valid, last of its codeword
    logic [3:0]        zp_cnt_q;              // popped byte: zero bits to count
    logic [(1 << SEC_W)-1:0] er_vec_q;       // codeword c (0..SECT) looked erased (few 0 bits)
    logic [(1 << SEC_W)-1:0] er_oh_q;        // codeword whose count ends next, one-hot
    logic              zc_end_q;              // di_zc_q holds a complete codeword's count
    assign dec_in_last = (di_pos_q == 10'(CW - 1));
    // running count, saturating at ERASED_THR + 1; after a codeword's last byte the count is
    // registered whole and compared one cycle later (zc_end_q): no add-compare-write chain (Fmax)
    logic [ZC_W-1:0]   di_zc_base, di_zc_next;
    assign di_zc_base = zc_end_q ? '0 : di_zc_q;
    always_comb begin
        logic [ZC_W+3:0] s;
        s = (ZC_W + 4)'(di_zc_base) + (ZC_W + 4)'(zp_cnt_q);
        di_zc_next = (32'(s) > ERASED_THR) ? ZC_W'(ERASED_THR + 1) : ZC_W'(s);
    end

    always_ff @(posedge clk) begin
        pp1_v_q <= pp_push; pp1_src_q <= pp_src; pp1_bk_q <= db_rbank;
        pp2_v_q <= pp1_v_q; pp2_src_q <= pp1_src_q; pp2_bk_q <= pp1_bk_q;
        pp3_v_q <= pp2_v_q; pp3_cnt_q <= (pp2_src_q != PS_ZERO); pp3_b_q <= fifo_in_b;
        fi_st_q <= fi_st_d; fi_sec_q <= fi_sec_d; fi_pos_q <= fi_pos_d;
        fi_ra_q <= fi_ra_d; fi_da_q <= fi_da_d;
        // from the current state: one cycle late, which only delays the next fill (safe)
        fi_past_q <= (fi_st_q == FI_PAD || fi_st_q == FI_MCW || fi_st_q == FI_DONE);
        // FIFO: write / read pointers (a write enable depends on the pipeline only)
        if (fifo_push) fifo_q[fifo_wp_q] <= fifo_in;
        if (fifo_push) fifo_wp_q <= fifo_wp_q + 1'b1;
        if (fifo_pop) fifo_rp_q <= fifo_rp_q + 1'b1;
        fifo_n_q <= fifo_n_q + $bits(fifo_n_q)'(fifo_push) - $bits(fifo_n_q)'(fifo_pop);
        occ_q <= occ_q + $bits(occ_q)'(pp_push) - $bits(occ_q)'(fifo_pop);
        if (fifo_pop) begin
            di_pos_q <= dec_in_last ? '0 : di_pos_q + 1'b1;
            if (dec_in_last) di_sec_q <= di_sec_q + 1'b1;
        end
        zp_v_q <= fifo_pop;
        zp_last_q <= dec_in_last;
        zp_cnt_q <= fifo_out[11:8];
        if (zp_v_q) di_zc_q <= di_zc_next;
        else if (zc_end_q) di_zc_q <= '0;
        zc_end_q <= zp_v_q && zp_last_q;
        if (zc_end_q) begin
            er_oh_q <= er_oh_q << 1;
            for (int c = 0; c < (1 << SEC_W); c++) begin
                if (er_oh_q[c]) er_vec_q[c] <= (32'(di_zc_q) <= ERASED_THR);
            end
        end
        if (dj_start) begin
            di_sec_q <= '0; di_pos_q <= '0; di_zc_q <= '0; er_vec_q <= '0;
            er_oh_q <= (1 << SEC_W)'(1); zc_end_q <= 1'b0;
        end
        if (rst) begin
            pp1_v_q <= 1'b0; pp2_v_q <= 1'b0; pp3_v_q <= 1'b0; fi_st_q <= FI_IDLE; fifo_n_q <= '0;
            fi_sec_q <= '0; fi_pos_q <= '0; fi_da_q <= '0; fi_ra_q <= SPB_AW'(SP_DPAR);
            occ_q <= '0; fifo_wp_q <= '0; fifo_rp_q <= '0; fi_past_q <= 1'b0;
            di_sec_q <= '0; di_pos_q <= '0; di_zc_q <= '0; zp_v_q <= 1'b0;
            er_oh_q <= (1 << SEC_W)'(1); zc_end_q <= 1'b0;
        end
    end

    // =================================================================================================
    // Read path, part 2: decoder output -> words, metadata, CRC check, verdict, completion
    // =================================================================================================
    typedef enum logic [1:0] {DO_RUN, DO_VER, DO_META, DO_CPL} do_e;
    do_e               do_st_q, do_st_d;
    logic [SEC_W-1:0]  do_sec_q, do_sec_d;
    logic [9:0]        do_pos_q, do_pos_d;
    logic [SEC_W-1:0]  st_n_q, st_n_d;       // status beats taken
    logic [7:0]        corr_q, corr_d;
    logic              unc_q, unc_d;
    logic [31:0]       rcrc_q, rcrc_d;
    // read CRC, one stage behind the class FIFO output: the byte is registered first, so the
    // CRC register's enable is one register (Fmax); the stored CRC bytes come after the last
    // CRC'd byte, so the registered compare is still ready at the verdict
    logic              rc_v_q, rc_v_d;
    logic              rm_v_q, rm_v_d;       // rc_b_q is a metadata byte (rmeta_q shifts it in)
    logic [7:0]        rc_b_q;
    logic [8*META_B-1:0] rmeta_q, rmeta_d;
    logic [31:0]       scrc_q, scrc_d;       // CRC stored in the page
    logic [23:0]       pk_q, pk_d;           // packer of corrected bytes
    logic [1:0]        pk_n_q, pk_n_d;
    logic [2:0]        mw_q, mw_d;           // metadata word index
    logic [2:0]        vst_q, vst_d;         // verdict

    // completion register
    logic              cpl_v_q, cpl_v_d, cpl_v_d1;
    logic [TAG_W-1:0]  cpl_tag_q, cpl_tag_d, cpl_tag_d1;
    logic [SLOT_W-1:0] cpl_slot_q, cpl_slot_d, cpl_slot_d1;
    logic [2:0]        cpl_st_q, cpl_st_d, cpl_st_d1;
    logic [7:0]        cpl_corr_q, cpl_corr_d, cpl_corr_d1;
    logic              cpl_bbm_q, cpl_bbm_d, cpl_bbm_d1;
    logic              cpl_free;
    assign cpl_free = !cpl_v_q || m_cpl_ready;

    // decoder output bytes pass a 2-entry FIFO with their class, decided from the registered
    // output position when the byte leaves the decoder: the decoder sees a registered ready and
    // the packer / metadata / CRC logic sees registered bytes (Fmax)
    localparam logic [1:0] DB_DATA = 2'd0, DB_META = 2'd1, DB_SCRC = 2'd2, DB_DROP = 2'd3;
    logic [7:0] do_byte;
    logic       do_er, do_meta_cw;
    logic [1:0] do_kind;
    assign do_meta_cw = (32'(do_sec_q) == SECT);
    assign do_er      = (32'(do_sec_q) <= SECT) && er_vec_q[do_sec_q];
    always_comb begin
        if (32'(do_sec_q) < SECT)                              do_kind = DB_DATA;
        else if (!do_meta_cw || 32'(do_pos_q) < MCW_PAD)       do_kind = DB_DROP;
        else if (32'(do_pos_q) < MCW_PAD + META_B)             do_kind = DB_META;
        else                                                   do_kind = DB_SCRC;
    end
    logic [9:0] db_q [2];                   // {kind, byte}
    logic [1:0] db_n_q;
    logic       db_push, db_pop;
    logic [1:0] db_kind;
    logic [7:0] db_byte;
    assign {db_kind, db_byte} = db_q[0];
    assign db_push = dec_out_valid && dec_out_ready;
    always_ff @(posedge clk) begin
        if (db_pop) db_q[0] <= db_q[1];
        if (db_push) db_q[(db_n_q == 2'd0 || (db_n_q == 2'd1 && db_pop)) ? 0 : 1] <=
            {do_kind, do_er ? 8'hFF : dec_out_data};
        db_n_q <= db_n_q + {1'b0, db_push} - {1'b0, db_pop};
        if (rst) db_n_q <= '0;
    end
    assign do_byte = db_byte;

    // the 5 metadata words, loaded at the verdict and shifted out (no word mux before m_rdata)
    logic [159:0] mwords_q, mwords_d;
    logic [159:0] meta_words;
    assign meta_words = {8'h00, rmeta_q[151:144], rmeta_q[47:40], rmeta_q[39:32],   // w4
                         rmeta_q[143:112], rmeta_q[111:80], rmeta_q[79:48],          // w3 w2 w1
                         rmeta_q[31:0]};                                             // w0

    logic chan_cpl_out;        // the chan stage goes to the completion register this cycle
    logic              chs_v_q, chs_raw_q;   // chan completion stage
    logic [WAY_W-1:0]  chs_way_q;
    logic [TAG_W-1:0]  chs_tag_q;
    logic [SLOT_W-1:0] chs_slot_q;
    logic [2:0]        chs_st_q;
    logic              crc_eq_q;             // stored CRC = computed CRC (registered)
    logic              ver_ok;               // DO_VER: the verdict is OK (registers only)
    assign ver_ok = !(|er_vec_q[SECT:0]) && !unc_q && crc_eq_q;
    logic [7:0]        djc_corr_q;           // decode-job completion fields
    logic              djc_bbm_q;
    // Completion-register selects from registers (one cycle late, safe): the decode job's
    // completion is ready (its last word has left m_rdata), no raw word is on its way (a raw
    // read's last byte is in the read FIFO or in m_rdata from the cycle it is taken until it leaves)
    logic              dj_cv_q, raw_idle_q;
    logic              dj_cv;
    assign dj_cv = dj_cv_q;
    logic cpl_raw_rd;          // it ends a raw read: its last word must have left first
    assign cpl_raw_rd = (op_q[ch_cpl_tag] == OP_RRAW || op_q[ch_cpl_tag] == OP_RDID ||
                         op_q[ch_cpl_tag] == OP_PARAM);
    always_comb begin
        do_st_d = do_st_q; do_sec_d = do_sec_q; do_pos_d = do_pos_q; st_n_d = st_n_q;
        corr_d = corr_q; unc_d = unc_q; rcrc_d = rcrc_q; rmeta_d = rmeta_q; scrc_d = scrc_q;
        rc_v_d = 1'b0; rm_v_d = 1'b0;
        if (rc_v_q) rcrc_d = crc_byte(rcrc_q, rc_b_q);
        if (rm_v_q) rmeta_d = {rc_b_q, rmeta_q[8*META_B-1:8]};
        pk_d = pk_q; pk_n_d = pk_n_q; mw_d = mw_q; vst_d = vst_q; mwords_d = mwords_q;
        ro_v_d = ro_v_q && !m_rdata_ready;
        cpl_v_d1 = cpl_v_q && !m_cpl_ready; cpl_tag_d1 = cpl_tag_q; cpl_slot_d1 = cpl_slot_q;
        cpl_st_d1 = cpl_st_q; cpl_corr_d1 = cpl_corr_q; cpl_bbm_d1 = cpl_bbm_q;
        dec_out_ready = 1'b0;
        db_pop = 1'b0;
        dec_st_ready = 1'b0;
        dj_done = 1'b0;
        chan_cpl_out = 1'b0;
        cpl_bad_ok = 1'b0;

        // ---- raw packer -----------------------------------------------------------------------
        if (ch_rd_valid && ch_rd_ready && route_raw) begin
            if (rp_word) begin
                ro_v_d = 1'b1;
            end
        end

        // ---- decode job output ------------------------------------------------------------------
        if (dj_v_q) begin
            unique case (do_st_q)
                DO_RUN: begin
                    // status beats, in codeword order
                    dec_st_ready = 1'b1;
                    if (dec_st_valid) begin
                        st_n_d = st_n_q + 1'b1;
                        if (!er_vec_q[st_n_q]) begin
                            unc_d = unc_q || dec_st_uncorr;
                            corr_d = (9'(corr_q) + 9'(dec_st_corr) > 9'd255) ? 8'd255 : corr_q + dec_st_corr;
                        end
                    end
                    // decoder output position (bytes into the class FIFO)
                    dec_out_ready = (db_n_q != 2'd2) && (32'(do_sec_q) <= SECT);
                    if (dec_out_valid && dec_out_ready) begin
                        do_pos_d = do_pos_q + 1'b1;
                        if (do_pos_q == 10'(K - 1)) begin
                            do_pos_d = '0;
                            do_sec_d = do_sec_q + 1'b1;
                        end
                    end
                    // bytes out of the class FIFO
                    if (db_n_q != 2'd0) begin
                        db_pop = (db_kind != DB_DATA) || (pk_n_q != 2'd3) || !ro_v_q;
                    end
                    if (db_pop) begin
                        if (db_kind == DB_DATA) begin
                            rc_v_d = 1'b1;
                            pk_d = {do_byte, pk_q[23:8]};
                            pk_n_d = pk_n_q + 1'b1;
                            if (pk_n_q == 2'd3) begin
                                ro_v_d = 1'b1;
                            end
                        end else if (db_kind == DB_META) begin
                            rc_v_d = 1'b1;
                            rm_v_d = 1'b1;
                        end else if (db_kind == DB_SCRC) begin
                            scrc_d = {do_byte, scrc_q[31:8]};
                        end
                    end
                    // all codewords out and all verdicts in: the page verdict (next cycle: the CRC
                    // compare is registered)
                    if (32'(do_sec_q) == SECT + 1 && 32'(st_n_q) == SECT + 1 && db_n_q == 2'd0) begin
                        do_st_d = DO_VER;
                    end
                end
                DO_VER: begin
                    do_st_d = DO_META;
                    mw_d = '0;
                    mwords_d = meta_words;
                    if (&er_vec_q[SECT:0]) vst_d = ST_ERASED;
                    else if ((|er_vec_q[SECT:0]) || unc_q || !crc_eq_q) vst_d = ST_UNCORR;
                    else vst_d = ST_OK;
                end
                DO_META: if (!ro_v_q) begin
                    ro_v_d = 1'b1;
                    mwords_d = mwords_q >> 32;
                    mw_d = mw_q + 1'b1;
                    if (mw_q == 3'd4) do_st_d = DO_CPL;
                end
                DO_CPL: ;    // the completion register takes it (below)
                default: do_st_d = DO_RUN;
            endcase
        end
        if (dj_start) begin
            do_st_d = DO_RUN; do_sec_d = '0; do_pos_d = '0; st_n_d = '0; corr_d = '0; unc_d = 1'b0;
            rcrc_d = 32'hFFFF_FFFF; pk_n_d = '0;
            // (rc_v_d / rm_v_d need no clear here: they are set only while a job runs, dj_v_q,
            // and a job starts only when none runs; Fmax: dj_start stays off their reset)
        end

        // ---- completion register: decode job first, then the chan stage, then a BAD_REQ ------------
        // every source is a register (staged one cycle earlier): the selection is a few LUT levels
        if (cpl_free) begin
            if (dj_cv) begin
                dj_done = 1'b1;
                cpl_v_d1 = 1'b1;
                cpl_tag_d1 = djt_tag_q;
                cpl_slot_d1 = djt_slot_q;
                cpl_st_d1 = vst_q;
                cpl_corr_d1 = djc_corr_q;
                cpl_bbm_d1 = djc_bbm_q;
            end else if (chs_v_q && (!chs_raw_q || raw_idle_q)) begin
                // a raw read's completion only after its last word has left
                chan_cpl_out = 1'b1;
                cpl_v_d1 = 1'b1;
                cpl_tag_d1 = chs_tag_q;
                cpl_slot_d1 = chs_slot_q;
                cpl_st_d1 = chs_st_q;
                cpl_corr_d1 = '0;
                cpl_bbm_d1 = 1'b0;
            end else begin
                cpl_bad_ok = 1'b1;
            end
        end
    end
    always_comb begin
        cpl_v_d = cpl_v_d1; cpl_tag_d = cpl_tag_d1; cpl_slot_d = cpl_slot_d1; cpl_st_d = cpl_st_d1;
        cpl_corr_d = cpl_corr_d1; cpl_bbm_d = cpl_bbm_d1;
        if (bad_v_q && cpl_bad_ok) begin
            cpl_v_d = 1'b1;
            cpl_tag_d = bad_tag_q;
            cpl_slot_d = bad_slot_q;
            cpl_st_d = ST_BAD;
            cpl_corr_d = '0;
            cpl_bbm_d = 1'b0;
        end
    end

    // chan completions: a one-entry stage. READ: dropped (the decode job completes the request);
    // others with their request's tag, slot and status (a poisoned PROGRAM: BAD_REQ)
    assign ch_cpl_ready = !chs_v_q;
    always_ff @(posedge clk) begin
        if (ch_cpl_valid && ch_cpl_ready && op_q[ch_cpl_tag] != OP_READ) begin
            chs_v_q <= 1'b1;
            chs_way_q <= ch_cpl_tag;
            chs_tag_q <= tag_q[ch_cpl_tag];
            chs_slot_q <= slot_q[ch_cpl_tag];
            chs_st_q <= (op_q[ch_cpl_tag] == OP_PROG && poison_q[ch_cpl_tag]) ? ST_BAD : ch_cpl_status;
            chs_raw_q <= cpl_raw_rd;
        end else if (chan_cpl_out) begin
            chs_v_q <= 1'b0;
        end
        dj_cv_q <= dj_v_q && (do_st_q == DO_CPL) && !ro_v_q && !dj_done;
        raw_idle_q <= !ro_v_q && (rq_n_q == 2'd0);
        // decode job: completion fields, ready with the verdict
        crc_eq_q <= (~rcrc_q == scrc_q);
        if (do_st_q == DO_VER) begin
            // corrected bits only with an OK verdict (README: 0 unless OK), so a counter summing
            // `corrected` never counts a failed page's corrections; ver_ok is the OK verdict from
            // the same registers as vst_d (no deeper than the former erased-only test)
            djc_corr_q <= ver_ok ? corr_q : 8'd0;
            djc_bbm_q <= bbm_q[dj_way_q];
        end
        if (rst) begin
            chs_v_q <= 1'b0; dj_cv_q <= 1'b0; raw_idle_q <= 1'b0;
        end
    end

    assign m_cpl_valid     = cpl_v_q;
    assign m_cpl_tag       = cpl_tag_q;
    assign m_cpl_slot      = cpl_slot_q;
    assign m_cpl_status    = cpl_st_q;
    assign m_cpl_corrected = cpl_corr_q;
    assign m_cpl_bad_mark  = cpl_bbm_q;

    always_ff @(posedge clk) begin
        do_st_q <= do_st_d; do_sec_q <= do_sec_d; do_pos_q <= do_pos_d; st_n_q <= st_n_d;
        corr_q <= corr_d; unc_q <= unc_d; rcrc_q <= rcrc_d; rmeta_q <= rmeta_d; scrc_q <= scrc_d;
        rc_v_q <= rc_v_d; rm_v_q <= rm_v_d; rc_b_q <= do_byte;
        pk_q <= pk_d; pk_n_q <= pk_n_d; mw_q <= mw_d; vst_q <= vst_d; mwords_q <= mwords_d;
        ro_v_q <= ro_v_d;
        if (!ro_v_q) begin
            // raw lengths are multiples of 4 bytes: a raw word is always 4 bytes of one read
            ro_data_q <= !dj_v_q ? {ch_rd_data, rp_w_q} :
                         (do_st_q == DO_META) ? mwords_q[31:0] : {do_byte, pk_q};
            ro_tag_q  <= dj_v_q ? djt_tag_q : rw_tag_q;
            ro_slot_q <= dj_v_q ? djt_slot_q : rw_slot_q;
            ro_last_q <= dj_v_q ? (do_st_q == DO_META && mw_q == 3'd4) : ch_rd_last;
        end
        cpl_v_q <= cpl_v_d; cpl_tag_q <= cpl_tag_d; cpl_slot_q <= cpl_slot_d; cpl_st_q <= cpl_st_d;
        cpl_corr_q <= cpl_corr_d; cpl_bbm_q <= cpl_bbm_d;
        // raw packer
        if (ch_rd_valid && ch_rd_ready && route_raw) begin
            rp_w_q <= {ch_rd_data, rp_w_q[23:8]};
            rp_n_q <= rp_word ? 2'd0 : rp_n_q + 1'b1;
            rw_tag_q <= tag_q[ch_rd_tag];         // used by the word's last byte (same fetch)
            rw_slot_q <= slot_q[ch_rd_tag];
        end
        // decode job
        if (dj_start) begin
            dj_v_q <= 1'b1;
            dj_way_q <= full_way_q;
            dj_half_q <= full_half_q;
            djt_tag_q <= tag_q[full_way_q];
            djt_slot_q <= slot_q[full_way_q];
        end else if (dj_done) begin
            dj_v_q <= 1'b0;
        end
        if (rst) begin
            do_st_q <= DO_RUN; ro_v_q <= 1'b0; cpl_v_q <= 1'b0; rp_n_q <= '0; dj_v_q <= 1'b0;
            rc_v_q <= 1'b0; rm_v_q <= 1'b0;
        end
    end

    // =================================================================================================
    // Per-way context updates
    // =================================================================================================
    always_ff @(posedge clk) begin
        for (int w = 0; w < WAYS; w++) begin
            if (user_take_good && s_cmd_way == WAY_W'(w)) begin
                busy_q[w] <= 1'b1;
                op_q[w] <= s_cmd_op;
                tag_q[w] <= s_cmd_tag;
                slot_q[w] <= s_cmd_slot;
                poison_q[w] <= 1'b0;
            end
            // bad-block mark: spare byte 0 of the READ fetch
            if (sp_we && ch_rd_tag == WAY_W'(w) && fl_sa_q == '0) begin
                bbm_q[w] <= (32'(zeros8(ch_rd_data)) >= BAD_MARK_THR);
            end
            // from registers (one cycle after the framing error; the completion is much later)
            if (wr_poison_q && wr_way_q == WAY_W'(w) &&
                (wi_st_q == WI_DATA || wi_st_q == WI_META || wi_st_q == WI_MCW)) begin
                poison_q[w] <= 1'b1;
            end
            // completion: the way is free
            if ((chan_cpl_out && chs_way_q == WAY_W'(w)) || (dj_done && dj_way_q == WAY_W'(w))) begin
                busy_q[w] <= 1'b0;
            end
            if (rst) begin
                busy_q[w] <= 1'b0;
            end
        end
    end

logic unused_last;
    assign unused_last = enc_out_last ^ dec_out_last;   // framing is by count

`ifndef SYNTHESIS
    // the chan never rejects what this block sends it
    always_ff @(posedge clk) begin
        if (!rst && ch_cpl_valid && ch_cpl_ready && ch_cpl_status == ST_BAD)
            $error("ats_nand_page: the channel rejected a request (%m)");
    end
`endif
endmodule

`resetall
