// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of the command queue (rtl/common/ats_stream_check.sv: valid held
// and payload stable until taken), bound to the block in its cocotb test (test_ats_cmdq.py adds
// this file and the checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_cmdq ats_stream_check #(.W($bits(m_disp_op) + $bits(m_disp_tag) + $bits(m_disp_lba) + $bits(m_disp_nlb) + $bits(m_disp_txid) + $bits(m_disp_flags) + $bits(m_disp_attr) + $bits(m_disp_prio) + $bits(m_disp_dptr) + $bits(m_disp_aux) + $bits(m_disp_epoch)), .NAME("m_disp")) u_chk_m_disp (
    .clk, .rst, .valid(m_disp_valid), .ready(m_disp_ready), .data({m_disp_op, m_disp_tag, m_disp_lba, m_disp_nlb, m_disp_txid, m_disp_flags, m_disp_attr, m_disp_prio, m_disp_dptr, m_disp_aux, m_disp_epoch}));
bind ats_cmdq ats_stream_check #(.W($bits(m_cpl_tag) + $bits(m_cpl_status) + $bits(m_cpl_result)), .NAME("m_cpl")) u_chk_m_cpl (
    .clk, .rst, .valid(m_cpl_valid), .ready(m_cpl_ready), .data({m_cpl_tag, m_cpl_status, m_cpl_result}));

`resetall
