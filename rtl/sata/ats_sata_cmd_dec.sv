// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_dec: DEC, the SATA command layer's decoder (rtl/sata/README.md "ats_sata_cmd").
// Takes each Register H2D FIS (ats_sata_frx) and decodes it in two clocks: §2.5's checks are
// registered with the fields, then acted upon when the D2H slot and the descriptor register are
// free. A refused command gets its Register D2H ERR/ABRT (I = 1); an accepted NCQ command takes its
// tag in the tag table, loads its §1 descriptor and gets a Register D2H 0x40 (I = 0); an accepted
// non-queued command starts NQ (`nq_start`), whose descriptors this module's register also sends.
// SET FEATURES is taken with the vendor subcommand 0x56 only (docs/host-interface.md §2.2a).
// Holds the NCQ tag table (outstanding, write, LBA/Count/Device for the error log), freed by TX.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd_dec #(
    parameter int PAGE_BYTES = 4096,    // logical sector (512 or 4096): a command moves at most 64 KiB
    parameter int NUM_TX     = 31       // txids 1..NUM_TX
) (
    input  wire logic         clk,
    input  wire logic         rst,          // synchronous, active high
    // Register H2D FISes (ats_sata_frx)
    input  wire logic         s_reg_valid,
    output wire logic         s_reg_ready,
    input  wire logic [159:0] s_reg_data,
    input  wire logic         s_reg_bad,
    // §1 descriptors to the core (the descriptor register)
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
    output wire logic [31:0]  m_cmd_aux,    // FEATURE's value (NQ), else 0
    // NQ: start, and its descriptors into the register
    input  wire logic         nq_busy,      // NQ runs a command (registered)
    output wire logic         nq_start,     // an accepted non-queued command: NQ starts
    output wire logic [3:0]   nq_kind,      // its kind (ats_sata_cmd_pkg::K_*), with the fields below
    output wire logic [47:0]  nq_lba,       // the FIS's LBA (SET FEATURES: value 15:0, SET 16)
    output wire logic [16:0]  nq_nsect,     // sectors (DMA EXT Count, 0 = 65536; SET FEATURES: FID 7:0)
    output wire logic [4:0]   nq_txid,
    input  wire logic         nq_issue,     // NQ asks for its descriptor (state decode)
    input  wire logic [3:0]   nq_d_op,
    input  wire logic [47:0]  nq_d_lba,
    input  wire logic [15:0]  nq_d_nlb,
    input  wire logic [5:0]   nq_d_txid,
    input  wire logic [31:0]  nq_d_dptr,
    input  wire logic [31:0]  nq_d_aux,
    // an accepted NCQ command (CPL clears the tag's transfer error)
    output wire logic         ncq_acc,
    output wire logic [4:0]   ncq_tag,
    // DEC's Register D2H to TX
    output wire logic         d2h_valid,    // registered
    output wire logic [15:0]  d2h_se,       // {Error, Status}
    output wire logic         d2h_i,
    input  wire logic         d2h_pick,     // TX took it
    // NCQ tag table
    output wire logic [31:0]  tbusy,        // outstanding (registered)
    output wire logic [31:0]  twr,          // a write (registered)
    input  wire logic         sdb_done,     // an SDB of OK tags was sent: free them
    input  wire logic [31:0]  sdb_mask,
    input  wire logic         esdb_done,    // the error SDB of one tag was sent: free it
    input  wire logic [4:0]   esdb_tag,
    output wire logic [47:0]  esdb_lba,     // that tag's LBA, Count and Device (the error log)
    output wire logic [15:0]  esdb_cnt,
    output wire logic [7:0]   esdb_dev
);
    localparam int MAXSECT = 65536 / PAGE_BYTES;       // 64 KiB per command
    localparam logic [3:0] OP_READ = ats_host_pkg::OP_READ, OP_WRITE = ats_host_pkg::OP_WRITE;
    localparam logic [3:0] K_WRITE = ats_sata_cmd_pkg::K_WRITE, K_READ = ats_sata_cmd_pkg::K_READ,
                           K_FLUSH = ats_sata_cmd_pkg::K_FLUSH, K_ABORT = ats_sata_cmd_pkg::K_ABORT,
                           K_RECOVER = ats_sata_cmd_pkg::K_RECOVER, K_DSM = ats_sata_cmd_pkg::K_DSM,
                           K_IDENT = ats_sata_cmd_pkg::K_IDENT, K_LOG = ats_sata_cmd_pkg::K_LOG,
                           K_FEAT = ats_sata_cmd_pkg::K_FEAT;
    localparam logic [7:0] SF_FEATURE = ats_sata_cmd_pkg::SF_FEATURE;

    logic [31:0] tbusy_q, twr_q;                       // NCQ tags: outstanding, write
    logic [47:0] tlba_q [32];
    logic [15:0] tcnt_q [32];
    logic [7:0]  tdev_q [32];

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
    logic [31:0] caux_q;
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
    assign m_cmd_aux   = caux_q;

    // ---------------------------------------------------------------- decode
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
    wire logic unused = ^{s_reg_data[159:128], w0[14:0], w3[31:16]};
    /* verilator lint_on UNUSEDSIGNAL */

    logic        d2h_v_q;                 // DEC's Register D2H waiting for TX
    logic [15:0] d2h_se_q;                // {error, status}
    logic        d2h_i_q;
    logic        e_go;                    // this FIS starts NQ
    logic [3:0]  e_kind;
    wire  logic  ncq_any = (tbusy_q != 32'd0);

    logic e_acc, e_rej, e_ncq;
    always_comb begin
        e_acc = 1'b0; e_rej = 1'b0; e_ncq = 1'b0; e_go = 1'b0; e_kind = K_FLUSH;
        if (s_reg_bad) e_rej = 1'b1;
        else if (!e_c) e_acc = 1'b0;    // Device Control update: ignored
        else begin
            case (e_cmd)
                8'h60, 8'h61: begin
                    if (nq_busy || e_cnt[2:0] != 3'd0 || e_prio == 2'd3 || !txid_ok
                        || tbusy_q[e_tag] || e_nsq > 17'(MAXSECT)
                        || (e_cmd == 8'h60 && (e_commit || e_dev[0])))
                        e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_ncq = 1'b1; end
                end
                8'h25, 8'h35: begin
                    if (nq_busy || ncq_any || e_nsd > 17'(MAXSECT)) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = (e_cmd == 8'h25) ? K_READ : K_WRITE; end
                end
                8'hE7: begin
                    if (nq_busy || ncq_any) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_FLUSH; end
                end
                8'hEA: begin
                    if (nq_busy || ncq_any) e_rej = 1'b1;
                    else if (e_tag == 5'd0) begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_FLUSH; end
                    else if (e_tag == 5'd1 && e_txid != 5'd0 && txid_ok) begin
                        e_acc = 1'b1; e_go = 1'b1; e_kind = K_ABORT;
                    end else if (e_tag == 5'd2) begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_RECOVER; end
                    else e_rej = 1'b1;
                end
                8'h06: begin
                    if (nq_busy || ncq_any || !e_feat[0] || e_cnt != 16'd1) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_DSM; end
                end
                8'hEC: begin
                    if (nq_busy || ncq_any) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_IDENT; end
                end
                8'h2F: begin
                    if (nq_busy || ncq_any || e_lba[15:0] != 16'h0010 || e_cnt != 16'd1) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_LOG; end
                end
                // SET FEATURES: the vendor subcommand only; Features 15:8, Count 15:8 and LBA 47:17
                // must be 0 (§2.2a). NQ takes the FID from Count 7:0 (nq_nsect), SET and the value
                // from the LBA.
                8'hEF: begin
                    if (nq_busy || ncq_any || e_feat != {8'd0, SF_FEATURE} || e_cnt[15:8] != 8'd0
                        || e_lba[47:17] != 31'd0) e_rej = 1'b1;
                    else begin e_acc = 1'b1; e_go = 1'b1; e_kind = K_FEAT; end
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
    logic [3:0]  nq_go_kind;
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

    assign ncq_acc   = dec_take && dec_acc && dec_ncq;
    assign ncq_tag   = f_tag;
    assign nq_start  = dec_take && dec_acc && !dec_ncq && nq_go;
    assign nq_kind   = nq_go_kind;
    assign nq_lba    = f_lba;
    assign nq_nsect  = f_nsd;
    assign nq_txid   = f_txid;
    assign d2h_valid = d2h_v_q;
    assign d2h_se    = d2h_se_q;
    assign d2h_i     = d2h_i_q;
    assign tbusy     = tbusy_q;
    assign twr       = twr_q;
    assign esdb_lba  = tlba_q[esdb_tag];
    assign esdb_cnt  = tcnt_q[esdb_tag];
    assign esdb_dev  = tdev_q[esdb_tag];

    always_ff @(posedge clk) begin
        // ---- tag table and descriptor: an NCQ command, or NQ's descriptor
        if (cv_q && m_cmd_ready) cv_q <= 1'b0;
        if (ncq_acc) begin
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
            caux_q   <= 32'd0;
        end else if (nq_issue && !cv_q) begin
            cv_q     <= 1'b1;
            cop_q    <= nq_d_op;
            ctag_q   <= 8'd32;
            clba_q   <= nq_d_lba;
            cnlb_q   <= nq_d_nlb;
            ctxid_q  <= nq_d_txid;
            cflags_q <= 4'd0;
            cattr_q  <= 2'd0;
            cprio_q  <= 2'd0;
            cdptr_q  <= nq_d_dptr;
            caux_q   <= nq_d_aux;
        end
        if (dec_take && (dec_rej || (dec_acc && dec_ncq))) begin
            d2h_se_q <= dec_rej ? 16'h0441 : 16'h0040;
            d2h_i_q  <= dec_rej;
        end

        if (rst) begin
            tbusy_q <= '0; twr_q <= '0;
            cv_q <= 1'b0;
            caux_q <= '0;
            d2h_v_q <= 1'b0;
        end else begin
            if (dec_take && (dec_rej || (dec_acc && dec_ncq))) d2h_v_q <= 1'b1;
            // the SDBs' clears first, then the tag taken: an NCQ command can be taken in the clock
            // the SDB of other tags is done (tbusy = (tbusy & ~sdb_mask) | the new tag; the new
            // tag is never in either SDB: it was free when decoded)
            if (sdb_done) tbusy_q <= tbusy_q & ~sdb_mask;
            if (esdb_done) tbusy_q[esdb_tag] <= 1'b0;
            if (ncq_acc) begin
                tbusy_q[f_tag] <= 1'b1;
                twr_q[f_tag]   <= (f_cmd == 8'h61);
            end
            if (d2h_pick) d2h_v_q <= 1'b0;
        end
    end
endmodule

`resetall
