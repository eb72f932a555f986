"""Prints the core power-cut campaign's totals (cuts, recoveries, violations) from the stats files the
runs of cocotb_tests/ats_ssd_core write (build/sim/ats_ssd_core_tb/*/stats_*.json); exits 1 if any
run reports a violation or if no run was found."""
import json
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2] / "build" / "sim" / "ats_ssd_core_tb"
# one file per run name (stats_<config>_<seed>.json): the newest, so that the build directory of a
# configuration whose parameters changed since (a stale directory in a working tree) is not counted twice
newest: dict[str, Path] = {}
for f in root.glob("*/stats_*.json"):
    if f.name not in newest or f.stat().st_mtime > newest[f.name].stat().st_mtime:
        newest[f.name] = f
files = sorted(newest.values())
if not files:
    print("core power cuts: no campaign stats found")
    sys.exit(1)
tot: dict[str, int] = {}
spans: dict[str, list] = {}     # [min, mean, max, n] figures (directed_nawun's cycle counts): merged
for f in files:
    for k, v in json.loads(f.read_text()).items():
        if isinstance(v, list):
            lo, mean, hi, n = v
            if k in spans:
                a = spans[k]
                spans[k] = [min(a[0], lo), (a[1] * a[3] + mean * n) / max(1, a[3] + n), max(a[2], hi), a[3] + n]
            else:
                spans[k] = [lo, mean, hi, n]
            continue
        tot[k] = max(tot.get(k, 0), v) if k.startswith("max_") else tot.get(k, 0) + v
print(f"core power cuts: {tot['cuts']} cuts, {tot['cuts']} recoveries by the oracle ({tot['clean']} after a clean "
      f"FLUSH), {tot['violations']} invariant violations; {tot['cmds']} commands, {tot['reads_checked']} read "
      f"pages checked, {tot['durable_checked']} durability checks, {tot['prog_fail']} program failures "
      f"relocated, pages read per recovery max {tot['max_pages_read']} "
      f"({tot['pages_read']} read for {tot['pages_programmed']} programmed) [{len(files)} runs]")
if "tx_commits" in tot:
    print(f"core transactions: {tot['tx_commits']} commits, {tot['tx_aborts']} aborts, {tot['tx_failed']} commits "
          f"refused (TX_FULL / INDEX_FULL), {tot['tx_reads']} tx read pages checked, {tot['atom_checked']} "
          f"atomicity checks after cuts, {tot['tx_cut_in_commit']} cuts inside a commit "
          f"({tot['tx_applied_in_cut']} of those txs recovered whole, the rest not at all)")
if "fw_ops" in tot:
    print(f"core DIFFWRITE and firmware port: {tot.get('diffwrites', 0)} DIFFWRITEs, {tot['fw_ops']} firmware "
          f"operations: {tot['relocs']} GC relocations applied, {tot['relocs_stale']} stale (the host moved the "
          f"LBA first), {tot['raw_progs']} raw programs read back, {tot['raw_reads']} raw reads, {tot['erases']} "
          f"erases; {tot.get('cut_at_commit_cpl', 0)} cuts between a commit's durability and its completion")
bad = bool(tot["violations"])
if "directed_checks" in tot:
    print(f"core read your writes: {tot['directed_checks']} directed transaction scenarios, "
          f"{tot.get('tx_reads_over_plain', 0)} tx read pages and {tot.get('tx_diffs_over_plain', 0)} DIFFWRITEs "
          f"of a tx's own page after a plain WRITE / TRIM of its LBA, {tot.get('commit_entries', 0)} entries "
          f"returned by TX_COMMITs")
    if not tot.get("tx_reads_over_plain", 0):
        print("core read your writes: no tx read of its own page after a plain write (issue 34 case not exercised)")
        bad = True
if "rd_overlap" in tot:
    print(f"core read misses: up to {tot['max_rd_ring']} reads in the backend's read ring at once, "
          f"{tot['rd_overlap']} host NAND READs issued while another was outstanding, "
          f"{tot.get('rd_ooo', 0)} pages delivered before an older read's, "
          f"{tot.get('rd_ilv', 0)} NAND read words interleaved with another channel's page, "
          f"{tot.get('rd_cpl_ooo', 0)} READs completed ahead of an older READ (any path: buffer hits and "
          f"error statuses included; the miss path alone is checked in the wbuf tests)")
    if not tot["rd_overlap"]:
        print("core read misses: no NAND READs overlapped in the whole campaign (pipelined read path not exercised)")
        bad = True
    if not tot.get("rd_ooo", 0):
        print("core read misses: no page was delivered out of request order (out-of-order delivery not exercised)")
        bad = True
    if not tot.get("rd_ilv", 0):
        print("core read misses: no NAND read words of two channels' pages interleaved (word-by-word merge not exercised)")
        bad = True
if "nawun_reads" in tot:
    def span(k):
        lo, mean, hi, n = spans.get(k, [0, 0, 0, 0])
        return f"{lo:,.0f} / {mean:,.0f} / {hi:,.0f} cycles (min / mean / max of {n})"
    print(f"core reads during a commit (NAWUN): {tot['nawun_reads']} READs checked all old or all new, "
          f"{tot['nawun_concurrent']} submitted while the commit was in flight ({tot['nawun_old']} old, "
          f"{tot['nawun_new']} new); commit window {span('nawun_window')}; held READs {span('nawun_held_lat')}, "
          f"other READs {span('nawun_free_lat')}")
    if not tot["nawun_concurrent"]:
        print("core reads during a commit: no READ ran while a commit was in flight (NAWUN case not exercised)")
        bad = True
sys.exit(1 if bad else 0)
