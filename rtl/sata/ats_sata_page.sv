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

    // the constant words of the IDENTIFY page, 16 bits per word (word n at bits 16n +: 16)
    function automatic logic [4095:0] mk_tmpl();
        logic [4095:0] t;
        t = '0;
        for (int i = 0; i < 10; i++) t[16 * (10 + i) +: 16] = SERIAL[159 - 16 * i -: 16];
        for (int i = 0; i < 4; i++)  t[16 * (23 + i) +: 16] = FR[63 - 16 * i -: 16];
        for (int i = 0; i < 20; i++) t[16 * (27 + i) +: 16] = MODEL[319 - 16 * i -: 16];
        t[16 * 0 +: 16]   = 16'h0040;
        t[16 * 47 +: 16]  = 16'h8001;
        t[16 * 49 +: 16]  = 16'h0300;
        t[16 * 53 +: 16]  = 16'h0006;
        t[16 * 75 +: 16]  = 16'd31;
        t[16 * 76 +: 16]  = 16'h010E;
        t[16 * 78 +: 16]  = 16'h0002;
        t[16 * 79 +: 16]  = 16'h0002;
        t[16 * 80 +: 16]  = 16'h0400;
        t[16 * 83 +: 16]  = 16'h7400;
        t[16 * 84 +: 16]  = 16'h4000;
        t[16 * 86 +: 16]  = 16'h3400;
        t[16 * 87 +: 16]  = 16'h4000;
        t[16 * 88 +: 16]  = 16'h007F;
        t[16 * 106 +: 16] = (PAGE_BYTES > 512) ? 16'h5000 : 16'h4000;
        t[16 * 117 +: 16] = SECTOR_WORDS[15:0];
        t[16 * 118 +: 16] = SECTOR_WORDS[31:16];
        t[16 * 129 +: 16] = 16'h5344;
        t[16 * 169 +: 16] = 16'h0001;
        t[16 * 217 +: 16] = 16'h0001;
        t[16 * 255 +: 16] = 16'h00A5;
        mk_tmpl = t;
    endfunction
    localparam logic [4095:0] TMPL = mk_tmpl();

    // the variable words: capacity (firmware word 8) in dwords 30 (words 60-61), 50-51 (100-103);
    // firmware word k (1..15) is dword 64 + k (words 130 + 2(k-1), 131 + 2(k-1))
    wire logic [47:0]  cap48 = {16'd0, fw_words[32 * 7 +: 32]};
    wire logic [31:0]  cap28 = (fw_words[32 * 7 +: 32] > 32'h0FFF_FFFF) ? 32'h0FFF_FFFF : fw_words[32 * 7 +: 32];
    wire logic [511:0] fwv   = {fw_words, 32'd0};
    logic [31:0] iddw;
    always_comb begin
        if (idx == 7'd30)                             iddw = cap28;
        else if (idx == 7'd50)                        iddw = cap48[31:0];
        else if (idx == 7'd51)                        iddw = {16'd0, cap48[47:32]};
        else if (idx[6:4] == 3'b100 && idx[3:0] != 4'd0) iddw = fwv[32 * idx[3:0] +: 32];
        else                                          iddw = TMPL[32 * idx +: 32];
    end

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

    assign dword = sel ? logdw : iddw;
endmodule

`resetall
