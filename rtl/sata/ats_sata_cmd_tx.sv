// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_tx: TX, the sending half of the SATA transport layer (rtl/sata/README.md
// "ats_sata_cmd"). One FIS (or DMA Setup + Data pair) at a time to the link, chosen from the parts'
// registered flags in one clock and loaded the next, in this order: DEC's D2H, NQ's final D2H, the
// SDB of pending OK tags, the error SDB, the PIO Setup + page, DMA Activate, a write DMA Setup (not
// while a write transfer is open), the read buffer's head segment (not while a write transfer or a
// PIO command is open). A FIS answered R_ERR or aborted is sent again from its first dword up to
// TRIES - 1 more times (a pair from its DMA Setup); a non-queued Data FIS is not re-sent.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd_tx #(
    parameter int TRIES = 5             // sends of one FIS (first + retries)
) (
    input  wire logic         clk,
    input  wire logic         rst,          // synchronous, active high
    // link transmit
    output logic              m_tx_valid,
    input  wire logic         m_tx_ready,
    output logic      [31:0]  m_tx_data,
    output logic              m_tx_last,
    input  wire logic         s_txr_valid,
    output wire logic         s_txr_ready,
    input  wire logic [1:0]   s_txr_status,
    // read buffer's head segment and its words
    input  wire logic         seg_valid,
    input  wire logic [5:0]   seg_tag,
    input  wire logic [16:0]  seg_off,
    input  wire logic [11:0]  seg_ndw,
    output wire logic         seg_start,
    output wire logic         seg_pop,
    input  wire logic         s_seg_valid,
    output logic              s_seg_ready,
    input  wire logic [31:0]  s_seg_data,
    input  wire logic         s_seg_last,
    // DEC's Register D2H
    input  wire logic         d2h_valid,
    input  wire logic [15:0]  d2h_se,
    input  wire logic         d2h_i,
    output wire logic         d2h_pick,
    // NQ's final D2H and PIO page
    input  wire logic         fin_valid,
    input  wire logic [15:0]  fin_se,
    input  wire logic [31:0]  fin_res,      // its LBA 31:0 (FEATURE's result; 0 for the others)
    output wire logic         fin_pick,
    input  wire logic         pio_valid,
    input  wire logic         pio_sel,
    input  wire logic         pio_cmd,
    output wire logic         pio_pick,
    output wire logic         pio_done,     // the PIO pair finished (ok or given up)
    output wire logic         pio_ok,
    output wire logic         log_clear,    // the log page was delivered
    // CPL's SDBs
    input  wire logic [31:0]  sdb_ok,
    output wire logic         sdb_pick,
    output wire logic         sdb_done,
    output wire logic [31:0]  sdb_mask,     // the tags of the SDB sent
    input  wire logic         err_valid,
    input  wire logic [4:0]   err_tag,
    input  wire logic [15:0]  err_se,
    output wire logic         esdb_done,
    output wire logic         rd_giveup,    // a read segment given up: its tag's data were lost
    // WDE's DMA Activate and write DMA Setup
    input  wire logic         dact_valid,
    output wire logic         dact_pick,
    output wire logic         dact_fail,
    input  wire logic         ws_valid,
    input  wire logic [5:0]   ws_tag,
    input  wire logic [16:0]  ws_off,
    input  wire logic [11:0]  ws_ndw,
    input  wire logic         wphase,
    output wire logic         ws_pick,
    output wire logic         ws_fail,
    output wire logic         ev_retry      // a FIS answered R_ERR or aborted
);
    localparam logic [5:0] NQTAG = ats_sata_cmd_pkg::NQTAG;
    localparam logic [3:0] T_IDLE = 4'd0, T_HDR = 4'd1, T_RES = 4'd2, T_DHDR = 4'd3, T_DATA = 4'd4,
                           T_DRES = 4'd5, T_PICK = 4'd6;
    localparam logic [2:0] X_D2H = 3'd0, X_FIN = 3'd1, X_SDB = 3'd2, X_ESDB = 3'd3, X_PIO = 3'd4,
                           X_DACT = 3'd5, X_WS = 3'd6, X_RD = 3'd7;
    logic [3:0]  tst_q;
    logic [2:0]  tk_q;                    // kind of the FIS (pair) being sent
    logic [31:0] hdr_q [7];
    logic [2:0]  hn_q, hi_q;              // header dwords, index
    logic [2:0]  ttry_q;
    logic [31:0] tmask_q;                 // SDB: tags in it
    logic        tpair_q;                 // a Data FIS follows (read data / PIO data)
    wire  logic  rd_ready = seg_valid && !wphase && !pio_cmd;
    /* verilator lint_off UNUSEDSIGNAL */
    wire logic unused = ^{err_se[7], err_se[3], ws_tag[5]};   // the SDB has no BSY/DRQ; NCQ tags are 5 bits
    /* verilator lint_on UNUSEDSIGNAL */

    always_comb begin
        m_tx_valid = 1'b0; m_tx_data = 32'd0; m_tx_last = 1'b0; s_seg_ready = 1'b0;
        case (tst_q)
            T_HDR: begin
                m_tx_valid = 1'b1; m_tx_data = hdr_q[hi_q]; m_tx_last = (hi_q == hn_q - 3'd1);
            end
            T_DHDR: begin m_tx_valid = 1'b1; m_tx_data = 32'h0000_0046; end
            T_DATA: begin
                m_tx_valid = s_seg_valid; m_tx_data = s_seg_data; m_tx_last = s_seg_last;
                s_seg_ready = m_tx_ready;
            end
            default: ;
        endcase
    end
    assign s_txr_ready = (tst_q == T_RES) || (tst_q == T_DRES);
    wire logic txr   = s_txr_valid && s_txr_ready;
    wire logic txok  = txr && (s_txr_status == 2'd0);
    wire logic tx_beat = m_tx_valid && m_tx_ready;

    // pick (T_IDLE)
    logic       pk_v;
    logic [2:0] pk;
    always_comb begin
        pk_v = 1'b1; pk = X_D2H;
        if (d2h_valid)                 pk = X_D2H;
        else if (fin_valid)            pk = X_FIN;
        else if (err_valid && sdb_ok == 32'd0) pk = X_ESDB;
        else if (sdb_ok != 32'd0)      pk = X_SDB;
        else if (pio_valid)            pk = X_PIO;
        else if (dact_valid)           pk = X_DACT;
        else if (ws_valid && !wphase)  pk = X_WS;
        else if (rd_ready)             pk = X_RD;
        else pk_v = 1'b0;
    end
    // T_IDLE chooses (from registered flags), T_PICK acts on the registered choice a clock later:
    // nothing withdraws a chosen source in between
    logic [2:0] pk_q;
    wire logic choose = (tst_q == T_IDLE) && pk_v;
    wire logic pick   = (tst_q == T_PICK);
    assign d2h_pick  = pick && pk_q == X_D2H;
    assign fin_pick  = pick && pk_q == X_FIN;
    assign pio_pick  = pick && pk_q == X_PIO;
    assign sdb_pick  = pick && pk_q == X_SDB;
    assign ws_pick   = pick && pk_q == X_WS;
    assign dact_pick = pick && pk_q == X_DACT;
    assign seg_start = (tst_q == T_RES && txok && tpair_q && (tk_q == X_RD || tk_q == X_PIO))
                    || (pick && pk_q == X_RD && seg_tag == NQTAG);
    // finishing a FIS (pair): ok, or given up after TRIES sends
    wire logic t_last_try = (ttry_q == 3'(TRIES - 1));
    wire logic t_fin_ok   = (tst_q == T_RES && txok && !tpair_q) || (tst_q == T_DRES && txok);
    wire logic t_fail_res = txr && !txok;
    // a non-queued Data FIS (READ DMA EXT, PIO data) is not re-sent
    wire logic t_noretry  = (tst_q == T_DRES) && (tk_q == X_PIO || (tk_q == X_RD && tpair_q == 1'b0));
    wire logic t_giveup   = t_fail_res && (t_last_try || t_noretry);
    wire logic t_done     = t_fin_ok || t_giveup;
    assign pio_done  = t_done && tk_q == X_PIO;
    assign pio_ok    = t_fin_ok;
    assign ws_fail   = t_giveup && tk_q == X_WS;
    assign dact_fail = t_giveup && tk_q == X_DACT;
    assign seg_pop   = t_done && (tk_q == X_RD || tk_q == X_PIO);
    assign log_clear = t_fin_ok && tk_q == X_PIO && pio_sel;
    assign sdb_done  = t_done && tk_q == X_SDB;
    assign sdb_mask  = tmask_q;
    assign esdb_done = t_done && tk_q == X_ESDB;
    assign rd_giveup = t_done && tk_q == X_RD && t_giveup;
    assign ev_retry  = t_fail_res;

    always_ff @(posedge clk) begin
        if (pick) begin
            tk_q    <= pk_q;
            ttry_q  <= '0;
            hi_q    <= '0;
            tpair_q <= 1'b0;
            for (int i = 0; i < 7; i++) hdr_q[i] <= 32'd0;
            case (pk_q)
                X_D2H: begin
                    hn_q <= 3'd5;
                    hdr_q[0] <= {d2h_se, 1'b0, d2h_i, 6'd0, 8'h34};
                end
                X_FIN: begin
                    hn_q <= 3'd5;
                    hdr_q[0] <= {fin_se, 1'b0, 1'b1, 6'd0, 8'h34};
                    hdr_q[1] <= {8'd0, fin_res[23:0]};          // Device 0, LBA 23:0
                    hdr_q[2] <= {24'd0, fin_res[31:24]};        // LBA 31:24 (47:32 zero)
                end
                X_SDB: begin
                    hn_q <= 3'd2;
                    hdr_q[0] <= {8'h00, 1'b0, 3'h4, 1'b0, 3'h0, 1'b0, 1'b1, 6'd0, 8'hA1};
                    hdr_q[1] <= sdb_ok;
                    tmask_q  <= sdb_ok;
                end
                X_ESDB: begin
                    hn_q <= 3'd2;
                    hdr_q[0] <= {err_se[15:8], 1'b0, err_se[6:4], 1'b0, err_se[2:0], 1'b0, 1'b1, 6'd0, 8'hA1};
                    hdr_q[1] <= 32'd1 << err_tag;
                end
                X_PIO: begin
                    hn_q <= 3'd5;
                    tpair_q <= 1'b1;
                    hdr_q[0] <= {8'h00, 8'h58, 1'b0, 1'b1, 1'b1, 5'd0, 8'h5F};
                    hdr_q[3] <= {8'h50, 24'd0};
                    hdr_q[4] <= 32'd512;
                end
                X_DACT: begin
                    hn_q <= 3'd1;
                    hdr_q[0] <= 32'h0000_0039;
                end
                X_WS: begin
                    hn_q <= 3'd7;
                    hdr_q[0] <= {16'd0, 1'b1, 1'b0, 1'b0, 5'd0, 8'h41};   // A = 1, D = 0
                    hdr_q[1] <= {27'd0, ws_tag[4:0]};
                    hdr_q[4] <= {15'd0, ws_off};
                    hdr_q[5] <= {18'd0, ws_ndw, 2'b00};
                end
                default: begin                                           // X_RD
                    if (seg_tag == NQTAG) begin
                        tpair_q <= 1'b0;
                    end else begin
                        hn_q <= 3'd7;
                        tpair_q <= 1'b1;
                        hdr_q[0] <= {16'd0, 1'b0, 1'b0, 1'b1, 5'd0, 8'h41};   // D = 1
                        hdr_q[1] <= {27'd0, seg_tag[4:0]};
                        hdr_q[4] <= {15'd0, seg_off};
                        hdr_q[5] <= {18'd0, seg_ndw, 2'b00};
                    end
                end
            endcase
        end
        if (tst_q == T_HDR && tx_beat) hi_q <= hi_q + 3'd1;
        if (tst_q == T_RES && t_fail_res && !t_giveup) hi_q <= '0;
        if (tst_q == T_DRES && t_fail_res && !t_giveup) hi_q <= '0;

        if (rst) begin
            tst_q <= T_IDLE;
        end else begin
            case (tst_q)
                T_IDLE: if (choose) begin tst_q <= T_PICK; pk_q <= pk; end
                T_PICK: tst_q <= (pk_q == X_RD && seg_tag == NQTAG) ? T_DHDR : T_HDR;
                T_HDR:  if (tx_beat && hi_q == hn_q - 3'd1) tst_q <= T_RES;
                T_RES:  if (txr) begin
                    if (txok) tst_q <= tpair_q ? T_DHDR : T_IDLE;
                    else if (t_giveup) tst_q <= T_IDLE;
                    else begin tst_q <= T_HDR; ttry_q <= ttry_q + 3'd1; end
                end
                T_DHDR: if (tx_beat) tst_q <= T_DATA;
                T_DATA: if (tx_beat && m_tx_last) tst_q <= T_DRES;
                T_DRES: if (txr) begin
                    if (txok || t_giveup) tst_q <= T_IDLE;
                    else begin tst_q <= T_HDR; ttry_q <= ttry_q + 3'd1; end
                end
                default: tst_q <= T_IDLE;
            endcase
        end
    end
endmodule

`resetall
