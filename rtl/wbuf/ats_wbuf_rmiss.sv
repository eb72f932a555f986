// SPDX-License-Identifier: Apache-2.0
// ats_wbuf_rmiss: the write buffer's read-miss tracker (rtl/wbuf/README.md "READ"). Each READ miss
// page the command FSM requests from the media gets a read id (0..MISS_Q-1, ring order, the m_rd
// tag) and a page-table entry {host address, the READ's CPL entry}; a READ reserves a CPL entry at
// its first miss (ring order) and closes it {tag, pages} at its end. The drain takes whichever page
// the media returns (s_rdd, ids in any order), streams it to host memory (m_hwr at the id's address)
// and frees the id after its last word. A closed CPL entry with no page outstanding is ready; the
// lowest ready entry is offered as a completion (m_done: OK, or MEDIA_ERROR if a word of one of its
// pages carried an error). Ids ID_BASE / ID_PROBE (and with SLOG ID_RESV / ID_UNRES) belong to the
// command FSM (base_exp / probe_exp / resv_exp / unres_exp
// say when it takes them); any other page no read asked for is a protocol error (stray), taken to
// its last word and dropped.
// Split out of ats_wbuf.sv as it was (issue 36): the same registers and the same next state in
// every cycle; outputs are registers or decodes of registers, except the drain's m_hwr beat and
// s_rdd_ready / stray, which pass s_rdd through as before.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a simulator
// gets a form of the CPL entries with the same registers that updates only the entries a page
// request or a drained page names and picks the lowest ready entry with vector operations
// (README "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_wbuf_rmiss #(
    parameter int          PAGE_BYTES = 4096,    // bytes per page (power of two): PAGE_BYTES/4 words a page
    parameter int          MISS_Q     = 32,      // read ids and CPL entries; power of two, 4..128 (checked by ats_wbuf)
    parameter logic [7:0]  ID_BASE    = 8'hFF,   // read id of the command FSM's DIFFWRITE base page
    parameter logic [7:0]  ID_PROBE   = 8'hFE,   // read id of the command FSM's own-table probe
    parameter logic [7:0]  ID_RESV    = 8'hFD,   // read id of the command FSM's S-Log RESERVE
    parameter logic [7:0]  ID_UNRES   = 8'hFC,   // read id of the command FSM's S-Log UNRESERVE
    parameter bit          SLOG       = 1'b0     // ID_RESV / ID_UNRES are the FSM's (the buffer's FRAG_SLOTS > 0); 0: strays
) (
    input  wire logic            clk,
    input  wire logic            rst,           // synchronous, active high
    input  wire logic            freeze,        // power failed: no page starts, no entry is offered anew
    // miss pages from the command FSM
    output wire logic            req_room,      // an id free and (req_first) a CPL entry free; a cycle old
    input  wire logic            req_first,     // this page is its READ's first miss: reserves the next entry
    input  wire logic            req_push,      // the page's m_rd request is taken (id req_id used)
    input  wire logic [31:0]     req_addr,      // its host address
    output wire logic [$clog2(MISS_Q)-1:0] req_id,        // read id of the next page (m_rd_tag)
    input  wire logic            close_push,    // the READ has issued every page: close its entry
    input  wire logic [7:0]      close_tag,
    input  wire logic [15:0]     close_nlb,     // result = nlb + 1
    input  wire logic            close_err,     // the READ had an error of its own (an S-Log overlay's base): MEDIA_ERROR
    output wire logic            idle,          // no id outstanding, drain idle (m_hwr, s_rdd free for the FSM)
    // read pages from the media (PAGE_BYTES/4 words each, the id on s_rdd_tag)
    input  wire logic            s_rdd_valid,
    output wire logic            s_rdd_ready,   // this unit's share (drain, dropped stray page)
    input  wire logic [31:0]     s_rdd_data,
    input  wire logic            s_rdd_last,
    input  wire logic [7:0]      s_rdd_status,
    input  wire logic [7:0]      s_rdd_tag,
    input  wire logic            base_exp,      // the FSM takes an ID_BASE page now
    input  wire logic            probe_exp,     // the FSM takes an ID_PROBE page now
    input  wire logic            resv_exp,      // the FSM takes an ID_RESV page now
    input  wire logic            unres_exp,     // the FSM takes an ID_UNRES page now
    output wire logic            stray,         // a page no read asked for starts (count it)
    // drained words to host memory
    output wire logic            busy,          // the drain is streaming a page
    output wire logic            m_hwr_valid,
    input  wire logic            m_hwr_ready,
    output wire logic [31:0]     m_hwr_addr,
    output wire logic [31:0]     m_hwr_data,
    output wire logic            m_hwr_last,
    // READ completions
    output wire logic            m_done_valid,
    input  wire logic            m_done_ready,
    output wire logic [7:0]      m_done_tag,
    output wire logic [7:0]      m_done_status,
    output wire logic [31:0]     m_done_result
);
    localparam int PWORDS = PAGE_BYTES / 4;
    localparam int WI_W   = $clog2(PWORDS);
    localparam int MQ_W   = $clog2(MISS_Q);

    logic [31:0]        pt_addr [MISS_Q];          // page table: host address of id i
    logic [MQ_W-1:0]    pt_cpl  [MISS_Q];          //             its READ's CPL entry
    logic [MISS_Q-1:0]  pt_busy_q;                 //             id i outstanding (requested, not drained)
    logic [MQ_W-1:0]    pa_q;                      // next id (allocated in ring order)
    logic [7:0]         cq_tag [MISS_Q];
    logic [16:0]        cq_res [MISS_Q];
    logic [MISS_Q-1:0]  cq_err_q;                  // a page of CPL entry e carried an error
    logic [MISS_Q-1:0]  cq_used_q;                 // entry e reserved (first miss) and not yet completed
    logic [MISS_Q-1:0]  cq_closed_q;               // entry e closed (its READ has issued every page)
    logic [MQ_W:0]      cq_pn_q [MISS_Q];          // pages of entry e outstanding (0..MISS_Q)
    logic [MISS_Q-1:0]  cq_rdy_q;                  // closed and no page outstanding (1 cycle old)
`ifndef ATS_SYNTH_FORM
    logic [MISS_Q-1:0]  cq_pz_q;                   // (simulation form) cq_pn_q[e] == 0
`endif
    logic               cq_pick_v_q;               // lowest ready entry (from cq_rdy_q, 1 more cycle)
    logic [MQ_W-1:0]    cq_pick_q;
    logic [1:0]         cq_gap_q;                  // cycles left before the pick is fresh after a pop
    logic [MQ_W-1:0]    cq_wr_q;                   // entry the next READ with a miss reserves
    logic               mr_start, cq_pop, mr_end, rdd_take;
    logic               mr_busy_q, mr_cpl_q, mr_err_q;
    logic               mr_drop_q;                 // a page no read asked for: taken to its last word, dropped
    logic [31:0]        mr_addr_q;
    logic [MQ_W-1:0]    mr_id_q, mr_cq_q;
    logic [WI_W:0]      mr_w_q;
    logic [7:0]         mr_tag_q;
    logic [16:0]        mr_res_q;
    // a miss needs a free id, and at a READ's first miss a free CPL entry (its entry is cq_wr).
    // Both looks are registered (timing: the two 1-of-MISS_Q selects fed m_rd_valid and, through
    // the backend's acceptance, its per-slot writes): pa_ok_q / cq_ok_q are a cycle old. They can
    // only turn false by a push (an id or an entry taken) or a close (cq_wr moves), so the cycle
    // after either is not used (mq_moved_q); a free-up seen a cycle late only delays.
    logic               pa_ok_q, cq_ok_q, mq_moved_q;
    assign req_room = pa_ok_q && (!req_first || cq_ok_q) && !mq_moved_q;
    assign req_id   = pa_q;
    // m_hwr and s_rdd are free for the command FSM (hit, zeros, DIFFWRITE base) only when no miss
    // page is outstanding or streaming
    assign idle     = pt_busy_q == '0 && !mr_busy_q;
    // a page whose id is not outstanding (or out of range), or an ID_BASE / ID_PROBE page the FSM
    // does not expect, is a protocol error: counted by the owner and consumed up to its `last`
    // word, never written to host memory or counted against a READ
    assign stray    = !mr_busy_q && !mr_drop_q && s_rdd_valid && !freeze &&
                      ((s_rdd_tag == ID_BASE) ? !base_exp :
                       (s_rdd_tag == ID_PROBE) ? !probe_exp :
                       (SLOG && s_rdd_tag == ID_RESV) ? !resv_exp :
                       (SLOG && s_rdd_tag == ID_UNRES) ? !unres_exp
                                               : (32'(s_rdd_tag) >= MISS_Q || !pt_busy_q[s_rdd_tag[MQ_W-1:0]]));
    assign mr_start = !mr_busy_q && !mr_drop_q && s_rdd_valid && s_rdd_tag != ID_BASE &&
                      s_rdd_tag != ID_PROBE && !(SLOG && (s_rdd_tag == ID_RESV || s_rdd_tag == ID_UNRES)) && !freeze && !stray;
    // a miss page's word goes to m_hwr as it is taken
    assign s_rdd_ready = (mr_busy_q && m_hwr_ready) || mr_drop_q;
    assign rdd_take = mr_busy_q && s_rdd_valid && s_rdd_ready;
    assign mr_end   = rdd_take && mr_w_q == (WI_W + 1)'(PWORDS - 1);
    assign busy        = mr_busy_q;
    assign m_hwr_valid = mr_busy_q && s_rdd_valid;
    assign m_hwr_addr  = mr_addr_q;
    assign m_hwr_data  = s_rdd_data;
    assign m_hwr_last  = mr_w_q == (WI_W + 1)'(PWORDS - 1);
    // a ready entry leaves when the completion register is free. The pick is two cycles behind the
    // entry state (cq_rdy_q, then cq_pick_q), so after a pop two cycles pass (cq_gap_q) before the
    // next: the popped entry is never offered twice, and no entry is offered before it is ready
    // (an entry's count only falls once it is closed; a reserved entry is not closed)
    assign cq_pop   = !mr_cpl_q && cq_pick_v_q && cq_gap_q == 2'd0 && !freeze;
    assign m_done_valid  = mr_cpl_q;
    assign m_done_tag    = mr_tag_q;
    assign m_done_status = mr_err_q ? ats_host_pkg::STS_MEDIA_ERROR : ats_host_pkg::STS_OK;
    assign m_done_result = 32'(mr_res_q);

    always_ff @(posedge clk) begin
        if (req_push) begin
            pt_addr[pa_q] <= req_addr;
            pt_cpl[pa_q]  <= cq_wr_q;
            pt_busy_q[pa_q] <= 1'b1;
            pa_q <= pa_q + 1'b1;
            if (req_first) begin                                    // the READ's entry reserved
                cq_err_q[cq_wr_q]  <= 1'b0;
                cq_used_q[cq_wr_q] <= 1'b1;
            end
        end
        if (close_push) begin
            cq_tag[cq_wr_q] <= close_tag;
            cq_res[cq_wr_q] <= 17'(close_nlb) + 17'd1;
            cq_closed_q[cq_wr_q] <= 1'b1;
            cq_wr_q <= cq_wr_q + 1'b1;
            if (SLOG && close_err) cq_err_q[cq_wr_q] <= 1'b1;
        end
        pa_ok_q    <= !pt_busy_q[pa_q];
        cq_ok_q    <= !cq_used_q[cq_wr_q];
        mq_moved_q <= req_push || close_push;
        // outstanding pages per entry: +1 when a page of the entry is requested, -1 when its last
        // word has been drained (both can hit one entry in one cycle)
`ifdef ATS_SYNTH_FORM
        for (int e = 0; e < MISS_Q; e++) begin
            unique case ({req_push && cq_wr_q == MQ_W'(e), mr_end && mr_cq_q == MQ_W'(e)})
                2'b10:   cq_pn_q[e] <= cq_pn_q[e] + 1'b1;
                2'b01:   cq_pn_q[e] <= cq_pn_q[e] - 1'b1;
                default: ;
            endcase
            cq_rdy_q[e] <= cq_closed_q[e] && cq_pn_q[e] == '0;
        end
        cq_pick_v_q <= cq_rdy_q != '0;
        cq_pick_q   <= '0;
        for (int e = MISS_Q - 1; e >= 0; e--) if (cq_rdy_q[e]) cq_pick_q <= MQ_W'(e);
`else
        // simulation form: only the (at most two) entries named this cycle are written; cq_pz_q
        // holds cq_pn_q[e] == 0 per entry (all ones from reset, kept with every write of cq_pn_q),
        // so the ready vector and its lowest set bit are vector operations
        if (req_push && !(mr_end && mr_cq_q == cq_wr_q)) begin
            cq_pn_q[cq_wr_q] <= cq_pn_q[cq_wr_q] + 1'b1;
            cq_pz_q[cq_wr_q] <= (cq_pn_q[cq_wr_q] + 1'b1) == '0;
        end
        if (mr_end && !(req_push && mr_cq_q == cq_wr_q)) begin
            cq_pn_q[mr_cq_q] <= cq_pn_q[mr_cq_q] - 1'b1;
            cq_pz_q[mr_cq_q] <= (cq_pn_q[mr_cq_q] - 1'b1) == '0;
        end
        cq_rdy_q    <= cq_closed_q & cq_pz_q;
        cq_pick_v_q <= cq_rdy_q != '0;
        // lowest set bit's index: the ones below it (MISS_Q is a power of two: none set gives 0)
        cq_pick_q   <= MQ_W'($countones((cq_rdy_q & (~cq_rdy_q + 1'b1)) - 1'b1));
`endif
        if (cq_gap_q != 2'd0) cq_gap_q <= cq_gap_q - 1'b1;
        if (cq_pop) begin
            cq_gap_q <= 2'd2;
            cq_used_q[cq_pick_q]   <= 1'b0;
            cq_closed_q[cq_pick_q] <= 1'b0;
            mr_cpl_q <= 1'b1;
            mr_tag_q <= cq_tag[cq_pick_q];
            mr_res_q <= cq_res[cq_pick_q];
            mr_err_q <= cq_err_q[cq_pick_q];
        end
        if (m_done_ready) mr_cpl_q <= 1'b0;
        if (mr_start) begin
            // the page's first word is here: its id names the host address and the READ
            mr_busy_q <= 1'b1;
            mr_id_q   <= s_rdd_tag[MQ_W-1:0];
            mr_addr_q <= pt_addr[s_rdd_tag[MQ_W-1:0]];
            mr_cq_q   <= pt_cpl[s_rdd_tag[MQ_W-1:0]];
            mr_w_q    <= '0;
        end
        if (stray) mr_drop_q <= 1'b1;
        if (mr_drop_q && s_rdd_valid && s_rdd_last) mr_drop_q <= 1'b0;
        if (rdd_take) begin
            mr_w_q <= mr_w_q + 1'b1;
            if (s_rdd_status != ats_host_pkg::STS_OK) cq_err_q[mr_cq_q] <= 1'b1;
        end
        if (mr_end) begin
            mr_busy_q <= 1'b0;
            pt_busy_q[mr_id_q] <= 1'b0;
        end
        if (rst) begin
            pa_q <= '0; pt_busy_q <= '0;
            cq_wr_q <= '0; cq_used_q <= '0; cq_closed_q <= '0; cq_rdy_q <= '0;
            cq_pick_v_q <= 1'b0; cq_gap_q <= 2'd0;
            pa_ok_q <= 1'b0; cq_ok_q <= 1'b0; mq_moved_q <= 1'b0;
            for (int e = 0; e < MISS_Q; e++) cq_pn_q[e] <= '0;
`ifndef ATS_SYNTH_FORM
            cq_pz_q <= '1;
`endif
            mr_busy_q <= 1'b0; mr_cpl_q <= 1'b0; mr_err_q <= 1'b0; mr_drop_q <= 1'b0;
        end
    end
endmodule

`resetall
