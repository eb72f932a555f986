# SPDX-License-Identifier: Apache-2.0
"""Host unit tests of the firmware's housekeeping policy (sw/firmware/ftl/policy.c, policy.h).

The policy is compiled here with ftl.c (gcc -std=c11 -O2 -shared -fPIC, into a pytest temporary
directory; ``ATS_POLICY_DIR=<dir>`` builds ``<dir>/policy.c`` instead, to try a mutant from a scratch
copy) and loaded with ctypes. Every decision is compared with a plain-Python model written from
sw/firmware/README.md ("Free-block supply", "Checkpoints", "Garbage collection", "No space", "Wear
levelling"):

* free blocks of a die = planned blocks not handed yet + erased blocks; room = the durable plans'
  blocks not handed yet + the dies whose next-block register holds a block;
* GC per die on below GC_LOW free blocks, off at GC_HIGH; one block per pass on every die with GC on,
  holding a grown bad block, or (write-backs held) every die;
* write-backs held while room < HOST_ROOM or a die with something to collect has < GC_URGENT free;
  between passes the hold is only ever set (room < HOST_ROOM);
* a checkpoint when the log is long, when a die's plan runs below PLAN_LOW while handed blocks wait
  (more than two) or (not held) erased blocks wait, and while held when erased blocks wait for a
  plan: per NDIE of them, at once when room < RELOC_RESERVE + 2 or the last pass collected nothing;
* a GC block starts only when room * PPB >= valid + GC_SLACK (an empty block always), each RELOC only
  with room left; the victim: greedy while held, else the console's policy, a grown bad block first
  (while held only one without valid pages, the others are no candidates);
* static wear levelling in a pass where no die's GC had work, on the coldest used block once the
  erase-count spread over good blocks exceeds WL_SPREAD;
* no space after three passes in a row held, with nothing collected and no erased block waiting; it
  clears on the first pass that is not so.

The livelocks the full-system runs found are unit tests here (``test_livelock_*``); each fails on the
decision function with the livelock put back (sw/firmware/README.md "Host tests of the policy").
"""
from __future__ import annotations

import ctypes
import os
import random
import subprocess
from ctypes import POINTER, c_int, c_int32, c_uint8, c_uint16, c_uint32, c_uint64
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest

FTL_DIR = Path(__file__).resolve().parents[1] / "ftl"
POLICY_DIR = Path(os.environ.get("ATS_POLICY_DIR", FTL_DIR))

ATS_OK, ATS_E_NAND, ATS_E_NOSPACE, ATS_E_STATE, ATS_E_TIMEOUT = 0, -4, -6, -7, -9
GREEDY, COST_BENEFIT = 0, 1
B_FREE, B_PLAN, B_OPEN, B_USED, B_BAD, B_CKPT = range(6)
NS_CLEAR, NS_SAME, NS_ENTER = -1, 0, 1
MAX_DIE = 32
WAIT_PASSES = 3              # README "No space": the 3rd pass in a row whose S-Log wait ran out counts
SEEDS = list(range(6))

U16P, U8P = POINTER(c_uint16), POINTER(c_uint8)


class HK(ctypes.Structure):
    _fields_ = ([(n, c_uint32) for n in ("ndie", "ppb", "gc_low", "gc_high", "gc_urgent", "plan_low",
                                          "plan_tail", "host_room", "reloc_reserve", "gc_slack", "pad0")]
                + [("log_ckpt", c_uint64)]
                + [(n, U16P) for n in ("plan_len", "plan_pos", "plan_ok", "hl_len", "n_free")]
                + [("n_retired", U8P), ("gc_on", U8P), ("gc_none", U8P)]
                + [(n, c_int32) for n in ("hold_wb", "no_space", "gc_moved", "pass_progress", "pass_busy")]
                + [(n, c_uint32) for n in ("stuck", "slog_ckpt", "slog_hold", "slog_pages")]
                + [("pass_wait", c_int32), ("wait_run", c_uint32)])


HELPER_C = r"""
#include <stddef.h>
#include "policy.h"
#define O(f) (size_t)offsetof(ats_hk_t, f)
const size_t lay_hk[] = {sizeof(ats_hk_t), O(ndie), O(ppb), O(gc_low), O(gc_high), O(gc_urgent), O(plan_low),
    O(plan_tail), O(host_room), O(reloc_reserve), O(gc_slack), O(pad0), O(log_ckpt), O(plan_len), O(plan_pos),
    O(plan_ok), O(hl_len), O(n_free), O(n_retired), O(gc_on), O(gc_none), O(hold_wb), O(no_space), O(gc_moved),
    O(pass_progress), O(pass_busy), O(stuck), O(slog_ckpt), O(slog_hold), O(slog_pages), O(pass_wait),
    O(wait_run)};
const unsigned hk_wait_passes = ATS_HK_WAIT_PASSES;
const int hk_timeout = ATS_E_TIMEOUT;
const int hk_consts[] = {ATS_B_FREE, ATS_B_PLAN, ATS_B_OPEN, ATS_B_USED, ATS_B_BAD, ATS_B_CKPT, ATS_HK_NS_CLEAR,
    ATS_HK_NS_SAME, ATS_HK_NS_ENTER, ATS_HK_MAX_DIE, ATS_OK, ATS_E_NAND, ATS_E_NOSPACE, ATS_E_STATE, ATS_GC_GREEDY,
    ATS_GC_COST_BENEFIT};
"""


def _gcc(out: Path, *srcs: Path) -> None:
    cmd = ["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{POLICY_DIR}",
           f"-I{FTL_DIR}", "-o", str(out), *map(str, srcs)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    d = tmp_path_factory.mktemp("policy_build")
    _gcc(d / "libpolicy.so", FTL_DIR / "ftl.c", POLICY_DIR / "policy.c")
    (d / "helper.c").write_text(HELPER_C)
    _gcc(d / "libhelper.so", d / "helper.c")
    return d


@pytest.fixture(scope="session")
def lib(build):
    L = ctypes.CDLL(str(build / "libpolicy.so"))
    P = POINTER(HK)
    U32P = POINTER(c_uint32)
    sig = {
        "ats_hk_free": (c_uint32, [P, c_uint32]),
        "ats_hk_room": (c_uint32, [P, c_uint32]),
        "ats_hk_gc_hyst": (None, [P]),
        "ats_hk_urgent": (c_int, [P, c_uint32]),
        "ats_hk_hold_now": (c_int, [P, c_uint32]),
        "ats_hk_ckpt_due": (c_int, [P, c_uint64, c_uint32]),
        "ats_hk_pass_begin": (None, [P]),
        "ats_hk_ckpt_done": (None, [P, c_int]),
        "ats_hk_gc_wanted": (c_int, [P, c_uint32]),
        "ats_hk_gc_done": (None, [P, c_int]),
        "ats_hk_wl_due": (c_int, [P, c_int]),
        "ats_hk_pass_end": (c_int, [P]),
        "ats_hk_gc_start": (c_int, [P, c_uint32, c_uint32]),
        "ats_hk_reloc_ok": (c_int, [c_uint32]),
        "ats_gc_candidate": (c_int, [c_int, c_int, c_uint32]),
        "ats_gc_victim": (c_int, [c_int, c_int, U32P, U32P, U8P, c_uint32, c_uint32]),
        "ats_wl_static_victim": (c_int, [U8P, U16P, c_uint32, c_uint32]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


def test_struct_layout_and_constants(build):
    H = ctypes.CDLL(str(build / "libhelper.so"))
    names = [f[0] for f in HK._fields_]
    lay = list((ctypes.c_size_t * (len(names) + 1)).in_dll(H, "lay_hk"))
    assert lay[0] == ctypes.sizeof(HK)
    assert lay[1:] == [getattr(HK, n).offset for n in names]
    consts = list((c_int * 16).in_dll(H, "hk_consts"))
    assert consts == [B_FREE, B_PLAN, B_OPEN, B_USED, B_BAD, B_CKPT, NS_CLEAR, NS_SAME, NS_ENTER, MAX_DIE,
                      ATS_OK, ATS_E_NAND, ATS_E_NOSPACE, ATS_E_STATE, GREEDY, COST_BENEFIT]
    assert c_int.in_dll(H, "hk_timeout").value == ATS_E_TIMEOUT
    assert c_uint32.in_dll(H, "hk_wait_passes").value == WAIT_PASSES


# ==================================================================================================
# the plain-Python model (README prose, not the C)
@dataclass
class Cfg:
    ndie: int = 4
    ppb: int = 16
    gc_low: int = 6
    gc_high: int = 9
    gc_urgent: int = 3
    plan_low: int = 2
    plan_tail: int = 32
    host_room: int = 6           # dies + 2
    reloc_reserve: int = 2
    gc_slack: int = 12           # WIN + PPB / 2
    log_ckpt: int = 512
    slog_ckpt: int = 0           # the S-Log's log pages since the last checkpoint: a checkpoint (0: off)
    slog_hold: int = 0           # ... write-backs held (0: off)

    @staticmethod
    def firmware(ndie=4, ppb=16, win=4, blocks=32):
        """The firmware's parameters (sw/firmware/fw.h) for a geometry."""
        return Cfg(ndie=ndie, ppb=ppb, host_room=ndie + 2, gc_slack=win + ppb // 2,
                   log_ckpt=min(4096 // 2, ndie * blocks * ppb // 4))


@dataclass
class Die:
    plan_len: int = 0       # blocks in the current checkpoint's plan
    plan_pos: int = 0       # of which handed out
    plan_ok: int = 0        # of which durable (plan_pos <= plan_ok <= plan_len)
    hl_len: int = 0         # handed blocks recovery still needs
    n_free: int = 0         # erased blocks no plan lists
    retired: bool = False   # a grown bad block still to be moved out

    @property
    def planned_left(self):
        return self.plan_len - self.plan_pos

    @property
    def free(self):
        return self.planned_left + self.n_free


@dataclass
class Model:
    cfg: Cfg
    gc_on: list = field(default_factory=list)
    gc_none: list = field(default_factory=list)
    hold: bool = False
    no_space: bool = False
    moved_last_pass: bool = False
    passes_stuck: int = 0
    wait_run: int = 0            # passes in a row whose S-Log wait ran out (README "No space")
    slog_pages: int = 0          # log pages the device wrote since the last checkpoint

    def __post_init__(self):
        self.gc_on = self.gc_on or [False] * self.cfg.ndie
        self.gc_none = self.gc_none or [False] * self.cfg.ndie

    def room(self, dies, need):
        durable_unhanded = sum(x.plan_ok - x.plan_pos for x in dies)
        loaded_registers = sum(1 for d in range(len(dies)) if not need & (1 << d))
        return durable_unhanded + loaded_registers

    def hysteresis(self, dies):
        for d, x in enumerate(dies):
            if x.free < self.cfg.gc_low:
                self.gc_on[d] = True
            elif x.free >= self.cfg.gc_high:
                self.gc_on[d] = False

    def slog_full(self):
        # README "S-Log": records stop from 3/4 of what a recovery keeps until the next checkpoint
        return self.cfg.slog_hold > 0 and self.slog_pages >= self.cfg.slog_hold

    def urgent(self, dies, room):
        if room < self.cfg.host_room or self.slog_full():
            return True
        return any(x.free < self.cfg.gc_urgent and not self.gc_none[d] for d, x in enumerate(dies))

    def hold_now(self, room):
        return not self.hold and (room < self.cfg.host_room or self.slog_full())

    def checkpoint_due(self, dies, log_len, room):
        c = self.cfg
        if log_len >= c.log_ckpt:
            return True
        if c.slog_ckpt and self.slog_pages >= c.slog_ckpt:
            return True
        if self.hold:
            # erased blocks a checkpoint could add to a plan that is not full
            waiting = sum(x.n_free for x in dies if x.planned_left < c.plan_tail)
            if waiting and (waiting >= c.ndie or not self.moved_last_pass or room < c.reloc_reserve + 2):
                return True
        for x in dies:
            if x.planned_left < c.plan_low:
                if x.hl_len > 2:
                    return True
                if not self.hold and x.n_free > 0:
                    return True
        return False

    def gc_wanted(self, dies, d, results=(), ckpt=ATS_OK):
        # README "S-Log": after the checkpoint's or a step's wait for a record being received ran out
        # (ATS_E_TIMEOUT), no later die's GC this pass
        return ATS_E_TIMEOUT not in results and ckpt != ATS_E_TIMEOUT and (self.gc_on[d] or dies[d].retired
                                                                           or self.hold)

    def pass_end(self, dies, results, ckpt=ATS_OK):
        """results: the GC steps' statuses of this pass, ckpt the checkpoint's; returns (wl_due, no-space
        event)."""
        progress = ATS_OK in results
        wl_due = all(st == ATS_E_NOSPACE for st in results)
        self.moved_last_pass = progress
        timed_out = ATS_E_TIMEOUT in results or ckpt == ATS_E_TIMEOUT
        self.wait_run = self.wait_run + 1 if timed_out else 0
        if self.hold and not progress and sum(x.n_free for x in dies) == 0:
            # a wait ran out: no evidence of no space, nothing counted, unless such passes have
            # come WAIT_PASSES times in a row (a record stuck for good)
            if timed_out and self.wait_run < WAIT_PASSES:
                return wl_due, NS_SAME
            self.passes_stuck = min(self.passes_stuck + 1, 3)
            if self.passes_stuck == 3 and not self.no_space:
                self.no_space = True
                return wl_due, NS_ENTER
            return wl_due, NS_SAME
        ev = NS_CLEAR if self.no_space else NS_SAME
        self.no_space, self.passes_stuck = False, 0
        return wl_due, ev


def model_gc_start(cfg, room, valid):
    return valid == 0 or room * cfg.ppb - valid >= cfg.gc_slack


def model_candidates(tight, blocks):
    """blocks: (valid, age, retired) of a die's used blocks; the ones GC may take."""
    return [b for b in blocks if not (tight and b[2] and b[0] > 0)]


def model_victim(pol, tight, cands_blocks, ppb):
    """The victim's index among the candidates, or -1."""
    blocks = cands_blocks
    cands = list(range(len(blocks)))
    bad = [i for i in cands if blocks[i][2]]
    if bad:
        return bad[-1]
    worth = [i for i in cands if blocks[i][0] < ppb]
    if not worth:
        return -1
    if tight or pol == GREEDY:
        return min(worth, key=lambda i: (blocks[i][0], i))

    def score(i):
        v, a, _ = blocks[i]
        return (1, Fraction(a)) if v == 0 else (0, Fraction(a * (ppb - v), 2 * v))
    top = max(map(score, worth))
    return next(i for i in worth if score(i) == top)


def model_wl_static(state, ec, spread):
    good = [e for s, e in zip(state, ec) if s not in (B_BAD, B_CKPT)]
    if not good or max(good) - min(good) <= spread:
        return -1
    used = [i for i, s in enumerate(state) if s == B_USED]
    return min(used, key=lambda i: (ec[i], i)) if used else -1


# ==================================================================================================
# the C side: one struct with its tables, kept across passes like the firmware's HK
class CHk:
    def __init__(self, lib, cfg: Cfg):
        self.lib, self.cfg = lib, cfg
        n = cfg.ndie
        self.t = {k: (c_uint16 * MAX_DIE)() for k in ("plan_len", "plan_pos", "plan_ok", "hl_len", "n_free")}
        self.t.update({k: (c_uint8 * MAX_DIE)() for k in ("n_retired", "gc_on", "gc_none")})
        self.s = HK(ndie=n, ppb=cfg.ppb, gc_low=cfg.gc_low, gc_high=cfg.gc_high, gc_urgent=cfg.gc_urgent,
                    plan_low=cfg.plan_low, plan_tail=cfg.plan_tail, host_room=cfg.host_room,
                    reloc_reserve=cfg.reloc_reserve, gc_slack=cfg.gc_slack, log_ckpt=cfg.log_ckpt,
                    slog_ckpt=cfg.slog_ckpt, slog_hold=cfg.slog_hold,
                    **{k: ctypes.cast(v, U16P if v._type_ is c_uint16 else U8P) for k, v in self.t.items()})
        self.p = ctypes.byref(self.s)

    def load(self, dies, model: Model | None = None):
        for d, x in enumerate(dies):
            for k in ("plan_len", "plan_pos", "plan_ok", "hl_len", "n_free"):
                self.t[k][d] = getattr(x, k)
            self.t["n_retired"][d] = int(x.retired)
        if model is not None:
            for d in range(len(dies)):
                self.t["gc_on"][d], self.t["gc_none"][d] = int(model.gc_on[d]), int(model.gc_none[d])
            self.s.hold_wb, self.s.no_space = int(model.hold), int(model.no_space)
            self.s.gc_moved, self.s.stuck = int(model.moved_last_pass), model.passes_stuck
            self.s.wait_run = min(model.wait_run, WAIT_PASSES)
            self.s.slog_pages = model.slog_pages

    def gc_on(self):
        return [bool(self.t["gc_on"][d]) for d in range(self.cfg.ndie)]

    def set_gc_none(self, d, v):
        self.t["gc_none"][d] = int(v)

    def __getattr__(self, name):          # lib.ats_hk_<name>(&hk, ...)
        f = getattr(self.lib, "ats_hk_" + name)
        return lambda *a: f(self.p, *a)


def rand_die(rng: random.Random, cfg: Cfg) -> Die:
    plan_len = rng.choice([0, 1, 2, rng.randint(0, 12), cfg.plan_tail, rng.randint(0, cfg.plan_tail + 4)])
    plan_pos = rng.randint(0, plan_len)
    plan_ok = rng.choice([plan_len, plan_pos, rng.randint(plan_pos, plan_len)])
    return Die(plan_len=plan_len, plan_pos=plan_pos, plan_ok=plan_ok,
               hl_len=rng.choice([0, 1, 2, 3, rng.randint(0, 12)]),
               n_free=rng.choice([0, 0, 1, 2, rng.randint(0, 12)]), retired=rng.random() < 0.15)


def rand_cfg(rng: random.Random) -> Cfg:
    cfg = _rand_cfg(rng)
    if rng.random() < 0.6:           # the S-Log rule (fw.h SLOG_CKPT_PG, SLOG_HOLD_PG), or other pairs
        pg = rng.choice([256, 256, 64, 2, 1])
        cfg.slog_ckpt, cfg.slog_hold = rng.choice([(pg // 2, pg // 2 + pg // 4), (rng.randint(0, 300), rng.randint(0, 300))])
    return cfg


def _rand_cfg(rng: random.Random) -> Cfg:
    if rng.random() < 0.5:
        return Cfg.firmware(ndie=rng.choice([1, 2, 4, 8, 16, 32]), ppb=rng.choice([16, 64, 256]),
                            win=rng.choice([4, 8, 16]), blocks=rng.choice([32, 128, 1024]))
    lo = rng.randint(1, 10)
    return Cfg(ndie=rng.randint(1, MAX_DIE), ppb=rng.choice([4, 16, 128]), gc_low=lo, gc_high=lo + rng.randint(0, 5),
               gc_urgent=rng.randint(0, lo), plan_low=rng.randint(0, 4), plan_tail=rng.choice([4, 32]),
               host_room=rng.randint(0, 40), reloc_reserve=rng.randint(0, 4), gc_slack=rng.randint(0, 200),
               log_ckpt=rng.choice([1, 64, 2048]))


# ==================================================================================================
# every decision against the model, over random states and random pass sequences
@pytest.mark.parametrize("seed", SEEDS)
def test_policy_passes_random(lib, seed):
    """Random pass sequences: the C struct keeps its own state (hysteresis, hold, no space, the last
    pass's progress) across passes and must agree with the model's at every decision."""
    rng = random.Random(3600 + seed)
    cov = dict.fromkeys(("urgent", "ck_log", "ck_held_batch", "ck_plan_low", "hyst_band", "wl_due",
                         "ns_enter", "ns_clear", "hold_now", "wl_over", "ck_slog", "hold_slog"), 0)
    for _ in range(60):
        cfg = rand_cfg(rng)
        m, c = Model(cfg), CHk(lib, cfg)
        dies = [rand_die(rng, cfg) for _ in range(cfg.ndie)]
        for _ in range(rng.randint(5, 40)):
            # the block table changed since the last pass (some dies only; often not at all)
            for d in range(cfg.ndie):
                if rng.random() < 0.3:
                    dies[d] = rand_die(rng, cfg)
            if rng.random() < 0.2:
                for x in dies:
                    x.n_free = 0
            need = rng.getrandbits(cfg.ndie)
            # the log pages since the last checkpoint, around the S-Log rule's thresholds
            m.slog_pages = rng.choice([0, cfg.slog_ckpt, max(cfg.slog_ckpt - 1, 0), cfg.slog_hold,
                                       max(cfg.slog_hold - 1, 0), rng.randint(0, 400)])
            c.s.slog_pages = m.slog_pages
            c.load(dies)
            room = m.room(dies, need)
            assert c.room(need) == room
            assert [c.free(d) for d in range(cfg.ndie)] == [x.free for x in dies]
            # between passes: the wait hook may set the hold
            if rng.random() < 0.3:
                want = m.hold_now(room)
                assert bool(c.hold_now(room)) == want
                if want:
                    m.hold = True
                    c.s.hold_wb = 1
                cov["hold_now"] += want
                cov["hold_slog"] += want and room >= cfg.host_room
            was_on = list(m.gc_on)
            m.hysteresis(dies)
            c.gc_hyst()
            assert c.gc_on() == m.gc_on
            cov["hyst_band"] += any(was_on[d] and cfg.gc_low <= x.free < cfg.gc_high for d, x in enumerate(dies))
            urgent = m.urgent(dies, room)
            assert bool(c.urgent(room)) == urgent
            m.hold = urgent
            c.s.hold_wb = int(urgent)
            cov["urgent"] += urgent
            log_len = rng.choice([0, cfg.log_ckpt - 1, cfg.log_ckpt, rng.randint(0, 2 * cfg.log_ckpt)])
            room2 = rng.choice([room, rng.randint(0, cfg.host_room + 3)])   # BLK_NEED read again
            ck = m.checkpoint_due(dies, log_len, room2)
            assert bool(c.ckpt_due(log_len, room2)) == ck, (dies, log_len, room2, m)
            cov["ck_log"] += log_len >= cfg.log_ckpt
            cov["ck_slog"] += ck and log_len < cfg.log_ckpt and m.slog_full() is False and cfg.slog_ckpt > 0 \
                and m.slog_pages >= cfg.slog_ckpt
            cov["ck_held_batch"] += ck and m.hold and log_len < cfg.log_ckpt
            cov["ck_plan_low"] += ck and not m.hold and log_len < cfg.log_ckpt
            # GC on the dies that want it, with random step results (and the GC step's gc_none)
            c.pass_begin()
            results = []
            for d in range(cfg.ndie):
                if rng.random() < 0.2:
                    dies[d].retired = not dies[d].retired
                    c.t["n_retired"][d] = int(dies[d].retired)
                want = m.gc_wanted(dies, d, results)
                assert bool(c.gc_wanted(d)) == want
                if want:
                    st = rng.choice([ATS_OK, ATS_E_NOSPACE, ATS_E_NOSPACE, ATS_E_STATE, ATS_E_NAND])
                    m.gc_none[d] = st == ATS_E_NOSPACE and rng.random() < 0.7
                    c.set_gc_none(d, m.gc_none[d])
                    c.gc_done(st)
                    results.append(st)
            if rng.random() < 0.3:          # the census after GC and wear levelling
                for x in dies:
                    x.n_free = rng.choice([0, x.n_free])
                c.load(dies)
            hold = m.hold
            wl_due, ev = m.pass_end(dies, results)
            over = rng.random() < 0.3       # an erase took the spread past WL_SPREAD (wear.c wl_over)
            assert bool(c.wl_due(int(over))) == (wl_due or (over and not hold))
            cov["wl_due"] += wl_due and bool(results)
            cov["wl_over"] += over and not wl_due and not hold
            assert c.pass_end() == ev
            assert (bool(c.s.no_space), c.s.gc_moved) == (m.no_space, int(m.moved_last_pass))
            cov["ns_enter"] += ev == NS_ENTER
            cov["ns_clear"] += ev == NS_CLEAR
    assert all(cov.values()), cov


@pytest.mark.parametrize("seed", SEEDS)
def test_pass_gc_timeout(lib, seed):
    """The checkpoint or GC steps answering ATS_E_TIMEOUT (the S-Log wait for a record being received
    ran out after SLOG_RX_WAIT cycles: sw/firmware/README.md "S-Log"): no later die's GC and no static
    wear levelling in that pass, and such a pass neither counts towards the no-space state nor changes
    it, unless it is the WAIT_PASSES-th such pass in a row or later (then it counts as any other);
    random pass sequences with the hold, the census, the checkpoint's and the steps' results, every
    decision against the model. test_pass_wait_directed: the same rules on hand-computed sequences."""
    rng = random.Random(3900 + seed)
    cov = dict.fromkeys(("skipped", "not_counted", "ns_enter", "ns_kept", "timeout_progress", "wl_skipped",
                         "ckpt_skipped", "counted_run"), 0)
    for _ in range(60):
        cfg = rand_cfg(rng)
        m, c = Model(cfg), CHk(lib, cfg)
        dies = [rand_die(rng, cfg) for _ in range(cfg.ndie)]
        for x in dies:
            x.n_free = rng.choice([0, 0, 0, x.n_free])
        c.load(dies, m)
        for _ in range(rng.randint(5, 30)):
            m.hold = rng.random() < 0.8
            c.s.hold_wb = int(m.hold)
            for d in range(cfg.ndie):
                if rng.random() < 0.1:
                    dies[d].retired = not dies[d].retired
                if rng.random() < 0.1:
                    dies[d].n_free = rng.choice([0, 1])
            c.load(dies)
            c.pass_begin()
            results = []
            p_to = rng.choice([0.0, 0.2, 0.6])
            # the checkpoint (none: ATS_OK, the same for the policy)
            ck = ATS_E_TIMEOUT if rng.random() < p_to / 4 else rng.choice([ATS_OK, ATS_OK, ATS_E_STATE])
            if ck != ATS_OK or rng.random() < 0.5:
                c.ckpt_done(ck)
            for d in range(cfg.ndie):
                want = m.gc_wanted(dies, d, results, ck)
                assert bool(c.gc_wanted(d)) == want, (d, results, ck)
                cov["skipped"] += not want and ATS_E_TIMEOUT in results
                cov["ckpt_skipped"] += not want and ck == ATS_E_TIMEOUT
                if want:
                    st = ATS_E_TIMEOUT if rng.random() < p_to else rng.choice(
                        [ATS_OK, ATS_E_NOSPACE, ATS_E_NOSPACE, ATS_E_STATE, ATS_E_NAND, ATS_E_NOSPACE])
                    cov["timeout_progress"] += st == ATS_E_TIMEOUT and ATS_OK in results
                    c.gc_done(st)
                    results.append(st)
            stuck_before, ns_before, run_before = m.passes_stuck, m.no_space, m.wait_run
            wl_due, ev = m.pass_end(dies, results, ck)
            over = rng.random() < 0.5
            timed_out = ATS_E_TIMEOUT in results or ck == ATS_E_TIMEOUT
            assert bool(c.wl_due(int(over))) == ((wl_due or (over and not m.hold)) and not timed_out)
            cov["wl_skipped"] += timed_out and over and not m.hold
            assert c.pass_end() == ev, (results, m)
            assert (bool(c.s.no_space), c.s.gc_moved, c.s.stuck) == (m.no_space, int(m.moved_last_pass),
                                                                       m.passes_stuck), (results, m)
            assert c.s.wait_run == min(m.wait_run, WAIT_PASSES)
            cond = m.hold and ATS_OK not in results and sum(x.n_free for x in dies) == 0
            cov["not_counted"] += cond and timed_out and stuck_before < 3 and run_before + 1 < WAIT_PASSES
            cov["ns_kept"] += cond and timed_out and ns_before
            cov["counted_run"] += cond and timed_out and m.passes_stuck == stuck_before + 1
            cov["ns_enter"] += ev == NS_ENTER
    assert all(cov.values()), cov


def test_pass_wait_directed(lib):
    """The pass rules of an S-Log wait that ran out (README "No space", "S-Log"; ATS_HK_WAIT_PASSES = 3),
    on hand-computed sequences (2 dies, write-backs held, no erased block waiting, GC on): per pass the
    checkpoint's status (None: no checkpoint) and die 0's step; the expected no-space event, stuck count
    and state written out from the rule, not from a model: a pass with a wait that ran out is not
    counted unless it is the 3rd such pass in a row or later; three counted passes in a row enter no
    space; a pass with progress clears it."""
    cfg = Cfg(ndie=2)
    T, NS, OK, ST = ATS_E_TIMEOUT, ATS_E_NOSPACE, ATS_OK, ATS_E_STATE
    seqs = {
        # a record stuck for good: passes 1, 2 not counted, 3, 4, 5 counted (no space at 5), 6 keeps it,
        # progress clears it and the run
        "stuck_record": [((None, T), NS_SAME, 0, 0), ((None, T), NS_SAME, 0, 0), ((None, T), NS_SAME, 1, 0),
                         ((None, T), NS_SAME, 2, 0), ((None, T), NS_ENTER, 3, 1), ((None, T), NS_SAME, 3, 1),
                         ((None, OK), NS_CLEAR, 0, 0), ((None, T), NS_SAME, 0, 0)],
        # the run restarts after a pass without a timeout: the 6th pass is the first 3rd in a row
        "run_reset": [((None, NS), NS_SAME, 1, 0), ((None, T), NS_SAME, 1, 0), ((None, NS), NS_SAME, 2, 0),
                      ((None, T), NS_SAME, 2, 0), ((None, T), NS_SAME, 2, 0), ((None, T), NS_ENTER, 3, 1)],
        # the checkpoint's timeout: no GC that pass (die 0's step not run), the pass a timed-out one
        "ckpt_timeout": [((T, None), NS_SAME, 0, 0), ((T, None), NS_SAME, 0, 0), ((ST, NS), NS_SAME, 1, 0),
                         ((T, None), NS_SAME, 1, 0), ((OK, T), NS_SAME, 1, 0), ((T, None), NS_SAME, 2, 0),
                         ((None, NS), NS_ENTER, 3, 1)],
        # a timeout in a pass that also collected a block: no space cleared all the same
        "progress": [((None, NS), NS_SAME, 1, 0), ((None, NS), NS_SAME, 2, 0), ((None, NS), NS_ENTER, 3, 1),
                     ((None, T), NS_SAME, 3, 1), ((None, [OK, T]), NS_CLEAR, 0, 0)],
    }
    for name, seq in seqs.items():
        c = CHk(lib, cfg)
        c.load([Die(plan_len=1, plan_pos=1, plan_ok=1) for _ in range(2)])
        for d in range(2):
            c.t["gc_on"][d] = 1
        c.s.hold_wb = 1
        for k, ((ck, step), ev, stuck, ns) in enumerate(seq):
            c.pass_begin()
            if ck is not None:
                c.ckpt_done(ck)
            steps = step if isinstance(step, list) else [step]
            ran = []
            for d in range(2):
                want = c.gc_wanted(d)
                if ck == T or T in ran:
                    assert not want, (name, k, d)      # no later die's GC after a timeout
                    continue
                assert want, (name, k, d)
                st = steps[d] if d < len(steps) else NS
                if st is None:
                    break
                c.gc_done(st)
                ran.append(st)
            if ck == T:
                assert ran == [] and step is None, (name, k)
            timed_out = ck == T or T in ran
            assert bool(c.wl_due(0)) == (not timed_out and all(x == NS for x in ran)), (name, k)
            got = c.pass_end()
            assert (got, c.s.stuck, c.s.no_space) == (ev, stuck, ns), (name, k, got, c.s.stuck, c.s.no_space)


@pytest.mark.parametrize("seed", SEEDS)
def test_gc_admission_and_victim(lib, seed):
    rng = random.Random(3700 + seed)
    cov = dict.fromkeys(("refused", "started", "bad_first", "bad_skipped", "none", "cb", "tie"), 0)
    for _ in range(400):
        cfg = rand_cfg(rng)
        c = CHk(lib, cfg)
        room, valid = rng.randint(0, 6), rng.choice([0, 1, cfg.ppb - 1, cfg.ppb, rng.randint(0, cfg.ppb)])
        want = model_gc_start(cfg, room, valid)
        assert bool(c.gc_start(room, valid)) == want
        cov["refused"] += not want
        cov["started"] += want and valid > 0
        assert bool(lib.ats_hk_reloc_ok(room)) == (room > 0)
        # a die's used blocks
        ppb = cfg.ppb
        n = rng.choice([0, 1, rng.randint(1, 40)])
        blocks = [(rng.choice([0, ppb, ppb - 1, rng.randint(0, ppb)]), rng.choice([0, 5, rng.randint(0, 10 ** 6)]),
                   rng.random() < 0.1) for _ in range(n)]
        if n > 1 and rng.random() < 0.3:
            blocks[-1] = blocks[0]
        for tight in (0, 1):
            for pol in (GREEDY, COST_BENEFIT):
                keep = [b for b in blocks if lib.ats_gc_candidate(tight, int(b[2]), b[0])]
                assert keep == model_candidates(tight, blocks)
                k = len(keep)
                got = lib.ats_gc_victim(pol, tight, (c_uint32 * max(k, 1))(*[b[0] for b in keep]),
                                        (c_uint32 * max(k, 1))(*[b[1] for b in keep]),
                                        (c_uint8 * max(k, 1))(*[int(b[2]) for b in keep]), k, ppb)
                want_i = model_victim(pol, tight, keep, ppb)
                assert got == want_i, (pol, tight, keep)
                cov["bad_first"] += any(b[2] for b in keep)
                cov["bad_skipped"] += tight and any(b[2] and b[0] for b in blocks)
                cov["none"] += want_i < 0
                cov["cb"] += pol == COST_BENEFIT and not tight and want_i >= 0
                cov["tie"] += n > 1 and blocks[-1] == blocks[0]
    assert all(cov.values()), cov


@pytest.mark.parametrize("seed", SEEDS)
def test_wl_static_victim(lib, seed):
    rng = random.Random(3800 + seed)
    cov = dict.fromkeys(("due", "not_due", "no_used", "at_spread", "tie"), 0)
    for _ in range(300):
        n = rng.choice([0, 1, rng.randint(1, 300)])
        pool = [B_FREE, B_PLAN, B_OPEN, B_USED, B_USED, B_BAD, B_CKPT]
        if rng.random() < 0.2:
            pool = [B_FREE, B_PLAN, B_OPEN, B_BAD]       # no used block to move
        state = [rng.choice(pool) for _ in range(n)]
        emax = rng.choice([3, 20, 0xFFFF])
        ec = [0xFFFF if s == B_BAD and rng.random() < 0.5 else rng.randint(0, emax) for s in state]
        good = [e for s, e in zip(state, ec) if s not in (B_BAD, B_CKPT)]
        sp = max(good) - min(good) if good else 0
        spread = rng.choice([8, sp, max(sp - 1, 0), sp + 1])
        got = lib.ats_wl_static_victim((c_uint8 * max(n, 1))(*state), (c_uint16 * max(n, 1))(*ec), n, spread)
        want = model_wl_static(state, ec, spread)
        assert got == want, (state, ec, spread)
        cov["due"] += want >= 0
        cov["not_due"] += bool(good) and sp <= spread
        cov["no_used"] += bool(good) and sp > spread and want < 0
        cov["at_spread"] += bool(good) and sp == spread
        used = [ec[i] for i in range(n) if state[i] == B_USED]
        cov["tie"] += len(used) > 1 and used.count(min(used)) > 1
    assert all(cov.values()), cov


# ==================================================================================================
# the livelocks of the full-system runs, as unit tests
def _pass(c: CHk, dies, need, log_len=0):
    """One housekeeping pass's decisions in the firmware's order: hysteresis, hold, checkpoint."""
    c.load(dies)
    room = c.room(need)
    c.gc_hyst()
    c.s.hold_wb = c.urgent(room)
    return room, bool(c.s.hold_wb), bool(c.ckpt_due(log_len, room))


def test_livelock_gc_behind_host(lib):
    """Issue 13 (b2ea1df), the 3x-capacity fill: a checkpoint per erased block and GC behind the host
    until every plan was empty. GC ran only while a die was below GC_LOW and stopped as soon as one
    block was erased, so each erased block cost a checkpoint of its own, and nothing held the host
    back: the host used up the plans faster than GC refilled them, until no die had a block and GC
    had no room left to move a page. Fixed by GC hysteresis (on below 6, off at 9: erased blocks
    come in batches) and the hold of the host's write-backs below GC_URGENT free blocks."""
    cfg = Cfg.firmware()
    c = CHk(lib, cfg)
    all_loaded = 0                                       # every next-block register holds a block
    # die 0 runs down while the host writes: 9, 8, ..., 5 free (planned, durable) blocks
    dies = [Die(plan_len=9, plan_pos=0, plan_ok=9) for _ in range(cfg.ndie)]
    for left in (9, 8, 7, 6, 5):
        dies[0].plan_pos = 9 - left
        _pass(c, dies, all_loaded)
    assert c.gc_on()[0], "GC on below GC_LOW"
    # GC erases blocks one by one (a checkpoint plans them later): the die stays in GC until GC_HIGH
    for erased in (1, 2, 3):
        dies[0].n_free = erased
        _, held, ck = _pass(c, dies, all_loaded)
        assert c.gc_on()[0], f"GC stopped at {dies[0].free} free blocks (before GC_HIGH = {cfg.gc_high})"
        assert not ck, "a checkpoint for a single erased block while the die's plan still has blocks"
    dies[0].n_free = 4
    _pass(c, dies, all_loaded)
    assert not c.gc_on()[0], "GC off at GC_HIGH"
    # the host used up die 1's plan faster than GC refilled it: 2 free blocks, old blocks worth
    # collecting (gc_none clear): the host's write-backs wait
    dies = [Die(plan_len=9, plan_pos=0, plan_ok=9) for _ in range(cfg.ndie)]
    dies[1].plan_pos = 7
    _, held, _ = _pass(c, dies, all_loaded)
    assert held, "write-backs not held with a die below GC_URGENT free blocks"
    # ... but not for a die whose old blocks are all full of valid pages (GC cannot help it)
    c.set_gc_none(1, 1)
    _, held, _ = _pass(c, dies, all_loaded)
    assert not held
    # the first batch: plan nearly used up, erased blocks wait: one checkpoint plans them all
    c.set_gc_none(1, 0)
    dies = [Die(plan_len=9, plan_pos=8, plan_ok=9, n_free=4) for _ in range(cfg.ndie)]
    _, held, ck = _pass(c, dies, all_loaded)
    assert ck


def test_livelock_full_fill_unplanned_blocks(lib):
    """Issue 13, the same fill after the block census sped up the main loop: it hung once more. The
    host used up the last *planned* blocks while erased but unplanned blocks still counted as free
    (every die had GC_URGENT or more), so write-backs went on; the checkpoint that would plan the
    erased blocks waited in its drain for write-backs that waited for a block. Fixed: write-backs are
    held while room() (the durable plans + the loaded next-block registers) < HOST_ROOM, also between
    passes (the wait hook), and the held device plans its erased blocks at once when room is short."""
    cfg = Cfg.firmware()
    c = CHk(lib, cfg)
    every_die_needs = (1 << cfg.ndie) - 1
    dies = [Die(plan_len=5, plan_pos=5, plan_ok=5, hl_len=2, n_free=4) for _ in range(cfg.ndie)]
    c.load(dies)
    assert all(c.free(d) >= cfg.gc_urgent for d in range(cfg.ndie))
    assert c.room(every_die_needs) == 0
    assert c.hold_now(0), "the wait hook must hold write-backs as soon as the room runs short"
    room, held, ck = _pass(c, dies, every_die_needs)
    assert held, "write-backs not held with no planned block left (erased blocks are not room)"
    assert ck, "the held device must plan its erased blocks (room 0 < RELOC_RESERVE + 2)"
    # with room for one more GC block and GC still collecting: the batch waits for NDIE blocks
    dies = [Die(plan_len=6, plan_pos=5, plan_ok=6, hl_len=2, n_free=0) for _ in range(cfg.ndie)]
    dies[0].n_free = 1
    c.s.gc_moved = 1
    room, held, ck = _pass(c, dies, 0)
    assert (room, held, ck) == (2 * cfg.ndie, True, False)
    c.s.gc_moved = 0                                     # the last pass collected nothing: plan now
    assert _pass(c, dies, 0)[2]


def test_livelock_gc_without_room(lib):
    """Issue 34 (3772e3b), test_gc_grown_bad seed 1 (1.5 % program failures): GC started a block
    whatever the room, copied part of it with the last planned blocks (write-backs accepted before
    the hold and a program failure took the rest), and then every plan was empty, no block erased,
    every old block held a valid page: GC ran hundreds of times copying nothing and the device
    completed nothing. Fixed: a block starts only when room * PPB >= valid + GC_SLACK, each RELOC
    only with room left, while held the victim is the one needing the least room (greedy) and no
    grown bad block with pages is taken (moving them frees no block)."""
    cfg = Cfg.firmware()                                  # PPB 16, WIN 4: GC_SLACK 12
    c = CHk(lib, cfg)
    # one block of room left; the greedy victim holds 12 of 16 valid pages: not started
    assert not c.gc_start(1, 12)
    assert not c.gc_start(1, 5)                          # 16 < 5 + 12
    assert c.gc_start(1, 4)                              # 16 >= 4 + 12
    assert c.gc_start(0, 0)                              # nothing to copy: erase only
    assert c.gc_start(2, 15)                             # 32 >= 27
    assert not lib.ats_hk_reloc_ok(0) and lib.ats_hk_reloc_ok(1)
    # while held: a grown bad block with valid pages is no candidate, the greedy block is taken
    assert not lib.ats_gc_candidate(1, 1, 3) and lib.ats_gc_candidate(0, 1, 3) and lib.ats_gc_candidate(1, 1, 0)
    val, age, ret = [15, 14, 3, 9], [1000, 1, 1, 1], [0, 0, 0, 0]
    v = lib.ats_gc_victim(COST_BENEFIT, 1, (c_uint32 * 4)(*val), (c_uint32 * 4)(*age), (c_uint8 * 4)(*ret), 4, 16)
    assert v == 2, "while held, the victim is the one that costs the least room"


def test_no_false_no_space_after_recovery(lib):
    """Issue 34 (b13a4d4, 1df14d1): a first room rule asked for RELOC_RESERVE + 1 whole blocks: after
    a recovery with 48 bad blocks, room 2 and every old block holding valid pages, GC refused every
    block and the device said "no space" with a quarter of its pages stale."""
    cfg = Cfg.firmware()
    c = CHk(lib, cfg)
    assert c.gc_start(2, 15) and c.gc_start(2, 8)
    # the pass accounting: a block collected is progress, no space stays off
    dies = [Die(plan_len=1, plan_pos=0, plan_ok=1, n_free=0) for _ in range(cfg.ndie)]
    c.load(dies)
    c.s.hold_wb = 1
    for _ in range(5):
        c.pass_begin()
        c.gc_done(ATS_OK if c.gc_start(2, 15) else ATS_E_NOSPACE)
        assert c.pass_end() == NS_SAME and not c.s.no_space


def test_no_space_enter_and_clear(lib):
    """README "No space": three passes held with nothing collected and nothing erased waiting; said
    once; cleared by the first pass that collects a block (or with erased blocks waiting)."""
    cfg = Cfg.firmware()
    c = CHk(lib, cfg)
    dies = [Die() for _ in range(cfg.ndie)]
    c.load(dies)
    c.s.hold_wb = 1
    evs = []
    for _ in range(6):
        c.pass_begin()
        c.gc_done(ATS_E_NOSPACE)
        evs.append(c.pass_end())
    assert evs == [NS_SAME, NS_SAME, NS_ENTER, NS_SAME, NS_SAME, NS_SAME] and c.s.no_space
    dies[2].n_free = 1                                   # a TRIM freed a block: GC erased it
    c.load(dies)
    c.pass_begin()
    assert c.pass_end() == NS_CLEAR and not c.s.no_space


def test_livelock_static_wl_never_ran(lib):
    """Issue 34 (8ce5dd6), test_wear_static: a die whose GC had nothing to collect (every old block
    full of valid pages: the cold data static wear levelling is for) kept its GC on below GC_HIGH for
    good and counted as GC work, so static wear levelling never ran, not even idle. The step's
    ATS_E_NOSPACE must leave wear levelling due; any other result (a block collected, a block kept,
    an erase failure) holds it off for the pass."""
    cfg = Cfg.firmware()
    c = CHk(lib, cfg)
    c.pass_begin()
    for _ in range(cfg.ndie):
        c.gc_done(ATS_E_NOSPACE)
    assert c.wl_due(0), "a die with nothing to collect held off static wear levelling"
    for st in (ATS_OK, ATS_E_STATE, ATS_E_NAND):
        c.pass_begin()
        c.gc_done(ATS_E_NOSPACE)
        c.gc_done(st)
        assert not c.wl_due(0)
        # the spread past WL_SPREAD: due with GC work too (test_wear_static: starved by a busy
        # host, the spread reached WL_SPREAD + 3), but not while write-backs are held
        assert c.wl_due(1)
        c.s.hold_wb = 1
        assert not c.wl_due(1)
        c.s.hold_wb = 0
    # and the coldest used block is the one moved once the spread exceeds WL_SPREAD = 8
    state = [B_CKPT, B_USED, B_USED, B_FREE, B_BAD, B_USED]
    ec = [40, 3, 2, 11, 0xFFFF, 2]
    assert lib.ats_wl_static_victim((c_uint8 * 6)(*state), (c_uint16 * 6)(*ec), 6, 8) == 2
    ec[3] = 10
    assert lib.ats_wl_static_victim((c_uint8 * 6)(*state), (c_uint16 * 6)(*ec), 6, 8) == -1


@pytest.mark.parametrize("seed", SEEDS)
def test_slog_log_pages_bounded(lib, seed):
    """README "S-Log": a device never writes more log pages between checkpoints than its recovery
    keeps (SLOG_PG = 256; the records it parses are as many). The host's DIFFWRITEs add up to a
    quarter of SLOG_PG log pages between two passes (the wait hook and a pass's checkpoint) while
    write-backs are not held, also while a checkpoint writes (after its drain: the new active log's);
    a checkpoint may fail (tried again the next pass); the request-count rule (log_ckpt) never fires
    first. B5 found the device
    without the rule: 192 records in the active log, `recovery failed: -3`."""
    rng = random.Random(4700 + seed)
    pg = 256
    cfg = Cfg.firmware(ndie=4, ppb=16, win=4, blocks=32)
    cfg.slog_ckpt, cfg.slog_hold, cfg.log_ckpt = pg // 2, pg // 2 + pg // 4, 1 << 40
    c = CHk(lib, cfg)
    dies = [Die(plan_len=32, plan_pos=4, plan_ok=32, n_free=20) for _ in range(cfg.ndie)]
    c.load(dies, Model(cfg))
    pages, most, ckpts, held = 0, 0, 0, 0
    for _ in range(2000):
        if not c.s.hold_wb:                  # records only while write-backs go on
            pages += rng.choice([0, 1, 1, 3, rng.randint(0, pg // 4 - 1)])
        most = max(most, pages)
        assert pages <= pg, f"{pages} log pages since the last checkpoint: the recovery keeps {pg}"
        c.s.slog_pages = pages               # the firmware's decisions (the model's: the random test)
        room = c.room(0)
        urgent = bool(c.urgent(room))
        c.s.hold_wb = int(urgent)
        held += urgent
        ck = bool(c.ckpt_due(0, room))
        if ck and rng.random() < 0.6:        # a checkpoint (else it failed: tried again next pass)
            pages = 0
            ckpts += 1
            if not c.s.hold_wb:              # records while it writes: the new active log's
                pages += rng.randint(0, pg // 8)
    assert ckpts and held and most >= pg // 2 + pg // 4, (ckpts, held, most)
