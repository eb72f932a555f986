// SPDX-License-Identifier: Apache-2.0
// sata_rx_fifo_props: formal wrapper of ats_sata_rx_fifo (rtl/sata/ats_sata_rx_fifo.sv) with its two
// behavioural ats_ram_sdp, DEPTH = 16, WIDTH = 19. Proved, given the stream rules on s_ (assumed):
//   - the stream rules on m_ (valid held, data stable until taken, valid low after a reset);
//   - every word out once, in order, intact (ats_fv_track, up to DEPTH words inside): through the
//     RAM, the two read stages and the 4-entry output queue;
//   - `level` equals the words inside; a word pushed always fits (no overflow at DEPTH).
// f_* wires are the block's registers and RAM words, tied in by the .sby script.
`default_nettype none

module sata_rx_fifo_props #(
    parameter int WIDTH = 19,
    parameter int DEPTH = 16,
    localparam int AW = $clog2(DEPTH),
    localparam int LW = 18,
    localparam int HW = WIDTH - LW
) (
    input wire logic             clk,
    input wire logic             rst,
    input wire logic             s_valid,
    input wire logic [WIDTH-1:0] s_data,
    input wire logic             m_ready
);
    logic             s_ready, m_valid;
    logic [WIDTH-1:0] m_data;
    logic [AW:0]      level;
    ats_sata_rx_fifo #(.WIDTH(WIDTH), .DEPTH(DEPTH)) dut (.*);

    (* keep *) wire logic [DEPTH*LW-1:0] f_mem_lo;    // RAM word i at [i*LW +: LW]
    (* keep *) wire logic [DEPTH*HW-1:0] f_mem_hi;
    (* keep *) wire logic [LW-1:0]       f_rd_lo, f_out_lo;   // the RAMs' read and output registers
    (* keep *) wire logic [HW-1:0]       f_rd_hi, f_out_hi;
    (* keep *) wire logic [4*WIDTH-1:0]  f_oq;        // output queue entry i at [i*WIDTH +: WIDTH]
    (* keep *) wire logic [AW-1:0]       f_wr_ptr, f_rd_ptr;
    (* keep *) wire logic [AW:0]         f_ram_cnt;
    (* keep *) wire logic                f_v1, f_v2, f_ready;
    (* keep *) wire logic [1:0]          f_oq_rp, f_oq_wp;
    (* keep *) wire logic [2:0]          f_oq_cnt;

    logic f_ok = 1'b0;
    always_ff @(posedge clk) f_ok <= f_ok || rst;
    initial assume (rst);

    ats_fv_stream #(.W(WIDTH), .ENV(1'b1)) u_s (.clk, .rst, .ok(f_ok), .valid(s_valid),
        .ready(s_ready), .data(s_data));
    ats_fv_stream #(.W(WIDTH), .ENV(1'b0)) u_m (.clk, .rst, .ok(f_ok), .valid(m_valid),
        .ready(m_ready), .data(m_data));

    logic [5:0]       cnt, pos;
    logic             trk;
    logic [WIDTH-1:0] trk_data;
    ats_fv_track #(.W(WIDTH), .CW(6), .CAP(DEPTH)) u_trk (
        .clk, .rst, .ok(f_ok), .in_fire(s_valid && s_ready), .in_data(s_data),
        .out_fire(m_valid && m_ready), .out_data(m_data), .cnt, .trk, .pos, .trk_data);

    // where the tracked word is: the output queue, the RAM's output register (v2), its read
    // register (v1), or the RAM at rd_ptr + k
    wire logic [5:0] k_oq  = 6'(f_oq_cnt);
    wire logic [5:0] k2    = pos - k_oq;
    wire logic [5:0] k3    = k2 - 6'(f_v2);
    wire logic [5:0] k4    = k3 - 6'(f_v1);
    wire logic [1:0]    oq_i  = f_oq_rp + pos[1:0];
    wire logic [AW-1:0] ram_i = f_rd_ptr + k4[AW-1:0];

    always_comb if (f_ok) begin
        assert (6'(level) == cnt);
        // invariants (induction)
        assert (level == f_ram_cnt + (AW + 1)'(f_v1) + (AW + 1)'(f_v2) + (AW + 1)'(f_oq_cnt));
        assert (f_wr_ptr == f_rd_ptr + f_ram_cnt[AW-1:0]);
        assert (f_ram_cnt <= (AW + 1)'(DEPTH));
        assert (4'(f_v1) + 4'(f_v2) + 4'(f_oq_cnt) <= 4'd4);
        assert (f_oq_wp == f_oq_rp + f_oq_cnt[1:0]);
        assert (!f_ready || level <= (AW + 1)'(DEPTH - 1));
        assert (m_valid == (f_oq_cnt != 3'd0));
        if (trk) begin
            if (pos < k_oq) assert (f_oq[oq_i*WIDTH +: WIDTH] == trk_data);
            else if (f_v2 && k2 == 6'd0) assert ({f_out_hi, f_out_lo} == trk_data);
            else if (f_v1 && k3 == 6'd0) assert ({f_rd_hi, f_rd_lo} == trk_data);
            else assert ({f_mem_hi[ram_i*HW +: HW], f_mem_lo[ram_i*LW +: LW]} == trk_data);
        end
    end
endmodule

`default_nettype wire
