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
//  - Read miss: up to RD_SLOTS reads in flight, each in a slot taken from a free list: LOOKUP
//    (TX_LOOKUP with a txid) in s_rd order -> zeros if unmapped, else NAND READ (tag 0x80 + slot) on
//    whatever die holds the page; the page lands in its slot of a read memory and leaves on m_rdd,
//    with the request's s_rd_tag on m_rdd_tag, as soon as its NAND completion gives the verdict
//    (status on the last word: OK, or MEDIA_ERROR on UNCORRECTABLE / wrong LPN in the spare area):
//    pages leave in any order, and the slot is free again after its last word.
// Theory, interface and persistence format: rtl/backend/README.md, docs/persistence.md.
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
    parameter int RD_SLOTS        = 16,    // host read misses in flight (read slots), power of two, 2..32
    parameter int PPN_W           = 16     // remap engine PPN width
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
    input  wire logic [2:0]               s_fw_op,        // 0 NREAD, 1 NPROG, 2 NERASE, 3 REMAP, 4 RELOC
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
    output wire logic [63:0]              cpl_seq,        // every request with a lower seq has completed
    input  wire logic [5:0]               txs_addr,       // txid -> txs_open / txs_seq (combinational)
    output wire logic                     txs_open,       // a page of txid was accepted, its commit / abort not yet
    output wire logic [63:0]              txs_seq,        // seq of that tx's first accepted page
    // ---- status and counters
    output wire logic                     no_free_block,  // a page waits and no die has a block
    output wire logic                     busy,           // work in flight (the core's simulation clock gate)
    output wire logic [63:0]              next_seq,       // seq the next request will get
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
    localparam int CH_W   = (NUM_CHAN > 1) ? $clog2(NUM_CHAN) : 1;
    localparam int VC_W   = $clog2(NDIE * BLOCKS) > 0 ? $clog2(NDIE * BLOCKS) : 1;
    localparam int PG_W   = $clog2(PAGES_PER_BLOCK);
    localparam int BLK_W  = (BLOCKS > 1) ? $clog2(BLOCKS) : 1;
    localparam int PW     = PAGE_BYTES / 4;             // data words per page
    localparam int PWW    = $clog2(PW + 5) + 1;          // word counter incl. metadata words
    localparam int WIN_W  = $clog2(WIN);
    localparam int MEM_DEPTH = WIN * PW;                 // (the firmware's NPROG page, "entry WIN": u_fwmem)
    localparam int MEM_AW = $clog2(MEM_DEPTH);
    localparam int DIE_PACK = (NDIE > 1) ? $clog2(NDIE) : 0;   // die bits in a PPN
    localparam logic [7:0] RD_TAG = 8'hFF;              // NAND tag of a firmware NREAD
    localparam logic [7:0] RB_TAG = 8'h80;              // NAND tags of host reads: 0x80 + slot
    localparam logic [7:0] PRB_TAG = 8'hFE;             // s_rd_tag of an own-table probe (README "Read miss")
    localparam int RS_W   = $clog2(RD_SLOTS);
    localparam int RWA    = $clog2(PW);                 // word address bits in a read slot
    localparam int ROB_DEPTH = RD_SLOTS << RWA;
    localparam logic [7:0] RT_CPL = 8'h01, RT_RD = 8'h02, RT_FW = 8'h03; // remap tags
    localparam logic [7:0] FW_TAG = 8'hFE;              // NAND tag of a firmware ERASE / PROGRAM
    localparam logic [2:0] FO_NREAD = 3'd0, FO_NPROG = 3'd1, FO_NERASE = 3'd2, FO_REMAP = 3'd3, FO_RELOC = 3'd4,
                           FO_SEQSET = 3'd5;
    // remap ops
    localparam logic [3:0] R_MAP_WRITE = 4'd0, R_LOOKUP = 4'd1, R_TX_WRITE = 4'd2,
                           R_TX_LOOKUP = 4'd3, R_COMMIT = 4'd4, R_ABORT = 4'd5, R_UNMAP = 4'd6;
    // tx record kinds (s_wb_rec)
    localparam logic [1:0] RC_NONE = 2'd0, RC_CMARK = 2'd1, RC_CREC = 2'd2, RC_AREC = 2'd3;
    // NAND statuses
    localparam logic [2:0] N_OK = 3'd0;   // any other status of a READ: MEDIA_ERROR
    // spare flags (persistence.md): bit 0 commit, bit 1 commit block, bit 2 TRIM record
    localparam logic [7:0] F_COMMIT = 8'h01, F_TRIM = 8'h04, F_ABORT = 8'h08, F_RELOC = 8'h10;

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

    // ring pointers with one wrap bit: entry = pointer[WIN_W-1:0]
    logic [WIN_W:0]     acc_ptr_q, iss_ptr_q, cpl_ptr_q;
    logic [WIN_W:0]     count;            // allocated entries (acc - cpl)
    logic [WIN_W:0]     to_issue;         // accepted, not yet issued in order (acc - iss)
    logic [63:0]        cpl_seq_q;        // seq of the oldest entry (cpl_ptr); entry i has
                                          // seq = cpl_seq_q + ((i - cpl_ptr) mod WIN)
    logic [63:0]        seq_q;            // seq of the next request: cpl_seq_q + count
    assign count    = acc_ptr_q - cpl_ptr_q;
    assign to_issue = acc_ptr_q - iss_ptr_q;
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

    // firmware FSM (declared here: the accept logic shares the table with RELOC)
    typedef enum logic [3:0] {F_IDLE, F_RD, F_PRECV, F_NREQ, F_NCPL, F_REMAP, F_RSPW, F_RACC, F_RWAIT, F_DONE} fw_state_e;
    fw_state_e          fw_st_q;
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
    logic [PWW-1:0]     fw_w_q;           // NPROG words received
    logic               recv_fw_q;        // the entry being received is a RELOC (data on s_fwd)
    logic               fw_acc;           // RELOC enters the table this cycle
    logic               fwp_we;           // NPROG word into the firmware page
    assign fw_acc      = fw_st_q == F_RACC && !recv_q && (count != (WIN_W+1)'(WIN)) && !rst;
    assign s_wb_ready  = !recv_q && (count != (WIN_W+1)'(WIN)) && !rst && fw_st_q != F_RACC && !wb_hold;
    assign acc_fire    = s_wb_valid && s_wb_ready;
    assign s_wbd_ready = recv_q && !recv_fw_q;
    assign fwp_we      = fw_st_q == F_PRECV && s_fwd_valid;
    assign s_fwd_ready = (recv_q && recv_fw_q) || fw_st_q == F_PRECV;
    assign wbd_fire    = recv_q && (recv_fw_q ? s_fwd_valid : s_wbd_valid);
    assign mem_we      = wbd_fire;
    assign mem_wa      = MEM_AW'(32'(recv_ent_q) * 32'(PW) + 32'(recv_w_q));
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
        .clk, .wr_en(mem_we), .wr_addr(mem_wa), .wr_data(recv_fw_q ? s_fwd_data : s_wbd_data),
        .rd_addr(mem_ra), .rd_data(mem_rd)
    );
    // the firmware's NPROG page (fetch slot WIN), same read latency as the staging memory
    localparam int FW_AW = $clog2(PW);
    logic [31:0]        fw_rd;
    logic [FW_AW-1:0]   fw_ra;
    ats_wbuf_mem #(.DEPTH(PW)) u_fwmem (
        .clk, .wr_en(fwp_we), .wr_addr(FW_AW'(fw_w_q)), .wr_data(s_fwd_data), .rd_addr(fw_ra), .rd_data(fw_rd)
    );

    // per-tx error: the first failed TX_WRITE's status (TX_FULL, INDEX_FULL, ...), until the tx's
    // commit or abort completes. A commit of such a tx is written and applied as an abort.
    logic [63:0]        txe_v_q;
    logic [3:0]         txe_st_q [64];

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
    assign rt_empty = rt_rd_q == rt_wr_q;

    localparam int BADQ = 4;
    logic [16:0]        bq_mem [BADQ];    // {chan 3, way 2, block 12}
    logic [2:0]         bq_rd_q, bq_wr_q;
    logic               bq_full, bq_empty;
    assign bq_empty = bq_rd_q == bq_wr_q;
    assign bq_full  = (bq_wr_q - bq_rd_q) == 3'(BADQ);
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
    // firmware NREAD FSM (host reads: the read ring below)
    logic               rd_bbm_q;         // NREAD: the page's factory bad-block mark
    typedef enum logic [2:0] {RD_IDLE, RD_NREQ, RD_DATA, RD_CPL, RD_LAST} rd_state_e;
    rd_state_e          rd_st_q;
    logic [PPN_W-1:0]   rd_ppn_q;
    logic [PWW-1:0]     rd_w_q;
    logic [7:0]         rd_status_q;
    logic [31:0]        rd_meta_q;        // NREAD: the last spare word, held until the completion
    // firmware response register (m_fwr), stable until taken
    logic               fo_v_q, fo_last_q, fo_mapped_q;
    logic [7:0]         fo_status_q;
    logic [31:0]        fo_data_q;
    logic [PPN_W-1:0]   fo_ppn_q;
    logic               fo_free;
    assign fo_free      = !fo_v_q || m_fwr_ready;
    assign m_fwr_valid  = fo_v_q;
    assign m_fwr_status = fo_status_q;
    assign m_fwr_data   = fo_data_q;
    assign m_fwr_last   = fo_last_q;
    assign m_fwr_ppn    = fo_ppn_q;
    assign m_fwr_mapped = fo_mapped_q;
    assign s_fw_ready   = fw_st_q == F_IDLE && !fo_v_q && !rst;

    // ---------------------------------------------------------------------------------------------
    // host reads (README "Read miss"): RD_SLOTS slots. A read takes the slot at the head of the free
    // list and its slot number goes into the order ring, in s_rd order. Order-ring pointers with a
    // wrap bit: ra (next accepted), rl (next to look up), rn (next to issue to NAND).
    // [rn, rl): looked up (or its lookup in flight: lk_wait_q, rl - 1); [rl, ra): waiting for the
    // remap request register. Lookups and NAND READs go in s_rd order; delivery in any order: a
    // slot whose verdict and page are there is picked (round robin), its words leave on m_rdd, and
    // after its last word the slot goes back to the free list.
    logic [RS_W:0]          ra_q, rl_q, rn_q;
    logic [RS_W-1:0]        oq      [RD_SLOTS];   // order ring: slot numbers in s_rd order
    logic [RS_W-1:0]        fl      [RD_SLOTS];   // free list of slots
    logic [RS_W:0]          fl_rd_q, fl_wr_q;
    logic [31:0]            rb_lpn  [RD_SLOTS];
    logic [5:0]             rb_txid [RD_SLOTS];
    logic [7:0]             rb_tag  [RD_SLOTS];   // the write buffer's read id (s_rd_tag), echoed on m_rdd_tag
    logic [PPN_W-1:0]       rb_ppn  [RD_SLOTS];
    logic [7:0]             rb_st   [RD_SLOTS];   // verdict: 0x00 OK, 0x10 MEDIA_ERROR
    logic [RD_SLOTS-1:0]    rb_nand_q;            // mapped: a NAND READ is needed
    logic [RD_SLOTS-1:0]    rb_req_q;             // its NAND READ issued
    logic [RD_SLOTS-1:0]    rb_zero_q;            // delivered as zeros (unmapped, or no data will come)
    logic [RD_SLOTS-1:0]    rb_dat_q;             // every word of the page received
    logic [RD_SLOTS-1:0]    rb_rdy_q;             // verdict known (NAND completion, or lookup: zeros)
    logic [RD_SLOTS-1:0]    rb_bad_q;             // spare LPN differs from the LPN read
    logic [RD_SLOTS-1:0]    rb_out_q;             // picked for delivery (until the slot is accepted again)
    logic                   lk_wait_q;            // a lookup in flight, for slot lk_s_q
    logic                   lk_prb_q;             // ... of an own-table probe (s_rd_tag 0xFE with a txid)
    logic [RS_W-1:0]        lk_s_q, ra_s, rl_s, rn_s;
    logic                   rb_full, lk_go, rn_ok, rb_want, rb_skip;
    // the order ring is read through registers (timing: the ring's LUT RAM, then a slot-indexed
    // table, then the issue priority chain into the firmware FSM was the core's critical path):
    //   rl_s_q = oq[rl_q] (the read to look up next), valid when rl_fresh_q;
    //   rn_s_q = oq[rn_q] (the read to issue next) with rn_ok_q (its lookup answered) and rn_nand_q
    //   (mapped: a NAND READ), computed from the registers of the cycle before; for one cycle after
    //   rn_q moved they describe the previous read (rn_adv_q) and are not used.
    logic [RS_W-1:0]        rl_s_q, rn_s_q;
    logic                   rl_fresh_q, rn_ok_q, rn_nand_q, rn_adv_q;
    assign ra_s = fl[fl_rd_q[RS_W-1:0]];          // the slot a read accepted now takes
    assign rl_s = rl_s_q;
    assign rn_s = rn_s_q;
    assign rb_full = fl_rd_q == fl_wr_q;          // no free slot
    // a lookup goes out as soon as the request register is free: before any completion or firmware
    // remap request (those wait while rl != ra), so a read sees the mapping of its acceptance time
    // at the latest (never one of a write-back accepted after it)
    assign lk_go   = (rl_q != ra_q) && !lk_wait_q && rl_fresh_q;
    assign rn_ok   = rn_ok_q && !rn_adv_q;
    assign rb_want = rn_ok && rn_nand_q;
    assign rb_skip = rn_ok && !rn_nand_q;
    // while a firmware ERASE waits, no read is accepted, and the ERASE goes to NAND only once every
    // accepted read has its NAND READ issued (per-die order: the read of a page is never behind the
    // erase of its block)
    logic                   erase_wait;
    assign erase_wait  = fw_st_q == F_NREQ && fw_op_q == FO_NERASE;
    assign s_rd_ready  = !rb_full && !erase_wait && !rst;
    // read memory: slot s, word w at {s, w}. A page is written only for a slot whose NAND READ is
    // in flight and whose page has not come yet (a stray page is a protocol error, not a write)
    logic                   nd_rb;            // s_ndata beat of a host read
    logic [RS_W-1:0]        nd_s;
    logic [PWW-1:0]         nd_w;             // the word's index in its page
    logic                   rob_we;
    logic [$clog2(ROB_DEPTH)-1:0] rob_wa, rob_ra;
    logic [31:0]            rob_rd;
    assign nd_rb  = s_ndata_tag[7:RS_W] == RB_TAG[7:RS_W];
    assign nd_s   = s_ndata_tag[RS_W-1:0];
    assign nd_w   = 32'(s_ndata_widx) > PW + 4 ? PWW'(PW + 5) : PWW'(s_ndata_widx);   // (saturated)
    assign rob_we = s_ndata_valid && nd_rb && 32'(nd_w) < PW && rb_req_q[nd_s] && !rb_dat_q[nd_s];
    assign rob_wa = {nd_s, RWA'(nd_w)};
    ats_wbuf_mem #(.DEPTH(ROB_DEPTH)) u_rob (
        .clk, .wr_en(rob_we), .wr_addr(rob_wa), .wr_data(s_ndata_data), .rd_addr(rob_ra), .rd_data(rob_rd)
    );
    // delivery: pick a finished slot (registered candidate vector, round robin from the slot after
    // the last one delivered), then its words (memory latency 2) into a 4-entry output FIFO = m_rdd.
    // The vector is a cycle old: a slot picked or freed in cycle t is out of it by t + 1 (rb_out_q),
    // and a page takes PW cycles at least, so no slot is picked twice.
    localparam int OBD = 4;
    logic [RD_SLOTS-1:0]    dv_cand_q;        // slots ready to deliver, not yet picked
    logic                   dv_act_q;         // a page is being delivered from slot dv_s_q
    logic [RS_W-1:0]        dv_s_q, dv_rr_q, dv_pick_s;
    logic                   dv_pick;
    logic [RWA:0]           dl_w_q;           // next word of that page
    logic                   dl_pick, dl_last;
    logic [31:0]            ob_data [OBD];
    logic                   ob_last [OBD];
    logic [7:0]             ob_st   [OBD];
    logic [7:0]             ob_tag  [OBD];
    logic [2:0]             ob_rd_q, ob_wr_q, ob_pend_q;
    logic                   q1_v_q, q2_v_q, q1_z_q, q2_z_q, q1_l_q, q2_l_q;
    logic [7:0]             q1_st_q, q2_st_q, q1_tag_q, q2_tag_q;
    function automatic logic [RS_W-1:0] rr_pick(input logic [RD_SLOTS-1:0] v, input logic [RS_W-1:0] from);
        rr_pick = from;
        for (int k = RD_SLOTS - 1; k >= 0; k--) if (v[RS_W'(from + RS_W'(k))]) rr_pick = RS_W'(from + RS_W'(k));
    endfunction
    assign dv_pick   = !dv_act_q && dv_cand_q != '0 && !rst;
    assign dv_pick_s = rr_pick(dv_cand_q, dv_rr_q);
    // room for one more word: FIFO occupancy + words in the memory pipeline < 4 (4-bit arithmetic,
    // the same rule as the fetch DMA's output FIFOs)
    assign dl_pick = dv_act_q && (4'(3'(ob_wr_q - ob_rd_q)) + 4'(ob_pend_q)) < 4'(OBD) && !rst;
    assign dl_last = 32'(dl_w_q) == PW - 1;
    assign rob_ra  = {dv_s_q, RWA'(dl_w_q)};
    assign m_rdd_valid  = ob_wr_q != ob_rd_q;
    assign m_rdd_data   = ob_data[ob_rd_q[1:0]];
    assign m_rdd_last   = ob_last[ob_rd_q[1:0]];
    assign m_rdd_status = ob_st[ob_rd_q[1:0]];
    assign m_rdd_tag    = ob_tag[ob_rd_q[1:0]];
    always_ff @(posedge clk) begin
        dv_cand_q <= rb_rdy_q & (rb_zero_q | rb_dat_q) & ~rb_out_q;
        if (rst) begin
            dl_w_q <= '0; dv_act_q <= 1'b0; dv_rr_q <= '0; dv_cand_q <= '0;
            ob_rd_q <= 3'd0; ob_wr_q <= 3'd0; ob_pend_q <= 3'd0;
            q1_v_q <= 1'b0; q2_v_q <= 1'b0;
        end else begin
            if (dv_pick) begin
                dv_act_q <= 1'b1; dv_s_q <= dv_pick_s; dv_rr_q <= dv_pick_s + 1'b1;
            end
            q1_v_q <= dl_pick; q1_z_q <= rb_zero_q[dv_s_q]; q1_l_q <= dl_last;
            q1_st_q <= dl_last ? rb_st[dv_s_q] : 8'h00; q1_tag_q <= rb_tag[dv_s_q];
            q2_v_q <= q1_v_q; q2_z_q <= q1_z_q; q2_l_q <= q1_l_q; q2_st_q <= q1_st_q; q2_tag_q <= q1_tag_q;
            ob_pend_q <= ob_pend_q + (dl_pick ? 3'd1 : 3'd0) - (q2_v_q ? 3'd1 : 3'd0);
            if (q2_v_q) begin
                ob_data[ob_wr_q[1:0]] <= q2_z_q ? 32'd0 : rob_rd;
                ob_last[ob_wr_q[1:0]] <= q2_l_q;
                ob_st[ob_wr_q[1:0]]   <= q2_st_q;
                ob_tag[ob_wr_q[1:0]]  <= q2_tag_q;
                ob_wr_q <= ob_wr_q + 3'd1;
            end
            if (m_rdd_valid && m_rdd_ready) ob_rd_q <= ob_rd_q + 3'd1;
            if (dl_pick) dl_w_q <= dl_last ? '0 : dl_w_q + 1'b1;
            if (dl_pick && dl_last) dv_act_q <= 1'b0;
        end
    end

    // ---------------------------------------------------------------------------------------------
    // completion FSM
    typedef enum logic [2:0] {C_IDLE, C_REQ, C_WAIT, C_VC_NEW, C_ACK} cpl_state_e;
    cpl_state_e         c_st_q;
    logic [7:0]         c_status_q;
    logic [PPN_W-1:0]   c_ppn_q;
    logic [15:0]        c_cnt_q;          // COMMIT of a commit record: entries applied (m_wbc_ppn of the record)
    // remap operations of the oldest entry: phase 0 its mapping (or COMMIT / ABORT of a record);
    // a COMMIT-marked page: TX_WRITE, then COMMIT (phase 1), then, if its TX_WRITE failed, its
    // own MAP_WRITE after the commit (phase 2: the page is the tx's last, so the L2P result is
    // the one recovery's replay gives)
    logic [1:0]         c_phase_q;
    logic               c_mapafter_q;     // phase 2 needed
    logic [3:0]         c_op;             // operation of the current phase
    logic [3:0]         c_op_q;           // operation waited for
    cpl_state_e         c_after_vc_q;     // state after C_VC_NEW

    // remap request output register (completion and read FSMs share it)
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
    // order-ring read registers (declared with the read ring above)
    always_ff @(posedge clk) begin
        rl_s_q     <= oq[rl_q[RS_W-1:0]];
        rl_fresh_q <= (rl_q != ra_q) && !(lk_go && rq_free);
        rn_s_q     <= oq[rn_q[RS_W-1:0]];
        rn_ok_q    <= (rn_q != rl_q) && !(lk_wait_q && rn_q == (rl_q - 1'b1));
        rn_nand_q  <= rb_nand_q[oq[rn_q[RS_W-1:0]]];
        rn_adv_q   <= rb_skip || (nq_free && rb_want);
        if (rst) begin
            rl_fresh_q <= 1'b0;
            rn_ok_q    <= 1'b0;
            rn_adv_q   <= 1'b0;
        end
    end
    assign s_rsp_ready = 1'b1;
    assign s_map_ready = 1'b1;            // commit log stream (transactions: persistence.md)

    // completion output register
    logic               wc_v_q;
    logic [7:0]         wc_tag_q, wc_status_q;
    logic [15:0]        wc_ppn_q;
    assign m_wbc_valid = wc_v_q; assign m_wbc_tag = wc_tag_q;
    assign m_wbc_status = wc_status_q; assign m_wbc_ppn = wc_ppn_q;

    // ---------------------------------------------------------------------------------------------
    // valid-page counts: one event a cycle (+1 new page, -1 superseded page)
    logic [8:0]         vc_mem [NDIE * BLOCKS];
    logic               vc_ev;
    logic               vc_inc;
    logic [PPN_W-1:0]   vc_ppn;
    logic               cpl_vc_ev;        // completion FSM's event this cycle
    logic               cpl_vc_inc;
    logic [PPN_W-1:0]   cpl_vc_ppn;
    assign s_inval_ready = !cpl_vc_ev && !rst;
    always_comb begin
        vc_ev  = cpl_vc_ev || s_inval_valid;
        vc_inc = cpl_vc_ev ? cpl_vc_inc : 1'b0;
        vc_ppn = cpl_vc_ev ? cpl_vc_ppn : s_inval_ppn;
    end
    function automatic logic [31:0] vc_index(input logic [PPN_W-1:0] p);
        vc_index = ppn_die(p) * 32'(BLOCKS) + ppn_block(p);
    endfunction
    // valid counts start at 0: cleared by an init pass after reset (NDIE x BLOCKS cycles, long
    // before the first program can complete: the NAND subsystem's power-on RESET takes longer)
    logic [15:0]        vc_init_q;
    logic               vc_init_busy;
    assign vc_init_busy = 32'(vc_init_q) < NDIE * BLOCKS;
    always_ff @(posedge clk) begin
        if (rst) vc_init_q <= 16'd0;
        else if (vc_init_busy) vc_init_q <= vc_init_q + 16'd1;
    end
    // The event is registered first (index computed from the PPN), then applied the next cycle as
    // a read-modify-write: the remap response and s_inval no longer reach the LUT-RAM's increment in
    // the same cycle (that was the core's critical path, README "Synthesis"). Events stay one a
    // cycle and are applied in order, each reading the counts every earlier event wrote.
    logic               vc_ev_q, vc_inc_q;
    logic [VC_W-1:0]    vc_idx_q;
    always_ff @(posedge clk) begin
        if (rst) begin
            vc_ev_q <= 1'b0;
        end else begin
            vc_ev_q <= vc_ev;
        end
        vc_inc_q <= vc_inc;
        vc_idx_q <= VC_W'(vc_index(vc_ppn));
    end
    always_ff @(posedge clk) begin
        if (!rst && vc_init_busy) begin
            vc_mem[VC_W'(vc_init_q)] <= 9'd0;
        end else if (!rst && vc_ev_q) begin
            if (vc_inc_q) vc_mem[vc_idx_q] <= vc_mem[vc_idx_q] + 9'd1;
            else          vc_mem[vc_idx_q] <= vc_mem[vc_idx_q] - 9'd1;
        end
        vc_data <= (32'(vc_addr) < NDIE * BLOCKS) ? vc_mem[VC_W'(vc_addr)] : 9'd0;
    end

    // ---------------------------------------------------------------------------------------------
    // issue: next entry (retry first, else in order) to the round-robin die
    logic               iss_have;
    logic [WIN_W-1:0]   iss_ent;
    logic               iss_retry;
    logic               die_ok;
    logic               any_block;
    always_comb begin
        iss_retry = !rt_empty;
        iss_ent   = iss_retry ? rt_mem[rt_rd_q[WIN_W-1:0]] : iss_e;
        // a commit / abort (record or COMMIT-marked page) is issued only once every earlier request
        // has completed: its TX_WRITEs' statuses are known, so a doomed commit is written as an abort
        iss_have  = iss_retry || (to_issue != '0 && e_st[iss_e] == E_QUEUED &&
                                  (e_rec[iss_e] == RC_NONE || iss_ptr_q == cpl_ptr_q));
        die_ok    = op_v[rr_q];
        any_block = 1'b0;
        for (int d = 0; d < NDIE; d++) any_block = any_block | op_v[d] | nx_v[d];
    end
    assign no_free_block   = iss_have && !any_block;

    // ---------------------------------------------------------------------------------------------
    // fetch DMA: per channel a fetch queue of 2 and an output FIFO of 4 words; one word a cycle
    // read from the staging memory (or generated) for the channel chosen round robin.
    localparam int OFD = 4;
    logic               fq_v   [NUM_CHAN][2];
    logic [WIN_W:0]     fq_ent [NUM_CHAN][2];    // table entry, or WIN = the firmware's NPROG page
    logic [PWW-1:0]     fq_w   [NUM_CHAN];       // next word of the head fetch
    logic [31:0]        of_mem [NUM_CHAN][OFD];
    logic               of_last[NUM_CHAN][OFD];
    logic [2:0]         of_rd  [NUM_CHAN], of_wr [NUM_CHAN];
    logic [2:0]         of_pend[NUM_CHAN];       // words in flight in the read pipeline
    logic [2:0]         dch_q;                   // round-robin pointer
    // read pipeline: stage 0 picks a channel; stage p0 (registered pick) issues the memory
    // address (the pick -> address path crossed the device: c690592's critical path); stage 1
    // builds the spare words / zeros; stage 2 (memory data) pushes into the channel's FIFO
    logic               p0_v_q, p0_fw_q;
    logic [2:0]         p0_ch_q;
    logic [WIN_W-1:0]   p0_e_q;
    logic [PWW-1:0]     p0_w_q;
    logic               p1_v_q, p2_v_q;
    logic [2:0]         p1_ch_q, p2_ch_q;
    logic               p2_ram_q, p2_last_q, p1_fw_q, p2_fw_q;
    logic [WIN_W-1:0]   p1_e_q;
    logic [PWW-1:0]     p1_w_q;
    logic [31:0]        p2_val_q;

    logic               f_pick;
    logic [2:0]         f_ch;
    logic [WIN_W:0]     f_ent;
    logic               f_fw;             // the firmware's page
    logic [WIN_W-1:0]   f_e;              // table entry (f_ent when not f_fw)
    logic [PWW-1:0]     f_w;
    logic               g_ram;            // stage 1: word from the memory (else g_val)
    logic [31:0]        g_val;
    logic               g_last;
    logic [63:0]        g_seq;
    always_comb begin
        f_pick = 1'b0;
        f_ch   = 3'd0;
        for (int k = NUM_CHAN - 1; k >= 0; k--) begin
            logic [CH_W-1:0] c;
            c = CH_W'((32'(dch_q) + k) % NUM_CHAN);
            // room in the 4-word output FIFO for one more word (occupancy + words in the pipeline,
            // both at most 4: 4-bit arithmetic, no wide compare on this path)
            if (fq_v[c][0] && (4'(3'(of_wr[c] - of_rd[c])) + 4'(of_pend[c])) < 4'(OFD)) begin
                f_pick = 1'b1;
                f_ch   = 3'(c);
            end
        end
        f_ent  = fq_ent[CH_W'(f_ch)][0];
        f_fw   = 32'(f_ent) == WIN;
        f_e    = WIN_W'(f_ent);
        f_w    = fq_w[CH_W'(f_ch)];
    end
    assign mem_ra = MEM_AW'(32'(p0_e_q) * 32'(PW) + ((32'(p0_w_q) < PW) ? 32'(p0_w_q) : 32'd0));
    assign fw_ra  = FW_AW'((32'(p0_w_q) < PW) ? 32'(p0_w_q) : 32'd0);
    // stage 1: from the registered entry and word (the entry's fields do not change while it is
    // fetched: written at acceptance, flags at issue, before the NAND asks for the data)
    always_comb begin
        g_seq  = p1_fw_q ? fw_seq_q : e_seq[p1_e_q];
        g_ram  = 1'b0;
        g_val  = 32'd0;
        g_last = 1'b0;
        if (32'(p1_w_q) < PW) begin
            g_ram = p1_fw_q || !e_trim[p1_e_q];   // a TRIM / commit / abort record carries zeros
        end else begin
            case (32'(p1_w_q) - PW)
                0: g_val = p1_fw_q ? fw_lpn_q : e_lpn[p1_e_q];
                1: g_val = g_seq[31:0];
                2: g_val = g_seq[63:32];
                // a RELOC's epoch field holds the page it relocates (persistence.md section 4)
                3: g_val = p1_fw_q ? fw_epoch_q : e_fw[p1_e_q] ? 32'(e_old[p1_e_q]) : {16'h0000, e_epoch[p1_e_q]};
                default: begin
                    g_val  = p1_fw_q ? {8'h00, fw_flags_q, 6'd0, fw_kind_q, 2'b00, fw_txid_q}
                                     : {8'h00, e_flags[p1_e_q], 6'd0, e_kind[p1_e_q], 2'b00, e_txid[p1_e_q]};
                    g_last = 1'b1;
                end
            endcase
        end
    end
    assign s_nfetch_ready = !rst && 32'(s_nfetch_chan) < NUM_CHAN && !fq_v[CH_W'(s_nfetch_chan)][1];
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_nd
        assign m_ndata_valid[c]       = of_wr[c] != of_rd[c];
        assign m_ndata_data[c*32 +: 32] = of_mem[c][of_rd[c][1:0]];
        assign m_ndata_last[c]        = of_last[c][of_rd[c][1:0]];
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            for (int c = 0; c < NUM_CHAN; c++) begin
                fq_v[c][0] <= 1'b0; fq_v[c][1] <= 1'b0; fq_w[c] <= '0;
                of_rd[c] <= 3'd0; of_wr[c] <= 3'd0; of_pend[c] <= 3'd0;
            end
            dch_q <= 3'd0;
            p0_v_q <= 1'b0; p1_v_q <= 1'b0; p2_v_q <= 1'b0;
        end else begin
            // pipeline
            p2_v_q <= p1_v_q; p2_ch_q <= p1_ch_q; p2_ram_q <= g_ram; p2_last_q <= g_last;
            p2_val_q <= g_val; p2_fw_q <= p1_fw_q;
            p1_v_q <= p0_v_q; p1_ch_q <= p0_ch_q; p1_fw_q <= p0_fw_q; p1_e_q <= p0_e_q; p1_w_q <= p0_w_q;
            p0_v_q <= f_pick; p0_ch_q <= f_ch; p0_fw_q <= f_fw; p0_e_q <= f_e; p0_w_q <= f_w;
            for (int c = 0; c < NUM_CHAN; c++) begin
                logic inc, dec;
                inc = f_pick && f_ch == 3'(c);
                dec = p2_v_q && p2_ch_q == 3'(c);
                of_pend[c] <= of_pend[c] + (inc ? 3'd1 : 3'd0) - (dec ? 3'd1 : 3'd0);
                if (dec) begin
                    of_mem[c][of_wr[c][1:0]]  <= p2_ram_q ? (p2_fw_q ? fw_rd : mem_rd) : p2_val_q;
                    of_last[c][of_wr[c][1:0]] <= p2_last_q;
                    of_wr[c] <= of_wr[c] + 3'd1;
                end
                if (m_ndata_valid[c] && m_ndata_ready[c]) of_rd[c] <= of_rd[c] + 3'd1;
                // fetch queue: head advances when its last word is picked
                if (inc) begin
                    if (32'(fq_w[c]) == PW + 4) begin
                        fq_w[c] <= '0;
                        fq_v[c][0] <= fq_v[c][1]; fq_ent[c][0] <= fq_ent[c][1];
                        fq_v[c][1] <= 1'b0;
                    end else begin
                        fq_w[c] <= fq_w[c] + 1'b1;
                    end
                end
                if (s_nfetch_valid && s_nfetch_ready && s_nfetch_chan == 3'(c)) begin
                    // slot = table entry; entry 1 is empty (s_nfetch_ready): joins behind the head,
                    // or becomes the head if the head is empty or leaving this cycle
                    if (!fq_v[c][0] || (inc && 32'(fq_w[c]) == PW + 4)) begin
                        fq_v[c][0] <= 1'b1; fq_ent[c][0] <= (WIN_W+1)'(s_nfetch_slot);
                    end else begin
                        fq_v[c][1] <= 1'b1; fq_ent[c][1] <= (WIN_W+1)'(s_nfetch_slot);
                    end
                end
            end
            if (f_pick) dch_q <= 3'((32'(f_ch) + 1) % NUM_CHAN);
        end
    end

    // ---------------------------------------------------------------------------------------------
    // main sequential block: table, dies, issue, NAND completions, completion FSM, read FSM
    logic               ncpl_fire;
    logic               ncpl_prog, ncpl_read;
    assign s_ncpl_ready = !rst && !bq_full;
    assign ncpl_fire    = s_ncpl_valid && s_ncpl_ready;
    assign ncpl_prog    = ncpl_fire && 32'(s_ncpl_tag) < WIN;
    logic               ncpl_fw;
    assign ncpl_fw      = ncpl_fire && s_ncpl_tag == FW_TAG;
    assign ncpl_read    = ncpl_fire && s_ncpl_tag == RD_TAG;
    logic               ncpl_rb;          // a host read's completion (tag 0x80 + slot)
    logic [RS_W-1:0]    ncpl_e;
    assign ncpl_rb      = ncpl_fire && s_ncpl_tag[7:RS_W] == RB_TAG[7:RS_W];
    assign ncpl_e       = s_ncpl_tag[RS_W-1:0];
    // a host read's words always go into the reorder memory; an NREAD's to m_fwr (the spare words
    // but the last one through the response register, the last one held for the completion)
    assign s_ndata_ready = nd_rb || ((rd_st_q == RD_DATA) && (32'(rd_w_q) >= PW + 4 || fo_free));

    logic               rsp_cpl, rsp_rd;
    assign rsp_cpl = s_rsp_valid && s_rsp_tag == RT_CPL;
    assign rsp_rd  = s_rsp_valid && s_rsp_tag == RT_RD;
    logic rsp_fw;
    assign rsp_fw  = s_rsp_valid && s_rsp_tag == RT_FW;

    // completion FSM outputs for the valid counts
    always_comb begin
        cpl_vc_ev  = 1'b0;
        cpl_vc_inc = 1'b0;
        cpl_vc_ppn = c_ppn_q;
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
    always_comb begin
        if (e_trim[cp] && e_rec[cp] == RC_NONE)               c_op = R_UNMAP;
        else if (e_rec[cp] == RC_AREC || (e_rec[cp] != RC_NONE && e_doom[cp])) c_op = R_ABORT;
        else if (e_rec[cp] == RC_CREC)                         c_op = R_COMMIT;
        else if (e_rec[cp] == RC_CMARK)                        c_op = (c_phase_q == 2'd0) ? R_TX_WRITE :
                                                                      (c_phase_q == 2'd1) ? R_COMMIT : R_MAP_WRITE;
        else if (e_fw[cp])                                     c_op = (c_phase_q == 2'd0) ? R_LOOKUP : R_MAP_WRITE;
        else if (e_txid[cp] != 6'd0)                           c_op = R_TX_WRITE;
        else                                                   c_op = R_MAP_WRITE;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            for (int i = 0; i < WIN; i++) e_st[i] <= E_FREE;
            for (int d = 0; d < NDIE; d++) begin op_v[d] <= 1'b0; nx_v[d] <= 1'b0; op_pg[d] <= '0; end
            acc_ptr_q <= '0; iss_ptr_q <= '0; cpl_ptr_q <= '0;
            cpl_seq_q <= 64'd0;
            recv_q <= 1'b0; recv_w_q <= '0; recv_ent_q <= '0;
            rr_q <= '0;
            rt_rd_q <= '0; rt_wr_q <= '0;
            bq_rd_q <= '0; bq_wr_q <= '0;
            nq_v_q <= 1'b0;
            rq_v_q <= 1'b0;
            wc_v_q <= 1'b0;
            rd_st_q <= RD_IDLE;
            ra_q <= '0; rl_q <= '0; rn_q <= '0;
            fl_rd_q <= '0; fl_wr_q <= (RS_W+1)'(RD_SLOTS);
            for (int i = 0; i < RD_SLOTS; i++) fl[i] <= RS_W'(i);
            rb_nand_q <= '0; rb_req_q <= '0; rb_zero_q <= '0; rb_dat_q <= '0; rb_rdy_q <= '0; rb_bad_q <= '0;
            rb_out_q <= '1;
            lk_wait_q <= 1'b0;
            c_st_q <= C_IDLE;
            txe_v_q <= '0;
            fw_st_q <= F_IDLE;
            fo_v_q <= 1'b0;
            recv_fw_q <= 1'b0;
            cnt_erases <= '0; cnt_relocs <= '0;
            cnt_host_pages <= '0; cnt_trims <= '0; cnt_nand_prog <= '0; cnt_nand_read <= '0;
            cnt_ecc_corr <= '0; cnt_prog_fail <= '0; cnt_read_err <= '0; cnt_proto_err <= '0;
        end else begin
            logic [2:0] perr;             // protocol errors seen this cycle
            perr = 3'd0;
            // ---- accept
            if (acc_fire) begin
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
                e_seq[acc_e]   <= seq_q;
                acc_ptr_q <= acc_ptr_q + 1'b1;
                if (!s_wb_op) begin
                    recv_q <= 1'b1; recv_ent_q <= acc_e; recv_w_q <= '0; recv_fw_q <= 1'b0;
                end
            end else if (fw_acc) begin
                // a firmware RELOC: a data page of the log (flag RELOC, the old page in the epoch
                // field), mapped at completion only if its LPN still maps to the old page
                e_lpn[acc_e]   <= fw_lpn_q;
                e_txid[acc_e]  <= 6'd0;
                e_epoch[acc_e] <= 16'd0;
                e_wtag[acc_e]  <= 8'd0;
                e_trim[acc_e]  <= 1'b0;
                e_rec[acc_e]   <= RC_NONE;
                e_kind[acc_e]  <= 2'd0;
                e_flags[acc_e] <= F_RELOC;
                e_st[acc_e]    <= E_RECV;
                e_fw[acc_e]    <= 1'b1;
                e_old[acc_e]   <= fw_ppn_q;
                e_seq[acc_e]   <= seq_q;
                acc_ptr_q <= acc_ptr_q + 1'b1;
                recv_q <= 1'b1; recv_ent_q <= acc_e; recv_w_q <= '0; recv_fw_q <= 1'b1;
                fw_st_q <= F_RWAIT;
            end
            if (wbd_fire) begin
                if (32'(recv_w_q) == PW - 1) begin
                    recv_q <= 1'b0;
                    e_st[recv_ent_q] <= E_QUEUED;
                    if (!(recv_fw_q ? s_fwd_last : s_wbd_last)) perr = perr + 3'd1;   // missing last
                end else if (recv_fw_q ? s_fwd_last : s_wbd_last) begin
                    perr = perr + 3'd1;                    // early last: counted, the word count decides
                end
                recv_w_q <= recv_w_q + 1'b1;
            end
            // ---- free blocks
            if (s_free_valid && s_free_ready) begin
                if (free_ok) begin
                    nx_v[free_die[DIE_W-1:0]]   <= 1'b1;
                    nx_blk[free_die[DIE_W-1:0]] <= s_free_block;
                end else begin
                    perr = perr + 3'd1;                    // free block of no die / beyond BLOCKS: dropped
                end
            end
            // ---- issue (a program, or a read: host reads first, then a firmware NREAD)
            if (nq_v_q && m_nreq_ready) nq_v_q <= 1'b0;
            if (rb_skip) rn_q <= rn_q + 1'b1;           // zeros: no NAND READ
            if (nq_free && rb_want) begin
                nq_v_q <= 1'b1; nq_tag_q <= RB_TAG | 8'(rn_s); nq_op_q <= 2'd0;
                nq_chan_q <= 3'(ppn_die(rb_ppn[rn_s]) / WAYS); nq_way_q <= 2'(ppn_die(rb_ppn[rn_s]) % WAYS);
                nq_blk_q <= 12'(ppn_block(rb_ppn[rn_s])); nq_page_q <= 8'(ppn_page(rb_ppn[rn_s]));
                nq_head_q <= 1'b0; nq_prio_q <= 1'b1; nq_slot_q <= 8'd0;
                rb_req_q[rn_s] <= 1'b1;
                rn_q <= rn_q + 1'b1;
            end else if (nq_free && rd_st_q == RD_NREQ) begin
                nq_v_q <= 1'b1; nq_tag_q <= RD_TAG; nq_op_q <= 2'd0;
                nq_chan_q <= 3'(ppn_die(rd_ppn_q) / WAYS); nq_way_q <= 2'(ppn_die(rd_ppn_q) % WAYS);
                nq_blk_q <= 12'(ppn_block(rd_ppn_q)); nq_page_q <= 8'(ppn_page(rd_ppn_q));
                nq_head_q <= 1'b0; nq_prio_q <= 1'b1; nq_slot_q <= 8'd0;
                rd_st_q <= RD_DATA;
                rd_w_q <= '0;
            end else if (nq_free && fw_st_q == F_NREQ && !(erase_wait && rn_q != ra_q)) begin
                // firmware ERASE / PROGRAM (its page is staging entry WIN); an ERASE waits until
                // every accepted host read has gone to NAND (erase_wait)
                nq_v_q <= 1'b1; nq_tag_q <= FW_TAG; nq_op_q <= (fw_op_q == FO_NERASE) ? 2'd2 : 2'd1;
                nq_chan_q <= fw_chan_q; nq_way_q <= fw_way_q; nq_blk_q <= fw_blk_q; nq_page_q <= fw_pg_q;
                nq_head_q <= 1'b0; nq_prio_q <= 1'b0; nq_slot_q <= 8'(WIN);
                fw_st_q <= F_NCPL;
            end else if (nq_free && iss_have) begin
                if (die_ok) begin
                    nq_v_q <= 1'b1; nq_tag_q <= 8'(iss_ent); nq_op_q <= 2'd1;
                    nq_chan_q <= 3'(32'(rr_q) / WAYS); nq_way_q <= 2'(32'(rr_q) % WAYS);
                    nq_blk_q <= op_blk[rr_q]; nq_page_q <= 8'(op_pg[rr_q]);
                    // never HEAD: the scheduler lets a HEAD request pass the die's queued ones, and a
                    // block's pages must be programmed in ascending order (an FUA write needs no
                    // overtaking: its completion waits for the durable prefix anyway)
                    nq_head_q <= 1'b0; nq_prio_q <= 1'b0; nq_slot_q <= 8'(iss_ent);
                    e_chan[iss_ent] <= 3'(32'(rr_q) / WAYS);
                    e_way[iss_ent]  <= 2'(32'(rr_q) % WAYS);
                    e_blk[iss_ent]  <= op_blk[rr_q];
                    e_pg[iss_ent]   <= 8'(op_pg[rr_q]);
                    e_st[iss_ent]   <= E_ISSUED;
                    if (!iss_retry && e_rec[iss_ent] != RC_NONE) begin
                        // every earlier request has completed: the tx's error status is final
                        e_doom[iss_ent]  <= e_rec[iss_ent] != RC_AREC && txe_v_q[e_txid[iss_ent]];
                        e_flags[iss_ent] <= (e_rec[iss_ent] == RC_AREC || txe_v_q[e_txid[iss_ent]]) ? F_ABORT : F_COMMIT;
                    end
                    if (32'(op_pg[rr_q]) == PAGES_PER_BLOCK - 1) op_v[rr_q] <= 1'b0;
                    op_pg[rr_q] <= op_pg[rr_q] + 9'd1;
                    rr_q <= rr_next(rr_q);
                    if (iss_retry) begin
                        rt_rd_q <= rt_rd_q + 1'b1;
                    end else begin
                        iss_ptr_q <= iss_ptr_q + 1'b1;
                    end
                end else if (nx_v[rr_q]) begin
                    op_v[rr_q] <= 1'b1; op_blk[rr_q] <= nx_blk[rr_q]; op_pg[rr_q] <= '0;
                    nx_v[rr_q] <= 1'b0;
                end else begin
                    rr_q <= rr_next(rr_q);
                end
            end else if (!iss_have) begin
                // idle: open blocks ahead of time
                if (!op_v[rr_q] && nx_v[rr_q]) begin
                    op_v[rr_q] <= 1'b1; op_blk[rr_q] <= nx_blk[rr_q]; op_pg[rr_q] <= '0;
                    nx_v[rr_q] <= 1'b0;
                end
            end
            // ---- NAND completions
            if (ncpl_prog) begin
                if (e_st[s_ncpl_tag[WIN_W-1:0]] != E_ISSUED) begin
                    perr = perr + 3'd1;                    // completion of an entry not in flight
                end else if (s_ncpl_status == N_OK) begin
                    e_st[s_ncpl_tag[WIN_W-1:0]] <= E_DONE;
                    cnt_nand_prog <= cnt_nand_prog + 1'b1;
                end else begin
                    // program failed: program the page again elsewhere, close and report the block
                    e_st[s_ncpl_tag[WIN_W-1:0]] <= E_QUEUED;
                    rt_mem[rt_wr_q[WIN_W-1:0]] <= s_ncpl_tag[WIN_W-1:0];
                    rt_wr_q <= rt_wr_q + 1'b1;
                    cnt_prog_fail <= cnt_prog_fail + 1'b1;
                    bq_mem[bq_wr_q[1:0]] <= {e_chan[s_ncpl_tag[WIN_W-1:0]], e_way[s_ncpl_tag[WIN_W-1:0]],
                                             e_blk[s_ncpl_tag[WIN_W-1:0]]};
                    bq_wr_q <= bq_wr_q + 1'b1;
                    for (int d = 0; d < NDIE; d++) begin
                        if (32'(d) == 32'(e_chan[s_ncpl_tag[WIN_W-1:0]]) * WAYS + 32'(e_way[s_ncpl_tag[WIN_W-1:0]]) &&
                            op_blk[d] == e_blk[s_ncpl_tag[WIN_W-1:0]])
                            op_v[d] <= 1'b0;
                    end
                end
            end else if (ncpl_fw && fw_st_q == F_NCPL) begin
                // firmware ERASE / PROGRAM: the raw NAND status (fo is free: s_fw_ready needs it)
                fo_v_q <= 1'b1; fo_status_q <= {5'd0, s_ncpl_status}; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                if (fw_op_q == FO_NERASE && s_ncpl_status == N_OK) cnt_erases <= cnt_erases + 1'b1;
                if (fw_op_q == FO_NPROG && s_ncpl_status == N_OK) cnt_nand_prog <= cnt_nand_prog + 1'b1;
                fw_st_q <= F_IDLE;
            end else if (ncpl_rb) begin
                // host read: the verdict (the page's words came first: the subsystem sends a READ's
                // completion after its last word); no data comes with BAD_REQ (4): zeros. A
                // completion for a slot with no NAND READ in flight (or a second one) changes nothing.
                if (!rb_req_q[ncpl_e] || rb_rdy_q[ncpl_e]) begin
                    perr = perr + 3'd1;
                end else begin
                    cnt_nand_read <= cnt_nand_read + 1'b1;
                    rb_rdy_q[ncpl_e] <= 1'b1;
                    if (s_ncpl_status == 3'd4) rb_zero_q[ncpl_e] <= 1'b1;
                    if (s_ncpl_status == N_OK && !rb_bad_q[ncpl_e]) begin
                        rb_st[ncpl_e] <= 8'h00;
                        cnt_ecc_corr <= cnt_ecc_corr + 32'(s_ncpl_corrected);
                    end else begin
                        rb_st[ncpl_e] <= 8'h10;                // MEDIA_ERROR
                        cnt_read_err <= cnt_read_err + 1'b1;
                    end
                end
            end else if (ncpl_fire && !ncpl_read) begin
                perr = perr + 3'd1;                        // unknown NAND tag
            end
            if (s_rsp_valid && !rsp_cpl && !rsp_rd && !rsp_fw) perr = perr + 3'd1;   // unknown remap tag
            // ---- firmware port
            if (fo_v_q && m_fwr_ready) fo_v_q <= 1'b0;
            // ---- remap request register: taken -> free. Before every writer of rq_v_q (the
            // firmware REMAP below, the completion FSM, a read lookup), so a request loaded in the
            // cycle the previous one is taken is kept. (It stood after the firmware FSM: a REMAP
            // loaded while a read lookup was being taken was dropped, and the firmware waited for
            // its response for ever; found by the core campaign's watchdog, 1x4_faults seed 5.)
            if (rq_v_q && m_req_ready) rq_v_q <= 1'b0;
            case (fw_st_q)
                F_IDLE: if (s_fw_valid && s_fw_ready) begin
                    fw_op_q <= s_fw_op; fw_chan_q <= s_fw_chan; fw_way_q <= s_fw_way; fw_blk_q <= s_fw_block;
                    fw_pg_q <= s_fw_page; fw_rop_q <= s_fw_rop; fw_txid_q <= s_fw_txid; fw_lpn_q <= s_fw_lpn;
                    fw_ppn_q <= s_fw_ppn; fw_seq_q <= s_fw_seq; fw_epoch_q <= s_fw_epoch;
                    fw_flags_q <= s_fw_flags; fw_kind_q <= s_fw_kind; fw_w_q <= '0;
                    unique case (s_fw_op)
                        FO_NREAD:  fw_st_q <= F_RD;
                        FO_NPROG:  fw_st_q <= F_PRECV;
                        FO_NERASE: fw_st_q <= F_NREQ;
                        FO_REMAP:  fw_st_q <= F_REMAP;
                        FO_RELOC:  fw_st_q <= F_RACC;
                        FO_SEQSET: begin                   // next seq := s_fw_seq, only with no request
                            fo_v_q <= 1'b1; fo_data_q <= 32'd0; fo_last_q <= 1'b1;    // in the table
                            fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                            if (count == '0 && !acc_fire && !recv_q) begin
                                cpl_seq_q <= s_fw_seq;
                                fo_status_q <= 8'h00;
                            end else begin
                                fo_status_q <= 8'h04;      // BAD_REQ: requests in flight (hold first)
                            end
                        end
                        default: begin                     // unknown operation: status 0xFF, nothing done
                            fo_v_q <= 1'b1; fo_status_q <= 8'hFF; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                            fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                        end
                    endcase
                end
                F_PRECV: if (fwp_we) begin
                    fw_w_q <= fw_w_q + 1'b1;
                    if (32'(fw_w_q) == PW - 1) begin
                        fw_st_q <= F_NREQ;
                        if (!s_fwd_last) perr = perr + 3'd1;
                    end else if (s_fwd_last) begin
                        perr = perr + 3'd1;
                    end
                end
                F_REMAP: if (rq_free && c_st_q != C_REQ && rl_q == ra_q) begin
                    rq_v_q <= 1'b1; rq_tag_q <= RT_FW; rq_op_q <= fw_rop_q; rq_txid_q <= fw_txid_q;
                    rq_lpn_q <= fw_lpn_q; rq_ppn_q <= fw_ppn_q;
                    fw_st_q <= F_RSPW;
                end
                F_RSPW: if (rsp_fw) begin
                    fo_v_q <= 1'b1; fo_status_q <= {4'd0, s_rsp_status}; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                    fo_ppn_q <= s_rsp_ppn; fo_mapped_q <= s_rsp_mapped;
                    fw_st_q <= F_IDLE;
                end
                default: ;                                 // F_RD, F_DONE (read FSM), F_NREQ / F_NCPL (NAND),
                                                           // F_RACC / F_RWAIT (table, completion FSM)
            endcase
            if (m_bad_valid && m_bad_ready) bq_rd_q <= bq_rd_q + 1'b1;
            // ---- completion in request order
            if (wc_v_q && m_wbc_ready) wc_v_q <= 1'b0;
            case (c_st_q)
                C_IDLE: if (count != '0 && e_st[cp] == E_DONE) begin
                    c_st_q <= C_REQ;
                    c_cnt_q <= 16'd0;
                    c_phase_q <= 2'd0;
                    c_mapafter_q <= 1'b0;
                end
                C_REQ: if (rq_free && rl_q == ra_q) begin     // host read lookups go first
                    rq_v_q <= 1'b1;
                    rq_tag_q <= RT_CPL;
                    rq_op_q <= c_op;
                    c_op_q <= c_op;
                    rq_txid_q <= e_txid[cp];
                    rq_lpn_q <= e_lpn[cp];
                    rq_ppn_q <= pack_ppn(e_chan[cp], e_way[cp], e_blk[cp], e_pg[cp]);
                    c_ppn_q <= pack_ppn(e_chan[cp], e_way[cp], e_blk[cp], e_pg[cp]);
                    c_st_q <= C_WAIT;
                end
                C_WAIT: if (rsp_cpl) begin
                    c_status_q <= {4'd0, s_rsp_status};
                    c_after_vc_q <= C_ACK;
                    unique case (c_op_q)
                        R_LOOKUP: begin                    // RELOC: does the LPN still map to the old page?
                            if (s_rsp_status == 4'd0 && s_rsp_mapped && s_rsp_ppn == e_old[cp]) begin
                                c_phase_q <= 2'd1;
                                c_st_q <= C_REQ;
                            end else begin
                                c_status_q <= 8'h01;       // stale: a newer write (or TRIM) moved it
                                c_st_q <= C_ACK;
                            end
                        end
                        R_TX_WRITE: begin
                            if (e_rec[cp] == RC_CMARK) begin
                                // the commit follows whatever the TX_WRITE said
                                c_phase_q <= 2'd1;
                                c_mapafter_q <= s_rsp_status != 4'd0;
                                c_after_vc_q <= C_REQ;
                                c_st_q <= (s_rsp_status == 4'd0) ? C_VC_NEW : C_REQ;
                            end else begin
                                if (s_rsp_status != 4'd0 && !txe_v_q[e_txid[cp]]) begin
                                    txe_v_q[e_txid[cp]]  <= 1'b1;
                                    txe_st_q[e_txid[cp]] <= s_rsp_status;
                                end
                                c_st_q <= (s_rsp_status == 4'd0) ? C_VC_NEW : C_ACK;
                            end
                        end
                        R_COMMIT: begin
                            txe_v_q[e_txid[cp]] <= 1'b0;
                            if (s_rsp_status == 4'd0) c_cnt_q <= s_rsp_count;
                            if (c_mapafter_q) begin
                                c_phase_q <= 2'd2;
                                c_st_q <= C_REQ;
                            end else begin
                                // a COMMIT-marked page whose tx table held only earlier pages: OK
                                if (e_rec[cp] == RC_CMARK) c_status_q <= 8'h00;
                                c_st_q <= C_ACK;
                            end
                        end
                        R_ABORT: begin
                            txe_v_q[e_txid[cp]] <= 1'b0;
                            // a doomed commit reports why; an abort with nothing to drop is TX_EMPTY
                            if (e_doom[cp]) c_status_q <= {4'd0, txe_st_q[e_txid[cp]]};
                            c_st_q <= C_ACK;
                        end
                        default: begin                 // MAP_WRITE (also phase 2), UNMAP
                            if (c_mapafter_q) c_status_q <= 8'h00;
                            // a TRIM record holds no live data: it is garbage at once
                            c_st_q <= (s_rsp_status == 4'd0 && !e_trim[cp]) ? C_VC_NEW : C_ACK;
                        end
                    endcase
                end
                C_VC_NEW: c_st_q <= c_after_vc_q;
                C_ACK: if (e_fw[cp] ? fo_free : (!wc_v_q || m_wbc_ready)) begin
                    if (e_fw[cp]) begin
                        // RELOC: status 0 applied, 1 stale (the new page is garbage); ppn = new page
                        fo_v_q <= 1'b1; fo_status_q <= c_status_q; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                        fo_ppn_q <= c_ppn_q; fo_mapped_q <= c_status_q == 8'h00;
                        if (c_status_q == 8'h00) cnt_relocs <= cnt_relocs + 1'b1;
                        fw_st_q <= F_IDLE;
                    end else begin
                        wc_v_q <= 1'b1;
                        wc_tag_q <= e_wtag[cp];
                        wc_status_q <= c_status_q;
                        // a commit record has no mapping: its completion carries the entries applied
                        wc_ppn_q <= (e_rec[cp] == RC_CREC) ? c_cnt_q : 16'(c_ppn_q);
                        if (e_trim[cp] && e_rec[cp] == RC_NONE) cnt_trims <= cnt_trims + 1'b1;
                        else if (!e_trim[cp]) cnt_host_pages <= cnt_host_pages + 1'b1;
                    end
                    e_st[cp] <= E_FREE;
                    cpl_ptr_q <= cpl_ptr_q + 1'b1;
                    cpl_seq_q <= cpl_seq_q + 64'd1;
                    c_st_q <= C_IDLE;
                end
                default: c_st_q <= C_IDLE;
            endcase
            // ---- host read ring: accept, lookup, page words, (issue and verdict above)
            if (s_rd_valid && s_rd_ready) begin
                rb_lpn[ra_s] <= s_rd_lpn; rb_txid[ra_s] <= s_rd_txid; rb_tag[ra_s] <= s_rd_tag;
                rb_nand_q[ra_s] <= 1'b0; rb_req_q[ra_s] <= 1'b0; rb_zero_q[ra_s] <= 1'b0; rb_dat_q[ra_s] <= 1'b0;
                rb_rdy_q[ra_s] <= 1'b0; rb_bad_q[ra_s] <= 1'b0; rb_out_q[ra_s] <= 1'b0;
                oq[ra_q[RS_W-1:0]] <= ra_s;
                fl_rd_q <= fl_rd_q + 1'b1;
                ra_q <= ra_q + 1'b1;
            end
            if (lk_go && rq_free) begin
                rq_v_q <= 1'b1; rq_tag_q <= RT_RD;
                rq_op_q <= rb_txid[rl_s] != 6'd0 ? R_TX_LOOKUP : R_LOOKUP;
                rq_txid_q <= rb_txid[rl_s]; rq_lpn_q <= rb_lpn[rl_s]; rq_ppn_q <= '0;
                lk_wait_q <= 1'b1; lk_s_q <= rl_s;
                lk_prb_q <= rb_tag[rl_s] == PRB_TAG && rb_txid[rl_s] != 6'd0;
                rl_q <= rl_q + 1'b1;
            end
            if (rsp_rd) begin
                lk_wait_q <= 1'b0;
                rb_ppn[lk_s_q] <= s_rsp_ppn;
                if (!lk_wait_q) begin
                    perr = perr + 3'd1;                    // a read lookup response without a lookup
                end else if (lk_prb_q) begin
                    // own-table probe: no NAND READ; zeros, status OK when the tx's table holds the
                    // LPN, TX_EMPTY (0x06) when it does not (or the lookup failed)
                    rb_st[lk_s_q] <= (s_rsp_status == 4'd0 && s_rsp_from_tx) ? 8'h00 : 8'h06;
                    rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;
                end else if (s_rsp_status != 4'd0) begin
                    rb_st[lk_s_q] <= 8'h10; rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;   // cannot happen behind the buffer's checks
                end else if (!s_rsp_mapped) begin
                    rb_st[lk_s_q] <= 8'h00; rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;   // unmapped: zeros
                end else begin
                    rb_nand_q[lk_s_q] <= 1'b1;
                end
            end
            if (s_ndata_valid && nd_rb) begin
                if (32'(nd_w) == PW && rb_req_q[nd_s] && !rb_dat_q[nd_s]) rb_bad_q[nd_s] <= s_ndata_data != rb_lpn[nd_s];
                if (s_ndata_last) begin
                    if (32'(nd_w) != PW + 4) perr = perr + 3'd1;     // short or long page
                    // a page for a slot with no NAND READ in flight, or a second page for it
                    if (!rb_req_q[nd_s] || rb_dat_q[nd_s]) perr = perr + 3'd1;
                    else rb_dat_q[nd_s] <= 1'b1;
                end
            end
            if (dv_pick) rb_out_q[dv_pick_s] <= 1'b1;
            if (dl_pick && dl_last) begin                  // the slot's last word: free again
                fl[fl_wr_q[RS_W-1:0]] <= dv_s_q;
                fl_wr_q <= fl_wr_q + 1'b1;
            end
            // ---- firmware NREAD: all words to m_fwr, the last spare word held for the raw NAND status
            case (rd_st_q)
                RD_IDLE: if (fw_st_q == F_RD) begin
                    rd_ppn_q <= pack_ppn(fw_chan_q, fw_way_q, fw_blk_q, fw_pg_q);
                    rd_st_q <= RD_NREQ;
                    fw_st_q <= F_DONE;
                end
                RD_NREQ: ;                      // handled by the issue logic above
                RD_DATA: if (s_ndata_valid && s_ndata_ready && !nd_rb) begin
                    rd_w_q <= rd_w_q + 1'b1;
                    if (32'(rd_w_q) < PW + 4) begin
                        fo_v_q <= 1'b1; fo_data_q <= s_ndata_data; fo_last_q <= 1'b0; fo_status_q <= 8'h00;
                        fo_ppn_q <= rd_ppn_q; fo_mapped_q <= 1'b0;
                    end else begin
                        rd_meta_q <= s_ndata_data;
                    end
                    if (s_ndata_last) rd_st_q <= RD_CPL;
                end
                RD_CPL: if (ncpl_read) begin
                    cnt_nand_read <= cnt_nand_read + 1'b1;
                    rd_status_q <= {5'd0, s_ncpl_status};
                    rd_bbm_q <= s_ncpl_bad_mark;
                    rd_st_q <= RD_LAST;
                end
                RD_LAST: if (fo_free) begin
                    fo_v_q <= 1'b1; fo_data_q <= rd_meta_q; fo_last_q <= 1'b1; fo_status_q <= rd_status_q;
                    fo_ppn_q <= rd_ppn_q; fo_mapped_q <= rd_bbm_q;     // NREAD: the bad-block mark
                    fw_st_q <= F_IDLE;
                    rd_st_q <= RD_IDLE;
                end
                default: rd_st_q <= RD_IDLE;
            endcase
            if (ncpl_read && rd_st_q != RD_CPL) perr = perr + 3'd1;   // read completion without a read
            cnt_proto_err <= cnt_proto_err + 32'(perr);
        end
    end

    // unused inputs
    // work that the ports do not show (rtl/core/README.md "Simulation cost"): requests in the table
    // (the issue pointer turns round the dies while a page waits for a block), a firmware-port, read
    // or completion FSM, a host read, the valid-count clear after reset
`ifdef SYNTHESIS
    assign busy = 1'b0;     // simulation only: no logic in a netlist
`else
    assign busy = count != '0 || !rt_empty || fw_st_q != F_IDLE || rd_st_q != RD_IDLE || c_st_q != C_IDLE ||
                  ra_q != rn_q || dv_act_q || dv_cand_q != '0 || vc_init_busy;
`endif

    logic unused;
    assign unused = ^{free_die[31:DIE_W], s_wb_kind, s_nfetch_slot[7:0], s_map_valid, s_inval_ppn};
endmodule

`resetall
