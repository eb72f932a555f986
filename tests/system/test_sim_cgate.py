# SPDX-License-Identifier: Apache-2.0
"""The simulation-only clock gates of the core's blocks (issue 35 item 3; rtl/common/ats_sim_cgate.sv,
rtl/core/README.md "Simulation cost") change nothing but the simulator's work: the gated build (the
default of sim/soc/build.py) and the build without gates (`--no-cgate`) are driven by the same seeded
scenario and must give identical results. The ungated build is the reference: the same RTL with every
block clocked on every edge, run with `+eval_always` (the harness evaluates the model after every
drive(), not only when an input changed), so the harness's skipped evaluations are checked too.

Scenario (bench/sim's phases, bench/sim/bench_sim.py `Run`, shortened): a first boot on blank dies
(bad-block scan, format, first checkpoint), a seeded I/O mix through the host port at queue depth 8
(writes with FUA and barriers, 2-page transactions committed by a COMMIT write, reads, FLUSH, TRIM),
an idle stretch (firmware housekeeping), a power cut, and the recovery on the cut die images.
Compared: the cycle, tag, status and result of every completion, the read data, the start and end
cycle of every phase, the UART output of both processes, the MSI list, the harness's counters at the
cut and at the end, and the die images byte for byte (SHA-256) after the cut and after the final
power-off. The gated build must also have gated: each gated block's clock was off for part of the
run (the gates' own counts, printed by the simulator at exit), and so was the CPU's, which stops
while the firmware waits in the wait unit (rtl/soc/ats_wait.sv, sim/soc/README.md "The CPU's
clock").

The test found what kept two blocks from being gated exactly, since fixed: the write buffer's
writeback engine stepped round its states in every cycle, idle or not (it now waits in EN_A until it
has an entry to write back), and the NAND die models ended an array operation on the rising clock
edge, the edge the page controllers sample R/B# on, so a gated controller saw it a cycle early (the
dies now end it on the falling edge). The NAND scheduler's slot counter turns on every edge (its
timing contract, rtl/nand/README_sched.md): it stays on the free clock, the rest of the scheduler is
gated.

The gated builds also skip cycles (ATS_SIM_SKIP, sim/soc/README.md "Cycle skipping"): while the CPU
sleeps in the wait unit, every gate is closed and the harness has nothing to give, the harness jumps
to the next event (the wait's deadline or cap, a die's array operation ending, the end of the RUN)
and advances the free-running counters itself. The same comparisons check that, and each test
requires that cycles were skipped: in the idle phase above all (the firmware's housekeeping waits),
and in boot and recovery (at least 1 % of their cycles), whose skips are the NAND array waits: the
page controllers' and the backend's gates close while they only wait for R/B# or a NAND completion;
a page controller's gate closes at once when the controller is settled (its `settle`, not after the
gate's HOLD), which the host-port item requires as a share of boot + recovery skipped that the HOLD
alone does not reach.

The NVMe build (test_sim_cgate_nvme_exact) adds the NVMe front end's gate (rtl/nvme/ats_nvme.sv) and
the queue manager's round-robin pointer in its simulation form (a phase counter on the ungated clock
instead of a register that turns in every idle cycle: ats_nvme_qm). Its reference is the same
simulator with every gate held open (`+cgate_off` with every bit set: each block clocked on every
edge, the pointer in its register form) and `+eval_always`, so no second NVMe build is needed; the
gate module itself is checked against a build without gates by the host-port test above, and
`make bench-sim` compares the NVMe build with its ungated and synthesis-form builds too. Scenario:
the same phases through the NVMe driver (bring-up, seeded writes with FUA, reads and flushes in
batches of 8, idle, power cut, recovery); compared: every CQE's (cid, status), the MSIs with their
cycles, the read data, the phase cycles, UART, counters and die images."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sim/soc"), str(ROOT / "bench/sim"), str(ROOT / "sw/host")]

import bench_sim  # noqa: E402
import build as simbuild  # noqa: E402

# the gated blocks (bench_sim.gate_counts names): the core's command queue, write buffer, backend and
# remap engine, each NAND channel's page controller, the NAND scheduler (all but its slot counter:
# rtl/nand/README_sched.md "Simulation cost")
BLOCKS = ("cmdq", "wbuf", "be", "remap", "page0", "page1", "ats_ssd_core.u_nand.u_sched.u_cg_sched",
          "ats_ssd_core.u_nand.u_cg_ssx")
ALL_GATES_OPEN = "+cgate_off=4294967295"     # every +cgate_off bit: each gate held open


def cpu_gate(logs: list[str]) -> tuple[int, int] | None:
    """The CPU's gate (rtl/soc/ats_wait.sv: its clock stops while the firmware waits in the wait unit):
    (edges on, all edges) summed over a run's processes, None when the build has no gates."""
    hits = [(int(a), int(b)) for log in logs
            for a, b in re.findall(r"\[cgate\] \S*ats_wait\.u_cg_cpu: clock on (\d+) of (\d+) edges", log)]
    return (sum(a for a, _ in hits), sum(b for _, b in hits)) if hits else None


def skipped(logs: list[str]) -> int:
    """Cycles the harness skipped over a run's processes (its exit line; 0 without cycle skipping)."""
    return sum(int(n) for log in logs for n in re.findall(r"cycle skipping: (\d+) cycles skipped", log))


def settled_share(r) -> float:
    """The share of the boot and recovery phases' cycles that a run skipped."""
    return (sum(r.phases[ph]["skipped"] for ph in ("boot", "recovery"))
            / sum(r.phases[ph]["cycles"] for ph in ("boot", "recovery")))


def test_sim_cgate_exact(tmp_path, monkeypatch):
    gated, fw, cfg = simbuild.build_locked("sim")
    # the reference needs no compiler PGO (same RTL, same results): one compile instead of two
    with monkeypatch.context() as m:
        m.setenv("ATS_SIM_PGO", "0")
        ungated, fw2, _ = simbuild.build_locked("sim", cgate=False)
    assert fw == fw2
    runs = {}
    # the reference also evaluates the model after every drive() (+eval_always): the harness's skipped
    # evaluations (sim/soc/README.md "Evaluations per cycle") are checked by the same comparison
    for label, exe, extra in (("gated", gated, []), ("ungated", ungated, ["+eval_always"])):
        r = bench_sim.Run(exe, fw, cfg, tmp_path / label, nvme=False, seed=7, io_cmds=160, idle_cycles=300_000,
                          extra=extra)
        r.go()
        runs[label] = r
    g, u = runs["gated"], runs["ungated"]

    # the scenario did what it says (on the reference build)
    cpls = u.trace["cpl"][0]
    assert len(cpls) >= 160, f"only {len(cpls)} completions"
    assert any(d is not None for d in u.trace["reads"]), "no read returned data"
    assert u.trace["info_cut"]["cut_cycle"], "no power cut"
    assert u.phases["recovery"]["cycles"] > 0
    assert u.trace["info_end"]["viol_total"] == 0 and u.trace["info_cut"]["viol_total"] == 0

    # identical results: every key of the trace (completions with their cycles, reads, phase cycles,
    # UART, MSIs, counters, die images)
    diffs = bench_sim.diff_traces(g.trace, u.trace)
    detail = {k: (str(g.trace.get(k))[:400], str(u.trace.get(k))[:400]) for k in diffs}
    assert not diffs, f"gated and ungated builds differ in {diffs}: {json.dumps(detail, indent=1)}"

    # the gates gated: each gated block's clock was off for part of the run; none in the ungated build
    counts = bench_sim.gate_counts(g.logs)
    assert set(counts) == set(BLOCKS), f"gates reported: {sorted(counts)}"
    for name, (on, total) in counts.items():
        assert 0 < on < total, f"{name}: clock on {on} of {total} edges"
    assert not bench_sim.gate_counts(u.logs)
    # the CPU slept in the wait unit (sw/firmware: the main loop's idle, firmware-port waits) with its
    # clock stopped for part of the run, exactly (the comparison above)
    on, tot = cpu_gate(g.logs)
    assert 0 < on < tot, f"CPU: clock on {on} of {tot} edges"
    assert cpu_gate(u.logs) is None
    print(f"[cgate] CPU clock on {100 * on / tot:.1f} %")
    # cycle skipping: the gated build jumped over most of the idle phase, exactly (the comparison above)
    assert g.phases["idle"]["skipped"] > g.phases["idle"]["cycles"] // 2, f"idle phase: {g.phases['idle']}"
    # ... and the NAND array waits of boot and recovery (a page controller whose ways only wait for
    # R/B#, the backend waiting for a NAND completion: sim/soc/README.md "Cycle skipping"); seed 7
    # skipped 2.4 % and 2.2 % of them at 9c65dc3 (none before; the array times are
    # ARRAY_TIME_DIV = 20 times shorter than the datasheet's, most of a page's time is its transfer)
    for ph in ("boot", "recovery"):
        assert g.phases[ph]["skipped"] > g.phases[ph]["cycles"] // 100, f"{ph} phase: {g.phases[ph]}"
    # ... with the page gates closing as soon as a controller is settled (the gate's `settle`, not its
    # HOLD of 64 edges: sim/soc/README.md "Cycle skipping"): seed 7 skips 3.20 % of boot + recovery
    # (27,891 + 24,060 of 817,784 + 806,671 cycles), 2.71 % without it (23,312 + 20,766)
    assert settled_share(g) > 0.0295, f"boot + recovery: {g.phases['boot']}, {g.phases['recovery']}"
    assert skipped(g.logs) == sum(p["skipped"] for p in g.phases.values()) > 0
    assert skipped(u.logs) == 0
    print("[skip] cycles skipped: " + ", ".join(f"{n} {p['skipped']:,} of {p['cycles']:,}" for n, p in g.phases.items()))
    print("[cgate] clock on: " + ", ".join(f"{n} {100 * on / tot:.1f} %" for n, (on, tot) in counts.items()))


def test_sim_cgate_nvme_exact(tmp_path):
    exe, fw, cfg = simbuild.build_locked("sim", nvme=True)
    runs = {}
    for label, extra in (("gated", []), ("open", [ALL_GATES_OPEN, "+eval_always"])):
        r = bench_sim.Run(exe, fw, cfg, tmp_path / label, nvme=True, seed=5, io_cmds=96, idle_cycles=200_000,
                          extra=extra)
        r.go()
        runs[label] = r
    g, o = runs["gated"], runs["open"]

    # the scenario did what it says (on the reference run)
    cqes = [c for c in o.trace["cpl"] if isinstance(c, tuple)]
    assert len(cqes) == 96 and all(c[1:] == (0, 0) for c in cqes), f"CQEs: {cqes[:8]}"
    assert any(d for d in o.trace["reads"]), "no read returned data"
    assert o.trace["msi"][0], "no MSI"
    assert o.trace["info_cut"]["cut_cycle"], "no power cut"
    assert o.phases["recovery"]["cycles"] > 0

    diffs = bench_sim.diff_traces(g.trace, o.trace)
    detail = {k: (str(g.trace.get(k))[:400], str(o.trace.get(k))[:400]) for k in diffs}
    assert not diffs, f"gated and open runs differ in {diffs}: {json.dumps(detail, indent=1)}"

    # the gates gated (the front end's among them); held open, none did
    counts = bench_sim.gate_counts(g.logs)
    assert set(counts) == set(BLOCKS) | {"nvme"}, f"gates reported: {sorted(counts)}"
    for name, (on, total) in counts.items():
        assert 0 < on < total, f"{name}: clock on {on} of {total} edges"
    assert all(on == total for on, total in bench_sim.gate_counts(o.logs).values())
    on, tot = cpu_gate(g.logs)
    assert 0 < on < tot, f"CPU: clock on {on} of {tot} edges"
    assert cpu_gate(o.logs)[0] == cpu_gate(o.logs)[1]
    # cycle skipping in the gated run (none with every gate held open)
    assert g.phases["idle"]["skipped"] > g.phases["idle"]["cycles"] // 2, f"idle phase: {g.phases['idle']}"
    # and the NAND array waits of boot and recovery, as above (seed 5 at 9c65dc3: 2.4 % and 2.7 %)
    for ph in ("boot", "recovery"):
        assert g.phases[ph]["skipped"] > g.phases[ph]["cycles"] // 100, f"{ph} phase: {g.phases[ph]}"
    assert skipped(o.logs) == 0
    print("[skip] NVMe build, cycles skipped: " + ", ".join(f"{n} {p['skipped']:,} of {p['cycles']:,}"
                                                          for n, p in g.phases.items()))
    print("[cgate] NVMe build, clock on: " + ", ".join(f"{n} {100 * on / tot:.1f} %" for n, (on, tot) in counts.items()))
