// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of nvme_arb2 (rtl/common/ats_stream_check.sv: valid held and payload
// stable until taken), bound to the block in its cocotb test (test_ats_nvme_arb2.py adds this file and the
// checker to the sources). The s_ ports are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nvme_arb2 ats_stream_check #(.W($bits(m_data) + $bits(m_last) + $bits(m_sel)), .NAME("m")) u_chk_m (
    .clk, .rst, .valid(m_valid), .ready(m_ready), .data({m_data, m_last, m_sel}));

`resetall
