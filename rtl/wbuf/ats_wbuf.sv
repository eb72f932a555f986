// SPDX-License-Identifier: Apache-2.0
// ats_wbuf: write buffer. Page slots in on-chip buffer memory with per-slot LBA, state, epoch,
// txid, priority; write coalescing; read hits from the buffer; background writeback above a
// threshold; FLUSH, FUA and RFLUSH; epoch-ordered writeback ("in-order recovery with a durable
// prefix": pages are issued to the media in epoch order, the media completes them in issue order,
// but for an S-Log record's completion, which later transactions' data pages may pass (matched by
// its tag: README "A record's completion, by its tag"), and a completion means durable); optional
// power-loss protection (PLP: FLUSH/FUA/RFLUSH complete at once, writes are admitted only while
// the pages not yet durable fit the capacitor budget min(PLP_BUDGET_PAGES, plp_budget), and on
// pwr_fail the dirty slots are dumped in epoch order within that budget; dump_short if a lowered
// runtime budget left pages behind).
// Commands are executed one at a time (one page at a time); writeback runs beside them, and so
// does the wait for a commit's record (a pending commit, ended by the finisher).
// Units of their own: ats_wbuf_rmiss (read-miss ids, READ completion entries, the drain),
// ats_wbuf_cpl (FLUSH/FUA and RFLUSH waiters, the completion arbiter), ats_wbuf_mem (page memory),
// and with FRAG_SLOTS > 0 ats_wbuf_frag (DiffTx's S-Log FRAG table; README "S-Log").
// Theory of operation, interfaces and timing: rtl/wbuf/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// FRAG_SLOTS' default is 0 (no S-Log). A synthesis check of the transactional buffer defines
// ATS_WBUF_FRAG_SLOTS (README "Figures"): FRAG_SLOTS' default is then its value and TX's 1.
// (The defaults are macros of their own, undefined after the header: the tested one is never
// defined here, so a later file that tests it sees only what the command line set.)
`ifdef ATS_WBUF_FRAG_SLOTS
`define ATS_WBUF_FRAG_DEFAULT `ATS_WBUF_FRAG_SLOTS
`define ATS_WBUF_TX_DEFAULT 1'b1
`else
`define ATS_WBUF_FRAG_DEFAULT 0
`define ATS_WBUF_TX_DEFAULT 1'b0
`endif

module ats_wbuf #(
    parameter int NUM_SLOTS        = 16,     // page slots; power of two, 2..1024
    parameter int PAGE_BYTES       = 4096,   // bytes per page; power of two, 64..32768 (an RFLUSH range list, 16 words, is counted with the page word index)
    parameter int NUM_LBAS         = 16384,  // logical pages; LBA + NLB must stay below; 2..2^32
    parameter int THRESH_PCT       = 90,     // background writeback when slots not yet durable (dirty + in flight) >= this % (1..100)
    parameter int NUM_WAITERS      = 8,      // FLUSH/FUA completions waiting for durability; power of two
    parameter int MISS_Q           = 32,     // read ids (miss pages in flight) and READ completions waiting; power of two, 4..128 (ids < 0xFE)
    parameter bit PLP              = 1'b0,   // power-loss protection (supercapacitor dump)
    parameter int PLP_BUDGET_PAGES = 0,      // pages the supercapacitor can program after pwr_fail (design value, 1..65535)
    parameter bit TX               = `ATS_WBUF_TX_DEFAULT,   // transactions: tx-domain lookups, TX_BEGIN/COMMIT/ABORT, COMMIT flag (README "Transactions")
    parameter int NUM_TX           = 32,     // txids 1..NUM_TX (TX = 1)
    parameter int PTXQ             = 1,      // pending commits of distinct txids (TX = 1), 1..8 (README "Pending commit")
    parameter int FRAG_SLOTS       = `ATS_WBUF_FRAG_DEFAULT,   // S-Log FRAG slots (TX = 1): 0 (none) or a power of two 2..64 (README "S-Log")
    parameter int SLOG_TXFRAGS     = 64,     // fragments of one S-Log record, 1..255 (docs/architecture.md §11.3)
    parameter int SLOG_TXFULL      = 64,     // full pages a tx may hold and still send an S-Log record, 1..1023 (§11.3; = the backend's)
    parameter int SLOG_RIF         = 1       // S-Log records in flight at once, 1..8 (README "Records in flight"; > 1 needs a backend that keeps their bases)
) (
    input  wire logic        clk,
    input  wire logic        rst,              // synchronous, active high
    // dispatched commands (docs/architecture.md section 9)
    input  wire logic        s_disp_valid,
    output wire logic        s_disp_ready,
    input  wire logic [3:0]  s_disp_op,
    input  wire logic [7:0]  s_disp_tag,
    input  wire logic [47:0] s_disp_lba,
    input  wire logic [15:0] s_disp_nlb,
    input  wire logic [5:0]  s_disp_txid,
    input  wire logic [3:0]  s_disp_flags,
    input  wire logic [1:0]  s_disp_attr,
    input  wire logic [1:0]  s_disp_prio,
    input  wire logic [31:0] s_disp_dptr,
    input  wire logic [31:0] s_disp_aux,
    input  wire logic [15:0] s_disp_epoch,
    // completions
    output wire logic        m_done_valid,
    input  wire logic        m_done_ready,
    output wire logic [7:0]  m_done_tag,
    output wire logic [7:0]  m_done_status,
    output wire logic [31:0] m_done_result,
    // host memory: read requests, read data, writes
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
    // media: writeback requests (section 4), then PAGE_BYTES/4 data words for a PROGRAM
    output wire logic        m_wb_valid,
    input  wire logic        m_wb_ready,
    output wire logic        m_wb_op,          // 0 PROGRAM (data follows), 1 no data: UNMAP (TRIM) or a tx record (m_wb_rec)
    output wire logic [1:0]  m_wb_rec,         // 0 none, 1 COMMIT mark on this PROGRAM, 2 commit record, 3 abort record (TX = 1)
    output wire logic [7:0]  m_wb_slot,
    output wire logic [31:0] m_wb_lpn,
    output wire logic [5:0]  m_wb_txid,
    output wire logic [15:0] m_wb_epoch,
    output wire logic [1:0]  m_wb_kind,        // always 0 (data) here
    output wire logic        m_wb_fua,         // page written for an RFLUSH (hint: dispatch first)
    output wire logic [7:0]  m_wb_tag,         // = slot (low 8 bits above 256 slots)
    output wire logic        m_wb_slog,        // a commit record (rec 2) with S-Log fragments on m_wbd (FRAG_SLOTS > 0)
    output wire logic        m_wbd_valid,
    input  wire logic        m_wbd_ready,
    output wire logic [31:0] m_wbd_data,
    output wire logic        m_wbd_last,
    // media: writeback completions, in issue order (an S-Log record's: by its tag, README "A
    // record's completion, by its tag"); a completion means durable
    input  wire logic        s_wbc_valid,
    output wire logic        s_wbc_ready,
    input  wire logic [7:0]  s_wbc_tag,
    input  wire logic [7:0]  s_wbc_status,
    input  wire logic [15:0] s_wbc_ppn,
    // media: read requests (read miss), answered by PAGE_BYTES/4 data words
    output wire logic        m_rd_valid,
    input  wire logic        m_rd_ready,
    output wire logic [31:0] m_rd_lpn,
    output wire logic [5:0]  m_rd_txid,
    output wire logic [7:0]  m_rd_tag,
    input  wire logic        s_rdd_valid,
    output wire logic        s_rdd_ready,
    input  wire logic [31:0] s_rdd_data,
    input  wire logic        s_rdd_last,
    input  wire logic [7:0]  s_rdd_status,
    input  wire logic [7:0]  s_rdd_tag,
    // power loss
    input  wire logic        pwr_fail,         // level; sticky until rst
    input  wire logic [15:0] plp_budget,       // PLP: runtime budget in pages (capacitor health; min with PLP_BUDGET_PAGES)
    // no space (firmware, CTRL.no_space): the media takes no new data; commands that need it
    // complete NO_SPACE instead of waiting (README "No space")
    input  wire logic        no_space,
    // S-Log threshold (bytes, CSR SLOG_THR; FRAG_SLOTS > 0): a DIFFWRITE shorter than
    // min(slog_thr, PAGE_BYTES - 16) may become a fragment (docs/architecture.md §11.3)
    input  wire logic [15:0] slog_thr = 16'd0,
    output wire logic        dump_done,        // buffer safe (PLP) or frozen (no PLP) after pwr_fail
    output wire logic        dump_short,       // PLP budget ran out before the dump finished
    // counters (since reset) and status
    output wire logic [31:0] cnt_host_pages,   // write pages accepted into the buffer
    output wire logic [31:0] cnt_coalesced,    // write/trim pages that replaced a dirty page in place
    output wire logic [31:0] cnt_wb_pages,     // PROGRAM requests issued to the media
    output wire logic [31:0] cnt_wb_unmaps,    // UNMAP requests issued to the media
    output wire logic [47:0] cnt_media_bytes,  // bytes sent to the media (PROGRAM data)
    output wire logic [31:0] cnt_read_hits,    // read pages served from the buffer
    output wire logic [31:0] cnt_read_misses,  // read pages read from the media
    output wire logic [31:0] cnt_wb_fail,      // writebacks completed with an error status
    output wire logic [31:0] cnt_proto_err,    // media completions without an outstanding writeback, read pages no read asked for
    output wire logic [7:0]  dirty_pages,      // dirty slots not yet issued (saturates at 255)
    output wire logic [31:0] cnt_slog_err,     // UNRESERVE answers other than OK (FRAG_SLOTS > 0)
    // work in progress that the ports do not show (the core's simulation-only clock gate)
    output wire logic        busy
);
`undef ATS_WBUF_FRAG_DEFAULT
`undef ATS_WBUF_TX_DEFAULT
    // ---------------------------------------------------------------- parameters
    localparam int PWORDS = PAGE_BYTES / 4;
    localparam int WI_W   = $clog2(PWORDS);
    localparam int SLOT_W = $clog2(NUM_SLOTS);
    localparam int FD     = 2 * NUM_SLOTS;          // writeback order FIFO: live + stale entries
    localparam int FI_W   = SLOT_W + 1;
    localparam int QP_W   = SLOT_W + 2;             // FIFO position bits kept per slot
    localparam int LPN_W  = $clog2(NUM_LBAS);
    localparam int MA_W   = SLOT_W + WI_W;
    localparam int THRESH = (NUM_SLOTS * THRESH_PCT + 99) / 100;
    localparam int DC_W   = SLOT_W + 1;
    localparam int MAX_RANGES = 8;
    localparam int RW     = ((LPN_W > 16) ? LPN_W : 16) + 2;   // NUM_LBAS - count, signed
    localparam logic [15:0] PLP_BUD = 16'(PLP_BUDGET_PAGES);   // checked below (PLP: 1..65535)

    // up to 1024 slots (simulation of large buffers; the media tag carries the slot's low 8 bits,
    // completions are matched by order, see README "Media tags"); with FRAG slots at most 256: an
    // S-Log record's completion is matched by its tag, which must then name one slot
    if (NUM_SLOTS < 2 || NUM_SLOTS > 1024 || (NUM_SLOTS & (NUM_SLOTS - 1)) != 0) begin : g_chk_slots
        $fatal(1, "ats_wbuf: NUM_SLOTS must be a power of two in 2..1024 (%m)");
    end
    if (PAGE_BYTES < 64 || PAGE_BYTES > 32768 || (PAGE_BYTES & (PAGE_BYTES - 1)) != 0) begin : g_chk_page
        $fatal(1, "ats_wbuf: PAGE_BYTES must be a power of two in 64..32768 (%m)");
    end
    if (NUM_LBAS < 2 || longint'(NUM_LBAS) > 64'h1_0000_0000) begin : g_chk_lbas
        $fatal(1, "ats_wbuf: NUM_LBAS must be in 2..2^32 (%m)");
    end
    if (THRESH_PCT < 1 || THRESH_PCT > 100) begin : g_chk_thresh
        $fatal(1, "ats_wbuf: THRESH_PCT must be in 1..100 (%m)");
    end
    if (MISS_Q < 4 || MISS_Q > 128 || (MISS_Q & (MISS_Q - 1)) != 0) begin : g_chk_missq
        $fatal(1, "ats_wbuf: MISS_Q must be a power of two in 4..128 (%m)");
    end
    if (NUM_WAITERS < 2 || (NUM_WAITERS & (NUM_WAITERS - 1)) != 0) begin : g_chk_waiters
        $fatal(1, "ats_wbuf: NUM_WAITERS must be a power of two >= 2 (%m)");
    end
    if (TX && (NUM_TX < 1 || NUM_TX > 63)) begin : g_chk_tx
        $fatal(1, "ats_wbuf: NUM_TX must be in 1..63 (%m)");
    end
    if (SLOG_RIF < 1 || SLOG_RIF > 8) begin : g_chk_rif
        $fatal(1, "ats_wbuf: SLOG_RIF must be in 1..8 (%m)");
    end
    if (PTXQ < 1 || PTXQ > 8) begin : g_chk_ptxq
        $fatal(1, "ats_wbuf: PTXQ must be in 1..8 (%m)");
    end
    if (FRAG_SLOTS != 0 && (!TX || FRAG_SLOTS < 2 || FRAG_SLOTS > 64 || (FRAG_SLOTS & (FRAG_SLOTS - 1)) != 0)) begin : g_chk_frag
        $fatal(1, "ats_wbuf: FRAG_SLOTS must be 0 or a power of two in 2..64 with TX = 1 (%m)");
    end
    if (FRAG_SLOTS != 0 && NUM_SLOTS > 256) begin : g_chk_frag_tag
        $fatal(1, "ats_wbuf: NUM_SLOTS must be at most 256 with FRAG_SLOTS (an S-Log record's completion is matched by its 8-bit tag) (%m)");
    end
    if (SLOG_TXFRAGS < 1 || SLOG_TXFRAGS > 255) begin : g_chk_txfrags
        $fatal(1, "ats_wbuf: SLOG_TXFRAGS must be in 1..255 (%m)");
    end
    if (SLOG_TXFULL < 1 || SLOG_TXFULL > 1023) begin : g_chk_txfull
        $fatal(1, "ats_wbuf: SLOG_TXFULL must be in 1..1023 (%m)");
    end
    if (PLP && (PLP_BUDGET_PAGES < 1 || PLP_BUDGET_PAGES > 65535)) begin : g_chk_plp
        $fatal(1, "ats_wbuf: PLP needs PLP_BUDGET_PAGES in 1..65535 (%m)");
    end

    // opcodes and status codes (docs/architecture.md sections 1 and 2): the package's names, aliased
    // (Yosys takes no import inside a module; rtl/common/README.md "ats_host_pkg")
    localparam logic [3:0] OP_READ      = ats_host_pkg::OP_READ;
    localparam logic [3:0] OP_WRITE     = ats_host_pkg::OP_WRITE;
    localparam logic [3:0] OP_DIFFWRITE = ats_host_pkg::OP_DIFFWRITE;
    localparam logic [3:0] OP_TX_BEGIN  = ats_host_pkg::OP_TX_BEGIN;
    localparam logic [3:0] OP_TX_COMMIT = ats_host_pkg::OP_TX_COMMIT;
    localparam logic [3:0] OP_TX_ABORT  = ats_host_pkg::OP_TX_ABORT;
    localparam logic [3:0] OP_FLUSH     = ats_host_pkg::OP_FLUSH;
    localparam logic [3:0] OP_RFLUSH    = ats_host_pkg::OP_RFLUSH;
    localparam logic [3:0] OP_TRIM      = ats_host_pkg::OP_TRIM;
    localparam logic [7:0] STS_OK           = ats_host_pkg::STS_OK;
    localparam logic [7:0] STS_BAD_OP       = ats_host_pkg::STS_BAD_OP;
    localparam logic [7:0] STS_BAD_TXID     = ats_host_pkg::STS_BAD_TXID;
    localparam logic [7:0] STS_BAD_LBA      = ats_host_pkg::STS_BAD_LBA;
    localparam logic [7:0] STS_TX_FULL      = ats_host_pkg::STS_TX_FULL;
    localparam logic [7:0] STS_INDEX_FULL   = ats_host_pkg::STS_INDEX_FULL;
    localparam logic [7:0] STS_TX_EMPTY     = ats_host_pkg::STS_TX_EMPTY;
    localparam logic [7:0] STS_BAD_FIELD    = ats_host_pkg::STS_BAD_FIELD;
    localparam logic [7:0] STS_TABLE_FULL   = ats_host_pkg::STS_TABLE_FULL;
    localparam logic [7:0] STS_MEDIA_ERROR  = ats_host_pkg::STS_MEDIA_ERROR;
    localparam logic [7:0] STS_NO_SPACE     = ats_host_pkg::STS_NO_SPACE;
    // record kinds of a slot (m_wb_rec)
    localparam logic [1:0] RC_NONE = 2'd0, RC_CMARK = 2'd1, RC_CREC = 2'd2, RC_AREC = 2'd3;

    // slot states
    typedef enum logic [2:0] {SL_FREE, SL_FILL, SL_DIRTY, SL_WB, SL_CLEAN} slot_state_e;

    // ---------------------------------------------------------------- slot metadata
    slot_state_e        sl_st_q  [NUM_SLOTS];
    logic [LPN_W-1:0]   sl_lpn_q [NUM_SLOTS];
    logic [15:0]        sl_ep_q  [NUM_SLOTS];
    logic [5:0]         sl_tx_q  [NUM_SLOTS];
    logic [1:0]         sl_pr_q  [NUM_SLOTS];
    logic [QP_W-1:0]    sl_qp_q  [NUM_SLOTS];
    logic [NUM_SLOTS-1:0] sl_new_q;    // newest version of its LBA in the buffer (lookup target)
    logic [1:0]         sl_rec_q [NUM_SLOTS];   // tx record kind (RC_*): records never match a lookup
    logic [NUM_SLOTS-1:0] sl_trim_q;   // tombstone (TRIM): reads zero, written back as UNMAP
    logic [NUM_SLOTS-1:0] sl_urg_q;    // targeted by an RFLUSH, not yet issued

    // writeback order FIFO (slot numbers in the order they became dirty = epoch order)
    logic [SLOT_W-1:0]  fifo_q [FD];
    logic [31:0]        head_pos_q, tail_pos_q;
    logic [FI_W:0]      fifo_cnt_q;                 // entries (live + stale), 0..FD
    logic               fifo_space_q;               // fifo_cnt_q < FD, registered

    // sequence counters: pages issued, pages durable (completed)
    logic [31:0]        issue_cnt_q, dur_cnt_q, fail_cnt_q;
    logic [DC_W-1:0]    dirty_cnt_q;
    logic [DC_W-1:0]    held_cnt_q;               // dirty + issued, not completed: not yet durable
    logic [DC_W-1:0]    urg_cnt_q;
    logic               mark_fire_q;

    // outstanding writebacks in issue order
    logic [SLOT_W-1:0]  out_q [NUM_SLOTS];
    logic [SLOT_W:0]    out_wr_q, out_rd_q;
    logic               out_empty;
    assign out_empty = (out_wr_q == out_rd_q);

    logic               dump_q;        // power failed
    logic               nosp_q;        // no_space, registered (README "No space")
    // PLP budget (README "PLP"): pages the capacitor can still program = budget_q - cap_used_q.
    // cap_used_q counts pages in flight (issued, completion not taken) until the cut, then stops
    // counting completions: after the cut it is (in flight at the cut) + (dumped since). The cut is
    // the edge that samples pwr_fail: budget_q takes plp_budget at that edge too, completions at
    // that edge still count, and no page is issued in that cycle (fire_ok), so in flight at the cut
    // = requests presented on m_wb up to that edge minus completions up to that edge.
    logic [15:0]        budget_q;      // min(PLP_BUDGET_PAGES, plp_budget), frozen after the cut
    logic [DC_W-1:0]    cap_used_q;
    logic               plp_room_q;    // held_cnt_q < budget_q: a write may take a new slot
    logic               cap_out_q;     // after the cut: cap_used_q >= budget_q (budget exhausted)

    // ---------------------------------------------------------------- helpers
    function automatic logic [SLOT_W-1:0] first_one(input logic [NUM_SLOTS-1:0] v);
        first_one = '0;
        for (int i = NUM_SLOTS - 1; i >= 0; i--) begin
            if (v[i]) first_one = SLOT_W'(i);
        end
    endfunction

    logic [NUM_SLOTS-1:0] free_vec, clean_vec, dirty_vec;
    always_comb begin
        for (int i = 0; i < NUM_SLOTS; i++) begin
            free_vec[i]  = (sl_st_q[i] == SL_FREE);
            clean_vec[i] = (sl_st_q[i] == SL_CLEAN);
            dirty_vec[i] = (sl_st_q[i] == SL_DIRTY);
        end
    end

    // lowest set bit of v as a one-hot vector (no encode then decode)
    function automatic logic [NUM_SLOTS-1:0] lowest_one(input logic [NUM_SLOTS-1:0] v);
        logic below;
        below = 1'b0;
        for (int i = 0; i < NUM_SLOTS; i++) begin
            lowest_one[i] = v[i] && !below;
            below = below || v[i];
        end
    endfunction

    // Allocation candidate, two registered stages: (1) the FREE and CLEAN vectors (each a 3-bit
    // state decode), masked with the slot taken in the previous cycle (alloc_take_q: its state
    // becomes FILL one cycle after ST_ACT); (2) from those registers, a FREE slot, else a CLEAN one
    // (evicted), as a one-hot (per-slot enables), its number and a valid bit.
    // Only the command FSM consumes FREE/CLEAN slots (at most once every eight cycles: ACT ... ACT),
    // and nothing else turns a FREE/CLEAN slot into another state, so a candidate is stale only in
    // the two cycles after the slot is taken, when the FSM is not in ST_ACT; completions and commits
    // only add FREE/CLEAN slots, seen two cycles later. Nothing looks at the taken slot before it is
    // FILL: lookups start at ST_LK1, commits three cycles after ST_ACT, the engine and completions
    // only touch DIRTY and WB slots.
    logic               alloc_v_q;
    logic [SLOT_W-1:0]  alloc_q;
    logic [NUM_SLOTS-1:0] alloc_oh_q;               // alloc_q one-hot (per-slot enables)
    logic [NUM_SLOTS-1:0] al_free_q, al_clean_q;     // stage 1
    logic [NUM_SLOTS-1:0] alloc_take_q;              // slot taken in the previous cycle (marked FILL now)
    logic               al_any_free;
    assign al_any_free = |al_free_q;
    always_ff @(posedge clk) begin
        al_free_q  <= free_vec & ~alloc_take_q;
        al_clean_q <= clean_vec & ~alloc_take_q;
        alloc_v_q  <= al_any_free || (|al_clean_q);
        alloc_q    <= al_any_free ? first_one(al_free_q) : first_one(al_clean_q);
        alloc_oh_q <= al_any_free ? lowest_one(al_free_q) : lowest_one(al_clean_q);
        if (rst) begin
            al_free_q  <= '0;
            al_clean_q <= '0;
            alloc_v_q  <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- page memory and reader
    logic               mem_we;
    logic [MA_W-1:0]    mem_wa, mem_ra;
    logic [31:0]        mem_wd, mem_rd;
`ifdef ATS_ECP5_BRAM
    // deeper page memories belong in DRAM (not built): a synthesized buffer stays within 16K words
    if (NUM_SLOTS * PWORDS > 16384) begin : g_check_bram
        $fatal(1, "ats_wbuf: more than 16K words (64 KiB) of on-chip page memory is not supported (%m)");
    end
`endif
    ats_wbuf_mem #(.DEPTH(NUM_SLOTS * PWORDS)) u_mem (
        .clk    (clk),
        .wr_en  (mem_we),
        .wr_addr(mem_wa),
        .wr_data(mem_wd),
        .rd_addr(mem_ra),
        .rd_data(mem_rd)
    );

    // reader: streams one slot's page out of the memory to the media (dest 0) or to the host (1)
    logic               rdr_busy_q, rdr_dest_q;
    logic [SLOT_W-1:0]  rdr_slot_q;
    logic [WI_W:0]      rdr_iss_q;                 // words read
    logic [WI_W-1:0]    rdr_out_q;                 // words delivered
    logic [1:0]         rdr_pipe_q;                // reads in flight (latency 2)
    logic [31:0]        rdf_q [4];                 // output FIFO
    logic [2:0]         rdf_cnt_q;
    logic [1:0]         rdf_rd_q, rdf_wr_q;
    logic               rdr_issue, rdf_pop, rdr_req_eng, rdr_req_main, rdr_grant_eng, rdr_grant_main;
    logic               rdr_out_ready;
    logic [2:0]         rdr_inflight;
    assign rdr_inflight = {2'b0, rdr_pipe_q[0]} + {2'b0, rdr_pipe_q[1]};
    assign rdr_issue = rdr_busy_q && !rdr_iss_q[WI_W] && (rdf_cnt_q + rdr_inflight < 3'd4);
    assign mem_ra = {rdr_slot_q, rdr_iss_q[WI_W-1:0]};
    assign rdr_grant_eng  = !rdr_busy_q && rdr_req_eng;
    assign rdr_grant_main = !rdr_busy_q && rdr_req_main && !rdr_req_eng;
    assign rdf_pop = (rdf_cnt_q != 0) && rdr_out_ready;

    // ---------------------------------------------------------------- command FSM
    typedef enum logic [5:0] {
        ST_IDLE, ST_DEC, ST_DEC2, ST_DEC3, ST_LK1, ST_LK2, ST_LK3, ST_ACT, ST_HRD_REQ, ST_FILL, ST_PRECOMMIT, ST_PRECOMMIT2, ST_COMMIT, ST_NEXT,
        ST_RD_JOB, ST_RD_HIT, ST_RD_ZERO, ST_RD_REQ, ST_RD_WAIT, ST_FIN, ST_WPUSH,
        ST_RF_HRD, ST_RF_RECV, ST_RF_CHECK, ST_RF_CHECK2, ST_RF_CHECK3, ST_RF_CHECK4, ST_RF_WAIT, ST_RF_SCAN, ST_RF_ARM, ST_DONE, ST_FROZEN,
        ST_PTXW,
        ST_DHRD, ST_DJOB, ST_DRDREQ, ST_DFILL, ST_DCHK, ST_DREL,
        ST_PRB_REQ, ST_PRB_DATA,
        // S-Log (FRAG_SLOTS > 0; unreachable at 0): reservation, FRAG write, UNRESERVE, the
        // FRAG stream's start, a READ's overlay, the commit's and abort's walks over the tx's slots
        ST_RSV_REQ, ST_RSV_DATA, ST_FCR, ST_FHRD, ST_FWR, ST_FRS, ST_UNR_REQ, ST_UNR_DATA,
        ST_FS_GO, ST_FOV_RD, ST_FOV_JOB, ST_FOV, ST_WK_NEXT, ST_AB_LPN, ST_CM_SC, ST_CM_W, ST_CM_DEC
    } main_state_e;
    // one-hot: Yosys' "auto" FSM encoding picks binary for 32 states, which puts a state decode in
    // front of every registered decode and per-state enable
    (* fsm_encoding = "one-hot" *)
    main_state_e        state_q;
    main_state_e        state_d;

    logic [3:0]         op_q;
    logic               op_rd_q, op_wr_q, op_trim_q;   // op_q decodes, registered at acceptance
    logic               nlb_big_q;                 // nlb_q > 7 (RFLUSH: more than 8 ranges)
    logic [7:0]         tag_q;
    logic               fua_q;
    logic [5:0]         txid_q;
    logic [5:0]         key_q, key_d;             // lookup domain: slots of this txid only (TX = 1)
    logic               op_rec_q;                 // TX_COMMIT / TX_ABORT: a record slot, no lookup match
    logic               cmt_q;                    // WRITE with the COMMIT flag
    logic               txid_bad_q;               // txid > NUM_TX
    // DIFFWRITE (TX = 1): words dlo..dhi-1 of the page come from the host, the rest from the base
    logic               op_diff_q;
    logic               dbad_q;                   // offset / length not word multiples, or past the page
    logic [15:0]        doff_q, dlen_q;
    logic [WI_W:0]      dlo_q, dhi_q;             // first diff word, one past the last
    logic               dmiss_q, dmiss_d;         // no version in the tx's own domain (second lookup pass)
    // read your writes after eviction (README "Transactions"): per txid, "has entries" (a page of
    // it entered the buffer since its last commit / abort) and "has pages on the media" (one was
    // issued); both cleared at the tx's end (F_FIN). A tx READ / DIFFWRITE base whose own-domain lookup
    // misses while the tx has pages on the media probes the tx's table (m_rd, id 0xFE) before it
    // looks at committed slots: own_q = the probe found the page in the tx's table.
    logic [63:0]        txo_q, txm_q;
    logic               txo_cur_q, txm_cur_q;     // txo_q / txm_q of txid_q (registered)
    // S-Log (FR): txf_cur_q = txid_q's count of full pages committed into the buffer (cleared at
    // its F_FIN) is above SLOG_TXFULL, or a data page of it completed non-OK since (txr_set: its
    // LPN is in the backend's list while a later DIFFWRITE of it may make a FRAG slot): its commit
    // converts every FRAG slot (registered; the counters below, g_txn)
    logic               txf_cur_q;
    logic [NUM_TX-1:0]  txr_set;                  // a data page of txid i + 1 completes non-OK (g_txo)
    logic               own_q, own_d;
    logic [15:0]        txcnt_q;                  // the head pending commit record's entry count (s_wbc_ppn)
    logic [1:0]         dsrc_q, dsrc_d;           // base: 0 slot, 1 media (TX_LOOKUP), 2 zeros
    logic [SLOT_W-1:0]  dslot_q, dslot_d;         // base slot
    logic               d_in, dstep, dlast;
    logic               txdone_q;                 // the head pending commit's record completion arrived
    // pending commit (README "Transactions"): a TX_COMMIT / TX_ABORT / COMMIT write whose record
    // (or COMMIT-marked page) is in the writeback FIFO. The command FSM goes on with later commands
    // (those of the same txid, another commit / abort and an RFLUSH wait in ST_PTXW); the finisher
    // (fin_q) ends it when the record's completion has arrived, while the FSM is in ST_IDLE (taking
    // nothing) or ST_PTXW, i.e. between two commands' slot work: its slot update, its completion
    // Up to PTXQ commits of distinct txids are pending at once: a FIFO (pq_*, head pq_hd_q, in
    // writeback = seq order, so their records complete in FIFO order); the finisher ends the head.
    // ptx_* below are the head entry's fields (ptx_v_q: any entry pending).
    localparam int PQ_W = (PTXQ > 1) ? $clog2(PTXQ) : 1;
    logic [PTXQ-1:0]    pq_v_q, pq_done_q, pq_w0_q, pq_due_q, pq_rec_q, pq_abort_q;
    logic [SLOT_W-1:0]  pq_slot_q [PTXQ];
    logic [5:0]         pq_txid_q [PTXQ];
    logic [7:0]         pq_tag_q  [PTXQ];
    logic [31:0]        pq_res_q  [PTXQ];
    logic [7:0]         pq_st_q   [PTXQ];
    logic [15:0]        pq_cnt_q  [PTXQ];
    logic [PQ_W-1:0]    pq_hd_q, pq_tl_q;
    logic               pq_same, pq_full, pq_odue, ptx_end_q, ptx_pop;
    logic               ptx_v_q;                  // a commit / abort is pending (any entry)
    logic [SLOT_W-1:0]  ptx_slot_q;               // the head's record (or COMMIT-marked page) slot
    logic [5:0]         ptx_txid_q;
    logic [7:0]         ptx_tag_q;
    logic               ptx_rec_q, ptx_abort_q;   // a record (TX_COMMIT / TX_ABORT); TX_ABORT
    logic [31:0]        ptx_res_q;                // a COMMIT write's result (its pages)
    logic               ptx_w0_q;                 // a txid-0 page was committed into the buffer since
    logic               ptx_rdirty_q;             // the head's slot is DIRTY (not issued yet), registered
    logic               ptx_set, ptx_conf, fin_go, fin_busy;
    // reads during a commit (README "Reads during a commit"): cw_q, the commit window, is set when
    // the engine finds the pending commit's record (or COMMIT-marked page) live at the head of the
    // writeback order and ends with the commit; a READ decoded while it is set waits in ST_PTXW
    // until the commit has ended, and the record is issued only when the window has been open for
    // a cycle (cw_ok_q) and no READ was executing its pages in the cycle before (rd_act_q)
    logic               cw_q, cw_ok_q, cw_set, rd_act_q;
    typedef enum logic [2:0] {F_IDLE, F_W2, F_W3, F_FIN, F_CAN1, F_CAN2, F_DONE} fin_state_e;
    fin_state_e         fin_q;
    logic [7:0]         fin_st_q;
    logic [31:0]        fin_res_q;
    logic [7:0]         txst_q;                   // the head's record status
    logic [1:0]         prio_q;
    logic [15:0]        epoch_q;
    logic [31:0]        addr_q, addr_d;           // host address of the current page / range list
    logic [15:0]        nlb_q;
    logic [15:0]        page_q, page_d;
    logic               page_last_q;              // page_q == nlb_q, registered (ST_NEXT is never
                                                  // entered in the cycle after page_q/nlb_q change)
    logic [LPN_W-1:0]   lpn_q, lpn_d;
    logic [7:0]         status_q, status_d;
    logic [31:0]        result_q, result_d;
    logic [SLOT_W-1:0]  fill_q, fill_d;
    logic               hit_q, hit_d;
    logic [SLOT_W-1:0]  hit_slot_q, hit_slot_d;
    logic [NUM_SLOTS-1:0] match_q;
    logic [WI_W:0]      widx_q, widx_d;
    logic               rd_err_q, rd_err_d;       // DIFFWRITE: the base page read from the media had an error
    // RFLUSH ranges
    logic [31:0]        rf_lo_q [MAX_RANGES];
    logic [31:0]        rf_hi_q [MAX_RANGES];
    logic [LPN_W-1:0]   rf_end_q [MAX_RANGES];
    logic [2:0]         rf_n_q;                   // ranges - 1
    logic [3:0]         rf_k_q;                   // range being checked (cleared while the list arrives)
    logic [SLOT_W:0]    scan_q;                   // 0 outside ST_RF_SCAN
    logic               sc_v_q, sc2_v_q, sc3_v_q;
    logic [SLOT_W-1:0]  sc_slot_q, sc2_slot_q;
    logic [MAX_RANGES-1:0] sc_ge_q, sc_le_q;
    logic [LPN_W-1:0]   sc_lpn_q;

    // metadata events from the command FSM
    logic               commit_fire, mark_fire, wpush_fire, rfarm_fire, rf_store;
    // commit: what happens to the old version, decided in ST_PRECOMMIT (writeback engine held)
    logic               c_take_q, c_free_any_q, c_urg_q;   // c_free_any_q: take over, or free a CLEAN old version
    logic [NUM_SLOTS-1:0] cm_fill_oh_q, cm_old_oh_q;   // fill_q / hit slot one-hot (registered)
    logic               rd_hit_q, rd_tomb_q;
    slot_state_e        hit_st_q;
    logic [15:0]        hit_ep_q;          // READ: hit on a readable slot / on a tombstone
    logic [QP_W-1:0]    c_qp_q;
    slot_state_e        hit_st;
    assign hit_st = sl_st_q[hit_slot_q];

    // State decodes used by the per-slot metadata and the engine, registered from state_d (so each
    // equals the decode of state_q, without its logic levels in front of the per-slot registers)
    logic               meta_busy;               // command FSM rewrites the FIFO or marks slots
    logic               meta_busy_q, st_act_w_q, st_commit_q, st_scan_q;
    assign meta_busy = meta_busy_q;

    // read misses (README "READ"; ats_wbuf_rmiss): each miss page gets a read id (m_rd_tag = id,
    // 0..MISS_Q-1) and a page-table entry; a READ with misses reserves a CPL entry at its first miss
    // and closes it at its end (mq_push_cpl); the drain streams the pages to m_hwr as the media
    // returns them and completes the READ. The DIFFWRITE base read (id 0xFF) and the own-table
    // probe (id 0xFE) are taken by this FSM.
    localparam int MQ_W = $clog2(MISS_Q);
    localparam logic [7:0] RD_ID_BASE = 8'hFF;    // the DIFFWRITE base page (behind no miss)
    localparam logic [7:0] RD_ID_PROBE = 8'hFE;   // own-table probe of a tx READ / DIFFWRITE base (behind no miss)
    logic               mq_push_page, mq_push_cpl, mq_room, mq_hw_idle, mr_stray, mr_busy;
    logic               had_miss_q, had_miss_d;
    logic [MQ_W-1:0]    mq_id;                     // read id of the next miss page
    logic               mr_hwr_valid, mr_hwr_ready, mr_hwr_last, mr_rdd_ready;
    logic [31:0]        mr_hwr_addr, mr_hwr_data;
    logic               rd_cpl_valid, rd_cpl_ready;
    logic [7:0]         rd_cpl_tag, rd_cpl_status;
    logic [31:0]        rd_cpl_result;
    // completions and waiters (ats_wbuf_cpl): FLUSH / FUA waiters, the RFLUSH waiter, the
    // completion arbiter (waiters, RFLUSH, READ misses, this FSM) with its hold register
    logic               wt_full, flush_pending, rf_idle, main_taken;

    // decode of the accepted descriptor (registered: lba_q, nlb_q, bad_field_q)
    logic [47:0]        lba_q;
    logic               bad_field_q;
    // LBA check lba + nlb >= NUM_LBAS without a 49-bit add: lba >= 2^LPN_W (a flat OR of the high
    // bits) or lba[LPN_W-1:0] >= NUM_LBAS - nlb (signed, RW bits), each side registered, so that no
    // cycle has more than one short carry chain (ST_DEC: hi flag, remainder; ST_DEC2: compare)
    logic               lba_hi_q;        // lba_q[47:LPN_W] != 0
    logic [LPN_W-1:0]   lba_lo_q;
    logic signed [RW-1:0] lba_rem_q;     // NUM_LBAS - nlb_q
    logic               lba_bad_q;       // lba + nlb >= NUM_LBAS
    logic               lba_bad;
    logic [7:0]         dec_status;
    main_state_e        dec_next;
    assign lba_bad  = lba_bad_q;
    always_comb begin
        dec_status = STS_OK;
        dec_next   = ST_DONE;
        unique case (op_q)
            OP_READ, OP_WRITE, OP_TRIM: begin
                if (bad_field_q) dec_status = STS_BAD_FIELD;
                else if (TX && op_trim_q && txid_q != 6'd0) dec_status = STS_BAD_FIELD;   // TRIM is not transactional
                else if (TX && (txid_bad_q || (cmt_q && txid_q == 6'd0))) dec_status = STS_BAD_TXID;
                else if (lba_bad) dec_status = STS_BAD_LBA;
                else if (nosp_q && !op_rd_q) dec_status = STS_NO_SPACE;   // WRITE, TRIM: no new data taken
                else dec_next = ST_LK1;
            end
            OP_DIFFWRITE: begin
                if (!TX) dec_status = STS_BAD_OP;
                else if (bad_field_q || dbad_q) dec_status = STS_BAD_FIELD;
                else if (txid_q == 6'd0 || txid_bad_q) dec_status = STS_BAD_TXID;
                else if (lba_bad) dec_status = STS_BAD_LBA;
                else if (nosp_q) dec_status = STS_NO_SPACE;
                else dec_next = ST_LK1;
            end
            OP_TX_BEGIN: begin
                if (!TX) dec_status = STS_BAD_OP;
                else if (txid_q == 6'd0 || txid_bad_q) dec_status = STS_BAD_TXID;
                else if (txo_cur_q) dec_status = STS_TABLE_FULL;   // still holds entries: end it first
            end
            OP_TX_COMMIT, OP_TX_ABORT: begin
                if (!TX) dec_status = STS_BAD_OP;
                else if (txid_q == 6'd0 || txid_bad_q) dec_status = STS_BAD_TXID;
                else if (!txo_cur_q) dec_status = STS_TX_EMPTY;    // no entries: no record, nothing programmed
                else if (nosp_q) dec_status = STS_NO_SPACE;        // a record would need the media; tx intact
                else dec_next = ST_LK1;                  // a record slot (no lookup match), then pending
            end
            OP_FLUSH: begin
                if (bad_field_q) dec_status = STS_BAD_FIELD;
                else if (nosp_q) dec_status = STS_NO_SPACE;
                else if (!PLP) dec_next = ST_WPUSH;
            end
            OP_RFLUSH: begin
                if (bad_field_q || nlb_big_q) dec_status = STS_BAD_FIELD;
                else if (nosp_q) dec_status = STS_NO_SPACE;        // (its ranges are not read)
                else dec_next = ST_RF_HRD;
            end
            default: dec_status = STS_BAD_OP;
        endcase
    end

    // RFLUSH range k, checked in three registered steps: load, add, compare
    logic [47:0]        ck_start_q;
    logic [15:0]        ck_cnt_q;
    logic [LPN_W-1:0]   ck_last_q;
    logic               ck_hi_q;                  // ck_start_q[47:LPN_W] != 0
    logic [LPN_W-1:0]   ck_lo_q;
    logic signed [RW-1:0] ck_rem_q;               // NUM_LBAS - ck_cnt_q
    logic               ck_bad_q;                 // ck_start + ck_cnt >= NUM_LBAS

    // range test of the scanned slot against every range (compares registered, then combined)
    logic               sc_in;
    // scanned slot one-hot, already qualified (valid, in a range, DIRTY and not yet urgent: during
    // the scan the engine is held, so a sampled DIRTY slot stays DIRTY); per-slot mark enables
    logic [NUM_SLOTS-1:0] sc3_oh_q, mark_vec;
    always_comb begin
        for (int i = 0; i < NUM_SLOTS; i++) mark_vec[i] = st_scan_q && sc3_oh_q[i];
    end
    always_comb begin
        sc_in = 1'b0;
        for (int k = 0; k < MAX_RANGES; k++) begin
            if (3'(k) <= rf_n_q && sc_ge_q[k] && sc_le_q[k]) sc_in = 1'b1;
        end
    end

    // ---------------------------------------------------------------- S-Log (FRAG_SLOTS > 0)
    // docs/architecture.md §11.3 "The write buffer's part exactly", README "S-Log". Every term
    // below is gated by FR: with FRAG_SLOTS = 0 the RTL is the buffer without it, cycle for cycle.
    localparam bit FR   = TX && (FRAG_SLOTS > 0);
    localparam int NFS  = FR ? FRAG_SLOTS : 2;   // FRAG table entries (2 when unused: widths only)
    localparam int NF_W = $clog2(NFS);
    localparam logic [7:0] RD_ID_RESV  = 8'hFD;   // RESERVE (behind no miss, like the probe)
    localparam logic [7:0] RD_ID_UNRES = 8'hFC;   // UNRESERVE
    localparam logic [1:0] UR_LK = 2'd0, UR_PC = 2'd1, UR_AB = 2'd2;   // after an UNRESERVE: lookup again, a conversion's precommit, abort walk
    logic               fr_hit_q, fr_ok_q, dsmall_q;
    logic [NF_W-1:0]    fr_num_q;
    logic [NFS-1:0]     fr_txv_q;                 // the command's txid's FRAG slots
    logic [15:0]        thr_q;                    // min(slog_thr, PAGE_BYTES - 16)
    logic               cv_q, cv_d, ccv_q, ccv_d, fov_q, fov_d, cm_slog_q, cm_slog_d;
    logic               wk_ab_q, wk_ab_d, wk_cva_q, wk_cva_d;
    logic               sv_rec_q, sv_cmt_q, sv_wr_q;  // the command's flags, kept over a commit-time conversion
    logic [NF_W-1:0]    fnum_q, fnum_d;           // the FRAG slot the FSM works on
    logic [NF_W:0]      wk_n_q, wk_n_d;           // the walk's next FRAG number
    logic [8:0]         racc_q, racc_d;           // the record's runs so far
    logic [7:0]         room_q, room_d;
    logic [1:0]         ur_ret_q, ur_ret_d;
    logic               fr_leave, fu_free_fsm, fsm_fu_req, fov_step, fov_base_ok, wk_found, cm_send;
    logic [NF_W-1:0]    wk_k;
    logic [31:0]        fov_data, c_slog_err_q;
    // the FRAG table (ats_wbuf_frag) and the FRAG pages' memory
    logic               fu_busy, fu_lk_hit, fu_free_v, fu_cr_en, fu_rs_en, fu_sc_en, fu_fr_en;
    logic [NF_W-1:0]    fu_lk_num, fu_free_num, fu_st_num, fu_sc_num;
    logic [NF_W:0]      fu_lk_txcnt;
    logic [LPN_W-1:0]   fu_st_lpn;
    logic [7:0]         fu_st_room;
    logic               fu_st_v, fu_bit_last;     // (unused: the FSM and the streamer know their slots and the page end)
    logic [5:0]         fu_st_txid;
    logic [NFS-1:0]     fu_tv_vec, fu_tv2_vec;
    logic [1:0]         fu_sc_mode;
    logic [WI_W:0]      fu_sc_words, fu_sc_runs;
    logic               fu_run_valid, fu_run_ready, fu_run_last, fu_bit_valid, fu_bit_ready, fu_bit;
    logic [WI_W-1:0]    fu_run_first;
    logic [WI_W:0]      fu_run_words;
    logic               fm_we;
    logic [NF_W+WI_W-1:0] fm_wa, fm_ra;
    logic [31:0]        fm_rd;
    // the FSM's FRAG stream (scan mode 2): {mask bit, word} of every page word in order, 4 deep
    logic [WI_W-1:0]    fs_idx_q;
    logic [1:0]         fs_pipe_q, fs_pbit_q;
    logic [31:0]        fs_w_q [4];
    logic [3:0]         fs_b_q;
    logic [2:0]         fs_cnt_q;
    logic [1:0]         fs_rd_q, fs_wr_q;
    logic               fs_v, fs_bit, fs_take, fs_pop, fs_start;
    logic [31:0]        fs_word;
    // the engine's record streamer (README "S-Log"): descriptors, then the runs' words
    typedef enum logic [2:0] {SE_IDLE, SE_LOCK, SE_NEXT, SE_RUN, SE_DRAIN} se_state_e;
    se_state_e          se_q;
    logic               fu_eng_q;                 // the engine holds the FRAG table and the FRAG pages' read port
    logic [5:0]         se_tx_q;
    logic [NF_W:0]      se_n_q;
    logic [NF_W-1:0]    se_cur_q, se_k;
    logic               se_pass_q, se_ph_q, se_lastslot_q, se_found, se_none_above, se_sc_en;
    logic [WI_W:0]      se_ri_q;
    logic               se_take, se_wbd_v, se_wbd_last;
    logic [31:0]        se_wbd_data;
    logic [31:0]        ew_w_q [4];
    logic [3:0]         ew_l_q;
    logic [1:0]         ew_pipe_q, ew_plast_q, ew_rd_q, ew_wr_q;
    logic [2:0]         ew_cnt_q;
    logic               ew_issue, ew_last_in, ew_pop;
    logic [NUM_SLOTS-1:0] sl_slog_q;              // the slot is an S-Log commit record
    logic               hs_slog_q;

    logic               hwr_from_rdr;
    assign hwr_from_rdr = (state_q == ST_RD_HIT);

    // Next-state decodes built from state_q and registered flags only (shallow, unlike state_d):
    // they feed the registered state decodes (meta_busy_q, st_act_w_q, st_commit_q, st_scan_q) and
    // the commit one-hots; they equal the corresponding state_d compares (checked in simulation).
    logic               alloc_ok, fill_last, scan_done, diff_p1miss;
    logic               to_act_w, to_precommit, to_precommit2, to_commit, to_scan, to_txcan;
    assign alloc_ok      = alloc_v_q && fifo_space_q && plp_room_q;
    assign fill_last     = s_hrd_valid && (widx_q == (WI_W + 1)'(PWORDS - 1));
    assign scan_done     = scan_q[SLOT_W] && !sc_v_q && !sc2_v_q && !sc3_v_q;
    assign diff_p1miss   = TX && op_diff_q && key_q != 6'd0 && !rd_hit_q && !own_q;   // DIFFWRITE leaves ACT for its probe / second lookup
    // a write or DIFFWRITE of an LPN with a FRAG slot of its txid, or a DIFFWRITE that may become
    // a fragment (step 5 without a probe), leaves ACT for the S-Log states without a slot
    assign fr_leave      = FR && !dmiss_q && !own_q && key_q != 6'd0 && !op_rd_q &&
                           ((op_wr_q && fr_hit_q) || (op_diff_q && fr_hit_q) ||
                            (op_diff_q && dsmall_q && fr_ok_q && !rd_hit_q && !txm_cur_q));
    assign to_act_w      = !dump_q && !op_rd_q && ((state_q == ST_LK3) || (state_q == ST_ACT && !alloc_ok && !diff_p1miss && !fr_leave && !nosp_q));
    assign to_precommit  = !dump_q && ((state_q == ST_ACT && (op_trim_q || op_rec_q) && alloc_ok) ||
                                       (state_q == ST_DCHK && !rd_err_q && !(FR && cv_q)) ||
                                       (FR && state_q == ST_UNR_DATA && s_rdd_valid && s_rdd_tag == RD_ID_UNRES &&
                                        s_rdd_last && ur_ret_q == UR_PC) ||
                                       (state_q == ST_FILL && fill_last));
    assign to_precommit2 = !dump_q && (state_q == ST_PRECOMMIT);
    assign to_commit     = !dump_q && (state_q == ST_PRECOMMIT2);
    assign to_scan       = !dump_q && ((state_q == ST_RF_WAIT && rf_idle) ||
                                       (state_q == ST_RF_SCAN && !scan_done));
    // the finisher's take-back (F_CAN1, F_CAN2) holds the engine like a commit
    assign to_txcan      = !dump_q && TX && ((fin_go && !txdone_q) || fin_q == F_CAN1);
    // the pending commit: the FSM takes nothing while the finisher runs (fin_busy); the finisher
    // starts only between commands (ST_IDLE, ST_PTXW); a command that must not overtake it (same
    // txid, a commit / abort, an RFLUSH) waits in ST_PTXW and is decoded again when it has ended
    assign fin_go   = TX && fin_q == F_IDLE && ptx_v_q && !dump_q && (state_q == ST_IDLE || state_q == ST_PTXW) &&
                      (txdone_q || (nosp_q && ptx_rdirty_q));
    assign fin_busy = TX && (fin_q != F_IDLE || fin_go);
    assign ptx_conf = TX && ptx_v_q && (((op_rec_q || cmt_q) && pq_full) || op_q == OP_RFLUSH || (txid_q != 6'd0 && pq_same) ||
                                        (op_rd_q && cw_q));

    always_comb begin
        state_d   = state_q;
        addr_d    = addr_q;
        page_d    = page_q;
        lpn_d     = lpn_q;
        key_d     = key_q;
        dmiss_d   = dmiss_q;
        own_d     = own_q;
        had_miss_d = had_miss_q;
        mq_push_page = 1'b0;
        mq_push_cpl = 1'b0;
        dsrc_d    = dsrc_q;
        dslot_d   = dslot_q;
        status_d  = status_q;
        result_d  = result_q;
        fill_d    = fill_q;
        hit_d     = hit_q;
        hit_slot_d = hit_slot_q;
        widx_d    = widx_q;
        rd_err_d  = rd_err_q;
        commit_fire = 1'b0;
        mark_fire = 1'b0;
        wpush_fire = 1'b0;
        rfarm_fire = 1'b0;
        rf_store = 1'b0;
        rdr_req_main = 1'b0;
        ptx_set = 1'b0;
        cv_d      = cv_q;
        ccv_d     = ccv_q;
        fov_d     = fov_q;
        cm_slog_d = cm_slog_q;
        wk_ab_d   = wk_ab_q;
        wk_cva_d  = wk_cva_q;
        fnum_d    = fnum_q;
        wk_n_d    = wk_n_q;
        racc_d    = racc_q;
        room_d    = room_q;
        ur_ret_d  = ur_ret_q;
        unique case (state_q)
            ST_IDLE: begin
                // loaded in every idle cycle (none of these is used in ST_IDLE): the enables are
                // the state bit alone, not s_disp_valid
                if (s_disp_valid && !fin_busy) state_d = ST_DEC;
                result_d = 32'd0;
                addr_d   = (s_disp_op == OP_RFLUSH) ? s_disp_aux : s_disp_dptr;
                page_d   = 16'd0;
                lpn_d    = s_disp_lba[LPN_W-1:0];
                key_d    = TX ? s_disp_txid : 6'd0;
                dmiss_d  = 1'b0;
                own_d    = 1'b0;
                had_miss_d = 1'b0;
                rd_err_d = 1'b0;
                widx_d   = '0;
                cv_d     = 1'b0;
                ccv_d    = 1'b0;
                fov_d    = 1'b0;
                cm_slog_d = 1'b0;
            end
            ST_DEC: state_d = ST_DEC2;                     // lba_hi_q, lba_lo_q, lba_rem_q registered
            ST_DEC2: state_d = ST_DEC3;                    // lba_bad_q registered
            ST_DEC3: begin
                state_d  = ptx_conf ? ST_PTXW : dec_next;
                status_d = dec_status;
                // S-Log: a TX_COMMIT / TX_ABORT / COMMIT write of a txid with FRAG slots walks
                // them first (§11.3: the commit's choice and conversions; the abort's UNRESERVEs)
                if (FR && !ptx_conf && dec_next == ST_LK1 && (op_rec_q || cmt_q) && fr_txv_q != '0) begin
                    state_d  = ST_WK_NEXT;
                    wk_n_d   = '0;
                    racc_d   = '0;
                    wk_ab_d  = op_q == OP_TX_ABORT;
                    wk_cva_d = cmt_q || txf_cur_q;       // more full pages than SLOG_TXFULL: no record (§11.3)
                end
            end
            // behind the pending commit: decoded again once it has ended (txo_cur_q may change)
            // (PTXQ > 1: also when an entry has ended and the finisher is not running)
            ST_PTXW: if (!ptx_v_q || (ptx_end_q && !fin_busy)) state_d = ST_DEC;
            ST_LK1: state_d = ST_LK2;                       // match_q registered
            ST_LK2: begin                                   // hit encoded
                hit_d      = |match_q;
                hit_slot_d = first_one(match_q);
                state_d    = ST_LK3;
            end
            ST_LK3: state_d = ST_ACT;                       // rd_hit_q, rd_tomb_q registered
            ST_ACT: begin
                widx_d = '0;
                if (op_rd_q) begin
                    // a READ hit: the slot's data stays put while this FSM streams it (only this
                    // FSM allocates slots); a state change since LK3 (WB -> CLEAN) does not matter
                    if (FR && fov_q) begin
                        // S-Log overlay: the base the READ would return without the FRAG slot
                        dslot_d = hit_slot_q;
                        dsrc_d  = rd_hit_q ? (rd_tomb_q ? 2'd2 : 2'd0) : 2'd1;
                        fnum_d  = fr_num_q;
                        state_d = ST_FS_GO;
                    end else if (FR && fr_hit_q) begin
                        fov_d   = 1'b1;                  // a FRAG slot of the tx: committed slots next (no probe: §11.3 invariant)
                        key_d   = 6'd0;
                        state_d = ST_LK1;
                    end else if (rd_hit_q) begin
                        state_d = ST_RD_WAIT;            // (a slot changes only by this FSM)
                    end else if (TX && key_q != 6'd0 && !own_q && txm_cur_q) begin
                        state_d = ST_PRB_REQ;            // tx READ: own slots missed, the tx's table next
                    end else if (TX && key_q != 6'd0 && !own_q) begin
                        key_d   = 6'd0;                  // tx READ: own slots missed, committed slots next
                        state_d = ST_LK1;
                    end else begin
                        state_d = ST_RD_REQ;             // (own_q: m_rd with the txid reads the tx's page)
                    end
                end else if (fr_leave) begin
                    fnum_d = fr_num_q;
                    if (op_wr_q) begin
                        ur_ret_d = UR_LK;                // a WRITE replaces the FRAG slot: UNRESERVE, then today's path
                        state_d  = ST_UNR_REQ;
                    end else if (fr_hit_q && dsmall_q) begin
                        widx_d  = dlo_q;                 // step 4: the words into the FRAG slot
                        state_d = ST_FHRD;
                    end else if (fr_hit_q) begin
                        cv_d    = 1'b1;                  // step 1 with a FRAG slot: a conversion
                        dmiss_d = 1'b1;
                        key_d   = 6'd0;
                        state_d = ST_LK1;
                    end else begin
                        state_d = ST_RSV_REQ;            // step 5
                    end
                end else if (diff_p1miss) begin
                    if (txm_cur_q) begin
                        state_d = ST_PRB_REQ;            // DIFFWRITE: own slots missed, the tx's table next
                    end else begin
                        // DIFFWRITE: nothing in the tx's own domain; its base is committed data
                        dmiss_d = 1'b1;
                        key_d   = 6'd0;
                        state_d = ST_LK1;
                    end
                end else if (TX && op_diff_q && alloc_ok) begin
                    fill_d  = alloc_q;
                    // base: the tx's own version (also the old version the commit supersedes), or
                    // the committed one (buffer slot, tombstone = zeros, else the media)
                    dslot_d = hit_slot_q;
                    dsrc_d  = rd_hit_q ? (rd_tomb_q ? 2'd2 : 2'd0) : 2'd1;
                    if (dmiss_q || hit_slot_q == alloc_q) hit_d = 1'b0;
                    state_d = ST_DHRD;
                    // a conversion: the FRAG stream, then the fill; the FRAG slot and its reservation
                    // end only after a good base read (ST_DCHK), so a failed one changes nothing
                    if (FR && cv_q) state_d = ST_FS_GO;
                end else if (alloc_ok) begin
                    // (PLP: only while held < budget, else wait for writeback to complete one)
                    // alloc_q is FREE or CLEAN: it was computed last cycle and only this FSM
                    // consumes such slots (at most once every few cycles)
                    fill_d     = alloc_q;
                    if (hit_slot_q == alloc_q) hit_d = 1'b0;   // evicting the clean old version
                    state_d    = op_wr_q ? ST_HRD_REQ : ST_PRECOMMIT;
                end else if (nosp_q) begin
                    // no slot and no space (README "No space"): the command ends here; the pages
                    // before this one are in the buffer (result), nothing else was taken
                    status_d = STS_NO_SPACE;
                    result_d = {16'd0, page_q};
                    state_d  = ST_DONE;
                end
            end
            ST_HRD_REQ: if (m_hrd_ready) state_d = ST_FILL;
            // DIFFWRITE: host words of the diff requested, then the base streamed into the new slot
            // with the diff words in place of its words dlo..dhi-1
            ST_DHRD: if (m_hrd_ready) state_d = (dsrc_q == 2'd0) ? ST_DJOB : (dsrc_q == 2'd1) ? ST_DRDREQ : ST_DFILL;
            ST_DJOB: begin
                rdr_req_main = 1'b1;
                if (rdr_grant_main) state_d = ST_DFILL;
            end
            ST_DRDREQ: if (m_rd_ready && mq_hw_idle) state_d = ST_DFILL;   // base page (id 0xFF) behind no miss
            // own-table probe (TX = 1): behind no miss, like the DIFFWRITE base; the backend answers
            // a zero page whose last status is OK when the tx's table holds the LBA (own_q: the
            // lookup is repeated in the tx's domain, it misses again, and the page is read from the
            // media with the txid), else not OK (committed slots next, then the media)
            ST_PRB_REQ: if (m_rd_ready && mq_hw_idle) state_d = ST_PRB_DATA;
            ST_PRB_DATA: if (s_rdd_valid && s_rdd_tag == RD_ID_PROBE && s_rdd_last) begin
                if (s_rdd_status == STS_OK) begin
                    own_d   = 1'b1;
                end else begin
                    key_d   = 6'd0;
                    dmiss_d = op_diff_q;
                end
                state_d = ST_LK1;
                if (FR && s_rdd_status != STS_OK && op_diff_q && dsmall_q && fr_ok_q) state_d = ST_RSV_REQ;   // step 5
            end
            ST_DFILL: if (dstep) begin
                widx_d = widx_q + 1'b1;
                if (dsrc_q == 2'd1 && s_rdd_status != STS_OK) rd_err_d = 1'b1;
                if (dlast) state_d = ST_DCHK;
            end
            ST_DCHK: begin
                state_d = rd_err_q ? ST_DREL : ST_PRECOMMIT;
                if (FR && cv_q && !rd_err_q) begin
                    ur_ret_d = UR_PC;                    // a conversion's page is good: UNRESERVE, the slot ends
                    state_d  = ST_UNR_REQ;
                end
            end
            ST_DREL: begin                                // base unreadable: the new slot is freed
                status_d = STS_MEDIA_ERROR;
                state_d  = ST_DONE;
            end
            ST_FILL: if (s_hrd_valid) begin
                widx_d = widx_q + 1'b1;
                if (widx_q == (WI_W + 1)'(PWORDS - 1)) state_d = ST_PRECOMMIT;
            end
            ST_PRECOMMIT: state_d = ST_PRECOMMIT2;          // old version's metadata registered
            ST_PRECOMMIT2: state_d = ST_COMMIT;             // commit decision registered
            ST_COMMIT: begin
                commit_fire = 1'b1;
                state_d = ST_NEXT;
            end
            ST_NEXT: begin
                fov_d = 1'b0;
                if (FR && ccv_q) begin
                    // a commit-time conversion's page is in: back to the walk (flags restored below)
                    ccv_d   = 1'b0;
                    cv_d    = 1'b0;
                    lpn_d   = lba_q[LPN_W-1:0];
                    state_d = ST_WK_NEXT;
                end else if (page_last_q) begin
                    state_d = ST_FIN;
                end else begin
                    page_d  = page_q + 1'b1;
                    lpn_d   = lpn_q + 1'b1;
                    key_d   = txid_q;                    // a READ's next page starts in its own domain again
                    own_d   = 1'b0;
                    addr_d  = addr_q + 32'(PAGE_BYTES);
                    state_d = ST_LK1;
                end
            end
            ST_RD_JOB: begin
                rdr_req_main = 1'b1;
                if (rdr_grant_main) state_d = ST_RD_HIT;
            end
            ST_RD_HIT: if (!rdr_busy_q) state_d = ST_NEXT;
            ST_RD_ZERO: if (m_hwr_ready) begin
                widx_d = widx_q + 1'b1;
                if (widx_q == (WI_W + 1)'(PWORDS - 1)) state_d = ST_NEXT;
            end
            // hit or tombstone: after the queued miss pages (m_hwr has one writer at a time)
            ST_RD_WAIT: if (mq_hw_idle) state_d = rd_tomb_q ? ST_RD_ZERO : ST_RD_JOB;
            // miss: queued (the drain streams the page when the backend returns it), next page
            ST_RD_REQ: if (m_rd_ready && mq_room) begin
                mq_push_page = 1'b1;
                had_miss_d = 1'b1;
                state_d = ST_NEXT;
            end
            ST_FIN: begin
                result_d = {16'd0, nlb_q} + 32'd1;
                // (a READ's MEDIA_ERROR comes only from its miss pages: the drain completes it)
                if (FR && op_rd_q && rd_err_q) status_d = STS_MEDIA_ERROR;   // an overlay's base unreadable
                if (op_rd_q && had_miss_q) begin
                    mq_push_cpl = 1'b1;                   // completed by the drain after its pages
                    state_d = ST_IDLE;
                end else if (TX && (op_rec_q || cmt_q)) begin
                    ptx_set = 1'b1;                       // pending: the finisher completes it
                    state_d = ST_IDLE;
                end else begin
                    state_d = ((op_wr_q || op_diff_q) && fua_q && !PLP) ? ST_WPUSH : ST_DONE;
                end
            end
            ST_WPUSH: if (!wt_full) begin
                wpush_fire = 1'b1;
                state_d = ST_IDLE;
            end
            ST_RF_HRD: if (m_hrd_ready) state_d = ST_RF_RECV;
            ST_RF_RECV: if (s_hrd_valid) begin
                rf_store = 1'b1;
                widx_d = widx_q + 1'b1;
                if (widx_q[3:0] == {rf_n_q, 1'b1}) state_d = ST_RF_CHECK;
            end
            ST_RF_CHECK: state_d = ST_RF_CHECK2;          // ck_start_q, ck_cnt_q of range rf_k_q
            ST_RF_CHECK2: state_d = ST_RF_CHECK3;         // ck_last_q, ck_hi_q, ck_lo_q, ck_rem_q
            ST_RF_CHECK3: state_d = ST_RF_CHECK4;         // ck_bad_q
            ST_RF_CHECK4: begin
                state_d = ST_RF_CHECK;
                if (ck_bad_q) begin
                    status_d = STS_BAD_LBA;
                    state_d  = ST_DONE;
                end else if (rf_k_q[2:0] == rf_n_q) begin
                    state_d  = PLP ? ST_DONE : ST_RF_WAIT;
                end
            end
            ST_RF_WAIT: if (rf_idle) state_d = ST_RF_SCAN;
            ST_RF_SCAN: begin
                // pipeline: sample slot scan_q, test it against the ranges, then mark it
                mark_fire = |mark_vec;
                if (scan_done) state_d = ST_RF_ARM;
            end
            ST_RF_ARM: begin
                rfarm_fire = 1'b1;
                state_d = ST_IDLE;
            end
            // ---- S-Log (FR only: with FRAG_SLOTS = 0 no transition leaves, or enters, these states)
            // RESERVE (id 0xFD): word 0 of the answer is the room, the status on `last` decides
            ST_RSV_REQ: if (FR) if (m_rd_ready && mq_hw_idle) begin
                widx_d  = '0;
                state_d = ST_RSV_DATA;
            end
            ST_RSV_DATA: if (FR) if (s_rdd_valid && s_rdd_tag == RD_ID_RESV) begin
                widx_d = widx_q + 1'b1;
                if (widx_q == '0) room_d = s_rdd_data[7:0];
                if (s_rdd_last) begin
                    if (s_rdd_status == STS_OK && ((widx_q == '0) ? s_rdd_data[7:0] : room_q) != 8'd0) begin
                        state_d = ST_FCR;
                    end else begin
                        key_d   = 6'd0;                  // refused: today's read-modify-write
                        dmiss_d = 1'b1;
                        state_d = ST_LK1;
                    end
                end
            end
            ST_FCR: if (FR) if (fu_free_fsm) begin                // a new FRAG slot at the lowest free number
                fnum_d  = fu_free_num;
                widx_d  = dlo_q;
                state_d = ST_FHRD;
            end
            ST_FHRD: if (FR) if (m_hrd_ready) state_d = ST_FWR;
            ST_FWR: if (FR) if (s_hrd_valid) begin               // words dlo..dhi-1 into the FRAG page
                widx_d = widx_q + 1'b1;
                if (widx_q == dhi_q - 1'b1) state_d = ST_FRS;
            end
            ST_FRS: if (FR) if (fu_free_fsm) state_d = ST_FIN;   // their mask bits set
            ST_UNR_REQ: if (FR) if (m_rd_ready && mq_hw_idle) state_d = ST_UNR_DATA;
            ST_UNR_DATA: if (FR) if (s_rdd_valid && s_rdd_tag == RD_ID_UNRES && s_rdd_last) begin
                state_d = (ur_ret_q == UR_LK) ? ST_LK1 : (ur_ret_q == UR_PC) ? ST_PRECOMMIT : ST_WK_NEXT;
            end
            // the FRAG stream (mask bits and words of slot fnum_q) starts; behind no miss
            ST_FS_GO: if (FR) if (fu_free_fsm && mq_hw_idle) begin
                widx_d = '0;
                if (op_rd_q) state_d = (dsrc_q == 2'd1) ? ST_FOV_RD : (dsrc_q == 2'd0) ? ST_FOV_JOB : ST_FOV;
                else if (ccv_q) state_d = (dsrc_q == 2'd0) ? ST_DJOB : (dsrc_q == 2'd1) ? ST_DRDREQ : ST_DFILL;
                else state_d = ST_DHRD;
            end
            ST_FOV_RD: if (FR) if (m_rd_ready && mq_hw_idle) state_d = ST_FOV;   // base page (id 0xFF)
            ST_FOV_JOB: if (FR) begin
                rdr_req_main = 1'b1;
                if (rdr_grant_main) state_d = ST_FOV;
            end
            ST_FOV: if (FR) if (fov_step) begin                   // the overlaid page to the host
                widx_d = widx_q + 1'b1;
                if (dsrc_q == 2'd1 && s_rdd_status != STS_OK) rd_err_d = 1'b1;
                if (widx_q == (WI_W + 1)'(PWORDS - 1)) state_d = ST_NEXT;
            end
            // walk over the txid's FRAG slots in number order (commit: choose / convert; abort: UNRESERVE)
            ST_WK_NEXT: if (FR) if (!wk_found && !wk_ab_q && racc_q != '0 && txf_cur_q) begin
                // slots kept while the walk's conversions took the tx's full pages above
                // SLOG_TXFULL (the backend would reject the record, §11.3): walk again, converting all
                wk_n_d   = '0;
                racc_d   = '0;
                wk_cva_d = 1'b1;
            end else if (!wk_found) begin
                lpn_d   = lba_q[LPN_W-1:0];
                key_d   = txid_q;                         // (a conversion looked in domain 0)
                dmiss_d = 1'b0;
                state_d = ST_LK1;
                cm_slog_d = !wk_ab_q && racc_q != '0;
            end else begin
                fnum_d  = wk_k;
                wk_n_d  = (NF_W + 1)'(wk_k) + 1'b1;
                state_d = wk_ab_q ? ST_AB_LPN : wk_cva_q ? ST_CM_DEC : ST_CM_SC;
            end
            ST_AB_LPN: if (FR) if (!fu_eng_q) begin
                lpn_d    = fu_st_lpn;
                ur_ret_d = UR_AB;
                state_d  = ST_UNR_REQ;
            end
            ST_CM_SC: if (FR) if (fu_free_fsm) state_d = ST_CM_W; // count scan of the slot
            ST_CM_W: if (FR) if (!fu_busy) state_d = ST_CM_DEC;
            ST_CM_DEC: if (FR) if (fu_eng_q) begin
                state_d = ST_CM_DEC;                      // (a COMMIT write's walk: the streamer holds the table)
            end else if (cm_send) begin
                racc_d  = racc_q + 9'(fu_sc_runs);
                state_d = ST_WK_NEXT;
            end else begin
                // converted: overlay onto the committed version, a full page of the tx (flags below)
                lpn_d   = fu_st_lpn;
                key_d   = 6'd0;
                dmiss_d = 1'b1;
                cv_d    = 1'b1;
                ccv_d   = 1'b1;
                state_d = ST_LK1;
            end
            ST_DONE: if (main_taken) state_d = ST_IDLE;
            ST_FROZEN: ;
            default: state_d = ST_IDLE;
        endcase
        if (dump_q) state_d = ST_FROZEN;
    end

    assign s_disp_ready = (state_q == ST_IDLE) && !dump_q && !fin_busy;
    // host read request, media read request, host write: offered beats are held through the
    // freeze at pwr_fail (stream stability, as m_done above): the FSM freezes one cycle after the
    // cut edge and the reader drains its host-bound words, so a beat offered and not taken is
    // offered from a registered copy until taken, and nothing new is offered once dump_q is set
    logic               hrd_hold_q;
    logic [31:0]        hrd_addr_q;
    logic [15:0]        hrd_len_q, hrd_live_len;
    assign hrd_live_len = (state_q == ST_RF_HRD) ? {9'd0, {1'b0, rf_n_q} + 4'd1, 3'd0} :
                          (state_q == ST_DHRD || (FR && state_q == ST_FHRD)) ? dlen_q : 16'(PAGE_BYTES);
    assign m_hrd_valid  = hrd_hold_q || (!dump_q && ((state_q == ST_HRD_REQ) || (state_q == ST_RF_HRD) ||
                                                     (state_q == ST_DHRD) || (FR && state_q == ST_FHRD)));
    assign m_hrd_addr   = hrd_hold_q ? hrd_addr_q : addr_q;
    assign m_hrd_len    = hrd_hold_q ? hrd_len_q : hrd_live_len;
    // DIFFWRITE fill: one word a step, when the base word is there (and the host word, in the diff)
    assign d_in   = (widx_q >= dlo_q) && (widx_q < dhi_q);
    // (S-Log conversion, cv_q: the FRAG slot's masked words over the base, the host's over both)
    assign dstep  = (state_q == ST_DFILL) && (!d_in || s_hrd_valid) && (!(FR && cv_q) || fs_v) &&
                    (dsrc_q == 2'd2 || (dsrc_q == 2'd0 ? rdf_cnt_q != 0 : s_rdd_valid && s_rdd_tag == RD_ID_BASE));
    assign dlast  = widx_q == (WI_W + 1)'(PWORDS - 1);
    assign s_hrd_ready  = (state_q == ST_FILL) || (state_q == ST_RF_RECV) || (dstep && d_in) || (FR && state_q == ST_FWR);
    assign mem_we = ((state_q == ST_FILL) && s_hrd_valid) || dstep;
    assign mem_wa = {fill_q, widx_q[WI_W-1:0]};
    assign mem_wd = (state_q == ST_FILL || d_in) ? s_hrd_data : (FR && cv_q && fs_bit) ? fs_word :
                    (dsrc_q == 2'd0) ? rdf_q[rdf_rd_q] : (dsrc_q == 2'd1) ? s_rdd_data : 32'd0;
    // S-Log overlay of a READ (ST_FOV): one word a step when the base word, the FRAG stream and m_hwr are there
    assign fov_base_ok = dsrc_q == 2'd2 || (dsrc_q == 2'd0 ? rdf_cnt_q != 0 : s_rdd_valid && s_rdd_tag == RD_ID_BASE);
    assign fov_data    = fs_bit ? fs_word : (dsrc_q == 2'd0) ? rdf_q[rdf_rd_q] : (dsrc_q == 2'd1) ? s_rdd_data : 32'd0;
    assign fov_step    = FR && state_q == ST_FOV && fs_v && fov_base_ok && m_hwr_ready;

    logic               rd_hold_q;
    logic [31:0]        rd_lpn_q;
    logic [5:0]         rd_txid_q;
    logic [7:0]         rd_tag_q, rd_live_tag;
    assign rd_live_tag = (state_q == ST_DRDREQ || (FR && state_q == ST_FOV_RD)) ? RD_ID_BASE : (state_q == ST_PRB_REQ) ? RD_ID_PROBE :
                         (FR && state_q == ST_RSV_REQ) ? RD_ID_RESV : (FR && state_q == ST_UNR_REQ) ? RD_ID_UNRES : 8'(mq_id);
    assign m_rd_valid = rd_hold_q || (!dump_q && ((state_q == ST_RD_REQ && mq_room) ||
                                                  ((state_q == ST_DRDREQ || state_q == ST_PRB_REQ) && mq_hw_idle) ||
                                                  (FR && (state_q == ST_RSV_REQ || state_q == ST_UNR_REQ || state_q == ST_FOV_RD) && mq_hw_idle)));
    assign m_rd_lpn   = rd_hold_q ? rd_lpn_q : 32'(lpn_q);
    assign m_rd_txid  = rd_hold_q ? rd_txid_q : txid_q;
    assign m_rd_tag   = rd_hold_q ? rd_tag_q : rd_live_tag;

    logic               hwr_hold_q, hwr_live_v, hwr_live_last, hwr_last_q;
    logic [31:0]        hwr_live_data, hwr_live_addr, hwr_addr_q, hwr_data_q;
    assign hwr_live_v    = hwr_from_rdr ? (rdf_cnt_q != 0 && rdr_dest_q)
                         : (state_q == ST_RD_ZERO) || mr_hwr_valid || (FR && state_q == ST_FOV && fs_v && fov_base_ok);
    assign hwr_live_data = hwr_from_rdr ? rdf_q[rdf_rd_q] : mr_busy ? mr_hwr_data : (FR && state_q == ST_FOV) ? fov_data : 32'd0;
    assign hwr_live_last = hwr_from_rdr ? (rdr_out_q == WI_W'(PWORDS - 1))
                         : mr_busy ? mr_hwr_last
                         : (widx_q == (WI_W + 1)'(PWORDS - 1));
    assign hwr_live_addr = mr_busy ? mr_hwr_addr : addr_q;
    assign m_hwr_valid = hwr_hold_q || (!dump_q && hwr_live_v);
    // a miss page's word goes to m_hwr as it is taken (after the cut only a held beat is finished)
    assign mr_hwr_ready = m_hwr_ready && (!dump_q || hwr_hold_q);
    assign s_rdd_ready = mr_rdd_ready || (dstep && dsrc_q == 2'd1) ||
                         (TX && state_q == ST_PRB_DATA && s_rdd_tag == RD_ID_PROBE) ||
                         (fov_step && dsrc_q == 2'd1) ||
                         (FR && state_q == ST_RSV_DATA && s_rdd_tag == RD_ID_RESV) ||
                         (FR && state_q == ST_UNR_DATA && s_rdd_tag == RD_ID_UNRES);
    assign m_hwr_addr  = hwr_hold_q ? hwr_addr_q : hwr_live_addr;
    assign m_hwr_data  = hwr_hold_q ? hwr_data_q : hwr_live_data;
    assign m_hwr_last  = hwr_hold_q ? hwr_last_q : hwr_live_last;
    always_ff @(posedge clk) begin
        hrd_hold_q <= m_hrd_valid && !m_hrd_ready;
        rd_hold_q  <= m_rd_valid && !m_rd_ready;
        hwr_hold_q <= m_hwr_valid && !m_hwr_ready;
        if (!hrd_hold_q) begin
            hrd_addr_q <= addr_q;
            hrd_len_q  <= hrd_live_len;
        end
        if (!rd_hold_q) begin
            rd_lpn_q  <= 32'(lpn_q);
            rd_txid_q <= txid_q;
            rd_tag_q  <= rd_live_tag;
        end
        if (!hwr_hold_q) begin
            hwr_addr_q <= hwr_live_addr;
            hwr_data_q <= hwr_live_data;
            hwr_last_q <= hwr_live_last;
        end
        if (rst) begin
            hrd_hold_q <= 1'b0;
            rd_hold_q  <= 1'b0;
            hwr_hold_q <= 1'b0;
        end
    end

    // read misses: page table, CPL entries and the drain
    ats_wbuf_rmiss #(
        .PAGE_BYTES (PAGE_BYTES),
        .MISS_Q     (MISS_Q),
        .ID_BASE    (RD_ID_BASE),
        .ID_PROBE   (RD_ID_PROBE),
        .ID_RESV    (RD_ID_RESV),
        .ID_UNRES   (RD_ID_UNRES),
        .SLOG       (FR)
    ) u_rmiss (
        .clk          (clk),
        .rst          (rst),
        .freeze       (dump_q),
        .req_room     (mq_room),
        .req_first    (!had_miss_q),
        .req_push     (mq_push_page),
        .req_addr     (addr_q),
        .req_id       (mq_id),
        .close_push   (mq_push_cpl),
        .close_tag    (tag_q),
        .close_nlb    (nlb_q),
        .close_err    (FR && rd_err_q),
        .idle         (mq_hw_idle),
        .s_rdd_valid  (s_rdd_valid),
        .s_rdd_ready  (mr_rdd_ready),
        .s_rdd_data   (s_rdd_data),
        .s_rdd_last   (s_rdd_last),
        .s_rdd_status (s_rdd_status),
        .s_rdd_tag    (s_rdd_tag),
        .base_exp     ((state_q == ST_DFILL || (FR && state_q == ST_FOV)) && dsrc_q == 2'd1),
        .probe_exp    (TX && state_q == ST_PRB_DATA),
        .resv_exp     (FR && state_q == ST_RSV_DATA),
        .unres_exp    (FR && state_q == ST_UNR_DATA),
        .stray        (mr_stray),
        .busy         (mr_busy),
        .m_hwr_valid  (mr_hwr_valid),
        .m_hwr_ready  (mr_hwr_ready),
        .m_hwr_addr   (mr_hwr_addr),
        .m_hwr_data   (mr_hwr_data),
        .m_hwr_last   (mr_hwr_last),
        .m_done_valid (rd_cpl_valid),
        .m_done_ready (rd_cpl_ready),
        .m_done_tag   (rd_cpl_tag),
        .m_done_status(rd_cpl_status),
        .m_done_result(rd_cpl_result)
    );
`ifndef SYNTHESIS
    // the drain takes its words with its own ready: the FSM's own s_rdd terms (a DIFFWRITE base
    // word, a probe word) are never up while a miss page streams (both wait for mq_hw_idle)
    always_ff @(posedge clk) begin
        if (!rst && mr_busy && s_rdd_valid &&
            ((dstep && dsrc_q == 2'd1) || (TX && state_q == ST_PRB_DATA && s_rdd_tag == RD_ID_PROBE)))
            $error("ats_wbuf: the command FSM takes a read word while a miss page streams");
    end
`endif

    // completions: FLUSH / FUA waiters, the RFLUSH waiter, the completion arbiter
    ats_wbuf_cpl #(
        .NUM_WAITERS (NUM_WAITERS)
    ) u_cpl (
        .clk           (clk),
        .rst           (rst),
        .freeze        (dump_q),
        .no_space      (nosp_q),
        .head_pos      (head_pos_q),
        .tail_pos      (tail_pos_q),
        .issue_cnt     (issue_cnt_q),
        .dur_cnt       (dur_cnt_q),
        .fail_cnt      (fail_cnt_q),
        .urg_none      (urg_cnt_q == 0),
        .wt_push       (wpush_fire),
        .wt_tag        (tag_q),
        .wt_res        (result_q[16:0]),
        .wt_full       (wt_full),
        .flush_pending (flush_pending),
        .rf_arm        (rfarm_fire),
        .rf_tag        (tag_q),
        .rf_idle       (rf_idle),
        .s_main_valid  (state_q == ST_DONE || fin_q == F_DONE),     // never both (fin_busy, ST_PTXW)
        .s_main_ready  (main_taken),
        .s_main_tag    ((fin_q == F_DONE) ? ptx_tag_q : tag_q),
        .s_main_status ((fin_q == F_DONE) ? fin_st_q : status_q),
        .s_main_result ((fin_q == F_DONE) ? fin_res_q : result_q),
        .s_rd_valid    (rd_cpl_valid),
        .s_rd_ready    (rd_cpl_ready),
        .s_rd_tag      (rd_cpl_tag),
        .s_rd_status   (rd_cpl_status),
        .s_rd_result   (rd_cpl_result),
        .m_done_valid  (m_done_valid),
        .m_done_ready  (m_done_ready),
        .m_done_tag    (m_done_tag),
        .m_done_status (m_done_status),
        .m_done_result (m_done_result)
    );
    always_ff @(posedge clk) begin
        state_q   <= state_d;
        addr_q    <= addr_d;
        page_q    <= page_d;
        page_last_q <= (page_q == nlb_q);
        lpn_q     <= lpn_d;
        key_q     <= key_d;
        dmiss_q   <= dmiss_d;
        own_q     <= own_d;
        had_miss_q <= had_miss_d;
        dsrc_q    <= dsrc_d;
        dslot_q   <= dslot_d;
        status_q  <= status_d;
        result_q  <= result_d;
        fill_q    <= fill_d;
        hit_q     <= hit_d;
        hit_slot_q <= hit_slot_d;
        widx_q    <= widx_d;
        rd_err_q  <= rd_err_d;
        if (state_q == ST_RF_RECV) rf_k_q <= 4'd0;
        else if (state_q == ST_RF_CHECK4) rf_k_q <= rf_k_q + 1'b1;
        scan_q    <= (state_q == ST_RF_SCAN) ? scan_q + (SLOT_W + 1)'(!scan_q[SLOT_W]) : '0;
        rd_hit_q     <= hit_q && hit_st != SL_FREE && hit_st != SL_FILL;
        rd_tomb_q    <= sl_trim_q[hit_slot_q];
        hit_st_q     <= hit_st;
        hit_ep_q     <= sl_ep_q[hit_slot_q];
        // the COMMIT-marked page never takes over an older position: it must be the newest FIFO entry
        // nor does any page while a commit is pending: the old version may precede its record
        c_take_q     <= hit_q && hit_st_q == SL_DIRTY && hit_ep_q == epoch_q && !(cmt_q && page_last_q) && !ptx_v_q;
        c_free_any_q <= hit_q && ((hit_st_q == SL_DIRTY && hit_ep_q == epoch_q && !(cmt_q && page_last_q) && !ptx_v_q) ||
                                  hit_st_q == SL_CLEAN);
        c_urg_q      <= sl_urg_q[hit_slot_q];
        c_qp_q       <= sl_qp_q[hit_slot_q];
        if (state_q == ST_IDLE) begin                   // every idle cycle, see ST_IDLE
            lba_q   <= s_disp_lba;
            op_rd_q   <= (s_disp_op == OP_READ);
            op_wr_q   <= (s_disp_op == OP_WRITE);
            op_trim_q <= (s_disp_op == OP_TRIM);
            bad_field_q <= (s_disp_attr == ats_host_pkg::ATTR_RSVD) || s_disp_flags[ats_host_pkg::FLAG_RSVD];
            op_q    <= s_disp_op;
            tag_q   <= s_disp_tag;
            fua_q   <= s_disp_flags[ats_host_pkg::FLAG_FUA];
            txid_q  <= s_disp_txid;
            prio_q  <= s_disp_prio;
            epoch_q <= s_disp_epoch;
            // a record is one slot whatever the descriptor's nlb
            nlb_q   <= (TX && (s_disp_op == OP_TX_COMMIT || s_disp_op == OP_TX_ABORT || s_disp_op == OP_DIFFWRITE)) ? 16'd0 : s_disp_nlb;
            op_rec_q   <= TX && (s_disp_op == OP_TX_COMMIT || s_disp_op == OP_TX_ABORT);
            op_diff_q  <= TX && s_disp_op == OP_DIFFWRITE;
            doff_q     <= s_disp_aux[15:0];
            dlen_q     <= s_disp_aux[31:16];
            cmt_q      <= TX && s_disp_op == OP_WRITE && s_disp_flags[ats_host_pkg::FLAG_COMMIT];
            txid_bad_q <= 7'(s_disp_txid) > 7'(NUM_TX);
            rf_n_q  <= s_disp_nlb[2:0];
        end
        // S-Log: a commit-time conversion runs the DIFFWRITE path on the slot's LPN (a page of the
        // tx without host words: doff = dlen = 0); the command's flags come back at its ST_NEXT
        if (FR && state_q == ST_DEC3) begin
            sv_rec_q <= op_rec_q;
            sv_cmt_q <= cmt_q;
            sv_wr_q  <= op_wr_q;
        end
        if (FR && state_q == ST_CM_DEC && !fu_eng_q && !cm_send) begin
            op_rec_q  <= 1'b0;
            cmt_q     <= 1'b0;
            op_wr_q   <= 1'b0;
            op_diff_q <= 1'b1;
            doff_q    <= 16'd0;
            dlen_q    <= 16'd0;
        end
        if (FR && state_q == ST_NEXT && ccv_q) begin
            op_rec_q  <= sv_rec_q;
            cmt_q     <= sv_cmt_q;
            op_wr_q   <= sv_wr_q;
            op_diff_q <= 1'b0;
        end
        cv_q      <= FR && cv_d;
        ccv_q     <= FR && ccv_d;
        fov_q     <= FR && fov_d;
        cm_slog_q <= FR && cm_slog_d;
        wk_ab_q   <= wk_ab_d;
        wk_cva_q  <= wk_cva_d;
        fnum_q    <= fnum_d;
        wk_n_q    <= wk_n_d;
        racc_q    <= racc_d;
        room_q    <= room_d;
        ur_ret_q  <= ur_ret_d;
        // the FRAG table's lookup of (txid_q, lpn_q), registered (both are fixed from ST_DEC on)
        fr_hit_q  <= FR && fu_lk_hit;
        fr_num_q  <= fu_lk_num;
        fr_ok_q   <= fu_free_v && 32'(fu_lk_txcnt) < SLOG_TXFRAGS;
        fr_txv_q  <= FR ? fu_tv2_vec : '0;
        thr_q     <= (slog_thr > 16'(PAGE_BYTES - 16)) ? 16'(PAGE_BYTES - 16) : slog_thr;
        dsmall_q  <= FR && !fua_q && dlen_q < thr_q;
        for (int i = 0; i < NUM_SLOTS; i++) begin
            match_q[i] <= sl_new_q[i] && sl_lpn_q[i] == lpn_q && !op_rec_q && (!TX || sl_tx_q[i] == key_q);
        end
        if (rf_store) begin
            if (widx_q[0]) rf_hi_q[widx_q[3:1]] <= s_hrd_data;
            else           rf_lo_q[widx_q[3:1]] <= s_hrd_data;
        end
        ck_start_q <= {rf_hi_q[rf_k_q[2:0]][15:0], rf_lo_q[rf_k_q[2:0]]};
        ck_cnt_q   <= rf_hi_q[rf_k_q[2:0]][31:16];
        ck_last_q  <= ck_start_q[LPN_W-1:0] + LPN_W'(ck_cnt_q);      // range end (if in bounds)
        ck_hi_q    <= |(ck_start_q >> LPN_W);
        ck_lo_q    <= ck_start_q[LPN_W-1:0];
        ck_rem_q   <= RW'(NUM_LBAS) - RW'(ck_cnt_q);
        ck_bad_q   <= ck_hi_q || ($signed(RW'(ck_lo_q)) >= ck_rem_q);
        lba_hi_q   <= |(lba_q >> LPN_W);
        // DIFFWRITE range (ST_DEC, used in ST_DEC3): word multiples, 1 .. PAGE_BYTES bytes in the page
        dbad_q     <= (doff_q[1:0] != 2'd0) || (dlen_q[1:0] != 2'd0) || (dlen_q == 16'd0) ||
                      (17'(doff_q) + 17'(dlen_q) > 17'(PAGE_BYTES));
        dlo_q      <= (WI_W + 1)'(doff_q >> 2);
        dhi_q      <= (WI_W + 1)'((17'(doff_q) + 17'(dlen_q)) >> 2);
        lba_lo_q   <= lba_q[LPN_W-1:0];
        lba_rem_q  <= RW'(NUM_LBAS) - RW'(nlb_q);
        lba_bad_q  <= lba_hi_q || ($signed(RW'(lba_lo_q)) >= lba_rem_q);
        if (state_q == ST_RF_CHECK4) rf_end_q[rf_k_q[2:0]] <= ck_last_q;
        sc_v_q    <= (state_q == ST_RF_SCAN) && !scan_q[SLOT_W];
        sc_slot_q <= scan_q[SLOT_W-1:0];
        sc_lpn_q  <= sl_lpn_q[scan_q[SLOT_W-1:0]];
        sc2_v_q   <= sc_v_q;
        sc2_slot_q <= sc_slot_q;
        for (int k = 0; k < MAX_RANGES; k++) begin
            sc_ge_q[k] <= sc_lpn_q >= rf_lo_q[k][LPN_W-1:0];
            sc_le_q[k] <= sc_lpn_q <= rf_end_q[k];
        end
        sc3_v_q   <= sc2_v_q;
        for (int i = 0; i < NUM_SLOTS; i++) begin
            sc3_oh_q[i]     <= sc2_v_q && sc_in && (sc2_slot_q == SLOT_W'(i)) && dirty_vec[i] && !sl_urg_q[i];
            // commit enables, qualified: ST_COMMIT always follows ST_PRECOMMIT2 (unless frozen)
            cm_fill_oh_q[i] <= to_commit && (fill_q == SLOT_W'(i));
            cm_old_oh_q[i]  <= to_commit && hit_q && (hit_slot_q == SLOT_W'(i));
        end
        nlb_big_q   <= |nlb_q[15:3];
        meta_busy_q <= to_precommit || to_precommit2 || to_commit || to_scan || to_txcan;
        ptx_rdirty_q <= sl_st_q[ptx_slot_q] == SL_DIRTY;
        st_act_w_q  <= to_act_w;
        st_commit_q <= to_commit;
        st_scan_q   <= to_scan;
        if (rst) begin
            state_q <= ST_IDLE;
            sc_v_q  <= 1'b0;
            sc2_v_q <= 1'b0;
            sc3_v_q <= 1'b0;
            sc3_oh_q <= '0;
            meta_busy_q <= 1'b0;
            st_act_w_q  <= 1'b0;
            st_commit_q <= 1'b0;
            st_scan_q   <= 1'b0;
            cm_fill_oh_q <= '0;
            cm_old_oh_q  <= '0;
        end
    end
`ifndef SYNTHESIS
    // the registered decodes equal the decodes of state_q (they are built from state_q, not state_d)
    always_ff @(posedge clk) begin
        if (!rst && (meta_busy_q != ((state_q inside {ST_PRECOMMIT, ST_PRECOMMIT2, ST_COMMIT, ST_RF_SCAN}) ||
                                     (fin_q inside {F_CAN1, F_CAN2})) ||
                     st_act_w_q != (state_q == ST_ACT && !op_rd_q) || st_commit_q != (state_q == ST_COMMIT) ||
                     st_scan_q != (state_q == ST_RF_SCAN) ||
                     (cm_fill_oh_q != '0) != (state_q == ST_COMMIT)))
            $error("ats_wbuf: registered state decodes out of step with state_q %0d", state_q);
    end
`endif

    // ---------------------------------------------------------------- writeback engine
    // Five-cycle decision pipeline: A samples the FIFO head and the first urgent dirty slot, B
    // reads their metadata, B2 compares, C decides, D issues. Anything the command FSM rewrites (FIFO, urgent marks) holds
    // the pipeline (meta_busy) and restarts it; completions only touch slots in SL_WB, never the
    // DIRTY slots the pipeline looks at, and allocations only FREE/CLEAN ones.
    typedef enum logic [2:0] {EN_A, EN_B, EN_B2, EN_C, EN_D, EN_REQ, EN_JOB, EN_DATA} eng_state_e;
    eng_state_e         en_q;
    logic [SLOT_W-1:0]  hs_q, uc_q, es_q;
    logic               uc_v_q, es_urg_q, fifo_ne_q, live_q, ucok_q, hs_urg_q;
    logic               hs_cmt_q, cw_hold;        // the head is a commit record / COMMIT-marked page; wait
    logic               wb_go_q, budget_ok_q, issue_fire, pop_fire, issue_urg;
    slot_state_e        hs_st_q, uc_st_q;
    logic [QP_W-1:0]    hs_qp_q;
    logic [15:0]        hs_ep_q, uc_ep_q;
    logic               uc_urg_q;
    logic               d_issue_q, d_pop_q, d_urg_q;
    logic [SLOT_W-1:0]  d_slot_q;
    logic [NUM_SLOTS-1:0] d_oh_q;                 // d_slot_q one-hot
    logic               en_is_d_q;               // en_q == EN_D
    logic               c_issue, c_pop, c_urg;
    logic [SLOT_W-1:0]  c_slot;
    logic [SLOT_W-1:0]  issue_slot;
    // a commit's record (or COMMIT-marked page) at the head waits until the commit window has
    // been open for a cycle and no READ executed its pages in the cycle before (README "Reads
    // during a commit"); not after a power failure (the dump issues it like any page)
    // (S-Log: a record of t with fragments also waits until every earlier request has completed
    // except transactions' data pages, t's or another's (slog_go_q, g_txo), so no earlier write /
    // TRIM / commit / record of a fragment's LPN completes after the backend looked its base up; a
    // tx's data page changes no mapping at its completion: §11.3 "The record on the media
    // interface", §11.4)
    logic               slog_go_q;
    assign cw_hold = (TX && hs_cmt_q && !dump_q && (!cw_ok_q || rd_act_q)) || (FR && hs_slog_q && !slog_go_q);
    always_comb begin
        c_issue = 1'b0;
        c_pop   = 1'b0;
        c_slot  = hs_q;
        c_urg   = hs_urg_q;
        if (fifo_ne_q && (!dump_q || PLP)) begin
            if (!live_q) begin
                c_pop = 1'b1;                             // stale entry
            end else if (wb_go_q && budget_ok_q && (dump_q || !pwr_fail)) begin
                if (ucok_q && !dump_q) begin
                    c_issue = 1'b1;
                    c_slot = uc_q;
                    c_urg  = 1'b1;
                    c_pop  = (uc_q == hs_q);
                end else if (!cw_hold) begin
                    c_issue = 1'b1;
                    c_pop = 1'b1;
                end
            end
        end
    end
    // the commit window opens when the engine sees the commit's record live at the head
    assign cw_set = TX && en_q == EN_C && fifo_ne_q && live_q && hs_cmt_q && !dump_q;
    // PLP: nothing is issued (or popped) in the cycle that samples pwr_fail: a page decided in the
    // cycle before would reach m_wb after the cut without the budget check (README "PLP", "The
    // cut"); the engine restarts from EN_A and the dump decides it again within the budget
    logic fire_ok;
    assign fire_ok    = en_is_d_q && !meta_busy && (!PLP || dump_q || !pwr_fail);
    assign issue_fire = fire_ok && d_issue_q;
    assign pop_fire   = fire_ok && d_pop_q;
    assign issue_slot = d_slot_q;
    assign issue_urg  = d_urg_q;
    assign rdr_req_eng = (en_q == EN_JOB);

    always_ff @(posedge clk) begin
        wb_go_q <= (dump_q && PLP) || (held_cnt_q >= DC_W'(THRESH)) || flush_pending || (TX && ptx_v_q) ||
                   (urg_cnt_q != 0) || (fifo_cnt_q >= (FI_W + 1)'(FD - 1)) || !alloc_v_q || !plp_room_q;
        // nothing is issued in the cycle that samples pwr_fail (fire_ok) nor in the next one (the
        // budget and the pages in flight at the cut are being settled: budget_ok_q is 0)
        budget_ok_q <= dump_q ? (PLP && 16'(cap_used_q) < budget_q) : !pwr_fail;
        fifo_space_q <= fifo_cnt_q < (FI_W + 1)'(FD - 1);   // one cycle of margin for an enqueue
        en_is_d_q <= (en_q == EN_C) && !meta_busy && !rst;
        unique case (en_q)
            EN_A: if (!meta_busy) begin
                hs_q      <= fifo_q[head_pos_q[FI_W-1:0]];
                uc_v_q    <= |(sl_urg_q & dirty_vec);
                uc_q      <= first_one(sl_urg_q & dirty_vec);
                fifo_ne_q <= fifo_cnt_q != 0;
                // a pass only when it can do something: an entry queued and writeback on (an
                // idle engine waits here: it is a fixed point, README "Writeback engine")
                en_q      <= (fifo_cnt_q != 0 && wb_go_q) ? EN_B : EN_A;
            end
            EN_B: begin
                hs_st_q  <= sl_st_q[hs_q];
                hs_qp_q  <= sl_qp_q[hs_q];
                hs_ep_q  <= sl_ep_q[hs_q];
                hs_urg_q <= sl_urg_q[hs_q];
                hs_cmt_q <= TX && (sl_rec_q[hs_q] == RC_CMARK || sl_rec_q[hs_q] == RC_CREC);
                hs_slog_q <= FR && sl_slog_q[hs_q];
                uc_st_q  <= sl_st_q[uc_q];
                uc_ep_q  <= sl_ep_q[uc_q];
                uc_urg_q <= sl_urg_q[uc_q];
                en_q     <= meta_busy ? EN_A : EN_B2;
            end
            EN_B2: begin
                live_q   <= hs_st_q == SL_DIRTY && hs_qp_q == head_pos_q[QP_W-1:0];
                ucok_q   <= uc_v_q && uc_st_q == SL_DIRTY && uc_urg_q && uc_ep_q == hs_ep_q;
                en_q     <= meta_busy ? EN_A : EN_C;
            end
            EN_C: begin
                d_issue_q <= c_issue;
                d_pop_q   <= c_pop;
                d_slot_q  <= c_slot;
                for (int i = 0; i < NUM_SLOTS; i++) d_oh_q[i] <= c_issue && (c_slot == SLOT_W'(i));
                d_urg_q   <= c_urg;
                en_q      <= meta_busy ? EN_A : EN_D;
            end
            EN_D: begin
                if (issue_fire) begin
                    es_q     <= issue_slot;
                    es_urg_q <= issue_urg;
                    en_q     <= EN_REQ;
                end else begin
                    en_q     <= EN_A;
                end
            end
            // (an S-Log record: its fragments follow on m_wbd from the record streamer, se_q)
            EN_REQ: if (m_wb_ready) en_q <= sl_trim_q[es_q] ? ((FR && sl_slog_q[es_q]) ? EN_DATA : EN_A) : EN_JOB;
            EN_JOB: if (rdr_grant_eng) en_q <= EN_DATA;
            EN_DATA: if (!rdr_busy_q && (!FR || se_q == SE_IDLE)) en_q <= EN_A;
            default: en_q <= EN_A;
        endcase
        if (rst) begin
            en_q    <= EN_A;
            wb_go_q <= 1'b0;
            fifo_space_q <= 1'b0;
        end
    end

    assign m_wb_valid = (en_q == EN_REQ);
    // work the ports do not show (the core's simulation clock gate, README "Simulation cost")
`ifdef SYNTHESIS
    assign busy       = 1'b0;     // simulation only: no logic in a netlist
`else
    assign busy       = state_q != ST_IDLE || en_q != EN_A || (fifo_cnt_q != 0 && wb_go_q) || rdr_busy_q ||
                        !mq_hw_idle || dump_q || ptx_v_q || fin_q != F_IDLE || cw_ok_q || rd_act_q ||
                        (FR && (se_q != SE_IDLE || fu_busy));
`endif
    assign m_wb_op    = sl_trim_q[es_q];
    assign m_wb_rec   = TX ? sl_rec_q[es_q] : RC_NONE;
    assign m_wb_slot  = 8'(es_q);
    assign m_wb_lpn   = 32'(sl_lpn_q[es_q]);
    assign m_wb_txid  = sl_tx_q[es_q];
    assign m_wb_epoch = sl_ep_q[es_q];
    assign m_wb_kind  = 2'd0;
    assign m_wb_fua   = es_urg_q;
    assign m_wb_tag   = 8'(es_q);
    assign m_wb_slog  = FR && sl_slog_q[es_q];
    assign m_wbd_valid = (FR && se_q != SE_IDLE) ? se_wbd_v : (rdf_cnt_q != 0) && !rdr_dest_q;
    assign m_wbd_data  = (FR && se_q != SE_IDLE) ? se_wbd_data : rdf_q[rdf_rd_q];
    assign m_wbd_last  = (FR && se_q != SE_IDLE) ? se_wbd_last : (rdr_out_q == WI_W'(PWORDS - 1));
    // after a power failure a host-bound page is dropped (the command FSM is frozen)
    assign rdr_out_ready = rdr_dest_q ? ((hwr_from_rdr && m_hwr_ready) || dump_q || (dstep && dsrc_q == 2'd0) ||
                                         (fov_step && dsrc_q == 2'd0))
                                      : m_wbd_ready;

    // completions from the media: in issue order (out_q), but an S-Log record's (FR) is matched by
    // its tag, so that later requests may complete before it (README "S-Log": "A record's
    // completion, by its tag"). Up to SLOG_RIF records are in flight (slog_go_q waits while that
    // many are; README "Records in flight"), in a FIFO in issue order (they complete in that order):
    // rif_v_q, each one's slot rif_slot_q, which no other request in flight has (its pending
    // commit's record slot), head rif_hd_q, tail rif_tl_q, count rif_n_q
    localparam int RF_W = (SLOG_RIF > 1) ? $clog2(SLOG_RIF) : 1;
    logic               cpl_fire, cpl_ok, cpl_fail, txfin_fire, tx_commit_ok, txcan_fire, rec_drop;
    logic [SLOT_W-1:0]  cpl_slot;
    logic               rec_hit, cpl_pop, issue_rec;
    logic [SLOG_RIF-1:0] rif_v_q;                  // a record issued, its completion not taken
    logic [SLOT_W-1:0]  rif_slot_q [SLOG_RIF];
    logic [SLOT_W:0]    rif_old_q  [SLOG_RIF];     // out_q entries issued before it, not yet completed
    logic [RF_W-1:0]    rif_hd_q, rif_tl_q;
    logic [RF_W:0]      rif_n_q;
    logic               rif_pass_bad;              // (g_txo) a completion passing one that is not a tx's data page
    assign s_wbc_ready = 1'b1;
    assign issue_rec = FR && issue_fire && sl_slog_q[issue_slot];
    assign rec_hit  = FR && s_wbc_valid && rif_n_q != 0 && (s_wbc_tag == 8'(rif_slot_q[rif_hd_q]));
    assign cpl_pop  = s_wbc_valid && !rec_hit && !out_empty;
    assign cpl_fire = rec_hit || cpl_pop;
    assign cpl_slot = rec_hit ? rif_slot_q[rif_hd_q] : out_q[out_rd_q[SLOT_W-1:0]];
    assign cpl_ok   = (s_wbc_status == STS_OK);
    // a transaction status (BAD_TXID, TX_FULL, INDEX_FULL, TX_EMPTY) is the tx's failure, not a
    // failed writeback: it does not fail a FLUSH / FUA / RFLUSH
    assign cpl_fail = !cpl_ok && !(TX && (s_wbc_status == STS_BAD_TXID || s_wbc_status == STS_TX_FULL ||
                                          s_wbc_status == STS_INDEX_FULL || s_wbc_status == STS_TX_EMPTY));
    // the pending commit (TX = 1): set in ST_FIN, ended by the finisher. txdone_q: the completion
    // of its record (or COMMIT-marked page), ptx_slot_q (a slot no other request in flight has)
    // the head entry's fields (PTXQ = 1: the one entry, index 0)
    assign ptx_v_q     = |pq_v_q;
    assign ptx_slot_q  = pq_slot_q[pq_hd_q];
    assign ptx_txid_q  = pq_txid_q[pq_hd_q];
    assign ptx_tag_q   = pq_tag_q[pq_hd_q];
    assign ptx_rec_q   = pq_rec_q[pq_hd_q];
    assign ptx_abort_q = pq_abort_q[pq_hd_q];
    assign ptx_res_q   = pq_res_q[pq_hd_q];
    assign ptx_w0_q    = pq_w0_q[pq_hd_q];
    assign txdone_q    = pq_done_q[pq_hd_q];
    assign txst_q      = pq_st_q[pq_hd_q];
    assign txcnt_q     = pq_cnt_q[pq_hd_q];
    assign pq_full     = &pq_v_q;
    assign ptx_pop     = fin_q == F_DONE && main_taken;
    always_comb begin
        pq_same = 1'b0;                                   // txid_q has a pending commit / abort
        pq_odue = 1'b0;                                   // an entry behind the head has its record due
        for (int k = 0; k < PTXQ; k++) begin
            if (pq_v_q[k] && pq_txid_q[k] == txid_q) pq_same = 1'b1;
            if (pq_v_q[k] && pq_due_q[k] && PQ_W'(k) != pq_hd_q) pq_odue = 1'b1;
        end
    end
    always_ff @(posedge clk) begin
        if (ptx_set) begin
            pq_v_q[pq_tl_q]     <= 1'b1;
            pq_slot_q[pq_tl_q]  <= fill_q;
            pq_txid_q[pq_tl_q]  <= txid_q;
            pq_tag_q[pq_tl_q]   <= tag_q;
            pq_rec_q[pq_tl_q]   <= op_rec_q;
            pq_abort_q[pq_tl_q] <= op_q == OP_TX_ABORT;
            pq_res_q[pq_tl_q]   <= result_d;
            pq_tl_q             <= (pq_tl_q == PQ_W'(PTXQ - 1)) ? '0 : pq_tl_q + 1'b1;
        end
        if (ptx_pop) begin
            pq_v_q[pq_hd_q]     <= 1'b0;
            pq_hd_q             <= (pq_hd_q == PQ_W'(PTXQ - 1)) ? '0 : pq_hd_q + 1'b1;
        end
        // an entry's txid-0 flag, record completion (records complete in FIFO order, each matched
        // by its slot: no other request in flight has it) and commit window flag (cw_set names the
        // record the engine found live at the writeback FIFO's head, hs_q)
        for (int k = 0; k < PTXQ; k++) begin
            if (ptx_set && pq_tl_q == PQ_W'(k)) begin
                pq_w0_q[k]   <= 1'b0;
                pq_done_q[k] <= 1'b0;
                pq_due_q[k]  <= cw_set && hs_q == fill_q;
            end else begin
                if (pq_v_q[k] && commit_fire && txid_q == 6'd0) pq_w0_q[k] <= 1'b1;
                if (pq_v_q[k] && cpl_fire && cpl_slot == pq_slot_q[k] && !pq_done_q[k]) begin
                    pq_done_q[k] <= 1'b1;
                    pq_st_q[k]   <= s_wbc_status;
                    pq_cnt_q[k]  <= s_wbc_ppn;
                end
                if (pq_v_q[k] && cw_set && hs_q == pq_slot_q[k]) pq_due_q[k] <= 1'b1;
            end
        end
        if (ptx_pop) ptx_end_q <= 1'b1;
        else if (state_q == ST_DEC) ptx_end_q <= 1'b0;
        // finisher: F_W2, F_W3 (two cycles after the record's own slot update), F_FIN (the slot
        // update of the tx's end), F_DONE (its completion); no space while the record is not issued:
        // F_CAN1, F_CAN2 (engine held), the record dropped / the COMMIT mark cleared, NO_SPACE
        unique case (fin_q)
            F_IDLE: if (fin_go) fin_q <= txdone_q ? F_W2 : F_CAN1;
            F_W2:   fin_q <= F_W3;
            F_W3:   fin_q <= F_FIN;
            F_FIN: begin
                // TX_COMMIT: the entries the commit applied (the record's completion carries the
                // remap engine's count in its ppn field); TX_ABORT: 0; a COMMIT write: its pages
                // (an abort of a tx that held only FRAG slots: nothing of it was written back, so the
                // backend's ABORT finds no entries and answers TX_EMPTY; the abort is OK, section 11.3)
                fin_st_q  <= (FR && ptx_abort_q && txst_q == STS_TX_EMPTY) ? STS_OK : txst_q;
                fin_res_q <= !ptx_rec_q ? ptx_res_q : (!ptx_abort_q && txst_q == STS_OK) ? 32'(txcnt_q) : 32'd0;
                fin_q     <= F_DONE;
            end
            F_CAN1: fin_q <= F_CAN2;
            F_CAN2: if (ptx_rdirty_q) begin
                fin_st_q  <= STS_NO_SPACE;
                fin_res_q <= ptx_rec_q ? 32'd0 : ptx_res_q;   // (a COMMIT write: its pages, in the buffer)
                fin_q     <= F_DONE;
            end else begin
                fin_q     <= F_IDLE;                          // issued meanwhile: it waits for its completion
            end
            F_DONE: if (main_taken) fin_q <= F_IDLE;
            default: fin_q <= F_IDLE;
        endcase
        if (dump_q) fin_q <= F_IDLE;                          // frozen: a pending commit never ends
        // reads during a commit: the window ends with the commit (its completion taken) unless a
        // later pending commit's record is due too (PTXQ > 1)
        if (cw_set) cw_q <= 1'b1;
        else if (ptx_pop && !pq_odue) cw_q <= 1'b0;
        cw_ok_q  <= cw_q && !(ptx_pop && !pq_odue);
        // a READ past its decode (LK1 .. FIN): its pages read the buffer's slots or go to the media
        // (no `inside` here: Yosys's parser does not take it in synthesised code)
        rd_act_q <= TX && op_rd_q && !(state_q == ST_IDLE || state_q == ST_DEC || state_q == ST_DEC2 ||
                                       state_q == ST_DEC3 || state_q == ST_PTXW || state_q == ST_DONE ||
                                       state_q == ST_FROZEN);
        if (rst || !TX) begin
            pq_v_q   <= '0;
            pq_done_q <= '0;
            pq_due_q <= '0;
            pq_hd_q  <= '0;
            pq_tl_q  <= '0;
            ptx_end_q <= 1'b0;
            for (int k = 0; k < PTXQ; k++) pq_slot_q[k] <= '0;
            fin_q    <= F_IDLE;
            cw_q     <= 1'b0;
            cw_ok_q  <= 1'b0;
            rd_act_q <= 1'b0;
        end
    end
`ifndef SYNTHESIS
    // reads during a commit: the window belongs to the pending commit, and a commit record or
    // COMMIT-marked page is issued (before a power failure) only while no READ executes its pages
    always_ff @(posedge clk) begin
        if (!rst && TX && cw_q && !ptx_v_q)
            $error("ats_wbuf: commit window open without a pending commit");
        if (!rst && TX && !cw_q && |(pq_v_q & pq_due_q))
            $error("ats_wbuf: a pending commit's record is due with the commit window closed");
        if (!rst && TX && issue_fire && !dump_q && (sl_rec_q[issue_slot] == RC_CMARK || sl_rec_q[issue_slot] == RC_CREC) &&
            (!cw_q || (op_rd_q && !(state_q inside {ST_IDLE, ST_DEC, ST_DEC2, ST_DEC3, ST_PTXW, ST_DONE, ST_FROZEN}))))
            $error("ats_wbuf: a commit record issued while a READ executes or without the commit window");
        // SLOG_RIF S-Log records in flight at most (the next one waits in slog_go_q for a completion)
        if (!rst && FR && issue_rec && 32'(rif_n_q) == SLOG_RIF && !rec_hit)
            $error("ats_wbuf: an S-Log record issued while SLOG_RIF are in flight");
        if (!rst && FR && 32'(rif_n_q) != 32'($countones(rif_v_q)))
            $error("ats_wbuf: the in-flight records' count differs from their valid bits");
    end
`endif
    assign txfin_fire   = TX && fin_q == F_FIN;
    assign txcan_fire   = TX && fin_q == F_CAN2 && ptx_rdirty_q;
    assign rec_drop     = txcan_fire && ptx_rec_q;      // a DIRTY record freed: one dirty page less
    assign tx_commit_ok = txst_q == STS_OK && !ptx_abort_q;
    // the slot update of a completion is applied two cycles later: the completed slot and status are
    // registered (cpl_v_q, cpl_slot_q, cpl_ok1_q), then decoded into registered one-hot enables
    // (the slot stays SL_WB two cycles longer; nothing else touches an SL_WB slot's state)
    logic               cpl_v_q, cpl_ok1_q;
    logic [SLOT_W-1:0]  cpl_slot_q;
    logic [NUM_SLOTS-1:0] cpl_oh_q;
    logic               cpl_ok_q;
    always_ff @(posedge clk) begin
        cpl_v_q    <= cpl_fire;
        cpl_slot_q <= cpl_slot;
        cpl_ok1_q  <= cpl_ok;
        for (int i = 0; i < NUM_SLOTS; i++) cpl_oh_q[i] <= cpl_v_q && (cpl_slot_q == SLOT_W'(i));
        cpl_ok_q <= cpl_ok1_q;
        if (rst) begin
            cpl_v_q  <= 1'b0;
            cpl_oh_q <= '0;
        end
    end

    // ---------------------------------------------------------------- reader
    always_ff @(posedge clk) begin
        rdr_pipe_q <= {rdr_pipe_q[0], rdr_issue};
        if (rdr_grant_eng || rdr_grant_main) begin
            rdr_busy_q <= 1'b1;
            rdr_dest_q <= rdr_grant_main;
            rdr_slot_q <= rdr_grant_main ? ((state_q == ST_DJOB || (FR && state_q == ST_FOV_JOB)) ? dslot_q : hit_slot_q) : es_q;
            rdr_iss_q  <= '0;
            rdr_out_q  <= '0;
        end
        if (rdr_issue) rdr_iss_q <= rdr_iss_q + 1'b1;
        if (rdr_pipe_q[1]) begin
            rdf_q[rdf_wr_q] <= mem_rd;
            rdf_wr_q <= rdf_wr_q + 1'b1;
        end
        if (rdf_pop) begin
            rdf_rd_q  <= rdf_rd_q + 1'b1;
            rdr_out_q <= rdr_out_q + 1'b1;
            if (rdr_out_q == WI_W'(PWORDS - 1)) rdr_busy_q <= 1'b0;
        end
        rdf_cnt_q <= rdf_cnt_q + {2'b0, rdr_pipe_q[1]} - {2'b0, rdf_pop};
        if (rst) begin
            rdr_busy_q <= 1'b0;
            rdr_pipe_q <= '0;
            rdf_cnt_q  <= '0;
            rdf_rd_q   <= '0;
            rdf_wr_q   <= '0;
        end
    end

    // ---------------------------------------------------------------- metadata, FIFO, counters
    // Per-slot updates from registered one-hot enables: each enable equals the original event decode
    // (alloc_v_q (registered allocation enable), commit_fire, issue_fire, mark_fire: same cycle; completion: one cycle later).
    // the slot taken in ST_ACT (the command FSM's fill_q from then on), marked FILL one cycle later
    // from this registered one-hot
    always_ff @(posedge clk) begin
        // (a DIFFWRITE whose first lookup missed allocates in its second ACT, not this one)
        for (int i = 0; i < NUM_SLOTS; i++)
            alloc_take_q[i] <= st_act_w_q && alloc_ok && alloc_oh_q[i] && !diff_p1miss && !fr_leave;
        if (rst) alloc_take_q <= '0;
    end

    for (genvar i = 0; i < NUM_SLOTS; i++) begin : g_slot
        logic alloc_en, cm_old_en, cm_fill_en, iss_en;
        assign alloc_en   = alloc_take_q[i];
        assign cm_old_en  = cm_old_oh_q[i];
        assign cm_fill_en = cm_fill_oh_q[i];
        assign iss_en     = fire_ok && d_oh_q[i];      // = issue_fire && d_slot_q == i
        always_ff @(posedge clk) begin
            if (alloc_en) begin
                sl_st_q[i]  <= SL_FILL;
                sl_new_q[i] <= 1'b0;
                sl_urg_q[i] <= 1'b0;
            end
            if (cm_old_en) begin
                if (c_free_any_q) begin
                    sl_st_q[i]  <= SL_FREE;
                    sl_urg_q[i] <= 1'b0;
                end
                sl_new_q[i] <= 1'b0;
            end
            if (cm_fill_en) begin
                sl_st_q[i]   <= SL_DIRTY;
                sl_lpn_q[i]  <= lpn_q;
                sl_ep_q[i]   <= epoch_q;
                sl_tx_q[i]   <= txid_q;
                sl_pr_q[i]   <= prio_q;
                sl_new_q[i]  <= !op_rec_q;
                sl_trim_q[i] <= op_trim_q || op_rec_q;
                sl_rec_q[i]  <= op_rec_q ? ((op_q == OP_TX_ABORT) ? RC_AREC : RC_CREC)
                              : (cmt_q && page_last_q) ? RC_CMARK : RC_NONE;
                sl_slog_q[i] <= FR && op_rec_q && cm_slog_q;
                sl_urg_q[i]  <= c_take_q ? c_urg_q : 1'b0;
                sl_qp_q[i]   <= c_take_q ? c_qp_q : tail_pos_q[QP_W-1:0];
            end
            if (iss_en) begin
                sl_st_q[i]  <= SL_WB;
                sl_urg_q[i] <= 1'b0;
            end
            if (mark_vec[i]) sl_urg_q[i] <= 1'b1;
            if (cpl_oh_q[i]) begin
                sl_st_q[i] <= (cpl_ok_q && sl_new_q[i]) ? SL_CLEAN : SL_FREE;
                if (!cpl_ok_q) sl_new_q[i] <= 1'b0;
            end
            // end of a transaction (F_FIN, after the record's own completion update): on a commit
            // the tx's slots join the committed domain (txid 0) and the committed domain's clean
            // slots are dropped (they may hold a version the commit replaced); on an abort or a
            // failed commit the tx's slots are dropped. The tx's slots and every slot written before
            // the record are FREE or CLEAN here. If a txid-0 page entered the buffer while the
            // commit was pending (ptx_w0_q), it may be a newer version of one of the tx's LBAs: the
            // tx's slots are dropped instead (their data is durable; a read finds the media's)
            if (TX && state_q == ST_DREL && fill_q == SLOT_W'(i)) sl_st_q[i] <= SL_FREE;
            // no space (F_CAN2, engine held): a record not issued is dropped, a COMMIT mark cleared
            if (txcan_fire && ptx_slot_q == SLOT_W'(i)) begin
                if (ptx_rec_q) sl_st_q[i] <= SL_FREE;
                else sl_rec_q[i] <= RC_NONE;
            end
            if (txfin_fire) begin
                if (sl_tx_q[i] == ptx_txid_q && sl_st_q[i] != SL_FREE) begin
                    if (tx_commit_ok && sl_new_q[i] && !ptx_w0_q) begin
                        sl_tx_q[i] <= 6'd0;
                    end else begin
                        sl_st_q[i]  <= SL_FREE;
                        sl_new_q[i] <= 1'b0;
                    end
                end else if (tx_commit_ok && sl_tx_q[i] == 6'd0 && sl_st_q[i] == SL_CLEAN) begin
                    sl_st_q[i]  <= SL_FREE;
                    sl_new_q[i] <= 1'b0;
                end
            end
            if (rst) begin
                sl_st_q[i]  <= SL_FREE;
                sl_new_q[i] <= 1'b0;
                sl_urg_q[i] <= 1'b0;
                sl_slog_q[i] <= 1'b0;
            end
        end
    end

    // ---------------------------------------------------------------- S-Log units (FR)
    // FRAG table operations: the command FSM's, while the engine's record streamer does not hold
    // the table (fu_eng_q); the streamer takes it only when the FSM asks for nothing (fsm_fu_req)
    assign fu_free_fsm = FR && !fu_busy && !fu_eng_q;
    assign fsm_fu_req  = FR && (state_q == ST_FCR || state_q == ST_FRS || state_q == ST_FS_GO ||
                                state_q == ST_CM_SC || state_q == ST_CM_W || state_q == ST_CM_DEC ||
                                state_q == ST_AB_LPN);
    assign fu_cr_en    = state_q == ST_FCR && fu_free_fsm;
    assign fu_rs_en    = state_q == ST_FRS && fu_free_fsm;
    assign fs_start    = state_q == ST_FS_GO && fu_free_fsm && mq_hw_idle;
    assign fu_sc_en    = fs_start || (state_q == ST_CM_SC && fu_free_fsm) || se_sc_en;
    assign fu_sc_num   = fu_eng_q ? se_k : fnum_q;
    assign fu_sc_mode  = fu_eng_q ? 2'd1 : (state_q == ST_FS_GO) ? 2'd2 : 2'd0;
    assign fu_st_num   = fu_eng_q ? se_cur_q : fnum_q;
    // a FRAG slot ends: UNRESERVE answered (a WRITE's, an abort's, a conversion's after its good fill)
    assign fu_fr_en    = FR && state_q == ST_UNR_DATA && s_rdd_valid && s_rdd_tag == RD_ID_UNRES && s_rdd_last;
    // the commit's choice (§11.3 "Which FRAG slots become fragments"): fewer set bytes than thr,
    // runs within the room and within the record's SLOG_TXFRAGS
    assign cm_send     = !wk_cva_q && (32'(fu_sc_words) << 2) < 32'(thr_q) && 32'(fu_sc_runs) <= 32'(fu_st_room) &&
                         32'(racc_q) + 32'(fu_sc_runs) <= SLOG_TXFRAGS;
    // the lowest set bit of v at or above n: {found, its number} (the walk's and the streamer's search)
    function automatic logic [NF_W:0] low_from(input logic [NFS-1:0] v, input logic [NF_W:0] n);
        low_from = '0;
        for (int i = NFS - 1; i >= 0; i--) if (v[i] && (NF_W + 1)'(i) >= n) low_from = {1'b1, NF_W'(i)};
    endfunction
    assign {wk_found, wk_k} = low_from(fr_txv_q, wk_n_q);   // the walk: the txid's lowest slot at or above wk_n_q

    if (FR) begin : g_frag
        ats_wbuf_frag #(.FRAG_SLOTS(FRAG_SLOTS), .PWORDS(PWORDS), .LPN_W(LPN_W)) u_frag (
            .clk        (clk),
            .rst        (rst),
            .lk_txid    (txid_q),
            .lk_lpn     (lpn_q),
            .lk_hit     (fu_lk_hit),
            .lk_num     (fu_lk_num),
            .lk_txcnt   (fu_lk_txcnt),
            .free_v     (fu_free_v),
            .free_num   (fu_free_num),
            .tv_txid    (se_tx_q),
            .tv_vec     (fu_tv_vec),
            .tv2_txid   (txid_q),
            .tv2_vec    (fu_tv2_vec),
            .st_num     (fu_st_num),
            .st_v       (fu_st_v),
            .st_txid    (fu_st_txid),
            .st_lpn     (fu_st_lpn),
            .st_room    (fu_st_room),
            .busy       (fu_busy),
            .cr_en      (fu_cr_en),
            .cr_txid    (txid_q),
            .cr_lpn     (lpn_q),
            .cr_room    (room_q),
            .rs_en      (fu_rs_en),
            .rs_num     (fnum_q),
            .rs_lo      (dlo_q),
            .rs_hi      (dhi_q),
            .sc_en      (fu_sc_en),
            .sc_num     (fu_sc_num),
            .sc_mode    (fu_sc_mode),
            .fr_en      (fu_fr_en),
            .fr_num     (fnum_q),
            .frt_en     (txfin_fire),
            .frt_txid   (ptx_txid_q),
            .sc_words   (fu_sc_words),
            .sc_runs    (fu_sc_runs),
            .m_run_valid(fu_run_valid),
            .m_run_ready(fu_run_ready),
            .m_run_first(fu_run_first),
            .m_run_words(fu_run_words),
            .m_run_last (fu_run_last),
            .m_bit_valid(fu_bit_valid),
            .m_bit_ready(fu_bit_ready),
            .m_bit      (fu_bit),
            .m_bit_last (fu_bit_last)
        );
        // the FRAG pages: FRAG_SLOTS pages of their own (§11.3), written by ST_FWR, read by the
        // FSM's stream or the record streamer; above 16 Ki words (32 or 64 x 4 KiB) ats_wbuf_mem
        // builds banks (its header), the read latency still 2
        ats_wbuf_mem #(.DEPTH(FRAG_SLOTS * PWORDS)) u_fmem (
            .clk    (clk),
            .wr_en  (fm_we),
            .wr_addr(fm_wa),
            .wr_data(s_hrd_data),
            .rd_addr(fm_ra),
            .rd_data(fm_rd)
        );
    end else begin : g_nofrag
        assign fu_lk_hit = 1'b0;  assign fu_lk_num = '0;  assign fu_lk_txcnt = '0;
        assign fu_free_v = 1'b0;  assign fu_free_num = '0;
        assign fu_tv_vec = '0;    assign fu_tv2_vec = '0;
        assign fu_st_lpn = '0;    assign fu_st_room = '0;  assign fu_busy = 1'b0;
        assign fu_sc_words = '0;  assign fu_sc_runs = '0;
        assign fu_run_valid = 1'b0; assign fu_run_first = '0; assign fu_run_words = '0; assign fu_run_last = 1'b0;
        assign fu_bit_valid = 1'b0; assign fu_bit = 1'b0;
        assign fm_rd = '0;
        assign fu_st_v = 1'b0; assign fu_st_txid = '0; assign fu_bit_last = 1'b0;
        // the S-Log's controls have no unit to drive here
        logic unused_nofrag;
        assign unused_nofrag = ^{fu_rs_en, fu_sc_en, fu_fr_en, fu_st_num, fu_sc_num, fu_sc_mode, fu_bit_ready,
                                 fm_we, fm_wa, fm_ra, se_tx_q};
    end
    assign fm_we = FR && state_q == ST_FWR && s_hrd_valid;
    assign fm_wa = {fnum_q, widx_q[WI_W-1:0]};
    assign fm_ra = fu_eng_q ? {se_cur_q, WI_W'(fu_run_first + WI_W'(se_ri_q))} : {fnum_q, fs_idx_q};

    // the FSM's FRAG stream: each mask bit taken reads its word (latency 2) into a 4-deep FIFO
    assign fs_take      = FR && fu_bit_valid && !fu_eng_q && (fs_cnt_q + {2'b0, fs_pipe_q[0]} + {2'b0, fs_pipe_q[1]} < 3'd4);
    assign fu_bit_ready = fs_take;
    assign fs_v    = fs_cnt_q != 0;
    assign fs_bit  = fs_b_q[fs_rd_q];
    assign fs_word = fs_w_q[fs_rd_q];
    assign fs_pop  = (dstep && cv_q) || fov_step;
    always_ff @(posedge clk) begin
        fs_pipe_q <= {fs_pipe_q[0], fs_take};
        fs_pbit_q <= {fs_pbit_q[0], fu_bit};
        if (fs_take) fs_idx_q <= fs_idx_q + 1'b1;
        if (fs_pipe_q[1]) begin
            fs_w_q[fs_wr_q] <= fm_rd;
            fs_b_q[fs_wr_q] <= fs_pbit_q[1];
            fs_wr_q <= fs_wr_q + 1'b1;
        end
        if (fs_pop) fs_rd_q <= fs_rd_q + 1'b1;
        fs_cnt_q <= fs_cnt_q + {2'b0, fs_pipe_q[1]} - {2'b0, fs_pop};
        if (fs_start) begin                           // (the previous stream was consumed whole)
            fs_idx_q <= '0;
        end
        if (rst || !FR) begin
            fs_pipe_q <= '0;
            fs_cnt_q  <= '0;
            fs_rd_q   <= '0;
            fs_wr_q   <= '0;
            fs_idx_q  <= '0;
        end
    end

    // the record streamer (engine, an S-Log record accepted on m_wb): pass 0 sends two descriptor
    // words per run ({lpn}, {off | len << 16}) of the txid's FRAG slots in number order, pass 1
    // the runs' words in the same order; `last` on each pass's final word
    always_comb begin
        {se_found, se_k} = low_from(fu_tv_vec, se_n_q);
        se_none_above = 1'b1;
        for (int n = 0; n < NFS; n++) if (fu_tv_vec[n] && NF_W'(n) > se_k) se_none_above = 1'b0;
    end
    assign se_sc_en    = FR && se_q == SE_NEXT && !fu_busy && se_found;
    assign ew_issue    = FR && se_q == SE_RUN && se_pass_q && fu_run_valid &&
                         (ew_cnt_q + {2'b0, ew_pipe_q[0]} + {2'b0, ew_pipe_q[1]} < 3'd4);
    assign ew_last_in  = se_lastslot_q && fu_run_last && se_ri_q == fu_run_words - 1'b1;
    assign ew_pop      = se_pass_q && ew_cnt_q != 0 && m_wbd_ready;
    assign se_take     = !se_pass_q && se_ph_q && fu_run_valid && m_wbd_ready;   // a run's descriptor sent
    assign fu_run_ready = FR && se_q == SE_RUN && (se_pass_q ? (ew_issue && se_ri_q == fu_run_words - 1'b1) : se_take);
    assign se_wbd_v    = se_pass_q ? ew_cnt_q != 0 : (se_q == SE_RUN && fu_run_valid);
    assign se_wbd_data = se_pass_q ? ew_w_q[ew_rd_q] :
                         se_ph_q ? {16'(32'(fu_run_words) << 2), 16'(32'(fu_run_first) << 2)} : 32'(fu_st_lpn);
    assign se_wbd_last = se_pass_q ? ew_l_q[ew_rd_q] : (se_ph_q && fu_run_last && se_lastslot_q);
    always_ff @(posedge clk) begin
        ew_pipe_q  <= {ew_pipe_q[0], ew_issue};
        ew_plast_q <= {ew_plast_q[0], ew_last_in};
        if (ew_pipe_q[1]) begin
            ew_w_q[ew_wr_q] <= fm_rd;
            ew_l_q[ew_wr_q] <= ew_plast_q[1];
            ew_wr_q <= ew_wr_q + 1'b1;
        end
        if (ew_pop) ew_rd_q <= ew_rd_q + 1'b1;
        ew_cnt_q <= ew_cnt_q + {2'b0, ew_pipe_q[1]} - {2'b0, ew_pop};
        if (ew_issue) se_ri_q <= (se_ri_q == fu_run_words - 1'b1) ? '0 : se_ri_q + 1'b1;
        if (!se_pass_q && se_q == SE_RUN && fu_run_valid && m_wbd_ready) se_ph_q <= !se_ph_q;
        unique case (se_q)
            SE_IDLE: if (en_q == EN_REQ && m_wb_ready && sl_slog_q[es_q]) begin
                se_tx_q <= sl_tx_q[es_q];
                se_q    <= SE_LOCK;
            end
            SE_LOCK: if (!fu_busy && !fsm_fu_req) begin
                fu_eng_q  <= 1'b1;
                se_n_q    <= '0;
                se_pass_q <= 1'b0;
                se_ph_q   <= 1'b0;
                se_ri_q   <= '0;
                se_q      <= SE_NEXT;
            end
            SE_NEXT: if (!fu_busy) begin
                if (se_found) begin
                    se_cur_q      <= se_k;
                    se_lastslot_q <= se_none_above;
                    se_n_q        <= (NF_W + 1)'(se_k) + 1'b1;
                    se_q          <= SE_RUN;
                end else if (!se_pass_q) begin
                    se_pass_q <= 1'b1;
                    se_n_q    <= '0;
                end else begin
                    se_q <= SE_DRAIN;
                end
            end
            SE_RUN: if (fu_run_ready && fu_run_last) se_q <= SE_NEXT;
            SE_DRAIN: if (ew_cnt_q == 0 && ew_pipe_q == '0) begin
                fu_eng_q <= 1'b0;
                se_q     <= SE_IDLE;
            end
            default: se_q <= SE_IDLE;
        endcase
        // an UNRESERVE answered with another status than OK: counted, otherwise ignored
        if (FR && state_q == ST_UNR_DATA && s_rdd_valid && s_rdd_tag == RD_ID_UNRES && s_rdd_last &&
            s_rdd_status != STS_OK) c_slog_err_q <= c_slog_err_q + 1'b1;
        if (rst || !FR) begin
            se_q      <= SE_IDLE;
            fu_eng_q  <= 1'b0;
            ew_pipe_q <= '0;
            ew_cnt_q  <= '0;
            ew_rd_q   <= '0;
            ew_wr_q   <= '0;
            se_ri_q   <= '0;
            c_slog_err_q <= '0;
        end
    end

    logic [31:0] c_host_q, c_coal_q, c_wbp_q, c_wbu_q, c_hit_q, c_miss_q, c_perr_q;
    logic [47:0] c_bytes_q;
    logic        wb_accept;
    assign wb_accept = m_wb_valid && m_wb_ready;

    // per-txid flags (TX = 1): entries (a page committed into the buffer) and pages on the media (a
    // page issued); cleared when the tx ends (F_FIN: every page of it has completed by then, and no
    // command of the same txid runs while its commit is pending, so no issue of it coincides). Read through registers (txid_q is fixed per command).
    // (an issue is registered first, txm_set_q / txm_id_q: the set lands a cycle after the m_wb
    // handshake, long before the page can complete and its slot be evicted)
    logic               txm_set_q;
    logic [5:0]         txm_id_q;
    always_ff @(posedge clk) begin
        txm_set_q <= TX && wb_accept && m_wb_txid != 6'd0;
        txm_id_q  <= m_wb_txid;
        if (TX && commit_fire && !op_rec_q && txid_q != 6'd0) txo_q[txid_q] <= 1'b1;
        if (FR && fu_cr_en) txo_q[txid_q] <= 1'b1;       // a FRAG slot is an entry of the tx (§11.3)
        if (txm_set_q) txm_q[txm_id_q] <= 1'b1;
        if (txfin_fire) begin
            txo_q[ptx_txid_q] <= 1'b0;
            txm_q[ptx_txid_q] <= 1'b0;
        end
        txo_cur_q <= TX && txo_q[txid_q];
        txm_cur_q <= TX && txm_q[txid_q];
        if (rst) begin
            txo_q <= '0;
            txm_q <= '0;
            txm_set_q <= 1'b0;
        end
    end
    // S-Log: per txid, the full pages committed into the buffer since its last commit / abort
    // (WRITE and DIFFWRITE pages, conversions; a rewrite of one LPN each time), saturating at
    // SLOG_TXFULL + 1: an upper bound of the write-backs of its data pages, so of the backend's
    // list of its full pages (rtl/backend/README_slog.md "Integration"). A record is sent only
    // while it is <= SLOG_TXFULL (architecture §11.3 "Which FRAG slots become fragments").
    // txr_q: a data page of the txid completed non-OK (its slot FREE, its LPN in the backend's
    // list): no record either (a later DIFFWRITE of that LPN misses the probe and may make a FRAG
    // slot of it). Both are cleared at the tx's F_FIN only (not when a commit is taken back at
    // no_space, refused at decode or ended MEDIA_ERROR by a failed conversion).
    if (FR) begin : g_txn
        // (the counts in LUT RAM: one write port, read at txid_q; a txid's count is valid while
        // its bit in txv_q is set, so F_FIN clears a flip-flop, not the RAM)
        localparam int TF_W = $clog2(SLOG_TXFULL + 2);
        localparam int TI_W = (NUM_TX > 1) ? $clog2(NUM_TX) : 1;   // txid - 1 (txids 1..NUM_TX)
        logic [TF_W-1:0] txn_m [1 << TI_W];
        logic [NUM_TX-1:0] txv_q, txr_q;
        logic [TI_W-1:0] ti;
        logic [TF_W-1:0] tn;
        assign ti = TI_W'(txid_q - 6'd1);
        assign tn = (7'(txid_q) - 7'd1 < 7'(NUM_TX) && txv_q[ti]) ? txn_m[ti] : '0;
        always_ff @(posedge clk) begin
            if (commit_fire && !op_rec_q && txid_q != 6'd0 && 32'(tn) <= SLOG_TXFULL)
                txn_m[ti] <= tn + 1'b1;
        end
        always_ff @(posedge clk) begin
            if (commit_fire && !op_rec_q && txid_q != 6'd0) txv_q[ti] <= 1'b1;
            if (txfin_fire) txv_q[TI_W'(ptx_txid_q - 6'd1)] <= 1'b0;
            // (F_FIN comes after every page of the tx has completed: no set of the same txid then)
            txr_q <= (txfin_fire ? txr_q & ~(NUM_TX'(1) << TI_W'(ptx_txid_q - 6'd1)) : txr_q) | txr_set;
            txf_cur_q <= 32'(tn) > SLOG_TXFULL ||
                         (7'(txid_q) - 7'd1 < 7'(NUM_TX) && txr_q[ti]);
            if (rst) begin
                txv_q     <= '0;
                txr_q     <= '0;
                txf_cur_q <= 1'b0;
            end
        end
    end else begin : g_no_txn
        logic unused_txr;
        assign txf_cur_q  = 1'b0;
        assign unused_txr = ^txr_set;
    end

    // S-Log: the transactions' data pages in flight (issued, completion not taken: a page with
    // rec RC_NONE, not a TRIM, of a txid 1..NUM_TX, any txid), counted from a side FIFO beside
    // out_q that also names each one's txid (so no slot metadata is read at the completion:
    // txr_set). The head's record may go when every write-back in flight is such a page (the
    // total out_wr_q - out_rd_q equals their count, and fewer than SLOG_RIF S-Log records are in
    // flight: rif_n_q, records are not in out_q): the requests it waits for are the plain
    // pages, TRIMs, COMMIT marks and commit / abort / S-Log records, whose completion may map or
    // RELEASE a fragment's LPN (architecture §11.4); a tx's data page maps nothing at its
    // completion (its commit does, an earlier request this record waits for, or a later one that
    // completes after it). Registered every cycle; nothing is issued between EN_B2 and EN_D but by
    // this engine, and a completion lowers the total, and the count too when it is such a page,
    // so a 1 seen at EN_C still holds at EN_D
    if (FR) begin : g_txo
        localparam int OI_W = (NUM_TX > 1) ? $clog2(NUM_TX) : 1;   // txid - 1 (txids 1..NUM_TX)
        logic [OI_W:0]   od_q [NUM_SLOTS];        // per out_q entry: {a tx's data page, txid - 1}
        logic [SLOT_W:0] oc_q;                    // the tx data pages in flight (every txid)
        logic [OI_W:0]   od_in, od_out;
        assign od_in  = {sl_rec_q[issue_slot] == RC_NONE && !sl_trim_q[issue_slot] && sl_tx_q[issue_slot] != 6'd0 &&
                         7'(sl_tx_q[issue_slot]) <= 7'(NUM_TX), OI_W'(sl_tx_q[issue_slot] - 6'd1)};
        assign od_out = od_q[out_rd_q[SLOT_W-1:0]];
        for (genvar i = 0; i < NUM_TX; i++) begin : g_txr
            assign txr_set[i] = cpl_pop && !cpl_ok && od_out[OI_W] && od_out[OI_W-1:0] == OI_W'(i);
        end
        // a completion taken past a record in flight (every request issued before it done) must be
        // a transaction's data page
        logic rif_any_new;                        // a record in flight with no earlier request left
        always_comb begin
            rif_any_new = 1'b0;
            for (int k = 0; k < SLOG_RIF; k++) if (rif_v_q[k] && rif_old_q[k] == 0) rif_any_new = 1'b1;
        end
        assign rif_pass_bad = cpl_pop && rif_any_new && !od_out[OI_W];
        always_ff @(posedge clk) begin
            if (issue_fire && !issue_rec) od_q[out_wr_q[SLOT_W-1:0]] <= od_in;
            oc_q <= oc_q + (SLOT_W + 1)'(issue_fire && od_in[OI_W]) - (SLOT_W + 1)'(cpl_pop && od_out[OI_W]);
            // (S-Log records in flight are not in out_q: rif_n_q)
            slog_go_q <= (out_wr_q - out_rd_q) == oc_q && 32'(rif_n_q) < SLOG_RIF;
            if (rst) begin
                oc_q      <= '0;
                slog_go_q <= 1'b0;
            end
        end
    end else begin : g_no_txo
        assign slog_go_q = 1'b1;
        assign txr_set   = '0;
        assign rif_pass_bad = 1'b0;
    end

    always_ff @(posedge clk) begin
        // FIFO: enqueue at commit, or take over the old version's position
        if (commit_fire) begin
            if (c_take_q) begin
                fifo_q[c_qp_q[FI_W-1:0]] <= fill_q;
            end else begin
                fifo_q[tail_pos_q[FI_W-1:0]] <= fill_q;
                tail_pos_q <= tail_pos_q + 1'b1;
            end
        end
        if (pop_fire) head_pos_q <= head_pos_q + 1'b1;
        fifo_cnt_q <= fifo_cnt_q + (FI_W + 1)'(commit_fire && !c_take_q) - (FI_W + 1)'(pop_fire);
        if (issue_fire) begin
            issue_cnt_q <= issue_cnt_q + 1'b1;
            if (!issue_rec) begin
                out_q[out_wr_q[SLOT_W-1:0]] <= issue_slot;
                out_wr_q <= out_wr_q + 1'b1;
            end
        end
        if (rec_hit) begin
            rif_v_q[rif_hd_q] <= 1'b0;
            rif_hd_q <= (32'(rif_hd_q) == SLOG_RIF - 1) ? '0 : rif_hd_q + 1'b1;
        end
        rif_n_q <= rif_n_q + (RF_W + 1)'(issue_rec) - (RF_W + 1)'(rec_hit);
        for (int k = 0; k < SLOG_RIF; k++)
            if (cpl_pop && rif_old_q[k] != 0) rif_old_q[k] <= rif_old_q[k] - 1'b1;
        if (issue_rec) begin
            rif_v_q[rif_tl_q]    <= 1'b1;
            rif_slot_q[rif_tl_q] <= issue_slot;
            rif_old_q[rif_tl_q]  <= (out_wr_q - out_rd_q) - (SLOT_W + 1)'(cpl_pop);
            rif_tl_q <= (32'(rif_tl_q) == SLOG_RIF - 1) ? '0 : rif_tl_q + 1'b1;
        end
        dirty_cnt_q <= dirty_cnt_q + DC_W'(commit_fire && !c_take_q) - DC_W'(issue_fire) - DC_W'(rec_drop);
        held_cnt_q  <= held_cnt_q + DC_W'(commit_fire && !c_take_q) - DC_W'(cpl_fire) - DC_W'(rec_drop);
        cap_used_q  <= cap_used_q + DC_W'(issue_fire) - DC_W'(cpl_fire && !dump_q);
        // sampled until and including the edge that samples pwr_fail (the cut), then frozen
        if (!dump_q) budget_q <= (plp_budget > PLP_BUD) ? PLP_BUD : plp_budget;
        plp_room_q  <= !PLP || (16'(held_cnt_q) < budget_q);
        cap_out_q   <= dump_q && PLP && !(16'(cap_used_q) < budget_q);
        // marks counted one cycle late (mark_fire_q): the engine is held during the scan and the
        // RFLUSH waiter looks at urg_cnt_q at least two cycles after the last mark
        mark_fire_q <= mark_fire;
        urg_cnt_q   <= urg_cnt_q + DC_W'(mark_fire_q) - DC_W'(issue_fire && issue_urg);
        if (cpl_pop) out_rd_q <= out_rd_q + 1'b1;
        if (cpl_fire) begin
            dur_cnt_q <= dur_cnt_q + 1'b1;
            if (cpl_fail) fail_cnt_q <= fail_cnt_q + 1'b1;
        end
        // protocol errors: a media completion without an outstanding writeback or with another tag
        // than the expected slot (and not the S-Log record's in flight); the record's completion
        // before a request issued earlier than it, or a completion passing the record that is not a
        // transaction's data page (the rule a backend must keep: README "A record's completion, by
        // its tag"); a read page no read asked for (mr_stray)
        c_perr_q <= c_perr_q + 32'(s_wbc_valid && !rec_hit && (out_empty || s_wbc_tag != 8'(out_q[out_rd_q[SLOT_W-1:0]]))) +
                    32'(rec_hit && rif_old_q[rif_hd_q] != 0) + 32'(rif_pass_bad) + 32'(mr_stray);
        // counters
        if (commit_fire && (op_q == OP_WRITE || op_diff_q) && !ccv_q) c_host_q <= c_host_q + 1'b1;
        if (commit_fire && c_take_q) c_coal_q <= c_coal_q + 1'b1;
        if (wb_accept && !m_wb_op) begin
            c_wbp_q   <= c_wbp_q + 1'b1;
            c_bytes_q <= c_bytes_q + 48'(PAGE_BYTES);
        end
        if (wb_accept && m_wb_op) c_wbu_q <= c_wbu_q + 1'b1;
        if (state_q == ST_ACT && op_rd_q) begin
            if (rd_hit_q) c_hit_q <= c_hit_q + 1'b1;
            else c_miss_q <= c_miss_q + 1'b1;
        end
        nosp_q      <= no_space;
        if (pwr_fail) dump_q <= 1'b1;
        if (rst) begin
            head_pos_q <= '0;
            tail_pos_q <= '0;
            fifo_cnt_q <= '0;
            nosp_q     <= 1'b0;
            issue_cnt_q <= '0;
            dur_cnt_q  <= '0;
            fail_cnt_q <= '0;
            out_wr_q   <= '0;
            out_rd_q   <= '0;
            rif_v_q    <= '0;
            rif_hd_q   <= '0;
            rif_tl_q   <= '0;
            rif_n_q    <= '0;
            for (int k = 0; k < SLOG_RIF; k++) rif_old_q[k] <= '0;
            dirty_cnt_q <= '0;
            held_cnt_q  <= '0;
            urg_cnt_q  <= '0;
            mark_fire_q <= 1'b0;
            dump_q     <= 1'b0;
            cap_used_q <= '0;
            budget_q   <= '0;
            plp_room_q <= 1'b0;
            cap_out_q  <= 1'b0;
            c_host_q   <= '0;
            c_coal_q   <= '0;
            c_wbp_q    <= '0;
            c_wbu_q    <= '0;
            c_hit_q    <= '0;
            c_miss_q   <= '0;
            c_perr_q   <= '0;
            c_bytes_q  <= '0;
        end
    end

    // (dirty_cnt_q, not fifo_cnt_q: the FIFO may hold stale entries only; ST_FROZEN: a commit in the
    // cycle of the cut still adds a dirty page, one cycle later)
    // Registered and sticky: the engine keeps cycling through EN_A..EN_D (popping stale entries),
    // so the condition alone would pulse.
    logic dump_done_q;
    always_ff @(posedge clk) begin
        if (dump_q && state_q == ST_FROZEN && en_q == EN_A && (dirty_cnt_q == 0 || cap_out_q) &&
            out_empty && rif_n_q == 0 && !rdr_busy_q) dump_done_q <= 1'b1;
        if (rst) dump_done_q <= 1'b0;
    end
    assign dump_done  = dump_q && (!PLP || dump_done_q);
    assign dump_short = dump_q && PLP && cap_out_q && dirty_cnt_q != 0;

    assign cnt_host_pages  = c_host_q;
    assign cnt_coalesced   = c_coal_q;
    assign cnt_wb_pages    = c_wbp_q;
    assign cnt_wb_unmaps   = c_wbu_q;
    assign cnt_media_bytes = c_bytes_q;
    assign cnt_read_hits   = c_hit_q;
    assign cnt_read_misses = c_miss_q;
    assign cnt_wb_fail     = fail_cnt_q;
    assign cnt_proto_err   = c_perr_q;
    assign cnt_slog_err    = c_slog_err_q;
    if (DC_W > 8) begin : g_dirty_sat              // more than 255 slots: saturate the status output
        assign dirty_pages = (dirty_cnt_q > DC_W'(255)) ? 8'hFF : dirty_cnt_q[7:0];
    end else begin : g_dirty
        assign dirty_pages = 8'(dirty_cnt_q);
    end

    // inputs only used for checks or reserved
    logic unused_ok;
    assign unused_ok = ^{s_hrd_last, s_rdd_last, s_wbc_ppn, s_disp_flags[ats_host_pkg::FLAG_BARRIER], sl_pr_q[0],
                         fu_st_v, fu_st_txid, fu_bit_last};
endmodule

`resetall
