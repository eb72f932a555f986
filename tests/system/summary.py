#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sums the system power-cut campaigns of the last run (build/system/campaign_<seed>.json, and
campaign_gb<seed>.json of test_gc_wear.py's GC under program failures): cuts,
recoveries, cuts inside recovery, oracle checks, violations; exits 1 on any violation."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
files = sorted((ROOT / "build" / "system").glob("campaign_*.json"))
if not files:
    print("system campaign: no results (tests/system not run)")
    sys.exit(0)
tot: dict[str, int] = {}
mx: dict[str, int] = {}
for f in files:
    d = json.loads(f.read_text())
    for k, v in d.items():
        if isinstance(v, int):
            if k.startswith("max_"):
                mx[k] = max(mx.get(k, 0), v)
            else:
                tot[k] = tot.get(k, 0) + v
print(f"system campaign ({len(files)} seeds): {tot.get('cuts', 0)} cuts ({tot.get('cuts_in_recovery', 0)} inside a "
      f"recovery), {tot.get('recoveries', 0)} recoveries checked, {tot.get('oracle_checked', 0)} LBAs compared with "
      f"the oracle, {tot.get('violations', 0)} violations; {tot.get('writes', 0)} writes, {tot.get('tx_commits', 0)} "
      f"commits, {tot.get('tx_aborts', 0)} aborts, {tot.get('tx_cut_in_commit', 0)} cuts during a commit, "
      f"{tot.get('flushes', 0)} FLUSH, {tot.get('rflushes', 0)} RFLUSH, {tot.get('trims', 0)} TRIM; max recovery "
      f"{mx.get('max_recovery_pages', 0)} pages, {mx.get('max_recovery_cycles', 0)} cycles; "
      f"{tot.get('aged_seeds', 0)} seeds from an aged device; {tot.get('relocs_replayed', 0)} GC relocations "
      f"in the logs recoveries replayed; {tot.get('grown_bad_seeds', 0)} seeds under program failures with GC "
      f"({tot.get('grown_bad', 0)} grown bad blocks)")
sys.exit(1 if tot.get("violations", 0) else 0)
