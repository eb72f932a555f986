// SPDX-License-Identifier: Apache-2.0
// ats_nvme_cmd: the NVMe front end's I/O command path (docs/host-interface.md §1.3-§1.8a;
// rtl/nvme/README.md "ats_nvme_cmd").
//
// SQEs from the queue manager: an admin SQE (SQ 0) passes through on m_adm; an I/O SQE takes the
// lowest free slot (its §1 tag) in the cycle it is taken, is checked in the reference model's order
// (opcode, FUSE/PSDT, NSID, reserved CDW13 bits of the vendor opcodes, MDTS / NR, then the PRP
// walk on ats_nvme_prp, then a DSM's range list read through the slot's window) and becomes its
// §1 descriptor(s) on m_cmd, or completes at once with the failed check's status. A DSM's TRIMs are
// issued one at a time by the trim sequencer (one DSM at a time), each after the previous one's
// completion; once a controller reset began (`disabling`) only a DSM's first TRIM is still issued.
//
// Completions (s_cpl) mark their slot done with the first non-OK status of its descriptors, mapped
// to NVMe (§1.8), and the result, and record ats_nvme_prp's wr_acc. A done slot is offered on
// m_cqe once ats_nvme_prp's wr_done has reached that record (its window writes are issued) and its
// CQ has room (the pick is registered: cq_room's contract); a window error (slot_err) makes its
// status Data Transfer Error. The slot is freed when the CQE is acknowledged.
//
// Atomic writes (docs/host-interface.md "Atomic writes", docs/persistence.md §8): a Write (0x01) of
// 2 … AWU blocks that does not cross an AWU-block boundary leaves as a WRITE with the COMMIT flag on
// one of the ATX reserved atomic txids NUM_TX-ATX+1 … NUM_TX (one implicit transaction: all or
// nothing across power loss); a vendor command naming a reserved txid completes BAD_TXID (SCT 7 /
// SC 0x02) here, without a descriptor. The atomic Writes take the pool's txids in turn (entry
// a_nx_q, txid NUM_TX-ATX+1+a_nx_q, then the next entry; a rotation in decode order, so the txid
// of each Write does not depend on completion timing); each txid carries one atomic Write in the
// core at a time (the decoder waits in D_DESC while the WRITE of the entry's previous Write is not
// completed). A WRITE that completes with an error marks its txid dirty (NO_SPACE may leave its
// first pages as entries of the txid), and the next atomic Write on that entry first sends a
// TX_ABORT of the txid under its own tag and waits for it in D_ABW: OK / TX_EMPTY clears the mark
// and is not the command's status (its WRITE follows on the same entry); any other status ends the
// command with it, still dirty (the next atomic Write tries the same entry again).
//
// Static transactions (docs/host-interface.md §1.11): an SWRITE (0x8D, STX ≥ 1) reads its range list
// (CDW14/15, DSM format, NR 1-based in CDW10[7:0]) through the slot's window, checks it (zero / too
// many ranges, too many pages, an empty range, lengths ≠ NLB + 1, LBA out of range, overlap: the
// vendor statuses 7/0x20-0x25 of ats_nvme_pkg), opens the data's PRPs and hands the ranges to a free
// SWRITE engine k (txid NUM_TX - ATX - STX + 1 + k; the decoder waits while none is free): one WRITE per range,
// each after the previous one's completion, the last with COMMIT; a failed WRITE ends the command and
// marks the txid dirty, and a dirty txid gets a TX_ABORT before the engine's next WRITE. An SREAD
// (0x8E) is a Read whose descriptor leaves only once every SWRITE / atomic Write taken before it is
// done (the decoder waits for it).
//
// Shutdown: m_flush from the queue manager (asked once idle) is one FLUSH with tag 0; its
// completion answers s_flush_done, not a CQE. With SHUT_CKPT the FLUSH's completion is followed by
// one GET_LOG with tag 8'hFF (SHUT_TAG) and dptr 0x8000_0000 (the admin answer buffer): the
// firmware takes a checkpoint before it answers that one (docs/host-interface.md "Shutdown"), and
// its completion answers s_flush_done.
`resetall
`timescale 1ns / 1ps
`default_nettype none

// the full-system simulation's clock gate of the front end (ats_nvme, ATS_SIM_CGATE; never in synthesis)
`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_NVME_CGATE
`endif
`endif

module ats_nvme_cmd #(
    parameter int NQ         = 4,
    parameter int QW         = $clog2(NQ + 1),
    parameter int QDEPTH     = 32,                 // I/O slots (the core's tags 0..QDEPTH-1)
    parameter int PAGE_BYTES = 4096,               // LBA size
    parameter bit SHUT_CKPT  = 1'b0,               // shutdown: FLUSH, then the firmware's checkpoint
    parameter int NUM_TX     = 32,                 // the core's txids 1..NUM_TX; the last ATX: the atomic writes'
    parameter int TX_ENTRIES = 32,                 // the core's pages per transaction
    parameter int STX        = 0,                  // SWRITE engines (txids NUM_TX-ATX-STX+1 .. NUM_TX-ATX)
    parameter int ATX        = 1,                  // atomic Writes' txids (NUM_TX-ATX+1 .. NUM_TX), 1..8
    parameter logic [63:0] NUM_LBAS = 64'd16384,   // the namespace's size (SWRITE's range check)
    parameter int AWU        = ats_nvme_pkg::awu_blocks(PAGE_BYTES, TX_ENTRIES),  // atomic write unit: NAWUPF + 1
    parameter int SW         = $clog2(QDEPTH + 1)  // slot index width at ats_nvme_prp (QDEPTH + 1 slots)
) (
    input  wire logic          clk,
    input  wire logic          rst,

    // SQEs (ats_nvme_qm)
    input  wire logic          s_sqe_valid,
    output      logic          s_sqe_ready,
    input  wire logic [511:0]  s_sqe_data,
    input  wire logic [QW-1:0] s_sqe_sqid,
    input  wire logic [QW-1:0] s_sqe_cqid,
    input  wire logic [15:0]   s_sqe_sqhd,
    input  wire logic [1:0]    s_sqe_prio,
    output      logic          fetch_ok_io,
    output      logic          fetch_ok_adm,
    output      logic          cmd_idle,
    input  wire logic          vwc,                // Volatile Write Cache enabled (else FUA on writes)
    input  wire logic          disabling,          // a controller reset is under way
    input  wire logic          m_flush,            // shutdown: one FLUSH
    output      logic          s_flush_done,

    // admin SQEs (ats_nvme_admin)
    output      logic          m_adm_valid,
    input  wire logic          m_adm_ready,
    output      logic [511:0]  m_adm_data,
    output      logic [15:0]   m_adm_sqhd,
    input  wire logic          adm_busy,           // an admin command is running
    output      logic [NQ:0]   sq_busy,            // a slot of the SQ is in use (registered)
    output      logic          smart_rd,           // a Read / TX Read completed OK (its CQE acknowledged)
    output      logic          smart_wr,           // a Write / TX Write / DiffWrite completed OK
    output      logic [16:0]   smart_bytes,        // ... its transfer length

    // PRP setup and window reads (ats_nvme_prp)
    output      logic          m_set_valid,
    input  wire logic          m_set_ready,
    output      logic [SW-1:0] m_set_slot,
    output      logic [63:0]   m_set_prp1,
    output      logic [63:0]   m_set_prp2,
    output      logic [16:0]   m_set_len,
    input  wire logic          s_setr_valid,
    output      logic          s_setr_ready,
    input  wire logic [1:0]    s_setr_status,
    output      logic          m_lrd_valid,
    input  wire logic          m_lrd_ready,
    output      logic [31:0]   m_lrd_addr,
    output      logic [15:0]   m_lrd_len,
    input  wire logic          s_lrd_valid,
    output      logic          s_lrd_ready,
    input  wire logic [31:0]   s_lrd_data,
    input  wire logic          s_lrd_last,
    input  wire logic          s_lrd_err,
    input  wire logic [QDEPTH:0] slot_err,
    input  wire logic [7:0]    wr_acc,
    input  wire logic [7:0]    wr_done,

    // descriptors and completions (ats_ssd_core §1, §2)
    output      logic          m_cmd_valid,
    input  wire logic          m_cmd_ready,
    output      logic [3:0]    m_cmd_op,
    output      logic [7:0]    m_cmd_tag,
    output      logic [47:0]   m_cmd_lba,
    output      logic [15:0]   m_cmd_nlb,
    output      logic [5:0]    m_cmd_txid,
    output      logic [3:0]    m_cmd_flags,
    output      logic [1:0]    m_cmd_attr,
    output      logic [1:0]    m_cmd_prio,
    output      logic [31:0]   m_cmd_dptr,
    output      logic [31:0]   m_cmd_aux,
    input  wire logic          s_cpl_valid,
    output      logic          s_cpl_ready,
    input  wire logic [7:0]    s_cpl_tag,
    input  wire logic [7:0]    s_cpl_status,
    input  wire logic [31:0]   s_cpl_result,

    // completion requests (ats_nvme_qm)
    output      logic          m_cqe_valid,
    input  wire logic          m_cqe_ready,
    output      logic [QW-1:0] m_cqe_cqid,
    output      logic [QW-1:0] m_cqe_sqid,
    output      logic [15:0]   m_cqe_sqhd,
    output      logic [15:0]   m_cqe_cid,
    output      logic [14:0]   m_cqe_status,
    output      logic [31:0]   m_cqe_dw0,
    input  wire logic [NQ:0]   cq_room
);
    // the NVMe statuses of ats_nvme_pkg (named here: Yosys reads package references, not imports)
    localparam logic [10:0] SC_BAD_FIELD = ats_nvme_pkg::SC_BAD_FIELD,
                            SC_BAD_NS = ats_nvme_pkg::SC_BAD_NS,
                            SC_BAD_OP = ats_nvme_pkg::SC_BAD_OP,
                            SC_INTERNAL = ats_nvme_pkg::SC_INTERNAL,
                            SC_LBA_RANGE = ats_nvme_pkg::SC_LBA_RANGE,
                            SC_OK = ats_nvme_pkg::SC_OK,
                            SC_PRP_OFFSET = ats_nvme_pkg::SC_PRP_OFFSET,
                            SC_XFER = ats_nvme_pkg::SC_XFER,
                            SC_BAD_TXID = ats_nvme_pkg::SC_BAD_TXID,
                            SC_SW_NONE = ats_nvme_pkg::SC_SW_NONE, SC_SW_MANY = ats_nvme_pkg::SC_SW_MANY,
                            SC_SW_PAGES = ats_nvme_pkg::SC_SW_PAGES, SC_SW_EMPTY = ats_nvme_pkg::SC_SW_EMPTY,
                            SC_SW_LENGTH = ats_nvme_pkg::SC_SW_LENGTH, SC_SW_OVERLAP = ats_nvme_pkg::SC_SW_OVERLAP;
    localparam int SW_MAXP = ats_nvme_pkg::sw_pages(PAGE_BYTES, TX_ENTRIES);   // blocks an SWRITE carries
    localparam int SK      = STX > 0 ? STX : 1;    // engine arrays (none used when STX = 0)
    localparam int TX_RES0 = NUM_TX - STX - ATX + 1;   // the first reserved txid (the SWRITE engines')
    localparam int TX_ATM0 = NUM_TX - ATX + 1;     // the first atomic Writes' txid
    localparam int AXW     = ATX > 1 ? $clog2(ATX) : 1; // atomic pool index width
    localparam int EW      = SK > 1 ? $clog2(SK) : 1;   // engine index width
    localparam int TW = $clog2(QDEPTH);
    localparam int MAX_NLB = 65536 / PAGE_BYTES;   // LBAs a command may move (MDTS)
    // §1 ops and flags (masks) of ats_host_pkg, the contract's one source
    localparam logic [3:0] OP_READ = ats_host_pkg::OP_READ, OP_WRITE = ats_host_pkg::OP_WRITE,
                           OP_DIFFWRITE = ats_host_pkg::OP_DIFFWRITE, OP_TX_BEGIN = ats_host_pkg::OP_TX_BEGIN,
                           OP_TX_COMMIT = ats_host_pkg::OP_TX_COMMIT, OP_TX_ABORT = ats_host_pkg::OP_TX_ABORT,
                           OP_FLUSH = ats_host_pkg::OP_FLUSH, OP_RFLUSH = ats_host_pkg::OP_RFLUSH,
                           OP_TRIM = ats_host_pkg::OP_TRIM, OP_GET_LOG = ats_host_pkg::OP_GET_LOG;
    localparam logic [3:0] F_FUA = 4'b1 << ats_host_pkg::FLAG_FUA, F_BARRIER = 4'b1 << ats_host_pkg::FLAG_BARRIER,
                           F_COMMIT = 4'b1 << ats_host_pkg::FLAG_COMMIT;
    // NVMe opcodes
    localparam logic [7:0] IO_FLUSH = 8'h00, IO_WRITE = 8'h01, IO_READ = 8'h02, IO_DSM = 8'h09,
                           IO_TX_WRITE = 8'h81, IO_TX_READ = 8'h82, IO_TX_BEGIN = 8'h84,
                           IO_DIFF_WRITE = 8'h85, IO_TX_COMMIT = 8'h88, IO_RANGE_FLUSH = 8'h89,
                           IO_TX_ABORT = 8'h8C, IO_SWRITE = ats_nvme_pkg::IO_SWRITE,
                           IO_SREAD = ats_nvme_pkg::IO_SREAD;
    localparam logic [31:0] CDW13_DEFINED = 32'h0003_033F;

    if (QDEPTH < 2 || QDEPTH > 64 || (QDEPTH & (QDEPTH - 1)) != 0) begin : g_check_qdepth
        $fatal(1, "ats_nvme_cmd: QDEPTH must be a power of two, 2..64 (%m)");
    end
    if (PAGE_BYTES < 512 || PAGE_BYTES > 65536 || (PAGE_BYTES & (PAGE_BYTES - 1)) != 0) begin : g_check_page
        $fatal(1, "ats_nvme_cmd: PAGE_BYTES must be a power of two, 512..65536 (%m)");
    end
    if (STX < 0 || STX > 8 || ATX < 1 || ATX > 8 || NUM_TX - STX - ATX < 1) begin : g_check_stx
        $fatal(1, "ats_nvme_cmd: STX must be 0..8, ATX 1..8, and leave the host a txid (%m)");
    end
    if (NUM_TX < 2 || NUM_TX > 63 || AWU < 2 || AWU > MAX_NLB || (AWU & (AWU - 1)) != 0) begin : g_check_awu
        $fatal(1, "ats_nvme_cmd: NUM_TX must be 2..63, AWU a power of two, 2..MDTS in LBAs (%m)");
    end


    // ---------------------------------------------------------------- slots
    logic [QDEPTH-1:0] busy_q, done_q, shut_q;
    logic [QDEPTH-1:0] win_q;                      // the slot's window was opened (its slot_err counts:
                                                   // a command without data sees an earlier user's flag)
    logic [QW-1:0]     sl_sqid [QDEPTH];
    logic [QW-1:0]     sl_cqid [QDEPTH];
    logic [15:0]       sl_cid  [QDEPTH];
    logic [15:0]       sl_sqhd [QDEPTH];
    logic [10:0]       sl_st   [QDEPTH];           // first non-OK status (NVMe)
    logic [31:0]       sl_res  [QDEPTH];
    logic [7:0]        sl_snap [QDEPTH];           // wr_acc at the completion
    logic [QDEPTH-1:0] wok_q;                      // wr_done has reached sl_snap since the completion
                                                   // (kept: a slot waiting for CQ room may see wr_done run
                                                   // 128 or more bursts past its record, where the mod-256
                                                   // compare would say "not reached" again)
    logic [1:0]        sl_kind [QDEPTH];           // SMART: 1 read, 2 write, 0 neither
    logic [16:0]       sl_len  [QDEPTH];           // SMART: the transfer length

    logic [TW-1:0] free_idx;                       // lowest free slot (taken only while one is:
    always_comb begin                              // the queue manager fetches on fetch_ok_io)
        free_idx = '0;
        for (int i = QDEPTH - 1; i >= 0; i--) begin
            if (!busy_q[i]) free_idx = TW'(i);
        end
    end

    // ---------------------------------------------------------------- decoder
    typedef enum logic [3:0] {D_IDLE, D_ADM, D_CHECK, D_SET, D_SETW, D_LRD, D_LDAT, D_DESC, D_FIN,
                              D_DSM, D_SWCHK, D_SWEND, D_SWGO, D_SRW, D_ABW} dec_state_e;
    dec_state_e    d_q;
    logic [511:0]  q_sqe;
    logic [15:0]   q_sqhd;
    logic [1:0]    q_prio;
    logic [TW-1:0] q_slot;
    logic [10:0]   q_st;                           // D_FIN: the status to complete with

    /* verilator lint_off UNUSEDSIGNAL */          // CID (kept per slot), reserved and hint bits
    logic [31:0] c0, c12;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [31:0] nsid, c10, c11, c13, c14, c15;
    logic [63:0] prp1, prp2, slba;
    logic [7:0]  opc;
    logic [15:0] nlb;
    assign c0   = q_sqe[0 +: 32];
    assign nsid = q_sqe[32 +: 32];
    assign prp1 = q_sqe[192 +: 64];
    assign prp2 = q_sqe[256 +: 64];
    assign c10  = q_sqe[320 +: 32];
    assign c11  = q_sqe[352 +: 32];
    assign c12  = q_sqe[384 +: 32];
    assign c13  = q_sqe[416 +: 32];
    assign c14  = q_sqe[448 +: 32];
    assign c15  = q_sqe[480 +: 32];
    assign slba = {c11, c10};
    assign opc  = c0[7:0];
    assign nlb  = c12[15:0];

    logic known, vendor, rw, data;
    assign known  = opc == IO_FLUSH || opc == IO_WRITE || opc == IO_READ || opc == IO_DSM ||
                    opc == IO_TX_WRITE || opc == IO_TX_READ || opc == IO_TX_BEGIN ||
                    opc == IO_DIFF_WRITE || opc == IO_TX_COMMIT || opc == IO_RANGE_FLUSH ||
                    opc == IO_TX_ABORT || opc == IO_SREAD || (STX > 0 && opc == IO_SWRITE);
    assign vendor = opc[7];
    assign rw     = opc == IO_WRITE || opc == IO_READ || opc == IO_TX_WRITE || opc == IO_TX_READ ||
                    opc == IO_SREAD;
    logic sw;                                      // an SWRITE (none without engines: its logic is
    assign sw     = STX > 0 && opc == IO_SWRITE;   // constant then, and synthesis drops it)
    assign data   = opc[1:0] != 2'b00;

    logic [16:0] xfer_len;
    always_comb begin
        xfer_len = '0;
        if (rw || sw)              xfer_len = 17'((32'(nlb) + 32'd1) * 32'(PAGE_BYTES));
        else if (opc == IO_DIFF_WRITE)  xfer_len = {1'b0, c14[31:16]};
        else if (opc == IO_RANGE_FLUSH) xfer_len = (17'(c10[7:0]) + 17'd1) * 17'd8;
        else if (opc == IO_DSM)         xfer_len = (17'(c10[7:0]) + 17'd1) * 17'd16;
    end

    logic [10:0] chk_st;                           // the static checks, in order
    always_comb begin
        chk_st = SC_OK;
        if (!known)                                              chk_st = SC_BAD_OP;
        else if (c0[9:8] != 2'b00 || c0[15:14] != 2'b00)         chk_st = SC_BAD_FIELD;
        else if (nsid != 32'd1 && !(opc == IO_FLUSH && nsid == 32'hFFFF_FFFF)) chk_st = SC_BAD_NS;
        else if (vendor && (c13 & ~CDW13_DEFINED) != 32'd0)      chk_st = SC_BAD_FIELD;
        else if ((sw || opc == IO_SREAD) && c13 != 32'd0)        chk_st = SC_BAD_FIELD;
        else if (sw && (c10[31:8] != 24'd0 || c11 != 32'd0))    chk_st = SC_BAD_FIELD;
        else if (vendor && c13[5:0] >= 6'(TX_RES0) && c13[5:0] <= 6'(NUM_TX)) chk_st = SC_BAD_TXID;   // reserved
        else if (rw && 32'(nlb) >= 32'(MAX_NLB))                 chk_st = SC_BAD_FIELD;
        else if ((opc == IO_DSM || opc == IO_RANGE_FLUSH) && c10[7:0] > 8'd7) chk_st = SC_BAD_FIELD;
        else if (sw && c10[7:0] == 8'd0)                         chk_st = SC_SW_NONE;
        else if (sw && c10[7:0] > 8'(ats_nvme_pkg::SW_RANGES))   chk_st = SC_SW_MANY;
        else if (sw && 32'(nlb) >= 32'(SW_MAXP))                 chk_st = SC_SW_PAGES;
        else if (sw && 13'(c14[11:0]) + {5'd0, c10[3:0], 4'd0} > 13'd4096) chk_st = SC_BAD_FIELD;
    end

    // the descriptor of a (non-DSM) command
    logic [31:0] win;
    logic        fua;
    logic [3:0]  vflags;
    assign win    = {{(32 - 17 - TW){1'b0}}, q_slot, 5'b0, prp1[11:0]};
    logic [31:0] winl;                              // an SWRITE's range list in the window
    assign winl   = {{(32 - 17 - TW){1'b0}}, q_slot, 5'b0, c14[11:0]};
    assign fua    = c12[30] || !vwc;
    assign vflags = (c13[8] ? F_COMMIT : 4'd0) | (c13[9] ? F_BARRIER : 4'd0);

    // an atomic Write: 2..AWU blocks inside one AWU-aligned group of LBAs (the implicit transaction)
    logic        atomic;
    assign atomic = opc == IO_WRITE && nlb != 16'd0 &&
                    17'(slba[15:0] & 16'(AWU - 1)) + 17'(nlb) < 17'(AWU);

    // the atomic txid pool: one atomic Write in the core per txid, taken in turn; a txid aborted
    // after a failed one (module header)
    logic [ATX-1:0] a_busy_q;                       // entry j: an atomic Write's WRITE is in the core
    logic [TW-1:0]  a_slot_q [ATX];                 // ... under this tag
    logic [ATX-1:0] a_dirty_q;                      // entry j: its txid may hold uncommitted pages
    logic [AXW-1:0] a_nx_q;                         // the entry the next atomic Write takes
    logic           a_wait, a_abort;
    assign a_wait  = atomic && a_busy_q[a_nx_q];    // D_DESC: wait for the entry's previous Write
    assign a_abort = atomic && a_dirty_q[a_nx_q];   // D_DESC: the descriptor is the entry's TX_ABORT

    logic        d_lba_bad;                         // SLBA beyond the core's 48 bits
    assign d_lba_bad = (rw || opc == IO_DIFF_WRITE) && slba[63:48] != 16'd0;

    // DSM range list (up to 8 ranges), read through the window
    logic [31:0] r_len   [8];
    logic [47:0] r_slba  [8];
    logic [7:0]  r_valid_q;                        // ranges with a length (not yet issued)
    logic [7:0]  r_hi_q;                           // ... whose SLBA has bits 63:48 set (not issued:
                                                   // LBA Out of Range, as the core would answer)
    logic [4:0]  l_i_q;                            // dword index in the list
    logic        l_err_q, l_big_q;
    logic [2:0]  l_r;
    assign l_r = l_i_q[4:2];

    // SWRITE: the list's checks (a pass over the range pairs), the setup phase, SREAD's wait
    logic [35:0] l_sum_q;                          // the ranges' lengths added up
    logic [5:0]  p_q;                              // range pair (i, j) = (p_q[5:3], p_q[2:0])
    logic        sw_lr_q, sw_ov_q;                 // a range past the namespace / two ranges overlap
    logic        q_lph;                            // the setup on offer is an SWRITE's list (not its data)
    logic [QDEPTH-1:0] swk_q;                      // the slot holds an SWRITE or an atomic Write
    logic [QDEPTH-1:0] sr_mask_q;                  // SREAD: the slots it waits for
    logic [3:0]  nr4;
    assign nr4 = c10[3:0];                         // an SWRITE's NR (1..8 once checked)
    logic [7:0]  nr_mask;
    assign nr_mask = 8'((9'd1 << nr4) - 9'd1);
    logic [2:0]  p_i, p_j;
    assign p_i = p_q[5:3];
    assign p_j = p_q[2:0];
    logic [48:0] e_pi, e_pj;                       // ends of ranges i and j (exclusive)
    assign e_pi = {1'b0, r_slba[p_i]} + 49'(r_len[p_i]);
    assign e_pj = {1'b0, r_slba[p_j]} + 49'(r_len[p_j]);
    logic        p_lr, p_ov;
    assign p_lr = STX > 0 && 4'(p_i) < nr4 && (r_hi_q[p_i] || e_pi > 49'(NUM_LBAS));
    assign p_ov = STX > 0 && p_i < p_j && 4'(p_j) < nr4 && 49'(r_slba[p_i]) < e_pj && 49'(r_slba[p_j]) < e_pi;
    logic        sw_empty;
    assign sw_empty = (nr_mask & ~r_valid_q) != 8'd0;

    // SWRITE engines: one SWRITE each, its WRITEs one at a time on txid TX_RES0 + k
    typedef enum logic [1:0] {E_IDLE, E_ISSUE, E_WAIT} eng_state_e;
    eng_state_e    e_st   [SK];
    logic [TW-1:0] e_slot [SK];
    logic [1:0]    e_prio [SK];
    logic [31:0]   e_win  [SK];
    logic [15:0]   e_off  [SK];                     // blocks of the ranges issued
    logic [2:0]    e_i    [SK];                     // the range to issue
    logic [2:0]    e_last [SK];                     // the last range (NR - 1)
    logic          e_ab   [SK];                     // the next descriptor is the txid's TX_ABORT
    logic          e_dirty[SK];                     // the txid may hold uncommitted pages
    logic [47:0]   e_lba  [SK][8];
    logic [15:0]   e_nlb  [SK][8];
    logic          e_free_any, e_iss_any;
    logic [EW-1:0] e_free, e_iss;          // lowest idle / issuing engine
    always_comb begin
        e_free_any = 1'b0; e_free = '0; e_iss_any = 1'b0; e_iss = '0;
        for (int k = SK - 1; k >= 0; k--) begin
            if (STX > 0 && e_st[k] == E_IDLE) begin
                e_free_any = 1'b1; e_free = (EW)'(k);
            end
            if (STX > 0 && e_st[k] == E_ISSUE) begin
                e_iss_any = 1'b1; e_iss = (EW)'(k);
            end
        end
    end

    // trim sequencer: issues the valid ranges of one DSM, one at a time
    typedef enum logic [1:0] {T_IDLE, T_ISSUE, T_WAIT} trim_state_e;
    trim_state_e   t_q;
    logic [TW-1:0] t_slot_q;
    logic [1:0]    t_prio_q;
    logic [2:0]    t_r;                             // next range to issue
    logic          t_skip;                          // it is out of range: recorded, not issued
    logic          t_consume;                       // the range t_r is done with this cycle
    always_comb begin
        t_r = '0;
        for (int i = 7; i >= 0; i--) if (r_valid_q[i]) t_r = 3'(i);
    end

    // completions
    logic cpl_mid;                                  // the completion of a DSM TRIM with more to issue
    logic cpl_take;
    assign cpl_take = s_cpl_valid && s_cpl_ready;
    // an SWRITE engine's completion: e_mid = more descriptors follow (the slot is not done), e_ign = the
    // status is not the command's (its TX_ABORT of a dirty txid answered OK or TX_EMPTY)
    logic e_mid, e_ign;
    logic cpl_ok, cpl_abok;
    assign cpl_ok   = s_cpl_status == ats_host_pkg::STS_OK;
    assign cpl_abok = cpl_ok || s_cpl_status == ats_host_pkg::STS_TX_EMPTY;
    // an atomic Write's TX_ABORT answered OK / TX_EMPTY: not the command's status, its WRITE follows
    logic a_mid;
    assign a_mid = d_q == D_ABW && 8'(s_cpl_tag) == 8'(q_slot) && cpl_abok;
    always_comb begin
        e_mid = 1'b0; e_ign = 1'b0;
        for (int k = 0; k < SK; k++) begin
            if (STX > 0 && e_st[k] == E_WAIT && 8'(s_cpl_tag) == 8'(e_slot[k])) begin
                if (e_ab[k]) begin
                    e_mid = cpl_abok; e_ign = cpl_abok;
                end else begin
                    e_mid = cpl_ok && e_i[k] != e_last[k];
                end
            end
        end
    end

    // ---------------------------------------------------------------- descriptor output register
    logic d_load, t_load, f_load, s_load;
    logic cmd_free;
    assign cmd_free = !m_cmd_valid || m_cmd_ready;

    assign s_sqe_ready  = d_q == D_IDLE && !m_flush;
    assign m_adm_valid  = d_q == D_ADM;
    assign m_adm_data   = q_sqe;
    assign m_adm_sqhd   = q_sqhd;
    assign m_set_valid  = d_q == D_SET;
    assign m_set_slot   = SW'(q_slot);
    assign m_set_prp1   = q_lph ? {c15, c14} : prp1;   // an SWRITE's list first, then its data
    assign m_set_prp2   = q_lph ? 64'd0 : prp2;
    assign m_set_len    = q_lph ? {9'd0, nr4, 4'd0} : xfer_len;
    assign s_setr_ready = d_q == D_SETW;
    assign m_lrd_valid  = d_q == D_LRD && t_q == T_IDLE;   // one DSM at a time
    assign m_lrd_addr   = sw ? winl : win;
    assign m_lrd_len    = sw ? {8'd0, nr4, 4'd0} : 16'(xfer_len);
    assign s_lrd_ready  = d_q == D_LDAT;
    assign d_load       = d_q == D_DESC && cmd_free && !d_lba_bad && !a_wait;
    assign t_skip       = t_q == T_ISSUE && r_hi_q[t_r];
    assign t_load       = t_q == T_ISSUE && !r_hi_q[t_r] && cmd_free && !d_load;
    assign t_consume    = t_load || t_skip;
    assign s_load       = e_iss_any && cmd_free && !d_load && !t_load;

    logic flush_sent_q;
    assign f_load = m_flush && !flush_sent_q && d_q == D_IDLE && cmd_free && !d_load && !t_load && !s_load &&
                    !busy_q[0];
    // SHUT_CKPT: the checkpoint request (GET_LOG, SHUT_TAG) once the shutdown FLUSH has completed
    localparam logic [7:0] SHUT_TAG = ats_host_pkg::TAG_SHUTDOWN;
    logic ck_pend_q, ck_wait_q, k_load;
    assign k_load = SHUT_CKPT && m_flush && ck_pend_q && d_q == D_IDLE && cmd_free && !d_load && !t_load &&
                    !s_load;

    // the slot a decoder completion (no descriptor) finishes, in D_FIN
    always_ff @(posedge clk) begin
        case (d_q)
            D_IDLE: if (s_sqe_valid && s_sqe_ready) begin
                q_sqe  <= s_sqe_data;
                q_sqhd <= s_sqe_sqhd;
                q_prio <= s_sqe_prio;
                q_slot <= free_idx;
                d_q    <= s_sqe_sqid == '0 ? D_ADM : D_CHECK;
            end
            D_ADM: if (m_adm_ready) d_q <= D_IDLE;
            D_CHECK: begin
                sr_mask_q <= swk_q & busy_q & ~done_q & ~(QDEPTH'(1) << q_slot);   // SREAD: what it waits for
                if (chk_st != SC_OK) begin
                    q_st <= chk_st; d_q <= D_FIN;
                end else if (data) begin
                    d_q <= D_SET;
                    q_lph <= sw;                            // an SWRITE's list first
                end else begin
                    d_q <= D_DESC;
                end
            end
            D_SET: if (m_set_ready) d_q <= D_SETW;
            D_SETW: if (s_setr_valid) begin
                if (s_setr_status == 2'd1) begin
                    q_st <= SC_PRP_OFFSET; d_q <= D_FIN;
                end else if (s_setr_status == 2'd2) begin
                    q_st <= SC_XFER; d_q <= D_FIN;
                end else if (s_setr_status == 2'd3) begin
                    q_st <= SC_INTERNAL; d_q <= D_FIN;
                end else if (q_lph) begin
                    d_q <= D_LRD;                           // the SWRITE's range list
                end else if (sw) begin
                    d_q <= D_SWGO;                          // its data are open: to an engine
                end else if (opc == IO_SREAD) begin
                    d_q <= D_SRW;
                end else if (opc == IO_DSM) begin
                    if (c11[2]) begin
                        d_q <= D_LRD;
                    end else begin
                        q_st <= SC_OK; d_q <= D_FIN;        // hints only: no descriptor
                    end
                end else begin
                    d_q <= D_DESC;
                end
            end
            D_LRD: if (m_lrd_valid && m_lrd_ready) begin
                l_i_q <= '0; l_err_q <= 1'b0; l_big_q <= 1'b0; r_valid_q <= '0; r_hi_q <= '0;
                l_sum_q <= '0;
                d_q <= D_LDAT;
            end
            D_LDAT: if (s_lrd_valid) begin
                // {context attributes, length in LBAs, SLBA low, SLBA high} per range
                if (s_lrd_err) l_err_q <= 1'b1;
                case (l_i_q[1:0])
                    2'd1: begin
                        r_len[l_r] <= s_lrd_data;
                        if (STX > 0) l_sum_q <= l_sum_q + 36'(s_lrd_data);
                        if (s_lrd_data > 32'd65536) l_big_q <= 1'b1;
                        if (s_lrd_data != 32'd0) r_valid_q[l_r] <= 1'b1;
                    end
                    2'd2: r_slba[l_r][31:0] <= s_lrd_data;
                    2'd3: begin
                        r_slba[l_r][47:32] <= s_lrd_data[15:0];
                        r_hi_q[l_r] <= s_lrd_data[31:16] != 16'd0;
                    end
                    default: ;
                endcase
                l_i_q <= l_i_q + 5'd1;
                if (s_lrd_last) begin
                    d_q <= sw ? D_SWCHK : D_DSM;
                    p_q <= '0; sw_lr_q <= 1'b0; sw_ov_q <= 1'b0;
                end
            end
            // SWRITE's list: transfer error, an empty range, the length first; then a pass over the
            // 64 range pairs (range past the namespace, overlap), decided in D_SWEND
            D_SWCHK: begin
                if (p_q == 6'd0 && l_err_q) begin
                    q_st <= SC_XFER; d_q <= D_FIN;
                end else if (p_q == 6'd0 && sw_empty) begin
                    q_st <= SC_SW_EMPTY; d_q <= D_FIN;
                end else if (p_q == 6'd0 && l_sum_q != 36'(nlb) + 36'd1) begin
                    q_st <= SC_SW_LENGTH; d_q <= D_FIN;
                end else begin
                    if (p_lr) sw_lr_q <= 1'b1;
                    if (p_ov) sw_ov_q <= 1'b1;
                    p_q <= p_q + 6'd1;
                    if (p_q == 6'd63) d_q <= D_SWEND;
                end
            end
            D_SWEND: begin
                if (sw_lr_q) begin
                    q_st <= SC_LBA_RANGE; d_q <= D_FIN;
                end else if (sw_ov_q) begin
                    q_st <= SC_SW_OVERLAP; d_q <= D_FIN;
                end else begin
                    q_lph <= 1'b0; d_q <= D_SET;            // the data's PRPs
                end
            end
            D_SWGO: if (e_free_any) d_q <= D_IDLE;          // the engine takes it (below)
            D_SRW: if ((sr_mask_q & swk_q & busy_q & ~done_q) == '0) d_q <= D_DESC;
            D_DSM: begin
                if (l_err_q) begin
                    q_st <= SC_XFER; d_q <= D_FIN;
                end else if (l_big_q) begin
                    q_st <= SC_BAD_FIELD; d_q <= D_FIN;
                end else if (r_valid_q == '0) begin
                    q_st <= SC_OK; d_q <= D_FIN;
                end else if (t_q == T_IDLE) begin
                    d_q <= D_IDLE;                          // the sequencer takes it from here
                end
            end
            D_DESC: begin
                if (d_lba_bad) begin
                    q_st <= SC_LBA_RANGE; d_q <= D_FIN;
                end else if (d_load) begin
                    d_q <= a_abort ? D_ABW : D_IDLE;
                end
            end
            // an atomic Write's TX_ABORT of NUM_TX: then its WRITE, or the command ends with its status
            D_ABW: if (cpl_take && 8'(s_cpl_tag) == 8'(q_slot)) d_q <= cpl_abok ? D_DESC : D_IDLE;
            D_FIN: d_q <= D_IDLE;
            default: d_q <= D_IDLE;
        endcase
        if (t_consume) r_valid_q[t_r] <= 1'b0;
        if (rst) begin
            d_q <= D_IDLE; r_valid_q <= '0; r_hi_q <= '0; q_lph <= 1'b0;
        end
    end

    // trim sequencer
    always_ff @(posedge clk) begin
        case (t_q)
            T_IDLE: if (d_q == D_DSM && !l_err_q && !l_big_q && r_valid_q != '0) begin
                t_slot_q <= q_slot;
                t_prio_q <= q_prio;
                t_q      <= T_ISSUE;                      // the first range even while disabling
                                                        // (as the reference: only later ones stop)
            end
            T_ISSUE: begin
                if (t_load) t_q <= T_WAIT;
                else if (t_skip && (r_valid_q & ~(8'd1 << t_r)) == '0) t_q <= T_IDLE;   // the last range
            end
            T_WAIT: if (cpl_take && 8'(s_cpl_tag) == 8'(t_slot_q)) begin
                t_q <= (r_valid_q != '0 && !disabling) ? T_ISSUE : T_IDLE;
            end
            default: t_q <= T_IDLE;
        endcase
        if (rst) t_q <= T_IDLE;
    end

    // SWRITE engines
    always_ff @(posedge clk) begin
        for (int k = 0; k < SK; k++) begin
            if (STX > 0 && d_q == D_SWGO && e_free_any && e_free == (EW)'(k)) begin
                e_st[k]   <= E_ISSUE;
                e_ab[k]   <= e_dirty[k];                      // a dirty txid is aborted first
                e_slot[k] <= q_slot;
                e_prio[k] <= q_prio;
                e_win[k]  <= win;
                e_off[k]  <= '0;
                e_i[k]    <= '0;
                e_last[k] <= 3'(nr4 - 4'd1);
                for (int r = 0; r < 8; r++) begin
                    e_lba[k][r] <= r_slba[r];
                    e_nlb[k][r] <= 16'(r_len[r] - 32'd1);
                end
            end
            if (s_load && e_iss == (EW)'(k)) e_st[k] <= E_WAIT;
            if (STX > 0 && cpl_take && e_st[k] == E_WAIT && 8'(s_cpl_tag) == 8'(e_slot[k])) begin
                if (e_ab[k]) begin
                    if (cpl_abok) begin
                        e_ab[k] <= 1'b0; e_dirty[k] <= 1'b0; e_st[k] <= E_ISSUE;
                    end else begin
                        e_st[k] <= E_IDLE;                    // still dirty: tried again next time
                    end
                end else if (cpl_ok && e_i[k] != e_last[k]) begin
                    e_i[k] <= e_i[k] + 3'd1;
                    e_off[k] <= e_off[k] + e_nlb[k][e_i[k]] + 16'd1;
                    e_st[k] <= E_ISSUE;
                end else begin
                    e_st[k] <= E_IDLE;                        // the COMMIT write, or a failure
                    if (!cpl_ok) e_dirty[k] <= 1'b1;
                end
            end
            if (rst) begin
                e_st[k] <= E_IDLE; e_dirty[k] <= 1'b0;
            end
        end
    end

    // atomic Writes: the one in the core per pool entry, the entries' dirty marks, the rotation (all
    // kept over controller resets). The entry a_nx_q cannot complete while the decoder is in D_ABW
    // (its WRITE is not in the core), so the mark the abort clears is a_nx_q's.
    always_ff @(posedge clk) begin
        if (d_load && atomic && !a_dirty_q[a_nx_q]) begin
            a_busy_q[a_nx_q] <= 1'b1;
            a_slot_q[a_nx_q] <= q_slot;
        end
        for (int j = 0; j < ATX; j++) begin
            if (cpl_take && a_busy_q[j] && 8'(s_cpl_tag) == 8'(a_slot_q[j])) begin
                a_busy_q[j] <= 1'b0;
                if (!cpl_ok) a_dirty_q[j] <= 1'b1;
            end
        end
        if (cpl_take && a_mid) a_dirty_q[a_nx_q] <= 1'b0;
        if (rst) begin
            a_busy_q <= '0; a_dirty_q <= '0;
        end
    end
    if (ATX > 1) begin : g_anx                      // the rotation (constant entry 0 without a pool)
        always_ff @(posedge clk) begin
            if (d_load && atomic && !a_dirty_q[a_nx_q])
                a_nx_q <= 32'(a_nx_q) == ATX - 1 ? '0 : a_nx_q + 1'b1;
            if (rst) a_nx_q <= '0;
        end
    end else begin : g_anx1
        assign a_nx_q = '0;
    end

    // ---------------------------------------------------------------- descriptor register
    always_ff @(posedge clk) begin
        if (d_load || t_load || f_load || k_load || s_load) begin
            // fields a descriptor does not define are 0 (§1.8a); the cases below set the others
            m_cmd_valid <= 1'b1;
            m_cmd_op <= OP_FLUSH; m_cmd_tag <= '0; m_cmd_prio <= '0;
            m_cmd_lba <= '0; m_cmd_nlb <= '0; m_cmd_txid <= '0; m_cmd_flags <= '0; m_cmd_attr <= '0;
            m_cmd_dptr <= '0; m_cmd_aux <= '0;
        end else if (m_cmd_ready) begin
            m_cmd_valid <= 1'b0;
        end
        if (d_load) begin
            m_cmd_tag  <= 8'(q_slot);
            m_cmd_prio <= q_prio;
            case (opc)
                IO_FLUSH: m_cmd_op <= OP_FLUSH;
                IO_WRITE: begin
                    m_cmd_op <= OP_WRITE; m_cmd_lba <= slba[47:0]; m_cmd_nlb <= nlb;
                    m_cmd_flags <= (fua ? F_FUA : 4'd0) | (atomic ? F_COMMIT : 4'd0); m_cmd_dptr <= win;
                    if (atomic) m_cmd_txid <= 6'(TX_ATM0) + 6'(a_nx_q);
                end
                IO_READ, IO_SREAD: begin
                    m_cmd_op <= OP_READ; m_cmd_lba <= slba[47:0]; m_cmd_nlb <= nlb; m_cmd_dptr <= win;
                end
                IO_TX_WRITE: begin
                    m_cmd_op <= OP_WRITE; m_cmd_lba <= slba[47:0]; m_cmd_nlb <= nlb; m_cmd_dptr <= win;
                    m_cmd_txid <= c13[5:0]; m_cmd_attr <= c13[17:16];
                    m_cmd_flags <= vflags | (fua ? F_FUA : 4'd0);
                end
                IO_TX_READ: begin
                    m_cmd_op <= OP_READ; m_cmd_lba <= slba[47:0]; m_cmd_nlb <= nlb; m_cmd_dptr <= win;
                    m_cmd_txid <= c13[5:0]; m_cmd_attr <= c13[17:16]; m_cmd_flags <= vflags;
                end
                IO_DIFF_WRITE: begin
                    m_cmd_op <= OP_DIFFWRITE; m_cmd_lba <= slba[47:0]; m_cmd_dptr <= win; m_cmd_aux <= c14;
                    m_cmd_txid <= c13[5:0]; m_cmd_attr <= c13[17:16];
                    m_cmd_flags <= vflags | (fua ? F_FUA : 4'd0);
                end
                IO_RANGE_FLUSH: begin
                    m_cmd_op <= OP_RFLUSH; m_cmd_nlb <= {8'd0, c10[7:0]}; m_cmd_aux <= win;
                    m_cmd_txid <= c13[5:0]; m_cmd_attr <= c13[17:16]; m_cmd_flags <= vflags;
                end
                default: begin                                  // TX_BEGIN, TX_COMMIT, TX_ABORT
                    m_cmd_op <= opc == IO_TX_BEGIN ? OP_TX_BEGIN : opc == IO_TX_COMMIT ? OP_TX_COMMIT : OP_TX_ABORT;
                    m_cmd_txid <= c13[5:0]; m_cmd_attr <= c13[17:16]; m_cmd_flags <= vflags;
                end
            endcase
        end else if (t_load) begin
            m_cmd_op   <= OP_TRIM;
            m_cmd_tag  <= 8'(t_slot_q);
            m_cmd_prio <= t_prio_q;
            m_cmd_lba  <= r_slba[t_r];
            m_cmd_nlb  <= 16'(r_len[t_r] - 32'd1);
        end else if (s_load) begin
            m_cmd_tag  <= 8'(e_slot[e_iss]);
            m_cmd_prio <= e_prio[e_iss];
            m_cmd_txid <= 6'(TX_RES0) + 6'(e_iss);
            if (e_ab[e_iss]) begin
                m_cmd_op <= OP_TX_ABORT;
            end else begin
                m_cmd_op    <= OP_WRITE;
                m_cmd_lba   <= e_lba[e_iss][e_i[e_iss]];
                m_cmd_nlb   <= e_nlb[e_iss][e_i[e_iss]];
                m_cmd_dptr  <= e_win[e_iss] + 32'(e_off[e_iss]) * 32'(PAGE_BYTES);
                m_cmd_flags <= e_i[e_iss] == e_last[e_iss] ? F_COMMIT : 4'd0;
            end
        end
        // f_load: the shutdown FLUSH, tag 0, every other field 0 (the defaults above)
        if (k_load) begin
            m_cmd_op <= OP_GET_LOG; m_cmd_tag <= SHUT_TAG; m_cmd_dptr <= 32'h8000_0000;
        end
        if (d_load && a_abort) begin                    // a dirty atomic txid is aborted first
            m_cmd_op <= OP_TX_ABORT; m_cmd_lba <= '0; m_cmd_nlb <= '0; m_cmd_flags <= '0; m_cmd_dptr <= '0;
        end
        if (rst) m_cmd_valid <= 1'b0;
    end

    // ---------------------------------------------------------------- slot bookkeeping
    assign cpl_mid     = t_q == T_WAIT && 8'(s_cpl_tag) == 8'(t_slot_q) && r_valid_q != '0 && !disabling;
    assign s_cpl_ready = 1'b1;

    // CQE pick (registered), then the request
    logic [QDEPTH-1:0] cand;
    logic              pick_v_q;
    logic [TW-1:0]     pick_q;
    always_comb begin
        for (int i = 0; i < QDEPTH; i++) begin
            cand[i] = busy_q[i] && done_q[i] && !shut_q[i] && (wok_q[i] || ats_nvme_pkg::reached(wr_done, sl_snap[i])) &&
                      cq_room[sl_cqid[i]] && !(pick_v_q && pick_q == TW'(i));
        end
    end
    logic [TW-1:0] cand_idx;
    logic          cand_any;
    always_comb begin
        cand_idx = '0;
        cand_any = 1'b0;
        for (int i = QDEPTH - 1; i >= 0; i--) begin
            if (cand[i]) begin
                cand_idx = TW'(i);
                cand_any = 1'b1;
            end
        end
    end

    logic [10:0] cqe_st;
    assign cqe_st       = (win_q[pick_q] && slot_err[{1'b0, pick_q}]) ? SC_XFER : sl_st[pick_q];
    assign m_cqe_valid  = pick_v_q;
    assign m_cqe_cqid   = sl_cqid[pick_q];
    assign m_cqe_sqid   = sl_sqid[pick_q];
    assign m_cqe_sqhd   = sl_sqhd[pick_q];
    assign m_cqe_cid    = sl_cid[pick_q];
    assign m_cqe_status = {cqe_st != SC_OK, 3'b000, cqe_st};
    assign m_cqe_dw0    = sl_res[pick_q];

    always_ff @(posedge clk) begin
        // a done slot's window writes issued: kept until the slot's next record (the writes below,
        // later in this block, clear it)
        for (int i = 0; i < QDEPTH; i++)
            if (busy_q[i] && done_q[i] && ats_nvme_pkg::reached(wr_done, sl_snap[i])) wok_q[i] <= 1'b1;
        // take: a slot
        if (d_q == D_IDLE && s_sqe_valid && s_sqe_ready && s_sqe_sqid != '0) begin
            wok_q[free_idx]   <= 1'b0;
            busy_q[free_idx]  <= 1'b1;
            done_q[free_idx]  <= 1'b0;
            shut_q[free_idx]  <= 1'b0;
            win_q[free_idx]   <= 1'b0;
            sl_sqid[free_idx] <= s_sqe_sqid;
            sl_cqid[free_idx] <= s_sqe_cqid;
            sl_cid[free_idx]  <= s_sqe_data[31:16];
            sl_sqhd[free_idx] <= s_sqe_sqhd;
            sl_st[free_idx]   <= SC_OK;
            sl_res[free_idx]  <= '0;
        end
        if (d_q == D_SETW && s_setr_valid && s_setr_status == 2'd0) win_q[q_slot] <= 1'b1;
        if (d_q == D_CHECK) begin
            sl_kind[q_slot] <= (opc == IO_READ || opc == IO_TX_READ || opc == IO_SREAD) ? 2'd1 :
                               (opc == IO_WRITE || opc == IO_TX_WRITE || opc == IO_DIFF_WRITE || sw) ? 2'd2 : 2'd0;
            swk_q[q_slot]   <= sw || atomic;
            sl_len[q_slot]  <= xfer_len;
        end
        // a decoder completion (no descriptor)
        if (d_q == D_FIN) begin
            done_q[q_slot]  <= 1'b1;
            if (sl_st[q_slot] == SC_OK) sl_st[q_slot] <= q_st;
            sl_snap[q_slot] <= wr_acc;
            wok_q[q_slot]   <= 1'b0;
        end
        // the shutdown FLUSH takes slot 0
        if (f_load) begin
            busy_q[0] <= 1'b1; done_q[0] <= 1'b0; shut_q[0] <= 1'b1;
        end
        // core completions
        if (cpl_take && s_cpl_tag < 8'(QDEPTH) && busy_q[TW'(s_cpl_tag)]) begin
            if (shut_q[TW'(s_cpl_tag)]) begin
                busy_q[TW'(s_cpl_tag)] <= 1'b0;
                shut_q[TW'(s_cpl_tag)] <= 1'b0;
            end else begin
                if (sl_st[TW'(s_cpl_tag)] == SC_OK && !e_ign && !a_mid)
                    sl_st[TW'(s_cpl_tag)] <= ats_nvme_pkg::map_status(s_cpl_status);
                if (!e_ign && !a_mid) sl_res[TW'(s_cpl_tag)] <= s_cpl_result;
                if (!cpl_mid && !e_mid && !a_mid) begin
                    done_q[TW'(s_cpl_tag)]  <= 1'b1;
                    sl_snap[TW'(s_cpl_tag)] <= wr_acc;
                    wok_q[TW'(s_cpl_tag)]   <= 1'b0;
                end
            end
        end
        // a range whose SLBA is beyond 48 bits: LBA Out of Range, not issued; the last one ends the DSM
        if (t_skip) begin
            if (sl_st[t_slot_q] == SC_OK) sl_st[t_slot_q] <= SC_LBA_RANGE;
            sl_res[t_slot_q] <= '0;                     // as the core's rejection would answer
            if ((r_valid_q & ~(8'd1 << t_r)) == '0) begin
                done_q[t_slot_q]  <= 1'b1;
                sl_snap[t_slot_q] <= wr_acc;
                wok_q[t_slot_q]   <= 1'b0;
            end
        end
        // CQE pick and acknowledgement
        if (pick_v_q && m_cqe_ready) begin
            pick_v_q <= 1'b0;
            busy_q[pick_q] <= 1'b0;
            done_q[pick_q] <= 1'b0;
        end else if (!pick_v_q && cand_any) begin
            pick_v_q <= 1'b1;
            pick_q   <= cand_idx;
        end
        if (rst) begin
            busy_q <= '0; done_q <= '0; shut_q <= '0; pick_v_q <= 1'b0; swk_q <= '0; wok_q <= '0;
        end
    end

    // SMART events: a command completed OK whose CQE was acknowledged (not while disabling)
    always_ff @(posedge clk) begin
        smart_rd    <= pick_v_q && m_cqe_ready && cqe_st == SC_OK && !disabling && sl_kind[pick_q] == 2'd1;
        smart_wr    <= pick_v_q && m_cqe_ready && cqe_st == SC_OK && !disabling && sl_kind[pick_q] == 2'd2;
        smart_bytes <= sl_len[pick_q];
        if (rst) begin
            smart_rd <= 1'b0; smart_wr <= 1'b0;
        end
    end

    // slots in use per SQ (for a Delete SQ: no fetch runs while an admin command does)
    always_ff @(posedge clk) begin
        for (int q = 0; q <= NQ; q++) begin
            logic any;
            any = 1'b0;
            for (int i = 0; i < QDEPTH; i++)
                if (busy_q[i] && !shut_q[i] && sl_sqid[i] == QW'(q)) any = 1'b1;
            sq_busy[q] <= any;
        end
        if (rst) sq_busy <= '0;
    end

    always_ff @(posedge clk) begin
        s_flush_done <= SHUT_CKPT ? cpl_take && s_cpl_tag == SHUT_TAG && ck_wait_q
                                  : cpl_take && s_cpl_tag == 8'd0 && shut_q[0];
        if (cpl_take && s_cpl_tag == 8'd0 && shut_q[0]) ck_pend_q <= SHUT_CKPT;
        if (k_load) begin
            ck_pend_q <= 1'b0; ck_wait_q <= 1'b1;
        end
        if (cpl_take && s_cpl_tag == SHUT_TAG) ck_wait_q <= 1'b0;
        if (f_load) flush_sent_q <= 1'b1;
        if (!m_flush) begin
            flush_sent_q <= 1'b0; ck_pend_q <= 1'b0; ck_wait_q <= 1'b0;
        end
        if (rst) begin
            s_flush_done <= 1'b0; flush_sent_q <= 1'b0; ck_pend_q <= 1'b0; ck_wait_q <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- levels for the queue manager
    logic free_n1;                                  // a slot is free, the one taken this cycle counted
    always_comb begin
        free_n1 = 1'b0;
        for (int i = 0; i < QDEPTH; i++)
            if (!busy_q[i] && !(d_q == D_IDLE && s_sqe_valid && s_sqe_ready && s_sqe_sqid != '0 && free_idx == TW'(i)))
                free_n1 = 1'b1;
    end
    always_ff @(posedge clk) begin
        fetch_ok_io  <= free_n1;
        fetch_ok_adm <= !adm_busy && !(d_q == D_IDLE && s_sqe_valid && s_sqe_ready && s_sqe_sqid == '0) &&
                        d_q != D_ADM;
        cmd_idle     <= busy_q == '0 && d_q == D_IDLE && t_q == T_IDLE && !(s_sqe_valid && s_sqe_ready);
        if (rst) begin
            fetch_ok_io <= 1'b0; fetch_ok_adm <= 1'b0; cmd_idle <= 1'b1;
        end
    end
`ifdef ATS_NVME_CGATE
    // simulation only: busy, the activity input of the front end's clock gate (ats_nvme):
    // an SQE being decoded or checked, a DSM's TRIMs, a descriptor on offer, a command done and
    // not yet acknowledged (its CQE waits for its window writes, for room in its CQ or is on offer).
    // A slot whose command is in the core (busy, not done) is not: the slot changes only with the
    // core's completion (an input with a valid), so the clock stops while commands are in the core.
    logic sim_busy;
    assign sim_busy = d_q != D_IDLE || t_q != T_IDLE || (busy_q & done_q) != '0 || m_cmd_valid || pick_v_q ||
                      e_iss_any;
`endif
endmodule

`resetall
