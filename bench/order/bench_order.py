#!/usr/bin/env python3
"""Benchmark B2 (`make bench-order`): 4 KiB random writes in four ordering modes on the command queue
+ write buffer (bench/ssd/ats_ssd_bench_top.sv) with the behavioural media; IOPS and mean queue depth.

Modes (Barrier-enabled IO stack, ACM ToS 2018, Fig. 11): orderless (P), barrier (B: every write
BARRIER + ORDERED, dispatched back to back), wait_on_transfer (X: queue depth 1), transfer_and_flush
(XnF: write, FLUSH, next). IOPS from simulated time (cycles x clock period) over a steady-state
window; mean queue depth = time average of the command queue occupancy over the same window.
Writes build/bench/order.json and build/bench/order.png; prints the table.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "ssd"))
import run_bench  # noqa: E402

MODES = ["orderless", "barrier", "wait_on_transfer", "transfer_and_flush"]
LABEL = {"orderless": "orderless (P)", "barrier": "barrier (B)", "wait_on_transfer": "wait-on-transfer (X)",
         "transfer_and_flush": "transfer-and-flush (XnF)"}
# the paper's anchors (Fig. 11, section 6.1), as a fraction of orderless IOPS
PAPER = {"orderless": "1", "barrier": "0.80-0.90", "wait_on_transfer": "< 0.40",
         "transfer_and_flush": "0.005-0.35"}
DEVICE = {"DEPTH": 32, "NUM_SLOTS": 64, "NUM_LBAS": 16384, "PAGE_BYTES": 4096, "THRESH_PCT": 90}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="orderless=1000,barrier=1000,wait_on_transfer=400,transfer_and_flush=50",
                    help="writes per mode (mode=n,...)")
    ap.add_argument("--warmup", default="orderless=200,barrier=200,wait_on_transfer=20,transfer_and_flush=5",
                    help="writes completed before the measurement window opens (mode=n,...)")
    ap.add_argument("--qd", type=int, default=32, help="host queue depth of orderless/barrier")
    ap.add_argument("--chan", type=int, default=8)
    ap.add_argument("--ways", type=int, default=4)
    ap.add_argument("--preset", default="femu")
    ap.add_argument("--clk-ns", type=float, default=8.0)
    ap.add_argument("--t-submit-us", type=float, default=2.0)
    ap.add_argument("--t-complete-us", type=float, default=6.0)
    ap.add_argument("--window", type=int, default=None, help="media request window (default one per die)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "order.json"))
    ap.add_argument("--plot", default=str(ROOT / "build" / "bench" / "order.png"))
    a = ap.parse_args()
    ops = {k: int(v) for k, v in (x.split("=") for x in a.ops.split(","))}
    warm = {k: int(v) for k, v in (x.split("=") for x in a.warmup.split(","))}

    t = time.time()
    bd = run_bench.build("ssd_bench", DEVICE)
    runs = []
    for m in MODES:
        runs.append((f"order_{m}", {"workload": "order", "mode": m, "n_ops": ops[m], "warmup": warm[m],
                                    "qd": a.qd, "num_chan": a.chan, "ways": a.ways, "preset": a.preset,
                                    "clk_ns": a.clk_ns, "t_submit_us": a.t_submit_us,
                                    "t_complete_us": a.t_complete_us, "seed": a.seed, "window": a.window,
                                    "lba_space": DEVICE["NUM_LBAS"]}))
    res = run_bench.run_many(bd, runs, jobs=a.jobs)
    r = {m: res[f"order_{m}"] for m in MODES}

    dev = r["orderless"]["device"]
    base = r["orderless"]["iops"]
    print()
    print(f"B2: 4 KiB random writes; ats_cmdq (DEPTH {dev['depth']}) -> ats_wbuf ({dev['num_slots']} slots, "
          f"{dev['page_bytes']} B pages), clock {1000 / dev['clk_ns']:.0f} MHz; media {dev['preset']} "
          f"(tR {dev['t_read_us']:.0f} / tPROG {dev['t_prog_us']:.0f} us, bus {dev['t_xfer_us']:.1f} us/page), "
          f"{dev['num_chan']} channels x {dev['ways']} ways, window {dev['media_window']}; host submit {a.t_submit_us} us, "
          f"completion {a.t_complete_us} us")
    hdr = f"{'mode':26s} {'ops':>5s} {'IOPS':>9s} {'/orderless':>10s} {'paper':>11s} {'mean QD':>8s} " \
          f"{'host QD':>8s} {'lat us':>8s} {'sim ms':>7s} {'cpu s':>6s}"
    print(hdr)
    print("-" * len(hdr))
    for m in MODES:
        x = r[m]
        print(f"{LABEL[m]:26s} {x['n_ops']:5d} {x['iops']:9.0f} {x['iops'] / base:10.3f} {PAPER[m]:>11s} "
              f"{x['mean_qd']:8.2f} {x['mean_outstanding']:8.2f} {x['lat_mean_us']:8.1f} "
              f"{x['sim_us'] / 1000:7.2f} {x.get('cpu_s', 0):6.0f}")
    ratio = r["barrier"]["iops"] / base
    print(f"barrier / orderless = {ratio:.3f} (target >= 0.90; paper 0.80-0.90)   "
          f"[{'OK' if ratio >= 0.9 else 'BELOW TARGET'}]")
    print(f"wall {time.time() - t:.0f} s, cpu {sum(r[m].get('cpu_s', 0) for m in MODES):.0f} s")

    out = {"iops": {m: r[m]["iops"] for m in MODES}, "mean_qd": {m: r[m]["mean_qd"] for m in MODES},
           "ratio_to_orderless": {m: r[m]["iops"] / base for m in MODES},
           "barrier_over_orderless": ratio,
           "host_mean_outstanding": {m: r[m]["mean_outstanding"] for m in MODES},
           "max_qd": {m: r[m]["max_qd"] for m in MODES},
           "lat_mean_us": {m: r[m]["lat_mean_us"] for m in MODES},
           "n_ops": {m: r[m]["n_ops"] for m in MODES}, "warmup": {m: r[m]["warmup"] for m in MODES},
           "nand_bytes": {m: r[m]["counters"]["nand_bytes"] for m in MODES},
           "paper": PAPER, "device": dev,
           "host": {"t_submit_us": a.t_submit_us, "t_complete_us": a.t_complete_us, "qd": a.qd},
           "verify": {m: r[m]["verify"] for m in MODES},
           "cpu_s": {m: r[m].get("cpu_s") for m in MODES},
           "media": {m: r[m].get("media") for m in MODES}}
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(out, indent=1))
    plot(out, Path(a.plot))
    print(f"wrote {a.json} and {a.plot}")
    return 0


def plot(out: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    names = ["P", "B", "X", "XnF"]
    iops = [out["iops"][m] / 1000 for m in MODES]
    bars = ax1.bar(names, iops, color=["grey", "tab:green", "tab:orange", "tab:red"])
    for b_, m in zip(bars, MODES):
        ax1.text(b_.get_x() + b_.get_width() / 2, b_.get_height(), f"{out['ratio_to_orderless'][m]:.2f}",
                 ha="center", va="bottom", fontsize=8)
    ax1.set_ylabel("kIOPS (4 KiB random write)")
    ax1.set_title("B2: IOPS (label: fraction of orderless)")
    ax2.bar(names, [out["mean_qd"][m] for m in MODES], color="tab:blue")
    ax2.set_ylabel("mean command queue occupancy")
    ax2.set_title("B2: mean queue depth")
    d = out["device"]
    fig.suptitle(f"cmdq+wbuf, {d['num_slots']} slots, {d['preset']} {d['num_chan']}ch x {d['ways']}w, "
                 f"{1000 / d['clk_ns']:.0f} MHz", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
