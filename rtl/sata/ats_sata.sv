// SPDX-License-Identifier: Apache-2.0
// ats_sata: the SATA front end, device side above the PHY (docs/host-interface.md §2,
// rtl/sata/README.md): link layer (ats_sata_link), receive transport (ats_sata_frx with its
// speculative data FIFO), read-data buffer (ats_sata_rdbuf) and the command layer with the sending
// transport (ats_sata_cmd). Core side: §1 descriptors out, §2 completions in, the core's window
// reads (s_hrd -> m_hrd) and window writes (s_hwr), as ats_nvme's.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata #(
    parameter int          PAGE_BYTES    = 4096,       // logical sector = device page (512 or 4096)
    parameter int          NUM_TX        = 31,         // txids 1..NUM_TX (the Count field has 5 bits)
    parameter logic [63:0] FR            = "0000abcd", // IDENTIFY firmware revision
    parameter int          RX_FIFO_DEPTH = 512,        // the link's receive FIFO
    parameter int          WR_AHEAD      = 2           // NCQ write requests fetched from the host ahead of the core (1..4)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    // PHY
    input  wire logic         phy_ready,
    input  wire logic [31:0]  phy_rx_data,
    input  wire logic [3:0]   phy_rx_charisk,
    output wire logic [31:0]  phy_tx_data,
    output wire logic [3:0]   phy_tx_charisk,
    // device core
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
    input  wire logic [31:0]  s_hwr_data,
    input  wire logic         s_hwr_last,
    // status
    output wire logic         busy,
    output wire logic [31:0]  cnt_rx_drop,
    output wire logic [31:0]  cnt_retry,
    output wire logic [31:0]  cnt_proto
);
    // link <-> transport
    logic        rx_valid, rx_ready, rx_last;
    logic [31:0] rx_data;
    logic [1:0]  rx_status;
    logic        tx_valid, tx_ready, tx_last;
    logic [31:0] tx_data;
    logic        txr_valid, txr_ready;
    logic [1:0]  txr_status;
    logic        link_idle;

    ats_sata_link #(.RX_FIFO_DEPTH(RX_FIFO_DEPTH)) u_link (
        .clk(clk), .rst(rst),
        .phy_ready(phy_ready), .phy_rx_data(phy_rx_data), .phy_rx_charisk(phy_rx_charisk),
        .phy_tx_data(phy_tx_data), .phy_tx_charisk(phy_tx_charisk),
        .m_rx_valid(rx_valid), .m_rx_ready(rx_ready), .m_rx_data(rx_data), .m_rx_last(rx_last),
        .m_rx_status(rx_status),
        .s_tx_valid(tx_valid), .s_tx_ready(tx_ready), .s_tx_data(tx_data), .s_tx_last(tx_last),
        .m_txr_valid(txr_valid), .m_txr_ready(txr_ready), .m_txr_status(txr_status),
        .link_idle(link_idle));

    // receive transport
    logic         reg_valid, reg_ready, reg_bad;
    logic [159:0] reg_data;
    logic         dfis_en, dfis_exact, dend, dend_good;
    logic [11:0]  dfis_max, dend_words;
    logic         dat_valid, dat_ready;
    logic [31:0]  dat_data;

    // the received-data FIFO: a host Data FIS after a DMA Activate brings up to 8 KiB, and it holds
    // two 4 KiB pages for the write prefetch (the one delivered to the core, the next one fetched)
    localparam int DFIFO_DEPTH = 2048;

    ats_sata_frx #(.DFIFO_DEPTH(DFIFO_DEPTH)) u_frx (
        .clk(clk), .rst(rst),
        .s_rx_valid(rx_valid), .s_rx_ready(rx_ready), .s_rx_data(rx_data), .s_rx_last(rx_last),
        .s_rx_status(rx_status),
        .m_reg_valid(reg_valid), .m_reg_ready(reg_ready), .m_reg_data(reg_data), .m_reg_bad(reg_bad),
        .dfis_en(dfis_en), .dfis_max(dfis_max), .dfis_exact(dfis_exact),
        .dend(dend), .dend_good(dend_good), .dend_words(dend_words),
        .m_dat_valid(dat_valid), .m_dat_ready(dat_ready), .m_dat_data(dat_data),
        .cnt_drop(cnt_rx_drop));

    // read-data buffer
    logic        rbw_valid, rbw_ready, rbw_last;
    logic [31:0] rbw_addr, rbw_data;
    logic        seg_valid, seg_start, seg_pop;
    logic [5:0]  seg_tag;
    logic [16:0] seg_off;
    logic [11:0] seg_ndw;
    logic        sd_valid, sd_ready, sd_last;
    logic [31:0] sd_data;
    logic [32:0] present;

    ats_sata_rdbuf u_rdbuf (
        .clk(clk), .rst(rst),
        .s_hwr_valid(rbw_valid), .s_hwr_ready(rbw_ready), .s_hwr_addr(rbw_addr),
        .s_hwr_data(rbw_data), .s_hwr_last(rbw_last),
        .seg_valid(seg_valid), .seg_tag(seg_tag), .seg_off(seg_off), .seg_ndw(seg_ndw),
        .seg_start(seg_start), .seg_pop(seg_pop),
        .m_dat_valid(sd_valid), .m_dat_ready(sd_ready), .m_dat_data(sd_data), .m_dat_last(sd_last),
        .present(present));

    ats_sata_cmd #(.PAGE_BYTES(PAGE_BYTES), .NUM_TX(NUM_TX), .FR(FR), .DFIFO_DEPTH(DFIFO_DEPTH),
                   .WR_AHEAD(WR_AHEAD)) u_cmd (
        .clk(clk), .rst(rst),
        .s_reg_valid(reg_valid), .s_reg_ready(reg_ready), .s_reg_data(reg_data), .s_reg_bad(reg_bad),
        .dfis_en(dfis_en), .dfis_max(dfis_max), .dfis_exact(dfis_exact),
        .dend(dend), .dend_good(dend_good), .dend_words(dend_words),
        .s_dat_valid(dat_valid), .s_dat_ready(dat_ready), .s_dat_data(dat_data),
        .m_rbw_valid(rbw_valid), .m_rbw_ready(rbw_ready), .m_rbw_addr(rbw_addr), .m_rbw_data(rbw_data),
        .m_rbw_last(rbw_last),
        .seg_valid(seg_valid), .seg_tag(seg_tag), .seg_off(seg_off), .seg_ndw(seg_ndw),
        .seg_start(seg_start), .seg_pop(seg_pop),
        .s_seg_valid(sd_valid), .s_seg_ready(sd_ready), .s_seg_data(sd_data), .s_seg_last(sd_last),
        .present(present),
        .m_tx_valid(tx_valid), .m_tx_ready(tx_ready), .m_tx_data(tx_data), .m_tx_last(tx_last),
        .s_txr_valid(txr_valid), .s_txr_ready(txr_ready), .s_txr_status(txr_status),
        .m_cmd_valid(m_cmd_valid), .m_cmd_ready(m_cmd_ready), .m_cmd_op(m_cmd_op), .m_cmd_tag(m_cmd_tag),
        .m_cmd_lba(m_cmd_lba), .m_cmd_nlb(m_cmd_nlb), .m_cmd_txid(m_cmd_txid), .m_cmd_flags(m_cmd_flags),
        .m_cmd_attr(m_cmd_attr), .m_cmd_prio(m_cmd_prio), .m_cmd_dptr(m_cmd_dptr), .m_cmd_aux(m_cmd_aux),
        .s_cpl_valid(s_cpl_valid), .s_cpl_ready(s_cpl_ready), .s_cpl_tag(s_cpl_tag),
        .s_cpl_status(s_cpl_status), .s_cpl_result(s_cpl_result),
        .s_hrd_valid(s_hrd_valid), .s_hrd_ready(s_hrd_ready), .s_hrd_addr(s_hrd_addr), .s_hrd_len(s_hrd_len),
        .m_hrd_valid(m_hrd_valid), .m_hrd_ready(m_hrd_ready), .m_hrd_data(m_hrd_data), .m_hrd_last(m_hrd_last),
        .s_hwr_valid(s_hwr_valid), .s_hwr_ready(s_hwr_ready), .s_hwr_addr(s_hwr_addr),
        .s_hwr_last(s_hwr_last), .s_hwr_data(s_hwr_data),
        .busy(busy), .cnt_retry(cnt_retry), .cnt_proto(cnt_proto));

    wire unused = link_idle;
endmodule

`resetall
