"""cocotb tests of ats_cmdq (ordered command queue), against the independent reference model
`atstb.cmdq_model` written from rtl/cmdq/README.md.

Drivers: s_cmd and s_done with the library's StreamSource (random idle where parametrised), m_disp
and m_cpl ready driven with random backpressure. A behavioural execution unit takes every command
accepted on m_disp and reports it done after a random delay (so out of order), with a random status
and result. A monitor records every port at every rising edge; `check_trace` replays the trace
against the model and checks every output exactly (which command is dispatched and when, payload and
epoch, completions and their order, s_cmd_ready/s_done_ready, occupancy, epoch, err_spurious).

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (longer campaigns), ATS_TEST_FILTER
(cocotb test name regex), ATS_WAVES (FST path), ATS_DUMP (pickle of a failing trace for offline
replay), ATS_CMDQ_SRC (another copy of ats_cmdq.sv, for mutation checks).
Testpoints: rtl/cmdq/testplan.md.
"""
from __future__ import annotations

import heapq
import os
import random
import sys
from collections import Counter
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb import cmdq_model as M
from atstb.runner import block_sources, run
from atstb.streams import StreamSource, never_pause
from atstb.streams import pause_gen as streams_pause_gen

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
DONE_FIELDS = ["tag", "status", "result"]
SPUR_TAGS = range(240, 256)          # never used by commands: dones with these tags are spurious


def pause_gen(rng, kind, p=0.3):
    return streams_pause_gen(rng, kind, p, max_stall=40) or never_pause()


class TB:
    def __init__(self, dut, seed: int, idle=False, backpressure=False, unit_delay=(1, 30)):
        self.dut = dut
        self.rng = random.Random(seed)
        self.depth = int(dut.DEPTH.value)
        self.num_lba = int(dut.NUM_LBA.value)
        self.num_tx = int(dut.NUM_TX.value)
        self.unit_delay = unit_delay
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.m_disp_ready.value = 0
        dut.m_cpl_ready.value = 0
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, M.CMD_FIELDS, pause_gen(self.rng, idle))
        self.done = StreamSource(dut, "s_done", dut.clk, DONE_FIELDS, pause_gen(self.rng, idle))
        self.disp_pause = pause_gen(self.rng, backpressure)
        self.cpl_pause = pause_gen(self.rng, backpressure)
        self.hold_disp = False                 # unit refuses every command (fills the table)
        self.p_double = 0.0                    # unit reports a done twice in a row (2nd is spurious)
        self.trace: list[dict] = []
        self.recording = False
        self.outstanding = Counter()           # tag -> commands sent, completion not yet seen
        self.sent = 0
        self.cpls = 0
        self.pending: list = []                # heap (due cycle, n, done fields)
        self.inflight: set[int] = set()        # tags held by the unit
        self.cycle = 0
        self.n = 0
        self.segments: list[list[dict]] = []   # traces cut by mid-traffic resets
        self._mon = None
        self.unit_errors: list[str] = []

    async def reset(self, cycles: int = 3):
        self.dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.recording = True
        if self._mon is None:
            self._mon = cocotb.start_soon(self._monitor())

    async def reset_mid_traffic(self):
        """Assert rst with traffic in flight: the queue, drivers and unit all start over."""
        self.recording = False
        self.segments.append(self.trace)
        self.trace = []
        self.cmd.flush()
        self.done.flush()
        self.pending.clear()
        self.inflight.clear()
        self.outstanding.clear()
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.sent = self.cpls = 0
        self.recording = True

    async def _monitor(self):
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            self.cycle += 1
            s = {
                "cmd": ({f: int(getattr(d, f"s_cmd_{f}").value) for f in M.CMD_FIELDS}
                        if int(d.s_cmd_valid.value) else None),
                "cmd_ready": int(d.s_cmd_ready.value),
                "disp": ({f: int(getattr(d, f"m_disp_{f}").value) for f in M.DISP_FIELDS}
                         if int(d.m_disp_valid.value) else None),
                "disp_ready": int(d.m_disp_ready.value),
                "done": ((int(d.s_done_tag.value), int(d.s_done_status.value), int(d.s_done_result.value))
                         if int(d.s_done_valid.value) else None),
                "done_ready": int(d.s_done_ready.value),
                "cpl": ((int(d.m_cpl_tag.value), int(d.m_cpl_status.value), int(d.m_cpl_result.value))
                        if int(d.m_cpl_valid.value) else None),
                "cpl_ready": int(d.m_cpl_ready.value),
                "epoch": int(d.epoch.value),
                "occ": int(d.occupancy.value),
                "spur": int(d.err_spurious.value),
            }
            if int(d.rst.value) or not self.recording:
                continue
            self.trace.append(s)
            if s["cpl"] is not None and s["cpl_ready"]:
                self.outstanding[s["cpl"][0]] -= 1
                self.cpls += 1
            # the execution unit: take a command, report it done later
            if s["disp"] is not None and s["disp_ready"]:
                tag = s["disp"]["tag"]
                if tag in self.inflight:
                    self.unit_errors.append(f"cycle {self.cycle}: tag {tag} dispatched twice while in service")
                self.inflight.add(tag)
                status = self.rng.choice([0] * 8 + [0x10, 0x11])
                result = self.rng.randrange(0xCE000000)
                self.n += 1
                heapq.heappush(self.pending, (self.cycle + self.rng.randint(*self.unit_delay), self.n,
                                              {"tag": tag, "status": status, "result": result}))
            while self.pending and self.pending[0][0] <= self.cycle:
                item = heapq.heappop(self.pending)[2]
                self.inflight.discard(item["tag"])
                self.done.send_nowait(**item)
                if self.p_double and self.rng.random() < self.p_double:
                    self.done.send_nowait(**item)
            d.m_disp_ready.value = 0 if (self.hold_disp or next(self.disp_pause)) else 1
            d.m_cpl_ready.value = 0 if next(self.cpl_pause) else 1

    # -- stimulus ------------------------------------------------------------------------------
    def free_tag(self, ntags: int = 64):
        free = [t for t in range(ntags) if self.outstanding[t] == 0]
        return self.rng.choice(free) if free else None

    def rand_cmd(self, tag: int, p_bad: float = 0.1, attrs=(70, 15, 15), lba_span: int = 48,
                 p_barrier: float = 0.15) -> dict:
        rng = self.rng
        op = rng.choices(range(12), weights=[25, 25, 8, 4, 4, 3, 5, 4, 6, 2, 2, 2])[0]   # 0 .. OP_LAST (FEATURE)
        attr = rng.choices([M.SIMPLE, M.ORDERED, M.HEAD], weights=attrs)[0]
        txid = 0
        if op in M.TX_OPS or op == M.DIFFWRITE or (op in (M.READ, M.WRITE) and rng.random() < 0.3):
            txid = rng.randint(1, min(4, self.num_tx))
        flags = 0
        if op == M.WRITE:
            flags = (M.FUA if rng.random() < 0.2 else 0) | (M.BARRIER if rng.random() < p_barrier else 0)
            if txid and rng.random() < 0.2:
                flags |= M.COMMIT
        elif op == M.DIFFWRITE and rng.random() < 0.2:
            flags = M.FUA
        span = min(lba_span, self.num_lba)
        lba = rng.randrange(span)
        nlb = rng.choice([0, 0, 0, 1, 2, 3, 7])
        if lba + nlb >= self.num_lba:
            nlb = self.num_lba - 1 - lba
        if op == M.RFLUSH:
            nlb = rng.randint(0, 7)
        aux = rng.getrandbits(32)
        if op == M.DIFFWRITE:
            length = rng.randint(1, 4096)
            aux = (length << 16) | rng.randint(0, 4096 - length)
        c = {"op": op, "tag": tag, "lba": lba, "nlb": nlb, "txid": txid, "flags": flags, "attr": attr,
             "prio": rng.randrange(4), "dptr": rng.getrandbits(32), "aux": aux}
        if rng.random() < p_bad:
            self.make_bad(c, rng.choice(["op", "attr", "rsvd", "flag", "txid", "txid0", "lba", "diff",
                                         "rflush"]))
        return c

    def make_bad(self, c: dict, kind: str) -> None:
        rng = self.rng
        if kind == "op":
            c["op"] = rng.randint(12, 15)
        elif kind == "attr":
            c["attr"] = 3
        elif kind == "rsvd":
            c["flags"] |= 8
        elif kind == "flag":
            c["op"] = rng.choice([M.READ, M.DIFFWRITE, M.TX_COMMIT, M.FLUSH, M.TRIM, M.IDENTIFY])
            c["flags"] = rng.choice([M.BARRIER, M.COMMIT, M.BARRIER | M.COMMIT] +
                                    ([] if c["op"] == M.DIFFWRITE else [M.FUA]))
        elif kind == "txid":
            c["txid"] = rng.randint(self.num_tx + 1, 63)
        elif kind == "txid0":
            c["op"] = rng.choice([M.TX_BEGIN, M.TX_COMMIT, M.TX_ABORT, M.DIFFWRITE, M.WRITE])
            c["txid"] = 0
            c["flags"] = M.COMMIT if c["op"] == M.WRITE else 0
            if c["op"] == M.DIFFWRITE:
                c["aux"] = (16 << 16) | 0
        elif kind == "lba":
            c["op"] = rng.choice([M.READ, M.WRITE, M.DIFFWRITE, M.TRIM])
            c["flags"] = 0
            if c["op"] == M.DIFFWRITE:
                c["txid"] = max(1, c["txid"])
                c["aux"] = (16 << 16) | 0
            c["lba"], c["nlb"] = rng.choice([
                (self.num_lba - 1, 1), (self.num_lba, 0), (rng.getrandbits(48), rng.getrandbits(16)),
                ((1 << 48) - 1, 0xFFFF), (self.num_lba - 1 - 5, 6)])
        elif kind == "diff":
            c["op"], c["flags"], c["txid"] = M.DIFFWRITE, 0, max(1, c["txid"])
            c["lba"], c["nlb"] = 0, 0
            c["aux"] = rng.choice([0, 0x0001_0FFF + (1 << 16), (4096 << 16) | 1, (1 << 16) | 4096,
                                   0xFFFF_FFFF])
        elif kind == "rflush":
            c["op"], c["flags"], c["nlb"] = M.RFLUSH, 0, rng.randint(8, 0xFFFF)

    async def send(self, c: dict):
        self.outstanding[c["tag"]] += 1
        self.sent += 1
        self.cmd.send_nowait(**c)

    async def run_random(self, n: int, p_bad=0.1, attrs=(70, 15, 15), p_dup=0.02, p_spur=0.0,
                         ntags=64, lba_span=48, p_barrier=0.15):
        for _ in range(n):
            waited = 0
            while len(self.cmd.queue) > 4:
                await RisingEdge(self.dut.clk)
                waited += 1
                if waited > 20_000:
                    self.check()
                    raise TimeoutError("s_cmd stuck")
            if self.rng.random() < p_dup and any(self.outstanding[t] > 0 for t in range(ntags)):
                tag = self.rng.choice([t for t in range(ntags) if self.outstanding[t] > 0])
            else:
                tag = self.free_tag(ntags)
                while tag is None:
                    await RisingEdge(self.dut.clk)
                    tag = self.free_tag(ntags)
                    waited += 1
                    if waited > 20_000:
                        self.check()
                        raise TimeoutError("no tag comes back")
            await self.send(self.rand_cmd(tag, p_bad, attrs, lba_span, p_barrier))
            if p_spur and self.rng.random() < p_spur:
                self.done.send_nowait(tag=self.rng.choice(SPUR_TAGS), status=0,
                                      result=self.rng.randrange(0xCE000000))

    async def wait_sent(self, timeout: int = 100_000):
        for _ in range(timeout):
            if not self.cmd.queue and not self.cmd._driving:
                return
            await RisingEdge(self.dut.clk)
        raise TimeoutError(f"s_cmd stuck: {len(self.cmd.queue)} commands not accepted")

    async def drain(self, timeout: int = 50_000):
        """Wait until every command sent has its completion and everything is idle (hang = fail)."""
        for _ in range(timeout):
            await RisingEdge(self.dut.clk)
            if (not self.cmd.queue and not self.cmd._driving and self.cpls == self.sent
                    and not self.pending and not self.done.queue and not self.done._driving):
                break
        else:
            self.check()                       # a model mismatch explains a hang best
            raise TimeoutError(f"no drain: sent {self.sent}, completions {self.cpls}, "
                               f"unit holds {sorted(self.inflight)}")
        for _ in range(8):
            await RisingEdge(self.dut.clk)
        assert int(self.dut.occupancy.value) == 0, "table not empty after drain"

    def check(self, min_cov: dict | None = None) -> Counter:
        cov = Counter()
        for tr in self.segments + [self.trace]:
            errors, c, dispatched, _ = M.check_trace(tr, self.depth, self.num_lba, self.num_tx)
            if errors and os.environ.get("ATS_DUMP"):
                import pickle
                with open(os.environ["ATS_DUMP"], "wb") as f:
                    pickle.dump((tr, self.depth, self.num_lba, self.num_tx), f)
            assert not errors, "model mismatch:\n" + "\n".join(errors)
            inv = M.check_invariants(tr)
            assert not inv, "invariant violated:\n" + "\n".join(inv)
            c["dispatched"] += len(dispatched)
            cov.update(c)
        self.dut._log.info(f"coverage: {dict(sorted(cov.items()))}")
        assert not self.unit_errors, "execution unit saw: " + "; ".join(self.unit_errors[:5])
        for k, v in (min_cov or {}).items():
            assert cov[k] >= v, f"coverage {k} = {cov[k]} < {v}"
        return cov


def _seed():
    return int(os.environ.get("ATS_SEED", "1")) * 7919


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True])
async def run_random_mix(dut, idle, backpressure):
    """Every op, attribute, prio, flag; overlapping LBAs; 10 % bad descriptors, some duplicate tags."""
    tb = TB(dut, _seed() + 2 * int(idle) + int(backpressure), idle, backpressure)
    await tb.reset()
    await tb.run_random(2000 if LONG else 350)
    await tb.drain()
    tb.check({"accepted": 100, "disp_attr0": 30, "disp_attr1": 10, "disp_attr2": 10, "barrier": 3,
              "overtook": 5, "pick_choice": 5})


@cocotb.test()
async def run_ordering_heavy(dut):
    """Mostly ORDERED and HEAD, a slow unit, a narrow LBA window (every rule and hazard fires)."""
    tb = TB(dut, _seed() + 11, True, True, unit_delay=(5, 80))
    await tb.reset()
    await tb.run_random(1200 if LONG else 250, p_bad=0.02, attrs=(40, 30, 30), lba_span=12)
    await tb.drain()
    tb.check({"disp_attr1": 40, "disp_attr2": 40, "overtook": 5})


@cocotb.test()
async def run_simple_reorder(dut):
    """SIMPLE only, slow unit, wide LBA range: priority classes and reads-first reorder freely."""
    tb = TB(dut, _seed() + 13, False, "heavy", unit_delay=(10, 120))
    await tb.reset()
    await tb.run_random(1200 if LONG else 300, p_bad=0.0, attrs=(100, 0, 0), lba_span=4000,
                        p_barrier=0.3)
    await tb.drain()
    tb.check({"overtook": 20, "pick_choice": 20, "barrier": 15})


@cocotb.test()
async def run_errors(dut):
    """Every rejection reason and its boundary, one command each (each completes, none dispatched)."""
    tb = TB(dut, _seed() + 17, False, False, unit_delay=(40, 120))  # slow unit: duplicates hit live tags
    await tb.reset()
    nl, nt = tb.num_lba, tb.num_tx
    good = dict(op=M.WRITE, lba=0, nlb=0, txid=0, flags=0, attr=0, prio=0, dptr=0x1000, aux=0)
    cases = [
        *[dict(good, op=o) for o in range(12, 16)],                        # BAD_OP
        dict(good, attr=3), dict(good, flags=8),                           # reserved fields
        dict(good, op=M.READ, flags=M.FUA), dict(good, op=M.TRIM, flags=M.BARRIER),
        dict(good, op=M.FLUSH, flags=M.COMMIT), dict(good, op=M.DIFFWRITE, txid=1, flags=M.BARRIER,
                                                     aux=(8 << 16)),       # flags not allowed
        dict(good, txid=nt), dict(good, txid=nt + 1), dict(good, txid=63),  # txid range (ok, bad, bad)
        dict(good, op=M.TX_BEGIN), dict(good, op=M.TX_COMMIT), dict(good, op=M.TX_ABORT),
        dict(good, op=M.DIFFWRITE, aux=(8 << 16)), dict(good, flags=M.COMMIT),   # txid 0 needed
        dict(good, op=M.TX_COMMIT, txid=2),                                 # fine
        dict(good, lba=nl - 1, nlb=0), dict(good, lba=nl - 1, nlb=1), dict(good, lba=nl, nlb=0),
        dict(good, op=M.READ, lba=0, nlb=min(nl - 1, 0xFFFF)), dict(good, op=M.TRIM, lba=(1 << 48) - 1,
                                                                    nlb=0xFFFF),
        dict(good, op=M.FLUSH, lba=(1 << 48) - 1, nlb=0xFFFF),              # no range: fine
        dict(good, op=M.DIFFWRITE, txid=1, aux=0), dict(good, op=M.DIFFWRITE, txid=1, aux=(4096 << 16)),
        dict(good, op=M.DIFFWRITE, txid=1, aux=(4096 << 16) | 1), dict(good, op=M.DIFFWRITE, txid=1,
                                                                        aux=(1 << 16) | 4095),
        dict(good, op=M.DIFFWRITE, txid=1, aux=(1 << 16) | 4096),
        dict(good, op=M.RFLUSH, nlb=7), dict(good, op=M.RFLUSH, nlb=8),
        dict(good, op=M.IDENTIFY), dict(good, op=M.GET_LOG, attr=M.HEAD),
        dict(good, op=M.FEATURE, lba=0xC0, nlb=1, aux=5),                 # OP_LAST: valid at the queue
        dict(good, op=M.TX_BEGIN, txid=0, attr=3),                          # first reason wins
        dict(good, op=13, attr=3, txid=63),
        dict(good, lba=nl, txid=nt + 1),                                    # txid range before LBA
        dict(good, op=M.DIFFWRITE, txid=1, lba=nl, aux=0),                  # LBA before DIFFWRITE length
    ]
    tag = 0
    for c in cases:
        await tb.send(dict(c, tag=tag))
        tag += 1
        if c["op"] == M.WRITE and c["attr"] == 0 and c["flags"] == 0 and c["txid"] == 0:
            await tb.send(dict(good, tag=tag - 1, op=M.READ))   # duplicate of a tag just sent
    # duplicates 2, 3 and 4 commands after the original, back to back: the original is then in
    # stage 3, just inserted, in the table (rule 9's three terms). Structural coverage: both
    # registered parts of the duplicate check (stages 2/3 and the per-group table match) must fire,
    # so a stall that moves every duplicate into the table cannot pass unnoticed.
    dup_hits = Counter()

    async def watch_dup():
        while True:
            await RisingEdge(dut.clk)
            dup_hits["stage"] += int(dut.s2_dupx_q.value)
            dup_hits["table"] += int(dut.s2_dupg_q.value) != 0

    watcher = cocotb.start_soon(watch_dup())
    for dist in (2, 3, 4):
        orig = tag
        tag += 1
        await tb.send(dict(good, tag=orig))
        for _ in range(dist - 1):
            await tb.send(dict(good, op=M.READ, lba=dist, tag=tag))
            tag += 1
        await tb.send(dict(good, op=M.READ, tag=orig))
    await tb.wait_sent()
    await tb.drain()
    watcher.cancel()
    dut._log.info(f"duplicate-check parts fired: {dict(dup_hits)}")
    assert dup_hits["stage"] >= 1 and dup_hits["table"] >= 1, f"duplicate terms not both hit: {dict(dup_hits)}"
    cov = tb.check({f"reject_{r}": 1 for r in range(1, 10)})
    assert cov["reject_9"] >= 1


@cocotb.test()
async def run_full_queue(dut):
    """The unit stalls: the table fills, s_cmd_ready drops (no drop, no hang), then drains."""
    tb = TB(dut, _seed() + 19, False, False)
    await tb.reset()
    for burst in range(4):
        tb.hold_disp = True
        for _ in range(3 * tb.depth):
            await tb.send(tb.rand_cmd(tb.free_tag(200), p_bad=0.05))
        for _ in range(150):
            await RisingEdge(dut.clk)
        assert int(dut.s_cmd_ready.value) == 0, "unit stalled, 3 x DEPTH commands sent, s_cmd_ready high"
        assert int(dut.occupancy.value) >= tb.depth - 3
        tb.hold_disp = False
        if burst % 2:
            await tb.drain()
        else:
            await tb.wait_sent()
    await tb.drain()
    tb.check({"table_full": 4, "cmd_backpressured": 100})


@cocotb.test()
async def run_spurious_done(dut):
    """Dones with tags not in service are dropped with err_spurious, the rest is unaffected."""
    tb = TB(dut, _seed() + 23, True, True)
    tb.p_double = 0.1                          # also: the same done twice (the entry is being freed)
    await tb.reset()
    await tb.run_random(600 if LONG else 200, p_spur=0.15)
    await tb.drain()
    tb.check({"spurious": 10, "spurious_double": 3})


@cocotb.test()
async def run_spurious_queued(dut):
    """Dones carrying the tag of a command that is in the table but not accepted on m_disp (queued,
    or picked and waiting in the m_disp register): dropped with err_spurious, the command is neither
    completed nor freed, and is dispatched and completed normally afterwards."""
    tb = TB(dut, _seed() + 31, True, True)
    await tb.reset()
    for rnd in range(10):
        tb.hold_disp = True                    # nothing is accepted on m_disp: nothing is in service
        tags = []
        for _ in range(tb.rng.randint(2, 2 * tb.depth)):
            tag = tb.free_tag(ntags=200)
            tags.append(tag)
            await tb.send(tb.rand_cmd(tag, p_bad=0.0))
        # until every command is accepted or the table is full (then some still wait in s_cmd)
        for _ in range(5000):
            await RisingEdge(dut.clk)
            if (not tb.cmd.queue and not tb.cmd._driving) or not int(dut.s_cmd_ready.value):
                break
        for _ in range(tb.rng.randint(0, 10)):
            await RisingEdge(dut.clk)
        # mostly tags of accepted commands (in the table), a few of commands still in s_cmd
        n_acc = len(tags) - len(tb.cmd.queue) - int(bool(tb.cmd._driving))
        pool = tags[:n_acc] * 4 + tags
        for tag in {tb.rng.choice(pool) for _ in range(tb.rng.randint(4, 12))}:
            tb.done.send_nowait(tag=tag, status=tb.rng.choice([0, 0x10]),
                                result=tb.rng.randrange(0xCE000000))
        for _ in range(tb.rng.randint(5, 60)):
            await RisingEdge(dut.clk)
        while tb.done.queue or tb.done._driving:   # every fake done seen while nothing is in service
            await RisingEdge(dut.clk)
        tb.hold_disp = False
        await tb.wait_sent()
        if rnd % 2:
            await tb.drain()
    await tb.drain()
    tb.check({"spurious_live_tag": 15})


@cocotb.test()
async def run_reset_mid_traffic(dut):
    """rst with commands in every stage: the queue empties and works again afterwards."""
    tb = TB(dut, _seed() + 29, True, True)
    await tb.reset()
    for _ in range(3):
        task = cocotb.start_soon(tb.run_random(10_000, ntags=100))
        for _ in range(tb.rng.randint(100, 400)):
            await RisingEdge(dut.clk)
        task.cancel()
        await tb.reset_mid_traffic()
        assert int(dut.occupancy.value) == 0 and int(dut.epoch.value) == 0
    await tb.run_random(150)
    await tb.drain()
    tb.check({"accepted": 100})


# ------------------------------------------------------------------------------------- pytest
CONFIGS = {
    "d32": {"DEPTH": 32, "NUM_LBA": 16384, "NUM_TX": 32},
    "d4": {"DEPTH": 4, "NUM_LBA": 1000, "NUM_TX": 7},
}


# "d4_synth": the RTL's synthesis form (`ATS_SYNTH_FORM`, what Yosys builds); the other items run
# the simulation form (the default of a simulator build, rtl/cmdq/README.md "Simulation cost")
@pytest.mark.parametrize("cfg", list(CONFIGS) + ["d4_synth"])
def test_ats_cmdq(cfg):
    synth_form = cfg.endswith("_synth")
    cfg = cfg.removesuffix("_synth")
    # ATS_CMDQ_SRC: run against another copy of the RTL (mutation checks of the testbench)
    src = os.environ.get("ATS_CMDQ_SRC")
    run(toplevel="ats_cmdq", sources=block_sources("ats_cmdq", replace={"ats_cmdq.sv": Path(src).resolve()} if src else None)
        + block_sources("ats_stream_check") + [HERE / "ats_cmdq_bind.sv"],   # stream rules on its m_ ports
        test_module="test_ats_cmdq", test_dir=HERE,
        build_key=cfg + ("_" + Path(src).parent.name if src else "") + ("_synthform" if synth_form else ""),
        build_args=["+define+ATS_SYNTH_FORM"] if synth_form else None, parameters=CONFIGS[cfg],
        waves=os.environ.get("ATS_WAVES"), public={},   # the test reads only the top's signals
        extra_env={"ATS_LONG": "1" if LONG else "0",
                   **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                      if os.environ.get("ATS_TEST_FILTER") else {})})
