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
    committed = _committed("tx")
    for r in committed["rows"]:                     # one row still missed, with its hand-written reason
        if r["figure"] == "tx / plain, fsync every 100":
            r.update(value=0.9, status="missed", reason="a reason written by hand")
        if r["figure"] == "tx / plain, fsync every 10":
            r.update(value=round(r["value"] - 0.3, 3), status="missed", reason="met after the update")
    (data / "tx.json").write_text(json.dumps(committed))
    old = {r["figure"]: r for r in committed["rows"]}
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


def _bench_outputs() -> list[tuple[str, str, dict]]:
    """Minimal bench outputs of each area (the keys tools/results.py reads; values arbitrary)."""
    f = {"iops": 1000.0, "limit_iops": 2000.0, "ratio": 0.5, "mbps": 4.1}
    sata = {"sata": {"rand_write": f, "rand_read": f}, "nvme": {"rand_write": f, "rand_read": f},
            "sata_over_nvme": {"write": 1.0, "read": 1.0}, "meta": {"commit": "d7648b2", "make": "make bench-sata",
                                                                    "date_utc": "2026-11-25 10:00"}}
    modes = ["orderless", "barrier", "wait_on_transfer", "transfer_and_flush"]
    per = {"flush": [1.0, 2.0, 3.0], "rflush": [2.0, 3.0, 4.0]}
    pt = {"recovery_ms": 1.0, "log_records": 1, "recovery_pages": 1, "full_scan_ms": 10.0, "speedup": 10.0,
          "full_scan_bound_ms": 1.0, "speedup_vs_bound": 1.0}
    ops = ("seq_read", "rand_read", "seq_program", "rand_program")
    return [
        ("remap", "remap.json", {"entries": [1, 8, 64, 512, 1024, 4096], "commit_cycles": [10] * 6,
                                 "commit_ns": [1.0] * 6, "txssd_firmware_remap_us": 2474, "clock_mhz_used": 130.0,
                                 "tx_lookup_cycles": 8, "lookups_per_cycle": 1.0,
                                 "accepted_per_cycle_during_commit": 0.5}),
        ("nand", "nand.json", {"config": [{"channels": c, "ways": 4, "op": o} for c in (1, 2, 4, 8) for o in ops],
                               "mbps": [1.0] * 16, "limit_mbps": [1.0] * 16, "percent": [100.0] * 16}),
        ("order", "order.json", {"iops": dict.fromkeys(modes, 1.0), "ratio_to_orderless": dict.fromkeys(modes, 1.0),
                                 "mean_qd": dict.fromkeys(modes, 1.0), "barrier_over_orderless": 1.0}),
        ("order", "rflush.json", {"fsync_period_kib": [4, 16, 64], "sync_iops": per, "nand_per_host": per}),
        ("order", "rflush_s1024_c6.json", {"fsync_period_kib": [4, 16, 64], "sync_iops": per, "nand_per_host": per,
                                           "tail_sync_iops": per, "tail_eventual_nand_per_host": per}),
        ("core", "core.json", {"config": {"rd_slots": 16, "sched_depth": 16}, "rand_write_iops": 1.0,
                               "limit_write_iops": 1.0, "rand_write_ratio": 1.0, "rand_read_iops": 1.0,
                               "limit_read_iops": 1.0, "rand_read_ratio": 1.0, "barrier_over_orderless": 1.0,
                               "tx_commit_cycles": {"1": 1, "8": 1, "64": 1}, "tx_commit_us": {"1": 1, "8": 1, "64": 1},
                               "remap_commit_cycles": {"1": 1, "8": 1, "64": 1},
                               "remap_commit_fit": {"a": 9.0, "b": 1.0, "met": True}}),
        ("recovery", "recovery.json", {"capacity_sweep": [dict(pt, capacity_mib=c, writes=256) for c in (256, 1024, 4096)],
                                       "log_sweep": [dict(pt, capacity_mib=256, writes=w) for w in (0, 1024)],
                                       "speedup_at_largest": 100.0, "target_speedup": 30, "speedup_met": True,
                                       "flatness_max_over_min": 1.1, "violations": 0, "commit": "50c729f"}),
        ("sata", "sata.json", sata), ("nvme", "sata.json", sata)]


def test_extractors_name_the_committed_rows(tmp_path):
    """Each bench's output maps onto its area's committed rows: no row added (a renamed figure would
    leave the old row stale beside the new one), every row still complete."""
    for area, name, bench in _bench_outputs():
        data = tmp_path / f"{area}_{name}"
        data.mkdir()
        shutil.copy(ROOT / "docs" / "results" / f"{area}.json", data / f"{area}.json")
        before = [r["figure"] for r in _committed(area)["rows"]]
        src = tmp_path / name
        src.write_text(json.dumps(bench))
        rows = results.update(area, src, commit="abcdef0", data_dir=data)
        after = json.loads((data / f"{area}.json").read_text())
        assert rows and [r["figure"] for r in after["rows"]] == before, (area, name)
        assert not results.problems(after), (area, name)
