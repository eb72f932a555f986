"""cocotb tests of ats_wbuf (write buffer) against the independent model `atstb.wbuf_model` and the
behavioural media `atstb.media_model` (timing-faithful, durable-prefix power cuts).

Drivers: s_disp (StreamSource, random idle), m_done (StreamSink, random backpressure), host memory
(m_hrd sink with backpressure, s_hrd source with idle, m_hwr sink with backpressure), media (m_wb,
m_wbd, m_rd sinks with backpressure; s_wbc, s_rdd sources with idle). Every command's status is
checked against the model, every READ's data word by word, and after every power cut the media's
durable log is checked for INV-LBA, INV-DUR and INV-ORDER (with PLP: every completed write durable;
with a capacitor budget below the slot count: pages held never above it, and a runtime budget drop
before a cut gives dump_short iff held > budget and an epoch-ordered prefix, run_plp_budget_drop).

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (longer campaigns), ATS_WBUF_TRACE=<file>
(append every handshake with its time: two RTL versions that behave the same give identical files).
Testpoints: rtl/wbuf/testplan.md.
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
from cocotb.utils import get_sim_time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.media_model import MediaConfig, MediaModel
from atstb.runner import block_sources, run
from atstb.tx_commit_ref import TxCommitRef
from atstb.streams import StreamSink, StreamSource, pause_gen
from atstb.wbuf_model import (BAD_FIELD, BAD_LBA, BAD_OP, BARRIER, FLUSH, FUA, MEDIA_ERROR, NO_SPACE, OK,
                              PROGRAM_FAIL, READ, RFLUSH, TRIM, WRITE, COMMIT, TX_ABORT, TX_BEGIN, TX_COMMIT, Cmd, PlpCutModel, WbufModel,
                              WritebackPolicyModel, decode_page, page_words)

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
DISP_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux", "epoch"]
DONE_FIELDS = ["tag", "status", "result"]
HRD_FIELDS = ["addr", "len"]
HRDD_FIELDS = ["data", "last"]
HWR_FIELDS = ["addr", "data", "last"]
NUM_LBAS = 64
TX_EMPTY_ST = 0x06         # docs/architecture.md section 2


class TB:
    def __init__(self, dut, seed: int, idle=False, backpressure=False, tx_aware=False):
        self.dut = dut
        self.rng = random.Random(seed)
        self.nslots = int(dut.NUM_SLOTS.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.plp = bool(int(dut.PLP.value))
        self.budget = int(dut.PLP_BUDGET_PAGES.value) if self.plp else 0   # capacitor, pages
        self.pw = self.page_bytes // 4
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.pwr_fail.value = 0
        dut.plp_budget.value = self.budget
        dut.no_space.value = 0
        # the no-space bit (README "No space"): intervals [set, cleared) in s_disp cycles; a
        # command accepted within NS_SLACK cycles of a change may see either value
        self.ns_on: list[list] = []
        # outside view of the media interface for the PLP budget checks: requests the media took
        # (m_wb handshakes) and completions taken (s_wbc beats, s_wbc_ready is 1), the latter
        # split at the cut (the first edge that samples pwr_fail: completions at or before it are
        # pages made durable on mains power)
        self.n_wb = 0
        self.n_wbc = 0
        self.n_wbc_cut = None
        self.n_wb_at_cut = 0
        self.held_max = 0
        self.cut_model: PlpCutModel | None = None   # fed every edge when set (run_plp_cut_budget_sweep)
        cocotb.start_soon(self._wb_monitor())
        rng = self.rng
        self.disp = StreamSource(dut, "s_disp", dut.clk, DISP_FIELDS, pause_gen(rng, idle))
        self.done = StreamSink(dut, "m_done", dut.clk, DONE_FIELDS, pause_gen(rng, backpressure))
        self.hrd = StreamSink(dut, "m_hrd", dut.clk, HRD_FIELDS, pause_gen(rng, backpressure))
        self.hrdd = StreamSource(dut, "s_hrd", dut.clk, HRDD_FIELDS, pause_gen(rng, idle))
        self.hwr = StreamSink(dut, "m_hwr", dut.clk, HWR_FIELDS, pause_gen(rng, backpressure))
        self.hwmem: dict[int, int] = {}          # host words written by READs, not yet checked
        self.hwr_idx = 0
        self.hwr_base = 0
        self.cfg = MediaConfig(page_bytes=self.page_bytes, num_chan=2, ways=2, preset="femu",
                               time_scale=1.5e-3, clk_ns=10.0)
        self.media = MediaModel(dut, dut.clk, self.cfg, rng,
                                wb_pause=pause_gen(rng, backpressure), wbd_pause=pause_gen(rng, backpressure),
                                wbc_pause=pause_gen(rng, idle), rd_pause=pause_gen(rng, backpressure),
                                rdd_pause=pause_gen(rng, idle), tx_aware=tx_aware)
        self.model = WbufModel(self.num_lbas, self.page_bytes, self.plp)
        self.hostmem: dict[int, int] = {}
        self.next_addr = 0x1000
        self.inflight: dict[int, Cmd] = {}     # tag -> command accepted or queued, not completed
        self.free_tags = list(range(256))
        self.epoch = 0
        self.cycle = 0
        self.counts = {"reads_ok": 0, "read_pages": 0, "write_pages": 0, "cuts": 0, "checked": 0, "read_cpl_ooo": 0}
        self.count_ooo = False
        self.disp.on_accept = self._on_accept
        self.model.no_space = self.ns_at
        self._gen = 0
        cocotb.start_soon(self._clock())
        if os.environ.get("ATS_WBUF_TRACE"):     # cycle-exact handshake trace (refactoring checks)
            cocotb.start_soon(self._trace(Path(os.environ["ATS_WBUF_TRACE"]), seed))

    NS_SLACK = 8

    def _on_accept(self, item, cyc) -> None:
        # a completion taken before this acceptance is applied first (a WRITE that ended NO_SPACE
        # gives its LBAs back their old contents before the next command's expectations)
        self.process_done()
        self.model.accept(item["_cmd"], cyc)

    def set_no_space(self, v: int) -> None:
        now = self.disp.cycle
        if v and (not self.ns_on or self.ns_on[-1][1] is not None):
            self.ns_on.append([now, None])
        elif not v and self.ns_on and self.ns_on[-1][1] is None:
            self.ns_on[-1][1] = now
        self.dut.no_space.value = v

    def ns_at(self, cyc: int):
        """The bit for a command accepted at `cyc`: True, False, or None next to a change."""
        for a, b in self.ns_on:
            if abs(cyc - a) <= self.NS_SLACK or (b is not None and abs(cyc - b) <= self.NS_SLACK):
                return None
            if a < cyc and (b is None or cyc < b):
                return True
        return False

    def ns_during(self, a: int, b: int) -> bool:
        """The bit was set at some time in [a - NS_SLACK, b]."""
        return any(s <= b and (e is None or e >= a - self.NS_SLACK) for s, e in self.ns_on)

    async def _clock(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1

    async def _wb_monitor(self):
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            if int(d.rst.value):
                continue
            wb_v, wb_r, wbc_v = int(d.m_wb_valid.value), int(d.m_wb_ready.value), int(d.s_wbc_valid.value)
            if wb_v and wb_r:
                self.n_wb += 1
            if wbc_v:
                self.n_wbc += 1
            if self.cut_model is not None:
                self.cut_model.sample(int(d.pwr_fail.value), int(d.plp_budget.value), wb_v, wb_r, wbc_v,
                                      int(d.dirty_pages.value))
            # pages held (not yet durable), outside view: dirty + staged request + taken by the
            # media and not completed; with PLP never above the capacitor budget
            held = (int(d.dirty_pages.value) + self.n_wb - self.n_wbc +
                    int(int(d.m_wb_valid.value) and not int(d.m_wb_ready.value)))
            self.held_max = max(self.held_max, held)
            if self.n_wbc_cut is None and int(d.pwr_fail.value):
                self.n_wbc_cut = self.n_wbc
                self.n_wb_at_cut = self.n_wb + int(wb_v and not wb_r)   # staged request: issued

    async def _trace(self, path: Path, seed: int):
        """ATS_WBUF_TRACE=<file>: append every handshake of m_done (tag, status, result), m_rd,
        m_wb and m_hwr with its simulation time, one line each: two builds of the same RTL
        behaviour give identical files (used to check a pure restructuring of the RTL)."""
        d = self.dut
        with open(path, "a") as f:
            f.write(f"tb seed {seed} t {get_sim_time('ns')}\n")
            while True:
                await RisingEdge(d.clk)
                t = get_sim_time("ns")
                if int(d.m_done_valid.value) and int(d.m_done_ready.value):
                    f.write(f"{t} done {int(d.m_done_tag.value)} {int(d.m_done_status.value):#x} "
                            f"{int(d.m_done_result.value)}\n")
                if int(d.m_rd_valid.value) and int(d.m_rd_ready.value):
                    f.write(f"{t} rd {int(d.m_rd_lpn.value)} {int(d.m_rd_txid.value)} {int(d.m_rd_tag.value)}\n")
                if int(d.m_wb_valid.value) and int(d.m_wb_ready.value):
                    f.write(f"{t} wb {int(d.m_wb_slot.value)} {int(d.m_wb_lpn.value)} {int(d.m_wb_op.value)}\n")
                if int(d.m_hwr_valid.value) and int(d.m_hwr_ready.value):
                    f.write(f"{t} hwr {int(d.m_hwr_addr.value):#x} {int(d.m_hwr_data.value):#x} "
                            f"{int(d.m_hwr_last.value)}\n")
                if int(d.s_rdd_valid.value) and int(d.s_rdd_ready.value):
                    f.write(f"{t} rdd {int(d.s_rdd_tag.value)}\n")
                f.flush()

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(4):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self._gen += 1
        cocotb.start_soon(self._host_dma(self._gen))

    # ------------------------------------------------------------------ host memory
    def alloc(self, nbytes: int) -> int:
        a = self.next_addr
        self.next_addr += (nbytes + 0xFFF) & ~0xFFF
        return a & 0xFFFFFFFF

    async def _host_dma(self, gen):
        """Answer m_hrd requests from host memory, in order, on s_hrd."""
        while True:
            while not self.hrd.queue:
                await RisingEdge(self.dut.clk)
                if gen != self._gen:
                    return
            if gen != self._gen:
                return
            req = self.hrd.queue.popleft()
            n = req["len"] // 4
            for i in range(n):
                self.hrdd.send_nowait(data=self.hostmem.get(req["addr"] + 4 * i, 0xDEADBEEF),
                                      last=int(i == n - 1))

    # ------------------------------------------------------------------ commands
    def make(self, op: int, lba: int = 0, nlb: int = 0, flags: int = 0, attr: int = 0,
             ranges=None, epoch: int | None = None, nlb_raw: int | None = None) -> Cmd:
        tag = self.free_tags.pop(self.rng.randrange(len(self.free_tags)))
        c = Cmd(op=op, tag=tag, lba=lba, nlb=nlb, flags=flags, attr=attr,
                prio=self.rng.randrange(4), txid=self.rng.choice([0, 0, 0, 5]),
                epoch=self.epoch if epoch is None else epoch)
        if op in (WRITE, TRIM):
            c.version = self.model.new_version()
        if op == WRITE and lba + nlb < self.num_lbas:
            c.dptr = self.alloc((nlb + 1) * self.page_bytes)
            for p in range(nlb + 1):
                for i, w in enumerate(page_words(lba + p, c.version, self.pw)):
                    self.hostmem[c.dptr + p * self.page_bytes + 4 * i] = w
        elif op == READ:
            c.dptr = self.alloc((nlb + 1) * self.page_bytes)
        elif op == RFLUSH:
            c.ranges = list(ranges or [])
            c.nlb = len(c.ranges) - 1 if nlb_raw is None else nlb_raw
            c.aux = self.alloc(8 * max(1, len(c.ranges)))
            for k, (lo, n) in enumerate(c.ranges):
                self.hostmem[c.aux + 8 * k] = lo & 0xFFFFFFFF
                self.hostmem[c.aux + 8 * k + 4] = ((lo >> 32) & 0xFFFF) | (n << 16)
        if op == WRITE and flags & BARRIER:
            self.epoch = (self.epoch + 1) & 0xFFFF   # a BARRIER write belongs to the epoch it closes
        return c

    def send(self, c: Cmd) -> None:
        self.inflight[c.tag] = c
        self.disp.send_nowait(**c.fields(), _cmd=c)

    def rand_cmd(self, p_bad: float = 0.03) -> Cmd:
        rng = self.rng
        r = rng.random()
        lba = rng.randrange(self.num_lbas)
        if r < p_bad:
            kind = rng.choice(["op", "lba", "attr", "flag", "rf_n", "rf_lba"])
            if kind == "op":
                return self.make(rng.choice([2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 15]))
            if kind == "lba":
                return self.make(rng.choice([READ, WRITE, TRIM]), lba=self.num_lbas - rng.randrange(2),
                                 nlb=rng.randrange(1, 4))
            if kind == "attr":
                return self.make(rng.choice([READ, WRITE, FLUSH]), lba=lba, attr=3)
            if kind == "flag":
                return self.make(WRITE, lba=lba, flags=8)
            if kind == "rf_n":
                return self.make(RFLUSH, ranges=[(0, 1)] * 9)
            return self.make(RFLUSH, ranges=[(lba, 0), (self.num_lbas - 1, 3)])
        nlb = min(rng.choice([0, 0, 0, 1, 3]), self.num_lbas - 1 - lba)
        if r < 0.45:
            flags = (FUA if rng.random() < 0.15 else 0) | (BARRIER if rng.random() < 0.3 else 0)
            return self.make(WRITE, lba=lba, nlb=nlb, flags=flags)
        if r < 0.75:
            return self.make(READ, lba=lba, nlb=nlb)
        if r < 0.82:
            return self.make(TRIM, lba=lba, nlb=min(nlb, 1))
        if r < 0.90:
            return self.make(FLUSH)
        ranges = []
        for _ in range(rng.randint(1, 3)):
            lo = rng.randrange(self.num_lbas)
            ranges.append((lo, rng.randrange(min(4, self.num_lbas - lo))))
        return self.make(RFLUSH, ranges=ranges)

    # ------------------------------------------------------------------ completions
    def process_done(self) -> None:
        while self.done.queue:
            beat = self.done.queue.popleft()
            c = self.inflight.pop(beat["tag"], None)
            assert c is not None, f"completion of tag {beat['tag']} not in flight"
            assert c.accept_cycle is not None, f"tag {c.tag} completed before it was accepted"
            exp = c.expect_status
            st = beat["status"]
            if st == NO_SPACE and exp == OK and c.op != READ and self.ns_during(c.accept_cycle, self.disp.cycle):
                # accepted before the bit rose: ended by it while waiting (README "No space")
                exp = NO_SPACE
                kind = {WRITE: "fua" if c.flags & FUA else "write", TRIM: "trim", FLUSH: "flush",
                        RFLUSH: "rflush"}.get(c.op, str(c.op))
                if c.op in (WRITE, TRIM) and beat["result"] < c.nlb + 1:
                    kind += "_partial" if beat["result"] else "_none"
                self.counts[f"ns_waiting_{kind}"] = self.counts.get(f"ns_waiting_{kind}", 0) + 1
                if c.op in (WRITE, TRIM):
                    assert beat["result"] <= c.nlb + 1, f"tag {c.tag}: NO_SPACE result {beat['result']}"
            elif st in c.alt_status:
                exp = st
            if st == NO_SPACE and c.op in (FLUSH, RFLUSH):
                assert beat["result"] == 0, f"tag {c.tag}: NO_SPACE result {beat['result']}"
            if st == NO_SPACE and c.op in (WRITE, TRIM) and exp == c.expect_status:
                assert beat["result"] == 0, f"tag {c.tag}: refused, result {beat['result']}"
            self.model.completed(c, st, beat["_cycle"], beat["result"])
            if st == NO_SPACE:
                self.counts["no_space"] = self.counts.get("no_space", 0) + 1
            assert st == exp, f"tag {c.tag} op {c.op}: status {st:#x}, expected {exp:#x}"
            if c.op in (READ, WRITE, TRIM) and exp == OK:
                assert beat["result"] == c.nlb + 1, f"tag {c.tag}: result {beat['result']}"
            if c.op == READ and exp == OK:
                self.check_read(c)
            if self.count_ooo and c.op == READ and any(
                    o.op == READ and o.accept_cycle is not None and o.accept_cycle < c.accept_cycle
                    for o in self.inflight.values()):
                # READs complete in any order (README "READ"): this one passed an older, still open
                # READ. Counted only in the read-back after a cut, where every READ misses the empty
                # buffer: a hit or an error READ completes from the FSM and passed older READs with
                # in-order completion of misses too
                self.counts["read_cpl_ooo"] += 1
            if c.op == WRITE and exp == OK:
                self.counts["write_pages"] += c.nlb + 1
            if c.op == WRITE and st == NO_SPACE:
                self.counts["write_pages"] += beat["result"]      # the pages it put in the buffer
            self.free_tags.append(c.tag)

    def absorb_hwr(self) -> None:
        """Host writes into a host-memory image. Bursts are whole pages (one writer on m_hwr), with
        `addr` constant over the burst; pages of different READs may come in any order (the backend
        returns misses as their dies finish), so reads are checked by address, not by arrival."""
        while self.hwr.queue:
            b = self.hwr.queue.popleft()
            if self.hwr_idx == 0:
                self.hwr_base = b["addr"]
            assert b["addr"] == self.hwr_base, f"m_hwr addr {b['addr']:#x} changed inside a burst"
            a = (b["addr"] + 4 * self.hwr_idx) & 0xFFFFFFFF
            assert a not in self.hwmem, f"host word {a:#x} written twice"
            self.hwmem[a] = b["data"]
            assert b["last"] == int(self.hwr_idx == self.pw - 1), f"m_hwr last={b['last']} at word {self.hwr_idx}"
            self.hwr_idx = 0 if b["last"] else self.hwr_idx + 1

    def check_read(self, c: Cmd) -> None:
        self.absorb_hwr()
        for p in range(c.nlb + 1):
            for i in range(self.pw):
                a = (c.dptr + p * self.page_bytes + 4 * i) & 0xFFFFFFFF
                assert a in self.hwmem, f"READ tag {c.tag}: page {p} word {i} ({a:#x}) not written before its completion"
                b = {"data": self.hwmem.pop(a)}
                assert b["data"] == c.expect_data[p][i], \
                    f"READ tag {c.tag} lba {c.lba + p} word {i}: {b['data']:#x} != {c.expect_data[p][i]:#x}"
        self.counts["reads_ok"] += 1
        self.counts["read_pages"] += c.nlb + 1

    async def run_cmds(self, cmds_or_n, max_cycles: int = 400_000, stop_at: int | None = None,
                       window: int = 3) -> None:
        """Send commands (a list, or n random ones), keeping up to `window` queued, until all are
        completed (or until cycle `stop_at`)."""
        todo = list(cmds_or_n) if not isinstance(cmds_or_n, int) else None
        left = cmds_or_n if isinstance(cmds_or_n, int) else len(todo)
        start = self.cycle
        while True:
            self.process_done()
            if stop_at is not None and self.cycle >= stop_at:
                return
            while left and len(self.disp.queue) < window and len(self.free_tags) > 8:
                self.send(todo.pop(0) if todo is not None else self.rand_cmd())
                left -= 1
            if not left and not self.inflight:
                return
            assert self.cycle - start < max_cycles, \
                f"hang: {len(self.inflight)} commands in flight {sorted(self.inflight)[:8]} after {max_cycles} cycles"
            await RisingEdge(self.dut.clk)

    async def idle(self, n: int) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)
            self.process_done()

    # ------------------------------------------------------------------ power cut
    async def power_cut(self) -> dict:
        """Cut power now (PLP: after the dump), check the invariants on the media's durable log,
        then restart the device from it."""
        self.process_done()
        if self.plp:
            self.dut.pwr_fail.value = 1
            for _ in range(200_000):
                await RisingEdge(self.dut.clk)
                if int(self.dut.dump_done.value):
                    break
            else:
                raise TimeoutError("PLP dump did not finish")
            assert not int(self.dut.dump_short.value), "PLP budget ran out"
            assert self.held_max <= self.budget, f"PLP: {self.held_max} pages held, budget {self.budget}"
            for _ in range(3):
                await RisingEdge(self.dut.clk)
            self.process_done()
            post, dirty = self.plp_post_cut()
            # held at the cut = pages programmed on the capacitor + pages left dirty; admission
            # keeps it within the budget, so the dump finished and used at most the budget
            assert dirty == 0, f"PLP dump left {dirty} dirty pages"
            assert post <= self.budget, f"PLP: {post} pages programmed after the cut, budget {self.budget}"
        return await self.finish_cut()

    def plp_post_cut(self) -> tuple[int, int]:
        """After dump_done: (pages programmed after the cut = media requests not completed at the
        cut, all completed now; dirty pages left in the buffer)."""
        assert self.n_wbc_cut is not None
        assert self.n_wbc == self.n_wb, (self.n_wbc, self.n_wb)       # nothing outstanding
        return self.n_wb - self.n_wbc_cut, int(self.dut.dirty_pages.value)

    async def finish_cut(self, plp_check: bool | None = None) -> dict:
        """Take the media's durable log, check it (plp_check False: INV-LBA/ORDER/FUA-FLUSH rules
        without the PLP every-completed-write rule), reset the device and restart from the image."""
        log = self.media.cut()
        self._gen += 1                      # stops the host DMA responder
        self.dut.rst.value = 1
        self.dut.pwr_fail.value = 0
        self.disp.flush()
        self.hrdd.flush()
        saved = self.model.plp
        if plp_check is not None:
            self.model.plp = plp_check
        state, errs, cov = self.model.check_durable(log)
        self.model.plp = saved
        assert not errs, "after power cut:\n" + "\n".join(errs[:20])
        for c in self.inflight.values():
            self.free_tags.append(c.tag)
        self.inflight.clear()
        self.model.cut_reset(state)
        self.counts["cuts"] += 1
        self.counts["checked"] += cov["required"] + cov["order_checked"]
        for _ in range(2):        # beats sampled at the edge that applies the reset are not real
            await RisingEdge(self.dut.clk)
        for q in (self.done, self.hrd, self.hwr):
            q.queue.clear()
        self.hwmem.clear()
        self.hwr_idx = 0
        self.hrdd.flush()
        self.media.restart()
        self.dut.plp_budget.value = self.budget
        await self.reset()
        self.n_wb = self.n_wbc = 0
        self.n_wbc_cut = None
        return cov

    async def settle(self) -> None:
        """Wait until no writeback or read is moving, so counters on both sides agree."""
        quiet = 0
        while quiet < 20:
            await RisingEdge(self.dut.clk)
            self.process_done()
            moving = (int(self.dut.m_wb_valid.value) or int(self.dut.m_wbd_valid.value) or
                      int(self.dut.m_rd_valid.value) or self.media.receiving or self.media.wb.queue
                      or self.media.wbd.queue)
            quiet = 0 if moving else quiet + 1

    async def check_counters(self) -> None:
        await self.settle()
        d = self.dut
        m = self.media.stats
        assert int(d.cnt_wb_pages.value) == m.programs, (int(d.cnt_wb_pages.value), m.programs)
        assert int(d.cnt_wb_unmaps.value) == m.unmaps
        assert int(d.cnt_media_bytes.value) == m.bytes_programmed
        assert int(d.cnt_read_misses.value) == m.reads
        assert int(d.cnt_read_hits.value) + int(d.cnt_read_misses.value) == self.counts["read_pages"]
        assert int(d.cnt_host_pages.value) == self.counts["write_pages"]
        assert int(d.cnt_proto_err.value) == 0
        assert not self.media.errors, self.media.errors[:5]


def seed_of(dut, k: int = 0) -> int:
    return int(os.environ.get("ATS_SEED", "1")) * 1000 + k


def directed_sender(tb, tags):
    """send(op, lba, txid, flags, ver) -> (tag, dptr) for the directed tests: a WRITE's page
    (page_words of lba, ver) in host memory, a READ's buffer allocated; sent without waiting."""
    def send(op, lba=0, txid=0, flags=0, ver=None):
        t = next(tags)
        dptr = 0
        if op == WRITE:
            dptr = tb.alloc(tb.page_bytes)
            for i, w in enumerate(page_words(lba, ver, tb.pw)):
                tb.hostmem[dptr + 4 * i] = w
        elif op == READ:
            dptr = tb.alloc(tb.page_bytes)
        tb.disp.send_nowait(op=op, tag=t, lba=lba, nlb=0, txid=txid, flags=flags, attr=0, prio=0,
                            dptr=dptr, aux=0, epoch=0)
        return t, dptr
    return send


class Directed:
    """The directed tests' helpers over one TB: `send` (directed_sender), `done(t)` (the status and
    result of tag t's completion; every completion taken meanwhile is kept in `got` and its tag
    appended to `order`, the order in which they left), `run` (send, then its completion, status
    checked), `read` (a one-page READ whose data must be page_words(lba, ver), zeros for ver 0 /
    None) and `seen(t)` (t completed, taken or not)."""

    def __init__(self, tb, tags):
        self.tb, self.send = tb, directed_sender(tb, tags)
        self.got: dict[int, tuple] = {}
        self.order: list[int] = []

    def _take(self):
        q = self.tb.done.queue
        while q:
            b = q.popleft()
            self.order.append(b["tag"])
            self.got[b["tag"]] = (b["status"], b["result"])

    def seen(self, t) -> bool:
        self._take()
        return t in self.got

    async def done(self, t, max_cycles=20_000):
        for _ in range(max_cycles):
            self._take()
            if t in self.got:
                return self.got.pop(t)
            await RisingEdge(self.tb.dut.clk)
        raise AssertionError(f"tag {t}: no completion within {max_cycles} cycles (a hang)")

    async def run(self, op, lba=0, txid=0, flags=0, ver=None, exp=OK):
        t, dptr = self.send(op, lba, txid, flags, ver)
        st, res = await self.done(t)
        assert st == exp, f"op {op} lba {lba} txid {txid}: status {st:#x}, expected {exp:#x}"
        return res, dptr

    def check(self, lba, dptr, ver, txid=0):
        """The page a completed READ put at dptr is page_words(lba, ver) (zeros for ver 0 / None)."""
        tb = self.tb
        tb.absorb_hwr()
        w = [tb.hwmem.pop((dptr + 4 * i) & 0xFFFFFFFF) for i in range(tb.pw)]
        assert w == (page_words(lba, ver, tb.pw) if ver else [0] * tb.pw), \
            f"READ lba {lba} txid {txid}: version {w[1]} / {w[:2]}, expected {ver}"

    async def read(self, lba, txid, ver):
        res, dptr = await self.run(READ, lba, txid)
        assert res == 1, f"READ lba {lba} txid {txid}: result {res}, expected 1"
        self.check(lba, dptr, ver, txid)


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True, "heavy"])
async def run_random_mix(dut, idle, backpressure):
    """Random mix of every command; statuses, READ data, then a final FLUSH and a cut: all durable."""
    tb = TB(dut, seed_of(dut, 10 * int(bool(idle)) + {False: 0, True: 1, 'heavy': 2}[backpressure]), idle, backpressure)
    await tb.reset()
    n = 600 if LONG else 120
    await tb.run_cmds(n)
    await tb.check_counters()
    assert tb.counts["reads_ok"] > 0 and tb.counts["write_pages"] > 0
    # a final FLUSH: everything written so far must be durable after a cut
    f = tb.make(FLUSH)
    await tb.run_cmds([f])
    await tb.idle(20)
    await tb.check_counters()
    writes = [c for c in tb.model.cmds if c.op in (WRITE, TRIM) and c.status == OK]
    cov = await tb.power_cut()
    assert cov["required"] > 0
    # recovered contents read back: every read misses the (empty) buffer, and the misses are
    # outstanding together (the FSM goes on after each m_rd request; README "READ")
    tb.count_ooo = True
    await tb.run_cmds([tb.make(READ, lba=l, nlb=0) for l in range(0, tb.num_lbas, 3)])
    dut._log.info("mix: %d writes, counts %s, coverage %s, max pages held %d (PLP budget %d), "
                  "max reads outstanding %d, pages out of order %d", len(writes), tb.counts, cov, tb.held_max,
                  tb.budget, tb.media.stats.max_rd_outstanding, tb.media.stats.rd_reordered)
    assert tb.media.stats.max_rd_outstanding > 1, "read misses never overlapped"
    # the media model sends pages as their dies finish: the buffer matched them by read id
    assert tb.media.stats.rd_reordered > 0, "no page came back out of request order"
    # ... and READ completions leave as their pages arrive, not in the order the READs came
    assert tb.counts["read_cpl_ooo"] > 0, "no READ completed ahead of an older READ"
    tb.absorb_hwr()
    assert not tb.hwmem, f"{len(tb.hwmem)} host words written by no READ"
    if tb.plp:
        assert tb.held_max == min(tb.budget, tb.nslots), "admission limit never reached"


@cocotb.test()
@cocotb.parametrize(backpressure=[False, True])
async def run_power_cuts(dut, backpressure):
    """Random mixes cut at random cycles; after each cut INV-LBA/DUR/ORDER (PLP: all completed
    writes durable) on the media's durable log; the device restarts from that image."""
    tb = TB(dut, seed_of(dut, 50 + int(bool(backpressure))), True, backpressure)
    await tb.reset()
    n_cuts = 25 if LONG else 6
    total = {"required": 0, "order_checked": 0}
    for k in range(n_cuts):
        # one FUA write that completes in every segment, then a random stream cut at a random cycle
        await tb.run_cmds([tb.make(WRITE, lba=tb.rng.randrange(tb.num_lbas), flags=FUA)])
        stop = tb.cycle + tb.rng.randrange(300, 3000) * (1 + tb.pw // 32)   # longer for big pages
        await tb.run_cmds(10_000, stop_at=stop)
        cov = await tb.power_cut()
        for key in total:
            total[key] += cov[key]
        # after recovery: read some LBAs, they must hold the recovered versions
        await tb.run_cmds([tb.make(READ, lba=tb.rng.randrange(tb.num_lbas)) for _ in range(4)])
    dut._log.info("cuts: %d, checked %s, counts %s", n_cuts, total, tb.counts)
    assert total["required"] > 0 and tb.counts["reads_ok"] > 0


@cocotb.test()
async def run_no_space(dut):
    """No space (README "No space"): the media stops completing (write-backs held), a random stream
    fills the buffer until writes, FLUSH/FUA and RFLUSH wait; then the firmware's bit is set
    mid-stream: everything waiting completes (a waiting write NO_SPACE with the pages it put in the
    buffer, a waiter NO_SPACE) within a bound instead of hanging, every WRITE/TRIM/FLUSH/RFLUSH
    accepted while the bit is set completes NO_SPACE and changes nothing, READs return the
    acknowledged data (from the buffer); the bit cleared and the media released, writes proceed and
    nothing acknowledged was lost (READs, then a FLUSH and a cut: INV-LBA/DUR/ORDER). Against
    `WbufModel` (its no-space rules) with random idle and backpressure."""
    tb = TB(dut, seed_of(dut, 90), True, True)
    await tb.reset()
    await tb.run_cmds(40)
    rounds = 3 if LONG else 1
    for k in range(rounds):
        tb.media.hold = True                       # nothing becomes durable: the buffer fills up
        # a FUA write, a FLUSH and an RFLUSH that wait for durability (PLP: complete at once), then
        # a random stream until the buffer is full and the writes wait for slots
        lba = tb.rng.randrange(tb.num_lbas - 1)
        await tb.run_cmds([tb.make(WRITE, lba=lba, nlb=1, flags=FUA), tb.make(FLUSH),
                           tb.make(RFLUSH, ranges=[(0, tb.num_lbas - 1)])], stop_at=tb.cycle + 300, window=4)
        await tb.run_cmds(10_000, stop_at=tb.cycle + 3000 * (1 + tb.pw // 32), window=4)
        stuck = len(tb.inflight)
        assert stuck > 0, "nothing waited for the media"
        t0 = tb.cycle
        tb.set_no_space(1)
        await tb.run_cmds([], max_cycles=2000 * (1 + tb.pw // 32))   # every waiting command ends (was: a hang)
        t_end = tb.cycle - t0
        assert any(k.startswith("ns_waiting_") for k in tb.counts), "no waiting command ended NO_SPACE"
        n_ns = tb.counts.get("no_space", 0)
        # while set: a random stream; the writes are refused, READs see the acknowledged data
        await tb.idle(2 * tb.NS_SLACK)
        await tb.run_cmds(60, max_cycles=100_000)
        refused = [c for c in tb.model.cmds[-60:] if c.status == NO_SPACE]
        assert refused and all(c.op in (WRITE, TRIM, FLUSH, RFLUSH) for c in refused)
        assert all(c.status == NO_SPACE for c in tb.model.cmds[-60:]
                   if c.op in (WRITE, TRIM, FLUSH, RFLUSH) and c.expect_status == NO_SPACE)
        await tb.run_cmds([tb.make(READ, lba=l, nlb=0) for l in range(tb.num_lbas)], max_cycles=100_000)
        # space back: the bit cleared, the media completes again; writes proceed
        tb.set_no_space(0)
        tb.media.hold = False
        await tb.idle(2 * tb.NS_SLACK)
        before = tb.counts.get("no_space", 0)
        await tb.run_cmds(60)
        assert tb.counts.get("no_space", 0) == before, "NO_SPACE after the bit was cleared"
        dut._log.info("no space round %d: %d commands waiting, all ended in %d cycles (%d NO_SPACE), "
                      "then %d refused", k, stuck, t_end, n_ns, len(refused))
    f = tb.make(FLUSH)
    await tb.run_cmds([f])
    assert f.status == OK
    await tb.idle(20)
    await tb.check_counters()
    cov = await tb.power_cut()
    await tb.run_cmds([tb.make(READ, lba=l, nlb=0) for l in range(tb.num_lbas)])
    dut._log.info("no space: counts %s, coverage %s", tb.counts, cov)
    assert cov["required"] > 0


@cocotb.test()
async def run_errors(dut):
    """Every error status: BAD_OP, BAD_FIELD (attr, reserved flag, RFLUSH ranges > 8), BAD_LBA
    (READ/WRITE/TRIM beyond NUM_LBAS, LBA + NLB overflow, RFLUSH range, exact boundaries and high LBA
    bits with small low bits, next to valid commands at the boundary), MEDIA_ERROR (read), and
    PROGRAM_FAIL (FLUSH and FUA over a failed program); the buffer keeps working after each."""
    tb = TB(dut, seed_of(dut, 77), True, True)
    await tb.reset()
    L = tb.num_lbas
    cmds = [tb.make(op) for op in (2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 15)]
    cmds += [tb.make(READ, lba=1, attr=3), tb.make(WRITE, lba=1, flags=8), tb.make(FLUSH, attr=3),
             tb.make(TRIM, lba=0, flags=8 | FUA)]
    cmds += [tb.make(READ, lba=L), tb.make(WRITE, lba=L - 1, nlb=1), tb.make(TRIM, lba=L - 2, nlb=5),
             tb.make(READ, lba=(1 << 48) - 1, nlb=0xFFFF), tb.make(WRITE, lba=(1 << 48) - 2, nlb=3)]
    cmds += [tb.make(RFLUSH, ranges=[(0, 0)] * 9), tb.make(RFLUSH, ranges=[(2, 1), (L - 1, 1)]),
             tb.make(RFLUSH, ranges=[(1 << 40, 0)])]
    await tb.run_cmds(cmds)
    got = {c.expect_status for c in cmds}
    assert got == {BAD_OP, BAD_FIELD, BAD_LBA}, got
    # boundaries of the split range check (LBA bits above log2(NUM_LBAS) as a flat OR, the low bits
    # against NUM_LBAS - nlb): last valid page, whole device, nlb alone past the end, a high bit
    # with small low bits, RFLUSH ranges ending exactly at the last page and one past it
    bnd = [tb.make(READ, lba=L - 1), tb.make(READ, lba=0, nlb=L - 1), tb.make(WRITE, lba=L - 2, nlb=1),
           tb.make(READ, lba=0, nlb=L), tb.make(READ, lba=0, nlb=0xFFFF), tb.make(READ, lba=1 << 47),
           tb.make(WRITE, lba=(1 << 32) + 1), tb.make(TRIM, lba=L << 4),
           tb.make(RFLUSH, ranges=[(0, L - 1), (L - 1, 0)]), tb.make(RFLUSH, ranges=[(0, L)]),
           tb.make(RFLUSH, ranges=[(1 << 20, 0)])]
    await tb.run_cmds(bnd)
    got = [c.expect_status for c in bnd]
    assert got == [OK] * 3 + [BAD_LBA] * 5 + [OK, BAD_LBA, BAD_LBA], got
    # MEDIA_ERROR: a read miss the media answers with an error; the data words still arrive
    w = tb.make(WRITE, lba=5, flags=FUA)
    await tb.run_cmds([w, tb.make(FLUSH)])
    tb.media.read_err_lpns.add(7)
    r = tb.make(READ, lba=6, nlb=2)
    tb.send(r)
    while r.tag in tb.inflight:
        await RisingEdge(dut.clk)
        if tb.done.queue and tb.done.queue[0]["tag"] == r.tag:
            beat = tb.done.queue.popleft()
            assert beat["status"] == MEDIA_ERROR, beat
            assert len(tb.hwr.queue) == 3 * tb.pw
            tb.hwr.queue.clear()
            tb.inflight.pop(r.tag)
            tb.free_tags.append(r.tag)
    tb.media.read_err_lpns.clear()
    # PROGRAM_FAIL: the next program fails; a FUA write and a FLUSH waiting on it report it.
    # (With PLP, FUA and FLUSH complete at once: a later program failure only shows in cnt_wb_fail.)
    if tb.plp:
        await tb.run_cmds([tb.make(WRITE, lba=11, nlb=2), tb.make(READ, lba=10, nlb=3), tb.make(FLUSH)])
        return
    tb.media.fail_seqs.add(tb.media.seq)
    w2 = tb.make(WRITE, lba=9, flags=FUA)
    f2 = tb.make(FLUSH)
    for c in (w2, f2):
        c.expect_status = PROGRAM_FAIL
        tb.send(c)
    while w2.tag in tb.inflight or f2.tag in tb.inflight:
        await RisingEdge(dut.clk)
        while tb.done.queue:
            beat = tb.done.queue.popleft()
            c = tb.inflight.pop(beat["tag"])
            assert beat["status"] == PROGRAM_FAIL, (c.op, beat)
            tb.free_tags.append(c.tag)
    assert int(dut.cnt_wb_fail.value) == 1
    # still working: a write, a read back through the buffer, FLUSH
    await tb.run_cmds([tb.make(WRITE, lba=11, nlb=2), tb.make(READ, lba=10, nlb=3), tb.make(FLUSH)])
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_stray_read_pages(dut):
    """Read pages no read asked for (README "READ"): a page with an id that is not outstanding and
    an id-0xFF page while no DIFFWRITE base is being filled are each counted once in
    cnt_proto_err, consumed up to their last word and never written to host memory; real misses
    before and after them are served with the right data."""
    tb = TB(dut, seed_of(dut, 91), True, True)
    await tb.reset()
    await tb.run_cmds([tb.make(WRITE, lba=20, nlb=3, flags=FUA), tb.make(FLUSH)])
    for tag in (3, 0xFF):
        for i in range(tb.pw):
            tb.media.rdd.send_nowait(data=0xBAD00000 + i, last=int(i == tb.pw - 1), status=0, tag=tag)
    for _ in range(50 * tb.pw + 500):          # (the media source idles at random)
        await RisingEdge(dut.clk)
        if not tb.media.rdd.queue and int(dut.cnt_proto_err.value) == 2:
            break
    assert not tb.media.rdd.queue, f"{len(tb.media.rdd.queue)} stray words never taken (s_rdd hangs)"
    assert int(dut.cnt_proto_err.value) == 2, int(dut.cnt_proto_err.value)
    assert not tb.hwr.queue, f"a stray page reached host memory: {tb.hwr.queue[0]}"
    # real misses (never-written LBAs: zeros from the media) and the written ones, with data checked
    await tb.run_cmds([tb.make(READ, lba=40, nlb=2), tb.make(READ, lba=20, nlb=3)])
    assert tb.counts["reads_ok"] == 2
    assert int(dut.cnt_proto_err.value) == 2


@cocotb.test()
async def run_coalesce_rflush(dut):
    """Exact counters in a scenario the model fully determines (no background writeback): same-epoch
    overwrites coalesce, other epochs do not; read hits; RFLUSH writes only its ranges (and, for
    epoch order, dirty pages of earlier epochs); FLUSH writes the rest."""
    tb = TB(dut, seed_of(dut, 91), True, True)
    await tb.reset()
    thresh = -(-tb.nslots * int(dut.THRESH_PCT.value) // 100)
    n = min(4, thresh - 2)
    assert n >= 2, "configuration too small for this test"
    # epoch 0: n LBAs written, then each overwritten twice (same epoch: coalesced in place)
    cmds = [tb.make(WRITE, lba=l) for l in range(n)]
    cmds += [tb.make(WRITE, lba=l) for l in range(n) for _ in range(2)]
    cmds += [tb.make(READ, lba=0, nlb=n - 1)]
    await tb.run_cmds(cmds)
    assert int(dut.cnt_coalesced.value) == 2 * n
    assert int(dut.cnt_read_hits.value) == n and int(dut.cnt_read_misses.value) == 0
    assert tb.media.stats.programs == 0, "writeback below the threshold without a flush"
    # RFLUSH of LBA 1 only: exactly one program, the others stay dirty (PLP: none, the dump
    # covers it)
    await tb.run_cmds([tb.make(RFLUSH, ranges=[(1, 0)])])
    assert tb.media.stats.programs == (0 if tb.plp else 1), tb.media.stats.programs
    # a barrier write to LBA 0 (epoch 0 closes), then LBA 3 in epoch 1; RFLUSH of LBA 3 must also
    # write the dirty pages of epoch 0 (0, 2, ...) but nothing else
    await tb.run_cmds([tb.make(WRITE, lba=0, flags=BARRIER), tb.make(WRITE, lba=n - 1)])
    assert int(dut.cnt_coalesced.value) == 2 * n + 1
    before = tb.media.stats.programs
    await tb.run_cmds([tb.make(RFLUSH, ranges=[(n - 1, 0)])])
    # epoch 0 dirty: LBAs 0, 2..n-1 (n-1 pages); epoch 1: LBA n-1
    assert tb.media.stats.programs - before == (0 if tb.plp else (n - 1) + 1), tb.media.stats.programs - before
    await tb.run_cmds([tb.make(FLUSH)])
    await tb.idle(10)
    await tb.check_counters()
    cov = await tb.power_cut()
    assert cov["required"] >= n


@cocotb.test()
async def run_b2_preview(dut):
    """Write throughput by ordering mode (a preview of benchmark B2 on the behavioural media): the
    same stream of page writes (each LBA rewritten only after the buffer turned over, so coalescing
    does not help either mode) orderless, with every write its own epoch (BARRIER), and as
    transfer-and-flush (FLUSH after every write). Barrier mode must reach 90 % of orderless."""
    tb = TB(dut, seed_of(dut, 120), False, False)
    await tb.reset()
    n = 48 if not LONG else 200
    res = {}
    lba = 0
    for mode in ("orderless", "barrier", "xnf"):
        await tb.run_cmds([tb.make(FLUSH)])
        start = tb.cycle
        if mode == "xnf":
            # transfer-and-flush: the host waits for each write and its FLUSH before the next
            for _ in range(n):
                await tb.run_cmds([tb.make(WRITE, lba=lba)], window=1)
                await tb.run_cmds([tb.make(FLUSH)], window=1)
                lba = (lba + 1) % tb.num_lbas
        else:
            # the host keeps commands queued; one final FLUSH makes everything durable
            cmds = []
            for _ in range(n):
                cmds.append(tb.make(WRITE, lba=lba, flags=BARRIER if mode == "barrier" else 0))
                lba = (lba + 1) % tb.num_lbas
            await tb.run_cmds(cmds + [tb.make(FLUSH)])
        res[mode] = n / (tb.cycle - start)
    await tb.check_counters()
    await tb.power_cut()
    dut._log.info("B2 preview, writes per kcycle: %s; barrier/orderless %.2f, xnf/orderless %.2f",
                  {k: round(v * 1000, 2) for k, v in res.items()}, res["barrier"] / res["orderless"],
                  res["xnf"] / res["orderless"])
    assert res["barrier"] >= 0.9 * res["orderless"], res
    if not tb.plp:
        assert res["xnf"] < res["barrier"], res


def _top_param(name: str) -> int | None:
    """A parameter of the simulated top (None while pytest only collects this module)."""
    top = getattr(cocotb, "top", None)
    return None if top is None else int(getattr(top, name).value)


def _plp_budget_below(limit_param: str | None) -> bool:
    """PLP on with a budget below NUM_SLOTS (limit_param None) or below the writeback threshold."""
    if _top_param("PLP") in (None, 0):
        return False
    budget, slots = _top_param("PLP_BUDGET_PAGES"), _top_param("NUM_SLOTS")
    if limit_param is None:
        return budget < slots
    return budget < -(-slots * _top_param("THRESH_PCT") // 100)


@cocotb.skipif(getattr(cocotb, "top", None) is not None and not _plp_budget_below(None),
               reason="needs PLP with a budget below the slot count")
@cocotb.test()
async def run_plp_budget_drop(dut):
    """PLP with a capacitor budget below the slot count: the runtime budget `plp_budget` is lowered
    at a random time (to a random value, often below the pages held) and power is cut one to three
    cycles later. Checked from the outside: `dump_short` is high iff the pages held at the cut
    (programmed after the cut + left dirty) exceed the budget; exactly min(held, budget) pages are
    programmed after the cut (pages already in flight at the cut are never recalled: if they alone
    exceed the budget, just those); INV-LBA and INV-ORDER on the durable log (INV-DUR for what did
    not fit is the declared failure mode: the stream has no FLUSH/FUA/RFLUSH, whose early PLP
    completions would promise it); no protocol errors. Also: with the budget back, writes resume."""
    tb = TB(dut, seed_of(dut, 140), True, True)
    await tb.reset()
    rng = tb.rng
    n_cuts = 24 if LONG else 10
    stats = {"short": 0, "full": 0, "inflight_over": 0}
    for k in range(n_cuts):
        cmds = []
        for _ in range(40):
            c = tb.rand_cmd(p_bad=0.0)
            while c.op in (FLUSH, RFLUSH) or (c.op == WRITE and c.flags & FUA):
                tb.free_tags.append(c.tag)
                c = tb.rand_cmd(p_bad=0.0)
            cmds.append(c)
        stop = tb.cycle + rng.randrange(200, 2500)
        await tb.run_cmds(cmds, stop_at=stop)
        for c in cmds:                       # never sent: give the tag back
            if c.tag not in tb.inflight and c.status is None:
                tb.free_tags.append(c.tag)
        # pages held, seen from the outside: dirty + staged + media outstanding
        held_ext = int(dut.dirty_pages.value) + int(dut.m_wb_valid.value) + tb.media.outstanding
        out_ext = tb.media.outstanding + int(dut.m_wb_valid.value)
        lo = min(out_ext + 1, tb.budget)
        if k % 2 == 0:                       # below the pages held (when in-flight pages allow)
            budget = rng.randint(lo, max(lo, held_ext - 1))
        else:                                # enough: exactly the pages held, or more
            budget = max(lo, held_ext) if rng.random() < 0.5 else rng.randint(max(lo, held_ext), tb.budget)
        dut.plp_budget.value = budget
        for _ in range(rng.randint(1, 3)):
            await RisingEdge(dut.clk)
        tb.process_done()
        dut.pwr_fail.value = 1
        for _ in range(200_000):
            await RisingEdge(dut.clk)
            if int(dut.dump_done.value):
                break
        else:
            raise TimeoutError("PLP dump did not finish")
        short = int(dut.dump_short.value)
        for _ in range(3):
            await RisingEdge(dut.clk)
            assert int(dut.dump_done.value) and int(dut.dump_short.value) == short
        tb.process_done()
        post, dirty = tb.plp_post_cut()
        held = post + dirty
        inflight = tb.n_wb_at_cut - tb.n_wbc_cut          # requests taken by the media, not completed
        assert short == int(held > budget), f"cut {k}: dump_short {short}, held {held}, budget {budget}"
        assert post == max(min(held, budget), inflight), \
            f"cut {k}: {post} pages programmed after the cut, held {held}, budget {budget}, in flight {inflight}"
        assert int(dut.cnt_proto_err.value) == 0 and not tb.media.errors, tb.media.errors[:3]
        stats["short" if short else "full"] += 1
        stats["inflight_over"] += int(inflight > budget)
        dut._log.info("cut %d: held %d (outside view before the drop %d), budget %d, in flight %d, "
                      "programmed after the cut %d, short %d", k, held, held_ext, budget, inflight, post, short)
        await tb.finish_cut(plp_check=False)
        # recovered contents read back, then writes resume with the full budget
        await tb.run_cmds([tb.make(READ, lba=rng.randrange(tb.num_lbas)) for _ in range(3)] +
                          [tb.make(WRITE, lba=rng.randrange(tb.num_lbas), nlb=1) for _ in range(3)])
    dut._log.info("PLP budget drop: %s", stats)
    assert stats["short"] > 0 and stats["full"] > 0, stats


@cocotb.skipif(getattr(cocotb, "top", None) is not None and not _plp_budget_below(None),
               reason="needs PLP with a budget below the slot count")
@cocotb.test()
async def run_plp_cut_budget_sweep(dut):
    """The PLP budget rule at the cut (README "PLP", "The cut"), exactly, against `PlpCutModel` fed
    from the ports only: `plp_budget` is lowered d = 0, 1, 2, 3, 4, 6, 10, 20 cycles before the cut
    (d = 0: sampled at the cut edge itself) to a value often at or below the requests in flight;
    for d <= 3 each offset is also run twice aimed (writeback running, the cut edge ends the
    engine's issue cycle: a page decided in the cycle before the cut must not reach m_wb beyond
    the budget). After dump_done: requests presented after the cut = min(dirty at the cut,
    max(0, budget at the cut - in flight at the cut)), `dump_short` iff dirty pages are left;
    INV-LBA and INV-ORDER on the durable log. Writes and trims only (no FLUSH/FUA/RFLUSH)."""
    tb = TB(dut, seed_of(dut, 150), True, True)
    await tb.reset()
    rng = tb.rng
    EN_A = 0                                # engine state encoding (ats_wbuf eng_state_e)
    offsets = [0, 1, 2, 3, 4, 6, 10, 20]
    plan = [(d, aim) for _ in range(3 if LONG else 1) for d in offsets
            for aim in ((False, True, True) if d <= 3 else (False,))]
    rng.shuffle(plan)
    stats = {"short": 0, "full": 0, "zero_allowance": 0, "aimed_issue_at_cut": 0, "cuts": 0}
    tb.cut_model = PlpCutModel(tb.budget)
    for k, (d, aim) in enumerate(plan):
        cmds = []
        for _ in range(40):
            r = rng.random()
            lba = rng.randrange(tb.num_lbas)
            if r < 0.75:
                cmds.append(tb.make(WRITE, lba=lba, nlb=min(rng.choice([0, 0, 1]), tb.num_lbas - 1 - lba)))
            elif r < 0.85:
                cmds.append(tb.make(TRIM, lba=lba))
            else:
                cmds.append(tb.make(READ, lba=lba))
        await tb.run_cmds(cmds, stop_at=tb.cycle + rng.randrange(150, 1200))
        for c in cmds:                       # never sent: give the tag back
            if c.tag not in tb.inflight and c.status is None:
                tb.free_tags.append(c.tag)
        held_ext = int(dut.dirty_pages.value) + int(dut.m_wb_valid.value) + tb.media.outstanding
        out_ext = tb.media.outstanding + int(dut.m_wb_valid.value)
        r = rng.random()
        if r < 0.3:                          # at or below the pages in flight: nothing more may go
            budget = rng.randint(0, out_ext)
        elif r < 0.8:
            budget = rng.randint(0, held_ext)
        else:
            budget = rng.randint(min(held_ext, tb.budget), tb.budget)
        if aim:
            # writeback running (a first lower budget, below the pages held), then an engine pass
            # seen in EN_A at edge E (no restart) decides in E + 3 and fires in cycle E + 4: cut
            # there (internal state is read only to time the stimulus, never by the check)
            dut.plp_budget.value = rng.randint(max(0, held_ext - 3), max(0, held_ext - 1))
            for _ in range(20_000):
                await RisingEdge(dut.clk)
                if (int(dut.en_q.value) == EN_A and not int(dut.meta_busy_q.value)
                        and int(dut.dirty_pages.value) and int(dut.wb_go_q.value)):
                    break
            for i in range(4):               # after edges E .. E+3
                if i == 3 - d:
                    dut.plp_budget.value = budget     # sampled at the cut edge - d
                if i == 3:
                    break
                await RisingEdge(dut.clk)
        else:
            dut.plp_budget.value = budget
            for _ in range(d):
                await RisingEdge(dut.clk)
        dut.pwr_fail.value = 1
        await RisingEdge(dut.clk)            # the cut edge
        # coverage only (internal probe): a page was decided for issue in the cycle before the cut
        if int(dut.en_is_d_q.value) and int(dut.d_issue_q.value) and not int(dut.meta_busy_q.value):
            stats["aimed_issue_at_cut"] += int(aim)
        for _ in range(200_000):
            await RisingEdge(dut.clk)
            if int(dut.dump_done.value):
                break
        else:
            raise TimeoutError("PLP dump did not finish")
        short = int(dut.dump_short.value)
        for _ in range(3):
            await RisingEdge(dut.clk)
            assert int(dut.dump_done.value) and int(dut.dump_short.value) == short
        tb.process_done()
        m = tb.cut_model
        errs = m.check(int(dut.dirty_pages.value), short)
        assert not errs, f"cut {k} (budget lowered {d} cycles before, aimed {aim}): " + "; ".join(errs)
        assert int(dut.cnt_proto_err.value) == 0 and not tb.media.errors, tb.media.errors[:3]
        stats["short" if short else "full"] += 1
        stats["zero_allowance"] += int(m.allowance == 0 and m.dirty_at_cut > 0)
        stats["cuts"] += 1
        dut._log.info("cut %d: d %d aimed %d: budget %d (outside view before: held %d, out %d), in flight "
                      "%d, dirty %d, presented after the cut %d, short %d", k, d, aim, m.budget, held_ext,
                      out_ext, m.in_flight, m.dirty_at_cut, m.post, short)
        tb.cut_model = None
        await tb.finish_cut(plp_check=False)
        tb.cut_model = PlpCutModel(tb.budget)
    dut._log.info("PLP cut budget sweep: %s", stats)
    assert stats["short"] and stats["full"] and stats["zero_allowance"], stats
    assert stats["aimed_issue_at_cut"] >= 2, f"the issue-at-the-cut race was not provoked: {stats}"


@cocotb.skipif(getattr(cocotb, "top", None) is not None and _plp_budget_below("THRESH_PCT"),
               reason="the PLP admission rule (held < budget) replaces the threshold policy below THRESH")
@cocotb.test()
async def run_writeback_threshold(dut):
    """Background writeback policy at its boundary, against `WritebackPolicyModel`: THRESH - 1 pages
    held cause no writeback; the THRESH-th starts it; pages in flight (issued, completion not taken)
    keep counting, so with an unbounded backend that withholds completions every dirty page is
    issued; completed (clean) pages stop counting; with a bounded media window (backpressure on
    m_wb_ready) only window + 1 pages leave the dirty set and the rest keep coalescing; completions
    released one at a time restart writeback exactly while held >= THRESH. Compared at every quiet
    point: pages the media accepted, `dirty_pages`, coalesced pages, the staged request, outstanding."""
    tb = TB(dut, seed_of(dut, 130), True, True)
    await tb.reset()
    media = tb.media
    media.cfg.window = 0
    m = WritebackPolicyModel(tb.nslots, int(dut.THRESH_PCT.value), 0)
    T = m.thresh
    assert 2 <= T < tb.nslots and 2 * T + 1 < tb.num_lbas, "configuration too small for this test"
    coal0 = int(dut.cnt_coalesced.value)
    steps = [0]

    async def quiet():
        """Wait until nothing moves for 100 cycles (engine decisions take < 10 cycles)."""
        q = 0
        while q < 100:
            await RisingEdge(dut.clk)
            tb.process_done()
            moving = (int(dut.m_wbd_valid.value) or media.receiving or media.wbc.queue or media._release
                      or (not media.hold and media.inflight))
            q = 0 if moving else q + 1

    async def check(what: str):
        await quiet()
        got = {"programs": media.stats.programs, "dirty": int(dut.dirty_pages.value),
               "coalesced": int(dut.cnt_coalesced.value) - coal0, "staged": int(dut.m_wb_valid.value),
               "outstanding": media.outstanding}
        exp = {"programs": m.programs, "dirty": len(m.dirty), "coalesced": m.coalesced,
               "staged": int(m.staged is not None), "outstanding": len(m.inflight)}
        assert got == exp, f"{what}: RTL/media {got} != model {exp} (held {m.held}, THRESH {T})"
        steps[0] += 1

    async def write(lba: int, what: str):
        await tb.run_cmds([tb.make(WRITE, lba=lba)])
        m.write(lba, tb.epoch)
        await check(what)

    # 1. THRESH - 1 pages held: no background writeback, however long we wait
    for lba in range(T - 1):
        await write(lba, f"below threshold, page {lba}")
    await tb.idle(2000)
    await check("below threshold after a long wait")
    assert m.programs == 0
    # 2. the THRESH-th page starts writeback; the media withholds completions: in-flight pages still
    #    count, so every dirty page is issued (unbounded backend), and a further page goes at once
    media.hold = True
    await write(T - 1, "at threshold, completions withheld")
    assert m.programs == T and not m.dirty
    await write(T, "above threshold, every page in flight")
    # 3. completions taken: clean pages do not count; THRESH - 1 new pages cause no writeback
    media.hold = False
    while m.inflight:
        m.complete_one()
    await check("all completed")
    for lba in range(T + 1, 2 * T):
        await write(lba, f"below threshold again, page {lba}")
    assert m.programs == T + 1
    # 4. bounded window of 2: the THRESH-th page issues 2, stages one, the rest stays dirty and
    #    coalesces; a write to an in-flight LBA adds a new dirty version
    media.cfg.window = 2
    m.set_window(2)
    media.hold = True
    await write(2 * T, "at threshold, window 2")
    assert m.programs == T + 3 and m.staged is not None
    await write(m.dirty[-1][0], "coalescing under a full window")
    await write(m.inflight[0], "overwrite of an in-flight page")
    # completions one at a time: writeback continues exactly while held >= THRESH
    while m.inflight:
        media.release(1)
        m.complete_one()
        await check(f"completion released, held {m.held}")
    assert m.held < T and m.staged is None
    await tb.idle(2000)
    await check("final, below threshold")
    media.hold = False
    media.cfg.window = None
    await tb.run_cmds([tb.make(FLUSH)])
    await tb.idle(20)
    await tb.check_counters()
    cov = await tb.power_cut()
    dut._log.info("writeback threshold: THRESH %d, %d checkpoints, %d programs, coverage %s",
                  T, steps[0], media.stats.programs, cov)


@cocotb.test()
async def run_no_space_tx(dut):
    """No space and transactions (TX = 1, README "No space"): a TX_COMMIT, and a COMMIT write,
    waiting in ST_TXW for their record (the media withholds durability, the record DIRTY behind
    held pages) end NO_SPACE when the bit rises (the record taken back / the COMMIT mark cleared):
    the tx keeps its pages (a READ with its txid returns them, a plain READ the old data) and its
    entries (TX_BEGIN: TABLE_FULL); with the bit set TX_COMMIT / TX_ABORT / WRITE with a txid are
    refused, READ, TX_BEGIN of an empty txid and TX_COMMIT of an empty txid (TX_EMPTY) work; bit
    cleared and media released: both commits complete OK and plain READs return the tx pages,
    FLUSH OK, no protocol error, no dirty page left. Expected values written here from the
    README's rules (the model `WbufModel` has no transactions). A no-op without TX (the other
    configurations; `test_ats_wbuf_tx_no_space` runs it)."""
    if not int(dut.TX.value):
        return
    tb = TB(dut, seed_of(dut, 95), True, True)
    tb.disp.on_accept = None                      # directed: statuses checked here
    await tb.reset()
    tags = iter(range(1, 250))
    TXC, TXA, TXB, COMMIT_F = TX_COMMIT, TX_ABORT, TX_BEGIN, COMMIT

    d = Directed(tb, tags)
    send, done, run, read = d.send, d.done, d.run, d.read

    tb.media.hold = True
    for k in range(8):                            # held pages ahead of the records (window 4 + 1)
        await run(WRITE, 20 + k, ver=100 + k)
    await run(WRITE, 3, txid=1, ver=1)
    await run(WRITE, 4, txid=1, ver=2)
    tc, _ = send(TXC, txid=1)                     # waits in ST_TXW: its record is DIRTY
    for _ in range(600):
        await RisingEdge(dut.clk)
    assert not d.seen(tc), "commit completed while the media held"
    tb.set_no_space(1)
    st, res = await done(tc, 300)
    assert (st, res) == (NO_SPACE, 0), f"waiting TX_COMMIT: {st:#x} result {res}"
    await run(TXC, txid=1, exp=NO_SPACE)          # refused at the decode, tx intact
    await run(TXA, txid=1, exp=NO_SPACE)
    await run(WRITE, 6, txid=1, ver=3, exp=NO_SPACE)
    await run(TXB, txid=1, exp=0x08)              # TABLE_FULL: still holds its entries
    await run(TXB, txid=3)                        # an empty txid: OK
    await run(TXC, txid=3, exp=0x06)              # TX_EMPTY
    await read(3, 1, 1)
    await read(4, 1, 2)
    await read(3, 0, 0)                           # not committed
    await read(20, 0, 100)
    # a COMMIT write waiting in ST_TXW: its mark cleared, NO_SPACE, result = its page
    tb.set_no_space(0)
    await tb.idle(2 * tb.NS_SLACK)
    tw, _ = send(WRITE, 5, txid=2, flags=COMMIT_F, ver=7)
    for _ in range(600):
        await RisingEdge(dut.clk)
    tb.set_no_space(1)
    st, res = await done(tw, 300)
    assert (st, res) == (NO_SPACE, 1), f"waiting COMMIT write: {st:#x} result {res}"
    await read(5, 2, 7)
    await read(5, 0, 0)
    # space back: both commits go through
    tb.set_no_space(0)
    tb.media.hold = False
    await tb.idle(2 * tb.NS_SLACK)
    await run(TXC, txid=1)
    await run(TXC, txid=2)
    for lba, ver in ((3, 1), (4, 2), (5, 7), (27, 107)):
        await read(lba, 0, ver)
    await run(FLUSH)
    await tb.idle(50)
    assert int(dut.dirty_pages.value) == 0 and int(dut.cnt_proto_err.value) == 0
    assert not tb.media.errors, tb.media.errors[:5]
    dut._log.info("no space, transactions: programs %d, unmaps %d", tb.media.stats.programs,
                  tb.media.stats.unmaps)



@cocotb.test()
async def run_tx_pending(dut):
    """A pending commit (TX = 1, README "Transactions", "Pending commit"): while a TX_COMMIT's record
    waits for durability (the media withholds it), later commands run and complete: a plain WRITE
    of an LBA the tx wrote, a plain READ of it (the plain version), a WRITE of another tx, a FLUSH
    (completes only once the record is durable). A command of the pending txid
    (a WRITE, a READ with its txid), another commit and an abort wait until the commit has
    completed: none completes while the media holds, each completes after it. Expected values
    from the README's rules, written here: the commit completes OK; a plain WRITE
    taken while it was pending is later in the writeback order, so the LBA then reads the plain
    version (from the buffer or the media); the tx's other LBA reads the tx's version; the later
    commits complete OK and their pages read committed. (The behavioural media maps a tx page
    when it is durable, whatever its commit, and answers a commit record with its seq: neither
    is checked here.) No protocol error, no dirty page left,
    the media has no error. On the RTL before the pending commit (the FSM waited in ST_TXW) the
    plain WRITE never completes while the media holds: 'a hang'."""
    if not int(dut.TX.value):
        return
    tb = TB(dut, seed_of(dut, 96), True, True)
    tb.disp.on_accept = None                      # directed: statuses checked here
    await tb.reset()
    tags = iter(range(1, 250))
    TXC, TXA, COMMIT_F = TX_COMMIT, TX_ABORT, COMMIT

    d = Directed(tb, tags)
    send, done, order = d.send, d.done, d.order   # order: tags in completion order

    async def expect(t, exp, what):
        st_res = await done(t)
        if exp[1] is None:                        # a TX_COMMIT's entry count: the media model's ppn
            st_res = (st_res[0], None)
        assert st_res == exp, f"{what}: status/result {st_res}, expected {exp}"

    read = d.read

    async def quiet_for(n, tags_):
        for _ in range(n):
            await RisingEdge(dut.clk)
        early = [x for x in tags_ if d.seen(x)]
        assert not early, f"tags {early} completed while the media held the commit's record"

    # phase 1: a TX_COMMIT pending, plain commands beside it
    tb.media.hold = True
    for k in range(3):                            # pages ahead of the record (held)
        t, _ = send(WRITE, 20 + k, ver=100 + k)
        await expect(t, (OK, 1), "plain WRITE")
    for lba, ver in ((3, 1), (4, 2)):
        t, _ = send(WRITE, lba, txid=1, ver=ver)
        await expect(t, (OK, 1), "tx WRITE")
    tc1, _ = send(TXC, txid=1)
    await quiet_for(300, [tc1])
    t, _ = send(WRITE, 3, ver=9)                  # plain, after the commit: later in the order
    await expect(t, (OK, 1), "plain WRITE while the commit is pending")
    await read(3, 0, 9)
    await read(21, 0, 101)
    t, _ = send(WRITE, 5, txid=2, ver=5)
    await expect(t, (OK, 1), "WRITE of another tx while the commit is pending")
    tf, _ = send(FLUSH)
    tw1, _ = send(WRITE, 6, txid=1, ver=6)        # the pending txid: waits (ST_PTXW)
    await quiet_for(600, [tc1, tf, tw1])
    tb.media.hold = False
    await expect(tc1, (OK, None), "TX_COMMIT 1")
    await expect(tf, (OK, 0), "FLUSH sent while the commit was pending")
    await expect(tw1, (OK, 1), "WRITE of the committed txid, sent while pending")
    assert order.index(tc1) < order.index(tw1), "a WRITE of the pending txid overtook its commit"
    await read(3, 0, 9)                           # the plain WRITE taken while pending wins
    await read(4, 0, 2)
    # phase 2: a COMMIT write pending; another commit and an abort wait behind it
    tb.media.hold = True
    for k in range(3):
        t, _ = send(WRITE, 24 + k, ver=200 + k)
        await expect(t, (OK, 1), "plain WRITE")
    tc2, _ = send(WRITE, 7, txid=2, flags=COMMIT_F, ver=7)
    await quiet_for(300, [tc2])
    t, _ = send(WRITE, 8, ver=8)
    await expect(t, (OK, 1), "plain WRITE while the COMMIT write is pending")
    t, _ = send(WRITE, 9, txid=3, ver=9)
    await expect(t, (OK, 1), "WRITE of tx 3 while pending")
    ta1, _ = send(TXA, txid=1)                    # another commit / abort: waits
    tr2, dr2 = send(READ, 5, txid=2)             # the pending txid: waits
    tc3, _ = send(TXC, txid=3)
    await quiet_for(600, [tc2, ta1, tr2, tc3])
    tb.media.hold = False
    await expect(tc2, (OK, 1), "COMMIT write of tx 2")
    await expect(ta1, (OK, 0), "TX_ABORT 1 behind the pending commit")
    await expect(tr2, (OK, 1), "READ of the pending txid")
    d.check(5, dr2, 5)
    await expect(tc3, (OK, None), "TX_COMMIT 3 behind")
    assert order.index(tc2) < order.index(ta1) < order.index(tc3), "a commit / abort overtook the pending one"
    for lba, ver in ((5, 5), (7, 7), (8, 8), (9, 9), (3, 9), (26, 202)):
        await read(lba, 0, ver)
    t, _ = send(FLUSH)
    await expect(t, (OK, 0), "FLUSH")
    await tb.idle(50)
    assert int(dut.dirty_pages.value) == 0 and int(dut.cnt_proto_err.value) == 0
    assert not tb.media.errors, tb.media.errors[:5]
    dut._log.info("pending commit: programs %d, unmaps %d", tb.media.stats.programs, tb.media.stats.unmaps)


@cocotb.test()
@cocotb.parametrize(idle=[False, True], backpressure=[False, True])
async def run_tx_pending_fifo(dut, idle, backpressure):
    """Several pending commits (TX = 1, PTXQ > 1, README "Pending commit"). First, directed: with
    the media withholding durability, TX_COMMITs of three txids and a COMMIT write of a fourth are
    sent, then a plain WRITE: with PTXQ >= 4 the four commits are pending at once and the plain
    WRITE completes while they wait (with PTXQ = 1, the RTL before the FIFO, it waits behind the
    first: 'a hang'); the commits complete in their order once the media lets go. Then a random
    mix (seeded) of tx WRITEs, COMMIT writes, TX_COMMITs, TX_ABORTs (interleaved), plain WRITEs,
    FLUSHes and plain READs of multi-page ranges on 16 LBAs and 5 txids, with the media holding
    durability for random stretches (so up to PTXQ commits pend) and random idle / backpressure on
    every stream, against TxCommitRef (plain Python, from the README): every status and result, the
    commits' completion order, no command of a txid completing before that txid's earlier commit,
    every READ's pages all from one state linearised with the commits (monotone), and at the end
    every LBA reads the state with every commit applied. The media model is transaction-aware (a
    tx's pages reach the mapping only at its commit record, an abort drops them), so a tx page
    issued after its own record, or a record issued ahead of its tx's pages, shows as a wrong
    version. No protocol error, no dirty page left, no media error."""
    if not int(dut.TX.value) or int(dut.PTXQ.value) < 4:
        return
    tb = TB(dut, seed_of(dut, 120 + 2 * int(idle) + int(bool(backpressure))), idle, backpressure, tx_aware=True)
    tb.disp.on_accept = None
    await tb.reset()
    rng = tb.rng
    pw = tb.pw
    ntx = int(dut.NUM_TX.value)
    tags = iter(range(1, 1 << 30))
    ref = TxCommitRef()
    ver_n = [0]
    got: dict[int, tuple] = {}
    order: list[int] = []
    outstanding: dict[int, tuple] = {}      # tag -> (kind, txid, expect, commit number)
    pending_tx: dict[int, int] = {}         # txid -> tag of its last outstanding commit / abort

    def collect():
        while tb.done.queue:
            b = tb.done.queue.popleft()
            order.append(b["tag"])
            got[b["tag"]] = (b["status"], b["result"])
            kind, txid, exp, g, before = outstanding.pop(b["tag"])
            assert before is None or before not in outstanding, \
                f"tag {b['tag']} (op {kind}, txid {txid}) completed before its txid's earlier commit / abort {before}"
            assert (b["status"], b["result"]) == exp or (exp[1] is None and b["status"] == exp[0]), \
                f"tag {b['tag']} {kind} txid {txid}: status/result {(b['status'], b['result'])}, expected {exp}"
            if g:
                ref.commit_completed(g)
            for t_, v in outstanding.items():        # (tags are reused once completed)
                if v[4] == b["tag"]:
                    outstanding[t_] = v[:4] + (None,)
            if pending_tx.get(txid) == b["tag"]:
                del pending_tx[txid]

    def send(op, lba=0, nlb=0, txid=0, flags=0):
        t = next(tags) & 0xFF
        while t == 0 or t in outstanding:
            t = next(tags) & 0xFF
        dptr, ver, g, exp = 0, None, 0, (OK, nlb + 1)
        if op == WRITE:
            ver_n[0] += 1
            ver = ver_n[0]
            dptr = tb.alloc((nlb + 1) * tb.page_bytes)
            for p in range(nlb + 1):
                for i, w in enumerate(page_words(lba + p, ver, pw)):
                    tb.hostmem[dptr + p * tb.page_bytes + 4 * i] = w
            ref.write(lba, nlb, ver, txid)
            if flags & COMMIT:
                g = ref.commit(txid)
        elif op == READ:
            dptr = tb.alloc((nlb + 1) * tb.page_bytes)
        elif op == TX_COMMIT:
            g = ref.commit(txid)
            exp = (OK, None) if g else (TX_EMPTY_ST, 0)
        elif op == TX_ABORT:
            exp = (OK, 0) if ref.abort(txid) else (TX_EMPTY_ST, 0)
        elif op == FLUSH:
            exp = (OK, 0)
        # a command of a txid must not complete before that txid's earlier commit / abort
        before = pending_tx.get(txid) if txid else None
        if txid and (op in (TX_COMMIT, TX_ABORT) or flags & COMMIT):
            pending_tx[txid] = t
        outstanding[t] = (op, txid, exp, g or 0, before)
        tb.disp.send_nowait(op=op, tag=t, lba=lba, nlb=nlb, txid=txid, flags=flags, attr=0, prio=0,
                            dptr=dptr, aux=0, epoch=0)
        return t, dptr, before

    async def wait_tag(t, max_cycles=100_000, release_after=None):
        for n in range(max_cycles):
            collect()
            if t in got:
                return got[t]
            if release_after is not None and n == release_after:
                tb.media.hold = False                 # a READ held behind a due record waits for it
            await RisingEdge(dut.clk)
        raise AssertionError(f"tag {t}: no completion within {max_cycles} cycles (a hang)")

    async def read_check(lba, nlb):
        cands = None
        t, dptr, _ = send(READ, lba, nlb)
        cands = ref.read_candidates(lba, nlb)
        await wait_tag(t, release_after=rng.randrange(500, 3000))
        tb.absorb_hwr()
        vers = []
        for p in range(nlb + 1):
            words = [tb.hwmem.pop((dptr + p * tb.page_bytes + 4 * i) & 0xFFFFFFFF) for i in range(pw)]
            d = decode_page(words)
            assert d is not None or words == [0] * pw, f"READ lba {lba + p}: garbage {words[:2]}"
            assert d is None or d[0] == lba + p, f"READ lba {lba + p}: page of lba {d[0]}"
            vers.append(d[1] if d else 0)
        ks = [k for k, v in cands if v == vers]
        assert ks, f"READ lba {lba}+{nlb}: versions {vers}, allowed {cands}"
        ref.read_seen(min(ks))
        return vers

    # directed: four commits pending at once, a plain WRITE completes beside them
    tb.media.hold = True
    for tx in (1, 2, 3):
        t, _, _ = send(WRITE, 2 * tx, 0, tx)
        await wait_tag(t)
    cts = [send(TX_COMMIT, 0, 0, tx)[0] for tx in (1, 2, 3)]
    cts.append(send(WRITE, 9, 0, 4, COMMIT)[0])
    tw, _, _ = send(WRITE, 12)
    await wait_tag(tw, 3000)
    assert not any(c in got for c in cts), "a commit completed while the media held its record"
    tb.media.hold = False
    for c in cts:
        await wait_tag(c)
    assert [x for x in order if x in cts] == cts, "commits completed out of their order"
    for lba in (2, 4, 6, 9, 12):
        await read_check(lba, 0)

    # random mix
    max_pend = 0
    hold_left = 0
    for n in range(160):
        collect()
        if hold_left == 0:
            tb.media.hold = False
            if rng.random() < 0.25:
                tb.media.hold = True
                hold_left = rng.randrange(3, 14)
        else:
            hold_left -= 1
        max_pend = max(max_pend, sum(1 for v in outstanding.values() if v[3]))
        r = rng.random()
        tx = rng.randrange(1, min(ntx, 5) + 1)
        lba = rng.randrange(15)
        nlb = rng.choice([0, 0, 1])
        if r < 0.30:
            send(WRITE, lba, nlb, tx)
        elif r < 0.40:
            send(WRITE, lba, nlb, tx, COMMIT)
        elif r < 0.55:
            send(TX_COMMIT, 0, 0, tx)
        elif r < 0.62:
            send(TX_ABORT, 0, 0, tx)
        elif r < 0.77:
            send(WRITE, lba, nlb)
        elif r < 0.80:
            send(FLUSH)
        else:
            tb.media.hold = False if rng.random() < 0.5 else tb.media.hold
            await read_check(lba, nlb)
        while len(outstanding) > 12:              # keep the dispatcher's queue short
            if tb.media.hold and rng.random() < 0.01:
                tb.media.hold = False
                hold_left = 0
            await RisingEdge(dut.clk)
            collect()
        for _ in range(rng.randrange(0, 40) if idle else 0):
            await RisingEdge(dut.clk)
    tb.media.hold = False
    for tx in range(1, min(ntx, 5) + 1):          # every open tx committed
        send(TX_COMMIT, 0, 0, tx)
    t, _, _ = send(FLUSH)
    await wait_tag(t)
    while outstanding:
        await RisingEdge(dut.clk)
        collect()
    final = ref.state(ref.ncommits)
    for lba in range(15):
        v = await read_check(lba, 0)
        assert v == [final.get(lba, 0)], f"LBA {lba} after every commit: version {v}, expected {final.get(lba, 0)}"
    # a txid's command never completed ahead of that txid's earlier commit: checked by order
    await tb.idle(50)
    assert int(dut.dirty_pages.value) == 0 and int(dut.cnt_proto_err.value) == 0
    assert not tb.media.errors, tb.media.errors[:5]
    assert max_pend >= 2, f"at most {max_pend} commit(s) outstanding at once: the mix did not test the FIFO"
    dut._log.info("pending FIFO: commits %d, max outstanding %d, programs %d", ref.ncommits, max_pend,
                  tb.media.stats.programs)


@cocotb.test()
async def run_no_space_tx_fifo(dut):
    """No space with several pending commits (TX = 1, PTXQ >= 4, README "No space", "Several
    pending commits"): the media withholds durability behind 8 plain pages, a TX_COMMIT of tx 1, a
    COMMIT write of tx 3 and a TX_COMMIT of tx 2 are pending at once (a plain WRITE completes
    beside them, none of them does); the bit rises: all three are taken back, NO_SPACE within 900
    cycles, in their order, results 0 / 1 (the COMMIT write's page) / 0; each tx keeps its pages
    and entries (TX_BEGIN: TABLE_FULL; READs with the txid return its pages, plain READs the old
    data); bit cleared, media released: the three commits go through, plain READs return their
    pages (the media model transaction-aware: a page reaches the mapping only at its commit),
    FLUSH, no dirty page, no protocol error. Expected values from the README's rules."""
    if not int(dut.TX.value) or int(dut.PTXQ.value) < 4:
        return
    tb = TB(dut, seed_of(dut, 97), True, True, tx_aware=True)
    tb.disp.on_accept = None
    await tb.reset()
    tags = iter(range(1, 250))
    d = Directed(tb, tags)
    send, done, run, read, order = d.send, d.done, d.run, d.read, d.order

    tb.media.hold = True
    for k in range(8):                            # held pages ahead of the records
        await run(WRITE, 20 + k, ver=100 + k)
    for lba, tx, ver in ((3, 1, 1), (4, 1, 2), (5, 2, 5), (6, 3, 6)):
        await run(WRITE, lba, txid=tx, ver=ver)
    tc1, _ = send(TX_COMMIT, txid=1)
    tw3, _ = send(WRITE, 7, txid=3, flags=COMMIT, ver=7)
    tc2, _ = send(TX_COMMIT, txid=2)
    await run(WRITE, 30, ver=130)                 # beside three pending commits
    await tb.idle(600)
    assert not any(d.seen(t) for t in (tc1, tw3, tc2)), \
        "a commit completed while the media held"
    tb.set_no_space(1)
    res = [await done(t, 900) for t in (tc1, tw3, tc2)]
    assert res == [(NO_SPACE, 0), (NO_SPACE, 1), (NO_SPACE, 0)], f"taken back: {res}"
    assert [x for x in order if x in (tc1, tw3, tc2)] == [tc1, tw3, tc2], "take-backs out of order"
    for tx in (1, 2, 3):
        await run(TX_BEGIN, txid=tx, exp=0x08)    # TABLE_FULL: entries kept
    for lba, tx, ver in ((3, 1, 1), (5, 2, 5), (6, 3, 6), (7, 3, 7)):
        await read(lba, tx, ver)
        await read(lba, 0, 0)
    tb.set_no_space(0)
    tb.media.hold = False
    await tb.idle(2 * tb.NS_SLACK)
    for tx in (2, 3, 1):
        await run(TX_COMMIT, txid=tx)
    for lba, ver in ((3, 1), (4, 2), (5, 5), (6, 6), (7, 7), (27, 107), (30, 130)):
        await read(lba, 0, ver)
    await run(FLUSH)
    await tb.idle(50)
    assert int(dut.dirty_pages.value) == 0 and int(dut.cnt_proto_err.value) == 0
    assert not tb.media.errors, tb.media.errors[:5]


CONFIGS = [
    # (NUM_SLOTS, PAGE_BYTES, PLP, THRESH_PCT, PLP_BUDGET_PAGES)
    (8, 64, 0, 75, 0),
    (16, 64, 1, 90, 16),
    (16, 64, 1, 90, 7),      # capacitor smaller than the buffer: admission limits the held pages
    (32, 256, 0, 90, 0),
]


def _run_config(slots, page, plp, thresh, budget, key_suffix="", **kw):
    """Build and run one buffer configuration (CONFIGS' tuple) with the runner's extra arguments."""
    params = {"NUM_SLOTS": slots, "PAGE_BYTES": page, "NUM_LBAS": NUM_LBAS, "THRESH_PCT": thresh,
              "NUM_WAITERS": 4, "PLP": plp, "PLP_BUDGET_PAGES": budget}
    run(toplevel="ats_wbuf",
        sources=block_sources("ats_wbuf", "ats_stream_check") + [HERE / "ats_wbuf_bind.sv"],
        test_module="test_ats_wbuf", test_dir=HERE,
        build_key=f"s{slots}_p{page}_plp{plp}_t{thresh}_b{budget}{key_suffix}", parameters=params, **kw)


@pytest.mark.parametrize("slots,page,plp,thresh,budget", CONFIGS)
def test_ats_wbuf(slots, page, plp, thresh, budget):
    _run_config(slots, page, plp, thresh, budget,
                public={})              # the test reads only the top's ports and signals


def test_ats_wbuf_synth_form():
    """The first configuration on the RTL's synthesis form (`ATS_SYNTH_FORM`, what Yosys builds);
    test_ats_wbuf runs the simulation form (the default of a simulator build, README "Simulation
    cost"), both against the same models."""
    _run_config(*CONFIGS[0], key_suffix="_synthform", build_args=["+define+ATS_SYNTH_FORM"])


def test_ats_wbuf_tx_no_space():
    """The transactional build (TX = 1, as in the device core) for run_no_space_tx and run_tx_pending."""
    params = {"NUM_SLOTS": 16, "PAGE_BYTES": 64, "NUM_LBAS": NUM_LBAS, "THRESH_PCT": 90,
              "NUM_WAITERS": 4, "TX": 1, "NUM_TX": 4}
    run(toplevel="ats_wbuf",
        sources=block_sources("ats_wbuf", "ats_stream_check") + [HERE / "ats_wbuf_bind.sv"],
        test_module="test_ats_wbuf", test_dir=HERE, build_key="s16_p64_tx", parameters=params,
        test_filter="run_no_space_tx|run_tx_pending")


@pytest.mark.parametrize("ptxq", [4])
def test_ats_wbuf_tx_fifo(ptxq):
    """Several pending commits (TX = 1, PTXQ = 4; README "Several pending commits"):
    run_tx_pending_fifo, run_no_space_tx_fifo, and the single-commit tests run_tx_pending /
    run_no_space_tx on the same build."""
    params = {"NUM_SLOTS": 16, "PAGE_BYTES": 64, "NUM_LBAS": NUM_LBAS, "THRESH_PCT": 90,
              "NUM_WAITERS": 4, "TX": 1, "NUM_TX": 6, "PTXQ": ptxq}
    run(toplevel="ats_wbuf",
        sources=block_sources("ats_wbuf", "ats_stream_check") + [HERE / "ats_wbuf_bind.sv"],
        test_module="test_ats_wbuf", test_dir=HERE, build_key=f"s16_p64_tx_q{ptxq}", parameters=params,
        test_filter="run_tx_pending_fifo|run_no_space_tx_fifo|run_no_space_tx|run_tx_pending")


@pytest.mark.parametrize("params,msg", [
    ({"PLP": 1, "PLP_BUDGET_PAGES": 0, "NUM_SLOTS": 8}, "PLP needs PLP_BUDGET_PAGES"),
    ({"NUM_SLOTS": 12}, "NUM_SLOTS must be a power of two"),
    ({"PAGE_BYTES": 100}, "PAGE_BYTES must be a power of two"),
    ({"THRESH_PCT": 0}, "THRESH_PCT must be in"),
    ({"PTXQ": 9}, "PTXQ must be in"),
    ({"SLOG_TXFULL": 0}, "SLOG_TXFULL must be in"),
])
def test_ats_wbuf_elaboration_checks(params, msg):
    """Bad parameter sets are refused at elaboration (e.g. PLP without a budget)."""
    import subprocess
    cmd = ["verilator", "--lint-only", "--top-module", "ats_wbuf"]
    cmd += [f"-G{k}={v}" for k, v in params.items()]
    cmd += [str(s) for s in block_sources("ats_wbuf")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode != 0 and msg in r.stderr + r.stdout, r.stderr[-500:]
