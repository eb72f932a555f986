// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of ats_nvme_rq (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound by module name in test_ats_nvme_rq.py, test_ats_nvme_qm.py and test_ats_nvme.py (each adds this file and the checker to its
// sources). The TB's own s_ drivers are not checked here.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_rq ats_stream_check #(.W($bits(m_axis_rq_tdata) + $bits(m_axis_rq_tkeep) + $bits(m_axis_rq_tlast) + $bits(m_axis_rq_tuser)), .NAME("m_axis_rq")) u_chk_m_axis_rq (
    .clk, .rst, .valid(m_axis_rq_tvalid), .ready(m_axis_rq_tready), .data({m_axis_rq_tdata, m_axis_rq_tkeep, m_axis_rq_tlast, m_axis_rq_tuser}));
bind ats_nvme_rq ats_stream_check #(.W($bits(m_rdat_data) + $bits(m_rdat_last) + $bits(m_rdat_err) + $bits(m_rdat_id)), .NAME("m_rdat")) u_chk_m_rdat (
    .clk, .rst, .valid(m_rdat_valid), .ready(m_rdat_ready), .data({m_rdat_data, m_rdat_last, m_rdat_err, m_rdat_id}));

`resetall
