// SPDX-License-Identifier: Apache-2.0
// ats_nvme_pkg: the NVMe status codes of the front end (docs/host-interface.md §1.8) and the mapping
// of the device's §2 status codes to them, shared by ats_nvme_cmd (the core's completions) and
// ats_nvme_admin (the firmware's IDENTIFY / GET_LOG / FEATURE answers). The device codes are ats_host_pkg's.
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_nvme_pkg;
    /* verilator lint_off UNUSEDPARAM */            // each user takes the codes it needs
    // {SCT (3 bits), SC (8 bits)}; 0 = Successful Completion
    localparam logic [10:0] SC_OK         = 11'h000;
    localparam logic [10:0] SC_BAD_OP     = 11'h001;   // Invalid Command Opcode
    localparam logic [10:0] SC_BAD_FIELD  = 11'h002;   // Invalid Field in Command
    localparam logic [10:0] SC_XFER       = 11'h004;   // Data Transfer Error
    localparam logic [10:0] SC_INTERNAL   = 11'h006;   // Internal Error
    localparam logic [10:0] SC_BAD_NS     = 11'h00B;   // Invalid Namespace or Format
    localparam logic [10:0] SC_CMD_SEQ    = 11'h00C;   // Command Sequence Error
    localparam logic [10:0] SC_PRP_OFFSET = 11'h013;   // PRP Offset Invalid
    localparam logic [10:0] SC_LBA_RANGE  = 11'h080;   // LBA Out of Range
    localparam logic [10:0] SC_CAP_EXCEEDED = 11'h081; // Capacity Exceeded (the device's NO_SPACE)
    localparam logic [10:0] SC_AER_LIMIT  = 11'h105;   // Asynchronous Event Request Limit Exceeded
    localparam logic [10:0] SC_BAD_LOG    = 11'h109;   // Invalid Log Page
    localparam logic [10:0] SC_WRITE_FAULT = 11'h280;   // Write Fault
    localparam logic [10:0] SC_READ_ERROR  = 11'h281;   // Unrecovered Read Error
    localparam logic [10:0] SC_BAD_TXID    = 11'h702;   // vendor: the device's BAD_TXID (the reserved txid)
    // SWRITE's range-list statuses (docs/host-interface.md §1.11), vendor specific
    localparam logic [10:0] SC_SW_NONE     = 11'h720;   // zero ranges (NR = 0)
    localparam logic [10:0] SC_SW_MANY     = 11'h721;   // too many ranges (NR > 8)
    localparam logic [10:0] SC_SW_PAGES    = 11'h722;   // too many pages (NLB + 1 > sw_pages)
    localparam logic [10:0] SC_SW_EMPTY    = 11'h723;   // a range of 0 LBAs
    localparam logic [10:0] SC_SW_LENGTH   = 11'h724;   // the ranges' lengths do not add up to NLB + 1
    localparam logic [10:0] SC_SW_OVERLAP  = 11'h725;   // two ranges share an LBA
    // the vendor I/O opcodes of the static transactions (§1.11)
    localparam logic [7:0]  IO_SWRITE      = 8'h8D;
    localparam logic [7:0]  IO_SREAD       = 8'h8E;
    localparam int          SW_RANGES      = 8;         // ranges an SWRITE carries at most
    /* verilator lint_on UNUSEDPARAM */

    // the atomic write unit in LBAs (docs/host-interface.md "Atomic writes"): the largest power of two
    // of at most MDTS (64 KiB) and at most `tx_entries` (a transaction's pages): NAWUPF + 1
    function automatic int awu_blocks(input int page_bytes, input int tx_entries);
        int m;
        m = 65536 / page_bytes;
        if (tx_entries < m) m = tx_entries;
        awu_blocks = 1;
        for (int i = 0; i < 17; i++) if ((1 << i) <= m) awu_blocks = 1 << i;
    endfunction

    // the blocks an SWRITE may carry: what one txid holds (tx_entries), at most MDTS (64 KiB)
    function automatic int sw_pages(input int page_bytes, input int tx_entries);
        sw_pages = tx_entries < 65536 / page_bytes ? tx_entries : 65536 / page_bytes;
    endfunction

    // ats_nvme_prp's write-order counter `done` has reached the value `snap` (both mod 256; fewer
    // than 128 bursts are ever pending): the writes counted in `snap` were issued
    function automatic logic reached(input logic [7:0] done, input logic [7:0] snap);
        reached = 8'(done - snap) < 8'd128;
    endfunction

    // a device status (docs/architecture.md §2) as an NVMe status (docs/host-interface.md §1.8)
    function automatic logic [10:0] map_status(input logic [7:0] st);
        case (st)
            ats_host_pkg::STS_OK:           map_status = SC_OK;
            ats_host_pkg::STS_BAD_OP:       map_status = SC_BAD_OP;
            ats_host_pkg::STS_BAD_FIELD:    map_status = SC_BAD_FIELD;
            ats_host_pkg::STS_BAD_LBA:      map_status = SC_LBA_RANGE;
            ats_host_pkg::STS_MEDIA_ERROR:  map_status = SC_READ_ERROR;
            ats_host_pkg::STS_PROGRAM_FAIL: map_status = SC_WRITE_FAULT;
            ats_host_pkg::STS_NO_SPACE:     map_status = SC_CAP_EXCEEDED;
            ats_host_pkg::STS_BAD_TXID, ats_host_pkg::STS_TX_FULL, ats_host_pkg::STS_INDEX_FULL,
            ats_host_pkg::STS_TX_EMPTY, ats_host_pkg::STS_TABLE_FULL:
                map_status = {3'd7, st};                                // vendor specific
            default: map_status = SC_INTERNAL;
        endcase
    endfunction
endpackage

`resetall
