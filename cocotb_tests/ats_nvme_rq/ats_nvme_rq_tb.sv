// SPDX-License-Identifier: Apache-2.0
// Test top of ats_nvme_rq: bus master enable from the hard IP's cfg_function_status (bit 2 of PF0).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nvme_rq_tb #(
    parameter int TAGS    = 8,
    parameter int IDW     = 4,
    parameter int TIMEOUT = 65536
) (
    input  wire logic         clk,
    input  wire logic         rst,
    output      logic [255:0] m_axis_rq_tdata,
    output      logic [7:0]   m_axis_rq_tkeep,
    output      logic         m_axis_rq_tlast,
    output      logic [61:0]  m_axis_rq_tuser,
    output      logic         m_axis_rq_tvalid,
    input  wire logic         m_axis_rq_tready,
    input  wire logic [255:0] s_axis_rc_tdata,
    input  wire logic [7:0]   s_axis_rc_tkeep,
    input  wire logic         s_axis_rc_tlast,
    input  wire logic [74:0]  s_axis_rc_tuser,
    input  wire logic         s_axis_rc_tvalid,
    output      logic         s_axis_rc_tready,
    input  wire logic [1:0]   cfg_max_payload,
    input  wire logic [2:0]   cfg_max_read_req,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [15:0]  cfg_function_status,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic         wr_ur,
    input  wire logic         s_rreq_valid,
    output      logic         s_rreq_ready,
    input  wire logic [63:0]  s_rreq_addr,
    input  wire logic [10:0]  s_rreq_ndw,
    input  wire logic [IDW-1:0] s_rreq_id,
    output      logic         m_rdat_valid,
    input  wire logic         m_rdat_ready,
    output      logic [31:0]  m_rdat_data,
    output      logic         m_rdat_last,
    output      logic         m_rdat_err,
    output      logic [IDW-1:0] m_rdat_id,
    input  wire logic         s_wreq_valid,
    output      logic         s_wreq_ready,
    input  wire logic [63:0]  s_wreq_addr,
    input  wire logic [10:0]  s_wreq_ndw,
    input  wire logic [IDW-1:0] s_wreq_id,
    input  wire logic         s_wdat_valid,
    output      logic         s_wdat_ready,
    input  wire logic [31:0]  s_wdat_data,
    output      logic         m_wdone,
    output      logic [IDW-1:0] m_wdone_id,
    output      logic         m_wdone_err,
    output      logic [31:0]  cnt_rd_err,
    output      logic [31:0]  cnt_timeout,
    output      logic [31:0]  cnt_late
);
    ats_nvme_rq #(.TAGS(TAGS), .IDW(IDW), .TIMEOUT(TIMEOUT)) u_dut (.*, .bme(cfg_function_status[2]));
endmodule

`resetall
