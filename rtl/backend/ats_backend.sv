// SPDX-License-Identifier: Apache-2.0
// ats_backend: the media interface of docs/architecture.md section 4 in RTL, between the write
// buffer (ats_wbuf), the remap engine (ats_remap_engine) and the NAND subsystem (ats_nand_subsys).
//  - Writeback requests (PROGRAM with data, UNMAP) enter a request table of WIN entries in arrival
//    order; each gets the next 64-bit sequence number `seq` (persistence.md). PROGRAM data goes to
//    a staging page memory (one page per table entry); an UNMAP becomes a TRIM record page.
//  - Allocation: one open block per die, pages in ascending order; dies taken round robin so that
//    consecutive pages go to different dies and program in parallel. Erased blocks come from the
//    firmware on s_free (one "next block" register per die). A die without a block is skipped; with
//    no block anywhere the request waits (backpressure) and `no_free_block` is high.
//  - Program: PROGRAM request to the NAND subsystem (tag = table entry); the subsystem fetches the
//    page (m_nfetch) and this block's DMA sends the staged words plus the five spare metadata
//    words on that channel's s_ndata stream. On PROGRAM_FAIL the entry is programmed again on
//    another page (the failed block is closed and reported on m_bad); nothing is ever dropped.
//  - Completion in request order (durable prefix): when the oldest entry is programmed, its mapping
//    is applied through the remap engine (MAP_WRITE, TX_WRITE with a txid, UNMAP for a TRIM record),
//    then s_wbc completes it. Superseded pages and the remap's m_inval update per-block valid counts.
//  - Transactions: a tx page's TX_WRITE goes to the remap engine at its first issue (with its PPN),
//    so a commit mark / record is issued once the tx's own TX_WRITEs are answered, in the same
//    program round as the tx's last pages (its COMMIT / ABORT flag from their statuses); a page
//    re-programmed after its early TX_WRITE is fixed at the commit (README "Transactions").
//  - Read miss: up to RD_SLOTS reads in flight, each in a slot taken from a free list: LOOKUP
//    (TX_LOOKUP with a txid) in s_rd order -> zeros if unmapped, else NAND READ (tag 0x80 + slot) on
//    whatever die holds the page; the page lands in its slot of a read memory and leaves on m_rdd,
//    with the request's s_rd_tag on m_rdd_tag, as soon as its NAND completion gives the verdict
//    (status on the last word: OK, or MEDIA_ERROR on UNCORRECTABLE / wrong LPN in the spare area):
//    pages leave in any order, and the slot is free again after its last word.
//  - S-Log (SLOG = 1, g_slog): ats_backend_slog's index and records, and the read merge: a read
//    miss's slot is held until the fragments of its LPN (the index's LOOKUP in s_rd order) are
//    copied into its page from the S-Log cache or a NAND READ of their log page (tag 0xC0).
// Theory, interface and persistence format: rtl/backend/README.md, README_slog.md, docs/persistence.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend #(
    parameter int NUM_CHAN        = 4,     // NAND channels, 1..8
    parameter int WAYS            = 2,     // dies per channel: 1, 2 or 4
    parameter int PAGE_BYTES      = 4096,  // data bytes per page, multiple of 512 (4 in tests)
    parameter int PAGES_PER_BLOCK = 64,    // power of two, 2..256
    parameter int BLOCKS          = 128,   // blocks per die, power of two, <= 4096
    parameter int WIN             = 8,     // request table entries (outstanding pages), power of two, 2..64
    parameter int RD_SLOTS        = 32,    // host read misses in flight (read slots), power of two, 2..32 (32: the core's)
    parameter int PPN_W           = 16,    // remap engine PPN width
    // DiffTx's S-Log (README "S-Log", README_slog.md): 0 = no S-Log (the RTL before it, cycle for
    // cycle; s_wb_slog and the read ids 0xFD / 0xFC are then ordinary), 1 = ats_backend_slog wired in
    parameter int SLOG            = 0,
    /* verilator lint_off UNUSEDPARAM */   // (used with SLOG = 1 only)
    parameter int SLOG_TX         = 16,    // txids of S-Log records 1..SLOG_TX (<= 63)
    parameter int SLOG_LPNS       = 256,   // index entries (README_slog "Parameters")
    parameter int SLOG_WAYS       = 4,
    parameter int SLOG_FRAGS      = 4,
    parameter int SLOG_TXFRAGS    = 64,
    parameter int SLOG_TXFULL     = 64,    // full pages a record names (t's list of full pages, README_slog "Integration"), >= 1
    parameter int SLOG_CACHE      = 8,     // log pages cached on chip for the read merge: 0 or a power of two (README_slog "Read merge")
    parameter int SLOG_PPNS       = 256,   // LPGN -> PPN table entries (the newest log pages a read can fetch), a power of two >= WIN
    parameter int SLOG_RECS       = 1,     // records the unit holds at once, 1..8 (README "S-Log" "Records in flight"; the write buffer's SLOG_RIF)
    parameter int SLOG_PACK       = 0,     // 1: the unit's open page (README "S-Log" "Packing"): with SLOG_RECS 1 sealed after every record, with more kept open for the next
    parameter int SLOG_SEALT      = 0      // slog_sealt's default (a parent leaving it unconnected) and its register's reset value, 0..65535
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire logic                     clk,
    input  wire logic                     rst,            // synchronous, active high
    // ---- writeback requests from the write buffer (architecture.md section 4)
    input  wire logic                     s_wb_valid,
    output wire logic                     s_wb_ready,
    input  wire logic                     s_wb_op,        // 0 PROGRAM, 1 no data: UNMAP, or a tx record (s_wb_rec)
    input  wire logic [1:0]               s_wb_rec,       // 0 none, 1 COMMIT mark on this page, 2 commit record, 3 abort record
    input  wire logic [31:0]              s_wb_lpn,
    input  wire logic [5:0]               s_wb_txid,
    input  wire logic [15:0]              s_wb_epoch,
    input  wire logic [1:0]               s_wb_kind,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic                     s_wb_fua,       // FUA hint: not used (programs are never HEAD: README)
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [7:0]               s_wb_tag,
    input  wire logic                     s_wb_slog,      // with op 1, rec 2: an S-Log record (SLOG = 1; architecture §11.4)
    input  wire logic                     s_wbd_valid,
    output wire logic                     s_wbd_ready,
    input  wire logic [31:0]              s_wbd_data,
    input  wire logic                     s_wbd_last,
    output wire logic                     m_wbc_valid,
    input  wire logic                     m_wbc_ready,
    output wire logic [7:0]               m_wbc_tag,
    output wire logic [7:0]               m_wbc_status,
    output wire logic [15:0]              m_wbc_ppn,
    // ---- read misses
    input  wire logic                     s_rd_valid,
    output wire logic                     s_rd_ready,
    input  wire logic [31:0]              s_rd_lpn,
    input  wire logic [5:0]               s_rd_txid,
    input  wire logic [7:0]               s_rd_tag,
    output wire logic                     m_rdd_valid,
    input  wire logic                     m_rdd_ready,
    output wire logic [31:0]              m_rdd_data,
    output wire logic                     m_rdd_last,
    output wire logic [7:0]               m_rdd_status,
    output wire logic [7:0]               m_rdd_tag,
    // ---- erased blocks from the firmware; grown bad blocks to the firmware
    input  wire logic                     s_free_valid,
    output wire logic                     s_free_ready,
    output logic      [NUM_CHAN*WAYS-1:0] blk_need,       // bit d: die d has no next block (firmware: send one)
    input  wire logic [2:0]               s_free_chan,
    input  wire logic [1:0]               s_free_way,
    input  wire logic [11:0]              s_free_block,
    output wire logic                     m_bad_valid,
    input  wire logic                     m_bad_ready,
    output wire logic [2:0]               m_bad_chan,
    output wire logic [1:0]               m_bad_way,
    output wire logic [11:0]              m_bad_block,
    // ---- remap engine (architecture.md section 3)
    output wire logic                     m_req_valid,
    input  wire logic                     m_req_ready,
    output wire logic [3:0]               m_req_op,
    output wire logic [7:0]               m_req_tag,
    output wire logic [5:0]               m_req_txid,
    output wire logic [31:0]              m_req_lpn,
    output wire logic [PPN_W-1:0]         m_req_ppn,
    input  wire logic                     s_rsp_valid,
    output wire logic                     s_rsp_ready,
    input  wire logic [7:0]               s_rsp_tag,
    input  wire logic [3:0]               s_rsp_status,
    input  wire logic [PPN_W-1:0]         s_rsp_ppn,
    input  wire logic                     s_rsp_mapped,
    input  wire logic                     s_rsp_from_tx,  // TX_LOOKUP answered from the tx's own table
    input  wire logic [15:0]              s_rsp_count,    // COMMIT: entries applied (the engine's count, zero-extended)
    input  wire logic                     s_inval_valid,
    output wire logic                     s_inval_ready,
    input  wire logic [PPN_W-1:0]         s_inval_ppn,
    input  wire logic                     s_map_valid,
    output wire logic                     s_map_ready,
    // (SLOG = 1: each is RELEASEd in the S-Log index, README "S-Log"; a top that does not connect
    // them gets LPN 0xFFFFFFFF, in no index entry: the RELEASEs change nothing)
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [31:0]              s_map_lpn = 32'hFFFFFFFF,   // a mapping a COMMIT applied: its LPN
    input  wire logic                     s_map_last = 1'b1,          // ... the commit's last
    /* verilator lint_on UNUSEDSIGNAL */
    // ---- NAND subsystem (architecture.md section 5)
    output wire logic                     m_nreq_valid,
    input  wire logic                     m_nreq_ready,
    output wire logic [7:0]               m_nreq_tag,
    output wire logic [1:0]               m_nreq_op,
    output wire logic [2:0]               m_nreq_chan,
    output wire logic [1:0]               m_nreq_way,
    output wire logic [11:0]              m_nreq_block,
    output wire logic [7:0]               m_nreq_page,
    output wire logic                     m_nreq_head,
    output wire logic                     m_nreq_prio_read,
    output wire logic [7:0]               m_nreq_slot,
    input  wire logic                     s_nfetch_valid,
    output wire logic                     s_nfetch_ready,
    input  wire logic [2:0]               s_nfetch_chan,
    input  wire logic [7:0]               s_nfetch_slot,
    output wire logic [NUM_CHAN-1:0]      m_ndata_valid,
    input  wire logic [NUM_CHAN-1:0]      m_ndata_ready,
    output wire logic [NUM_CHAN*32-1:0]   m_ndata_data,
    output wire logic [NUM_CHAN-1:0]      m_ndata_last,
    input  wire logic                     s_ndata_valid,
    output wire logic                     s_ndata_ready,
    input  wire logic [31:0]              s_ndata_data,
    input  wire logic                     s_ndata_last,
    input  wire logic [7:0]               s_ndata_tag,    // the READ's NAND tag (pages of different
                                                          // channels interleave word by word)
    input  wire logic [15:0]              s_ndata_widx,   // the word's index in its page
    input  wire logic                     s_ncpl_valid,
    output wire logic                     s_ncpl_ready,
    input  wire logic [7:0]               s_ncpl_tag,
    input  wire logic [2:0]               s_ncpl_status,
    input  wire logic [7:0]               s_ncpl_corrected,
    input  wire logic                     s_ncpl_bad_mark, // READ: spare byte 0 is a bad-block mark
    // ---- firmware port (README "Firmware port"): one operation at a time, one response each
    input  wire logic                     s_fw_valid,
    output wire logic                     s_fw_ready,
    input  wire logic [2:0]               s_fw_op,        // 0 NREAD, 1 NPROG, 2 NERASE, 3 REMAP, 4 RELOC, 5 SEQSET, 6 MERGE, 7 SLOAD
    input  wire logic [2:0]               s_fw_chan,      // NREAD / NPROG / NERASE address
    input  wire logic [1:0]               s_fw_way,
    input  wire logic [11:0]              s_fw_block,
    input  wire logic [7:0]               s_fw_page,
    input  wire logic [3:0]               s_fw_rop,       // REMAP: remap operation
    input  wire logic [5:0]               s_fw_txid,      // REMAP, NPROG spare
    input  wire logic [31:0]              s_fw_lpn,       // REMAP, RELOC, NPROG spare
    input  wire logic [PPN_W-1:0]         s_fw_ppn,       // REMAP; RELOC: the page the LPN must still map to
    input  wire logic [63:0]              s_fw_seq,       // NPROG spare
    input  wire logic [31:0]              s_fw_epoch,     // NPROG spare
    input  wire logic [7:0]               s_fw_flags,     // NPROG spare
    input  wire logic [1:0]               s_fw_kind,      // NPROG spare
    input  wire logic                     s_fwd_valid,    // NPROG / RELOC page data, PAGE_BYTES/4 words
    output wire logic                     s_fwd_ready,
    input  wire logic [31:0]              s_fwd_data,
    input  wire logic                     s_fwd_last,
    output wire logic                     m_fwr_valid,    // response: one beat, or NREAD's page + 5 spare words
    input  wire logic                     m_fwr_ready,
    output wire logic [7:0]               m_fwr_status,
    output wire logic [31:0]              m_fwr_data,
    output wire logic                     m_fwr_last,
    output wire logic [PPN_W-1:0]         m_fwr_ppn,
    output wire logic                     m_fwr_mapped,
    // ---- valid-page count of a block (firmware GC accounting), read port, latency 1
    input  wire logic [14:0]              vc_addr,        // {die, block}: die * BLOCKS + block
    output logic      [8:0]               vc_data,
    // ---- checkpoint support (README "Checkpoint support"): hold new write-back requests, the
    //      completed prefix, and per txid the seq of the first page of its open transaction
    input  wire logic                     wb_hold,        // high: no write-back request is accepted
    // SLOG_PACK 1, SLOG_RECS > 1: idle cycles an open page waits for the next record before its seal
    // (README "Packing"; the SoC's CSR SLOG_SEALT, docs/architecture.md §1.2 FEATURE 0xC0), registered
    input  wire logic [15:0]              slog_sealt = 16'(SLOG_SEALT),
    output wire logic [63:0]              cpl_seq,        // every request with a lower seq has completed
    input  wire logic [5:0]               txs_addr,       // txid -> txs_open / txs_seq (combinational)
    output wire logic                     txs_open,       // a page of txid was accepted, its commit / abort not yet
    output wire logic [63:0]              txs_seq,        // seq of that tx's first accepted page
    // ---- status and counters
    output wire logic                     no_free_block,  // a page waits and no die has a block
    output wire logic                     busy,           // work in flight (the core's simulation clock gate)
    output wire logic [63:0]              next_seq,       // seq the next request will get
    output wire logic [31:0]              slog_lpgn,      // the S-Log's next LPGN (0 with SLOG = 0)
    output logic      [31:0]              cnt_host_pages, // PROGRAM requests completed (data pages)
    output logic      [31:0]              cnt_trims,      // UNMAP requests completed (TRIM records)
    output logic      [31:0]              cnt_nand_prog,  // NAND PROGRAMs completed OK
    output logic      [31:0]              cnt_nand_read,  // NAND READs completed
    output logic      [31:0]              cnt_ecc_corr,   // bits corrected in good reads
    output logic      [31:0]              cnt_prog_fail,  // NAND PROGRAMs that failed (re-programmed)
    output logic      [31:0]              cnt_read_err,   // reads answered MEDIA_ERROR
    output logic      [31:0]              cnt_proto_err,  // protocol errors (bad free block, stray completion, short page)
    output logic      [31:0]              cnt_erases,     // NAND ERASEs completed (firmware port)
    output logic      [31:0]              cnt_relocs      // GC relocations applied (RELOC whose LPN still mapped to its old page)
);
    // ---------------------------------------------------------------------------------------------
    // parameters
    localparam int NDIE   = NUM_CHAN * WAYS;
    localparam int DIE_W  = (NDIE > 1) ? $clog2(NDIE) : 1;
    localparam int PG_W   = $clog2(PAGES_PER_BLOCK);
    localparam int BLK_W  = (BLOCKS > 1) ? $clog2(BLOCKS) : 1;
    localparam int PW     = PAGE_BYTES / 4;             // data words per page
    localparam int PWW    = $clog2(PW + 5) + 1;          // word counter incl. metadata words
    localparam int WIN_W  = $clog2(WIN);
    localparam int MEM_DEPTH = WIN * PW;                 // (the firmware's NPROG page, "entry WIN": u_fwmem)
    localparam int MEM_AW = $clog2(MEM_DEPTH);
    localparam int FW_AW  = $clog2(PW);                 // word address in the firmware's NPROG page
    localparam int DIE_PACK = (NDIE > 1) ? $clog2(NDIE) : 0;   // die bits in a PPN
    localparam logic [7:0] RD_TAG = 8'hFF;              // NAND tag of a firmware NREAD
    localparam logic [7:0] RB_TAG = 8'h80;              // NAND tags of host reads: 0x80 + slot
    localparam int RS_W   = $clog2(RD_SLOTS);
    localparam logic [7:0] RT_CPL = 8'h01, RT_RD = 8'h02, RT_FW = 8'h03; // remap tags
    localparam logic [7:0] FW_TAG = 8'hFE;              // NAND tag of a firmware ERASE / PROGRAM
    localparam logic [2:0] FO_NPROG = 3'd1, FO_NERASE = 3'd2;   // firmware ops (all: ats_backend_fw)
    // remap ops
    localparam logic [3:0] R_MAP_WRITE = 4'd0, R_LOOKUP = 4'd1, R_TX_WRITE = 4'd2,   // (TX_LOOKUP 3:
                           R_COMMIT = 4'd4, R_ABORT = 4'd5, R_UNMAP = 4'd6;          //  ats_backend_read)
    // tx record kinds (s_wb_rec)
    localparam logic [1:0] RC_NONE = 2'd0, RC_CMARK = 2'd1, RC_CREC = 2'd2, RC_AREC = 2'd3;
    // NAND statuses
    localparam logic [2:0] N_OK = 3'd0;   // any other status of a READ: MEDIA_ERROR
    // spare flags (persistence.md): bit 0 commit, bit 1 commit block, bit 2 TRIM record
    localparam logic [7:0] F_COMMIT = 8'h01, F_TRIM = 8'h04, F_ABORT = 8'h08, F_RELOC = 8'h10,
                           F_SLOG = 8'h20;   // RELOC | SLOG: a MERGE page (persistence §10.3)

    if (NUM_CHAN < 1 || NUM_CHAN > 8) begin : g_chk_chan
        $fatal(1, "ats_backend: NUM_CHAN must be 1..8 (%m)");
    end
    if (WAYS != 1 && WAYS != 2 && WAYS != 4) begin : g_chk_ways
        $fatal(1, "ats_backend: WAYS must be 1, 2 or 4 (%m)");
    end
    if ((NDIE & (NDIE - 1)) != 0) begin : g_chk_ndie
        $fatal(1, "ats_backend: NUM_CHAN x WAYS must be a power of two (PPN packing) (%m)");
    end
    if (PAGES_PER_BLOCK < 2 || PAGES_PER_BLOCK > 256 || (PAGES_PER_BLOCK & (PAGES_PER_BLOCK - 1)) != 0) begin : g_chk_ppb
        $fatal(1, "ats_backend: PAGES_PER_BLOCK must be a power of two, 2..256 (%m)");
    end
    if (BLOCKS < 1 || BLOCKS > 4096 || (BLOCKS & (BLOCKS - 1)) != 0) begin : g_chk_blocks
        $fatal(1, "ats_backend: BLOCKS must be a power of two <= 4096 (%m)");
    end
    if (WIN < 2 || WIN > 64 || (WIN & (WIN - 1)) != 0) begin : g_chk_win
        $fatal(1, "ats_backend: WIN must be a power of two, 2..64 (%m)");
    end
    if (DIE_PACK + PG_W + BLK_W > PPN_W) begin : g_chk_ppn
        $fatal(1, "ats_backend: dies x blocks x pages do not fit PPN_W (%m)");
    end
    if (NDIE * BLOCKS > 32768) begin : g_chk_vc
        $fatal(1, "ats_backend: at most 32768 blocks in all (vc_addr) (%m)");
    end
    if (RD_SLOTS < 2 || RD_SLOTS > 32 || (RD_SLOTS & (RD_SLOTS - 1)) != 0) begin : g_chk_rds
        $fatal(1, "ats_backend: RD_SLOTS must be a power of two, 2..32 (%m)");
    end
    if (PAGE_BYTES < 16 || (PAGE_BYTES % 4) != 0) begin : g_chk_page
        $fatal(1, "ats_backend: PAGE_BYTES must be a multiple of 4, >= 16 (%m)");
    end

    function automatic logic [PPN_W-1:0] pack_ppn(input logic [2:0] ch, input logic [1:0] wy,
                                                  input logic [11:0] blk, input logic [7:0] pg);
        logic [31:0] d;
        d = 32'(ch) * 32'(WAYS) + 32'(wy);
        pack_ppn = PPN_W'((32'(blk) << (PG_W + DIE_PACK)) | (32'(pg) << DIE_PACK) | d);
    endfunction
    function automatic logic [31:0] ppn_die(input logic [PPN_W-1:0] p);
        ppn_die = (NDIE > 1) ? (32'(p) & 32'(NDIE - 1)) : 32'd0;
    endfunction
    function automatic logic [31:0] ppn_page(input logic [PPN_W-1:0] p);
        ppn_page = (32'(p) >> DIE_PACK) & 32'(PAGES_PER_BLOCK - 1);
    endfunction
    function automatic logic [31:0] ppn_block(input logic [PPN_W-1:0] p);
        ppn_block = (32'(p) >> (DIE_PACK + PG_W)) & 32'(BLOCKS - 1);
    endfunction

    // ---------------------------------------------------------------------------------------------
    // request table
    typedef enum logic [2:0] {E_FREE, E_RECV, E_QUEUED, E_ISSUED, E_DONE} ent_state_e;
    ent_state_e         e_st   [WIN];
    logic [31:0]        e_lpn  [WIN];
    logic [5:0]         e_txid [WIN];
    logic [15:0]        e_epoch[WIN];
    logic [1:0]         e_kind [WIN];
    logic [7:0]         e_flags[WIN];
    logic               e_trim [WIN];          // no data (TRIM record, commit / abort record): zeros
    logic [1:0]         e_rec  [WIN];          // RC_*
    logic               e_doom [WIN];          // commit of a tx with a failed TX_WRITE: an abort (set at issue)
    logic               e_fw   [WIN];          // a firmware RELOC (completes on m_fwr, conditional map)
    logic [PPN_W-1:0]   e_old  [WIN];          // RELOC: the page the LPN must still map to
    logic [7:0]         e_wtag [WIN];
    logic [2:0]         e_chan [WIN];
    logic [1:0]         e_way  [WIN];
    logic [11:0]        e_blk  [WIN];
    logic [7:0]         e_pg   [WIN];
    // early TX_WRITE (README "Transactions"): a tx data page's TX_WRITE goes to the remap engine at
    // its first issue, with that page's PPN; the commit's flag is decided from these answers
    logic               e_tw   [WIN];          // its TX_WRITE went early (at its first issue)
    logic               e_twv  [WIN];          // ... and was answered
    logic [3:0]         e_tws  [WIN];          // ... with this status
    logic               e_fx   [WIN];          // the page TX_WRITten early failed to program: e_fppn
    logic [PPN_W-1:0]   e_fppn [WIN];          // that page (the tx table holds it: a fix, below)
    // S-Log (SLOG = 1, README "S-Log"): the entry is a log page of a record (kind 1, flag SLOG,
    // lpn 0xFFFFFFFF, spare txid 0, epoch = its LPGN); a record's last page has e_rec RC_CREC and
    // the tx's txid (its completion is the commit's), the others e_rec RC_NONE and txid 0
    localparam bit      SL = SLOG != 0;
    logic               e_sl   [WIN];
    logic [31:0]        e_lpgn [WIN];
    // the S-Log unit's requests to the table, the completion FSM and the remap request register
    // (driven by g_slog below; constant 0 with SLOG = 0)
    logic               sl_rec_st;        // the request on s_wb is an S-Log record
    logic               sl_busy;          // an S-Log record is being received: no other request taken
    logic               sl_acc;           // a record's log page enters the table (entry acc_e, next seq)
    logic               sl_acc_fin;       // ... and it is the record's last
    logic [31:0]        sl_acc_lpgn;      // ... its LPGN
    logic [5:0]         sl_t;             // the record's txid
    logic [7:0]         sl_wtag;          // its request's tag
    logic [15:0]        sl_wep;           // ... and epoch
    logic [5:0]         sl_pt;            // a log page entering the table: the txid of the first record ending in it
    logic [7:0]         sl_ptag;          // ... and its request's tag
    logic               sl_open;          // SLOG_PACK 1: a log page is open (its records not complete; no request but a record or a tx data page taken)
    logic               sl_cont;          // ... and it continues a record (only a record taken)
    logic               sl_more;          // the completing entry ends another record after this one (SLOG_PACK 1)
    logic [5:0]         sl_ntx;           // ... its txid
    logic [7:0]         sl_ctag;          // the completing record's request tag (SLOG_PACK 1)
    logic               sl_ab_acc;        // a rejected / doomed record's commit record enters the table
                                          // (entry acc_e, next seq; queued: written as an abort)
    logic               sl_mem_we;        // a log page word into the staging memory
    logic [MEM_AW-1:0]  sl_mem_wa;
    logic [31:0]        sl_mem_wd;
    logic               sl_pg_done;       // a log page's words are in: entry sl_pg_e queued
    logic [WIN_W-1:0]   sl_pg_e;
    logic               sl_err_set;       // a rejected record: t's error := sl_err_st (written as an abort)
    logic [3:0]         sl_err_st;
    logic               sl_wbd_ready;     // the S-Log receiver takes s_wbd
    logic               sl_rq_want;       // an S-Log LOOKUP wants the remap request register: a
    logic [31:0]        sl_rq_lpn;        // descriptor's base (tag RT_SL) or a RESERVE's LPN (RT_RL)
    logic               sl_rq_rl;
    logic               sl_fin_cp, sl_mid_cp;   // the oldest entry is a record's last / an earlier log page
    logic               sl_ix_cp;         // the oldest entry needs an index command first: its APPLY
                                          // (a record's last page) or RELEASE (a plain page or TRIM)
    logic               apl_done;         // that command answered (APPLY: apl_sts, apl_cnt)
    logic [7:0]         apl_sts, apl_cnt;
    logic               sl_busy_any;      // (busy)
    logic               sl_mp_busy;       // a commit's s_map RELEASEs are not all done
    logic               sl_mp_take;       // s_map taken now (its RELEASE sent to the index)
    logic               sl_nrd_valid;     // the read merge wants a NAND READ of a log page (tag SL_TAG)
    logic [PPN_W-1:0]   sl_nrd_ppn;
    logic               sl_nw;            // ... and waits for its words and completion
    logic               fw_sl_req, fw_sl_done;   // firmware op 7 SLOAD (SLOG = 1, README "Firmware port")
    logic [7:0]         fw_sl_status;
    logic [31:0]        fw_sl_data;
    logic [PPN_W-1:0]   fw_sl_ppn;               // ... its ppn and mapped (SLOAD's index reads, rops 3-6)
    logic               fw_sl_mapped;
    // firmware op 6 MERGE (SLOG = 1, README "Firmware port"): its page enters the table as a RELOC
    // entry (mg_acc_req, flags RELOC | SLOG, epoch = the base mg_base) whose words come from the
    // read unit's page of the merge's read (tag MG_TAG, mg_rdd); no S-Log record is accepted meanwhile
    logic               mg_acc_req, mg_blk, mg_rdd, mg_take, recv_mg_q;
    logic [PPN_W-1:0]   mg_base;
    logic [31:0]        ur_rd_lpn;        // the read unit's request: the host's s_rd or the merge's read
    logic [5:0]         ur_rd_txid;
    logic [7:0]         ur_rd_tag;
    localparam logic [7:0] SL_TAG = 8'hC0;              // NAND tag of the read merge's log page READ
    logic               nd_sl;            // an s_ndata word of that READ (taken always)
    assign nd_sl = SL && s_ndata_tag == SL_TAG;

    // ring pointers with one wrap bit: entry = pointer[WIN_W-1:0]
    logic [WIN_W:0]     acc_ptr_q, iss_ptr_q, cpl_ptr_q;
    logic [WIN_W:0]     count;            // allocated entries (acc - cpl)
    logic [63:0]        cpl_seq_q;        // seq of the oldest entry (cpl_ptr); entry i has
                                          // seq = cpl_seq_q + ((i - cpl_ptr) mod WIN)
    logic [63:0]        seq_q;            // seq of the next request: cpl_seq_q + count
    assign count    = acc_ptr_q - cpl_ptr_q;
    assign seq_q    = cpl_seq_q + 64'(count);
    logic [63:0]        e_seq  [WIN];         // seq of each entry, written at acceptance (= seq_q then)
    logic [WIN_W-1:0]   acc_e, iss_e;
    assign acc_e = acc_ptr_q[WIN_W-1:0];
    assign iss_e = iss_ptr_q[WIN_W-1:0];

    // ---------------------------------------------------------------------------------------------
    // accept: request, then PW data words for a PROGRAM
    logic               recv_q;           // receiving data words of entry acc_ptr_q - 1
    logic [WIN_W-1:0]   recv_ent_q;
    logic [PWW-1:0]     recv_w_q;
    logic               acc_fire, wbd_fire;
    logic               mem_we;
    logic [MEM_AW-1:0]  mem_wa, mem_ra;
    logic [31:0]        mem_rd;
    // firmware port unit (u_fw, below): its requests, grants and status
    logic               fw_fwd_take, fw_nq_req, fw_nq_erase, fw_nq_wait, fw_nrd_req, fw_nrd_cpl, fw_nd_ready;
    logic               fw_rq_req, fw_reloc_req, fw_seqset, fo_free, fw_busy;
    logic [PPN_W-1:0]   fw_nrd_ppn;
    logic [2:0]         fw_perr;
    // the firmware operation's fields: registers of u_fw
    logic [2:0]         fw_op_q;
    logic [2:0]         fw_chan_q;
    logic [1:0]         fw_way_q;
    logic [11:0]        fw_blk_q;
    logic [7:0]         fw_pg_q;
    logic [3:0]         fw_rop_q;
    logic [5:0]         fw_txid_q;
    logic [31:0]        fw_lpn_q, fw_epoch_q;
    logic [PPN_W-1:0]   fw_ppn_q;
    logic [63:0]        fw_seq_q;
    logic [7:0]         fw_flags_q;
    logic [1:0]         fw_kind_q;
    logic [FW_AW-1:0]   fw_ra;
    logic [31:0]        fw_rd;
    logic               recv_fw_q;        // the entry being received is a RELOC (data on s_fwd)
    logic               fw_acc;           // RELOC enters the table this cycle
    // table full / empty / all issued as pointer compares (no subtraction: a carry chain on the
    // completion FSM's and the issue rule's paths)
    logic               tbl_full, tbl_empty, all_issued;
    assign tbl_full    = acc_ptr_q[WIN_W-1:0] == cpl_ptr_q[WIN_W-1:0] && acc_ptr_q[WIN_W] != cpl_ptr_q[WIN_W];
    assign tbl_empty   = acc_ptr_q == cpl_ptr_q;
    assign all_issued  = acc_ptr_q == iss_ptr_q;
    assign fw_acc      = (fw_reloc_req || mg_acc_req) && !recv_q && !tbl_full && !rst && !(SL && (sl_busy || sl_open));
    // (an open log page: only a record or a transaction's data page is taken, README "S-Log"
    // "Packing"; anything else waits for its seal)
    logic               wb_beside;        // the request on s_wb may be taken beside an open log page
    assign wb_beside   = sl_rec_st || (!s_wb_op && s_wb_rec == RC_NONE && s_wb_txid != 6'd0 && !sl_cont);
    assign s_wb_ready  = !recv_q && !tbl_full && !rst && !fw_reloc_req && !mg_acc_req && !wb_hold && !(SL && sl_busy) &&
                         !(SL && mg_blk && sl_rec_st) && !(SL && sl_open && !wb_beside);
    assign acc_fire    = s_wb_valid && s_wb_ready;
    // a request that takes a table entry (its seq) at acceptance: every one but an S-Log record, whose
    // log pages take theirs as they enter the table (README "S-Log record"; sl_acc, sl_ab_acc)
    logic               acc_take;
    assign acc_take    = acc_fire && !(SL && sl_rec_st);
    assign s_wbd_ready = (recv_q && !recv_fw_q) || (SL && sl_wbd_ready);
    assign s_fwd_ready = (recv_q && recv_fw_q && !recv_mg_q) || fw_fwd_take;
    assign wbd_fire    = recv_q && (recv_mg_q ? (ur_rdd_valid && mg_rdd) : recv_fw_q ? s_fwd_valid : s_wbd_valid);
    assign mem_we      = wbd_fire || (SL && sl_mem_we);
    assign mem_wa      = (SL && sl_mem_we) ? sl_mem_wa : MEM_AW'(32'(recv_ent_q) * 32'(PW) + 32'(recv_w_q));
    assign next_seq    = seq_q;
    assign cpl_seq     = cpl_seq_q;
    // open transactions as the request stream shows them (checkpoint support): a page with txid t
    // and no commit / abort mark opens t (its seq kept) unless t is open; a mark or record of t
    // (commit mark, commit record, abort record) closes t
    logic [63:0]        txo_q;
    logic [63:0]        txs_mem [64];
    assign txs_open = txo_q[txs_addr];
    assign txs_seq  = txs_mem[txs_addr];
    always_ff @(posedge clk) begin
        if (rst) begin
            txo_q <= '0;
        end else if (acc_fire && s_wb_txid != 6'd0) begin
            if (s_wb_rec != RC_NONE) begin
                txo_q[s_wb_txid] <= 1'b0;
            end else if (!txo_q[s_wb_txid]) begin
                txo_q[s_wb_txid] <= 1'b1;
                txs_mem[s_wb_txid] <= seq_q;
            end
        end
    end

    ats_wbuf_mem #(.DEPTH(MEM_DEPTH)) u_mem (
        .clk, .wr_en(mem_we), .wr_addr(mem_wa),
        .wr_data((SL && sl_mem_we) ? sl_mem_wd : recv_mg_q ? ur_rdd_data : recv_fw_q ? s_fwd_data : s_wbd_data),
        .rd_addr(mem_ra), .rd_data(mem_rd)
    );
    // per-tx error: the first failed TX_WRITE's status (TX_FULL, INDEX_FULL, ...), until the tx's
    // commit or abort completes. A commit of such a tx is written and applied as an abort.
    logic [63:0]        txe_v_q;
    logic [3:0]         txe_st_q [64];
    // per tx: a commit / abort (mark or record) issued and not completed (`txr_q`: no early
    // TX_WRITE is sent meanwhile, so none reaches the engine before a COMMIT / ABORT that precedes
    // it in seq order); t takes the late path (`txl_q`: TX_WRITEs at completion, commit issued when
    // every earlier request has completed: the old rule) until its commit / abort completes
    logic [63:0]        txr_q, txl_q;
    // early TX_WRITEs: queued at issue {entry, ppn}, sent through the remap request register
    // (tag RT_TW + entry), answered out of the table's order; tw_out = queued or unanswered
    localparam logic [7:0] RT_TW = 8'h40;
    logic [WIN_W+PPN_W-1:0] tw_mem [WIN];
    logic [WIN_W:0]     tw_rd_q, tw_wr_q;
    logic               tw_ne, tw_go, tw_push, rsp_tw;
    logic [WIN_W-1:0]   tw_e, rsp_tw_e;
    logic [PPN_W-1:0]   tw_ppn;
    assign tw_ne = tw_rd_q != tw_wr_q;
    assign {tw_e, tw_ppn} = tw_mem[tw_rd_q[WIN_W-1:0]];
    assign rsp_tw_e = s_rsp_tag[WIN_W-1:0];
    // fixes: a tx page whose early-TX_WRITten program failed was programmed again at `nppn`; t's
    // table holds `fppn`. At t's COMMIT: LOOKUP(lpn), MAP_WRITE(lpn, nppn) if it gives fppn (no later
    // page of t superseded it); at t's ABORT dropped. Until then a lookup answer fppn reads nppn.
    // FIXN slots, reserved at early issue (early_pend_q + fixes < FIXN), so they never run out.
    localparam int FIXN = WIN;
    localparam int FX_W = $clog2(FIXN);
    logic               fx_v    [FIXN];
    logic [5:0]         fx_t    [FIXN];
    logic [31:0]        fx_lpn  [FIXN];
    logic [PPN_W-1:0]   fx_fppn [FIXN];
    logic [PPN_W-1:0]   fx_nppn [FIXN];
    logic [WIN_W:0]     fx_cnt_q;           // valid fixes
    logic [WIN_W:0]     early_pend_q;       // early tx pages (no mark) issued, not completed
    logic [PPN_W-1:0]   lk_ppn_fx;          // a lookup's answer, a fix's failed page redirected

    // ---------------------------------------------------------------------------------------------
    // dies: open block and next block
    logic               op_v  [NDIE];
    logic [11:0]        op_blk[NDIE];
    logic [8:0]         op_pg [NDIE];
    logic               nx_v  [NDIE];
    logic [11:0]        nx_blk[NDIE];
    logic [DIE_W-1:0]   rr_q;             // die the next page goes to (round robin, channel first)
    // die d = chan * WAYS + way; the pointer steps channel first: (0,0) (1,0) .. (C-1,0) (0,1) ..,
    // so consecutive pages use different channels and their transfers overlap (way first made two
    // consecutive pages share a channel: the second waited for the first's page transfer)
    function automatic logic [DIE_W-1:0] rr_next(input logic [DIE_W-1:0] d);
        if (32'(d) + WAYS < NDIE) rr_next = DIE_W'(32'(d) + WAYS);
        else                      rr_next = DIE_W'((32'(d) % WAYS + 1) % WAYS);
    endfunction

    logic [31:0]        free_die;
    logic               free_ok;
    assign free_die = 32'(s_free_chan) * 32'(WAYS) + 32'(s_free_way);
    assign free_ok  = (32'(s_free_chan) < NUM_CHAN) && (32'(s_free_way) < WAYS) && (32'(s_free_block) < BLOCKS);
    assign s_free_ready = !rst && (!free_ok || !nx_v[free_die[DIE_W-1:0]]);
    always_comb for (int d = 0; d < NDIE; d++) blk_need[d] = !nx_v[d];

    // ---------------------------------------------------------------------------------------------
    // retry FIFO (entries whose program failed), bad-block FIFO
    logic [WIN_W-1:0]   rt_mem [WIN];
    logic [WIN_W:0]     rt_rd_q, rt_wr_q;
    logic               rt_empty;
    // the FIFO's state as the issue unit reads it, registered (timing: the pointer compare and the
    // head's LUT-RAM read began the issue priority, the backend's slowest path at seed 3): rt_ne_q
    // = not empty, rt_one_q = one entry, rt_head_q = rt_mem[rt_rd_q], each written with the
    // cycle's push and pop (exact copies, asserted; no cycle is added)
    logic               rt_ne_q, rt_one_q;
    logic [WIN_W-1:0]   rt_head_q;
    assign rt_empty = !rt_ne_q;

    localparam int BADQ = 4;
    logic [16:0]        bq_mem [BADQ];    // {chan 3, way 2, block 12}
    logic [2:0]         bq_rd_q, bq_wr_q;
    logic               bq_full, bq_empty;
    logic               bq_full_q;        // (bq_wr_q - bq_rd_q) == BADQ, registered (s_ncpl_ready: timing; asserted)
    assign bq_empty = bq_rd_q == bq_wr_q;
    assign bq_full  = bq_full_q;
    assign m_bad_valid = !bq_empty;
    assign {m_bad_chan, m_bad_way, m_bad_block} = bq_mem[bq_rd_q[1:0]];

    // ---------------------------------------------------------------------------------------------
    // NAND request output register (programs and the read), stable until taken
    logic               nq_v_q;
    logic [7:0]         nq_tag_q, nq_page_q, nq_slot_q;
    logic [1:0]         nq_op_q, nq_way_q;
    logic [2:0]         nq_chan_q;
    logic [11:0]        nq_blk_q;
    logic               nq_head_q, nq_prio_q;
    assign m_nreq_valid = nq_v_q;
    assign m_nreq_tag = nq_tag_q;   assign m_nreq_op = nq_op_q;     assign m_nreq_chan = nq_chan_q;
    assign m_nreq_way = nq_way_q;   assign m_nreq_block = nq_blk_q; assign m_nreq_page = nq_page_q;
    assign m_nreq_head = nq_head_q; assign m_nreq_prio_read = nq_prio_q; assign m_nreq_slot = nq_slot_q;
    logic               nq_free;
    assign nq_free = !nq_v_q || m_nreq_ready;

    // ---------------------------------------------------------------------------------------------
    // firmware port (ats_backend_fw, README "Firmware port"): its requests to the table, the issue
    // unit and the remap request register, granted here (signals declared with the table)
    ats_backend_fw #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .PPN_W(PPN_W),
        .SL(SLOG)
    ) u_fw (
        .clk, .rst,
        .s_fw_valid, .s_fw_ready, .s_fw_op, .s_fw_chan, .s_fw_way, .s_fw_block, .s_fw_page, .s_fw_rop,
        .s_fw_txid, .s_fw_lpn, .s_fw_ppn, .s_fw_seq, .s_fw_epoch, .s_fw_flags, .s_fw_kind,
        .s_fwd_valid, .s_fwd_data, .s_fwd_last, .fwd_take(fw_fwd_take),
        .m_fwr_valid, .m_fwr_ready, .m_fwr_status, .m_fwr_data, .m_fwr_last, .m_fwr_ppn, .m_fwr_mapped,
        .fw_op(fw_op_q), .fw_chan(fw_chan_q), .fw_way(fw_way_q), .fw_blk(fw_blk_q), .fw_pg(fw_pg_q),
        .fw_rop(fw_rop_q), .fw_txid(fw_txid_q), .fw_lpn(fw_lpn_q), .fw_ppn(fw_ppn_q), .fw_seq(fw_seq_q),
        .fw_epoch(fw_epoch_q), .fw_flags(fw_flags_q), .fw_kind(fw_kind_q),
        .fw_ra, .fw_rd,
        .nq_req(fw_nq_req), .nq_erase(fw_nq_erase), .nq_take(i_fw), .nq_wait(fw_nq_wait), .nc_valid(nc_fw),
        .nrd_req(fw_nrd_req), .nrd_ppn(fw_nrd_ppn), .nrd_take(i_nrd), .nrd_ncpl_valid(ncpl_read),
        .nrd_cpl(fw_nrd_cpl), .ncpl_status(s_ncpl_status), .ncpl_bad_mark(s_ncpl_bad_mark),
        .s_ndata_valid, .s_ndata_data, .s_ndata_last, .nd_host(rd_nd_host || nd_sl), .nd_ready(fw_nd_ready),
        .rq_req(fw_rq_req), .rq_take(fw_rq_go),
        .rsp_valid(rsp_fw), .rsp_status(s_rsp_status), .rsp_ppn(s_rsp_ppn), .rsp_mapped(s_rsp_mapped),
        .reloc_req(fw_reloc_req), .reloc_acc(fw_acc_go), .reloc_done(c_reloc_done),
        .reloc_status(c_status_q), .reloc_ppn(c_ppn_q),
        .seq_idle(tbl_empty && !acc_fire && !recv_q && !(SL && (sl_busy || sl_open))), .seqset(fw_seqset),
        .sl_req(fw_sl_req), .sl_done(fw_sl_done), .sl_status(fw_sl_status), .sl_data(fw_sl_data),
        .sl_ppn(fw_sl_ppn), .sl_mapped(fw_sl_mapped),
        .fo_free, .busy(fw_busy), .perr(fw_perr)
    );

    // ---------------------------------------------------------------------------------------------
    // host reads (ats_backend_read, README "Read miss"): lookups and NAND READs in s_rd order
    // through this module's request registers, pages delivered in any order
    logic                   rd_lk_valid, rd_nrd_valid, rd_nd_host, rd_ncpl_ok, rd_ncpl_good;
    logic                   rd_lk_pending, rd_nand_pending, rd_busy;
    logic [3:0]             rd_lk_op;
    logic [5:0]             rd_lk_txid;
    logic [31:0]            rd_lk_lpn;
    logic [RS_W-1:0]        rd_nrd_slot;
    logic [PPN_W-1:0]       rd_nrd_ppn;
    logic [2:0]             rd_perr;
    // while a firmware ERASE waits, no read is accepted, and the ERASE goes to NAND only once every
    // accepted read has its NAND READ issued (per-die order: the read of a page is never behind the
    // erase of its block)
    logic                   erase_wait;
    // the read unit's request and page ports (S-Log: the read ids 0xFD / 0xFC are answered beside it)
    logic                   ur_s_rd_valid, ur_s_rd_ready, ur_rdd_valid, ur_rdd_ready, ur_rdd_last;
    logic [31:0]            ur_rdd_data;
    logic [7:0]             ur_rdd_status, ur_rdd_tag;
    assign erase_wait = fw_nq_req && fw_nq_erase;
    // the S-Log read merge's ports of the read unit (g_slog; tied off with SLOG = 0)
    logic [RD_SLOTS-1:0]    rm_hold, rm_bad, rm_fin;
    logic                   rm_we, rm_wok, rm_qz, rm_qok;
    logic [RS_W+$clog2(PW)-1:0] rm_wa;
    logic [31:0]            rm_wd;
    logic [RS_W-1:0]        rm_qs, rm_acc_s, rm_lk_s;
    ats_backend_read #(.PAGE_BYTES(PAGE_BYTES), .RD_SLOTS(RD_SLOTS), .PPN_W(PPN_W), .MG(SLOG)) u_read (
        .clk, .rst,
        .s_rd_valid(ur_s_rd_valid), .s_rd_ready(ur_s_rd_ready), .s_rd_lpn(ur_rd_lpn), .s_rd_txid(ur_rd_txid),
        .s_rd_tag(ur_rd_tag), .hold(erase_wait),
        .m_rdd_valid(ur_rdd_valid), .m_rdd_ready(ur_rdd_ready), .m_rdd_data(ur_rdd_data), .m_rdd_last(ur_rdd_last),
        .m_rdd_status(ur_rdd_status), .m_rdd_tag(ur_rdd_tag),
        .m_lk_valid(rd_lk_valid), .m_lk_ready(rq_free), .m_lk_op(rd_lk_op), .m_lk_txid(rd_lk_txid),
        .m_lk_lpn(rd_lk_lpn),
        .s_lk_valid(rsp_rd), .s_lk_status(s_rsp_status), .s_lk_ppn(lk_ppn_fx), .s_lk_mapped(s_rsp_mapped),
        .s_lk_from_tx(s_rsp_from_tx),
        .m_nrd_valid(rd_nrd_valid), .m_nrd_ready(nq_free), .m_nrd_slot(rd_nrd_slot), .m_nrd_ppn(rd_nrd_ppn),
        .s_ndata_valid, .s_ndata_data, .s_ndata_last, .s_ndata_tag, .s_ndata_widx, .nd_host(rd_nd_host),
        .ncpl_valid(nc_rb), .ncpl_slot(s_ncpl_tag[RS_W-1:0]), .ncpl_status(s_ncpl_status),
        .ncpl_ok(rd_ncpl_ok), .ncpl_good(rd_ncpl_good),
        .lk_pending(rd_lk_pending), .nand_pending(rd_nand_pending), .busy(rd_busy), .perr(rd_perr),
        .mg_hold(rm_hold), .mg_bad(rm_bad), .mg_we(rm_we), .mg_wa(rm_wa), .mg_wd(rm_wd), .q_slot(rm_qs),
        .mg_wok(rm_wok), .acc_slot(rm_acc_s), .lk_slot(rm_lk_s), .fin_vec(rm_fin), .q_zero(rm_qz), .q_ok(rm_qok)
    );

    // ---------------------------------------------------------------------------------------------
    // completion FSM
    typedef enum logic [2:0] {C_IDLE, C_REQ, C_WAIT, C_VC_NEW, C_ACK, C_FIX} cpl_state_e;
    cpl_state_e         c_st_q;
    logic [7:0]         c_status_q;
    logic [PPN_W-1:0]   c_ppn_q;          // the entry's page
    logic [15:0]        c_cnt_q;          // COMMIT of a commit record: entries applied (m_wbc_ppn of the record)
    // remap operations of the oldest entry, one at a time (c_op_q with c_lpn_q / c_rppn_q, sent in
    // C_REQ, answered in C_WAIT): its mapping (MAP_WRITE, UNMAP, a late TX_WRITE, a RELOC's LOOKUP
    // then MAP_WRITE), or a commit / abort: COMMIT or ABORT; after a mark's COMMIT, the mark's own
    // MAP_WRITE if its TX_WRITE failed or its first page failed (c_mapafter_q: the page is the tx's
    // last, so the L2P result is the one recovery's replay gives); after any COMMIT the tx's fixes
    // (C_FIX: LOOKUP, MAP_WRITE if it gives the failed page), after an ABORT they are dropped
    logic               c_mapafter_q;
    logic               c_fixph_q;        // a fix's LOOKUP / MAP_WRITE is in flight
    logic               c_abort_q;        // C_FIX drops the fixes (ABORT), else applies them
    logic [FX_W-1:0]    c_fx_q;           // the fix being applied
    logic [3:0]         c_op_q;           // operation to send / waited for
    logic [31:0]        c_lpn_q;          // its lpn and ppn
    logic [PPN_W-1:0]   c_rppn_q;
    logic [PPN_W-1:0]   c_vppn_q;         // page of the next C_VC_NEW (+1)
    cpl_state_e         c_after_vc_q;     // state after C_VC_NEW

    // remap request output register (the completion FSM, the host reads and the firmware port share it)
    logic               rq_v_q;
    logic [3:0]         rq_op_q;
    logic [7:0]         rq_tag_q;
    logic [5:0]         rq_txid_q;
    logic [31:0]        rq_lpn_q;
    logic [PPN_W-1:0]   rq_ppn_q;
    assign m_req_valid = rq_v_q;
    assign m_req_op = rq_op_q; assign m_req_tag = rq_tag_q; assign m_req_txid = rq_txid_q;
    assign m_req_lpn = rq_lpn_q; assign m_req_ppn = rq_ppn_q;
    logic               rq_free;
    assign rq_free = !rq_v_q || m_req_ready;
    assign s_rsp_ready = 1'b1;
    // commit log stream (the remap engine's applied mappings): with SLOG = 1 each is RELEASEd in the
    // S-Log index (g_slog); else taken and not used
    assign s_map_ready = SL ? sl_mp_take : 1'b1;

    // completion output register
    logic               wc_v_q;
    logic [7:0]         wc_tag_q, wc_status_q;
    logic [15:0]        wc_ppn_q;
    assign m_wbc_valid = wc_v_q; assign m_wbc_tag = wc_tag_q;
    assign m_wbc_status = wc_status_q; assign m_wbc_ppn = wc_ppn_q;

    // ---------------------------------------------------------------------------------------------
    // valid-page counts (ats_backend_vcount): one event a cycle, the completion FSM's first
    logic               cpl_vc_ev;        // completion FSM's event this cycle
    logic               cpl_vc_inc;
    logic [PPN_W-1:0]   cpl_vc_ppn;
    logic               vc_init_busy;
    ats_backend_vcount #(
        .NDIE(NDIE), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .PPN_W(PPN_W)
    ) u_vcount (
        .clk, .rst,
        .cpl_ev(cpl_vc_ev), .cpl_inc(cpl_vc_inc), .cpl_ppn(cpl_vc_ppn),
        .s_inval_valid, .s_inval_ready, .s_inval_ppn,
        .vc_addr, .vc_data, .init_busy(vc_init_busy)
    );

    // ---------------------------------------------------------------------------------------------
    // issue: next entry (retry first, else in order) to the round-robin die
    logic               iss_have;
    logic               iss_txpg;         // the in-order entry is a data page with a txid (mark included)
    logic               iss_early;        // ... whose TX_WRITE goes early (at this issue)
    // the in-order entry's fields, registered with iss_ok_q (timing: iss_ptr -> the entry's txid ->
    // the per-tx flags -> the early-TX_WRITE queue's write enable was the slowest path at seed 2):
    // they are read only when iss_ok_q && !iss_mv_q, i.e. the entry was queued in the cycle before
    // (so not being accepted) and the issue pointer did not move: its fields did not change
    // (asserted).
    logic [5:0]         iss_txid_q;
    logic [1:0]         iss_rec_q;
    logic               iss_txpg_q;
    logic               iss_sl_q;         // ... is an S-Log record's log page
    assign iss_txpg  = iss_txpg_q;
    assign iss_early = iss_txpg && !txl_q[iss_txid_q] &&
                       (iss_rec_q == RC_CMARK ? !txe_v_q[iss_txid_q] : 32'(fx_cnt_q) + 32'(early_pend_q) < FIXN);
    logic [WIN_W-1:0]   iss_ent;
    logic               iss_retry;
    // the in-order entry's issue rule, registered (timing: iss_ptr -> the entry's state, record kind
    // and txid -> a 64-bit per-tx flag -> the issue priority -> a die's open block was the backend's
    // slowest path). It is computed from the state of the cycle before; between two cycles it can go
    // from true to false only through an in-order issue, which moves iss_ptr (iss_mv_q: the register
    // then describes the previous entry and is not used), so a true iss_ok_q is never stale. Cost: an
    // entry is issued a cycle later than it could be, and in-order issues are two cycles apart.
    logic               iss_ok_q, iss_mv_q;
    logic               die_ok;
    logic               any_block;
    always_comb begin
        iss_retry = rt_ne_q;
        iss_ent   = iss_retry ? rt_head_q : iss_e;
        // a commit / abort (record or COMMIT-marked page) is issued once every early TX_WRITE has
        // been answered and no commit / abort is in flight: the statuses of its tx's own TX_WRITEs
        // are known, so a doomed commit is written as an abort (a tx on the late path: once every
        // earlier request has completed, the old rule). A tx data page is issued while a commit /
        // abort is in flight (issue 37): its early TX_WRITE waits in the queue instead (tw_go), so
        // the engine still gets every TX_WRITE after each COMMIT / ABORT that precedes it in seq
        // order, as when all went at completion (TX_FULL / INDEX_FULL answer exactly as they did)
        iss_have  = iss_retry || (iss_ok_q && !iss_mv_q);
        die_ok    = op_v[rr_q];
        any_block = 1'b0;
        for (int d = 0; d < NDIE; d++) any_block = any_block | op_v[d] | nx_v[d];
    end
    assign no_free_block   = iss_have && !any_block;

    // ---------------------------------------------------------------------------------------------
    // page fetch DMA (ats_backend_fetch); the page's spare fields by its registered entry
    logic [WIN_W-1:0]   f_meta_e;
    logic               f_meta_fw;
    logic [31:0]        f_meta_epoch, f_meta_info;
    assign f_meta_epoch = f_meta_fw ? fw_epoch_q : (SL && e_sl[f_meta_e]) ? e_lpgn[f_meta_e] :
                          e_fw[f_meta_e] ? 32'(e_old[f_meta_e]) : {16'h0000, e_epoch[f_meta_e]};
    // a log page (persistence §10.1): kind 1, flag SLOG (bit 5) alone, txid 0
    assign f_meta_info  = f_meta_fw ? {8'h00, fw_flags_q, 6'd0, fw_kind_q, 2'b00, fw_txid_q}
                        : (SL && e_sl[f_meta_e]) ? {8'h00, 8'h20, 6'd0, 2'd1, 2'b00, 6'd0}
                        : {8'h00, e_flags[f_meta_e], 6'd0, e_kind[f_meta_e], 2'b00, e_txid[f_meta_e]};
    ats_backend_fetch #(.NUM_CHAN(NUM_CHAN), .PAGE_BYTES(PAGE_BYTES), .WIN(WIN)) u_fetch (
        .clk, .rst,
        .s_nfetch_valid, .s_nfetch_ready, .s_nfetch_chan, .s_nfetch_slot,
        .m_ndata_valid, .m_ndata_ready, .m_ndata_data, .m_ndata_last,
        .mem_ra, .mem_rd, .fw_ra, .fw_rd,
        .meta_e(f_meta_e), .meta_fw(f_meta_fw),
        .meta_zero(!f_meta_fw && e_trim[f_meta_e]),
        .meta_lpn(f_meta_fw ? fw_lpn_q : e_lpn[f_meta_e]),
        .meta_seq(f_meta_fw ? fw_seq_q : e_seq[f_meta_e]),
        .meta_epoch(f_meta_epoch), .meta_info(f_meta_info)
    );

    // ---------------------------------------------------------------------------------------------
    // NAND completion and remap response decode
    logic               ncpl_fire;
    logic               ncpl_prog, ncpl_read;
    assign s_ncpl_ready = !rst && !bq_full;
    assign ncpl_fire    = s_ncpl_valid && s_ncpl_ready;
    assign ncpl_prog    = ncpl_fire && 32'(s_ncpl_tag) < WIN;
    logic               ncpl_fw;
    assign ncpl_fw      = ncpl_fire && s_ncpl_tag == FW_TAG;
    assign ncpl_read    = ncpl_fire && s_ncpl_tag == RD_TAG;
    logic               ncpl_rb;          // a host read's completion (tag 0x80 + slot)
    logic               ncpl_sl;          // the read merge's log page READ's completion (SLOG = 1)
    assign ncpl_sl      = SL && ncpl_fire && s_ncpl_tag == SL_TAG;
    assign ncpl_rb      = ncpl_fire && s_ncpl_tag[7:RS_W] == RB_TAG[7:RS_W];
    // a host read's words always go into the reorder memory; an NREAD's to m_fwr (the spare words
    // but the last one through the response register, the last one held for the completion)
    assign s_ndata_ready = rd_nd_host || fw_nd_ready || nd_sl;

    logic               rsp_cpl, rsp_rd;
    assign rsp_cpl = s_rsp_valid && s_rsp_tag == RT_CPL;
    assign rsp_rd  = s_rsp_valid && s_rsp_tag == RT_RD;
    logic rsp_fw;
    assign rsp_fw  = s_rsp_valid && s_rsp_tag == RT_FW;
    assign rsp_tw  = s_rsp_valid && s_rsp_tag[7:6] == RT_TW[7:6] && 32'(s_rsp_tag[5:0]) < WIN;
    localparam logic [7:0] RT_SL = 8'h04;               // remap tag: an S-Log fragment's base LOOKUP
    localparam logic [7:0] RT_RL = 8'h05;               // remap tag: a RESERVE's LOOKUP (mapped?)
    logic rsp_sl;
    assign rsp_sl  = SL && s_rsp_valid && (s_rsp_tag == RT_SL || s_rsp_tag == RT_RL);

    // completion FSM outputs for the valid counts
    always_comb begin
        cpl_vc_ev  = 1'b0;
        cpl_vc_inc = 1'b0;
        cpl_vc_ppn = c_vppn_q;
        if (c_st_q == C_WAIT && rsp_cpl && s_rsp_status == 4'd0 && s_rsp_mapped &&
            (c_op_q == R_MAP_WRITE || c_op_q == R_UNMAP)) begin
            cpl_vc_ev  = 1'b1;             // superseded page
            cpl_vc_ppn = s_rsp_ppn;
        end else if (c_st_q == C_VC_NEW) begin
            cpl_vc_ev  = 1'b1;             // the new page
            cpl_vc_inc = 1'b1;
        end
    end

    logic [WIN_W-1:0] cp;
    assign cp = cpl_ptr_q[WIN_W-1:0];
    // The oldest entry's fields that its completion decides on, registered (timing: cpl_ptr ->
    // e_st / e_tw / e_twv / e_rec ... [cp] (8:1 selects) -> the C_IDLE branch -> a fix slot's write
    // enable was the backend's slowest path). cm_*_q equals e_*[cp] in every cycle (asserted): its
    // next value is the entry's at the next cp (cp + 1 on c_ack, whose fields come from the table,
    // else the mirror itself) with this cycle's writes to that entry applied, in the request
    // table's order (below, "the oldest entry's mirror"). Every read of these fields at cp uses it.
    logic               cm_done_q;        // cm_done_q
    logic               cm_tw_q, cm_twv_q, cm_fx_q, cm_doom_q, cm_trim_q, cm_fw_q;
    logic [3:0]         cm_tws_q;
    logic [1:0]         cm_rec_q;
    logic [5:0]         cm_txid_q;
    // cm_doom_q's issue update a cycle late (Fmax: the NAND request ready -> the issue rule (i_prog)
    // -> cm_doom_q was the board's slowest path): an issue of a commit / abort record at the oldest
    // entry sets cm_dfix_q and keeps its doom bit in cm_dv_q (the value e_doom gets); the next cycle
    // loads it. In that cycle cm_doom_q is stale, harmless: the issue cleared cm_done_q, so no
    // commit is decided (C_IDLE needs cm_done_q, c_ack the entry done) until the NAND completion,
    // many cycles later (asserted below).
    logic               cm_dfix_q, cm_dv_q;
    // fixes: the first one of the oldest entry's tx, the first free slot, a lookup answer redirected
    logic               fx_hit, fx_free_ok;
    logic [FX_W-1:0]    fx_hit_i, fx_free_i;
    // the C_FIX search registered (timing: cpl_ptr -> cm_txid_q -> FIXN compares -> first hit ->
    // the fix's flags was the backend's slowest path after the issue rule and the delivery pick);
    // C_FIX waits a cycle before each step (c_fxw_q) so that these describe the current table
    // The first free fix slot is registered too: C_IDLE, the one state that takes a slot, never
    // follows a cycle that wrote the fix table (C_IDLE and C_ACK write none; every state that
    // writes one goes on to C_VC_NEW, C_FIX or C_REQ), so fx_free_i_q is current there (asserted)
    logic               fx_hit_q, c_fxw_q;
    logic [FX_W-1:0]    fx_hit_i_q, fx_free_i_q;
    always_ff @(posedge clk) begin
        fx_hit_q    <= fx_hit;
        fx_hit_i_q  <= fx_hit_i;
        fx_free_i_q <= rst ? '0 : fx_free_i;   // (after reset every slot is free)
    end
    always_comb begin
        fx_hit = 1'b0; fx_hit_i = '0; fx_free_ok = 1'b0; fx_free_i = '0;
        lk_ppn_fx = s_rsp_ppn;
        for (int i = FIXN - 1; i >= 0; i--) begin
            if (fx_v[i] && fx_t[i] == cm_txid_q) begin fx_hit = 1'b1; fx_hit_i = FX_W'(i); end
            if (!fx_v[i]) begin fx_free_ok = 1'b1; fx_free_i = FX_W'(i); end
            if (fx_v[i] && s_rsp_mapped && fx_fppn[i] == s_rsp_ppn) lk_ppn_fx = fx_nppn[i];
        end
    end

    // ---------------------------------------------------------------------------------------------
    // the units' events: each register below is written by one always_ff (its unit); a unit that
    // changes another's state raises one of these (combinational, from registers and inputs)
    // NAND completions of programs: done, failed (re-program), or stray
    logic [WIN_W-1:0]   nc_e;             // the program's table entry
    logic               nc_ok, nc_fail, nc_stray;
    logic               nc_fw;            // a firmware ERASE / PROGRAM completes
    logic               nc_rb;            // a host read's completion ...
    logic               nc_unknown;       // a completion of no known tag
    assign nc_e       = s_ncpl_tag[WIN_W-1:0];
    assign nc_stray   = ncpl_prog && e_st[nc_e] != E_ISSUED;
    assign nc_ok      = ncpl_prog && e_st[nc_e] == E_ISSUED && s_ncpl_status == N_OK;
    assign nc_fail    = ncpl_prog && e_st[nc_e] == E_ISSUED && s_ncpl_status != N_OK;
    assign nc_fw      = !ncpl_prog && ncpl_fw && fw_nq_wait;
    assign nc_rb      = !ncpl_prog && !(ncpl_fw && fw_nq_wait) && ncpl_rb;
    assign nc_unknown = !ncpl_prog && !(ncpl_fw && fw_nq_wait) && !ncpl_rb && ncpl_fire && !ncpl_read &&
                        !(ncpl_sl && sl_nw);
    // issue: the NAND request register goes to a host read, else the firmware NREAD, else a
    // firmware ERASE / PROGRAM, else the next table entry (or its die takes its next block, or the
    // round-robin pointer steps); with nothing to issue, a die opens its next block ahead of time
    logic               i_rb, i_nrd, i_fw, i_iss, i_idle, i_prog, i_open, i_skip;
    logic               i_sl;             // the read merge's log page READ (SLOG = 1), after host reads
    assign i_rb   = nq_free && rd_nrd_valid;
    assign i_sl   = SL && !i_rb && nq_free && sl_nrd_valid;
    assign i_nrd  = !i_rb && !i_sl && nq_free && fw_nrd_req;
    assign i_fw   = !i_rb && !i_sl && !i_nrd && nq_free && fw_nq_req && !(erase_wait && rd_nand_pending);
    assign i_iss  = !i_rb && !i_sl && !i_nrd && !i_fw && nq_free && iss_have;
    assign i_idle = !i_rb && !i_sl && !i_nrd && !i_fw && !i_iss && !iss_have;
    // (the same as i_iss && die_ok, with the NAND request register's ready last: registers first)
    logic               prog_ok;
    assign prog_ok = !rd_nrd_valid && !(SL && sl_nrd_valid) && !fw_nrd_req && !(fw_nq_req && !(erase_wait && rd_nand_pending)) &&
                     iss_have && die_ok;
    assign i_prog = nq_free && prog_ok;
    assign i_open = (i_iss && !die_ok && nx_v[rr_q]) || (i_idle && !op_v[rr_q] && nx_v[rr_q]);
    assign i_skip = i_iss && !die_ok && !nx_v[rr_q];
    // the in-order entry's issue rule, registered (iss_ok_q, above). Per transaction (issue 39):
    // a record / marked page of t waits only for t's own early TX_WRITEs (an entry's is queued or
    // unanswered while e_tw && !e_twv: the table's own registers, WIN compares of the txid) and
    // for no commit / abort of t in flight; a data page of t waits while a commit / abort of t is
    // in flight (the write buffer sends none then: its rule; so t's TX_WRITEs never pass t's
    // COMMIT / ABORT, and no TX_WRITE waits in the queue for another tx's commit)
    logic               iss_tw_pend;      // an early TX_WRITE of the in-order entry's tx is outstanding
    always_comb begin
        iss_tw_pend = 1'b0;
        for (int i = 0; i < WIN; i++)
            if (e_tw[i] && !e_twv[i] && e_txid[i] == e_txid[iss_e]) iss_tw_pend = 1'b1;
    end
    always_ff @(posedge clk) begin
        iss_ok_q <= !all_issued && e_st[iss_e] == E_QUEUED &&
                    (e_rec[iss_e] != RC_NONE ?
                         (txl_q[e_txid[iss_e]] ? iss_ptr_q == cpl_ptr_q
                                               : (!iss_tw_pend && !txr_q[e_txid[iss_e]])) :
                     !(e_txid[iss_e] != 6'd0 && txr_q[e_txid[iss_e]]));
        iss_mv_q <= i_prog && !iss_retry;
        iss_txid_q <= e_txid[iss_e];
        iss_rec_q  <= e_rec[iss_e];
        iss_txpg_q <= e_txid[iss_e] != 6'd0 && !e_trim[iss_e] && !e_fw[iss_e] && !(SL && e_sl[iss_e]);
        iss_sl_q   <= SL && e_sl[iss_e];
        if (rst) begin
            iss_ok_q <= 1'b0;
            iss_mv_q <= 1'b0;
        end
    end
    // firmware port: a RELOC entering the table, a REMAP request granted
    logic               fw_acc_go, fw_rq_go;
    assign fw_acc_go = !acc_fire && fw_acc;
    logic               fw_rq_want, tw_want, c_rq_want;   // the same without rq_free
    assign fw_rq_want = fw_rq_req && c_st_q != C_REQ && !rd_lk_pending;
    assign fw_rq_go   = fw_rq_want && rq_free;
    // early TX_WRITEs: when nobody else wants the remap request register. No TX_WRITE of t is queued
    // while a commit / abort of t is in flight but the marked page's own (the issue rule: t's
    // record waits for t's queue entries, t's pages wait for t's commit), so none passes a COMMIT /
    // ABORT of its tx that precedes it in seq order; another tx's commit in flight holds nothing
    assign tw_want   = tw_ne && c_st_q != C_REQ && !rd_lk_pending && !fw_rq_req;
    assign tw_go     = tw_want && rq_free;
    // completion FSM: its remap request, the oldest entry completed (a RELOC's on m_fwr)
    logic               c_rq_go, c_ack, c_reloc_done;
    logic               c_rack;           // a record of a log page that ends several done, the entry not yet
    assign c_rq_want    = c_st_q == C_REQ && !rd_lk_pending;                 // host read lookups go first
    assign c_rq_go      = c_rq_want && rq_free;
    assign c_ack        = c_st_q == C_ACK && (cm_fw_q ? fo_free : (!wc_v_q || m_wbc_ready)) && !(SL && sl_more);
    assign c_rack       = SL && c_st_q == C_ACK && !cm_fw_q && (!wc_v_q || m_wbc_ready) && sl_more;
    assign c_reloc_done = c_ack && cm_fw_q;

    // ---------------------------------------------------------------------------------------------
    // request table: accept, page words, issue, NAND completion, in-order completion
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int i = 0; i < WIN; i++) begin
                e_st[i] <= E_FREE;
                e_tw[i] <= 1'b0;      // (iss_tw_pend reads every entry's: no power-on contents)
            end
            acc_ptr_q <= '0; cpl_ptr_q <= '0;
            cpl_seq_q <= 64'd0;
            recv_q <= 1'b0; recv_w_q <= '0; recv_ent_q <= '0;
            recv_fw_q <= 1'b0; recv_mg_q <= 1'b0;
        end else begin
            if (acc_take) begin
                e_lpn[acc_e]   <= s_wb_lpn;
                e_txid[acc_e]  <= s_wb_txid;
                e_epoch[acc_e] <= s_wb_epoch;
                e_wtag[acc_e]  <= s_wb_tag;
                e_trim[acc_e]  <= s_wb_op;
                e_rec[acc_e]   <= s_wb_rec;
                e_kind[acc_e]  <= s_wb_op ? 2'd1 : s_wb_kind;
                e_flags[acc_e] <= (s_wb_op && s_wb_rec == RC_NONE) ? F_TRIM : 8'h00;   // records: at issue
                if (s_wb_op && s_wb_rec != RC_NONE) e_lpn[acc_e] <= 32'hFFFF_FFFF;
                e_st[acc_e]    <= s_wb_op ? E_QUEUED : E_RECV;
                e_fw[acc_e]    <= 1'b0;
                e_sl[acc_e]    <= 1'b0;
                e_seq[acc_e]   <= seq_q;
                acc_ptr_q <= acc_ptr_q + 1'b1;
                if (!s_wb_op) begin
                    recv_q <= 1'b1; recv_ent_q <= acc_e; recv_w_q <= '0; recv_fw_q <= 1'b0; recv_mg_q <= 1'b0;
                end
            end else if (fw_acc_go) begin
                // a firmware RELOC: a data page of the log (flag RELOC, the old page in the epoch
                // field), mapped at completion only if its LPN still maps to the old page
                e_lpn[acc_e]   <= fw_lpn_q;
                e_txid[acc_e]  <= 6'd0;
                e_epoch[acc_e] <= 16'd0;
                e_wtag[acc_e]  <= 8'd0;
                e_trim[acc_e]  <= 1'b0;
                e_rec[acc_e]   <= RC_NONE;
                e_kind[acc_e]  <= 2'd0;
                e_flags[acc_e] <= (SL && mg_acc_req) ? (F_RELOC | F_SLOG) : F_RELOC;   // (a MERGE: RELOC | SLOG)
                e_st[acc_e]    <= E_RECV;
                e_fw[acc_e]    <= 1'b1;
                e_sl[acc_e]    <= 1'b0;
                e_old[acc_e]   <= (SL && mg_acc_req) ? mg_base : fw_ppn_q;
                e_seq[acc_e]   <= seq_q;
                acc_ptr_q <= acc_ptr_q + 1'b1;
                recv_q <= 1'b1; recv_ent_q <= acc_e; recv_w_q <= '0; recv_fw_q <= 1'b1; recv_mg_q <= SL && mg_acc_req;
            end else if (SL && (sl_acc || sl_ab_acc)) begin
                // an S-Log record's next log page (its words follow from the unit: sl_mem_we), or
                // the commit record that aborts t for a rejected or doomed record (sl_ab_acc: as the
                // record's request would have been written without the S-Log; queued at once)
                e_lpn[acc_e]   <= 32'hFFFF_FFFF;
                e_txid[acc_e]  <= sl_ab_acc ? sl_t : sl_acc_fin ? sl_pt : 6'd0;
                e_epoch[acc_e] <= sl_ab_acc ? sl_wep : 16'd0;
                e_wtag[acc_e]  <= sl_ab_acc ? sl_wtag : sl_ptag;
                e_trim[acc_e]  <= sl_ab_acc;
                e_rec[acc_e]   <= (sl_ab_acc || sl_acc_fin) ? RC_CREC : RC_NONE;
                e_kind[acc_e]  <= 2'd1;
                e_flags[acc_e] <= 8'h00;
                e_st[acc_e]    <= sl_ab_acc ? E_QUEUED : E_RECV;
                e_fw[acc_e]    <= 1'b0;
                e_sl[acc_e]    <= !sl_ab_acc;
                e_lpgn[acc_e]  <= sl_acc_lpgn;     // (an abort's is not read: e_sl 0)
                e_seq[acc_e]   <= seq_q;
                acc_ptr_q <= acc_ptr_q + 1'b1;
            end
            if (SL && sl_pg_done) e_st[sl_pg_e] <= E_QUEUED;
            if (wbd_fire) begin
                if (32'(recv_w_q) == PW - 1) begin
                    recv_q <= 1'b0;
                    e_st[recv_ent_q] <= E_QUEUED;
                end
                recv_w_q <= recv_w_q + 1'b1;
            end
            if (i_prog) begin
                e_chan[iss_ent] <= 3'(32'(rr_q) / WAYS);
                e_way[iss_ent]  <= 2'(32'(rr_q) % WAYS);
                e_blk[iss_ent]  <= op_blk[rr_q];
                e_pg[iss_ent]   <= 8'(op_pg[rr_q]);
                e_st[iss_ent]   <= E_ISSUED;
                if (!iss_retry && iss_rec_q != RC_NONE) begin
                    // every TX_WRITE of the tx has been answered (early ones), or every earlier
                    // request has completed (late path): the tx's error status is final
                    e_doom[iss_ent]  <= iss_rec_q != RC_AREC && txe_v_q[iss_txid_q];
                    e_flags[iss_ent] <= (iss_rec_q == RC_AREC || txe_v_q[iss_txid_q]) ? F_ABORT : F_COMMIT;
                end
                if (!iss_retry) begin
                    e_tw[iss_ent]  <= iss_early;
                    e_twv[iss_ent] <= 1'b0;
                    e_fx[iss_ent]  <= 1'b0;
                end
            end
            if (nc_ok)        e_st[nc_e] <= E_DONE;
            else if (nc_fail) e_st[nc_e] <= E_QUEUED;     // program failed: programmed again elsewhere
            if (nc_fail && e_tw[nc_e] && !e_fx[nc_e]) begin
                // the page its early TX_WRITE named failed: the tx table holds it (a fix at completion)
                e_fx[nc_e]   <= 1'b1;
                e_fppn[nc_e] <= pack_ppn(e_chan[nc_e], e_way[nc_e], e_blk[nc_e], e_pg[nc_e]);
            end
            if (rsp_tw) begin
                e_twv[rsp_tw_e] <= 1'b1;
                e_tws[rsp_tw_e] <= s_rsp_status;
            end
            if (fw_seqset) cpl_seq_q <= s_fw_seq;         // SEQSET (firmware port, table empty)
            // (a log page that ends several records: the entry's txid is its next record's, README
            // "S-Log" "Packing"; the mirror cm_txid_q follows)
            if (SL && c_rack) e_txid[cp] <= sl_ntx;
            if (c_ack) begin
                e_st[cp] <= E_FREE;
                cpl_ptr_q <= cpl_ptr_q + 1'b1;
                cpl_seq_q <= cpl_seq_q + 64'd1;
            end
        end
    end

    // the oldest entry's mirror (cm_*_q, above): the entry at the next cp, this cycle's writes to it
    // applied in the order of the always_ff above (c_ack writes only e_st[cp], never the next cp's)
    logic [WIN_W-1:0]   cm_e;             // the next cp
    logic               cm_acc, cm_wbd, cm_iss, cm_nc, cm_rsp;   // a write to entry cm_e this cycle
    logic               cm_done_d, cm_tw_d, cm_twv_d, cm_fx_d, cm_doom_d, cm_trim_d, cm_fw_d;
    logic [3:0]         cm_tws_d;
    logic [1:0]         cm_rec_d;
    logic [5:0]         cm_txid_d;
    always_comb begin
        cm_e   = c_ack ? cp + 1'b1 : cp;
        cm_acc = (acc_take || fw_acc_go || (SL && (sl_acc || sl_ab_acc))) && acc_e == cm_e;
        cm_wbd = wbd_fire && 32'(recv_w_q) == PW - 1 && recv_ent_q == cm_e;
        cm_iss = i_prog && iss_ent == cm_e;
        cm_nc  = nc_e == cm_e;
        cm_rsp = rsp_tw && rsp_tw_e == cm_e;
        if (c_ack) begin
            cm_done_d = e_st[cm_e] == E_DONE;
            cm_tw_d = e_tw[cm_e]; cm_twv_d = e_twv[cm_e]; cm_tws_d = e_tws[cm_e]; cm_fx_d = e_fx[cm_e];
            cm_doom_d = e_doom[cm_e]; cm_trim_d = e_trim[cm_e]; cm_rec_d = e_rec[cm_e];
            cm_fw_d = e_fw[cm_e]; cm_txid_d = e_txid[cm_e];
        end else begin
            cm_done_d = cm_done_q;
            cm_tw_d = cm_tw_q; cm_twv_d = cm_twv_q; cm_tws_d = cm_tws_q; cm_fx_d = cm_fx_q;
            cm_doom_d = cm_dfix_q ? cm_dv_q : cm_doom_q; cm_trim_d = cm_trim_q; cm_rec_d = cm_rec_q;
            cm_fw_d = cm_fw_q; cm_txid_d = cm_txid_q;
        end
        if (cm_acc) begin
            cm_done_d = 1'b0;
            cm_trim_d = (acc_take && s_wb_op) || (SL && sl_ab_acc);
            cm_rec_d  = acc_take ? s_wb_rec : (SL && (sl_ab_acc || (sl_acc && sl_acc_fin))) ? RC_CREC : RC_NONE;
            cm_fw_d   = fw_acc_go;
            cm_txid_d = acc_take ? s_wb_txid : (SL && sl_ab_acc) ? sl_t : (SL && sl_acc && sl_acc_fin) ? sl_pt : 6'd0;
        end
        if (cm_wbd) cm_done_d = 1'b0;
        if (cm_iss) begin
            cm_done_d = 1'b0;
            if (!iss_retry) begin cm_tw_d = iss_early; cm_twv_d = 1'b0; cm_fx_d = 1'b0; end
        end
        if (cm_nc && nc_ok)        cm_done_d = 1'b1;
        else if (cm_nc && nc_fail) cm_done_d = 1'b0;
        if (cm_nc && nc_fail && e_tw[nc_e] && !e_fx[nc_e]) cm_fx_d = 1'b1;
        if (cm_rsp) begin cm_twv_d = 1'b1; cm_tws_d = s_rsp_status; end
        if (SL && c_rack) cm_txid_d = sl_ntx;     // the page's next record (README "S-Log" "Packing")
    end
    always_ff @(posedge clk) begin
        // (cm_e is the next cp, so the entry cm_dfix_q marks is cp in the next cycle)
        cm_dfix_q <= !rst && cm_iss && !iss_retry && iss_rec_q != RC_NONE;
        cm_dv_q   <= iss_rec_q != RC_AREC && txe_v_q[iss_txid_q];
        if (rst) begin                    // cp = 0 after reset; in reset the table is written only
            cm_done_q <= 1'b0;            // e_st (E_FREE) and e_tw (0)
            cm_tw_q <= 1'b0; cm_twv_q <= e_twv[0]; cm_tws_q <= e_tws[0]; cm_fx_q <= e_fx[0];
            cm_doom_q <= e_doom[0]; cm_trim_q <= e_trim[0]; cm_rec_q <= e_rec[0];
            cm_fw_q <= e_fw[0]; cm_txid_q <= e_txid[0];
        end else begin
            cm_done_q <= cm_done_d;
            cm_tw_q <= cm_tw_d; cm_twv_q <= cm_twv_d; cm_tws_q <= cm_tws_d; cm_fx_q <= cm_fx_d;
            cm_doom_q <= cm_doom_d; cm_trim_q <= cm_trim_d; cm_rec_q <= cm_rec_d;
            cm_fw_q <= cm_fw_d; cm_txid_q <= cm_txid_d;
        end
    end

    // ---------------------------------------------------------------------------------------------
    // dies: free blocks in, open blocks taken at issue, a failed block closed
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int d = 0; d < NDIE; d++) begin op_v[d] <= 1'b0; nx_v[d] <= 1'b0; op_pg[d] <= '0; end
            rr_q <= '0;
        end else begin
            if (s_free_valid && s_free_ready && free_ok) begin
                nx_v[free_die[DIE_W-1:0]]   <= 1'b1;
                nx_blk[free_die[DIE_W-1:0]] <= s_free_block;
            end
            if (i_prog) begin
                if (32'(op_pg[rr_q]) == PAGES_PER_BLOCK - 1) op_v[rr_q] <= 1'b0;
                op_pg[rr_q] <= op_pg[rr_q] + 9'd1;
                rr_q <= rr_next(rr_q);
            end
            if (i_open) begin
                op_v[rr_q] <= 1'b1; op_blk[rr_q] <= nx_blk[rr_q]; op_pg[rr_q] <= '0;
                nx_v[rr_q] <= 1'b0;
            end
            if (i_skip) rr_q <= rr_next(rr_q);
            if (nc_fail) begin
                for (int d = 0; d < NDIE; d++) begin
                    if (32'(d) == 32'(e_chan[nc_e]) * WAYS + 32'(e_way[nc_e]) && op_blk[d] == e_blk[nc_e])
                        op_v[d] <= 1'b0;
                end
            end
        end
    end

    // ---------------------------------------------------------------------------------------------
    // issue: the NAND request register (a program, or a read: host reads first, then a firmware NREAD)
    always_ff @(posedge clk) begin
        if (rst) begin
            nq_v_q <= 1'b0;
            iss_ptr_q <= '0;
            rt_rd_q <= '0;
        end else begin
            if (nq_v_q && m_nreq_ready) nq_v_q <= 1'b0;
            if (i_rb) begin
                nq_v_q <= 1'b1; nq_tag_q <= RB_TAG | 8'(rd_nrd_slot); nq_op_q <= 2'd0;
                nq_chan_q <= 3'(ppn_die(rd_nrd_ppn) / WAYS); nq_way_q <= 2'(ppn_die(rd_nrd_ppn) % WAYS);
                nq_blk_q <= 12'(ppn_block(rd_nrd_ppn)); nq_page_q <= 8'(ppn_page(rd_nrd_ppn));
                nq_head_q <= 1'b0; nq_prio_q <= 1'b1; nq_slot_q <= 8'd0;
            end else if (i_sl) begin
                nq_v_q <= 1'b1; nq_tag_q <= SL_TAG; nq_op_q <= 2'd0;
                nq_chan_q <= 3'(ppn_die(sl_nrd_ppn) / WAYS); nq_way_q <= 2'(ppn_die(sl_nrd_ppn) % WAYS);
                nq_blk_q <= 12'(ppn_block(sl_nrd_ppn)); nq_page_q <= 8'(ppn_page(sl_nrd_ppn));
                nq_head_q <= 1'b0; nq_prio_q <= 1'b1; nq_slot_q <= 8'd0;
            end else if (i_nrd) begin
                nq_v_q <= 1'b1; nq_tag_q <= RD_TAG; nq_op_q <= 2'd0;
                nq_chan_q <= 3'(ppn_die(fw_nrd_ppn) / WAYS); nq_way_q <= 2'(ppn_die(fw_nrd_ppn) % WAYS);
                nq_blk_q <= 12'(ppn_block(fw_nrd_ppn)); nq_page_q <= 8'(ppn_page(fw_nrd_ppn));
                nq_head_q <= 1'b0; nq_prio_q <= 1'b1; nq_slot_q <= 8'd0;
            end else if (i_fw) begin
                // firmware ERASE / PROGRAM (its page is staging entry WIN); an ERASE waits until
                // every accepted host read has gone to NAND (erase_wait)
                nq_v_q <= 1'b1; nq_tag_q <= FW_TAG; nq_op_q <= fw_nq_erase ? 2'd2 : 2'd1;
                nq_chan_q <= fw_chan_q; nq_way_q <= fw_way_q; nq_blk_q <= fw_blk_q; nq_page_q <= fw_pg_q;
                nq_head_q <= 1'b0; nq_prio_q <= 1'b0; nq_slot_q <= 8'(WIN);
            end else if (i_prog) begin
                nq_v_q <= 1'b1; nq_tag_q <= 8'(iss_ent); nq_op_q <= 2'd1;
                nq_chan_q <= 3'(32'(rr_q) / WAYS); nq_way_q <= 2'(32'(rr_q) % WAYS);
                nq_blk_q <= op_blk[rr_q]; nq_page_q <= 8'(op_pg[rr_q]);
                // never HEAD: the scheduler lets a HEAD request pass the die's queued ones, and a
                // block's pages must be programmed in ascending order (an FUA write needs no
                // overtaking: its completion waits for the durable prefix anyway)
                nq_head_q <= 1'b0; nq_prio_q <= 1'b0; nq_slot_q <= 8'(iss_ent);
                if (iss_retry) rt_rd_q <= rt_rd_q + 1'b1;
                else           iss_ptr_q <= iss_ptr_q + 1'b1;
            end
        end
    end

    // ---------------------------------------------------------------------------------------------
    // early TX_WRITEs (queue, count), the per-tx commit-in-flight and late flags, fix reservations
    assign tw_push = i_prog && !iss_retry && iss_early;
    logic               c_ack_early;      // the completed entry was an early tx page without mark
    assign c_ack_early = c_ack && cm_tw_q && cm_rec_q == RC_NONE;
    always_ff @(posedge clk) begin
        if (rst) begin
            tw_rd_q <= '0; tw_wr_q <= '0;
            txr_q <= '0; txl_q <= '0;
            early_pend_q <= '0;
        end else begin
            if (tw_push) begin
                tw_mem[tw_wr_q[WIN_W-1:0]] <= {iss_ent, pack_ppn(3'(32'(rr_q) / WAYS), 2'(32'(rr_q) % WAYS),
                                                                 op_blk[rr_q], 8'(op_pg[rr_q]))};
                tw_wr_q <= tw_wr_q + 1'b1;
            end
            if (tw_go) tw_rd_q <= tw_rd_q + 1'b1;
            early_pend_q <= early_pend_q + (WIN_W+1)'(tw_push && iss_rec_q == RC_NONE)
                                         - (WIN_W+1)'(c_ack_early);
            // completion first: a tx's next page is issued only after its commit's completion
            if ((c_ack || c_rack) && cm_rec_q != RC_NONE) begin
                txr_q[cm_txid_q] <= 1'b0;
                txl_q[cm_txid_q] <= 1'b0;
            end
            if (i_prog && !iss_retry && iss_rec_q != RC_NONE) txr_q[iss_txid_q] <= 1'b1;
            if (i_prog && !iss_retry && iss_txpg && !iss_early && iss_rec_q == RC_NONE)
                txl_q[iss_txid_q] <= 1'b1;
        end
    end

    // ---------------------------------------------------------------------------------------------
    // NAND completions: retry and bad-block FIFOs, counters
    always_ff @(posedge clk) begin
        if (rst) begin
            rt_wr_q <= '0;
            bq_rd_q <= '0; bq_wr_q <= '0; bq_full_q <= 1'b0;
            cnt_erases <= '0; cnt_nand_prog <= '0; cnt_nand_read <= '0;
            cnt_ecc_corr <= '0; cnt_prog_fail <= '0; cnt_read_err <= '0;
        end else begin
            if (nc_ok) cnt_nand_prog <= cnt_nand_prog + 1'b1;
            if (nc_fail) begin
                // program failed: program the page again elsewhere, close and report the block
                rt_mem[rt_wr_q[WIN_W-1:0]] <= nc_e;
                rt_wr_q <= rt_wr_q + 1'b1;
                cnt_prog_fail <= cnt_prog_fail + 1'b1;
                bq_mem[bq_wr_q[1:0]] <= {e_chan[nc_e], e_way[nc_e], e_blk[nc_e]};
                bq_wr_q <= bq_wr_q + 1'b1;
            end
            if (nc_fw) begin
                if (fw_op_q == FO_NERASE && s_ncpl_status == N_OK) cnt_erases <= cnt_erases + 1'b1;
                if (fw_op_q == FO_NPROG && s_ncpl_status == N_OK) cnt_nand_prog <= cnt_nand_prog + 1'b1;
            end
            if (rd_ncpl_ok) begin
                cnt_nand_read <= cnt_nand_read + 1'b1;
                if (rd_ncpl_good) cnt_ecc_corr <= cnt_ecc_corr + 32'(s_ncpl_corrected);
                else            cnt_read_err <= cnt_read_err + 1'b1;
            end
            if (m_bad_valid && m_bad_ready) bq_rd_q <= bq_rd_q + 1'b1;
            bq_full_q <= (bq_wr_q + 3'(nc_fail) - 3'(m_bad_valid && m_bad_ready)) - bq_rd_q == 3'(BADQ);
            if (fw_nrd_cpl) cnt_nand_read <= cnt_nand_read + 1'b1;
        end
    end

    // the retry FIFO's registered state (rt_ne_q, rt_one_q, rt_head_q above): the cycle's push (a
    // failed program) and pop (a re-program issued) applied; the head after a pop is read from the
    // slot after the current head, a push into an empty FIFO (or one the pop empties) is the head
    logic               rt_push, rt_pop, rt_last;
    logic [WIN_W:0]     rt_cnt;
    assign rt_push = nc_fail;
    assign rt_pop  = i_prog && iss_retry;
    assign rt_cnt  = rt_wr_q - rt_rd_q;
    assign rt_last = !rt_ne_q || (rt_pop && rt_one_q);   // nothing left after the pop
    always_ff @(posedge clk) begin
        rt_ne_q   <= rt_push || !rt_last;
        rt_one_q  <= (rt_push && !rt_pop) ? rt_cnt == '0 :
                     (!rt_push && rt_pop) ? rt_cnt == (WIN_W+1)'(2) : rt_cnt == (WIN_W+1)'(1);
        rt_head_q <= rt_last ? nc_e : rt_pop ? rt_mem[WIN_W'(rt_rd_q[WIN_W-1:0] + 1'b1)] : rt_mem[rt_rd_q[WIN_W-1:0]];
        if (rst) begin
            rt_ne_q  <= 1'b0;
            rt_one_q <= 1'b0;
        end
    end

    // ---------------------------------------------------------------------------------------------
    // remap request register: the firmware's REMAP, the completion FSM's mapping, a read's lookup.
    // Taken -> free before every writer, so a request loaded in the cycle the previous one is taken
    // is kept. (When it stood after the firmware FSM, a REMAP loaded while a read lookup was being
    // taken was dropped, and the firmware waited for its response for ever; found by the core
    // campaign's watchdog, 1x4_faults seed 5.)
    // The four requesters exclude each other (a lookup waiting stops the other three, the
    // completion FSM in C_REQ the firmware and the early TX_WRITEs, a firmware REMAP the early
    // TX_WRITEs), so the next request is selected from registers alone and m_req_ready, through
    // rq_free, only enables the load (timing: in the core, the remap engine's ready -> this
    // register was the whole device's critical path).
    logic               rq_ld;
    logic [3:0]         rq_op_d;
    logic [7:0]         rq_tag_d;
    logic [5:0]         rq_txid_d;
    logic [31:0]        rq_lpn_d;
    logic [PPN_W-1:0]   rq_ppn_d;
    assign rq_ld = rq_free && (rd_lk_valid || c_rq_want || fw_rq_want || tw_want || (SL && sl_rq_want)) && !rst;
    always_comb begin
        if (rd_lk_valid) begin                     // a host read's lookup
            rq_tag_d = RT_RD; rq_op_d = rd_lk_op; rq_txid_d = rd_lk_txid; rq_lpn_d = rd_lk_lpn; rq_ppn_d = '0;
        end else if (c_rq_want) begin              // the completion FSM's request
            rq_tag_d = RT_CPL; rq_op_d = c_op_q; rq_txid_d = cm_txid_q; rq_lpn_d = c_lpn_q; rq_ppn_d = c_rppn_q;
        end else if (fw_rq_want) begin             // a firmware REMAP
            rq_tag_d = RT_FW; rq_op_d = fw_rop_q; rq_txid_d = fw_txid_q; rq_lpn_d = fw_lpn_q; rq_ppn_d = fw_ppn_q;
        end else if (SL && sl_rq_want) begin       // an S-Log fragment's base, a RESERVE's LPN
            rq_tag_d = sl_rq_rl ? RT_RL : RT_SL; rq_op_d = R_LOOKUP; rq_txid_d = 6'd0; rq_lpn_d = sl_rq_lpn; rq_ppn_d = '0;
        end else begin                             // an early TX_WRITE (tag RT_TW + entry)
            rq_tag_d = RT_TW | 8'(tw_e); rq_op_d = R_TX_WRITE; rq_txid_d = e_txid[tw_e]; rq_lpn_d = e_lpn[tw_e];
            rq_ppn_d = tw_ppn;
        end
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            rq_v_q <= 1'b0;
        end else begin
            if (rq_v_q && m_req_ready) rq_v_q <= 1'b0;
            if (rq_ld) rq_v_q <= 1'b1;
        end
        if (rq_ld) begin
            rq_tag_q <= rq_tag_d; rq_op_q <= rq_op_d; rq_txid_q <= rq_txid_d; rq_lpn_q <= rq_lpn_d;
            rq_ppn_q <= rq_ppn_d;
        end
    end

    // ---------------------------------------------------------------------------------------------
    // completion in request order
    logic [PPN_W-1:0]   cp_ppn;
    assign cp_ppn = pack_ppn(e_chan[cp], e_way[cp], e_blk[cp], e_pg[cp]);
    always_ff @(posedge clk) begin
        if (rst) begin
            wc_v_q <= 1'b0;
            c_st_q <= C_IDLE;
            txe_v_q <= '0;
            cnt_relocs <= '0; cnt_host_pages <= '0; cnt_trims <= '0;
            for (int i = 0; i < FIXN; i++) fx_v[i] <= 1'b0;
            fx_cnt_q <= '0;
            c_fixph_q <= 1'b0;
            c_fxw_q <= 1'b0;
        end else begin
            if (wc_v_q && m_wbc_ready) wc_v_q <= 1'b0;
            // an early TX_WRITE that failed: the tx's error (its commit is written as an abort);
            // a mark's own TX_WRITE does not count (its MAP_WRITE follows the COMMIT)
            if (rsp_tw && s_rsp_status != 4'd0 && e_rec[rsp_tw_e] == RC_NONE && !txe_v_q[e_txid[rsp_tw_e]]) begin
                txe_v_q[e_txid[rsp_tw_e]]  <= 1'b1;
                txe_st_q[e_txid[rsp_tw_e]] <= s_rsp_status;
            end
            // a rejected S-Log record: its commit is written and answered as a doomed one
            if (SL && sl_err_set && !txe_v_q[sl_t]) begin
                txe_v_q[sl_t]  <= 1'b1;
                txe_st_q[sl_t] <= sl_err_st;
            end
            case (c_st_q)
                C_IDLE: if (!tbl_empty && cm_done_q && (!cm_tw_q || cm_twv_q) && !(SL && sl_ix_cp && !apl_done) &&
                            !(SL && sl_mp_busy)) begin
                    c_cnt_q <= 16'd0;
                    c_status_q <= 8'h00;
                    c_mapafter_q <= 1'b0;
                    c_abort_q <= 1'b0;
                    c_fixph_q <= 1'b0;
                    c_ppn_q <= cp_ppn;
                    c_vppn_q <= cp_ppn;
                    c_lpn_q <= e_lpn[cp];
                    c_rppn_q <= cp_ppn;
                    c_after_vc_q <= C_ACK;
                    c_st_q <= C_REQ;
                    if (SL && sl_mid_cp) begin
                        c_st_q <= C_ACK;                   // a record's log page before its last: nothing to map
                    end else if (cm_trim_q && cm_rec_q == RC_NONE) begin
                        c_op_q <= R_UNMAP;
                    end else if (cm_rec_q == RC_AREC || (cm_rec_q != RC_NONE && cm_doom_q)) begin
                        c_op_q <= R_ABORT;
                    end else if (cm_rec_q == RC_CREC) begin
                        c_op_q <= R_COMMIT;
                    end else if (cm_rec_q == RC_CMARK) begin
                        if (!cm_tw_q) begin
                            c_op_q <= R_TX_WRITE;              // late path: TX_WRITE, then COMMIT
                        end else begin
                            // early: its page counted (or the failed page its TX_WRITE named), COMMIT,
                            // then its own MAP_WRITE if its TX_WRITE failed or named the failed page
                            c_op_q <= R_COMMIT;
                            c_mapafter_q <= cm_tws_q != 4'd0 || cm_fx_q;
                            if (cm_tws_q == 4'd0) begin
                                if (cm_fx_q) c_vppn_q <= e_fppn[cp];
                                c_after_vc_q <= C_REQ;
                                c_st_q <= C_VC_NEW;
                            end
                        end
                    end else if (cm_fw_q) begin
                        c_op_q <= R_LOOKUP;
                    end else if (cm_txid_q != 6'd0) begin
                        if (!cm_tw_q) begin
                            c_op_q <= R_TX_WRITE;
                        end else begin
                            // early: answered already; the tx table holds its page, or the failed page
                            // (a fix: the page is counted for the failed one, its own at the commit)
                            c_status_q <= {4'd0, cm_tws_q};
                            if (cm_tws_q != 4'd0) begin
                                c_st_q <= C_ACK;
                            end else begin
                                if (cm_fx_q) begin
                                    c_vppn_q <= e_fppn[cp];
                                    fx_v[fx_free_i_q] <= 1'b1;
                                    fx_t[fx_free_i_q] <= cm_txid_q;
                                    fx_lpn[fx_free_i_q] <= e_lpn[cp];
                                    fx_fppn[fx_free_i_q] <= e_fppn[cp];
                                    fx_nppn[fx_free_i_q] <= cp_ppn;
                                    fx_cnt_q <= fx_cnt_q + 1'b1;
                                end
                                c_st_q <= C_VC_NEW;
                            end
                        end
                    end else begin
                        c_op_q <= R_MAP_WRITE;
                    end
                end
                C_REQ: if (c_rq_go) c_st_q <= C_WAIT;
                C_WAIT: if (rsp_cpl) begin
                    if (!c_fixph_q) c_status_q <= {4'd0, s_rsp_status};
                    c_after_vc_q <= C_ACK;
                    unique case (c_op_q)
                        R_LOOKUP: begin
                            if (c_fixph_q) begin           // a fix: does the LPN map to the failed page?
                                if (s_rsp_status == 4'd0 && s_rsp_mapped && s_rsp_ppn == fx_fppn[c_fx_q]) begin
                                    c_op_q <= R_MAP_WRITE;
                                    c_rppn_q <= fx_nppn[c_fx_q];
                                    c_st_q <= C_REQ;
                                end else begin              // a later page of the tx superseded it
                                    fx_v[c_fx_q] <= 1'b0;
                                    fx_cnt_q <= fx_cnt_q - 1'b1;
                                    c_fixph_q <= 1'b0;
                                    c_st_q <= C_FIX;
                                end
                            end else if (s_rsp_status == 4'd0 && s_rsp_mapped && s_rsp_ppn == e_old[cp]) begin
                                c_op_q <= R_MAP_WRITE;     // RELOC: the LPN still maps to the old page
                                c_st_q <= C_REQ;
                            end else begin
                                c_status_q <= 8'h01;       // stale: a newer write (or TRIM) moved it
                                c_st_q <= C_ACK;
                            end
                        end
                        R_TX_WRITE: begin                  // late path
                            if (cm_rec_q == RC_CMARK) begin
                                // the commit follows whatever the TX_WRITE said
                                c_op_q <= R_COMMIT;
                                c_mapafter_q <= s_rsp_status != 4'd0;
                                c_after_vc_q <= C_REQ;
                                c_st_q <= (s_rsp_status == 4'd0) ? C_VC_NEW : C_REQ;
                            end else begin
                                if (s_rsp_status != 4'd0 && !txe_v_q[cm_txid_q]) begin
                                    txe_v_q[cm_txid_q]  <= 1'b1;
                                    txe_st_q[cm_txid_q] <= s_rsp_status;
                                end
                                c_st_q <= (s_rsp_status == 4'd0) ? C_VC_NEW : C_ACK;
                            end
                        end
                        R_COMMIT: begin
                            txe_v_q[cm_txid_q] <= 1'b0;
                            if (s_rsp_status == 4'd0) c_cnt_q <= s_rsp_count;
                            // a COMMIT-marked page whose tx table held only earlier pages: OK
                            if (cm_rec_q == RC_CMARK) c_status_q <= ats_host_pkg::STS_OK;
                            if (c_mapafter_q) begin
                                c_op_q <= R_MAP_WRITE;
                                c_st_q <= C_REQ;
                            end else begin
                                c_st_q <= C_FIX;
                            end
                        end
                        R_ABORT: begin
                            txe_v_q[cm_txid_q] <= 1'b0;
                            // a doomed commit reports why; an abort with nothing to drop is TX_EMPTY
                            if (cm_doom_q) c_status_q <= {4'd0, txe_st_q[cm_txid_q]};
                            c_abort_q <= 1'b1;
                            c_st_q <= C_FIX;
                        end
                        default: begin                 // MAP_WRITE (also after a COMMIT, or a fix's), UNMAP
                            if (c_fixph_q) begin
                                fx_v[c_fx_q] <= 1'b0;
                                fx_cnt_q <= fx_cnt_q - 1'b1;
                                c_fixph_q <= 1'b0;
                                c_vppn_q <= fx_nppn[c_fx_q];
                                c_after_vc_q <= C_FIX;
                                c_st_q <= C_VC_NEW;
                            end else begin
                                if (c_mapafter_q) begin
                                    c_status_q <= ats_host_pkg::STS_OK;
                                    c_vppn_q <= c_ppn_q;
                                    c_after_vc_q <= C_FIX;
                                end
                                // a TRIM record holds no live data: it is garbage at once
                                c_st_q <= (s_rsp_status == 4'd0 && !cm_trim_q) ? C_VC_NEW :
                                          c_mapafter_q ? C_FIX : C_ACK;
                            end
                        end
                    endcase
                end
                C_VC_NEW: c_st_q <= c_after_vc_q;
                C_FIX: begin                           // the tx's fixes: applied after a COMMIT, dropped after an ABORT
                    // a step every other cycle: the first cycle lets fx_hit_q / fx_hit_i_q take the
                    // fix table as it is now (nothing writes it while the FSM waits here)
                    c_fxw_q <= !c_fxw_q;
                    if (!c_fxw_q) begin
                        // wait
                    end else if (!fx_hit_q) begin
                        c_st_q <= C_ACK;
                    end else if (c_abort_q) begin
                        fx_v[fx_hit_i_q] <= 1'b0;
                        fx_cnt_q <= fx_cnt_q - 1'b1;
                    end else begin
                        c_fx_q <= fx_hit_i_q;
                        c_fixph_q <= 1'b1;
                        c_op_q <= R_LOOKUP;
                        c_lpn_q <= fx_lpn[fx_hit_i_q];
                        c_st_q <= C_REQ;
                    end
                end
                C_ACK: if (c_ack || c_rack) begin   // (c_rack: the entry's next record follows, C_IDLE)
                    if (cm_fw_q) begin
                        if (c_status_q == 8'h00 && !e_flags[cp][5]) cnt_relocs <= cnt_relocs + 1'b1;   // (not a MERGE)   // (response: firmware port)
                    end else if (SL && sl_mid_cp) begin
                        // a record's log page before its last: no completion (the last one's is the commit's)
                    end else begin
                        wc_v_q <= 1'b1;
                        wc_tag_q <= (SL && SLOG_PACK != 0 && sl_fin_cp) ? sl_ctag : e_wtag[cp];
                        // an S-Log commit: APPLY's status, the entries COMMIT applied + the fragments
                        wc_status_q <= (SL && sl_fin_cp) ? apl_sts : c_status_q;
                        // a commit record has no mapping: its completion carries the entries applied
                        wc_ppn_q <= (SL && sl_fin_cp) ? c_cnt_q + 16'(apl_cnt) :
                                    (cm_rec_q == RC_CREC) ? c_cnt_q : 16'(c_ppn_q);
                        if (cm_trim_q && cm_rec_q == RC_NONE) cnt_trims <= cnt_trims + 1'b1;
                        else if (!cm_trim_q && !(SL && sl_fin_cp)) cnt_host_pages <= cnt_host_pages + 1'b1;
                    end
                    c_st_q <= C_IDLE;
                end
                default: c_st_q <= C_IDLE;
            endcase
        end
    end

`ifndef SYNTHESIS
    // the registers that mirror state (timing): the retry FIFO's flags and head, the in-order
    // entry's fields where they are read, and the remap requesters that the load select assumes
    // exclusive
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (rt_ne_q == (rt_rd_q != rt_wr_q) && rt_one_q == (rt_cnt == (WIN_W+1)'(1)) &&
                    (!rt_ne_q || rt_head_q == rt_mem[rt_rd_q[WIN_W-1:0]]))
                else $error("ats_backend: retry FIFO registers out of step with its pointers (%m)");
            assert (!(iss_ok_q && !iss_mv_q) ||
                    (iss_txid_q == e_txid[iss_e] && iss_rec_q == e_rec[iss_e] &&
                     iss_txpg_q == (e_txid[iss_e] != 6'd0 && !e_trim[iss_e] && !e_fw[iss_e] && !(SL && e_sl[iss_e])) &&
                     iss_sl_q == (SL && e_sl[iss_e])))
                else $error("ats_backend: registered in-order entry fields out of step with entry %0d (%m)", iss_e);
            assert ($onehot0({rd_lk_valid, c_rq_want, fw_rq_want, tw_want, SL && sl_rq_want}))
                else $error("ats_backend: two remap requesters at once (%m)");
            assert (bq_full_q == ((bq_wr_q - bq_rd_q) == 3'(BADQ)))
                else $error("ats_backend: bad-block FIFO full flag out of step with its pointers (%m)");
            assert (c_st_q != C_IDLE || fx_free_i_q == fx_free_i)
                else $error("ats_backend: registered free fix slot out of step with the fix table (%m)");
            assert (cm_done_q == (e_st[cp] == E_DONE) && cm_tw_q == e_tw[cp] && cm_twv_q == e_twv[cp] &&
                    cm_tws_q == e_tws[cp] && cm_fx_q == e_fx[cp] && (cm_dfix_q || cm_doom_q == e_doom[cp]) &&
                    cm_trim_q == e_trim[cp] && cm_rec_q == e_rec[cp] && cm_fw_q == e_fw[cp] &&
                    cm_txid_q == e_txid[cp])
                else $error("ats_backend: the oldest entry's mirror out of step with entry %0d (%m)", cp);
            assert (!cm_dfix_q || (cm_dv_q == e_doom[cp] && !cm_done_q && !c_ack && c_st_q == C_IDLE))
                else $error("ats_backend: a commit decided while cm_doom_q is a cycle late (%m)");
        end
    end
    // per-tx early TX_WRITEs (issue 39): counts per txid (pushed, not answered) and in all, against
    // the table's flags the issue rule reads; no TX_WRITE of t is queued or sent while a commit /
    // abort of t is in flight but the marked page's own; a record of t (early path) is issued only
    // with none of t's outstanding
    logic [WIN_W:0]     sim_twc [64];
    logic [WIN_W:0]     tw_out_q;         // queued or unanswered, all txs
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int t = 0; t < 64; t++) sim_twc[t] <= '0;
            tw_out_q <= '0;
        end else begin
            tw_out_q <= tw_out_q + (WIN_W+1)'(tw_push) - (WIN_W+1)'(rsp_tw);
            for (int t = 0; t < 64; t++)
                sim_twc[t] <= sim_twc[t] + (WIN_W+1)'(tw_push && iss_txid_q == 6'(t))
                                         - (WIN_W+1)'(rsp_tw && e_txid[rsp_tw_e] == 6'(t));
        end
    end
    always_ff @(posedge clk) begin
        if (!rst) begin
            automatic int n = 0, nt = 0, sum = 0;
            for (int i = 0; i < WIN; i++) begin
                if (e_tw[i] && !e_twv[i]) n++;
                if (e_tw[i] && !e_twv[i] && e_txid[i] == e_txid[iss_e]) nt++;
            end
            for (int t = 0; t < 64; t++) sum += int'(sim_twc[t]);
            assert (n == int'(tw_out_q) && sum == int'(tw_out_q) && int'(sim_twc[e_txid[iss_e]]) == nt &&
                    iss_tw_pend == (nt != 0))
                else $error("ats_backend: outstanding TX_WRITEs: table %0d, counted %0d, per tx sum %0d; tx %0d: %0d / %0d (%m)",
                            n, tw_out_q, sum, e_txid[iss_e], nt, sim_twc[e_txid[iss_e]]);
            assert (!rsp_tw || sim_twc[e_txid[rsp_tw_e]] != '0)
                else $error("ats_backend: TX_WRITE answer for tx %0d with none outstanding (%m)", e_txid[rsp_tw_e]);
            assert (!tw_push || iss_rec_q != RC_NONE || !txr_q[iss_txid_q])
                else $error("ats_backend: TX_WRITE of tx %0d queued while its commit / abort is in flight (%m)", iss_txid_q);
            assert (!tw_go || e_rec[tw_e] != RC_NONE || !txr_q[e_txid[tw_e]])
                else $error("ats_backend: TX_WRITE of tx %0d sent while its commit / abort is in flight (%m)", e_txid[tw_e]);
            assert (!(i_prog && !iss_retry && iss_rec_q != RC_NONE && !txl_q[iss_txid_q]) ||
                    (sim_twc[iss_txid_q] == '0 && !txr_q[iss_txid_q]))
                else $error("ats_backend: commit / abort of tx %0d issued with %0d TX_WRITEs outstanding (%m)",
                            iss_txid_q, sim_twc[iss_txid_q]);
        end
    end
`endif

    // ---------------------------------------------------------------------------------------------
    // S-Log (SLOG = 1; README "S-Log", README_slog.md "Integration"): ats_backend_slog with
    //  - the read ids 0xFD (RESERVE) / 0xFC (UNRESERVE) answered from its index, beside the read unit
    //    (no lookup, no NAND read): PAGE_BYTES/4 words, word 0 = RESERVE's room, status on `last`;
    //  - an S-Log record (s_wb op 1, rec 2, slog 1) received on s_wbd in two passes: descriptors
    //    (per fragment {lpn}, {off | len << 16}), each fragment's base looked up (LOOKUP, in order),
    //    then the fragments' words; its log pages enter the table as consecutive entries (seqs) and
    //    are programmed like any page; the commit's completion is its last page's: COMMIT, APPLY;
    //  - a rejected record (status not OK) or a doomed one (a TX_WRITE of t failed: DISCARD, the
    //    LPGN counter loaded back) is written and answered as a commit record of a doomed tx.
    localparam logic [7:0] RID_RSV = 8'hFD, RID_UNRSV = 8'hFC;
    if (SLOG != 0) begin : g_slog
        if (SLOG_TX < 1 || SLOG_TX > 63) begin : g_chk_sltx
            $fatal(1, "ats_backend: SLOG_TX must be 1..63 (%m)");
        end
        // ---- the unit
        logic               ix_v_q;
        logic [2:0]         ix_op_q;
        logic [7:0]         ix_txid_q;
        logic [31:0]        ix_lpn_q;
        logic [7:0]         ix_n_q;           // RELEASE's n: 255 (a plain page, TRIM), a MERGE's fragments
        logic               ix_ready, ixa_valid, ixa_last;
        logic [7:0]         ixa_sts, ixa_cnt;
        logic [31:0]        ixa_lpgn;         // (LOOKUP's fields: the read merge, not built)
        logic [11:0]        ixa_pofs, ixa_off, ixa_len;
        logic               rd_v, rd_ready_u;
        logic [31:0]        d_lpn_q;
        logic [15:0]        d_off_q, d_len_q;
        logic               d_last_q, d_map_q;
        logic [PPN_W-1:0]   d_base_q;
        logic               rs_valid, rs_ready;
        logic [7:0]         rs_sts, rs_txid, rs_reclen;
        logic [31:0]        rs_lpgn;
        logic               rw_valid, rw_ready;
        logic               lp_valid, lp_ready, lp_last, lp_end;
        logic [31:0]        lp_data, lp_lpgn;
        logic               lg_valid, lg_ready;
        logic [7:0]         lp_nend;          // SLOG_PACK 1: records that end in the page sent
        logic               go_valid, go_ready, seal_valid, seal_ready, pg_open;
        logic               le_q;             // SLOG_PACK 1, SLOG_RECS 1: the page where the record ends was taken
        logic               wr_busy;          // SLOG_PACK 1: the unit writes a record's bytes or sends a page
        logic               pg_cont;          // SLOG_PACK 1: the open page begins with a record's tail
        localparam bit      PK = SLOG_PACK != 0;
        logic [5:0]         rx_t_q;
        logic [7:0]         rx_tag_q, rx_reclen_q;
        logic [31:0]        rx_lpgn_q;
        logic [15:0]        rx_ep_q;          // the request's epoch (its entry if it ends as an abort)
        logic [WIN_W-1:0]   pg_e_q;
        logic [7:0]         pg_i_q;           // log page index in the record
        logic [PWW-1:0]     pg_w_q;           // word index in the page
        logic               wl_q;             // the words' `last` was taken
        logic               ab_q;             // the record ends as a plain (doomed) commit record (X_AB)
        typedef enum logic [4:0] {X_IDLE, X_W0, X_W1, X_LK, X_LKW, X_RD, X_STS, X_VERD, X_PAGES,
                                  X_DIS, X_LG, X_WEND, X_UNR, X_AB,
                                  X_FW, X_FA, X_FB, X_FC, X_FE,
                                  X_CS, X_CA, X_CB, X_CW} rx_state_e;   // (X_F*: the full pages; X_C*: the scan)
        // a rejected record ends its fragments' reservations (architecture §11.3 "After the
        // record"): its descriptors' LPNs (the first SLOG_TXFRAGS) are kept and UNRESERVEd (t)
        localparam int RL_W = $clog2(SLOG_TXFRAGS + 1);
        localparam int RLI_W = (SLOG_TXFRAGS > 1) ? $clog2(SLOG_TXFRAGS) : 1;
        logic [31:0]        rl_mem [SLOG_TXFRAGS];
        logic [RL_W-1:0]    rl_n_q, rl_i_q;
        logic               rj_q;             // the record was rejected
        rx_state_e          rx_st_q;
        // ---- t's list of full pages (README_slog "Integration"): per txid t (1..SLOG_TX) the
        //      {lpn, PPN of the first program (an early TX_WRITE names it; a late one names the last)} of each data page of t,
        //      appended at the page's first issue (first issues are in acceptance order), at most
        //      SLOG_TXFULL (one more sets t's overflow bit); emptied at the first issue of t's
        //      commit / abort (a commit or abort record, a COMMIT-marked page, an S-Log record's
        //      abort's entry, a doomed commit record), or, with SLOG_RECS > 1, for an S-Log record that
        //      sent its pages, at its last page's completion (the scan of later records reads it until then; t's next
        //      pages are issued only after it, txr_q). Block RAM (registered read), written a
        //      cycle after the issue (ft_a_q: the issue grant is the backend's critical path).
        localparam int FT_W = (SLOG_TX > 1) ? $clog2(SLOG_TX) : 1;
        localparam int FI_W = (SLOG_TXFULL > 1) ? $clog2(SLOG_TXFULL) : 1;
        localparam int FN_W = $clog2(SLOG_TXFULL + 2);    // (the overflow's SLOG_TXFULL + 1 too)
        logic [32+PPN_W-1:0] ft_mem [(1 << FT_W) * (1 << FI_W)];
        logic [32+PPN_W-1:0] ft_rd_q;                     // the read port, registered
        logic [FT_W+FI_W-1:0] ft_ra;
        logic [FN_W-1:0]    ft_n_q [SLOG_TX];             // (index t - 1)
        logic [SLOG_TX-1:0] ft_ov_q;
        logic               ft_a_q, ft_e_q;               // an append / emptying, registered from the issue
        logic [5:0]         ft_t_q;
        logic               ftc_q;                        // an S-Log record's list emptied at its completion (hq_pop)
        logic [5:0]         ftc_t_q;
        logic [31:0]        ft_lpn_q;
        logic [PPN_W-1:0]   ft_ppn_q;
        logic [FN_W-1:0]    fi_q, fj_q, fn_q;             // the feed: candidate, compared entry, list length
        logic               fcv_q, fov_q;                 // a compare's data is in ft_rd_q; t overflowed
        logic               ft_tok;
        // per tx: a program of a data page of t failed (its page was programmed again, elsewhere)
        // since t's last commit / abort completed; a record of t is then not flagged (persistence
        // §10.2: its m1 may name the failed copy)
        logic [63:0]        rf_q;
        // ---- the held records (README "S-Log" "Records in flight"): every record whose verdict
        //      sent its pages (not doomed), from its verdict until its last page's in-order
        //      completion, oldest first: {txid, reclen, first LPGN}. The completeness flag of the
        //      record completing is the head's; a later record's fragment descriptor is compared
        //      with the held records' lists of full pages before its LOOKUP (the scan, X_CS..X_CW).
        //      SLOG_RECS + 1 entries: the unit may take a record after the APPLY of the oldest,
        //      before its completion pops it
        localparam int HQN  = SLOG_RECS + 1;
        localparam bit MR   = SLOG_RECS > 1;   // records held together: the scan and the lists' late emptying
        localparam int HQ_W = $clog2(HQN);
        logic [5:0]         hq_t  [HQN];
        logic [7:0]         hq_rl [HQN];
        logic [31:0]        hq_lg [HQN];
        logic [HQ_W-1:0]    hq_rd_q, hq_wr_q;
        logic [HQ_W:0]      hq_n_q;
        logic               hq_push, hq_pop, hq_has_t;
        logic [7:0]         hq_tag [HQN];     // (SLOG_PACK 1: the completion's tag, a page's first record's)
        logic [HQ_W-1:0]    hq_ap_q;          // SLOG_PACK 1: the first record not yet ended in a page taken
        // ---- SLOG_PACK 1 with SLOG_RECS > 1 (OP): the open page kept for the next record, sealed by
        //      the seal FSM (README "S-Log" "Packing"); a page that ends several records completes
        //      them one after another (pn_q: its records, rk_q: those done)
        localparam bit      OP = PK && MR;
        typedef enum logic [1:0] {SP_IDLE, SP_SEAL, SP_PAGE} sp_state_e;
        sp_state_e          sp_q;
        logic [15:0]        sp_tm_q;          // idle cycles with the page open
        logic [15:0]        sealt_q;          // slog_sealt, registered (a CSR: no path from the bus into the seal)
        logic               sp_go;
        logic [3:0]         pn_q [WIN];
        logic [3:0]         rk_q;
        if (SLOG_SEALT < 0 || SLOG_SEALT > 65535) begin : g_chk_sealt
            $fatal(1, "ats_backend: SLOG_SEALT must be 0..65535 (%m)");
        end
        // events the testbench samples: a record's last descriptor taken by the unit (its flags are
        // taken 6 cycles later, README_slog "Completeness flags"), a completeness flag sent
        logic               sl_snap_ev, sl_cf_ev;
        logic               sl_scan_ev, sl_match_ev;  // a descriptor's scan begins; it matched (X_CW next)
        logic               sl_seal_ev;               // SLOG_PACK 1: a seal taken by the unit
        // who sent the index command in flight (section "index commands" below; declared before the
        // unit's instance, whose s_cf_valid reads it: Yosys needs a declaration before its use)
        typedef enum logic [2:0] {W_NONE, W_DIS, W_APL, W_RID, W_LK, W_FW, W_MAP} ixw_e;
        ixw_e               ix_who_q;
        logic               mp_open_q, mp_last_q;   // a commit's RELEASEs (section "RELEASE at a commit" below)
        // firmware op 6 MERGE (section "MERGE" below)
        localparam logic [7:0] MG_TAG = 8'hFB;   // the MERGE's read on the read unit (a reserved read tag)
        typedef enum logic [2:0] {G_IDLE, G_WREC, G_RQ, G_RD, G_ACC, G_DATA, G_DROP, G_CPL} gm_state_e;
        gm_state_e          g_st_q;
        logic [7:0]         g_n_q, g_sts_q;   // the fragments merged (|F| at its LOOKUP); a refusal's status
        logic               mg_done;          // a MERGE answered without a page (g_sts_q)
        // the read merge's state (section "read merge" below)
        typedef enum logic [3:0] {M_IDLE, M_CHK, M_FR, M_CA, M_CW, M_NRQ, M_NW, M_NX, M_DONE} mg_state_e;
        mg_state_e          mg_st_q;
        logic               mg_cc;            // copying from the cache (its fill waits)
        if (SLOG_CACHE < 0 || (SLOG_CACHE & (SLOG_CACHE - 1)) != 0) begin : g_chk_slc
            $fatal(1, "ats_backend: SLOG_CACHE must be 0 or a power of two (%m)");
        end
        if (SLOG_PPNS < WIN || (SLOG_PPNS & (SLOG_PPNS - 1)) != 0) begin : g_chk_slp
            $fatal(1, "ats_backend: SLOG_PPNS must be a power of two >= WIN (%m)");
        end
        if (SLOG_RECS < 1 || SLOG_RECS > 8) begin : g_chk_slr
            $fatal(1, "ats_backend: SLOG_RECS must be 1..8 (%m)");
        end
        if (SLOG_PACK < 0 || SLOG_PACK > 1) begin : g_chk_slk
            $fatal(1, "ats_backend: SLOG_PACK must be 0 or 1 (%m)");
        end
        /* verilator lint_off PINCONNECTEMPTY */   // (the packed pages' ports: unused, step 4)
        ats_backend_slog #(
            .PAGE_BYTES(PAGE_BYTES), .NUM_TX(SLOG_TX), .SLOG_LPNS(SLOG_LPNS), .SLOG_WAYS(SLOG_WAYS),
            .SLOG_FRAGS(SLOG_FRAGS), .SLOG_TXFRAGS(SLOG_TXFRAGS), .SLOG_TXFULL(SLOG_TXFULL), .PPN_W(PPN_W),
            .SLOG_RECS(SLOG_RECS), .SLOG_PACK(SLOG_PACK)
        ) u_slog (
            .clk, .rst,
            .s_ix_valid(ix_v_q), .s_ix_ready(ix_ready), .s_ix_op(ix_op_q), .s_ix_txid(ix_txid_q),
            .s_ix_lpn(ix_lpn_q), .s_ix_n(ix_n_q),
            .s_ix_lpgn(fw_epoch_q), .s_ix_pofs(fw_seq_q[43:32]), .s_ix_off(fw_seq_q[23:12]), .s_ix_len(fw_seq_q[11:0]),
            .m_ix_valid(ixa_valid), .m_ix_ready(1'b1), .m_ix_sts(ixa_sts), .m_ix_cnt(ixa_cnt),
            .m_ix_lpgn(ixa_lpgn), .m_ix_pofs(ixa_pofs), .m_ix_off(ixa_off), .m_ix_len(ixa_len), .m_ix_last(ixa_last),
            // (X_FE: a full page of t's list, {d_lpn_q, d_base_q}; the fragments' fields ignored)
            .s_rd_valid(rd_v), .s_rd_ready(rd_ready_u), .s_rd_txid({2'b00, rx_t_q}), .s_rd_full(rx_st_q == X_FE),
            .s_rd_lpn(d_lpn_q), .s_rd_ppn(d_base_q),
            // a fragment out of the unit's 12-bit fields, or on an unmapped LPN (no base: persistence
            // §10.2), goes in with len 0: BAD_FIELD, the record rejected (the commit answered TX_FULL)
            .s_rd_off(d_off_q[11:0]),
            .s_rd_len((d_map_q && d_off_q[15:12] == 4'd0 && d_len_q[15:12] == 4'd0) ? d_len_q[11:0] : 12'd0),
            .s_rd_last(d_last_q && rx_st_q == X_RD),
            .m_rs_valid(rs_valid), .m_rs_ready(rs_ready), .m_rs_sts(rs_sts), .m_rs_txid(rs_txid),
            .m_rs_lpgn(rs_lpgn), .m_rs_reclen(rs_reclen),
            .s_rw_valid(rw_valid), .s_rw_ready(rw_ready), .s_rw_data(s_wbd_data),
            .m_lp_valid(lp_valid), .m_lp_ready(lp_ready), .m_lp_data(lp_data), .m_lp_last(lp_last),
            .m_lp_lpgn(lp_lpgn), .m_lp_end(lp_end), .m_lp_nend(lp_nend),
            // SLOG_PACK 1: the verdict (s_go, drop = t doomed) and the seal after the record's last
            // word (README "S-Log" "Packing"); SLOG_PACK 0: not taken (tied off)
            .s_go_valid(go_valid), .s_go_ready(go_ready), .s_go_drop(txe_v_q[rx_t_q]),
            .s_seal_valid(seal_valid), .s_seal_ready(seal_ready),
            .pg_open(pg_open), .wr_busy(wr_busy), .pg_cont(pg_cont),
            // completeness flag: a record applied at its in-order completion was programmed whole
            // (architecture §11.5: its log pages, and its full pages, whose seqs are lower), unless a
            // data page of t was programmed again after a failure (rf_q: m1 may name the failed copy)
            .s_cf_valid(sl_cf_ev),
            .s_cf_txid({2'b00, cm_txid_q}), .s_cf_reclen(hq_rl[hq_rd_q]), .s_cf_lpgn(hq_lg[hq_rd_q]),
            .s_lg_valid(lg_valid), .s_lg_ready(lg_ready), .s_lg_lpgn((rx_st_q == X_LG) ? rx_lpgn_q : fw_epoch_q),
            .lpgn(slog_lpgn), .used(sl_used)
        );
        /* verilator lint_on PINCONNECTEMPTY */

        // ---- index commands, one at a time: DISCARD (the receiver) first, APPLY (the completion
        //      FSM), then a read id's RESERVE / UNRESERVE; m_ix always taken (one beat each)
        logic               dis_req, apl_req, rid_req, lk_req;
        logic [RS_W:0]      lq_rd_q, lq_wr_q;     // the host reads' index LOOKUPs, in s_rd order (a FIFO)
        logic [RS_W-1:0]    lq_s   [RD_SLOTS];    // ... their slots
        logic [31:0]        lq_lpn [RD_SLOTS];    // ... and LPNs
        logic [RS_W-1:0]    lk_s_q;               // the slot whose LOOKUP is in flight
        logic               lq_pend;              // a read's LOOKUP not yet answered
        // firmware op 7 SLOAD (README "Firmware port"): rop 0 the LPGN counter := epoch, 1 the LPGN ->
        // PPN table's entry {epoch, ppn}, 2 INSERT of a recovered fragment {lpn, epoch, seq's fields};
        // index reads: 3 SREAD-ENTRY (slot lpn), 4 SREAD-FRAG (slot lpn, fragment epoch) as the
        // index's op 7 READ, 5 SREAD-PPN (the table at LPGN epoch), 6 SREAD-CTR
        logic               fs_lg, fs_pt, fs_ins, fs_sent_q, fs_req, fs_rd, fs_ctr, fs_tr;
        logic               fw_sl7, fw_mg;
        logic               fs_t1_q, fs_hit_q;    // rop 5: the table read (pt_rd_q), its tag's verdict
        logic [PPN_W-1:0]   pt_rd_q;              // the table's PPN read port (the merge's and rop 5's)
        logic [15:0]        sl_used;              // the index's entries in use
        assign fw_sl7 = fw_sl_req && fw_op_q == 3'd7;
        assign fw_mg  = fw_sl_req && fw_op_q == 3'd6;
        assign fs_lg  = fw_sl7 && fw_rop_q == 4'd0;
        assign fs_pt  = fw_sl7 && fw_rop_q == 4'd1 && !(nc_ok && e_sl[nc_e]);   // (the table's one write port)
        assign fs_ins = fw_sl7 && fw_rop_q == 4'd2;
        assign fs_rd  = fw_sl7 && (fw_rop_q == 4'd3 || fw_rop_q == 4'd4);
        assign fs_ctr = fw_sl7 && fw_rop_q == 4'd6;
        assign fs_req = (fs_ins || fs_rd) && !fs_sent_q;
        logic               rid_v_q, rid_a_q, rid_sel_q, ur_mid_q, ur_fire, is_rid;
        logic [7:0]         rid_tag_q, rid_sts_q, rid_cnt_q;
        logic [5:0]         rid_txid_q;
        logic [31:0]        rid_lpn_q;
        logic [PWW-1:0]     rid_w_q;
        logic [1:0]         apl_s_q;          // 0 none, 1 sent, 2 answered (until the entry's c_ack)
        logic [7:0]         apl_sts_q, apl_cnt_q;
        always_ff @(posedge clk) begin
            if (rst) begin
                ix_v_q <= 1'b0;
                ix_who_q <= W_NONE;
                lq_rd_q <= '0;
                fs_sent_q <= 1'b0;
            end else begin
                if (fw_sl_done) fs_sent_q <= 1'b0;
                if (ix_v_q && ix_ready) ix_v_q <= 1'b0;
                if (ixa_valid && ixa_last) begin     // (a LOOKUP answers one beat per fragment)
                    ix_who_q <= W_NONE;
                end else if (ix_who_q == W_NONE) begin
                    if (dis_req) begin               // DISCARD, or a rejected record's UNRESERVE
                        ix_v_q <= 1'b1; ix_who_q <= W_DIS; ix_op_q <= (rx_st_q == X_UNR) ? 3'd1 : 3'd5;
                        ix_txid_q <= {2'b00, rx_t_q}; ix_lpn_q <= rl_mem[rl_i_q[RLI_W-1:0]];
                    end else if (apl_req) begin
                        ix_v_q <= 1'b1; ix_who_q <= W_APL; ix_op_q <= sl_fin_cp ? 3'd4 : 3'd3;
                        ix_txid_q <= {2'b00, cm_txid_q}; ix_lpn_q <= e_lpn[cp];
                        ix_n_q <= cm_fw_q ? g_n_q : 8'd255;
                    end else if (lk_req) begin       // a host read's LOOKUP (the read merge)
                        ix_v_q <= 1'b1; ix_who_q <= W_LK; ix_op_q <= 3'd2;
                        ix_txid_q <= 8'd0; ix_lpn_q <= lq_lpn[lq_rd_q[RS_W-1:0]];
                        lk_s_q <= lq_s[lq_rd_q[RS_W-1:0]];
                        lq_rd_q <= lq_rd_q + 1'b1;
                    end else if (sl_mp_take) begin   // a commit's applied mapping: RELEASE (n 255)
                        ix_v_q <= 1'b1; ix_who_q <= W_MAP; ix_op_q <= 3'd3;
                        ix_txid_q <= 8'd0; ix_lpn_q <= s_map_lpn; ix_n_q <= 8'd255;
                        mp_last_q <= s_map_last;
                    end else if (fs_req) begin       // the firmware's INSERT (recovery) or READ
                        ix_v_q <= 1'b1; ix_who_q <= W_FW; ix_op_q <= fs_ins ? 3'd6 : 3'd7;
                        ix_txid_q <= 8'd0; ix_lpn_q <= fw_lpn_q;
                        // READ: n = 255 the entry (rop 3), else fragment epoch (past 254: none)
                        ix_n_q <= (fw_rop_q == 4'd3) ? 8'hFF : (fw_epoch_q > 32'd254) ? 8'd254 : fw_epoch_q[7:0];
                        fs_sent_q <= 1'b1;
                    end else if (rid_req) begin
                        ix_v_q <= 1'b1; ix_who_q <= W_RID; ix_op_q <= (rid_tag_q == RID_RSV) ? 3'd0 : 3'd1;
                        ix_txid_q <= {2'b00, rid_txid_q}; ix_lpn_q <= rid_lpn_q;
                    end
                end
            end
        end

        // ---- read ids: taken beside the read unit, answered as a page on m_rdd between its pages
        assign is_rid        = s_rd_tag == RID_RSV || s_rd_tag == RID_UNRSV;
        // a plain read is not taken while an index change of the completion is on its way (APPLY,
        // RELEASE: from apl_req until the entry's remap request is taken), so that its LOOKUP of the
        // index and its lookup of the L2P see the same version (README "S-Log", read merge)
        logic               rd_blk;
        // (a MERGE's completion: its RELEASE, then LOOKUP, then MAP_WRITE: blocked until the
        // MAP_WRITE is taken, or the LOOKUP found the copy stale)
        assign rd_blk        = apl_req || ix_who_q == W_APL || sl_mp_busy ||
                               (c_st_q == C_REQ && c_op_q == R_COMMIT) ||
                               (apl_s_q != 2'd0 && (c_st_q == C_IDLE || c_st_q == C_REQ ||
                                                    (cm_fw_q && c_st_q == C_WAIT && c_op_q == R_LOOKUP)));
        // the MERGE's read (g_st_q G_RQ) goes in instead of a host read
        logic               mg_inj;
        assign mg_inj        = g_st_q == G_RQ;
        assign ur_s_rd_valid = mg_inj ? !rd_blk : (s_rd_valid && !is_rid && !rd_blk);
        assign s_rd_ready    = is_rid ? (!rid_v_q && !rid_a_q && !rst) : (ur_s_rd_ready && !rd_blk && !mg_inj);
        assign ur_rd_lpn     = mg_inj ? fw_lpn_q : s_rd_lpn;
        assign ur_rd_txid    = mg_inj ? 6'd0 : s_rd_txid;
        assign ur_rd_tag     = mg_inj ? MG_TAG : s_rd_tag;
        // a RESERVE answers OK only for a mapped LPN (architecture §11.3 step 5: a fragment needs a
        // base): LOOKUP first (rid_lk_q 1 wants the register, 2 waits), unmapped: TX_FULL at once
        logic [1:0]         rid_lk_q;
        assign rid_req       = rid_v_q && rid_lk_q == 2'd3 && ix_who_q != W_RID;
        // (the MERGE's page, tag MG_TAG, goes into its table entry, or is dropped: never on m_rdd)
        assign mg_rdd        = ur_rdd_tag == MG_TAG;
        assign ur_fire       = ur_rdd_valid && ur_rdd_ready;
        assign ur_rdd_ready  = mg_rdd ? mg_take : (m_rdd_ready && !rid_sel_q);
        assign m_rdd_valid   = rid_sel_q || (ur_rdd_valid && !mg_rdd);
        assign m_rdd_data    = !rid_sel_q ? ur_rdd_data :
                               (rid_w_q == '0 && rid_tag_q == RID_RSV && rid_sts_q == ats_host_pkg::STS_OK) ?
                               {24'd0, rid_cnt_q} : 32'd0;
        assign m_rdd_last    = rid_sel_q ? 32'(rid_w_q) == PW - 1 : ur_rdd_last;
        assign m_rdd_status  = !rid_sel_q ? ur_rdd_status : (32'(rid_w_q) == PW - 1) ? rid_sts_q : 8'h00;
        assign m_rdd_tag     = rid_sel_q ? rid_tag_q : ur_rdd_tag;
        always_ff @(posedge clk) begin
            if (rst) begin
                rid_v_q <= 1'b0; rid_a_q <= 1'b0; rid_sel_q <= 1'b0; ur_mid_q <= 1'b0; rid_lk_q <= 2'd0;
            end else begin
                if (s_rd_valid && s_rd_ready && is_rid) begin
                    rid_v_q <= 1'b1; rid_tag_q <= s_rd_tag; rid_txid_q <= s_rd_txid; rid_lpn_q <= s_rd_lpn;
                    rid_lk_q <= (s_rd_tag == RID_RSV) ? 2'd1 : 2'd3;
                end
                if (rid_lk_q == 2'd1 && sl_rq_want && sl_rq_rl && rq_free) rid_lk_q <= 2'd2;
                if (rid_lk_q == 2'd2 && rsp_sl && s_rsp_tag == RT_RL) begin
                    if (s_rsp_status == 4'd0 && s_rsp_mapped) begin
                        rid_lk_q <= 2'd3;
                    end else begin                   // no base: refused, the index untouched
                        rid_lk_q <= 2'd0; rid_v_q <= 1'b0; rid_a_q <= 1'b1;
                        rid_sts_q <= ats_host_pkg::STS_TX_FULL; rid_cnt_q <= 8'd0;
                    end
                end
                if (ixa_valid && ix_who_q == W_RID) begin
                    rid_v_q <= 1'b0; rid_a_q <= 1'b1; rid_sts_q <= ixa_sts; rid_cnt_q <= ixa_cnt;
                end
                if (ur_fire) ur_mid_q <= !ur_rdd_last;
                // switch only where m_rdd shows no word of the read unit (a valid beat keeps its
                // payload until taken): its page's last word taken now, or none offered between pages
                if (rid_a_q && !rid_sel_q && ((ur_fire && ur_rdd_last) || (!ur_mid_q && !ur_rdd_valid))) begin
                    rid_sel_q <= 1'b1; rid_w_q <= '0;
                end
                if (rid_sel_q && m_rdd_ready) begin
                    rid_w_q <= rid_w_q + 1'b1;
                    if (32'(rid_w_q) == PW - 1) begin rid_sel_q <= 1'b0; rid_a_q <= 1'b0; end
                end
            end
        end

        // ---- APPLY at the in-order completion of a record's last log page (before its COMMIT);
        //      RELEASE (n 255) at a plain page's or TRIM's (before its MAP_WRITE / UNMAP): a
        //      full-page write empties its LPN's F (a RELOC does not: it copies the same data)
        assign sl_fin_cp = e_sl[cp] && cm_rec_q == RC_CREC;
        assign sl_mid_cp = e_sl[cp] && cm_rec_q == RC_NONE;
        //      ... and RELEASE (n = its fragments) at a MERGE's (before its LOOKUP: F holds none of
        //      them when the copy is stale, a plain page's or TRIM's RELEASE emptied it)
        assign sl_ix_cp  = sl_fin_cp || (!e_sl[cp] && !cm_fw_q && cm_rec_q == RC_NONE && cm_txid_q == 6'd0) ||
                           (cm_fw_q && e_flags[cp][5]);
        // (index lookups go first: no APPLY / RELEASE while a host read's LOOKUP is to come)
        assign apl_req   = apl_s_q == 2'd0 && ix_who_q != W_APL && c_st_q == C_IDLE && !tbl_empty &&
                           cm_done_q && sl_ix_cp && !lq_pend && !sl_mp_busy;
        // ---- RELEASE at a transaction's commit (README "S-Log" "Transaction commit", persistence
        //      §10.5 step 2: each page a COMMIT applies empties F[lpn]): every mapping the engine's
        //      COMMIT applied (s_map, in order, `last` on the commit's final one) is RELEASEd (n 255),
        //      after the host reads' LOOKUPs already queued and before the next completion's index
        //      command; no read is taken from the COMMIT's request until the last one is done
        //      (mp_open_q: from the request's take until the last RELEASE answered, or a response
        //      that applied nothing), so a read sees the new pages with F = [] or the old ones with F
        assign sl_mp_take = s_map_valid && ix_who_q == W_NONE && !dis_req && !apl_req && !lk_req;
        assign sl_mp_busy = mp_open_q || s_map_valid || ix_who_q == W_MAP;
        always_ff @(posedge clk) begin
            if (rst) begin
                mp_open_q <= 1'b0;
            end else begin
                if (c_rq_go && c_op_q == R_COMMIT) mp_open_q <= 1'b1;
                if (c_st_q == C_WAIT && rsp_cpl && c_op_q == R_COMMIT &&
                    (s_rsp_status != 4'd0 || s_rsp_count == 16'd0)) mp_open_q <= 1'b0;
                if (ixa_valid && ix_who_q == W_MAP && mp_last_q) mp_open_q <= 1'b0;
            end
        end
        assign apl_done  = apl_s_q == 2'd2;
        assign apl_sts   = apl_sts_q;
        assign apl_cnt   = apl_cnt_q;
        always_ff @(posedge clk) begin
            if (rst) begin
                apl_s_q <= 2'd0;
            end else begin
                if (ix_v_q && ix_who_q == W_APL) apl_s_q <= 2'd1;
                if (ixa_valid && ix_who_q == W_APL) begin
                    apl_s_q <= 2'd2; apl_sts_q <= ixa_sts; apl_cnt_q <= ixa_cnt;
                end
                if (c_ack || c_rack) apl_s_q <= 2'd0;
            end
        end

        // ---- the record receiver
        // verdict: every earlier request issued (their early TX_WRITEs queued), none of t's
        // TX_WRITEs outstanding, no commit of t in flight, and on the late path every earlier
        // request completed: t's error is final (the issue rule's conditions for its commit). The
        // record's request took no entry and nothing is accepted while it is received, so the
        // table holds exactly the requests before it: "earlier" is the whole table
        logic               tw_t, verd;
        always_comb begin
            tw_t = 1'b0;
            for (int i = 0; i < WIN; i++) if (e_tw[i] && !e_twv[i] && e_txid[i] == rx_t_q) tw_t = 1'b1;
        end
        assign verd = all_issued && !tw_t && !txr_q[rx_t_q] && (!txl_q[rx_t_q] || tbl_empty);

        // the held records' FIFO (declared above): pushed at a verdict that sends the pages, popped
        // at the completion of a record's last page (the APPLY's entry)
        assign hq_push = rx_st_q == X_VERD && verd && (!PK || (go_valid && go_ready)) && !txe_v_q[rx_t_q];
        assign hq_pop  = (c_ack || c_rack) && sl_fin_cp;
        always_comb begin
            hq_has_t = 1'b0;
            for (int i = 0; i < HQN; i++)
                if (32'((32'(i) + HQN - 32'(hq_rd_q)) % HQN) < 32'(hq_n_q) && hq_t[i] == rx_t_q) hq_has_t = 1'b1;
        end
        always_ff @(posedge clk) begin
            if (hq_push) begin
                hq_t[hq_wr_q] <= rx_t_q; hq_rl[hq_wr_q] <= rx_reclen_q; hq_lg[hq_wr_q] <= rx_lpgn_q;
                hq_tag[hq_wr_q] <= rx_tag_q;
            end
            if (sl_acc) pn_q[acc_e] <= lp_nend[3:0];
            if (rst) begin
                hq_rd_q <= '0; hq_wr_q <= '0; hq_n_q <= '0; hq_ap_q <= '0; rk_q <= '0;
            end else begin
                // (a page's records: nend <= SLOG_RECS < HQN, one wrap at most)
                if (sl_acc) hq_ap_q <= (32'(hq_ap_q) + 32'(lp_nend) >= HQN) ? HQ_W'(32'(hq_ap_q) + 32'(lp_nend) - HQN)
                                                                            : HQ_W'(32'(hq_ap_q) + 32'(lp_nend));
                if (c_ack) rk_q <= '0;
                else if (c_rack) rk_q <= rk_q + 1'b1;
                if (hq_push) hq_wr_q <= (32'(hq_wr_q) == HQN - 1) ? '0 : hq_wr_q + 1'b1;
                if (hq_pop)  hq_rd_q <= (32'(hq_rd_q) == HQN - 1) ? '0 : hq_rd_q + 1'b1;
                hq_n_q <= hq_n_q + (HQ_W+1)'(hq_push) - (HQ_W+1)'(hq_pop);
            end
        end
        // the page's first record ending in it (SLOG_PACK 0: the record being received); the
        // completing record's tag; the page's next record
        assign sl_pt   = PK ? hq_t[hq_ap_q] : rx_t_q;
        assign sl_ptag = PK ? hq_tag[hq_ap_q] : rx_tag_q;
        assign sl_ctag = hq_tag[hq_rd_q];
        assign sl_ntx  = hq_t[(32'(hq_rd_q) == HQN - 1) ? '0 : hq_rd_q + 1'b1];
        assign sl_more = PK && sl_fin_cp && 32'(rk_q) + 1 < 32'(pn_q[cp]);
        assign sl_cf_ev   = ixa_valid && ix_who_q == W_APL && sl_fin_cp && ixa_sts == ats_host_pkg::STS_OK &&
                            !rf_q[cm_txid_q];
        assign sl_snap_ev = rd_v && rd_ready_u && rx_st_q == X_RD && d_last_q;
        assign sl_scan_ev  = rx_st_q == X_CS;
        assign sl_match_ev = rx_st_q == X_CB && ft_rd_q[32+PPN_W-1:PPN_W] == d_lpn_q;
        // the scan: a fragment descriptor's LPN against each held record's list of full pages (entry
        // cs_i_q of record cs_h_q: one compare every two cycles, the list's block RAM read port);
        // a match waits until no record is held (X_CW), so that its LOOKUP sees that record's
        // COMMIT (README "S-Log" "Records in flight")
        logic [HQ_W-1:0]    cs_h_q;
        logic [HQ_W:0]      cs_k_q;           // held records left to scan
        logic [FN_W-1:0]    cs_i_q;
        logic [FT_W-1:0]    cs_ti;
        logic [FN_W-1:0]    cs_n;
        assign cs_ti = FT_W'(hq_t[cs_h_q] - 6'd1);
        assign cs_n  = ft_n_q[cs_ti];
        logic               lp_alloc, lp_fire, fwd, w_take;
        logic [WIN_W-1:0]   lp_e;
        assign sl_rec_st   = s_wb_op && s_wb_rec == RC_CREC && s_wb_slog;
        assign sl_busy     = rx_st_q != X_IDLE || (OP && sp_q != SP_IDLE);
        assign sl_open     = OP && pg_open;
        // a data page beside the open page only while its seq may come before the page's: not when
        // the page continues a record (a record's log pages take consecutive seqs, persistence §10.2)
        assign sl_cont     = OP && pg_cont;
        assign sl_t        = rx_t_q;
        assign sl_wtag     = rx_tag_q;
        assign sl_wep      = rx_ep_q;
        // the remap request register after every other requester; the receiver's LOOKUP first, but
        // not while a COMMIT's RELEASEs are pending (sl_mp_busy): a descriptor looked up between them
        // is held (pend) when the RELEASE of its LPN comes, which then answers BAD_FIELD and leaves
        // the stale fragments under the COMMIT's page (README "S-Log" "Transaction commit")
        logic               sl_rq_free;
        assign sl_rq_free  = c_st_q != C_REQ && !rd_lk_pending && !fw_rq_req && !tw_ne;
        assign sl_rq_want  = sl_rq_free && ((rx_st_q == X_LK && !sl_mp_busy) || rid_lk_q == 2'd1);
        assign sl_rq_rl    = rx_st_q != X_LK;
        assign sl_rq_lpn   = sl_rq_rl ? rid_lpn_q : d_lpn_q;
        assign rd_v        = rx_st_q == X_RD || rx_st_q == X_FE;
        assign rs_ready    = rx_st_q == X_STS;
        // SLOG_PACK 1: the verdict is the unit's s_go; the record's final page, left open by the
        // unit, sealed once its words are all forwarded (the unit takes the seal after the record's
        // last byte); the page that ends it (nend > 0) ends X_PAGES
        assign go_valid    = PK && rx_st_q == X_VERD && verd && !(OP && sp_q != SP_IDLE);
        assign seal_valid  = OP ? sp_q == SP_SEAL : (PK && rx_st_q == X_PAGES && wl_q && !le_q && pg_w_q == '0);
        assign sl_seal_ev  = seal_valid && seal_ready;
        assign fwd         = (rx_st_q == X_VERD || rx_st_q == X_PAGES || rx_st_q == X_DIS) && !wl_q;
        assign rw_valid    = fwd && s_wbd_valid;
        // s_wbd: descriptor words, words forwarded to the unit, or (rejected record, surplus) dropped
        assign sl_wbd_ready = rx_st_q == X_W0 || rx_st_q == X_W1 || (fwd && rw_ready) ||
                              (rx_st_q == X_WEND && !wl_q);
        assign w_take      = s_wbd_valid && sl_wbd_ready && (fwd || rx_st_q == X_WEND);
        // log pages: each into a new entry at its first word (its seq then: consecutive, since
        // nothing else is accepted meanwhile)
        logic               lp_st;            // a page of the unit is taken (a record's, or the seal's)
        assign lp_st       = rx_st_q == X_PAGES || (OP && sp_q == SP_PAGE);
        assign lp_alloc    = lp_st && pg_w_q == '0;
        // (held while the read merge copies from the cache: a page's fill never changes a line being read)
        // (the sealed page waits while a data page taken beside it receives its words: one
        // writer of the staging memory at a time)
        assign lp_ready    = (rx_st_q == X_DIS || (lp_st && (!lp_alloc || !tbl_full))) && !mg_cc &&
                             !(OP && sp_q == SP_PAGE && recv_q);
        assign lp_fire     = lp_valid && lp_ready;
        assign lp_e        = lp_alloc ? acc_e : pg_e_q;
        assign sl_acc      = lp_fire && lp_alloc;
        assign sl_acc_fin  = PK ? lp_nend != 8'd0 : pg_i_q == rx_reclen_q - 8'd1;
        assign sl_acc_lpgn = lp_lpgn;
        assign sl_mem_we   = lp_fire && lp_st;
        assign sl_mem_wa   = MEM_AW'(32'(lp_e) * 32'(PW) + 32'(pg_w_q));
        assign sl_mem_wd   = lp_data;
        assign sl_pg_done  = sl_mem_we && lp_last;
        assign sl_pg_e     = lp_e;
        assign sl_err_set  = rx_st_q == X_STS && rs_valid && rs_sts != ats_host_pkg::STS_OK;
        // any rejection answers the commit TX_FULL: it became an abort (architecture §2: BAD_FIELD
        // would say "nothing changed"; §4: a commit's statuses)
        assign sl_err_st   = ats_host_pkg::STS_TX_FULL[3:0];
        assign sl_ab_acc   = rx_st_q == X_AB && !tbl_full && !(OP && (pg_open || sp_q != SP_IDLE));
        assign dis_req     = (rx_st_q == X_DIS || (rx_st_q == X_UNR && rl_i_q != rl_n_q)) &&
                             ix_who_q != W_DIS;
        assign lg_valid    = rx_st_q == X_LG || (fs_lg && rx_st_q == X_IDLE);
        assign fw_sl_done  = (fs_lg && rx_st_q == X_IDLE && lg_ready) || fs_pt ||
                             (ixa_valid && ix_who_q == W_FW) || fs_ctr || (fw_sl7 && fw_rop_q == 4'd5 && fs_t1_q) ||
                             (fw_sl7 && fw_rop_q > 4'd6) || mg_done;
        assign fw_sl_status = mg_done ? g_sts_q : (ixa_valid && ix_who_q == W_FW) ? ixa_sts :
                              (fw_rop_q > 4'd6) ? 8'hFF : 8'h00;
        // data: INSERT |F|; SREAD-ENTRY {rsv, 0, pend, owner, |F|}; SREAD-FRAG {len/4, off/4, pofs/4};
        // SREAD-CTR the entries in use (epoch bit 0 = 1: the whole LPGN counter)
        always_comb begin
            fw_sl_data = 32'd0; fw_sl_ppn = '0; fw_sl_mapped = 1'b0;
            if (!mg_done && ixa_valid && ix_who_q == W_FW) begin
                unique case (fw_rop_q)
                    4'd3: begin
                        fw_sl_data = {ixa_off[11], 7'd0, ixa_off[7:0], ixa_len[7:0], ixa_cnt};
                        fw_sl_ppn = PPN_W'(ixa_lpgn); fw_sl_mapped = ixa_pofs[0];
                    end
                    4'd4: begin
                        fw_sl_data = {2'd0, ixa_len[11:2], ixa_off[11:2], ixa_pofs[11:2]};
                        fw_sl_ppn = PPN_W'(ixa_lpgn);
                    end
                    default: fw_sl_data = {24'd0, ixa_cnt};
                endcase
            end else if (fw_sl7 && fw_rop_q == 4'd5) begin
                fw_sl_ppn = fs_hit_q ? pt_rd_q : '0; fw_sl_mapped = fs_hit_q;
            end else if (fw_sl7 && fw_rop_q == 4'd6) begin
                // mapped: an S-Log record is being received (sl_busy: from the cycle after its request
                // was taken on s_wb until its words are in and its log pages in the table, or it was
                // dropped); under wb_hold, once 0 it stays 0 (no request is taken: asserted below)
                fw_sl_data = fw_epoch_q[0] ? slog_lpgn : {16'd0, sl_used};
                fw_sl_ppn = PPN_W'(slog_lpgn); fw_sl_mapped = sl_busy || sl_open;
            end
        end
        always_ff @(posedge clk) begin
            if (rst) begin
                rx_st_q <= X_IDLE;
            end else begin
                if (w_take && s_wbd_last) wl_q <= 1'b1;
                unique case (rx_st_q)
                    X_IDLE: if (acc_fire && sl_rec_st) begin
                        rx_st_q <= X_FW; rx_t_q <= s_wb_txid; rx_tag_q <= s_wb_tag; rx_ep_q <= s_wb_epoch;
                        wl_q <= 1'b0; ab_q <= 1'b0; rj_q <= 1'b0; rl_n_q <= '0; rl_i_q <= '0;
                    end
                    // the full pages first: once every earlier request has been issued (so t's list
                    // holds every earlier page of t: appended at first issue, a cycle late), one
                    // `full` descriptor per LPN of the list, its newest entry only (entry i is sent
                    // when no later entry j > i has its LPN: one compare a cycle, O(n^2) cycles); t
                    // overflowed: SLOG_TXFULL + 1 descriptors (the unit rejects the record TX_FULL;
                    // the last reads index SLOG_TXFULL, past the list: its lpn / ppn are don't-care,
                    // the unit rejects it for its count before it uses them)
                    X_FW: if (all_issued && !ft_a_q && !ft_e_q && !(MR && (ftc_q || txr_q[rx_t_q] || hq_has_t))) begin
                        fi_q <= '0; fov_q <= ft_tok && ft_ov_q[FT_W'(rx_t_q - 6'd1)];
                        fn_q <= !ft_tok ? '0 : ft_ov_q[FT_W'(rx_t_q - 6'd1)] ? FN_W'(SLOG_TXFULL + 1)
                                                                           : ft_n_q[FT_W'(rx_t_q - 6'd1)];
                        rx_st_q <= (ft_tok && (ft_ov_q[FT_W'(rx_t_q - 6'd1)] || ft_n_q[FT_W'(rx_t_q - 6'd1)] != '0))
                                   ? X_FA : X_W0;
                    end
                    X_FA: rx_st_q <= X_FB;                 // (ft_ra = fi_q: read)
                    X_FB: begin
                        d_lpn_q <= ft_rd_q[32+PPN_W-1:PPN_W]; d_base_q <= ft_rd_q[PPN_W-1:0];
                        fj_q <= fi_q + 1'b1; fcv_q <= 1'b0;
                        rx_st_q <= fov_q ? X_FE : X_FC;
                    end
                    X_FC: begin                            // (ft_ra = fj_q: read; ft_rd_q = entry fj_q - 1)
                        if (fcv_q && ft_rd_q[32+PPN_W-1:PPN_W] == d_lpn_q) begin
                            fi_q <= fi_q + 1'b1;           // a newer entry of the LPN: not sent
                            rx_st_q <= (fi_q + 1'b1 == fn_q) ? X_W0 : X_FA;
                        end else if (fj_q == fn_q) begin
                            rx_st_q <= X_FE;
                        end else begin
                            fj_q <= fj_q + 1'b1; fcv_q <= 1'b1;
                        end
                    end
                    X_FE: if (rd_ready_u) begin
                        fi_q <= fi_q + 1'b1;
                        rx_st_q <= (fi_q + 1'b1 == fn_q) ? X_W0 : X_FA;
                    end
                    X_W0: if (s_wbd_valid) begin
                        d_lpn_q <= s_wbd_data;
                        if (s_wbd_last) begin      // a descriptor without its second word: rejected
                            d_off_q <= 16'd0; d_len_q <= 16'd0; d_last_q <= 1'b1; rx_st_q <= X_LK;
                        end else begin
                            rx_st_q <= X_W1;
                        end
                    end
                    X_W1: if (s_wbd_valid) begin
                        d_off_q <= s_wbd_data[15:0]; d_len_q <= s_wbd_data[31:16]; d_last_q <= s_wbd_last;
                        rx_st_q <= (MR && hq_n_q != '0) ? X_CS : X_LK;
                    end
                    // (the scan's states: unreachable with SLOG_RECS 1, and built as X_LK's there)
                    X_CS: begin
                        cs_h_q <= hq_rd_q; cs_k_q <= hq_n_q; cs_i_q <= '0;
                        rx_st_q <= MR ? X_CA : X_LK;
                    end
                    X_CA: begin                            // (ft_ra = {cs_ti, cs_i_q}: read)
                        if (!MR || cs_k_q == '0) begin
                            rx_st_q <= X_LK;
                        end else if (cs_i_q >= cs_n) begin
                            cs_h_q <= (32'(cs_h_q) == HQN - 1) ? '0 : cs_h_q + 1'b1;
                            cs_k_q <= cs_k_q - 1'b1; cs_i_q <= '0;
                        end else begin
                            rx_st_q <= X_CB;
                        end
                    end
                    X_CB: begin
                        if (!MR) begin
                            rx_st_q <= X_LK;
                        end else if (ft_rd_q[32+PPN_W-1:PPN_W] == d_lpn_q) begin
                            rx_st_q <= X_CW;
                        end else begin
                            cs_i_q <= cs_i_q + 1'b1; rx_st_q <= X_CA;
                        end
                    end
                    X_CW: if (!MR || hq_n_q == '0) rx_st_q <= X_LK;
                    X_LK: if (sl_rq_want && rq_free) rx_st_q <= X_LKW;
                    X_LKW: if (rsp_sl && s_rsp_tag == RT_SL) begin
                        d_base_q <= lk_ppn_fx;
                        d_map_q <= s_rsp_status == 4'd0 && s_rsp_mapped;
                        rx_st_q <= X_RD;
                    end
                    X_RD: if (rd_ready_u) begin
                        if (32'(rl_n_q) < SLOG_TXFRAGS) begin
                            rl_mem[rl_n_q[RLI_W-1:0]] <= d_lpn_q;
                            rl_n_q <= rl_n_q + 1'b1;
                        end
                        rx_st_q <= d_last_q ? X_STS : X_W0;
                    end
                    X_STS: if (rs_valid) begin
                        rx_lpgn_q <= rs_lpgn; rx_reclen_q <= rs_reclen;
                        if (rs_sts != ats_host_pkg::STS_OK) begin
                            ab_q <= 1'b1; rj_q <= 1'b1;   // the words dropped, the reservations
                            rx_st_q <= X_WEND;            // ended, then a doomed commit
                        end else begin
                            rx_st_q <= X_VERD;
                        end
                    end
                    X_VERD: if (verd && (!PK || (go_valid && go_ready))) begin
                        pg_i_q <= 8'd0; pg_w_q <= '0; le_q <= 1'b0;
                        rx_st_q <= txe_v_q[rx_t_q] ? X_DIS : X_PAGES;
                    end
                    X_PAGES: if (lp_fire) begin
                        pg_w_q <= pg_w_q + 1'b1;
                        if (lp_alloc) pg_e_q <= acc_e;
                        if (lp_last) begin
                            pg_w_q <= '0; pg_i_q <= pg_i_q + 8'd1;
                            if (lp_end && !PK) rx_st_q <= X_WEND;
                            if (lp_end && PK) le_q <= 1'b1;
                        end
                    end else if (PK && !OP && le_q && wl_q && pg_w_q == '0) begin
                        rx_st_q <= X_WEND;         // (the record's words all forwarded, its page taken)
                    end else if (OP && wl_q && !wr_busy && pg_w_q == '0) begin
                        rx_st_q <= X_WEND;         // (its bytes written: its last page may stay open)
                    end
                    // (SLOG_PACK 1: the verdict's drop put the LPGN counter back: no load-back)
                    X_DIS: if (ixa_valid && ix_who_q == W_DIS) begin
                        if (PK) begin ab_q <= 1'b1; rx_st_q <= X_WEND; end
                        else rx_st_q <= X_LG;
                    end
                    X_LG: if (lg_ready) begin ab_q <= 1'b1; rx_st_q <= X_WEND; end
                    X_WEND: if (wl_q || (w_take && s_wbd_last)) rx_st_q <= rj_q ? X_UNR : ab_q ? X_AB : X_IDLE;
                    X_UNR: begin
                        if (ixa_valid && ix_who_q == W_DIS) rl_i_q <= rl_i_q + 1'b1;
                        if (rl_i_q == rl_n_q) rx_st_q <= X_AB;
                    end
                    // the commit record that aborts t takes its entry (its seq) now
                    X_AB: if (sl_ab_acc) rx_st_q <= X_IDLE;
                    default: rx_st_q <= X_IDLE;
                endcase
                // (OP: the sealed page's words; never beside X_PAGES: the verdict waits for SP_IDLE)
                if (OP && sp_q == SP_PAGE && lp_fire) begin
                    pg_w_q <= lp_last ? '0 : pg_w_q + 1'b1;
                    if (lp_alloc) pg_e_q <= acc_e;
                end
            end
        end

        // ---- the seal (OP, README "S-Log" "Packing"): the open page is sealed and sent (its entry
        //      and seq at its first word), the receiver idle, before anything but a record or a
        //      transaction's data page is taken (a request on s_wb, a firmware RELOC or MERGE, SLOAD
        //      rop 0, under wb_hold), when SLOG_RECS records are held and the oldest ends in the
        //      open page (the write buffer sends no record until one completes, and none can),
        //      SLOG_SEALT cycles after the last record's reception ended (unless a record is offered
        //      then; data pages taken meanwhile do not restart it); and when the record being received waits for a held record: of its
        //      txid (X_FW), the scan's match (X_CW), a full unit whose oldest record ends in the open
        //      page (its descriptors: no held record can end before the seal), or its abort record's
        //      entry (X_AB); the records in the page complete only once it is programmed
        // (every slot held, the oldest ending in the open page: no held record can end before the seal)
        logic               hq_stuck;
        assign hq_stuck = 32'(hq_n_q) >= SLOG_RECS && hq_ap_q == hq_rd_q;
        assign sp_go = OP && pg_open && sp_q == SP_IDLE && (
                           (rx_st_q == X_IDLE && (wb_hold || fw_reloc_req || mg_acc_req || g_st_q == G_WREC || fs_lg ||
                                                  (s_wb_valid && !wb_beside) ||
                                                  hq_stuck ||
                                                  (!(s_wb_valid && sl_rec_st) && 17'(sp_tm_q) + 17'd1 > 17'(sealt_q)))) ||
                           (rx_st_q == X_FW && hq_has_t) || rx_st_q == X_CW || rx_st_q == X_AB ||
                           ((rx_st_q == X_FE || rx_st_q == X_RD) && hq_stuck));
        always_ff @(posedge clk) begin
            if (rst) begin
                sp_q <= SP_IDLE; sp_tm_q <= '0; sealt_q <= 16'(SLOG_SEALT);
            end else begin
                sealt_q <= slog_sealt;
                unique case (sp_q)
                    SP_IDLE: if (sp_go) sp_q <= SP_SEAL;
                    SP_SEAL: if (seal_ready) sp_q <= SP_PAGE;
                    SP_PAGE: if (lp_fire && lp_last) sp_q <= SP_IDLE;
                    default: sp_q <= SP_IDLE;
                endcase
                if (OP && rx_st_q == X_IDLE && pg_open && sp_q == SP_IDLE) begin
                    if (sp_tm_q != 16'hFFFF) sp_tm_q <= sp_tm_q + 1'b1;
                end else begin
                    sp_tm_q <= '0;
                end
            end
        end

        // ---- t's list of full pages (declared with the receiver): appends and emptyings, registered
        //      from the issue grant (one in-order first issue at most a cycle, so one event a cycle);
        //      the feed's read port (X_FA: entry fi_q, X_FC: entry fj_q)
        logic               ft_wok, ftc_wok;
        logic [FT_W-1:0]    ft_wi, ft_ri, ftc_wi;
        assign ftc_wok = ftc_t_q != 6'd0 && 32'(ftc_t_q) <= SLOG_TX;
        assign ftc_wi  = FT_W'(ftc_t_q - 6'd1);
        assign ft_tok = rx_t_q != 6'd0 && 32'(rx_t_q) <= SLOG_TX;
        assign ft_wok = ft_t_q != 6'd0 && 32'(ft_t_q) <= SLOG_TX;
        assign ft_wi  = FT_W'(ft_t_q - 6'd1);
        assign ft_ri  = FT_W'(rx_t_q - 6'd1);
        assign ft_ra  = (MR && rx_st_q == X_CA) ? {cs_ti, FI_W'(cs_i_q)} : {ft_ri, FI_W'((rx_st_q == X_FC) ? fj_q : fi_q)};
        always_ff @(posedge clk) begin
            if (ft_a_q && ft_wok && 32'(ft_n_q[ft_wi]) < SLOG_TXFULL)
                ft_mem[{ft_wi, FI_W'(ft_n_q[ft_wi])}] <= {ft_lpn_q, ft_ppn_q};
            ft_rd_q <= ft_mem[ft_ra];
        end
        always_ff @(posedge clk) begin
            ft_a_q   <= !rst && i_prog && !iss_retry && iss_txpg && iss_rec_q == RC_NONE;
            // (an S-Log record's last page: its list is emptied at its completion instead, ftc_q)
            ft_e_q   <= !rst && i_prog && !iss_retry && iss_rec_q != RC_NONE && !(MR && iss_sl_q);
            ftc_q    <= !rst && MR && hq_pop;
            ftc_t_q  <= cm_txid_q;
            ft_t_q   <= iss_txid_q;
            ft_lpn_q <= e_lpn[iss_e];
            ft_ppn_q <= pack_ppn(3'(32'(rr_q) / WAYS), 2'(32'(rr_q) % WAYS), op_blk[rr_q], 8'(op_pg[rr_q]));
            if (rst) begin
                for (int t = 0; t < SLOG_TX; t++) ft_n_q[t] <= '0;
                ft_ov_q <= '0;
                rf_q <= '0;
            end else begin
                if (ft_a_q && ft_wok) begin
                    if (32'(ft_n_q[ft_wi]) < SLOG_TXFULL) ft_n_q[ft_wi] <= ft_n_q[ft_wi] + 1'b1;
                    else                                  ft_ov_q[ft_wi] <= 1'b1;
                end
                if (ft_e_q && ft_wok) begin
                    ft_n_q[ft_wi] <= '0; ft_ov_q[ft_wi] <= 1'b0;
                end
                if (ftc_q && ftc_wok) begin
                    ft_n_q[ftc_wi] <= '0; ft_ov_q[ftc_wi] <= 1'b0;
                end
                // (t's pages of the next incarnation are issued only after t's commit / abort has
                // completed, txr_q: a failure of one never precedes the clear)
                if ((c_ack || c_rack) && cm_rec_q != RC_NONE) rf_q[cm_txid_q] <= 1'b0;
                if (nc_fail && e_txid[nc_e] != 6'd0 && e_rec[nc_e] == RC_NONE && !e_sl[nc_e])
                    rf_q[e_txid[nc_e]] <= 1'b1;
            end
        end
`ifndef SYNTHESIS
        always_ff @(posedge clk) begin
            if (!rst) begin
                assert (!(((ft_a_q || ft_e_q) && ft_t_q == rx_t_q || ftc_q && ftc_t_q == rx_t_q) &&
                          (rx_st_q == X_FA || rx_st_q == X_FB || rx_st_q == X_FC || rx_st_q == X_FE)))
                    else $error("ats_backend: tx %0d's list of full pages changed while a record reads it (%m)", rx_t_q);
            end
        end
        // a record's fragment descriptor names no LPN of t's list (persistence §10.2: an LPN has a
        // full META-PU or diff META-PUs in a record, never both; README_slog "Integration": the
        // write buffer's FRAG slots hold no LPN that t wrote as a full page since its last commit)
        always_ff @(posedge clk) begin
            if (!rst && rx_st_q == X_RD && rd_ready_u && ft_tok) begin
                for (int i = 0; i < SLOG_TXFULL; i++) begin
                    assert (!(32'(i) < 32'(ft_n_q[ft_ri]) &&
                              ft_mem[{ft_ri, FI_W'(i)}][32+PPN_W-1:PPN_W] == d_lpn_q))
                        else $error("ats_backend: tx %0d's record has a fragment of lpn %0d, a full page of its list (%m)",
                                    rx_t_q, d_lpn_q);
                end
            end
        end
`endif

        // ---- read merge (architecture §11.5, README_slog "Read merge"): every host read (not a
        //      read id) is LOOKed up in the index in s_rd order (before any later APPLY / RELEASE:
        //      apl_req waits, and no read is taken while one is on its way, rd_blk), its fragments
        //      kept per slot and the slot held (rm_hold) until the LOOKUP answered F = [] or the
        //      merge has copied every fragment into the slot's page: from the S-Log cache (a log
        //      page's words as they entered the staging memory, SLOG_CACHE lines by LPGN) or from a
        //      NAND READ (tag SL_TAG) of its log page, whose PPN the LPGN -> PPN table gives (the
        //      SLOG_PPNS newest log pages programmed). A fragment neither cached nor in the table,
        //      a failed log page READ or a page that is not that log page (spare lpn, epoch): the
        //      read is delivered MEDIA_ERROR (rm_bad). One slot is merged at a time.
        localparam int KW = (SLOG_FRAGS > 1) ? $clog2(SLOG_FRAGS) : 1;
        localparam int WA = $clog2(PW);
        localparam int CW = (SLOG_CACHE > 1) ? $clog2(SLOG_CACHE) : 1;
        localparam int TW = $clog2(SLOG_PPNS);
        logic [RD_SLOTS-1:0] mh_q, mn_q, mb_q, mt_q;    // held; fragments to merge; failed; tx table read
        logic [7:0]         fr_n [RD_SLOTS];            // the slot's fragments (|F| at its LOOKUP)
        logic [67:0]        fr_mem [RD_SLOTS << KW];    // {lpgn, pofs, off, len} per slot and fragment
        logic [KW-1:0]      lk_k_q;                     // the LOOKUP's next fragment
        logic               rd_acc;
        assign rd_acc  = ur_s_rd_valid && ur_s_rd_ready;
        assign lq_pend = lq_rd_q != lq_wr_q || ix_who_q == W_LK;
        assign lk_req  = lq_rd_q != lq_wr_q;
        assign rm_hold = mh_q;
        assign rm_bad  = mb_q;
        always_ff @(posedge clk) begin
            if (rst) begin
                lq_wr_q <= '0; mh_q <= '0; mn_q <= '0; mb_q <= '0; lk_k_q <= '0;
            end else begin
                if (rd_acc) begin
                    lq_s[lq_wr_q[RS_W-1:0]] <= rm_acc_s; lq_lpn[lq_wr_q[RS_W-1:0]] <= ur_rd_lpn;
                    lq_wr_q <= lq_wr_q + 1'b1;
                    mh_q[rm_acc_s] <= 1'b1; mn_q[rm_acc_s] <= 1'b0; mb_q[rm_acc_s] <= 1'b0;
                end
                if (rsp_rd) mt_q[rm_lk_s] <= s_rsp_from_tx;   // (a tx read answered from t's table: no merge)
                if (ixa_valid && ix_who_q == W_LK) begin
                    if (ixa_cnt != 8'd0) begin
                        fr_mem[{lk_s_q, lk_k_q}] <= {ixa_lpgn, ixa_pofs, ixa_off, ixa_len};
                        lk_k_q <= lk_k_q + 1'b1;
                    end
                    if (ixa_last) begin
                        lk_k_q <= '0;
                        fr_n[lk_s_q] <= ixa_cnt;
                        if (ixa_cnt == 8'd0) mh_q[lk_s_q] <= 1'b0;
                        else                 mn_q[lk_s_q] <= 1'b1;
                    end
                end
                if (mg_st_q == M_DONE) begin mh_q[rm_qs] <= 1'b0; mn_q[rm_qs] <= 1'b0; end
                if (mg_fail) mb_q[rm_qs] <= 1'b1;
            end
        end

        // the LPGN -> PPN table: a log page's PPN at its program's success (direct mapped by the
        // LPGN's low bits, the whole LPGN kept as the tag)
        logic [SLOG_PPNS-1:0] pt_v_q;
        logic [31:0]        pt_lpgn [SLOG_PPNS];
        logic [PPN_W-1:0]   pt_ppn  [SLOG_PPNS];
        // (and the firmware's SLOAD rop 1 after a recovery: a live log page's {LPGN, PPN}, in a cycle
        // without a program's)
        logic               pt_we;
        logic [31:0]        pt_wl;
        logic [PPN_W-1:0]   pt_wp;
        assign pt_we = (nc_ok && e_sl[nc_e]) || fs_pt;
        assign pt_wl = fs_pt ? fw_epoch_q : e_lpgn[nc_e];
        assign pt_wp = fs_pt ? fw_ppn_q : pack_ppn(e_chan[nc_e], e_way[nc_e], e_blk[nc_e], e_pg[nc_e]);
        always_ff @(posedge clk) begin
            if (pt_we) begin
                pt_lpgn[pt_wl[TW-1:0]] <= pt_wl;
                pt_ppn[pt_wl[TW-1:0]]  <= pt_wp;
            end
            if (rst) pt_v_q <= '0;
            else if (pt_we) pt_v_q[pt_wl[TW-1:0]] <= 1'b1;
        end

        // the merge
        logic [RS_W-1:0]    mg_s_q;
        logic [7:0]         mg_k_q, mg_n_q;
        logic [31:0]        mg_lpgn_q;
        logic [WA-1:0]      mg_pw_q, mg_ow_q, mg_i_q;   // source word, destination word, word index
        logic [WA:0]        mg_lw_q;                    // the fragment's words
        logic [CW-1:0]      mg_cl_q;
        logic [1:0]         mg_wt_q;
        logic [31:0]        mg_d_q;
        logic               mg_sp_q, mg_fail;
        logic [RD_SLOTS-1:0] mg_cand;
        logic [RS_W-1:0]    mg_pick;
        logic [67:0]        mg_f;
        logic [31:0]        mf_lpgn;
        logic               c_hit, t_hit, nd_in;
        logic [31:0]        c_rd;
        assign rm_qs   = mg_s_q;
        assign mg_cand = mn_q & mh_q & rm_fin;
        always_comb begin
            mg_pick = '0;
            for (int k = RD_SLOTS - 1; k >= 0; k--) if (mg_cand[k]) mg_pick = RS_W'(k);
        end
        assign mg_f    = fr_mem[{mg_s_q, mg_k_q[KW-1:0]}];
        assign mf_lpgn = mg_f[67:36];
        // the table's read address: the merge's fragment in M_FR, the firmware's rop 5 LPGN while the
        // merge is idle (rop 5 waits for an M_IDLE cycle: fs_tr); the PPN read registered (pt_rd_q)
        logic [31:0]        pt_ra;
        logic               pt_hit;
        assign pt_ra   = (mg_st_q == M_IDLE) ? fw_epoch_q : mf_lpgn;
        assign pt_hit  = pt_v_q[pt_ra[TW-1:0]] && pt_lpgn[pt_ra[TW-1:0]] == pt_ra;
        assign t_hit   = pt_hit;
        assign fs_tr   = fw_sl7 && fw_rop_q == 4'd5 && !fs_t1_q && mg_st_q == M_IDLE;
        always_ff @(posedge clk) begin
            if (mg_st_q == M_FR || fs_tr) pt_rd_q <= pt_ppn[pt_ra[TW-1:0]];
            if (fs_tr) fs_hit_q <= pt_hit;
            if (rst || fw_sl_done) fs_t1_q <= 1'b0;
            else if (fs_tr) fs_t1_q <= 1'b1;
        end
        if (SLOG_CACHE > 0) begin : g_cache
            // the S-Log cache: a log page's words as they go into the staging memory (X_PAGES),
            // line = LPGN mod SLOG_CACHE; a line is invalid from its page's first word to its last
            logic [SLOG_CACHE-1:0] ct_v_q;
            logic [31:0]        ct_lpgn [SLOG_CACHE];
            logic [CW-1:0]      fl_l, mf_l;
            assign fl_l  = (SLOG_CACHE > 1) ? CW'(lp_lpgn) : '0;
            assign mf_l  = (SLOG_CACHE > 1) ? CW'(mf_lpgn) : '0;
            assign c_hit = ct_v_q[mf_l] && ct_lpgn[mf_l] == mf_lpgn;
            always_ff @(posedge clk) begin
                if (sl_mem_we && pg_w_q == '0) ct_lpgn[fl_l] <= lp_lpgn;
                if (rst) ct_v_q <= '0;
                else if (sl_mem_we) ct_v_q[fl_l] <= lp_last;
            end
            ats_wbuf_mem #(.DEPTH(SLOG_CACHE * PW)) u_cache (
                .clk, .wr_en(sl_mem_we), .wr_addr($clog2(SLOG_CACHE * PW)'({fl_l, pg_w_q[WA-1:0]})),
                .wr_data(lp_data),
                .rd_addr($clog2(SLOG_CACHE * PW)'({mg_cl_q, WA'(mg_pw_q + mg_i_q)})), .rd_data(c_rd)
            );
        end else begin : g_nocache
            assign c_hit = 1'b0;
            assign c_rd  = '0;
        end
        assign mg_cc = SLOG_CACHE > 0 && (mg_st_q == M_FR || mg_st_q == M_CA || mg_st_q == M_CW);
        // a log page word of the READ within the fragment: into the slot at once (no host word then)
        assign nd_in = mg_st_q == M_NW && s_ndata_valid && nd_sl && 32'(s_ndata_widx) >= 32'(mg_pw_q) &&
                       32'(s_ndata_widx) < 32'(mg_pw_q) + 32'(mg_lw_q);
        assign rm_we = nd_in || mg_st_q == M_CW;
        assign rm_wa = nd_in ? {mg_s_q, WA'(32'(mg_ow_q) + 32'(s_ndata_widx) - 32'(mg_pw_q))}
                             : {mg_s_q, WA'(mg_ow_q + mg_i_q)};
        assign rm_wd = nd_in ? s_ndata_data : mg_d_q;
        assign sl_nrd_valid = mg_st_q == M_NRQ;
        assign sl_nrd_ppn   = pt_rd_q;           // (read in M_FR; rop 5 reads only in M_IDLE)
        assign sl_nw        = mg_st_q == M_NW;
        assign mg_fail = (mg_st_q == M_FR && !c_hit && !t_hit) ||
                         (mg_st_q == M_NW && ncpl_sl && (s_ncpl_status != N_OK || mg_sp_q));
        always_ff @(posedge clk) begin
            if (rst) begin
                mg_st_q <= M_IDLE;
            end else begin
                unique case (mg_st_q)
                    M_IDLE: if (mg_cand != '0) begin mg_s_q <= mg_pick; mg_st_q <= M_CHK; end
                    M_CHK: begin                         // the base: a merge only onto a good page of the L2P
                        mg_k_q <= 8'd0; mg_n_q <= fr_n[mg_s_q];
                        mg_st_q <= (rm_qz || !rm_qok || mt_q[mg_s_q]) ? M_DONE : M_FR;
                    end
                    M_FR: begin
                        mg_lpgn_q <= mf_lpgn; mg_pw_q <= WA'(mg_f[35:26]); mg_ow_q <= WA'(mg_f[23:14]);
                        mg_lw_q <= (WA+1)'(mg_f[11:2]); mg_i_q <= '0; mg_wt_q <= 2'd0;
                        mg_cl_q <= (SLOG_CACHE > 1) ? CW'(mf_lpgn) : '0;
                        mg_sp_q <= 1'b0;
                        mg_st_q <= c_hit ? M_CA : t_hit ? M_NRQ : M_DONE;
                    end
                    M_CA: begin                          // the cache word's address held 3 cycles (latency 2)
                        mg_wt_q <= mg_wt_q + 2'd1;
                        if (mg_wt_q == 2'd2) begin mg_d_q <= c_rd; mg_st_q <= M_CW; end
                    end
                    M_CW: if (rm_wok) begin
                        mg_i_q <= mg_i_q + 1'b1; mg_wt_q <= 2'd0;
                        mg_st_q <= ((WA+1)'(mg_i_q) + 1'b1 == mg_lw_q) ? M_NX : M_CA;
                    end
                    M_NRQ: if (i_sl) mg_st_q <= M_NW;
                    M_NW: begin
                        if (s_ndata_valid && nd_sl) begin    // the spare words: a log page, this LPGN
                            if (32'(s_ndata_widx) == PW && s_ndata_data != 32'hFFFFFFFF) mg_sp_q <= 1'b1;
                            if (32'(s_ndata_widx) == PW + 3 && s_ndata_data != mg_lpgn_q) mg_sp_q <= 1'b1;
                        end
                        if (ncpl_sl) mg_st_q <= mg_fail ? M_DONE : M_NX;
                    end
                    M_NX: begin
                        mg_k_q <= mg_k_q + 8'd1;
                        mg_st_q <= (mg_k_q + 8'd1 < mg_n_q) ? M_FR : M_DONE;
                    end
                    M_DONE: mg_st_q <= M_IDLE;
                    default: mg_st_q <= M_IDLE;
                endcase
            end
        end
        // ---- MERGE (firmware op 6, architecture §11.6, README "Firmware port"): waits until no S-Log
        //      record is being received or held (none is accepted from the request on: mg_blk, until
        //      the response), then reads lpn through the read unit like a host read (LOOKUP, base,
        //      fragments: the read merge) under the read tag MG_TAG; at its page's first word: F = []
        //      or no base: status 2, a failed base or fragment: status 3, the page dropped; else the
        //      page's words go into a RELOC entry (flags RELOC | SLOG, epoch = the base), completed
        //      as a RELOC with the RELEASE of its g_n_q fragments first (sl_ix_cp)
        logic [RS_W-1:0]    g_s_q;
        logic               g_map_q, g_bq_q, sl_held;
        logic [PPN_W-1:0]   g_base_q;
        always_comb begin
            sl_held = 1'b0;
            for (int i = 0; i < WIN; i++) if (e_sl[i] && e_st[i] != E_FREE) sl_held = 1'b1;
            if (OP && (pg_open || sp_q != SP_IDLE)) sl_held = 1'b1;   // (its records not yet in the table)
        end
        assign mg_blk     = g_st_q != G_IDLE;
        assign mg_acc_req = g_st_q == G_ACC;
        assign mg_base    = g_base_q;
        assign mg_take    = (recv_q && recv_mg_q) || g_st_q == G_DROP;
        assign mg_done    = g_st_q == G_DROP && ur_rdd_valid && mg_rdd && ur_rdd_last;
        always_ff @(posedge clk) begin
            if (rst) begin
                g_st_q <= G_IDLE;
            end else begin
                unique case (g_st_q)
                    G_IDLE: if (fw_mg) g_st_q <= G_WREC;
                    G_WREC: if (rx_st_q == X_IDLE && !sl_held) begin
                        g_n_q <= 8'd0; g_map_q <= 1'b0; g_bq_q <= 1'b0;
                        g_st_q <= G_RQ;
                    end
                    G_RQ: if (rd_acc) begin g_s_q <= rm_acc_s; g_st_q <= G_RD; end
                    G_RD: if (ur_rdd_valid && mg_rdd) begin     // the page's first word: the verdict
                        if (g_n_q == 8'd0 || !g_map_q) begin
                            g_sts_q <= 8'h02; g_st_q <= G_DROP;
                        end else if (g_bq_q || mb_q[g_s_q]) begin
                            g_sts_q <= 8'h03; g_st_q <= G_DROP;
                        end else begin
                            g_st_q <= G_ACC;
                        end
                    end
                    G_ACC: if (fw_acc_go) g_st_q <= G_DATA;
                    G_DATA: if (ur_fire && mg_rdd && ur_rdd_last) g_st_q <= G_CPL;
                    G_DROP: if (mg_done) g_st_q <= G_IDLE;
                    G_CPL: if (c_reloc_done) g_st_q <= G_IDLE;
                    default: g_st_q <= G_IDLE;
                endcase
                if (g_st_q == G_RD) begin
                    if (rsp_rd && rm_lk_s == g_s_q) begin
                        g_map_q <= s_rsp_status == 4'd0 && s_rsp_mapped; g_base_q <= lk_ppn_fx;
                    end
                    if (ixa_valid && ix_who_q == W_LK && ixa_last && lk_s_q == g_s_q) g_n_q <= ixa_cnt;
                    if (mg_st_q == M_CHK && mg_s_q == g_s_q) g_bq_q <= rm_qz || !rm_qok || mt_q[g_s_q];
                end
            end
        end
        assign sl_busy_any = sl_busy || sl_open || rid_v_q || rid_a_q || ix_who_q != W_NONE || apl_s_q != 2'd0 || sl_mp_busy ||
                             lq_pend || mg_st_q != M_IDLE || mg_cand != '0 || g_st_q != G_IDLE;   // (a held slot waiting for its page: no work)
        logic unused_sl;
        assign unused_sl = ^{sl_snap_ev, sl_scan_ev, sl_match_ev, sl_seal_ev, pg_open, rs_txid, mg_f[25:24], mg_f[13:12], mg_f[1:0], mg_cl_q};
`ifndef SYNTHESIS
        // GC's order guarantee (architecture §11.6): write-backs held and no record being received
        // in one cycle, the hold still on in the next: still none (s_wb takes nothing under wb_hold)
        logic               sim_hold_idle_q;
        always_ff @(posedge clk) sim_hold_idle_q <= !rst && wb_hold && !sl_busy && !sl_open;
        always_ff @(posedge clk) begin
            if (!rst) begin
                assert (!(sim_hold_idle_q && wb_hold && (sl_busy || sl_open)))
                    else $error("ats_backend: an S-Log record started being received under wb_hold (%m)");
                assert (!(ixa_valid && ix_who_q == W_NONE))
                    else $error("ats_backend: S-Log index answer with no command in flight (%m)");
                // the held records: at most SLOG_RECS + 1; the record completing is the oldest
                assert (!(hq_push && !hq_pop && 32'(hq_n_q) == HQN))
                    else $error("ats_backend: more than SLOG_RECS + 1 S-Log records held (%m)");
                assert (!hq_pop || (hq_n_q != '0 && hq_t[hq_rd_q] == cm_txid_q))
                    else $error("ats_backend: an S-Log record completed that is not the oldest held (%m)");
                assert (32'(hq_n_q) <= HQN)
                    else $error("ats_backend: held-record count %0d past its FIFO (%m)", hq_n_q);
                // a COMMIT's RELEASE meets no record's descriptor held (the S-Log LOOKUP waits for
                // sl_mp_busy): its only refusal, BAD_FIELD (pend > 0), would leave stale fragments
                assert (!(ixa_valid && ix_who_q == W_MAP && ixa_sts != ats_host_pkg::STS_OK))
                    else $error("ats_backend: a COMMIT's RELEASE refused, status %0d (%m)", ixa_sts);
                // the verdict's "every earlier request" is the whole table: while a record is being
                // received no entry is taken but its own log pages' and its abort's (README "S-Log record")
                assert (!(sl_busy && (acc_take || fw_acc_go)))
                    else $error("ats_backend: a table entry taken while an S-Log record is being received (%m)");
                assert (!(i_prog && !iss_retry && e_sl[iss_ent] && iss_rec_q == RC_CREC && txe_v_q[iss_txid_q]))
                    else $error("ats_backend: an S-Log record's last page issued for a doomed tx %0d (%m)", iss_txid_q);
            end
        end
`endif
    end else begin : g_noslog
        assign ur_s_rd_valid = s_rd_valid;
        assign s_rd_ready    = ur_s_rd_ready;
        assign ur_rd_lpn = s_rd_lpn, ur_rd_txid = s_rd_txid, ur_rd_tag = s_rd_tag;
        assign {mg_acc_req, mg_blk, mg_rdd, mg_take, mg_base} = '0;
        assign m_rdd_valid   = ur_rdd_valid;
        assign ur_rdd_ready  = m_rdd_ready;
        assign m_rdd_data    = ur_rdd_data;
        assign m_rdd_last    = ur_rdd_last;
        assign m_rdd_status  = ur_rdd_status;
        assign m_rdd_tag     = ur_rdd_tag;
        assign slog_lpgn     = 32'd0;
        assign {rm_hold, rm_bad, rm_we, rm_wa, rm_wd, rm_qs, sl_nrd_valid, sl_nrd_ppn, sl_nw} = '0;
        assign {fw_sl_done, fw_sl_status, fw_sl_data, fw_sl_ppn, fw_sl_mapped} = '0;
        logic unused_rm;
        assign unused_rm = ^{rm_fin, rm_wok, rm_qz, rm_qok, rm_acc_s, rm_lk_s, fw_sl_req, mg_take, slog_sealt};
        assign {sl_rec_st, sl_busy, sl_acc, sl_acc_fin, sl_ab_acc, sl_mem_we, sl_pg_done,
                sl_err_set, sl_wbd_ready, sl_rq_want, sl_rq_rl, sl_fin_cp, sl_mid_cp, sl_ix_cp, apl_done, sl_busy_any,
                sl_mp_busy, sl_mp_take} = '0;
        assign {sl_open, sl_cont, sl_more} = '0;
        assign sl_pt = '0, sl_ptag = '0, sl_ntx = '0, sl_ctag = '0;
        assign sl_acc_lpgn = '0, sl_t = '0, sl_wtag = '0, sl_wep = '0, sl_mem_wa = '0,
               sl_mem_wd = '0, sl_pg_e = '0, sl_err_st = '0, sl_rq_lpn = '0, apl_sts = '0, apl_cnt = '0;
    end

    // ---------------------------------------------------------------------------------------------
    // protocol errors, counted over all units (at most one per source a cycle; 3-bit sum as before)
    logic [2:0]         perr;
    always_comb begin
        perr = 3'd0;
        if (wbd_fire) begin                                // a missing or an early `last`: the word count decides
            if (32'(recv_w_q) == PW - 1) begin
                if (!(recv_mg_q ? ur_rdd_last : recv_fw_q ? s_fwd_last : s_wbd_last)) perr = perr + 3'd1;
            end else if (recv_mg_q ? ur_rdd_last : recv_fw_q ? s_fwd_last : s_wbd_last) begin
                perr = perr + 3'd1;
            end
        end
        if (s_free_valid && s_free_ready && !free_ok) perr = perr + 3'd1;   // free block of no die / beyond BLOCKS
        if (nc_stray) perr = perr + 3'd1;                  // completion of an entry not in flight
        if (nc_unknown) perr = perr + 3'd1;                // unknown NAND tag
        if (s_rsp_valid && !rsp_cpl && !rsp_rd && !rsp_fw && !rsp_tw && !rsp_sl) perr = perr + 3'd1;   // unknown remap tag
        perr = perr + rd_perr;                             // host reads (ats_backend_read)
        perr = perr + fw_perr;                             // firmware port (ats_backend_fw)
    end
    always_ff @(posedge clk) begin
        if (rst) cnt_proto_err <= '0;
        else     cnt_proto_err <= cnt_proto_err + 32'(perr);
    end

    // unused inputs
    // work that the ports do not show (rtl/core/README.md "Simulation cost"): requests in the table
    // (the issue pointer turns round the dies while a page waits for a block), a firmware-port, read
    // or completion FSM, a host read, the valid-count clear after reset
`ifdef SYNTHESIS
    assign busy = 1'b0;     // simulation only: no logic in a netlist
`else
    // ATS_SIM_SKIP (sim/soc/README.md "Cycle skipping"): requests in the table that only wait for
    // their NAND completions are no work: every accepted entry issued (none to issue or retry, so the
    // issue rule's registers settle and the issue pointer stands still), no early TX_WRITE queued, the
    // completion FSM idle and the oldest entry not ready for it. Nothing changes then until an input
    // does (a completion, a free block, a response: the gate's watch and act); the gate's HOLD settles
    // the one-shot steps (a die opening its next block, the registered issue rule and fix search).
    logic tbl_wait;
`ifdef ATS_SIM_SKIP
    assign tbl_wait = all_issued && rt_empty && !tw_ne && c_st_q == C_IDLE &&
                      !(cm_done_q && (!cm_tw_q || cm_twv_q));
`else
    assign tbl_wait = 1'b0;
`endif
    assign busy = (count != '0 && !tbl_wait) || !rt_empty || fw_busy || c_st_q != C_IDLE ||
                  rd_busy || vc_init_busy || (SL && sl_busy_any);
`endif

    logic unused;
    assign unused = ^{free_die[31:DIE_W], s_wb_kind, fx_free_ok, s_nfetch_slot[7:0], s_map_valid, s_inval_ppn,
                      s_wb_slog};
endmodule

`resetall
