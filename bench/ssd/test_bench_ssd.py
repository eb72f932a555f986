"""Self-test of the SSD benchmark harness (bench/ssd): small device, scaled media times, random idle on
the inputs the host and media drive and random backpressure on the outputs they consume.

Each run ends with the end-to-end checks of bench_ssd_tb.py (FLUSH, durable contents in the media
against the host's plain-Python record of the last accepted version of each LBA, READ-back of a
sample through the device); the rflush workload also checks INV-DUR after every FLUSH/RFLUSH; the
barrier mode checks that the media's durable log is exactly the writes in acceptance order, one
epoch each. This file adds checks of the statistics (queue depth bounds of the QD-1 modes,
percentile and time-average helpers against brute-force definitions).

Run: python -m pytest -q -n 1 bench/ssd/test_bench_ssd.py   (testplan: bench/ssd/testplan.md)
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "cocotb_tests" / "lib"))

SMALL = {"DEPTH": 8, "NUM_SLOTS": 16, "NUM_LBAS": 1024, "PAGE_BYTES": 4096, "THRESH_PCT": 75}
COMMON = {"num_chan": 2, "ways": 2, "preset": "femu", "time_scale": 0.05, "clk_ns": 8.0,
          "t_submit_us": 0.5, "t_complete_us": 1.0, "idle": True, "backpressure": True, "n_read": 6}


@pytest.fixture(scope="module")
def build_dir():
    import run_bench
    return run_bench.build("ssd_selftest", SMALL)


@pytest.mark.parametrize("mode,n,qd", [("orderless", 40, 8), ("barrier", 40, 8),
                                        ("wait_on_transfer", 12, 1), ("transfer_and_flush", 6, 1)])
def test_order_modes(build_dir, mode, n, qd):
    import run_bench
    seed = 11 + len(mode)
    r = run_bench.run_one(build_dir, f"t_order_{mode}", {**COMMON, "workload": "order", "mode": mode,
                                                           "n_ops": n, "warmup": 4 if n > 10 else 1,
                                                           "qd": qd, "lba_space": 64, "seed": seed})
    v = r["verify"]
    assert v["durable_bad"] == 0 and v["durable_checked"] > 0 and v["reads_checked"] > 0
    assert r["iops"] > 0 and 0 <= r["mean_qd"] <= SMALL["DEPTH"]
    if mode == "barrier":
        assert v["order_checked"] == n, "every barrier write must reach the media, none coalesced"
        assert r["counters"]["coalesced"] == 0
    if mode in ("wait_on_transfer", "transfer_and_flush"):
        assert r["max_qd"] <= 1 and r["mean_outstanding"] <= 1.0
    if mode == "transfer_and_flush":
        # each write made durable by its own FLUSH: nothing left to coalesce, one program per write
        assert r["counters"]["nand_programs"] >= n - 1


@pytest.mark.parametrize("mode", ["flush", "rflush", "noflush"])
def test_rflush_modes(build_dir, mode):
    import run_bench
    r = run_bench.run_one(build_dir, f"t_rflush_{mode}", {
        **COMMON, "workload": "rflush", "mode": mode, "period_pages": 1, "n_sync_writes": 4,
        "sync_file_pages": 8, "bulk_file_pages": 16, "bulk_writers": 12, "bulk_files": 4,
        "warmup_pages": 8, "seed": 5})
    assert r["verify"]["durable_bad"] == 0
    assert r["n_syncs"] == 4 and r["sync_iops"] > 0 and r["bulk_iops"] > 0
    if mode != "noflush":
        assert r["durability_checked"] > 0
    assert r["sync_p999_us"] >= r["sync_p99_us"] >= 0
    assert r["nand_bytes"] == r["nand_bytes"] // 4096 * 4096
    # per-sync marks (us, syncing-writer writes, host pages, coalesced, NAND bytes): one per sync, in
    # order, ending at the window's totals; the second-half figures recomputed from them
    mk = r["sync_marks"]
    assert len(mk) == len(r["fsync_us"]) == r["n_syncs"]
    assert [m[1] for m in mk] == [1, 2, 3, 4]
    assert all(a[k] <= b[k] for a, b in zip(mk, mk[1:]) for k in (0, 2, 3, 4))
    assert mk[-1][2] == r["host_pages"] and mk[-1][3] == r["coalesced"] and mk[-1][4] == r["nand_bytes"]
    assert abs(sum(r["fsync_us"]) / 4 - r["fsync_mean_us"]) < 1e-6
    assert abs(r["eventual_nand_per_host"] - (1 - r["coalesced"] / r["host_pages"])) < 1e-12
    m0, m1 = mk[2], mk[3]
    assert r["tail_syncs"] == 1 and abs(r["tail_window_us"] - (m1[0] - m0[0])) < 1e-6
    assert abs(r["tail_sync_iops"] - 1 / ((m1[0] - m0[0]) * 1e-6)) < 1e-6 * r["tail_sync_iops"]
    assert abs(r["tail_eventual_nand_per_host"] - (1 - (m1[3] - m0[3]) / (m1[2] - m0[2]))) < 1e-12


@pytest.mark.parametrize("workload", ["rflush", "order"])
def test_fast_loops_cycle_identical(build_dir, workload):
    """The harness's fast path (media model stepped from the host's clock loop, ports through
    port_reader/port_writer) against the reference path (media model in its own coroutine, every
    port access through cocotb's `.value`): same results, cycle for cycle, with random idle and
    backpressure on every stream."""
    import run_bench
    if workload == "rflush":
        cfg = {**COMMON, "workload": "rflush", "mode": "rflush", "period_pages": 2, "n_sync_writes": 6,
               "sync_file_pages": 8, "bulk_file_pages": 16, "bulk_writers": 12, "bulk_files": 4,
               "warmup_pages": 8, "seed": 9}
    else:
        cfg = {**COMMON, "workload": "order", "mode": "orderless", "n_ops": 30, "warmup": 4, "qd": 8,
               "lba_space": 48, "seed": 10}
    out = {}
    for ref in (False, True):
        r = run_bench.run_one(build_dir, f"t_fast_{workload}_{int(ref)}", {**cfg, "reference_loops": ref})
        for key in ("cpu_s", "wall_s", "config"):
            r.pop(key, None)
        out[ref] = r
    assert out[False]["sim_cycles"] == out[True]["sim_cycles"]
    assert out[False] == out[True]


def test_percentile_and_time_average():
    from host import Host, percentile
    rng = random.Random(3)
    for _ in range(200):
        vals = [rng.randrange(1000) for _ in range(rng.randint(1, 50))]
        p = rng.choice([50, 90, 99, 99.9, 100])
        got = percentile(vals, p)
        # nearest rank: the smallest value with at least p % of the values <= it
        exp = min(v for v in vals if sum(1 for w in vals if w <= v) * 100 >= p * len(vals))
        assert got == exp, (vals, p)
    # time average of a step function against a per-cycle expansion
    h = Host.__new__(Host)
    t, q, trace = 0, 0, [(0, 0)]
    for _ in range(50):
        t += rng.randint(1, 20)
        q = max(0, q + rng.choice([-1, 1]))
        trace.append((t, q))
    h.qd_trace = trace
    per_cycle = []
    for c in range(5, t + 7):
        per_cycle.append([qq for tt, qq in trace if tt <= c][-1])
    assert abs(h.mean_outstanding(5, t + 7) - sum(per_cycle) / len(per_cycle)) < 1e-9


def test_rflush_regimes_table(tmp_path):
    """bench/rflush/regimes.py: rate limits, gain, reduction and the "both" mark of a synthetic
    bench_rflush.py JSON against figures worked out by hand."""
    import json
    import subprocess
    sys.path.insert(0, str(HERE.parent / "rflush"))
    import regimes
    # time-compressed device as bench_rflush.py writes it: 1 KiB pages, times / 4
    dev = {"depth": 32, "num_slots": 512, "num_lbas": 16384, "page_bytes": 1024, "clk_ns": 8.0,
           "num_chan": 5, "ways": 4, "preset": "femu", "t_read_us": 10.0, "t_prog_us": 50.0,
           "t_xfer_us": 1.28, "thresh_pct": 90, "media_window": 20}
    prog, fill = regimes.rates(dev, 4.0)
    assert abs(prog - 20 / 205.12e-6) < 1e-6 * prog          # 20 dies, (50 + 1.28) us x 4 per page
    assert abs(fill - 1 / 8.192e-6) < 1e-6 * fill             # 256 words x 8 ns x 4 per page
    d = {"fsync_period_kib": [4, 16], "device": dev,
         "simulation": {"time_compression": 4.0, "max_window_ms": 40.0, "min_syncs": 6},
         "sync_iops": {"flush": [100.0, 400.0], "rflush": [900.0, 1200.0], "noflush": [5000.0, 5000.0]},
         "nand_per_host": {"flush": [0.8, 0.7], "rflush": [0.56, 0.63], "noflush": [0.5, 0.5]},
         "fsync_mean_us": {m: [1000.0, 2000.0] for m in ("flush", "rflush", "noflush")},
         "n_syncs": {m: [6, 6] for m in ("flush", "rflush", "noflush")},
         "bulk_mib_s": {m: [400.0, 400.0] for m in ("flush", "rflush", "noflush")},
         # no "eventual_nand_per_host" (JSONs before it): derived from coalesced / host pages
         "coalesced": {"flush": [300, 600], "rflush": [400, 500]},
         "host_bytes": {"flush": [1000 * 4096, 2000 * 4096], "rflush": [1000 * 4096, 1000 * 4096]},
         "tail_sync_iops": {"flush": [50.0, 100.0], "rflush": [400.0, 550.0]},
         "tail_eventual_nand_per_host": {"flush": [0.8, 0.8], "rflush": [0.6, 0.56]}}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(d))
    rows = regimes.rows(f)
    assert [r["period_kib"] for r in rows] == [4, 16]
    assert abs(rows[0]["gain"] - 9.0) < 1e-12 and abs(rows[1]["gain"] - 3.0) < 1e-12
    assert abs(rows[0]["reduction"] - 0.30) < 1e-12 and abs(rows[1]["reduction"] - 0.10) < 1e-12
    assert abs(rows[0]["eventual_reduction"] - (1 - 0.6 / 0.7)) < 1e-12
    assert abs(rows[1]["eventual_reduction"] - (1 - 0.5 / 0.7)) < 1e-12
    assert abs(rows[0]["tail_gain"] - 8.0) < 1e-12 and abs(rows[1]["tail_gain"] - 5.5) < 1e-12
    assert abs(rows[0]["tail_reduction"] - 0.25) < 1e-12 and abs(rows[1]["tail_reduction"] - 0.30) < 1e-12
    out = tmp_path / "t.json"
    p = subprocess.run([sys.executable, str(HERE.parent / "rflush" / "regimes.py"), str(f), "--out", str(out)],
                       capture_output=True, text=True, check=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("2048Ki")]
    # "both" over the window, then over the tail (row 2: tail gain 5.5x < 6.5x)
    assert len(lines) == 2 and [ln.split()[-1] for ln in lines] == ["yes", "-"]
    assert [ln.split("|")[0].split()[-1] for ln in lines] == ["yes", "-"]
    assert json.loads(out.read_text())["rows"][0]["slots"] == 512
    # a JSON without FLUSH runs is refused, not reported with a made-up baseline
    d2 = dict(d, sync_iops={"rflush": [1.0, 1.0]})
    f.write_text(json.dumps(d2))
    with pytest.raises(SystemExit):
        regimes.rows(f)


def test_rflush_to_ref_and_steady():
    """bench_rflush.py: conversion of a time-compressed result (k = 4) to the 4 KiB device, new keys
    included, and the steady-state gain / reduction against hand-worked figures."""
    sys.path.insert(0, str(HERE.parent / "rflush"))
    import bench_rflush as br
    x = {"window_us": 100.0, "sync_p99_us": 1.0, "sync_p999_us": 2.0, "sync_mean_us": 3.0,
         "write_p99_us": 4.0, "fsync_mean_us": 5.0, "fsync_p99_us": 6.0, "tail_window_us": 50.0,
         "sync_iops": 400.0, "bulk_iops": 800.0, "tail_sync_iops": 200.0, "nand_bytes": 1024,
         "host_bytes": 2048, "nand_per_host": 0.5, "tail_eventual_nand_per_host": 0.8,
         "fsync_us": [1.0, 2.5], "sync_marks": [[10.0, 1, 5, 1, 1024], [20.0, 2, 9, 2, 3072]]}
    y = br.to_ref(x, 4.0)
    assert y["tail_window_us"] == 200.0 and y["window_us"] == 400.0 and y["fsync_p99_us"] == 24.0
    assert y["tail_sync_iops"] == 50.0 and y["sync_iops"] == 100.0 and y["bulk_iops"] == 200.0
    assert y["nand_bytes"] == 4096 and y["host_bytes"] == 8192 and y["nand_per_host"] == 0.5
    assert y["fsync_us"] == [4.0, 10.0]
    assert y["sync_marks"] == [[40.0, 1, 5, 1, 4096], [80.0, 2, 9, 2, 12288]]
    assert x["fsync_us"] == [1.0, 2.5]                        # input left alone
    f = dict(y, tail_sync_iops=25.0, tail_eventual_nand_per_host=0.9)
    g, red = br.vs_flush_steady(dict(y, tail_eventual_nand_per_host=0.6), f)
    assert abs(g - 2.0) < 1e-12 and abs(red - (1 - 0.6 / 0.9)) < 1e-12
    g, red = br.vs_flush_steady({"sync_iops": 1.0}, f)        # a run recorded without marks
    assert g != g and red != red
