"""cocotb tests of ats_bch_dec (sector BCH decoder) against the independent model atstb.bch_model.

Each test builds codewords with the model's encoder, flips chosen bits, and sends them back to back
through StreamSource (random idle). The corrected data (m_data, K bytes a sector with `last`) and
the status beats (m_status: corrected, uncorrectable) are collected with random backpressure and
compared, bit for bit, with BCH.decode() of the model - including the sectors the model itself
miscorrects or flags (beyond t errors). Testpoints: rtl/nand/testplan_ecc.md.
Environment: ATS_BCH="M,T,K,LANES" (set by the pytest entry point), ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.bch_model import BCH, flip_bits
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
# parameter sets (M, T, K): the defaults live here only
CONFIGS = [(13, 8, 512), (14, 4, 1024)]
SEED = int(os.environ.get("ATS_SEED", "1"))


def cfg():
    m, t, k, lanes = (int(x) for x in os.environ.get("ATS_BCH", "13,8,512,8").split(","))
    return m, t, k, lanes


def period_contract(n_bits: int, t: int, lanes: int) -> int:
    """Cycles a sector back to back (README_ecc.md): (8/LANES)(K + P) + 4T + 11; LANES = 8 is the
    former K + P + 4T + 11."""
    return (8 // lanes) * (n_bits // 8) + 4 * t + 11


class TB:
    def __init__(self, dut, idle: bool, backpressure: bool, seed: int):
        self.dut = dut
        m, t, k, self.lanes = cfg()
        self.code = BCH(m, t, k)
        self.t, self.k, self.n = t, k, self.code.n
        self.rng = random.Random(seed * 7919 + SEED)
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        self.src = StreamSource(dut, "s_data", dut.clk, ["data", "last"],
                                random_pause(self.rng, 0.3) if idle else None)
        self.sink = StreamSink(dut, "m_data", dut.clk, ["data", "last"],
                               random_pause(self.rng, 0.3) if backpressure else None)
        self.stat = StreamSink(dut, "m_status", dut.clk, ["corrected", "uncorrectable"],
                               random_pause(self.rng, 0.5) if backpressure else None)
        self.cases: list[tuple[str, bytes]] = []      # (description, received codeword)

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0

    def add(self, data: bytes, positions, what: str):
        cw = flip_bits(self.code.encode(data), positions)
        self.cases.append((f"{what} errors at {sorted(positions)}", cw))

    def rand_data(self) -> bytes:
        return self.rng.randbytes(self.k)

    async def run(self):
        await self.reset()
        for _, cw in self.cases:
            for i, b in enumerate(cw):
                self.src.send_nowait(data=b, last=int(i == len(cw) - 1))
        stats = {"corrected": 0, "uncorrectable": 0, "miscorrected": 0}
        self.status_cycles: list[int] = []            # sink cycle of each status beat
        for idx, (what, cw) in enumerate(self.cases):
            exp = self.code.decode(cw)
            got = bytearray()
            for i in range(self.k):
                beat = await self.sink.recv(timeout_cycles=50_000)
                assert beat["last"] == int(i == self.k - 1), f"sector {idx} ({what}): last flag on byte {i}"
                got.append(beat["data"])
            st = await self.stat.recv(timeout_cycles=50_000)
            self.status_cycles.append(st["_cycle"])
            if bytes(got) != exp.data:
                bad = [i for i in range(self.k) if got[i] != exp.data[i]]
                raise AssertionError(f"sector {idx} ({what}): data differs from the model at bytes {bad[:8]} "
                                     f"(model L={exp.L} roots={exp.roots} unc={exp.uncorrectable})")
            assert (st["corrected"], st["uncorrectable"]) == (exp.corrected, int(exp.uncorrectable)), \
                f"sector {idx} ({what}): status corrected={st['corrected']} unc={st['uncorrectable']}, " \
                f"model corrected={exp.corrected} unc={exp.uncorrectable} (L={exp.L} roots={exp.roots})"
            stats["corrected"] += exp.corrected
            stats["uncorrectable"] += exp.uncorrectable
            stats["miscorrected"] += (not exp.uncorrectable and exp.data != cw[: self.k]
                                      and "beyond" in what)
        for _ in range(100):
            await RisingEdge(self.dut.clk)
        assert not self.sink.queue and not self.stat.queue, "extra output beats"
        self.dut._log.info(f"{len(self.cases)} sectors checked: {stats}")
        return stats


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True])
async def correctable(dut, idle, backpressure):
    """0..t random bit errors anywhere in the codeword: corrected, exact count."""
    tb = TB(dut, idle, backpressure, 1 + 2 * idle + backpressure)
    for ne in range(tb.t + 1):
        for _ in range(2 if LONG else 1):
            tb.add(tb.rand_data(), tb.rng.sample(range(tb.n), ne), f"{ne}")
    stats = await tb.run()
    assert stats["uncorrectable"] == 0
    if not idle and not backpressure:
        # throughput contract (README_ecc.md): back to back, a sector every (8/LANES)(K + P) + 4T + 11
        period = period_contract(tb.n, tb.t, tb.lanes)
        gaps = [b - a for a, b in zip(tb.status_cycles, tb.status_cycles[1:])]
        dut._log.info(f"status beats {gaps} cycles apart (contract {period})")
        assert gaps and max(gaps) <= period, f"status beats {gaps} cycles apart, contract {period}"


@cocotb.test()
async def beyond_t(dut):
    """t+1..t+3 errors: the RTL must do what the model does (flag, or miscorrect like BCH does)."""
    tb = TB(dut, True, True, 11)
    for ne in range(tb.t + 1, tb.t + 4):
        for _ in range(4 if LONG else 2):
            tb.add(tb.rand_data(), tb.rng.sample(range(tb.n), ne), f"beyond-t {ne}")
    stats = await tb.run()
    assert stats["uncorrectable"] >= 1, "no uncorrectable sector seen"


@cocotb.test()
async def parity_and_edges(dut):
    """Errors only in the parity bits; first/last bit of data and parity; bursts; all-zero and
    all-one sectors with 0, t and t+1 errors."""
    tb = TB(dut, True, True, 13)
    par0 = 8 * tb.k                       # stream bit index of the first parity bit
    tb.add(tb.rand_data(), tb.rng.sample(range(par0, tb.n), tb.t), "parity-only t")
    tb.add(tb.rand_data(), tb.rng.sample(range(par0, tb.n), 1), "parity-only 1")
    tb.add(tb.rand_data(), [0, par0 - 1, par0, tb.n - 1], "edge")
    start = tb.rng.randrange(tb.n - tb.t)
    tb.add(tb.rand_data(), list(range(start, start + tb.t)), "burst")
    for fill in (0x00, 0xFF):
        data = bytes([fill] * tb.k)
        tb.add(data, [], f"fill {fill:#x} no")
        tb.add(data, tb.rng.sample(range(tb.n), tb.t), f"fill {fill:#x} t")
        tb.add(data, tb.rng.sample(range(tb.n), tb.t + 1), f"fill {fill:#x} beyond-t")
    await tb.run()


# "synth": the RTL's synthesis form of the decoder and BM (`ATS_SYNTH_FORM`, what Yosys builds) on
# the product configuration with the Chien width the page controller picks at 4 bus cycles a byte
# (LANES = 4); the other items run the simulation form (rtl/nand/README_ecc.md). LANES: 8 (a byte a
# cycle), 2 (the narrowest); 4 in simulation form is test_ats_bch_dec_shared (the subsystem's wiring)
@pytest.mark.parametrize("m,t,k,form,lanes", [CONFIGS[0] + ("sim", 8), CONFIGS[1] + ("sim", 2),
                                              CONFIGS[0] + ("synth", 4)])
def test_ats_bch_dec(m, t, k, form, lanes):
    run(toplevel="ats_bch_dec",
        sources=block_sources("ats_bch_dec", "ats_stream_check") + [Path(__file__).parent / "ats_bch_dec_bind.sv"],
        test_module="test_ats_bch_dec", test_dir=Path(__file__).parent,
        build_key=f"m{m}_t{t}_k{k}" + ("" if lanes == 8 else f"_l{lanes}") + ("_synthform" if form == "synth" else ""),
        build_args=["+define+ATS_SYNTH_FORM"] if form == "synth" else None,
        parameters={"M": m, "T": t, "K": k, "LANES": lanes}, extra_env={"ATS_BCH": f"{m},{t},{k},{lanes}"},
        public={})   # the test reads only the top's signals
