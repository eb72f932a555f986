// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of the write buffer (rtl/common/ats_stream_check.sv: valid held and
// payload stable until taken; rtl/wbuf/README.md "Output streams keep an offered beat"), bound to
// the block in its cocotb test (test_ats_wbuf.py adds this file and the checker to the sources).
// The s_ ports are driven by the cocotb TB (its own drivers keep the rules).
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_wbuf ats_stream_check #(.W($bits(m_done_tag) + $bits(m_done_status) + $bits(m_done_result)), .NAME("m_done")) u_chk_m_done (
    .clk, .rst, .valid(m_done_valid), .ready(m_done_ready), .data({m_done_tag, m_done_status, m_done_result}));
bind ats_wbuf ats_stream_check #(.W($bits(m_hrd_addr) + $bits(m_hrd_len)), .NAME("m_hrd")) u_chk_m_hrd (
    .clk, .rst, .valid(m_hrd_valid), .ready(m_hrd_ready), .data({m_hrd_addr, m_hrd_len}));
bind ats_wbuf ats_stream_check #(.W($bits(m_hwr_addr) + $bits(m_hwr_data) + $bits(m_hwr_last)), .NAME("m_hwr")) u_chk_m_hwr (
    .clk, .rst, .valid(m_hwr_valid), .ready(m_hwr_ready), .data({m_hwr_addr, m_hwr_data, m_hwr_last}));
bind ats_wbuf ats_stream_check #(.W($bits(m_wb_op) + $bits(m_wb_rec) + $bits(m_wb_slot) + $bits(m_wb_lpn) + $bits(m_wb_txid) + $bits(m_wb_epoch) + $bits(m_wb_kind) + $bits(m_wb_fua) + $bits(m_wb_tag) + $bits(m_wb_slog)), .NAME("m_wb")) u_chk_m_wb (
    .clk, .rst, .valid(m_wb_valid), .ready(m_wb_ready), .data({m_wb_op, m_wb_rec, m_wb_slot, m_wb_lpn, m_wb_txid, m_wb_epoch, m_wb_kind, m_wb_fua, m_wb_tag, m_wb_slog}));
bind ats_wbuf ats_stream_check #(.W($bits(m_wbd_data) + $bits(m_wbd_last)), .NAME("m_wbd")) u_chk_m_wbd (
    .clk, .rst, .valid(m_wbd_valid), .ready(m_wbd_ready), .data({m_wbd_data, m_wbd_last}));
bind ats_wbuf ats_stream_check #(.W($bits(m_rd_lpn) + $bits(m_rd_txid) + $bits(m_rd_tag)), .NAME("m_rd")) u_chk_m_rd (
    .clk, .rst, .valid(m_rd_valid), .ready(m_rd_ready), .data({m_rd_lpn, m_rd_txid, m_rd_tag}));

`resetall
