"""ats_nand_page (page controller: BCH ECC, spare metadata, CRC-32C, erased pages) against WAYS
NAND die models (sim/nand/ats_nand_die.sv).

Reference: `atstb.nand_page_model` (page format, CRC-32C, metadata words; BCH parity from the
independent `atstb.bch_model`) and a plain-Python flash model here that says, from NAND rules only,
what every page holds (erased, programmed with data + metadata, a raw image, or undefined) and so
what a READ must return. Every test runs with random idle on s_cmd/s_wdata and random
backpressure on m_rdata/m_cpl (the long run adds the other combinations), and ends by checking that
no die saw a protocol violation (`viol_count` of every die is 0). Faults (bit flips, program/erase
failures, factory bad blocks) come from the die's ATS_NAND_FAULTS at run time, one simulation each.
"""
from __future__ import annotations

import os
import random
import zlib
from collections import defaultdict
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time

from atstb.nand_page_model import (ERASED_META, K, OP_ERASE, OP_PARAM, OP_PRAW, OP_PROG, OP_RDID,
                                   OP_READ, OP_RESET, OP_RRAW, ST_BAD, ST_EFAIL, ST_ERASED, ST_OK,
                                   ST_PFAIL, ST_UNCORR, Meta, PageFormat, bytes_to_words, flip,
                                   words_to_bytes)
from atstb.runner import ROOT, block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

CLK_NS = 10
LONG = bool(os.environ.get("ATS_LONG"))
# ATS_CPL_TRACE=<file>: append one line per completion (cycle, fields, its read words' cycles and
# CRC): a cycle-exact reference for changes that must not move timing (e.g. a module split)
CPL_TRACE = os.environ.get("ATS_CPL_TRACE")
T = 8   # BCH correction per codeword


class Flash:
    """What each page holds, from NAND rules: erase -> erased; program once, in page order."""

    def __init__(self, ppb: int, fresh_erased: bool = True):
        self.ppb = ppb
        self.pages: dict[tuple[int, int, int], tuple] = {}
        self.next_page: dict[tuple[int, int], int] = {}
        self.fresh_erased = fresh_erased

    def get(self, way, block, page):
        if (way, block, page) in self.pages:
            return self.pages[(way, block, page)]
        if (way, block) in self.next_page or self.fresh_erased:
            return ("erased",)
        return ("unknown", (ST_ERASED, ST_UNCORR))

    def erase(self, way, block):
        for p in range(self.ppb):
            self.pages.pop((way, block, p), None)
        self.next_page[(way, block)] = 0

    def nxt(self, way, block):
        if (way, block) not in self.next_page and self.fresh_erased:
            self.next_page[(way, block)] = 0
        return self.next_page.get((way, block))

    def program(self, way, block, page, content):
        self.pages[(way, block, page)] = content
        self.next_page[(way, block)] = max(self.next_page.get((way, block), 0), page + 1)

    def undefined_block(self, way, block, allowed):
        for p in range(self.ppb):
            self.pages[(way, block, p)] = ("unknown", allowed)
        self.next_page[(way, block)] = self.ppb   # nothing more until erased


class TB:
    def __init__(self, dut, rng: random.Random, idle: bool, backpressure: bool,
                 fresh_erased: bool = False):
        self.dut = dut
        self.rng = rng
        self.ways = int(dut.WAYS.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.spare_bytes = int(dut.SPARE_BYTES.value)
        self.ppb = int(dut.PAGES_PER_BLOCK.value)
        self.blocks = int(dut.BLOCKS.value)
        self.debug_ops = int(dut.DEBUG_OPS.value)
        self.fmt = PageFormat(self.page_bytes, self.spare_bytes)
        self.flash = Flash(self.ppb, fresh_erased)
        cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
        pause = (lambda p: random_pause(rng, p)) if idle else (lambda p: None)
        bp = (lambda p: random_pause(rng, p)) if backpressure else (lambda p: None)
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, ["tag", "op", "way", "block", "page", "slot"],
                                pause(0.3))
        self.wdata = StreamSource(dut, "s_wdata", dut.clk, ["data", "last"], pause(0.2))
        self.rdata = StreamSink(dut, "m_rdata", dut.clk, ["data", "tag", "slot", "last"], bp(0.3))
        self.cpl = StreamSink(dut, "m_cpl", dut.clk, ["tag", "slot", "status", "corrected",
                                                      "bad_mark", "rel", "rd"], bp(0.3))
        self.cmd.on_accept = self._cmd_accepted
        self.overlap = 0      # requests accepted on a way whose released READ has not completed
        self.tags = list(range(256))
        rng.shuffle(self.tags)
        self.outstanding: dict[int, dict] = {}
        self.busy_ways: set[int] = set()
        self.words: dict[int, list[dict]] = defaultdict(list)
        self.done: list[dict] = []
        self.corrected_total = 0
        self.seq = 0
        self.arr_base = self.array_reads()   # the pin counters run over the tests of a simulation

    def _cmd_accepted(self, item, cyc):
        if os.environ.get("ATS_PG_DEBUG"):
            self.dut._log.info(f"cmd accepted @{cyc}: {item}")
        if any(r["way"] == item["way"] and r.get("released") for r in self.outstanding.values()):
            self.overlap += 1

    async def reset(self, cycles: int = 5):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, cycles)
        self.dut.power_ok.value = 1
        await ClockCycles(self.dut.clk, 2)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 2)

    # ---- requests ---------------------------------------------------------------------------------
    def issue(self, op, way, block=0, page=0, words=(), check=None, expect=None) -> int:
        tag = self.tags.pop()
        slot = self.rng.getrandbits(8)
        req = dict(op=op, way=way, block=block, page=page, tag=tag, slot=slot, check=check,
                   expect=expect)
        self.outstanding[tag] = req
        if expect != ST_BAD:
            self.busy_ways.add(way)
        self.cmd.send_nowait(op=op, tag=tag, way=way, block=block, page=page, slot=slot)
        words = list(words)
        for i, w in enumerate(words):
            self.wdata.send_nowait(data=w, last=int(i == len(words) - 1))
        return tag

    def new_meta(self) -> Meta:
        self.seq += 1
        r = self.rng
        return Meta(lpn=r.getrandbits(32) & 0x7FFFFFFF, txid=r.getrandbits(6), kind=r.randrange(4),
                    seq=(self.seq << 20) | r.getrandbits(20), epoch=r.getrandbits(32),
                    flags=r.getrandbits(2))

    def program(self, way, block, page, data=None, meta=None, expect_any=False):
        """ECC PROGRAM; the model records the page when the completion says OK."""
        data = data if data is not None else self.rng.randbytes(self.page_bytes)
        meta = meta or self.new_meta()
        words = bytes_to_words(data) + meta.to_words(reserved=self.rng.getrandbits(8))

        def check(req, c, got):
            assert not got, f"{req}: PROGRAM returned data"
            if c["status"] == ST_OK:
                self.flash.program(way, block, page, ("prog", data, meta))
            elif c["status"] == ST_PFAIL and expect_any:
                # corrupted content: must not read OK unless ECC restored the exact page
                self.flash.program(way, block, page, ("inflight_cut", data, meta))
            else:
                raise AssertionError(f"{req}: PROGRAM status {c['status']}")
        # program order is a NAND rule: reserve the page now
        self.flash.next_page[(way, block)] = page + 1
        self.flash.pages[(way, block, page)] = ("inflight", data, meta)
        return self.issue(OP_PROG, way, block, page, words, check)

    def program_raw(self, way, block, page, image, expect_content):
        assert len(image) == self.page_bytes + self.spare_bytes

        def check(req, c, got):
            assert not got and c["status"] == ST_OK, f"{req}: PROGRAM_RAW status {c['status']}"
            self.flash.program(way, block, page, expect_content)
        self.flash.next_page[(way, block)] = page + 1
        return self.issue(OP_PRAW, way, block, page, bytes_to_words(image), check)

    def erase(self, way, block, expect_any=False):
        def check(req, c, got):
            assert not got
            if c["status"] == ST_OK:
                self.flash.erase(way, block)
            elif c["status"] == ST_EFAIL and expect_any:
                self.flash.undefined_block(way, block, (ST_UNCORR, ST_ERASED))
            else:
                raise AssertionError(f"{req}: ERASE status {c['status']}")
            req["status"] = c["status"]
        return self.issue(OP_ERASE, way, block, 0, (), check)

    def read(self, way, block, page, expect=None):
        """ECC READ, checked against the flash model (or `expect` = content tuple) at completion."""
        content = expect if expect is not None else self.flash.get(way, block, page)

        def check(req, c, got):
            self.check_read(req, c, got, content)
        return self.issue(OP_READ, way, block, page, (), check)

    def check_read(self, req, c, got, content):
        n_words = self.page_bytes // 4 + 5
        assert len(got) == n_words, f"{req}: {len(got)} words, expected {n_words}"
        data = words_to_bytes(got[:-5])
        meta_w = got[-5:]
        st = c["status"]
        req["status"], req["corrected"], req["bad_mark"] = st, c["corrected"], c["bad_mark"]
        # README_page: `corrected` is 0 unless the status is OK (a statistics counter summing it
        # never counts the corrections of a failed page)
        assert st == ST_OK or c["corrected"] == 0, f"{req}: status {st} with corrected {c['corrected']}"
        kind = content[0]
        if kind == "erased":
            assert st == ST_ERASED, f"{req}: erased page read with status {st}"
            assert data == b"\xff" * self.page_bytes, f"{req}: erased page data not all FF"
            assert meta_w == ERASED_META.to_words(), f"{req}: erased page metadata {meta_w}"
            assert c["corrected"] == 0
        elif kind == "prog":
            assert st == ST_OK, f"{req}: programmed page read with status {st} (corrected {c['corrected']})"
            self.expect_data(req, data, content[1])
            assert Meta.from_words(meta_w) == content[2], f"{req}: metadata {meta_w}"
            assert meta_w[4] >> 24 == 0, f"{req}: reserved metadata byte {meta_w[4] >> 24}"
            self.corrected_total += c["corrected"]
            assert c["corrected"] <= T * (self.page_bytes // K + 1)
        elif kind == "raw":
            _, exp_st, exp_data, exp_meta, exp_corr = content
            assert st == exp_st, f"{req}: raw-programmed page: status {st}, expected {exp_st}"
            if exp_st in (ST_OK, ST_ERASED):
                self.expect_data(req, data, exp_data)
                assert Meta.from_words(meta_w) == exp_meta, f"{req}: metadata {meta_w}"
            if exp_corr is not None:
                assert c["corrected"] == exp_corr, f"{req}: corrected {c['corrected']}, expected {exp_corr}"
        elif kind == "inflight_cut":
            # a PROGRAM cut by power loss: not started (erased), torn (uncorrectable) or complete
            assert st in (ST_ERASED, ST_UNCORR, ST_OK), f"{req}: torn page status {st}"
            if st == ST_OK:
                self.expect_data(req, data, content[1])
                assert Meta.from_words(meta_w) == content[2]
        elif kind == "erase_cut":
            # an ERASE cut by power loss: erased, undefined, or not started (old content)
            assert st in (ST_ERASED, ST_UNCORR, ST_OK), f"{req}: status {st} after a cut erase"
            if st == ST_OK:
                old = content[1]
                assert old[0] in ("prog", "inflight_cut"), f"{req}: OK read of {old[0]} content"
                self.expect_data(req, data, old[1])
                assert Meta.from_words(meta_w) == old[2]
        elif kind == "unknown":
            assert st in content[1], f"{req}: undefined page read with status {st}, allowed {content[1]}"
        else:
            raise AssertionError(f"model has no content for {req}: {content}")

    def expect_data(self, req, got: bytes, exp: bytes):
        if got != exp:
            i = next(i for i in range(len(exp)) if got[i] != exp[i])
            raise AssertionError(f"{req}: data differs from byte {i}: {got[i]:02x} != {exp[i]:02x}")

    # ---- completion handling ------------------------------------------------------------------------
    def drain(self) -> None:
        while self.rdata.queue:
            b = self.rdata.queue.popleft()
            req = self.outstanding.get(b["tag"])
            assert req is not None, f"read data for unknown tag {b['tag']}"
            assert b["slot"] == req["slot"], f"{req}: slot {b['slot']} on read data"
            assert not self.words[b["tag"]] or not self.words[b["tag"]][-1]["last"], \
                f"{req}: data after last"
            self.words[b["tag"]].append(b)
        while self.cpl.queue:
            c = self.cpl.queue.popleft()
            if os.environ.get("ATS_PG_DEBUG"):
                self.dut._log.info(f"cpl: {c}")
            if c["rel"]:
                # release (README_page.md "Completions"): a READ's page has left the die, the way
                # takes a new request; exactly one per READ, before its completion, no status
                req = self.outstanding.get(c["tag"])
                assert req is not None, f"release for unknown tag {c['tag']}"
                assert req["op"] == OP_READ and not req.get("released"), f"{req}: release {c}"
                assert (c["slot"], c["status"], c["corrected"], c["bad_mark"], c["rd"]) == \
                    (req["slot"], ST_OK, 0, 0, 0), f"{req}: release fields {c}"
                req["released"] = True
                self.busy_ways.discard(req["way"])
                continue
            req = self.outstanding.pop(c["tag"], None)
            assert req is not None, f"completion for unknown tag {c['tag']}"
            # a READ's completion (m_cpl_rd) comes after its release; nothing else is released
            is_rd = req["op"] == OP_READ and c["status"] != ST_BAD
            assert c["rd"] == int(is_rd) and bool(req.get("released")) == is_rd, \
                f"{req}: completion {c} (released {req.get('released')})"
            # README_page: `corrected` is 0 on every completion but a READ with status OK
            assert (req["op"] == OP_READ and c["status"] == ST_OK) or c["corrected"] == 0, \
                f"{req}: status {c['status']} with corrected {c['corrected']}"
            assert c["slot"] == req["slot"], f"{req}: completion slot {c['slot']}"
            beats = self.words.pop(req["tag"], [])
            if CPL_TRACE:
                with open(CPL_TRACE, "a") as f:
                    f.write(f"{c['_cycle']} op={req['op']} way={req['way']} tag={c['tag']} "
                            f"slot={c['slot']} st={c['status']} corr={c['corrected']} "
                            f"bbm={c['bad_mark']} words={len(beats)} "
                            f"wcyc={sum(b['_cycle'] for b in beats)} "
                            f"wcrc={zlib.crc32(b''.join(b['data'].to_bytes(4, 'little') for b in beats)):08x}\n")
            if beats:
                assert beats[-1]["last"] == 1 and all(not b["last"] for b in beats[:-1]), \
                    f"{req}: `last` not on the final word only"
            got = [b["data"] for b in beats]
            if req["expect"] is not None:
                assert c["status"] == req["expect"], f"{req}: status {c['status']}"
            if req["check"] is not None:
                req["check"](req, c, got)
            req["cpl"] = c
            req["words"] = got
            if not is_rd:                    # (a READ freed its way at its release)
                self.busy_ways.discard(req["way"])
            self.tags.insert(0, req["tag"])
            self.done.append(req)

    async def collect(self, limit: int = 3_000_000) -> None:
        cycles = 0
        self.drain()
        while self.outstanding:
            await RisingEdge(self.dut.clk)
            self.drain()
            cycles += 1
            assert cycles < limit, f"no progress: outstanding {list(self.outstanding.values())[:3]}"

    async def free_way(self) -> int:
        while True:
            self.drain()
            free = [w for w in range(self.ways) if w not in self.busy_ways]
            if free:
                return self.rng.choice(free)
            await RisingEdge(self.dut.clk)

    async def wait_way(self, way: int) -> None:
        while way in self.busy_ways:
            await RisingEdge(self.dut.clk)
            self.drain()

    async def reset_dies(self):
        for w in range(self.ways):
            self.issue(OP_RESET, w, expect=ST_OK)
        await self.collect()

    def violations(self) -> int:
        return sum(int(getattr(self.dut, f"viol_{w}").value) for w in range(min(self.ways, 4)))

    def array_reads(self) -> list[int]:
        """Array reads started on each die so far (READ PAGE confirms 30h seen on the pins)."""
        return [int(getattr(self.dut, f"arr_rd_{w}").value) for w in range(min(self.ways, 4))]

    def check_array_reads(self, base: list[int] | None = None, done_from: int = 0) -> int:
        """Exactly one array read per READ / READ_RAW that reached the dies (not BAD_REQ), per way,
        counting the requests of tb.done[done_from:] against the pin counters minus `base`."""
        base = base or self.arr_base
        exp = [0] * len(base)
        for r in self.done[done_from:]:
            if r["op"] in (OP_READ, OP_RRAW) and r["cpl"]["status"] != ST_BAD and r["way"] < len(exp):
                exp[r["way"]] += 1
        got = [g - b for g, b in zip(self.array_reads(), base)]
        assert got == exp, f"array reads per way {got}, READ/READ_RAW requests per way {exp}"
        return sum(exp)

    # ---- random traffic -------------------------------------------------------------------------------
    async def random_ops(self, n_ops: int, blocks_used: int, p_erase=0.08, p_prog=0.5,
                         faults=False) -> None:
        rng = self.rng
        for _ in range(n_ops):
            w = await self.free_way()
            blk = rng.randrange(blocks_used)
            nxt = self.flash.nxt(w, blk)
            kind = rng.random()
            if nxt is None or nxt >= self.ppb or kind < p_erase:
                self.erase(w, blk, expect_any=faults)
            elif kind < p_erase + p_prog:
                self.program(w, blk, nxt, expect_any=faults)
            else:
                # mostly pages already programmed, sometimes any page (erased ones)
                pg = rng.randrange(nxt) if nxt and rng.random() < 0.7 else rng.randrange(self.ppb)
                self.read(w, blk, pg)
            if rng.random() < 0.2:
                await ClockCycles(self.dut.clk, rng.randint(1, 200))
            await RisingEdge(self.dut.clk)
            self.drain()
        await self.collect()


def seeded(dut, salt: str = "") -> random.Random:
    return random.Random(f"{os.environ.get('ATS_SEED', '1')}:{dut._name}:{salt}")


def faults_env() -> dict:
    out = {}
    for kv in os.environ.get("ATS_NAND_FAULTS", "").split(","):
        if "=" in kv:
            k, v = kv.split("=")
            out[k.strip()] = int(v)
    return out


# =====================================================================================================
async def traffic(dut, tb):
    base, done_from = tb.array_reads(), len(tb.done)
    await tb.reset()
    await tb.reset_dies()
    for w in range(tb.ways):
        tb.issue(OP_RDID, w, expect=ST_OK)
    await tb.collect()
    for req in tb.done[-tb.ways:]:
        assert len(req["words"]) == 1 and req["words"][0] & 0xFFFF == 0xD3A7, \
            f"READ ID words {req['words']}"
    # READ PARAMETER PAGE, raw: ONFI signature and the geometry
    tb.issue(OP_PARAM, tb.rng.randrange(tb.ways), expect=ST_OK)
    await tb.collect()
    p = words_to_bytes(tb.done[-1]["words"])
    assert len(p) == 256 and p[0:4] == b"ONFI", f"parameter page {p[:8]!r}"
    assert int.from_bytes(p[80:84], "little") == tb.page_bytes
    assert int.from_bytes(p[84:86], "little") == tb.spare_bytes
    assert int.from_bytes(p[92:96], "little") == tb.ppb
    # an erased page
    tb.erase(0, 1)
    await tb.collect()
    tb.read(0, 1, 3)
    await tb.collect()
    await tb.random_ops(160 if LONG else 45, min(tb.blocks, 3))
    progs = [r for r in tb.done if r["op"] == OP_PROG]
    reads = [r for r in tb.done if r["op"] == OP_READ]
    assert progs and reads and any(r["status"] == ST_OK for r in reads)
    assert any(r["status"] == ST_ERASED for r in reads)
    assert tb.corrected_total == 0, "corrections without any bit flip"
    assert tb.violations() == 0, f"{tb.violations()} protocol violations seen by the dies"
    dut._log.info(f"{tb.overlap} requests accepted on a way while its released READ was decoded")
    assert tb.overlap > 0, "no request overlapped a released READ's decode"
    return tb.check_array_reads(base, done_from)


@cocotb.test()
async def run_traffic(dut):
    """RESET and READ ID on every way; random erase / program / read over all ways at once; reads
    of programmed pages return data + metadata exactly (OK, corrected 0), of never-programmed pages
    in erased blocks ERASED with all-FF data and lpn 0xFFFFFFFF. Random idle and backpressure."""
    n = await traffic(dut, TB(dut, seeded(dut), True, True))
    dut._log.info(f"{n} READs, one array read each")


@cocotb.test(skip=not LONG)
async def run_traffic_streams(dut):
    """run_traffic with the other idle / backpressure combinations (ATS_LONG=1)."""
    tb = TB(dut, seeded(dut), False, False)
    for idle, bp in [(False, False), (True, False), (False, True)]:
        tb.cmd.set_pause(random_pause(tb.rng, 0.3) if idle else None)
        tb.wdata.set_pause(random_pause(tb.rng, 0.2) if idle else None)
        tb.rdata.set_pause(random_pause(tb.rng, 0.3) if bp else None)
        tb.cpl.set_pause(random_pause(tb.rng, 0.3) if bp else None)
        await traffic(dut, tb)


@cocotb.test()
async def run_raw_format_and_ecc(dut):
    """The programmed image (READ_RAW) equals the model's page format (data, 0xFF mark, metadata,
    CRC-32C, metadata and sector BCH parity, rest 0xFF). PROGRAM_RAW images with injected errors:
    up to T per codeword are corrected and counted exactly; > T in a codeword, a CRC mismatch with
    valid codewords, an all-zero (bad-block-like) page and a page with too many 0 bits all read
    UNCORRECTABLE; an erased image with a few 0 bits per codeword reads ERASED. UNCORRECTABLE pages
    whose other codewords were corrected report corrected = 0 (> T in a data or the metadata
    codeword, a wrong CRC, a torn page). A PROGRAM whose `last` flag is misplaced completes
    BAD_REQ and its page reads UNCORRECTABLE."""
    tb = TB(dut, seeded(dut), True, True)
    rng = tb.rng
    fmt = tb.fmt
    await tb.reset()
    await tb.reset_dies()
    if not tb.debug_ops:
        return
    for w in range(tb.ways):
        tb.erase(w, 0)
    await tb.collect()
    n_cw = fmt.sect + 1
    raw_words = (tb.page_bytes + tb.spare_bytes) // 4
    # 1. ECC PROGRAM, then READ_RAW: the image is exactly the model's
    data = rng.randbytes(tb.page_bytes)
    meta = tb.new_meta()
    tb.program(0, 0, 0, data, meta)
    await tb.collect()
    tag = tb.issue(OP_RRAW, 0, 0, 0, expect=ST_OK)
    await tb.collect()
    got = words_to_bytes(tb.done[-1]["words"])
    assert len(got) // 4 == raw_words
    exp = fmt.image(data, meta)
    if got != exp:
        i = next(i for i in range(len(exp)) if got[i] != exp[i])
        raise AssertionError(f"raw image differs at byte {i} (spare {i - tb.page_bytes}): "
                             f"{got[i]:02x} != {exp[i]:02x}")
    tb.read(0, 0, 0)
    await tb.collect()
    # 2. images with errors; each case: (image, expected content tuple)
    cases = []
    for n in range(6):
        d, m = rng.randbytes(tb.page_bytes), tb.new_meta()
        img = fmt.image(d, m)
        total = 0
        bits = []
        for cw in range(n_cw):
            k = rng.randint(0, T)
            bits += rng.sample(fmt.codeword_bits(cw), k)
            total += k
        cases.append((flip(img, bits), ("raw", ST_OK, d, m, total)))
    # > T errors in one codeword
    d, m = rng.randbytes(tb.page_bytes), tb.new_meta()
    cw = rng.randrange(n_cw)
    cases.append((flip(fmt.image(d, m), rng.sample(fmt.codeword_bits(cw), rng.randint(T + 1, 40))),
                  ("raw", ST_UNCORR, d, m, None)))
    # > T errors in the metadata codeword
    cases.append((flip(fmt.image(d, m), rng.sample(fmt.codeword_bits(fmt.sect), T + 3)),
                  ("raw", ST_UNCORR, d, m, None)))
    # valid codewords, wrong CRC
    cases.append((fmt.image(d, m, crc_xor=1 << rng.randrange(32)), ("raw", ST_UNCORR, d, m, None)))
    # failed pages whose other codewords needed (and got) corrections: UNCORRECTABLE with
    # corrected = 0 (the corrections of a failed page are not reported)
    def correctable(img, skip):
        return flip(img, [b for c in range(n_cw) if c != skip
                          for b in rng.sample(fmt.codeword_bits(c), rng.randint(1, T))])
    #  > T in one data codeword, 1..T in every other codeword
    cw = rng.randrange(fmt.sect)
    img = correctable(fmt.image(d, m), cw)
    cases.append((flip(img, rng.sample(fmt.codeword_bits(cw), rng.randint(T + 1, 40))),
                  ("raw", ST_UNCORR, d, m, 0)))
    #  > T in the metadata codeword, 1..T in every data codeword
    img = correctable(fmt.image(d, m), fmt.sect)
    cases.append((flip(img, rng.sample(fmt.codeword_bits(fmt.sect), T + 3)), ("raw", ST_UNCORR, d, m, 0)))
    #  every codeword correctable (1..T each) but the CRC is wrong
    cases.append((correctable(fmt.image(d, m, crc_xor=1 << rng.randrange(32)), None),
                  ("raw", ST_UNCORR, d, m, 0)))
    #  torn: one data codeword erased (all 0xFF), the others valid with 1..T errors each
    cw = rng.randrange(fmt.sect)
    torn = bytearray(correctable(fmt.image(d, m), cw))
    for b in sorted({p // 8 for p in fmt.codeword_bits(cw)}):
        torn[b] = 0xFF
    cases.append((bytes(torn), ("raw", ST_UNCORR, d, m, 0)))
    # all zeros (what a factory bad block holds)
    cases.append((bytes(tb.page_bytes + tb.spare_bytes), ("raw", ST_UNCORR, d, m, None)))
    # erased with a few 0 bits in every codeword (at most the threshold)
    thr = int(dut.ERASED_THR.value)
    ff = b"\xff" * (tb.page_bytes + tb.spare_bytes)
    bits = [b for cw in range(n_cw) for b in rng.sample(fmt.codeword_bits(cw), rng.randint(0, thr))]
    cases.append((flip(ff, bits), ("raw", ST_ERASED, b"\xff" * tb.page_bytes, ERASED_META, 0)))
    # erased but one codeword has too many 0 bits: not an erased page, not a codeword either
    cw = rng.randrange(n_cw)
    cases.append((flip(ff, rng.sample(fmt.codeword_bits(cw), thr + 1 + rng.randint(0, 30))),
                  ("raw", ST_UNCORR, None, None, None)))
    rng.shuffle(cases)
    slots = [(w, p) for p in range(1, tb.ppb) for w in range(tb.ways)]
    assert len(slots) >= len(cases)
    for (img, content), (w, p) in zip(cases, slots):
        await tb.wait_way(w)
        tb.program_raw(w, 0, p, img, content)
    await tb.collect()
    for (img, content), (w, p) in zip(cases, slots):
        await tb.wait_way(w)
        tb.read(w, 0, p)
    await tb.collect()
    # 3. PROGRAM with `last` on the wrong word: BAD_REQ, and the page is poisoned (CRC)
    for w in range(tb.ways):
        tb.erase(w, 1)
    await tb.collect()
    d, m = rng.randbytes(tb.page_bytes), tb.new_meta()
    words = bytes_to_words(d) + m.to_words()
    cut = rng.choice([rng.randrange(len(words) - 1), len(words) - 3])
    tb.flash.next_page[(0, 1)] = 1
    tag = tb.issue(OP_PROG, 0, 1, 0, (), expect=ST_BAD)
    for i, w in enumerate(words):
        tb.wdata.send_nowait(data=w, last=int(i == cut))
    await tb.collect()
    tb.read(0, 1, 0, expect=("unknown", (ST_UNCORR,)))
    # the stream is still in step: a good PROGRAM after it
    tb.program(0, 1, 1)
    await tb.collect()
    tb.read(0, 1, 1)
    await tb.collect()
    assert tb.violations() == 0
    tb.check_array_reads()


@cocotb.test()
async def run_bad_requests(dut):
    """Way, block or page out of range and (DEBUG_OPS = 0) the raw ops complete BAD_REQ without
    touching the dies; a rejected PROGRAM's data words are consumed, so the good requests around
    them still work."""
    tb = TB(dut, seeded(dut), True, True)
    rng = tb.rng
    await tb.reset()
    await tb.reset_dies()
    tb.erase(0, 2)
    await tb.collect()
    pw = tb.page_bytes // 4 + 5
    rw = (tb.page_bytes + tb.spare_bytes) // 4
    bad = []
    bad.append((OP_READ, 0, tb.blocks, 0, 0))
    bad.append((OP_READ, 0, 0, tb.ppb, 0))
    bad.append((OP_ERASE, 0, rng.randrange(tb.blocks, 4096), 0, 0))
    bad.append((OP_PROG, 0, 0, rng.randrange(tb.ppb, 256), pw))
    bad.append((OP_PROG, 0, 4095, 0, pw))
    if (1 << max(1, (tb.ways - 1).bit_length())) > tb.ways:
        bad.append((OP_READ, tb.ways, 0, 0, 0))
        bad.append((OP_PROG, tb.ways, 0, 0, pw))
    if not tb.debug_ops:
        bad.append((OP_PRAW, 0, 0, 0, 0))
        bad.append((OP_RRAW, 0, 0, 0, 0))
    else:
        bad.append((OP_PRAW, 0, tb.blocks, 0, rw))
        bad.append((OP_RRAW, 0, 0, tb.ppb, 0))
    v0 = tb.violations()
    for op, w, b, p, nw in bad:
        tb.issue(op, w, b, p, [rng.getrandbits(32) for _ in range(nw)], expect=ST_BAD)
        if rng.random() < 0.5:
            await tb.wait_way(0)
            nxt = tb.flash.nxt(0, 2)
            if nxt < tb.ppb:
                tb.program(0, 2, nxt)
    await tb.collect()
    for p in range(tb.ppb):
        await tb.wait_way(0)
        tb.read(0, 2, p)
    await tb.collect()
    assert sum(1 for r in tb.done if r["cpl"]["status"] == ST_BAD) == len(bad)
    assert tb.violations() == v0 == 0
    tb.check_array_reads()


@cocotb.test()
async def run_faults(dut):
    """With the die faults of ATS_NAND_FAULTS: bit flips are corrected (data always exact,
    corrected > 0 over the run); PROGRAM_FAIL / ERASE_FAIL come through; factory bad blocks show
    bad_mark on page 0 (and fail every erase); a failed program or erase leaves pages that read
    UNCORRECTABLE (never OK with wrong data)."""
    f = faults_env()
    bad_ppm = f.get("bad_ppm", 0)
    # alone in its simulation: the dies are fresh (erased, factory bad blocks marked)
    tb = TB(dut, seeded(dut, str(sorted(f.items()))), True, True, fresh_erased=True)
    await tb.reset()
    await tb.reset_dies()
    blocks_used = tb.blocks
    if bad_ppm:
        # bad-block scan: page 0 of every block, before any erase
        for b in range(tb.blocks):
            for w in range(tb.ways):
                await tb.wait_way(w)
                tb.read(w, b, 0, expect=("unknown", (ST_ERASED, ST_UNCORR)))
        await tb.collect()
        marks = {(r["way"], r["block"]): r["bad_mark"] for r in tb.done if r["op"] == OP_READ}
        for r in tb.done:
            if r["op"] == OP_READ:
                assert (r["status"] == ST_ERASED) == (not r["bad_mark"]), f"{r}: scan {r['status']}"
        assert any(marks.values()) and not all(marks.values()), f"bad marks {marks}"
        # every bad block fails its erase; good blocks erase (EFAIL may hit them too)
        for (w, b), m in marks.items():
            await tb.wait_way(w)
            tb.erase(w, b, expect_any=True)
        await tb.collect()
        for r in tb.done:
            if r["op"] == OP_ERASE and marks[(r["way"], r["block"])]:
                assert r["status"] == ST_EFAIL, f"{r}: erase of a bad block"
        bad = {k for k, m in marks.items() if m}
        for (w, b) in bad:
            tb.flash.undefined_block(w, b, (ST_UNCORR, ST_ERASED))
    def counts():
        st = defaultdict(int)
        for r in tb.done:
            if r["op"] in (OP_PROG, OP_ERASE, OP_READ):
                st[(r["op"], r["cpl"]["status"])] += 1
        return st

    await tb.random_ops(150 if LONG else 60, min(blocks_used, 4), p_erase=0.06, p_prog=0.44,
                        faults=True)
    # the die draws its failures at random: go on (bounded) until each configured kind was seen
    for _ in range(12):
        st = counts()
        if (not f.get("pfail_ppm") or st[(OP_PROG, ST_PFAIL)]) and \
                (not f.get("efail_ppm") or st[(OP_ERASE, ST_EFAIL)]):
            break
        await tb.random_ops(20, min(blocks_used, 4), p_erase=0.3, p_prog=0.6, faults=True)
    st = counts()
    dut._log.info(f"faults {f}: (op, status) counts {dict(st)}, corrected {tb.corrected_total}")
    n_prog = sum(v for (op, _), v in st.items() if op == OP_PROG)
    n_erase = sum(v for (op, _), v in st.items() if op == OP_ERASE)
    dut._log.info(f"PROGRAM_FAIL {st[(OP_PROG, ST_PFAIL)]} of {n_prog} programs, "
                  f"ERASE_FAIL {st[(OP_ERASE, ST_EFAIL)]} of {n_erase} erases")
    tb.check_array_reads()
    if f.get("flip_ppb"):
        assert tb.corrected_total > 0, "bit flips injected but nothing corrected"
    if f.get("pfail_ppm"):
        assert st[(OP_PROG, ST_PFAIL)] > 0
    if f.get("efail_ppm"):
        assert st[(OP_ERASE, ST_EFAIL)] > 0
    assert tb.violations() == 0


@cocotb.test()
async def run_array_reads(dut):
    """One array read per page READ: each READ (programmed page, erased page, on every way, alone
    and with all ways at once) starts exactly one READ PAGE (00h-30h) on its die, counted on the
    pins; data and metadata are checked as everywhere. Logs the latency of a lone READ."""
    tb = TB(dut, seeded(dut), True, True)
    await tb.reset()
    await tb.reset_dies()
    for w in range(tb.ways):
        tb.erase(w, 0)
    await tb.collect()
    for w in range(tb.ways):
        for p in range(2):
            tb.program(w, 0, p)
    await tb.collect()
    # alone: one READ at a time, the pin counter of its die moves by exactly one
    for w in range(tb.ways):
        for p in (0, 1, 2):          # 2: erased
            before = tb.array_reads()
            t0 = get_sim_time("ns")
            tb.read(w, 0, p)
            await tb.collect()
            dt = int(get_sim_time("ns") - t0) // CLK_NS
            after = tb.array_reads()
            exp = [b + (1 if i == w else 0) for i, b in enumerate(before)]
            assert after == exp, f"READ way {w} page {p}: array reads {before} -> {after}"
            if w == 0 and p == 0:
                dut._log.info(f"lone READ (page {tb.page_bytes} + spare): {dt} cycles to completion")
    # all ways at once, several rounds: still one array read per READ
    base, done_from = tb.array_reads(), len(tb.done)
    for _ in range(3):
        for w in range(tb.ways):
            await tb.wait_way(w)
            tb.read(w, 0, tb.rng.randrange(3))
    await tb.collect()
    assert tb.check_array_reads(base, done_from) == 3 * tb.ways
    assert tb.violations() == 0


@cocotb.test()
async def run_power_cut(dut):
    """Power cut at random cycles under program/erase/read traffic on all ways: power off, reset
    the controller, power on, RESET the dies, read back: completed programs are intact, a program
    in flight reads UNCORRECTABLE (torn) or ERASED (not started) or intact (finished), an erase in
    flight leaves its block erased or undefined (never OK with wrong data), all else untouched;
    then the blocks are erased and used again. Three cuts a run."""
    tb = TB(dut, seeded(dut), True, True)
    rng = tb.rng
    await tb.reset()
    await tb.reset_dies()
    for w in range(tb.ways):           # the blocks used start erased (known to the model)
        for b in range(min(tb.blocks, 3)):
            await tb.wait_way(w)
            tb.erase(w, b)
    await tb.collect()
    for cut in range(8 if LONG else 4):
        # traffic, then a cut: at a random cycle, or while a die is busy programming / erasing
        n = rng.randint(8, 20)
        task = cocotb.start_soon(tb.random_ops(n, min(tb.blocks, 3), p_erase=0.1, p_prog=0.6))
        if cut % 2 == 0:
            await ClockCycles(dut.clk, rng.randint(500, 20000))
        else:
            for _ in range(200000):
                await RisingEdge(dut.clk)
                rb = int(dut.rb_n.value)
                if any(not (rb >> r["way"]) & 1 and r["op"] in (OP_PROG, OP_ERASE)
                       for r in tb.outstanding.values()):
                    break
            await ClockCycles(dut.clk, rng.randint(0, 120))
        task.cancel()
        dut.power_ok.value = 0
        await ClockCycles(dut.clk, rng.randint(1, 20))
        dut.rst.value = 1
        tb.cmd.flush()
        tb.wdata.flush()
        await ClockCycles(dut.clk, 3)
        tb.drain()
        # what was in flight: programs may be torn, erases leave the block undefined
        for req in tb.outstanding.values():
            w, b, p = req["way"], req["block"], req["page"]
            if req["op"] == OP_PROG:
                old = tb.flash.pages.get((w, b, p))
                tb.flash.pages[(w, b, p)] = ("inflight_cut", old[1], old[2])
                tb.flash.next_page[(w, b)] = tb.ppb     # erase before reuse
            elif req["op"] == OP_ERASE:
                for p in range(tb.ppb):
                    tb.flash.pages[(w, b, p)] = ("erase_cut", tb.flash.get(w, b, p))
                tb.flash.next_page[(w, b)] = tb.ppb
        tb.outstanding.clear()
        tb.busy_ways.clear()
        tb.words.clear()
        tb.rdata.queue.clear()
        tb.cpl.queue.clear()
        await tb.reset()
        await tb.reset_dies()
        # read back every page the model knows
        for (w, b, p) in sorted(tb.flash.pages):
            await tb.wait_way(w)
            tb.read(w, b, p)
        await tb.collect()
        # clean up: the model's undefined blocks are erased before reuse
        for (w, b) in list(tb.flash.next_page):
            if tb.flash.next_page[(w, b)] >= tb.ppb:
                await tb.wait_way(w)
                tb.erase(w, b)
        await tb.collect()
    torn = [r for r in tb.done if r["op"] == OP_READ and r["status"] == ST_UNCORR]
    dut._log.info(f"power cut: {len(torn)} torn/undefined page reads")
    assert torn, "no cut hit a program or an erase"
    assert tb.violations() == 0


# stream rules on the m_ ports of the page controller, its chan and its BCH encoder / decoder
# (rtl/common/ats_stream_check.sv, bound by module name)
STREAM_BINDS = [ROOT / "cocotb_tests" / d / f"{d}_bind.sv"
                for d in ("ats_nand_page", "ats_nand_chan", "ats_bch_enc", "ats_bch_dec")]


# =====================================================================================================
def _run(build_key, params, testcase=None, faults=None):
    here = Path(__file__).parent
    env = {"ATS_NAND_FAULTS": faults} if faults else {}
    # ATS_NAND_ECC_DIR: take the BCH and chan sources from another directory (e.g. a snapshot of
    # committed versions while those blocks are being edited); own build directory
    ecc, mine = os.environ.get("ATS_NAND_ECC_DIR"), {}
    if ecc and Path(ecc).resolve() != (ROOT / "rtl/nand").resolve():
        build_key += "_ecc"
        mine = {f: Path(ecc) / f for f in ("ats_gf_pkg.sv", "ats_bch_bm.sv", "ats_bch_enc.sv",
                                           "ats_bch_dec.sv", "ats_nand_chan.sv") if (Path(ecc) / f).exists()}
    run(toplevel="ats_nand_page_tb",
        sources=block_sources("ats_nand_page", "ats_nand_die", "ats_stream_check", replace=mine)
        + [here / "ats_nand_page_tb.sv"] + STREAM_BINDS,
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), "-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        test_module="test_ats_nand_page", test_dir=here, build_key=build_key, parameters=params,
        testcase=testcase, extra_env=env, public={},   # the tests read only the TB top's signals
        waves=os.environ.get("ATS_WAVES") and str(ROOT / f"build/waves/nand_page_{build_key}.fst"))


BASE = ["run_traffic", "run_traffic_streams", "run_raw_format_and_ecc", "run_bad_requests",
        "run_array_reads", "run_power_cut"]
# default: one build (3 ways: way 3 is representable and must be rejected; debug ops on);
# ATS_LONG adds 4 ways without the debug ops (ops 6/7 -> BAD_REQ)
CONFIGS = [(3, 1)] + ([(4, 0)] if LONG else [])
FAULTS = ["flip_ppb=400000", "pfail_ppm=300000,efail_ppm=200000", "bad_ppm=250000"]


@pytest.mark.parametrize("ways,debug_ops", CONFIGS)
def test_ats_nand_page(ways, debug_ops):
    tests = BASE if debug_ops else ["run_traffic", "run_bad_requests", "run_array_reads"]
    _run(f"w{ways}d{debug_ops}", {"WAYS": ways, "DEBUG_OPS": debug_ops}, tests)


@pytest.mark.parametrize("faults", FAULTS)
def test_ats_nand_page_faults(faults):
    _run("w3d1", {"WAYS": 3, "DEBUG_OPS": 1}, ["run_faults"], faults)
