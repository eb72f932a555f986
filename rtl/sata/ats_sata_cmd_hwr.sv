// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_hwr: the SATA command layer's window-write router and PIO page generator
// (rtl/sata/README.md "ats_sata_cmd"). The core's window writes (s_hwr) of a read in flight (an
// NCQ read tag, or READ DMA EXT on tag 32) go to the read buffer (m_rbw); the firmware's IDENTIFY
// answer (tag 32 while IDENTIFY DEVICE runs) is captured word by word; words of no command are
// dropped and counted. The page generator writes a PIO page (IDENTIFY, or the NCQ error log) into
// the read buffer in two stages (page dword from ats_sata_page, then the checksum into byte 511);
// it has the read buffer's input while it runs.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_cmd_hwr #(
    parameter int          PAGE_BYTES = 4096,        // logical sector (512 or 4096)
    parameter logic [63:0] FR         = "0000abcd"   // IDENTIFY words 23-26
) (
    input  wire logic         clk,
    input  wire logic         rst,          // synchronous, active high
    // window writes of the core
    input  wire logic         s_hwr_valid,
    output wire logic         s_hwr_ready,
    input  wire logic [31:0]  s_hwr_addr,
    input  wire logic         s_hwr_last,
    input  wire logic [31:0]  s_hwr_data,
    // read buffer (ats_sata_rdbuf)
    output wire logic         m_rbw_valid,
    input  wire logic         m_rbw_ready,
    output wire logic [31:0]  m_rbw_addr,
    output wire logic [31:0]  m_rbw_data,
    output wire logic         m_rbw_last,
    // NCQ tags (DEC), NQ
    input  wire logic [31:0]  tbusy,
    input  wire logic [31:0]  twr,
    input  wire logic         nq_busy,
    input  wire logic [3:0]   nq_kind,      // NQ's kind while busy
    input  wire logic         fw_clear,     // IDENTIFY DEVICE starts: the captured words restart at 0
    input  wire logic         pg_go,        // NQ: generate the page
    input  wire logic         pio_sel,      // 0 IDENTIFY, 1 the NCQ error log
    output wire logic         pg_end,       // its last dword went into the read buffer
    // the NCQ error log (CPL)
    input  wire logic         log_valid,
    input  wire logic [4:0]   log_tag,
    input  wire logic [15:0]  log_se,
    input  wire logic [47:0]  log_lba,
    input  wire logic [7:0]   log_dev,
    input  wire logic [15:0]  log_cnt,
    input  wire logic [7:0]   log_devst,
    output wire logic         ev_proto      // a window word of no command (dropped)
);
    localparam logic [3:0] K_READ = ats_sata_cmd_pkg::K_READ, K_IDENT = ats_sata_cmd_pkg::K_IDENT;
    localparam logic [5:0] NQTAG = ats_sata_cmd_pkg::NQTAG;

    logic [31:0] fw_q [16];               // the firmware's IDENTIFY words (1..15 used)
    // IDENTIFY answers are captured; words of a tag with nothing outstanding are dropped
    wire logic [5:0] ht = s_hwr_addr[22:17];
    wire logic h_ident = (ht == NQTAG) && nq_busy && (nq_kind == K_IDENT);
    wire logic h_ok    = (ht < 6'd32 && tbusy[ht[4:0]] && !twr[ht[4:0]])
                      || (ht == NQTAG && nq_busy && nq_kind == K_READ);
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
    assign ev_proto    = s_hwr_valid && s_hwr_ready && !h_ok && !h_ident;
    /* verilator lint_off UNUSEDSIGNAL */
    wire logic unused = ^{s_hwr_addr[1:0]};
    /* verilator lint_on UNUSEDSIGNAL */

    // PIO page generator (into the read buffer): idx -> page dword (register 1) -> checksum (register 2)
    logic        pg_run_q, pg_v1_q, pg_l1_q;
    logic [6:0]  pg_i_q;
    logic [31:0] pg_d1_q;
    logic [7:0]  pg_sum_q;
    logic [31:0] pdw;
    wire  logic  pg_en  = !pg_v2_q || m_rbw_ready;
    wire  logic [7:0] pg_b3 = pg_d1_q[7:0] + pg_d1_q[15:8] + pg_d1_q[23:16];
    assign pg_end = pg_v2_q && pg_l2_q && m_rbw_ready;

    ats_sata_page #(.PAGE_BYTES(PAGE_BYTES), .FR(FR)) u_page (
        .sel(pio_sel), .idx(pg_i_q), .dword(pdw),
        .fw_words({fw_q[15], fw_q[14], fw_q[13], fw_q[12], fw_q[11], fw_q[10], fw_q[9], fw_q[8],
                   fw_q[7], fw_q[6], fw_q[5], fw_q[4], fw_q[3], fw_q[2], fw_q[1]}),
        .log_valid(log_valid), .log_tag(log_tag), .log_status(log_se[7:0]), .log_error(log_se[15:8]),
        .log_lba(log_lba), .log_device(log_dev), .log_count(log_cnt), .log_devstatus(log_devst));

    always_ff @(posedge clk) begin
        // the firmware's words start at 0 for every IDENTIFY: an answer that leaves some out gives
        // zeros there, never what power-on or the previous IDENTIFY left
        if (fw_clear)
            for (int i = 0; i < 16; i++) fw_q[i] <= 32'd0;
        // an IDENTIFY word is never held (h_ok excludes tag 32 while IDENTIFY runs: s_hwr_ready is 1),
        // so the capture does not wait for the ready decode and its tag-table lookup
        if (s_hwr_valid && h_ident) begin
            if (s_hwr_addr[16:9] == 8'd0 && hidx < 7'd16) fw_q[hidx[3:0]] <= s_hwr_data;
        end
        if (pg_en) begin
            pg_d1_q <= pdw;
            pg_l1_q <= (pg_i_q == 7'd127);
            pg_d2_q <= pg_l1_q ? {8'(8'd0 - (pg_sum_q + pg_b3)), pg_d1_q[23:0]} : pg_d1_q;
            pg_l2_q <= pg_l1_q;
            if (pg_v1_q) pg_sum_q <= pg_l1_q ? 8'd0 : pg_sum_q + pg_b3 + pg_d1_q[31:24];
        end

        if (rst) begin
            pg_run_q <= 1'b0; pg_v1_q <= 1'b0; pg_v2_q <= 1'b0;
            hcap_q <= '0;
        end else begin
            if (pg_go) begin
                pg_run_q <= 1'b1; pg_i_q <= '0; pg_sum_q <= '0;
            end
            if (pg_en) begin
                pg_v1_q <= pg_run_q;
                pg_v2_q <= pg_v1_q;
                if (pg_run_q) begin
                    pg_i_q <= pg_i_q + 7'd1;
                    if (pg_i_q == 7'd127) pg_run_q <= 1'b0;
                end
            end
            // the word index counts IDENTIFY words only (never held): not the ready decode either
            if (s_hwr_valid && h_ident) hcap_q <= s_hwr_last ? 7'd0 : hcap_q + 7'd1;
        end
    end
endmodule

`resetall
