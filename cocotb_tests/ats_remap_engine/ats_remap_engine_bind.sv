// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of the remap engine (rtl/common/ats_stream_check.sv: valid held and
// payload stable until taken), bound to the generated SpinalHDL module by its port names (the same
// in every preset; widths by $bits) in its cocotb test (test_ats_remap_engine.py `_sources` adds
// this file and the checker). s_req is driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

bind ats_remap_engine ats_stream_check #(.W($bits(m_rsp_tag) + $bits(m_rsp_status) + $bits(m_rsp_ppn) + $bits(m_rsp_mapped) + $bits(m_rsp_from_tx) + $bits(m_rsp_count)), .NAME("m_rsp")) u_chk_m_rsp (
    .clk, .rst, .valid(m_rsp_valid), .ready(m_rsp_ready), .data({m_rsp_tag, m_rsp_status, m_rsp_ppn, m_rsp_mapped, m_rsp_from_tx, m_rsp_count}));
bind ats_remap_engine ats_stream_check #(.W($bits(m_inval_ppn) + $bits(m_inval_txid) + $bits(m_inval_aborted)), .NAME("m_inval")) u_chk_m_inval (
    .clk, .rst, .valid(m_inval_valid), .ready(m_inval_ready), .data({m_inval_ppn, m_inval_txid, m_inval_aborted}));
bind ats_remap_engine ats_stream_check #(.W($bits(m_map_txid) + $bits(m_map_lpn) + $bits(m_map_ppn) + $bits(m_map_last)), .NAME("m_map")) u_chk_m_map (
    .clk, .rst, .valid(m_map_valid), .ready(m_map_ready), .data({m_map_txid, m_map_lpn, m_map_ppn, m_map_last}));

`resetall
