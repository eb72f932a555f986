# SPDX-License-Identifier: Apache-2.0
"""Group commit as a **model, not measured** (README "Group commit: what it would buy"): how many log
pages B4's records would take if records were packed back to back (docs/persistence.md §10.1 allows
it; the firmware's and the oracle's readers already read packed records) under a close-on-idle policy,
and what that costs in commit latency.

Inputs: the workload exactly as bench_difftx.py makes it (its shape, seed, transaction count), its
records from the S-Log model (slog_model.slog_nand: the fragments and full pages of each device
transaction, the fallbacks to full pages), and each record's arrival at the backend, taken as its
transaction's last data command's completion cycle in a diag_difftx.py `--only commit` trace of the
same workload (`data_done`: the commit is pending in the write buffer once its data are in).

Policy T (cycles): records are written to the log stream in arrival order; a record's last, partly
filled page stays open while another record arrives within T cycles of the page's latest record, and is
closed (programmed) then, or T cycles after that record, or when a record fills it. T = 0 is this
version's writer (every record's last page programmed with it: the measured device). A record's
**added latency** is its last page's close time minus its arrival. First order: the added latency would
delay the host's later submissions at qd 8 (the trace's arrivals would move), which the model ignores.

`python bench/difftx/group_commit_model.py --diag bench/difftx/diag_b4_<commit>_tpcc.json`
prints the table and writes --out (JSON).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from difftx_workloads import PAGE_BYTES, SHAPES, gen_workload, split_for_device  # noqa: E402
from slog_model import slog_nand  # noqa: E402
from atstb.slog_ref import LogWriter  # noqa: E402  (slog_model put cocotb_tests/lib on the path)

INF = float("inf")


def pack(records: list, arrivals: list[float], T: float) -> dict:
    """records: (fulls, frags) in arrival order; arrivals: their cycles (non-decreasing). Returns the
    log pages programmed and each record's added latency (its last page's close minus its arrival)."""
    w = LogWriter(PAGE_BYTES, pack=True)
    P = w.P
    closed: dict[int, float] = {}           # page index -> close cycle
    last_t = None                           # the open page's latest record's arrival
    ends = []
    for (fulls, frags), a in zip(records, arrivals):
        if last_t is not None and len(w.stream) % P and a > last_t + T:
            closed[len(w.stream) // P] = last_t + T
            w.close_page()
        w.add(1, [(l, 0) for l in fulls], frags)
        for pg in range(len(w.stream) // P):
            closed.setdefault(pg, a)        # pages this record filled close at its arrival
        ends.append(len(w.stream))
        last_t = a if len(w.stream) % P else None
    if last_t is not None:
        closed[len(w.stream) // P] = last_t + T if T != INF else last_t
        w.close_page()
    lat = [closed[(e - 1) // P] - a for e, a in zip(ends, arrivals)]
    return {"log_pages": len(w.stream) // P, "added_mean": sum(lat) / len(lat), "added_max": max(lat)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--diag", required=True, help="a diag_difftx.py --only commit JSON of the workload")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--entries", type=int, default=64, help="the device's tx_entries (bench: 64)")
    ap.add_argument("--frag-slots", type=int, default=32)
    ap.add_argument("--lpns", type=int, default=1024)
    ap.add_argument("--policies", default="0,5000,10000,20000,50000,100000,200000,inf")
    ap.add_argument("--out", default=str(HERE.parents[1] / "build" / "bench" / "difftx_group_commit.json"))
    a = ap.parse_args()
    d = json.loads(Path(a.diag).read_text())
    name, txs = d["args"]["workload"], d["args"]["txs"]
    run = next(r for r in d["runs"] if r["mode"] == "shadow_diffwrite")
    parts = {(p["tx"], p["part"]): p for p in run["trace"]["parts"]}
    shape = SHAPES[name]
    wl = gen_workload(shape, txs, a.seed, 1.0, meta_base=0, data_base=shape.meta_pool)
    recs: list = []
    m = slog_nand(wl, split_for_device, a.entries, PAGE_BYTES, frag_slots=a.frag_slots, txfull=64, lpns=a.lpns,
                  records=recs)
    order = sorted(recs, key=lambda r: (parts[(r[0], r[1])]["data_done"], r[0], r[1]))
    arrivals = [parts[(r[0], r[1])]["data_done"] for r in order]
    gaps = sorted(b - x for x, b in zip(arrivals, arrivals[1:]))
    lat = [p["commit_done"] - p["data_done"] for p in parts.values()]
    base = {"workload": name, "txs": txs, "diag": a.diag, "records": len(order), "full_pages_model": m["full_pages"],
            "full_pages_measured_qd": run["total"]["host_pages"],
            "log_pages_measured_qd": run["total"]["nand_programs"] - run["total"]["host_pages"] - run["total"]["ckpt_pages"],
            "app_bytes": m["app_bytes"], "arrival_gap_median": gaps[len(gaps) // 2] if gaps else None,
            "arrival_gap_min": gaps[0] if gaps else None,
            "commit_tail_mean_measured": sum(lat) / len(lat), "policies": []}
    print(f"{name}: {len(order)} records, arrival gaps median {base['arrival_gap_median']} min {base['arrival_gap_min']} "
          f"cycles; measured commit tail (commit done - data done) mean {base['commit_tail_mean_measured']:.0f}")
    print(f"measured at qd {d['args']['qd']}: {base['full_pages_measured_qd']} host pages, "
          f"{base['log_pages_measured_qd']} log pages (the model's T = 0 must give the same log pages)")
    print(f"{'T (cycles)':>11} {'log pages':>9} {'WA model':>8} {'WA qd':>6} {'+lat mean':>9} {'+lat max':>9}")
    for t in a.policies.split(","):
        T = INF if t == "inf" else float(t)
        r = pack([(f, g) for _, _, f, g in order], arrivals, T)
        wa = (m["full_pages"] + r["log_pages"]) * PAGE_BYTES / m["app_bytes"]
        waq = (base["full_pages_measured_qd"] + r["log_pages"]) * PAGE_BYTES / m["app_bytes"]
        base["policies"].append({"T": t, **r, "wa_model": wa, "wa_measured_full_pages": waq})
        print(f"{t:>11} {r['log_pages']:>9} {wa:>8.3f} {waq:>6.3f} "
              f"{r['added_mean']:>9.0f} {r['added_max']:>9.0f}")
    t0 = next((p for p in base["policies"] if p["T"] == "0"), None)
    if t0 is not None:
        base["t0_matches_measured"] = t0["log_pages"] == base["log_pages_measured_qd"]
        print("T = 0 against the measured log pages:", "the same" if base["t0_matches_measured"] else "DIFFERENT")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(base, indent=1) + "\n")


if __name__ == "__main__":
    main()
