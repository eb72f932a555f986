// SPDX-License-Identifier: Apache-2.0
// ats_admin: the device's admin commands (IDENTIFY, GET_LOG, FEATURE) answered by the firmware.
// Sits between the host port and the device core (README.md "Admin commands"):
//  - a descriptor with op IDENTIFY (9), GET_LOG (10) or FEATURE (11) is taken into a one-entry mailbox instead of
//    the core; while the mailbox is busy, the next admin descriptor waits (ready low), other
//    descriptors pass to the core unchanged (ready = the core's);
//  - the firmware sees the mailbox (adm_pending, adm_op, adm_tag; adm_lba, adm_lba_hi, adm_nlb, adm_aux:
//    the descriptor's lba[31:0], lba[47:32] != 0, nlb and aux), pushes WORDS data words
//    (adm_wdata_we; words past WORDS are dropped, words not pushed go out as 0), then ends it (adm_done_we with a status and a
//    result): with status 0 the words go to host memory at the descriptor's dptr as one burst on
//    m_hwr (addr constant per burst, as the core's), then the completion is offered on m_cpl;
//    with another status, and for FEATURE (no data, docs/architecture.md §1.2), only the completion;
//  - m_hwr and m_cpl merge the core's streams with the mailbox's: an offered beat, and a burst once
//    started, keep their source until accepted (no re-arbitration); the mailbox wins the next free
//    choice after it was passed over once (no starvation).
module ats_admin #(
    parameter int WORDS = 128
) (
    input  logic        clk,
    input  logic        rst,
    // host descriptors (other fields go to the core directly)
    input  logic        s_cmd_valid,
    output logic        s_cmd_ready,
    input  logic [3:0]  s_cmd_op,
    input  logic [7:0]  s_cmd_tag,
    input  logic [31:0] s_cmd_dptr,
    input  logic [47:0] s_cmd_lba,
    input  logic [15:0] s_cmd_nlb,
    input  logic [31:0] s_cmd_aux,
    output logic        m_cmd_valid,
    input  logic        m_cmd_ready,
    // completions: the core's in, merged out
    input  logic        s_cpl_valid,
    output logic        s_cpl_ready,
    input  logic [7:0]  s_cpl_tag,
    input  logic [7:0]  s_cpl_status,
    input  logic [31:0] s_cpl_result,
    output logic        m_cpl_valid,
    input  logic        m_cpl_ready,
    output logic [7:0]  m_cpl_tag,
    output logic [7:0]  m_cpl_status,
    output logic [31:0] m_cpl_result,
    // host memory writes: the core's in, merged out
    input  logic        s_hwr_valid,
    output logic        s_hwr_ready,
    input  logic [31:0] s_hwr_addr,
    input  logic [31:0] s_hwr_data,
    input  logic        s_hwr_last,
    output logic        m_hwr_valid,
    input  logic        m_hwr_ready,
    output logic [31:0] m_hwr_addr,
    output logic [31:0] m_hwr_data,
    output logic        m_hwr_last,
    // firmware (CSRs)
    output logic        adm_pending,
    output logic [3:0]  adm_op,
    output logic [7:0]  adm_tag,
    output logic [31:0] adm_lba,
    output logic        adm_lba_hi,
    output logic [15:0] adm_nlb,
    output logic [31:0] adm_aux,
    input  logic        adm_wdata_we,
    input  logic [31:0] adm_wdata,
    input  logic        adm_done_we,
    input  logic [7:0]  adm_done_status,
    input  logic [31:0] adm_done_result
);
    localparam int IW = $clog2(WORDS + 1);
    localparam int AW = $clog2(WORDS);
    // §1 opcodes of the admin answers (ats_host_pkg, by scoped name for Yosys)
    localparam logic [3:0] OP_IDENTIFY = ats_host_pkg::OP_IDENTIFY, OP_GET_LOG = ats_host_pkg::OP_GET_LOG,
                           OP_FEATURE = ats_host_pkg::OP_FEATURE;
    if (WORDS < 2) begin : g_chk
        $fatal(1, "ats_admin: WORDS must be >= 2");
    end

    typedef enum logic [1:0] {S_IDLE, S_FW, S_XFER, S_CPL} st_t;
    st_t st_q;
    logic [7:0]  tag_q;
    logic [3:0]  op_q;
    logic [31:0] dptr_q, result_q, lba_q, aux_q;
    logic        lba_hi_q;
    logic [15:0] nlb_q;
    logic [7:0]  status_q;
    logic [IW-1:0] wi_q, ri_q;
    logic [31:0] mem_q [WORDS];

    // ---- descriptors
    logic is_adm;
    assign is_adm = s_cmd_op == OP_IDENTIFY || s_cmd_op == OP_GET_LOG || s_cmd_op == OP_FEATURE;
    assign m_cmd_valid = s_cmd_valid && !is_adm;
    assign s_cmd_ready = is_adm ? (st_q == S_IDLE) : m_cmd_ready;
    assign adm_pending = st_q == S_FW;
    assign adm_op = op_q;
    assign adm_tag = tag_q;
    assign adm_lba = lba_q;
    assign adm_lba_hi = lba_hi_q;
    assign adm_nlb = nlb_q;
    assign adm_aux = aux_q;

    // ---- the mailbox's streams
    logic a_hwr_valid, a_hwr_last, a_cpl_valid;
    assign a_hwr_valid = st_q == S_XFER;
    assign a_hwr_last = ri_q == IW'(WORDS - 1);
    assign a_cpl_valid = st_q == S_CPL;

    // ---- merges: a locked source keeps the output; a free choice prefers the core unless the
    // mailbox was passed over
    logic hl_q, hsel_q, h_turn_q, hsel;      // host write: locked, locked source (1 = mailbox)
    logic cl_q, csel_q, c_turn_q, csel;
    always_comb begin
        hsel = hl_q ? hsel_q : (a_hwr_valid && (h_turn_q || !s_hwr_valid));
        csel = cl_q ? csel_q : (a_cpl_valid && (c_turn_q || !s_cpl_valid));
    end
    assign m_hwr_valid = hsel ? a_hwr_valid : s_hwr_valid;
    assign m_hwr_addr  = hsel ? dptr_q : s_hwr_addr;
    // words the firmware did not write go out as 0
    assign m_hwr_data  = hsel ? (ri_q < wi_q ? mem_q[ri_q[AW-1:0]] : 32'd0) : s_hwr_data;
    assign m_hwr_last  = hsel ? a_hwr_last : s_hwr_last;
    assign s_hwr_ready = !hsel && m_hwr_ready;
    assign m_cpl_valid  = csel ? a_cpl_valid : s_cpl_valid;
    assign m_cpl_tag    = csel ? tag_q : s_cpl_tag;
    assign m_cpl_status = csel ? status_q : s_cpl_status;
    assign m_cpl_result = csel ? result_q : s_cpl_result;
    assign s_cpl_ready  = !csel && m_cpl_ready;

    logic h_fire, c_fire;
    assign h_fire = m_hwr_valid && m_hwr_ready;
    assign c_fire = m_cpl_valid && m_cpl_ready;

    always_ff @(posedge clk) begin
        if (rst) begin
            st_q <= S_IDLE;
            tag_q <= '0;
            op_q <= '0;
            dptr_q <= '0;
            lba_q <= '0;
            lba_hi_q <= 1'b0;
            nlb_q <= '0;
            aux_q <= '0;
            result_q <= '0;
            status_q <= '0;
            wi_q <= '0;
            ri_q <= '0;
            hl_q <= 1'b0;
            hsel_q <= 1'b0;
            h_turn_q <= 1'b0;
            cl_q <= 1'b0;
            csel_q <= 1'b0;
            c_turn_q <= 1'b0;
        end else begin
            // host write lock: an offered beat not taken, or a burst not finished
            if (h_fire) hl_q <= !m_hwr_last;
            else hl_q <= hl_q || m_hwr_valid;
            hsel_q <= hsel;
            if (!hl_q) h_turn_q <= a_hwr_valid && !hsel ? 1'b1 : (hsel ? 1'b0 : h_turn_q);
            cl_q <= m_cpl_valid && !m_cpl_ready;
            csel_q <= csel;
            if (!cl_q) c_turn_q <= a_cpl_valid && !csel ? 1'b1 : (csel ? 1'b0 : c_turn_q);

            unique case (st_q)
                S_IDLE: if (s_cmd_valid && is_adm) begin
                    st_q <= S_FW;
                    tag_q <= s_cmd_tag;
                    op_q <= s_cmd_op;
                    dptr_q <= s_cmd_dptr;
                    lba_q <= s_cmd_lba[31:0];
                    lba_hi_q <= s_cmd_lba[47:32] != '0;
                    nlb_q <= s_cmd_nlb;
                    aux_q <= s_cmd_aux;
                    wi_q <= '0;
                    ri_q <= '0;
                end
                S_FW: begin
                    if (adm_wdata_we && wi_q < IW'(WORDS)) wi_q <= wi_q + 1'b1;
                    if (adm_done_we) begin
                        status_q <= adm_done_status;
                        result_q <= adm_done_result;
                        st_q <= adm_done_status == ats_host_pkg::STS_OK && op_q != OP_FEATURE ? S_XFER : S_CPL;
                    end
                end
                S_XFER: if (hsel && h_fire) begin
                    ri_q <= ri_q + 1'b1;
                    if (a_hwr_last) st_q <= S_CPL;
                end
                S_CPL: if (csel && c_fire) st_q <= S_IDLE;
                default: st_q <= S_IDLE;
            endcase
        end
    end

    // the data words (no reset: written before they are read)
    always_ff @(posedge clk) begin
        if (st_q == S_FW && adm_wdata_we && wi_q < IW'(WORDS)) mem_q[wi_q[AW-1:0]] <= adm_wdata;
    end
endmodule
