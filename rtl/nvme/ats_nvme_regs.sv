// SPDX-License-Identifier: Apache-2.0
// ats_nvme_regs: the NVMe controller registers of BAR0 (docs/host-interface.md §1.2).
//
// Takes one-dword register requests from ats_nvme_bar (which splits a 64-bit access into two and
// drops or zero-fills every other access), answers reads on m_rsp (in request order, one response a
// read), and turns doorbell writes into events for the queue manager (m_db). CC.EN / CC.SHN
// sequencing is the queue manager's: this block gives it the register values and an enable request
// (`en_req`, high while EN = 1 with a CC that was valid when EN rose) and shows its state in CSTS.
//
// CC is checked when EN rises (0 -> 1): CSS, MPS, AMS 0, IOSQES 6, IOCQES 4, AQA sizes 1..QSIZE-1.
// An invalid CC sets CSTS.CFS until EN falls; `en_req` then stays low.
module ats_nvme_regs #(
    parameter int NQ    = 4,      // I/O queue pairs (queue ids 1..NQ; 0 is the admin pair)
    parameter int QSIZE = 256,    // entries per queue (CAP.MQES = QSIZE-1)
    parameter int QW    = $clog2(NQ + 1)
) (
    input  logic        clk,
    input  logic        rst,

    // register requests: dword address in BAR0 (byte offset / 4)
    input  logic        s_req_valid,
    output logic        s_req_ready,
    input  logic        s_req_we,
    input  logic [11:0] s_req_addr,
    input  logic [31:0] s_req_wdata,
    // read responses (one per read request, in order)
    output logic        m_rsp_valid,
    input  logic        m_rsp_ready,
    output logic [31:0] m_rsp_data,

    // doorbell events (every aligned dword write at 0x1000 or above: queues 0..NQ, `big` beyond)
    output logic        m_db_valid,
    input  logic        m_db_ready,
    output logic        m_db_cq,        // 0: SQ tail doorbell, 1: CQ head doorbell
    output logic [QW-1:0] m_db_qid,
    output logic [15:0] m_db_value,
    output logic        m_db_big,       // value above 16 bits, or a doorbell beyond queue NQ (qid 0): invalid

    // controller configuration (to the queue manager)
    output logic        en_req,         // CC.EN with a valid CC
    output logic [1:0]  cc_shn,
    output logic [11:0] aqa_asqs,       // admin SQ size - 1
    output logic [11:0] aqa_acqs,       // admin CQ size - 1
    output logic [63:0] asq_base,
    output logic [63:0] acq_base,
    output logic [31:0] int_mask,       // INTMS / INTMC
    // controller state (from the queue manager)
    input  logic        st_rdy,
    input  logic        st_cfs,         // fatal (e.g. an invalid doorbell write)
    input  logic [1:0]  st_shst
);
    localparam int NDB = 2 * (NQ + 1);                 // doorbell dwords
    localparam logic [11:0] A_CAP_LO = 12'h000, A_CAP_HI = 12'h001, A_VS = 12'h002,
                            A_INTMS = 12'h003, A_INTMC = 12'h004, A_CC = 12'h005, A_CSTS = 12'h007,
                            A_AQA = 12'h009, A_ASQ_LO = 12'h00A, A_ASQ_HI = 12'h00B,
                            A_ACQ_LO = 12'h00C, A_ACQ_HI = 12'h00D, A_DB0 = 12'h400;
    localparam logic [63:0] CAP = (64'(QSIZE - 1) & 64'hFFFF) | (64'd1 << 16) | (64'd20 << 24) | (64'd1 << 37);

    initial begin
        if (NQ < 1 || NQ > 31) $error("ats_nvme_regs: NQ must be 1..31");
        if (QSIZE < 2 || QSIZE > 4096) $error("ats_nvme_regs: QSIZE must be 2..4096");
    end

    logic [31:0] cc_q, aqa_q, mask_q;
    logic [63:12] asq_q, acq_q;
    logic        cfs_cc_q, en_ok_q, en_prev_q;

    // one request a cycle unless a read response or a doorbell event waits
    assign s_req_ready = !(m_rsp_valid && !m_rsp_ready) && !(m_db_valid && !m_db_ready);
    logic acc, wr;
    assign acc = s_req_valid && s_req_ready;
    assign wr  = acc && s_req_we;

    function automatic logic [31:0] rd_dword(input logic [11:0] a);
        case (a)
            A_CAP_LO: rd_dword = CAP[31:0];
            A_CAP_HI: rd_dword = CAP[63:32];
            A_VS:     rd_dword = 32'h0001_0400;
            A_INTMS, A_INTMC: rd_dword = mask_q;
            A_CC:     rd_dword = cc_q;
            A_CSTS:   rd_dword = {28'd0, st_shst, st_cfs || cfs_cc_q, st_rdy};
            A_AQA:    rd_dword = aqa_q;
            A_ASQ_LO: rd_dword = {asq_q[31:12], 12'd0};
            A_ASQ_HI: rd_dword = asq_q[63:32];
            A_ACQ_LO: rd_dword = {acq_q[31:12], 12'd0};
            A_ACQ_HI: rd_dword = acq_q[63:32];
            default:  rd_dword = 32'd0;             // reserved, doorbells: read as 0
        endcase
    endfunction

    // a valid CC at EN 0 -> 1 (docs/host-interface.md §1.2)
    /* verilator lint_off UNUSEDSIGNAL */      // EN, SHN and reserved bits are not checked
    function automatic logic cc_valid(input logic [31:0] cc, input logic [31:0] aqa);
        cc_valid = cc[6:4] == 3'd0 && cc[10:7] == 4'd0 && cc[13:11] == 3'd0 &&
                   cc[19:16] == 4'd6 && cc[23:20] == 4'd4 &&
                   aqa[11:0] != 12'd0 && aqa[27:16] != 12'd0 &&
                   32'(aqa[11:0]) <= 32'(QSIZE - 1) && 32'(aqa[27:16]) <= 32'(QSIZE - 1);
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    logic [31:0] cc_d;
    logic        db_hit;
    logic [11:0] db_off;
    assign cc_d   = (wr && s_req_addr == A_CC) ? (s_req_wdata & 32'h00FF_FFF1) : cc_q;
    assign db_off = s_req_addr - A_DB0;
    assign db_hit = wr && s_req_addr >= A_DB0;          // beyond queue NQ: an event marked `big`
    logic db_beyond;
    assign db_beyond = s_req_addr >= A_DB0 + 12'(NDB);

    always_ff @(posedge clk) begin
        cc_q <= cc_d;
        en_prev_q <= cc_q[0];
        if (en_prev_q && !cc_q[0]) mask_q <= '0;         // controller reset (EN 1 -> 0): INTMS cleared
        if (wr) begin
            case (s_req_addr)
                A_INTMS:  mask_q <= mask_q | s_req_wdata;
                A_INTMC:  mask_q <= mask_q & ~s_req_wdata;
                A_AQA:    aqa_q <= s_req_wdata & 32'h0FFF_0FFF;
                A_ASQ_LO: asq_q[31:12] <= s_req_wdata[31:12];   // bits 11:0 reserved
                A_ASQ_HI: asq_q[63:32] <= s_req_wdata;
                A_ACQ_LO: acq_q[31:12] <= s_req_wdata[31:12];
                A_ACQ_HI: acq_q[63:32] <= s_req_wdata;
                default: ;
            endcase
        end
        // EN rising: check CC (with the AQA of that moment); EN falling: clear the CC fault
        if (cc_d[0] && !cc_q[0]) begin
            en_ok_q  <= cc_valid(cc_d, aqa_q);
            cfs_cc_q <= !cc_valid(cc_d, aqa_q);
        end else if (!cc_d[0]) begin
            en_ok_q  <= 1'b0;
            cfs_cc_q <= 1'b0;
        end
        if (acc && !s_req_we) begin
            m_rsp_valid <= 1'b1;
            m_rsp_data  <= rd_dword(s_req_addr);
        end else if (m_rsp_ready) begin
            m_rsp_valid <= 1'b0;
        end
        if (db_hit) begin
            m_db_valid <= 1'b1;
            m_db_cq    <= db_off[0];
            m_db_qid   <= db_beyond ? '0 : QW'(db_off[11:1]);
            m_db_value <= s_req_wdata[15:0];
            m_db_big   <= s_req_wdata[31:16] != 16'd0 || db_beyond;
        end else if (m_db_ready) begin
            m_db_valid <= 1'b0;
        end
        if (rst) begin
            cc_q <= '0; aqa_q <= '0; mask_q <= '0; asq_q <= '0; acq_q <= '0;
            en_ok_q <= 1'b0; cfs_cc_q <= 1'b0; en_prev_q <= 1'b0;
            m_rsp_valid <= 1'b0; m_rsp_data <= '0;
            m_db_valid <= 1'b0; m_db_cq <= 1'b0; m_db_qid <= '0; m_db_value <= '0; m_db_big <= 1'b0;
        end
    end

    assign en_req   = en_ok_q;
    assign cc_shn   = cc_q[15:14];
    assign aqa_asqs = aqa_q[11:0];
    assign aqa_acqs = aqa_q[27:16];
    assign asq_base = {asq_q, 12'd0};
    assign acq_base = {acq_q, 12'd0};
    assign int_mask = mask_q;
endmodule
