// SPDX-License-Identifier: Apache-2.0
// ats_ssd_core_tb: test top: one ats_ssd_core driving NUM_CHAN x WAYS ats_nand_die models (one
// shared bus per channel), common power_ok. Dies: FAST interface minimums at a 10 ns clock (as the
// NAND subsystem test), array times divided by ARRAY_TIME_DIV, DIE_ID = c * WAYS + w, image file
// per die from the plusarg +ats_nand_image<DIE_ID>=file (saved at every power-off, reloaded at every
// power-on). Die faults at run time through ATS_NAND_FAULTS (sim/nand/ats_nand_store.cpp).
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_ssd_core_tb #(
    parameter int NUM_CHAN        = 2,
    parameter int WAYS            = 2,
    parameter int PAGE_BYTES      = 512,
    parameter int SPARE_BYTES     = 64,
    parameter int PAGES_PER_BLOCK = 8,
    parameter int BLOCKS          = 16,
    parameter int NUM_LBAS        = 64,
    parameter int NUM_TX          = 8,
    parameter int PTXQ            = 8,      // the write buffer's pending commits (the simulated SoCs': soc/ats_litex.py)
    parameter int QDEPTH          = 16,
    parameter int NUM_SLOTS       = 8,
    parameter int WIN             = 4,
    parameter int RD_SLOTS        = 8,      // backend read ring
    parameter int REMAP_LPN_W     = 16,
    parameter int REMAP_PPN_W     = 12,
    parameter int REMAP_TXID_W    = 4,
    parameter int REMAP_CNT_W     = 6,
    parameter int ARRAY_TIME_DIV  = 20,
    // the S-Log (docs/architecture.md section 11): SLOG = 1 the backend's unit, FRAG_SLOTS > 0 the
    // write buffer's FRAG slots (S-Log records from DIFFWRITEs below slog_thr)
    parameter int SLOG            = 0,
    parameter int FRAG_SLOTS      = 0,
    parameter int SLOG_TXFULL     = 64,     // full pages of one S-Log record (write buffer and backend)
    parameter int SLOG_RIF        = 1,      // S-Log records in flight together (write buffer and backend)
    parameter int SLOG_PACK       = 0,      // the backend's open log page (SLOG_RIF > 1: kept for the next record)
    parameter int SLOG_SEALT      = 0       // ... its idle cycles before the seal
) (
    input  wire logic        clk,
    input  wire logic        rst,
    input  wire logic        power_ok,
    input  wire logic        pwr_fail,
    input  wire logic        s_cmd_valid,
    output wire logic        s_cmd_ready,
    input  wire logic [3:0]  s_cmd_op,
    input  wire logic [7:0]  s_cmd_tag,
    input  wire logic [47:0] s_cmd_lba,
    input  wire logic [15:0] s_cmd_nlb,
    input  wire logic [5:0]  s_cmd_txid,
    input  wire logic [3:0]  s_cmd_flags,
    input  wire logic [1:0]  s_cmd_attr,
    input  wire logic [1:0]  s_cmd_prio,
    input  wire logic [31:0] s_cmd_dptr,
    input  wire logic [31:0] s_cmd_aux,
    output wire logic        m_cpl_valid,
    input  wire logic        m_cpl_ready,
    output wire logic [7:0]  m_cpl_tag,
    output wire logic [7:0]  m_cpl_status,
    output wire logic [31:0] m_cpl_result,
    output wire logic        m_hrd_valid,
    input  wire logic        m_hrd_ready,
    output wire logic [31:0] m_hrd_addr,
    output wire logic [15:0] m_hrd_len,
    input  wire logic        s_hrd_valid,
    output wire logic        s_hrd_ready,
    input  wire logic [31:0] s_hrd_data,
    input  wire logic        s_hrd_last,
    output wire logic        m_hwr_valid,
    input  wire logic        m_hwr_ready,
    output wire logic [31:0] m_hwr_addr,
    output wire logic [31:0] m_hwr_data,
    output wire logic        m_hwr_last,
    input  wire logic        s_free_valid,
    output wire logic        s_free_ready,
    output wire logic [NUM_CHAN*WAYS-1:0] blk_need,
    input  wire logic [2:0]  s_free_chan,
    input  wire logic [1:0]  s_free_way,
    input  wire logic [11:0] s_free_block,
    input  wire logic [15:0] slog_thr,
    output wire logic [31:0] slog_lpgn,          // the backend's next LPGN (log pages accepted)
    output wire logic [31:0] cnt_slog_err,       // the write buffer's UNRESERVE answers other than OK
    output logic [31:0]      slog_rec_total,     // S-Log record requests (m_wb slog) over the run
    output logic [31:0]      slog_rec_beside,    // of those, taken while an earlier m_wb request was in flight
    output logic [31:0]      slog_rec_pair,      // ... while an earlier S-Log record was in flight (SLOG_RIF > 1)
    output logic [31:0]      slog_rec_packed,    // S-Log records written from an open log page's end (SLOG_PACK 1)
    output logic [31:0]      slog_rsv_total,     // RESERVE answers (tag 0xFD) with status OK over the run
    output wire logic        m_bad_valid,
    input  wire logic        m_bad_ready,
    output wire logic [2:0]  m_bad_chan,
    output wire logic [1:0]  m_bad_way,
    output wire logic [11:0] m_bad_block,
    input  wire logic [14:0] vc_addr,
    input  wire logic        wb_hold,
    output wire logic [63:0] cpl_seq,
    input  wire logic [5:0]  txs_addr,
    output wire logic        txs_open,
    output wire logic [63:0] txs_seq,
    output wire logic [8:0]  vc_data,
    input  wire logic        s_fw_valid,
    output wire logic        s_fw_ready,
    input  wire logic [2:0]  s_fw_op,
    input  wire logic [2:0]  s_fw_chan,
    input  wire logic [1:0]  s_fw_way,
    input  wire logic [11:0] s_fw_block,
    input  wire logic [7:0]  s_fw_page,
    input  wire logic [3:0]  s_fw_rop,
    input  wire logic [5:0]  s_fw_txid,
    input  wire logic [31:0] s_fw_lpn,
    input  wire logic [REMAP_PPN_W-1:0] s_fw_ppn,
    input  wire logic [63:0] s_fw_seq,
    input  wire logic [31:0] s_fw_epoch,
    input  wire logic [7:0]  s_fw_flags,
    input  wire logic [1:0]  s_fw_kind,
    input  wire logic        s_fwd_valid,
    output wire logic        s_fwd_ready,
    input  wire logic [31:0] s_fwd_data,
    input  wire logic        s_fwd_last,
    output wire logic        m_fwr_valid,
    input  wire logic        m_fwr_ready,
    output wire logic [7:0]  m_fwr_status,
    output wire logic [31:0] m_fwr_data,
    output wire logic        m_fwr_last,
    output wire logic [REMAP_PPN_W-1:0] m_fwr_ppn,
    output wire logic        m_fwr_mapped,
    output wire logic [31:0] cnt_erases,
    output wire logic [31:0] cnt_relocs,
    output wire logic        init_done,
    output wire logic        no_free_block,
    output wire logic [63:0] next_seq,
    output wire logic [31:0] cnt_host_pages,
    output wire logic [31:0] cnt_coalesced,
    output wire logic [31:0] cnt_nand_prog,
    output wire logic [31:0] cnt_nand_read,
    output wire logic [31:0] cnt_ecc_corr,
    output wire logic [31:0] cnt_prog_fail,
    output wire logic [31:0] cnt_read_err,
    output wire logic [31:0] cnt_proto_err,
    output wire logic        err_spurious,
    output wire logic [31:0] viol_total,
    // contract monitors on the core's internal streams (hierarchical taps, C24): PROGRAM requests
    // sent to the NAND scheduler as HEAD (must stay 0: HEAD may pass the die's queued requests,
    // and a block's pages must be programmed in order), and urgent (RFLUSH) write-backs seen
    output logic [31:0]      prog_head_total,
    output logic [31:0]      urgent_wb_total,
    // host reads in the backend's read ring at once (maximum over the run) and NAND READs of host
    // reads issued while an earlier one had not completed (several misses in flight)
    output logic [7:0]       rd_ring_max,
    output logic [31:0]      rd_overlap_total,
    output logic [31:0]      rd_ooo_total,       // host-read pages delivered before an older read's
    // NAND read words (subsystem -> backend) of one page right after a word of another page that
    // was not finished: the channels' pages interleaved word by word
    output logic [31:0]      rd_ilv_total
);
    localparam int NDIE = NUM_CHAN * WAYS;
    logic [NDIE-1:0]       ce_n, rb_n;
    logic [NUM_CHAN-1:0]   cle, ale, we_n, re_n, wp_n;
    logic [NUM_CHAN*8-1:0] dq_c, dq_bus;

    ats_ssd_core #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES),
        .PAGES_PER_BLOCK(PAGES_PER_BLOCK), .BLOCKS(BLOCKS), .NUM_LBAS(NUM_LBAS), .NUM_TX(NUM_TX),
        .QDEPTH(QDEPTH), .NUM_SLOTS(NUM_SLOTS), .WIN(WIN), .RD_SLOTS(RD_SLOTS), .SCHED_DEPTH(8),
        .REMAP_LPN_W(REMAP_LPN_W), .REMAP_PPN_W(REMAP_PPN_W), .REMAP_TXID_W(REMAP_TXID_W),
        .REMAP_CNT_W(REMAP_CNT_W), .PTXQ(PTXQ), .SLOG(SLOG), .FRAG_SLOTS(FRAG_SLOTS),
        .SLOG_TXFULL(SLOG_TXFULL), .SLOG_RIF(SLOG_RIF), .SLOG_PACK(SLOG_PACK), .SLOG_SEALT(SLOG_SEALT),
        // 100 MHz against the FAST set of ats_nand_array (tWP/tRP 10 ns, tWH/tREH 7 ns): one-cycle
        // strobes, 2 cycles a byte (the page transfers are most of a campaign's cycles)
        .T_WP(1), .T_WH(1), .T_RP(1), .T_REH(1), .T_WB(11), .T_WHR(7), .T_ADL(8), .T_RR(3),
        .T_RHW(11), .T_CS(2)
    ) u_dut (
        .clk, .rst,
        .s_cmd_valid, .s_cmd_ready, .s_cmd_op, .s_cmd_tag, .s_cmd_lba, .s_cmd_nlb, .s_cmd_txid,
        .s_cmd_flags, .s_cmd_attr, .s_cmd_prio, .s_cmd_dptr, .s_cmd_aux,
        .m_cpl_valid, .m_cpl_ready, .m_cpl_tag, .m_cpl_status, .m_cpl_result,
        .m_hrd_valid, .m_hrd_ready, .m_hrd_addr, .m_hrd_len, .s_hrd_valid, .s_hrd_ready, .s_hrd_data,
        .s_hrd_last, .m_hwr_valid, .m_hwr_ready, .m_hwr_addr, .m_hwr_data, .m_hwr_last,
        .s_free_valid, .s_free_ready, .blk_need, .s_free_chan, .s_free_way, .s_free_block, .slog_thr,
        .m_bad_valid, .m_bad_ready, .m_bad_chan, .m_bad_way, .m_bad_block,
        .vc_addr, .vc_data, .wb_hold, .no_space(1'b0), .cpl_seq, .txs_addr, .txs_open, .txs_seq,
        .s_fw_valid, .s_fw_ready, .s_fw_op, .s_fw_chan, .s_fw_way, .s_fw_block, .s_fw_page, .s_fw_rop,
        .s_fw_txid, .s_fw_lpn, .s_fw_ppn, .s_fw_seq, .s_fw_epoch, .s_fw_flags, .s_fw_kind,
        .s_fwd_valid, .s_fwd_ready, .s_fwd_data, .s_fwd_last,
        .m_fwr_valid, .m_fwr_ready, .m_fwr_status, .m_fwr_data, .m_fwr_last, .m_fwr_ppn, .m_fwr_mapped,
        .cnt_erases, .cnt_relocs,
        .pwr_fail, .init_done, .no_free_block, .next_seq,
        .cnt_host_pages, .cnt_coalesced, .cnt_nand_prog, .cnt_nand_read, .cnt_ecc_corr, .cnt_prog_fail,
        .cnt_read_err, .cnt_proto_err, .err_spurious,
        .nand_ce_n(ce_n), .nand_cle(cle), .nand_ale(ale), .nand_we_n(we_n), .nand_re_n(re_n),
        .nand_wp_n(wp_n), .nand_dq_o(dq_c), .nand_dq_i(dq_bus), .nand_rb_n(rb_n)
    );

    assign slog_lpgn    = u_dut.be_slog_lpgn;
    assign cnt_slog_err = u_dut.wb_cnt_slog_err;
    // over the whole run (power cycles included): zero at time 0, never reset
    initial begin
        slog_rec_total = '0;
        slog_rec_beside = '0;
        slog_rec_pair = '0;
        slog_rec_packed = '0;
        slog_rsv_total = '0;
        prog_head_total = '0;
        urgent_wb_total = '0;
        rd_ring_max = '0;
        rd_overlap_total = '0;
        rd_ooo_total = '0;
        rd_ilv_total = '0;
    end
    logic       nd_prev_open;       // the previous m_ndata word was not its page's last
    logic [7:0] nd_prev_tag;
    initial nd_prev_open = 1'b0;
    always @(posedge clk) begin
        if (rst) begin
            nd_prev_open <= 1'b0;
        end else if (u_dut.rdn_valid && u_dut.rdn_ready) begin
            if (nd_prev_open && u_dut.rdn_tag != nd_prev_tag) rd_ilv_total <= rd_ilv_total + 1'b1;
            nd_prev_open <= !u_dut.rdn_last;
            nd_prev_tag  <= u_dut.rdn_tag;
        end
    end
    // NAND READs of host reads (tags 0x80 + slot) issued and not yet completed
    logic [7:0] rd_nand_out;
    initial rd_nand_out = '0;
    always @(posedge clk) begin
        logic iss, cpl;
        iss = u_dut.nq_valid && u_dut.nq_ready && u_dut.nq_op == 2'd0 && u_dut.nq_tag[7:4] == 4'h8;
        cpl = u_dut.nc_valid && u_dut.nc_ready && u_dut.nc_tag[7:4] == 4'h8;
        if (rst) begin
            rd_nand_out <= '0;
        end else begin
            rd_nand_out <= rd_nand_out + (iss ? 8'd1 : 8'd0) - (cpl ? 8'd1 : 8'd0);
            if (iss && rd_nand_out - (cpl ? 8'd1 : 8'd0) != 0) rd_overlap_total <= rd_overlap_total + 1'b1;
            // slots in use: RD_SLOTS minus the free list (pointers with one wrap bit)
            if (8'(RD_SLOTS) - (8'(u_dut.u_backend.u_read.fl_wr_q) - 8'(u_dut.u_backend.u_read.fl_rd_q) & 8'(2 * RD_SLOTS - 1)) > rd_ring_max)
                rd_ring_max <= 8'(RD_SLOTS) - (8'(u_dut.u_backend.u_read.fl_wr_q) - 8'(u_dut.u_backend.u_read.fl_rd_q) & 8'(2 * RD_SLOTS - 1));
        end
    end
    // out-of-order delivery: the acceptance number of each slot's read; a page whose last word
    // leaves while an earlier-accepted read is still in a slot counts in rd_ooo_total
    logic [31:0]         rd_acc_n;
    logic [31:0]         rd_acc_seq [RD_SLOTS];
    logic [RD_SLOTS-1:0] rd_live;
    initial begin rd_acc_n = '0; rd_live = '0; end
    always @(posedge clk) begin
        logic older;
        if (rst) begin
            rd_live <= '0;
        end else begin
            if (u_dut.u_backend.s_rd_valid && u_dut.u_backend.s_rd_ready) begin
                rd_acc_seq[u_dut.u_backend.u_read.ra_s] <= rd_acc_n;
                rd_live[u_dut.u_backend.u_read.ra_s] <= 1'b1;
                rd_acc_n <= rd_acc_n + 1'b1;
            end
            if (u_dut.u_backend.u_read.dl_pick && u_dut.u_backend.u_read.dl_last) begin
                older = 1'b0;
                for (int j = 0; j < RD_SLOTS; j++)
                    if (rd_live[j] && j != int'(u_dut.u_backend.u_read.dv_s_q) &&
                        rd_acc_seq[j] < rd_acc_seq[u_dut.u_backend.u_read.dv_s_q]) older = 1'b1;
                if (older) rd_ooo_total <= rd_ooo_total + 1'b1;
                rd_live[u_dut.u_backend.u_read.dv_s_q] <= 1'b0;
            end
        end
    end
    logic [31:0] wb_inflight = '0;                  // m_wb requests taken, completion not taken
    always @(posedge clk) begin
        if (!rst && u_dut.nq_valid && u_dut.nq_ready && u_dut.nq_op == 2'd1 && u_dut.nq_head)
            prog_head_total <= prog_head_total + 1'b1;
        if (!rst && u_dut.wb_valid && u_dut.wb_ready && u_dut.wb_fua)
            urgent_wb_total <= urgent_wb_total + 1'b1;
        if (!rst && u_dut.wb_valid && u_dut.wb_ready && u_dut.wb_slog)
            slog_rec_total <= slog_rec_total + 1'b1;
        // (the write buffer's wait lets only transactions' data pages, its own tx's or others', be in flight then, §11.4)
        if (!rst && u_dut.wb_valid && u_dut.wb_ready && u_dut.wb_slog && wb_inflight != 0)
            slog_rec_beside <= slog_rec_beside + 1'b1;
        // (the write buffer counts a record in flight from its issue, before m_wb takes it: > 1)
        if (!rst && u_dut.wb_valid && u_dut.wb_ready && u_dut.wb_slog && u_dut.u_wbuf.rif_n_q > 1)
            slog_rec_pair <= slog_rec_pair + 1'b1;
        wb_inflight <= rst ? 32'd0 : wb_inflight + 32'(u_dut.wb_valid && u_dut.wb_ready)
                                                - 32'(u_dut.wbc_valid && u_dut.wbc_ready);
    end
    // a record's verdict (go, not dropped) while a log page is open: the record starts in it
    if (SLOG != 0) begin : g_pk
        always @(posedge clk)
            if (!rst && u_dut.u_backend.g_slog.go_valid && u_dut.u_backend.g_slog.go_ready &&
                !u_dut.u_backend.txe_v_q[u_dut.u_backend.g_slog.rx_t_q] && u_dut.u_backend.g_slog.pg_open)
                slog_rec_packed <= slog_rec_packed + 1'b1;
    end
    // the backend's read data stream back to the write buffer: RESERVE answers (tag 0xFD)
    always @(posedge clk) begin
        if (!rst && u_dut.u_backend.m_rdd_valid && u_dut.u_backend.m_rdd_ready && u_dut.u_backend.m_rdd_last &&
            u_dut.u_backend.m_rdd_tag == 8'hFD && u_dut.u_backend.m_rdd_status == 8'h00)
            slog_rsv_total <= slog_rsv_total + 1'b1;
    end

    ats_nand_array #(
        .NUM_CHAN(NUM_CHAN), .WAYS(WAYS), .BLOCKS(BLOCKS), .PAGES_PER_BLOCK(PAGES_PER_BLOCK),
        .PAGE_BYTES(PAGE_BYTES), .SPARE_BYTES(SPARE_BYTES), .ARRAY_TIME_DIV(ARRAY_TIME_DIV)
    ) u_dies (
        .clk, .power_ok, .ce_n, .cle, .ale, .we_n, .re_n, .wp_n, .dq_i(dq_c), .dq_o(dq_bus), .rb_n,
        .viol_total
    );
endmodule

`resetall
