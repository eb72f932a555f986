// SPDX-License-Identifier: Apache-2.0
// ats_nvme_bar: the PCIe target side of the NVMe front end: BAR0 memory requests from the hard
// IP's completer-request stream (CQ, UltraScale+ AXI-Stream, 256 bits, dword aligned) go to the
// controller registers (ats_nvme_regs); reads are answered on the completer-completion stream
// (CC). docs/host-interface.md §1.2, rtl/nvme/README.md.
//
// One request at a time (register accesses are rare): tready is low from a request's first beat
// until it is done (a read: its completion sent). Requests:
//   - MemRd / MemWr of 1 or 2 dwords to BAR 0 ("register requests"):
//       - an aligned 32-bit access (1 dword, first byte enables 1111) or an aligned 64-bit access
//         (2 dwords, 8-byte aligned, both byte enables 1111) reads or writes the register dwords
//         (a 64-bit access is two dword accesses, low dword first);
//       - any other register request reads as 0 (a successful completion with the lower address and
//         byte count of its byte enables) or is ignored (a write);
//   - any other non-posted request (longer or other-BAR reads, I/O, locked reads, atomics): a
//     completion with status UR (Unsupported Request), no data;
//   - any other posted request (longer writes, messages): dropped.
// Beats after the first of a longer TLP are drained.
// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_bar #(
    parameter int NQ    = 4,
    parameter int QSIZE = 256,
    parameter int QW    = $clog2(NQ + 1)
) (
    input  logic         clk,
    input  logic         rst,

    /* verilator lint_off UNUSEDSIGNAL */      // beyond one register request: descriptor and 2 dwords
    input  logic [255:0] s_axis_cq_tdata,
    input  logic [7:0]   s_axis_cq_tkeep,      // (requests of 1-2 dwords fill a known set of lanes)
    input  logic         s_axis_cq_tlast,
    input  logic [87:0]  s_axis_cq_tuser,      // first / last byte enables only
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic         s_axis_cq_tvalid,
    output logic         s_axis_cq_tready,

    output logic [255:0] m_axis_cc_tdata,
    output logic [7:0]   m_axis_cc_tkeep,
    output logic         m_axis_cc_tlast,
    output logic [32:0]  m_axis_cc_tuser,
    output logic         m_axis_cc_tvalid,
    input  logic         m_axis_cc_tready,

    output logic         m_db_valid,
    input  logic         m_db_ready,
    output logic         m_db_cq,
    output logic [QW-1:0] m_db_qid,
    output logic [15:0]  m_db_value,
    output logic         m_db_big,

    output logic         en_req,
    output logic [1:0]   cc_shn,
    output logic [11:0]  aqa_asqs,
    output logic [11:0]  aqa_acqs,
    output logic [63:0]  asq_base,
    output logic [63:0]  acq_base,
    output logic [31:0]  int_mask,
    input  logic         st_rdy,
    input  logic         st_cfs,
    input  logic [1:0]   st_shst,

    output logic [31:0]  cnt_ur           // non-posted requests answered UR since reset
);
    localparam logic [3:0] T_MRD = 4'b0000, T_MWR = 4'b0001;
    localparam int BAR_AW = 14;                  // BAR0: 16 KiB

    typedef enum logic [2:0] {S_IDLE, S_DRAIN, S_REQ, S_RSP, S_CC} st_e;
    st_e st_q;

    // ---- the first beat of a request, decoded
    /* verilator lint_off UNUSEDSIGNAL */      // address above the BAR, reserved fields
    logic [31:0] dw0, dw2, dw3;
    /* verilator lint_on UNUSEDSIGNAL */
    assign dw0 = s_axis_cq_tdata[31:0];
    assign dw2 = s_axis_cq_tdata[95:64];
    assign dw3 = s_axis_cq_tdata[127:96];
    logic [3:0]  h_type, h_fbe, h_lbe;
    logic [10:0] h_cnt;
    logic        h_reg, h_full, h_posted;
    assign h_type = dw2[14:11];
    assign h_cnt  = dw2[10:0];
    assign h_fbe  = s_axis_cq_tuser[3:0];
    assign h_lbe  = s_axis_cq_tuser[7:4];
    assign h_reg  = (h_type == T_MRD || h_type == T_MWR) && dw3[18:16] == 3'd0 &&
                    (h_cnt == 11'd1 || h_cnt == 11'd2);
    assign h_full = h_fbe == 4'hF && (h_cnt == 11'd1 ? h_lbe == 4'h0 : (h_lbe == 4'hF && !dw0[2]));
    assign h_posted = h_type == T_MWR || h_type[3:2] == 2'b11;     // memory writes, messages

    // the request being served
    logic        r_we, r_ur, r_k;
    logic [11:0] r_addr;
    logic [63:0] r_wdata, r_rdata;
    logic [10:0] r_cnt;
    logic [3:0]  r_fbe, r_lbe;
    logic [6:0]  r_lowaddr;
    logic [15:0] r_reqid;
    logic [7:0]  r_tag;
    logic [2:0]  r_fn;            // target function (completer id)
    logic [2:0]  r_tc, r_attr;
    logic        r_last;          // the request's first beat was its last

    logic        req_ready, rsp_valid;
    logic [31:0] rsp_data;

    assign s_axis_cq_tready = (st_q == S_IDLE) || (st_q == S_DRAIN);

    // byte count of a read of 1 or 2 dwords (PCIe completer rules)
    /* verilator lint_off UNUSEDSIGNAL */      // lbe[0]: the last byte is counted from the top
    function automatic logic [12:0] byte_count(input logic [10:0] n, input logic [3:0] fbe, input logic [3:0] lbe);
        logic [2:0] lead, trail;
        if (n == 11'd1) begin
            casez (fbe)
                4'b1??1: byte_count = 13'd4;
                4'b01?1, 4'b1?10: byte_count = 13'd3;
                4'b0011, 4'b0110, 4'b1100: byte_count = 13'd2;
                default: byte_count = 13'd1;        // a single bit, or 0 (zero-length read)
            endcase
        end else begin
            lead  = fbe[0] ? 3'd0 : fbe[1] ? 3'd1 : fbe[2] ? 3'd2 : 3'd3;
            trail = lbe[3] ? 3'd0 : lbe[2] ? 3'd1 : lbe[1] ? 3'd2 : 3'd3;
            byte_count = 13'(4 * n) - 13'(lead) - 13'(trail);
        end
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    logic more;                                  // another dword of a 64-bit access follows
    assign more = !r_k && r_cnt == 11'd2;

    always_ff @(posedge clk) begin
        case (st_q)
            S_IDLE: if (s_axis_cq_tvalid) begin
                r_we      <= h_type == T_MWR;
                r_ur      <= !h_reg;
                r_k       <= 1'b0;
                r_addr    <= dw0[BAR_AW-1:2];
                r_wdata   <= s_axis_cq_tdata[191:128];
                r_rdata   <= '0;
                r_cnt     <= h_cnt;
                r_fbe     <= h_fbe;
                r_lbe     <= h_lbe;
                r_lowaddr <= {dw0[6:2], h_fbe[0] ? 2'd0 : h_fbe[1] ? 2'd1 : h_fbe[2] ? 2'd2 : h_fbe[3] ? 2'd3 : 2'd0};
                r_reqid   <= dw2[31:16];
                r_tag     <= dw3[7:0];
                r_fn      <= dw3[10:8];
                r_tc      <= dw3[27:25];
                r_attr    <= dw3[30:28];
                r_last    <= s_axis_cq_tlast;
                if (h_reg && h_full)
                    st_q <= S_REQ;                           // register read or write
                else if (!h_posted)
                    st_q <= S_CC;                            // zeros (a register read) or UR
                else if (!s_axis_cq_tlast)
                    st_q <= S_DRAIN;                         // dropped
            end
            S_DRAIN: if (s_axis_cq_tvalid && s_axis_cq_tlast) st_q <= S_IDLE;
            S_REQ: if (req_ready) begin
                if (!r_we)
                    st_q <= S_RSP;
                else if (more)
                    r_k <= 1'b1;
                else
                    st_q <= r_last ? S_IDLE : S_DRAIN;
            end
            S_RSP: if (rsp_valid) begin
                r_rdata[32*r_k +: 32] <= rsp_data;
                r_k  <= 1'b1;
                st_q <= more ? S_REQ : S_CC;
            end
            S_CC: if (m_axis_cc_tready) st_q <= r_last ? S_IDLE : S_DRAIN;
            default: st_q <= S_IDLE;
        endcase
        if (st_q == S_CC && m_axis_cc_tready && r_ur) cnt_ur <= cnt_ur + 32'd1;
        if (rst) begin
            st_q   <= S_IDLE;
            cnt_ur <= '0;
        end
    end

    // ---- the completion: one beat, descriptor DW0..2, data DW3..4
    logic [12:0] bc;
    assign bc = r_ur ? 13'd0 : byte_count(r_cnt, r_fbe, r_lbe);
    assign m_axis_cc_tvalid = st_q == S_CC;
    assign m_axis_cc_tlast  = 1'b1;
    assign m_axis_cc_tuser  = '0;
    assign m_axis_cc_tkeep  = r_ur ? 8'h07 : (r_cnt == 11'd2) ? 8'h1F : 8'h0F;
    always_comb begin
        m_axis_cc_tdata = '0;
        m_axis_cc_tdata[6:0]     = r_ur ? 7'd0 : r_lowaddr;
        m_axis_cc_tdata[28:16]   = bc;
        m_axis_cc_tdata[42:32]   = r_ur ? 11'd0 : r_cnt;
        m_axis_cc_tdata[45:43]   = r_ur ? 3'b001 : 3'b000;
        m_axis_cc_tdata[63:48]   = r_reqid;
        m_axis_cc_tdata[71:64]   = r_tag;
        m_axis_cc_tdata[74:72]   = r_fn;            // completer id {bus 0, dev 0, fn}
        m_axis_cc_tdata[91:89]   = r_tc;
        m_axis_cc_tdata[94:92]   = r_attr;
        m_axis_cc_tdata[159:96]  = r_ur ? 64'd0 : r_rdata;
    end

    ats_nvme_regs #(.NQ(NQ), .QSIZE(QSIZE), .QW(QW)) u_regs (
        .clk, .rst,
        .s_req_valid(st_q == S_REQ), .s_req_ready(req_ready), .s_req_we(r_we),
        .s_req_addr(r_addr + 12'(r_k)), .s_req_wdata(r_wdata[32*r_k +: 32]),
        .m_rsp_valid(rsp_valid), .m_rsp_ready(st_q == S_RSP), .m_rsp_data(rsp_data),
        .m_db_valid, .m_db_ready, .m_db_cq, .m_db_qid, .m_db_value, .m_db_big,
        .en_req, .cc_shn, .aqa_asqs, .aqa_acqs, .asq_base, .acq_base, .int_mask,
        .st_rdy, .st_cfs, .st_shst
    );
`ifdef ATS_NVME_CGATE
    // simulation only: busy, the activity input of the front end's clock gate (ats_nvme):
    // a BAR0 request in progress, a register answer or a doorbell event on offer
    logic sim_busy;
    assign sim_busy = st_q != S_IDLE || rsp_valid || m_db_valid;
`endif
endmodule
