"""cocotb tests of ats_bch_enc (sector BCH encoder) against the independent model atstb.bch_model.

Sectors (all-zero, all-one, random) are sent back to back through StreamSource with random idle,
the codeword stream is collected by StreamSink with random backpressure, and every byte and `last`
flag is compared with BCH.encode() of the model. Testpoints: rtl/nand/testplan_ecc.md.
Environment: ATS_BCH="M,T,K" (set by the pytest entry point), ATS_SEED, ATS_LONG=1.
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
from atstb.bch_model import BCH
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
# parameter sets (M, T, K): the defaults live here only
CONFIGS = [(13, 8, 512), (14, 4, 1024)]


def cfg():
    m, t, k = (int(x) for x in os.environ.get("ATS_BCH", "13,8,512").split(","))
    return m, t, k


async def start(dut, idle: bool, backpressure: bool, seed: int):
    rng = random.Random(seed)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    src = StreamSource(dut, "s_data", dut.clk, ["data", "last"], random_pause(rng, 0.3) if idle else None)
    sink = StreamSink(dut, "m_data", dut.clk, ["data", "last"],
                      random_pause(rng, 0.3) if backpressure else None)
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    return rng, src, sink


async def check_sectors(dut, code: BCH, sectors: list[bytes], src, sink, contiguous=False):
    """contiguous: no idle, no backpressure: every codeword byte one cycle after the previous one
    (the output FIFO's registered space flag must not cost throughput)."""
    expected = []
    cycles = []
    for data in sectors:
        for i, b in enumerate(data):
            src.send_nowait(data=b, last=int(i == len(data) - 1))
        cw = code.encode(data)
        expected += [(b, int(i == len(cw) - 1)) for i, b in enumerate(cw)]
    for n, (b, last) in enumerate(expected):
        beat = await sink.recv(timeout_cycles=20_000)
        cycles.append(beat["_cycle"])
        sector, off = divmod(n, code.k_bytes + code.p_bytes)
        assert (beat["data"], beat["last"]) == (b, last), \
            f"sector {sector} byte {off}: got {beat['data']:#04x}/last {beat['last']}, expected {b:#04x}/last {last}"
    for _ in range(50):
        await RisingEdge(dut.clk)
    assert not sink.queue, f"{len(sink.queue)} extra beats"
    if contiguous:
        gaps = {b - a for a, b in zip(cycles, cycles[1:])}
        assert gaps == {1}, f"output not a byte a cycle: gaps {sorted(gaps)}"


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True])
async def random_sectors(dut, idle, backpressure):
    """All-zero, all-one and random sectors back to back."""
    m, t, k = cfg()
    code = BCH(m, t, k)
    rng, src, sink = await start(dut, idle, backpressure, 1 + 2 * idle + backpressure)
    n = 12 if LONG else 3
    sectors = [bytes(k), bytes([0xFF] * k)] + [rng.randbytes(k) for _ in range(n)]
    await check_sectors(dut, code, sectors, src, sink, contiguous=not idle and not backpressure)


@cocotb.test()
async def sparse_sectors(dut):
    """Single set bits and short bursts at every byte lane (exercises every generator tap)."""
    m, t, k = cfg()
    code = BCH(m, t, k)
    rng, src, sink = await start(dut, True, True, 7)
    sectors = []
    for pos in [0, 7, 8 * k - 1, rng.randrange(8 * k)]:
        b = bytearray(k)
        b[pos // 8] |= 0x80 >> (pos % 8)
        sectors.append(bytes(b))
    await check_sectors(dut, code, sectors, src, sink)


@pytest.mark.parametrize("m,t,k", CONFIGS)
def test_ats_bch_enc(m, t, k):
    run(toplevel="ats_bch_enc", sources=block_sources("ats_bch_enc", "ats_stream_check") + [Path(__file__).parent / "ats_bch_enc_bind.sv"], test_module="test_ats_bch_enc",
        test_dir=Path(__file__).parent, build_key=f"m{m}_t{t}_k{k}",
        parameters={"M": m, "T": t, "K": k}, extra_env={"ATS_BCH": f"{m},{t},{k}"},
        public={})   # the test reads only the top's signals
