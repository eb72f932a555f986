# SPDX-License-Identifier: Apache-2.0
"""Host unit tests of the firmware's S-Log merge policy (sw/firmware/ftl/policy.c ``ats_sl_*``).

The policy is compiled with ftl.c as tests/test_policy.py does (``ATS_POLICY_DIR=<dir>`` builds
``<dir>/policy.c`` instead, to try a mutant) and every decision is compared with a plain-Python model
written from docs/architecture.md §11.6 "Firmware merge policy" (not from the C):

* live log pages = the distinct LPGNs of the fragments of the entries read; between reads of the
  index the firmware bounds them by live + (next LPGN - the next LPGN at the read);
* merging is on above SLOG_HI live pages (the bound) or above 3/4 of SLOG_LPNS entries in use, off
  below SLOG_LO with fewer than half the entries in use (hysteresis); independently a merge is due
  while the oldest live fragment is within SLOG_PPNS/4 of leaving the backend's LPGN -> PPN table
  (next - oldest > SLOG_PPNS - SLOG_PPNS/4, 32-bit LPGNs);
* the LPN merged next: the entry whose oldest fragment is the oldest (a tie: the lowest index),
  skipping entries without fragments and those whose MERGE answered unreadable (until their
  (lpn, first LPGN) changes); wanted with nothing to merge: stalled until a counter moves;
* the index is read only when it may be needed; GC: an entry with fragments (or a held record's)
  must be merged before a victim block is erased or relocated when its base or one of its
  fragments' log pages lies in that block;
* GC's wait (``ats_sl_rx_wait``, §11.6 "A record being received"): with write-backs held, the
  backend's op 7 rop 6 is polled until it says no record is being received (bounded: ATS_E_TIMEOUT),
  so the index read that follows shows every record accepted before the hold (``test_gc_rx_wait``,
  a model of the port; it fails with the wait removed).

Random states and random sequences of passes are run through both, decision by decision and the
whole state after every call; a closed loop (a simulated backend and host writing fragments) checks
the properties the policy is for: no live fragment leaves the LPGN -> PPN table, the live pages stay
at most SLOG_MAX, and once the host stops the S-Log goes below SLOG_LO / half. Mutants it fails on:
sw/firmware/README.md "S-Log" (merge policy).
"""
from __future__ import annotations

import ctypes
import os
import random
import subprocess
from ctypes import CFUNCTYPE, POINTER, c_int, c_int32, c_uint8, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass, field
from pathlib import Path

import pytest

FTL_DIR = Path(__file__).resolve().parents[1] / "ftl"
POLICY_DIR = Path(os.environ.get("ATS_POLICY_DIR", FTL_DIR))
MAXF = 8
UNMAPPED = 0xFFFFFFFF
M32 = 0xFFFFFFFF
SEEDS = list(range(8))
# the firmware's parameters (sw/firmware/fw.h, the backend's defaults)
FW = dict(max=256, hi=192, lo=128, lpns=256, ppns=256)
STEP = 8


class Ent(ctypes.Structure):
    _fields_ = [("lpn", c_uint32), ("nf", c_uint32), ("pend", c_uint32), ("base", c_uint32),
                ("lpgn", c_uint32 * MAXF), ("ppn", c_uint32 * MAXF)]


SL_FIELDS = [("max", c_uint32), ("hi", c_uint32), ("lo", c_uint32), ("lpns", c_uint32), ("ppns", c_uint32),
             ("next", c_uint32), ("used", c_uint32), ("valid", c_int32), ("dump_next", c_uint32),
             ("dump_used", c_uint32), ("live", c_uint32), ("has_old", c_int32), ("oldest", c_uint32),
             ("on", c_int32), ("stall", c_int32)]


class SL(ctypes.Structure):
    _fields_ = SL_FIELDS


class Geo(ctypes.Structure):
    _fields_ = [(n, c_uint32) for n in ("ndie", "ways", "blocks", "ppb", "page_bytes", "nlba", "ntx", "die_w", "pg_w")]


# ats_sl_rx_wait's port (policy.h ats_sl_port_t): rop 6 (epoch 0), the cycle counter and the pump
# (the firmware's work between two reads: blocks handed out, then asleep)
CTR_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_uint32), POINTER(c_uint32))
NOW_FN = CFUNCTYPE(c_uint64, c_void_p)
PUMP_FN = CFUNCTYPE(None, c_void_p)


class Port(ctypes.Structure):
    _fields_ = [("ctx", c_void_p), ("ctr", CTR_FN), ("now", NOW_FN), ("pump", PUMP_FN)]


HELPER_C = r"""
#include <stddef.h>
#include "policy.h"
#define O(f) (size_t)offsetof(ats_sl_t, f)
#define E(f) (size_t)offsetof(ats_sl_ent_t, f)
const size_t lay_sl[] = {sizeof(ats_sl_t), O(max), O(hi), O(lo), O(lpns), O(ppns), O(next), O(used), O(valid),
    O(dump_next), O(dump_used), O(live), O(has_old), O(oldest), O(on), O(stall)};
const size_t lay_ent[] = {sizeof(ats_sl_ent_t), E(lpn), E(nf), E(pend), E(base), E(lpgn), E(ppn), ATS_SL_MAX_FRAGS};
const size_t lay_geo = sizeof(ats_geo_t);
const size_t lay_port[] = {sizeof(ats_sl_port_t), offsetof(ats_sl_port_t, ctx), offsetof(ats_sl_port_t, ctr),
    offsetof(ats_sl_port_t, now), offsetof(ats_sl_port_t, pump)};
"""


def _gcc(out: Path, *srcs: Path) -> None:
    cmd = ["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{POLICY_DIR}",
           f"-I{FTL_DIR}", "-o", str(out), *map(str, srcs)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    d = tmp_path_factory.mktemp("slog_policy_build")
    _gcc(d / "libpolicy.so", FTL_DIR / "ftl.c", POLICY_DIR / "policy.c")
    (d / "helper.c").write_text(HELPER_C)
    _gcc(d / "libhelper.so", d / "helper.c")
    return d


@pytest.fixture(scope="module")
def lib(build):
    L = ctypes.CDLL(str(build / "libpolicy.so"))
    P, EP, U32P, U8P = POINTER(SL), POINTER(Ent), POINTER(c_uint32), POINTER(c_uint8)
    sig = {
        "ats_sl_ctr": (None, [P, c_uint32, c_uint32]),
        "ats_sl_live_ub": (c_uint32, [P]),
        "ats_sl_aged": (c_int, [P]),
        "ats_sl_need_dump": (c_int, [P]),
        "ats_sl_recount": (None, [P, EP, c_uint32, U8P, U32P, c_int]),
        "ats_sl_want": (c_int, [P]),
        "ats_sl_pick": (c_int, [P, EP, c_uint32, U8P]),
        "ats_sl_step": (c_int, [P, EP, c_uint32, U8P]),
        "ats_sl_skip": (c_uint32, [EP, c_uint32, U32P, U32P, c_uint32, U8P]),
        "ats_sl_gc_lpn": (c_int, [POINTER(Geo), EP, c_uint32, c_uint32]),
        "ats_sl_ext_back": (c_uint32, [c_uint32, c_uint32, c_uint32]),
        "ats_geo_init": (c_int, [POINTER(Geo)] + [c_uint32] * 7),
        "ats_sl_rx_wait": (c_int, [POINTER(Port), c_uint64, U32P]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


def test_struct_layout(build):
    H = ctypes.CDLL(str(build / "libhelper.so"))
    lay = list((ctypes.c_size_t * (len(SL_FIELDS) + 1)).in_dll(H, "lay_sl"))
    assert lay[0] == ctypes.sizeof(SL)
    assert lay[1:] == [getattr(SL, n).offset for n, _ in SL_FIELDS]
    lay = list((ctypes.c_size_t * 8).in_dll(H, "lay_ent"))
    assert lay == [ctypes.sizeof(Ent), Ent.lpn.offset, Ent.nf.offset, Ent.pend.offset, Ent.base.offset,
                   Ent.lpgn.offset, Ent.ppn.offset, MAXF]
    assert ctypes.c_size_t.in_dll(H, "lay_geo").value == ctypes.sizeof(Geo)
    assert list((ctypes.c_size_t * 5).in_dll(H, "lay_port")) == [ctypes.sizeof(Port), Port.ctx.offset,
                                                                 Port.ctr.offset, Port.now.offset,
                                                                 Port.pump.offset]


# ==================================================================================================
# the plain-Python model (docs/architecture.md §11.6, not the C)
@dataclass
class E:
    """An index entry as the firmware read it."""
    lpn: int
    lpgns: list = field(default_factory=list)   # F's log pages, oldest first
    pend: int = 0
    base: int = UNMAPPED
    ppns: list = field(default_factory=list)    # each fragment's log page PPN (UNMAPPED: unknown)


@dataclass
class Model:
    max: int
    hi: int
    lo: int
    lpns: int
    ppns: int
    next: int = 0
    used: int = 0
    valid: bool = False
    dump_next: int = 0
    dump_used: int = 0
    live: int = 0
    has_old: bool = False
    oldest: int = 0
    on: bool = False
    stall: bool = False

    def counters(self, nxt, used):
        if (nxt, used) != (self.next, self.used):
            self.stall = False           # something moved: the index may have changed
        self.next, self.used = nxt, used

    def live_bound(self):
        return min(M32, self.live + ((self.next - self.dump_next) & M32))

    def aged(self):
        # the table keeps LPGNs next - ppns .. next - 1; due a quarter of it early
        return self.valid and self.has_old and ((self.next - self.oldest) & M32) > self.ppns - self.ppns // 4

    def full(self):
        return self.used > self.lpns * 3 / 4

    def need_dump(self):
        if not self.used:
            return False
        if not self.valid:
            return True
        if self.stall:
            return False
        return self.on or self.live_bound() > self.hi or self.full() or self.aged()

    def recount(self, ents, fresh, skip=None):
        pages = [lg for e in ents for lg in e.lpgns]
        # the age rule looks at the LPNs it can merge (not skipped as unreadable)
        mergeable = [lg for i, e in enumerate(ents) if not (skip and skip[i]) for lg in e.lpgns]
        self.has_old = bool(mergeable)
        if mergeable:
            self.oldest = max(mergeable, key=lambda lg: (self.next - lg) & M32)
        if fresh:
            self.dump_next, self.dump_used, self.live = self.next, self.used, len(set(pages))
        else:
            self.live = min(self.live, len(set(pages)))
        self.valid = True

    def want(self):
        if not self.used:
            self.on = False
        elif self.live_bound() > self.hi or self.full():
            self.on = True
        elif self.live_bound() < self.lo and self.used < self.lpns / 2:
            self.on = False
        return bool(self.used) and (self.on or self.aged())

    def pick(self, ents, skip):
        best, best_age = -1, -1
        for i, e in enumerate(ents):
            if not e.lpgns or skip[i]:
                continue
            age = (self.next - e.lpgns[0]) & M32
            if age > best_age:
                best, best_age = i, age
        return best

    def step(self, ents, skip):
        if not self.want():
            return -1
        k = self.pick(ents, skip)
        if k < 0:
            self.stall = True
        return k


def m_skip(ents, bad):
    """Skip flags and the bad list kept: (lpn, first LPGN) pairs still naming an entry with fragments."""
    keys = {(e.lpn, e.lpgns[0]) for e in ents if e.lpgns}
    skip = [bool(e.lpgns) and (e.lpn, e.lpgns[0]) in set(bad) for e in ents]
    return skip, [b for b in bad if b in keys]


def m_gc_lpn(geo, e, d, b):
    if not e.lpgns and not e.pend:
        return False

    def inside(ppn):
        return ppn != UNMAPPED and ppn % geo["ndie"] == d and ppn >> (geo["die_w"] + geo["pg_w"]) == b
    return inside(e.base) or any(inside(p) for p in e.ppns[:len(e.lpgns)])


def m_ext_back(low, ref, w):
    # the value with those low bits in [ref - 2^w, ref - 1]
    m = (1 << w) - 1
    for k in range(1, (1 << w) + 1):
        x = (ref - k) & M32
        if x & m == low:
            return x
    raise AssertionError


# ==================================================================================================
# drivers: the same call on the C and the model, the state compared after it
class Pair:
    def __init__(self, lib, cfg):
        self.L = lib
        self.c = SL(**cfg)
        self.m = Model(**cfg)
        self.scratch = (c_uint32 * (4096 * MAXF))()

    def check(self, what):
        c, m = self.c, self.m
        got = {n: getattr(c, n) for n, _ in SL_FIELDS}
        exp = {n: int(getattr(m, n)) for n, _ in SL_FIELDS}
        if not m.valid:   # before a read of the index its fields are not defined
            for n in ("dump_next", "dump_used", "live", "has_old", "oldest"):
                got.pop(n), exp.pop(n)
        elif not m.has_old:
            got.pop("oldest"), exp.pop("oldest")
        assert got == exp, f"{what}: C {got} model {exp}"

    @staticmethod
    def cents(ents):
        arr = (Ent * max(1, len(ents)))()
        for i, e in enumerate(ents):
            arr[i].lpn, arr[i].nf, arr[i].pend, arr[i].base = e.lpn, len(e.lpgns), e.pend, e.base
            for j, lg in enumerate(e.lpgns):
                arr[i].lpgn[j] = lg
                arr[i].ppn[j] = e.ppns[j] if j < len(e.ppns) else UNMAPPED
        return arr

    def counters(self, nxt, used):
        self.L.ats_sl_ctr(ctypes.byref(self.c), nxt, used)
        self.m.counters(nxt, used)
        self.check("ctr")
        assert self.L.ats_sl_live_ub(ctypes.byref(self.c)) == self.m.live_bound()
        assert bool(self.L.ats_sl_aged(ctypes.byref(self.c))) == self.m.aged(), "aged"

    def need_dump(self):
        got = bool(self.L.ats_sl_need_dump(ctypes.byref(self.c)))
        exp = self.m.need_dump()
        assert got == exp, f"need_dump: C {got} model {exp} ({self.m})"
        return exp

    def recount(self, ents, fresh, skip=None):
        sk = (c_uint8 * max(1, len(ents)))(*[int(x) for x in skip]) if skip is not None else None
        self.L.ats_sl_recount(ctypes.byref(self.c), self.cents(ents), len(ents), sk, self.scratch, int(fresh))
        self.m.recount(ents, fresh, skip)
        self.check(f"recount fresh={fresh}")

    def want(self):
        got = bool(self.L.ats_sl_want(ctypes.byref(self.c)))
        exp = self.m.want()
        assert got == exp, f"want: C {got} model {exp}"
        self.check("want")
        return exp

    def step(self, ents, skip):
        sk = (c_uint8 * max(1, len(ents)))(*[int(s) for s in skip])
        got = self.L.ats_sl_step(ctypes.byref(self.c), self.cents(ents), len(ents), sk)
        exp = self.m.step(ents, skip)
        assert got == exp, f"step: C {got} model {exp} ({self.m}, {[(e.lpn, e.lpgns) for e in ents]}, {skip})"
        self.check("step")
        return exp

    def skip(self, ents, bad):
        n = len(bad)
        bl = (c_uint32 * max(1, n))(*[b[0] for b in bad])
        bg = (c_uint32 * max(1, n))(*[b[1] for b in bad])
        sk = (c_uint8 * max(1, len(ents)))()
        k = self.L.ats_sl_skip(self.cents(ents), len(ents), bl, bg, n, sk)
        skip, kept = m_skip(ents, bad)
        assert [bool(x) for x in sk[:len(ents)]] == skip
        assert [(bl[i], bg[i]) for i in range(k)] == kept
        return skip, kept


def rand_cfg(rng):
    if rng.random() < 0.4:
        return dict(FW)
    mx = rng.randint(8, 300)
    hi = rng.randint(2, mx - 1)
    lo = rng.randint(1, hi - 1)
    return dict(max=mx, hi=hi, lo=lo, lpns=rng.choice([4, 8, 16, 64, 256]), ppns=rng.choice([8, 16, 64, 256]))


# ==================================================================================================
# a simulated backend index: entries with fragments in commit order, the LPGN counter
class Index:
    def __init__(self, rng, cfg, frags=4, start=None):
        self.rng, self.cfg, self.frags = rng, cfg, frags
        self.next = start if start is not None else rng.choice([0, 1000, M32 - 300, rng.getrandbits(32)])
        self.ents: dict[int, E] = {}     # slot -> entry
        self.lpns = set()

    def free_slot(self):
        free = [s for s in range(self.cfg["lpns"]) if s not in self.ents]
        return self.rng.choice(free) if free else None

    def record(self, pages, nfr):
        """A record of `pages` log pages with nfr fragments on random LPNs (a full entry refuses one)."""
        first = self.next
        for _ in range(nfr):
            lg = (first + self.rng.randrange(max(1, pages))) & M32
            mine = [s for s, e in self.ents.items() if len(e.lpgns) < self.frags]
            if mine and self.rng.random() < 0.5:
                e = self.ents[self.rng.choice(mine)]
            else:
                s = self.free_slot()
                if s is None:
                    continue
                lpn = self.rng.randrange(4096)
                if lpn in self.lpns:
                    continue
                e = self.ents[s] = E(lpn)
                self.lpns.add(lpn)
            # fragments are appended in commit order: not older than the entry's last one
            if e.lpgns and ((lg - e.lpgns[-1]) & M32) > 1 << 31:
                lg = e.lpgns[-1]
            e.lpgns.append(lg)
        self.next = (self.next + pages) & M32

    def reserve(self):
        s = self.free_slot()
        lpn = self.rng.randrange(4096)
        if s is not None and lpn not in self.lpns:
            self.ents[s] = E(lpn, pend=self.rng.choice([0, 0, 1]))
            self.lpns.add(lpn)

    def clear(self, slot):
        e = self.ents.pop(slot)
        self.lpns.discard(e.lpn)

    def dump(self):
        return [E(e.lpn, list(e.lpgns), e.pend) for _, e in sorted(self.ents.items())]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_passes(lib, seed):
    """Random sequences of housekeeping passes (counters, read of the index when needed, merges with
    every MERGE answer) on a random index: every decision and the state equal to the model's."""
    rng = random.Random(seed)
    stats = dict(dumps=0, merges=0, on=0, aged=0, stall=0, unreadable=0, off=0)
    for _ in range(30):
        cfg = rand_cfg(rng)
        ix = Index(rng, cfg, frags=rng.choice([1, 4, MAXF]))
        p = Pair(lib, cfg)
        p.c.next = p.m.next = ix.next    # the recovery's next LPGN
        bad: list = []
        for _ in range(rng.randint(20, 120)):
            # the host between passes
            for _ in range(rng.choice([0, 0, 1, 3])):
                r = rng.random()
                if r < 0.55:
                    ix.record(rng.choice([1, 1, 2, 5, 40]), rng.randint(1, 6))
                elif r < 0.75 and ix.ents:
                    ix.clear(rng.choice(list(ix.ents)))
                elif r < 0.85:
                    ix.reserve()
                else:
                    ix.next = (ix.next + rng.choice([1, 50, cfg["ppns"] // 2])) & M32   # pages of other LPNs
            p.counters(ix.next, len(ix.ents))
            if not p.need_dump():
                p.want()
                continue
            stats["dumps"] += 1
            ents = ix.dump()
            skip, bad = p.skip(ents, bad)
            p.recount(ents, True, skip)
            slots = sorted(ix.ents)
            for _ in range(STEP):
                was_on = p.m.on
                k = p.step(ents, skip)
                stats["aged"] += p.m.aged()
                stats["stall"] += p.m.stall
                stats["off"] += was_on and not p.m.on
                if k < 0:
                    break
                stats["on"] += p.m.on
                st = rng.choices([0, 1, 2, 3], [8, 1, 1, 1])[0]
                if st == 3:
                    skip[k] = True
                    bad.append((ents[k].lpn, ents[k].lpgns[0]))
                    stats["unreadable"] += 1
                    p.recount(ents, False, skip)
                    continue
                stats["merges"] += 1
                ents[k] = E(ents[k].lpn, [], 0)
                if slots[k] in ix.ents:
                    ix.clear(slots[k])
                p.recount(ents, False, skip)
    # every branch taken
    assert all(v > 0 for v in stats.values()), stats


def test_thresholds_exact(lib):
    """The edges with the firmware's parameters: on above SLOG_HI (not at it) or above 3/4 of the
    index, off below SLOG_LO (not at it) only with the index below half, aged past 3/4 of the table."""
    def pair(live, used, on, oldest_age=None, nxt=1000):
        p = Pair(lib, FW)
        ents = [E(i, [(nxt - 1 - i) & M32]) for i in range(live)]
        if oldest_age is not None and ents:
            ents[0].lpgns = [(nxt - oldest_age) & M32]
        p.counters(nxt, used)
        p.recount(ents, True)
        p.c.on = int(on)
        p.m.on = on
        return p
    assert not pair(192, 10, False).want() and pair(193, 10, False).want()
    assert not pair(10, 192, False).want() and pair(10, 193, False).want()
    assert pair(128, 10, True).want() and not pair(127, 10, True).want()
    assert pair(100, 128, True).want() and not pair(100, 127, True).want()
    assert not pair(5, 5, False, oldest_age=192).want() and pair(5, 5, False, oldest_age=193).want()
    # LPGNs across the 32-bit wrap
    assert pair(5, 5, False, oldest_age=193, nxt=50).want()
    assert not pair(5, 5, False, oldest_age=100, nxt=50).want()


def test_oldest_first_and_skip(lib):
    p = Pair(lib, FW)
    p.counters(500, 4)
    ents = [E(7, [300, 400]), E(8, [200]), E(9, []), E(10, [200, 450])]
    p.recount(ents, True)
    p.c.on, p.m.on = 1, True
    assert p.step(ents, [False] * 4) == 1          # 200, the lower index of the tie
    assert p.step(ents, [False, True, False, False]) == 3
    skip, kept = p.skip(ents, [(8, 200), (10, 999), (11, 5)])
    assert skip == [False, True, False, False] and kept == [(8, 200)]
    assert p.step(ents, [True, True, False, True]) == -1 and p.m.stall
    assert not p.need_dump()                        # stalled, the counters unchanged
    p.counters(501, 4)
    assert not p.m.stall and p.need_dump()
    # the age rule looks only at the LPNs it may merge: with the old ones unreadable, nothing is due
    p.recount(ents, True, [True, True, False, True])
    assert not p.m.has_old and not p.want()


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_gc_lpn(lib, seed):
    """GC's rule: an entry with fragments (or a held record's) whose base or one of whose fragments'
    log pages lies in the victim block; random geometries, PPNs unknown (UNMAPPED) at random."""
    rng = random.Random(seed)
    hits = misses = 0
    for _ in range(300):
        chan, ways = rng.choice([1, 2, 4]), rng.choice([1, 2])
        blocks, ppb = rng.choice([8, 32]), rng.choice([16, 64, 128])
        g = Geo()
        assert lib.ats_geo_init(ctypes.byref(g), chan, ways, blocks, ppb, 4096, 1000, 8) == 0
        geo = dict(ndie=g.ndie, die_w=g.die_w, pg_w=g.pg_w)
        d, b = rng.randrange(g.ndie), rng.randrange(blocks)

        def ppn(near):
            if rng.random() < 0.15:
                return UNMAPPED
            dd, bb = (d, b) if near and rng.random() < 0.5 else (rng.randrange(g.ndie), rng.randrange(blocks))
            return (bb << (g.pg_w + g.die_w)) | (rng.randrange(ppb) << g.die_w) | dd
        nf = rng.choice([0, 0, 1, 2, 4, MAXF])
        e = E(rng.randrange(1000), [rng.getrandbits(32) for _ in range(nf)], rng.choice([0, 0, 1]),
              ppn(rng.random() < 0.4), [ppn(rng.random() < 0.3) for _ in range(nf)])
        got = bool(lib.ats_sl_gc_lpn(ctypes.byref(g), Pair.cents([e]), d, b))
        exp = m_gc_lpn(geo, e, d, b)
        assert got == exp, (e, d, b)
        hits += exp
        misses += not exp
    assert hits > 30 and misses > 30


def test_lpgn_extension(lib):
    rng = random.Random(5)
    for _ in range(3000):
        w = rng.choice([12, 16, 20])
        ref = rng.choice([0, 1, M32, rng.getrandbits(32)])
        low = rng.getrandbits(w)
        back = lib.ats_sl_ext_back(low, ref, w)
        if w == 12 and rng.random() < 0.05:
            assert back == m_ext_back(low, ref, w)
        assert back & ((1 << w) - 1) == low and 1 <= ((ref - back) & M32) <= 1 << w
        # the true values come back from their low bits
        y = (ref - 1 - rng.randrange(1 << w)) & M32
        assert lib.ats_sl_ext_back(y & ((1 << w) - 1), ref, w) == y
    assert m_ext_back(5, 0x1003, 12) == 0x0005 and m_ext_back(5, 0x1006, 12) == 0x1005


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_closed_loop(lib, seed):
    """The C policy driving a simulated backend (the firmware's pass: counters, index read when needed,
    at most SLOG_STEP MERGEs, each removing the LPN's fragments) under a host writing up to 3 log pages
    of fragments a pass: no live fragment ever leaves the LPGN -> PPN table (next - LPGN <= SLOG_PPNS),
    the live pages stay <= SLOG_MAX and the entries <= SLOG_LPNS; after the host stops, the policy
    stops merging below SLOG_LO live pages and half the index, and merges nothing more."""
    rng = random.Random(100 + seed)
    # with the firmware's SLOG_PPNS (256) the age trigger alone bounds the live pages to about
    # 3/4 x 256 = SLOG_HI: even seeds use a larger table (1024) so that SLOG_HI's trigger fires
    cfg = dict(FW, ppns=1024 if seed % 2 == 0 else 256)
    ix = Index(rng, cfg, frags=4)
    c = SL(**cfg)
    c.next = ix.next
    scratch = (c_uint32 * (4096 * MAXF))()
    sk = (c_uint8 * cfg["lpns"])()
    merges = 0
    worst_age = peak_live = peak_ents = on_passes = 0
    # even seeds: few fragments a log page (the live pages' trigger); odd: many (the index's)
    per_page = (1, 2) if seed % 2 == 0 else (1, 12)

    def a_pass():
        nonlocal merges
        lib.ats_sl_ctr(ctypes.byref(c), ix.next, len(ix.ents))
        if not lib.ats_sl_need_dump(ctypes.byref(c)):
            lib.ats_sl_want(ctypes.byref(c))
            return 0
        ents = ix.dump()
        slots = sorted(ix.ents)
        arr = Pair.cents(ents)
        lib.ats_sl_recount(ctypes.byref(c), arr, len(ents), None, scratch, 1)
        n = 0
        for _ in range(STEP):
            k = lib.ats_sl_step(ctypes.byref(c), arr, len(ents), sk)
            if k < 0:
                break
            arr[k].nf = 0
            ix.clear(slots[k])
            lib.ats_sl_recount(ctypes.byref(c), arr, len(ents), None, scratch, 0)
            n += 1
        merges += n
        return n

    for _ in range(1500):
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            r = rng.random()
            if r < 0.8:
                ix.record(1, rng.randint(*per_page))
            elif ix.ents:
                ix.clear(rng.choice(list(ix.ents)))
        peak_live = max(peak_live, len({lg for e in ix.ents.values() for lg in e.lpgns}))   # before the pass
        a_pass()
        on_passes += c.on
        live = {lg for e in ix.ents.values() for lg in e.lpgns}
        peak_ents = max(peak_ents, len(ix.ents))
        for lg in live:
            worst_age = max(worst_age, (ix.next - lg) & M32)
        assert worst_age <= cfg["ppns"], f"a live fragment left the LPGN -> PPN table (age {worst_age})"
        assert len(live) <= cfg["max"], f"{len(live)} live log pages"
        assert len(ix.ents) <= cfg["lpns"]
    assert merges > 100 and on_passes > 10
    if seed % 2 == 0:
        assert peak_live > cfg["hi"], peak_live
    else:
        assert peak_ents > cfg["lpns"] * 3 // 4, peak_ents
    # the host stops: the policy merges down (below SLOG_LO and half the index when the capacity
    # hysteresis was on), then stops
    on_at_stop = c.on
    for _ in range(200):
        if not a_pass() and not c.on:
            break
    live = {lg for e in ix.ents.values() for lg in e.lpgns}
    assert not c.on and len(live) <= cfg["hi"] and len(ix.ents) <= cfg["lpns"] * 3 // 4
    assert all(((ix.next - lg) & M32) <= cfg["ppns"] - cfg["ppns"] // 4 for lg in live)
    if on_at_stop:
        assert len(live) < cfg["lo"] and len(ix.ents) < cfg["lpns"] / 2, (len(live), len(ix.ents))
    before = merges
    for _ in range(10):
        a_pass()
    assert merges == before, "merging went on below the thresholds"


def test_lpgn_extension_enumerated(lib):
    """ats_sl_ext_back, the one extension the firmware uses (ckpt.c, housekeeping.c, the checkpoint
    section's unknown pages): for every counter near 0, near the 32-bit wrap and in between and every
    low value of w = 4 bits, the answer is the only LPGN in [ref - 2^w, ref - 1] with those bits (the
    counter is the NEXT LPGN: never ref itself; the page exactly 2^w older comes back). ckpt.c's former
    inline formula (ref - ((ref - low) mod 2^w), range [ref - 2^w + 1, ref]) fails the first check."""
    w = 4
    for ref in list(range(0, 40)) + [(M32 - k) & M32 for k in range(40)] + [0x12345678 + k for k in range(40)]:
        window = {(ref - a) & M32 for a in range(1, (1 << w) + 1)}
        for low in range(1 << w):
            got = lib.ats_sl_ext_back(low, ref, w)
            assert got in window and got & ((1 << w) - 1) == low, (ref, low)
        assert lib.ats_sl_ext_back((ref - (1 << w)) & ((1 << w) - 1), ref, w) == (ref - (1 << w)) & M32
        assert lib.ats_sl_ext_back(ref & ((1 << w) - 1), ref, w) != ref


# ==================================================================================================
# GC's index read waits for a record being received (docs/architecture.md §11.6 "GC", rtl/backend
# README "Firmware port" op 7 rop 6's `mapped`; ftl/policy.c ats_sl_rx_wait)
ATS_OK, ATS_E_STATE, ATS_E_TIMEOUT = 0, -7, -9


class RxBackend:
    """A model of the backend's S-Log port as GC sees it, from the documents: records of t accepted
    before the hold (none after it), each received (its descriptors taken once t's full pages are
    issued) until `end`, only then in the index (pend, then F at its completion); rop 6 answers
    `mapped` = 1 while one is being received, `data` = entries in use (the records' reserved LPNs
    and others); a port operation takes 20..80 cycles. A record with `blk` waits for its own full
    pages' issue, and they for a block only the firmware hands out: received `blk` cycles after the
    first pump (the firmware's work between two reads, then 100..600 cycles asleep), never without."""

    def __init__(self, rng, hold, recs, other, fail_at=None):
        self.rng, self.cyc, self.hold, self.recs, self.other = rng, hold, hold, recs, other
        self.polls: list = []               # (cycle answered, rx, used)
        self.events: list = []              # "poll" / "pump", in call order
        self.fail_at = fail_at              # the poll that answers an error status (None: none)

    def rx(self, c):
        return any(r["acc"] <= c < r["end"] for r in self.recs)

    def pump(self, ctx):
        self.events.append("pump")
        for r in self.recs:
            if r.get("blk") is not None and r["end"] == 10 ** 12:   # its block handed out now
                r["end"] = self.cyc + r["blk"]
                r["done"] = r["end"] + r["blk_done"]
        self.cyc += self.rng.randint(100, 600)

    def used(self, c):
        return len(self.other) + sum(len(r["lpns"]) for r in self.recs)

    def index(self, c):
        """The entries as GC's index read at cycle c finds them (ats_sl_ent_t fields as E)."""
        ents = [E(lpn, [7], 0, base, [UNMAPPED]) for lpn, base in self.other]
        for r in self.recs:
            for lpn, (n, base) in r["lpns"].items():
                if c < r["end"]:            # descriptors not taken: a reservation only
                    ents.append(E(lpn, [], 0, base, []))
                elif c < r["done"]:         # held: pend
                    ents.append(E(lpn, [], n, base, []))
                else:                       # applied: F
                    ents.append(E(lpn, [r["lpgn"]] * n, 0, base, [UNMAPPED] * n))
        return ents

    def ctr(self, ctx, used, rx):
        self.events.append("poll")
        self.cyc += self.rng.randint(20, 80)
        if self.fail_at is not None and len(self.polls) == self.fail_at:
            self.polls.append((self.cyc, None, None))
            return ATS_E_STATE
        used[0], rx[0] = self.used(self.cyc), int(self.rx(self.cyc))
        self.polls.append((self.cyc, rx[0], used[0]))
        return ATS_OK

    def now(self, ctx):
        return self.cyc


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_gc_rx_wait(lib, seed):
    """GC holds write-backs at cycle H, waits with ats_sl_rx_wait, then reads the index and picks the
    entries to MERGE (ats_sl_gc_lpn). Records accepted before H whose descriptors are taken after it
    (up to thousands of cycles: t's full pages in flight) name bases in the victim block. Reference:
    rop 6 polled until it answers 0 (then OK, its `used`), ATS_E_TIMEOUT at the first poll answering 1
    more than `limit` cycles after the call, ATS_E_STATE on a port error; after OK every record's LPN
    whose base lies in the block is merged (all its fragments visible as pend or F)."""
    rng = random.Random(1000 + seed)
    g = Geo()
    assert lib.ats_geo_init(ctypes.byref(g), 2, 2, 16, 64, 4096, 1000, 8) == 0
    geo = dict(ndie=g.ndie, die_w=g.die_w, pg_w=g.pg_w)
    n = {"ok": 0, "waited": 0, "timeout": 0, "state": 0, "in_block": 0, "blk_ok": 0}
    for _ in range(300):
        d, b = rng.randrange(g.ndie), rng.randrange(16)

        def base():
            dd, bb = (d, b) if rng.random() < 0.5 else (rng.randrange(g.ndie), rng.randrange(16))
            return (bb << (g.pg_w + g.die_w)) | (rng.randrange(64) << g.die_w) | dd
        H = 10_000
        recs, lpn = [], 0
        for _ in range(rng.randint(0, 3)):
            acc = H - rng.randint(1, 3000)
            end = acc + rng.choice([rng.randint(0, 200), rng.randint(0, 6000), 10 ** 9])
            lp = {}
            for _ in range(rng.randint(1, 3)):
                lpn += 1
                lp[lpn] = (rng.randint(1, 3), base())
            recs.append(dict(acc=acc, end=end, done=end + rng.randint(100, 3000), lpns=lp, lpgn=rng.getrandbits(16)))
            if rng.random() < 0.3:          # parked until the firmware hands out a block (a pump)
                recs[-1].update(blk=rng.randint(0, 300), blk_done=rng.randint(100, 3000), end=10 ** 12,
                                done=10 ** 12)
        other = [(100 + i, base()) for i in range(rng.randint(0, 3))]
        fail_at = rng.randrange(4) if rng.random() < 0.05 else None
        be = RxBackend(rng, H, recs, other, fail_at)
        port = Port(None, CTR_FN(be.ctr), NOW_FN(be.now), PUMP_FN(be.pump))
        limit = rng.choice([500, 4000, 20_000])
        used = c_uint32(0xDEAD)
        st = lib.ats_sl_rx_wait(ctypes.byref(port), limit, ctypes.byref(used))
        if st == ATS_OK:
            # GC's index read now: every record accepted before the hold has its fragments there, and
            # each LPN whose base lies in the victim block is MERGEd
            t = be.cyc
            ents = be.index(t)
            arr = Pair.cents(ents)
            merged = {e.lpn for i, e in enumerate(ents)
                      if lib.ats_sl_gc_lpn(ctypes.byref(g), ctypes.byref(arr[i]), d, b)}
            for r in recs:
                for lp, (nf, bs) in r["lpns"].items():
                    inside = bs % geo["ndie"] == d and bs >> (geo["die_w"] + geo["pg_w"]) == b
                    n["in_block"] += inside
                    if inside:
                        assert lp in merged, f"lpn {lp} (record accepted {r['acc']}, received until {r['end']}, " \
                                             f"index read at {t}): base in the victim block, not merged"
            assert merged == {e.lpn for e in ents if m_gc_lpn(geo, e, d, b)}
        # the reference: the polls the function made, read one by one
        exp, k = None, 0
        for k, (c, rx, u) in enumerate(be.polls):
            if rx is None:
                exp = ATS_E_STATE
                break
            if not rx:
                exp = ATS_OK
                break
            if c - H > limit:
                exp = ATS_E_TIMEOUT
                break
        assert exp is not None and k == len(be.polls) - 1, f"polls {be.polls}: {exp} at poll {k}"
        # one pump between every two reads (the firmware hands out blocks while it waits), none after
        # the last
        assert be.events == ["poll"] + ["pump", "poll"] * (len(be.polls) - 1), f"calls {be.events}"
        assert st == exp, f"ats_sl_rx_wait {st}, expected {exp} (polls {be.polls}, limit {limit})"
        if st == ATS_E_TIMEOUT:
            n["timeout"] += 1
            assert all(c - H <= limit for c, _, _ in be.polls[:-1])
        elif st == ATS_E_STATE:
            n["state"] += 1
        else:
            n["ok"] += 1
            n["waited"] += len(be.polls) > 1
            n["blk_ok"] += any(r.get("blk") is not None and r["acc"] <= H for r in recs)
            assert used.value == be.polls[-1][2]
    assert min(n.values()) > 0, n


class Script:
    """A stand-in for RxBackend's random source: randint answers the scripted cycle steps in call order
    (a poll's port time in ctr, a pump's sleep), whatever its range."""

    def __init__(self, steps):
        self.steps = list(steps)

    def randint(self, lo, hi):
        return self.steps.pop(0)


def test_gc_rx_wait_bound(lib):
    """ats_sl_rx_wait's bound, directed (policy.h: ATS_E_TIMEOUT at the first read answering rx = 1
    more than `limit` cycles after the call; a read at exactly call + limit is within the bound, so a
    pump and one more read follow). The call at H = 10000, limit 4000, one record received until
    `end`; the expected calls and status written out by hand."""
    H, L = 10_000, 4000
    cases = [
        # (record received until, steps: poll, pump, poll, ...), expected (status, calls, polls' cycles)
        (H + L + 10, [L, 30, 20], (ATS_OK, ["poll", "pump", "poll"], [H + L, H + L + 50])),
        (H + L + 10, [L + 1], (ATS_E_TIMEOUT, ["poll"], [H + L + 1])),
        (10 ** 9, [L - 60, 30, 30, 30, 30], (ATS_E_TIMEOUT, ["poll", "pump", "poll", "pump", "poll"],
                                             [H + L - 60, H + L, H + L + 60])),
        (H + 5, [5], (ATS_OK, ["poll"], [H + 5])),
    ]
    for end, steps, (exp, calls, cycles) in cases:
        rec = dict(acc=H - 100, end=end, done=end + 100, lpns={1: (1, 0)}, lpgn=5)
        be = RxBackend(Script(steps), H, [rec], [(100, 0)])
        port = Port(None, CTR_FN(be.ctr), NOW_FN(be.now), PUMP_FN(be.pump))
        used = c_uint32(0xDEAD)
        st = lib.ats_sl_rx_wait(ctypes.byref(port), L, ctypes.byref(used))
        assert (st, be.events, [c for c, _, _ in be.polls]) == (exp, calls, cycles), (end, steps, be.polls)
        assert used.value == (2 if exp == ATS_OK else 0xDEAD)

