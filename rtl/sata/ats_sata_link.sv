// SPDX-License-Identifier: Apache-2.0
// ats_sata_link: SATA link layer, device side, on a 32-bit datapath (one dword a clock each way,
// 150 MHz for Gen3). Turns FIS dwords into frames on the PHY side (SOF, scrambled payload, CRC,
// EOF, WTRM) and back, with the X_RDY/R_RDY handshake, HOLD/HOLDA flow control both ways, R_OK/R_ERR,
// SYNC escape, CONT (repeated-primitive suppression) on receive and, with TX_CONT, on transmit.
// Collisions (both sides X_RDY): the device backs off and receives (the host wins).
// Received FISes go through a FIFO (RX_FIFO_DEPTH dwords); HOLD is sent while it is nearly full.
// Every state and transition: rtl/sata/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_sata_link #(
    parameter int RX_FIFO_DEPTH = 512,  // received dwords buffered; power of two, 64..1024
    parameter int HOLD_SLACK    = 40,   // HOLD is sent while fewer than this many FIFO entries are
                                        // free: covers the peer's HOLD->HOLDA latency (<= 20 dwords)
    parameter bit TX_CONT       = 1'b1, // transmit repeated primitives as P P CONT junk...
    parameter int PEER_TIMEOUT  = 64    // our frame is aborted (SYNC) after this many consecutive
                                        // R_RDY/X_RDY received after our SOF (the peer lost the SOF)
) (
    input  wire logic        clk,
    input  wire logic        rst,             // synchronous, active high
    // PHY side (after 8b/10b decode, ALIGN may be left in; one dword a clock)
    input  wire logic        phy_ready,       // link up (OOB done); low: as if SYNC were received
    input  wire logic [31:0] phy_rx_data,     // first byte on the wire in bits 7:0
    input  wire logic [3:0]  phy_rx_charisk,  // bit i: byte i is a K character
    output wire logic [31:0] phy_tx_data,
    output wire logic [3:0]  phy_tx_charisk,
    // received FIS dwords (CRC removed); m_rx_status on the last dword of each FIS
    output wire logic        m_rx_valid,
    input  wire logic        m_rx_ready,
    output wire logic [31:0] m_rx_data,
    output wire logic        m_rx_last,
    output wire logic [1:0]  m_rx_status,     // 0 good (R_OK sent), 1 bad CRC, 2 aborted by SYNC,
                                              // 3 framing (no EOF, overflow, no payload): 1..3 R_ERR/none
    // FIS dwords to send (the link appends the CRC)
    input  wire logic        s_tx_valid,
    output wire logic        s_tx_ready,
    input  wire logic [31:0] s_tx_data,
    input  wire logic        s_tx_last,
    // one result per FIS sent
    output wire logic        m_txr_valid,
    input  wire logic        m_txr_ready,
    output wire logic [1:0]  m_txr_status,    // 0 R_OK, 1 R_ERR, 2 aborted (SYNC, PHY down, timeout)
    output wire logic        link_idle        // in the idle state (sending SYNC)
);
    localparam int LVL_W = $clog2(RX_FIFO_DEPTH) + 1;
    localparam int TMO_W = $clog2(PEER_TIMEOUT + 1);
    // package names used here (local aliases: Yosys reads no `import` inside a module)
    localparam int PW = ats_sata_pkg::PW;
    localparam logic [PW-1:0] P_NONE = ats_sata_pkg::P_NONE, P_ALIGN = ats_sata_pkg::P_ALIGN,
        P_CONT = ats_sata_pkg::P_CONT, P_SYNC = ats_sata_pkg::P_SYNC, P_R_RDY = ats_sata_pkg::P_R_RDY,
        P_R_OK = ats_sata_pkg::P_R_OK, P_R_ERR = ats_sata_pkg::P_R_ERR, P_R_IP = ats_sata_pkg::P_R_IP,
        P_X_RDY = ats_sata_pkg::P_X_RDY, P_WTRM = ats_sata_pkg::P_WTRM, P_SOF = ats_sata_pkg::P_SOF,
        P_EOF = ats_sata_pkg::P_EOF, P_HOLD = ats_sata_pkg::P_HOLD, P_HOLDA = ats_sata_pkg::P_HOLDA,
        P_PM = ats_sata_pkg::P_PM, P_OTHER = ats_sata_pkg::P_OTHER;
    localparam logic [31:0] PRIM_SYNC = ats_sata_pkg::PRIM_SYNC, PRIM_CONT = ats_sata_pkg::PRIM_CONT,
        CRC_SEED = ats_sata_pkg::CRC_SEED;
    localparam logic [15:0] SCR_SEED = ats_sata_pkg::SCR_SEED;
    // {LFSR state, XOR word} for the first data dword after SOF: scr_step(16'hFFFF), written out
    // (Yosys evaluates no looping constant function); checked at elaboration in simulation
    localparam logic [47:0] SCR0 = {16'h1F73, 32'hC2D2_768D};
    localparam logic [31:0] SCR0_MW = 32'h830A_6E4D;          // crc_mul(SCR0[31:0])

    if ((RX_FIFO_DEPTH & (RX_FIFO_DEPTH - 1)) != 0) begin : g_check_pow2
        $fatal(1, "ats_sata_link: RX_FIFO_DEPTH must be a power of two (%m)");
    end
    if (RX_FIFO_DEPTH < 64 || RX_FIFO_DEPTH > 1024) begin : g_check_depth
        $fatal(1, "ats_sata_link: RX_FIFO_DEPTH must be 64..1024 (%m)");
    end
    if (HOLD_SLACK < 24 || 2 * HOLD_SLACK > RX_FIFO_DEPTH) begin : g_check_slack
        $fatal(1, "ats_sata_link: HOLD_SLACK must be 24..RX_FIFO_DEPTH/2 (%m)");
    end
`ifndef SYNTHESIS
    // the tables of the package against its bit-serial definitions, and SCR0
    initial begin : check_tables
        logic [31:0] x;
        if (ats_sata_pkg::scr_step_serial(SCR_SEED) != SCR0) $fatal(1, "ats_sata_link: SCR0 is wrong (%m)");
        if (ats_sata_pkg::crc_next_serial(32'd0, SCR0[31:0]) != SCR0_MW)
            $fatal(1, "ats_sata_link: SCR0_MW is wrong (%m)");
        for (int i = 0; i < 64; i++) begin
            x = 32'h9E37_79B9 * (i + 1);
            if (ats_sata_pkg::crc_next(x, ~x ^ 32'(i)) != ats_sata_pkg::crc_next_serial(x, ~x ^ 32'(i)))
                $fatal(1, "ats_sata_link: CRC_M is wrong (%m)");
            if (ats_sata_pkg::scr_step(x[15:0]) != ats_sata_pkg::scr_step_serial(x[15:0]))
                $fatal(1, "ats_sata_link: SCR_M is wrong (%m)");
            if (ats_sata_pkg::scr_mw(x[15:0]) != ats_sata_pkg::crc_next_serial(32'd0,
                    32'(ats_sata_pkg::scr_step_serial(x[15:0]))))
                $fatal(1, "ats_sata_link: SCR_MW is wrong (%m)");
        end
    end
`endif
    if (PEER_TIMEOUT < 32) begin : g_check_tmo
        $fatal(1, "ats_sata_link: PEER_TIMEOUT must be at least 32 (a round trip) (%m)");
    end

    localparam logic [1:0] RXS_OK = 2'd0, RXS_CRC = 2'd1, RXS_ABORT = 2'd2, RXS_FRAMING = 2'd3;
    localparam logic [1:0] TXR_OK = 2'd0, TXR_ERR = 2'd1, TXR_ABORT = 2'd2;

    typedef enum logic [3:0] {
        ST_IDLE,      // L_IDLE (SYNC, or PMNAK to PMREQ)
        ST_TX_XRDY,   // L_SendChkRdy (X_RDY)
        ST_TX_SOF,    // L_SendSOF
        ST_TX_DATA,   // L_SendData / L_SendHold (data, or HOLD when the user has none)
        ST_TX_RHOLD,  // L_RcvrHold (HOLDA)
        ST_TX_CRC,    // L_SendCRC
        ST_TX_EOF,    // L_SendEOF
        ST_TX_WAIT,   // L_Wait (WTRM)
        ST_TX_DRAIN,  // aborted: SYNC, drop the rest of the user's FIS
        ST_RX_RDY,    // L_RcvChkRdy (R_RDY)
        ST_RX_DATA,   // L_RcvData / L_Hold / L_RcvHold (R_IP, HOLD or HOLDA)
        ST_RX_END,    // L_RcvEOF / L_GoodCRC: R_IP until the last dword is in the FIFO
        ST_RX_OK,     // L_GoodEnd (R_OK)
        ST_RX_ERR     // L_BadEnd (R_ERR)
    } state_e;

    // ---- stage A: PHY input registers -----------------------------------------------------------
    logic [31:0] a_data_q;
    logic [3:0]  a_k_q;
    logic        a_up_q;

    // ---- stage M: one match flag per primitive; stage D: its class ---------------------------------
    localparam int NDEC = ats_sata_pkg::NDEC;
    localparam logic [NDEC*32-1:0] DEC_WORD  = ats_sata_pkg::DEC_WORD;
    localparam logic [NDEC*PW-1:0] DEC_CLASS = ats_sata_pkg::DEC_CLASS;
    logic [NDEC-1:0] a_lo_q, a_hi_q; // stage A: each primitive's 16-bit halves matched (timing: a
                                     // 32-bit compare per primitive in one clock missed 150 MHz)
    logic [31:0]     m_data_q;
    logic [NDEC-1:0] m_match_q;
    logic            m_k0_q, m_k1_q, m_up_q;   // charisk 0000 / 0001
    logic [31:0]     d_data_q;
    logic [PW-1:0]   d_p_q, d_p;
    logic            d_up_q;
    always_comb begin
        d_p = P_OTHER;
        if (m_match_q != '0) begin
            d_p = P_NONE;
            for (int i = 0; i < NDEC; i++) begin
                if (m_match_q[i]) d_p = d_p | DEC_CLASS[PW*i +: PW];
            end
        end
        if (m_k0_q) d_p = P_NONE;
        else if (!m_k1_q) d_p = P_OTHER;
    end

    // ---- stage B: ALIGN removal, CONT expansion, descrambling ----------------------------------
    logic [PW-1:0] cont_last_q;      // last primitive received other than ALIGN and CONT
    logic        cont_q;           // after CONT: data dwords are junk until the next primitive
    logic [15:0] rscr_state_q;
    logic [31:0] rscr_word_q;      // XOR word of the next received data dword
    logic [31:0] rscr_mw_q;        // crc_mul(rscr_word_q)
    logic [PW-1:0] b_prim;
    logic        b_isdata;

    always_comb begin
        b_prim = P_NONE;
        b_isdata = 1'b0;
        if (!d_up_q) begin
            b_prim = P_SYNC;
        end else begin
            case (d_p_q)
                P_ALIGN: ;                                  // removed: no dword this cycle
                P_CONT:  b_prim = cont_last_q;              // the last primitive goes on
                P_NONE:  if (cont_q) b_prim = cont_last_q;  // junk after CONT
                         else b_isdata = 1'b1;
                default: b_prim = d_p_q;
            endcase
        end
    end

    // ---- stage C registers: what the state machine sees ------------------------------------------
    // the received primitive in effect, one flag per primitive the state machine looks at
    logic        e_sync_q, e_hold_q, e_r_rdy_q, e_r_ok_q, e_r_err_q, e_x_rdy_q, e_sof_q, e_eof_q,
                 e_wtrm_q, e_pm_q, e_none_q;
    logic        e_peer_hold_q;    // the peer holds: HOLD, and nothing but data-less cycles since
    logic        e_isdata_q;       // a data dword, descrambled in e_data_q
    logic [31:0] e_data_q;
    logic [31:0] e_md_q;           // crc_next(0, e_data_q)
    logic        e_up_q;

    always_ff @(posedge clk) begin
        a_data_q <= phy_rx_data;
        a_k_q    <= phy_rx_charisk;
        m_data_q <= a_data_q;
        m_k0_q   <= (a_k_q == 4'b0000);
        m_k1_q   <= (a_k_q == 4'b0001);
        for (int i = 0; i < NDEC; i++) begin
            a_lo_q[i]    <= (phy_rx_data[15:0]  == DEC_WORD[32*i +: 16]);
            a_hi_q[i]    <= (phy_rx_data[31:16] == DEC_WORD[32*i + 16 +: 16]);
            m_match_q[i] <= a_lo_q[i] && a_hi_q[i];
        end
        d_data_q <= m_data_q;
        d_p_q    <= d_p;
        e_data_q <= d_data_q ^ rscr_word_q;
        e_md_q   <= ats_sata_pkg::crc_mul(d_data_q) ^ rscr_mw_q;   // CRC contribution M*(d ^ w)
        if (d_up_q && d_p_q == P_SOF) begin
            {rscr_state_q, rscr_word_q} <= SCR0;
            rscr_mw_q <= SCR0_MW;
        end else if (b_isdata) begin
            {rscr_state_q, rscr_word_q} <= ats_sata_pkg::scr_step(rscr_state_q);
            rscr_mw_q <= ats_sata_pkg::scr_mw(rscr_state_q);
        end
        if (rst) begin
            a_up_q      <= 1'b0;
            m_up_q      <= 1'b0;
            d_up_q      <= 1'b0;
            cont_q      <= 1'b0;
            cont_last_q <= P_SYNC;
            {e_sync_q, e_hold_q, e_r_rdy_q, e_r_ok_q, e_r_err_q, e_x_rdy_q, e_sof_q, e_eof_q,
             e_wtrm_q, e_pm_q, e_none_q, e_peer_hold_q} <= 12'b1000_0000_0000;
            e_isdata_q  <= 1'b0;
            e_up_q      <= 1'b0;
        end else begin
            a_up_q     <= phy_ready;
            m_up_q     <= a_up_q;
            d_up_q     <= m_up_q;
            e_sync_q   <= (b_prim == P_SYNC);
            e_hold_q   <= (b_prim == P_HOLD);
            e_r_rdy_q  <= (b_prim == P_R_RDY);
            e_r_ok_q   <= (b_prim == P_R_OK);
            e_r_err_q  <= (b_prim == P_R_ERR);
            e_x_rdy_q  <= (b_prim == P_X_RDY);
            e_sof_q    <= (b_prim == P_SOF);
            e_eof_q    <= (b_prim == P_EOF);
            e_wtrm_q   <= (b_prim == P_WTRM);
            e_pm_q     <= (b_prim == P_PM);
            e_none_q   <= (b_prim == P_NONE);
            e_peer_hold_q <= (b_prim == P_HOLD) || (e_peer_hold_q && b_prim == P_NONE && !b_isdata);
            e_isdata_q <= b_isdata;
            e_up_q     <= d_up_q;
            if (!d_up_q) begin
                cont_q      <= 1'b0;
                cont_last_q <= P_SYNC;
            end else if (d_p_q == P_CONT) begin
                cont_q <= 1'b1;
            end else if (d_p_q != P_ALIGN && d_p_q != P_NONE) begin
                cont_q      <= 1'b0;
                cont_last_q <= d_p_q;
            end
        end
    end

    // ---- receive FIFO ------------------------------------------------------------------------------
    logic              fifo_wr, fifo_ready;
    logic [34:0]       fifo_din, fifo_dout;
    logic [LVL_W-1:0]  fifo_level;

    ats_sata_rx_fifo #(.WIDTH(35), .DEPTH(RX_FIFO_DEPTH)) u_rx_fifo (
        .clk(clk), .rst(rst),
        .s_valid(fifo_wr), .s_ready(fifo_ready), .s_data(fifo_din),
        .m_valid(m_rx_valid), .m_ready(m_rx_ready), .m_data(fifo_dout),
        .level(fifo_level));
    assign m_rx_data   = fifo_dout[31:0];
    assign m_rx_last   = fifo_dout[32];
    assign m_rx_status = fifo_dout[34:33];

    // nearly full: HOLD while receiving, and no R_RDY to a new X_RDY (registered: one clock late,
    // which HOLD_SLACK covers)
    logic rx_full_soon;
    always_ff @(posedge clk) begin
        if (rst) rx_full_soon <= 1'b0;
        else rx_full_soon <= (fifo_level >= LVL_W'(RX_FIFO_DEPTH - HOLD_SLACK));
    end

    // ---- transmit queue: two entries between s_tx and the state machine. Each dword is stored with
    // its CRC contribution M*d (the CRC step is linear: crc_next(c, d) = crc_next(c, 0) ^ crc_next(0, d)),
    // so that the CRC loop is one half-size XOR per clock.
    logic [31:0] q_data_q [2];
    logic [31:0] q_md_q [2];
    logic [1:0]  q_last_q;
    logic [1:0]  q_cnt_q;
    logic        q_rp_q, q_wp_q;
    logic        q_pop;
    wire logic        q_push = s_tx_valid && s_tx_ready;
    wire logic        hv     = (q_cnt_q != 2'd0);        // head valid
    wire logic [31:0] hd     = q_data_q[q_rp_q];
    wire logic [31:0] hmd    = q_md_q[q_rp_q];
    wire logic        hl     = q_last_q[q_rp_q];
    assign s_tx_ready = (q_cnt_q != 2'd2);
    always_ff @(posedge clk) begin
        if (q_push) begin
            q_data_q[q_wp_q] <= s_tx_data;
            q_md_q[q_wp_q]   <= ats_sata_pkg::crc_mul(s_tx_data);
            q_last_q[q_wp_q] <= s_tx_last;
        end
        if (rst) begin
            q_cnt_q <= '0;
            q_rp_q  <= 1'b0;
            q_wp_q  <= 1'b0;
        end else begin
            q_cnt_q <= q_cnt_q + 2'(q_push) - 2'(q_pop);
            if (q_push) q_wp_q <= !q_wp_q;
            if (q_pop) q_rp_q <= !q_rp_q;
        end
    end

    // ---- state ---------------------------------------------------------------------------------------
    (* fsm_encoding = "one-hot" *) state_e st_q;   // one-hot in synthesis: fewer levels
    state_e      st_d;
    // transmit
    logic [31:0] tcrc_q;
    logic [15:0] tscr_state_q;
    logic [31:0] tscr_word_q;
    logic        tx_done_q;        // the user's last dword of this FIS was taken
    logic [TMO_W-1:0] tmo_q;
    logic        txr_valid_q;
    logic [1:0]  txr_status_q;
    // receive
    logic [31:0] rcrc_q;
    logic [31:0] h0_q, h1_q;       // the two newest data dwords (h1 newest): the CRC is one of them
    logic        h0_v_q, h1_v_q;
    logic        rx_ovf_q;
    logic [1:0]  rx_code_q;
    // output (CONT stage)
    logic [PW-1:0] t_last_q;         // last primitive the state machine sent (P_NONE after data)
    logic [1:0]  t_rep_q;          // 0: sent once, 1: twice, 2: CONT sent, junk follows
    logic [15:0] jscr_state_q;     // junk generator (a scrambler LFSR of its own)
    logic [31:0] jword_q;          // the next junk dword
    logic [31:0] tx_data_q;
    logic [3:0]  tx_k_q;

    // combinational outputs of the state machine
    logic        o_data;           // send o_word as data
    logic [31:0] o_word;
    logic [PW-1:0] o_prim;           // else send this primitive
    logic        o_raw;            // never replaced by CONT/junk
    logic        tx_sof, tx_take, tx_adv, tx_drain_take;
    logic        txr_set;
    logic [1:0]  txr_code;
    logic        rx_sof, rx_dat, rx_end, rx_term;
    logic [1:0]  rx_end_code;

    wire logic sync_in    = e_sync_q;
    // the data dword to send if the state machine sends data: chosen by the state alone (timing)
    assign o_word = ((st_q == ST_TX_CRC) ? tcrc_q : hd) ^ tscr_word_q;
    wire logic up         = e_up_q;
    logic      tmo_hit;    // tmo_q reached PEER_TIMEOUT (registered with it)
    wire logic peer_hold  = e_peer_hold_q;

    assign q_pop        = tx_take || tx_drain_take;
    assign m_txr_valid  = txr_valid_q;
    assign m_txr_status = txr_status_q;
    assign link_idle    = (st_q == ST_IDLE);

    always_comb begin
        st_d          = st_q;
        o_data        = 1'b0;
        o_prim        = P_SYNC;
        o_raw         = 1'b0;
        tx_sof        = 1'b0;
        tx_take       = 1'b0;
        tx_adv        = 1'b0;
        tx_drain_take = 1'b0;
        txr_set       = 1'b0;
        txr_code      = TXR_OK;
        rx_sof        = 1'b0;
        rx_dat        = 1'b0;
        rx_end        = 1'b0;
        rx_end_code   = RXS_OK;
        rx_term       = 1'b0;
        unique case (st_q)
            ST_IDLE: begin
                o_prim = e_pm_q ? P_PM : P_SYNC;
                if (up && e_x_rdy_q) begin
                    if (!rx_full_soon) st_d = ST_RX_RDY;
                end else if (up && hv && !txr_valid_q && !e_pm_q) begin
                    st_d = ST_TX_XRDY;
                end
            end
            ST_TX_XRDY: begin
                o_prim = P_X_RDY;
                if (!up) begin
                    st_d = ST_IDLE;
                end else if (e_x_rdy_q) begin          // collision: the host wins
                    st_d = rx_full_soon ? ST_IDLE : ST_RX_RDY;
                end else if (e_r_rdy_q) begin
                    st_d = ST_TX_SOF;
                end
            end
            ST_TX_SOF: begin
                tx_sof = 1'b1;
                o_raw  = 1'b1;
                if (sync_in) begin
                    st_d = ST_TX_DRAIN;
                end else begin
                    o_prim = P_SOF;
                    st_d   = ST_TX_DATA;
                end
            end
            ST_TX_DATA: begin
                o_raw = 1'b1;              // HOLD/HOLDA here are never suppressed: data may follow
                if (sync_in || tmo_hit) begin
                    st_d = ST_TX_DRAIN;
                end else if (e_hold_q) begin
                    o_prim = P_HOLDA;
                    st_d   = ST_TX_RHOLD;
                end else if (hv) begin
                    o_data  = 1'b1;
                    tx_take = 1'b1;
                    tx_adv  = 1'b1;
                    if (hl) st_d = ST_TX_CRC;
                end else begin
                    o_prim = P_HOLD;
                end
            end
            ST_TX_RHOLD: begin
                o_prim = P_HOLDA;
                o_raw  = 1'b1;
                if (sync_in || tmo_hit) begin
                    o_prim = P_SYNC;
                    st_d   = ST_TX_DRAIN;
                end else if (!e_none_q && !e_hold_q) begin
                    st_d = ST_TX_DATA;
                end
            end
            ST_TX_CRC: begin
                if (sync_in || tmo_hit) begin
                    st_d = ST_TX_DRAIN;
                end else begin
                    o_data = 1'b1;
                    tx_adv = 1'b1;
                    st_d   = ST_TX_EOF;
                end
            end
            ST_TX_EOF: begin
                if (sync_in || tmo_hit) begin
                    st_d = ST_TX_DRAIN;
                end else begin
                    o_prim = P_EOF;
                    o_raw  = 1'b1;
                    st_d   = ST_TX_WAIT;
                end
            end
            ST_TX_WAIT: begin
                o_prim = P_WTRM;
                if (e_r_ok_q) begin
                    txr_set  = 1'b1;
                    txr_code = TXR_OK;
                    o_prim   = P_SYNC;
                    st_d     = ST_IDLE;
                end else if (e_r_err_q) begin
                    txr_set  = 1'b1;
                    txr_code = TXR_ERR;
                    o_prim   = P_SYNC;
                    st_d     = ST_IDLE;
                end else if (sync_in || tmo_hit) begin
                    txr_set  = 1'b1;
                    txr_code = TXR_ABORT;
                    o_prim   = P_SYNC;
                    st_d     = ST_IDLE;
                end
            end
            ST_TX_DRAIN: begin
                o_prim = P_SYNC;
                tx_drain_take = !tx_done_q && hv;
                if (tx_done_q || (hv && hl)) begin
                    txr_set  = 1'b1;
                    txr_code = TXR_ABORT;
                    st_d     = ST_IDLE;
                end
            end
            ST_RX_RDY: begin
                o_prim = P_R_RDY;
                if (!up) begin
                    st_d = ST_IDLE;
                end else if (e_sof_q) begin
                    rx_sof = 1'b1;
                    o_prim = P_R_IP;
                    st_d   = ST_RX_DATA;
                end else if (!e_none_q && !e_x_rdy_q) begin
                    o_prim = P_SYNC;
                    st_d   = ST_IDLE;
                end
            end
            ST_RX_DATA: begin
                o_prim = peer_hold ? P_HOLDA : (rx_full_soon ? P_HOLD : P_R_IP);
                rx_dat = e_isdata_q;
                if (sync_in) begin
                    rx_end      = 1'b1;
                    rx_end_code = RXS_ABORT;
                    o_prim      = P_SYNC;
                    st_d        = ST_RX_END;
                end else if (e_eof_q) begin
                    rx_end      = 1'b1;
                    rx_end_code = rx_ovf_q ? RXS_FRAMING : (rcrc_q == 32'd0) ? RXS_OK : RXS_CRC;
                    o_prim      = P_R_IP;
                    st_d        = ST_RX_END;
                end else if (e_wtrm_q) begin
                    rx_end      = 1'b1;
                    rx_end_code = RXS_FRAMING;
                    o_prim      = P_R_IP;
                    st_d        = ST_RX_END;
                end
            end
            ST_RX_END: begin
                o_prim = (rx_code_q == RXS_ABORT) ? P_SYNC : P_R_IP;
                if (!(h0_v_q || h1_v_q) || fifo_ready) begin
                    rx_term = h0_v_q || h1_v_q;
                    if (rx_code_q == RXS_ABORT) st_d = ST_IDLE;
                    else if (rx_code_q == RXS_OK && h0_v_q) st_d = ST_RX_OK;
                    else st_d = ST_RX_ERR;
                end
            end
            ST_RX_OK: begin
                o_prim = P_R_OK;
                if (sync_in) st_d = ST_IDLE;
            end
            ST_RX_ERR: begin
                o_prim = P_R_ERR;
                if (sync_in) st_d = ST_IDLE;
            end
            default: st_d = ST_IDLE;
        endcase
    end

    // FIFO write: the older held dword on each new data dword; the terminator at the frame's end
    // (the data written is chosen by the state alone, not by the FIFO's readiness: timing)
    logic [1:0] term_code;
    always_comb begin
        term_code = rx_code_q;
        if (rx_code_q == RXS_OK && !h0_v_q) term_code = RXS_FRAMING;   // CRC dword only
        if (st_q == ST_RX_END) fifo_din = {term_code, 1'b1, h0_v_q ? h0_q : h1_q};
        else fifo_din = {2'b00, 1'b0, h0_q};
        fifo_wr = (rx_dat && h0_v_q && fifo_ready) || rx_term;
    end

    // output pipeline register P (what the state machine chose), then the CONT stage, which
    // suppresses repeats of a primitive as P P CONT junk junk ...
    logic        p_data_q, p_raw_q;
    logic [31:0] p_word_q;
    logic [PW-1:0] p_prim_q;
    logic        sup;
    logic [31:0] out_data;
    logic [3:0]  out_k;
    always_comb begin
        sup = TX_CONT && !p_data_q && !p_raw_q && (p_prim_q == t_last_q)
              && p_prim_q != P_SOF && p_prim_q != P_EOF && p_prim_q != P_NONE;
        out_data = ats_sata_pkg::prim_word(p_prim_q);
        out_k    = 4'b0001;
        if (p_data_q) begin
            out_data = p_word_q;
            out_k    = 4'b0000;
        end else if (sup && t_rep_q == 2'd1) begin
            out_data = PRIM_CONT;
        end else if (sup && t_rep_q == 2'd2) begin
            out_data = jword_q;
            out_k    = 4'b0000;
        end
    end
    assign phy_tx_data    = tx_data_q;
    assign phy_tx_charisk = tx_k_q;

    always_ff @(posedge clk) begin
        tx_data_q <= out_data;
        tx_k_q    <= out_k;
        p_word_q  <= o_word;
        p_prim_q  <= o_prim;
        p_raw_q   <= o_raw;
        // transmit CRC and scrambler
        if (tx_sof) begin
            tcrc_q <= CRC_SEED;
            {tscr_state_q, tscr_word_q} <= SCR0;
        end else begin
            if (tx_take) tcrc_q <= ats_sata_pkg::crc_mul(tcrc_q) ^ hmd;
            if (tx_adv) {tscr_state_q, tscr_word_q} <= ats_sata_pkg::scr_step(tscr_state_q);
        end
        // receive CRC and the two held dwords
        if (rx_sof) begin
            rcrc_q <= CRC_SEED;
        end else if (rx_dat) begin
            rcrc_q <= ats_sata_pkg::crc_mul(rcrc_q) ^ e_md_q;
        end
        if (rx_dat) begin
            h0_q <= h1_q;
            h1_q <= e_data_q;
        end
        if (rx_end) rx_code_q <= rx_end_code;
        if (sup && t_rep_q == 2'd2) {jscr_state_q, jword_q} <= ats_sata_pkg::scr_step(jscr_state_q);
        if (rst) begin
            st_q         <= ST_IDLE;
            tx_data_q    <= PRIM_SYNC;
            tx_k_q       <= 4'b0001;
            p_data_q     <= 1'b0;
            tx_done_q    <= 1'b0;
            tmo_q        <= '0;
            tmo_hit      <= 1'b0;
            txr_valid_q  <= 1'b0;
            txr_status_q <= TXR_OK;
            h0_v_q       <= 1'b0;
            h1_v_q       <= 1'b0;
            rx_ovf_q     <= 1'b0;
            t_last_q     <= P_SYNC;
            t_rep_q      <= 2'd0;
            {jscr_state_q, jword_q} <= SCR0;
        end else begin
            st_q <= st_d;
            // result of the FIS sent
            if (txr_set) begin
                txr_valid_q  <= 1'b1;
                txr_status_q <= txr_code;
            end else if (m_txr_ready) begin
                txr_valid_q <= 1'b0;
            end
            if (tx_sof) tx_done_q <= 1'b0;
            else if ((tx_take || tx_drain_take) && hl) tx_done_q <= 1'b1;
            // the peer lost our SOF if it keeps sending R_RDY/X_RDY
            if (tx_sof) begin
                tmo_q   <= '0;
                tmo_hit <= 1'b0;
            end else if (e_r_rdy_q || e_x_rdy_q) begin
                if (!tmo_hit) tmo_q <= tmo_q + 1'b1;
                if (tmo_q == TMO_W'(PEER_TIMEOUT - 1)) tmo_hit <= 1'b1;
            end else if (!e_none_q) begin
                tmo_q   <= '0;
                tmo_hit <= 1'b0;
            end
            // receive frame
            if (rx_sof) begin
                h0_v_q   <= 1'b0;
                h1_v_q   <= 1'b0;
                rx_ovf_q <= 1'b0;
            end else if (rx_dat) begin
                h0_v_q <= h1_v_q;
                h1_v_q <= 1'b1;
                if (h0_v_q && !fifo_ready) rx_ovf_q <= 1'b1;
            end else if (rx_term) begin    // (RX_END is left with both empty otherwise)
                h0_v_q <= 1'b0;
                h1_v_q <= 1'b0;
            end
            p_data_q <= o_data;
            // CONT stage (a PHY loss ends the run: a restarted peer sees the primitive itself)
            if (p_data_q || !phy_ready) begin
                t_last_q <= P_NONE;
                t_rep_q  <= 2'd0;
            end else if (sup) begin
                if (t_rep_q != 2'd2) t_rep_q <= t_rep_q + 1'b1;
            end else begin
                t_last_q <= p_prim_q;
                t_rep_q  <= 2'd0;
            end
        end
    end
endmodule

`resetall
