// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of bch_dec (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_bch_dec.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_bch_dec ats_stream_check #(.W($bits(m_data_data) + $bits(m_data_last)), .NAME("m_data")) u_chk_m_data (
    .clk, .rst, .valid(m_data_valid), .ready(m_data_ready), .data({m_data_data, m_data_last}));
bind ats_bch_dec ats_stream_check #(.W($bits(m_status_corrected) + $bits(m_status_uncorrectable)), .NAME("m_status")) u_chk_m_status (
    .clk, .rst, .valid(m_status_valid), .ready(m_status_ready), .data({m_status_corrected, m_status_uncorrectable}));

`resetall
