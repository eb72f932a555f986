// SPDX-License-Identifier: Apache-2.0
// ats_nand_sched: NAND scheduler. Holds up to DEPTH tagged physical requests (read, program,
// erase on one die = channel x way) and dispatches them to one command stream per channel: per
// channel, the best eligible request, where eligible = the front of its die's queue (HEAD requests
// before the die's other requests, otherwise arrival order) while the die is idle, and best =
// HEAD first, then priority reads (prio_read, or every read while reads_first is high), then the
// oldest. A die is busy from dispatch until its completion is taken. Completions are forwarded
// on m_ncpl by tag, out of order. Bad requests (tag outstanding, channel or way out of range,
// unknown op) complete with BAD_REQ. Full contract and timing: rtl/nand/README_sched.md.
// Structure (timing-closed for 150 MHz on ECP5): per die a normal and a HEAD list linked through
// the entry table, the list heads in registers with their class bits and arrival rank; per die a
// registered candidate and pairwise "goes first" bits; per channel pick -> payload read pipeline.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_sched #(
    parameter int DEPTH    = 32,  // request table entries (queued, not yet dispatched), 2..64
    parameter int NUM_CHAN = 8,   // channels, 1..8 (s_nreq_chan is 3 bits)
    parameter int NUM_WAYS = 4,   // ways (dies) per channel, 1..4 (s_nreq_way is 2 bits)
    parameter int SLOT_W   = 8    // page-buffer slot number, passed through to the channel
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
    localparam int IDX_W     = $clog2(DEPTH);          // entry index and arrival rank
    localparam int CNT_W     = $clog2(DEPTH + 1);      // entries per channel, 0..DEPTH
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
    if (SLOT_W < 1) begin : g_check_slot
        $fatal(1, "ats_nand_sched: SLOT_W must be at least 1 (%m)");
    end

    // ---------------------------------------------------------------- state
    // entries: queued requests, and a picked one until the edge its payload is read
    logic [DEPTH-1:0]     valid_q;
    logic [IDX_W-1:0]     rank_q  [DEPTH];     // arrival rank in its channel's entries, 0 oldest
    logic [NUM_CHAN-1:0]  echan_q [DEPTH];     // channel, one-hot
    logic [PAY_W-1:0]     pay_mem  [DEPTH];    // LUT RAM, one read port per channel
    // LUT RAM: successor in the entry's list, with the successor's read and prio_read bits
    (* ram_style = "distributed" *)
    logic [IDX_W+1:0]     next_mem [DEPTH];
    logic [CNT_W-1:0]     nfree_q;             // entries neither valid nor reserved by rq
    // accepted good request, inserted into the table at the next edge
    logic                 rq_v_q, rq_prio_q;
    logic                 rq_bad_q;            // rq holds a bad request (becomes a BAD_REQ)
    logic [2:0]           rq_chan_q;
    logic [NUM_CHAN-1:0]  rq_choh_q;           // rq_chan_q one-hot
    logic [LIST_W-1:0]    rq_list_q;
    // entry the next insert takes (lowest free, computed one edge ahead)
    logic [DEPTH-1:0]     free_oh_q;
    logic [IDX_W-1:0]     free_idx_q;
    logic [3:0]           n_sel_q;             // entries freed at the previous edge
    logic [PAY_W-1:0]     rq_pay_q;
    // lists: per die a normal list and a HEAD list, linked through next_mem, arrival order
    logic [NUM_LISTS-1:0] lne_q;               // list not empty
    logic [IDX_W-1:0]     lhead_q [NUM_LISTS];
    logic [IDX_W-1:0]     ltail_q [NUM_LISTS];
    logic [IDX_W-1:0]     lrank_q [NUM_LISTS]; // rank of the list's head entry (kept like rank_q)
    logic [NUM_LISTS-1:0] lread_q, lprio_q;    // the head entry is a read / has prio_read
    logic [CNT_W-1:0]     rcnt_q  [NUM_CHAN];  // ranks in use per channel
    logic [IDX_W-1:0]     nrank_q;            // rank for rq: its channel's rcnt_q, and minus 1
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
    logic [IDX_W-1:0]     srank_q [NUM_CHAN];
    logic [NUM_CHAN-1:0]  rv_q, rh_q;          // refresh the head rank of a popped list
    logic [WAY_W-1:0]     rway_q  [NUM_CHAN];
    logic [IDX_W-1:0]     ridx_q  [NUM_CHAN];
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
    logic [IDX_W-1:0] free_idx_d, new_rank, nrank_d;
    logic             sv_rq;
    logic [DEPTH-1:0] epdec_q;
    logic [NUM_LISTS-1:0] lpdec_q;
    logic [CNT_W-1:0] rcnt_d [NUM_CHAN];
    logic [3:0]       n_sel;                   // entries leaving this edge (one per channel max)
    assign s_nreq_ready = !err_valid_q && !rq_bad_q && (nfree_q > CNT_W'(rq_v_q));
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
        // rank of the new entry: the channel's ranks in use, minus the pick leaving this edge
        // rank of the entry inserted now: its channel's ranks in use, minus the pick leaving
        // at this edge (rcnt_q of rq's channel is registered ahead in nrank_q / nrank_m1_q)
        new_rank = nrank_q;                    // minus 1 at the next edge if sv_rq (pdec)
        sv_rq    = |(sv_q & rq_choh_q);
        n_sel    = '0;
        nrank_d  = '0;
        for (int c = 0; c < NUM_CHAN; c++) begin
            rcnt_d[c] = rcnt_q[c] + CNT_W'(ins && (int'(rq_chan_q) == c)) - CNT_W'(sv_q[c]);
            n_sel     = n_sel + 4'(sv_q[c]);
            nrank_d   = nrank_d | ({IDX_W{int'(s_nreq_chan) == c}} & IDX_W'(rcnt_d[c]));
        end
    end

    // ---------------------------------------------------------------- per-list events
    logic [NUM_LISTS-1:0] l_new, l_ins, l_pop, l_last, l_ref;
    logic [IDX_W+1:0]     pop_next [NUM_CHAN];   // successor of the picked entry, its read, prio
    logic [NUM_CHAN-1:0]  sel_last;              // the picked entry was alone in its list
    logic [IDX_W-1:0]     ref_rank [NUM_CHAN];   // rank of the new head after a pop
    logic                 link_we;               // link the new entry behind its list's tail
    logic [IDX_W-1:0]     link_addr;
    always_comb begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            pop_next[c] = next_mem[sidx_q[c]];
            ref_rank[c] = rank_q[ridx_q[c]];
            sel_last[c] = 1'b0;
        end
        // list l: channel l / (2 * NUM_WAYS), way (l / 2) % NUM_WAYS, HEAD list if l is odd
        for (int l = 0; l < NUM_LISTS; l++) begin
            l_new[l]  = (int'(rq_list_q) == l);
            l_ins[l]  = ins && l_new[l];
            l_pop[l]  = sv_q[l / (2 * NUM_WAYS)] &&
                        (int'(sway_q[l / (2 * NUM_WAYS)]) == (l / 2) % NUM_WAYS) &&
                        (int'(sh_q[l / (2 * NUM_WAYS)]) == l % 2);
            l_last[l] = (lhead_q[l] == ltail_q[l]);
            l_ref[l]  = rv_q[l / (2 * NUM_WAYS)] &&
                        (int'(rway_q[l / (2 * NUM_WAYS)]) == (l / 2) % NUM_WAYS) &&
                        (int'(rh_q[l / (2 * NUM_WAYS)]) == l % 2);
            sel_last[l / (2 * NUM_WAYS)] = sel_last[l / (2 * NUM_WAYS)] | (l_pop[l] && l_last[l]);
        end
        link_we   = ins && lne_q[rq_list_q];
        link_addr = ltail_q[rq_list_q];
    end

    // rank update of each entry: a pick of its channel leaving at this edge closes the gap
    logic [DEPTH-1:0] e_dec;
    always_comb begin
        for (int k = 0; k < DEPTH; k++) begin
            logic             sv;
            logic [IDX_W-1:0] sr;
            sv = |(echan_q[k] & sv_q);
            sr = '0;
            for (int c = 0; c < NUM_CHAN; c++) sr = sr | ({IDX_W{echan_q[k][c]}} & srank_q[c]);
            e_dec[k] = sv && (rank_q[k] > sr);
        end
    end

    // ---------------------------------------------------------------- candidates
    logic [1:0]          fcls  [NUM_DIES];
    logic [IDX_W-1:0]    frank [NUM_DIES];
    logic [NUM_DIES-1:0] cand_d;
    logic [NUM_WAYS-1:0] beats_d [NUM_DIES];
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) begin
            fcls[d]   = lne_q[2*d+1] ? 2'd2 :
                        (lread_q[2*d] && (lprio_q[2*d] || reads_first)) ? 2'd1 : 2'd0;
            frank[d]  = lne_q[2*d+1] ? lrank_q[2*d+1] : lrank_q[2*d];
            cand_d[d] = (lne_q[2*d+1] || lne_q[2*d]) && !busy_q[d];
        end
        // fronts of two dies of a channel are distinct entries with distinct ranks: one of the
        // two always beats the other, so each pair is compared once
        for (int d = 0; d < NUM_DIES; d++) beats_d[d] = '0;
        for (int d = 0; d < NUM_DIES; d++) begin
            for (int v = d % NUM_WAYS + 1; v < NUM_WAYS; v++) begin
                beats_d[d][v] = (fcls[d - d % NUM_WAYS + v] > fcls[d]) ||
                                ((fcls[d - d % NUM_WAYS + v] == fcls[d]) &&
                                 (frank[d - d % NUM_WAYS + v] < frank[d]));
                beats_d[d - d % NUM_WAYS + v][d % NUM_WAYS] = !beats_d[d][v];
            end
        end
    end

    // ---------------------------------------------------------------- pick
    logic [NUM_CHAN-1:0] pick;
    logic [WAY_W-1:0]    pway [NUM_CHAN];
    logic [NUM_CHAN-1:0] phead;
    logic [IDX_W-1:0]    pidx  [NUM_CHAN];
    logic [IDX_W-1:0]    prank [NUM_CHAN];
    always_comb begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            logic [NUM_WAYS-1:0] cv, win;
            for (int w = 0; w < NUM_WAYS; w++) cv[w] = cand_q[c * NUM_WAYS + w];
            pway[c]  = '0;
            phead[c] = 1'b0;
            pidx[c]  = '0;
            prank[c] = '0;
            for (int w = 0; w < NUM_WAYS; w++) begin
                int d;
                d      = c * NUM_WAYS + w;
                win[w] = cv[w] && !(|(cv & beats_q[d]));
                pway[c]  = pway[c]  | ({WAY_W{win[w]}} & WAY_W'(w));
                phead[c] = phead[c] | (win[w] && chead_q[d]);
                // the winner's list head (it is the front the candidate was built from)
                pidx[c]  = pidx[c]  | ({IDX_W{win[w]}} &
                                       (chead_q[d] ? lhead_q[2*d+1] : lhead_q[2*d]));
                prank[c] = prank[c] | ({IDX_W{win[w]}} &
                                       (chead_q[d] ? lrank_q[2*d+1] : lrank_q[2*d]));
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
        if (link_we) next_mem[link_addr] <= {free_idx_q, new_read, rq_prio_q};
    end

    always_ff @(posedge clk) begin
        // entries: insert; ranks of younger entries of a channel close up behind its pick
        if (acc) begin
            nrank_q    <= nrank_d;
            rq_pay_q  <= {s_nreq_tag, s_nreq_op, s_nreq_way, s_nreq_block, s_nreq_page,
                          s_nreq_slot};
            rq_chan_q <= s_nreq_chan;
            rq_choh_q <= NUM_CHAN'(1) << s_nreq_chan;
            rq_list_q <= LIST_W'((int'(s_nreq_chan) * NUM_WAYS + int'(s_nreq_way)) * 2 +
                                 int'(s_nreq_head));
            rq_prio_q <= s_nreq_prio_read;
        end
        rq_v_q     <= rst ? 1'b0 : (acc && !bad);
        rq_bad_q   <= rst ? 1'b0 : (acc && bad);
        n_sel_q    <= rst ? '0 : n_sel;
        nfree_q    <= rst ? CNT_W'(DEPTH) : CNT_W'(32'(nfree_q) - 32'(ins) + 32'(n_sel_q));
        valid_q    <= rst ? '0 : ((valid_q & ~freed) | (ins ? free_oh_q : '0));
        free_oh_q  <= rst ? DEPTH'(1) : free_oh_d;
        free_idx_q <= rst ? '0 : free_idx_d;
        for (int k = 0; k < DEPTH; k++) begin
            epdec_q[k] <= ins && free_oh_q[k] && sv_rq;
            if (ins && free_oh_q[k]) begin
                rank_q[k]  <= new_rank;
                echan_q[k] <= NUM_CHAN'(1) << rq_chan_q;
                etag_q[k]  <= rq_pay_q[POS_TAG +: TAG_W];
            end else if (e_dec[k] || epdec_q[k]) begin
                rank_q[k]  <= rank_q[k] - IDX_W'(1);
            end
        end
        for (int c = 0; c < NUM_CHAN; c++) begin
            rcnt_q[c] <= rcnt_d[c];
        end
        if (rst) begin
            for (int c = 0; c < NUM_CHAN; c++) rcnt_q[c] <= '0;
        end

        // lists
        for (int l = 0; l < NUM_LISTS; l++) begin
            lpdec_q[l] <= l_ins[l] && (!lne_q[l] || (l_pop[l] && l_last[l])) && sv_rq;
            if (l_ins[l] && (!lne_q[l] || (l_pop[l] && l_last[l]))) begin
                lne_q[l]   <= 1'b1;               // the new entry becomes the head
                lhead_q[l] <= free_idx_q;
                lrank_q[l] <= new_rank;
                lread_q[l] <= new_read;
                lprio_q[l] <= rq_prio_q;
            end else if (l_pop[l] && l_last[l]) begin
                lne_q[l]   <= 1'b0;
            end else begin
                if (l_pop[l]) begin
                    {lhead_q[l], lread_q[l], lprio_q[l]} <= pop_next[l / (2 * NUM_WAYS)];
                end
                if (l_ref[l]) begin               // one edge after a pop: the new head's rank
                    lrank_q[l] <= ref_rank[l / (2 * NUM_WAYS)];
                end else if (lpdec_q[l] || (sv_q[l / (2 * NUM_WAYS)] &&
                             (lrank_q[l] > srank_q[l / (2 * NUM_WAYS)]))) begin
                    lrank_q[l] <= lrank_q[l] - IDX_W'(1);
                end
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
                srank_q[c] <= prank[c];
            end
            rv_q[c]   <= sv_q[c] && !sel_last[c];
            rh_q[c]   <= sh_q[c];
            rway_q[c] <= sway_q[c];
            ridx_q[c] <= pop_next[c][2 +: IDX_W];
            if (sv_q[c]) begin
                cv_q[c]   <= 1'b1;
                cpay_q[c] <= spay[c];
            end else if (m_ccmd_ready[c]) begin
                cv_q[c]   <= 1'b0;
            end
        end
        if (rst) begin
            cv_q <= '0;
            rv_q <= '0;
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
