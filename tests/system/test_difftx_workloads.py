# SPDX-License-Identifier: Apache-2.0
"""B4's workload generator (bench/difftx/difftx_workloads.py) against expectations computed here from the
paper's Table 3 and the stated Fig. 2 assumptions: pages per transaction, the share of partial
updates, their sizes and alignment, distinct LPNs, the pools, and the split into device
transactions. Plain Python, no simulator.

Statistical checks use 4.5 standard deviations of the sample mean (computed here from the
distribution the module documents: x uniform on [m - w, m + w] rounded stochastically, so
Var = w^2 / 3 + at most 1/4; a Bernoulli share; a discrete uniform size), so a seed-independent
failure means the generator is off, not unlucky."""
from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench/difftx"))
import difftx_workloads as W  # noqa: E402

TABLE3 = {"fileserver": 6151.1, "varmail": 17.5, "webproxy": 1239.6, "tpcc": 18.0}   # avg. pages per Tx
Z = 4.5


def _within(sample_mean: float, mean: float, var: float, n: int, what: str) -> None:
    sd = math.sqrt(var / n)
    assert abs(sample_mean - mean) <= Z * sd + 1e-9, f"{what}: {sample_mean:.4f} vs {mean:.4f} (sd {sd:.4f})"


def test_table3_means():
    assert {k: s.pages_mean for k, s in W.SHAPES.items()} == TABLE3
    assert W.THRESHOLD == 512 and W.PAGE_BYTES == 4096


@pytest.mark.parametrize("name,scale,txs", [("varmail", 1.0, 4000), ("tpcc", 1.0, 4000),
                                            ("webproxy", 0.02, 2000), ("fileserver", 0.004, 2000)])
def test_shape(name, scale, txs):
    s = W.SHAPES[name]
    wl = W.gen_workload(s, txs, seed=7, scale=scale, meta_base=10_000, data_base=20_000)
    m, w = s.pages_mean * scale, s.pages_spread * scale
    sizes = [len(tx) for tx in wl]
    _within(sum(sizes) / txs, m, w * w / 3 + 0.25, txs, f"{name} pages per tx")
    assert min(sizes) >= math.floor(m - w) and max(sizes) <= math.ceil(m + w)
    ups = [u for tx in wl for u in tx]
    parts = [u for u in ups if not u.full]
    p = s.partial_frac
    _within(len(parts) / len(ups), p, p * (1 - p), len(ups), f"{name} partial share")
    k = (s.partial_max - s.partial_min) // 4 + 1            # sizes: k multiples of 4, uniform
    mean_len = (s.partial_min + s.partial_max) / 2
    var_len = 16 * (k * k - 1) / 12
    _within(sum(u.length for u in parts) / len(parts), mean_len, var_len, len(parts), f"{name} partial bytes")
    for u in parts:
        assert u.length % 4 == 0 and u.offset % 4 == 0
        assert s.partial_min <= u.length <= s.partial_max < W.THRESHOLD
        assert 0 <= u.offset and u.offset + u.length <= W.PAGE_BYTES
        assert 10_000 <= u.lpn < 10_000 + s.meta_pool and u.app_bytes == u.length
    for u in ups:
        if u.full:
            assert 20_000 <= u.lpn < 20_000 + s.data_pool and u.app_bytes == W.PAGE_BYTES
    for tx in wl:
        assert len({u.lpn for u in tx}) == len(tx)
    # offsets spread over the page (uniform over the aligned positions): the mean position of an
    # update's middle is the page's middle
    mids = [u.offset + u.length / 2 for u in parts]
    assert abs(sum(mids) / len(mids) - W.PAGE_BYTES / 2) < 0.05 * W.PAGE_BYTES


def test_full_size_large():
    """At Table 3's size (scale 1) one fileserver / webproxy transaction has its thousands of pages."""
    for name in ("fileserver", "webproxy"):
        s = W.SHAPES[name]
        tx = W.gen_workload(s, 1, seed=3)[0]
        assert s.pages_mean - s.pages_spread - 1 <= len(tx) <= s.pages_mean + s.pages_spread + 1


def test_split_for_device():
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(1, 300)
        tx = [W.Update(i, rng.random() < 0.3, 0, W.PAGE_BYTES) for i in range(n)]
        tx = [u if u.full else W.Update(u.lpn, False, 4, 8) for u in tx]
        parts = W.split_for_device(tx, 64)
        assert len(parts) == -(-n // 64)
        assert sorted(u.lpn for p in parts for u in p) == list(range(n))
        for i, p in enumerate(parts):
            assert 1 <= len(p) <= 64
            assert {u.lpn for u in p} == {u.lpn for u in tx[64 * i:64 * i + 64]}
            if any(u.full for u in p):
                assert p[-1].full
