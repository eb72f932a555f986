// SPDX-License-Identifier: Apache-2.0
// ats_ram_sdp: simple dual-port RAM, one write port and one read port on one clock, read latency 2
// (address in cycle r, data in cycle r+2), sized to fit one ECP5 DP16KD (16K x 1, 8K x 2, 4K x 4,
// 2K x 9 or 1K x 18). With ATS_ECP5_BRAM defined (the ECP5 synthesis flow) it instantiates the
// DP16KD so that the second read stage is the block RAM's own output register (REGMODE_B OUTREG):
// Yosys never infers that register, and without it a read costs 5.8 ns of clock-to-out at speed
// grade 6. The pin convention (address left-aligned by width, x18 byte enables on ADA1..0) is the one
// Yosys's own DP16KD mapping uses. Otherwise the RAM is behavioural (simulation, other FPGAs).
// A read of an address written in the same cycle returns unspecified data: users forward writes.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_ram_sdp #(
    parameter int WIDTH = 18,   // data bits: at most 18 with ATS_ECP5_BRAM (rounded up to 1/2/4/9/18)
    parameter int DEPTH = 1024  // words; WIDTH x DEPTH must fit one DP16KD shape with ATS_ECP5_BRAM
) (
    input  wire logic                     clk,
    input  wire logic                     wr_en,
    input  wire logic [$clog2(DEPTH)-1:0] wr_addr,
    input  wire logic [WIDTH-1:0]         wr_data,
    input  wire logic [$clog2(DEPTH)-1:0] rd_addr,
    output wire logic [WIDTH-1:0]         rd_data
);
    if (DEPTH < 2) begin : g_check_depth
        $fatal(1, "ats_ram_sdp: DEPTH must be at least 2 (%m)");
    end

`ifdef ATS_ECP5_BRAM
    // address bits the DP16KD ignores at this width
    localparam int AW = $clog2(DEPTH);
    // the DP16KD port width used, and the address bits it ignores at that width
    localparam int PW = (WIDTH <= 1) ? 1 : (WIDTH <= 2) ? 2 : (WIDTH <= 4) ? 4 : (WIDTH <= 9) ? 9 : 18;
    localparam int SHIFT = (PW == 1) ? 0 : (PW == 2) ? 1 : (PW == 4) ? 2 : (PW == 9) ? 3 : 4;
    if (WIDTH > 18) begin : g_check_width
        $fatal(1, "ats_ram_sdp: WIDTH must be at most 18 for one DP16KD (%m)");
    end
    if (AW + SHIFT > 14) begin : g_check_size
        $fatal(1, "ats_ram_sdp: WIDTH x DEPTH exceeds one DP16KD (%m)");
    end

    logic [13:0] wa14, ra14, ada, adb;
    logic [17:0] dia, dob;
    assign wa14 = 14'(wr_addr);
    assign ra14 = 14'(rd_addr);
    assign ada = (wa14 << SHIFT) | ((PW == 18) ? {12'b0, wr_en, wr_en} : 14'b0);
    assign adb = ra14 << SHIFT;
    assign dia = 18'(wr_data);
    assign rd_data = dob[WIDTH-1:0];

    DP16KD #(
        .DATA_WIDTH_A(PW),
        .DATA_WIDTH_B(PW),
        .REGMODE_A("NOREG"),
        .REGMODE_B("OUTREG"),
        .RESETMODE("SYNC"),
        .ASYNC_RESET_RELEASE("SYNC"),
        .CSDECODE_A("0b000"),
        .CSDECODE_B("0b000"),
        .WRITEMODE_A("NORMAL"),
        .WRITEMODE_B("NORMAL"),
        .CLKAMUX("CLKA"),
        .CLKBMUX("CLKB"),
        .GSR("DISABLED")
    ) u_bram (
        .CLKA(clk),
        .CEA(1'b1),
        .OCEA(1'b1),
        .WEA(wr_en),
        .RSTA(1'b0),
        .CSA0(1'b0),
        .CSA1(1'b0),
        .CSA2(1'b0),
        .ADA0(ada[0]),
        .ADA1(ada[1]),
        .ADA2(ada[2]),
        .ADA3(ada[3]),
        .ADA4(ada[4]),
        .ADA5(ada[5]),
        .ADA6(ada[6]),
        .ADA7(ada[7]),
        .ADA8(ada[8]),
        .ADA9(ada[9]),
        .ADA10(ada[10]),
        .ADA11(ada[11]),
        .ADA12(ada[12]),
        .ADA13(ada[13]),
        .DIA0(dia[0]),
        .DIA1(dia[1]),
        .DIA2(dia[2]),
        .DIA3(dia[3]),
        .DIA4(dia[4]),
        .DIA5(dia[5]),
        .DIA6(dia[6]),
        .DIA7(dia[7]),
        .DIA8(dia[8]),
        .DIA9(dia[9]),
        .DIA10(dia[10]),
        .DIA11(dia[11]),
        .DIA12(dia[12]),
        .DIA13(dia[13]),
        .DIA14(dia[14]),
        .DIA15(dia[15]),
        .DIA16(dia[16]),
        .DIA17(dia[17]),
        .DOA0(),
        .DOA1(),
        .DOA2(),
        .DOA3(),
        .DOA4(),
        .DOA5(),
        .DOA6(),
        .DOA7(),
        .DOA8(),
        .DOA9(),
        .DOA10(),
        .DOA11(),
        .DOA12(),
        .DOA13(),
        .DOA14(),
        .DOA15(),
        .DOA16(),
        .DOA17(),
        .CLKB(clk),
        .CEB(1'b1),
        .OCEB(1'b1),
        .WEB(1'b0),
        .RSTB(1'b0),
        .CSB0(1'b0),
        .CSB1(1'b0),
        .CSB2(1'b0),
        .ADB0(adb[0]),
        .ADB1(adb[1]),
        .ADB2(adb[2]),
        .ADB3(adb[3]),
        .ADB4(adb[4]),
        .ADB5(adb[5]),
        .ADB6(adb[6]),
        .ADB7(adb[7]),
        .ADB8(adb[8]),
        .ADB9(adb[9]),
        .ADB10(adb[10]),
        .ADB11(adb[11]),
        .ADB12(adb[12]),
        .ADB13(adb[13]),
        .DIB0(1'b0),
        .DIB1(1'b0),
        .DIB2(1'b0),
        .DIB3(1'b0),
        .DIB4(1'b0),
        .DIB5(1'b0),
        .DIB6(1'b0),
        .DIB7(1'b0),
        .DIB8(1'b0),
        .DIB9(1'b0),
        .DIB10(1'b0),
        .DIB11(1'b0),
        .DIB12(1'b0),
        .DIB13(1'b0),
        .DIB14(1'b0),
        .DIB15(1'b0),
        .DIB16(1'b0),
        .DIB17(1'b0),
        .DOB0(dob[0]),
        .DOB1(dob[1]),
        .DOB2(dob[2]),
        .DOB3(dob[3]),
        .DOB4(dob[4]),
        .DOB5(dob[5]),
        .DOB6(dob[6]),
        .DOB7(dob[7]),
        .DOB8(dob[8]),
        .DOB9(dob[9]),
        .DOB10(dob[10]),
        .DOB11(dob[11]),
        .DOB12(dob[12]),
        .DOB13(dob[13]),
        .DOB14(dob[14]),
        .DOB15(dob[15]),
        .DOB16(dob[16]),
        .DOB17(dob[17])
    );
`else
    logic [WIDTH-1:0] mem_q [DEPTH];
    logic [WIDTH-1:0] rd_q, out_q;
    always_ff @(posedge clk) begin
        if (wr_en) mem_q[wr_addr] <= wr_data;
        rd_q  <= mem_q[rd_addr];   // the RAM's read register
        out_q <= rd_q;             // its output register
    end
    assign rd_data = out_q;
`endif
endmodule

`resetall
