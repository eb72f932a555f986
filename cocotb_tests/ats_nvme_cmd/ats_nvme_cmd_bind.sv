// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme_cmd (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme_cmd.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_cmd ats_stream_check #(.W($bits(m_adm_data) + $bits(m_adm_sqhd)), .NAME("m_adm")) u_chk_m_adm (
    .clk, .rst, .valid(m_adm_valid), .ready(m_adm_ready), .data({m_adm_data, m_adm_sqhd}));
bind ats_nvme_cmd ats_stream_check #(.W($bits(m_set_slot) + $bits(m_set_prp1) + $bits(m_set_prp2) + $bits(m_set_len)), .NAME("m_set")) u_chk_m_set (
    .clk, .rst, .valid(m_set_valid), .ready(m_set_ready), .data({m_set_slot, m_set_prp1, m_set_prp2, m_set_len}));
bind ats_nvme_cmd ats_stream_check #(.W($bits(m_lrd_addr) + $bits(m_lrd_len)), .NAME("m_lrd")) u_chk_m_lrd (
    .clk, .rst, .valid(m_lrd_valid), .ready(m_lrd_ready), .data({m_lrd_addr, m_lrd_len}));
bind ats_nvme_cmd ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_txid) + $bits(m_cmd_flags) + $bits(m_cmd_attr) + $bits(m_cmd_prio) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio, m_cmd_dptr, m_cmd_aux}));
bind ats_nvme_cmd ats_stream_check #(.W($bits(m_cqe_cqid) + $bits(m_cqe_sqid) + $bits(m_cqe_sqhd) + $bits(m_cqe_cid) + $bits(m_cqe_status) + $bits(m_cqe_dw0)), .NAME("m_cqe")) u_chk_m_cqe (
    .clk, .rst, .valid(m_cqe_valid), .ready(m_cqe_ready), .data({m_cqe_cqid, m_cqe_sqid, m_cqe_sqhd, m_cqe_cid, m_cqe_status, m_cqe_dw0}));

`resetall
