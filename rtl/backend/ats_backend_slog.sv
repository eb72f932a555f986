// SPDX-License-Identifier: Apache-2.0
// ats_backend_slog: DiffTx's S-Log core (docs/architecture.md §11, docs/persistence.md §10):
// the S-Log index (F[lpn] of up to SLOG_LPNS LPNs, SLOG_FRAGS fragments each, SLOG_WAYS-way set
// associative on the LPN's low bits) with exclusive per-tx reservations, and the record assembler
// that turns a commit's descriptors (full pages and fragments) and the fragments' words into
// REC-LEN log pages in persistence §10's format, with the LPGN counter and the completeness-flag
// list. In ats_backend with SLOG = 1 (its README "S-Log"). Contract: rtl/backend/README_slog.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_slog #(
    parameter int PAGE_BYTES   = 4096, // data bytes per page: multiple of 4, 64..4096
    parameter int NUM_TX       = 16,   // txids 1..NUM_TX
    parameter int SLOG_LPNS    = 256,  // index entries (LPNs with F != [] or a reservation)
    parameter int SLOG_WAYS    = 4,    // ways per set; SLOG_LPNS / SLOG_WAYS sets, a power of two >= 2
    parameter int SLOG_FRAGS   = 4,    // fragments per LPN, 1..127
    parameter int SLOG_TXFRAGS = 64,   // fragments per record, >= 1
    parameter int SLOG_TXFULL  = 64,   // full pages per record (ats_backend: each txid's list of full pages), >= 1
    parameter int PPN_W        = 32,   // PPN width, <= 32 (zero-extended in META-PUs)
    parameter int SLOG_RECS    = 1,    // records held at once (emitted, awaiting APPLY / DISCARD), 1..8
    parameter int SLOG_PACK    = 0     // 1: records packed into shared log pages (an open page; s_go, s_seal)
) (
    input  wire logic                  clk,
    input  wire logic                  rst,          // synchronous, active high
    // index commands: op 0 RESERVE, 1 UNRESERVE, 2 LOOKUP, 3 RELEASE, 4 APPLY, 5 DISCARD, 6 INSERT,
    // 7 READ (lpn = slot set * SLOG_WAYS + way, n = fragment j or 255: the entry; README_slog)
    input  wire logic                  s_ix_valid,
    output      logic                  s_ix_ready,
    input  wire logic [2:0]            s_ix_op,
    input  wire logic [7:0]            s_ix_txid,
    input  wire logic [31:0]           s_ix_lpn,
    input  wire logic [7:0]            s_ix_n,       // RELEASE: fragments to remove (oldest first)
    input  wire logic [31:0]           s_ix_lpgn,    // INSERT: the fragment (recovery)
    input  wire logic [11:0]           s_ix_pofs,
    input  wire logic [11:0]           s_ix_off,
    input  wire logic [11:0]           s_ix_len,
    // index answers: one beat per command, LOOKUP one per fragment (k = 0: one beat)
    output      logic                  m_ix_valid,
    input  wire logic                  m_ix_ready,
    output      logic [7:0]            m_ix_sts,
    output      logic [7:0]            m_ix_cnt,     // RESERVE: room; LOOKUP: k; RELEASE: removed; APPLY: fragments
    output      logic [31:0]           m_ix_lpgn,    // LOOKUP: the fragment's log page
    output      logic [11:0]           m_ix_pofs,    // LOOKUP: its data's byte offset in that page
    output      logic [11:0]           m_ix_off,     // LOOKUP: the page bytes it replaces
    output      logic [11:0]           m_ix_len,
    output      logic                  m_ix_last,
    // record descriptors: full pages and fragments of one commit, `last` on the final one
    input  wire logic                  s_rd_valid,
    output      logic                  s_rd_ready,
    input  wire logic [7:0]            s_rd_txid,
    input  wire logic                  s_rd_full,
    input  wire logic [31:0]           s_rd_lpn,
    input  wire logic [PPN_W-1:0]      s_rd_ppn,     // full: the tx's page; fragment: the base
    input  wire logic [11:0]           s_rd_off,
    input  wire logic [11:0]           s_rd_len,
    input  wire logic                  s_rd_last,
    // record status: one beat per record, after its last descriptor
    output      logic                  m_rs_valid,
    input  wire logic                  m_rs_ready,
    output      logic [7:0]            m_rs_sts,
    output      logic [7:0]            m_rs_txid,
    output      logic [31:0]           m_rs_lpgn,    // first LPGN (OK)
    output      logic [7:0]            m_rs_reclen,  // log pages (OK)
    // the fragments' words, after an OK status, in descriptor order (len/4 words each)
    input  wire logic                  s_rw_valid,
    output      logic                  s_rw_ready,
    input  wire logic [31:0]           s_rw_data,
    // log pages: PAGE_BYTES/4 words each, `last` on a page's final word
    output      logic                  m_lp_valid,
    input  wire logic                  m_lp_ready,
    output      logic [31:0]           m_lp_data,
    output      logic                  m_lp_last,
    output      logic [31:0]           m_lp_lpgn,
    output      logic                  m_lp_end,     // on the record's final page (SLOG_PACK: a page where one ends)
    output      logic [7:0]            m_lp_nend,    // records that end in this page (SLOG_PACK 0: m_lp_end)
    // SLOG_PACK = 1: the verdict on an OK record after its status (drop: its bytes never written)
    input  wire logic                  s_go_valid,
    output      logic                  s_go_ready,
    input  wire logic                  s_go_drop,
    // SLOG_PACK = 1: close the open page (sent on m_lp as it is)
    input  wire logic                  s_seal_valid,
    output      logic                  s_seal_ready,
    output      logic                  pg_open,      // SLOG_PACK = 1: a log page is open
    output      logic                  wr_busy,      // SLOG_PACK = 1: a record's bytes being written / dropped, or a page being sent
    output      logic                  pg_cont,      // SLOG_PACK = 1: the open page begins with the tail of a record begun in an earlier page
    // completeness flags (always taken; dropped when 8 are held)
    input  wire logic                  s_cf_valid,
    input  wire logic [7:0]            s_cf_txid,
    input  wire logic [7:0]            s_cf_reclen,
    input  wire logic [31:0]           s_cf_lpgn,
    // LPGN counter load (recovery), taken while no record is held
    input  wire logic                  s_lg_valid,
    output      logic                  s_lg_ready,
    input  wire logic [31:0]           s_lg_lpgn,
    output      logic [31:0]           lpgn,         // the next LPGN
    output      logic [15:0]           used          // entries in use (valid ways)
);
    // ---- derived sizes and parameter checks
    localparam int P        = PAGE_BYTES - 16;             // payload bytes per log page
    localparam int PW       = PAGE_BYTES / 4;              // words per page
    localparam int SETS     = SLOG_LPNS / SLOG_WAYS;
    localparam int SET_W    = $clog2(SETS);
    localparam int WAY_W    = (SLOG_WAYS > 1) ? $clog2(SLOG_WAYS) : 1;
    localparam int SLOT_W   = (SLOG_FRAGS > 1) ? $clog2(SLOG_FRAGS) : 1;
    localparam int SLOT_N   = 1 << SLOT_W;
    localparam int K_W      = $clog2(SLOG_FRAGS + 1);
    localparam int TX_W     = $clog2(NUM_TX + 1);
    localparam int NCF      = 8;
    localparam int FR_W     = $clog2(SLOG_TXFRAGS + 1);
    localparam int FU_W     = $clog2(SLOG_TXFULL + 1);
    localparam int FRI_W    = (SLOG_TXFRAGS > 1) ? $clog2(SLOG_TXFRAGS) : 1;
    localparam int FUI_W    = (SLOG_TXFULL > 1) ? $clog2(SLOG_TXFULL) : 1;
    localparam int FM_D     = SETS * SLOG_WAYS * SLOT_N;
    localparam int FM_W     = $clog2(FM_D);
    localparam int HDR_MAX  = 16 + 8 * NCF + 16 * (SLOG_TXFRAGS + SLOG_TXFULL);
    localparam int BYTES_MAX = HDR_MAX + SLOG_TXFRAGS * P;  // a fragment per page, worst case
    localparam int S_W      = $clog2(BYTES_MAX + PAGE_BYTES + 1);
    localparam int PG_MAX   = (BYTES_MAX + P - 1) / P;
    localparam int PB_W     = $clog2(PW);                                  // a page buffer word
    localparam int RC_W     = (SLOG_RECS > 1) ? $clog2(SLOG_RECS) : 1;   // a held-record slot
    localparam int FD_D     = SLOG_RECS * SLOG_TXFRAGS;                   // fragment descriptors, all slots
    // statuses: the contract's numbers (docs/architecture.md §2), by scoped name
    localparam logic [7:0] STS_OK        = ats_host_pkg::STS_OK;
    localparam logic [7:0] STS_BAD_TXID  = ats_host_pkg::STS_BAD_TXID;
    localparam logic [7:0] STS_TX_FULL   = ats_host_pkg::STS_TX_FULL;
    localparam logic [7:0] STS_TX_EMPTY  = ats_host_pkg::STS_TX_EMPTY;
    localparam logic [7:0] STS_BAD_FIELD = ats_host_pkg::STS_BAD_FIELD;
    localparam logic [2:0] OP_RESERVE = 3'd0, OP_UNRESERVE = 3'd1, OP_LOOKUP = 3'd2,
                           OP_RELEASE = 3'd3, OP_APPLY = 3'd4, OP_DISCARD = 3'd5, OP_INSERT = 3'd6,
                           OP_READ = 3'd7;

    if (PAGE_BYTES % 4 != 0 || PAGE_BYTES < 64 || PAGE_BYTES > 4096) begin : g_chk_page
        $fatal(1, "ats_backend_slog: PAGE_BYTES must be a multiple of 4 in 64..4096 (%m)");
    end
    if (NUM_TX < 1 || NUM_TX > 255) begin : g_chk_tx
        $fatal(1, "ats_backend_slog: NUM_TX must be 1..255 (%m)");
    end
    if (SLOG_WAYS < 1 || SLOG_LPNS % SLOG_WAYS != 0 || SETS < 2 || (SETS & (SETS - 1)) != 0) begin : g_chk_sets
        $fatal(1, "ats_backend_slog: SLOG_LPNS / SLOG_WAYS must be a power of two >= 2 (%m)");
    end
    if (SLOG_FRAGS < 1 || SLOG_FRAGS > 127) begin : g_chk_frags
        $fatal(1, "ats_backend_slog: SLOG_FRAGS must be 1..127 (VER is 7 bits) (%m)");
    end
    if (SLOG_TXFRAGS < 1 || SLOG_TXFULL < 1) begin : g_chk_rec
        $fatal(1, "ats_backend_slog: SLOG_TXFRAGS, SLOG_TXFULL must be >= 1 (%m)");
    end
    if (SLOG_PACK != 0 && SLOG_PACK != 1) begin : g_chk_pack
        $fatal(1, "ats_backend_slog: SLOG_PACK must be 0 or 1 (%m)");
    end
    if (PG_MAX + SLOG_PACK > 255) begin : g_chk_reclen
        $fatal(1, "ats_backend_slog: a record could need more than 255 log pages (REC-LEN) (%m)");
    end
    if (PPN_W < 1 || PPN_W > 32) begin : g_chk_ppn
        $fatal(1, "ats_backend_slog: PPN_W must be 1..32 (%m)");
    end
    if (SLOG_RECS < 1 || SLOG_RECS > 8) begin : g_chk_recs
        $fatal(1, "ats_backend_slog: SLOG_RECS must be 1..8 (%m)");
    end

    // ---- index: per way a RAM of {valid, tag} words (cleared one set a cycle after rst); one fragment RAM
    typedef struct packed {
        logic [31:0]       lpn;
        logic              rsv;      // reserved (by owner)
        logic [TX_W-1:0]   owner;
        logic [K_W-1:0]    k;        // committed fragments
        logic [SLOT_W-1:0] head;     // ring position of the oldest
        logic [K_W-1:0]    pend;     // fragments of the held record (not yet applied)
    } tag_t;
    typedef struct packed {
        logic [31:0] lpgn;
        logic [11:0] pofs;
        logic [11:0] off;
        logic [11:0] len;
    } frag_t;

    localparam int TAG_W = 32 + 1 + TX_W + K_W + SLOT_W + K_W;   // $bits(tag_t)
    logic [67:0] frag_mem [FM_D];            // frag_t (Yosys: memories of plain vectors)

    // the set the current operation addresses (its LPN registered), the ways' tags there
    // (read and compared in I_TAG, registered, used in I_EXE)
    logic [31:0]    a_lpn_q, a_lpn_d;
    logic [SET_W-1:0] q_set;
    // per way: its word at q_set, {valid, tag}, read (q_tagv) and registered twice (the block RAM's
    // read register and output register)
    logic [SLOG_WAYS-1:0][TAG_W:0] q_tagv, t_tag_q, t_tag2_q;
    logic [SLOG_WAYS-1:0] t_vld_q, t_match_q;
    // the tag RAMs' clear after rst (valid bits in the RAM, not in flip-flops): one set a cycle,
    // every way at once; no command or descriptor is taken until it ends (SETS cycles)
    logic             clr_q;
    logic [SET_W-1:0] clr_set_q;
    logic           hit, has_free;
    logic [WAY_W-1:0] hit_way, free_way;
    tag_t           ht;                      // the hit way's tag
    tag_t           tw_tag;
    logic           tw_en, tw_vld;
    logic [WAY_W-1:0] tw_way;
    assign q_set = a_lpn_q[SET_W-1:0];

    // per way a tag RAM of {valid, tag} words (read at q_set, registered twice: block RAM with its
    // output register, or distributed RAM when small), written by the one tag write port or the clear
    for (genvar w = 0; w < SLOG_WAYS; w++) begin : g_way
        logic [TAG_W:0] mem [SETS];
        assign q_tagv[w] = mem[q_set];
        always_ff @(posedge clk) begin
            if (clr_q) mem[clr_set_q] <= '0;
            else if (tw_en && tw_way == WAY_W'(w)) mem[q_set] <= {tw_vld, tw_tag};
        end
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            clr_q <= 1'b1; clr_set_q <= '0;
        end else if (clr_q) begin
            clr_set_q <= clr_set_q + 1'b1;
            if (clr_set_q == SET_W'(SETS - 1)) clr_q <= 1'b0;
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */     // (the other fields of the tag)
    function automatic logic [31:0] tag_lpn(input logic [TAG_W:0] v);
        tag_lpn = v[TAG_W-1 -: 32];              // tag_t's first field (bit TAG_W: the valid bit)
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // I_TAG: the tag RAMs read (block RAM); I_TAG2: registered again (the RAM's output register);
    // I_CMP: the ways compared; I_EXE: executed
    always_ff @(posedge clk) begin
        t_tag_q <= q_tagv;
        t_tag2_q <= t_tag_q;
        for (int w = 0; w < SLOG_WAYS; w++) begin
            t_vld_q[w] <= t_tag2_q[w][TAG_W];
            t_match_q[w] <= t_tag2_q[w][TAG_W] && tag_lpn(t_tag2_q[w]) == a_lpn_q;
        end
    end
    // I_SEL: the hit way, a free way, the hit tag and its tests registered
    logic             hit_c, has_free_c, own, kp_full;
    logic [WAY_W-1:0] hit_way_c, free_way_c;
    tag_t             ht_c;
    always_comb begin
        hit_c = 1'b0; hit_way_c = '0; has_free_c = 1'b0; free_way_c = '0;
        for (int w = SLOG_WAYS - 1; w >= 0; w--) begin
            if (t_match_q[w]) begin hit_c = 1'b1; hit_way_c = WAY_W'(w); end
            if (!t_vld_q[w]) begin has_free_c = 1'b1; free_way_c = WAY_W'(w); end
        end
        ht_c = t_tag2_q[hit_way_c][TAG_W-1:0];
    end
    always_ff @(posedge clk) begin
        hit <= hit_c; hit_way <= hit_way_c; has_free <= has_free_c; free_way <= free_way_c;
        ht <= ht_c;
        own <= ht_c.rsv && 8'(ht_c.owner) == a_tx_q;            // reserved by the op's txid
        kp_full <= 32'(ht_c.k) + 32'(ht_c.pend) >= SLOG_FRAGS;  // no room for one more
    end

    // entries in use: a write's way was valid before it (t_vld_q: the tag RAMs as the operation read
    // them; nothing writes them between its I_TAG and its I_EXE)
    logic [15:0] used_q;
    always_ff @(posedge clk) begin
        if (rst) used_q <= '0;
        else if (tw_en) begin
            if (tw_vld && !t_vld_q[tw_way]) used_q <= used_q + 16'd1;
            else if (!tw_vld && t_vld_q[tw_way]) used_q <= used_q - 16'd1;
        end
    end
    assign used = used_q;

    // fragment RAM: synchronous read (block RAM), one write port
    logic           fw_en;
    logic [FM_W-1:0] fw_addr, fr_addr;
    frag_t          fw_data, fr_data_q;
    always_ff @(posedge clk) begin
        if (fw_en) frag_mem[fw_addr] <= fw_data;
        fr_data_q <= frag_mem[fr_addr];
    end
    function automatic logic [FM_W-1:0] faddr(input logic [SET_W-1:0] s, input logic [WAY_W-1:0] w,
                                              input logic [SLOT_W-1:0] slot);
        faddr = FM_W'((int'(s) * SLOG_WAYS + int'(w)) * SLOT_N + int'(slot));
    endfunction
    function automatic logic [SLOT_W-1:0] ring(input logic [SLOT_W-1:0] h, input int unsigned n);
        int unsigned x;
        x = int'(h) + n;
        if (x >= SLOG_FRAGS) x = x - SLOG_FRAGS;
        ring = SLOT_W'(x);
    endfunction

    // ---- the held record's descriptors (asynchronous-read RAMs)
    typedef struct packed {
        logic [31:0]      lpn;
        logic [PPN_W-1:0] ppn;
    } full_t;
    typedef struct packed {
        logic [31:0]      lpn;
        logic [PPN_W-1:0] ppn;
        logic [11:0]      off;
        logic [11:0]      len;
        logic [6:0]       ver;
    } fd_t;
    typedef struct packed {
        logic [S_W-1:0] loc;   // DATA-LOC (from the record's start)
        logic [7:0]     pg;    // log page of the record holding it
        logic [11:0]    pofs;  // byte offset in that page
    } fl_t;
    // (memories of plain vectors: Yosys does not infer memories of structs). The fragments' RAMs
    // hold one record per held-record slot (fa(slot, i)); the full pages only the record received /
    // emitted (a held record's APPLY / DISCARD reads its fragments only)
    logic [32+PPN_W-1:0]       full_mem [SLOG_TXFULL];    // full_t
    logic [32+PPN_W+31-1:0]    fd_mem   [FD_D];           // fd_t
    logic [S_W+20-1:0]         fl_mem   [FD_D];           // fl_t
    function automatic int fa(input logic [RC_W-1:0] slot, input logic [FRI_W-1:0] i);
        fa = int'(slot) * SLOG_TXFRAGS + int'(i);
    endfunction

    // record state (index side): the record received, then emitted (its descriptors in slot cur_q);
    // once its pages are out it is held in slot cur_q (hv_q) until APPLY / DISCARD walks it (wk_q)
    typedef enum logic [1:0] {R_FREE, R_CLR, R_STS, R_EMIT} rec_state_e;
    rec_state_e       rs_q, rs_d;
    logic [RC_W-1:0]  cur_q, cur_d;           // the received / emitted record's slot
    logic [SLOG_RECS-1:0] hv_q;               // held records (pages out, APPLY / DISCARD to come)
    logic [7:0]       htx_q [SLOG_RECS];      // ... their txids
    logic [FR_W-1:0]  hnfr_q [SLOG_RECS];     // ... their fragments
    logic [31:0]      hlg_q [SLOG_RECS];      // ... their first LPGNs
    logic [SLOG_RECS-1:0] hd_q;               // ... dropped at their verdict (SLOG_PACK)
    logic             e_drp_q;                // the emitted record was dropped (SLOG_PACK)
    logic             h_set;                  // the emitted record becomes held in slot cur_q
    logic             h_clr;                  // the walked record (slot ws_q) leaves
    typedef enum logic [1:0] {W_NONE, W_APPLY, W_DISC} walk_e;
    walk_e            wk_q, wk_d;             // an APPLY / DISCARD walk of held slot ws_q
    logic [RC_W-1:0]  ws_q, ws_d;
    logic [RC_W-1:0]  free_slot;              // the lowest slot neither held nor cur_q's record
    logic             slot_free;
    logic             hm_c;                   // a held record's txid = s_ix_txid (the APPLY wait)
    logic [RC_W-1:0]  hm_slot;                // the held slot of a_tx_q (APPLY / DISCARD)
    logic             hm_hit;
    logic [7:0]       rtx_q, rtx_d;           // txid of the record (first descriptor)
    logic             rfirst_q, rfirst_d;     // next descriptor is a record's first
    logic [7:0]       rerr_q, rerr_d;         // first error, 0 = none
    logic [FU_W-1:0]  nfu_q, nfu_d;
    logic [FR_W-1:0]  nfr_q, nfr_d;
    logic [FRI_W-1:0] wi_q, wi_d;             // walk index (clear / apply)
    logic [31:0]      lpgn_q, lpgn_d, lpgn0_q, lpgn0_d;
    logic             lay_end;                // the emitter's layout ends this cycle
    logic [7:0]       lay_pages;              // ... with this many log pages
    // completeness flags: the list and the held record's copy
    logic [3:0]       ncf_q, rncf_q;
    logic [7:0]       cf_tx_q [NCF], cf_rl_q [NCF], rcf_tx_q [NCF], rcf_rl_q [NCF];
    logic [31:0]      cf_lg_q [NCF], rcf_lg_q [NCF];
    logic             snap;                   // an OK record's layout starts; it takes the list

    // index answer register
    logic        ixv_q, ixv_d, ixl_q, ixl_d;
    logic [7:0]  ixs_q, ixs_d, ixc_q, ixc_d;
    // index FSM: a command, a descriptor or a walk step is registered (I_IDLE), its set's tags
    // read (I_TAG, I_TAG2) and compared (I_CMP), then it is executed (I_EXE)
    typedef enum logic [3:0] {I_IDLE, I_TAG, I_TAG2, I_CMP, I_SEL, I_EXE, I_RESP, I_LKRD, I_LKOUT} ix_state_e;
    typedef enum logic [2:0] {K_CMD, K_DESC, K_CLR, K_APPLY, K_DISC} kind_e;
    ix_state_e   is_q, is_d;
    kind_e       kd_q, kd_d;
    logic [2:0]  a_op_q, a_op_d;
    logic [7:0]  a_tx_q, a_tx_d, a_n_q, a_n_d;
    logic        a_full_q, a_full_d, a_last_q, a_last_d;
    logic [PPN_W-1:0] a_ppn_q, a_ppn_d;
    logic [11:0] a_off_q, a_off_d, a_len_q, a_len_d, a_pofs_q, a_pofs_d;
    logic [7:0]  a_pg_q, a_pg_d;
    logic [31:0] a_lpgn_q, a_lpgn_d;          // INSERT's fragment LPGN
    logic [WAY_W-1:0] a_way_q, a_way_d;       // READ: the slot's way (a_lpn_q holds its set)
    logic        a_bad_q, a_bad_d;            // READ: slot >= SLOG_LPNS
    // READ of an entry: its fields, answered with the beat (m_ix_lpgn = lpn, cnt = |F|, off =
    // {rsv, pend}, len = owner, pofs = 1 when the slot holds an entry)
    logic        re_q, re_d;
    logic [31:0] re_lpn_q, re_lpn_d;
    logic [11:0] re_off_q, re_off_d, re_len_q, re_len_d, re_pofs_q, re_pofs_d;
    tag_t        rt;                          // READ: the slot's tag
    logic        rt_v;                        // ... and its valid bit
    assign rt = t_tag2_q[a_way_q][TAG_W-1:0];
    assign rt_v = t_vld_q[a_way_q];
    logic [SLOT_W-1:0] lk_slot_q, lk_slot_d;
    logic [K_W-1:0]    lk_i_q, lk_i_d;
    logic [WAY_W-1:0]  lk_way_q, lk_way_d;
    logic              emit_done;             // from the emitter: the record's pages are out

    logic [7:0] e;                            // a descriptor's error
    logic       d_we;                         // a descriptor is stored
    // tests of the registered operation, registered in turn (its fields are stable from I_TAG to
    // I_EXE; the counts change only in an I_EXE)
    logic txid_ok, fbad, fu_full, fr_full, tx_same, pbad;
    always_ff @(posedge clk) begin
        pbad <= a_pofs_q[1:0] != 2'd0 || a_pofs_q < 12'd16 || 32'(a_pofs_q) + 32'(a_len_q) > PAGE_BYTES;
        txid_ok <= (a_tx_q != 8'd0) && (a_tx_q <= 8'(NUM_TX));
        fbad <= a_len_q == 12'd0 || a_len_q[1:0] != 2'd0 || a_off_q[1:0] != 2'd0
                || 32'(a_len_q) > P || 32'(a_off_q) + 32'(a_len_q) > PAGE_BYTES;
        fu_full <= 32'(rfirst_q ? '0 : nfu_q) >= SLOG_TXFULL;
        fr_full <= 32'(rfirst_q ? '0 : nfr_q) >= SLOG_TXFRAGS;
        tx_same <= a_tx_q == rtx_q;
    end
    // the held slot whose txid is a_tx_q (at most one: a record of a held txid is refused)
    always_comb begin
        hm_hit = 1'b0; hm_slot = '0;
        for (int i = 0; i < SLOG_RECS; i++)
            if (hv_q[i] && htx_q[i] == a_tx_q) begin hm_hit = 1'b1; hm_slot = RC_W'(i); end
        hm_c = 1'b0;
        for (int i = 0; i < SLOG_RECS; i++)
            if (hv_q[i] && htx_q[i] == s_ix_txid) hm_c = 1'b1;
        slot_free = 1'b0; free_slot = '0;
        for (int i = SLOG_RECS - 1; i >= 0; i--)
            if (!hv_q[i]) begin slot_free = 1'b1; free_slot = RC_W'(i); end
    end
    // a descriptor is taken in I_IDLE when no index command is offered, no walk is due and a slot is
    // free (a record's first descriptor takes the lowest; cur_q keeps it until the record is held)
    wire walk_due = (rs_q == R_CLR) || (wk_q != W_NONE);
    wire rd_take = (is_q == I_IDLE) && (rs_q == R_FREE) && !walk_due && (slot_free || !rfirst_q)
                   && !s_ix_valid && s_rd_valid && !clr_q;
    // APPLY / DISCARD of the record whose pages are still going out waits for them (hm_c: a held
    // record of that txid answers at once; the emitted one is not held yet)
    wire ix_apply_wait = (s_ix_op == OP_APPLY || s_ix_op == OP_DISCARD) && (rs_q == R_EMIT)
                         && !hm_c;
    wire ix_take = (is_q == I_IDLE) && (rs_q == R_FREE || rs_q == R_EMIT) && !walk_due
                   && s_ix_valid && !ix_apply_wait && !clr_q;

    // walk of a record's fragments: the rejected record's clear (slot cur_q), or a held record's
    // APPLY / DISCARD (slot ws_q)
    logic [RC_W-1:0] wslot;
    logic [FR_W-1:0] wn;
    assign wslot = (rs_q == R_CLR) ? cur_q : ws_q;
    assign wn = (rs_q == R_CLR) ? nfr_q : hnfr_q[ws_q];
    fd_t fdw;
    fl_t flw;
    assign fdw = fd_mem[fa(wslot, wi_q)];
    assign flw = fl_mem[fa(wslot, wi_q)];

    always_comb begin
        is_d = is_q; rs_d = rs_q; rtx_d = rtx_q; rfirst_d = rfirst_q; rerr_d = rerr_q;
        nfu_d = nfu_q; nfr_d = nfr_q; wi_d = wi_q; lpgn_d = lpgn_q;
        ixv_d = ixv_q; ixl_d = ixl_q; ixs_d = ixs_q; ixc_d = ixc_q;
        kd_d = kd_q; a_lpn_d = a_lpn_q; a_op_d = a_op_q; a_tx_d = a_tx_q; a_n_d = a_n_q;
        a_full_d = a_full_q; a_last_d = a_last_q; a_ppn_d = a_ppn_q; a_off_d = a_off_q;
        a_len_d = a_len_q; a_pofs_d = a_pofs_q; a_pg_d = a_pg_q; a_lpgn_d = a_lpgn_q;
        lk_slot_d = lk_slot_q; lk_i_d = lk_i_q; lk_way_d = lk_way_q;
        a_way_d = a_way_q; a_bad_d = a_bad_q;
        cur_d = cur_q; wk_d = wk_q; ws_d = ws_q; h_set = 1'b0; h_clr = 1'b0;
        re_d = re_q; re_lpn_d = re_lpn_q; re_off_d = re_off_q; re_len_d = re_len_q; re_pofs_d = re_pofs_q;
        tw_en = 1'b0; tw_vld = 1'b1; tw_way = hit_way; tw_tag = ht;
        fw_en = 1'b0; fw_addr = '0; fw_data = '0;
        fr_addr = faddr(q_set, lk_way_q, lk_slot_q);
        e = 8'd0; d_we = 1'b0;

        case (is_q)
            I_IDLE: begin
                if (walk_due) begin
                    if (wn == '0) begin
                        if (rs_q == R_CLR) rs_d = R_STS;
                        else begin
                            wk_d = W_NONE; h_clr = 1'b1;
                            is_d = I_RESP; ixv_d = 1'b1; ixl_d = 1'b1; ixs_d = STS_OK;
                            ixc_d = '0;
                        end
                    end else begin
                        kd_d = (rs_q == R_CLR) ? K_CLR : (wk_q == W_APPLY) ? K_APPLY : K_DISC;
                        is_d = I_TAG;
                        a_lpn_d = fdw.lpn; a_off_d = fdw.off; a_len_d = fdw.len;
                        a_pg_d = flw.pg; a_pofs_d = flw.pofs;
                    end
                end else if (ix_take) begin
                    kd_d = K_CMD; is_d = I_TAG;
                    a_op_d = s_ix_op; a_tx_d = s_ix_txid; a_lpn_d = s_ix_lpn; a_n_d = s_ix_n;
                    a_lpgn_d = s_ix_lpgn; a_pofs_d = s_ix_pofs; a_off_d = s_ix_off; a_len_d = s_ix_len;
                    // READ: the slot's set addresses the tags (a_lpn), its way is kept
                    a_bad_d = s_ix_lpn >= 32'(SLOG_LPNS);
                    a_way_d = WAY_W'(s_ix_lpn % 32'(SLOG_WAYS));
                    if (s_ix_op == OP_READ) a_lpn_d = s_ix_lpn / 32'(SLOG_WAYS);
                end else if (rd_take) begin
                    kd_d = K_DESC; is_d = I_TAG;
                    if (rfirst_q) cur_d = free_slot;
                    a_tx_d = s_rd_txid; a_full_d = s_rd_full; a_lpn_d = s_rd_lpn; a_ppn_d = s_rd_ppn;
                    a_off_d = s_rd_off; a_len_d = s_rd_len; a_last_d = s_rd_last;
                end
            end
            I_TAG: is_d = I_TAG2;
            I_TAG2: is_d = I_CMP;
            I_CMP: is_d = I_SEL;
            I_SEL: is_d = I_EXE;
            I_EXE: begin
                is_d = I_IDLE;
                case (kd_q)
                    K_CMD: begin
                        ixv_d = 1'b1; ixl_d = 1'b1; ixc_d = '0; is_d = I_RESP;
                        case (a_op_q)
                            OP_RESERVE: begin
                                if (!txid_ok) ixs_d = STS_BAD_TXID;
                                else if (hit) begin
                                    if (ht.rsv && !own) ixs_d = STS_TX_FULL;
                                    else if (ht.rsv) begin
                                        ixs_d = STS_OK; ixc_d = 8'(SLOG_FRAGS) - 8'(ht.k);
                                    end else if (32'(ht.k) >= SLOG_FRAGS) ixs_d = STS_TX_FULL;
                                    else begin
                                        ixs_d = STS_OK; ixc_d = 8'(SLOG_FRAGS) - 8'(ht.k);
                                        tw_en = 1'b1; tw_tag.rsv = 1'b1; tw_tag.owner = TX_W'(a_tx_q);
                                    end
                                end else if (has_free) begin
                                    ixs_d = STS_OK; ixc_d = 8'(SLOG_FRAGS);
                                    tw_en = 1'b1; tw_way = free_way;
                                    tw_tag = {a_lpn_q, 1'b1, TX_W'(a_tx_q), K_W'(0), SLOT_W'(0), K_W'(0)};
                                end else ixs_d = STS_TX_FULL;
                            end
                            OP_UNRESERVE: begin
                                if (!txid_ok) ixs_d = STS_BAD_TXID;
                                else if (!hit || !own) ixs_d = STS_TX_EMPTY;
                                else if (ht.pend != '0) ixs_d = STS_BAD_FIELD;
                                else begin
                                    ixs_d = STS_OK; tw_en = 1'b1; tw_tag.rsv = 1'b0;
                                    tw_vld = (ht.k != '0);
                                end
                            end
                            OP_LOOKUP: begin
                                ixs_d = STS_OK;
                                if (hit && ht.k != '0) begin
                                    ixv_d = 1'b0; is_d = I_LKRD; lk_way_d = hit_way;
                                    lk_slot_d = ht.head; lk_i_d = '0; ixc_d = 8'(ht.k);
                                end
                            end
                            OP_RELEASE: begin
                                ixs_d = STS_OK;
                                if (hit && ht.pend != '0) ixs_d = STS_BAD_FIELD;
                                else if (hit) begin
                                    ixc_d = (a_n_q >= 8'(ht.k)) ? 8'(ht.k) : a_n_q;
                                    tw_en = 1'b1;
                                    tw_tag.k = ht.k - K_W'(ixc_d);
                                    tw_tag.head = ring(ht.head, int'(ixc_d));
                                    tw_vld = ht.rsv || (tw_tag.k != '0);
                                end
                            end
                            OP_INSERT: begin
                                // recovery: a committed fragment appended to its LPN's F (README_slog
                                // "Recovery loads"); a held record's LPN: BAD_FIELD; room: TX_FULL
                                if (fbad || pbad) ixs_d = STS_BAD_FIELD;
                                else if (hit && ht.pend != '0) ixs_d = STS_BAD_FIELD;
                                else if (hit && kp_full) ixs_d = STS_TX_FULL;
                                else if (hit) begin
                                    ixs_d = STS_OK; ixc_d = 8'(ht.k) + 8'd1;
                                    fw_en = 1'b1; fw_addr = faddr(q_set, hit_way, ring(ht.head, int'(ht.k)));
                                    fw_data = {a_lpgn_q, a_pofs_q, a_off_q, a_len_q};
                                    tw_en = 1'b1; tw_tag.k = ht.k + 1'b1;
                                end else if (has_free) begin
                                    ixs_d = STS_OK; ixc_d = 8'd1;
                                    fw_en = 1'b1; fw_addr = faddr(q_set, free_way, '0);
                                    fw_data = {a_lpgn_q, a_pofs_q, a_off_q, a_len_q};
                                    tw_en = 1'b1; tw_way = free_way;
                                    tw_tag = {a_lpn_q, 1'b0, TX_W'(0), K_W'(1), SLOT_W'(0), K_W'(0)};
                                end else ixs_d = STS_TX_FULL;
                            end
                            OP_APPLY, OP_DISCARD: begin
                                if (!txid_ok) ixs_d = STS_BAD_TXID;
                                else if (!hm_hit) ixs_d = STS_TX_EMPTY;
                                // SLOG_PACK: a dropped record ends by DISCARD only, a written one
                                // (its bytes in the log) by APPLY only
                                else if (SLOG_PACK != 0 && (hd_q[hm_slot] != (a_op_q == OP_DISCARD)))
                                    ixs_d = STS_BAD_FIELD;
                                else begin
                                    ixv_d = 1'b0; is_d = I_IDLE; wi_d = '0; ws_d = hm_slot;
                                    wk_d = (a_op_q == OP_APPLY) ? W_APPLY : W_DISC;
                                end
                            end
                            OP_READ: begin
                                // the slot's entry (n = 255) or its fragment n (0 = the oldest)
                                ixs_d = STS_OK;
                                if (a_bad_q) ixs_d = STS_BAD_FIELD;
                                else if (a_n_q == 8'hFF) begin
                                    re_d = 1'b1;
                                    re_pofs_d = {11'd0, rt_v};
                                    if (rt_v) begin
                                        ixc_d = 8'(rt.k); re_lpn_d = rt.lpn;
                                        re_off_d = {rt.rsv, 3'd0, 8'(rt.pend)}; re_len_d = 12'(rt.owner);
                                    end else begin
                                        re_lpn_d = '0; re_off_d = '0; re_len_d = '0;
                                    end
                                end else if (!rt_v || a_n_q >= 8'(rt.k)) ixs_d = STS_BAD_FIELD;
                                else begin
                                    ixv_d = 1'b0; is_d = I_LKRD; lk_way_d = a_way_q;
                                    lk_slot_d = ring(rt.head, int'(a_n_q)); lk_i_d = K_W'(rt.k - 1'b1);
                                    ixc_d = 8'(rt.k);
                                end
                            end
                            default: ixs_d = STS_BAD_FIELD;
                        endcase
                    end
                    K_DESC: begin
                        // one descriptor of a record
                        if (rfirst_q) begin
                            rtx_d = a_tx_q; nfu_d = '0; nfr_d = '0; rerr_d = 8'd0;
                        end
                        // (a txid with a held record: BAD_TXID, its commit still in flight)
                        if (rfirst_q ? (!txid_ok || hm_hit) : !tx_same) e = rfirst_q ? STS_BAD_TXID : STS_BAD_FIELD;
                        else if (a_full_q) begin
                            if (fu_full) e = STS_TX_FULL;
                        end else begin
                            if (fbad) e = STS_BAD_FIELD;
                            else if (fr_full) e = STS_TX_FULL;
                            else if (!hit || !own) e = STS_BAD_FIELD;
                            else if (kp_full) e = STS_TX_FULL;
                        end
                        if (!rfirst_q && rerr_q != 8'd0) e = rerr_q;     // the first error stays
                        rerr_d = e;
                        if (e == 8'd0) begin
                            d_we = 1'b1;
                            if (a_full_q) nfu_d = (rfirst_q ? '0 : nfu_q) + 1'b1;
                            else begin
                                nfr_d = (rfirst_q ? '0 : nfr_q) + 1'b1;
                                tw_en = 1'b1; tw_tag.pend = ht.pend + 1'b1;
                            end
                        end
                        rfirst_d = a_last_q;
                        if (a_last_q) begin
                            wi_d = '0;
                            rs_d = (e != 8'd0) ? R_CLR : R_EMIT;
                        end
                    end
                    K_CLR: begin
                        if (hit) begin tw_en = 1'b1; tw_tag.pend = '0; end
                        if (32'(wi_q) + 1 >= 32'(nfr_q)) rs_d = R_STS; else wi_d = wi_q + 1'b1;
                    end
                    K_DISC: begin
                        // the fragment dropped; its LPN's last one of the record ends the
                        // reservation (as UNRESERVE: the entry too when F = [])
                        if (hit) begin
                            tw_en = 1'b1; tw_tag.pend = ht.pend - 1'b1;
                            tw_tag.rsv = (ht.pend != K_W'(1));
                            tw_vld = (ht.pend != K_W'(1)) || (ht.k != '0);
                        end
                        if (32'(wi_q) + 1 >= 32'(wn)) begin
                            wk_d = W_NONE; h_clr = 1'b1;
                            is_d = I_RESP; ixv_d = 1'b1; ixl_d = 1'b1; ixs_d = STS_OK;
                            ixc_d = 8'(wn);
                        end else wi_d = wi_q + 1'b1;
                    end
                    default: begin   // K_APPLY
                        if (hit) begin
                            fw_en = 1'b1;
                            fw_addr = faddr(q_set, hit_way, ring(ht.head, int'(ht.k)));
                            fw_data = {hlg_q[ws_q] + 32'(a_pg_q), a_pofs_q, a_off_q, a_len_q};
                            tw_en = 1'b1; tw_tag.k = ht.k + 1'b1; tw_tag.pend = ht.pend - 1'b1;
                            tw_tag.rsv = (ht.pend != K_W'(1));   // the last one: the reservation becomes the entry
                        end
                        if (32'(wi_q) + 1 >= 32'(wn)) begin
                            wk_d = W_NONE; h_clr = 1'b1;
                            is_d = I_RESP; ixv_d = 1'b1; ixl_d = 1'b1; ixs_d = STS_OK;
                            ixc_d = 8'(wn);
                        end else wi_d = wi_q + 1'b1;
                    end
                endcase
            end
            I_RESP: if (m_ix_ready) begin ixv_d = 1'b0; is_d = I_IDLE; re_d = 1'b0; end
            I_LKRD: begin
                // fr_addr = this fragment's slot; its data is registered at this edge
                is_d = I_LKOUT; ixv_d = 1'b1; ixl_d = (32'(lk_i_q) + 1 >= 32'(ixc_q));
            end
            I_LKOUT: if (m_ix_ready) begin
                ixv_d = 1'b0;
                if (ixl_q) is_d = I_IDLE;
                else begin
                    is_d = I_LKRD; lk_i_d = lk_i_q + 1'b1; lk_slot_d = ring(lk_slot_q, 1);
                end
            end
            default: is_d = I_IDLE;
        endcase
        if (rs_q == R_EMIT && emit_done) begin rs_d = R_FREE; h_set = 1'b1; end

        // an error's status beat (an OK record's is the emitter's, after its layout)
        if (rs_q == R_STS && m_rs_ready) rs_d = R_FREE;
        if (s_lg_valid && s_lg_ready) lpgn_d = s_lg_lpgn;
        // the LPGN counter advances by the record's pages once laid out
        if (lay_end) lpgn_d = lpgn_q + 32'(lay_pages) - ((SLOG_PACK != 0 && r_open_q) ? 32'd1 : 32'd0);
        if (SLOG_PACK != 0 && drop_end) lpgn_d = lpgn_q - 32'(rl_q) + (r_open_q ? 32'd1 : 32'd0);
    end

    assign s_ix_ready = ix_take;
    assign s_rd_ready = rd_take;
    assign m_ix_valid = ixv_q && (is_q == I_RESP || is_q == I_LKOUT);
    assign m_ix_sts = ixs_q;
    assign m_ix_cnt = ixc_q;
    assign m_ix_lpgn = (is_q == I_LKOUT) ? fr_data_q.lpgn : re_q ? re_lpn_q : 32'd0;
    assign m_ix_pofs = (is_q == I_LKOUT) ? fr_data_q.pofs : re_q ? re_pofs_q : 12'd0;
    assign m_ix_off = (is_q == I_LKOUT) ? fr_data_q.off : re_q ? re_off_q : 12'd0;
    assign m_ix_len = (is_q == I_LKOUT) ? fr_data_q.len : re_q ? re_len_q : 12'd0;
    assign m_ix_last = ixl_q;
    assign m_rs_valid = (rs_q == R_STS) || (es_q == E_STS);
    assign m_rs_sts = (rs_q == R_STS) ? rerr_q : STS_OK;
    assign m_rs_txid = rtx_q;
    assign m_rs_lpgn = (es_q == E_STS) ? lpgn0_q : 32'd0;
    assign m_rs_reclen = (es_q == E_STS) ? rl_q : 8'd0;
    assign s_lg_ready = (rs_q == R_FREE) && rfirst_q && (is_q == I_IDLE) && (hv_q == '0) && (wk_q == W_NONE) && !rst
                        && (SLOG_PACK == 0 || (!op_open_q && fs_q == FL_IDLE));
    assign lpgn = lpgn_q;

    // descriptor RAM writes (when the descriptor passes its checks)
    always_ff @(posedge clk) begin
        if (d_we) begin
            if (a_full_q) full_mem[FUI_W'(rfirst_q ? '0 : nfu_q)] <= {a_lpn_q, a_ppn_q};
            else fd_mem[fa(cur_q, FRI_W'(rfirst_q ? '0 : nfr_q))] <= {a_lpn_q, a_ppn_q, a_off_q, a_len_q,
                                                          7'(32'(ht.k) + 32'(ht.pend) + 1)};
        end
    end

    // ================= emitter: layout pass, then the log pages
    typedef enum logic [2:0] {E_IDLE, E_DIV, E_LAY, E_STS, E_OUT, E_DONE, E_GO, E_DROP} em_state_e;
    em_state_e        es_q, es_d;
    assign snap = (rs_q == R_EMIT) && (es_q == E_IDLE);
    logic [S_W-1:0]   pos_q, pos_d;       // layout: stream position
    logic [S_W-1:0]   pof_q, pof_d;       // its offset in the page payload (0..P)
    logic [7:0]       pg_q, pg_d;
    logic [FR_W-1:0]  li_q, li_d;         // layout / body fragment index (0..SLOG_TXFRAGS: it reaches nfr_q)
    logic [S_W-1:0]   bytes_q, bytes_d, hdr_q, hdr_d, cfe_q, cfe_d;
    logic [7:0]       rl_q, rl_d;
    logic [S_W-1:0]   s_q, s_d;           // emission: stream byte offset of the next payload word
    logic [11:0]      w_q, w_d;           // word in page
    logic [7:0]       j_q, j_d;           // page of the record
    logic [S_W-1:0]   rem_q, rem_d;       // bytes of the record from this page on
    logic [S_W-1:0]   p2;                 // layout: the fragment's place
    logic             lp_q, lp_d;         // layout: second step of a fragment
    logic [11:0]      len_q, pofs16_q;    // layout: its length; 16 + pof_q
    logic [S_W-1:0]   skip_q;             // layout: the next page's start in the stream
    logic [7:0]       g2;
    logic             fl_we;
    fl_t              fl_wd;
    fd_t              fdl;
    fl_t              fll;
    assign fdl = fd_mem[fa(cur_q, FRI_W'(li_q))];
    assign fll = fl_mem[fa(cur_q, FRI_W'(li_q))];

    always_ff @(posedge clk) if (fl_we) fl_mem[fa(cur_q, FRI_W'(li_q))] <= fl_wd;

    // the word at (j_q, w_q)
    logic        ow_valid, ow_data_word;
    logic [31:0] ow;
    full_t       fu_r;
    fd_t         fd_r;
    fl_t         fl_r;
    logic [S_W-1:0] rel;
    always_comb begin
        ow_valid = 1'b1; ow_data_word = 1'b0; ow = 32'd0; rel = '0;
        fu_r = full_mem[FUI_W'(0)]; fd_r = fd_mem[fa(cur_q, '0)]; fl_r = fl_mem[fa(cur_q, '0)];
        if (w_q < 12'd4) begin
            case (w_q[1:0])
                2'd0: ow = 32'h474F4C53;
                2'd1: ow = lpgn0_q + 32'(j_q);
                2'd2: ow = {16'(32'd16 + ((rem_q > S_W'(P)) ? 32'(P) : 32'(rem_q))),
                            (j_q == 8'd0) ? 16'd16 : 16'hFFFF};
                default: ow = 32'd0;
            endcase
        end else if (s_q < S_W'(16)) begin
            case (s_q[3:2])
                2'd0: ow = {8'd0, 4'd0, rncf_q, 8'd1, 8'h01};
                2'd1: ow = {rl_q, 16'(32'(nfu_q) + 32'(nfr_q)), rtx_q};
                2'd2: ow = 32'(bytes_q);
                default: ow = 32'd0;
            endcase
        end else if (s_q < cfe_q) begin
            rel = s_q - S_W'(16);
            if (rel[2] == 1'b0) ow = {rcf_rl_q[rel[5:3]], 16'd0, rcf_tx_q[rel[5:3]]};
            else ow = rcf_lg_q[rel[5:3]];
        end else if (s_q < hdr_q) begin
            rel = s_q - cfe_q;
            if (32'(rel[S_W-1:4]) < 32'(nfu_q)) begin
                fu_r = full_mem[FUI_W'(rel[S_W-1:4])];
                case (rel[3:2])
                    2'd0: ow = fu_r.lpn;
                    2'd1: ow = 32'(fu_r.ppn);
                    default: ow = 32'd0;
                endcase
            end else begin
                fd_r = fd_mem[fa(cur_q, FRI_W'(32'(rel[S_W-1:4]) - 32'(nfu_q)))];
                fl_r = fl_mem[fa(cur_q, FRI_W'(32'(rel[S_W-1:4]) - 32'(nfu_q)))];
                case (rel[3:2])
                    2'd0: ow = fd_r.lpn;
                    2'd1: ow = 32'(fd_r.ppn);
                    2'd2: ow = {1'b1, fd_r.ver, fd_r.off, fd_r.len};
                    default: ow = 32'(fl_r.loc);
                endcase
            end
        end else if (s_q < bytes_q && 32'(li_q) < 32'(nfr_q) && s_q >= fll.loc) begin
            ow_data_word = 1'b1; ow_valid = s_rw_valid; ow = s_rw_data;
        end
    end

    // ---- SLOG_PACK = 1: the open page. The emitter writes a record's words into the page buffer
    // (pb_mem, payload words 4..PW-1) from the open page's end on; a page that fills is flushed (sent
    // on m_lp with its header) while the emitter waits; the page where a record ends stays open
    // until a later record fills it or s_seal closes it
    logic [31:0]    pb_mem [PW];
    logic [31:0]    pb_rd_q;
    logic           op_open_q, op_open_d;     // a page is open (the buffer holds its payload)
    logic [15:0]    op_first_q, op_first_d;   // its `first` (0xFFFF: no record starts in it)
    logic [15:0]    op_used_q, op_used_d;     // its `used`
    logic [7:0]     op_nend_q, op_nend_d;     // records that end in it
    logic           r_open_q, r_open_d;       // the record started in an open page
    logic [S_W-1:0] b0_q, b0_d;               // ... at this payload byte (0: a new page)
    logic [S_W-1:0] dw_q, dw_d;               // its fragments' words (a dropped record's, discarded)
    logic           pb_we, e_wr_ok;
    // the flush: FL_RD addresses the buffer word, FL_OUT offers it
    typedef enum logic [1:0] {FL_IDLE, FL_RD, FL_OUT} fl_state_e;
    fl_state_e      fs_q, fs_d;
    logic [11:0]    fw_q, fw_d;
    logic [31:0]    fl_lg_q, fl_lg_d;
    logic [15:0]    fl_first_q, fl_first_d, fl_used_q, fl_used_d;
    logic [7:0]     fl_nend_q, fl_nend_d;
    logic           drop_end;                 // a dropped record's words are all taken
    logic           seal_take;
    always_ff @(posedge clk) begin
        if (pb_we) pb_mem[w_q[PB_W-1:0]] <= ow;
        pb_rd_q <= pb_mem[fw_q[PB_W-1:0]];
    end
    assign e_wr_ok = (fs_q == FL_IDLE);       // the emitter's write: not while the buffer is sent
    assign seal_take = (SLOG_PACK != 0) && s_seal_valid && (fs_q == FL_IDLE) && (es_q == E_IDLE)
                       && (rs_q != R_EMIT) && !rst;
    assign s_seal_ready = seal_take;
    assign s_go_ready = (SLOG_PACK != 0) && (es_q == E_GO) && !rst;
    assign pg_open = op_open_q;
    // a record between its verdict and its last byte written (or its drop's last word), or a
    // page being sent: the backend's page taker stays with the record until it is 0
    assign wr_busy = (SLOG_PACK != 0) && (es_q == E_GO || es_q == E_OUT || es_q == E_DROP || fs_q != FL_IDLE);
    // (its seq must follow that record's previous page's: persistence §10.2, consecutive seqs)
    assign pg_cont = op_open_q && op_first_q != 16'd16;

    logic [31:0] fl_word;
    always_comb begin
        case (fw_q)
            12'd0: fl_word = 32'h474F4C53;
            12'd1: fl_word = fl_lg_q;
            12'd2: fl_word = {fl_used_q, fl_first_q};
            12'd3: fl_word = 32'd0;
            default: fl_word = (32'(fw_q) * 4 < 32'(fl_used_q)) ? pb_rd_q : 32'd0;
        endcase
    end

    if (SLOG_PACK != 0) begin : g_pack_out
        assign m_lp_valid = (fs_q == FL_OUT);
        assign m_lp_data = fl_word;
        assign m_lp_last = (32'(fw_q) == PW - 1);
        assign m_lp_lpgn = fl_lg_q;
        assign m_lp_end = (fl_nend_q != 8'd0);
        assign m_lp_nend = fl_nend_q;
        assign s_rw_ready = ((es_q == E_OUT) && ow_data_word && e_wr_ok)
                            || ((es_q == E_DROP) && dw_q != '0);
    end else begin : g_page_out
        assign m_lp_valid = (es_q == E_OUT) && ow_valid;
        assign m_lp_data = ow;
        assign m_lp_last = (32'(w_q) == PW - 1);
        assign m_lp_lpgn = lpgn0_q + 32'(j_q);
        assign m_lp_end = (j_q + 8'd1 == rl_q);
        assign m_lp_nend = {7'd0, m_lp_end};
        assign s_rw_ready = (es_q == E_OUT) && ow_data_word && m_lp_ready;
    end
    assign emit_done = (es_q == E_DONE);

    always_comb begin
        es_d = es_q; pos_d = pos_q; pof_d = pof_q; pg_d = pg_q; li_d = li_q; bytes_d = bytes_q;
        hdr_d = hdr_q; cfe_d = cfe_q; rl_d = rl_q; s_d = s_q; w_d = w_q; j_d = j_q; rem_d = rem_q;
        fl_we = 1'b0; fl_wd = '0; p2 = pos_q; g2 = pg_q; lp_d = lp_q;
        lpgn0_d = lpgn0_q;
        op_open_d = op_open_q; op_first_d = op_first_q; op_used_d = op_used_q; op_nend_d = op_nend_q;
        r_open_d = r_open_q; b0_d = b0_q; dw_d = dw_q; pb_we = 1'b0; drop_end = 1'b0;
        fs_d = fs_q; fw_d = fw_q; fl_lg_d = fl_lg_q; fl_first_d = fl_first_q; fl_used_d = fl_used_q;
        fl_nend_d = fl_nend_q;
        case (es_q)
            E_IDLE: if (snap) begin
                cfe_d = S_W'(16 + 8 * int'(ncf_q));
                hdr_d = S_W'(16 + 8 * int'(ncf_q) + 16 * (int'(nfu_q) + int'(nfr_q)));
                pos_d = S_W'(16 + 8 * int'(ncf_q) + 16 * (int'(nfu_q) + int'(nfr_q)));
                pof_d = pos_d; pg_d = '0; li_d = '0; dw_d = '0;
                lpgn0_d = lpgn_q;
                if (SLOG_PACK != 0) begin r_open_d = 1'b0; b0_d = '0; end
                if (SLOG_PACK != 0 && op_open_q) begin
                    // the record continues the open page (its LPGN is the counter's last)
                    r_open_d = 1'b1; b0_d = S_W'(op_used_q - 16'd16);
                    pof_d = pos_d + S_W'(op_used_q - 16'd16);
                    lpgn0_d = lpgn_q - 32'd1;
                end
                es_d = E_DIV;
            end
            E_DIV: begin
                if (32'(pof_q) > P) begin pof_d = pof_q - S_W'(P); pg_d = pg_q + 1'b1; end
                else es_d = E_LAY;
            end
            E_LAY: begin
                if (32'(li_q) >= 32'(nfr_q)) begin
                    bytes_d = pos_q;
                    rl_d = lay_pages;
                    li_d = '0; s_d = '0; w_d = '0; j_d = '0; rem_d = pos_q;
                    if (SLOG_PACK != 0) w_d = 12'(32'd4 + 32'(b0_q) / 4);
                    es_d = E_STS;
                end else if (!lp_q) begin
                    // step 1: the fragment's length and the next page's start, registered
                    lp_d = 1'b1;
                end else begin
                    // step 2: here or at the next page's start (both sums in parallel)
                    lp_d = 1'b0;
                    p2 = pos_q; g2 = pg_q;
                    pos_d = pos_q + S_W'(len_q); pof_d = pof_q + S_W'(len_q);
                    if (32'(pof_q) + 32'(len_q) > P) begin
                        p2 = skip_q; g2 = pg_q + 1'b1;
                        pos_d = skip_q + S_W'(len_q); pof_d = S_W'(len_q);
                    end
                    fl_we = 1'b1;
                    fl_wd = {p2, g2, pofs16_q};
                    if (32'(pof_q) + 32'(len_q) > P) fl_wd = {p2, g2, 12'd16};
                    pg_d = g2;
                    li_d = li_q + 1'b1;
                    if (SLOG_PACK != 0) dw_d = dw_q + S_W'(len_q[11:2]);
                end
            end
            E_STS: if (m_rs_ready) es_d = (SLOG_PACK != 0) ? E_GO : E_OUT;
            E_GO: if (s_go_valid) begin
                if (s_go_drop) es_d = E_DROP;
                else begin
                    es_d = E_OUT;
                    if (!op_open_q) begin          // a new page: the record's first
                        op_open_d = 1'b1; op_first_d = 16'hFFFF; op_nend_d = '0;
                    end
                end
            end
            E_DROP: begin
                // a dropped record: its fragments' words taken and discarded, the LPGN counter back
                if (dw_q == '0) begin drop_end = 1'b1; es_d = E_DONE; end
                else if (s_rw_valid) dw_d = dw_q - 1'b1;
            end
            E_OUT: if (SLOG_PACK != 0) begin
                if (ow_valid && e_wr_ok) begin
                    // a payload word into the page buffer
                    pb_we = 1'b1;
                    s_d = s_q + S_W'(4);
                    if (ow_data_word && s_q + S_W'(4) == fll.loc + S_W'(fdl.len)) li_d = li_q + 1'b1;
                    if (s_q == '0 && op_first_q == 16'hFFFF) op_first_d = {2'b0, w_q, 2'b0};
                    op_used_d = {2'b0, w_q + 12'd1, 2'b0};
                    if (s_q + S_W'(4) == bytes_q) begin
                        op_nend_d = op_nend_q + 8'd1;
                        es_d = E_DONE;
                    end
                    if (32'(w_q) == PW - 1) begin
                        // the page is full: sent now; the record (if it goes on) opens the next
                        fs_d = FL_RD; fw_d = '0; fl_lg_d = lpgn0_q + 32'(j_q); fl_used_d = 16'(PAGE_BYTES);
                        fl_first_d = (s_q == '0 && op_first_q == 16'hFFFF) ? {2'b0, w_q, 2'b0} : op_first_q;
                        fl_nend_d = op_nend_d;
                        op_first_d = 16'hFFFF; op_nend_d = '0;
                        op_open_d = (s_q + S_W'(4) != bytes_q);
                        w_d = 12'd4; j_d = j_q + 1'b1;
                    end else w_d = w_q + 1'b1;
                end
            end else if (m_lp_valid && m_lp_ready) begin
                if (w_q >= 12'd4) begin
                    s_d = s_q + S_W'(4);
                    // the body's fragment pointer moves past a fragment's final word
                    if (ow_data_word && s_q + S_W'(4) == fll.loc + S_W'(fdl.len)) li_d = li_q + 1'b1;
                end
                if (32'(w_q) == PW - 1) begin
                    w_d = '0; j_d = j_q + 1'b1; rem_d = rem_q - S_W'(P);
                    if (j_q + 8'd1 == rl_q) es_d = E_DONE;
                end else w_d = w_q + 1'b1;
            end
            E_DONE: if (rs_q == R_FREE) es_d = E_IDLE;
            default: es_d = E_IDLE;
        endcase
        // s_seal: the open page sent as it is
        if (seal_take && op_open_q) begin
            fs_d = FL_RD; fw_d = '0; fl_lg_d = lpgn_q - 32'd1; fl_used_d = op_used_q;
            fl_first_d = op_first_q; fl_nend_d = op_nend_q;
            op_open_d = 1'b0;
        end
        // the flush: one word every two cycles (the buffer's registered read)
        if (SLOG_PACK != 0) case (fs_q)
            FL_RD: fs_d = FL_OUT;
            FL_OUT: if (m_lp_ready) begin
                if (32'(fw_q) == PW - 1) fs_d = FL_IDLE;
                else begin fw_d = fw_q + 1'b1; fs_d = FL_RD; end
            end
            default: ;
        endcase
    end

    // emitter registers
    always_ff @(posedge clk) begin
        pos_q <= pos_d; pof_q <= pof_d; pg_q <= pg_d; li_q <= li_d; bytes_q <= bytes_d;
        hdr_q <= hdr_d; cfe_q <= cfe_d; rl_q <= rl_d; s_q <= s_d; w_q <= w_d; j_q <= j_d; rem_q <= rem_d;
        lpgn0_q <= lpgn0_d;
        op_first_q <= op_first_d; op_used_q <= op_used_d; op_nend_q <= op_nend_d;
        r_open_q <= r_open_d; b0_q <= b0_d; dw_q <= dw_d;
        if (es_q == E_IDLE) e_drp_q <= 1'b0;
        else if (es_q == E_DROP) e_drp_q <= 1'b1;
        fw_q <= fw_d; fl_lg_q <= fl_lg_d; fl_first_q <= fl_first_d; fl_used_q <= fl_used_d;
        fl_nend_q <= fl_nend_d;
        if (rst) begin op_open_q <= 1'b0; fs_q <= FL_IDLE; end
        else begin op_open_q <= op_open_d; fs_q <= fs_d; end
        len_q <= fdl.len; skip_q <= pos_q + (S_W'(P) - pof_q); pofs16_q <= 12'(32'd16 + 32'(pof_q));
        if (rst) begin es_q <= E_IDLE; lp_q <= 1'b0; end
        else begin es_q <= es_d; lp_q <= lp_d; end
    end
    assign lay_end = (es_q == E_LAY) && (32'(li_q) >= 32'(nfr_q));
    assign lay_pages = pg_q + ((pof_q != '0) ? 8'd1 : 8'd0);

    // index / record registers
    always_ff @(posedge clk) begin
        rtx_q <= rtx_d; rerr_q <= rerr_d; nfu_q <= nfu_d; nfr_q <= nfr_d; wi_q <= wi_d;
        ixl_q <= ixl_d; ixs_q <= ixs_d; ixc_q <= ixc_d;
        kd_q <= kd_d; a_lpn_q <= a_lpn_d; a_op_q <= a_op_d; a_tx_q <= a_tx_d; a_n_q <= a_n_d;
        a_full_q <= a_full_d; a_last_q <= a_last_d; a_ppn_q <= a_ppn_d; a_off_q <= a_off_d;
        a_len_q <= a_len_d; a_pofs_q <= a_pofs_d; a_pg_q <= a_pg_d; a_lpgn_q <= a_lpgn_d;
        lk_slot_q <= lk_slot_d; lk_i_q <= lk_i_d; lk_way_q <= lk_way_d;
        a_way_q <= a_way_d; a_bad_q <= a_bad_d;
        re_lpn_q <= re_lpn_d; re_off_q <= re_off_d; re_len_q <= re_len_d; re_pofs_q <= re_pofs_d;
        cur_q <= cur_d; ws_q <= ws_d;
        if (h_set) begin
            htx_q[cur_q] <= rtx_q; hnfr_q[cur_q] <= nfr_q; hlg_q[cur_q] <= lpgn0_q;
            hd_q[cur_q] <= (SLOG_PACK != 0) && e_drp_q;
        end
        if (rst) begin
            is_q <= I_IDLE; rs_q <= R_FREE; rfirst_q <= 1'b1; ixv_q <= 1'b0; lpgn_q <= 32'd0; re_q <= 1'b0;
            hv_q <= '0; wk_q <= W_NONE;
        end else begin
            is_q <= is_d; rs_q <= rs_d; rfirst_q <= rfirst_d; ixv_q <= ixv_d; lpgn_q <= lpgn_d; re_q <= re_d;
            wk_q <= wk_d;
            hv_q <= (hv_q & ~(h_clr ? (SLOG_RECS'(1) << ws_q) : '0)) | (h_set ? (SLOG_RECS'(1) << cur_q) : '0);
        end
    end

    // completeness flags: the list; an OK record takes it (and empties it) at its status beat
    always_ff @(posedge clk) begin
        if (snap) begin
            rncf_q <= ncf_q;
            for (int i = 0; i < NCF; i++) begin
                rcf_tx_q[i] <= cf_tx_q[i]; rcf_rl_q[i] <= cf_rl_q[i]; rcf_lg_q[i] <= cf_lg_q[i];
            end
        end
        if (rst) ncf_q <= '0;
        else if (snap) begin
            ncf_q <= {3'd0, s_cf_valid};
            cf_tx_q[0] <= s_cf_txid; cf_rl_q[0] <= s_cf_reclen; cf_lg_q[0] <= s_cf_lpgn;
        end else if (s_cf_valid && ncf_q < 4'(NCF)) begin
            cf_tx_q[ncf_q[2:0]] <= s_cf_txid; cf_rl_q[ncf_q[2:0]] <= s_cf_reclen;
            cf_lg_q[ncf_q[2:0]] <= s_cf_lpgn;
            ncf_q <= ncf_q + 1'b1;
        end
    end

    logic unused_ok;
    assign unused_ok = ^{fdw, flw, fdl, fll, fl_r, rel[1:0], fl_word, w_q[11:PB_W], fw_q[11:PB_W],
                         s_go_drop, s_seal_valid};

`ifndef SYNTHESIS
    // invariants: a way's entry is never duplicated in its set; k never exceeds SLOG_FRAGS; no tag
    // write during the clear after rst; a tag write's way was valid as the RAM holds it now exactly
    // when the operation read it valid (t_vld_q, what `used` counts from); `used` never exceeds
    // SLOG_LPNS; a held record's pages are emitted only after the layout
    always_ff @(posedge clk) if (!rst) begin
        if (clr_q) begin
            assert (!tw_en) else $error("%m: a tag write during the clear after rst");
        end else begin
            for (int w = 0; w < SLOG_WAYS; w++)
                if (q_tagv[w][TAG_W]) begin
                    /* verilator lint_off UNUSEDSIGNAL */
                    tag_t t;                         // (sim only: lpn, owner, head unused here)
                    /* verilator lint_on UNUSEDSIGNAL */
                    t = q_tagv[w][TAG_W-1:0];
                    assert (32'(t.k) + 32'(t.pend) <= SLOG_FRAGS)
                        else $error("%m: entry with more than SLOG_FRAGS fragments");
                    assert (t.pend == '0 || t.rsv)
                        else $error("%m: pending fragments without a reservation");
                    for (int v = w + 1; v < SLOG_WAYS; v++)
                        assert (!q_tagv[v][TAG_W] || tag_lpn(q_tagv[v]) != t.lpn)
                            else $error("%m: an LPN twice in one set");
                end
            if (tw_en)
                assert (t_vld_q[tw_way] == q_tagv[tw_way][TAG_W])
                    else $error("%m: a tag write's way valid %0d, read as %0d", q_tagv[tw_way][TAG_W],
                                t_vld_q[tw_way]);
        end
        assert (32'(used_q) <= SLOG_LPNS) else $error("%m: used %0d above SLOG_LPNS", used_q);
        if (es_q == E_OUT) assert (rs_q == R_EMIT) else $error("%m: pages out without a record");
        // held records: distinct txids; the emitted record's slot is not held; a walk's slot is held
        for (int i = 0; i < SLOG_RECS; i++)
            for (int j = i + 1; j < SLOG_RECS; j++)
                assert (!(hv_q[i] && hv_q[j] && htx_q[i] == htx_q[j]))
                    else $error("%m: two held records of txid %0d", htx_q[i]);
        if (rs_q != R_FREE || !rfirst_q) assert (!hv_q[cur_q]) else $error("%m: a record in a held slot");
        if (wk_q != W_NONE) assert (hv_q[ws_q]) else $error("%m: a walk of a slot not held");
        // a body word lies inside the fragment it is taken for
        if ((es_q == E_OUT) && ow_valid && ow_data_word)
            assert (32'(s_q) + 4 <= 32'(fll.loc) + 32'(fdl.len))
                else $error("%m: a body word beyond its fragment");
    end
`endif
endmodule
`resetall
