// SPDX-License-Identifier: Apache-2.0
// ats_fw_bridge: the firmware's side of the backend's firmware port (rtl/backend/README.md
// "Firmware port"). The CPU fills a request (fields from CSRs) and pulses `go`; the bridge sends the
// request on m_fw, streams the page from its page buffer on m_fwd for the operations that carry data
// (NPROG, RELOC), takes every response beat on s_fwr, writes the beats of an NREAD into the page
// buffer (word i of the response at buffer word i: the page, then the 5 spare words) and keeps the
// last beat's status, ppn, mapped flag and data in registers. The CPU reads and writes the page
// buffer through a simple memory port (the SoC maps it on the bus) while the bridge is idle.
// So the GC copies a page without the CPU touching its data: NREAD into the buffer, RELOC from it.
// Theory of operation and register use: rtl/soc/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_fw_bridge #(
    parameter int PAGE_BYTES = 4096,   // data bytes per NAND page (multiple of 4)
    parameter int PPN_W      = 16      // the remap engine's physical page number width
) (
    input  wire logic              clk,
    input  wire logic              rst,          // synchronous, active high
    // ---- control (CSRs)
    input  wire logic              go,           // one-cycle pulse: send the request below
    input  wire logic [2:0]        req_op,       // 0 NREAD, 1 NPROG, 2 NERASE, 3 REMAP, 4 RELOC, 5 SEQSET
    input  wire logic [2:0]        req_chan,
    input  wire logic [1:0]        req_way,
    input  wire logic [11:0]       req_block,
    input  wire logic [7:0]        req_page,
    input  wire logic [3:0]        req_rop,
    input  wire logic [5:0]        req_txid,
    input  wire logic [31:0]       req_lpn,
    input  wire logic [PPN_W-1:0]  req_ppn,
    input  wire logic [63:0]       req_seq,
    input  wire logic [31:0]       req_epoch,
    input  wire logic [7:0]        req_flags,
    input  wire logic [1:0]        req_kind,
    output wire logic              busy,         // from go until the response's last beat is taken
    output logic      [7:0]        rsp_status,   // of the last response beat
    output logic      [PPN_W-1:0]  rsp_ppn,
    output logic                   rsp_mapped,
    output logic      [31:0]       rsp_data,
    output logic      [15:0]       rsp_beats,    // beats of the last response
    output logic      [31:0]       ops_done,     // responses completed since reset
    output logic                   err_overrun,  // sticky: go while busy (ignored)
    output logic                   err_conflict, // sticky: a CPU buffer access while busy (ignored)
    // ---- page buffer, CPU port (read latency 1; ignored while busy, reads then return 0)
    input  wire logic              cpu_en,
    input  wire logic              cpu_we,
    input  wire logic [$clog2(PAGE_BYTES/4+8)-1:0] cpu_addr,
    input  wire logic [31:0]       cpu_wdata,
    output logic      [31:0]       cpu_rdata,
    // ---- the backend's firmware port
    output wire logic              m_fw_valid,
    input  wire logic              m_fw_ready,
    output wire logic [2:0]        m_fw_op,
    output wire logic [2:0]        m_fw_chan,
    output wire logic [1:0]        m_fw_way,
    output wire logic [11:0]       m_fw_block,
    output wire logic [7:0]        m_fw_page,
    output wire logic [3:0]        m_fw_rop,
    output wire logic [5:0]        m_fw_txid,
    output wire logic [31:0]       m_fw_lpn,
    output wire logic [PPN_W-1:0]  m_fw_ppn,
    output wire logic [63:0]       m_fw_seq,
    output wire logic [31:0]       m_fw_epoch,
    output wire logic [7:0]        m_fw_flags,
    output wire logic [1:0]        m_fw_kind,
    output wire logic              m_fwd_valid,
    input  wire logic              m_fwd_ready,
    output wire logic [31:0]       m_fwd_data,
    output wire logic              m_fwd_last,
    input  wire logic              s_fwr_valid,
    output wire logic              s_fwr_ready,
    input  wire logic [7:0]        s_fwr_status,
    input  wire logic [31:0]       s_fwr_data,
    input  wire logic              s_fwr_last,
    input  wire logic [PPN_W-1:0]  s_fwr_ppn,
    input  wire logic              s_fwr_mapped
);
    localparam int PW    = PAGE_BYTES / 4;           // data words of a page
    localparam int DEPTH = 1 << $clog2(PW + 8);      // page + 5 spare words, rounded up
    localparam int AW    = $clog2(PW + 8);
    localparam logic [2:0] OP_NREAD = 3'd0, OP_NPROG = 3'd1, OP_RELOC = 3'd4;
    if (PAGE_BYTES % 4 != 0 || PAGE_BYTES < 16) begin : g_check_page
        $fatal(1, "ats_fw_bridge: PAGE_BYTES must be a multiple of 4, at least 16 (%m)");
    end

    typedef enum logic [1:0] {ST_IDLE, ST_REQ, ST_DATA, ST_RSP} state_e;
    state_e st_q;

    // ---- request register
    logic [2:0]       op_q, chan_q;
    logic [1:0]       way_q, kind_q;
    logic [11:0]      block_q;
    logic [7:0]       page_q, flags_q;
    logic [3:0]       rop_q;
    logic [5:0]       txid_q;
    logic [31:0]      lpn_q, epoch_q;
    logic [PPN_W-1:0] ppn_q;
    logic [63:0]      seq_q;
    assign m_fw_valid = (st_q == ST_REQ);
    assign m_fw_op = op_q;       assign m_fw_chan = chan_q;   assign m_fw_way = way_q;
    assign m_fw_block = block_q; assign m_fw_page = page_q;   assign m_fw_rop = rop_q;
    assign m_fw_txid = txid_q;   assign m_fw_lpn = lpn_q;     assign m_fw_ppn = ppn_q;
    assign m_fw_seq = seq_q;     assign m_fw_epoch = epoch_q; assign m_fw_flags = flags_q;
    assign m_fw_kind = kind_q;
    assign busy = (st_q != ST_IDLE);

    // ---- page buffer: one port, the CPU's while idle, the bridge's while busy
    logic [31:0]   mem [DEPTH];
    logic [AW-1:0] rd_i_q;        // next buffer word to read for m_fwd
    logic          rd_pend_q;     // a buffer read issued last cycle: its word is in mem_q now
    logic [31:0]   mem_q;
    logic          fwd_v_q;       // m_fwd output register
    logic [31:0]   fwd_d_q;
    logic          fwd_last_q;
    logic [AW:0]   wr_i_q;        // next buffer word an NREAD response beat goes to (beats past DEPTH: dropped)
    assign m_fwd_valid = fwd_v_q;
    assign m_fwd_data  = fwd_d_q;
    assign m_fwd_last  = fwd_last_q;
    assign s_fwr_ready = (st_q == ST_RSP);

    // Simulation-only clock gate (ats_sim_cgate, ATS_SIM_CGATE; a wire in synthesis and without the
    // define): the bridge's registers run while `go` pulses, the CPU addresses the buffer (and the
    // edge after: cpu_rd_q), the request is offered and taken, the page streams out (ST_DATA, a
    // buffer read or an m_fwd word pending), a response beat is offered, and for HOLD edges after.
    // Otherwise every register keeps its value at every edge (waiting in ST_REQ for m_fw_ready or in
    // ST_RSP for a beat: an NERASE's whole array time) but mem_q, which is read only through
    // cpu_rdata after a CPU read (cpu_rd_q, set at an edge that cpu_en, in act, opened). Every input
    // in act is a register of the LiteX SoC (the CSR's write pulse, the bus decode) or of the backend
    // (its ready, its response valid), stable at the falling edge where the gate decides; a closed
    // gate lets the harness skip cycles (rtl/soc/README.md "Simulation cost").
    logic gclk, cpu_rd_q;
    ats_sim_cgate #(.W(1), .HOLD(2), .ID(21), .FALL(1)) u_cg_bridge (
        .clk, .rst, .gclk, .watch(1'b0),
        .act(go || cpu_en || cpu_rd_q || (m_fw_valid && m_fw_ready) || st_q == ST_DATA || rd_pend_q ||
             fwd_v_q || s_fwr_valid));

    logic fwr_fire, fwd_fire, rd_issue, bwr;
    assign fwr_fire = s_fwr_valid && s_fwr_ready;
    assign fwd_fire = m_fwd_valid && m_fwd_ready;
    // one word in flight at a time: read when neither a read nor an unsent word is pending
    assign rd_issue = (st_q == ST_DATA) && !rd_pend_q && (!fwd_v_q || fwd_fire) &&
                      32'(rd_i_q) < PW;
    assign bwr = fwr_fire && op_q == OP_NREAD && 32'(wr_i_q) < DEPTH;

    always_ff @(posedge gclk) begin
        if (bwr) mem[wr_i_q[AW-1:0]] <= s_fwr_data;
        else if (!busy && cpu_en && cpu_we) mem[cpu_addr] <= cpu_wdata;
        mem_q <= mem[busy ? rd_i_q : cpu_addr];
    end
    always_ff @(posedge gclk) cpu_rd_q <= cpu_en && !cpu_we && !busy;
    assign cpu_rdata = cpu_rd_q ? mem_q : 32'd0;

    always_ff @(posedge gclk) begin
        if (rst) begin
            st_q <= ST_IDLE;
            rd_pend_q <= 1'b0;
            fwd_v_q <= 1'b0;
            ops_done <= 32'd0;
            err_overrun <= 1'b0;
            err_conflict <= 1'b0;
            rsp_status <= 8'd0;
            rsp_beats <= 16'd0;
            rsp_ppn <= '0;
            rsp_mapped <= 1'b0;
            rsp_data <= 32'd0;
        end else begin
            if (busy && go) err_overrun <= 1'b1;
            if (busy && cpu_en) err_conflict <= 1'b1;
            if (fwd_fire) fwd_v_q <= 1'b0;
            rd_pend_q <= rd_issue;
            if (rd_issue) rd_i_q <= rd_i_q + AW'(1);
            if (rd_pend_q) begin
                fwd_v_q    <= 1'b1;
                fwd_d_q    <= mem_q;
                fwd_last_q <= 32'(rd_i_q) == PW;     // rd_i_q already counts the word read
            end
            case (st_q)
                ST_IDLE: if (go) begin
                    op_q <= req_op; chan_q <= req_chan; way_q <= req_way; block_q <= req_block;
                    page_q <= req_page; rop_q <= req_rop; txid_q <= req_txid; lpn_q <= req_lpn;
                    ppn_q <= req_ppn; seq_q <= req_seq; epoch_q <= req_epoch; flags_q <= req_flags;
                    kind_q <= req_kind;
                    rd_i_q <= '0;
                    wr_i_q <= '0;
                    rsp_beats <= 16'd0;
                    st_q <= ST_REQ;
                end
                ST_REQ: if (m_fw_ready)
                    st_q <= (op_q == OP_NPROG || op_q == OP_RELOC) ? ST_DATA : ST_RSP;
                ST_DATA: if (fwd_fire && fwd_last_q) st_q <= ST_RSP;
                ST_RSP: if (fwr_fire) begin
                    if (!wr_i_q[AW]) wr_i_q <= wr_i_q + (AW+1)'(1);
                    rsp_beats  <= rsp_beats + 16'd1;
                    rsp_status <= s_fwr_status;
                    rsp_ppn    <= s_fwr_ppn;
                    rsp_mapped <= s_fwr_mapped;
                    rsp_data   <= s_fwr_data;
                    if (s_fwr_last) begin
                        ops_done <= ops_done + 32'd1;
                        st_q <= ST_IDLE;
                    end
                end
                default: st_q <= ST_IDLE;
            endcase
        end
    end
endmodule

`resetall
