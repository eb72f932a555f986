"""End-to-end power-cut test of the command queue + write buffer (ats_cmdq -> ats_wbuf, wired by
bench/ssd/ats_ssd_bench_top.sv): INV-QUEUE, INV-ORDER, INV-DUR and INV-LBA checked on the dispatch
trace and on what the media holds after power cuts at random cycles.

Drivers (random idle on every input, random backpressure on every output, as parametrised):
host command stream s_cmd (StreamSource), completions m_cpl (StreamSink), host-memory DMA
(m_hrd sink, s_hrd source, m_hwr sink), media (atstb.media_model: m_wb/m_wbd/m_rd sinks, s_wbc/s_rdd
sources; FEMU preset scaled down). A monitor samples the top's internal dispatch/done wires (queue ->
write buffer) every cycle. The reference is `atstb.order_model` (plain Python, written from the
design brief and the interface contracts): statuses and results of every command, READ data word by
word, the dispatch trace (INV-QUEUE, hazards, epoch order, HEAD first), and after each cut the
media's durable log (INV-LBA, INV-DUR, INV-ORDER; with PLP every buffered write).

Environment: ATS_SEED (seed), ATS_LONG=1 (more seeds' worth of cuts and commands), ATS_WAVES (FST),
ATS_CMDQ_SRC / ATS_WBUF_SRC (another copy of ats_cmdq.sv / ats_wbuf.sv: mutation runs).
Testpoints: testplan.md in this folder.
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
from atstb import order_model as M
from atstb.media_model import MediaConfig, MediaModel
from atstb.order_model import Cmd, OrderModel
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
CMD_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"]
CPL_FIELDS = ["tag", "status", "result"]
DISP_FIELDS = CMD_FIELDS + ["epoch"]


class TB:
    def __init__(self, dut, seed: int, idle=False, backpressure=False):
        self.dut = dut
        self.rng = rng = random.Random(seed)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.num_tx = int(dut.NUM_TX.value)
        self.depth = int(dut.DEPTH.value)
        self.plp = bool(int(dut.PLP.value))
        self.pw = self.page_bytes // 4
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.pwr_fail.value = 0
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, CMD_FIELDS, pause_gen(rng, idle))
        self.cpl = StreamSink(dut, "m_cpl", dut.clk, CPL_FIELDS, pause_gen(rng, backpressure))
        self.hrd = StreamSink(dut, "m_hrd", dut.clk, ["addr", "len"], pause_gen(rng, backpressure))
        self.hrdd = StreamSource(dut, "s_hrd", dut.clk, ["data", "last"], pause_gen(rng, idle))
        self.hwr = StreamSink(dut, "m_hwr", dut.clk, ["addr", "data", "last"], pause_gen(rng, backpressure))
        self.mcfg = MediaConfig(page_bytes=self.page_bytes, num_chan=2, ways=2, preset="femu",
                                time_scale=4e-3, clk_ns=10.0)
        self.media = MediaModel(dut, dut.clk, self.mcfg, rng,
                                wb_pause=pause_gen(rng, backpressure), wbd_pause=pause_gen(rng, backpressure),
                                wbc_pause=pause_gen(rng, idle), rd_pause=pause_gen(rng, backpressure),
                                rdd_pause=pause_gen(rng, idle))
        self.model = OrderModel(self.num_lbas, self.num_tx, self.page_bytes, self.plp)
        self.cmd.on_accept = lambda item, cyc: self.model.accepted(item["_cmd"], cyc)
        # host memory: write pages (address -> (lba, version)), other words (RFLUSH lists), READ
        # destinations (address -> (cmd, page)); any other DMA address is an error
        self.mem_pages: dict[int, tuple[int, int]] = {}
        self.mem_words: dict[int, int] = {}
        self.rd_dst: dict[int, tuple[Cmd, int]] = {}
        self.rd_got: dict[int, list[int]] = {}
        self.next_addr = 0x10000
        self.version = 0
        self.inflight: dict[int, list[Cmd]] = {}      # tag -> commands sent, completion not seen
        self.by_tag_disp: dict[int, Cmd] = {}         # tag -> kept command accepted, not done
        self.presented = None
        self.burst_addr, self.burst = None, []
        self.trigger = None                           # predicate on a completed command: cut soon after
        self.trigger_at: int | None = None
        self.log_seen, self.ep_seen = 0, -1            # epoch_step trigger: records seen, max epoch
        self.errors: list[str] = []
        self.cycle = 0
        self.recording = False
        self.counts = {"cmds": 0, "cpl": 0, "reads_checked": 0, "arrival_reads": 0, "cuts": 0,
                       "rejected": 0, "unit_bad_op": 0}
        self.cov_total: dict[str, int] = {}
        self._gen = 0
        cocotb.start_soon(self._monitor())

    # ------------------------------------------------------------------ monitors
    async def _monitor(self):
        """Every cycle: internal dispatch and done handshakes (queue <-> write buffer)."""
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            self.cycle += 1
            if not self.recording or int(d.rst.value):
                continue
            if int(d.disp_valid.value):
                tag = int(d.disp_tag.value)
                if self.presented != tag:
                    self.presented = tag
                    c = self._find_kept(tag)
                    if c is not None and c.t_pres is None:
                        c.t_pres = self.cycle
                if int(d.disp_ready.value):
                    f = {k: int(getattr(d, f"disp_{k}").value) for k in DISP_FIELDS}
                    c = self._find_kept(tag)
                    self.presented = None
                    if c is None:
                        self.errors.append(f"cycle {self.cycle}: dispatch of tag {tag} not in the queue")
                    elif c.t_disp is not None:
                        self.errors.append(f"cycle {self.cycle}: {c.name()} dispatched twice")
                    else:
                        exp = c.fields()
                        got = {k: f[k] for k in CMD_FIELDS}
                        if got != exp:
                            self.errors.append(f"cycle {self.cycle}: dispatch {got} != descriptor {exp}")
                        if c.t_pres is None:
                            c.t_pres = self.cycle
                        self.model.dispatched(c, self.cycle, f["epoch"])
                        self.by_tag_disp[tag] = c
            else:
                self.presented = None
            if int(d.q_err_spurious.value):
                self.errors.append(f"cycle {self.cycle}: the queue dropped a spurious done")
            if int(d.done_valid.value) and int(d.done_ready.value):
                tag = int(d.done_tag.value)
                c = self.by_tag_disp.pop(tag, None)
                if c is None:
                    self.errors.append(f"cycle {self.cycle}: done of tag {tag} not in service")
                else:
                    c.t_done = self.cycle
                    c.done_status = int(d.done_status.value)
                    c.done_result = int(d.done_result.value)

    def _find_kept(self, tag: int) -> Cmd | None:
        for c in self.inflight.get(tag, []):
            if c.kept and c.t_acc is not None and c.t_disp is None:
                return c
        return None

    def drain_hwr(self) -> None:
        """Collect m_hwr bursts (READ data) by destination address."""
        while self.hwr.queue:
            b = self.hwr.queue.popleft()
            if self.burst_addr is None:
                self.burst_addr = b["addr"]
                if self.burst_addr not in self.rd_dst:
                    self.errors.append(f"host write to {self.burst_addr:#x}: not a READ destination")
            elif b["addr"] != self.burst_addr:
                self.errors.append(f"m_hwr burst address changed {self.burst_addr:#x} -> {b['addr']:#x}")
            self.burst.append(b["data"])
            if b["last"]:
                self.rd_got[self.burst_addr] = self.burst
                self.burst_addr, self.burst = None, []

    async def _host_dma(self, gen: int):
        """Answer m_hrd in order on s_hrd from host memory; collect m_hwr bursts (READ data)."""
        self.burst_addr, self.burst = None, []
        while gen == self._gen:
            while self.hrd.queue:
                req = self.hrd.queue.popleft()
                n = max(1, req["len"] // 4)
                page = self.mem_pages.get(req["addr"])
                if page is not None and n == self.pw:
                    words = M.page_words(page[0], page[1], self.pw)
                else:
                    words = []
                    for i in range(n):
                        a = req["addr"] + 4 * i
                        if a not in self.mem_words:
                            self.errors.append(f"host read of {a:#x} (len {req['len']}) that holds no data")
                        words.append(self.mem_words.get(a, 0xDEADBEEF))
                for i, w in enumerate(words):
                    self.hrdd.send_nowait(data=w, last=int(i == n - 1))
            self.drain_hwr()
            await RisingEdge(self.dut.clk)

    # ------------------------------------------------------------------ reset / power cut
    async def start(self):
        self.dut.rst.value = 1
        for _ in range(4):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self._gen += 1
        cocotb.start_soon(self._host_dma(self._gen))
        self.recording = True

    async def power_cut(self, check_reads: int = 4) -> dict:
        """Cut power now (PLP: pwr_fail, wait for the dump), check the dispatch trace of the segment
        and the media's durable log, restart from the durable image, read a few LBAs back."""
        self.process()
        cut = self.cycle
        if self.plp:
            self.dut.pwr_fail.value = 1
            for _ in range(100_000):
                await RisingEdge(self.dut.clk)
                if int(self.dut.dump_done.value):
                    break
            else:
                raise TimeoutError("PLP dump did not finish")
            assert not int(self.dut.dump_short.value), "PLP budget ran out"
            for _ in range(3):
                await RisingEdge(self.dut.clk)
            self.process()
        log = self.media.cut()
        self.recording = False
        self._gen += 1
        self.dut.rst.value = 1
        if self.plp:
            self.dut.pwr_fail.value = 0
        self.cmd.flush()
        self.hrdd.flush()
        assert not self.errors, "\n".join(self.errors[:20])
        m = self.model
        qerrs, qcov = m.queue_check(m.seg, self.cycle)
        state, errs, cov = m.cut_check(log, self.plp)
        assert not qerrs, f"dispatch trace, segment {m.seg}:\n" + "\n".join(qerrs[:20])
        assert not errs, f"after power cut {m.seg} at cycle {cut}:\n" + "\n".join(errs[:20])
        assert not self.media.errors, self.media.errors[:5]
        assert abs(self.media.cycle - self.cycle) <= 1, "media and TB cycle counts differ"
        assert int(self.dut.cnt_proto_err.value) == 0, "write buffer counted media protocol errors"
        for k, v in {**qcov, **cov}.items():
            self.cov_total[k] = self.cov_total.get(k, 0) + v
        self.inflight.clear()
        self.by_tag_disp.clear()
        self.presented = None
        self.counts["cuts"] += 1
        for _ in range(2):
            await RisingEdge(self.dut.clk)
        for q in (self.cpl, self.hrd, self.hwr):
            q.queue.clear()
        self.hrdd.flush()
        self.media.restart()
        await self.start()
        m.restart(state, self.cycle + 1)
        if check_reads:
            await self.run_cmds([self.make(M.READ, lba=self.rng.randrange(self.num_lbas))
                                 for _ in range(check_reads)])
        return cov

    # ------------------------------------------------------------------ commands
    def alloc(self, nbytes: int) -> int:
        a = self.next_addr
        self.next_addr += (nbytes + 0xFFF) & ~0xFFF
        return a

    def free_tag(self) -> int | None:
        free = [t for t in range(256) if t not in self.inflight]
        return self.rng.choice(free) if free else None

    def make(self, op: int, lba: int = 0, nlb: int = 0, flags: int = 0, attr: int = M.SIMPLE,
             prio: int | None = None, txid: int = 0, ranges=None, nlb_raw: int | None = None,
             aux: int = 0, tag: int | None = None) -> Cmd:
        c = Cmd(op=op, tag=-1 if tag is None else tag, lba=lba, nlb=nlb, flags=flags,
                attr=attr, prio=self.rng.randrange(4) if prio is None else prio, txid=txid, aux=aux)
        if op in (M.WRITE, M.TRIM):
            self.version += 1
            c.version = self.version
        if op in (M.WRITE, M.READ):
            c.dptr = self.alloc((min(nlb, 15) + 1) * self.page_bytes)
            valid = self.model.reject_rule(c) == 0
            for p in range(nlb + 1 if valid else 0):
                a = c.dptr + p * self.page_bytes
                if op == M.WRITE:
                    self.mem_pages[a] = (lba + p, c.version)
                else:
                    self.rd_dst[a] = (c, p)
        elif op == M.RFLUSH:
            c.ranges = list(ranges or [])
            c.nlb = len(c.ranges) - 1 if nlb_raw is None else nlb_raw
            c.aux = self.alloc(8 * max(1, len(c.ranges)))
            if self.model.reject_rule(c) == 0:
                for k, (lo, n) in enumerate(c.ranges):
                    self.mem_words[c.aux + 8 * k] = lo & 0xFFFFFFFF
                    self.mem_words[c.aux + 8 * k + 4] = ((lo >> 32) & 0xFFFF) | (n << 16)
        return c

    def send(self, c: Cmd) -> None:
        """Queue `c` on s_cmd; a tag is taken now (free = no completion outstanding) unless given."""
        if c.tag < 0:
            c.tag = self.free_tag()
        self.inflight.setdefault(c.tag, []).append(c)
        self.counts["cmds"] += 1
        self.cmd.send_nowait(**c.fields(), _cmd=c)

    def rand_cmd(self, p_bad: float = 0.06, span: int | None = None) -> Cmd:
        rng = self.rng
        span = span or self.num_lbas
        attr = rng.choices([M.SIMPLE, M.ORDERED, M.HEAD], weights=[70, 15, 15])[0]
        lba = rng.randrange(span)
        nlb = min(rng.choice([0, 0, 0, 1, 2, 3]), self.num_lbas - 1 - lba)
        txid = rng.choice([0] * 6 + [1, self.num_tx])
        r = rng.random()
        if r < p_bad:
            return self.bad_cmd(rng.choice(["op", "attr", "rsvd", "flag", "txid", "txid0", "lba",
                                            "diff", "rfn", "rflba"]), lba, attr)
        if r < 0.40:
            flags = (M.FUA if rng.random() < 0.15 else 0) | (M.BARRIER if rng.random() < 0.25 else 0)
            if txid and rng.random() < 0.3:
                flags |= M.COMMIT
            return self.make(M.WRITE, lba=lba, nlb=nlb, flags=flags, attr=attr, txid=txid)
        if r < 0.66:
            return self.make(M.READ, lba=lba, nlb=nlb, attr=attr, txid=txid)
        if r < 0.74:
            return self.make(M.TRIM, lba=lba, nlb=min(nlb, 1), attr=attr)
        if r < 0.82:
            return self.make(M.FLUSH, attr=attr)
        if r < 0.92:
            ranges = []
            for _ in range(rng.randint(1, 3)):
                lo = rng.randrange(span)
                ranges.append((lo, rng.randrange(min(4, self.num_lbas - lo))))
            return self.make(M.RFLUSH, ranges=ranges, attr=attr)
        # valid at the queue, not executed by the write buffer (BAD_OP from the unit)
        op = rng.choice([M.DIFFWRITE, M.TX_BEGIN, M.TX_COMMIT, M.TX_ABORT, M.IDENTIFY, M.GET_LOG, M.FEATURE])
        t = max(1, txid) if op in (M.DIFFWRITE, M.TX_BEGIN, M.TX_COMMIT, M.TX_ABORT) else txid
        aux = (16 << 16) | 8 if op == M.DIFFWRITE else 0
        return self.make(op, lba=lba, nlb=0, attr=attr, txid=t, aux=aux)

    def bad_cmd(self, kind: str, lba: int = 0, attr: int = M.SIMPLE) -> Cmd:
        rng, L = self.rng, self.num_lbas
        if kind == "op":
            return self.make(rng.randint(12, 15), lba=lba, attr=attr)
        if kind == "attr":
            return self.make(rng.choice([M.READ, M.WRITE, M.FLUSH, M.TRIM]), lba=lba, attr=3)
        if kind == "rsvd":
            return self.make(M.WRITE, lba=lba, flags=8 | rng.choice([0, M.FUA]), attr=attr)
        if kind == "flag":
            op = rng.choice([M.READ, M.TRIM, M.FLUSH, M.RFLUSH])
            return self.make(op, lba=lba, attr=attr, ranges=[(lba, 0)] if op == M.RFLUSH else None,
                             flags=rng.choice([M.FUA, M.BARRIER, M.COMMIT]))
        if kind == "txid":
            return self.make(rng.choice([M.READ, M.WRITE]), lba=lba, attr=attr,
                             txid=rng.randint(self.num_tx + 1, 63))
        if kind == "txid0":
            op = rng.choice([M.TX_BEGIN, M.TX_COMMIT, M.TX_ABORT, M.WRITE])
            return self.make(op, lba=lba, flags=M.COMMIT if op == M.WRITE else 0, attr=attr)
        if kind == "lba":
            lo, n = rng.choice([(L - 1, 1), (L, 0), ((1 << 48) - 1, 0xFFFF), (L - 3, 5)])
            return self.make(rng.choice([M.READ, M.WRITE, M.TRIM]), lba=lo, nlb=n, attr=attr)
        if kind == "diff":
            return self.make(M.DIFFWRITE, txid=1, attr=attr,
                             aux=rng.choice([0, (4096 << 16) | 1, (1 << 16) | 4096]))
        if kind == "rfn":
            return self.make(M.RFLUSH, ranges=[(0, 0)] * 9, attr=attr)
        # an RFLUSH whose range list goes past the device: the write buffer's BAD_LBA
        return self.make(M.RFLUSH, ranges=[(lba, 0), (L - 1, 2)], attr=attr)

    # ------------------------------------------------------------------ completions
    def process(self) -> None:
        self.drain_hwr()
        while self.cpl.queue:
            b = self.cpl.queue.popleft()
            cands = self.inflight.get(b["tag"], [])
            if not cands:
                self.errors.append(f"cycle {b['_cycle']}: completion of tag {b['tag']} not in flight")
                continue
            c = cands[0]
            if len(cands) > 1 and (b["status"], b["result"]) == (M.BAD_FIELD, M.REJ | 9):
                c = next((x for x in cands if x.dup), c)
            cands.remove(c)
            if not cands:
                del self.inflight[b["tag"]]
            c.t_cpl, c.status, c.result = b["_cycle"], b["status"], b["result"]
            self.counts["cpl"] += 1
            self.check_cpl(c)
            if callable(self.trigger) and self.trigger_at is None and self.trigger(c):
                self.trigger_at = self.cycle + self.rng.randrange(0, 30)   # cut soon after this event

    def check_cpl(self, c: Cmd) -> None:
        err = self.errors.append
        if c.t_acc is None:
            err(f"{c.name()} completed before it was accepted")
            return
        if c.status != c.exp_status or (c.exp_result is not None and c.result != c.exp_result):
            err(f"{c.name()} op {c.op}: status {c.status:#x} result {c.result:#x}, expected "
                f"{c.exp_status:#x} / {c.exp_result}")
        if not c.kept:
            self.counts["rejected"] += 1
            if c.t_disp is not None:
                err(f"rejected {c.name()} was dispatched")
            return
        if c.t_done is None or c.t_done >= c.t_cpl:
            err(f"{c.name()} completed at {c.t_cpl} without a done before (done {c.t_done})")
        elif (c.done_status, c.done_result) != (c.status, c.result):
            err(f"{c.name()}: completion {c.status:#x}/{c.result:#x} != done {c.done_status:#x}/{c.done_result:#x}")
        if c.exp_status == M.BAD_OP:
            self.counts["unit_bad_op"] += 1
        if c.op == M.READ and c.status == M.OK:
            self.check_read(c)

    def check_read(self, c: Cmd) -> None:
        m = self.model
        for p, lba in enumerate(c.pages):
            a = c.dptr + p * self.page_bytes
            got = self.rd_got.pop(a, None)
            self.rd_dst.pop(a, None)
            if got is None:
                self.errors.append(f"READ {c.name()}: page {p} never written to host memory")
                continue
            if got != c.exp_pages[p]:
                dec = M.decode(got)
                exp = M.decode(c.exp_pages[p])
                self.errors.append(f"READ {c.name()} lba {lba}: got {dec if dec else got[:3]}, expected "
                                   f"(lba, version) {exp if exp else 'zeros'} (dispatch order)")
                continue
            # arrival order (independent of the observed dispatch order): without HEAD writes to
            # this LBA around it, a non-HEAD READ returns the last version accepted before it
            v = c.arr_versions[p] if c.arr_versions else None
            if c.attr == M.HEAD or v is None:
                continue
            if any(x.seg == c.seg and m.is_write(x) and x.attr == M.HEAD and lba in x.pages
                   and x.t_acc > c.t_acc and x.t_disp is not None and x.t_disp < c.t_disp for x in m.cmds):
                continue
            exp = M.page_words(lba, v, self.pw) if v and m.kind.get(v) == "w" else [0] * self.pw
            if got != exp:
                self.errors.append(f"READ {c.name()} lba {lba}: not the last version accepted before it ({v})")
            self.counts["arrival_reads"] += 1
        self.counts["reads_checked"] += 1

    def arm_epoch_watch(self) -> None:
        start = self.model.seg_start[-1]
        self.log_seen = len(self.media.log)
        self.ep_seen = max((r.epoch for r in self.media.log if r.issue_cycle >= start), default=-1)

    def watch_epochs(self) -> None:
        """Trigger a cut 0-3 cycles after the first durable record of a later epoch than every
        durable record before it in this segment: the point where INV-ORDER is tightest."""
        log = self.media.log
        start = self.model.seg_start[-1]
        while self.log_seen < len(log):
            rec = log[self.log_seen]
            self.log_seen += 1
            if rec.issue_cycle < start:
                continue
            if rec.epoch > self.ep_seen:
                self.trigger_at = self.cycle + self.rng.randrange(0, 4)
                self.counts["epoch_steps"] = self.counts.get("epoch_steps", 0) + 1
                return

    # ------------------------------------------------------------------ running
    async def run_cmds(self, cmds_or_n, stop_at: int | None = None, max_out: int = 24,
                       max_cycles: int = 300_000, p_bad: float = 0.06, span: int | None = None) -> None:
        """Send a list of commands (or n random ones) keeping at most `max_out` outstanding, until all
        have completed or until cycle `stop_at` (then return with commands in flight)."""
        todo = None if isinstance(cmds_or_n, int) else list(cmds_or_n)
        left = cmds_or_n if todo is None else len(todo)
        start = self.cycle
        while True:
            self.process()
            if self.trigger == "epoch_step" and self.trigger_at is None:
                self.watch_epochs()
            if stop_at is not None and (self.cycle >= stop_at or
                                        (self.trigger_at is not None and self.cycle >= self.trigger_at)):
                return
            while (left and len(self.cmd.queue) < 3 and sum(len(v) for v in self.inflight.values()) < max_out
                   and len(self.inflight) < 250):
                self.send(todo.pop(0) if todo is not None else self.rand_cmd(p_bad, span))
                left -= 1
            if not left and not self.inflight:
                return
            if self.cycle - start > max_cycles:
                raise TimeoutError(f"hang: {sum(len(v) for v in self.inflight.values())} commands in "
                                   f"flight after {max_cycles} cycles: "
                                   f"{[c.name() for v in self.inflight.values() for c in v][:8]}")
            if self.errors:
                raise AssertionError("\n".join(self.errors[:20]))
            await RisingEdge(self.dut.clk)


def _seed(k: int) -> int:
    return int(os.environ.get("ATS_SEED", "1")) * 1000 + k


MODES = {"quiet": (False, False), "random": (True, True), "heavy": (True, "heavy")}
# segment types in turn: (name, cut trigger). Trigger "epoch_step": 0-3 cycles after the first durable
# record of a later epoch than every earlier one; a predicate: 0-30 cycles after the first completion
# for which it holds; None (or no trigger by then): at the end of the random stream
TRIGGERS = [
    ("rflush", "epoch_step"),      # RFLUSH pattern, cut at the first durable record of a new epoch
    ("random", None),
    ("epoch", "epoch_step"),       # random stream, cut at the first durable record of a new epoch
    ("fua", lambda c: c.op == M.WRITE and c.flags & M.FUA and c.status == M.OK),
    ("flush", lambda c: c.op in (M.FLUSH, M.RFLUSH) and c.status == M.OK),
    ("barrier", lambda c: c.op == M.WRITE and c.flags & M.BARRIER and c.status == M.OK),
]


@cocotb.test()
@cocotb.parametrize(mode=list(MODES))
async def run_power_cuts(dut, mode):
    """Random mixes of every command, attribute and priority (some invalid), cut at random cycles;
    after each cut: the dispatch trace (INV-QUEUE, hazards, epoch order, HEAD first) and the media's
    durable log (INV-LBA, INV-DUR, INV-ORDER; PLP: every buffered write); restart from the image."""
    idle, bp = MODES[mode]
    tb = TB(dut, _seed(list(MODES).index(mode)), idle, bp)
    await tb.start()
    n_cuts = 60 if LONG else 12
    for k in range(n_cuts):
        # one FUA write that completes in every segment, then a random stream and the cut
        await tb.run_cmds([tb.make(M.WRITE, lba=tb.rng.randrange(tb.num_lbas), flags=M.FUA)])
        span = tb.rng.choice([8, 24, tb.num_lbas])
        # the cut (TRIGGERS): at a random cycle, at an epoch step of the durable log, or soon after
        # a completion that makes writes durable (FLUSH, RFLUSH, FUA) or closes an epoch (BARRIER)
        how = TRIGGERS[k % len(TRIGGERS)]
        tb.trigger, tb.trigger_at = None, None
        await tb.run_cmds(100_000, stop_at=tb.cycle + tb.rng.randrange(300, 2500), span=span)
        if how[0] == "rflush" and tb.rng.random() < 0.5:
            await tb.run_cmds([tb.make(M.FLUSH)], max_out=64)
        tb.trigger = how[1]
        tb.arm_epoch_watch()
        if how[0] == "rflush":
            # dirty pages of one epoch, a barrier, a page of the next epoch targeted by an RFLUSH
            # (the RFLUSH must write the earlier epoch's dirty pages before its target); half of the
            # time from an empty buffer (after a FLUSH), so that nothing else writes them back
            lbas = tb.rng.sample(range(tb.num_lbas), 4)
            pat = [tb.make(M.WRITE, lba=l) for l in lbas[:2]]
            pat += [tb.make(M.WRITE, lba=lbas[2], flags=M.BARRIER), tb.make(M.WRITE, lba=lbas[3]),
                    tb.make(M.RFLUSH, ranges=[(lbas[3], 0)])]
            await tb.run_cmds(pat, stop_at=tb.cycle + 100_000)
        await tb.run_cmds(100_000, stop_at=tb.cycle + tb.rng.randrange(300, 2500), span=span)
        tb.trigger = None
        tb.counts[f"cut_{how[0]}"] = tb.counts.get(f"cut_{how[0]}", 0) + int(tb.trigger_at is not None
                                                                            or how[0] == "random")
        if how[0] == "random":       # a completed FLUSH, then a little more traffic, then the cut
            await tb.run_cmds([tb.make(M.FLUSH)], max_out=64)
            await tb.run_cmds(100_000, stop_at=tb.cycle + tb.rng.randrange(0, 300), span=span)
        await tb.power_cut()
    dut._log.info("%s: counts %s coverage %s", mode, tb.counts, tb.cov_total)
    cov = tb.cov_total
    assert tb.counts["reads_checked"] > 20 and tb.counts["rejected"] > 0
    assert cov["fua"] > 0 and cov["flush"] + cov["rflush"] > 0 and cov["ordered"] > 0
    assert cov["hazards"] > 0 and cov["order_epoch"] + cov["order_ordered"] > 0
    assert tb.counts.get("epoch_steps", 0) > 0, "no cut at an epoch step"
    if tb.plp:
        assert cov["plp"] > 0


@cocotb.test()
async def run_errors(dut):
    """Every error status end to end: each queue rejection reason (BAD_OP, BAD_FIELD, BAD_TXID,
    BAD_LBA, duplicate tag), unit BAD_OP for ops the buffer does not execute, an RFLUSH range past
    the device (BAD_LBA), MEDIA_ERROR on a read, PROGRAM_FAIL on a FUA write and a FLUSH (no PLP).
    None of the rejected ones reaches host memory or the media; the device keeps working."""
    tb = TB(dut, _seed(77), True, True)
    await tb.start()
    L, T = tb.num_lbas, tb.num_tx
    cmds = [tb.bad_cmd(k, lba=5) for k in ("op", "attr", "rsvd", "flag", "txid", "txid0", "lba",
                                           "diff", "rfn", "rflba")]
    cmds += [tb.make(M.WRITE, lba=L - 1, nlb=1), tb.make(M.READ, lba=(1 << 48) - 1, nlb=0xFFFF),
             tb.make(M.TX_BEGIN, txid=0), tb.make(M.WRITE, lba=1, txid=T + 1),
             tb.make(M.FLUSH, flags=M.FUA), tb.make(M.RFLUSH, ranges=[(1, 0)] * 9),
             tb.make(M.READ, lba=1, attr=3)]
    cmds += [tb.make(op, txid=1, aux=(8 << 16)) for op in (M.DIFFWRITE, M.TX_BEGIN, M.TX_COMMIT,
                                                          M.TX_ABORT, M.IDENTIFY, M.GET_LOG)]
    cmds.append(tb.make(M.FEATURE, lba=0xC0, nlb=1, aux=5))     # OP_LAST: the queue takes it, the unit BAD_OP
    await tb.run_cmds(cmds)
    got = {c.exp_status for c in cmds}
    assert got == {M.BAD_OP, M.BAD_FIELD, M.BAD_TXID, M.BAD_LBA}, got
    assert tb.media.stats.programs == 0 and tb.media.stats.reads == 0, "a rejected command reached the media"
    # duplicate tag: a WRITE and, right behind it, a READ with the same tag (rule 9)
    tb.cmd.set_pause(None)
    w = tb.make(M.WRITE, lba=3, nlb=3)
    tb.send(w)
    dup = tb.make(M.READ, lba=9, tag=w.tag)
    dup.dup = True
    tb.send(dup)
    await tb.run_cmds([])
    assert dup.status == M.BAD_FIELD and dup.result == M.REJ | 9 and w.status == M.OK
    # MEDIA_ERROR: a read miss the media answers with an error (LBA 21 was never written)
    await tb.run_cmds([tb.make(M.WRITE, lba=20, flags=M.FUA), tb.make(M.FLUSH)])
    tb.media.read_err_lpns.add(21)
    r = tb.make(M.READ, lba=20, nlb=1)
    r.force_status = M.MEDIA_ERROR
    await tb.run_cmds([r])
    tb.media.read_err_lpns.clear()
    for p in range(2):                           # its words still reach host memory
        assert tb.rd_got.pop(r.dptr + p * tb.page_bytes, None) is not None, "MEDIA_ERROR read: no data"
    if not tb.plp:
        # PROGRAM_FAIL: a plain write is buffered (OK), its program fails: the FLUSH behind it
        # reports PROGRAM_FAIL and the page is dropped (LBA 30 keeps its previous, unwritten state);
        # then a FUA write whose program fails reports it itself, and the next FLUSH is OK again
        await tb.run_cmds([tb.make(M.FLUSH)])
        tb.media.fail_seqs.add(tb.media.seq)
        w2 = tb.make(M.WRITE, lba=30)
        f2 = tb.make(M.FLUSH)
        f2.force_status = M.PROGRAM_FAIL
        await tb.run_cmds([w2, f2])
        tb.model.drop(w2)
        tb.media.fail_seqs.add(tb.media.seq)
        w3 = tb.make(M.WRITE, lba=31, flags=M.FUA)
        w3.force_status = M.PROGRAM_FAIL
        await tb.run_cmds([w3, tb.make(M.FLUSH)])
        assert int(dut.u_wbuf.cnt_wb_fail.value) == 2
        await tb.run_cmds([tb.make(M.READ, lba=30, nlb=1)])
    await tb.run_cmds([tb.make(M.WRITE, lba=30, nlb=1), tb.make(M.READ, lba=29, nlb=3), tb.make(M.FLUSH)])
    assert not tb.errors, tb.errors[:10]
    await tb.power_cut(check_reads=6)
    dut._log.info("errors: counts %s", tb.counts)


# ------------------------------------------------------------------------------------- pytest
CONFIGS = {
    # DEPTH, NUM_SLOTS, PAGE_BYTES, THRESH_PCT, PLP, PLP_BUDGET_PAGES
    "d8_s8": (8, 8, 64, 75, 0, 0),
    "d16_s16_plp": (16, 16, 64, 90, 1, 16),
    "d16_s16_plp_b6": (16, 16, 64, 90, 1, 6),   # capacitor for 6 pages: writes held to 6 not durable
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_ssd_order(cfg):
    depth, slots, page, thresh, plp, budget = CONFIGS[cfg]
    # mutation runs: another copy of the queue or the buffer in place of the real one
    mutants = {f: Path(os.environ[v]).resolve() for f, v in (("ats_cmdq.sv", "ATS_CMDQ_SRC"),
                                                              ("ats_wbuf.sv", "ATS_WBUF_SRC")) if os.environ.get(v)}
    params = {"DEPTH": depth, "NUM_LBAS": 64, "NUM_TX": 4, "NUM_SLOTS": slots, "PAGE_BYTES": page,
              "THRESH_PCT": thresh, "NUM_WAITERS": 4}
    if plp:
        params.update({"PLP": 1, "PLP_BUDGET_PAGES": budget})
    mut = "".join("_" + p.parent.name for p in mutants.values() if "rtl" not in p.parts)
    run(toplevel="ats_ssd_bench_top",
        sources=block_sources("ats_ssd_bench_top", replace=mutants),
        test_module="test_ats_ssd_order", test_dir=HERE, build_key=f"order_{cfg}{mut}",
        parameters=params, waves=os.environ.get("ATS_WAVES"),
        public={"ats_wbuf": ["cnt_wb_fail"]},     # visible to cocotb: the top's signals and this one
        extra_env={"ATS_LONG": "1" if LONG else "0",
                   **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                      if os.environ.get("ATS_TEST_FILTER") else {})})
