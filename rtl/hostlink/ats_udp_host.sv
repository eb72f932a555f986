// SPDX-License-Identifier: Apache-2.0
// ats_udp_host: the device's host link over UDP (docs/host-port.md "UDP host link"). The UDP side
// is LiteEth's UDP user port (eth_udp_user_description(32): src/dst port, ip address, length in the
// sideband, data / last_be / error per beat, byte 0 of a packet in data[7:0]); the core side is the
// descriptor stream (m_cmd, docs/architecture.md §1), the completion stream (s_cpl, §2) and the
// host-memory ports (s_hrd request / m_hrd data, s_hwr writes, §9), which this block serves from its
// own command buffer: NSLOT slots of SLOT_BYTES, slot s at byte address s * SLOT_BYTES. Commands are
// held per slot (state FREE / LOAD / RUN / DONE) so that a duplicate SUBMIT is never executed twice;
// rtl/hostlink/README.md has the contract.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_udp_host #(
    parameter int          NSLOT      = 4,         // commands in flight (2..16, a power of two)
    parameter int          SLOT_BYTES = 8192,      // buffer per command (4096..32768, a power of two)
    parameter int          PAGE_BYTES = 4096,      // the core's LBA size (512..SLOT_BYTES)
    parameter logic [15:0] LOCAL_PORT = 16'd16724  // source port of every reply (0x4154)
) (
    input  wire logic        clk,
    input  wire logic        rst,
    // UDP receive (LiteEth UDP user port source -> here)
    input  wire logic        s_udp_valid,
    output wire logic        s_udp_ready,
    input  wire logic [15:0] s_udp_src_port,
    input  wire logic [15:0] s_udp_dst_port,
    input  wire logic [31:0] s_udp_ip_address,
    input  wire logic [15:0] s_udp_length,
    input  wire logic [31:0] s_udp_data,
    input  wire logic        s_udp_last,
    input  wire logic [3:0]  s_udp_last_be,
    input  wire logic [3:0]  s_udp_error,
    // UDP transmit (here -> LiteEth UDP user port sink)
    output wire logic        m_udp_valid,
    input  wire logic        m_udp_ready,
    output wire logic [15:0] m_udp_src_port,
    output wire logic [15:0] m_udp_dst_port,
    output wire logic [31:0] m_udp_ip_address,
    output wire logic [15:0] m_udp_length,
    output wire logic [31:0] m_udp_data,
    output wire logic        m_udp_last,
    output wire logic [3:0]  m_udp_last_be,
    output wire logic [3:0]  m_udp_error,
    // descriptors to the core's s_cmd
    output wire logic        m_cmd_valid,
    input  wire logic        m_cmd_ready,
    output wire logic [3:0]  m_cmd_op,
    output wire logic [7:0]  m_cmd_tag,
    output wire logic [47:0] m_cmd_lba,
    output wire logic [15:0] m_cmd_nlb,
    output wire logic [5:0]  m_cmd_txid,
    output wire logic [3:0]  m_cmd_flags,
    output wire logic [1:0]  m_cmd_attr,
    output wire logic [1:0]  m_cmd_prio,
    output wire logic [31:0] m_cmd_dptr,
    output wire logic [31:0] m_cmd_aux,
    // completions from the core's m_cpl
    input  wire logic        s_cpl_valid,
    output wire logic        s_cpl_ready,
    input  wire logic [7:0]  s_cpl_tag,
    input  wire logic [7:0]  s_cpl_status,
    input  wire logic [31:0] s_cpl_result,
    // the core's host-memory read port (m_hrd request -> s_hrdq, data <- m_hrdd)
    input  wire logic        s_hrdq_valid,
    output wire logic        s_hrdq_ready,
    input  wire logic [31:0] s_hrdq_addr,
    input  wire logic [15:0] s_hrdq_len,
    output wire logic        m_hrdd_valid,
    input  wire logic        m_hrdd_ready,
    output wire logic [31:0] m_hrdd_data,
    output wire logic        m_hrdd_last,
    // the core's host-memory write port (m_hwr)
    input  wire logic        s_hwr_valid,
    output wire logic        s_hwr_ready,
    input  wire logic [31:0] s_hwr_addr,
    input  wire logic [31:0] s_hwr_data,
    input  wire logic        s_hwr_last,
    // counters (wrap): packets answered ERROR, completions for no running slot (dropped), packets
    // dropped whole because their reply found the reply queue full
    output logic      [15:0] err_pkts,
    output logic      [15:0] stray_cpls,
    output logic      [15:0] drop_pkts
);
    localparam int SW    = $clog2(NSLOT);
    localparam int NCH   = SLOT_BYTES / 1024;              // chunks of a slot
    localparam int WORDS = NSLOT * SLOT_BYTES / 4;
    localparam int BW    = $clog2(WORDS);
    localparam int CW    = (NCH > 1) ? $clog2(NCH) : 1;

    if (NSLOT < 2 || NSLOT > 16 || (NSLOT & (NSLOT - 1)) != 0) begin : g_check_nslot
        $fatal(1, "ats_udp_host: NSLOT must be 2, 4, 8 or 16 (%m)");
    end
    if (SLOT_BYTES < 4096 || SLOT_BYTES > 32768 || (SLOT_BYTES & (SLOT_BYTES - 1)) != 0) begin : g_check_slot
        $fatal(1, "ats_udp_host: SLOT_BYTES must be a power of two in 4096..32768 (%m)");
    end
    if (PAGE_BYTES < 512 || PAGE_BYTES > SLOT_BYTES) begin : g_check_page
        $fatal(1, "ats_udp_host: PAGE_BYTES must be in 512..SLOT_BYTES (%m)");
    end

    // packet types, error codes, slot states (docs/host-port.md "UDP host link")
    localparam logic [7:0] T_SUBMIT = 8'h01, T_DATA = 8'h02;
    localparam logic [7:0] T_CPL = 8'h81, T_RDATA = 8'h82, T_STATE = 8'h83, T_ERROR = 8'h8F;
    localparam logic [7:0] E_SHORT = 8'd1, E_TYPE = 8'd2, E_LEN = 8'd3, E_SLOT = 8'd4, E_FIELD = 8'd5,
                           E_BUSY = 8'd6, E_STALE = 8'd7;
    localparam logic [1:0] S_FREE = 2'd0, S_LOAD = 2'd1, S_RUN = 2'd2, S_DONE = 2'd3;

    // ---------------------------------------------------------------- slot table
    logic [1:0]     st_q   [NSLOT];
    logic [31:0]    seq_q  [NSLOT];
    logic [15:0]    wlen_q [NSLOT];
    logic [15:0]    rlen_q [NSLOT];
    logic [NCH-1:0] got_q  [NSLOT];                        // write-data chunks received
    logic [31:0]    d0_q   [NSLOT];                        // SUBMIT word 4: op, txid, flags, attr/prio
    logic [15:0]    nlb_q  [NSLOT];
    logic [47:0]    lba_q  [NSLOT];
    logic [31:0]    aux_q  [NSLOT];
    logic [7:0]     sts_q  [NSLOT];
    logic [31:0]    res_q  [NSLOT];
    logic [31:0]    ip_q   [NSLOT];
    logic [15:0]    port_q [NSLOT];
    logic [NSLOT-1:0] iss_q;                               // RUN, descriptor not yet offered
    logic [NSLOT-1:0] snd_q;                               // DONE, RDATA + CPL to send
    logic [NCH-1:0] smask_q [NSLOT];                       // RDATA chunks to send

    function automatic logic [5:0] nchunks(input logic [15:0] len);
        nchunks = len[15:10] + {5'b0, len[9:0] != 10'd0};
    endfunction
    // round robin: the first requesting slot after `last` (`last` itself comes last)
    function automatic logic [SW-1:0] rr_pick(input logic [NSLOT-1:0] req, input logic [SW-1:0] last);
        logic found;
        rr_pick = last;
        found   = 1'b0;
        for (int k = 1; k <= NSLOT; k++) begin
            if (!found && req[SW'(last + SW'(k))]) begin
                rr_pick = SW'(last + SW'(k));
                found   = 1'b1;
            end
        end
    endfunction
    function automatic logic [NCH-1:0] chmask(input logic [15:0] len);
        for (int i = 0; i < NCH; i++) chmask[i] = (6'(i) < nchunks(len));
    endfunction

    // ---------------------------------------------------------------- receive
    typedef enum logic [2:0] {RX_PKT, RX_LOOK, RX_CHK, RX_EVAL, RX_APPLY} rx_e;
    rx_e         rx_q;
    logic [15:0] wc_q;                                     // words taken of this packet (saturates)
    logic [31:0] h_q [8];                                  // first eight words
    logic [31:0] rx_ip_q;
    logic [15:0] rx_port_q;
    logic [16:0] rx_len_q;                                 // bytes of the packet
    logic        rx_err_q;                                 // a beat carried error bits

    // reply FIFO (ERROR / STATE), two entries
    logic        rq_push;
    logic [7:0]  rq_type, rq_arg;
    logic [31:0] rq_w2;
    logic [1:0]  rq_cnt_q;
    logic        rq_rd_q;
    logic [7:0]  rqf_type_q [2], rqf_slot_q [2], rqf_arg_q [2];
    logic [31:0] rqf_seq_q [2], rqf_w2_q [2], rqf_ip_q [2];
    logic [15:0] rqf_port_q [2];
    logic        rq_pop;

    // fields of the packet being received (valid from its third word on, and in RX_EVAL)
    wire [7:0]    p_type  = h_q[0][7:0];
    wire [7:0]    p_slot8 = h_q[0][15:8];
    wire [7:0]    p_arg   = h_q[0][23:16];
    wire [7:0]    p_ver   = h_q[0][31:24];
    wire [SW-1:0] p_slot  = p_slot8[SW-1:0];
    wire          p_slot_ok = p_slot8 < 8'(NSLOT);
    wire [31:0]   p_seq   = h_q[1];
    // slot lookups, registered in RX_LOOK / RX_CHK (after the packet's second word: slot and seq known) so
    // that neither the payload writes nor the evaluation look the slot table up combinationally.
    // Only the receiver changes a LOAD slot; a RUN slot may turn DONE meanwhile (the answer is
    // then that of a moment earlier: STATE running or BUSY, both defined).
    logic [1:0]     k_st_q;
    logic           k_iss_q;                               // RUN, descriptor not yet offered
    logic           k_seq_eq_q, k_seq_old_q, k_in_q, k_new_q, k_wrok_q;
    logic [NCH-1:0] k_got_q, k_wmask_q, k_rmask_q;
    logic [15:0]    k_bytes_q;
    logic           pend_last_q;
    // RX_LOOK reads the slot's entry, RX_CHK derives from the copy
    logic [1:0]     r_st_q;
    logic           r_iss_q;
    logic [31:0]    r_seq_q;
    logic [15:0]    r_wlen_q, r_rlen_q;
    logic [NCH-1:0] r_got_q;
    always_ff @(posedge clk) begin
        if (rx_q == RX_LOOK) begin
            r_st_q   <= st_q[p_slot];
            r_iss_q  <= iss_q[p_slot];
            r_seq_q  <= seq_q[p_slot];
            r_wlen_q <= wlen_q[p_slot];
            r_rlen_q <= rlen_q[p_slot];
            r_got_q  <= got_q[p_slot];
        end
    end
    wire          d_in     = p_arg < {2'b0, nchunks(r_wlen_q)};
    wire [CW-1:0] d_ch     = p_arg[CW-1:0];
    wire          d_new    = d_in && !r_got_q[d_ch];
    wire [15:0]   d_bytes  = (r_wlen_q - {p_arg[5:0], 10'd0} >= 16'd1024) ? 16'd1024
                                                                       : r_wlen_q - {p_arg[5:0], 10'd0};
    wire [31:0]   diff     = p_seq - r_seq_q;
    wire          d_write_ok = p_type == T_DATA && p_ver == 8'd1 && p_slot_ok && r_st_q == S_LOAD
                               && diff == 32'd0 && d_new;

    always_ff @(posedge clk) begin
        if (rx_q == RX_CHK) begin
            k_st_q      <= r_st_q;
            k_iss_q     <= r_iss_q;
            k_seq_eq_q  <= diff == 32'd0;
            k_seq_old_q <= diff[31];
            k_in_q      <= d_in;
            k_new_q     <= d_new;
            k_wrok_q    <= d_write_ok;
            k_got_q     <= r_got_q;
            k_wmask_q   <= chmask(r_wlen_q);
            k_rmask_q   <= chmask(r_rlen_q);
            k_bytes_q   <= d_bytes;
        end
    end
    wire          d_match  = p_slot_ok && k_st_q == S_LOAD && k_seq_eq_q;

    // the RAM's write port: DATA payload words first (the PHY cannot wait), then core writes (s_hwr,
    // which waits: s_hwr_ready low in a cycle a payload word is written)
    logic [BW-1:0] hwr_addr_q;                             // next word of a burst
    logic          hwr_mid_q;                              // inside a burst (addr taken)
    wire  [29:0]   hwr_word = hwr_mid_q ? 30'(hwr_addr_q) : s_hwr_addr[31:2];
    wire           hwr_in   = hwr_mid_q ? 1'b1 : (s_hwr_addr[31:2] < 30'(WORDS));
    logic          hwr_drop_q;                             // burst started outside the buffer

    wire           rx_beat    = s_udp_valid && s_udp_ready;
    wire           rx_pay     = rx_q == RX_PKT && wc_q >= 16'd2 && k_wrok_q
                                && (wc_q - 16'd2) < (k_bytes_q >> 2);
    // the receiver takes a beat in every cycle of RX_PKT: only the four per-packet cycles (RX_LOOK,
    // RX_CHK, RX_EVAL, RX_APPLY) hold it, never the core, the reply queue or the transmitter
    assign s_udp_ready = rx_q == RX_PKT;
    assign s_hwr_ready = !(rx_beat && rx_pay);
    wire           hwr_fire   = s_hwr_valid && s_hwr_ready;

    logic          ram_we;
    logic [BW-1:0] ram_wa;
    logic [31:0]   ram_wd;
    always_comb begin
        ram_we = 1'b0;
        ram_wa = '0;
        ram_wd = s_hwr_data;
        if (rx_beat && rx_pay) begin
            ram_we = 1'b1;
            ram_wa = {p_slot, p_arg[CW-1:0], 8'(wc_q - 16'd2)} ;
            ram_wd = s_udp_data;
        end else if (hwr_fire) begin
            ram_we = hwr_in && !(hwr_mid_q && hwr_drop_q);
            ram_wa = hwr_word[BW-1:0];
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            hwr_mid_q  <= 1'b0;
            hwr_drop_q <= 1'b0;
            hwr_addr_q <= '0;
        end else if (hwr_fire) begin
            hwr_mid_q  <= !s_hwr_last;
            hwr_addr_q <= hwr_word[BW-1:0] + BW'(1);
            if (!hwr_mid_q) hwr_drop_q <= !hwr_in;
            if (hwr_word[BW-1:0] == BW'(WORDS - 1)) hwr_drop_q <= 1'b1;         // the rest would wrap
        end
    end

    // bytes of a last beat (last_be one-hot: bit i = byte i is the last; 0 taken as 4)
    function automatic logic [2:0] be_bytes(input logic [3:0] be);
        case (be)
            4'b0001: be_bytes = 3'd1;
            4'b0010: be_bytes = 3'd2;
            4'b0100: be_bytes = 3'd3;
            default: be_bytes = 3'd4;
        endcase
    endfunction

    // SUBMIT words: 2 mask, 3 wr_len | rd_len, 4 op txid flags ap, 5 nlb | lba[47:32], 6 lba[31:0], 7 aux
    wire [15:0] wl = h_q[3][15:0], rl = h_q[3][31:16], nlb = h_q[5][15:0];
    wire [7:0]  op = h_q[4][7:0], txid = h_q[4][15:8], flags = h_q[4][23:16], ap = h_q[4][31:24];

    // evaluation of a complete packet (RX_EVAL): what to do
    logic       ev_reply, ev_accept, ev_mark, ev_resend, ev_err;
    logic [7:0] ev_code;
    always_comb begin
        ev_reply  = 1'b0;
        ev_accept = 1'b0;
        ev_mark   = 1'b0;
        ev_resend = 1'b0;
        ev_err    = 1'b0;
        ev_code   = 8'd0;
        rq_type   = T_ERROR;
        rq_arg    = 8'd0;
        rq_w2     = (rx_len_q >= 17'd4) ? h_q[0] : 32'd0;
        if (rx_len_q < 17'd8) begin
            ev_err = 1'b1; ev_code = E_SHORT;
        end else if (p_ver != 8'd1 || (p_type != T_SUBMIT && p_type != T_DATA)) begin
            ev_err = 1'b1; ev_code = E_TYPE;
        end else if (rx_len_q[1:0] != 2'd0 || (p_type == T_SUBMIT && rx_len_q != 17'd32)
                     || (p_type == T_DATA && (rx_len_q < 17'd12 || rx_len_q > 17'd1032))) begin
            ev_err = 1'b1; ev_code = E_LEN;
        end else if (!p_slot_ok) begin
            ev_err = 1'b1; ev_code = E_SLOT;
        end else if (p_type == T_SUBMIT) begin
            if (wl[1:0] != 2'd0 || rl[1:0] != 2'd0 || 32'(wl) > 32'(SLOT_BYTES) || 32'(rl) > 32'(SLOT_BYTES)
                || op[7:4] != 4'd0 || txid[7:6] != 2'd0 || flags[7:4] != 4'd0 || ap[7] || ap[5:4] != 2'd0
                || ((op[3:0] == ats_host_pkg::OP_READ || op[3:0] == ats_host_pkg::OP_WRITE)
                    && (32'(nlb) + 32'd1) * 32'(PAGE_BYTES) > 32'(SLOT_BYTES))) begin
                ev_err = 1'b1; ev_code = E_FIELD;
            end else if (k_st_q == S_FREE) begin
                ev_accept = 1'b1;
            end else if (k_seq_eq_q) begin
                if (k_st_q == S_DONE) begin
                    ev_resend = 1'b1;
                end else begin
                    // running (2) only once the descriptor is offered on m_cmd: every command
                    // offered later reaches the core after it (the host's ordering rule). A RUN slot
                    // still waiting for its turn (iss_q) answers loading with all its chunks received
                    ev_reply = 1'b1;
                    rq_type  = T_STATE;
                    rq_arg   = (k_st_q == S_LOAD || k_iss_q) ? 8'd1 : 8'd2;
                    rq_w2    = (k_st_q == S_LOAD || k_iss_q) ? 32'(k_got_q) : 32'd0;
                end
            end else if (!k_seq_old_q) begin
                if (k_st_q == S_RUN) begin
                    ev_err = 1'b1; ev_code = E_BUSY;
                end else begin
                    ev_accept = 1'b1;
                end
            end else begin
                ev_err = 1'b1; ev_code = E_STALE;
            end
        end else begin                                     // DATA
            if (!d_match) begin
                ev_err = 1'b1; ev_code = E_STALE;
            end else if (!k_in_q) begin
                ev_err = 1'b1; ev_code = E_FIELD;
            end else if (rx_len_q != 17'd8 + 17'(k_bytes_q)) begin
                ev_err = 1'b1; ev_code = E_LEN;
            end else begin
                ev_mark = k_new_q;                         // a duplicate chunk: nothing
            end
        end
        if (ev_err) begin
            ev_reply = 1'b1;
            rq_arg   = ev_code;
        end
    end
    // the decision is registered in RX_EVAL and applied in RX_APPLY (slot table, reply FIFO)
    logic       a_reply_q, a_accept_q, a_mark_q, a_resend_q, a_err_q, a_last_chunk_q;
    logic [7:0] a_type_q, a_arg_q;
    logic [31:0] a_w2_q;
    always_ff @(posedge clk) begin
        if (rx_q == RX_EVAL) begin
            a_reply_q  <= ev_reply;
            a_accept_q <= ev_accept;
            a_mark_q   <= ev_mark;
            a_resend_q <= ev_resend;
            a_err_q    <= ev_err;
            a_type_q   <= rq_type;
            a_arg_q    <= rq_arg;
            a_w2_q     <= rq_w2;
            a_last_chunk_q <= (k_got_q | (NCH'(1) << d_ch)) == k_wmask_q;
        end
    end
    // a packet whose reply (STATE / ERROR) finds the queue full is dropped whole: no reply, no
    // change (replies come only with packets that change nothing), counted in drop_pkts; the
    // receiver never waits for the transmitter (README "Receive")
    wire rq_full = rq_cnt_q == 2'd2;
    wire rq_drop = rx_q == RX_APPLY && a_reply_q && rq_full && !rx_err_q;
    wire ev_go   = rx_q == RX_APPLY && !(a_reply_q && rq_full) && !rx_err_q;
    assign rq_push = rx_q == RX_APPLY && a_reply_q && !rq_full && !rx_err_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            rx_q     <= RX_PKT;
            wc_q     <= '0;
            rx_len_q <= '0;
            rx_err_q <= 1'b0;
            err_pkts <= '0;
            drop_pkts <= '0;
        end else begin
            case (rx_q)
                RX_PKT: if (rx_beat) begin
                    if (wc_q < 16'd8) h_q[wc_q[2:0]] <= s_udp_data;
                    if (wc_q == 16'd0) begin
                        rx_ip_q   <= s_udp_ip_address;
                        rx_port_q <= s_udp_src_port;
                    end
                    if (s_udp_error != 4'd0) rx_err_q <= 1'b1;
                    if (s_udp_last) begin
                        rx_len_q <= (wc_q > 16'd2000) ? 17'h1FFFF : {wc_q[14:0], 2'b00} + 17'(be_bytes(s_udp_last_be));
                        wc_q     <= '0;
                    end else if (wc_q != 16'hFFFF) begin
                        wc_q <= wc_q + 16'd1;
                    end
                    pend_last_q <= s_udp_last;
                    if (wc_q == 16'd1) rx_q <= RX_LOOK;
                    else if (s_udp_last) rx_q <= RX_EVAL;
                end
                RX_LOOK: rx_q <= RX_CHK;
                RX_CHK: rx_q <= pend_last_q ? RX_EVAL : RX_PKT;
                RX_EVAL: rx_q <= RX_APPLY;
                RX_APPLY: begin
                    rx_q     <= RX_PKT;
                    rx_err_q <= 1'b0;
                    if (a_err_q && rq_push) err_pkts <= err_pkts + 16'd1;
                    if (rq_drop) drop_pkts <= drop_pkts + 16'd1;
                end
                default: rx_q <= RX_PKT;
            endcase
        end
    end

    // reply FIFO
    wire rq_wi = rq_rd_q ^ rq_cnt_q[0];
    always_ff @(posedge clk) begin
        if (rst) begin
            rq_cnt_q <= '0;
            rq_rd_q  <= 1'b0;
        end else begin
            if (rq_push) begin
                rqf_type_q[rq_wi] <= a_type_q;
                rqf_slot_q[rq_wi] <= (rx_len_q >= 17'd4) ? p_slot8 : 8'd0;
                rqf_arg_q[rq_wi]  <= a_arg_q;
                rqf_seq_q[rq_wi]  <= (rx_len_q >= 17'd8) ? p_seq : 32'd0;
                rqf_w2_q[rq_wi]   <= a_w2_q;
                rqf_ip_q[rq_wi]   <= rx_ip_q;
                rqf_port_q[rq_wi] <= rx_port_q;
            end
            if (rq_pop) rq_rd_q <= !rq_rd_q;
            rq_cnt_q <= rq_cnt_q + {1'b0, rq_push} - {1'b0, rq_pop};
        end
    end

    // ---------------------------------------------------------------- issue
    logic          cmd_v_q;
    logic [SW-1:0] cmd_s_q;
    // round robin from the slot after the last one offered: a slot whose data complete while
    // lower slots keep completing is not passed over
    wire [SW-1:0] iss_pick = rr_pick(iss_q, cmd_s_q);
    wire iss_load = !cmd_v_q && iss_q != '0;
    assign m_cmd_valid = cmd_v_q;
    assign m_cmd_op    = d0_q[cmd_s_q][3:0];
    assign m_cmd_txid  = d0_q[cmd_s_q][13:8];
    assign m_cmd_flags = d0_q[cmd_s_q][19:16];
    assign m_cmd_attr  = d0_q[cmd_s_q][25:24];
    assign m_cmd_prio  = d0_q[cmd_s_q][27:26];
    assign m_cmd_tag   = 8'(cmd_s_q);
    assign m_cmd_lba   = lba_q[cmd_s_q];
    assign m_cmd_nlb   = nlb_q[cmd_s_q];
    assign m_cmd_dptr  = 32'(cmd_s_q) * 32'(SLOT_BYTES);
    assign m_cmd_aux   = d0_q[cmd_s_q][30] ? 32'(cmd_s_q) * 32'(SLOT_BYTES) + aux_q[cmd_s_q] : aux_q[cmd_s_q];

    // ---------------------------------------------------------------- completion
    wire [SW-1:0] c_slot   = s_cpl_tag[SW-1:0];
    wire          c_run    = s_cpl_tag < 8'(NSLOT) && st_q[c_slot] == S_RUN && !iss_q[c_slot]
                             && !(cmd_v_q && cmd_s_q == c_slot);
    assign s_cpl_ready = 1'b1;

    // ---------------------------------------------------------------- transmit
    typedef enum logic [2:0] {TX_IDLE, TX_NEXT, TX_NEXT2, TX_HDR, TX_PAY} tx_e;
    tx_e            tx_q;
    logic [SW-1:0]  tx_slot_q;
    logic [31:0]    tx_seq_q;
    logic [NCH-1:0] tx_mask_q;
    logic [7:0]     tx_sts_q;
    logic [31:0]    tx_res_q;
    logic           tx_cpl_q;                              // after the RDATA chunks: the CPL
    logic [31:0]    tx_w_q [3];                            // header words
    logic [1:0]     tx_hi_q, tx_hn_q;                      // header word index, count
    logic           tx_pay_q;                              // a payload follows the header
    logic [15:0]    tx_plen_q;                             // payload bytes
    logic [CW-1:0]  tx_ch_q;
    logic           tx_req_q;                              // payload read not yet requested
    logic [15:0]    tx_len_q, tx_dport_q;
    logic [31:0]    tx_ip_q;
    logic           tx_mid_q;                              // a slot's send paused for a reply
    logic [31:0]    tx_sip_q;                              // the paused send's host address, port
    logic [15:0]    tx_sport_q;
    logic [15:0]    tx_rlen_q;

    // round robin from the slot after the last one sent: with a core faster than the link, lower
    // slots turn DONE again while one is sent, and a lowest-first pick starved the highest slot
    // until the host's timeout
    wire [SW-1:0]   snd_pick = rr_pick(snd_q, tx_slot_q);
    logic [CW-1:0]  ch_pick;
    always_comb begin
        ch_pick = '0;
        for (int i = NCH - 1; i >= 0; i--) if (tx_mask_q[i]) ch_pick = CW'(i);
    end
    logic       tx_any_q;                                  // TX_NEXT found a chunk (tx_ch_q)
    wire [15:0] ch_bytes = (tx_rlen_q - {6'(tx_ch_q), 10'd0} >= 16'd1024) ? 16'd1024
                                                                        : tx_rlen_q - {6'(tx_ch_q), 10'd0};

    // the read streamer, shared by the core's reads (s_hrdq) and RDATA payloads
    logic        rd_req_v, rd_req_r;
    logic [29:0] rd_req_a;
    logic [13:0] rd_req_n;
    logic        own_q;                                    // 0 core, 1 transmit (the burst under way)
    logic        rd_busy_q;
    logic [BW-1:0] ram_ra;
    logic [31:0]   ram_rd;
    logic          rdd_v, rdd_r, rdd_last;
    logic [31:0]   rdd_data;
    wire tx_wants = tx_q == TX_PAY && tx_req_q;
    wire core_req = s_hrdq_valid && !tx_wants;
    assign rd_req_v     = !rd_busy_q && (tx_wants || s_hrdq_valid);
    assign rd_req_a     = tx_wants ? 30'({tx_slot_q, tx_ch_q, 8'd0}) : s_hrdq_addr[31:2];
    assign rd_req_n     = tx_wants ? 14'(tx_plen_q >> 2)
                                   : ((s_hrdq_len[15:2] == 14'd0) ? 14'd1 : s_hrdq_len[15:2]);
    assign s_hrdq_ready = !rd_busy_q && core_req && rd_req_r;
    assign m_hrdd_valid = rdd_v && rd_busy_q && !own_q;
    assign m_hrdd_data  = rdd_data;
    assign m_hrdd_last  = rdd_last;
    assign rdd_r        = rd_busy_q && (own_q ? (tx_q == TX_PAY && m_udp_ready) : m_hrdd_ready);

    always_ff @(posedge clk) begin
        if (rst) begin
            rd_busy_q <= 1'b0;
            own_q     <= 1'b0;
        end else begin
            if (rd_req_v && rd_req_r) begin
                rd_busy_q <= 1'b1;
                own_q     <= tx_wants;
            end
            if (rdd_v && rdd_r && rdd_last) rd_busy_q <= 1'b0;
        end
    end

    ats_udp_host_rd #(.WORDS(WORDS)) u_rd (
        .clk, .rst,
        .s_req_valid(rd_req_v), .s_req_ready(rd_req_r), .s_req_addr(rd_req_a), .s_req_count(rd_req_n),
        .ram_addr(ram_ra), .ram_data(ram_rd),
        .m_dat_valid(rdd_v), .m_dat_ready(rdd_r), .m_dat_data(rdd_data), .m_dat_last(rdd_last)
    );

    ats_udp_host_ram #(.DEPTH(WORDS)) u_ram (
        .clk, .wr_en(ram_we), .wr_addr(ram_wa), .wr_data(ram_wd), .rd_addr(ram_ra), .rd_data(ram_rd)
    );

    assign rq_pop = tx_q == TX_IDLE && rq_cnt_q != 2'd0;
    wire   tx_start_slot = tx_q == TX_IDLE && rq_cnt_q == 2'd0 && snd_q != '0;

    assign m_udp_valid      = (tx_q == TX_HDR) || (tx_q == TX_PAY && own_q && rd_busy_q && rdd_v);
    assign m_udp_data       = (tx_q == TX_HDR) ? tx_w_q[tx_hi_q] : rdd_data;
    assign m_udp_last       = (tx_q == TX_HDR) ? (!tx_pay_q && tx_hi_q == tx_hn_q) : rdd_last;
    // last_be only on the last beat: LiteEth's MAC in the PHY's clock (LiteEthLastHandler after its
    // 32-to-8 converter) ends the frame at the first byte whose last_be bit is set, last or not
    assign m_udp_last_be    = m_udp_last ? 4'b1000 : 4'b0000;
    assign m_udp_error      = 4'd0;
    assign m_udp_src_port   = LOCAL_PORT;
    assign m_udp_dst_port   = tx_dport_q;
    assign m_udp_ip_address = tx_ip_q;
    assign m_udp_length     = tx_len_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            tx_q     <= TX_IDLE;
            tx_req_q <= 1'b0;
            tx_hi_q  <= '0;
            tx_mid_q <= 1'b0;
            tx_slot_q <= '0;
        end else begin
            case (tx_q)
                TX_IDLE: begin
                    if (rq_cnt_q != 2'd0) begin
                        tx_w_q[0]  <= {8'd1, rqf_arg_q[rq_rd_q], rqf_slot_q[rq_rd_q], rqf_type_q[rq_rd_q]};
                        tx_w_q[1]  <= rqf_seq_q[rq_rd_q];
                        tx_w_q[2]  <= rqf_w2_q[rq_rd_q];
                        tx_hn_q    <= 2'd2;
                        tx_hi_q    <= '0;
                        tx_pay_q   <= 1'b0;
                        tx_len_q   <= 16'd12;
                        tx_ip_q    <= rqf_ip_q[rq_rd_q];
                        tx_dport_q <= rqf_port_q[rq_rd_q];
                        tx_q       <= TX_HDR;
                    end else if (snd_q != '0) begin
                        tx_slot_q  <= snd_pick;
                        tx_seq_q   <= seq_q[snd_pick];
                        tx_mask_q  <= smask_q[snd_pick];
                        tx_sts_q   <= sts_q[snd_pick];
                        tx_res_q   <= res_q[snd_pick];
                        tx_rlen_q  <= rlen_q[snd_pick];
                        tx_ip_q    <= ip_q[snd_pick];
                        tx_dport_q <= port_q[snd_pick];
                        tx_sip_q   <= ip_q[snd_pick];
                        tx_sport_q <= port_q[snd_pick];
                        tx_q       <= TX_NEXT;
                    end
                end
                TX_NEXT: begin
                    tx_ch_q  <= ch_pick;
                    tx_any_q <= tx_mask_q != '0;
                    tx_q     <= TX_NEXT2;
                end
                TX_NEXT2: begin
                    tx_hi_q <= '0;
                    tx_w_q[1] <= tx_seq_q;
                    if (tx_any_q) begin
                        tx_w_q[0]  <= {8'd1, 8'(tx_ch_q), 8'(tx_slot_q), T_RDATA};
                        tx_hn_q    <= 2'd1;
                        tx_pay_q   <= 1'b1;
                        tx_plen_q  <= ch_bytes;
                        tx_len_q   <= 16'd8 + ch_bytes;
                        tx_mask_q[tx_ch_q] <= 1'b0;
                        tx_q       <= TX_HDR;
                    end else begin
                        tx_w_q[0]  <= {8'd1, tx_sts_q, 8'(tx_slot_q), T_CPL};
                        tx_w_q[2]  <= tx_res_q;
                        tx_hn_q    <= 2'd2;
                        tx_pay_q   <= 1'b0;
                        tx_len_q   <= 16'd12;
                        tx_cpl_q   <= 1'b1;
                        tx_q       <= TX_HDR;
                    end
                end
                TX_HDR: if (m_udp_ready) begin
                    tx_hi_q <= tx_hi_q + 2'd1;
                    if (tx_hi_q == tx_hn_q) begin
                        if (tx_pay_q) begin
                            tx_q     <= TX_PAY;
                            tx_req_q <= 1'b1;
                        end else if (tx_cpl_q) begin
                            tx_cpl_q <= 1'b0;
                            tx_q     <= TX_IDLE;
                        end else if (tx_mid_q && rq_cnt_q != 2'd0) begin
                            tx_q       <= TX_IDLE;             // another reply first (paused send kept)
                        end else if (tx_mid_q) begin           // the replies sent: the paused send goes on
                            tx_mid_q   <= 1'b0;
                            tx_ip_q    <= tx_sip_q;
                            tx_dport_q <= tx_sport_q;
                            tx_q       <= TX_NEXT;
                        end else begin
                            tx_q     <= TX_IDLE;
                        end
                    end
                end
                TX_PAY: begin
                    if (tx_wants && rd_req_r && !rd_busy_q) tx_req_q <= 1'b0;
                    // after each RDATA packet the queued replies go first (the receiver never
                    // waits for them: a reply waits at most one chunk)
                    if (m_udp_valid && m_udp_ready && m_udp_last) begin
                        tx_mid_q <= rq_cnt_q != 2'd0;
                        tx_q     <= (rq_cnt_q != 2'd0) ? TX_IDLE : TX_NEXT;
                    end
                end
                default: tx_q <= TX_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------- slot table updates
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int i = 0; i < NSLOT; i++) begin
                st_q[i]    <= S_FREE;
                seq_q[i]   <= '0;
                got_q[i]   <= '0;
                smask_q[i] <= '0;
            end
            iss_q      <= '0;
            snd_q      <= '0;
            cmd_v_q    <= 1'b0;
            cmd_s_q    <= '0;
            stray_cpls <= '0;
        end else begin
            // issue: offer the lowest slot whose data are complete; taken -> stays RUN until its CPL
            if (iss_load) begin
                cmd_v_q <= 1'b1;
                cmd_s_q <= iss_pick;
                iss_q[iss_pick] <= 1'b0;
            end else if (cmd_v_q && m_cmd_ready) begin
                cmd_v_q <= 1'b0;
            end
            // transmit takes a slot's send
            if (tx_start_slot) snd_q[snd_pick] <= 1'b0;
            // completion
            if (s_cpl_valid) begin
                if (c_run) begin
                    st_q[c_slot]    <= S_DONE;
                    sts_q[c_slot]   <= s_cpl_status;
                    res_q[c_slot]   <= s_cpl_result;
                    snd_q[c_slot]   <= 1'b1;
                    smask_q[c_slot] <= chmask(rlen_q[c_slot]);
                end else begin
                    stray_cpls <= stray_cpls + 16'd1;
                end
            end
            // receive
            if (ev_go) begin
                if (a_accept_q) begin
                    st_q[p_slot]    <= (h_q[3][15:0] == 16'd0) ? S_RUN : S_LOAD;
                    iss_q[p_slot]   <= h_q[3][15:0] == 16'd0;
                    seq_q[p_slot]   <= p_seq;
                    wlen_q[p_slot]  <= h_q[3][15:0];
                    rlen_q[p_slot]  <= h_q[3][31:16];
                    got_q[p_slot]   <= '0;
                    d0_q[p_slot]    <= h_q[4];
                    nlb_q[p_slot]   <= h_q[5][15:0];
                    lba_q[p_slot]   <= {h_q[5][31:16], h_q[6]};
                    aux_q[p_slot]   <= h_q[7];
                    ip_q[p_slot]    <= rx_ip_q;
                    port_q[p_slot]  <= rx_port_q;
                    snd_q[p_slot]   <= 1'b0;
                end
                if (a_mark_q) begin
                    got_q[p_slot][d_ch] <= 1'b1;
                    if (a_last_chunk_q) begin
                        st_q[p_slot]  <= S_RUN;
                        iss_q[p_slot] <= 1'b1;
                    end
                end
                if (a_resend_q) begin
                    snd_q[p_slot]   <= 1'b1;
                    smask_q[p_slot] <= h_q[2][NCH-1:0] & k_rmask_q;
                    ip_q[p_slot]    <= rx_ip_q;
                    port_q[p_slot]  <= rx_port_q;
                end
            end
        end
    end

`ifndef SYNTHESIS
    // the core completes only commands it was given: a CPL for a slot not running is counted, and
    // the transmit never starts a slot's send while that slot is not DONE
    always_ff @(posedge clk) begin
        if (!rst && tx_start_slot) assert (st_q[snd_pick] == S_DONE)
            else $error("ats_udp_host: send of slot %0d not DONE", snd_pick);
        if (!rst && tx_q == TX_IDLE && tx_mid_q) assert (rq_cnt_q != 2'd0)
            else $error("ats_udp_host: a paused send with no reply to send");
    end
`endif

    wire unused = &{1'b0, s_hwr_addr[1:0], hwr_word[29:BW], txid[5:0], flags[3:0], ap[6], ap[3:0], s_udp_dst_port, s_udp_length, hwr_addr_q[0], s_hrdq_addr[1:0], s_hrdq_len[1:0], core_req};
endmodule

`resetall
