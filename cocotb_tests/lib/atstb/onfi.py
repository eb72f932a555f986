"""ONFI 1.0 SDR host driver for cocotb: drives the pins of docs/nand-pins.md from Python.

Every cycle respects the minimum timings given (the die's parameters, in ps); with an `rng`, random
extra idle time is inserted between cycles and before operations, so the die sees a variety of
legal waveforms. Waveform of one latch cycle (command, address or data):

    CE#  ‾‾\\______________________________ ... (low for the whole operation, tCS before 1st rise)
    CLE/ALE/DQ ==X=========================X==  (change at WE# falling, stable tsetup before rise)
    WE#  ‾‾‾‾‾\\________________/‾‾‾‾‾‾‾‾‾‾‾‾\\__
              |<- max(tWP,tCLS,tDS) ->|<- max(tWH,tCLH,tDH) + idle ->|

A read cycle lowers RE# for tRP, samples `dq_o` (the model drives it from the falling edge) and
raises RE# for tREH; the first read after a latch waits tWHR, the first latch after a read tRHW.
After a confirm command (30h, 10h, D0h, ECh address, FFh) the host waits tWB, then for R/B# high,
then tRR.
"""
from __future__ import annotations

import random

from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

# ONFI 1.0 SDR timing mode 0 minimums (ps): the die's defaults
MODE0 = dict(T_WP_PS=50000, T_WH_PS=30000, T_RP_PS=50000, T_REH_PS=30000, T_CLS_PS=50000,
             T_CLH_PS=20000, T_CS_PS=70000, T_DS_PS=40000, T_DH_PS=20000, T_WB_PS=200000,
             T_RR_PS=40000, T_ADL_PS=200000, T_WHR_PS=120000, T_RHW_PS=200000)
# a fast SDR set (timing-mode-5 class; one byte per 20 ns cycle)
FAST = dict(T_WP_PS=10000, T_WH_PS=7000, T_RP_PS=10000, T_REH_PS=7000, T_CLS_PS=10000,
            T_CLH_PS=5000, T_CS_PS=15000, T_DS_PS=7000, T_DH_PS=5000, T_WB_PS=100000,
            T_RR_PS=20000, T_ADL_PS=70000, T_WHR_PS=60000, T_RHW_PS=100000)


class OnfiHost:
    """Pin-level ONFI host for one die. `timing`: dict of T_*_PS (ps); `rng`: random idle (None: none)."""

    def __init__(self, dut, timing: dict, rng: random.Random | None = None, idle_p: float = 0.2,
                 idle_max_ns: int = 60, ce=None, rb=None):
        self.dut = dut
        self.t = dict(MODE0)
        self.t.update({k: v for k, v in timing.items() if k in MODE0})
        self.rng = rng
        self.idle_p = idle_p
        self.idle_max_ns = idle_max_ns
        self.ce_n = ce if ce is not None else dut.ce_n
        self.rb_n = rb if rb is not None else dut.rb_n
        self.last_we_rise = -10**12
        self.last_re_rise = -10**12
        self.last_addr_rise = -10**12
        self.last_was_read = False
        self.confirm_time = None
        self.ce_low_since = None
        dut.cle.value = 0
        dut.ale.value = 0
        dut.we_n.value = 1
        dut.re_n.value = 1
        dut.wp_n.value = 1
        dut.dq_i.value = 0
        self.ce_n.value = 1

    @staticmethod
    def now() -> int:
        return int(get_sim_time("ps"))

    async def _wait_until(self, t_ps: int) -> None:
        d = t_ps - self.now()
        if d > 0:
            await Timer(d, unit="ps")

    async def idle(self) -> None:
        if self.rng is not None and self.rng.random() < self.idle_p:
            await Timer(self.rng.randint(1, self.idle_max_ns * 1000), unit="ps")

    async def select(self) -> None:
        if self.ce_low_since is None:
            self.ce_n.value = 0
            self.ce_low_since = self.now()
        await self.idle()

    async def deselect(self) -> None:
        # tCH (= tCLH class) after the last WE# rising
        await self._wait_until(self.last_we_rise + self.t["T_CLH_PS"])
        self.ce_n.value = 1
        self.ce_low_since = None
        await self.idle()

    async def _latch(self, cle: int, ale: int, byte: int) -> None:
        t = self.t
        await self.select()
        # WE# falling: tWH after the last rise, tRHW after the last read, tWB after a confirm
        earliest = self.last_we_rise + max(t["T_WH_PS"], t["T_CLH_PS"], t["T_DH_PS"])
        if self.last_was_read:
            earliest = max(earliest, self.last_re_rise + t["T_RHW_PS"])
        if self.confirm_time is not None:
            earliest = max(earliest, self.confirm_time + t["T_WB_PS"])
        if cle == 0 and ale == 0:
            # first data cycle: tADL from the last address rise (fall time + low time >= tADL)
            low = max(t["T_WP_PS"], t["T_CLS_PS"], t["T_DS_PS"])
            earliest = max(earliest, self.last_addr_rise + t["T_ADL_PS"] - low)
        await self._wait_until(earliest)
        await self.idle()
        self.dut.cle.value = cle
        self.dut.ale.value = ale
        self.dut.dq_i.value = byte & 0xFF
        self.dut.we_n.value = 0
        low = max(t["T_WP_PS"], t["T_CLS_PS"], t["T_DS_PS"])
        rise = self.now() + low
        rise = max(rise, self.ce_low_since + t["T_CS_PS"])
        await self._wait_until(rise)
        if self.rng is not None and self.rng.random() < self.idle_p:
            await Timer(self.rng.randint(1, 20000), unit="ps")   # a longer low pulse
        self.dut.we_n.value = 1
        self.last_we_rise = self.now()
        if ale:
            self.last_addr_rise = self.last_we_rise
        self.last_was_read = False
        self.confirm_time = None

    async def command(self, c: int) -> None:
        await self._latch(1, 0, c)

    async def address(self, *bytes_: int) -> None:
        for b in bytes_:
            await self._latch(0, 1, b)

    async def data_in(self, data: bytes) -> None:
        for b in data:
            await self._latch(0, 0, b)

    async def data_out(self, n: int) -> bytes:
        t = self.t
        out = bytearray()
        await self.select()
        for _ in range(n):
            earliest = self.last_re_rise + t["T_REH_PS"]
            if not self.last_was_read:
                earliest = max(earliest, self.last_we_rise + t["T_WHR_PS"])
            earliest = max(earliest, self.last_we_rise + max(t["T_CLH_PS"], t["T_DH_PS"]))
            await self._wait_until(earliest)
            await self.idle()
            self.dut.cle.value = 0
            self.dut.ale.value = 0
            self.dut.re_n.value = 0
            await Timer(t["T_RP_PS"], unit="ps")
            assert int(self.dut.dq_oe.value) == 1, "die does not drive DQ during RE# low"
            out.append(int(self.dut.dq_o.value))
            self.dut.re_n.value = 1
            self.last_re_rise = self.now()
            self.last_was_read = True
        return bytes(out)

    def mark_confirm(self) -> None:
        self.confirm_time = self.last_we_rise

    async def wait_ready(self, timeout_ns: int | None = None) -> None:
        """tWB after the confirm, R/B# high, then tRR."""
        if self.confirm_time is not None:
            await self._wait_until(self.confirm_time + self.t["T_WB_PS"])
        start = self.now()
        while int(self.rb_n.value) == 0:
            await RisingEdge(self.rb_n)
            if timeout_ns is not None and self.now() - start > timeout_ns * 1000:
                raise TimeoutError("R/B# stayed low")
        self.confirm_time = None
        self.last_was_read = False
        # tRR from R/B# rising (we may have seen it rise just now)
        await Timer(self.t["T_RR_PS"], unit="ps")
        await self.idle()

    # ---- operations -------------------------------------------------------------------------
    @staticmethod
    def row_bytes(row: int) -> tuple[int, int, int]:
        return row & 0xFF, (row >> 8) & 0xFF, (row >> 16) & 0xFF

    async def reset(self) -> None:
        await self.command(0xFF)
        self.mark_confirm()
        await self.wait_ready()
        await self.deselect()

    async def read_status(self) -> int:
        await self.command(0x70)
        s = (await self.data_out(1))[0]
        await self.deselect()
        return s

    async def read_id(self, addr: int = 0x00, n: int = 5) -> bytes:
        await self.command(0x90)
        await self.address(addr)
        d = await self.data_out(n)
        await self.deselect()
        return d

    async def read_param_page(self, n: int = 768) -> bytes:
        await self.command(0xEC)
        await self.address(0x00)
        self.mark_confirm()
        await self.wait_ready()
        d = await self.data_out(n)
        await self.deselect()
        return d

    async def read_page_start(self, row: int, col: int = 0) -> None:
        await self.command(0x00)
        await self.address(col & 0xFF, (col >> 8) & 0xFF, *self.row_bytes(row))
        await self.command(0x30)
        self.mark_confirm()

    async def read_page(self, row: int, col: int, n: int, keep: bool = False) -> bytes:
        await self.read_page_start(row, col)
        await self.wait_ready()
        d = await self.data_out(n)
        if not keep:
            await self.deselect()
        return d

    async def change_read_column(self, col: int, n: int) -> bytes:
        await self.command(0x05)
        await self.address(col & 0xFF, (col >> 8) & 0xFF)
        await self.command(0xE0)
        d = await self.data_out(n)
        return d

    async def status_then_resume(self, n: int) -> tuple[int, bytes]:
        """70h in the middle of a page read, then 00h (no address) to resume data output."""
        await self.command(0x70)
        s = (await self.data_out(1))[0]
        await self.command(0x00)
        d = await self.data_out(n)
        return s, d

    async def program_start(self, row: int, data: bytes, col: int = 0) -> None:
        await self.command(0x80)
        await self.address(col & 0xFF, (col >> 8) & 0xFF, *self.row_bytes(row))
        await self.data_in(data)
        await self.command(0x10)
        self.mark_confirm()

    async def program_page(self, row: int, data: bytes, col: int = 0) -> int:
        await self.program_start(row, data, col)
        await self.wait_ready()
        return await self.read_status()

    async def erase_start(self, block: int, pages_per_block: int) -> None:
        await self.command(0x60)
        await self.address(*self.row_bytes(block * pages_per_block))
        await self.command(0xD0)
        self.mark_confirm()

    async def erase_block(self, block: int, pages_per_block: int) -> int:
        await self.erase_start(block, pages_per_block)
        await self.wait_ready()
        return await self.read_status()
