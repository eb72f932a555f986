// SPDX-License-Identifier: Apache-2.0
// ats_backend_fw: the backend's firmware port (rtl/backend/README.md "Firmware port"): one
// operation at a time (s_fw ready when the previous response has been taken), one response each on
// m_fwr ending with `last`. NREAD (its FSM: page and spare words to m_fwr, the last one held for the
// NAND status), NPROG (its page into the firmware page memory, which the fetch DMA reads as slot
// WIN), NERASE, REMAP, RELOC (the backend's table and completion FSM do the work; this unit
// answers), SEQSET (the backend's table takes the seq). A request to another unit is a level
// (nq_req, nrd_req, rq_req, reloc_req) that the backend grants with a one-cycle take; the
// operation's fields stay in registers (fw_*) until its response.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_fw #(
    parameter int NUM_CHAN        = 4,     // NAND channels
    parameter int WAYS            = 2,     // dies per channel
    parameter int PAGE_BYTES      = 4096,  // data bytes per page
    parameter int PAGES_PER_BLOCK = 64,    // power of two
    parameter int PPN_W           = 16,    // remap engine PPN width
    parameter int SL              = 0      // 1: op 7 SLOAD (the S-Log's recovery loads, the backend's g_slog)
) (
    input  wire logic                     clk,
    input  wire logic                     rst,            // synchronous, active high
    // ---- firmware port (the backend's s_fw / s_fwd / m_fwr)
    input  wire logic                     s_fw_valid,
    output wire logic                     s_fw_ready,
    input  wire logic [2:0]               s_fw_op,        // 0 NREAD, 1 NPROG, 2 NERASE, 3 REMAP, 4 RELOC, 5 SEQSET
    input  wire logic [2:0]               s_fw_chan,
    input  wire logic [1:0]               s_fw_way,
    input  wire logic [11:0]              s_fw_block,
    input  wire logic [7:0]               s_fw_page,
    input  wire logic [3:0]               s_fw_rop,
    input  wire logic [5:0]               s_fw_txid,
    input  wire logic [31:0]              s_fw_lpn,
    input  wire logic [PPN_W-1:0]         s_fw_ppn,
    input  wire logic [63:0]              s_fw_seq,
    input  wire logic [31:0]              s_fw_epoch,
    input  wire logic [7:0]               s_fw_flags,
    input  wire logic [1:0]               s_fw_kind,
    input  wire logic                     s_fwd_valid,    // NPROG page words (a RELOC's: the backend's table)
    input  wire logic [31:0]              s_fwd_data,
    input  wire logic                     s_fwd_last,
    output wire logic                     fwd_take,       // s_fwd is this unit's (NPROG page)
    output wire logic                     m_fwr_valid,
    input  wire logic                     m_fwr_ready,
    output wire logic [7:0]               m_fwr_status,
    output wire logic [31:0]              m_fwr_data,
    output wire logic                     m_fwr_last,
    output wire logic [PPN_W-1:0]         m_fwr_ppn,
    output wire logic                     m_fwr_mapped,
    // ---- the operation's fields (registered when s_fw is taken)
    output wire logic [2:0]               fw_op,
    output wire logic [2:0]               fw_chan,
    output wire logic [1:0]               fw_way,
    output wire logic [11:0]              fw_blk,
    output wire logic [7:0]               fw_pg,
    output wire logic [3:0]               fw_rop,
    output wire logic [5:0]               fw_txid,
    output wire logic [31:0]              fw_lpn,
    output wire logic [PPN_W-1:0]         fw_ppn,
    output wire logic [63:0]              fw_seq,
    output wire logic [31:0]              fw_epoch,
    output wire logic [7:0]               fw_flags,
    output wire logic [1:0]               fw_kind,
    // ---- the NPROG page, read by the fetch DMA (latency 2)
    input  wire logic [$clog2(PAGE_BYTES/4)-1:0] fw_ra,
    output wire logic [31:0]              fw_rd,
    // ---- requests to the backend's units and their grants
    output wire logic                     nq_req,         // ERASE / PROGRAM: the NAND request register
    output wire logic                     nq_erase,       // ... an ERASE (fw_op == NERASE), with nq_req
    input  wire logic                     nq_take,
    output wire logic                     nq_wait,        // waiting for its NAND completion
    input  wire logic                     nc_valid,       // ... which comes (tag 0xFE)
    output wire logic                     nrd_req,        // NREAD: the NAND request register
    output wire logic [PPN_W-1:0]         nrd_ppn,
    input  wire logic                     nrd_take,
    input  wire logic                     nrd_ncpl_valid, // a NAND completion with the NREAD's tag (0xFF)
    output wire logic                     nrd_cpl,        // ... taken by the NREAD FSM
    input  wire logic [2:0]               ncpl_status,
    input  wire logic                     ncpl_bad_mark,
    input  wire logic                     s_ndata_valid,  // page words (NREAD: the ones not nd_host)
    input  wire logic [31:0]              s_ndata_data,
    input  wire logic                     s_ndata_last,
    input  wire logic                     nd_host,
    output wire logic                     nd_ready,       // an NREAD word can be taken
    output wire logic                     rq_req,         // REMAP: the remap request register
    input  wire logic                     rq_take,
    input  wire logic                     rsp_valid,      // its response (remap tag RT_FW)
    input  wire logic [3:0]               rsp_status,
    input  wire logic [PPN_W-1:0]         rsp_ppn,
    input  wire logic                     rsp_mapped,
    output wire logic                     reloc_req,      // RELOC: an entry of the request table
    input  wire logic                     reloc_acc,      // ... taken (its data follows on s_fwd)
    input  wire logic                     reloc_done,     // ... completed in order: the response
    input  wire logic [7:0]               reloc_status,
    input  wire logic [PPN_W-1:0]         reloc_ppn,
    input  wire logic                     seq_idle,       // SEQSET allowed: no request in the table
    output wire logic                     seqset,         // SEQSET applied now (the table takes s_fw_seq)
    output wire logic                     sl_req,         // SLOAD (SL = 1): an S-Log load waits (fw_rop, fw_*)
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic                     sl_done,        // ... done now, its response:
    input  wire logic [7:0]               sl_status,
    input  wire logic [31:0]              sl_data,
    input  wire logic [PPN_W-1:0]         sl_ppn,
    input  wire logic                     sl_mapped,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire logic                     fo_free,        // the response register takes a beat now
    output wire logic                     busy,           // an operation in progress (simulation clock gate)
    output logic      [2:0]               perr            // protocol errors this cycle
);
    localparam int NDIE     = NUM_CHAN * WAYS;
    localparam int PW       = PAGE_BYTES / 4;           // data words per page
    localparam int PWW      = $clog2(PW + 5) + 1;        // word counter incl. metadata words
    localparam int PG_W     = $clog2(PAGES_PER_BLOCK);
    localparam int DIE_PACK = (NDIE > 1) ? $clog2(NDIE) : 0;   // die bits in a PPN
    localparam int FW_AW    = $clog2(PW);
    localparam logic [2:0] FO_NREAD = 3'd0, FO_NPROG = 3'd1, FO_NERASE = 3'd2, FO_REMAP = 3'd3, FO_RELOC = 3'd4,
                           FO_SEQSET = 3'd5, FO_MERGE = 3'd6, FO_SLOAD = 3'd7;

    function automatic logic [PPN_W-1:0] pack_ppn(input logic [2:0] ch, input logic [1:0] wy,
                                                  input logic [11:0] blk, input logic [7:0] pg);
        logic [31:0] d;
        d = 32'(ch) * 32'(WAYS) + 32'(wy);
        pack_ppn = PPN_W'((32'(blk) << (PG_W + DIE_PACK)) | (32'(pg) << DIE_PACK) | d);
    endfunction

    typedef enum logic [3:0] {F_IDLE, F_RD, F_PRECV, F_NREQ, F_NCPL, F_REMAP, F_RSPW, F_RACC, F_RWAIT, F_DONE,
                              F_SL} fw_state_e;
    fw_state_e          fw_st_q;
    logic [2:0]         fw_op_q;
    logic [2:0]         fw_chan_q;
    logic [1:0]         fw_way_q;
    logic [11:0]        fw_blk_q;
    logic [7:0]         fw_pg_q;
    logic [3:0]         fw_rop_q;
    logic [5:0]         fw_txid_q;
    logic [31:0]        fw_lpn_q, fw_epoch_q;
    logic [PPN_W-1:0]   fw_ppn_q;
    logic [63:0]        fw_seq_q;
    logic [7:0]         fw_flags_q;
    logic [1:0]         fw_kind_q;
    logic [PWW-1:0]     fw_w_q;           // NPROG words received
    logic               fwp_we;           // NPROG word into the firmware page
    logic               fw_take;
    assign fw_op = fw_op_q; assign fw_chan = fw_chan_q; assign fw_way = fw_way_q; assign fw_blk = fw_blk_q;
    assign fw_pg = fw_pg_q; assign fw_rop = fw_rop_q; assign fw_txid = fw_txid_q; assign fw_lpn = fw_lpn_q;
    assign fw_ppn = fw_ppn_q; assign fw_seq = fw_seq_q; assign fw_epoch = fw_epoch_q;
    assign fw_flags = fw_flags_q; assign fw_kind = fw_kind_q;
    assign fwp_we    = fw_st_q == F_PRECV && s_fwd_valid;
    assign fwd_take  = fw_st_q == F_PRECV;
    // nq_req (fw_st_q == F_NREQ) and its ERASE as registers of their own (set on the edge that
    // enters F_NREQ, cleared on nq_take, the only edge that leaves it): the backend's issue rule
    // reads them in the same cycle as the table's registers (timing: pnr_e19's worst path ran
    // fw_op_q's decode into the table's enables)
    logic               nq_req_q, nq_erase_q;
    assign nq_req    = nq_req_q;
    assign nq_erase  = nq_erase_q;
    assign nq_wait   = fw_st_q == F_NCPL;
    assign rq_req    = fw_st_q == F_REMAP;
    assign reloc_req = fw_st_q == F_RACC;
    assign sl_req    = SL != 0 && fw_st_q == F_SL;
    assign fw_take   = s_fw_valid && s_fw_ready;
    assign seqset    = fw_take && s_fw_op == FO_SEQSET && seq_idle;
    // the firmware's NPROG page (fetch slot WIN), same read latency as the staging memory
    ats_wbuf_mem #(.DEPTH(PW)) u_fwmem (
        .clk, .wr_en(fwp_we), .wr_addr(FW_AW'(fw_w_q)), .wr_data(s_fwd_data), .rd_addr(fw_ra), .rd_data(fw_rd)
    );

    // firmware NREAD FSM
    logic               rd_bbm_q;         // NREAD: the page's factory bad-block mark
    typedef enum logic [2:0] {RD_IDLE, RD_NREQ, RD_DATA, RD_CPL, RD_LAST} rd_state_e;
    rd_state_e          rd_st_q;
    logic [PPN_W-1:0]   rd_ppn_q;
    logic [PWW-1:0]     rd_w_q;
    logic               rd_tail_q;        // rd_w_q >= PW + 4 (the spare words past the first 4), as a
                                          // register (timing: the compare's carry chain ran into nd_ready)
    logic [7:0]         rd_status_q;
    logic [31:0]        rd_meta_q;        // NREAD: the last spare word, held until the completion
    assign nrd_req = rd_st_q == RD_NREQ;
    assign nrd_ppn = rd_ppn_q;
    // an NREAD's words go to m_fwr (the spare words but the last one through the response
    // register, the last one held for the completion)
    assign nd_ready = (rd_st_q == RD_DATA) && (rd_tail_q || fo_free);
    // firmware response register (m_fwr), stable until taken
    logic               fo_v_q, fo_last_q, fo_mapped_q;
    logic [7:0]         fo_status_q;
    logic [31:0]        fo_data_q;
    logic [PPN_W-1:0]   fo_ppn_q;
    assign fo_free      = !fo_v_q || m_fwr_ready;
    assign m_fwr_valid  = fo_v_q;
    assign m_fwr_status = fo_status_q;
    assign m_fwr_data   = fo_data_q;
    assign m_fwr_last   = fo_last_q;
    assign m_fwr_ppn    = fo_ppn_q;
    assign m_fwr_mapped = fo_mapped_q;
    assign s_fw_ready   = fw_st_q == F_IDLE && !fo_v_q && !rst;

    // NREAD FSM events: started, a page word (to m_fwr unless the last spare word), completion, done
    logic               rd_go, rd_word, rd_word_out, rd_cpl, rd_last;
    assign rd_go       = rd_st_q == RD_IDLE && fw_st_q == F_RD;
    assign rd_word     = rd_st_q == RD_DATA && s_ndata_valid && nd_ready && !nd_host;
    assign rd_word_out = rd_word && !rd_tail_q;
    assign rd_cpl      = rd_st_q == RD_CPL && nrd_ncpl_valid;
    assign rd_last     = rd_st_q == RD_LAST && fo_free;
    assign nrd_cpl     = rd_cpl;

    // firmware port: operation FSM and response register
    always_ff @(posedge clk) begin
        if (rst) begin
            fw_st_q <= F_IDLE;
            fo_v_q <= 1'b0;
            nq_req_q <= 1'b0;
            nq_erase_q <= 1'b0;
        end else begin
            if (reloc_acc) fw_st_q <= F_RWAIT;
            if (nq_take) begin
                fw_st_q <= F_NCPL;
                nq_req_q <= 1'b0;
            end
            if (nc_valid) begin
                // firmware ERASE / PROGRAM: the raw NAND status (fo is free: s_fw_ready needs it)
                fo_v_q <= 1'b1; fo_status_q <= {5'd0, ncpl_status}; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                fw_st_q <= F_IDLE;
            end
            if (fo_v_q && m_fwr_ready) fo_v_q <= 1'b0;
            case (fw_st_q)
                F_IDLE: if (fw_take) begin
                    fw_op_q <= s_fw_op; fw_chan_q <= s_fw_chan; fw_way_q <= s_fw_way; fw_blk_q <= s_fw_block;
                    fw_pg_q <= s_fw_page; fw_rop_q <= s_fw_rop; fw_txid_q <= s_fw_txid; fw_lpn_q <= s_fw_lpn;
                    fw_ppn_q <= s_fw_ppn; fw_seq_q <= s_fw_seq; fw_epoch_q <= s_fw_epoch;
                    fw_flags_q <= s_fw_flags; fw_kind_q <= s_fw_kind; fw_w_q <= '0;
                    unique case (s_fw_op)
                        FO_NREAD:  fw_st_q <= F_RD;
                        FO_NPROG:  fw_st_q <= F_PRECV;
                        FO_NERASE: begin
                            fw_st_q <= F_NREQ;
                            nq_req_q <= 1'b1; nq_erase_q <= 1'b1;
                        end
                        FO_REMAP:  fw_st_q <= F_REMAP;
                        FO_RELOC:  fw_st_q <= F_RACC;
                        FO_SEQSET: begin                   // next seq := s_fw_seq, only with no request
                            fo_v_q <= 1'b1; fo_data_q <= 32'd0; fo_last_q <= 1'b1;    // in the table
                            fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                            // done (the table takes the seq: seqset), or BAD_REQ: requests in
                            // flight (hold first)
                            fo_status_q <= seqset ? 8'h00 : 8'h04;
                        end
                        default: begin                     // unknown operation: status 0xFF, nothing done
                            if (SL != 0 && (s_fw_op == FO_SLOAD || s_fw_op == FO_MERGE)) begin
                                fw_st_q <= F_SL;           // (SL = 1: g_slog answers, sl_done; a MERGE
                                                           //  that programs a page: reloc_acc / reloc_done)
                            end else begin
                                fo_v_q <= 1'b1; fo_status_q <= 8'hFF; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                                fo_ppn_q <= '0; fo_mapped_q <= 1'b0;
                            end
                        end
                    endcase
                end
                F_PRECV: if (fwp_we) begin
                    fw_w_q <= fw_w_q + 1'b1;
                    if (32'(fw_w_q) == PW - 1) begin
                        fw_st_q <= F_NREQ;
                        nq_req_q <= 1'b1; nq_erase_q <= 1'b0;
                    end
                end
                F_REMAP: if (rq_take) fw_st_q <= F_RSPW;
                F_SL: if (sl_done) begin
                    fo_v_q <= 1'b1; fo_status_q <= sl_status; fo_data_q <= sl_data; fo_last_q <= 1'b1;
                    fo_ppn_q <= sl_ppn; fo_mapped_q <= sl_mapped;
                    fw_st_q <= F_IDLE;
                end
                F_RSPW: if (rsp_valid) begin
                    fo_v_q <= 1'b1; fo_status_q <= {4'd0, rsp_status}; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                    fo_ppn_q <= rsp_ppn; fo_mapped_q <= rsp_mapped;
                    fw_st_q <= F_IDLE;
                end
                default: ;                                 // F_RD, F_DONE (NREAD FSM), F_NREQ / F_NCPL (NAND),
                                                           // F_RACC / F_RWAIT (the backend's table, completion FSM)
            endcase
            if (reloc_done) begin
                // RELOC: status 0 applied, 1 stale (the new page is garbage); ppn = new page
                fo_v_q <= 1'b1; fo_status_q <= reloc_status; fo_data_q <= 32'd0; fo_last_q <= 1'b1;
                fo_ppn_q <= reloc_ppn; fo_mapped_q <= reloc_status == 8'h00;
                fw_st_q <= F_IDLE;
            end
            if (rd_go) fw_st_q <= F_DONE;
            if (rd_word_out) begin
                fo_v_q <= 1'b1; fo_data_q <= s_ndata_data; fo_last_q <= 1'b0; fo_status_q <= 8'h00;
                fo_ppn_q <= rd_ppn_q; fo_mapped_q <= 1'b0;
            end
            if (rd_last) begin
                fo_v_q <= 1'b1; fo_data_q <= rd_meta_q; fo_last_q <= 1'b1; fo_status_q <= rd_status_q;
                fo_ppn_q <= rd_ppn_q; fo_mapped_q <= rd_bbm_q;     // NREAD: the bad-block mark
                fw_st_q <= F_IDLE;
            end
        end
    end

    // firmware NREAD: all words to m_fwr, the last spare word held for the raw NAND status
    always_ff @(posedge clk) begin
        if (rst) begin
            rd_st_q <= RD_IDLE;
        end else begin
            if (nrd_take) begin                           // its NAND READ issued
                rd_st_q <= RD_DATA;
                rd_w_q <= '0;
                rd_tail_q <= 1'b0;
            end
            case (rd_st_q)
                RD_IDLE: if (rd_go) begin
                    rd_ppn_q <= pack_ppn(fw_chan_q, fw_way_q, fw_blk_q, fw_pg_q);
                    rd_st_q <= RD_NREQ;
                end
                RD_NREQ: ;                      // the backend's issue unit
                RD_DATA: if (rd_word) begin
                    rd_w_q <= rd_w_q + 1'b1;
                    if (32'(rd_w_q) == PW + 3) rd_tail_q <= 1'b1;
                    if (!rd_word_out) rd_meta_q <= s_ndata_data;
                    if (s_ndata_last) rd_st_q <= RD_CPL;
                end
                RD_CPL: if (rd_cpl) begin
                    rd_status_q <= {5'd0, ncpl_status};
                    rd_bbm_q <= ncpl_bad_mark;
                    rd_st_q <= RD_LAST;
                end
                RD_LAST: if (rd_last) rd_st_q <= RD_IDLE;
                default: rd_st_q <= RD_IDLE;
            endcase
        end
    end

    // protocol errors: an NPROG page with a missing or early `last` (the word count decides), a
    // completion with the NREAD's tag and no NREAD waiting for it
    always_comb begin
        perr = 3'd0;
        if (fwp_we) begin
            if (32'(fw_w_q) == PW - 1) begin
                if (!s_fwd_last) perr = perr + 3'd1;
            end else if (s_fwd_last) begin
                perr = perr + 3'd1;
            end
        end
        if (nrd_ncpl_valid && rd_st_q != RD_CPL) perr = perr + 3'd1;
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst) begin
            assert (rd_st_q != RD_DATA || rd_tail_q == (32'(rd_w_q) >= PW + 4))
                else $error("ats_backend_fw: rd_tail_q out of step with rd_w_q (%m)");
            assert (nq_req_q == (fw_st_q == F_NREQ) && (!nq_req_q || nq_erase_q == (fw_op_q == FO_NERASE)))
                else $error("ats_backend_fw: nq_req / nq_erase registers out of step with the FSM (%m)");
        end
    end
`endif

`ifdef SYNTHESIS
    assign busy = 1'b0;     // simulation only: no logic in a netlist
`else
    // ATS_SIM_SKIP (sim/soc/README.md "Cycle skipping"): an ERASE / PROGRAM waiting for its NAND
    // completion (F_NCPL), an NREAD waiting for its page's words or its completion (F_DONE with
    // RD_DATA / RD_CPL) is no work: the next step needs an input (the completion, a word), which
    // the gate watches; the request register and the response register are in the gate's act
    logic wait_in;
`ifdef ATS_SIM_SKIP
    assign wait_in = (fw_st_q == F_NCPL && rd_st_q == RD_IDLE) ||
                     (fw_st_q == F_DONE && (rd_st_q == RD_DATA || rd_st_q == RD_CPL));
`else
    assign wait_in = 1'b0;
`endif
    assign busy = (fw_st_q != F_IDLE || rd_st_q != RD_IDLE) && !wait_in;
`endif
endmodule

`resetall
