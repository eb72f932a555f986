// SPDX-License-Identifier: Apache-2.0
// ats_nand_emu: one ONFI 1.0 SDR NAND die (LUN) in synthesizable RTL, behind the pins of
// docs/nand-pins.md, with page and spare storage in DRAM through a LiteDRAM native user port.
// Purpose: NAND on a board without NAND (issue 38 item 2). It behaves like the simulation die model
// (sim/nand/ats_nand_die.sv) on legal ONFI traffic: the same command set, status, R/B#, array times
// (tR / tPROG / tBERS / tRST in clock cycles from the same ns presets), factory bad-block marks,
// and power-loss semantics driven by `power_ok` (the page being programmed is left torn, the block
// being erased indeterminate, nothing later is stored). Pins are sampled by `clk` (SYNC_STAGES
// flops); every pin timing must last at least SYNC_STAGES + 1 clock periods. Page-state (erased /
// programmed / torn) lives on chip, so erased pages read 0xFF without DRAM traffic and an erase
// touches no DRAM. The page states and marks are cleared only at power-on (the FPGA's
// configuration); a later `rst` is a power cut of the die. Contract: rtl/nand_emu/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_emu #(
    parameter int DIE_ID          = 0,        // shown in the parameter page's model string
    // geometry (the die model's parameters)
    parameter int PLANES          = 2,        // plane = block % PLANES (parameter page only)
    parameter int BLOCKS          = 64,       // blocks per die
    parameter int PAGES_PER_BLOCK = 64,       // power of two
    parameter int PAGE_BYTES      = 4096,     // main bytes per page
    parameter int SPARE_BYTES     = 224,      // spare bytes per page (after the main bytes)
    // array times in ns (presets as in atstb.nand_model.PRESETS), divided by ARRAY_TIME_DIV
    parameter int T_R_NS          = 40000,
    parameter int T_PROG_NS       = 200000,
    parameter int T_BERS_NS       = 2000000,
    parameter int T_RST_NS        = 5000,     // not divided
    parameter int ARRAY_TIME_DIV  = 1,
    parameter int CLK_PS          = 10000,    // clk period in ps (converts the times to cycles)
    parameter int SYNC_STAGES     = 2,        // input flops per pin (1: pins driven from clk's domain)
    // identity
    parameter int MFR_ID          = 'hA7,
    parameter int DEV_ID          = 'hD3,
    // DRAM (LiteDRAM native port): word width, address width (in words), first word used
    parameter int DRAM_DW         = 128,      // 32, 64, 128 or 256
    parameter int DRAM_AW         = 24,
    parameter int DRAM_BASE       = 0         // in words
) (
    input  wire logic                       clk,
    input  wire logic                       rst,        // synchronous, active high; a power cut once init_done
    output wire logic                       init_done,  // page state cleared (once, after the configuration)
    // NAND pins (docs/nand-pins.md)
    input  wire logic                       power_ok,   // 0 = power cut (a button or pin)
    input  wire logic                       ce_n,
    input  wire logic                       cle,
    input  wire logic                       ale,
    input  wire logic                       we_n,
    input  wire logic                       re_n,
    input  wire logic                       wp_n,
    input  wire logic [7:0]                 dq_i,
    output wire logic [7:0]                 dq_o,
    output wire logic                       dq_oe,
    output wire logic                       rb_n,
    // factory bad-block marks (set or clear one block's mark; accepted while no array operation runs)
    input  wire logic                       s_bad_valid,
    output wire logic                       s_bad_ready,
    input  wire logic [$clog2(BLOCKS)-1:0]  s_bad_block,
    input  wire logic                       s_bad_set,
    // LiteDRAM native user port
    output wire logic                       m_dram_cmd_valid,
    input  wire logic                       m_dram_cmd_ready,
    output wire logic                       m_dram_cmd_we,
    output wire logic [DRAM_AW-1:0]         m_dram_cmd_addr,
    output wire logic                       m_dram_wdata_valid,
    input  wire logic                       m_dram_wdata_ready,
    output wire logic [DRAM_DW-1:0]         m_dram_wdata_data,
    output wire logic [DRAM_DW/8-1:0]       m_dram_wdata_we,
    input  wire logic                       s_dram_rdata_valid,
    output wire logic                       s_dram_rdata_ready,
    input  wire logic [DRAM_DW-1:0]         s_dram_rdata_data
);
    // ---------------------------------------------------------------- derived values and checks
    localparam int ROW_BYTES = PAGE_BYTES + SPARE_BYTES;
    localparam int ROWS      = BLOCKS * PAGES_PER_BLOCK;
    localparam int NB        = DRAM_DW / 8;                        // byte lanes of the page register
    localparam int LB        = $clog2(NB);
    localparam int ROW_WORDS = (ROW_BYTES + NB - 1) / NB;          // DRAM words per row
    localparam int RW_W      = $clog2(ROW_WORDS + 1);
    localparam int PG_BITS   = $clog2(PAGES_PER_BLOCK);                 // page bits of a row (may be 0)
    localparam int PG_W      = PG_BITS > 0 ? PG_BITS : 1;
    localparam int ROW_W     = $clog2(ROWS) > 0 ? $clog2(ROWS) : 1;
    localparam int BLK_W     = $clog2(BLOCKS) > 0 ? $clog2(BLOCKS) : 1;
    localparam int WADDR_W   = $clog2(ROW_WORDS) > 0 ? $clog2(ROW_WORDS) : 1;
    localparam logic [63:0] DRAM_END = 64'(DRAM_BASE) + 64'(ROWS) * 64'(ROW_WORDS);
    localparam int TMR_W     = 24;
    localparam int WF_DEPTH  = 4;                                   // write data queue (words)

    // array times in cycles, less the cycles the emulator spends seeing the confirm (pin flops,
    // decode) and raising R/B#, so that R/B# is low for at least the time from WE# rising
    function automatic logic [63:0] cycles(input logic [63:0] ns);
        logic [63:0] c;
        c = (ns * 64'd1000 + 64'(CLK_PS) - 64'd1) / 64'(CLK_PS);
        if (c <= 64'(SYNC_STAGES) + 64'd2) c = 64'd1;
        else c = c - 64'(SYNC_STAGES) - 64'd1;
        cycles = c;
    endfunction
    localparam int     TR_NS    = T_R_NS / ARRAY_TIME_DIV;       // as the die model divides them
    localparam int     TPROG_NS = T_PROG_NS / ARRAY_TIME_DIV;
    localparam int     TBERS_NS = T_BERS_NS / ARRAY_TIME_DIV;
    localparam logic [63:0] CYC_R    = cycles((TR_NS < 1) ? 64'd1 : 64'(TR_NS));
    localparam logic [63:0] CYC_PROG = cycles((TPROG_NS < 1) ? 64'd1 : 64'(TPROG_NS));
    localparam logic [63:0] CYC_BERS = cycles((TBERS_NS < 1) ? 64'd1 : 64'(TBERS_NS));
    localparam logic [63:0] CYC_RST  = cycles(64'(T_RST_NS));

    if ((PAGES_PER_BLOCK & (PAGES_PER_BLOCK - 1)) != 0 || PAGES_PER_BLOCK < 1) begin : g_chk_ppb
        $fatal(1, "PAGES_PER_BLOCK must be a power of two (%m)");
    end
    if (PLANES < 1 || BLOCKS % PLANES != 0) begin : g_chk_planes
        $fatal(1, "BLOCKS must be a multiple of PLANES (%m)");
    end
    if (BLOCKS < 2) begin : g_chk_blocks
        $fatal(1, "BLOCKS must be at least 2 (%m)");
    end
    if (ROW_BYTES > 65535 || PAGE_BYTES < 1) begin : g_chk_col
        $fatal(1, "page + spare must fit 2 column cycles (%m)");
    end
    if (ROWS > (1 << 24)) begin : g_chk_row
        $fatal(1, "rows must fit 3 row cycles (%m)");
    end
    if (ARRAY_TIME_DIV < 1 || CLK_PS < 1) begin : g_chk_div
        $fatal(1, "ARRAY_TIME_DIV and CLK_PS must be >= 1 (%m)");
    end
    if (SYNC_STAGES < 1 || SYNC_STAGES > 4) begin : g_chk_sync
        $fatal(1, "SYNC_STAGES must be 1..4 (%m)");
    end
    if (DRAM_DW != 32 && DRAM_DW != 64 && DRAM_DW != 128 && DRAM_DW != 256) begin : g_chk_dw
        $fatal(1, "DRAM_DW must be 32, 64, 128 or 256 (%m)");
    end
    if (DRAM_AW < 1 || DRAM_AW > 40 || DRAM_BASE < 0 || DRAM_END > (64'd1 << DRAM_AW)) begin : g_chk_dram
        $fatal(1, "the geometry does not fit the DRAM: rows x words per row past 2**DRAM_AW (%m)");
    end
    if (CYC_BERS >= (64'd1 << TMR_W) || CYC_PROG >= (64'd1 << TMR_W) || CYC_R >= (64'd1 << TMR_W)) begin : g_chk_tmr
        $fatal(1, "array time too long for the 24-bit timer at this clock (%m)");
    end

    // ---------------------------------------------------------------- ONFI parameter page
    // bytes 0..253 from a table, bytes 254..255 the CRC-16 (PP_CRC, a constant)
    localparam int ILV = (PLANES <= 1) ? 0 : $clog2(PLANES);     // plane address bits
    localparam logic [31:0] PP_PAGE  = 32'(PAGE_BYTES);
    localparam logic [31:0] PP_SPARE = 32'(SPARE_BYTES);
    localparam logic [31:0] PP_PPB   = 32'(PAGES_PER_BLOCK);
    localparam logic [31:0] PP_BLK   = 32'(BLOCKS);
    localparam logic [15:0] PP_MAXBAD = 16'(BLOCKS / 50 + 1);
    localparam logic [7:0]  ID_D0 = (DIE_ID >= 10) ? 8'(8'h30 + DIE_ID / 10) : 8'(8'h30 + DIE_ID);
    localparam logic [7:0]  ID_D1 = (DIE_ID >= 10) ? 8'(8'h30 + DIE_ID % 10) : 8'h20;
    if (DIE_ID < 0 || DIE_ID > 99) begin : g_chk_id
        $fatal(1, "DIE_ID must be 0..99 (%m)");
    end
    function automatic logic [7:0] param_raw(input logic [7:0] i);
        logic [7:0] v;
        case (i)
            8'd0: v = "O";  8'd1: v = "N";  8'd2: v = "F";  8'd3: v = "I";
            8'd4: v = 8'h02;                                          // revision: ONFI 1.0
            8'd32: v = "A"; 8'd33: v = "T"; 8'd34: v = "O"; 8'd35: v = "M";   // "ATOMSSD     "
            8'd36: v = "S"; 8'd37: v = "S"; 8'd38: v = "D";
            8'd39, 8'd40, 8'd41, 8'd42, 8'd43: v = 8'h20;
            8'd44: v = "A"; 8'd45: v = "T"; 8'd46: v = "S"; 8'd47: v = "-";   // "ATS-NAND-EMU<id>"
            8'd48: v = "N"; 8'd49: v = "A"; 8'd50: v = "N"; 8'd51: v = "D";
            8'd52: v = "-"; 8'd53: v = "E"; 8'd54: v = "M"; 8'd55: v = "U";
            8'd56: v = ID_D0; 8'd57: v = ID_D1;
            8'd58, 8'd59, 8'd60, 8'd61, 8'd62, 8'd63: v = 8'h20;
            8'd64: v = MFR_ID[7:0];
            8'd80: v = PP_PAGE[7:0];   8'd81: v = PP_PAGE[15:8];  8'd82: v = PP_PAGE[23:16];  8'd83: v = PP_PAGE[31:24];
            8'd84: v = PP_SPARE[7:0];  8'd85: v = PP_SPARE[15:8];
            8'd86: v = PP_PAGE[7:0];   8'd87: v = PP_PAGE[15:8];  8'd88: v = PP_PAGE[23:16];  8'd89: v = PP_PAGE[31:24];
            8'd90: v = PP_SPARE[7:0];  8'd91: v = PP_SPARE[15:8];
            8'd92: v = PP_PPB[7:0];    8'd93: v = PP_PPB[15:8];   8'd94: v = PP_PPB[23:16];   8'd95: v = PP_PPB[31:24];
            8'd96: v = PP_BLK[7:0];    8'd97: v = PP_BLK[15:8];   8'd98: v = PP_BLK[23:16];   8'd99: v = PP_BLK[31:24];
            8'd100: v = 8'd1;                                         // LUNs per target
            8'd101: v = 8'h23;                                        // 2 column, 3 row cycles
            8'd102: v = 8'd1;                                         // bits per cell
            8'd103: v = PP_MAXBAD[7:0]; 8'd104: v = PP_MAXBAD[15:8];  // max bad blocks per LUN
            8'd105: v = 8'h01; 8'd106: v = 8'h03;                     // endurance 1 x 10^3
            8'd107: v = 8'd1;                                         // valid blocks at start
            8'd110: v = 8'd1;                                         // programs per page
            8'd112: v = 8'hFF;                                        // ECC: left to the controller
            8'd113: v = 8'(ILV);
            8'd129: v = 8'h01;                                        // timing mode 0
            default: v = 8'h00;
        endcase
        param_raw = v;
    endfunction
    function automatic logic [15:0] crc_step(input logic [15:0] c0, input logic [7:0] b);
        logic [15:0] c;
        c = c0 ^ {b, 8'h00};
        for (int k = 0; k < 8; k++) c = c[15] ? ((c << 1) ^ 16'h8005) : (c << 1);
        crc_step = c;
    endfunction
    // the CRC-16 of bytes 0..253, a constant of the parameters (computed at elaboration)
    function automatic logic [15:0] param_crc();
        logic [15:0] c;
        c = 16'h4F4E;                                                 // ONFI: poly 8005h, init 4F4Eh
        for (int i = 0; i < 254; i++) c = crc_step(c, param_raw(8'(i)));
        param_crc = c;
    endfunction
    localparam logic [15:0] PP_CRC = param_crc();

    // torn content: a fixed mix of row and column (stable across reads), never erased-looking: the
    // column's low byte runs through 16 different values in 16 bytes, so a read of 16 torn bytes is
    // never all FFh; partly erased (pe): each bit ORed with its neighbour, more ones. A plain XOR of
    // the address bytes (a few LUTs a bit) instead of a hash (hundreds of LUTs a die, three uses)
    function automatic logic [7:0] torn_byte(input logic [23:0] row, input logic [15:0] col, input logic pe);
        logic [7:0] x;
        x = row[7:0] ^ row[15:8] ^ row[23:16] ^ col[7:0] ^ {col[11:8], col[15:12]} ^ 8'h5A;
        torn_byte = pe ? (x | {x[6:0], x[7]}) : x;
    endfunction

    // ---------------------------------------------------------------- pin sampling
    typedef struct packed {
        logic       pw;
        logic       ce_n, cle, ale, we_n, re_n, wp_n;
        logic [7:0] dq;
    } pins_t;
    // power off, CE#/WE#/RE# high, CLE/ALE/WP# low
    localparam logic [14:0] PINS_IDLE = {1'b0, 1'b1, 1'b0, 1'b0, 1'b1, 1'b1, 1'b0, 8'h00};
    logic [14:0] pin_q [SYNC_STAGES + 1];
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int i = 0; i <= SYNC_STAGES; i++) pin_q[i] <= PINS_IDLE;
        end else begin
            pin_q[0] <= {power_ok, ce_n, cle, ale, we_n, re_n, wp_n, dq_i};
            for (int i = 1; i <= SYNC_STAGES; i++) pin_q[i] <= pin_q[i - 1];
        end
    end
    // not every field of both samples is used (power and WP# from `cur`, the latch fields from `prv`)
    /* verilator lint_off UNUSEDSIGNAL */
    pins_t cur, prv;
    /* verilator lint_on UNUSEDSIGNAL */
    assign cur = pin_q[SYNC_STAGES - 1];
    assign prv = pin_q[SYNC_STAGES];
    // a latch takes CLE/ALE/DQ of the last sample with WE# low (setup >= one period)
    wire we_rise = !prv.we_n && cur.we_n && !prv.ce_n;
    wire re_fall = prv.re_n && !cur.re_n && !cur.ce_n;
    wire re_rise = !prv.re_n && cur.re_n && !prv.ce_n;

    // ---------------------------------------------------------------- state
    typedef enum logic [1:0] {PW_OFF, PW_NEEDRST, PW_ON} pwr_e;
    typedef enum logic [2:0] {OUT_NONE, OUT_DATA, OUT_STATUS, OUT_ID, OUT_PARAM} out_e;
    typedef enum logic [2:0] {OP_NONE, OP_READ, OP_PROG, OP_ERASE, OP_RESET, OP_PARAM} op_e;
    typedef enum logic [2:0] {SRC_FF, SRC_ZERO, SRC_TORN, SRC_TORN_PE, SRC_LANES} src_e;
    // page states (on chip): erased, programmed (content in DRAM), torn, torn and partly erased
    typedef enum logic [1:0] {PS_ERASED, PS_PROG, PS_TORN, PS_TORN_PE} pst_e;
    typedef enum logic [3:0] {A_INIT, A_IDLE, A_LOOK, A_LOOKW, A_LOOK2, A_CLR, A_ENG, A_FETCH, A_TIMER,
                              A_TEAR, A_TEARW, A_TEAR2, A_TEAR_LOOP} ast_e;

    pwr_e       pwr_q;
    out_e       mode_q;
    op_e        op_q;
    src_e       src_q;
    ast_e       ast_q;
    logic       busy_q, fail_q, read_valid_q, resume_ok_q, rb_q;
    logic       seq_on_q;
    logic [7:0] seq_cmd_q;
    logic [2:0] addr_cnt_q, addr_need_q;
    logic [7:0] addr_q [5];
    logic [16:0] col_q;                       // data column (17 bits: past the page reads FFh)
    logic [16:0] prog_lo_q, prog_hi_q;        // PROGRAM: columns written [lo, hi)
    logic [23:0] row_q;                       // row of the array operation / page register
    logic       id20_q;
    logic [2:0] id_idx_q;
    logic [7:0] pidx_q;
    logic [TMR_W-1:0] tmr_q;
    logic       fail_pend_q;                  // PROGRAM / ERASE will report FAIL (bad, beyond)
    logic       tear_blk_q;                   // A_TEAR*: whole block (else one page)
    logic       tear_reset_q;                 // A_TEAR*: a RESET follows (else power off)
    logic [PG_W-1:0] loop_q;
    logic [ROW_W:0]  init_q;
    logic [1:0] fetch_q;
    logic       init_rst_q;                   // a RESET (FFh) came while the page states were cleared

    // page-state and bad-mark memories (one read and one write port each, synchronous read)
    (* ram_style = "block" *) logic [1:0] pst_mem [ROWS];
    logic       bad_mem [BLOCKS];
    logic [ROW_W-1:0] pst_raddr, pst_waddr;
    logic [1:0] pst_rdata, pst_wdata, pst_q;
    logic       pst_we;
    logic [BLK_W-1:0] bad_raddr, bad_waddr;
    logic       bad_rdata, bad_wdata, bad_we, bad_q;
    always_ff @(posedge clk) begin
        if (pst_we) pst_mem[pst_waddr] <= pst_wdata;
        pst_rdata <= pst_mem[pst_raddr];
        pst_q <= pst_rdata;                       // registered again: decisions start from a flop
        if (bad_we) bad_mem[bad_waddr] <= bad_wdata;
        bad_rdata <= bad_mem[bad_raddr];
        bad_q <= bad_rdata;
    end

    // page register: ROW_WORDS words of NB byte lanes (byte c in lane c % NB of word c / NB), one
    // memory with a byte enable per lane, so that Yosys maps it to DRAM_DW/32 block RAMs of 36 bits
    // (PDPW16KD, one write and one read port: at 128 bits and up to 512 words, 4 DP16KD instead of
    // one per lane). The port users never read a word in the cycle it is written (the engine and
    // the pins do not use the register at the same time), so the read-during-write result is not
    // needed (no_rw_check: no bypass logic).
    logic [WADDR_W-1:0] lane_raddr, lane_waddr;
    logic [NB-1:0]      lane_we;
    logic [DRAM_DW-1:0] lane_wdata, lane_rdata;
    (* no_rw_check *) logic [DRAM_DW-1:0] pg_mem [ROW_WORDS];
    always_ff @(posedge clk) begin
        for (int j = 0; j < NB; j++) if (lane_we[j]) pg_mem[lane_waddr][j*8 +: 8] <= lane_wdata[j*8 +: 8];
        lane_rdata <= pg_mem[lane_raddr];
    end

    // ---------------------------------------------------------------- DRAM engine
    typedef enum logic [1:0] {E_IDLE, E_RD, E_WR} eng_e;
    eng_e       eng_q;
    logic [DRAM_AW-1:0] eng_addr_q;           // next command address
    logic [RW_W-1:0]    cmd_k_q, rsp_k_q, f_k_q, push_k_q;
    logic       f_v_q, f_v2_q;                // a lane read for the write queue is in flight (2 stages)
    logic [DRAM_DW-1:0] wword_q;
    logic [DRAM_DW-1:0] wf_data_q [WF_DEPTH];
    logic [$clog2(WF_DEPTH):0] wf_cnt_q;
    logic [$clog2(WF_DEPTH)-1:0] wf_rd_q, wf_wr_q;
    logic       eng_start_rd, eng_start_wr;
    logic [DRAM_AW-1:0] eng_base;
    wire        eng_idle = (eng_q == E_IDLE);
    // first DRAM word of the row (registered: row_q is stable from the confirm on)
    always_ff @(posedge clk) eng_base <= DRAM_AW'(64'(DRAM_BASE) + 64'(row_q) * 64'(ROW_WORDS));
    wire        cmd_fire = m_dram_cmd_valid && m_dram_cmd_ready;
    wire        wd_fire  = m_dram_wdata_valid && m_dram_wdata_ready;
    wire        f_go     = (eng_q == E_WR) && (f_k_q < RW_W'(ROW_WORDS)) &&
                           (32'(wf_cnt_q) + (f_v_q ? 32'd1 : 32'd0) + (f_v2_q ? 32'd1 : 32'd0) < WF_DEPTH);

    assign m_dram_cmd_valid   = (eng_q == E_RD && cmd_k_q < RW_W'(ROW_WORDS)) ||
                                (eng_q == E_WR && cmd_k_q < push_k_q);
    assign m_dram_cmd_we      = (eng_q == E_WR);
    assign m_dram_cmd_addr    = eng_addr_q;
    assign m_dram_wdata_valid = (wf_cnt_q != 0);
    assign m_dram_wdata_data  = wf_data_q[wf_rd_q];
    assign m_dram_wdata_we    = '1;
    assign s_dram_rdata_ready = 1'b1;         // the page register always has room

    // bytes of word w inside the programmed columns [lo, hi) (registered with the lane read, so the
    // compare is not on the path from the page register to the write queue). Column w * NB + j is
    // >= lo exactly when w > lo / NB, or w = lo / NB and j >= lo % NB (and < hi likewise): two word
    // compares shared by the lanes, not two column compares a lane (a carry chain each)
    function automatic logic [NB-1:0] wmask(input logic [RW_W-1:0] w, input logic [16:0] lo, input logic [16:0] hi);
        logic [NB-1:0] r;
        logic [16:0] wx, lo_w, hi_w;
        logic [LB-1:0] lo_j, hi_j;
        wx = 17'(w);
        lo_w = lo >> LB;
        hi_w = hi >> LB;
        lo_j = lo[LB-1:0];
        hi_j = hi[LB-1:0];
        for (int j = 0; j < NB; j++) begin
            r[j] = (wx > lo_w || (wx == lo_w && LB'(j) >= lo_j)) &&
                   (wx < hi_w || (wx == hi_w && LB'(j) < hi_j));
        end
        wmask = r;
    endfunction
    logic [NB-1:0] wm_q;
    logic [DRAM_DW-1:0] wword;                // the word read from the page register, FFh outside the range
    always_comb begin
        for (int j = 0; j < NB; j++) wword[j*8 +: 8] = wm_q[j] ? lane_rdata[j*8 +: 8] : 8'hFF;
    end
    always_ff @(posedge clk) wword_q <= wword;     // block RAM output registered before the queue

    always_ff @(posedge clk) begin
        if (rst) begin
            eng_q <= E_IDLE;
            cmd_k_q <= '0; rsp_k_q <= '0; f_k_q <= '0; push_k_q <= '0; f_v_q <= 1'b0; f_v2_q <= 1'b0; wm_q <= '0;
            wf_cnt_q <= '0; wf_rd_q <= '0; wf_wr_q <= '0;
            eng_addr_q <= '0;
        end else begin
            case (eng_q)
                E_IDLE: begin
                    cmd_k_q <= '0; rsp_k_q <= '0; f_k_q <= '0; push_k_q <= '0; f_v_q <= 1'b0; f_v2_q <= 1'b0;
                    wf_cnt_q <= '0; wf_rd_q <= '0; wf_wr_q <= '0;
                    eng_addr_q <= eng_base;
                    if (eng_start_rd) eng_q <= E_RD;
                    if (eng_start_wr) eng_q <= E_WR;
                end
                E_RD: begin
                    if (cmd_fire) begin
                        cmd_k_q <= cmd_k_q + 1'b1;
                        eng_addr_q <= eng_addr_q + 1'b1;
                    end
                    if (s_dram_rdata_valid) rsp_k_q <= rsp_k_q + 1'b1;
                    if (s_dram_rdata_valid && rsp_k_q == RW_W'(ROW_WORDS - 1)) eng_q <= E_IDLE;
                end
                E_WR: begin
                    if (cmd_fire) begin
                        cmd_k_q <= cmd_k_q + 1'b1;
                        eng_addr_q <= eng_addr_q + 1'b1;
                    end
                    f_v_q <= f_go;
                    f_v2_q <= f_v_q;
                    if (f_go) begin
                        wm_q <= wmask(f_k_q, prog_lo_q, prog_hi_q);
                        f_k_q <= f_k_q + 1'b1;
                    end
                    if (f_v2_q) begin
                        wf_data_q[wf_wr_q] <= wword_q;
                        wf_wr_q <= wf_wr_q + 1'b1;
                        push_k_q <= push_k_q + 1'b1;
                    end
                    if (wd_fire) begin
                        wf_rd_q <= wf_rd_q + 1'b1;
                        rsp_k_q <= rsp_k_q + 1'b1;
                    end
                    wf_cnt_q <= wf_cnt_q + (f_v2_q ? 1 : 0) - (wd_fire ? 1 : 0);
                    if (wd_fire && rsp_k_q == RW_W'(ROW_WORDS - 1)) eng_q <= E_IDLE;
                end
                default: eng_q <= E_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------- outputs to the pins
    out_e mode_eff;
    // 00h after 70h (no address yet): the next RE# resumes the data output (registered: the host
    // waits tWHR after the latch, many clocks)
    logic resume_pend;
    always_ff @(posedge clk) begin
        resume_pend <= !rst && (mode_q == OUT_NONE) && seq_on_q && (seq_cmd_q == 8'h00) &&
                       (addr_cnt_q == 3'd0) && resume_ok_q;
    end
    assign mode_eff = resume_pend ? OUT_DATA : mode_q;
    logic out_en_q;                                   // the die drives DQ on the next RE# low
    logic [7:0] data_byte, status_byte, id_byte;
    logic [16:0] col_rd_q;                            // column of the lane word now at lane_rdata
    always_comb begin
        case (src_q)
            SRC_ZERO:    data_byte = 8'h00;
            SRC_TORN:    data_byte = torn_byte(row_q, col_rd_q[15:0], 1'b0);
            SRC_TORN_PE: data_byte = torn_byte(row_q, col_rd_q[15:0], 1'b1);
            SRC_LANES:   data_byte = lane_rdata[col_rd_q[LB-1:0]*8 +: 8];
            default:     data_byte = 8'hFF;
        endcase
        if (col_rd_q >= 17'(ROW_BYTES)) data_byte = 8'hFF;
        status_byte = {cur.wp_n, !busy_q, !busy_q, 4'b0000, fail_q};
        if (id20_q) begin
            case (id_idx_q)
                3'd0: id_byte = 8'h4F;
                3'd1: id_byte = 8'h4E;
                3'd2: id_byte = 8'h46;
                3'd3: id_byte = 8'h49;
                default: id_byte = 8'h00;
            endcase
        end else begin
            case (id_idx_q)
                3'd0: id_byte = MFR_ID[7:0];
                3'd1: id_byte = DEV_ID[7:0];
                default: id_byte = 8'h00;
            endcase
        end
    end
    logic [7:0] dq_mux;
    always_comb begin
        case (mode_eff)
            OUT_STATUS: dq_mux = status_byte;
            OUT_ID:     dq_mux = id_byte;
            OUT_PARAM:  dq_mux = (pidx_q == 8'd254) ? PP_CRC[7:0] : (pidx_q == 8'd255) ? PP_CRC[15:8] : param_raw(pidx_q);
            OUT_DATA:   dq_mux = data_byte;
            default:    dq_mux = 8'hFF;
        endcase
    end
    assign dq_o  = dq_mux;
    assign dq_oe = out_en_q && !ce_n && !re_n;        // the pins directly, as the tristate enable
    assign rb_n  = rb_q;
    assign init_done = (ast_q != A_INIT);
    assign s_bad_ready = (ast_q == A_IDLE) && !busy_q;

    // ---------------------------------------------------------------- main state machine
    wire [23:0] addr_row   = {addr_q[4], addr_q[3], addr_q[2]};
    wire [23:0] erase_row  = {addr_q[2], addr_q[1], addr_q[0]};
    wire [16:0] addr_col   = {1'b0, addr_q[1], addr_q[0]};
    wire        row_beyond = (row_q >= 24'(ROWS));
    wire [BLK_W-1:0] row_block = BLK_W'(row_q >> PG_BITS);
    wire        row_page0  = ((row_q & 24'(PAGES_PER_BLOCK - 1)) == 24'd0);
    wire [23:0] loop_row   = (row_q & ~24'(PAGES_PER_BLOCK - 1)) | 24'(loop_q);   // page loop_q of the block

    // memory ports and engine starts (combinational from the state)
    function automatic logic tear_pe(input logic [23:0] row);  // pages of a torn block partly erased
        logic [7:0] t;
        t = torn_byte(row, 16'h0, 1'b0);
        tear_pe = ^t;
    endfunction
    always_comb begin
        pst_raddr = ROW_W'(row_q);
        bad_raddr = row_block;
        pst_we = 1'b0; pst_waddr = ROW_W'(row_q); pst_wdata = PS_ERASED;
        bad_we = 1'b0; bad_waddr = s_bad_block; bad_wdata = s_bad_set;
        eng_start_rd = 1'b0; eng_start_wr = 1'b0;
        case (ast_q)
            A_INIT: begin
                pst_we = (init_q < (ROW_W + 1)'(ROWS));
                pst_waddr = ROW_W'(init_q);
                bad_we = (init_q < (ROW_W + 1)'(BLOCKS));
                bad_waddr = BLK_W'(init_q);
                bad_wdata = 1'b0;
            end
            A_IDLE: begin
                bad_we = s_bad_valid && !busy_q;
            end
            A_LOOK2: begin
                if (op_q == OP_READ && !row_beyond && !(bad_q && row_page0) && pst_q == PS_PROG)
                    eng_start_rd = 1'b1;
                if (op_q == OP_PROG && !row_beyond && !bad_q) eng_start_wr = 1'b1;
            end
            A_CLR: begin
                pst_we = 1'b1;
                pst_waddr = ROW_W'(loop_row);
                pst_wdata = PS_ERASED;
            end
            A_TIMER: begin
                if (tmr_q == '0 && op_q == OP_PROG && !fail_pend_q && eng_idle) begin
                    pst_we = 1'b1;
                    pst_wdata = PS_PROG;
                end
            end
            A_TEAR2: begin
                if (!row_beyond && !bad_q && !tear_blk_q) begin
                    pst_we = 1'b1;
                    pst_wdata = PS_TORN;
                end
            end
            A_TEAR_LOOP: begin
                pst_we = 1'b1;
                pst_waddr = ROW_W'(loop_row);
                pst_wdata = tear_pe(loop_row) ? PS_TORN_PE : PS_TORN;
            end
            default: ;
        endcase
    end

    // page register ports: engine first, then the pins
    logic       din_we;
    logic [7:0] din_byte;
    always_comb begin
        lane_raddr = WADDR_W'(col_q >> LB);
        if (eng_q == E_WR) lane_raddr = WADDR_W'(f_k_q);
        lane_we = '0;
        lane_waddr = WADDR_W'(col_q >> LB);
        lane_wdata = {NB{din_byte}};
        if (eng_q == E_RD && s_dram_rdata_valid) begin
            lane_we = '1;
            lane_waddr = WADDR_W'(rsp_k_q);
            lane_wdata = s_dram_rdata_data;
        end else if (din_we) begin
            lane_we[col_q[LB-1:0]] = 1'b1;
        end
    end

    // ---- pin events (decoded here, applied in the clocked block below)
    wire        pins_on   = (pwr_q != PW_OFF) && cur.pw && (ast_q != A_INIT);
    wire [7:0]  c_byte    = prv.dq;
    wire        ev_pwroff = (ast_q != A_INIT) && !cur.pw && (pwr_q != PW_OFF);
    wire        ev_pwron  = (ast_q == A_IDLE) && cur.pw && (pwr_q == PW_OFF);
    wire        ev_cmd    = pins_on && we_rise && prv.cle && !prv.ale &&
                            !((pwr_q == PW_NEEDRST && c_byte != 8'hFF && c_byte != 8'h70) ||
                              (busy_q && c_byte != 8'h70 && c_byte != 8'hFF));
    wire        ev_addr   = pins_on && we_rise && prv.ale && !prv.cle &&
                            pwr_q == PW_ON && !busy_q && seq_on_q && addr_cnt_q < addr_need_q;
    wire        ev_din    = pins_on && we_rise && !prv.ale && !prv.cle &&
                            pwr_q == PW_ON && !busy_q && seq_on_q && seq_cmd_q == 8'h80 && addr_cnt_q == 3'd5;
    wire        addr_last = ev_addr && (addr_cnt_q + 1'b1 == addr_need_q);
    wire        ok30 = seq_on_q && seq_cmd_q == 8'h00 && addr_cnt_q == 3'd5;
    wire        okE0 = seq_on_q && seq_cmd_q == 8'h05 && addr_cnt_q == 3'd2;
    wire        ok10 = seq_on_q && seq_cmd_q == 8'h80 && addr_cnt_q == 3'd5;
    wire        okD0 = seq_on_q && seq_cmd_q == 8'h60 && addr_cnt_q == 3'd3;
    // a command that does not continue the open sequence abandons it
    wire        seq_cont = (seq_cmd_q == 8'h00 && c_byte == 8'h30) || (seq_cmd_q == 8'h05 && c_byte == 8'hE0) ||
                           (seq_cmd_q == 8'h80 && c_byte == 8'h10) || (seq_cmd_q == 8'h60 && c_byte == 8'hD0) ||
                           (seq_cmd_q == 8'h00 && addr_cnt_q == 3'd0);
    wire        ev_reset  = ev_cmd && c_byte == 8'hFF;
    // an FFh latch while the page states are cleared (A_INIT: pins not decoded otherwise)
    wire        init_ff   = (ast_q == A_INIT) && cur.pw && we_rise && prv.cle && !prv.ale && c_byte == 8'hFF;
    wire        intr      = ev_pwroff || ev_reset;     // an operation in flight is interrupted
    wire        in_tear   = (ast_q == A_TEAR) || (ast_q == A_TEARW) || (ast_q == A_TEAR2) || (ast_q == A_TEAR_LOOP);
    logic       sb;                                    // an array operation starts (R/B# low)
    op_e        sb_op;
    logic [TMR_W-1:0] sb_cyc;
    always_comb begin
        sb = 1'b0;
        sb_op = OP_NONE;
        sb_cyc = '0;
        if (ev_reset) begin
            sb = 1'b1; sb_op = OP_RESET; sb_cyc = TMR_W'(CYC_RST);
        end else if (ev_cmd && c_byte == 8'h30 && ok30) begin
            sb = 1'b1; sb_op = OP_READ; sb_cyc = TMR_W'(CYC_R);
        end else if (ev_cmd && c_byte == 8'h10 && ok10 && prv.wp_n) begin
            sb = 1'b1; sb_op = OP_PROG; sb_cyc = TMR_W'(CYC_PROG);
        end else if (ev_cmd && c_byte == 8'hD0 && okD0 && prv.wp_n) begin
            sb = 1'b1; sb_op = OP_ERASE; sb_cyc = TMR_W'(CYC_BERS);
        end else if (addr_last && seq_cmd_q == 8'hEC) begin
            sb = 1'b1; sb_op = OP_PARAM; sb_cyc = TMR_W'(CYC_R);
        end
    end

    // Power-on only: the row states and bad marks are cleared once, after the FPGA's configuration
    // (por_done_q's initial value, the bitstream's; no reset). A later `rst` (the system reset) is a
    // power cut of the die: the pin samples show power off while it lasts (an operation in flight
    // is torn as by `power_ok`), the DRAM engine stops (the port is reset with it), and the states
    // stay, so the arrays in the DRAM keep what was complete (README "Storage")
    // (the initial value is the point: an FPGA flop's configuration value, Yosys's init attribute)
    /* verilator lint_off PROCASSINIT */
    logic por_done_q = 1'b0;
    always_ff @(posedge clk) if (ast_q == A_IDLE) por_done_q <= 1'b1;
    /* verilator lint_on PROCASSINIT */

    always_ff @(posedge clk) begin
        if (rst && !por_done_q) begin
            pwr_q <= PW_OFF; mode_q <= OUT_NONE; op_q <= OP_NONE; src_q <= SRC_FF; ast_q <= A_INIT;
            busy_q <= 1'b0; fail_q <= 1'b0; read_valid_q <= 1'b0; resume_ok_q <= 1'b0; rb_q <= 1'b0;
            seq_on_q <= 1'b0; seq_cmd_q <= 8'h00; addr_cnt_q <= '0; addr_need_q <= '0;
            for (int i = 0; i < 5; i++) addr_q[i] <= 8'h00;
            col_q <= '0; col_rd_q <= '0; prog_lo_q <= '0; prog_hi_q <= '0; row_q <= '0;
            id20_q <= 1'b0; id_idx_q <= '0; pidx_q <= '0; tmr_q <= '0; fail_pend_q <= 1'b0;
            tear_blk_q <= 1'b0; tear_reset_q <= 1'b0; loop_q <= '0; init_q <= '0; fetch_q <= '0;
            out_en_q <= 1'b0; din_we <= 1'b0; din_byte <= 8'h00; init_rst_q <= 1'b0;
        end else begin
            din_we <= 1'b0;
            col_rd_q <= col_q;
            if (tmr_q != '0) tmr_q <= tmr_q - 1'b1;

            // ---- array operations
            case (ast_q)
                A_INIT: begin
                    init_q <= init_q + 1'b1;
                    if (init_ff) init_rst_q <= 1'b1;
                    if (init_q >= (ROW_W + 1)'(ROWS) && init_q >= (ROW_W + 1)'(BLOCKS)) begin
                        ast_q <= A_IDLE;
                        // the host's power-on RESET came while the states were cleared (the pins are
                        // not decoded then, R/B# low): it runs now, R/B# low until tRST has passed
                        if ((init_rst_q || init_ff) && cur.pw) begin
                            ast_q <= A_TIMER;
                            busy_q <= 1'b1;
                            op_q <= OP_RESET;
                            tmr_q <= TMR_W'(CYC_RST);
                            pwr_q <= PW_NEEDRST;
                        end
                    end
                end
                A_LOOK: ast_q <= A_LOOKW;                  // page state / bad mark read
                A_LOOKW: ast_q <= A_LOOK2;
                A_LOOK2: begin
                    case (op_q)
                        OP_READ: begin
                            if (row_beyond) src_q <= SRC_FF;
                            else if (bad_q && row_page0) src_q <= SRC_ZERO;
                            else case (pst_q)
                                PS_PROG:    src_q <= SRC_LANES;
                                PS_TORN:    src_q <= SRC_TORN;
                                PS_TORN_PE: src_q <= SRC_TORN_PE;
                                default:    src_q <= SRC_FF;
                            endcase
                            ast_q <= A_ENG;
                        end
                        OP_PROG: begin
                            fail_pend_q <= row_beyond || bad_q;
                            ast_q <= A_TIMER;
                        end
                        OP_ERASE: begin
                            fail_pend_q <= row_beyond || bad_q;
                            loop_q <= '0;
                            ast_q <= (row_beyond || bad_q) ? A_TIMER : A_CLR;
                        end
                        default: ast_q <= A_TIMER;
                    endcase
                end
                A_CLR: begin                                // ERASE: every page of the block erased
                    loop_q <= loop_q + 1'b1;
                    if (loop_q == PG_W'(PAGES_PER_BLOCK - 1)) ast_q <= A_TIMER;
                end
                A_ENG: if (eng_idle) begin                  // READ: page register loaded
                    fetch_q <= 2'd2;
                    ast_q <= A_FETCH;
                end
                A_FETCH: begin                              // first byte through the lanes
                    fetch_q <= fetch_q - 1'b1;
                    if (fetch_q == 2'd1) ast_q <= A_TIMER;
                end
                A_TIMER: if (tmr_q == '0 && eng_idle && busy_q) begin
                    case (op_q)
                        OP_READ: begin
                            read_valid_q <= 1'b1;
                            mode_q <= OUT_DATA;
                        end
                        OP_PARAM: begin
                            pidx_q <= '0;
                            mode_q <= OUT_PARAM;
                        end
                        OP_PROG, OP_ERASE: fail_q <= fail_pend_q;
                        OP_RESET: pwr_q <= PW_ON;
                        default: ;
                    endcase
                    busy_q <= 1'b0;
                    rb_q <= 1'b1;
                    op_q <= OP_NONE;
                    ast_q <= A_IDLE;
                end
                A_TEAR: ast_q <= A_TEARW;                   // bad mark read
                A_TEARW: ast_q <= A_TEAR2;
                A_TEAR2: begin
                    loop_q <= '0;
                    if (tear_blk_q && !row_beyond && !bad_q) ast_q <= A_TEAR_LOOP;
                    else ast_q <= tear_reset_q ? A_TIMER : A_IDLE;
                end
                A_TEAR_LOOP: begin
                    loop_q <= loop_q + 1'b1;
                    if (loop_q == PG_W'(PAGES_PER_BLOCK - 1)) ast_q <= tear_reset_q ? A_TIMER : A_IDLE;
                end
                default: ;
            endcase

            // ---- power
            if (ev_pwron) begin
                pwr_q <= PW_NEEDRST;                        // R/B# high, only RESET / READ STATUS
                rb_q <= 1'b1;
            end
            if (ev_pwroff) begin
                busy_q <= 1'b0;
                op_q <= OP_NONE;
                fail_q <= 1'b0;
                pwr_q <= PW_OFF;
                rb_q <= 1'b0;
                tmr_q <= '0;
            end

            // ---- commands
            if (ev_cmd && seq_on_q && c_byte != 8'hFF && !seq_cont) seq_on_q <= 1'b0;
            if (ev_cmd) begin
                case (c_byte)
                    8'hFF: fail_q <= 1'b0;
                    8'h70: begin
                        mode_q <= OUT_STATUS;
                        resume_ok_q <= read_valid_q && !busy_q;
                    end
                    8'h00: begin
                        seq_on_q <= 1'b1; seq_cmd_q <= c_byte; addr_cnt_q <= '0; addr_need_q <= 3'd5;
                        resume_ok_q <= resume_ok_q && read_valid_q;
                        mode_q <= OUT_NONE;
                    end
                    8'h90, 8'hEC: begin
                        seq_on_q <= 1'b1; seq_cmd_q <= c_byte; addr_cnt_q <= '0; addr_need_q <= 3'd1;
                        mode_q <= OUT_NONE;
                        if (c_byte == 8'hEC) read_valid_q <= 1'b0;
                    end
                    8'h05: begin
                        seq_on_q <= read_valid_q; seq_cmd_q <= c_byte; addr_cnt_q <= '0; addr_need_q <= 3'd2;
                        mode_q <= OUT_NONE;
                    end
                    8'h80: begin
                        seq_on_q <= 1'b1; seq_cmd_q <= c_byte; addr_cnt_q <= '0; addr_need_q <= 3'd5;
                        mode_q <= OUT_NONE;
                        read_valid_q <= 1'b0;
                        prog_lo_q <= '0; prog_hi_q <= '0;     // nothing written: all FFh
                    end
                    8'h60: begin
                        seq_on_q <= 1'b1; seq_cmd_q <= c_byte; addr_cnt_q <= '0; addr_need_q <= 3'd3;
                        mode_q <= OUT_NONE;
                        read_valid_q <= 1'b0;
                    end
                    8'h30: if (ok30) begin
                        seq_on_q <= 1'b0;
                        row_q <= addr_row;
                        col_q <= addr_col;
                        read_valid_q <= 1'b0;
                        ast_q <= A_LOOK;
                    end
                    8'hE0: if (okE0) begin
                        seq_on_q <= 1'b0;
                        col_q <= addr_col;
                        mode_q <= OUT_DATA;
                    end
                    8'h10: if (ok10) begin
                        seq_on_q <= 1'b0;
                        row_q <= addr_row;
                        if (!prv.wp_n) fail_q <= 1'b1;      // write protected: not executed
                        else begin
                            fail_q <= 1'b0;
                            ast_q <= A_LOOK;
                        end
                    end
                    8'hD0: if (okD0) begin
                        seq_on_q <= 1'b0;
                        row_q <= erase_row & ~24'(PAGES_PER_BLOCK - 1);
                        if (!prv.wp_n) fail_q <= 1'b1;
                        else begin
                            fail_q <= 1'b0;
                            ast_q <= A_LOOK;
                        end
                    end
                    default: ;                                // unsupported: ignored
                endcase
            end
            if (ev_addr) begin
                addr_q[addr_cnt_q] <= c_byte;
                addr_cnt_q <= addr_cnt_q + 1'b1;
                resume_ok_q <= 1'b0;
                if (addr_last) begin
                    case (seq_cmd_q)
                        8'h90: begin
                            seq_on_q <= 1'b0;
                            id20_q <= (c_byte == 8'h20);
                            id_idx_q <= '0;
                            mode_q <= OUT_ID;
                        end
                        8'hEC: begin
                            seq_on_q <= 1'b0;
                            ast_q <= A_TIMER;
                        end
                        8'h80: begin
                            col_q <= {1'b0, addr_q[1], addr_q[0]};
                            prog_lo_q <= {1'b0, addr_q[1], addr_q[0]};
                            prog_hi_q <= {1'b0, addr_q[1], addr_q[0]};
                        end
                        default: ;
                    endcase
                end
            end
            if (ev_din && col_q < 17'(ROW_BYTES)) begin
                din_we <= 1'b1;
                din_byte <= c_byte;
                prog_hi_q <= col_q + 1'b1;
            end
            // RE#: 00h after 70h resumes data output at the first read cycle
            if (pins_on && re_fall && resume_pend && pwr_q == PW_ON) begin
                seq_on_q <= 1'b0;
                mode_q <= OUT_DATA;
            end
            if (pins_on && re_rise && out_en_q) begin
                case (mode_eff)
                    OUT_DATA:  col_q <= (col_q == 17'h1FFFF) ? col_q : col_q + 1'b1;
                    OUT_ID:    id_idx_q <= (id_idx_q == 3'd7) ? id_idx_q : id_idx_q + 1'b1;
                    OUT_PARAM: pidx_q <= pidx_q + 1'b1;
                    default: ;
                endcase
            end
            // data input: the column advances after the lane write used it
            if (din_we) col_q <= col_q + 1'b1;

            // an interrupted PROGRAM / ERASE (power cut, RESET while busy) leaves a torn page / block
            if (intr) begin
                if (in_tear) ;                                  // a tear under way completes
                else if (busy_q && (op_q == OP_PROG || op_q == OP_ERASE)) begin
                    ast_q <= A_TEAR;
                    tear_blk_q <= (op_q == OP_ERASE);
                end else ast_q <= ev_reset ? A_TIMER : A_IDLE;
                tear_reset_q <= ev_reset;
                seq_on_q <= 1'b0;
                addr_cnt_q <= '0;
                addr_need_q <= '0;
                mode_q <= OUT_NONE;
                read_valid_q <= 1'b0;
                resume_ok_q <= 1'b0;
            end
            if (sb) begin
                busy_q <= 1'b1;
                rb_q <= 1'b0;
                op_q <= sb_op;
                tmr_q <= sb_cyc;
            end

            // what the next RE# low shows (registered; the pins gate it)
            out_en_q <= (pwr_q == PW_ON && (mode_eff == OUT_STATUS ||
                                            (!busy_q && (mode_eff == OUT_DATA || mode_eff == OUT_ID ||
                                                         mode_eff == OUT_PARAM)))) ||
                        (pwr_q == PW_NEEDRST && mode_q == OUT_STATUS);
        end
    end

`ifndef SYNTHESIS
    // the write queue never overflows, and DRAM read data only comes for reads the engine issued
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (32'(wf_cnt_q) <= WF_DEPTH) else $error("ats_nand_emu: write queue overflow");
        end
    end
`endif
endmodule

`resetall
