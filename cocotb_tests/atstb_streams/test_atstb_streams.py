"""The testbench library's waits (cocotb_tests/lib/atstb/streams.py) against what they replace.

The testbenches cut their per-edge cost by not resuming a task at every edge (cocotb_tests/README.md
"Run cost: task resumes"); each such wait must return at the same edge as the polling it replaced,
or a test's stimulus would move. The references here are those polling loops, run beside the new
waits on the same clock:
- `CycleWait(clk, period)(n)` against `ClockCycles(clk, n)` and against arithmetic (the n-th rising
  edge after the call's time): called at edges, from mid-cycle timers, at random n (1..3000) and
  before `sync()`;
- `StreamSource.wait_idle()` against the loop it replaced (`while queue or valid: await edge`),
  with random bursts, random idle on the source and random backpressure on the sink, callers that
  start at random edges (also while idle, and right after the last beat was taken), and `flush()`
  mid-cycle while a caller waits (with a reset, as flush is used);
- `port_writer(h)(v)` (the stream ends' writes) against `h.value = v`: random values written at
  edges and mid-cycle by either, one or both in a step (the last write of a step must win whichever
  made it), read back on the port and through the DUT's path; out-of-range values refused alike.
DUT: ats_nvme_arb2 as a plain valid/ready path (input 0 → output; input 1 idle); its own tests are
cocotb_tests/ats_nvme_arb2. The sink's beats must be the sent ones, in order (the path is checked
too, so a wait that returned early and dropped a beat would show).
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
from atstb.runner import block_sources, run  # noqa: E402
from atstb.streams import CycleWait, StreamSink, StreamSource, pause_gen, port_writer  # noqa: E402

PERIOD_PS = 10_000          # the clock (a cocotb Clock: constant period)


async def _reset(dut):
    cocotb.start_soon(Clock(dut.clk, PERIOD_PS, unit="ps").start())
    dut.rst.value = 1
    dut.s1_valid.value = 0
    dut.s1_data.value = 0
    dut.s1_last.value = 0
    dut.s0_valid.value = 0
    dut.m_ready.value = 0
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


def _nth_edge_after(now_ps: int, e0: int, n: int) -> int:
    """The time of the n-th rising edge strictly after now (edges at e0 + k * PERIOD_PS); an edge at
    `now` itself has fired already when the caller runs, so it is not counted."""
    first = now_ps + PERIOD_PS - (now_ps - e0) % PERIOD_PS
    return first + (n - 1) * PERIOD_PS


@cocotb.test()
async def cycle_wait(dut):
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 3)
    await _reset(dut)
    w = CycleWait(dut.clk, PERIOD_PS)
    e0 = get_sim_time("ps") % PERIOD_PS              # we are at an edge now
    # before sync(): ClockCycles itself
    t = get_sim_time("ps")
    await w(5)
    assert get_sim_time("ps") == _nth_edge_after(t, e0, 5)
    await w.sync()
    assert w.e0 == e0
    checked = 0
    for i in range(300):
        # where the call is made: at an edge (after RisingEdge), or mid-cycle after a timer
        where = rng.choice(["edge", "timer", "timer"])
        if where == "timer":
            await Timer(rng.randrange(1, PERIOD_PS * 3), "ps")
        n = rng.choice([1, 2, 3, rng.randrange(3, 40), rng.randrange(40, 3001)])
        t = get_sim_time("ps")
        want = _nth_edge_after(t, e0, n)
        # the reference beside it: ClockCycles from the same moment
        ref_done = []

        async def ref(n=n):
            await ClockCycles(dut.clk, n)
            ref_done.append(get_sim_time("ps"))
        cocotb.start_soon(ref())
        await w(n)
        got = get_sim_time("ps")
        assert got == want, f"call {i} at {t} ps ({where}), n = {n}: returned at {got}, the n-th edge is {want}"
        await Timer(1, "ps")                           # the reference's resume at that edge
        assert ref_done == [want], f"call {i}: ClockCycles({n}) returned at {ref_done}, CycleWait at {got}"
        checked += 1
    dut._log.info("CycleWait: %d waits equal to ClockCycles and to the edge arithmetic", checked)


async def _poll_idle(src: StreamSource, clk) -> None:
    """The loop wait_idle replaced (the reference)."""
    while src.queue or src.valid.value:
        await RisingEdge(clk)


@cocotb.test()
async def wait_idle(dut):
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 104729 + 11)
    await _reset(dut)
    w = int(dut.W.value)
    src = StreamSource(dut, "s0", dut.clk, ["data", "last"], pause=pause_gen(rng, True, 0.3))
    sink = StreamSink(dut, "m", dut.clk, ["data", "last", "sel"], pause=pause_gen(rng, "heavy", max_stall=12))
    sent, cases, flushes = [], 0, 0
    for i in range(120):
        # a burst (sometimes none: the wait starts idle), then callers at random edges around it
        n = rng.choice([0, 1, rng.randrange(2, 30)])
        for k in range(n):
            d = rng.getrandbits(w)
            src.send_nowait(data=d, last=int(k == n - 1))
            sent.append(d)
        await ClockCycles(dut.clk, rng.choice([0, 0, 1, rng.randrange(2, 20)]) or 1)
        flush = n > 3 and rng.random() < 0.3
        ends = {}

        async def new(key):
            await src.wait_idle()
            ends[key] = get_sim_time("ps")

        async def old(key):
            await _poll_idle(src, dut.clk)
            ends[key] = get_sim_time("ps")
        # the two waits from the same moment, in both orders of start
        first, second = (new, old) if rng.random() < 0.5 else (old, new)
        t1 = cocotb.start_soon(first("a"))
        t2 = cocotb.start_soon(second("b"))
        if flush:
            await ClockCycles(dut.clk, rng.randrange(1, 3))
            # mid-cycle: at an edge the polling loop's result depends on whether it ran before or
            # after the flush in that step (after: it can end at that very edge); wait_idle ends at
            # the next edge either way (its docstring)
            await Timer(PERIOD_PS // 3, "ps")
            if src.queue:                              # as before a reset (flush's use): valid
                dut.rst.value = 1                      # drops with a beat offered, which the sink's
                dropped = src.flush()                  # stability check allows only at a reset
                del sent[len(sent) - dropped:]
                flushes += 1
                await RisingEdge(dut.clk)
                dut.rst.value = 0
        await t1
        await t2
        assert ends["a"] == ends["b"], (f"case {i} ({n} beats, flush {flush}, {first.__name__} started first): "
                                        f"returned at {ends} ps (a: the first started)")
        assert not src.queue and not src.valid.value
        cases += 1
        # the next burst may start right at the edge the wait returned (the last beat just taken)
    for _ in range(200 * max(1, len(sent))):
        if len(sink.queue) == len(sent):
            break
        await RisingEdge(dut.clk)
    got = [b["data"] for b in sink.queue]
    assert got == sent, f"the path lost or reordered beats: {len(got)} of {len(sent)}"
    assert flushes > 0 and cases == 120, (flushes, cases)
    dut._log.info("wait_idle: %d waits equal to the polling loop, %d beats through, %d flushes", cases,
                  len(sent), flushes)


@cocotb.test()
async def port_writer_vs_value(dut):
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7907 + 5)
    await _reset(dut)
    w = int(dut.W.value)
    dut.s0_valid.value = 0
    dut.m_ready.value = 1
    ports = {"s1_data": w, "s1_last": 1, "s1_valid": 1}
    fast = {p: port_writer(getattr(dut, p), fast=True) for p in ports}   # (whatever ATS_FAST_WRITE says)
    cur = {p: 0 for p in ports}
    kinds = {"fast": 0, "value": 0, "both": 0}
    for i in range(400):
        if rng.random() < 0.5:                             # at an edge, or mid-cycle
            await RisingEdge(dut.clk)
        else:
            await Timer(rng.randrange(1, PERIOD_PS), "ps")
        for p, n in ports.items():
            if rng.random() < 0.3:
                continue
            vals = [rng.choice([0, (1 << n) - 1, rng.getrandbits(n)]) for _ in range(2)]
            how = rng.choice(["fast", "value", "both", "both"])
            kinds[how] += 1
            if how == "fast":
                fast[p](vals[0])
            elif how == "value":
                getattr(dut, p).value = vals[0]
            else:                                          # two writes in one step: the last wins
                if rng.random() < 0.5:
                    fast[p](vals[0])
                    getattr(dut, p).value = vals[1]
                else:
                    getattr(dut, p).value = vals[0]
                    fast[p](vals[1])
                vals[0] = vals[1]
            cur[p] = vals[0]
        await ReadOnly()
        for p in ports:
            assert int(getattr(dut, p).value) == cur[p], f"step {i}: {p} reads {int(getattr(dut, p).value):#x}, wrote {cur[p]:#x}"
        # the DUT's path (input 1 alone offering, the output a mux): the written values reach it
        assert int(dut.m_valid.value) == cur["s1_valid"], f"step {i}: m_valid"
        if cur["s1_valid"]:
            assert int(dut.m_data.value) == cur["s1_data"] and int(dut.m_last.value) == cur["s1_last"], f"step {i}"
        await Timer(1, "ps")                               # out of the read-only phase
    # out of range: refused by both (cocotb's range for an int: -2^(n-1) .. 2^n - 1; one bit: 0, 1)
    for p, n in ports.items():
        for v in ((1 << n), -(1 << (n - 1)) - 1 if n > 1 else -1):
            for wr in (fast[p], lambda x, p=p: setattr(getattr(dut, p), "value", x)):
                try:
                    wr(v)
                except ValueError:
                    continue
                raise AssertionError(f"{p}: {v} accepted")
    fast["s1_data"](-1)                                    # -1 is in range for a vector: all ones
    await ReadOnly()
    assert int(dut.s1_data.value) == (1 << w) - 1
    assert min(kinds.values()) > 50, kinds
    dut._log.info("port_writer: %s writes, every read equal to what .value would leave", kinds)


def test_atstb_streams():
    run(toplevel="ats_nvme_arb2", sources=block_sources("ats_nvme_arb2"), test_module="test_atstb_streams",
        test_dir=HERE, build_key="atstb_streams", parameters={"W": 16, "BURST": 0}, public={})
