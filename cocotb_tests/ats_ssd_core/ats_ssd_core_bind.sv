// SPDX-License-Identifier: Apache-2.0
// Stream rules on the m_ ports of the device core's blocks that have no block test of their own
// here (rtl/common/ats_stream_check.sv: valid held and payload stable until taken; bound by module
// name): the backend (rtl/backend/README.md: "Every output stream is driven from registers and
// keeps its payload stable until taken") and the NAND subsystem's top. The other blocks' bind files
// (cmdq, wbuf, remap engine, NAND scheduler, page, chan, BCH) come from their own test directories:
// test_ats_ssd_core.py `core_build` adds them all, so the core and SATA core TBs check every block
// interface inside the core.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_ndata_chk #(
    parameter int NUM_CHAN = 2
) (
    input wire logic                  clk,
    input wire logic                  rst,
    input wire logic [NUM_CHAN-1:0]   m_ndata_valid,
    input wire logic [NUM_CHAN-1:0]   m_ndata_ready,
    input wire logic [NUM_CHAN*32-1:0] m_ndata_data,
    input wire logic [NUM_CHAN-1:0]   m_ndata_last
);
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_ch
        ats_stream_check #(.W(33), .NAME("backend m_ndata (channel: g_ch[c] in the path)")) u_chk (
            .clk, .rst, .valid(m_ndata_valid[c]), .ready(m_ndata_ready[c]),
            .data({m_ndata_data[c*32 +: 32], m_ndata_last[c]}));
    end
endmodule

bind ats_backend ats_stream_check #(.W($bits(m_wbc_tag) + $bits(m_wbc_status) + $bits(m_wbc_ppn)), .NAME("m_wbc")) u_chk_m_wbc (
    .clk, .rst, .valid(m_wbc_valid), .ready(m_wbc_ready), .data({m_wbc_tag, m_wbc_status, m_wbc_ppn}));
bind ats_backend ats_stream_check #(.W($bits(m_rdd_data) + $bits(m_rdd_last) + $bits(m_rdd_status) + $bits(m_rdd_tag)), .NAME("m_rdd")) u_chk_m_rdd (
    .clk, .rst, .valid(m_rdd_valid), .ready(m_rdd_ready), .data({m_rdd_data, m_rdd_last, m_rdd_status, m_rdd_tag}));
bind ats_backend ats_stream_check #(.W($bits(m_bad_chan) + $bits(m_bad_way) + $bits(m_bad_block)), .NAME("m_bad")) u_chk_m_bad (
    .clk, .rst, .valid(m_bad_valid), .ready(m_bad_ready), .data({m_bad_chan, m_bad_way, m_bad_block}));
bind ats_backend ats_stream_check #(.W($bits(m_req_op) + $bits(m_req_tag) + $bits(m_req_txid) + $bits(m_req_lpn) + $bits(m_req_ppn)), .NAME("m_req")) u_chk_m_req (
    .clk, .rst, .valid(m_req_valid), .ready(m_req_ready), .data({m_req_op, m_req_tag, m_req_txid, m_req_lpn, m_req_ppn}));
bind ats_backend ats_stream_check #(.W($bits(m_nreq_tag) + $bits(m_nreq_op) + $bits(m_nreq_chan) + $bits(m_nreq_way) + $bits(m_nreq_block) + $bits(m_nreq_page) + $bits(m_nreq_head) + $bits(m_nreq_prio_read) + $bits(m_nreq_slot)), .NAME("m_nreq")) u_chk_m_nreq (
    .clk, .rst, .valid(m_nreq_valid), .ready(m_nreq_ready), .data({m_nreq_tag, m_nreq_op, m_nreq_chan, m_nreq_way, m_nreq_block, m_nreq_page, m_nreq_head, m_nreq_prio_read, m_nreq_slot}));
// m_ndata is one stream per channel (valid, ready, last a bit each, 32 data bits each): one checker each
bind ats_backend ats_backend_ndata_chk #(.NUM_CHAN(NUM_CHAN)) u_chk_m_ndata (.*);
bind ats_backend ats_stream_check #(.W($bits(m_fwr_status) + $bits(m_fwr_data) + $bits(m_fwr_last) + $bits(m_fwr_ppn) + $bits(m_fwr_mapped)), .NAME("m_fwr")) u_chk_m_fwr (
    .clk, .rst, .valid(m_fwr_valid), .ready(m_fwr_ready), .data({m_fwr_status, m_fwr_data, m_fwr_last, m_fwr_ppn, m_fwr_mapped}));
bind ats_nand_subsys ats_stream_check #(.W($bits(m_nfetch_chan) + $bits(m_nfetch_tag) + $bits(m_nfetch_slot)), .NAME("m_nfetch")) u_chk_m_nfetch (
    .clk, .rst, .valid(m_nfetch_valid), .ready(m_nfetch_ready), .data({m_nfetch_chan, m_nfetch_tag, m_nfetch_slot}));
bind ats_nand_subsys ats_stream_check #(.W($bits(m_ndata_data) + $bits(m_ndata_last) + $bits(m_ndata_tag) + $bits(m_ndata_slot) + $bits(m_ndata_chan) + $bits(m_ndata_widx)), .NAME("m_ndata")) u_chk_m_ndata (
    .clk, .rst, .valid(m_ndata_valid), .ready(m_ndata_ready), .data({m_ndata_data, m_ndata_last, m_ndata_tag, m_ndata_slot, m_ndata_chan, m_ndata_widx}));
bind ats_nand_subsys ats_stream_check #(.W($bits(m_ncpl_tag) + $bits(m_ncpl_status) + $bits(m_ncpl_corrected) + $bits(m_ncpl_bad_mark)), .NAME("m_ncpl")) u_chk_m_ncpl (
    .clk, .rst, .valid(m_ncpl_valid), .ready(m_ncpl_ready), .data({m_ncpl_tag, m_ncpl_status, m_ncpl_corrected, m_ncpl_bad_mark}));

`resetall
