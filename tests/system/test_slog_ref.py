# SPDX-License-Identifier: Apache-2.0
"""The S-Log reference (cocotb_tests/lib/atstb/slog_ref.py) and the recovery oracle's S-Log rules
(recovery_oracle.recover / read_lpn, docs/persistence.md §10), on images written by slog_sim.py: no
simulator, plain Python, seconds.

Every expectation is computed apart from the code under test: record contents from the inputs given
to the writer, the recovered state from slog_sim's logical model (bytes and version identities
per operation, §10.5's rules stated on requests, not on pages). Property tests draw workloads and cuts
from seeded random streams (hypothesis is not in the venv); `ATS_SLOG_SEEDS` sets how many.
"""
from __future__ import annotations

import os
import random
import struct
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slog_sim import GEO, SimDev  # noqa: E402  (puts cocotb_tests/lib on the path)

from atstb.nand_page_model import Meta  # noqa: E402
from atstb.recovery_oracle import (KIND_DATA, KIND_LOG, F_COMMIT, checkpoint_pages_v2, parse_checkpoint_v2,  # noqa: E402
                                   read_lpn, recover, write_image)
from atstb.slog_ref import (F_SLOG, CFlag, Frag, FragLoc, LogWriter, SlogState, find_records, log_page,  # noqa: E402
                            merge_page)

SEEDS = int(os.environ.get("ATS_SLOG_SEEDS", "8"))


@pytest.fixture
def tmp_path():
    """The die images in memory when the machine has /dev/shm (the sweeps write and read them
    thousands of times; a disk file system made that most of the run)."""
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="slog_", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None) as d:
        yield Path(d)


# ------------------------------------------------------------------------------------------------
# format: the writer's pages decode to what it was given
def _rand_record(rng: random.Random, pb: int):
    txid = rng.randint(1, 255)
    nfull = rng.randint(0, 6)
    fulls = [(rng.randrange(1 << 20), rng.randrange(1 << 16)) for _ in range(nfull)]
    frags = []
    for _ in range(rng.randint(0 if nfull else 1, 12)):
        n = 4 * rng.randint(1, min(127, (pb - 16) // 4))
        off = 4 * rng.randint(0, (pb - n) // 4)
        frags.append(Frag(rng.randrange(1 << 20), rng.randrange(1 << 16), rng.randint(1, 127), off,
                          rng.randbytes(n)))
    cf = [CFlag(rng.randint(1, 255), rng.randint(1, 255), rng.randrange(1 << 32)) for _ in range(rng.randint(0, 8))]
    return txid, fulls, frags, cf


@pytest.mark.parametrize("pb,pack", [(512, False), (512, True), (4096, False), (4096, True)])
def test_record_roundtrip(pb, pack):
    """Records of random shape (0-6 full pages, 0-12 fragments up to a page's payload, 0-8 flags)
    written back to back; the pages decoded from their bytes alone give every record back: header,
    flags, META-PUs in order, each fragment's bytes at its DATA-LOC, REC-LEN = pages touched, a
    fragment never across a page; page headers: magic, LPGN, `first`, `used`, zero padding."""
    rng = random.Random(f"rt{pb}{pack}")
    w = LogWriter(pb, lpgn=1000, pack=pack)
    want = []
    for _ in range(60):
        txid, fulls, frags, cf = _rand_record(rng, pb)
        want.append((w.add(txid, fulls, frags, cf), txid, fulls, frags, cf))
    pages = {}
    for i, (lpgn, data) in enumerate(w.pages()):
        assert len(data) == pb
        magic, l2, first, used, z = struct.unpack_from("<2I2HI", data)
        assert (magic, l2, z) == (0x474F4C53, lpgn, 0)
        assert data[used:] == bytes(pb - used)
        lp = log_page(data, 500 + i, 0x10000 + i, lpgn, pb)
        assert lp is not None
        pages[lpgn] = lp
    got, bad, partial = find_records(pages, pb)
    assert bad == partial == 0 and len(got) == len(want)
    P = pb - 16
    for r, (wr, txid, fulls, frags, cf) in zip(got, want):
        assert (r.txid, r.first_lpgn, r.first_byte, r.reclen, r.nbytes) == (txid, wr.first_lpgn, wr.first_byte,
                                                                              wr.reclen, wr.nbytes)
        assert not pack or r.reclen == (r.first_byte - 16 + r.nbytes - 1) // P + 1
        assert not pack and r.first_byte == 16 or pack
        assert r.cflags == cf
        assert r.commit_seq == r.first_seq + r.reclen - 1 == 500 + (r.first_lpgn - 1000) + r.reclen - 1
        assert [(m.lpn, m.ppn) for m in r.metas if not m.is_diff] == fulls
        diffs = [(m, loc) for m, loc in zip(r.metas, r.frag_at) if m.is_diff]
        assert len(diffs) == len(frags)
        for (m, (ppn, doff)), f in zip(diffs, frags):
            assert (m.lpn, m.ppn, m.ver, m.off, m.len) == (f.lpn, f.base_ppn, f.ver, f.off, len(f.data))
            page = pages[1000 + ppn - 0x10000]
            assert page.data[doff:doff + m.len] == f.data


def test_record_rejects():
    """A record whose header, REC-LEN or a META-PU is wrong, or whose page is missing, is not complete."""
    pb = 512
    w = LogWriter(pb, 7)
    w.add(3, [(1, 2)], [Frag(5, 9, 1, 8, bytes(range(200)) * 2), Frag(6, 9, 1, 0, b"\x11" * 300),
                        Frag(6, 9, 2, 100, b"\x22" * 400)])
    raw = w.pages()
    assert len(raw) == 3

    def recs(pg):
        pages = {l: log_page(d, 40 + l, 100 + l, l, pb) for l, d in pg}
        got, bad, partial = find_records({k: v for k, v in pages.items() if v is not None}, pb)
        return len(got), bad, partial

    assert recs(raw) == (1, 0, 0)
    assert recs(raw[:2]) == (0, 0, 1)                  # the last page missing
    assert recs(raw[1:]) == (0, 0, 0)                  # the first missing: no record starts
    for off, val in ((16, 0x02), (17, 2), (23, 4), (24, 0), (28, 1)):   # type, version, REC-LEN, bytes, h3
        d = bytearray(raw[0][1])
        d[off] = val
        assert recs([(raw[0][0], bytes(d))] + raw[1:]) == (0, 1, 0), off
    d = bytearray(raw[0][1])                            # a diff META-PU's length past the record
    struct.pack_into("<I", d, 16 + 16 + 16 + 8, (4000 & 0xFFF) | 8 << 12 | 1 << 24 | 1 << 31)
    assert recs([(raw[0][0], bytes(d))] + raw[1:]) == (0, 1, 0)
    pages = {l: log_page(dd, 40 + l + (5 if l == 9 else 0), 100 + l, l, pb) for l, dd in raw}
    assert find_records(pages, pb) == ([], 1, 0)       # seqs not consecutive


def test_checkpoint_v3_roundtrip():
    rng = random.Random(3)
    plan = [[rng.randrange(GEO.blocks) for _ in range(5)] for _ in range(GEO.ndie)]
    mapping = {rng.randrange(4096): rng.randrange(1 << 16) for _ in range(300)}
    slog = {rng.randrange(4096): (rng.randrange(1 << 16),
                                  [FragLoc(rng.randrange(1 << 16), 4 * rng.randrange(100), 4 * rng.randrange(100),
                                           4 * rng.randrange(1, 100), rng.randrange(1 << 40)) for _ in range(rng.randint(1, 4))])
            for _ in range(40)}
    pages = checkpoint_pages_v2(GEO, plan, mapping, 1 << 33, ckpt_no=5, slog=(123456, slog))
    cp = parse_checkpoint_v2(GEO, pages, 1 << 33)
    assert cp is not None and cp.version == 3 and cp.plan == plan and cp.mapping == mapping
    assert cp.slog_lpgn == 123456 and cp.slog == slog
    cp2 = parse_checkpoint_v2(GEO, checkpoint_pages_v2(GEO, plan, mapping, 9), 9)
    assert cp2.version == 2 and cp2.slog == {}
    # §6 step 1 "parses": a plan block past the die, or a plan longer than the die, does not
    for bad_plan in ([p[:2] + [GEO.blocks] + p[3:] if d == 1 else p for d, p in enumerate(plan)],
                     [list(range(GEO.blocks)) + [0] if d == 2 else p for d, p in enumerate(plan)]):
        assert parse_checkpoint_v2(GEO, checkpoint_pages_v2(GEO, bad_plan, mapping, 9), 9) is None


# ------------------------------------------------------------------------------------------------
# recovery on whole images
def _check(dev: SimDev, tmp: Path, cut: int, torn: str = "random", use_flags: bool = True):
    paths = dev.images(tmp, cut, torn)
    rec = recover(paths, dev.geo, use_flags=use_flags)
    exp = dev.expected(cut)
    got = {l: read_lpn(dev.geo, rec, l) for l in range(dev.nlpn)}
    bad = {l: (got[l] is None, exp[l] is None) for l in got if got[l] != exp[l]}
    assert not bad, f"cut {cut}: LPNs differ from the logical model: {bad}"
    assert rec.slog_bad == 0 and rec.slog_full_mismatch == 0
    return rec, got


def _base(rng, nlpn=12):
    dev = SimDev(rng, nlpn=nlpn)
    for l in range(nlpn):
        dev.write(l)
    dev.checkpoint()
    return dev


def _end(dev: SimDev) -> int:
    return max(r.done for r in dev.reqs) + 1


def _tear(dev: SimDev, seq: int, how: str = "random") -> None:
    """The page of request `seq` torn on the dies (a gap the scan passes: an erased page would end its
    block's scan, and the NAND programs a block's pages in order)."""
    r = next(r for r in dev.reqs if r.seq == seq)
    d, blk, pg = dev.geo.unppn(r.ppn)
    dev.rows[d][blk * dev.geo.ppb + pg] = dev.tear(dev.rows[d][blk * dev.geo.ppb + pg], how)


@pytest.fixture
def cached_decode(monkeypatch):
    """The oracle's page decode (CRC-32C in plain Python) memoised on the raw bytes: the sweep below
    recovers the same pages thousands of times, one of them torn differently each time."""
    import atstb.recovery_oracle as ro
    orig, cache = ro._decode, {}

    def dec(geo, raw):
        if raw not in cache:
            cache[raw] = orig(geo, raw)
        return cache[raw]
    monkeypatch.setattr(ro, "_decode", dec)


@pytest.mark.parametrize("gap_before", [False, True])
def test_torn_every_byte(tmp_path, gap_before, cached_decode):
    """One 3-page record (fragments of 4 LPNs, 2 full pages) cut at every byte boundary of its stream:
    the log page holding that byte torn there (its data from that byte on and its spare erased), the
    earlier pages of the record programmed, the later ones programmed too (the dies complete in any
    order) or erased. Whether or not an earlier request is missing (`gap_before`: the record is then
    decided by completeness), the transaction shows on none of its pages unless every byte is there,
    and on all of them then."""
    rng = random.Random(11)
    dev = _base(rng)
    old = {l: dev.merged_bytes(l) for l in range(12)}
    gap = dev.write(11) if gap_before else None
    frags = [(l, 8 * l, rng.randbytes(4 * rng.randint(50, 70))) for l in range(4)]
    op = dev.slog_tx(2, [9, 10], frags)
    logs = [r for r in dev.reqs if r.seq in op.log_seqs]
    assert len(logs) == 3, len(logs)
    new = {l: dev.merged_bytes(l) for l in range(12)}
    P = dev.geo.page_bytes - 16
    used_last = struct.unpack_from("<H", logs[-1].data, 10)[0]
    nbytes = (len(logs) - 1) * P + used_last - 16
    rows_all = {d: dict(dev.rows[d]) for d in dev.rows}
    results = set()
    written: dict[int, dict] = {}
    paths = [tmp_path / f"d{d}.img" for d in rows_all]
    for b in range(nbytes + 1):
        for later in ("erased", "programmed"):
            rows = {d: dict(rows_all[d]) for d in rows_all}
            if gap is not None:
                d, blk, pg = dev.geo.unppn(dev.reqs[[r.seq for r in dev.reqs].index(gap.seqs[0])].ppn)
                rows[d][blk * dev.geo.ppb + pg] = dev.tear(rows[d][blk * dev.geo.ppb + pg], "random")
            if b < nbytes:
                i, k = divmod(b, P)
                r = logs[i]
                d, blk, pg = dev.geo.unppn(r.ppn)
                img = rows[d][blk * dev.geo.ppb + pg]
                rows[d][blk * dev.geo.ppb + pg] = img[:16 + k] + b"\xff" * (len(img) - 16 - k)
                for r2 in logs[i + 1:]:
                    if later == "erased":
                        d, blk, pg = dev.geo.unppn(r2.ppn)
                        rows[d].pop(blk * dev.geo.ppb + pg)
            for d in rows:
                if written.get(d) != rows[d]:           # rewrite only the dies that changed
                    write_image(paths[d], dev.geo, rows[d])
                    written[d] = rows[d]
            for uf in (True, False):
                rec = recover(paths, dev.geo, use_flags=uf)
                got = {l: read_lpn(dev.geo, rec, l) for l in range(12)}
                want = {**(new if b == nbytes else old), 11: old[11]}
                assert got == want, (b, later, uf)
                results.add(b == nbytes)
    assert results == {False, True}


def test_full_page_missing(tmp_path):
    """A complete record after the gap whose full page is torn (random bits, or half programmed), of
    another txid, carries COMMIT, or has a higher seq than the record, is not applied: none of its fragments or full pages show. A
    completeness flag for it in a later complete record replaces the check (use_flags): applied then;
    without flags, not."""
    rng = random.Random(5)
    cases = ("random", "tail", "txid", "commit", "later")
    for case in cases:
        dev = _base(rng)
        old = {l: dev.merged_bytes(l) for l in range(12)}
        gap = dev.write(11)
        op = dev.slog_tx(3, [7, 8], [(1, 0, rng.randbytes(40)), (2, 100, rng.randbytes(64))])
        new = {l: dev.merged_bytes(l) for l in range(12)}
        fr = next(r for r in dev.reqs if r.seq == op.full_seqs[1])
        d, blk, pg = dev.geo.unppn(fr.ppn)
        row = blk * dev.geo.ppb + pg
        if case in ("random", "tail"):
            dev.rows[d][row] = dev.tear(dev.rows[d][row], case)
        else:
            m = fr.meta
            m = Meta(m.lpn, 4 if case == "txid" else m.txid, m.kind, m.seq + (100 if case == "later" else 0), m.epoch,
                     F_COMMIT if case == "commit" else m.flags)
            dev.rows[d][row] = dev.fmt.image(fr.data, m)
        _tear(dev, gap.seqs[0])
        end = _end(dev) + 100
        want = dict(old)
        for uf in (True, False):
            rec = recover(dev.images(tmp_path, end), dev.geo, use_flags=uf)
            assert {l: read_lpn(dev.geo, rec, l) for l in range(12)} == want, (case, uf)
            assert rec.slog_incomplete == 1 and rec.slog_after_gap == 0
        # a later record flags it: with flags the check is skipped
        dev.flags_pending = [(f, []) for f, _ in dev.flags_pending]
        dev.slog_tx(4, [], [(3, 0, rng.randbytes(16))])
        want = {**new, 11: old[11], 3: dev.merged_bytes(3)}
        rec = recover(dev.images(tmp_path, _end(dev) + 100), dev.geo, use_flags=True)
        got = {l: read_lpn(dev.geo, rec, l) for l in (1, 2, 3, 7)}      # 8's page may be torn
        assert rec.slog_flag_skips == 1 and rec.slog_after_gap == 2
        assert all(got[l] == want[l] for l in (1, 2, 3, 7)), case
        rec = recover(dev.images(tmp_path, _end(dev) + 100), dev.geo, use_flags=False)
        got = {l: read_lpn(dev.geo, rec, l) for l in range(12)}
        assert rec.slog_flag_skips == 0 and rec.slog_after_gap == 1
        assert [got[l] for l in (1, 2, 7, 8)] == [old[l] for l in (1, 2, 7, 8)] and got[3] == want[3], case


def test_bases_after_gap(tmp_path):
    """After the gap a complete record applies only onto the versions its fragments were written
    for: a record whose base was changed by a request lost in the gap (a full write, a merge, an earlier
    record of the same LPN) is not applied, nor is a later one that builds on it; one of another LPN is."""
    rng = random.Random(8)
    for lost in ("write", "merge", "record"):
        dev = _base(rng)
        dev.slog_tx(1, [], [(4, 0, rng.randbytes(32))])
        dev.flags_pending = []
        old = {l: dev.merged_bytes(l) for l in range(12)}
        x = {"write": lambda: dev.write(4), "merge": lambda: dev.merge(4),
             "record": lambda: dev.slog_tx(1, [], [(4, 40, rng.randbytes(32))])}[lost]()
        dev.slog_tx(2, [], [(4, 80, rng.randbytes(32))])
        dev.slog_tx(3, [], [(4, 120, rng.randbytes(32))])
        dev.slog_tx(2, [], [(5, 0, rng.randbytes(32))])
        for s in x.seqs:
            _tear(dev, s)
        rec = recover(dev.images(tmp_path, 10 ** 7), dev.geo)
        got = {l: read_lpn(dev.geo, rec, l) for l in range(12)}
        assert got[4] == old[4], lost
        assert got[5] != old[5] and rec.slog_after_gap == 1 and rec.slog_incomplete == 2, lost


def test_open_tx_across_checkpoint(tmp_path):
    """A checkpoint while an S-Log transaction is open (scan_from < seq_base): its full pages before the
    checkpoint join its pending list and its record after it applies them; a record committed before
    the checkpoint (in it already) only empties its txid's pending list, so a later commit of that
    txid does not bring its pages back over a newer write."""
    rng = random.Random(21)
    dev = _base(rng)
    dev.open_slog(5, [3])
    dev.slog_tx(2, [7], [(1, 16, rng.randbytes(32))])
    dev.checkpoint()
    dev.write(7)
    dev.tx(2, [8])
    dev.slog_tx(5, [], [(2, 64, rng.randbytes(48))])
    rec, got = _check(dev, tmp_path, _end(dev))
    assert rec.checkpoint.scan_from < rec.checkpoint.seq_base and rec.slog_commits == 1
    assert got[7] == dev.merged_bytes(7) and got[3] == dev.merged_bytes(3)


def test_reads_after_merges(tmp_path):
    """Fragments piled on bases, merged (stale merges among them: a full write after the merge's
    base), re-fragmented on the merged page, a checkpoint with the S-Log section between: every LPN
    reads base + its fragments in commit order, recovered from the images with no cut."""
    for seed in range(3):
        rng = random.Random(100 + seed)
        dev = _base(rng, nlpn=8)
        for i in range(40):
            l = rng.randrange(8)
            if len(dev.F.get(l, [])) < 4:
                dev.slog_tx(rng.randint(1, 3), [], [(l, 4 * rng.randrange(100), rng.randbytes(4 * rng.randint(1, 30)))])
            elif rng.random() < 0.5:
                dev.merge(l)
            else:
                dev.write(l)
            if i == 20:
                dev.checkpoint()
        # a stale MERGE page: merging a base that a later full write replaced
        l = next(l for l in range(8) if dev.F.get(l))
        base, data = dev.l2p[l], dev.merged_bytes(l)
        dev.write(l)
        dev.data_page(l, 0, 0x10 | F_SLOG, data, epoch=base)
        dev.ops.append(type(dev.ops[0])("merge", [dev.seq - 1], lpn=l, base=base, new=dev.reqs[-1].ppn))
        rec, got = _check(dev, tmp_path, _end(dev))
        assert rec.merges >= 1 and rec.slog_commits >= 10 and rec.frags
        assert rec.checkpoint.version == 3 and rec.checkpoint.slog
        assert got[l] == dev.merged_bytes(l)


def test_slog_state_reclaim():
    """The merge / reclaim rules: live log pages and pinned bases never erasable; a merge frees its
    fragments' pages; the firmware's budget merges oldest fragment first down to SLOG_LO with
    hysteresis; a stale merge (the base changed) changes nothing."""
    st = SlogState({1: 100, 2: 101, 3: 102}, {})
    st.F = {1: [FragLoc(500, 16, 0, 8, 10), FragLoc(501, 16, 8, 8, 12)], 2: [FragLoc(500, 40, 0, 4, 11)],
            3: [FragLoc(502, 16, 0, 4, 13)]}
    assert st.live_log_pages() == {500, 501, 502} and st.pinned() == {100, 101, 102}
    assert not st.erasable([500, 600]) and not st.erasable([101]) and st.erasable([503, 99])
    assert st.merge_order() == [1, 2, 3]
    assert st.merges_needed(hi=3, lo=1, lpns_max=100) == []                 # not above HI
    assert st.merges_needed(hi=2, lo=1, lpns_max=100) == [1, 2]             # down to LO: 502 left
    assert st.merges_needed(hi=5, lo=5, lpns_max=4) == []                   # 3 of 4: not above 3/4
    assert st.merges_needed(hi=5, lo=5, lpns_max=3) == [1, 2]               # above 3/4: down to half
    assert not st.merge(1, 999, 700, 20) and st.l2p[1] == 100               # stale
    assert st.merge(1, 100, 700, 12)                                         # fragments below seq 12 go
    assert st.l2p[1] == 700 and [f.seq for f in st.F[1]] == [12]
    assert st.merge(1, 100, 700, 13) and 1 not in st.F                      # replayed again: idempotent
    assert st.erasable([100, 501]) and not st.erasable([500])              # merged: old base, its log page free
    st.map_full(2, 800)
    assert 2 not in st.F and st.erasable([500])
    st.trim(3)
    assert st.live_log_pages() == set() and st.pinned() == set()
    assert merge_page(b"abcdefgh", [(2, b"XY"), (3, b"Z")]) == b"abXZefgh"


def test_property_cuts(tmp_path):
    """Random workloads (plain writes, TRIMs, COMMIT / ABORT transactions, S-Log transactions of full
    pages and 1-2 fragment runs per LPN, merges, checkpoints) on 4 dies, one program in 10 slow, cut at an instant
    after the last checkpoint (every third), torn pages random or half-programmed: every LPN reads what the logical
    model says; with and without the completeness flags the same state; the LPGN counter past every
    log page."""
    stats = dict(after=0, incomplete=0, skips=0, merges=0, commits=0, cuts=0)
    for seed in range(SEEDS):
        rng = random.Random(f"slog{seed}")
        dev = SimDev(rng, p_slow=0.1)
        dev.random_ops(40)
        end = _end(dev)
        for cut in range(dev.ckpt_time + 1, end + 1, 3):
            torn = "tail" if cut % 4 else "random"
            rec, got = _check(dev, tmp_path, cut, torn)
            rec2, got2 = _check(dev, tmp_path, cut, torn, use_flags=False)
            assert got == got2 and rec.frags == rec2.frags and rec.mapping == rec2.mapping
            assert rec.slog_after_gap == rec2.slog_after_gap
            assert rec.next_lpgn >= max([r.meta.epoch + 1 for r in dev.reqs
                                          if r.meta.kind == KIND_LOG and r.meta.flags & F_SLOG and r.done < cut], default=0)
            stats["after"] += rec.slog_after_gap
            stats["incomplete"] += rec.slog_incomplete
            stats["skips"] += rec.slog_flag_skips
            stats["merges"] += rec.merges
            stats["commits"] += rec.slog_commits
            stats["cuts"] += 1
    print(stats)
    # the campaign reached the cases it is for
    assert stats["after"] > 0 and stats["incomplete"] > 0 and stats["merges"] > 0 and stats["commits"] > 0
    assert stats["skips"] > 0
    assert KIND_DATA == 0


def test_lpgn_counter_well_formed_only(tmp_path):
    """§10.5 step 4: the LPGN counter after recovery is 1 + the largest LPGN of the valid, well-formed
    log pages read; a log page that is not well formed (here: its spare `epoch` raised above its data's
    LPGN word) does not count, is left out of the log byte stream (its record is not found) and still
    fills its `seq` in the durable prefix (§10.1 "Ignored"). The firmware's rule (recovery.c
    sl_scan_page)."""
    rng = random.Random(11)
    dev = _base(rng)
    dev.slog_tx(3, [], [(1, 0, rng.randbytes(40))])
    before = {l: dev.merged_bytes(l) for l in range(12)}
    op = dev.slog_tx(4, [5], [(2, 8, rng.randbytes(64))])
    after = {l: dev.merged_bytes(l) for l in range(12)}
    end = _end(dev) + 100
    rec0 = recover(dev.images(tmp_path, end), dev.geo)
    assert rec0.slog_bad == 0 and rec0.slog_commits == 2
    lp = next(r for r in dev.reqs if r.seq == op.log_seqs[-1])
    assert lp.meta.kind == KIND_LOG and lp.meta.flags & F_SLOG and len(op.log_seqs) == 1
    d, blk, pg = dev.geo.unppn(lp.ppn)
    m = lp.meta
    dev.rows[d][blk * dev.geo.ppb + pg] = dev.fmt.image(lp.data, Meta(m.lpn, m.txid, m.kind, m.seq, m.epoch + 1000,
                                                                        m.flags))
    rec1 = recover(dev.images(tmp_path, end), dev.geo)
    assert rec1.next_lpgn == rec0.next_lpgn - 1 == m.epoch
    assert rec1.slog_bad == 1 and rec1.slog_commits == 1
    assert rec1.prefix_end == rec0.prefix_end          # the malformed page keeps its place
    # tx 4's record is not found, so its log page is no commit point: tx 4 stays open and is dropped
    assert after[2] != before[2] and after[5] != before[5]
    assert {l: read_lpn(dev.geo, rec0, l) for l in range(12)} == after
    assert {l: read_lpn(dev.geo, rec1, l) for l in range(12)} == before


def test_packed_records(tmp_path):
    """Records packed back to back into shared log pages (§10.1; slog_sim.SimDev.slog_group), beside
    today's unpacked ones and the other operations: at every other cut the reference recovery gives
    the logical model's state. Records that end in one log page share its `seq` as their commit
    point (§10.5 step 2: each applied there, in stream order), replayed in the durable prefix (at or
    above the checkpoint's `seq_base`) and applied after the gap (a die lagging: p_slow); some of
    them have fragments of one LPN, often over the same bytes, so the order shows in the page."""
    both = same = after = 0
    for seed in range(4):
        rng = random.Random(f"packed{seed}")
        dev = SimDev(rng, p_slow=0.2, p_pack=0.5)
        dev.random_ops(40)
        slog = [o for o in dev.ops if o.kind == "slog"]
        commits = [o.commit for o in slog]
        shared = {c for c in commits if commits.count(c) > 1}
        # commit points shared by records with a fragment of one LPN each
        lpn_shared = {c for c in shared
                      if len([l for o in slog if o.commit == c for l in {f[0] for f in o.frags}])
                      > len({l for o in slog if o.commit == c for l in {f[0] for f in o.frags}})}
        assert shared, "no two records share a commit point: the test packs nothing"
        for cut in range(dev.ckpt_time + 1, _end(dev) + 1, 2):
            rec, _ = _check(dev, tmp_path, cut, "tail" if cut % 3 else "random")
            live = range(rec.checkpoint.seq_base, rec.prefix_end)
            both += sum(1 for c in shared if c in live)
            same += sum(1 for c in lpn_shared if c in live)
            after += rec.slog_after_gap
    assert both and same and after, (both, same, after)
