// SPDX-License-Identifier: Apache-2.0
// ats_host_pkg: the host command contract, the one source of its numbers (docs/architecture.md
// §1 command descriptor and opcodes, §2 completion and device status codes). Every SystemVerilog
// block that decodes an opcode or produces a host status imports it (`import ats_host_pkg::*;`
// inside the module, or scoped names `ats_host_pkg::OP_READ`); tools/contract.py generates the C
// header build/gen/include/ats_host.h from this file, and tests/system/test_contract.py compares
// it with every other copy (Python models, host library, docs tables). Change a number here only.
// The parser of tools/contract.py reads the lines `localparam <type> NAME = <W>'<b><digits>;`
// (one per line) of this file: keep that form.
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_host_pkg;
    /* verilator lint_off UNUSEDPARAM */            // each user takes the names it needs

    // descriptor field widths (§1) and completion field widths (§2)
    localparam int OP_W     = 4;    // opcode
    localparam int TAG_W    = 8;    // host command identifier
    localparam int LBA_W    = 48;   // first logical block
    localparam int NLB_W    = 16;   // number of blocks - 1
    localparam int TXID_W   = 6;    // transaction, 1..NUM_TX; 0 = none
    localparam int FLAGS_W  = 4;    // FLAG_* bits
    localparam int ATTR_W   = 2;    // ATTR_*
    localparam int PRIO_W   = 2;    // priority class, 0 normal .. 3 highest
    localparam int DPTR_W   = 32;   // data buffer address
    localparam int AUX_W    = 32;   // DIFFWRITE offset/length, RFLUSH range list address
    localparam int STATUS_W = 8;    // STS_*
    localparam int RESULT_W = 32;   // op-specific result

    // opcodes (§1); 12..15 are reserved and answered STS_BAD_OP
    localparam logic [OP_W-1:0] OP_READ      = 4'd0;
    localparam logic [OP_W-1:0] OP_WRITE     = 4'd1;
    localparam logic [OP_W-1:0] OP_DIFFWRITE = 4'd2;
    localparam logic [OP_W-1:0] OP_TX_BEGIN  = 4'd3;
    localparam logic [OP_W-1:0] OP_TX_COMMIT = 4'd4;
    localparam logic [OP_W-1:0] OP_TX_ABORT  = 4'd5;
    localparam logic [OP_W-1:0] OP_FLUSH     = 4'd6;
    localparam logic [OP_W-1:0] OP_RFLUSH    = 4'd7;
    localparam logic [OP_W-1:0] OP_TRIM      = 4'd8;
    localparam logic [OP_W-1:0] OP_IDENTIFY  = 4'd9;
    localparam logic [OP_W-1:0] OP_GET_LOG   = 4'd10;
    localparam logic [OP_W-1:0] OP_FEATURE   = 4'd11;   // get / set a device setting (§1.2)
    localparam logic [OP_W-1:0] OP_LAST      = 4'd11;   // highest defined opcode

    // device features (§1.2): FEATURE's `lba`, the same number as the NVMe vendor Feature
    // Identifier (docs/host-interface.md §1.6)
    localparam logic [7:0] FEAT_SEAL_TIME = 8'hC0;   // the S-Log's seal time in clock cycles

    // tags with a meaning (§1.1): a GET_LOG with this tag takes a checkpoint first (the NVMe front
    // end's clean shutdown)
    localparam logic [TAG_W-1:0] TAG_SHUTDOWN = 8'hFF;

    // flag bit indices in `flags` (§1); bit 3 is reserved (0)
    localparam int FLAG_FUA     = 0;
    localparam int FLAG_BARRIER = 1;
    localparam int FLAG_COMMIT  = 2;
    localparam int FLAG_RSVD    = 3;

    // command attributes (§1)
    localparam logic [ATTR_W-1:0] ATTR_SIMPLE  = 2'd0;
    localparam logic [ATTR_W-1:0] ATTR_ORDERED = 2'd1;
    localparam logic [ATTR_W-1:0] ATTR_HEAD    = 2'd2;   // HEAD_OF_QUEUE
    localparam logic [ATTR_W-1:0] ATTR_RSVD    = 2'd3;   // reserved: STS_BAD_FIELD

    // device status codes (§2); the remap engine's codes 0..6 are the first seven, same numbers
    localparam logic [STATUS_W-1:0] STS_OK           = 8'h00;
    localparam logic [STATUS_W-1:0] STS_BAD_OP       = 8'h01;
    localparam logic [STATUS_W-1:0] STS_BAD_TXID     = 8'h02;
    localparam logic [STATUS_W-1:0] STS_BAD_LBA      = 8'h03;
    localparam logic [STATUS_W-1:0] STS_TX_FULL      = 8'h04;
    localparam logic [STATUS_W-1:0] STS_INDEX_FULL   = 8'h05;
    localparam logic [STATUS_W-1:0] STS_TX_EMPTY     = 8'h06;
    localparam logic [STATUS_W-1:0] STS_BAD_FIELD    = 8'h07;
    localparam logic [STATUS_W-1:0] STS_TABLE_FULL   = 8'h08;
    localparam logic [STATUS_W-1:0] STS_MEDIA_ERROR  = 8'h10;
    localparam logic [STATUS_W-1:0] STS_PROGRAM_FAIL = 8'h11;
    localparam logic [STATUS_W-1:0] STS_ABORTED      = 8'h12;
    localparam logic [STATUS_W-1:0] STS_NO_SPACE     = 8'h13;

    // a command the command queue rejects completes with result {REJ_MARK, 20'h0, reason}
    // (§2; rtl/cmdq/README.md "Validation", reasons in precedence order)
    localparam logic [7:0] REJ_MARK        = 8'hCE;
    localparam logic [3:0] REJ_BAD_OP      = 4'd1;   // op 12..15               (STS_BAD_OP)
    localparam logic [3:0] REJ_RSVD        = 4'd2;   // attr 3 or flags[3]      (STS_BAD_FIELD)
    localparam logic [3:0] REJ_FLAG        = 4'd3;   // a flag the op forbids   (STS_BAD_FIELD)
    localparam logic [3:0] REJ_TXID_RANGE  = 4'd4;   // txid > NUM_TX           (STS_BAD_TXID)
    localparam logic [3:0] REJ_TXID_NEEDED = 4'd5;   // txid 0 where one is needed (STS_BAD_TXID)
    localparam logic [3:0] REJ_LBA         = 4'd6;   // lba + nlb >= NUM_LBA    (STS_BAD_LBA)
    localparam logic [3:0] REJ_DIFF        = 4'd7;   // bad DIFFWRITE range     (STS_BAD_FIELD)
    localparam logic [3:0] REJ_RFLUSH      = 4'd8;   // more than 8 ranges      (STS_BAD_FIELD)
    localparam logic [3:0] REJ_DUP_TAG     = 4'd9;   // tag already in the table (STS_BAD_FIELD)

    /* verilator lint_on UNUSEDPARAM */
endpackage

`resetall
