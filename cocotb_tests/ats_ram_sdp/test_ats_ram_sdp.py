"""ats_ram_sdp: simple dual-port RAM with read latency 2 (behavioural model of the DP16KD wrapper).

Random writes and reads every cycle against a plain dict; checks that a read returns, two cycles
later, the last value written before the read's cycle (a same-cycle collision is unspecified and
not checked, as the module documents).
"""
import os
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from atstb.runner import block_sources, run


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = int(dut.WIDTH.value)
        self.depth = int(dut.DEPTH.value)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        dut.wr_en.value = 0
        dut.wr_addr.value = 0
        dut.wr_data.value = 0
        dut.rd_addr.value = 0


@cocotb.test()
async def random_read_write(dut):
    tb = TB(dut)
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")))
    model = {}                      # address -> value (the reference)
    pending = []                    # (cycle due, address, expected or None if unspecified)
    n = 4000 if os.environ.get("ATS_LONG") else 1500
    checked = 0
    # a working set spread over the whole address range (every address bit toggles), so that
    # most reads hit written words
    hot = [0, tb.depth - 1] + rng.sample(range(tb.depth), min(30, tb.depth))

    def pick():
        return rng.choice(hot) if rng.random() < 0.9 else rng.randrange(tb.depth)

    for cycle in range(n + 3):
        await RisingEdge(dut.clk)
        # results of reads issued two edges ago are visible now
        await ReadOnly()
        while pending and pending[0][0] == cycle:
            _, addr, exp = pending.pop(0)
            if exp is not None:
                got = int(dut.rd_data.value)
                assert got == exp, f"cycle {cycle}: read of {addr} returned {got:#x}, expected {exp:#x}"
                checked += 1
        # drive the next cycle's operations (sampled at the next edge)
        await Timer(1, unit="ns")
        rd = pick()
        we = rng.random() < 0.5
        wa = rng.choice([rd, pick()]) if we else pick()
        wd = rng.getrandbits(tb.width)
        collides = we and wa == rd
        exp = None if collides else model.get(rd)
        pending.append((cycle + 2, rd, exp))
        dut.rd_addr.value = rd
        dut.wr_en.value = int(we)
        dut.wr_addr.value = wa
        dut.wr_data.value = wd
        if we:
            model[wa] = wd
    assert checked > n // 4, f"only {checked} reads were checked"


@pytest.mark.parametrize("width,depth", [(1, 16384), (9, 2048), (18, 1024), (8, 40)])
def test_ats_ram_sdp(width, depth):
    run(toplevel="ats_ram_sdp", sources=block_sources("ats_ram_sdp"), test_module="test_ats_ram_sdp",
        test_dir=Path(__file__).parent, build_key=f"w{width}_d{depth}",
        parameters={"WIDTH": width, "DEPTH": depth}, public={})   # the test reads only the top's signals
