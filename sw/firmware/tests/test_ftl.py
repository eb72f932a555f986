# SPDX-License-Identifier: Apache-2.0
"""Host unit tests of the pure FTL algorithms (sw/firmware/ftl/ftl.c, ftl.h).

The library is compiled here (gcc -std=c11 -O2 -shared -fPIC, into a pytest temporary directory) and
loaded with ctypes. Every C function is compared with a plain-Python reference model written from
the on-flash format of docs/persistence.md (sections 1-6) and from the version-2 checkpoint / replay
rules of the firmware brief:

* checkpoint v2: the word stream ``ndie, blocks, ppb, n_map, scan_from lo, scan_from hi, ckpt_no,
  n_bad, per die (plan_len, plan blocks), bad list, erase counts (two u16 a word, block 2i low),
  n_map pairs (lpn, ppn)``, split over pages that each begin with ``magic, 2, index, count`` and end
  in zero padding; version 1 is the single page of persistence.md section 5;
* replay: section 4 from ``seq_base`` on; records below ``seq_base`` only build the transactions'
  pending lists (a COMMIT / ABORT below it empties the list without applying anything);
* durable prefix: sort by seq, drop seqs already taken and seqs below scan_from, keep the run
  scan_from, scan_from + 1, ... up to the first gap;
* GC victim (greedy / cost-benefit) and wear levelling as described in ftl.h.

Only the standard library, pytest and ctypes are used.
"""
from __future__ import annotations

import ctypes
import random
import subprocess
import sys
from ctypes import POINTER, c_int, c_int32, c_size_t, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

FTL_DIR = Path(__file__).resolve().parents[1] / "ftl"
FTL_C = FTL_DIR / "ftl.c"

# ---- constants from the specification (persistence.md sections 2, 4, 5 and ftl.h)
ATS_OK, ATS_E_RANGE, ATS_E_FORMAT, ATS_E_FULL = 0, -1, -2, -3
KIND_DATA, KIND_LOG = 0, 1
F_COMMIT, F_TRIM, F_ABORT, F_RELOC = 0x01, 0x04, 0x08, 0x10
CKPT_MAGIC = 0x50435441
HDR_WORDS = 4
UNMAPPED = 0xFFFFFFFF
NO_LPN = 0xFFFFFFFF
M32 = 0xFFFFFFFF
GC_GREEDY, GC_COST_BENEFIT = 0, 1

SEEDS = list(range(8))


# ==================================================================================================
# ctypes mirrors of the ftl.h structures
class Rec(ctypes.Structure):
    _fields_ = [("seq", c_uint64), ("ppn", c_uint32), ("lpn", c_uint32), ("epoch", c_uint32),
                ("txid", c_uint8), ("kind", c_uint8), ("flags", c_uint8), ("pad", c_uint8)]


class Geo(ctypes.Structure):
    _fields_ = [(n, c_uint32) for n in ("ndie", "ways", "blocks", "ppb", "page_bytes", "nlba", "ntx",
                                        "die_w", "pg_w")]


class Ckpt(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("seq_base", c_uint64), ("scan_from", c_uint64),
                ("ckpt_no", c_uint32), ("n_map", c_uint32), ("n_bad", c_uint32),
                ("plan_len", POINTER(c_uint16)), ("plan", POINTER(c_uint16)),
                ("bad", POINTER(c_uint32)), ("cap_bad", c_uint32),
                ("erase_cnt", POINTER(c_uint16)),
                ("map_lpn", POINTER(c_uint32)), ("map_ppn", POINTER(c_uint32)), ("cap_map", c_uint32),
                ("slog", POINTER(c_uint32)), ("n_slog", c_uint32), ("cap_slog", c_uint32)]


class Replay(ctypes.Structure):
    _fields_ = [("l2p", POINTER(c_uint32)), ("nlba", c_uint32), ("ntx", c_uint32),
                ("next", POINTER(c_int32)), ("head", POINTER(c_int32)), ("tail", POINTER(c_int32)),
                ("applied", c_uint32), ("trims", c_uint32), ("relocs_applied", c_uint32),
                ("relocs_stale", c_uint32), ("commits", c_uint32), ("aborts", c_uint32),
                ("dropped_open", c_uint32), ("ignored", c_uint32)]


PAGE_FN = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_uint32)
OLD_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint32)

# a tiny C helper: the layouts as the compiler sees them, and the static inline PPN functions
HELPER_C = r"""
#include <stddef.h>
#include "ftl.h"
#define O(T, f) (size_t)offsetof(T, f)
const size_t lay_rec[] = {sizeof(ats_rec_t), O(ats_rec_t, seq), O(ats_rec_t, ppn), O(ats_rec_t, lpn),
    O(ats_rec_t, epoch), O(ats_rec_t, txid), O(ats_rec_t, kind), O(ats_rec_t, flags), O(ats_rec_t, pad)};
const size_t lay_geo[] = {sizeof(ats_geo_t), O(ats_geo_t, ndie), O(ats_geo_t, ways), O(ats_geo_t, blocks),
    O(ats_geo_t, ppb), O(ats_geo_t, page_bytes), O(ats_geo_t, nlba), O(ats_geo_t, ntx), O(ats_geo_t, die_w),
    O(ats_geo_t, pg_w)};
const size_t lay_ckpt[] = {sizeof(ats_ckpt_t), O(ats_ckpt_t, version), O(ats_ckpt_t, seq_base),
    O(ats_ckpt_t, scan_from), O(ats_ckpt_t, ckpt_no), O(ats_ckpt_t, n_map), O(ats_ckpt_t, n_bad),
    O(ats_ckpt_t, plan_len), O(ats_ckpt_t, plan), O(ats_ckpt_t, bad), O(ats_ckpt_t, cap_bad),
    O(ats_ckpt_t, erase_cnt), O(ats_ckpt_t, map_lpn), O(ats_ckpt_t, map_ppn), O(ats_ckpt_t, cap_map),
    O(ats_ckpt_t, slog), O(ats_ckpt_t, n_slog), O(ats_ckpt_t, cap_slog)};
const size_t lay_replay[] = {sizeof(ats_replay_t), O(ats_replay_t, l2p), O(ats_replay_t, nlba),
    O(ats_replay_t, ntx), O(ats_replay_t, next), O(ats_replay_t, head), O(ats_replay_t, tail),
    O(ats_replay_t, applied), O(ats_replay_t, trims), O(ats_replay_t, relocs_applied),
    O(ats_replay_t, relocs_stale), O(ats_replay_t, commits), O(ats_replay_t, aborts),
    O(ats_replay_t, dropped_open), O(ats_replay_t, ignored)};
const size_t lay_n[] = {sizeof lay_rec / sizeof(size_t), sizeof lay_geo / sizeof(size_t),
    sizeof lay_ckpt / sizeof(size_t), sizeof lay_replay / sizeof(size_t)};
uint32_t h_ppn(const ats_geo_t *g, uint32_t d, uint32_t b, uint32_t p) { return ats_ppn(g, d, b, p); }
uint32_t h_ppn_die(const ats_geo_t *g, uint32_t ppn) { return ats_ppn_die(g, ppn); }
uint32_t h_ppn_page(const ats_geo_t *g, uint32_t ppn) { return ats_ppn_page(g, ppn); }
uint32_t h_ppn_block(const ats_geo_t *g, uint32_t ppn) { return ats_ppn_block(g, ppn); }
"""


def _gcc(out: Path, *srcs: Path) -> None:
    cmd = ["gcc", "-std=c11", "-O2", "-shared", "-fPIC", f"-I{FTL_DIR}", "-o", str(out), *map(str, srcs)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    d = tmp_path_factory.mktemp("ftl_build")
    so = d / "libftl.so"
    _gcc(so, FTL_C)
    (d / "helper.c").write_text(HELPER_C)
    _gcc(d / "libhelper.so", d / "helper.c")
    return d


@pytest.fixture(scope="session")
def lib(build):
    L = ctypes.CDLL(str(build / "libftl.so"))
    G = POINTER(Geo)
    sig = {
        "ats_geo_init": (c_int, [G] + [c_uint32] * 7),
        "ats_ckpt_words": (c_uint32, [G, POINTER(Ckpt)]),
        "ats_ckpt_pages": (c_uint32, [G, POINTER(Ckpt)]),
        "ats_ckpt_page": (c_int, [G, POINTER(Ckpt), c_uint32, POINTER(c_uint32)]),
        "ats_ckpt_parse": (c_int, [G, POINTER(Ckpt), PAGE_FN, c_void_p]),
        "ats_replay": (c_int, [POINTER(Replay), POINTER(Rec), c_uint32, c_uint64]),
        "ats_prefix": (c_uint32, [POINTER(Rec), c_uint32, c_uint64]),
        "ats_scan_resume": (c_uint32, [c_uint32, OLD_FN, c_void_p, POINTER(c_uint32)]),
        "ats_log_add": (c_uint32, [POINTER(Rec), c_uint32, c_uint32, POINTER(Rec), POINTER(c_uint32)]),
        "ats_gc_pick": (c_int, [c_int, POINTER(c_uint32), POINTER(c_uint32), c_uint32, c_uint32]),
        "ats_wl_pick_free": (c_int, [POINTER(c_uint16), c_uint32]),
        "ats_wl_order": (c_uint32, [POINTER(c_uint16), POINTER(c_uint16), c_uint32, c_uint32]),
        "ats_wl_static_due": (c_int, [POINTER(c_uint16), POINTER(c_uint8), c_uint32, c_uint32]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


@pytest.fixture(scope="session")
def helper(build):
    H = ctypes.CDLL(str(build / "libhelper.so"))
    for name in ("h_ppn_die", "h_ppn_page", "h_ppn_block"):
        getattr(H, name).restype = c_uint32
        getattr(H, name).argtypes = [POINTER(Geo), c_uint32]
    H.h_ppn.restype = c_uint32
    H.h_ppn.argtypes = [POINTER(Geo), c_uint32, c_uint32, c_uint32]
    return H


# ==================================================================================================
# reference model: geometry and PPN packing (persistence.md section 1)
def is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def log2_exact(v: int) -> int:
    assert is_pow2(v)
    return v.bit_length() - 1


@dataclass
class MGeo:
    num_chan: int
    ways: int
    blocks: int
    ppb: int
    page_bytes: int
    nlba: int = 1024
    ntx: int = 8

    @property
    def ndie(self) -> int:
        return self.num_chan * self.ways

    @property
    def die_w(self) -> int:
        return log2_exact(self.ndie)

    @property
    def pg_w(self) -> int:
        return log2_exact(self.ppb)

    def ppn(self, d: int, block: int, page: int) -> int:
        return (block << (self.pg_w + self.die_w)) | (page << self.die_w) | d

    def unpack(self, ppn: int) -> tuple[int, int, int]:
        d = ppn % self.ndie
        page = (ppn // self.ndie) % self.ppb
        block = ppn // (self.ndie * self.ppb)
        return d, block, page

    @property
    def words_per_page(self) -> int:
        return self.page_bytes // 4


def c_geo(lib, g: MGeo) -> Geo:
    cg = Geo()
    rc = lib.ats_geo_init(ctypes.byref(cg), g.num_chan, g.ways, g.blocks, g.ppb, g.page_bytes, g.nlba, g.ntx)
    assert rc == ATS_OK
    return cg


def rand_geo(rng: random.Random, **kw) -> MGeo:
    ndie = rng.choice([1, 2, 4, 8])
    ways = rng.choice([w for w in (1, 2, 4) if w <= ndie])
    g = MGeo(num_chan=ndie // ways, ways=ways, blocks=rng.randint(8, 128), ppb=rng.choice([8, 16, 64]),
             page_bytes=rng.choice([512, 2048, 4096]))
    for k, v in kw.items():
        setattr(g, k, v)
    return g


# ==================================================================================================
# reference model: checkpoint encoding
@dataclass
class MCkpt:
    plan: list[list[int]]
    bad: list[int]
    erase: list[int]                  # ndie * blocks, die-major
    mapping: list[tuple[int, int]]
    scan_from: int
    seq_base: int
    ckpt_no: int


def ckpt_stream(g: MGeo, c: MCkpt) -> list[int]:
    w = [g.ndie, g.blocks, g.ppb, len(c.mapping), c.scan_from & M32, c.scan_from >> 32, c.ckpt_no, len(c.bad)]
    for d in range(g.ndie):
        w.append(len(c.plan[d]))
        w.extend(c.plan[d])
    w.extend(c.bad)
    ec = list(c.erase) + ([0] if len(c.erase) % 2 else [])
    w.extend(ec[i] | (ec[i + 1] << 16) for i in range(0, len(ec), 2))
    for lpn, ppn in c.mapping:
        w += [lpn, ppn]
    return w


def ckpt_words_formula(g: MGeo, c: MCkpt) -> int:
    return (8 + sum(1 + len(p) for p in c.plan) + len(c.bad) + (g.ndie * g.blocks + 1) // 2
            + 2 * len(c.mapping))


def ckpt_pages_model(g: MGeo, c: MCkpt) -> list[list[int]]:
    stream = ckpt_stream(g, c)
    per = g.words_per_page - HDR_WORDS
    n = -(-len(stream) // per)
    pages = []
    for i in range(n):
        body = stream[i * per:(i + 1) * per]
        pages.append([CKPT_MAGIC, 2, i, n] + body + [0] * (per - len(body)))
    return pages


def ckpt_v1_page(g: MGeo, plan: list[list[int]], mapping: list[tuple[int, int]]) -> list[int]:
    """persistence.md section 5: one page, magic, 1, ndie, blocks, ppb, n_map, plans, pairs, zeros."""
    w = [CKPT_MAGIC, 1, g.ndie, g.blocks, g.ppb, len(mapping)]
    for d in range(g.ndie):
        w.append(len(plan[d]))
        w.extend(plan[d])
    for lpn, ppn in mapping:
        w += [lpn, ppn]
    assert len(w) <= g.words_per_page
    return w + [0] * (g.words_per_page - len(w))


def rand_ckpt(rng: random.Random, g: MGeo, min_map: int = 0) -> MCkpt:
    plan = []
    for _ in range(g.ndie):
        k = rng.choice([0, g.blocks, rng.randint(0, g.blocks)])
        plan.append(rng.sample(range(g.blocks), k))
    bad = [(rng.randrange(g.ndie) << 16) | rng.randrange(g.blocks) for _ in range(rng.choice([0, 1, rng.randint(0, 40)]))]
    erase = [rng.choice([0, 0xFFFF, rng.randrange(0x10000)]) for _ in range(g.ndie * g.blocks)]
    n_map = max(min_map, rng.choice([0, 1, rng.randint(0, 64), rng.randint(0, 2500)]))
    mapping = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(n_map)]
    scan_from = rng.getrandbits(rng.choice([1, 20, 40, 64]))
    seq_base = min(scan_from + rng.choice([0, rng.randint(0, 1 << 33)]), (1 << 64) - 1)
    return MCkpt(plan, bad, erase, mapping, scan_from, seq_base, rng.getrandbits(32))


class CCkpt:
    """An ats_ckpt_t with its tables (kept alive here)."""

    def __init__(self, g: MGeo, cap_map: int, cap_bad: int, c: MCkpt | None = None, fill: int = 0xA5A5):
        nb = g.ndie * g.blocks
        self.plan_len = (c_uint16 * g.ndie)(*([fill & 0xFFFF] * g.ndie))
        self.plan = (c_uint16 * nb)(*([fill & 0xFFFF] * nb))
        self.bad = (c_uint32 * max(cap_bad, 1))(*([fill] * max(cap_bad, 1)))
        self.erase = (c_uint16 * nb)(*([fill & 0xFFFF] * nb))
        self.lpn = (c_uint32 * max(cap_map, 1))(*([fill] * max(cap_map, 1)))
        self.ppn = (c_uint32 * max(cap_map, 1))(*([fill] * max(cap_map, 1)))
        self.s = Ckpt(plan_len=self.plan_len, plan=self.plan, bad=self.bad, cap_bad=cap_bad,
                      erase_cnt=self.erase, map_lpn=self.lpn, map_ppn=self.ppn, cap_map=cap_map)
        if c is not None:
            self.s.version = 2
            self.s.seq_base = c.seq_base
            self.s.scan_from = c.scan_from
            self.s.ckpt_no = c.ckpt_no
            self.s.n_map = len(c.mapping)
            self.s.n_bad = len(c.bad)
            for d, p in enumerate(c.plan):
                self.plan_len[d] = len(p)
                for i, b in enumerate(p):
                    self.plan[d * g.blocks + i] = b
            for i, b in enumerate(c.bad):
                self.bad[i] = b
            for i, e in enumerate(c.erase):
                self.erase[i] = e
            for i, (lpn, ppn) in enumerate(c.mapping):
                self.lpn[i] = lpn
                self.ppn[i] = ppn


def c_parse(lib, cg: Geo, g: MGeo, pages: list, seq_base: int, cap_map: int, cap_bad: int):
    """Parse with a callback serving pages[i] (None: missing). Returns (rc, CCkpt, requested idx)."""
    bufs = [None if p is None else (c_uint32 * len(p))(*p) for p in pages]
    asked: list[int] = []

    def cb(_ctx, idx):
        asked.append(idx)
        if idx < len(bufs) and bufs[idx] is not None:
            return ctypes.addressof(bufs[idx])
        return None

    fn = PAGE_FN(cb)
    out = CCkpt(g, cap_map, cap_bad)
    out.s.seq_base = seq_base
    rc = lib.ats_ckpt_parse(ctypes.byref(cg), ctypes.byref(out.s), fn, None)
    return rc, out, asked


# ==================================================================================================
# reference model: durable prefix and replay
@dataclass
class MRec:
    seq: int
    ppn: int
    lpn: int
    epoch: int
    txid: int
    kind: int
    flags: int

    def key(self):
        return (self.seq, self.ppn, self.lpn, self.epoch, self.txid, self.kind, self.flags)


def to_c_recs(recs: list[MRec]):
    arr = (Rec * max(len(recs), 1))()
    for i, r in enumerate(recs):
        arr[i] = Rec(r.seq, r.ppn, r.lpn, r.epoch, r.txid, r.kind, r.flags, 0)
    return arr


def from_c_rec(r: Rec) -> MRec:
    return MRec(r.seq, r.ppn, r.lpn, r.epoch, r.txid, r.kind, r.flags)


def model_prefix(recs: list[MRec], scan_from: int) -> list[list[MRec]]:
    """Section 3/6: the run scan_from, scan_from + 1, ... up to the first missing seq. Each entry is
    the list of valid pages carrying that seq (re-programmed duplicates: any one of them may stand)."""
    by_seq: dict[int, list[MRec]] = {}
    for r in recs:
        by_seq.setdefault(r.seq, []).append(r)
    out, s = [], scan_from
    while s in by_seq:
        out.append(by_seq[s])
        s += 1
    return out


COUNTERS = ("applied", "trims", "relocs_applied", "relocs_stale", "commits", "aborts", "dropped_open", "ignored")


class ReplayModel:
    """Section 4, applied record by record, with the seq_base rule of the brief."""

    def __init__(self, l2p: list[int], ntx: int, seq_base: int):
        self.l2p = list(l2p)
        self.seq_base = seq_base
        self.ntx = ntx
        self.pending: dict[int, list[MRec]] = {t: [] for t in range(1, ntx + 1)}
        self.cnt = dict.fromkeys(COUNTERS, 0)
        self.cov: dict[str, int] = {}

    def _hit(self, tag: str) -> None:
        self.cov[tag] = self.cov.get(tag, 0) + 1

    def step(self, r: MRec) -> None:
        live = r.seq >= self.seq_base
        t = r.txid
        if t > self.ntx:
            # section 4: a txid above num_tx cannot be the device's: the record changes nothing
            self.cnt["ignored"] += 1
            self._hit("txid_above_ntx")
            return
        if r.kind == KIND_LOG and r.flags & F_TRIM:
            if live:
                self.l2p[r.lpn] = UNMAPPED
                self.cnt["trims"] += 1
                self._hit("trim")
            else:
                self._hit("trim_below_base")
        elif r.kind == KIND_DATA and t == 0:
            if not live:
                self._hit("plain_below_base_ignored" if self.l2p[r.lpn] != r.ppn else "plain_below_base")
            elif r.flags & F_RELOC:
                if self.l2p[r.lpn] == r.epoch:
                    self.l2p[r.lpn] = r.ppn
                    self.cnt["relocs_applied"] += 1
                    self._hit("reloc_applied")
                else:
                    self.cnt["relocs_stale"] += 1
                    self._hit("reloc_stale_unmapped" if self.l2p[r.lpn] == UNMAPPED else "reloc_stale")
            else:
                self.l2p[r.lpn] = r.ppn
                self.cnt["applied"] += 1
                self._hit("plain")
        elif r.kind == KIND_DATA:
            self.pending[t].append(r)
            self._hit("tx_page_below_base" if not live else "tx_page")
        if t and r.flags & F_ABORT:
            if live:
                self.cnt["aborts"] += 1
                self._hit("abort_flag_page" if r.kind == KIND_DATA else "abort_record")
            elif self.pending[t]:
                self._hit("abort_below_base_empties")
            self.pending[t] = []
        elif t and r.flags & F_COMMIT:
            if live:
                pages = self.pending[t]
                if len({p.lpn for p in pages}) < len(pages):
                    self._hit("commit_same_lpn_twice")
                if any(p.seq < self.seq_base for p in pages):
                    self._hit("commit_applies_page_below_base")
                if not pages:
                    self._hit("commit_empty")
                for p in pages:                      # in seq order (the list is in seq order)
                    self.l2p[p.lpn] = p.ppn
                    self.cnt["applied"] += 1
                self.cnt["commits"] += 1
                self._hit("commit_flag_page" if r.kind == KIND_DATA else "commit_record")
            elif self.pending[t]:
                self._hit("commit_below_base_empties")
            self.pending[t] = []

    def finish(self) -> None:
        self.cnt["dropped_open"] = sum(1 for p in self.pending.values() if p)
        if self.cnt["dropped_open"]:
            self._hit("dropped_open")


class PpnAlloc:
    """Hands out PPNs like the backend (die-interleaved pages of open blocks), from block `first`."""

    def __init__(self, g: MGeo, first_block: int):
        self.g = g
        self.cur = [(first_block, 0)] * g.ndie
        self.d = 0

    def next(self) -> int:
        d = self.d
        self.d = (d + 1) % self.g.ndie
        b, p = self.cur[d]
        ppn = self.g.ppn(d, b, p)
        self.cur[d] = (b, p + 1) if p + 1 < self.g.ppb else (b + 1, 0)
        return ppn


def gen_log(rng: random.Random, g: MGeo, n: int, base_at: float | None = None):
    """A random durable prefix of n records with seqs scan_from..scan_from+n-1, a seq_base inside,
    the checkpoint's l2p, and the model's result."""
    nlba, ntx = g.nlba, g.ntx
    old = PpnAlloc(g, 1)
    l2p0 = [old.next() if rng.random() < 0.6 else UNMAPPED for _ in range(nlba)]
    history: list[list[int]] = [[v] if v != UNMAPPED else [] for v in l2p0]
    alloc = PpnAlloc(g, 1 + -(-nlba // (g.ndie * g.ppb)))
    far = PpnAlloc(g, 5000)                          # PPNs of neither the checkpoint nor the log
    scan_from = rng.getrandbits(rng.choice([8, 40, 63]))
    if base_at is None:
        seq_base = scan_from + rng.choice([0, n, rng.randint(0, n), rng.randint(0, n // 3)])
    else:
        seq_base = scan_from + int(n * base_at)
    model = ReplayModel(l2p0, ntx, seq_base)
    tx_lpns: dict[int, list[int]] = {t: [] for t in range(1, ntx + 1)}
    ops = ["plain", "trim", "reloc_fresh", "reloc_stale", "tx", "tx", "tx", "tx_commit_flag",
           "tx_abort_flag", "commit_rec", "abort_rec"]
    weights = [6, 2, 2, 1.5, 3, 3, 3, 1, 0.5, 1, 0.5]
    recs = []
    for i in range(n):
        seq = scan_from + i
        op = rng.choices(ops, weights)[0]
        ppn = alloc.next()
        lpn = rng.randrange(nlba)
        t = rng.randint(1, ntx)
        r = MRec(seq, ppn, lpn, rng.getrandbits(16), 0, KIND_DATA, 0)
        if op == "plain":
            pass
        elif op == "trim":
            r.kind, r.flags, r.epoch = KIND_LOG, F_TRIM, rng.getrandbits(16)
        elif op == "reloc_fresh":
            mapped = [x for x in range(nlba) if model.l2p[x] != UNMAPPED]
            if mapped:                               # GC copies a live page: epoch = its PPN
                r.lpn = rng.choice(mapped)
                r.flags, r.epoch = F_RELOC, model.l2p[r.lpn]
        elif op == "reloc_stale":
            cand = [v for v in history[lpn] if v != model.l2p[lpn]]
            r.flags, r.epoch = F_RELOC, rng.choice(cand) if cand and rng.random() < 0.7 else far.next()
        elif op in ("tx", "tx_commit_flag", "tx_abort_flag"):
            if tx_lpns[t] and rng.random() < 0.3:
                r.lpn = rng.choice(tx_lpns[t])        # the same LPN twice in one tx
            r.txid = t
            r.flags = {"tx": 0, "tx_commit_flag": F_COMMIT, "tx_abort_flag": F_ABORT}[op]
        else:
            r.kind, r.lpn, r.txid, r.epoch = KIND_LOG, NO_LPN, t, 0
            r.flags = F_COMMIT if op == "commit_rec" else F_ABORT
        if r.kind == KIND_DATA and r.txid:
            tx_lpns[t] = [] if r.flags else tx_lpns[t] + [r.lpn]
        elif r.txid:
            tx_lpns[t] = []
        if r.lpn != NO_LPN:
            history[r.lpn].append(r.ppn)
        model.step(r)
        recs.append(r)
    model.finish()
    return recs, l2p0, scan_from, seq_base, model


def c_replay(lib, recs: list[MRec], l2p0: list[int], ntx: int, seq_base: int):
    arr = to_c_recs(recs)
    l2p = (c_uint32 * len(l2p0))(*l2p0)
    nxt = (c_int32 * max(len(recs), 1))()
    head = (c_int32 * (ntx + 1))()
    tail = (c_int32 * (ntx + 1))()
    r = Replay(l2p=l2p, nlba=len(l2p0), ntx=ntx, next=nxt, head=head, tail=tail)
    for k in COUNTERS:
        setattr(r, k, 0xDEAD)                # must be reset by the call
    rc = lib.ats_replay(ctypes.byref(r), arr, len(recs), seq_base)
    return rc, list(l2p), {k: getattr(r, k) for k in COUNTERS}


# ==================================================================================================
# struct layouts
def test_struct_layouts(build):
    H = ctypes.CDLL(str(build / "libhelper.so"))
    n = (c_size_t * 4).in_dll(H, "lay_n")
    for i, (name, S) in enumerate((("lay_rec", Rec), ("lay_geo", Geo), ("lay_ckpt", Ckpt), ("lay_replay", Replay))):
        c_lay = list((c_size_t * n[i]).in_dll(H, name))
        py_lay = [ctypes.sizeof(S)] + [getattr(S, f[0]).offset for f in S._fields_]
        assert c_lay == py_lay, (name, c_lay, py_lay)
    assert ctypes.sizeof(Rec) == 24


# ==================================================================================================
# geometry and PPN packing
@pytest.mark.parametrize("seed", SEEDS)
def test_geo_init_and_ppn(lib, helper, seed):
    rng = random.Random(seed)
    for _ in range(50):
        num_chan = rng.choice([1, 2, 4, 8, 16])
        ways = rng.choice([1, 2, 4])
        ppb = 1 << rng.randint(1, 12)          # ftl.h: 2 <= ppb <= 32768
        blocks = rng.randint(1, 4096)
        page_bytes = rng.choice([512, 2048, 4096, 16384])
        nlba, ntx = rng.randint(0, 1 << 20), rng.randint(0, 255)
        g = MGeo(num_chan, ways, blocks, ppb, page_bytes, nlba, ntx)
        cg = Geo()
        assert lib.ats_geo_init(ctypes.byref(cg), num_chan, ways, blocks, ppb, page_bytes, nlba, ntx) == ATS_OK
        assert (cg.ndie, cg.ways, cg.blocks, cg.ppb, cg.page_bytes, cg.nlba, cg.ntx) == \
            (g.ndie, ways, blocks, ppb, page_bytes, nlba, ntx)
        assert (cg.die_w, cg.pg_w) == (g.die_w, g.pg_w)
        assert 1 << cg.die_w == g.ndie and 1 << cg.pg_w == ppb
        for _ in range(20):
            d, b, p = rng.randrange(g.ndie), rng.randrange(min(blocks, 1 << 32 >> (g.die_w + g.pg_w))), rng.randrange(ppb)
            ppn = g.ppn(d, b, p)
            assert helper.h_ppn(ctypes.byref(cg), d, b, p) == ppn
            assert g.unpack(ppn) == (d, b, p)
            assert (helper.h_ppn_die(ctypes.byref(cg), ppn), helper.h_ppn_block(ctypes.byref(cg), ppn),
                    helper.h_ppn_page(ctypes.byref(cg), ppn)) == (d, b, p)
        # consecutive PPNs are on different dies (section 1)
        if g.ndie > 1:
            base = g.ppn(0, 1, 0)
            assert [g.unpack(base + k)[0] for k in range(g.ndie)] == list(range(g.ndie))
    # out of range: no channel / way / block / page, a non-power-of-two die count or ppb, pages that do
    # not hold whole words
    bad = [(0, 1, 8, 8, 512), (1, 0, 8, 8, 512), (1, 1, 0, 8, 512), (1, 1, 8, 0, 512), (3, 1, 8, 8, 512),
           (1, 3, 8, 8, 512), (2, 3, 8, 8, 512), (1, 1, 8, 12, 512), (1, 1, 8, 8, 0), (1, 1, 8, 8, 514)]
    for args in bad:
        assert lib.ats_geo_init(ctypes.byref(Geo()), *args, 64, 4) == ATS_E_RANGE, args


def _geo_init_in_subprocess(build, args, timeout=3.0):
    code = (
        "import ctypes, sys\n"
        f"L = ctypes.CDLL({str(build / 'libftl.so')!r})\n"
        "g = (ctypes.c_uint32 * 9)()\n"
        "a = [ctypes.c_uint32(v) for v in %r]\n"
        "rc = L.ats_geo_init(ctypes.byref(g), *a)\n"
        "print(rc, g[0])\n" % (list(args),))
    try:
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    rc, ndie = map(int, res.stdout.split())
    return rc, ndie


def test_geo_init_huge_ppb_returns(build):
    """ppb = 2^31 + 1 is no power of two (and above the 32768 bound of ftl.h): ATS_E_RANGE, in
    bounded time; 32768 is the largest ppb accepted."""
    assert _geo_init_in_subprocess(build, [1, 1, 8, 32768, 512, 64, 4]) == (ATS_OK, 1)
    assert _geo_init_in_subprocess(build, [1, 1, 8, 0x80000000, 512, 64, 4])[0] == ATS_E_RANGE
    got = _geo_init_in_subprocess(build, [1, 1, 8, 0x80000001, 512, 64, 4])
    assert got is not None, "ats_geo_init(ppb = 0x80000001) does not return (log2u loops forever)"
    assert got[0] == ATS_E_RANGE


def test_geo_init_die_count_overflow(build):
    """num_chan * ways = 3 * 0x55555556 = 2^32 + 2 dies is not a power of two: ATS_E_RANGE."""
    got = _geo_init_in_subprocess(build, [3, 0x55555556, 8, 8, 512, 64, 4])
    assert got is not None and got[0] == ATS_E_RANGE, f"accepted with ndie = {got and got[1]}"


# ==================================================================================================
# checkpoint version 2
@pytest.mark.parametrize("seed", SEEDS)
def test_ckpt_roundtrip(lib, seed):
    rng = random.Random(100 + seed)
    n_pages_seen = set()
    for it in range(6):
        if it == 0:     # many pages
            g = rand_geo(rng, page_bytes=512)
            c = rand_ckpt(rng, g, min_map=600)
        elif it == 1:   # one page
            g = rand_geo(rng, page_bytes=4096, blocks=rng.randint(8, 40))
            c = rand_ckpt(rng, g)
            c.plan, c.bad, c.mapping = [p[:3] for p in c.plan], c.bad[:2], c.mapping[:4]
        else:
            g = rand_geo(rng)
            c = rand_ckpt(rng, g)
        cg = c_geo(lib, g)
        cc = CCkpt(g, len(c.mapping), len(c.bad), c)
        model_pages = ckpt_pages_model(g, c)
        assert lib.ats_ckpt_words(ctypes.byref(cg), ctypes.byref(cc.s)) == ckpt_words_formula(g, c) == len(ckpt_stream(g, c))
        n = lib.ats_ckpt_pages(ctypes.byref(cg), ctypes.byref(cc.s))
        assert n == len(model_pages)
        n_pages_seen.add(min(n, 3))
        pages = []
        for idx in range(n):
            out = (c_uint32 * g.words_per_page)(*([0xDEADBEEF] * g.words_per_page))
            assert lib.ats_ckpt_page(ctypes.byref(cg), ctypes.byref(cc.s), idx, out) == ATS_OK
            got = list(out)
            assert got == model_pages[idx], f"page {idx}: first diff at word " \
                f"{next(i for i in range(len(got)) if got[i] != model_pages[idx][i])}"
            pages.append(got)
        out = (c_uint32 * g.words_per_page)()
        assert lib.ats_ckpt_page(ctypes.byref(cg), ctypes.byref(cc.s), n, out) == ATS_E_RANGE

        # parse back, with spare room in the tables
        rc, p, asked = c_parse(lib, cg, g, pages, c.seq_base, len(c.mapping) + rng.randint(0, 5),
                               len(c.bad) + rng.randint(0, 5))
        assert rc == ATS_OK
        assert sorted(set(asked)) == list(range(n))
        s = p.s
        assert (s.version, s.seq_base, s.scan_from, s.ckpt_no, s.n_map, s.n_bad) == \
            (2, c.seq_base, c.scan_from, c.ckpt_no, len(c.mapping), len(c.bad))
        for d in range(g.ndie):
            assert p.plan_len[d] == len(c.plan[d])
            assert [p.plan[d * g.blocks + i] for i in range(len(c.plan[d]))] == c.plan[d]
        assert list(p.bad[:len(c.bad)]) == c.bad
        assert list(p.erase) == c.erase
        assert list(zip(p.lpn[:len(c.mapping)], p.ppn[:len(c.mapping)])) == c.mapping
    assert n_pages_seen >= {1, 3}, n_pages_seen


def test_ckpt_page_boundaries(lib):
    """Streams that end one word before, exactly at and one word after a page boundary."""
    g = MGeo(1, 1, 8, 8, 512)
    cg = c_geo(lib, g)
    per = g.words_per_page - HDR_WORDS
    fills = set()
    for n_bad in (0, 1):
        base = 8 + 1 + n_bad + (8 + 1) // 2          # empty plan, n_bad bad blocks, 8 erase counts
        for extra in range(-1, 2):
            n_map = (2 * per - base) // 2 + extra
            c = MCkpt([[]], [0x5] * n_bad, list(range(8)), [(i, i + 1) for i in range(n_map)], 5, 5, 1)
            cc = CCkpt(g, n_map, n_bad, c)
            words = base + 2 * n_map
            fills.add(words - 2 * per)
            assert lib.ats_ckpt_words(ctypes.byref(cg), ctypes.byref(cc.s)) == words
            assert lib.ats_ckpt_pages(ctypes.byref(cg), ctypes.byref(cc.s)) == -(-words // per)
            pages = ckpt_pages_model(g, c)
            for idx, mp in enumerate(pages):
                out = (c_uint32 * g.words_per_page)()
                assert lib.ats_ckpt_page(ctypes.byref(cg), ctypes.byref(cc.s), idx, out) == ATS_OK
                assert list(out) == mp
            rc, p, asked = c_parse(lib, cg, g, pages, 5, n_map, n_bad)
            assert rc == ATS_OK and list(zip(p.lpn[:n_map], p.ppn[:n_map])) == c.mapping
            assert max(asked) == len(pages) - 1
    assert {-1, 0, 1} <= fills


def _multi_page_ckpt(rng, lib):
    while True:
        g = rand_geo(rng, page_bytes=512)
        c = rand_ckpt(rng, g, min_map=rng.randint(130, 400))
        if not c.bad:
            c.bad = [1, 2]
        pages = ckpt_pages_model(g, c)
        if len(pages) >= 3:
            return g, c_geo(lib, g), c, pages


@pytest.mark.parametrize("seed", SEEDS)
def test_ckpt_parse_negative(lib, seed):
    rng = random.Random(200 + seed)
    g, cg, c, pages = _multi_page_ckpt(rng, lib)
    n = len(pages)
    cap_map, cap_bad = len(c.mapping), len(c.bad)

    def parse(pp, seq_base=c.seq_base, geo=(g, cg), cm=cap_map, cb=cap_bad):
        return c_parse(lib, geo[1], geo[0], pp, seq_base, cm, cb)[0]

    assert parse(pages) == ATS_OK
    for j in sorted({0, 1, n - 1, rng.randrange(n)}):
        # a missing page
        pp = list(pages)
        pp[j] = None
        assert parse(pp) == ATS_E_FORMAT, f"missing page {j}"
        # a wrong index in the header
        pp = [list(x) for x in pages]
        pp[j][2] = (j + 1 + rng.randrange(n)) % (n + 3) if j else rng.randint(1, n)
        assert pp[j][2] != j
        assert parse(pp) == ATS_E_FORMAT, f"page {j} with index {pp[j][2]}"
        # the callback serves another page of the same checkpoint (header intact) at position j
        pp = list(pages)
        pp[j] = pages[(j + 1) % n]
        assert parse(pp) == ATS_E_FORMAT, f"page {(j + 1) % n} served as {j}"
        # wrong magic
        pp = [list(x) for x in pages]
        pp[j][0] ^= 1 << rng.randrange(32)
        assert parse(pp) == ATS_E_FORMAT, f"page {j} with magic {pp[j][0]:#x}"
        # wrong page count
        pp = [list(x) for x in pages]
        pp[j][3] = n + 1 if j else n - 1
        if j:
            assert parse(pp) == ATS_E_FORMAT, f"page {j} with count {pp[j][3]}"
    # every page claims one page fewer than the stream needs: the stream is truncated, even if the
    # callback has a page at index n - 1 (it is not part of an (n - 1)-page checkpoint)
    pp = [list(x) for x in pages]
    for x in pp:
        x[3] = n - 1
    assert parse(pp) == ATS_E_FORMAT
    assert parse(pp[:-1]) == ATS_E_FORMAT
    # a page count 0 in page 0
    pp = [list(x) for x in pages]
    pp[0][3] = 0
    assert parse(pp) == ATS_E_FORMAT
    # an unknown version
    pp = [list(x) for x in pages]
    pp[0][1] = rng.choice([0, 4, 0xFFFFFFFF])     # 3 is version 2 + the S-Log section (test_slog.py)
    assert parse(pp) == ATS_E_FORMAT
    # geometry mismatch (same page size)
    for field_name in ("num_chan", "blocks", "ppb"):
        g2 = MGeo(g.num_chan, g.ways, g.blocks, g.ppb, g.page_bytes)
        if field_name == "num_chan":
            g2.num_chan = g.num_chan * 2 if g.ndie < 8 else g.num_chan // 2 or 1
            if g2.ndie == g.ndie:
                g2.ways = 1
        elif field_name == "blocks":
            g2.blocks = g.blocks + rng.choice([1, -1])
        else:
            g2.ppb = g.ppb * 2
        assert (g2.ndie, g2.blocks, g2.ppb) != (g.ndie, g.blocks, g.ppb)
        assert parse(pages, geo=(g2, c_geo(lib, g2))) == ATS_E_FORMAT, field_name
    # tables too small
    assert parse(pages, cm=cap_map - 1) == ATS_E_FULL
    assert parse(pages, cm=0) == ATS_E_FULL
    assert parse(pages, cb=cap_bad - 1) == ATS_E_FULL
    # scan_from must not exceed seq_base (ftl.h)
    if c.scan_from > 0:
        assert parse(pages, seq_base=c.scan_from - 1) == ATS_E_FORMAT
    assert parse(pages, seq_base=c.scan_from) == ATS_OK


def test_ckpt_parse_rejects_bad_plan(lib):
    """A plan longer than the die or naming a block beyond it does not parse."""
    g = MGeo(2, 1, 16, 8, 512)
    cg = c_geo(lib, g)
    good = MCkpt([[1, 2, 3], [15, 0]], [], [0] * 32, [(1, 2)], 0, 0, 0)
    assert c_parse(lib, cg, g, ckpt_pages_model(g, good), 0, 1, 0)[0] == ATS_OK
    for plan in ([[1, 16, 3], [0]], [[1], [0, 2, 0xFFFF]]):
        bad = MCkpt(plan, [], [0] * 32, [(1, 2)], 0, 0, 0)
        assert c_parse(lib, cg, g, ckpt_pages_model(g, bad), 0, 1, 0)[0] in (ATS_E_FORMAT, ATS_E_RANGE), plan
    too_long = MCkpt([list(range(16)) + [0], []], [], [0] * 32, [], 0, 0, 0)
    assert c_parse(lib, cg, g, ckpt_pages_model(g, too_long), 0, 1, 0)[0] in (ATS_E_FORMAT, ATS_E_RANGE)


def test_ckpt_parse_checks_version_of_every_page(lib):
    """Every page of a version-2 checkpoint carries `magic, 2, index, count`: a later page whose
    header says another version is not a page of this checkpoint."""
    rng = random.Random(7)
    g, cg, c, pages = _multi_page_ckpt(rng, lib)
    pp = [list(x) for x in pages]
    pp[1][1] = 1
    assert c_parse(lib, cg, g, pp, c.seq_base, len(c.mapping), len(c.bad))[0] == ATS_E_FORMAT


@pytest.mark.parametrize("seed", SEEDS)
def test_ckpt_parse_v1(lib, seed):
    rng = random.Random(300 + seed)
    for _ in range(5):
        g = rand_geo(rng, page_bytes=4096, blocks=rng.randint(8, 60))
        cg = c_geo(lib, g)
        plan = [rng.sample(range(g.blocks), rng.randint(0, g.blocks)) for _ in range(g.ndie)]
        room = (g.words_per_page - 6 - g.ndie - sum(map(len, plan))) // 2
        n_map = rng.choice([0, 1, rng.randint(0, room), room])
        mapping = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(n_map)]
        page = ckpt_v1_page(g, plan, mapping)
        seq_base = rng.getrandbits(rng.choice([1, 30, 64]))
        rc, p, asked = c_parse(lib, cg, g, [page], seq_base, n_map + 3, 4)
        assert rc == ATS_OK
        assert set(asked) == {0}
        s = p.s
        assert (s.version, s.seq_base, s.scan_from, s.ckpt_no, s.n_map, s.n_bad) == (1, seq_base, seq_base, 0, n_map, 0)
        for d in range(g.ndie):
            assert p.plan_len[d] == len(plan[d])
            assert [p.plan[d * g.blocks + i] for i in range(len(plan[d]))] == plan[d]
        assert list(zip(p.lpn[:n_map], p.ppn[:n_map])) == mapping
        # negative: geometry mismatch, too small a map table, a stream longer than its one page
        assert c_parse(lib, cg, g, [page[:2] + [g.ndie, g.blocks + 1] + page[4:]], seq_base, n_map + 3, 4)[0] == ATS_E_FORMAT
        if n_map:
            assert c_parse(lib, cg, g, [page], seq_base, n_map - 1, 4)[0] == ATS_E_FULL
        over = list(page)
        over[5] = room + 1
        assert c_parse(lib, cg, g, [over], seq_base, room + 5, 4)[0] == ATS_E_FORMAT


# ==================================================================================================
# durable prefix
def gen_prefix_input(rng: random.Random):
    scan_from = rng.choice([0, rng.getrandbits(rng.choice([8, 40])), (1 << 63) + rng.getrandbits(20)])
    below = min(scan_from, rng.choice([0, rng.randint(0, 10)]))
    run = rng.choice([0, 1, rng.randint(0, 80)])
    after = rng.choice([0, rng.randint(0, 20)])
    p_gap = rng.choice([0.0, 0.02, 0.1])
    p_dup = rng.choice([0.0, 0.1, 0.3])
    recs = []
    for seq in range(scan_from - below, scan_from + run + after):
        if rng.random() < p_gap:
            continue
        r = MRec(seq, rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.randrange(256),
                 rng.randrange(2), rng.randrange(32))
        recs.append(r)
        while rng.random() < p_dup:                  # re-programmed elsewhere: same content, other PPN
            recs.append(MRec(r.seq, rng.getrandbits(32), r.lpn, r.epoch, r.txid, r.kind, r.flags))
    for _ in range(rng.choice([0, 3])):              # stray pages far after the run
        recs.append(MRec(scan_from + run + after + rng.randint(2, 1000), 1, 2, 3, 0, 0, 0))
    rng.shuffle(recs)
    return recs, scan_from


@pytest.mark.parametrize("seed", SEEDS)
def test_prefix(lib, seed):
    rng = random.Random(400 + seed)
    cov = dict.fromkeys(("empty_input", "k0", "dup_in_prefix", "below", "gap", "all", "k_big"), 0)
    for _ in range(60):
        recs, scan_from = gen_prefix_input(rng)
        if rng.random() < 0.05:
            recs = []
        arr = to_c_recs(recs)
        k = lib.ats_prefix(arr, len(recs), scan_from)
        want = model_prefix(recs, scan_from)
        assert k == len(want)
        for i in range(k):
            got = from_c_rec(arr[i])
            assert got.seq == scan_from + i
            assert got.key() in {c.key() for c in want[i]}, f"record {i}"
        # nothing lost: recs[0..n) is still the input, the records not in the prefix after it (the
        # S-Log's check after the gap looks pages up there, sw/firmware/recovery.c)
        assert sorted(from_c_rec(arr[i]).key() for i in range(len(recs))) == sorted(r.key() for r in recs)
        # coverage of the generator
        cov["empty_input"] += not recs
        cov["k0"] += k == 0 and bool(recs)
        cov["dup_in_prefix"] += any(len(c) > 1 for c in want)
        cov["below"] += any(r.seq < scan_from for r in recs) and k > 0
        cov["gap"] += any(r.seq >= scan_from + k for r in recs) and k > 0
        cov["all"] += k > 0 and k == len({r.seq for r in recs})
        cov["k_big"] += k >= 30
    missing = [c for c, v in cov.items() if v == 0 and c != "empty_input"]
    assert not missing, cov


def test_prefix_small_cases(lib):
    def run(seqs, scan_from):
        recs = [MRec(s, i, 0, 0, 0, 0, 0) for i, s in enumerate(seqs)]
        arr = to_c_recs(recs)
        k = lib.ats_prefix(arr, len(recs), scan_from)
        return [arr[i].seq for i in range(k)]

    assert run([], 0) == []
    assert run([5, 3, 4], 3) == [3, 4, 5]
    assert run([5, 3, 4], 4) == [4, 5]
    assert run([5, 3, 4], 2) == []
    assert run([6, 3, 4, 4, 3], 3) == [3, 4]
    assert run([2, 1, 0, 1, 2, 3, 0], 1) == [1, 2, 3]
    top = (1 << 64) - 1
    assert run([top, top - 1, top - 2], top - 2) == [top - 2, top - 1, top]


# ==================================================================================================
# replay
REPLAY_RULES = ("plain", "trim", "reloc_applied", "reloc_stale", "tx_page", "tx_page_below_base",
                "commit_flag_page", "commit_record", "abort_flag_page", "abort_record",
                "commit_below_base_empties", "abort_below_base_empties", "commit_applies_page_below_base",
                "commit_same_lpn_twice", "dropped_open", "plain_below_base_ignored", "trim_below_base")


@pytest.mark.parametrize("seed", SEEDS)
def test_replay(lib, seed):
    rng = random.Random(500 + seed)
    cov: dict[str, int] = {}
    for it in range(8):
        g = rand_geo(rng, nlba=rng.choice([8, 32, 200]), ntx=rng.choice([1, 3, 15, 255]) if it else 4)
        n = 500 if it == 0 else rng.choice([0, 1, rng.randint(2, 50), rng.randint(200, 500)])
        recs, l2p0, scan_from, seq_base, model = gen_log(rng, g, n, base_at=0.4 if it == 0 else None)
        rc, l2p, cnt = c_replay(lib, recs, l2p0, g.ntx, seq_base)
        assert rc == ATS_OK
        diff = [i for i in range(len(l2p)) if l2p[i] != model.l2p[i]]
        assert not diff, f"lpn {diff[0]}: C {l2p[diff[0]]:#x} model {model.l2p[diff[0]]:#x}"
        assert cnt == model.cnt
        for k, v in model.cov.items():
            cov[k] = cov.get(k, 0) + v
    missing = [r for r in REPLAY_RULES if not cov.get(r)]
    assert not missing, f"generator never hit {missing}: {cov}"


def test_replay_small_cases(lib):
    """Hand-written logs, one rule each (nlba 4, ntx 2, every l2p entry starts at 100 + lpn)."""
    init = [100, 101, 102, 103]

    def run(recs, seq_base=0):
        rs = [MRec(i if s is None else s, *x) for i, (s, *x) in enumerate(recs)]
        m = ReplayModel(init, 2, seq_base)
        for r in rs:
            m.step(r)
        m.finish()
        rc, l2p, cnt = c_replay(lib, rs, init, 2, seq_base)
        assert rc == ATS_OK
        assert (l2p, cnt) == (m.l2p, m.cnt)
        return l2p, cnt

    D, L = KIND_DATA, KIND_LOG
    # fields: seq, ppn, lpn, epoch, txid, kind, flags
    assert run([(None, 7, 1, 0, 0, D, 0)])[0] == [100, 7, 102, 103]
    assert run([(None, 7, 1, 0, 0, L, F_TRIM)])[0] == [100, UNMAPPED, 102, 103]
    # RELOC: applied only while the LPN still maps to `epoch`
    assert run([(None, 9, 2, 102, 0, D, F_RELOC)])[0][2] == 9
    assert run([(None, 8, 2, 0, 0, D, 0), (None, 9, 2, 102, 0, D, F_RELOC)])[0][2] == 8
    assert run([(None, 8, 2, 0, 0, L, F_TRIM), (None, 9, 2, 102, 0, D, F_RELOC)])[0][2] == UNMAPPED
    # a tx: invisible until its commit, then applied in seq order (the later page of an LPN wins)
    log = [(None, 10, 0, 0, 1, D, 0), (None, 11, 0, 0, 1, D, 0), (None, 12, 3, 0, 0, D, 0)]
    l2p, cnt = run(log)
    assert l2p == [100, 101, 102, 12] and cnt["dropped_open"] == 1
    l2p, cnt = run(log + [(None, 13, NO_LPN, 0, 1, L, F_COMMIT)])
    assert l2p == [11, 101, 102, 12] and cnt["commits"] == 1 and cnt["applied"] == 3
    l2p, cnt = run(log + [(None, 13, 1, 0, 1, D, F_COMMIT)])
    assert l2p == [11, 13, 102, 12]
    l2p, cnt = run(log + [(None, 13, 1, 0, 1, D, F_ABORT), (None, 14, NO_LPN, 0, 1, L, F_COMMIT)])
    assert l2p == [100, 101, 102, 12] and cnt["aborts"] == 1 and cnt["commits"] == 1
    # a commit of tx 1 leaves tx 2 pending
    l2p, cnt = run([(None, 10, 0, 0, 2, D, 0), (None, 11, 1, 0, 1, D, F_COMMIT)])
    assert l2p == [100, 11, 102, 103] and cnt["dropped_open"] == 1
    # below seq_base: plain writes / TRIMs are in the checkpoint already; tx pages stay pending
    l2p, cnt = run([(None, 10, 0, 0, 0, D, 0), (None, 11, 1, 0, 0, L, F_TRIM), (None, 12, 2, 0, 1, D, 0),
                    (None, 13, NO_LPN, 0, 1, L, F_COMMIT)], seq_base=3)
    assert l2p == [100, 101, 12, 103] and cnt == dict(applied=1, trims=0, relocs_applied=0, relocs_stale=0,
                                                      commits=1, aborts=0, dropped_open=0, ignored=0)
    # a commit (or abort) below seq_base empties the list without applying it
    for fl in (F_COMMIT, F_ABORT):
        l2p, cnt = run([(None, 12, 2, 0, 1, D, 0), (None, 13, NO_LPN, 0, 1, L, fl),
                        (None, 14, 3, 0, 1, D, 0), (None, 15, NO_LPN, 0, 1, L, F_COMMIT)], seq_base=2)
        assert l2p == [100, 101, 102, 14] and cnt["commits"] == 1 and cnt["aborts"] == 0


def test_replay_txid_out_of_range(lib):
    """A record whose txid is above ntx (persistence.md section 4: not this device's; was ATS_E_RANGE,
    which failed the whole recovery and kept the host out for good) changes nothing: the log replays
    as the same log without it, the record counted in `ignored`."""
    rc, l2p, cnt = c_replay(lib, [MRec(0, 5, 0, 0, 3, KIND_DATA, 0)], [1, 2], 2, 0)
    assert (rc, l2p, cnt["ignored"], cnt["applied"]) == (ATS_OK, [1, 2], 1, 0)
    # every kind the device writes, with its txid replaced by one above ntx: a plain write, a TRIM, a
    # RELOC, a tx page, a COMMIT page, commit / abort records (the latter two of a txid in range
    # would apply / drop tx 1's page)
    log = [(0, 10, 0, 0, 1, KIND_DATA, 0)]
    bad = [(11, 1, 0, 0, KIND_DATA, 0), (12, 2, 0, 0, KIND_LOG, F_TRIM), (13, 3, 103, 0, KIND_DATA, F_RELOC),
           (14, 0, 0, 1, KIND_DATA, 0), (15, 1, 0, 1, KIND_DATA, F_COMMIT),
           (16, NO_LPN, 0, 1, KIND_LOG, F_COMMIT), (17, NO_LPN, 0, 1, KIND_LOG, F_ABORT)]
    for ppn, lpn, ep, t, kind, fl in bad:
        for above in (3, 4, 255):
            recs = [MRec(0, *log[0][1:]), MRec(1, ppn, lpn, ep, above if t == 0 else t + 2, kind, fl),
                    MRec(2, 20, NO_LPN, 0, 1, KIND_LOG, F_COMMIT)]
            rc, l2p, cnt = c_replay(lib, recs, [100, 101, 102, 103], 2, 0)
            assert rc == ATS_OK and l2p == [10, 101, 102, 103], (ppn, above, l2p)
            assert cnt == dict(applied=1, trims=0, relocs_applied=0, relocs_stale=0, commits=1, aborts=0,
                               dropped_open=0, ignored=1)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_replay_txid_above_ntx_random(lib, seed):
    """Random logs with records whose txid is above ntx mixed in: the C replay equals the model, and
    the model's mapping equals that of the same log without those records."""
    rng = random.Random(700 + seed)
    for _ in range(4):
        g = rand_geo(rng, nlba=rng.choice([8, 32]), ntx=rng.choice([1, 3, 7]))
        recs, l2p0, scan_from, seq_base, model = gen_log(rng, g, rng.randint(50, 300))
        picks = set(rng.sample(range(len(recs)), max(1, len(recs) // 10)))
        mixed = [MRec(r.seq, r.ppn, r.lpn, r.epoch, rng.randint(g.ntx + 1, 255), r.kind, r.flags) if i in picks else r
                 for i, r in enumerate(recs)]
        m = ReplayModel(l2p0, g.ntx, seq_base)
        for r in mixed:
            m.step(r)
        m.finish()
        without = ReplayModel(l2p0, g.ntx, seq_base)
        for i, r in enumerate(recs):
            if i not in picks:
                without.step(r)
        without.finish()
        assert m.l2p == without.l2p and m.cnt["ignored"] == len(picks)
        assert m.cnt == without.cnt | {"ignored": len(picks)}
        rc, l2p, cnt = c_replay(lib, mixed, l2p0, g.ntx, seq_base)
        assert rc == ATS_OK
        assert l2p == m.l2p and cnt == m.cnt


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_log_add_keeps_lowest_seqs(lib, seed):
    """The scan's bounded list (ats_log_add, persistence.md section 6 step 2): with more records than
    it holds, it keeps the lowest seqs (copies counted), whatever the scan order; the durable prefix
    of what it kept is the full log's prefix cut at a seq (the firmware before kept the first records
    met in scan order: a record of a low seq met late was dropped, a hole that ended the prefix there)."""
    rng = random.Random(800 + seed)
    for it in range(12):
        scan_from = rng.getrandbits(40)
        n = rng.choice([0, 1, 5, rng.randint(20, 400)])
        seqs = [scan_from + i for i in range(n)]
        seqs += [rng.choice(seqs) for _ in range(n // 10)] if seqs else []        # re-programmed copies
        seqs += [scan_from + n + rng.randint(1, 30) for _ in range(n // 20)]      # after a gap
        recs = [MRec(q, rng.getrandbits(12), rng.randrange(64), rng.getrandbits(16), rng.randint(0, 3),
                     rng.choice([KIND_DATA, KIND_LOG]), rng.choice([0, F_COMMIT, F_TRIM])) for q in seqs]
        rng.shuffle(recs)
        cap = rng.choice([0, 1, len(recs), len(recs) + 3, rng.randint(0, len(recs))]) if it else len(recs) // 2
        arr = (Rec * max(cap, 1))()
        dropped, k = c_uint32(0), 0
        for r in recs:
            x = to_c_recs([r])
            k = lib.ats_log_add(arr, k, cap, x, ctypes.byref(dropped))
        assert k == min(cap, len(recs)) and dropped.value == len(recs) - k
        kept = [from_c_rec(arr[i]) for i in range(k)]
        assert sorted(r.seq for r in kept) == sorted(seqs)[:k]
        keys = {}
        for r in recs:
            keys[r.key()] = keys.get(r.key(), 0) + 1
        for r in kept:                                # each kept record is one of the scan's, whole
            assert keys.get(r.key(), 0) > 0
            keys[r.key()] -= 1
        full = [e[0].seq for e in model_prefix(recs, scan_from)]
        m = lib.ats_prefix(arr, k, scan_from)
        got = [arr[i].seq for i in range(m)]
        assert got == full[:len(got)]
        if len(got) < len(full):                      # cut, not holed: every kept seq is below the cut
            assert all(r.seq < full[len(got)] for r in kept)
        assert got == [e[0].seq for e in model_prefix(kept, scan_from)]


# ---- section 6 step 2, "Old pages": where the scan of a block whose page 0 is old resumes
def model_resume(ppb: int, old) -> tuple[int, list[int]]:
    """persistence.md section 6 "Old pages": binary search between page 0 (old) and ppb (not old);
    the probe lo + (hi - lo) // 2 while hi - lo > 1; returns (lo + 1, the pages probed in order)."""
    lo, hi, probes = 0, ppb, []
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        probes.append(mid)
        if old(mid):
            lo = mid
        else:
            hi = mid
    return lo + 1, probes


def gen_block(rng: random.Random, ppb: int, seq_base: int) -> list[tuple[str, int]]:
    """One plan block as a device leaves it (page order = program order): k pages programmed before the
    checkpoint (valid kind 0/1 below seq_base; now and then an invalid page: a torn page of an earlier
    cut, a failed program; a kind-2/3 page), then m after it (valid at or above seq_base, or torn),
    then erased pages. Page 0 is old (the case the firmware searches)."""
    k = max(1, min(ppb, rng.choice([1, 2, ppb - 1, ppb, rng.randint(1, ppb)])))
    m = min(ppb - k, rng.choice([0, 1, ppb - k, rng.randint(0, ppb - k)]))
    seq = seq_base - k - rng.randint(0, 50)
    pages = [("old", seq)]
    for _ in range(k - 1):
        seq += rng.randint(1, 3)
        r = rng.random()
        pages.append(("invalid", 0) if r < 0.08 else ("kind2", 0) if r < 0.12 else ("old", min(seq, seq_base - 1)))
    seq = seq_base
    for i in range(m):
        seq += rng.randint(0, 3)
        pages.append(("invalid", 0) if rng.random() < 0.1 else ("new", seq))
    pages += [("erased", 0)] * (ppb - len(pages))
    return pages


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_scan_resume(lib, seed):
    """ats_scan_resume against the section's rule (the probes and the resume page), and the rule's
    promise on blocks a device can leave: no page at or above seq_base lies below the resume page (the
    pages not read are older than the checkpoint), and at most log2(ppb) pages are probed. Then on
    blocks labelled at random (no seq order: a rule that assumed one would skip a new page): the same
    probes, and the page below the resume page is page 0 or a probed old one."""
    rng = random.Random(900 + seed)
    for it in range(300):
        ppb = rng.choice([1, 2, 3, 4, 64, 128, 256, rng.randint(1, 300)])
        seq_base = rng.randint(1000, 1 << 40)
        if it % 3 == 2:
            pages = [("old", 0)] + [(rng.choice(["old", "new", "invalid", "erased"]), 0) for _ in range(ppb - 1)]
        else:
            pages = gen_block(rng, ppb, seq_base)
        assert len(pages) == ppb and pages[0][0] == "old"
        seen = []

        def old(_ctx, p):
            seen.append(p)
            assert 0 < p < ppb, p
            return 1 if pages[p][0] == "old" else 0

        fn = OLD_FN(old)
        probes = c_uint32(0xDEAD)
        got = lib.ats_scan_resume(ppb, fn, None, ctypes.byref(probes))
        want, want_probes = model_resume(ppb, lambda p: pages[p][0] == "old")
        assert (got, seen, probes.value) == (want, want_probes, len(want_probes))
        assert 1 <= got <= ppb and len(seen) <= max(0, (ppb - 1).bit_length())
        assert got == 1 or pages[got - 1][0] == "old" and got - 1 in seen
        if it % 3 != 2:
            assert all(kind not in ("new",) or i >= got for i, (kind, _) in enumerate(pages))
            assert all(q < seq_base for kind, q in pages[:got] if kind == "old")
    # the small cases by hand: one page (nothing to search), two pages, and a full old block
    assert lib.ats_scan_resume(1, OLD_FN(lambda c, p: 1), None, None) == 1
    assert lib.ats_scan_resume(2, OLD_FN(lambda c, p: 0), None, None) == 1
    assert lib.ats_scan_resume(2, OLD_FN(lambda c, p: 1), None, None) == 2
    assert lib.ats_scan_resume(128, OLD_FN(lambda c, p: 1), None, None) == 128
    assert lib.ats_scan_resume(128, OLD_FN(lambda c, p: int(p < 40)), None, None) == 40


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_prefix_then_replay(lib, seed):
    """Scan output (shuffled, with pages below scan_from and after a gap) -> ats_prefix -> ats_replay."""
    rng = random.Random(600 + seed)
    g = rand_geo(rng, nlba=64, ntx=7)
    recs, l2p0, scan_from, seq_base, model = gen_log(rng, g, 300)
    noise = [MRec(scan_from + 300 + rng.randint(1, 50), 0x55, rng.randrange(64), 0, 0, KIND_DATA, 0)
             for _ in range(10)]
    if scan_from >= 5:
        noise += [MRec(scan_from - rng.randint(1, 5), 0x66, rng.randrange(64), 0, 0, KIND_DATA, 0) for _ in range(5)]
    scanned = recs + noise
    rng.shuffle(scanned)
    arr = to_c_recs(scanned)
    k = lib.ats_prefix(arr, len(scanned), scan_from)
    assert k == 300
    nxt = (c_int32 * k)()
    head, tail = (c_int32 * 8)(), (c_int32 * 8)()
    l2p = (c_uint32 * 64)(*l2p0)
    r = Replay(l2p=l2p, nlba=64, ntx=7, next=nxt, head=head, tail=tail)
    assert lib.ats_replay(ctypes.byref(r), arr, k, seq_base) == ATS_OK
    assert list(l2p) == model.l2p
    assert {c: getattr(r, c) for c in COUNTERS} == model.cnt


# ==================================================================================================
# GC victim choice and wear levelling
def model_gc_pick(pol: int, valid: list[int], age: list[int], ppb: int) -> int:
    cands = [i for i in range(len(valid)) if valid[i] < ppb]
    if not cands:
        return -1
    if pol == GC_GREEDY:
        return min(cands, key=lambda i: (valid[i], i))

    def benefit(i):
        if valid[i] == 0:
            return (1, Fraction(age[i]))             # empty beats every non-empty one; then the oldest
        return (0, Fraction(age[i] * (ppb - valid[i]), 2 * valid[i]))

    best = max(benefit(i) for i in cands)
    return min(i for i in cands if benefit(i) == best)


def c_gc_pick(lib, pol, valid, age, ppb):
    n = len(valid)
    return lib.ats_gc_pick(pol, (c_uint32 * max(n, 1))(*valid), (c_uint32 * max(n, 1))(*age), n, ppb)


@pytest.mark.parametrize("seed", SEEDS)
def test_gc_pick(lib, seed):
    rng = random.Random(700 + seed)
    cov = dict.fromkeys(("none", "tie_greedy", "empty", "no_empty", "tie_cb", "full_skipped"), 0)
    for _ in range(400):
        ppb = rng.choice([8, 16, 64, 256, 1024, 4096])
        n = rng.choice([0, 1, rng.randint(1, 8), rng.randint(1, 64)])
        vmax = rng.choice([ppb, ppb + 3, 3, 1])
        valid = [min(rng.randint(0, vmax), rng.choice([vmax, ppb + 3])) for _ in range(n)]
        if rng.random() < 0.3:
            valid = [rng.choice([0, ppb, ppb + 1, rng.randint(0, ppb)]) for _ in range(n)]
        amax = rng.choice([3, 100, M32])
        age = [rng.randint(0, amax) for _ in range(n)]
        if n > 1 and rng.random() < 0.3:             # a copy of another block: an exact tie
            i, j = rng.sample(range(n), 2)
            valid[j], age[j] = valid[i], age[i]
        for pol in (GC_GREEDY, GC_COST_BENEFIT):
            want = model_gc_pick(pol, valid, age, ppb)
            got = c_gc_pick(lib, pol, valid, age, ppb)
            assert got == want, (pol, ppb, valid, age)
        cands = [i for i in range(n) if valid[i] < ppb]
        cov["none"] += not cands
        cov["full_skipped"] += any(v >= ppb for v in valid) and bool(cands)
        if cands:
            vmin = min(valid[i] for i in cands)
            cov["tie_greedy"] += sum(valid[i] == vmin for i in cands) > 1
            cov["empty"] += sum(valid[i] == 0 for i in cands) > 1
            ne = [i for i in cands if valid[i]]
            cov["no_empty"] += len(ne) == len(cands) > 1
            sc = [Fraction(age[i] * (ppb - valid[i]), 2 * valid[i]) for i in ne]
            cov["tie_cb"] += len(ne) == len(cands) and len(sc) > 1 and sc.count(max(sc)) > 1
    assert all(cov.values()), cov


def test_gc_pick_small_cases(lib):
    G, C = GC_GREEDY, GC_COST_BENEFIT
    assert c_gc_pick(lib, G, [], [], 8) == -1
    assert c_gc_pick(lib, G, [8, 9], [1, 1], 8) == -1
    assert c_gc_pick(lib, G, [5, 3, 3, 8], [9, 1, 2, 9], 8) == 1
    assert c_gc_pick(lib, C, [8, 7, 0, 0, 1], [9, 100, 5, 7, 10 ** 9], 8) == 3   # empty, then the oldest
    assert c_gc_pick(lib, C, [0, 0], [5, 5], 8) == 0
    # 10 * 4 / 8 = 5 vs 20 * 2 / 12 = 3.33 vs 50 * 1 / 14 = 3.57: block 0
    assert c_gc_pick(lib, C, [4, 6, 7], [10, 20, 50], 8) == 0
    # ties keep the lowest index: 5 * 6 / 4 = 7.5, 10 * 4 / 8 = 5, 7.5
    assert c_gc_pick(lib, C, [2, 4, 2], [5, 10, 5], 8) == 0
    # 15 * 4 / 8 = 7.5 = 5 * 6 / 4: block 0; one more unit of age on block 1 wins
    assert c_gc_pick(lib, C, [4, 2], [15, 5], 8) == 0
    assert c_gc_pick(lib, C, [4, 2], [15, 6], 8) == 1
    # greedy ignores age
    assert c_gc_pick(lib, G, [4, 2], [10 ** 9, 0], 8) == 1


def test_gc_pick_cost_benefit_large_ppb(lib):
    """The benefit comparison is exact up to the largest ppb ats_geo_init accepts (32768) over the
    whole uint32 range of ages: random cases against the exact (Fraction) model."""
    rng = random.Random(4242)
    ppb = 32768
    for _ in range(2000):
        n = rng.randint(2, 6)
        valid = [rng.randint(1, ppb - 1) for _ in range(n)]
        age = [rng.randint(0, 2 ** 32 - 1) for _ in range(n)]
        assert c_gc_pick(lib, GC_COST_BENEFIT, valid, age, ppb) == model_gc_pick(GC_COST_BENEFIT, valid, age, ppb)


def model_wl_pick(ec: list[int]) -> int:
    return min(range(len(ec)), key=lambda i: (ec[i], i)) if ec else -1


def model_wl_due(ec: list[int], usable: list[int], thresh: int) -> bool:
    good = [e for e, u in zip(ec, usable) if u]
    return bool(good) and max(good) - min(good) > thresh


@pytest.mark.parametrize("seed", SEEDS)
def test_wear_levelling(lib, seed):
    rng = random.Random(800 + seed)
    cov = dict.fromkeys(("due", "not_due", "none_usable", "at_thresh", "tie", "cut"), 0)
    for _ in range(300):
        n = rng.choice([0, 1, rng.randint(1, 10), rng.randint(1, 200)])
        emax = rng.choice([3, 1000, 0xFFFF])
        ec = [rng.randint(0, emax) for _ in range(n)]
        usable = [int(rng.random() < rng.choice([0.0, 0.5, 0.9, 1.0])) for _ in range(n)]
        good = [e for e, u in zip(ec, usable) if u]
        spread = max(good) - min(good) if good else 0
        thresh = rng.choice([0, spread, max(spread - 1, 0), spread + 1, rng.randint(0, 0x10000), M32])
        ca = (c_uint16 * max(n, 1))(*ec)
        ua = (c_uint8 * max(n, 1))(*usable)
        assert lib.ats_wl_pick_free(ca, n) == model_wl_pick(ec)
        # a plan's first m = m repeated picks of the model over what is left (m: none, some, all, more)
        m = rng.choice([0, 1, rng.randint(0, n + 1), n, n + 5, 32])
        oa = (c_uint16 * max(n, m, 1))(*([0xBEEF] * max(n, m, 1)))
        k_got = lib.ats_wl_order(ca, oa, n, m)
        left, want_order = list(range(n)), []
        while left and len(want_order) < m:
            k = model_wl_pick([ec[i] for i in left])
            want_order.append(left.pop(k))
        assert k_got == len(want_order) and list(oa)[:k_got] == want_order, (ec, m, list(oa)[:k_got])
        assert all(v == 0xBEEF for v in list(oa)[k_got:]), "wrote past the k entries it returned"
        cov["cut"] += 0 < m < n
        got = lib.ats_wl_static_due(ca, ua, n, thresh)
        want = model_wl_due(ec, usable, thresh)
        assert bool(got) == want, (ec, usable, thresh)
        cov["due"] += want
        cov["not_due"] += not want and bool(good)
        cov["none_usable"] += n > 0 and not good
        cov["at_thresh"] += bool(good) and spread == thresh
        cov["tie"] += n > 1 and ec.count(min(ec)) > 1
    assert all(cov.values()), cov
