// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_cpl: CPL, the SATA command layer's completion unit (rtl/sata/README.md
// "ats_sata_cmd"). Registers each completion of the core (s_cpl_ready = its register is empty) and
// acts on it a clock after its decision was registered: an NCQ tag only once its read data left
// the read buffer (`present`, and no push of the tag in the last two clocks); an OK one joins the
// pending Set Device Bits mask, one failed one (device status, or ICRC when its data were lost on
// the link) is held for its own SDB and, once that SDB was sent, written to the NCQ Command Error
// log. A tag-32 completion goes to NQ, with its result (SET FEATURES 0x56 returns it to the host).
// Keeps the per-tag "data lost on the link" flags.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd_cpl (
    input  wire logic         clk,
    input  wire logic         rst,          // synchronous, active high
    // completions of the core
    input  wire logic         s_cpl_valid,
    output wire logic         s_cpl_ready,
    input  wire logic [7:0]   s_cpl_tag,
    input  wire logic [7:0]   s_cpl_status,
    input  wire logic [31:0]  s_cpl_result,
    // read buffer: words of each tag still there, and this clock's push (to follow its lag)
    input  wire logic [32:0]  present,
    input  wire logic         rbw_push,
    input  wire logic [5:0]   rbw_tag,
    // NCQ tags (DEC), NQ
    input  wire logic [31:0]  tbusy,
    input  wire logic         nq_wait,      // NQ waits for its tag-32 completion
    output wire logic         cpl32,        // a tag-32 completion, acted upon
    output wire logic [7:0]   cpl32_st,     // its status (ICRC when the command's data were lost)
    output wire logic [31:0]  cpl32_res,    // its result
    // per-tag "data lost on the link" (tags 0..31, 32 = the non-queued command)
    output wire logic [32:0]  terr,
    input  wire logic         ncq_acc,      // DEC: an NCQ tag is taken: clear its flag
    input  wire logic [4:0]   ncq_tag,
    input  wire logic         nq_start,     // DEC: NQ starts: clear flag 32
    input  wire logic         w_terr_set,   // WDE: a write transfer failed for good
    input  wire logic [5:0]   w_terr_tag,
    input  wire logic         rd_giveup,    // TX: a read segment was given up
    input  wire logic [5:0]   rd_tag,
    // SDBs to TX
    output wire logic [31:0]  sdb_ok,       // OK tags not yet in an SDB (registered)
    input  wire logic         sdb_pick,     // TX took them
    output wire logic         err_valid,    // one failed tag waiting for its SDB (registered)
    output wire logic [4:0]   err_tag,
    output wire logic [15:0]  err_se,       // its ATA {Error, Status}
    input  wire logic         esdb_done,    // its SDB was sent
    // the NCQ Command Error log (log 0x10) for the page generator
    input  wire logic [47:0]  esdb_lba,     // DEC's tag table at err_tag
    input  wire logic [15:0]  esdb_cnt,
    input  wire logic [7:0]   esdb_dev,
    input  wire logic         log_clear,    // TX: the log page was delivered
    output wire logic         log_valid,
    output wire logic [4:0]   log_tag,
    output wire logic [15:0]  log_se,
    output wire logic [47:0]  log_lba,
    output wire logic [7:0]   log_dev,
    output wire logic [15:0]  log_cnt,
    output wire logic [7:0]   log_devst,
    output wire logic         ev_proto      // a completion of no command (dropped)
);
    localparam logic [7:0] STS_OK = ats_host_pkg::STS_OK, DEVST_ICRC = ats_sata_cmd_pkg::DEVST_ICRC;

    logic [32:0] terr_q;                  // tag's data transfer failed (ICRC)
    logic [31:0] sdb_ok_q;                // tags completed OK, not yet in an SDB
    logic        err_v_q;                 // one failed NCQ completion waiting for its SDB
    logic [4:0]  err_tag_q;
    logic [7:0]  err_st_q;
    // NCQ Command Error log
    logic        log_v_q;
    logic [4:0]  log_tag_q;
    logic [15:0] log_se_q;
    logic [47:0] log_lba_q;
    logic [7:0]  log_dev_q;
    logic [15:0] log_cnt_q;
    logic [7:0]  log_devst_q;
    // completions are taken into a register first (cq), then acted upon; one whose tag had read
    // words pushed into the read buffer in the last two clocks waits (rdbuf's `present` lags)
    logic        cq_v_q;
    logic [7:0]  cq_tag_q, cq_st_q;
    logic [31:0] cq_res_q;
    logic        rp1_v_q, rp2_v_q;
    logic [5:0]  rp1_tag_q, rp2_tag_q;
    wire  logic [5:0] ct = cq_tag_q[5:0];
    wire  logic  c_recent = (rp1_v_q && rp1_tag_q == ct) || (rp2_v_q && rp2_tag_q == ct);
    wire  logic  c_ncq  = (cq_tag_q < 8'd32) && tbusy[ct[4:0]];
    wire  logic  c_nq   = (cq_tag_q == 8'd32) && nq_wait;
    wire  logic  c_fail = (cq_st_q != STS_OK) || terr_q[ct];
    logic c_go;
    always_comb begin
        if (c_ncq)      c_go = !present[ct] && !c_recent && !(c_fail && err_v_q);
        else if (c_nq)  c_go = !present[32] && !c_recent;
        else            c_go = 1'b1;                   // not expected: dropped
    end
    // the decision is registered (cgo_q) and acted upon a clock later: nothing that c_go reads
    // changes for a completion waiting in cq in between
    logic cgo_q;
    // with it, the tag's class and failure as they will be at the take (the registered decision's
    // seam: the take reads no tag-indexed lookup). terr bits set in the deciding clock are added,
    // so cf_q/ct_err_q equal c_fail/terr_q[ct] of the next clock; tbusy and nq_wait of a waiting
    // completion's tag do not change before it is taken.
    logic cncq_q, cnq_q, cf_q, ct_err_q;
    wire logic ct_set = (w_terr_set && w_terr_tag == ct) || (rd_giveup && rd_tag == ct);
    wire logic cpl_take = cgo_q;
    assign s_cpl_ready = !cq_v_q;
    assign cpl32      = cpl_take && cnq_q;
    assign cpl32_st   = terr_q[32] ? DEVST_ICRC : cq_st_q;
    assign cpl32_res  = cq_res_q;
    assign terr       = terr_q;
    assign sdb_ok     = sdb_ok_q;
    assign err_valid  = err_v_q;
    assign err_tag    = err_tag_q;
    assign err_se     = ats_sata_cmd_pkg::ata_se(err_st_q);
    assign log_valid  = log_v_q;
    assign log_tag    = log_tag_q;
    assign log_se     = log_se_q;
    assign log_lba    = log_lba_q;
    assign log_dev    = log_dev_q;
    assign log_cnt    = log_cnt_q;
    assign log_devst  = log_devst_q;
    assign ev_proto   = cpl_take && !cncq_q && !cnq_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            terr_q <= '0;
            log_v_q <= 1'b0;
            sdb_ok_q <= '0; err_v_q <= 1'b0; cq_v_q <= 1'b0; cgo_q <= 1'b0; rp1_v_q <= 1'b0; rp2_v_q <= 1'b0;
            cq_res_q <= '0;
        end else begin
            if (ncq_acc) terr_q[{1'b0, ncq_tag}] <= 1'b0;
            if (nq_start) terr_q[32] <= 1'b0;
            if (log_clear) log_v_q <= 1'b0;
            if (w_terr_set) terr_q[w_terr_tag] <= 1'b1;

            if (s_cpl_valid && s_cpl_ready) begin
                cq_v_q   <= 1'b1;
                cq_tag_q <= s_cpl_tag;
                cq_st_q  <= s_cpl_status;
                cq_res_q <= s_cpl_result;
            end else if (cpl_take) cq_v_q <= 1'b0;
            cgo_q <= cq_v_q && c_go && !cgo_q;
            cncq_q   <= c_ncq;
            cnq_q    <= c_nq;
            cf_q     <= c_fail || ct_set;
            ct_err_q <= terr_q[ct] || ct_set;
            rp1_v_q   <= rbw_push;
            rp1_tag_q <= rbw_tag;
            rp2_v_q   <= rp1_v_q;
            rp2_tag_q <= rp1_tag_q;
            if (cpl_take) begin
                if (cncq_q) begin
                    if (!cf_q) sdb_ok_q[ct[4:0]] <= 1'b1;
                    else begin
                        err_v_q   <= 1'b1;
                        err_tag_q <= ct[4:0];
                        err_st_q  <= ct_err_q ? DEVST_ICRC : cq_st_q;
                    end
                end
            end
            if (sdb_pick) sdb_ok_q <= (sdb_ok_q & ~sdb_ok_q)
                                    | ((cpl_take && cncq_q && !cf_q) ? (32'd1 << ct[4:0]) : 32'd0);
            if (esdb_done) begin
                err_v_q     <= 1'b0;
                log_v_q     <= 1'b1;
                log_tag_q   <= err_tag_q;
                log_se_q    <= err_se;
                log_lba_q   <= esdb_lba;
                log_dev_q   <= esdb_dev;
                log_cnt_q   <= esdb_cnt;
                log_devst_q <= err_st_q;
            end
            if (rd_giveup) terr_q[rd_tag] <= 1'b1;
        end
    end
`ifndef SYNTHESIS
    // the registered class/failure equal what the take would have decoded
    always_ff @(posedge clk) begin
        if (!rst && cpl_take) begin
            assert (cncq_q == c_ncq && cnq_q == c_nq && (!cncq_q || (cf_q == c_fail && ct_err_q == terr_q[ct])))
                else $error("ats_sata_cmd_cpl: registered completion decode disagrees (%m)");
        end
    end
`endif
endmodule

`resetall
