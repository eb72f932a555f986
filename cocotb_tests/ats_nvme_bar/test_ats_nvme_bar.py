# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_bar (+ ats_nvme_regs): the NVMe controller registers of BAR0 through cocotbext-pcie.

cocotbext-pcie's root complex enumerates the UltraScale+ hard-IP model (class code NVMe, a 64-bit
16 KiB BAR0), and every register access is a real memory TLP on the CQ/CC streams of the DUT, with
random idle cycles on CQ and backpressure on CC and on the doorbell stream. The reference is
`RegRef` below, written from docs/host-interface.md §1.2 (not from the RTL): register values,
the CC check at EN 0 -> 1, which accesses read as 0 or are ignored, and the doorbell events. The
queue manager is the testbench (`QmEmu`): it raises CSTS.RDY some cycles after the enable request,
reports shutdown progress and drives the fatal-status input at random.

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (more operations).
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice

from atstb.runner import block_sources, run
from atstb.streams import StreamSink, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")

VID, DID, CLASS = 0x1D1D, 0xA705, 0x010802
BAR_BYTES, DB_BASE = 0x4000, 0x1000
CAP, VS, INTMS, INTMC, CC, CSTS, AQA, ASQ, ACQ = 0x00, 0x08, 0x0C, 0x10, 0x14, 0x1C, 0x24, 0x28, 0x30


class RegRef:
    """docs/host-interface.md §1.2: the registers as the host sees them, given the queue manager's
    state (rdy, fatal, shst: the testbench drives those)."""

    def __init__(self, nq: int, qsize: int):
        self.nq, self.qsize = nq, qsize
        self.cc = self.aqa = self.asq = self.acq = self.mask = 0
        self.cfs_cc = False
        self.en_ok = False
        self.doorbells: list[tuple[int, int, int, int]] = []     # (cq, qid, value & 0xFFFF, big)

    @property
    def cap(self) -> int:
        return (self.qsize - 1) | 1 << 16 | 20 << 24 | 1 << 37

    def read32(self, off: int, rdy: int, fatal: int, shst: int) -> int:
        regs = {CAP: self.cap & 0xFFFFFFFF, CAP + 4: self.cap >> 32, VS: 0x00010400, INTMS: self.mask,
                INTMC: self.mask, CC: self.cc, CSTS: rdy | int(fatal or self.cfs_cc) << 1 | shst << 2,
                AQA: self.aqa, ASQ: self.asq & 0xFFFFF000, ASQ + 4: self.asq >> 32,
                ACQ: self.acq & 0xFFFFF000, ACQ + 4: self.acq >> 32}
        return regs.get(off, 0)

    def write32(self, off: int, v: int) -> None:
        if off == INTMS:
            self.mask |= v
        elif off == INTMC:
            self.mask &= ~v
        elif off == CC:
            old, self.cc = self.cc, v & 0x00FFFFF1
            if self.cc & 1 and not old & 1:
                ok = (self.cc >> 4 & 7) == 0 and (self.cc >> 7 & 0xF) == 0 and (self.cc >> 11 & 7) == 0 \
                    and (self.cc >> 16 & 0xF) == 6 and (self.cc >> 20 & 0xF) == 4 \
                    and 1 <= (self.aqa & 0xFFF) <= self.qsize - 1 and 1 <= (self.aqa >> 16 & 0xFFF) <= self.qsize - 1
                self.en_ok, self.cfs_cc = ok, not ok
            elif not self.cc & 1:
                if old & 1:
                    self.mask = 0                     # controller reset: INTMS cleared
                self.en_ok = self.cfs_cc = False
        elif off == AQA:
            self.aqa = v & 0x0FFF0FFF
        elif off in (ASQ, ASQ + 4, ACQ, ACQ + 4):
            name = "asq" if off < ACQ else "acq"
            old = getattr(self, name)
            setattr(self, name, (old & 0xFFFFFFFF) | v << 32 if off & 4 else (old >> 32 << 32) | v)
        elif DB_BASE <= off < DB_BASE + 8 * (self.nq + 1):
            y, cq = (off - DB_BASE) // 8, (off >> 2) & 1
            self.doorbells.append((cq, y, v & 0xFFFF, int(v >> 16 != 0)))
        elif DB_BASE <= off < BAR_BYTES:              # a queue beyond NQ: an invalid doorbell, qid 0
            self.doorbells.append(((off >> 2) & 1, 0, v & 0xFFFF, 1))

    # a memory access as the root complex issues it (byte offset, bytes): what the host reads back
    def access_read(self, off: int, n: int, st) -> bytes | None:
        """None: the access gets an Unsupported Request completion (more than 2 dwords)."""
        first, last = off & ~3, (off + max(n, 1) - 1) & ~3
        ndw = (last - first) // 4 + 1
        if ndw > 2:
            return None
        if n == 4 and off % 4 == 0:
            return self.read32(off, *st).to_bytes(4, "little")
        if n == 8 and off % 8 == 0:
            return (self.read32(off, *st) | self.read32(off + 4, *st) << 32).to_bytes(8, "little")
        return bytes(n)

    def access_write(self, off: int, data: bytes) -> None:
        if len(data) == 4 and off % 4 == 0:
            self.write32(off, int.from_bytes(data, "little"))
        elif len(data) == 8 and off % 8 == 0:
            self.write32(off, int.from_bytes(data[:4], "little"))
            self.write32(off + 4, int.from_bytes(data[4:], "little"))


class QmEmu:
    """The queue manager's side of the registers: RDY follows the enable request after a random
    delay, SHST goes 1 then 2 after a shutdown request, the fatal input is driven by the test."""

    def __init__(self, dut, rng: random.Random):
        self.dut, self.rng = dut, rng
        self.rdy, self.fatal, self.shst = 0, 0, 0
        self.busy = False
        dut.st_rdy.value = 0
        dut.st_cfs.value = 0
        dut.st_shst.value = 0
        cocotb.start_soon(self._run())

    def state(self) -> tuple[int, int, int]:
        return self.rdy, self.fatal, self.shst

    def set_fatal(self, v: int) -> None:
        self.fatal = v
        self.dut.st_cfs.value = v

    async def _run(self) -> None:
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            en, shn = int(dut.en_req.value), int(dut.cc_shn.value)
            want_rdy = en
            want_shst = (2 if self.shst else 1) if (shn and self.rdy and en) else (self.shst if shn else 0)
            if want_rdy != self.rdy or want_shst != self.shst:
                self.busy = True
                for _ in range(self.rng.randint(0, 40)):
                    await RisingEdge(dut.clk)
                if want_rdy != self.rdy:
                    self.rdy = want_rdy
                    dut.st_rdy.value = want_rdy
                    if not want_rdy:
                        self.shst = 0
                        dut.st_shst.value = 0
                else:
                    self.shst = want_shst
                    dut.st_shst.value = want_shst
            else:
                self.busy = False

    async def settle(self) -> None:
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        while self.busy:
            await RisingEdge(self.dut.clk)
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        if self.busy:
            await self.settle()


class TB:
    def __init__(self, dut, nq: int, qsize: int):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 14)
        self.rc = RootComplex()
        self.dev = UltraScalePlusPcieDevice(
            pcie_generation=3, pcie_link_width=4, user_clk_frequency=125e6, alignment="dword",
            pf_count=1, max_payload_size=512, enable_client_tag=True, pf0_msi_enable=True, pf0_msi_count=32,
            user_clk=dut.clk, user_reset=dut.rst,
            cq_bus=AxiStreamBus.from_prefix(dut, "s_axis_cq"),
            cc_bus=AxiStreamBus.from_prefix(dut, "m_axis_cc"))
        f = self.dev.functions[0]
        f.vendor_id, f.device_id, f.class_code = VID, DID, CLASS
        f.configure_bar(0, BAR_BYTES, ext=True, prefetch=False)
        self.rc.make_port().connect(self.dev)
        self.dev.cq_source.set_pause_generator(pause_gen(self.rng, True, 0.3))
        self.dev.cc_sink.set_pause_generator(pause_gen(self.rng, "heavy", max_stall=20))
        self.db = StreamSink(dut, "m_db", dut.clk, ["cq", "qid", "value", "big"],
                             pause=pause_gen(self.rng, "heavy", max_stall=30))
        self.qm = QmEmu(dut, self.rng)
        self.ref = RegRef(nq, qsize)
        self.nq, self.qsize = nq, qsize
        self.bar = None
        self.urs = 0

    async def start(self) -> None:
        await FallingEdge(self.dut.rst)
        await Timer(100, "ns")
        await self.rc.enumerate()
        d = self.rc.find_device(self.dev.functions[0].pcie_id)
        # the function the host found: an NVMe controller with a 64-bit 16 KiB memory BAR
        assert await d.config_read_word(0x00) == VID and await d.config_read_word(0x02) == DID
        assert int.from_bytes(await d.config_read(0x09, 3), "little") == CLASS
        bar0 = await d.config_read_dword(0x10)
        assert bar0 & 0x7 == 0x4, f"BAR0 {bar0:#x}: not a 64-bit memory BAR"
        assert d.bar_size[0] == BAR_BYTES
        await d.enable_device()
        self.bar = d.bar_window[0]

    # ---- accesses, each checked against the reference
    async def read(self, off: int, n: int) -> None:
        await self.qm.settle()
        exp = self.ref.access_read(off, n, self.qm.state())
        try:
            got = await self.bar.read(off, n, timeout=20000)
        except Exception as e:               # noqa: BLE001 (the root complex raises a plain Exception)
            assert exp is None, f"read {off:#x}+{n}: {e}, expected {exp!r}"
            self.urs += 1
            return
        assert exp is not None, f"read {off:#x}+{n}: got {got.hex()}, expected an Unsupported Request"
        assert bytes(got) == exp, f"read {off:#x}+{n}: got {bytes(got).hex()}, expected {exp.hex()}"

    async def write(self, off: int, data: bytes) -> None:
        await self.bar.write(off, data)
        self.ref.access_write(off, data)

    async def check_doorbells(self) -> None:
        await self.read(VS, 4)             # a read flushes the posted writes before it
        for _ in range(200):
            await RisingEdge(self.dut.clk)
        got = [(b["cq"], b["qid"], b["value"], b["big"]) for b in self.db.queue]
        self.db.queue.clear()
        exp, self.ref.doorbells = self.ref.doorbells, []
        assert got == exp, f"doorbell events {got} != {exp}"

    async def check_enable(self) -> None:
        await self.read(VS, 4)
        await self.qm.settle()
        assert int(self.dut.en_req.value) == int(self.ref.en_ok), "en_req differs from the CC check"
        await self.read(CSTS, 4)
        await self.read(CC, 4)

    # ---- random operations
    def rand_cc(self) -> int:
        r = self.rng
        cc = int(r.random() < 0.6) | 6 << 16 | 4 << 20         # EN 0 or 1
        if r.random() < 0.5:          # one invalid field
            field = r.choice([(4, 7), (7, 0xF), (11, 7), (16, 0xF), (20, 0xF)])
            cc = (cc & ~(field[1] << field[0])) | (r.randint(1, field[1]) << field[0])
            if field[0] in (16, 20) and (cc >> field[0] & 0xF) == (6 if field[0] == 16 else 4):
                cc ^= 1 << field[0]
        if r.random() < 0.2:
            cc |= r.randint(1, 3) << 14        # shutdown notification
        if r.random() < 0.2:
            cc |= r.getrandbits(32) & 0xFF00000E   # reserved bits: read as 0
        return cc

    def rand_aqa(self) -> int:
        r = self.rng
        pick = lambda: r.choice([0, 1, r.randint(1, self.qsize - 1), self.qsize - 1, self.qsize,  # noqa: E731
                                 r.randint(self.qsize, 0xFFF)])
        return pick() | pick() << 16 | (r.getrandbits(32) & 0xF000F000 if r.random() < 0.2 else 0)

    async def random_op(self) -> None:
        r = self.rng
        regs = [CAP, CAP + 4, VS, INTMS, INTMC, CC, 0x18, CSTS, 0x20, AQA, ASQ, ASQ + 4, ACQ, ACQ + 4, 0x38]
        dbs = [DB_BASE + 4 * k for k in range(2 * (self.nq + 1) + 2)]
        k = r.random()
        if k < 0.25:
            await self.read(r.choice(regs + dbs + [r.randrange(0, BAR_BYTES, 4)]), 4)
        elif k < 0.35:
            await self.read(r.choice([CAP, INTMS & ~7, CC & ~7, AQA & ~7, ASQ, ACQ, DB_BASE, r.randrange(0, BAR_BYTES, 8)]), 8)
        elif k < 0.45:
            off = r.randrange(0, 0x40)
            await self.read(off, r.choice([0, 1, 2, 3, 5, 6, 7, 8, 12, 16, 32]) if off % 4 else r.choice([0, 1, 2, 3, 8, 12, 16, 64]))
        elif k < 0.60:
            off = r.choice([INTMS, INTMC, AQA, ASQ, ASQ + 4, ACQ, ACQ + 4, CAP, VS, CSTS, 0x18, 0x3C])
            v = r.getrandbits(32)
            if off == INTMC and r.random() < 0.5:
                v = r.getrandbits(32) & r.getrandbits(32)
            await self.write(off, v.to_bytes(4, "little"))
        elif k < 0.68:
            await self.write(r.choice([ASQ, ACQ, CAP, AQA & ~7, DB_BASE + 8 * r.randrange(self.nq + 1)]),
                             r.getrandbits(64).to_bytes(8, "little"))
        elif k < 0.80:
            y, cq = r.randrange(self.nq + 2), r.randrange(2)        # one beyond the last queue: no event
            v = r.choice([r.randrange(self.qsize), r.randrange(1 << 16), r.getrandbits(32)])
            await self.write(DB_BASE + 8 * y + 4 * cq, v.to_bytes(4, "little"))
        elif k < 0.88:                       # partial, unaligned and long writes: ignored or dropped
            off = r.choice([CC, AQA, ASQ, INTMS, DB_BASE, DB_BASE + 4]) + r.choice([0, 1, 2, 3, 4])
            n = r.choice([1, 2, 3, 5, 8, 12, 16, 24]) if off % 4 else r.choice([1, 2, 3, 8, 12, 16, 24])
            await self.write(off, r.randbytes(n))
        elif k < 0.94:
            if r.random() < 0.5:
                await self.write(AQA, self.rand_aqa().to_bytes(4, "little"))
            await self.write(CC, self.rand_cc().to_bytes(4, "little"))
            await self.check_enable()
        else:
            self.qm.set_fatal(int(r.random() < 0.3))
            await self.read(CSTS, 4)


async def run_regs(dut, nops: int) -> None:
    tb = TB(dut, int(os.environ["ATS_NQ"]), int(os.environ["ATS_QSIZE"]))
    await tb.start()
    # the reset values, then the enable sequence a host driver runs
    for off in (CAP, VS, INTMS, CC, CSTS, AQA, ASQ, ACQ):
        await tb.read(off, 8 if off in (CAP, ASQ, ACQ) else 4)
    await tb.write(AQA, (31 | 31 << 16).to_bytes(4, "little"))
    await tb.write(ASQ, (0x1_2345_6000).to_bytes(8, "little"))
    await tb.write(ACQ, (0x0_89AB_C000 | 0x5A).to_bytes(8, "little"))
    await tb.write(CC, (1 | 6 << 16 | 4 << 20).to_bytes(4, "little"))
    await tb.check_enable()
    assert int(dut.asq_base.value) == 0x1_2345_6000 and int(dut.acq_base.value) == 0x0_89AB_C000
    assert int(dut.aqa_asqs.value) == 31 and int(dut.aqa_acqs.value) == 31
    await tb.read(CSTS, 4)
    # enable / disable cycles: the CC and AQA checks at EN 0 -> 1
    for _ in range(nops // 3):
        await tb.write(AQA, tb.rand_aqa().to_bytes(4, "little"))
        await tb.write(CC, tb.rand_cc().to_bytes(4, "little"))
        await tb.check_enable()
    for _ in range(nops):
        await tb.random_op()
        if tb.rng.random() < 0.1:
            await tb.check_doorbells()
    await tb.check_doorbells()
    # the outputs to the queue manager equal the registers
    assert int(dut.int_mask.value) == tb.ref.mask
    assert int(dut.cc_shn.value) == tb.ref.cc >> 14 & 3
    assert int(dut.cnt_ur.value) == tb.urs, f"UR counter {int(dut.cnt_ur.value)} != {tb.urs}"
    assert tb.urs > 0 and tb.db.stable_checks > 0
    dut._log.info("%d operations, %d UR completions, %d stalled doorbell edges checked",
                  nops, tb.urs, tb.db.stable_checks)


@cocotb.test()
async def test_regs(dut):
    await run_regs(dut, 3000 if LONG else 600)


# ------------------------------------------------------------------------------------- pytest
CONFIGS = {
    "q4": {"NQ": 4, "QSIZE": 256},
    "q1": {"NQ": 1, "QSIZE": 2},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_bar(cfg):
    run(toplevel="ats_nvme_bar",
        sources=block_sources("ats_nvme_bar", "ats_stream_check") + [HERE / "ats_nvme_bar_bind.sv"],
        test_module="test_ats_nvme_bar", test_dir=HERE, build_key=cfg, parameters=CONFIGS[cfg],
        waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_LONG": "1" if LONG else "0", "ATS_NQ": str(CONFIGS[cfg]["NQ"]),
                   "ATS_QSIZE": str(CONFIGS[cfg]["QSIZE"]), "PYTHONWARNINGS": "ignore::DeprecationWarning"},
        public={})   # the test reads only the top's signals
