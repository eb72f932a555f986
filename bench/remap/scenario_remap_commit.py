"""Commit scenario for waveforms and benchmark B1 (cocotb module, driven by bench_remap.py).

For each N in ATS_COMMIT_SIZES: fill tx 1 with N TX_WRITEs (distinct LPNs, overwriting mapped ones),
issue TX_LOOKUPs against the full table, then COMMIT it alone (no other traffic, no stalls), wait for
its response and for the event streams to drain. Latencies are NOT measured here: bench_remap.py
reads them from the FST. This module only checks that every response is what the spec says.
"""
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from atstb.runner import ROOT, load_params
from atstb.streams import StreamSink, StreamSource


class TB:
    def __init__(self, dut, params):
        self.dut = dut
        self.p = params
        self.op = params["ops"]
        self.st = params["status"]
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())   # 125 MHz
        self.req = StreamSource(dut, "s_req", dut.clk, ["op", "tag", "txid", "lpn", "ppn"])
        self.rsp = StreamSink(dut, "m_rsp", dut.clk, ["tag", "status", "ppn", "mapped", "from_tx", "count"])
        self.inval = StreamSink(dut, "m_inval", dut.clk, ["ppn", "txid", "aborted"])
        self.map = StreamSink(dut, "m_map", dut.clk, ["txid", "lpn", "ppn", "last"])
        self.tag = 0

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0
        while not self.dut.init_done.value:
            await RisingEdge(self.dut.clk)

    def next_tag(self):
        self.tag = (self.tag + 1) % (1 << self.p["TAG_W"])
        return self.tag

    async def request(self, **fields):
        """Send one request and return its response (nothing else is in flight)."""
        tag = self.next_tag()
        self.req.send_nowait(tag=tag, **fields)
        rsp = await self.rsp.recv(timeout_cycles=200_000)
        assert rsp["tag"] == tag, f"response tag {rsp['tag']} for request tag {tag}"
        return rsp


@cocotb.test()
async def commit_scenario(dut):
    params = load_params(os.environ["ATS_GEN_DIR"])
    sizes = [int(x) for x in os.environ.get("ATS_COMMIT_SIZES", "1,8,64").split(",")]
    tb = TB(dut, params)
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")))
    await tb.reset()
    depth = params["MAP_DEPTH"]
    ppn = 1
    committed = {}
    for n in sizes:
        assert n <= params["TX_ENTRIES"], f"N={n} exceeds TX_ENTRIES={params['TX_ENTRIES']}"
        lpns = rng.sample(range(depth), n)
        written = {}
        for lpn in lpns:
            ppn = ppn % ((1 << params["PPN_W"]) - 1) + 1
            rsp = await tb.request(op=tb.op["TX_WRITE"], txid=1, lpn=lpn, ppn=ppn)
            assert rsp["status"] == tb.st["OK"], rsp
            written[lpn] = ppn
        await ClockCycles(dut.clk, 8)
        # TX_LOOKUPs against a table of N entries: first, last, and one LPN the tx does not hold
        probe = [lpns[0], lpns[-1]] + [x for x in range(depth) if x not in written][:1]
        for lpn in probe:
            rsp = await tb.request(op=tb.op["TX_LOOKUP"], txid=1, lpn=lpn)
            assert rsp["status"] == tb.st["OK"]
            if lpn in written:
                assert rsp["from_tx"] == 1 and rsp["ppn"] == written[lpn], (lpn, rsp)
            else:
                assert rsp["from_tx"] == 0 and bool(rsp["mapped"]) == (lpn in committed)
        await ClockCycles(dut.clk, 8)
        dut._log.info("COMMIT of %d entries", n)
        rsp = await tb.request(op=tb.op["COMMIT"], txid=1)
        assert rsp["status"] == tb.st["OK"] and rsp["count"] == n, rsp
        # the m_map stream carries exactly the tx's mappings, in append order
        for i, lpn in enumerate(lpns):
            beat = await tb.map.recv()
            assert (beat["lpn"], beat["ppn"], beat["last"]) == (lpn, written[lpn], int(i == n - 1)), beat
        olds = [committed[lpn] for lpn in lpns if lpn in committed]
        for old in olds:
            beat = await tb.inval.recv()
            assert beat["ppn"] == old and beat["aborted"] == 0, (beat, old)
        committed.update(written)
        await ClockCycles(dut.clk, 2 * n + 32)   # let the CLEAR pass finish before the next round

    # Concurrency phase: tx 1 holds N entries; COMMIT it, and right behind it a back-to-back burst of
    # LOOKUPs, TX_WRITEs and TX_LOOKUPs of tx 2. The benchmark counts, from the FST, how many of them
    # the engine accepted while the commit was being applied (commit_active).
    n = min(params["TX_ENTRIES"], 64)
    lpns = rng.sample(range(depth), n)
    for lpn in lpns:
        ppn = ppn % ((1 << params["PPN_W"]) - 1) + 1
        rsp = await tb.request(op=tb.op["TX_WRITE"], txid=1, lpn=lpn, ppn=ppn)
        assert rsp["status"] == tb.st["OK"], rsp
    await ClockCycles(dut.clk, 8)
    burst = [dict(op=tb.op["COMMIT"], txid=1)]
    for i in range(3 * n):
        kind = i % 3
        if kind == 0:
            burst.append(dict(op=tb.op["LOOKUP"], lpn=lpns[(i * 7) % n]))
        elif kind == 1:
            burst.append(dict(op=tb.op["TX_WRITE"], txid=2, lpn=rng.randrange(depth), ppn=1 + i))
        else:
            burst.append(dict(op=tb.op["TX_LOOKUP"], txid=2, lpn=lpns[(i * 5) % n]))
    burst = burst[: 1 + min(len(burst) - 1, params["TX_ENTRIES"])]   # tx 2 must not overflow
    tags = []
    for req in burst:
        tags.append(tb.next_tag())
        tb.req.send_nowait(tag=tags[-1], **req)
    got = {}
    while len(got) < len(burst):
        rsp = await tb.rsp.recv(timeout_cycles=200_000)
        got.setdefault(rsp["tag"], rsp)
    assert all(r["status"] == tb.st["OK"] for r in got.values()), [r for r in got.values() if r["status"]]
    await ClockCycles(dut.clk, 4 * n + 32)

    # Lookup throughput: 128 back-to-back LOOKUPs (the benchmark measures acceptances per cycle).
    tags = []
    for i in range(128):
        tags.append(tb.next_tag())
        tb.req.send_nowait(tag=tags[-1], op=tb.op["LOOKUP"], lpn=lpns[i % n])
    got = {}
    while len(got) < len(tags):
        rsp = await tb.rsp.recv(timeout_cycles=200_000)
        got[rsp["tag"]] = rsp
    assert all(r["status"] == tb.st["OK"] and r["mapped"] for r in got.values())
    await ClockCycles(dut.clk, 16)
