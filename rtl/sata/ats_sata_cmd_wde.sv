// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_wde: WDE, the SATA command layer's window-read engine (rtl/sata/README.md
// "ats_sata_cmd"). Serves the core's window reads (s_hrd -> m_hrd) from the host in two stages:
// FETCH takes a request and, for an NCQ write, sends its DMA Setup (auto-activate) and receives
// exactly its words in one Data FIS into the data FIFO, asking again up to TRIES times when it
// arrives bad; DELIVER gives the fetched requests' words to the core in request order. FETCH takes
// the next request while DELIVER still empties the previous one (write prefetch: up to WQ requests
// fetched ahead, as many words as the data FIFO's DFIFO_DEPTH holds), so the link carries the next
// Data FIS while the previous page goes to the core. A non-queued write (WRITE DMA EXT, the DSM
// range block) gets DMA Activates as the host's data run out, one request at a time. Words reach
// the core only after their FIS's CRC was good (ats_sata_dfifo). A failed transfer marks the tag
// ICRC (CPL) or the non-queued command (NQ) and the rest of the request is zeros; so is a request
// of no open write.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd_wde #(
    parameter int PAGE_BYTES = 4096,    // logical sector (512 or 4096)
    parameter int TRIES      = 5,       // DMA Setups of one NCQ write request (first + retries)
    parameter int DFIFO_DEPTH = 2048,   // words of the data FIFO (ats_sata_frx): fetched, not yet delivered
    parameter int WQ         = 2        // requests fetched and waiting for DELIVER (1..4)
) (
    input  wire logic         clk,
    input  wire logic         rst,          // synchronous, active high
    // window reads of the core
    input  wire logic         s_hrd_valid,
    output wire logic         s_hrd_ready,
    input  wire logic [31:0]  s_hrd_addr,
    input  wire logic [15:0]  s_hrd_len,
    output logic              m_hrd_valid,
    input  wire logic         m_hrd_ready,
    output logic      [31:0]  m_hrd_data,
    output logic              m_hrd_last,
    // received data (ats_sata_frx)
    output wire logic         dfis_en,
    output wire logic [11:0]  dfis_max,
    output wire logic         dfis_exact,
    input  wire logic         dend,
    input  wire logic         dend_good,
    input  wire logic [11:0]  dend_words,
    input  wire logic         s_dat_valid,
    output logic              s_dat_ready,
    input  wire logic [31:0]  s_dat_data,
    // NQ
    input  wire logic         nq_start,     // DEC starts NQ (kind, sectors)
    input  wire logic [3:0]   nq_kind,
    input  wire logic [16:0]  nq_nsect,
    input  wire logic         nq_busy,
    input  wire logic [3:0]   nq_run_kind,  // NQ's kind while busy
    input  wire logic         nq_idle,
    input  wire logic         nq_dread_more,  // NQ pops the DSM range block, ranges left (registered)
    input  wire logic         nicrc,
    output wire logic         nicrc_set,    // a DMA Activate or its Data FIS failed
    output wire logic         r_pop,        // a DSM range word popped for NQ
    output wire logic         dsm_done,     // the DSM range block is in the data FIFO (or lost)
    // NCQ tags (DEC's table, CPL's transfer errors)
    input  wire logic [31:0]  tbusy,
    input  wire logic [31:0]  twr,
    input  wire logic [32:0]  terr,
    output wire logic         terr_set,     // the NCQ write transfer of wtag failed for good
    output wire logic [5:0]   wtag,
    // TX: write DMA Setup and DMA Activate
    output wire logic         ws_valid,
    output wire logic [16:0]  woff,
    output wire logic [11:0]  wndw,
    input  wire logic         ws_pick,
    input  wire logic         ws_fail,
    output wire logic         dact_valid,
    input  wire logic         dact_pick,
    input  wire logic         dact_fail,
    output wire logic         wphase,       // a write transfer is open
    // counter events
    output wire logic         ev_proto,     // a request or word of no command
    output wire logic         ev_retry      // an NCQ write transfer asked again
);
    localparam int PDW = PAGE_BYTES / 4;
    localparam logic [3:0] K_WRITE = ats_sata_cmd_pkg::K_WRITE, K_DSM = ats_sata_cmd_pkg::K_DSM;
    localparam logic [5:0] NQTAG = ats_sata_cmd_pkg::NQTAG;
    localparam int QW = (WQ > 1) ? $clog2(WQ) : 1;
    localparam logic [12:0] DEPTH = 13'(DFIFO_DEPTH);

    if (WQ < 1 || WQ > 4) begin : g_check_wq
        $fatal(1, "ats_sata_cmd_wde: WQ must be 1..4 (%m)");
    end
    if (DFIFO_DEPTH < 2 * PDW || DFIFO_DEPTH > 2048) begin : g_check_dfifo
        $fatal(1, "ats_sata_cmd_wde: DFIFO_DEPTH must hold two pages, at most 2048 words (%m)");
    end

    // FETCH: take a request, classify it, fetch an NCQ write's words from the host
    localparam logic [1:0] F_IDLE = 2'd0, F_WAIT = 2'd1, F_SETUP = 2'd2, F_DATA = 2'd3;
    localparam logic [1:0] C_ZERO = 2'd0, C_NQ = 2'd1, C_NCQ = 2'd2;
    logic [1:0]  fst_q, fcl_q;
    logic [5:0]  wtag_q;
    logic [16:0] woff_q;
    logic [11:0] wndw_q;                  // words of the request being fetched
    logic [2:0]  wtry_q;
    logic        ws_v_q;                  // DMA Setup (write) waiting for TX
    logic [12:0] res_q;                   // data-FIFO words reserved: fetched or being fetched, not yet delivered
    // the fetched requests, in order: zeros (a failed transfer, a bad request) or words from the FIFO
    logic [WQ-1:0] qz_q;
    logic [11:0] qn_q [WQ];
    logic [QW-1:0] qwp_q, qrp_q;
    logic [2:0]  qcnt_q;
    // DELIVER: the words of one request to the core
    localparam logic [1:0] W_IDLE = 2'd0, W_NQ = 2'd1, W_SERVE = 2'd2, W_ZERO = 2'd3;
    logic [1:0]  wst_q;
    logic [11:0] sn_q;                    // words of the request being delivered
    logic [11:0] wi_q;                    // words delivered
    logic        wdsm_q;                  // the consumer is the DSM capture
    logic        dact_v_q, dact_out_q;    // DMA Activate waiting for TX / the host's FIS expected
    logic [16:0] hrem_q;                  // non-queued: words the host still has to send
    logic [12:0] dq_q;                    // non-queued: committed words in the data FIFO not yet taken
    logic        dq_nz_q;                 // dq_q != 0, registered beside it (s_dat_ready reads no compare)
    logic        dsm_req_q;               // capture the DSM range block
    wire  logic  q_room  = qcnt_q < 3'(WQ);
    wire  logic  q_empty = (qcnt_q == 3'd0);
    // after a lost FIS (nicrc) a non-queued write still takes the good words received before it,
    // then zeros: no word of this command is left behind for the next one
    wire  logic  wzero = (wst_q == W_ZERO) || (wst_q == W_NQ && nicrc && !dq_nz_q);
    wire  logic  wfrom_fifo = (wst_q == W_SERVE) || (wst_q == W_NQ && (!nicrc || dq_nz_q));
    wire  logic  w_out = (wst_q != W_IDLE);
    // no request fetched or delivered: words in the data FIFO belong to no NCQ request
    wire  logic  w_none = (wst_q == W_IDLE) && q_empty;

    always_comb begin
        m_hrd_valid = 1'b0;
        m_hrd_data  = 32'd0;
        m_hrd_last  = (wi_q == sn_q - 12'd1);
        s_dat_ready = 1'b0;
        if (w_out && !(wst_q == W_NQ && wdsm_q)) begin
            m_hrd_valid = wzero || s_dat_valid;
            m_hrd_data  = wzero ? 32'd0 : s_dat_data;
            s_dat_ready = wfrom_fifo && m_hrd_ready;
        end else if (w_none && !nq_busy) begin
            s_dat_ready = 1'b1;           // stale words (none expected): drained
        end else if (w_none && nq_dread_more) begin
            s_dat_ready = 1'b1;           // the DSM range block, two words per range
        end
    end
    // the DSM block stays in the data FIFO: its transfer ends when the host sent all 128 words
    wire logic w_beat = m_hrd_valid && m_hrd_ready;
    wire logic dsm_in = (wst_q == W_NQ) && wdsm_q && (nicrc || (hrem_q == '0 && !dact_out_q));
    wire logic w_end  = ((wst_q != W_NQ || !wdsm_q) && w_out && w_beat && (wi_q == sn_q - 12'd1)) || dsm_in;
    // a fetched NCQ word delivered (s_dat_ready is m_hrd_ready in W_SERVE): the reservation's
    // decrement reads the state and the two handshake inputs, not the whole ready decode
    wire logic s_pop  = s_dat_valid && m_hrd_ready && (wst_q == W_SERVE);
    assign r_pop       = s_dat_valid && w_none && nq_dread_more;   // s_dat_ready is 1 then
    // a request is taken once stale non-queued words are gone (none are expected)
    assign s_hrd_ready = (fst_q == F_IDLE) && (wst_q != W_NQ) && !dsm_req_q && (nq_busy || !dq_nz_q);
    assign dfis_en     = (fst_q == F_DATA) || dact_out_q;
    assign dfis_max    = dact_out_q ? ((hrem_q > 17'd2048) ? 12'd2048 : hrem_q[11:0]) : wndw_q;
    assign dfis_exact  = !dact_out_q;
    assign dsm_done    = dsm_in;
    assign wphase      = (fst_q == F_DATA) || dact_out_q;
    assign ws_valid    = ws_v_q;
    assign dact_valid  = dact_v_q;
    assign wtag        = wtag_q;
    assign woff        = woff_q;
    assign wndw        = wndw_q;

    // a request: misaligned / out of range, the non-queued write, an NCQ write in flight
    wire logic h_take = s_hrd_valid && s_hrd_ready;
    wire logic h_bad  = s_hrd_len[1:0] != 2'd0 || s_hrd_addr[1:0] != 2'd0 || s_hrd_len == 16'd0
                        || s_hrd_len > 16'd8192 || s_hrd_addr[31:23] != 9'd0;
    wire logic h_nq   = s_hrd_addr[22:17] == NQTAG && nq_busy && nq_run_kind == K_WRITE;
    wire logic h_ncq  = s_hrd_addr[22:17] < 6'd32 && tbusy[s_hrd_addr[21:17]] && twr[s_hrd_addr[21:17]]
                        && !terr[s_hrd_addr[22:17]];
    wire logic h_lost = s_hrd_addr[22:17] < 6'd32 && terr[s_hrd_addr[22:17]];   // its tag's data were lost: no protocol error
    wire logic d_fail = dend && !dend_good && wtry_q == 3'(TRIES - 1);
    wire logic f_fail = (fst_q == F_DATA) && (ws_fail || d_fail);                 // fetch given up: zeros
    wire logic f_good = (fst_q == F_DATA) && !ws_fail && dend && dend_good;
    // FETCH moves on from F_WAIT: a zero request needs a queue slot; an NCQ write a queue slot and
    // room for its words in the data FIFO (or an empty FIFO: a request larger than the FIFO is
    // still fetched, the link's HOLD paces it); the non-queued write waits until all was delivered
    wire logic [12:0] res_need = res_q + 13'(wndw_q);
    wire logic f_go_zero = (fst_q == F_WAIT) && fcl_q == C_ZERO && q_room;
    wire logic f_go_ncq  = (fst_q == F_WAIT) && fcl_q == C_NCQ && q_room && (res_q == '0 || res_need <= DEPTH);
    wire logic f_go_nq   = (fst_q == F_WAIT) && fcl_q == C_NQ && w_none;
    wire logic q_push = f_go_zero || f_good || f_fail;
    wire logic q_pz   = !f_good;
    wire logic q_pop  = (wst_q == W_IDLE) && !q_empty;
    assign ev_proto  = (h_take && (h_bad || (!h_nq && !h_ncq && !h_lost)))
                    || (w_none && !h_take && !dsm_req_q && s_dat_valid && !nq_busy);
    assign ev_retry  = (fst_q == F_DATA) && !ws_fail && dend && !dend_good && !d_fail;
    assign terr_set  = f_fail;
    assign nicrc_set = dact_fail || (dact_out_q && dend && !dend_good);

    wire logic [12:0] dq_d = dq_q + ((dact_out_q && dend && dend_good) ? 13'(dend_words) : 13'd0)
                                  - 13'(s_dat_valid && s_dat_ready && dq_nz_q);

    always_ff @(posedge clk) begin
        if (h_take) begin
            wtag_q <= s_hrd_addr[22:17];
            woff_q <= s_hrd_addr[16:0];
            wndw_q <= s_hrd_len[13:2];
            wtry_q <= '0;
            fcl_q  <= h_bad ? C_ZERO : h_nq ? C_NQ : h_ncq ? C_NCQ : C_ZERO;
        end
        if (q_push) begin
            qz_q[qwp_q] <= q_pz;
            qn_q[qwp_q] <= wndw_q;
        end
        if (q_pop) begin
            sn_q   <= qn_q[qrp_q];
            wdsm_q <= 1'b0;
        end else if (f_go_nq) begin
            sn_q   <= wndw_q;
            wdsm_q <= 1'b0;
        end else if (w_none && fst_q == F_IDLE && dsm_req_q) begin
            sn_q   <= 12'd128;
            wdsm_q <= 1'b1;
        end

        if (rst) begin
            dsm_req_q <= 1'b0;
            fst_q <= F_IDLE; ws_v_q <= 1'b0; res_q <= '0;
            qwp_q <= '0; qrp_q <= '0; qcnt_q <= '0;
            wst_q <= W_IDLE; dact_v_q <= 1'b0; dact_out_q <= 1'b0; hrem_q <= '0; wi_q <= '0;
            dq_q <= '0; dq_nz_q <= 1'b0;
        end else begin
            if (nq_start) begin
                if (nq_kind == K_DSM) dsm_req_q <= 1'b1;
                hrem_q <= (nq_kind == K_DSM) ? 17'd128 : 17'(nq_nsect * 17'(PDW));
            end
            // FETCH
            case (fst_q)
                F_IDLE: if (h_take) fst_q <= F_WAIT;
                F_WAIT: begin
                    if (f_go_zero || f_go_nq) fst_q <= F_IDLE;
                    if (f_go_ncq) begin fst_q <= F_SETUP; ws_v_q <= 1'b1; end
                end
                F_SETUP: if (ws_pick) begin fst_q <= F_DATA; ws_v_q <= 1'b0; end
                default: begin               // F_DATA
                    if (f_good || f_fail) fst_q <= F_IDLE;
                    else if (dend) begin wtry_q <= wtry_q + 3'd1; fst_q <= F_SETUP; ws_v_q <= 1'b1; end
                end
            endcase
            res_q <= res_q + (f_go_ncq ? 13'(wndw_q) : 13'd0) - (f_fail ? 13'(wndw_q) : 13'd0) - 13'(s_pop);
            // the queue of fetched requests
            if (q_push) qwp_q <= (qwp_q == QW'(WQ - 1)) ? '0 : qwp_q + 1'b1;
            if (q_pop)  qrp_q <= (qrp_q == QW'(WQ - 1)) ? '0 : qrp_q + 1'b1;
            qcnt_q <= qcnt_q + 3'(q_push) - 3'(q_pop);
            // DELIVER
            case (wst_q)
                W_IDLE: begin
                    wi_q <= '0;
                    if (q_pop) wst_q <= qz_q[qrp_q] ? W_ZERO : W_SERVE;
                    else if (f_go_nq) wst_q <= W_NQ;
                    else if (fst_q == F_IDLE && dsm_req_q) begin
                        wst_q <= W_NQ; dsm_req_q <= 1'b0;
                    end
                end
                default: begin               // W_SERVE, W_ZERO, W_NQ
                    if (w_beat) wi_q <= wi_q + 12'd1;
                    if (w_end) wst_q <= W_IDLE;
                end
            endcase
            // non-queued data in: DMA Activate when the host's data ran out
            if (wst_q == W_NQ && !nicrc && (!dq_nz_q || wdsm_q) && !dact_v_q && !dact_out_q && hrem_q != '0)
                dact_v_q <= 1'b1;
            if (dact_pick) begin dact_v_q <= 1'b0; dact_out_q <= 1'b1; end
            if (dact_fail) dact_out_q <= 1'b0;
            dq_q    <= dq_d;
            dq_nz_q <= (dq_d != '0);
            if (dact_out_q && dend) begin
                dact_out_q <= 1'b0;
                if (dend_good) hrem_q <= hrem_q - 17'(dend_words);
            end
            if (nq_idle) dact_v_q <= 1'b0;
        end
    end

`ifndef SYNTHESIS
    // the reservation covers what FETCH and DELIVER hold; the queue never overflows
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (qcnt_q <= 3'(WQ) && !(q_push && !q_room && !q_pop))
                else $error("ats_sata_cmd_wde: fetched-request queue overrun (%m)");
            assert (dq_nz_q == (dq_q != '0))
                else $error("ats_sata_cmd_wde: dq_nz_q disagrees with dq_q (%m)");
            assert (!(s_pop && res_q == '0))
                else $error("ats_sata_cmd_wde: a word delivered with no reservation (%m)");
        end
    end
`endif
endmodule

`resetall
