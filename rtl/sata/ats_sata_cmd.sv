// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd: the SATA front end's command layer and the sending half of its transport layer
// (docs/host-interface.md §2.2-§2.5; rtl/sata/README.md "ats_sata_cmd"). Five parts:
//  - DEC: takes each Register H2D FIS (ats_sata_frx), checks it (§2.5's order) and answers a refused
//    one with Register D2H ERR/ABRT; an accepted NCQ command takes its tag, gets its §1 descriptor
//    and a Register D2H 0x40 (I = 0); an accepted non-queued command starts NQ.
//  - NQ: runs the non-queued command (one at a time, §1 tag 32): its descriptor(s) one after the
//    other (a READ DMA EXT page by page, recovery txid by txid, DSM range by range), the PIO pages,
//    and its final Register D2H (I = 1) with the first non-OK status.
//  - WDE: serves the core's window reads (s_hrd) from the host: an NCQ write request gets a DMA
//    Setup (auto-activate) and exactly its words in one Data FIS, a non-queued write gets DMA
//    Activates as the host's data run out; words reach the core only after their FIS's CRC was good
//    (ats_sata_dfifo); a failed transfer is asked again (NCQ) or ends the command ICRC with zeros.
//  - CPL: completions of the core; an NCQ completion waits until the tag's read data left the read
//    buffer, then joins the next Set Device Bits (OK) or gets its own error SDB.
//  - TX: one FIS at a time to the link, by priority (DEC's D2H, NQ's D2H, SDB, PIO, DMA Activate,
//    write DMA Setup, read data), each re-sent up to 4 times when answered R_ERR or aborted.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd #(
    parameter int          PAGE_BYTES = 4096,
    parameter int          NUM_TX     = 31,
    parameter logic [63:0] FR         = "0000abcd",
    parameter int          TRIES      = 5       // sends of one FIS (first + retries)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    // Register H2D FISes (ats_sata_frx)
    input  wire logic         s_reg_valid,
    output      logic         s_reg_ready,
    input  wire logic [159:0] s_reg_data,
    input  wire logic         s_reg_bad,
    // received data (ats_sata_frx)
    output      logic         dfis_en,
    output      logic [11:0]  dfis_max,
    output      logic         dfis_exact,
    input  wire logic         dend,
    input  wire logic         dend_good,
    input  wire logic [11:0]  dend_words,
    input  wire logic         s_dat_valid,
    output      logic         s_dat_ready,
    input  wire logic [31:0]  s_dat_data,
    // read buffer (ats_sata_rdbuf)
    output      logic         m_rbw_valid,
    input  wire logic         m_rbw_ready,
    output      logic [31:0]  m_rbw_addr,
    output      logic [31:0]  m_rbw_data,
    output      logic         m_rbw_last,
    input  wire logic         seg_valid,
    input  wire logic [5:0]   seg_tag,
    input  wire logic [16:0]  seg_off,
    input  wire logic [11:0]  seg_ndw,
    output      logic         seg_start,
    output      logic         seg_pop,
    input  wire logic         s_seg_valid,
    output      logic         s_seg_ready,
    input  wire logic [31:0]  s_seg_data,
    input  wire logic         s_seg_last,
    input  wire logic [32:0]  present,
    // link transmit
    output      logic         m_tx_valid,
    input  wire logic         m_tx_ready,
    output      logic [31:0]  m_tx_data,
    output      logic         m_tx_last,
    input  wire logic         s_txr_valid,
    output      logic         s_txr_ready,
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
    output      logic         s_cpl_ready,
    input  wire logic [7:0]   s_cpl_tag,
    input  wire logic [7:0]   s_cpl_status,
    input  wire logic [31:0]  s_cpl_result,
    input  wire logic         s_hrd_valid,
    output      logic         s_hrd_ready,
    input  wire logic [31:0]  s_hrd_addr,
    input  wire logic [15:0]  s_hrd_len,
    output      logic         m_hrd_valid,
    input  wire logic         m_hrd_ready,
    output      logic [31:0]  m_hrd_data,
    output      logic         m_hrd_last,
    input  wire logic         s_hwr_valid,
    output      logic         s_hwr_ready,
    input  wire logic [31:0]  s_hwr_addr,
    input  wire logic         s_hwr_last,
    input  wire logic [31:0]  s_hwr_data,
    // status
    output wire logic         busy,          // a command is outstanding
    output wire logic [31:0]  cnt_retry,     // FISes sent again (R_ERR, abort) + write data asked again
    output wire logic [31:0]  cnt_proto      // core traffic the front end did not expect (dropped)
);
    localparam int MAXSECT = 65536 / PAGE_BYTES;       // 64 KiB per command
    localparam int PDW     = PAGE_BYTES / 4;
    localparam logic [7:0] ST_OK = 8'h00, ST_BAD_TXID = 8'h02, ST_BAD_LBA = 8'h03,
                           ST_TX_EMPTY = 8'h06, ST_MEDIA = 8'h10, ST_PFAIL = 8'h11, ST_NOSPACE = 8'h13,
                           ST_ICRC = 8'hFF;            // front end: data lost on the link
    localparam logic [3:0] OP_READ = 4'd0, OP_WRITE = 4'd1, OP_TX_ABORT = 4'd5, OP_FLUSH = 4'd6,
                           OP_TRIM = 4'd8, OP_IDENTIFY = 4'd9;
    localparam logic [5:0] NQTAG = 6'd32;

    if (PAGE_BYTES != 512 && PAGE_BYTES != 4096) begin : g_check_page
        $fatal(1, "ats_sata_cmd: PAGE_BYTES must be 512 or 4096 (%m)");
    end
    if (NUM_TX < 1 || NUM_TX > 31) begin : g_check_tx
        $fatal(1, "ats_sata_cmd: NUM_TX must be 1..31 (%m)");
    end

    // ATA Status / Error of a device status (§2.5)
    function automatic logic [15:0] ata_se(input logic [7:0] st);
        case (st)
            ST_OK:      ata_se = {8'h00, 8'h40};
            ST_BAD_LBA: ata_se = {8'h10, 8'h41};
            ST_MEDIA:   ata_se = {8'h40, 8'h41};
            ST_PFAIL:   ata_se = {8'h04, 8'h61};
            ST_NOSPACE: ata_se = {8'h04, 8'h41};       // ABRT (§2.5: no space, the write was not taken)
            ST_ICRC:    ata_se = {8'h84, 8'h41};
            default:    ata_se = {8'h04, 8'h41};
        endcase
    endfunction

    // ---------------------------------------------------------------- shared state
    logic [31:0] tbusy_q, twr_q;                       // NCQ tags: outstanding, write
    logic [47:0] tlba_q [32];
    logic [15:0] tcnt_q [32];
    logic [7:0]  tdev_q [32];
    logic [32:0] terr_q;                               // tag's data transfer failed (ICRC)
    logic [31:0] cnt_retry_q, cnt_proto_q;

    // descriptor register
    logic        cv_q;
    logic [3:0]  cop_q;
    logic [7:0]  ctag_q;
    logic [47:0] clba_q;
    logic [15:0] cnlb_q;
    logic [5:0]  ctxid_q;
    logic [3:0]  cflags_q;
    logic [1:0]  cattr_q, cprio_q;
    logic [31:0] cdptr_q;
    assign m_cmd_valid = cv_q;
    assign m_cmd_op    = cop_q;
    assign m_cmd_tag   = ctag_q;
    assign m_cmd_lba   = clba_q;
    assign m_cmd_nlb   = cnlb_q;
    assign m_cmd_txid  = ctxid_q;
    assign m_cmd_flags = cflags_q;
    assign m_cmd_attr  = cattr_q;
    assign m_cmd_prio  = cprio_q;
    assign m_cmd_dptr  = cdptr_q;
    assign m_cmd_aux   = 32'd0;

    // ---------------------------------------------------------------- DEC: decode
    wire logic [31:0] w0 = s_reg_data[31:0];
    wire logic [31:0] w1 = s_reg_data[63:32];
    wire logic [31:0] w2 = s_reg_data[95:64];
    wire logic [31:0] w3 = s_reg_data[127:96];
    wire logic        e_c      = w0[15];
    wire logic [7:0]  e_cmd    = w0[23:16];
    wire logic [15:0] e_feat   = {w2[31:24], w0[31:24]};
    wire logic [47:0] e_lba    = {w2[23:0], w1[23:0]};
    wire logic [7:0]  e_dev    = w1[31:24];
    wire logic [15:0] e_cnt    = w3[15:0];
    wire logic [4:0]  e_tag    = e_cnt[7:3];
    wire logic [4:0]  e_txid   = e_cnt[12:8];
    wire logic        e_commit = e_cnt[13];
    wire logic [1:0]  e_prio   = e_cnt[15:14];
    wire logic [16:0] e_nsq    = (e_feat == 16'd0) ? 17'h10000 : {1'b0, e_feat};   // FPDMA sectors
    wire logic [16:0] e_nsd    = (e_cnt == 16'd0) ? 17'h10000 : {1'b0, e_cnt};     // DMA EXT sectors

    /* verilator lint_off CMPCONST */
    wire logic        txid_ok  = (6'(e_txid) <= 6'(NUM_TX));
    /* verilator lint_on CMPCONST */
    /* verilator lint_off UNUSEDSIGNAL */
    wire logic unused = ^{s_reg_data[159:128], w0[14:0], w3[31:16], s_cpl_result, s_hwr_addr[1:0]};
    /* verilator lint_on UNUSEDSIGNAL */

    localparam logic [2:0] K_WRITE = 3'd0, K_READ = 3'd1, K_FLUSH = 3'd2, K_ABORT = 3'd3,
                           K_RECOVER = 3'd4, K_DSM = 3'd5, K_IDENT = 3'd6, K_LOG = 3'd7;

    logic        nq_busy_q;
    logic        d2h_v_q;                 // DEC's Register D2H waiting for TX
    logic [15:0] d2h_se_q;                // {error, status}
    logic        d2h_i_q;
    logic        e_go;                   // DEC starts NQ this cycle
    logic [2:0]  e_kind;
    wire  logic  ncq_any = (tbusy_q != 32'd0);

    logic e_acc, e_rej, e_ncq;
    always_comb begin
        e_acc = 1'b0; e_rej = 1'b0; e_ncq = 1'b0; e_go = 1'b0; e_kind = K_FLUSH;
        if (s_reg_bad) e_rej = 1'b1;
        else if (!e_c) e_acc = 1'b0;    // Device Control update: ignored
        else begin
            case (e_cmd)
                8'h60, 8'h61: begin
                    if (nq_busy_q || e_cnt[2:0] != 3'd0 || e_prio == 2'd3 || !txid_ok
                        || tbusy_q[e_tag] || e_nsq > 17'(MAXSECT)
                        || (e_cmd == 8'h60 && (e_commit || e_dev[0])))
                        e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_ncq = 1'b1; end
                end
                8'h25, 8'h35: begin
                    if (nq_busy_q || ncq_any || e_nsd > 17'(MAXSECT)) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = (e_cmd == 8'h25) ? K_READ : K_WRITE; end
                end
                8'hE7: begin
                    if (nq_busy_q || ncq_any) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_FLUSH; end
                end
                8'hEA: begin
                    if (nq_busy_q || ncq_any) e_rej = 1'b1;
                    else if (e_tag == 5'd0) begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_FLUSH; end
                    else if (e_tag == 5'd1 && e_txid != 5'd0 && txid_ok) begin
                        e_acc = 1'b1; e_go = 1'b1; e_kind = K_ABORT;
                    end else if (e_tag == 5'd2) begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_RECOVER; end
                    else e_rej = 1'b1;
                end
                8'h06: begin
                    if (nq_busy_q || ncq_any || !e_feat[0] || e_cnt != 16'd1) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_DSM; end
                end
                8'hEC: begin
                    if (nq_busy_q || ncq_any) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_IDENT; end
                end
                8'h2F: begin
                    if (nq_busy_q || ncq_any || e_lba[15:0] != 16'h0010 || e_cnt != 16'd1) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_LOG; end
                end
                default: e_rej = 1'b1;
            endcase
        end
    end
    // DEC in two clocks: the checks above are registered with the fields they pass on, then acted
    // upon (`dec_take`: the D2H slot and the descriptor register are free). A FIS is decoded only
    // while the previous one has been acted upon, so what the checks read can only have changed in
    // between by a completion the host had not yet seen when it sent this FIS.
    logic        d2v_q;
    logic [7:0]  f_cmd, f_dev;
    logic [47:0] f_lba;
    logic [15:0] f_cnt;
    logic [4:0]  f_tag, f_txid;
    logic        f_commit;
    logic [1:0]  f_prio;
    logic [16:0] f_nsq, f_nsd;
    logic        dec_acc, dec_rej, dec_ncq, nq_go;
    logic [2:0]  nq_go_kind;
    assign s_reg_ready = !d2v_q;
    wire logic dec_take = d2v_q && !d2h_v_q && !cv_q;
    always_ff @(posedge clk) begin
        if (s_reg_valid && s_reg_ready) begin
            f_cmd <= e_cmd; f_dev <= e_dev; f_lba <= e_lba; f_cnt <= e_cnt; f_tag <= e_tag;
            f_txid <= e_txid; f_commit <= e_commit; f_prio <= e_prio; f_nsq <= e_nsq; f_nsd <= e_nsd;
            dec_acc <= e_acc; dec_rej <= e_rej; dec_ncq <= e_ncq; nq_go <= e_go; nq_go_kind <= e_kind;
        end
        if (rst) d2v_q <= 1'b0;
        else if (s_reg_valid && s_reg_ready) d2v_q <= 1'b1;
        else if (dec_take) d2v_q <= 1'b0;
    end

    // ---------------------------------------------------------------- NQ: non-queued commands
    localparam logic [2:0] N_IDLE = 3'd0, N_ISSUE = 3'd1, N_WAIT = 3'd2, N_DSMRX = 3'd3,
                           N_DSCAN = 3'd4, N_PIO = 3'd5, N_FIN = 3'd6, N_DREAD = 3'd7;
    logic [2:0]  nst_q;
    logic [2:0]  nkind_q;
    logic [47:0] nlba_q;
    logic [16:0] nsect_q;
    logic [16:0] ni_q;                    // page / txid / range index
    logic [16:0] nrem_q;                  // READ DMA EXT: pages not yet completed
    logic [7:0]  nst_dev_q;               // first non-OK device status
    logic        nicrc_q;
    logic [4:0]  ntxid_q;
    logic        fin_v_q;                 // NQ's final D2H waiting for TX
    logic        pio_v_q;                 // PIO (page) waiting for TX
    logic        pio_sel_q;               // 0 IDENTIFY, 1 log
    logic        pio_done, pio_ok;        // from TX
    logic        dsm_req_q;               // WDE: capture the DSM range block
    logic        dsm_done;                // from WDE
    logic        cpl32;                   // a tag-32 completion taken this cycle
    logic [7:0]  cpl32_st;
    logic [63:0] rng_e;                   // DSM range ni_q, popped from the data FIFO in N_DREAD
    logic        rhalf_q;                 // its low word was popped
    logic [31:0] fw_q [16];               // the firmware's IDENTIFY words (1..15 used)
    // NCQ Command Error log
    logic        log_v_q;
    logic [4:0]  log_tag_q;
    logic [15:0] log_se_q;
    logic [47:0] log_lba_q;
    logic [7:0]  log_dev_q;
    logic [15:0] log_cnt_q;
    logic [7:0]  log_devst_q;
    logic        log_clear;               // from TX: the log page was sent

    wire logic [7:0] nst_eff = nicrc_q ? ST_ICRC : nst_dev_q;
    wire logic nq_issue = (nst_q == N_ISSUE) && !cv_q;

    // ---------------------------------------------------------------- WDE: window reads
    localparam logic [2:0] W_IDLE = 3'd0, W_NQ = 3'd1, W_SETUP = 3'd2, W_DATA = 3'd3, W_SERVE = 3'd4,
                           W_ZERO = 3'd5;
    logic [2:0]  wst_q;
    logic [5:0]  wtag_q;
    logic [16:0] woff_q;
    logic [11:0] wndw_q;                  // words of the request
    logic [11:0] wi_q;                    // words served
    logic        wdsm_q;                  // the consumer is the DSM capture
    logic [2:0]  wtry_q;
    logic        ws_v_q;                  // DMA Setup (write) waiting for TX
    logic        ws_pick, ws_fail;        // from TX
    logic        dact_v_q, dact_out_q;    // DMA Activate waiting for TX / the host's FIS expected
    logic        dact_pick, dact_fail;    // from TX
    logic [16:0] hrem_q;                  // non-queued: words the host still has to send
    logic [12:0] dq_q;                    // non-queued: committed words in the data FIFO not yet taken
    // after a lost FIS (nicrc_q) a non-queued write still takes the good words received before it,
    // then zeros: no word of this command is left behind for the next one
    wire  logic  wzero = (wst_q == W_ZERO) || (wst_q == W_NQ && nicrc_q && dq_q == '0);
    wire  logic  wfrom_fifo = (wst_q == W_SERVE) || (wst_q == W_NQ && (!nicrc_q || dq_q != '0));
    wire  logic  w_out = (wst_q == W_SERVE) || (wst_q == W_ZERO) || (wst_q == W_NQ);

    always_comb begin
        m_hrd_valid = 1'b0;
        m_hrd_data  = 32'd0;
        m_hrd_last  = (wi_q == wndw_q - 12'd1);
        s_dat_ready = 1'b0;
        if (w_out && !(wst_q == W_NQ && wdsm_q)) begin
            m_hrd_valid = wzero || s_dat_valid;
            m_hrd_data  = wzero ? 32'd0 : s_dat_data;
            s_dat_ready = wfrom_fifo && m_hrd_ready;
        end else if (wst_q == W_IDLE && !nq_busy_q) begin
            s_dat_ready = 1'b1;           // stale words (none expected): drained
        end else if (wst_q == W_IDLE && nst_q == N_DREAD && ni_q != 17'd64) begin
            s_dat_ready = 1'b1;           // the DSM range block, two words per range
        end
    end
    // the DSM block stays in the data FIFO: its transfer ends when the host sent all 128 words
    wire logic w_beat = m_hrd_valid && m_hrd_ready;
    wire logic dsm_in = (wst_q == W_NQ) && wdsm_q && (nicrc_q || (hrem_q == '0 && !dact_out_q));
    wire logic w_end  = ((wst_q != W_NQ || !wdsm_q) && w_out && w_beat && (wi_q == wndw_q - 12'd1)) || dsm_in;
    wire logic r_pop  = s_dat_valid && s_dat_ready && (wst_q == W_IDLE) && (nst_q == N_DREAD);
    // a request is taken once stale non-queued words are gone (none are expected)
    assign s_hrd_ready = (wst_q == W_IDLE) && !dsm_req_q && (nq_busy_q || dq_q == '0);
    assign dfis_en     = (wst_q == W_DATA) || dact_out_q;
    assign dfis_max    = dact_out_q ? ((hrem_q > 17'd2048) ? 12'd2048 : hrem_q[11:0]) : wndw_q;
    assign dfis_exact  = !dact_out_q;
    assign dsm_done    = dsm_in;

    // ---------------------------------------------------------------- CPL: completions
    logic [31:0] sdb_ok_q;                // tags completed OK, not yet in an SDB
    logic        err_v_q;                 // one failed NCQ completion waiting for its SDB
    logic [4:0]  err_tag_q;
    logic [7:0]  err_st_q;
    // completions are taken into a register first (cq), then acted upon; one whose tag had read
    // words pushed into the read buffer in the last two clocks waits (rdbuf's `present` lags)
    logic        cq_v_q;
    logic [7:0]  cq_tag_q, cq_st_q;
    logic        rp1_v_q, rp2_v_q;
    logic [5:0]  rp1_tag_q, rp2_tag_q;
    wire  logic [5:0] ct = cq_tag_q[5:0];
    wire  logic  c_recent = (rp1_v_q && rp1_tag_q == ct) || (rp2_v_q && rp2_tag_q == ct);
    wire  logic [15:0] err_se = ata_se(err_st_q);
    wire  logic [15:0] fin_se = ata_se(nst_eff);
    wire  logic c_ncq  = (cq_tag_q < 8'd32) && tbusy_q[ct[4:0]];
    wire  logic c_nq   = (cq_tag_q == 8'd32) && (nst_q == N_WAIT);
    wire  logic c_fail = (cq_st_q != ST_OK) || terr_q[ct];
    logic c_go;
    always_comb begin
        if (c_ncq)      c_go = !present[ct] && !c_recent && !(c_fail && err_v_q);
        else if (c_nq)  c_go = !present[32] && !c_recent;
        else            c_go = 1'b1;                   // not expected: dropped
    end
    // the decision is registered (cgo_q) and acted upon a clock later: nothing that c_go reads
    // changes for a completion waiting in cq in between
    logic cgo_q;
    assign s_cpl_ready = !cq_v_q;
    wire logic cpl_take = cgo_q;
    assign cpl32    = cpl_take && c_nq;
    assign cpl32_st = terr_q[32] ? ST_ICRC : cq_st_q;

    // ---------------------------------------------------------------- hwr router
    // IDENTIFY answers are captured; words of a tag with nothing outstanding are dropped
    wire logic [5:0] ht = s_hwr_addr[22:17];
    wire logic h_ident = (ht == NQTAG) && nq_busy_q && (nkind_q == K_IDENT);
    wire logic h_ok    = (ht < 6'd32 && tbusy_q[ht[4:0]] && !twr_q[ht[4:0]])
                      || (ht == NQTAG && nq_busy_q && nkind_q == K_READ);
    logic [6:0] hcap_q;                   // word index inside the IDENTIFY burst
    // the PIO page generator has the read buffer's input while it runs (no read data then)
    logic        pg_v2_q, pg_l2_q;
    logic [31:0] pg_d2_q;
    assign m_rbw_valid = pg_v2_q || (s_hwr_valid && h_ok && (s_hwr_addr[31:23] == 9'd0));
    assign m_rbw_addr  = pg_v2_q ? {9'd0, NQTAG, 17'd0} : s_hwr_addr;
    assign m_rbw_data  = pg_v2_q ? pg_d2_q : s_hwr_data;
    assign m_rbw_last  = pg_v2_q ? pg_l2_q : s_hwr_last;
    assign s_hwr_ready = (h_ok && s_hwr_addr[31:23] == 9'd0) ? (m_rbw_ready && !pg_v2_q) : 1'b1;
    wire logic [6:0] hidx = s_hwr_addr[8:2] + hcap_q;

    // ---------------------------------------------------------------- TX
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
    // PIO page generator (into the read buffer): idx -> page dword (register 1) -> checksum (register 2)
    logic        pg_go_q, pg_run_q, pg_v1_q, pg_l1_q;
    logic [6:0]  pg_i_q;
    logic [31:0] pg_d1_q;
    logic [7:0]  pg_sum_q;
    logic [31:0] pdw;
    wire  logic  pg_en  = !pg_v2_q || m_rbw_ready;
    wire  logic  pg_end = pg_v2_q && pg_l2_q && m_rbw_ready;
    wire  logic [7:0] pg_b3 = pg_d1_q[7:0] + pg_d1_q[15:8] + pg_d1_q[23:16];
    wire  logic  wphase = (wst_q == W_DATA) || dact_out_q;
    wire  logic  pio_cmd = nq_busy_q && (nkind_q == K_IDENT || nkind_q == K_LOG);
    wire  logic  rd_ready = seg_valid && !wphase && !pio_cmd;

    ats_sata_page #(.PAGE_BYTES(PAGE_BYTES), .FR(FR)) u_page (
        .sel(pio_sel_q), .idx(pg_i_q), .dword(pdw),
        .fw_words({fw_q[15], fw_q[14], fw_q[13], fw_q[12], fw_q[11], fw_q[10], fw_q[9], fw_q[8],
                   fw_q[7], fw_q[6], fw_q[5], fw_q[4], fw_q[3], fw_q[2], fw_q[1]}),
        .log_valid(log_v_q), .log_tag(log_tag_q), .log_status(log_se_q[7:0]), .log_error(log_se_q[15:8]),
        .log_lba(log_lba_q), .log_device(log_dev_q), .log_count(log_cnt_q), .log_devstatus(log_devst_q));

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
        if (d2h_v_q)                   pk = X_D2H;
        else if (fin_v_q)              pk = X_FIN;
        else if (err_v_q && sdb_ok_q == 32'd0) pk = X_ESDB;
        else if (sdb_ok_q != 32'd0)    pk = X_SDB;
        else if (pio_v_q)              pk = X_PIO;
        else if (dact_v_q)             pk = X_DACT;
        else if (ws_v_q && !wphase)   pk = X_WS;
        else if (rd_ready)             pk = X_RD;
        else pk_v = 1'b0;
    end
    // T_IDLE chooses (from registered flags), T_PICK acts on the registered choice a clock later:
    // nothing withdraws a chosen source in between
    logic [2:0] pk_q;
    wire logic choose = (tst_q == T_IDLE) && pk_v;
    wire logic pick   = (tst_q == T_PICK);
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
    assign log_clear = t_fin_ok && tk_q == X_PIO && pio_sel_q;

    // ---------------------------------------------------------------- sequential
    assign busy = ncq_any || nq_busy_q;
    assign cnt_retry = cnt_retry_q;
    assign cnt_proto = cnt_proto_q;

    always_ff @(posedge clk) begin
        // ---- tag table and descriptor (DEC) / NQ issue
        if (cv_q && m_cmd_ready) cv_q <= 1'b0;
        if (dec_take && dec_acc && dec_ncq) begin
            tlba_q[f_tag] <= f_lba;
            tcnt_q[f_tag] <= f_cnt;
            tdev_q[f_tag] <= f_dev;
            cv_q     <= 1'b1;
            cop_q    <= (f_cmd == 8'h61) ? OP_WRITE : OP_READ;
            ctag_q   <= {3'd0, f_tag};
            clba_q   <= f_lba;
            cnlb_q   <= 16'(f_nsq - 17'd1);
            ctxid_q  <= {1'b0, f_txid};
            cflags_q <= (f_cmd == 8'h61) ? {1'b0, f_commit, f_dev[0], f_dev[7]} : 4'd0;
            cattr_q  <= {1'b0, f_dev[1]};
            cprio_q  <= (f_prio == 2'd0) ? 2'd0 : (f_prio == 2'd1) ? 2'd2 : 2'd3;
            cdptr_q  <= {9'd0, 1'b0, f_tag, 17'd0};
        end else if (nq_issue) begin
            cv_q     <= 1'b1;
            ctag_q   <= 8'd32;
            cnlb_q   <= 16'd0;
            ctxid_q  <= 6'd0;
            cflags_q <= 4'd0;
            cattr_q  <= 2'd0;
            cprio_q  <= 2'd0;
            clba_q   <= 48'd0;
            cdptr_q  <= {9'd0, NQTAG, 17'd0};
            case (nkind_q)
                K_WRITE:   begin cop_q <= OP_WRITE; clba_q <= nlba_q; cnlb_q <= 16'(nsect_q - 17'd1); end
                K_READ:    begin cop_q <= OP_READ; clba_q <= nlba_q + 48'(ni_q);
                                 cdptr_q <= {9'd0, NQTAG, 17'(ni_q * 17'(PAGE_BYTES))}; end
                K_FLUSH:   cop_q <= OP_FLUSH;
                K_ABORT:   begin cop_q <= OP_TX_ABORT; ctxid_q <= {1'b0, ntxid_q}; end
                K_RECOVER: begin cop_q <= OP_TX_ABORT; ctxid_q <= 6'(ni_q); end
                K_DSM:     begin cop_q <= OP_TRIM; clba_q <= rng_e[47:0]; cnlb_q <= rng_e[63:48] - 16'd1; end
                default:   cop_q <= OP_IDENTIFY;
            endcase
        end

        // ---- DEC
        if (dec_take && dec_acc && !dec_ncq && nq_go) begin
            nkind_q   <= nq_go_kind;
            nlba_q    <= f_lba;
            nsect_q   <= f_nsd;
            ntxid_q   <= f_txid;
            ni_q      <= (nq_go_kind == K_RECOVER) ? 17'd1 : 17'd0;
            nrem_q    <= f_nsd;
            nst_dev_q <= ST_OK;
            nicrc_q   <= 1'b0;
        end
        if (dec_take && (dec_rej || (dec_acc && dec_ncq))) begin
            d2h_se_q <= dec_rej ? 16'h0441 : 16'h0040;
            d2h_i_q  <= dec_rej;
        end

        // ---- NQ
        if (cpl32 && nst_dev_q == ST_OK && cpl32_st != ST_OK
            && !(nkind_q == K_RECOVER && (cpl32_st == ST_TX_EMPTY || cpl32_st == ST_BAD_TXID)))
            nst_dev_q <= cpl32_st;
        if (r_pop && !rhalf_q) rng_e[31:0]  <= s_dat_data;
        if (r_pop && rhalf_q)  rng_e[63:32] <= s_dat_data;

        // ---- hwr capture
        // the firmware's words start at 0 for every IDENTIFY: an answer that leaves some out gives
        // zeros there, never what power-on or the previous IDENTIFY left
        if (dec_take && dec_acc && nq_go && nq_go_kind == K_IDENT)
            for (int i = 0; i < 16; i++) fw_q[i] <= 32'd0;
        if (s_hwr_valid && s_hwr_ready && h_ident) begin
            if (s_hwr_addr[16:9] == 8'd0 && hidx < 7'd16) fw_q[hidx[3:0]] <= s_hwr_data;
        end

        // ---- WDE
        if (s_hrd_valid && s_hrd_ready) begin
            wtag_q <= s_hrd_addr[22:17];
            woff_q <= s_hrd_addr[16:0];
            wndw_q <= s_hrd_len[13:2];
            wdsm_q <= 1'b0;
            wtry_q <= '0;
        end else if (wst_q == W_IDLE && dsm_req_q) begin
            wtag_q <= NQTAG;
            wndw_q <= 12'd128;
            wdsm_q <= 1'b1;
        end

        // ---- TX
        if (pick) begin
            tk_q    <= pk_q;
            ttry_q  <= '0;
            hi_q    <= '0;
            tpair_q <= 1'b0;
            for (int i = 0; i < 7; i++) hdr_q[i] <= 32'd0;
            case (pk_q)
                X_D2H: begin
                    hn_q <= 3'd5;
                    hdr_q[0] <= {d2h_se_q, 1'b0, d2h_i_q, 6'd0, 8'h34};
                end
                X_FIN: begin
                    hn_q <= 3'd5;
                    hdr_q[0] <= {fin_se, 1'b0, 1'b1, 6'd0, 8'h34};
                end
                X_SDB: begin
                    hn_q <= 3'd2;
                    hdr_q[0] <= {8'h00, 1'b0, 3'h4, 1'b0, 3'h0, 1'b0, 1'b1, 6'd0, 8'hA1};
                    hdr_q[1] <= sdb_ok_q;
                    tmask_q  <= sdb_ok_q;
                end
                X_ESDB: begin
                    hn_q <= 3'd2;
                    hdr_q[0] <= {err_se[15:8], 1'b0, err_se[6:4], 1'b0, err_se[2:0], 1'b0, 1'b1, 6'd0, 8'hA1};
                    hdr_q[1] <= 32'd1 << err_tag_q;
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
                    hdr_q[1] <= {27'd0, wtag_q[4:0]};
                    hdr_q[4] <= {15'd0, woff_q};
                    hdr_q[5] <= {18'd0, wndw_q, 2'b00};
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
        // ---- PIO page generator
        if (pg_en) begin
            pg_d1_q <= pdw;
            pg_l1_q <= (pg_i_q == 7'd127);
            pg_d2_q <= pg_l1_q ? {8'(8'd0 - (pg_sum_q + pg_b3)), pg_d1_q[23:0]} : pg_d1_q;
            pg_l2_q <= pg_l1_q;
            if (pg_v1_q) pg_sum_q <= pg_l1_q ? 8'd0 : pg_sum_q + pg_b3 + pg_d1_q[31:24];
        end
        if (tst_q == T_RES && t_fail_res && !t_giveup) hi_q <= '0;
        if (tst_q == T_DRES && t_fail_res && !t_giveup) hi_q <= '0;

        if (rst) begin
            tbusy_q <= '0; twr_q <= '0; terr_q <= '0;
            cnt_retry_q <= '0; cnt_proto_q <= '0;
            cv_q <= 1'b0;
            nq_busy_q <= 1'b0; d2h_v_q <= 1'b0; fin_v_q <= 1'b0; pio_v_q <= 1'b0; pio_sel_q <= 1'b0;
            nst_q <= N_IDLE; dsm_req_q <= 1'b0;
            pg_run_q <= 1'b0; pg_v1_q <= 1'b0; pg_v2_q <= 1'b0;
            log_v_q <= 1'b0;
            wst_q <= W_IDLE; ws_v_q <= 1'b0; dact_v_q <= 1'b0; dact_out_q <= 1'b0; hrem_q <= '0; wi_q <= '0; dq_q <= '0;
            sdb_ok_q <= '0; err_v_q <= 1'b0; cq_v_q <= 1'b0; cgo_q <= 1'b0; pg_go_q <= 1'b0; rp1_v_q <= 1'b0; rp2_v_q <= 1'b0;
            hcap_q <= '0;
            tst_q <= T_IDLE;
        end else begin
            // ---- DEC
            if (dec_take && (dec_rej || (dec_acc && dec_ncq))) d2h_v_q <= 1'b1;
            if (dec_take && dec_acc && dec_ncq) begin
                tbusy_q[f_tag] <= 1'b1;
                twr_q[f_tag]   <= (f_cmd == 8'h61);
                terr_q[{1'b0, f_tag}] <= 1'b0;
            end
            if (dec_take && dec_acc && !dec_ncq && nq_go) begin
                nq_busy_q  <= 1'b1;
                terr_q[32] <= 1'b0;
                nst_q      <= (nq_go_kind == K_DSM) ? N_DSMRX : (nq_go_kind == K_LOG) ? N_PIO : N_ISSUE;
                pio_sel_q  <= (nq_go_kind == K_LOG);
                if (nq_go_kind == K_LOG) pg_go_q <= 1'b1;
                if (nq_go_kind == K_DSM) dsm_req_q <= 1'b1;
                hrem_q     <= (nq_go_kind == K_DSM) ? 17'd128 : 17'(f_nsd * 17'(PDW));
            end

            // ---- NQ
            case (nst_q)
                N_ISSUE: if (!cv_q) nst_q <= N_WAIT;
                N_WAIT: if (cpl32) begin
                    case (nkind_q)
                        K_READ:    begin
                            if (nrem_q != 17'd1 && cpl32_st == ST_OK && !nicrc_q) begin
                                ni_q <= ni_q + 17'd1; nrem_q <= nrem_q - 17'd1; nst_q <= N_ISSUE;
                            end else nst_q <= N_FIN;
                        end
                        K_RECOVER: begin
                            if (ni_q < 17'(NUM_TX)) begin ni_q <= ni_q + 17'd1; nst_q <= N_ISSUE; end
                            else nst_q <= N_FIN;
                        end
                        K_DSM:     begin ni_q <= ni_q + 17'd1; nst_q <= N_DREAD; end
                        K_IDENT:   begin
                            if (cpl32_st == ST_OK) begin
                                nst_q <= N_PIO; pio_sel_q <= 1'b0; pg_go_q <= 1'b1;
                            end
                            else nst_q <= N_FIN;
                        end
                        default:   nst_q <= N_FIN;
                    endcase
                end
                N_DSMRX: if (dsm_done) begin nst_q <= nicrc_q ? N_FIN : N_DREAD; ni_q <= '0; rhalf_q <= 1'b0; end
                N_DREAD: begin
                    if (ni_q == 17'd64) nst_q <= N_FIN;
                    else if (r_pop) begin
                        rhalf_q <= !rhalf_q;
                        if (rhalf_q) nst_q <= N_DSCAN;
                    end
                end
                N_DSCAN: begin
                    if (rng_e[63:48] != 16'd0 && !nicrc_q) nst_q <= N_ISSUE;
                    else begin ni_q <= ni_q + 17'd1; nst_q <= N_DREAD; end
                end
                N_PIO: if (pio_done) begin
                    if (!pio_ok) nicrc_q <= 1'b1;
                    nst_q <= pio_ok ? N_IDLE : N_FIN;
                    if (pio_ok) nq_busy_q <= 1'b0;
                end
                default: ;
            endcase
            // entering N_FIN: the final D2H is queued once (fin_v_q), NQ ends when TX picks it
            if (nst_q == N_FIN && !fin_v_q) fin_v_q <= 1'b1;
            if (pick && pk_q == X_FIN) begin fin_v_q <= 1'b0; nq_busy_q <= 1'b0; nst_q <= N_IDLE; end
            if (pick && pk_q == X_PIO) pio_v_q <= 1'b0;
            if (pg_go_q) begin
                pg_go_q <= 1'b0; pg_run_q <= 1'b1; pg_i_q <= '0; pg_sum_q <= '0;
            end
            if (pg_en) begin
                pg_v1_q <= pg_run_q;
                pg_v2_q <= pg_v1_q;
                if (pg_run_q) begin
                    pg_i_q <= pg_i_q + 7'd1;
                    if (pg_i_q == 7'd127) pg_run_q <= 1'b0;
                end
            end
            if (pg_end) pio_v_q <= 1'b1;
            if (log_clear) log_v_q <= 1'b0;

            // ---- hwr router: IDENTIFY capture, stray words
            if (s_hwr_valid && s_hwr_ready) begin
                hcap_q <= s_hwr_last ? 7'd0 : hcap_q + 7'd1;
                if (!h_ok && !h_ident) cnt_proto_q <= cnt_proto_q + 1'b1;
            end

            // ---- WDE
            case (wst_q)
                W_IDLE: begin
                    wi_q <= '0;
                    if (s_hrd_valid && s_hrd_ready) begin
                        if (s_hrd_len[1:0] != 2'd0 || s_hrd_addr[1:0] != 2'd0 || s_hrd_len == 16'd0
                            || s_hrd_len > 16'd8192 || s_hrd_addr[31:23] != 9'd0) begin
                            wst_q <= W_ZERO; cnt_proto_q <= cnt_proto_q + 1'b1;
                        end else if (s_hrd_addr[22:17] == NQTAG && nq_busy_q && nkind_q == K_WRITE)
                            wst_q <= W_NQ;
                        else if (s_hrd_addr[22:17] < 6'd32 && tbusy_q[s_hrd_addr[21:17]] && twr_q[s_hrd_addr[21:17]]
                                 && !terr_q[s_hrd_addr[22:17]]) begin
                            wst_q <= W_SETUP; ws_v_q <= 1'b1;
                        end else begin
                            wst_q <= W_ZERO;
                            if (!(s_hrd_addr[22:17] < 6'd32 && terr_q[s_hrd_addr[22:17]]))
                                cnt_proto_q <= cnt_proto_q + 1'b1;
                        end
                    end else if (dsm_req_q) begin
                        wst_q <= W_NQ; dsm_req_q <= 1'b0;
                    end else if (s_dat_valid && !nq_busy_q) cnt_proto_q <= cnt_proto_q + 1'b1;
                end
                W_SETUP: if (ws_pick) begin wst_q <= W_DATA; ws_v_q <= 1'b0; end
                W_DATA: begin
                    if (ws_fail) begin
                        terr_q[wtag_q] <= 1'b1; wst_q <= W_ZERO;
                    end else if (dend) begin
                        if (dend_good) wst_q <= W_SERVE;
                        else if (wtry_q == 3'(TRIES - 1)) begin terr_q[wtag_q] <= 1'b1; wst_q <= W_ZERO; end
                        else begin
                            wtry_q <= wtry_q + 3'd1; wst_q <= W_SETUP; ws_v_q <= 1'b1;
                            cnt_retry_q <= cnt_retry_q + 1'b1;
                        end
                    end
                end
                default: begin               // W_SERVE, W_ZERO, W_NQ
                    if (w_beat) wi_q <= wi_q + 12'd1;
                    if (w_end) wst_q <= W_IDLE;
                end
            endcase
            // non-queued data in: DMA Activate when the host's data ran out
            if (wst_q == W_NQ && !nicrc_q && (dq_q == '0 || wdsm_q) && !dact_v_q && !dact_out_q && hrem_q != '0)
                dact_v_q <= 1'b1;
            if (dact_pick) begin dact_v_q <= 1'b0; dact_out_q <= 1'b1; end
            if (dact_fail) begin dact_out_q <= 1'b0; nicrc_q <= 1'b1; end
            dq_q <= dq_q + ((dact_out_q && dend && dend_good) ? 13'(dend_words) : 13'd0)
                         - 13'(s_dat_valid && s_dat_ready && dq_q != '0);
            if (dact_out_q && dend) begin
                dact_out_q <= 1'b0;
                if (dend_good) hrem_q <= hrem_q - 17'(dend_words);
                else nicrc_q <= 1'b1;
            end
            if (nst_q == N_IDLE) begin dact_v_q <= 1'b0; end

            // ---- CPL
            if (s_cpl_valid && s_cpl_ready) begin
                cq_v_q   <= 1'b1;
                cq_tag_q <= s_cpl_tag;
                cq_st_q  <= s_cpl_status;
            end else if (cpl_take) cq_v_q <= 1'b0;
            cgo_q <= cq_v_q && c_go && !cgo_q;
            rp1_v_q   <= m_rbw_valid && m_rbw_ready;
            rp1_tag_q <= m_rbw_addr[22:17];
            rp2_v_q   <= rp1_v_q;
            rp2_tag_q <= rp1_tag_q;
            if (cpl_take) begin
                if (c_ncq) begin
                    if (!c_fail) sdb_ok_q[ct[4:0]] <= 1'b1;
                    else begin
                        err_v_q   <= 1'b1;
                        err_tag_q <= ct[4:0];
                        err_st_q  <= terr_q[ct] ? ST_ICRC : cq_st_q;
                    end
                end else if (!c_nq) cnt_proto_q <= cnt_proto_q + 1'b1;
            end
            if (pick && pk_q == X_SDB) sdb_ok_q <= (sdb_ok_q & ~sdb_ok_q)
                                                | ((cpl_take && c_ncq && !c_fail) ? (32'd1 << ct[4:0]) : 32'd0);
            if (t_done && tk_q == X_SDB) tbusy_q <= tbusy_q & ~tmask_q;
            if (t_done && tk_q == X_ESDB) begin
                tbusy_q[err_tag_q] <= 1'b0;
                err_v_q     <= 1'b0;
                log_v_q     <= 1'b1;
                log_tag_q   <= err_tag_q;
                log_se_q    <= err_se;
                log_lba_q   <= tlba_q[err_tag_q];
                log_dev_q   <= tdev_q[err_tag_q];
                log_cnt_q   <= tcnt_q[err_tag_q];
                log_devst_q <= err_st_q;
            end

            // ---- TX
            if (pick && pk_q == X_D2H) d2h_v_q <= 1'b0;
            if (t_done && tk_q == X_RD && t_giveup) terr_q[seg_tag] <= 1'b1;
            if (t_fail_res) cnt_retry_q <= cnt_retry_q + 1'b1;
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
