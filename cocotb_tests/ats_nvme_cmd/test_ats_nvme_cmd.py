# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_cmd: I/O SQEs to §1 descriptors and completions to CQE requests, against the NVMe
reference model.

Around the DUT, plain-Python models of its neighbours:
  - the queue manager: SQEs handed over only while `fetch_ok_io` (I/O) / `fetch_ok_adm` (admin)
    is high, after a random fetch delay; CQE requests taken only while their CQ has room (`cq_room`,
    driven at random per CQ, some CQs full for long stretches);
  - ats_nvme_prp: setup answers from the reference walk (`NvmeRef.prp_walk`), the DSM range list
    read through the window from host memory (`err` on unreachable dwords), `slot_err`, and the
    write-order counters `wr_acc` / `wr_done` (a READ's data burst is counted taken before the
    core completes it, issued after a random delay);
  - the core: takes descriptors with backpressure and completes them out of order after random
    delays with random device statuses and results (so atomic Writes fail and the TX_ABORT of the
    failed one's txid before the next atomic Write on it, compared like every descriptor, is
    required to occur; with ATX > 1 several atomic Writes of distinct pool txids are required to be
    in the core at once);
  - the admin block: takes admin SQEs, stays busy a while.
Reference: `atstb.nvme_ref.NvmeRef` (`_io` for every SQE, `complete` for every completion): every
descriptor of a tag equals the reference's next descriptor for that tag; every CQE request equals
the reference's CQE for (SQ, CID); no CQE request before `wr_done` reached the `wr_acc` of its
command's completion; a window error makes the status Data Transfer Error.

Environment: ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from atstb import nvme_ref as R
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
PAGE = 4096
LIMIT = 1 << 36
NQ = 4
DEV_STATUSES = [0] * 12 + [1, 2, 3, 4, 5, 6, 7, 8, 0x10, 0x11, 0x13, 0x42]


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 6007 + 11)
        self.qdepth = int(dut.QDEPTH.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        self.mem = R.HostMemory(limit=LIMIT, base=0x100000)
        self.atx = int(dut.ATX.value)
        self.ref = R.NvmeRef(R.NvmeRefConfig(qdepth=self.qdepth, page_bytes=self.page_bytes, nq=NQ, atx=self.atx),
                             mem=self.mem)
        for q in range(NQ + 1):
            self.ref.cqs[q] = R._Cq(q, 0, 64)
        self.prio = {0: 0}
        for q in range(1, NQ + 1):
            self.prio[q] = self.rng.randrange(4)
            self.ref.sqs[q] = R._Sq(q, 0, 64, cqid=self.rng.randrange(1, NQ + 1), prio=self.prio[q])
        self.ref.sqs[0] = R._Sq(0, 0, 64, cqid=0)
        rp = lambda: pause_gen(self.rng, True)          # noqa: E731
        self.sqe = StreamSource(dut, "s_sqe", dut.clk, ["data", "sqid", "cqid", "sqhd", "prio"])
        self.sqe.on_accept = self._on_sqe
        self.adm = StreamSink(dut, "m_adm", dut.clk, ["data", "sqhd"], pause=rp())
        self.set = StreamSink(dut, "m_set", dut.clk, ["slot", "prp1", "prp2", "len"], pause=rp())
        self.setr = StreamSource(dut, "s_setr", dut.clk, ["status"], pause=rp())
        self.lrd = StreamSink(dut, "m_lrd", dut.clk, ["addr", "len"], pause=rp())
        self.lrdat = StreamSource(dut, "s_lrd", dut.clk, ["data", "last", "err"], pause=rp())
        self.cmd = StreamSink(dut, "m_cmd", dut.clk, ["op", "tag", "lba", "nlb", "txid", "flags", "attr",
                                                      "prio", "dptr", "aux"],
                              pause=pause_gen(self.rng, "heavy", max_stall=30))
        self.cpl = StreamSource(dut, "s_cpl", dut.clk, ["tag", "status", "result"], pause=rp())
        self.room = [1] * (NQ + 1)
        self.pinned = False                        # the CQs' room is set by a test, not at random
        self.stats = {"full_cq": 0}
        self.cqe_taken: list[dict] = []            # CQE requests taken (checked at the next edge)
        dut.m_cqe_ready.value = 0
        cocotb.start_soon(self._cqe_port())
        for n, v in (("vwc", 1), ("disabling", 0), ("m_flush", 0), ("adm_busy", 0), ("slot_err", 0),
                     ("wr_acc", 0), ("wr_done", 0), ("cq_room", (1 << (NQ + 1)) - 1)):
            getattr(dut, n).value = v
        self.slot_err = 0
        self.acc = self.done = 0                   # wr_acc / wr_done (unwrapped)
        self.pending_done: list[int] = []          # cycles at which wr_done moves on
        self.snap: dict[int, int] = {}             # tag -> wr_acc when its command completed
        self.exp_desc: dict[int, list] = {}        # tag -> the reference's descriptors still expected
        self.in_core: list[tuple[int, int]] = []   # (tag, cycle taken)
        self.walk: dict[int, list[int] | None] = {}  # prp model: slot -> pages
        self.cycle = 0
        self.cid = 0
        self.feeding = False
        self.smart = [0, 0, 0, 0]                  # DUT: reads, bytes read, writes, bytes written
        self.alloc: dict[int, tuple[int, int]] = {}   # tag -> (SQ, cycle taken), until its CQE is acknowledged
        self.stats.update(sqe=0, adm=0, desc=0, cqe=0, err_cqe=0, trims=0, lba_hi=0, xfer_win=0, atom_abort=0,
                          atom_multi=0)
        every_edge(dut.clk, self._edge)

    async def _cqe_port(self) -> None:
        """The queue manager's CQE side, mid-cycle (values settled): CQs fill and drain at random;
        a request is taken only while its CQ has room and is held otherwise (as ats_nvme_qm does),
        with random stalls."""
        d, pause = self.dut, pause_gen(self.rng, True)
        room_last, cur = list(self.room), None
        while True:
            await FallingEdge(d.clk)
            # a request newly presented was picked at the last rising edge, from the room of the
            # cycle before: its CQ must have had room then (a full CQ holds back only its own)
            item = (int(d.m_cqe_cqid.value), int(d.m_cqe_sqid.value), int(d.m_cqe_cid.value)) \
                if int(d.m_cqe_valid.value) else None
            if item is not None and item != cur:
                assert room_last[item[0]], f"CQE request {item} picked while CQ {item[0]} was full"
            cur = item
            if self.rng.random() < 0.01 and not self.pinned:
                q = self.rng.randrange(NQ + 1)
                self.room[q] ^= 1
                self.stats["full_cq"] += not self.room[q]
                d.cq_room.value = sum(b << i for i, b in enumerate(self.room))
            v = int(d.m_cqe_valid.value)
            take = bool(v and self.room[int(d.m_cqe_cqid.value)] and not next(pause))
            d.m_cqe_ready.value = int(take)
            room_last = list(self.room)
            if take:
                cur = None                     # the next request is a new one, even for the same CQE fields
            if take:
                self.cqe_taken.append({f: int(getattr(d, f"m_cqe_{f}").value)
                                       for f in ("cqid", "sqid", "sqhd", "cid", "status", "dw0")})


    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def _on_sqe(self, item: dict, cycle: int) -> None:
        """The DUT took an SQE at this edge: the reference takes it too (the same free slots: CQE
        acknowledgements of this edge are applied after, in _edge, as the DUT frees after it took)."""
        if item["sqid"] == 0:
            return
        raw = item["data"].to_bytes(64, "little")
        before = {i for i, sl in enumerate(self.ref.slots) if sl is not None}
        self.ref._io(R._Cmd.parse(raw), self.ref.sqs[item["sqid"]], item["sqhd"])
        for i, sl in enumerate(self.ref.slots):
            if sl is not None and i not in before:
                self.alloc[i] = (item["sqid"], cycle)
        self.take_ref()

    # ------------------------------------------------------------------ every edge: the models
    def _edge(self) -> None:
        self.cycle += 1
        d = self.dut
        # SMART events (one cycle after the CQE acknowledgement)
        if int(d.smart_rd.value):
            self.smart[0] += 1
            self.smart[1] += int(d.smart_bytes.value)
        if int(d.smart_wr.value):
            self.smart[2] += 1
            self.smart[3] += int(d.smart_bytes.value)
        # sq_busy low: no slot of that SQ in use for 3 cycles (allocated and not yet acknowledged)
        sqb = int(d.sq_busy.value)
        for tag, (sq, t0) in self.alloc.items():
            if not sqb >> sq & 1 and self.cycle - t0 >= 3:
                raise AssertionError(f"sq_busy[{sq}] low with slot {tag} of SQ {sq} in use since cycle {t0}")
        while self.cqe_taken:                      # taken at this edge: freed after this edge's SQE take
            self.check_cqe(self.cqe_taken.pop(0))
        # write-order counters
        while self.pending_done and self.pending_done[0] <= self.cycle:
            self.pending_done.pop(0)
            self.done += 1
        d.wr_done.value = self.done & 0xFF
        d.wr_acc.value = self.acc & 0xFF
        # prp model: setups
        while self.set.queue:
            s = self.set.queue.popleft()
            slot, ln = s["slot"], s["len"]
            self.slot_err &= ~(1 << slot)
            try:
                self.walk[slot] = self.ref.prp_walk(s["prp1"], s["prp2"], ln)
                st = 0
            except R._Fail as f:
                st = {R.SC_PRP_OFFSET: 1, R.SC_DATA_XFER: 2}[f.status]
                self.walk[slot] = None
            self.setr.send_nowait(status=st)
        # prp model: the DSM list through the window
        while self.lrd.queue:
            r = self.lrd.queue.popleft()
            slot, off = r["addr"] >> 17, r["addr"] & 0x1FFFF
            pages = self.walk[slot]
            ndw = (r["len"] + 3) // 4
            e = 0
            for j in range(ndw):
                o = off + 4 * j
                a = pages[o >> 12] + (o & 0xFFF)
                try:
                    v = struct.unpack("<I", self.mem.read(a, 4))[0]
                except R.DmaError:
                    e, v = 1, 0
                if e:
                    self.slot_err |= 1 << slot
                self.lrdat.send_nowait(data=0 if e else v, last=int(j == ndw - 1), err=e)
        d.slot_err.value = self.slot_err
        # the core: descriptors
        while self.cmd.queue:
            got = self.cmd.queue.popleft()
            tag = got["tag"]
            exp = self.exp_desc.get(tag)
            assert exp, f"descriptor for tag {tag} not expected: {got}"
            want = exp.pop(0)
            g = tuple(got[f] for f in ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"))
            assert g == want.fields(), f"descriptor {g} != the reference's {want.fields()}"
            self.stats["desc"] += 1
            self.stats["trims"] += want.op == R.OP_TRIM
            atom = self.ref.atom0 <= want.txid <= self.ref.cfg.num_tx
            self.stats["atom_abort"] += want.op == R.OP_TX_ABORT and atom
            self.in_core.append((tag, self.cycle, want))
            if want.op == R.OP_WRITE and atom:        # atomic WRITEs of distinct txids in the core at once
                n = sum(w.op == R.OP_WRITE and self.ref.atom0 <= w.txid <= self.ref.cfg.num_tx
                        for _, _, w in self.in_core)
                self.stats["atom_multi"] = max(self.stats["atom_multi"], n)
        # the core: completions, out of order
        if self.in_core and self.rng.random() < 0.3:
            i = self.rng.randrange(len(self.in_core))
            tag, t0, want = self.in_core[i]
            if self.cycle - t0 > 3:
                del self.in_core[i]
                self.core_complete(tag, want)

    def core_complete(self, tag: int, want) -> None:
        st = self.rng.choice(DEV_STATUSES)
        res = self.rng.getrandbits(32)
        if want.op == R.OP_READ and st == 0:
            # its data went out through the window: one burst taken now, issued later
            self.acc += 1
            self.pending_done.append(max(self.pending_done[-1] if self.pending_done else 0,
                                         self.cycle + self.rng.randrange(0, 60)))
        if want.op in (R.OP_READ, R.OP_WRITE) and st == 0 and self.rng.random() < 0.12:
            # a window access of the core failed (a DMA error): Data Transfer Error
            self.slot_err |= 1 << tag
            self.ref.slots[tag].dma_error = True
            self.stats["xfer_win"] += 1
        self.snap[tag] = self.acc
        if self.rng.random() < 0.03:
            # a completion for a tag no command holds (>= QDEPTH): ignored (no CQE, no state)
            self.cpl.send_nowait(tag=self.rng.randrange(self.qdepth, 256), status=0, result=0)
            self.stats["stray_cpl"] = self.stats.get("stray_cpl", 0) + 1
        self.cpl.send_nowait(tag=tag, status=st, result=res)
        self.ref.complete(tag, st, res)
        self.take_ref()

    def take_ref(self) -> None:
        """The reference's new descriptors: expected from the DUT, except those the DUT answers
        itself (an LBA beyond 48 bits: the core would say BAD_LBA)."""
        while True:
            ds = self.ref.take_descriptors()
            if not ds:
                return
            for dsc in ds:
                if dsc.lba >> 48:
                    self.stats["lba_hi"] += 1
                    self.snap[dsc.tag] = self.acc
                    self.ref.complete(dsc.tag, R.ST_BAD_LBA, 0)
                else:
                    self.exp_desc.setdefault(dsc.tag, []).append(dsc)

    # ------------------------------------------------------------------ SQEs
    def page(self) -> int:
        if self.rng.random() < 0.03:
            return LIMIT + PAGE * self.rng.randrange(1, 100)
        a = self.mem.alloc(PAGE)
        self.mem.write(a, self.rng.randbytes(PAGE))
        return a

    def prps(self, ln: int) -> tuple[int, int]:
        off = 4 * self.rng.randrange(1024) if self.rng.random() < 0.5 else 0
        if self.rng.random() < 0.02:
            off |= 2
        n = -(-((off & 0xFFF) + ln) // PAGE) if ln else 0
        pages = [self.page() for _ in range(max(n, 1))]
        if n <= 2:
            return pages[0] + off, pages[1] if n == 2 else 0
        lp = self.mem.alloc(PAGE)
        self.mem.write(lp, struct.pack(f"<{n - 1}Q", *pages[1:]))
        return pages[0] + off, lp

    def make_sqe(self, qid: int) -> bytes:
        d = [0] * 16
        self.cid = (self.cid + 1) & 0xFFFF
        r = self.rng.random()
        if qid == 0:
            opc = self.rng.choice([0x06, 0x02, 0x09, 0x0A])
            d[0] = opc | self.cid << 16
            d[10] = self.rng.getrandbits(32)
            return struct.pack("<16I", *d)
        opc = (self.rng.choice(sorted(R.IO_OPCODES)) if r < 0.95 else
               self.rng.choice([0x03, 0x05, 0x80, 0x8F, 0xFF, 0x06]))
        d[0] = opc | self.cid << 16
        if self.rng.random() < 0.02:
            d[0] |= self.rng.choice([1 << 8, 2 << 14])
        d[1] = 1 if self.rng.random() < 0.97 else self.rng.choice([0, 2, 0xFFFFFFFF])
        maxnlb = 65536 // self.page_bytes
        nlb = self.rng.randrange(maxnlb) if self.rng.random() < 0.97 else maxnlb + self.rng.randrange(3)
        slba = self.rng.randrange(1 << 20) if self.rng.random() < 0.97 else 1 << 48 | self.rng.randrange(99)
        if opc == R.IO_WRITE and self.rng.random() < 0.5:     # an atomic Write: 2 … AWU blocks in a group
            awu = self.ref.awu
            nlb = self.rng.randrange(1, awu)
            slba = slba // awu * awu + self.rng.randrange(awu - nlb)
        d[10], d[11] = slba & 0xFFFFFFFF, slba >> 32
        d[12] = nlb | (self.rng.randrange(2) << 30)
        d[13] = (self.rng.randrange(64) | self.rng.randrange(2) << 8 | self.rng.randrange(2) << 9 |
                 self.rng.randrange(3) << 16)
        if self.rng.random() < 0.03:
            d[13] |= 1 << self.rng.choice([6, 7, 10, 18, 20, 31])
        ln = 0
        if opc in (R.IO_READ, R.IO_WRITE, R.IO_TX_READ, R.IO_TX_WRITE):
            ln = (nlb + 1) * self.page_bytes
        elif opc == R.IO_DIFF_WRITE:
            ln = self.rng.randrange(1, 4097)
            d[14] = self.rng.randrange(self.page_bytes) | ln << 16
        elif opc in (R.IO_DSM, R.IO_RANGE_FLUSH):
            nr = self.rng.randrange(8) if self.rng.random() < 0.95 else 8 + self.rng.randrange(4)
            d[10] = nr | (self.rng.getrandbits(8) << 8 if opc == R.IO_DSM else 0) & 0xFF
            d[11] = (self.rng.randrange(2) << 2) if opc == R.IO_DSM else 0
            ln = (nr + 1) * (16 if opc == R.IO_DSM else 8)
        prp1, prp2 = self.prps(min(ln, 65536)) if ln else (self.rng.getrandbits(40) & ~3, 0)
        if opc == R.IO_DSM and prp1 < LIMIT:
            # the range list: lengths 0 .. 65,537 LBAs, SLBAs sometimes beyond 48 bits
            body = b""
            for _ in range(8):
                length = self.rng.choice([0, 1, 8, 100]) if self.rng.random() < 0.9 else self.rng.choice([65536, 65537])
                s = self.rng.randrange(1 << 20) if self.rng.random() < 0.95 else 1 << 50
                body += struct.pack("<IIQ", 0, length, s)
            try:
                self.mem.write(prp1, body[:ln])
            except R.DmaError:
                pass
        d[6], d[7], d[8], d[9] = prp1 & 0xFFFFFFFF, prp1 >> 32, prp2 & 0xFFFFFFFF, prp2 >> 32
        return struct.pack("<16I", *d)

    async def feed(self, n: int) -> None:
        """n SQEs, as the queue manager hands them over."""
        for _ in range(n):
            qid = 0 if self.rng.random() < 0.08 else self.rng.randrange(1, NQ + 1)
            ok = self.dut.fetch_ok_adm if qid == 0 else self.dut.fetch_ok_io
            while not int(ok.value):
                await RisingEdge(self.dut.clk)
            for _ in range(self.rng.randrange(0, 12)):          # the fetch
                await RisingEdge(self.dut.clk)
            raw = self.make_sqe(qid)
            sq = self.ref.sqs[qid]
            sqhd = self.rng.randrange(64)
            self.sqe.send_nowait(data=int.from_bytes(raw, "little"), sqid=qid, cqid=sq.cqid, sqhd=sqhd,
                                 prio=self.prio[qid])
            while self.sqe.queue:
                await RisingEdge(self.dut.clk)
            await RisingEdge(self.dut.clk)        # the levels count the SQE from the cycle after
            self.stats["sqe"] += 1
            if qid == 0:
                self.stats["adm"] += 1
                got = await self.adm.recv(timeout_cycles=2000)
                assert got["data"] == int.from_bytes(raw, "little") and got["sqhd"] == sqhd
                cocotb.start_soon(self.admin_busy())

    async def shutdown_flush(self) -> None:
        """The queue manager asks for the shutdown FLUSH (idle device): one FLUSH with tag 0 and no
        other field, its completion answers s_flush_done (no CQE), no SQE is taken meanwhile."""
        d = self.dut
        self.exp_desc.setdefault(0, []).append(R.Descriptor(R.OP_FLUSH, tag=0))
        self.ref.slots[0] = R._Slot(0, 0, 0, R.IO_FLUSH, 0, shutdown=True, in_core=True)
        d.m_flush.value = 1
        for _ in range(5000):
            await RisingEdge(d.clk)
            assert not int(d.s_sqe_ready.value), "an SQE could be taken during the shutdown FLUSH"
            if int(d.s_flush_done.value):
                break
        else:
            raise AssertionError("no s_flush_done")
        assert not self.exp_desc[0] and not self.cqe_taken
        d.m_flush.value = 0
        self.ref.slots[0] = None
        self.stats["flush"] = self.stats.get("flush", 0) + 1
        for _ in range(5):
            await RisingEdge(d.clk)

    async def admin_busy(self) -> None:
        self.dut.adm_busy.value = 1
        for _ in range(self.rng.randrange(1, 40)):
            await RisingEdge(self.dut.clk)
        self.dut.adm_busy.value = 0

    async def collect(self, until_idle: bool = True) -> None:
        """Checks CQE requests against the reference until every slot is free."""
        idle = 0
        for _ in range(400000):
            await RisingEdge(self.dut.clk)
            busy = any(s is not None for s in self.ref.slots)
            idle = idle + 1 if not busy and not self.sqe.queue and not self.feeding else 0
            if idle > 50:
                return
        raise AssertionError(f"slots never freed: {[i for i, s in enumerate(self.ref.slots) if s]}")

    def check_cqe(self, got: dict) -> None:
        cq = self.ref.cqs[got["cqid"]]
        for k, (slot, rec) in enumerate(cq.pending):
            if rec.sqid == got["sqid"] and rec.cid == got["cid"]:
                break
        else:
            raise AssertionError(f"CQE request {got} not in the reference's pending CQEs")
        del cq.pending[k]
        want_st = rec.dnr << 14 | rec.sct << 8 | rec.sc
        assert (got["sqhd"], got["dw0"], got["status"]) == (rec.sqhd, rec.dw0, want_st), (
            f"CQE {got} != the reference's {rec}")
        tag = slot.tag
        assert self.done >= self.snap.get(tag, 0), (
            f"CQE of tag {tag} before its window writes were issued (wr_done {self.done} < {self.snap[tag]})")
        self.ref.slots[tag] = None
        if want_st == 0:
            self.ref._count(slot)                  # SMART: the reference counts at the CQE write
        self.alloc.pop(tag, None)
        self.stats["cqe"] += 1
        self.stats["err_cqe"] += want_st != 0


@cocotb.test()
async def cmd_random(dut):
    tb = TB(dut)
    await tb.reset()
    n = 1500 if LONG else 400
    for phase in range(4):
        dut.vwc.value = phase % 2
        tb.ref.features[R.FID_VWC] = phase % 2
        tb.feeding = True
        coll = cocotb.start_soon(tb.collect())
        await tb.feed(n // 4)
        tb.feeding = False
        await coll
        assert int(dut.cmd_idle.value), "cmd_idle low with every slot free"
        assert int(dut.sq_busy.value) == 0, "sq_busy with every slot free"
        r = tb.ref
        assert tb.smart == [r.read_cmds, r.bytes_read, r.write_cmds, r.bytes_written], (
            f"SMART events {tb.smart} != the reference's counts")
        await tb.shutdown_flush()
    dut._log.info("cmd: %s", tb.stats)
    assert tb.smart[0] and tb.smart[2], tb.smart
    for k in ("adm", "desc", "cqe", "err_cqe", "trims", "lba_hi", "xfer_win", "full_cq", "stray_cpl",
              "atom_abort"):      # atom_abort: a failed atomic Write's txid aborted before the next one
        assert tb.stats[k] > 0, f"no {k}: {tb.stats}"
    assert 1 <= tb.stats["atom_multi"] <= tb.atx and (tb.atx == 1 or tb.stats["atom_multi"] > 1), (
        f"atomic Writes in the core at once vs the pool of {tb.atx}: {tb.stats}")


@cocotb.test()
async def cqe_after_long_full_cq(dut):
    """A CQ full for long while other queues' READ data keeps the write-order counters moving: 200
    bursts (more than 128) pass after the commands of that CQ completed in the core. Each of their
    CQE requests must still come once the CQ has room, checked against the reference (README
    "Completions": "reached" is kept per slot once it holds). Before 2026-11-30 the mod-256 compare
    of wr_done with the slot's record ran every cycle, so after 128 more bursts the record looked
    not reached again and those CQEs never came (found by a review of the RTL)."""
    tb = TB(dut)
    await tb.reset()
    qid = 1
    cq = tb.ref.sqs[qid].cqid
    tb.pinned = True
    tb.room[cq] = 0
    dut.cq_room.value = sum(b << i for i, b in enumerate(tb.room))
    tb.feeding = True
    coll = cocotb.start_soon(tb.collect())
    for _ in range(min(6, tb.qdepth // 2)):         # SQEs of SQ 1, its CQ full (slots left free: a
                                                    # DSM takes more than one)
        while not int(dut.fetch_ok_io.value):
            await RisingEdge(dut.clk)
        raw = tb.make_sqe(qid)
        tb.sqe.send_nowait(data=int.from_bytes(raw, "little"), sqid=qid, cqid=cq, sqhd=tb.rng.randrange(64),
                           prio=tb.prio[qid])
        while tb.sqe.queue:
            await RisingEdge(dut.clk)
        await RisingEdge(dut.clk)
        tb.stats["sqe"] += 1
    for _ in range(20_000):                         # until each is done in the core (or by the decoder)
        await RisingEdge(dut.clk)
        if not tb.in_core and not any(tb.exp_desc.values()):
            break
    else:
        raise AssertionError(f"commands not done: in core {tb.in_core}, expected {tb.exp_desc}")
    held = sum(s is not None for s in tb.ref.slots)
    assert held, "no command waits for its CQ"
    for _ in range(200):                            # other queues' READ bursts: taken, issued soon after
        tb.acc += 1
        tb.pending_done.append(tb.cycle + 3)
        await RisingEdge(dut.clk)
    for _ in range(50):
        await RisingEdge(dut.clk)
    assert not tb.stats["cqe"], "a CQE request taken while its CQ was full"
    tb.room[cq] = 1                                 # the CQ has room again: every held CQE must come
    dut.cq_room.value = sum(b << i for i, b in enumerate(tb.room))
    tb.pinned = False
    tb.feeding = False
    await coll
    assert tb.stats["cqe"] == held, f"CQEs {tb.stats['cqe']} of {held} held commands"
    dut._log.info("cqe_after_long_full_cq: %d CQEs held for 200 bursts, then posted", held)


CONFIGS = {"q32_p4096": {"QDEPTH": 32, "PAGE_BYTES": 4096}, "q4_p512": {"QDEPTH": 4, "PAGE_BYTES": 512},
           "q32_p4096_atx4": {"QDEPTH": 32, "PAGE_BYTES": 4096, "ATX": 4}}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_cmd(cfg):
    run(toplevel="ats_nvme_cmd", sources=block_sources("ats_nvme_cmd", "ats_stream_check") + [HERE / "ats_nvme_cmd_bind.sv"], test_module="test_ats_nvme_cmd",
        test_dir=HERE, build_key=cfg, parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_LONG": "1" if LONG else "0"}, public={})   # the test reads only the top's signals
