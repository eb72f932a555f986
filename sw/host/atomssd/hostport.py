# SPDX-License-Identifier: Apache-2.0
"""Host-port client (docs/host-port.md): starts the full-system simulation (sim/soc/ats_soc_sim)
on a socket pair, submits descriptors and data, runs the simulation and collects completions and
UART output. Plain, transactional, barrier and flush calls are in `device.py`."""
from __future__ import annotations

import itertools
import json
import os
import socket
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

# one simulator log a process start: a counter, not id(), which a later HostPort can reuse (its
# log would truncate an earlier power-on's)
_LOG_NO = itertools.count()

ROOT = Path(__file__).resolve().parents[3]

# message types
M_SUBMIT, M_MEM_WRITE, M_MEM_READ, M_RUN, M_UART_IN, M_CUT_ARM, M_CUT_NOW, M_PWR_FAIL, M_TRACE, M_INFO, M_QUIT = \
    range(1, 12)
M_MMIO_WRITE, M_MMIO_READ = 0x0C, 0x0D                      # the NVMe build (docs/host-port.md)
M_HELLO, M_CPL, M_UART, M_MEM_DATA, M_STOPPED, M_INFO_R, M_ERROR = 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x8F
M_MMIO_DATA, M_MSI = 0x86, 0x87
# RUN conditions / STOPPED reasons
U_CPL, U_IDLE, U_LINE, U_HOST_EN, U_MMIO, U_MSI = 1, 2, 4, 8, 16, 32
R_MAX, R_CUT = 0x100, 0x200
CUT_NONE, CUT_CYCLE, CUT_ACCEPT, CUT_CPL = 0, 1, 2, 3

# opcodes and status codes (docs/architecture.md sections 1 and 2)
OP = dict(READ=0, WRITE=1, DIFFWRITE=2, TX_BEGIN=3, TX_COMMIT=4, TX_ABORT=5, FLUSH=6, RFLUSH=7, TRIM=8,
          IDENTIFY=9, GET_LOG=10, FEATURE=11)
ST = dict(OK=0x00, BAD_OP=0x01, BAD_TXID=0x02, BAD_LBA=0x03, TX_FULL=0x04, INDEX_FULL=0x05, TX_EMPTY=0x06,
          BAD_FIELD=0x07, TABLE_FULL=0x08, MEDIA_ERROR=0x10, PROGRAM_FAIL=0x11, ABORTED=0x12, NO_SPACE=0x13)
F_FUA, F_BARRIER, F_COMMIT = 1, 2, 4
FEAT_SEAL_TIME = 0xC0        # FEATURE's device settings (section 1.2)
A_SIMPLE, A_ORDERED, A_HEAD = 0, 1, 2


@dataclass
class Completion:
    tag: int
    status: int
    result: int
    cycle: int


class SimError(RuntimeError):
    pass


class HostPort:
    """One simulation process. `images` are the die image files (kept across power cuts: a new
    HostPort on the same files is the restart)."""

    def __init__(self, exe: Path, firmware: Path, images: list[Path], faults: str = "", uart_log: Path | None = None,
                 trace: Path | None = None, extra: list[str] | None = None, cwd: Path | None = None):
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        args = [str(exe), f"+fd={child.fileno()}", f"+firmware={firmware}"]
        args += [f"+ats_nand_image{d}={p}" for d, p in enumerate(images)]
        if uart_log:
            args.append(f"+uart_log={uart_log}")
        if trace:
            args.append(f"+trace={trace}")
        args += extra or []
        env = dict(os.environ)
        env["ATS_NAND_FAULTS"] = faults
        self.stderr_path = (cwd or Path(exe).parent) / f"sim_{os.getpid()}_{next(_LOG_NO)}.log"
        self._err = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(args, pass_fds=(child.fileno(),), env=env, stdout=self._err,
                                     stderr=subprocess.STDOUT, cwd=str(cwd) if cwd else None)
        child.close()
        self.sock = parent
        self.buf = b""
        self.uart = bytearray()
        self.cpls: list[Completion] = []
        self.mmio_data: list[tuple[int, int, int]] = []   # NVMe build: (offset, value, status) of MMIO reads
        self.msis: list[tuple[int, int]] = []             # NVMe build: (vector, cycle)
        self.errors: list[str] = []
        self.cycle = 0
        self.cut = False
        self.submitted = 0          # SUBMITs sent by this process (the simulator counts acceptances the same way)
        t, p = self._recv()
        if t != M_HELLO:
            raise SimError(f"expected HELLO, got {t:#x}")
        self.hello = json.loads(p)

    # ---- framing
    def _send(self, t: int, payload: bytes = b"") -> None:
        self.sock.sendall(struct.pack("<IB", len(payload) + 1, t) + payload)

    def _recv(self) -> tuple[int, bytes]:
        while len(self.buf) < 4 or len(self.buf) < 4 + struct.unpack_from("<I", self.buf)[0]:
            d = self.sock.recv(1 << 20)
            if not d:
                raise SimError(f"the simulation closed the host port (log: {self.stderr_path}):\n"
                               + self.stderr_path.read_text()[-3000:])
            self.buf += d
        n = struct.unpack_from("<I", self.buf)[0]
        t, p = self.buf[4], self.buf[5:4 + n]
        self.buf = self.buf[4 + n:]
        return t, p

    def _dispatch(self, t: int, p: bytes) -> None:
        if t == M_CPL:
            tag, st, _, res, cyc = struct.unpack("<BBHIQ", p)
            self.cpls.append(Completion(tag, st, res, cyc))
        elif t == M_UART:
            self.uart += p
        elif t == M_ERROR:
            self.errors.append(p.decode(errors="replace"))
        elif t == M_MMIO_DATA:
            self.mmio_data.append(struct.unpack("<III", p))
        elif t == M_MSI:
            self.msis.append(struct.unpack("<IQ", p))
        else:
            raise SimError(f"unexpected message {t:#x}")

    def _wait(self, want: int) -> bytes:
        while True:
            t, p = self._recv()
            if t == want:
                return p
            self._dispatch(t, p)

    # ---- requests
    def submit(self, op: int, tag: int, lba: int = 0, nlb: int = 0, txid: int = 0, flags: int = 0, attr: int = 0,
               prio: int = 0, dptr: int = 0, aux: int = 0) -> None:
        self._send(M_SUBMIT, struct.pack("<BBBBBBHQII", op, tag, txid, flags, attr, prio, nlb, lba, dptr, aux))
        self.submitted += 1

    def mem_write(self, addr: int, data: bytes) -> None:
        if len(data) % 4:
            data += bytes(-len(data) % 4)
        self._send(M_MEM_WRITE, struct.pack("<I", addr) + data)

    def mem_read(self, addr: int, n: int) -> bytes:
        self._send(M_MEM_READ, struct.pack("<II", addr, n))
        p = self._wait(M_MEM_DATA)
        return p[4:4 + n]

    def run(self, max_cycles: int, until: int = 0) -> int:
        """Simulate up to max_cycles or until one of `until`; returns the STOPPED reason bits."""
        self._send(M_RUN, struct.pack("<QI", max_cycles, until))
        p = self._wait(M_STOPPED)
        self.cycle, why = struct.unpack("<QI", p)
        if why & R_CUT:
            self.cut = True
        return why

    def mmio_write32(self, off: int, value: int) -> None:
        """NVMe build: a 32-bit memory write to BAR0 (posted: it enters the device as the
        simulation runs, in order with the other MMIO requests)."""
        self._send(M_MMIO_WRITE, struct.pack("<II", off, value & 0xFFFFFFFF))

    def mmio_read32(self, off: int, max_cycles: int = 1_000_000) -> int:
        """NVMe build: a 32-bit memory read of BAR0; runs the simulation until it is answered
        (0xFFFFFFFF for a completion with an error status)."""
        self._send(M_MMIO_READ, struct.pack("<I", off))
        while not self.mmio_data:
            why = self.run(max_cycles, U_MMIO)
            if why & (R_CUT | R_MAX) and not self.mmio_data:
                raise SimError(f"MMIO read of {off:#x} not answered (STOPPED {why:#x})")
        o, value, _ = self.mmio_data.pop(0)      # reads are answered in order, one at a time here
        if o != off:
            raise SimError(f"MMIO read of {off:#x} answered for {o:#x}")
        return value

    def uart_in(self, text: str) -> None:
        self._send(M_UART_IN, text.encode())

    def arm_cut(self, kind: int, value: int) -> None:
        self._send(M_CUT_ARM, struct.pack("<IQ", kind, value))

    def cut_now(self) -> None:
        self._send(M_CUT_NOW)
        self.cut = True

    def pwr_fail(self, level: int) -> None:
        self._send(M_PWR_FAIL, bytes([level]))

    def trace(self, path: Path | None) -> None:
        self._send(M_TRACE, b"\x01" + str(path).encode() if path else b"\x00")

    def info(self) -> dict:
        self._send(M_INFO)
        return json.loads(self._wait(M_INFO_R))

    def close(self) -> dict:
        """QUIT (power off: the dies save their images); returns the final INFO."""
        info = {}
        try:
            info = self.info()
            self._send(M_QUIT)
        except (SimError, OSError):
            pass
        try:
            self.proc.wait(timeout=60)
        finally:
            self.sock.close()
            self._err.close()
        info["exit"] = self.proc.returncode
        info["log"] = self.stderr_path.read_text()
        return info

    # ---- UART helpers
    def uart_text(self) -> str:
        return self.uart.decode(errors="replace")
