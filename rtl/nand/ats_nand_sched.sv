// SPDX-License-Identifier: Apache-2.0
// ats_nand_sched: NAND scheduler. Holds up to DEPTH tagged physical requests (read, program,
// erase on one die = channel x way) and dispatches them to one command stream per channel: per
// channel, the best eligible request, where eligible = the front of its die's queue (HEAD requests
// before the die's other requests, otherwise arrival order) while the die is idle, and best =
// HEAD first, then priority reads (prio_read, or every read while reads_first is high), then the
// oldest. A die is busy from dispatch until its completion is taken. Completions are forwarded
// on m_ncpl by tag, out of order. Bad requests (tag outstanding, channel or way out of range,
// unknown op) complete with BAD_REQ. Full contract and timing: rtl/nand/README_sched.md.
// Structure (pipelined for Fmax, figures in the README): per die a normal and a HEAD list linked
// through the entry table, the list heads in registers with their class bits and arrival stamp;
// per die a registered candidate and pairwise "goes first" bits; per channel pick -> payload read.
// Arrival order is a free-running STAMP_W-bit insert counter stamped into each entry, compared
// modulo 2^STAMP_W (exact while compared requests arrived < 2^(STAMP_W-1) requests apart).
`resetall
`timescale 1ns / 1ps
`default_nettype none

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
    localparam int NUM_DIES  = NUM_CHAN * NUM_WAYS;
    localparam int NUM_LISTS = 2 * NUM_DIES;           // per die: list 2d normal, 2d+1 HEAD
    localparam int IDX_W     = $clog2(DEPTH);          // entry index
    localparam int CNT_W     = $clog2(DEPTH + 1);      // free entries, 0..DEPTH
    localparam int LIST_W    = $clog2(NUM_LISTS);
    // payload kept per entry and handed to the channel: {tag, op, way, block, page, slot}
    localparam int PAY_W     = TAG_W + 2 + WAY_W + 12 + 8 + SLOT_W;
    localparam int POS_WAY   = SLOT_W + 8 + 12;        // payload bit positions
    localparam int POS_TAG   = PAY_W - TAG_W;
    localparam logic [2:0] ST_BAD_REQ = 3'd4;

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

    // ---------------------------------------------------------------- state
    // entries: queued requests, and a picked one until the edge its payload is read
    logic [DEPTH-1:0]     valid_q;
    logic [PAY_W-1:0]     pay_mem  [DEPTH];    // LUT RAM, one read port per channel
    // LUT RAM: successor in the entry's list, with the successor's read, prio_read bits and stamp
    (* ram_style = "distributed" *)
    logic [IDX_W+2+STAMP_W-1:0] next_mem [DEPTH];
    logic [STAMP_W-1:0]   stamp_q;             // arrival stamp of the next insert
    logic [CNT_W-1:0]     nfree_q;             // entries neither valid nor reserved by rq
    logic                 nf_ge1_q, nf_ge2_q;  // nfree_q >= 1, >= 2 (registered with it)
    // accepted good request, inserted into the table at the next edge
    logic                 rq_v_q, rq_prio_q;
    logic                 rq_bad_q;            // rq holds a bad request (becomes a BAD_REQ)
    logic [LIST_W-1:0]    rq_list_q;
    logic                 rq_link_q;           // rq's list is not empty when rq is inserted
    logic [IDX_W-1:0]     rq_tail_q;           // and this is its tail then (link address)
    // entry the next insert takes (lowest free, computed one edge ahead)
    logic [DEPTH-1:0]     free_oh_q;
    logic [IDX_W-1:0]     free_idx_q;
    logic [3:0]           n_sel_q;             // entries freed at the previous edge
    logic [PAY_W-1:0]     rq_pay_q;
    // lists: per die a normal list and a HEAD list, linked through next_mem, arrival order
    logic [NUM_LISTS-1:0] lne_q;               // list not empty
    logic [IDX_W-1:0]     lhead_q [NUM_LISTS];
    logic [IDX_W-1:0]     ltail_q [NUM_LISTS];
    logic [STAMP_W-1:0]   lstamp_q [NUM_LISTS]; // arrival stamp of the list's head entry
    logic [NUM_LISTS-1:0] lread_q, lprio_q;    // the head entry is a read / has prio_read
    // dies
    logic [NUM_DIES-1:0]  busy_q;              // picked, completion not yet taken from c1
    logic [NUM_DIES-1:0]  tv_q;                // infl_tag_q holds the in-flight tag
    logic [TAG_W-1:0]     infl_tag_q [NUM_DIES];
    // candidates (registered from the state above): per die its front, if the die is idle
    logic [NUM_DIES-1:0]  cand_q;              // die idle and has a front
    logic [NUM_DIES-1:0]  chead_q;             // the front is the HEAD list's head
    logic [NUM_WAYS-1:0]  beats_q [NUM_DIES];  // [d][v]: front of way v (same channel) goes first
    // per channel: pick stage (sel) and command output register
    logic [NUM_CHAN-1:0]  sv_q, sh_q;
    logic [WAY_W-1:0]     sway_q  [NUM_CHAN];
    logic [IDX_W-1:0]     sidx_q  [NUM_CHAN];
    logic [NUM_CHAN-1:0]  cv_q;
    logic [PAY_W-1:0]     cpay_q  [NUM_CHAN];
    logic [TAG_W-1:0]     etag_q  [DEPTH];     // tag of each entry (duplicate check)
    // error completion waiting for m_ncpl, and the m_ncpl output register
    logic                 err_valid_q;
    logic [TAG_W-1:0]     err_tag_q;
    logic                 out_valid_q, out_real_q;
    logic [TAG_W-1:0]     out_tag_q;
    logic [2:0]           out_status_q;
    logic [7:0]           out_corr_q;
    logic                 spur_q;

    // ---------------------------------------------------------------- accept
    // A good request is held one cycle in rq_* and inserted at the next edge (ins); the table
    // keeps room for it: ready needs a free entry besides the one rq will take.
    logic             acc, bad, dup, ins, new_read;
    logic [DEPTH-1:0] taken, free_oh_d;        // entries valid or being taken; next free one
    logic [IDX_W-1:0] free_idx_d;
    logic [3:0]       n_sel;                   // entries leaving this edge (one per channel max)
    logic [CNT_W-1:0] nfree_d;
    assign nfree_d = CNT_W'(32'(nfree_q) - 32'(ins) + 32'(n_sel_q));
    // = !err_valid_q && !rq_bad_q && (nfree_q > rq_v_q), from registered flags only
    assign s_nreq_ready = !err_valid_q && !rq_bad_q && (nf_ge2_q || (nf_ge1_q && !rq_v_q));
    assign acc          = s_nreq_valid && s_nreq_ready;
    assign bad          = dup || (s_nreq_op == 2'd3) ||
                          (int'(s_nreq_chan) >= NUM_CHAN) || (int'(s_nreq_way) >= NUM_WAYS);
    assign ins          = rq_v_q;
    assign new_read     = (rq_pay_q[POS_WAY + WAY_W +: 2] == 2'd0);
    // next insert's entry: lowest entry neither valid nor taken at this edge (an entry freed at
    // this edge is found from the next edge on; n_sel_q counts it back one edge later as well)
    assign taken        = valid_q | (ins ? free_oh_q : '0);
    assign free_oh_d    = ~taken & (taken + DEPTH'(1));

    always_comb begin
        free_idx_d = '0;                       // one-hot to index as a flat OR
        for (int i = 0; i < DEPTH; i++) begin
            free_idx_d = free_idx_d | ({IDX_W{free_oh_d[i]}} & IDX_W'(i));
        end
        n_sel = '0;
        for (int c = 0; c < NUM_CHAN; c++) n_sel = n_sel + 4'(sv_q[c]);
    end

    // ---------------------------------------------------------------- per-list events
    logic [NUM_LISTS-1:0] l_new, l_ins, l_pop, l_last;
    logic [IDX_W+2+STAMP_W-1:0] pop_next [NUM_CHAN]; // picked entry's successor, read, prio, stamp
    logic                 link_we;               // link the new entry behind its list's tail
    logic [IDX_W-1:0]     link_addr;
    logic [LIST_W-1:0]    acc_list;              // list of the request on s_nreq
    logic                 acc_link;              // its list's lne_q after this edge
    logic [IDX_W-1:0]     acc_tail;              // its list's ltail_q after this edge
    always_comb begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            pop_next[c] = next_mem[sidx_q[c]];
        end
        // list l: channel l / (2 * NUM_WAYS), way (l / 2) % NUM_WAYS, HEAD list if l is odd
        for (int l = 0; l < NUM_LISTS; l++) begin
            l_new[l]  = (int'(rq_list_q) == l);
            l_ins[l]  = ins && l_new[l];
            l_pop[l]  = sv_q[l / (2 * NUM_WAYS)] &&
                        (int'(sway_q[l / (2 * NUM_WAYS)]) == (l / 2) % NUM_WAYS) &&
                        (int'(sh_q[l / (2 * NUM_WAYS)]) == l % 2);
            l_last[l] = (lhead_q[l] == ltail_q[l]);
        end
        // the new entry is linked behind its list's tail at the insert edge; lne_q and ltail_q
        // of its list as they are then (i.e. their next values at the acceptance edge) are
        // registered with the request, so no 64:1 mux sits on the LUT-RAM write port
        link_we   = ins && rq_link_q;
        link_addr = rq_tail_q;
        acc_list  = LIST_W'((int'(s_nreq_chan) * NUM_WAYS + int'(s_nreq_way)) * 2 +
                            int'(s_nreq_head));
        acc_link  = 1'b0;
        acc_tail  = '0;
        for (int l = 0; l < NUM_LISTS; l++) begin
            if (int'(acc_list) == l) begin
                acc_link = l_ins[l] || (lne_q[l] && !(l_pop[l] && l_last[l]));
                acc_tail = l_ins[l] ? free_idx_q : ltail_q[l];
            end
        end
    end

    // ---------------------------------------------------------------- candidates
    // a arrived before b: (a - b) modulo 2^STAMP_W is negative (exact for < 2^(STAMP_W-1) apart)
    function automatic logic stamp_older(input logic [STAMP_W-1:0] a,
                                         input logic [STAMP_W-1:0] b);
        logic [STAMP_W-1:0] diff;
        diff        = a - b;
        stamp_older = diff[STAMP_W-1];
    endfunction

    logic [1:0]          fcls  [NUM_DIES];
    logic [STAMP_W-1:0]  fstamp [NUM_DIES];
    logic [NUM_DIES-1:0] cand_d;
    logic [NUM_WAYS-1:0] beats_d [NUM_DIES];
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) begin
            fcls[d]   = lne_q[2*d+1] ? 2'd2 :
                        (lread_q[2*d] && (lprio_q[2*d] || reads_first)) ? 2'd1 : 2'd0;
            fstamp[d] = lne_q[2*d+1] ? lstamp_q[2*d+1] : lstamp_q[2*d];
            cand_d[d] = (lne_q[2*d+1] || lne_q[2*d]) && !busy_q[d];
        end
        // fronts of two dies of a channel are distinct entries with distinct stamps: one of the
        // two always beats the other, so each pair is compared once; older = stamp difference
        // negative modulo 2^STAMP_W
        for (int d = 0; d < NUM_DIES; d++) beats_d[d] = '0;
        for (int d = 0; d < NUM_DIES; d++) begin
            for (int v = d % NUM_WAYS + 1; v < NUM_WAYS; v++) begin
                beats_d[d][v] = (fcls[d - d % NUM_WAYS + v] > fcls[d]) ||
                                ((fcls[d - d % NUM_WAYS + v] == fcls[d]) &&
                                 stamp_older(fstamp[d - d % NUM_WAYS + v], fstamp[d]));
                beats_d[d - d % NUM_WAYS + v][d % NUM_WAYS] = !beats_d[d][v];
            end
        end
    end

    // ---------------------------------------------------------------- pick
    logic [NUM_CHAN-1:0] pick;
    logic [WAY_W-1:0]    pway [NUM_CHAN];
    logic [NUM_CHAN-1:0] phead;
    logic [IDX_W-1:0]    pidx  [NUM_CHAN];
    always_comb begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            logic [NUM_WAYS-1:0] cv, win;
            for (int w = 0; w < NUM_WAYS; w++) cv[w] = cand_q[c * NUM_WAYS + w];
            pway[c]  = '0;
            phead[c] = 1'b0;
            pidx[c]  = '0;
            for (int w = 0; w < NUM_WAYS; w++) begin
                int d;
                d      = c * NUM_WAYS + w;
                win[w] = cv[w] && !(|(cv & beats_q[d]));
                pway[c]  = pway[c]  | ({WAY_W{win[w]}} & WAY_W'(w));
                phead[c] = phead[c] | (win[w] && chead_q[d]);
                // the winner's list head (it is the front the candidate was built from)
                pidx[c]  = pidx[c]  | ({IDX_W{win[w]}} &
                                       (chead_q[d] ? lhead_q[2*d+1] : lhead_q[2*d]));
            end
            pick[c] = !sv_q[c] && (!cv_q[c] || m_ccmd_ready[c]) && (|cv);
        end
    end

    // ---------------------------------------------------------------- sel stage: payload read
    logic [PAY_W-1:0]  spay [NUM_CHAN];
    logic [DEPTH-1:0]  freed;                    // entries leaving the table this edge
    always_comb begin
        freed = '0;
        for (int c = 0; c < NUM_CHAN; c++) begin
            spay[c] = pay_mem[sidx_q[c]];
            freed   = freed | (sv_q[c] ? (DEPTH'(1) << sidx_q[c]) : '0);
        end
    end

    // ---------------------------------------------------------------- completions
    // Outstanding tags (accepted, completion not yet accepted on m_ncpl) are exactly: the request
    // in rq, the table entries, the dies' in-flight tags (set at the edge the entry is freed),
    // and a channel completion in the m_ncpl register (until the edge it is taken). The
    // duplicate check compares the new tag with all of them.
    always_comb begin
        dup = (rq_v_q && (rq_pay_q[POS_TAG +: TAG_W] == s_nreq_tag)) ||
              (out_valid_q && out_real_q && (out_tag_q == s_nreq_tag));
        for (int k = 0; k < DEPTH; k++) dup = dup | (valid_q[k] && (etag_q[k] == s_nreq_tag));
        for (int d = 0; d < NUM_DIES; d++) dup = dup | (tv_q[d] && (infl_tag_q[d] == s_nreq_tag));
    end

    // ---------------------------------------------------------------- completions
    // A channel completion is taken into c1 with the dies it matches (hit_q, at most one); at
    // the first edge after where the m_ncpl register is free and no BAD_REQ waits (c1_take) it
    // frees its die and goes to m_ncpl, or is dropped (err_spurious) if it matched no die.
    logic                c1_v_q;
    logic [TAG_W-1:0]    c1_tag_q;
    logic [2:0]          c1_status_q;
    logic [7:0]          c1_corr_q;
    logic [NUM_DIES-1:0] hit_q, hit_d;
    logic                out_free, ccpl_fire, c1_take, any_hit;
    assign out_free     = !out_valid_q || m_ncpl_ready;
    assign c1_take      = c1_v_q && out_free && !err_valid_q;
    assign s_ccpl_ready = !c1_v_q || c1_take;
    assign ccpl_fire    = s_ccpl_valid && s_ccpl_ready;
    assign any_hit      = |hit_q;
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) begin   // (a die freed by c1 at this edge: no match)
            hit_d[d] = tv_q[d] && !(c1_take && hit_q[d]) && (infl_tag_q[d] == s_ccpl_tag);
        end
    end

    // ---------------------------------------------------------------- registers
    always_ff @(posedge clk) begin
        if (ins) pay_mem[free_idx_q] <= rq_pay_q;
        // link behind the list's tail (not for an empty list: its tail register is stale)
        if (link_we) next_mem[link_addr] <= {free_idx_q, new_read, rq_prio_q, stamp_q};
    end

    always_ff @(posedge clk) begin
        // entries: insert (the stamp counts inserts: arrival order)
        // rq's fields are loaded every cycle: they are only used at the edge after an
        // acceptance (insert, or BAD_REQ), when they hold the accepted request (no enable fan-out)
        begin
            rq_pay_q  <= {s_nreq_tag, s_nreq_op, s_nreq_way, s_nreq_block, s_nreq_page,
                          s_nreq_slot};
            rq_list_q <= acc_list;
            rq_link_q <= acc_link && !rst;
            rq_tail_q <= acc_tail;
            rq_prio_q <= s_nreq_prio_read;
        end
        rq_v_q     <= rst ? 1'b0 : (acc && !bad);
        rq_bad_q   <= rst ? 1'b0 : (acc && bad);
        n_sel_q    <= rst ? '0 : n_sel;
        nfree_q    <= rst ? CNT_W'(DEPTH) : nfree_d;
        nf_ge1_q   <= rst ? 1'b1 : (nfree_d >= CNT_W'(1));
        nf_ge2_q   <= rst ? 1'b1 : (nfree_d >= CNT_W'(2));
        valid_q    <= rst ? '0 : ((valid_q & ~freed) | (ins ? free_oh_q : '0));
        free_oh_q  <= rst ? DEPTH'(1) : free_oh_d;
        free_idx_q <= rst ? '0 : free_idx_d;
        stamp_q    <= rst ? '0 : stamp_q + STAMP_W'(ins);
        for (int k = 0; k < DEPTH; k++) begin
            if (ins && free_oh_q[k]) etag_q[k] <= rq_pay_q[POS_TAG +: TAG_W];
        end

        // lists
        for (int l = 0; l < NUM_LISTS; l++) begin
            if (l_ins[l] && (!lne_q[l] || (l_pop[l] && l_last[l]))) begin
                lne_q[l]   <= 1'b1;               // the new entry becomes the head
                lhead_q[l] <= free_idx_q;
                lstamp_q[l] <= stamp_q;
                lread_q[l] <= new_read;
                lprio_q[l] <= rq_prio_q;
            end else if (l_pop[l] && l_last[l]) begin
                lne_q[l]   <= 1'b0;
            end else if (l_pop[l]) begin
                {lhead_q[l], lread_q[l], lprio_q[l], lstamp_q[l]} <= pop_next[l / (2 * NUM_WAYS)];
            end
            if (l_ins[l]) ltail_q[l] <= free_idx_q;
        end
        if (rst) lne_q <= '0;

        // candidates
        cand_q <= rst ? '0 : cand_d;
        for (int d = 0; d < NUM_DIES; d++) begin
            chead_q[d] <= lne_q[2*d+1];
            beats_q[d] <= beats_d[d];
        end

        // pick stage, then payload into the output register and pop of the picked list
        sv_q <= rst ? '0 : pick;
        for (int c = 0; c < NUM_CHAN; c++) begin
            if (pick[c]) begin
                sh_q[c]    <= phead[c];
                sway_q[c]  <= pway[c];
                sidx_q[c]  <= pidx[c];
            end
            if (sv_q[c]) begin
                cv_q[c]   <= 1'b1;
                cpay_q[c] <= spay[c];
            end else if (m_ccmd_ready[c]) begin
                cv_q[c]   <= 1'b0;
            end
        end
        if (rst) begin
            cv_q <= '0;
        end

        // dies: a pick makes the die busy; the sel stage records the tag; a completion frees it
        // (die d belongs to channel d / NUM_WAYS: constant indices, no priority chains)
        for (int d = 0; d < NUM_DIES; d++) begin
            if (pick[d / NUM_WAYS] && int'(pway[d / NUM_WAYS]) == d % NUM_WAYS) busy_q[d] <= 1'b1;
            if (sv_q[d / NUM_WAYS] && int'(sway_q[d / NUM_WAYS]) == d % NUM_WAYS) begin
                tv_q[d]       <= 1'b1;
                infl_tag_q[d] <= spay[d / NUM_WAYS][POS_TAG +: TAG_W];
            end
            if (c1_take && hit_q[d]) begin     // never the same die as a pick or sel (README)
                busy_q[d] <= 1'b0;
                tv_q[d]   <= 1'b0;
            end
        end
        if (rst) begin
            busy_q <= '0;
            tv_q   <= '0;
        end


        // error completion, then the m_ncpl register (an error goes out before channel completions)
        if (rq_bad_q) begin                     // (err_valid_q is low: rq_bad_q blocked acceptance)
            err_valid_q <= 1'b1;
            err_tag_q   <= rq_pay_q[POS_TAG +: TAG_W];
        end else if (out_free) begin
            err_valid_q <= 1'b0;
        end
        if (out_free) begin
            if (err_valid_q) begin
                out_valid_q  <= 1'b1;
                out_real_q   <= 1'b0;
                out_tag_q    <= err_tag_q;
                out_status_q <= ST_BAD_REQ;
                out_corr_q   <= '0;
            end else if (c1_take && any_hit) begin
                out_valid_q  <= 1'b1;
                out_real_q   <= 1'b1;
                out_tag_q    <= c1_tag_q;
                out_status_q <= c1_status_q;
                out_corr_q   <= c1_corr_q;
            end else begin
                out_valid_q  <= 1'b0;
            end
        end
        spur_q <= c1_take && !any_hit;
        if (ccpl_fire) begin
            c1_tag_q    <= s_ccpl_tag;
            c1_status_q <= s_ccpl_status;
            c1_corr_q   <= s_ccpl_corrected;
            hit_q       <= hit_d;
        end
        c1_v_q <= rst ? 1'b0 : (ccpl_fire || (c1_v_q && !c1_take));
        if (rst) begin
            err_valid_q <= 1'b0;
            out_valid_q <= 1'b0;
            spur_q      <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- outputs
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_ccmd
        assign m_ccmd_valid[c]              = cv_q[c];
        assign m_ccmd_tag[c * 8 +: 8]       = cpay_q[c][POS_TAG +: 8];
        assign m_ccmd_op[c * 2 +: 2]        = cpay_q[c][POS_WAY + WAY_W +: 2];
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
endmodule

`resetall
