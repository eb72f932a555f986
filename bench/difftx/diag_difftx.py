# SPDX-License-Identifier: Apache-2.0
"""B4 diagnosis (README "Diagnosis"): two figures of results_b4_813c399.json measured on the same
devices as bench_difftx.py (its run_point: boot, prefill, settle, the same workloads and seed).

  commit   varmail (`--workload`: or tpcc) at qd N (8), the S-Log mode (`shadow_diffwrite` on b5_256_slog) and `shadow`, each on
           its own device: run_concurrent with every command's completion cycle recorded (taken at its
           MSI, as the bench does). Per transaction (one device transaction each: varmail < 64 pages):
           its submission cycle (all its commands go out at once), its last data command's completion
           (writes / DIFFWRITEs complete when buffered), its commit's completion (TX Commit, or the
           COMMIT-flag page for shadow); the other transactions' commits completing inside that
           window; the other transactions' pages outstanding at its submission (submitted earlier, their
           commit not complete: not known durable); commit-order inversions (a later-submitted
           transaction's commit completing before an earlier one's).
  tpcc     TPC-C at qd1, the S-Log mode alone: before each transaction (the device idle after a Flush)
           GET_LOG and the console's `slog` merge line (the index's entries `used`, `merged`), so each
           transaction's host pages above its full updates can be set beside the index's state.

`nice -n 10 python bench/difftx/diag_difftx.py --prebuilt build/bench/difftx/sim_q3 [--txs 32] [--only commit|tpcc]`
writes build/bench/difftx_diag.json and prints the summary.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_difftx as B  # noqa: E402

ROOT = B.ROOT
TRACE: dict = {}


def console_merge(r) -> dict:
    """The console's `slog` merge line (sw/firmware/console.c) as numbers."""
    hp = r.hp
    mark = len(hp.uart)
    hp.uart_in("slog\n")
    end = hp.cycle + 4_000_000
    text = ""
    while hp.cycle < end:
        hp.run(20_000)
        text = hp.uart[mark:].decode(errors="replace")
        i = text.find("slog: merge:")
        if i >= 0 and "> " in text[i:]:
            break
    m = re.search(r"slog: merge: next (\d+) used (\d+) live (\d+).*?dumps (\d+) merged (\d+) stale (\d+) "
                  r"nothing (\d+)", text)
    if not m:
        return {"raw": text[-400:]}
    k = ("next", "used", "live", "dumps", "merged", "stale", "nothing")
    return dict(zip(k, map(int, m.groups())))


def run_concurrent_traced(self, wl, mode, qd):
    """Runner.run_concurrent with each command's completion cycle and each part's commands kept."""
    from difftx_sched import TxScheduler
    news, pages = self.plan(wl)
    parts = [B.split_for_device(tx, self.te) for tx in wl]
    sch = TxScheduler([{u.lpn for u in tx} for tx in wl], [len(p) for p in parts], qd, self.free_tx)
    live, start, end, done_at, recs = [], {}, {}, {}, []
    c0 = None
    while not sch.finished:
        for i, k in sch.step():
            if c0 is None:
                c0 = self.hp.cycle
            start.setdefault(i, self.hp.cycle)
            sub = self.hp.cycle
            t, cmds = self.shadow_part(parts[i][k], news[i], pages[i], mode == "shadow_diffwrite")
            recs.append({"tx": i, "part": k, "sub": sub, "sub_end": self.hp.cycle, "cmds": cmds, "cmt": t._cmt,
                         "pages": len(parts[i][k]), "partial": sum(not u.full for u in parts[i][k])})
            live.append([cmds, i, k, t])
        if not any(all(c.done for c in g[0]) for g in live):
            self.dev.run(B.wait_any(self.drv, [c for g in live for c in g[0] if not c.done]))
        now = self.hp.cycle
        for g in live:
            for c in g[0]:
                if c.done and id(c) not in done_at:
                    done_at[id(c)] = now
        for g in [g for g in live if all(c.done for c in g[0])]:
            live.remove(g)
            cmds, i, k, t = g
            self.dev.wait(cmds)
            t.complete()
            sch.complete(i, k)
            if sch.done[i]:
                end[i] = now
    out = []
    for r in recs:
        data = [c for c in r["cmds"] if c is not r["cmt"]]
        out.append({"tx": r["tx"], "part": r["part"], "pages": r["pages"], "partial": r["partial"],
                    "lpns": sorted({u.lpn for u in wl[r["tx"]]}),
                    "sub": r["sub"] - c0, "sub_end": r["sub_end"] - c0,
                    "data_done": max(done_at[id(c)] for c in data) - c0 if data else None,
                    "commit_done": done_at[id(r["cmt"])] - c0})
    TRACE["parts"] = out
    cyc = self.hp.cycle - c0
    lat = [end[i] - start[i] for i in range(len(wl))]
    return {"cycles": cyc, "latency_cycles_mean": sum(lat) / len(lat), "latency_cycles_max": max(lat),
            "running_mean": 0, "in_flight_mean": 0, "lock_waits": len(sch.lock_waited)}


def shadow_logged(orig):
    def f(self, tx, new, diff):
        lg = self.log()
        cm = console_merge(self)
        TRACE.setdefault("txs", []).append({
            "before": {k: lg[k] for k in ("host_pages", "nand_programs", "nand_reads", "ckpt_pages")}, "slog": cm,
            "full": sum(u.full for u in tx), "partial_lpns": [u.lpn for u in tx if not u.full]})
        return orig(self, tx, new, diff)
    return f


def job(kind: str, mode: str, txs: int, qd: int, prebuilt: str, work: str, workload: str = "varmail") -> dict:
    TRACE.clear()
    if kind == "commit":
        B.Runner.run_concurrent = run_concurrent_traced
        name = workload
    else:
        B.Runner.shadow = shadow_logged(B.Runner.shadow)
        name = "tpcc"
    p = B.run_point(name, txs, 1.0, 1, Path(work), prebuilt, qd=qd, mode=mode)   # scale 1: as the bench (< 64 pages)
    p.update(trace=TRACE, kind=kind)
    return p


def summarize_commit(p: dict) -> dict:
    parts = p["trace"]["parts"]
    lat = [q["commit_done"] - q["sub"] for q in parts]
    tail = [q["commit_done"] - q["data_done"] for q in parts if q["data_done"] is not None]
    others, outst, inv = [], [], 0
    for q in parts:
        others.append(sum(1 for o in parts if o is not q and q["sub"] < o["commit_done"] < q["commit_done"]))
        outst.append(sum(o["pages"] for o in parts if o is not q and o["sub"] < q["sub"] < o["commit_done"]))
    for a in parts:
        for b in parts:
            if a["sub"] < b["sub"] and b["commit_done"] < a["commit_done"]:
                inv += 1
    n = len(parts)
    # commit completions in time order: the gaps between consecutive ones; `waited_after`: transactions
    # whose data were all buffered before the previous commit completed (ready) and whose commit
    # completed after it: the gap each such commit took behind the previous one
    cd = sorted(q["commit_done"] for q in parts)
    gaps = [b - a for a, b in zip(cd, cd[1:])]
    waited = []
    for q in parts:
        prev = [o["commit_done"] for o in parts if o["commit_done"] < q["commit_done"]]
        if prev and q["data_done"] is not None and q["data_done"] < max(prev):
            waited.append(q["commit_done"] - max(prev))
    gs = sorted(gaps)
    # least squares: commit latency against the other transactions' pages outstanding at submission
    mx, my = sum(outst) / n, sum(lat) / n
    sxx = sum((x - mx) ** 2 for x in outst)
    slope = sum((x - mx) * (y - my) for x, y in zip(outst, lat)) / sxx if sxx else 0.0
    own = sum(q["pages"] for q in parts) / n
    return {"mode": p["mode"], "n": n, "cycles": p["cycles"], "commit_latency_mean": my,
            "commit_tail_mean": sum(tail) / len(tail), "others_committed_in_window_mean": sum(others) / n,
            "others_committed_in_window_max": max(others), "foreign_pages_outstanding_mean": mx,
            "latency_per_foreign_page": slope, "own_pages_mean": own, "commit_order_inversions": inv,
            "pairs": n * (n - 1) // 2, "gap_min": gs[0], "gap_median": gs[len(gs) // 2],
            "gaps_below_10k": sum(g < 10_000 for g in gs), "gaps": len(gs), "waited_n": len(waited),
            "waited_gap_min": min(waited) if waited else None,
            "waited_gap_mean": sum(waited) / len(waited) if waited else None}


SLOG_LPNS, SLOG_WAYS, SLOG_FRAGS = 256, 4, 4      # the core's defaults (README_slog); the device's
# SLOG_LPNS is the snapshot's config.json `slog_lpns` (b5_256_slog: 1,024 from 97792b8 on), 256 without
REPLAY_SIZES = ((256, 4), (256, 8), (512, 4), (1024, 4))   # the summary's replays beside the device's


def device_config(prebuilt: str | None) -> dict:
    """The traced device's configuration (soc/ats_litex.py AtsConfig): its snapshot's config.json, else
    the configuration the bench would build (B.CONFIG)."""
    if prebuilt:
        return json.loads((Path(prebuilt) / "config.json").read_text())
    return B.config_dict(B.CONFIG)


def index_lpns(prebuilt: str | None) -> int:
    """The device's SLOG_LPNS (AtsConfig.slog_lpns; config.json leaves out the default 256)."""
    return int(device_config(prebuilt).get("slog_lpns") or SLOG_LPNS)


def frag_slots(prebuilt: str | None) -> int:
    """The device's write-buffer FRAG slots (AtsConfig.frag_slots; config.json leaves out 0)."""
    return int(device_config(prebuilt).get("frag_slots") or 0)


def replay_index(txs: list[dict], lpns: int = SLOG_LPNS, ways: int = SLOG_WAYS,
                 frags: int = SLOG_FRAGS) -> list[dict]:
    """The backend's index as rtl/backend/README_slog.md specifies it (an LPN's set: lpn mod
    SLOG_LPNS / SLOG_WAYS, at most SLOG_WAYS entries; at most SLOG_FRAGS fragments an LPN), driven by
    each transaction's partial updates in order, without merges: per transaction the RESERVEs it
    predicts refused because the LPN's set is full (`set_full`) or the LPN has SLOG_FRAGS fragments
    (`frags_full`), each a read-modify-write (a host page and a base read). Valid up to the first merge."""
    sets = lpns // ways
    ent: dict[int, int] = {}                 # lpn -> fragments
    out = []
    for t in txs:
        sf = ff = 0
        for l in t["partial_lpns"]:
            if l in ent:
                if ent[l] >= frags:
                    ff += 1                  # its read-modify-written page RELEASEs the fragments (n 255)
                    del ent[l]
                else:
                    ent[l] += 1
            elif sum(1 for e in ent if e % sets == l % sets) >= ways:
                sf += 1                      # the RMW's full page frees nothing (the LPN has no entry)
            else:
                ent[l] = 1
        out.append({"set_full": sf, "frags_full": ff, "entries": len(ent)})
    return out


def summarize_tpcc(p: dict, lpns: int = SLOG_LPNS) -> dict:
    txs = p["trace"]["txs"]
    pred = replay_index(txs, lpns)
    rows, hist = [], {}
    fr: dict[int, int] = {}                 # host-side fragments an LPN took since the prefill (no merges seen)
    for i, t in enumerate(txs):
        nxt = txs[i + 1]["before"] if i + 1 < len(txs) else None
        r = {"i": i, "full": t["full"], "partial": len(t["partial_lpns"]), "used": t["slog"].get("used"),
             "merged": t["slog"].get("merged"),
             "new_lpns": sum(1 for l in t["partial_lpns"] if fr.get(l, 0) == 0),
             "ge4": sum(1 for l in t["partial_lpns"] if fr.get(l, 0) >= 4)}
        if nxt:
            r["host_pages"] = nxt["host_pages"] - t["before"]["host_pages"]
            r["extra"] = r["host_pages"] - t["full"]
            r["nand_reads"] = nxt["nand_reads"] - t["before"]["nand_reads"]
            r["programs"] = nxt["nand_programs"] - t["before"]["nand_programs"]
        for l in t["partial_lpns"]:
            fr[l] = fr.get(l, 0) + 1
        r.update(pred_set_full=pred[i]["set_full"], pred_frags_full=pred[i]["frags_full"],
                 pred_entries=pred[i]["entries"])
        rows.append(r)
    # the transactions that start with the device's index as the replay's (no merge before them:
    # `used` = the replay's entries), their host pages above their full updates against the replay's
    nm = [r for r in rows if "extra" in r and (r["merged"] or 0) == 0 and
          r["used"] == (rows[r["i"] - 1]["pred_entries"] if r["i"] else 0)]
    return {"rows": rows, "matched_txs": len(nm), "matched_extra": sum(r["extra"] for r in nm),
            "matched_pred_set_full": sum(r["pred_set_full"] for r in nm),
            "matched_pred_frags_full": sum(r["pred_frags_full"] for r in nm),
            "matched_mismatch_txs": [r["i"] for r in nm if r["extra"] != r["pred_set_full"] + r["pred_frags_full"]],
            "first_refusal_at_used": next((r["used"] for r in rows if r["pred_set_full"]), None),
            "pred_all_set_full": sum(x["set_full"] for x in pred), "pred_all_frags_full": sum(x["frags_full"] for x in pred),
            "index": {"lpns": lpns, "ways": SLOG_WAYS, "frags": SLOG_FRAGS},
            "replays": {f"{n}x{w}": {"set_full": sum(x["set_full"] for x in q), "frags_full": sum(x["frags_full"] for x in q),
                                     "entries_end": q[-1]["entries"] if q else 0}
                        for n, w in REPLAY_SIZES for q in [replay_index(txs, n, w)]},
            "merged_end": rows[-1]["merged"] if rows else None, "used_end": rows[-1]["used"] if rows else None,
            "total": p["total"], "window": p["window"], "background": p["background"],
            "full": sum(t["full"] for t in txs), "partial": sum(len(t["partial_lpns"]) for t in txs),
            "distinct_partial_lpns": len(fr), "lpns_ge5_updates": sum(1 for v in fr.values() if v >= 5)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prebuilt")
    ap.add_argument("--txs", type=int, default=32)
    ap.add_argument("--qd", type=int, default=8)
    ap.add_argument("--only", choices=("commit", "tpcc"))
    ap.add_argument("--workload", default="varmail", help="commit: the workload run at qd N (varmail, tpcc)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build/bench/difftx_diag.json"))
    ap.add_argument("--summary-of", help="print the summary of a JSON this script wrote (no simulation)")
    a = ap.parse_args()
    if a.summary_of:
        d = json.loads(Path(a.summary_of).read_text())
        lpns = d.get("index_lpns", SLOG_LPNS)
        for p in d["runs"]:
            kind = p.get("kind", "tpcc" if p["name"] == "tpcc" else "commit")   # (files before `kind`)
            if kind == "commit" and "parts" not in p["trace"]:
                continue
            s = summarize_tpcc(p, lpns) if kind == "tpcc" else summarize_commit(p)
            print(p["name"], p["mode"], json.dumps({k: v for k, v in s.items() if k != "rows"}))
        return
    B.CONFIG = "b5_256_slog"
    work = str(ROOT / "build/bench/difftx_diag")
    jobs = []
    if a.only in (None, "tpcc"):
        jobs += [("tpcc", "shadow_diffwrite", a.txs, 1)]
    if a.only in (None, "commit"):
        jobs += [("commit", "shadow_diffwrite", a.txs, a.qd), ("commit", "shadow", a.txs, a.qd)]
    with ProcessPoolExecutor(a.jobs) as ex:
        res = list(ex.map(job, *zip(*jobs), *zip(*[(a.prebuilt, work, a.workload)] * len(jobs))))
    lpns = index_lpns(a.prebuilt)
    out = {"args": vars(a), "index_lpns": lpns, "frag_slots": frag_slots(a.prebuilt), "runs": res, "summary": []}
    for (kind, mode, _, _), p in zip(jobs, res):
        if kind == "commit" and "parts" not in p["trace"]:
            # qd 1: run_point runs the transactions one at a time without run_concurrent, so no
            # per-command trace (a traced simulator's own output is in its log under `work`)
            print(kind, mode, "cpu_s", p["cpu_s"], "qd 1: no per-command trace, nothing to summarize")
            continue
        s = summarize_commit(p) if kind == "commit" else summarize_tpcc(p, lpns)
        out["summary"].append(s)
        print(kind, mode, "cpu_s", p["cpu_s"], json.dumps({k: v for k, v in s.items() if k != "rows"}))
        if kind == "tpcc":
            for r in s["rows"]:
                print(" ", r)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
