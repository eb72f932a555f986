// SPDX-License-Identifier: Apache-2.0
// ats_sata_frx: the receive half of the SATA transport layer (docs/host-interface.md §2.1, §2.5).
// FISes from the link (ats_sata_link m_rx, status on the last dword) are sorted by their type byte:
//  - Register H2D (0x27): buffered; if the link's status is good it is offered on m_reg (5 dwords,
//    dword 0 in bits 31:0) with `m_reg_bad` when it was not 5 dwords long; a bad one is dropped.
//  - Data (0x46): taken only when a transfer is open at its first dword (`dfis_en`): its payload is
//    pushed into the speculative data FIFO (ats_sata_dfifo), at most `dfis_max` words; at its last
//    dword it is committed when the link's status is good, it did not bring more than `dfis_max`
//    words and (with `dfis_exact`) not fewer, else rolled back; either way `dend` pulses with the
//    verdict and the word count.
//  - anything else, a Data FIS with no transfer open, a Register H2D with a bad CRC: dropped
//    (`cnt_drop`).
// A Register H2D waits at m_reg until taken; the next FIS is not started before (the link's FIFO
// and HOLD absorb it).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_frx #(
    parameter int DFIFO_DEPTH = 2048
) (
    input  wire logic         clk,
    input  wire logic         rst,
    // from the link
    input  wire logic         s_rx_valid,
    output      logic         s_rx_ready,
    input  wire logic [31:0]  s_rx_data,
    input  wire logic         s_rx_last,
    input  wire logic [1:0]   s_rx_status,
    // Register H2D FISes
    output wire logic         m_reg_valid,
    input  wire logic         m_reg_ready,
    output wire logic [159:0] m_reg_data,
    output wire logic         m_reg_bad,
    // data transfers
    input  wire logic         dfis_en,
    input  wire logic [11:0]  dfis_max,     // words, 1..2048 (0 = 4096 not used)
    input  wire logic         dfis_exact,
    output wire logic         dend,
    output wire logic         dend_good,
    output wire logic [11:0]  dend_words,
    output wire logic         m_dat_valid,
    input  wire logic         m_dat_ready,
    output wire logic [31:0]  m_dat_data,
    output wire logic [31:0]  cnt_drop
);
    localparam logic [1:0] S_HDR = 2'd0, S_REG = 2'd1, S_DATA = 2'd2, S_DROP = 2'd3;

    logic [1:0]   st_q;
    logic [31:0]  regw_q [5];
    logic [2:0]   rcnt_q;          // register dwords received after the first (saturates at 7)
    logic         reg_v_q, reg_bad_q;
    logic [11:0]  n_q;             // data words received
    logic [11:0]  left_q;          // words the transfer still takes (dfis_max - n_q)
    logic         room_q, one_q;   // left_q != 0, left_q == 1 (registered: timing)
    logic         exact_q, ovf_q;
    logic         dend_q, dend_good_q;
    logic [11:0]  dend_words_q;
    logic [31:0]  cnt_drop_q;

    wire logic beat = s_rx_valid && s_rx_ready;
    wire logic good = (s_rx_status == 2'd0);
    wire logic [7:0] ftype = s_rx_data[7:0];

    // data FIFO
    wire logic df_ready;
    wire logic room    = room_q;
    wire logic df_push = (st_q == S_DATA) && s_rx_valid && room;
    wire logic [11:0] n_next = n_q + 12'(df_push);
    wire logic data_end = (st_q == S_DATA) && beat && s_rx_last;
    wire logic data_ok  = good && !ovf_q && df_push && (!exact_q || one_q);
    ats_sata_dfifo #(.DEPTH(DFIFO_DEPTH)) u_dfifo (
        .clk(clk), .rst(rst),
        .s_valid(df_push && s_rx_ready), .s_ready(df_ready), .s_data(s_rx_data),
        .commit(data_end && data_ok), .rollback(data_end && !data_ok),
        .m_valid(m_dat_valid), .m_ready(m_dat_ready), .m_data(m_dat_data));

    always_comb begin
        case (st_q)
            S_HDR:   s_rx_ready = !reg_v_q;
            S_DATA:  s_rx_ready = df_ready || !room;
            default: s_rx_ready = 1'b1;
        endcase
    end

    assign m_reg_valid = reg_v_q;
    assign m_reg_bad   = reg_bad_q;
    assign m_reg_data  = {regw_q[4], regw_q[3], regw_q[2], regw_q[1], regw_q[0]};
    assign dend        = dend_q;
    assign dend_good   = dend_good_q;
    assign dend_words  = dend_words_q;
    assign cnt_drop    = cnt_drop_q;

    always_ff @(posedge clk) begin
        dend_q <= 1'b0;
        if (beat && st_q == S_HDR) regw_q[0] <= s_rx_data;
        if (beat && st_q == S_REG && rcnt_q < 3'd4) regw_q[3'(rcnt_q) + 3'd1] <= s_rx_data;
        if (rst) begin
            st_q        <= S_HDR;
            rcnt_q      <= '0;
            reg_v_q     <= 1'b0;
            reg_bad_q   <= 1'b0;
            n_q         <= '0;
            left_q      <= '0;
            room_q      <= 1'b0;
            one_q       <= 1'b0;
            exact_q     <= 1'b0;
            ovf_q       <= 1'b0;
            dend_good_q <= 1'b0;
            dend_words_q <= '0;
            cnt_drop_q  <= '0;
        end else begin
            if (m_reg_valid && m_reg_ready) reg_v_q <= 1'b0;
            case (st_q)
                S_HDR: if (beat) begin
                    rcnt_q <= '0;
                    n_q    <= '0;
                    ovf_q  <= 1'b0;
                    left_q <= dfis_max;
                    room_q <= (dfis_max != 12'd0);
                    one_q  <= (dfis_max == 12'd1);
                    exact_q <= dfis_exact;
                    if (ftype == 8'h27) begin
                        if (s_rx_last) begin
                            if (good) begin reg_v_q <= 1'b1; reg_bad_q <= 1'b1; end
                            else cnt_drop_q <= cnt_drop_q + 1'b1;
                        end else st_q <= S_REG;
                    end else if (ftype == 8'h46 && dfis_en) begin
                        if (s_rx_last) begin
                            dend_q       <= 1'b1;
                            dend_good_q  <= 1'b0;      // no payload: nothing to commit
                            dend_words_q <= '0;
                        end else st_q <= S_DATA;
                    end else begin
                        if (s_rx_last) cnt_drop_q <= cnt_drop_q + 1'b1;
                        else st_q <= S_DROP;
                    end
                end
                S_REG: if (beat) begin
                    if (rcnt_q != 3'd7) rcnt_q <= rcnt_q + 1'b1;
                    if (s_rx_last) begin
                        st_q <= S_HDR;
                        if (good) begin
                            reg_v_q   <= 1'b1;
                            reg_bad_q <= (rcnt_q != 3'd3);
                        end else cnt_drop_q <= cnt_drop_q + 1'b1;
                    end
                end
                S_DATA: if (beat) begin
                    n_q <= n_next;
                    if (df_push) begin
                        left_q <= left_q - 12'd1;
                        room_q <= !one_q;
                        one_q  <= (left_q == 12'd2);
                    end
                    if (!df_push) ovf_q <= 1'b1;
                    if (s_rx_last) begin
                        st_q         <= S_HDR;
                        dend_q       <= 1'b1;
                        dend_good_q  <= data_ok;
                        dend_words_q <= n_next;
                    end
                end
                default: if (beat && s_rx_last) begin
                    st_q <= S_HDR;
                    cnt_drop_q <= cnt_drop_q + 1'b1;
                end
            endcase
        end
    end
endmodule

`resetall
