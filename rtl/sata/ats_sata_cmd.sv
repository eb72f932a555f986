// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd: the SATA front end's command layer and the sending half of its transport layer
// (docs/host-interface.md §2.2-§2.5; rtl/sata/README.md "ats_sata_cmd"). Its parts, one module
// each, wired here (each part's registers are its own; what one part changes in another's state it
// asks for by a pulse, and the owner applies it in the same clock):
//  - DEC (ats_sata_cmd_dec): decodes each Register H2D FIS, answers a refused one with D2H
//    ERR/ABRT, gives an accepted NCQ command its tag, descriptor and D2H 0x40 (I = 0), starts NQ
//    for a non-queued one; holds the descriptor register and the NCQ tag table.
//  - NQ (ats_sata_cmd_nq): the non-queued command (one at a time, §1 tag 32), its descriptors,
//    PIO pages and final D2H (I = 1; SET FEATURES 0x56: with FEATURE's result in LBA 31:0).
//  - WDE (ats_sata_cmd_wde): serves the core's window reads (s_hrd) from the host (DMA Setup /
//    DMA Activate, words only after a good CRC, retries, zeros for lost data).
//  - CPL (ats_sata_cmd_cpl): completions of the core: SDB of OK tags, error SDB and NCQ error log,
//    tag 32 to NQ; the per-tag "data lost on the link" flags.
//  - TX (ats_sata_cmd_tx): one FIS at a time to the link, by priority, re-sent on R_ERR.
//  - the window-write router and PIO page generator (ats_sata_cmd_hwr): core writes to the read
//    buffer, the IDENTIFY capture, the PIO pages.
// The status counters are kept here from the parts' events.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd #(
    parameter int          PAGE_BYTES = 4096,
    parameter int          NUM_TX     = 31,
    parameter logic [63:0] FR         = "0000abcd",
    parameter int          TRIES      = 5,      // sends of one FIS (first + retries)
    parameter int          DFIFO_DEPTH = 2048,  // words of the received-data FIFO (ats_sata_frx)
    parameter int          WR_AHEAD   = 2       // write requests fetched ahead of the core (WDE)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    // Register H2D FISes (ats_sata_frx)
    input  wire logic         s_reg_valid,
    output wire logic         s_reg_ready,
    input  wire logic [159:0] s_reg_data,
    input  wire logic         s_reg_bad,
    // received data (ats_sata_frx)
    output wire logic         dfis_en,
    output wire logic [11:0]  dfis_max,
    output wire logic         dfis_exact,
    input  wire logic         dend,
    input  wire logic         dend_good,
    input  wire logic [11:0]  dend_words,
    input  wire logic         s_dat_valid,
    output wire logic         s_dat_ready,
    input  wire logic [31:0]  s_dat_data,
    // read buffer (ats_sata_rdbuf)
    output wire logic         m_rbw_valid,
    input  wire logic         m_rbw_ready,
    output wire logic [31:0]  m_rbw_addr,
    output wire logic [31:0]  m_rbw_data,
    output wire logic         m_rbw_last,
    input  wire logic         seg_valid,
    input  wire logic [5:0]   seg_tag,
    input  wire logic [16:0]  seg_off,
    input  wire logic [11:0]  seg_ndw,
    output wire logic         seg_start,
    output wire logic         seg_pop,
    input  wire logic         s_seg_valid,
    output wire logic         s_seg_ready,
    input  wire logic [31:0]  s_seg_data,
    input  wire logic         s_seg_last,
    input  wire logic [32:0]  present,
    // link transmit
    output wire logic         m_tx_valid,
    input  wire logic         m_tx_ready,
    output wire logic [31:0]  m_tx_data,
    output wire logic         m_tx_last,
    input  wire logic         s_txr_valid,
    output wire logic         s_txr_ready,
    input  wire logic [1:0]   s_txr_status,
    // device core: descriptors, completions, window reads and writes
    output wire logic         m_cmd_valid,
    input  wire logic         m_cmd_ready,
    output wire logic [3:0]   m_cmd_op,
    output wire logic [7:0]   m_cmd_tag,
    output wire logic [47:0]  m_cmd_lba,
    output wire logic [15:0]  m_cmd_nlb,
    output wire logic [5:0]   m_cmd_txid,
    output wire logic [3:0]   m_cmd_flags,
    output wire logic [1:0]   m_cmd_attr,
    output wire logic [1:0]   m_cmd_prio,
    output wire logic [31:0]  m_cmd_dptr,
    output wire logic [31:0]  m_cmd_aux,
    input  wire logic         s_cpl_valid,
    output wire logic         s_cpl_ready,
    input  wire logic [7:0]   s_cpl_tag,
    input  wire logic [7:0]   s_cpl_status,
    input  wire logic [31:0]  s_cpl_result,
    input  wire logic         s_hrd_valid,
    output wire logic         s_hrd_ready,
    input  wire logic [31:0]  s_hrd_addr,
    input  wire logic [15:0]  s_hrd_len,
    output wire logic         m_hrd_valid,
    input  wire logic         m_hrd_ready,
    output wire logic [31:0]  m_hrd_data,
    output wire logic         m_hrd_last,
    input  wire logic         s_hwr_valid,
    output wire logic         s_hwr_ready,
    input  wire logic [31:0]  s_hwr_addr,
    input  wire logic         s_hwr_last,
    input  wire logic [31:0]  s_hwr_data,
    // status
    output wire logic         busy,          // a command is outstanding
    output wire logic [31:0]  cnt_retry,     // FISes sent again (R_ERR, abort) + write data asked again
    output wire logic [31:0]  cnt_proto      // core traffic the front end did not expect (dropped)
);

    if (PAGE_BYTES != 512 && PAGE_BYTES != 4096) begin : g_check_page
        $fatal(1, "ats_sata_cmd: PAGE_BYTES must be 512 or 4096 (%m)");
    end
    if (NUM_TX < 1 || NUM_TX > 31) begin : g_check_tx
        $fatal(1, "ats_sata_cmd: NUM_TX must be 1..31 (%m)");
    end
    localparam logic [3:0] K_IDENT = ats_sata_cmd_pkg::K_IDENT;

    // DEC
    logic        nq_start, ncq_acc, d2h_valid, d2h_i, d2h_pick;
    logic [3:0]  nq_kind;
    logic [47:0] nq_lba;
    logic [16:0] nq_nsect;
    logic [4:0]  nq_txid, ncq_tag;
    logic [15:0] d2h_se;
    logic [31:0] tbusy, twr;
    logic [47:0] esdb_lba;
    logic [15:0] esdb_cnt;
    logic [7:0]  esdb_dev;
    // NQ
    logic        nq_busy, nq_idle, nq_wait, nq_dread_more, nicrc, pio_cmd, nq_issue;
    logic [3:0]  nq_run_kind;
    logic [3:0]  nq_d_op;
    logic [47:0] nq_d_lba;
    logic [15:0] nq_d_nlb;
    logic [5:0]  nq_d_txid;
    logic [31:0] nq_d_dptr, nq_d_aux;
    logic        fin_valid, pio_valid, pio_sel, pg_go;
    logic [15:0] fin_se;
    logic [31:0] fin_res;
    // WDE
    logic        nicrc_set, r_pop, dsm_done, w_terr_set, ws_valid, dact_valid, wphase, w_proto, w_retry;
    logic [5:0]  wtag;
    logic [16:0] woff;
    logic [11:0] wndw;
    // CPL
    logic        cpl32, err_valid, c_proto;
    logic [7:0]  cpl32_st;
    logic [31:0] cpl32_res;
    logic [32:0] terr;
    logic [31:0] sdb_ok;
    logic [4:0]  err_tag;
    logic [15:0] err_se;
    logic        log_valid;
    logic [4:0]  log_tag;
    logic [15:0] log_se, log_cnt;
    logic [47:0] log_lba;
    logic [7:0]  log_dev, log_devst;
    // TX
    logic        fin_pick, pio_pick, pio_done, pio_ok, log_clear, sdb_pick, sdb_done, esdb_done, rd_giveup;
    logic        dact_pick, dact_fail, ws_pick, ws_fail, t_retry;
    logic [31:0] sdb_mask;
    // window-write router
    logic        pg_end, h_proto;

    ats_sata_cmd_dec #(.PAGE_BYTES(PAGE_BYTES), .NUM_TX(NUM_TX)) u_dec (
        .clk(clk), .rst(rst),
        .s_reg_valid(s_reg_valid), .s_reg_ready(s_reg_ready), .s_reg_data(s_reg_data), .s_reg_bad(s_reg_bad),
        .m_cmd_valid(m_cmd_valid), .m_cmd_ready(m_cmd_ready), .m_cmd_op(m_cmd_op), .m_cmd_tag(m_cmd_tag),
        .m_cmd_lba(m_cmd_lba), .m_cmd_nlb(m_cmd_nlb), .m_cmd_txid(m_cmd_txid), .m_cmd_flags(m_cmd_flags),
        .m_cmd_attr(m_cmd_attr), .m_cmd_prio(m_cmd_prio), .m_cmd_dptr(m_cmd_dptr), .m_cmd_aux(m_cmd_aux),
        .nq_busy(nq_busy), .nq_start(nq_start), .nq_kind(nq_kind), .nq_lba(nq_lba), .nq_nsect(nq_nsect),
        .nq_txid(nq_txid),
        .nq_issue(nq_issue), .nq_d_op(nq_d_op), .nq_d_lba(nq_d_lba), .nq_d_nlb(nq_d_nlb),
        .nq_d_txid(nq_d_txid), .nq_d_dptr(nq_d_dptr), .nq_d_aux(nq_d_aux),
        .ncq_acc(ncq_acc), .ncq_tag(ncq_tag),
        .d2h_valid(d2h_valid), .d2h_se(d2h_se), .d2h_i(d2h_i), .d2h_pick(d2h_pick),
        .tbusy(tbusy), .twr(twr), .sdb_done(sdb_done), .sdb_mask(sdb_mask),
        .esdb_done(esdb_done), .esdb_tag(err_tag), .esdb_lba(esdb_lba), .esdb_cnt(esdb_cnt), .esdb_dev(esdb_dev));

    ats_sata_cmd_nq #(.PAGE_BYTES(PAGE_BYTES), .NUM_TX(NUM_TX)) u_nq (
        .clk(clk), .rst(rst),
        .nq_start(nq_start), .nq_kind(nq_kind), .nq_lba(nq_lba), .nq_nsect(nq_nsect), .nq_txid(nq_txid),
        .busy(nq_busy), .kind(nq_run_kind), .st_idle(nq_idle), .st_wait(nq_wait),
        .dread_more(nq_dread_more), .nicrc(nicrc), .pio_cmd(pio_cmd),
        .issue(nq_issue), .cv(m_cmd_valid), .d_op(nq_d_op), .d_lba(nq_d_lba), .d_nlb(nq_d_nlb),
        .d_txid(nq_d_txid), .d_dptr(nq_d_dptr), .d_aux(nq_d_aux),
        .cpl32(cpl32), .cpl32_st(cpl32_st), .cpl32_res(cpl32_res),
        .dsm_done(dsm_done), .r_pop(r_pop), .s_dat_data(s_dat_data), .nicrc_set(nicrc_set),
        .fin_valid(fin_valid), .fin_se(fin_se), .fin_res(fin_res), .fin_pick(fin_pick),
        .pio_valid(pio_valid), .pio_sel(pio_sel), .pio_pick(pio_pick), .pio_done(pio_done), .pio_ok(pio_ok),
        .pg_go(pg_go), .pg_end(pg_end));

    ats_sata_cmd_wde #(.PAGE_BYTES(PAGE_BYTES), .TRIES(TRIES), .DFIFO_DEPTH(DFIFO_DEPTH), .WQ(WR_AHEAD)) u_wde (
        .clk(clk), .rst(rst),
        .s_hrd_valid(s_hrd_valid), .s_hrd_ready(s_hrd_ready), .s_hrd_addr(s_hrd_addr), .s_hrd_len(s_hrd_len),
        .m_hrd_valid(m_hrd_valid), .m_hrd_ready(m_hrd_ready), .m_hrd_data(m_hrd_data), .m_hrd_last(m_hrd_last),
        .dfis_en(dfis_en), .dfis_max(dfis_max), .dfis_exact(dfis_exact),
        .dend(dend), .dend_good(dend_good), .dend_words(dend_words),
        .s_dat_valid(s_dat_valid), .s_dat_ready(s_dat_ready), .s_dat_data(s_dat_data),
        .nq_start(nq_start), .nq_kind(nq_kind), .nq_nsect(nq_nsect), .nq_busy(nq_busy),
        .nq_run_kind(nq_run_kind), .nq_idle(nq_idle), .nq_dread_more(nq_dread_more),
        .nicrc(nicrc), .nicrc_set(nicrc_set), .r_pop(r_pop), .dsm_done(dsm_done),
        .tbusy(tbusy), .twr(twr), .terr(terr), .terr_set(w_terr_set), .wtag(wtag),
        .ws_valid(ws_valid), .woff(woff), .wndw(wndw), .ws_pick(ws_pick), .ws_fail(ws_fail),
        .dact_valid(dact_valid), .dact_pick(dact_pick), .dact_fail(dact_fail), .wphase(wphase),
        .ev_proto(w_proto), .ev_retry(w_retry));

    ats_sata_cmd_cpl u_cpl (
        .clk(clk), .rst(rst),
        .s_cpl_valid(s_cpl_valid), .s_cpl_ready(s_cpl_ready), .s_cpl_tag(s_cpl_tag), .s_cpl_status(s_cpl_status),
        .s_cpl_result(s_cpl_result),
        .present(present), .rbw_push(m_rbw_valid && m_rbw_ready), .rbw_tag(m_rbw_addr[22:17]),
        .tbusy(tbusy), .nq_wait(nq_wait), .cpl32(cpl32), .cpl32_st(cpl32_st), .cpl32_res(cpl32_res),
        .terr(terr), .ncq_acc(ncq_acc), .ncq_tag(ncq_tag), .nq_start(nq_start),
        .w_terr_set(w_terr_set), .w_terr_tag(wtag), .rd_giveup(rd_giveup), .rd_tag(seg_tag),
        .sdb_ok(sdb_ok), .sdb_pick(sdb_pick), .err_valid(err_valid), .err_tag(err_tag), .err_se(err_se),
        .esdb_done(esdb_done), .esdb_lba(esdb_lba), .esdb_cnt(esdb_cnt), .esdb_dev(esdb_dev),
        .log_clear(log_clear), .log_valid(log_valid), .log_tag(log_tag), .log_se(log_se), .log_lba(log_lba),
        .log_dev(log_dev), .log_cnt(log_cnt), .log_devst(log_devst), .ev_proto(c_proto));

    ats_sata_cmd_tx #(.TRIES(TRIES)) u_tx (
        .clk(clk), .rst(rst),
        .m_tx_valid(m_tx_valid), .m_tx_ready(m_tx_ready), .m_tx_data(m_tx_data), .m_tx_last(m_tx_last),
        .s_txr_valid(s_txr_valid), .s_txr_ready(s_txr_ready), .s_txr_status(s_txr_status),
        .seg_valid(seg_valid), .seg_tag(seg_tag), .seg_off(seg_off), .seg_ndw(seg_ndw),
        .seg_start(seg_start), .seg_pop(seg_pop),
        .s_seg_valid(s_seg_valid), .s_seg_ready(s_seg_ready), .s_seg_data(s_seg_data), .s_seg_last(s_seg_last),
        .d2h_valid(d2h_valid), .d2h_se(d2h_se), .d2h_i(d2h_i), .d2h_pick(d2h_pick),
        .fin_valid(fin_valid), .fin_se(fin_se), .fin_res(fin_res), .fin_pick(fin_pick),
        .pio_valid(pio_valid), .pio_sel(pio_sel), .pio_cmd(pio_cmd), .pio_pick(pio_pick),
        .pio_done(pio_done), .pio_ok(pio_ok), .log_clear(log_clear),
        .sdb_ok(sdb_ok), .sdb_pick(sdb_pick), .sdb_done(sdb_done), .sdb_mask(sdb_mask),
        .err_valid(err_valid), .err_tag(err_tag), .err_se(err_se), .esdb_done(esdb_done), .rd_giveup(rd_giveup),
        .dact_valid(dact_valid), .dact_pick(dact_pick), .dact_fail(dact_fail),
        .ws_valid(ws_valid), .ws_tag(wtag), .ws_off(woff), .ws_ndw(wndw), .wphase(wphase),
        .ws_pick(ws_pick), .ws_fail(ws_fail), .ev_retry(t_retry));

    ats_sata_cmd_hwr #(.PAGE_BYTES(PAGE_BYTES), .FR(FR)) u_hwr (
        .clk(clk), .rst(rst),
        .s_hwr_valid(s_hwr_valid), .s_hwr_ready(s_hwr_ready), .s_hwr_addr(s_hwr_addr), .s_hwr_last(s_hwr_last),
        .s_hwr_data(s_hwr_data),
        .m_rbw_valid(m_rbw_valid), .m_rbw_ready(m_rbw_ready), .m_rbw_addr(m_rbw_addr), .m_rbw_data(m_rbw_data),
        .m_rbw_last(m_rbw_last),
        .tbusy(tbusy), .twr(twr), .nq_busy(nq_busy), .nq_kind(nq_run_kind),
        .fw_clear(nq_start && nq_kind == K_IDENT), .pg_go(pg_go), .pio_sel(pio_sel), .pg_end(pg_end),
        .log_valid(log_valid), .log_tag(log_tag), .log_se(log_se), .log_lba(log_lba), .log_dev(log_dev),
        .log_cnt(log_cnt), .log_devst(log_devst), .ev_proto(h_proto));

    // ---------------------------------------------------------------- status
    logic [31:0] cnt_retry_q, cnt_proto_q;
    assign busy      = (tbusy != 32'd0) || nq_busy;
    assign cnt_retry = cnt_retry_q;
    assign cnt_proto = cnt_proto_q;
    always_ff @(posedge clk) begin
        if (rst) begin
            cnt_retry_q <= '0; cnt_proto_q <= '0;
        end else begin
            if (w_retry || t_retry) cnt_retry_q <= cnt_retry_q + 1'b1;
            if (h_proto || w_proto || c_proto) cnt_proto_q <= cnt_proto_q + 1'b1;
        end
    end
endmodule

`resetall
