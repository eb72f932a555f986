// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme_prp (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme_prp.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_prp ats_stream_check #(.W($bits(m_setr_slot) + $bits(m_setr_status)), .NAME("m_setr")) u_chk_m_setr (
    .clk, .rst, .valid(m_setr_valid), .ready(m_setr_ready), .data({m_setr_slot, m_setr_status}));
bind ats_nvme_prp ats_stream_check #(.W($bits(m_wrd_data) + $bits(m_wrd_last) + $bits(m_wrd_err)), .NAME("m_wrd")) u_chk_m_wrd (
    .clk, .rst, .valid(m_wrd_valid), .ready(m_wrd_ready), .data({m_wrd_data, m_wrd_last, m_wrd_err}));
bind ats_nvme_prp ats_stream_check #(.W($bits(m_rreq_addr) + $bits(m_rreq_ndw) + $bits(m_rreq_id)), .NAME("m_rreq")) u_chk_m_rreq (
    .clk, .rst, .valid(m_rreq_valid), .ready(m_rreq_ready), .data({m_rreq_addr, m_rreq_ndw, m_rreq_id}));
bind ats_nvme_prp ats_stream_check #(.W($bits(m_wreq_addr) + $bits(m_wreq_ndw) + $bits(m_wreq_id)), .NAME("m_wreq")) u_chk_m_wreq (
    .clk, .rst, .valid(m_wreq_valid), .ready(m_wreq_ready), .data({m_wreq_addr, m_wreq_ndw, m_wreq_id}));
bind ats_nvme_prp ats_stream_check #(.W($bits(m_wdat_data)), .NAME("m_wdat")) u_chk_m_wdat (
    .clk, .rst, .valid(m_wdat_valid), .ready(m_wdat_ready), .data({m_wdat_data}));

`resetall
