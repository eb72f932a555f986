// SPDX-License-Identifier: Apache-2.0
// ats_nand_die: simulation model of one ONFI 1.0 SDR NAND die (LUN) with the pins of
// docs/nand-pins.md. Purpose: the device under the channel controller in cocotb and in the
// full-system Verilator harness. The die samples on edges of its pins and measures time with
// $realtime; `clk` only times tR/tPROG/tBERS/tRST and releases R/B#. Storage, faults and the image
// file live in C++ (ats_nand_store.cpp, DPI-C). Protocol misuse is reported with $error and counted
// in viol_count; an image file that does not fit the die (geometry, version, short) ends the run with
// $fatal and is never written. Not synthesizable. See sim/nand/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// ATS_NAND_SYNC_PINS (the full-system Verilator build only, sim/soc/build.py): the pins change only
// just after rising edges of clk (registers of the channel controller), and the die takes them at
// the next falling edge, as if at the rising edge (README "Clock-sampled pins"). `ATS_DIE_NOW is
// the time the die acts at: the pins' rising edge for pin changes, else the present time.
`ifdef ATS_NAND_SYNC_PINS
`define ATS_DIE_NOW t_now
`else
`define ATS_DIE_NOW $realtime
`endif

module ats_nand_die #(
    parameter int DIE_ID          = 0,        // store/registry id; plusarg +ats_nand_image<DIE_ID>=file
    // geometry
    parameter int PLANES          = 2,        // planes; plane = block % PLANES (ONFI interleave bits)
    parameter int BLOCKS          = 64,       // blocks per die (all planes)
    parameter int PAGES_PER_BLOCK = 64,       // power of two
    parameter int PAGE_BYTES      = 4096,     // main data bytes per page
    parameter int SPARE_BYTES     = 224,      // spare (OOB) bytes per page, after the main data
    // array times (ns), divided by ARRAY_TIME_DIV (tests scale down; benchmarks use 1)
    parameter int T_R_NS          = 40000,    // page read (also READ PARAMETER PAGE)
    parameter int T_PROG_NS       = 200000,   // page program
    parameter int T_BERS_NS       = 2000000,  // block erase
    parameter int T_RST_NS        = 5000,     // RESET busy time (not divided)
    parameter int ARRAY_TIME_DIV  = 1,
    // interface timings (ps), minimums the controller must respect (ONFI 1.0 SDR mode 0 defaults)
    parameter int T_WP_PS         = 50000,    // WE# low pulse
    parameter int T_WH_PS         = 30000,    // WE# high hold
    parameter int T_RP_PS         = 50000,    // RE# low pulse
    parameter int T_REH_PS        = 30000,    // RE# high hold
    parameter int T_CLS_PS        = 50000,    // CLE setup to WE# rising (also ALE: tALS)
    parameter int T_CLH_PS        = 20000,    // CLE/ALE hold after WE# rising (tCLH/tALH)
    parameter int T_CS_PS         = 70000,    // CE# low setup to WE# rising
    parameter int T_DS_PS         = 40000,    // DQ setup to WE# rising
    parameter int T_DH_PS         = 20000,    // DQ hold after WE# rising
    parameter int T_WB_PS         = 200000,   // confirm WE# rising to first bus activity (R/B# valid)
    parameter int T_RR_PS         = 40000,    // R/B# rising to RE# falling
    parameter int T_ADL_PS        = 200000,   // last address WE# rising to first data WE# rising
    parameter int T_WHR_PS        = 120000,   // WE# rising (cmd/addr) to RE# falling
    parameter int T_RHW_PS        = 200000,   // RE# rising to WE# falling
    // identity
    parameter int MFR_ID          = 'hA7,     // READ ID byte 0 (and parameter page byte 64)
    parameter int DEV_ID          = 'hD3,     // READ ID byte 1
    // faults: rates and seeds (each fault its own generator)
    parameter int BAD_PPM         = 0,        // factory bad blocks, per million blocks (block 0 never)
    parameter int BAD_SEED        = 1,
    parameter int PFAIL_PPM       = 0,        // program failures per million programs
    parameter int PFAIL_SEED      = 2,
    parameter int EFAIL_PPM       = 0,        // erase failures per million erases
    parameter int EFAIL_SEED      = 3,
    parameter int FLIP_PPB        = 0,        // read bit flips per 10^9 bits read
    parameter int FLIP_SEED       = 4,
    parameter int TEAR_SEED       = 5,        // content of torn pages / indeterminate blocks
    parameter int VIOL_ERROR      = 2         // 2: $error and the run stops at the first violation;
                                              // 1: $error, the run goes on (caller checks viol_count);
                                              // 0: $display only. Run-time override: ATS_NAND_VIOL=stop|count|quiet
) (
    input  wire logic        clk,        // free running, only times the array and R/B#
    input  wire logic        power_ok,   // test harness: 0 = power cut
    input  wire logic        ce_n,
    input  wire logic        cle,
    input  wire logic        ale,
    input  wire logic        we_n,
    input  wire logic        re_n,
    input  wire logic        wp_n,
    input  wire logic [7:0]  dq_i,
    output logic      [7:0]  dq_o,
    output wire logic        dq_oe,
    output logic             rb_n,
    output logic      [31:0] viol_count   // protocol violations seen (0 on legal traffic)
);
    localparam int ROW_BYTES = PAGE_BYTES + SPARE_BYTES;
    localparam int ROWS      = BLOCKS * PAGES_PER_BLOCK;

    if ((PAGES_PER_BLOCK & (PAGES_PER_BLOCK - 1)) != 0) begin : g_chk_ppb
        $fatal(1, "PAGES_PER_BLOCK must be a power of two (%m)");
    end
    if (BLOCKS % PLANES != 0) begin : g_chk_planes
        $fatal(1, "BLOCKS must be a multiple of PLANES (%m)");
    end
    if (ROW_BYTES > 65535) begin : g_chk_col
        $fatal(1, "page + spare must fit 2 column cycles (%m)");
    end
    if (ROWS > (1 << 24)) begin : g_chk_row
        $fatal(1, "rows must fit 3 row cycles (%m)");
    end
    if (ARRAY_TIME_DIV < 1) begin : g_chk_div
        $fatal(1, "ARRAY_TIME_DIV must be >= 1 (%m)");
    end

    import "DPI-C" function chandle ats_nand_open(input int die_id, input int planes, input int blocks,
        input int ppb, input int page_bytes, input int spare_bytes, input int bad_ppm, input int bad_seed,
        input int pfail_ppm, input int pfail_seed, input int efail_ppm, input int efail_seed,
        input int flip_ppb, input int flip_seed, input int tear_seed, input string image);
    import "DPI-C" function void ats_nand_reg_fill(input chandle h);
    import "DPI-C" function int  ats_nand_reg_get(input chandle h, input int col);
    import "DPI-C" function void ats_nand_reg_set(input chandle h, input int col, input int value);
    import "DPI-C" function int  ats_nand_read_page(input chandle h, input int row);
    import "DPI-C" function int  ats_nand_program(input chandle h, input int row);
    import "DPI-C" function int  ats_nand_erase(input chandle h, input int block);
    import "DPI-C" function void ats_nand_tear_page(input chandle h, input int row);
    import "DPI-C" function void ats_nand_tear_block(input chandle h, input int block);
    import "DPI-C" function int  ats_nand_param_byte(input chandle h, input int idx);
    import "DPI-C" function void ats_nand_power(input chandle h, input int on);
    import "DPI-C" function string ats_nand_image_error(input chandle h);
    import "DPI-C" function void ats_nand_error_nonfatal();
    import "DPI-C" function void ats_nand_error_forgive();
    import "DPI-C" function int  ats_nand_viol_mode(input int dflt);
`ifdef ATS_SIM_SKIP
    // the SoC simulator's cycle skipping (sim/soc/README.md "Cycle skipping"): the array timer's
    // next event, busy_end while busy, else -1 (ats_nand_next_busy_end() gives the earliest)
    import "DPI-C" function void ats_nand_busy_until(input chandle h, input real t);
`endif

    typedef enum logic [1:0] {PW_OFF, PW_NEEDRST, PW_ON} pwr_e;
    typedef enum logic [2:0] {OUT_NONE, OUT_DATA, OUT_STATUS, OUT_ID, OUT_PARAM} out_e;
    typedef enum logic [2:0] {OP_NONE, OP_READ, OP_PROG, OP_ERASE, OP_RESET, OP_PARAM} op_e;

    chandle store;
    pwr_e   pwr;
    out_e   out_mode;
    op_e    op;
    logic   busy, fail_q, read_valid;
    logic   seq_on;                 // a multi-cycle command is collecting address/data cycles
    logic [7:0] seq_cmd;            // its first command byte (00h, 05h, 80h, 60h, 90h, ECh)
    int     addr_cnt, addr_need;
    logic [7:0] addr_b [5];
    logic   data_seen;              // PROGRAM: first data cycle latched (tADL checked)
    logic   resume_ok;              // 00h after 70h may resume data output
    int     col, id_addr, id_idx, param_idx, op_row, op_block;
    realtime busy_end, t_confirm, t_rb_rise;
    realtime t_we_fall, t_we_rise, t_re_fall, t_re_rise, t_cle, t_ale, t_ce, t_dq, t_last_addr;
    realtime t_both_low;            // when WE# falling found RE# low (reported once per time step)
    logic   last_was_write, last_was_read, drv;
`ifdef ATS_NAND_SYNC_PINS
    realtime t_now, t_rise;         // the time the die acts at; the last rising edge of clk
`endif
    logic   power_p, ce_p, cle_p, ale_p, we_p, re_p, clk_rose;
    logic [7:0] dq_p;
    int     viol_q;
    int     viol_mode;              // VIOL_ERROR, or the ATS_NAND_VIOL override
    localparam int VIOL_MSG_CHARS = 96;
    // text of the last violation (ASCII, right-aligned, NUL-padded): tests read it to check which
    // rule was reported
    /* verilator lint_off UNUSEDSIGNAL */
    logic [8*VIOL_MSG_CHARS-1:0] viol_last;   // read by tests through VPI only
    /* verilator lint_on UNUSEDSIGNAL */

    assign dq_oe = drv && !ce_n && !re_n && (pwr != PW_OFF);
    assign viol_count = viol_q;

    function automatic int row_of(input logic [7:0] a2, input logic [7:0] a3, input logic [7:0] a4);
        return int'({8'h00, a4, a3, a2});
    endfunction

    function automatic int col_of(input logic [7:0] lo, input logic [7:0] hi);
        return int'({16'h0000, hi, lo});
    endfunction

    function automatic logic [7:0] status_byte();
        return {wp_n, !busy, !busy, 4'b0000, fail_q};
    endfunction

    function automatic logic [7:0] id_byte(input int a, input int i);
        if (a == 'h20) begin
            case (i)
                0: return 8'h4F;  // 'O'
                1: return 8'h4E;  // 'N'
                2: return 8'h46;  // 'F'
                3: return 8'h49;  // 'I'
                default: return 8'h00;
            endcase
        end
        case (i)
            0: return MFR_ID[7:0];
            1: return DEV_ID[7:0];
            default: return 8'h00;
        endcase
    endfunction

    task automatic viol(input string msg);
        viol_q = viol_q + 1;
        $sformat(viol_last, "%s", msg);
        if (viol_mode == 1) ats_nand_error_nonfatal();
        if (viol_mode != 0) $error("NAND protocol violation #%0d at %0.3f ns: %s", viol_q, `ATS_DIE_NOW, msg);
        else $display("%m: NAND protocol violation #%0d at %0.3f ns: %s", viol_q, `ATS_DIE_NOW, msg);
        if (viol_mode >= 2) $stop;    // loud by default: the run ends here (whatever the error limit)
    endtask

    // true if fewer than ps picoseconds have passed since t
    function automatic logic too_soon(input realtime t, input int ps);
        return (`ATS_DIE_NOW - t) * 1000.0 < real'(ps) - 0.001;
    endfunction

    function automatic realtime array_time(input int ns, input logic scaled);
        int d = scaled ? ns / ARRAY_TIME_DIV : ns;
        return realtime'(d < 1 ? 1 : d);
    endfunction

    task automatic start_busy(input op_e o, input realtime dur);
        busy = 1'b1;
        op = o;
        busy_end = `ATS_DIE_NOW + dur;
        t_confirm = `ATS_DIE_NOW;
        rb_n = 1'b0;
        drv = 1'b0;
`ifdef ATS_SIM_SKIP
        ats_nand_busy_until(store, busy_end);
`endif
    endtask

    // an interrupted program/erase (power cut or RESET while busy) leaves torn content
    task automatic interrupt_op();
        if (busy && op == OP_PROG) ats_nand_tear_page(store, op_row);
        if (busy && op == OP_ERASE) ats_nand_tear_block(store, op_block);
        busy = 1'b0;
        op = OP_NONE;
`ifdef ATS_SIM_SKIP
        ats_nand_busy_until(store, -1.0);
`endif
    endtask

    task automatic clear_io();
        seq_on = 1'b0;
        addr_cnt = 0;
        addr_need = 0;
        out_mode = OUT_NONE;
        drv = 1'b0;
        read_valid = 1'b0;
        resume_ok = 1'b0;
        data_seen = 1'b0;
    endtask

    task automatic finish_op();
        logic [2:0] r;
        case (op)
            OP_READ: begin
                void'(ats_nand_read_page(store, op_row));
                read_valid = 1'b1;
                out_mode = OUT_DATA;
            end
            OP_PARAM: begin
                param_idx = 0;
                out_mode = OUT_PARAM;
            end
            OP_PROG: begin
                r = 3'(ats_nand_program(store, op_row));
                fail_q = r[0];
                if (r[1]) viol($sformatf("PROGRAM of row %0d (block %0d page %0d): page not erased",
                                         op_row, op_row / PAGES_PER_BLOCK, op_row % PAGES_PER_BLOCK));
                if (r[2]) viol($sformatf("PROGRAM of row %0d (block %0d page %0d): out of order in the block",
                                         op_row, op_row / PAGES_PER_BLOCK, op_row % PAGES_PER_BLOCK));
            end
            OP_ERASE: begin
                r = 3'(ats_nand_erase(store, op_block));
                fail_q = r[0];
            end
            OP_RESET: begin
                pwr = PW_ON;
            end
            default: ;
        endcase
        busy = 1'b0;
        op = OP_NONE;
        rb_n = 1'b1;
        t_rb_rise = `ATS_DIE_NOW;
`ifdef ATS_SIM_SKIP
        ats_nand_busy_until(store, -1.0);
`endif
    endtask

    // a command latch (CLE high, ALE low)
    task automatic on_command(input logic [7:0] c);
        if (pwr == PW_NEEDRST && c != 8'hFF && c != 8'h70) begin
            viol($sformatf("command %02hh before RESET after power-on", c));
            return;
        end
        if (busy && c != 8'h70 && c != 8'hFF) begin
            viol($sformatf("command %02hh while busy", c));
            return;
        end
        // a command that does not continue the open sequence abandons it
        if (seq_on && c != 8'hFF) begin
            logic cont;
            cont = (seq_cmd == 8'h00 && c == 8'h30) || (seq_cmd == 8'h05 && c == 8'hE0) ||
                   (seq_cmd == 8'h80 && c == 8'h10) || (seq_cmd == 8'h60 && c == 8'hD0) ||
                   (seq_cmd == 8'h00 && addr_cnt == 0);
            if (!cont) viol($sformatf("command %02hh inside the %02hh sequence", c, seq_cmd));
            if (!cont) seq_on = 1'b0;
        end
        case (c)
            8'hFF: begin
                interrupt_op();
                clear_io();
                fail_q = 1'b0;
                start_busy(OP_RESET, array_time(T_RST_NS, 1'b0));
            end
            8'h70: begin
                out_mode = OUT_STATUS;
                resume_ok = read_valid && !busy;
            end
            8'h00: begin
                seq_on = 1'b1; seq_cmd = c; addr_cnt = 0; addr_need = 5;
                resume_ok = resume_ok && read_valid;
                out_mode = OUT_NONE;
            end
            8'h90, 8'hEC: begin
                seq_on = 1'b1; seq_cmd = c; addr_cnt = 0; addr_need = 1;
                out_mode = OUT_NONE;
                read_valid = (c == 8'h90) ? read_valid : 1'b0;
            end
            8'h05: begin
                if (!read_valid) viol("CHANGE READ COLUMN (05h) without a page read");
                seq_on = read_valid; seq_cmd = c; addr_cnt = 0; addr_need = 2;
                out_mode = OUT_NONE;
            end
            8'h80: begin
                seq_on = 1'b1; seq_cmd = c; addr_cnt = 0; addr_need = 5;
                data_seen = 1'b0;
                out_mode = OUT_NONE;
                read_valid = 1'b0;
                ats_nand_reg_fill(store);
            end
            8'h60: begin
                seq_on = 1'b1; seq_cmd = c; addr_cnt = 0; addr_need = 3;
                out_mode = OUT_NONE;
                read_valid = 1'b0;
            end
            8'h30: begin
                if (!seq_on || seq_cmd != 8'h00 || addr_cnt != 5) viol("30h without 00h and 5 address cycles");
                else begin
                    seq_on = 1'b0;
                    op_row = row_of(addr_b[2], addr_b[3], addr_b[4]);
                    col = col_of(addr_b[0], addr_b[1]);
                    if (op_row >= ROWS) viol($sformatf("READ of row %0d beyond the die", op_row));
                    read_valid = 1'b0;
                    start_busy(OP_READ, array_time(T_R_NS, 1'b1));
                end
            end
            8'hE0: begin
                if (!seq_on || seq_cmd != 8'h05 || addr_cnt != 2) viol("E0h without 05h and 2 address cycles");
                else begin
                    seq_on = 1'b0;
                    col = col_of(addr_b[0], addr_b[1]);
                    out_mode = OUT_DATA;
                end
            end
            8'h10: begin
                if (!seq_on || seq_cmd != 8'h80 || addr_cnt != 5) viol("10h without 80h and 5 address cycles");
                else begin
                    seq_on = 1'b0;
                    op_row = row_of(addr_b[2], addr_b[3], addr_b[4]);
                    if (op_row >= ROWS) viol($sformatf("PROGRAM of row %0d beyond the die", op_row));
                    if (!wp_n) fail_q = 1'b1;             // write protected: not executed
                    else begin
                        fail_q = 1'b0;
                        start_busy(OP_PROG, array_time(T_PROG_NS, 1'b1));
                    end
                end
            end
            8'hD0: begin
                if (!seq_on || seq_cmd != 8'h60 || addr_cnt != 3) viol("D0h without 60h and 3 address cycles");
                else begin
                    seq_on = 1'b0;
                    op_row = row_of(addr_b[0], addr_b[1], addr_b[2]);
                    op_block = op_row / PAGES_PER_BLOCK;
                    if (op_row % PAGES_PER_BLOCK != 0)
                        viol($sformatf("ERASE row %0d has page bits set (ignored)", op_row));
                    if (op_row >= ROWS) viol($sformatf("ERASE of block %0d beyond the die", op_block));
                    if (!wp_n) fail_q = 1'b1;
                    else begin
                        fail_q = 1'b0;
                        start_busy(OP_ERASE, array_time(T_BERS_NS, 1'b1));
                    end
                end
            end
            default: viol($sformatf("unsupported command %02hh", c));
        endcase
    endtask

    task automatic on_address(input logic [7:0] a);
        if (pwr != PW_ON || busy || !seq_on || addr_cnt >= addr_need) begin
            viol($sformatf("unexpected address cycle %02hh (%0d cycles for the command)", a, addr_cnt + 1));
            return;
        end
        addr_b[addr_cnt] = a;
        addr_cnt = addr_cnt + 1;
        t_last_addr = `ATS_DIE_NOW;
        resume_ok = 1'b0;
        if (addr_cnt == addr_need) begin
            case (seq_cmd)
                8'h90: begin
                    seq_on = 1'b0;
                    if (a != 8'h00 && a != 8'h20) viol($sformatf("READ ID address %02hh", a));
                    id_addr = int'(a);
                    id_idx = 0;
                    out_mode = OUT_ID;
                end
                8'hEC: begin
                    seq_on = 1'b0;
                    if (a != 8'h00) viol($sformatf("READ PARAMETER PAGE address %02hh", a));
                    start_busy(OP_PARAM, array_time(T_R_NS, 1'b1));
                end
                8'h80: col = col_of(addr_b[0], addr_b[1]);
                default: ;
            endcase
        end
    endtask

    task automatic on_data_in(input logic [7:0] d);
        if (pwr != PW_ON || busy || !seq_on || seq_cmd != 8'h80 || addr_cnt != 5) begin
            viol($sformatf("data input cycle %02hh outside PROGRAM", d));
            return;
        end
        if (!data_seen && too_soon(t_last_addr, T_ADL_PS)) viol("tADL");
        data_seen = 1'b1;
        if (col >= ROW_BYTES) viol($sformatf("data input beyond the page (column %0d)", col));
        else ats_nand_reg_set(store, col, int'(d));
        col = col + 1;
    endtask

    task automatic on_read_cycle();
        logic [7:0] v;
        drv = 1'b0;
        if (pwr == PW_NEEDRST && out_mode != OUT_STATUS) begin
            viol("data output before RESET after power-on");
            return;
        end
        if (last_was_write && too_soon(t_we_rise, T_WHR_PS)) viol("tWHR");
        if (too_soon(t_rb_rise, T_RR_PS)) viol("tRR");
        if (out_mode == OUT_NONE && seq_on && seq_cmd == 8'h00 && addr_cnt == 0 && resume_ok) begin
            seq_on = 1'b0;         // 00h after a status read: back to data output
            out_mode = OUT_DATA;
        end
        if (busy && out_mode != OUT_STATUS) begin
            viol("data output while busy");
            return;
        end
        case (out_mode)
            OUT_STATUS: v = status_byte();
            OUT_ID: begin
                v = id_byte(id_addr, id_idx);
                id_idx = id_idx + 1;
            end
            OUT_PARAM: begin
                v = 8'(ats_nand_param_byte(store, param_idx));
                param_idx = param_idx + 1;
            end
            OUT_DATA: begin
                if (col >= ROW_BYTES) viol($sformatf("data output beyond the page (column %0d)", col));
                v = 8'(ats_nand_reg_get(store, col));
                col = col + 1;
            end
            default: begin
                viol("RE# cycle with nothing to output");
                return;
            end
        endcase
        dq_o = v;
        drv = 1'b1;
    endtask

    // an image file that does not load (another geometry or format version, not an image, short)
    // stops the simulation: the die would otherwise run blank and its next save destroy the file
    task automatic image_check();
        string why;
        why = ats_nand_image_error(store);
        if (why.len() != 0) $fatal(1, "ats_nand_die: %s", why);
    endtask

    initial begin
        string img;
        img = "";
        if (!$value$plusargs($sformatf("ats_nand_image%0d=%%s", DIE_ID), img)) img = "";
        store = ats_nand_open(DIE_ID, PLANES, BLOCKS, PAGES_PER_BLOCK, PAGE_BYTES, SPARE_BYTES,
                              BAD_PPM, BAD_SEED, PFAIL_PPM, PFAIL_SEED, EFAIL_PPM, EFAIL_SEED,
                              FLIP_PPB, FLIP_SEED, TEAR_SEED, img);
        image_check();
        pwr = PW_OFF;
        op = OP_NONE;
        busy = 1'b0;
        fail_q = 1'b0;
        clear_io();
        rb_n = 1'b0;
        dq_o = 8'hFF;
        viol_q = 0;
        viol_last = '0;
        viol_mode = ats_nand_viol_mode(VIOL_ERROR);
        col = 0; id_addr = 0; id_idx = 0; param_idx = 0; op_row = 0; op_block = 0; seq_cmd = 8'h00;
        busy_end = 0; t_confirm = -1.0e9; t_rb_rise = -1.0e9;
        t_we_fall = -1.0e9; t_we_rise = -1.0e9; t_re_fall = -1.0e9; t_re_rise = -1.0e9;
        t_cle = -1.0e9; t_ale = -1.0e9; t_ce = -1.0e9; t_dq = -1.0e9; t_last_addr = -1.0e9;
        t_both_low = -1.0e9;
`ifdef ATS_NAND_SYNC_PINS
        t_now = 0; t_rise = 0;
`endif
        last_was_write = 1'b0; last_was_read = 1'b0;
        power_p = 1'b0; ce_p = 1'b1; cle_p = 1'b0; ale_p = 1'b0; we_p = 1'b1; re_p = 1'b1; clk_rose = 1'b0;
        dq_p = 8'h00;
    end

    final begin
        ats_nand_power(store, 0);     // keep the image (if any) at the end of the simulation
        if (viol_mode == 1) ats_nand_error_forgive();
        if (viol_q != 0) $display("%m: %0d NAND protocol violation(s) in this run", viol_q);
    end

    // The step (pin-edge form; the clock-sampled form further below). One process sees every pin
    // change (of the clock only the falling edge while the array is busy,
    // which times it); it compares with the previous values to know what changed.
    // Blocking assignments on purpose: a behavioural model whose state is read back in the same
    // activation (not RTL); nothing else reads these variables within the time step.
    // The clock reaches the process only while an array operation runs (aclk: high otherwise), so an
    // idle die costs the simulator nothing per cycle (issue 35). Same activations where they matter:
    // at a falling edge of clk an idle die's process only cleared clk_rose, which is read only while
    // busy; busy is set by a pin change (start_busy) with busy_end at least 1 ns later, so the first
    // timer check that can end the operation is at a later falling edge, where aclk falls with clk.
    // A vector (any change) in the event list is one trigger where each bit's two edges were two.
    /* verilator lint_off BLKSEQ */
    task automatic pin_step();
`ifdef ATS_NAND_SYNC_PINS
        t_now = $realtime;
`endif
        // --- power
        if (power_ok !== power_p) begin
            power_p = power_ok;
            if (power_ok !== 1'b1) begin
                if (pwr != PW_OFF) begin
                    interrupt_op();
                    clear_io();
                    fail_q = 1'b0;
                    ats_nand_power(store, 0);
                end
                pwr = PW_OFF;
                rb_n = 1'b0;
                last_was_write = 1'b0;   // the interface starts afresh at power-on
                last_was_read = 1'b0;
            end else begin
                if (pwr == PW_OFF) begin
                    ats_nand_power(store, 1);
                    image_check();
                end
                pwr = PW_NEEDRST;   // R/B# high, but only RESET (or READ STATUS) is accepted
                rb_n = 1'b1;
                t_rb_rise = `ATS_DIE_NOW;
            end
        end
        if (pwr == PW_OFF) begin
            ce_p = ce_n; cle_p = cle; ale_p = ale; we_p = we_n; re_p = re_n; dq_p = dq_i;
            if (clk === 1'b0) clk_rose = 1'b0;
        end else begin
`ifdef ATS_NAND_SYNC_PINS
            if (clk === 1'b0) t_now = t_rise;   // the pins changed at the last rising edge
`endif
            // --- level changes: timestamps and hold checks (only while selected)
            if (ce_n !== ce_p) begin
                t_ce = `ATS_DIE_NOW;
                ce_p = ce_n;
            end
            if (cle !== cle_p) begin
                if (!ce_n && too_soon(t_we_rise, T_CLH_PS)) viol("tCLH");
                t_cle = `ATS_DIE_NOW;
                cle_p = cle;
            end
            if (ale !== ale_p) begin
                if (!ce_n && too_soon(t_we_rise, T_CLH_PS)) viol("tALH");
                t_ale = `ATS_DIE_NOW;
                ale_p = ale;
            end
            if (dq_i !== dq_p) begin
                if (!ce_n && too_soon(t_we_rise, T_DH_PS)) viol("tDH");
                t_dq = `ATS_DIE_NOW;
                dq_p = dq_i;
            end
            // --- WE#
            if (we_n !== we_p) begin
                we_p = we_n;
                if (!ce_n) begin
                    if (!we_n) begin
                        if (too_soon(t_we_rise, T_WH_PS)) viol("tWH");
                        if (last_was_read && too_soon(t_re_rise, T_RHW_PS)) viol("tRHW");
                        if (too_soon(t_confirm, T_WB_PS)) viol("tWB");
                        // WE#/RE# low together: one violation, named after the edge that made it
                        // (RE# falling in the same time step: "together", not reported again there)
                        if (!re_n) begin
                            viol((re_n !== re_p || t_re_fall == `ATS_DIE_NOW) ?
                                 "WE# and RE# falling together" : "WE# falling while RE# low");
                            t_both_low = `ATS_DIE_NOW;
                        end
                        t_we_fall = `ATS_DIE_NOW;
                    end else begin
                        if (too_soon(t_we_fall, T_WP_PS)) viol("tWP");
                        if (too_soon(t_ce, T_CS_PS)) viol("tCS");
                        if (too_soon(t_dq, T_DS_PS)) viol("tDS");
                        if (cle && too_soon(t_cle, T_CLS_PS)) viol("tCLS");
                        if (ale && too_soon(t_ale, T_CLS_PS)) viol("tALS");
                        if (!cle && !ale && (too_soon(t_cle, T_CLS_PS) || too_soon(t_ale, T_CLS_PS)))
                            viol("tCLS/tALS (data cycle)");
                        t_we_rise = `ATS_DIE_NOW;
                        last_was_write = 1'b1;
                        last_was_read = 1'b0;
                        if (cle && ale) viol("CLE and ALE both high");
                        else if (cle) on_command(dq_i);
                        else if (ale) on_address(dq_i);
                        else on_data_in(dq_i);
                    end
                end
            end
            // --- RE#
            if (re_n !== re_p) begin
                re_p = re_n;
                if (!ce_n) begin
                    if (!re_n) begin
                        if (too_soon(t_re_rise, T_REH_PS)) viol("tREH");
                        if (too_soon(t_confirm, T_WB_PS)) viol("tWB");
                        if (!we_n && t_both_low != `ATS_DIE_NOW)
                            viol((t_we_fall == `ATS_DIE_NOW) ? "WE# and RE# falling together"
                                                          : "RE# falling while WE# low");
                        t_re_fall = `ATS_DIE_NOW;
                        on_read_cycle();
                        last_was_write = 1'b0;
                        last_was_read = 1'b1;
                    end else begin
                        if (too_soon(t_re_fall, T_RP_PS)) viol("tRP");
                        t_re_rise = `ATS_DIE_NOW;
                    end
                end
            end
            // --- array timer: at a falling clk edge (the first activation with clk low after a
            // rising edge; while busy, aclk is clk)
            if (clk === 1'b0 && clk_rose) begin
                clk_rose = 1'b0;
`ifdef ATS_NAND_SYNC_PINS
                t_now = $realtime;
`endif
                if (busy && `ATS_DIE_NOW >= busy_end) finish_op();
            end
        end
    endtask

`ifdef ATS_NAND_SYNC_PINS
    // Clock-sampled pins: no trigger of the die's own (a pin change was a trigger the simulator
    // evaluated at every pass of its scheduling loop, issue 35); a cheap compare at each falling edge
    // and the step only when a pin changed or the array is busy.
    always @(negedge clk or power_ok) begin
        if (power_ok !== power_p || ce_n !== ce_p || cle !== cle_p || ale !== ale_p || we_n !== we_p ||
            re_n !== re_p || dq_i !== dq_p || (busy && clk === 1'b0 && clk_rose))
            pin_step();
    end
    always @(posedge clk) begin
        clk_rose = 1'b1;
        t_rise = $realtime;
    end
`else
    wire aclk = clk || !busy;
    always @(negedge aclk or power_ok or ce_n or cle or ale or we_n or re_n or dq_i) pin_step();

    // The rising clock edge only marks that one was seen: the process above need not run at it
    // when no pin changes (the simulator's cost, issue 35: it ran on both edges of every cycle)
    always @(posedge clk) clk_rose = 1'b1;
`endif
    /* verilator lint_on BLKSEQ */
endmodule

`undef ATS_DIE_NOW
`resetall
