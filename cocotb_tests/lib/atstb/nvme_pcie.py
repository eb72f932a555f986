# SPDX-License-Identifier: Apache-2.0
"""The host side of the NVMe front end's tests: cocotbext-pcie's root complex and UltraScale+ hard
IP model on a DUT with the UltraScale+ user interface (s_axis_cq, m_axis_cc, m_axis_rq, s_axis_rc,
cfg_*, MSI), and the project's NVMe driver (sw/host/atomssd/nvme.py) on top through `RcTransport`.

docs/host-interface.md §1.9: the root complex enumerates the function (VID / DID / class of §1.1,
BAR0 16 KiB 64-bit), enables bus mastering and 32 MSI vectors; the driver's queues and buffers are
in a region of the root complex's memory. Random idle and backpressure on the four AXI streams.
"""
from __future__ import annotations

import logging
import random
import sys
from pathlib import Path
from typing import Callable

from cocotb.triggers import ClockCycles, FallingEdge, Timer
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice

from .streams import pause_gen

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sw" / "host"))
from atomssd import nvme  # noqa: E402
from atomssd.nvme import NvmeDriver, run_async  # noqa: E402

VID, DID, CLASS = 0x1D1D, 0xA705, 0x010802


class RcTransport:
    """The driver's transport over the root complex (BAR0 TLPs, host memory of the root complex).
    `on_mmio_write(off, value)`: called before each 32-bit register write (tests watch doorbells)."""

    def __init__(self, host: "PcieNvmeHost"):
        self.host = host
        self.next = 0
        self.irqs: set[int] = set()
        self.on_mmio_write: Callable[[int, int], None] | None = None

    async def mmio_read32(self, off):
        return await self.host.bar.read_dword(off, timeout=200000)

    async def mmio_write32(self, off, v):
        if self.on_mmio_write is not None:
            self.on_mmio_write(off, v)
        await self.host.bar.write_dword(off, v)

    async def mmio_write64(self, off, v):
        await self.host.bar.write_qword(off, v)

    def mem_alloc(self, size, align):
        self.next = -(-self.next // align) * align
        a, self.next = self.next, self.next + size
        assert self.next <= self.host.mem_size, "host memory exhausted"
        return self.host.mem_base + a

    def mem_write(self, addr, data):
        o = addr - self.host.mem_base
        self.host.mem[o:o + len(data)] = data

    def mem_read(self, addr, n):
        o = addr - self.host.mem_base
        return bytes(self.host.mem[o:o + n])

    async def wait(self, cycles):
        await ClockCycles(self.host.dut.clk, max(int(cycles), 1))

    def irq_pending(self, v):
        return v in self.irqs

    def irq_clear(self, v):
        self.irqs.discard(v)


class PcieNvmeHost:
    """Root complex + UltraScale+ device model around `dut`; `start()` enumerates it."""

    def __init__(self, dut, rng: random.Random, mem_size: int = 4 << 20, max_payload_size: int = 1,
                 timeout_cycles: int = 400_000, poll_cycles: int = 40):
        self.dut = dut
        self.rng = rng
        self.rc = RootComplex()
        self.rc.max_payload_size = max_payload_size
        self.dev = UltraScalePlusPcieDevice(
            pcie_generation=3, pcie_link_width=4, user_clk_frequency=125e6, alignment="dword",
            pf_count=1, max_payload_size=512, enable_client_tag=True, pf0_msi_enable=True, pf0_msi_count=32,
            user_clk=dut.clk, user_reset=dut.rst,
            cq_bus=AxiStreamBus.from_prefix(dut, "s_axis_cq"), cc_bus=AxiStreamBus.from_prefix(dut, "m_axis_cc"),
            rq_bus=AxiStreamBus.from_prefix(dut, "m_axis_rq"), rc_bus=AxiStreamBus.from_prefix(dut, "s_axis_rc"),
            cfg_max_payload=dut.cfg_max_payload, cfg_max_read_req=dut.cfg_max_read_req,
            cfg_function_status=dut.cfg_function_status,
            cfg_interrupt_msi_enable=dut.cfg_interrupt_msi_enable,
            cfg_interrupt_msi_mmenable=dut.cfg_interrupt_msi_mmenable,
            cfg_interrupt_msi_int=dut.cfg_interrupt_msi_int,
            cfg_interrupt_msi_sent=dut.cfg_interrupt_msi_sent,
            cfg_interrupt_msi_fail=dut.cfg_interrupt_msi_fail)
        f = self.dev.functions[0]
        f.vendor_id, f.device_id, f.class_code = VID, DID, CLASS
        f.configure_bar(0, 16 * 1024, ext=True, prefetch=False)
        self.rc.make_port().connect(self.dev)
        for lg in (self.rc.log, self.dev.log):
            lg.setLevel(logging.WARNING)
        self.mem_size = mem_size
        self.mem = self.rc.mem_pool.alloc_region(self.mem_size)
        self.mem_base = self.mem.get_absolute_address(0)
        for s in (self.dev.cq_source, self.dev.rc_source):
            s.set_pause_generator(pause_gen(rng, True, 0.2))
        for s in (self.dev.cc_sink, self.dev.rq_sink):
            s.set_pause_generator(pause_gen(rng, "heavy", max_stall=12))
        self.tr = RcTransport(self)
        self.drv = NvmeDriver(timeout_cycles=timeout_cycles, poll_cycles=poll_cycles)
        self.msis: list[int] = []

    async def start(self):
        await FallingEdge(self.dut.rst)
        await Timer(100, "ns")
        await self.rc.enumerate()
        self.d = self.rc.find_device(self.dev.functions[0].pcie_id)
        await self.d.enable_device()
        await self.d.set_master()
        n = await self.d.alloc_irq_vectors(32, 32)
        assert n == 32, f"{n} MSI vectors"
        for v in range(32):
            async def on_msi(v=v):
                self.tr.irqs.add(v)
                self.msis.append(v)
            self.d.request_irq(v, on_msi)
        self.bar = self.d.bar_window[0]

    async def do(self, gen):
        """Runs a driver generator over the root complex."""
        return await run_async(gen, self.tr)

    async def csts(self) -> int:
        return await self.tr.mmio_read32(nvme.REG_CSTS)
