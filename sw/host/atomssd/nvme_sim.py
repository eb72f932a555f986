# SPDX-License-Identifier: Apache-2.0
"""The NVMe driver (nvme.py) on the full-system simulation with the NVMe front end
(`python sim/soc/build.py --nvme`: the harness is the PCIe root port, docs/host-port.md "NVMe
build"). `SimTransport` is the driver's Transport over a HostPort: BAR0 accesses are MMIO messages,
host memory is the simulator's (a bump allocator from 64 KiB up), waiting runs the simulation,
interrupts are the MSI messages. `open_device` boots the SoC (firmware ready) and brings the NVMe
controller up.

With `stop_at_msi` a wait ends at the first MSI (a CQE was posted) instead of running all of its
cycles: a host that polls its CQs after every wait then reads each completion as soon as it is
there, however long the poll interval (host attach: one RUN message per completion instead of one
per 200 cycles). `wait` returns the cycles it ran (the driver counts its timeouts with them)."""
from __future__ import annotations

from .hostport import R_CUT, U_HOST_EN, U_MSI, HostPort, SimError
from .nvme import NvmeDriver, run_sync


class SimTransport:
    """nvme.Transport over a HostPort of the NVMe build."""

    def __init__(self, hp: HostPort, base: int = 0x10000, stop_at_msi: bool = False):
        self.hp = hp
        self.stop_at_msi = stop_at_msi
        self.next = base
        self.limit = int(hp.hello.get("host_mem_bytes", 16 << 20))
        self._irqs: set[int] = set()

    def mmio_read32(self, off: int) -> int:
        return self.hp.mmio_read32(off)

    def mmio_write32(self, off: int, value: int) -> None:
        self.hp.mmio_write32(off, value)

    def mmio_write64(self, off: int, value: int) -> None:
        self.hp.mmio_write32(off, value & 0xFFFFFFFF)
        self.hp.mmio_write32(off + 4, value >> 32)

    def mem_alloc(self, size: int, align: int) -> int:
        a = -(-self.next // align) * align
        if a + size > self.limit:
            raise SimError(f"simulated host memory exhausted ({self.limit} bytes)")
        self.next = a + size
        return a

    def mem_write(self, addr: int, data: bytes) -> None:
        self.hp.mem_write(addr, bytes(data))

    def mem_read(self, addr: int, n: int) -> bytes:
        return self.hp.mem_read(addr, n)

    def wait(self, cycles: int) -> int:
        c0 = self.hp.cycle
        why = self.hp.run(max(int(cycles), 1), U_MSI if self.stop_at_msi else 0)
        if why & R_CUT:
            raise SimError("power was cut")
        return self.hp.cycle - c0

    def _collect(self) -> None:
        """The MSI messages received so far become pending vectors (and are consumed)."""
        for v, _ in self.hp.msis:
            self._irqs.add(v)
        self.hp.msis.clear()

    def irq_pending(self, vector: int) -> bool:
        self._collect()
        return vector in self._irqs

    def irq_clear(self, vector: int) -> None:
        self._irqs.discard(vector)


def boot(hp: HostPort, max_cycles: int = 200_000_000) -> int:
    """Runs until the firmware accepts host commands (boot or recovery done); returns the cycle."""
    why = hp.run(max_cycles, U_HOST_EN)
    if not why & U_HOST_EN:
        raise SimError(f"the device did not become ready (STOPPED {why:#x}); UART:\n{hp.uart_text()[-2000:]}")
    return hp.cycle


def open_device(hp: HostPort, io_queues: int = 2, qsize: int = 64, poll_cycles: int = 200,
                timeout_cycles: int = 50_000_000, stop_at_msi: bool = False) -> tuple[SimTransport, NvmeDriver]:
    """Boot, then the NVMe bring-up (enable, Identify, Number of Queues, I/O queue pairs)."""
    boot(hp)
    tr = SimTransport(hp, stop_at_msi=stop_at_msi)
    drv = NvmeDriver(timeout_cycles=timeout_cycles, poll_cycles=poll_cycles)
    run_sync(drv.bring_up(io_queues=io_queues, qsize=qsize), tr)
    return tr, drv


__all__ = ["SimTransport", "boot", "open_device"]
