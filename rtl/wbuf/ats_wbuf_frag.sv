// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_frag: the write buffer's FRAG table (DiffTx's S-Log, docs/architecture.md §11.3 "The
// write buffer's part exactly"), a unit of its own, not yet instantiated by ats_wbuf. FRAG_SLOTS
// entries {txid, lpn, room, word mask}; a new entry takes the lowest free number. Per entry the
// set words and the runs (maximal sequences of set mask bits) are counted as words are written,
// one word per write: a word newly set adds 1 run minus its set neighbours (it extends or joins
// runs), so the commit's choice (set bytes < thr, runs <= room, record runs <= SLOG_TXFRAGS) reads
// two counters. The run scanner walks one entry's mask, one word per cycle, and sends its runs in
// word order on m_run ({first word, words}, `last` on the entry's final run): the record's
// descriptors (the caller adds the LPN). rtl/wbuf/README.md "FRAG table".
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_wbuf_frag #(
    parameter int FRAG_SLOTS = 4,                 // entries, a power of two 2..16
    parameter int PWORDS     = 1024,              // words per page, power of two, 16..8192
    parameter int LPN_W      = 14
) (
    input  wire logic                          clk,
    input  wire logic                          rst,           // synchronous: every entry free
    // lookup of (lk_txid, lk_lpn) over the table (combinational; the caller registers it)
    input  wire logic [5:0]                    lk_txid,
    input  wire logic [LPN_W-1:0]              lk_lpn,
    output logic                               lk_hit,
    output logic [$clog2(FRAG_SLOTS)-1:0]                      lk_num,
    output logic [$clog2(FRAG_SLOTS):0]                        lk_txcnt,      // entries held by lk_txid
    output logic                               free_v,        // an entry is free: free_num
    output logic [$clog2(FRAG_SLOTS)-1:0]                      free_num,      // the lowest free number
    // create (takes free_num; free_v must be 1), write one word's mask bit, free one / every entry of a txid
    input  wire logic                          cr_en,
    input  wire logic [5:0]                    cr_txid,
    input  wire logic [LPN_W-1:0]              cr_lpn,
    input  wire logic [7:0]                    cr_room,
    input  wire logic                          wr_en,
    input  wire logic [$clog2(FRAG_SLOTS)-1:0]                 wr_num,
    input  wire logic [$clog2(PWORDS)-1:0]               wr_widx,
    input  wire logic                          fr_en,
    input  wire logic [$clog2(FRAG_SLOTS)-1:0]                 fr_num,
    input  wire logic                          frt_en,
    input  wire logic [5:0]                    frt_txid,
    // one entry's fields (st_num), and its mask bit mk_widx
    input  wire logic [$clog2(FRAG_SLOTS)-1:0]                 st_num,
    output logic                               st_v,
    output logic [5:0]                         st_txid,
    output logic [LPN_W-1:0]                   st_lpn,
    output logic [7:0]                         st_room,
    output logic [$clog2(PWORDS):0]                      st_words,      // set words (bytes / 4)
    output logic [$clog2(PWORDS):0]                      st_runs,
    input  wire logic [$clog2(PWORDS)-1:0]               mk_widx,
    output logic                               mk_bit,
    // run scanner
    input  wire logic                          sc_start,      // scan entry sc_num (sc_busy low)
    input  wire logic [$clog2(FRAG_SLOTS)-1:0]                 sc_num,
    output logic                               sc_busy,
    output logic                               m_run_valid,
    input  wire logic                          m_run_ready,
    output logic [$clog2(PWORDS)-1:0]                    m_run_first,
    output logic [$clog2(PWORDS):0]                      m_run_words,
    output logic                               m_run_last
);
    localparam int NW   = $clog2(FRAG_SLOTS);
    localparam int WI_W = $clog2(PWORDS);

    if (FRAG_SLOTS < 2 || FRAG_SLOTS > 16 || (FRAG_SLOTS & (FRAG_SLOTS - 1)) != 0) begin : g_chk_n
        $fatal(1, "ats_wbuf_frag: FRAG_SLOTS must be a power of two in 2..16 (%m)");
    end
    if (PWORDS < 16 || PWORDS > 8192 || (PWORDS & (PWORDS - 1)) != 0) begin : g_chk_pw
        $fatal(1, "ats_wbuf_frag: PWORDS must be a power of two in 16..8192 (%m)");
    end

    logic [FRAG_SLOTS-1:0] v_q;
    logic [5:0]            tx_q    [FRAG_SLOTS];
    logic [LPN_W-1:0]      lpn_q   [FRAG_SLOTS];
    logic [7:0]            room_q  [FRAG_SLOTS];
    logic [PWORDS-1:0]     mask_q  [FRAG_SLOTS];
    logic [WI_W:0]         words_q [FRAG_SLOTS];
    logic [WI_W:0]         runs_q  [FRAG_SLOTS];

    // lookup, count, lowest free
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
    end

    assign st_v     = v_q[st_num];
    assign st_txid  = tx_q[st_num];
    assign st_lpn   = lpn_q[st_num];
    assign st_room  = room_q[st_num];
    assign st_words = words_q[st_num];
    assign st_runs  = runs_q[st_num];
    assign mk_bit   = mask_q[st_num][mk_widx];

    // a word newly set: +1 word, +1 run - its set neighbours
    logic               w_new, w_left, w_right;
    logic [PWORDS-1:0]  w_mask;
    assign w_mask  = mask_q[wr_num];
    assign w_new   = !w_mask[wr_widx];
    assign w_left  = (wr_widx != '0) && w_mask[wr_widx - 1'b1];
    assign w_right = (wr_widx != WI_W'(PWORDS - 1)) && w_mask[wr_widx + 1'b1];

    always_ff @(posedge clk) begin
        if (wr_en && w_new) begin
            mask_q[wr_num][wr_widx] <= 1'b1;
            words_q[wr_num] <= words_q[wr_num] + 1'b1;
            runs_q[wr_num]  <= runs_q[wr_num] + 1'b1 - (WI_W + 1)'(w_left) - (WI_W + 1)'(w_right);
        end
        if (cr_en) begin
            v_q[free_num]     <= 1'b1;
            tx_q[free_num]    <= cr_txid;
            lpn_q[free_num]   <= cr_lpn;
            room_q[free_num]  <= cr_room;
            mask_q[free_num]  <= '0;
            words_q[free_num] <= '0;
            runs_q[free_num]  <= '0;
        end
        if (fr_en) v_q[fr_num] <= 1'b0;
        if (frt_en) begin
            for (int n = 0; n < FRAG_SLOTS; n++) if (tx_q[n] == frt_txid) v_q[n] <= 1'b0;
        end
        if (rst) v_q <= '0;
    end

    // run scanner: word sc_w_q of entry sc_n_q per cycle; a run found is held (pend) until the
    // next one is found (then sent with last 0) or the scan ends (sent with last 1)
    logic               scan_q, flush_q, in_run_q, pend_v_q, out_v_q, out_last_q;
    logic [NW-1:0]      sc_n_q;
    logic [WI_W:0]      sc_w_q;
    logic [WI_W-1:0]    start_q, pend_first_q, out_first_q;
    logic [WI_W:0]      pend_words_q, out_words_q;
    logic               b, b_next, run_end, out_free, adv;
    logic [WI_W-1:0]    run_first;
    logic [PWORDS-1:0]  s_mask;
    assign s_mask    = mask_q[sc_n_q];
    assign b         = s_mask[sc_w_q[WI_W-1:0]];
    assign b_next    = (sc_w_q[WI_W-1:0] != WI_W'(PWORDS - 1)) && s_mask[sc_w_q[WI_W-1:0] + 1'b1];
    assign run_end   = b && !b_next;
    assign run_first = in_run_q ? start_q : sc_w_q[WI_W-1:0];
    assign out_free  = !out_v_q || m_run_ready;
    // a step waits only when it would move the held run to a busy output
    assign adv       = scan_q && !(run_end && pend_v_q && !out_free);
    assign sc_busy   = scan_q || flush_q || out_v_q;
    assign m_run_valid = out_v_q;
    assign m_run_first = out_first_q;
    assign m_run_words = out_words_q;
    assign m_run_last  = out_last_q;

    always_ff @(posedge clk) begin
        if (out_v_q && m_run_ready) out_v_q <= 1'b0;
        if (sc_start && !sc_busy) begin
            scan_q   <= 1'b1;
            sc_n_q   <= sc_num;
            sc_w_q   <= '0;
            in_run_q <= 1'b0;
            pend_v_q <= 1'b0;
        end
        if (adv) begin
            if (b && !in_run_q) start_q <= sc_w_q[WI_W-1:0];
            in_run_q <= b && !run_end;
            if (run_end) begin
                if (pend_v_q) begin
                    out_v_q     <= 1'b1;
                    out_first_q <= pend_first_q;
                    out_words_q <= pend_words_q;
                    out_last_q  <= 1'b0;
                end
                pend_v_q     <= 1'b1;
                pend_first_q <= run_first;
                pend_words_q <= (WI_W + 1)'(sc_w_q[WI_W-1:0] - run_first) + 1'b1;
            end
            sc_w_q <= sc_w_q + 1'b1;
            if (sc_w_q[WI_W-1:0] == WI_W'(PWORDS - 1)) begin
                scan_q  <= 1'b0;
                flush_q <= 1'b1;
            end
        end
        if (flush_q && out_free) begin
            flush_q <= 1'b0;
            if (pend_v_q) begin
                out_v_q     <= 1'b1;
                out_first_q <= pend_first_q;
                out_words_q <= pend_words_q;
                out_last_q  <= 1'b1;
                pend_v_q    <= 1'b0;
            end
        end
        if (rst) begin
            scan_q  <= 1'b0;
            flush_q <= 1'b0;
            out_v_q <= 1'b0;
            pend_v_q <= 1'b0;
        end
    end
endmodule

`resetall
