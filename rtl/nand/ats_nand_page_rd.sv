// SPDX-License-Identifier: Apache-2.0
// ats_nand_page_rd: the read half of ats_nand_page. Chan read bytes (s_cdata) are routed by their
// way's op: a READ fetch (data + used spare, one array read) fills the page buffer (block RAM,
// double-buffered spare area), raw reads (READ_RAW, READ_ID, READ_PARAM) go to a word packer. The
// decode job feeds each sector with its parity, then the metadata codeword, from the buffer to the
// BCH decoder (GF(2^13), t = 8), detects erased codewords, CRCs the corrected bytes, packs the
// words onto m_rdata, gives the verdict, the 5 metadata words, and offers the READ's completion on
// m_dcpl (a register) to the top's completion register. Per-way request context comes from the top
// (its registers); a filled page keeps its own tag, slot and bad-block mark (the top frees the way
// when the chan has delivered the page, before the decode); every output is a register. Page format and timing: rtl/nand/README_page.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets the CRC-32C byte step as a look-up table filled at time 0 from
// ats_nand_pkg::crc32c_byte and the zero count of a byte by $countones (same values;
// README_page.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_nand_page_rd #(
    parameter int WAYS         = 4,     // dies on the channel (1..8)
    parameter int TAG_W        = 8,     // request tag (echoed)
    parameter int SLOT_W       = 8,     // page-buffer slot (opaque, echoed)
    parameter int PAGE_BYTES   = 4096,  // data bytes per page: a multiple of 512 (1..32 sectors)
    parameter int ERASED_THR   = 8,     // a codeword with at most this many 0 bits reads as erased
    parameter int BAD_MARK_THR = 4,     // spare byte 0 with at least this many 0 bits: bad block
    parameter bit BCH_EXT_BM   = 1'b0,  // 1: the decoder's Berlekamp-Massey is the shared unit on
                                        // the bm_* ports (ats_bch_bm_arb); 0: its own
    parameter int BCH_LANES    = 8      // the decoder's Chien positions a cycle (8, 4 or 2)
) (
    input  wire logic                 clk,
    input  wire logic                 rst,           // synchronous, active high

    // per-way request context (the top's registers), way w at [w*width +: width]
    input  wire logic [WAYS*3-1:0]      way_op,
    input  wire logic [WAYS*TAG_W-1:0]  way_tag,
    input  wire logic [WAYS*SLOT_W-1:0] way_slot,

    // read bytes from ats_nand_chan m_rdata (tag = way)
    input  wire logic                 s_cdata_valid,
    output wire logic                 s_cdata_ready,
    input  wire logic [7:0]           s_cdata_data,
    input  wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] s_cdata_tag,
    input  wire logic                 s_cdata_last,

    // READ data (ats_nand_page m_rdata)
    output wire logic                 m_rdata_valid,
    input  wire logic                 m_rdata_ready,
    output wire logic [31:0]          m_rdata_data,
    output wire logic [TAG_W-1:0]     m_rdata_tag,
    output wire logic [SLOT_W-1:0]    m_rdata_slot,
    output wire logic                 m_rdata_last,

    // a READ's completion (the decode job's), after its last word has left m_rdata
    output wire logic                 m_dcpl_valid,
    input  wire logic                 m_dcpl_ready,
    output wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] m_dcpl_way,
    output wire logic [TAG_W-1:0]     m_dcpl_tag,
    output wire logic [SLOT_W-1:0]    m_dcpl_slot,
    output wire logic [2:0]           m_dcpl_status,   // OK, UNCORRECTABLE or ERASED
    output wire logic [7:0]           m_dcpl_corrected,
    output wire logic                 m_dcpl_bad_mark,

    // no raw read word on its way (registered: none in the read FIFO or in m_rdata)
    output wire logic                 raw_idle,

    // shared Berlekamp-Massey (BCH_EXT_BM = 1; ats_bch_bm_arb's protocol; inputs ignored when 0)
    output wire logic                 bm_req,
    output wire logic [103:0]         bm_syn,        // odd syndromes, M = 13, T = 8
    input  wire logic                 bm_gnt,
    input  wire logic                 bm_done,
    input  wire logic [116:0]         bm_lambda,
    input  wire logic [4:0]           bm_len
);
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
    localparam int SPB_AW     = $clog2(SPARE_USED);        // spare-buffer half address bits
    localparam int SPR_AW     = SPB_AW + 1;                // spare RAM: two halves (double buffer)
    localparam int DB_AW      = $clog2(PAGE_BYTES);        // page (data) buffer address bits
    localparam int BANK_AW    = (DB_AW > 11) ? 11 : DB_AW; // one bank: one 2K x 9 block RAM
    localparam int BANKS      = (PAGE_BYTES + (1 << BANK_AW) - 1) >> BANK_AW;
    localparam int BK_W       = (BANKS > 1) ? $clog2(BANKS) : 1;
    localparam int SEC_W      = $clog2(SECT + 2);          // codeword index (SECT = metadata codeword)
    localparam int ZC_W       = $clog2(ERASED_THR + 2);
    localparam int ZW         = (ZC_W < 4) ? 4 : ZC_W;   // zero count bits: 2^ZW > ERASED_THR, 8
    localparam int FIFO_D     = 4;                         // decoder input FIFO entries

    localparam logic [2:0] OP_READ   = ats_nand_pkg::NAND_OP_READ;
    localparam logic [2:0] ST_OK     = ats_nand_pkg::NAND_ST_OK;
    localparam logic [2:0] ST_UNCORR = ats_nand_pkg::NAND_ST_UNCORR;
    localparam logic [2:0] ST_ERASED = ats_nand_pkg::NAND_ST_ERASED;

    function automatic logic [3:0] zeros8(input logic [7:0] b);
`ifdef ATS_SYNTH_FORM
        logic [3:0] n;
        n = '0;
        for (int i = 0; i < 8; i++) n = n + {3'b0, !b[i]};
        zeros8 = n;
`else
        zeros8 = 4'($countones(~b));
`endif
    endfunction
`ifndef ATS_SYNTH_FORM
    // simulation form: crc32c_byte(c, b) = (c >> 8) ^ crc32c_byte(0, c[7:0] ^ b) (reflected, linear)
    logic [31:0] crc_t [256];
    initial begin
        for (int v = 0; v < 256; v++) crc_t[v] = ats_nand_pkg::crc32c_byte(32'h0, 8'(v));
    end
`endif

    // per-way context, as arrays
    logic [2:0]        op_q   [WAYS];
    logic [TAG_W-1:0]  tag_q  [WAYS];
    logic [SLOT_W-1:0] slot_q [WAYS];
    logic              bbm_q  [2];      // READ: spare byte 0 is a bad-block mark, per spare half
    for (genvar w = 0; w < WAYS; w++) begin : g_ctx
        assign op_q[w]   = way_op[w*3 +: 3];
        assign tag_q[w]  = way_tag[w*TAG_W +: TAG_W];
        assign slot_q[w] = way_slot[w*SLOT_W +: SLOT_W];
    end

    // =================================================================================================
    // Decoder
    // =================================================================================================
    logic       dec_in_valid, dec_in_ready, dec_in_last;
    logic [7:0] dec_in_data;
    logic       dec_out_valid, dec_out_ready, dec_out_last;
    logic [7:0] dec_out_data;
    logic       dec_st_valid, dec_st_ready, dec_st_uncorr;
    logic [7:0] dec_st_corr;

    ats_bch_dec #(.M(13), .T(8), .K(K), .OUT_DEPTH(4), .EXT_BM(BCH_EXT_BM), .LANES(BCH_LANES)) u_dec (
        .clk, .rst,
        .s_data_valid(dec_in_valid), .s_data_ready(dec_in_ready), .s_data_data(dec_in_data),
        .s_data_last(dec_in_last),
        .m_data_valid(dec_out_valid), .m_data_ready(dec_out_ready), .m_data_data(dec_out_data),
        .m_data_last(dec_out_last),
        .m_status_valid(dec_st_valid), .m_status_ready(dec_st_ready),
        .m_status_corrected(dec_st_corr), .m_status_uncorrectable(dec_st_uncorr),
        .bm_req, .bm_syn, .bm_gnt, .bm_done, .bm_lambda_i(bm_lambda), .bm_len_i(bm_len)
    );

    // =================================================================================================
    // Read path, part 1: chan read data routing. READ fetch (data + used spare, one array read)
    // -> page buffer; raw reads -> word packer. Decode job: page buffer -> decoder input.
    // =================================================================================================
    // chan read bytes enter a one-byte register with their route, decided from the way's context
    // when the byte arrives: the chan sees a registered ready (empty: one byte at a time, >= 2
    // cycles a byte on the bus), the routing logic registered inputs. With the byte, its route as
    // valid flags (a fill byte, its last one, a raw byte), so that the takes need no route decode
    // (Fmax: the fill's take drives the fill registers; the former 2-entry FIFO never held two)
    logic              ch_rd_last;               // read data in the register
    logic [7:0]        ch_rd_data;
    logic [WAY_W-1:0]  ch_rd_tag;
    localparam int RQ_W = 8 + WAY_W + 1;
    logic [RQ_W-1:0] rq_q;
    logic            rq_v_q;                    // a byte is held
    logic            rq_fill_q, rq_fill_last_q; // ... a READ fetch byte, its last one
    logic            rq_raw_q;                  // ... a raw byte
    logic            rq_push, rq_pop;
    logic            cr_raw;
    logic            raw_take;                  // the held raw byte is taken
    logic            fl_take;                   // the held fill byte is taken (page buffer)
    assign cr_raw   = (op_q[s_cdata_tag] != OP_READ);
    assign s_cdata_ready = !rq_v_q;
    assign rq_push  = s_cdata_valid && !rq_v_q;
    assign rq_pop   = fl_take || raw_take;
    assign {ch_rd_last, ch_rd_tag, ch_rd_data} = rq_q;
    always_ff @(posedge clk) begin
        if (rq_push) rq_q <= {s_cdata_last, s_cdata_tag, s_cdata_data};
        if (rq_push) begin
            rq_v_q <= 1'b1;
            rq_fill_q <= !cr_raw;
            rq_fill_last_q <= !cr_raw && s_cdata_last;
            rq_raw_q <= cr_raw;
        end else if (rq_pop) begin
            rq_v_q <= 1'b0; rq_fill_q <= 1'b0; rq_fill_last_q <= 1'b0; rq_raw_q <= 1'b0;
        end
        if (rst) begin
            rq_v_q <= 1'b0; rq_fill_q <= 1'b0; rq_fill_last_q <= 1'b0; rq_raw_q <= 1'b0;
        end
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
    logic [TAG_W-1:0]  full_tag_q;          // its request's tag and slot (its way may take the
    logic [SLOT_W-1:0] full_slot_q;         // next request before the page is decoded)
    logic              full_half_q;
    logic              ahead_q;             // the decode job has read past fl_da_q (or none runs)
    logic              fill_rdy;
    logic [DB_AW-1:0]  fi_da_q, fi_da_d;    // decode job: next data-buffer read address
    logic              fi_past_q;           // decode job: every data-buffer byte read
    assign fill_rdy = (fl_mid_q || !full_q) && (fl_sp_q || ahead_q);
    assign fl_take  = rq_fill_q && fill_rdy;
    // chan read bytes: raw ones to the packer (not during a decode job: they share m_rdata),
    // READ fetch ones into the page buffer (fl_take)
    assign raw_take = rq_raw_q && !dj_v_q && (!rp_word || !ro_v_q);
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && fl_take && rq_fill_last_q && full_q)
            $error("ats_nand_page_rd: a page's last byte taken while a filled page waits (%m)");
    end
`endif

    logic [BK_W-1:0]  db_wbank, db_rbank;
    logic [7:0]       db_rd [BANKS];
    logic [SPR_AW-1:0] sp_waddr, sp_raddr;
    logic [7:0]        sp_rdata;
    logic              sp_we;
    assign db_wbank = (BANKS > 1) ? BK_W'(fl_da_q >> BANK_AW) : '0;
    assign db_rbank = (BANKS > 1) ? BK_W'(fi_da_q >> BANK_AW) : '0;
    // The buffer writes are registered (a write lands one cycle after its byte is taken), so the
    // fill's take decision drives only this block's registers, not the block RAMs' write enables
    // across the chip (Fmax). Exact: a page's bytes are read only by its decode job, which starts
    // after the page's last byte was taken and reads the data part first (the last bytes written
    // are spare bytes, read hundreds of cycles later); a later write only widens ahead_q's margin.
    logic [BANKS-1:0]   db_we_q;
    logic [BANK_AW-1:0] db_wa_q;
    logic [7:0]         pb_wd_q;
    logic               sp_we_q;
    logic [SPR_AW-1:0]  sp_wa_q;
    always_ff @(posedge clk) begin
        for (int b = 0; b < BANKS; b++) db_we_q[b] <= fl_take && !fl_sp_q && db_wbank == BK_W'(b);
        db_wa_q <= fl_da_q[BANK_AW-1:0];
        pb_wd_q <= ch_rd_data;
        sp_we_q <= sp_we;
        sp_wa_q <= sp_waddr;
        if (rst) begin
            db_we_q <= '0;
            sp_we_q <= 1'b0;
        end
    end
    for (genvar b = 0; b < BANKS; b++) begin : g_pbuf
        ats_ram_sdp #(.WIDTH(8), .DEPTH(1 << BANK_AW)) u_data (
            .clk, .wr_en(db_we_q[b]),
            .wr_addr(db_wa_q), .wr_data(pb_wd_q),
            .rd_addr(fi_da_q[BANK_AW-1:0]), .rd_data(db_rd[b])
        );
    end
    assign sp_we    = fl_take && fl_sp_q;
    assign sp_waddr = {fl_half_q, fl_sa_q};
    ats_ram_sdp #(.WIDTH(8), .DEPTH(1 << SPR_AW)) u_spare (
        .clk, .wr_en(sp_we_q), .wr_addr(sp_wa_q), .wr_data(pb_wd_q),
        .rd_addr(sp_raddr), .rd_data(sp_rdata)
    );

    always_ff @(posedge clk) begin
        // the filled page's context, loaded in every cycle no page waits: full_q rises only in such
        // a cycle (at a page's last byte, a fill starts only while no page waits: fill_rdy), so
        // the registers hold the values of that byte (Fmax: the take drives only full_q)
        if (!full_q) begin
            full_way_q <= ch_rd_tag;
            full_tag_q <= tag_q[ch_rd_tag];
            full_slot_q <= slot_q[ch_rd_tag];
            full_half_q <= fl_half_q;
        end
        if (fl_take) begin
            if (rq_fill_last_q) begin
                fl_mid_q <= 1'b0;
                fl_sp_q <= 1'b0;
                fl_da_q <= '0;
                fl_da2_q <= (DB_AW + 1)'(2);
                fl_sa_q <= '0;
                fl_half_q <= !fl_half_q;
                full_q <= 1'b1;
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

    // bad-block mark: spare byte 0 of the READ fetch, per spare half (the page's own, like its
    // spare: the next fill writes the other half)
    always_ff @(posedge clk) begin
        for (int h = 0; h < 2; h++) begin
            if (sp_we && fl_half_q == 1'(h) && fl_sa_q == '0) begin
                bbm_q[h] <= (32'(zeros8(ch_rd_data)) >= BAD_MARK_THR);
            end
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
    logic [ZW-1:0]     di_zc_q;               // zero bits of the codeword so far, modulo 2^ZW
    logic              di_zo_q;               // ... they have reached 2^ZW (> ERASED_THR)
    logic [ZW-1:0]     zc_fin_q;              // the complete count of the codeword just ended
    logic              zc_fo_q;               // ... it reached 2^ZW
    logic              zp_v_q, zp_last_q;     // popped byte: valid, last of its codeword
    logic [3:0]        zp_cnt_q;              // popped byte: zero bits to count
    logic [(1 << SEC_W)-1:0] er_vec_q;       // codeword c (0..SECT) looked erased (few 0 bits)
    logic [(1 << SEC_W)-1:0] er_oh_q;        // codeword whose count ends next, one-hot
    logic              zc_end_q;              // zc_fin_q / zc_fo_q hold a complete codeword's count
    assign dec_in_last = (di_pos_q == 10'(CW - 1));
    // running count: ZW bits and a sticky carry-out flag (2^ZW > ERASED_THR: a codeword whose
    // count carries out is not erased), one adder and no saturation compare in the loop (Fmax: the
    // former saturating add was a second carry chain after the first); at a codeword's last byte
    // the count is registered whole (zc_fin_q / zc_fo_q) and restarts at 0, and it is compared one
    // cycle later (zc_end_q): the same erased flags in the same cycles as a saturating count
    logic [ZW:0]       di_zc_sum;
    assign di_zc_sum = {1'b0, di_zc_q} + (ZW + 1)'(zp_cnt_q);

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
        if (zp_v_q) begin
            di_zc_q <= zp_last_q ? '0 : di_zc_sum[ZW-1:0];
            di_zo_q <= !zp_last_q && (di_zo_q || di_zc_sum[ZW]);
        end
        if (zp_v_q && zp_last_q) begin
            zc_fin_q <= di_zc_sum[ZW-1:0];
            zc_fo_q <= di_zo_q || di_zc_sum[ZW];
        end
        zc_end_q <= zp_v_q && zp_last_q;
        if (zc_end_q) begin
            er_oh_q <= er_oh_q << 1;
            for (int c = 0; c < (1 << SEC_W); c++) begin
                if (er_oh_q[c]) er_vec_q[c] <= !zc_fo_q && (32'(zc_fin_q) <= ERASED_THR);
            end
        end
        // held at the job's start values while no job runs (Fmax: the reset is the register
        // dj_v_q, not dj_start; the decoder input is empty and no byte is popped while no job
        // runs, asserted below, so every job starts from the same values)
        if (!dj_v_q) begin
            di_sec_q <= '0; di_pos_q <= '0; di_zc_q <= '0; di_zo_q <= 1'b0; er_vec_q <= '0;
            er_oh_q <= (1 << SEC_W)'(1); zc_end_q <= 1'b0;
        end
        if (rst) begin
            pp1_v_q <= 1'b0; pp2_v_q <= 1'b0; pp3_v_q <= 1'b0; fi_st_q <= FI_IDLE; fifo_n_q <= '0;
            fi_sec_q <= '0; fi_pos_q <= '0; fi_da_q <= '0; fi_ra_q <= SPB_AW'(SP_DPAR);
            occ_q <= '0; fifo_wp_q <= '0; fifo_rp_q <= '0; fi_past_q <= 1'b0;
            di_sec_q <= '0; di_pos_q <= '0; di_zc_q <= '0; di_zo_q <= 1'b0; zp_v_q <= 1'b0;
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
    // (write / read pointers; the free entry at the write pointer is written in every cycle the
    // FIFO is not full, so an entry's enable is a decode of registers, not of the decoder's
    // output valid (Fmax); the pointer moves only on a push, an entry is read only while held)
    logic [9:0] db_q [2];                   // {kind, byte}
    logic [1:0] db_n_q;
    logic       db_wp_q, db_rp_q;
    logic       db_push, db_pop;
    logic [1:0] db_kind;
    logic [7:0] db_byte;
    assign {db_kind, db_byte} = db_q[db_rp_q];
    assign db_push = dec_out_valid && dec_out_ready;
    always_ff @(posedge clk) begin
        if (db_n_q != 2'd2) db_q[db_wp_q] <= {do_kind, do_er ? 8'hFF : dec_out_data};
        if (db_push) db_wp_q <= !db_wp_q;
        if (db_pop) db_rp_q <= !db_rp_q;
        db_n_q <= db_n_q + {1'b0, db_push} - {1'b0, db_pop};
        if (rst) begin
            db_n_q <= '0; db_wp_q <= 1'b0; db_rp_q <= 1'b0;
        end
    end
    assign do_byte = db_byte;

    // the 5 metadata words, loaded at the verdict and shifted out (no word mux before m_rdata)
    logic [159:0] mwords_q, mwords_d;
    logic [159:0] meta_words;
    assign meta_words = {8'h00, rmeta_q[151:144], rmeta_q[47:40], rmeta_q[39:32],   // w4
                         rmeta_q[143:112], rmeta_q[111:80], rmeta_q[79:48],          // w3 w2 w1
                         rmeta_q[31:0]};                                             // w0

    logic              crc_eq_q;             // stored CRC = computed CRC (registered)
    logic              ver_ok;               // DO_VER: the verdict is OK (registers only)
    assign ver_ok = !(|er_vec_q[SECT:0]) && !unc_q && crc_eq_q;
    logic [7:0]        djc_corr_q;           // decode-job completion fields
    logic              djc_bbm_q;
    // the decode job's completion is ready (its last word has left m_rdata), and no raw word is on
    // its way (a raw read's last byte is in the read FIFO or in m_rdata from the cycle it is taken
    // until it leaves): registers (one cycle late, safe), for the top's completion register
    logic              dj_cv_q, raw_idle_q;
    assign m_dcpl_valid     = dj_cv_q;
    assign m_dcpl_way       = dj_way_q;
    assign m_dcpl_tag       = djt_tag_q;
    assign m_dcpl_slot      = djt_slot_q;
    assign m_dcpl_status    = vst_q;
    assign m_dcpl_corrected = djc_corr_q;
    assign m_dcpl_bad_mark  = djc_bbm_q;
    assign raw_idle         = raw_idle_q;
    assign dj_done          = dj_cv_q && m_dcpl_ready;
    always_comb begin
        do_st_d = do_st_q; do_sec_d = do_sec_q; do_pos_d = do_pos_q; st_n_d = st_n_q;
        corr_d = corr_q; unc_d = unc_q; rcrc_d = rcrc_q; rmeta_d = rmeta_q; scrc_d = scrc_q;
        rc_v_d = 1'b0; rm_v_d = 1'b0;
`ifdef ATS_SYNTH_FORM
        if (rc_v_q) rcrc_d = ats_nand_pkg::crc32c_byte(rcrc_q, rc_b_q);
`else
        if (rc_v_q) rcrc_d = (rcrc_q >> 8) ^ crc_t[rcrc_q[7:0] ^ rc_b_q];
`endif
        if (rm_v_q) rmeta_d = {rc_b_q, rmeta_q[8*META_B-1:8]};
        pk_d = pk_q; pk_n_d = pk_n_q; mw_d = mw_q; vst_d = vst_q; mwords_d = mwords_q;
        ro_v_d = ro_v_q && !m_rdata_ready;
        dec_out_ready = 1'b0;
        db_pop = 1'b0;
        dec_st_ready = 1'b0;

        // ---- raw packer -----------------------------------------------------------------------
        if (raw_take) begin
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
                DO_CPL: ;    // the top's completion register takes it (m_dcpl)
                default: do_st_d = DO_RUN;
            endcase
        end
        // the job's output registers are held at their start values while no job runs (Fmax: their
        // reset is the register dj_v_q, not dj_start = full_q && !dj_v_q && feed idle; nothing
        // reads them while !dj_v_q, and a job starts only when none runs, so every job starts from
        // the same values as with a load at dj_start)
        if (!dj_v_q) begin
            do_st_d = DO_RUN; do_sec_d = '0; do_pos_d = '0; st_n_d = '0; corr_d = '0; unc_d = 1'b0;
            rcrc_d = 32'hFFFF_FFFF; pk_n_d = '0;
            // (rc_v_d / rm_v_d need no clear here: they are set only while a job runs, dj_v_q)
        end
    end

    always_ff @(posedge clk) begin
        dj_cv_q <= dj_v_q && (do_st_q == DO_CPL) && !ro_v_q && !dj_done;
        raw_idle_q <= !ro_v_q && !rq_v_q;
        // decode job: completion fields, ready with the verdict
        crc_eq_q <= (~rcrc_q == scrc_q);
        if (do_st_q == DO_VER) begin
            // corrected bits only with an OK verdict (README: 0 unless OK), so a counter summing
            // `corrected` never counts a failed page's corrections; ver_ok is the OK verdict from
            // the same registers as vst_d (no deeper than the former erased-only test)
            djc_corr_q <= ver_ok ? corr_q : 8'd0;
            djc_bbm_q <= bbm_q[dj_half_q];
        end
        if (rst) begin
            dj_cv_q <= 1'b0; raw_idle_q <= 1'b0;
        end
    end

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
        // raw packer
        if (raw_take) begin
            rp_w_q <= {ch_rd_data, rp_w_q[23:8]};
            rp_n_q <= rp_word ? 2'd0 : rp_n_q + 1'b1;
            rw_tag_q <= tag_q[ch_rd_tag];         // used by the word's last byte (same fetch)
            rw_slot_q <= slot_q[ch_rd_tag];
        end
        // decode job
        // the job's page context follows the filled page's while no job runs (Fmax: the enable is
        // dj_v_q; it is read only while a job runs, and holds from dj_start on)
        if (!dj_v_q) begin
            dj_way_q <= full_way_q;
            dj_half_q <= full_half_q;
            djt_tag_q <= full_tag_q;
            djt_slot_q <= full_slot_q;
        end
        if (dj_start) begin
            dj_v_q <= 1'b1;
        end else if (dj_done) begin
            dj_v_q <= 1'b0;
        end
        if (rst) begin
            do_st_q <= DO_RUN; ro_v_q <= 1'b0; rp_n_q <= '0; dj_v_q <= 1'b0;
            rc_v_q <= 1'b0; rm_v_q <= 1'b0;
        end
    end

    logic unused_last;
    assign unused_last = dec_out_last;   // framing is by count
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        // the job registers held while no job runs (!dj_v_q) are not in use then
        if (!rst && !dj_v_q && (fifo_n_q != '0 || zp_v_q || zc_end_q || pp1_v_q || pp2_v_q ||
                                pp3_v_q || rc_v_q || rm_v_q || dec_out_valid || db_n_q != 2'd0))
            $error("ats_nand_page_rd: decode-job state active while no job runs (%m)");
    end
`endif
endmodule

`resetall
