#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Deterministic per-cycle cost of the full-system simulation (issue 35; bench/sim/README.md
"Instruction counts"): the instructions the simulator executes per simulated cycle in a fixed slice
of each bench/sim phase, counted by Valgrind's callgrind. CPU time on this VM moves by up to 20 %
between runs; instruction counts of the same binary on the same slice repeat exactly, so A/B
decisions between simulators are taken on them.

  python bench/sim/icount_sim.py --exe A [--exe B ...] [--slice 100000] [--skip 200000] [--phases boot,io,idle,recovery]
                                 [--io-cmds 120] [--idle 300000] [--top 25] [--nvme] [--json out.json]

Each simulator runs bench_sim's phases (seed 1: boot on blank dies, --io-cmds I/O commands, --idle
idle cycles, a cut, recovery) under `valgrind --tool=callgrind --instr-atstart=no`; instrumentation
is switched on (callgrind_control, through vgdb) after the first --skip cycles of each chosen phase
(at its start for io) and off, with a dump, after --slice cycles more (at the end of the first run request that passes them:
the harness runs in requests of up to --slice cycles here, so a slice is --slice cycles
of the phase, or the rest of it if it is shorter). The slices' cycle counts are part of the
output: two simulators with the same trace give the same slices. Prints instructions per cycle per
phase and, with --top, the functions that cost most (Verilator's functions are per module and
scheduling region, e.g. `..._nba_sequent__TOP__ats_soc_sim_top__u_soc...`).
A slice of 100,000 cycles costs about 20-40 s of CPU under callgrind; the uninstrumented rest runs
about 5-10x slower than natively.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench/sim"), str(ROOT / "sw/host")]

import bench_sim  # noqa: E402
from atomssd.hostport import U_HOST_EN  # noqa: E402


def ctl(pid: int, *args: str) -> None:
    r = subprocess.run(["callgrind_control", *args, str(pid)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"callgrind_control {' '.join(args)} {pid}: {r.stdout}{r.stderr}")


def read_dump(path: Path) -> tuple[int, collections.Counter]:
    """(total Ir, Ir per function: self cost) of a callgrind dump."""
    fn_cost: collections.Counter = collections.Counter()
    names: dict[str, str] = {}
    total = 0
    cur = None
    in_call = False
    for ln in path.read_text(errors="replace").splitlines():
        if ln.startswith("fn="):
            m = re.match(r"fn=\((\d+)\)(?: (.*))?", ln)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                cur = names.get(m.group(1), m.group(1))
            else:
                cur = ln[3:]
            in_call = False
        elif ln.startswith("calls="):
            in_call = True
        elif ln and (ln[0].isdigit() or ln[0] in "+-*"):
            parts = ln.split()
            if len(parts) >= 2:
                if in_call:         # the line after calls= is the call's inclusive cost
                    in_call = False
                elif cur is not None:
                    fn_cost[cur] += int(parts[1])
        elif ln.startswith("summary:") or ln.startswith("totals:"):
            total = int(ln.split()[1])
        elif re.match(r"c?fn=|cfi=|cfl=|fi=|fe=|fl=", ln):
            m = re.match(r"(c?fn|cfi|cfl|fi|fe|fl)=\((\d+)\)(?: (.*))?", ln)
            if m and m.group(1) == "cfn" and m.group(3):
                names[m.group(2)] = m.group(3)
    return total, fn_cost


class IcountRun(bench_sim.Run):
    """bench_sim.Run under callgrind, instrumented in the first `slice` cycles of each chosen phase."""

    def __init__(self, *a, slice_cycles: int, skip: int, phases: set[str], dumps: Path, **k):
        super().__init__(*a, **k)
        self.slice_cycles, self.skip, self.want, self.dumps = slice_cycles, skip, phases, dumps
        self.ir: dict[str, dict] = {}

    def _phase(self, hp, name, fn):
        if name not in self.want:
            return super()._phase(hp, name, fn)
        pid, c00 = hp.proc.pid, hp.cycle
        orig = hp.run
        skip = self.skip if name != "io" else 0
        state = {"on": False, "c0": c00, "wait": skip > 0}
        if not skip:
            ctl(pid, "-z")
            ctl(pid, "-i", "on")
            state["on"] = True

        def run(max_cycles, until=0):
            if state["wait"]:   # not counted: the phase's first `skip` cycles
                max_cycles = min(max_cycles, max(1, c00 + skip - hp.cycle))
            elif state["on"]:   # requests of at most the rest of the slice while it is counted
                max_cycles = min(max_cycles, max(1, state["c0"] + self.slice_cycles - hp.cycle))
            why = orig(max_cycles, until)
            if state["wait"] and hp.cycle - c00 >= skip:
                state.update(wait=False, on=True, c0=hp.cycle)
                ctl(pid, "-z")
                ctl(pid, "-i", "on")
            elif state["on"] and hp.cycle - state["c0"] >= self.slice_cycles:
                self._stop(hp, name, state["c0"])
                state["on"] = False
            return why
        hp.run = run
        try:
            super()._phase(hp, name, fn)
        finally:
            hp.run = orig
        if state["on"]:
            self._stop(hp, name, state["c0"])

    def _boot(self, hp) -> None:     # in requests of at most a slice (same trace: the harness is cycle-exact)
        while not hp.run(bench_sim.BOOT_MAX, U_HOST_EN) & U_HOST_EN:
            if hp.cycle >= bench_sim.BOOT_MAX:
                raise SystemExit(f"[icount] no host_en within {bench_sim.BOOT_MAX} cycles")

    def _idle(self, hp) -> None:
        end = hp.cycle + self.idle_cycles
        while hp.cycle < end:
            hp.run(end - hp.cycle)

    def _stop(self, hp, name: str, c0: int) -> None:
        pid = hp.proc.pid
        ctl(pid, "-i", "off")
        before = set(self.dumps.glob(f"callgrind.out.{pid}*"))
        ctl(pid, "-d", name)
        for _ in range(100):
            new = set(self.dumps.glob(f"callgrind.out.{pid}*")) - before
            if new:
                break
            time.sleep(0.1)
        f = sorted(new)[-1]
        time.sleep(0.2)
        total, fns = read_dump(f)
        self.ir[name] = dict(cycles=hp.cycle - c0, ir=total, fns=fns, dump=str(f))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", action="append", required=True, help="simulator (repeat for an A/B)")
    ap.add_argument("--fw", default=str(ROOT / "build/soc/sim/fw/firmware.init"))
    ap.add_argument("--slice", type=int, default=100_000, help="cycles counted per phase")
    ap.add_argument("--skip", type=int, default=200_000,
                    help="cycles of boot, idle and recovery run before their slice (not io)")
    ap.add_argument("--phases", default="boot,io,idle,recovery")
    ap.add_argument("--io-cmds", type=int, default=120)
    ap.add_argument("--idle", type=int, default=300_000, help="idle phase cycles")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nvme", action="store_true", help="NVMe builds (bench_sim's NVMe io phase)")
    ap.add_argument("--top", type=int, default=0, help="functions to list per phase")
    ap.add_argument("--extra", default="", help="simulator plusargs, space separated")
    ap.add_argument("--json", default=None)
    ap.add_argument("--out", default=str(ROOT / "build/bench/sim/icount"))
    a = ap.parse_args()
    cfg = json.loads((ROOT / "build/soc/sim/config.json").read_text())
    phases = set(a.phases.split(","))
    res: dict[str, dict] = {}
    traces = []
    for i, exe in enumerate(a.exe):
        work = Path(a.out).resolve() / f"run{i}"
        work.mkdir(parents=True, exist_ok=True)
        dumps = work / "dumps"
        dumps.mkdir(parents=True, exist_ok=True)
        for f in dumps.glob("callgrind.out.*"):
            f.unlink()
        wrap = Path(a.out).resolve() / f"wrap{i}.sh"
        wrap.write_text("#!/bin/sh\nexec valgrind -q --tool=callgrind --instr-atstart=no --dump-instr=no "
                        f"--callgrind-out-file={dumps}/callgrind.out.%p {Path(exe).resolve()} \"$@\"\n")
        wrap.chmod(0o755)
        r = IcountRun(wrap, Path(a.fw), cfg, work / "run", a.nvme, a.seed, a.io_cmds, idle_cycles=a.idle,
                      extra=a.extra.split(), slice_cycles=a.slice, skip=a.skip, phases=phases, dumps=dumps)
        t0 = time.time()
        r.go()
        traces.append(r.trace)
        res[exe] = {n: dict(cycles=v["cycles"], ir=v["ir"], ir_per_cycle=round(v["ir"] / max(1, v["cycles"]), 1))
                    for n, v in r.ir.items()}
        print(f"\n== {exe} ({time.time() - t0:.0f} s wall)")
        for n in ("boot", "io", "idle", "recovery"):
            if n in r.ir:
                v = r.ir[n]
                print(f"{n:9s} {v['cycles']:>9,} cycles {v['ir']:>15,} Ir {v['ir'] / max(1, v['cycles']):>9.1f} Ir/cycle")
                if a.top:
                    for fn, c in v["fns"].most_common(a.top):
                        print(f"    {100 * c / max(1, v['ir']):5.1f} %  {c / max(1, v['cycles']):8.1f}/cyc  {fn[:150]}")
    same = all(not bench_sim.diff_traces(traces[0], t) for t in traces[1:])
    print(f"\ntraces identical across the simulators: {same}"
          + ("" if same else f" (differ: {[bench_sim.diff_traces(traces[0], t) for t in traces[1:]]})"))
    if len(a.exe) > 1:
        b = a.exe[0]
        for exe in a.exe[1:]:
            print(f"{exe} / {b}: " + ", ".join(
                f"{n} {res[exe][n]['ir'] / res[b][n]['ir']:.3f}" for n in ("boot", "io", "idle", "recovery")
                if n in res[exe] and n in res[b] and res[b][n]["ir"]))
    if a.json:
        Path(a.json).write_text(json.dumps(dict(results=res, identical=same), indent=1) + "\n")


if __name__ == "__main__":
    main()
