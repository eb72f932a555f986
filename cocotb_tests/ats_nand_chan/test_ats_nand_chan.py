"""ats_nand_chan against WAYS instances of the NAND die model (sim/nand/ats_nand_die.sv).

The reference is a plain-Python model of flash contents written from NAND rules (erase sets a
block to 0xFF, a program writes one page once and in page order, a read returns what was
programmed), not the die's DPI store. Every test runs with random idle on s_cmd/s_wdata and random
backpressure on m_rdata/m_cpl, and ends by checking that no die saw a protocol violation
(`viol_count` of every die is 0): the dies are the referee of the controller's pin timing.
"""
from __future__ import annotations

import os
import random
from collections import defaultdict
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from atstb.runner import ROOT, block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

OP_READ, OP_PROG, OP_ERASE, OP_RESET, OP_RDID, OP_PARAM = range(6)
ST_OK, ST_PFAIL, ST_EFAIL, ST_BAD = 0, 1, 2, 4
CLK_NS = 10


class FlashModel:
    """What each die holds, from NAND rules only."""

    def __init__(self, page_bytes: int, pages_per_block: int):
        self.page_bytes = page_bytes
        self.ppb = pages_per_block
        self.pages: dict[tuple[int, int], bytes] = {}     # (way, row) -> page + spare bytes
        self.next_page: dict[tuple[int, int], int] = {}   # (way, block) -> next page to program

    def erase(self, way: int, block: int) -> None:
        for p in range(self.ppb):
            self.pages.pop((way, block * self.ppb + p), None)
        self.next_page[(way, block)] = 0

    def can_program(self, way: int, row: int) -> bool:
        block, page = divmod(row, self.ppb)
        return self.next_page.get((way, block)) == page

    def program(self, way: int, row: int, data: bytes) -> None:
        block, page = divmod(row, self.ppb)
        self.pages[(way, row)] = data
        self.next_page[(way, block)] = page + 1

    def read(self, way: int, row: int, col: int, n: int) -> bytes | None:
        """Bytes col..col+n of the page, or None where the content is not defined (never erased)."""
        block = row // self.ppb
        if (way, block) not in self.next_page:
            return None
        page = self.pages.get((way, row), b"\xff" * self.page_bytes)
        return page[col:col + n]


class TB:
    def __init__(self, dut, rng: random.Random, idle: bool, backpressure: bool):
        self.dut = dut
        self.rng = rng
        self.ways = int(dut.WAYS.value)
        self.page_bytes = int(dut.PAGE_BYTES.value) + int(dut.SPARE_BYTES.value)
        self.ppb = int(dut.PAGES_PER_BLOCK.value)
        self.blocks = int(dut.BLOCKS.value)
        self.model = FlashModel(self.page_bytes, self.ppb)
        cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
        pause = (lambda p: random_pause(rng, p)) if idle else (lambda p: None)
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, ["op", "tag", "way", "row", "col", "len"],
                                pause(0.3))
        self.wdata = StreamSource(dut, "s_wdata", dut.clk, ["data", "last"], pause(0.2))
        bp = (lambda p: random_pause(rng, p)) if backpressure else (lambda p: None)
        self.rdata = StreamSink(dut, "m_rdata", dut.clk, ["data", "tag", "last"], bp(0.3))
        self.cpl = StreamSink(dut, "m_cpl", dut.clk, ["tag", "status"], bp(0.3))
        self.tags = list(range(256))
        rng.shuffle(self.tags)
        self.outstanding: dict[int, dict] = {}       # tag -> request
        self.busy_ways: set[int] = set()
        self.rd_bytes: dict[int, list[int]] = defaultdict(list)
        self.rd_open = None           # tag of the transfer in progress on m_rdata (not yet `last`)
        self.done: list[dict] = []

    async def reset(self):
        self.dut.rst.value = 1
        self.dut.power_ok.value = 1
        await ClockCycles(self.dut.clk, 5)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 5)

    def issue(self, op: int, way: int, row: int = 0, col: int = 0, n: int = 0, data: bytes = b"",
              expect_status: int = ST_OK) -> int:
        tag = self.tags.pop()
        req = dict(op=op, way=way, row=row, col=col, len=n, tag=tag, expect=expect_status)
        self.outstanding[tag] = req
        if expect_status != ST_BAD:
            self.busy_ways.add(way)
        self.cmd.send_nowait(op=op, tag=tag, way=way, row=row, col=col, len=n)
        for i, b in enumerate(data):
            self.wdata.send_nowait(data=b, last=int(i == len(data) - 1))
        return tag

    def drain(self) -> None:
        """Take the data beats and completions that have arrived (no waiting)."""
        while self.rdata.queue:
            beat = self.rdata.queue.popleft()
            assert beat["tag"] in self.outstanding, f"read data for unknown tag {beat['tag']}"
            # a transfer's bytes come in one piece (a suspended transfer resumes before any other)
            assert self.rd_open in (None, beat["tag"]), \
                f"read data of tag {beat['tag']} inside the transfer of tag {self.rd_open}"
            req = self.outstanding[beat["tag"]]
            self.rd_bytes[beat["tag"]].append(beat["data"])
            assert beat["last"] == (len(self.rd_bytes[beat["tag"]]) == req["len"]), \
                f"{req}: last on byte {len(self.rd_bytes[beat['tag']])}"
            self.rd_open = None if beat["last"] else beat["tag"]
        while self.cpl.queue:
            c = self.cpl.queue.popleft()
            req = self.outstanding.pop(c["tag"], None)
            assert req is not None, f"completion for unknown tag {c['tag']}"
            assert c["status"] == req["expect"], f"{req}: status {c['status']}"
            self.check_done(req)
            self.busy_ways.discard(req["way"])
            self.tags.insert(0, req["tag"])

    async def collect(self, limit: int = int(os.environ.get("ATS_CHAN_LIMIT", "2000000"))) -> None:
        """Wait until nothing is outstanding."""
        cycles = 0
        self.drain()
        while self.outstanding:
            await RisingEdge(self.dut.clk)
            self.drain()
            cycles += 1
            assert cycles < limit, f"no progress: outstanding {list(self.outstanding.values())[:4]}"

    def check_done(self, req: dict) -> None:
        got = bytes(self.rd_bytes.pop(req["tag"], []))
        if req["expect"] == ST_BAD:
            assert not got, f"{req}: a rejected request returned data"
        elif req["op"] == OP_READ:
            exp = self.model.read(req["way"], req["row"], req["col"], req["len"])
            assert len(got) == req["len"], f"{req}: {len(got)} bytes returned"
            if exp is not None:
                assert got == exp, f"{req}: data differs at byte " \
                    f"{next(i for i in range(len(exp)) if got[i] != exp[i])}"
        elif req["op"] in (OP_RDID, OP_PARAM):
            assert len(got) == req["len"], f"{req}: {len(got)} bytes returned"
            req["data"] = got
        else:
            assert not got, f"{req}: unexpected read data"
        self.done.append(req)

    async def two_pages(self) -> dict[int, bytes]:
        """RESET, ERASE block 0 and PROGRAM its page 0 with random data on ways 0 and 1 (in the
        model too); returns the data per way."""
        for w in (0, 1):
            self.issue(OP_RESET, w)
        await self.collect()
        for w in (0, 1):
            self.issue(OP_ERASE, w, row=0)
            self.model.erase(w, 0)
        await self.collect()
        data = {w: bytes(self.rng.getrandbits(8) for _ in range(self.page_bytes)) for w in (0, 1)}
        for w in (0, 1):
            self.issue(OP_PROG, w, row=0, n=self.page_bytes, data=data[w])
            self.model.program(w, 0, data[w])
        await self.collect()
        return data

    def violations(self) -> int:
        return sum(int(getattr(self.dut, f"viol_{w}").value) for w in range(self.ways))


def seeded(dut) -> random.Random:
    # a string seed: reproducible across processes (str hash() is salted per process)
    return random.Random(f"{os.environ.get('ATS_SEED', '1')}:{dut._name}")


LONG = bool(os.environ.get("ATS_LONG"))
# the short run takes the two extreme stream conditions; ATS_LONG=1 takes all four
STREAMS = [(i, b) for i in (False, True) for b in (False, True)] if LONG else [(False, False), (True, True)]


@cocotb.test()
@cocotb.parametrize((("idle", "backpressure"), STREAMS))
async def run_identify(dut, idle, backpressure):
    """READ ID and READ PARAMETER PAGE on every way: ONFI signature and the die's geometry."""
    tb = TB(dut, seeded(dut), idle, backpressure)
    await tb.reset()
    for w in range(tb.ways):
        tb.issue(OP_RESET, w)
    await tb.collect()
    for w in range(tb.ways):
        tb.issue(OP_RDID, w, n=4)
    await tb.collect()
    for w in range(tb.ways):
        tb.issue(OP_PARAM, w, n=256)
    await tb.collect()
    for req in tb.done:
        if req["op"] == OP_PARAM:
            p = req["data"]
            assert p[0:4] == b"ONFI", f"parameter page signature {p[0:4]!r}"
            # ONFI parameter page: bytes per page @80, spare @84, pages per block @92, blocks @96
            assert int.from_bytes(p[80:84], "little") + int.from_bytes(p[84:86], "little") == tb.page_bytes
            assert int.from_bytes(p[92:96], "little") == tb.ppb
            assert int.from_bytes(p[96:100], "little") == tb.blocks
    assert tb.violations() == 0, f"{tb.violations()} protocol violations seen by the dies"


@cocotb.test()
@cocotb.parametrize((("idle", "backpressure"), STREAMS))
async def run_random_traffic(dut, idle, backpressure):
    """Erase, program in page order and read back (full and partial columns) on all ways at once."""
    tb = TB(dut, seeded(dut), idle, backpressure)
    rng = tb.rng
    await tb.reset()
    for w in range(tb.ways):
        tb.issue(OP_RESET, w)
    await tb.collect()
    n_ops = 400 if LONG else 50
    blocks_used = min(tb.blocks, 3)
    for _ in range(n_ops):
        free = [w for w in range(tb.ways) if w not in tb.busy_ways]
        while not free:
            await RisingEdge(dut.clk)
            tb.drain()
            free = [w for w in range(tb.ways) if w not in tb.busy_ways]
        w = rng.choice(free)
        blk = rng.randrange(blocks_used)
        kind = rng.random()
        nxt = tb.model.next_page.get((w, blk))
        if nxt is None or kind < 0.08 or nxt >= tb.ppb:
            tb.issue(OP_ERASE, w, row=blk * tb.ppb)
            tb.model.erase(w, blk)
        elif kind < 0.55:
            data = bytes(rng.getrandbits(8) for _ in range(tb.page_bytes))
            row = blk * tb.ppb + nxt
            tb.issue(OP_PROG, w, row=row, col=0, n=tb.page_bytes, data=data)
            tb.model.program(w, row, data)
        else:
            row = blk * tb.ppb + rng.randrange(max(nxt, 1))
            col = rng.choice([0, rng.randrange(tb.page_bytes)])
            n = rng.randint(1, tb.page_bytes - col)
            tb.issue(OP_READ, w, row=row, col=col, n=n)
        if rng.random() < 0.3:
            await ClockCycles(dut.clk, rng.randint(1, 50))
        await RisingEdge(dut.clk)
        tb.drain()
    await tb.collect()
    assert tb.violations() == 0, f"{tb.violations()} protocol violations seen by the dies"
    assert len(tb.done) >= n_ops
    dut._log.info(f"READ transfers suspended: {int(dut.susp_cnt.value)}")


@cocotb.test()
async def run_bad_requests(dut):
    """Unknown ops, a way out of range and zero/oversize lengths complete with BAD_REQ at once,
    touch no pin, and do not disturb a good request around them."""
    tb = TB(dut, seeded(dut), True, True)
    await tb.reset()
    tb.issue(OP_RESET, 0)
    await tb.collect()
    tb.issue(6, 0, expect_status=ST_BAD)
    tb.issue(7, 0, expect_status=ST_BAD)
    # way == WAYS is representable on the controller's port when WAYS is not a power of two (and 1)
    way_w = max(1, (tb.ways - 1).bit_length())
    if tb.ways < (1 << way_w):
        tb.issue(OP_READ, tb.ways, n=4, expect_status=ST_BAD)
    tb.issue(OP_READ, 0, n=0, expect_status=ST_BAD)
    tb.issue(OP_PROG, 0, n=tb.page_bytes + 1, expect_status=ST_BAD)
    tb.issue(OP_RDID, 0, n=4)
    await tb.collect()
    assert tb.violations() == 0


class BusMonitor:
    """Pin-level log of command bytes: (cycle, way, byte) for every WE# rising edge with CLE high."""

    def __init__(self, dut, ways: int):
        self.dut = dut
        self.ways = ways
        self.log: list[tuple[int, int, int]] = []
        self.cycle = 0
        cocotb.start_soon(self._run())

    async def _run(self):
        prev_we = 1
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1
            we = int(self.dut.we_n.value)
            if prev_we == 0 and we == 1 and int(self.dut.cle.value):
                ce = int(self.dut.ce_n.value)
                way = next(w for w in range(self.ways) if not (ce >> w) & 1)
                self.log.append((self.cycle, way, int(self.dut.dq_c.value)))
            prev_we = we


@cocotb.skipif(getattr(cocotb, "top", None) is not None and
                (int(cocotb.top.WAYS.value) < 2 or int(cocotb.top.T_CMDWIN.value) == 0),
                reason="needs 2 ways and T_CMDWIN > 0")
@cocotb.test()
async def run_cmd_window(dut):
    """T_CMDWIN: when a READ completes and the next READ for the freed die arrives within the
    window, its 00h-30h start goes on the bus before another READY way's transfer (05h-E0h), so its
    tR overlaps that transfer; with no request, the READY way waits at most the window."""
    tb = TB(dut, seeded(dut), False, False)
    win = int(dut.T_CMDWIN.value)
    mon = BusMonitor(dut, tb.ways)
    await tb.reset()
    await tb.two_pages()
    for follow_up in (True, False):
        # both dies read; way 0's transfer goes first (lowest ready way), way 1 waits READY
        t0 = tb.issue(OP_READ, 0, row=0, n=tb.page_bytes)
        tb.issue(OP_READ, 1, row=0, n=tb.page_bytes)
        while t0 in tb.outstanding:
            await RisingEdge(dut.clk)
            tb.drain()
        # the fetch transaction ends (T_RHW) with CE# high: the bus is free from here
        all_high = (1 << tb.ways) - 1
        while int(dut.ce_n.value) != all_high:
            await RisingEdge(dut.clk)
            tb.drain()
        free_cycle = mon.cycle
        n_log = len(mon.log)
        if follow_up:
            # the next READ for die 0 comes win/2 cycles after the bus went free (a scheduler's
            # completion-to-dispatch latency); without the window way 1's fetch would be first
            await ClockCycles(dut.clk, win // 2)
            tb.issue(OP_READ, 0, row=0, n=tb.page_bytes)
        await tb.collect()
        after = [(c, w, b) for (c, w, b) in mon.log[n_log:]]
        first = after[0]
        if follow_up:
            assert (first[1], first[2]) == (0, 0x00), \
                f"READ for the freed die did not start first: bus commands {after[:4]}"
            assert any(w == 1 and b == 0x05 for (_, w, b) in after), "way 1 never fetched"
        else:
            assert (first[1], first[2]) == (1, 0x05), f"expected way 1's fetch first: {after[:4]}"
            # the window, then T_CS and the first command cycle
            lag = first[0] - free_cycle
            assert win <= lag <= win + 20, f"READY way waited {lag} cycles of free bus (window {win})"
    assert tb.violations() == 0


@cocotb.skipif(getattr(cocotb, "top", None) is not None and
                (int(cocotb.top.WAYS.value) < 2 or int(cocotb.top.SUSP_MIN.value) == 0),
                reason="needs 2 ways and SUSP_MIN > 0")
@cocotb.test()
async def run_suspend(dut):
    """SUSP_MIN: way 0's page transfer is under way when a READ for idle way 1 arrives: the
    transfer stops at a byte boundary, way 1's 00h-30h goes on the bus (its tR overlaps the rest of
    way 0's transfer), way 0 resumes with 05h at the next column before way 1's data, and both
    pages are exact. A READ arriving with fewer than SUSP_MIN bytes left waits for the end."""
    tb = TB(dut, seeded(dut), False, False)
    mon = BusMonitor(dut, tb.ways)
    smin = int(dut.SUSP_MIN.value)
    await tb.reset()
    data = await tb.two_pages()
    for late in (False, True):
        n_log = len(mon.log)
        t0 = tb.issue(OP_READ, 0, row=0, n=tb.page_bytes)
        # wait for way 0's data, then for `at` of its bytes
        at = tb.page_bytes - smin + 4 if late else 16
        while len(tb.rd_bytes.get(t0, [])) < at:
            await RisingEdge(dut.clk)
            tb.drain()
        s0 = int(dut.susp_cnt.value)
        t1 = tb.issue(OP_READ, 1, row=0, n=tb.page_bytes)
        await tb.collect()
        cmds = [(w, b) for (_, w, b) in mon.log[n_log:]]
        # way 0: 00h 30h 05h E0h; way 1: 00h 30h 05h E0h
        i1 = cmds.index((1, 0x00))
        if late:
            assert int(dut.susp_cnt.value) == s0, "suspended with fewer than SUSP_MIN bytes left"
            assert cmds[i1 - 2:i1] == [(0, 0x05), (0, 0xE0)], f"bus commands {cmds}"
        else:
            assert int(dut.susp_cnt.value) == s0 + 1, "way 0's transfer was not suspended"
            # way 0 fetch, way 1 start, way 0 resumes, then way 1's fetch
            assert cmds[i1:i1 + 6] == [(1, 0x00), (1, 0x30), (0, 0x05), (0, 0xE0), (1, 0x05), (1, 0xE0)], \
                f"bus commands {cmds}"
        assert t0 not in tb.outstanding and t1 not in tb.outstanding
    # random reads (random pages, columns and lengths) on every way, issued at random times while
    # transfers run: every byte checked against the model, suspensions required
    s0 = int(dut.susp_cnt.value)
    for w in range(2, tb.ways):
        tb.issue(OP_ERASE, w, row=0)
        tb.model.erase(w, 0)
        tb.issue(OP_PROG, w, row=0, n=tb.page_bytes, data=data[w % 2])
        tb.model.program(w, 0, data[w % 2])
        await tb.collect()
    for _ in range(60):
        free = [w for w in range(tb.ways) if w not in tb.busy_ways]
        while not free:
            await RisingEdge(dut.clk)
            tb.drain()
            free = [w for w in range(tb.ways) if w not in tb.busy_ways]
        col = tb.rng.choice([0, 0, tb.rng.randrange(tb.page_bytes)])
        tb.issue(OP_READ, tb.rng.choice(free), row=0, col=col, n=tb.rng.randint(1, tb.page_bytes - col))
        await ClockCycles(dut.clk, tb.rng.randint(1, 3000))
        tb.drain()
    await tb.collect()
    n_susp = int(dut.susp_cnt.value) - s0
    dut._log.info(f"random reads: {n_susp} transfers suspended")
    assert n_susp > 0, "no transfer suspended in the random reads"
    assert tb.violations() == 0


@pytest.mark.parametrize("ways", [1, 3])
def test_ats_nand_chan(ways):
    here = Path(__file__).parent
    run(toplevel="ats_nand_chan_tb",
        sources=block_sources("ats_nand_chan", "ats_nand_die", "ats_stream_check")
        + [here / "ats_nand_chan_tb.sv", here / "ats_nand_chan_bind.sv"],
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), f"-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        test_module="test_ats_nand_chan", test_dir=here, build_key=f"w{ways}",
        parameters={"WAYS": ways}, public={},    # the test reads only the TB top's signals
        waves=os.environ.get("ATS_WAVES") and str(ROOT / f"build/waves/nand_chan_w{ways}.fst"))
