# SPDX-License-Identifier: Apache-2.0
"""docs/results.md is the rendering of docs/results/*.json (`make results`), the way docs/registers.md
is the generated register document; every row is complete (value, commit, command, date; a missed
target with its reason); and `tools/results.py update` maps a benchmark's JSON onto the committed
rows (same figure names: a new run replaces them instead of adding rows). No simulation."""
import importlib.util
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ats_results", ROOT / "tools" / "results.py")
results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results)


def test_results_doc_current():
    areas = results.load()
    assert {a["area"] for a in areas} >= set(results.AREAS), "an area's file is missing from docs/results/"
    bad = [p for a in areas for p in results.problems(a)]
    assert not bad, "\n".join(bad)
    doc = (ROOT / "docs" / "results.md").read_text()
    assert doc == results.render(areas), "docs/results.md is stale: run `make results`"


def _committed(area: str) -> dict:
    return json.loads((ROOT / "docs" / "results" / f"{area}.json").read_text())


def test_update_replaces_rows(tmp_path):
    """B6's committed figures written back as bench-tx's JSON: update finds every row by name, adds
    none, keeps the hand-written reason of a row still missed, drops the reason of a row now met, and
    stamps the commit and command."""
    data = tmp_path / "results"
    data.mkdir()
    shutil.copy(ROOT / "docs" / "results" / "tx.json", data / "tx.json")
    old = {r["figure"]: r for r in _committed("tx")["rows"]}
    points = []
    for n in (1, 10, 100, 1000):
        tx = old[f"tx IOPS, fsync every {n}"]
        nums = [int(x.split()[-1].replace(",", "")) for x in tx["note"].split(", ")]   # plain, journal, tx_cmd
        points.append({"fsync_every": n, "tx_iops": tx["value"], "plain_iops": nums[0], "journal_iops": nums[1],
                       "tx_commit_cmd_iops": nums[2], "limit_bw_iops": tx["limit"], "limit_latency_iops": tx["limit"],
                       "tx_vs_journal": old[f"tx / journal, fsync every {n}"]["value"],
                       "tx_vs_plain": old[f"tx / plain, fsync every {n}"]["value"] + (0.3 if n == 10 else 0.0)})
    src = tmp_path / "tx.json"
    src.write_text(json.dumps({"bench": "B6", "points": points, "target_vs_journal": 1.5, "target_vs_plain": 0.97}))
    results.update("tx", src, commit="abcdef1", data_dir=data)
    new = json.loads((data / "tx.json").read_text())
    rows = {r["figure"]: r for r in new["rows"]}
    assert list(rows) == list(old), "update added or reordered rows: the extractor's names differ"
    for f, r in rows.items():
        assert r["commit"] == "abcdef1" and r["command"] == "make bench-tx"
        assert r["value"] == (round(old[f]["value"] + 0.3, 3) if f == "tx / plain, fsync every 10" else old[f]["value"])
    assert rows["tx / plain, fsync every 10"]["status"] == "met" and "reason" not in rows["tx / plain, fsync every 10"]
    assert rows["tx / plain, fsync every 100"]["status"] == "missed"
    assert rows["tx / plain, fsync every 100"]["reason"] == old["tx / plain, fsync every 100"]["reason"]
    assert rows["tx IOPS, fsync every 10"]["note"] == old["tx IOPS, fsync every 10"]["note"]
    assert not [p for p in results.problems(new)]


def test_update_synth_and_hand_rows(tmp_path):
    """make synth's summary refreshes the blocks it placed, keeps the rows it did not (the SoC, blocks
    not placed this time); a block now missed takes the run's critical path as its reason."""
    data = tmp_path / "results"
    data.mkdir()
    shutil.copy(ROOT / "docs" / "results" / "synth.json", data / "synth.json")
    before = _committed("synth")["rows"]
    summary = {"mode": "pnr", "blocks": [
        {"name": "cmdq", "top": "ats_cmdq", "status": "ok", "lut4": 7100, "ff": 5000, "dp16kd": 0,
         "fmax_mhz": 124.0, "target_mhz": 125, "fmax_by_seed": {"1": 124.0, "2": 120.5},
         "critical_paths": [{"from": "a", "to": "b", "total_ns": 8.06, "routing_ns": 6.0, "logic_levels": 5}]},
        {"name": "newblk", "top": "ats_newblk", "status": "ok", "lut4": 10, "ff": 5, "dp16kd": 0,
         "fmax_mhz": 300.0, "target_mhz": 125, "seed": 1},
        {"name": "broken", "top": "ats_broken", "status": "fail"}]}
    src = tmp_path / "summary.json"
    src.write_text(json.dumps(summary))
    results.update("synth", src, commit="1234567", data_dir=data)
    rows = {r["figure"]: r for r in json.loads((data / "synth.json").read_text())["rows"]}
    assert len(rows) == len(before) + 1
    c = rows["`cmdq` (ats_cmdq)"]
    assert (c["value"], c["lut4"], c["status"], c["fmax_by_seed"]) == (124.0, 7100, "missed", "124 / 120.5")
    assert c["command"] == "python synth/run_synth.py --all --only cmdq --seeds 1,2" and c["commit"] == "1234567"
    assert c["reason"] == "critical path a → b: 8.06 ns (6.0 routing, 5 levels)"
    assert rows["`newblk` (ats_newblk)"]["status"] == "met"
    soc = next(r for r in before if r["figure"] == "`soc` (ats_soc)")
    assert rows["`soc` (ats_soc)"] == soc
    assert not results.problems(json.loads((data / "synth.json").read_text()))
