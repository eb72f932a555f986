// SPDX-License-Identifier: Apache-2.0
// ats_udp_host_rd: streams `s_req_count` words of the buffer from word address `s_req_addr` to
// `m_dat` (last on the final word), through the RAM's registered read port and a two-word output
// FIFO, so that `m_dat_ready` may stall at any beat. Words at or above WORDS read as 0. One request
// at a time: `s_req_ready` is high only when the previous one has been streamed out completely.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_udp_host_rd #(
    parameter int WORDS = 8192          // buffer words, a power of two
) (
    input  wire logic                       clk,
    input  wire logic                       rst,
    input  wire logic                       s_req_valid,
    output wire logic                       s_req_ready,
    input  wire logic [29:0]                s_req_addr,     // word address
    input  wire logic [13:0]                s_req_count,    // words, >= 1
    output wire logic [$clog2(WORDS)-1:0]   ram_addr,
    input  wire logic [31:0]                ram_data,       // ram_addr's word one cycle later
    output wire logic                       m_dat_valid,
    input  wire logic                       m_dat_ready,
    output wire logic [31:0]                m_dat_data,
    output wire logic                       m_dat_last
);
    localparam int AW = $clog2(WORDS);

    logic        busy_q;                    // a request is being streamed (until its last word leaves)
    logic [29:0] addr_q;                    // next word to read
    logic [13:0] rem_q;                     // words still to read
    logic        pend_q, pend_last_q, pend_zero_q;    // a read issued last cycle
    logic [1:0]  cnt_q;                     // output FIFO occupancy
    logic [31:0] f_data_q [2];
    logic [1:0]  f_last_q;
    logic        f_rd_q;                    // FIFO read index

    wire take_out = m_dat_valid && m_dat_ready;
    wire issue    = busy_q && rem_q != 14'd0 && ({1'b0, cnt_q} + {2'b0, pend_q}) < 3'd2;
    wire in_range = addr_q < 30'(WORDS);

    assign s_req_ready = !busy_q;
    assign ram_addr    = addr_q[AW-1:0];
    assign m_dat_valid = cnt_q != 2'd0;
    assign m_dat_data  = f_data_q[f_rd_q];
    assign m_dat_last  = f_last_q[f_rd_q];

    wire       push  = pend_q;
    wire       f_wr  = f_rd_q ^ cnt_q[0];   // write index = read index + occupancy (mod 2)

    always_ff @(posedge clk) begin
        if (rst) begin
            busy_q <= 1'b0;
            rem_q  <= '0;
            addr_q <= '0;
            pend_q <= 1'b0;
            pend_last_q <= 1'b0;
            pend_zero_q <= 1'b0;
            cnt_q  <= '0;
            f_rd_q <= 1'b0;
            f_last_q <= '0;
        end else begin
            if (s_req_valid && s_req_ready) begin
                busy_q <= 1'b1;
                addr_q <= s_req_addr;
                rem_q  <= s_req_count;
            end
            pend_q <= issue;
            if (issue) begin
                pend_last_q <= rem_q == 14'd1;
                pend_zero_q <= !in_range;
                addr_q <= addr_q + 30'd1;
                rem_q  <= rem_q - 14'd1;
            end
            if (push) begin
                f_data_q[f_wr] <= pend_zero_q ? 32'd0 : ram_data;
                f_last_q[f_wr] <= pend_last_q;
            end
            if (take_out) begin
                f_rd_q <= !f_rd_q;
                if (m_dat_last) busy_q <= 1'b0;
            end
            cnt_q <= cnt_q + {1'b0, push} - {1'b0, take_out};
        end
    end
endmodule

`resetall
