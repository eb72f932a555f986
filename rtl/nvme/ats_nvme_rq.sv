// SPDX-License-Identifier: Apache-2.0
// ats_nvme_rq: the PCIe requester of the NVMe front end (rtl/nvme/README.md): DMA reads and writes
// of host memory through the hard IP's requester-request (RQ) and requester-completion (RC)
// streams (UltraScale+ AXI-Stream, 256 bits, dword aligned, no straddling).
//
// Reads: a request {addr, ndw, id} (ndw 1..2047 dwords, dword aligned) is split into MemRd TLPs of
// at most the max read request size (MRRS, at most 512 bytes) that never cross a 4 KiB boundary;
// each takes one of TAGS tags, allocated and retired in ring order, so the data leave on m_rdat in
// request order, one dword a cycle, `last` on the request's last dword, `id` on every dword.
// Completions (possibly several a tag, in address order per tag, tags interleaved) are written into
// a TAGS x 128-dword buffer at the tag's next offset. A tag gets `err` from a completion with an
// error code or a status other than SC, from a completion marked "request completed" with data
// missing, or when no completion comes within TIMEOUT cycles of it becoming the oldest tag; it is
// finished by the completion marked "request completed" or by the timeout, never earlier, so the
// tag is not reused while pieces of its request may still come; from the error on, the tag takes
// no more data and its dwords leave as zeros with `err` = 1 (the consumer ORs `err` over a
// request; dwords that left before the error are good data). Completions for a
// tag that is not waiting (late or unknown) are dropped and counted (`cnt_late`); data beyond what
// a tag asked for are dropped. (A completion that arrives after its tag timed out AND the tag was
// reused would land in the new request: PCIe forbids completions after the completion timeout.)
//
// A request with ndw = 0 is an error: nothing is sent; a read gives one dword (0, `err`, `last`), a
// write consumes no data and gives `m_wdone` with `m_wdone_err`.
//
// Writes: a request {addr, ndw, id} on s_wreq and its ndw dwords on s_wdat become MemWr TLPs of at
// most the max payload size (MPS) that never cross 4 KiB. `m_wdone` pulses (with `id`) when the
// request's last beat has been accepted by the hard IP (RQ valid and ready): posted writes stay in
// order, so a later write (a CQE) can never overtake it, and an MSI raised after `m_wdone` leaves
// the IP after it.
//
// Without bus master enable nothing is sent: reads finish at once with `err`, write data are
// dropped and `m_wdone_err` is set. RQ carries read and write TLPs, alternating at TLP boundaries.
//
// `wr_ur`: the completer refused a write. High in the cycle RQ accepts (valid, ready) the last beat
// of a MemWr TLP, it marks that TLP dropped by the completer (Unsupported Request): the request it
// belongs to ends with `m_wdone_err`. PCIe gives a posted write no completion, so only a root port
// that reports it drives this (the full-system simulation's, for a write outside host memory:
// docs/host-port.md "NVMe build"); with the hard IP it is tied to 0.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_rq #(
    parameter int TAGS    = 8,       // outstanding read TLPs (a power of two, 2..8: one DP16KD a half)
    parameter int IDW     = 4,       // client id bits
    parameter int TIMEOUT = 65536    // cycles a read TLP may wait as the oldest
) (
    input  wire logic         clk,
    input  wire logic         rst,

    output      logic [255:0] m_axis_rq_tdata,
    output      logic [7:0]   m_axis_rq_tkeep,
    output      logic         m_axis_rq_tlast,
    output      logic [61:0]  m_axis_rq_tuser,
    output      logic         m_axis_rq_tvalid,
    input  wire logic         m_axis_rq_tready,

    /* verilator lint_off UNUSEDSIGNAL */       // byte enables, SOF/EOF flags, parity
    input  wire logic [255:0] s_axis_rc_tdata,
    input  wire logic [7:0]   s_axis_rc_tkeep,
    input  wire logic         s_axis_rc_tlast,
    input  wire logic [74:0]  s_axis_rc_tuser,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic         s_axis_rc_tvalid,
    output      logic         s_axis_rc_tready,

    input  wire logic [1:0]   cfg_max_payload,    // MPS: 128 << n bytes
    input  wire logic [2:0]   cfg_max_read_req,   // MRRS: 128 << n bytes (used up to 512)
    input  wire logic         bme,                // bus master enable
    input  wire logic         wr_ur,              // the write TLP whose last beat RQ takes now was refused

    input  wire logic         s_rreq_valid,
    output      logic         s_rreq_ready,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [63:0]  s_rreq_addr,        // bits 1:0 ignored
    input  wire logic [10:0]  s_rreq_ndw,         // 1..2047 (0: an error)
    input  wire logic [IDW-1:0] s_rreq_id,

    output      logic         m_rdat_valid,
    input  wire logic         m_rdat_ready,
    output      logic [31:0]  m_rdat_data,
    output      logic         m_rdat_last,
    output      logic         m_rdat_err,
    output      logic [IDW-1:0] m_rdat_id,

    input  wire logic         s_wreq_valid,
    output      logic         s_wreq_ready,
    input  wire logic [63:0]  s_wreq_addr,        // bits 1:0 ignored
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [10:0]  s_wreq_ndw,         // 1..2047 (0: an error)
    input  wire logic [IDW-1:0] s_wreq_id,
    input  wire logic         s_wdat_valid,
    output      logic         s_wdat_ready,
    input  wire logic [31:0]  s_wdat_data,

    output      logic         m_wdone,            // one-cycle pulse: a write request is issued
    output      logic [IDW-1:0] m_wdone_id,
    output      logic         m_wdone_err,        // dropped (no bus master enable) or refused (wr_ur)

    output      logic [31:0]  cnt_rd_err,         // read TLPs finished with an error (timeouts included)
    output      logic [31:0]  cnt_timeout,
    output      logic [31:0]  cnt_late            // completions dropped
);
    localparam int TW   = $clog2(TAGS);
    localparam int SLOT = 128;                    // dwords a tag (MRRS at most 512 bytes)
    localparam int BAW  = TW + 7;
    localparam int TOW  = $clog2(TIMEOUT + 1);

    if (TAGS < 2 || TAGS > 8 || (TAGS & (TAGS - 1)) != 0) begin : g_check_tags
        $fatal(1, "ats_nvme_rq: TAGS must be a power of two in 2..8");
    end

    // ---------------------------------------------------------------- limits
    logic [10:0] mrrs_dw, mps_dw;
    assign mrrs_dw = (cfg_max_read_req == 3'd0) ? 11'd32 : (cfg_max_read_req == 3'd1) ? 11'd64 : 11'd128;
    assign mps_dw  = 11'd32 << cfg_max_payload;

    // dwords of a request left at addr, limited by `lim` and by the next 4 KiB boundary
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [10:0] chunk(input logic [63:0] a, input logic [10:0] left, input logic [10:0] lim);
        logic [10:0] to4k;
        to4k = 11'd1024 - {1'b0, a[11:2]};
        chunk = left;
        if (chunk > lim)  chunk = lim;
        if (chunk > to4k) chunk = to4k;
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------------------------------------------------------- the tag ring
    logic [TW-1:0] iss_q, ret_q;                 // next tag to issue, oldest tag
    logic [TW:0]   used_q;
    logic [TAGS-1:0] t_busy, t_done, t_err, t_last;
    logic [7:0]    t_len [TAGS];                 // dwords asked (1..128)
    logic [6:0]    t_lm1 [TAGS];                 // the same minus 1 (the read-out's equality compare)
    logic [7:0]    t_rcv [TAGS];                 // dwords received
    logic [IDW-1:0] t_id [TAGS];

    // ---------------------------------------------------------------- read issue
    logic        rd_act_q;
    logic [63:0] rd_addr_q;
    logic [10:0] rd_left_q;
    logic [IDW-1:0] rd_id_q;
    logic        rd_bad_q;           // ndw 0: one error dword, nothing sent
    // the next TLP's size, registered (timing): valid the cycle after the address / count settle
    logic [10:0] rd_n;
    logic        rd_nv_q;
    always_ff @(posedge clk) rd_n <= chunk(rd_addr_q, rd_left_q, mrrs_dw);
    assign s_rreq_ready = !rd_act_q;

    logic        rd_tlp_valid, rd_tlp_take, rd_alloc;
    logic        rd_nosend;          // the TLP is not sent: it finishes at once with `err`
    assign rd_nosend = !bme || rd_bad_q;
    assign rd_tlp_valid = rd_act_q && rd_nv_q && used_q != (TW+1)'(TAGS) && !rd_nosend;
    assign rd_alloc = rd_act_q && rd_nv_q && used_q != (TW+1)'(TAGS) && (rd_nosend || rd_tlp_take);

    // ---------------------------------------------------------------- write packer
    logic        wr_act_q;           // a request is being sent
    logic [63:0] wr_addr_q;          // address of the next TLP
    logic [10:0] wr_left_q;          // dwords of the request not yet in a TLP
    logic [IDW-1:0] wr_id_q;
    logic        wr_tlp_q;           // a TLP is open (its descriptor is in the beat)
    logic [10:0] wr_tn_q;            // dwords of the open TLP still to collect
    logic [255:0] wb_data_q;
    logic [7:0]  wb_keep_q;
    logic [2:0]  wb_lane_q;          // next data lane
    logic        wb_full_q;          // the beat waits for RQ
    logic        wb_last_q;          // it ends its TLP
    logic        wb_done_q;          // it ends the request
    logic [IDW-1:0] o_id_q;           // the request of the beat in the RQ output register
    logic        o_err_q;
    logic        wr_drop_q;          // the open TLP is dropped (no bus master enable when opened)
    logic        wr_derr_q;          // a TLP of the request was dropped
    logic        wr_beat_take;
    logic [10:0] wr_n;
    logic        wr_nv_q;
    always_ff @(posedge clk) wr_n <= chunk(wr_addr_q, wr_left_q, mps_dw);
    assign s_wreq_ready = !wr_act_q;
    assign s_wdat_ready = wr_tlp_q && !wb_full_q;

    // ---------------------------------------------------------------- RQ output
    logic        in_wr_q;            // a write TLP is part sent: hold RQ for it
    logic        out_done_q;         // the RQ output beat is the last of a write request
    logic        out_wr_q;           // the RQ output beat is a write beat
    logic        ur_end, ur_mid;     // wr_ur for the request in the output register: its last TLP, an earlier one
    assign ur_end = wr_ur && m_axis_rq_tvalid && m_axis_rq_tready && m_axis_rq_tlast && out_wr_q && out_done_q;
    assign ur_mid = wr_ur && m_axis_rq_tvalid && m_axis_rq_tready && m_axis_rq_tlast && out_wr_q && !out_done_q;
    logic        rr_q;               // 1: a write goes first when both wait
    logic        pick_wr;
    assign pick_wr = wb_full_q && !wr_drop_q && (in_wr_q || !rd_tlp_valid || rr_q);
    assign wr_beat_take = wb_full_q && !wr_drop_q && (!m_axis_rq_tvalid || m_axis_rq_tready) && pick_wr;
    assign rd_tlp_take  = rd_tlp_valid && (!m_axis_rq_tvalid || m_axis_rq_tready) && !pick_wr && !in_wr_q;

    always_ff @(posedge clk) begin
        if (m_axis_rq_tvalid && m_axis_rq_tready) begin
            m_axis_rq_tvalid <= 1'b0;
            out_done_q <= 1'b0;
        end
        if (wr_beat_take) begin
            out_done_q <= wb_done_q;
            out_wr_q   <= 1'b1;
            m_axis_rq_tvalid <= 1'b1;
            m_axis_rq_tdata  <= wb_data_q;
            m_axis_rq_tkeep  <= wb_keep_q;
            m_axis_rq_tlast  <= wb_last_q;
            in_wr_q <= !wb_last_q;
            if (wb_last_q) rr_q <= 1'b0;
        end else if (rd_tlp_take) begin
            out_wr_q <= 1'b0;
            m_axis_rq_tvalid <= 1'b1;
            m_axis_rq_tdata  <= {128'd0,
                                 1'b0, 3'd0, 3'd0, 1'b0, 16'd0, 8'(iss_q),         // DW3: tag
                                 16'd0, 1'b0, 4'b0000, rd_n,                       // DW2: MemRd
                                 rd_addr_q[63:32], rd_addr_q[31:2], 2'b00};
            m_axis_rq_tkeep  <= 8'h0F;
            m_axis_rq_tlast  <= 1'b1;
            rr_q <= 1'b1;
        end
        if (rst) begin
            m_axis_rq_tvalid <= 1'b0;
            m_axis_rq_tdata  <= '0;
            m_axis_rq_tkeep  <= '0;
            m_axis_rq_tlast  <= 1'b0;
            in_wr_q <= 1'b0;
            rr_q    <= 1'b0;
            out_done_q <= 1'b0;
            out_wr_q   <= 1'b0;
        end
    end
    // byte enables: whole dwords (FBE 1111, LBE 1111 or 0000 for one dword)
    logic [10:0] rq_ndw;
    assign rq_ndw = m_axis_rq_tdata[74:64];
    assign m_axis_rq_tuser = {54'd0, (rq_ndw == 11'd1) ? 4'h0 : 4'hF, 4'hF};

    // ---------------------------------------------------------------- write packer
    always_ff @(posedge clk) begin
        m_wdone <= 1'b0;
        wr_nv_q <= 1'b1;
        if (!wr_act_q) begin
            if (s_wreq_valid) begin
                wr_act_q  <= 1'b1;
                wr_addr_q <= {s_wreq_addr[63:2], 2'b00};
                wr_left_q <= s_wreq_ndw;
                wr_id_q   <= s_wreq_id;
                wr_derr_q <= 1'b0;
                wr_nv_q   <= 1'b0;
            end
        end else if (!wr_tlp_q && !wb_full_q && wr_left_q == 11'd0) begin
            // ndw 0 (only a request can leave nothing to send here): an empty, dropped beat ends it
            wb_full_q <= 1'b1;
            wb_last_q <= 1'b1;
            wb_done_q <= 1'b1;
            wr_drop_q <= 1'b1;
            wr_derr_q <= 1'b1;
        end else if (!wr_tlp_q && !wb_full_q && wr_nv_q) begin
            // open the next TLP: its descriptor in lanes 0..3
            wr_tlp_q  <= 1'b1;
            wr_drop_q <= !bme;
            if (!bme) wr_derr_q <= 1'b1;
            wr_tn_q   <= wr_n;
            wr_nv_q   <= 1'b0;
            wr_addr_q <= wr_addr_q + {51'd0, wr_n, 2'b00};
            wr_left_q <= wr_left_q - wr_n;
            wb_data_q <= {128'd0,
                          1'b0, 3'd0, 3'd0, 1'b0, 16'd0, 8'd0,
                          16'd0, 1'b0, 4'b0001, wr_n,
                          wr_addr_q[63:32], wr_addr_q[31:2], 2'b00};
            wb_keep_q <= 8'h0F;
            wb_lane_q <= 3'd4;
        end
        if (s_wdat_valid && s_wdat_ready) begin
            wb_data_q[32*wb_lane_q +: 32] <= s_wdat_data;
            wb_keep_q[wb_lane_q] <= 1'b1;
            wb_lane_q <= wb_lane_q + 3'd1;
            wr_tn_q   <= wr_tn_q - 11'd1;
            if (wr_tn_q == 11'd1 || wb_lane_q == 3'd7) begin
                wb_full_q <= 1'b1;
                wb_last_q <= wr_tn_q == 11'd1;
                wb_done_q <= wr_tn_q == 11'd1 && wr_left_q == 11'd0;
                if (wr_tn_q == 11'd1) wr_tlp_q <= 1'b0;
            end
        end
        // a refused TLP before its request's last: the request is still the packer's
        if (ur_mid) wr_derr_q <= 1'b1;
        // (a dropped request's done waits until an earlier request's last beat was taken: one
        // m_wdone a cycle)
        if (wb_full_q && (wr_beat_take || (wr_drop_q && !out_done_q))) begin
            wb_full_q <= 1'b0;
            wb_data_q <= '0;
            wb_keep_q <= '0;
            wb_lane_q <= 3'd0;
            if (wb_done_q) begin
                wr_act_q    <= 1'b0;
                if (wr_drop_q) begin                 // nothing sent: done now
                    m_wdone     <= 1'b1;
                    m_wdone_id  <= wr_id_q;
                    m_wdone_err <= wr_derr_q;
                end else begin                       // done when the IP takes the beat
                    o_id_q  <= wr_id_q;
                    o_err_q <= wr_derr_q || ur_mid;
                end
            end
        end
        if (m_axis_rq_tvalid && m_axis_rq_tready && out_done_q) begin
            m_wdone     <= 1'b1;
            m_wdone_id  <= o_id_q;
            m_wdone_err <= o_err_q || ur_end;
        end
        if (rst) begin
            wr_act_q <= 1'b0; wr_tlp_q <= 1'b0; wr_drop_q <= 1'b0; wr_derr_q <= 1'b0; wr_nv_q <= 1'b0; wb_full_q <= 1'b0; wb_last_q <= 1'b0; wb_done_q <= 1'b0;
            wb_data_q <= '0; wb_keep_q <= '0; wb_lane_q <= 3'd0; wr_tn_q <= '0;
            wr_addr_q <= '0; wr_left_q <= '0; wr_id_q <= '0;
            m_wdone <= 1'b0; m_wdone_id <= '0; m_wdone_err <= 1'b0; o_id_q <= '0; o_err_q <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- RC: one dword a cycle
    logic         rc_held_q;          // a beat is held
    logic [255:0] rc_data_q;
    logic [2:0]   rc_lane_q;          // next lane to take
    logic         rc_lastbeat_q;      // the held beat ends its TLP
    logic         rc_intlp_q;         // later beats of a TLP follow
    logic [TW-1:0] rc_tag_q;
    logic [10:0]  rc_left_q;          // dwords of the completion still to write
    logic         rc_drop_q;          // the rest of the completion is dropped (late, unknown, error, full)
    logic         rc_fin_q;           // its "request completed" bit

    assign s_axis_rc_tready = !rc_held_q;

    // first beat: descriptor DW0..2 (lower address, byte count, requester / completer ids unused)
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] c_dw0, c_dw1, c_dw2;
    /* verilator lint_on UNUSEDSIGNAL */
    assign c_dw0 = s_axis_rc_tdata[31:0];
    assign c_dw1 = s_axis_rc_tdata[63:32];
    assign c_dw2 = s_axis_rc_tdata[95:64];
    logic [TW-1:0] c_tag;
    logic          c_known, c_err;
    assign c_tag   = c_dw2[TW-1:0];
    assign c_known = c_dw2[7:0] < 8'(TAGS) && t_busy[c_tag] && !t_done[c_tag];
    assign c_err   = c_dw0[15:12] != 4'd0 || c_dw1[13:11] != 3'd0;

    // the dword written this cycle
    logic          rc_wr;
    logic [BAW-1:0] rc_waddr;
    logic          rc_beat_end;       // the held beat has no more dwords for the buffer
    assign rc_wr = rc_held_q && !rc_drop_q && rc_left_q != 11'd0 &&
                   t_busy[rc_tag_q] && !t_done[rc_tag_q] && t_rcv[rc_tag_q] != t_len[rc_tag_q];
    assign rc_waddr = {rc_tag_q, t_rcv[rc_tag_q][6:0]};
    assign rc_beat_end = rc_drop_q || rc_left_q == 11'd0 || rc_lane_q == 3'd7 ||
                         (rc_left_q == 11'd1 && rc_wr) || t_rcv[rc_tag_q] == t_len[rc_tag_q];

    // ---------------------------------------------------------------- read out: one dword a cycle
    logic [6:0]  o_q;                  // next dword of the oldest tag
    logic        o_avail, o_issue;
    logic [3:0]  fifo_n_q;             // dwords in the output FIFO (8 entries)
    logic [1:0]  infl_q;               // RAM reads in flight (2-cycle latency)
    logic [1:0]  infl_sh_q;            // shift: a read issued 1, 2 cycles ago (bit 0, bit 1)
    logic        room_q;               // the FIFO has room for one more read (from last cycle's fill)
    logic        o_done_tag;
    // timing: o_q never passes t_rcv while the tag is not in error, so "below" is "not equal"; the
    // last dword's compare is against the stored len - 1; the FIFO room is registered (last
    // cycle's fill + reads in flight < 7 of 8 entries: at most one read is issued a cycle)
    assign o_avail = used_q != '0 && ({1'b0, o_q} != t_rcv[ret_q] || (t_done[ret_q] && t_err[ret_q]));
    assign o_issue = o_avail && room_q;
    assign o_done_tag = o_issue && o_q == t_lm1[ret_q];

    // meta of the reads in flight, then the FIFO (8 entries)
    logic [IDW+1:0] m1_q, m2_q;        // {last, err, id}
    logic [1:0]     zero_sh_q;         // the dword is a filler (zeros)
    logic [31:0]    ram_rd;
    logic [31:0]    f_data [8];
    logic [IDW+1:0] f_meta [8];
    logic [2:0]     f_rd_q, f_wr_q;

    // ---------------------------------------------------------------- tag state
    logic [TOW-1:0] to_q;
    logic           to_fire;
    assign to_fire = used_q != '0 && t_busy[ret_q] && !t_done[ret_q] && to_q == TOW'(TIMEOUT - 1);

    always_ff @(posedge clk) begin
        // issue
        rd_nv_q <= 1'b1;
        if (s_rreq_valid && s_rreq_ready) begin
            rd_nv_q   <= 1'b0;
            rd_act_q  <= 1'b1;
            rd_addr_q <= {s_rreq_addr[63:2], 2'b00};
            rd_left_q <= (s_rreq_ndw == 11'd0) ? 11'd1 : s_rreq_ndw;
            rd_bad_q  <= s_rreq_ndw == 11'd0;
            rd_id_q   <= s_rreq_id;
        end
        if (rd_alloc) begin
            t_busy[iss_q] <= 1'b1;
            t_done[iss_q] <= rd_nosend;
            t_err[iss_q]  <= rd_nosend;
            t_last[iss_q] <= rd_left_q == rd_n;
            t_len[iss_q]  <= 8'(rd_n);
            t_lm1[iss_q]  <= 7'(rd_n - 11'd1);
            t_rcv[iss_q]  <= '0;
            t_id[iss_q]   <= rd_id_q;
            iss_q     <= iss_q + TW'(1);
            rd_nv_q   <= 1'b0;
            rd_addr_q <= rd_addr_q + {51'd0, rd_n, 2'b00};
            rd_left_q <= rd_left_q - rd_n;
            if (rd_left_q == rd_n) rd_act_q <= 1'b0;
        end

        // RC: take a beat, write its dwords one a cycle
        if (s_axis_rc_tvalid && s_axis_rc_tready) begin
            rc_held_q     <= 1'b1;
            rc_data_q     <= s_axis_rc_tdata;
            rc_lastbeat_q <= s_axis_rc_tlast;
            rc_intlp_q    <= !s_axis_rc_tlast;
            if (!rc_intlp_q) begin
                rc_tag_q  <= c_tag;
                rc_left_q <= c_dw1[10:0];
                rc_lane_q <= 3'd3;
                // a tag in error takes no more data; its last piece ("request completed") finishes it
                rc_drop_q <= !c_known || c_err || t_err[c_tag];
                rc_fin_q  <= c_dw0[30];
                if (!c_known) cnt_late <= cnt_late + 32'd1;
                if (c_known && (c_err || t_err[c_tag])) begin
                    t_err[c_tag] <= 1'b1;
                    if (c_dw0[30]) t_done[c_tag] <= 1'b1;
                end
            end else begin
                rc_lane_q <= 3'd0;
            end
        end
        if (rc_held_q) begin
            if (rc_wr) begin
                t_rcv[rc_tag_q] <= t_rcv[rc_tag_q] + 8'd1;
                rc_left_q <= rc_left_q - 11'd1;
                rc_lane_q <= rc_lane_q + 3'd1;
                if (t_rcv[rc_tag_q] == {1'b0, t_lm1[rc_tag_q]}) begin     // (t_rcv + 1 == t_len)
                    t_done[rc_tag_q] <= 1'b1;
                    rc_drop_q <= 1'b1;                      // the tag has its data: drop the rest
                end
            end
            if (rc_beat_end) begin
                rc_held_q <= 1'b0;
                // the end of a completion marked "request completed" with data missing: an error
                if (rc_lastbeat_q && !rc_drop_q && rc_fin_q &&
                    (rc_wr ? t_rcv[rc_tag_q] != {1'b0, t_lm1[rc_tag_q]} : t_rcv[rc_tag_q] != t_len[rc_tag_q])) begin
                    t_done[rc_tag_q] <= 1'b1;
                    t_err[rc_tag_q]  <= 1'b1;
                end
            end
        end

        // timeout of the oldest tag
        if (used_q == '0 || !t_busy[ret_q] || t_done[ret_q] || (rc_held_q && rc_tag_q == ret_q) ||
            (s_axis_rc_tvalid && s_axis_rc_tready && !rc_intlp_q && c_tag == ret_q))
            to_q <= '0;
        else
            to_q <= to_q + TOW'(1);
        if (to_fire) begin
            t_done[ret_q] <= 1'b1;
            t_err[ret_q]  <= 1'b1;
            cnt_timeout   <= cnt_timeout + 32'd1;
        end

        // read TLPs that end in an error: counted when their tag retires
        if (o_done_tag && t_err[ret_q]) cnt_rd_err <= cnt_rd_err + 32'd1;

        // read out
        if (o_issue) begin
            o_q <= o_q + 7'd1;
            if (o_done_tag) begin
                o_q <= '0;
                t_busy[ret_q] <= 1'b0;
                t_done[ret_q] <= 1'b0;
                t_err[ret_q]  <= 1'b0;
                ret_q <= ret_q + TW'(1);
            end
        end
        used_q <= used_q + ((TW+1)'(rd_alloc)) - ((TW+1)'(o_done_tag));
        m1_q <= {t_last[ret_q] && o_done_tag, t_err[ret_q], t_id[ret_q]};
        m2_q <= m1_q;
        infl_sh_q <= {infl_sh_q[0], o_issue};
        zero_sh_q <= {zero_sh_q[0], t_err[ret_q]};        // once a tag is in error, zeros with `err`
        infl_q <= infl_q + 2'(o_issue) - 2'(infl_sh_q[1]);
        if (infl_sh_q[1]) begin
            f_data[f_wr_q] <= zero_sh_q[1] ? 32'd0 : ram_rd;
            f_meta[f_wr_q] <= m2_q;
            f_wr_q <= f_wr_q + 3'd1;
        end
        if (m_rdat_valid && m_rdat_ready) f_rd_q <= f_rd_q + 3'd1;
        fifo_n_q <= fifo_n_q + 4'(infl_sh_q[1]) - 4'(m_rdat_valid && m_rdat_ready);
        room_q   <= {1'b0, fifo_n_q} + {3'b0, infl_q} < 5'd7;

        if (rst) begin
            rd_act_q <= 1'b0; rd_addr_q <= '0; rd_left_q <= '0; rd_id_q <= '0; rd_nv_q <= 1'b0; rd_bad_q <= 1'b0;
            iss_q <= '0; ret_q <= '0; used_q <= '0;
            t_busy <= '0; t_done <= '0; t_err <= '0; t_last <= '0;
            for (int i = 0; i < TAGS; i++) begin
                t_len[i] <= '0; t_lm1[i] <= '0; t_rcv[i] <= '0; t_id[i] <= '0;
            end
            rc_held_q <= 1'b0; rc_intlp_q <= 1'b0; rc_lastbeat_q <= 1'b0; rc_data_q <= '0;
            rc_lane_q <= '0; rc_tag_q <= '0; rc_left_q <= '0; rc_drop_q <= 1'b0;
            rc_fin_q <= 1'b0;
            to_q <= '0; o_q <= '0; fifo_n_q <= '0; infl_q <= '0; infl_sh_q <= '0; zero_sh_q <= '0;
            room_q <= 1'b0;
            m1_q <= '0; m2_q <= '0; f_rd_q <= '0; f_wr_q <= '0;
            cnt_rd_err <= '0; cnt_timeout <= '0; cnt_late <= '0;
        end
    end

    // the read data buffer: two 16-bit halves (one DP16KD each on ECP5)
    logic [31:0] rc_dword;
    assign rc_dword = rc_data_q[32*rc_lane_q +: 32];
    for (genvar h = 0; h < 2; h++) begin : g_buf
        ats_ram_sdp #(.WIDTH(16), .DEPTH(TAGS * SLOT)) u_buf (
            .clk,
            .wr_en(rc_wr), .wr_addr(rc_waddr), .wr_data(rc_dword[16*h +: 16]),
            .rd_addr({ret_q, o_q}), .rd_data(ram_rd[16*h +: 16])
        );
    end

    assign m_rdat_valid = fifo_n_q != '0;
    assign m_rdat_data  = f_data[f_rd_q];
    assign {m_rdat_last, m_rdat_err, m_rdat_id} = f_meta[f_rd_q];

`ifdef ATS_NVME_CGATE
    // simulation only: busy, the activity input of the front end's clock gate (ats_nvme):
    // a read tag in use (its completion timeout counts while it is the
    // oldest: the gate stays open while the timeout is armed), a read or a write request being sent,
    // an RQ beat on offer, an RC beat held, read data buffered or in flight
    logic sim_busy;
    assign sim_busy = used_q != '0 || rd_act_q || wr_act_q || wb_full_q || m_axis_rq_tvalid || rc_held_q ||
                      fifo_n_q != '0 || infl_q != '0 || m_wdone;
`endif

`ifndef SYNTHESIS
    // the header's TLP rules, checked on the descriptor of every TLP that RQ offers: 1..MRRS dwords
    // for a MemRd, 1..MPS for a MemWr, never across a 4 KiB boundary
    logic rq_first_q;   // the next RQ beat starts a TLP
    always_ff @(posedge clk) begin
        if (!rst && m_axis_rq_tvalid && rq_first_q) begin
            assert (m_axis_rq_tdata[78:75] == 4'b0000 || m_axis_rq_tdata[78:75] == 4'b0001)
                else $error("ats_nvme_rq: RQ request type %h (%m)", m_axis_rq_tdata[78:75]);
            assert (rq_ndw != 11'd0 && 12'(m_axis_rq_tdata[11:2]) + 12'(rq_ndw) <= 12'd1024)
                else $error("ats_nvme_rq: TLP of %0d dwords at %h crosses 4 KiB (%m)", rq_ndw,
                            m_axis_rq_tdata[63:0]);
            assert (rq_ndw <= (m_axis_rq_tdata[75] ? mps_dw : mrrs_dw))
                else $error("ats_nvme_rq: %s TLP of %0d dwords exceeds %s (%m)",
                            m_axis_rq_tdata[75] ? "MemWr" : "MemRd", rq_ndw,
                            m_axis_rq_tdata[75] ? "MPS" : "MRRS");
        end
        if (rst) rq_first_q <= 1'b1;
        else if (m_axis_rq_tvalid && m_axis_rq_tready) rq_first_q <= m_axis_rq_tlast;
    end
`endif
endmodule

`resetall
