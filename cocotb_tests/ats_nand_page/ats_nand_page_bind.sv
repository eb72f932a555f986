// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of ats_nand_page (rtl/common/ats_stream_check.sv: valid held and
// payload stable until taken), bound by module name in test_ats_nand_page.py (with the bind files
// of its chan and BCH encoder / decoder, cocotb_tests/ats_nand_chan, ats_bch_enc, ats_bch_dec) and
// in cocotb_tests/ats_ssd_core. The TB's own s_ drivers are not checked here.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_nand_page ats_stream_check #(.W($bits(m_rdata_data) + $bits(m_rdata_tag) + $bits(m_rdata_slot) + $bits(m_rdata_last)), .NAME("m_rdata")) u_chk_m_rdata (
    .clk, .rst, .valid(m_rdata_valid), .ready(m_rdata_ready), .data({m_rdata_data, m_rdata_tag, m_rdata_slot, m_rdata_last}));
bind ats_nand_page ats_stream_check #(.W($bits(m_cpl_tag) + $bits(m_cpl_slot) + $bits(m_cpl_status) + $bits(m_cpl_corrected) + $bits(m_cpl_bad_mark) + 2), .NAME("m_cpl")) u_chk_m_cpl (
    .clk, .rst, .valid(m_cpl_valid), .ready(m_cpl_ready), .data({m_cpl_tag, m_cpl_slot, m_cpl_status, m_cpl_corrected, m_cpl_bad_mark, m_cpl_rel, m_cpl_rd}));

`resetall
