// SPDX-License-Identifier: Apache-2.0
// ats_nvme_qm: the NVMe queue manager (docs/host-interface.md §1.2, §1.3; rtl/nvme/README.md).
//
// Owns the SQ and CQ tables (queue 0 = the admin pair, 1..NQ = I/O), the controller state behind
// CSTS (enable, disable, shutdown, fatal), SQE fetch and CQE posting with MSIs:
//   - doorbells (from ats_nvme_regs): checked against the tables; an invalid one (queue missing,
//     value >= its size or above 16 bits, a CQ head passing the tail) sets the fatal state (CSTS.CFS):
//     nothing more is fetched until the controller is disabled. Ignored while not ready;
//   - fetch: one SQE at a time, round robin over the SQs with entries (one candidate a cycle), an
//     I/O SQ only while `fetch_ok_io` (a command slot is free), any SQ only while `fetch_ok_adm`
//     (no admin command is running); the SQE (16 dwords read on the DMA read port) goes out on m_sqe
//     with its SQ id, CQ id, the SQ head after the fetch and the SQ's priority. A fetch that ends in
//     a DMA error sets the fatal state;
//   - CQE posting: a request on s_cqe is written at the tail of its CQ (4 dwords on the DMA write
//     port) and is acknowledged (s_cqe_ready) only after the write was issued (m_wdone), so the producer
//     frees its command slot after the CQE is on its way. Then the tail moves (the phase flips at the
//     wrap) and, with IEN, the CQ's vector (IV modulo the MSI vectors allocated) is marked pending.
//     `cq_room[q]` tells the producer which CQs can take a CQE now (a CQ that does not exist counts
//     as room: its CQEs are dropped), counting the request presented or being written: a producer
//     presents only completions whose CQ has room (it may pick the next one while the current one
//     is presented), so a full CQ holds back its own completions and the others go on. cq_room
//     depends combinationally on s_cqe_valid / s_cqe_cqid: the producer's pick must be registered
//     (its valid never a function of cq_room in the same cycle). A request for a full CQ is held (not dropped) until the host frees an entry;
//     a CQE write that fails (`s_wdone_err`: the root port refused it, rq's `wr_ur`, e.g. a CQ outside
//     host memory; or no bus mastering) sets the fatal state (CSTS.CFS). Its CQE is not in host
//     memory: `s_cqe_wr` is 0 with its acknowledgement and it counts in cnt_cqe_drop, not cnt_cqe;
//     otherwise the queue moves on as after a written CQE (the reference model's order: the tail
//     and phase move, the MSI is marked pending), so the host sees CFS and resets the controller;
//   - MSI: pending vectors not masked by INTMS are sent one at a time, lowest first, as a one-cycle
//     pulse of cfg_interrupt_msi_int, waiting for sent / fail (a failed one is pending again). A
//     vector marked again while pending is one MSI. Nothing is sent while MSI is disabled;
//   - queue operations (s_qop, from the admin commands): create / delete CQ and SQ with the checks
//     of §1.6 in the reference model's order: QID range, exists (create) or missing (delete), size,
//     PC, then IV (CQ) or CQID (SQ); a CQ with an SQ attached cannot be deleted;
//   - enable: EN with a valid CC (`en_req`) loads the admin pair from AQA/ASQ/ACQ (heads and tails 0,
//     phase 1) and sets RDY; disable (EN 1 -> 0): no more fetches, CQE requests are acknowledged and
//     dropped, and once the fetch is idle and `cmd_idle`, every queue is deleted, MSIs pending are
//     dropped, RDY and the fatal state clear; shutdown (SHN != 0 while ready): SHST = 1, no more
//     fetches, once idle one FLUSH is asked for (m_flush until s_flush_done), then SHST = 2.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_qm #(
    parameter int NQ       = 4,
    parameter int QSIZE    = 256,
    parameter int QW       = $clog2(NQ + 1),
    parameter int IDW      = 4,
    parameter logic [IDW-1:0] ID_FETCH = IDW'(0),   // DMA read id of SQE fetches
    parameter logic [IDW-1:0] ID_CQE   = IDW'(1)    // DMA write id of CQE writes
) (
    input  wire logic         clk,
    input  wire logic         rst,
`ifdef ATS_NVME_CGATE
    // simulation only (the front end's clock gate, ats_nvme): the ungated clock, and 1 when `clk`
    // runs on every edge (+cgate_off): the round-robin pointer's register form (below)
    input  wire logic         sim_clk,
    input  wire logic         sim_reg_rr,
`endif

    // doorbell events and configuration (ats_nvme_regs)
    input  wire logic         s_db_valid,
    output      logic         s_db_ready,
    input  wire logic         s_db_cq,
    input  wire logic [QW-1:0] s_db_qid,
    input  wire logic [15:0]  s_db_value,
    input  wire logic         s_db_big,
    input  wire logic         en_req,
    input  wire logic [1:0]   cc_shn,
    input  wire logic [11:0]  aqa_asqs,
    input  wire logic [11:0]  aqa_acqs,
    /* verilator lint_off UNUSEDSIGNAL */      // bases: bits 11:0 are 0 (page aligned)
    input  wire logic [63:0]  asq_base,
    input  wire logic [63:0]  acq_base,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [31:0]  int_mask,
    output      logic         st_rdy,
    output      logic         st_cfs,
    output      logic [1:0]   st_shst,
    output      logic         st_dis,            // a disable (CC.EN 1 -> 0) is under way
    output      logic         ioq_any,           // an I/O SQ or CQ exists

    // fetched SQEs
    output      logic         m_sqe_valid,
    input  wire logic         m_sqe_ready,
    output      logic [511:0] m_sqe_data,
    output      logic [QW-1:0] m_sqe_sqid,
    output      logic [QW-1:0] m_sqe_cqid,
    output      logic [15:0]  m_sqe_sqhd,
    output      logic [1:0]   m_sqe_prio,
    input  wire logic         fetch_ok_io,
    input  wire logic         fetch_ok_adm,
    input  wire logic         cmd_idle,          // no command fetched and not yet completed
    output      logic         m_flush,           // shutdown: one FLUSH, please
    input  wire logic         s_flush_done,

    // queue operations
    input  wire logic         s_qop_valid,
    output      logic         s_qop_ready,
    input  wire logic [1:0]   s_qop_op,          // 0 create CQ, 1 create SQ, 2 delete CQ, 3 delete SQ
    input  wire logic [15:0]  s_qop_qid,
    input  wire logic [15:0]  s_qop_qsz,         // size - 1 (CDW10[31:16])
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [63:0]  s_qop_base,        // PRP1: its offset is ignored
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic         s_qop_pc,
    input  wire logic         s_qop_ien,
    input  wire logic [15:0]  s_qop_iv,          // CQ: interrupt vector; SQ: CQID
    input  wire logic [1:0]   s_qop_qprio,
    output      logic         m_qrsp_valid,
    input  wire logic         m_qrsp_ready,
    output      logic [10:0]  m_qrsp_status,     // {SCT, SC}; 0 = success

    // completion requests
    input  wire logic         s_cqe_valid,
    output      logic         s_cqe_ready,
    input  wire logic [QW-1:0] s_cqe_cqid,
    input  wire logic [QW-1:0] s_cqe_sqid,
    input  wire logic [15:0]  s_cqe_sqhd,
    input  wire logic [15:0]  s_cqe_cid,
    input  wire logic [14:0]  s_cqe_status,      // CQE DW3[31:17]: DNR, M, CRD, SCT, SC
    input  wire logic [31:0]  s_cqe_dw0,
    output      logic [NQ:0]  cq_room,           // the CQ can take a CQE (or does not exist)
    output      logic         s_cqe_wr,          // with s_cqe_ready: the request's CQE was written (not dropped)

    // DMA (ats_nvme_rq, through the top's arbiters)
    output      logic         m_rreq_valid,
    input  wire logic         m_rreq_ready,
    output      logic [63:0]  m_rreq_addr,
    output      logic [10:0]  m_rreq_ndw,
    output      logic [IDW-1:0] m_rreq_id,
    input  wire logic         s_rdat_valid,
    output      logic         s_rdat_ready,
    input  wire logic [31:0]  s_rdat_data,
    input  wire logic         s_rdat_last,
    input  wire logic         s_rdat_err,
    output      logic         m_wreq_valid,
    input  wire logic         m_wreq_ready,
    output      logic [63:0]  m_wreq_addr,
    output      logic [10:0]  m_wreq_ndw,
    output      logic [IDW-1:0] m_wreq_id,
    output      logic         m_wdat_valid,
    input  wire logic         m_wdat_ready,
    output      logic [31:0]  m_wdat_data,
    input  wire logic         s_wdone,           // a write of id ID_CQE was issued
    input  wire logic         s_wdone_err,       // with s_wdone: the CQE write failed (refused, no bus mastering): CFS

    // MSI (UltraScale+ hard IP, PF0)
    /* verilator lint_off UNUSEDSIGNAL */      // PF0's bits only
    input  wire logic [3:0]   cfg_interrupt_msi_enable,
    input  wire logic [11:0]  cfg_interrupt_msi_mmenable,
    /* verilator lint_on UNUSEDSIGNAL */
    output      logic [31:0]  cfg_interrupt_msi_int,
    input  wire logic         cfg_interrupt_msi_sent,
    input  wire logic         cfg_interrupt_msi_fail,

    output      logic [31:0]  cnt_fetch,
    output      logic [31:0]  cnt_cqe,
    output      logic [31:0]  cnt_cqe_drop,      // acknowledged without a CQE in host memory (disabled, no CQ, write failed)
    output      logic [31:0]  cnt_msi,
    output      logic [31:0]  cnt_msi_fail
);
    localparam int NQT = NQ + 1;

    initial begin
        if (NQ < 1 || NQ > 31) $error("ats_nvme_qm: NQ must be 1..31");
        if (QSIZE < 2 || QSIZE > 4096) $error("ats_nvme_qm: QSIZE must be 2..4096");
    end

    // ---------------------------------------------------------------- tables
    logic [NQT-1:0] sq_en, cq_en, cq_ien, cq_phase;
    logic [63:12]   sq_base [NQT], cq_base [NQT];
    logic [11:0]    sq_szm1 [NQT], cq_szm1 [NQT];          // size - 1
    logic [11:0]    sq_head [NQT], sq_tail [NQT], cq_head [NQT], cq_tail [NQT];
    logic [QW-1:0]  sq_cqid [NQT];
    logic [1:0]     sq_prio [NQT];
    logic [4:0]     cq_iv [NQT];

    function automatic logic [11:0] inc(input logic [11:0] v, input logic [11:0] szm1);
        inc = (v == szm1) ? 12'd0 : v + 12'd1;
    endfunction
    // distance from a to b going forward in a queue of szm1 + 1 entries
    function automatic logic [12:0] qdist(input logic [11:0] a, input logic [11:0] b, input logic [11:0] szm1);
        qdist = (b >= a) ? {1'b0, b - a} : {1'b0, b} + {1'b0, szm1} + 13'd1 - {1'b0, a};
    endfunction

    // ---------------------------------------------------------------- controller state
    typedef enum logic [2:0] {C_OFF, C_RDY, C_DIS, C_SHUT1, C_SHUT2, C_SHUTDONE} ctl_e;
    ctl_e c_q;
    logic fatal_q;
    logic live;                 // queues exist and doorbells count
    assign live = c_q == C_RDY || c_q == C_SHUT1 || c_q == C_SHUT2 || c_q == C_SHUTDONE;

    // ---------------------------------------------------------------- fetch
    typedef enum logic [1:0] {F_IDLE, F_REQ, F_DATA, F_OUT} fst_e;
    fst_e f_q;
    logic [QW-1:0] rr_q, f_sq_q;
    logic [3:0]    f_n_q;
    logic          f_err_q;
    logic          cand_ok;
    assign cand_ok = c_q == C_RDY && !fatal_q && fetch_ok_adm && sq_en[rr_q] &&
                     sq_head[rr_q] != sq_tail[rr_q] && (rr_q == '0 || fetch_ok_io);

    assign m_rreq_valid = f_q == F_REQ;
    assign m_rreq_addr  = {sq_base[f_sq_q], 12'd0} + {46'd0, sq_head[f_sq_q], 6'd0};
    assign m_rreq_ndw   = 11'd16;
    assign m_rreq_id    = ID_FETCH;
    assign s_rdat_ready = f_q == F_DATA;
    assign m_sqe_valid  = f_q == F_OUT;

    // ---------------------------------------------------------------- CQE posting
    typedef enum logic [2:0] {P_IDLE, P_WREQ, P_WDAT, P_WAIT, P_ACK} pst_e;
    pst_e p_q;
    logic [1:0]  p_n_q;
    logic        p_err_q;             // the CQE's write failed (s_wdone_err)
    logic [QW-1:0] p_cq;
    assign p_cq = s_cqe_cqid;
    logic p_drop, p_room;
    assign p_drop = !live || !cq_en[p_cq];
    // room per CQ, registered (timing): one cycle old, which is safe: a head only moves forward,
    // and the tail of a CQE just written is in it by the time the next request is looked at (P_ACK)
    logic [NQT-1:0] room_q;
    always_ff @(posedge clk)
        for (int i = 0; i < NQT; i++) room_q[i] <= inc(cq_tail[i], cq_szm1[i]) != cq_head[i];
    assign p_room = room_q[p_cq];
    assign s_cqe_ready  = (p_q == P_ACK) || (p_q == P_IDLE && s_cqe_valid && p_drop);
    assign s_cqe_wr     = p_q == P_ACK && !p_err_q;
    assign m_wreq_valid = p_q == P_WREQ;
    assign m_wreq_addr  = {cq_base[p_cq], 12'd0} + {48'd0, cq_tail[p_cq], 4'd0};
    assign m_wreq_ndw   = 11'd4;
    assign m_wreq_id    = ID_CQE;
    assign m_wdat_valid = p_q == P_WDAT;
    always_comb begin
        case (p_n_q)
            2'd0: m_wdat_data = s_cqe_dw0;
            2'd1: m_wdat_data = 32'd0;
            2'd2: m_wdat_data = {16'(s_cqe_sqid), s_cqe_sqhd};
            default: m_wdat_data = {s_cqe_status, cq_phase[p_cq], s_cqe_cid};
        endcase
    end

    logic p_busy;                    // a CQE of p_cq is presented or being written (not yet in the tail)
    assign p_busy = p_q == P_WREQ || p_q == P_WDAT || p_q == P_WAIT || (p_q == P_IDLE && s_cqe_valid);
    always_comb begin
        for (int i = 0; i < NQT; i++) begin
            // entries in use (written, not yet consumed), plus the request presented or being written
            logic [12:0] used;
            used = qdist(cq_head[i], cq_tail[i], cq_szm1[i]) + 13'((p_busy && int'(p_cq) == i) ? 1 : 0);
            cq_room[i] = !live || !cq_en[i] || used < {1'b0, cq_szm1[i]};
        end
    end

    // ---------------------------------------------------------------- MSI
    logic [31:0] pend_q;
    logic        msi_busy_q;
    logic [31:0] msi_vec_q;                             // the vector being sent (one-hot)
    logic [5:0]  nvec;
    assign nvec = 6'd1 << ((cfg_interrupt_msi_mmenable[2:0] > 3'd5) ? 3'd5 : cfg_interrupt_msi_mmenable[2:0]);
    logic [31:0] sendable;
    assign sendable = pend_q & ~int_mask;
    logic [31:0] pick;                                  // the lowest sendable vector, one-hot
    assign pick = sendable & (~sendable + 32'd1);

    // ---------------------------------------------------------------- queue operations
    logic [10:0] q_st;
    logic [QW-1:0] q_qid;
    assign q_qid = QW'(s_qop_qid);
    logic q_qid_ok, q_exists, q_cq_ok, q_attached;
    assign q_qid_ok = s_qop_qid >= 16'd1 && s_qop_qid <= 16'(NQ);
    assign q_exists = s_qop_op[0] ? sq_en[q_qid] : cq_en[q_qid];
    assign q_cq_ok  = s_qop_iv >= 16'd1 && s_qop_iv <= 16'(NQ) && cq_en[QW'(s_qop_iv)];
    always_comb begin
        q_attached = 1'b0;
        for (int i = 1; i < NQT; i++)
            if (sq_en[i] && sq_cqid[i] == q_qid) q_attached = 1'b1;
    end
    always_comb begin
        q_st = 11'd0;
        if (!q_qid_ok) q_st = {3'd1, 8'h01};                              // Invalid Queue Identifier
        else if (!s_qop_op[1]) begin                                      // create
            if (q_exists) q_st = {3'd1, 8'h01};
            else if (s_qop_qsz < 16'd1 || s_qop_qsz > 16'(QSIZE - 1)) q_st = {3'd1, 8'h02};   // Invalid Queue Size
            else if (!s_qop_pc) q_st = {3'd0, 8'h02};                   // Invalid Field
            else if (!s_qop_op[0] && s_qop_iv >= 16'd32) q_st = {3'd1, 8'h08};   // Invalid Interrupt Vector
            else if (s_qop_op[0] && !q_cq_ok) q_st = {3'd1, 8'h00};      // Completion Queue Invalid
        end else begin                                                    // delete
            if (!q_exists) q_st = {3'd1, 8'h01};
            else if (!s_qop_op[0] && q_attached) q_st = {3'd1, 8'h0C};   // Invalid Queue Deletion
        end
    end
    assign s_qop_ready = !m_qrsp_valid;

    // ---------------------------------------------------------------- doorbells
    // Three stages (timing): the event and its queue's table entry are registered, then checked,
    // then applied. Doorbell events of one queue are at least 2 cycles apart (one BAR0 request at a
    // time; the two events of one 64-bit write are an SQ tail and a CQ head): a CQ head doorbell
    // in stage 3 is forwarded to the next one of the same CQ entering stage 1. Otherwise a table
    // entry changes meanwhile only by the device's own progress (a CQ tail that grows: a looser
    // bound for a CQ head, never a wrong one).
    assign s_db_ready = 1'b1;
    logic          e_v_q, e_cq_q, e_bad_q;
    logic [QW-1:0] e_qid_q;
    logic [11:0]   e_val_q;
    logic          d_v_q, d_cq_q, d_big_q, d_en_q, d_range_q;
    logic [QW-1:0] d_qid_q;
    logic [11:0]   d_val_q, d_szm1_q, d_head_q, d_tail_q;
    logic          db_bad;
    always_ff @(posedge clk) begin
        d_v_q     <= s_db_valid && live && !fatal_q;
        d_cq_q    <= s_db_cq;
        d_qid_q   <= s_db_qid;
        d_val_q   <= s_db_value[11:0];
        d_big_q   <= s_db_big || s_db_value[15:12] != 4'd0 || int'(s_db_qid) > NQ;
        d_en_q    <= s_db_cq ? cq_en[s_db_qid] : sq_en[s_db_qid];
        d_szm1_q  <= s_db_cq ? cq_szm1[s_db_qid] : sq_szm1[s_db_qid];
        // (a doorbell of the same CQ being applied this cycle: its value, not the old head)
        d_head_q  <= (e_v_q && e_cq_q && !e_bad_q && e_qid_q == s_db_qid) ? e_val_q : cq_head[s_db_qid];
        d_tail_q  <= cq_tail[s_db_qid];
        if (rst) d_v_q <= 1'b0;
    end
    assign d_range_q = d_val_q > d_szm1_q;
    // a CQ head may move forward to any entry in [head, tail] (circularly): comparisons only (timing)
    logic d_in;
    assign d_in = (d_head_q <= d_tail_q) ? (d_val_q >= d_head_q && d_val_q <= d_tail_q)
                                         : (d_val_q >= d_head_q || d_val_q <= d_tail_q);
    assign db_bad = !d_en_q || d_big_q || d_range_q || (d_cq_q && !d_in);
    always_ff @(posedge clk) begin
        e_v_q   <= d_v_q;
        e_cq_q  <= d_cq_q;
        e_qid_q <= d_qid_q;
        e_val_q <= d_val_q;
        e_bad_q <= db_bad;
        if (rst) e_v_q <= 1'b0;
    end

    // ---------------------------------------------------------------- the state
    always_ff @(posedge clk) begin
        cfg_interrupt_msi_int <= '0;

        // doorbells (stage 3)
        if (e_v_q && live && !fatal_q) begin
            if (e_bad_q)
                fatal_q <= 1'b1;
            else if (e_cq_q)
                cq_head[e_qid_q] <= e_val_q;
            else
                sq_tail[e_qid_q] <= e_val_q;
        end

        // fetch
        case (f_q)
            F_IDLE: begin
                if (cand_ok) begin
                    f_sq_q <= rr_q;
                    f_q    <= F_REQ;
                end
`ifdef ATS_NVME_CGATE
                rr_reg_q <= (int'(rr_q) == NQ) ? '0 : rr_q + QW'(1);
`else
                rr_q <= (int'(rr_q) == NQ) ? '0 : rr_q + QW'(1);
`endif
            end
            F_REQ: if (m_rreq_ready) begin
                sq_head[f_sq_q] <= inc(sq_head[f_sq_q], sq_szm1[f_sq_q]);
                m_sqe_sqhd <= 16'(inc(sq_head[f_sq_q], sq_szm1[f_sq_q]));
                m_sqe_sqid <= f_sq_q;
                m_sqe_cqid <= sq_cqid[f_sq_q];
                m_sqe_prio <= sq_prio[f_sq_q];
                f_n_q   <= '0;
                f_err_q <= 1'b0;
                f_q     <= F_DATA;
            end
            F_DATA: if (s_rdat_valid) begin
                m_sqe_data[32*f_n_q +: 32] <= s_rdat_data;
                f_n_q <= f_n_q + 4'd1;
                if (s_rdat_err) f_err_q <= 1'b1;
                if (s_rdat_last) begin
                    if (f_err_q || s_rdat_err) begin
                        fatal_q <= 1'b1;                 // the SQE could not be read
                        f_q <= F_IDLE;
                    end else begin
                        f_q <= F_OUT;
                        cnt_fetch <= cnt_fetch + 32'd1;
                    end
                end
            end
            default: if (m_sqe_ready) f_q <= F_IDLE;   // F_OUT
        endcase

        // MSI (before the CQE posting: a vector pended in the same cycle as it is sent stays pending)
        if (!msi_busy_q && sendable != '0 && cfg_interrupt_msi_enable[0]) begin
            cfg_interrupt_msi_int <= pick;
            pend_q <= pend_q & ~pick;
            msi_vec_q <= pick;
            msi_busy_q <= 1'b1;
        end else if (msi_busy_q && (cfg_interrupt_msi_sent || cfg_interrupt_msi_fail)) begin
            msi_busy_q <= 1'b0;
            if (cfg_interrupt_msi_sent) cnt_msi <= cnt_msi + 32'd1;
            else begin                                  // not sent: pending again (tried again)
                cnt_msi_fail <= cnt_msi_fail + 32'd1;
                pend_q <= pend_q | msi_vec_q;
            end
        end

        // CQE posting
        case (p_q)
            P_IDLE: if (s_cqe_valid) begin
                if (p_drop) cnt_cqe_drop <= cnt_cqe_drop + 32'd1;
                else if (p_room) begin
                    p_q   <= P_WREQ;
                    p_n_q <= '0;
                    p_err_q <= 1'b0;
                end
            end
            P_WREQ: if (m_wreq_ready) p_q <= P_WDAT;
            P_WDAT: if (m_wdat_ready) begin
                p_n_q <= p_n_q + 2'd1;
                if (p_n_q == 2'd3) p_q <= P_WAIT;
            end
            P_WAIT: if (s_wdone) begin
                cq_tail[p_cq] <= inc(cq_tail[p_cq], cq_szm1[p_cq]);
                if (cq_tail[p_cq] == cq_szm1[p_cq]) cq_phase[p_cq] <= !cq_phase[p_cq];
                if (cq_ien[p_cq] && cfg_interrupt_msi_enable[0])
                    pend_q[cq_iv[p_cq] & 5'(nvec - 6'd1)] <= 1'b1;
                if (s_wdone_err) begin                  // not in host memory: controller fatal
                    fatal_q <= 1'b1;
                    p_err_q <= 1'b1;
                    cnt_cqe_drop <= cnt_cqe_drop + 32'd1;
                end else
                    cnt_cqe <= cnt_cqe + 32'd1;
                p_q <= P_ACK;
            end
            default: p_q <= P_IDLE;                     // P_ACK: s_cqe_ready this cycle
        endcase

        // queue operations
        if (m_qrsp_valid && m_qrsp_ready) m_qrsp_valid <= 1'b0;
        if (s_qop_valid && s_qop_ready) begin
            m_qrsp_valid  <= 1'b1;
            m_qrsp_status <= q_st;
            if (q_st == 11'd0) begin
                case (s_qop_op)
                    2'd0: begin
                        cq_en[q_qid] <= 1'b1; cq_base[q_qid] <= s_qop_base[63:12];
                        cq_szm1[q_qid] <= s_qop_qsz[11:0]; cq_head[q_qid] <= '0; cq_tail[q_qid] <= '0;
                        cq_phase[q_qid] <= 1'b1; cq_ien[q_qid] <= s_qop_ien; cq_iv[q_qid] <= s_qop_iv[4:0];
                    end
                    2'd1: begin
                        sq_en[q_qid] <= 1'b1; sq_base[q_qid] <= s_qop_base[63:12];
                        sq_szm1[q_qid] <= s_qop_qsz[11:0]; sq_head[q_qid] <= '0; sq_tail[q_qid] <= '0;
                        sq_cqid[q_qid] <= QW'(s_qop_iv); sq_prio[q_qid] <= 2'd3 - s_qop_qprio;
                    end
                    2'd2: cq_en[q_qid] <= 1'b0;
                    default: sq_en[q_qid] <= 1'b0;
                endcase
            end
        end

        // controller state
        m_flush <= 1'b0;
        case (c_q)
            C_OFF: if (en_req) begin
                sq_en <= NQT'(1); cq_en <= NQT'(1);
                sq_base[0] <= asq_base[63:12]; cq_base[0] <= acq_base[63:12];
                sq_szm1[0] <= aqa_asqs; cq_szm1[0] <= aqa_acqs;
                sq_head[0] <= '0; sq_tail[0] <= '0; cq_head[0] <= '0; cq_tail[0] <= '0;
                sq_cqid[0] <= '0; sq_prio[0] <= 2'd3;
                cq_phase[0] <= 1'b1; cq_ien[0] <= 1'b1; cq_iv[0] <= '0;
                c_q <= C_RDY;
            end
            C_RDY: if (!en_req) c_q <= C_DIS;
                   else if (cc_shn != 2'd0) c_q <= C_SHUT1;
            C_SHUT1: if (!en_req) c_q <= C_DIS;
                     else if (f_q == F_IDLE && cmd_idle) begin
                         m_flush <= 1'b1;
                         c_q <= C_SHUT2;
                     end
            C_SHUT2: if (s_flush_done) c_q <= C_SHUTDONE;
                     else m_flush <= 1'b1;
            C_SHUTDONE: if (!en_req) c_q <= C_DIS;
            default: if (f_q == F_IDLE && cmd_idle && p_q == P_IDLE) begin   // C_DIS
                sq_en <= '0; cq_en <= '0; pend_q <= '0; fatal_q <= 1'b0;
                c_q <= C_OFF;
            end
        endcase

        if (rst) begin
            c_q <= C_OFF; fatal_q <= 1'b0; f_q <= F_IDLE; p_q <= P_IDLE; f_sq_q <= '0;
`ifdef ATS_NVME_CGATE
            rr_reg_q <= '0;
`else
            rr_q <= '0;
`endif
            f_n_q <= '0; f_err_q <= 1'b0; p_n_q <= '0; p_err_q <= 1'b0;
            sq_en <= '0; cq_en <= '0; cq_ien <= '0; cq_phase <= '0;
            for (int i = 0; i < NQT; i++) begin
                sq_base[i] <= '0; cq_base[i] <= '0; sq_szm1[i] <= '0; cq_szm1[i] <= '0;
                sq_head[i] <= '0; sq_tail[i] <= '0; cq_head[i] <= '0; cq_tail[i] <= '0;
                sq_cqid[i] <= '0; sq_prio[i] <= '0; cq_iv[i] <= '0;
            end
            m_sqe_data <= '0; m_sqe_sqid <= '0; m_sqe_cqid <= '0; m_sqe_sqhd <= '0; m_sqe_prio <= '0;
            pend_q <= '0; msi_busy_q <= 1'b0; cfg_interrupt_msi_int <= '0; msi_vec_q <= '0;
            m_qrsp_valid <= 1'b0; m_qrsp_status <= '0; m_flush <= 1'b0;
            cnt_fetch <= '0; cnt_cqe <= '0; cnt_cqe_drop <= '0; cnt_msi <= '0; cnt_msi_fail <= '0;
        end
    end

    assign st_rdy  = c_q != C_OFF;          // RDY clears when a disable has finished
    assign st_dis  = c_q == C_DIS;
    assign ioq_any = sq_en[NQT-1:1] != '0 || cq_en[NQT-1:1] != '0;
    assign st_cfs  = fatal_q;
    assign st_shst = (c_q == C_SHUT1 || c_q == C_SHUT2) ? 2'd1 : (c_q == C_SHUTDONE) ? 2'd2 : 2'd0;

`ifdef ATS_NVME_CGATE
    // ---------------------------------------------------------------- simulation only: clock gate
    // rr_q turns on every edge in F_IDLE, so a block whose clock stops would come back with it in
    // another phase. Its simulation form is computed from a phase counter on the ungated clock
    // (rr_ph_q: edges mod NQ + 1) and an offset that changes only outside F_IDLE: in F_IDLE
    // rr_q = (rr_ph_q + rr_off_q) mod (NQ + 1), which turns with every edge whether or not `clk`
    // ran. Leaving F_IDLE takes f_sq_q <= rr_q and the register form holds rr_q + 1 until F_IDLE
    // again; so in every cycle outside F_IDLE the offset is set to f_sq_q - rr_ph_q, which makes
    // rr_q = f_sq_q + 1 at the first F_IDLE edge (rr_ph_q has moved on by one). Reset: both 0, as
    // rr_q. With sim_reg_rr (the gate held open) the register form is used (rr_reg_q, which then
    // turns on every edge): tests/system/test_sim_cgate.py compares the two.
    logic [QW-1:0] rr_reg_q, rr_ph_q, rr_off_q;
    function automatic logic [QW-1:0] rr_mod(input logic [QW:0] v);      // v < 2 (NQ + 1)
        rr_mod = (int'(v) > NQ) ? QW'(int'(v) - (NQ + 1)) : QW'(v);
    endfunction
    always_ff @(posedge sim_clk) rr_ph_q <= (rst || int'(rr_ph_q) == NQ) ? '0 : rr_ph_q + QW'(1);
    always_ff @(posedge clk) begin
        if (f_q != F_IDLE) rr_off_q <= rr_mod((QW+1)'(f_sq_q) + (QW+1)'(NQ + 1) - (QW+1)'(rr_ph_q));
        if (rst) rr_off_q <= '0;
    end
    assign rr_q = sim_reg_rr ? rr_reg_q : rr_mod((QW+1)'(rr_ph_q) + (QW+1)'(rr_off_q));

    // busy (the gate's activity input): a fetch, a CQE write, an MSI to send or being sent, a
    // queue operation's answer, doorbells in the pipeline, a controller state about to change or
    // waiting for the rest of the front end (disable, shutdown)
    logic sim_busy;
    assign sim_busy = f_q != F_IDLE || p_q != P_IDLE || msi_busy_q || cfg_interrupt_msi_int != '0 ||
                      (sendable != '0 && cfg_interrupt_msi_enable[0]) || m_qrsp_valid || d_v_q || e_v_q ||
                      m_flush || c_q == C_DIS || c_q == C_SHUT1 || c_q == C_SHUT2 ||
                      (c_q == C_OFF && en_req) || (c_q == C_RDY && (!en_req || cc_shn != 2'd0)) ||
                      (c_q == C_SHUTDONE && !en_req);
`endif

`ifndef SYNTHESIS
    // a CQE write starts only for a CQ with a free entry: room_q, one cycle old, is safe (above)
    always_ff @(posedge clk) begin
        if (!rst && p_q == P_IDLE && s_cqe_valid && !p_drop && p_room) begin
            assert (inc(cq_tail[p_cq], cq_szm1[p_cq]) != cq_head[p_cq])
                else $error("ats_nvme_qm: a CQE written into full CQ %0d (tail %0d, head %0d) (%m)",
                            p_cq, cq_tail[p_cq], cq_head[p_cq]);
        end
    end
`endif
endmodule

`resetall
