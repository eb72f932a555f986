// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of ats_nvme_qm (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound by module name in test_ats_nvme_qm.py and test_ats_nvme.py (each adds this file and the checker to its
// sources). The TB's own s_ drivers are not checked here.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_qm ats_stream_check #(.W($bits(m_sqe_data) + $bits(m_sqe_sqid) + $bits(m_sqe_cqid) + $bits(m_sqe_sqhd) + $bits(m_sqe_prio)), .NAME("m_sqe")) u_chk_m_sqe (
    .clk, .rst, .valid(m_sqe_valid), .ready(m_sqe_ready), .data({m_sqe_data, m_sqe_sqid, m_sqe_cqid, m_sqe_sqhd, m_sqe_prio}));
bind ats_nvme_qm ats_stream_check #(.W($bits(m_qrsp_status)), .NAME("m_qrsp")) u_chk_m_qrsp (
    .clk, .rst, .valid(m_qrsp_valid), .ready(m_qrsp_ready), .data({m_qrsp_status}));
bind ats_nvme_qm ats_stream_check #(.W($bits(m_rreq_addr) + $bits(m_rreq_ndw) + $bits(m_rreq_id)), .NAME("m_rreq")) u_chk_m_rreq (
    .clk, .rst, .valid(m_rreq_valid), .ready(m_rreq_ready), .data({m_rreq_addr, m_rreq_ndw, m_rreq_id}));
bind ats_nvme_qm ats_stream_check #(.W($bits(m_wreq_addr) + $bits(m_wreq_ndw) + $bits(m_wreq_id)), .NAME("m_wreq")) u_chk_m_wreq (
    .clk, .rst, .valid(m_wreq_valid), .ready(m_wreq_ready), .data({m_wreq_addr, m_wreq_ndw, m_wreq_id}));
bind ats_nvme_qm ats_stream_check #(.W($bits(m_wdat_data)), .NAME("m_wdat")) u_chk_m_wdat (
    .clk, .rst, .valid(m_wdat_valid), .ready(m_wdat_ready), .data({m_wdat_data}));

`resetall
