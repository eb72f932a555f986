// SPDX-License-Identifier: Apache-2.0
// Stream rules on every m_ port of the SATA front end's modules (rtl/common/ats_stream_check.sv:
// valid held and payload stable until taken; bound by module name), added to the sources by the
// tests that build the front end: test_ats_sata.py, test_ats_sata_core.py, test_ats_sata_litesata.py.
// The s_ ports are the TBs' own drivers (or another block's m_ port, checked here).
// test_ats_sata_link.py does not add this file: ats_sata_link_tb.sv checks the link's m_rx and m_txr
// itself and binds the receive FIFO's checker (the only module inside the link).
// Every stream here is one valid/ready pair (no per-lane vector valid). Not streams, not checked:
// the PHY side (phy_rx_*/phy_tx_*: one dword a clock, no ready), the read buffer's head segment
// (seg_valid/seg_start/seg_pop: a level read by TX, popped by a pulse), and the command layer's
// internal request flags (d2h_/fin_/pio_/err_valid, ws_valid, dact_valid: registered flags taken
// by a *_pick pulse, README "ats_sata_cmd": nothing withdraws a chosen source).
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the top: the core side (docs/host-interface.md §2.6)
bind ats_sata ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_txid) + $bits(m_cmd_flags) + $bits(m_cmd_attr) + $bits(m_cmd_prio) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("sata m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio, m_cmd_dptr, m_cmd_aux}));
bind ats_sata ats_stream_check #(.W($bits(m_hrd_data) + $bits(m_hrd_last)), .NAME("sata m_hrd")) u_chk_m_hrd (
    .clk, .rst, .valid(m_hrd_valid), .ready(m_hrd_ready), .data({m_hrd_data, m_hrd_last}));

// the link (received FIS dwords with their status, one result per FIS sent) and its receive FIFO
bind ats_sata_link ats_stream_check #(.W($bits(m_rx_data) + $bits(m_rx_last) + $bits(m_rx_status)), .NAME("sata_link m_rx")) u_chk_m_rx (
    .clk, .rst, .valid(m_rx_valid), .ready(m_rx_ready), .data({m_rx_data, m_rx_last, m_rx_status}));
bind ats_sata_link ats_stream_check #(.W($bits(m_txr_status)), .NAME("sata_link m_txr")) u_chk_m_txr (
    .clk, .rst, .valid(m_txr_valid), .ready(m_txr_ready), .data(m_txr_status));
bind ats_sata_rx_fifo ats_stream_check #(.W(WIDTH), .NAME("sata_rx_fifo m_")) u_chk_m (
    .clk, .rst, .valid(m_valid), .ready(m_ready), .data(m_data));

// the receive transport: Register H2D FISes, the data FIFO's committed words
bind ats_sata_frx ats_stream_check #(.W($bits(m_reg_data) + $bits(m_reg_bad)), .NAME("sata_frx m_reg")) u_chk_m_reg (
    .clk, .rst, .valid(m_reg_valid), .ready(m_reg_ready), .data({m_reg_data, m_reg_bad}));
bind ats_sata_frx ats_stream_check #(.W($bits(m_dat_data)), .NAME("sata_frx m_dat")) u_chk_m_dat (
    .clk, .rst, .valid(m_dat_valid), .ready(m_dat_ready), .data(m_dat_data));
bind ats_sata_dfifo ats_stream_check #(.W($bits(m_data)), .NAME("sata_dfifo m_")) u_chk_m (
    .clk, .rst, .valid(m_valid), .ready(m_ready), .data(m_data));

// the read buffer: the head segment's words (a rollback or seg_start never withdraws a word offered)
bind ats_sata_rdbuf ats_stream_check #(.W($bits(m_dat_data) + $bits(m_dat_last)), .NAME("sata_rdbuf m_dat")) u_chk_m_dat (
    .clk, .rst, .valid(m_dat_valid), .ready(m_dat_ready), .data({m_dat_data, m_dat_last}));

// the command layer (its wrapper's ports, then each part's)
bind ats_sata_cmd ats_stream_check #(.W($bits(m_rbw_addr) + $bits(m_rbw_data) + $bits(m_rbw_last)), .NAME("sata_cmd m_rbw")) u_chk_m_rbw (
    .clk, .rst, .valid(m_rbw_valid), .ready(m_rbw_ready), .data({m_rbw_addr, m_rbw_data, m_rbw_last}));
bind ats_sata_cmd ats_stream_check #(.W($bits(m_tx_data) + $bits(m_tx_last)), .NAME("sata_cmd m_tx")) u_chk_m_tx (
    .clk, .rst, .valid(m_tx_valid), .ready(m_tx_ready), .data({m_tx_data, m_tx_last}));
bind ats_sata_cmd ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_txid) + $bits(m_cmd_flags) + $bits(m_cmd_attr) + $bits(m_cmd_prio) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("sata_cmd m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio, m_cmd_dptr, m_cmd_aux}));
bind ats_sata_cmd ats_stream_check #(.W($bits(m_hrd_data) + $bits(m_hrd_last)), .NAME("sata_cmd m_hrd")) u_chk_m_hrd (
    .clk, .rst, .valid(m_hrd_valid), .ready(m_hrd_ready), .data({m_hrd_data, m_hrd_last}));
// DEC: the descriptor register (aux included: FEATURE's value, SET FEATURES 0x56)
bind ats_sata_cmd_dec ats_stream_check #(.W($bits(m_cmd_op) + $bits(m_cmd_tag) + $bits(m_cmd_lba) + $bits(m_cmd_nlb) + $bits(m_cmd_txid) + $bits(m_cmd_flags) + $bits(m_cmd_attr) + $bits(m_cmd_prio) + $bits(m_cmd_dptr) + $bits(m_cmd_aux)), .NAME("sata_cmd_dec m_cmd")) u_chk_m_cmd (
    .clk, .rst, .valid(m_cmd_valid), .ready(m_cmd_ready), .data({m_cmd_op, m_cmd_tag, m_cmd_lba, m_cmd_nlb, m_cmd_txid, m_cmd_flags, m_cmd_attr, m_cmd_prio, m_cmd_dptr, m_cmd_aux}));
// WDE: the host's write words (or zeros) to the core
bind ats_sata_cmd_wde ats_stream_check #(.W($bits(m_hrd_data) + $bits(m_hrd_last)), .NAME("sata_cmd_wde m_hrd")) u_chk_m_hrd (
    .clk, .rst, .valid(m_hrd_valid), .ready(m_hrd_ready), .data({m_hrd_data, m_hrd_last}));
// TX: FIS dwords to the link
bind ats_sata_cmd_tx ats_stream_check #(.W($bits(m_tx_data) + $bits(m_tx_last)), .NAME("sata_cmd_tx m_tx")) u_chk_m_tx (
    .clk, .rst, .valid(m_tx_valid), .ready(m_tx_ready), .data({m_tx_data, m_tx_last}));
// hwr: the core's read words and the PIO pages into the read buffer
bind ats_sata_cmd_hwr ats_stream_check #(.W($bits(m_rbw_addr) + $bits(m_rbw_data) + $bits(m_rbw_last)), .NAME("sata_cmd_hwr m_rbw")) u_chk_m_rbw (
    .clk, .rst, .valid(m_rbw_valid), .ready(m_rbw_ready), .data({m_rbw_addr, m_rbw_data, m_rbw_last}));
// NQ and CPL have no m_ stream (flags and pulses between the parts only)

`resetall
