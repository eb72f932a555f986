// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of fw_bridge (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_fw_bridge.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_fw_bridge ats_stream_check #(.W($bits(m_fw_op) + $bits(m_fw_chan) + $bits(m_fw_way) + $bits(m_fw_block) + $bits(m_fw_page) + $bits(m_fw_rop) + $bits(m_fw_txid) + $bits(m_fw_lpn) + $bits(m_fw_ppn) + $bits(m_fw_seq) + $bits(m_fw_epoch) + $bits(m_fw_flags) + $bits(m_fw_kind)), .NAME("m_fw")) u_chk_m_fw (
    .clk, .rst, .valid(m_fw_valid), .ready(m_fw_ready), .data({m_fw_op, m_fw_chan, m_fw_way, m_fw_block, m_fw_page, m_fw_rop, m_fw_txid, m_fw_lpn, m_fw_ppn, m_fw_seq, m_fw_epoch, m_fw_flags, m_fw_kind}));
bind ats_fw_bridge ats_stream_check #(.W($bits(m_fwd_data) + $bits(m_fwd_last)), .NAME("m_fwd")) u_chk_m_fwd (
    .clk, .rst, .valid(m_fwd_valid), .ready(m_fwd_ready), .data({m_fwd_data, m_fwd_last}));

`resetall
