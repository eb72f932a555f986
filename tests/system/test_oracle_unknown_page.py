# SPDX-License-Identifier: Apache-2.0
"""The recovery oracle and the checkpoint's "unknown page" (docs/persistence.md §10.4): a fragment of
the version-3 S-Log section with PPN 0xFFFFFFFF and `lg16` = the low 16 bits of its log page's LPGN.
Its LPGN is the newest value below `slog_lpgn` with those bits; it reads MEDIA_ERROR; recovery keeps
it in F[lpn] (seq, off, len, byte offset, the base as `base_ppn`) until a write or TRIM of the LPN
empties F. Plain Python on images of slog_sim.py (the reference writer): no simulator, about a second.

Expectations are computed apart from the code under test: the LPGN is the one the log page's spare
carries (not the formula), contents from slog_sim's logical model (`expected`), except that an LPN
whose F holds the unknown page must read MEDIA_ERROR.
"""
from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slog_sim import GEO, SimDev  # noqa: E402  (puts cocotb_tests/lib on the path)

from atstb.recovery_oracle import checkpoint_pages_v2, parse_checkpoint_v2, read_lpn, recover  # noqa: E402
from atstb.slog_ref import FragLoc, LogWriter  # noqa: E402

UNKNOWN = 0xFFFFFFFF


@pytest.fixture
def tmp_path():
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="unk_", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None) as d:
        yield Path(d)


def _is_media_error(x) -> bool:
    """read_lpn's answer for an unreadable LPN: neither data nor None (unmapped), named MEDIA_ERROR."""
    return x is not None and not isinstance(x, (bytes, bytearray)) and "MEDIA_ERROR" in repr(x)


def _section_roundtrip(slog_lpgn: int, lpgns: list[int]) -> list[int | None]:
    """A version-3 checkpoint whose LPN i has one unknown-page fragment of LPGN lpgns[i]; the LPGNs
    the oracle's parser gives back."""
    slog = {i: (100 + i, [FragLoc(UNKNOWN, 16 + 4 * i, 8, 4, 7 + i, lpgn=g)]) for i, g in enumerate(lpgns)}
    pages = checkpoint_pages_v2(GEO, [[2]] * GEO.ndie, {i: 100 + i for i in range(len(lpgns))}, 50,
                                slog=(slog_lpgn, slog))
    # the words as §10.4 lays them out: PPN 0xFFFFFFFF, {off, len}, {byte offset 15:0, lg16 31:16}
    words = [int.from_bytes(b"".join(p[16:] for p in pages)[k:k + 4], "little")
             for k in range(0, len(pages) * (GEO.page_bytes - 16), 4)]
    for i, g in enumerate(lpgns):
        j = next(k for k in range(len(words) - 5) if words[k:k + 4] == [i, 100 + i, 1, UNKNOWN])
        assert words[j + 4] == 8 | 4 << 16 and words[j + 5] == (16 + 4 * i) | (g & 0xFFFF) << 16
    cp = parse_checkpoint_v2(GEO, pages, 50)
    assert cp is not None and cp.version == 3 and cp.slog_lpgn == slog_lpgn
    out = []
    for i in range(len(lpgns)):
        base, fr = cp.slog[i]
        f = fr[0]
        assert (base, f.ppn, f.doff, f.off, f.len, f.seq) == (100 + i, UNKNOWN, 16 + 4 * i, 8, 4, 7 + i)
        out.append(f.lpgn)
    return out


def test_section_lpgn():
    """Every LPGN the writer may name ([slog_lpgn - 2^16, slog_lpgn - 1]) comes back from its 16 bits,
    across 2^16 and 2^32 - 1 boundaries (counters 5, 2^16, 0x2_0003, 0xFFFF_FFF0); outside that window
    the writer refuses (as the firmware's ATS_E_RANGE)."""
    rng = random.Random(404)
    for top in (5, 1 << 16, 0x2_0003, 0x7654_3210, 0xFFFF_FFF0):
        lo = max(0, top - (1 << 16))
        want = sorted({lo, top - 1, min(top - 1, lo + 1)} | {rng.randrange(lo, top) for _ in range(40)})
        assert _section_roundtrip(top, want) == want, hex(top)
        for bad in {top, top + 7} | ({top - (1 << 16) - 1} if top > (1 << 16) else set()):
            with pytest.raises(ValueError):
                _section_roundtrip(top, [bad])


def test_unknown_page_recovered(tmp_path):
    """A device whose checkpoint names an unknown page: LPN a (unknown + a known fragment, then one more
    fragment after the checkpoint) reads MEDIA_ERROR, its F keeps all three in order with the unknown
    one's LPGN; LPN c (unknown) rewritten after the checkpoint reads the new page with F empty; LPN e
    (unknown) trimmed reads unmapped; LPN b (a known fragment) and the untouched LPNs read base +
    fragments. The LPGN counter starts near 2^17 so the unknown page's 16 bits wrap."""
    rng = random.Random(40)
    dev = SimDev(rng, nlpn=8)
    dev.writer = LogWriter(GEO.page_bytes, 0x1_FFFD)        # (before any record: LPGNs 0x1FFFD on)
    for l in range(8):
        dev.write(l)
    a, b, c, e = 1, 2, 4, 6
    dev.slog_tx(3, [], [(7, 0, rng.randbytes(400))])                 # LPGN 0x1FFFD
    dev.slog_tx(3, [], [(5, 8, rng.randbytes(200))])                 # 0x1FFFE
    op_a = dev.slog_tx(1, [], [(a, 64, rng.randbytes(40))])          # 0x1FFFF
    dev.slog_tx(2, [], [(b, 128, rng.randbytes(24)), (a, 200, rng.randbytes(12))])   # 0x20000
    dev.slog_tx(5, [], [(c, 0, rng.randbytes(8)), (e, 32, rng.randbytes(16))])       # 0x20001
    lpgn_of = {r.ppn: r.meta.epoch for r in dev.reqs}
    # the unknown pages: the writer cannot name a's first, c's and e's log pages
    unknown = {}
    for l in (a, c, e):
        f = dev.F[l][0]
        unknown[l] = FragLoc(UNKNOWN, f.doff, f.off, f.len, f.seq, lpgn=lpgn_of[f.ppn])
        dev.F[l][0] = unknown[l]
    slog_lpgn = dev.writer.lpgn0 + len(dev.writer.stream) // dev.writer.P
    assert unknown[a].lpgn < 0x2_0000 <= slog_lpgn and unknown[c].lpgn >= 0x2_0000, (hex(unknown[a].lpgn), hex(slog_lpgn))
    dev.checkpoint()
    f_at_ckpt = {l: list(fs) for l, fs in dev.F.items() if fs}
    dev.slog_tx(4, [], [(a, 300, rng.randbytes(20))])
    dev.write(c)
    dev.trim(e)
    cut = max(r.done for r in dev.reqs) + 1
    rec = recover(dev.images(tmp_path, cut), dev.geo)
    cp = rec.checkpoint
    assert cp.version == 3 and cp.slog_lpgn == slog_lpgn
    assert {l: fs for l, (_, fs) in cp.slog.items()} == f_at_ckpt      # the section, LPGNs included
    assert rec.slog_bad == rec.slog_full_mismatch == 0
    # F after recovery: a keeps the unknown fragment first, c and e are emptied
    fa = rec.frags[a]
    assert len(fa) == 3 and fa[0] == unknown[a] and fa[0].lpgn == lpgn_of[next(
        r.ppn for r in dev.reqs if r.seq == op_a.log_seqs[0])]
    assert fa[1].ppn != UNKNOWN and fa[2].ppn != UNKNOWN and fa[2].seq >= cp.seq_base
    assert c not in rec.frags and e not in rec.frags
    assert UNKNOWN not in {f.ppn for fs in rec.frags.values() for f in fs if fs is not fa}
    assert rec.next_lpgn >= slog_lpgn
    exp = dev.expected(cut)
    got = {l: read_lpn(dev.geo, rec, l) for l in range(dev.nlpn)}
    assert _is_media_error(got[a]), got[a]
    assert got[e] is None and exp[e] is None
    for l in range(dev.nlpn):
        if l != a:
            assert got[l] == exp[l], l
    assert got[b] != dev.page_data(rec.mapping[b])          # b's fragment applied, not the bare base
