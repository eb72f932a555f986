"""cocotb tests of ats_remap_engine (transaction-table remap engine), against the independent
reference model `atstb.remap_model` written from spinal/src/main/scala/atomssd/remap/README.md.

Every test drives s_req with the library's StreamSource, collects m_rsp / m_inval / m_map with
StreamSinks (random idle / backpressure where parametrised), and checks offline, in the order the
engine accepted the requests: each response (matched by tag, any order), the two event streams
beat by beat, exactly one response per request within a bound, and nothing extra on any stream.
Testpoints: spinal/src/main/scala/atomssd/remap/testplan.md.

Environment: ATS_REMAP_GEN (generated config dir with params.json, set by the pytest entry point),
ATS_LONG=1 (longer random campaign, adds the bench preset), ATS_SEED (seed, via the runner),
ATS_TEST_FILTER (regex selecting cocotb tests, e.g. "run_hazards"), ATS_POWER_ON=1 (set by the
entry point for its random-initial-state runs of run_power_on, which the normal run skips on the big
presets).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import zlib
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.remap_model import Req, RemapModel, _clog2, tx_term, xor_fold
from atstb.runner import ROOT, block_sources, load_params, load_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen, random_pause

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
GEN = os.environ.get("ATS_REMAP_GEN")
P = load_params(Path(GEN)) if GEN else None          # None when pytest collects this module

REQ_FIELDS = ["op", "tag", "txid", "lpn", "ppn"]
RSP_FIELDS = ["tag", "status", "ppn", "mapped", "from_tx", "count"]
INVAL_FIELDS = ["ppn", "txid", "aborted"]
MAP_FIELDS = ["txid", "lpn", "ppn", "last"]


def always_pause():
    while True:
        yield True


@dataclass
class Rec:
    """One request as sent, with its acceptance and its response."""
    seq: int
    op: int
    tag: int
    txid: int
    lpn: int
    ppn: int
    accept: Optional[int] = None     # cycle the engine accepted it
    rsp: Optional[dict] = None       # response beat (with "_cycle")

    def req(self) -> Req:
        return Req(self.op, self.tag, self.txid, self.lpn, self.ppn)

    def __str__(self) -> str:
        names = {v: k for k, v in P["ops"].items()}
        return (f"#{self.seq} {names.get(self.op, f'op{self.op}')}(txid={self.txid}, lpn={self.lpn}, "
                f"ppn={self.ppn}) tag={self.tag} accepted@{self.accept}")


class TB:
    def __init__(self, dut, name: str, idle=False, backpressure=False, p_pause=0.3):
        self.dut = dut
        self.p = P
        self.OP = P["ops"]
        self.ST = P["status"]
        self.stname = {v: k for k, v in P["status"].items()}
        self.rng = random.Random(cocotb.RANDOM_SEED ^ zlib.crc32(name.encode()))
        self.log = dut._log
        Clock(dut.clk, 10, unit="ns").start()
        self.idle_gen = lambda: pause_gen(self.rng, idle, p_pause)
        self.bp_gen = lambda: pause_gen(self.rng, backpressure, p_pause)
        self.src = StreamSource(dut, "s_req", dut.clk, REQ_FIELDS, pause=self.idle_gen())
        self.rsp = StreamSink(dut, "m_rsp", dut.clk, RSP_FIELDS, pause=self.bp_gen())
        self.inval = StreamSink(dut, "m_inval", dut.clk, INVAL_FIELDS, pause=self.bp_gen())
        self.map = StreamSink(dut, "m_map", dut.clk, MAP_FIELDS, pause=self.bp_gen())
        self.src.on_accept = self._on_accept
        self.n = P["TX_ENTRIES"]
        self.lat_bound = 30 * self.n + 1500          # generous: request accepted -> response
        if backpressure == "heavy":
            self.lat_bound = 100 * self.n + 5000
        self.seq = 0
        self.errors: list[str] = []
        self.commit_active: list[int] = []           # per cycle (index = cycle - 1)
        self.commit_txid: list[int] = []
        self.new_epoch()
        cocotb.start_soon(self._monitor())

    # ---- bookkeeping --------------------------------------------------------------------------
    def new_epoch(self) -> None:
        """Forget everything in flight (after a reset) and start a fresh model."""
        self.model = RemapModel(P)
        self.accepted: list[Rec] = []                # acceptance order
        self.checked = 0                             # accepted[:checked] already checked
        self.outstanding: dict[int, Rec] = {}        # tag -> request
        self.free_tags = deque(range(1 << P["TAG_W"]))
        self.rsp_beats: list[dict] = []
        self.inval_beats: list[dict] = []
        self.map_beats: list[dict] = []
        self.inval_pos = 0
        self.map_pos = 0
        for s in (self.rsp, self.inval, self.map):
            s.queue.clear()

    def _on_accept(self, item: dict, cycle: int) -> None:
        rec = item["_rec"]
        rec.accept = cycle
        self.accepted.append(rec)

    async def _monitor(self) -> None:
        while True:
            await RisingEdge(self.dut.clk)
            self.commit_active.append(int(self.dut.commit_active.value))
            self.commit_txid.append(int(self.dut.commit_txid.value))
            while self.rsp.queue:
                b = self.rsp.queue.popleft()
                rec = self.outstanding.pop(b["tag"], None)
                if rec is None or rec.accept is None:
                    self.errors.append(f"response {b} with a tag that is not outstanding "
                                       f"(extra or duplicate response)")
                    continue
                rec.rsp = b
                self.rsp_beats.append(b)
                self.free_tags.append(b["tag"])
            while self.inval.queue:
                self.inval_beats.append(self.inval.queue.popleft())
            while self.map.queue:
                self.map_beats.append(self.map.queue.popleft())

    async def cycles(self, n: int) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    async def reset(self, cycles: int = 4) -> None:
        self.dut.rst.value = 1
        await self.cycles(cycles)
        self.dut.rst.value = 0
        await self.wait_init()

    async def wait_init(self) -> None:
        bound = 2 * P["MAP_DEPTH"] + 200
        for _ in range(bound):
            await RisingEdge(self.dut.clk)
            if self.dut.init_done.value == 1:
                return
        raise AssertionError(f"init_done not asserted within {bound} cycles after reset")

    # ---- sending ------------------------------------------------------------------------------
    async def send(self, op: int, txid: int = 0, lpn: int = 0, ppn: int = 0, qmax: int = 8) -> Rec:
        """Queue one request (waits for a free tag and for room in the source queue)."""
        waited = 0
        while not self.free_tags or len(self.src.queue) >= qmax:
            await RisingEdge(self.dut.clk)
            waited += 1
            if waited > 4 * self.lat_bound:
                raise AssertionError(f"hang: no free tag / request not accepted for {waited} cycles; "
                                     + self.hang_report())
        return self.send_nowait(op, txid, lpn, ppn)

    async def try_send(self, op: int, txid: int = 0, lpn: int = 0, ppn: int = 0,
                       patience: Optional[int] = None) -> Optional[Rec]:
        """Like send, but gives up (returns None) when the engine takes nothing for `patience`
        cycles (used before a reset, which must recover from any state)."""
        for _ in range(patience or 2000 + 8 * self.n):
            if self.free_tags and len(self.src.queue) < 8:
                return self.send_nowait(op, txid, lpn, ppn)
            await RisingEdge(self.dut.clk)
        return None

    def send_nowait(self, op: int, txid: int = 0, lpn: int = 0, ppn: int = 0) -> Rec:
        assert self.free_tags, "no free tag"
        tag = self.free_tags.popleft()
        self.seq += 1
        rec = Rec(self.seq, op, tag, txid, lpn, ppn)
        self.outstanding[tag] = rec
        self.src.send_nowait(op=op, tag=tag, txid=txid, lpn=lpn, ppn=ppn, _rec=rec)
        return rec

    async def burst(self, reqs: list[tuple]) -> list[Rec]:
        """Queue many requests at once so that they go back to back (modulo idle insertion; a
        request waits only when all tags are in use)."""
        out = []
        for r in reqs:
            if not self.free_tags:
                out.append(await self.send(*r, qmax=1 << 30))
            else:
                out.append(self.send_nowait(*r))
        return out

    async def req(self, op: int, txid: int = 0, lpn: int = 0, ppn: int = 0) -> dict:
        """Send one request and wait for its response."""
        rec = await self.send(op, txid, lpn, ppn)
        await self.wait_rsp([rec])
        return rec.rsp

    async def wait_rsp(self, recs: list[Rec], bound: Optional[int] = None) -> None:
        bound = bound or (self.lat_bound + 50 * len(recs))
        for _ in range(bound):
            if all(r.rsp is not None for r in recs):
                return
            await RisingEdge(self.dut.clk)
        missing = [str(r) for r in recs if r.rsp is None]
        raise AssertionError(f"no response within {bound} cycles for {len(missing)} requests, "
                             f"first: {missing[:5]}")

    async def quiesce(self, settle: int = 60) -> None:
        """Wait until every queued request is accepted and answered, then `settle` more cycles so
        that stray event beats would show."""
        bound = self.lat_bound * 4 + 20 * len(self.src.queue) + 1000
        for _ in range(bound):
            if not self.src.queue and not self.src._driving and not self.outstanding:
                break
            await RisingEdge(self.dut.clk)
        else:
            self.errors.append(f"hang: after {bound} cycles, {len(self.src.queue)} requests not "
                               f"accepted; " + self.hang_report())
            raise AssertionError(self.errors[-1])
        quiet = 0
        for _ in range(bound):                       # event streams idle for 32 cycles
            ev = int(self.dut.m_inval_valid.value) | int(self.dut.m_map_valid.value)
            quiet = 0 if ev else quiet + 1
            if quiet >= 32:
                break
            await RisingEdge(self.dut.clk)
        await self.cycles(settle)

    def hang_report(self) -> str:
        d = self.dut
        unanswered = [str(r) for r in self.accepted if r.rsp is None]
        last = [f"{r} -> {self._fmt_rsp(r.rsp) if r.rsp else None}" for r in self.accepted[-10:]]
        return (f"s_req_valid={d.s_req_valid.value} s_req_ready={d.s_req_ready.value} "
                f"commit_active={d.commit_active.value} m_inval_valid={d.m_inval_valid.value} "
                f"m_map_valid={d.m_map_valid.value} m_rsp_valid={d.m_rsp_valid.value}; "
                f"accepted but unanswered: {unanswered[:6]}; last accepted: {last}")

    # ---- checking ------------------------------------------------------------------------------
    def err(self, msg: str) -> None:
        self.errors.append(msg)

    def check(self, final: bool = False) -> None:
        """Check every accepted, answered request not yet checked, in acceptance order, and the
        event beats they imply. final: also require no leftover beats and no pending request."""
        OP, ST = self.OP, self.ST
        m = self.model
        while self.checked < len(self.accepted):
            rec = self.accepted[self.checked]
            if rec.rsp is None:
                if final:
                    self.err(f"{rec}: no response")
                break
            self.checked += 1
            status = rec.rsp["status"]
            occ = None
            if rec.op == OP["TX_WRITE"] and 1 <= rec.txid <= P["NUM_TX"] and rec.lpn < P["MAP_DEPTH"]:
                occ = m.bucket_occupants(rec.txid, rec.lpn)      # before the step (for reports)
            st = m.step(rec.req(), follow=status)
            ctx = f"{rec} -> rsp {self._fmt_rsp(rec.rsp)}"
            if status not in st.allowed:
                extra = ""
                if occ is not None and ST["INDEX_FULL"] in st.allowed | {status}:
                    extra = (f" (bucket {m.bucket_of(rec.txid, rec.lpn)} holds {len(occ)} pairs of open "
                             f"txs: {[(u, l, str(self.accepted[sq - 1]) if sq else '') for u, l, sq in occ]})")
                self.err(f"{ctx}: status {self.stname.get(status, status)}, expected "
                         f"{[self.stname[s] for s in sorted(st.allowed)]}{extra}")
            else:
                for f, v in st.expected(status, ST["OK"]).items():
                    if rec.rsp[f] != v:
                        self.err(f"{ctx}: {f}={rec.rsp[f]}, expected {v} (expect {st.expected(status)})")
            lat = rec.rsp["_cycle"] - rec.accept
            if lat > self.lat_bound or lat <= 0:
                self.err(f"{ctx}: response latency {lat} cycles (bound {self.lat_bound})")
            # event streams
            if rec.op in (OP["COMMIT"], OP["ABORT"]) and status == ST["OK"]:
                key = (rec.txid, int(rec.op == OP["ABORT"]))
                got = self.inval_beats[self.inval_pos:self.inval_pos + len(st.inval)]
                got_t = [(b["ppn"], b["txid"], b["aborted"]) for b in got]
                if got_t == st.inval:
                    self.inval_pos += len(st.inval)
                else:
                    # resynchronise on this op's own beats (same txid and aborted flag), so that
                    # one missing or extra beat is reported once, not for every later commit
                    end = self.inval_pos
                    while end < len(self.inval_beats) and end - self.inval_pos < len(st.inval) + self.n \
                            and (self.inval_beats[end]["txid"], self.inval_beats[end]["aborted"]) == key:
                        end += 1
                    got = self.inval_beats[self.inval_pos:end]
                    got_t = [(b["ppn"], b["txid"], b["aborted"]) for b in got]
                    self.inval_pos = end
                    self.err(f"{ctx}: m_inval beats {got_t}, expected {st.inval}")
            if st.map:
                got = self.map_beats[self.map_pos:self.map_pos + len(st.map)]
                got_t = [(b["txid"], b["lpn"], b["ppn"], b["last"]) for b in got]
                if got_t == st.map:
                    self.map_pos += len(st.map)
                else:
                    end = self.map_pos                 # resynchronise on `last`
                    while end < len(self.map_beats) and end - self.map_pos < len(st.map) + self.n:
                        end += 1
                        if self.map_beats[end - 1]["last"]:
                            break
                    got_t = [(b["txid"], b["lpn"], b["ppn"], b["last"]) for b in self.map_beats[self.map_pos:end]]
                    self.map_pos = end
                    self.err(f"{ctx}: m_map beats {got_t}, expected {st.map}")
            if len(self.errors) > 30:
                break
        if final:
            if self.checked < len(self.accepted) and self.accepted[self.checked].rsp is None:
                self.err(f"{len(self.accepted) - self.checked} accepted requests not checked "
                         f"(missing responses)")
            if self.outstanding:
                self.err(f"{len(self.outstanding)} requests without response: "
                         f"{[str(r) for r in list(self.outstanding.values())[:5]]}")
            if self.inval_pos < len(self.inval_beats):
                self.err(f"extra m_inval beats: {self.inval_beats[self.inval_pos:self.inval_pos + 8]}")
            if self.map_pos < len(self.map_beats):
                self.err(f"extra m_map beats: {self.map_beats[self.map_pos:self.map_pos + 8]}")
        if self.errors:
            shown = "\n  ".join(self.errors[:12])
            raise AssertionError(f"{len(self.errors)} mismatches, first:\n  {shown}")

    def _fmt_rsp(self, b: dict) -> str:
        return (f"{self.stname.get(b['status'], b['status'])}(ppn={b['ppn']}, mapped={b['mapped']}, "
                f"from_tx={b['from_tx']}, count={b['count']})@{b['_cycle']}")

    async def finish(self) -> None:
        await self.quiesce()
        self.check(final=True)
        st = Counter(self.stname.get(r.rsp["status"], r.rsp["status"]) for r in self.accepted)
        self.log.info(f"checked {self.checked} requests (this epoch), statuses {dict(st)}, "
                      f"{len(self.inval_beats)} m_inval and {len(self.map_beats)} m_map beats")

    # ---- helpers for directed tests ------------------------------------------------------------
    def same_fold_lpns(self, fold: int, k: int, avoid=()) -> list[int]:
        """k LPNs < MAP_DEPTH whose XOR-fold is `fold` (same index bucket for one tx, whatever
        reading of the tx term)."""
        out = [l for l in folds()[fold] if l not in avoid]
        assert len(out) >= k, f"only {len(out)} LPNs with fold {fold}"
        return out[:k]

    def rand_ppn(self) -> int:
        return self.rng.randrange(1 << P["PPN_W"])

    def active_during_commit(self, commit: Rec, kinds: dict) -> dict:
        """Per kind (name -> list of Rec): how many were accepted while `commit` ran (after its
        acceptance, before its response) in a cycle with commit_active = 1."""
        out = {}
        for name, recs in kinds.items():
            out[name] = sum(1 for r in recs
                            if r.accept is not None and commit.accept < r.accept < commit.rsp["_cycle"]
                            and self.commit_active[r.accept - 1])
        return out


# ==============================================================================================
# random traffic
# ==============================================================================================
class Traffic:
    """Random request generator: every operation, many concurrent transactions (a working set
    that rotates so every txid is used and reused), hot LPNs (duplicates inside and across
    transactions), commits/aborts at random sizes, TX_FULL pushes, and a sprinkle of errors."""

    def __init__(self, tb: TB, err_rate: float = 0.05):
        self.tb = tb
        self.rng = tb.rng
        self.OP = P["ops"]
        self.n = P["TX_ENTRIES"]
        self.err_rate = err_rate
        depth = P["MAP_DEPTH"]
        hot = min(depth, max(12, 2 * self.n))
        self.hot = self.rng.sample(range(depth), hot)
        self.hot += [0, depth - 1]
        self.sent = Counter()
        k = min(P["NUM_TX"], max(3, P["NUM_TX"] // 4))
        self.working = self.rng.sample(range(1, P["NUM_TX"] + 1), k)
        self.written = {t: 0 for t in range(1, P["NUM_TX"] + 1)}
        self.target = {t: self._target() for t in self.written}

    def _target(self) -> int:
        r = self.rng.random()
        if r < 0.1:
            return self.n + self.rng.randint(1, 3)          # push into TX_FULL
        if r < 0.4:
            return self.rng.randint(1, 3)
        return self.rng.randint(1, self.n)

    def lpn(self) -> int:
        if self.rng.random() < 0.85:
            return self.rng.choice(self.hot)
        return self.rng.randrange(P["MAP_DEPTH"])

    def garbage_txid(self) -> int:
        return 0 if self.rng.random() < 0.7 else self.rng.randrange(1 << P["TXID_W"])

    def bad_txid(self) -> int:
        hi = (1 << P["TXID_W"]) - 1
        return self.rng.choice([0, P["NUM_TX"] + 1, hi, self.rng.randint(P["NUM_TX"] + 1, hi)]) \
            if hi > P["NUM_TX"] else 0

    def bad_lpn(self) -> int:
        hi = (1 << P["LPN_W"]) - 1
        return self.rng.choice([P["MAP_DEPTH"], hi, self.rng.randint(P["MAP_DEPTH"], hi)])

    def end_tx(self, t: int) -> tuple:
        op = self.OP["COMMIT"] if self.rng.random() < 0.75 else self.OP["ABORT"]
        self.written[t] = 0
        self.target[t] = self._target()
        if self.rng.random() < 0.3:                         # rotate the working set
            others = [u for u in range(1, P["NUM_TX"] + 1) if u not in self.working]
            if others:
                self.working[self.working.index(t)] = self.rng.choice(others)
        return (op, t, self.rng.randrange(1 << P["LPN_W"]) if self.rng.random() < 0.1 else 0, 0)

    def next(self) -> tuple:
        OP, rng = self.OP, self.rng
        r = rng.random()
        t = rng.choice(self.working)
        if r < self.err_rate:
            kind = rng.randrange(3)
            if kind == 0:
                bad = [o for o in range(16) if o not in OP.values()]
                req = (rng.choice(bad), rng.randrange(1 << P["TXID_W"]),
                       rng.randrange(1 << P["LPN_W"]), self.tb.rand_ppn())
            elif kind == 1:
                op = rng.choice([OP["TX_WRITE"], OP["TX_LOOKUP"], OP["COMMIT"], OP["ABORT"]])
                req = (op, self.bad_txid(), self.lpn(), self.tb.rand_ppn())
            else:
                op = rng.choice([OP["MAP_WRITE"], OP["LOOKUP"], OP["TX_WRITE"], OP["TX_LOOKUP"], OP["UNMAP"]])
                req = (op, t, self.bad_lpn(), self.tb.rand_ppn())
            self.sent["error"] += 1
            return req
        r = rng.random()
        if r < 0.45:
            if self.written[t] >= self.target[t]:
                self.sent["end"] += 1
                return self.end_tx(t)
            self.written[t] += 1
            self.sent["TX_WRITE"] += 1
            return (OP["TX_WRITE"], t, self.lpn(), self.tb.rand_ppn())
        if r < 0.60:
            self.sent["TX_LOOKUP"] += 1
            u = t if rng.random() < 0.7 else rng.randint(1, P["NUM_TX"])
            return (OP["TX_LOOKUP"], u, self.lpn(), self.tb.rand_ppn() if rng.random() < 0.1 else 0)
        if r < 0.76:
            self.sent["LOOKUP"] += 1
            return (OP["LOOKUP"], self.garbage_txid(), self.lpn(), 0)
        if r < 0.85:
            self.sent["MAP_WRITE"] += 1
            return (OP["MAP_WRITE"], self.garbage_txid(), self.lpn(), self.tb.rand_ppn())
        if r < 0.90:
            self.sent["UNMAP"] += 1
            return (OP["UNMAP"], self.garbage_txid(), self.lpn(), 0)
        if r < 0.96:
            self.sent["end"] += 1
            return self.end_tx(t)
        self.sent["stray COMMIT/ABORT"] += 1                # maybe on an empty tx: TX_EMPTY
        u = rng.randint(1, P["NUM_TX"])
        op = OP["COMMIT"] if rng.random() < 0.5 else OP["ABORT"]
        self.written[u] = 0
        return (op, u, 0, 0)


_FOLDS: dict = {}


def folds() -> dict:
    """fold value -> LPNs < MAP_DEPTH with that XOR-fold."""
    if not _FOLDS:
        b = _clog2(P["HASH_BUCKETS"])
        for l in range(P["MAP_DEPTH"]):
            _FOLDS.setdefault(xor_fold(l, b), []).append(l)
    return _FOLDS


def n_random_ops() -> int:
    return 10000 if LONG else 2000


# ==============================================================================================
# tests
# ==============================================================================================
# Runtime: every test of a big preset pays its init pass (MAP_DEPTH cycles, ~6 s for default), so
# the newer tests run once there and in every variant on tiny/mid.
SMALL = P is not None and P["MAP_DEPTH"] <= 1000


@cocotb.test(skip=not (SMALL or os.environ.get("ATS_POWER_ON")))   # big presets: the seed runs only
async def run_power_on(dut):
    """Power-on: rst driven high from time 0 (the pytest entry point runs this test once more per
    Verilator seed with random initial registers and RAMs, +verilator+rand+reset+2): no simulation
    check fires, no output is valid from the first reset edge on, s_req_ready stays low until
    init_done, and then everything reads empty and random traffic matches the model (nothing
    depends on power-on contents)."""
    dut.rst.value = 1                            # before the first edge cocotb drives
    dut.s_req_valid.value = 0
    tb = TB(dut, "power_on", True, True)
    d = dut
    hold = tb.rng.randint(2, 8)
    for i in range(hold):
        await RisingEdge(d.clk)
        if i == 0:
            continue                             # the first edge is the one that resets
        outs = {n: int(getattr(d, n).value) for n in ("m_rsp_valid", "m_inval_valid", "m_map_valid",
                                                       "s_req_ready", "init_done", "commit_active")}
        assert not any(outs.values()), f"during reset (edge {i + 1}): {outs}"
    d.rst.value = 0
    bound = 2 * P["MAP_DEPTH"] + 200
    for i in range(bound):
        await RisingEdge(d.clk)
        if int(d.init_done.value):
            break
        assert not int(d.s_req_ready.value), f"s_req_ready high before init_done ({i} cycles after reset)"
        assert not (int(d.m_rsp_valid.value) | int(d.m_inval_valid.value) | int(d.m_map_valid.value))
    else:
        raise AssertionError(f"init_done not asserted within {bound} cycles after reset")
    # everything empty: lookups of (a sample of) the LPNs unmapped, every tx empty
    depth = P["MAP_DEPTH"]
    lpns = range(depth) if depth <= 64 else tb.rng.sample(range(depth), 16)
    for l in lpns:
        await tb.send(tb.OP["LOOKUP"], 0, l, 0)
    for t in range(1, P["NUM_TX"] + 1):
        for l in tb.rng.sample(list(lpns), 2):
            await tb.send(tb.OP["TX_LOOKUP"], t, l, 0)
        await tb.send(tb.OP["COMMIT"] if t % 2 else tb.OP["ABORT"], t, 0, 0)     # TX_EMPTY
    await tb.quiesce()
    tb.check()
    # every index bucket can hold HASH_WAYS pairs of one tx (no stale valid slot): fill a few
    fl = sorted(folds(), key=lambda f: -len(folds()[f]))[:3]
    for k, f in enumerate(fl):
        t = 1 + k % P["NUM_TX"]
        for l in folds()[f][:P["HASH_WAYS"]]:
            await tb.send(tb.OP["TX_WRITE"], t, l, tb.rand_ppn())
        await tb.send(tb.OP["COMMIT"] if k % 2 else tb.OP["ABORT"], t, 0, 0)
    await tb.quiesce()
    tb.check()
    gen = Traffic(tb)
    for _ in range(300 if P["NUM_TX"] <= 8 else 100):
        await tb.send(*gen.next())
    await tb.finish()
    assert all(r.rsp["status"] == tb.ST["OK"] for r in tb.accepted[:len(lpns)]), "LOOKUPs after power-on"


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True, "heavy"])
async def run_random_mix(dut, idle, backpressure):
    """Random mix of every operation and error over many concurrent transactions."""
    tb = TB(dut, f"random_mix{idle}{backpressure}", idle, backpressure)
    await tb.reset()
    gen = Traffic(tb)
    for i in range(n_random_ops()):
        await tb.send(*gen.next())
        if i % 500 == 499:                  # check as we go (early failures)
            await tb.quiesce()
            tb.check()
    await tb.finish()
    st = Counter(tb.stname[r.rsp["status"]] for r in tb.accepted)
    tb.log.info(f"sent {dict(gen.sent)}; statuses {dict(st)}; m_inval {len(tb.inval_beats)}, "
                f"m_map {len(tb.map_beats)}")
    assert st["OK"] > 0 and len(tb.map_beats) > 0


async def run_directed(tb: TB, build, rounds: int) -> None:
    """Each round: a sequence from build(rnd) sent back to back, then quiesce and check; finally
    ABORT whatever is open so that rounds start from an empty index."""
    await tb.reset()
    for rnd in range(rounds):
        await tb.burst(build(rnd))
        await tb.quiesce()
        tb.check()
        await abort_all(tb)
    await tb.finish()


def distinct_fold_lpns(tb: TB, k: int) -> list[int]:
    """k LPNs with pairwise different XOR-folds (different buckets for one tx), k <= buckets."""
    fl = tb.rng.sample(sorted(folds()), min(k, len(folds())))
    return [tb.rng.choice(folds()[f]) for f in fl]


def fillers(tb: TB, n: int, avoid=()) -> list[tuple]:
    """n LOOKUPs of LPNs outside `avoid` (spacing that changes nothing)."""
    out = []
    while len(out) < n:
        l = tb.rng.randrange(P["MAP_DEPTH"])
        if l not in avoid:
            out.append((P["ops"]["LOOKUP"], 0, l, 0))
    return out


@cocotb.test()
@cocotb.parametrize(backpressure=[False, "heavy"])
async def run_hazard_l2p(dut, backpressure):
    """L2P read-after-write: LOOKUP / TX_LOOKUP (fallback) / MAP_WRITE / UNMAP right after a
    MAP_WRITE or UNMAP of the same LPN, 0 to 3 requests apart: each sees the newest value."""
    tb = TB(dut, f"hz_l2p{backpressure}", False, backpressure)
    OP = tb.OP

    def build(rnd):
        gap = rnd % 4
        x = tb.rng.randrange(P["MAP_DEPTH"])
        t = tb.rng.randint(1, P["NUM_TX"])
        f = lambda: fillers(tb, gap, avoid=(x,))
        return ([(OP["MAP_WRITE"], 0, x, tb.rand_ppn())] + f() + [(OP["LOOKUP"], 0, x, 0)]
                + [(OP["MAP_WRITE"], 0, x, tb.rand_ppn())] + f() + [(OP["TX_LOOKUP"], t, x, 0)]
                + [(OP["MAP_WRITE"], 0, x, tb.rand_ppn())] + f() + [(OP["MAP_WRITE"], 0, x, tb.rand_ppn())]
                + f() + [(OP["UNMAP"], 0, x, 0)] + f() + [(OP["LOOKUP"], 0, x, 0)]
                + [(OP["UNMAP"], 0, x, 0)] + f() + [(OP["MAP_WRITE"], 0, x, tb.rand_ppn())]
                + f() + [(OP["UNMAP"], 0, x, 0), (OP["TX_LOOKUP"], t, x, 0), (OP["LOOKUP"], 0, x, 0)])
    await run_directed(tb, build, 16)


@cocotb.test()
@cocotb.parametrize(backpressure=[False, "heavy"])
async def run_hazard_tx(dut, backpressure):
    """Read-your-writes inside a tx: TX_LOOKUP right after TX_WRITE (0 to 2 apart), back-to-back
    TX_WRITEs to one LPN (last wins), another tx on the same LPN, committed map untouched."""
    tb = TB(dut, f"hz_tx{backpressure}", False, backpressure)
    OP = tb.OP

    def build(rnd):
        gap = rnd % 3
        t, u = tb.rng.sample(range(1, P["NUM_TX"] + 1), 2)
        x, y = distinct_fold_lpns(tb, 2)
        pp = lambda: tb.rand_ppn()
        f = lambda n=gap: fillers(tb, n, avoid=(x, y))
        return ([(OP["MAP_WRITE"], 0, x, pp())] + f(2)
                + [(OP["TX_WRITE"], t, x, pp())] + f() + [(OP["TX_LOOKUP"], t, x, 0), (OP["LOOKUP"], 0, x, 0)]
                + [(OP["TX_WRITE"], t, x, pp()), (OP["TX_WRITE"], t, x, pp())] + f()
                + [(OP["TX_LOOKUP"], t, x, 0), (OP["TX_LOOKUP"], u, x, 0)] + f(2)
                + [(OP["TX_WRITE"], u, x, pp())] + f() + [(OP["TX_LOOKUP"], u, x, 0),
                                                           (OP["TX_LOOKUP"], t, x, 0)] + f(2)
                + [(OP["TX_WRITE"], t, y, pp())] + f() + [(OP["TX_LOOKUP"], t, y, 0),
                                                           (OP["TX_LOOKUP"], t, x, 0), (OP["LOOKUP"], 0, y, 0)]
                + [(OP["TX_WRITE"], t, y, pp()), (OP["TX_WRITE"], t, x, pp()), (OP["TX_WRITE"], t, y, pp())]
                + f() + [(OP["TX_LOOKUP"], t, x, 0), (OP["TX_LOOKUP"], t, y, 0)])
    await run_directed(tb, build, 12)


@cocotb.test()
@cocotb.parametrize(backpressure=[False, "heavy"])
async def run_hazard_index(dut, backpressure):
    """New (tx, lpn) pairs into one index bucket (same XOR-fold), back to back or 1-2 apart: each
    takes its own way, the one beyond HASH_WAYS is refused (INDEX_FULL), all stay visible."""
    tb = TB(dut, f"hz_index{backpressure}", False, backpressure)
    OP = tb.OP

    def build(rnd):
        gap = rnd % 3
        t = tb.rng.randint(1, P["NUM_TX"])
        fl = list(folds()[tb.rng.choice(sorted(folds()))])
        tb.rng.shuffle(fl)
        k = min(len(fl), 2 + rnd % P["HASH_WAYS"] + (rnd // P["HASH_WAYS"]) % 2)
        seq = []
        for l in fl[:k]:
            seq += [(OP["TX_WRITE"], t, l, tb.rand_ppn())] + fillers(tb, gap, avoid=fl)
        return seq + [(OP["TX_LOOKUP"], t, l, 0) for l in fl[:k]]
    await run_directed(tb, build, 12)


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True, "heavy"])
async def run_commit_chain(dut, backpressure):
    """COMMIT m_inval/m_map with LPN duplicates in the tx (adjacent, 2 and 3 apart; previously
    mapped or not), MAP_WRITE/UNMAP right before the COMMIT, COMMIT right after COMMIT on the
    same LPNs, MAP_WRITE/UNMAP right after a COMMIT, lookups right after each."""
    tb = TB(dut, f"chain{backpressure}", False, backpressure)
    OP = tb.OP

    def build(rnd):
        t, u = tb.rng.sample(range(1, P["NUM_TX"] + 1), 2)
        lp = distinct_fold_lpns(tb, 3)
        x, y, z = lp
        pp = lambda: tb.rand_ppn()
        f = lambda n=2: fillers(tb, n, avoid=lp)
        seq = [(OP["MAP_WRITE"], 0, x, pp())] + f() + ([(OP["MAP_WRITE"], 0, y, pp())] if rnd % 2 else [])
        pattern = [[x, x, y], [x, y, x, y], [x, y, z, x], [y, y, y, x, x], [x, z, x, z, y, y]][rnd % 5]
        for l in pattern:                                          # spaced: no index race
            seq += [(OP["TX_WRITE"], t, l, pp())] + f()
        pre = [[], [(OP["MAP_WRITE"], 0, pattern[0], pp())], [(OP["UNMAP"], 0, pattern[0], 0)],
               [(OP["MAP_WRITE"], 0, pattern[-1], pp())]][rnd % 4]
        seq += pre + [(OP["COMMIT"], t, 0, 0)]
        seq += [(OP["LOOKUP"], 0, l, 0) for l in lp]
        seq += f(3) + [(OP["TX_WRITE"], u, x, pp())] + f() + [(OP["TX_WRITE"], u, y, pp())] + f(3)
        seq += [(OP["TX_WRITE"], t, z, pp())] + f(3)
        seq += [(OP["COMMIT"], t, 0, 0), (OP["COMMIT"], u, 0, 0)] if rnd % 2 else \
               [(OP["COMMIT"], u, 0, 0), (OP["COMMIT"], t, 0, 0)]
        seq += [(OP["LOOKUP"], 0, l, 0) for l in lp]
        seq += [(OP["MAP_WRITE"] if rnd % 3 else OP["UNMAP"], 0, x, pp()), (OP["LOOKUP"], 0, x, 0)]
        return seq
    await run_directed(tb, build, 15)


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True, "heavy"])
async def run_txid_reuse(dut, backpressure):
    """TX ops on a txid right after its COMMIT/ABORT (0 to 2 requests apart) wait for it and act
    on its next incarnation: TX_WRITE starts at count 1, TX_LOOKUP does not see the old entries,
    COMMIT/ABORT of the new incarnation, TX_EMPTY when nothing new was written."""
    tb = TB(dut, f"reuse{backpressure}", False, backpressure)
    OP = tb.OP

    def build(rnd):
        gap = rnd % 3
        t = tb.rng.randint(1, P["NUM_TX"])
        x, y, z = distinct_fold_lpns(tb, 3)
        pp = lambda: tb.rand_ppn()
        f = lambda n=gap: fillers(tb, n, avoid=(x, y, z))
        end1 = OP["COMMIT"] if rnd % 2 == 0 else OP["ABORT"]
        end2 = OP["ABORT"] if rnd % 2 == 0 else OP["COMMIT"]
        return ([(OP["TX_WRITE"], t, x, pp())] + fillers(tb, 2, (x, y, z)) + [(OP["TX_WRITE"], t, y, pp())]
                + fillers(tb, 2, (x, y, z)) + [(end1, t, 0, 0)] + f()
                + [(OP["TX_WRITE"], t, z, pp())] + f() + [(OP["TX_LOOKUP"], t, x, 0), (OP["TX_LOOKUP"], t, z, 0)]
                + [(end2, t, 0, 0)] + f() + [(OP["TX_LOOKUP"], t, z, 0)] + f()
                + [(OP["COMMIT"], t, 0, 0), (OP["ABORT"], t, 0, 0)] + f()
                + [(OP["TX_WRITE"], t, x, pp())] + f() + [(OP["ABORT"], t, 0, 0)] + f()
                + [(OP["TX_LOOKUP"], t, x, 0), (OP["LOOKUP"], 0, x, 0), (OP["LOOKUP"], 0, z, 0)])
    await run_directed(tb, build, 12)


@cocotb.test()
@cocotb.parametrize((("idle", "backpressure"), [(False, False), (True, True)]))
async def run_errors(dut, idle, backpressure):
    """Every error status, their priority, unused fields ignored, and that an errored request
    changes nothing (later lookups/commits of every tx and of aliased LPNs agree with the model)."""
    tb = TB(dut, f"errors{idle}{backpressure}", idle, backpressure)
    OP, ST = tb.OP, tb.ST
    await tb.reset()
    rng = tb.rng
    ntx, depth, n = P["NUM_TX"], P["MAP_DEPTH"], P["TX_ENTRIES"]
    txmax, lpnmax = (1 << P["TXID_W"]) - 1, (1 << P["LPN_W"]) - 1
    aw = _clog2(depth)
    bad_lpns = sorted({depth, depth + 1, lpnmax, depth + 3, (1 << aw) + 3, (1 << aw) + depth % (1 << aw) + 1,
                       rng.randint(depth, lpnmax)} - set(range(depth)))
    bad_lpns = [l for l in bad_lpns if l <= lpnmax]
    bad_txids = [0] + list(range(ntx + 1, txmax + 1))
    aliases = sorted({l & ((1 << aw) - 1) for l in bad_lpns} | {l % depth for l in bad_lpns}
                     | {depth - 1, 0, 3})
    aliases = [a for a in aliases if a < depth]
    tx_ops = [OP["TX_WRITE"], OP["TX_LOOKUP"], OP["COMMIT"], OP["ABORT"]]
    lpn_ops = [OP["MAP_WRITE"], OP["LOOKUP"], OP["TX_WRITE"], OP["TX_LOOKUP"], OP["UNMAP"]]

    # some committed state and open txs, so that "changes nothing" is visible
    for a in aliases:
        await tb.send(OP["MAP_WRITE"], 0, a, tb.rand_ppn())
    for t in range(1, ntx + 1, 2):
        await tb.send(OP["TX_WRITE"], t, aliases[t % len(aliases)], tb.rand_ppn())

    # BAD_OP: every unused code, with otherwise bad fields too (priority)
    for op in range(16):
        if op in OP.values():
            continue
        for txid, lpn in ((1, 0), (0, lpnmax), (txmax, depth), (rng.randint(1, ntx), rng.randrange(depth))):
            await tb.send(op, txid, lpn, tb.rand_ppn())
    # BAD_TXID: every tx op, txid 0 and every value > NUM_TX, with a bad LPN too (priority)
    for op in tx_ops:
        for txid in bad_txids:
            await tb.send(op, txid, rng.choice([0, depth - 1, lpnmax]), tb.rand_ppn())
    # BAD_LPN on every op with an LPN, at and beyond the boundary (and LPN = MAP_DEPTH-1 is fine)
    for op in lpn_ops:
        for lpn in bad_lpns:
            await tb.send(op, rng.randint(1, ntx), lpn, tb.rand_ppn())
        await tb.send(op, rng.randint(1, ntx), depth - 1, tb.rand_ppn())
    # unused fields are ignored: txid of non-tx ops, LPN of COMMIT/ABORT
    for op in (OP["MAP_WRITE"], OP["LOOKUP"], OP["UNMAP"]):
        for txid in (0, txmax, rng.randint(1, ntx)):
            await tb.send(op, txid, rng.choice(aliases), tb.rand_ppn())
    # TX_EMPTY: never written, COMMIT/ABORT twice; and COMMIT/ABORT ignore their LPN field
    await tb.quiesce()
    tb.check()
    empty = [t for t in range(2, ntx + 1, 2)]
    for t in empty[:4]:
        await tb.send(OP["COMMIT"], t, lpnmax, 0)
        await tb.send(OP["ABORT"], t, depth, 0)
    t1 = 1
    await tb.send(OP["COMMIT"], t1, lpnmax, 0)                 # OK (has an entry)
    await tb.send(OP["COMMIT"], t1, 0, 0)                      # TX_EMPTY: already committed
    await tb.send(OP["ABORT"], t1, 0, 0)
    if ntx >= 3:
        await tb.send(OP["ABORT"], 3, depth, 0)                # OK
        await tb.send(OP["ABORT"], 3, 0, 0)                    # TX_EMPTY: already aborted
        await tb.send(OP["COMMIT"], 3, 0, 0)
    # TX_FULL: fill a tx with duplicates of one LPN (one index slot), then new and old LPNs
    t = 2
    x = rng.randrange(depth)
    for _ in range(n):
        await tb.send(OP["TX_WRITE"], t, x, tb.rand_ppn())
    y = (x + 1) % depth
    for lpn in (x, y, rng.randrange(depth)):
        await tb.send(OP["TX_WRITE"], t, lpn, tb.rand_ppn())
    await tb.send(OP["TX_WRITE"], t, bad_lpns[0], tb.rand_ppn())   # BAD_LPN before TX_FULL
    await tb.send(OP["TX_WRITE"], 0, x, tb.rand_ppn())             # BAD_TXID before TX_FULL
    await tb.send(OP["TX_LOOKUP"], t, x, 0)
    await tb.send(OP["TX_LOOKUP"], t, y, 0)
    await tb.quiesce()
    tb.check()
    st = [tb.stname[r.rsp["status"]] for r in tb.accepted[-7:]]
    assert st[:3] == ["TX_FULL"] * 3, st
    await tb.send(OP["COMMIT"], t, 0, 0)                       # count = TX_ENTRIES
    # everything that errored must have changed nothing: look at all of it
    await sweep(tb, aliases + [x, y])
    await tb.finish()
    seen = Counter(tb.stname[r.rsp["status"]] for r in tb.accepted)
    tb.log.info(f"statuses seen: {dict(seen)}")
    for s in ("BAD_OP", "BAD_TXID", "BAD_LPN", "TX_FULL", "TX_EMPTY"):
        assert seen[s] > 0, f"{s} never produced"


async def sweep(tb: TB, lpns) -> None:
    """Look at the whole visible state: LOOKUP and TX_LOOKUP (every tx) of `lpns`, then COMMIT
    every tx (TX_EMPTY unless the model has entries)."""
    OP = tb.OP
    for lpn in sorted(set(lpns)):
        await tb.send(OP["LOOKUP"], 0, lpn, 0)
        for t in range(1, P["NUM_TX"] + 1):
            await tb.send(OP["TX_LOOKUP"], t, lpn, 0)
    for t in range(1, P["NUM_TX"] + 1):
        await tb.send(OP["COMMIT"], t, 0, 0)
    for lpn in sorted(set(lpns)):
        await tb.send(OP["LOOKUP"], 0, lpn, 0)


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True])
async def run_index_full(dut, backpressure):
    """INDEX_FULL: a bucket of one tx filled (same XOR-fold), a new pair refused, an existing pair
    accepted, TX_FULL before INDEX_FULL, collisions across transactions (the README's hash: an
    LPN of another tx in the same bucket), slots freed after COMMIT/ABORT, and a tx left intact."""
    tb = TB(dut, f"index_full{backpressure}", False, backpressure)
    OP, ST = tb.OP, tb.ST
    await tb.reset()
    rng = tb.rng
    ways, n, ntx = P["HASH_WAYS"], P["TX_ENTRIES"], P["NUM_TX"]
    b = _clog2(P["HASH_BUCKETS"])
    for rnd in range(3):
        t = rng.randint(1, ntx)
        # one tx overflows a bucket with HASH_WAYS+1 LPNs of one XOR-fold, when MAP_DEPTH has that
        # many (not in bench: 4 LPNs per fold; there only other transactions can fill a bucket)
        big = [f for f in sorted(folds()) if len(folds()[f]) >= ways + 2]
        single = bool(big)
        f = rng.choice(big) if single else max(sorted(folds()), key=lambda f: len(folds()[f]))
        lp = list(folds()[f])
        rng.shuffle(lp)
        for l in lp[:ways]:
            r = await tb.req(OP["TX_WRITE"], t, l, tb.rand_ppn())
            assert r["status"] == ST["OK"], tb._fmt_rsp(r)
        if single:
            r = await tb.req(OP["TX_WRITE"], t, lp[ways], tb.rand_ppn())
            assert r["status"] == ST["INDEX_FULL"], \
                f"TX_WRITE of a {ways + 1}th LPN of one bucket: {tb._fmt_rsp(r)}"
            await tb.send(OP["TX_LOOKUP"], t, lp[ways], 0)                # refused write left nothing
        r = await tb.req(OP["TX_WRITE"], t, lp[0], tb.rand_ppn())        # existing pair: fine
        assert r["status"] == ST["OK"], tb._fmt_rsp(r)
        await tb.send(OP["TX_LOOKUP"], t, lp[0], 0)
        # across transactions: LPNs of tx u that hash to t's (full) bucket are refused, one in
        # another bucket is not (README hash: the fold that lands u in t's bucket)
        u = rng.choice([x for x in range(1, ntx + 1) if x != t])
        await tb.quiesce(); tb.check()
        fu = tb.model.bucket_of(t, lp[0]) ^ tx_term(P, u)
        cand = [l for l in folds()[fu] if l not in lp and tb.model.latest(u, l) is None]
        for l in cand[:2]:
            r = await tb.req(OP["TX_WRITE"], u, l, tb.rand_ppn())
            assert r["status"] == ST["INDEX_FULL"], f"tx {u} lpn {l} into tx {t}'s full bucket: {tb._fmt_rsp(r)}"
        other = [l for l in range(P["MAP_DEPTH"]) if tb.model.bucket_fill(u, l) < ways][:1]
        for l in other:
            await tb.req(OP["TX_WRITE"], u, l, tb.rand_ppn())
        await tb.quiesce(5); tb.check()
        # TX_FULL has priority over INDEX_FULL: fill t with duplicates, then a new same-bucket LPN
        while len(tb.model.tx[t]) < n:
            await tb.send(OP["TX_WRITE"], t, rng.choice(lp[:ways]), tb.rand_ppn())
            await tb.quiesce(2); tb.check()
        new = lp[ways + 1] if single else next(l for l in range(P["MAP_DEPTH"]) if l not in lp)
        r = await tb.req(OP["TX_WRITE"], t, new, tb.rand_ppn())
        assert r["status"] == ST["TX_FULL"], tb._fmt_rsp(r)
        # the tx is intact after INDEX_FULL: COMMIT or ABORT it; its slots become free again
        await tb.send(OP["COMMIT"] if rnd % 2 == 0 else OP["ABORT"], t, 0, 0)
        await tb.send(OP["ABORT"], u, 0, 0)
        for l in lp[:ways]:
            await tb.send(OP["LOOKUP"], 0, l, 0)
        await tb.quiesce(4 * n + 100)
        tb.check()
        for l in lp[1:ways + 1]:                                           # refill the bucket
            await tb.send(OP["TX_WRITE"], t, l, tb.rand_ppn())
        await tb.send(OP["ABORT"], t, 0, 0)
        await tb.quiesce(4 * n + 100)
        tb.check()
    await tb.finish()
    assert any(tb.stname[r.rsp["status"]] == "INDEX_FULL" for r in tb.accepted)


def bucket_lpns(tb: TB, t: int, bkt: int, k: int, avoid=()) -> list[int]:
    """Up to k LPNs that tx t hashes into bucket `bkt` (README hash), in random order."""
    out = [l for l in folds().get(bkt ^ tx_term(P, t), []) if l not in avoid]
    tb.rng.shuffle(out)
    return out[:k]


@cocotb.test()
@cocotb.parametrize(backpressure=[False, "heavy"] if SMALL else ["heavy"])
async def run_index_after_end(dut, backpressure):
    """The index slots of a committed/aborted tx are free from its COMMIT/ABORT on, in request
    order: a TX_WRITE of another tx into their bucket right after it (0 to 3 requests apart, while
    the engine's APPLY/CLEAR still runs; the old tx's pairs in that bucket last in append order, so
    CLEAR frees them last) is answered OK, never INDEX_FULL; once the new tx fills the bucket itself
    the next new pair is refused. Tiny: first the exact reported sequence TX_WRITE(1, 0),
    TX_WRITE(1, 5), COMMIT(1), TX_WRITE(2, 2) (and with ABORT). Then random bursts of TX_WRITEs of
    three txs into two hot buckets with COMMITs/ABORTs in between (strict model)."""
    tb = TB(dut, f"index_after_end{backpressure}", False, backpressure)
    OP, ST = tb.OP, tb.ST
    await tb.reset()
    rng = tb.rng
    ways, n, ntx = P["HASH_WAYS"], P["TX_ENTRIES"], P["NUM_TX"]
    early = 0                                    # TX_WRITEs accepted before the end op answered
    if P["name"] == "tiny":
        for end in (OP["COMMIT"], OP["ABORT"]):
            recs = await tb.burst([(OP["TX_WRITE"], 1, 0, 11), (OP["TX_WRITE"], 1, 5, 12), (end, 1, 0, 0),
                                   (OP["TX_WRITE"], 2, 2, 13)])
            await tb.quiesce()
            tb.check()
            assert recs[3].rsp["status"] == ST["OK"], f"reported sequence: {tb._fmt_rsp(recs[3].rsp)}"
            await abort_all(tb)
    small = P["name"] == "tiny"                  # short on the big presets (runtime)
    rounds = 0
    for rnd in range(8 if small else 4):
        t, u = rng.sample(range(1, ntx + 1), 2)
        end = OP["COMMIT"] if rnd % 2 == 0 else OP["ABORT"]
        gap = rnd % 4
        bkt = rng.randrange(P["HASH_BUCKETS"])
        mine = bucket_lpns(tb, t, bkt, ways)
        theirs = bucket_lpns(tb, u, bkt, ways + 1, avoid=mine)
        if len(mine) < ways or len(theirs) < ways:
            continue
        # t: other entries first (a long CLEAR), the bucket's pairs last
        rest = [l for l in index_safe_lpns(tb, n - ways, sharing=1) if tb.model.bucket_of(t, l) != bkt]
        seq = [(OP["TX_WRITE"], t, l, tb.rand_ppn()) for l in rest[:rng.randint(0, n - ways)] + mine]
        await tb.burst(seq)
        await tb.quiesce()
        tb.check()
        assert tb.model.bucket_fill(t, mine[0]) == ways
        seq = [(end, t, 0, 0)] + fillers(tb, gap, avoid=mine + theirs)
        seq += [(OP["TX_WRITE"], u, l, tb.rand_ppn()) for l in theirs]
        seq += [(OP["TX_LOOKUP"], u, l, 0) for l in theirs] + [(OP["LOOKUP"], 0, l, 0) for l in mine]
        recs = await tb.burst(seq)
        await tb.quiesce()
        tb.check()
        endr = recs[0]
        ws = [r for r in recs if r.op == OP["TX_WRITE"]]
        got = [tb.stname[r.rsp["status"]] for r in ws]
        want = ["OK"] * ways + ["INDEX_FULL"] * (len(theirs) - ways)
        assert got == want, f"round {rnd}: TX_WRITEs of tx {u} into bucket {bkt} after {endr}: {got}"
        early += sum(1 for r in ws if r.accept < endr.rsp["_cycle"])
        rounds += 1
        await abort_all(tb)
    # random: three txs, two hot buckets, COMMIT/ABORT at random points, no waiting
    txs = rng.sample(range(1, ntx + 1), min(3, ntx))
    hot = rng.sample(range(P["HASH_BUCKETS"]), min(2, P["HASH_BUCKETS"]))
    pool = {t: [l for b in hot for l in bucket_lpns(tb, t, b, 2 * ways)] for t in txs}
    for _ in range(6 if small else 2):
        seq = []
        for _ in range(40):
            t = rng.choice(txs)
            c = rng.random()
            if c < 0.7 and pool[t]:
                seq.append((OP["TX_WRITE"], t, rng.choice(pool[t]), tb.rand_ppn()))
            elif c < 0.85:
                seq.append((OP["COMMIT"] if rng.random() < 0.6 else OP["ABORT"], t, 0, 0))
            else:
                seq.append((OP["TX_LOOKUP"], t, rng.choice(pool[t] or [0]), 0))
        await tb.burst(seq)
        await tb.quiesce()
        tb.check()
    await tb.finish()
    st = Counter(tb.stname[r.rsp["status"]] for r in tb.accepted)
    tb.log.info(f"statuses {dict(st)}; {early} TX_WRITEs into a freed bucket accepted before the "
                f"COMMIT/ABORT answered")
    assert st["INDEX_FULL"] > 0 and st["OK"] > 0
    # the case the test is named for must have happened: directed rounds ran, and TX_WRITEs into
    # the freed bucket were accepted before the COMMIT/ABORT answered
    assert rounds > 0 and early > 0, f"{rounds} directed rounds, {early} early TX_WRITEs"


@cocotb.test()
@cocotb.parametrize(backpressure=[True, "heavy"] if SMALL else [True])
async def run_rsp_stable(dut, backpressure):
    """AXI-Stream stability of m_rsp when a COMMIT/ABORT finishes while a pipeline response is on
    offer and not taken (m_rsp_ready held low across the end of the walk), and of all three output
    streams under random backpressure (the stability checker runs in every test; here it must
    have seen stalls on every stream): StreamSink's stability check (atstb.streams) on all three."""
    tb = TB(dut, f"rsp_stable{backpressure}", False, backpressure)
    OP = tb.OP
    await tb.reset()
    rng = tb.rng
    n, ntx = P["TX_ENTRIES"], P["NUM_TX"]
    small = P["name"] == "tiny"                  # short on the big presets (runtime)
    for rnd in range(6 if small else 4):
        t, u = rng.sample(range(1, ntx + 1), 2)
        lpns = index_safe_lpns(tb, max(2, n // 2))
        await build_big_tx(tb, t, lpns, old_map=rnd % 2 == 0)
        if rnd % 3 == 2:
            await tb.send(OP["TX_WRITE"], u, lpns[0], tb.rand_ppn())
        tb.rsp.set_pause(always_pause())         # nothing taken from m_rsp for a while
        end = OP["COMMIT"] if rnd % 2 == 0 else OP["ABORT"]
        looks = [(OP["LOOKUP"], 0, rng.choice(lpns), 0) for _ in range(rng.randint(0, 3))]
        more = [(OP["TX_LOOKUP"], u, rng.choice(lpns), 0) for _ in range(rng.randint(1, 4))]
        await tb.burst(looks + [(end, t, 0, 0)] + more)
        await tb.cycles(rng.randint(0, 8) + 2 * n + 30)
        tb.rsp.set_pause(tb.bp_gen())
        await tb.quiesce()
        tb.check()
        await abort_all(tb)
    gen = Traffic(tb)
    for _ in range(400 if small else 150):
        await tb.send(*gen.next())
    await tb.finish()
    stalls = {s.name: s.stable_checks for s in (tb.rsp, tb.inval, tb.map)}
    tb.log.info(f"stalled edges checked for stability: {stalls}")
    for name, n_stalls in stalls.items():
        assert n_stalls > 0, f"no stall seen on {name}: {stalls}"


async def build_big_tx(tb: TB, t: int, lpns: list[int], old_map: bool = True) -> None:
    """Map `lpns` (old values), then fill tx t to TX_ENTRIES entries over them (duplicates)."""
    OP = tb.OP
    if old_map:
        for l in lpns:
            if tb.rng.random() < 0.8:
                await tb.send(OP["MAP_WRITE"], 0, l, tb.rand_ppn())
    for i in range(P["TX_ENTRIES"]):
        await tb.send(OP["TX_WRITE"], t, lpns[i % len(lpns)] if i < len(lpns) else tb.rng.choice(lpns),
                      tb.rand_ppn())
    await tb.quiesce()
    tb.check()


def index_safe_lpns(tb: TB, k: int, sharing: int = 2) -> list[int]:
    """Up to k distinct LPNs that `sharing` transactions can all hold at once without INDEX_FULL,
    whatever the tx term of the hash: at most HASH_WAYS/sharing LPNs per XOR-fold (for one tx,
    one fold is one bucket). Fewer than k when the index is small (tiny)."""
    per_fold = max(1, P["HASH_WAYS"] // sharing)
    fl = list(folds())
    tb.rng.shuffle(fl)
    out = []
    for f in fl:
        out += tb.rng.sample(folds()[f], min(per_fold, len(folds()[f])))
        if len(out) >= k:
            break
    return out[:k]


async def abort_all(tb: TB) -> None:
    """ABORT every tx the model holds entries for (clean index for the next round)."""
    for t, ents in tb.model.tx.items():
        if ents:
            await tb.send(tb.OP["ABORT"], t, 0, 0)
    await tb.quiesce(4 * P["TX_ENTRIES"] + 100)
    tb.check()


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True, "heavy"])
async def run_atomic_commit(dut, idle, backpressure):
    """INV-ATOM / INV-ISO: a full tx commits while LOOKUPs and TX_LOOKUPs (of other txs) of its
    LPNs stream; every lookup accepted before the COMMIT sees none of it, every one after sees
    all of it (model in acceptance order), including duplicates (last entry wins), back-to-back
    COMMITs, and MAP_WRITE/UNMAP/TX ops on the committing txid right after it."""
    tb = TB(dut, f"atomic{idle}{backpressure}", idle, backpressure)
    OP = tb.OP
    await tb.reset()
    rng = tb.rng
    ntx, n = P["NUM_TX"], P["TX_ENTRIES"]
    rounds = 8 if LONG else 3
    windows = 0
    for rnd in range(rounds):
        t, u, v = rng.sample(range(1, ntx + 1), 3) if ntx >= 3 else (1, 2, 2)
        k = max(2, (3 * n) // 4)
        lpns = index_safe_lpns(tb, k)
        await build_big_tx(tb, t, lpns)
        for l in rng.sample(lpns, max(1, len(lpns) // 3)):              # u shares some LPNs
            await tb.send(OP["TX_WRITE"], u, l, tb.rand_ppn())
        await tb.quiesce()
        tb.check()
        look = []
        for _ in range(3 * n + 20):
            l = rng.choice(lpns)
            c = rng.random()
            if c < 0.45:
                look.append((OP["LOOKUP"], 0, l, 0))
            elif c < 0.75:
                look.append((OP["TX_LOOKUP"], u, l, 0))
            else:
                look.append((OP["TX_LOOKUP"], v, l, 0))
        pre = look[:6]
        post = look[6:]
        tail = []
        if rnd % 3 == 1:
            tail = [(OP["COMMIT"], u, 0, 0)] + [(OP["LOOKUP"], 0, l, 0) for l in lpns[:6]]
        elif rnd % 3 == 2:
            x = rng.choice(lpns)
            tail = [(OP["MAP_WRITE"], 0, x, tb.rand_ppn()), (OP["LOOKUP"], 0, x, 0),
                    (OP["TX_WRITE"], t, x, tb.rand_ppn()), (OP["TX_LOOKUP"], t, x, 0),
                    (OP["UNMAP"], 0, lpns[0], 0), (OP["LOOKUP"], 0, lpns[0], 0),
                    (OP["ABORT"], t, 0, 0)]
        # what a lookup may see: all of the tx ("new") or none of it ("old")
        old = {l: tb.model.lookup(l) for l in lpns}
        new = {l: (1, tb.model.latest(t, l)) for l in lpns}
        own_u = {l for l in lpns if tb.model.latest(u, l) is not None}
        half = len(post) // 2
        recs = await tb.burst(pre + [(OP["COMMIT"], t, 0, 0)] + post[:half] + tail + post[half:])
        commit = recs[len(pre)]
        await tb.quiesce()
        # INV-ATOM / INV-ISO, stated directly (the model checks the same and more below)
        for i, r in enumerate(recs[:len(pre) + 1 + half]):
            if r.op == OP["COMMIT"] or r.rsp is None or r.rsp["status"] != tb.ST["OK"] or \
                    (r.op == OP["TX_LOOKUP"] and r.txid == u and r.lpn in own_u):
                continue
            want, other = (old, new) if i < len(pre) else (new, old)
            got = (r.rsp["mapped"], r.rsp["ppn"] if r.rsp["mapped"] else None)
            exp = (want[r.lpn][0], want[r.lpn][1] if want[r.lpn][0] else None)
            if got != exp:
                side = "before" if i < len(pre) else "after"
                if got == (other[r.lpn][0], other[r.lpn][1] if other[r.lpn][0] else None):
                    seen = "the tx's value too early" if i < len(pre) else "the pre-commit value"
                else:
                    seen = "neither the pre-commit nor the committed value"
                tb.err(f"INV-ATOM: {r} accepted {side} COMMIT tx {t} (accepted@{commit.accept}) "
                       f"returned {tb._fmt_rsp(r.rsp)}, i.e. {seen}; expected mapped/ppn {exp}")
        tb.check()
        inside = [r for r in recs if r.op in (OP["LOOKUP"], OP["TX_LOOKUP"])
                  and commit.accept < r.accept < commit.rsp["_cycle"]]
        windows += len(inside)
        tb.log.info(f"round {rnd}: COMMIT tx {t} ({commit.rsp['count']} entries) "
                    f"accepted@{commit.accept} answered@{commit.rsp['_cycle']}; "
                    f"{len(inside)} lookups accepted inside the commit window")
        await abort_all(tb)
    await tb.finish()
    assert windows > 0, "no lookup was accepted while a commit ran: atomicity not exercised"


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True, "heavy"])
async def run_flow_during_commit(dut, backpressure):
    """While a COMMIT runs (commit_active), LOOKUPs and other transactions' TX_WRITEs and
    TX_LOOKUPs are still accepted (README: they keep flowing)."""
    tb = TB(dut, f"flow{backpressure}", False, backpressure)
    OP = tb.OP
    await tb.reset()
    rng = tb.rng
    ntx, n = P["NUM_TX"], P["TX_ENTRIES"]
    totals = Counter()
    saw_active = 0
    for rnd in range(2):
        t, u = rng.sample(range(1, ntx + 1), 2)
        lpns = index_safe_lpns(tb, max(2, n // 2))
        await build_big_tx(tb, t, lpns)
        others = [l for l in range(P["MAP_DEPTH"]) if l not in lpns]
        mix = []
        for i in range(2 * n + 16):
            c = i % 3
            if c == 0:
                mix.append((OP["LOOKUP"], 0, rng.choice(lpns), 0))
            elif c == 1:
                mix.append((OP["TX_LOOKUP"], u, rng.choice(lpns), 0))
            else:
                mix.append((OP["TX_WRITE"], u, rng.choice(others[:2]), tb.rand_ppn()))
        recs = await tb.burst([(OP["COMMIT"], t, 0, 0)] + mix)
        commit = recs[0]
        await tb.quiesce()
        tb.check()
        kinds = {name: [r for r in recs[1:] if r.op == OP[name]] for name in ("LOOKUP", "TX_LOOKUP", "TX_WRITE")}
        got = tb.active_during_commit(commit, kinds)
        totals.update(got)
        active = sum(tb.commit_active[commit.accept:commit.rsp["_cycle"] - 1])
        saw_active += active
        tb.log.info(f"round {rnd}: COMMIT of {commit.rsp['count']} entries took "
                    f"{commit.rsp['_cycle'] - commit.accept} cycles, commit_active for {active}; "
                    f"accepted meanwhile with commit_active=1: {got}")
        await abort_all(tb)
    await tb.finish()
    assert saw_active > 0, "commit_active never asserted during a COMMIT"
    for name in ("LOOKUP", "TX_LOOKUP", "TX_WRITE"):
        assert totals[name] > 0, f"no {name} accepted while commit_active: {dict(totals)}"


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True, "heavy"])
async def run_reset_mid_traffic(dut, backpressure):
    """Reset in the middle of traffic (also while a commit walks): the engine comes back empty
    (init_done; nothing left on any stream; all tables and the index empty) and works."""
    tb = TB(dut, f"reset{backpressure}", True, backpressure)
    OP = tb.OP
    await tb.reset()
    rng = tb.rng
    touched: set[int] = set()
    for rnd in range(3):
        gen = Traffic(tb, err_rate=0.02)
        # traffic, with a big commit in flight near the reset point (try_send: if the engine
        # stalls for good, that is reported by the other tests; the reset must recover anyway)
        t = rng.randint(1, P["NUM_TX"])
        reqs = []
        for _ in range(P["TX_ENTRIES"]):
            l = rng.randrange(P["MAP_DEPTH"])
            touched.add(l)
            reqs.append((OP["TX_WRITE"], t, l, tb.rand_ppn()))
        for i in range(rng.randint(50, 200)):
            r = gen.next()
            if r[0] in (OP["MAP_WRITE"], OP["TX_WRITE"]) and r[2] < P["MAP_DEPTH"]:
                touched.add(r[2])
            reqs.append(r)
        reqs.append((OP["COMMIT"], t, 0, 0))
        reqs += [gen.next() for _ in range(rng.randint(0, 10))]
        for r in reqs:
            if await tb.try_send(*r) is None:
                tb.log.warning(f"round {rnd}: engine stalled before the reset: {tb.hang_report()}")
                break
        for _ in range(200):                      # reset while commit_active if we can
            await RisingEdge(dut.clk)
            if dut.commit_active.value == 1:
                break
        await tb.cycles(rng.randint(0, P["TX_ENTRIES"]))
        # stop everything, then reset: no handshake during reset, nothing may survive it
        for s in (tb.rsp, tb.inval, tb.map):
            s.set_pause(always_pause())
        tb.src.flush()
        await tb.cycles(2)
        dut.rst.value = 1
        await tb.cycles(rng.randint(1, 5))
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        tb.new_epoch()
        for s in (tb.rsp, tb.inval, tb.map):
            s.set_pause(tb.bp_gen())
        assert dut.init_done.value == 0, "init_done still high right after a reset"
        await tb.wait_init()
        await tb.cycles(50)
        assert not tb.rsp_beats and not tb.inval_beats and not tb.map_beats and not tb.errors, \
            f"stray beats after reset: rsp {tb.rsp_beats[:4]} {tb.errors[:4]} inval " \
            f"{tb.inval_beats[:4]} map {tb.map_beats[:4]}"
        # empty: lookups unmapped, every tx empty (COMMIT -> TX_EMPTY)
        await sweep(tb, rng.sample(sorted(touched), min(8, len(touched))))
        await tb.quiesce()
        tb.check()
        # and works (one request at a time, so that only reset matters here): a full bucket of
        # one tx (no slot left over from before), lookups, a commit, an abort
        t, u = rng.sample(range(1, P["NUM_TX"] + 1), 2)
        fl = max(sorted(folds()), key=lambda f: len(folds()[f]))
        lp = folds()[fl][:P["HASH_WAYS"] + 1]
        for l in lp:
            await tb.req(OP["TX_WRITE"], t, l, tb.rand_ppn())
        for l in lp:
            await tb.req(OP["MAP_WRITE"], 0, l, tb.rand_ppn())
            await tb.req(OP["TX_LOOKUP"], t, l, 0)
        await tb.req(OP["TX_WRITE"], u, lp[0], tb.rand_ppn())
        await tb.req(OP["COMMIT"], t, 0, 0)
        await tb.req(OP["ABORT"], u, 0, 0)
        for l in lp:
            await tb.req(OP["LOOKUP"], 0, l, 0)
        await tb.quiesce()
        tb.check()
        assert tb.accepted[-2 - len(lp)].rsp["status"] == tb.ST["OK"], "COMMIT after reset"
    await tb.finish()


# ==============================================================================================
# pytest entry point: one build per preset
# ==============================================================================================
HERE = Path(__file__).resolve().parent
PRESETS = ["tiny", "mid", "default"] + (["bench", "large"] if LONG else [])


def _ensure_generated(preset: str) -> Path:
    gen = ROOT / "build" / "gen" / f"remap_{preset}"
    if not (gen / "ats_remap_engine.v").exists() or not (gen / "params.json").exists():
        import fcntl
        lock = ROOT / "build" / ".gen_remap.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            if not (gen / "ats_remap_engine.v").exists():
                spinal = ROOT / "spinal"
                cp = (spinal / "target" / "cp.txt").read_text().strip()
                subprocess.run(["java", "-cp", f"target/classes:{cp}", "atomssd.remap.RemapEngineVerilog",
                                "../build/gen"], cwd=spinal, check=True)
    return gen


def _sources(gen: Path) -> list[Path]:
    """The generated Verilog plus what it instantiates (the generator's `sources.f`), and the stream
    checker bound to its m_ ports (ats_remap_engine_bind.sv)."""
    check = block_sources("ats_stream_check") + [HERE / "ats_remap_engine_bind.sv"]
    if (gen / "sources.f").exists():
        return load_sources(gen) + check
    return [gen / "ats_remap_engine.v"] + check


# Verilator seeds of the power-on runs (random initial registers and RAMs); 5 and 28 stopped the
# engine at its first clock edge before its checks were masked until the first reset.
POWER_ON_SEEDS = {"tiny": [5, 28, 1, 2, 3, 4], "mid": [5], "default": [28], "bench": [5], "large": [28]}


def _run_power_on(preset: str, gen: Path, build_key: str) -> None:
    """run_power_on again, once per seed, with Verilator's random initial state, on the build of
    the main run (same build key)."""
    seeds = POWER_ON_SEEDS[preset] + ([11, 17, 23] if LONG else [])
    failed = []
    for seed in seeds:
        try:
            run(toplevel="ats_remap_engine", sources=_sources(gen), test_module="test_ats_remap_engine",
                test_dir=HERE, build_key=build_key, seed=seed, test_filter="run_power_on",
                extra_env={"ATS_REMAP_GEN": str(gen), "ATS_LONG": "1" if LONG else "0", "ATS_POWER_ON": "1"},
                plusargs=["+verilator+rand+reset+2", f"+verilator+seed+{seed}"],
                results_name=f"power_on_seed{seed}", public={})
        except RuntimeError:
            failed.append(seed)
    assert not failed, f"run_power_on failed with random initial state, Verilator seeds {failed}"


def _check_waveform(preset: str) -> None:
    """Regression of the commit waveform's GTKWave save file (make demo / make wave-remap): run the
    commit scenario with an FST, write the save file as bench_remap.py does, and check it
    numerically: markers A (COMMIT accepted) and B (its response) inside the window that
    [timestart], the zoom and the window size show, the commit filling a good part of it, every
    group non-empty, every signal present in the FST."""
    sys.path.insert(0, str(ROOT / "bench" / "remap"))
    import bench_remap as br
    sizes = [1, 8, P_of(preset)["TX_ENTRIES"]]
    fst = ROOT / "build" / "waves" / f"test_remap_commit_{preset}.fst"
    br.run_scenario(preset, sizes, fst)
    tr = br.Trace(fst)
    commits = tr.latencies(P_of(preset)["ops"]["COMMIT"])
    assert [c["count"] for c in commits[:len(sizes)]] == sizes, commits
    big = max(commits[:len(sizes)], key=lambda c: c["count"])
    gtkw = fst.with_suffix(".gtkw")
    br.write_gtkw(gtkw, fst, big["t_accept_ps"], big["t_rsp_ps"], tr.widths)
    probs = br.check_gtkw(gtkw, tr.names)
    assert not probs, "\n".join(probs)


def P_of(preset: str) -> dict:
    return load_params(ROOT / "build" / "gen" / f"remap_{preset}")


@pytest.mark.parametrize("preset", PRESETS)
def test_ats_remap_engine(preset):
    gen = _ensure_generated(preset)
    xml = run(toplevel="ats_remap_engine", sources=_sources(gen),
              test_module="test_ats_remap_engine", test_dir=HERE, build_key=preset,
              public={},        # the test reads only the top's signals (the power-on runs: the same)
              extra_env={"ATS_REMAP_GEN": str(gen), "ATS_LONG": "1" if LONG else "0",
                         # ATS_TEST_FILTER: regex on cocotb test names (e.g. "run_atomic"), for debugging
                         **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                            if os.environ.get("ATS_TEST_FILTER") else {})})
    if not os.environ.get("ATS_TEST_FILTER") or "power" in os.environ["ATS_TEST_FILTER"]:
        _run_power_on(preset, gen, preset)
    if preset == "mid" and not os.environ.get("ATS_TEST_FILTER"):
        _check_waveform(preset)                  # same build, after the tests (no parallel build)
