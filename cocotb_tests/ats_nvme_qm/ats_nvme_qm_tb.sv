// SPDX-License-Identifier: Apache-2.0
// Test top of ats_nvme_qm: the BAR target, the DMA requester and the queue manager, as the front end
// will connect them (the command side is the testbench). The queue manager is the only DMA client:
// its SQE fetches use the read port, its CQE writes the write port. `wr_ur`: the test's root port
// refuses a write TLP outside host memory (as the full-system simulation's does).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nvme_qm_tb #(
    parameter int NQ    = 4,
    parameter int QSIZE = 256,
    parameter int TAGS  = 4,
    parameter int QW    = $clog2(NQ + 1)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    // PCIe (UltraScale+ user interface, 256 bits)
    input  wire logic [255:0] s_axis_cq_tdata,
    input  wire logic [7:0]   s_axis_cq_tkeep,
    input  wire logic         s_axis_cq_tlast,
    input  wire logic [87:0]  s_axis_cq_tuser,
    input  wire logic         s_axis_cq_tvalid,
    output      logic         s_axis_cq_tready,
    output      logic [255:0] m_axis_cc_tdata,
    output      logic [7:0]   m_axis_cc_tkeep,
    output      logic         m_axis_cc_tlast,
    output      logic [32:0]  m_axis_cc_tuser,
    output      logic         m_axis_cc_tvalid,
    input  wire logic         m_axis_cc_tready,
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
    input  wire logic [3:0]   cfg_interrupt_msi_enable,
    input  wire logic [11:0]  cfg_interrupt_msi_mmenable,
    output      logic [31:0]  cfg_interrupt_msi_int,
    input  wire logic         cfg_interrupt_msi_sent,
    input  wire logic         cfg_interrupt_msi_fail,
    input  wire logic         wr_ur,             // the test's root port refuses the write TLP ending now (outside host memory)
    // command side
    output      logic         m_sqe_valid,
    input  wire logic         m_sqe_ready,
    output      logic [511:0] m_sqe_data,
    output      logic [QW-1:0] m_sqe_sqid,
    output      logic [QW-1:0] m_sqe_cqid,
    output      logic [15:0]  m_sqe_sqhd,
    output      logic [1:0]   m_sqe_prio,
    input  wire logic         fetch_ok_io,
    input  wire logic         fetch_ok_adm,
    input  wire logic         cmd_idle,
    output      logic         m_flush,
    input  wire logic         s_flush_done,
    input  wire logic         s_qop_valid,
    output      logic         s_qop_ready,
    input  wire logic [1:0]   s_qop_op,
    input  wire logic [15:0]  s_qop_qid,
    input  wire logic [15:0]  s_qop_qsz,
    input  wire logic [63:0]  s_qop_base,
    input  wire logic         s_qop_pc,
    input  wire logic         s_qop_ien,
    input  wire logic [15:0]  s_qop_iv,
    input  wire logic [1:0]   s_qop_qprio,
    output      logic         m_qrsp_valid,
    input  wire logic         m_qrsp_ready,
    output      logic [10:0]  m_qrsp_status,
    input  wire logic         s_cqe_valid,
    output      logic         s_cqe_ready,
    input  wire logic [QW-1:0] s_cqe_cqid,
    input  wire logic [QW-1:0] s_cqe_sqid,
    input  wire logic [15:0]  s_cqe_sqhd,
    input  wire logic [15:0]  s_cqe_cid,
    input  wire logic [14:0]  s_cqe_status,
    input  wire logic [31:0]  s_cqe_dw0,
    output      logic [NQ:0]  cq_room,
    output      logic         s_cqe_wr,
    output      logic         st_cfs,
    output      logic [31:0]  cnt_fetch,
    output      logic [31:0]  cnt_cqe,
    output      logic [31:0]  cnt_cqe_drop,
    output      logic [31:0]  cnt_msi,
    output      logic [31:0]  cnt_msi_fail,
    output      logic [31:0]  cnt_ur,
    output      logic         st_dis,
    output      logic         ioq_any
);
    localparam int IDW = 4;
    logic db_valid, db_ready, db_cq, db_big, en_req, st_rdy;
    logic [QW-1:0] db_qid;
    logic [15:0] db_value;
    logic [1:0] cc_shn, st_shst;
    logic [11:0] asqs, acqs;
    logic [63:0] asq, acq;
    logic [31:0] int_mask;

    ats_nvme_bar #(.NQ(NQ), .QSIZE(QSIZE)) u_bar (
        .clk, .rst,
        .s_axis_cq_tdata, .s_axis_cq_tkeep, .s_axis_cq_tlast, .s_axis_cq_tuser, .s_axis_cq_tvalid, .s_axis_cq_tready,
        .m_axis_cc_tdata, .m_axis_cc_tkeep, .m_axis_cc_tlast, .m_axis_cc_tuser, .m_axis_cc_tvalid, .m_axis_cc_tready,
        .m_db_valid(db_valid), .m_db_ready(db_ready), .m_db_cq(db_cq), .m_db_qid(db_qid), .m_db_value(db_value),
        .m_db_big(db_big), .en_req, .cc_shn, .aqa_asqs(asqs), .aqa_acqs(acqs), .asq_base(asq), .acq_base(acq),
        .int_mask, .st_rdy, .st_cfs, .st_shst, .cnt_ur
    );

    logic rreq_valid, rreq_ready, rdat_valid, rdat_ready, rdat_last, rdat_err;
    logic [63:0] rreq_addr, wreq_addr;
    logic [10:0] rreq_ndw, wreq_ndw;
    logic [IDW-1:0] rreq_id, rdat_id, wreq_id, wdone_id;
    logic [31:0] rdat_data, wdat_data;
    logic wreq_valid, wreq_ready, wdat_valid, wdat_ready, wdone, wdone_err;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] rq_rd_err, rq_timeout, rq_late;
    /* verilator lint_on UNUSEDSIGNAL */

    ats_nvme_rq #(.TAGS(TAGS), .IDW(IDW)) u_rq (
        .clk, .rst,
        .m_axis_rq_tdata, .m_axis_rq_tkeep, .m_axis_rq_tlast, .m_axis_rq_tuser, .m_axis_rq_tvalid, .m_axis_rq_tready,
        .s_axis_rc_tdata, .s_axis_rc_tkeep, .s_axis_rc_tlast, .s_axis_rc_tuser, .s_axis_rc_tvalid, .s_axis_rc_tready,
        .cfg_max_payload, .cfg_max_read_req, .bme(cfg_function_status[2]), .wr_ur,
        .s_rreq_valid(rreq_valid), .s_rreq_ready(rreq_ready), .s_rreq_addr(rreq_addr), .s_rreq_ndw(rreq_ndw),
        .s_rreq_id(rreq_id),
        .m_rdat_valid(rdat_valid), .m_rdat_ready(rdat_ready), .m_rdat_data(rdat_data), .m_rdat_last(rdat_last),
        .m_rdat_err(rdat_err), .m_rdat_id(rdat_id),
        .s_wreq_valid(wreq_valid), .s_wreq_ready(wreq_ready), .s_wreq_addr(wreq_addr), .s_wreq_ndw(wreq_ndw),
        .s_wreq_id(wreq_id), .s_wdat_valid(wdat_valid), .s_wdat_ready(wdat_ready), .s_wdat_data(wdat_data),
        .m_wdone(wdone), .m_wdone_id(wdone_id), .m_wdone_err(wdone_err),
        .cnt_rd_err(rq_rd_err), .cnt_timeout(rq_timeout), .cnt_late(rq_late)
    );

    ats_nvme_qm #(.NQ(NQ), .QSIZE(QSIZE), .IDW(IDW)) u_qm (
        .clk, .rst,
        .s_db_valid(db_valid), .s_db_ready(db_ready), .s_db_cq(db_cq), .s_db_qid(db_qid), .s_db_value(db_value),
        .s_db_big(db_big), .en_req, .cc_shn, .aqa_asqs(asqs), .aqa_acqs(acqs), .asq_base(asq), .acq_base(acq),
        .int_mask, .st_rdy, .st_cfs, .st_shst, .st_dis, .ioq_any,
        .m_sqe_valid, .m_sqe_ready, .m_sqe_data, .m_sqe_sqid, .m_sqe_cqid, .m_sqe_sqhd, .m_sqe_prio,
        .fetch_ok_io, .fetch_ok_adm, .cmd_idle, .m_flush, .s_flush_done,
        .s_qop_valid, .s_qop_ready, .s_qop_op, .s_qop_qid, .s_qop_qsz, .s_qop_base, .s_qop_pc, .s_qop_ien,
        .s_qop_iv, .s_qop_qprio, .m_qrsp_valid, .m_qrsp_ready, .m_qrsp_status,
        .s_cqe_valid, .s_cqe_ready, .s_cqe_cqid, .s_cqe_sqid, .s_cqe_sqhd, .s_cqe_cid, .s_cqe_status, .s_cqe_dw0, .cq_room, .s_cqe_wr,
        .m_rreq_valid(rreq_valid), .m_rreq_ready(rreq_ready), .m_rreq_addr(rreq_addr), .m_rreq_ndw(rreq_ndw),
        .m_rreq_id(rreq_id),
        .s_rdat_valid(rdat_valid && rdat_id == IDW'(0)), .s_rdat_ready(rdat_ready), .s_rdat_data(rdat_data),
        .s_rdat_last(rdat_last), .s_rdat_err(rdat_err),
        .m_wreq_valid(wreq_valid), .m_wreq_ready(wreq_ready), .m_wreq_addr(wreq_addr), .m_wreq_ndw(wreq_ndw),
        .m_wreq_id(wreq_id), .m_wdat_valid(wdat_valid), .m_wdat_ready(wdat_ready), .m_wdat_data(wdat_data),
        .s_wdone(wdone && wdone_id == IDW'(1)), .s_wdone_err(wdone_err),
        .cfg_interrupt_msi_enable, .cfg_interrupt_msi_mmenable, .cfg_interrupt_msi_int,
        .cfg_interrupt_msi_sent, .cfg_interrupt_msi_fail,
        .cnt_fetch, .cnt_cqe, .cnt_cqe_drop, .cnt_msi, .cnt_msi_fail
    );
endmodule

`resetall
