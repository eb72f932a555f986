// SPDX-License-Identifier: Apache-2.0
// ats_backend_vcount: the backend's valid-page counts (rtl/backend/README.md "Valid-page counts").
// One 9-bit counter per block (NDIE x BLOCKS, LUT RAM), cleared by an init pass after reset. One
// event a cycle: the completion FSM's (+1 the new page, -1 the page a MAP_WRITE / UNMAP
// superseded) first, else an `m_inval` page of the remap engine (-1). An event is registered (its
// index computed from the PPN), then applied the next cycle as a read-modify-write, so a count
// shows an event at the earliest two cycles after it. Read port `vc_addr` -> `vc_data`, latency 1.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_vcount #(
    parameter int NDIE            = 8,     // dies (power of two)
    parameter int BLOCKS          = 128,   // blocks per die, power of two
    parameter int PAGES_PER_BLOCK = 64,    // power of two
    parameter int PPN_W           = 16     // PPN: {block, page, die}
) (
    input  wire logic             clk,
    input  wire logic             rst,            // synchronous, active high
    // the completion FSM's event (has priority; one a cycle)
    input  wire logic             cpl_ev,
    input  wire logic             cpl_inc,        // 1: +1 (new page), 0: -1 (superseded page)
    input  wire logic [PPN_W-1:0] cpl_ppn,
    // pages the remap engine invalidated (commit, abort): -1 each
    input  wire logic             s_inval_valid,
    output wire logic             s_inval_ready,
    input  wire logic [PPN_W-1:0] s_inval_ppn,
    // read port, latency 1
    input  wire logic [14:0]      vc_addr,        // die * BLOCKS + block
    output logic      [8:0]       vc_data,
    output wire logic             init_busy       // the clear pass after reset is running
);
    localparam int VC_W     = $clog2(NDIE * BLOCKS) > 0 ? $clog2(NDIE * BLOCKS) : 1;
    localparam int PG_W     = $clog2(PAGES_PER_BLOCK);
    localparam int DIE_PACK = (NDIE > 1) ? $clog2(NDIE) : 0;   // die bits in a PPN

    logic [8:0]         vc_mem [NDIE * BLOCKS];
    logic               vc_ev;
    logic               vc_inc;
    logic [PPN_W-1:0]   vc_ppn;
    assign s_inval_ready = !cpl_ev && !rst;
    always_comb begin
        vc_ev  = cpl_ev || s_inval_valid;
        vc_inc = cpl_ev ? cpl_inc : 1'b0;
        vc_ppn = cpl_ev ? cpl_ppn : s_inval_ppn;
    end
    function automatic logic [31:0] vc_index(input logic [PPN_W-1:0] p);
        logic [31:0] die, blk;
        die = (NDIE > 1) ? (32'(p) & 32'(NDIE - 1)) : 32'd0;
        blk = (32'(p) >> (DIE_PACK + PG_W)) & 32'(BLOCKS - 1);
        vc_index = die * 32'(BLOCKS) + blk;
    endfunction
    // valid counts start at 0: cleared by an init pass after reset (NDIE x BLOCKS cycles, long
    // before the first program can complete: the NAND subsystem's power-on RESET takes longer)
    logic [15:0]        vc_init_q;
    assign init_busy = 32'(vc_init_q) < NDIE * BLOCKS;
    always_ff @(posedge clk) begin
        if (rst) vc_init_q <= 16'd0;
        else if (init_busy) vc_init_q <= vc_init_q + 16'd1;
    end
    // The event is registered first (index computed from the PPN), then applied the next cycle as
    // a read-modify-write: the remap response and s_inval no longer reach the LUT-RAM's increment in
    // the same cycle (that was the core's critical path). Events stay one a cycle and are applied in
    // order, each reading the counts every earlier event wrote.
    logic               vc_ev_q, vc_inc_q;
    logic [VC_W-1:0]    vc_idx_q;
    always_ff @(posedge clk) begin
        if (rst) begin
            vc_ev_q <= 1'b0;
        end else begin
            vc_ev_q <= vc_ev;
        end
        vc_inc_q <= vc_inc;
        vc_idx_q <= VC_W'(vc_index(vc_ppn));
    end
    always_ff @(posedge clk) begin
        if (!rst && init_busy) begin
            vc_mem[VC_W'(vc_init_q)] <= 9'd0;
        end else if (!rst && vc_ev_q) begin
            if (vc_inc_q) vc_mem[vc_idx_q] <= vc_mem[vc_idx_q] + 9'd1;
            else          vc_mem[vc_idx_q] <= vc_mem[vc_idx_q] - 9'd1;
        end
        vc_data <= (32'(vc_addr) < NDIE * BLOCKS) ? vc_mem[VC_W'(vc_addr)] : 9'd0;
    end
endmodule

`resetall
