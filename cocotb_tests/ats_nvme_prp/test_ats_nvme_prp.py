# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_prp: PRP walks, window reads and window writes against the NVMe reference model.

The DMA side is a plain-Python model of ats_nvme_rq's ports (rtl/nvme/README.md, "ats_nvme_rq"):
reads answered in request order after random delays, one dword a beat, `err` on every dword at an
unreachable or poisoned address and on every later dword of that request (as the requester ends a
tag in error); writes taken only after their request (as the requester does), applied to host
memory, `s_wdone` (with `err` when the memory is unreachable) after random delays, in order,
sometimes in consecutive cycles. Every DMA request is logged and compared with the expected list.

Host memory is the reference model's `HostMemory`: pages below `LIMIT` hold random bytes, pages at
or above it are unreachable (DMA errors), and a few dwords are poisoned (a read covering one fails). The host side builds PRPs as a driver does: PRP1 with an
offset, PRP2 as the second page or a PRP list at a random 8-byte offset, chained when the list
reaches its page's end; some are corrupted (offsets on PRP1, PRP2, entries and chain pointers, a
list or a data page out of reach, a transfer longer than 64 KiB).

Reference (plain Python, `atstb.nvme_ref`, written from docs/host-interface.md §1.4 / §1.8a):
  - the setup status is `NvmeRef.prp_walk`'s result (OK, PRP Offset Invalid, Data Transfer Error;
    len > 65536 or a slot >= SLOTS: BAD), and its PRP list reads are exactly the walk's reads;
  - window reads inside the window: one DMA read per host page touched; each dword equals host
    memory at the reference's translation (page k of the window = the walk's k-th page), zeros with
    `err` from a failing dword to the end of its page's piece; reads outside the window (or of a
    closed or missing slot, or of length 0): zeros with `err` and no DMA at all; the dword count
    is ceil((addr[1:0] + len) / 4);
  - window writes: the DMA writes are exactly the expected chunks (in-window runs split at WCHUNK,
    the host page and the window end); host memory afterwards equals a shadow with every in-window,
    reachable dword of every burst applied in order, and no other address is ever written;
  - the slot's error flag = any read or write error or out-of-window access since its setup; 0
    when its setup answers; already set when wr_done passes a burst that had an error;
  - wr_acc counts the bursts whose last beat was taken (within the cycle), wr_done never passes
    wr_acc, and when wr_done reaches a burst every dword of it has been written (its s_wdone
    given); at the end wr_done = wr_acc = the bursts sent;
  - a slot read and written in the cycles right after its setup answered sees its new window;
  - DMA requests never cross 4 KiB, reads at most 1024 dwords, writes at most WCHUNK.
Setups run concurrently with reads and writes of other slots. Random idle and backpressure on every
stream (set, setr, wrd, wwr, rreq, rdat, wreq, wdat) and random DMA latencies.

Environment: ATS_SEED (seed), ATS_LONG=1 (more rounds).
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from atstb import nvme_ref as R
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
PAGE = 4096
LIMIT = 1 << 36                   # host memory reachable below this address
ID_LIST, ID_RD, ID_WR = 2, 3, 4
ST_OK, ST_OFFSET, ST_XFER, ST_BAD = range(4)
SC_TO_ST = {R.SC_OK: ST_OK, R.SC_PRP_OFFSET: ST_OFFSET, R.SC_DATA_XFER: ST_XFER}


class PoisonMemory(R.HostMemory):
    """HostMemory with poisoned dwords: a read covering one raises DmaError (as a PCIe completion
    with an error would)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.poison: set[int] = set()

    def bad(self, addr: int) -> bool:
        return addr in self.poison or addr + 4 > self.limit

    def read(self, addr: int, n: int) -> bytes:
        if any(a in self.poison for a in range(addr & ~3, addr + n, 4)):
            raise R.DmaError(f"poisoned dword in {addr:#x}+{n}")
        return super().read(addr, n)


class DmaModel:
    """ats_nvme_rq's ports as seen by the DUT (request order, one dword a beat)."""

    def __init__(self, tb):
        self.tb, self.dut, self.rng, self.mem = tb, tb.dut, tb.rng, tb.mem
        self.rreq = StreamSink(tb.dut, "m_rreq", tb.dut.clk, ["addr", "ndw", "id"], pause=pause_gen(self.rng, True))
        self.rdat = StreamSource(tb.dut, "s_rdat", tb.dut.clk, ["data", "last", "err", "id"],
                                 pause=pause_gen(self.rng, True, 0.3))
        self.wreq = StreamSink(tb.dut, "m_wreq", tb.dut.clk, ["addr", "ndw", "id"],
                               pause=pause_gen(self.rng, "heavy", max_stall=20))
        self.credit = 0                 # write dwords whose request was taken and that were not yet
        self.wdat = StreamSink(tb.dut, "m_wdat", tb.dut.clk, ["data"], pause=self._wdat_pause())
        self.dut.s_wdone.value = 0
        self.dut.s_wdone_err.value = 0
        self.written: set[int] = set()     # every address a write touched
        self.wdone_dwords = 0              # dwords of writes whose s_wdone was given
        self.rd_log: list[tuple[int, int, int]] = []     # (addr, ndw, id) of every read request
        self.wr_log: list[tuple[int, int]] = []          # (addr, ndw) of every write request
        self.dones: list[tuple[int, int]] = []           # (ndw, err) of writes taken, not yet done
        cocotb.start_soon(self._reads())
        cocotb.start_soon(self._writes())
        cocotb.start_soon(self._dones())

    def _wdat_pause(self):
        p = pause_gen(self.rng, True, 0.2)
        while True:
            stall = next(p)
            yield stall or self.credit - len(self.wdat.queue) <= 0

    @staticmethod
    def check_req(addr: int, ndw: int, limit: int, what: str) -> None:
        assert addr % 4 == 0 and 1 <= ndw <= limit, f"{what} {addr:#x} ndw {ndw}"
        assert (addr % PAGE) + 4 * ndw <= PAGE, f"{what} {addr:#x} ndw {ndw} crosses 4 KiB"

    async def _reads(self):
        while True:
            while not self.rreq.queue:
                await RisingEdge(self.dut.clk)
            r = self.rreq.queue.popleft()
            self.check_req(r["addr"], r["ndw"], 1024, "read")
            assert r["id"] in (ID_LIST, ID_RD), f"read id {r['id']}"
            if r["id"] == ID_LIST:
                assert r["addr"] % 8 == 0 and r["ndw"] % 2 == 0, f"PRP list read {r}"
            self.rd_log.append((r["addr"], r["ndw"], r["id"]))
            for _ in range(self.rng.choice([0, 0, 1, 3, 10])):
                await RisingEdge(self.dut.clk)
            e = 0
            for j in range(r["ndw"]):
                a = r["addr"] + 4 * j
                e = e or int(self.mem.bad(a))         # the requester: zeros with err from the error on
                d = 0 if e else struct.unpack("<I", self.mem.read(a, 4))[0]
                self.rdat.send_nowait(data=d, last=int(j == r["ndw"] - 1), err=e, id=r["id"])

    async def _writes(self):
        while True:
            while not self.wreq.queue:
                await RisingEdge(self.dut.clk)
            w = self.wreq.queue.popleft()
            self.check_req(w["addr"], w["ndw"], self.tb.wchunk, "write")
            assert w["id"] == ID_WR
            self.credit += w["ndw"]
            while len(self.wdat.queue) < w["ndw"]:
                await RisingEdge(self.dut.clk)
            data = b"".join(struct.pack("<I", self.wdat.queue.popleft()["data"]) for _ in range(w["ndw"]))
            self.credit -= w["ndw"]
            self.wr_log.append((w["addr"], w["ndw"]))
            try:
                self.mem.write(w["addr"], data)
                err = 0
                self.written.update(range(w["addr"], w["addr"] + len(data), 4))
            except R.DmaError:
                err = 1
            self.dones.append((w["ndw"], err))

    async def _dones(self):
        """s_wdone per write, in order, after 0-6 idle cycles (0: in consecutive cycles)."""
        while True:
            while not self.dones:
                await RisingEdge(self.dut.clk)
            for _ in range(self.rng.choice([0, 0, 0, 1, 2, 6])):
                await RisingEdge(self.dut.clk)
            ndw, err = self.dones.pop(0)
            self.dut.s_wdone.value = 1
            self.dut.s_wdone_err.value = err
            await RisingEdge(self.dut.clk)
            self.wdone_dwords += ndw
            self.dut.s_wdone.value = 0
            self.dut.s_wdone_err.value = 0


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 3)
        self.slots = int(dut.SLOTS.value)
        self.wchunk = int(dut.WCHUNK.value)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        self.mem = PoisonMemory(limit=LIMIT, base=0x100000)
        self.ref = R.NvmeRef(R.NvmeRefConfig(qdepth=self.slots), mem=self.mem)
        self.list_reads: list[tuple[int, int, int]] = []   # the reference walk's list reads (addr, ndw, id)
        ref_dma_read = self.ref._dma_read

        def logged_dma_read(addr: int, n: int) -> bytes:
            self.list_reads.append((addr, n // 4, ID_LIST))
            return ref_dma_read(addr, n)
        self.ref._dma_read = logged_dma_read
        self.exp_rd_reqs: list[tuple[int, int, int]] = []  # expected window DMA reads (addr, ndw, id)
        self.exp_wr_reqs: list[tuple[int, int]] = []       # expected DMA writes (addr, ndw)
        self.set = StreamSource(dut, "s_set", dut.clk, ["slot", "prp1", "prp2", "len"], pause=pause_gen(self.rng, True))
        self.setr = StreamSink(dut, "m_setr", dut.clk, ["slot", "status"], pause=pause_gen(self.rng, True))
        self.wrd = StreamSource(dut, "s_wrd", dut.clk, ["addr", "len"], pause=pause_gen(self.rng, True))
        self.rdo = StreamSink(dut, "m_wrd", dut.clk, ["data", "last", "err"], pause=pause_gen(self.rng, "heavy", max_stall=25))
        self.wwr = StreamSource(dut, "s_wwr", dut.clk, ["addr", "data", "last"], pause=pause_gen(self.rng, True, 0.2))
        self.dma = DmaModel(self)
        self.win: dict[int, tuple[int, int] | None] = {}     # slot -> (lo dword, hi dword) of an open window
        self.exp_err = [False] * self.slots
        self.bursts: list[tuple[int, int, int, bool]] = []  # per burst: (in-window dwords, cumulative, slot, had an error)
        self.acc_seen = 0                         # bursts whose last beat was taken
        self.wwr.on_accept = self._on_wwr
        self.wr_done_seen = 0
        self.shadow: dict[int, bytes] = {}
        self.n_lists = self.n_setups = self.n_offsets = 0
        self.stats = dict(setups=0, ok=0, offset=0, xfer=0, bad=0, lists=0, chained=0, rd=0, rd_oob=0,
                          rd_err=0, wr=0, wr_oob=0, wr_err=0, quick=0, past_2_17=0)
        cocotb.start_soon(self._watch_wr_done())

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def _on_wwr(self, item: dict, cycle: int) -> None:
        if item.get("last"):
            self.acc_seen += 1

    async def _watch_wr_done(self):
        """wr_acc follows the last beats taken (sampled within a cycle); wr_done never passes it;
        wr_done reaching burst b: every dword of bursts 0..b has had its s_wdone, and the slot's
        error flag is already set if the burst had an error."""
        while True:
            await RisingEdge(self.dut.clk)
            acc, d = int(self.dut.wr_acc.value), int(self.dut.wr_done.value)
            assert (self.acc_seen - acc) & 0xFF in (0, 1), f"wr_acc {acc} with {self.acc_seen} bursts taken"
            assert (acc - d) & 0xFF < 128, f"wr_done {d} passed wr_acc {acc}"
            while (self.wr_done_seen & 0xFF) != d:
                b = self.wr_done_seen
                assert b < self.acc_seen, f"wr_done {d} passed the {self.acc_seen} bursts taken"
                assert self.dma.wdone_dwords >= self.bursts[b][1], (
                    f"burst {b} reported done with {self.dma.wdone_dwords} of its "
                    f"{self.bursts[b][1]} dwords (cumulative) written")
                _, _, slot, had_err = self.bursts[b]
                if had_err and slot < self.slots:
                    assert int(self.dut.slot_err.value) >> slot & 1, f"burst {b} done, slot {slot} error flag still 0"
                self.wr_done_seen += 1

    # ------------------------------------------------------------------ host side: PRPs
    def data_page(self) -> int:
        if self.rng.random() < 0.05:
            return LIMIT + PAGE * self.rng.randrange(1, 1000)          # unreachable
        a = self.mem.alloc(PAGE)
        self.mem.write(a, self.rng.randbytes(PAGE))
        if self.rng.random() < 0.05:
            self.mem.poison.add(a + 4 * self.rng.randrange(1024))      # one bad dword
        return a

    def make_prps(self) -> tuple[int, int, int]:
        """(prp1, prp2, len) of a random transfer, sometimes corrupted."""
        r = self.rng.random()
        self.n_setups += 1
        ln = (65536 + 4 * self.rng.randrange(1, 4) if self.n_setups % 12 == 5 else    # too long, in turn
              self.rng.choice([0, 4, 8, 512, 4096, 8192, 65536]) if r < 0.25 else
              self.rng.randrange(1, 65537))
        off = 4 * self.rng.randrange(1024) if self.rng.random() < 0.7 else 0
        if self.rng.random() < 0.03:
            off |= self.rng.randrange(1, 4)                             # PRP1 not dword aligned
        n = -(-((off & 0xFFF) + ln) // PAGE) if ln else 0
        pages = [self.data_page() for _ in range(max(n, 1))]
        prp1 = pages[0] + off
        prp2 = self.rng.randrange(1 << 40) * 4 if n < 2 else 0           # unused: any value
        if n == 2:
            prp2 = pages[1] | (self.offset_bits() if self.rng.random() < 0.06 else 0)
        elif n > 2:
            self.stats["lists"] += 1
            prp2 = self.build_list(pages[1:])
        return prp1, prp2, ln

    def build_list(self, ents: list[int]) -> int:
        # corruptions in turn (one list in ten each): an entry with an offset, the list out of
        # reach, a misaligned list pointer; chain pointers are corrupted at random below
        self.n_lists += 1
        bad = (0.0, 0.05, 0.10, 0.5, 0.5, 0.2, 0.5, 0.5, 0.5, 0.5)[self.n_lists % 10]
        ents = list(ents)
        if bad < 0.04 or bad == 0.2:
            ents[self.rng.randrange(len(ents))] |= self.offset_bits()           # entry with an offset
        r = self.rng.random()
        start = (8 * (512 - self.rng.randrange(1, 20)) if r < 0.3 else      # near the page end: chained
                 8 * self.rng.randrange(512) if r < 0.7 else 0)
        unreachable = 0.04 <= bad < 0.09
        lp = LIMIT + PAGE if unreachable else self.mem.alloc(PAGE)
        head = lp + start
        if 0.09 <= bad < 0.12:
            head |= self.rng.randrange(1, 8)                             # PRP2 list pointer not 8-aligned
        if bad == 0.2 and not unreachable:
            # a bad entry and a poisoned dword in the same list read: Data Transfer Error wins
            self.mem.poison.add(lp + start + 8 * min(len(ents), (PAGE - start) // 8) - 4)
        pos, i = start, 0
        while i < len(ents):
            cap = (PAGE - pos) // 8
            left = len(ents) - i
            if left <= cap:
                for e in ents[i:]:
                    self._put(lp + pos, e)
                    pos += 8
                break
            for e in ents[i:i + cap - 1]:
                self._put(lp + pos, e)
                pos += 8
            i += cap - 1
            self.stats["chained"] += 1
            # chain pointers, in turn: one in four with an offset, one in eight out of reach
            kind = self.stats["chained"] % 8
            nxt = LIMIT + 2 * PAGE if kind == 3 else self.mem.alloc(PAGE)
            self._put(lp + pos, nxt | (self.offset_bits() if kind in (1, 5) else 0))
            lp, pos = nxt, 0
        return head

    def offset_bits(self) -> int:
        """A nonzero page offset for a corrupted PRP: bits 2:0 only, or above them, in turn."""
        self.n_offsets += 1
        return self.rng.randrange(1, 8) if self.n_offsets % 2 else self.rng.randrange(1, 512) << 3

    def _put(self, addr: int, v: int) -> None:
        try:
            self.mem.write(addr, struct.pack("<Q", v))
        except R.DmaError:
            pass

    # ------------------------------------------------------------------ reference
    def ref_setup(self, slot: int, prp1: int, prp2: int, ln: int) -> int:
        if slot >= self.slots:
            return ST_BAD
        self.win[slot] = None
        self.exp_err[slot] = False
        self.ref.slots[slot] = None
        if ln > 65536:
            return ST_BAD
        try:
            pages = self.ref.prp_walk(prp1, prp2, ln)
        except R._Fail as f:
            return SC_TO_ST[f.status]
        lo, hi = (prp1 & 0xFFF) // 4, -(-((prp1 & 0xFFF) + ln) // 4)
        # the RTL's window is dword grained: the reference slot's length is rounded up to dwords
        self.ref.slots[slot] = R._Slot(slot, 0, 0, 0, 0, pages=pages, offset=prp1 & 0xFFF, length=4 * hi - (prp1 & 0xFFF))
        self.win[slot] = (lo, hi)
        return ST_OK

    def ref_dword(self, slot: int, dw: int) -> int | None:
        """Host address of window dword `dw` of `slot`; None outside the open window."""
        w = self.win.get(slot) if slot < self.slots else None
        if w is None or not (w[0] <= dw < w[1]):
            return None
        return self.ref.slots[slot].pages[(4 * dw) >> 12] + ((4 * dw) & 0xFFF)

    # ------------------------------------------------------------------ expectations
    def expect_read(self, addr: int, ln: int) -> list[tuple[int, int]]:
        """The dwords (data, err) of a window read, and its DMA reads (appended to exp_rd_reqs)."""
        slot = addr >> 17
        ndw = ((addr & 3) + ln + 3) // 4
        dw0 = (addr & 0x1FFFF) // 4
        tr = [self.ref_dword(slot, dw0 + j) for j in range(ndw)]
        self.stats["rd"] += 1
        if ln == 0 or any(t is None for t in tr):
            self.stats["rd_oob"] += 1
            if slot < self.slots:
                self.exp_err[slot] = True
            return [(0, 1)] * max(ndw, 1)
        out, j = [], 0
        while j < ndw:                                  # one DMA read per host page touched
            k = min(ndw - j, 1024 - (dw0 + j) % 1024)
            self.exp_rd_reqs.append((tr[j], k, ID_RD))
            e = 0
            for a in tr[j:j + k]:
                e = e or int(self.mem.bad(a))
                out.append((0, 1) if e else (struct.unpack("<I", self.mem.read(a, 4))[0], 0))
            if e:
                self.exp_err[slot] = True
                self.stats["rd_err"] += 1
            j += k
        return out

    def send_burst(self, addr: int, ln: int) -> None:
        """A window write burst of ceil(ln / 4) dwords; its expected DMA writes and shadow updates."""
        slot = addr >> 17
        ndw = max(1, -(-ln // 4))
        data = [self.rng.getrandbits(32) for _ in range(ndw)]
        dw0 = (addr & 0x1FFFF) // 4
        inwin, had_err, chunk = 0, False, None         # chunk: [first dword, dwords, limit]
        for j, d in enumerate(data):
            # later beats carry random addresses: only the first beat's counts
            self.wwr.send_nowait(addr=addr if j == 0 else self.rng.getrandbits(32), data=d, last=int(j == ndw - 1))
            dw = dw0 + j
            if dw >= 1 << 15:
                self.stats["past_2_17"] += 1
            a = self.ref_dword(slot, dw)
            if a is None:
                self.stats["wr_oob"] += 1
                had_err = had_err or slot < self.slots
                chunk = None
                continue
            inwin += 1
            if chunk is None or chunk[1] == chunk[2]:
                chunk = [dw, 0, min(self.wchunk, 1024 - dw % 1024, self.win[slot][1] - dw)]
                self.exp_wr_reqs.append([a, 0])
            chunk[1] += 1
            self.exp_wr_reqs[-1][1] += 1
            if a + 4 > self.mem.limit:                   # unreachable (a poisoned dword takes writes)
                self.stats["wr_err"] += 1
                had_err = True
            else:
                self.shadow[a] = struct.pack("<I", d)
        if had_err and slot < self.slots:
            self.exp_err[slot] = True
        self.bursts.append((inwin, (self.bursts[-1][1] if self.bursts else 0) + inwin, slot, had_err))
        self.stats["wr"] += 1

    # ------------------------------------------------------------------ one round
    async def round(self, setup_slots: list[int], rd_slots: list[int], wr_slots: list[int], n_rd: int, n_wr: int):
        self.list_reads.clear()
        self.exp_rd_reqs.clear()
        self.exp_wr_reqs.clear()
        self.dma.rd_log.clear()
        self.dma.wr_log.clear()
        # setups of idle slots, concurrently with reads and writes of others
        exp_setr = []
        for s in setup_slots:
            prp1, prp2, ln = self.make_prps()
            sw = (self.slots - 1).bit_length()
            if self.rng.random() < 0.03 and self.slots < 1 << sw:
                s = self.rng.randrange(self.slots, 1 << sw)            # no such slot: BAD
            st = self.ref_setup(s, prp1, prp2, ln)
            exp_setr.append((s, st))
            self.set.send_nowait(slot=s, prp1=prp1, prp2=prp2, len=ln)
        exp_rd = []
        for _ in range(n_rd):
            addr, ln = self.pick_access(rd_slots, read=True)
            self.wrd.send_nowait(addr=addr, len=ln)
            exp_rd.append(self.expect_read(addr, ln))
        for _ in range(n_wr):
            addr, ln = self.pick_access(wr_slots, read=False)
            self.send_burst(addr, ln)
        # collect
        for s, st in exp_setr:
            # generous: a list read waits behind the window reads already requested (up to
            # 4 x 1024 dwords under heavy backpressure on m_wrd)
            got = await self.setr.recv(timeout_cycles=200000)
            assert (got["slot"], got["status"]) == (s, st), f"setup of slot {s}: got {got}, expected status {st}"
            if s < self.slots:
                assert not int(self.dut.slot_err.value) >> s & 1, f"slot {s}: error flag set after its setup"
            self.stats["setups"] += 1
            self.stats[["ok", "offset", "xfer", "bad"][st]] += 1
        await self.collect_reads(exp_rd)
        await self.drain_writes()
        # the DMA requests, exactly
        got_list = [r for r in self.dma.rd_log if r[2] == ID_LIST]
        got_rd = [r for r in self.dma.rd_log if r[2] == ID_RD]
        assert got_list == self.list_reads, f"PRP list reads {got_list[:4]} != the walk's {self.list_reads[:4]}"
        assert got_rd == self.exp_rd_reqs, f"window DMA reads {got_rd[:4]} != {self.exp_rd_reqs[:4]}"
        assert self.dma.wr_log == [tuple(w) for w in self.exp_wr_reqs], (
            f"DMA writes {self.dma.wr_log[:4]} != {self.exp_wr_reqs[:4]}")
        self.check_memory(rd_slots + wr_slots + setup_slots)
        # a slot used in the cycles right after its setup answered
        await self.quick(setup_slots)

    async def collect_reads(self, exp_rd: list) -> None:
        for k, exp in enumerate(exp_rd):
            for j, (d, e) in enumerate(exp):
                got = await self.rdo.recv(timeout_cycles=200000)
                want = dict(data=d, last=int(j == len(exp) - 1), err=e)
                assert {f: got[f] for f in want} == want, f"read {k} dword {j}: got {got}, expected {want}"

    async def drain_writes(self) -> None:
        for _ in range(200000):
            if not self.wwr.queue and not self.wwr.valid.value:
                break
            await RisingEdge(self.dut.clk)
        assert not self.wwr.queue, f"window writes stuck: {len(self.wwr.queue)} dwords not taken"
        for _ in range(20000):
            if self.wr_done_seen == len(self.bursts):
                break
            await RisingEdge(self.dut.clk)
        assert self.wr_done_seen == len(self.bursts), f"wr_done {self.wr_done_seen} of {len(self.bursts)} bursts"
        assert int(self.dut.wr_acc.value) == len(self.bursts) & 0xFF
        assert not self.rdo.queue and not self.setr.queue

    def check_memory(self, slots: list[int]) -> None:
        for a, v in self.shadow.items():
            m = R.HostMemory.read(self.mem, a, 4)                      # (poisoned dwords too)
            assert m == v, f"host dword {a:#x}: {m.hex()} != {v.hex()}"
        stray = self.dma.written - set(self.shadow)
        assert not stray, f"writes outside the windows: {sorted(stray)[:4]}"
        errs = int(self.dut.slot_err.value)
        for s in slots:
            if s < self.slots:
                assert bool(errs >> s & 1) == self.exp_err[s], f"slot {s} error flag {errs >> s & 1}, expected {self.exp_err[s]}"

    async def quick(self, slots: list[int]) -> None:
        """Set up one slot again and read and write it as soon as the answer is taken."""
        s = self.rng.choice([t for t in slots if t < self.slots] or [0])
        for _ in range(4):
            prp1, prp2, ln = self.make_prps()
            if ln <= 65536 and (prp1 & 3) == 0 and ln >= 8:
                break
        st = self.ref_setup(s, prp1, prp2, ln)
        self.set.send_nowait(slot=s, prp1=prp1, prp2=prp2, len=ln)
        got = await self.setr.recv(timeout_cycles=200000)
        assert (got["slot"], got["status"]) == (s, st), f"quick setup of slot {s}: got {got}, expected {st}"
        self.list_reads.clear()
        self.exp_rd_reqs.clear()
        self.exp_wr_reqs.clear()
        self.dma.rd_log.clear()
        self.dma.wr_log.clear()
        lo, hi = self.win[s] or ((prp1 & 0xFFF) // 4, (prp1 & 0xFFF) // 4 + 2)
        n = min(hi - lo, 64)
        # the window's start: read it, then overwrite it and read it again
        self.wrd.send_nowait(addr=s << 17 | 4 * lo, len=4 * n)
        await self.collect_reads([self.expect_read(s << 17 | 4 * lo, 4 * n)])
        self.send_burst(s << 17 | 4 * lo, 4 * n)
        await self.drain_writes()
        self.wrd.send_nowait(addr=s << 17 | 4 * lo, len=4 * n)
        await self.collect_reads([self.expect_read(s << 17 | 4 * lo, 4 * n)])
        assert [r for r in self.dma.rd_log if r[2] == ID_RD] == self.exp_rd_reqs
        assert self.dma.wr_log == [tuple(w) for w in self.exp_wr_reqs]
        self.check_memory([s])
        self.stats["quick"] += 1

    def pick_access(self, slots: list[int], read: bool) -> tuple[int, int]:
        """(window address, length) of a read or a write burst: mostly inside an open window."""
        r = self.rng.random()
        lowbits = self.rng.randrange(4) if read and self.rng.random() < 0.3 else 0
        if not read:                        # every 16th write burst across offset 2^17, in turn (the
            self.n_wpick = getattr(self, "n_wpick", 0) + 1  # random 2 % may miss it in a short run)
            if self.n_wpick % 16 == 9:
                r = 0.04
        if r < 0.03:
            slot = self.rng.randrange(self.slots, 1 << (32 - 17))        # no such slot
            return slot << 17 | 4 * self.rng.randrange(1024) | lowbits, 4 * self.rng.randrange(1, 16)
        slot = self.rng.choice(slots)
        bad = [(t, k) for t in slots if self.win.get(t) for k, pg in enumerate(self.ref.slots[t].pages)
               if pg >= LIMIT]
        if bad and r > 0.85:                                            # into an unreachable page
            slot, k = self.rng.choice(bad)
            lo, hi = self.win[slot]
            a = min(max(lo, 1024 * k + self.rng.randrange(1024)), hi - 1)
            n = self.rng.randrange(1, min(hi - a, 600) + 1)
            return slot << 17 | 4 * a, 4 * n
        w = self.win.get(slot)
        if r < 0.05 and not read:                                       # across offset 2^17
            return slot << 17 | 4 * ((1 << 15) - self.rng.randrange(1, 8)), 4 * self.rng.randrange(8, 24)
        if w is None or w[1] == w[0] or r < 0.08:
            lo = 4 * self.rng.randrange(1 << 15)
            ln = (self.rng.randrange(1024, 8192) if read and r < 0.055 else   # long zero replies
                  4 * self.rng.randrange(0 if r < 0.06 else 1, 64))
            return slot << 17 | lo | lowbits, ln
        lo, hi = w
        a = self.rng.randrange(lo, hi)
        if r < 0.12 and read:                                           # long reads: several pages
            a = lo
            n = min(hi - a, self.rng.randrange(1100, 4097))
        elif r < 0.9:
            n = self.rng.randrange(1, min(hi - a, 1100) + 1)
        else:
            # across either end of the window
            a = max(0, lo - self.rng.randrange(0, 40)) if r < 0.95 else max(lo, hi - self.rng.randrange(1, 40))
            n = self.rng.randrange(1, 80)
        if lowbits:                                                     # the dword count is ceil((a[1:0] + len) / 4)
            ln = 4 * n - lowbits - (self.rng.randrange(4) if self.rng.random() < 0.5 else 0)
            ln = max(ln, 1)
        else:
            ln = 4 * n - (self.rng.randrange(4) if self.rng.random() < 0.2 else 0)
        return slot << 17 | 4 * a | lowbits, ln


@cocotb.test()
async def prp_random(dut):
    tb = TB(dut)
    await tb.reset()
    rounds = (24 if LONG else 8) * (1 if tb.slots >= 16 else 3)
    slots = list(range(tb.slots))
    for rnd in range(rounds):
        tb.rng.shuffle(slots)
        k = max(2, len(slots) // 3)
        setup, rd, wr = slots[:k], slots[k:2 * k], slots[2 * k:]
        if rnd == 0:
            setup, rd, wr = slots, [], []             # every slot set up once
        await tb.round(setup, rd or setup, wr or setup, n_rd=0 if rnd == 0 else 16, n_wr=0 if rnd == 0 else 10)
    s = tb.stats
    dut._log.info("prp: %s; DMA reads %d, writes %d", s, len(tb.dma.rd_log), len(tb.dma.wr_log))
    # coverage: every outcome happened
    for key in ("ok", "offset", "xfer", "bad", "chained", "rd_oob", "rd_err", "wr_oob", "wr_err", "quick", "past_2_17"):
        assert s[key] > 0, f"no {key} in this run: {s}"


# ------------------------------------------------------------------------------------- pytest
CONFIGS = {
    "s33_c64": {"SLOTS": 33, "WCHUNK": 64},
    "s5_c8": {"SLOTS": 5, "WCHUNK": 8},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_prp(cfg):
    params = CONFIGS[cfg]
    run(toplevel="ats_nvme_prp",
        sources=block_sources("ats_nvme_prp", "ats_stream_check") + [HERE / "ats_nvme_prp_bind.sv"],
        test_module="test_ats_nvme_prp", test_dir=HERE, build_key=cfg, parameters=params,
        waves=os.environ.get("ATS_WAVES"), extra_env={"ATS_LONG": "1" if LONG else "0"},
        public={})   # the test reads only the top's signals
