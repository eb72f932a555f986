// SPDX-License-Identifier: Apache-2.0
// ats_nand_sched: NAND scheduler. Holds up to DEPTH tagged physical requests (read, program,
// erase on one die = channel x way) and dispatches them to one command stream per channel: per
// channel, the best eligible request, where eligible = the front of its die's queue (HEAD requests
// before the die's other requests, otherwise arrival order) while the die is idle, and best =
// HEAD first, then priority reads (prio_read, or every read while reads_first is high), then the
// oldest. A die is busy from dispatch until its completion is accepted on s_ccpl. Completions
// are forwarded on m_ncpl by tag, out of order. Bad requests (tag outstanding, channel or way out
// of range, unknown op) complete at once with BAD_REQ. Full contract: rtl/nand/README_sched.md.
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
    localparam int TAG_W    = 8;
    localparam int WAY_W    = 2;
    localparam int NUM_DIES = NUM_CHAN * NUM_WAYS;
    localparam int DIE_W    = (NUM_DIES > 1) ? $clog2(NUM_DIES) : 1;
    localparam int IDX_W    = $clog2(DEPTH);
    // payload kept per entry and handed to the channel: {tag, op, way, block, page, slot}
    localparam int PAY_W    = TAG_W + 2 + WAY_W + 12 + 8 + SLOT_W;
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

    // ---------------------------------------------------------------- request table state
    logic [DEPTH-1:0]    valid_q;            // entry holds a queued (not yet dispatched) request
    logic [DEPTH-1:0]    elig_q;             // entry was its die's front on an idle die, last cycle
    logic [DEPTH-1:0]    head_q, read_q, prio_q;
    logic [DEPTH-1:0]    sc_q  [DEPTH];      // sc_q[i][j]: entry j is on the same channel as i
    logic [DEPTH-1:0]    oc_q  [DEPTH];      // oc_q[i][j]: entry j, same channel, arrived before i
    logic [DEPTH-1:0]    blk_q [DEPTH];      // blk_q[i][j]: entry j (same die) must go before i
    logic [DIE_W-1:0]    die_q [DEPTH];
    logic [NUM_CHAN-1:0] onchan_q [DEPTH];   // one-hot channel of the entry
    logic [WAY_W-1:0]    way_q [DEPTH];
    logic [2:0]          chan_q [DEPTH];
    // payload: written at insert, read by every channel (distributed RAM, one copy per reader)
    logic [PAY_W-1:0]    pay_mem [DEPTH];
    // dies
    logic [NUM_DIES-1:0] busy_q;             // a command of this die is in flight
    logic [TAG_W-1:0]    infl_tag_q [NUM_DIES];
    // tags outstanding (accepted, completion not yet accepted on m_ncpl)
    logic [255:0]        otag_q;
    // dispatch of the previous cycle, per channel (masks the stale elig_q of that die)
    logic [NUM_CHAN-1:0] dv_q;
    logic [WAY_W-1:0]    dway_q [NUM_CHAN];
    // channel command output registers
    logic [NUM_CHAN-1:0] cv_q;
    logic [PAY_W-1:0]    cpay_q [NUM_CHAN];
    // error completion waiting for m_ncpl, and the m_ncpl output register
    logic                err_valid_q;
    logic [TAG_W-1:0]    err_tag_q;
    logic                out_valid_q, out_real_q;
    logic [TAG_W-1:0]    out_tag_q;
    logic [2:0]          out_status_q;
    logic [7:0]          out_corr_q;
    logic                spur_q;

    // ---------------------------------------------------------------- accept
    logic             full, acc, bad, ins;
    logic [DEPTH-1:0] free_oh;               // lowest free entry, one-hot
    logic [IDX_W-1:0] free_idx;
    logic [DIE_W-1:0] new_die;
    assign full         = &valid_q;
    assign s_nreq_ready = !full && !err_valid_q;
    assign acc          = s_nreq_valid && s_nreq_ready;
    assign bad          = otag_q[s_nreq_tag] || (s_nreq_op == 2'd3) ||
                          (int'(s_nreq_chan) >= NUM_CHAN) || (int'(s_nreq_way) >= NUM_WAYS);
    assign ins          = acc && !bad;
    assign new_die      = DIE_W'(int'(s_nreq_chan) * NUM_WAYS + int'(s_nreq_way));
    assign free_oh      = ~valid_q & (valid_q + DEPTH'(1));

    always_comb begin
        // one-hot to index as a flat OR (no priority chain)
        free_idx = '0;
        for (int i = 0; i < DEPTH; i++) begin
            free_idx = free_idx | ({IDX_W{free_oh[i]}} & IDX_W'(i));
        end
    end

    // ---------------------------------------------------------------- eligibility (registered)
    logic [DEPTH-1:0] elig_d;
    always_comb begin
        for (int i = 0; i < DEPTH; i++) begin
            elig_d[i] = valid_q[i] && !(|(blk_q[i] & valid_q)) && !busy_q[die_q[i]];
        end
    end

    // ---------------------------------------------------------------- selection
    // class key: HEAD 2, priority read 1, other 0. beats[i][j]: entry j, on the same channel,
    // goes before entry i. Channels are disjoint, so one table-wide pass serves all channels.
    logic [1:0]       key [DEPTH];
    logic [DEPTH-1:0] beats [DEPTH];
    logic [DEPTH-1:0] cand, sel;
    always_comb begin
        for (int i = 0; i < DEPTH; i++) begin
            key[i] = head_q[i] ? 2'd2 : (read_q[i] && (prio_q[i] || reads_first)) ? 2'd1 : 2'd0;
        end
        for (int i = 0; i < DEPTH; i++) begin
            for (int j = 0; j < DEPTH; j++) begin
                beats[i][j] = (sc_q[i][j] && (key[j] > key[i])) || ((key[j] == key[i]) && oc_q[i][j]);
            end
        end
        for (int i = 0; i < DEPTH; i++) begin
            logic dmask;                     // the die got a command at the previous edge
            dmask = 1'b0;
            for (int c = 0; c < NUM_CHAN; c++) begin
                dmask = dmask | (onchan_q[i][c] && dv_q[c] && (way_q[i] == dway_q[c]));
            end
            cand[i] = elig_q[i] && valid_q[i] && !dmask;
        end
        for (int i = 0; i < DEPTH; i++) begin
            sel[i] = cand[i] && !(|(cand & beats[i]));
        end
    end

    logic [NUM_CHAN-1:0] pick;
    logic [IDX_W-1:0]    idx_sel [NUM_CHAN];
    logic [PAY_W-1:0]    pay_sel [NUM_CHAN];
    logic [WAY_W-1:0]    way_sel [NUM_CHAN];
    logic [TAG_W-1:0]    tag_sel [NUM_CHAN];
    logic [DEPTH-1:0]    disp;               // entries dispatched this cycle
    always_comb begin
        for (int c = 0; c < NUM_CHAN; c++) begin
            logic any;
            any = 1'b0;
            idx_sel[c] = '0;
            for (int i = 0; i < DEPTH; i++) begin
                any        = any | (cand[i] && onchan_q[i][c]);
                idx_sel[c] = idx_sel[c] | ({IDX_W{sel[i] && onchan_q[i][c]}} & IDX_W'(i));
            end
            pick[c]    = (!cv_q[c] || m_ccmd_ready[c]) && any;
            pay_sel[c] = pay_mem[idx_sel[c]];
            way_sel[c] = pay_sel[c][SLOT_W + 8 + 12 +: WAY_W];
            tag_sel[c] = pay_sel[c][PAY_W - TAG_W +: TAG_W];
        end
        for (int i = 0; i < DEPTH; i++) begin
            disp[i] = sel[i] && (|(onchan_q[i] & pick));
        end
    end

    // ---------------------------------------------------------------- completions
    logic [NUM_DIES-1:0] hit;
    logic                out_free, ccpl_fire, any_hit;
    always_comb begin
        for (int d = 0; d < NUM_DIES; d++) begin
            hit[d] = busy_q[d] && (infl_tag_q[d] == s_ccpl_tag);
        end
    end
    assign any_hit      = |hit;
    assign out_free     = !out_valid_q || m_ncpl_ready;
    assign s_ccpl_ready = out_free && !err_valid_q;
    assign ccpl_fire    = s_ccpl_valid && s_ccpl_ready;

    // ---------------------------------------------------------------- registers
    always_ff @(posedge clk) begin
        if (ins) pay_mem[free_idx] <= {s_nreq_tag, s_nreq_op, s_nreq_way, s_nreq_block,
                                       s_nreq_page, s_nreq_slot};
    end

    always_ff @(posedge clk) begin
        // table: dispatch removes, accept inserts
        valid_q <= rst ? '0 : ((valid_q & ~disp) | (ins ? free_oh : '0));
        elig_q  <= rst ? '0 : elig_d;

        for (int k = 0; k < DEPTH; k++) begin
            if (ins && free_oh[k]) begin
                head_q[k]   <= s_nreq_head;
                read_q[k]   <= (s_nreq_op == 2'd0);
                prio_q[k]   <= s_nreq_prio_read;
                die_q[k]    <= new_die;
                chan_q[k]   <= s_nreq_chan;
                onchan_q[k] <= NUM_CHAN'(1) << s_nreq_chan;
                way_q[k]    <= s_nreq_way;
            end
            for (int j = 0; j < DEPTH; j++) begin
                logic same_die, same_chan;
                same_die  = valid_q[j] && (die_q[j] == new_die);
                same_chan = valid_q[j] && (chan_q[j] == s_nreq_chan);
                if (ins && free_oh[k]) begin          // row k: the new entry
                    sc_q[k][j]  <= same_chan;
                    oc_q[k][j]  <= same_chan;         // every valid entry is older than the new one
                    blk_q[k][j] <= same_die && (head_q[j] || !s_nreq_head);
                end else if (ins && free_oh[j]) begin // column j = new entry, in row k
                    sc_q[k][j]  <= valid_q[k] && (chan_q[k] == s_nreq_chan);
                    oc_q[k][j]  <= 1'b0;
                    blk_q[k][j] <= valid_q[k] && (die_q[k] == new_die) && s_nreq_head && !head_q[k];
                end
            end
        end

        // dies: dispatch sets busy, an accepted completion clears it
        // (die d belongs to channel d / NUM_WAYS: constant indices, no priority chains)
        for (int d = 0; d < NUM_DIES; d++) begin
            if (pick[d / NUM_WAYS] && (int'(way_sel[d / NUM_WAYS]) == d % NUM_WAYS)) begin
                busy_q[d]     <= 1'b1;
                infl_tag_q[d] <= tag_sel[d / NUM_WAYS];
            end else if (ccpl_fire && hit[d]) begin
                busy_q[d]     <= 1'b0;
            end
        end
        if (rst) busy_q <= '0;

        dv_q <= rst ? '0 : pick;
        for (int c = 0; c < NUM_CHAN; c++) begin
            dway_q[c] <= way_sel[c];
            if (pick[c]) begin
                cv_q[c]   <= 1'b1;
                cpay_q[c] <= pay_sel[c];
            end else if (m_ccmd_ready[c]) begin
                cv_q[c]   <= 1'b0;
            end
        end
        if (rst) cv_q <= '0;

        // outstanding tags
        if (m_ncpl_valid && m_ncpl_ready && out_real_q) otag_q[out_tag_q] <= 1'b0;
        if (ins) otag_q[s_nreq_tag] <= 1'b1;
        if (rst) otag_q <= '0;

        // error completion, then the m_ncpl register (an error goes out before channel completions)
        if (acc && bad) begin
            err_valid_q <= 1'b1;
            err_tag_q   <= s_nreq_tag;
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
            end else if (ccpl_fire && any_hit) begin
                out_valid_q  <= 1'b1;
                out_real_q   <= 1'b1;
                out_tag_q    <= s_ccpl_tag;
                out_status_q <= s_ccpl_status;
                out_corr_q   <= s_ccpl_corrected;
            end else begin
                out_valid_q  <= 1'b0;
            end
        end
        spur_q <= ccpl_fire && !any_hit;
        if (rst) begin
            err_valid_q <= 1'b0;
            out_valid_q <= 1'b0;
            spur_q      <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- outputs
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_ccmd
        assign m_ccmd_valid[c]              = cv_q[c];
        assign m_ccmd_tag[c * 8 +: 8]       = cpay_q[c][PAY_W - 8 +: 8];
        assign m_ccmd_op[c * 2 +: 2]        = cpay_q[c][SLOT_W + 8 + 12 + WAY_W +: 2];
        assign m_ccmd_way[c * 2 +: 2]       = cpay_q[c][SLOT_W + 8 + 12 +: WAY_W];
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
