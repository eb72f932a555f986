"""ats_nand_subsys (scheduler + NUM_CHAN page controllers) end to end against NUM_CHAN x WAYS NAND die
models (sim/nand/ats_nand_die.sv), issue 3 item 5: every command across channels and ways,
interleaving, checked against an independent model of the flash contents.

Reference: a plain-Python flash model here (what every page of every die holds, from NAND rules and
the completions: erase -> erased, program once in page order, failures -> undefined), the page
format of `atstb.nand_page_model` (metadata words, erased metadata), and the dispatch rules of
rtl/nand/README_sched.md (per-die order; HEAD only where its place is unambiguous). A die runs its
operations in per-die order; a READ frees its die when its page has left it (README_subsys.md), so
later operations of the die may complete before the READ's completion, never a READ before an
earlier one. The expected value of a READ is the model's value for the page when the first later
operation of its die completes while the READ is still outstanding (taken just before that
completion's effect), else when the READ's own completion arrives: the model then holds exactly what
the die held when it ran the READ. The DPI store of the dies is never read for expected values.

The test plays the page-buffer DMA: on each m_nfetch request it sends the slot's words on that
channel's s_ndata stream (random idle), and it checks m_ndata (pages of different channels may
interleave word by word; a channel's pages come whole, one after the other; tag / slot / chan and
the word index `widx` right, `last` exactly on a page's final word, a READ's words all before its
completion) and m_ncpl (random backpressure on both).
A directed part holds m_ncpl for 50 cycles while more than DEPTH READs arrive back to back: the
input skid register keeps a refused request for many cycles (s_nreq_ready low >= 2 cycles in a row).
ATS_NAND_SUBSYS_SRC: another copy of ats_nand_subsys.sv (mutation checks of the testbench).
Coverage that fails the test when missing: two dies of one channel busy at once, two channels moving
data at once (counters in the test top), completions out of issue order, and the statuses expected
from the traffic.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import zlib
from collections import defaultdict, deque
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time

from atstb.nand_page_model import (ERASED_META, ST_BAD, ST_EFAIL, ST_ERASED, ST_OK, ST_PFAIL,
                                   ST_UNCORR, Meta, bytes_to_words, words_to_bytes)
from atstb.runner import ROOT, block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, random_pause

CLK_NS = 10
LONG = bool(os.environ.get("ATS_LONG"))
# ATS_CPL_TRACE=<file>: append one line per completion (cycle, fields, its read words' CRC): a
# cycle-exact reference for changes that must not move timing (e.g. a module split)
CPL_TRACE = os.environ.get("ATS_CPL_TRACE")
OP_READ, OP_PROG, OP_ERASE = 0, 1, 2
OP_NAMES = {OP_READ: "READ", OP_PROG: "PROGRAM", OP_ERASE: "ERASE", 3: "op3"}
T = 8
MAXC = 4   # s_ndata<c> ports of the test top


class Flash:
    """What each page of each die holds: ("erased",), ("prog", data, meta), ("bad", allowed
    statuses) for undefined content. Keys (chan, way, block, page)."""

    def __init__(self, ppb: int, fresh_erased: bool):
        self.ppb = ppb
        self.pages: dict[tuple, tuple] = {}
        self.fresh_erased = fresh_erased
        self.erased_blocks: set[tuple] = set()

    def get(self, die, block, page):
        key = (*die, block, page)
        if key in self.pages:
            return self.pages[key]
        if (*die, block) in self.erased_blocks or self.fresh_erased:
            return ("erased",)
        return ("bad", (ST_ERASED, ST_UNCORR))

    def erase(self, die, block):
        for p in range(self.ppb):
            self.pages.pop((*die, block, p), None)
        self.erased_blocks.add((*die, block))

    def program(self, die, block, page, content):
        self.pages[(*die, block, page)] = content

    def undefined_block(self, die, block):
        self.erased_blocks.discard((*die, block))
        for p in range(self.ppb):
            self.pages[(*die, block, p)] = ("bad", (ST_UNCORR, ST_ERASED))


class TB:
    def __init__(self, dut, rng: random.Random, fresh_erased: bool = False):
        self.dut = dut
        self.rng = rng
        self.nch = int(dut.NUM_CHAN.value)
        self.ways = int(dut.WAYS.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.spare_bytes = int(dut.SPARE_BYTES.value)
        self.ppb = int(dut.PAGES_PER_BLOCK.value)
        self.blocks = int(dut.BLOCKS.value)
        self.depth = int(dut.DEPTH.value)
        self.dies = [(c, w) for c in range(self.nch) for w in range(self.ways)]
        self.flash = Flash(self.ppb, fresh_erased)
        cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
        p = lambda q: random_pause(rng, q)   # noqa: E731
        self.nreq = StreamSource(dut, "s_nreq", dut.clk, ["tag", "op", "chan", "way", "block", "page",
                                                          "head", "prio_read", "slot"], p(0.3))
        self.ndata = [StreamSource(dut, f"s_ndata{c}", dut.clk, ["data", "last"], p(0.2))
                      for c in range(MAXC)]
        self.fetch = StreamSink(dut, "m_nfetch", dut.clk, ["chan", "tag", "slot"], p(0.3))
        self.rdata = StreamSink(dut, "m_ndata", dut.clk, ["data", "last", "tag", "slot", "chan", "widx"],
                                p(0.3))
        self.cpl = StreamSink(dut, "m_ncpl", dut.clk, ["tag", "status", "corrected", "bad_mark"],
                              p(0.3))
        self.tags = list(range(256))
        rng.shuffle(self.tags)
        self.slots = list(range(256))
        rng.shuffle(self.slots)
        self.outstanding: dict[int, dict] = {}
        self.die_q: dict[tuple, deque] = defaultdict(deque)   # per die: outstanding, issue order
        self.next_page: dict[tuple, int] = {}                 # (chan, way, block) -> next page
        self.words: dict[int, list[int]] = defaultdict(list)
        self.open_tag: dict[int, int] = {}                    # per channel: page being received
        self.prev_beat = None                                 # (tag, last) of the last m_ndata word
        self.word_ilv = 0             # m_ndata words of one page right after a word of another open page
        self.done: list[dict] = []
        self.issue_no = 0
        self.inversions = 0           # completions that overtook an earlier-issued request
        self.read_overtaken = 0       # READs whose die completed a later request first (release)
        self.corrected_total = 0
        self.seq = 0
        self.flags: dict[str, int] = defaultdict(int)    # requests issued with HEAD / prio_read
        dut.reads_first.value = 0

    async def reset(self):
        self.dut.rst.value = 1
        self.dut.power_ok.value = 0
        await ClockCycles(self.dut.clk, 5)
        self.dut.power_ok.value = 1
        await ClockCycles(self.dut.clk, 2)
        self.dut.rst.value = 0
        for _ in range(20000):
            await RisingEdge(self.dut.clk)
            if int(self.dut.init_done.value):
                return
        raise AssertionError("init_done never rose (power-on RESET of the dies)")

    # ---- requests ---------------------------------------------------------------------------------
    def issue(self, op, chan, way, block=0, page=0, *, head=0, prio=0, words=None, check=None,
              expect=None) -> int:
        tag = self.tags.pop()
        slot = self.slots.pop()
        bad = expect == ST_BAD
        req = dict(op=op, chan=chan, way=way, block=block, page=page, tag=tag, slot=slot, head=head,
                   prio=prio, words=words, check=check, expect=expect, no=self.issue_no,
                   fetched=False)
        self.issue_no += 1
        self.flags["head"] += head
        self.flags["prio_read"] += prio
        self.outstanding[tag] = req
        if not bad:
            self.die_q[(chan, way)].append(req)
        self.nreq.send_nowait(tag=tag, op=op, chan=chan, way=way, block=block, page=page,
                              head=head, prio_read=prio, slot=slot)
        return tag

    def new_meta(self) -> Meta:
        self.seq += 1
        r = self.rng
        return Meta(lpn=r.getrandbits(31), txid=r.getrandbits(6), kind=r.randrange(4),
                    seq=(self.seq << 20) | r.getrandbits(20), epoch=r.getrandbits(32),
                    flags=r.getrandbits(2))

    def program(self, die, block, page, head=0, faults=False):
        data = self.rng.randbytes(self.page_bytes)
        meta = self.new_meta()
        words = bytes_to_words(data) + meta.to_words(reserved=self.rng.getrandbits(8))

        def check(req, c):
            if c["status"] == ST_OK:
                self.flash.program(die, block, page, ("prog", data, meta))
            elif c["status"] == ST_PFAIL and faults:
                self.flash.program(die, block, page, ("pfail", data, meta))
            else:
                raise AssertionError(f"{req}: PROGRAM status {c['status']}")
        self.next_page[(*die, block)] = page + 1
        return self.issue(OP_PROG, *die, block, page, head=head, words=words, check=check)

    def erase(self, die, block, head=0, faults=False, bad_block=False):
        def check(req, c):
            if c["status"] == ST_OK:
                assert not bad_block, f"{req}: erase of a factory bad block OK"
                self.flash.erase(die, block)
            elif c["status"] == ST_EFAIL and (faults or bad_block):
                self.flash.undefined_block(die, block)
                self.next_page[(*die, block)] = self.ppb      # not programmed before an erase
            else:
                raise AssertionError(f"{req}: ERASE status {c['status']}")
        self.next_page[(*die, block)] = 0
        return self.issue(OP_ERASE, *die, block, 0, head=head, check=check)

    def read(self, die, block, page, head=0, prio=0, allowed=None):
        def check(req, c):
            self.check_read(req, c, allowed)
        return self.issue(OP_READ, *die, block, page, head=head, prio=prio, check=check)

    def check_read(self, req, c, allowed):
        got = self.words.pop(req["tag"], [])
        st = c["status"]
        n_words = self.page_bytes // 4 + 5
        assert len(got) == n_words, f"{req}: {len(got)} words before the completion, expected {n_words}"
        assert self.open_tag.get(req["chan"]) != req["tag"], f"{req}: completion before the page's last word"
        content = req["snap"] if "snap" in req else \
            self.flash.get((req["chan"], req["way"]), req["block"], req["page"])
        if allowed is not None:
            content = ("bad", allowed)
        data, meta_w = words_to_bytes(got[:-5]), got[-5:]
        req["status"], req["bad_mark"] = st, c["bad_mark"]
        if content[0] == "erased":
            assert st == ST_ERASED, f"{req}: erased page read with status {st}"
            assert data == b"\xff" * self.page_bytes, f"{req}: erased page data not all FF"
            assert meta_w == ERASED_META.to_words(), f"{req}: erased metadata {meta_w}"
            assert c["corrected"] == 0
        elif content[0] == "prog":
            assert st == ST_OK, f"{req}: programmed page read with status {st}"
            if data != content[1]:
                i = next(i for i in range(len(data)) if data[i] != content[1][i])
                raise AssertionError(f"{req}: data differs from byte {i}")
            assert Meta.from_words(meta_w) == content[2], f"{req}: metadata {meta_w}"
            assert meta_w[4] >> 24 == 0
            assert c["corrected"] <= T * (self.page_bytes // 512 + 1)
            self.corrected_total += c["corrected"]
        elif content[0] == "pfail":
            # a failed program: never OK with wrong data
            assert st in (ST_OK, ST_UNCORR, ST_ERASED), f"{req}: failed-program page status {st}"
            if st == ST_OK:
                assert data == content[1] and Meta.from_words(meta_w) == content[2], \
                    f"{req}: failed-program page read OK with wrong data"
        else:
            assert st in content[1], f"{req}: undefined page read with status {st}, allowed {content[1]}"
        if not (content[0] in ("bad", "pfail") and st == ST_UNCORR):
            assert not c["bad_mark"] or req["page"] == 0, f"{req}: bad_mark on a readable page"

    # ---- the DMA and the checkers ---------------------------------------------------------------
    def drain(self) -> None:
        while self.fetch.queue:
            f = self.fetch.queue.popleft()
            req = self.outstanding.get(f["tag"])
            assert req is not None and req["op"] == OP_PROG and req["expect"] != ST_BAD, \
                f"fetch {f} for no good PROGRAM ({req})"
            assert f["chan"] == req["chan"] and f["slot"] == req["slot"], f"fetch {f} for {req}"
            assert not req["fetched"], f"{req}: fetched twice"
            req["fetched"] = True
            src = self.ndata[f["chan"]]
            for i, w in enumerate(req["words"]):
                src.send_nowait(data=w, last=int(i == len(req["words"]) - 1))
        while self.rdata.queue:
            b = self.rdata.queue.popleft()
            req = self.outstanding.get(b["tag"])
            assert req is not None and req["op"] == OP_READ, f"read data {b} for {req}"
            assert b["slot"] == req["slot"] and b["chan"] == req["chan"], f"read data {b} for {req}"
            assert self.open_tag.get(b["chan"]) in (None, b["tag"]), \
                f"word of tag {b['tag']} inside channel {b['chan']}'s page of tag {self.open_tag[b['chan']]}"
            n_words = self.page_bytes // 4 + 5
            assert b["widx"] == len(self.words[b["tag"]]), \
                f"read data {b}: index {b['widx']}, expected {len(self.words[b['tag']])}"
            assert b["last"] == (b["widx"] == n_words - 1), f"read data {b}: last on word {b['widx']}"
            if self.prev_beat is not None and self.prev_beat[0] != b["tag"] and not self.prev_beat[1]:
                self.word_ilv += 1
            self.prev_beat = (b["tag"], b["last"])
            self.words[b["tag"]].append(b["data"])
            if b["last"]:
                self.open_tag.pop(b["chan"], None)
            else:
                self.open_tag[b["chan"]] = b["tag"]
        while self.cpl.queue:
            c = self.cpl.queue.popleft()
            req = self.outstanding.pop(c["tag"], None)
            assert req is not None, f"completion for unknown tag {c}"
            if CPL_TRACE:
                with open(CPL_TRACE, "a") as f:
                    w = self.words.get(req["tag"], [])
                    f.write(f"{c['_cycle']} op={req['op']} chan={req['chan']} way={req['way']} "
                            f"tag={c['tag']} st={c['status']} corr={c['corrected']} "
                            f"bbm={c['bad_mark']} words={len(w)} "
                            f"wcrc={zlib.crc32(b''.join(x.to_bytes(4, 'little') for x in w)):08x}\n")
            if req["expect"] is not None:
                assert c["status"] == req["expect"], f"{req}: status {c['status']}"
                assert c["corrected"] == 0 and not c["bad_mark"]
                assert not req["fetched"], f"{req}: a rejected PROGRAM fetched its data"
            else:
                q = self.die_q[(req["chan"], req["way"])]
                before = list(q)[:list(q).index(req)]
                if not req["head"]:
                    # per-die order: only READs (their pages out of the die, decoding) may still be
                    # outstanding before a request; a READ completes after earlier READs
                    late = [r for r in before if not r["head"] and
                            (req["op"] == OP_READ or r["op"] != OP_READ)]
                    assert not late, f"{req}: completed before {late[0]} of its die (per-die order)"
                if req["op"] != OP_READ:
                    # earlier READs of the die ran before this request: their value is fixed now
                    for r in before:
                        if r["op"] == OP_READ and "snap" not in r:
                            r["snap"] = self.flash.get((r["chan"], r["way"]), r["block"], r["page"])
                            self.read_overtaken += 1
                q.remove(req)
                if req["op"] == OP_PROG:
                    assert req["fetched"], f"{req}: completed without fetching its data"
                if req["op"] != OP_READ:
                    assert not self.words.get(req["tag"]), f"{req}: read data for a non-READ"
                    assert c["corrected"] == 0 and not c["bad_mark"], f"{req}: {c}"
                req["check"](req, c)
            if req["expect"] is None and any(r["no"] < req["no"] and r["expect"] is None
                                             for r in self.outstanding.values()):
                self.inversions += 1
            req["cpl"] = c
            req["status"] = c["status"]
            self.tags.insert(0, req["tag"])
            self.slots.insert(0, req["slot"])
            self.done.append(req)

    async def collect(self, limit: int = 2_000_000) -> None:
        n = 0
        self.drain()
        while self.outstanding:
            await RisingEdge(self.dut.clk)
            self.drain()
            n += 1
            assert n < limit, f"no progress: {list(self.outstanding.values())[:3]}"

    async def tick(self, n: int = 1) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)
            self.drain()

    def n_out(self, die) -> int:
        return len(self.die_q[die])

    def block_busy(self, die, block) -> bool:
        """An outstanding PROGRAM / ERASE of this block on this die."""
        return any(r["block"] == block and r["op"] != OP_READ for r in self.die_q[die])

    # ---- random traffic ---------------------------------------------------------------------------
    async def random_ops(self, n_ops: int, blocks, per_die: int, faults=False, p_bad=0.0,
                         p_erase=0.08, p_prog=0.45, bad_blocks=frozenset()) -> None:
        rng = self.rng
        for _ in range(n_ops):
            # wait for room: the test keeps at most per_die requests per die, DEPTH in all
            while True:
                dies = [d for d in self.dies if self.n_out(d) < per_die]
                if dies and len(self.outstanding) < self.depth and self.tags:
                    break
                await self.tick()
            die = rng.choice(dies)
            if rng.random() < p_bad:
                self.bad_request()
            else:
                blk = rng.choice([b for b in blocks if (*die, b) not in bad_blocks])
                nxt = self.next_page.get((*die, blk))
                idle = self.n_out(die) == 0
                head = int(idle and rng.random() < 0.15)
                kind = rng.random()
                if nxt is None or nxt >= self.ppb or kind < p_erase:
                    self.erase(die, blk, head=head, faults=faults)
                elif kind < p_erase + p_prog:
                    self.program(die, blk, nxt, head=head, faults=faults)
                else:
                    pg = rng.randrange(nxt) if nxt and rng.random() < 0.7 else rng.randrange(self.ppb)
                    # HEAD may overtake the die's queued requests: only where that changes nothing
                    if not self.block_busy(die, blk) and rng.random() < 0.2:
                        head = 1
                    self.read(die, blk, pg, head=head, prio=int(rng.random() < 0.4))
            if rng.random() < 0.05:
                self.dut.reads_first.value = int(rng.random() < 0.3)
            if rng.random() < 0.15:
                await self.tick(rng.randint(1, 300))
            await self.tick()
        await self.collect()

    def bad_request(self):
        """A request the subsystem must reject: chan / way / block / page out of range, op 3."""
        rng = self.rng
        c, w = rng.choice(self.dies)
        kinds = ["block", "page", "op"]
        if self.nch < 8:
            kinds.append("chan")
        if self.ways < 4:
            kinds.append("way")
        k = rng.choice(kinds)
        op = rng.choice([OP_READ, OP_PROG, OP_ERASE])
        blk, pg = rng.randrange(self.blocks), rng.randrange(self.ppb)
        if k == "block":
            blk = rng.randrange(self.blocks, 4096)
        elif k == "page":
            pg = rng.randrange(self.ppb, 256)
            op = rng.choice([OP_READ, OP_PROG])
        elif k == "op":
            op = 3
        elif k == "chan":
            c = rng.randrange(self.nch, 8)
        else:
            w = rng.randrange(self.ways, 4)
        words = [rng.getrandbits(32) for _ in range(self.page_bytes // 4 + 5)] if op == OP_PROG else None
        self.issue(op, c, w, blk, pg, head=int(rng.random() < 0.2), words=words, expect=ST_BAD)

    def coverage(self) -> dict:
        d = self.dut
        return dict(chan_ovl=int(d.cov_chan_ovl.value), die_ovl=int(d.cov_die_ovl.value),
                    inversions=self.inversions, head=self.flags["head"], word_ilv=self.word_ilv,
                    prio_read=self.flags["prio_read"], violations=int(d.viol_total.value),
                    spurious=int(d.spurious_cnt.value), read_overtaken=self.read_overtaken)


def seeded(dut, salt: str = "") -> random.Random:
    return random.Random(f"{os.environ.get('ATS_SEED', '1')}:{dut._name}:{salt}")


def faults_env() -> dict:
    out = {}
    for kv in os.environ.get("ATS_NAND_FAULTS", "").split(","):
        if "=" in kv:
            k, v = kv.split("=")
            out[k.strip()] = int(v)
    return out


def report(name: str, data: dict) -> None:
    """Statuses and coverage of a run, for the README: <build dir>/report_<name>.json."""
    out = {k: ({f"{o}/{s}": v for (o, s), v in val.items()} if k == "statuses" else val)
           for k, val in data.items()}
    (Path.cwd() / f"report_{name}.json").write_text(json.dumps(out, indent=1, sort_keys=True))


def status_counts(done) -> dict:
    st = defaultdict(int)
    for r in done:
        st[(OP_NAMES[r["op"]], r["status"])] += 1
    return dict(st)


# =====================================================================================================
@cocotb.test()
async def run_traffic(dut):
    """Random READ / PROGRAM / ERASE over every die, several requests queued per die, HEAD and
    prio_read flags, reads_first toggled, bad requests mixed in; random idle on s_nreq / s_ndata,
    random backpressure on m_nfetch / m_ndata / m_ncpl. Every READ is checked against the flash
    model; interleaving coverage is required."""
    tb = TB(dut, seeded(dut))
    big = tb.page_bytes > 1024        # the product geometry: a short run
    n_ops = int(os.environ.get("ATS_SUBSYS_OPS", "0")) or \
        (12 if big else 200 if LONG else 24 * len(tb.dies) + 30)
    await tb.reset()
    blocks = list(range(min(tb.blocks, 2 if big else 3)))
    for d in tb.dies:                       # the blocks used start erased (model knows it)
        for b in blocks:                    # the last one HEAD: may overtake the others (any order)
            tb.erase(d, b, head=int(b == blocks[-1]))
    await tb.collect()
    # a burst on every die at once (programs then reads), then random traffic
    for d in tb.dies:
        for p in range(2):
            tb.program(d, 0, p)
    for d in tb.dies:
        for p in range(3):
            tb.read(d, 0, p, prio=p & 1)
    await tb.collect()
    # die release, directed: m_ndata held, a READ of a programmed page, then an ERASE of its block on
    # the same die. The ERASE runs once the READ's page has left the die and completes while that
    # page waits for m_ndata (its decode stalls); the READ must still return the programmed data
    # (its expected value is fixed just before the ERASE's completion is applied to the model)
    d0 = tb.dies[0]
    keep = tb.rdata.pause
    tb.rdata.set_pause(itertools.repeat(True))
    tb.read(d0, 0, 1)
    e_tag = tb.erase(d0, 0)
    for _ in range(100_000):
        await tb.tick()
        if e_tag not in tb.outstanding:
            break
    tb.rdata.set_pause(keep)
    await tb.collect()
    assert tb.read_overtaken >= 1, "the READ's completion was not overtaken by its die's ERASE"
    # directed bad requests (the random mix draws them too, but a short run may draw none)
    for _ in range(3):
        tb.bad_request()
    await tb.collect()
    await tb.random_ops(n_ops, blocks, per_die=3, p_bad=0.08)
    # directed, after the random traffic (its draws unchanged): BAD_REQs each followed at once by
    # good READs, s_nreq never idle: the scheduler takes no request while a BAD_REQ waits for
    # m_ncpl, so a refused request waits in the subsystem's input skid register and s_nreq_ready falls
    refused = [0]

    def count_refused() -> None:
        refused[0] += int(dut.s_nreq_valid.value) and not int(dut.s_nreq_ready.value)
    every_edge(dut.clk, count_refused)
    keep_nreq, keep_cpl = tb.nreq.pause, tb.cpl.pause
    tb.nreq.set_pause(None)
    tb.cpl.set_pause(itertools.cycle([True] * 6 + [False]))
    for _ in range(3):
        tb.bad_request()
        for k in range(4):                  # the scheduler takes two before the BAD_REQ is queued
            tb.read(tb.dies[k % len(tb.dies)], blocks[0], 0)
    await tb.collect()
    tb.nreq.set_pause(keep_nreq)
    tb.cpl.set_pause(keep_cpl)
    assert refused[0] > 0, "s_nreq_ready never fell with a request waiting (the input skid register full)"
    # directed, a long hold of the skid register: m_ncpl fully stalled for STALL cycles while more
    # than DEPTH good READs arrive with s_nreq never idle. The scheduler fills (its entries leave only
    # through m_ncpl) and refuses the next request for many cycles in a row: it must stay in the skid
    # register, offered again every cycle, s_nreq_ready low all along (the longest run of
    # valid && !ready >= 2), and complete exactly once, in per-die order (drain's checks), with the
    # flash model's data once m_ncpl runs again
    STALL = 50
    run = [0, 0, False]                   # current run, longest run, counting
    held = [0]

    def count_run() -> None:
        if not run[2]:
            return
        if int(dut.s_nreq_valid.value) and not int(dut.s_nreq_ready.value):
            run[0] += 1
            run[1] = max(run[1], run[0])
        else:
            run[0] = 0
        held[0] += 1
    every_edge(dut.clk, count_run)
    tb.nreq.set_pause(None)
    tb.cpl.set_pause(itertools.repeat(True))
    first = tb.issue_no
    n_dir = tb.depth + 8
    for k in range(n_dir):
        d = tb.dies[k % len(tb.dies)]
        tb.read(d, blocks[k % len(blocks)], k % tb.ppb)
    run[2] = True
    await tb.tick(STALL)
    tb.cpl.set_pause(keep_cpl)
    tb.nreq.set_pause(keep_nreq)
    quiet = 0
    n_done = len(tb.done)
    longest_quiet = 0
    while tb.outstanding:                 # a lost request: no completion for 200,000 cycles
        await tb.tick()
        quiet = 0 if len(tb.done) != n_done else quiet + 1
        longest_quiet = max(longest_quiet, quiet)
        n_done = len(tb.done)
        assert quiet < 200_000, f"requests never completed: {list(tb.outstanding.values())[:3]}"
    run[2] = False
    dir_done = [r["no"] for r in tb.done if r["no"] >= first]
    assert sorted(dir_done) == list(range(first, first + n_dir)), \
        f"directed requests completed {sorted(dir_done)}, issued {first}..{first + n_dir - 1}"
    dut._log.info(f"skid hold: longest run of s_nreq_ready low with a request waiting {run[1]} cycles; "
                  f"longest stretch without a completion {longest_quiet} cycles")
    assert run[1] >= 2, f"the skid register held a request at most {run[1]} cycle(s) in a row"
    st = status_counts(tb.done)
    cov = tb.coverage()
    dut._log.info(f"{len(tb.done)} requests, statuses {st}, coverage {cov}")
    report("run_traffic", dict(requests=len(tb.done), cycles=int(get_sim_time("ns")) // CLK_NS,
                               statuses=st, coverage=cov))
    assert st.get(("READ", ST_OK)) and st.get(("READ", ST_ERASED)), st
    assert st.get(("PROGRAM", ST_OK)) and st.get(("ERASE", ST_OK)), st
    assert sum(v for (o, s), v in st.items() if s == ST_BAD) > 0, st
    assert tb.corrected_total == 0, "corrections without bit flips"
    assert cov["violations"] == 0, f"{cov['violations']} protocol violations seen by the dies"
    assert cov["spurious"] == 0
    assert cov["inversions"] > 0, "no completion out of issue order"
    assert cov["head"] > 0 and cov["prio_read"] > 0, cov
    if tb.ways >= 2:
        assert cov["die_ovl"] > 0, "never two dies of one channel busy at once"
    if tb.nch >= 2:
        assert cov["chan_ovl"] > 0, "never two channels moving data at once"
        assert cov["word_ilv"] > 0, "the words of two channels' pages never interleaved on m_ndata"


@cocotb.test()
async def run_faults(dut):
    """With the die faults of ATS_NAND_FAULTS (fresh dies, one request per die at a time): bad-block
    scan of page 0 of every block (bad_mark on m_ncpl), erase of every block (bad ones fail), then
    random traffic where bit flips are corrected (data exact, corrected > 0), PROGRAM_FAIL /
    ERASE_FAIL come through, and a failed program / erase leaves pages that never read OK."""
    f = faults_env()
    tb = TB(dut, seeded(dut, str(sorted(f.items()))), fresh_erased=True)
    await tb.reset()
    bad = set()
    if f.get("bad_ppm"):
        for b in range(tb.blocks):
            for d in tb.dies:
                tb.read(d, b, 0, allowed=(ST_ERASED, ST_UNCORR))
                while len(tb.outstanding) >= tb.depth:
                    await tb.tick()
        await tb.collect()
        scans = [r for r in tb.done if r["op"] == OP_READ]
        for r in scans:
            assert (r["status"] == ST_ERASED) == (not r["bad_mark"]), f"{r}: scan {r['status']}"
            if r["bad_mark"]:
                bad.add((r["chan"], r["way"], r["block"]))
        assert bad and len(bad) < len(scans), f"bad blocks {sorted(bad)}"
    for b in range(tb.blocks):
        for d in tb.dies:
            tb.erase(d, b, faults=True, bad_block=(*d, b) in bad)
            while len(tb.outstanding) >= tb.depth:
                await tb.tick()
    await tb.collect()
    for k in bad:
        tb.flash.undefined_block(k[:2], k[2])
    blocks = list(range(min(tb.blocks, 4)))
    await tb.random_ops(100 if LONG else 14 * len(tb.dies), blocks, per_die=1, faults=True,
                        p_erase=0.1, p_prog=0.45, bad_blocks=frozenset(bad))
    for _ in range(10):
        st = status_counts(tb.done)
        if (not f.get("pfail_ppm") or st.get(("PROGRAM", ST_PFAIL))) and \
                (not f.get("efail_ppm") or st.get(("ERASE", ST_EFAIL))):
            break
        await tb.random_ops(12, blocks, per_die=1, faults=True, p_erase=0.3, p_prog=0.6,
                            bad_blocks=frozenset(bad))
    st = status_counts(tb.done)
    cov = tb.coverage()
    dut._log.info(f"faults {f}: statuses {st}, corrected {tb.corrected_total}, bad blocks "
                  f"{len(bad)}, coverage {cov}")
    report("run_faults", dict(requests=len(tb.done), cycles=int(get_sim_time("ns")) // CLK_NS,
                              statuses=st, coverage=cov, corrected=tb.corrected_total,
                              bad_blocks=len(bad)))
    if f.get("flip_ppb"):
        assert tb.corrected_total > 0, "bit flips injected but nothing corrected"
    if f.get("pfail_ppm"):
        assert st.get(("PROGRAM", ST_PFAIL)), st
    if f.get("efail_ppm"):
        assert st.get(("ERASE", ST_EFAIL)), st
    assert cov["violations"] == 0 and cov["spurious"] == 0, cov


# =====================================================================================================
def _run(build_key, params, testcase, faults=None):
    here = Path(__file__).parent
    env = {"ATS_NAND_FAULTS": faults} if faults else {}
    # ATS_NAND_SUBSYS_SRC: run against another copy of ats_nand_subsys.sv (mutation checks)
    src = os.environ.get("ATS_NAND_SUBSYS_SRC")
    if src:
        build_key += "_" + Path(src).resolve().parent.name
    srcs = block_sources("ats_nand_subsys", "ats_nand_array", "ats_stream_check",
                         replace={"ats_nand_subsys.sv": Path(src).resolve()} if src else None)
    run(toplevel="ats_nand_subsys_tb",
        sources=srcs + [here / "ats_nand_subsys_tb.sv"],
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), "-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        test_module="test_ats_nand_subsys", test_dir=here, build_key=build_key, parameters=params,
        testcase=testcase, extra_env=env, public={},   # the tests read only the TB top's signals
        waves=os.environ.get("ATS_WAVES") and str(ROOT / f"build/waves/nand_subsys_{build_key}.fst"))


# (channels, ways, page bytes, spare bytes): small 1 KiB geometry, plus the product's 4 KiB + 224 B
# make test: 2 x 2, 1 x 3 and the product page; ATS_LONG=1 (make test-long) adds 3 x 1
CONFIGS = [(2, 2, 1024, 64), (1, 3, 1024, 64), (2, 1, 4096, 224)] + ([(3, 1, 1024, 64)] if LONG else [])
FAULTS = "flip_ppb=400000,pfail_ppm=250000,efail_ppm=200000,bad_ppm=250000"


def _params(nch, ways, pb, sb):
    return {"NUM_CHAN": nch, "WAYS": ways, "PAGE_BYTES": pb, "SPARE_BYTES": sb,
            "PAGES_PER_BLOCK": 8, "BLOCKS": 8, "DEPTH": 16}


@pytest.mark.parametrize("nch,ways,pb,sb", CONFIGS)
def test_ats_nand_subsys(nch, ways, pb, sb):
    _run(f"c{nch}w{ways}p{pb}", _params(nch, ways, pb, sb), ["run_traffic"])


def test_ats_nand_subsys_faults():
    _run("c2w2p1024", _params(2, 2, 1024, 64), ["run_faults"], FAULTS)
