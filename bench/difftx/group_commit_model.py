# SPDX-License-Identifier: Apache-2.0
"""Group commit as a **model, not measured** (README "Group commit: what it would buy"): how many log
pages B4's records would take if records were packed back to back (docs/persistence.md §10.1 allows
it; the firmware's and the oracle's readers already read packed records), and what that does to the
commit latency, under two writers.

Inputs: the workload exactly as bench_difftx.py makes it (its shape, seed, transaction count), its
records from the S-Log model (slog_model.slog_nand: the fragments and full pages of each device
transaction, the fallbacks to full pages), and, from a diag_difftx.py `--only commit` trace of the
same workload on the device (qd 8), each record's **arrival** (its transaction's last data command's
completion, `data_done`: the commit is pending in the write buffer once its data are in) and its
**completion** (`commit_done`), both as the host saw them (the cycle of the completion's MSI).

**Batch writer** (`batch`): today each S-Log record waits for the completion of every earlier commit
(docs/architecture.md §11.4's wait), so records queue. From the trace, in completion order, a
record's **service** is its completion minus the later of its arrival and the previous completion
(by that definition one record at a time reproduces the trace). The batch writer, when free, waits
for the next record in completion order, takes it with every other record that has arrived, packs
them back to back and closes the last page; the batch completes after the service of its first
record (`first`) or of its slowest (`max`; both are printed; neither adds the program time of a
batch's extra pages), and the writer is free again. Latency = completion - arrival, against the
trace's. A record that completed just after a later-arriving one gets a service of a few cycles
(TPC-C at 373b42d: one, 13 cycles; none at 48b0014): the script prints the services below a page program's 16,000 cycles.

**Timer** (`pack`): records written at their arrivals (a writer that no longer makes a record wait
for earlier commits: the redesign's; under today's writer a delayed completion would also delay the
records queued behind it); a record's last, partly
filled page stays open while another record arrives within T cycles of the page's latest record; it
is closed then, T cycles after that record, or when a record fills it. T = 0 is this version's
writer (every record on fresh pages). **Added latency** = its last page's close time minus its
arrival; with T = inf the final page closes at the last arrival (so that row's latencies depend on
where the run ends).

First order, both: a changed completion would move the host's later submissions and keep FRAG slots
longer (more fallbacks to full pages at qd 8); the arrivals and records here do not move. Records
carry no completeness flags (as slog_nand's). "WA qd" adds the trace run's host pages to the model's
log pages (fallbacks the run had and the model has not, 373b42d's five at qd 8, none at
48b0014, are then counted both as full pages and as the model's
fragments: it overstates WA slightly); "WA model" uses the model's full pages.

`python bench/difftx/group_commit_model.py --diag bench/difftx/diag_b4_<commit>_tpcc.json`
prints the tables and writes --out (JSON).
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
        if last_t is not None and len(w.stream) % P and (a > last_t + T or T == 0):
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


def services(arrivals: list[float], completions: list[float]) -> list[float]:
    """Records in completion order: each one's service, its completion minus the later of its arrival
    and the previous record's completion (today's writer takes one record at a time)."""
    out, prev = [], 0.0
    for a, c in zip(arrivals, completions):
        out.append(c - max(a, prev))
        prev = c
    return out


def batch(records: list, arrivals: list[float], serv: list[float], combine=max) -> dict:
    """The batch writer: records, arrivals and services in completion order. When free, it waits for
    the next record in completion order to arrive, takes it with every other record that has arrived,
    packs them back to back (the last page closed), and completes them together after combine(their
    services). Returns the log pages, each record's completion and the batch sizes."""
    w = LogWriter(PAGE_BYTES, pack=True)
    n = len(records)
    taken = [False] * n
    done = [0.0] * n
    free, sizes = 0.0, []
    while not all(taken):
        i = next(k for k in range(n) if not taken[k])     # the next record in completion order
        start = max(free, arrivals[i])
        group = [k for k in range(n) if not taken[k] and arrivals[k] <= start]
        assert i in group
        for k in group:
            fulls, frags = records[k]
            w.add(1, [(l, 0) for l in fulls], frags)
            taken[k] = True
        w.close_page()
        free = start + combine(serv[k] for k in group)
        for k in group:
            done[k] = free
        sizes.append(len(group))
    return {"log_pages": len(w.stream) // w.P, "done": done, "batches": sizes}


def trace_frag_slots(diag: dict, given: int | None) -> int:
    """The traced device's FRAG slots: `given` (--frag-slots) if set, else the diag JSON's `frag_slots`
    (recorded from 48b0014 on, 0 for a device without them), else 32 (B4's device before 48b0014)."""
    if given is not None:
        return given
    return int(diag["frag_slots"]) if "frag_slots" in diag else 32


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--diag", required=True, help="a diag_difftx.py --only commit JSON of the workload")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--entries", type=int, default=64, help="the device's tx_entries (bench: 64)")
    ap.add_argument("--frag-slots", type=int, default=None,
                    help="the write buffer's FRAG slots of the traced device: the diag JSON's `frag_slots` "
                         "(recorded from 48b0014 on), else 32 (B4's device until then)")
    ap.add_argument("--lpns", type=int, default=1024)
    ap.add_argument("--policies", default="0,5000,10000,20000,30000,40000,50000,100000,200000,inf")
    ap.add_argument("--out", default=str(HERE.parents[1] / "build" / "bench" / "difftx_group_commit.json"))
    a = ap.parse_args()
    d = json.loads(Path(a.diag).read_text())
    a.frag_slots = trace_frag_slots(d, a.frag_slots)
    if not a.frag_slots:
        sys.exit(f"{a.diag}: the traced device has no FRAG slots, so no S-Log records to pack")
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
    base = {"workload": name, "txs": txs, "diag": a.diag, "frag_slots": a.frag_slots, "records": len(order), "full_pages_model": m["full_pages"],
            "full_pages_measured_qd": run["total"]["host_pages"],
            "log_pages_measured_qd": run["total"]["nand_programs"] - run["total"]["host_pages"] - run["total"]["ckpt_pages"],
            "app_bytes": m["app_bytes"], "arrival_gap_median": gaps[len(gaps) // 2] if gaps else None,
            "arrival_gap_min": gaps[0] if gaps else None,
            "commit_tail_mean_measured": sum(lat) / len(lat), "policies": []}
    print(f"{name}: {len(order)} records, arrival gaps median {base['arrival_gap_median']} min {base['arrival_gap_min']} "
          f"cycles; measured commit tail (commit done - data done) mean {base['commit_tail_mean_measured']:.0f}")
    print(f"measured at qd {d['args']['qd']}: {base['full_pages_measured_qd']} host pages, "
          f"{base['log_pages_measured_qd']} log pages (the model's T = 0 must give the same log pages)")
    # the batch writer: records in completion order, today's services from the trace
    corder = sorted(recs, key=lambda r: (parts[(r[0], r[1])]["commit_done"], r[0], r[1]))
    ca = [parts[(r[0], r[1])]["data_done"] for r in corder]
    cc = [parts[(r[0], r[1])]["commit_done"] for r in corder]
    sv = services(ca, cc)
    base["short_services"] = [{"tx": r[0], "part": r[1], "service": v} for r, v in zip(corder, sv) if v < 16_000]
    meas = [c - x for x, c in zip(ca, cc)]
    base["latency_measured"] = {"mean": sum(meas) / len(meas), "max": max(meas)}
    base["waited_for_earlier_commit"] = sum(1 for k in range(1, len(ca)) if ca[k] < cc[k - 1])
    # a writer that no longer makes a record wait for earlier commits (the timer rows' writer): to
    # first order each record's tail is its service alone (no queueing behind the previous one)
    base["service_mean"] = sum(sv) / len(sv)
    print(f"commit tail (completion - arrival) mean {base['latency_measured']['mean']:.0f} today, "
          f"{base['service_mean']:.0f} without the wait behind earlier commits (the services' mean)")
    print(f"records finding an earlier commit pending: {base['waited_for_earlier_commit']} of {len(ca)}; service "
          f"(completion - later of arrival and previous completion) median {sorted(sv)[len(sv) // 2]:.0f}; "
          f"services below a page program (16,000 cycles): {base['short_services']}")
    print(f"{'batch writer':>14} {'log pages':>9} {'WA model':>8} {'WA qd':>6} {'lat mean':>9} {'lat max':>9} "
          f"{'batches':>7} {'largest':>7}")
    print(f"{'today (trace)':>14} {base['log_pages_measured_qd']:>9} {'':>8} {'':>6} "
          f"{base['latency_measured']['mean']:>9.0f} {base['latency_measured']['max']:>9.0f}")
    base["batch"] = []
    for how, fn in (("first", lambda it: next(iter(it))), ("max", max)):
        b = batch([(f, g) for _, _, f, g in corder], ca, sv, fn)
        lat_b = [dn - x for x, dn in zip(ca, b["done"])]
        wa = (m["full_pages"] + b["log_pages"]) * PAGE_BYTES / m["app_bytes"]
        waq = (base["full_pages_measured_qd"] + b["log_pages"]) * PAGE_BYTES / m["app_bytes"]
        row = {"service": how, "log_pages": b["log_pages"], "wa_model": wa, "wa_measured_full_pages": waq,
               "latency_mean": sum(lat_b) / len(lat_b), "latency_max": max(lat_b), "batches": len(b["batches"]),
               "largest": max(b["batches"])}
        base["batch"].append(row)
        print(f"{'service ' + how:>14} {row['log_pages']:>9} {wa:>8.3f} {waq:>6.3f} {row['latency_mean']:>9.0f} "
              f"{row['latency_max']:>9.0f} {row['batches']:>7} {row['largest']:>7}")
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
