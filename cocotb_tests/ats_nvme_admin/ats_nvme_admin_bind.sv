// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme_admin (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme_admin.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_admin ats_stream_check #(.W($bits(m_qop_op) + $bits(m_qop_qid) + $bits(m_qop_qsz) + $bits(m_qop_base) + $bits(m_qop_pc) + $bits(m_qop_ien) + $bits(m_qop_iv) + $bits(m_qop_qprio)), .NAME("m_qop")) u_chk_m_qop (
    .clk, .rst, .valid(m_qop_valid), .ready(m_qop_ready), .data({m_qop_op, m_qop_qid, m_qop_qsz, m_qop_base, m_qop_pc, m_qop_ien, m_qop_iv, m_qop_qprio}));
bind ats_nvme_admin ats_stream_check #(.W($bits(m_set_slot) + $bits(m_set_prp1) + $bits(m_set_prp2) + $bits(m_set_len)), .NAME("m_set")) u_chk_m_set (
    .clk, .rst, .valid(m_set_valid), .ready(m_set_ready), .data({m_set_slot, m_set_prp1, m_set_prp2, m_set_len}));
bind ats_nvme_admin ats_stream_check #(.W($bits(m_wwr_addr) + $bits(m_wwr_data) + $bits(m_wwr_last)), .NAME("m_wwr")) u_chk_m_wwr (
    .clk, .rst, .valid(m_wwr_valid), .ready(m_wwr_ready), .data({m_wwr_addr, m_wwr_data, m_wwr_last}));
bind ats_nvme_admin ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_dptr, m_cmd_aux}));
bind ats_nvme_admin ats_stream_check #(.W($bits(m_cqe_sqhd) + $bits(m_cqe_cid) + $bits(m_cqe_status) + $bits(m_cqe_dw0)), .NAME("m_cqe")) u_chk_m_cqe (
    .clk, .rst, .valid(m_cqe_valid), .ready(m_cqe_ready), .data({m_cqe_sqhd, m_cqe_cid, m_cqe_status, m_cqe_dw0}));

`resetall
