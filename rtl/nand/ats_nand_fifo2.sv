// SPDX-License-Identifier: Apache-2.0
// ats_nand_fifo2: a 2-entry stream FIFO, two registers with write / read pointers and a count.
// s_ready (= not full) and m_valid (= not empty) are decodes of the count register, m_data is the
// entry at the read pointer (meaningful only while m_valid): neither side sees a combinational path
// from the other, and an entry's write enable is a decode of registers only (never s_valid or
// m_ready). Full throughput (a push and a pop in
// the same cycle when one entry is held). Used by ats_nand_page_wr for its s_wdata words, the
// encoder's input bytes and the page-image bytes to the chan (rtl/nand/README_page.md).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_nand_fifo2 #(
    parameter int W = 8                 // payload bits (data and any side bits, e.g. `last`)
) (
    input  wire logic         clk,
    input  wire logic         rst,      // synchronous, active high

    input  wire logic         s_valid,
    output wire logic         s_ready,  // registered: not full
    input  wire logic [W-1:0] s_data,

    output wire logic         m_valid,  // registered: not empty
    input  wire logic         m_ready,
    output wire logic [W-1:0] m_data    // the entry at the read pointer
);
    // (registers, not LUT RAM: Yosys would put even two entries in a 16-deep TRELLIS_DPR16X4, whose
    // write port (WAD / WD / WRE) placement tied the write path's worst paths to the LUT RAM)
    (* ram_style = "logic" *) logic [W-1:0] q [2];
    logic [1:0]   n_q;
    logic         wp_q, rp_q;
    logic         push, pop;
    assign s_ready = (n_q != 2'd2);
    assign m_valid = (n_q != 2'd0);
    assign m_data  = q[rp_q];
    assign push    = s_valid && s_ready;
    assign pop     = m_valid && m_ready;
    always_ff @(posedge clk) begin
        // the free entry at the write pointer is written in every cycle the FIFO is not full, so an
        // entry's enable is a decode of registers (n_q, wp_q) and not of s_valid (Fmax: the
        // page-image FIFO's entry enables were at the end of the write half's output-stage
        // paths); the pointer moves only on a push, so a cycle without one leaves nothing held
        // changed, and m_data is read only while m_valid
        if (s_ready) q[wp_q] <= s_data;
        if (push) wp_q <= !wp_q;
        if (pop) rp_q <= !rp_q;
        n_q <= n_q + {1'b0, push} - {1'b0, pop};
        if (rst) begin
            n_q <= '0; wp_q <= 1'b0; rp_q <= 1'b0;
        end
    end
endmodule

`resetall
