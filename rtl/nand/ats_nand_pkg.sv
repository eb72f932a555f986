// SPDX-License-Identifier: Apache-2.0
// ats_nand_pkg: the NAND page-request contract between the scheduler, the subsystem and the page
// controller (ats_nand_page and its halves): 3-bit page ops and 3-bit page completion statuses
// (rtl/nand/README_page.md, Interface), and the CRC-32C byte step of the page format. These are not
// the host command contract (rtl/common/ats_host_pkg.sv): a NAND status is mapped to a host
// status by the backend. Users refer to the names as ats_nand_pkg::NAME (scoped: Yosys does not
// take `import` inside a module everywhere).
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_nand_pkg;
    /* verilator lint_off UNUSEDPARAM */            // each user takes the names it needs

    localparam int NAND_OP_W = 3;
    // page ops (s_cmd_op of ats_nand_page; ops 6 and 7 only with DEBUG_OPS)
    localparam logic [NAND_OP_W-1:0] NAND_OP_READ  = 3'd0;
    localparam logic [NAND_OP_W-1:0] NAND_OP_PROG  = 3'd1;
    localparam logic [NAND_OP_W-1:0] NAND_OP_ERASE = 3'd2;
    localparam logic [NAND_OP_W-1:0] NAND_OP_RESET = 3'd3;
    localparam logic [NAND_OP_W-1:0] NAND_OP_RDID  = 3'd4;
    localparam logic [NAND_OP_W-1:0] NAND_OP_PARAM = 3'd5;
    localparam logic [NAND_OP_W-1:0] NAND_OP_PRAW  = 3'd6;
    localparam logic [NAND_OP_W-1:0] NAND_OP_RRAW  = 3'd7;

    localparam int NAND_ST_W = 3;
    // page completion statuses (m_cpl_status of ats_nand_page; 1 and 2 come from ats_nand_chan)
    localparam logic [NAND_ST_W-1:0] NAND_ST_OK     = 3'd0;
    localparam logic [NAND_ST_W-1:0] NAND_ST_PFAIL  = 3'd1;
    localparam logic [NAND_ST_W-1:0] NAND_ST_EFAIL  = 3'd2;
    localparam logic [NAND_ST_W-1:0] NAND_ST_UNCORR = 3'd3;
    localparam logic [NAND_ST_W-1:0] NAND_ST_BAD    = 3'd4;
    localparam logic [NAND_ST_W-1:0] NAND_ST_ERASED = 3'd5;

    /* verilator lint_on UNUSEDPARAM */

    // CRC-32C (Castagnoli, reflected): one byte step of the page CRC (data bytes, then spare 1..19)
    localparam logic [31:0] CRC32C_POLY = 32'h82F63B78;
    function automatic logic [31:0] crc32c_byte(input logic [31:0] c, input logic [7:0] b);
        logic [31:0] x;
        x = c ^ {24'b0, b};
        for (int i = 0; i < 8; i++) x = x[0] ? ((x >> 1) ^ CRC32C_POLY) : (x >> 1);
        crc32c_byte = x;
    endfunction
endpackage

`resetall
