// SPDX-License-Identifier: Apache-2.0
// ats_cmdq: ordered command queue. Validates command descriptors (architecture.md section 1),
// holds up to DEPTH of them and dispatches them one at a time on m_disp (section 9) following
// INV-QUEUE: HEAD_OF_QUEUE first (arrival order among HEADs), an ORDERED command alone (every
// earlier command done before it is dispatched, no later one dispatched before it is done),
// SIMPLE commands in any order that keeps data hazards (overlapping LBA ranges with a write or
// trim), FLUSH/RFLUSH after earlier writes, tx control after the same tx's commands; among the
// eligible: HEAD, then higher prio, then reads, then oldest. Assigns barrier epochs in arrival
// order. Completes by tag out of order (s_done -> m_cpl); bad descriptors complete with an error
// status and are never dispatched. Full contract: rtl/cmdq/README.md.
`resetall
`timescale 1ns / 1ps
`default_nettype none
// ATS_SYNTH_FORM: the form written for synthesis (Yosys defines SYNTHESIS); without it a
// simulator gets a form with the same next state every cycle that does only the work whose result
// is registered and used, and keeps the precedence order as a square matrix updated at inserts
// (README.md "Simulation cost")
`ifdef SYNTHESIS
`define ATS_SYNTH_FORM
`endif

module ats_cmdq #(
    parameter int          DEPTH   = 32,         // table entries (queued + in service), 2..64
    parameter logic [48:0] NUM_LBA = 49'd16384,  // capacity in blocks: lba + nlb < NUM_LBA
    parameter int          NUM_TX  = 32          // transactions: txid 1..NUM_TX, 1..63
) (
    input  wire logic                              clk,
    input  wire logic                              rst,  // synchronous, active high
    // command descriptors in (architecture.md section 1)
    input  wire logic                              s_cmd_valid,
    output wire logic                              s_cmd_ready,
    input  wire logic [ats_host_pkg::OP_W-1:0]     s_cmd_op,
    input  wire logic [ats_host_pkg::TAG_W-1:0]    s_cmd_tag,
    input  wire logic [ats_host_pkg::LBA_W-1:0]    s_cmd_lba,
    input  wire logic [ats_host_pkg::NLB_W-1:0]    s_cmd_nlb,
    input  wire logic [ats_host_pkg::TXID_W-1:0]   s_cmd_txid,
    input  wire logic [ats_host_pkg::FLAGS_W-1:0]  s_cmd_flags,
    input  wire logic [ats_host_pkg::ATTR_W-1:0]   s_cmd_attr,
    input  wire logic [ats_host_pkg::PRIO_W-1:0]   s_cmd_prio,
    input  wire logic [ats_host_pkg::DPTR_W-1:0]   s_cmd_dptr,
    input  wire logic [ats_host_pkg::AUX_W-1:0]    s_cmd_aux,
    // dispatch to the execution units (section 9)
    output wire logic                              m_disp_valid,
    input  wire logic                              m_disp_ready,
    output wire logic [ats_host_pkg::OP_W-1:0]     m_disp_op,
    output wire logic [ats_host_pkg::TAG_W-1:0]    m_disp_tag,
    output wire logic [ats_host_pkg::LBA_W-1:0]    m_disp_lba,
    output wire logic [ats_host_pkg::NLB_W-1:0]    m_disp_nlb,
    output wire logic [ats_host_pkg::TXID_W-1:0]   m_disp_txid,
    output wire logic [ats_host_pkg::FLAGS_W-1:0]  m_disp_flags,
    output wire logic [ats_host_pkg::ATTR_W-1:0]   m_disp_attr,
    output wire logic [ats_host_pkg::PRIO_W-1:0]   m_disp_prio,
    output wire logic [ats_host_pkg::DPTR_W-1:0]   m_disp_dptr,
    output wire logic [ats_host_pkg::AUX_W-1:0]    m_disp_aux,
    output wire logic [15:0]                       m_disp_epoch,
    // done reports from the units, by tag, any order (section 9)
    input  wire logic                              s_done_valid,
    output wire logic                              s_done_ready,
    input  wire logic [ats_host_pkg::TAG_W-1:0]    s_done_tag,
    input  wire logic [ats_host_pkg::STATUS_W-1:0] s_done_status,
    input  wire logic [ats_host_pkg::RESULT_W-1:0] s_done_result,
    // completions to the front ends (section 2)
    output wire logic                              m_cpl_valid,
    input  wire logic                              m_cpl_ready,
    output wire logic [ats_host_pkg::TAG_W-1:0]    m_cpl_tag,
    output wire logic [ats_host_pkg::STATUS_W-1:0] m_cpl_status,
    output wire logic [ats_host_pkg::RESULT_W-1:0] m_cpl_result,
    // status
    output wire logic [15:0]                       epoch,  // current (open) barrier epoch
    output wire logic [$clog2(DEPTH+1)-1:0]        occupancy,  // table entries in use
    output wire logic                              err_spurious  // pulse: a done for no command in service was dropped
);
    localparam int IDX_W = $clog2(DEPTH);
    localparam int CNT_W = $clog2(DEPTH + 1);
    // stored LBA width: commands out of range never enter the table
    localparam int LW    = (NUM_LBA > 49'd2) ? $clog2(NUM_LBA) : 1;
    // payload kept per entry for m_disp: {op, tag, lba, nlb, txid, flags, attr, prio, dptr, aux, epoch}
    localparam int PAY_W = 4 + 8 + 48 + 16 + 6 + 4 + 2 + 2 + 32 + 32 + 16;
`ifdef ATS_SYNTH_FORM
    // entry pairs (i < j) of the triangular precedence matrix
    localparam int NPAIR = DEPTH * (DEPTH - 1) / 2;
`endif
    // opcodes, attributes, flags, status codes and rejection reasons: ats_host_pkg (scoped names:
    // Yosys's SystemVerilog frontend takes no `import` inside a module)

    // bit of the pair (i, j), i < j, in prec_q (row i holds j = i+1 .. DEPTH-1). A macro, not a
    // function: Yosys's frontend inlines every call of a function in an unrolled loop, 60 s of the
    // synthesis check's elaboration at DEPTH 32 when the loops called one; synth/README.md "Tool notes"
`define ATS_CMDQ_PIDX(i, j) ((i) * DEPTH - ((i) * ((i) + 1)) / 2 + ((j) - (i) - 1))

    // ordering rules 1-5 and the epoch order (README "Ordering", "Epochs"): does the later
    // command x wait until the earlier command y is done? (y_epc: y is a write of a closed epoch)
    function automatic logic waits_for(
        input logic [1:0] x_attr, input logic x_rng, input logic x_wr, input logic x_fl,
        input logic x_txop, input logic [5:0] x_txid, input logic [LW-1:0] x_lba,
        input logic [LW-1:0] x_last,
        input logic y_ord, input logic y_rng, input logic y_wr, input logic y_txop, input logic y_epc,
        input logic [5:0] y_txid, input logic [LW-1:0] y_lba, input logic [LW-1:0] y_last);
        logic ovl, same_tx;
        ovl     = (x_lba <= y_last) && (y_lba <= x_last);
        same_tx = (x_txid != 6'd0) && (y_txid == x_txid);
        // epoch order at dispatch (architecture.md section 9), HEAD included
        waits_for = (x_wr && y_wr && y_epc) || (x_attr != ats_host_pkg::ATTR_HEAD) &&
               ((x_attr == ats_host_pkg::ATTR_ORDERED) || y_ord || (x_rng && y_rng && (x_wr || y_wr) && ovl) ||
                (x_fl && y_wr) || (same_tx && (x_txop || y_txop)));
    endfunction

    // waits_for without the LBA-overlap term (rule 3) and the same-transaction term (rule 5),
    // which are computed apart: waits_for = waits_nov || (x not HEAD && (ovl_qual && x_lba <=
    // y_last && y_lba <= x_last || same_tx && (x_txop || y_txop)))
    function automatic logic waits_nov(
        input logic [1:0] x_attr, input logic x_wr, input logic x_fl,
        input logic y_ord, input logic y_wr, input logic y_epc);
        waits_nov = (x_wr && y_wr && y_epc) || (x_attr != ats_host_pkg::ATTR_HEAD) &&
               ((x_attr == ats_host_pkg::ATTR_ORDERED) || y_ord || (x_fl && y_wr));
    endfunction

    if (DEPTH < 2 || DEPTH > 64) begin : g_check_depth
        $fatal(1, "ats_cmdq: DEPTH must be 2..64 (%m)");
    end
    if (NUM_LBA < 49'd1 || NUM_LBA > (49'd1 << 48)) begin : g_check_lba
        $fatal(1, "ats_cmdq: NUM_LBA must be 1..2^48 (%m)");
    end
    if (NUM_TX < 1 || NUM_TX > 63) begin : g_check_tx
        $fatal(1, "ats_cmdq: NUM_TX must be 1..63 (%m)");
    end

    // ================================================================ stage 1: field checks
    // A command accepted at edge a is in stage 1 after a, in stage 2 after a+1 (insert decision
    // and slot, dependency and precedence rows), in stage 3 after a+2 (everything registered,
    // per-row insert enables), and enters the table or the rejection queue at edge a+3.
    logic        s1_v_q;
    logic [3:0]  s1_op_q, s1_flags_q;
    logic [7:0]  s1_tag_q;
    logic [47:0] s1_lba_q;
    logic [15:0] s1_nlb_q;
    logic [5:0]  s1_txid_q;
    logic [1:0]  s1_attr_q, s1_prio_q;
    logic [31:0] s1_dptr_q, s1_aux_q;
    logic [48:0] s1_end_q;                   // lba + nlb (last block), full width, summed at the accept edge
    logic [CNT_W-1:0] res_q;                 // slots reserved: table entries + stages 1-3 + queued rejections
    logic        acc;
    assign s_cmd_ready = (res_q < CNT_W'(DEPTH));
    assign acc         = s_cmd_valid && s_cmd_ready;

    logic        s1_rng, s1_wr, s1_fl, s1_txop, s1_bad;
    logic        s1_b_op, s1_b_rsvd, s1_b_flag, s1_b_txr, s1_b_txn, s1_b_lba, s1_b_diff, s1_b_rfl;
    logic [3:0]  s1_err_hi, s1_err_lo, s1_key;
    logic [16:0] s1_dend_q;                  // DIFFWRITE offset + length, summed at the accept edge
    always_comb begin
        s1_rng  = (s1_op_q == ats_host_pkg::OP_READ) || (s1_op_q == ats_host_pkg::OP_WRITE) ||
                  (s1_op_q == ats_host_pkg::OP_DIFFWRITE) || (s1_op_q == ats_host_pkg::OP_TRIM);
        s1_wr   = (s1_op_q == ats_host_pkg::OP_WRITE) || (s1_op_q == ats_host_pkg::OP_DIFFWRITE) ||
                  (s1_op_q == ats_host_pkg::OP_TRIM);
        s1_fl   = (s1_op_q == ats_host_pkg::OP_FLUSH) || (s1_op_q == ats_host_pkg::OP_RFLUSH);
        // transaction ops of the same-transaction rule; a WRITE with the COMMIT flag commits the tx
        s1_txop = (s1_op_q == ats_host_pkg::OP_TX_BEGIN) || (s1_op_q == ats_host_pkg::OP_TX_COMMIT) ||
                  (s1_op_q == ats_host_pkg::OP_TX_ABORT) ||
                  (s1_op_q == ats_host_pkg::OP_WRITE && s1_flags_q[ats_host_pkg::FLAG_COMMIT]);
        s1_key  = (s1_attr_q == ats_host_pkg::ATTR_HEAD) ? 4'hF : {1'b0, s1_prio_q, s1_op_q == ats_host_pkg::OP_READ};
        // each rule on its own (the insert decision only needs "any", a flat OR); the reason
        // code applies them in precedence order
        s1_b_op   = s1_op_q > ats_host_pkg::OP_LAST;
        s1_b_rsvd = s1_attr_q == ats_host_pkg::ATTR_RSVD || s1_flags_q[ats_host_pkg::FLAG_RSVD];
        // WRITE allows FUA, BARRIER, COMMIT; DIFFWRITE FUA; every other op no flag
        s1_b_flag = (s1_op_q == ats_host_pkg::OP_WRITE) ? 1'b0 :
                    (s1_op_q == ats_host_pkg::OP_DIFFWRITE) ?
                        (s1_flags_q[ats_host_pkg::FLAG_BARRIER] || s1_flags_q[ats_host_pkg::FLAG_COMMIT]) :
                        (s1_flags_q[ats_host_pkg::FLAG_FUA] || s1_flags_q[ats_host_pkg::FLAG_BARRIER] ||
                         s1_flags_q[ats_host_pkg::FLAG_COMMIT]);
        s1_b_txr  = int'(s1_txid_q) > NUM_TX;
        s1_b_txn  = s1_txid_q == 6'd0 && (s1_txop || s1_op_q == ats_host_pkg::OP_DIFFWRITE ||
                                          (s1_op_q == ats_host_pkg::OP_WRITE && s1_flags_q[ats_host_pkg::FLAG_COMMIT]));
        s1_b_lba  = s1_rng && (s1_end_q >= NUM_LBA);
        s1_b_diff = s1_op_q == ats_host_pkg::OP_DIFFWRITE &&
                    (s1_aux_q[31:16] == 16'd0 || s1_dend_q > 17'd4096);
        s1_b_rfl  = s1_op_q == ats_host_pkg::OP_RFLUSH && s1_nlb_q > 16'd7;
        s1_bad    = s1_b_op || s1_b_rsvd || s1_b_flag || s1_b_txr || s1_b_txn || s1_b_lba ||
                    s1_b_diff || s1_b_rfl;
        // reasons checked before the LBA range
        if (s1_b_op) begin
            s1_err_hi = ats_host_pkg::REJ_BAD_OP;
        end else if (s1_b_rsvd) begin
            s1_err_hi = ats_host_pkg::REJ_RSVD;
        end else if (s1_b_flag) begin
            s1_err_hi = ats_host_pkg::REJ_FLAG;
        end else if (s1_b_txr) begin
            s1_err_hi = ats_host_pkg::REJ_TXID_RANGE;
        end else if (s1_b_txn) begin
            s1_err_hi = ats_host_pkg::REJ_TXID_NEEDED;
        end else begin
            s1_err_hi = 4'd0;
        end
        // reasons checked after it
        if (s1_b_diff) begin
            s1_err_lo = ats_host_pkg::REJ_DIFF;
        end else if (s1_b_rfl) begin
            s1_err_lo = ats_host_pkg::REJ_RFLUSH;
        end else begin
            s1_err_lo = 4'd0;
        end
    end

    // ================================================================ stages 2 and 3
    logic        s2_v_q, s2_bad_q, s2_fok_q, s2_fok2_q, s2_dupx_q, s2_rng_q, s2_wr_q, s2_txop_q, s2_bar_q;
    // rejection reason of the field rules (when s2_bad_q), in three registered parts: the first
    // failing rule before the LBA range, the range rule, the first failing rule after it
    logic [3:0]  s2_err_hi_q, s2_err_lo_q;
    logic        s2_b_lba_q;
    logic [3:0]  s2_key_q;                   // pick key: HEAD 15, else {0, prio, read}
    logic [LW-1:0] s2_last_q;                // lba + nlb (last block; in range when inserted)
    logic [3:0]  s2_op_q, s2_flags_q;
    logic [7:0]  s2_tag_q;
    logic [47:0] s2_lba_q;
    logic [15:0] s2_nlb_q;
    logic [5:0]  s2_txid_q;
    logic [1:0]  s2_attr_q, s2_prio_q;
    logic [31:0] s2_dptr_q, s2_aux_q;

    logic        s3_v_q, s3_ins_q, s3_rng_q, s3_wr_q, s3_txop_q, s3_bar_q;
    logic [3:0]  s3_err_q;                   // rejection reason (used when !s3_ins_q)
    logic [3:0]  s3_key_q;
    logic [LW-1:0] s3_last_q;
    logic [3:0]  s3_op_q, s3_flags_q;
    logic [7:0]  s3_tag_q;
    logic [47:0] s3_lba_q;
    logic [15:0] s3_nlb_q;
    logic [5:0]  s3_txid_q;
    logic [1:0]  s3_attr_q, s3_prio_q;
    logic [31:0] s3_dptr_q, s3_aux_q;
    // computed in stage 2 against the table as it is after the insert edge (the command then in
    // stage 3 inserted, the entry freed at the edge in between removed, a barrier then in stage 3
    // applied), and masked with the frees of the insert edge itself when written:
    // (in five parts, ORed at the write: s3_depn_q[j] || s3_dtx_q[j] || s3_ovq_q[j] && s3_ova_q[j]
    // && s3_ovb_q[j], i.e. every rule but the overlap and the same transaction, the latter, the
    // overlap's qualifier, and its two range comparisons)
    logic [DEPTH-1:0] s3_depn_q, s3_dtx_q, s3_ovq_q, s3_ova_q, s3_ovb_q, s3_dep;
    logic [DEPTH-1:0] s3_prec_q;             // entry j (in use) goes before the command
    logic [IDX_W-1:0] s3_idx;                // slot (binary) for the payload RAM, from ins_idx_q
    // The insert, registered per row: ins_row_q[k] = "the command in stage 3 is inserted into
    // slot k at this edge" (one-hot or zero), loaded one edge earlier from the registered stage-2
    // decision AND the lowest slot free after that edge. Each bit enables one row and one column
    // of the table straight from a register; the copies split that fan-out (dependency matrix,
    // precedence matrix, per-entry fields) so each copy drives about 60-100 flip-flops.
    // (ats_cmdq_rep keeps the copies apart: synthesis would merge identical registers)
    logic [DEPTH-1:0] ins_row_q;             // per-entry fields, stage-2 comparisons
    logic [DEPTH-1:0] ins_dep_q;             // dependency matrix rows and columns
    logic [DEPTH-1:0] ins_prec_q;            // precedence matrix
    logic [DEPTH-1:0] ins_idx_q;             // payload RAM write address (encoded)
    logic [DEPTH-1:0] ins_col_q;             // dependency matrix columns (ins_dep_q: rows)
    logic [DEPTH-1:0] ins_row_d;

    // table state, per entry
    logic [DEPTH-1:0] valid_q;               // entry in use (queued or in service)
    logic [DEPTH-1:0] queued_q;              // not yet picked for dispatch (cleared one edge after the pick)
    logic [DEPTH-1:0] sent_q;                // accepted on m_disp (a done may now come)
    logic [DEPTH-1:0] ord_q, head_q, rng_q, wr_q, txop_q;
    logic [3:0]       key_q   [DEPTH];       // pick key: HEAD 15, else {0, prio, read}
    logic [7:0]       tag_q   [DEPTH];
    logic [5:0]       txid_q  [DEPTH];
    logic [LW-1:0]    lba_q   [DEPTH];
    logic [LW-1:0]    last_q  [DEPTH];
`ifdef ATS_SYNTH_FORM
    logic [DEPTH-1:0] dep_q   [DEPTH];       // dep_q[i][j]: entry i waits until entry j is done
    logic [DEPTH-1:0] dep_d   [DEPTH];
`else
    // simulation form: the matrices as packed vectors (one assignment when rows change)
    logic [DEPTH-1:0][DEPTH-1:0] dep_q, dep_n;
`endif
    logic [DEPTH-1:0] epc_q;                 // entry is a write of a closed epoch (a BARRIER write
                                             // arrived at or after it): later writes wait for it
    // precedence, a strict total order over the entries in use (key, then arrival), kept as the
    // upper triangle only: prec_q[pidx(i, j)] for i < j is "entry j goes before entry i", and
    // "entry i goes before entry j" is its complement (both entries in use; a pair is rewritten
    // when either entry is inserted)
`ifdef ATS_SYNTH_FORM
    logic [NPAIR-1:0] prec_q, prec_d;
    logic [DEPTH-1:0] prec    [DEPTH];       // prec[i][j]: entry j goes before entry i (decoded)
`else
    // simulation form: the decoded order itself, precm_q[i][j] = prec[i][j], row and column of
    // an entry rewritten when it is inserted
    logic [DEPTH-1:0][DEPTH-1:0] precm_q, precm_n;
    // dnz_q[i] = |dep_q[i], kept with the rows (written whenever a row is); an entry's bit is
    // consistent from its insert on, and only queued entries (inserted) read it
    logic [DEPTH-1:0] dnz_q;
`endif
    logic [DEPTH-1:0] hit_q;                 // entry freed at this edge: matched by the done
                                             // accepted at the last edge (at most one bit: tags
                                             // in the table are unique)
    logic             hit_any;               // = |hit_q, from the per-group registered ORs
    logic [DEPTH-1:0] hit_col_q, hit_col_d;  // copy of hit_q for the dependency matrix
    logic [15:0]      epoch_q;

    logic             s2_ok, s3_rej;
    logic [DEPTH-1:0] tag_hit, free_oh, occ_vec, s2_depn, s2_dtx, s2_ovq, s2_ova, s2_ovb, s2_prec;
    logic             s1_dep_s2, s1_prec_s2, s1_dupx;
    // the stage-1 command vs the stage-2 command, registered: in the next cycle they are the
    // stage-2 vs the stage-3 command (the stages move in lockstep), so that relation reaches the
    // dependency/precedence rows straight from a register (ANDed with the stage-3 slot)
    logic             s2_dep_y_q, s2_prec_y_q;
    logic             s3_insbar_q;           // = s3_ins_q && s3_bar_q: a barrier inserted at this edge
    // Copies of the operands compared against every table entry, one per group of 8 entries
    // (ats_cmdq_rep), so that no register drives comparators across the whole table: the
    // stage-1 tag (duplicate-tag CAM) and the stage-2 command's class, txid, range and key
    // (dependency and precedence rows).
    localparam int NCPY = (DEPTH + 7) / 8;
    localparam int OPW  = 2 + 4 + 6 + 2 * LW + 4;
    logic [7:0]       s1_tag_c_q [NCPY];
    // duplicate tag, registered in parts: per group of 8 table entries (s2_dupg_q), and against
    // the commands in stages 2 and 3 (s2_dupx_q); stage 2 ORs them into its decision
    logic [NCPY-1:0]  s1_dupg, s2_dupg_q;
    // the done's tag match, ORed per group of 8 entries and registered with hit_q
    logic [NCPY-1:0]  done_hit_g, hit_g_q;
    assign hit_any = |hit_g_q;
    logic [OPW-1:0]   s2_opd_d;
    logic [OPW-1:0]   s2_opd_q   [NCPY];
    logic [LW-1:0]    s2_lba_t, s3_lba_t;
    assign s2_lba_t = s2_lba_q[LW-1:0];
    assign s3_lba_t = s3_lba_q[LW-1:0];
    // stage 2: the decision from registers only (field rules and duplicate tag both registered)
    // (s2_fok_q = valid and none of rules 1-5 failed, s2_fok2_q = none of rules 6-8; the
    // duplicate-tag parts: s2_dupg_q, s2_dupx_q)
    assign s2_ok    = s2_fok_q && s2_fok2_q && !s2_dupx_q && !(|s2_dupg_q);
    assign s3_rej   = s3_v_q && !s3_ins_q;
    assign occ_vec  = valid_q | ins_row_q;   // slots in use after this edge, minus this edge's frees
    assign free_oh  = ~occ_vec & (occ_vec + DEPTH'(1));

    logic [1:0]    o_attr;
    logic          o_rng, o_wr, o_fl, o_txop;
    logic [5:0]    o_txid;
    logic [LW-1:0] o_lba, o_last;
    logic [3:0]    o_key;
`ifdef ATS_SYNTH_FORM
    always_comb begin
        s3_idx = '0;
        for (int i = 0; i < DEPTH; i++) begin
            s3_idx = s3_idx | ({IDX_W{ins_idx_q[i]}} & IDX_W'(i));
        end
        // stage 1: duplicate tag against the table after the accept edge and the commands
        // inserted at the next two edges (stage 3, registered decision; stage 2, decision from
        // three registers)
        for (int i = 0; i < DEPTH; i++) begin
            tag_hit[i] = valid_q[i] && (tag_q[i] == s1_tag_c_q[i / 8]);
        end
        for (int g = 0; g < NCPY; g++) begin
            s1_dupg[g] = 1'b0;
            for (int i = g * 8; i < DEPTH && i < g * 8 + 8; i++) begin
                s1_dupg[g] = s1_dupg[g] | tag_hit[i];
            end
        end
        s1_dupx = (s3_ins_q && (s3_tag_q == s1_tag_q)) || (s2_ok && (s2_tag_q == s1_tag_q));
        // stage 1 vs the command in stage 2 (registered; used in the next cycle as stage 2 vs stage 3)
        s1_dep_s2  = waits_for(s1_attr_q, s1_rng, s1_wr, s1_fl, s1_txop, s1_txid_q, s1_lba_q[LW-1:0],
                               s1_end_q[LW-1:0], s2_attr_q == ats_host_pkg::ATTR_ORDERED, s2_rng_q, s2_wr_q, s2_txop_q,
                               s2_bar_q, s2_txid_q, s2_lba_t, s2_last_q);
        s1_prec_s2 = s2_key_q >= s1_key;                    // older wins ties
        for (int i = 0; i < DEPTH; i++) begin
            // stage 2 (its operand copy for this entry's group) vs entry i as it is after the
            // next edge: still in use (not freed at that edge), its epoch closed by a barrier
            // inserted at that edge; or the stage-3 command inserted into slot i at that edge
            {o_attr, o_rng, o_wr, o_fl, o_txop, o_txid, o_lba, o_last, o_key} = s2_opd_q[i / 8];
            s2_depn[i] = (valid_q[i] && !hit_q[i] &&
                          waits_nov(o_attr, o_wr, o_fl, ord_q[i], wr_q[i], epc_q[i] || s3_insbar_q)) ||
                         (ins_row_q[i] && s2_dep_y_q);
            s2_dtx[i]  = valid_q[i] && !hit_q[i] && (o_attr != ats_host_pkg::ATTR_HEAD) && (o_txid != 6'd0) &&
                         (txid_q[i] == o_txid) && (o_txop || txop_q[i]);
            s2_ovq[i]  = valid_q[i] && !hit_q[i] && (o_attr != ats_host_pkg::ATTR_HEAD) && o_rng && rng_q[i] &&
                         (o_wr || wr_q[i]);
            s2_ova[i]  = o_lba <= last_q[i];
            s2_ovb[i]  = lba_q[i] <= o_last;
            s2_prec[i] = (valid_q[i] && !hit_q[i] && (key_q[i] >= o_key)) || (ins_row_q[i] && s2_prec_y_q);
        end
    end
`else
    // simulation form: the same values in the cycles that register and use them (the duplicate
    // tag while stage 1 holds a command, the rows while stage 2's command is inserted, the slot
    // while stage 3's is), zero otherwise
    always_comb begin
        s3_idx = '0;
        if (s3_ins_q) begin
            for (int i = 0; i < DEPTH; i++) begin
                s3_idx = s3_idx | ({IDX_W{ins_idx_q[i]}} & IDX_W'(i));
            end
        end
        tag_hit = '0;
        s1_dupg = '0;
        if (s1_v_q) begin
            for (int i = 0; i < DEPTH; i++) begin
                tag_hit[i] = valid_q[i] && (tag_q[i] == s1_tag_c_q[i / 8]);
            end
            for (int g = 0; g < NCPY; g++) begin
                for (int i = g * 8; i < DEPTH && i < g * 8 + 8; i++) begin
                    s1_dupg[g] = s1_dupg[g] | tag_hit[i];
                end
            end
        end
        s1_dupx = (s3_ins_q && (s3_tag_q == s1_tag_q)) || (s2_ok && (s2_tag_q == s1_tag_q));
        s1_dep_s2  = waits_for(s1_attr_q, s1_rng, s1_wr, s1_fl, s1_txop, s1_txid_q, s1_lba_q[LW-1:0],
                               s1_end_q[LW-1:0], s2_attr_q == ats_host_pkg::ATTR_ORDERED, s2_rng_q, s2_wr_q, s2_txop_q,
                               s2_bar_q, s2_txid_q, s2_lba_t, s2_last_q);
        s1_prec_s2 = s2_key_q >= s1_key;
        s2_depn = '0;
        s2_dtx  = '0;
        s2_ovq  = '0;
        s2_ova  = '0;
        s2_ovb  = '0;
        s2_prec = '0;
        {o_attr, o_rng, o_wr, o_fl, o_txop, o_txid, o_lba, o_last, o_key} = s2_opd_q[0];
        if (s2_ok) begin
            for (int i = 0; i < DEPTH; i++) begin
                {o_attr, o_rng, o_wr, o_fl, o_txop, o_txid, o_lba, o_last, o_key} = s2_opd_q[i / 8];
                s2_depn[i] = (valid_q[i] && !hit_q[i] &&
                              waits_nov(o_attr, o_wr, o_fl, ord_q[i], wr_q[i], epc_q[i] || s3_insbar_q)) ||
                             (ins_row_q[i] && s2_dep_y_q);
                s2_dtx[i]  = valid_q[i] && !hit_q[i] && (o_attr != ats_host_pkg::ATTR_HEAD) && (o_txid != 6'd0) &&
                             (txid_q[i] == o_txid) && (o_txop || txop_q[i]);
                s2_ovq[i]  = valid_q[i] && !hit_q[i] && (o_attr != ats_host_pkg::ATTR_HEAD) && o_rng && rng_q[i] &&
                             (o_wr || wr_q[i]);
                s2_ova[i]  = o_lba <= last_q[i];
                s2_ovb[i]  = lba_q[i] <= o_last;
                s2_prec[i] = (valid_q[i] && !hit_q[i] && (key_q[i] >= o_key)) || (ins_row_q[i] && s2_prec_y_q);
            end
        end
    end
`endif
`ifndef ATS_SYNTH_FORM
    // simulation form: the insert's slot as an index, and the dependency rows' next value
    // (computed only in the cycles the rows are written)
    logic [IDX_W-1:0] ins_k;
    always_comb begin
        ins_k = '0;
        if (|ins_row_q) begin
            for (int i = 0; i < DEPTH; i++) begin
                if (ins_row_q[i]) ins_k = IDX_W'(i);
            end
        end
    end
    always_comb begin
        dep_n = '0;
        if (|{ins_dep_q, ins_col_q, hit_col_q}) begin
            for (int k = 0; k < DEPTH; k++) begin
                dep_n[k] = ins_dep_q[k] ? (s3_dep & ~hit_col_q) : (dep_q[k] & ~(ins_col_q | hit_col_q));
            end
        end
    end
    // precedence: the new entry k's row (j goes first: s3_prec_q[j]) and column (k goes
    // before i unless s3_prec_q[i]), as the triangle's pairs (k, j) are written
    always_comb begin
        precm_n = '0;
        if (|ins_prec_q) begin
            for (int i = 0; i < DEPTH; i++) begin
                precm_n[i] = ins_prec_q[i] ? (s3_prec_q & ~ins_prec_q)
                                           : ((precm_q[i] & ~ins_prec_q) | (s3_prec_q[i] ? '0 : ins_prec_q));
            end
        end
    end
`endif
    assign s2_opd_d = {s1_attr_q, s1_rng, s1_wr, s1_fl, s1_txop, s1_txid_q, s1_lba_q[LW-1:0],
                       s1_end_q[LW-1:0], s1_key};
    for (genvar g = 0; g < NCPY; g++) begin : g_cpy
        ats_cmdq_rep #(.W(8))   u_s1_tag (.clk, .d(acc ? s_cmd_tag : s1_tag_c_q[g]), .q(s1_tag_c_q[g]));
        ats_cmdq_rep #(.W(OPW)) u_s2_opd (.clk, .d(s2_opd_d), .q(s2_opd_q[g]));
    end

    // ================================================================ eligibility and pick
    // A pick at edge p needs an empty pick register and a select register that is empty or moving
    // on at p (one command at most in pick + select): so there is never a pick at p+1, the pick
    // register always moves on at p+1, and the command before it in dispatch order is on m_disp
    // from edge p+1 at the latest (at most one command picked ahead of m_disp, as in v5). The pick
    // at p chooses among cand_q, loaded at p-1 with the eligibility of the state after edge p-2,
    // which includes the pick of edge p-2 (the last one). The pick is one AND-OR level over
    // registered bits; its consequences on the table (queued_q, in-service flags) are applied
    // one edge later from the pick register, and the eligibility computed in that cycle
    // accounts for the pick register.
    logic             ord_busy_q, any_svc_q, ord_busy_e, any_svc_e, svc_gt1, svc_eq1;
    logic [CNT_W-1:0] svc_cnt_q;                         // commands in service (picked, not done)
    logic [DEPTH-1:0] elig_d, cand_q, win;
    logic             pick_any, pick_ord, pick_ord_q;
    // dispatch pipeline: pick register (one-hot, one cycle) -> select register (binary index,
    // replicated) -> m_disp register (payload read from the table RAM)
    logic             pick_v_q, sel_v_q, disp_v_q, out_ld, sel_ld, pick_ld;
    logic [DEPTH-1:0] pick_oh_q, sel_oh_q, disp_oh_q;   // pick_oh_q: entry picked at the last edge
    logic [IDX_W-1:0] pick_idx;
    logic [IDX_W-1:0] sel_idx_a_q, sel_idx_b_q, sel_idx_a_d, sel_idx_b_d;
    logic [PAY_W-1:0] disp_pay_q, disp_pay_d;

`ifdef ATS_SYNTH_FORM
    always_comb begin
        for (int i = 0; i < DEPTH; i++) begin
            prec[i][i] = 1'b0;
            for (int j = i + 1; j < DEPTH; j++) prec[i][j] = prec_q[`ATS_CMDQ_PIDX(i, j)];
            for (int j = 0; j < i; j++)         prec[i][j] = !prec_q[`ATS_CMDQ_PIDX(j, i)];
            win[i] = cand_q[i] && !(|(cand_q & prec[i]));
        end
        pick_idx = '0;
        for (int i = 0; i < DEPTH; i++) begin
            pick_idx = pick_idx | ({IDX_W{pick_oh_q[i]}} & IDX_W'(i));
        end
    end
`else
    // simulation form: the winner and its index (the OR of the indices of its bits, as the
    // synthesis form encodes pick_oh_q) when the pick register loads them; pick_ix_q is that
    // index registered with pick_oh_q, so pick_idx = the synthesis form's encoding of pick_oh_q
    logic [IDX_W-1:0] win_ix, pick_ix_q;
    always_comb begin
        win = '0;
        win_ix = '0;
        if (pick_ld && (|cand_q)) begin
            for (int i = 0; i < DEPTH; i++) begin
                win[i] = cand_q[i] && !(|(cand_q & precm_q[i]));
                win_ix = win_ix | ({IDX_W{win[i]}} & IDX_W'(i));
            end
        end
    end
    assign pick_idx = pick_ix_q;
`endif
    assign out_ld   = !disp_v_q || m_disp_ready;
    assign sel_ld   = !sel_v_q || out_ld;
    assign pick_ld  = !pick_v_q && sel_ld;
    assign pick_any = pick_ld && (|cand_q);
    // the winner is ORDERED: cand_q comes from one snapshot of the table, in which an eligible
    // ORDERED command has no earlier command left and every later non-HEAD command waits for it,
    // so the other candidates are HEAD commands (key 15, they win). Hence "an ORDERED candidate
    // and no HEAD candidate" is "the pick is ORDERED", computed in parallel with win.
    assign pick_ord = pick_ld && (|(cand_q & ord_q)) && !(|(cand_q & head_q));
    // in-service state after the last edge, including the pick made there
    assign ord_busy_e = ord_busy_q || pick_ord_q;
    assign any_svc_e  = any_svc_q || pick_v_q;
    assign svc_gt1    = svc_cnt_q > CNT_W'(1);
    assign svc_eq1    = svc_cnt_q == CNT_W'(1);

`ifdef ATS_SYNTH_FORM
    always_comb begin
        for (int i = 0; i < DEPTH; i++) begin
            // a HEAD entry's dependencies are only the epoch-order ones
            elig_d[i] = queued_q[i] && !pick_oh_q[i] && !ord_busy_e && !(|dep_q[i]) &&
                        (head_q[i] || !ord_q[i] || !any_svc_e);
        end
    end
`else
    // simulation form: the same as one vector expression, |dep_q[i] from dnz_q
    assign elig_d = ord_busy_e ? '0 :
                    (queued_q & ~pick_oh_q & ~dnz_q & (head_q | ~ord_q | (any_svc_e ? '0 : '1)));
`endif

    // ================================================================ done and completions
    logic             dbuf_v_q, dbuf_ld, done_acc;
    logic [DEPTH-1:0] done_hit;
    logic [7:0]       dbuf_tag_q, dbuf_status_q;
    logic [31:0]      dbuf_result_q;
    // done stage: a done accepted at edge d is matched against the table at d (hit_q, declared
    // with the table), frees its entry at d+1 (its copy hit_col_q drives the dep_q column clears), and
    // waits in dst_* until the done buffer takes it (or drops it: no match)
    logic             free_any_q;                // a free at the last edge, for the counters
    logic             dst_v_q, dst_new_q, dst_hit_q, dst_any, dst_go;
    logic [7:0]       dst_tag_q, dst_status_q;
    logic [31:0]      dst_result_q;
    logic             cpl_v_q, cpl_ld, turn_q, take_rej, take_done, spur_q;
    logic [7:0]       cpl_tag_q, cpl_status_q;
    logic [31:0]      cpl_result_q;
    // queued rejections (tag, reason): at most DEPTH, as they hold reserved slots
    logic [11:0]      rq_mem [DEPTH];
    logic [IDX_W-1:0] rq_wr_q, rq_rd_q;
    logic [CNT_W-1:0] rq_cnt_q, occ_q;
    logic [11:0]      rq_head;
    logic [CNT_W-1:0] rq_cnt_d;
    logic             turn_d, dpass_q, dbuf_v_d, rej_ok_q;
    // s_done_ready = !dst_v_q || !dbuf_v_q || (cpl_ld && dpass_q) as one LUT after registers:
    // dready_q = !dst_v_q || !dbuf_v_q || (!cpl_v_q && dpass_q), registered from the next values
    logic             dready_q, dready_d, dst_v_d, cpl_v_d, dpass_d;
    logic [7:0]       rej_status;

    always_comb begin
`ifndef ATS_SYNTH_FORM
        done_hit   = '0;
        done_hit_g = '0;
        if (done_acc) begin                     // (simulation form: only when registered)
`endif
        for (int i = 0; i < DEPTH; i++) begin
            // an entry freed at this edge (hit_q) no longer counts
            done_hit[i] = valid_q[i] && sent_q[i] && !hit_q[i] && (tag_q[i] == s_done_tag);
        end
        for (int g = 0; g < NCPY; g++) begin
            done_hit_g[g] = 1'b0;
            for (int i = g * 8; i < DEPTH && i < g * 8 + 8; i++) begin
                done_hit_g[g] = done_hit_g[g] | done_hit[i];
            end
        end
`ifndef ATS_SYNTH_FORM
        end
`endif
    end
    assign cpl_ld       = !cpl_v_q || m_cpl_ready;
    assign rq_head      = rq_mem[rq_rd_q];
    // = cpl_ld && (rq_cnt_q != 0) && (!dbuf_v_q || !turn_q), with the second part registered
    // (rej_ok_q, from the next values of the three registers): one LUT in front of the counters
    assign take_rej     = cpl_ld && rej_ok_q;
    assign take_done    = cpl_ld && dbuf_v_q && !take_rej;
    assign dbuf_ld      = take_done;
    // the done stage moves on when the done buffer is empty or leaving (a dropped done too)
    assign dst_go       = !dbuf_v_q || dbuf_ld;
    // = !dst_v_q || dst_go, from registers and m_cpl_ready only: dpass_q registers "no queued
    // rejection, or it is the done's turn" (a buffered done would win the arbitration)
    assign s_done_ready = dready_q || (m_cpl_ready && dpass_q);
    assign dst_v_d      = done_acc || (dst_v_q && !dst_go);
    assign cpl_v_d      = cpl_ld ? (take_rej || take_done) : cpl_v_q;
    assign dpass_d      = (rq_cnt_d == '0) || turn_d;
    assign dready_d     = !dst_v_d || !dbuf_v_d || (!cpl_v_d && dpass_d);
    assign rq_cnt_d     = rq_cnt_q + CNT_W'(s3_rej) - CNT_W'(take_rej);
    assign turn_d       = take_rej ? 1'b1 : take_done ? 1'b0 : turn_q;
    assign dbuf_v_d     = (dst_v_q && dst_go) ? dst_any : (dbuf_ld ? 1'b0 : dbuf_v_q);
    assign done_acc     = s_done_valid && s_done_ready;
    // the staged done matched a command: known from hit_any the cycle after its accept, then held
    assign dst_any      = hit_any || (dst_hit_q && !dst_new_q);
    always_comb begin
        case (rq_head[3:0])
            ats_host_pkg::REJ_BAD_OP:                      rej_status = ats_host_pkg::STS_BAD_OP;
            ats_host_pkg::REJ_TXID_RANGE, ats_host_pkg::REJ_TXID_NEEDED:  rej_status = ats_host_pkg::STS_BAD_TXID;
            ats_host_pkg::REJ_LBA:                         rej_status = ats_host_pkg::STS_BAD_LBA;
            default:                        rej_status = ats_host_pkg::STS_BAD_FIELD;
        endcase
    end

`ifdef ATS_SYNTH_FORM
    // the dependency and precedence matrices' next state (whole-matrix registers: one assignment
    // a cycle instead of one per bit, which a cycle-based simulator evaluates much faster)
    always_comb begin
        dep_d  = dep_q;
        prec_d = prec_q;
        for (int k = 0; k < DEPTH; k++) begin
            // row k: the new entry's; else column j cleared for the new entry or a freed one
            dep_d[k] = ins_dep_q[k] ? (s3_dep & ~hit_col_q) : (dep_q[k] & ~(ins_col_q | hit_col_q));
            // pair (k, j), k < j: does j go before k? Older entries win ties.
            for (int j = k + 1; j < DEPTH; j++) begin
                if (ins_prec_q[k]) begin                  // k is new: j (in use) goes first unless lower
                    prec_d[`ATS_CMDQ_PIDX(k, j)] = s3_prec_q[j];
                end else if (ins_prec_q[j]) begin         // j is new: it goes first only when higher
                    prec_d[`ATS_CMDQ_PIDX(k, j)] = !s3_prec_q[k];   // = key_new > key_q[k] (k in use)
                end
            end
        end
    end
`endif

    // ================================================================ registers
    always_ff @(posedge clk) begin
        // stage 1 (the lba + nlb sum is taken at the accept edge)
        s1_v_q <= acc;
        if (acc) begin
            s1_op_q    <= s_cmd_op;
            s1_tag_q   <= s_cmd_tag;
            s1_lba_q   <= s_cmd_lba;
            s1_nlb_q   <= s_cmd_nlb;
            s1_txid_q  <= s_cmd_txid;
            s1_flags_q <= s_cmd_flags;
            s1_attr_q  <= s_cmd_attr;
            s1_prio_q  <= s_cmd_prio;
            s1_dptr_q  <= s_cmd_dptr;
            s1_aux_q   <= s_cmd_aux;
            s1_end_q   <= 49'(s_cmd_lba) + 49'(s_cmd_nlb);
            s1_dend_q  <= 17'(s_cmd_aux[15:0]) + 17'(s_cmd_aux[31:16]);
        end
        // stage 2 (simulation form: the fields that are functions of stage 1's command alone are
        // loaded only while stage 1 holds one: stage 1's registers change only at an accept,
        // after which s1_v_q is high, so these registers hold the values the synthesis form
        // gives them (from the first command on; nothing reads them before); stage 3's copies
        // likewise with s2_v_q)
        s2_v_q     <= s1_v_q;
`ifndef ATS_SYNTH_FORM
        if (s1_v_q) begin
`endif
        s2_bad_q   <= s1_bad;
        s2_err_hi_q <= s1_err_hi;
        s2_err_lo_q <= s1_err_lo;
        s2_b_lba_q  <= s1_b_lba;
`ifndef ATS_SYNTH_FORM
        end
`endif
        s2_fok_q   <= s1_v_q && !(s1_b_op || s1_b_rsvd || s1_b_flag || s1_b_txr || s1_b_txn);
        s2_fok2_q  <= !(s1_b_lba || s1_b_diff || s1_b_rfl);
        s2_dupg_q  <= s1_dupg;
        s2_dupx_q  <= s1_dupx;
        s2_dep_y_q  <= s1_dep_s2;
        s2_prec_y_q <= s1_prec_s2;
`ifndef ATS_SYNTH_FORM
        if (s1_v_q) begin
`endif
        s2_bar_q   <= (s1_op_q == ats_host_pkg::OP_WRITE) && s1_flags_q[ats_host_pkg::FLAG_BARRIER];
        s2_last_q  <= s1_end_q[LW-1:0];
        s2_rng_q   <= s1_rng;
        s2_wr_q    <= s1_wr;
        s2_txop_q  <= s1_txop;
        s2_key_q   <= s1_key;
        s2_op_q    <= s1_op_q;
        s2_tag_q   <= s1_tag_q;
        s2_lba_q   <= s1_lba_q;
        s2_nlb_q   <= s1_nlb_q;
        s2_txid_q  <= s1_txid_q;
        s2_flags_q <= s1_flags_q;
        s2_attr_q  <= s1_attr_q;
        s2_prio_q  <= s1_prio_q;
        s2_dptr_q  <= s1_dptr_q;
        s2_aux_q   <= s1_aux_q;
`ifndef ATS_SYNTH_FORM
        end
`endif
        // stage 3
        s3_v_q     <= s2_v_q;
        s3_ins_q   <= s2_ok;
        s3_insbar_q <= s2_ok && s2_bar_q;
        s3_err_q   <= !s2_bad_q ? ats_host_pkg::REJ_DUP_TAG : (s2_err_hi_q != 4'd0) ? s2_err_hi_q :
                      s2_b_lba_q ? ats_host_pkg::REJ_LBA : s2_err_lo_q;
        s3_depn_q  <= s2_depn;
        s3_dtx_q   <= s2_dtx;
        s3_ovq_q   <= s2_ovq;
        s3_ova_q   <= s2_ova;
        s3_ovb_q   <= s2_ovb;
        s3_prec_q  <= s2_prec;
`ifndef ATS_SYNTH_FORM
        if (s2_v_q) begin
`endif
        s3_bar_q   <= s2_bar_q;
        s3_last_q  <= s2_last_q;
        s3_rng_q   <= s2_rng_q;
        s3_wr_q    <= s2_wr_q;
        s3_txop_q  <= s2_txop_q;
        s3_key_q   <= s2_key_q;
        s3_op_q    <= s2_op_q;
        s3_tag_q   <= s2_tag_q;
        s3_lba_q   <= s2_lba_q;
        s3_nlb_q   <= s2_nlb_q;
        s3_txid_q  <= s2_txid_q;
        s3_flags_q <= s2_flags_q;
        s3_attr_q  <= s2_attr_q;
        s3_prio_q  <= s2_prio_q;
        s3_dptr_q  <= s2_dptr_q;
        s3_aux_q   <= s2_aux_q;
`ifndef ATS_SYNTH_FORM
        end
`endif

        // epochs: every command carries the open epoch; a BARRIER write closes it
        if (s3_insbar_q) epoch_q <= epoch_q + 16'd1;

`ifdef ATS_SYNTH_FORM
        // table: insert, pick, send, free
        for (int k = 0; k < DEPTH; k++) begin
            if (ins_row_q[k]) begin
                valid_q[k]  <= 1'b1;
                queued_q[k] <= 1'b1;
                sent_q[k]   <= 1'b0;
                ord_q[k]    <= (s3_attr_q == ats_host_pkg::ATTR_ORDERED);
                head_q[k]   <= (s3_attr_q == ats_host_pkg::ATTR_HEAD);
                rng_q[k]    <= s3_rng_q;
                wr_q[k]     <= s3_wr_q;
                epc_q[k]    <= s3_bar_q;                       // a barrier closes its own epoch
                txop_q[k]   <= s3_txop_q;
                key_q[k]    <= s3_key_q;
                tag_q[k]    <= s3_tag_q;
                txid_q[k]   <= s3_txid_q;
                lba_q[k]    <= s3_lba_t;
                last_q[k]   <= s3_last_q;
            end else begin
                if (s3_insbar_q && wr_q[k]) epc_q[k] <= 1'b1;
                if (pick_oh_q[k]) queued_q[k] <= 1'b0;
                if (disp_v_q && m_disp_ready && disp_oh_q[k]) sent_q[k] <= 1'b1;
                if (hit_q[k]) valid_q[k] <= 1'b0;
            end
        end
        dep_q  <= dep_d;                             // the matrices: next state from the always_comb above
        prec_q <= prec_d;
`else
        // simulation form: the same next state as whole vectors, the per-entry fields and the
        // matrices' rows only at an insert or a free
        valid_q  <= (valid_q & ~hit_q) | ins_row_q;
        queued_q <= (queued_q & ~pick_oh_q) | ins_row_q;
        sent_q   <= (sent_q | ((disp_v_q && m_disp_ready) ? disp_oh_q : '0)) & ~ins_row_q;
        epc_q    <= ((epc_q | (s3_insbar_q ? wr_q : '0)) & ~ins_row_q) | (s3_bar_q ? ins_row_q : '0);
        ord_q    <= (ord_q & ~ins_row_q)  | ((s3_attr_q == ats_host_pkg::ATTR_ORDERED) ? ins_row_q : '0);
        head_q   <= (head_q & ~ins_row_q) | ((s3_attr_q == ats_host_pkg::ATTR_HEAD) ? ins_row_q : '0);
        rng_q    <= (rng_q & ~ins_row_q)  | (s3_rng_q ? ins_row_q : '0);
        wr_q     <= (wr_q & ~ins_row_q)   | (s3_wr_q ? ins_row_q : '0);
        txop_q   <= (txop_q & ~ins_row_q) | (s3_txop_q ? ins_row_q : '0);
        // (one write at the insert's index: ins_row_q is one-hot or zero, the lowest free slot)
        if (|ins_row_q) begin
            key_q[ins_k]  <= s3_key_q;
            tag_q[ins_k]  <= s3_tag_q;
            txid_q[ins_k] <= s3_txid_q;
            lba_q[ins_k]  <= s3_lba_t;
            last_q[ins_k] <= s3_last_q;
        end
        // dependency rows: the new entry's row, the new entry's and the freed entry's columns
        // (the rows' next value dep_n, computed only in these cycles)
        if (|{ins_dep_q, ins_col_q, hit_col_q}) begin
            dep_q <= dep_n;
            for (int k = 0; k < DEPTH; k++) dnz_q[k] <= |dep_n[k];
        end
        // precedence rows and columns (precm_n above)
        if (|ins_prec_q) precm_q <= precm_n;
`endif

        // pick (at most every other cycle), its consequences one edge later
        cand_q     <= elig_d;
        pick_v_q   <= pick_any;                  // (a pick register in use always moves on)
        pick_ord_q <= pick_ord;
        pick_oh_q  <= pick_ld ? win : '0;
`ifndef ATS_SYNTH_FORM
        pick_ix_q  <= pick_ld ? win_ix : '0;
`endif
        ord_busy_q <= pick_ord_q || (ord_busy_q && !hit_any);
        any_svc_q  <= pick_v_q || svc_gt1 || (svc_eq1 && !hit_any);
        svc_cnt_q  <= svc_cnt_q + CNT_W'(pick_v_q) - CNT_W'(hit_any);

        // dispatch pipeline: pick, select (index), m_disp register (payload from the table RAM)
        if (sel_ld) begin
            sel_v_q     <= pick_v_q;
            sel_oh_q    <= pick_oh_q;
        end
        if (out_ld) begin
            disp_v_q   <= sel_v_q;
            disp_oh_q  <= sel_oh_q;
            disp_pay_q <= disp_pay_d;
        end

        // done buffer, rejection queue, completion register (alternating when both wait)
        hit_q     <= done_acc ? done_hit : '0;
        hit_g_q   <= done_acc ? done_hit_g : '0;
        dst_new_q <= done_acc;
        dst_hit_q <= dst_any;
        if (done_acc) begin
            dst_v_q      <= 1'b1;
            dst_tag_q    <= s_done_tag;
            dst_status_q <= s_done_status;
            dst_result_q <= s_done_result;
        end else if (dst_go) begin
            dst_v_q <= 1'b0;
        end
        if (dst_v_q && dst_go) begin
            dbuf_v_q      <= dst_any;                     // no match: dropped
            dbuf_tag_q    <= dst_tag_q;
            dbuf_status_q <= dst_status_q;
            dbuf_result_q <= dst_result_q;
        end else if (dbuf_ld) begin
            dbuf_v_q <= 1'b0;
        end
        spur_q <= dst_new_q && !hit_any;
        if (s3_rej) begin
            rq_mem[rq_wr_q] <= {s3_tag_q, s3_err_q};
            rq_wr_q <= (rq_wr_q == IDX_W'(DEPTH - 1)) ? '0 : rq_wr_q + IDX_W'(1);
        end
        if (take_rej) begin
            rq_rd_q <= (rq_rd_q == IDX_W'(DEPTH - 1)) ? '0 : rq_rd_q + IDX_W'(1);
        end
        rq_cnt_q <= rq_cnt_d;
        dpass_q  <= dpass_d;
        dready_q <= dready_d;
        rej_ok_q <= (rq_cnt_d != '0) && (!dbuf_v_d || !turn_d);
        turn_q   <= turn_d;
        if (cpl_ld) begin
            cpl_v_q <= take_rej || take_done;
            if (take_rej) begin
                cpl_tag_q    <= rq_head[11:4];
                cpl_status_q <= rej_status;
                cpl_result_q <= {ats_host_pkg::REJ_MARK, 20'h0, rq_head[3:0]};
            end else if (take_done) begin
                cpl_tag_q    <= dbuf_tag_q;
                cpl_status_q <= dbuf_status_q;
                cpl_result_q <= dbuf_result_q;
            end
        end
        // the counters see a free one edge late: s_cmd_ready and occupancy lag a free by one
        // cycle (conservative)
        free_any_q <= hit_any;
        res_q <= res_q + CNT_W'(acc) - CNT_W'(free_any_q) - CNT_W'(take_rej);
        occ_q <= occ_q + CNT_W'(s3_ins_q) - CNT_W'(free_any_q);

        if (rst) begin
            s1_v_q     <= 1'b0;
            s2_v_q     <= 1'b0;
            s2_fok_q   <= 1'b0;
            s2_dupg_q  <= '0;
            s2_dupx_q  <= 1'b0;
            s3_v_q     <= 1'b0;
            s3_ins_q   <= 1'b0;
            s3_insbar_q <= 1'b0;
            epoch_q    <= '0;
            valid_q    <= '0;
            queued_q   <= '0;
            sent_q     <= '0;
            cand_q     <= '0;
            pick_ord_q <= 1'b0;
            pick_oh_q  <= '0;
`ifndef ATS_SYNTH_FORM
            pick_ix_q  <= '0;
`endif
            ord_busy_q <= 1'b0;
            any_svc_q  <= 1'b0;
            svc_cnt_q  <= '0;
            pick_v_q   <= 1'b0;
            sel_v_q    <= 1'b0;
            disp_v_q   <= 1'b0;
            dbuf_v_q   <= 1'b0;
            hit_q      <= '0;
            hit_g_q    <= '0;
            free_any_q <= 1'b0;
            dst_v_q    <= 1'b0;
            dst_new_q  <= 1'b0;
            dst_hit_q  <= 1'b0;
            spur_q     <= 1'b0;
            rq_wr_q    <= '0;
            rq_rd_q    <= '0;
            rq_cnt_q   <= '0;
            cpl_v_q    <= 1'b0;
            turn_q     <= 1'b0;
            dpass_q    <= 1'b1;
            dready_q   <= 1'b1;
            rej_ok_q   <= 1'b0;
            res_q      <= '0;
            occ_q      <= '0;
        end
    end

    // replicated registers (each copy drives part of the fan-out)
    assign ins_row_d   = (s2_ok && !rst) ? free_oh : '0;
    assign sel_idx_a_d = sel_ld ? pick_idx : sel_idx_a_q;
    assign sel_idx_b_d = sel_ld ? pick_idx : sel_idx_b_q;
    ats_cmdq_rep #(.W(DEPTH)) u_ins_row  (.clk, .d(ins_row_d), .q(ins_row_q));
    ats_cmdq_rep #(.W(DEPTH)) u_ins_dep  (.clk, .d(ins_row_d), .q(ins_dep_q));
    ats_cmdq_rep #(.W(DEPTH)) u_ins_prec (.clk, .d(ins_row_d), .q(ins_prec_q));
    ats_cmdq_rep #(.W(DEPTH)) u_ins_idx  (.clk, .d(ins_row_d), .q(ins_idx_q));
    ats_cmdq_rep #(.W(DEPTH)) u_ins_col  (.clk, .d(ins_row_d), .q(ins_col_q));
    assign hit_col_d = (done_acc && !rst) ? done_hit : '0;
    ats_cmdq_rep #(.W(DEPTH)) u_hit_col  (.clk, .d(hit_col_d), .q(hit_col_q));
    assign s3_dep = s3_depn_q | s3_dtx_q | (s3_ovq_q & s3_ova_q & s3_ovb_q);
    ats_cmdq_rep #(.W(IDX_W)) u_sel_idx_a (.clk, .d(sel_idx_a_d), .q(sel_idx_a_q));
    ats_cmdq_rep #(.W(IDX_W)) u_sel_idx_b (.clk, .d(sel_idx_b_d), .q(sel_idx_b_q));

    // payload RAM: written at insert (with the epoch the command belongs to), read by the select
    // register; two RAMs of half the columns, each addressed by its own copy of the index
    localparam int PAY_H = PAY_W / 2;
    logic [PAY_W-1:0]       pay_wr;
    logic [PAY_W-PAY_H-1:0] pay_hi_mem [DEPTH];
    logic [PAY_H-1:0]       pay_lo_mem [DEPTH];
    assign pay_wr = {s3_op_q, s3_tag_q, s3_lba_q, s3_nlb_q, s3_txid_q, s3_flags_q, s3_attr_q, s3_prio_q,
                     s3_dptr_q, s3_aux_q, epoch_q};
    always_ff @(posedge clk) begin
        if (s3_ins_q) begin
            pay_hi_mem[s3_idx] <= pay_wr[PAY_W-1:PAY_H];
            pay_lo_mem[s3_idx] <= pay_wr[PAY_H-1:0];
        end
    end
    assign disp_pay_d = {pay_hi_mem[sel_idx_a_q], pay_lo_mem[sel_idx_b_q]};

    // ================================================================ outputs
    assign m_disp_valid = disp_v_q;
    assign {m_disp_op, m_disp_tag, m_disp_lba, m_disp_nlb, m_disp_txid, m_disp_flags, m_disp_attr,
            m_disp_prio, m_disp_dptr, m_disp_aux, m_disp_epoch} = disp_pay_q;
    assign m_cpl_valid  = cpl_v_q;
    assign m_cpl_tag    = cpl_tag_q;
    assign m_cpl_status = cpl_status_q;
    assign m_cpl_result = cpl_result_q;
    assign epoch        = epoch_q;
    assign occupancy    = occ_q;
    assign err_spurious = spur_q;
endmodule
`undef ATS_CMDQ_PIDX

// ats_cmdq_rep: W flip-flops as their own hierarchy level, so that synthesis keeps several copies
// of one register (each driving part of a large fan-out) instead of merging them. Reset and enable
// are folded into d by the parent.
/* verilator lint_off DECLFILENAME */
(* keep_hierarchy *)
module ats_cmdq_rep #(
    parameter int W = 1
) (
    input  wire logic         clk,
    input  wire logic [W-1:0] d,
    output      logic [W-1:0] q
);
    always_ff @(posedge clk) q <= d;
endmodule
/* verilator lint_on DECLFILENAME */

`resetall
