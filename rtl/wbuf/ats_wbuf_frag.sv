// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_frag: the write buffer's FRAG table (DiffTx's S-Log, docs/architecture.md §11.3 "The
// write buffer's part exactly"), a unit of its own, instantiated by ats_wbuf when FRAG_SLOTS > 0. FRAG_SLOTS
// entries {txid, lpn, room} in registers, their word masks (PWORDS bits each) in a small block
// RAM as 32-bit mask words: every access to a mask is sequential (a DIFFWRITE's range, a walk
// over the page), so no bit of it is ever addressed at random (a register mask with random access
// cost 22,801 LUT4 at 4 entries x 4 KiB pages). Operations, one at a time (`busy`):
//   create   a new entry at the lowest free number, its mask cleared (PWORDS/32 writes);
//   range    words lo..hi-1 of an entry set (a read-modify-write per mask word);
//   scan     a walk over an entry's mask, counting its set words and runs (maximal sequences of
//            set bits); mode 1 also sends the runs in word order on m_run ({first word, words},
//            `last` on the final run), mode 2 sends every bit on m_bit (the overlay's write
//            enables: a conversion's read-modify-write). Modes 0 and 1 take a bit a cycle only where a run
//            starts or ends and jump over the bits between (to the mask word's next such bit or
//            its end), mode 2 takes one bit a cycle.
// rtl/wbuf/README.md "Units".
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_wbuf_frag #(
    parameter int FRAG_SLOTS = 4,                 // entries, a power of two 2..64
    parameter int PWORDS     = 1024,              // words per page, a power of two 16..8192
    parameter int LPN_W      = 14
) (
    input  wire logic                          clk,
    input  wire logic                          rst,           // synchronous: every entry free, idle
    // lookup of (lk_txid, lk_lpn) over the table (combinational; the caller registers it)
    input  wire logic [5:0]                    lk_txid,
    input  wire logic [LPN_W-1:0]              lk_lpn,
    output logic                               lk_hit,
    output logic [$clog2(FRAG_SLOTS)-1:0]      lk_num,
    output logic [$clog2(FRAG_SLOTS):0]        lk_txcnt,      // entries held by lk_txid
    output logic                               free_v,        // an entry is free: free_num
    output logic [$clog2(FRAG_SLOTS)-1:0]      free_num,      // the lowest free number
    // the entries of one txid as a vector (combinational): the commit's and abort's walks
    input  wire logic [5:0]                    tv_txid,
    output logic [FRAG_SLOTS-1:0]              tv_vec,
    input  wire logic [5:0]                    tv2_txid,      // a second one (the write buffer's FSM and its record streamer)
    output logic [FRAG_SLOTS-1:0]              tv2_vec,
    // one entry's fields
    input  wire logic [$clog2(FRAG_SLOTS)-1:0] st_num,
    output logic                               st_v,
    output logic [5:0]                         st_txid,
    output logic [LPN_W-1:0]                   st_lpn,
    output logic [7:0]                         st_room,
    // operations, taken while busy is low (one at most per cycle)
    output logic                               busy,
    input  wire logic                          cr_en,         // create at free_num (free_v must be 1)
    input  wire logic [5:0]                    cr_txid,
    input  wire logic [LPN_W-1:0]              cr_lpn,
    input  wire logic [7:0]                    cr_room,
    input  wire logic                          rs_en,         // set words rs_lo..rs_hi-1 of entry rs_num
    input  wire logic [$clog2(FRAG_SLOTS)-1:0] rs_num,
    input  wire logic [$clog2(PWORDS):0]       rs_lo,
    input  wire logic [$clog2(PWORDS):0]       rs_hi,         // rs_lo < rs_hi <= PWORDS
    input  wire logic                          sc_en,         // scan entry sc_num
    input  wire logic [$clog2(FRAG_SLOTS)-1:0] sc_num,
    input  wire logic [1:0]                    sc_mode,       // 0 count, 1 runs on m_run, 2 bits on m_bit
    input  wire logic                          fr_en,         // free one entry (any time)
    input  wire logic [$clog2(FRAG_SLOTS)-1:0] fr_num,
    input  wire logic                          frt_en,        // free every entry of a txid (any time)
    input  wire logic [5:0]                    frt_txid,
    // the last scan's counts (held until the next scan starts)
    output logic [$clog2(PWORDS):0]            sc_words,
    output logic [$clog2(PWORDS):0]            sc_runs,
    // scan outputs
    output logic                               m_run_valid,
    input  wire logic                          m_run_ready,
    output logic [$clog2(PWORDS)-1:0]          m_run_first,
    output logic [$clog2(PWORDS):0]            m_run_words,
    output logic                               m_run_last,
    output logic                               m_bit_valid,
    input  wire logic                          m_bit_ready,
    output logic                               m_bit,
    output logic                               m_bit_last
);
    localparam int NW   = $clog2(FRAG_SLOTS);
    localparam int WI_W = $clog2(PWORDS);
    localparam int BPW  = (PWORDS < 32) ? PWORDS : 32;   // page words per mask word
    localparam int MW   = PWORDS / BPW;           // mask words per entry
    localparam int G_W  = (MW > 1) ? $clog2(MW) : 1;
    localparam int MA_W = $clog2(FRAG_SLOTS * MW);

    if (FRAG_SLOTS < 2 || FRAG_SLOTS > 64 || (FRAG_SLOTS & (FRAG_SLOTS - 1)) != 0) begin : g_chk_n
        $fatal(1, "ats_wbuf_frag: FRAG_SLOTS must be a power of two in 2..64 (%m)");
    end
    if (PWORDS < 16 || PWORDS > 8192 || (PWORDS & (PWORDS - 1)) != 0) begin : g_chk_pw
        $fatal(1, "ats_wbuf_frag: PWORDS must be a power of two in 16..8192 (%m)");
    end

    // ------------------------------------------------------------ table
    logic [FRAG_SLOTS-1:0] v_q;
    logic [5:0]            tx_q   [FRAG_SLOTS];
    logic [LPN_W-1:0]      lpn_q  [FRAG_SLOTS];
    logic [7:0]            room_q [FRAG_SLOTS];

    always_comb begin
        lk_hit   = 1'b0;
        lk_num   = '0;
        lk_txcnt = '0;
        free_v   = 1'b0;
        free_num = '0;
        for (int n = FRAG_SLOTS - 1; n >= 0; n--) begin
            if (v_q[n] && tx_q[n] == lk_txid && lpn_q[n] == lk_lpn) begin
                lk_hit = 1'b1;
                lk_num = NW'(n);
            end
            if (!v_q[n]) begin
                free_v   = 1'b1;
                free_num = NW'(n);
            end
        end
        for (int n = 0; n < FRAG_SLOTS; n++) lk_txcnt = lk_txcnt + (NW + 1)'(v_q[n] && tx_q[n] == lk_txid);
        for (int n = 0; n < FRAG_SLOTS; n++) tv_vec[n] = v_q[n] && tx_q[n] == tv_txid;
        for (int n = 0; n < FRAG_SLOTS; n++) tv2_vec[n] = v_q[n] && tx_q[n] == tv2_txid;
    end
    assign st_v    = v_q[st_num];
    assign st_txid = tx_q[st_num];
    assign st_lpn  = lpn_q[st_num];
    assign st_room = room_q[st_num];

    // ------------------------------------------------------------ mask RAM (read latency 2)
    logic               m_we;
    logic [MA_W-1:0]    m_wa, m_ra;
    logic [31:0]        m_wd, m_rd;
    ats_wbuf_mem #(.DEPTH(FRAG_SLOTS * MW)) u_mask (
        .clk    (clk),
        .wr_en  (m_we),
        .wr_addr(m_wa),
        .wr_data(m_wd),
        .rd_addr(m_ra),
        .rd_data(m_rd)
    );

    typedef enum logic [3:0] {S_IDLE, S_CLR, S_RS_RD, S_RS_W1, S_RS_WR, S_SC_RD, S_SC_W1, S_SC_LD,
                              S_SC_WALK, S_SC_F1, S_SC_F2} st_e;
    st_e                st_q;
    logic [NW-1:0]      num_q;
    logic [G_W-1:0]     g_q;                      // mask word (group of 32 page words)
    logic [WI_W:0]      lo_q, hi_q;
    logic [1:0]         mode_q;
    logic [31:0]        cur_q;                    // the mask word being walked
    logic [4:0]         bi_q;                     // its bit
    logic               in_run_q, pend_v_q, out_v_q, out_last_q;
    logic [WI_W-1:0]    start_q, pend_first_q, out_first_q;
    logic [WI_W:0]      pend_words_q, out_words_q, words_q, runs_q;
    logic [WI_W-1:0]    w;                        // page word being walked
    logic               b, found, out_free, step, last_w, last_g;
    logic               sc_gate, run_end, ho;     // the run hand-over, below
    logic [4:0]         lo_b, hi_b;
    logic [31:0]        rs_mask;
    // modes 0 / 1: a bit equal to in_run_q starts or ends no run, so the walk jumps from it to the
    // next bit of the word that differs (nx_b) or past the word's end (nx_end), counting the
    // words it passes inside a run; a bit that differs is walked alone, as in mode 2
    logic               jump, nx_end;
    logic [5:0]         nx_b;
    logic [31:0]        diff_m;

    assign busy     = st_q != S_IDLE || out_v_q;
    assign m_ra     = MA_W'(32'(num_q) * MW + 32'(g_q));
    assign m_wa     = m_ra;
    assign last_g   = g_q == G_W'(MW - 1);
    // the range's bits of mask word g_q: from lo's bit in lo's word (else 0) to hi-1's bit in
    // hi-1's word (else 31); with fewer than 32 page words there is one mask word (g_q = 0)
    assign lo_b     = (lo_q >> 5 == (WI_W + 1)'(g_q)) ? 5'(lo_q) : 5'd0;
    assign hi_b     = ((hi_q - 1'b1) >> 5 == (WI_W + 1)'(g_q)) ? 5'(hi_q - 1'b1) : 5'd31;
    assign rs_mask  = (32'hFFFF_FFFF << lo_b) & (32'hFFFF_FFFF >> (5'd31 - hi_b));
    assign m_we     = st_q == S_CLR || st_q == S_RS_WR;
    assign m_wd     = (st_q == S_CLR) ? 32'd0 : (m_rd | rs_mask);

    // the walk: bit bi_q of cur_q is page word w; a run ends at a 0 after a 1 (found), or at the
    // page end (S_SC_F1)
    assign w        = WI_W'(32'(g_q) * BPW + 32'(bi_q));
    assign b        = cur_q[bi_q];
    assign found    = !b && in_run_q;
    assign out_free = !out_v_q || m_run_ready;
    assign last_w   = jump ? nx_end : (bi_q == 5'(BPW - 1));
    assign jump     = mode_q != 2'd2 && b == in_run_q;
    // the bits above bi_q (in the word's BPW bits) that differ from in_run_q
    assign diff_m   = (in_run_q ? ~cur_q : cur_q) & (32'hFFFF_FFFF << bi_q) & (32'hFFFF_FFFF >> (32 - BPW));
    always_comb begin
        nx_b = 6'(BPW);
        for (int i = BPW - 1; i >= 0; i--) if (diff_m[i]) nx_b = 6'(i);
    end
    assign nx_end   = nx_b == 6'(BPW);
    assign step     = st_q == S_SC_WALK &&
                      ((mode_q == 2'd2) ? m_bit_ready : !(mode_q == 2'd1 && found && pend_v_q && !out_free));
    // The run hand-over, one rule for the walk and the page end: a run that ends (a 0 after a 1 in
    // the walk, or a run still open at the page end, S_SC_F1) is loaded into the pending register
    // and the run held there before moves to the output register (mode 1 only offers it); at
    // S_SC_F2 the pending run leaves with last = 1. In mode 1 a hand-over waits for a free output.
    assign sc_gate  = !pend_v_q || out_free || mode_q != 2'd1;
    assign run_end  = (st_q == S_SC_WALK && step && found) || (st_q == S_SC_F1 && in_run_q && sc_gate);
    assign ho       = pend_v_q && (run_end || (st_q == S_SC_F2 && sc_gate));
    assign m_bit_valid = st_q == S_SC_WALK && mode_q == 2'd2;
    assign m_bit       = b;
    assign m_bit_last  = last_g && last_w;
    assign m_run_valid = out_v_q;
    assign m_run_first = out_first_q;
    assign m_run_words = out_words_q;
    assign m_run_last  = out_last_q;
    assign sc_words    = words_q;
    assign sc_runs     = runs_q;

    always_ff @(posedge clk) begin
        if (out_v_q && m_run_ready) out_v_q <= 1'b0;
        if (fr_en) v_q[fr_num] <= 1'b0;
        if (frt_en) begin
            for (int n = 0; n < FRAG_SLOTS; n++) if (tx_q[n] == frt_txid) v_q[n] <= 1'b0;
        end
        unique case (st_q)
            S_IDLE: begin
                g_q <= '0;
                if (cr_en && !out_v_q) begin
                    v_q[free_num]    <= 1'b1;
                    tx_q[free_num]   <= cr_txid;
                    lpn_q[free_num]  <= cr_lpn;
                    room_q[free_num] <= cr_room;
                    num_q <= free_num;
                    st_q  <= S_CLR;
                end else if (rs_en && !out_v_q) begin
                    num_q <= rs_num;
                    lo_q  <= rs_lo;
                    hi_q  <= rs_hi;
                    g_q   <= G_W'(rs_lo >> 5);
                    st_q  <= S_RS_RD;
                end else if (sc_en && !out_v_q) begin
                    num_q    <= sc_num;
                    mode_q   <= sc_mode;
                    words_q  <= '0;
                    runs_q   <= '0;
                    in_run_q <= 1'b0;
                    pend_v_q <= 1'b0;
                    st_q     <= S_SC_RD;
                end
            end
            S_CLR: begin
                g_q <= g_q + 1'b1;
                if (last_g) st_q <= S_IDLE;
            end
            S_RS_RD: st_q <= S_RS_W1;             // m_ra = this word
            S_RS_W1: st_q <= S_RS_WR;
            S_RS_WR: begin                        // m_rd here: written back with the range's bits
                g_q  <= g_q + 1'b1;
                st_q <= ((hi_q - 1'b1) >> 5 == (WI_W + 1)'(g_q)) ? S_IDLE : S_RS_RD;
            end
            S_SC_RD: st_q <= S_SC_W1;
            S_SC_W1: st_q <= S_SC_LD;
            S_SC_LD: begin
                cur_q <= m_rd;
                bi_q  <= '0;
                st_q  <= S_SC_WALK;
            end
            S_SC_WALK: if (step) begin
                if (jump) begin                   // no run starts or ends at bits bi_q..nx_b-1
                    if (in_run_q) words_q <= words_q + (WI_W + 1)'(nx_b - 6'(bi_q));
                    bi_q <= 5'(nx_b);
                end else begin
                    words_q <= words_q + (WI_W + 1)'(b);
                    if (b && !in_run_q) start_q <= w;
                    in_run_q <= b;
                    bi_q <= bi_q + 1'b1;
                end
                if (last_w) begin
                    g_q  <= g_q + 1'b1;
                    st_q <= last_g ? S_SC_F1 : S_SC_RD;
                end
            end
            // page end: a run still open ends at the last word (run_end), then the held run leaves
            // with last = 1 (ho at S_SC_F2)
            S_SC_F1: if (!in_run_q || sc_gate) begin
                in_run_q <= 1'b0;
                st_q     <= S_SC_F2;
            end
            S_SC_F2: if (sc_gate) begin
                pend_v_q <= 1'b0;
                st_q     <= S_IDLE;
            end
            default: st_q <= S_IDLE;
        endcase
        if (ho) begin
            out_v_q     <= mode_q == 2'd1;
            out_first_q <= pend_first_q;
            out_words_q <= pend_words_q;
            out_last_q  <= st_q == S_SC_F2;
        end
        if (run_end) begin
            runs_q       <= runs_q + 1'b1;
            pend_v_q     <= 1'b1;
            pend_first_q <= start_q;
            pend_words_q <= (st_q == S_SC_F1) ? (WI_W + 1)'(PWORDS) - (WI_W + 1)'(start_q)
                                              : (WI_W + 1)'(w - start_q);
        end
        if (rst) begin
            v_q      <= '0;
            st_q     <= S_IDLE;
            out_v_q  <= 1'b0;
            pend_v_q <= 1'b0;
            words_q  <= '0;
            runs_q   <= '0;
        end
    end
`ifndef SYNTHESIS
    // the callers' preconditions (README "Units"): a create needs a free entry, a set range is
    // rs_lo < rs_hi <= PWORDS (rs_hi 0 or a wrapped range would never end or set other words)
    always_ff @(posedge clk) begin
        if (!rst && !busy && cr_en)
            assert (free_v) else $error("ats_wbuf_frag: cr_en with no free entry");
        if (!rst && !busy && rs_en && !cr_en)
            assert (rs_lo < rs_hi && 32'(rs_hi) <= PWORDS)
                else $error("ats_wbuf_frag: rs_en with rs_lo %0d, rs_hi %0d (PWORDS %0d)", rs_lo, rs_hi, PWORDS);
    end
`endif
endmodule

`resetall
