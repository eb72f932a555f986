// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of admin (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_admin.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// m_cmd has no payload of its own: it forwards s_cmd's descriptor (op, tag, dptr; the other fields go
// to the core directly), so its payload is checked as those fields
bind ats_admin ats_stream_check #(.W($bits(s_cmd_op) + $bits(s_cmd_tag) + $bits(s_cmd_dptr)), .NAME("m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({s_cmd_op, s_cmd_tag, s_cmd_dptr}));
bind ats_admin ats_stream_check #(.W($bits(m_cpl_tag) + $bits(m_cpl_status) + $bits(m_cpl_result)), .NAME("m_cpl")) u_chk_m_cpl (
    .clk, .rst, .valid(m_cpl_valid), .ready(m_cpl_ready), .data({m_cpl_tag, m_cpl_status, m_cpl_result}));
bind ats_admin ats_stream_check #(.W($bits(m_hwr_addr) + $bits(m_hwr_data) + $bits(m_hwr_last)), .NAME("m_hwr")) u_chk_m_hwr (
    .clk, .rst, .valid(m_hwr_valid), .ready(m_hwr_ready), .data({m_hwr_addr, m_hwr_data, m_hwr_last}));

`resetall
