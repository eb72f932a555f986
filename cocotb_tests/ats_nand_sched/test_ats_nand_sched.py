"""cocotb tests of ats_nand_sched (NAND scheduler), against the independent reference model
`atstb.nand_sched_model` written from rtl/nand/README_sched.md.

Drivers: s_nreq and s_ccpl with the library's StreamSource (random idle where parametrised),
m_ncpl with a StreamSink (random backpressure), and a behavioural channel/die model per channel
that takes commands from m_ccmd[c] (random backpressure), keeps each die busy for a random time
(read < program < erase) and returns a completion (random status and ECC count) on the shared
s_ccpl stream; for a READ, with probability `p_rel`, first a release (s_ccpl_rel: the die is free
again, the READ's completion follows some cycles later, while the die may already run the next
command). A monitor records every port at every rising edge; `check_trace` then replays the
whole trace against the model and checks every beat exactly (dispatch choice and cycle, ready
signals, completions, BAD_REQ, err_spurious). The channel model also checks on its own that a
die never gets a second command before its completion was taken.

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (longer campaigns).
Testpoints: rtl/nand/testplan_sched.md.
"""
from __future__ import annotations

import heapq
import json
import os
import random
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.nand_sched_model import CCMD_FIELDS, ERASE, PROGRAM, READ, check_trace
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause
from atstb.streams import pause_gen as streams_pause_gen

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
# ATS_SCHED_TRACE=<dir>: every test writes its port trace (all ports, every edge) there: a cycle-exact
# reference for changes that must not move timing (e.g. an Fmax retiming); compare two runs with diff
TRACE_DIR = os.environ.get("ATS_SCHED_TRACE")
_trace_n = 0
HERE = Path(__file__).resolve().parent
NREQ_FIELDS = ["tag", "op", "chan", "way", "block", "page", "head", "prio_read", "slot"]
CCPL_FIELDS = ["tag", "status", "corrected", "rel"]
NCPL_FIELDS = ["tag", "status", "corrected"]
FIELD_W = {"tag": 8, "op": 2, "way": 2, "block": 12, "page": 8}


def pause_gen(rng, kind, p=0.3):
    return streams_pause_gen(rng, kind, p, max_stall=60)   # longer stalls: fill the table, hold dies busy


class TB:
    def __init__(self, dut, seed: int, idle=False, backpressure=False, lat_scale: float = 1.0,
                 ccpl_idle=None):
        self.dut = dut
        self.rng = random.Random(seed)
        self.nch = int(dut.NUM_CHAN.value)
        self.nways = int(dut.NUM_WAYS.value)
        self.depth = int(dut.DEPTH.value)
        self.slot_w = int(dut.SLOT_W.value)
        self.stamp_w = int(dut.STAMP_W.value)
        self.lat_scale = lat_scale
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.reads_first.value = 0
        dut.m_ccmd_ready.value = 0
        self.nreq = StreamSource(dut, "s_nreq", dut.clk, NREQ_FIELDS, pause_gen(self.rng, idle))
        self.ccpl = StreamSource(dut, "s_ccpl", dut.clk, CCPL_FIELDS,
                                 pause_gen(self.rng, idle if ccpl_idle is None else ccpl_idle))
        self.ncpl = StreamSink(dut, "m_ncpl", dut.clk, NCPL_FIELDS, pause_gen(self.rng, backpressure))
        self.cmd_pause = [pause_gen(self.rng, backpressure) or iter(lambda: False, None)
                          for _ in range(self.nch)]
        self.trace: list[dict] = []
        self.recording = False
        self.inflight: dict[tuple, int] = {}       # channel model: (chan, way) -> tag
        self.pending: list = []                    # heap of (due cycle, n, completion fields)
        self.cycle = 0
        self.ncpl_count = 0                        # m_ncpl beats taken (one per accepted request)
        self.commands = 0
        self.rf_mode = "off"                       # reads_first: "off", "on", "random"
        self.hold: set[int] = set()                # channels whose m_ccmd_ready is held low
        self.ccpl.on_accept = self._ccpl_accepted
        self.extra_ccpl: list[dict] = []           # spurious completions to inject
        self.p_rel = 0.5                           # a READ releases its die before completing
        self.released: set[int] = set()            # channel model: released, completion not sent

    def _ccpl_accepted(self, item, cycle):
        if item.get("_spurious"):
            return
        if not item.get("rel") and item["tag"] in self.released:   # completion of a released READ
            self.released.discard(item["tag"])
            return
        key = item["_die"]
        assert self.inflight.get(key) == item["tag"], f"channel model: completion of {item} for a die not holding it"
        del self.inflight[key]
        if item.get("rel"):
            self.released.add(item["tag"])

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.recording = True
        cocotb.start_soon(self._monitor_and_channels())

    def latency(self, op: int) -> int:
        lo, hi = {READ: (3, 40), PROGRAM: (20, 150), ERASE: (60, 400)}.get(op, (3, 40))
        return max(1, int(self.rng.randint(lo, hi) * self.lat_scale))

    async def _monitor_and_channels(self):
        """Every edge: record all ports (pre-edge values), act as the channel models."""
        d = self.dut
        ready = [0] * self.nch
        n = 0
        while True:
            await RisingEdge(d.clk)
            self.cycle += 1
            cv = int(d.m_ccmd_valid.value)
            cr = int(d.m_ccmd_ready.value)
            vals = {f: int(getattr(d, f"m_ccmd_{f}").value) for f in CCMD_FIELDS}
            widths = dict(FIELD_W, slot=self.slot_w)
            ccmd = []
            for c in range(self.nch):
                if (cv >> c) & 1:
                    ccmd.append({f: (vals[f] >> (c * widths[f])) & ((1 << widths[f]) - 1)
                                 for f in CCMD_FIELDS})
                else:
                    ccmd.append(None)
            s = {
                "ccmd": ccmd,
                "ccmd_ready": [(cr >> c) & 1 for c in range(self.nch)],
                "nreq": ({f: int(getattr(d, f"s_nreq_{f}").value) for f in NREQ_FIELDS}
                         if int(d.s_nreq_valid.value) else None),
                "nreq_ready": int(d.s_nreq_ready.value),
                "ccpl": ((int(d.s_ccpl_tag.value), int(d.s_ccpl_status.value),
                          int(d.s_ccpl_corrected.value), int(d.s_ccpl_rel.value))
                         if int(d.s_ccpl_valid.value) else None),
                "ccpl_ready": int(d.s_ccpl_ready.value),
                "ncpl": ((int(d.m_ncpl_tag.value), int(d.m_ncpl_status.value),
                          int(d.m_ncpl_corrected.value)) if int(d.m_ncpl_valid.value) else None),
                "ncpl_ready": int(d.m_ncpl_ready.value),
                "reads_first": int(d.reads_first.value),
                "spur": int(d.err_spurious.value),
                "rst": int(d.rst.value),
            }
            if self.recording:
                self.trace.append(s)
            if s["ncpl"] is not None and s["ncpl_ready"]:
                self.ncpl_count += 1
            # channel models: take commands, schedule completions
            for c in range(self.nch):
                if ccmd[c] is not None and (cr >> c) & 1:
                    cmd = ccmd[c]
                    key = (c, cmd["way"])
                    assert key not in self.inflight, \
                        f"cycle {self.cycle}: die {key} got tag {cmd['tag']} while tag {self.inflight[key]} is in flight"
                    self.inflight[key] = cmd["tag"]
                    self.commands += 1
                    status = self.rng.choice([0] * 6 + [1, 2, 3]) if cmd["op"] != READ else \
                        self.rng.choice([0] * 8 + [3])
                    corr = self.rng.randrange(256) if cmd["op"] == READ else 0
                    n += 1
                    due = self.cycle + self.latency(cmd["op"])
                    if cmd["op"] == READ and self.rng.random() < self.p_rel:
                        # release first; the completion some cycles later (queued behind it)
                        heapq.heappush(self.pending, (due, n, {"tag": cmd["tag"], "status": 0,
                                                               "corrected": 0, "rel": 1, "_die": key}))
                        n += 1
                        due += self.rng.randint(1, 60)
                    heapq.heappush(self.pending, (due, n,
                                                  {"tag": cmd["tag"], "status": status,
                                                   "corrected": corr, "rel": 0, "_die": key}))
            while self.pending and self.pending[0][0] <= self.cycle:
                self.ccpl.send_nowait(**heapq.heappop(self.pending)[2])
            while self.extra_ccpl:
                self.ccpl.send_nowait(**self.extra_ccpl.pop(0))
            for c in range(self.nch):
                ready[c] = 0 if (next(self.cmd_pause[c]) or c in self.hold) else 1
            d.m_ccmd_ready.value = sum(b << c for c, b in enumerate(ready))
            if self.rf_mode == "random":
                if self.rng.random() < 0.01:
                    d.reads_first.value = 1 - int(d.reads_first.value)
            else:
                d.reads_first.value = int(self.rf_mode == "on")

    def rand_req(self, tag: int, p_bad: float = 0.0, p_head: float = 0.1, p_prio: float = 0.4,
                 ways_hot=None) -> dict:
        rng = self.rng
        op = rng.choice([READ, READ, PROGRAM, PROGRAM, ERASE])
        chan = rng.randrange(self.nch)
        way = rng.randrange(self.nways) if ways_hot is None else rng.choice(ways_hot)
        if rng.random() < p_bad:
            kind = rng.choice(["op", "chan", "way"])
            if kind == "op":
                op = 3
            elif kind == "chan" and self.nch < 8:
                chan = rng.randrange(self.nch, 8)
            elif kind == "way" and self.nways < 4:
                way = rng.randrange(self.nways, 4)
            else:
                op = 3
        return {"tag": tag, "op": op, "chan": chan, "way": way, "block": rng.randrange(4096),
                "page": rng.randrange(256), "head": int(rng.random() < p_head),
                "prio_read": int(rng.random() < p_prio), "slot": rng.randrange(1 << self.slot_w)}

    async def drain(self, timeout: int = 300_000):
        """Wait until every request was accepted and answered on m_ncpl (one beat each), and the
        channel models are idle; a hang fails here."""
        for _ in range(timeout):
            await RisingEdge(self.dut.clk)
            if (not self.nreq.queue and not self.nreq._driving and self.ncpl_count == self.nreq.sent
                    and not self.inflight and not self.released and not self.pending and not self.ccpl.queue
                    and not self.ccpl._driving):
                break
        else:
            raise TimeoutError(f"no drain: {self.nreq.sent} requests accepted, {self.ncpl_count} "
                               f"completions, channel dies busy {self.inflight}")
        for _ in range(5):
            await RisingEdge(self.dut.clk)

    def check(self, min_cov: dict | None = None):
        self.recording = False
        if TRACE_DIR:   # ATS_SCHED_TRACE=<dir>: the recorded port trace, one JSON line per edge
            global _trace_n
            _trace_n += 1
            with open(Path(TRACE_DIR) / f"sched_{self.nch}x{self.nways}_d{self.depth}_{_trace_n:02d}.jsonl", "w") as f:
                f.writelines(json.dumps(s, sort_keys=True) + "\n" for s in self.trace)
        errs, cov, log = check_trace(self.trace, self.nch, self.nways, self.depth,
                                     stamp_w=self.stamp_w)
        self.dut._log.info("edges %d, commands %d, coverage %s", len(self.trace), self.commands,
                           dict(sorted(cov.items())))
        assert not errs, "trace mismatches:\n  " + "\n  ".join(errs)
        # every accepted request got exactly one completion
        good = sum(1 for r in log if r["bad"] is None)
        bad = sum(1 for r in log if r["bad"] is not None)
        assert cov["ncpl_real"] == good, f"{good} good requests, {cov['ncpl_real']} completions"
        assert cov["ncpl_bad_req"] == bad, f"{bad} bad requests, {cov['ncpl_bad_req']} BAD_REQ"
        for k, v in (min_cov or {}).items():
            assert cov[k] >= v, f"coverage {k} = {cov[k]} < {v}"
        return cov, log


async def random_traffic(tb: TB, n: int, p_bad: float, p_dup: float, p_head: float = 0.1,
                         gap_every: int = 0):
    """Send n requests; tags come from a free pool (freed when their completion leaves m_ncpl);
    with probability p_dup a request reuses an outstanding tag (must get BAD_REQ)."""
    rng = tb.rng
    free = list(range(256))
    rng.shuffle(free)
    busy: set[int] = set()
    sent = 0
    while sent < n:
        while tb.ncpl.queue:
            b = tb.ncpl.queue.popleft()
            if b["status"] != 4 and b["tag"] in busy:
                busy.discard(b["tag"])
                free.append(b["tag"])
        if len(tb.nreq.queue) < 4:
            if busy and rng.random() < p_dup:
                tb.nreq.send_nowait(**tb.rand_req(rng.choice(sorted(busy))))
                sent += 1
            elif free:
                tag = free.pop(rng.randrange(len(free)))
                req = tb.rand_req(tag, p_bad=p_bad, p_head=p_head)
                bad_shape = req["op"] == 3 or req["chan"] >= tb.nch or req["way"] >= tb.nways
                if bad_shape:
                    free.append(tag)
                else:
                    busy.add(tag)
                tb.nreq.send_nowait(**req)
                sent += 1
            if gap_every and sent % gap_every == 0:
                for _ in range(rng.randint(50, 400)):
                    await RisingEdge(tb.dut.clk)
        await RisingEdge(tb.dut.clk)
    await tb.drain()


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True, "heavy"])
async def run_random_mix(dut, idle, backpressure):
    """Random reads/programs/erases on every die, random HEAD/prio_read, reads_first toggling,
    a few bad requests and duplicate tags, random channel latencies."""
    seed = int(os.environ.get("ATS_SEED", "1")) * 7919 + (1 if idle else 0) * 3 + \
        {False: 0, True: 1, "heavy": 2}[backpressure]
    tb = TB(dut, seed, idle=idle, backpressure=backpressure, lat_scale=0.5)
    tb.rf_mode = "random"
    await tb.reset()
    n = (1500 if LONG else 300) * (2 if tb.nch * tb.nways <= 4 else 1)
    await random_traffic(tb, n, p_bad=0.03, p_dup=0.03, gap_every=97)
    cov, _ = tb.check(min_cov={"dispatch": n // 2, "head_overtakes_same_die": 1, "release": 10,
                               "released_completion": 10})
    if tb.stamp_w <= 8:   # the arrival stamps wrapped at least once during the checked trace
        accepted = sum(v for k, v in cov.items() if k.startswith("accept_"))
        assert accepted > (1 << tb.stamp_w), f"{accepted} requests: the stamps did not wrap"
    dut._log.info("widest arrival gap between compared fronts: %d", cov["stamp_max_gap"])


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True])
async def run_hot_dies(dut, backpressure):
    """Most requests on two ways, slow channels: long per-die queues, a full table, HEAD
    requests overtaking queued same-die requests, priority reads overtaking programs."""
    seed = int(os.environ.get("ATS_SEED", "1")) * 104729 + int(bool(backpressure))
    tb = TB(dut, seed, idle=False, backpressure=backpressure, lat_scale=2.0)
    tb.rf_mode = "off"
    await tb.reset()
    rng = tb.rng
    n = 600 if LONG else 160
    tags = list(range(256))
    rng.shuffle(tags)
    for i in range(n):
        req = tb.rand_req(tags[i % 256], p_head=0.15, p_prio=0.5,
                          ways_hot=[0, tb.nways - 1])
        tb.nreq.send_nowait(**req)
        if i % 200 == 199:   # tags are reused: wait until the first ones completed
            await tb.nreq.wait_idle()
            for _ in range(6000):
                await RisingEdge(dut.clk)
    await tb.nreq.wait_idle()
    await tb.drain()
    for _ in range(50):
        await RisingEdge(dut.clk)
    tb.check(min_cov={"table_full_cycles": 1, "head_overtakes_same_die": 1})


@cocotb.test()
async def run_reads_first(dut):
    """reads_first held high, then low: reads (without prio_read) overtake queued programs and
    erases to other dies only while it is high."""
    tb = TB(dut, int(os.environ.get("ATS_SEED", "1")) * 31 + 5, backpressure="heavy", lat_scale=1.0)
    await tb.reset()
    for phase in ("on", "off"):
        tb.rf_mode = phase
        base = 0 if phase == "on" else 128
        for i in range(120):
            req = tb.rand_req(base + i, p_head=0.0, p_prio=0.0)
            tb.nreq.send_nowait(**req)
        await tb.nreq.wait_idle()
        await tb.drain()
    for _ in range(20):
        await RisingEdge(dut.clk)
    tb.check()   # (the rule is pinned by run_priority_directed; here: random phases)


@cocotb.test()
@cocotb.parametrize(mode=["prio_read", "reads_first", "none", "head"])
async def run_priority_directed(dut, mode):
    """Per channel, with its command port blocked (one command held): an older program to way 1,
    an erase to way 2.., a read to the last way (prio_read, or reads_first, or neither, or a HEAD
    program), then the port opens: the model fixes which goes first, the trace check compares."""
    tb = TB(dut, int(os.environ.get("ATS_SEED", "1")) * 11 + 3, lat_scale=1.0)
    await tb.reset()
    tb.rf_mode = "on" if mode == "reads_first" else "off"
    base = {"block": 7, "page": 9, "slot": 1}
    for rnd in range(2):
        tb.hold = set(range(tb.nch))
        tag = rnd * 100
        for c in range(tb.nch):
            tb.nreq.send_nowait(tag=tag, op=PROGRAM, chan=c, way=0, head=0, prio_read=0, **base)
            tag += 1
            for w in range(1, tb.nways - 1):
                tb.nreq.send_nowait(tag=tag, op=PROGRAM if w % 2 else ERASE, chan=c, way=w, head=0,
                                    prio_read=0, **base)
                tag += 1
            if tb.nways > 1:
                last = {"op": PROGRAM if mode == "head" else READ, "head": int(mode == "head"),
                        "prio_read": int(mode == "prio_read")}
                tb.nreq.send_nowait(tag=tag, chan=c, way=tb.nways - 1, **last, **base)
                tag += 1
        await tb.nreq.wait_idle()
        for _ in range(10):
            await RisingEdge(dut.clk)
        tb.hold = set()
        await tb.drain()
    want = {"prio_read": "read_overtakes_program_erase", "reads_first": "read_overtakes_program_erase_rf",
            "head": "head_overtakes_other_die"}.get(mode)
    cov, _ = tb.check(min_cov={want: 2 * tb.nch} if (want and tb.nways >= 3) else {})
    if mode == "none":
        assert not any(k.startswith("read_overtakes") for k in cov), cov


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True])
async def run_errors(dut, backpressure):
    """Every error case: duplicate tag (queued, in flight, and in the cycle its completion
    leaves), unknown op, channel and way out of range, back-to-back bad requests, and a
    completion whose tag is in flight nowhere (dropped, err_spurious)."""
    tb = TB(dut, int(os.environ.get("ATS_SEED", "1")) * 17 + int(backpressure),
            backpressure=backpressure, lat_scale=3.0)
    await tb.reset()
    base = {"block": 1, "page": 2, "head": 0, "prio_read": 0, "slot": 0}
    # good requests, then duplicates of them while they are queued / in flight
    for t in range(4):
        tb.nreq.send_nowait(tag=t, op=PROGRAM, chan=0, way=0, **base)
    for t in range(4):
        tb.nreq.send_nowait(tag=t, op=READ, chan=tb.nch - 1, way=tb.nways - 1, **base)
    # unknown op, back to back
    for t in range(10, 14):
        tb.nreq.send_nowait(tag=t, op=3, chan=0, way=0, **base)
    # channel / way out of range (where the parameters leave room)
    for ch in range(tb.nch, 8):
        tb.nreq.send_nowait(tag=20 + ch, op=READ, chan=ch, way=0, **base)
    for w in range(tb.nways, 4):
        tb.nreq.send_nowait(tag=30 + w, op=ERASE, chan=0, way=w, **base)
    # a bad request does not take the tag: the same tag then works
    tb.nreq.send_nowait(tag=10, op=READ, chan=0, way=0, **base)
    await tb.nreq.wait_idle()
    for _ in range(200):
        await RisingEdge(dut.clk)
    # spurious completions: a tag never sent, and tag 10 again after it completed
    for _ in range(3000):
        await RisingEdge(dut.clk)
        if not tb.inflight and not tb.pending and not tb.ccpl.queue and not int(dut.s_ccpl_valid.value):
            break
    tb.extra_ccpl += [{"tag": 200, "status": 0, "corrected": 0, "rel": 0, "_spurious": 1},
                      {"tag": 10, "status": 1, "corrected": 5, "rel": 0, "_spurious": 1},
                      {"tag": 201, "status": 0, "corrected": 0, "rel": 1, "_spurious": 1}]
    await tb.drain()
    # a READ that releases its die: a second release and a second completion of its tag are
    # spurious (the first completion unreleased the tag)
    tb.p_rel = 1.0
    tb.nreq.send_nowait(tag=60, op=READ, chan=0, way=0, **base)
    tb.nreq.send_nowait(tag=61, op=READ, chan=0, way=0, **base)   # (a second release for sure: the
    await tb.drain()                                                # random ones above may all miss)
    tb.extra_ccpl += [{"tag": 60, "status": 0, "corrected": 1, "rel": 0, "_spurious": 1},
                      {"tag": 60, "status": 0, "corrected": 0, "rel": 1, "_spurious": 1}]
    tb.p_rel = 0.5
    # duplicate sent in a loop while its original completes: races the m_ncpl handshake
    await tb.drain()
    tb.nreq.send_nowait(tag=50, op=READ, chan=0, way=0, **base)
    for _ in range(60):
        tb.nreq.send_nowait(tag=50, op=READ, chan=0, way=0, **base)
    await tb.drain()
    cov, log = tb.check(min_cov={"bad_dup_tag": 5, "bad_bad_op": 4, "spurious_completion": 3,
                                 "spurious_release": 2, "release": 2, "released_completion": 2})
    if tb.nch < 8:
        assert cov["bad_bad_chan"] == 8 - tb.nch
    if tb.nways < 4:
        assert cov["bad_bad_way"] == 4 - tb.nways
    if backpressure:   # m_ncpl held: several BAD_REQs wait at once (the queue fills up)
        assert cov["bad_req_queue_2"] >= 1, cov


@cocotb.test()
async def run_reset_midway(dut):
    """Reset with requests queued and in flight: afterwards the scheduler is empty and works."""
    tb = TB(dut, int(os.environ.get("ATS_SEED", "1")) * 13 + 1, lat_scale=1.0)
    await tb.reset()
    for i in range(40):
        tb.nreq.send_nowait(**tb.rand_req(i))
    for _ in range(60):
        await RisingEdge(dut.clk)
    tb.recording = False
    tb.nreq.flush()
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
        tb.ccpl.flush()
        tb.pending.clear()
        tb.inflight.clear()
        tb.released.clear()
    tb.ncpl.queue.clear()
    tb.trace.clear()
    tb.nreq.sent = 0
    tb.ncpl_count = 0
    dut.rst.value = 0
    tb.recording = True
    await RisingEdge(dut.clk)
    for i in range(60):
        tb.nreq.send_nowait(**tb.rand_req(100 + i, p_bad=0.05))
    await tb.nreq.wait_idle()
    await tb.drain()
    for _ in range(20):
        await RisingEdge(dut.clk)
    tb.check()


# (num_chan, num_ways, depth, stamp_w): the small configuration uses 8-bit arrival stamps, so
# its runs wrap the stamp counter several times (run_random_mix: 600 requests per variant)
CONFIGS = [(2, 2, 8, 8), (3, 3, 12, 16), (8, 4, 32, 16)]


# "synth": the RTL's synthesis form (`ATS_SYNTH_FORM`, what Yosys builds) on the first configuration;
# the other items run the simulation form (the default of a simulator build, rtl/nand/README_sched.md),
# the default configuration's ("gated") with the simulation-only clock gate on (`ATS_SIM_CGATE`: every
# register but the slot counter stops while the scheduler is settled; README_sched.md "Simulation
# cost"), so the model checks the gated block cycle by cycle too
FORMS = {"sim": [], "synth": ["+define+ATS_SYNTH_FORM"], "gated": ["+define+ATS_SIM_CGATE"]}


@pytest.mark.parametrize("nch,nways,depth,stamp_w,form",
                         [CONFIGS[0] + ("sim",), CONFIGS[1] + ("sim",), CONFIGS[2] + ("gated",),
                          CONFIGS[0] + ("synth",)])
def test_ats_nand_sched(nch, nways, depth, stamp_w, form):
    run(toplevel="ats_nand_sched", sources=block_sources("ats_nand_sched", "ats_stream_check") + [HERE / "ats_nand_sched_bind.sv"],
        test_module="test_ats_nand_sched", test_dir=HERE, public={},   # the tests read only the top's signals
        build_key=f"c{nch}_w{nways}_d{depth}_s{stamp_w}" + ("" if form == "sim" else f"_{form}form"),
        build_args=FORMS[form] or None,
        parameters={"NUM_CHAN": nch, "NUM_WAYS": nways, "DEPTH": depth, "STAMP_W": stamp_w},
        extra_env={"ATS_LONG": "1" if LONG else "0",
                   **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                      if os.environ.get("ATS_TEST_FILTER") else {})})
