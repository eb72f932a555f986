// SPDX-License-Identifier: Apache-2.0
// ats_nvme_admin: the NVMe admin commands (docs/host-interface.md §1.6-§1.8a; rtl/nvme/README.md
// "ats_nvme_admin").
//
// One admin command at a time, from ats_nvme_cmd's m_adm (the SQE and its SQ head). In the
// reference model's order: the opcode (Invalid Command Opcode), FUSE / PSDT (Invalid Field), then
// the command's own checks, then its work, then one CQE request for CQ 0 on m_cqe:
//   - Create / Delete I/O SQ / CQ: one queue operation on the queue manager (m_qop → s_qrsp), its
//     status is the command's; a Delete SQ that succeeded completes once no command slot of that SQ
//     is in use (`sq_busy`, from ats_nvme_cmd);
//   - Identify (CNS 0, 1, 2, 3) and Get Log Page (LID 1, 2, 3, 0xC0): a PRP setup of the admin slot
//     (QDEPTH) on ats_nvme_prp with PRP1 / PRP2 and the transfer length, then (Identify Controller,
//     LID 0xC0) one §1 IDENTIFY / GET_LOG descriptor (tag QDEPTH, dptr = LOCAL_ADDR) whose 512-byte
//     answer comes back on s_lwr into a 128-word buffer (LID 0xC0's counters k59..k63 are replaced
//     by the front end's SWRITE limits), then one burst of the transfer's dwords
//     through the admin slot's window (m_wwr), then the CQE once ats_nvme_prp's wr_done has reached
//     the wr_acc of that burst (its DMA writes are issued) and the slot's error flag was read (Data
//     Transfer Error);
//   - Set / Get Features (Number of Queues, Volatile Write Cache, Interrupt Coalescing, Async Event
//     Configuration), Abort (DW0 = 1), Asynchronous Event Request (parked: no CQE; four at most).
//   - Set / Get Features of a vendor FID (CDW10[7:0] = 0xC0..0xFF): one §1 FEATURE descriptor to the
//     firmware (tag QDEPTH; lba = the FID, nlb = 1 Set / 0 Get, aux = CDW11 for a Set, 0 for a Get;
//     docs/architecture.md §1.2), no PRP setup, no data; its completion's status is the command's
//     (mapped as the core's are) and, when OK, its result is DW0. Which vendor FIDs exist is the
//     firmware's answer (BAD_FIELD: Invalid Field), not this block's.
// Features and parked AERs return to their defaults while the controller is not ready (`st_rdy` 0);
// the vendor FIDs are the device's settings, held by the firmware, and keep their values.
// The SMART / health counters (Get Log LID 2) count the commands ats_nvme_cmd reports on smart_rd /
// smart_wr (completed OK, their CQE acknowledged).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_admin #(
    parameter int          NQ         = 4,
    parameter int          QW         = $clog2(NQ + 1),
    parameter int          QDEPTH     = 32,                 // the admin slot is QDEPTH
    parameter int          SW         = $clog2(QDEPTH + 1),
    parameter int          PAGE_BYTES = 4096,               // LBA size
    parameter logic [63:0] NUM_LBAS   = 64'd16384,
    parameter logic [15:0] VID        = 16'h1D1D,
    parameter logic [63:0] FR         = "0000abcd",         // firmware revision: 8 ASCII characters
    parameter int          NUM_TX     = 32,                 // the core's txids; the last STX + ATX reserved (ats_nvme_cmd)
    parameter int          TX_ENTRIES = 32,                 // the core's pages per transaction
    parameter int          STX        = 0,                  // SWRITE engines: txids NUM_TX-ATX-STX+1..NUM_TX-ATX (ats_nvme_cmd)
    parameter int          ATX        = 1,                  // atomic Writes' txids NUM_TX-ATX+1..NUM_TX (ats_nvme_cmd)
    parameter int          AWU        = ats_nvme_pkg::awu_blocks(PAGE_BYTES, TX_ENTRIES),  // NAWUPF + 1
    parameter logic [31:0] LOCAL_ADDR = 32'h8000_0000       // dptr of the §1 admin descriptors
) (
    input  wire logic          clk,
    input  wire logic          rst,

    // admin SQEs (ats_nvme_cmd)
    input  wire logic          s_adm_valid,
    output      logic          s_adm_ready,
    input  wire logic [511:0]  s_adm_data,
    input  wire logic [15:0]   s_adm_sqhd,
    output      logic          adm_busy,           // a command is running (a parked AER is not)
    input  wire logic          st_rdy,             // CSTS.RDY (features and AERs reset while 0)
    input  wire logic          st_dis,             // a controller reset is under way (the queue manager)
    input  wire logic          ioq_any,            // an I/O SQ or CQ exists
    input  wire logic [NQ:0]   sq_busy,            // a command slot of the SQ is in use
    output      logic          vwc,                // Volatile Write Cache enabled

    // queue operations (ats_nvme_qm)
    output      logic          m_qop_valid,
    input  wire logic          m_qop_ready,
    output      logic [1:0]    m_qop_op,           // 0 create CQ, 1 create SQ, 2 delete CQ, 3 delete SQ
    output      logic [15:0]   m_qop_qid,
    output      logic [15:0]   m_qop_qsz,
    output      logic [63:0]   m_qop_base,
    output      logic          m_qop_pc,
    output      logic          m_qop_ien,
    output      logic [15:0]   m_qop_iv,
    output      logic [1:0]    m_qop_qprio,
    input  wire logic          s_qrsp_valid,
    output      logic          s_qrsp_ready,
    input  wire logic [10:0]   s_qrsp_status,

    // PRP setup of the admin slot and its window writes (ats_nvme_prp, through the top's arbiters)
    output      logic          m_set_valid,
    input  wire logic          m_set_ready,
    output      logic [SW-1:0] m_set_slot,
    output      logic [63:0]   m_set_prp1,
    output      logic [63:0]   m_set_prp2,
    output      logic [16:0]   m_set_len,
    input  wire logic          s_setr_valid,
    output      logic          s_setr_ready,
    input  wire logic [1:0]    s_setr_status,
    output      logic          m_wwr_valid,
    input  wire logic          m_wwr_ready,
    output      logic [31:0]   m_wwr_addr,
    output      logic [31:0]   m_wwr_data,
    output      logic          m_wwr_last,
    input  wire logic          slot_err,           // ats_nvme_prp's error flag of the admin slot
    input  wire logic [7:0]    wr_acc,
    input  wire logic [7:0]    wr_done,

    // the firmware's answers: §1 IDENTIFY / GET_LOG / FEATURE descriptors, their data and completions
    output      logic          m_cmd_valid,
    input  wire logic          m_cmd_ready,
    output      logic [3:0]    m_cmd_op,
    output      logic [7:0]    m_cmd_tag,
    output      logic [7:0]    m_cmd_lba,          // FEATURE: the FID (the descriptor's lba[47:8] are 0); else 0
    output      logic          m_cmd_nlb,          // FEATURE: 1 set, 0 get (the descriptor's nlb[15:1] are 0); else 0
    output      logic [31:0]   m_cmd_dptr,
    output      logic [31:0]   m_cmd_aux,          // FEATURE set: the value (CDW11); else 0
    input  wire logic          s_lwr_valid,        // the answer's words (the core's m_hwr at LOCAL_ADDR)
    output      logic          s_lwr_ready,
    input  wire logic [31:0]   s_lwr_data,
    input  wire logic          s_cpl_valid,        // a completion with tag QDEPTH
    input  wire logic [7:0]    s_cpl_status,
    input  wire logic [31:0]   s_cpl_result,       // FEATURE: the feature's value (DW0 when OK)

    // SMART counters (ats_nvme_cmd: a command completed OK, its CQE acknowledged)
    input  wire logic          smart_rd,
    input  wire logic          smart_wr,
    input  wire logic [16:0]   smart_bytes,

    // CQE requests for CQ 0 (ats_nvme_qm, through the top's arbiter)
    output      logic          m_cqe_valid,
    input  wire logic          m_cqe_ready,
    output      logic [15:0]   m_cqe_sqhd,
    output      logic [15:0]   m_cqe_cid,
    output      logic [14:0]   m_cqe_status,
    output      logic [31:0]   m_cqe_dw0,
    input  wire logic          cq_room             // CQ 0 can take a CQE
);
    // the NVMe statuses of ats_nvme_pkg (named here: Yosys reads package references, not imports)
    localparam logic [10:0] SC_AER_LIMIT = ats_nvme_pkg::SC_AER_LIMIT,
                            SC_BAD_FIELD = ats_nvme_pkg::SC_BAD_FIELD,
                            SC_BAD_LOG = ats_nvme_pkg::SC_BAD_LOG,
                            SC_BAD_NS = ats_nvme_pkg::SC_BAD_NS,
                            SC_BAD_OP = ats_nvme_pkg::SC_BAD_OP,
                            SC_CMD_SEQ = ats_nvme_pkg::SC_CMD_SEQ,
                            SC_INTERNAL = ats_nvme_pkg::SC_INTERNAL,
                            SC_OK = ats_nvme_pkg::SC_OK,
                            SC_PRP_OFFSET = ats_nvme_pkg::SC_PRP_OFFSET,
                            SC_XFER = ats_nvme_pkg::SC_XFER;
    localparam int          AER_MAX  = 4;                          // AERL + 1
    localparam int          LBADS    = $clog2(PAGE_BYTES);
    localparam logic [31:0] NQ_ANSWER = 32'((NQ - 1) * 32'h0001_0001);
    localparam logic [159:0] SN = "ATOMSSD-SIM-0001    ";           // 20 bytes, space padded
    localparam logic [319:0] MN = "atomssd transactional SSD               ";   // 40 bytes
    localparam logic [3:0]  OP_IDENTIFY = ats_host_pkg::OP_IDENTIFY, OP_GET_LOG = ats_host_pkg::OP_GET_LOG,
                            OP_FEATURE = ats_host_pkg::OP_FEATURE;
    // NVMe admin opcodes
    localparam logic [7:0] A_DEL_SQ = 8'h00, A_NEW_SQ = 8'h01, A_GET_LOG = 8'h02, A_DEL_CQ = 8'h04,
                           A_NEW_CQ = 8'h05, A_IDENTIFY = 8'h06, A_ABORT = 8'h08, A_SET_FEAT = 8'h09,
                           A_GET_FEAT = 8'h0A, A_AER = 8'h0C;
    localparam logic [7:0] FID_VWC = 8'h06, FID_NQ = 8'h07, FID_IC = 8'h08, FID_AEC = 8'h0B;

    if (QDEPTH < 2 || QDEPTH > 64) begin : g_check_qdepth
        $fatal(1, "ats_nvme_admin: QDEPTH must be 2..64 (%m)");
    end
    if (PAGE_BYTES < 512 || PAGE_BYTES > 65536 || (PAGE_BYTES & (PAGE_BYTES - 1)) != 0) begin : g_check_page
        $fatal(1, "ats_nvme_admin: PAGE_BYTES must be a power of two, 512..65536 (%m)");
    end
    if (LOCAL_ADDR[31] != 1'b1) begin : g_check_local
        $fatal(1, "ats_nvme_admin: LOCAL_ADDR must have bit 31 set (the top routes on it) (%m)");
    end

    // Identify Controller bytes 4..71 (SN, MN, FR) as 17 dwords, from the ASCII literals (first
    // character in the most significant byte)
    function automatic logic [543:0] make_strs(input int unused);
        make_strs = '0;
        for (int k = 0; k < 20; k++) make_strs[8 * k +: 8]        = SN[8 * (19 - k) +: 8];
        for (int k = 0; k < 40; k++) make_strs[8 * (20 + k) +: 8] = MN[8 * (39 - k) +: 8];
        for (int k = 0; k < 8; k++)  make_strs[8 * (60 + k) +: 8] = FR[8 * (7 - k) +: 8];
        if (unused != 0) make_strs = '0;
    endfunction
    localparam logic [543:0] STRS = make_strs(0);

    // ---------------------------------------------------------------- the command
    typedef enum logic [3:0] {S_IDLE, S_DEC, S_QOP, S_QRSP, S_DRAIN, S_SET, S_SETW, S_FW, S_FWW,
                              S_WR, S_SNAP, S_WAIT, S_CHK, S_ROOM, S_CQE} state_e;
    state_e        a_q;
    /* verilator lint_off UNUSEDSIGNAL */             // CDW2..5, CDW14/15: not used by admin commands
    logic [511:0]  q_sqe;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [15:0]   q_sqhd;
    logic [10:0]   q_st;
    logic [31:0]   q_dw0;

    /* verilator lint_off UNUSEDSIGNAL */             // CDW14/15, reserved and unused bits
    logic [31:0] c0, nsid, c10, c11, c12, c13;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [63:0] prp1, prp2;
    logic [7:0]  opc;
    assign c0   = q_sqe[0 +: 32];
    assign nsid = q_sqe[32 +: 32];
    assign prp1 = q_sqe[192 +: 64];
    assign prp2 = q_sqe[256 +: 64];
    assign c10  = q_sqe[320 +: 32];
    assign c11  = q_sqe[352 +: 32];
    assign c12  = q_sqe[384 +: 32];
    assign c13  = q_sqe[416 +: 32];
    assign opc  = c0[7:0];

    // what a data command writes: the kind of structure, its first dword and its length (K_FEAT: a
    // vendor feature, the firmware's FEATURE; nothing written)
    localparam logic [2:0] K_ZERO = 3'd0, K_IDC = 3'd1, K_IDNS = 3'd2, K_NSLIST = 3'd3, K_SMART = 3'd4,
                           K_BUF = 3'd5, K_FEAT = 3'd6;
    logic [2:0]  k_q;
    logic [14:0] w_n_q;                              // dwords to write (1 .. 16384)
    logic [7:0]  w_off_q;                            // first dword of the log (offset / 4 < 128)
    logic        w_fw_q;                             // the firmware's answer is needed first

    // Get Log Page fields
    logic [32:0] numd;                               // NUMD + 1
    logic [63:0] log_off;
    logic [9:0]  log_size;                           // bytes
    logic        log_known;
    assign numd    = {1'b0, c11[15:0], c10[31:16]} + 33'd1;
    assign log_off = {c13, c12};
    always_comb begin
        log_known = 1'b1;
        case (c10[7:0])
            8'h01:   log_size = 10'd64;
            8'h02, 8'h03, 8'hC0: log_size = 10'd512;
            default: begin log_size = 10'd512; log_known = 1'b0; end
        endcase
    end

    // features; FIDs 0xC0..0xFF are the device's (the firmware's FEATURE)
    logic        fid_vendor;
    logic        vwc_q;
    logic [31:0] ic_q, aec_q;
    logic [2:0]  aer_n_q;
    assign vwc = vwc_q;
    assign fid_vendor = c10[7:6] == 2'b11;

    // ---------------------------------------------------------------- decode (S_DEC)
    // the command's next state, status and DW0 from its fields
    state_e      dec_next;
    logic [10:0] dec_st;
    logic [31:0] dec_dw0;
    logic [2:0]  dec_kind;
    logic [14:0] dec_n;
    logic        dec_fw;
    always_comb begin
        dec_next = S_ROOM; dec_st = SC_OK; dec_dw0 = '0;
        dec_kind = K_ZERO; dec_n = 15'd1024; dec_fw = 1'b0;
        case (opc)
            A_NEW_SQ, A_NEW_CQ, A_DEL_SQ, A_DEL_CQ: dec_next = S_QOP;
            A_IDENTIFY: begin
                dec_next = S_SET;
                case (c10[7:0])
                    8'd0: if (nsid != 32'd1) begin dec_st = SC_BAD_NS; dec_next = S_ROOM; end
                          else dec_kind = K_IDNS;
                    8'd1: begin dec_kind = K_IDC; dec_fw = 1'b1; end
                    8'd2: if (nsid >= 32'hFFFF_FFFE) begin dec_st = SC_BAD_NS; dec_next = S_ROOM; end
                          else dec_kind = nsid == 32'd0 ? K_NSLIST : K_ZERO;
                    8'd3: if (nsid != 32'd1) begin dec_st = SC_BAD_NS; dec_next = S_ROOM; end
                    default: begin dec_st = SC_BAD_FIELD; dec_next = S_ROOM; end
                endcase
            end
            A_GET_LOG: begin
                dec_n = numd[14:0];
                dec_kind = c10[7:0] == 8'h02 ? K_SMART : c10[7:0] == 8'hC0 ? K_BUF : K_ZERO;
                dec_fw = c10[7:0] == 8'hC0;
                if (!log_known) begin
                    dec_st = SC_BAD_LOG;
                end else if (log_off[1:0] != 2'd0 || log_off >= 64'(log_size) || numd > 33'd16384) begin
                    dec_st = SC_BAD_FIELD;
                end else begin
                    dec_next = S_SET;
                end
            end
            A_SET_FEAT: begin
                case (c10[7:0])
                    FID_NQ: begin
                        if (c11[15:0] == 16'hFFFF || c11[31:16] == 16'hFFFF) dec_st = SC_BAD_FIELD;
                        else if (ioq_any) dec_st = SC_CMD_SEQ;
                        else dec_dw0 = NQ_ANSWER;
                    end
                    FID_VWC, FID_IC, FID_AEC: ;
                    default: if (fid_vendor) begin dec_kind = K_FEAT; dec_next = S_FW; end
                             else dec_st = SC_BAD_FIELD;
                endcase
            end
            A_GET_FEAT: begin
                case (c10[7:0])
                    FID_NQ:  dec_dw0 = NQ_ANSWER;
                    FID_VWC: dec_dw0 = {31'd0, vwc_q};
                    FID_IC:  dec_dw0 = ic_q;
                    FID_AEC: dec_dw0 = aec_q;
                    default: if (fid_vendor) begin dec_kind = K_FEAT; dec_next = S_FW; end
                             else dec_st = SC_BAD_FIELD;
                endcase
            end
            A_AER: begin
                if (aer_n_q == 3'(AER_MAX)) dec_st = SC_AER_LIMIT;
                else dec_next = S_IDLE;                  // parked: no CQE
            end
            A_ABORT: dec_dw0 = 32'd1;                    // not aborted
            default: dec_st = SC_BAD_OP;
        endcase
        if (dec_st != SC_BAD_OP && (c0[9:8] != 2'b00 || c0[15:14] != 2'b00)) begin
            dec_st = SC_BAD_FIELD;                        // FUSE / PSDT: after the opcode, before the rest
        end
        if (dec_st != SC_OK) begin
            dec_next = S_ROOM; dec_dw0 = '0;
        end
    end

    // ---------------------------------------------------------------- the answer's buffer
    logic [31:0] buf_q [128];
    logic [7:0]  lw_i_q;                             // words of the answer received (128 at most)
    logic [1:0]  stale_q;                            // answers abandoned by a controller reset, still to come
    logic        orph_q;                             // a request abandoned before it was taken, still offered
    assign s_lwr_ready = 1'b1;
    always_ff @(posedge clk) begin
        if (s_lwr_valid && !lw_i_q[7] && stale_q == '0) begin
            buf_q[lw_i_q[6:0]] <= s_lwr_data;
            lw_i_q <= lw_i_q + 8'd1;
        end
        if (m_cmd_valid) lw_i_q <= '0;               // a new answer starts
        if (rst) lw_i_q <= '0;
    end

    // ---------------------------------------------------------------- SMART counters
    localparam logic [19:0] UNIT = 20'd512000;      // a data unit: 1000 × 512 bytes
    logic [47:0] rd_cmds_q, wr_cmds_q, rd_full_q, wr_full_q, rd_units_q, wr_units_q;
    logic [18:0] rd_rem_q, wr_rem_q;
    logic [19:0] rd_sum, wr_sum;
    assign rd_sum = {1'b0, rd_rem_q} + 20'(smart_bytes);
    assign wr_sum = {1'b0, wr_rem_q} + 20'(smart_bytes);
    always_ff @(posedge clk) begin
        if (smart_rd) begin
            rd_cmds_q <= rd_cmds_q + 48'd1;
            if (rd_sum >= UNIT) begin rd_rem_q <= 19'(rd_sum - UNIT); rd_full_q <= rd_full_q + 48'd1; end
            else rd_rem_q <= rd_sum[18:0];
        end
        if (smart_wr) begin
            wr_cmds_q <= wr_cmds_q + 48'd1;
            if (wr_sum >= UNIT) begin wr_rem_q <= 19'(wr_sum - UNIT); wr_full_q <= wr_full_q + 48'd1; end
            else wr_rem_q <= wr_sum[18:0];
        end
        rd_units_q <= rd_full_q + 48'(rd_rem_q != '0);      // rounded up
        wr_units_q <= wr_full_q + 48'(wr_rem_q != '0);
        if (rst) begin
            rd_cmds_q <= '0; wr_cmds_q <= '0; rd_full_q <= '0; wr_full_q <= '0; rd_rem_q <= '0;
            wr_rem_q <= '0; rd_units_q <= '0; wr_units_q <= '0;
        end
    end

    // ---------------------------------------------------------------- the structures, a dword at a time
    function automatic logic [31:0] gen(input logic [2:0] k, input logic [14:0] j, input logic [31:0] bw);
        gen = '0;
        case (k)
            K_IDC: begin
                if (j >= 15'd1 && j <= 15'd17)      gen = STRS[32 * (j - 15'd1) +: 32];   // SN, MN, FR
                else if (j == 15'd777)              gen = bw < 32'(NUM_TX - STX - ATX + 1) ? bw : 32'(NUM_TX - ATX - STX);
                                                                   // num_tx: the last STX + ATX txids are the
                                                                   // front end's (SWRITE, atomic writes)
                else if (j >= 15'd768 && j < 15'd784) gen = bw;          // the firmware's IDENTIFY words
                else case (j)
                    15'd0:   gen = {VID, VID};                             // VID, SSVID
                    15'd19:  gen = 32'h0001_0400;                          // MDTS 4, CNTLID 1
                    15'd20:  gen = 32'h0001_0400;                          // VER 1.4
                    15'd64:  gen = 32'h0303_0000;                          // OACS 0, ACL 3, AERL 3
                    15'd65:  gen = 32'h0000_0403;                          // FRMW, LPA
                    15'd128: gen = 32'h0000_4466;                          // SQES, CQES
                    15'd129: gen = 32'd1;                                  // NN
                    15'd130: gen = 32'h0000_0004;                          // ONCS: Dataset Management
                    15'd131: gen = 32'h0000_0100 | 32'(AWU - 1) << 16;     // VWC, AWUN
                    15'd132: gen = 32'(AWU - 1);                           // AWUPF (NVSCC, NWPC 0)
                    15'd784: gen = STX == 0 ? 32'd0 :                      // SWRITE: SW_PAGES, STX, SW_RANGES
                                   {16'(ats_nvme_pkg::sw_pages(PAGE_BYTES, TX_ENTRIES)), 8'(STX), 8'd8};
                    15'd785: gen = {16'd0, 8'(NUM_TX), 8'(NUM_TX - STX - ATX + 1)};  // last atomic txid, first reserved
                    default: gen = '0;
                endcase
            end
            K_IDNS: case (j)
                15'd0, 15'd2, 15'd4: gen = NUM_LBAS[31:0];                 // NSZE, NCAP, NUSE
                15'd1, 15'd3, 15'd5: gen = NUM_LBAS[63:32];
                15'd6:   gen = 32'h0000_0006;                              // NSFEAT (NSABP, DAE), NLBAF 0, FLBAS 0
                15'd8:   gen = 32'(AWU - 1) << 16;                         // NAWUN
                15'd9:   gen = 32'(AWU - 1);                               // NAWUPF, NACWU 0
                15'd10:  gen = 32'(AWU - 1);                               // NABSN, NABO 0
                15'd11:  gen = 32'(AWU - 1);                               // NABSPF, NOIOB 0
                15'd32:  gen = 32'(LBADS) << 16;                           // LBAF0
                default: gen = '0;
            endcase
            K_NSLIST: gen = j == 15'd0 ? 32'd1 : 32'd0;
            K_SMART: case (j)
                15'd0:  gen = 32'h6401_3900;                               // 313 K, 100 % spare
                15'd8:  gen = rd_units_q[31:0];
                15'd9:  gen = {16'd0, rd_units_q[47:32]};
                15'd12: gen = wr_units_q[31:0];
                15'd13: gen = {16'd0, wr_units_q[47:32]};
                15'd16: gen = rd_cmds_q[31:0];
                15'd17: gen = {16'd0, rd_cmds_q[47:32]};
                15'd20: gen = wr_cmds_q[31:0];
                15'd21: gen = {16'd0, wr_cmds_q[47:32]};
                default: gen = '0;
            endcase
            // LID 0xC0: the firmware's page, its counters k59..k63 (dwords 118..127) the front end's
            // static-transaction limits (docs/host-interface.md §1.11 "Get Log Page LID 0xC0")
            K_BUF: case (j)
                15'd118: gen = STX == 0 ? 32'd0 : 32'd8;                   // k59 SW_RANGES
                15'd120: gen = 32'(STX);                                   // k60 STX (engines)
                15'd122: gen = STX == 0 ? 32'd0 :                          // k61 SW_PAGES
                               32'(ats_nvme_pkg::sw_pages(PAGE_BYTES, TX_ENTRIES));
                15'd124: gen = 32'(NUM_TX - STX - ATX + 1);                // k62 the first reserved txid
                15'd126: gen = 32'(NUM_TX);                                // k63 the last atomic Writes' txid
                15'd119, 15'd121, 15'd123, 15'd125, 15'd127: gen = 32'd0;  // the counters' high dwords
                default: gen = j < 15'd128 ? bw : 32'd0;
            endcase
            default: gen = '0;
        endcase
    endfunction

    // window writes: a counter, a stage that reads the buffer, the output register
    logic [14:0] w_cnt_q;                            // dwords passed to stage 1
    logic        w_more;
    logic        s1_v_q, s1_last_q;
    logic [14:0] s1_j_q;
    logic [31:0] s1_bw_q;
    logic        s1_bv_q;                            // the buffer word was written by this answer
    logic        w_adv;
    logic [14:0] w_j;
    assign w_more = w_cnt_q != w_n_q;
    assign w_adv  = !m_wwr_valid || m_wwr_ready;
    assign w_j    = w_cnt_q + 15'(w_off_q);

    assign m_wwr_addr = {{(32 - 17 - SW){1'b0}}, SW'(QDEPTH), 5'd0, prp1[11:0]};

    // ---------------------------------------------------------------- handshakes
    assign s_adm_ready  = a_q == S_IDLE && !orph_q;
    assign adm_busy     = a_q != S_IDLE;
    assign m_qop_valid  = a_q == S_QOP;
    assign m_qop_op     = opc == A_NEW_CQ ? 2'd0 : opc == A_NEW_SQ ? 2'd1 : opc == A_DEL_CQ ? 2'd2 : 2'd3;
    assign m_qop_qid    = c10[15:0];
    assign m_qop_qsz    = c10[31:16];
    assign m_qop_base   = prp1;
    assign m_qop_pc     = c11[0];
    assign m_qop_ien    = c11[1];
    assign m_qop_iv     = c11[31:16];
    assign m_qop_qprio  = c11[2:1];
    assign s_qrsp_ready = a_q == S_QRSP;
    assign m_set_valid  = a_q == S_SET;
    assign m_set_slot   = SW'(QDEPTH);
    assign m_set_prp1   = prp1;
    assign m_set_prp2   = prp2;
    assign m_set_len    = {w_n_q, 2'b00};
    assign s_setr_ready = a_q == S_SETW;
    assign m_cmd_valid  = a_q == S_FW || orph_q;
    assign m_cmd_op     = k_q == K_IDC ? OP_IDENTIFY : k_q == K_FEAT ? OP_FEATURE : OP_GET_LOG;
    assign m_cmd_tag    = 8'(QDEPTH);
    assign m_cmd_lba    = k_q == K_FEAT ? c10[7:0] : 8'd0;
    assign m_cmd_nlb    = k_q == K_FEAT && opc == A_SET_FEAT;
    assign m_cmd_dptr   = LOCAL_ADDR;
    assign m_cmd_aux    = m_cmd_nlb ? c11 : 32'd0;
    assign m_cqe_sqhd   = q_sqhd;
    assign m_cqe_cid    = c0[31:16];
    assign m_cqe_status = {q_st != SC_OK, 3'b000, q_st};
    assign m_cqe_dw0    = q_dw0;
    assign m_cqe_valid  = a_q == S_CQE;


    logic [7:0]  acc_q;                              // wr_acc once the burst was taken
    logic [QW-1:0] del_qid;
    assign del_qid = QW'(c10[15:0]);

    always_ff @(posedge clk) begin
        case (a_q)
            S_IDLE: if (s_adm_valid && !orph_q) begin
                q_sqe  <= s_adm_data;
                q_sqhd <= s_adm_sqhd;
                a_q    <= S_DEC;
            end
            S_DEC: begin
                q_st    <= dec_st;
                q_dw0   <= dec_dw0;
                k_q     <= dec_kind;
                w_n_q   <= dec_n;
                w_off_q <= opc == A_GET_LOG ? log_off[9:2] : 8'd0;
                w_fw_q  <= dec_fw;
                a_q     <= dec_next;
                if (dec_st == SC_OK) begin
                    if (opc == A_SET_FEAT) begin
                        if (c10[7:0] == FID_VWC) vwc_q <= c11[0];
                        if (c10[7:0] == FID_IC)  ic_q  <= c11;
                        if (c10[7:0] == FID_AEC) aec_q <= c11;
                    end
                    if (opc == A_AER) aer_n_q <= aer_n_q + 3'd1;
                end
            end
            S_QOP: if (m_qop_ready) a_q <= S_QRSP;
            S_QRSP: if (s_qrsp_valid) begin
                q_st <= s_qrsp_status;
                a_q  <= (s_qrsp_status == SC_OK && opc == A_DEL_SQ) ? S_DRAIN : S_ROOM;
            end
            S_DRAIN: if (!sq_busy[del_qid]) a_q <= S_ROOM;
            S_SET: if (m_set_ready) a_q <= S_SETW;
            S_SETW: if (s_setr_valid) begin
                case (s_setr_status)
                    2'd0: a_q <= w_fw_q ? S_FW : S_WR;
                    2'd1: begin q_st <= SC_PRP_OFFSET; a_q <= S_ROOM; end
                    2'd2: begin q_st <= SC_XFER; a_q <= S_ROOM; end
                    default: begin q_st <= SC_INTERNAL; a_q <= S_ROOM; end
                endcase
                w_cnt_q <= '0;
            end
            // a controller reset does not wait for the firmware: the command ends Internal Error (its
            // CQE is dropped by the reset) and its answer, still to come, is abandoned (its words and
            // completion are swallowed when they come); a request not yet taken stays offered, its
            // fields unchanged, until it is taken (orph_q: a stream never withdraws a beat; the next
            // admin SQE waits for it), and its answer is abandoned likewise
            S_FW: if (m_cmd_ready) a_q <= S_FWW;
                  else if (st_dis) begin q_st <= SC_INTERNAL; a_q <= S_ROOM; orph_q <= 1'b1; end
            S_FWW: if (!s_cpl_valid && st_dis) begin
                q_st <= SC_INTERNAL; a_q <= S_ROOM;
            end else if (s_cpl_valid && stale_q == '0) begin
                if (s_cpl_status != ats_host_pkg::STS_OK) begin
                    q_st <= ats_nvme_pkg::map_status(s_cpl_status); a_q <= S_ROOM;
                end else if (k_q == K_FEAT) begin
                    q_dw0 <= s_cpl_result; a_q <= S_ROOM;        // FEATURE: the value is DW0, no data
                end else begin
                    a_q <= S_WR;
                end
            end
            S_WR: if (m_wwr_valid && m_wwr_ready && m_wwr_last) a_q <= S_SNAP;
            S_SNAP: begin acc_q <= wr_acc; a_q <= S_WAIT; end      // the burst is counted by now
            S_WAIT: if (ats_nvme_pkg::reached(wr_done, acc_q)) a_q <= S_CHK;
            S_CHK: begin
                if (slot_err) q_st <= SC_XFER;
                a_q <= S_ROOM;
            end
            S_ROOM: if (cq_room) a_q <= S_CQE;             // CQ 0: only this block posts there
            S_CQE: if (m_cqe_ready) a_q <= S_IDLE;
            default: a_q <= S_IDLE;
        endcase
        // window write stages
        if (a_q == S_WR && w_adv) begin
            m_wwr_valid <= s1_v_q;
            m_wwr_data  <= gen(k_q, s1_j_q, s1_bv_q ? s1_bw_q : 32'd0);
            m_wwr_last  <= s1_last_q;
            s1_v_q      <= w_more;
            if (w_more) begin
                s1_j_q    <= w_j;
                s1_bw_q   <= buf_q[w_j[6:0]];
                s1_bv_q   <= {1'b0, w_j[6:0]} < lw_i_q;        // a short answer reads 0 beyond its end
                s1_last_q <= w_cnt_q + 15'd1 == w_n_q;
                w_cnt_q   <= w_cnt_q + 15'd1;
            end
        end
        if (!st_rdy) begin
            vwc_q <= 1'b1; ic_q <= '0; aec_q <= '0; aer_n_q <= '0;
        end
        if (orph_q && m_cmd_ready) orph_q <= 1'b0;
        stale_q <= stale_q + 2'((a_q == S_FWW && !s_cpl_valid && st_dis) || (a_q == S_FW && !m_cmd_ready && st_dis))
                           - 2'(s_cpl_valid && stale_q != '0);
        if (rst) begin
            a_q <= S_IDLE; m_wwr_valid <= 1'b0; s1_v_q <= 1'b0; stale_q <= '0; orph_q <= 1'b0;
            vwc_q <= 1'b1; ic_q <= '0; aec_q <= '0; aer_n_q <= '0;
        end
    end
`ifdef ATS_NVME_CGATE
    // simulation only: busy, the activity input of the front end's clock gate (ats_nvme):
    // an admin command running (its data burst included), answers abandoned
    // by a controller reset still to come
    logic sim_busy;
    assign sim_busy = a_q != S_IDLE || m_wwr_valid || s1_v_q || stale_q != '0 || orph_q;
`endif
endmodule

`resetall
