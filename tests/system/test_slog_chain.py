# SPDX-License-Identifier: Apache-2.0
"""tests/system/slog_chain.py (the host model's version chains for S-Log DIFFWRITEs, docs/invariants.md
"S-Log"): pages built here byte by byte from a random history of full versions, TRIMs and fragments
(not with Chain.contents) are recognised as the right state; a fragment skipped, applied out of
commit order or on another version, another LBA's fragment, a state older than a durable event and
garbage are each reported with the invariant's name."""
from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model import page_bytes_for  # noqa: E402
from slog_chain import Chain, frag_bytes  # noqa: E402

PB = 512


def _history(rng: random.Random, lba: int):
    """A Chain and, per event, the page after it (built here) and the fragments since the last full."""
    c = Chain(lba, PB)
    pages, page, frags = [], bytes(PB), []
    version, fno = 0, 0
    for _ in range(rng.randint(3, 14)):
        x = rng.random()
        if x < 0.25 or not page[:4] == b"ATSD" and x < 0.5:
            version += 1
            c.full(version)
            page, frags = page_bytes_for(lba, version, 0, PB), []
        elif x < 0.3:
            c.full(0)
            page, frags = bytes(PB), []
        else:
            fno += 1
            n = 4 * rng.randint(1, 30)
            off = 4 * rng.randint(4, (PB - n) // 4)
            c.frag(fno, off, n)
            page = page[:off] + frag_bytes(lba, fno, n) + page[off + n:]
            frags.append((fno, off, n))
        pages.append((page, list(frags)))
    return c, pages


def test_chain_match():
    rng = random.Random(2)
    caught = {"skip": 0, "order": 0, "other_lba": 0, "durable": 0, "garbage": 0}
    for it in range(300):
        lba = rng.randrange(1000)
        c, pages = _history(rng, lba)
        j = rng.randrange(len(pages))
        assert c.match(pages[j][0])[0] is not None
        got = c.match(pages[j][0])[0]
        assert c.contents(got) == pages[j][0]
        # a required-durable event after j: j is too old (unless the pages are equal)
        if j + 1 < len(pages) and pages[j + 1][0] != pages[j][0]:
            c.events[rng.randrange(j + 1, len(pages))].durable = True
            r, why = c.match(pages[j][0])
            if r is None:
                assert why.startswith("INV-DUR")
                caught["durable"] += 1
            for e in c.events:
                e.durable = False
        page, frags = pages[j]
        if len(frags) >= 2:
            # the last two fragments applied in the other order, or the one before the last skipped
            (f1, o1, n1), (f2, o2, n2) = frags[-2], frags[-1]
            before = pages[j - 2][0]
            swapped = bytearray(before)
            swapped[o2:o2 + n2] = frag_bytes(lba, f2, n2)
            swapped[o1:o1 + n1] = frag_bytes(lba, f1, n1)
            if bytes(swapped) not in [p for p, _ in pages]:
                r, why = c.match(bytes(swapped))
                assert r is None and why.startswith("INV-LBA"), it
                caught["order"] += 1
            skipped = bytearray(before)
            skipped[o2:o2 + n2] = frag_bytes(lba, f2, n2)
            if bytes(skipped) not in [p for p, _ in pages]:
                r, why = c.match(bytes(skipped))
                assert r is None and why.startswith("INV-LBA"), it
                caught["skip"] += 1
        if frags:
            fno, off, n = frags[-1]
            other = bytearray(page)
            other[off:off + n] = frag_bytes(lba + 1, fno, n)
            r, why = c.match(bytes(other))
            assert r is None and why.startswith("INV-LBA"), it
            caught["other_lba"] += 1
        g = bytearray(page)
        g[0] ^= 0x40
        assert c.match(bytes(g))[1].startswith("INV-LBA")
        caught["garbage"] += 1
    assert all(v > 20 for v in caught.values()), caught
    # another LBA's full version
    c = Chain(5, PB)
    c.full(1)
    assert c.match(page_bytes_for(6, 1, 0, PB))[1].startswith("INV-LBA lba 5 reads the data of lba 6")


def test_zeros_after_trim_of_durable_version():
    """Zeros are both 'never written' and a TRIM's state: a durable version then a completed TRIM
    reads zeros without an INV-DUR (the first match was taken: a false violation in
    test_slog_device), and a durable TRIM makes a read of the older version an INV-DUR."""
    c = Chain(7, PB)
    c.full(1).durable = True
    c.full(0)
    assert c.match(bytes(PB)) == (1, "")
    c.events[1].durable = True
    j, why = c.match(page_bytes_for(7, 1, 0, PB))
    assert j is None and why.startswith("INV-DUR")
