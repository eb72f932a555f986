// SPDX-License-Identifier: Apache-2.0
// ats_nvme: the NVMe front end (docs/host-interface.md §1; rtl/nvme/README.md "ats_nvme").
//
// PCIe (UltraScale+ AXI-Stream user interface, 256 bits) on one side, the device core's §1
// descriptors, §2 completions and host-memory port on the other. The blocks and how they share
// their ports:
//   - ats_nvme_bar (+ regs): BAR0 requests and completions, doorbells and CC to the queue manager;
//   - ats_nvme_qm: queues, SQE fetch, CQE writes, MSIs, enable / disable / shutdown;
//   - ats_nvme_cmd: I/O commands → descriptors, completions → CQE requests; admin SQEs → admin;
//   - ats_nvme_admin: admin commands, its firmware requests as §1 IDENTIFY / GET_LOG / FEATURE (tag QDEPTH);
//   - ats_nvme_prp: PRP walks and the data windows (slot · 2^17 + offset), QDEPTH + 1 slots;
//   - ats_nvme_rq: the one DMA requester.
// Shared ports (ats_nvme_arb2 unless said): the requester's read port (queue manager, PRP block;
// read data routed by id), its write port (queue manager, PRP block; the data follow the request
// granted last: the requester takes one write request at a time), the PRP setup (cmd, admin; the
// answer routed by slot), the window reads (the core, cmd's DSM range lists; the answers routed by
// a FIFO of the requests' origins: window reads answer in order), the window writes (the core,
// admin; bursts never interleave), the core's descriptor port (cmd, admin) and the queue manager's
// CQE port (cmd, admin). The core's write bursts at addresses with bit 31 set are the firmware's
// admin answers (ats_nvme_admin's LOCAL_ADDR) and go to the admin block; its completions of tag
// QDEPTH go to the admin block, all others to cmd.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme #(
    parameter int          NQ         = 4,
    parameter int          QSIZE      = 256,
    parameter int          QDEPTH     = 32,
    parameter bit          SHUT_CKPT  = 1'b0,       // shutdown: the firmware's checkpoint after the FLUSH (ats_nvme_cmd)
    parameter int          PAGE_BYTES = 4096,
    parameter logic [63:0] NUM_LBAS   = 64'd16384,
    parameter int          TAGS       = 8,
    parameter int          TIMEOUT    = 65536,
    parameter int          WCHUNK     = 64,
    parameter logic [15:0] VID        = 16'h1D1D,
    parameter logic [63:0] FR         = "0000abcd",
    parameter int          NUM_TX     = 32,            // the core's txids (the last ATX: the atomic writes')
    parameter int          TX_ENTRIES = 32,            // the core's pages per transaction
    parameter int          STX        = 0,             // SWRITE engines (their txids NUM_TX-ATX-STX+1..NUM_TX-ATX; §1.11)
    parameter int          ATX        = 1,             // atomic Writes' txids NUM_TX-ATX+1..NUM_TX (§1.10)
    parameter int          QW         = $clog2(NQ + 1)
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
    /* verilator lint_off UNUSEDSIGNAL */        // PF0's bus master enable (bit 2) only
    input  wire logic [15:0]  cfg_function_status,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [3:0]   cfg_interrupt_msi_enable,
    input  wire logic [11:0]  cfg_interrupt_msi_mmenable,
    output      logic [31:0]  cfg_interrupt_msi_int,
    input  wire logic         cfg_interrupt_msi_sent,
    input  wire logic         cfg_interrupt_msi_fail,
    // the completer refused the write TLP whose last beat RQ takes in this cycle (ats_nvme_rq: the
    // simulated root port's report of a write outside host memory; 0 with the hard IP)
    input  wire logic         rq_wr_ur,

    // the device core (docs/architecture.md §1, §2 and the host-memory port)
    output      logic         m_cmd_valid,
    input  wire logic         m_cmd_ready,
    output      logic [3:0]   m_cmd_op,
    output      logic [7:0]   m_cmd_tag,
    output      logic [47:0]  m_cmd_lba,
    output      logic [15:0]  m_cmd_nlb,
    output      logic [5:0]   m_cmd_txid,
    output      logic [3:0]   m_cmd_flags,
    output      logic [1:0]   m_cmd_attr,
    output      logic [1:0]   m_cmd_prio,
    output      logic [31:0]  m_cmd_dptr,
    output      logic [31:0]  m_cmd_aux,
    input  wire logic         s_cpl_valid,
    output      logic         s_cpl_ready,
    input  wire logic [7:0]   s_cpl_tag,
    input  wire logic [7:0]   s_cpl_status,
    input  wire logic [31:0]  s_cpl_result,
    input  wire logic         s_hrd_valid,        // the core reads host memory (window address, bytes)
    output      logic         s_hrd_ready,
    input  wire logic [31:0]  s_hrd_addr,
    input  wire logic [15:0]  s_hrd_len,
    output      logic         m_hrd_valid,
    input  wire logic         m_hrd_ready,
    output      logic [31:0]  m_hrd_data,
    output      logic         m_hrd_last,
    input  wire logic         s_hwr_valid,        // the core writes host memory (bursts)
    output      logic         s_hwr_ready,
    input  wire logic [31:0]  s_hwr_addr,
    input  wire logic [31:0]  s_hwr_data,
    input  wire logic         s_hwr_last,

    // status and counters
    output      logic         st_rdy,
    output      logic         ev_io_cmd,          // an I/O command (SQE of SQ 1..NQ) enters the command decoder
    output      logic         ev_io_cqe,          // an I/O CQE (CQ 1..NQ) has been written (issued on RQ)
    output      logic [31:0]  cnt_ur,
    output      logic [31:0]  cnt_fetch,
    output      logic [31:0]  cnt_cqe,
    output      logic [31:0]  cnt_cqe_drop,
    output      logic [31:0]  cnt_msi,
    output      logic [31:0]  cnt_msi_fail,
    output      logic [31:0]  cnt_rd_err,
    output      logic [31:0]  cnt_timeout,
    output      logic [31:0]  cnt_late
);
    localparam int IDW = 4;
    localparam logic [IDW-1:0] ID_FETCH = IDW'(0), ID_CQE = IDW'(1), ID_LIST = IDW'(2), ID_RD = IDW'(3),
                               ID_WR = IDW'(4);
    localparam int SLOTS = QDEPTH + 1;
    localparam int SW    = $clog2(SLOTS);
    localparam int OFD   = 8;                       // window reads in flight (origin FIFO)

    if (QDEPTH < 2 || QDEPTH > 32 || (QDEPTH & (QDEPTH - 1)) != 0) begin : g_check_qdepth
        $fatal(1, "ats_nvme: QDEPTH must be a power of two, 2..32 (%m)");
    end

    // ---------------------------------------------------------------- the front end's clock
    // nclk: clk itself, or in the full-system simulation (ATS_SIM_CGATE) a clock that stops while
    // the front end is settled (the gate at the end of this module; rtl/nvme/README.md "Simulation cost")
    logic nclk;
`ifdef ATS_NVME_CGATE
    localparam int CG_ID = 16;                      // +cgate_off bit of this gate
    logic cg_keep;                                  // the gate is held open (+cgate_off): the queue
    initial begin                                   // manager's round-robin pointer in its register form
        int unsigned mask;
        mask = 0;
        void'($value$plusargs("cgate_off=%d", mask));
        cg_keep = mask[CG_ID];
    end
`endif

    // ---------------------------------------------------------------- BAR0 and registers
    logic db_valid, db_ready, db_cq, db_big, en_req, st_cfs, st_dis, ioq_any;
    logic [QW-1:0] db_qid;
    logic [15:0] db_value;
    logic [1:0] cc_shn, st_shst;
    logic [11:0] asqs, acqs;
    logic [63:0] asq, acq;
    logic [31:0] int_mask;

    ats_nvme_bar #(.NQ(NQ), .QSIZE(QSIZE)) u_bar (
        .clk(nclk), .rst,
        .s_axis_cq_tdata, .s_axis_cq_tkeep, .s_axis_cq_tlast, .s_axis_cq_tuser, .s_axis_cq_tvalid, .s_axis_cq_tready,
        .m_axis_cc_tdata, .m_axis_cc_tkeep, .m_axis_cc_tlast, .m_axis_cc_tuser, .m_axis_cc_tvalid, .m_axis_cc_tready,
        .m_db_valid(db_valid), .m_db_ready(db_ready), .m_db_cq(db_cq), .m_db_qid(db_qid), .m_db_value(db_value),
        .m_db_big(db_big), .en_req, .cc_shn, .aqa_asqs(asqs), .aqa_acqs(acqs), .asq_base(asq), .acq_base(acq),
        .int_mask, .st_rdy, .st_cfs, .st_shst, .cnt_ur
    );

    // ---------------------------------------------------------------- the requester and its ports
    logic rreq_valid, rreq_ready, rdat_valid, rdat_ready, rdat_last, rdat_err;
    logic [63:0] rreq_addr, wreq_addr;
    logic [10:0] rreq_ndw, wreq_ndw;
    logic [IDW-1:0] rreq_id, rdat_id, wreq_id, wdone_id;
    logic [31:0] rdat_data, wdat_data;
    logic wreq_valid, wreq_ready, wdat_valid, wdat_ready, wdone, wdone_err;

    ats_nvme_rq #(.TAGS(TAGS), .IDW(IDW), .TIMEOUT(TIMEOUT)) u_rq (
        .clk(nclk), .rst,
        .m_axis_rq_tdata, .m_axis_rq_tkeep, .m_axis_rq_tlast, .m_axis_rq_tuser, .m_axis_rq_tvalid, .m_axis_rq_tready,
        .s_axis_rc_tdata, .s_axis_rc_tkeep, .s_axis_rc_tlast, .s_axis_rc_tuser, .s_axis_rc_tvalid, .s_axis_rc_tready,
        .cfg_max_payload, .cfg_max_read_req, .bme(cfg_function_status[2]), .wr_ur(rq_wr_ur),
        .s_rreq_valid(rreq_valid), .s_rreq_ready(rreq_ready), .s_rreq_addr(rreq_addr), .s_rreq_ndw(rreq_ndw),
        .s_rreq_id(rreq_id),
        .m_rdat_valid(rdat_valid), .m_rdat_ready(rdat_ready), .m_rdat_data(rdat_data), .m_rdat_last(rdat_last),
        .m_rdat_err(rdat_err), .m_rdat_id(rdat_id),
        .s_wreq_valid(wreq_valid), .s_wreq_ready(wreq_ready), .s_wreq_addr(wreq_addr), .s_wreq_ndw(wreq_ndw),
        .s_wreq_id(wreq_id), .s_wdat_valid(wdat_valid), .s_wdat_ready(wdat_ready), .s_wdat_data(wdat_data),
        .m_wdone(wdone), .m_wdone_id(wdone_id), .m_wdone_err(wdone_err),
        .cnt_rd_err, .cnt_timeout, .cnt_late
    );

    // queue manager's and PRP block's DMA ports
    logic qm_rreq_valid, qm_rreq_ready, qm_rdat_ready, qm_wreq_valid, qm_wreq_ready, qm_wdat_valid, qm_wdat_ready;
    logic [63:0] qm_rreq_addr, qm_wreq_addr;
    logic [10:0] qm_rreq_ndw, qm_wreq_ndw;
    logic [IDW-1:0] qm_rreq_id, qm_wreq_id;
    logic [31:0] qm_wdat_data;
    logic pp_rreq_valid, pp_rreq_ready, pp_rdat_ready, pp_wreq_valid, pp_wreq_ready, pp_wdat_valid, pp_wdat_ready;
    logic [63:0] pp_rreq_addr, pp_wreq_addr;
    logic [10:0] pp_rreq_ndw, pp_wreq_ndw;
    logic [IDW-1:0] pp_rreq_id, pp_wreq_id;
    logic [31:0] pp_wdat_data;

    // read port: requests arbitrated, data routed by id (SQE fetches to the queue manager, PRP lists
    // and window reads to the PRP block)
    /* verilator lint_off UNUSEDSIGNAL */
    logic rreq_last, rreq_sel, wreq_last;
    /* verilator lint_on UNUSEDSIGNAL */
    ats_nvme_arb2 #(.W(64 + 11 + IDW)) u_rarb (
        .clk(nclk), .rst,
        .s0_valid(qm_rreq_valid), .s0_ready(qm_rreq_ready), .s0_data({qm_rreq_addr, qm_rreq_ndw, qm_rreq_id}), .s0_last(1'b1),
        .s1_valid(pp_rreq_valid), .s1_ready(pp_rreq_ready), .s1_data({pp_rreq_addr, pp_rreq_ndw, pp_rreq_id}), .s1_last(1'b1),
        .m_valid(rreq_valid), .m_ready(rreq_ready), .m_data({rreq_addr, rreq_ndw, rreq_id}), .m_last(rreq_last),
        .m_sel(rreq_sel)
    );
    assign rdat_ready = rdat_id == ID_FETCH ? qm_rdat_ready : pp_rdat_ready;

    // write port: requests arbitrated; the data of the request granted last (the requester takes the
    // next request only after the last dword of this one)
    logic wreq_sel, wsel_q;
    ats_nvme_arb2 #(.W(64 + 11 + IDW)) u_warb (
        .clk(nclk), .rst,
        .s0_valid(qm_wreq_valid), .s0_ready(qm_wreq_ready), .s0_data({qm_wreq_addr, qm_wreq_ndw, qm_wreq_id}), .s0_last(1'b1),
        .s1_valid(pp_wreq_valid), .s1_ready(pp_wreq_ready), .s1_data({pp_wreq_addr, pp_wreq_ndw, pp_wreq_id}), .s1_last(1'b1),
        .m_valid(wreq_valid), .m_ready(wreq_ready), .m_data({wreq_addr, wreq_ndw, wreq_id}), .m_last(wreq_last),
        .m_sel(wreq_sel)
    );
    always_ff @(posedge nclk) begin
        if (wreq_valid && wreq_ready) wsel_q <= wreq_sel;
        if (rst) wsel_q <= 1'b0;
    end
    logic wsel;                          // the data of the request granted now or last
    assign wsel          = (wreq_valid && wreq_ready) ? wreq_sel : wsel_q;
    assign wdat_valid    = wsel ? pp_wdat_valid : qm_wdat_valid;
    assign wdat_data     = wsel ? pp_wdat_data : qm_wdat_data;
    assign qm_wdat_ready = !wsel && wdat_ready;
    assign pp_wdat_ready = wsel && wdat_ready;

    // ---------------------------------------------------------------- queue manager
    logic sqe_valid, sqe_ready, fetch_ok_io, fetch_ok_adm, m_flush, flush_done;
    logic [511:0] sqe_data;
    logic [QW-1:0] sqe_sqid, sqe_cqid;
    logic [15:0] sqe_sqhd;
    logic [1:0] sqe_prio;
    logic qop_valid, qop_ready, qpen, qien, qrsp_valid, qrsp_ready;
    logic [1:0] qop_op, qop_qprio;
    logic [15:0] qop_qid, qop_qsz, qop_iv;
    logic [63:0] qop_base;
    logic [10:0] qrsp_status;
    logic cqe_valid, cqe_ready, cqe_wr;
    logic [QW-1:0] cqe_cqid, cqe_sqid;
    logic [15:0] cqe_sqhd, cqe_cid;
    logic [14:0] cqe_status;
    logic [31:0] cqe_dw0;
    logic [NQ:0] cq_room;
    logic cmd_idle_q, adm_busy;

    ats_nvme_qm #(.NQ(NQ), .QSIZE(QSIZE), .IDW(IDW), .ID_FETCH(ID_FETCH), .ID_CQE(ID_CQE)) u_qm (
        .clk(nclk), .rst,
`ifdef ATS_NVME_CGATE
        .sim_clk(clk), .sim_reg_rr(cg_keep),
`endif
        .s_db_valid(db_valid), .s_db_ready(db_ready), .s_db_cq(db_cq), .s_db_qid(db_qid), .s_db_value(db_value),
        .s_db_big(db_big), .en_req, .cc_shn, .aqa_asqs(asqs), .aqa_acqs(acqs), .asq_base(asq), .acq_base(acq),
        .int_mask, .st_rdy, .st_cfs, .st_shst, .st_dis, .ioq_any,
        .m_sqe_valid(sqe_valid), .m_sqe_ready(sqe_ready), .m_sqe_data(sqe_data), .m_sqe_sqid(sqe_sqid),
        .m_sqe_cqid(sqe_cqid), .m_sqe_sqhd(sqe_sqhd), .m_sqe_prio(sqe_prio),
        .fetch_ok_io, .fetch_ok_adm, .cmd_idle(cmd_idle_q), .m_flush, .s_flush_done(flush_done),
        .s_qop_valid(qop_valid), .s_qop_ready(qop_ready), .s_qop_op(qop_op), .s_qop_qid(qop_qid),
        .s_qop_qsz(qop_qsz), .s_qop_base(qop_base), .s_qop_pc(qpen), .s_qop_ien(qien), .s_qop_iv(qop_iv),
        .s_qop_qprio(qop_qprio), .m_qrsp_valid(qrsp_valid), .m_qrsp_ready(qrsp_ready), .m_qrsp_status(qrsp_status),
        .s_cqe_valid(cqe_valid), .s_cqe_ready(cqe_ready), .s_cqe_cqid(cqe_cqid), .s_cqe_sqid(cqe_sqid),
        .s_cqe_sqhd(cqe_sqhd), .s_cqe_cid(cqe_cid), .s_cqe_status(cqe_status), .s_cqe_dw0(cqe_dw0), .cq_room,
        .s_cqe_wr(cqe_wr),
        .m_rreq_valid(qm_rreq_valid), .m_rreq_ready(qm_rreq_ready), .m_rreq_addr(qm_rreq_addr),
        .m_rreq_ndw(qm_rreq_ndw), .m_rreq_id(qm_rreq_id),
        .s_rdat_valid(rdat_valid && rdat_id == ID_FETCH), .s_rdat_ready(qm_rdat_ready), .s_rdat_data(rdat_data),
        .s_rdat_last(rdat_last), .s_rdat_err(rdat_err),
        .m_wreq_valid(qm_wreq_valid), .m_wreq_ready(qm_wreq_ready), .m_wreq_addr(qm_wreq_addr),
        .m_wreq_ndw(qm_wreq_ndw), .m_wreq_id(qm_wreq_id), .m_wdat_valid(qm_wdat_valid),
        .m_wdat_ready(qm_wdat_ready), .m_wdat_data(qm_wdat_data),
        .s_wdone(wdone && wdone_id == ID_CQE), .s_wdone_err(wdone_err),
        .cfg_interrupt_msi_enable, .cfg_interrupt_msi_mmenable, .cfg_interrupt_msi_int,
        .cfg_interrupt_msi_sent, .cfg_interrupt_msi_fail,
        .cnt_fetch, .cnt_cqe, .cnt_cqe_drop, .cnt_msi, .cnt_msi_fail
    );

    // ---------------------------------------------------------------- PRP block
    logic set_valid, set_ready, setr_valid, setr_ready;
    logic [SW-1:0] set_slot, setr_slot;
    logic [63:0] set_prp1, set_prp2;
    logic [16:0] set_len;
    logic [1:0] setr_status;
    logic wrd_valid, wrd_ready, wrdo_valid, wrdo_ready, wrdo_last, wrdo_err;
    logic [31:0] wrd_addr, wrdo_data;
    logic [15:0] wrd_len;
    logic wwr_valid, wwr_ready, wwr_last;
    logic [31:0] wwr_addr, wwr_data;
    logic [SLOTS-1:0] slot_err;
    logic [7:0] wr_acc, wr_done;

    ats_nvme_prp #(.SLOTS(SLOTS), .IDW(IDW), .ID_LIST(ID_LIST), .ID_RD(ID_RD), .ID_WR(ID_WR), .WCHUNK(WCHUNK)) u_prp (
        .clk(nclk), .rst,
        .s_set_valid(set_valid), .s_set_ready(set_ready), .s_set_slot(set_slot), .s_set_prp1(set_prp1),
        .s_set_prp2(set_prp2), .s_set_len(set_len),
        .m_setr_valid(setr_valid), .m_setr_ready(setr_ready), .m_setr_slot(setr_slot), .m_setr_status(setr_status),
        .s_wrd_valid(wrd_valid), .s_wrd_ready(wrd_ready), .s_wrd_addr(wrd_addr), .s_wrd_len(wrd_len),
        .m_wrd_valid(wrdo_valid), .m_wrd_ready(wrdo_ready), .m_wrd_data(wrdo_data), .m_wrd_last(wrdo_last),
        .m_wrd_err(wrdo_err),
        .s_wwr_valid(wwr_valid), .s_wwr_ready(wwr_ready), .s_wwr_addr(wwr_addr), .s_wwr_data(wwr_data),
        .s_wwr_last(wwr_last),
        .slot_err, .wr_acc, .wr_done,
        .m_rreq_valid(pp_rreq_valid), .m_rreq_ready(pp_rreq_ready), .m_rreq_addr(pp_rreq_addr),
        .m_rreq_ndw(pp_rreq_ndw), .m_rreq_id(pp_rreq_id),
        .s_rdat_valid(rdat_valid && rdat_id != ID_FETCH), .s_rdat_ready(pp_rdat_ready), .s_rdat_data(rdat_data),
        .s_rdat_last(rdat_last), .s_rdat_err(rdat_err), .s_rdat_id(rdat_id),
        .m_wreq_valid(pp_wreq_valid), .m_wreq_ready(pp_wreq_ready), .m_wreq_addr(pp_wreq_addr),
        .m_wreq_ndw(pp_wreq_ndw), .m_wreq_id(pp_wreq_id), .m_wdat_valid(pp_wdat_valid),
        .m_wdat_ready(pp_wdat_ready), .m_wdat_data(pp_wdat_data),
        .s_wdone(wdone && wdone_id == ID_WR), .s_wdone_err(wdone_err)
    );

    // ---------------------------------------------------------------- command decoder and admin
    logic adm_valid, adm_ready, vwc, smart_rd, smart_wr;
    logic [511:0] adm_data;
    logic [15:0] adm_sqhd;
    logic [NQ:0] sq_busy;
    logic [16:0] smart_bytes;
    // cmd's and admin's PRP setups, window reads / writes, descriptors, CQE requests
    logic c_set_valid, c_set_ready, c_setr_ready, c_lrd_valid, c_lrd_ready, c_lrdo_valid, c_lrdo_ready;
    logic [SW-1:0] c_set_slot, a_set_slot;
    logic [63:0] c_set_prp1, c_set_prp2, a_set_prp1, a_set_prp2;
    logic [16:0] c_set_len, a_set_len;
    logic [31:0] c_lrd_addr;
    logic [15:0] c_lrd_len;
    logic a_set_valid, a_set_ready, a_setr_ready;
    logic a_wwr_valid, a_wwr_ready, a_wwr_last;
    logic [31:0] a_wwr_addr, a_wwr_data;
    logic c_cmd_valid, c_cmd_ready, a_cmd_valid, a_cmd_ready;
    logic [3:0] c_cmd_op, c_cmd_flags, a_cmd_op;
    logic [7:0] c_cmd_tag, a_cmd_tag, a_cmd_lba;
    logic [47:0] c_cmd_lba;
    logic [15:0] c_cmd_nlb;
    logic [5:0] c_cmd_txid;
    logic [1:0] c_cmd_attr, c_cmd_prio;
    logic [31:0] c_cmd_dptr, c_cmd_aux, a_cmd_dptr, a_cmd_aux;
    logic a_cmd_nlb;
    logic c_cqe_valid, c_cqe_ready, a_cqe_valid, a_cqe_ready;
    logic [QW-1:0] c_cqe_cqid, c_cqe_sqid;
    logic [15:0] c_cqe_sqhd, c_cqe_cid, a_cqe_sqhd, a_cqe_cid;
    logic [14:0] c_cqe_status, a_cqe_status;
    logic [31:0] c_cqe_dw0, a_cqe_dw0;
    logic cpl_adm, c_cpl_ready, lwr_valid, lwr_ready;
    logic cmd_idle_c;

    ats_nvme_cmd #(.NQ(NQ), .QDEPTH(QDEPTH), .PAGE_BYTES(PAGE_BYTES), .SHUT_CKPT(SHUT_CKPT), .NUM_TX(NUM_TX),
                   .TX_ENTRIES(TX_ENTRIES), .STX(STX), .ATX(ATX), .NUM_LBAS(NUM_LBAS)) u_cmd (
        .clk(nclk), .rst,
        .s_sqe_valid(sqe_valid), .s_sqe_ready(sqe_ready), .s_sqe_data(sqe_data), .s_sqe_sqid(sqe_sqid),
        .s_sqe_cqid(sqe_cqid), .s_sqe_sqhd(sqe_sqhd), .s_sqe_prio(sqe_prio),
        .fetch_ok_io, .fetch_ok_adm, .cmd_idle(cmd_idle_c), .vwc, .disabling(st_dis), .m_flush,
        .s_flush_done(flush_done),
        .m_adm_valid(adm_valid), .m_adm_ready(adm_ready), .m_adm_data(adm_data), .m_adm_sqhd(adm_sqhd),
        .adm_busy, .sq_busy, .smart_rd, .smart_wr, .smart_bytes,
        .m_set_valid(c_set_valid), .m_set_ready(c_set_ready), .m_set_slot(c_set_slot), .m_set_prp1(c_set_prp1),
        .m_set_prp2(c_set_prp2), .m_set_len(c_set_len),
        .s_setr_valid(setr_valid && setr_slot != SW'(QDEPTH)), .s_setr_ready(c_setr_ready), .s_setr_status(setr_status),
        .m_lrd_valid(c_lrd_valid), .m_lrd_ready(c_lrd_ready), .m_lrd_addr(c_lrd_addr), .m_lrd_len(c_lrd_len),
        .s_lrd_valid(c_lrdo_valid), .s_lrd_ready(c_lrdo_ready), .s_lrd_data(wrdo_data), .s_lrd_last(wrdo_last),
        .s_lrd_err(wrdo_err),
        .slot_err, .wr_acc, .wr_done,
        .m_cmd_valid(c_cmd_valid), .m_cmd_ready(c_cmd_ready), .m_cmd_op(c_cmd_op), .m_cmd_tag(c_cmd_tag),
        .m_cmd_lba(c_cmd_lba), .m_cmd_nlb(c_cmd_nlb), .m_cmd_txid(c_cmd_txid), .m_cmd_flags(c_cmd_flags),
        .m_cmd_attr(c_cmd_attr), .m_cmd_prio(c_cmd_prio), .m_cmd_dptr(c_cmd_dptr), .m_cmd_aux(c_cmd_aux),
        .s_cpl_valid(s_cpl_valid && !cpl_adm), .s_cpl_ready(c_cpl_ready), .s_cpl_tag, .s_cpl_status, .s_cpl_result,
        .m_cqe_valid(c_cqe_valid), .m_cqe_ready(c_cqe_ready), .m_cqe_cqid(c_cqe_cqid), .m_cqe_sqid(c_cqe_sqid),
        .m_cqe_sqhd(c_cqe_sqhd), .m_cqe_cid(c_cqe_cid), .m_cqe_status(c_cqe_status), .m_cqe_dw0(c_cqe_dw0),
        .cq_room
    );

    ats_nvme_admin #(.NQ(NQ), .QDEPTH(QDEPTH), .PAGE_BYTES(PAGE_BYTES), .NUM_LBAS(NUM_LBAS), .VID(VID), .FR(FR),
                     .NUM_TX(NUM_TX), .TX_ENTRIES(TX_ENTRIES), .STX(STX), .ATX(ATX)) u_adm (
        .clk(nclk), .rst,
        .s_adm_valid(adm_valid), .s_adm_ready(adm_ready), .s_adm_data(adm_data), .s_adm_sqhd(adm_sqhd),
        .adm_busy, .st_rdy, .st_dis, .ioq_any, .sq_busy, .vwc,
        .m_qop_valid(qop_valid), .m_qop_ready(qop_ready), .m_qop_op(qop_op), .m_qop_qid(qop_qid),
        .m_qop_qsz(qop_qsz), .m_qop_base(qop_base), .m_qop_pc(qpen), .m_qop_ien(qien), .m_qop_iv(qop_iv),
        .m_qop_qprio(qop_qprio), .s_qrsp_valid(qrsp_valid), .s_qrsp_ready(qrsp_ready), .s_qrsp_status(qrsp_status),
        .m_set_valid(a_set_valid), .m_set_ready(a_set_ready), .m_set_slot(a_set_slot), .m_set_prp1(a_set_prp1),
        .m_set_prp2(a_set_prp2), .m_set_len(a_set_len),
        .s_setr_valid(setr_valid && setr_slot == SW'(QDEPTH)), .s_setr_ready(a_setr_ready), .s_setr_status(setr_status),
        .m_wwr_valid(a_wwr_valid), .m_wwr_ready(a_wwr_ready), .m_wwr_addr(a_wwr_addr), .m_wwr_data(a_wwr_data),
        .m_wwr_last(a_wwr_last),
        .slot_err(slot_err[QDEPTH]), .wr_acc, .wr_done,
        .m_cmd_valid(a_cmd_valid), .m_cmd_ready(a_cmd_ready), .m_cmd_op(a_cmd_op), .m_cmd_tag(a_cmd_tag),
        .m_cmd_lba(a_cmd_lba), .m_cmd_nlb(a_cmd_nlb), .m_cmd_dptr(a_cmd_dptr), .m_cmd_aux(a_cmd_aux),
        .s_lwr_valid(lwr_valid), .s_lwr_ready(lwr_ready), .s_lwr_data(s_hwr_data),
        .s_cpl_valid(s_cpl_valid && cpl_adm), .s_cpl_status, .s_cpl_result,
        .smart_rd, .smart_wr, .smart_bytes,
        .m_cqe_valid(a_cqe_valid), .m_cqe_ready(a_cqe_ready), .m_cqe_sqhd(a_cqe_sqhd), .m_cqe_cid(a_cqe_cid),
        .m_cqe_status(a_cqe_status), .m_cqe_dw0(a_cqe_dw0), .cq_room(cq_room[0])
    );
    // the queue manager ends a disable only once the admin block is idle too
    assign cmd_idle_q = cmd_idle_c && !adm_busy;

    // completions: tag QDEPTH is the admin block's firmware request
    assign cpl_adm     = s_cpl_tag == 8'(QDEPTH);
    assign s_cpl_ready = cpl_adm ? 1'b1 : c_cpl_ready;

    // PRP setups: cmd and admin; the answer by slot
    logic set_sel;
    /* verilator lint_off UNUSEDSIGNAL */
    logic set_last;
    /* verilator lint_on UNUSEDSIGNAL */
    ats_nvme_arb2 #(.W(SW + 64 + 64 + 17)) u_sarb (
        .clk(nclk), .rst,
        .s0_valid(c_set_valid), .s0_ready(c_set_ready), .s0_data({c_set_slot, c_set_prp1, c_set_prp2, c_set_len}), .s0_last(1'b1),
        .s1_valid(a_set_valid), .s1_ready(a_set_ready), .s1_data({a_set_slot, a_set_prp1, a_set_prp2, a_set_len}), .s1_last(1'b1),
        .m_valid(set_valid), .m_ready(set_ready), .m_data({set_slot, set_prp1, set_prp2, set_len}), .m_last(set_last),
        .m_sel(set_sel)
    );
    assign setr_ready = setr_slot == SW'(QDEPTH) ? a_setr_ready : c_setr_ready;

    // window reads: the core's and cmd's range lists; the answers in request order (origin FIFO)
    logic core_rd_valid, core_rd_ready, lrd_arb_ready, rd_sel;
    logic of_q [OFD];                               // 1: cmd's range list
    logic [$clog2(OFD):0] of_n_q;
    logic [$clog2(OFD)-1:0] of_wr_q, of_rd_q;
    logic of_full, of_push, of_pop, of_head;
    /* verilator lint_off UNUSEDSIGNAL */
    logic rd_last;
    /* verilator lint_on UNUSEDSIGNAL */
    assign of_full = of_n_q == ($clog2(OFD) + 1)'(OFD);
    ats_nvme_arb2 #(.W(48)) u_rdarb (
        .clk(nclk), .rst,
        .s0_valid(s_hrd_valid && !of_full), .s0_ready(core_rd_ready), .s0_data({s_hrd_addr, s_hrd_len}), .s0_last(1'b1),
        .s1_valid(c_lrd_valid && !of_full), .s1_ready(lrd_arb_ready), .s1_data({c_lrd_addr, c_lrd_len}), .s1_last(1'b1),
        .m_valid(core_rd_valid), .m_ready(wrd_ready), .m_data({wrd_addr, wrd_len}), .m_last(rd_last),
        .m_sel(rd_sel)
    );
    // a full origin FIFO takes nothing: the ready of an input is gated like its valid
    assign s_hrd_ready = core_rd_ready && !of_full;
    assign c_lrd_ready = lrd_arb_ready && !of_full;
    assign wrd_valid   = core_rd_valid;
    assign of_push     = wrd_valid && wrd_ready;
    assign of_head     = of_q[of_rd_q];
    assign m_hrd_valid  = wrdo_valid && of_n_q != '0 && !of_head;
    assign c_lrdo_valid = wrdo_valid && of_n_q != '0 && of_head;
    assign m_hrd_data   = wrdo_data;
    assign m_hrd_last   = wrdo_last;
    assign wrdo_ready   = of_n_q != '0 && (of_head ? c_lrdo_ready : m_hrd_ready);
    assign of_pop       = wrdo_valid && wrdo_ready && wrdo_last;
    always_ff @(posedge nclk) begin
        if (of_push) begin
            of_q[of_wr_q] <= rd_sel;
            of_wr_q <= of_wr_q + 1'b1;
        end
        if (of_pop) of_rd_q <= of_rd_q + 1'b1;
        of_n_q <= of_n_q + ($clog2(OFD) + 1)'(of_push) - ($clog2(OFD) + 1)'(of_pop);
        if (rst) begin
            of_wr_q <= '0; of_rd_q <= '0; of_n_q <= '0;
        end
    end

    // window writes: the core's bursts (those at bit 31 to the admin block) and the admin block's
    logic core_local, core_wr_ready, wwr_sel;
    assign core_local  = s_hwr_addr[31];
    assign lwr_valid   = s_hwr_valid && core_local;
    assign s_hwr_ready = core_local ? lwr_ready : core_wr_ready;
    ats_nvme_arb2 #(.W(64), .BURST(1'b1)) u_wwarb (
        .clk(nclk), .rst,
        .s0_valid(s_hwr_valid && !core_local), .s0_ready(core_wr_ready), .s0_data({s_hwr_addr, s_hwr_data}),
        .s0_last(s_hwr_last),
        .s1_valid(a_wwr_valid), .s1_ready(a_wwr_ready), .s1_data({a_wwr_addr, a_wwr_data}), .s1_last(a_wwr_last),
        .m_valid(wwr_valid), .m_ready(wwr_ready), .m_data({wwr_addr, wwr_data}), .m_last(wwr_last),
        .m_sel(wwr_sel)
    );

    // descriptors: cmd's and the admin block's firmware requests (FEATURE's lba, nlb and aux from the
    // admin block's low bits, their upper bits and every other field 0)
    logic cmd_sel;
    /* verilator lint_off UNUSEDSIGNAL */
    logic cmd_last;
    /* verilator lint_on UNUSEDSIGNAL */
    ats_nvme_arb2 #(.W(4 + 8 + 48 + 16 + 6 + 4 + 2 + 2 + 32 + 32)) u_carb (
        .clk(nclk), .rst,
        .s0_valid(c_cmd_valid), .s0_ready(c_cmd_ready),
        .s0_data({c_cmd_op, c_cmd_tag, c_cmd_lba, c_cmd_nlb, c_cmd_txid, c_cmd_flags, c_cmd_attr, c_cmd_prio,
                  c_cmd_dptr, c_cmd_aux}), .s0_last(1'b1),
        .s1_valid(a_cmd_valid), .s1_ready(a_cmd_ready),
        .s1_data({a_cmd_op, a_cmd_tag, 40'd0, a_cmd_lba, 15'd0, a_cmd_nlb, 6'd0, 4'd0, 2'd0, 2'd0, a_cmd_dptr,
                  a_cmd_aux}), .s1_last(1'b1),
        .m_valid(m_cmd_valid), .m_ready(m_cmd_ready),
        .m_data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio,
                 m_cmd_dptr, m_cmd_aux}), .m_last(cmd_last),
        .m_sel(cmd_sel)
    );

    // CQE requests: cmd's and the admin block's (CQ 0). Both producers' valids are registers and
    // the choice depends only on them: cq_room's contract holds.
    logic cqe_sel;
    /* verilator lint_off UNUSEDSIGNAL */
    logic cqe_last;
    /* verilator lint_on UNUSEDSIGNAL */
    ats_nvme_arb2 #(.W(2 * QW + 16 + 16 + 15 + 32)) u_qarb (
        .clk(nclk), .rst,
        .s0_valid(c_cqe_valid), .s0_ready(c_cqe_ready),
        .s0_data({c_cqe_cqid, c_cqe_sqid, c_cqe_sqhd, c_cqe_cid, c_cqe_status, c_cqe_dw0}), .s0_last(1'b1),
        .s1_valid(a_cqe_valid), .s1_ready(a_cqe_ready),
        .s1_data({QW'(0), QW'(0), a_cqe_sqhd, a_cqe_cid, a_cqe_status, a_cqe_dw0}), .s1_last(1'b1),
        .m_valid(cqe_valid), .m_ready(cqe_ready),
        .m_data({cqe_cqid, cqe_sqid, cqe_sqhd, cqe_cid, cqe_status, cqe_dw0}), .m_last(cqe_last),
        .m_sel(cqe_sel)
    );

    // I/O command and completion events (the full-system simulation's power cuts by command count)
    assign ev_io_cmd = sqe_valid && sqe_ready && sqe_sqid != QW'(0);
    assign ev_io_cqe = cqe_valid && cqe_ready && cqe_wr && cqe_cqid != QW'(0);

    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    assign unused = ^{set_sel, cmd_sel, cqe_sel, wwr_sel};
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- simulation-only clock gate
    // (issue 35; rtl/common/ats_sim_cgate.sv, rtl/nvme/README.md "Simulation cost") The whole front
    // end takes nclk. It runs while a block is busy (each block's sim_busy: an FSM off its idle
    // state, a stream beat on offer, a FIFO not empty, a read tag in use with its completion timeout
    // counting, a command slot in use), while a valid is up on one of the front end's input ports,
    // when any input changes, and for HOLD edges after the last of these. The queue manager's
    // round-robin pointer, the one register that turns in every idle cycle, is computed from a phase
    // counter on clk instead (ats_nvme_qm, sim_clk), so a settled front end keeps every register at
    // an edge it misses and the gated build gives the same cycles as the ungated one
    // (tests/system/test_sim_cgate.py, bench/sim).
`ifdef ATS_NVME_CGATE
    // The decision is taken once a cycle at the falling edge (ats_sim_cgate FALL): the busy signals
    // and the core's outputs, which change only at rising edges, are evaluated then, once a cycle,
    // instead of at every evaluation (their cone was in Verilator's input-combinational region with
    // the latch form's enable; bench/sim/README.md "The NVMe build's per-cycle cost").
    // Inputs the harness drives while the clock is low (the PCIe side) reach the clock through a
    // latch open while clk is low (cg_lact_l: their valids and any change of the other fields,
    // compared with their value at the previous rising edge), and into the hold at the next falling
    // edge (cg_lact_q: cg_lact as the rising edge took it; no input in `act`, whose cone would else be
    // evaluated at every evaluation again): the same edges as the latch form.
    // Not watched: the payloads of CQ and RC (tdata, tkeep, tlast, tuser), which the front end
    // reads only with their tvalid (ats_nvme_bar in S_IDLE / S_DRAIN, ats_nvme_rq at an RC
    // handshake); a tvalid that is up keeps the clock running (act).
    logic [43:0] cg_pcie, cg_pcie_q;
    logic        cg_lact, cg_lact_l, cg_lact_q, cg_gclk;
    assign cg_pcie = {s_axis_cq_tvalid, m_axis_cc_tready, m_axis_rq_tready, s_axis_rc_tvalid, rq_wr_ur,
                      cfg_max_payload, cfg_max_read_req, cfg_function_status, cfg_interrupt_msi_enable,
                      cfg_interrupt_msi_mmenable, cfg_interrupt_msi_sent, cfg_interrupt_msi_fail};
    assign cg_lact = s_axis_cq_tvalid || s_axis_rc_tvalid || cfg_interrupt_msi_sent || cfg_interrupt_msi_fail ||
                     cg_pcie != cg_pcie_q;
    always_ff @(posedge clk) begin
        cg_pcie_q <= cg_pcie;
        cg_lact_q <= cg_lact;
    end
    always_latch begin
        if (!clk) cg_lact_l = cg_lact;
    end
    // the core's outputs (registers of the core's blocks: they change at rising edges)
    ats_sim_cgate #(.W(22 + 32 + 32 + 16 + 32 + 32), .HOLD(32), .ID(CG_ID), .FALL(1)) u_cg_nvme (
        .clk, .rst, .gclk(cg_gclk),
        .watch({m_cmd_ready, s_cpl_valid, s_cpl_tag, s_cpl_status, s_hrd_valid, m_hrd_ready, s_hwr_valid,
                s_hwr_last, s_cpl_result, s_hrd_addr, s_hrd_len, s_hwr_addr, s_hwr_data}),
        .act(cg_lact_q || u_bar.sim_busy || u_rq.sim_busy || u_qm.sim_busy || u_prp.sim_busy ||
             u_cmd.sim_busy || u_adm.sim_busy || of_n_q != '0 || s_cpl_valid || s_hrd_valid || s_hwr_valid));
    assign nclk = cg_gclk || (clk && cg_lact_l);
`else
    assign nclk = clk;
`endif
endmodule

`resetall
