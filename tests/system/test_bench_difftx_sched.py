# SPDX-License-Identifier: Apache-2.0
"""B4's concurrency scheduler (bench/difftx/difftx_sched.py, `bench_difftx.py --qd N`) driven by a
device stand-in that completes the submitted parts in a random order, checked against rules worked
out here from the transactions (not from the scheduler's own state):
  - the lock rule: a transaction's first part goes out only after every earlier transaction sharing
    an LPN with it has completed all its parts (pairwise, from the LPN sets);
  - at most `qd` transactions have parts out, and a transaction starts only while fewer than `qd`
    earlier ones are incomplete (a thread waiting for a lock keeps its place); at most `txids` parts
    are out (the device's txids);
  - parts of a transaction go out in order, each once; every transaction completes;
  - work-conserving, as N threads taking the transactions in order: after each step, while a txid is
    free, every transaction not yet started with fewer than `qd` earlier transactions incomplete and
    its conflicting predecessors complete has been started (one held by a lock does not hold up a
    later one; else the bench would under-load the device), and a started transaction with parts left
    has them out.
Plain Python, no simulator."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench/difftx"))
import difftx_sched as S  # noqa: E402
import difftx_workloads as W  # noqa: E402


def drive(lpns: list[set[int]], parts: list[int], qd: int, txids: int | None, seed: int) -> dict:
    """Runs the scheduler to the end against a random-order device; asserts the rules; returns counts."""
    rng = random.Random(seed)
    n = len(lpns)
    sch = S.TxScheduler(lpns, parts, qd, txids)
    sent = [0] * n                 # parts out, per transaction (this harness's count)
    acked = [0] * n
    out: list[tuple[int, int]] = []
    peak_tx = peak_parts = 0
    steps = 0
    while not all(acked[i] == parts[i] for i in range(n)):
        for i, k in sch.step():
            assert k == sent[i], f"tx {i}: part {k} out of order (next {sent[i]})"
            assert sent[i] < parts[i], f"tx {i}: part {k} beyond its {parts[i]} parts"
            if k == 0:
                opened = sum(1 for j in range(i) if acked[j] < parts[j])
                assert opened < qd, f"tx {i} started with {opened} earlier transactions open, qd {qd}"
                for j in range(i):
                    if lpns[j] & lpns[i]:
                        assert acked[j] == parts[j], f"tx {i} started before tx {j} (shared LPNs) completed"
            sent[i] += 1
            out.append((i, k))
        running = [i for i in range(n) if sent[i] and acked[i] < parts[i]]
        assert len(running) <= qd, f"{len(running)} transactions out, qd {qd}"
        assert txids is None or len(out) <= txids, f"{len(out)} parts out, {txids} txids"
        peak_tx, peak_parts = max(peak_tx, len(running)), max(peak_parts, len(out))
        # work-conserving: every transaction not started that could start (fewer than qd earlier ones
        # incomplete, its locks clear) is started whenever a txid is free, whatever an earlier one waits
        # for (a thread held by a lock does not hold up a later thread); the started ones' parts too
        free = txids is None or len(out) < txids
        if free:
            for t in range(n):
                if sent[t]:
                    continue
                earlier_open = sum(1 for j in range(t) if acked[j] < parts[j])
                locks_clear = all(acked[j] == parts[j] for j in range(t) if lpns[j] & lpns[t])
                assert not (earlier_open < qd and locks_clear), \
                    f"tx {t} could start ({earlier_open} earlier open, qd {qd}, locks clear, a txid free)"
        if free:
            assert all(sent[i] == parts[i] for i in running), "a started transaction's part waits with txids free"
        assert out, "nothing out and nothing submitted: the scheduler stalls"
        i, k = out.pop(rng.randrange(len(out)))
        acked[i] += 1
        sch.complete(i, k)
        steps += 1
    assert sch.finished and sch.step() == []
    return {"peak_tx": peak_tx, "peak_parts": peak_parts, "steps": steps}


def random_case(rng: random.Random, n: int, pool: int, size: tuple[int, int], max_parts: int):
    lpns = [set(rng.sample(range(pool), rng.randint(*size))) for _ in range(n)]
    parts = [rng.randint(1, max_parts) for _ in range(n)]
    return lpns, parts


@pytest.mark.parametrize("seed", range(6))
def test_sched_random(seed: int) -> None:
    rng = random.Random(seed)
    for case in range(40):
        pool = rng.choice([8, 32, 400])
        lpns, parts = random_case(rng, rng.randint(1, 30), pool, (1, min(pool, 12)), rng.choice([1, 1, 3, 6]))
        qd = rng.choice([1, 2, 3, 8, 40])
        txids = rng.choice([None, 1, 2, 5, 32])
        drive(lpns, parts, qd, txids, seed * 1000 + case)


def test_sched_reaches_qd_and_txids() -> None:
    """Disjoint transactions: qd of them out at once; many parts: the txid bound reached, not passed."""
    lpns = [{i} for i in range(20)]
    assert drive(lpns, [1] * 20, 8, 32, 1)["peak_tx"] == 8
    r = drive(lpns, [5] * 20, 8, 12, 2)
    assert r["peak_parts"] == 12 and r["peak_tx"] <= 8


def test_sched_chain_serialises() -> None:
    """Every transaction shares an LPN with the previous one: one at a time whatever qd."""
    lpns = [{i, i + 1} for i in range(12)]
    assert drive(lpns, [2] * 12, 8, 32, 3)["peak_tx"] == 1


@pytest.mark.parametrize("name", ["varmail", "tpcc", "webproxy"])
def test_sched_workloads(name: str) -> None:
    """The bench's own transactions (their LPN sets and device parts) at qd 8 and the device's 32 txids."""
    sh = W.SHAPES[name]
    scale = 0.25 if sh.pages_mean > 64 else 1.0
    wl = W.gen_workload(sh, 32 if scale == 1.0 else 3, 1, scale, meta_base=0, data_base=sh.meta_pool)
    lpns = [{u.lpn for u in tx} for tx in wl]
    parts = [len(W.split_for_device(tx, 64)) for tx in wl]
    for qd in (1, 8):
        for txids in (32, None):
            drive(lpns, parts, qd, txids, qd)


def test_sched_rejects() -> None:
    with pytest.raises(ValueError):
        S.TxScheduler([{1}], [1], 0, 4)
    with pytest.raises(ValueError):
        S.TxScheduler([{1}], [0], 1, 4)
    sch = S.TxScheduler([{1}], [1], 1, 4)
    assert sch.step() == [(0, 0)]
    sch.complete(0, 0)
    with pytest.raises(ValueError):
        sch.complete(0, 0)
