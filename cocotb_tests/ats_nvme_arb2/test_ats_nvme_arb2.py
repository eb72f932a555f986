# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_arb2: two streams into one, against a plain-Python model of its contract
(rtl/nvme/README.md "ats_nvme_arb2").

Two random sources (bursts of 1..9 beats, random payloads, random idle inside and between bursts)
and a sink with random and heavy backpressure. Checked every edge by the model, from the inputs
alone: which input the output shows (`m_sel`) and whether it is locked (the last choice is kept
while a beat is offered and not taken, and with BURST from a taken beat without `last` to the
`last` beat), the round robin between two offering inputs, and the mux (m_valid, m_data, m_last,
each s*_ready). End to end: every input's beats arrive exactly once, in order, bursts unbroken
(BURST = 1), the output stream stable while stalled (StreamSink's stability check).

Environment: ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")


class Model:
    """The arbiter's choice and lock, from the signals of one cycle (before the edge)."""

    def __init__(self, burst: bool):
        self.burst = burst
        self.lock = False
        self.sel = 0
        self.turn = 0

    def pick(self, v0: int, v1: int) -> int:
        if self.lock:
            return self.sel
        if v0 and v1:
            return self.turn
        return int(bool(v1))

    def edge(self, v0: int, v1: int, ready: int, last: int) -> None:
        p = self.pick(v0, v1)
        mv = v1 if p else v0
        if not self.lock and v0 and v1:
            self.turn = 1 - p
        if mv and not ready:
            self.lock = True
        elif mv and ready:
            self.lock = self.burst and not last
        self.sel = p


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 613 + 7)
        self.burst = bool(int(dut.BURST.value))
        self.w = int(dut.W.value)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        self.src = [StreamSource(dut, f"s{i}", dut.clk, ["data", "last"], pause=pause_gen(self.rng, True, 0.4))
                    for i in range(2)]
        self.sink = StreamSink(dut, "m", dut.clk, ["data", "last", "sel"], pause=pause_gen(self.rng, "heavy", max_stall=8))
        self.model = Model(self.burst)
        self.sent: list[list[tuple[int, int]]] = [[], []]
        self.both = 0
        every_edge(dut.clk, self._edge)

    def _edge(self) -> None:
        d = self.dut
        if int(d.rst.value):
            return
        v0, v1 = int(d.s0_valid.value), int(d.s1_valid.value)
        p = self.model.pick(v0, v1)
        assert int(d.m_sel.value) == p, f"m_sel {int(d.m_sel.value)}, the model picks {p} (lock {self.model.lock})"
        mv = v1 if p else v0
        assert int(d.m_valid.value) == mv
        ready = int(d.m_ready.value)
        assert int(d.s0_ready.value) == int(p == 0 and ready) and int(d.s1_ready.value) == int(p == 1 and ready)
        if mv:
            src = d.s1_data if p else d.s0_data
            assert int(d.m_data.value) == int(src.value)
            assert int(d.m_last.value) == int((d.s1_last if p else d.s0_last).value)
        if v0 and v1 and not self.model.lock:
            self.both += 1
        self.model.edge(v0, v1, ready, int(d.m_last.value) if mv else 0)

    def bursts(self, i: int, n: int) -> None:
        for _ in range(n):
            k = self.rng.randrange(1, 10)
            for j in range(k):
                beat = (self.rng.getrandbits(self.w), int(j == k - 1))
                self.sent[i].append(beat)
                self.src[i].send_nowait(data=beat[0], last=beat[1])


@cocotb.test()
async def arb2_random(dut):
    tb = TB(dut)
    dut.rst.value = 1
    for _ in range(4):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    n = 600 if LONG else 150
    tb.bursts(0, n)
    tb.bursts(1, n)
    total = len(tb.sent[0]) + len(tb.sent[1])
    for _ in range(200 * total):
        await RisingEdge(dut.clk)
        if len(tb.sink.queue) == total:
            break
    got = list(tb.sink.queue)
    assert len(got) == total, f"{len(got)} of {total} beats arrived"
    per = [[(g["data"], g["last"]) for g in got if g["sel"] == i] for i in range(2)]
    assert per[0] == tb.sent[0] and per[1] == tb.sent[1], "beats lost, repeated or reordered"
    if tb.burst:                       # bursts unbroken: the source changes only after a last
        for a, b in zip(got, got[1:]):
            assert a["sel"] == b["sel"] or a["last"], "a burst was interleaved with the other input's beats"
    assert tb.both > 20 and tb.sink.stable_checks > 50, (tb.both, tb.sink.stable_checks)
    dut._log.info("arb2: %d beats, %d contended choices, %d stalled edges checked", total, tb.both,
                  tb.sink.stable_checks)


CONFIGS = {"burst": {"W": 12, "BURST": 1}, "beat": {"W": 5, "BURST": 0}}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_arb2(cfg):
    run(toplevel="ats_nvme_arb2", sources=block_sources("ats_nvme_arb2", "ats_stream_check") + [HERE / "ats_nvme_arb2_bind.sv"], test_module="test_ats_nvme_arb2",
        test_dir=HERE, build_key=cfg, parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_LONG": "1" if LONG else "0"}, public={})   # the test reads only the top's signals
