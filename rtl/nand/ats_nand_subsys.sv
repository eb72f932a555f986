// SPDX-License-Identifier: Apache-2.0
// ats_nand_subsys: the assembled NAND subsystem (docs/architecture.md section 5): one
// ats_nand_sched in front of NUM_CHAN ats_nand_page channel controllers (ONFI pins, BCH ECC,
// spare metadata, CRC), each driving WAYS dies.
//  - s_nreq (physical requests) -> scheduler -> per channel a command stage -> ats_nand_page.
//    The command stage checks block / page against the geometry (the scheduler checks op, chan,
//    way, duplicate tag): a bad request completes BAD_REQ from the stage and never reaches the
//    page controller, and a bad PROGRAM fetches no data.
//  - PROGRAM data: when a good PROGRAM enters channel c's command stage, a fetch request
//    {chan, tag, slot} goes out on m_nfetch (one stream, round robin over the channels); the
//    page-buffer DMA answers with the slot's words on channel c's own s_ndata stream (one stream
//    per channel: packed vectors), in fetch order per channel. Channels never wait for each other.
//  - READ data of all channels: merged onto m_ndata word by word (round robin: the pages of
//    different channels interleave), each word with its tag, slot, chan and its index in the page
//    (widx); a channel's pages come one after the other, in order.
//  - completions: the page controllers' and the command stages' BAD_REQ merged round robin into
//    the scheduler's s_ccpl; out on m_ncpl (by tag, out of order) with bad_mark. A READ gives two
//    beats: a release when its page has left the die (the scheduler frees the die, forwards
//    nothing), then its completion after the decode. A READ's completion is held until the page's
//    last word has been accepted on m_ndata, so a consumer always has the data before the status.
// All outputs to the top come from registers; m_ndata and m_ncpl pass register slices (registered
// ready). Theory, interface and timing: rtl/nand/README_subsys.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_subsys #(
    parameter int NUM_CHAN        = 2,     // channels (one ats_nand_page each), 1..8
    parameter int WAYS            = 4,     // dies per channel, 1..4
    parameter int DEPTH           = 32,    // scheduler request table entries, 2..64
    parameter int SLOT_W          = 8,     // page-buffer slot number width
    parameter int STAMP_W         = 16,    // scheduler arrival stamp width (README_sched.md)
    parameter int PAGE_BYTES      = 4096,  // data bytes per page: multiple of 512
    parameter int SPARE_BYTES     = 224,   // spare bytes per page (>= 37 + 13 * sectors)
    parameter int PAGES_PER_BLOCK = 64,    // power of two, <= 256
    parameter int BLOCKS          = 4096,  // blocks per die, power of two, <= 4096
    parameter int ERASED_THR      = 8,     // see ats_nand_page
    parameter int BAD_MARK_THR    = 4,     // see ats_nand_page
    // ONFI pin timings in clock cycles, passed to every channel (ats_nand_chan)
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
    // 1: one Berlekamp-Massey unit (ats_bch_bm_arb) shared by the channels' BCH decoders, round
    // robin (rtl/nand/README_ecc.md "Shared Berlekamp-Massey"); 0: one in every decoder
    parameter bit BCH_SHARED      = 1'b1
) (
    input  wire logic                       clk,
    input  wire logic                       rst,            // synchronous, active high
    input  wire logic                       reads_first,    // every read is a priority read
    // physical requests (architecture.md section 5)
    input  wire logic                       s_nreq_valid,
    output wire logic                       s_nreq_ready,
    input  wire logic [7:0]                 s_nreq_tag,
    input  wire logic [1:0]                 s_nreq_op,      // READ 0, PROGRAM 1, ERASE 2
    input  wire logic [2:0]                 s_nreq_chan,
    input  wire logic [1:0]                 s_nreq_way,
    input  wire logic [11:0]                s_nreq_block,
    input  wire logic [7:0]                 s_nreq_page,
    input  wire logic                       s_nreq_head,
    input  wire logic                       s_nreq_prio_read,
    input  wire logic [SLOT_W-1:0]          s_nreq_slot,
    // PROGRAM data fetch requests: "send slot's words on s_ndata[chan]"
    output wire logic                       m_nfetch_valid,
    input  wire logic                       m_nfetch_ready,
    output wire logic [2:0]                 m_nfetch_chan,
    output wire logic [7:0]                 m_nfetch_tag,
    output wire logic [SLOT_W-1:0]          m_nfetch_slot,
    // PROGRAM data, one stream per channel: PAGE_BYTES/4 data words + 5 metadata words, last on
    // the 5th (ats_nand_page s_wdata format); bit c / slice c belongs to channel c
    input  wire logic [NUM_CHAN-1:0]        s_ndata_valid,
    output wire logic [NUM_CHAN-1:0]        s_ndata_ready,
    input  wire logic [NUM_CHAN*32-1:0]     s_ndata_data,
    input  wire logic [NUM_CHAN-1:0]        s_ndata_last,
    // READ data of all channels, word by word round robin: words of different channels' pages
    // interleave, the words of one page come in order (widx 0, 1, ...), a channel's pages one after
    // the other
    output wire logic                       m_ndata_valid,
    input  wire logic                       m_ndata_ready,
    output wire logic [31:0]                m_ndata_data,
    output wire logic                       m_ndata_last,
    output wire logic [7:0]                 m_ndata_tag,
    output wire logic [SLOT_W-1:0]          m_ndata_slot,
    output wire logic [2:0]                 m_ndata_chan,
    output wire logic [15:0]                m_ndata_widx,   // the word's index in its page
    // completions, by tag, out of order
    output wire logic                       m_ncpl_valid,
    input  wire logic                       m_ncpl_ready,
    output wire logic [7:0]                 m_ncpl_tag,
    output wire logic [2:0]                 m_ncpl_status,  // OK 0, PROGRAM_FAIL 1, ERASE_FAIL 2,
                                                            // UNCORRECTABLE 3, BAD_REQ 4, ERASED 5
    output wire logic [7:0]                 m_ncpl_corrected,
    output wire logic                       m_ncpl_bad_mark, // READ: factory bad-block mark seen
    output wire logic                       err_spurious,    // scheduler: unknown completion dropped
    output wire logic                       init_done,       // every die got its power-on RESET
    // NAND pins, per channel (ats_nand_chan): ce_n / rb_n bit c*WAYS + w is die (c, w)
    output wire logic [NUM_CHAN*WAYS-1:0]   nand_ce_n,
    output wire logic [NUM_CHAN-1:0]        nand_cle,
    output wire logic [NUM_CHAN-1:0]        nand_ale,
    output wire logic [NUM_CHAN-1:0]        nand_we_n,
    output wire logic [NUM_CHAN-1:0]        nand_re_n,
    output wire logic [NUM_CHAN-1:0]        nand_wp_n,
    output wire logic [NUM_CHAN*8-1:0]      nand_dq_o,
    input  wire logic [NUM_CHAN*8-1:0]      nand_dq_i,
    input  wire logic [NUM_CHAN*WAYS-1:0]   nand_rb_n
);
    localparam int WAY_W  = (WAYS > 1) ? $clog2(WAYS) : 1;     // page controller way width
    localparam int CH_W   = (NUM_CHAN > 1) ? $clog2(NUM_CHAN) : 1;
    localparam int CPL_W  = 1 + 1 + 8 + 3 + 8;                 // {rel, bad_mark, corrected, status, tag}
    localparam int WI_W   = $clog2(PAGE_BYTES / 4 + 5 + 1);    // word index: a READ has PAGE_BYTES/4 + 5 words
    localparam int RD_W   = 32 + 8 + SLOT_W + WI_W;            // {data, tag, slot, widx}
    localparam int FET_W  = 8 + SLOT_W;                        // {tag, slot}
    localparam int RCNT_W = 3;                                 // READ pages / completions, modulo 8
    // the scheduler's 2-bit ops are the page ops 0..2; page statuses (ats_nand_pkg)
    localparam logic [1:0] OP_PROG = 2'(ats_nand_pkg::NAND_OP_PROG);
    localparam logic [2:0] ST_BAD  = ats_nand_pkg::NAND_ST_BAD;

    if (NUM_CHAN < 1 || NUM_CHAN > 8) begin : g_check_chan
        $fatal(1, "ats_nand_subsys: NUM_CHAN must be 1..8 (%m)");
    end
    if (WAYS < 1 || WAYS > 4) begin : g_check_ways
        $fatal(1, "ats_nand_subsys: WAYS must be 1..4 (the scheduler's way field is 2 bits) (%m)");
    end
    if (BLOCKS < 1 || BLOCKS > 4096 || PAGES_PER_BLOCK < 1 || PAGES_PER_BLOCK > 256) begin : g_check_geo
        $fatal(1, "ats_nand_subsys: BLOCKS must be 1..4096, PAGES_PER_BLOCK 1..256 (%m)");
    end

    // ---- scheduler ---------------------------------------------------------------------------------
    logic [NUM_CHAN-1:0]        ccmd_valid, ccmd_ready;
    logic [NUM_CHAN*8-1:0]      ccmd_tag, ccmd_page;
    logic [NUM_CHAN*2-1:0]      ccmd_op, ccmd_way;
    logic [NUM_CHAN*12-1:0]     ccmd_block;
    logic [NUM_CHAN*SLOT_W-1:0] ccmd_slot;
    logic                       ccpl_valid, ccpl_ready, ccpl_bm, ccpl_rel;
    logic [7:0]                 ccpl_tag, ccpl_corr;
    logic [2:0]                 ccpl_status;
    logic                       ncpl_valid, ncpl_ready;
    logic [7:0]                 ncpl_tag, ncpl_corr;
    logic [2:0]                 ncpl_status;

    // s_nreq's ready from a register of this input stage, not from the scheduler's nrdy_q, so the
    // requester's issue logic (the core's backend: nq_v_q, iss_mv_q, nq_slot_q) has no path from the
    // scheduler (docs/boards.md pnr_e14). A request goes straight through when the scheduler takes
    // it (no added cycle); one the scheduler refuses is kept in the skid register (nq_sk_v_q) and
    // offered from there, and s_nreq_ready is low while it is kept (README_subsys.md "Requests")
    localparam int NQ_W = 8 + 2 + 3 + 2 + 12 + 8 + 1 + 1 + SLOT_W;
    logic              nq_valid, nq_ready, nq_head, nq_prio;
    logic [7:0]        nq_tag, nq_page;
    logic [1:0]        nq_op, nq_way;
    logic [2:0]        nq_chan;
    logic [11:0]       nq_block;
    logic [SLOT_W-1:0] nq_slot;
    logic              nq_sk_v_q;
    logic              nq_rdy_q;     // == !nq_sk_v_q (asserted): s_nreq_ready's own copy, of the
                                     // other polarity so that the synthesis keeps it apart, placed by
                                     // its loads in the requester (pnr_e15: one register for both
                                     // sides left a 4.7 ns net ahead of the backend's issue logic)
    logic [NQ_W-1:0]   nq_sk_q, nq_in;
    assign nq_in        = {s_nreq_tag, s_nreq_op, s_nreq_chan, s_nreq_way, s_nreq_block, s_nreq_page,
                           s_nreq_head, s_nreq_prio_read, s_nreq_slot};
    assign s_nreq_ready = nq_rdy_q;
    assign nq_valid     = nq_sk_v_q || s_nreq_valid;
    assign {nq_tag, nq_op, nq_chan, nq_way, nq_block, nq_page, nq_head, nq_prio, nq_slot} =
               nq_sk_v_q ? nq_sk_q : nq_in;
    always_ff @(posedge clk) begin
        if (s_nreq_valid && !nq_sk_v_q) nq_sk_q <= nq_in;    // kept only when refused
        if (rst)            nq_sk_v_q <= 1'b0;
        else if (nq_sk_v_q) nq_sk_v_q <= !nq_ready;
        else                nq_sk_v_q <= s_nreq_valid && !nq_ready;
        if (rst)            nq_rdy_q  <= 1'b1;
        else if (nq_sk_v_q) nq_rdy_q  <= nq_ready;
        else                nq_rdy_q  <= !(s_nreq_valid && !nq_ready);
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst) assert (nq_rdy_q == !nq_sk_v_q)
            else $error("ats_nand_subsys: s_nreq_ready's copy differs from the skid register (%m)");
    end
`endif

    ats_nand_sched #(
        .DEPTH(DEPTH), .NUM_CHAN(NUM_CHAN), .NUM_WAYS(WAYS), .SLOT_W(SLOT_W), .STAMP_W(STAMP_W)
    ) u_sched (
        .clk, .rst, .reads_first,
        .s_nreq_valid(nq_valid), .s_nreq_ready(nq_ready), .s_nreq_tag(nq_tag), .s_nreq_op(nq_op),
        .s_nreq_chan(nq_chan), .s_nreq_way(nq_way), .s_nreq_block(nq_block), .s_nreq_page(nq_page),
        .s_nreq_head(nq_head), .s_nreq_prio_read(nq_prio), .s_nreq_slot(nq_slot),
        .m_ccmd_valid(ccmd_valid), .m_ccmd_ready(ccmd_ready), .m_ccmd_tag(ccmd_tag),
        .m_ccmd_op(ccmd_op), .m_ccmd_way(ccmd_way), .m_ccmd_block(ccmd_block),
        .m_ccmd_page(ccmd_page), .m_ccmd_slot(ccmd_slot),
        .s_ccpl_valid(ccpl_valid), .s_ccpl_ready(ccpl_ready), .s_ccpl_tag(ccpl_tag),
        .s_ccpl_status(ccpl_status), .s_ccpl_corrected(ccpl_corr), .s_ccpl_rel(ccpl_rel),
        .m_ncpl_valid(ncpl_valid), .m_ncpl_ready(ncpl_ready), .m_ncpl_tag(ncpl_tag),
        .m_ncpl_status(ncpl_status), .m_ncpl_corrected(ncpl_corr),
        .err_spurious
    );

    // ---- per channel: command stage, page controller ------------------------------------------------
    // merge inputs
    logic [2*NUM_CHAN-1:0]       cm_valid, cm_ready;      // completions: 2c page, 2c+1 stage BAD_REQ
    logic [2*NUM_CHAN*CPL_W-1:0] cm_data;
    logic [NUM_CHAN-1:0]         rm_valid, rm_ready, rm_last;   // read data
    logic [NUM_CHAN*RD_W-1:0]    rm_data;
    logic [NUM_CHAN-1:0]         fm_valid, fm_ready;      // fetch requests
    logic [NUM_CHAN*FET_W-1:0]   fm_data;
    // READ pages delivered on m_ndata, per channel (modulo 8)
    logic [RCNT_W-1:0]           rd_last_q [NUM_CHAN];
    logic [NUM_CHAN-1:0]         init_fin;                // channel's power-on RESETs done
    logic                        init_done_q;
    // the clock of the command stages, the merges and slices and the subsystem's own registers: clk,
    // or in a simulation with ATS_SIM_CGATE a gated copy (the gate is at the end of the module)
    logic                        clk_ss;
    logic [NUM_CHAN-1:0]         cg_ch_act;               // channel c's stage or ports are active

    always_ff @(posedge clk_ss) begin
        if (rst) init_done_q <= 1'b0;
        else     init_done_q <= &init_fin;
    end
    assign init_done = init_done_q;

    // shared Berlekamp-Massey: requests and syndromes of every channel's decoder, one result bus
    logic [NUM_CHAN-1:0]     bm_req, bm_gnt, bm_done;
    logic [NUM_CHAN*104-1:0] bm_syn;
    logic [116:0]            bm_lambda;
    logic [4:0]              bm_len;
    if (BCH_SHARED) begin : g_bm
        ats_bch_bm_arb #(.N(NUM_CHAN), .M(13), .POLY('h201B), .T(8), .SYN_REG(1'b1)) u_bm_arb (
            .clk, .rst, .req(bm_req), .syn(bm_syn), .gnt(bm_gnt), .done(bm_done),
            .lambda(bm_lambda), .len(bm_len));
    end else begin : g_no_bm
        assign bm_gnt    = '0;
        assign bm_done   = '0;
        assign bm_lambda = '0;
        assign bm_len    = '0;
        logic unused_bm;
        assign unused_bm = ^{bm_req, bm_syn};
    end

    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_chan
        // command stage: one command, loaded when it and the fetch register are free
        logic              cmd_v_q, cmd_bad_q;
        logic [7:0]        cmd_tag_q, cmd_page_q;
        logic [2:0]        cmd_op_q;            // the page controller's op (NAND_OP_*)
        logic [1:0]        cmd_way_q;
        logic [11:0]       cmd_block_q;
        logic [SLOT_W-1:0] cmd_slot_q;
        logic              fet_v_q;                      // fetch request waiting for the merge
        logic [FET_W-1:0]  fet_q;
        logic [RCNT_W-1:0] rd_cpl_q;                     // READ completions passed (modulo 8)
        logic [7:0]        in_tag, in_page;
        logic [1:0]        in_op, in_way;
        logic [11:0]       in_block;
        logic              in_bad, load;
        // page controller ports
        logic              pc_cmd_valid, pc_cmd_ready;
        logic              pc_rd_valid, pc_rd_ready, pc_rd_last;
        logic [31:0]       pc_rd_data;
        logic [7:0]        pc_rd_tag, pc_cpl_tag, pc_cpl_corr;
        logic [SLOT_W-1:0] pc_rd_slot, pc_cpl_slot;
        logic              pc_cpl_valid, pc_cpl_ready, pc_cpl_bm, pc_cpl_rel, pc_cpl_rd;
        logic [2:0]        pc_cpl_status;
        logic              cpl_hold;
        // power-on RESET of every way (ONFI: the first command after power-on), before any
        // scheduler command is taken; its completions are consumed here
        localparam int IW = $clog2(WAYS + 1);
        logic              init_q;
        logic [IW-1:0]     init_iss_q, init_cpl_q;      // RESETs issued / completed
        logic              init_iss;
        logic [7:0]        pc_tag;
        logic [2:0]        pc_op;
        logic [1:0]        pc_way;

        assign in_tag   = ccmd_tag[c*8 +: 8];
        assign in_op    = ccmd_op[c*2 +: 2];
        assign in_way   = ccmd_way[c*2 +: 2];
        assign in_block = ccmd_block[c*12 +: 12];
        assign in_page  = ccmd_page[c*8 +: 8];
        // range check (op, chan, way are checked by the scheduler; way again for safety)
        assign in_bad   = (32'(in_block) >= BLOCKS) || (32'(in_page) >= PAGES_PER_BLOCK) ||
                          (32'(in_way) >= WAYS) || (in_op == 2'd3);
        assign ccmd_ready[c] = !init_q && !cmd_v_q && !fet_v_q;
        assign load          = ccmd_valid[c] && ccmd_ready[c];

        // the page controller's command comes from the command registers only (no init_q
        // multiplexer in front of it: Fmax, docs/boards.md pnr_e17): the power-on RESETs are loaded
        // into them, way 0 at rst, way i+1 at the edge that takes way i's RESET, so while s_cmd_valid
        // is up the controller sees, cycle for cycle, what a multiplexer on init_q gave it (the idle
        // payload after the last RESET differs: the controller reads it only with a valid)
        assign init_iss     = init_q && pc_cmd_valid && pc_cmd_ready;     // a RESET taken
        assign pc_cmd_valid = cmd_v_q && !cmd_bad_q;
        assign pc_tag       = cmd_tag_q;
        assign pc_op        = cmd_op_q;
        assign pc_way       = cmd_way_q;
        assign init_fin[c]  = !init_q;

        always_ff @(posedge clk_ss) begin
            if (rst) begin
                init_q     <= 1'b1;
                init_iss_q <= '0;
                init_cpl_q <= '0;
            end else if (init_q) begin
                if (init_iss) init_iss_q <= init_iss_q + 1'b1;
                if (pc_cpl_valid) init_cpl_q <= init_cpl_q + 1'b1;
                if (pc_cpl_valid && 32'(init_cpl_q) == WAYS - 1) init_q <= 1'b0;
            end
        end

        // the next power-on RESET (way init_iss_q + 1) while one is taken and more remain: only the
        // tag and the way change (load, in the other branch, never comes while init_q is up), so
        // the acceptance of a RESET enables 10 registers, not the whole command
        wire init_more = init_iss && 32'(init_iss_q) + 1 < WAYS;
        always_ff @(posedge clk_ss) begin
            if (rst) begin
                cmd_tag_q <= 8'd0;
                cmd_way_q <= 2'd0;
            end else if (init_more) begin
                cmd_tag_q <= 8'(init_iss_q + 1'b1);
                cmd_way_q <= 2'(init_iss_q + 1'b1);
            end else if (load) begin
                cmd_tag_q <= in_tag;
                cmd_way_q <= in_way;
            end
        end
        always_ff @(posedge clk_ss) begin
            if (rst) begin                        // way 0's power-on RESET (its tag, way: above)
                cmd_bad_q   <= 1'b0;
                cmd_op_q    <= ats_nand_pkg::NAND_OP_RESET;
                cmd_block_q <= '0;
                cmd_page_q  <= '0;
                cmd_slot_q  <= '0;                // (the RESETs' slot: 0, not power-on contents)
            end else if (load) begin
                cmd_bad_q   <= in_bad;
                cmd_op_q    <= {1'b0, in_op};
                cmd_block_q <= in_block;
                cmd_page_q  <= in_page;
                cmd_slot_q  <= ccmd_slot[c*SLOT_W +: SLOT_W];
                fet_q       <= {in_tag, ccmd_slot[c*SLOT_W +: SLOT_W]};
            end
            if (rst) begin
                cmd_v_q  <= 1'b1;                 // way 0's power-on RESET
                fet_v_q  <= 1'b0;
                rd_cpl_q <= '0;
            end else begin
                if (load || init_more) begin
                    cmd_v_q <= 1'b1;
                end else if ((pc_cmd_valid && pc_cmd_ready) ||
                             (cm_valid[2*c+1] && cm_ready[2*c+1])) begin
                    cmd_v_q <= 1'b0;
                end
                if (load && !in_bad && in_op == OP_PROG) begin
                    fet_v_q <= 1'b1;
                end else if (fm_ready[c]) begin
                    fet_v_q <= 1'b0;
                end
                if (cm_valid[2*c] && cm_ready[2*c] && pc_cpl_rd) begin
                    rd_cpl_q <= rd_cpl_q + 1'b1;
                end
            end
        end

        // fetch request
        assign fm_valid[c]                = fet_v_q;
        assign fm_data[c*FET_W +: FET_W]  = fet_q;

        // stage BAD_REQ completion
        assign cm_valid[2*c+1]                    = cmd_v_q && cmd_bad_q;
        assign cm_data[(2*c+1)*CPL_W +: CPL_W]    = {1'b0, 1'b0, 8'd0, ST_BAD, cmd_tag_q};

        // page controller completion or release; a READ's completion (m_cpl_rd) waits until its
        // page has left on m_ndata (READ pages and READ completions of one channel come in the
        // same order); a release passes at once
        assign cpl_hold  = pc_cpl_rd && rd_last_q[c] == rd_cpl_q;
        assign cm_valid[2*c]                 = pc_cpl_valid && !cpl_hold && !init_q;
        assign pc_cpl_ready                  = (cm_ready[2*c] && !cpl_hold) || init_q;   // (merge ready is not qualified by valid)
        assign cm_data[2*c*CPL_W +: CPL_W]   = {pc_cpl_rel, pc_cpl_bm, pc_cpl_corr, pc_cpl_status, pc_cpl_tag};

        // read data, with the word's index in its page (a counter per channel: its pages come
        // one after the other)
        logic [WI_W-1:0] rd_wi_q;
        always_ff @(posedge clk_ss) begin
            if (rst)                            rd_wi_q <= '0;
            else if (pc_rd_valid && pc_rd_ready) rd_wi_q <= pc_rd_last ? '0 : rd_wi_q + 1'b1;
        end
        assign rm_valid[c]              = pc_rd_valid;
        assign pc_rd_ready              = rm_ready[c];
        assign rm_last[c]               = pc_rd_last;
        assign rm_data[c*RD_W +: RD_W]  = {pc_rd_data, pc_rd_tag, pc_rd_slot, rd_wi_q};

        ats_nand_page #(
            .WAYS(WAYS), .TAG_W(8), .SLOT_W(SLOT_W), .PAGE_BYTES(PAGE_BYTES),
            .SPARE_BYTES(SPARE_BYTES), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS),
            .ERASED_THR(ERASED_THR), .BAD_MARK_THR(BAD_MARK_THR), .DEBUG_OPS(0),
            .T_WP(T_WP), .T_WH(T_WH), .T_RP(T_RP), .T_REH(T_REH), .T_WB(T_WB), .T_WHR(T_WHR),
            .T_ADL(T_ADL), .T_RR(T_RR), .T_RHW(T_RHW), .T_CS(T_CS), .BCH_EXT_BM(BCH_SHARED)
        ) u_page (
            .clk(clk_pg), .rst,
            .s_cmd_valid(pc_cmd_valid), .s_cmd_ready(pc_cmd_ready), .s_cmd_tag(pc_tag),
            .s_cmd_op(pc_op), .s_cmd_way(pc_way[WAY_W-1:0]),
            .s_cmd_block(cmd_block_q), .s_cmd_page(cmd_page_q),
            .s_cmd_slot(cmd_slot_q),
            .s_wdata_valid(s_ndata_valid[c]), .s_wdata_ready(s_ndata_ready[c]),
            .s_wdata_data(s_ndata_data[c*32 +: 32]), .s_wdata_last(s_ndata_last[c]),
            .m_rdata_valid(pc_rd_valid), .m_rdata_ready(pc_rd_ready), .m_rdata_data(pc_rd_data),
            .m_rdata_tag(pc_rd_tag), .m_rdata_slot(pc_rd_slot), .m_rdata_last(pc_rd_last),
            .m_cpl_valid(pc_cpl_valid), .m_cpl_ready(pc_cpl_ready), .m_cpl_tag(pc_cpl_tag),
            .m_cpl_slot(pc_cpl_slot), .m_cpl_status(pc_cpl_status), .m_cpl_corrected(pc_cpl_corr),
            .m_cpl_bad_mark(pc_cpl_bm), .m_cpl_rel(pc_cpl_rel), .m_cpl_rd(pc_cpl_rd),
            .nand_ce_n(nand_ce_n[c*WAYS +: WAYS]), .nand_cle(nand_cle[c]), .nand_ale(nand_ale[c]),
            .nand_we_n(nand_we_n[c]), .nand_re_n(nand_re_n[c]), .nand_wp_n(nand_wp_n[c]),
            .nand_dq_o(nand_dq_o[c*8 +: 8]), .nand_dq_i(nand_dq_i[c*8 +: 8]),
            .nand_rb_n(nand_rb_n[c*WAYS +: WAYS]),
            // (the decoder asks for BM only while it decodes a READ, i.e. while this controller
            // holds a command: its clock runs then, so the gate needs no watch on these inputs)
            .bm_req(bm_req[c]), .bm_syn(bm_syn[c*104 +: 104]), .bm_gnt(bm_gnt[c]),
            .bm_done(bm_done[c]), .bm_lambda, .bm_len
        );

        // Simulation-only clock gate of the page controller (ATS_SIM_CGATE; rtl/common/ats_sim_cgate.sv,
        // rtl/core/README.md "Simulation cost"): it runs while it holds a command (taken, completion
        // not yet taken), while a valid is up on one of its ports, while any of its inputs changes
        // (the dies' R/B# and DQ included) and for HOLD edges after; an idle controller is a fixed
        // point (no free-running state), so the gated build is cycle-exact. The scheduler gates itself
        // (all but its slot counter), the rest of the subsystem has the gate at the end (clk_ss).
        logic        clk_pg;
        logic [15:0] pg_out_q;                            // commands taken, completion not yet taken
        always_ff @(posedge clk_ss) begin                 // (a READ's release is not its completion)
            pg_out_q <= rst ? '0 : pg_out_q + 16'(pc_cmd_valid && pc_cmd_ready) -
                                   16'(pc_cpl_valid && pc_cpl_ready && !pc_cpl_rel);
        end
        // the page controller's inputs (its s_cmd fields as connected below), one list for width and value;
        // the dies' DQ and R/B# are compared apart (pin_chg, into act): the die models drive them from
        // their own processes, and in the watch vector they made Verilator build the whole vector at
        // every pass of its trigger loop instead of once a cycle (bench/sim/README.md "Instruction counts")
`define ATS_CG_PAGE_IN {pc_cmd_valid, pc_tag, pc_op, pc_way, cmd_block_q, \
        cmd_page_q, cmd_slot_q, s_ndata_valid[c], s_ndata_data[c*32 +: 32], s_ndata_last[c], \
        pc_rd_ready, pc_cpl_ready}
        logic pin_chg;
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_PAGE_PINQ
`endif
`endif
`ifdef ATS_PAGE_PINQ
        logic [7+WAYS:0] pin_q;     // the pins at the last falling edge, as the gate's own watch_q
        always_ff @(negedge clk) pin_q <= {nand_dq_i[c*8 +: 8], nand_rb_n[c*WAYS +: WAYS]};
        assign pin_chg = {nand_dq_i[c*8 +: 8], nand_rb_n[c*WAYS +: WAYS]} != pin_q;
`else
        assign pin_chg = 1'b0;
`endif
`undef ATS_PAGE_PINQ
        // ATS_SIM_SKIP (sim/soc/README.md "Cycle skipping"): the commands it holds only wait for R/B#
        // (pg_wait_q): every way idle or in its busy wait past tWB with R/B# low, and nothing else runs
        // (bus, engine, request, data-in, read-data and completion stages, the write half, the read
        // half's fill and decode job). Then no register changes at an edge until R/B# rises or a port
        // moves (act, watch), so the gate may close (its HOLD after the last activity settles the rest:
        // the command window, T_CMDWIN 32 edges, and the registered flags). It opens again PG_END_NS
        // before the earliest array end of any die (ats_nand_next_busy_end(), the die models' report;
        // the harness's jumps end earlier still), so R/B# rises with the clock on. The terms are
        // registers of the controller, read by hierarchical reference (simulation only).
        logic pg_wait_q, pg_settle;
`ifdef ATS_SIM_CGATE
`ifdef ATS_SIM_SKIP
`ifndef SYNTHESIS
`define ATS_PAGE_WAIT
`endif
`endif
`endif
`ifdef ATS_PAGE_WAIT
        import "DPI-C" function real ats_nand_next_busy_end();
        localparam real PG_END_NS = 80.0;
        logic pg_wait;
        always_comb begin
            pg_wait = u_page.wr_idle && !u_page.bad_v_q && !u_page.chs_v_q && !u_page.cpl_v_q &&
                      u_page.raw_idle && !u_page.u_rd.dj_v_q && !u_page.u_rd.full_q && !u_page.u_rd.fl_mid_q &&
                      u_page.u_chan.bus_free && !u_page.u_chan.pend_v_q && !u_page.u_chan.cpl_v_q &&
                      !u_page.u_chan.uop_v_q && !u_page.u_chan.eng_busy_q && !u_page.u_chan.din_v_q &&
                      !u_page.u_chan.rd_v_q;
            if (pg_wait)                           // (the ways only while the rest waits)
            for (int w = 0; w < WAYS; w++) begin   // W_IDLE 0, W_BUSY 1 (ats_nand_chan way_state_e)
                if (!(u_page.u_chan.way_st_q[w] == 0 || (u_page.u_chan.way_st_q[w] == 1 &&
                      u_page.u_chan.way_wb_q[w] == '0 && !nand_rb_n[c*WAYS + w])))
                    pg_wait = 1'b0;
            end
        end
        // pg_mgn_q: the wait has two cycles more than PG_END_NS left (pg_wait_q stays up at the next
        // falling edge if the controller keeps waiting)
        logic pg_mgn_q;
        always @(negedge clk) begin : p_wait
            real be;
            if (pg_wait && pg_out_q != '0) begin
                be = ats_nand_next_busy_end();
                pg_wait_q <= be >= 0.0 && be - $realtime > PG_END_NS;
                pg_mgn_q  <= be >= 0.0 && be - $realtime > PG_END_NS + 20.0;
            end else begin
                pg_wait_q <= 1'b0;
                pg_mgn_q  <= 1'b0;
            end
        end
        // Settled (the gate's `settle`: its HOLD ends at once): the controller is in the wait state
        // above (pg_wait, on the registers as they are now) or holds no command and is idle, and
        // the chan's command window is not counting (the one register that moves in that state, with
        // the bus free); then its registers are a fixed point while its inputs keep their values, so
        // the edges the HOLD would still give change nothing (checked register by register with
        // ATS_SETTLE_CHECK: sim/soc/README.md "Cycle skipping"). While it holds a command, pg_wait_q
        // and pg_mgn_q from the falling edge before: the gate's act is low only with pg_wait_q.
        assign pg_settle = pg_wait && !u_page.u_chan.g_cmdwin.cmdwin_nz_q &&
                           (pg_out_q == '0 || (pg_wait_q && pg_mgn_q));
`else
        assign pg_wait_q = 1'b0;
        assign pg_settle = 1'b0;
`endif
`undef ATS_PAGE_WAIT
`ifdef ATS_SETTLE_CHECK
        // the check build: the gate keeps its HOLD; the harness compares the controller's state across
        // every edge the settle would have left out (pg_sfire_q: it would have closed at this falling edge)
        logic pg_sfire_q /* verilator public_flat_rd */;     // (read by the harness only)
        always @(negedge clk)
            pg_sfire_q <= pg_settle && !u_cg_page.keep_on && !rst && !pg_act && (`ATS_CG_PAGE_IN == u_cg_page.watch_q);
        logic pg_settle_g;
        assign pg_settle_g = 1'b0;
`else
        logic pg_settle_g;
        assign pg_settle_g = pg_settle;
`endif
        logic pg_act;
        assign pg_act = init_q || (pg_out_q != '0 && !pg_wait_q) || pc_cmd_valid || pc_rd_valid || pc_cpl_valid ||
                        s_ndata_valid[c] || pin_chg;
        ats_sim_cgate #(.W($bits(`ATS_CG_PAGE_IN)), .HOLD(64), .ID(5 + c), .FALL(1)) u_cg_page (
            .clk, .rst, .gclk(clk_pg), .watch(`ATS_CG_PAGE_IN), .act(pg_act), .settle(pg_settle_g));
`undef ATS_CG_PAGE_IN

        // the subsystem's gate (below): this channel's command stage, fetch request, power-on RESETs or
        // a valid of the page controller toward the merges
        assign cg_ch_act[c] = init_q || cmd_v_q || fet_v_q || pc_rd_valid || pc_cpl_valid;

        // the completion's slot is not forwarded (the scheduler's completion has none)
        logic unused_pc;
        assign unused_pc = ^{pc_cpl_slot, pc_way};
    end

    // ---- fetch requests: round robin over the channels, registered --------------------------------------
    logic [CH_W-1:0]  fet_idx;
    logic [FET_W-1:0] fet_out;
    logic             fet_last_unused;

    ats_nand_ssx_merge #(.N(NUM_CHAN), .W(FET_W)) u_fetch_merge (
        .clk(clk_ss), .rst,
        .s_valid(fm_valid), .s_ready(fm_ready), .s_data(fm_data), .s_last({NUM_CHAN{1'b1}}),
        .m_valid(m_nfetch_valid), .m_ready(m_nfetch_ready), .m_data(fet_out),
        .m_last(fet_last_unused), .m_idx(fet_idx)
    );
    assign m_nfetch_chan = 3'(fet_idx);
    assign {m_nfetch_tag, m_nfetch_slot} = fet_out;

    // ---- read data: round robin word by word (a channel's decoder makes about a byte a cycle, so a
    // page locked on the merge would hold it ~5,000 cycles for 1,029 words: four channels' pages
    // would need more than the merge's time), then a slice -----------------------------------------
    logic             rd_m_valid, rd_m_ready, rd_m_last;
    logic [RD_W-1:0]  rd_m_data;
    logic [CH_W-1:0]  rd_m_idx;
    logic [RD_W+3:0]  rd_out;   // {chan, last, data, tag, slot, widx}
    logic [WI_W-1:0]  rd_widx;

    ats_nand_ssx_merge #(.N(NUM_CHAN), .W(RD_W)) u_rdata_merge (
        .clk(clk_ss), .rst,
        .s_valid(rm_valid), .s_ready(rm_ready), .s_data(rm_data), .s_last(rm_last),
        .m_valid(rd_m_valid), .m_ready(rd_m_ready), .m_data(rd_m_data), .m_last(rd_m_last),
        .m_idx(rd_m_idx)
    );
    ats_nand_ssx_slice #(.W(RD_W + 4)) u_rdata_slice (
        .clk(clk_ss), .rst,
        .s_valid(rd_m_valid), .s_ready(rd_m_ready), .s_data({3'(rd_m_idx), rd_m_last, rd_m_data}),
        .m_valid(m_ndata_valid), .m_ready(m_ndata_ready), .m_data(rd_out)
    );
    assign {m_ndata_chan, m_ndata_last, m_ndata_data, m_ndata_tag, m_ndata_slot, rd_widx} = rd_out;
    assign m_ndata_widx = 16'(rd_widx);

    always_ff @(posedge clk_ss) begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            if (rst) begin
                rd_last_q[c] <= '0;
            end else if (m_ndata_valid && m_ndata_ready && m_ndata_last && 32'(m_ndata_chan) == c) begin
                rd_last_q[c] <= rd_last_q[c] + 1'b1;
            end
        end
    end

    // ---- completions: round robin into the scheduler ---------------------------------------------------
    logic [CPL_W-1:0]  cpl_out;
    logic              cpl_last_unused;
    logic [$clog2(2*NUM_CHAN)-1:0] cpl_idx_unused;

    // inputs registered (IN_REG): a channel's completion handshake never waits on another channel's
    // valid (the pick of 2 x NUM_CHAN inputs was the core's critical path, across channels)
    ats_nand_ssx_merge #(.N(2 * NUM_CHAN), .W(CPL_W), .IN_REG(1)) u_cpl_merge (
        .clk(clk_ss), .rst,
        .s_valid(cm_valid), .s_ready(cm_ready), .s_data(cm_data), .s_last({2*NUM_CHAN{1'b1}}),
        .m_valid(ccpl_valid), .m_ready(ccpl_ready), .m_data(cpl_out), .m_last(cpl_last_unused),
        .m_idx(cpl_idx_unused)
    );
    assign {ccpl_rel, ccpl_bm, ccpl_corr, ccpl_status, ccpl_tag} = cpl_out;

    // bad_mark by tag: written when the scheduler takes the channel completion (not a release), read
    // when its completion leaves the scheduler (a tag is outstanding, so unique, in between)
    logic [255:0] bm_q;
    always_ff @(posedge clk_ss) begin
        if (ccpl_valid && ccpl_ready && !ccpl_rel) bm_q[ccpl_tag] <= ccpl_bm;
    end

    // ---- completions out: register slice, bad_mark added ----------------------------------------------
    logic [CPL_W-2:0] ncpl_out;                       // (no rel: releases never leave the scheduler)
    ats_nand_ssx_slice #(.W(CPL_W - 1)) u_ncpl_slice (
        .clk(clk_ss), .rst,
        .s_valid(ncpl_valid), .s_ready(ncpl_ready),
        .s_data({bm_q[ncpl_tag] && ncpl_status != ST_BAD, ncpl_corr, ncpl_status, ncpl_tag}),
        .m_valid(m_ncpl_valid), .m_ready(m_ncpl_ready), .m_data(ncpl_out)
    );
    assign {m_ncpl_bad_mark, m_ncpl_corrected, m_ncpl_status, m_ncpl_tag} = ncpl_out;

    // ---- simulation-only clock gate of the command stages, merges, slices and own registers ----------
    // (ATS_SIM_CGATE, not SYNTHESIS; rtl/common/ats_sim_cgate.sv, README_subsys.md "Simulation clock gates")
    // Each of these registers changes only with a valid on its stream (a command from the scheduler,
    // a fetch request, read data or a completion of a page controller or a command stage, a beat in a
    // merge, a slice or a merge's input buffer, the scheduler's m_ncpl) or during the power-on RESETs
    // (init_done one edge after them); payload registers loaded without a valid are read only with
    // one. So the clock runs while one of those is up (HOLD edges more) and nothing is watched: a
    // stopped clock skips only edges at which every register would keep its value. The scheduler and
    // the page controllers have gates of their own.
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_SUBSYS_CGATE
`endif
`endif
`ifdef ATS_SUBSYS_CGATE
    logic cg_act;
    assign cg_act = !init_done_q || (|cg_ch_act) || (|ccmd_valid) || (|~cm_ready) || m_nfetch_valid ||
                    rd_m_valid || m_ndata_valid || ccpl_valid || ncpl_valid || m_ncpl_valid;
    ats_sim_cgate #(.W(1), .HOLD(4), .ID(14), .FALL(1)) u_cg_ssx (
        .clk, .rst, .act(cg_act), .watch(1'b0), .gclk(clk_ss));
`else
    assign clk_ss = clk;
    logic unused_cg;
    assign unused_cg = ^cg_ch_act;
`endif
`undef ATS_SUBSYS_CGATE

    logic unused;
    assign unused = ^{fet_last_unused, cpl_last_unused, cpl_idx_unused};
endmodule

`resetall
