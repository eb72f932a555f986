# SPDX-License-Identifier: Apache-2.0
"""B4's S-Log model (bench/difftx/slog_model.py: NAND bytes of (a) from the reference encoder, a
model, not measured) against counts worked out here from docs/persistence.md §10's sizes: a record
is 16 + 16 per META-PU + the fragments' bytes, packed into 4,080-byte payloads from a fresh log page
(a fragment never crossing one); full pages one program each; an LPN with SLOG_FRAGS fragments takes
today's path (a full page); a transaction without fragments writes no record."""
from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench/difftx"), str(ROOT / "cocotb_tests/lib")]

from difftx_workloads import PAGE_BYTES, Update, split_for_device  # noqa: E402
from slog_model import SLOG_FRAGS, shadow_nand, slog_nand  # noqa: E402

P = PAGE_BYTES - 16


def _log_pages(nfull: int, lens: list[int]) -> int:
    """Log pages of one record from a fresh page (_packed_pages below, one record)."""
    return _packed_pages([(nfull, lens)])


def test_model_counts():
    full = [[Update(l, True) for l in range(10 * t, 10 * t + 10)] for t in range(3)]
    m = slog_nand(full, split_for_device, 64, PAGE_BYTES)
    assert m["nand_bytes"] == shadow_nand(full, PAGE_BYTES) == 30 * PAGE_BYTES and m["log_pages"] == 0
    assert m["wa"] == 1.0

    tx = [Update(1, True), Update(2, False, 8, 64)]
    m = slog_nand([tx], split_for_device, 64, PAGE_BYTES)
    assert (m["full_pages"], m["log_pages"]) == (1, 1)
    assert m["wa"] == 2 * PAGE_BYTES / (PAGE_BYTES + 64)

    # SLOG_FRAGS fragments on one LPN, then the next partial update of it is a full page
    txs = [[Update(5, False, 4 * i, 16)] for i in range(SLOG_FRAGS + 2)]
    m = slog_nand(txs, split_for_device, 64, PAGE_BYTES)
    assert m["fragment_fallbacks"] == 1 and m["full_pages"] == 1
    assert m["log_pages"] == SLOG_FRAGS + 1          # the fallback's part has no fragment: no record
    assert m["merges"] == 0


def test_model_random_records():
    """Random transactions under the merge budget: log pages = the sum of each part's record size by
    the formula above (no LPN reaches SLOG_FRAGS: every partial update goes to a distinct LPN)."""
    rng = random.Random(4)
    txs, want_log, want_full, lpn = [], 0, 0, 0
    for _ in range(20):
        tx = []
        for _ in range(rng.randint(1, 90)):
            lpn += 1
            if rng.random() < 0.5:
                tx.append(Update(lpn, True))
            else:
                n = 4 * rng.randint(1, 127)
                tx.append(Update(lpn, False, 4 * rng.randint(0, (PAGE_BYTES - n) // 4), n))
        txs.append(tx)
        for part in split_for_device(tx, 64):
            lens = [u.length for u in part if not u.full]
            nfull = sum(u.full for u in part)
            want_full += nfull
            want_log += _log_pages(nfull, lens) if lens else 0
    m = slog_nand(txs, split_for_device, 64, PAGE_BYTES)
    assert lpn < 192 or m["merges"] > 0
    assert (m["log_pages"], m["full_pages"]) == (want_log, want_full)
    app = sum(u.app_bytes for tx in txs for u in tx)
    assert m["nand_bytes"] == (want_log + want_full + m["merges"]) * PAGE_BYTES and m["app_bytes"] == app


def test_slog_model_records_hook():
    """slog_nand's `records` list: one entry per part with fragments, its fulls and fragments (the
    group-commit model replays them)."""
    txs = [[Update(1, True), Update(2, False, 8, 64)], [Update(3, True)], [Update(4, False, 0, 12)]]
    recs: list = []
    slog_nand(txs, split_for_device, 64, PAGE_BYTES, records=recs)
    assert [(t, p, f, [(g.lpn, g.off, len(g.data)) for g in fr]) for t, p, f, fr in recs] == \
        [(0, 0, [1], [(2, 8, 64)]), (2, 0, [], [(4, 0, 12)])]


def _packed_pages(sizes: list[tuple[int, list[int]]], start: int = 0) -> int:
    """Log pages of records packed back to back from stream offset `start` (§10.1: each record at the
    stream's end, a fragment skipping to the next payload when it would cross one)."""
    pos = start
    for nfull, lens in sizes:
        s0 = pos
        p = s0 + 16 + 16 * (nfull + len(lens))
        for n in lens:
            if p // P != (p + n - 1) // P:
                p = (p // P + 1) * P
            p += n
        pos = p
    return (pos - 1) // P + 1


def test_group_commit_model():
    """bench/difftx/group_commit_model.py's close-on-idle packing against counts worked out here."""
    from group_commit_model import INF, pack
    from atstb.slog_ref import Frag

    def rec(lens, nfull=0):
        return ([100 + i for i in range(nfull)], [Frag(i, 0, 1, 0, bytes(n)) for i, n in enumerate(lens)])
    small = [rec([64]), rec([128], 2), rec([256]), rec([32, 32])]
    arr = [0, 10, 1000, 1005]
    # T = 0: each record on fresh pages (this version's writer), nothing waits, arrivals tied too
    r = pack(small, arr, 0)
    assert r["log_pages"] == 4 and r["added_mean"] == 0 and r["added_max"] == 0
    assert pack(small[:2], [0, 0], 0)["log_pages"] == 2
    # T = 100: records 0, 1 share a page (closed at 10 + 100), records 2, 3 another (closed at 1,105)
    r = pack(small, arr, 100)
    assert r["log_pages"] == 2
    assert r["added_max"] == 110 and r["added_mean"] == (110 + 100 + 105 + 100) / 4
    # T = inf: one page, closed at the last record's arrival
    r = pack(small, arr, INF)
    assert r["log_pages"] == 1 and r["added_max"] == 1005
    # random records, T = inf: the packed stream's pages; T = 0: the sum of each record's own pages
    rng = random.Random(7)
    sizes = [(rng.randint(0, 20), [4 * rng.randint(1, 127) for _ in range(rng.randint(1, 30))]) for _ in range(25)]
    recs = [rec(lens, nf) for nf, lens in sizes]
    arr = sorted(rng.randrange(10**6) for _ in sizes)
    assert pack(recs, arr, INF)["log_pages"] == _packed_pages(sizes)
    assert pack(recs, arr, 0)["log_pages"] == sum(_log_pages(nf, lens) for nf, lens in sizes)
    # a record filling its page closes it at once: no added latency for the one that ends it exactly
    exact = rec([P - 16 - 16])                        # header 16 + one META-PU 16 + its bytes = one payload
    r = pack([exact], [0], 10**6)
    assert r["log_pages"] == 1 and r["added_max"] == 0
    # a later record that fills the open page exactly: the page closes at its arrival (record 0 waits
    # 40, record 1 nothing); record 2, arriving exactly T after, still packs (the window includes it)
    a, b = rec([64]), rec([P - 96 - 32])             # 96 + (32 + P - 128) = P: the page's payload
    r = pack([a, b], [0, 40], 100)
    assert r["log_pages"] == 1 and r["added_max"] == 40 and r["added_mean"] == 20
    r = pack([a, rec([64]), rec([64])], [0, 100, 200], 100)
    assert r["log_pages"] == 1 and r["added_max"] == 300 and r["added_mean"] == (300 + 200 + 100) / 3
    # a timer close, then a record of three pages: it starts on a fresh page and its last page waits T
    big = rec([P - 64, P - 16, 64], 0)                # header 16 + 3 META-PUs 48, then a page each
    assert _packed_pages([(0, [P - 64, P - 16, 64])]) == 3
    r = pack([a, big], [0, 1000], 100)
    assert r["log_pages"] == 4 and r["added_max"] == 100 and r["added_mean"] == 100


def test_group_commit_batch_writer():
    """The batch writer: services from completions (one record at a time), then every waiting record
    packed into one batch that completes after the slowest (or the first) of their services."""
    from group_commit_model import batch, services
    from atstb.slog_ref import Frag
    assert services([0, 10, 100], [50, 80, 200]) == [50, 30, 100]

    def rec(lens):
        return ([], [Frag(i, 0, 1, 0, bytes(n)) for i, n in enumerate(lens)])
    recs = [rec([64]), rec([128]), rec([256]), rec([32])]
    # record 0 alone (done 100); 1 and 2 waited for it: one batch, one page (done 100 + 5); 3 alone
    b = batch(recs, [0, 10, 20, 500], [100, 5, 5, 7], max)
    assert b["log_pages"] == 3 and b["batches"] == [1, 2, 1] and b["done"] == [100, 105, 105, 507]
    b = batch(recs, [0, 10, 20, 500], [100, 5, 9, 7], lambda it: next(iter(it)))
    assert b["done"] == [100, 105, 105, 507]
    b = batch(recs, [0, 10, 20, 500], [100, 5, 9, 7], max)
    assert b["done"] == [100, 109, 109, 507]
    # a record that arrived before the next one in completion order joins its batch when it waits
    b = batch(recs[:2], [50, 10], [30, 1], max)
    assert b["batches"] == [2] and b["done"] == [80, 80] and b["log_pages"] == 1
    # nothing waits: one batch per record, each on pages of its own, the completions unchanged
    arr = [0, 1000, 2000, 3000]
    b = batch(recs, arr, [10, 10, 10, 10], max)
    assert b["log_pages"] == 4 and b["done"] == [10, 1010, 2010, 3010]


def test_traced_device_frag_slots(tmp_path):
    """The FRAG slots the group-commit model replays with: from a snapshot's config.json (diag_difftx
    records them), 0 for a device without them, 32 for a trace made before they were recorded, and
    --frag-slots over all of them; the index size from the same config.json."""
    import json
    from diag_difftx import frag_slots, index_lpns
    from group_commit_model import trace_frag_slots
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "config.json").write_text(json.dumps({"name": "x", "frag_slots": 64, "slog_lpns": 1024}))
    assert (frag_slots(str(snap)), index_lpns(str(snap))) == (64, 1024)
    (snap / "config.json").write_text(json.dumps({"name": "y"}))          # the defaults are left out
    assert (frag_slots(str(snap)), index_lpns(str(snap))) == (0, 256)
    assert trace_frag_slots({"frag_slots": 64}, None) == 64
    assert trace_frag_slots({"frag_slots": 0}, None) == 0
    assert trace_frag_slots({}, None) == 32
    assert trace_frag_slots({"frag_slots": 64}, 16) == 16
