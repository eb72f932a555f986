// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_cpl: the write buffer's completion and waiter unit (rtl/wbuf/README.md "FLUSH / FUA",
// "RFLUSH", "Output streams keep an offered beat"). FLUSH / FUA waiters (a FIFO of NUM_WAITERS,
// each completing once the writeback FIFO head has passed its target position and every page
// issued until then is durable), the RFLUSH waiter (no urgent page left unissued, then durable),
// both ended NO_SPACE by `no_space` unless durable, and the completion arbiter (waiters, then
// RFLUSH, then the read-miss completions, then the command FSM) with the hold register that keeps
// an offered m_done beat (source and payload) until it is taken, also through the freeze.
// Split out of ats_wbuf.sv as it was (issue 36): the same registers and the same next state in
// every cycle; wt_full and flush_pending are registers, rf_idle a decode of one, the ready of each
// source is the arbiter's choice and m_done_ready as before.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_wbuf_cpl #(
    parameter int NUM_WAITERS = 8                 // FLUSH/FUA completions waiting; power of two >= 2 (checked by ats_wbuf)
) (
    input  wire logic        clk,
    input  wire logic        rst,                 // synchronous, active high
    input  wire logic        freeze,              // power failed: nothing new is offered (a held beat stays)
    input  wire logic        no_space,            // registered no_space: waiters not durable end NO_SPACE
    // writeback progress (the engine's FIFO and sequence counters)
    input  wire logic [31:0] head_pos,            // writeback FIFO head position
    input  wire logic [31:0] tail_pos,            // tail position (a new waiter's target)
    input  wire logic [31:0] issue_cnt,           // pages issued
    input  wire logic [31:0] dur_cnt,             // pages durable (completed)
    input  wire logic [31:0] fail_cnt,            // writebacks failed
    input  wire logic        urg_none,            // no RFLUSH-urgent page left unissued
    // FLUSH / FUA waiter push (command FSM, ST_WPUSH)
    input  wire logic        wt_push,
    input  wire logic [7:0]  wt_tag,
    input  wire logic [16:0] wt_res,              // result: pages of a FUA write, 0 for FLUSH
    output wire logic        wt_full,             // registered: pushes are at least four cycles apart
    output wire logic        flush_pending,       // a waiter's target not yet passed (writeback runs)
    // RFLUSH waiter (command FSM, ST_RF_ARM after the marks)
    input  wire logic        rf_arm,
    input  wire logic [7:0]  rf_tag,
    output wire logic        rf_idle,             // no RFLUSH active (a new one may mark)
    // command FSM completion (ST_DONE)
    input  wire logic        s_main_valid,
    output wire logic        s_main_ready,
    input  wire logic [7:0]  s_main_tag,
    input  wire logic [7:0]  s_main_status,
    input  wire logic [31:0] s_main_result,
    // read-miss completions (ats_wbuf_rmiss)
    input  wire logic        s_rd_valid,
    output wire logic        s_rd_ready,
    input  wire logic [7:0]  s_rd_tag,
    input  wire logic [7:0]  s_rd_status,
    input  wire logic [31:0] s_rd_result,
    // completions out
    output wire logic        m_done_valid,
    input  wire logic        m_done_ready,
    output wire logic [7:0]  m_done_tag,
    output wire logic [7:0]  m_done_status,
    output wire logic [31:0] m_done_result
);
    localparam int WT_W = $clog2(NUM_WAITERS);

    // waiters (FLUSH / FUA): FIFO ordered by target position
    logic [7:0]         wt_tag_q [NUM_WAITERS];
    logic [31:0]        wt_tgt_q [NUM_WAITERS];
    logic [31:0]        wt_fs_q  [NUM_WAITERS];
    logic [16:0]        wt_res_q [NUM_WAITERS];    // result: pages of a FUA write, 0 for FLUSH
    logic [WT_W:0]      wt_wr_q, wt_rd_q;
    logic               wt_conv_q;
    logic [31:0]        wt_seq_q, last_tgt_q;
    logic               wt_empty, wt_done_v, flush_pending_q, wt_passed_q, wt_durok_q;
    logic               wt_ns_q;                   // head waiter not durable while no_space: NO_SPACE
    logic               wt_pop, wt_conv_set;
    logic               wt_full_q;
    assign wt_empty = (wt_wr_q == wt_rd_q);
    assign wt_full  = wt_full_q;
    assign flush_pending = flush_pending_q;
    // wt_durok_q implies wt_conv_q (only a pop clears it, and a pop clears wt_durok_q too), which
    // implies a non-empty FIFO
    assign wt_done_v = wt_durok_q || wt_ns_q;
    assign wt_conv_set = !wt_empty && !wt_conv_q && wt_passed_q;

    // RFLUSH waiter
    typedef enum logic [1:0] {RW_IDLE, RW_URG, RW_DUR, RW_DONE} rflush_state_e;
    rflush_state_e      rw_st_q;
    logic [7:0]         rw_tag_q;
    logic [31:0]        rw_seq_q, rw_fs_q;
    logic               rw_durok_q;
    logic               rw_ns_q;                   // ended by no_space before durable: NO_SPACE
    assign rf_idle = rw_st_q == RW_IDLE;

    // completion arbiter: waiters first, then RFLUSH, then the read-miss drain, then the command FSM. Stream stability
    // (docs/architecture.md): a beat offered and not taken at an edge is offered again, unchanged,
    // until it is taken (dn_hold_q: source and payload registered, loaded in every cycle without a
    // held beat, so the enable is a register). Without it a waiter that becomes ready would pre-empt
    // an offered FSM completion, a waiter's / RFLUSH's status would follow fail_cnt while offered,
    // and the freeze at pwr_fail would withdraw the beat. After the freeze nothing new is offered
    // (dn_live_v) but a held beat stays until taken (it was decided before the cut).
    localparam logic [1:0] DN_WT = 2'd0, DN_RW = 2'd1, DN_MAIN = 2'd2, DN_RD = 2'd3;
    logic               sel_wt, sel_rw, sel_main, sel_rd;
    logic               dn_live_v, dn_hold_q;
    logic [1:0]         dn_live_src, dn_src_q, dn_src;
    logic [7:0]         dn_live_tag, dn_live_st, dn_tag_q, dn_st_q;
    logic [31:0]        dn_live_res, dn_res_q;
    assign dn_live_v   = !freeze && (wt_done_v || rw_st_q == RW_DONE || s_rd_valid || s_main_valid);
    assign dn_live_src = wt_done_v ? DN_WT : (rw_st_q == RW_DONE) ? DN_RW : s_rd_valid ? DN_RD : DN_MAIN;
    assign dn_live_tag = wt_done_v ? wt_tag_q[wt_rd_q[WT_W-1:0]] : (rw_st_q == RW_DONE) ? rw_tag_q :
                         s_rd_valid ? s_rd_tag : s_main_tag;
    assign dn_live_st  = wt_done_v ? (!wt_durok_q ? ats_host_pkg::STS_NO_SPACE :
                                      (fail_cnt != wt_fs_q[wt_rd_q[WT_W-1:0]]) ? ats_host_pkg::STS_PROGRAM_FAIL
                                                                                 : ats_host_pkg::STS_OK)
                       : (rw_st_q == RW_DONE) ? (rw_ns_q ? ats_host_pkg::STS_NO_SPACE :
                                                 (fail_cnt != rw_fs_q) ? ats_host_pkg::STS_PROGRAM_FAIL
                                                                       : ats_host_pkg::STS_OK)
                       : s_rd_valid ? s_rd_status : s_main_status;
    assign dn_live_res = wt_done_v ? 32'(wt_res_q[wt_rd_q[WT_W-1:0]]) : (rw_st_q == RW_DONE) ? 32'd0 :
                         s_rd_valid ? s_rd_result : s_main_result;
    assign m_done_valid  = dn_hold_q || dn_live_v;
    assign dn_src        = dn_hold_q ? dn_src_q : dn_live_src;
    assign sel_wt        = m_done_valid && dn_src == DN_WT;
    assign sel_rw        = m_done_valid && dn_src == DN_RW;
    assign sel_main      = m_done_valid && dn_src == DN_MAIN;
    assign sel_rd        = m_done_valid && dn_src == DN_RD;
    assign m_done_tag    = dn_hold_q ? dn_tag_q : dn_live_tag;
    assign m_done_status = dn_hold_q ? dn_st_q : dn_live_st;
    assign m_done_result = dn_hold_q ? dn_res_q : dn_live_res;
    assign s_main_ready  = sel_main && m_done_ready;
    assign s_rd_ready    = sel_rd && m_done_ready;
    assign wt_pop        = sel_wt && m_done_ready;
    always_ff @(posedge clk) begin
        dn_hold_q <= m_done_valid && !m_done_ready;
        if (!dn_hold_q) begin
            dn_src_q <= dn_live_src;
            dn_tag_q <= dn_live_tag;
            dn_st_q  <= dn_live_st;
            dn_res_q <= dn_live_res;
        end
        if (rst) dn_hold_q <= 1'b0;
    end

    always_ff @(posedge clk) begin
        if (wt_push) begin
            wt_tag_q[wt_wr_q[WT_W-1:0]] <= wt_tag;
            wt_tgt_q[wt_wr_q[WT_W-1:0]] <= tail_pos;
            wt_fs_q[wt_wr_q[WT_W-1:0]]  <= fail_cnt;
            wt_res_q[wt_wr_q[WT_W-1:0]] <= wt_res;
            wt_wr_q    <= wt_wr_q + 1'b1;
            last_tgt_q <= tail_pos;
        end
        // registered comparisons; a flag computed for the previous head or sequence is cleared
        flush_pending_q <= $signed(last_tgt_q - head_pos) > 0;
        wt_full_q <= (wt_wr_q[WT_W-1:0] == wt_rd_q[WT_W-1:0]) && (wt_wr_q[WT_W] != wt_rd_q[WT_W]);
        wt_passed_q <= !wt_pop && !(wt_push && wt_empty) &&
                       $signed(head_pos - wt_tgt_q[wt_rd_q[WT_W-1:0]]) >= 0;
        wt_durok_q  <= !wt_pop && wt_conv_q && $signed(dur_cnt - wt_seq_q) >= 0;
        // no space: the head waiter completes NO_SPACE (unless durable: wt_durok_q wins)
        wt_ns_q     <= !wt_pop && no_space && !wt_empty;
        if (wt_conv_set) begin
            wt_conv_q <= 1'b1;
            wt_seq_q  <= issue_cnt;
        end
        if (wt_pop) begin
            wt_rd_q   <= wt_rd_q + 1'b1;
            wt_conv_q <= 1'b0;
        end
        // RFLUSH waiter
        unique case (rw_st_q)
            RW_IDLE: if (rf_arm) begin
                rw_st_q  <= RW_URG;
                rw_tag_q <= rf_tag;
                rw_fs_q  <= fail_cnt;
                rw_ns_q  <= 1'b0;
            end
            RW_URG: if (urg_none) begin
                rw_st_q  <= RW_DUR;
                rw_seq_q <= issue_cnt;
            end else if (no_space) begin
                rw_st_q  <= RW_DONE;                 // urgent marks stay: written first when space returns
                rw_ns_q  <= 1'b1;
            end
            RW_DUR: if (rw_durok_q) begin
                rw_st_q  <= RW_DONE;
            end else if (no_space) begin
                rw_st_q  <= RW_DONE;
                rw_ns_q  <= 1'b1;
            end
            RW_DONE: if (sel_rw && m_done_ready) rw_st_q <= RW_IDLE;
            default: rw_st_q <= RW_IDLE;
        endcase
        rw_durok_q <= rw_st_q == RW_DUR && $signed(dur_cnt - rw_seq_q) >= 0;
        if (rst) begin
            flush_pending_q <= 1'b0;
            wt_passed_q <= 1'b0;
            wt_durok_q <= 1'b0;
            wt_ns_q    <= 1'b0;
            rw_ns_q    <= 1'b0;
            wt_full_q  <= 1'b0;
            rw_durok_q <= 1'b0;
            wt_wr_q    <= '0;
            wt_rd_q    <= '0;
            wt_conv_q  <= 1'b0;
            last_tgt_q <= '0;
            rw_st_q    <= RW_IDLE;
        end
    end
`ifndef SYNTHESIS
    // the comment above wt_done_v: a durable waiter is a converted one, and a waiter ended by
    // no_space was there, so the FIFO is not empty (the arbiter reads the head entry without
    // looking at wt_empty)
    always_ff @(posedge clk) begin
        if (!rst && ((wt_durok_q && (!wt_conv_q || wt_empty)) || (wt_ns_q && wt_empty)))
            $error("ats_wbuf_cpl: waiter completion offered without a head waiter (durok %0d, ns %0d, conv %0d, empty %0d)",
                   wt_durok_q, wt_ns_q, wt_conv_q, wt_empty);
    end
`endif
endmodule

`resetall
