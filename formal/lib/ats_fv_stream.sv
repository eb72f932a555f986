// SPDX-License-Identifier: Apache-2.0
// ats_fv_stream: the valid/ready rules of one stream port for the SymbiYosys proofs (formal/).
// ENV = 1: an input, driven by the environment: the rules are assumptions. ENV = 0: an output,
// driven by the block: the same rules are assertions.
//   - a beat offered and not taken (valid && !ready) is offered again in the next cycle with the
//     same payload (reset in either cycle excepted: a reset may withdraw a beat);
//   - RST_LOW (outputs from registers): valid is low in the cycle after a reset.
// Nothing is assumed about ready: the sink may raise and drop it in any cycle.
// Only the formal flow reads this file (read -formal); it is not part of any .f list.
`default_nettype none

module ats_fv_stream #(
    parameter int W       = 1,     // payload bits (every field that must stay stable, last included)
    parameter bit ENV     = 1'b0,  // 1: input (assume), 0: output (assert)
    parameter bit RST_LOW = 1'b1   // outputs only: valid low in the cycle after a reset
) (
    input wire logic         clk,
    input wire logic         rst,
    input wire logic         ok,       // a reset has been seen (the wrapper's f_ok)
    input wire logic         valid,
    input wire logic         ready,
    input wire logic [W-1:0] data
);
    logic         p_stall_q = 1'b0, p_rst_q = 1'b1;
    logic [W-1:0] p_data_q;
    always_ff @(posedge clk) begin
        p_stall_q <= valid && !ready;
        p_rst_q   <= rst;
        p_data_q  <= data;
    end
    wire logic hold_ok = !(ok && !p_rst_q && !rst && p_stall_q) || (valid && data == p_data_q);
    wire logic rst_ok  = !(RST_LOW && ok && p_rst_q) || !valid;

    if (ENV) begin : g_env
        always_comb assume (hold_ok);
    end else begin : g_dut
        always_comb begin
            assert (hold_ok);
            assert (rst_ok);
        end
    end
endmodule

`default_nettype wire
