// SPDX-License-Identifier: Apache-2.0
// ats_sata_core_tb: test top of the SATA power-cut test (issue 15): the SATA front end ats_sata
// (PHY ports at this top, driven by the Python host atstb.sata_host) in front of the device core
// test top ats_ssd_core_tb (ats_ssd_core + NAND die models with image files and power cuts), which
// is instantiated whole: its host ports (s_cmd, m_cpl, m_hrd/s_hrd, m_hwr) go to ats_sata, every
// other port (power, firmware model, counters, monitors) comes out here under the same name, so
// that the ats_ssd_core TB's firmware side drives this top unchanged. One reset for both (a power
// cycle restarts the front end and the core). Internal taps the Python side reads: c_cpl_* (the
// core's completions: cut between a commit's completion and its Set Device Bits), c_cmd_* (the
// descriptors ats_sata issues: the recovery command's TX_ABORTs).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_core_tb #(
    parameter int NUM_CHAN        = 2,
    parameter int WAYS            = 2,
    parameter int PAGE_BYTES      = 512,
    parameter int SPARE_BYTES     = 64,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int BLOCKS          = 16,
    parameter int NUM_LBAS        = 64,
    parameter int NUM_TX          = 8,      // the core's and the front end's (txids 1..NUM_TX)
    parameter int QDEPTH          = 16,
    parameter int NUM_SLOTS       = 8,
    parameter int WIN             = 4,
    parameter int RD_SLOTS        = 8,
    parameter int REMAP_LPN_W     = 16,
    parameter int REMAP_PPN_W     = 12,
    parameter int REMAP_TXID_W    = 4,
    parameter int REMAP_CNT_W     = 6,
    parameter int ARRAY_TIME_DIV  = 20
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic        power_ok,
    input  wire logic        pwr_fail,
    // SATA PHY (host -> device, device -> host)
    input  wire logic        phy_ready,
    input  wire logic [31:0] phy_rx_data,
    input  wire logic [3:0]  phy_rx_charisk,
    output wire logic [31:0] phy_tx_data,
    output wire logic [3:0]  phy_tx_charisk,
    output wire logic        sata_busy,
    output wire logic [31:0] sata_cnt_rx_drop,
    output wire logic [31:0] sata_cnt_retry,
    output wire logic [31:0] sata_cnt_proto,
    // ats_ssd_core_tb's ports other than the host ones (same names and meaning)
    input  wire logic        s_free_valid,
    output wire logic        s_free_ready,
    output wire logic [NUM_CHAN*WAYS-1:0] blk_need,
    input  wire logic [2:0]  s_free_chan,
    input  wire logic [1:0]  s_free_way,
    input  wire logic [11:0] s_free_block,
    output wire logic        m_bad_valid,
    input  wire logic        m_bad_ready,
    output wire logic [2:0]  m_bad_chan,
    output wire logic [1:0]  m_bad_way,
    output wire logic [11:0] m_bad_block,
    input  wire logic [14:0] vc_addr,
    input  wire logic        wb_hold,
    output wire logic [63:0] cpl_seq,
    input  wire logic [5:0]  txs_addr,
    output wire logic        txs_open,
    output wire logic [63:0] txs_seq,
    output wire logic [8:0]  vc_data,
    input  wire logic        s_fw_valid,
    output wire logic        s_fw_ready,
    input  wire logic [2:0]  s_fw_op,
    input  wire logic [2:0]  s_fw_chan,
    input  wire logic [1:0]  s_fw_way,
    input  wire logic [11:0] s_fw_block,
    input  wire logic [7:0]  s_fw_page,
    input  wire logic [3:0]  s_fw_rop,
    input  wire logic [5:0]  s_fw_txid,
    input  wire logic [31:0] s_fw_lpn,
    input  wire logic [REMAP_PPN_W-1:0] s_fw_ppn,
    input  wire logic [63:0] s_fw_seq,
    input  wire logic [31:0] s_fw_epoch,
    input  wire logic [7:0]  s_fw_flags,
    input  wire logic [1:0]  s_fw_kind,
    input  wire logic        s_fwd_valid,
    output wire logic        s_fwd_ready,
    input  wire logic [31:0] s_fwd_data,
    input  wire logic        s_fwd_last,
    output wire logic        m_fwr_valid,
    input  wire logic        m_fwr_ready,
    output wire logic [7:0]  m_fwr_status,
    output wire logic [31:0] m_fwr_data,
    output wire logic        m_fwr_last,
    output wire logic [REMAP_PPN_W-1:0] m_fwr_ppn,
    output wire logic        m_fwr_mapped,
    output wire logic [31:0] cnt_erases,
    output wire logic [31:0] cnt_relocs,
    output wire logic        init_done,
    output wire logic        no_free_block,
    output wire logic [63:0] next_seq,
    output wire logic [31:0] cnt_host_pages,
    output wire logic [31:0] cnt_coalesced,
    output wire logic [31:0] cnt_nand_prog,
    output wire logic [31:0] cnt_nand_read,
    output wire logic [31:0] cnt_ecc_corr,
    output wire logic [31:0] cnt_prog_fail,
    output wire logic [31:0] cnt_read_err,
    output wire logic [31:0] cnt_proto_err,
    output wire logic        err_spurious,
    output wire logic [31:0] viol_total,
    output wire logic [31:0] prog_head_total,
    output wire logic [31:0] urgent_wb_total,
    output wire logic [7:0]  rd_ring_max,
    output wire logic [31:0] rd_overlap_total,
    output wire logic [31:0] rd_ooo_total,
    output wire logic [31:0] rd_ilv_total
);
    // front end <-> core
    logic        c_cmd_valid, c_cmd_ready;
    logic [3:0]  c_cmd_op;
    logic [7:0]  c_cmd_tag;
    logic [47:0] c_cmd_lba;
    logic [15:0] c_cmd_nlb;
    logic [5:0]  c_cmd_txid;
    logic [3:0]  c_cmd_flags;
    logic [1:0]  c_cmd_attr, c_cmd_prio;
    logic [31:0] c_cmd_dptr, c_cmd_aux;
    logic        c_cpl_valid, c_cpl_ready;
    logic [7:0]  c_cpl_tag, c_cpl_status;
    logic [31:0] c_cpl_result;
    logic        c_hrd_valid, c_hrd_ready;
    logic [31:0] c_hrd_addr;
    logic [15:0] c_hrd_len;
    logic        c_hrdd_valid, c_hrdd_ready, c_hrdd_last;
    logic [31:0] c_hrdd_data;
    logic        c_hwr_valid, c_hwr_ready, c_hwr_last;
    logic [31:0] c_hwr_addr, c_hwr_data;

    ats_sata #(.PAGE_BYTES(PAGE_BYTES), .NUM_TX(NUM_TX)) u_sata (
        .clk, .rst,
        .phy_ready, .phy_rx_data, .phy_rx_charisk, .phy_tx_data, .phy_tx_charisk,
        .m_cmd_valid(c_cmd_valid), .m_cmd_ready(c_cmd_ready), .m_cmd_op(c_cmd_op), .m_cmd_tag(c_cmd_tag),
        .m_cmd_lba(c_cmd_lba), .m_cmd_nlb(c_cmd_nlb), .m_cmd_txid(c_cmd_txid), .m_cmd_flags(c_cmd_flags),
        .m_cmd_attr(c_cmd_attr), .m_cmd_prio(c_cmd_prio), .m_cmd_dptr(c_cmd_dptr), .m_cmd_aux(c_cmd_aux),
        .s_cpl_valid(c_cpl_valid), .s_cpl_ready(c_cpl_ready), .s_cpl_tag(c_cpl_tag),
        .s_cpl_status(c_cpl_status), .s_cpl_result(c_cpl_result),
        .s_hrd_valid(c_hrd_valid), .s_hrd_ready(c_hrd_ready), .s_hrd_addr(c_hrd_addr), .s_hrd_len(c_hrd_len),
        .m_hrd_valid(c_hrdd_valid), .m_hrd_ready(c_hrdd_ready), .m_hrd_data(c_hrdd_data), .m_hrd_last(c_hrdd_last),
        .s_hwr_valid(c_hwr_valid), .s_hwr_ready(c_hwr_ready), .s_hwr_addr(c_hwr_addr), .s_hwr_data(c_hwr_data),
        .s_hwr_last(c_hwr_last),
        .busy(sata_busy), .cnt_rx_drop(sata_cnt_rx_drop), .cnt_retry(sata_cnt_retry), .cnt_proto(sata_cnt_proto));

    ats_ssd_core_tb #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES),
        .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS), .NUM_LBAS(NUM_LBAS), .NUM_TX(NUM_TX),
        .QDEPTH(QDEPTH), .NUM_SLOTS(NUM_SLOTS), .WIN(WIN), .RD_SLOTS(RD_SLOTS),
        .REMAP_LPN_W(REMAP_LPN_W), .REMAP_PPN_W(REMAP_PPN_W), .REMAP_TXID_W(REMAP_TXID_W),
        .REMAP_CNT_W(REMAP_CNT_W), .ARRAY_TIME_DIV(ARRAY_TIME_DIV)
    ) u_core (
        .*,
        // the core TB's S-Log ports (SLOG = 0 / FRAG_SLOTS = 0 here: threshold 0, counters unread; `.*` finds
        // no net for a new output of ats_ssd_core_tb: name every one here, or this build fails)
        .slog_thr(16'd0), .slog_lpgn(), .cnt_slog_err(), .slog_rec_total(), .slog_rec_beside(), .slog_rec_pair(), .slog_rec_packed(), .slog_rsv_total(),
        .s_cmd_valid(c_cmd_valid), .s_cmd_ready(c_cmd_ready), .s_cmd_op(c_cmd_op), .s_cmd_tag(c_cmd_tag),
        .s_cmd_lba(c_cmd_lba), .s_cmd_nlb(c_cmd_nlb), .s_cmd_txid(c_cmd_txid), .s_cmd_flags(c_cmd_flags),
        .s_cmd_attr(c_cmd_attr), .s_cmd_prio(c_cmd_prio), .s_cmd_dptr(c_cmd_dptr), .s_cmd_aux(c_cmd_aux),
        .m_cpl_valid(c_cpl_valid), .m_cpl_ready(c_cpl_ready), .m_cpl_tag(c_cpl_tag),
        .m_cpl_status(c_cpl_status), .m_cpl_result(c_cpl_result),
        .m_hrd_valid(c_hrd_valid), .m_hrd_ready(c_hrd_ready), .m_hrd_addr(c_hrd_addr), .m_hrd_len(c_hrd_len),
        .s_hrd_valid(c_hrdd_valid), .s_hrd_ready(c_hrdd_ready), .s_hrd_data(c_hrdd_data), .s_hrd_last(c_hrdd_last),
        .m_hwr_valid(c_hwr_valid), .m_hwr_ready(c_hwr_ready), .m_hwr_addr(c_hwr_addr), .m_hwr_data(c_hwr_data),
        .m_hwr_last(c_hwr_last)
    );
endmodule

`resetall
