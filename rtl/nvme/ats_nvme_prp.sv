// SPDX-License-Identifier: Apache-2.0
// ats_nvme_prp: the NVMe front end's PRP translation (docs/host-interface.md §1.4, §1.8a;
// rtl/nvme/README.md "ats_nvme_prp"). Each command slot owns a window of 2^17 bytes: window address
// = slot << 17 | byte offset, where the offset of a transfer's first byte is PRP1's offset in its
// page and window page k is the transfer's k-th PRP page. The core (and the command decoder) read
// and write host memory at window addresses only; this block turns them into DMA requests at PCIe
// addresses on the requester's ports (ats_nvme_rq).
//
// Setup (s_set -> m_setr): {slot, PRP1, PRP2, len bytes 0..65536} walks the PRPs of a transfer of
// `len` bytes starting at PRP1 into the slot's page table (n = ceil((PRP1[11:0] + len) / 4096)
// pages): PRP1 bits 1:0 != 0 -> PRP_OFFSET; n = 2: PRP2 is the second page (bits 11:0 != 0 ->
// PRP_OFFSET); n > 2: PRP2 points to a PRP list (bits 2:0 != 0 -> PRP_OFFSET) of 8-byte entries read
// from host memory, at most up to the end of its page: with more pages left than the entries up to
// the page end, the page's last entry points to the next list page (bits 11:0 != 0 -> PRP_OFFSET).
// A page entry with bits 11:0 != 0 -> PRP_OFFSET; a list read with a DMA error -> XFER (a list read
// that has both: XFER). len > 65536 or slot >= SLOTS -> BAD (nothing is read or written, no slot
// state changes). The answer is one m_setr beat
// {slot, status}; with OK the slot's window is open for bytes [PRP1[11:0], PRP1[11:0] + len), and
// its error flag is cleared; otherwise the window is closed (every access is out of range).
//
// Window reads (s_wrd -> m_wrd): {addr, len bytes} reads the dwords covering [addr, addr + len)
// (addr bits 1:0 ignored for the alignment: ceil((addr[1:0] + len) / 4) dwords from addr & ~3), in
// order, one dword a cycle, `last` on the last. A read wholly inside its slot's open window becomes
// one DMA read per host page it touches; a dword that comes with a DMA error (`err`) is 0 and sets
// the slot's error flag. A read not wholly inside an open window (or len = 0: one dword) gives
// zeros with `err` and sets the slot's error flag (if the slot exists); nothing is sent.
//
// Window writes (s_wwr): bursts of consecutive dwords from the first beat's `addr` (dword aligned;
// `addr` of later beats ignored), `last` on the burst's last. Dwords inside the open window are
// gathered into DMA writes of at most WCHUNK dwords that never cross a host page; a dword outside
// it is dropped and sets the slot's error flag, as does a DMA write that reports `s_wdone_err`.
//
// Write ordering: `wr_acc` counts the bursts whose last dword was taken, `wr_done` the bursts whose
// every DMA write was issued on RQ (s_wdone of the write carrying their last dword, in order). A
// completion for a command whose data this block took must wait until wr_done has reached the
// value wr_acc had when the completion arrived (mod 256; fewer than 128 bursts are ever pending),
// then read the slot's error flag (`slot_err`): its CQE write then follows the data on RQ.
//
// A slot is set up only while none of its window accesses is pending (the command decoder reuses
// a slot only after its CQE was issued).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_prp #(
    parameter int SLOTS  = 33,                      // command slots (QDEPTH I/O slots + 1 admin)
    parameter int IDW    = 4,                       // DMA request id width
    parameter logic [IDW-1:0] ID_LIST = IDW'(2),    // DMA read id of PRP list reads
    parameter logic [IDW-1:0] ID_RD   = IDW'(3),    // DMA read id of window reads
    parameter logic [IDW-1:0] ID_WR   = IDW'(4),    // DMA write id of window writes
    parameter int WCHUNK = 64,                      // dwords per DMA write at most (power of two)
    parameter int SW     = $clog2(SLOTS)            // slot index width (derived: do not override)
) (
    input  wire logic          clk,
    input  wire logic          rst,

    // setup
    input  wire logic          s_set_valid,
    output      logic          s_set_ready,
    input  wire logic [SW-1:0] s_set_slot,
    input  wire logic [63:0]   s_set_prp1,
    input  wire logic [63:0]   s_set_prp2,
    input  wire logic [16:0]   s_set_len,
    output      logic          m_setr_valid,
    input  wire logic          m_setr_ready,
    output      logic [SW-1:0] m_setr_slot,
    output      logic [1:0]    m_setr_status,     // 0 OK, 1 PRP_OFFSET, 2 XFER, 3 BAD (len, slot)

    // window reads
    input  wire logic          s_wrd_valid,
    output      logic          s_wrd_ready,
    input  wire logic [31:0]   s_wrd_addr,
    input  wire logic [15:0]   s_wrd_len,
    output      logic          m_wrd_valid,
    input  wire logic          m_wrd_ready,
    output      logic [31:0]   m_wrd_data,
    output      logic          m_wrd_last,
    output      logic          m_wrd_err,

    // window writes
    input  wire logic          s_wwr_valid,
    output      logic          s_wwr_ready,
    /* verilator lint_off UNUSEDSIGNAL */             // bits 1:0: dword aligned
    input  wire logic [31:0]   s_wwr_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [31:0]   s_wwr_data,
    input  wire logic          s_wwr_last,

    // slot state
    output      logic [SLOTS-1:0] slot_err,
    output      logic [7:0]    wr_acc,
    output      logic [7:0]    wr_done,

    // DMA (ats_nvme_rq, through the top's arbiters; s_rdat carries ID_LIST and ID_RD data only,
    // s_wdone the write dones of ID_WR only)
    output      logic          m_rreq_valid,
    input  wire logic          m_rreq_ready,
    output      logic [63:0]   m_rreq_addr,
    output      logic [10:0]   m_rreq_ndw,
    output      logic [IDW-1:0] m_rreq_id,
    input  wire logic          s_rdat_valid,
    output      logic          s_rdat_ready,
    input  wire logic [31:0]   s_rdat_data,
    input  wire logic          s_rdat_last,
    input  wire logic          s_rdat_err,
    input  wire logic [IDW-1:0] s_rdat_id,
    output      logic          m_wreq_valid,
    input  wire logic          m_wreq_ready,
    output      logic [63:0]   m_wreq_addr,
    output      logic [10:0]   m_wreq_ndw,
    output      logic [IDW-1:0] m_wreq_id,
    output      logic          m_wdat_valid,
    input  wire logic          m_wdat_ready,
    output      logic [31:0]   m_wdat_data,
    input  wire logic          s_wdone,
    input  wire logic          s_wdone_err
);
    localparam int NPG   = 17;                      // pages of a window at most (64 KiB + offset)
    localparam int PTD   = SLOTS * NPG;             // page table entries
    localparam int PTW   = $clog2(PTD);
    localparam int CW    = $clog2(WCHUNK + 1);
    localparam int DFD   = 2 * WCHUNK;              // write data FIFO (two chunks)
    localparam int DFW   = $clog2(DFD);
    localparam logic [1:0] ST_OK = 2'd0, ST_OFFSET = 2'd1, ST_XFER = 2'd2, ST_BAD = 2'd3;

    if (SLOTS < 2 || SLOTS > 60) begin : g_check_slots
        $fatal(1, "ats_nvme_prp: SLOTS must be 2..60 (the page table fits one DP16KD deep) (%m)");
    end
    if (WCHUNK < 2 || WCHUNK > 1024 || (WCHUNK & (WCHUNK - 1)) != 0) begin : g_check_chunk
        $fatal(1, "ats_nvme_prp: WCHUNK must be a power of two, 2..1024 (%m)");
    end
    if (ID_LIST == ID_RD) begin : g_check_ids
        $fatal(1, "ats_nvme_prp: ID_LIST and ID_RD must differ (%m)");
    end

    // ---------------------------------------------------------------- slot state
    logic [SLOTS-1:0] v_q;                          // window open
    logic [9:0]       lo_q [SLOTS];                 // first dword of the window (PRP1[11:2])
    logic [14:0]      hi_q [SLOTS];                 // end dword (exclusive)
    logic [SLOTS-1:0] err_q;
    assign slot_err = err_q;

    function automatic logic [PTW-1:0] pt_index(input logic [SW-1:0] slot, input logic [4:0] k);
        pt_index = PTW'({slot, 4'b0}) + PTW'(slot) + PTW'(k);
    endfunction

    // the page table: two copies (one for reads, one for writes), page numbers addr[63:12] in 3 x 18 bits
    logic            pt_we;
    logic [PTW-1:0]  pt_wa;
    logic [51:0]     pt_wd;
    logic [PTW-1:0]  rd_pa, wr_pa;
    /* verilator lint_off UNUSEDSIGNAL */             // bits 53:52: padding of the 3 x 18-bit RAMs
    logic [53:0]     rd_pd, wr_pd;
    /* verilator lint_on UNUSEDSIGNAL */
    for (genvar h = 0; h < 3; h++) begin : g_pt
        ats_ram_sdp #(.WIDTH(18), .DEPTH(PTD)) u_pt_rd (
            .clk, .wr_en(pt_we), .wr_addr(pt_wa), .wr_data(18'({2'b0, pt_wd} >> (18 * h))),
            .rd_addr(rd_pa), .rd_data(rd_pd[18*h +: 18])
        );
        ats_ram_sdp #(.WIDTH(18), .DEPTH(PTD)) u_pt_wr (
            .clk, .wr_en(pt_we), .wr_addr(pt_wa), .wr_data(18'({2'b0, pt_wd} >> (18 * h))),
            .rd_addr(wr_pa), .rd_data(wr_pd[18*h +: 18])
        );
    end

    // ---------------------------------------------------------------- DMA read request register
    // one output register loaded by the setup walk (list reads, first) or the read path
    logic        list_load, rd_load, rq_free;
    logic [63:0] list_addr, rd_addr;
    logic [10:0] list_ndw, rd_ndw;
    assign rq_free = !m_rreq_valid || m_rreq_ready;

    // ---------------------------------------------------------------- setup: the PRP walk
    typedef enum logic [2:0] {S_IDLE, S_START, S_LREQ, S_LDATA, S_LEND, S_DONE} set_state_e;
    set_state_e  s_q;
    logic [SW-1:0] ss_q;                            // the slot being set up
    logic [9:0]  s_lo_q;
    logic [14:0] s_hi_q;
    logic [63:0] s_prp1_q, s_prp2_q;
    logic [16:0] s_len_q;
    logic [4:0]  s_k_q;                             // next page index to write
    logic [63:0] s_ptr_q;                           // list pointer
    logic [4:0]  s_left_q;                          // pages still to read from lists
    logic [9:0]  s_cnt_q, s_take_q;                 // entries read / used from the current list page
    logic        s_chain_q;
    logic [9:0]  s_i_q;                             // entry index in the current list read
    logic        s_ph_q;                            // dword phase (0: low dword of an entry)
    logic [31:0] s_elo_q;
    logic        s_xfer_q, s_bad_q;
    logic [63:0] s_next_q;
    logic [1:0]  s_st_q;
    logic        s_lreq_armed_q;                    // S_LREQ: the entry counts are computed

    logic        ss_ok;                             // the slot exists
    assign ss_ok = 32'(ss_q) < 32'(SLOTS);
    logic [17:0] s_end;                             // PRP1 offset + len (bytes)
    logic [9:0]  s_cap;
    assign s_end = 18'(s_prp1_q[11:0]) + 18'(s_len_q);
    assign s_cap = 10'(11'd512 - 11'(s_ptr_q[11:3]));

    assign s_set_ready = s_q == S_IDLE;
    assign list_load   = s_q == S_LREQ && s_lreq_armed_q && rq_free;
    assign list_addr   = s_ptr_q;
    assign list_ndw    = {s_cnt_q, 1'b0};

    logic        s_rd_take;                         // a list dword taken this cycle
    logic [63:0] s_entry;
    assign s_entry = {s_rdat_data, s_elo_q};

    always_comb begin
        pt_we = 1'b0;
        pt_wa = pt_index(ss_q, s_k_q);
        pt_wd = s_entry[63:12];
        if (s_q == S_START) begin
            // page 0 (and page 1 when it is PRP2) are written in S_START, one a cycle via s_k_q
            pt_we = s_k_q == 5'd0 ? (ss_ok && s_len_q != 17'd0 && s_len_q <= 17'd65536 && s_prp1_q[1:0] == 2'b0)
                                  : s_prp2_q[11:0] == 12'd0;
            pt_wd = s_k_q == 5'd0 ? s_prp1_q[63:12] : s_prp2_q[63:12];
        end else if (s_rd_take && s_ph_q && s_i_q < s_take_q && s_entry[11:0] == 12'd0) begin
            pt_we = 1'b1;
        end
    end

    always_ff @(posedge clk) begin
        case (s_q)
            S_IDLE: if (s_set_valid) begin
                ss_q     <= s_set_slot;
                s_prp1_q <= s_set_prp1;
                s_prp2_q <= s_set_prp2;
                s_len_q  <= s_set_len;
                s_k_q    <= 5'd0;
                s_q      <= S_START;
            end
            S_START: begin
                // cycle 0: checks, page 0; cycle 1 (n = 2): page 1
                if (s_k_q == 5'd0) begin
                    s_lo_q <= s_prp1_q[11:2];
                    s_hi_q <= 15'((s_end + 18'd3) >> 2);
                    s_k_q  <= 5'd1;
                    s_ptr_q  <= s_prp2_q;
                    s_left_q <= 5'(((s_end + 18'd4095) >> 12) - 18'd1);
                    if (s_len_q > 17'd65536 || !ss_ok) begin
                        s_st_q <= ST_BAD; s_q <= S_DONE;
                    end else if (s_prp1_q[1:0] != 2'b0) begin
                        s_st_q <= ST_OFFSET; s_q <= S_DONE;
                    end else if (s_end <= 18'd8192) begin
                        // 0, 1 or 2 pages: page 1 (if any) next cycle
                        s_st_q <= ST_OK;
                        if (s_end <= 18'd4096) s_q <= S_DONE;
                    end else if (s_prp2_q[2:0] != 3'b0) begin
                        s_st_q <= ST_OFFSET; s_q <= S_DONE;
                    end else begin
                        s_q <= S_LREQ;
                    end
                end else begin
                    // n = 2: PRP2 is page 1
                    s_st_q <= s_prp2_q[11:0] != 12'd0 ? ST_OFFSET : ST_OK;
                    s_q    <= S_DONE;
                end
            end
            S_LREQ: begin
                if (10'(s_left_q) <= s_cap) begin
                    s_cnt_q <= 10'(s_left_q); s_take_q <= 10'(s_left_q); s_chain_q <= 1'b0;
                end else begin
                    s_cnt_q <= s_cap; s_take_q <= s_cap - 10'd1; s_chain_q <= 1'b1;
                end
                s_i_q <= '0; s_ph_q <= 1'b0; s_xfer_q <= 1'b0; s_bad_q <= 1'b0;
                // the counts are computed in S_LREQ's first cycle; the request is loaded in a later
                // one, when the request register is free (list_load)
                if (list_load) s_q <= S_LDATA;
            end
            S_LDATA: if (s_rd_take) begin
                s_ph_q <= !s_ph_q;
                if (s_rdat_err) s_xfer_q <= 1'b1;
                if (!s_ph_q) begin
                    s_elo_q <= s_rdat_data;
                end else begin
                    if (s_i_q < s_take_q) begin
                        if (s_entry[11:0] != 12'd0) s_bad_q <= 1'b1;
                        s_k_q <= s_k_q + 5'd1;
                    end
                    if (s_chain_q && s_i_q == s_cnt_q - 10'd1) s_next_q <= s_entry;
                    s_i_q <= s_i_q + 10'd1;
                end
                if (s_rdat_last) s_q <= S_LEND;
            end
            S_LEND: begin
                s_left_q <= s_left_q - 5'(s_take_q);
                s_ptr_q  <= s_next_q;
                if (s_xfer_q) begin
                    s_st_q <= ST_XFER; s_q <= S_DONE;
                end else if (s_bad_q || (s_chain_q && s_next_q[11:0] != 12'd0)) begin
                    s_st_q <= ST_OFFSET; s_q <= S_DONE;
                end else if (s_chain_q) begin
                    s_q <= S_LREQ;
                end else begin
                    s_st_q <= ST_OK; s_q <= S_DONE;
                end
            end
            S_DONE: if (m_setr_ready) s_q <= S_IDLE;
            default: s_q <= S_IDLE;
        endcase
        if (rst) s_q <= S_IDLE;
    end

    always_ff @(posedge clk) begin
        s_lreq_armed_q <= s_q == S_LREQ && !list_load;
        if (rst) s_lreq_armed_q <= 1'b0;
    end

    assign m_setr_valid  = s_q == S_DONE;
    assign m_setr_slot   = ss_q;
    assign m_setr_status = s_st_q;

    // ---------------------------------------------------------------- read path
    typedef enum logic [2:0] {R_IDLE, R_LOOK1, R_LOOK2, R_ISSUE, R_ZERO} rd_state_e;
    rd_state_e   r_q;
    logic [SW-1:0] r_slot_q;
    logic [14:0] r_off_q;                           // next dword offset in the window
    logic [14:0] r_left_q;                          // dwords still to request
    logic [14:0] r_ndw_q;                           // dwords of the whole request (R_ZERO)
    logic        r_slot_ok_q;                       // the read's slot exists (its error flag can be set)

    logic [SW-1:0] wrd_slot;
    logic [14:0] wrd_off, wrd_ndw;
    logic        wrd_slot_ok, wrd_inb;
    logic [16:0] wrd_ndw17;
    assign wrd_slot    = s_wrd_addr[17 +: SW];
    assign wrd_slot_ok = s_wrd_addr[31:17] < 15'(SLOTS);
    assign wrd_off     = s_wrd_addr[16:2];
    assign wrd_ndw17   = 17'((18'(s_wrd_addr[1:0]) + 18'(s_wrd_len) + 18'd3) >> 2);
    assign wrd_ndw     = 15'(wrd_ndw17);
    assign wrd_inb     = wrd_slot_ok && v_q[wrd_slot] && s_wrd_len != 16'd0 &&
                         wrd_off >= 15'(lo_q[wrd_slot]) &&
                         17'(wrd_off) + wrd_ndw17 <= 17'(hi_q[wrd_slot]);

    // pieces in flight: {slot, last piece of the request, zeros (no DMA), dwords}
    localparam int PQ = 4;
    logic [SW-1:0] pq_slot [PQ];
    logic          pq_last [PQ];
    logic          pq_zero [PQ];
    logic [14:0]   pq_ndw  [PQ];
    logic [1:0]    pq_wr_q, pq_rd_q;
    logic [2:0]    pq_n_q;
    logic          pq_push, pq_pop, pq_room;
    logic [SW-1:0] pq_in_slot;
    logic          pq_in_last, pq_in_zero;
    logic [14:0]   pq_in_ndw;
    assign pq_room = pq_n_q != 3'(PQ);

    logic [10:0] r_piece;                           // dwords of the next piece (up to the page end)
    assign r_piece = (15'(11'd1024 - 11'(r_off_q[9:0])) < r_left_q) ? 11'd1024 - 11'(r_off_q[9:0])
                                                                      : 11'(r_left_q);

    assign s_wrd_ready = r_q == R_IDLE;
    assign rd_pa       = pt_index(r_slot_q, 5'(r_off_q[14:10]));
    assign rd_load     = r_q == R_ISSUE && rq_free && pq_room && !list_load;
    assign rd_addr     = {rd_pd[51:0], r_off_q[9:0], 2'b00};
    assign rd_ndw      = r_piece;

    always_comb begin
        pq_push    = 1'b0;
        pq_in_slot = r_slot_q;
        pq_in_last = 1'b1;
        pq_in_zero = 1'b1;
        pq_in_ndw  = r_ndw_q;
        if (rd_load) begin
            pq_push    = 1'b1;
            pq_in_last = 15'(r_piece) == r_left_q;
            pq_in_zero = 1'b0;
            pq_in_ndw  = 15'(r_piece);
        end else if (r_q == R_ZERO && pq_room) begin
            pq_push = 1'b1;
        end
    end

    always_ff @(posedge clk) begin
        case (r_q)
            R_IDLE: if (s_wrd_valid) begin
                r_slot_q <= wrd_slot;
                r_off_q  <= wrd_off;
                r_left_q <= wrd_ndw;
                r_ndw_q  <= s_wrd_len == 16'd0 ? 15'd1 : wrd_ndw;
                r_q      <= wrd_inb ? R_LOOK1 : R_ZERO;
            end
            R_LOOK1: r_q <= R_LOOK2;          // the page table address (rd_pa) is presented

            R_LOOK2: r_q <= R_ISSUE;
            R_ISSUE: if (rd_load) begin
                r_off_q  <= r_off_q + 15'(r_piece);
                r_left_q <= r_left_q - 15'(r_piece);
                r_q      <= 15'(r_piece) == r_left_q ? R_IDLE : R_LOOK1;
            end
            R_ZERO: if (pq_room) r_q <= R_IDLE;
            default: r_q <= R_IDLE;
        endcase
        if (rst) r_q <= R_IDLE;
    end

    // read data out: the head piece's dwords (from the DMA, or zeros)
    logic [14:0] z_cnt_q;                           // zeros sent of the head piece
    logic        hd_zero, hd_valid;
    logic        rd_take;                           // an ID_RD dword taken this cycle
    assign hd_valid = pq_n_q != 3'd0;
    assign hd_zero  = hd_valid && pq_zero[pq_rd_q];
    assign rd_take  = s_rdat_valid && s_rdat_id == ID_RD && hd_valid && !hd_zero && m_wrd_ready;
    assign s_rd_take = s_rdat_valid && s_rdat_id == ID_LIST && s_q == S_LDATA;
    assign s_rdat_ready = s_rdat_id == ID_LIST ? s_q == S_LDATA : (hd_valid && !hd_zero && m_wrd_ready);

    always_comb begin
        m_wrd_valid = 1'b0;
        m_wrd_data  = 32'd0;
        m_wrd_last  = 1'b0;
        m_wrd_err   = 1'b1;
        pq_pop      = 1'b0;
        if (hd_zero) begin
            m_wrd_valid = 1'b1;
            m_wrd_last  = pq_last[pq_rd_q] && z_cnt_q == pq_ndw[pq_rd_q] - 15'd1;
            pq_pop      = m_wrd_ready && z_cnt_q == pq_ndw[pq_rd_q] - 15'd1;
        end else if (hd_valid) begin
            m_wrd_valid = s_rdat_valid && s_rdat_id == ID_RD;
            m_wrd_data  = s_rdat_err ? 32'd0 : s_rdat_data;
            m_wrd_err   = s_rdat_err;
            m_wrd_last  = s_rdat_last && pq_last[pq_rd_q];
            pq_pop      = rd_take && s_rdat_last;
        end
    end

    always_ff @(posedge clk) begin
        if (pq_push) begin
            pq_slot[pq_wr_q] <= pq_in_slot;
            pq_last[pq_wr_q] <= pq_in_last;
            pq_zero[pq_wr_q] <= pq_in_zero;
            pq_ndw[pq_wr_q]  <= pq_in_ndw;
            pq_wr_q <= pq_wr_q + 2'd1;
        end
        if (pq_pop) begin
            pq_rd_q <= pq_rd_q + 2'd1;
            z_cnt_q <= '0;
        end else if (hd_zero && m_wrd_ready) begin
            z_cnt_q <= z_cnt_q + 15'd1;
        end
        pq_n_q <= pq_n_q + 3'(pq_push) - 3'(pq_pop);
        if (rst) begin
            pq_wr_q <= '0; pq_rd_q <= '0; pq_n_q <= '0; z_cnt_q <= '0;
        end
    end

    // the read request register
    always_ff @(posedge clk) begin
        if (list_load || rd_load) begin
            m_rreq_valid <= 1'b1;
            m_rreq_addr  <= list_load ? list_addr : rd_addr;
            m_rreq_ndw   <= list_load ? list_ndw : rd_ndw;
            m_rreq_id    <= list_load ? ID_LIST : ID_RD;
        end else if (m_rreq_ready) begin
            m_rreq_valid <= 1'b0;
        end
        if (rst) m_rreq_valid <= 1'b0;
    end

    // ---------------------------------------------------------------- write path
    typedef enum logic [2:0] {W_IDLE, W_LOOK1, W_LOOK2, W_LOOK3, W_OPEN} wr_state_e;
    wr_state_e   w_q;
    logic        b_act_q;                           // inside a burst (the next dword continues it)
    logic        b_ok_q;                            // the burst's slot exists
    logic        w_inb_q;                           // the dword seen in W_IDLE is inside the window
    logic [SW-1:0] b_slot_q;
    logic [15:0] b_off_q;                           // dword offset of the next dword (bit 15: past the window)
    logic [SW-1:0] w_slot;                          // the dword's slot and offset
    logic [15:0] w_off;
    logic        w_slot_ok, w_inb;
    logic [CW-1:0] c_cnt_q, c_max_q;                // the open chunk: dwords, limit
    logic [63:0] c_addr_q;
    assign w_slot    = b_act_q ? b_slot_q : s_wwr_addr[17 +: SW];
    assign w_off     = b_act_q ? b_off_q : {1'b0, s_wwr_addr[16:2]};
    assign w_slot_ok = b_act_q ? b_ok_q : s_wwr_addr[31:17] < 15'(SLOTS);
    assign w_inb     = w_slot_ok && v_q[w_slot] && w_off >= 16'(lo_q[w_slot]) && w_off < 16'(hi_q[w_slot]);
    assign wr_pa     = pt_index(b_slot_q, 5'(b_off_q[14:10]));

    // descriptors of closed chunks: {PCIe address, dwords (0: a burst end without data), slot, burst end}
    localparam int DQ = 4;
    logic [63:0]   dq_addr [DQ];
    logic [CW-1:0] dq_ndw  [DQ];
    logic [SW-1:0] dq_slot [DQ];
    logic          dq_end  [DQ];
    logic [1:0]    dq_wr_q, dq_rd_q;
    logic [2:0]    dq_n_q;
    logic          dq_push, dq_pop, dq_room;
    logic [63:0]   dq_in_addr;
    logic [CW-1:0] dq_in_ndw;
    assign dq_room = dq_n_q != 3'(DQ);

    // write data FIFO
    logic [31:0]  df_mem [DFD];
    logic [DFW:0] df_n_q;
    logic [DFW-1:0] df_wr_q, df_rd_q;
    logic         df_push, df_pop;
    assign df_pop = m_wdat_valid && m_wdat_ready;

    logic w_take, w_drop, w_close;
    always_comb begin
        s_wwr_ready = 1'b0;
        w_drop      = 1'b0;
        if (w_q == W_LOOK1 && !w_inb_q) begin
            // the dword seen in W_IDLE is outside the window: dropped
            s_wwr_ready = !s_wwr_last || dq_room;   // a dropped burst end needs a marker
            w_drop      = s_wwr_valid && s_wwr_ready;
        end else if (w_q == W_OPEN) begin
            s_wwr_ready = df_n_q != (DFW+1)'(DFD) && dq_room;
        end
    end
    // (w_take from W_OPEN's own terms, not through s_wwr_ready: keeps the window check of W_IDLE
    // off the FIFO counters' path)
    assign w_take  = w_q == W_OPEN && s_wwr_valid && df_n_q != (DFW+1)'(DFD) && dq_room;
    assign w_close = w_take && (s_wwr_last || c_cnt_q + CW'(1) == c_max_q);
    assign df_push = w_take;
    assign dq_push = w_close || (w_drop && s_wwr_last);
    assign dq_in_addr = c_addr_q;
    assign dq_in_ndw  = w_close ? c_cnt_q + CW'(1) : CW'(0);

    // chunk limit at a chunk's start: WCHUNK, the page end, the window end
    // (registered over the page-table read's cycles: the end in W_LOOK1, the limit in W_LOOK2)
    logic [14:0] w_to_page, w_to_end_q, w_lim_q;
    assign w_to_page = 15'(11'd1024 - 11'(b_off_q[9:0]));

    // W_IDLE registers the waiting dword's slot, offset and window check (not taking it); W_LOOK1
    // drops it when outside the window, else the page table read goes on
    always_ff @(posedge clk) begin
        case (w_q)
            W_IDLE: if (s_wwr_valid) begin
                b_slot_q <= w_slot;
                b_ok_q   <= w_slot_ok;
                b_off_q  <= w_off;
                w_inb_q  <= w_inb;
                w_q      <= W_LOOK1;
            end
            W_LOOK1: begin                    // the page table address (wr_pa) is presented
                w_to_end_q <= hi_q[b_slot_q] - b_off_q[14:0];
                if (w_inb_q) begin
                    b_act_q <= 1'b1;
                    w_q     <= W_LOOK2;
                end else if (w_drop) begin
                    b_off_q <= b_off_q[15] ? b_off_q : b_off_q + 16'd1;   // past 2^17 stays past
                    b_act_q <= !s_wwr_last;
                    w_q     <= W_IDLE;
                end
            end
            W_LOOK2: begin
                w_lim_q <= (w_to_page < w_to_end_q) ? w_to_page : w_to_end_q;
                w_q <= W_LOOK3;
            end
            W_LOOK3: begin                    // its data (2-cycle read latency)
                c_addr_q <= {wr_pd[51:0], b_off_q[9:0], 2'b00};
                c_cnt_q  <= '0;
                c_max_q  <= (w_lim_q < 15'(WCHUNK)) ? CW'(w_lim_q) : CW'(WCHUNK);
                w_q      <= W_OPEN;
            end
            W_OPEN: if (w_take) begin
                c_cnt_q <= c_cnt_q + CW'(1);
                b_off_q <= b_off_q + 16'd1;
                if (w_close) begin
                    b_act_q <= !s_wwr_last;
                    w_q     <= W_IDLE;
                end
            end
            default: w_q <= W_IDLE;
        endcase
        if (rst) begin
            w_q <= W_IDLE; b_act_q <= 1'b0;
        end
    end

    always_ff @(posedge clk) begin
        if (df_push) begin
            df_mem[df_wr_q] <= s_wwr_data;
            df_wr_q <= df_wr_q + DFW'(1);
        end
        if (df_pop) df_rd_q <= df_rd_q + DFW'(1);
        df_n_q <= df_n_q + (DFW+1)'(df_push) - (DFW+1)'(df_pop);
        if (rst) begin
            df_wr_q <= '0; df_rd_q <= '0; df_n_q <= '0;
        end
    end
    assign m_wdat_valid = df_n_q != '0;
    assign m_wdat_data  = df_mem[df_rd_q];

    always_ff @(posedge clk) begin
        if (dq_push) begin
            dq_addr[dq_wr_q] <= dq_in_addr;
            dq_ndw[dq_wr_q]  <= dq_in_ndw;
            dq_slot[dq_wr_q] <= b_slot_q;
            dq_end[dq_wr_q]  <= s_wwr_last;
            dq_wr_q <= dq_wr_q + 2'd1;
        end
        if (dq_pop) dq_rd_q <= dq_rd_q + 2'd1;
        dq_n_q <= dq_n_q + 3'(dq_push) - 3'(dq_pop);
        if (rst) begin
            dq_wr_q <= '0; dq_rd_q <= '0; dq_n_q <= '0;
        end
    end

    // issue: the head descriptor becomes a DMA write (or, without data, goes straight to the
    // outstanding list); the outstanding list retires in order at s_wdone
    localparam int OQ = 8;
    logic [SW-1:0] oq_slot [OQ];
    logic          oq_end  [OQ];
    logic          oq_mark [OQ];
    logic [2:0]    oq_wr_q, oq_rd_q;
    logic [3:0]    oq_n_q;
    logic          oq_push, oq_pop, oq_room;
    logic          dq_head, dq_head_mark;
    assign oq_room      = oq_n_q != 4'(OQ);
    assign dq_head      = dq_n_q != 3'd0;
    assign dq_head_mark = dq_ndw[dq_rd_q] == CW'(0);
    assign m_wreq_valid = dq_head && !dq_head_mark && oq_room;
    assign m_wreq_addr  = dq_addr[dq_rd_q];
    assign m_wreq_ndw   = 11'(dq_ndw[dq_rd_q]);
    assign m_wreq_id    = ID_WR;
    assign dq_pop       = dq_head && oq_room && (dq_head_mark || m_wreq_ready);
    assign oq_push      = dq_pop;

    // s_wdone results not yet matched with an entry (a marker at the head retires without one)
    logic [3:0] wd_n_q;                             // pending dones
    logic [OQ-1:0] wd_err_q;                        // their error bits, oldest at bit 0
    logic       oq_head, oq_head_mark, wd_have, wd_err_head;
    assign oq_head      = oq_n_q != 4'd0;
    assign oq_head_mark = oq_mark[oq_rd_q];
    assign wd_have      = wd_n_q != 4'd0;
    assign wd_err_head  = wd_err_q[0];
    assign oq_pop       = oq_head && (oq_head_mark || wd_have);

    // the done list: shifted at a non-marker retire, s_wdone appended
    logic [3:0]    wd_n_d;
    logic [OQ-1:0] wd_err_d;
    always_comb begin
        wd_n_d   = wd_n_q;
        wd_err_d = wd_err_q;
        if (oq_pop && !oq_head_mark) begin
            wd_n_d   = wd_n_q - 4'd1;
            wd_err_d = wd_err_q >> 1;
        end
        if (s_wdone) begin
            wd_err_d[wd_n_d[2:0]] = s_wdone_err;
            wd_n_d = wd_n_d + 4'd1;
        end
    end

    always_ff @(posedge clk) begin
        if (oq_push) begin
            oq_slot[oq_wr_q] <= dq_slot[dq_rd_q];
            oq_end[oq_wr_q]  <= dq_end[dq_rd_q];
            oq_mark[oq_wr_q] <= dq_head_mark;
            oq_wr_q <= oq_wr_q + 3'd1;
        end
        if (oq_pop) oq_rd_q <= oq_rd_q + 3'd1;
        oq_n_q <= oq_n_q + 4'(oq_push) - 4'(oq_pop);
        wd_n_q   <= wd_n_d;
        wd_err_q <= wd_err_d;
        if (rst) begin
            oq_wr_q <= '0; oq_rd_q <= '0; oq_n_q <= '0; wd_n_q <= '0;
        end
    end

    // counters
    always_ff @(posedge clk) begin
        if ((w_take || w_drop) && s_wwr_last) wr_acc <= wr_acc + 8'd1;
        if (oq_pop && oq_end[oq_rd_q]) wr_done <= wr_done + 8'd1;
        if (rst) begin
            wr_acc <= '0; wr_done <= '0;
        end
    end

    // ---------------------------------------------------------------- slot state updates
    always_ff @(posedge clk) begin
        if (s_q == S_IDLE && s_set_valid && 32'(s_set_slot) < 32'(SLOTS)) begin
            v_q[s_set_slot]   <= 1'b0;
            err_q[s_set_slot] <= 1'b0;
        end
        if (s_q == S_DONE && m_setr_ready && s_st_q == ST_OK) begin
            v_q[ss_q]  <= 1'b1;
            lo_q[ss_q] <= s_lo_q;
            hi_q[ss_q] <= s_hi_q;
        end
        if (r_q == R_ZERO && pq_room && r_slot_ok_q) err_q[r_slot_q] <= 1'b1;
        if (rd_take && s_rdat_err) err_q[pq_slot[pq_rd_q]] <= 1'b1;
        if (w_drop && b_ok_q) err_q[b_slot_q] <= 1'b1;
        if (oq_pop && !oq_head_mark && wd_err_head) err_q[oq_slot[oq_rd_q]] <= 1'b1;
        if (rst) begin
            v_q <= '0; err_q <= '0;
        end
    end

    always_ff @(posedge clk) begin
        if (r_q == R_IDLE && s_wrd_valid) r_slot_ok_q <= wrd_slot_ok;
    end

`ifdef ATS_NVME_CGATE
    // simulation only: busy, the activity input of the front end's clock gate (ats_nvme):
    // a PRP setup, a window read or write in progress, pieces, data, descriptors
    // or DMA writes queued or outstanding, a DMA read request on offer
    logic sim_busy;
    assign sim_busy = s_q != S_IDLE || r_q != R_IDLE || w_q != W_IDLE || b_act_q || pq_n_q != '0 || df_n_q != '0 ||
                      dq_n_q != '0 || oq_n_q != '0 || wd_n_q != '0 || m_rreq_valid;
`endif

`ifndef SYNTHESIS
    // the header's DMA shapes: every read (a PRP list's entries, a window read's piece) and every
    // write (at most WCHUNK dwords) stays inside one 4 KiB host page and moves at least one dword
    always_ff @(posedge clk) begin
        if (!rst && m_rreq_valid) begin
            assert (m_rreq_ndw != 11'd0 && 12'(m_rreq_addr[11:2]) + 12'(m_rreq_ndw) <= 12'd1024)
                else $error("ats_nvme_prp: DMA read of %0d dwords at %h leaves its page (%m)",
                            m_rreq_ndw, m_rreq_addr);
        end
        if (!rst && m_wreq_valid) begin
            assert (m_wreq_ndw != 11'd0 && m_wreq_ndw <= 11'(WCHUNK) &&
                    12'(m_wreq_addr[11:2]) + 12'(m_wreq_ndw) <= 12'd1024)
                else $error("ats_nvme_prp: DMA write of %0d dwords at %h leaves its page or exceeds WCHUNK (%m)",
                            m_wreq_ndw, m_wreq_addr);
        end
    end
`endif
endmodule

`resetall
