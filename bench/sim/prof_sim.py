#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the full-system simulation's time goes, per bench/sim phase (issue 35; bench/sim/README.md
"Profile").

  python bench/sim/prof_sim.py [--exe build/soc/sim/sim_ats_prof/ats_soc_sim] [--out build/bench/sim/prof]

Runs bench_sim's four phases (boot on blank dies, 400 I/O commands, 2 M idle cycles, recovery after
a cut; host-port build) on one simulator, with `perf record` attached to the simulator process for
each phase separately, then maps every sample to a group: the Verilated source line of the sample
(the build must carry debug information: without --exe it is built here with `CPPFLAGS=-g` into
build/soc/sim/sim_ats_prof) names the RTL signals it updates, and the instance path of the first one
gives the block (command queue, write buffer, backend, remap engine, NAND scheduler, page
controllers, NAND subsystem merges and slices, die models, clock gates, firmware bridge, admin block,
the core's own wiring, the rest of the LiteX SoC); samples in VexRiscv's functions are the CPU's,
those in Verilator's trigger computation and evaluation loop, the runtime, the harness and the kernel
are named as such. Columns: the share of the phase's samples, and of it the share in Verilator's
scheduling regions (ico: input-combinational, evaluated on every eval() call; nba_sequent and
nba_comb: the clocked logic and the combinational logic after it; act: logic that feeds clock
triggers, such as the die models). Needs `perf` (perf_event_paranoid <= 2 for one's own processes).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench/sim"), str(ROOT / "sim/soc"), str(ROOT / "sw/host")]

import bench_sim  # noqa: E402

NAME = re.compile(r"(?:__PVT__)?([A-Za-z0-9_]+?__DOT__[A-Za-z0-9_]+)")
BLOCKS = [("u_nand/u_sched", "NAND scheduler"), (r"u_nand/(__Vcell\w+__)?g_chan", "page controllers (chan, BCH, subsys per channel)"),
          ("^u_nand", "NAND die models"), ("u_nand/", "NAND subsystem merges / slices"), ("u_cmdq", "command queue"),
          ("u_wbuf", "write buffer"), ("u_backend", "backend"), ("u_remap", "remap engine"),
          ("ats_fw_bridge", "firmware bridge"), ("ats_admin", "admin block"), ("ats_ssd_core", "core wiring (ports, gate inputs)")]
REGIONS = ("ico", "nba_sequent", "nba_comb", "act")


class ProfRun(bench_sim.Run):
    """bench_sim.Run with perf attached to the simulator for each phase."""

    def __init__(self, *a, out: Path, freq: int, **k):
        super().__init__(*a, **k)
        self.out, self.freq = out, freq

    def _phase(self, hp, name, fn):
        p = subprocess.Popen(["perf", "record", "-q", "-F", str(self.freq), "-p", str(hp.proc.pid),
                              "-o", str(self.out / f"{name}.data")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        super()._phase(hp, name, fn)
        p.send_signal(signal.SIGINT)
        p.wait()


def group_of(sym: str, src: str, lines) -> str:
    if "VexRiscv" in sym:
        return "VexRiscv CPU"
    if "triggers" in sym:
        return "Verilator triggers"
    if re.match(r"V\w+?_ats_soc(_nvme)?_sim_top___", sym):
        return "NAND die models"
    if "___024root" in sym or (sym.startswith("Vats_") and "::" in sym):
        return "Verilator evaluation loop"
    if sym == "main" or "Sim::" in sym:
        return "harness"
    if not (sym.startswith("Vats_") and "_ats_soc___" in sym):
        return "runtime, libc, kernel"
    f, _, n = src.rpartition(":")
    text = lines(f)
    if text is None or not n.isdigit():
        return "LiteX SoC (bus, CSRs, UART, timer)"
    for j in range(int(n) - 1, max(int(n) - 41, -1), -1):
        names = [x for x in NAME.findall(text[j]) if not x.startswith("vlSelf")] if j < len(text) else []
        if names:
            inst = re.sub(r"^__Vdly\w*?__", "", "/".join(names[0].split("__DOT__")[:-1]))
            if "u_cg_" in inst:
                return "clock gates"
            for pat, g in BLOCKS:
                if re.search(pat, inst):
                    return g
            return "LiteX SoC (bus, CSRs, UART, timer)"
    return "LiteX SoC (bus, CSRs, UART, timer)"


def table(data: Path, srcdir: Path) -> list[tuple[str, float, dict]]:
    out = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "sym,srcline", "-q",
                          "--percent-limit", "0"], capture_output=True, text=True).stdout
    cache: dict[str, list[str] | None] = {}

    def lines(f):
        if f not in cache:
            p = srcdir / f
            cache[f] = p.read_text().split("\n") if p.exists() else None
        return cache[f]
    m = collections.defaultdict(collections.Counter)
    tot = 0.0
    for ln in out.splitlines():
        r = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(\S+)\s+(\S+)", ln)
        if not r:
            continue
        pct, kind, sym, src = float(r.group(1)), r.group(2), r.group(3), r.group(4)
        tot += pct
        g = "runtime, libc, kernel" if kind == "k" else group_of(sym, src, lines)
        reg = "other" if "triggers" in sym or "___024root" in sym else next((x for x in REGIONS if x in sym), "other")
        m[g][reg] += pct
    rows = [(g, sum(c.values()) / tot * 100, {r: c[r] / tot * 100 for r in REGIONS}) for g, c in m.items()]
    return sorted(rows, key=lambda r: -r[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", help="simulator built with debug information (default: build one)")
    ap.add_argument("--out", default=str(ROOT / "build/bench/sim/prof"))
    ap.add_argument("--freq", type=int, default=999, help="perf samples per second")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.exe:
        exe = Path(a.exe)
    else:
        env = dict(os.environ, CPPFLAGS="-g")
        r = subprocess.run([sys.executable, str(ROOT / "sim/soc/build.py"), "--define", "ATS_PROF", "--no-pgo"],
                           env=env, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stdout[-3000:] + r.stderr[-3000:])
        exe = ROOT / "build/soc/sim/sim_ats_prof/ats_soc_sim"
    cfg = json.loads((ROOT / "build/soc/sim/config.json").read_text())
    run = ProfRun(exe, ROOT / "build/soc/sim/fw/firmware.init", cfg, out / "run", False, a.seed, 400,
                  out=out, freq=a.freq)
    run.go()
    for name, p in run.phases.items():
        print(f"\n== {name}: {p['cycles']:,} cycles, {p['cpu_s']} CPU s (under perf), "
              f"{p['cycles'] / p['cpu_s'] / 1e6:.3f} M cycles/CPU s")
        print(f"{'group':48s} {'share':>6s} " + " ".join(f"{r:>11s}" for r in REGIONS))
        for g, share, regs in table(out / f"{name}.data", exe.parent):
            if share >= 0.5:
                print(f"{g:48s} {share:6.1f} " + " ".join(f"{regs[r]:11.1f}" for r in REGIONS))


if __name__ == "__main__":
    main()
