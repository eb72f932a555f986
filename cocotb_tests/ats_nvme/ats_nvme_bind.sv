// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme ats_stream_check #(.W($bits(m_axis_cc_tdata) + $bits(m_axis_cc_tkeep) + $bits(m_axis_cc_tlast) + $bits(m_axis_cc_tuser)), .NAME("m_axis_cc")) u_chk_m_axis_cc (
    .clk, .rst, .valid(m_axis_cc_tvalid), .ready(m_axis_cc_tready), .data({m_axis_cc_tdata, m_axis_cc_tkeep, m_axis_cc_tlast, m_axis_cc_tuser}));
bind ats_nvme ats_stream_check #(.W($bits(m_axis_rq_tdata) + $bits(m_axis_rq_tkeep) + $bits(m_axis_rq_tlast) + $bits(m_axis_rq_tuser)), .NAME("m_axis_rq")) u_chk_m_axis_rq (
    .clk, .rst, .valid(m_axis_rq_tvalid), .ready(m_axis_rq_tready), .data({m_axis_rq_tdata, m_axis_rq_tkeep, m_axis_rq_tlast, m_axis_rq_tuser}));
bind ats_nvme ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_txid) + $bits(m_cmd_flags) + $bits(m_cmd_attr) + $bits(m_cmd_prio) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio, m_cmd_dptr, m_cmd_aux}));
bind ats_nvme ats_stream_check #(.W($bits(m_hrd_data) + $bits(m_hrd_last)), .NAME("m_hrd")) u_chk_m_hrd (
    .clk, .rst, .valid(m_hrd_valid), .ready(m_hrd_ready), .data({m_hrd_data, m_hrd_last}));

`resetall
