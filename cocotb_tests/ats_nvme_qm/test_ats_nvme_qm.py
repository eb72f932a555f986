# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_qm (with ats_nvme_bar and ats_nvme_rq): queues, SQE fetch, CQE posting, MSI, queue
operations, enable / disable / shutdown, driven by the project's NVMe host driver
(sw/host/atomssd/nvme.py, written from the NVMe spec) through cocotbext-pcie's root complex.

The command side is the testbench (`CmdEmu`, standing in for ats_nvme_cmd): it takes each fetched
SQE, checks it against the SQE the driver wrote (bytes, SQ id, CQ id, SQ head after the fetch,
priority), turns queue admin commands into queue operations, parks AERs, and completes every other
command after a random delay, out of order, with a status and DW0 the test encoded in the SQE. The
driver checks every CQE it reaps (phase tags, SQ id / CID matching, SQ head range) and raises on any
protocol error; the test checks each command's status and DW0, the queue-operation statuses against
the rules of docs/host-interface.md §1.6 (`expected_qop`), CSTS through enable / fatal doorbell /
disable / shutdown, and MSIs (the driver waits on interrupts in the MSI phase, so a missing MSI is
a timeout). A CQ placed outside host memory: the test's root port refuses its CQE write (`wr_ur`
with the TLP's last beat, as the full-system simulation's root port does), which must set CSTS.CFS
(docs/host-interface.md §1.8a), stop fetching, acknowledge the completion with `s_cqe_wr` = 0 and
count it as dropped; a reset brings the controller back. Throughout, every acknowledged completion
with `s_cqe_wr` = 1 is a CQE written (cnt_cqe) and every one with 0 is dropped (cnt_cqe_drop).
Random idle and backpressure: on CQ/CC/RQ/RC (the model's pause generators), on m_sqe, and in the
emulator's replies.

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (more commands).
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge
from cocotbext.pcie.core import tlp as nvme_tlp

from atstb.nvme_pcie import PcieNvmeHost
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sw" / "host"))
from atomssd import nvme  # noqa: E402
from atomssd.nvme import NvmeDriver, Sqe, run_async  # noqa: E402

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
QDEPTH = 8                        # the emulator's command slots


def encode(rng: random.Random, sqe: Sqe) -> None:
    """The completion the emulator must give: status in CDW13 bits 10:0 ({SCT, SC}; mostly 0),
    DW0 = CDW10 ^ CDW11 ^ CDW14 (so a corrupted SQE or CQE shows)."""
    st = 0 if rng.random() < 0.8 else rng.choice([(0, 0x02), (0, 0x80), (2, 0x81), (7, 0x05)])
    sqe.cdw13 = 0 if st == 0 else st[0] << 8 | st[1]
    sqe.cdw10, sqe.cdw11, sqe.cdw14 = rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32)
    sqe.cdw12, sqe.cdw15, sqe.nsid = rng.getrandbits(32), rng.getrandbits(32), 1
    sqe.prp1, sqe.prp2 = rng.getrandbits(64) & ~3, rng.getrandbits(64) & ~3


def expected_dw0(sqe: Sqe) -> int:
    return sqe.cdw10 ^ sqe.cdw11 ^ sqe.cdw14


class CmdEmu:
    """The command side of the queue manager (the future ats_nvme_cmd), driven from the SQEs."""

    def __init__(self, tb):
        self.tb, self.dut, self.rng = tb, tb.dut, tb.rng
        dut = self.dut
        self.sqe = StreamSink(dut, "m_sqe", dut.clk, ["data", "sqid", "cqid", "sqhd", "prio"],
                              pause=pause_gen(self.rng, True, 0.3))
        self.cqe = StreamSource(dut, "s_cqe", dut.clk, ["cqid", "sqid", "sqhd", "cid", "status", "dw0"])
        self.qop = StreamSource(dut, "s_qop", dut.clk, ["op", "qid", "qsz", "base", "pc", "ien", "iv", "qprio"])
        self.qrsp = StreamSink(dut, "m_qrsp", dut.clk, ["status"], pause=pause_gen(self.rng, True))
        self.held = 0                 # I/O commands holding a slot
        self.adm_busy = False
        self.pending = 0              # completions not yet acknowledged
        self.aers = 0
        self.flushes = 0
        self.seen = 0
        self.qops: list[tuple[int, int, int]] = []     # (op, qid, status)
        dut.fetch_ok_io.value = 1
        dut.fetch_ok_adm.value = 1
        dut.cmd_idle.value = 1
        dut.s_flush_done.value = 0
        every_edge(dut.clk, self._levels)
        self.ready: list = []
        self.held_back = self.overtook = self.picked_during = 0
        cocotb.start_soon(self._post())
        self.full_stalls = 0
        qm = dut.u_qm

        def cover() -> None:
            # the RTL's own hold (a request for a full CQ): must never happen with cq_room obeyed
            if int(dut.s_cqe_valid.value) and int(qm.p_q.value) == 0 and not int(qm.p_room.value) \
                    and not int(qm.p_drop.value):
                self.full_stalls += 1
        every_edge(dut.clk, cover)

        cocotb.start_soon(self._run())
        cocotb.start_soon(self._flush())

    def _levels(self) -> None:
        """The command side's levels, from the edge the stream ends use (every_edge, after the m_sqe
        sink): an SQE taken at this edge but not yet processed counts as a command held, so the
        levels are exact from the cycle after a handshake, as the RTL's will be."""
        queued = len(self.sqe.queue)
        self.dut.fetch_ok_io.value = int(self.held + queued < QDEPTH)
        self.dut.fetch_ok_adm.value = int(not self.adm_busy and not queued)
        self.dut.cmd_idle.value = int(self.held == 0 and not self.adm_busy and self.pending == 0 and not queued)

    async def _flush(self) -> None:
        while True:
            await RisingEdge(self.dut.clk)
            if int(self.dut.m_flush.value):
                self.flushes += 1
                await ClockCycles(self.dut.clk, self.rng.randint(1, 200))
                self.dut.s_flush_done.value = 1
                await RisingEdge(self.dut.clk)
                self.dut.s_flush_done.value = 0

    async def _complete(self, f: dict, status: int, dw0: int, delay: int, io: bool) -> None:
        await ClockCycles(self.dut.clk, max(delay, 1))
        self.pending += 1
        self.ready.append((f, status, dw0, io))

    async def _post(self) -> None:
        """Picks finished commands, the oldest whose CQ has room (cq_room): a full CQ holds back
        only its own completions. Pipelined like a real producer: the next one is picked (with
        cq_room of that moment) while the previous CQE is still being written, so cq_room must
        count the entry being written. A completion is done when the RTL acknowledged it (once its
        CQE was issued)."""
        dut = self.dut
        inflight: list = []
        while True:
            await RisingEdge(dut.clk)
            # acknowledged ones: the source's queue and valid tell how many are left
            left = len(self.cqe.queue) + int(int(dut.s_cqe_valid.value) and not int(dut.s_cqe_ready.value))
            while len(inflight) > left:
                _, _, _, io = inflight.pop(0)
                self.pending -= 1
                if io:
                    self.held -= 1
                else:
                    self.adm_busy = False
            if not self.ready or len(inflight) >= 2:
                continue
            if inflight and (not int(dut.s_cqe_valid.value) or int(dut.s_cqe_ready.value)):
                continue                       # the one picked before is not presented yet: cq_room can't count it
            room = int(dut.cq_room.value)
            pick = next((r for r in self.ready if room >> r[0]["cqid"] & 1 and
                         not any(x[0]["cqid"] == r[0]["cqid"] for x in inflight[1:])), None)
            if pick is None:
                self.held_back += 1
                continue
            if pick is not self.ready[0]:
                self.overtook += 1             # a completion of another CQ went first
            if inflight and inflight[0][0]["cqid"] == pick[0]["cqid"]:
                self.picked_during += 1        # picked while a CQE of its CQ is being written
            self.ready.remove(pick)
            inflight.append(pick)
            f, status, dw0, io = pick
            self.cqe.send_nowait(cqid=f["cqid"], sqid=f["sqid"], sqhd=f["sqhd"], cid=f["cid"], status=status, dw0=dw0)

    async def _run(self) -> None:
        dut, tb = self.dut, self.tb
        while True:
            b = await self.sqe.recv(timeout_cycles=10**9)
            self.seen += 1
            raw = b["data"].to_bytes(64, "little")
            opc, cid = raw[0], int.from_bytes(raw[2:4], "little")
            sqid = b["sqid"]
            # the SQE the driver wrote, and where
            sq = tb.drv.sqs.get(sqid)
            assert sq is not None, f"SQE from SQ {sqid}, which the driver does not have"
            cmd = sq.outstanding.get(cid)
            assert cmd is not None, f"SQE CID {cid} of SQ {sqid} is not outstanding"
            assert raw == cmd.sqe.to_bytes(), f"SQE of SQ {sqid} CID {cid} differs from the one written"
            assert b["sqhd"] == (cmd.pos + 1) % sq.size, f"SQ head {b['sqhd']} after entry {cmd.pos}"
            assert b["cqid"] == sq.cqid
            assert b["prio"] == (3 if sqid == 0 else 3 - tb.qprio[sqid])
            f = {"cqid": b["cqid"], "sqid": sqid, "sqhd": b["sqhd"], "cid": cid}
            if sqid == 0:
                assert not self.adm_busy, "an admin SQE was fetched while an admin command runs"
                if opc == nvme.ADM_AER:
                    self.aers += 1
                    continue
                self.adm_busy = True
                self._levels()
                if opc in (nvme.ADM_CREATE_CQ, nvme.ADM_CREATE_SQ, nvme.ADM_DELETE_CQ, nvme.ADM_DELETE_SQ):
                    s = cmd.sqe
                    op = {nvme.ADM_CREATE_CQ: 0, nvme.ADM_CREATE_SQ: 1, nvme.ADM_DELETE_CQ: 2, nvme.ADM_DELETE_SQ: 3}[opc]
                    self.qop.send_nowait(op=op, qid=s.cdw10 & 0xFFFF, qsz=s.cdw10 >> 16, base=s.prp1, pc=s.cdw11 & 1,
                                         ien=s.cdw11 >> 1 & 1, iv=s.cdw11 >> 16, qprio=s.cdw11 >> 1 & 3)
                    r = await self.qrsp.recv()
                    self.qops.append((op, s.cdw10 & 0xFFFF, r["status"]))
                    if op == 0 and r["status"] == 0:
                        tb.cq_db[s.cdw10 & 0xFFFF] = 0          # a new CQ: head 0
                    st = r["status"] | (1 << 14 if r["status"] else 0)          # DNR on errors
                    cocotb.start_soon(self._complete(f, st, 0, self.rng.randint(1, 30), False))
                else:
                    cocotb.start_soon(self._complete(f, 0, expected_dw0(cmd.sqe), self.rng.randint(1, 100), False))
            else:
                assert self.held < QDEPTH, "an I/O SQE was fetched with every slot in use"
                self.held += 1
                self._levels()
                st = cmd.sqe.cdw13 & 0x7FF
                st |= (1 << 14) if st else 0
                cocotb.start_soon(self._complete(f, st, expected_dw0(cmd.sqe),
                                                 self.rng.choice([1, 5, 50, 300, 2000]), True))


class TB:
    def __init__(self, dut, cfg):
        self.dut, self.cfg = dut, cfg
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7727 + 3)
        self.host = PcieNvmeHost(dut, self.rng)
        self.rc, self.dev, self.tr = self.host.rc, self.host.dev, self.host.tr
        self.tr.on_mmio_write = self._on_mmio_write
        self.drv = self.host.drv
        self.msis = self.host.msis
        self.qprio: dict[int, int] = {}
        self.emu = CmdEmu(self)
        self.events: list = []
        self.cq_db: dict[int, int] = {}          # the last CQ head doorbell the host wrote
        self.cq_writes = 0
        orig_write = self.rc.handle_mem_write_tlp

        async def on_write(tlp):
            # a CQE write: its entry must be free (the CQ is full at tail + 1 == head)
            for q, cq in self.drv.cqs.items():
                if cq.base <= tlp.address < cq.base + 16 * cq.size:
                    e = (tlp.address - cq.base) // 16
                    assert tlp.length == 4 and tlp.address % 16 == 0
                    assert (e + 1) % cq.size != self.cq_db.get(q, 0), \
                        f"CQE written to entry {e} of the full CQ {q} (host head {self.cq_db.get(q, 0)})"
                    self.cq_writes += 1
                    c = nvme.Cqe.from_bytes(bytes(tlp.get_data()))
                    self.events.append(("W", q, e, c.sqid, c.cid, c.phase))
            await orig_write(tlp)
        self.rc.register_rx_tlp_handler(nvme_tlp.TlpType.MEM_WRITE, on_write)
        self.rc.register_rx_tlp_handler(nvme_tlp.TlpType.MEM_WRITE_64, on_write)
        self.refused = 0                        # write TLPs refused with wr_ur
        self.acks = [0, 0]                      # completions acknowledged with s_cqe_wr = 0 / 1
        dut.wr_ur.value = 0
        cocotb.start_soon(self._refuse_outside())

        def count_acks() -> None:
            if int(dut.s_cqe_valid.value) and int(dut.s_cqe_ready.value):
                self.acks[int(dut.s_cqe_wr.value)] += 1
        every_edge(dut.clk, count_acks)

    async def _refuse_outside(self) -> None:
        """The root port's refusal of writes outside host memory: `wr_ur` with the last beat of a
        MemWr TLP whose address (from the TLP's first beat) is outside the host's memory region."""
        dut, lo, hi = self.dut, self.host.mem_base, self.host.mem_base + self.host.mem_size
        in_tlp, bad = False, False
        while True:
            await FallingEdge(dut.clk)
            v, last = int(dut.m_axis_rq_tvalid.value), int(dut.m_axis_rq_tlast.value)
            cur = bad
            if v and not in_tlp:
                data = int(dut.m_axis_rq_tdata.value)
                addr = data & ((1 << 64) - 4)
                cur = (data >> 75 & 0xF) == 1 and not lo <= addr < hi
            dut.wr_ur.value = int(bool(v and last and cur))
            await RisingEdge(dut.clk)
            if v and int(dut.m_axis_rq_tready.value):
                if not in_tlp:
                    bad = cur
                in_tlp = not last
                if last and cur:
                    self.refused += 1

    def _on_mmio_write(self, off: int, v: int) -> None:
        if off == nvme.REG_CC and v & 1:
            self.cq_db.clear()                          # enable: the admin CQ starts at head 0
        if off >= nvme.DB_BASE and off & 4:
            self.cq_db[(off - nvme.DB_BASE) // 8] = v
            self.events.append(("DB", (off - nvme.DB_BASE) // 8, v))

    async def start(self):
        await self.host.start()
        self.bar = self.host.bar

    async def do(self, gen):
        return await run_async(gen, self.tr)

    async def csts(self) -> int:
        return await self.tr.mmio_read32(nvme.REG_CSTS)


async def io_burst(tb: TB, qids: list[int], n: int) -> None:
    """n commands spread over the I/O queues, submitted in batches, then waited for; each one's
    status and DW0 checked."""
    cmds = []
    for i in range(n):
        q = tb.rng.choice(qids)
        sqe = Sqe(tb.rng.choice([nvme.IO_READ, nvme.IO_WRITE, nvme.IO_FLUSH, nvme.IO_TX_WRITE]))
        encode(tb.rng, sqe)
        sq = tb.drv.sqs[q]
        used = (sq.tail - sq.head) % sq.size
        # unrung entries must never fill the SQ (the driver would wait for room the device can't see)
        ring = tb.rng.random() < 0.5 or i == n - 1 or used + 2 >= sq.size - 1
        cmds.append(await tb.do(tb.drv.submit(q, sqe, ring=ring)))
        if not ring and tb.rng.random() < 0.2:
            await tb.do(tb.drv.ring(q))
    for q in qids:
        await tb.do(tb.drv.ring(q))
    await tb.do(tb.drv.wait(cmds))
    for c in cmds:
        st = c.sqe.cdw13 & 0x7FF
        assert c.cqe.status & 0x7FF == st, f"CID {c.cid}: status {c.cqe.status:#x}, expected {st:#x}"
        assert c.cqe.dnr == int(st != 0)
        assert c.cqe.dw0 == expected_dw0(c.sqe), f"CID {c.cid}: DW0 {c.cqe.dw0:#x}"


async def run_qm(dut, cfg) -> None:
    tb = TB(dut, cfg)
    _TB[:] = [tb]
    await tb.start()
    nq, qsize = cfg["NQ"], cfg["QSIZE"]
    n = 400 if LONG else 120
    drv = tb.drv
    # --- enable, admin commands that the emulator answers itself
    await tb.do(drv.enable(admin_qsize=min(32, qsize)))
    assert await tb.csts() == 1
    assert int(dut.ioq_any.value) == 0 and int(dut.st_dis.value) == 0
    for _ in range(5):
        sqe = Sqe(nvme.ADM_GET_FEATURES)
        encode(tb.rng, sqe)
        sqe.cdw13 = 0
        c = await tb.do(drv.admin(sqe))
        assert c.cqe.dw0 == expected_dw0(sqe)
    # --- queue operations and their errors (§1.6 order: QID, exists, size, PC, IV / CQID, deletion)
    small = 2
    exp = []

    async def qop(gen, status):
        c = await tb.do(gen)
        got = c.cqe.sct << 8 | c.cqe.sc
        assert got == status, f"{c.what}: status {got:#x}, expected {status:#x}"
        exp.append(status)
    await qop(drv.create_io_cq(0, small, check=False), 0x101)                 # QID 0
    await qop(drv.create_io_cq(nq + 1, small, check=False), 0x101)           # QID beyond NQ
    await qop(drv.create_io_cq(1, 1, check=False), 0x102)                    # size 1
    await qop(drv.create_io_cq(1, qsize + 1, check=False), 0x102)            # size > QSIZE
    await qop(drv.create_io_cq(1, small, pc=False, check=False), 0x002)      # PC = 0
    await qop(drv.create_io_cq(1, small, iv=32, check=False), 0x108)         # IV 32
    await qop(drv.create_io_sq(1, small, 1, check=False), 0x100)             # no CQ 1 yet
    await qop(drv.create_io_sq(1, small, 0, check=False), 0x100)             # the admin CQ
    await qop(drv.delete_io_cq(1, check=False), 0x101)                       # missing
    await qop(drv.delete_io_sq(1, check=False), 0x101)
    # the I/O queues: sizes from 2 (the smallest) up, several SQs on one CQ when NQ allows
    qids = list(range(1, nq + 1))
    for q in qids:
        size = small if q == 1 else min(qsize, tb.rng.choice([4, 16, 64]))
        cq_of = q if (q == 1 or q % 2 == 0 or nq < 3) else q - 1
        if cq_of == q:
            await qop(drv.create_io_cq(q, size, iv=tb.rng.randrange(32)), 0)
            await qop(drv.create_io_cq(q, size, check=False), 0x101)          # exists
        tb.qprio[q] = tb.rng.randrange(4)
        await qop(drv.create_io_sq(q, size, cq_of, qprio=tb.qprio[q]), 0)
        await qop(drv.create_io_sq(q, size, cq_of, check=False), 0x101)       # exists
    assert int(dut.ioq_any.value) == 1, "ioq_any low with I/O queues"
    shared = [q for q in qids if drv.sqs[q].cqid != q]
    if shared:
        await qop(drv.delete_io_cq(drv.sqs[shared[0]].cqid, check=False), 0x10C)   # an SQ attached
    assert [s for _, _, s in tb.emu.qops] == exp, "queue operation statuses"
    # --- I/O: polled, then with MSIs
    await io_burst(tb, qids, n)
    drv.use_irq = True
    tb.msis.clear()
    await io_burst(tb, qids, n // 2)
    assert tb.msis, "no MSI in the MSI phase"
    assert set(tb.msis) <= {drv.cqs[q].iv for q in drv.cqs}, f"MSIs {set(tb.msis)} of no CQ"
    drv.use_irq = False
    # --- INTMS: a masked vector raises no MSI; INTMC sends the one held back
    v = drv.cqs[qids[0]].iv
    await tb.tr.mmio_write32(nvme.REG_INTMS, 1 << v)
    await ClockCycles(dut.clk, 200)
    tb.msis.clear()
    await io_burst(tb, [qids[0]], 6)
    await ClockCycles(dut.clk, 500)
    assert v not in tb.msis, f"MSI of the masked vector {v}"
    await tb.tr.mmio_write32(nvme.REG_INTMC, 1 << v)
    for _ in range(100):
        if v in tb.msis:
            break
        await ClockCycles(dut.clk, 20)
    assert tb.msis.count(v) == 1, f"MSIs of vector {v} after INTMC: {tb.msis.count(v)}"
    # --- delete and re-create a queue pair
    q = qids[-1]
    cq_of = drv.sqs[q].cqid
    await qop(drv.delete_io_sq(q), 0)
    if cq_of == q:
        await qop(drv.delete_io_cq(q), 0)
        await qop(drv.create_io_cq(q, 2), 0)                  # a 2-entry CQ under an 8-entry SQ
    await qop(drv.create_io_sq(q, min(8, qsize), cq_of, qprio=tb.qprio[q]), 0)
    # completions wait for room: the host reaps only after a while
    cmds = []
    for _ in range(min(8, qsize) - 1):
        sqe = Sqe(nvme.IO_WRITE)
        encode(tb.rng, sqe)
        cmds.append(await tb.do(drv.submit(q, sqe)))
    await ClockCycles(dut.clk, 5000)
    # the other CQs go on while this one is full and not reaped
    others = [o for o in qids if drv.sqs[o].cqid != cq_of]
    if others:
        ocmds = []
        for i in range(12):
            sqe = Sqe(nvme.IO_READ)
            encode(tb.rng, sqe)
            ocmds.append(await tb.do(drv.submit(others[i % len(others)], sqe)))
        await tb.do(drv.wait(ocmds, reap_others=False))
        assert not any(c.done for c in cmds[2:]), "the full CQ was reaped"
    await tb.do(drv.wait(cmds))
    assert all(c.cqe.dw0 == expected_dw0(c.sqe) for c in cmds)
    await io_burst(tb, qids, n // 4)
    # --- an AER is parked: it takes no slot and never blocks the admin queue
    await tb.do(drv.submit_aer())
    await tb.do(drv.get_features(nvme.FID_NUM_QUEUES))
    assert tb.emu.aers == 1
    # --- invalid doorbells: CSTS.CFS, nothing fetched, then a reset brings it back
    for kind in range(4):
        before = int(dut.cnt_fetch.value)
        if kind == 0:
            await tb.tr.mmio_write32(nvme.DB_BASE + 8 * qids[0], drv.sqs[qids[0]].size)       # tail = size
        elif kind == 1:
            await tb.tr.mmio_write32(nvme.DB_BASE + 4, (drv.cqs[0].head + 5) % drv.cqs[0].size)  # past the tail
        elif kind == 2:
            await tb.tr.mmio_write32(nvme.DB_BASE, 1 << 16)                                    # above 16 bits
        else:
            await tb.tr.mmio_write32(nvme.DB_BASE + 8 * (nq + 1), 0)                           # no such queue
        for _ in range(4):                  # CFS follows the doorbell within a few cycles
            if await tb.csts() & 2:
                break
        assert await tb.csts() & 2, f"doorbell error {kind}: no CFS"
        sqe = Sqe(nvme.ADM_GET_FEATURES)
        await tb.do(drv.submit(0, sqe))
        await ClockCycles(dut.clk, 2000)
        assert int(dut.cnt_fetch.value) == before, "fetched after a fatal doorbell"
        await tb.do(drv.disable())
        assert await tb.csts() == 0
        await tb.do(drv.enable(admin_qsize=min(32, qsize)))
        for q in qids:                        # every queue deleted by the reset: pairs q, q now
            await tb.do(drv.create_io_cq(q, min(16, qsize), iv=q))
            await tb.do(drv.create_io_sq(q, min(16, qsize), q, qprio=tb.qprio[q]))
    await io_burst(tb, qids, n // 4)
    # --- a CQ outside host memory: its CQE write is refused (wr_ur) -> CSTS.CFS, nothing fetched,
    # the completion acknowledged as dropped; a reset brings the controller back
    q, size = qids[0], min(16, qsize)
    out = 1 << 40                             # no region of the root complex there
    assert not tb.rc.mem_address_space.find_regions(out, 16 * size), "the 'outside' CQ is in a region"
    await tb.do(drv.delete_io_sq(q))
    await tb.do(drv.delete_io_cq(q))
    sqe = Sqe(nvme.ADM_CREATE_CQ, prp1=out, cdw10=(size - 1) << 16 | q, cdw11=q << 16 | 1 << 1 | 1)
    assert (await tb.do(drv.admin(sqe))).ok      # not in drv.cqs: the host never reads this CQ
    await tb.do(drv.create_io_sq(q, size, q, qprio=tb.qprio[q]))
    await ClockCycles(dut.clk, 200)
    cqe0, drop0, ref0, acks0 = int(dut.cnt_cqe.value), int(dut.cnt_cqe_drop.value), tb.refused, list(tb.acks)
    assert not await tb.csts() & 2
    sqe = Sqe(nvme.IO_WRITE)
    encode(tb.rng, sqe)
    await tb.do(drv.submit(q, sqe))
    for _ in range(2000):
        if await tb.csts() & 2:
            break
        await ClockCycles(dut.clk, 10)
    assert await tb.csts() & 2, "a refused CQE write did not set CSTS.CFS"
    assert tb.refused == ref0 + 1, f"{tb.refused - ref0} write TLPs refused, expected the one CQE"
    assert int(dut.cnt_cqe.value) == cqe0 and int(dut.cnt_cqe_drop.value) == drop0 + 1, \
        "the refused CQE must count as dropped, not written"
    assert tb.acks == [acks0[0] + 1, acks0[1]], f"acknowledgements (s_cqe_wr 0 / 1) {acks0} -> {tb.acks}"
    assert tb.emu.held == 0, "the refused completion's slot was not freed"
    before = int(dut.cnt_fetch.value)
    await tb.do(drv.submit(0, Sqe(nvme.ADM_GET_FEATURES)))
    await ClockCycles(dut.clk, 2000)
    assert int(dut.cnt_fetch.value) == before, "fetched after a refused CQE write (CFS)"
    await tb.do(drv.disable())
    assert await tb.csts() == 0
    await tb.do(drv.enable(admin_qsize=min(32, qsize)))
    assert await tb.csts() == 1
    for q in qids:
        await tb.do(drv.create_io_cq(q, min(16, qsize), iv=q))
        await tb.do(drv.create_io_sq(q, min(16, qsize), q, qprio=tb.qprio[q]))
    await io_burst(tb, qids, n // 4)
    assert tb.refused == ref0 + 1, "a write TLP refused after the reset"
    # --- disable with commands in flight: RDY clears only once the command side is idle
    cmds = []
    for i in range(2 * QDEPTH):
        sqe = Sqe(nvme.IO_READ)
        encode(tb.rng, sqe)
        cmds.append(await tb.do(drv.submit(qids[i % len(qids)], sqe)))
    await ClockCycles(dut.clk, 300)
    drops = int(dut.cnt_cqe_drop.value)
    await tb.tr.mmio_write32(nvme.REG_CC, 6 << 16 | 4 << 20)
    rdy_seen_busy = dis_seen = False
    for _ in range(2000):
        dis_seen |= bool(int(dut.st_dis.value))
        c = await tb.csts()
        if not c & 1:
            break
        rdy_seen_busy |= tb.emu.held > 0
    assert not (await tb.csts()) & 1 and tb.emu.held == 0 and not tb.emu.pending
    assert int(dut.cnt_cqe_drop.value) > drops, "no CQE was dropped by the disable"
    assert dis_seen and not int(dut.st_dis.value), "st_dis not high during the disable, or not low after"
    assert int(dut.ioq_any.value) == 0, "ioq_any high after the disable deleted every queue"
    dut._log.info("disable waited for the command side: %s", rdy_seen_busy)
    # --- shutdown: one FLUSH, then SHST = complete
    drv2 = NvmeDriver(timeout_cycles=400_000, poll_cycles=40)
    tb.drv = drv2
    tb.tr.next = 0
    await tb.do(drv2.enable(admin_qsize=min(32, qsize)))
    flushes = tb.emu.flushes
    await tb.do(drv2.shutdown())
    assert (await tb.csts()) >> 2 & 3 == 2 and tb.emu.flushes == flushes + 1
    await tb.do(drv2.disable())
    assert await tb.csts() == 0
    assert int(dut.cnt_msi_fail.value) == 0 and int(dut.cnt_ur.value) == 0
    assert tb.acks == [int(dut.cnt_cqe_drop.value), int(dut.cnt_cqe.value)], \
        f"acknowledgements with s_cqe_wr 0 / 1: {tb.acks}, counters drop / written: " \
        f"{int(dut.cnt_cqe_drop.value)} / {int(dut.cnt_cqe.value)}"
    assert tb.refused == 1, f"{tb.refused} write TLPs refused (only the CQE outside host memory)"
    assert tb.emu.full_stalls == 0, "a completion was presented for a CQ that cq_room called full"
    assert tb.emu.held_back > 0, "no completion ever waited for room in a full CQ"
    assert tb.emu.picked_during > 0, "no completion was picked while its CQ's previous CQE was being written"
    if nq > 1:
        assert tb.emu.overtook > 0, "no completion went ahead of one held back by a full CQ"
    dut._log.info("%d SQEs fetched, %d CQEs written, %d dropped, %d MSIs, %d queue operations",
                  int(dut.cnt_fetch.value), int(dut.cnt_cqe.value), int(dut.cnt_cqe_drop.value),
                  int(dut.cnt_msi.value), len(tb.emu.qops))


_TB: list = []


@cocotb.test()
async def test_qm(dut):
    try:
        await run_qm(dut, {"NQ": int(os.environ["ATS_NQ"]), "QSIZE": int(os.environ["ATS_QSIZE"])})
    except Exception:
        q = dut.u_qm
        for name in ("sq_en", "cq_en", "f_q", "p_q", "c_q", "fatal_q", "fetch_ok_io", "fetch_ok_adm", "cmd_idle",
                     "s_cqe_valid", "cnt_fetch", "cnt_cqe"):
            dut._log.error("%s = %s", name, getattr(q, name).value)
        for name in ("sq_head", "sq_tail", "cq_head", "cq_tail", "sq_szm1", "cq_szm1", "cq_phase"):
            try:
                dut._log.error("%s = %s", name, [int(getattr(q, name)[i].value) for i in range(2)])
            except Exception as e:  # noqa: BLE001
                dut._log.error("%s: %s", name, e)
        tb = _TB[0]
        for qid, cq in tb.drv.cqs.items():
            dut._log.error("CQ %d base %#x size %d head %d phase %d", qid, cq.base, cq.size, cq.head, cq.phase)
            for k in range(cq.size):
                dut._log.error("   %d: %s", k, nvme.Cqe.from_bytes(tb.tr.mem_read(cq.base + 16 * k, 16)))
        for ev in tb.events[-80:]:
            dut._log.error("ev %s", ev)
        for qid, sq in tb.drv.sqs.items():
            dut._log.error("SQ %d base %#x size %d head %d tail %d outstanding %s", qid, sq.base, sq.size, sq.head,
                           sq.tail, {c: (x.pos) for c, x in sq.outstanding.items()})
        raise


# ------------------------------------------------------------------------------------- pytest
CONFIGS = {
    "q4": {"NQ": 4, "QSIZE": 256, "TAGS": 4},
    "q1": {"NQ": 1, "QSIZE": 8, "TAGS": 2},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_qm(cfg):
    p = CONFIGS[cfg]
    run(toplevel="ats_nvme_qm_tb",
        sources=block_sources("ats_nvme_rq", "ats_nvme_bar", "ats_nvme_qm", "ats_stream_check") + [HERE / "ats_nvme_qm_tb.sv"]
        # stream rules on the m_ ports of the queue manager, the RQ engine and the BAR (bound by module name)
        + [HERE.parent / d / f"{d}_bind.sv" for d in ("ats_nvme_qm", "ats_nvme_rq", "ats_nvme_bar")],
        test_module="test_ats_nvme_qm", test_dir=HERE, build_key=cfg, parameters=p,
        waves=os.environ.get("ATS_WAVES"),
        public={"ats_nvme_qm": ["*"]},    # visible to cocotb: the TB top's signals, the queue manager's (read)
        extra_env={"ATS_LONG": "1" if LONG else "0", "ATS_NQ": str(p["NQ"]), "ATS_QSIZE": str(p["QSIZE"]),
                   "PYTHONWARNINGS": "ignore::DeprecationWarning",
                   # q1: every per-edge read of the stream ends (the 512-bit SQE included) and of the
                   # PCIe model's AXI loops done both ways, port_reader and `.value`, and compared
                   # (atstb/streams.py ATS_FAST_READ): the fast reads' check in make test
                   **({"ATS_FAST_READ": "check"} if cfg == "q1" else {})})
