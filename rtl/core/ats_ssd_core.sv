// SPDX-License-Identifier: Apache-2.0
// ats_ssd_core: the device datapath in one top: ordered command queue (ats_cmdq) -> write buffer
// (ats_wbuf) -> backend (ats_backend) -> remap engine (ats_remap_engine, SpinalHDL) and NAND
// subsystem (ats_nand_subsys: scheduler, ONFI channels, BCH, spare metadata) -> NAND pins.
// Ports: the host command and completion streams (docs/architecture.md sections 1, 2), the write
// buffer's host-memory ports (section 9), the firmware's block supply (s_free, m_bad) and valid-page
// counts, status and counters, and the NAND pins (section 5). One clock. Default configuration
// 4 channels x 2 ways; the remap engine preset's widths come in as REMAP_* parameters (its
// params.json). Theory: rtl/core/README.md; on-flash format and recovery: docs/persistence.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_ssd_core #(
    parameter int NUM_CHAN        = 4,      // NAND channels (1..8)
    parameter int WAYS            = 2,      // dies per channel (1, 2, 4)
    parameter int PAGE_BYTES      = 4096,   // data bytes per page (multiple of 512)
    parameter int SPARE_BYTES     = 224,    // spare bytes per page (>= 37 + 13 x sectors)
    parameter int PAGES_PER_BLOCK = 64,
    parameter int BLOCKS          = 128,    // blocks per die
    parameter int NUM_LBAS        = 16384,  // logical pages exported (<= the remap MAP_DEPTH)
    parameter int NUM_TX          = 32,     // transactions (<= the remap NUM_TX)
    parameter int QDEPTH          = 32,     // command queue entries
    parameter int NUM_SLOTS       = 16,     // write buffer page slots
    parameter int THRESH_PCT      = 90,
    parameter int WIN             = 8,      // backend request table (pages in flight)
    parameter int RD_SLOTS        = 32,     // backend read slots (host read misses in flight; 32 = QDEPTH)
    parameter int SCHED_DEPTH     = 32,     // NAND scheduler entries (>= RD_SLOTS: the reads all reach the dies)
    parameter int PTXQ            = 1,      // write buffer: pending commits of distinct txids (1..8, <= NUM_TX)
    parameter int REMAP_LPN_W     = 32,     // remap engine port widths (params.json of its preset)
    parameter int REMAP_PPN_W     = 16,
    parameter int REMAP_TXID_W    = 6,
    parameter int REMAP_CNT_W     = 7,
    // DiffTx's S-Log (docs/architecture.md section 11; rtl/backend/README_slog.md): SLOG = 1 builds the
    // backend's S-Log unit and read merge; FRAG_SLOTS > 0 (needs SLOG = 1) the write buffer's FRAG
    // slots that make S-Log records. Defaults: neither (the build without the S-Log)
    parameter int SLOG            = 0,
    parameter int SLOG_TX         = 16,     // txids of S-Log records 1..SLOG_TX (>= NUM_TX when FRAG_SLOTS > 0)
    parameter int SLOG_LPNS       = 256,    // backend S-Log index entries
    parameter int SLOG_WAYS       = 4,
    parameter int SLOG_FRAGS      = 4,      // fragments per LPN
    parameter int SLOG_TXFRAGS    = 64,     // fragments of one record (backend and write buffer)
    parameter int SLOG_TXFULL     = 64,     // full pages of one record (backend and write buffer), 1..1023
    parameter int SLOG_CACHE      = 8,      // log pages cached for the read merge (0 or a power of two)
    parameter int SLOG_PPNS       = 256,    // LPGN -> PPN table entries
    parameter int FRAG_SLOTS      = 0,      // write buffer FRAG slots: 0 or a power of two 2..64
    parameter int SLOG_RIF        = 1,      // S-Log records in flight together: the write buffer's SLOG_RIF, the backend's SLOG_RECS (1..8)
    parameter int SLOG_PACK       = 0,      // the backend's SLOG_PACK: S-Log records packed into shared log pages (rtl/backend/README.md "Packing")
    parameter int SLOG_SEALT      = 0,      // slog_sealt's default: idle cycles an open log page waits for the next record
    // ONFI timings in cycles (ats_nand_chan), defaults for 125 MHz against ONFI mode 5
    parameter int T_WP = 2, parameter int T_WH = 2, parameter int T_RP = 2, parameter int T_REH = 2,
    parameter int T_WB = 20, parameter int T_WHR = 12, parameter int T_ADL = 14, parameter int T_RR = 4,
    parameter int T_RHW = 20, parameter int T_CS = 4
) (
    input  wire logic        clk,
    input  wire logic        rst,              // synchronous, active high
    // host commands and completions
    input  wire logic        s_cmd_valid,
    output wire logic        s_cmd_ready,
    input  wire logic [3:0]  s_cmd_op,
    input  wire logic [7:0]  s_cmd_tag,
    input  wire logic [47:0] s_cmd_lba,
    input  wire logic [15:0] s_cmd_nlb,
    input  wire logic [5:0]  s_cmd_txid,
    input  wire logic [3:0]  s_cmd_flags,
    input  wire logic [1:0]  s_cmd_attr,
    input  wire logic [1:0]  s_cmd_prio,
    input  wire logic [31:0] s_cmd_dptr,
    input  wire logic [31:0] s_cmd_aux,
    output wire logic        m_cpl_valid,
    input  wire logic        m_cpl_ready,
    output wire logic [7:0]  m_cpl_tag,
    output wire logic [7:0]  m_cpl_status,
    output wire logic [31:0] m_cpl_result,
    // host memory
    output wire logic        m_hrd_valid,
    input  wire logic        m_hrd_ready,
    output wire logic [31:0] m_hrd_addr,
    output wire logic [15:0] m_hrd_len,
    input  wire logic        s_hrd_valid,
    output wire logic        s_hrd_ready,
    input  wire logic [31:0] s_hrd_data,
    input  wire logic        s_hrd_last,
    output wire logic        m_hwr_valid,
    input  wire logic        m_hwr_ready,
    output wire logic [31:0] m_hwr_addr,
    output wire logic [31:0] m_hwr_data,
    output wire logic        m_hwr_last,
    // firmware: erased blocks in, grown bad blocks out, valid-page counts
    input  wire logic        s_free_valid,
    output wire logic        s_free_ready,
    output wire logic [NUM_CHAN*WAYS-1:0] blk_need,  // bit d = die c*WAYS+w has no next block
    input  wire logic [2:0]  s_free_chan,
    input  wire logic [1:0]  s_free_way,
    input  wire logic [11:0] s_free_block,
    input  wire logic [15:0] slog_thr = 16'd0, // S-Log threshold in bytes (CSR SLOG_THR; no effect while FRAG_SLOTS = 0)
    input  wire logic [15:0] slog_sealt = 16'(SLOG_SEALT), // the backend's seal time (CSR SLOG_SEALT; SLOG_PACK 1 only)
    output wire logic        m_bad_valid,
    input  wire logic        m_bad_ready,
    output wire logic [2:0]  m_bad_chan,
    output wire logic [1:0]  m_bad_way,
    output wire logic [11:0] m_bad_block,
    input  wire logic [14:0] vc_addr,
    output wire logic [8:0]  vc_data,
    // checkpoint support (rtl/backend/README.md "Checkpoint support")
    input  wire logic        wb_hold,          // hold new write-back requests at the backend
    input  wire logic        no_space,         // firmware: no space, writes complete NO_SPACE (rtl/wbuf/README.md "No space")
    output wire logic [63:0] cpl_seq,          // every request with a lower seq has completed
    input  wire logic [5:0]  txs_addr,
    output wire logic        txs_open,         // txid txs_addr has pages on flash and no commit / abort yet
    output wire logic [63:0] txs_seq,          // seq of its first page
    // firmware port (rtl/backend/README.md "Firmware port")
    input  wire logic        s_fw_valid,
    output wire logic        s_fw_ready,
    input  wire logic [2:0]  s_fw_op,
    input  wire logic [2:0]  s_fw_chan,
    input  wire logic [1:0]  s_fw_way,
    input  wire logic [11:0] s_fw_block,
    input  wire logic [7:0]  s_fw_page,
    input  wire logic [3:0]  s_fw_rop,
    input  wire logic [5:0]  s_fw_txid,
    input  wire logic [31:0] s_fw_lpn,
    input  wire logic [REMAP_PPN_W-1:0] s_fw_ppn,
    input  wire logic [63:0] s_fw_seq,
    input  wire logic [31:0] s_fw_epoch,
    input  wire logic [7:0]  s_fw_flags,
    input  wire logic [1:0]  s_fw_kind,
    input  wire logic        s_fwd_valid,
    output wire logic        s_fwd_ready,
    input  wire logic [31:0] s_fwd_data,
    input  wire logic        s_fwd_last,
    output wire logic        m_fwr_valid,
    input  wire logic        m_fwr_ready,
    output wire logic [7:0]  m_fwr_status,
    output wire logic [31:0] m_fwr_data,
    output wire logic        m_fwr_last,
    output wire logic [REMAP_PPN_W-1:0] m_fwr_ppn,
    output wire logic        m_fwr_mapped,
    // status
    input  wire logic        pwr_fail,         // power failing: the write buffer freezes
    output wire logic        init_done,        // remap tables cleared and every die reset
    output wire logic        no_free_block,
    output wire logic [63:0] next_seq,
    output wire logic [31:0] cnt_host_pages,   // pages written by the host into the buffer
    output wire logic [31:0] cnt_coalesced,
    output wire logic [31:0] cnt_nand_prog,
    output wire logic [31:0] cnt_nand_read,
    output wire logic [31:0] cnt_ecc_corr,
    output wire logic [31:0] cnt_prog_fail,
    output wire logic [31:0] cnt_read_err,
    output wire logic [31:0] cnt_proto_err,    // backend + write buffer protocol errors
    output wire logic [31:0] cnt_erases,       // NAND ERASEs (firmware port)
    output wire logic [31:0] cnt_relocs,       // GC relocations applied
    output wire logic        err_spurious,     // command queue or NAND scheduler
    // NAND pins
    output wire logic [NUM_CHAN*WAYS-1:0] nand_ce_n,
    output wire logic [NUM_CHAN-1:0]      nand_cle,
    output wire logic [NUM_CHAN-1:0]      nand_ale,
    output wire logic [NUM_CHAN-1:0]      nand_we_n,
    output wire logic [NUM_CHAN-1:0]      nand_re_n,
    output wire logic [NUM_CHAN-1:0]      nand_wp_n,
    output wire logic [NUM_CHAN*8-1:0]    nand_dq_o,
    input  wire logic [NUM_CHAN*8-1:0]    nand_dq_i,
    input  wire logic [NUM_CHAN*WAYS-1:0] nand_rb_n
);
    localparam int PW_ = REMAP_PPN_W;
    if (NUM_TX > (1 << REMAP_TXID_W) - 1) begin : g_chk_tx
        $fatal(1, "ats_ssd_core: NUM_TX exceeds the remap preset (%m)");
    end
    if (PTXQ < 1 || PTXQ > 8 || PTXQ > NUM_TX) begin : g_chk_ptxq
        $fatal(1, "ats_ssd_core: PTXQ must be in 1..8 and at most NUM_TX (%m)");
    end
    // the write buffer's S-Log records go to the backend's S-Log unit: its txids must cover them
    // (SLOG_TXFRAGS and SLOG_TXFULL are each one parameter of both blocks, equal by construction)
    if (SLOG != 0 && SLOG != 1) begin : g_chk_slog
        $fatal(1, "ats_ssd_core: SLOG must be 0 or 1 (%m)");
    end
    if (FRAG_SLOTS > 0 && SLOG == 0) begin : g_chk_frag_slog
        $fatal(1, "ats_ssd_core: FRAG_SLOTS > 0 needs SLOG = 1 (the backend's S-Log unit) (%m)");
    end
    if (FRAG_SLOTS > 0 && NUM_TX > SLOG_TX) begin : g_chk_slog_tx
        $fatal(1, "ats_ssd_core: FRAG_SLOTS > 0 needs NUM_TX <= SLOG_TX (%m)");
    end

    // ---- command queue <-> write buffer
    logic        disp_valid, disp_ready;
    logic [3:0]  disp_op, disp_flags;
    logic [7:0]  disp_tag;
    logic [47:0] disp_lba;
    logic [15:0] disp_nlb, disp_epoch;
    logic [5:0]  disp_txid;
    logic [1:0]  disp_attr, disp_prio;
    logic [31:0] disp_dptr, disp_aux;
    logic        done_valid, done_ready;
    logic [7:0]  done_tag, done_status;
    logic [31:0] done_result;
    logic [15:0] q_epoch;
    logic [$clog2(QDEPTH+1)-1:0] q_occ;
    logic        q_spur;

    // per-block clocks: simulation-only clock gates (ats_sim_cgate, ATS_SIM_CGATE), else clk itself
    logic clk_cmdq, clk_wbuf, clk_be, clk_remap;
    logic wb_busy;

    ats_cmdq #(.DEPTH(QDEPTH), .NUM_LBA(49'(NUM_LBAS)), .NUM_TX(NUM_TX)) u_cmdq (
        .clk(clk_cmdq), .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_op, .s_cmd_tag, .s_cmd_lba, .s_cmd_nlb, .s_cmd_txid,
        .s_cmd_flags, .s_cmd_attr, .s_cmd_prio, .s_cmd_dptr, .s_cmd_aux,
        .m_disp_valid(disp_valid), .m_disp_ready(disp_ready), .m_disp_op(disp_op), .m_disp_tag(disp_tag),
        .m_disp_lba(disp_lba), .m_disp_nlb(disp_nlb), .m_disp_txid(disp_txid), .m_disp_flags(disp_flags),
        .m_disp_attr(disp_attr), .m_disp_prio(disp_prio), .m_disp_dptr(disp_dptr), .m_disp_aux(disp_aux),
        .m_disp_epoch(disp_epoch),
        .s_done_valid(done_valid), .s_done_ready(done_ready), .s_done_tag(done_tag),
        .s_done_status(done_status), .s_done_result(done_result),
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_status, .m_cpl_result,
        .epoch(q_epoch), .occupancy(q_occ), .err_spurious(q_spur)
    );

    // ---- write buffer <-> backend
    logic        wb_valid, wb_ready, wb_op, wb_fua;
    logic [1:0]  wb_rec;
    logic        wb_slog;          // an S-Log commit record (0 while the wbuf's FRAG_SLOTS is 0)
    logic [31:0] wb_cnt_slog_err, be_slog_lpgn;
    logic [7:0]  wb_slot, wb_tag;
    logic [31:0] wb_lpn;
    logic [5:0]  wb_txid;
    logic [15:0] wb_epoch;
    logic [1:0]  wb_kind;
    logic        wbd_valid, wbd_ready, wbd_last;
    logic [31:0] wbd_data;
    logic        wbc_valid, wbc_ready;
    logic [7:0]  wbc_tag, wbc_status;
    logic [15:0] wbc_ppn;
    logic        rd_valid, rd_ready;
    logic [31:0] rd_lpn;
    logic [5:0]  rd_txid;
    logic [7:0]  rd_tag;
    logic        rdd_valid, rdd_ready, rdd_last;
    logic [31:0] rdd_data;
    logic [7:0]  rdd_status, rdd_tag;
    logic        dump_done, dump_short;
    logic [31:0] wb_cnt_wb_pages, wb_cnt_unmaps, wb_cnt_hits, wb_cnt_misses, wb_cnt_fail, wb_cnt_proto;
    logic [47:0] wb_cnt_bytes;
    logic [7:0]  wb_dirty;

    ats_wbuf #(.NUM_SLOTS(NUM_SLOTS), .PAGE_BYTES(PAGE_BYTES), .NUM_LBAS(NUM_LBAS),
               .THRESH_PCT(THRESH_PCT), .NUM_WAITERS(8), .PLP(1'b0), .PLP_BUDGET_PAGES(0),
               .TX(1'b1), .NUM_TX(NUM_TX), .PTXQ(PTXQ), .FRAG_SLOTS(FRAG_SLOTS), .SLOG_TXFRAGS(SLOG_TXFRAGS),
               .SLOG_TXFULL(SLOG_TXFULL), .SLOG_RIF(SLOG_RIF),
               // a read id and a CPL entry per single-page READ, both taken in ring order: four
               // times the backend's read ring from 32 slots (at twice, an id still outstanding
               // after 2 x RD_SLOTS later reads, the NAND's tail, stops the ring: issue 37)
               .MISS_Q((RD_SLOTS >= 32) ? 128 : (RD_SLOTS >= 16) ? 64 : 32)) u_wbuf (
        .clk(clk_wbuf), .rst,
        .s_disp_valid(disp_valid), .s_disp_ready(disp_ready), .s_disp_op(disp_op), .s_disp_tag(disp_tag),
        .s_disp_lba(disp_lba), .s_disp_nlb(disp_nlb), .s_disp_txid(disp_txid), .s_disp_flags(disp_flags),
        .s_disp_attr(disp_attr), .s_disp_prio(disp_prio), .s_disp_dptr(disp_dptr), .s_disp_aux(disp_aux),
        .s_disp_epoch(disp_epoch),
        .m_done_valid(done_valid), .m_done_ready(done_ready), .m_done_tag(done_tag),
        .m_done_status(done_status), .m_done_result(done_result),
        .m_hrd_valid, .m_hrd_ready, .m_hrd_addr, .m_hrd_len, .s_hrd_valid, .s_hrd_ready, .s_hrd_data,
        .s_hrd_last, .m_hwr_valid, .m_hwr_ready, .m_hwr_addr, .m_hwr_data, .m_hwr_last,
        .m_wb_valid(wb_valid), .m_wb_ready(wb_ready), .m_wb_op(wb_op), .m_wb_rec(wb_rec), .m_wb_slog(wb_slog), .m_wb_slot(wb_slot),
        .m_wb_lpn(wb_lpn), .m_wb_txid(wb_txid), .m_wb_epoch(wb_epoch), .m_wb_kind(wb_kind),
        .m_wb_fua(wb_fua), .m_wb_tag(wb_tag),
        .m_wbd_valid(wbd_valid), .m_wbd_ready(wbd_ready), .m_wbd_data(wbd_data), .m_wbd_last(wbd_last),
        .s_wbc_valid(wbc_valid), .s_wbc_ready(wbc_ready), .s_wbc_tag(wbc_tag), .s_wbc_status(wbc_status),
        .s_wbc_ppn(wbc_ppn),
        .m_rd_valid(rd_valid), .m_rd_ready(rd_ready), .m_rd_lpn(rd_lpn), .m_rd_txid(rd_txid), .m_rd_tag(rd_tag),
        .s_rdd_valid(rdd_valid), .s_rdd_ready(rdd_ready), .s_rdd_data(rdd_data), .s_rdd_last(rdd_last),
        .s_rdd_status(rdd_status), .s_rdd_tag(rdd_tag),
        .pwr_fail, .plp_budget(16'd0), .no_space, .dump_done, .dump_short, .slog_thr,
        .cnt_host_pages, .cnt_coalesced, .cnt_wb_pages(wb_cnt_wb_pages), .cnt_wb_unmaps(wb_cnt_unmaps),
        .cnt_media_bytes(wb_cnt_bytes), .cnt_read_hits(wb_cnt_hits), .cnt_read_misses(wb_cnt_misses),
        .cnt_wb_fail(wb_cnt_fail), .cnt_proto_err(wb_cnt_proto), .cnt_slog_err(wb_cnt_slog_err), .dirty_pages(wb_dirty), .busy(wb_busy)
    );

    // ---- backend <-> remap engine, NAND subsystem
    logic                 rq_valid, rq_ready;
    logic [3:0]           rq_op;
    logic [7:0]           rq_tag;
    logic [5:0]           rq_txid;
    logic [31:0]          rq_lpn;
    logic [PW_-1:0]       rq_ppn;
    logic                 rs_valid, rs_ready, rs_mapped, rs_from_tx;
    logic [7:0]           rs_tag;
    logic [3:0]           rs_status;
    logic [PW_-1:0]       rs_ppn;
    logic [REMAP_CNT_W-1:0] rs_count;
    // The remap engine's responses reach the backend through one register stage (the engine's m_rsp
    // merges its walk register and its FIFO head combinationally: on the board that merge and the
    // backend's response logic were one path, pnr_e16's worst, docs/boards.md). The backend is
    // always ready for a response (its s_rsp_ready is a constant 1, asserted below), so the stage
    // needs no backpressure: every response reaches the backend exactly one cycle later.
    logic                 rsq_valid_q, rsq_mapped_q, rsq_from_tx_q, be_rs_ready;
    logic [7:0]           rsq_tag_q;
    logic [3:0]           rsq_status_q;
    logic [PW_-1:0]       rsq_ppn_q;
    logic [15:0]          rsq_count_q;
    logic                 iv_valid, iv_ready, iv_aborted;
    logic [PW_-1:0]       iv_ppn;
    logic [REMAP_TXID_W-1:0] iv_txid, mp_txid, cm_txid;
    logic                 mp_valid, mp_ready, mp_last;
    logic [REMAP_LPN_W-1:0] mp_lpn;
    logic [PW_-1:0]       mp_ppn;
    logic                 remap_init, commit_active;

    logic                 nq_valid, nq_ready, nq_head, nq_prio;
    logic [7:0]           nq_tag, nq_page, nq_slot;
    logic [1:0]           nq_op, nq_way;
    logic [2:0]           nq_chan;
    logic [11:0]          nq_block;
    logic                 nf_valid, nf_ready;
    logic [2:0]           nf_chan;
    logic [7:0]           nf_tag, nf_slot;
    logic [NUM_CHAN-1:0]  nd_valid, nd_ready, nd_last;
    logic [NUM_CHAN*32-1:0] nd_data;
    logic                 rdn_valid, rdn_ready, rdn_last;
    logic [31:0]          rdn_data;
    logic [7:0]           rdn_tag, rdn_slot;
    logic [2:0]           rdn_chan;
    logic [15:0]          rdn_widx;
    logic                 nc_valid, nc_ready, nc_bad_mark;
    logic [7:0]           nc_tag, nc_corr;
    logic [2:0]           nc_status;
    logic                 nand_init, n_spur;
    logic [31:0]          be_cnt_host, be_cnt_trims, be_cnt_proto;
    logic                 be_busy;          // backend: work in flight (the simulation clock gate)

    ats_backend #(.NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
                  .BLOCKS(BLOCKS), .WIN(WIN), .RD_SLOTS(RD_SLOTS), .PPN_W(PW_),
                  .SLOG(SLOG), .SLOG_TX(SLOG_TX), .SLOG_LPNS(SLOG_LPNS), .SLOG_WAYS(SLOG_WAYS),
                  .SLOG_FRAGS(SLOG_FRAGS), .SLOG_TXFRAGS(SLOG_TXFRAGS), .SLOG_TXFULL(SLOG_TXFULL),
                  .SLOG_CACHE(SLOG_CACHE), .SLOG_PPNS(SLOG_PPNS), .SLOG_RECS(SLOG_RIF),
                  .SLOG_PACK(SLOG_PACK), .SLOG_SEALT(SLOG_SEALT)) u_backend (
        .clk(clk_be), .rst,
        .s_wb_valid(wb_valid), .s_wb_ready(wb_ready), .s_wb_op(wb_op), .s_wb_rec(wb_rec), .s_wb_slog(wb_slog), .s_wb_lpn(wb_lpn), .s_wb_txid(wb_txid),
        .s_wb_epoch(wb_epoch), .s_wb_kind(wb_kind), .s_wb_fua(wb_fua), .s_wb_tag(wb_tag),
        .s_wbd_valid(wbd_valid), .s_wbd_ready(wbd_ready), .s_wbd_data(wbd_data), .s_wbd_last(wbd_last),
        .m_wbc_valid(wbc_valid), .m_wbc_ready(wbc_ready), .m_wbc_tag(wbc_tag), .m_wbc_status(wbc_status),
        .m_wbc_ppn(wbc_ppn),
        .s_rd_valid(rd_valid), .s_rd_ready(rd_ready), .s_rd_lpn(rd_lpn), .s_rd_txid(rd_txid), .s_rd_tag(rd_tag),
        .m_rdd_valid(rdd_valid), .m_rdd_ready(rdd_ready), .m_rdd_data(rdd_data), .m_rdd_last(rdd_last),
        .m_rdd_status(rdd_status), .m_rdd_tag(rdd_tag),
        .s_free_valid, .s_free_ready, .blk_need, .s_free_chan, .s_free_way, .s_free_block,
        .m_bad_valid, .m_bad_ready, .m_bad_chan, .m_bad_way, .m_bad_block,
        .m_req_valid(rq_valid), .m_req_ready(rq_ready), .m_req_op(rq_op), .m_req_tag(rq_tag),
        .m_req_txid(rq_txid), .m_req_lpn(rq_lpn), .m_req_ppn(rq_ppn),
        .s_rsp_valid(rsq_valid_q), .s_rsp_ready(be_rs_ready), .s_rsp_tag(rsq_tag_q), .s_rsp_status(rsq_status_q),
        .s_rsp_ppn(rsq_ppn_q), .s_rsp_mapped(rsq_mapped_q), .s_rsp_from_tx(rsq_from_tx_q), .s_rsp_count(rsq_count_q),
        .s_inval_valid(iv_valid), .s_inval_ready(iv_ready), .s_inval_ppn(iv_ppn),
        .s_map_valid(mp_valid), .s_map_ready(mp_ready), .s_map_lpn(32'(mp_lpn)), .s_map_last(mp_last),   // a COMMIT's mappings: the S-Log's RELEASE (n 255) of each LPN
        .m_nreq_valid(nq_valid), .m_nreq_ready(nq_ready), .m_nreq_tag(nq_tag), .m_nreq_op(nq_op),
        .m_nreq_chan(nq_chan), .m_nreq_way(nq_way), .m_nreq_block(nq_block), .m_nreq_page(nq_page),
        .m_nreq_head(nq_head), .m_nreq_prio_read(nq_prio), .m_nreq_slot(nq_slot),
        .s_nfetch_valid(nf_valid), .s_nfetch_ready(nf_ready), .s_nfetch_chan(nf_chan), .s_nfetch_slot(nf_slot),
        .m_ndata_valid(nd_valid), .m_ndata_ready(nd_ready), .m_ndata_data(nd_data), .m_ndata_last(nd_last),
        .s_ndata_valid(rdn_valid), .s_ndata_ready(rdn_ready), .s_ndata_data(rdn_data), .s_ndata_last(rdn_last),
        .s_ndata_tag(rdn_tag), .s_ndata_widx(rdn_widx),
        .s_ncpl_valid(nc_valid), .s_ncpl_ready(nc_ready), .s_ncpl_tag(nc_tag), .s_ncpl_status(nc_status),
        .s_ncpl_corrected(nc_corr), .s_ncpl_bad_mark(nc_bad_mark),
        .vc_addr, .vc_data, .wb_hold, .slog_sealt, .cpl_seq, .txs_addr, .txs_open, .txs_seq,
        .s_fw_valid, .s_fw_ready, .s_fw_op, .s_fw_chan, .s_fw_way, .s_fw_block, .s_fw_page, .s_fw_rop,
        .s_fw_txid, .s_fw_lpn, .s_fw_ppn, .s_fw_seq, .s_fw_epoch, .s_fw_flags, .s_fw_kind,
        .s_fwd_valid, .s_fwd_ready, .s_fwd_data, .s_fwd_last,
        .m_fwr_valid, .m_fwr_ready, .m_fwr_status, .m_fwr_data, .m_fwr_last, .m_fwr_ppn, .m_fwr_mapped,
        .no_free_block, .busy(be_busy), .next_seq,
        .cnt_host_pages(be_cnt_host), .cnt_trims(be_cnt_trims), .cnt_nand_prog, .cnt_nand_read,
        .cnt_ecc_corr, .cnt_prog_fail, .cnt_read_err, .cnt_proto_err(be_cnt_proto),
        .cnt_erases, .cnt_relocs, .slog_lpgn(be_slog_lpgn)
    );

    assign rs_ready = 1'b1;
    always_ff @(posedge clk_be) begin
        rsq_valid_q <= rs_valid;
        if (rs_valid) begin
            rsq_tag_q     <= rs_tag;
            rsq_status_q  <= rs_status;
            rsq_ppn_q     <= rs_ppn;
            rsq_mapped_q  <= rs_mapped;
            rsq_from_tx_q <= rs_from_tx;
            rsq_count_q   <= 16'(rs_count);
        end
        if (rst) rsq_valid_q <= 1'b0;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk_be)
        if (!rst && rsq_valid_q && !be_rs_ready)
            $error("ats_ssd_core: the backend refused a remap response (its s_rsp_ready must be 1)");
`endif

    ats_remap_engine u_remap (
        .clk(clk_remap), .rst,
        .s_req_valid(rq_valid), .s_req_ready(rq_ready), .s_req_op(rq_op), .s_req_tag(rq_tag),
        .s_req_txid(REMAP_TXID_W'(rq_txid)), .s_req_lpn(REMAP_LPN_W'(rq_lpn)), .s_req_ppn(rq_ppn),
        .m_rsp_valid(rs_valid), .m_rsp_ready(rs_ready), .m_rsp_tag(rs_tag), .m_rsp_status(rs_status),
        .m_rsp_ppn(rs_ppn), .m_rsp_mapped(rs_mapped), .m_rsp_from_tx(rs_from_tx), .m_rsp_count(rs_count),
        .m_inval_valid(iv_valid), .m_inval_ready(iv_ready), .m_inval_ppn(iv_ppn), .m_inval_txid(iv_txid),
        .m_inval_aborted(iv_aborted),
        .m_map_valid(mp_valid), .m_map_ready(mp_ready), .m_map_txid(mp_txid), .m_map_lpn(mp_lpn),
        .m_map_ppn(mp_ppn), .m_map_last(mp_last),
        .init_done(remap_init), .commit_active(commit_active), .commit_txid(cm_txid)
    );

    ats_nand_subsys #(.NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .DEPTH(SCHED_DEPTH), .SLOT_W(8),
                      .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
                      .BLOCKS(BLOCKS), .T_WP(T_WP), .T_WH(T_WH), .T_RP(T_RP), .T_REH(T_REH), .T_WB(T_WB),
                      .T_WHR(T_WHR), .T_ADL(T_ADL), .T_RR(T_RR), .T_RHW(T_RHW), .T_CS(T_CS)) u_nand (
        .clk, .rst, .reads_first(1'b0),
        .s_nreq_valid(nq_valid), .s_nreq_ready(nq_ready), .s_nreq_tag(nq_tag), .s_nreq_op(nq_op),
        .s_nreq_chan(nq_chan), .s_nreq_way(nq_way), .s_nreq_block(nq_block), .s_nreq_page(nq_page),
        .s_nreq_head(nq_head), .s_nreq_prio_read(nq_prio), .s_nreq_slot(nq_slot),
        .m_nfetch_valid(nf_valid), .m_nfetch_ready(nf_ready), .m_nfetch_chan(nf_chan), .m_nfetch_tag(nf_tag),
        .m_nfetch_slot(nf_slot),
        .s_ndata_valid(nd_valid), .s_ndata_ready(nd_ready), .s_ndata_data(nd_data), .s_ndata_last(nd_last),
        .m_ndata_valid(rdn_valid), .m_ndata_ready(rdn_ready), .m_ndata_data(rdn_data), .m_ndata_last(rdn_last),
        .m_ndata_tag(rdn_tag), .m_ndata_slot(rdn_slot), .m_ndata_chan(rdn_chan),
        .m_ndata_widx(rdn_widx),
        .m_ncpl_valid(nc_valid), .m_ncpl_ready(nc_ready), .m_ncpl_tag(nc_tag), .m_ncpl_status(nc_status),
        .m_ncpl_corrected(nc_corr), .m_ncpl_bad_mark(nc_bad_mark),
        .err_spurious(n_spur), .init_done(nand_init),
        .nand_ce_n, .nand_cle, .nand_ale, .nand_we_n, .nand_re_n, .nand_wp_n, .nand_dq_o, .nand_dq_i,
        .nand_rb_n
    );

    // ---- simulation-only clock gates (issue 35 item 3; rtl/core/README.md "Simulation cost")
    // The command queue, the backend and the remap engine. Not the write buffer (its writeback
    // engine steps round its states in every cycle, idle or not: a gated buffer would come back in
    // another phase) nor the NAND subsystem (the die models see clock and pins in one process, and a
    // gated pin clock reorders it against the pin registers: die events move by a cycle); both
    // were tried and were not exact (rtl/core/README.md "Simulation cost"). Each block's clock runs while a valid is up on
    // one of its ports, while it has work in flight that its ports do not show (commands queued; the
    // backend's busy; remap requests taken and not answered, a commit being applied, the tables
    // being cleared), when any of its inputs changes (firmware CSRs such as vc_addr, txs_addr,
    // wb_hold) and for HOLD edges after the last of these, long enough for its pipelines to settle
    // (the remap engine's CLEAR walk: one entry an edge). A settled block with unchanged inputs keeps
    // every register, so the gated and ungated builds compute the same cycles
    // (tests/system/test_sim_cgate.py).
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_CORE_CGATE
`endif
`endif
`ifdef ATS_CORE_CGATE
    localparam int BOOT_HOLD  = NUM_CHAN * WAYS * BLOCKS + 64;   // backend's valid-count clear and more
    localparam int REMAP_HOLD = (1 << (REMAP_CNT_W - 1)) + 32;   // a CLEAR walk of a full transaction
    logic [$clog2(BOOT_HOLD + 1)-1:0] boot_q;
    logic [15:0] remap_out_q;                // remap requests taken, responses not yet taken
    logic        boot;
    always_ff @(posedge clk) begin
        if (boot_q != '0) boot_q <= boot_q - 1'b1;
        remap_out_q <= remap_out_q + 16'(rq_valid && rq_ready) - 16'(rs_valid && rs_ready);
        if (rst) begin
            boot_q      <= ($clog2(BOOT_HOLD + 1))'(BOOT_HOLD);
            remap_out_q <= '0;
        end
    end
    assign boot = boot_q != '0;

// (the queue's watch: its output readies; not done_valid, in act, nor the done payload, which the
// queue takes only with done_valid, as the backend below)
`define ATS_CG_CMDQ_IN {disp_ready, m_cpl_ready}
`define ATS_CG_WBUF_IN {disp_valid, disp_op, disp_tag, disp_lba, disp_nlb, disp_txid, disp_flags, disp_attr, \
        disp_prio, disp_dptr, disp_aux, disp_epoch, done_ready, m_hrd_ready, m_hwr_ready, wb_ready, wbd_ready, \
        wbc_valid, wbc_tag, wbc_status, wbc_ppn, rd_ready, rdd_valid, rdd_data, rdd_last, rdd_status, rdd_tag, \
        no_space}
// The backend's watch holds only what the backend may act on while none of the valids in its act
// is up: the readies of its own outputs and the firmware's CSRs (vc_addr, wb_hold, txs_addr). Not
// the valids (each is in act, and a valid that falls was in act at the falling edge before, which
// starts the HOLD), nor the payloads that come with a valid (the write buffer's wb_* / wbd_* / rd_*,
// the remap engine's rs_* / iv_ppn, the NAND side's nf_* / rdn_* / nc_* / s_free_*, the firmware
// port's s_fw_* / s_fwd_*): the backend takes each only with its valid (its registers that copy one
// on every edge, e.g. the read buffer's write word, are read only behind the registered valid), so
// a payload that changes while its valid is low and the clock is off changes nothing the backend
// shows; nor rdd_ready (the write buffer derives it from the host's DIFFWRITE word, which the
// harness drives while the clock is low; the backend reads it only with its own m_rdd_valid, in
// act). The 570-bit vector that held all of them was packed after every clocked evaluation and
// compared at every falling edge (bench/sim/README.md "The backend's watch and the SoC's blocks").
`define ATS_CG_BE_IN {wbc_ready, m_bad_ready, rq_ready, nq_ready, nd_ready, m_fwr_ready, vc_addr, wb_hold, txs_addr}
`define ATS_CG_REMAP_IN {rq_valid, rq_op, rq_tag, rq_txid, rq_lpn, rq_ppn, rs_ready, iv_ready, mp_ready}

    ats_sim_cgate #(.W($bits(`ATS_CG_CMDQ_IN)), .HOLD(32), .ID(0), .FALL(1), .LATCH_ACT(1)) u_cg_cmdq (
        .clk, .rst, .gclk(clk_cmdq), .watch(`ATS_CG_CMDQ_IN),
        .act(boot || s_cmd_valid || disp_valid || done_valid || m_cpl_valid || q_occ != '0));
    ats_sim_cgate #(.W($bits(`ATS_CG_WBUF_IN)), .HOLD(32), .ID(1), .FALL(1), .LATCH_ACT(1)) u_cg_wbuf (
        .clk, .rst, .gclk(clk_wbuf), .watch(`ATS_CG_WBUF_IN),
        .act(boot || wb_busy || disp_valid || done_valid || m_hrd_valid || s_hrd_valid || m_hwr_valid ||
             wb_valid || wbd_valid || wbc_valid || rd_valid || rdd_valid || pwr_fail));
    ats_sim_cgate #(.W($bits(`ATS_CG_BE_IN)), .HOLD(32), .ID(2), .FALL(1)) u_cg_be (
        .clk, .rst, .gclk(clk_be), .watch(`ATS_CG_BE_IN),
        .act(boot || be_busy || wb_valid || wbd_valid || wbc_valid || rd_valid || rdd_valid || s_free_valid ||
             m_bad_valid || rq_valid || rs_valid || rsq_valid_q || iv_valid || mp_valid || nq_valid || nf_valid ||
             (|nd_valid) || rdn_valid || nc_valid || s_fw_valid || s_fwd_valid || m_fwr_valid));
    ats_sim_cgate #(.W($bits(`ATS_CG_REMAP_IN)), .HOLD(REMAP_HOLD), .ID(3), .FALL(1)) u_cg_remap (
        .clk, .rst, .gclk(clk_remap), .watch(`ATS_CG_REMAP_IN),
        .act(boot || !remap_init || commit_active || remap_out_q != '0 || rq_valid || rs_valid ||
             iv_valid || mp_valid));
`undef ATS_CG_CMDQ_IN
`undef ATS_CG_WBUF_IN
`undef ATS_CG_BE_IN
`undef ATS_CG_REMAP_IN
`else
    assign clk_cmdq  = clk;
    assign clk_wbuf  = clk;
    assign clk_be    = clk;
    assign clk_remap = clk;
`endif

    assign init_done     = remap_init && nand_init;
    assign cnt_proto_err = be_cnt_proto + wb_cnt_proto;
    assign err_spurious  = q_spur | n_spur;

    logic unused;
    assign unused = ^{q_epoch, q_occ, wb_slot, dump_done, dump_short, wb_cnt_wb_pages, wb_cnt_unmaps,
                      wb_cnt_hits, wb_cnt_misses, wb_cnt_fail, wb_cnt_bytes, wb_dirty,
                      iv_txid, iv_aborted, mp_txid, mp_lpn, mp_ppn, mp_last, commit_active,
                      cm_txid, nf_tag, rdn_slot, rdn_chan, be_cnt_host, be_cnt_trims, be_busy, wb_busy,
                      wb_cnt_slog_err, be_slog_lpgn};
endmodule

`resetall
