# SPDX-License-Identifier: Apache-2.0
"""Host unit tests of the firmware's S-Log functions (sw/firmware/ftl/ftl.c, `ats_slog_*`: DiffTx's
differential log, docs/persistence.md section 10) against the independent plain-Python reference
cocotb_tests/lib/atstb/slog_ref.py (written from the same section, never from this C).

* log pages: section 10.1's well-formedness on pages of the reference writer with random header damage;
* records: seeded random records (full and diff META-PUs, completeness flags, multi-page bodies), written
  one per fresh page (this version's writer) and packed back to back; every start the reader finds,
  every parsed field and META-PU (with where a fragment's bytes lie) equal to `find_records`;
* torn records: a multi-page record cut at every byte (the pages from that byte's page on not kept)
  and every byte of it flipped: the C's verdict (parses / a page missing / does not parse) and fields
  equal the reference's;
* the decision after the gap (section 10.5 step 3): random transactions on a random mapping, some full
  pages and log pages missing, with and without completeness flags: the records applied and the state
  (L2P, F) equal the reference's step, and flags on and off agree on a correct device's images;
* the fragment lists: clear / append / MERGE pages / the read merge (base + F in commit order);
* checkpoint version 3's S-Log section: C writer -> reference reader, reference writer -> C reader;
  whole version-3 checkpoints (ats_ckpt_page / ats_ckpt_parse, what ckpt.c and recovery.c use) both ways;
* section 10.5 steps 2-3 as the firmware would call them (ats_prefix, ats_slog_find / parse,
  ats_slog_replay, ats_slog_complete / apply) on the images of tests/system/slog_sim.py against
  recovery_oracle.recover, and ats_slog_replay = ats_replay (the same function without the S-Log
  part) on records without the S-Log.

`ATS_FTL_C` (environment) builds another ftl.c instead (how the mutants of sw/firmware/README.md "S-Log"
were run). Only the standard library, pytest and ctypes are used.
"""
from __future__ import annotations

import ctypes
import os
import random
import struct
import subprocess
import sys
from ctypes import POINTER, c_int, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb.recovery_oracle import Geometry, checkpoint_pages_v2, parse_checkpoint_v2  # noqa: E402
from atstb.slog_ref import (CFlag, Frag, FragLoc, LogPage, LogWriter, SlogState, find_records,  # noqa: E402
                            log_page, parse_record, read_merged)

FTL_DIR = ROOT / "sw" / "firmware" / "ftl"
FTL_C = Path(os.environ.get("ATS_FTL_C", FTL_DIR / "ftl.c"))
ATS_OK, ATS_E_FORMAT, ATS_E_FULL, ATS_E_NAND, ATS_E_STATE = 0, -2, -3, -4, -7
KIND_DATA, KIND_LOG = 0, 1
F_COMMIT, F_ABORT = 0x01, 0x08
UNMAPPED = 0xFFFFFFFF
SEEDS = list(range(6))


class LPage(ctypes.Structure):
    _fields_ = [("seq", c_uint64), ("ppn", c_uint32), ("lpgn", c_uint32), ("first", c_uint16), ("used", c_uint16),
                ("data", c_void_p)]


class Rec(ctypes.Structure):
    _fields_ = [("first_seq", c_uint64), ("commit_seq", c_uint64)] + \
        [(n, c_uint32) for n in ("first_lpgn", "first_byte", "nbytes", "txid", "txlen", "reclen", "ncf", "hlen")] + \
        [(n, c_uint32 * 8) for n in ("cf_txid", "cf_reclen", "cf_lpgn")]


class Mpu(ctypes.Structure):
    _fields_ = [("lpn", c_uint32), ("ppn", c_uint32), ("dloc", c_uint32), ("off", c_uint16), ("len", c_uint16),
                ("ver", c_uint8), ("is_diff", c_uint8), ("pad", c_uint8 * 2)]


class FragC(ctypes.Structure):
    _fields_ = [("seq", c_uint64), ("ppn", c_uint32), ("lpgn", c_uint32), ("doff", c_uint16), ("off", c_uint16),
                ("len", c_uint16), ("pad", c_uint16)]


class Tab(ctypes.Structure):
    _fields_ = [("cap", c_uint32), ("frags", c_uint32), ("n", c_uint32), ("lpn", POINTER(c_uint32)),
                ("nf", POINTER(c_uint8)), ("f", POINTER(FragC))]


class ScanRec(ctypes.Structure):     # ats_rec_t
    _fields_ = [("seq", c_uint64), ("ppn", c_uint32), ("lpn", c_uint32), ("epoch", c_uint32),
                ("txid", c_uint8), ("kind", c_uint8), ("flags", c_uint8), ("pad", c_uint8)]


PTR_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_uint32)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    so = tmp_path_factory.mktemp("slog") / "libftl_slog.so"
    extra = os.environ.get("ATS_FTL_CFLAGS", "").split()      # e.g. -fsanitize=address,undefined (with LD_PRELOAD)
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{FTL_DIR}",
                    *extra, "-o", str(so), str(FTL_C)], check=True)
    L = ctypes.CDLL(str(so))
    sig = {
        "ats_slog_page": (c_int, [c_void_p, c_uint32, c_uint32, POINTER(c_uint16), POINTER(c_uint16)]),
        "ats_slog_parse": (c_int, [c_uint32, PTR_FN, c_void_p, c_uint32, c_uint32, POINTER(Rec)]),
        "ats_slog_mpu": (c_int, [c_uint32, PTR_FN, c_void_p, POINTER(Rec), c_uint32, POINTER(Mpu),
                                 POINTER(c_uint32), POINTER(c_uint32)]),
        "ats_slog_find": (c_int, [c_uint32, PTR_FN, c_void_p, POINTER(c_uint32), c_uint32, POINTER(c_uint32),
                                  POINTER(c_uint32), c_uint32, POINTER(c_uint32), POINTER(c_uint32)]),
        "ats_slog_count": (c_uint32, [POINTER(Tab), c_uint32]),
        "ats_slog_clear": (None, [POINTER(Tab), c_uint32]),
        "ats_slog_append": (c_int, [POINTER(Tab), c_uint32, POINTER(FragC)]),
        "ats_slog_merge": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, c_uint32, c_uint32, c_uint32,
                                   c_uint64]),
        "ats_slog_read": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, c_uint32, PTR_FN, c_void_p,
                                  c_void_p, c_uint32]),
        "ats_slog_apply": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, c_uint32, PTR_FN, c_void_p,
                                   POINTER(Rec), c_int]),
        "ats_slog_complete": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, c_uint32, PTR_FN, c_void_p,
                                      POINTER(Rec), PTR_FN, c_void_p, POINTER(c_uint32), c_uint32, c_int,
                                      POINTER(c_int)]),
        "ats_slog_ckpt_words": (c_uint32, [POINTER(Tab)]),
        "ats_slog_ckpt_put": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, c_uint32, POINTER(c_uint32),
                                      c_uint32]),
        "ats_slog_ckpt_get": (c_int, [POINTER(Tab), POINTER(c_uint32), c_uint32, POINTER(c_uint32), c_uint32,
                                      POINTER(c_uint32)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


# ==================================================================================================
# helpers: the kept log pages as the C sees them
class Pages:
    """LPGN -> LogPage (reference) and the same as ats_lpage_t for the C (by an ats_lpage_fn)."""

    def __init__(self, page_bytes: int, pages: dict[int, LogPage]):
        self.pb = page_bytes
        self.ref = pages
        self.bufs = {k: ctypes.create_string_buffer(p.data, page_bytes) for k, p in pages.items()}
        self.c = {k: LPage(p.seq, p.ppn, p.lpgn, p.first, p.used, ctypes.addressof(self.bufs[k]))
                  for k, p in pages.items()}
        self.fn = PTR_FN(lambda ctx, lpgn: ctypes.addressof(self.c[lpgn]) if lpgn in self.c else None)


def kept(writer_pages, page_bytes: int, seq0: int = 100, ppn0: int = 5000, drop=()) -> dict[int, LogPage]:
    """The writer's pages as scanned log pages (seq and PPN by LPGN), minus `drop`; a page that is not
    well formed (section 10.1) is not kept, as recovery ignores it."""
    out = {}
    for lpgn, data in writer_pages:
        if lpgn in drop:
            continue
        p = log_page(data, seq0 + lpgn, ppn0 + lpgn, lpgn, page_bytes)
        if p is not None:
            out[lpgn] = p
    return out


def rand_record(rng: random.Random, pb: int, txid: int | None = None, flags_from=()):
    """Random full pages, fragments (4-aligned, up to a quarter page) and completeness flags."""
    txid = txid or rng.randint(1, 255)
    fulls = [(rng.randrange(64), rng.randrange(1 << 20)) for _ in range(rng.randint(0, 3))]
    frags = []
    for _ in range(rng.randint(0 if fulls else 1, 12)):
        n = 4 * rng.randint(1, max(1, min(pb - 16, pb // 4) // 4))
        off = 4 * rng.randrange((pb - n) // 4 + 1)
        frags.append(Frag(rng.randrange(64), rng.randrange(1 << 20), rng.randint(1, 127), off, rng.randbytes(n)))
    cf = list(flags_from) or [CFlag(rng.randint(1, 255), rng.randint(1, 255), rng.randrange(1 << 32))
                              for _ in range(rng.randint(0, 8))]
    return txid, fulls, frags, cf[:8]


def c_parse(lib, P: Pages, lpgn: int, b: int):
    r = Rec()
    st = lib.ats_slog_parse(P.pb, P.fn, None, lpgn, b, ctypes.byref(r))
    return st, r


def c_metas(lib, P: Pages, r: Rec):
    out = []
    for i in range(r.txlen):
        m, dp, do = Mpu(), c_uint32(), c_uint32()
        assert lib.ats_slog_mpu(P.pb, P.fn, None, ctypes.byref(r), i, ctypes.byref(m), ctypes.byref(dp),
                                ctypes.byref(do)) == ATS_OK
        out.append(((m.lpn, m.ppn, bool(m.is_diff), m.off, m.len, m.ver, m.dloc),
                    (dp.value, do.value) if m.is_diff else None))
    return out


def same_record(lib, P: Pages, st: int, r: Rec, ref, why: str) -> None:
    """The C's verdict and fields against the reference's parse_record."""
    if ref is None:
        assert st == (ATS_E_NAND if why.endswith("missing") else ATS_E_FORMAT), (st, why)
        return
    assert st == ATS_OK, (st, ref)
    assert (r.txid, r.first_lpgn, r.first_byte, r.reclen, r.nbytes, r.first_seq, r.commit_seq) == \
        (ref.txid, ref.first_lpgn, ref.first_byte, ref.reclen, ref.nbytes, ref.first_seq, ref.commit_seq)
    assert [CFlag(r.cf_txid[i], r.cf_reclen[i], r.cf_lpgn[i]) for i in range(r.ncf)] == ref.cflags
    assert c_metas(lib, P, r) == [((m.lpn, m.ppn, m.is_diff, m.off, m.len, m.ver, m.dloc), fa)
                                  for m, fa in zip(ref.metas, ref.frag_at)]


def c_find(lib, P: Pages):
    lp = sorted(P.ref)
    arr = (c_uint32 * max(1, len(lp)))(*lp)
    cap = 4096
    ol, ob = (c_uint32 * cap)(), (c_uint32 * cap)()
    nbad, npart = c_uint32(), c_uint32()
    k = lib.ats_slog_find(P.pb, P.fn, None, arr, len(lp), ol, ob, cap, ctypes.byref(nbad), ctypes.byref(npart))
    assert k >= 0
    return [(ol[i], ob[i]) for i in range(k)], nbad.value, npart.value


# ==================================================================================================
# log pages (section 10.1)
@pytest.mark.parametrize("seed", SEEDS)
def test_log_page_header(lib, seed):
    rng = random.Random(seed)
    pb = rng.choice([64, 128, 512, 4096])
    w = LogWriter(pb, lpgn=rng.randrange(1 << 20), pack=bool(seed & 1))
    for _ in range(6):
        w.add(*rand_record(rng, pb))
    checked = rejected = 0
    for lpgn, data in w.pages():
        for _ in range(40):
            d = bytearray(data)
            epoch = lpgn
            k = rng.randrange(5)
            if k == 1:
                d[rng.randrange(16)] ^= 1 << rng.randrange(8)
            elif k == 2:
                struct.pack_into("<H", d, rng.choice([8, 10]), rng.randrange(1 << 16))
            elif k == 3:
                struct.pack_into("<H", d, rng.choice([8, 10]), rng.choice([0, 12, 14, 16, pb - 4, pb, pb + 4, 0xFFFF]))
            elif k == 4:
                epoch ^= 1 << rng.randrange(32)
            ref = log_page(bytes(d), 0, 0, epoch, pb)
            f, u = c_uint16(), c_uint16()
            buf = ctypes.create_string_buffer(bytes(d), pb)
            st = lib.ats_slog_page(buf, pb, epoch, ctypes.byref(f), ctypes.byref(u))
            if ref is None:
                assert st == ATS_E_FORMAT, (lpgn, k, bytes(d[:16]).hex())
                rejected += 1
            else:
                assert st == ATS_OK and (f.value, u.value) == (ref.first, ref.used)
            checked += 1
    assert rejected > checked // 10


# ==================================================================================================
# records: the reader finds what the reference finds
@pytest.mark.parametrize("pack", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_records_found(lib, seed, pack):
    rng = random.Random(1000 + seed)
    pb = rng.choice([64, 128, 256, 4096])
    w = LogWriter(pb, lpgn=rng.randrange(1 << 16), pack=pack)
    for _ in range(rng.randint(3, 20)):
        w.add(*rand_record(rng, pb))
        if pack and rng.random() < 0.2:
            w.close_page()
    pages = w.pages()
    drop = {lg for lg, _ in pages if rng.random() < 0.1}
    kp = kept(pages, pb, drop=drop)
    if seed % 3 == 2 and kp:                          # another request's page between two log pages: a seq gap
        cut = rng.choice(sorted(kp))
        for lg in kp:
            kp[lg].seq += lg >= cut
    P = Pages(pb, kp)
    recs, bad, partial = find_records(P.ref, pb)
    got, cbad, cpart = c_find(lib, P)
    assert got == [(r.first_lpgn, r.first_byte) for r in recs]
    assert (cbad, cpart) == (bad, partial)
    assert len(recs) > 0 or drop
    for r in recs:
        st, cr = c_parse(lib, P, r.first_lpgn, r.first_byte)
        same_record(lib, P, st, cr, r, "")


# a multi-page record torn at each byte, and each byte flipped
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_record_torn_every_byte(lib, seed):
    rng = random.Random(2000 + seed)
    pb = 128
    w = LogWriter(pb, lpgn=7, pack=bool(seed & 1))
    if seed & 1:
        w.add(*rand_record(rng, pb))       # an earlier record in the same stream: the next one starts inside a page
    txid, fulls, frags, cf = rand_record(rng, pb)
    frags += [Frag(rng.randrange(64), rng.randrange(1 << 20), 1, 0, rng.randbytes(4 * rng.randint(4, 20)))
              for _ in range(8)]
    wr = w.add(txid, fulls, frags, cf)
    w.add(*rand_record(rng, pb))
    pages = dict(w.pages())
    assert wr.reclen >= 3
    P = (pb - 16)
    q0 = wr.first_byte - 16
    n_ok = n_nand = n_fmt = 0
    for x in range(wr.nbytes):
        cut = wr.first_lpgn + (q0 + x) // P          # the page a program of byte x tears: it and later ones not kept
        Pg = Pages(pb, kept(pages.items(), pb, drop={lg for lg in pages if lg >= cut}))
        ref, why = parse_record(Pg.ref, wr.first_lpgn, wr.first_byte, pb)
        st, cr = c_parse(lib, Pg, wr.first_lpgn, wr.first_byte)
        same_record(lib, Pg, st, cr, ref, why)
        assert ref is None and st == ATS_E_NAND
        # byte x flipped in a page that still reads valid (a writer's bug or a bit the ECC let through)
        lg, o = wr.first_lpgn + (q0 + x) // P, 16 + (q0 + x) % P
        d = bytearray(pages[lg])
        d[o] ^= 1 << rng.randrange(8)
        Pg = Pages(pb, kept([(k, bytes(d) if k == lg else v) for k, v in pages.items()], pb))
        ref, why = parse_record(Pg.ref, wr.first_lpgn, wr.first_byte, pb)
        st, cr = c_parse(lib, Pg, wr.first_lpgn, wr.first_byte)
        same_record(lib, Pg, st, cr, ref, why)
        n_ok += ref is not None
        n_fmt += ref is None and not why.endswith("missing")
        n_nand += ref is None and why.endswith("missing")
        assert c_find(lib, Pg)[1:] == find_records(Pg.ref, pb)[1:]
    # each page of the record with another (well-formed) `first` / `used`
    for lg in range(wr.first_lpgn, wr.first_lpgn + wr.reclen):
        for _ in range(24):
            d = bytearray(pages[lg])
            struct.pack_into("<2H", d, 8, rng.choice([0xFFFF, 16 + 4 * rng.randrange((pb - 16) // 4)]),
                             16 + 4 * rng.randrange((pb - 16) // 4 + 1))
            Pg = Pages(pb, kept([(k, bytes(d) if k == lg else v) for k, v in pages.items()], pb))
            ref, why = parse_record(Pg.ref, wr.first_lpgn, wr.first_byte, pb)
            st, cr = c_parse(lib, Pg, wr.first_lpgn, wr.first_byte)
            same_record(lib, Pg, st, cr, ref, why)
            assert c_find(lib, Pg) == (lambda r: ([(x.first_lpgn, x.first_byte) for x in r[0]], r[1], r[2]))(
                find_records(Pg.ref, pb))
    assert n_ok and n_fmt      # both verdicts met (a body byte parses, a header byte does not)


# ==================================================================================================
# the fragment lists
def tab_new(cap: int, frags: int):
    arrs = ((c_uint32 * cap)(), (c_uint8 * cap)(), (FragC * (cap * frags))())
    t = Tab(cap, frags, 0, arrs[0], arrs[1], arrs[2])
    t._keep = arrs
    return t


def tab_dict(t: Tab) -> dict[int, list[FragLoc]]:
    out = {}
    for e in range(t.n):
        fs = [t.f[e * t.frags + i] for i in range(t.nf[e])]
        out[t.lpn[e]] = [FragLoc(f.ppn, f.doff, f.off, f.len, f.seq) for f in fs]
    return out


def l2p_dict(l2p, nlba: int) -> dict[int, int]:
    return {i: l2p[i] for i in range(nlba) if l2p[i] != UNMAPPED}


@pytest.mark.parametrize("seed", SEEDS)
def test_fragment_lists_and_read(lib, seed):
    rng = random.Random(3000 + seed)
    pb, nlba, frags = 256, 24, 4
    t = tab_new(16, frags)
    l2p = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
    st = SlogState()
    data = {}                                         # PPN -> page data
    ppn = iter(range(100, 100000))
    seq = 0
    for _ in range(600):
        lpn = rng.randrange(nlba)
        seq += 1
        op = rng.random()
        if op < 0.2:                                  # a full write
            p = next(ppn)
            data[p] = rng.randbytes(pb)
            st.map_full(lpn, p)
            l2p[lpn] = p
            lib.ats_slog_clear(ctypes.byref(t), lpn)
        elif op < 0.25:                               # TRIM
            st.trim(lpn)
            l2p[lpn] = UNMAPPED
            lib.ats_slog_clear(ctypes.byref(t), lpn)
        elif op < 0.75 and lpn in st.l2p:             # a committed fragment
            n = 4 * rng.randint(1, 16)
            off, doff = 4 * rng.randrange((pb - n) // 4 + 1), 16 + 4 * rng.randrange((pb - 16 - n) // 4 + 1)
            p = next(ppn)
            data[p] = rng.randbytes(pb)
            f = FragLoc(p, doff, off, n, seq)
            full = len(st.F.get(lpn, [])) >= frags or (len(st.F) >= 16 and lpn not in st.F)
            rc = lib.ats_slog_append(ctypes.byref(t), lpn, ctypes.byref(FragC(seq, p, 0, doff, off, n, 0)))
            assert rc == (ATS_E_FULL if full else ATS_OK)
            if not full:
                st.F.setdefault(lpn, []).append(f)
        elif lpn in st.l2p:                           # a MERGE page, sometimes stale
            base = st.l2p[lpn] if rng.random() < 0.8 else next(ppn)
            p = next(ppn)
            cut = rng.choice([f.seq for f in st.F.get(lpn, [])] + [seq])
            old = read_merged(data.__getitem__, st.l2p[lpn], [f for f in st.F.get(lpn, []) if f.seq < cut])
            ok = st.merge(lpn, base, p, cut)
            if ok:
                data[p] = old
            rc = lib.ats_slog_merge(ctypes.byref(t), l2p, nlba, lpn, base, p, cut)
            assert rc == int(ok)
        assert l2p_dict(l2p, nlba) == st.l2p
        assert tab_dict(t) == {k: v for k, v in st.F.items() if v}
        assert lib.ats_slog_count(ctypes.byref(t), lpn) == len(st.F.get(lpn, []))
    bufs = {k: ctypes.create_string_buffer(v, pb) for k, v in data.items()}
    rd = PTR_FN(lambda ctx, p: ctypes.addressof(bufs[p]) if p in bufs else None)
    for lpn in range(nlba):
        out = ctypes.create_string_buffer(pb)
        rc = lib.ats_slog_read(ctypes.byref(t), l2p, nlba, lpn, rd, None, out, pb)
        ref = read_merged(data.__getitem__, st.l2p.get(lpn), st.F.get(lpn, []))
        if ref is None:
            assert rc != ATS_OK
        else:
            assert rc == ATS_OK and out.raw == ref
    assert any(len(v) > 1 for v in st.F.values())


# ==================================================================================================
# section 10.5 step 3: the decision after the gap
def gen_history(rng: random.Random, pb: int, nlba: int, ntx: int, frags: int):
    """A correct device's records after the gap: each transaction's full pages (kind 0, its txid, seqs
    below its record's) then its record on fresh log pages; diffs on the LPN's current base with
    ver = |F| + 1. Returns (initial l2p, writer pages, seq of each LPGN, the full pages, records)."""
    l2p0 = {lpn: 10 + lpn for lpn in range(nlba) if rng.random() < 0.9}
    cur = SlogState(dict(l2p0), {})
    w = LogWriter(pb, lpgn=rng.randrange(1 << 16))
    ppn = iter(range(1000, 1 << 20))
    seq = 500
    lpgn_seq, fullpages, written, pending_flags = {}, {}, [], []
    for _ in range(ntx):
        txid = rng.randint(1, 8)
        lpns = rng.sample(range(nlba), rng.randint(1, 5))
        fulls, fr = [], []
        for lpn in lpns:
            k = len(cur.F.get(lpn, []))
            if lpn in cur.l2p and k < frags and rng.random() < 0.7:
                for j in range(rng.randint(1, min(2, frags - k))):
                    n = 4 * rng.randint(1, 8)
                    fr.append(Frag(lpn, cur.l2p[lpn], k + j + 1, 4 * rng.randrange((pb - n) // 4 + 1), rng.randbytes(n)))
            else:
                p = next(ppn)
                fullpages[p] = ScanRec(seq, p, lpn, 0, txid, KIND_DATA, 0, 0)
                seq += 1
                fulls.append((lpn, p))
        cf = pending_flags[:8]
        del pending_flags[:8]
        wr = w.add(txid, fulls, fr, cf)
        for i in range(wr.reclen):
            lpgn_seq[wr.first_lpgn + i] = seq
            seq += 1
        for lpn, p in fulls:
            cur.map_full(lpn, p)
        for f in fr:
            cur.F.setdefault(f.lpn, []).append(FragLoc(0, 0, f.off, len(f.data), 0))
        written.append((wr, fulls))
        if rng.random() < 0.6:
            pending_flags.append(wr.cflag)
    return l2p0, w.pages(), lpgn_seq, fullpages, written


def ref_after_gap(st: SlogState, recs, by_ppn, flags: set, use_flags: bool):
    """recovery_oracle's step 5 loop on the reference's records (same rules, without the image)."""
    applied, skips = [], 0
    for sr in sorted(recs, key=lambda r: r.commit_seq):
        if use_flags and sr.key in flags:
            full_ok = True
            skips += 1
        else:
            full_ok = all((p := by_ppn.get(m.ppn)) is not None and p.kind == KIND_DATA and p.txid == sr.txid
                          and p.lpn == m.lpn and not p.flags & (F_COMMIT | F_ABORT) and p.seq < sr.first_seq
                          for m in sr.metas if not m.is_diff)
        ok = full_ok and st.bases_ok(sr)
        if ok:
            st.apply_record(sr)
        applied.append(ok)
    return applied, skips


def c_after_gap(lib, P: Pages, t: Tab, l2p, nlba: int, by_ppn, use_flags: bool):
    starts, _, _ = c_find(lib, P)
    recs = [c_parse(lib, P, lg, b)[1] for lg, b in starts]
    fl = [x for r in recs for i in range(r.ncf) for x in (r.cf_txid[i], r.cf_reclen[i], r.cf_lpgn[i])]
    flags = (c_uint32 * max(1, len(fl)))(*fl)
    keep = {p: ScanRec(r.seq, r.ppn, r.lpn, r.epoch, r.txid, r.kind, r.flags, 0) for p, r in by_ppn.items()}
    at = PTR_FN(lambda ctx, p: ctypes.addressof(keep[p]) if p in keep else None)
    applied, skips = [], 0
    for r in sorted(recs, key=lambda r: r.commit_seq):
        sk = c_int()
        ok = lib.ats_slog_complete(ctypes.byref(t), l2p, nlba, P.pb, P.fn, None, ctypes.byref(r), at, None, flags,
                                   len(fl) // 3, int(use_flags), ctypes.byref(sk))
        assert ok in (0, 1)
        if ok:
            assert lib.ats_slog_apply(ctypes.byref(t), l2p, nlba, P.pb, P.fn, None, ctypes.byref(r), 1) == ATS_OK
        skips += sk.value
        applied.append(bool(ok))
    return applied, skips


@pytest.mark.parametrize("seed", SEEDS)
def test_after_gap_decision(lib, seed):
    rng = random.Random(4000 + seed)
    pb, nlba, frags = 256, 16, 4
    totals = {"applied": 0, "refused": 0, "skips": 0}
    for trial in range(12):
        l2p0, pages, lpgn_seq, fullpages, written = gen_history(rng, pb, nlba, rng.randint(3, 12), frags)
        # a cut: some log pages torn / never programmed, some full pages missing, some full pages lying
        drop = {lg for lg, _ in pages if rng.random() < 0.06}
        if trial % 3 == 0 and pages:
            drop |= {lg for lg, _ in pages if lg >= rng.choice(pages)[0]}
        by_ppn = {p: r for p, r in fullpages.items() if rng.random() > 0.08}
        for p in list(by_ppn):
            if rng.random() < 0.05:                   # a page at m1 that is not the record's full page
                r = by_ppn[p]
                f = [r.seq, r.ppn, r.lpn, 0, r.txid, r.kind, 0, 0]
                k = rng.randrange(5)
                if k == 0:
                    f[2] ^= 1
                elif k == 1:
                    f[4] = f[4] % 8 + 1
                elif k == 2:
                    f[5] = KIND_LOG
                elif k == 3:
                    f[6] = rng.choice([F_COMMIT, F_ABORT])
                else:
                    f[0] += 10000
                by_ppn[p] = ScanRec(*f)
        kp = {}
        for lg, d in pages:
            if lg not in drop:
                p = log_page(d, lpgn_seq[lg], 50000 + lg, lg, pb)
                kp[lg] = p
        P = Pages(pb, kp)
        recs, _, _ = find_records(P.ref, pb)
        flags = {c for r in recs for c in r.cflags}
        results = {}
        for use_flags in (True, False):
            st = SlogState(dict(l2p0), {})
            ref = ref_after_gap(st, recs, by_ppn, flags, use_flags)
            t = tab_new(nlba, frags)
            l2p = (c_uint32 * nlba)(*[l2p0.get(i, UNMAPPED) for i in range(nlba)])
            got = c_after_gap(lib, P, t, l2p, nlba, by_ppn, use_flags)
            assert got == ref, (trial, use_flags)
            assert l2p_dict(l2p, nlba) == st.l2p
            assert tab_dict(t) == {k: v for k, v in st.F.items() if v}
            results[use_flags] = (st.l2p, st.F, ref[0])
            totals["applied"] += sum(ref[0])
            totals["refused"] += len(ref[0]) - sum(ref[0])
            totals["skips"] += ref[1]
        if not any((p.seq, p.lpn, p.txid, p.kind, p.flags) != (fullpages[k].seq, fullpages[k].lpn, fullpages[k].txid,
                                                               fullpages[k].kind, fullpages[k].flags)
                   for k, p in by_ppn.items()):
            # a correct device's images (no page lies about itself): flags only save checks. A flagged
            # record's full pages were programmed, so a dropped one belongs to an unflagged record.
            flagged_missing = any(c.first_lpgn == wr.first_lpgn and p not in by_ppn
                                  for wr, fulls in written for c in flags for _, p in fulls)
            if not flagged_missing:
                assert results[True] == results[False], trial
    assert totals["applied"] and totals["refused"] and totals["skips"], totals


# ==================================================================================================
# checkpoint version 3's S-Log section (section 10.4)
GEO = Geometry(1, 1, 16, 8, 256, 16)


def rand_section(rng: random.Random, nlba: int, frags: int):
    F, l2p = {}, {}
    for lpn in rng.sample(range(nlba), rng.randint(0, nlba)):
        l2p[lpn] = rng.randrange(1 << 32)
        F[lpn] = [FragLoc(rng.randrange(1 << 32), 4 * rng.randrange(1 << 14), rng.randrange(1 << 16),
                          rng.randrange(1 << 16), rng.randrange(1 << 64)) for _ in range(rng.randint(1, frags))]
    return l2p, F


@pytest.mark.parametrize("seed", SEEDS)
def test_ckpt_section_round_trip(lib, seed):
    rng = random.Random(5000 + seed)
    nlba, frags = 40, 4
    mapping = {i: rng.randrange(1 << 20) for i in range(5)}
    plan = [[1, 2, 3]]
    for _ in range(10):
        l2p, F = rand_section(rng, nlba, frags)
        lpgn = rng.randrange(1 << 32)
        # reference writer -> C reader (entries sorted by LPN there)
        pages = checkpoint_pages_v2(GEO, plan, mapping, 9, slog=(lpgn, {k: (l2p[k], F[k]) for k in F}))
        plain = checkpoint_pages_v2(GEO, plan, mapping, 9)
        stream = [w for pg in pages for w in struct.unpack(f"<{GEO.page_bytes // 4}I", pg)[4:]]
        n_plain = 8 + 1 + len(plan[0]) + (GEO.blocks + 1) // 2 + 2 * len(mapping)
        assert len(plain) == 1
        sec = stream[n_plain:]
        t = tab_new(nlba, frags)
        cl2p = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        arr = (c_uint32 * len(sec))(*sec)
        out_lpgn = c_uint32()
        used = lib.ats_slog_ckpt_get(ctypes.byref(t), cl2p, nlba, arr, len(sec), ctypes.byref(out_lpgn))
        assert used == 2 + sum(3 + 5 * len(v) for v in F.values()) and out_lpgn.value == lpgn
        assert tab_dict(t) == F and l2p_dict(cl2p, nlba) == l2p
        # C writer -> reference reader (the table's order: entries moved by clears)
        for lpn in rng.sample(sorted(F), len(F) // 3):
            lib.ats_slog_clear(ctypes.byref(t), lpn)
            del F[lpn]
        nw = lib.ats_slog_ckpt_words(ctypes.byref(t))
        buf = (c_uint32 * nw)()
        assert lib.ats_slog_ckpt_put(ctypes.byref(t), cl2p, nlba, lpgn, buf, nw - 1) == ATS_E_FULL
        assert lib.ats_slog_ckpt_put(ctypes.byref(t), cl2p, nlba, lpgn, buf, nw) == nw
        words = stream[:n_plain] + list(buf)
        per = GEO.page_bytes // 4 - 4
        n = -(-len(words) // per)
        cpages = []
        for i in range(n):
            w = [0x50435441, 3, i, n] + words[i * per:(i + 1) * per]
            w += [0] * (GEO.page_bytes // 4 - len(w))
            cpages.append(struct.pack(f"<{len(w)}I", *w))
        cp = parse_checkpoint_v2(GEO, cpages, 9)
        assert cp is not None and cp.version == 3 and cp.slog_lpgn == lpgn and cp.mapping == mapping
        assert cp.slog == {k: (l2p[k], F[k]) for k in F}


class GeoC(ctypes.Structure):      # ats_geo_t
    _fields_ = [(n, c_uint32) for n in ("ndie", "ways", "blocks", "ppb", "page_bytes", "nlba", "ntx", "die_w", "pg_w")]


class CkptC(ctypes.Structure):    # ats_ckpt_t
    _fields_ = [("version", c_uint32), ("seq_base", c_uint64), ("scan_from", c_uint64),
                ("ckpt_no", c_uint32), ("n_map", c_uint32), ("n_bad", c_uint32),
                ("plan_len", POINTER(c_uint16)), ("plan", POINTER(c_uint16)),
                ("bad", POINTER(c_uint32)), ("cap_bad", c_uint32), ("erase_cnt", POINTER(c_uint16)),
                ("map_lpn", POINTER(c_uint32)), ("map_ppn", POINTER(c_uint32)), ("cap_map", c_uint32),
                ("slog", POINTER(c_uint32)), ("n_slog", c_uint32), ("cap_slog", c_uint32)]


PAGE_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_uint32)


@pytest.mark.parametrize("seed", range(3))
def test_ckpt_v3_pages(lib, seed):
    """Whole version-3 checkpoints (what ckpt.c writes and recovery.c reads: ats_ckpt_page /
    ats_ckpt_parse with the section of ats_slog_ckpt_put / _get): C pages -> the reference's
    parse_checkpoint_v2, the reference's checkpoint_pages_v2 -> C, with sections spanning pages; a
    later page that says version 2 in a version-3 checkpoint, and a section the reader refuses."""
    lib.ats_geo_init.restype = c_int
    lib.ats_ckpt_page.restype, lib.ats_ckpt_page.argtypes = c_int, [POINTER(GeoC), POINTER(CkptC), c_uint32,
                                                                     POINTER(c_uint32)]
    lib.ats_ckpt_pages.restype, lib.ats_ckpt_pages.argtypes = c_uint32, [POINTER(GeoC), POINTER(CkptC)]
    lib.ats_ckpt_parse.restype = c_int
    lib.ats_ckpt_parse.argtypes = [POINTER(GeoC), POINTER(CkptC), PAGE_FN, c_void_p]
    rng = random.Random(7000 + seed)
    geo = Geometry(1, 2, 16, 8, 256, 16)
    g = GeoC()
    nlba, frags, cap = 64, 4, 2 + 64 * 23
    assert lib.ats_geo_init(ctypes.byref(g), 1, 2, 16, 8, 256, nlba, 8) == 0
    for _ in range(8):
        plan = [sorted(rng.sample(range(2, 16), rng.randint(0, 6))) for _ in range(geo.ndie)]
        mapping = {l: rng.randrange(1 << 12) for l in rng.sample(range(nlba), rng.randint(0, 30))}
        l2p, F = rand_section(rng, nlba, frags)
        F = {k: F[k] for k in list(F)[:12]}
        for k in F:
            l2p[k] = rng.randrange(1 << 12)
        lpgn, seq, sf = rng.randrange(1 << 32), rng.randrange(1, 1 << 40), 0
        ec = [rng.randrange(1 << 16) for _ in range(geo.ndie * geo.blocks)]
        # C writer: the section's words from the table, then the pages
        t = tab_new(nlba, frags)
        for k, fr in F.items():
            for f in fr:
                assert lib.ats_slog_append(ctypes.byref(t), k, ctypes.byref(FragC(f.seq, f.ppn, 0, f.doff, f.off, f.len, 0))) == 0
        cl2p = (c_uint32 * nlba)(*[l2p.get(i, UNMAPPED) for i in range(nlba)])
        words = (c_uint32 * cap)()
        nw = lib.ats_slog_ckpt_put(ctypes.byref(t), cl2p, nlba, lpgn, words, cap)
        assert nw == 2 + sum(3 + 5 * len(v) for v in F.values())
        keep = dict(plen=(c_uint16 * geo.ndie)(*[len(p) for p in plan]),
                    plan=(c_uint16 * (geo.ndie * geo.blocks))(*[b for p in plan for b in p + [0] * (geo.blocks - len(p))]),
                    bad=(c_uint32 * 4)(), ec=(c_uint16 * len(ec))(*ec),
                    ml=(c_uint32 * max(1, nlba))(*sorted(mapping)),
                    mp=(c_uint32 * max(1, nlba))(*[mapping[k] for k in sorted(mapping)]))
        c = CkptC(3 if F else 2, seq, sf, 5, len(mapping), 0, keep["plen"], keep["plan"], keep["bad"], 4, keep["ec"],
                  keep["ml"], keep["mp"], nlba, words, nw, cap)
        n = lib.ats_ckpt_pages(ctypes.byref(g), ctypes.byref(c))
        pages = []
        for i in range(n):
            out = (c_uint32 * (geo.page_bytes // 4))()
            assert lib.ats_ckpt_page(ctypes.byref(g), ctypes.byref(c), i, out) == 0
            pages.append(bytes(out))
        cp = parse_checkpoint_v2(geo, pages, seq)
        assert cp is not None and cp.version == (3 if F else 2) and cp.mapping == mapping and cp.plan == plan
        assert cp.erase_cnt == ec and cp.ckpt_no == 5
        if F:
            assert cp.slog_lpgn == lpgn and cp.slog == {k: (l2p[k], F[k]) for k in F}
        # reference writer -> C reader, then the section through ats_slog_ckpt_get
        ref = checkpoint_pages_v2(geo, plan, mapping, seq, sf, ckpt_no=6, erase_cnt=ec,
                                  slog=(lpgn, {k: (l2p[k], F[k]) for k in F}))
        bufs = [(c_uint32 * (geo.page_bytes // 4)).from_buffer_copy(p) for p in ref]

        def parse(bufs):
            fn = PAGE_FN(lambda ctx, i: ctypes.addressof(bufs[i]) if i < len(bufs) else None)
            k2 = dict(plen=(c_uint16 * geo.ndie)(), plan=(c_uint16 * (geo.ndie * geo.blocks))(), bad=(c_uint32 * 4)(),
                      ec=(c_uint16 * len(ec))(), ml=(c_uint32 * nlba)(), mp=(c_uint32 * nlba)(), sw=(c_uint32 * cap)())
            r = CkptC(0, seq, 0, 0, 0, 0, k2["plen"], k2["plan"], k2["bad"], 4, k2["ec"], k2["ml"], k2["mp"], nlba,
                      k2["sw"], 0, cap)
            return lib.ats_ckpt_parse(ctypes.byref(g), ctypes.byref(r), fn, None), r, k2

        st, r, k2 = parse(bufs)
        assert st == 0 and r.version == 3 and r.ckpt_no == 6 and r.n_map == len(mapping)
        assert {k2["ml"][i]: k2["mp"][i] for i in range(r.n_map)} == mapping
        assert [list(k2["ec"])] == [ec]
        t2 = tab_new(nlba, frags)
        l2 = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        got = c_uint32()
        assert lib.ats_slog_ckpt_get(ctypes.byref(t2), l2, nlba, k2["sw"], r.n_slog, ctypes.byref(got)) == \
            2 + sum(3 + 5 * len(v) for v in F.values())
        assert got.value == lpgn and tab_dict(t2) == F and l2p_dict(l2, nlba) == {k: l2p[k] for k in F}
        if len(bufs) > 1:                   # every page carries the checkpoint's version
            bad = [(c_uint32 * (geo.page_bytes // 4)).from_buffer_copy(p) for p in ref]
            bad[-1][1] = 2
            assert parse(bad)[0] == ATS_E_FORMAT
        if F:                               # a section with nf 0: the reader refuses it
            ref0 = checkpoint_pages_v2(geo, plan, mapping, seq, sf, ckpt_no=6, erase_cnt=ec,
                                       slog=(lpgn, {**{k: (l2p[k], F[k]) for k in F}, 63 if 63 not in F else 62: (1, [])}))
            st, r, k2 = parse([(c_uint32 * (geo.page_bytes // 4)).from_buffer_copy(p) for p in ref0])
            assert st == 0
            assert lib.ats_slog_ckpt_get(ctypes.byref(tab_new(nlba, frags)), l2, nlba, k2["sw"], r.n_slog,
                                         ctypes.byref(got)) == ATS_E_FORMAT


def test_ckpt_section_rejects(lib):
    """What the reader refuses (section 10.4: nf >= 1, one entry per LPN, the data offset's word {15:0, 0})."""
    nlba, frags = 8, 2
    good = [7, 1, 3, 0x1234, 1, 0x55, 4 | 8 << 16, 32, 99, 0]

    def get(words, cap_frags=frags):
        t = tab_new(nlba, cap_frags)
        l2p = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        arr = (c_uint32 * max(1, len(words)))(*words)
        return lib.ats_slog_ckpt_get(ctypes.byref(t), l2p, nlba, arr, len(words), ctypes.byref(c_uint32()))

    assert get(good) == len(good)
    assert get(good[:-1]) == ATS_E_FORMAT                      # short
    assert get([7, 1, 3, 0x1234, 0]) == ATS_E_FORMAT           # nf 0
    assert get([7, 1, 9, 0x1234, 1, 0x55, 4, 32, 99, 0]) == ATS_E_FORMAT      # LPN >= nlba
    bad = list(good)
    bad[7] |= 1 << 16
    assert get(bad) == ATS_E_FORMAT                            # reserved bits of the data offset word
    assert get([7, 2] + good[2:] + good[2:]) == ATS_E_FORMAT   # the LPN twice
    assert get([7, 1, 3, 0, 3] + [1, 4 << 16, 16] * 3 + [0, 0] * 3) == ATS_E_FULL   # more than SLOG_FRAGS


def test_record_lpn_out_of_range(lib):
    """A META-PU naming an LPN the device does not have (persistence.md section 10.2: recovery applies
    such a record nowhere): not complete, and apply refuses it before changing anything."""
    pb, nlba = 128, 8
    w = LogWriter(pb, lpgn=3)
    w.add(2, [(1, 77)], [Frag(nlba, 40, 1, 0, bytes(range(8)))])
    P = Pages(pb, kept(w.pages(), pb))
    st, r = c_parse(lib, P, 3, 16)
    assert st == ATS_OK
    t = tab_new(4, 2)
    l2p = (c_uint32 * nlba)(*([5] * nlba))
    keep = ScanRec(1, 77, 1, 0, 2, KIND_DATA, 0, 0)
    at = PTR_FN(lambda ctx, p: ctypes.addressof(keep) if p == 77 else None)
    sk = c_int()
    assert lib.ats_slog_complete(ctypes.byref(t), l2p, nlba, pb, P.fn, None, ctypes.byref(r), at, None,
                                 (c_uint32 * 1)(), 0, 1, ctypes.byref(sk)) == 0
    assert lib.ats_slog_apply(ctypes.byref(t), l2p, nlba, pb, P.fn, None, ctypes.byref(r), 1) == -1
    assert list(l2p) == [5] * nlba and t.n == 0
    # a start that is no record start (not 4-aligned, in the page header, past the page): refused, nothing read
    for b in (17, 18, 19, 0, 12, pb, pb + 4):
        assert c_parse(lib, P, 3, b)[0] == -1, b


# ==================================================================================================
# section 10.5 whole: the C's steps 2 and 3 on the images of tests/system/slog_sim.py against
# recovery_oracle.recover (the reference recovery), and ats_slog_replay = ats_replay without the S-Log
class Replay(ctypes.Structure):      # ats_replay_t
    _fields_ = [("l2p", POINTER(c_uint32)), ("nlba", c_uint32), ("ntx", c_uint32),
                ("next", POINTER(ctypes.c_int32)), ("head", POINTER(ctypes.c_int32)),
                ("tail", POINTER(ctypes.c_int32))] + \
        [(n, c_uint32) for n in ("applied", "trims", "relocs_applied", "relocs_stale", "commits", "aborts",
                                 "dropped_open", "ignored")]


COMMIT_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_uint64, c_uint32)


class SlReplay(ctypes.Structure):    # ats_slog_replay_t
    _fields_ = [("tab", POINTER(Tab)), ("commit", COMMIT_FN), ("cctx", c_void_p), ("pg", PTR_FN), ("pctx", c_void_p),
                ("page_bytes", c_uint32), ("slog_commits", c_uint32), ("merges", c_uint32),
                ("merges_stale", c_uint32)]


def replay_fns(lib):
    lib.ats_replay.restype, lib.ats_replay.argtypes = c_int, [POINTER(Replay), POINTER(ScanRec), c_uint32, c_uint64]
    lib.ats_slog_replay.restype = c_int
    lib.ats_slog_replay.argtypes = [POINTER(Replay), POINTER(SlReplay), POINTER(ScanRec), c_uint32, c_uint64]
    lib.ats_prefix.restype, lib.ats_prefix.argtypes = c_uint32, [POINTER(ScanRec), c_uint32, c_uint64]


def new_replay(l2p0: dict, nlba: int, ntx: int, n: int):
    l2p = (c_uint32 * nlba)(*[l2p0.get(i, UNMAPPED) for i in range(nlba)])
    keep = (l2p, (ctypes.c_int32 * max(1, n))(), (ctypes.c_int32 * (ntx + 1))(), (ctypes.c_int32 * (ntx + 1))())
    r = Replay(keep[0], nlba, ntx, keep[1], keep[2], keep[3])
    r._keep = keep
    return r


def c_recover(lib, geo, paths, cp, nlba: int, ntx: int, use_flags: bool):
    """Steps 2-3 of section 10.5 with the C: the scan (the oracle's page decode and checkpoint are
    inputs), ats_prefix, the log pages (ats_slog_page), the records (ats_slog_find / parse),
    ats_slog_replay, then the records after the gap through ats_slog_complete / ats_slog_apply."""
    import atstb.recovery_oracle as ro
    dies = [ro.DieImage(p, geo) for p in paths]
    scanned, data = [], {}
    for d in range(geo.ndie):
        for blk in cp.plan[d]:
            opened = True
            for pg in range(geo.ppb):
                raw = dies[d].row(blk, pg)
                if raw is None:
                    opened = pg != 0
                    break
                dec = ro._decode(geo, raw)
                if dec is None or dec[0].kind not in (KIND_DATA, KIND_LOG) or dec[0].seq < cp.scan_from:
                    continue
                m = dec[0]
                scanned.append(ScanRec(m.seq, geo.ppn(d, blk, pg), m.lpn, m.epoch, m.txid, m.kind, m.flags, 0))
                data[m.seq] = dec[1]
            if not opened:
                break
    by_ppn = {r.ppn: r for r in scanned}
    arr = (ScanRec * max(1, len(scanned)))(*scanned)
    np_ = lib.ats_prefix(arr, len(scanned), cp.scan_from)
    prefix_end = arr[np_ - 1].seq + 1 if np_ else cp.scan_from
    # the log pages kept (seq order; an LPGN met again is ignored)
    lp = {}
    for r in sorted(by_ppn.values(), key=lambda r: r.seq):
        if r.kind == KIND_LOG and r.flags & 0x20:
            f, u = c_uint16(), c_uint16()
            buf = ctypes.create_string_buffer(data[r.seq], geo.page_bytes)
            if lib.ats_slog_page(buf, geo.page_bytes, r.epoch, ctypes.byref(f), ctypes.byref(u)) == ATS_OK \
                    and r.epoch not in lp:
                lp[r.epoch] = LogPage(r.epoch, r.seq, r.ppn, f.value, u.value, data[r.seq])
    P = Pages(geo.page_bytes, lp)
    starts, _, _ = c_find(lib, P)
    recs = [c_parse(lib, P, lg, b)[1] for lg, b in starts]
    by_commit = {}                      # commit point -> its records in stream order (packed ones share it)
    for r in recs:
        by_commit.setdefault(r.commit_seq, []).append(r)
    cfn = COMMIT_FN(lambda ctx, seq, i: ctypes.addressof(by_commit[seq][i]) if i < len(by_commit.get(seq, [])) else None)
    t = tab_new(64, 16)
    l2p0 = dict(cp.mapping)
    for lpn, (base, fr) in cp.slog.items():
        l2p0[lpn] = base
        for f in fr:
            assert lib.ats_slog_append(ctypes.byref(t), lpn, ctypes.byref(FragC(f.seq, f.ppn, 0, f.doff, f.off, f.len, 0))) == 0
    rp = new_replay(l2p0, nlba, ntx, np_)
    s = SlReplay(ctypes.pointer(t), cfn, None, P.fn, None, geo.page_bytes, 0, 0, 0)
    assert lib.ats_slog_replay(ctypes.byref(rp), ctypes.byref(s), arr, np_, cp.seq_base) == ATS_OK
    fl = [x for r in recs for i in range(r.ncf) for x in (r.cf_txid[i], r.cf_reclen[i], r.cf_lpgn[i])]
    flags = (c_uint32 * max(1, len(fl)))(*fl)
    at = PTR_FN(lambda ctx, p: ctypes.addressof(by_ppn[p]) if p in by_ppn else None)
    after = 0
    for r in sorted((r for r in recs if r.commit_seq >= prefix_end and r.txid <= ntx), key=lambda r: r.commit_seq):
        sk = c_int()
        ok = lib.ats_slog_complete(ctypes.byref(t), rp.l2p, nlba, geo.page_bytes, P.fn, None, ctypes.byref(r), at,
                                   None, flags, len(fl) // 3, int(use_flags), ctypes.byref(sk))
        assert ok in (0, 1)
        if ok:
            assert lib.ats_slog_apply(ctypes.byref(t), rp.l2p, nlba, geo.page_bytes, P.fn, None, ctypes.byref(r), 1) == 0
            after += 1
    return l2p_dict(rp.l2p, nlba), tab_dict(t), s.slog_commits, after, s.merges


@pytest.mark.parametrize("seed", range(3))
def test_recovery_vs_oracle(lib, seed, tmp_path):
    _recovery_vs_oracle(lib, f"h2slog{seed}", tmp_path, 0.0)


@pytest.mark.parametrize("seed", range(2))
def test_recovery_vs_oracle_packed(lib, seed, tmp_path):
    """As test_recovery_vs_oracle with each S-Log operation a packed group with probability 0.5
    (slog_sim.SimDev.slog_group): records sharing log pages, and records ending in one page sharing
    its seq as their commit point (persistence.md section 10.5 step 2: each applied, in stream order)."""
    _recovery_vs_oracle(lib, f"h2pack{seed}", tmp_path, 0.5)


def _recovery_vs_oracle(lib, tag, tmp_path, p_pack):
    import importlib.util     # slog_sim by its path: tests/system stays off sys.path (its modules' names)
    spec = importlib.util.spec_from_file_location("ats_fw_slog_sim", ROOT / "tests" / "system" / "slog_sim.py")
    sim = sys.modules.get(spec.name)
    if sim is None:
        sim = sys.modules[spec.name] = importlib.util.module_from_spec(spec)   # its dataclasses need it there
        spec.loader.exec_module(sim)
    SimDev = sim.SimDev
    from atstb.recovery_oracle import recover
    replay_fns(lib)
    stats = [0, 0, 0, 0]
    shared = 0
    for sub in range(4):
      rng = random.Random(f"{tag}.{sub}")
      dev = SimDev(rng, p_slow=0.1, p_pack=p_pack)
      dev.random_ops(40)
      cps = [o.commit for o in dev.ops if o.kind == "slog"]
      shared += sum(1 for c in set(cps) if cps.count(c) > 1)
      end = max(r.done for r in dev.reqs) + 1
      for cut in range(dev.ckpt_time + 1, end + 1, 3):
        paths = dev.images(tmp_path, cut, "tail" if cut % 4 else "random")
        for uf in (True, False):
            rec = recover(paths, dev.geo, use_flags=uf)
            l2p, F, commits, after, merges = c_recover(lib, dev.geo, paths, rec.checkpoint, dev.nlpn, 255, uf)
            assert l2p == rec.mapping, cut
            assert F == {k: v for k, v in rec.frags.items() if v}, cut
            assert (commits, after, merges) == (rec.slog_commits, rec.slog_after_gap, rec.merges), cut
            stats = [a + b for a, b in zip(stats, (commits, after, merges, 1))]
    print("commits, after the gap, merges, recoveries:", stats, "commit points shared by records:", shared)
    assert stats[0] and stats[1] and stats[2], stats
    assert (shared > 0) == (p_pack > 0), shared


@pytest.mark.parametrize("seed", SEEDS)
def test_slog_replay_is_replay_without_slog(lib, seed):
    """Random records of section 4 (no S-Log page, no MERGE page): ats_slog_replay gives ats_replay's
    mapping and counters, and leaves F as it was (the hook's no-op path)."""
    replay_fns(lib)
    rng = random.Random(6000 + seed)
    nlba, ntx = 16, 4
    for _ in range(30):
        n = rng.randint(0, 60)
        recs = []
        for i in range(n):
            kind = rng.choice([KIND_DATA, KIND_DATA, KIND_LOG])
            fl = rng.choice([0, 0, 0x01, 0x04, 0x08, 0x10]) if kind == KIND_LOG or rng.random() < 0.3 else 0
            if kind == KIND_DATA and fl == 0x04:
                fl = 0
            recs.append(ScanRec(100 + i, 1000 + i, rng.randrange(nlba + 2), rng.randrange(1000, 1000 + n + 1),
                                rng.choice([0, 0, 1, 2, 3, 4, 5]), kind, fl, 0))
        l2p0 = {i: rng.randrange(500) for i in range(nlba) if rng.random() < 0.7}
        seq_base = 100 + rng.randrange(n + 1)
        a = new_replay(l2p0, nlba, ntx, n)
        arr = (ScanRec * max(1, n))(*recs)
        assert lib.ats_replay(ctypes.byref(a), arr, n, seq_base) == 0
        b = new_replay(l2p0, nlba, ntx, n)
        t = tab_new(8, 4)
        lpn0 = rng.randrange(nlba)
        lib.ats_slog_append(ctypes.byref(t), lpn0, ctypes.byref(FragC(1, 2, 0, 16, 0, 4, 0)))
        none = COMMIT_FN(lambda ctx, seq, i: None)
        s = SlReplay(ctypes.pointer(t), none, None, PTR_FN(lambda c, x: None), None, 256, 0, 0, 0)
        assert lib.ats_slog_replay(ctypes.byref(b), ctypes.byref(s), arr, n, seq_base) == 0
        assert list(a.l2p[:nlba]) == list(b.l2p[:nlba])
        assert [getattr(a, f) for f, _ in Replay._fields_[6:]] == [getattr(b, f) for f, _ in Replay._fields_[6:]]
        if not any(r.lpn == lpn0 for r in recs):
            assert lib.ats_slog_count(ctypes.byref(t), lpn0) == 1
        if any(r.lpn == lpn0 and r.seq >= seq_base and r.kind == KIND_DATA and r.txid == 0 and not r.flags & 0x10
               for r in recs):
            assert lib.ats_slog_count(ctypes.byref(t), lpn0) == 0      # a full write empties F


# ==================================================================================================
# section 10.5 step 4 in the hardware: the SLOAD sequence (ats_slog_hw_load; rtl/backend/README.md op 7)
LPGN_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint32, POINTER(c_uint32))
SLOAD_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint32, c_uint32, c_uint32, c_uint32, c_uint64)


def sload_ref(F: list[tuple[int, list[FragLoc]]], next_lpgn: int, lpgn: dict[int, int], mod: int = 0) -> list[tuple]:
    """The loads from the contract (sw/firmware/README.md "S-Log"): rop 0 the counter; rop 1 each log
    page F names once, by ascending LPGN, but not a page with a newer live page of the same LPGN mod
    `mod` (one entry of the backend's table; 0: no table); rop 2 each fragment, entries in table
    order, lists in order (a page not loaded too: its fragments read MEDIA_ERROR)."""
    pages = sorted({f.ppn for _, fs in F for f in fs}, key=lambda p: lpgn[p])
    if mod:
        top = {}                                            # table entry -> its newest page
        for p in pages:
            top[lpgn[p] % mod] = p
        pages = [p for p in pages if top[lpgn[p] % mod] == p]
    out = [(0, 0, 0, next_lpgn, 0)] + [(1, 0, p, lpgn[p], 0) for p in pages]
    for lpn, fs in F:
        out += [(2, lpn, f.ppn, lpgn[f.ppn], f.len | f.off << 12 | f.doff << 32) for f in fs]
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_slog_hw_load(lib, seed):
    rng = random.Random(7000 + seed)
    lib.ats_slog_hw_load.restype = c_int
    lib.ats_slog_hw_load.argtypes = [POINTER(Tab), c_uint32, LPGN_FN, c_void_p, SLOAD_FN, c_void_p, c_uint32,
                                     POINTER(c_uint32), c_uint32, POINTER(c_uint32)]
    n_shadow = 0                                       # pages not loaded for a newer one in their entry
    for rnd in range(40):
        t = tab_new(16, 4)
        pool = rng.sample(range(1, 4000), rng.randrange(1, 12))          # log page PPNs
        base = rng.randrange(0, 1 << 20)
        lpgn = dict(zip(pool, (base + x for x in rng.sample(range(400), len(pool)))))  # one LPGN a page
        for _ in range(rng.randrange(0, 60)):
            lpn = rng.randrange(40)
            if rng.random() < 0.15:
                lib.ats_slog_clear(ctypes.byref(t), lpn)
                continue
            f = FragC(rng.randrange(1 << 40), rng.choice(pool), 0, 16 + 4 * rng.randrange(100), 4 * rng.randrange(100),
                      4 * rng.randrange(1, 100), 0)
            lib.ats_slog_append(ctypes.byref(t), lpn, ctypes.byref(f))
        F = [(t.lpn[e], tab_dict(t)[t.lpn[e]]) for e in range(t.n)]          # table order
        nxt = max(lpgn.values()) + rng.randrange(1, 5)
        live = {f.ppn for _, fs in F for f in fs}
        mod = rng.choice([0, 8, 64, 1 << 16])
        want = sload_ref(F, nxt, lpgn, mod)
        fail_at = rng.randrange(len(want)) if rng.random() < 0.3 else -1      # a load the hardware refuses
        bad_page = rng.choice(sorted(live)) if live and rng.random() < 0.15 else -1
        cap = len(live) if rng.random() < 0.8 else max(0, len(live) - 1)
        got, asked = [], []

        @LPGN_FN
        def lpgn_of(ctx, ppn, out):
            asked.append(ppn)
            if ppn == bad_page:
                return ATS_E_NAND
            out[0] = lpgn[ppn]
            return ATS_OK

        @SLOAD_FN
        def load(ctx, rop, lpn, ppn, epoch, seq):
            got.append((rop, lpn, ppn, epoch, seq))
            return ATS_E_STATE if len(got) - 1 == fail_at else ATS_OK

        scratch = (c_uint32 * (2 * max(cap, 1)))()
        npg = c_uint32(99)
        st = lib.ats_slog_hw_load(ctypes.byref(t), nxt, lpgn_of, None, load, None, mod, scratch, cap,
                                  ctypes.byref(npg))
        where = f"seed {seed} round {rnd}"
        n_rop1 = sum(1 for w in want if w[0] == 1)
        first = []                                                           # pages in table order
        for _, fs in F:
            for f in fs:
                if f.ppn not in first:
                    first.append(f.ppn)
        early = None                                   # the first page past cap or unreadable, in that order
        for k, p in enumerate(first):
            if k >= cap or p == bad_page:
                early = ATS_E_FULL if k >= cap else ATS_E_NAND
                break
        if early is not None:
            assert st == early and not got, where
        elif fail_at >= 0:
            assert st == ATS_E_STATE and got == want[:fail_at + 1], where
        else:                                          # (>= 0: the pages not loaded, a newer one in their entry)
            assert st == len(live) - n_rop1 and got == want and npg.value == n_rop1, (where, st, got, want)
            n_shadow += st
        assert len(set(asked)) == len(asked), where                          # each page asked once
    assert n_shadow, f"seed {seed}: no table-entry clash met"


# ---- section 10.4's unknown-page fragment (a live fragment whose log page neither the backend's table
# nor the firmware's list names): PPN 0xFFFFFFFF, the LPGN's low 16 bits in the data-offset word's
# bits 31:16, extended to the newest LPGN below slog_lpgn. Plain-Python writer / reader from the text
ATS_E_RANGE = -1


def ref_ext_back(low: int, ref: int, w: int) -> int:
    """The newest LPGN below ref with low w bits `low` (section 10.4 / rtl/backend/README.md)."""
    return next(y & M32 for y in range(ref - 1, ref - 1 - (1 << w), -1) if (y & ((1 << w) - 1)) == low)


M32 = 0xFFFFFFFF


def ref_section_put(slog_lpgn: int, entries: list[tuple[int, int, list[dict]]]) -> list[int] | None:
    """entries: (lpn, base, frags); a frag {ppn, off, len, doff, seq, lpgn}. None: the writer refuses
    (an unknown page not within 2^16 LPGNs below slog_lpgn)."""
    out = [slog_lpgn, len(entries)]
    for lpn, base, fs in entries:
        out += [lpn, base, len(fs)]
        for f in fs:
            lg16 = 0
            if f["ppn"] == UNMAPPED:
                if not 1 <= (slog_lpgn - f["lpgn"]) % (1 << 32) <= 1 << 16:
                    return None
                lg16 = f["lpgn"] & 0xFFFF
            out += [f["ppn"], f["off"] | f["len"] << 16, f["doff"] | lg16 << 16]
        for f in fs:
            out += [f["seq"] & M32, f["seq"] >> 32]
    return out


def rand_unknown_entries(rng, slog_lpgn, nlba, frags):
    ents = []
    for lpn in rng.sample(range(nlba), rng.randint(1, min(nlba, 10))):
        fs = []
        for _ in range(rng.randint(1, frags)):
            unk = rng.random() < 0.4
            # the two ends of the window: exactly 2^16 old and the newest
            age = rng.choice([1, 1 << 16, rng.randint(1, 1 << 16)])
            fs.append({"ppn": UNMAPPED if unk else rng.randrange(1 << 20), "off": 4 * rng.randrange(1000),
                       "len": 4 * rng.randint(1, 1000), "doff": 16 + 4 * rng.randrange(1000),
                       "seq": rng.randrange(1 << 64), "lpgn": (slog_lpgn - age) % (1 << 32) if unk else 0})
        ents.append((lpn, rng.randrange(1 << 20), fs))
    return ents


def frag_of(f: dict) -> FragC:
    return FragC(f["seq"], f["ppn"], f["lpgn"], f["doff"], f["off"], f["len"], 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_ckpt_section_unknown_page(lib, seed):
    """Writer and reader against the plain-Python text of section 10.4: the C writer's words equal the
    reference's; the C reader gives back every fragment with its LPGN (unknown pages) or 0; an unknown
    page outside the 16-bit window is refused by the writer. Fails on the code before the rule (the
    writer wrote no LPGN bits; the reader refused nonzero bits 31:16 as reserved)."""
    lib.ats_sl_ext_back.restype = c_uint32
    lib.ats_sl_ext_back.argtypes = [c_uint32, c_uint32, c_uint32]
    rng = random.Random(9100 + seed)
    nlba, frags = 64, 4
    for rnd in range(60):
        slog_lpgn = rng.choice([0, 1, 1 << 16, (1 << 16) + 1, M32, rng.getrandbits(32)])
        ents = rand_unknown_entries(rng, slog_lpgn, nlba, frags)
        if rng.random() < 0.2:                      # an unknown page too old, or not below slog_lpgn
            f = rng.choice(rng.choice(ents)[2])
            f["ppn"] = UNMAPPED
            f["lpgn"] = (slog_lpgn - rng.choice([0, (1 << 16) + 1, 1 << 20])) % (1 << 32)
        want = ref_section_put(slog_lpgn, ents)
        t = tab_new(nlba, frags)
        l2p = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        for lpn, base, fs in ents:
            l2p[lpn] = base
            for f in fs:
                assert lib.ats_slog_append(ctypes.byref(t), lpn, ctypes.byref(frag_of(f))) == ATS_OK
        nw = lib.ats_slog_ckpt_words(ctypes.byref(t))
        buf = (c_uint32 * nw)()
        st = lib.ats_slog_ckpt_put(ctypes.byref(t), l2p, nlba, slog_lpgn, buf, nw)
        where = f"seed {seed} round {rnd}"
        if want is None:
            assert st == ATS_E_RANGE, where
            continue
        assert st == nw and list(buf) == want, where
        # the reader: every field back, an unknown page's LPGN by the extension (exactly 2^16 old too)
        t2 = tab_new(nlba, frags)
        l2 = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        out_lpgn = c_uint32()
        assert lib.ats_slog_ckpt_get(ctypes.byref(t2), l2, nlba, buf, nw, ctypes.byref(out_lpgn)) == nw, where
        assert out_lpgn.value == slog_lpgn
        got = {}
        for e in range(t2.n):
            got[t2.lpn[e]] = [(g.seq, g.ppn, g.lpgn, g.doff, g.off, g.len)
                              for g in (t2.f[e * t2.frags + i] for i in range(t2.nf[e]))]
        exp = {lpn: [(f["seq"], f["ppn"], ref_ext_back(f["lpgn"] & 0xFFFF, slog_lpgn, 16) if f["ppn"] == UNMAPPED
                      else 0, f["doff"], f["off"], f["len"]) for f in fs] for lpn, _, fs in ents}
        assert got == exp, where
        assert all(g[2] == f["lpgn"] for lpn, _, fs in ents for g, f in zip(got[lpn], fs)), where
        assert l2p_dict(l2, nlba) == {lpn: base for lpn, base, _ in ents}


def test_ckpt_section_unknown_page_rejects(lib):
    """The reader's rules for bits 31:16 of the data-offset word: allowed (an LPGN's low bits) only
    with PPN 0xFFFFFFFF; reserved 0 otherwise (the checkpoint does not parse)."""
    nlba, frags = 8, 2

    def get(words):
        t = tab_new(nlba, frags)
        l2p = (c_uint32 * nlba)(*([UNMAPPED] * nlba))
        arr = (c_uint32 * len(words))(*words)
        out = c_uint32()
        st = lib.ats_slog_ckpt_get(ctypes.byref(t), l2p, nlba, arr, len(words), ctypes.byref(out))
        return st, (t.f[0].ppn, t.f[0].lpgn) if st > 0 else None

    slog_lpgn = 0x30005
    unk = [slog_lpgn, 1, 3, 0x1234, 1, UNMAPPED, 4 | 8 << 16, 32 | 0x0006 << 16, 99, 0]
    assert get(unk) == (len(unk), (UNMAPPED, 0x20006))         # 0x30006 is not below: 2^16 back
    unk[7] = 32 | 0x0004 << 16
    assert get(unk) == (len(unk), (UNMAPPED, 0x30004))
    unk[7] = 32                                                  # low bits 0 are an LPGN too
    assert get(unk) == (len(unk), (UNMAPPED, 0x30000))
    known = list(unk)
    known[5] = 0x4321
    assert get(known) == (len(known), (0x4321, 0))
    known[7] = 32 | 1 << 16                                      # reserved bits with a real PPN
    assert get(known)[0] == ATS_E_FORMAT


def test_slog_hw_load_unknown_page(lib):
    """The SLOAD sequence with unknown-page fragments: no LPGN is asked for them, no page is loaded
    for them (rop 1), each is INSERTed (rop 2) with its LPGN and PPN 0 in F's order."""
    lib.ats_slog_hw_load.restype = c_int
    lib.ats_slog_hw_load.argtypes = [POINTER(Tab), c_uint32, LPGN_FN, c_void_p, SLOAD_FN, c_void_p, c_uint32,
                                     POINTER(c_uint32), c_uint32, POINTER(c_uint32)]
    rng = random.Random(77)
    for rnd in range(40):
        t = tab_new(16, 4)
        pool = rng.sample(range(1, 4000), rng.randrange(1, 8))
        lpgn = dict(zip(pool, (1000 + x for x in rng.sample(range(300), len(pool)))))
        exp_f = []
        for _ in range(rng.randrange(1, 30)):
            lpn = rng.randrange(16)
            if rng.random() < 0.4:
                f = FragC(5, UNMAPPED, rng.randrange(600, 1300), 16 + 4 * rng.randrange(50), 4 * rng.randrange(50),
                          4 * rng.randint(1, 50), 0)
            else:
                f = FragC(5, rng.choice(pool), 0, 16 + 4 * rng.randrange(50), 4 * rng.randrange(50),
                          4 * rng.randint(1, 50), 0)
            lib.ats_slog_append(ctypes.byref(t), lpn, ctypes.byref(f))
        nxt = 1400
        F = []
        for e in range(t.n):
            F.append((t.lpn[e], [t.f[e * t.frags + i] for i in range(t.nf[e])]))
        pages = sorted({f.ppn for _, fs in F for f in fs if f.ppn != UNMAPPED}, key=lambda p: lpgn[p])
        want = [(0, 0, 0, nxt, 0)] + [(1, 0, p, lpgn[p], 0) for p in pages]
        for lpn, fs in F:
            for f in fs:
                unk = f.ppn == UNMAPPED
                want.append((2, lpn, 0 if unk else f.ppn, f.lpgn if unk else lpgn[f.ppn],
                             f.len | f.off << 12 | f.doff << 32))
        got, asked = [], []

        @LPGN_FN
        def lpgn_of(ctx, ppn, out):
            asked.append(ppn)
            if ppn not in lpgn:
                return ATS_E_NAND
            out[0] = lpgn[ppn]
            return ATS_OK

        @SLOAD_FN
        def load(ctx, rop, lpn, ppn, epoch, seq):
            got.append((rop, lpn, ppn, epoch, seq))
            return ATS_OK

        scratch = (c_uint32 * 64)()
        npg = c_uint32()
        st = lib.ats_slog_hw_load(ctypes.byref(t), nxt, lpgn_of, None, load, None, 256, scratch, 32, ctypes.byref(npg))
        assert st == 0 and got == want and UNMAPPED not in asked and npg.value == len(pages), f"round {rnd}"
