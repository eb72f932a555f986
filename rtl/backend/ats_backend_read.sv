// SPDX-License-Identifier: Apache-2.0
// ats_backend_read: the backend's host read misses (rtl/backend/README.md "Read miss"). RD_SLOTS
// reads in flight, each in a slot taken from a free list; an order ring keeps s_rd order for the
// lookups (LOOKUP / TX_LOOKUP through the backend's remap request register, m_lk) and the NAND
// READs (tag 0x80 + slot through its NAND request register, m_nrd); pages land in a read memory
// (slot x page words) and leave on m_rdd in any order, each once its verdict is known and the
// issue pointer has passed its ring entry (so a freed slot is named by no entry).
// Every output is driven from registers or from the slot tables addressed by registered pointers;
// the m_lk / m_nrd requests are taken by the backend's registers in the same cycle (ready = free).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_read #(
    parameter int PAGE_BYTES = 4096,   // data bytes per page
    parameter int RD_SLOTS   = 32,     // host reads in flight, power of two, 2..32
    parameter int PPN_W      = 16,     // remap engine PPN width
    parameter int MG         = 0       // 1: the S-Log's read merge (ats_backend g_slog) holds slots and writes into them
) (
    input  wire logic                        clk,
    input  wire logic                        rst,            // synchronous, active high
    // read misses from the write buffer, pages out (architecture.md section 4)
    input  wire logic                        s_rd_valid,
    output wire logic                        s_rd_ready,
    input  wire logic [31:0]                 s_rd_lpn,
    input  wire logic [5:0]                  s_rd_txid,
    input  wire logic [7:0]                  s_rd_tag,
    input  wire logic                        hold,           // take no read (a firmware ERASE waits)
    output wire logic                        m_rdd_valid,
    input  wire logic                        m_rdd_ready,
    output wire logic [31:0]                 m_rdd_data,
    output wire logic                        m_rdd_last,
    output wire logic [7:0]                  m_rdd_status,
    output wire logic [7:0]                  m_rdd_tag,
    // lookup request (remap tag RT_RD) and its response
    output wire logic                        m_lk_valid,
    input  wire logic                        m_lk_ready,     // the remap request register is free
    output wire logic [3:0]                  m_lk_op,        // LOOKUP, or TX_LOOKUP with a txid
    output wire logic [5:0]                  m_lk_txid,
    output wire logic [31:0]                 m_lk_lpn,
    input  wire logic                        s_lk_valid,     // a remap response with tag RT_RD
    input  wire logic [3:0]                  s_lk_status,
    input  wire logic [PPN_W-1:0]            s_lk_ppn,
    input  wire logic                        s_lk_mapped,
    input  wire logic                        s_lk_from_tx,
    // NAND READ request (tag 0x80 + slot)
    output wire logic                        m_nrd_valid,
    input  wire logic                        m_nrd_ready,    // the NAND request register takes it
    output wire logic [$clog2(RD_SLOTS)-1:0] m_nrd_slot,
    output wire logic [PPN_W-1:0]            m_nrd_ppn,
    // page words of the NAND subsystem (always taken when nd_host)
    input  wire logic                        s_ndata_valid,
    input  wire logic [31:0]                 s_ndata_data,
    input  wire logic                        s_ndata_last,
    input  wire logic [7:0]                  s_ndata_tag,
    input  wire logic [15:0]                 s_ndata_widx,
    output wire logic                        nd_host,        // s_ndata's tag is a host read's
    // NAND completion of a host read (the backend decodes the tag)
    input  wire logic                        ncpl_valid,
    input  wire logic [$clog2(RD_SLOTS)-1:0] ncpl_slot,      // its slot (tag - 0x80)
    input  wire logic [2:0]                  ncpl_status,
    output wire logic                        ncpl_ok,        // for a read in flight (else a protocol error)
    output wire logic                        ncpl_good,      // ... OK and the right LPN (else MEDIA_ERROR)
    // status
    output wire logic                        lk_pending,     // an accepted read is not looked up yet
    output wire logic                        nand_pending,   // an accepted read has not gone to NAND yet
    output wire logic                        busy,           // a read in flight (simulation clock gate)
    output logic      [2:0]                  perr,           // protocol errors this cycle
    // S-Log read merge (MG = 1, README_slog "Read merge"; ignored with MG = 0): a held slot is not
    // delivered; mg_bad delivers it MEDIA_ERROR; mg_we writes a word into a slot's page (taken when
    // mg_wok: no host page word this cycle); the slot a read takes now, the slot whose lookup is in
    // flight, the slots whose verdict and page are there, and a slot's verdict for the merge
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [RD_SLOTS-1:0]         mg_hold,
    input  wire logic [RD_SLOTS-1:0]         mg_bad,
    input  wire logic                        mg_we,
    input  wire logic [$clog2(RD_SLOTS)+$clog2(PAGE_BYTES/4)-1:0] mg_wa,   // {slot, word}
    input  wire logic [31:0]                 mg_wd,
    input  wire logic [$clog2(RD_SLOTS)-1:0] q_slot,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire logic                        mg_wok,
    output wire logic [$clog2(RD_SLOTS)-1:0] acc_slot,
    output wire logic [$clog2(RD_SLOTS)-1:0] lk_slot,
    output wire logic [RD_SLOTS-1:0]         fin_vec,
    output wire logic                        q_zero,         // q_slot: delivered as zeros
    output wire logic                        q_ok            // q_slot: verdict OK
);
    localparam int PW     = PAGE_BYTES / 4;             // data words per page
    localparam int PWW    = $clog2(PW + 5) + 1;          // word counter incl. metadata words
    localparam int RS_W   = $clog2(RD_SLOTS);
    localparam int RWA    = $clog2(PW);                 // word address bits in a read slot
    localparam int ROB_DEPTH = RD_SLOTS << RWA;
    localparam logic [7:0] RB_TAG  = 8'h80;             // NAND tags of host reads: 0x80 + slot
    localparam logic [7:0] PRB_TAG = 8'hFE;             // s_rd_tag of an own-table probe
    localparam logic [3:0] R_LOOKUP = 4'd1, R_TX_LOOKUP = 4'd3;   // remap ops
    localparam logic [2:0] N_OK = 3'd0;                 // NAND status

    if (RD_SLOTS < 2 || RD_SLOTS > 32 || (RD_SLOTS & (RD_SLOTS - 1)) != 0) begin : g_chk_rds
        $fatal(1, "ats_backend_read: RD_SLOTS must be a power of two, 2..32 (%m)");
    end

    // host reads (README "Read miss"): RD_SLOTS slots. A read takes the slot at the head of the free
    // list and its slot number goes into the order ring, in s_rd order. Order-ring pointers with a
    // wrap bit: ra (next accepted), rl (next to look up), rn (next to issue to NAND).
    // [rn, rl): looked up (or its lookup in flight: lk_wait_q, rl - 1); [rl, ra): waiting for the
    // remap request register. Lookups and NAND READs go in s_rd order; delivery in any order: a
    // slot whose verdict and page are there and whose ring entry rn has passed (rb_rn_q) is picked
    // (round robin), its words leave on m_rdd, and after its last word the slot goes back to the
    // free list.
    logic [RS_W:0]          ra_q, rl_q, rn_q;
    logic [RS_W-1:0]        oq      [RD_SLOTS];   // order ring: slot numbers in s_rd order
    logic [RS_W-1:0]        fl      [RD_SLOTS];   // free list of slots
    logic [RS_W:0]          fl_rd_q, fl_wr_q;
    logic [31:0]            rb_lpn  [RD_SLOTS];
    logic [5:0]             rb_txid [RD_SLOTS];
    logic [7:0]             rb_tag  [RD_SLOTS];   // the write buffer's read id (s_rd_tag), echoed on m_rdd_tag
    logic [PPN_W-1:0]       rb_ppn  [RD_SLOTS];
    logic [7:0]             rb_st   [RD_SLOTS];   // verdict: STS_OK, STS_MEDIA_ERROR (probe: STS_TX_EMPTY)
    logic [RD_SLOTS-1:0]    rb_nand_q;            // mapped: a NAND READ is needed
    logic [RD_SLOTS-1:0]    rb_req_q;             // its NAND READ issued
    logic [RD_SLOTS-1:0]    rb_zero_q;            // delivered as zeros (unmapped, or no data will come)
    logic [RD_SLOTS-1:0]    rb_dat_q;             // every word of the page received
    logic [RD_SLOTS-1:0]    rb_rdy_q;             // verdict known (NAND completion, or lookup: zeros)
    logic [RD_SLOTS-1:0]    rb_bad_q;             // spare LPN differs from the LPN read
    logic [RD_SLOTS-1:0]    rb_out_q;             // picked for delivery (until the slot is accepted again)
    logic [RD_SLOTS-1:0]    rb_rn_q;              // the issue pointer has passed its ring entry (its NAND
                                                  // READ issued, or none needed): only then delivered, so
                                                  // a slot back in the free list is named by no entry of
                                                  // the ring (else a read taken into it could be issued
                                                  // twice, or overwrite an entry still waiting)
    logic                   lk_wait_q;            // a lookup in flight, for slot lk_s_q
    logic                   lk_prb_q;             // ... of an own-table probe (s_rd_tag 0xFE with a txid)
    logic [RS_W-1:0]        lk_s_q, ra_s, rl_s, rn_s;
    logic                   rb_full, lk_go, rn_ok, rb_want, rb_skip;
    logic                   lk_fire, nrd_fire;
    logic [RS_W-1:0]        ncpl_e;
    assign ncpl_e = ncpl_slot;
    // the order ring is read through registers (timing: the ring's LUT RAM, then a slot-indexed
    // table, then the issue priority chain into the firmware FSM was the core's critical path):
    //   rl_s_q = oq[rl_q] (the read to look up next), valid when rl_fresh_q;
    //   rn_s_q = oq[rn_q] (the read to issue next) with rn_ok_q (its lookup answered) and rn_nand_q
    //   (mapped: a NAND READ), computed from the registers of the cycle before; for one cycle after
    //   rn_q moved they describe the previous read (rn_adv_q) and are not used.
    logic [RS_W-1:0]        rl_s_q, rn_s_q;
    logic                   rl_fresh_q, rn_ok_q, rn_nand_q, rn_adv_q;
    // the slot a read accepted now takes, fl[fl_rd_q], registered with its one-hot (timing:
    // fl_rd_q -> the free list's 32:1 select -> the slot's flag write enables was the backend's
    // slowest path): its next value is the head after this cycle's accept, with this cycle's
    // write of a freed slot applied (that write lands on the head only when the list is empty or
    // holds one slot); asserted equal to fl[fl_rd_q]
    logic [RS_W-1:0]        ra_s_q;
    logic [RD_SLOTS-1:0]    ra_oh_q;
    assign ra_s = ra_s_q;
    assign rl_s = rl_s_q;
    assign rn_s = rn_s_q;
    assign rb_full = fl_rd_q == fl_wr_q;          // no free slot
    // a lookup goes out as soon as the request register is free: before any completion or firmware
    // remap request (those wait while rl != ra), so a read sees the mapping of its acceptance time
    // at the latest (never one of a write-back accepted after it)
    assign lk_go   = (rl_q != ra_q) && !lk_wait_q && rl_fresh_q;
    assign rn_ok   = rn_ok_q && !rn_adv_q;
    assign rb_want = rn_ok && rn_nand_q;
    assign rb_skip = rn_ok && !rn_nand_q;
    // while a firmware ERASE waits (hold), no read is accepted; the ERASE goes to NAND only once
    // every accepted read has its NAND READ issued (nand_pending low)
    // (a slot is freed only after the issue pointer has passed its ring entry, rb_rn_q below, so
    // the ring names only slots in use: a free slot means room in the ring)
    assign s_rd_ready  = !rb_full && !hold && !rst;
    assign lk_pending   = rl_q != ra_q;
    assign nand_pending = rn_q != ra_q;
    // the lookup request (the remap request register takes it when free) and the NAND READ request
    // (the NAND request register takes it when free, before every other request)
    assign m_lk_valid = lk_go;
    assign m_lk_op    = rb_txid[rl_s] != 6'd0 ? R_TX_LOOKUP : R_LOOKUP;
    assign m_lk_txid  = rb_txid[rl_s];
    assign m_lk_lpn   = rb_lpn[rl_s];
    assign lk_fire    = lk_go && m_lk_ready;
    assign m_nrd_valid = rb_want;
    assign m_nrd_slot  = rn_s;
    assign m_nrd_ppn   = rb_ppn[rn_s];
    assign nrd_fire    = rb_want && m_nrd_ready;
    // a NAND completion for this unit: counted only for a slot with its NAND READ in flight and no
    // verdict yet; good = OK and the page's LPN is the one read
    assign ncpl_ok   = ncpl_valid && rb_req_q[ncpl_e] && !rb_rdy_q[ncpl_e];
    assign ncpl_good = ncpl_ok && ncpl_status == N_OK && !rb_bad_q[ncpl_e];
    // read memory: slot s, word w at {s, w}. A page is written only for a slot whose NAND READ is
    // in flight and whose page has not come yet (a stray page is a protocol error, not a write)
    logic                   nd_rb;            // s_ndata beat of a host read
    logic [RS_W-1:0]        nd_s;
    logic [PWW-1:0]         nd_w;             // the word's index in its page
    logic                   rob_we;
    logic [$clog2(ROB_DEPTH)-1:0] rob_wa, rob_ra;
    logic [31:0]            rob_rd;
    assign nd_rb  = s_ndata_tag[7:RS_W] == RB_TAG[7:RS_W];
    assign nd_host = nd_rb;
    assign nd_s   = s_ndata_tag[RS_W-1:0];
    assign nd_w   = 32'(s_ndata_widx) > PW + 4 ? PWW'(PW + 5) : PWW'(s_ndata_widx);   // (saturated)
    assign rob_we = s_ndata_valid && nd_rb && 32'(nd_w) < PW && rb_req_q[nd_s] && !rb_dat_q[nd_s];
    assign rob_wa = {nd_s, RWA'(nd_w)};
    // the write is registered before the memory (timing: the tag's slot flags -> the write enable of
    // every block RAM slice was the backend's slowest path); a slot's page is read only after its
    // NAND completion, which comes cycles after its last word, so the delayed write is always in time
    logic                   rob_we_q;
    logic [$clog2(ROB_DEPTH)-1:0] rob_wa_q;
    logic [31:0]            rob_wd_q;
    // (MG = 1: the merge's word takes the register in a cycle without a host page word)
    always_ff @(posedge clk) begin
        rob_we_q <= (rob_we || (MG != 0 && mg_we)) && !rst;
        rob_wa_q <= (MG != 0 && !rob_we) ? mg_wa : rob_wa;
        rob_wd_q <= (MG != 0 && !rob_we) ? mg_wd : s_ndata_data;
    end
    assign mg_wok   = !rob_we;
    assign acc_slot = ra_s_q;
    assign lk_slot  = lk_s_q;
    assign fin_vec  = rb_rdy_q & (rb_zero_q | rb_dat_q);
    assign q_zero   = rb_zero_q[q_slot];
    assign q_ok     = rb_st[q_slot] == ats_host_pkg::STS_OK;
    // the reorder memory: ats_wbuf_mem builds banks of 16K words above that depth (32 slots of 1K
    // words: 2), its read latency still 2
    ats_wbuf_mem #(.DEPTH(ROB_DEPTH)) u_rob (
        .clk, .wr_en(rob_we_q), .wr_addr(rob_wa_q), .wr_data(rob_wd_q), .rd_addr(rob_ra), .rd_data(rob_rd)
    );
    // delivery: pick a finished slot (registered candidate vector, round robin from the slot after
    // the last one delivered), then its words (memory latency 2) into a 4-entry output FIFO = m_rdd.
    // The vector is a cycle old: a slot picked or freed in cycle t is out of it by t + 1 (rb_out_q),
    // and a page takes PW cycles at least, so no slot is picked twice.
    localparam int OBD = 4;
    logic [RD_SLOTS-1:0]    dv_cand_q;        // slots ready to deliver, not yet picked
    logic                   dv_act_q;         // a page is being delivered from slot dv_s_q
    logic [RS_W-1:0]        dv_s_q, dv_pick_s;
    logic                   dv_pick;
    logic [RWA:0]           dl_w_q;           // next word of that page
    logic                   dl_pick, dl_last;
    logic [31:0]            ob_data [OBD];
    logic                   ob_last [OBD];
    logic [7:0]             ob_st   [OBD];
    logic [7:0]             ob_tag  [OBD];
    logic [2:0]             ob_rd_q, ob_wr_q, ob_pend_q;
    logic                   q1_v_q, q2_v_q, q1_z_q, q2_z_q, q1_l_q, q2_l_q;
    logic [7:0]             q1_st_q, q2_st_q, q1_tag_q, q2_tag_q;
    // round robin as two find-first-set searches (timing: a rotate by the pointer, then a priority
    // chain over RD_SLOTS candidates, was the backend's slowest path): the first candidate at or
    // after the pointer if there is one, else the first candidate; each search isolates the lowest set
    // bit (v & -v: a carry chain) and encodes the one-hot (an OR tree per index bit)
    // (the one-hot also sets rb_out_q directly, without decoding the index again)
    function automatic logic [RS_W-1:0] oh_idx(input logic [RD_SLOTS-1:0] oh);
        oh_idx = '0;
        for (int b = 0; b < RS_W; b++)
            for (int k = 0; k < RD_SLOTS; k++) if (((k >> b) & 1) != 0) oh_idx[b] = oh_idx[b] | oh[k];
    endfunction
    // The at-or-after mask is applied a cycle ahead: dv_hi_q = the candidates at or after the
    // pointer (and dv_hi_nz_q: any), registered with dv_cand_q from the same vector (timing: the
    // pointer -> mask -> find-first-set -> pointer loop was the backend's slowest path). It is a
    // cycle old only in the cycle after a pick, when dv_act_q is high and nothing is picked; the
    // pointer is kept one-hot (dv_rr_oh_q: the pick rotated by one), so no index is decoded for it.
    logic [RD_SLOTS-1:0]    dv_rr_oh_q;       // the slot after the last one delivered, one-hot
    logic [RD_SLOTS-1:0]    dv_ge;            // slots at or after it
    logic [RD_SLOTS-1:0]    dv_cand_d;        // next candidate vector
    logic [RD_SLOTS-1:0]    dv_hi_q, dv_oh;   // candidates at or after it; the picked slot, one-hot
    logic                   dv_hi_nz_q;
    always_comb begin
        logic acc;
        acc = 1'b0;
        for (int k = 0; k < RD_SLOTS; k++) begin acc = acc | dv_rr_oh_q[k]; dv_ge[k] = acc; end
    end
    assign dv_cand_d = rb_rdy_q & rb_rn_q & (rb_zero_q | rb_dat_q) & ~rb_out_q & ~(MG != 0 ? mg_hold : '0);
    assign dv_oh     = dv_hi_nz_q ? dv_hi_q & (~dv_hi_q + 1'b1) : dv_cand_q & (~dv_cand_q + 1'b1);
    assign dv_pick   = !dv_act_q && dv_cand_q != '0 && !rst;
    assign dv_pick_s = oh_idx(dv_oh);
    // room for one more word: FIFO occupancy + words in the memory pipeline < 4 (4-bit arithmetic,
    // the same rule as the fetch DMA's output FIFOs)
    assign dl_pick = dv_act_q && (4'(3'(ob_wr_q - ob_rd_q)) + 4'(ob_pend_q)) < 4'(OBD) && !rst;
    assign dl_last = 32'(dl_w_q) == PW - 1;
    assign rob_ra  = {dv_s_q, RWA'(dl_w_q)};
    assign m_rdd_valid  = ob_wr_q != ob_rd_q;
    assign m_rdd_data   = ob_data[ob_rd_q[1:0]];
    assign m_rdd_last   = ob_last[ob_rd_q[1:0]];
    assign m_rdd_status = ob_st[ob_rd_q[1:0]];
    assign m_rdd_tag    = ob_tag[ob_rd_q[1:0]];
    always_ff @(posedge clk) begin
        dv_cand_q  <= dv_cand_d;
        dv_hi_q    <= dv_cand_d & dv_ge;
        dv_hi_nz_q <= (dv_cand_d & dv_ge) != '0;
        if (rst) begin
            dl_w_q <= '0; dv_act_q <= 1'b0; dv_rr_oh_q <= RD_SLOTS'(1); dv_cand_q <= '0;
            dv_hi_q <= '0; dv_hi_nz_q <= 1'b0;
            ob_rd_q <= 3'd0; ob_wr_q <= 3'd0; ob_pend_q <= 3'd0;
            q1_v_q <= 1'b0; q2_v_q <= 1'b0;
        end else begin
            if (dv_pick) begin
                dv_act_q <= 1'b1; dv_s_q <= dv_pick_s;
                dv_rr_oh_q <= {dv_oh[RD_SLOTS-2:0], dv_oh[RD_SLOTS-1]};
            end
            q1_v_q <= dl_pick; q1_z_q <= rb_zero_q[dv_s_q]; q1_l_q <= dl_last;
            q1_st_q <= !dl_last ? ats_host_pkg::STS_OK :
                       (MG != 0 && mg_bad[dv_s_q]) ? ats_host_pkg::STS_MEDIA_ERROR : rb_st[dv_s_q];
            q1_tag_q <= rb_tag[dv_s_q];
            q2_v_q <= q1_v_q; q2_z_q <= q1_z_q; q2_l_q <= q1_l_q; q2_st_q <= q1_st_q; q2_tag_q <= q1_tag_q;
            ob_pend_q <= ob_pend_q + (dl_pick ? 3'd1 : 3'd0) - (q2_v_q ? 3'd1 : 3'd0);
            if (q2_v_q) begin
                ob_data[ob_wr_q[1:0]] <= q2_z_q ? 32'd0 : rob_rd;
                ob_last[ob_wr_q[1:0]] <= q2_l_q;
                ob_st[ob_wr_q[1:0]]   <= q2_st_q;
                ob_tag[ob_wr_q[1:0]]  <= q2_tag_q;
                ob_wr_q <= ob_wr_q + 3'd1;
            end
            if (m_rdd_valid && m_rdd_ready) ob_rd_q <= ob_rd_q + 3'd1;
            if (dl_pick) dl_w_q <= dl_last ? '0 : dl_w_q + 1'b1;
            if (dl_pick && dl_last) dv_act_q <= 1'b0;
        end
    end

    // order-ring read registers
    always_ff @(posedge clk) begin
        rl_s_q     <= oq[rl_q[RS_W-1:0]];
        rl_fresh_q <= (rl_q != ra_q) && !lk_fire;
        rn_s_q     <= oq[rn_q[RS_W-1:0]];
        rn_ok_q    <= (rn_q != rl_q) && !(lk_wait_q && rn_q == (rl_q - 1'b1));
        rn_nand_q  <= rb_nand_q[oq[rn_q[RS_W-1:0]]];
        rn_adv_q   <= rb_skip || nrd_fire;
        if (rst) begin
            rl_fresh_q <= 1'b0;
            rn_ok_q    <= 1'b0;
            rn_adv_q   <= 1'b0;
        end
    end

    // the free list's head (ra_s_q, ra_oh_q above)
    // both candidates from registers (the head stays, or the next entry), the accept selects last
    logic [RS_W-1:0]        fl_nx_e, ra_st_d, ra_nx_d;
    logic                   fl_free;
    always_comb begin
        fl_free = dl_pick && dl_last;     // fl[fl_wr_q] <= dv_s_q this cycle
        fl_nx_e = fl_rd_q[RS_W-1:0] + 1'b1;
        ra_st_d = (fl_free && fl_wr_q[RS_W-1:0] == fl_rd_q[RS_W-1:0]) ? dv_s_q : ra_s_q;
        ra_nx_d = (fl_free && fl_wr_q[RS_W-1:0] == fl_nx_e) ? dv_s_q : fl[fl_nx_e];
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            ra_s_q <= '0; ra_oh_q <= RD_SLOTS'(1);   // fl[0] = 0 after reset
        end else if (s_rd_valid && s_rd_ready) begin
            ra_s_q <= ra_nx_d; ra_oh_q <= RD_SLOTS'(1) << ra_nx_d;
        end else begin
            ra_s_q <= ra_st_d; ra_oh_q <= RD_SLOTS'(1) << ra_st_d;
        end
    end

    // host read ring: issue and verdict of a slot, accept, lookup, page words, free list
    always_ff @(posedge clk) begin
        if (rst) begin
            ra_q <= '0; rl_q <= '0; rn_q <= '0;
            fl_rd_q <= '0; fl_wr_q <= (RS_W+1)'(RD_SLOTS);
            for (int i = 0; i < RD_SLOTS; i++) fl[i] <= RS_W'(i);
            rb_nand_q <= '0; rb_req_q <= '0; rb_zero_q <= '0; rb_dat_q <= '0; rb_rdy_q <= '0; rb_bad_q <= '0;
            rb_out_q <= '1; rb_rn_q <= '0;
            lk_wait_q <= 1'b0;
        end else begin
            if (rb_skip) begin                          // zeros: no NAND READ
                rb_rn_q[rn_s] <= 1'b1;
                rn_q <= rn_q + 1'b1;
            end
            if (nrd_fire) begin                         // its NAND READ issued
                rb_req_q[rn_s] <= 1'b1;
                rb_rn_q[rn_s] <= 1'b1;
                rn_q <= rn_q + 1'b1;
            end
            if (ncpl_ok) begin
                // the verdict (the page's words came first: the subsystem sends a READ's completion
                // after its last word); no data comes with BAD_REQ (4): zeros. A completion for a
                // slot with no NAND READ in flight (or a second one) changes nothing.
                rb_rdy_q[ncpl_e] <= 1'b1;
                if (ncpl_status == 3'd4) rb_zero_q[ncpl_e] <= 1'b1;
                rb_st[ncpl_e] <= ncpl_good ? ats_host_pkg::STS_OK : ats_host_pkg::STS_MEDIA_ERROR;
            end
            if (s_rd_valid && s_rd_ready) begin
                rb_lpn[ra_s] <= s_rd_lpn; rb_txid[ra_s] <= s_rd_txid; rb_tag[ra_s] <= s_rd_tag;
                for (int k = 0; k < RD_SLOTS; k++) if (ra_oh_q[k]) begin   // (= slot ra_s)
                    rb_nand_q[k] <= 1'b0; rb_req_q[k] <= 1'b0; rb_zero_q[k] <= 1'b0; rb_dat_q[k] <= 1'b0;
                    rb_rdy_q[k] <= 1'b0; rb_bad_q[k] <= 1'b0; rb_out_q[k] <= 1'b0; rb_rn_q[k] <= 1'b0;
                end
                oq[ra_q[RS_W-1:0]] <= ra_s;
                fl_rd_q <= fl_rd_q + 1'b1;
                ra_q <= ra_q + 1'b1;
            end
            if (lk_fire) begin
                lk_wait_q <= 1'b1; lk_s_q <= rl_s;
                lk_prb_q <= rb_tag[rl_s] == PRB_TAG && rb_txid[rl_s] != 6'd0;
                rl_q <= rl_q + 1'b1;
            end
            if (s_lk_valid) begin
                lk_wait_q <= 1'b0;
                rb_ppn[lk_s_q] <= s_lk_ppn;
                if (!lk_wait_q) begin
                    // a response without a lookup: counted (perr), changes no slot
                end else if (lk_prb_q) begin
                    // own-table probe: no NAND READ; zeros, status OK when the tx's table holds the
                    // LPN, TX_EMPTY (0x06) when it does not (or the lookup failed)
                    rb_st[lk_s_q] <= (s_lk_status == 4'd0 && s_lk_from_tx) ? ats_host_pkg::STS_OK : ats_host_pkg::STS_TX_EMPTY;
                    rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;
                end else if (s_lk_status != 4'd0) begin
                    rb_st[lk_s_q] <= ats_host_pkg::STS_MEDIA_ERROR; rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;   // cannot happen behind the buffer's checks
                end else if (!s_lk_mapped) begin
                    rb_st[lk_s_q] <= ats_host_pkg::STS_OK; rb_zero_q[lk_s_q] <= 1'b1; rb_rdy_q[lk_s_q] <= 1'b1;   // unmapped: zeros
                end else begin
                    rb_nand_q[lk_s_q] <= 1'b1;
                end
            end
            if (s_ndata_valid && nd_rb) begin
                if (32'(nd_w) == PW && rb_req_q[nd_s] && !rb_dat_q[nd_s]) rb_bad_q[nd_s] <= s_ndata_data != rb_lpn[nd_s];
                // a page for a slot with no NAND READ in flight, or a second page for it: perr
                if (s_ndata_last && rb_req_q[nd_s] && !rb_dat_q[nd_s]) rb_dat_q[nd_s] <= 1'b1;
            end
            for (int k = 0; k < RD_SLOTS; k++) if (dv_pick && dv_oh[k]) rb_out_q[k] <= 1'b1;
            if (dl_pick && dl_last) begin                  // the slot's last word: free again
                fl[fl_wr_q[RS_W-1:0]] <= dv_s_q;
                fl_wr_q <= fl_wr_q + 1'b1;
            end
        end
    end

    // protocol errors: a completion for a slot with no NAND READ in flight (or a second one), a
    // lookup response without a lookup, a page of the wrong length, a page for a slot with no NAND
    // READ in flight (or a second page)
    always_comb begin
        perr = 3'd0;
        if (ncpl_valid && !ncpl_ok) perr = perr + 3'd1;
        if (s_lk_valid && !lk_wait_q) perr = perr + 3'd1;
        if (s_ndata_valid && nd_rb && s_ndata_last) begin
            if (32'(nd_w) != PW + 4) perr = perr + 3'd1;
            if (!rb_req_q[nd_s] || rb_dat_q[nd_s]) perr = perr + 3'd1;
        end
    end

`ifndef SYNTHESIS
    // the registers that mirror state (timing): the delivery pick's mask registered a cycle ahead
    // equals the mask of the current pointer whenever a pick can happen, and the one-hot pointer is
    // the slot after the last one picked (reference: its index, as it was kept before)
    logic [RS_W-1:0]        dv_rr_chk_q;
    always_ff @(posedge clk) begin
        if (rst) dv_rr_chk_q <= '0;
        else if (dv_pick) dv_rr_chk_q <= dv_pick_s + 1'b1;
    end
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (dv_rr_oh_q == RD_SLOTS'(1) << dv_rr_chk_q)
                else $error("ats_backend_read: one-hot delivery pointer out of step with its index (%m)");
            assert (dv_act_q || (dv_hi_q == (dv_cand_q & dv_ge) && dv_hi_nz_q == (dv_hi_q != '0)))
                else $error("ats_backend_read: registered delivery mask out of step with the pointer (%m)");
            assert (ra_s_q == fl[fl_rd_q[RS_W-1:0]] && ra_oh_q == RD_SLOTS'(1) << ra_s_q)
                else $error("ats_backend_read: registered free-list head out of step with the list (%m)");
            // the order ring never holds more than RD_SLOTS reads (an entry overwritten: a read lost),
            // and a slot's NAND READ is issued once per read (a slot named twice in the ring)
            assert (32'((RS_W+1)'(ra_q - rn_q)) <= RD_SLOTS)
                else $error("ats_backend_read: order ring overrun, %0d reads not issued (%m)", (RS_W+1)'(ra_q - rn_q));
            assert (!(nrd_fire && (rb_req_q[rn_s] || rb_rn_q[rn_s])))
                else $error("ats_backend_read: slot %0d's NAND READ issued twice (%m)", rn_s);
        end
    end
`endif

    // work that the ports do not show (rtl/core/README.md "Simulation cost")
`ifdef SYNTHESIS
    assign busy = 1'b0;
`else
    assign busy = ra_q != rn_q || dv_act_q || dv_cand_q != '0;
`endif
endmodule

`resetall
