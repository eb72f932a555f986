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
    parameter int T_CS    = 4    // CE# low before the first WE#/RE# of a transaction
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

    // ------------------------------------------------------------------------------------------
    // Bus micro-sequencer: executes one byte cycle (or a wait) at a time from a small program.
    typedef enum logic [2:0] {B_IDLE, B_CMD, B_ADDR, B_DIN, B_DOUT, B_WAIT} bus_kind_e;
    typedef enum logic [3:0] {
        T_NONE, T_START_READ, T_START_PROG, T_START_ERASE, T_START_RESET, T_RDID, T_START_PARAM,
        T_FETCH, T_STATUS, T_DOUT, T_RHWAIT
    } txn_e;

    txn_e                txn_q, txn_d;       // transaction being executed on the bus
    logic [3:0]          step_q, step_d;     // step within the transaction
    logic [WAY_W-1:0]    bway_q, bway_d;     // way owning the bus
    logic [2:0]          bop_q, bop_d;       // op of that way's request
    logic [TAG_W-1:0]    btag_q, btag_d;
    logic [COL_W-1:0]    bcol_q, bcol_d;
    logic [LEN_W-1:0]    blen_q, blen_d;     // bytes left in a data phase
    logic [CNT_W-1:0]    cnt_q, cnt_d;       // cycle counter inside a byte cycle or wait
    logic                phase_q, phase_d;   // 0: WE#/RE# low part, 1: high part
    logic [7:0]          dq_q, dq_d;
    logic                cle_q, cle_d, ale_q, ale_d, we_n_q, we_n_d, re_n_q, re_n_d;
    logic                ce_on_q, ce_on_d;
    logic [7:0]          status_q, status_d;
    logic [39:0]         abytes_q, abytes_d;  // address cycles still to send, next one in [7:0]
    logic [2:0]          naddr_q, naddr_d;    // how many
    logic                rhw_q, rhw_d;        // the transaction read data: hold the bus tRHW at its end

    // completion and read-data output registers (one beat each, backpressured)
    logic                cpl_v_q, cpl_v_d;
    logic [TAG_W-1:0]    cpl_tag_q, cpl_tag_d;
    logic [2:0]          cpl_st_q, cpl_st_d;
    logic                rd_v_q, rd_v_d;
    logic [7:0]          rd_data_q, rd_data_d;
    logic [TAG_W-1:0]    rd_tag_q, rd_tag_d;
    logic                rd_last_q, rd_last_d;

    assign m_cpl_valid  = cpl_v_q;
    assign m_cpl_tag    = cpl_tag_q;
    assign m_cpl_status = cpl_st_q;
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
        assign nand_ce_n[w] = !(ce_on_q && bway_q == WAY_W'(w));
    end

    // ------------------------------------------------------------------------------------------
    // Request checks: a bad request completes at once with BAD_REQ (never a hang).
    logic cmd_bad;
    always_comb begin
        cmd_bad = (s_cmd_op > OP_PARAM) || (32'(s_cmd_way) >= WAYS) ||
                  ((s_cmd_op == OP_READ || s_cmd_op == OP_PROG || s_cmd_op == OP_RDID ||
                    s_cmd_op == OP_PARAM) && (s_cmd_len == '0 || 32'(s_cmd_len) > MAX_LEN));
    end
    // A request for an idle way starts when the bus is free; a bad one needs only the cpl register.
    logic way_idle_sel;
    assign way_idle_sel = (32'(s_cmd_way) < WAYS) && (way_st_q[s_cmd_way] == W_IDLE);

    // Which ready way to serve next (lowest index; fairness is the scheduler's business). A
    // register: a pick keeps the bus busy for at least T_CS cycles, so it is never stale when used.
    logic                ready_any_q, ready_any_d;
    logic [WAY_W-1:0]    ready_way_q, ready_way_d;
    always_comb begin
        ready_any_d = 1'b0;
        ready_way_d = '0;
        for (int w = WAYS - 1; w >= 0; w--) begin
            if (way_st_q[w] == W_READY) begin
                ready_any_d = 1'b1;
                ready_way_d = WAY_W'(w);
            end
        end
    end

    logic bus_free;
    assign bus_free = (txn_q == T_NONE);
    // completion slot free (or freeing this cycle)
    logic cpl_free;
    assign cpl_free = !cpl_v_q || m_cpl_ready;

    // new request accepted: bad ones straight to completion; good ones when the bus is free and no
    // ready way waits for the bus (finishing work frees dies first)
    logic cmd_take_bad, cmd_take_good;
    assign cmd_take_bad  = s_cmd_valid && cmd_bad && cpl_free && bus_free;
    assign cmd_take_good = s_cmd_valid && !cmd_bad && bus_free && !ready_any_q && way_idle_sel;
    logic pick_ready;   // the bus starts finishing a ready way this cycle
    assign pick_ready = bus_free && ready_any_q && cpl_free && way_st_q[ready_way_q] == W_READY;
    assign s_cmd_ready   = cmd_take_bad || cmd_take_good;

    // program data is consumed only in the DIN data phase
    logic din_take;
    logic end_txn;   // the bus transaction ends this cycle (tRHW wait first if it read data)
    assign s_wdata_ready = din_take;

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
    // Byte-cycle engine helpers (in the combinational block): start a command/address/data-in
    // cycle (WE# pulse), a data-out cycle (RE# pulse), or a wait.
    always_comb begin
        txn_d = txn_q; step_d = step_q; bway_d = bway_q; bop_d = bop_q; btag_d = btag_q;
        bcol_d = bcol_q; blen_d = blen_q; cnt_d = cnt_q; phase_d = phase_q;
        dq_d = dq_q; cle_d = cle_q; ale_d = ale_q; we_n_d = we_n_q; re_n_d = re_n_q;
        ce_on_d = ce_on_q; status_d = status_q; abytes_d = abytes_q; naddr_d = naddr_q;
        rhw_d = rhw_q;
        cpl_v_d = cpl_v_q && !m_cpl_ready; cpl_tag_d = cpl_tag_q; cpl_st_d = cpl_st_q;
        rd_v_d = rd_v_q && !m_rdata_ready; rd_data_d = rd_data_q; rd_tag_d = rd_tag_q;
        rd_last_d = rd_last_q;
        din_take = 1'b0;
        end_txn = 1'b0;

        if (cmd_take_bad) begin
            cpl_v_d = 1'b1;
            cpl_tag_d = s_cmd_tag;
            cpl_st_d = ST_BAD;
        end

        if (txn_q == T_NONE) begin
            // pick work: a ready way first, else a new request
            if (pick_ready) begin
                bway_d = ready_way_q;
                bop_d = way_op_q[ready_way_q];
                btag_d = way_tag_q[ready_way_q];
                bcol_d = way_col_q[ready_way_q];
                blen_d = way_len_q[ready_way_q];
                txn_d = (way_op_q[ready_way_q] == OP_PROG || way_op_q[ready_way_q] == OP_ERASE ||
                         way_op_q[ready_way_q] == OP_RESET) ? T_STATUS : T_FETCH;
                step_d = '0;
                cnt_d = CNT_W'(T_CS);
                ce_on_d = 1'b1;
            end else if (cmd_take_good) begin
                bway_d = s_cmd_way;
                bop_d = s_cmd_op;
                btag_d = s_cmd_tag;
                bcol_d = s_cmd_col;
                blen_d = s_cmd_len;
                // address cycles: READ/PROGRAM col (2) + row (3); ERASE row (3); ID/PARAM 00h
                abytes_d = (s_cmd_op == OP_ERASE) ? {16'b0, 24'(s_cmd_row)} :
                           (s_cmd_op == OP_READ || s_cmd_op == OP_PROG) ? {24'(s_cmd_row), 16'(s_cmd_col)}
                                                                          : 40'b0;
                naddr_d = (s_cmd_op == OP_READ || s_cmd_op == OP_PROG) ? 3'd5 :
                          (s_cmd_op == OP_ERASE) ? 3'd3 : (s_cmd_op == OP_RESET) ? 3'd0 : 3'd1;
                case (s_cmd_op)
                    OP_READ:  txn_d = T_START_READ;
                    OP_PROG:  txn_d = T_START_PROG;
                    OP_ERASE: txn_d = T_START_ERASE;
                    OP_RESET: txn_d = T_START_RESET;
                    OP_RDID:  txn_d = T_RDID;
                    default:  txn_d = T_START_PARAM;
                endcase
                step_d = '0;
                cnt_d = CNT_W'(T_CS);
                ce_on_d = 1'b1;
            end
        end else if (cnt_q != '0) begin
            // inside a byte cycle or a wait
            cnt_d = cnt_q - 1'b1;
        end else if (phase_q == 1'b0 && (!we_n_q || !re_n_q)) begin
            // end of the low part of a WE#/RE# pulse: sample read data, raise the strobe
            if (!re_n_q) begin
                if (txn_q == T_STATUS) status_d = nand_dq_i;
                else begin
                    rd_v_d = 1'b1;
                    rd_data_d = nand_dq_i;
                    rd_tag_d = btag_q;
                    rd_last_d = (blen_q == LEN_W'(1));
                end
            end
            if (!re_n_q) rhw_d = 1'b1;
            we_n_d = 1'b1;
            re_n_d = 1'b1;
            phase_d = 1'b1;
            cnt_d = CNT_W'((!re_n_q ? T_REH : T_WH) - 1);
        end else begin
            // the previous cycle is complete: next step of the transaction
            phase_d = 1'b0;
            cle_d = 1'b0;
            ale_d = 1'b0;
            // each transaction is a list of steps; helpers below set the strobes
            unique case (txn_q)
                T_START_READ, T_START_PROG, T_START_ERASE, T_START_PARAM, T_START_RESET, T_RDID: begin
                    // step 0: command; 1..n_addr: address cycles; then per transaction:
                    // PROG 10 (tADL) 11 (data) 13 (confirm); READ/ERASE 13 (confirm);
                    // RDID 12 (tWHR, then T_DOUT); 14: hand the die to its busy wait
                    if (step_q == 4'd0) begin
                        cle_d = 1'b1; dq_d = start_c0; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1);
                        step_d = (naddr_q == 3'd0) ? 4'd14 : 4'd1;
                    end else if (step_q == 4'd1) begin
                        // address cycles from the shift register
                        ale_d = 1'b1; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1);
                        dq_d = abytes_q[7:0];
                        abytes_d = abytes_q >> 8;
                        naddr_d = naddr_q - 1'b1;
                        if (naddr_q == 3'd1) begin
                            step_d = (txn_q == T_START_PROG) ? 4'd10 :
                                     (txn_q == T_RDID) ? 4'd12 :
                                     (txn_q == T_START_PARAM) ? 4'd14 : 4'd13;
                        end
                    end else if (step_q == 4'd10) begin
                        cnt_d = CNT_W'(T_ADL); step_d = 4'd11;
                    end else if (step_q == 4'd11) begin
                        if (blen_q == '0) begin
                            step_d = 4'd13;
                        end else if (s_wdata_valid) begin
                            din_take = 1'b1;
                            dq_d = s_wdata_data;
                            we_n_d = 1'b0;
                            cnt_d = CNT_W'(T_WP - 1);
                            blen_d = blen_q - 1'b1;
                        end
                    end else if (step_q == 4'd12) begin
                        cnt_d = CNT_W'(T_WHR); txn_d = T_DOUT;
                    end else if (step_q == 4'd13) begin
                        cle_d = 1'b1; dq_d = start_c1; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1);
                        step_d = 4'd14;
                    end else if (step_q == 4'd14) begin
                        end_txn = 1'b1;
                    end
                end
                T_FETCH: begin
                    // a ready READ/PARAM: tRR, CHANGE READ COLUMN 05h col col E0h, tWHR, data out
                    if (step_q == 4'd0) begin
                        // READ PARAMETER PAGE has no column change: straight to the data
                        cnt_d = CNT_W'(T_RR);
                        if (bop_q == OP_PARAM) txn_d = T_DOUT; else step_d = 4'd1;
                    end else if (step_q == 4'd1) begin
                        cle_d = 1'b1; dq_d = 8'h05; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1); step_d = 4'd2;
                    end else if (step_q == 4'd2 || step_q == 4'd3) begin
                        ale_d = 1'b1; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1);
                        dq_d = (step_q == 4'd2) ? bcol_q[7:0] : 8'(bcol_q >> 8);
                        step_d = step_q + 1'b1;
                    end else if (step_q == 4'd4) begin
                        cle_d = 1'b1; dq_d = 8'hE0; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1); step_d = 4'd5;
                    end else begin
                        cnt_d = CNT_W'(T_WHR); txn_d = T_DOUT;
                    end
                end
                T_DOUT: begin
                    // data-out cycles of READ ID and of a fetched READ / READ_PARAM; the
                    // completion follows the last data byte out of the channel
                    if (blen_q == '0) begin
                        if (!cpl_v_d && !rd_v_q) begin
                            end_txn = 1'b1;
                            cpl_v_d = 1'b1; cpl_tag_d = btag_q; cpl_st_d = ST_OK;
                        end
                    end else if (!rd_v_q || m_rdata_ready) begin
                        re_n_d = 1'b0; cnt_d = CNT_W'(T_RP - 1); blen_d = blen_q - 1'b1;
                    end
                end
                T_STATUS: begin
                    // a ready PROGRAM/ERASE/RESET: READ STATUS 70h, tWHR, one status byte
                    if (step_q == 4'd0) begin
                        cle_d = 1'b1; dq_d = 8'h70; we_n_d = 1'b0; cnt_d = CNT_W'(T_WP - 1); step_d = 4'd1;
                    end else if (step_q == 4'd1) begin
                        cnt_d = CNT_W'(T_WHR); step_d = 4'd2;
                    end else if (step_q == 4'd2) begin
                        re_n_d = 1'b0; cnt_d = CNT_W'(T_RP - 1); step_d = 4'd3;
                    end else if (!cpl_v_d) begin
                        end_txn = 1'b1;
                        cpl_v_d = 1'b1; cpl_tag_d = btag_q;
                        cpl_st_d = (status_q[0] && bop_q == OP_PROG)  ? ST_PFAIL :
                                   (status_q[0] && bop_q == OP_ERASE) ? ST_EFAIL : ST_OK;
                    end
                end
                T_RHWAIT: begin
                    txn_d = T_NONE; ce_on_d = 1'b0;   // tRHW has elapsed
                end
                default: begin
                    txn_d = T_NONE; ce_on_d = 1'b0;
                end
            endcase
        end
        if (end_txn) begin
            txn_d = rhw_q ? T_RHWAIT : T_NONE;
            ce_on_d = rhw_q;
            if (rhw_q) begin
                cnt_d = CNT_W'(T_RHW);
                rhw_d = 1'b0;
            end
        end
    end

    // The data phase length is the request's len; `last` must agree (caller bug otherwise).
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && din_take && (s_wdata_last != (blen_q == LEN_W'(1))))
            $error("ats_nand_chan: s_wdata_last disagrees with the PROGRAM length (tag %0d)", btag_q);
    end
`else
    logic unused_last;
    assign unused_last = s_wdata_last;   // checked in simulation only
`endif

    // ------------------------------------------------------------------------------------------
    // Way state machines
    always_ff @(posedge clk) begin
        for (int w = 0; w < WAYS; w++) begin
            unique case (way_st_q[w])
                W_IDLE: if (cmd_take_good && s_cmd_way == WAY_W'(w) && s_cmd_op != OP_RDID) begin
                    way_st_q[w] <= W_BUSY;
                    way_op_q[w] <= s_cmd_op;
                    way_tag_q[w] <= s_cmd_tag;
                    way_col_q[w] <= s_cmd_col;
                    way_len_q[w] <= s_cmd_len;
                    way_wb_q[w] <= CNT_W'(T_WB);
                end
                W_BUSY: begin
                    // the tWB countdown starts once this way's start transaction has left the bus
                    if (!(txn_q != T_NONE && bway_q == WAY_W'(w))) begin
                        if (way_wb_q[w] != '0) way_wb_q[w] <= way_wb_q[w] - 1'b1;
                        else if (nand_rb_n[w]) way_st_q[w] <= W_READY;
                    end
                end
                W_READY: if (pick_ready && ready_way_q == WAY_W'(w)) begin
                    way_st_q[w] <= W_IDLE;   // its finishing transaction starts now
                end
                default: way_st_q[w] <= W_IDLE;
            endcase
        end
        if (rst) begin
            for (int w = 0; w < WAYS; w++) way_st_q[w] <= W_IDLE;
        end
    end

    always_ff @(posedge clk) begin
        txn_q <= txn_d; step_q <= step_d; bway_q <= bway_d; bop_q <= bop_d; btag_q <= btag_d;
        bcol_q <= bcol_d; blen_q <= blen_d; cnt_q <= cnt_d; phase_q <= phase_d;
        dq_q <= dq_d; cle_q <= cle_d; ale_q <= ale_d; we_n_q <= we_n_d; re_n_q <= re_n_d;
        ce_on_q <= ce_on_d; status_q <= status_d;
        ready_any_q <= ready_any_d; ready_way_q <= ready_way_d;
        abytes_q <= abytes_d; naddr_q <= naddr_d; rhw_q <= rhw_d;
        cpl_v_q <= cpl_v_d; cpl_tag_q <= cpl_tag_d; cpl_st_q <= cpl_st_d;
        rd_v_q <= rd_v_d; rd_data_q <= rd_data_d; rd_tag_q <= rd_tag_d; rd_last_q <= rd_last_d;
        if (rst) begin
            txn_q <= T_NONE; step_q <= '0; cnt_q <= '0; phase_q <= 1'b0;
            cle_q <= 1'b0; ale_q <= 1'b0; we_n_q <= 1'b1; re_n_q <= 1'b1; ce_on_q <= 1'b0;
            cpl_v_q <= 1'b0; rd_v_q <= 1'b0; ready_any_q <= 1'b0; rhw_q <= 1'b0;
        end
    end
endmodule

`resetall
