#!/usr/bin/env python3
"""Benchmark B7 / `make bench-nand`: NAND bandwidth vs channels x ways.

Builds bench/nand/ats_nand_bench_top.sv (the real ats_nand_sched, 8 ats_nand_chan, 32 ats_nand_die
models) once per preset with Verilator (plain C++ main, no tracing; cached under
build/bench/nand/obj_<preset>/), runs it per (channels, ways) with plusargs selecting the dies the
traffic uses, and reads the bandwidth the C++ main measured in simulated time. Prints each figure
next to its physical limit and writes build/bench/nand.json and build/bench/nand.png.

Limits (4096 user bytes per page; the bus moves page + spare = 4320 bytes; per-page command and
address cycles are overhead, not part of the limit):
  bus   = channels x bus byte rate x 4096 / 4320              (SDR: one byte per T_WP + T_WH cycles)
  dies  = dies x 4096 / (t_array + t_xfer)                    (a die without cache commands cannot
                                                               transfer a page while it reads or
                                                               programs one: t_xfer = 4320 byte cycles)
  limit = min(bus, dies); `limit_nominal_mbps` also gives the issue's min(bus, dies x 4096 / t_array).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# array times of the design brief (read / program / erase, ns); same values as atstb.nand_model.PRESETS
PRESETS = {
    "femu":     dict(T_R_NS=40_000, T_PROG_NS=200_000, T_BERS_NS=2_000_000),
    "nvmevirt": dict(T_R_NS=36_000, T_PROG_NS=185_000, T_BERS_NS=2_000_000),
    "mqsim":    dict(T_R_NS=75_000, T_PROG_NS=750_000, T_BERS_NS=3_800_000),
    "difftx":   dict(T_R_NS=25_000, T_PROG_NS=200_000, T_BERS_NS=1_500_000),
}
OPS = ("seq_read", "rand_read", "seq_program", "rand_program")
RUN_ORDER = ("seq_program", "seq_read", "rand_program", "rand_read")   # reads need programmed pages

CLK_NS = 10.0          # bench clock: 100 MHz
PAGE_BYTES = 4096
SPARE_BYTES = 224
# channel pin timings in cycles (the top's C_* defaults), ONFI SDR timing mode 5 at 100 MHz
CHAN_T = dict(C_WP=1, C_WH=1, C_RP=1, C_REH=1, C_WB=10, C_WHR=6, C_ADL=7, C_RR=2, C_RHW=10, C_CS=1)

sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb.filelist import block_sources  # noqa: E402
SOURCES = block_sources(HERE / "ats_nand_bench_top.f")     # the bench top's list (lint reads it too)
CPP = [ROOT / "sim/nand/ats_nand_store.cpp", HERE / "bench_nand_main.cpp"]
DEPS = SOURCES + CPP + [ROOT / "sim/nand/ats_nand_store.h"]


def verilator() -> str:
    v = ROOT / ".venv" / "bin" / "verilator"
    return str(v) if v.exists() else "verilator"


def build(preset: str, chan_src: Path | None) -> Path:
    """Verilate and compile once per preset (and channel source); reused while no source changed."""
    sources = list(SOURCES)
    tag = ""
    if chan_src is not None:   # experiment: a modified copy of the channel controller
        sources = [chan_src if s.name == "ats_nand_chan.sv" else s for s in sources]
        tag = "_" + chan_src.stem
    obj = ROOT / "build" / "bench" / "nand" / f"obj_{preset}{tag}"
    exe = obj / "bench_nand"
    deps = DEPS + ([chan_src] if chan_src is not None else [])
    if exe.exists() and all(exe.stat().st_mtime > p.stat().st_mtime for p in deps):
        return exe
    obj.mkdir(parents=True, exist_ok=True)
    g = [f"-G{k}={v}" for k, v in PRESETS[preset].items()]
    cmd = [verilator(), "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast",
           "--x-initial", "fast", "-MAKEFLAGS", "OPT_FAST=-O2", "-Mdir", str(obj),
           "--top-module", "ats_nand_bench_top", "-o", "bench_nand",
           # the die model is a behavioural simulation model (lint-clean on its own .f list);
           # warnings of the other sources are checked by `verilator --lint-only -Wall` (README)
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "-CFLAGS", f"-I{ROOT / 'sim/nand'}", *g,
           *map(str, sources), *map(str, CPP)]
    print(f"[bench-nand] building {preset} (Verilator, about 2-5 minutes) -> {obj}", flush=True)
    t0 = time.time()
    r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or not exe.exists():
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit(f"[bench-nand] build failed ({preset})")
    print(f"[bench-nand] built in {time.time() - t0:.0f} s", flush=True)
    return exe


def limits(preset: str, chans: int, ways: int, op: str) -> tuple[float, float]:
    """(physical limit, nominal limit) in MB/s (1e6 bytes/s of 4096-byte pages)."""
    byte_ns = (CHAN_T["C_WP"] + CHAN_T["C_WH"]) * CLK_NS            # read: C_RP + C_REH, the same here
    bus = chans * (1e3 / byte_ns) * PAGE_BYTES / (PAGE_BYTES + SPARE_BYTES)
    xfer_ns = (PAGE_BYTES + SPARE_BYTES) * byte_ns
    t_arr = PRESETS[preset]["T_R_NS" if op.endswith("read") else "T_PROG_NS"]
    dies = chans * ways
    phys = min(bus, dies * PAGE_BYTES / (t_arr + xfer_ns) * 1e3)
    nominal = min(bus, dies * PAGE_BYTES / t_arr * 1e3)
    return phys, nominal


RESULT = re.compile(r"RESULT chan=(\d+) ways=(\d+) op=(\w+) pages=(\d+) t0_ps=(\d+) t1_ps=(\d+) "
                    r"mbps=([0-9.]+) cycles=(\d+)")
DONE = re.compile(r"DONE .* sim_us=([0-9.]+) cycles=(\d+) wall_s=([0-9.]+)")


def run_one(exe: Path, chans: int, ways: int, ops: list[str], args) -> tuple[dict, dict]:
    cmd = [str(exe), f"+chan={chans}", f"+ways={ways}", f"+ops={','.join(ops)}", f"+warm={args.warm}",
           f"+meas={args.meas}", f"+min_meas={args.min_meas}", f"+qdepth={args.qdepth}",
           f"+seed={args.seed}", f"+die_clk_div={args.die_clk_div}"]
    r = subprocess.run(cmd, cwd=exe.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = r.stdout
    res = {}
    for m in RESULT.finditer(out):
        res[m.group(3)] = dict(mbps=float(m.group(7)), pages=int(m.group(4)), t0_ps=int(m.group(5)),
                               t1_ps=int(m.group(6)), cycles=int(m.group(8)))
    done = DONE.search(out)
    if r.returncode != 0 or not done or set(res) != set(ops):
        sys.stdout.write(out[-4000:])
        raise SystemExit(f"[bench-nand] FAILED: {chans} channels x {ways} ways (exit {r.returncode}): "
                         "see the output above (the bench fails on wrong data, a die protocol "
                         "violation, a bad status or a hang)")
    return res, dict(sim_us=float(done.group(1)), cycles=int(done.group(2)), wall_s=float(done.group(3)))


def selftest(exe: Path) -> None:
    """The checks must trip: a read of a never-programmed page (wrong data) and an out-of-order
    program (die violation) each make the bench fail."""
    cases = [(1, "seq_program,seq_read", re.compile(r"wrong read bytes [1-9]")),
             (2, "seq_program", re.compile(r"die violations [1-9]"))]
    for n, ops, want in cases:
        r = subprocess.run([str(exe), "+chan=1", "+ways=2", f"+ops={ops}", "+warm=1", "+meas=2",
                            "+min_meas=4", f"+selftest={n}"], cwd=exe.parent, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        failed = [ln for ln in r.stdout.splitlines() if "BENCH FAILED" in ln]
        if r.returncode == 0 or not failed or not want.search(failed[0]):
            sys.stdout.write(r.stdout[-3000:])
            raise SystemExit(f"[bench-nand] selftest {n}: the bench did not catch the fault")
        print(f"[bench-nand] selftest {n} caught as expected: {failed[0]}")


def plot(data: dict, path: Path, preset: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.5), sharey=False)
    cfgs = data["config"]
    ways_set = sorted({c["ways"] for c in cfgs})
    for ax, op in zip(axes, OPS):
        for w in ways_set:
            pts = sorted((c["channels"], m, lim) for c, m, lim in zip(cfgs, data["mbps"], data["limit_mbps"])
                         if c["op"] == op and c["ways"] == w)
            if not pts:
                continue
            xs = [p[0] for p in pts]
            line, = ax.plot(xs, [p[1] for p in pts], "o-", label=f"{w} way(s)")
            ax.plot(xs, [p[2] for p in pts], "--", color=line.get_color(), alpha=0.6)
        ax.set_title(op)
        ax.set_xlabel("channels")
        ax.set_xscale("log", base=2)
        ax.set_ylabel("MB/s (4096-byte pages)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"B7 NAND bandwidth, preset {preset}, SDR 50 MT/s per channel (dashed: limit)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="femu", choices=sorted(PRESETS))
    ap.add_argument("--channels", default="1,2,4,8")
    ap.add_argument("--ways", default="1,2,4")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--warm", type=int, default=2, help="warm-up pages per active die (not measured)")
    ap.add_argument("--meas", type=int, default=6, help="measured pages per active die")
    ap.add_argument("--min-meas", type=int, default=16, help="at least this many measured pages")
    ap.add_argument("--qdepth", type=int, default=4, help="requests outstanding per active die")
    ap.add_argument("--die-clk-div", type=int, default=1,
                    help="die timer clock = 100 MHz / N (R/B# resolution N x 10 ns; 1 = exact)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--selftest", action="store_true",
                    help="only check that injected faults (unwritten read, out-of-order program) fail")
    ap.add_argument("--jobs", type=int, default=1, help="simulations in parallel")
    ap.add_argument("--chan-src", type=Path, default=None,
                    help="experiment: build with this copy of ats_nand_chan.sv instead of rtl/nand/")
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "nand.json"))
    ap.add_argument("--plot", default=str(ROOT / "build" / "bench" / "nand.png"))
    args = ap.parse_args()

    chans = [int(x) for x in args.channels.split(",")]
    ways = [int(x) for x in args.ways.split(",")]
    ops = [o for o in args.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            raise SystemExit(f"unknown op {o}")
    if any(not 1 <= c <= 8 for c in chans) or any(not 1 <= w <= 4 for w in ways):
        raise SystemExit("channels 1..8, ways 1..4")
    run_ops = [o for o in RUN_ORDER if o in ops]

    exe = build(args.preset, args.chan_src)
    if args.selftest:
        selftest(exe)
        return 0
    t_start = time.time()
    jobs = [(c, w) for c in chans for w in ways]
    results: dict[tuple[int, int], tuple[dict, dict]] = {}
    if args.jobs <= 1:
        for c, w in jobs:
            results[(c, w)] = run_one(exe, c, w, run_ops, args)
            print(f"[bench-nand] {c} ch x {w} ways: {results[(c, w)][1]['wall_s']:.1f} s", flush=True)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(args.jobs) as pool:
            futs = {cw: pool.submit(run_one, exe, cw[0], cw[1], run_ops, args) for cw in jobs}
            for cw, f in futs.items():
                results[cw] = f.result()

    p = PRESETS[args.preset]
    byte_ns = (CHAN_T["C_WP"] + CHAN_T["C_WH"]) * CLK_NS
    print(f"\nB7 NAND bandwidth, preset {args.preset}: tR {p['T_R_NS'] / 1e3:g} us, tPROG "
          f"{p['T_PROG_NS'] / 1e3:g} us; pages {PAGE_BYTES} + {SPARE_BYTES} B; ONFI SDR bus, one byte per "
          f"{byte_ns:g} ns = {1e3 / byte_ns:g} MT/s per channel (the brief's 200 MT/s is NV-DDR2, which "
          f"the channel does not implement); user-data bus limit "
          f"{1e3 / byte_ns * PAGE_BYTES / (PAGE_BYTES + SPARE_BYTES):.2f} MB/s per channel")
    print("limit = min(channels x bus x 4096/4320, dies x 4096/(t_array + t_xfer)); "
          "nominal = min(bus, dies x 4096/t_array)\n")
    hdr = f"{'chan':>4} {'ways':>4} {'op':<13} {'MB/s':>9} {'limit':>9} {'%':>6} {'nominal':>9} {'%nom':>6}"
    print(hdr)
    print("-" * len(hdr))
    data = {"config": [], "mbps": [], "limit_mbps": [], "limit_nominal_mbps": [], "percent": [],
            "pages": [], "window_us": []}
    for c, w in jobs:
        res, _ = results[(c, w)]
        for op in OPS:
            if op not in res:
                continue
            lim, nom = limits(args.preset, c, w, op)
            m = res[op]["mbps"]
            print(f"{c:>4} {w:>4} {op:<13} {m:9.2f} {lim:9.2f} {100 * m / lim:5.1f}% {nom:9.2f} "
                  f"{100 * m / nom:5.1f}%")
            data["config"].append({"channels": c, "ways": w, "op": op})
            data["mbps"].append(round(m, 3))
            data["limit_mbps"].append(round(lim, 3))
            data["limit_nominal_mbps"].append(round(nom, 3))
            data["percent"].append(round(100 * m / lim, 2))
            data["pages"].append(res[op]["pages"])
            data["window_us"].append(round((res[op]["t1_ps"] - res[op]["t0_ps"]) / 1e6, 3))
    data["preset"] = args.preset
    data["array_ns"] = PRESETS[args.preset]
    data["bus"] = {"interface": "ONFI SDR (timing mode 5 minimums)", "clk_mhz": 1e3 / CLK_NS,
                   "byte_ns": byte_ns, "mts": 1e3 / byte_ns, "channel_cycles": CHAN_T}
    data["page_bytes"] = PAGE_BYTES
    data["spare_bytes"] = SPARE_BYTES
    data["method"] = {"warm_pages_per_die": args.warm, "meas_pages_per_die": args.meas,
                      "min_meas_pages": args.min_meas, "outstanding_per_die": args.qdepth,
                      "die_clk_div": args.die_clk_div, "seed": args.seed,
                      "sim_wall_s": round(sum(r[1]["wall_s"] for r in results.values()), 1),
                      "sim_cycles": sum(r[1]["cycles"] for r in results.values())}
    four = [pc for cfg, pc in zip(data["config"], data["percent"]) if cfg["ways"] == 4]
    if four:
        print(f"\n4 ways per channel: {min(four):.1f}% .. {max(four):.1f}% of the limit (target >= 90%)")
    jp = Path(args.json)
    jp.parent.mkdir(parents=True, exist_ok=True)
    jp.write_text(json.dumps(data, indent=1) + "\n")
    plot(data, Path(args.plot), args.preset)
    print(f"[bench-nand] wrote {jp} and {args.plot} ({time.time() - t_start:.0f} s of simulation, "
          f"{data['method']['sim_cycles'] / 1e6:.1f} M cycles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
