"""ats_nand_emu: the synthesizable NAND die emulator against the die model (sim/nand) as its reference.

One ONFI host (atstb.onfi, random idle between cycles) drives the pins of both the emulator and the
die model (ats_nand_emu_tb.sv); every byte either puts out is compared at the host's sampling
instant, R/B# rising edges are compared (within a few clock periods: the emulator samples its pins
with `clk`), and contents are checked against atstb.nand_model.NandModel (plain Python, from the
design brief). The emulator's DRAM is dram_model.DramModel (LiteDRAM native port, random latency
and backpressure). Torn content differs by design (the model draws random bits, the emulator a
fixed mix of row and column): where the model says "unknown" only "not erased" is checked.

The cocotb tests of one simulation share both devices (their flash persists from test to test, as
in the die test), so a module-level NandModel follows them. See rtl/nand_emu/testplan.md.
"""
import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import Edge, First, RisingEdge, Timer, with_timeout
from cocotb.utils import get_sim_time

from atstb.nand_model import PRESETS, NandModel, onfi_crc16
from atstb.onfi import MODE0, OnfiHost
from atstb.runner import ROOT, block_sources, run
from atstb.streams import StreamSink, StreamSource, random_pause

from dram_model import DramModel

STATUS_FAIL, STATUS_RDY, STATUS_WP = 0x01, 0x40, 0x80
TIMING_KEYS = list(MODE0)
# an interface set at the emulator's limit at 10 ns and one input flop: every pin timing 2 periods
EMU2 = dict(T_WP_PS=20000, T_WH_PS=20000, T_RP_PS=20000, T_REH_PS=20000, T_CLS_PS=20000, T_CLH_PS=20000,
            T_CS_PS=20000, T_DS_PS=20000, T_DH_PS=20000, T_WB_PS=100000, T_RR_PS=20000, T_ADL_PS=70000,
            T_WHR_PS=60000, T_RHW_PS=100000)
OP_READ, OP_PROG, OP_ERASE, OP_RESET, OP_RDID, OP_PARAM = range(6)       # ats_nand_chan requests
DRAM_PROFILES = {"fast": dict(lat=(1, 4), cmd_stall=0.1), "slow": dict(lat=(2, 20), cmd_stall=0.5)}
S: dict = {}            # state shared by the cocotb tests of one simulation (the devices persist)


def now_ns() -> float:
    return get_sim_time("ps") / 1000.0


class RbMonitor:
    """Times of every R/B# edge of one device."""

    def __init__(self, sig):
        self.sig = sig
        self.edges: list[tuple[float, int]] = []
        self.task = cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await Edge(self.sig)
            self.edges.append((now_ns(), int(self.sig.value)))

    def last(self, value: int) -> float | None:
        for t, v in reversed(self.edges):
            if v == value:
                return t
        return None


class DualHost(OnfiHost):
    """The ONFI host of atstb.onfi, sampling both devices' DQ at once: `data_out` returns the die
    model's bytes and leaves the emulator's in `emu`."""

    def __init__(self, tb, timing, rng):
        super().__init__(tb.dut, timing, rng, rb=tb.dut.die_rb_n)
        self.tb = tb
        self.emu = b""

    async def data_out(self, n: int) -> bytes:
        t = self.t
        d, e = bytearray(), bytearray()
        dut = self.dut
        await self.select()
        for _ in range(n):
            earliest = self.last_re_rise + t["T_REH_PS"]
            if not self.last_was_read:
                earliest = max(earliest, self.last_we_rise + t["T_WHR_PS"])
            earliest = max(earliest, self.last_we_rise + max(t["T_CLH_PS"], t["T_DH_PS"]))
            await self._wait_until(earliest)
            await self.idle()
            dut.cle.value = 0
            dut.ale.value = 0
            dut.re_n.value = 0
            await Timer(t["T_RP_PS"], unit="ps")
            assert int(dut.die_dq_oe.value) == 1, "die model does not drive DQ during RE# low"
            assert int(dut.emu_dq_oe.value) == 1, f"emulator does not drive DQ during RE# low (byte {len(d)})"
            d.append(int(dut.die_dq_o.value))
            e.append(int(dut.emu_dq_o.value))
            dut.re_n.value = 1
            self.last_re_rise = self.now()
            self.last_was_read = True
        self.emu = bytes(e)
        return bytes(d)

    async def wait_ready(self, timeout_ns: int | None = None) -> None:
        """tWB after the confirm, both R/B# high (their rising edges compared), then tRR."""
        confirm = self.confirm_time
        if confirm is not None:
            await self._wait_until(confirm + self.t["T_WB_PS"])
        dut = self.dut
        while not (int(dut.die_rb_n.value) and int(dut.emu_rb_n.value)):
            await First(RisingEdge(dut.die_rb_n), RisingEdge(dut.emu_rb_n))
        if confirm is not None:
            self.tb.check_busy(confirm / 1000.0)
        self.confirm_time = None
        self.last_was_read = False
        await Timer(self.t["T_RR_PS"], unit="ps")
        await self.idle()


class TB:
    def __init__(self, dut):
        self.dut = dut
        seed = int(os.environ.get("ATS_SEED", "1"))
        S.setdefault("tests", 0)
        S["tests"] += 1
        self.rng = random.Random(seed * 7919 + 31 * S["tests"])
        g = lambda n: int(getattr(dut, n).value)  # noqa: E731
        self.planes, self.blocks, self.ppb = g("PLANES"), g("BLOCKS"), g("PAGES_PER_BLOCK")
        self.page_bytes, self.spare_bytes = g("PAGE_BYTES"), g("SPARE_BYTES")
        self.row_bytes = self.page_bytes + self.spare_bytes
        self.timing = {k: g(k) for k in TIMING_KEYS}
        div = g("ARRAY_TIME_DIV")
        self.t_r, self.t_prog, self.t_bers = (g("T_R_NS") // div, g("T_PROG_NS") // div, g("T_BERS_NS") // div)
        self.clk_ns = g("CLK_PS") / 1000.0
        self.sync = g("SYNC_STAGES")
        self.dw = g("DRAM_DW")
        self.base = g("DRAM_BASE")
        self.row_words = (self.row_bytes + self.dw // 8 - 1) // (self.dw // 8)
        cocotb.start_soon(Clock(dut.clk, g("CLK_PS"), unit="ps").start())
        prof = DRAM_PROFILES[os.environ.get("ATS_EMU_DRAM", "fast")]
        self.dram = DramModel(dut, dut.clk, self.dw, self.base, self.base + self.blocks * self.ppb * self.row_words,
                              self.rng, **prof, prefix="dram")
        if "mem" in S:
            self.dram.mem = S["mem"]
        S["mem"] = self.dram.mem
        self.host = DualHost(self, self.timing, self.rng)
        self.rb_die, self.rb_emu = RbMonitor(dut.die_rb_n), RbMonitor(dut.emu_rb_n)
        if "model" not in S:
            S["model"] = NandModel(self.blocks, self.ppb, self.page_bytes, self.spare_bytes)
            S["bad"] = {int(b) for b in os.environ.get("ATS_EMU_BAD", "").split(",") if b}
        self.model: NandModel = S["model"]
        self.bad: set[int] = S["bad"]
        self.busy_checks = 0
        self.polls = 0                   # status reads while busy
        self.dram_bound = False          # dram_slow: the DRAM, not the timer, ends busy periods
        self.late: list[float] = []
        # R/B# tolerance: the emulator sees a pin SYNC_STAGES + 1 clocks late and the die releases
        # R/B# on clk's falling edge
        self.rb_tol = (self.sync + 3) * self.clk_ns

    # ---- bring-up (first test of the simulation only: the devices persist afterwards)
    async def start(self):
        dut = self.dut
        if not S.get("started"):
            dut.sel_chan.value = 0
            dut.s_cmd_valid.value = 0
            dut.s_wdata_valid.value = 0
            dut.m_rdata_ready.value = 0
            dut.m_cpl_ready.value = 0
            dut.power_ok.value = 0
            dut.s_bad_valid.value = 0
            dut.s_bad_block.value = 0
            dut.s_bad_set.value = 0
            dut.rst.value = 1
            for _ in range(5):
                await RisingEdge(dut.clk)
            dut.rst.value = 0
            # power on and the first RESET at once, while the emulator still clears its page states
            # (pins not decoded then), as the board's core sends its power-on RESETs right after the
            # system reset: the emulator runs that RESET when the clearing ends (R/B# low until
            # then: the two rises are not compared). No second RESET follows, so an emulator that
            # dropped this one answers READ ID and everything after it with nothing
            dut.power_ok.value = 1
            await Timer(self.rng.randint(20, 200), unit="ns")
            assert not int(dut.emu_init_done.value), "the emulator cleared its states before the early RESET"
            await self.host.command(0xFF)
            assert not int(dut.emu_init_done.value), "the early RESET came after the clearing"
            await self.host.wait_ready()
            await self.host.deselect()
            assert int(dut.emu_init_done.value)
            for b in sorted(self.bad):                    # factory marks, as the die's image has them
                dut.s_bad_valid.value = 1
                dut.s_bad_block.value = b
                dut.s_bad_set.value = 1
                await RisingEdge(dut.clk)
                while not int(dut.s_bad_ready.value):
                    await RisingEdge(dut.clk)
                dut.s_bad_valid.value = 0
            S["started"] = True
            return
        await Timer(1, unit="us")           # this test's host does not know the last test's cycles (tRHW)
        await self.power_on()

    async def power_on(self):
        if not int(self.dut.power_ok.value):
            await Timer(self.rng.randint(300, 1000), unit="ns")
            self.dut.power_ok.value = 1
            await Timer(self.rng.randint(50, 500), unit="ns")
            assert int(self.dut.die_rb_n.value) == 1
            assert int(self.dut.emu_rb_n.value) == 1, "emulator R/B# low after power-on"
        await self.host.reset()

    def pins_idle(self):
        """The controller's pins idle (CE#, WE#, RE# high, CLE, ALE low) and the host model's timing
        marks forgotten: before a power cut or a system reset."""
        dut = self.dut
        dut.ce_n.value = 1
        dut.we_n.value = 1
        dut.re_n.value = 1
        dut.cle.value = 0
        dut.ale.value = 0
        self.host.ce_low_since = None
        self.host.confirm_time = None

    async def power_cut(self):
        dut = self.dut
        dut.power_ok.value = 0
        self.pins_idle()
        await Timer(self.rng.randint(100, 1000), unit="ns")
        assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0, "R/B# high while power is off"

    async def sys_reset(self, in_transfer: bool = False):
        """The system reset (`rst` of the emulator and the controller; the die model sees a power
        cut, the TB wires it so), pins idle. The board resets LiteDRAM's port with the dies; this
        port model is not reset, so the reset waits for it to be idle, or (`in_transfer`: `rst` in
        the middle of a READ's page load) the reads in flight are dropped two cycles into `rst`, as
        the port's reset drops them, and `rst` lasts until the port model is idle."""
        dut = self.dut
        while not in_transfer and (int(dut.m_dram_cmd_valid.value) or int(dut.m_dram_wdata_valid.value)
                                   or not self.dram._idle()):
            await RisingEdge(dut.clk)
        self.pins_idle()
        dut.rst.value = 1
        for i in range(self.rng.randint(10, 60)):
            await RisingEdge(dut.clk)
            if in_transfer and i == 1:
                self.dram.reads.clear()         # the port's reset: words not yet returned are lost
        while in_transfer and (int(dut.m_dram_cmd_valid.value) or not self.dram._idle()):
            await RisingEdge(dut.clk)
        assert int(dut.emu_rb_n.value) == 0, "emulator R/B# high in the system reset"
        assert int(dut.emu_init_done.value), "the system reset cleared the emulator's page states"
        dut.rst.value = 0
        await Timer(self.rng.randint(300, 1000), unit="ns")

    def check_busy(self, confirm_ns: float):
        """The last busy period of both devices: R/B# rises within rb_tol of the model's."""
        d_rise, e_rise = self.rb_die.last(1), self.rb_emu.last(1)
        # R/B# low by tWB after the confirm (it may have been low already: RESET while busy)
        t_wb = confirm_ns + self.timing["T_WB_PS"] / 1000.0
        before = [v for t, v in self.rb_emu.edges if t <= t_wb]
        assert (before and before[-1] == 0) or (not before and self.rb_emu.edges and self.rb_emu.edges[0][1] == 1), \
            f"emulator R/B# not low by tWB after the confirm at {confirm_ns:.1f} ns"
        if self.dram_bound:
            # a DRAM slower than the array time: R/B# rises when the transfer is done, never before
            # the model's
            assert e_rise >= d_rise - self.rb_tol, f"R/B# rose {d_rise - e_rise:.1f} ns before the model's"
            self.late.append(e_rise - d_rise)
        else:
            assert abs(e_rise - d_rise) <= self.rb_tol, \
                f"R/B# rose at {e_rise:.1f} ns (emulator) vs {d_rise:.1f} ns (model), busy {d_rise - confirm_ns:.0f} ns"
        self.busy_checks += 1

    def rand_data(self, n):
        return bytes(self.rng.getrandbits(8) for _ in range(n))

    def short_len(self):
        return self.rng.choice([1, 2, 7, 16, 33, 64]) if self.row_bytes > 600 else self.rng.randint(1, self.row_bytes)

    # ---- operations on both devices, checked against each other and the model
    def expected(self, row: int) -> bytes | None:
        b, p = divmod(row, self.ppb)
        if b in self.bad:
            return (b"\x00" if p == 0 else b"\xff") * self.row_bytes
        return self.model.expected(row)

    def compare(self, what: str, row: int, col: int, got: bytes):
        emu = self.host.emu
        exp = self.expected(row)
        if exp is not None:
            assert got == exp[col:col + len(got)], f"{what}: die model row {row} col {col} differs from NandModel"
            assert emu == got, f"{what}: emulator row {row} col {col} n {len(got)}: " \
                               f"{emu[:16].hex()} vs model {got[:16].hex()}"
        elif len(got) >= 16:
            assert emu != b"\xff" * len(emu), f"{what}: emulator's torn row {row} reads erased"

    async def check_row(self, row, col=0, n=None, what="read"):
        n = self.row_bytes - col if n is None else n
        got = await self.host.read_page(row, col, n)
        self.compare(what, row, col, got)
        return got

    async def status(self) -> int:
        await self.host.command(0x70)
        d = (await self.host.data_out(1))[0]
        await self.host.deselect()
        self.check_status(d, self.host.emu[0])
        return d

    def check_status(self, d: int, e: int):
        if d != e:
            # RDY/ARDY may differ only around the R/B# edges (the emulator is a few clocks later)
            near = [t for t, _ in self.rb_die.edges[-2:] + self.rb_emu.edges[-2:]]
            assert (d ^ e) & ~0x60 == 0 and near and now_ns() - max(near) <= 2 * self.rb_tol + 60, \
                f"status {d:#04x} (model) vs {e:#04x} (emulator)"

    async def poll_busy(self):
        """Sometimes READ STATUS while the array is busy (70h is taken then): both say busy, or
        differ only around the R/B# edges; the confirm's busy period is still compared after."""
        if self.rng.random() < 0.5:
            return
        confirm = self.host.confirm_time
        await self.host._wait_until(confirm + self.timing["T_WB_PS"])
        await Timer(self.rng.randint(0, 3000), unit="ns")
        st = await self.status()
        busy_now = not int(self.dut.die_rb_n.value) and not int(self.dut.emu_rb_n.value)
        if busy_now:
            assert not st & STATUS_RDY, f"status {st:#x} says ready while both R/B# are low"
        self.polls += 1
        self.host.confirm_time = confirm

    async def program(self, row, data, col=0):
        await self.host.program_start(row, data, col)
        await self.poll_busy()
        await self.host.wait_ready()
        st = await self.status()
        if row // self.ppb in self.bad:
            assert st & STATUS_FAIL, f"program of bad block {row // self.ppb} did not fail"
        else:
            assert not st & STATUS_FAIL, f"program row {row}: FAIL"
            self.model.program(row, data, col, ok=True)
        return st

    async def erase(self, block):
        await self.host.erase_start(block, self.ppb)
        await self.poll_busy()
        await self.host.wait_ready()
        st = await self.status()
        if block in self.bad:
            assert st & STATUS_FAIL, f"erase of bad block {block} did not fail"
        else:
            assert not st & STATUS_FAIL, f"erase block {block}: FAIL"
            self.model.erase(block, ok=True)
        return st

    def good_blocks(self):
        return [b for b in range(self.blocks) if b not in self.bad]

    async def end(self):
        assert int(self.dut.viol_count.value) == 0, "the die model saw a protocol violation"
        assert not self.dram.errors, f"DRAM port contract: {self.dram.errors[:3]}"
        self.dut._log.info("DRAM: %d reads, %d writes, %d command stalls; %d busy periods compared, %d status polls while busy",
                           self.dram.n_reads, self.dram.n_writes, self.dram.n_stalls, self.busy_checks, self.polls)


@cocotb.test()
async def identify(dut):
    """RESET, READ STATUS, READ ID 00h/20h, READ PARAMETER PAGE (3 copies, CRC), WP#."""
    tb = TB(dut)
    await tb.start()
    st = await tb.status()
    assert st == STATUS_WP | STATUS_RDY | 0x20, f"status after RESET {st:#x}"
    for addr, n in ((0x00, 5), (0x20, 6)):
        d = await tb.host.read_id(addr, n)
        assert tb.host.emu == d, f"READ ID {addr:02x}h: {tb.host.emu.hex()} vs model {d.hex()}"
    assert d[:4] == b"ONFI"
    pp = await tb.host.read_param_page(768)
    pe = tb.host.emu
    assert pe[0:256] == pe[256:512] == pe[512:768], "emulator: parameter page copies differ"
    assert int.from_bytes(pe[254:256], "little") == onfi_crc16(pe[:254]), "emulator: parameter page CRC"
    # the same page but the model string ("ATS-NAND-SIM" / "-EMU") and so the CRC
    skip = set(range(53, 56)) | {254, 255}
    diff = [i for i in range(256) if i not in skip and pe[i] != pp[i]]
    assert not diff, f"parameter page bytes {diff[:8]} differ: {[(pe[i], pp[i]) for i in diff[:8]]}"
    assert pe[44:56] == b"ATS-NAND-EMU"
    # write protect: status bit 7 low, PROGRAM and ERASE fail without busy
    dut.wp_n.value = 0
    await Timer(100, unit="ns")
    row = tb.good_blocks()[-1] * tb.ppb + tb.ppb - 1
    await tb.host.program_start(row, b"\x00" * 8)
    tb.host.confirm_time = None
    await Timer(tb.timing["T_WB_PS"] * 2, unit="ps")
    assert int(dut.emu_rb_n.value) == 1 and int(dut.die_rb_n.value) == 1, "write-protected program went busy"
    st = await tb.status()
    assert st & STATUS_FAIL and not st & STATUS_WP, f"program with WP# low: status {st:#x}"
    dut.wp_n.value = 1
    await Timer(100, unit="ns")
    await tb.check_row(row, 0, 16, "after write-protected program")
    await tb.end()


@cocotb.test()
async def traffic(dut):
    """Random erase / program (whole and partial) / read (partial, CHANGE READ COLUMN, 70h + 00h resume)."""
    tb = TB(dut)
    rng = tb.rng
    await tb.start()
    n_ops = int(os.environ.get("ATS_EMU_OPS", "50" if tb.row_bytes < 1000 else "16"))
    if os.environ.get("ATS_LONG"):
        n_ops *= 5
    blocks = rng.sample(tb.good_blocks(), min(5, len(tb.good_blocks())))
    blocks[0] = max(tb.good_blocks())            # high address bits
    if tb.bad:
        blocks.append(min(tb.bad))               # a bad block in the mix: its operations fail
    for b in blocks:
        await tb.erase(b)
    for _ in range(n_ops):
        op = rng.random()
        b = rng.choice(blocks)
        if op < 0.4:
            p = tb.model.next_page[b]
            if p >= tb.ppb:
                await tb.erase(b)
                continue
            p = min(tb.ppb - 1, p + (rng.random() < 0.2))          # sometimes skip a page
            if rng.random() < 0.2 or tb.row_bytes < 1000:
                col, n = 0, tb.row_bytes
            else:
                col = rng.randrange(tb.row_bytes - 64)
                n = rng.randint(1, 64)
            if rng.random() < 0.1:
                n = 0                                               # no data: the page is all FFh
            await tb.program(b * tb.ppb + p, tb.rand_data(n), col)
        elif op < 0.5:
            await tb.erase(b)
        else:
            row = b * tb.ppb + rng.randrange(tb.ppb)
            col = rng.randrange(tb.row_bytes)
            n = min(tb.short_len(), tb.row_bytes - col)
            got = await tb.host.read_page(row, col, n, keep=True)
            tb.compare("read", row, col, got)
            for _ in range(rng.randint(0, 2)):
                if rng.random() < 0.5:
                    col = rng.randrange(tb.row_bytes)
                    n = min(tb.short_len(), tb.row_bytes - col)
                    got = await tb.host.change_read_column(col, n)
                    tb.compare("CHANGE READ COLUMN", row, col, got)
                else:
                    col = col + len(got)
                    n = min(tb.short_len(), tb.row_bytes - col)
                    if n <= 0:
                        continue
                    # 70h in the middle of the data output, then 00h without address resumes it
                    await tb.host.command(0x70)
                    st = (await tb.host.data_out(1))[0]
                    tb.check_status(st, tb.host.emu[0])
                    assert st & STATUS_RDY              # FAIL: the last program / erase (a bad block's)
                    await tb.host.command(0x00)
                    got = await tb.host.data_out(n)
                    tb.compare("resume after 70h", row, col, got)
            await tb.host.deselect()
    for b in blocks:
        for p in range(tb.ppb):
            row = b * tb.ppb + p
            if tb.row_bytes < 1000 or row in tb.model.pages or p == 0:
                await tb.check_row(row, what="sweep")
    await tb.end()


@cocotb.test()
async def bad_blocks(dut):
    """Factory marks: page 0 of a bad block reads 00h (first spare byte != FFh), erase/program FAIL, the mark stays."""
    tb = TB(dut)
    await tb.start()
    assert tb.bad, "no bad blocks given"
    for b in sorted(tb.bad):
        got = await tb.check_row(b * tb.ppb, tb.page_bytes, 1, "bad mark")
        assert got != b"\xff"
        await tb.erase(b)
        await tb.program(b * tb.ppb + 1, tb.rand_data(16))
        await tb.check_row(b * tb.ppb, 0, None if tb.row_bytes < 1000 else 64, "mark after erase")
        await tb.check_row(b * tb.ppb + 1, 0, 16, "page 1 of a bad block")
    good = tb.good_blocks()[0]
    got = await tb.check_row(good * tb.ppb, tb.page_bytes, 1, "good block's mark byte")
    await tb.end()


@cocotb.test()
async def power_fail(dut):
    """Power cut in PROGRAM (torn page) and ERASE (indeterminate block) at random times, in READ (dropped),
    in data input (nothing stored), while off (nothing stored), RESET while busy (same as a cut);
    completed pages stay."""
    tb = TB(dut)
    rng = tb.rng
    await tb.start()
    good = tb.good_blocks()
    rounds = int(os.environ.get("ATS_EMU_CUTS", "3"))
    if os.environ.get("ATS_LONG"):
        rounds *= 5
    data_len = tb.row_bytes if tb.row_bytes < 1000 else 48
    for k in range(rounds):
        b, b2 = rng.sample(good, 2)
        await tb.erase(b)
        await tb.erase(b2)
        for p in range(2):
            await tb.program(b * tb.ppb + p, tb.rand_data(data_len))
            await tb.program(b2 * tb.ppb + p, tb.rand_data(data_len))
        # 1. cut (or RESET) during tPROG: the page is torn, the pages before it stay
        row = b * tb.ppb + 2
        await tb.host.program_start(row, tb.rand_data(data_len))
        await Timer(rng.randint(tb.t_prog // 20, tb.t_prog * 9 // 10), unit="ns")
        assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0
        if k % 2:
            await tb.host.reset()                    # RESET while busy aborts like a cut
        else:
            await tb.power_cut()
            await tb.power_on()
        tb.model.tear_page(row)
        await tb.check_row(row, 0, 32, "torn page")
        for p in range(2):
            await tb.check_row(b * tb.ppb + p, 0, data_len, "page before the torn one")
        # 2. cut during ERASE: the block is indeterminate, the other block is intact
        await tb.host.erase_start(b2, tb.ppb)
        await Timer(rng.randint(tb.t_bers // 20, tb.t_bers * 9 // 10), unit="ns")
        assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0
        await tb.power_cut()
        await tb.power_on()
        tb.model.tear_block(b2)
        for p in range(tb.ppb):
            if p < 3 or rng.random() < 0.2:
                await tb.check_row(b2 * tb.ppb + p, 0, 32, "page of the interrupted erase")
        for p in range(2):
            await tb.check_row(b * tb.ppb + p, 0, data_len, "other block after the erase cut")
        # 2b. cut during tR: the read is dropped, the page is intact
        await tb.host.read_page_start(b * tb.ppb, 0)
        await Timer(rng.randint(tb.t_r // 10, tb.t_r * 9 // 10), unit="ns")
        assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0
        await tb.power_cut()
        await tb.power_on()
        await tb.check_row(b * tb.ppb, 0, data_len, "page whose READ was cut")
        # 3. cut during data input (before 10h): nothing is programmed
        row = b * tb.ppb + 3
        await tb.host.command(0x80)
        await tb.host.address(0, 0, *tb.host.row_bytes(row))
        await tb.host.data_in(tb.rand_data(rng.randint(1, 16)))
        await tb.power_cut()
        # 4. while off: a whole PROGRAM on the pins is ignored
        tb.host.ce_low_since = None
        await tb.host.program_start(row, tb.rand_data(16))
        tb.host.confirm_time = None
        await tb.host.deselect()
        await Timer(tb.t_prog + 1000, unit="ns")
        await tb.power_on()
        await tb.check_row(row, 0, 32, "page programmed while off / cut in data input")
        assert tb.model.is_erased(row)
        # the torn page and block are usable after an erase
        await tb.erase(b2)
        await tb.program(b2 * tb.ppb, tb.rand_data(data_len))
        await tb.check_row(b2 * tb.ppb, 0, data_len, "reprogrammed after the cut")
        await tb.check_row(b2 * tb.ppb + 1, 0, 32, "erased after the cut")
    await tb.end()


@cocotb.test()
async def sys_reset(dut):
    """The board's power-fail button, then a system reset (a firmware restart): a cut in tPROG
    leaves the page torn, and `rst` afterwards keeps the completed pages, the torn page and the bad
    marks (the page states are cleared only at power-on); `rst` in tPROG with power on tears the
    page as a cut does (the model sees a cut); `rst` while a READ loads its page from the DRAM (the
    emulator's A_ENG, during tR) drops the read as a cut in tR does, the page intact; `rst` while
    idle loses nothing. Fails on an emulator whose `rst` clears the page states (they read FFh then)."""
    tb = TB(dut)
    rng = tb.rng
    await tb.start()
    good = tb.good_blocks()
    data_len = tb.row_bytes if tb.row_bytes < 1000 else 48
    b, b2 = rng.sample(good, 2)
    done: list[int] = []
    for blk in (b, b2):
        await tb.erase(blk)
        for p in range(2):
            await tb.program(blk * tb.ppb + p, tb.rand_data(data_len))
            done.append(blk * tb.ppb + p)

    async def check_all(what):
        for r in done:
            await tb.check_row(r, 0, data_len, what)
        for bb in sorted(tb.bad):
            await tb.check_row(bb * tb.ppb, 0, 32, f"{what}: bad block {bb}'s mark")
    # 1. cut in tPROG, the system reset while off, power back
    row = b * tb.ppb + 2
    await tb.host.program_start(row, tb.rand_data(data_len))
    await Timer(rng.randint(tb.t_prog // 20, tb.t_prog * 9 // 10), unit="ns")
    assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0
    await tb.power_cut()
    await tb.sys_reset()
    await tb.power_on()
    tb.model.tear_page(row)
    await tb.check_row(row, 0, 32, "page cut in tPROG, after the system reset")
    await check_all("after a cut and the system reset")
    # 2. the system reset in tPROG with power on: a cut for the die
    row2 = b2 * tb.ppb + 2
    data2 = tb.rand_data(data_len)
    await tb.host.program_start(row2, data2)
    await Timer(rng.randint(tb.t_prog // 4, tb.t_prog * 3 // 4), unit="ns")
    await tb.sys_reset()
    assert int(dut.die_rb_n.value) == 1 and int(dut.emu_rb_n.value) == 1, "R/B# low after the system reset"
    await tb.host.reset()
    tb.model.tear_page(row2)
    await tb.check_row(row2, 0, 32, "page in tPROG at the system reset")
    await check_all("after a system reset in tPROG")
    # 2b. the system reset while a READ of a programmed page loads it from the DRAM (the
    # emulator's A_ENG, inside the die's tR): a cut in tR for the die; the read dropped, the
    # page intact in both; the next READ's page load is not mixed with the dropped one's words
    row3 = rng.choice(done)
    await tb.host.read_page_start(row3, 0)
    want_cmds = rng.randint(1, max(1, tb.row_words - 2))
    n_cmds = 0
    while n_cmds < want_cmds:
        await RisingEdge(dut.clk)
        n_cmds += int(dut.m_dram_cmd_valid.value) & int(dut.m_dram_cmd_ready.value)
    assert int(dut.die_rb_n.value) == 0 and int(dut.emu_rb_n.value) == 0, "READ not busy in its page load"
    await tb.sys_reset(in_transfer=True)
    assert int(dut.die_rb_n.value) == 1 and int(dut.emu_rb_n.value) == 1, "R/B# low after the system reset"
    # (an emulator whose DRAM engine still waits for the dropped words never ends the RESET)
    await with_timeout(tb.host.reset(), 200, "us")
    await tb.check_row(row3, 0, data_len, "page whose READ's page load met the system reset")
    await check_all("after a system reset in a READ's page load")
    # 3. the system reset while idle: nothing lost; the torn pages stay torn until erased
    await tb.sys_reset()
    await tb.host.reset()
    await check_all("after an idle system reset")
    await tb.check_row(row, 0, 32, "torn page after an idle system reset")
    await tb.erase(b)
    await tb.program(row, tb.rand_data(data_len))
    await tb.check_row(row, 0, data_len, "reprogrammed after the system resets")
    await tb.end()


@cocotb.test()
async def chan_traffic(dut):
    """The emulator behind ats_nand_chan (pins in cycles from the die's minimums, one way), the die
    model on the same pins as the referee: RESET, READ ID, PARAMETER PAGE, random erase / program /
    read; the controller's data and statuses against NandModel, die and emulator DQ at every RE#
    rising and their R/B# rises against each other."""
    tb = TB(dut)
    rng = tb.rng
    await tb.start()
    await Timer(1, unit="us")
    dut.sel_chan.value = 1
    cmd = StreamSource(dut, "s_cmd", dut.clk, ["op", "tag", "row", "col", "len"], random_pause(rng, 0.3))
    wdata = StreamSource(dut, "s_wdata", dut.clk, ["data", "last"], random_pause(rng, 0.2))
    rdata = StreamSink(dut, "m_rdata", dut.clk, ["data", "tag", "last"], random_pause(rng, 0.3))
    cpl = StreamSink(dut, "m_cpl", dut.clk, ["tag", "status"], random_pause(rng, 0.3))
    n_re = [0]
    diff = []
    in_param = [False]

    async def dq_monitor():               # die and emulator put out the same byte in every read cycle
        while True:
            await RisingEdge(dut.p_re_n)
            if not int(dut.p_ce_n.value):
                n_re[0] += 1
                d, e = int(dut.die_dq_o.value), int(dut.emu_dq_o.value)
                if d != e and not in_param[0]:     # the parameter pages differ in "SIM"/"EMU" and CRC
                    diff.append((now_ns(), d, e))
    mon = cocotb.start_soon(dq_monitor())
    tag = [0]

    async def op(o, row=0, col=0, n=0, data=b""):
        tag[0] = (tag[0] + 1) % 256
        cmd.send_nowait(op=o, tag=tag[0], row=row, col=col, len=n)
        for i, b in enumerate(data):
            wdata.send_nowait(data=b, last=int(i == len(data) - 1))
        got = bytearray()
        cycles = 0
        while not cpl.queue:
            await RisingEdge(dut.clk)
            cycles += 1
            assert cycles < 2_000_000, f"controller op {o}: no completion"
        c = cpl.queue.popleft()
        assert c["tag"] == tag[0]
        while rdata.queue:
            b = rdata.queue.popleft()
            assert b["tag"] == tag[0]
            got.append(b["data"])
        assert len(got) == (n if o in (OP_READ, OP_RDID, OP_PARAM) else 0), f"op {o}: {len(got)} bytes"
        return c["status"], bytes(got)

    st, _ = await op(OP_RESET)
    assert st == 0
    st, ident = await op(OP_RDID, n=4)
    assert ident == b"\xa7\xd3\x00\x00", f"READ ID (00h) through the controller: {ident}"
    in_param[0] = True
    st, pp = await op(OP_PARAM, n=256)
    in_param[0] = False
    assert int.from_bytes(pp[254:256], "little") == onfi_crc16(pp[:254]) and pp[44:56] == b"ATS-NAND-EMU"
    blocks = rng.sample(tb.good_blocks(), min(3, len(tb.good_blocks())))
    if tb.bad:
        blocks.append(min(tb.bad))
    for b in blocks:
        st, _ = await op(OP_ERASE, row=b * tb.ppb)
        assert st == (2 if b in tb.bad else 0), f"erase block {b}: status {st}"
        if b not in tb.bad:
            tb.model.erase(b, ok=True)
    n_ops = int(os.environ.get("ATS_EMU_OPS", "30" if tb.row_bytes < 1000 else "10"))
    for _ in range(n_ops):
        b = rng.choice(blocks)
        r = rng.random()
        if r < 0.4 and b not in tb.bad and tb.model.next_page[b] < tb.ppb:
            row = b * tb.ppb + tb.model.next_page[b]
            n = tb.row_bytes if rng.random() < 0.5 else rng.randint(1, min(64, tb.row_bytes))
            col = 0 if n == tb.row_bytes else rng.randrange(tb.row_bytes - n + 1)
            data = tb.rand_data(n)
            st, _ = await op(OP_PROG, row=row, col=col, n=n, data=data)
            assert st == 0, f"program row {row}: status {st}"
            tb.model.program(row, data, col, ok=True)
        elif r < 0.5 and b not in tb.bad:
            st, _ = await op(OP_ERASE, row=b * tb.ppb)
            assert st == 0
            tb.model.erase(b, ok=True)
        else:
            row = b * tb.ppb + rng.randrange(tb.ppb)
            col = rng.randrange(tb.row_bytes)
            n = rng.randint(1, tb.row_bytes - col)
            st, got = await op(OP_READ, row=row, col=col, n=n)
            exp = tb.expected(row)
            assert st == 0 and got == exp[col:col + n], f"read row {row} col {col} n {n} through the controller"
    mon.cancel()
    assert not diff, f"die and emulator DQ differ in {len(diff)} of {n_re[0]} read cycles: {diff[:4]}"
    # R/B#: the same busy periods, rises within tolerance
    d_r = [t for t, v in tb.rb_die.edges if v == 1]
    e_r = [t for t, v in tb.rb_emu.edges if v == 1]
    assert len(d_r) == len(e_r), f"{len(d_r)} busy periods (model) vs {len(e_r)} (emulator)"
    worst = max((abs(a - b) for a, b in zip(d_r, e_r)), default=0.0)
    assert worst <= tb.rb_tol, f"R/B# rises differ by up to {worst:.1f} ns"
    await Timer(1, unit="us")
    dut.sel_chan.value = 0
    await Timer(1, unit="us")
    dut._log.info("chan_traffic: %d read cycles compared, %d busy periods, worst R/B# rise difference %.1f ns",
                  n_re[0], len(d_r), worst)
    await tb.end()


@cocotb.test()
async def dram_slow(dut):
    """A DRAM far slower than tR / tPROG (long stalls and latencies): R/B# of a READ of a programmed
    page and of a PROGRAM rises only when the transfer is done (later than the model's), the data
    are right; erased-page reads and erases, which move no DRAM words, keep the model's timing."""
    tb = TB(dut)
    await tb.start()
    b = tb.good_blocks()[1]
    await tb.erase(b)
    data = tb.rand_data(tb.row_bytes)
    await tb.program(b * tb.ppb, data)
    tb.dram.cmd_stall, tb.dram.lat = 0.97, (100, 200)
    tb.dram_bound = True
    await tb.check_row(b * tb.ppb, 0, 64, "read with a slow DRAM")
    await tb.program(b * tb.ppb + 1, tb.rand_data(tb.row_bytes))
    assert len(tb.late) == 2 and min(tb.late) > 10 * tb.clk_ns, f"R/B# not held for the DRAM: {tb.late}"
    tb.dram_bound = False
    await tb.check_row(b * tb.ppb + 2, 0, 16, "erased page with a slow DRAM")   # no DRAM: timer only
    await tb.erase(b)
    tb.dram.cmd_stall, tb.dram.lat = DRAM_PROFILES["fast"]["cmd_stall"], DRAM_PROFILES["fast"]["lat"]
    await tb.check_row(b * tb.ppb + 1, 0, 16, "after the erase")
    dut._log.info("dram_slow: R/B# later than the model's by %s ns", [round(x) for x in tb.late])
    await tb.end()


# ---- pytest entry: one Verilator build per geometry, runs per DRAM profile -----------------------
BUILDS = {
    # small die, FEMU array times / 10, 64-bit DRAM words, pins from clk's domain (1 flop), every
    # pin timing at the emulator's minimum (2 periods of 10 ns: EMU2)
    "small": dict(PLANES=2, BLOCKS=16, PAGES_PER_BLOCK=8, PAGE_BYTES=512, SPARE_BYTES=16,
                  ARRAY_TIME_DIV=10, CLK_PS=10000, SYNC_STAGES=1, DRAM_DW=64, DRAM_AW=16, DRAM_BASE=1000,
                  **PRESETS["femu"], **EMU2),
    # DiffTx geometry (4 KiB + 224, 64 pages per block), DiffTx times / 4, 128-bit DRAM words (the
    # ECPIX-5's DDR3 port), two synchroniser flops, 200 MHz
    "difftx": dict(PLANES=4, BLOCKS=8, SPARE_BYTES=224, ARRAY_TIME_DIV=4, CLK_PS=5000, SYNC_STAGES=2,
                   DRAM_DW=128, DRAM_AW=18, DRAM_BASE=0, **PRESETS["difftx"], **MODE0),
}
BAD = {"small": [3, 11], "difftx": [5]}
NAND = ROOT / "sim" / "nand"


def write_image(path: Path, p: dict, bad: list[int]) -> None:
    """A die-model image (sim/nand/README.md "Image file") with these factory-bad blocks: their flag,
    and page 0 all 00h (the mark), as the die's own saver writes them; every other page erased."""
    row_bytes = p["PAGE_BYTES"] + p["SPARE_BYTES"]
    hdr = b"ATSNAND1" + struct.pack("<7I", p["PLANES"], p["BLOCKS"], p["PAGES_PER_BLOCK"], p["PAGE_BYTES"],
                                    p["SPARE_BYTES"], 1, len(bad))
    recs = b"".join(struct.pack("<I", b * p["PAGES_PER_BLOCK"]) + bytes(row_bytes) for b in sorted(bad))
    path.write_bytes(hdr + recs + bytes(1 if b in bad else 0 for b in range(p["BLOCKS"])))


@pytest.mark.parametrize("build,dram", [("small", "fast"), ("small", "slow"), ("difftx", "slow")])
def test_ats_nand_emu(build, dram, tmp_path):
    params = BUILDS[build]
    img = tmp_path / "die0.img"
    write_image(img, params, BAD[build])
    run(toplevel="ats_nand_emu_tb",
        sources=block_sources("ats_nand_die", "ats_nand_chan", "ats_nand_emu") + [Path(__file__).parent / "ats_nand_emu_tb.sv"],
        test_module="test_ats_nand_emu", test_dir=Path(__file__).parent, build_key=build, parameters=params,
        build_args=[str(NAND / "ats_nand_store.cpp"), "-CFLAGS", f"-I{NAND}"], public={},
        testcase=["identify", "traffic", "bad_blocks", "power_fail", "sys_reset", "chan_traffic", "dram_slow"],
        extra_env={"ATS_NAND_IMAGE_0": str(img), "ATS_EMU_DRAM": dram,
                   "ATS_EMU_BAD": ",".join(map(str, BAD[build]))},
        results_name=f"test_ats_nand_emu_{dram}")
