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
// This module holds the request acceptance, the per-way context, the chan and the completion
// register; the write half (ats_nand_page_wr: CRC, encoder, page image to the chan) and the read half
// (ats_nand_page_rd: page buffer, decode job, m_rdata, a READ's completion) are modules of their own.
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
    parameter int T_CS            = 4,
    // 1: the BCH decoder's Berlekamp-Massey is a unit shared by the channels (bm_* ports,
    // ats_bch_bm_arb in ats_nand_subsys; README_ecc.md "Shared Berlekamp-Massey"); 0: its own
    parameter bit BCH_EXT_BM      = 1'b0
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

    // completions (a read's follows its last data word); a READ also gives a release beat (m_cpl_rel)
    // when its page has left the die, before its completion (m_cpl_rd): README_page.md
    output wire logic                 m_cpl_valid,
    input  wire logic                 m_cpl_ready,
    output wire logic [TAG_W-1:0]     m_cpl_tag,
    output wire logic [SLOT_W-1:0]    m_cpl_slot,
    output wire logic [2:0]           m_cpl_status,  // OK 0, PROGRAM_FAIL 1, ERASE_FAIL 2,
                                                     // UNCORRECTABLE 3, BAD_REQ 4, ERASED 5
    output wire logic [7:0]           m_cpl_corrected, // bits corrected in the page (saturating)
    output wire logic                 m_cpl_bad_mark,  // READ: spare byte 0 is a bad-block mark
    output wire logic                 m_cpl_rel,       // release: the READ's die is free, no status
    output wire logic                 m_cpl_rd,        // a READ's completion (its release went first)

    // ONFI pins (docs/nand-pins.md)
    output wire logic [WAYS-1:0]      nand_ce_n,
    output wire logic                 nand_cle,
    output wire logic                 nand_ale,
    output wire logic                 nand_we_n,
    output wire logic                 nand_re_n,
    output wire logic                 nand_wp_n,
    output wire logic [7:0]           nand_dq_o,
    input  wire logic [7:0]           nand_dq_i,
    input  wire logic [WAYS-1:0]      nand_rb_n,

    // shared Berlekamp-Massey (BCH_EXT_BM = 1, ats_bch_bm_arb; inputs ignored when 0, tie to 0)
    output wire logic                 bm_req,
    output wire logic [103:0]         bm_syn,
    input  wire logic                 bm_gnt,
    input  wire logic                 bm_done,
    input  wire logic [116:0]         bm_lambda,
    input  wire logic [4:0]           bm_len
);
    // ---- derived sizes --------------------------------------------------------------------------
    localparam int WAY_W      = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int K          = 512;                       // data bytes per sector
    localparam int PAR        = 13;                        // parity bytes per codeword (M 13, T 8)
    localparam int SECT       = PAGE_BYTES / K;            // data sectors per page
    localparam int META_B     = 19;                        // metadata bytes (section 6)
    localparam int SP_DPAR    = 1 + META_B + 4 + PAR;      // spare offset of sector 0's parity (37)
    localparam int SPARE_USED = SP_DPAR + SECT * PAR;      // spare bytes written by PROGRAM
    localparam int PROG_LEN   = PAGE_BYTES + SPARE_USED;
    localparam int RAW_LEN    = PAGE_BYTES + SPARE_BYTES;
    localparam int LEN_W      = $clog2(RAW_LEN + 1);
    localparam int PG_W       = $clog2(PAGES_PER_BLOCK);
    localparam int BLK_W      = $clog2(BLOCKS);
    localparam int RD_LEN     = PAGE_BYTES + SPARE_USED;   // READ: one fetch of data + used spare
    localparam int SPB_AW     = $clog2(SPARE_USED);        // spare-buffer half address bits
    localparam int ID_LEN     = 4;                         // READ_ID bytes
    localparam int PARAM_LEN  = 256;                       // READ_PARAM bytes (one copy)

    // page ops and completion statuses (ats_nand_pkg; PROGRAM_FAIL 1 and ERASE_FAIL 2 come from the
    // chan as they are)
    localparam logic [2:0] OP_READ  = ats_nand_pkg::NAND_OP_READ;
    localparam logic [2:0] OP_PROG  = ats_nand_pkg::NAND_OP_PROG;
    localparam logic [2:0] OP_ERASE = ats_nand_pkg::NAND_OP_ERASE;
    localparam logic [2:0] OP_RESET = ats_nand_pkg::NAND_OP_RESET;
    localparam logic [2:0] OP_RDID  = ats_nand_pkg::NAND_OP_RDID;
    localparam logic [2:0] OP_PARAM = ats_nand_pkg::NAND_OP_PARAM;
    localparam logic [2:0] OP_PRAW  = ats_nand_pkg::NAND_OP_PRAW;
    localparam logic [2:0] OP_RRAW  = ats_nand_pkg::NAND_OP_RRAW;
    localparam logic [2:0] ST_BAD   = ats_nand_pkg::NAND_ST_BAD;

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

    // =================================================================================================
    // Channel
    // =================================================================================================
    logic              ch_cmd_valid, ch_cmd_ready;
    logic [2:0]        ch_cmd_op;
    logic [WAY_W-1:0]  ch_cmd_way;
    logic [23:0]       ch_cmd_row;
    logic [15:0]       ch_cmd_col;
    logic [LEN_W-1:0]  ch_cmd_len;
    logic              ch_wd_valid, ch_wd_ready, ch_wd_last;
    logic [7:0]        ch_wd_data;
    logic              cr_valid, cr_ready, cr_last;      // chan read data (to the read half)
    logic [7:0]        cr_data;
    logic [WAY_W-1:0]  cr_tag;
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

    // =================================================================================================
    // Per-way request context and request acceptance
    // =================================================================================================
    logic                busy_q   [WAYS];   // a request of this way is in progress
    logic [2:0]          op_q     [WAYS];
    logic [TAG_W-1:0]    tag_q    [WAYS];
    logic [SLOT_W-1:0]   slot_q   [WAYS];
    logic                poison_q [WAYS];   // PROGRAM: wdata framing error (completes BAD_REQ)

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

    always_ff @(posedge clk) begin
        if (cmd_take_bad) begin
            bad_v_q <= 1'b1;
            bad_tag_q <= s_cmd_tag;
            bad_slot_q <= s_cmd_slot;
        end else if (cpl_bad_ok) begin
            bad_v_q <= 1'b0;
        end
        if (rst) bad_v_q <= 1'b0;
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
    // Write half: s_wdata -> (CRC, encoder) -> chan bytes; starts one cycle after acceptance
    // =================================================================================================
    logic             poison_valid;
    logic [WAY_W-1:0] poison_way;

    ats_nand_page_wr #(
        .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES)
    ) u_wr (
        .clk, .rst,
        .start_prog(user_take_good && s_cmd_op == OP_PROG),
        .start_praw(user_take_good && s_cmd_op == OP_PRAW),
        .start_drain(cmd_take_bad && cmd_is_prog),
        .start_drain_prog(s_cmd_op == OP_PROG),
        .start_way(s_cmd_way),
        .wr_idle,
        .s_wdata_valid, .s_wdata_ready, .s_wdata_data, .s_wdata_last,
        .m_cdata_valid(ch_wd_valid), .m_cdata_ready(ch_wd_ready), .m_cdata_data(ch_wd_data),
        .m_cdata_last(ch_wd_last),
        .poison_valid, .poison_way
    );

    // =================================================================================================
    // Read half: chan read bytes -> page buffer -> decoder -> m_rdata; raw reads -> m_rdata
    // =================================================================================================
    logic [WAYS*3-1:0]      way_op;
    logic [WAYS*TAG_W-1:0]  way_tag;
    logic [WAYS*SLOT_W-1:0] way_slot;
    for (genvar w = 0; w < WAYS; w++) begin : g_way_ctx
        assign way_op[w*3 +: 3]            = op_q[w];
        assign way_tag[w*TAG_W +: TAG_W]    = tag_q[w];
        assign way_slot[w*SLOT_W +: SLOT_W] = slot_q[w];
    end

    logic              dj_cv, dj_done;   // the decode job's completion: valid (a register), taken
    logic [WAY_W-1:0]  djc_way;
    logic [TAG_W-1:0]  djc_tag;
    logic [SLOT_W-1:0] djc_slot;
    logic [2:0]        djc_st;
    logic [7:0]        djc_corr;
    logic              djc_bbm;
    logic              raw_idle;         // no raw read word on its way (a register)
    logic              cpl_free;
    // a READ's completion goes after its release: pages are filled, decoded and released in the
    // chan's fetch order, so the decode job may complete while more releases than decode-job
    // completions have gone out (2-bit counts: at most 2 filled pages are ahead of the decoder)
    logic [1:0]        reln_q, djn_q;
    logic              dj_ok;
    // the BCH decoder's Chien width: 4 positions a cycle (2 cycles a byte, half the Chien
    // registers) when the bus takes >= 3 cycles a byte, so the decode job still outpaces the fill
    // (README_ecc.md "Narrow Chien search"); 8 at the fast interface
    localparam int BCH_LANES = (T_RP + T_REH >= 3) ? 4 : 8;
    assign dj_ok = (reln_q != djn_q);

    ats_nand_page_rd #(
        .WAYS(WAYS), .TAG_W(TAG_W), .SLOT_W(SLOT_W), .PAGE_BYTES(PAGE_BYTES),
        .ERASED_THR(ERASED_THR), .BAD_MARK_THR(BAD_MARK_THR), .BCH_EXT_BM(BCH_EXT_BM),
        .BCH_LANES(BCH_LANES)
    ) u_rd (
        .clk, .rst,
        .way_op, .way_tag, .way_slot,
        .s_cdata_valid(cr_valid), .s_cdata_ready(cr_ready), .s_cdata_data(cr_data),
        .s_cdata_tag(cr_tag), .s_cdata_last(cr_last),
        .m_rdata_valid, .m_rdata_ready, .m_rdata_data, .m_rdata_tag, .m_rdata_slot, .m_rdata_last,
        .m_dcpl_valid(dj_cv), .m_dcpl_ready(cpl_free && dj_ok), .m_dcpl_way(djc_way),
        .m_dcpl_tag(djc_tag), .m_dcpl_slot(djc_slot), .m_dcpl_status(djc_st),
        .m_dcpl_corrected(djc_corr), .m_dcpl_bad_mark(djc_bbm),
        .raw_idle,
        .bm_req, .bm_syn, .bm_gnt, .bm_done, .bm_lambda, .bm_len
    );
    assign dj_done = dj_cv && cpl_free && dj_ok;

    // =================================================================================================
    // Completion register: the decode job first, then the chan stage, then a BAD_REQ
    // =================================================================================================
    logic              cpl_v_q, cpl_v_d, cpl_v_d1;
    logic [TAG_W-1:0]  cpl_tag_q, cpl_tag_d, cpl_tag_d1;
    logic [SLOT_W-1:0] cpl_slot_q, cpl_slot_d, cpl_slot_d1;
    logic [2:0]        cpl_st_q, cpl_st_d, cpl_st_d1;
    logic [7:0]        cpl_corr_q, cpl_corr_d, cpl_corr_d1;
    logic              cpl_bbm_q, cpl_bbm_d, cpl_bbm_d1;
    logic              cpl_rel_q, cpl_rel_d1, cpl_rd_q, cpl_rd_d1;
    assign cpl_free = !cpl_v_q || m_cpl_ready;

    logic chan_cpl_out;        // the chan stage goes to the completion register this cycle
    logic              chs_v_q, chs_raw_q;   // chan completion stage
    logic              chs_rel_q;            // it is a READ's (a release)
    logic [WAY_W-1:0]  chs_way_q;
    logic [TAG_W-1:0]  chs_tag_q;
    logic [SLOT_W-1:0] chs_slot_q;
    logic [2:0]        chs_st_q;
    logic cpl_raw_rd;          // it ends a raw read: its last word must have left first
    assign cpl_raw_rd = (op_q[ch_cpl_tag] == OP_RRAW || op_q[ch_cpl_tag] == OP_RDID ||
                         op_q[ch_cpl_tag] == OP_PARAM);
    // every source is a register (staged one cycle earlier): the selection is a few LUT levels
    always_comb begin
        cpl_v_d1 = cpl_v_q && !m_cpl_ready; cpl_tag_d1 = cpl_tag_q; cpl_slot_d1 = cpl_slot_q;
        cpl_st_d1 = cpl_st_q; cpl_corr_d1 = cpl_corr_q; cpl_bbm_d1 = cpl_bbm_q;
        cpl_rel_d1 = cpl_rel_q; cpl_rd_d1 = cpl_rd_q;
        chan_cpl_out = 1'b0;
        cpl_bad_ok = 1'b0;
        if (cpl_free) begin
            cpl_rel_d1 = 1'b0;
            cpl_rd_d1 = 1'b0;
            if (dj_cv && dj_ok) begin
                cpl_rd_d1 = 1'b1;
                cpl_v_d1 = 1'b1;
                cpl_tag_d1 = djc_tag;
                cpl_slot_d1 = djc_slot;
                cpl_st_d1 = djc_st;
                cpl_corr_d1 = djc_corr;
                cpl_bbm_d1 = djc_bbm;
            end else if (chs_v_q && (!chs_raw_q || raw_idle)) begin
                // a raw read's completion only after its last word has left
                chan_cpl_out = 1'b1;
                cpl_rel_d1 = chs_rel_q;
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

    // chan completions: a one-entry stage, with their request's tag, slot and status (a poisoned
    // PROGRAM: BAD_REQ). READ: the page has left the die, the stage makes it a release (the
    // decode job completes the request)
    assign ch_cpl_ready = !chs_v_q;
    always_ff @(posedge clk) begin
        if (ch_cpl_valid && ch_cpl_ready) begin
            chs_v_q <= 1'b1;
            chs_rel_q <= (op_q[ch_cpl_tag] == OP_READ);
            chs_way_q <= ch_cpl_tag;
            chs_tag_q <= tag_q[ch_cpl_tag];
            chs_slot_q <= slot_q[ch_cpl_tag];
            chs_st_q <= (op_q[ch_cpl_tag] == OP_PROG && poison_q[ch_cpl_tag]) ? ST_BAD : ch_cpl_status;
            chs_raw_q <= cpl_raw_rd;
        end else if (chan_cpl_out) begin
            chs_v_q <= 1'b0;
        end
        cpl_v_q <= cpl_v_d; cpl_tag_q <= cpl_tag_d; cpl_slot_q <= cpl_slot_d; cpl_st_q <= cpl_st_d;
        cpl_corr_q <= cpl_corr_d; cpl_bbm_q <= cpl_bbm_d;
        cpl_rel_q <= cpl_rel_d1;       // (0 when a BAD_REQ loads: cpl_bad_ok)
        cpl_rd_q <= cpl_rd_d1;
        reln_q <= reln_q + 2'(chan_cpl_out && chs_rel_q);
        djn_q <= djn_q + 2'(dj_done);
        if (rst) begin
            chs_v_q <= 1'b0; cpl_v_q <= 1'b0; reln_q <= '0; djn_q <= '0;
        end
    end

    assign m_cpl_valid     = cpl_v_q;
    assign m_cpl_tag       = cpl_tag_q;
    assign m_cpl_slot      = cpl_slot_q;
    assign m_cpl_status    = cpl_st_q;
    assign m_cpl_corrected = cpl_corr_q;
    assign m_cpl_bad_mark  = cpl_bbm_q;
    assign m_cpl_rel       = cpl_rel_q;
    assign m_cpl_rd        = cpl_rd_q;

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
            // from the write half's registers (one cycle after the framing error; the completion
            // is much later)
            if (poison_valid && poison_way == WAY_W'(w)) begin
                poison_q[w] <= 1'b1;
            end
            // completion or release: the way is free (a READ's decode job runs on without it)
            if (chan_cpl_out && chs_way_q == WAY_W'(w)) begin
                busy_q[w] <= 1'b0;
            end
            if (rst) begin
                busy_q[w] <= 1'b0;
            end
        end
    end

    logic unused_djc_way;
    assign unused_djc_way = ^djc_way;

`ifndef SYNTHESIS
    // the chan never rejects what this block sends it
    always_ff @(posedge clk) begin
        if (!rst && ch_cpl_valid && ch_cpl_ready && ch_cpl_status == ST_BAD)
            $error("ats_nand_page: the channel rejected a request (%m)");
    end
`endif
endmodule

`resetall
