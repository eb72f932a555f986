// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme_bar (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme_bar.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_bar ats_stream_check #(.W($bits(m_axis_cc_tdata) + $bits(m_axis_cc_tkeep) + $bits(m_axis_cc_tlast) + $bits(m_axis_cc_tuser)), .NAME("m_axis_cc")) u_chk_m_axis_cc (
    .clk, .rst, .valid(m_axis_cc_tvalid), .ready(m_axis_cc_tready), .data({m_axis_cc_tdata, m_axis_cc_tkeep, m_axis_cc_tlast, m_axis_cc_tuser}));
bind ats_nvme_bar ats_stream_check #(.W($bits(m_db_cq) + $bits(m_db_qid) + $bits(m_db_value) + $bits(m_db_big)), .NAME("m_db")) u_chk_m_db (
    .clk, .rst, .valid(m_db_valid), .ready(m_db_ready), .data({m_db_cq, m_db_qid, m_db_value, m_db_big}));

`resetall
