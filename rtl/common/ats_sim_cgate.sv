// SPDX-License-Identifier: Apache-2.0
// ats_sim_cgate: a simulation-only clock gate for one block of the device core (issue 35 item 3).
// With ATS_SIM_CGATE defined (and SYNTHESIS not) the block's clock runs while the block is active or
// was in the last HOLD cycles: `act` (a valid on one of its ports, its own busy state), a change of
// any of its inputs (`watch`, compared with their value at the previous edge) or reset. The enable
// is taken by a latch while the clock is low, so an input that changes in a cycle wakes the block
// for the edge that ends that cycle: the edge at which it would first see the change. A block whose
// inputs are unchanged and whose state is settled (HOLD cycles after its last activity) would keep
// every register at every edge, so leaving those edges out changes nothing but the simulator's work
// (Verilator evaluates a block's sequential logic only on its clock's edges). Without the define,
// and always in synthesis, the gate is a wire: gclk = clk (rtl/common/README.md "ats_sim_cgate").
//
// FALL = 1 (the core's gates and the page controllers'): the same decision taken once a cycle, at
// the falling edge, into a flop (watch_q then holds the watched inputs at the previous falling edge).
// Nothing of it depends on `clk` combinationally, so Verilator evaluates the compare once a cycle in
// its NBA region instead of in its input-combinational region on every evaluation (together with
// the cone of logic feeding `watch` and `act`: issue 35's profile, bench/sim/README.md). The flop
// misses only inputs that change between the falling and the rising edge: those the testbench
// drives (the harness drives the host port while the clock is low). They must not be in `watch`;
// a testbench-driven valid (or any level that keeps the block busy) goes into `act` with
// LATCH_ACT = 1, which also passes `act` to the clock through a latch open while clk is low (the
// latch form for `act` alone, a small cone), and the block must take the other testbench-driven
// inputs only while such a valid is high (rtl/core/README.md "Simulation cost").
// `settle` (FALL only; default 0): the instance's own proof that the block is settled now, i.e. every
// register is at a fixed point while the inputs keep their values (the caller's condition on the
// block's registers, e.g. a page controller whose ways only wait for R/B#, rtl/nand/ats_nand_subsys.sv).
// At a falling edge without activity or a watched change, settle ends the HOLD at once: HOLD is for
// blocks whose settling is not known, settle for states where it is.
//
// ATS_SIM_SKIP (with ATS_SIM_CGATE; the SoC simulator's cycle skipping, sim/soc/README.md "Cycle
// skipping"): each gate tells the harness through DPI-C when its clock starts or stops running
// (ats_sim_gate_open(ID, +1 / -1), the first +1 at time 0: a gate starts open), so the harness knows
// when every gate is closed, and the edges the harness skipped count as edges with the clock off.
`resetall
`timescale 1ns / 1ps
`default_nettype none

`ifdef ATS_SIM_CGATE
`ifndef SYNTHESIS
`define ATS_SIM_CGATE_ON
`endif
`endif

/* verilator lint_off UNUSEDPARAM */     // HOLD and ID are unused without ATS_SIM_CGATE
module ats_sim_cgate #(
    parameter int W    = 1,     // watched input bits
    parameter int HOLD = 32,    // edges the clock keeps running after the last activity
    parameter int ID   = 0,     // bit of the +cgate_off=<mask> plusarg that keeps this clock on
    parameter bit FALL = 1'b0,  // 1: the enable is a flop taken at the falling edge (see above)
    parameter bit LATCH_ACT = 1'b0  // FALL: act also through a latch open while clk is low (see above)
) (
/* verilator lint_on UNUSEDPARAM */
    input  wire logic         clk,
    input  wire logic         rst,
    input  wire logic         act,      // active now (valid on a port, busy)
    input  wire logic [W-1:0] watch,    // the block's inputs: a change wakes it
    // FALL: the block is settled (every register at a fixed point while its inputs keep their values):
    // at a falling edge with no activity and no watched change, the hold ends at once (see above)
    input  wire logic         settle = 1'b0,
    output wire logic         gclk
);
`ifdef ATS_SIM_CGATE_ON
    localparam int HW = $clog2(HOLD + 1);
    logic [W-1:0]  watch_q;
    logic [HW-1:0] hold_q;
    logic          wake, en, en_l, keep_on;
    // +cgate_off=<mask>: the gates whose ID bit is set keep their clock on (to find a gate at fault)
    initial begin
        int unsigned mask;
        mask = 0;
        void'($value$plusargs("cgate_off=%d", mask));
        keep_on = mask[ID];
    end
`ifdef ATS_SIM_SKIP
    // the harness's count of open gates (sim/soc/ats_soc_sim.cpp); skipped edges (for the figures)
    import "DPI-C" function void ats_sim_gate_open(input int id, input int delta);
    import "DPI-C" function longint ats_sim_skipped();
    initial ats_sim_gate_open(ID, 1);
`endif
if (FALL) begin : g_fall
    // the decision at the falling edge; en_q starts on (the first edges are under reset)
    logic en_q = 1'b1;
    logic act_l;
    always_ff @(negedge clk) begin
        watch_q <= watch;
        if (rst || act || keep_on || (watch != watch_q)) begin
            hold_q <= HW'(HOLD);
            en_q   <= 1'b1;
`ifdef ATS_SIM_SKIP
            if (!en_q) ats_sim_gate_open(ID, 1);
`endif
        end else if (settle) begin
            hold_q <= '0;
            en_q   <= 1'b0;
`ifdef ATS_SIM_SKIP
            if (en_q) ats_sim_gate_open(ID, -1);
`endif
        end else begin
            if (hold_q != '0) hold_q <= hold_q - 1'b1;
            en_q <= hold_q != '0;
`ifdef ATS_SIM_SKIP
            if (en_q && hold_q == '0) ats_sim_gate_open(ID, -1);
`endif
        end
    end
    if (LATCH_ACT) begin : g_act
        always_latch begin
            if (!clk) act_l = act;
        end
    end else begin : g_noact
        assign act_l = 1'b0;
    end
    assign en_l = en_q || act_l;
    assign wake = 1'b0;     // (the latch form's signals)
    assign en   = 1'b0;
end else begin : g_latch
    logic unused_settle;    // (settle: the FALL form's)
    assign unused_settle = settle;
    assign wake = rst || act || keep_on || (watch != watch_q);
    assign en   = wake || (hold_q != '0);
    always_ff @(posedge clk) begin
        watch_q <= watch;
        if (wake)               hold_q <= HW'(HOLD);
        else if (hold_q != '0)  hold_q <= hold_q - 1'b1;
    end
    always_latch begin
        if (!clk) en_l = en;
    end
`ifdef ATS_SIM_SKIP
    // open: the enable as the latch holds it at the falling edge (it changes while clk is low only
    // with a testbench-driven input, when the harness does not skip)
    logic open_q = 1'b1;
    always_ff @(negedge clk) begin
        if (en != open_q) ats_sim_gate_open(ID, en ? 1 : -1);
        open_q <= en;
    end
`endif
end
    assign gclk = clk && en_l;

    // activity figures: edges given to the block / all edges, printed at the end of the simulation
    longint unsigned n_all, n_on, n_tot;
    initial begin
        n_all = 0;
        n_on  = 0;
    end
    always_ff @(posedge clk) begin
        n_all <= n_all + 1;
        n_on  <= n_on + longint'(en_l);
    end
    final begin
        n_tot = n_all;
`ifdef ATS_SIM_SKIP
        n_tot = n_tot + longint'(ats_sim_skipped());    // the edges the harness skipped (clock off)
`endif
        $display("[cgate] %m: clock on %0d of %0d edges (%0.1f %%)", n_on, n_tot,
                 n_tot == 0 ? 0.0 : 100.0 * real'(n_on) / real'(n_tot));
    end
`else
    assign gclk = clk;
    logic unused;
    assign unused = ^{rst, act, watch, settle};
`endif
endmodule

`resetall
