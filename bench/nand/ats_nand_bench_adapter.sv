// SPDX-License-Identifier: Apache-2.0
// ats_nand_bench_adapter: benchmark B7 glue between one command stream of ats_nand_sched and one
// ats_nand_chan. After reset it RESETs every way of its channel (the dies power up needing a
// RESET) and only then takes scheduler commands. It turns {op, way, block, page} into the
// channel's {op, way, row, col = 0, len = page + spare}, generates PROGRAM data from a hash of
// (seed, channel, way, block, page, byte), checks READ data against the same hash, forwards the
// channel's completions and counts every anomaly (wrong byte, bad status, length/last mismatch).
// Simulation/benchmark only (not part of the controller). See bench/nand/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_bench_adapter #(
    parameter int WAYS        = 4,    // dies on the channel (scheduler way field is 2 bits)
    parameter int PPB_LOG2    = 6,    // log2(pages per block): row = {block, page[PPB_LOG2-1:0]}
    parameter int PAGE_BYTES  = 4096,
    parameter int SPARE_BYTES = 224
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic [2:0]  chan_id,
    input  wire logic [31:0] seed,
    output wire logic        init_done,

    // scheduler command stream (one channel's slice)
    input  wire logic        s_ccmd_valid,
    output wire logic        s_ccmd_ready,
    input  wire logic [7:0]  s_ccmd_tag,
    input  wire logic [1:0]  s_ccmd_op,
    input  wire logic [1:0]  s_ccmd_way,
    input  wire logic [11:0] s_ccmd_block,
    input  wire logic [7:0]  s_ccmd_page,

    // channel controller request, program data, read data, completion
    output wire logic        m_cmd_valid,
    input  wire logic        m_cmd_ready,
    output wire logic [2:0]  m_cmd_op,
    output wire logic [7:0]  m_cmd_tag,
    output wire logic [$clog2(WAYS > 1 ? WAYS : 2)-1:0] m_cmd_way,
    output wire logic [23:0] m_cmd_row,
    output wire logic [15:0] m_cmd_col,
    output wire logic [13:0] m_cmd_len,
    output wire logic        m_wdata_valid,
    input  wire logic        m_wdata_ready,
    output wire logic [7:0]  m_wdata_data,
    output wire logic        m_wdata_last,
    input  wire logic        s_rdata_valid,
    output wire logic        s_rdata_ready,
    input  wire logic [7:0]  s_rdata_data,
    input  wire logic [7:0]  s_rdata_tag,
    input  wire logic        s_rdata_last,
    input  wire logic        s_cpl_valid,
    output wire logic        s_cpl_ready,
    input  wire logic [7:0]  s_cpl_tag,
    input  wire logic [2:0]  s_cpl_status,

    // completions towards the merge (after the init phase)
    output wire logic        m_cpl_valid,
    input  wire logic        m_cpl_ready,
    output wire logic [7:0]  m_cpl_tag,
    output wire logic [2:0]  m_cpl_status,

    // counters (saturating at 2^32-1 is not needed in a benchmark run)
    output wire logic [31:0] err_data,     // read bytes that differ from the programmed pattern
    output wire logic [31:0] err_status,   // completions with a status other than OK
    output wire logic [31:0] err_proto,    // length/last/tag/address mismatches
    output wire logic [31:0] bytes_read,
    output wire logic [31:0] bytes_written
);
    localparam int WAY_W    = $clog2(WAYS > 1 ? WAYS : 2);
    localparam int ROW_BYTES = PAGE_BYTES + SPARE_BYTES;
    localparam int OFF_W    = $clog2(ROW_BYTES);
    localparam logic [2:0] OP_RESET = 3'd3, OP_PROG = 3'd1, OP_READ = 3'd0;

    if (WAYS < 1 || WAYS > 4) begin : g_check_ways
        $fatal(1, "ats_nand_bench_adapter: WAYS must be 1..4 (%m)");
    end
    if (PPB_LOG2 < 1 || PPB_LOG2 > 8 || 12 + PPB_LOG2 > 24) begin : g_check_ppb
        $fatal(1, "ats_nand_bench_adapter: PPB_LOG2 must be 1..8 (%m)");
    end
    if (ROW_BYTES > 16383) begin : g_check_len
        $fatal(1, "ats_nand_bench_adapter: page + spare must fit the 14-bit length (%m)");
    end

    // Data pattern: a multiplicative hash of (seed, chan, way, block, page, byte); a different
    // byte for every location, never constant FFh over a page.
    function automatic logic [7:0] pattern(input logic [2:0] c, input logic [1:0] w,
                                           input logic [11:0] b, input logic [7:0] p,
                                           input logic [OFF_W-1:0] o);
        logic [31:0] x;
        x = seed ^ {c, w, b, p, 7'd0} ^ (32'(o) * 32'h9E37_79B9);
        x = x ^ (x >> 16);
        x = x * 32'h7FEB_352D;
        x = x ^ (x >> 15);
        x = x * 32'h846C_A68B;
        x = x ^ (x >> 16);
        return x[7:0];
    endfunction

    // ------------------------------------------------------------------ init: RESET every way
    typedef enum logic [1:0] {S_RESET, S_WAIT, S_RUN} state_e;
    state_e           state_q, state_d;
    logic [WAY_W:0]   iway_q, iway_d;

    // ------------------------------------------------------------------ command path
    logic run;
    assign run          = (state_q == S_RUN);
    assign init_done    = run;
    assign m_cmd_valid  = run ? s_ccmd_valid : (state_q == S_RESET);
    assign s_ccmd_ready = run && m_cmd_ready;
    assign m_cmd_op     = run ? {1'b0, s_ccmd_op} : OP_RESET;
    assign m_cmd_tag    = run ? s_ccmd_tag : 8'd0;
    assign m_cmd_way    = run ? WAY_W'(s_ccmd_way) : WAY_W'(iway_q);
    assign m_cmd_row    = 24'({s_ccmd_block, s_ccmd_page[PPB_LOG2-1:0]});
    assign m_cmd_col    = 16'd0;
    assign m_cmd_len    = 14'(ROW_BYTES);

    logic cmd_acc;
    assign cmd_acc = run && s_ccmd_valid && m_cmd_ready;

    always_comb begin
        state_d = state_q;
        iway_d  = iway_q;
        unique case (state_q)
            S_RESET: if (m_cmd_ready) state_d = S_WAIT;
            S_WAIT: if (s_cpl_valid) begin
                iway_d  = iway_q + 1'b1;
                state_d = (32'(iway_q) + 1 >= WAYS) ? S_RUN : S_RESET;
            end
            default: ;
        endcase
    end

    // ------------------------------------------------------------------ program data
    // The channel takes PROGRAM data in request order; it may accept the next request (its request
    // stage) while the previous PROGRAM's data is still going out, so the PROGRAMs whose data is
    // owed wait in a small FIFO of {way, block, page}.
    localparam int PF_DEPTH = 4;
    logic [21:0]         pf_mem [PF_DEPTH];
    logic [1:0]          pf_wr_q, pf_rd_q;
    logic [2:0]          pf_cnt_q;
    logic [OFF_W-1:0]    woff_q;
    logic                wlast, pf_push, pf_pop;
    logic [21:0]         pf_head;
    assign pf_head       = pf_mem[pf_rd_q];
    assign wlast         = (32'(woff_q) == ROW_BYTES - 1);
    assign m_wdata_valid = (pf_cnt_q != '0);
    assign m_wdata_data  = pattern(chan_id, pf_head[21:20], pf_head[19:8], pf_head[7:0], woff_q);
    assign m_wdata_last  = wlast;

    // ------------------------------------------------------------------ read data check
    // address of every READ in flight, by tag (written when the channel accepts the request)
    logic [21:0]         rd_addr_q [256];    // {way, block, page}
    logic [OFF_W-1:0]    roff_q;
    logic [7:0]          rtag_q;             // tag of the page being received (after byte 0)
    logic [21:0]         raddr;
    logic [7:0]          rexp;
    assign raddr         = rd_addr_q[s_rdata_tag];
    assign rexp          = pattern(chan_id, raddr[21:20], raddr[19:8], raddr[7:0], roff_q);
    assign s_rdata_ready = 1'b1;

    // ------------------------------------------------------------------ completions
    assign s_cpl_ready  = run ? m_cpl_ready : (state_q == S_WAIT);
    assign m_cpl_valid  = run && s_cpl_valid;
    assign m_cpl_tag    = s_cpl_tag;
    assign m_cpl_status = s_cpl_status;

    logic [31:0] err_data_q, err_status_q, err_proto_q, bytes_read_q, bytes_written_q;
    assign err_data      = err_data_q;
    assign err_status    = err_status_q;
    assign err_proto     = err_proto_q;
    assign bytes_read    = bytes_read_q;
    assign bytes_written = bytes_written_q;

    assign pf_push = cmd_acc && s_ccmd_op == OP_PROG[1:0];
    assign pf_pop  = m_wdata_valid && m_wdata_ready && wlast;
    // anomalies (one count per cycle at most): program FIFO overflow (the channel took more
    // PROGRAMs than it can owe data for), page beyond the block, read data tag changing inside a
    // page, `last` not on the page's final byte
    logic proto_bad;
    assign proto_bad = (pf_push && !pf_pop && pf_cnt_q == 3'(PF_DEPTH)) ||
                       (cmd_acc && 32'(s_ccmd_page) >= (1 << PPB_LOG2)) ||
                       (s_rdata_valid && roff_q != '0 && s_rdata_tag != rtag_q) ||
                       (s_rdata_valid && s_rdata_last != (32'(roff_q) == ROW_BYTES - 1));

    always_ff @(posedge clk) begin
        state_q <= state_d;
        iway_q  <= iway_d;
        // program data FIFO
        if (pf_push) begin
            pf_mem[pf_wr_q] <= {s_ccmd_way, s_ccmd_block, s_ccmd_page};
            pf_wr_q <= pf_wr_q + 1'b1;
        end
        if (m_wdata_valid && m_wdata_ready) begin
            bytes_written_q <= bytes_written_q + 1'b1;
            woff_q <= wlast ? '0 : woff_q + 1'b1;
        end
        if (pf_pop) pf_rd_q <= pf_rd_q + 1'b1;
        pf_cnt_q <= pf_cnt_q + 3'(pf_push) - 3'(pf_pop);
        if (cmd_acc && s_ccmd_op == OP_READ[1:0]) rd_addr_q[s_ccmd_tag] <= {s_ccmd_way, s_ccmd_block, s_ccmd_page};
        if (proto_bad) err_proto_q <= err_proto_q + 1'b1;
        // read data: byte roff_q of the page tagged s_rdata_tag
        if (s_rdata_valid) begin
            bytes_read_q <= bytes_read_q + 1'b1;
            if (s_rdata_data != rexp) begin
                err_data_q <= err_data_q + 1'b1;
                if (err_data_q < 8)   // the first few, for diagnosis
                    $display("ats_nand_bench_adapter chan %0d: tag %0d way %0d block %0d page %0d byte %0d: read %02h, expected %02h",
                             chan_id, s_rdata_tag, raddr[21:20], raddr[19:8], raddr[7:0], roff_q, s_rdata_data, rexp);
            end
            rtag_q <= s_rdata_tag;
            roff_q <= s_rdata_last ? '0 : roff_q + 1'b1;
        end
        if (s_cpl_valid && s_cpl_ready && s_cpl_status != 3'd0) err_status_q <= err_status_q + 1'b1;
        if (rst) begin
            state_q <= S_RESET;
            iway_q <= '0;
            pf_wr_q <= '0;
            pf_rd_q <= '0;
            pf_cnt_q <= '0;
            woff_q <= '0;
            roff_q <= '0;
            rtag_q <= '0;
            err_data_q <= '0;
            err_status_q <= '0;
            err_proto_q <= '0;
            bytes_read_q <= '0;
            bytes_written_q <= '0;
        end
    end
endmodule

`resetall
