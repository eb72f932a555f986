// SPDX-License-Identifier: Apache-2.0
// ats_sata_cmd_pkg: names the parts of the SATA command layer (ats_sata_cmd_*) share: the kinds
// of non-queued command DEC hands to NQ, the vendor SET FEATURES subcommand, the non-queued tag,
// the front end's own device status for data lost on the link, and the ATA Status/Error of a
// device status (docs/host-interface.md §2.2a, §2.5). The host's opcodes and statuses come from ats_host_pkg. Yosys reads no `import` inside a
// module: users take local aliases by scoped name.
`resetall
`timescale 1ns / 1ps
`default_nettype none

package ats_sata_cmd_pkg;
    /* verilator lint_off UNUSEDPARAM */            // each part takes the names it needs

    // non-queued command kinds (DEC -> NQ, WDE, the window-write router); K_FEAT: SET FEATURES
    // 0x56, one §1 FEATURE (docs/host-interface.md §2.2a)
    localparam logic [3:0] K_WRITE = 4'd0, K_READ = 4'd1, K_FLUSH = 4'd2, K_ABORT = 4'd3,
                           K_RECOVER = 4'd4, K_DSM = 4'd5, K_IDENT = 4'd6, K_LOG = 4'd7,
                           K_FEAT = 4'd8;
    // SET FEATURES (0xEF): the vendor-specific subcommand (Features 7:0) of the device's settings
    localparam logic [7:0] SF_FEATURE = 8'h56;
    // §1 tag and window of the non-queued command
    localparam logic [5:0] NQTAG = 6'd32;
    // the front end's own device status (never from the core): a command's data were lost on the
    // link; reported to the host as ICRC|ABRT
    localparam logic [7:0] DEVST_ICRC = 8'hFF;

    /* verilator lint_on UNUSEDPARAM */

    // ATA {Error, Status} of a device status (§2.5)
    function automatic logic [15:0] ata_se(input logic [7:0] st);
        case (st)
            ats_host_pkg::STS_OK:           ata_se = {8'h00, 8'h40};
            ats_host_pkg::STS_BAD_LBA:      ata_se = {8'h10, 8'h41};
            ats_host_pkg::STS_MEDIA_ERROR:  ata_se = {8'h40, 8'h41};
            ats_host_pkg::STS_PROGRAM_FAIL: ata_se = {8'h04, 8'h61};
            ats_host_pkg::STS_NO_SPACE:     ata_se = {8'h04, 8'h41};   // ABRT (§2.5: no space, the write was not taken)
            DEVST_ICRC:                     ata_se = {8'h84, 8'h41};
            default:                        ata_se = {8'h04, 8'h41};
        endcase
    endfunction
endpackage

`resetall
