// SPDX-License-Identifier: Apache-2.0
// ats_nand_chan: one ONFI SDR channel: a shared 8-bit bus and WAYS dies (one CE#/R/B# each).
// Sequences READ PAGE, PROGRAM PAGE, ERASE BLOCK, RESET, READ ID and READ PARAMETER PAGE with
// pin timings given in clock cycles. Ways interleave: while a die is busy (tR, tPROG, tBERS) the bus
// serves the other ways. A program/erase result comes from READ STATUS; a read's data is fetched
// with CHANGE READ COLUMN once the die is ready, so other ways may use the bus in between.
// Pin contract: docs/nand-pins.md. Theory of operation: rtl/nand/README_chan.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_chan #(
    parameter int WAYS    = 4,   // dies on the channel (one CE#, one R/B# each)
    parameter int TAG_W   = 8,   // request tag
    parameter int ROW_W   = 24,  // row address {block, page}: 3 address cycles
    parameter int COL_W   = 16,  // column (byte in page + spare): 2 address cycles
    parameter int LEN_W   = 14,  // transfer length in bytes (1 .. 2**LEN_W - 1)
    parameter int MAX_LEN = 4320, // largest legal transfer (page + spare bytes)
    // pin timings in clock cycles (>= 1)
    parameter int T_WP    = 2,   // WE# low
    parameter int T_WH    = 2,   // WE# high
    parameter int T_RP    = 2,   // RE# low (data sampled in its last cycle)
    parameter int T_REH   = 2,   // RE# high
    parameter int T_WB    = 20,  // WE# high (confirm) to R/B# valid
    parameter int T_WHR   = 12,  // WE# high (command) to RE# low (status, ID, column change)
    parameter int T_ADL   = 14,  // last address WE# high to first data WE# low
    parameter int T_RR    = 4,   // R/B# high to RE# low
    parameter int T_RHW   = 20,  // RE# high (last data/status byte) to the next WE# low
    parameter int T_CS    = 4,   // CE# low before the first WE#/RE# of a transaction
    // Command window: after a completion frees a way, a READY way's data transfer waits up to this
    // many cycles for the next request (so a READ for the freed die starts before the transfer
    // and its tR overlaps it). Set it to the scheduler's completion-to-dispatch latency; 0 = off.
    parameter int T_CMDWIN = 32,
    // Data-out suspension: a READ's data transfer with at least this many bytes left is suspended
    // at a byte boundary when a short start (READ / ERASE) for another, idle way is held, so that
    // the other die's array time overlaps this transfer; the transfer resumes with CHANGE READ
    // COLUMN before any other data transfer. 0 = off.
    parameter int SUSP_MIN = 128
) (
    input  wire logic                 clk,
    input  wire logic                 rst,          // synchronous, active high

    // requests (one outstanding per way; the scheduler dispatches only to idle dies)
    input  wire logic                 s_cmd_valid,
    output wire logic                 s_cmd_ready,
    input  wire logic [2:0]           s_cmd_op,     // READ 0, PROGRAM 1, ERASE 2, RESET 3, READ_ID 4, READ_PARAM 5
    input  wire logic [TAG_W-1:0]     s_cmd_tag,
    input  wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] s_cmd_way,
    input  wire logic [ROW_W-1:0]     s_cmd_row,
    input  wire logic [COL_W-1:0]     s_cmd_col,
    input  wire logic [LEN_W-1:0]     s_cmd_len,    // bytes to read or program

    // program data, s_cmd_len bytes per PROGRAM, in request order
    input  wire logic                 s_wdata_valid,
    output wire logic                 s_wdata_ready,
    input  wire logic [7:0]           s_wdata_data,
    input  wire logic                 s_wdata_last,

    // read data (READ, READ_ID, READ_PARAM), s_cmd_len bytes, tagged
    output wire logic                 m_rdata_valid,
    input  wire logic                 m_rdata_ready,
    output wire logic [7:0]           m_rdata_data,
    output wire logic [TAG_W-1:0]     m_rdata_tag,
    output wire logic                 m_rdata_last,

    // completions, by tag, in completion order
    output wire logic                 m_cpl_valid,
    input  wire logic                 m_cpl_ready,
    output wire logic [TAG_W-1:0]     m_cpl_tag,
    output wire logic [2:0]           m_cpl_status, // OK 0, PROGRAM_FAIL 1, ERASE_FAIL 2, BAD_REQ 4

    // ONFI pins
    output wire logic [WAYS-1:0]      nand_ce_n,
    output wire logic                 nand_cle,
    output wire logic                 nand_ale,
    output wire logic                 nand_we_n,
    output wire logic                 nand_re_n,
    output wire logic                 nand_wp_n,
    output wire logic [7:0]           nand_dq_o,    // to the dies
    input  wire logic [7:0]           nand_dq_i,    // from the dies
    input  wire logic [WAYS-1:0]      nand_rb_n
);
    localparam int WAY_W = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int CNT_W = 8;
    localparam logic [2:0] OP_READ = 3'd0, OP_PROG = 3'd1, OP_ERASE = 3'd2, OP_RESET = 3'd3,
                           OP_RDID = 3'd4, OP_PARAM = 3'd5;
    localparam logic [2:0] ST_OK = 3'd0, ST_PFAIL = 3'd1, ST_EFAIL = 3'd2, ST_BAD = 3'd4;

    if (WAYS < 1 || WAYS > 8) begin : g_check_ways
        $fatal(1, "ats_nand_chan: WAYS must be 1..8 (%m)");
    end
    if (ROW_W > 24 || COL_W > 16) begin : g_check_addr
        $fatal(1, "ats_nand_chan: ROW_W <= 24 and COL_W <= 16 (3 row and 2 column cycles) (%m)");
    end
    if (T_WP < 1 || T_WH < 1 || T_RP < 1 || T_REH < 1 || T_WB > 255 || T_WHR > 255 || T_ADL > 255 ||
        T_RHW > 255)
    begin : g_check_timing
        $fatal(1, "ats_nand_chan: timings must be 1..255 cycles (%m)");
    end

    // ------------------------------------------------------------------------------------------
    // Per-way state: what the die is doing, and what the bus must do for it next.
    typedef enum logic [1:0] {W_IDLE, W_BUSY, W_READY} way_state_e;
    way_state_e          way_st_q   [WAYS];
    logic [2:0]          way_op_q   [WAYS];
    logic [TAG_W-1:0]    way_tag_q  [WAYS];
    logic [COL_W-1:0]    way_col_q  [WAYS];
    logic [LEN_W-1:0]    way_len_q  [WAYS];
    logic [CNT_W-1:0]    way_wb_q   [WAYS];   // tWB countdown before R/B# is looked at
    logic [WAYS-1:0]     way_susp_q;              // READY with a suspended data transfer (resumes first)

    // ------------------------------------------------------------------------------------------
    // The bus has two parts (README_chan.md): a transaction sequencer that walks the steps of one
    // ONFI transaction and emits micro-ops (command, address, data-in, data-out, status or wait)
    // into a one-entry register, and a byte engine that executes them one after another on the
    // pins. The sequencer prepares the next micro-op while the engine executes the current one
    // (every byte cycle lasts at least two clocks), so neither sees the other's combinational
    // logic and back-to-back byte cycles have no bubble.
    typedef enum logic [2:0] {U_CMD, U_ADDR, U_DIN, U_DOUT, U_STAT, U_WAIT} uop_e;
    typedef enum logic [3:0] {
        T_NONE, T_START_READ, T_START_PROG, T_START_ERASE, T_START_RESET, T_RDID, T_START_PARAM,
        T_FETCH, T_STATUS, T_DOUT, T_RHWAIT
    } txn_e;

    // micro-op register (sequencer -> engine)
    logic                uop_v_q, uop_v_d;
    uop_e                uop_kind_q, uop_kind_d;
    logic [7:0]          uop_byte_q, uop_byte_d;  // CMD/ADDR: the byte; WAIT: cycles
    logic                uop_last_q, uop_last_d;  // DOUT: last byte of the transfer
    logic                uop_z_q, uop_z_d;        // WAIT: zero cycles

    // sequencer state
    // transaction being executed on the bus; one-hot (Fmax: every T_* decode is one register;
    // Yosys extracts it as an FSM: its next state is a tree of constants, see T_NONE)
    (* fsm_encoding = "one-hot" *)
    txn_e                txn_q;
    txn_e                txn_d;
    logic [3:0]          step_q, step_d;     // step within the transaction
    logic [WAY_W-1:0]    bway_q, bway_d;     // way owning the bus
    logic [WAYS-1:0]     bway_oh_q, bway_oh_d; // the same, one-hot (valid while txn_q != T_NONE)
    logic [2:0]          bop_q, bop_d;       // op of that way's request
    logic [TAG_W-1:0]    btag_q, btag_d;
    logic [COL_W-1:0]    bcol_q, bcol_d;
    logic [LEN_W-1:0]    blen_q, blen_d;     // bytes left to emit in a data phase
    logic                blen_z_q, blen_1_q; // blen_q == 0 / == 1, one cycle behind blen_q (see below)
    logic                ce_on_q, ce_on_d;
    logic [39:0]         abytes_q, abytes_d; // address cycles still to send, next one in [7:0]
    logic [2:0]          naddr_q, naddr_d;   // how many

    // byte engine state
    logic                eng_busy_q;
    logic                eng_high_q;         // 0: strobe-low part, 1: strobe-high part (or a wait)
    logic [CNT_W-1:0]    cnt_q;              // cycles left in the current part
    logic                cnt_z_q;            // cnt_q == 0
    logic                eng_rd_q;           // the op in flight samples DQ at the end of RE# low
    logic                eng_stat_q;         // ... into the status register
    logic                eng_last_q;
    logic [7:0]          dq_q;
    logic                cle_q, ale_q, we_n_q, re_n_q;
    logic                fail_q;             // READ STATUS bit 0 (FAIL) of the last status read

    // completion and read-data output registers (one beat each, backpressured)
    logic                cpl_v_q, cpl_v_d;
    logic [TAG_W-1:0]    cpl_tag_q, cpl_tag_d;
    logic [2:0]          cpl_st_q, cpl_st_d;
    logic                rd_v_q;
    logic [7:0]          rd_data_q;
    logic [TAG_W-1:0]    rd_tag_q;
    logic                rd_last_q;

    assign m_cpl_valid   = cpl_v_q;
    assign m_cpl_tag     = cpl_tag_q;
    assign m_cpl_status  = cpl_st_q;
    assign m_rdata_valid = rd_v_q;
    assign m_rdata_data  = rd_data_q;
    assign m_rdata_tag   = rd_tag_q;
    assign m_rdata_last  = rd_last_q;

    assign nand_cle  = cle_q;
    assign nand_ale  = ale_q;
    assign nand_we_n = we_n_q;
    assign nand_re_n = re_n_q;
    assign nand_wp_n = 1'b1;
    assign nand_dq_o = dq_q;
    for (genvar w = 0; w < WAYS; w++) begin : g_ce
        assign nand_ce_n[w] = !(ce_on_q && bway_oh_q[w]);
    end

    // Which ready way to serve next (lowest index; fairness is the scheduler's business). A
    // register: a pick keeps the bus busy for at least T_CS cycles, so it is never stale when used.
    logic                ready_any_q, ready_any_d;
    logic [WAY_W-1:0]    ready_way_q, ready_way_d;
    logic [WAYS-1:0]     ready_oh_q, ready_oh_d;   // ready_way_q one-hot (while ready_any_q)
    logic                ready_stat_q;             // the picked way's finish is READ STATUS
    always_comb begin
        ready_any_d = 1'b0;
        ready_way_d = '0;
        ready_oh_d = '0;
        for (int w = WAYS - 1; w >= 0; w--) begin
            if (way_st_q[w] == W_READY) begin
                ready_any_d = 1'b1;
                ready_way_d = WAY_W'(w);
                ready_oh_d = WAYS'(1) << w;
            end
        end
        // a suspended transfer resumes before any other (the page controller takes a page's bytes
        // in one piece); at most one way is suspended at a time
        for (int w = 0; w < WAYS; w++) begin
            if (way_susp_q[w]) begin
                ready_way_d = WAY_W'(w);
                ready_oh_d = WAYS'(1) << w;
            end
        end
    end

    logic pick_ready;   // the bus starts finishing a ready way this cycle
    logic cmdwin_hold;  // a READY way's transfer waits: a freed die may get its next request

    // ------------------------------------------------------------------------------------------
    // Request stage: s_cmd is registered and decoded here (check, address bytes, first
    // transaction), so that starting a transaction depends on registers only. One request is held;
    // the next is accepted once it has left (requests are microseconds apart on a NAND channel).
    logic                pend_v_q;
    logic                pend_bad_q;         // completes with BAD_REQ, never reaches the pins
    logic                pend_good_q;        // pend_v_q && !pend_bad_q
    logic [WAYS-1:0]     pend_oh_q;          // pend_way_q one-hot (0 for a way out of range)
    logic [WAYS-1:0]     pend_wbusy_q;       // ... and the request makes its way busy (not READ ID)
    logic [2:0]          pend_op_q;
    logic [TAG_W-1:0]    pend_tag_q;
    logic [WAY_W-1:0]    pend_way_q;
    logic [COL_W-1:0]    pend_col_q;
    logic [LEN_W-1:0]    pend_len_q;
    logic [39:0]         pend_abytes_q;      // address cycles, first in [7:0]
    logic [2:0]          pend_naddr_q;
    txn_e                pend_txn_q;         // first bus transaction of the request
    logic                pend_short_q;       // READ or ERASE: a short start transaction
    logic                pend_idle_q;        // its way is idle (kept here, not muxed from way_st_q)
    logic                pend_sf_q;          // pend_good_q && pend_short_q && pend_idle_q (Fmax)
    logic                pend_idle_d;        // pend_idle_q's load while the stage is empty
    logic                pend_take;          // the held request leaves the stage this cycle

    logic cmd_bad;
    // the way is idle now, or a pick makes it idle this cycle; afterwards only a pick can make it
    // idle (and only this request's own start makes it busy again)
    assign pend_idle_d = (32'(s_cmd_way) < WAYS) && ((way_st_q[s_cmd_way] == W_IDLE) ||
                                                     (pick_ready && ready_way_q == s_cmd_way));
    always_comb begin
        cmd_bad = (s_cmd_op > OP_PARAM) || (32'(s_cmd_way) >= WAYS) ||
                  ((s_cmd_op == OP_READ || s_cmd_op == OP_PROG || s_cmd_op == OP_RDID ||
                    s_cmd_op == OP_PARAM) && (s_cmd_len == '0 || 32'(s_cmd_len) > MAX_LEN));
    end
    assign s_cmd_ready = !pend_v_q;
    // The payload is loaded in every cycle the stage is empty (its enable is the register
    // !pend_v_q, not the caller's valid: Fmax); only pend_v_q / pend_good_q follow s_cmd_valid.
    // Every use of the payload is gated by pend_v_q / pend_good_q, or loads a register that is
    // used only once a request starts (the operands in T_NONE, a way's operands while idle).
    always_ff @(posedge clk) begin
        if (!pend_v_q) begin
            pend_v_q   <= s_cmd_valid;
            pend_bad_q <= cmd_bad;
            pend_good_q <= s_cmd_valid && !cmd_bad;
            for (int w = 0; w < WAYS; w++) begin
                pend_oh_q[w] <= (32'(s_cmd_way) == w);
                pend_wbusy_q[w] <= (32'(s_cmd_way) == w) && (s_cmd_op != OP_RDID);
            end
            pend_op_q  <= s_cmd_op;
            pend_tag_q <= s_cmd_tag;
            pend_way_q <= s_cmd_way;
            pend_col_q <= s_cmd_col;
            pend_len_q <= s_cmd_len;
            // address cycles: READ/PROGRAM col (2) + row (3); ERASE row (3); ID/PARAM 00h
            pend_abytes_q <= (s_cmd_op == OP_ERASE) ? {16'b0, 24'(s_cmd_row)} :
                             (s_cmd_op == OP_READ || s_cmd_op == OP_PROG) ?
                                 {24'(s_cmd_row), 16'(s_cmd_col)} : 40'b0;
            pend_short_q <= (s_cmd_op == OP_READ || s_cmd_op == OP_ERASE);
            pend_idle_q <= pend_idle_d;
            pend_sf_q <= s_cmd_valid && !cmd_bad && (s_cmd_op == OP_READ || s_cmd_op == OP_ERASE) &&
                         pend_idle_d;
            pend_naddr_q <= (s_cmd_op == OP_READ || s_cmd_op == OP_PROG) ? 3'd5 :
                            (s_cmd_op == OP_ERASE) ? 3'd3 : (s_cmd_op == OP_RESET) ? 3'd0 : 3'd1;
            unique case (s_cmd_op)
                OP_READ:  pend_txn_q <= T_START_READ;
                OP_PROG:  pend_txn_q <= T_START_PROG;
                OP_ERASE: pend_txn_q <= T_START_ERASE;
                OP_RESET: pend_txn_q <= T_START_RESET;
                OP_RDID:  pend_txn_q <= T_RDID;
                default:  pend_txn_q <= T_START_PARAM;
            endcase
        end else if (pend_take) begin
            pend_v_q <= 1'b0;
            pend_good_q <= 1'b0;
            pend_sf_q <= 1'b0;
        end else if (pick_ready && ready_way_q == pend_way_q) begin
            pend_idle_q <= 1'b1;
            pend_sf_q <= pend_good_q && pend_short_q;
        end
        if (rst) begin
            pend_v_q <= 1'b0;
            pend_good_q <= 1'b0;
            pend_sf_q <= 1'b0;
        end
    end
    // A request for an idle way starts when the bus is free; a bad one needs only the cpl register.
    logic way_idle_sel;
    assign way_idle_sel = pend_idle_q;
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && pend_v_q && !pend_bad_q && pend_idle_q != (way_st_q[pend_way_q] == W_IDLE))
            $error("ats_nand_chan: pend_idle_q out of step with way %0d", pend_way_q);
    end
`endif

    logic bus_free;
    assign bus_free = (txn_q == T_NONE);
    logic cpl_free;    // completion register free (registered state only)
    assign cpl_free = !cpl_v_q;

    // new request accepted: bad ones straight to completion; good ones when the bus is free and no
    // ready way waits for the bus (finishing work frees dies first)
    logic cmd_take_bad, cmd_take_good;
    logic take_base;    // a good request may start if its way is idle (the way FSMs know that locally)
    assign cmd_take_bad  = pend_v_q && pend_bad_q && cpl_free && bus_free;
    // A short start (READ, ERASE: a few bytes on the bus) for an idle way goes before a ready
    // way's data transfer, so that its array time overlaps the transfer (B7: reads at 4 ways went
    // from 62 % to 99 % of the bus limit). A PROGRAM, with its page of data, waits.
    logic short_first;
    // (one register: the AND of pend_good_q, pend_short_q and pend_idle_q, kept with them: Fmax,
    // short_first reaches the suspension and the bus operands' select)
    assign short_first   = pend_sf_q;
    assign take_base     = pend_good_q && bus_free && (!ready_any_q || short_first);
    assign cmd_take_good = take_base && way_idle_sel;
    assign pend_take     = cmd_take_bad || cmd_take_good;
    // (ready_way_q is one cycle old, never stale here: only a pick takes a way out of READY, and a
    // pick keeps the bus busy for many cycles)
    assign pick_ready = bus_free && ready_any_q && cpl_free && !short_first && !cmdwin_hold;
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && pick_ready && way_st_q[ready_way_q] != W_READY)
            $error("ats_nand_chan: picked way %0d is not ready", ready_way_q);
        // the precomputed flags and one-hot copies (Fmax) agree with what they stand for
        if (!rst && pick_ready && (ready_stat_q != (way_op_q[ready_way_q] == OP_PROG ||
                way_op_q[ready_way_q] == OP_ERASE || way_op_q[ready_way_q] == OP_RESET)))
            $error("ats_nand_chan: ready_stat_q out of step with way %0d", ready_way_q);
        if (!rst && ready_any_q && ready_oh_q != (WAYS'(1) << ready_way_q))
            $error("ats_nand_chan: ready_oh_q out of step");
        if (!rst && txn_q != T_NONE && bway_oh_q != (WAYS'(1) << bway_q))
            $error("ats_nand_chan: bway_oh_q out of step");
        if (!rst && pend_good_q != (pend_v_q && !pend_bad_q))
            $error("ats_nand_chan: pend_good_q out of step");
        if (!rst && pend_sf_q != (pend_good_q && pend_short_q && pend_idle_q))
            $error("ats_nand_chan: pend_sf_q out of step");
    end
`endif

    // Command window (T_CMDWIN): loaded when a completion is produced (a way has just gone idle or
    // a request finished), counts down in the cycles the bus is free; while it runs and no request
    // is held, a READY way is not picked. A held request (pend_v_q) ends the wait at once: a short
    // start goes first (short_first), anything else lets the READY way go.
    if (T_CMDWIN > 0) begin : g_cmdwin
        localparam int WIN_W = $clog2(T_CMDWIN + 1);
        logic [WIN_W-1:0] cmdwin_q;
        logic             cmdwin_nz_q;   // cmdwin_q != 0 (a register: Fmax)
        logic             cpl_was_q;     // cpl_v_q one cycle ago
        // Loaded at cpl_v_q's rise (registers only; Fmax: not from the next-state cpl_v_d), one
        // cycle after a load at the completion's production, with that cycle's countdown step
        // included: the count equals the former one from the next cycle on, and in the cycle of
        // the rise cmdwin_hold is not used (pick_ready needs cpl_free = !cpl_v_q)
        always_ff @(posedge clk) begin
            cpl_was_q <= cpl_v_q;
            if (cpl_v_q && !cpl_was_q) begin
                cmdwin_q <= WIN_W'(T_CMDWIN) - WIN_W'(bus_free);
                cmdwin_nz_q <= !(bus_free && T_CMDWIN == 1);
            end else if (cmdwin_nz_q && bus_free) begin
                cmdwin_q <= cmdwin_q - 1'b1;
                cmdwin_nz_q <= (cmdwin_q != WIN_W'(1));
            end
            if (rst) begin
                cmdwin_q <= '0;
                cmdwin_nz_q <= 1'b0;
                cpl_was_q <= 1'b0;
            end
        end
        assign cmdwin_hold = cmdwin_nz_q && !pend_v_q;
`ifndef SYNTHESIS
        // the former window, loaded from the next-state cpl_v_d: the pick decision agrees
        logic [WIN_W-1:0] cmdwin_ref_q;
        always_ff @(posedge clk) begin
            if (cpl_v_d && !cpl_v_q) cmdwin_ref_q <= WIN_W'(T_CMDWIN);
            else if (cmdwin_ref_q != '0 && bus_free) cmdwin_ref_q <= cmdwin_ref_q - 1'b1;
            if (rst) cmdwin_ref_q <= '0;
            if (!rst && cpl_free && (cmdwin_nz_q != (cmdwin_ref_q != '0) ||
                                     (cmdwin_nz_q && cmdwin_q != cmdwin_ref_q)))
                $error("ats_nand_chan: command window out of step with the reference");
        end
`endif
    end else begin : g_no_cmdwin
        assign cmdwin_hold = 1'b0;
    end

    // Data-out suspension (SUSP_MIN): in T_DOUT of a READ, at a byte boundary (micro-op register
    // empty), while a short start for another way that is idle is held and enough bytes are left.
    // All terms are registers; blen_q >= SUSP_MIN is a constant compare on a register. susp_q:
    // susp_now one cycle later, what the way state machines act on (see there).
    if (SUSP_MIN > 0) begin : g_susp
        logic susp_len_q;   // blen_q >= SUSP_MIN, one cycle behind (exact at every emit, as blen flags)
        always_ff @(posedge clk) susp_len_q <= (32'(blen_q) >= SUSP_MIN);
        assign susp_now = (txn_q == T_DOUT) && emit && (bop_q == OP_READ) && susp_len_q &&
                          short_first && (pend_way_q != bway_q);
    end else begin : g_no_susp
        assign susp_now = 1'b0;
    end

    // Start-transaction tables: first command, confirm command
    logic [7:0] start_c0, start_c1;
    always_comb begin
        unique case (txn_q)
            T_START_READ:  begin start_c0 = 8'h00; start_c1 = 8'h30; end
            T_START_PROG:  begin start_c0 = 8'h80; start_c1 = 8'h10; end
            T_START_ERASE: begin start_c0 = 8'h60; start_c1 = 8'hD0; end
            T_START_PARAM: begin start_c0 = 8'hEC; start_c1 = 8'h00; end
            T_RDID:        begin start_c0 = 8'h90; start_c1 = 8'h00; end
            default:       begin start_c0 = 8'hFF; start_c1 = 8'h00; end
        endcase
    end

    // ------------------------------------------------------------------------------------------
    // Transaction sequencer: one micro-op per cycle into the empty micro-op register.
    logic susp_now;     // T_DOUT of a READ suspended this cycle (see SUSP_MIN)
    logic susp_q;       // susp_now one cycle later
    always_ff @(posedge clk) susp_q <= !rst && susp_now;
    logic eng_idle;     // engine done with everything it was given (registered state only)
    assign eng_idle = !uop_v_q && !eng_busy_q;
    logic emit;
    assign emit = !uop_v_q;

    always_comb begin
        txn_d = txn_q; step_d = step_q; bway_d = bway_q; bop_d = bop_q; btag_d = btag_q;
        bway_oh_d = bway_oh_q;
        bcol_d = bcol_q; blen_d = blen_q; ce_on_d = ce_on_q; abytes_d = abytes_q;
        naddr_d = naddr_q;
        uop_v_d = uop_v_q; uop_kind_d = uop_kind_q; uop_byte_d = uop_byte_q;
        uop_last_d = uop_last_q; uop_z_d = uop_z_q;
        cpl_v_d = cpl_v_q && !m_cpl_ready; cpl_tag_d = cpl_tag_q; cpl_st_d = cpl_st_q;

        if (cmd_take_bad) cpl_v_d = 1'b1;
        // The completion payload is loaded in every cycle the register is free, from registers
        // only (its enable is !cpl_v_q): every completion source needs the register free, a bad
        // request completes only while the bus is free (pend_tag_q, BAD_REQ), a transaction's
        // completion only while it holds the bus (btag_q, the status from fail_q).
        if (!cpl_v_q) begin
            cpl_tag_d = bus_free ? pend_tag_q : btag_q;
            cpl_st_d = bus_free ? ST_BAD :
                       (txn_q == T_STATUS && fail_q && bop_q == OP_PROG)  ? ST_PFAIL :
                       (txn_q == T_STATUS && fail_q && bop_q == OP_ERASE) ? ST_EFAIL : ST_OK;
        end

        unique case (txn_q)
            T_NONE: begin
                // pick work: a ready way first, else a new request; CE# low, then tCS. The
                // operands are loaded every idle cycle (they matter only once a transaction
                // starts), so only the start itself waits for the full start condition.
                if (ready_any_q && !short_first) begin
                    bway_d = ready_way_q;
                    bway_oh_d = ready_oh_q;
                    bop_d = way_op_q[ready_way_q];
                    btag_d = way_tag_q[ready_way_q];
                    bcol_d = way_col_q[ready_way_q];
                    blen_d = way_len_q[ready_way_q];
                end else begin
                    bway_d = pend_way_q;
                    bway_oh_d = pend_oh_q;
                    bop_d = pend_op_q;
                    btag_d = pend_tag_q;
                    bcol_d = pend_col_q;
                    blen_d = pend_len_q;
                end
                abytes_d = pend_abytes_q;
                naddr_d = pend_naddr_q;
                step_d = '0;
                uop_kind_d = U_WAIT; uop_byte_d = 8'(T_CS); uop_z_d = (T_CS == 0);
                if (pick_ready) begin
                    txn_d = ready_stat_q ? T_STATUS : T_FETCH;
                end else if (cmd_take_good) begin
                    // constants only (not txn_d = pend_txn_q), so that Yosys extracts txn_q as an
                    // FSM and gives it a one-hot code (Fmax: every T_* decode is then one register)
                    unique case (pend_txn_q)
                        T_START_READ:  txn_d = T_START_READ;
                        T_START_PROG:  txn_d = T_START_PROG;
                        T_START_ERASE: txn_d = T_START_ERASE;
                        T_START_RESET: txn_d = T_START_RESET;
                        T_RDID:        txn_d = T_RDID;
                        default:       txn_d = T_START_PARAM;
                    endcase
                end
                if (pick_ready || cmd_take_good) begin
                    ce_on_d = 1'b1;
                    uop_v_d = 1'b1;
                end
            end
            T_START_READ, T_START_PROG, T_START_ERASE, T_START_PARAM, T_START_RESET, T_RDID: begin
                // step 0: command; 1: address cycles; then per transaction:
                // PROG 10 (tADL) 11 (data) 13 (confirm); READ/ERASE 13 (confirm);
                // RDID 12 (tWHR, then T_DOUT); 14: end (the die starts its busy wait)
                if (step_q == 4'd14) begin
                    if (eng_idle) begin
                        txn_d = T_NONE; ce_on_d = 1'b0;
                    end
                end else if (emit) begin
                    uop_v_d = 1'b1;
                    uop_last_d = 1'b0;
                    if (step_q == 4'd0) begin
                        uop_kind_d = U_CMD; uop_byte_d = start_c0;
                        step_d = (naddr_q == 3'd0) ? 4'd14 : 4'd1;
                    end else if (step_q == 4'd1) begin
                        uop_kind_d = U_ADDR; uop_byte_d = abytes_q[7:0];
                        abytes_d = abytes_q >> 8;
                        naddr_d = naddr_q - 1'b1;
                        if (naddr_q == 3'd1) begin
                            step_d = (txn_q == T_START_PROG) ? 4'd10 :
                                     (txn_q == T_RDID) ? 4'd12 :
                                     (txn_q == T_START_PARAM) ? 4'd14 : 4'd13;
                        end
                    end else if (step_q == 4'd10) begin
                        uop_kind_d = U_WAIT; uop_byte_d = 8'(T_ADL); uop_z_d = (T_ADL == 0);
                        step_d = 4'd11;
                    end else if (step_q == 4'd11) begin
                        uop_kind_d = U_DIN;
                        blen_d = blen_q - 1'b1;
                        if (blen_1_q) step_d = 4'd13;
                    end else if (step_q == 4'd12) begin
                        uop_kind_d = U_WAIT; uop_byte_d = 8'(T_WHR); uop_z_d = (T_WHR == 0);
                        txn_d = T_DOUT;
                    end else begin
                        uop_kind_d = U_CMD; uop_byte_d = start_c1;
                        step_d = 4'd14;
                    end
                end
            end
            T_FETCH: begin
                // a ready READ/PARAM: tRR, CHANGE READ COLUMN 05h col col E0h, tWHR, data out
                // (READ PARAMETER PAGE has no column change: straight to the data)
                if (emit) begin
                    uop_v_d = 1'b1;
                    uop_last_d = 1'b0;
                    unique case (step_q)
                        4'd0: begin
                            uop_kind_d = U_WAIT; uop_byte_d = 8'(T_RR); uop_z_d = (T_RR == 0);
                            if (bop_q == OP_PARAM) txn_d = T_DOUT; else step_d = 4'd1;
                        end
                        4'd1: begin uop_kind_d = U_CMD; uop_byte_d = 8'h05; step_d = 4'd2; end
                        4'd2: begin uop_kind_d = U_ADDR; uop_byte_d = bcol_q[7:0]; step_d = 4'd3; end
                        4'd3: begin uop_kind_d = U_ADDR; uop_byte_d = 8'(bcol_q >> 8); step_d = 4'd4; end
                        4'd4: begin uop_kind_d = U_CMD; uop_byte_d = 8'hE0; step_d = 4'd5; end
                        default: begin
                            uop_kind_d = U_WAIT; uop_byte_d = 8'(T_WHR); uop_z_d = (T_WHR == 0);
                            txn_d = T_DOUT;
                        end
                    endcase
                end
            end
            T_DOUT: begin
                // data-out cycles of READ ID and of a fetched READ / READ_PARAM; the completion
                // follows the last data byte out of the channel
                if (susp_now) begin
                    // suspended: no completion; tRHW, CE# high, the way is READY again with the
                    // next column and the bytes left (way state machines)
                    txn_d = T_RHWAIT;
                    uop_v_d = 1'b1; uop_kind_d = U_WAIT; uop_byte_d = 8'(T_RHW);
                    uop_z_d = (T_RHW == 0);
                end else if (blen_z_q) begin
                    // the WAIT's payload is written into the empty micro-op register before it is
                    // valid (Fmax: the engine's and rd_v_q's state reach only uop_v_q, not the
                    // payload; the engine reads the payload only while uop_v_q)
                    if (emit) begin
                        uop_kind_d = U_WAIT; uop_byte_d = 8'(T_RHW); uop_z_d = (T_RHW == 0);
                    end
                    if (eng_idle && !cpl_v_q && !rd_v_q) begin
                        cpl_v_d = 1'b1;
                        txn_d = T_RHWAIT;
                        uop_v_d = 1'b1;
                    end
                end else if (emit) begin
                    uop_v_d = 1'b1; uop_kind_d = U_DOUT; uop_last_d = blen_1_q;
                    blen_d = blen_q - 1'b1;
                    bcol_d = bcol_q + 1'b1;      // the next byte's column (for a suspension)
                end
            end
            T_STATUS: begin
                // a ready PROGRAM/ERASE/RESET: READ STATUS 70h, tWHR, one status byte
                if (step_q == 4'd3) begin
                    if (emit) begin   // (the payload before it is valid, as in T_DOUT)
                        uop_kind_d = U_WAIT; uop_byte_d = 8'(T_RHW); uop_z_d = (T_RHW == 0);
                    end
                    if (eng_idle && !cpl_v_q) begin
                        cpl_v_d = 1'b1;
                        txn_d = T_RHWAIT;
                        uop_v_d = 1'b1;
                    end
                end else if (emit) begin
                    uop_v_d = 1'b1;
                    uop_last_d = 1'b0;
                    if (step_q == 4'd0) begin
                        uop_kind_d = U_CMD; uop_byte_d = 8'h70; step_d = 4'd1;
                    end else if (step_q == 4'd1) begin
                        uop_kind_d = U_WAIT; uop_byte_d = 8'(T_WHR); uop_z_d = (T_WHR == 0);
                        step_d = 4'd2;
                    end else begin
                        uop_kind_d = U_STAT; step_d = 4'd3;
                    end
                end
            end
            T_RHWAIT: begin
                // RE# high since the last data/status byte: tRHW before the bus is released
                if (eng_idle) begin
                    txn_d = T_NONE; ce_on_d = 1'b0;
                end
            end
            default: begin
                txn_d = T_NONE; ce_on_d = 1'b0;
            end
        endcase
        if (eng_take) uop_v_d = 1'b0;
    end

    // ------------------------------------------------------------------------------------------
    // Byte engine: executes the micro-op register. Strobe ops: strobe low for T_WP (WE#) or T_RP
    // (RE#, DQ sampled in its last cycle) cycles, then high for T_WH / T_REH cycles; a WAIT of n
    // holds the bus n+1 cycles. The next micro-op starts in the cycle the current one ends.
    logic eng_free, eng_take, eng_start_ok;
    assign eng_free = !eng_busy_q || (eng_high_q && cnt_z_q);
    always_comb begin
        unique case (uop_kind_q)
            U_DIN:   eng_start_ok = din_v_q;
            U_DOUT:  eng_start_ok = !rd_v_q || m_rdata_ready;   // no bubble when drained
            default: eng_start_ok = 1'b1;
        endcase
    end
    assign eng_take = uop_v_q && eng_free && eng_start_ok;

    // Program data input stage: one byte register in front of the engine, filled whenever empty
    // (s_wdata_ready is a register, and the engine's start decision and the DQ register's enable
    // see only this block's registers, not the caller's stream state). A byte cycle lasts at least
    // T_WP + T_WH >= 2 clocks and the register refills in the cycle after it is emptied, so a data
    // phase runs without a bubble when the caller keeps up. Prefetching the next byte before its
    // PROGRAM reaches the data phase is harmless: the stream carries only PROGRAM data, in order.
    logic       din_v_q, din_last_q;
    logic [7:0] din_q;
    assign s_wdata_ready = !din_v_q;
    always_ff @(posedge clk) begin
        if (!din_v_q) begin
            din_v_q <= s_wdata_valid;
            din_q <= s_wdata_data;
            din_last_q <= s_wdata_last;
        end else if (eng_take && uop_kind_q == U_DIN) begin
            din_v_q <= 1'b0;
        end
        if (rst) din_v_q <= 1'b0;
    end

    always_ff @(posedge clk) begin
        if (rd_v_q && m_rdata_ready) rd_v_q <= 1'b0;
        if (eng_take) begin
            eng_busy_q <= 1'b1;
            eng_rd_q   <= (uop_kind_q == U_DOUT);
            eng_stat_q <= (uop_kind_q == U_STAT);
            eng_last_q <= uop_last_q;
            cle_q      <= (uop_kind_q == U_CMD);
            ale_q      <= (uop_kind_q == U_ADDR);
            unique case (uop_kind_q)
                U_CMD, U_ADDR: begin
                    dq_q <= uop_byte_q; we_n_q <= 1'b0; eng_high_q <= 1'b0;
                    cnt_q <= CNT_W'(T_WP - 1); cnt_z_q <= (T_WP == 1);
                end
                U_DIN: begin
                    dq_q <= din_q; we_n_q <= 1'b0; eng_high_q <= 1'b0;
                    cnt_q <= CNT_W'(T_WP - 1); cnt_z_q <= (T_WP == 1);
                end
                U_DOUT, U_STAT: begin
                    re_n_q <= 1'b0; eng_high_q <= 1'b0;
                    cnt_q <= CNT_W'(T_RP - 1); cnt_z_q <= (T_RP == 1);
                end
                default: begin   // U_WAIT
                    eng_high_q <= 1'b1;
                    cnt_q <= CNT_W'(uop_byte_q); cnt_z_q <= uop_z_q;
                end
            endcase
        end else if (eng_busy_q) begin
            if (!cnt_z_q) begin
                cnt_q <= cnt_q - 1'b1;
                cnt_z_q <= (cnt_q == CNT_W'(1));
            end else if (!eng_high_q) begin
                // end of the strobe-low part: sample read data, raise the strobe
                if (eng_stat_q) fail_q <= nand_dq_i[0];
                if (eng_rd_q) begin
                    rd_v_q <= 1'b1;
                    rd_data_q <= nand_dq_i;
                    rd_tag_q <= btag_q;
                    rd_last_q <= eng_last_q;
                end
                we_n_q <= 1'b1;
                re_n_q <= 1'b1;
                eng_high_q <= 1'b1;
                cnt_q <= CNT_W'((!re_n_q ? T_REH : T_WH) - 1);
                cnt_z_q <= ((!re_n_q ? T_REH : T_WH) == 1);
            end else begin
                // done, nothing to take: release CLE/ALE (they were held through tCLH/tALH)
                eng_busy_q <= 1'b0;
                cle_q <= 1'b0;
                ale_q <= 1'b0;
            end
        end
        if (rst) begin
            eng_busy_q <= 1'b0; eng_high_q <= 1'b1; cnt_q <= '0; cnt_z_q <= 1'b1;
            cle_q <= 1'b0; ale_q <= 1'b0; we_n_q <= 1'b1; re_n_q <= 1'b1; rd_v_q <= 1'b0;
        end
    end

    // The data phase length is the request's len; `last` must agree (caller bug otherwise).
`ifndef SYNTHESIS
    logic [LEN_W-1:0] din_left_q;   // simulation only: bytes of the PROGRAM still to take
    always_ff @(posedge clk) begin
        if (txn_q == T_START_PROG && step_q == 4'd10 && emit) din_left_q <= blen_q;
        if (eng_take && uop_kind_q == U_DIN) begin
            din_left_q <= din_left_q - 1'b1;
            if (!rst && (din_last_q != (din_left_q == LEN_W'(1))))
                $error("ats_nand_chan: s_wdata_last disagrees with the PROGRAM length (tag %0d)", btag_q);
        end
    end
`else
    logic unused_last;
    assign unused_last = din_last_q;   // checked in simulation only
`endif

    // ------------------------------------------------------------------------------------------
    // Way state machines
    always_ff @(posedge clk) begin
        for (int w = 0; w < WAYS; w++) begin
            unique case (way_st_q[w])
                W_IDLE: begin
                    // operands loaded while idle (used only once the request starts)
                    way_op_q[w] <= pend_op_q;
                    way_tag_q[w] <= pend_tag_q;
                    way_col_q[w] <= pend_col_q;
                    way_len_q[w] <= pend_len_q;
                    way_wb_q[w] <= CNT_W'(T_WB);
                    if (take_base && pend_wbusy_q[w])
                        way_st_q[w] <= W_BUSY;
                end
                W_BUSY: begin
                    // the tWB countdown starts once this way's start transaction has left the bus
                    if (!(txn_q != T_NONE && bway_oh_q[w])) begin
                        if (way_wb_q[w] != '0) way_wb_q[w] <= way_wb_q[w] - 1'b1;
                        else if (nand_rb_n[w]) way_st_q[w] <= W_READY;
                    end
                end
                W_READY: if (pick_ready && ready_oh_q[w]) begin
                    way_st_q[w] <= W_IDLE;   // its finishing transaction starts now
                    way_susp_q[w] <= 1'b0;
                end
                default: way_st_q[w] <= W_IDLE;
            endcase
            // a suspended READ transfer: READY again, from the next column with the bytes left.
            // Written one cycle after the suspension (susp_q, Fmax: susp_now's cone stays off these
            // registers' enables); exact: the bus registers do not change in T_RHWAIT, which lasts
            // at least three cycles (the WAIT micro-op must pass the engine), and nothing reads the
            // way's registers before the bus is free again (the next pick, ready_*_q included);
            // no request for that way arrives meanwhile (its READ has not completed)
            if (susp_q && bway_oh_q[w]) begin
                way_st_q[w] <= W_READY;
                way_susp_q[w] <= 1'b1;
                way_op_q[w] <= bop_q;
                way_tag_q[w] <= btag_q;
                way_col_q[w] <= bcol_q;
                way_len_q[w] <= blen_q;
            end
        end
        if (rst) begin
            for (int w = 0; w < WAYS; w++) way_st_q[w] <= W_IDLE;
            way_susp_q <= '0;
        end
    end

    always_ff @(posedge clk) begin
        txn_q <= txn_d; step_q <= step_d; bway_q <= bway_d; bop_q <= bop_d; btag_q <= btag_d;
        bcol_q <= bcol_d; blen_q <= blen_d; ce_on_q <= ce_on_d;
        // blen flags from the registered count (not from blen_d: the load mux and the decrement
        // stay off the compare). Exact whenever the sequencer looks at them: blen_q is loaded in
        // T_NONE, and the first look is at least two cycles after the last load (T_NONE emits a
        // T_CS wait first); a decrement happens only on an emit, and the next emit is at least two
        // cycles later (the micro-op register must be taken in between).
        blen_z_q <= (blen_q == '0);
        blen_1_q <= (blen_q == LEN_W'(1));
        ready_any_q <= ready_any_d; ready_way_q <= ready_way_d; ready_oh_q <= ready_oh_d;
        bway_oh_q <= bway_oh_d;
        // the op of the way picked next (ready_way_d): a READY way's op does not change (README)
        ready_stat_q <= (way_op_q[ready_way_d] == OP_PROG || way_op_q[ready_way_d] == OP_ERASE ||
                         way_op_q[ready_way_d] == OP_RESET);
        abytes_q <= abytes_d; naddr_q <= naddr_d;
        uop_v_q <= uop_v_d; uop_kind_q <= uop_kind_d; uop_byte_q <= uop_byte_d;
        uop_last_q <= uop_last_d; uop_z_q <= uop_z_d;
        cpl_v_q <= cpl_v_d; cpl_tag_q <= cpl_tag_d; cpl_st_q <= cpl_st_d;
        if (rst) begin
            txn_q <= T_NONE; step_q <= '0; ce_on_q <= 1'b0; uop_v_q <= 1'b0;
            cpl_v_q <= 1'b0; ready_any_q <= 1'b0;
        end
    end

`ifndef SYNTHESIS
    // at most one way is suspended at a time (its transfer resumes before any other)
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert ($onehot0(way_susp_q))
                else $error("ats_nand_chan: two ways with a suspended transfer: %b (%m)", way_susp_q);
        end
    end
`endif
endmodule

`resetall
