"""The write buffer's S-Log reference (frag_ref.py, architecture §11.3) composed with the backend's
(cocotb_tests/ats_backend_slog/slog_unit_ref.py, README_slog): random transactions of DIFFWRITEs,
WRITEs, READs, commits and aborts; every page read back through the index and the records' log
pages (base + F, the read merge of §11.5) must equal a naive model in which a transaction's page is
its own copy (written here, with no FRAG slots, reservations or records). Also the reservation
bookkeeping: every UNRESERVE the buffer sends is answered OK, every record is accepted (the buffer
sends at most the room and SLOG_TXFRAGS runs), and no reservation is left once every transaction
ended. Pure Python (no simulator), well under a CPU second per seed.

This checks that the two documents compose into a correct S-Log (the descriptor stream, runs, room,
conversions); the RTL of the FRAG slots is not built yet (rtl/wbuf/README.md "Limits")."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "ats_backend_slog"))

from frag_ref import (BAD_FIELD, ID_RESERVE, ID_UNRESERVE, FragRef, page_from_words,  # noqa: E402
                      parse_stream, words_of)
from slog_unit_ref import OK, SlogRef  # noqa: E402


class World:
    def __init__(self, seed: int, pb: int, nf: int, txfrags: int, thr: int, frags: int, ways: int,
                 lpns: int = 10, num_tx: int = 3, txfull: int = 64):
        self.rng = random.Random(seed)
        self.pb, self.pw, self.lpns, self.num_tx = pb, pb // 4, lpns, num_tx
        self.fr = FragRef(pb, nf, txfrags, thr, txfull=txfull)
        self.nfull = {t: 0 for t in range(1, num_tx + 1)}   # t's full pages (a rewrite each time)
        self.sl = SlogRef(pb, num_tx, 8, ways, frags, txfrags, 64)   # one SLOG_TXFRAGS (§11.3)
        self.base = {n: bytes(pb) for n in range(lpns)}      # the L2P's page per LPN
        self.logpages: dict[int, bytes] = {}                 # LPGN -> log page
        self.full: dict[int, dict[int, bytes]] = {t: {} for t in range(1, num_tx + 1)}
        self.naive_c = {n: bytes(pb) for n in range(lpns)}   # naive: committed pages
        self.naive_t: dict[int, dict[int, bytes]] = {t: {} for t in range(1, num_tx + 1)}
        self.stats = dict(frag_new=0, frag_write=0, rmw=0, convert=0, commit_conv=0, slog=0,
                          refused=0, bad=0, mixed=0)
        self.nreq = 0

    # the device's committed page: base + F (README_slog LOOKUP, the records' bytes)
    def committed(self, lpn: int) -> bytes:
        p = bytearray(self.base[lpn])
        for (lpgn, pofs, off, ln) in self.sl.lookup(lpn):
            p[off:off + ln] = self.logpages[lpgn][pofs:pofs + ln]
        return bytes(p)

    def reserve(self, t, lpn):
        sts, room = self.sl.reserve(t, lpn)
        if sts != OK:
            self.stats["refused"] += 1
        return sts, room

    def _drain_reqs(self):
        for (tag, lpn, t) in self.fr.reqs[self.nreq:]:
            if tag == ID_UNRESERVE:
                assert self.sl.unreserve(t, lpn) == OK, f"UNRESERVE {lpn} of tx {t} refused"
            else:
                assert tag == ID_RESERVE
        self.nreq = len(self.fr.reqs)

    def open_lpns(self, but: int) -> set[int]:
        return {n for t, v in self.naive_t.items() if t != but for n in v}

    # ---- commands
    def diffwrite(self, t, lpn, off, ln, fua=False):
        data = bytes(self.rng.randrange(256) for _ in range(ln)) if ln > 0 else b""
        path, s = self.fr.diffwrite(t, lpn, off, ln, data, fua, lpn in self.full[t], self.reserve)
        if path == "convert":
            self.fr.convert_done(s)                 # (no base read error in this model)
        self._drain_reqs()
        if path == "bad_field":
            self.stats["bad"] += 1
            return BAD_FIELD
        self.stats[path] += 1
        if path in ("rmw", "convert"):
            self.nfull[t] += 1
            base = self.full[t].get(lpn)
            if base is None:
                base = self.committed(lpn) if s is None else self.fr.overlay(s, self.committed(lpn))
            p = bytearray(base)
            p[off:off + ln] = data
            self.full[t][lpn] = bytes(p)
        p = bytearray(self.naive_t[t].get(lpn, self.naive_c[lpn]))
        p[off:off + ln] = data
        self.naive_t[t][lpn] = bytes(p)
        return OK

    def write(self, t, lpn):
        data = bytes(self.rng.randrange(256) for _ in range(self.pb))
        self.fr.write(t, lpn)
        self._drain_reqs()
        self.nfull[t] += 1
        self.full[t][lpn] = data
        self.naive_t[t][lpn] = data

    def plain_write(self, lpn):
        data = bytes(self.rng.randrange(256) for _ in range(self.pb))
        self.base[lpn] = data
        assert self.sl.release(lpn, 255)[0] == OK
        self.naive_c[lpn] = data

    def read(self, t, lpn):
        got = self.full[t].get(lpn) or self.fr.read(t, lpn, self.committed(lpn))
        exp = self.naive_t[t].get(lpn, self.naive_c[lpn])
        assert got == exp, f"READ tx {t} lpn {lpn}: differs at byte " \
                           f"{next(i for i in range(self.pb) if got[i] != exp[i])}"

    def merge(self, lpn):
        if self.sl.entry(lpn) is None:
            return
        self.base[lpn] = self.committed(lpn)
        assert self.sl.release(lpn, 255)[0] == OK

    def commit(self, t):
        r = self.fr.commit(t, self.nfull[t])
        self._drain_reqs()
        if r["slog"] and self.full[t]:
            self.stats["mixed"] += 1
        for s in r["converted"]:
            self.stats["commit_conv"] += 1
            self.full[t][s.lpn] = self.fr.overlay(s, self.committed(s.lpn))
        if r["slog"]:
            self.stats["slog"] += 1
            descs = [dict(txid=t, full=1, lpn=n, ppn=1000 + n, off=0, len=0) for n in self.full[t]]
            descs += [dict(txid=t, full=0, ppn=2000 + d["lpn"], **d) for d in parse_stream(r["stream"])]
            rec = self.sl.record(descs)
            assert rec["sts"] == OK, f"record of tx {t} refused: status {rec['sts']:#x}"
            for j, pg in enumerate(rec["pages"]):
                self.logpages[(rec["lpgn"] + j) & 0xFFFFFFFF] = pg
            assert self.sl.apply(t)[0] == OK
        else:
            assert r["stream"] == []
        for lpn, p in self.full[t].items():       # full pages: the L2P, F emptied (a full write)
            self.base[lpn] = p
            assert self.sl.release(lpn, 255)[0] == OK
        self.fr.commit_done(t)
        self.full[t], self.nfull[t] = {}, 0
        self.naive_c.update(self.naive_t[t])
        self.naive_t[t] = {}
        for n in range(self.lpns):
            assert self.committed(n) == self.naive_c[n], f"after commit of tx {t}: lpn {n} differs"

    def abort(self, t):
        self.fr.abort(t)
        self._drain_reqs()
        self.full[t], self.nfull[t] = {}, 0
        self.naive_t[t] = {}


def run_world(seed, pb=256, nf=4, txfrags=6, thr=128, frags=2, ways=2, steps=1000, txfull=64):
    w = World(seed, pb, nf, txfrags, thr, frags, ways, txfull=txfull)
    rng = w.rng
    for _ in range(steps):
        t = rng.randrange(1, w.num_tx + 1)
        lpn = rng.randrange(w.lpns)
        busy = w.open_lpns(t)
        x = rng.random()
        if x < 0.45:
            if lpn in busy:
                continue                          # one writer per page (the host's locking)
            ln = 4 * min(w.pw, rng.choice([1, 1, 2, 3, 5, 8, 16, 40, w.pw // 2]))
            off = 4 * rng.randrange(w.pw - ln // 4 + 1)
            w.diffwrite(t, lpn, off, ln, fua=rng.random() < 0.05)
        elif x < 0.52:
            if lpn not in busy:
                w.write(t, lpn)
        elif x < 0.62:
            w.read(t, lpn)
        elif x < 0.67:
            if lpn not in busy and lpn not in w.naive_t[t]:
                w.plain_write(lpn)
        elif x < 0.72:
            w.merge(lpn)
        elif x < 0.75:                            # bad inputs: past the page, not word multiples, 0
            off, ln = rng.choice([(w.pb - 4, 8), (2, 4), (0, 6), (8, 0), (w.pb, 4)])
            before = (dict(w.fr.slots), len(w.fr.reqs))
            assert w.diffwrite(t, lpn, off, ln) == BAD_FIELD
            assert (dict(w.fr.slots), len(w.fr.reqs)) == before
        elif x < 0.93:
            w.commit(t)
        else:
            w.abort(t)
    for t in range(1, w.num_tx + 1):
        w.commit(t)
    for s in w.sl.idx.values():
        for e in s:
            assert not e["rsv"] and e["pend"] == 0, f"reservation left: {e}"
    assert not w.fr.slots
    return w.stats


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("cfg", [
    dict(),                                       # 256-byte pages, 4 FRAG slots, 2 fragments per LPN
    dict(nf=2, txfrags=3, thr=64, frags=1, ways=1),   # tight: refusals, conversions by room / txfrags
    dict(pb=64, thr=4096, frags=3),               # thr clipped to PAGE_BYTES - 16 = 48
    dict(nf=4, txfrags=2, thr=128, frags=2),      # SLOG_TXFRAGS < FRAG_SLOTS: a tx's slot count binds
    dict(txfull=1),                               # SLOG_TXFULL 1: most txs with full pages convert
])
def test_frag_ref_composes_with_slog_ref(seed, cfg):
    st = run_world(seed, **cfg)
    # every path is taken (else the parameters test less than they claim)
    for k in ("frag_new", "frag_write", "rmw", "convert", "commit_conv", "slog", "refused", "bad", "mixed"):
        assert st[k] > 0, f"path {k} never taken: {st}"


def test_frag_ref_runs_and_stream():
    """Directed: runs of a mask, the conversions by bytes / room / SLOG_TXFRAGS, and the stream's
    exact words (architecture §11.3 "The record on the media interface")."""
    fr = FragRef(256, 4, 4, 64, txfull=64)
    res = iter([(OK, 2), (OK, 1), (OK, 4), (OK, 0)])
    rsv = lambda t, lpn: next(res)                # noqa: E731
    d = lambda n: page_from_words(list(range(100 * n, 100 * n + n)))   # noqa: E731
    assert fr.diffwrite(1, 7, 8, 8, d(2), False, False, rsv)[0] == "frag_new"     # words 2,3
    assert fr.diffwrite(1, 7, 16, 4, d(1), False, False, rsv)[0] == "frag_write"  # word 4: one run
    assert fr.diffwrite(1, 7, 40, 4, d(1), False, False, rsv)[0] == "frag_write"  # word 10
    assert fr.diffwrite(1, 9, 0, 4, d(1), False, False, rsv)[0] == "frag_new"     # room 1
    assert fr.diffwrite(1, 9, 8, 4, d(1), False, False, rsv)[0] == "frag_write"   # 2 runs > room 1
    assert fr.diffwrite(1, 5, 0, 60, d(15), False, False, rsv)[0] == "frag_new"   # 60 B < 64
    assert fr.diffwrite(1, 5, 60, 4, d(1), False, False, rsv)[0] == "frag_write"  # 64 B: not < thr
    assert fr.diffwrite(1, 3, 0, 4, d(1), False, False, rsv)[0] == "rmw"          # room 0: refused
    assert fr.diffwrite(1, 3, 0, 64, d(16), False, False, rsv)[0] == "rmw"        # len >= thr
    assert fr.diffwrite(1, 3, 250, 8, b"\0" * 8, False, False, rsv)[0] == "bad_field"
    path, s9 = fr.diffwrite(1, 9, 4, 4, d(1), True, False, rsv)
    assert path == "convert"                                                    # FUA: not step 4
    assert fr.find(1, 9) is s9                                                  # kept until its base read is good
    fr.convert_done(s9)
    assert fr.diffwrite(1, 9, 0, 4, d(1), False, False, lambda t, n: (OK, 1))[0] == "frag_new"
    assert fr.diffwrite(1, 9, 8, 4, d(1), False, False, rsv)[0] == "frag_write"   # 2 runs > room 1
    assert [s.lpn for s in fr.of_tx(1)] == [7, 9, 5]
    assert fr.slots[0].runs() == [(2, 3), (10, 1)]
    r = fr.commit(1)
    assert [s.lpn for s in r["sent"]] == [7] and [s.lpn for s in r["converted"]] == [9, 5]
    assert r["stream"] == [(7, 0), (8 | 12 << 16, 0), (7, 0), (40 | 4 << 16, 1),
                           (200, 0), (201, 0), (100, 0), (100, 1)]
    assert [(tag, lpn) for tag, lpn, _ in fr.reqs] == [
        (ID_RESERVE, 7), (ID_RESERVE, 9), (ID_RESERVE, 5), (ID_RESERVE, 3),
        (ID_UNRESERVE, 9), (ID_RESERVE, 9), (ID_UNRESERVE, 9), (ID_UNRESERVE, 5)]
    assert parse_stream(r["stream"])[0] == dict(lpn=7, off=8, len=12, data=page_from_words([200, 201, 100]))
    fr.commit_done(1)
    assert not fr.slots and len(fr.reqs) == 8
    # SLOG_TXFRAGS: a slot whose runs would pass the record's bound is converted
    fr2 = FragRef(256, 4, 2, 128, txfull=64)
    rsv2 = lambda t, lpn: (OK, 4)                 # noqa: E731
    fr2.diffwrite(2, 1, 0, 4, d(1), False, False, rsv2)
    fr2.diffwrite(2, 2, 0, 4, d(1), False, False, rsv2)
    fr2.diffwrite(2, 2, 12, 4, d(1), False, False, rsv2)
    r2 = fr2.commit(2)
    assert [s.lpn for s in r2["sent"]] == [1] and [s.lpn for s in r2["converted"]] == [2]
    assert words_of(fr2.overlay(r2["converted"][0], bytes(256)))[3] == 100


def test_frag_ref_txfrags_bounds_slots():
    """Directed (architecture §11.3 "Step 5 in detail"): with SLOG_TXFRAGS 2 < FRAG_SLOTS 4, t's third
    FRAG slot is refused before any RESERVE (step 1's path, no 0xFD request); another tx still gets one."""
    fr = FragRef(256, 4, 2, 64, txfull=64)
    rsv = lambda t, lpn: (OK, 2)                  # noqa: E731
    d = page_from_words([1])
    assert fr.diffwrite(1, 7, 0, 4, d, False, False, rsv)[0] == "frag_new"
    assert fr.diffwrite(1, 8, 0, 4, d, False, False, rsv)[0] == "frag_new"
    n = len(fr.reqs)
    assert fr.diffwrite(1, 9, 0, 4, d, False, False, rsv)[0] == "rmw"
    assert len(fr.reqs) == n, "a RESERVE was sent for a slot t may not hold"
    assert fr.diffwrite(2, 9, 0, 4, d, False, False, rsv)[0] == "frag_new"
    assert fr.reqs[-1] == (ID_RESERVE, 9, 2)


def test_frag_ref_txfull():
    """Directed (architecture §11.3 "Which FRAG slots become fragments"): a record beside t's full
    pages while their count (before the commit, plus its conversions) is at most SLOG_TXFULL; above
    it every slot is converted (number order when the count was above it at the commit, else the
    walk's conversions first, then the kept slots)."""
    d = page_from_words([1])

    def mk(txfull):
        fr = FragRef(256, 4, 64, 64, txfull=txfull)
        for lpn in (7, 8):
            assert fr.diffwrite(1, lpn, 0, 4, d, False, False, lambda t, n: (OK, 4))[0] == "frag_new"
        assert fr.diffwrite(1, 8, 4, 60, page_from_words(list(range(15))), False, False, None)[0] == "frag_write"
        return fr                                 # slot 7 kept; slot 8 (64 B) converted
    r = mk(2).commit(1, 1)                        # 1 full page + 1 conversion = 2 <= 2: a record
    assert r["slog"] and [s.lpn for s in r["sent"]] == [7] and [s.lpn for s in r["converted"]] == [8]
    r = mk(2).commit(1, 2)                        # 2 + 1 > 2: the kept slot converted after
    assert not r["slog"] and [s.lpn for s in r["converted"]] == [8, 7]
    r = mk(2).commit(1, 3)                        # 3 > 2 at the commit: all, number order
    assert not r["slog"] and [s.lpn for s in r["converted"]] == [7, 8]
