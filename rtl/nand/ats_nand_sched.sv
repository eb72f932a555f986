// SPDX-License-Identifier: Apache-2.0
// ats_nand_sched: NAND scheduler. Holds up to DEPTH tagged physical requests (read, program,
// erase on one die = channel x way) and dispatches them to one command stream per channel: per
// channel, the best eligible request, where eligible = the front of its die's queue (HEAD requests
// before the die's other requests, otherwise arrival order) while the die is idle, and best =
// HEAD first, then priority reads (prio_read, or every read while reads_first is high), then the
// oldest. A die is busy from dispatch until its completion, or an earlier release (s_ccpl_rel: the
// channel is done with the die, e.g. a READ's page has crossed the bus, its completion follows
// later), is taken. Completions are forwarded on m_ncpl by tag, out of order; releases are not. Bad requests (tag outstanding, channel or way out of range,
// unknown op) complete with BAD_REQ. Full contract and timing: rtl/nand/README_sched.md.
// Structure (time-multiplexed for Fmax, figures in the README): per die a normal and a HEAD list
// linked through the entry table (list state in registers, payload / successor / class+stamp in
// LUT RAM); ONE pick pipeline shared by all channels, which serves channel (slot) s = 0, 1, ..
// PERIOD-1 round robin: snapshot of the channel's die fronts -> class/stamp read -> pairwise order
// -> pick -> payload read -> command register, die busy, list pop, entry freed. Free entries are
// kept in a LUT-RAM FIFO, outstanding tags in a 256-bit map.
// Arrival order is a free-running STAMP_W-bit insert counter stamped into each entry, compared
// modulo 2^STAMP_W (exact while compared requests arrived < 2^(STAMP_W-1) requests apart).
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets a form with the same next state every cycle that skips work whose result is not
// registered (README_sched.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_nand_sched #(
    parameter int DEPTH    = 32,  // request table entries (queued, not yet dispatched), 2..64
    parameter int NUM_CHAN = 8,   // channels, 1..8 (s_nreq_chan is 3 bits)
    parameter int NUM_WAYS = 4,   // ways (dies) per channel, 1..4 (s_nreq_way is 2 bits)
    parameter int SLOT_W   = 8,   // page-buffer slot number, passed through to the channel
    parameter int STAMP_W  = 16   // arrival stamp; order exact for requests < 2^(STAMP_W-1) apart
) (
    input  wire logic                         clk,
    input  wire logic                         rst,              // synchronous, active high
    input  wire logic                         reads_first,      // every read is a priority read
    // physical requests in (architecture.md section 5)
    input  wire logic                         s_nreq_valid,
    output wire logic                         s_nreq_ready,
    input  wire logic [7:0]                   s_nreq_tag,
    input  wire logic [1:0]                   s_nreq_op,        // READ 0, PROGRAM 1, ERASE 2
    input  wire logic [2:0]                   s_nreq_chan,
    input  wire logic [1:0]                   s_nreq_way,
    input  wire logic [11:0]                  s_nreq_block,
    input  wire logic [7:0]                   s_nreq_page,
    input  wire logic                         s_nreq_head,
    input  wire logic                         s_nreq_prio_read,
    input  wire logic [SLOT_W-1:0]            s_nreq_slot,
    // one command stream per channel: bit c / field slice c belongs to channel c
    output wire logic [NUM_CHAN-1:0]          m_ccmd_valid,
    input  wire logic [NUM_CHAN-1:0]          m_ccmd_ready,
    output wire logic [NUM_CHAN*8-1:0]        m_ccmd_tag,
    output wire logic [NUM_CHAN*2-1:0]        m_ccmd_op,
    output wire logic [NUM_CHAN*2-1:0]        m_ccmd_way,
    output wire logic [NUM_CHAN*12-1:0]       m_ccmd_block,
    output wire logic [NUM_CHAN*8-1:0]        m_ccmd_page,
    output wire logic [NUM_CHAN*SLOT_W-1:0]   m_ccmd_slot,
    // completions from the channel controllers (merged into one stream)
    input  wire logic                         s_ccpl_valid,
    output wire logic                         s_ccpl_ready,
    input  wire logic [7:0]                   s_ccpl_tag,
    input  wire logic [2:0]                   s_ccpl_status,
    input  wire logic [7:0]                   s_ccpl_corrected,
    input  wire logic                         s_ccpl_rel,       // a release, not a completion
    // completions out, by tag, out of order
    output wire logic                         m_ncpl_valid,
    input  wire logic                         m_ncpl_ready,
    output wire logic [7:0]                   m_ncpl_tag,
    output wire logic [2:0]                   m_ncpl_status,    // OK 0 .. UNCORRECTABLE 3, BAD_REQ 4
    output wire logic [7:0]                   m_ncpl_corrected,
    // one-cycle pulse: a completion whose tag is not in flight on any die was dropped
    output wire logic                         err_spurious
);
    localparam int TAG_W     = 8;
    localparam int WAY_W     = 2;
    localparam int CH_W      = 3;
    localparam int NUM_DIES  = NUM_CHAN * NUM_WAYS;
    localparam int NUM_LISTS = 2 * NUM_DIES;           // per die: list 2d normal, 2d+1 HEAD
    localparam int IDX_W     = $clog2(DEPTH);          // entry index
    localparam int CNT_W     = $clog2(DEPTH + 1);      // free entries, 0..DEPTH
    localparam int LIST_W    = $clog2(NUM_LISTS);
    // payload kept per entry and handed to the channel: {tag, op, way, block, page, slot}
    localparam int PAY_W     = TAG_W + 2 + WAY_W + 12 + 8 + SLOT_W;
    localparam int POS_WAY   = SLOT_W + 8 + 12;        // payload bit positions
    localparam int POS_OP    = POS_WAY + WAY_W;
    localparam int POS_TAG   = PAY_W - TAG_W;
    localparam int ATTR_W    = 2 + STAMP_W;            // per entry: {read, prio_read, stamp}
    // pick pipeline: slot s (0..PERIOD-1) serves channel s; a channel's pick, payload read, list
    // pop and die update (5 edges after its snapshot) are done before its next snapshot
    localparam int PERIOD    = (NUM_CHAN > 6) ? NUM_CHAN : 6;
    localparam logic [2:0] ST_BAD_REQ = 3'd4;
    // the clock of every register but the slot counter: clk, or in a simulation with ATS_SIM_CGATE a
    // gated copy of it (README_sched.md "Simulation cost"; the gate is at the end of the module)
    logic gclk;

    if (DEPTH < 2 || DEPTH > 64) begin : g_check_depth
        $fatal(1, "ats_nand_sched: DEPTH must be 2..64 (%m)");
    end
    if (NUM_CHAN < 1 || NUM_CHAN > 8) begin : g_check_chan
        $fatal(1, "ats_nand_sched: NUM_CHAN must be 1..8 (%m)");
    end
    if (NUM_WAYS < 1 || NUM_WAYS > 4) begin : g_check_ways
        $fatal(1, "ats_nand_sched: NUM_WAYS must be 1..4 (%m)");
    end
    if (STAMP_W < 8 || STAMP_W > 32) begin : g_check_stamp
        $fatal(1, "ats_nand_sched: STAMP_W must be 8..32 (%m)");
    end
    if (SLOT_W < 1) begin : g_check_slot
        $fatal(1, "ats_nand_sched: SLOT_W must be at least 1 (%m)");
    end

    // ================================================================ accept (edge e) -> r1
    // r1: the accepted request, loaded every cycle (valid only after an acceptance); range and
    // op checks and the list number are computed from the port here.
    logic                 r1_v_q, r1_rbad_q, r1_prio_q;
    logic [LIST_W-1:0]    r1_list_q;
    logic [7:0]           r1_gsel_q;           // r1's group of lists (r1_list_q / 8), one-hot (Fmax)
    logic [4:0]           r1_tsel_n_q, r1_tsel; // ~tag[7:3], a copy for the map read (Fmax: fan-out;
                                               // inverted so that the synthesis keeps it apart)
    logic [PAY_W-1:0]     r1_pay_q;
    logic                 acc;
    logic [CNT_W-1:0]     nfree_q;             // entries not claimed (see README "Acceptance")
    logic                 nf_ge1_q;            // nfree_q >= 1
    logic                 eq_ne_q;             // BAD_REQ queue not empty
    // s_nreq_ready from a register of its own, == !eq_ne_q && nf_ge1_q (asserted): in the whole
    // device eq_ne_q (fan-out 17) -> the backend's issue rule -> cm_doom_q was the board's slowest
    // path (docs/boards.md "Whole-device place and route"); no cycle changes
    logic                 nrdy_q;
    assign s_nreq_ready = nrdy_q;
    assign acc          = s_nreq_valid && s_nreq_ready;

    // ================================================================ row (edge e+1) -> rb
    // rb: the request with the 8 bits of the outstanding-tag map that hold its tag bit
    // (tag[7:3]; Fmax: an 8:1 select left for the check, not 16:1); the map is updated at the same edge (set for r1's tag unless r1 failed the
    // range/op check, clear for a completion that left m_ncpl at the previous edge)
    logic [255:0]         outst_q;             // outstanding tags
    // set (r1's tag, unless r1 failed the range/op check) and clear (a real completion left
    // m_ncpl at the previous edge) of the map, as registered one-hot nibbles: bit t is set by
    // set_hi[t / 16] && set_lo[t % 16] (the valid condition is folded into the high nibble)
    logic [15:0]          set_hi_q, set_lo_q, clr_hi_q, clr_lo_q;
    logic                 rb_v_q, rb_rbad_q, rb_prio_q;
    logic [LIST_W-1:0]    rb_list_q;
    logic [PAY_W-1:0]     rb_pay_q;
    logic [7:0]           rb_row_q;            // the 8 bits of the map around rb's tag (tag[7:3])

    // ================================================================ check (edge e+2) -> r2
    // rb is bad if its range/op check failed or its tag bit is set in the row. r2 holds a good
    // request that is inserted at the next edge, with its list's link address.
    logic                 r2_v_q, r2_bad_q, r2_prio_q, r2_read_q;
    logic [LIST_W-1:0]    r2_list_q;
    logic [NUM_LISTS-1:0] r2_lsel_q;           // r2_list_q one-hot
    logic [PAY_W-1:0]     r2_pay_q;
    logic                 r2_link_q;           // link r2 behind r2_tail_q when it is inserted
    logic [IDX_W-1:0]     r2_tail_q;
    logic                 dup, bad;
    assign dup = rb_row_q[rb_pay_q[POS_TAG +: 3]];
    assign r1_tsel = ~r1_tsel_n_q;
    assign bad = rb_rbad_q || dup;

    // ================================================================ tables and lists
    logic [PAY_W-1:0]     pay_mem  [DEPTH];    // LUT RAM: payload, read by the pick pipeline
    logic [IDX_W-1:0]     next_mem [DEPTH];    // LUT RAM: successor in the entry's list
    logic [STAMP_W-1:0]   stamp_q;             // arrival stamp of the next insert
    logic                 ins;                 // r2 is inserted at this edge
    logic                 free_v_q;            // free_idx_q holds a free entry
    logic [IDX_W-1:0]     free_idx_q;          // the entry the next insert takes
    logic [NUM_LISTS-1:0] lne_q;               // list not empty
    logic [NUM_LISTS-1:0] llast_q;             // list holds exactly one entry
    logic [IDX_W-1:0]     lhead_q [NUM_LISTS];
    logic [IDX_W-1:0]     ltail_q [NUM_LISTS];
    assign ins = r2_v_q;

    // dies
    logic [NUM_DIES-1:0]  busy_q;              // picked, completion not yet taken from c1
    // an incoming beat is matched against infl_tag_q of the busy dies (busy_q as it is before the
    // edge, so no c1_take on the match path). The one wrong match that gives: a beat loaded at the
    // take of a matched c1 beat with c1's tag matches the die that take frees; dup_q (registered with
    // the beat) marks it and the take ignores hit_q / hg_q then (README "Implementation")
    logic [TAG_W-1:0]     infl_tag_q [NUM_DIES];
    logic                 dup_q;               // c1's hit_q is the die freed as c1 was loaded

    // pick pipeline registers (stage A snapshot, B class/stamp, C order, D pick, E read)
    logic [CH_W-1:0]      slot_q, slot_n;
    logic [CH_W-1:0]      a_chan_q, b_chan_q, c_chan_q, d_chan_q;
    logic [NUM_WAYS-1:0]  a_cand_q, a_head_q, b_cand_q, b_head_q, c_cand_q, c_head_q;
    logic [IDX_W-1:0]     a_idx_q [NUM_WAYS];
    logic [IDX_W-1:0]     b_idx_q [NUM_WAYS];
    logic [IDX_W-1:0]     c_idx_q [NUM_WAYS];
    logic [1:0]           b_cls_q [NUM_WAYS];
    logic [STAMP_W-1:0]   b_stamp_q [NUM_WAYS];
    logic [NUM_WAYS-1:0]  c_beats_q [NUM_WAYS]; // [w][v]: front of way v goes before way w's
    logic                 d_v_q, d_head_q;
    logic [WAY_W-1:0]     d_way_q;
    logic [IDX_W-1:0]     d_idx_q;
    logic                 e_v_q;
    // stage E: the picked list, die and channel one-hot (short enables for stage F)
    logic [NUM_LISTS-1:0] e_lsel_q;
    logic [NUM_DIES-1:0]  e_dsel_q;
    logic [NUM_CHAN-1:0]  e_csel_q;
    logic [IDX_W-1:0]     e_idx_q;
    logic [IDX_W-1:0]     e_nraw_q, e_bval_q, e_next; // successor read at E, bypass value
    logic                 e_byp_q;             // the successor was being linked at E
    logic [PAY_W-1:0]     e_pay_q;
    // per channel command output register
    logic [NUM_CHAN-1:0]  cv_q;
    logic [PAY_W-1:0]     cpay_q  [NUM_CHAN];

    // completions: one-deep buffer c1 and the m_ncpl register
    logic                 c1_v_q;
    logic [TAG_W-1:0]     c1_tag_q;
    logic [2:0]           c1_status_q;
    logic [7:0]           c1_corr_q;
    logic [NUM_DIES-1:0]  hit_q, hit_d;
    logic                 c1_rel_q;            // c1 is a release
    // released tags (a release taken, the completion not yet): a 256-bit map kept as 16 rows of 16
    // bits in LUT RAM (a row valid bit per row for the reset), and the row holding c1's tag, read
    // when c1 is loaded (corrected for a take of that row's tag at that edge). Only a take writes
    // the map, and only c1's row, so c1_row_q is that row's content when c1 is taken: the write is
    // c1_row_q with c1's bit changed (no per-bit enables).
    logic [15:0]          relm_mem [16];       // LUT RAM
    logic [15:0]          relm_rv_q;           // row written since reset (else it reads 0)
    logic [15:0]          c1_row_q, row_d, row_w;
    // c1's row (c1_rowf) is c1_row_q, or 0 unless c1_rv_q (the row-valid bit registered apart: Fmax),
    // with the bit fix_oh_q selects replaced by fix_v_q: a beat
    // loaded at c1's take with c1's row gets the bit c1's take leaves (rel_new) in fix_v_q, not in
    // c1_row_q (Fmax: the match reaches 2 flip-flops, fix_v_q and rel_hit_q, not 17)
    logic                 fix_v_q;
    logic [15:0]          fix_oh_q;            // one-hot position of the bit, 0 for none
    logic [15:0]          c1_rowf;
    logic                 c1_rv_q, rv_d;
    logic                 rel_hit, c1_fwd, c1_spur, rel_set, rel_clr, rel_we, rel_val;
    // c1's match flags, loaded with c1 (Fmax: the 32-bit OR of the die matches and the 16:1 select
    // of c1's bit in its row are off the release-map update path; same values, same cycles)
    // hit_q's OR by groups of 4 dies (Fmax: the 32-input OR is split over the load and the take)
    localparam int HG    = (NUM_DIES + 3) / 4;
    logic [HG-1:0]        hg_q, hg_d;
    logic                 rel_hit_q;           // c1_row_q[c1_tag_q[3:0]]
    // the release-map write, registered (Fmax: the match reaches one flip-flop, not the RAM's write
    // enable and the 16 row-valid enables): a take's write is done at the next edge, and a row read
    // in between takes the pending row (wr_row_q) instead of the RAM's
    logic                 wr_v_q;
    logic [3:0]           wr_a_q;
    logic [15:0]          wr_row_q;
    logic                 wr_byp;
    logic                 rel_hit_d;
    logic                 out_valid_q, out_real_q;
    logic [TAG_W-1:0]     out_tag_q;
    logic [2:0]           out_status_q;
    logic [7:0]           out_corr_q;
    logic                 spur_q;
    logic                 out_free, ccpl_fire, c1_take, any_hit;

    // ---------------------------------------------------------------- link address
    // A request is inserted (from r2) behind its list's tail as it is at the insert edge. It is
    // found in two steps, each a small mux of registers: at the r1 -> rb edge the group of GRP
    // lists holding r1's list is registered (not-empty bits, tails) with r2's entry if r2 is
    // inserted into r1's list at that edge; at the rb -> r2 edge the list is selected in the group
    // and r2's entry is taken instead if r2 is inserted into the same list at that edge.
    // Pops are ignored: if a pop empties the list in between, the link is written into the
    // popped entry, which is being freed; it is either still free at the write or taken by this
    // very request, and its successor is written again when it is next linked (README
    // "Implementation"), so the write is harmless.
    // (list views padded to 2^LIST_W: a bad request's list number may be out of range)
    localparam int NL_P = 1 << LIST_W;
    localparam int GRP  = (NL_P < 8) ? NL_P : 8;
    logic [NL_P-1:0]      lne_p;
    logic [IDX_W-1:0]     ltail_p [NL_P];
    logic [GRP-1:0]       rb_gne_q;            // r1's group of lists at the r1 -> rb edge
    logic [IDX_W-1:0]     rb_gtail_q [GRP];
    logic                 rb_same_q;           // r2 was inserted into r1's list at that edge
    logic [GRP-1:0]       rb_gsel_q;           // rb's list in its group, one-hot (Fmax: AND-OR select)
    logic                 rb_nsame_q;          // rb's list == r1's list at that edge (Fmax: same_list
                                               // from a register; r2 and rb load rb and r1 always)
    logic [IDX_W-1:0]     rb_fidx_q;           // with this entry
    logic                 same_list, rb_ne;
    logic [IDX_W-1:0]     rb_tail;
    always_comb begin
        lne_p   = '0;
        lne_p[NUM_LISTS-1:0] = lne_q;
        for (int l = 0; l < NL_P; l++) ltail_p[l] = (l < NUM_LISTS) ? ltail_q[l] : '0;
    end
    assign same_list = r2_v_q && rb_nsame_q;   // == r2_v_q && (r2_list_q == rb_list_q): asserted
    always_comb begin
        logic [IDX_W-1:0] gt;
        gt = '0;
        for (int j = 0; j < GRP; j++) gt = gt | ({IDX_W{rb_gsel_q[j]}} & rb_gtail_q[j]);
        rb_ne   = rb_same_q || (|(rb_gsel_q & rb_gne_q));
        rb_tail = rb_same_q ? rb_fidx_q : gt;
    end

    // ---------------------------------------------------------------- per-list events
    // (e_lsel_q is 0 without a pick in stage E: d_v_q is folded in)
    logic [NUM_LISTS-1:0] l_ins, l_pop;
    always_comb begin
        for (int l = 0; l < NUM_LISTS; l++) begin
            l_ins[l] = ins && r2_lsel_q[l];
            l_pop[l] = e_lsel_q[l];
        end
    end

    // ---------------------------------------------------------------- stage A: snapshot
    // per die its front (HEAD list head if that list is not empty, else the normal list head)
    // and whether it can be picked (idle, a front); then the slot's channel is selected (8:1)
`ifdef ATS_SYNTH_FORM
    logic [7:0]           fr_cand [NUM_WAYS];
    logic [7:0]           fr_head [NUM_WAYS];
    logic [IDX_W-1:0]     fr_hidx [NUM_WAYS][8];   // HEAD list head
    logic [IDX_W-1:0]     fr_nidx [NUM_WAYS][8];   // normal list head
    always_comb begin
        for (int w = 0; w < NUM_WAYS; w++) begin
            fr_cand[w] = '0;
            fr_head[w] = '0;
            for (int c = 0; c < 8; c++) begin
                fr_hidx[w][c] = '0;
                fr_nidx[w][c] = '0;
            end
            for (int c = 0; c < NUM_CHAN; c++) begin
                int d;
                d = c * NUM_WAYS + w;
                fr_cand[w][c] = (lne_q[2*d] || lne_q[2*d+1]) && !busy_q[d];
                fr_head[w][c] = lne_q[2*d+1];
                fr_hidx[w][c] = lhead_q[2*d+1];
                fr_nidx[w][c] = lhead_q[2*d];
            end
        end
    end
    // Each way selects with its own one-hot copy of the slot (soh_q[w]: AND-OR selects, one LUT
    // level less than an 8:1 mux on a binary slot; Fmax), kept apart from the other ways' copies
    // (the synthesis merges identical flip-flops; Fmax: the slot's fan-out is split): ways 0 and 1
    // decode the next slot, ways 2 and 3 rotate their own copy (a ring, set to slot 0 at reset as
    // slot_q is), ways 1 and 3 hold the complement (one-cold). An assertion checks each copy.
    function automatic logic [7:0] soh_hot(input logic [7:0] x, input int w);
        soh_hot = (w % 2 == 1) ? ~x : x;
    endfunction
    logic [7:0]           soh_q [NUM_WAYS];
    logic [7:0]           soh_n [NUM_WAYS];
    logic [7:0]           a_sel [NUM_WAYS];
    always_comb begin
        for (int w = 0; w < NUM_WAYS; w++) begin
            logic [7:0] cur, nxt;
            cur = soh_hot(soh_q[w], w);
            for (int k = 0; k < 8; k++) begin
                if (w < 2) begin
                    nxt[k] = (int'(slot_n) == k);
                end else begin
                    // (slot k follows slot k - 1, slot 0 follows slot PERIOD - 1)
                    nxt[k] = (k == 0) ? (rst || cur[PERIOD - 1]) :
                             (!rst && k < PERIOD && cur[(k == 0) ? 0 : k - 1]);
                end
            end
            soh_n[w] = soh_hot(nxt, w);
            a_sel[w] = cur;
        end
    end
`endif
    // (simulation form: only the slot's channel, the one stage A registers, computed where stage A
    // registers it: with the gate below, only at the edges the scheduler is clocked, although
    // slot_q changes at every edge)

    // ---------------------------------------------------------------- stage B: class, stamp
    logic [ATTR_W-1:0]    attr_rd [NUM_WAYS];
    for (genvar w = 0; w < NUM_WAYS; w++) begin : g_attr
        logic [ATTR_W-1:0] attr_mem [DEPTH];   // LUT RAM copy per way: {read, prio, stamp}
        always_ff @(posedge gclk) begin
            if (ins) attr_mem[free_idx_q] <= {r2_read_q, r2_prio_q, stamp_q};
        end
        assign attr_rd[w] = attr_mem[a_idx_q[w]];
    end

    // ---------------------------------------------------------------- stage C: pairwise order
    // a arrived before b: (a - b) modulo 2^STAMP_W is negative (exact for < 2^(STAMP_W-1) apart)
    logic [NUM_WAYS-1:0]  beats_d [NUM_WAYS];
    // (the stamp compares in a module of their own, ats_nand_sched_older: Fmax, their carry chains
    // would otherwise set ABC9's depth target for the whole scheduler; README "Implementation")
    logic [NUM_WAYS-1:0]  older [NUM_WAYS];    // [w][v], v > w: way v's stamp is older than way w's
    for (genvar w = 0; w < NUM_WAYS; w++) begin : g_older
        for (genvar v = 0; v < NUM_WAYS; v++) begin : g_v
            if (v > w) begin : g_pair
                ats_nand_sched_older #(.W(STAMP_W)) u_older (
                    .a(b_stamp_q[v]), .b(b_stamp_q[w]), .older(older[w][v]));
            end else begin : g_none
                assign older[w][v] = 1'b0;
            end
        end
    end
    always_comb begin
        // fronts of two dies of a channel are distinct entries with distinct stamps: one of the
        // two always goes first, so each pair is compared once
        for (int w = 0; w < NUM_WAYS; w++) beats_d[w] = '0;
        for (int w = 0; w < NUM_WAYS; w++) begin
            for (int v = w + 1; v < NUM_WAYS; v++) begin
                beats_d[w][v] = (b_cls_q[v] > b_cls_q[w]) ||
                                ((b_cls_q[v] == b_cls_q[w]) && older[w][v]);
                beats_d[v][w] = !beats_d[w][v];
            end
        end
    end

    // ---------------------------------------------------------------- stage D: pick
    logic [NUM_WAYS-1:0]  win;
    logic [WAY_W-1:0]     pway;
    logic                 phead;
    logic [IDX_W-1:0]     pidx;
    logic [7:0]           cv8, crdy8;
    logic                 pick;
    always_comb begin
        pway  = '0;
        phead = 1'b0;
        pidx  = '0;
        for (int w = 0; w < NUM_WAYS; w++) begin
            win[w] = c_cand_q[w] && !(|(c_cand_q & c_beats_q[w]));
            pway   = pway  | ({WAY_W{win[w]}} & WAY_W'(w));
            phead  = phead | (win[w] && c_head_q[w]);
            pidx   = pidx  | ({IDX_W{win[w]}} & c_idx_q[w]);
        end
        cv8   = 8'(cv_q);
        crdy8 = 8'(m_ccmd_ready);
        // the channel's output register is free at this edge (it is loaded two edges later)
        pick  = (|c_cand_q) && (!cv8[c_chan_q] || crdy8[c_chan_q]);
    end

    // ---------------------------------------------------------------- stage E: payload read
    // The successor of the picked entry is read at E; if it is being linked at that edge the
    // read misses it, so the linked entry is registered beside it (e_byp_q / e_bval_q) and
    // chosen at F. (Kept as two registers on purpose: a transparent read port would let the
    // synthesis move the register to the RAM address and the read back into stage F.)
    assign e_next = e_byp_q ? e_bval_q : e_nraw_q;

    // ---------------------------------------------------------------- completions
    // Outstanding tags are kept in outst_q: set one edge after a request with the tag is
    // accepted (a duplicate sets a bit that is already set; a range/op error sets nothing),
    // cleared one edge after its completion is accepted on m_ncpl (so the tag is outstanding at
    // that edge); a clear wins over a set of the same bit (only a duplicate can cause both).
    // The take's decisions (ats_nand_sched_take, its own hierarchy level: Fmax, ABC9 maps them for
    // least depth; README "Implementation"): out_free, c1_take, s_ccpl_ready; any_hit = |hit_q
    // unless dup_q; c1 as taken: a release frees its (matched) die and marks the tag released, a
    // completion matched to a die frees it and goes out (c1_fwd), one whose tag was released goes
    // out and unmarks it, anything else is spurious (c1_spur); the map write rel_we (rel_set ||
    // rel_clr) and c1's bit after the take (rel_new). The written row is built from registers only
    // (the take and the match only in the write enable): the bit's new value rel_val is c1_rel_q
    // whenever the map is written (1 for a matched release, 0 for a completion of a released tag;
    // asserted), so c1_rel_q is written. A second instance gives a copy of s_ccpl_ready (ccpl_rdy_b)
    // for the load enable of c1's wide fields (Fmax: the enable's fan-out split in two).
    logic                 ccpl_rdy_b;
    logic                 rel_new;
    ats_nand_sched_take #(.HG(HG)) u_take (
        .c1_v(c1_v_q), .out_valid(out_valid_q), .ncpl_ready(m_ncpl_ready), .eq_ne(eq_ne_q),
        .hg(hg_q), .dup(dup_q), .c1_rel(c1_rel_q), .rel_hit(rel_hit_q),
        .out_free(out_free), .c1_take(c1_take), .ccpl_ready(s_ccpl_ready), .any_hit(any_hit),
        .fwd(c1_fwd), .spur(c1_spur), .rel_we(rel_we), .rel_new(rel_new));
    /* verilator lint_off PINCONNECTEMPTY */
    ats_nand_sched_take #(.HG(HG)) u_take_b (
        .c1_v(c1_v_q), .out_valid(out_valid_q), .ncpl_ready(m_ncpl_ready), .eq_ne(eq_ne_q),
        .hg(hg_q), .dup(dup_q), .c1_rel(c1_rel_q), .rel_hit(rel_hit_q),
        .out_free(), .c1_take(), .ccpl_ready(ccpl_rdy_b), .any_hit(),
        .fwd(), .spur(), .rel_we(), .rel_new());
    /* verilator lint_on PINCONNECTEMPTY */
    assign ccpl_fire    = s_ccpl_valid && s_ccpl_ready;
    assign rel_hit      = rel_hit_q;
    assign rel_set      = c1_take && c1_rel_q && any_hit;
    assign rel_clr      = c1_take && !c1_rel_q && !any_hit && rel_hit;
    assign rel_val      = c1_rel_q && any_hit;
    // The row read for a beat loaded into c1 (row_d, and its bit rel_hit_d): c1's row is corrected
    // for c1's take at this edge. A beat is loaded with c1 full only at c1's take, and c1_row_q is
    // c1's row as it is up to the take, so the row after the take is c1_row_q with c1's bit set to
    // rel_new: the bypass is selected by c1_v_q and the row compare alone (Fmax: no c1_take, no
    // match in the select; only rel_new, 1 bit, carries the match). rel_new = rel_we ? c1_rel_q :
    // rel_hit_q with rel_we's terms (c1_take is true when it is used) written out: asserted.
    logic row_byp;
    assign row_byp = c1_v_q && (c1_tag_q[7:4] == s_ccpl_tag[7:4]);
    always_comb begin
        for (int i = 0; i < 16; i++) c1_rowf[i] = fix_oh_q[i] ? fix_v_q : (c1_rv_q && c1_row_q[i]);
        for (int i = 0; i < 16; i++) row_w[i] = (int'(c1_tag_q[3:0]) == i) ? c1_rel_q : c1_rowf[i];
        wr_byp = wr_v_q && (wr_a_q == s_ccpl_tag[7:4]);
        // (with row_byp, c1's own bit is rel_new: it goes to fix_v_q, c1_row_q's copy is not read)
        // (c1_row_q takes the RAM's row as it is, c1_rv_q whether it counts: row valid or a bypass)
        row_d = row_byp ? c1_rowf : wr_byp ? wr_row_q : relm_mem[s_ccpl_tag[7:4]];
        rv_d  = row_byp || wr_byp || relm_rv_q[s_ccpl_tag[7:4]];
        // row_d[s_ccpl_tag[3:0]]
        if (!row_byp && wr_byp) begin
            rel_hit_d = wr_row_q[s_ccpl_tag[3:0]];
        end else if (!row_byp) begin
            rel_hit_d = relm_rv_q[s_ccpl_tag[7:4]] && relm_mem[s_ccpl_tag[7:4]][s_ccpl_tag[3:0]];
        end else if (c1_tag_q[3:0] == s_ccpl_tag[3:0]) begin
            rel_hit_d = rel_new;
        end else begin
            rel_hit_d = c1_rowf[s_ccpl_tag[3:0]];
        end
    end
    // hit_d: the busy dies whose in-flight tag the incoming beat matches (a die c1 frees at this
    // edge included: see dup_q), hg_d their ORs by groups of 8
`ifdef ATS_SYNTH_FORM
    // (a module of its own, kept apart by the synthesis: ABC9 maps it for least depth on its own,
    // not up to the depth of the slowest cone elsewhere in the block; README "Implementation")
    logic [NUM_DIES*TAG_W-1:0] infl_tag_v;
    always_comb for (int d = 0; d < NUM_DIES; d++) infl_tag_v[d*TAG_W +: TAG_W] = infl_tag_q[d];
    ats_nand_sched_match #(.N(NUM_DIES), .W(TAG_W), .GS(4)) u_match (
        .valid(busy_q), .tags(infl_tag_v), .tag(s_ccpl_tag), .hit(hit_d), .grp(hg_d));
`else
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) begin
            // simulation form: only for a beat (ccpl_fire; without one c1_v_q is 0, hit_q not read)
            hit_d[d] = ccpl_fire && busy_q[d] && (infl_tag_q[d] == s_ccpl_tag);
        end
        hg_d = '0;
        for (int d = 0; d < NUM_DIES; d++) hg_d[d / 4] = hg_d[d / 4] || hit_d[d];
    end
`endif

    // ---------------------------------------------------------------- free-entry FIFO
    // entries 0..DEPTH-1 are handed out fresh after reset, then freed entries in FIFO order
    logic [IDX_W-1:0]     fq_mem [DEPTH];      // LUT RAM
    logic [IDX_W-1:0]     fq_wr_q, fq_rd_q;
    logic [CNT_W-1:0]     fq_cnt_q, fresh_q;
    logic                 f_load, f_fresh, f_pop;
    assign f_load  = !free_v_q || ins;
    assign f_fresh = (fresh_q != CNT_W'(DEPTH));
    assign f_pop   = f_load && !f_fresh && (fq_cnt_q != '0);

    // ---------------------------------------------------------------- accounting, BAD_REQ queue
    // entries: an acceptance claims one, a bad request gives it back two edges later, a picked
    // request's entry is freed at its stage F. BAD_REQ queue: two entries (README "Acceptance"),
    // the head leaves when the m_ncpl register is free, a bad request found at the check joins.
    logic [CNT_W-1:0]     nfree_d;
    // BAD_REQ queue: a circular buffer of 4 (at most 3 are ever waiting: README), written at
    // the check edge, read by the m_ncpl register
    logic [TAG_W-1:0]     eq_mem [4];
    logic [1:0]           eq_wr_q, eq_rd_q;
    logic [1:0]           eq_cnt_q, eq_cnt_d;  // BAD_REQs waiting (at most 3)
    logic                 eq_one_q;            // exactly one waiting
    logic                 eq_push, eq_pop;
    always_comb begin
        nfree_d = CNT_W'(32'(nfree_q) - 32'(acc) + 32'(e_v_q) + 32'(r2_bad_q));
        eq_push = rb_v_q && bad;
        eq_pop  = out_free && eq_ne_q;
        eq_cnt_d = eq_cnt_q + 2'(eq_push) - 2'(eq_pop);
    end

    // ================================================================ registers
    always_ff @(posedge gclk) begin
        if (ins) pay_mem[free_idx_q] <= r2_pay_q;
        if (ins && r2_link_q) next_mem[r2_tail_q] <= free_idx_q;
        eq_mem[eq_wr_q] <= rb_pay_q[POS_TAG +: TAG_W]; // slot eq_wr_q is free (<= 3 wait)
        if (wr_v_q) relm_mem[wr_a_q] <= wr_row_q;
        if (e_v_q) fq_mem[fq_wr_q] <= e_idx_q;
    end

    always_ff @(posedge gclk) begin
        // ---- accept -> r1 (fields loaded every cycle: used only after an acceptance)
        r1_v_q    <= rst ? 1'b0 : acc;
        r1_pay_q  <= {s_nreq_tag, s_nreq_op, s_nreq_way, s_nreq_block, s_nreq_page, s_nreq_slot};
        r1_prio_q <= s_nreq_prio_read;
        r1_tsel_n_q <= ~s_nreq_tag[7:3];
        r1_rbad_q <= (s_nreq_op == 2'd3) || (int'(s_nreq_chan) >= NUM_CHAN) ||
                     (int'(s_nreq_way) >= NUM_WAYS);
        for (int g = 0; g < 8; g++) begin
            r1_gsel_q[g] <= (((int'(s_nreq_chan) * NUM_WAYS + int'(s_nreq_way)) * 2 +
                              int'(s_nreq_head)) % (1 << LIST_W)) / GRP == g;
        end
        r1_list_q <= LIST_W'((int'(s_nreq_chan) * NUM_WAYS + int'(s_nreq_way)) * 2 +
                             int'(s_nreq_head));

        // ---- r1 -> rb (row of the outstanding map)
        rb_v_q    <= rst ? 1'b0 : r1_v_q;
        rb_pay_q  <= r1_pay_q;
        rb_prio_q <= r1_prio_q;
        rb_rbad_q <= r1_rbad_q;
        rb_list_q <= r1_list_q;
        rb_row_q  <= outst_q[8 * int'(r1_tsel) +: 8];
        for (int j = 0; j < GRP; j++) begin
`ifdef ATS_SYNTH_FORM
            // (AND-OR over the groups with the one-hot r1_gsel_q: Fmax)
            logic             gn;
            logic [IDX_W-1:0] gt;
            gn = 1'b0;
            gt = '0;
            for (int g = 0; g < NL_P / GRP; g++) begin
                gn = gn | (r1_gsel_q[g] && lne_p[g * GRP + j]);
                gt = gt | ({IDX_W{r1_gsel_q[g]}} & ltail_p[g * GRP + j]);
            end
            rb_gne_q[j]   <= gn;
            rb_gtail_q[j] <= gt;
`else
            rb_gne_q[j]   <= lne_p[int'(r1_list_q) / GRP * GRP + j];
            rb_gtail_q[j] <= ltail_p[int'(r1_list_q) / GRP * GRP + j];
`endif
        end
        rb_same_q <= r2_v_q && (r2_list_q == r1_list_q);
        rb_nsame_q <= (rb_list_q == r1_list_q);
        for (int j = 0; j < GRP; j++) rb_gsel_q[j] <= (int'(r1_list_q) % GRP == j);
        rb_fidx_q <= free_idx_q;

        // ---- check -> r2
        r2_v_q    <= rst ? 1'b0 : (rb_v_q && !bad);
        r2_bad_q  <= rst ? 1'b0 : (rb_v_q && bad);
        r2_pay_q  <= rb_pay_q;
        r2_prio_q <= rb_prio_q;
        r2_read_q <= (rb_pay_q[POS_OP +: 2] == 2'd0);
        r2_list_q <= rb_list_q;
        for (int l = 0; l < NUM_LISTS; l++) r2_lsel_q[l] <= (int'(rb_list_q) == l);
        r2_link_q <= same_list || rb_ne;
        r2_tail_q <= same_list ? free_idx_q : rb_tail;
`ifdef ATS_SYNTH_FORM
        for (int t = 0; t < 256; t++) begin       // a clear wins: see README "Implementation"
            if (clr_hi_q[t / 16] && clr_lo_q[t % 16]) begin
                outst_q[t] <= 1'b0;
            end else if (set_hi_q[t / 16] && set_lo_q[t % 16]) begin
                outst_q[t] <= 1'b1;
            end
        end
`else
        // simulation form: the same update a 16-bit row at a time, only the rows selected
        if (|{clr_hi_q, set_hi_q}) begin
            for (int i = 0; i < 16; i++) begin
                if (clr_hi_q[i] || set_hi_q[i]) begin
                    outst_q[16*i +: 16] <= (outst_q[16*i +: 16] | (set_hi_q[i] ? set_lo_q : 16'h0)) &
                                           ~(clr_hi_q[i] ? clr_lo_q : 16'h0);
                end
            end
        end
`endif
        if (rst) outst_q <= '0;
`ifdef ATS_SYNTH_FORM
        for (int i = 0; i < 16; i++) begin
            clr_hi_q[i] <= !rst && out_valid_q && out_real_q && m_ncpl_ready &&
                           (int'(out_tag_q[7:4]) == i);
            clr_lo_q[i] <= (int'(out_tag_q[3:0]) == i);
            set_hi_q[i] <= !rst && acc && (s_nreq_op != 2'd3) && (int'(s_nreq_chan) < NUM_CHAN) &&
                           (int'(s_nreq_way) < NUM_WAYS) && (int'(s_nreq_tag[7:4]) == i);
            set_lo_q[i] <= (int'(s_nreq_tag[3:0]) == i);
        end
`else
        // simulation form: the same one-hot nibbles as shifts
        clr_hi_q <= (!rst && out_valid_q && out_real_q && m_ncpl_ready) ? 16'd1 << out_tag_q[7:4] : 16'd0;
        clr_lo_q <= 16'd1 << out_tag_q[3:0];
        set_hi_q <= (!rst && acc && (s_nreq_op != 2'd3) && (int'(s_nreq_chan) < NUM_CHAN) &&
                     (int'(s_nreq_way) < NUM_WAYS)) ? 16'd1 << s_nreq_tag[7:4] : 16'd0;
        set_lo_q <= 16'd1 << s_nreq_tag[3:0];
`endif

        // ---- entry accounting
        nfree_q  <= rst ? CNT_W'(DEPTH) : nfree_d;
        nf_ge1_q <= rst ? 1'b1 : (nfree_d != '0);

        // ---- free-entry FIFO and the allocation register
        if (f_load) begin
            if (f_fresh) begin
                free_idx_q <= IDX_W'(fresh_q);
                free_v_q   <= 1'b1;
            end else if (fq_cnt_q != '0) begin
                free_idx_q <= fq_mem[fq_rd_q];
                free_v_q   <= 1'b1;
            end else begin
                free_v_q   <= 1'b0;
            end
        end
        if (f_load && f_fresh) fresh_q <= fresh_q + CNT_W'(1);
        if (f_pop) fq_rd_q <= (int'(fq_rd_q) == DEPTH - 1) ? '0 : fq_rd_q + IDX_W'(1);
        if (e_v_q) fq_wr_q <= (int'(fq_wr_q) == DEPTH - 1) ? '0 : fq_wr_q + IDX_W'(1);
        fq_cnt_q <= CNT_W'(32'(fq_cnt_q) + 32'(e_v_q) - 32'(f_pop));
        stamp_q  <= stamp_q + STAMP_W'(ins);
        if (rst) begin
            free_v_q <= 1'b0;
            fresh_q  <= '0;
            fq_rd_q  <= '0;
            fq_wr_q  <= '0;
            fq_cnt_q <= '0;
            stamp_q  <= '0;
        end

        // ---- lists: insert (r2) and pop (stage F of a pick)
`ifndef ATS_SYNTH_FORM
        if (ins || e_v_q)                         // (simulation form: nothing to do otherwise)
`endif
        for (int l = 0; l < NUM_LISTS; l++) begin
            if (l_ins[l]) ltail_q[l] <= free_idx_q;
            if (l_ins[l] && (!lne_q[l] || (l_pop[l] && llast_q[l]))) begin
                lne_q[l]   <= 1'b1;               // the new entry becomes the head
                llast_q[l] <= 1'b1;
                lhead_q[l] <= free_idx_q;
            end else if (l_ins[l]) begin
                llast_q[l] <= 1'b0;               // at least two entries now
                if (l_pop[l]) lhead_q[l] <= e_next;
            end else if (l_pop[l] && llast_q[l]) begin
                lne_q[l]   <= 1'b0;
                llast_q[l] <= 1'b0;
            end else if (l_pop[l]) begin
                lhead_q[l] <= e_next;
                llast_q[l] <= (e_next == ltail_q[l]);
            end
        end
        if (rst) begin
            lne_q   <= '0;
            llast_q <= '0;
        end

        // ---- pick pipeline (slot_q: below, on the free-running clock)
        a_chan_q <= slot_q;
        for (int w = 0; w < NUM_WAYS; w++) begin
`ifdef ATS_SYNTH_FORM
            begin
                // (AND-OR over the channels with the one-hot slot; per channel the front is the
                // HEAD list head or the normal list head)
                logic [IDX_W-1:0] ix;
                ix = '0;
                for (int c = 0; c < NUM_CHAN; c++) begin
                    ix = ix | ({IDX_W{a_sel[w][c]}} & (fr_head[w][c] ? fr_hidx[w][c] : fr_nidx[w][c]));
                end
                a_cand_q[w] <= |(a_sel[w] & fr_cand[w]);
                a_head_q[w] <= |(a_sel[w] & fr_head[w]);
                a_idx_q[w]  <= ix;
            end
`else
            int d;
            d = int'(slot_q) * NUM_WAYS + w;
            if (int'(slot_q) < NUM_CHAN) begin
                a_cand_q[w] <= (lne_q[2*d] || lne_q[2*d+1]) && !busy_q[d];
                a_head_q[w] <= lne_q[2*d+1];
                a_idx_q[w]  <= lne_q[2*d+1] ? lhead_q[2*d+1] : lhead_q[2*d];
            end else begin
                a_cand_q[w] <= 1'b0;
                a_head_q[w] <= 1'b0;
                a_idx_q[w]  <= '0;
            end
`endif
        end
        b_chan_q <= a_chan_q;
        b_cand_q <= a_cand_q;
        b_head_q <= a_head_q;
        for (int w = 0; w < NUM_WAYS; w++) begin
            b_idx_q[w]   <= a_idx_q[w];
            b_cls_q[w]   <= a_head_q[w] ? 2'd2 :
                            ((attr_rd[w][STAMP_W + 1] && (attr_rd[w][STAMP_W] || reads_first)) ?
                             2'd1 : 2'd0);
            b_stamp_q[w] <= attr_rd[w][0 +: STAMP_W];
        end
        c_chan_q <= b_chan_q;
        c_cand_q <= b_cand_q;
        c_head_q <= b_head_q;
        for (int w = 0; w < NUM_WAYS; w++) begin
            c_idx_q[w]   <= b_idx_q[w];
            c_beats_q[w] <= beats_d[w];
        end
        d_v_q    <= pick;
        d_chan_q <= c_chan_q;
        d_way_q  <= pway;
        d_head_q <= phead;
        d_idx_q  <= pidx;
        e_v_q    <= d_v_q;
        // (the one-hot selects include d_v_q: all 0 without a pick, so stage F's enables need no
        // e_v_q: Fmax, its fan-out; asserted)
        for (int l = 0; l < NUM_LISTS; l++) begin
            e_lsel_q[l] <= d_v_q &&
                           (((int'(d_chan_q) * NUM_WAYS + int'(d_way_q)) * 2 + int'(d_head_q)) == l);
        end
        for (int d = 0; d < NUM_DIES; d++) begin
            e_dsel_q[d] <= d_v_q && ((int'(d_chan_q) * NUM_WAYS + int'(d_way_q)) == d);
        end
        for (int c = 0; c < NUM_CHAN; c++) e_csel_q[c] <= d_v_q && (int'(d_chan_q) == c);
        e_idx_q  <= d_idx_q;
        e_nraw_q <= next_mem[d_idx_q];
        e_byp_q  <= ins && r2_link_q && (r2_tail_q == d_idx_q);
        e_bval_q <= free_idx_q;
        e_pay_q  <= pay_mem[d_idx_q];
        if (rst) begin
            a_cand_q <= '0;
            b_cand_q <= '0;
            c_cand_q <= '0;
            d_v_q    <= 1'b0;
            e_v_q    <= 1'b0;
            e_lsel_q <= '0;
            e_dsel_q <= '0;
            e_csel_q <= '0;
        end

        // ---- stage F: command register, die busy and in-flight tag
        for (int c = 0; c < NUM_CHAN; c++) begin
            if (e_csel_q[c]) begin
                cv_q[c]   <= 1'b1;
                cpay_q[c] <= e_pay_q;
            end else if (m_ccmd_ready[c]) begin
                cv_q[c]   <= 1'b0;
            end
        end
        for (int d = 0; d < NUM_DIES; d++) begin
            if (e_dsel_q[d]) begin
                busy_q[d]     <= 1'b1;
                infl_tag_q[d] <= e_pay_q[POS_TAG +: TAG_W];
            end
            // never the die being set (README); with dup_q hit_q is a die freed already
            if (c1_take && hit_q[d] && !dup_q) busy_q[d] <= 1'b0;
        end
        if (rst) begin
            cv_q   <= '0;
            busy_q <= '0;
        end

        // ---- BAD_REQ queue, then the m_ncpl register (a BAD_REQ goes out before channel
        // completions)
        // (not-empty and exactly-one flags from the registered flags and push/pop only: the
        // push decision is late in the cycle)
        eq_wr_q  <= rst ? '0 : eq_wr_q + 2'(eq_push);
        eq_rd_q  <= rst ? '0 : eq_rd_q + 2'(eq_pop);
        eq_ne_q  <= rst ? 1'b0 : (eq_push || (eq_ne_q && !(eq_pop && eq_one_q)));
        nrdy_q   <= rst ? 1'b1 : (!(eq_push || (eq_ne_q && !(eq_pop && eq_one_q))) && (nfree_d != '0));
        eq_cnt_q <= rst ? '0 : eq_cnt_d;
        eq_one_q <= rst ? 1'b0 : (eq_cnt_d == 2'd1);
        // (the payload registers are loaded whenever there is something to load; only the
        // valid bit depends on the match, which keeps the 32-bit OR off their enables)
        if (out_free) begin
            out_valid_q <= eq_ne_q || (c1_take && c1_fwd);
            out_real_q  <= !eq_ne_q;
            if (eq_ne_q) begin
                out_tag_q    <= eq_mem[eq_rd_q];
                out_status_q <= ST_BAD_REQ;
                out_corr_q   <= '0;
            end else if (c1_v_q) begin
                out_tag_q    <= c1_tag_q;
                out_status_q <= c1_status_q;
                out_corr_q   <= c1_corr_q;
            end
        end
        spur_q <= c1_take && c1_spur;
        // (c1's fields are loaded whenever c1 can take a beat, valid or not: they are read only
        // with c1_v_q; Fmax: the enable's fan-out without s_ccpl_valid)
        if (s_ccpl_ready) begin
            c1_tag_q    <= s_ccpl_tag;
            c1_status_q <= s_ccpl_status;
            c1_corr_q   <= s_ccpl_corrected;
            c1_rel_q    <= s_ccpl_rel;
            for (int i = 0; i < 16; i++) fix_oh_q[i] <= row_byp && (int'(c1_tag_q[3:0]) == i);
            fix_v_q     <= rel_new;
            hg_q        <= hg_d;
            rel_hit_q   <= rel_hit_d;
            // the beat matches (hit_d) the die c1's take frees at this edge: c1 matched a die
            // (any_hit), the die's in-flight tag is c1's tag, and the beat has that tag
            dup_q       <= c1_take && any_hit && (s_ccpl_tag == c1_tag_q);
        end
        if (ccpl_rdy_b) begin                      // (== s_ccpl_ready: a copy)
            c1_row_q    <= row_d;
            c1_rv_q     <= rv_d;
            hit_q       <= hit_d;
        end
        wr_v_q   <= rst ? 1'b0 : rel_we;
        wr_a_q   <= c1_tag_q[7:4];
        wr_row_q <= row_w;
        if (wr_v_q) relm_rv_q[wr_a_q] <= 1'b1;
        if (rst) relm_rv_q <= '0;
        c1_v_q <= rst ? 1'b0 : (ccpl_fire || (c1_v_q && !c1_take));
        if (rst) begin
            out_valid_q <= 1'b0;
            spur_q      <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- slot counter
    // The pick pipeline's slot (channel served at stage A): the only register that changes in every
    // cycle, so it stays on the free-running clock and the rest can be gated (below).
    assign slot_n = (rst || int'(slot_q) == PERIOD - 1) ? '0 : slot_q + CH_W'(1);
    always_ff @(posedge clk) begin
        slot_q <= slot_n;
`ifdef ATS_SYNTH_FORM
        for (int w = 0; w < NUM_WAYS; w++) soh_q[w] <= soh_n[w];
`endif
    end

    // ---------------------------------------------------------------- simulation-only clock gate
    // With ATS_SIM_CGATE (and not SYNTHESIS) every register but slot_q takes a clock that stops while
    // the scheduler is settled (rtl/common/ats_sim_cgate.sv, README_sched.md "Simulation cost"): it
    // runs while a valid is up on s_nreq or s_ccpl, while a request or a beat is in the accept, check,
    // pick or completion registers, a command waits on m_ccmd or a completion on m_ncpl, a BAD_REQ
    // waits, a tag-map update or a release-map write is pending, or some die is idle with a request queued (a candidate for
    // its channel's next slot), and for HOLD edges after (the entry-accounting and free-entry tails).
    // Settled, every register keeps its value at every edge except the pipeline registers that
    // follow slot_q, whose values matter only with a candidate (a_cand_q .. e_v_q all 0 then): so the
    // gated scheduler's outputs are those of the ungated one at every edge. All its inputs but
    // reads_first are looked at only with one of those valids up; the ones the SoC drives change at
    // rising edges (FALL).
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_SCHED_CGATE
`endif
`endif
`ifdef ATS_SCHED_CGATE
    logic [NUM_DIES-1:0] cg_cand;         // die idle with a request queued
    logic                cg_act;
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) cg_cand[d] = (lne_q[2*d] || lne_q[2*d+1]) && !busy_q[d];
        cg_act = s_nreq_valid || s_ccpl_valid || r1_v_q || rb_v_q || r2_v_q || r2_bad_q ||
                 (|a_cand_q) || (|b_cand_q) || (|c_cand_q) || d_v_q || e_v_q || (|cv_q) ||
                 c1_v_q || wr_v_q || out_valid_q || spur_q || eq_ne_q || (|set_hi_q) || (|clr_hi_q) ||
                 (|cg_cand);
    end
    ats_sim_cgate #(.W(1), .HOLD(4), .ID(13), .FALL(1)) u_cg_sched (
        .clk, .rst, .act(cg_act), .watch(reads_first), .gclk(gclk));
`else
    assign gclk = clk;
`endif
`undef ATS_SCHED_CGATE

    // ---------------------------------------------------------------- outputs
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_ccmd
        assign m_ccmd_valid[c]              = cv_q[c];
        assign m_ccmd_tag[c * 8 +: 8]       = cpay_q[c][POS_TAG +: 8];
        assign m_ccmd_op[c * 2 +: 2]        = cpay_q[c][POS_OP +: 2];
        assign m_ccmd_way[c * 2 +: 2]       = cpay_q[c][POS_WAY +: WAY_W];
        assign m_ccmd_block[c * 12 +: 12]   = cpay_q[c][SLOT_W + 8 +: 12];
        assign m_ccmd_page[c * 8 +: 8]      = cpay_q[c][SLOT_W +: 8];
        assign m_ccmd_slot[c * SLOT_W +: SLOT_W] = cpay_q[c][0 +: SLOT_W];
    end
    assign m_ncpl_valid     = out_valid_q;
    assign m_ncpl_tag       = out_tag_q;
    assign m_ncpl_status    = out_status_q;
    assign m_ncpl_corrected = out_corr_q;
    assign err_spurious     = spur_q;

`ifndef SYNTHESIS
    // reference values for the assertions below: stage E's selects without d_v_q, and the match as
    // the contract defines it (mv_q: busy dies less the one c1's take frees, mh_q: c1's match)
    logic [NUM_LISTS-1:0] e_lsel_chk_q;
    logic [NUM_DIES-1:0]  e_dsel_chk_q, mv_q, mh_q;
    logic [NUM_CHAN-1:0]  e_csel_chk_q;
    always_ff @(posedge gclk) begin
        for (int l = 0; l < NUM_LISTS; l++) begin
            e_lsel_chk_q[l] <= ((int'(d_chan_q) * NUM_WAYS + int'(d_way_q)) * 2 + int'(d_head_q)) == l;
        end
        for (int d = 0; d < NUM_DIES; d++) begin
            e_dsel_chk_q[d] <= (int'(d_chan_q) * NUM_WAYS + int'(d_way_q)) == d;
            if (e_v_q && e_dsel_chk_q[d]) mv_q[d] <= 1'b1;
            if (ccpl_fire && mv_q[d] && infl_tag_q[d] == s_ccpl_tag) mv_q[d] <= 1'b0;
        end
        for (int c = 0; c < NUM_CHAN; c++) e_csel_chk_q[c] <= (int'(d_chan_q) == c);
        if (ccpl_fire) begin
            for (int d = 0; d < NUM_DIES; d++) mh_q[d] <= mv_q[d] && infl_tag_q[d] == s_ccpl_tag;
        end
        if (rst) mv_q <= '0;
    end
    // the comments' invariants: at most 3 BAD_REQs wait (4-entry queue), its registered flags
    // agree with the count, and a channel completion never frees the die being set this cycle
    always_ff @(posedge gclk) begin
        if (!rst) begin
            assert (!(eq_push && !eq_pop && eq_cnt_q == 2'd3))
                else $error("ats_nand_sched: a fourth BAD_REQ queued (%m)");
            assert (nrdy_q == (!eq_ne_q && nf_ge1_q))
                else $error("ats_nand_sched: s_nreq_ready's register out of step with its flags (%m)");
            assert (eq_ne_q == (eq_cnt_q != 2'd0) && eq_one_q == (eq_cnt_q == 2'd1))
                else $error("ats_nand_sched: BAD_REQ queue flags out of step with its count %0d (%m)", eq_cnt_q);
            assert (!(c1_take && !dup_q) || (hit_q & e_dsel_q) == '0)
                else $error("ats_nand_sched: a completion frees the die being set (%m)");
            assert (!c1_v_q || (any_hit == ((|hit_q) && !dup_q) && rel_hit_q == c1_rowf[c1_tag_q[3:0]]))
                else $error("ats_nand_sched: c1's registered match flags out of step (%m)");
            assert (e_lsel_q == (e_v_q ? e_lsel_chk_q : '0) && e_dsel_q == (e_v_q ? e_dsel_chk_q : '0) &&
                    e_csel_q == (e_v_q ? e_csel_chk_q : '0))
                else $error("ats_nand_sched: stage E's selects out of step with e_v_q (%m)");
            assert (!c1_v_q || (hit_q & ~{NUM_DIES{dup_q}}) == mh_q)
                else $error("ats_nand_sched: c1's match (hit_q, dup_q) differs from the reference match (%m)");
            assert (!rel_we || rel_val == c1_rel_q)
                else $error("ats_nand_sched: release-map write data out of step (%m)");
            assert (!c1_take || rel_new == (rel_we ? c1_rel_q : rel_hit_q))
                else $error("ats_nand_sched: c1's new release bit out of step (%m)");
            assert (!c1_v_q || c1_rowf == ((wr_v_q && wr_a_q == c1_tag_q[7:4]) ? wr_row_q :
                                            (relm_rv_q[c1_tag_q[7:4]] ? relm_mem[c1_tag_q[7:4]] : 16'h0)))
                else $error("ats_nand_sched: c1's row (c1_rowf) differs from its row of the release map (%m)");
`ifdef ATS_SYNTH_FORM
            for (int w = 0; w < NUM_WAYS; w++) begin
                assert (soh_hot(soh_q[w], w) == 8'(1) << slot_q)
                    else $error("ats_nand_sched: way %0d's slot copy out of step (%m)", w);
            end
`endif
            assert (r1_tsel_n_q == ~r1_pay_q[POS_TAG + 3 +: 5])
                else $error("ats_nand_sched: r1_tsel_n_q out of step (%m)");
            assert (r1_gsel_q == 8'(1) << (int'(r1_list_q) / GRP))
                else $error("ats_nand_sched: r1_gsel_q out of step (%m)");
            assert (rb_gsel_q == GRP'(1) << (int'(rb_list_q) % GRP))
                else $error("ats_nand_sched: rb_gsel_q out of step (%m)");
            assert (same_list == (r2_v_q && (r2_list_q == rb_list_q)))
                else $error("ats_nand_sched: same_list out of step (%m)");
            assert (!rel_we == !(rel_set || rel_clr))
                else $error("ats_nand_sched: release-map write enable out of step (%m)");
        end
    end
`endif
endmodule

// ats_nand_sched_match: which of N valid W-bit tags equal `tag`, and the ORs of that by groups of GS.
// Its own
// hierarchy level in synthesis (keep_hierarchy): ABC9 maps each module apart, so this cone gets its
// least depth instead of the depth of the scheduler's slowest cone (README_sched.md "Implementation").
/* verilator lint_off DECLFILENAME */
(* keep_hierarchy *)
module ats_nand_sched_match #(
    parameter int N = 32,
    parameter int W = 8,
    parameter int GS = 4
) (
    input  wire logic [N-1:0]   valid,
    input  wire logic [N*W-1:0] tags,
    input  wire logic [W-1:0]   tag,
    output      logic [N-1:0]   hit,
    output      logic [(N+GS-1)/GS-1:0] grp
);
    always_comb begin
        for (int i = 0; i < N; i++) hit[i] = valid[i] && (tags[i*W +: W] == tag);
        grp = '0;
        for (int i = 0; i < N; i++) grp[i / GS] = grp[i / GS] || hit[i];
    end
endmodule

// ats_nand_sched_older: a's arrival stamp is older than b's ((a - b) modulo 2^W negative). Its own
// hierarchy level in synthesis: its carry chain does not set the scheduler's depth target.
(* keep_hierarchy *)
module ats_nand_sched_older #(
    parameter int W = 16
) (
    input  wire logic [W-1:0] a,
    input  wire logic [W-1:0] b,
    output      logic         older
);
    logic [W-1:0] diff;
    assign diff  = a - b;
    assign older = diff[W-1];
endmodule

// ats_nand_sched_take: the completion buffer's take decisions from c1's registers (the scheduler's
// "completions" section). Its own hierarchy level in synthesis, for the same reason as the match.
(* keep_hierarchy *)
module ats_nand_sched_take #(
    parameter int HG = 8
) (
    input  wire logic          c1_v,
    input  wire logic          out_valid,
    input  wire logic          ncpl_ready,
    input  wire logic          eq_ne,
    input  wire logic [HG-1:0] hg,
    input  wire logic          dup,
    input  wire logic          c1_rel,
    input  wire logic          rel_hit,
    output      logic          out_free,
    output      logic          c1_take,
    output      logic          ccpl_ready,
    output      logic          any_hit,
    output      logic          fwd,
    output      logic          spur,
    output      logic          rel_we,
    output      logic          rel_new
);
    always_comb begin
        out_free   = !out_valid || ncpl_ready;
        c1_take    = c1_v && out_free && !eq_ne;
        ccpl_ready = !c1_v || c1_take;
        any_hit    = (|hg) && !dup;
        fwd        = !c1_rel && (any_hit || rel_hit);
        spur       = c1_rel ? !any_hit : !(any_hit || rel_hit);
        rel_we     = c1_take && (c1_rel ? any_hit : (!any_hit && rel_hit));
        rel_new    = c1_rel ? (rel_hit || any_hit) : (rel_hit && any_hit);
    end
endmodule
/* verilator lint_on DECLFILENAME */

`resetall
