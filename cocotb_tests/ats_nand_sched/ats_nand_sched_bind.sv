// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of the NAND scheduler (rtl/common/ats_stream_check.sv: valid held
// and payload stable until taken; rtl/nand/README_sched.md: a command on m_ccmd[c] is "stable until
// taken"), bound to the block in its cocotb test (test_ats_nand_sched.py adds this file and the
// checker to the sources): one checker per channel of m_ccmd (its fields packed per channel) and
// one on m_ncpl. s_nreq and s_ccpl are driven by the cocotb TB.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_sched_chk #(
    parameter int NUM_CHAN = 8,
    parameter int SLOT_W   = 8
) (
    input wire logic                       clk,
    input wire logic                       rst,
    input wire logic [NUM_CHAN-1:0]        m_ccmd_valid,
    input wire logic [NUM_CHAN-1:0]        m_ccmd_ready,
    input wire logic [NUM_CHAN*8-1:0]      m_ccmd_tag,
    input wire logic [NUM_CHAN*2-1:0]      m_ccmd_op,
    input wire logic [NUM_CHAN*2-1:0]      m_ccmd_way,
    input wire logic [NUM_CHAN*12-1:0]     m_ccmd_block,
    input wire logic [NUM_CHAN*8-1:0]      m_ccmd_page,
    input wire logic [NUM_CHAN*SLOT_W-1:0] m_ccmd_slot,
    input wire logic                       m_ncpl_valid,
    input wire logic                       m_ncpl_ready,
    input wire logic [7:0]                 m_ncpl_tag,
    input wire logic [2:0]                 m_ncpl_status,
    input wire logic [7:0]                 m_ncpl_corrected
);
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_ch
        ats_stream_check #(.W(32 + SLOT_W), .NAME("m_ccmd (channel: g_ch[c] in the path)")) u_chk_m_ccmd (
            .clk, .rst, .valid(m_ccmd_valid[c]), .ready(m_ccmd_ready[c]),
            .data({m_ccmd_tag[c*8 +: 8], m_ccmd_op[c*2 +: 2], m_ccmd_way[c*2 +: 2],
                   m_ccmd_block[c*12 +: 12], m_ccmd_page[c*8 +: 8], m_ccmd_slot[c*SLOT_W +: SLOT_W]}));
    end
    ats_stream_check #(.W(19), .NAME("m_ncpl")) u_chk_m_ncpl (
        .clk, .rst, .valid(m_ncpl_valid), .ready(m_ncpl_ready),
        .data({m_ncpl_tag, m_ncpl_status, m_ncpl_corrected}));
endmodule

bind ats_nand_sched ats_nand_sched_chk #(.NUM_CHAN(NUM_CHAN), .SLOT_W(SLOT_W)) u_chk (.*);

`resetall
