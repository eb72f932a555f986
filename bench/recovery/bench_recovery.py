# SPDX-License-Identifier: Apache-2.0
"""B5: recovery time after a power cut against the device's capacity and against the active log,
next to a full-device scan, on the full-system simulation (SoC + firmware + NAND die models).

Every point: a device of the `b5_<MiB>` configuration (soc/ats_litex.py: the default device with
its blocks per die scaled, 4 KiB pages, 128 pages a block, FEMU array times) is formatted offline
(a version-2 checkpoint with a plan of 32 blocks a die, docs/persistence.md section 5), booted,
given `writes` random page writes then a random mix of 40 commands (transactions, barriers, FUA,
TRIM, FLUSH, RFLUSH), and cut. The next boot's recovery is timed by the firmware (cycles from the
start of recovery to the end of its checkpoint) and checked: every LBA the mix touched and a
sample of the written ones are read back and compared with the independent oracle and the host's
model. The full scan is timed on the same device in the same run: `scan N` reads the first N pages
of every die one at a time (the reads recovery uses); full_scan_ms = cycles per page x every page
of the device (a scan's cost is linear in the pages it reads; the whole device is out of reach of a
0.1 MHz simulation: 1 Mi page reads at 4 GiB).

Output: build/bench/recovery.json (keys per point: capacity_mib, recovery_ms, recovery_pages,
full_scan_ms, ...), build/bench/recovery.png, and a table on stdout. `--slog` adds the S-Log sweeps
on `sim_slog` (bench/recovery/slog_points.py: recovery against the active log's records and against
the live fragments the checkpoint names; keys slog_*).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests/system"), str(ROOT / "cocotb_tests/lib"), str(ROOT / "soc")]

from harness import System, build, fill  # noqa: E402
from atstb.recovery_oracle import Geometry, format_images  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from slog_points import run_slog_point, slope  # noqa: E402

PLAN_BLOCKS = 32          # blocks a die in the offline format's plan (the firmware's PLAN_TAIL)
CK_BLOCKS = 2             # die 0 blocks 0 and 1 hold checkpoints
TARGET_SPEEDUP = 30.0     # issue 13: at least 30x faster than the full scan at the largest capacity
T_R_NS = 40_000           # the die model's array read time (FEMU preset, sim/nand/README.md; array_time_div 1)


def offline_format(dest: Path, cfg: dict) -> Path:
    geo = Geometry(cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], cfg["page_bytes"],
                   cfg["spare_bytes"])
    dest.mkdir(parents=True, exist_ok=True)
    plan = []
    for d in range(geo.ndie):
        first = CK_BLOCKS if d == 0 else 0
        plan.append(list(range(first, min(first + PLAN_BLOCKS, geo.blocks))))
    format_images([dest / f"die{d}.img" for d in range(geo.ndie)], geo, plan, version=2)
    return dest


def run_point(cap: int, writes: int, scan: int, seed: int, work: Path) -> dict:
    cfg_name = f"b5_{cap}"
    _, _, cfg = build(cfg_name)
    wdir = work.resolve() / f"{cfg_name}_w{writes}"      # the simulator runs in the run directory
    tmpl = offline_format(wdir / "template", cfg)
    sysm = System(wdir / "run", seed, cfg_name=cfg_name, template=tmpl)
    sysm.boot_limit = 1_000_000_000       # 10 s simulated: a long active log takes far more than a test's boot
    t0 = time.time()
    assert sysm.start(), "first boot was cut"
    first_boot = sysm.boot_cycles
    lbas = list(range(cfg["num_lbas"]))
    rng = random.Random(seed)
    fill(sysm, writes, lbas, flush_every=max(writes, 1) + 1)
    written = sorted(sysm.model.vers)
    touched = sysm.workload(40, lbas)
    sysm.settle_inflight(400)
    st = sysm.console("status")
    m = re.search(r"next_seq (\d+)", st)
    next_seq = int(m.group(1)) if m else 0
    sysm.hp.cut_now()
    info = sysm.hp.info()
    cut_cycle = sysm.hp.cycle
    sysm.stop()
    sysm.settle_cut(info["accepted"])
    oracle = sysm.oracle()
    assert sysm.start(), "recovery boot was cut"
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace").split("atomssd firmware")[-1]
    m = re.search(r"recovery: (\d+) pages read, (\d+) cycles", boot)
    m2 = re.search(r"checkpoint (\d+) .*?seq_base (\d+), scan_from (\d+), (\d+) mappings\); (\d+) records, prefix (\d+)",
                   boot)
    assert m and m2, boot[-2000:]
    rec_pages, rec_cycles = int(m.group(1)), int(m.group(2))
    sample = set(rng.sample(written, min(64, len(written))))
    sysm.verify(touched | sample, oracle, f"B5 {cfg_name} writes {writes}")
    sc = sysm.console(f"scan {scan}", cycles=400_000_000)
    ms = re.search(r"scan: (\d+) pages \((\d+) written, (\d+) erased, (\d+) failed\), (\d+) cycles", sc)
    assert ms, sc
    sysm.stop()
    viol = len(sysm.model.violations) + len(sysm.errors)
    clk = cfg["sys_clk_hz"]
    geo_pages = cfg["ndie"] * cfg["blocks"] * cfg["pages_per_block"]
    scan_pages = geo_pages - CK_BLOCKS * cfg["pages_per_block"]
    cpp = int(ms.group(5)) / int(ms.group(1))
    full_scan_cycles = cpp * scan_pages
    res = {
        "capacity_mib": cap, "config": cfg_name, "writes": writes,
        "raw_pages": geo_pages, "blocks_per_die": cfg["blocks"], "ndie": cfg["ndie"],
        "page_bytes": cfg["page_bytes"], "pages_per_block": cfg["pages_per_block"], "lbas": cfg["num_lbas"],
        "clock_mhz": clk / 1e6,
        "log_records": int(m2.group(5)), "log_prefix": int(m2.group(6)), "next_seq_at_cut": next_seq,
        "ckpt_mappings": int(m2.group(4)),
        "recovery_cycles": rec_cycles, "recovery_ms": rec_cycles / clk * 1e3, "recovery_pages": rec_pages,
        "boot_cycles": sysm.boot_cycles, "boot_ms": sysm.boot_cycles / clk * 1e3, "first_boot_cycles": first_boot,
        "oracle_pages_read": oracle.pages_read,
        "scan_sample_pages": int(ms.group(1)), "scan_sample_written": int(ms.group(2)),
        "scan_sample_erased": int(ms.group(3)), "scan_cycles_per_page": cpp,
        "full_scan_pages": scan_pages, "full_scan_ms": full_scan_cycles / clk * 1e3,
        "speedup": full_scan_cycles / rec_cycles,
        # the physical floor of any full scan: every page's array read (tR), all dies in parallel,
        # no transfer, no ECC, no firmware (a scan that reads only spare bytes, overlapped perfectly)
        "full_scan_bound_ms": scan_pages * T_R_NS / cfg["ndie"] / 1e6,
        "speedup_vs_bound": scan_pages * T_R_NS / cfg["ndie"] / 1e6 / (rec_cycles / clk * 1e3),
        "lbas_checked": sysm.stats.lbas_checked, "oracle_checked": sysm.stats.oracle_checked,
        "violations": viol, "violation_text": (sysm.model.violations + sysm.errors)[:5],
        "cut_cycle": cut_cycle, "wall_s": round(time.time() - t0, 1),
    }
    (wdir / "point.json").write_text(json.dumps(res, indent=1))
    return res


def plot(res: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    caps = res["capacity_sweep"]
    x = [p["capacity_mib"] for p in caps]
    a.plot(x, [p["recovery_ms"] for p in caps], "o-", label="atomssd recovery (checkpoint + active log)")
    a.plot(x, [p["full_scan_ms"] for p in caps], "s--", label="full-device scan (every page)")
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("raw capacity (MiB)")
    a.set_ylabel("simulated ms @ %.0f MHz" % caps[0]["clock_mhz"])
    a.set_title("B5: recovery vs capacity (%d writes before the cut)" % caps[0]["writes"])
    a.legend(fontsize=8)
    a.grid(True, which="both", alpha=0.3)
    logs = res["log_sweep"]
    b.plot([p["log_records"] for p in logs], [p["recovery_ms"] for p in logs], "o-")
    for p in logs:
        b.annotate("%d pages" % p["recovery_pages"], (p["log_records"], p["recovery_ms"]), fontsize=7)
    b.set_xlabel("active log (records scanned)")
    b.set_ylabel("recovery, simulated ms")
    b.set_title("B5: recovery vs active log (%d MiB)" % logs[0]["capacity_mib"])
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--caps", default="256,512,1024,2048,4096", help="raw capacities (MiB)")
    ap.add_argument("--writes", type=int, default=256, help="page writes before the cut (capacity sweep)")
    ap.add_argument("--log-writes", default="0,64,512,1024", help="page writes of the active-log sweep")
    ap.add_argument("--log-cap", type=int, default=256, help="capacity of the active-log sweep (MiB)")
    ap.add_argument("--scan", type=int, default=16, help="pages a die of the timed full-scan sample")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true",
                    help="take a point's result from an earlier run (build/bench/recovery/<config>_w<writes>/point.json)")
    ap.add_argument("--slog", action="store_true",
                    help="also the S-Log sweeps on sim_slog (bench/recovery/slog_points.py; keys slog_*)")
    ap.add_argument("--slog-active", default="0,16,64,128",
                    help="S-Log records in the active log (sweep a; the firmware keeps at most SLOG_PG = 256 log pages)")
    ap.add_argument("--slog-ckpt", default="0,64,128,256", help="live fragments the checkpoint names (sweep b)")
    ap.add_argument("--slog-ckpt-active", type=int, default=16, help="active-log records of sweep b")
    ap.add_argument("--json", default=str(ROOT / "build/bench/recovery.json"))
    ap.add_argument("--plot", default=str(ROOT / "build/bench/recovery.png"))
    a = ap.parse_args()
    caps = [int(x) for x in a.caps.split(",")] if a.caps not in ("", "none") else []
    logw = [int(x) for x in a.log_writes.split(",")] if a.log_writes not in ("", "none") else []
    for c in sorted(set(caps + ([a.log_cap] if logw else []))):
        build(f"b5_{c}")                      # serially: each build uses every core
    if a.slog:
        build("sim_slog")
    work = ROOT / "build/bench/recovery"
    points = [(c, a.writes) for c in caps] + [(a.log_cap, w) for w in logw if (a.log_cap, w) not in
                                               [(c, a.writes) for c in caps]]
    t0 = time.time()
    done = {}
    if a.reuse:
        for p in points:
            f = work / f"b5_{p[0]}_w{p[1]}" / "point.json"
            if f.exists():
                done[p] = json.loads(f.read_text())
    sl_points = ([("log", n, 0) for n in [int(x) for x in a.slog_active.split(",")]] +
                 [("ckpt", a.slog_ckpt_active, m) for m in [int(x) for x in a.slog_ckpt.split(",")]]) if a.slog else []
    with ProcessPoolExecutor(a.jobs) as ex:
        futs = {p: ex.submit(run_point, p[0], p[1], a.scan, a.seed, work) for p in points if p not in done}
        sfuts = {p: ex.submit(run_slog_point, p[0], p[1], p[2], a.seed, work) for p in sl_points}
        done.update({p: f.result() for p, f in futs.items()})
        sdone = {p: f.result() for p, f in sfuts.items()}
    cap_sweep = [done[(c, a.writes)] for c in caps]
    log_sweep = sorted([done[(a.log_cap, w)] for w in logw], key=lambda p: p["writes"])
    rec = [p["recovery_ms"] for p in cap_sweep]
    flat = max(rec) / min(rec) if rec else 0.0
    big = cap_sweep[-1] if cap_sweep else (log_sweep[-1] if log_sweep else None)
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    res = {
        "benchmark": "B5 recovery time", "commit": commit, "command": "make bench-recovery",
        "capacity_sweep": cap_sweep, "log_sweep": log_sweep,
        "flatness_max_over_min": flat,
        "speedup_at_largest": big["speedup"] if big else None, "target_speedup": TARGET_SPEEDUP,
        "speedup_met": bool(big) and big["speedup"] >= TARGET_SPEEDUP,
        "violations": sum(p["violations"] for p in list(done.values()) + list(sdone.values())),
        "wall_s": round(time.time() - t0, 1),
    }
    if a.slog:
        sa = sorted([p for k, p in sdone.items() if k[0] == "log"], key=lambda p: p["active_records"])
        sb = sorted([p for k, p in sdone.items() if k[0] == "ckpt"], key=lambda p: p["ckpt_fragments"])
        res.update({
            "slog_config": "sim_slog", "slog_log_sweep": sa, "slog_ckpt_sweep": sb,
            # cycles per S-Log record (= one log page here) of the active log, least squares
            "slog_cycles_per_active_record": slope([p for p in sa if not p["violations"]], "active_records"),
            # cycles per live fragment the checkpoint names (its log page not in the active log):
            # reading the checkpoint's S-Log section, SLOAD and the recovery's checkpoint of the index
            "slog_cycles_per_ckpt_fragment": slope([p for p in sb if not p["violations"]], "ckpt_fragments"),
            "slog_recovery_pages_ckpt_sweep": [p["recovery_pages"] for p in sb],
        })
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(res, indent=1))
    if cap_sweep and log_sweep:
        plot(res, Path(a.plot))
    print("B5 recovery (commit %s, %d writes + 40 mixed commands before the cut, %.0f MHz)" %
          (commit, a.writes, big["clock_mhz"] if big else 100))
    print("%9s %6s %8s %7s %11s %9s %11s %12s %9s %12s %8s %5s" % (
        "capacity", "writes", "log rec", "rec pg", "recovery ms", "boot ms", "scan cyc/pg", "full scan ms", "speedup",
        "scan floor ms", "vs floor", "viol"))
    for p in cap_sweep + log_sweep:
        print("%6d MiB %6d %8d %7d %11.2f %9.2f %11.0f %12.1f %8.0fx %12.1f %7.1fx %5d" % (
            p["capacity_mib"], p["writes"], p["log_records"], p["recovery_pages"], p["recovery_ms"], p["boot_ms"],
            p["scan_cycles_per_page"], p["full_scan_ms"], p["speedup"], p["full_scan_bound_ms"],
            p["speedup_vs_bound"], p["violations"]))
    if big:
        print("recovery over capacities: max/min %.3f (flat = 1); at %d MiB %.0fx faster than the full scan "
              "(target >= %.0fx: %s); %.1fx faster than the floor of any full scan (every page's tR %d us, "
              "%d dies in parallel)" % (flat, big["capacity_mib"], big["speedup"], TARGET_SPEEDUP,
                                         "met" if res["speedup_met"] else "MISSED", big["speedup_vs_bound"],
                                         T_R_NS // 1000, big["ndie"]))
    if a.slog:
        print("B5 with the S-Log (sim_slog: 2 x 2 dies, 2,048 pages of 512 bytes, tR %.0f us, 100 MHz; "
              "full-scan floor %.0f us = every page's tR, 4 dies in parallel)" %
              (sdone[sl_points[0]]["t_r_ns"] / 1000, sdone[sl_points[0]]["full_scan_bound_us"]))
        print("%6s %13s %13s %10s %8s %14s %11s %9s %5s" % ("sweep", "active recs", "ckpt frags", "ckpt pgs",
                                                            "rec pg", "recovery cyc", "recovery us",
                                                            "SLOAD pg", "viol"))
        for p in res["slog_log_sweep"] + res["slog_ckpt_sweep"]:
            print("%6s %13d %13d %10d %8d %14d %11.1f %9d %5d" % (
                p["kind"], p["active_records"], p["ckpt_fragments"], p["ckpt_log_pages"], p["recovery_pages"],
                p["recovery_cycles"], p["recovery_us"], p["sload_log_pages"], p["violations"]))
            if p["violations"]:
                print("   " + p["violation_text"][:600].replace("\n", "\n   "))
        print("per active-log record: %.0f cycles; per live fragment named by the checkpoint: %.0f cycles "
              "(recovery pages of sweep b: %s)" % (res["slog_cycles_per_active_record"],
                                                   res["slog_cycles_per_ckpt_fragment"],
                                                   res["slog_recovery_pages_ckpt_sweep"]))
    print("violations: %d; json %s, plot %s" % (res["violations"], a.json, a.plot))
    return 1 if res["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
