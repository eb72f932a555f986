# SPDX-License-Identifier: Apache-2.0
"""docs/results.md, the project's current figures, generated from docs/results/*.json.

Each file under docs/results/ is one area (remap engine, NAND, ordering, core, ...):

    {"area": "core", "title": "...", "about": "setup in a sentence or two",
     "rows": [{"figure": "...", "value": 22938, "unit": "IOPS",
               "limit": 23652,            # optional: the physical limit, in the row's unit
               "target": "≥ 0.90 of the limit",   # optional: the project's target (text)
               "status": "met" | "missed" | null,  # null: a figure without a target
               "commit": "f2e2d30",       # the tree measured (or, where the record did not name
                                          #   it, the commit that recorded the figure)
               "dirty": true,             # optional: the tree had uncommitted changes
               "command": "make bench-core", "date": "2026-11-23",
               "reason": "why the target is missed (a missed row must have one)",
               "note": "conditions, the figures behind the value, the reference figure"}]}

The synthesis area adds the columns named by "extra_columns" ([key, header] pairs) to its rows.

Commands:
  python tools/results.py render            # writes docs/results.md (`make results`)
  python tools/results.py check             # docs/results.md is current and every row complete
  python tools/results.py update AREA FILE  # refresh AREA's rows from a bench's JSON output:
      remap     build/bench/remap.json                (make bench-remap)
      nand      build/bench/nand.json                 (make bench-nand)
      order     build/bench/order.json                (make bench-order)
      order     build/bench/rflush.json, rflush_s<slots>_c<channels>.json (make bench-rflush[-regimes])
      core      build/bench/core.json or core_<runs>.json (make bench-core)
      recovery  build/bench/recovery.json             (make bench-recovery)
      tx        build/bench/tx.json                   (make bench-tx)
      atomic    build/bench/atomic.json               (make bench-atomic)
      sata      build/bench/sata.json                 (make bench-sata: the SATA rows)
      nvme      build/bench/sata.json                 (make bench-sata: the NVMe rows)
      sim       build/bench/sim.json                  (make bench-sim)
      synth     build/synth/summary.json              (make synth, make synth-soc; place-and-route only)
  `update` replaces the rows it produces (matched by figure name) and keeps every other row. A
  replaced row keeps its note unless the new figure brings one, and, while it stays missed, its
  reason (written by hand; the extractor's generic reason only fills a gap; a met row has none).
  commit = the one the JSON records, else
  `git rev-parse --short HEAD`; date = the JSON's date, else its file time (UTC). --commit and
  --command override. Then run `render` (update does) and commit docs/results/ with docs/results.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "results"
DOC = ROOT / "docs" / "results.md"
# the order of the sections; an area not listed comes after these, by name
AREAS = ["remap", "nand", "order", "core", "recovery", "tx", "atomic", "sata", "nvme", "soc", "sim", "tests", "synth"]
STATUSES = ("met", "missed", None)
ROW_KEYS = ("figure", "value", "unit", "limit", "target", "status", "commit", "dirty", "command", "date",
            "reason", "note")


# ---- loading, checking, rendering ----------------------------------------------------------------
def load(data_dir: Path = DATA) -> list[dict]:
    areas = [json.loads(p.read_text()) for p in sorted(data_dir.glob("*.json"))]
    order = {a: i for i, a in enumerate(AREAS)}
    return sorted(areas, key=lambda a: (order.get(a["area"], len(AREAS)), a["area"]))


def problems(area: dict) -> list[str]:
    """What is missing or wrong in an area's file (empty when it is complete)."""
    out = []
    name = area.get("area", "?")
    for k in ("area", "title", "rows"):
        if k not in area:
            out.append(f"{name}: no '{k}'")
    extra = {k for k, _ in area.get("extra_columns", [])}
    seen = set()
    for i, r in enumerate(area.get("rows", [])):
        where = f"{name} row {i} ({r.get('figure', '?')})"
        for k in ("figure", "value", "commit", "command", "date"):
            if r.get(k) in (None, ""):
                out.append(f"{where}: no '{k}'")
        if r.get("status") not in STATUSES:
            out.append(f"{where}: status {r.get('status')!r} not one of met / missed / null")
        if r.get("status") == "missed" and not r.get("reason"):
            out.append(f"{where}: a missed target needs its 'reason'")
        if r.get("reason") and r.get("status") != "missed":
            out.append(f"{where}: a 'reason' on a row that is not missed")
        if r.get("status") and not (r.get("target") or r.get("limit") is not None):
            out.append(f"{where}: a status without a limit or target")
        if not re.fullmatch(r"[0-9a-f]{7,40}", str(r.get("commit", ""))):
            out.append(f"{where}: commit {r.get('commit')!r} is not a hash")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?", str(r.get("date", ""))):
            out.append(f"{where}: date {r.get('date')!r} is not YYYY-MM-DD[ HH:MM]")
        unknown = set(r) - set(ROW_KEYS) - extra
        if unknown:
            out.append(f"{where}: unknown keys {sorted(unknown)}")
        if r.get("figure") in seen:
            out.append(f"{where}: figure named twice")
        seen.add(r.get("figure"))
    return out


def fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return format(v, ",")
    return str(v)


def cell(s: str) -> str:
    return " ".join(str(s).split()).replace("|", "\\|")


def limit_target(r: dict) -> str:
    parts = []
    if r.get("limit") is not None:
        parts.append(f"limit {fmt(r['limit'])}" + (f" {r['unit']}" if r.get("unit") else ""))
    if r.get("target"):
        parts.append(str(r["target"]))
    return "; ".join(parts)


def render(areas: list[dict]) -> str:
    L = ["# Results",
         "<!-- generated by tools/results.py from docs/results/*.json: edit those, then `make results` -->",
         "",
         "The current figures of atomssd, one section per area. Every row names the commit whose tree was",
         "measured (where the record of the run did not name it: the commit that recorded the figure), the",
         "date of the run and the command that reproduces it. A missed target is marked **missed** with",
         "its reason. How the figures got here, and the superseded ones: [CHANGELOG.md](../CHANGELOG.md).",
         "A benchmark's JSON output refreshes its area: `python tools/results.py update <area> <json>`",
         "(the list is in tools/results.py); `tests/system/test_results_doc.py` checks that this page is",
         "the rendering of docs/results/.",
         "",
         "| area | figures | met | missed |",
         "|---|---:|---:|---:|"]
    for a in areas:
        rows = a["rows"]
        L.append(f"| [{cell(a['title'])}](#{anchor(a['title'])}) | {len(rows)} | "
                 f"{sum(r.get('status') == 'met' for r in rows)} | "
                 f"{sum(r.get('status') == 'missed' for r in rows)} |")
    for a in areas:
        L += ["", f"## {a['title']}"]
        if a.get("about"):
            L += ["", a["about"].strip()]
        extra = a.get("extra_columns", [])
        head = ["figure", "value"] + [h for _, h in extra] + ["limit / target", "status", "commit", "date",
                                                              "command", "note"]
        L += ["", "| " + " | ".join(head) + " |",
              "|" + "|".join("---:" if h == "value" else "---" for h in head) + "|"]
        for r in a["rows"]:
            val = fmt(r["value"]) + (f" {r['unit']}" if r.get("unit") else "")
            st = {"met": "met", "missed": "**missed**", None: ""}[r.get("status")]
            commit = f"`{r['commit']}`" + (" (modified tree)" if r.get("dirty") else "")
            cells = [r["figure"], val] + [fmt(r.get(k)) for k, _ in extra] + [
                limit_target(r), st, commit, r["date"], f"`{r['command']}`", note_cell(r)]
            L.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(L) + "\n"


def note_cell(r: dict) -> str:
    why = r.get("reason")
    note = r.get("note", "")
    if not why:
        return note
    return f"**why:** {why}" + (f". {note}" if note else "")


def anchor(title: str) -> str:
    """GitHub's heading anchor."""
    s = re.sub(r"[^\w\- ]", "", title.lower(), flags=re.UNICODE)
    return s.replace(" ", "-")


# ---- update from a benchmark's JSON --------------------------------------------------------------
def r3(x, n=3):
    return None if x is None else round(x, n)


def status(ok: bool) -> str:
    return "met" if ok else "missed"


def ex_remap(j: dict, path: Path) -> list[dict]:
    rows = []
    for n, c, ns in zip(j["entries"], j["commit_cycles"], j["commit_ns"]):
        sp = j["txssd_firmware_remap_us"] * 1000 / ns
        rows.append(dict(figure=f"COMMIT latency, N = {n} entries", value=c, unit="cycles",
                         target=f"<= N + 16 = {n + 16} cycles", status=status(c <= n + 16),
                         note=f"{ns:,.1f} ns at {j['clock_mhz_used']:g} MHz; {sp:,.0f}× faster than the TxSSD "
                              f"firmware remap ({j['txssd_firmware_remap_us']:,.0f} µs)"))
    rows.append(dict(figure="TX_LOOKUP latency, tables of 1 to 4096 entries", value=j["tx_lookup_cycles"],
                     unit="cycles"))
    rows.append(dict(figure="LOOKUP throughput", value=j["lookups_per_cycle"], unit="per cycle", limit=1.0))
    rows.append(dict(figure="other requests accepted during a commit",
                     value=j["accepted_per_cycle_during_commit"], unit="per cycle"))
    return rows


def ex_nand(j: dict, path: Path) -> list[dict]:
    rows = []
    for cfg, m, lim, pc in zip(j["config"], j["mbps"], j["limit_mbps"], j["percent"]):
        if cfg["ways"] != 4:
            continue
        rows.append(dict(figure=f"{cfg['op']}, {cfg['channels']} ch × 4 ways", value=round(m, 2), unit="MB/s",
                         limit=round(lim, 2), target="≥ 90 % of the limit", status=status(pc >= 90),
                         note=f"{pc:.1f} % of the limit"))
    return rows


def ex_order(j: dict, path: Path) -> list[dict]:
    if "barrier_over_orderless" in j:                      # B2: bench/order
        rows = [dict(figure=f"B2 {m} IOPS", value=round(v), unit="IOPS",
                     note=f"{j['ratio_to_orderless'][m]:.3f} of orderless; mean QD {j['mean_qd'][m]:.2f}")
                for m, v in j["iops"].items()]
        rows.append(dict(figure="B2 barrier / orderless", value=round(j["barrier_over_orderless"], 3),
                         target="≥ 0.90 (paper 0.80–0.90)", status=status(j["barrier_over_orderless"] >= 0.9)))
        return rows
    if "fsync_period_kib" in j:                            # B3: bench/rflush
        m = re.fullmatch(r"rflush_s(\d+)_c(\d+)", path.stem)
        dev = f"{m[1]} slots, {m[2]} ch × 4 ways" if m else "default device"
        rows = []
        for i, p in enumerate(j["fsync_period_kib"]):
            si, nph = j["sync_iops"], j["nand_per_host"]
            gain = si["rflush"][i] / si["flush"][i]
            red = 1 - nph["rflush"][i] / nph["flush"][i]
            rows.append(dict(figure=f"B3 {dev}, {p} KiB period: RFLUSH gain, whole window", value=round(gain, 2),
                             unit="×", note=f"sync-writer IOPS FLUSH {si['flush'][i]:.0f}, RFLUSH {si['rflush'][i]:.0f}"
                             + (f", NOFLUSH {si['noflush'][i]:.0f}" if "noflush" in si else "")))
            rows.append(dict(figure=f"B3 {dev}, {p} KiB period: NAND bytes per host byte, RFLUSH vs FLUSH",
                             value=round(-100 * red, 1), unit="%",
                             note=f"{nph['flush'][i]:.3f} → {nph['rflush'][i]:.3f}, whole window"))
            ti, te = j.get("tail_sync_iops", {}), j.get("tail_eventual_nand_per_host", {})
            if ti.get("flush") and ti["flush"][i] and ti.get("rflush") and ti["rflush"][i]:
                g = ti["rflush"][i] / ti["flush"][i]
                rows.append(dict(figure=f"B3 {dev}, {p} KiB period: RFLUSH gain, steady", value=round(g, 2),
                                 unit="×", target="≥ 6.5× (the paper's up to 6.5×)", status=status(g >= 6.5),
                                 note=f"steady sync-writer IOPS FLUSH {ti['flush'][i]:.0f}, RFLUSH {ti['rflush'][i]:.0f}",
                                 reason="the gain falls with the fsync period (bench/rflush/README.md)"))
            if te.get("flush") and te["flush"][i] and te.get("rflush") and te["rflush"][i]:
                rd = 1 - te["rflush"][i] / te["flush"][i]
                rows.append(dict(figure=f"B3 {dev}, {p} KiB period: eventual NAND bytes reduction, steady",
                                 value=round(100 * rd, 1), unit="%", target="≥ 24 % (paper 24–43 %)",
                                 status=status(rd >= 0.24),
                                 note=f"{te['flush'][i]:.3f} → {te['rflush'][i]:.3f}",
                                 reason="a FLUSH takes little that would have coalesced at this period "
                                        "(bench/rflush/README.md)"))
        return rows
    raise SystemExit(f"{path}: neither bench-order's nor bench-rflush's output")


def ex_core(j: dict, path: Path) -> list[dict]:
    cfg = j.get("config", {})
    rows = []
    if "rand_write_iops" in j:
        rs, sd = cfg.get("rd_slots"), cfg.get("sched_depth")
        rows.append(dict(figure="random 4 KiB write IOPS, QD 32", value=round(j["rand_write_iops"]), unit="IOPS",
                         limit=round(j["limit_write_iops"]), target="≥ 0.90 of the limit",
                         status=status(j["rand_write_ratio"] >= 0.9), note=f"{j['rand_write_ratio']:.3f} of the limit"))
        rows.append(dict(figure=f"random 4 KiB read IOPS, QD 32, {rs} read slots, scheduler depth {sd}",
                         value=round(j["rand_read_iops"]), unit="IOPS", limit=round(j["limit_read_iops"]),
                         target="≥ 0.90 of the limit", status=status(j["rand_read_ratio"] >= 0.9),
                         note=f"{j['rand_read_ratio']:.3f} of the limit",
                         reason="a die is held until its page's BCH decode ends (bench/core/README.md \"Results\")"))
    if "barrier_over_orderless" in j:
        rows.append(dict(figure="B2 through the core: barrier / orderless", value=round(j["barrier_over_orderless"], 3),
                         target="≥ 0.90", status=status(j["barrier_over_orderless"] >= 0.9)))
    if "tx_commit_cycles" in j:
        for n, c in j["tx_commit_cycles"].items():
            rows.append(dict(figure=f"B1 TX_COMMIT, N = {n}", value=c, unit="cycles",
                             note=f"{j['tx_commit_us'][n]} µs; the floor is the commit record's program"))
        for n, c in j.get("remap_commit_cycles", {}).items():
            rows.append(dict(figure=f"B1 remap COMMIT inside the core, N = {n}", value=c, unit="cycles"))
        fit = j.get("remap_commit_fit", {})
        if fit.get("b") is not None:
            rows.append(dict(figure="B1 remap share per entry", value=round(fit["b"], 3), unit="cycles/entry",
                             target="<= 1 cycle/entry + constant", status=status(fit["met"]),
                             note=f"{fit['a']:.2f} + {fit['b']:.3f} N cycles"))
    return rows


def ex_recovery(j: dict, path: Path) -> list[dict]:
    rows = []
    for p in j["capacity_sweep"] + j["log_sweep"]:
        cap = f"{p['capacity_mib'] // 1024} GiB" if p["capacity_mib"] >= 1024 else f"{p['capacity_mib']} MiB"
        rows.append(dict(figure=f"recovery, {cap} raw, {p['writes']} writes before the cut",
                         value=round(p["recovery_ms"], 1), unit="ms",
                         note=f"{p['log_records']} log records, {p['recovery_pages']} pages read; full scan "
                              f"{p['full_scan_ms'] / 1000:.1f} s ({p['speedup']:,.0f}×), floor of any full scan "
                              f"{p['full_scan_bound_ms']:,.0f} ms ({p['speedup_vs_bound']:.1f}×)"))
    rows.append(dict(figure="speed-up over the full scan at the largest capacity", value=round(j["speedup_at_largest"]),
                     unit="×", target=f"≥ {j['target_speedup']:g}×", status=status(j["speedup_met"])))
    rows.append(dict(figure="recovery time max / min over the capacities", value=round(j["flatness_max_over_min"], 3),
                     note="1 = flat"))
    rows.append(dict(figure="invariant violations over every point", value=j["violations"]))
    return rows


def ex_tx(j: dict, path: Path) -> list[dict]:
    rows = []
    tj, tp = j["target_vs_journal"], j["target_vs_plain"]
    for p in j["points"]:
        n = p["fsync_every"]
        lim = min(p["limit_bw_iops"], p["limit_latency_iops"])
        rows.append(dict(figure=f"tx IOPS, fsync every {n}", value=round(p["tx_iops"]), unit="IOPS", limit=round(lim),
                         note=f"plain {p['plain_iops']:,.0f}, journal {p['journal_iops']:,.0f}, "
                              f"TX Commit command {p['tx_commit_cmd_iops']:,.0f}"))
        rows.append(dict(figure=f"tx / journal, fsync every {n}", value=round(p["tx_vs_journal"], 2),
                         target=f"≥ {tj}", status=status(p["tx_vs_journal"] >= tj),
                         reason="a commit mark waits for every earlier request (rtl/backend/README.md)"))
        rows.append(dict(figure=f"tx / plain, fsync every {n}", value=round(p["tx_vs_plain"], 3),
                         target=f"≥ {tp}", status=status(p["tx_vs_plain"] >= tp),
                         reason="a commit mark waits for every earlier request (rtl/backend/README.md)"))
    return rows


WHY_ATOMIC = "atomic Writes wait for each other's commit (the write buffer runs one commit at a time, rtl/wbuf/README.md \"Pending commit\"): an atomic stream moves exactly its one-at-a-time MB/s, plain Writes keep the 8 dies programming in parallel"


def ex_atomic(j: dict, path: Path) -> list[dict]:
    t, at = j["target"], j["atomic_over_plain_at"]
    sizes = ", ".join(f"{p['blocks']}: " + " / ".join(f"{p[r]['atomic_over_plain']:.3f}" for r in j["atomic_over_plain_by_regime"])
                      for p in j["sizes"])
    rows = [dict(figure="atomic Writes / plain Writes, worst over sizes (atomic_over_plain)",
                 value=round(j["atomic_over_plain"], 3), target=f"≥ {t}", status=status(j["atomic_over_plain"] >= t),
                 reason=WHY_ATOMIC,
                 note=f"worst at {at['blocks']} blocks ({at['regime']}); per regime "
                      + ", ".join(f"{r} {v:.3f}" for r, v in j["atomic_over_plain_by_regime"].items())
                      + f"; by size (blocks: {' / '.join(j['atomic_over_plain_by_regime'])}) {sizes}")]
    for r, v in j["atomic_over_plain_by_regime"].items():
        rows.append(dict(figure=f"atomic / plain, worst over sizes, {r}", value=round(v, 3), target=f"≥ {t}",
                         status=status(v >= t), reason=WHY_ATOMIC if v < t else None))
    sw = j["swrite"]
    if sw.get("measured"):
        rows.append(dict(figure="SWRITE / TX Writes + COMMIT (time a transaction)", value=round(sw["swrite_over_tx"], 3),
                         note=f"{sw['ranges']} ranges x {sw['blocks_per_range']} blocks: SWRITE {sw['swrite_us']:.0f} µs, "
                              f"TX Writes + COMMIT {sw['tx_commit_write_us']:.0f} µs"))
    ps = j["page_store"]
    lim = j["limit_program_bw_mb_s"] * 1e6 / ps["page_bytes"]
    for m in ("doublewrite", "atomic"):
        rows.append(dict(figure=f"page store {m}: pages/s", value=round(ps[m]["pages_per_s"]), unit="16 KiB pages/s",
                         limit=round(lim if m == "atomic" else lim / 2),
                         note=f"batches of {ps['batch']}; {ps[m]['nand_bytes_per_page']:,.0f} NAND bytes a page"))
        rows.append(dict(figure=f"page store {m}: NAND bytes a page", value=round(ps[m]["nand_bytes_per_page"]),
                         unit="B", limit=ps["page_bytes"] * (2 if m == "doublewrite" else 1)))
    rows.append(dict(figure="page store atomic / doublewrite: pages/s", value=round(ps["atomic_over_doublewrite_pages_per_s"], 2),
                     note=f"NAND bytes a page doublewrite / atomic {ps['nand_bytes_doublewrite_over_atomic']:.2f}"))
    return rows


def _iface(j: dict, key: str, label: str) -> list[dict]:
    rows = []
    for kind in ("write", "read"):
        f = j[key][f"rand_{kind}"]
        ok = f["ratio"] >= 0.9
        rows.append(dict(figure=f"{label} random 4 KiB {kind} IOPS, QD 32, ideal core", value=round(f["iops"]),
                         unit="IOPS", limit=round(f["limit_iops"]), target="≥ 0.90 of the limit (the benches' habit)",
                         status=status(ok), note=f"{f['ratio']:.3f} of the limit, {f['mbps']:.1f} MB/s",
                         reason="bench/sata/README.md"))
    return rows


def ex_sata(j: dict, path: Path) -> list[dict]:
    rows = _iface(j, "sata", "SATA")
    for kind, r in j.get("sata_over_nvme", {}).items():
        rows.append(dict(figure=f"SATA / NVMe random {kind}, same ideal core", value=round(r, 3)))
    return rows


def ex_nvme(j: dict, path: Path) -> list[dict]:
    return _iface(j, "nvme", "NVMe")


def ex_sim(j: dict, path: Path) -> list[dict]:
    # (a run with --no-synth, --no-base or --only gives the rows it has; `update` keeps the others)
    rows = []
    for p in j["phases"]:
        note = []
        if p.get("synth_form_mcycles_per_s"):
            note.append(f"synthesis form {p['synth_form_mcycles_per_s']:.3f}")
        if p.get("ungated_mcycles_per_s"):
            note.append(f"without the clock gates {p['ungated_mcycles_per_s']:.3f}")
        if p.get("baseline_mcycles_per_s"):
            note.append(f"{j['baseline_commit']} {p['baseline_mcycles_per_s']:.3f} ({p['speedup']:.2f}×)")
        rows.append(dict(figure=f"{'host-port' if p['build'] == 'host' else 'NVMe'} build, {p['name']}",
                         value=round(p["mcycles_per_s"], 3), unit="M cycles/CPU s", note=", ".join(note)))
    if j.get("avg_mcycles_per_s") is not None:
        ok = j["avg_mcycles_per_s"] >= 1.0
        rows.append(dict(figure="host-port build, boot + io + recovery", value=round(j["avg_mcycles_per_s"], 3),
                         unit="M cycles/CPU s", target="≥ 1 M cycles/s (issue 35)", status=status(ok),
                         note=(f"{j['baseline_commit']}: {j['baseline_avg_mcycles_per_s']:.3f} ({j['avg_speedup']:.2f}×)"
                               if j.get("baseline_avg_mcycles_per_s") else ""),
                         reason="the clock gates of idle blocks and cycle skipping are not built yet"))
    if j.get("nvme_avg_mcycles_per_s") is not None and j.get("nvme_to_host") is not None:
        ok = j["nvme_to_host"] >= 0.9
        rows.append(dict(figure="NVMe build, boot + io + recovery", value=round(j["nvme_avg_mcycles_per_s"], 3),
                         unit="M cycles/CPU s", target="within 10 % of the host-port build (issue 35)",
                         status=status(ok),
                         note=f"{j['nvme_to_host']:.3f} of the host-port build's "
                              f"{j['nvme_avg_mcycles_per_s'] / j['nvme_to_host']:.3f} in the same run"
                              + (f"; without the clock gates {j['nvme_ungated_avg_mcycles_per_s']:.3f}"
                                 if j.get("nvme_ungated_avg_mcycles_per_s") else ""),
                         reason="the NVMe build is more than 10 % slower than the host-port build"))
    if j.get("synth_form_avg_mcycles_per_s") is not None:
        rows.append(dict(figure="simulation form exact against the synthesis form", value=bool(j["exact"]),
                         note="UART output, completions, MSIs, read data, cycle counts and die images compared"))
    else:
        rows.append(dict(figure="clock gates exact against the ungated builds", value=bool(j["exact"]),
                         note="UART output, completions, MSIs, read data, cycle counts and die images compared"))
    return rows


def ex_synth(j: dict, path: Path) -> list[dict]:
    if j.get("mode") != "pnr":
        raise SystemExit(f"{path}: a synthesis check (no Fmax); update takes make synth's summary")
    rows = []
    for b in j["blocks"]:
        if b.get("status", "ok") != "ok" or b.get("fmax_mhz") is None:
            continue
        seeds = b.get("fmax_by_seed") or {str(b.get("seed", 1)): b["fmax_mhz"]}
        ok = b["fmax_mhz"] >= b["target_mhz"]
        cp = (b.get("critical_paths") or [{}])[0]
        row = dict(figure=f"`{b['name']}` ({b['top']})", value=b["fmax_mhz"], unit="MHz",
                   target=f"{b['target_mhz']:g} MHz", status=status(ok), lut4=b.get("lut4"), ff=b.get("ff"),
                   dp16kd=b.get("dp16kd"), fmax_by_seed=" / ".join(f"{v:g}" for v in seeds.values()),
                   command="make synth-soc" if b["name"] == "soc" else
                   f"python synth/run_synth.py --all --only {b['name']} --seeds {','.join(seeds)}")
        if not ok and cp.get("total_ns"):
            row["reason"] = (f"critical path {cp.get('from')} → {cp.get('to')}: {cp['total_ns']} ns "
                             f"({cp.get('routing_ns')} routing, {cp.get('logic_levels')} levels)")
        rows.append(row)
    return rows


EXTRACT = {"remap": (ex_remap, "make bench-remap"), "nand": (ex_nand, "make bench-nand"),
           "order": (ex_order, None), "core": (ex_core, "make bench-core"),
           "recovery": (ex_recovery, "make bench-recovery"), "tx": (ex_tx, "make bench-tx"),
           "atomic": (ex_atomic, "make bench-atomic"),
           "sata": (ex_sata, "make bench-sata"), "nvme": (ex_nvme, "make bench-sata"),
           "sim": (ex_sim, "make bench-sim"), "synth": (ex_synth, "make synth")}


# areas whose extractor's reason is specific to the run (a critical path) and replaces the old one
FRESH_REASON = {"synth"}


def git_head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def provenance(j: dict, path: Path) -> tuple[str, bool, str]:
    """(commit, tree modified, date) as the bench recorded them, else HEAD and the file's time."""
    meta = next((m for m in (j.get("meta"), j.get("config")) if isinstance(m, dict)), {})
    commit = j.get("commit") if isinstance(j.get("commit"), str) else meta.get("commit")
    dirty = bool(j.get("tree_dirty") or meta.get("modified_sources"))
    date = j.get("date_utc") or meta.get("date_utc")
    if not commit or commit == "?":
        commit = git_head()
        dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True).stdout.strip())
    if not date:
        date = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    return commit, dirty, date


def default_command(area: str, path: Path, j: dict) -> str:
    if area == "order":
        m = re.fullmatch(r"rflush_s(\d+)_c(\d+)", path.stem)
        if m:
            return "make bench-rflush-regimes"
        return "make bench-rflush" if "fsync_period_kib" in j else "make bench-order"
    if area == "core" and path.stem != "core":
        return f"python bench/core/bench_core.py --jobs 1 --runs {','.join(path.stem.split('_')[1:])}"
    if area in ("sata", "nvme") and (j.get("meta") or {}).get("make"):
        return j["meta"]["make"]
    return EXTRACT[area][1]


def update(area: str, src: Path, commit: str | None = None, command: str | None = None,
           data_dir: Path = DATA) -> list[dict]:
    if area not in EXTRACT:
        raise SystemExit(f"no extractor for area '{area}' (have: {', '.join(EXTRACT)})")
    j = json.loads(src.read_text())
    new = EXTRACT[area][0](j, src)
    c, dirty, date = provenance(j, src)
    c = commit or c
    if commit:
        dirty = False
    cmd = command or default_command(area, src, j)
    f = data_dir / f"{area}.json"
    doc = json.loads(f.read_text()) if f.exists() else {"area": area, "title": area, "rows": []}
    old = {r["figure"]: r for r in doc["rows"]}
    for r in new:
        r.setdefault("command", cmd)
        r.update(commit=c, date=date)
        if dirty:
            r["dirty"] = True
        prev = old.get(r["figure"]) or {}
        if prev.get("note") and "note" not in r:
            r["note"] = prev["note"]
        if r.get("status") != "missed":
            r.pop("reason", None)
        elif prev.get("reason") and not (area in FRESH_REASON and r.get("reason")):
            r["reason"] = prev["reason"]
        elif not r.get("reason"):
            r["reason"] = f"not recorded yet ({src.name} of {date})"
        r = {k: r[k] for k in list(ROW_KEYS) + [k for k, _ in doc.get("extra_columns", [])] if r.get(k) is not None}
        if prev:
            doc["rows"][doc["rows"].index(prev)] = r
        else:
            doc["rows"].append(r)
        old[r["figure"]] = r
    f.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return new


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("render", help="write docs/results.md")
    sub.add_parser("check", help="docs/results.md current, every row complete")
    u = sub.add_parser("update", help="refresh an area's rows from a bench JSON, then render")
    u.add_argument("area")
    u.add_argument("json", type=Path)
    u.add_argument("--commit", help="the commit measured (default: the JSON's, else HEAD)")
    u.add_argument("--command", help="the command that produced the JSON (default: the area's make target)")
    a = ap.parse_args()
    if a.cmd == "update":
        rows = update(a.area, a.json, a.commit, a.command)
        print(f"[results] {a.area}: {len(rows)} rows from {a.json}")
    areas = load()
    bad = [p for ar in areas for p in problems(ar)]
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return 1
    text = render(areas)
    if a.cmd == "check":
        if DOC.read_text() != text:
            print("docs/results.md is stale: run `make results`", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"[results] wrote {DOC.relative_to(ROOT)} ({sum(len(x['rows']) for x in areas)} rows, {len(areas)} areas)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
