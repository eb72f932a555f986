// SPDX-License-Identifier: Apache-2.0
// ats_wait: the firmware's "wait for event" (issue 35 item 4). A read of the wait word on the bus is
// not acknowledged until one of the enabled wake sources is pending, the deadline has passed, or the
// stall has lasted CAP cycles; it returns which ones (rtl/soc/README.md "ats_wait"). So the CPU,
// whose LiteX VexRiscv has no WFI, stops while it waits, with every one of its inputs unchanged:
// under ATS_SIM_CGATE (simulation only) its clock is gated while such a read is stalled (after HOLD
// edges that let its pipeline settle), which changes nothing but the simulator's work. Without the
// define, and always in synthesis, cpu_clk = clk. The bus request is registered (cs_q, we_q): the
// shared bus's arbiter and decoder reach one flip-flop's input, never the enables of bus_rdata and
// ack_q (a critical path of the board's placement, docs/boards.md pnr_e14); an access is seen one
// cycle after the master raised it; one the master dropped before its acknowledge gets none.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_wait #(
    parameter int NSRC  = 8,       // wake sources (bits of mask / pending)
    parameter int CAP_W = 19,      // a read is answered 2^CAP_W + 1 cycles after it began at the latest (TIMEOUT)
    parameter int HOLD  = 32,      // simulation gate: edges the CPU keeps after its wait read began
    parameter int CG_ID = 20       // simulation gate: the +cgate_off bit that keeps the CPU's clock on
) (
    input  wire logic            clk,
    input  wire logic            rst,            // synchronous, active high
    // ---- the wait word (bus slave, one word; read: wait, write: acknowledged, ignored)
    input  wire logic            bus_cyc,
    input  wire logic            bus_stb,
    input  wire logic            bus_we,
    output logic                 bus_ack,
    output logic      [31:0]     bus_rdata,
    // ---- wake sources and control (CSRs)
    input  wire logic [NSRC-1:0] src_lvl,        // level sources: pending while high
    input  wire logic [NSRC-1:0] src_evt,        // event sources: a pulse sets the sticky bit
    input  wire logic            evt_clr_we,     // clears the sticky bits set in evt_clr
    input  wire logic [NSRC-1:0] evt_clr,
    input  wire logic [NSRC-1:0] mask,           // sources that end a wait
    input  wire logic            dl_en,          // the deadline ends a wait
    input  wire logic [63:0]     deadline,       // compared with `cycles`: ends a wait when cycles >= deadline
    input  wire logic [63:0]     cycles,
    output wire logic [NSRC-1:0] pending,        // src_lvl | sticky
    output wire logic            dl_hit,         // cycles >= deadline
    output logic      [31:0]     waits,          // wait reads answered since reset
    output logic      [31:0]     timeouts,       // of them, ended by the CAP
    // ---- the CPU's clock (gated in simulation while it waits; clk otherwise)
    output wire logic            cpu_clk
);
    if (NSRC < 1 || NSRC > 16) begin : g_check
        $fatal(1, "ats_wait: NSRC must be 1..16 (%m)");
    end
    logic [NSRC-1:0]  sticky_q;
    logic [CAP_W-1:0] cnt_q;
    logic             ack_q;
    logic             cs_q, we_q;     // the master's cyc && stb (not in the cycle of an ack) and we, registered
    logic             req, rd, wake, cap_hit;

    assign pending = src_lvl | sticky_q;
    assign dl_hit  = cycles >= deadline;
    // cs_q is low in the cycle after an acknowledge (the master took it at that edge, its cyc of
    // that cycle was the answered access's), so an access is answered once
    assign req     = cs_q && !ack_q;
    assign rd      = req && !we_q;
    assign cap_hit = &cnt_q;
    assign wake    = |(pending & mask) || (dl_en && dl_hit) || cap_hit;
    assign bus_ack = ack_q;

    always_ff @(posedge clk) begin
        if (rst) begin
            sticky_q  <= '0;
            cnt_q     <= '0;
            ack_q     <= 1'b0;
            cs_q      <= 1'b0;
            we_q      <= 1'b0;
            bus_rdata <= 32'd0;
            waits     <= 32'd0;
            timeouts  <= 32'd0;
        end else begin
            // an event in the cycle of the clear stays pending
            sticky_q <= (sticky_q & ~(evt_clr_we ? evt_clr : '0)) | src_evt;
            cs_q     <= bus_cyc && bus_stb && !ack_q;
            we_q     <= bus_we;
            // bus_cyc && bus_stb of this cycle at ack_q's D input only (not an enable): a request
            // the master dropped before its answer (a CPU reset mid-wait) is not answered a cycle
            // late, where it could complete another master's access (LiteX's decoder ORs the acks)
            ack_q    <= req && (we_q || wake) && bus_cyc && bus_stb;
            cnt_q    <= (rd && !wake) ? cnt_q + CAP_W'(1) : '0;
            if (rd && wake) begin
                // bit 31: ended by the CAP; bit 16: the deadline had passed; 15..0: the pending sources
                bus_rdata <= {cap_hit, 14'd0, dl_hit, 16'(pending)};
                waits     <= waits + 32'd1;
                if (cap_hit) timeouts <= timeouts + 32'd1;
            end
        end
    end

    // The CPU's clock: it stops while a wait read is stalled (HOLD edges after the read began) and
    // runs again for the edge at which it sees the acknowledge: ack_q is a register, so the gate,
    // which decides at the falling edge (FALL), opens for the edge after the one that set it. A
    // stalled CPU with unchanged inputs keeps every register but its own cycle counter (mcycle,
    // which the firmware does not read: it times with the CYCLES CSR) at every edge it misses.
    ats_sim_cgate #(.W(1), .HOLD(HOLD), .ID(CG_ID), .FALL(1)) u_cg_cpu (
        .clk, .rst, .act(!rd), .watch(1'b0), .gclk(cpu_clk));
endmodule

`resetall
