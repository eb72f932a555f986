# SPDX-License-Identifier: Apache-2.0
"""The host side of the NVMe front end's tests: cocotbext-pcie's root complex and UltraScale+ hard
IP model on a DUT with the UltraScale+ user interface (s_axis_cq, m_axis_cc, m_axis_rq, s_axis_rc,
cfg_*, MSI), and the project's NVMe driver (sw/host/atomssd/nvme.py) on top through `RcTransport`.

docs/host-interface.md §1.9: the root complex enumerates the function (VID / DID / class of §1.1,
BAR0 16 KiB 64-bit), enables bus mastering and 32 MSI vectors; the driver's queues and buffers are
in a region of the root complex's memory. Random idle and backpressure on the four AXI streams.
"""
from __future__ import annotations

import importlib.metadata
import logging
import os
import random
import sys
from pathlib import Path
from typing import Callable

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice
from cocotbext.pcie.xilinx.us.interface import UsPcieSink, UsPcieSource

from .streams import CycleWait, every_edge, pause_gen, stream_reader

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sw" / "host"))
from atomssd import nvme  # noqa: E402
from atomssd.nvme import NvmeDriver, run_async  # noqa: E402

VID, DID, CLASS = 0x1D1D, 0xA705, 0x010802


def _axi_readers(end) -> tuple:
    """tready, tvalid and reset readers of a cocotbext-pcie AXI end (reset's None without one)."""
    rd_rst = stream_reader(end.reset) if end.reset is not None else None
    return stream_reader(end.bus.tready), stream_reader(end.bus.tvalid), rd_rst


async def _us_run_source(self):
    """cocotbext-pcie's UsPcieSource._run_source (0.2.16, xilinx/us/interface.py) with the same handshake at the
    same edges, cheaper: tready / tvalid / reset read with the handle's integer get (streams.stream_reader)
    and tvalid written only when it changes (the value read at the edge is the one last written;
    writing it again changed nothing). Installed on the class below (the sources are made inside
    the device model); every NVMe test runs in its own process."""
    self.active = False
    clock_edge_event = RisingEdge(self.clock)
    rd_ready, rd_valid, rd_rst = _axi_readers(self)
    tvalid = self.bus.tvalid
    while True:
        await clock_edge_event
        tready_sample = rd_ready()
        tvalid_sample = rd_valid()
        if rd_rst is not None and rd_rst():
            if tvalid_sample:
                tvalid.value = 0
            continue
        if (tready_sample and tvalid_sample) or not tvalid_sample:
            if self.drive_obj and not self.pause:
                self.bus.drive(self.drive_obj)
                self.drive_obj = None
                self.drive_sync.set()
                if not tvalid_sample:
                    tvalid.value = 1
                self.active = True
            else:
                if tvalid_sample:
                    tvalid.value = 0
                self.active = bool(self.drive_obj)
                if not self.drive_obj:
                    self.idle_event.set()
                    self.bus_active_event.clear()
                    await self.bus_active_event.wait()


async def _us_run_sink(self):
    """cocotbext-pcie's UsPcieSink._run_sink, the same way cheaper as _us_run_source: tready
    written only when it changes."""
    clock_edge_event = RisingEdge(self.clock)
    wake_event = self.wake_event.wait()
    rd_ready, rd_valid, rd_rst = _axi_readers(self)
    tready = self.bus.tready
    while True:
        pause_sample = bool(self.pause)
        await clock_edge_event
        tready_sample = rd_ready()
        tvalid_sample = rd_valid()
        if rd_rst is not None and rd_rst():
            if tready_sample:
                tready.value = 0
            continue
        if tready_sample and tvalid_sample:
            self.sample_obj = self._transaction_obj()
            self.bus.sample(self.sample_obj)
            self.sample_sync.set()
        paused = self.full() or pause_sample
        if tready_sample != (not paused):
            tready.value = not paused
        if (not tvalid_sample or paused) and (pause_sample == bool(self.pause)):
            self.wake_event.clear()
            await wake_event


# written against cocotbext-pcie 0.2.16 (tools/constraints.txt): another version must be compared first
assert importlib.metadata.version("cocotbext-pcie") == "0.2.16", \
    f"cocotbext-pcie {importlib.metadata.version('cocotbext-pcie')}: check _us_run_source / _us_run_sink"
UsPcieSource._run_source = _us_run_source
UsPcieSink._run_sink = _us_run_sink


class _UspDevice(UltraScalePlusPcieDevice):
    """The UltraScale+ model with its five per-cycle coroutines run as functions of the clock's
    stream ticker instead (`PcieNvmeHost._cfg_edge`, `_cq_edge`): five task resumes a cycle less.
    - configuration status (cfg_max_payload, cfg_max_read_req, cfg_function_status) and interrupts
      (MSI enable / mmenable / int / sent / fail): the same writes at the same edges, a value written
      only when it changes;
    - the completer-request logic (`_run_cq_logic`: the non-posted credit count, TLPs to the CQ
      stream): the same steps at the same edges, the coroutine's wait on a full CQ source kept
      (`_cq_edge`);
    - the RQ sequence-number logic (`_run_rq_seq_num_logic`): with pcie_rq_seq_num0 unconnected and
      an interface narrower than 512 bits it only drops one queued number an edge; so does `_cfg_edge`;
    - the configuration control logic (`_run_cfg_ctrl_logic`): with sys_reset, cfg_config_space_enable
      and cfg_bus_number unconnected it only sets config_space_enable, which the model's constructor
      already set (True): nothing to run.
    Only the ports PcieNvmeHost connects are modelled; the others must stay unconnected (asserted
    there)."""

    async def _run_cfg_status_logic(self):
        return

    async def _run_cfg_int_logic(self):
        return

    async def _run_cq_logic(self):
        return

    async def _run_rq_seq_num_logic(self):
        return

    async def _run_cfg_ctrl_logic(self):
        return


_NP_REQ = (TlpType.IO_READ, TlpType.IO_WRITE, TlpType.MEM_READ, TlpType.MEM_READ_64)


def _cq_steps(dev):
    """The body of usp_model.py's _run_cq_logic after its credit update (0.2.16), yielding each CQ
    frame where the coroutine awaits cq_source.send: lazily, so every test is made after the
    previous send, as there."""
    while not dev.cq_np_queue.empty() and dev.cq_np_req_count > 0:
        tlp = dev.cq_np_queue.get_nowait()
        dev.cq_np_req_count -= 1
        yield tlp.pack_us_cq()
    while not dev.cq_queue.empty():
        tlp = dev.cq_queue.get_nowait()
        if tlp.fmt_type in _NP_REQ:
            if dev.cq_np_req_count > 0:              # a credit: forward
                dev.cq_np_req_count -= 1
                yield tlp.pack_us_cq()
            else:                                    # none: queue it
                dev.cq_np_queue.put_nowait(tlp)
        else:
            yield tlp.pack_us_cq()


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
        await self.host.cycles(cycles)

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
        self.dev = _UspDevice(
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
        # the model's INFO lines (one per TLP and AXI frame, each frame's dwords formatted: 13,000
        # lines a run of the ats_nvme test) only with ATS_PCIE_LOG=1
        if os.environ.get("ATS_PCIE_LOG", "0") in ("", "0"):
            for lg in (self.rc.log, self.dev.log, self.dev.cq_source.log, self.dev.rc_source.log,
                       self.dev.cc_sink.log, self.dev.rq_sink.log):
                lg.setLevel(logging.WARNING)
        self.mem_size = mem_size
        self.mem = self.rc.mem_pool.alloc_region(self.mem_size)
        self.mem_base = self.mem.get_absolute_address(0)
        for n in ("sys_reset", "cfg_phy_link_down", "user_lnk_up", "cfg_negotiated_width", "cfg_current_speed",
                  "cfg_local_error_out", "cfg_rcb_status", "cfg_interrupt_msi_function_number",
                  "cfg_interrupt_msi_attr", "cfg_interrupt_msi_select", "cfg_interrupt_msi_data",
                  "cfg_interrupt_msi_pending_status_data_enable", "cfg_interrupt_msix_int",
                  "cfg_interrupt_msix_enable", "cfg_interrupt_msix_mask", "cfg_interrupt_msix_sent"):
            assert getattr(self.dev, n, None) is None, f"{n}: not modelled by _cfg_edge"
        for n in ("pcie_cq_np_req", "pcie_cq_np_req_count", "pcie_rq_seq_num0", "pcie_rq_seq_num1",
                  "cfg_config_space_enable", "cfg_bus_number"):
            assert getattr(self.dev, n, None) is None, f"{n}: not modelled by _cq_edge / _cfg_edge"
        assert self.dev.dw != 512, "_UspDevice: a 512-bit interface (a second sequence number an edge)"
        assert self.dev.config_space_enable, "_UspDevice: configuration space disabled at the start"
        # random idle / backpressure on the four AXI streams: each one's pause generator is advanced at
        # each edge by `_cfg_edge` (as the model's own per-stream coroutine would, without four task
        # resumes a cycle); `clear_pause_generator()` still turns a stream's pauses off (the bench's
        # ideal host), `set_pause_generator()` must not be used on these four
        self.pauses = [self.dev.cq_source, self.dev.rc_source, self.dev.cc_sink, self.dev.rq_sink]
        for s in self.pauses[:2]:
            s._pause_generator = pause_gen(rng, True, 0.2)
        for s in self.pauses[2:]:
            s._pause_generator = pause_gen(rng, "heavy", max_stall=12)
        self._put_last: dict = {}
        self._msi_busy = False
        self._f0 = self.dev.functions[0]
        self._st_last = None                 # the status outputs' values last written (_cfg_edge)
        # sent / fail to write 0 at the next edge the interrupt logic runs (at the first edge too:
        # _put writes a value the first time it sees the handle)
        self._msi_out = True
        self._rd_msi_int = stream_reader(dut.cfg_interrupt_msi_int)
        self._cq_blocked = False             # _cq_edge: a CQ frame waits for room in the CQ source
        self.cq_fallbacks = 0                # ... times it did (the task `_cq_wait` took over): coverage
        self._cq_resumed = None              # ... the time it got it (that edge is the coroutine's no more)
        every_edge(dut.clk, self._cq_edge)
        every_edge(dut.clk, self._cfg_edge)
        self.cycles = CycleWait(dut.clk, round(1e12 / 125e6))
        self.tr = RcTransport(self)
        self.drv = NvmeDriver(timeout_cycles=timeout_cycles, poll_cycles=poll_cycles)
        self.msis: list[int] = []

    def _put(self, h, v: int) -> None:
        if self._put_last.get(h) != v:
            h.value = v
            self._put_last[h] = v

    def _cq_edge(self) -> None:
        """One rising edge of the model's completer-request logic (usp_model.py _run_cq_logic): the
        non-posted credit count (pcie_cq_np_req unconnected: +1, saturating at 32), then the queued
        TLPs to the CQ source. Where the coroutine would wait in cq_source.send (the source full: 2
        frames queued), a task takes over the rest of that edge's steps (`_cq_wait`); while it waits,
        and at the edge of the time it ends, the coroutine would not be at its edge, so neither is this."""
        if self._cq_blocked:
            return
        if self._cq_resumed is not None:
            if self._cq_resumed == get_sim_time("step"):
                return
            self._cq_resumed = None
        dev = self.dev
        dev.cq_np_req_count = min(dev.cq_np_req_count + 1, 32)
        if dev.cq_queue.empty() and (dev.cq_np_queue.empty() or not dev.cq_np_req_count):
            return
        src = dev.cq_source
        steps = _cq_steps(dev)
        for frame in steps:
            if src.full():
                self._cq_blocked = True
                self.cq_fallbacks += 1
                cocotb.start_soon(self._cq_wait(frame, steps))
                return
            src.send_nowait(frame)

    async def _cq_wait(self, frame, steps) -> None:
        src = self.dev.cq_source
        await src.send(frame)
        for frame in steps:
            await src.send(frame)
        self._cq_blocked = False
        self._cq_resumed = get_sim_time("step")

    def _cfg_edge(self) -> None:
        """One rising edge of the model's cfg status and interrupt logic (usp_model.py
        _run_cfg_status_logic / _run_cfg_int_logic for one function), then the pause generators.
        Each output is written only when its value changes (`_put`); the status values are compared
        as one tuple first (they change only on configuration writes), and the MSI request is read
        with the handle's integer get (`stream_reader`)."""
        dev = self.dev
        f = self._f0
        pc = f.pcie_cap
        st = (pc.max_payload_size & 3, pc.max_read_request_size,
              (0x07 if f.bus_master_enable else 0) | (0x08 if f.interrupt_disable else 0))
        if st != self._st_last:
            self._st_last = st
            self._put(dev.cfg_max_payload, st[0])
            self._put(dev.cfg_max_read_req, st[1])
            self._put(dev.cfg_function_status, st[2])
        if not self._msi_busy:              # the model's interrupt coroutine waits in issue_msi_interrupt
            msi_int = self._rd_msi_int()
            self._put(dev.cfg_interrupt_msi_enable, int(bool(f.msi_cap.msi_enable)))
            if self._msi_out:               # sent (and fail) back to 0 after an MSI
                self._msi_out = False
                self._put(dev.cfg_interrupt_msi_sent, 0)
                self._put(dev.cfg_interrupt_msi_fail, 0)
            if msi_int and not msi_int & (msi_int - 1):
                self._msi_busy = True
                cocotb.start_soon(self._issue_msi(msi_int.bit_length() - 1))
            else:
                self._put(dev.cfg_interrupt_msi_mmenable, f.msi_cap.msi_multiple_message_enable & 0x7)
        for s in self.pauses:
            if s._pause_generator is not None:
                s.pause = next(s._pause_generator)
        if not dev.rq_seq_num.empty():     # _run_rq_seq_num_logic: nothing connected takes them
            dev.rq_seq_num.get_nowait()

    async def _issue_msi(self, v: int) -> None:
        f = self.dev.functions[0]
        await f.msi_cap.issue_msi_interrupt(v)
        self._put(self.dev.cfg_interrupt_msi_sent, 1)
        self._msi_out = True
        self._put(self.dev.cfg_interrupt_msi_mmenable, f.msi_cap.msi_multiple_message_enable & 0x7)
        self._msi_busy = False

    async def start(self):
        await FallingEdge(self.dut.rst)
        cocotb.start_soon(self.cycles.sync())          # the clock's phase, at the next edge (no delay here)
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
