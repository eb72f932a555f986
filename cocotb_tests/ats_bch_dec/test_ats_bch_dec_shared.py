"""cocotb tests of the shared Berlekamp-Massey unit (ats_bch_bm_arb) with four ats_bch_dec (EXT_BM=1),
as the NAND subsystem connects them: every channel streams its own sectors at the same time, with
random idle and backpressure per channel, and each channel's corrected data and status beats are
compared with the independent model (atstb.bch_model BCH.decode), error patterns 0..T and beyond T
(flagged or miscorrected exactly as the model does). An arbiter monitor checks every cycle: at most
one grant, only to a requester, a result only to the channel whose job is in BM (no sector of one
channel ever gets another channel's locator), and the bounded wait of the round robin.
Testpoints: rtl/nand/testplan_ecc.md (E-SH*). Environment: ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, ReadOnly

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.bch_model import BCH, flip_bits
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
SEED = int(os.environ.get("ATS_SEED", "1"))
N = 4
M, T, K = 13, 8, 512
LANES = 4          # the Chien width ats_nand_page picks at 4 bus cycles a byte (the default timing)


class Chan:
    def __init__(self, dut, c: int, code: BCH, rng: random.Random, idle: bool, bp: bool):
        self.c, self.code, self.rng = c, code, rng
        self.src = StreamSource(dut, f"s{c}_data", dut.clk, ["data", "last"],
                                random_pause(rng, 0.3) if idle else None)
        self.sink = StreamSink(dut, f"m{c}_data", dut.clk, ["data", "last"],
                               random_pause(rng, 0.3) if bp else None)
        self.stat = StreamSink(dut, f"m{c}_status", dut.clk, ["corrected", "uncorrectable"],
                               random_pause(rng, 0.5) if bp else None)
        self.cases: list[tuple[str, bytes]] = []
        self.stats = {"corrected": 0, "uncorrectable": 0}
        self.status_cycles: list[int] = []

    def add(self, ne: int):
        data = self.rng.randbytes(K)
        pos = self.rng.sample(range(self.code.n), ne)
        self.cases.append((f"ch{self.c} {ne} errors at {sorted(pos)}", flip_bits(self.code.encode(data), pos)))

    async def check(self):
        for _, cw in self.cases:
            for i, b in enumerate(cw):
                self.src.send_nowait(data=b, last=int(i == len(cw) - 1))
        for idx, (what, cw) in enumerate(self.cases):
            exp = self.code.decode(cw)
            got = bytearray()
            for i in range(K):
                beat = await self.sink.recv(timeout_cycles=50_000)
                assert beat["last"] == int(i == K - 1), f"sector {idx} ({what}): last flag on byte {i}"
                got.append(beat["data"])
            st = await self.stat.recv(timeout_cycles=50_000)
            self.status_cycles.append(st["_cycle"])
            if bytes(got) != exp.data:
                bad = [i for i in range(K) if got[i] != exp.data[i]]
                raise AssertionError(f"sector {idx} ({what}): data differs from the model at bytes {bad[:8]} "
                                     f"(model L={exp.L} roots={exp.roots} unc={exp.uncorrectable})")
            assert (st["corrected"], st["uncorrectable"]) == (exp.corrected, int(exp.uncorrectable)), \
                f"sector {idx} ({what}): status corrected={st['corrected']} unc={st['uncorrectable']}, " \
                f"model corrected={exp.corrected} unc={exp.uncorrectable} (L={exp.L} roots={exp.roots})"
            self.stats["corrected"] += exp.corrected
            self.stats["uncorrectable"] += exp.uncorrectable


class ArbMonitor:
    """Every cycle: gnt one-hot and only to a requester; done only to the owner of the job in BM,
    exactly once per grant; a request waits at most (N-1) jobs of 4T+3 cycles plus its own turn."""

    BOUND = (N - 1) * (4 * T + 3) + 4 * T + 8

    def __init__(self, dut):
        self.dut = dut
        self.owner: int | None = None       # channel whose job is in BM
        self.jobs = [0] * N
        self.max_wait = 0
        self.wait = [0] * N
        cocotb.start_soon(self._run())

    async def _run(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.rst.value):
                continue
            req, gnt, done = (int(dut.bm_req.value), int(dut.bm_gnt.value), int(dut.bm_done.value))
            assert gnt & (gnt - 1) == 0, f"two grants at once: {gnt:04b}"
            assert done & (done - 1) == 0, f"two results at once: {done:04b}"
            assert gnt & ~req == 0, f"grant {gnt:04b} without request {req:04b}"
            if done:
                c = done.bit_length() - 1
                assert self.owner == c, f"result for channel {c}, job in BM belongs to {self.owner}"
                self.owner = None
            if gnt:
                c = gnt.bit_length() - 1
                assert self.owner is None, f"grant to {c} while channel {self.owner}'s job is in BM"
                self.owner = c
                self.jobs[c] += 1
            for c in range(N):
                if req >> c & 1 and not gnt >> c & 1:
                    self.wait[c] += 1
                    self.max_wait = max(self.max_wait, self.wait[c])
                    assert self.wait[c] <= self.BOUND, f"channel {c} waited {self.wait[c]} cycles for BM"
                else:
                    self.wait[c] = 0


async def setup(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0


@cocotb.test()
async def shared_random(dut):
    """Four channels at once, random idle / backpressure per channel, 0..T+3 errors per sector."""
    rng = random.Random(101 + SEED)
    code = BCH(M, T, K)
    chans = [Chan(dut, c, code, random.Random(rng.random()), idle=bool(c & 1), bp=c >= 2) for c in range(N)]
    mon = ArbMonitor(dut)
    await setup(dut)
    for ch in chans:
        for _ in range(24 if LONG else 10):
            ch.add(rng.choice(list(range(T + 1)) + [T + 1, T + 2, T + 3]))
    tasks = [cocotb.start_soon(ch.check()) for ch in chans]
    for t in tasks:
        await t
    for _ in range(100):
        await RisingEdge(dut.clk)
    for ch in chans:
        assert not ch.sink.queue and not ch.stat.queue, f"channel {ch.c}: extra output beats"
    unc = sum(ch.stats["uncorrectable"] for ch in chans)
    assert unc >= 1, "no uncorrectable sector seen"
    assert mon.owner is None and all(mon.jobs), f"BM jobs per channel {mon.jobs}"
    dut._log.info(f"stats {[ch.stats for ch in chans]}, BM jobs {mon.jobs}, longest BM wait {mon.max_wait}")


@cocotb.test()
async def shared_throughput(dut):
    """Four channels back to back, every sector with T errors (every one needs BM at the same
    time): each channel still gets a sector every (8/LANES)(K + P) + 4T + 11 cycles (the single
    decoder's contract), and the BM waits stay within the round-robin bound."""
    rng = random.Random(202 + SEED)
    code = BCH(M, T, K)
    chans = [Chan(dut, c, code, random.Random(rng.random()), idle=False, bp=False) for c in range(N)]
    mon = ArbMonitor(dut)
    await setup(dut)
    for ch in chans:
        for _ in range(6):
            ch.add(T)
    tasks = [cocotb.start_soon(ch.check()) for ch in chans]
    for t in tasks:
        await t
    period = (8 // LANES) * (code.n // 8) + 4 * T + 11
    for ch in chans:
        gaps = [b - a for a, b in zip(ch.status_cycles, ch.status_cycles[1:])]
        dut._log.info(f"channel {ch.c}: status beats {gaps} cycles apart (contract {period})")
        assert max(gaps) <= period, f"channel {ch.c}: status beats {gaps} apart, contract {period}"
        assert ch.stats["uncorrectable"] == 0
    dut._log.info(f"BM jobs {mon.jobs}, longest BM wait {mon.max_wait} (bound {mon.BOUND})")


def test_ats_bch_dec_shared():
    run(toplevel="ats_bch_dec_shared_tb",
        sources=block_sources("ats_bch_dec", "ats_stream_check")
        + [Path(__file__).parent / "ats_bch_dec_shared_tb.sv", Path(__file__).parent / "ats_bch_dec_bind.sv"],
        test_module="test_ats_bch_dec_shared", test_dir=Path(__file__).parent,
        build_key=f"shared_m13_t8_k512_l{LANES}", parameters={"M": M, "T": T, "K": K, "LANES": LANES},
        public={})   # the test reads only the TB top's signals
