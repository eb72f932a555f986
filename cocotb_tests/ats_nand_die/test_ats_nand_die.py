"""ats_nand_die: NAND die model (sim/nand) driven at pin level by an ONFI host (atstb.onfi).

Contents are checked against atstb.nand_model.NandModel, a plain-Python model written from the
design brief; the tests never look into the die's DPI store. viol_count must stay 0 on legal
traffic (with random extra idle between cycles) and rise on every illegal sequence, whose rule the
die names (`viol_last`); by default a violation ends the run (`loud`). `array_times` measures the
presets' array times on R/B#. See sim/nand/testplan.md for which test covers which point.
"""
import json
import math
import os
import re
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

from atstb.nand_model import PRESETS, NandModel, onfi_crc16
from atstb.onfi import FAST, MODE0, OnfiHost
from atstb.runner import ROOT, block_sources, run

STATUS_FAIL, STATUS_RDY, STATUS_WP = 0x01, 0x40, 0x80
TIMING_KEYS = list(MODE0)


class TB:
    def __init__(self, dut, idle_p=0.2, clk_ns=10):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 13)
        g = lambda n: int(getattr(dut, n).value)  # noqa: E731
        self.planes, self.blocks, self.ppb = g("PLANES"), g("BLOCKS"), g("PAGES_PER_BLOCK")
        self.page_bytes, self.spare_bytes = g("PAGE_BYTES"), g("SPARE_BYTES")
        self.row_bytes = self.page_bytes + self.spare_bytes
        self.timing = {k: g(k) for k in TIMING_KEYS}
        div = g("ARRAY_TIME_DIV")
        self.t_r, self.t_prog, self.t_bers = (g("T_R_NS") // div, g("T_PROG_NS") // div, g("T_BERS_NS") // div)
        self.clk_ns = clk_ns
        cocotb.start_soon(Clock(dut.clk, clk_ns, unit="ns").start())
        dut.power_ok.value = 0
        self.host = OnfiHost(dut, self.timing, self.rng, idle_p=idle_p)
        self.model = NandModel(self.blocks, self.ppb, self.page_bytes, self.spare_bytes)

    @property
    def viol(self) -> int:
        return int(self.dut.viol_count.value)

    @property
    def viol_msg(self) -> str:
        """Text of the die's last violation (its `viol_last` vector, ASCII right-aligned)."""
        v = self.dut.viol_last.value
        return int(v).to_bytes(len(v) // 8, "big").lstrip(b"\0").decode("ascii", "replace")

    async def power_on(self):
        await Timer(self.rng.randint(300, 1000), unit="ns")    # power stays off a while first
        self.dut.power_ok.value = 1
        await Timer(self.rng.randint(50, 500), unit="ns")
        await self.host.reset()

    async def power_cut(self):
        self.dut.power_ok.value = 0
        # the host lets go of the bus (a real controller loses power too)
        self.dut.ce_n.value = 1
        self.dut.we_n.value = 1
        self.dut.re_n.value = 1
        self.dut.cle.value = 0
        self.dut.ale.value = 0
        self.host.ce_low_since = None
        self.host.confirm_time = None
        await Timer(self.rng.randint(100, 1000), unit="ns")

    def rand_data(self, n):
        return bytes(self.rng.getrandbits(8) for _ in range(n))

    async def check_row(self, row, col=0, n=None, what=""):
        exp = self.model.expected(row)
        n = self.row_bytes - col if n is None else n
        got = await self.host.read_page(row, col, n)
        if exp is not None:
            assert got == exp[col:col + n], f"{what} row {row} col {col} n {n}: content differs from the model"
        return got

    async def program(self, row, data, col=0):
        st = await self.host.program_page(row, data, col)
        self.model.program(row, data, col, ok=not (st & STATUS_FAIL))
        return st

    async def erase(self, block):
        st = await self.host.erase_block(block, self.ppb)
        self.model.erase(block, ok=not (st & STATUS_FAIL))
        return st

    def short_len(self):
        return self.rng.choice([1, 2, 7, 16, 33, 64]) if self.row_bytes > 600 else self.rng.randint(1, self.row_bytes)


@cocotb.test()
async def identify(dut):
    """RESET, READ STATUS, READ ID (00h, 20h), READ PARAMETER PAGE (3 copies, CRC, geometry)."""
    tb = TB(dut)
    assert int(dut.rb_n.value) == 0, "R/B# must be low while power is off"
    await tb.power_on()
    st = await tb.host.read_status()
    assert st == STATUS_WP | STATUS_RDY | 0x20, f"status after RESET {st:#x}"
    ident = await tb.host.read_id(0x00, 2)
    assert ident == bytes([int(dut.MFR_ID.value) & 0xFF, int(dut.DEV_ID.value) & 0xFF])
    assert await tb.host.read_id(0x20, 4) == b"ONFI"
    pp = await tb.host.read_param_page(768)
    assert pp[0:256] == pp[256:512] == pp[512:768], "parameter page copies differ"
    p = pp[:256]
    le = lambda o, n: int.from_bytes(p[o:o + n], "little")  # noqa: E731
    assert p[0:4] == b"ONFI" and le(4, 2) & 0x2, "signature / revision 1.0"
    assert le(254, 2) == onfi_crc16(p[:254]), "parameter page CRC"
    assert le(80, 4) == tb.page_bytes and le(84, 2) == tb.spare_bytes
    assert le(92, 4) == tb.ppb and le(96, 4) == tb.blocks and p[100] == 1
    assert p[101] == 0x23, "2 column + 3 row address cycles"
    assert p[113] == int(math.log2(tb.planes)), "plane (interleave) address bits"
    assert p[64] == int(dut.MFR_ID.value) & 0xFF
    # write-protect shows in the status register and rejects a program
    dut.wp_n.value = 0
    await Timer(100, unit="ns")
    st = await tb.host.program_page(tb.ppb, b"\x00" * 8)
    assert st & STATUS_FAIL and not st & STATUS_WP, f"program with WP# low: status {st:#x}"
    dut.wp_n.value = 1
    await Timer(100, unit="ns")
    assert await tb.check_row(tb.ppb, 0, 16) == b"\xff" * 16, "write-protected program changed the page"
    assert tb.viol == 0


@cocotb.test()
async def random_traffic(dut):
    """Random erase / in-order program / read (partial, CHANGE READ COLUMN, 70h + 00h resume) vs the model."""
    tb = TB(dut)
    rng = tb.rng
    await tb.power_on()
    n_ops = int(os.environ.get("ATS_NAND_OPS", "60" if tb.row_bytes < 1000 else "24"))
    if os.environ.get("ATS_LONG"):
        n_ops *= 5
    blocks = rng.sample(range(tb.blocks), min(tb.blocks, 6))
    blocks[0] = tb.blocks - 1                   # every address bit of the last block
    for b in blocks:
        await tb.erase(b)
    reads = 0
    for _ in range(n_ops):
        op = rng.random()
        b = rng.choice(blocks)
        if op < 0.4:
            p = tb.model.next_page[b]
            if p >= tb.ppb:
                await tb.erase(b)
                continue
            p = min(tb.ppb - 1, p + (rng.random() < 0.2))          # sometimes skip a page
            if rng.random() < 0.15 or tb.row_bytes < 1000:
                col, n = 0, tb.row_bytes
            else:
                col = rng.randrange(tb.row_bytes - 64)
                n = rng.randint(1, 64)
            await tb.program(b * tb.ppb + p, tb.rand_data(n), col)
        elif op < 0.5:
            await tb.erase(b)
        else:
            row = b * tb.ppb + rng.randrange(tb.ppb)
            exp = tb.model.expected(row)
            col = rng.randrange(tb.row_bytes)
            n = min(tb.short_len(), tb.row_bytes - col)
            got = await tb.host.read_page(row, col, n, keep=True)
            assert got == exp[col:col + n], f"read row {row} col {col}"
            for _ in range(rng.randint(0, 2)):
                if rng.random() < 0.5:
                    col = rng.randrange(tb.row_bytes)
                    n = min(tb.short_len(), tb.row_bytes - col)
                    got = await tb.host.change_read_column(col, n)
                    assert got == exp[col:col + n], f"CHANGE READ COLUMN row {row} col {col}"
                else:
                    n = min(tb.short_len(), tb.row_bytes - col - n)
                    col = col + len(got)
                    if n <= 0:
                        continue
                    st, got = await tb.host.status_then_resume(n)
                    assert st & STATUS_RDY and not st & STATUS_FAIL
                    assert got == exp[col:col + n], f"resume after 70h row {row} col {col}"
            await tb.host.deselect()
            reads += 1
    # full sweep of every touched page
    for b in blocks:
        for p in range(tb.ppb):
            row = b * tb.ppb + p
            if tb.row_bytes < 1000 or row in tb.model.pages:
                await tb.check_row(row, what="sweep")
    assert tb.viol == 0, f"{tb.viol} violations on legal traffic"
    dut._log.info("random_traffic: %d ops, %d random reads, %d programmed pages", n_ops, reads, len(tb.model.pages))


@cocotb.test()
async def power_cut(dut):
    """Power cut at random times during program and erase: only the in-flight page/block is affected."""
    tb = TB(dut)
    rng = tb.rng
    await tb.power_on()
    n_cuts = 8 if not os.environ.get("ATS_LONG") else 40
    data_len = lambda: 64  # noqa: E731
    # some stable content in every block first
    for b in range(tb.blocks):
        await tb.erase(b)
        for p in range(2):
            await tb.program(b * tb.ppb + p, tb.rand_data(data_len()))
    torn_pages = torn_blocks = completed = 0
    for i in range(n_cuts):
        b = rng.randrange(tb.blocks)
        if rng.random() < 0.6:
            p = tb.model.next_page[b]
            if p >= tb.ppb:
                await tb.erase(b)
                p = 0
            row = b * tb.ppb + p
            data = tb.rand_data(data_len())
            await tb.host.program_start(row, data)
            busy = tb.t_prog
            kind = "program"
        else:
            await tb.host.erase_start(b, tb.ppb)
            busy = tb.t_bers
            kind = "erase"
        await Timer(rng.randint(1, int(busy * 1.3)), unit="ns")
        in_flight = int(dut.rb_n.value) == 0
        await tb.power_cut()
        if kind == "program":
            if in_flight:
                tb.model.tear_page(row)
                torn_pages += 1
            else:
                tb.model.program(row, data, 0, ok=True)
                completed += 1
        else:
            if in_flight:
                tb.model.tear_block(b)
                torn_blocks += 1
            else:
                tb.model.erase(b, ok=True)
                completed += 1
        await tb.power_on()
        if kind == "program" and in_flight:
            # torn: random bits, far from what was meant (an ECC would fail)
            got = await tb.host.read_page(row, 0, len(data))
            diff = sum(bin(x ^ y).count("1") for x, y in zip(got, data))
            assert diff > len(data) * 8 // 8, f"torn page {row} is too close to its data ({diff} bits)"
        # every other known page still matches
        for r in sorted(tb.model.pages):
            await tb.check_row(r, 0, 12, what=f"after cut {i} ({kind}, in flight {in_flight})")
        # a torn / indeterminate page is not erased: programming it again is a misuse, erase first
        if kind == "erase" and in_flight:
            await tb.erase(b)
            assert await tb.check_row(b * tb.ppb, 0, 16) == b"\xff" * 16
    for r in sorted(tb.model.pages):
        await tb.check_row(r, 0, data_len(), what="final sweep")
    assert tb.viol == 0, f"{tb.viol} violations on legal traffic"
    dut._log.info("power_cut: %d torn pages, %d indeterminate blocks, %d completed", torn_pages, torn_blocks, completed)
    assert torn_pages + torn_blocks > 0


# ---- illegal traffic: raw pin sequences that break one rule each -------------------------------
async def raw_latch(dut, cle, ale, byte, low_ns=60, high_ns=60, dq_late_ns=None):
    dut.cle.value = cle
    dut.ale.value = ale
    dut.dq_i.value = byte if dq_late_ns is None else byte ^ 0xFF
    dut.we_n.value = 0
    if dq_late_ns is not None:
        await Timer(low_ns - dq_late_ns, unit="ns")
        dut.dq_i.value = byte
        await Timer(dq_late_ns, unit="ns")
    else:
        await Timer(low_ns, unit="ns")
    dut.we_n.value = 1
    if high_ns:
        await Timer(high_ns, unit="ns")


async def pin_latch(dut, cle, ale, byte, low_ps, high_ps):
    """One WE# pulse, times in ps: CLE/ALE/DQ change at WE# falling."""
    dut.cle.value = cle
    dut.ale.value = ale
    dut.dq_i.value = byte
    dut.we_n.value = 0
    await Timer(low_ps, unit="ps")
    dut.we_n.value = 1
    if high_ps:
        await Timer(high_ps, unit="ps")


async def raw_read(dut, low_ns=60, high_ns=60):
    dut.re_n.value = 0
    await Timer(low_ns, unit="ns")
    v = int(dut.dq_o.value)
    dut.re_n.value = 1
    await Timer(high_ns, unit="ns")
    return v


@cocotb.test()
async def illegal(dut):
    """Each illegal sequence raises viol_count and names its rule; legal traffic in between does not.
    Runs with ATS_NAND_VIOL=count (the die counts and goes on instead of ending the run)."""
    tb = TB(dut, idle_p=0.0)
    h = tb.host
    t = tb.timing
    slow = max(t["T_WHR_PS"], t["T_RHW_PS"], t["T_ADL_PS"], t["T_WB_PS"]) // 1000 + 10
    await Timer(200, unit="ns")      # power off (TB), then on without RESET
    dut.power_ok.value = 1
    await Timer(200, unit="ns")

    async def expect(name, coro_fn, msg=None, count=None, select=True):
        """Run coro_fn with CE# low: `count` violations (None: at least one), the text of the last
        one matching the regular expression `msg` in full."""
        await Timer(slow, unit="ns")
        before = tb.viol
        if select:
            dut.ce_n.value = 0
            await Timer(100, unit="ns")
        await coro_fn()
        dut.ce_n.value = 1
        await Timer(slow, unit="ns")
        got = tb.viol - before
        last = tb.viol_msg if got else ""
        if count is None:
            assert got > 0, f"{name}: no violation counted"
        else:
            assert got == count, f"{name}: {got} violation(s) counted, expected {count} (last {last!r})"
        if msg is not None and got:
            assert re.fullmatch(msg, last), f"{name}: the die reported {last!r}, expected {msg!r}"
        # recover: RESET (legal), and check that legal traffic counts nothing
        await h.reset()
        mid = tb.viol
        assert await h.read_status() & STATUS_RDY
        assert tb.viol == mid, f"{name}: legal traffic after RESET counted a violation"
        dut._log.info("illegal %-40s -> %d violation(s) %r", name, got, last)

    async def pair(name, fn, msg, select=True):
        """fn(True) breaks exactly one rule (one violation, `msg`); fn(False), the same sequence
        with legal timing/addresses, counts none."""
        await expect(name, lambda: fn(True), msg=msg, count=1, select=select)
        await expect(name + " / legal twin", lambda: fn(False), count=0, select=select)

    async def cmd_before_reset():
        await raw_latch(dut, 1, 0, 0x90, high_ns=slow)
    await expect("command before RESET", cmd_before_reset, "command 90h before RESET after power-on", 1)

    async def unknown_cmd():
        await raw_latch(dut, 1, 0, 0x42)
    await expect("unknown command", unknown_cmd, "unsupported command 42h", 1)

    async def confirm_alone():
        await raw_latch(dut, 1, 0, 0x30)
    await expect("30h without 00h", confirm_alone, "30h without 00h and 5 address cycles", 1)

    async def short_address():
        await raw_latch(dut, 1, 0, 0x00)
        for _ in range(4):
            await raw_latch(dut, 0, 1, 0x00)
        await raw_latch(dut, 1, 0, 0x30)
    await expect("READ with 4 address cycles", short_address, "30h without 00h and 5 address cycles", 1)

    async def long_address():
        await raw_latch(dut, 1, 0, 0x80)
        for _ in range(6):
            await raw_latch(dut, 0, 1, 0x00)
    await expect("PROGRAM with 6 address cycles", long_address, r"unexpected address cycle 00h \(6 cycles for the command\)", 1)

    async def stray_data():
        await raw_latch(dut, 0, 0, 0x5A)
    await expect("data input outside PROGRAM", stray_data, "data input cycle 5ah outside PROGRAM", 1)

    async def e0_alone():
        await raw_latch(dut, 1, 0, 0x05)
        await raw_latch(dut, 0, 1, 0x00)
        await raw_latch(dut, 0, 1, 0x00)
        await raw_latch(dut, 1, 0, 0xE0)
    # 05h without a read (1), its 2 address cycles (2), E0h without 05h (1)
    await expect("05h-E0h without a page read", e0_alone, "E0h without 05h and 2 address cycles", 4)

    async def short_we():    # CLE and DQ set well before, so only the pulse width is wrong
        dut.cle.value = 1
        dut.ale.value = 0
        dut.dq_i.value = 0x70
        await Timer(100, unit="ns")
        await raw_latch(dut, 1, 0, 0x70, low_ns=max(1, t["T_WP_PS"] // 2000))
    await expect("tWP (short WE# pulse)", short_we, "tWP", 1)

    async def late_dq():
        await raw_latch(dut, 1, 0, 0x70, low_ns=60, dq_late_ns=max(1, t["T_DS_PS"] // 2000))
    await expect("tDS (late DQ)", late_dq, "tDS", 1)

    async def early_re():
        await raw_latch(dut, 1, 0, 0x70, high_ns=1)
        await raw_read(dut)
    await expect("tWHR (RE# right after 70h)", early_re, "tWHR", 1)

    async def short_re():
        await raw_latch(dut, 1, 0, 0x70, high_ns=slow)
        await raw_read(dut, low_ns=max(1, t["T_RP_PS"] // 2000))
    await expect("tRP (short RE# pulse)", short_re, "tRP", 1)

    async def early_we_after_read():
        await raw_latch(dut, 1, 0, 0x70, high_ns=slow)
        await raw_read(dut, high_ns=1)
        await raw_latch(dut, 1, 0, 0x70)
    await expect("tRHW (WE# right after RE#)", early_we_after_read, "tRHW", 1)

    async def status_within_twb():
        await raw_latch(dut, 1, 0, 0x60)
        for a in (0, 0, 0):
            await raw_latch(dut, 0, 1, a)
        await raw_latch(dut, 1, 0, 0xD0, high_ns=max(1, t["T_WH_PS"] // 1000 + 2))
        await raw_latch(dut, 1, 0, 0x70)
    await expect("tWB (70h right after D0h)", status_within_twb, "tWB", 1)

    async def early_re_after_ready():
        await raw_latch(dut, 1, 0, 0x00)
        for a in (0, 0, 0, 0, 0):
            await raw_latch(dut, 0, 1, a)
        await raw_latch(dut, 1, 0, 0x30, high_ns=slow)
        while int(dut.rb_n.value) == 0:
            await RisingEdge(dut.rb_n)
        await raw_read(dut)
    await expect("tRR (RE# right after R/B#)", early_re_after_ready, "tRR", 1)

    async def dq_hold():
        await raw_latch(dut, 1, 0, 0x70, high_ns=0)
        await Timer(1, unit="ns")
        dut.dq_i.value = 0x00
        await Timer(slow, unit="ns")
    await expect("tDH (DQ changes after WE#)", dq_hold, "tDH", 1)

    async def cle_hold():
        await raw_latch(dut, 1, 0, 0x70, high_ns=0)
        await Timer(1, unit="ns")
        dut.cle.value = 0
        await Timer(slow, unit="ns")
    await expect("tCLH (CLE falls after WE#)", cle_hold, "tCLH", 1)

    async def read_while_busy():
        await raw_latch(dut, 1, 0, 0x60)
        for a in (0, 0, 0):
            await raw_latch(dut, 0, 1, a)
        await raw_latch(dut, 1, 0, 0xD0, high_ns=slow)
        await raw_read(dut)
    await expect("data output while busy", read_while_busy, "data output while busy", 1)

    async def cmd_while_busy():
        await raw_latch(dut, 1, 0, 0x60)
        for a in (0, 0, 0):
            await raw_latch(dut, 0, 1, a)
        await raw_latch(dut, 1, 0, 0xD0, high_ns=slow)
        await raw_latch(dut, 1, 0, 0x90, high_ns=slow)
    await expect("READ ID while busy", cmd_while_busy, "command 90h while busy", 1)

    async def early_tadl():
        await raw_latch(dut, 1, 0, 0x80)
        hold = max(t["T_WH_PS"], t["T_CLH_PS"], t["T_DH_PS"]) // 1000 + 2
        low = max(t["T_WP_PS"], t["T_CLS_PS"], t["T_DS_PS"]) // 1000 + 2
        for a in (0, 0, 0, 0, 0):
            await raw_latch(dut, 0, 1, a, high_ns=hold)
        await raw_latch(dut, 0, 0, 0x12, low_ns=low)
    await expect("tADL (data right after address)", early_tadl, "tADL", 1)

    # misuse of the array: program a programmed page; program out of order in a block
    await h.erase_block(1, tb.ppb)

    async def reprogram():
        await h.program_page(tb.ppb + 0, b"\x11" * 4)
        await h.program_page(tb.ppb + 0, b"\x22" * 4)
    await expect("program a non-erased page", reprogram, r"PROGRAM of row \d+ \(block 1 page 0\): page not erased", 1)

    async def out_of_order():
        await h.program_page(tb.ppb + 3, b"\x33" * 4)
        await h.program_page(tb.ppb + 2, b"\x44" * 4)
    await expect("program out of order", out_of_order, r"PROGRAM of row \d+ \(block 1 page 2\): out of order in the block", 1)

    # after a power cut, only RESET is accepted
    async def no_reset_after_cut():
        dut.power_ok.value = 0
        await Timer(200, unit="ns")
        dut.power_ok.value = 1
        await Timer(200, unit="ns")
        await raw_latch(dut, 1, 0, 0x00)
    await expect("command after power-on without RESET", no_reset_after_cut, "command 00h before RESET after power-on", 1)

    # ---- one rule at a time, each next to the same sequence with legal timing -------------------
    lo = max(t["T_WP_PS"], t["T_CLS_PS"], t["T_DS_PS"]) + 2000      # legal WE# low time (ps)
    hi = max(t["T_WH_PS"], t["T_CLH_PS"], t["T_DH_PS"]) + 2000      # legal WE# high time (ps)

    async def twh(bad):      # two 70h latches: WE# high too short between them (CLE, DQ unchanged)
        await pin_latch(dut, 1, 0, 0x70, lo, t["T_WH_PS"] // 2 if bad else t["T_WH_PS"] + 1000)
        await pin_latch(dut, 1, 0, 0x70, lo, hi)
    await pair("tWH (WE# high too short)", twh, "tWH")

    async def treh(bad):     # 70h, two status reads: RE# high too short between them
        await pin_latch(dut, 1, 0, 0x70, lo, t["T_WHR_PS"] + 1000)
        for gap in (t["T_REH_PS"] // 2 if bad else t["T_REH_PS"] + 1000, hi):
            dut.re_n.value = 0
            await Timer(t["T_RP_PS"] + 1000, unit="ps")
            dut.re_n.value = 1
            await Timer(gap, unit="ps")
    await pair("tREH (RE# high too short)", treh, "tREH")

    async def late_level(sig, setup_ps, low_ps):
        """WE# low for low_ps with CLE/ALE low; `sig` rises setup_ps before WE# rises."""
        dut.we_n.value = 0
        await Timer(low_ps - setup_ps, unit="ps")
        sig.value = 1
        await Timer(setup_ps, unit="ps")
        dut.we_n.value = 1
        await Timer(hi, unit="ps")

    async def tcls(bad):     # 70h with CLE rising late (WE# pulse, DQ setup legal)
        setup = t["T_CLS_PS"] // 2 if bad else t["T_CLS_PS"] + 1000
        dut.cle.value = 0
        dut.ale.value = 0
        dut.dq_i.value = 0x70
        await Timer(hi, unit="ps")
        await late_level(dut.cle, setup, max(lo, setup + 1000))
    await pair("tCLS alone (CLE late)", tcls, "tCLS")

    async def tals(bad):     # 90h, then its address cycle with ALE rising late
        await pin_latch(dut, 1, 0, 0x90, lo, hi)
        setup = t["T_CLS_PS"] // 2 if bad else t["T_CLS_PS"] + 1000
        dut.cle.value = 0
        dut.dq_i.value = 0x00
        await late_level(dut.ale, setup, max(lo, setup + 1000))
    await pair("tALS alone (ALE late)", tals, "tALS")

    async def talh(bad):     # 90h + address, ALE falls too soon after WE# rising
        await pin_latch(dut, 1, 0, 0x90, lo, hi)
        await pin_latch(dut, 0, 1, 0x00, lo, 0)
        await Timer(t["T_CLH_PS"] // 2 if bad else t["T_CLH_PS"] + 1000, unit="ps")
        dut.ale.value = 0
        await Timer(hi, unit="ps")
    await pair("tALH (ALE falls after WE#)", talh, "tALH")

    async def tals_data(bad):   # PROGRAM: first data cycle with ALE still falling just before WE# rises
        await pin_latch(dut, 1, 0, 0x80, lo, hi)
        for a in (0, 0, 5, 0, 0):
            await pin_latch(dut, 0, 1, a, lo, hi)
        await Timer(t["T_ADL_PS"], unit="ps")
        setup = t["T_CLS_PS"] // 2 if bad else t["T_CLS_PS"] + 1000
        low = max(lo, setup + 1000)
        dut.dq_i.value = 0x3C
        dut.we_n.value = 0
        await Timer(low - setup, unit="ps")
        dut.ale.value = 0
        await Timer(setup, unit="ps")
        dut.we_n.value = 1
        await Timer(hi, unit="ps")
    await pair("tALS of a data cycle (ALE falls late)", tals_data, r"tCLS/tALS \(data cycle\)")

    async def cle_and_ale(bad):
        await pin_latch(dut, 1, 1 if bad else 0, 0x70, lo, hi)
    await pair("CLE and ALE both high", cle_and_ale, "CLE and ALE both high")

    assert lo < t["T_CS_PS"], "tCS case needs a legal WE# pulse shorter than tCS"

    async def tcs(bad):      # CE# falls, 70h latched too soon after (WE# pulse itself legal)
        dut.cle.value = 1
        dut.ale.value = 0
        dut.dq_i.value = 0x70
        await Timer(100, unit="ns")
        dut.ce_n.value = 0
        if not bad:
            await Timer(t["T_CS_PS"] - lo + 1000, unit="ps")
        await pin_latch(dut, 1, 0, 0x70, lo, hi)
    await pair("tCS (WE# right after CE#)", tcs, "tCS", select=False)

    rows = tb.blocks * tb.ppb
    last = rows - 1

    async def erase_beyond(bad):
        st = await h.erase_block(tb.blocks if bad else tb.blocks - 1, tb.ppb)
        assert bool(st & STATUS_FAIL) == bad, f"erase status {st:#x}"
    await pair("ERASE of a block past the die", erase_beyond, rf"ERASE of block {tb.blocks} beyond the die")

    async def program_beyond(bad):
        st = await h.program_page(rows if bad else last, b"\x5a" * 4)
        assert bool(st & STATUS_FAIL) == bad, f"program status {st:#x}"
    await pair("PROGRAM of a row past the die", program_beyond, rf"PROGRAM of row {rows} beyond the die")

    async def read_beyond(bad):
        got = await h.read_page(rows if bad else last, 0, 4)
        assert got == (b"\xff" * 4 if bad else b"\x5a" * 4), got
    await pair("READ of a row past the die", read_beyond, rf"READ of row {rows} beyond the die")

    async def erase_page_bits(bad):
        await h.command(0x60)
        await h.address(*h.row_bytes(3 * tb.ppb + (1 if bad else 0)))
        await h.command(0xD0)
        h.mark_confirm()
        await h.wait_ready()
        await h.deselect()
    await pair("ERASE row with page bits set", erase_page_bits, rf"ERASE row {3 * tb.ppb + 1} has page bits set \(ignored\)")

    rb = tb.row_bytes

    async def read_past_end(bad):   # last 2 bytes of page + spare, then one more
        got = await h.read_page(last, rb - 2, 3 if bad else 2)
        assert got[:2] == b"\xff\xff", got
    await pair("data output past page + spare", read_past_end, rf"data output beyond the page \(column {tb.row_bytes}\)")

    await h.erase_block(2, tb.ppb)

    async def program_past_end(bad):  # 3 bytes ending one past the spare / at its end
        st = await h.program_page(2 * tb.ppb + (0 if bad else 1), b"\x01\x02\x03", rb - (2 if bad else 3))
        assert not st & STATUS_FAIL
    await pair("data input past page + spare", program_past_end, rf"data input beyond the page \(column {tb.row_bytes}\)")

    # ---- READ ID / READ PARAMETER PAGE addresses, RE# with nothing staged, WE#/RE# low together --
    # ONFI: READ ID takes one address cycle, 00h (manufacturer, device) or 20h ("ONFI"); READ
    # PARAMETER PAGE one address cycle, 00h (40h is the JEDEC page, which this die does not have);
    # data output with nothing staged, and WE#/RE# low together, are undefined bus states.
    mfr_dev = bytes([int(dut.MFR_ID.value) & 0xFF, int(dut.DEV_ID.value) & 0xFF])
    wrong_id = tb.rng.choice([a for a in range(256) if a not in (0x00, 0x20, 0x40)])
    for bad_addr, good_addr, good_id in ((0x40, 0x20, b"ONFI"), (wrong_id, 0x00, mfr_dev)):
        async def read_id_addr(bad, bad_addr=bad_addr, good_addr=good_addr, good_id=good_id):
            got = await h.read_id(bad_addr if bad else good_addr, len(good_id))
            if not bad:
                assert got == good_id, f"READ ID {good_addr:02x}h returned {got!r}, expected {good_id!r}"
        await pair(f"READ ID address {bad_addr:02x}h", read_id_addr, f"READ ID address {bad_addr:02x}h")

    async def read_id_two_addr(bad):     # 90h, 00h (+ a second address cycle), then the ID bytes
        await h.command(0x90)
        await h.address(*((0x00, 0x00) if bad else (0x00,)))
        assert await h.data_out(2) == mfr_dev
        await h.deselect()
    await pair("READ ID with 2 address cycles", read_id_two_addr, r"unexpected address cycle 00h \(2 cycles for the command\)")

    for bad_addr in (0x40, tb.rng.choice([a for a in range(1, 256) if a != 0x40])):
        async def param_addr(bad, bad_addr=bad_addr):
            await h.command(0xEC)
            await h.address(bad_addr if bad else 0x00)
            h.mark_confirm()
            await h.wait_ready()
            p = await h.data_out(256)
            await h.deselect()
            if not bad:
                assert p[0:4] == b"ONFI" and int.from_bytes(p[254:256], "little") == onfi_crc16(p[:254])
        await pair(f"READ PARAMETER PAGE address {bad_addr:02x}h", param_addr, f"READ PARAMETER PAGE address {bad_addr:02x}h")

    async def raw_re(expect_drive, value=None):
        """One RE# pulse after tWHR / tRR: the die drives DQ (with `value`) or, nothing staged, not."""
        await Timer(max(t["T_WHR_PS"], t["T_RR_PS"], t["T_RHW_PS"]) + 1000, unit="ps")
        dut.cle.value = 0
        dut.ale.value = 0
        dut.re_n.value = 0
        await Timer(t["T_RP_PS"] + 1000, unit="ps")
        oe, v = int(dut.dq_oe.value), int(dut.dq_o.value)
        dut.re_n.value = 1
        await Timer(hi, unit="ps")
        assert oe == int(expect_drive), f"dq_oe {oe} during RE# low, expected {int(expect_drive)}"
        if value is not None:
            assert v == value, f"DQ {v:#04x}, expected {value:#04x}"

    async def nothing_after_reset(bad):   # RESET, then RE# without 70h (twin: with 70h, status E0h)
        await h.command(0xFF)
        h.mark_confirm()
        await h.wait_ready()
        if not bad:
            await h.command(0x70)
        await raw_re(not bad, None if bad else STATUS_WP | STATUS_RDY | 0x20)
        await h.deselect()
    await pair("RE# with nothing to output (after RESET)", nothing_after_reset, "RE# cycle with nothing to output")

    async def nothing_after_erase(bad):   # ERASE, then RE# without 70h
        await h.erase_start(3, tb.ppb)
        await h.wait_ready()
        if not bad:
            await h.command(0x70)
        await raw_re(not bad, None if bad else STATUS_WP | STATUS_RDY | 0x20)
        await h.deselect()
    await pair("RE# with nothing to output (after ERASE)", nothing_after_erase, "RE# cycle with nothing to output")

    async def nothing_before_id_addr(bad):   # 90h and RE# before its address cycle
        await h.command(0x90)
        if not bad:
            await h.address(0x00)
        await raw_re(not bad, None if bad else mfr_dev[0])
        await h.deselect()
    await pair("RE# with nothing to output (90h, no address)", nothing_before_id_addr, "RE# cycle with nothing to output")

    async def we_re_low(first, bad):
        """70h latched; a status read (RE# pulse) and a second 70h (WE# pulse). bad: the two pulses
        overlap, `first` falling first; twin: RE# pulse, tRHW, WE# pulse."""
        await pin_latch(dut, 1, 0, 0x70, lo, t["T_WHR_PS"] + 1000)
        rp = t["T_RP_PS"] + 1000
        if not bad:
            dut.re_n.value = 0
            await Timer(rp, unit="ps")
            dut.re_n.value = 1
            await Timer(t["T_RHW_PS"] + 1000, unit="ps")
            await pin_latch(dut, 1, 0, 0x70, lo, hi)
        elif first == "re":         # RE# low, WE# falls, RE# rises, WE# rises
            dut.re_n.value = 0
            await Timer(rp, unit="ps")
            dut.we_n.value = 0
            await Timer(rp, unit="ps")
            dut.re_n.value = 1
            await Timer(lo, unit="ps")
            dut.we_n.value = 1
            await Timer(hi, unit="ps")
        elif first == "we":         # WE# low, RE# falls, RE# rises, WE# rises
            dut.we_n.value = 0
            await Timer(rp, unit="ps")
            dut.re_n.value = 0
            await Timer(rp, unit="ps")
            dut.re_n.value = 1
            await Timer(lo, unit="ps")
            dut.we_n.value = 1
            await Timer(hi, unit="ps")
        else:                       # both fall at the same time (one misuse, one violation)
            dut.we_n.value = 0
            dut.re_n.value = 0
            await Timer(rp, unit="ps")
            dut.re_n.value = 1
            await Timer(lo, unit="ps")
            dut.we_n.value = 1
            await Timer(hi, unit="ps")
    await pair("WE# falls while RE# low", lambda bad: we_re_low("re", bad), "WE# falling while RE# low")
    await pair("RE# falls while WE# low", lambda bad: we_re_low("we", bad), "RE# falling while WE# low")
    await pair("WE# and RE# fall together", lambda bad: we_re_low("both", bad), "WE# and RE# falling together")

    # ---- the remaining named state rules, one violation each -------------------------------------
    async def cmd_inside_seq(bad):     # 90h, then 70h before (twin: after) READ ID's address cycle
        await h.command(0x90)
        if not bad:
            await h.address(0x00)
        await h.command(0x70)
        assert (await h.data_out(1))[0] == STATUS_WP | STATUS_RDY | 0x20
        await h.deselect()
    await pair("command inside an open sequence", cmd_inside_seq, "command 70h inside the 90h sequence")

    async def change_col_alone():
        await raw_latch(dut, 1, 0, 0x05)
    await expect("05h without a page read", change_col_alone, r"CHANGE READ COLUMN \(05h\) without a page read", 1)

    async def confirm_10h_alone():
        await raw_latch(dut, 1, 0, 0x10)
    await expect("10h without 80h", confirm_10h_alone, "10h without 80h and 5 address cycles", 1)

    async def confirm_d0h_alone():
        await raw_latch(dut, 1, 0, 0xD0)
    await expect("D0h without 60h", confirm_d0h_alone, "D0h without 60h and 3 address cycles", 1)

    async def output_before_reset(bad):   # power cycle, RE# (twin: 70h first, legal before RESET)
        dut.power_ok.value = 0
        await Timer(200, unit="ns")
        dut.power_ok.value = 1
        await Timer(200, unit="ns")
        if not bad:
            await pin_latch(dut, 1, 0, 0x70, lo, hi)
        await raw_re(not bad, None if bad else STATUS_WP | STATUS_RDY | 0x20)
    await pair("data output after power-on without RESET", output_before_reset, "data output before RESET after power-on")


# ---- default reporting: a violation ends the run -----------------------------------------------
@cocotb.test()
async def loud(dut):
    """Default VIOL_ERROR (no ATS_NAND_VIOL): the first violation ends the simulation, so this test
    must FAIL; pytest expects the failure and checks that the marker never says "still running"."""
    tb = TB(dut, idle_p=0.0)
    mark = Path(os.environ["ATS_NAND_LOUD_MARK"])
    await tb.power_on()
    assert await tb.host.read_status() & STATUS_RDY
    await Timer(1, unit="us")                # tRHW and every other minimum long past
    mark.write_text("violating\n")
    dut.ce_n.value = 0
    await Timer(100, unit="ns")
    await raw_latch(dut, 1, 0, 0x42)         # unsupported command
    await Timer(2, unit="us")
    mark.write_text("violating\nstill running\n")


# ---- array times of the presets, measured on R/B# ----------------------------------------------
@cocotb.test()
async def array_times(dut):
    """tBERS / tPROG / tR (page read and parameter page) on R/B# against atstb.nand_model.PRESETS
    (preset and divider from the pytest entry, not from the die), and the geometry in the parameter
    page against the pytest geometry."""
    name = os.environ["ATS_NAND_PRESET"]
    geom = json.loads(os.environ["ATS_NAND_GEOM"])
    div = geom.get("ARRAY_TIME_DIV", 1)
    want = {k: PRESETS[name][k] // div for k in ("T_R_NS", "T_PROG_NS", "T_BERS_NS")}
    tb = TB(dut, idle_p=0.0)
    h = tb.host
    await tb.power_on()
    ppb = geom["PAGES_PER_BLOCK"]

    async def busy_ns(start):
        """Start an operation; R/B# must be low right after the confirm and rise after the array
        time, at the first clk edge after it (resolution: one clk period)."""
        await start
        t0 = h.last_we_rise
        await Timer(1, unit="ps")
        assert int(dut.rb_n.value) == 0, "R/B# not low after the confirm"
        await RisingEdge(dut.rb_n)
        busy = (int(get_sim_time("ps")) - t0) / 1000.0
        await h.wait_ready()
        return busy

    def check(what, key, busy):
        lo, hi = want[key], want[key] + tb.clk_ns
        assert lo <= busy <= hi, f"{name} {what}: R/B# low {busy:.3f} ns, preset {lo} ns (+ clk {tb.clk_ns} ns)"
        dut._log.info("%s %s: R/B# low %.3f ns, preset %s/%d = %d ns", name, what, busy, key, div, lo)

    row = 1 * ppb
    check("tBERS", "T_BERS_NS", await busy_ns(h.erase_start(1, ppb)))
    assert not await h.read_status() & STATUS_FAIL
    data = bytes(tb.rng.getrandbits(8) for _ in range(32))
    check("tPROG", "T_PROG_NS", await busy_ns(h.program_start(row, data)))
    assert not await h.read_status() & STATUS_FAIL
    check("tR", "T_R_NS", await busy_ns(h.read_page_start(row, 0)))
    assert await h.data_out(32) == data
    await h.deselect()

    async def param_start():
        await h.command(0xEC)
        await h.address(0x00)
        h.mark_confirm()
    check("tR (parameter page)", "T_R_NS", await busy_ns(param_start()))
    p = await h.data_out(256)
    await h.deselect()
    le = lambda o, n: int.from_bytes(p[o:o + n], "little")  # noqa: E731
    assert le(254, 2) == onfi_crc16(p[:254]), "parameter page CRC"
    assert (le(80, 4), le(84, 2), le(92, 4), le(96, 4), p[113]) == (
        geom["PAGE_BYTES"], geom["SPARE_BYTES"], ppb, geom["BLOCKS"], int(math.log2(geom["PLANES"]))), \
        f"{name}: parameter page geometry"
    assert tb.viol == 0


# ---- faults (run with ATS_NAND_FAULTS set) ------------------------------------------------------
def fault_rates():
    d = dict(kv.split("=") for kv in os.environ.get("ATS_NAND_FAULTS", "").split(",") if "=" in kv)
    return {k: int(v) for k, v in d.items()}


def within(count, n, p, what, sigmas=5.0):
    mean = n * p
    sd = math.sqrt(max(n * p * (1 - p), 1e-9))
    assert abs(count - mean) <= sigmas * sd + 2, f"{what}: {count} of {n}, expected {mean:.1f} ± {sigmas * sd:.1f}"


@cocotb.test()
async def faults(dut):
    """Factory bad-block marks, program/erase failure status, read bit flips counted against the rate."""
    tb = TB(dut)
    rng = tb.rng
    rates = fault_rates()
    assert rates, "run with ATS_NAND_FAULTS"
    await tb.power_on()
    # factory bad blocks: first spare byte of page 0 != 0xFF (read a few times: flips are rare)
    for b in range(tb.blocks):
        marks = [(await tb.host.read_page(b * tb.ppb, tb.page_bytes, 1))[0] for _ in range(3)]
        if sum(m != 0xFF for m in marks) >= 2:
            tb.model.bad.add(b)
    assert 0 not in tb.model.bad, "block 0 must be good"
    within(len(tb.model.bad), tb.blocks - 1, rates["bad_ppm"] / 1e6, "factory bad blocks")
    for b in sorted(tb.model.bad)[:2]:
        st = await tb.host.erase_block(b, tb.ppb)
        assert st & STATUS_FAIL, "erasing a bad block must fail"
        assert (await tb.host.read_page(b * tb.ppb, tb.page_bytes, 1))[0] != 0xFF, "erase removed the bad-block mark"
        st = await tb.host.program_page(b * tb.ppb + 1, b"\x00" * 4)
        assert st & STATUS_FAIL, "programming a bad block must fail"
    good = [b for b in range(tb.blocks) if b not in tb.model.bad]
    # program and erase failures: FAIL counted against the rates
    n_prog = n_pfail = n_erase = n_efail = 0
    data_len = 32
    rounds = 3 if tb.row_bytes < 1000 else 2
    for _ in range(rounds):
        for b in good:
            st = await tb.erase(b)
            n_erase += 1
            n_efail += bool(st & STATUS_FAIL)
            if st & STATUS_FAIL:
                continue
            for p in range(min(tb.ppb, 8)):
                st = await tb.program(b * tb.ppb + p, tb.rand_data(data_len))
                n_prog += 1
                n_pfail += bool(st & STATUS_FAIL)
    within(n_pfail, n_prog, rates["pfail_ppm"] / 1e6, "program failures")
    within(n_efail, n_erase, rates["efail_ppm"] / 1e6, "erase failures")
    # bit flips: read known pages (fully) and count differing bits against the model
    known = [r for r in sorted(tb.model.pages) if tb.model.known(r)]
    bits = flips = 0
    reads = 16 if tb.row_bytes < 1000 else 3
    for _ in range(reads):
        r = rng.choice(known)
        exp = tb.model.expected(r)
        got = await tb.host.read_page(r, 0, tb.row_bytes)
        flips += sum(bin(x ^ y).count("1") for x, y in zip(got, exp))
        bits += 8 * tb.row_bytes
    within(flips, bits, rates["flip_ppb"] / 1e9, "read bit flips")
    assert tb.viol == 0
    dut._log.info("faults: %d bad blocks of %d; %d/%d program fail; %d/%d erase fail; %d flips in %d bits",
                  len(tb.model.bad), tb.blocks, n_pfail, n_prog, n_efail, n_erase, flips, bits)


# ---- image save / reload (two simulations sharing ATS_NAND_IMAGE_0) ----------------------------
@cocotb.test()
async def image_write(dut):
    """Fill some pages, tear one, then cut power (the die saves its image); hand the model over."""
    tb = TB(dut)
    rng = tb.rng
    await tb.power_on()
    data_len = tb.row_bytes if tb.row_bytes < 1000 else 40
    for b in rng.sample(range(tb.blocks), min(4, tb.blocks)):
        await tb.erase(b)
        for p in range(rng.randint(1, 4)):
            await tb.program(b * tb.ppb + p, tb.rand_data(data_len))
    # one page torn by the power cut
    b = rng.choice([b for b in range(tb.blocks) if tb.model.next_page[b] < tb.ppb])
    if tb.model.next_page[b] == 0 and b * tb.ppb not in tb.model.pages:
        await tb.erase(b)
    row = b * tb.ppb + tb.model.next_page[b]
    await tb.host.program_start(row, tb.rand_data(data_len))
    await Timer(tb.t_prog // 2, unit="ns")
    assert int(dut.rb_n.value) == 0
    await tb.power_cut()
    tb.model.tear_page(row)
    # reset + load: power-on reloads the image the power cut wrote
    await tb.power_on()
    for r in sorted(tb.model.pages):
        await tb.check_row(r, 0, data_len, what="after reload")
    Path(os.environ["ATS_NAND_MODEL_JSON"]).write_text(tb.model.to_json())
    assert tb.viol == 0


@cocotb.test()
async def image_read(dut):
    """A second simulation opens the image: every page of the handed-over model reads back."""
    tb = TB(dut)
    tb.model.load_json(Path(os.environ["ATS_NAND_MODEL_JSON"]).read_text())
    await tb.power_on()
    data_len = tb.row_bytes if tb.row_bytes < 1000 else 40
    assert tb.model.pages, "no pages handed over"
    for r in sorted(tb.model.pages):
        await tb.check_row(r, 0, data_len, what="second instance")
    torn = sorted(tb.model.unknown)
    assert torn
    got = await tb.host.read_page(torn[0], 0, 16)
    assert got != b"\xff" * 16, "the torn page came back erased"
    # a never-programmed page of a written block reads erased
    b = next(iter(tb.model.pages)) // tb.ppb
    free = [b * tb.ppb + p for p in range(tb.ppb) if tb.model.is_erased(b * tb.ppb + p)]
    if free:
        assert await tb.check_row(free[-1], 0, 16) == b"\xff" * 16
    assert tb.viol == 0


# ---- pytest entry: one build per geometry, several simulations per build -----------------------
GEOMETRIES = {
    # small die, FEMU array times / 100, ONFI mode-0 interface
    "small_femu": dict(PLANES=2, BLOCKS=16, PAGES_PER_BLOCK=8, PAGE_BYTES=512, SPARE_BYTES=16,
                       ARRAY_TIME_DIV=100, **PRESETS["femu"], **MODE0),
    # DiffTx geometry (4 KiB + 224, 64 pages/block), DiffTx array times / 100, fast SDR interface
    "difftx_fast": dict(PLANES=4, BLOCKS=8, SPARE_BYTES=224, ARRAY_TIME_DIV=100, **PRESETS["difftx"], **FAST),
}
GEOM_PRESET = {"small_femu": "femu", "difftx_fast": "difftx"}
# the other presets at full array times (ARRAY_TIME_DIV = 1, as benchmarks use them); geometry is
# the tests' choice (the brief gives none for them), different from the others so the parameter
# page is checked on more values
PRESET_GEOMETRIES = {
    "nvmevirt": dict(PLANES=1, BLOCKS=32, PAGES_PER_BLOCK=16, PAGE_BYTES=2048, SPARE_BYTES=64,
                     ARRAY_TIME_DIV=1, **PRESETS["nvmevirt"], **MODE0),
    "mqsim": dict(PLANES=2, BLOCKS=12, PAGES_PER_BLOCK=32, PAGE_BYTES=8192, SPARE_BYTES=448,
                  ARRAY_TIME_DIV=1, **PRESETS["mqsim"], **FAST),
}
FAULTS = "bad_ppm=150000,pfail_ppm=40000,efail_ppm=60000,flip_ppb=1000000"
NAND = ROOT / "sim" / "nand"


def die_build(key, params):
    return dict(toplevel="ats_nand_die", sources=block_sources("ats_nand_die"), test_module="test_ats_nand_die",
                test_dir=Path(__file__).parent, build_key=key, parameters=params,
                build_args=[str(NAND / "ats_nand_store.cpp"), "-CFLAGS", f"-I{NAND}"],
                public={})   # the tests read only the top's signals and parameters


def geom_env(preset, params):
    return {"ATS_NAND_PRESET": preset, "ATS_NAND_GEOM": json.dumps(params)}


@pytest.mark.parametrize("geom", list(GEOMETRIES))
def test_ats_nand_die(geom, tmp_path):
    common = die_build(geom, GEOMETRIES[geom])
    seed = int(os.environ.get("ATS_SEED", "1"))
    # default reporting (stop at the first violation): legal traffic must not trip it
    run(**common, testcase=["identify", "random_traffic", "power_cut", "array_times"],
        extra_env=geom_env(GEOM_PRESET[geom], GEOMETRIES[geom]))
    # misuse on purpose: count and go on
    run(**common, testcase="illegal", extra_env={"ATS_NAND_VIOL": "count"})
    # default reporting is loud: the violation ends the run, the cocotb test fails
    mark = tmp_path / "loud.txt"
    with pytest.raises((SystemExit, RuntimeError)):      # cocotb_tools: failed test / simulator exit 1
        run(**common, testcase="loud", extra_env={"ATS_NAND_LOUD_MARK": str(mark)})
    assert mark.read_text() == "violating\n", "the simulation went on after a violation"
    xml = (ROOT / "build" / "sim" / "ats_nand_die" / geom / "results_test_ats_nand_die.xml").read_text()
    assert 'name="loud"' in xml and "SimFailure" in xml, "loud: not the expected simulator shutdown"
    run(**common, testcase="faults", extra_env={"ATS_NAND_FAULTS": f"{FAULTS},seed={seed}"})
    env = {"ATS_NAND_IMAGE_0": str(tmp_path / "die0.img"), "ATS_NAND_MODEL_JSON": str(tmp_path / "model.json")}
    run(**common, testcase="image_write", extra_env=env)
    assert (tmp_path / "die0.img").stat().st_size > 0
    run(**common, testcase="image_read", extra_env=env)


@pytest.mark.parametrize("preset", list(PRESET_GEOMETRIES))
def test_ats_nand_die_preset(preset):
    params = PRESET_GEOMETRIES[preset]
    run(**die_build(f"preset_{preset}", params), testcase=["identify", "array_times"],
        extra_env=geom_env(preset, params))
