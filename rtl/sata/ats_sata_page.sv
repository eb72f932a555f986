// SPDX-License-Identifier: Apache-2.0
// ats_sata_page: the 512-byte pages the SATA front end sends by PIO (docs/host-interface.md §2.4,
// §2.5): the IDENTIFY DEVICE page and the NCQ Command Error log (log 0x10). Combinational: dword
// `idx` (0..127, bytes 4*idx .. 4*idx+3, little endian) of the page chosen by `sel`. Byte 511 (the
// checksum) is returned as 0: the sender puts the two's complement of the sum of the other 511
// bytes there.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_page #(
    parameter int          PAGE_BYTES = 4096,           // logical sector (512 or 4096)
    parameter logic [63:0] FR         = "0000abcd"      // firmware revision, 8 ATA characters
) (
    input  wire logic         sel,          // 0 IDENTIFY DEVICE, 1 NCQ Command Error log
    input  wire logic [6:0]   idx,
    output      logic [31:0]  dword,
    // IDENTIFY: the firmware's IDENTIFY words 1..15 (docs/architecture.md §1.1), word k at 32k-1 -: 32
    input  wire logic [15*32-1:0] fw_words,
    // NCQ Command Error log entry (all zeros when none)
    input  wire logic         log_valid,
    input  wire logic [4:0]   log_tag,
    input  wire logic [7:0]   log_status,
    input  wire logic [7:0]   log_error,
    input  wire logic [47:0]  log_lba,
    input  wire logic [7:0]   log_device,
    input  wire logic [15:0]  log_count,
    input  wire logic [7:0]   log_devstatus
);
    localparam logic [159:0] SERIAL = "ATOMSSD-SIM-0001    ";
    localparam logic [319:0] MODEL  = "atomssd transactional SSD               ";
    localparam logic [31:0]  SECTOR_WORDS = 32'(PAGE_BYTES / 2);

    if (PAGE_BYTES != 512 && PAGE_BYTES != 4096) begin : g_check_page
        $fatal(1, "ats_sata_page: PAGE_BYTES must be 512 or 4096 (%m)");
    end

    // capacity: firmware word 8 (num_lbas), bits 32*7 +: 32 of fw_words
    wire logic [47:0] cap48 = {16'd0, fw_words[32 * 7 +: 32]};
    wire logic [31:0] cap28 = (cap48 > 48'h0FFF_FFFF) ? 32'h0FFF_FFFF : cap48[31:0];

    // IDENTIFY word n (the firmware's halves: word 130 + h is bits 16h +: 16 of fw_words)
    function automatic logic [15:0] idw(input logic [7:0] n, input logic [15*32-1:0] fwv,
                                        input logic [47:0] c48, input logic [31:0] c28);
        logic [15:0] w;
        w = 16'h0000;
        if (n >= 8'd10 && n <= 8'd19)       w = SERIAL[159 - 16 * (n - 8'd10) -: 16];
        else if (n >= 8'd23 && n <= 8'd26)  w = FR[63 - 16 * (n - 8'd23) -: 16];
        else if (n >= 8'd27 && n <= 8'd46)  w = MODEL[319 - 16 * (n - 8'd27) -: 16];
        else if (n >= 8'd130 && n <= 8'd159) w = fwv[16 * (n - 8'd130) +: 16];
        else begin
            case (n)
                8'd0:   w = 16'h0040;
                8'd47:  w = 16'h8001;
                8'd49:  w = 16'h0300;
                8'd53:  w = 16'h0006;
                8'd60:  w = c28[15:0];
                8'd61:  w = c28[31:16];
                8'd75:  w = 16'd31;
                8'd76:  w = 16'h010E;
                8'd78:  w = 16'h0002;
                8'd79:  w = 16'h0002;
                8'd80:  w = 16'h0400;
                8'd83:  w = 16'h7400;
                8'd84:  w = 16'h4000;
                8'd86:  w = 16'h3400;
                8'd87:  w = 16'h4000;
                8'd88:  w = 16'h007F;
                8'd100: w = c48[15:0];
                8'd101: w = c48[31:16];
                8'd102: w = c48[47:32];
                8'd106: w = (PAGE_BYTES > 512) ? 16'h5000 : 16'h4000;
                8'd117: w = SECTOR_WORDS[15:0];
                8'd118: w = SECTOR_WORDS[31:16];
                8'd129: w = 16'h5344;
                8'd169: w = 16'h0001;
                8'd217: w = 16'h0001;
                8'd255: w = 16'h00A5;
                default: w = 16'h0000;
            endcase
        end
        idw = w;
    endfunction

    logic [31:0] logdw;
    always_comb begin
        logdw = 32'd0;
        if (log_valid) begin
            case (idx)
                7'd0:  logdw = {log_error, log_status, 8'd0, 3'd0, log_tag};
                7'd1:  logdw = {log_device, log_lba[23:0]};
                7'd2:  logdw = {8'd0, log_lba[47:24]};
                7'd3:  logdw = {16'd0, log_count};
                7'd64: logdw = {24'd0, log_devstatus};
                default: logdw = 32'd0;
            endcase
        end
    end

    assign dword = sel ? logdw : {idw({idx, 1'b1}, fw_words, cap48, cap28), idw({idx, 1'b0}, fw_words, cap48, cap28)};
endmodule

`resetall
