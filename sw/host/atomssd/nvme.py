# SPDX-License-Identifier: Apache-2.0
"""Host-side NVMe driver model of atomssd, written from the NVMe 1.4 spec and
docs/host-interface.md §1 (the host contract), not from the RTL.

Design: sans-I/O. Every driver operation is a generator that *yields* transport requests (`Req`)
and receives each request's result; it never touches a device itself. Two small runners drive it:

    drv = NvmeDriver()
    info = run_sync(drv.enable(), transport)             # host port of the full-system sim, models
    info = await run_async(drv.enable(), transport)      # cocotb: transport methods may be async

Operations compose with `yield from` (e.g. `read` = map buffer, build PRPs, submit, wait, fetch
data), so one driver instance holds the state (queues, CIDs, phases, outstanding commands) and the
same code runs under both runners. `run_async` awaits a request's result when it is awaitable, so a
cocotb transport may mix plain and `async def` methods.

Transport protocol (`Transport`; any method may return its value or an awaitable of it):
    mmio_read32(off) -> int             BAR0 read of an aligned dword
    mmio_write32(off, v)                BAR0 dword write
    mmio_write64(off, v)                BAR0 qword write (ASQ, ACQ)
    mem_alloc(size, align) -> int       host memory for queues, PRP lists and buffers (never freed:
                                        the driver recycles what it allocated)
    mem_write(addr, data: bytes)        host memory write
    mem_read(addr, n) -> bytes          host memory read
    wait(cycles)                        let the device run for `cycles` clock cycles (may return
                                        the cycles it ran, fewer when it stopped at an interrupt)
    irq_pending(vector) -> bool         an MSI of `vector` arrived since its last irq_clear
    irq_clear(vector)

Robustness: every wait (CSTS.RDY, CSTS.SHST, a completion, room in an SQ) counts the cycles it
waited and raises `NvmeTimeout` past its limit (CSTS.CFS turns it into `ControllerFatal`); a CQE
naming an SQ that does not belong to its CQ, a CID with no command outstanding (a stale or repeated
phase-tag entry shows up this way), or an SQ head outside [the command's entry + 1, tail] raises
`NvmeProtocolError`. Commands may be submitted many at a time per queue and are matched by
(SQID, CID) in whatever order they complete.
"""
from __future__ import annotations

import inspect
import struct
from dataclasses import dataclass, field
from typing import Any, Generator, Protocol, Sequence, TypeVar

from .device import ADM_MAGIC, IDENTIFY_FIELDS, decode_log

T = TypeVar("T")
Gen = Generator["Req", Any, T]

PAGE = 4096
SQE_BYTES, CQE_BYTES = 64, 16
DEFAULT_MDTS_BYTES = 16 * PAGE          # host-interface.md §1.4, until Identify says otherwise

# registers (§1.2)
REG_CAP, REG_VS, REG_INTMS, REG_INTMC, REG_CC, REG_CSTS, REG_AQA, REG_ASQ, REG_ACQ = \
    0x00, 0x08, 0x0C, 0x10, 0x14, 0x1C, 0x24, 0x28, 0x30
DB_BASE = 0x1000
CC_EN = 1
CC_SHN_NORMAL, CC_SHN_ABRUPT = 1 << 14, 2 << 14
CSTS_RDY, CSTS_CFS = 1, 2
SHST_NORMAL, SHST_OCCURRING, SHST_COMPLETE = 0, 1, 2

# admin opcodes
ADM_DELETE_SQ, ADM_CREATE_SQ, ADM_GET_LOG, ADM_DELETE_CQ, ADM_CREATE_CQ, ADM_IDENTIFY, ADM_ABORT, \
    ADM_SET_FEATURES, ADM_GET_FEATURES, ADM_AER = 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0A, 0x0C
# I/O opcodes (NVM command set + atomssd vendor commands, §1.5)
IO_FLUSH, IO_WRITE, IO_READ, IO_DSM = 0x00, 0x01, 0x02, 0x09
IO_TX_WRITE, IO_TX_READ, IO_TX_BEGIN, IO_DIFF_WRITE, IO_TX_COMMIT, IO_RANGE_FLUSH, IO_TX_ABORT = \
    0x81, 0x82, 0x84, 0x85, 0x88, 0x89, 0x8C
IO_SWRITE, IO_SREAD = 0x8D, 0x8E          # static transactions (§1.11)
CNS_NAMESPACE, CNS_CONTROLLER, CNS_ACTIVE_NS, CNS_NS_DESC = 0, 1, 2, 3
FID_VWC, FID_NUM_QUEUES, FID_INT_COALESCING, FID_ASYNC_EVENT = 0x06, 0x07, 0x08, 0x0B
# vendor FIDs 0xC0 … 0xFF: the device's settings (§1.6, docs/architecture.md §1.2; DW0 = the value after
# the command, Invalid Field for one the device does not have)
FID_SEAL_TIME = 0xC0                      # the S-Log's seal time in clock cycles, 0 … 65,535
LID_ERROR, LID_SMART, LID_FW_SLOT, LID_DEVICE = 0x01, 0x02, 0x03, 0xC0
ATTR_SIMPLE, ATTR_ORDERED, ATTR_HEAD = 0, 1, 2
QPRIO_URGENT, QPRIO_HIGH, QPRIO_MEDIUM, QPRIO_LOW = 0, 1, 2, 3
DSM_AD, DSM_IDR, DSM_IDW = 1 << 2, 1 << 0, 1 << 1
MAX_RANGES = 8

STATUS_NAMES: dict[tuple[int, int], str] = {
    (0, 0x00): "Successful Completion", (0, 0x01): "Invalid Command Opcode",
    (0, 0x02): "Invalid Field in Command", (0, 0x04): "Data Transfer Error", (0, 0x06): "Internal Error",
    (0, 0x0B): "Invalid Namespace or Format", (0, 0x0C): "Command Sequence Error",
    (0, 0x13): "PRP Offset Invalid", (0, 0x80): "LBA Out of Range", (0, 0x81): "Capacity Exceeded",
    (1, 0x00): "Completion Queue Invalid", (1, 0x01): "Invalid Queue Identifier",
    (1, 0x02): "Invalid Queue Size", (1, 0x05): "Asynchronous Event Request Limit Exceeded",
    (1, 0x08): "Invalid Interrupt Vector", (1, 0x09): "Invalid Log Page", (1, 0x0C): "Invalid Queue Deletion",
    (2, 0x80): "Write Fault", (2, 0x81): "Unrecovered Read Error",
    (7, 0x02): "BAD_TXID", (7, 0x04): "TX_FULL", (7, 0x05): "INDEX_FULL", (7, 0x06): "TX_EMPTY",
    (7, 0x08): "TABLE_FULL",
    (7, 0x20): "SWRITE no range", (7, 0x21): "SWRITE too many ranges", (7, 0x22): "SWRITE too many LBAs",
    (7, 0x23): "SWRITE empty range", (7, 0x24): "SWRITE lengths differ from the transfer",
    (7, 0x25): "SWRITE overlapping ranges",
}


def status_name(sct: int, sc: int) -> str:
    """The §1.8 name of an NVMe status (vendor-specific SCT 7 codes carry the device's name)."""
    name = STATUS_NAMES.get((sct, sc))
    if name is None:
        return f"unknown status SCT {sct:#x} SC {sc:#04x}"
    return f"Vendor Specific: {name}" if sct == 7 else name


# ---------------------------------------------------------------------------------- transport
class Transport(Protocol):
    """What the driver needs from a host (module docstring); values may also be awaitables."""

    def mmio_read32(self, off: int) -> int: ...
    def mmio_write32(self, off: int, value: int) -> None: ...
    def mmio_write64(self, off: int, value: int) -> None: ...
    def mem_alloc(self, size: int, align: int) -> int: ...
    def mem_write(self, addr: int, data: bytes) -> None: ...
    def mem_read(self, addr: int, n: int) -> bytes: ...
    def wait(self, cycles: int) -> None: ...
    def irq_pending(self, vector: int) -> bool: ...
    def irq_clear(self, vector: int) -> None: ...


@dataclass(frozen=True)
class Req:
    """One transport call: `name` is a Transport method, `args` its arguments."""
    name: str
    args: tuple = ()


def rd32(off: int) -> Req:
    return Req("mmio_read32", (off,))


def wr32(off: int, value: int) -> Req:
    return Req("mmio_write32", (off, value))


def wr64(off: int, value: int) -> Req:
    return Req("mmio_write64", (off, value))


def run_sync(gen: Gen[T], transport: Transport) -> T:
    """Drives a driver generator to its end with a synchronous transport; returns its value.
    A transport exception is thrown into the generator (so the driver's frames show in it).
    It is `run_async` stepped once: with a transport that returns no awaitable, the coroutine
    ends without suspending."""
    coro = run_async(gen, transport)
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise TypeError("run_sync: the transport returned an awaitable; use run_async")


async def run_async(gen: Gen[T], transport: Transport) -> T:
    """Drives a driver generator, awaiting every transport result that is awaitable (cocotb
    transports); a transport exception is thrown into the generator."""
    value: Any = None
    exc: BaseException | None = None
    while True:
        try:
            req = gen.throw(exc) if exc is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value
        exc = None
        try:
            value = getattr(transport, req.name)(*req.args)
            if inspect.isawaitable(value):
                value = await value
        except Exception as e:  # noqa: BLE001 - handed to the generator
            value, exc = None, e


# ---------------------------------------------------------------------------------- errors
class NvmeError(RuntimeError):
    """Base of every driver error."""


class NvmeTimeout(NvmeError):
    """A wait ran past its cycle limit."""


class ControllerFatal(NvmeError):
    """CSTS.CFS is set."""


class NvmeProtocolError(NvmeError):
    """The device broke the queue protocol (CQE for an unknown SQ/CID, SQ head out of range)."""


class NvmeStatusError(NvmeError):
    """A command completed with an error status."""

    def __init__(self, cmd: "Command", what: str = ""):
        self.cmd = cmd
        c = cmd.cqe
        super().__init__(f"{what or f'opcode {cmd.sqe.opc:#04x}'} (SQ {cmd.qid}, CID {cmd.cid}): "
                         f"{c.name} (SCT {c.sct}, SC {c.sc:#04x}, DNR {c.dnr})")


# ---------------------------------------------------------------------------------- SQE / CQE
@dataclass
class Sqe:
    """A 64-byte submission queue entry."""
    opc: int
    nsid: int = 0
    cdw10: int = 0
    cdw11: int = 0
    cdw12: int = 0
    cdw13: int = 0
    cdw14: int = 0
    cdw15: int = 0
    prp1: int = 0
    prp2: int = 0
    cid: int = 0
    fuse: int = 0
    psdt: int = 0

    def to_bytes(self) -> bytes:
        dw0 = self.opc | self.fuse << 8 | self.psdt << 14 | self.cid << 16
        return struct.pack("<4IQQQ6I", dw0, self.nsid, 0, 0, 0, self.prp1, self.prp2, self.cdw10, self.cdw11,
                           self.cdw12, self.cdw13, self.cdw14, self.cdw15)

    def set_slba(self, lba: int) -> None:
        self.cdw10, self.cdw11 = lba & 0xFFFFFFFF, lba >> 32


@dataclass(frozen=True)
class Cqe:
    """A 16-byte completion queue entry."""
    dw0: int
    dw1: int
    sqhd: int
    sqid: int
    cid: int
    phase: int
    status: int           # DW3 bits 31:17: SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14

    @classmethod
    def from_bytes(cls, b: bytes) -> "Cqe":
        dw0, dw1, sqhd, sqid, cid, st = struct.unpack("<IIHHHH", b)
        return cls(dw0, dw1, sqhd, sqid, cid, st & 1, st >> 1)

    @property
    def sc(self) -> int:
        return self.status & 0xFF

    @property
    def sct(self) -> int:
        return (self.status >> 8) & 7

    @property
    def dnr(self) -> int:
        return (self.status >> 14) & 1

    @property
    def ok(self) -> bool:
        return self.sc == 0 and self.sct == 0

    @property
    def name(self) -> str:
        return status_name(self.sct, self.sc)


def vendor_cdw13(txid: int = 0, commit: bool = False, barrier: bool = False, attr: int = ATTR_SIMPLE) -> int:
    """CDW13 of the atomssd vendor commands (§1.5)."""
    if not 0 <= txid < 64 or not 0 <= attr < 4:
        raise ValueError(f"txid {txid} / attr {attr} do not fit CDW13")
    return txid | int(commit) << 8 | int(barrier) << 9 | attr << 16


def range_flush_list(ranges: Sequence[tuple[int, int]]) -> bytes:
    """The Range Flush list: (lba, blocks) → dword 0 LBA[31:0], dword 1 {blocks − 1, LBA[47:32]}."""
    for lba, n in ranges:
        if not 0 <= lba < 1 << 48 or not 1 <= n <= 1 << 16:
            raise ValueError(f"range ({lba}, {n}): LBA must fit 48 bits and blocks 1 … 65536")
    return b"".join(struct.pack("<II", lba & 0xFFFFFFFF, (n - 1) << 16 | (lba >> 32) & 0xFFFF) for lba, n in ranges)


def dsm_list(ranges: Sequence[tuple[int, int]]) -> bytes:
    """The Dataset Management range list: (lba, blocks) → {context attributes 0, length, SLBA}."""
    return b"".join(struct.pack("<IIQ", 0, n, lba) for lba, n in ranges)


# ---------------------------------------------------------------------------------- PRPs
@dataclass
class PrpSet:
    """PRP1, PRP2 and the PRP list pages to write (address, bytes) before submitting."""
    prp1: int
    prp2: int
    lists: list[tuple[int, bytes]] = field(default_factory=list)


def prp_page_count(addr: int, length: int) -> int:
    """Memory pages a transfer of `length` bytes at `addr` touches."""
    return -(-((addr % PAGE) + length) // PAGE) if length else 0


def prp_list_pages_needed(addr: int, length: int, first_list_offset: int = 0) -> int:
    """PRP list pages needed for a transfer (0 when PRP2 is absent or a page pointer); the first
    list may start at `first_list_offset` in its page, the others are page aligned."""
    left = prp_page_count(addr, length) - 1
    if left <= 1:
        return 0
    n, cap = 0, (PAGE - first_list_offset) // 8
    while True:
        n += 1
        if left <= cap:
            return n
        left -= cap - 1
        cap = PAGE // 8


def build_prps(addr: int, length: int, lists: Sequence[int] = ()) -> PrpSet:
    """PRP1/PRP2 (and list contents) for `length` bytes of contiguous host memory at `addr`.
    `lists` are the PRP list page addresses to use (exactly `prp_list_pages_needed` of them: the
    first 8-byte aligned, the others page aligned); a list page that cannot hold the remaining
    entries ends with a pointer to the next one (NVMe list chaining)."""
    if addr & 3:
        raise ValueError(f"buffer {addr:#x} is not dword aligned (PRP1 offset)")
    n = prp_page_count(addr, length)
    pages = [(addr & ~(PAGE - 1)) + PAGE * i for i in range(1, n)]
    if n <= 2:
        if lists:
            raise ValueError("no PRP list needed")
        return PrpSet(addr, pages[0] if pages else 0)
    need = prp_list_pages_needed(addr, length, lists[0] % PAGE if lists else 0)
    if len(lists) != need or lists[0] & 7 or any(a % PAGE for a in lists[1:]):
        raise ValueError(f"{len(lists)} list pages given, {need} needed (first 8-byte, others page aligned)")
    out, left = [], pages
    for k, base in enumerate(lists):
        cap = (PAGE - base % PAGE) // 8
        ents = left if len(left) <= cap else left[:cap - 1] + [lists[k + 1]]
        out.append((base, struct.pack(f"<{len(ents)}Q", *ents)))
        left = left[cap - 1:]
    return PrpSet(addr, lists[0], out)


# ---------------------------------------------------------------------------------- parsed data
@dataclass
class ControllerInfo:
    """CAP and VS."""
    mqes: int
    cqr: int
    ams: int
    to: int
    dstrd: int
    nssrs: int
    css: int
    mpsmin: int
    mpsmax: int
    vs: int

    @classmethod
    def parse(cls, cap: int, vs: int) -> "ControllerInfo":
        return cls(cap & 0xFFFF, cap >> 16 & 1, cap >> 17 & 3, cap >> 24 & 0xFF, cap >> 32 & 0xF, cap >> 36 & 1,
                   cap >> 37 & 0xFF, cap >> 48 & 0xF, cap >> 52 & 0xF, vs)


@dataclass
class IdentifyController:
    vid: int
    ssvid: int
    sn: str
    mn: str
    fr: str
    mdts: int
    cntlid: int
    ver: int
    oacs: int
    acl: int
    aerl: int
    frmw: int
    lpa: int
    sqes: int
    cqes: int
    nn: int
    oncs: int
    vwc: int
    vendor: dict[str, int]            # the 16 IDENTIFY words of architecture.md §1.1 (bytes 3072…3135)
    raw: bytes = field(repr=False, default=b"")

    @classmethod
    def parse(cls, b: bytes) -> "IdentifyController":
        txt = lambda lo, hi: b[lo:hi].decode("ascii", "replace").rstrip(" \0")
        u16 = lambda o: struct.unpack_from("<H", b, o)[0]
        u32 = lambda o: struct.unpack_from("<I", b, o)[0]
        vendor = dict(zip(IDENTIFY_FIELDS, struct.unpack_from("<16I", b, 3072)))
        return cls(u16(0), u16(2), txt(4, 24), txt(24, 64), txt(64, 72), b[77], u16(78), u32(80), u16(256),
                   b[258], b[259], b[260], b[261], b[512], b[513], u32(516), u16(520), b[525], vendor, bytes(b))

    @property
    def vendor_valid(self) -> bool:
        return self.vendor.get("magic") == ADM_MAGIC

    def max_transfer(self, mpsmin_bytes: int = PAGE) -> int | None:
        """MDTS in bytes (None: no limit)."""
        return mpsmin_bytes << self.mdts if self.mdts else None


@dataclass
class IdentifyNamespace:
    nsze: int
    ncap: int
    nuse: int
    nsfeat: int
    nlbaf: int
    flbas: int
    lbads: int
    ms: int
    raw: bytes = field(repr=False, default=b"")

    @classmethod
    def parse(cls, b: bytes) -> "IdentifyNamespace":
        nsze, ncap, nuse, nsfeat, nlbaf, flbas = struct.unpack_from("<QQQBBB", b, 0)
        lbaf = struct.unpack_from("<I", b, 128 + 4 * (flbas & 0xF))[0]
        return cls(nsze, ncap, nuse, nsfeat, nlbaf, flbas, lbaf >> 16 & 0xFF, lbaf & 0xFFFF, bytes(b))

    @property
    def lba_bytes(self) -> int:
        return 1 << self.lbads


@dataclass
class SmartLog:
    critical_warning: int
    temperature_k: int
    available_spare: int
    spare_threshold: int
    percentage_used: int
    data_units_read: int
    data_units_written: int
    host_read_commands: int
    host_write_commands: int
    busy_time: int
    power_cycles: int
    power_on_hours: int
    unsafe_shutdowns: int

    @classmethod
    def parse(cls, b: bytes) -> "SmartLog":
        u128 = lambda o: int.from_bytes(b[o:o + 16], "little")
        cw, temp, spare, thr, used = struct.unpack_from("<BHBBB", b, 0)
        return cls(cw, temp, spare, thr, used, u128(32), u128(48), u128(64), u128(80), u128(96), u128(112),
                   u128(128), u128(144))


# ---------------------------------------------------------------------------------- driver state
@dataclass
class Command:
    """A submitted command; `cqe` is set at its completion, `data` for data read from the device."""
    qid: int
    cid: int
    sqe: Sqe
    pos: int                          # its entry in the SQ
    read_addr: int = 0
    read_len: int = 0
    buffers: list[tuple[int, int, int]] = field(default_factory=list)   # (addr, size, align) to recycle
    cqe: Cqe | None = None
    data: bytes | None = None
    dropped: bool = False             # the queue was deleted or the controller reset before it completed
    what: str = ""

    @property
    def done(self) -> bool:
        return self.cqe is not None or self.dropped

    @property
    def ok(self) -> bool:
        return self.cqe is not None and self.cqe.ok

    def check(self) -> "Command":
        """Raises NvmeStatusError unless the command completed successfully."""
        if self.cqe is None:
            raise NvmeError(f"{self.what or 'command'} (SQ {self.qid}, CID {self.cid}) did not complete")
        if not self.cqe.ok:
            raise NvmeStatusError(self, self.what)
        return self


@dataclass
class _SubQ:
    qid: int
    base: int
    size: int
    cqid: int
    head: int = 0
    tail: int = 0
    next_cid: int = 0
    outstanding: dict[int, Command] = field(default_factory=dict)


@dataclass
class _ComplQ:
    qid: int
    base: int
    size: int
    iv: int
    ien: bool
    head: int = 0
    phase: int = 1


def _dist(a: int, b: int, size: int) -> int:
    return (b - a) % size


class NvmeDriver:
    """The NVMe host driver. Every public method that talks to the device is a generator: run it
    with `run_sync` / `run_async` (module docstring). State (queues, phases, CIDs, buffers) lives
    here. `prp_list_offset` places first PRP lists at that (8-byte aligned) offset in their page,
    which forces list chaining; tests use it."""

    def __init__(self, timeout_cycles: int = 2_000_000, poll_cycles: int = 64, ready_timeout_cycles: int | None = None,
                 use_irq: bool = False, msi_vectors: int = 32):
        self.timeout_cycles = timeout_cycles
        self.poll_cycles = poll_cycles
        self.ready_timeout_cycles = ready_timeout_cycles
        self.use_irq = use_irq
        self.msi_vectors = msi_vectors            # vectors the host allocated: a CQ's IV is taken modulo
        self.prp_list_offset = 0
        self.info: ControllerInfo | None = None
        self.ctrl: IdentifyController | None = None
        self.ns: IdentifyNamespace | None = None
        self.lba_bytes = 4096
        self.max_transfer = DEFAULT_MDTS_BYTES
        self.sqs: dict[int, _SubQ] = {}
        self.cqs: dict[int, _ComplQ] = {}
        self._pool: dict[tuple[int, int], list[int]] = {}
        self._admin_mem: tuple[int, int, int] | None = None      # admin SQ, CQ, entries

    # ------------------------------------------------------------------ small helpers
    def _db(self, qid: int, cq: bool) -> int:
        stride = 4 << (self.info.dstrd if self.info else 0)
        return DB_BASE + (2 * qid + int(cq)) * stride

    def _alloc(self, size: int, align: int = PAGE) -> Gen[int]:
        free = self._pool.get((size, align))
        if free:
            return free.pop()
        return (yield Req("mem_alloc", (size, align)))

    def _release(self, bufs: Sequence[tuple[int, int, int]]) -> None:
        for addr, size, align in bufs:
            self._pool.setdefault((size, align), []).append(addr)

    def _wait_cycles(self, waited: int, limit: int, what: str) -> Gen[int]:
        """One poll interval; raises when `limit` cycles have passed, and ControllerFatal as soon as
        CSTS.CFS is seen (CSTS is read every 64 polls, so a fatal controller fails fast)."""
        polls = waited // max(self.poll_cycles, 1)
        if waited >= limit or polls % 64 == 63:
            csts = yield rd32(REG_CSTS)
            if csts & CSTS_CFS:
                raise ControllerFatal(f"controller fatal status (CSTS {csts:#x}) while waiting for {what}")
            if waited >= limit:
                raise NvmeTimeout(f"no {what} within {limit} cycles (CSTS {csts:#x})")
        ran = yield Req("wait", (self.poll_cycles,))
        # a transport may end a wait early (an interrupt) and say how many cycles it ran
        return waited + (ran if isinstance(ran, int) and ran > 0 else self.poll_cycles)

    # ------------------------------------------------------------------ controller
    def read_cap(self) -> Gen[ControllerInfo]:
        lo = yield rd32(REG_CAP)
        hi = yield rd32(REG_CAP + 4)
        vs = yield rd32(REG_VS)
        self.info = ControllerInfo.parse(lo | hi << 32, vs)
        return self.info

    def _ready_limit(self) -> int:
        if self.ready_timeout_cycles is not None:
            return self.ready_timeout_cycles
        return self.timeout_cycles

    def _wait_csts(self, mask: int, want: int, what: str, fatal_ok: bool = False, reap: bool = False) -> Gen[int]:
        """Polls CSTS; with `reap`, every CQ is reaped meanwhile (a shutdown waits for commands
        whose completions need room in their CQ)."""
        waited, limit = 0, self._ready_limit()
        while True:
            csts = yield rd32(REG_CSTS)
            if csts & CSTS_CFS and not fatal_ok:
                raise ControllerFatal(f"CSTS.CFS set while waiting for {what} (CSTS {csts:#x})")
            if csts & mask == want:
                return csts
            if waited >= limit:
                raise NvmeTimeout(f"no {what} within {limit} cycles (CSTS {csts:#x})")
            if reap:
                for cqid in sorted(self.cqs):
                    yield from self.reap(cqid)
            ran = yield Req("wait", (self.poll_cycles,))
            waited += ran if isinstance(ran, int) and ran > 0 else self.poll_cycles

    def disable(self) -> Gen[None]:
        """CC.EN = 0, wait for CSTS.RDY = 0; every outstanding command is dropped."""
        cc = yield rd32(REG_CC)
        yield wr32(REG_CC, cc & ~(CC_EN | 3 << 14))
        yield from self._wait_csts(CSTS_RDY, 0, "CSTS.RDY = 0", fatal_ok=True)
        for sq in self.sqs.values():
            for cmd in sq.outstanding.values():
                cmd.dropped = True
        self.sqs.clear()
        self.cqs.clear()

    def enable(self, admin_qsize: int = 32, iosqes: int = 6, iocqes: int = 4) -> Gen[ControllerInfo]:
        """Controller bring-up: disable if needed, admin queues (AQA/ASQ/ACQ), CC.EN = 1, wait RDY.
        CSTS.CFS (e.g. an invalid CC) raises ControllerFatal."""
        info = yield from self.read_cap()
        cc = yield rd32(REG_CC)
        csts = yield rd32(REG_CSTS)
        if cc & CC_EN or csts & CSTS_RDY:
            yield from self.disable()
        size = min(admin_qsize, info.mqes + 1)
        if self._admin_mem is None or self._admin_mem[2] < size:
            sqb = yield from self._alloc(size * SQE_BYTES)
            cqb = yield from self._alloc(size * CQE_BYTES)
            self._admin_mem = (sqb, cqb, size)
        sqb, cqb, _ = self._admin_mem
        yield Req("mem_write", (cqb, bytes(size * CQE_BYTES)))
        self.sqs = {0: _SubQ(0, sqb, size, 0)}
        self.cqs = {0: _ComplQ(0, cqb, size, 0, True)}
        yield wr32(REG_AQA, (size - 1) << 16 | (size - 1))
        yield wr64(REG_ASQ, sqb)
        yield wr64(REG_ACQ, cqb)
        yield wr32(REG_CC, CC_EN | iosqes << 16 | iocqes << 20)
        yield from self._wait_csts(CSTS_RDY, CSTS_RDY, "CSTS.RDY = 1")
        return info

    def shutdown(self, abrupt: bool = False) -> Gen[None]:
        """CC.SHN = normal (or abrupt), wait for CSTS.SHST = complete, reaping every CQ meanwhile
        (the device finishes the commands it fetched first) and once more at the end."""
        cc = yield rd32(REG_CC)
        yield wr32(REG_CC, (cc & ~(3 << 14)) | (CC_SHN_ABRUPT if abrupt else CC_SHN_NORMAL))
        yield from self._wait_csts(3 << 2, SHST_COMPLETE << 2, "CSTS.SHST = complete", reap=True)
        for cqid in sorted(self.cqs):               # the CQEs posted before SHST = complete
            yield from self.reap(cqid)

    def bring_up(self, io_queues: int = 1, qsize: int = 64, admin_qsize: int = 32) -> Gen[IdentifyController]:
        """enable + Identify controller / namespace + Number of Queues + `io_queues` queue pairs."""
        yield from self.enable(admin_qsize)
        ctrl = yield from self.identify_controller()
        yield from self.identify_namespace()
        yield from self.set_num_queues(io_queues, io_queues)
        for q in range(1, io_queues + 1):
            yield from self.create_io_queue_pair(q, qsize)
        return ctrl

    # ------------------------------------------------------------------ submission and completion
    def _alloc_cid(self, sq: _SubQ) -> int:
        for _ in range(0x10000):
            cid, sq.next_cid = sq.next_cid, (sq.next_cid + 1) & 0xFFFF
            if cid not in sq.outstanding:
                return cid
        raise NvmeError(f"SQ {sq.qid}: no free CID")

    @staticmethod
    def _sq_full(sq: _SubQ) -> bool:
        # At most size - 1 commands outstanding (submitted, not completed) per SQ, as Linux does: a
        # command still executing keeps its place, so the SQ head in a late CQE (the head right
        # after that command's fetch) is never ambiguous once the queue has wrapped. Counting only
        # free entries let a late CQE's head pass for one a lap ahead, and entries the device had not
        # fetched yet were overwritten (found by cocotb_tests/ats_nvme_qm).
        return (sq.tail + 1) % sq.size == sq.head or len(sq.outstanding) >= sq.size - 1

    def _wait_sq_room(self, sq: _SubQ) -> Gen[None]:
        waited = 0
        while self._sq_full(sq):
            yield from self.reap(sq.cqid)
            if not self._sq_full(sq):
                return
            waited = yield from self._wait_cycles(waited, self.timeout_cycles, f"room in SQ {sq.qid}")

    def submit(self, qid: int, sqe: Sqe, ring: bool = True, read: tuple[int, int] | None = None,
               buffers: Sequence[tuple[int, int, int]] = (), what: str = "") -> Gen[Command]:
        """Writes `sqe` (its CID assigned here) at the tail of SQ `qid` and rings the doorbell
        (unless `ring` is False: see `ring`). `read` = (addr, length) of data to fetch at completion;
        `buffers` are recycled at completion."""
        sq = self.sqs.get(qid)
        if sq is None:
            raise NvmeError(f"SQ {qid} does not exist")
        yield from self._wait_sq_room(sq)
        sqe.cid = self._alloc_cid(sq)
        cmd = Command(qid, sqe.cid, sqe, sq.tail, buffers=list(buffers), what=what)
        if read:
            cmd.read_addr, cmd.read_len = read
        yield Req("mem_write", (sq.base + sq.tail * SQE_BYTES, sqe.to_bytes()))
        sq.outstanding[sqe.cid] = cmd
        sq.tail = (sq.tail + 1) % sq.size
        if ring:
            yield wr32(self._db(qid, False), sq.tail)
        return cmd

    def ring(self, qid: int) -> Gen[None]:
        """SQ tail doorbell of `qid` (after submits with ring=False)."""
        yield wr32(self._db(qid, False), self.sqs[qid].tail)

    def _match(self, cq: _ComplQ, cqe: Cqe) -> Command:
        sq = self.sqs.get(cqe.sqid)
        if sq is None or sq.cqid != cq.qid:
            raise NvmeProtocolError(f"CQ {cq.qid} entry {cq.head}: SQID {cqe.sqid} is not an SQ of this CQ")
        cmd = sq.outstanding.get(cqe.cid)
        if cmd is None:
            raise NvmeProtocolError(f"CQ {cq.qid} entry {cq.head} (phase {cqe.phase}): CID {cqe.cid} of SQ "
                                    f"{sq.qid} is not outstanding (stale or repeated entry)")
        lo = (cmd.pos + 1) % sq.size
        if cqe.sqhd >= sq.size or _dist(lo, cqe.sqhd, sq.size) > _dist(lo, sq.tail, sq.size):
            raise NvmeProtocolError(f"CQ {cq.qid}: SQ head {cqe.sqhd} for CID {cqe.cid} outside "
                                    f"[{lo}, {sq.tail}] of SQ {sq.qid}")
        del sq.outstanding[cqe.cid]
        if _dist(sq.head, cqe.sqhd, sq.size) <= _dist(sq.head, sq.tail, sq.size):
            sq.head = cqe.sqhd
        cmd.cqe = cqe
        return cmd

    def reap(self, cqid: int) -> Gen[list[Command]]:
        """Takes every new CQE of CQ `cqid` (phase tag), matches it to its command, rings the CQ head
        doorbell, fetches read data of successful commands; returns the completed commands."""
        cq = self.cqs[cqid]
        done: list[Command] = []
        while len(done) < cq.size:
            cqe = Cqe.from_bytes((yield Req("mem_read", (cq.base + cq.head * CQE_BYTES, CQE_BYTES))))
            if cqe.phase != cq.phase:
                break
            done.append(self._match(cq, cqe))
            cq.head = (cq.head + 1) % cq.size
            if cq.head == 0:
                cq.phase ^= 1
        if done:
            yield wr32(self._db(cqid, True), cq.head)
        for cmd in done:
            if cmd.read_len and cmd.cqe.ok:
                cmd.data = yield Req("mem_read", (cmd.read_addr, cmd.read_len))
            self._release(cmd.buffers)
        return done

    def _irq_gate(self, cqids: set[int]) -> Gen[bool]:
        """With use_irq: True when an MSI of one of the CQs arrived (and clears it)."""
        hit = False
        for v in sorted({self.cqs[c].iv % self.msi_vectors for c in cqids if self.cqs[c].ien}):
            if (yield Req("irq_pending", (v,))):
                yield Req("irq_clear", (v,))
                hit = True
        return hit or any(not self.cqs[c].ien for c in cqids)

    def wait(self, cmds: Command | Sequence[Command], timeout: int | None = None,
             reap_others: bool = True) -> Gen[list[Command]]:
        """Reaps until every command of `cmds` completed (others completing meanwhile are recorded
        in their Command objects too). Each reap takes every CQ, not only those of `cmds`: a command
        can wait in the device for room in another CQ (a Delete SQ for its SQ's commands, a full
        CQ). With `reap_others=False` only the CQs of `cmds` are reaped (a test that keeps another
        CQ full on purpose). Raises NvmeTimeout after `timeout` cycles."""
        cmds = [cmds] if isinstance(cmds, Command) else list(cmds)
        limit = self.timeout_cycles if timeout is None else timeout
        waited, first = 0, True
        while not all(c.done for c in cmds):
            cqids = {self.sqs[c.qid].cqid for c in cmds if not c.done and c.qid in self.sqs}
            if not cqids:
                break
            scope = set(self.cqs) if reap_others else cqids
            if first or not self.use_irq or (yield from self._irq_gate(scope)):
                for cqid in sorted(cqids) + sorted(scope - cqids):
                    yield from self.reap(cqid)
            first = False
            if all(c.done for c in cmds):
                break
            pend = next(c for c in cmds if not c.done)
            waited = yield from self._wait_cycles(waited, limit, f"completion of {pend.what or 'command'} "
                                                  f"(SQ {pend.qid}, CID {pend.cid})")
        return cmds

    def execute(self, qid: int, sqe: Sqe, check: bool = True, read: tuple[int, int] | None = None,
                buffers: Sequence[tuple[int, int, int]] = (), what: str = "") -> Gen[Command]:
        """submit + wait; raises NvmeStatusError on an error status when `check`."""
        cmd = yield from self.submit(qid, sqe, read=read, buffers=buffers, what=what)
        yield from self.wait(cmd)
        if check:
            cmd.check()
        return cmd

    # ------------------------------------------------------------------ data buffers
    def map_buffer(self, length: int, offset: int = 0, data: bytes | None = None) -> Gen[tuple[int, PrpSet, list]]:
        """A host buffer of `length` bytes starting `offset` (dword aligned) bytes into a fresh page,
        with its PRPs written; returns (address, PRPs, buffers to recycle)."""
        if offset & 3 or not 0 <= offset < PAGE:
            raise ValueError(f"buffer offset {offset} must be dword aligned and below {PAGE}")
        size = -(-(offset + max(length, 1)) // PAGE) * PAGE
        base = yield from self._alloc(size)
        bufs = [(base, size, PAGE)]
        addr = base + offset
        nl = prp_list_pages_needed(addr, length, self.prp_list_offset)
        lists: list[int] = []
        if nl:
            lbase = yield from self._alloc(nl * PAGE)
            bufs.append((lbase, nl * PAGE, PAGE))
            lists = [lbase + self.prp_list_offset] + [lbase + PAGE * i for i in range(1, nl)]
        prps = build_prps(addr, length, lists)
        for a, b in prps.lists:
            yield Req("mem_write", (a, b))
        if data is not None:
            yield Req("mem_write", (addr, bytes(data)))
        return addr, prps, bufs

    def _data_cmd(self, qid: int, sqe: Sqe, length: int, offset: int = 0, data: bytes | None = None,
                  to_host: bool = False, ring: bool = True, what: str = "") -> Gen[Command]:
        addr, prps, bufs = yield from self.map_buffer(length, offset, data)
        sqe.prp1, sqe.prp2 = prps.prp1, prps.prp2
        return (yield from self.submit(qid, sqe, ring=ring, read=(addr, length) if to_host else None,
                                       buffers=bufs, what=what))

    def _check_xfer(self, nbytes: int) -> None:
        if nbytes > self.max_transfer:
            raise ValueError(f"{nbytes} bytes exceed MDTS ({self.max_transfer} bytes)")

    # ------------------------------------------------------------------ admin commands
    def admin(self, sqe: Sqe, data_len: int = 0, check: bool = True, what: str = "") -> Gen[Command]:
        """An admin command; with `data_len`, a device-to-host buffer whose bytes end in `.data`."""
        if data_len:
            cmd = yield from self._data_cmd(0, sqe, data_len, to_host=True, what=what)
            yield from self.wait(cmd)
            return cmd.check() if check else cmd
        return (yield from self.execute(0, sqe, check, what=what))

    def identify(self, cns: int, nsid: int = 0) -> Gen[bytes]:
        cmd = yield from self.admin(Sqe(ADM_IDENTIFY, nsid=nsid, cdw10=cns), PAGE, what=f"Identify CNS {cns}")
        return cmd.data

    def identify_controller(self) -> Gen[IdentifyController]:
        self.ctrl = IdentifyController.parse((yield from self.identify(CNS_CONTROLLER)))
        mx = self.ctrl.max_transfer(PAGE << (self.info.mpsmin if self.info else 0))
        self.max_transfer = mx if mx is not None else 1 << 30
        return self.ctrl

    def identify_namespace(self, nsid: int = 1) -> Gen[IdentifyNamespace]:
        self.ns = IdentifyNamespace.parse((yield from self.identify(CNS_NAMESPACE, nsid)))
        self.lba_bytes = self.ns.lba_bytes
        return self.ns

    def active_namespaces(self, nsid: int = 0) -> Gen[list[int]]:
        raw = yield from self.identify(CNS_ACTIVE_NS, nsid)
        ids = struct.unpack("<1024I", raw)
        return list(ids[:ids.index(0)] if 0 in ids else ids)

    def set_features(self, fid: int, cdw11: int, check: bool = True) -> Gen[Command]:
        """Set Features; the CQE's DW0 is the feature's answer (a vendor FID's: its value now)."""
        return (yield from self.admin(Sqe(ADM_SET_FEATURES, cdw10=fid, cdw11=cdw11), check=check,
                                      what=f"Set Features {fid:#x}"))

    def get_features(self, fid: int, cdw11: int = 0) -> Gen[int]:
        """Get Features; returns DW0 (raises NvmeStatusError on an error status)."""
        cmd = yield from self.admin(Sqe(ADM_GET_FEATURES, cdw10=fid, cdw11=cdw11), what=f"Get Features {fid:#x}")
        return cmd.cqe.dw0

    def set_seal_time(self, cycles: int) -> Gen[int]:
        """Set Features 0xC0: the S-Log's seal time (0 … 65,535 cycles); returns the value now in
        effect. Invalid Field (NvmeStatusError) out of range or on a build that does not pack records."""
        return (yield from self.set_features(FID_SEAL_TIME, cycles)).cqe.dw0

    def get_seal_time(self) -> Gen[int]:
        """Get Features 0xC0: the S-Log's seal time in cycles."""
        return (yield from self.get_features(FID_SEAL_TIME))

    def set_num_queues(self, nsq: int, ncq: int) -> Gen[tuple[int, int]]:
        """Set Features Number of Queues; returns the (SQs, CQs) allocated (1-based)."""
        cmd = yield from self.set_features(FID_NUM_QUEUES, (ncq - 1) << 16 | (nsq - 1))
        return (cmd.cqe.dw0 & 0xFFFF) + 1, (cmd.cqe.dw0 >> 16) + 1

    def create_io_cq(self, qid: int, size: int, iv: int | None = None, ien: bool = True, check: bool = True,
                     pc: bool = True) -> Gen[Command]:
        """Create I/O Completion Queue (zeroed memory, IV default = qid)."""
        iv = qid if iv is None else iv
        base = yield from self._alloc(size * CQE_BYTES)
        yield Req("mem_write", (base, bytes(size * CQE_BYTES)))
        sqe = Sqe(ADM_CREATE_CQ, prp1=base, cdw10=(size - 1) << 16 | qid, cdw11=iv << 16 | int(ien) << 1 | int(pc))
        cmd = yield from self.admin(sqe, check=check, what=f"Create I/O CQ {qid}")
        if cmd.ok:
            self.cqs[qid] = _ComplQ(qid, base, size, iv, ien)
        else:
            self._release([(base, size * CQE_BYTES, PAGE)])
        return cmd

    def create_io_sq(self, qid: int, size: int, cqid: int, qprio: int = QPRIO_LOW, check: bool = True,
                     pc: bool = True) -> Gen[Command]:
        """Create I/O Submission Queue on CQ `cqid` with priority QPRIO (→ descriptor prio 3 − QPRIO)."""
        base = yield from self._alloc(size * SQE_BYTES)
        sqe = Sqe(ADM_CREATE_SQ, prp1=base, cdw10=(size - 1) << 16 | qid, cdw11=cqid << 16 | qprio << 1 | int(pc))
        cmd = yield from self.admin(sqe, check=check, what=f"Create I/O SQ {qid}")
        if cmd.ok:
            self.sqs[qid] = _SubQ(qid, base, size, cqid)
        else:
            self._release([(base, size * SQE_BYTES, PAGE)])
        return cmd

    def create_io_queue_pair(self, qid: int, size: int, qprio: int = QPRIO_LOW, iv: int | None = None,
                             cq_size: int | None = None) -> Gen[None]:
        yield from self.create_io_cq(qid, cq_size or size, iv)
        yield from self.create_io_sq(qid, size, qid, qprio)

    def delete_io_sq(self, qid: int, check: bool = True) -> Gen[Command]:
        """Delete I/O SQ: its commands in the device complete first (reaped here); unfetched ones
        are marked dropped."""
        cmd = yield from self.admin(Sqe(ADM_DELETE_SQ, cdw10=qid), check=check, what=f"Delete I/O SQ {qid}")
        sq = self.sqs.get(qid)
        if cmd.ok and sq is not None:
            if sq.outstanding and sq.cqid in self.cqs:
                yield from self.reap(sq.cqid)
            for c in sq.outstanding.values():
                c.dropped = True
            del self.sqs[qid]
            self._release([(sq.base, sq.size * SQE_BYTES, PAGE)])
        return cmd

    def delete_io_cq(self, qid: int, check: bool = True) -> Gen[Command]:
        cmd = yield from self.admin(Sqe(ADM_DELETE_CQ, cdw10=qid), check=check, what=f"Delete I/O CQ {qid}")
        cq = self.cqs.get(qid)
        if cmd.ok and cq is not None:
            del self.cqs[qid]
            self._release([(cq.base, cq.size * CQE_BYTES, PAGE)])
        return cmd

    def get_log_page(self, lid: int, length: int, offset: int = 0, nsid: int = 0xFFFFFFFF,
                     check: bool = True) -> Gen[Command]:
        """Get Log Page: `length` bytes (dword multiple) from byte `offset` of log `lid`."""
        if length <= 0 or length % 4 or offset % 4:
            raise ValueError(f"Get Log Page of {length} bytes at {offset}: both must be dword multiples, length > 0")
        numd = length // 4 - 1
        sqe = Sqe(ADM_GET_LOG, nsid=nsid, cdw10=lid | (numd & 0xFFFF) << 16, cdw11=numd >> 16,
                  cdw12=offset & 0xFFFFFFFF, cdw13=offset >> 32)
        return (yield from self.admin(sqe, length, check=check, what=f"Get Log Page {lid:#x}"))

    def smart_log(self) -> Gen[SmartLog]:
        return SmartLog.parse((yield from self.get_log_page(LID_SMART, 512)).data)

    def device_log(self) -> Gen[dict[str, int]]:
        """LID 0xC0: the device's counters (architecture.md §1.1)."""
        return decode_log((yield from self.get_log_page(LID_DEVICE, 512)).data)   # LID 0xC0 = GET_LOG (§1.1)

    def abort(self, sqid: int, cid: int) -> Gen[int]:
        """Abort; returns DW0 (bit 0 = 1: not aborted)."""
        cmd = yield from self.admin(Sqe(ADM_ABORT, cdw10=cid << 16 | sqid), what="Abort")
        return cmd.cqe.dw0

    def submit_aer(self) -> Gen[Command]:
        """Asynchronous Event Request (stays outstanding: atomssd generates no events)."""
        return (yield from self.submit(0, Sqe(ADM_AER), what="AER"))

    # ------------------------------------------------------------------ I/O commands: submit only
    def submit_read(self, qid: int, lba: int, nblocks: int, *, txid: int = 0, attr: int = ATTR_SIMPLE, tx: bool = False,
                    offset: int = 0, ring: bool = True, nsid: int = 1) -> Gen[Command]:
        """Read (or TX Read when `tx`, a txid or an attribute is given) of `nblocks` blocks; the data
        is in `.data` at completion."""
        if nblocks < 1:
            raise ValueError(f"read of {nblocks} blocks")
        n = nblocks * self.lba_bytes
        self._check_xfer(n)
        vendor = tx or txid or attr
        sqe = Sqe(IO_TX_READ if vendor else IO_READ, nsid=nsid, cdw12=nblocks - 1,
                  cdw13=vendor_cdw13(txid, attr=attr) if vendor else 0)
        sqe.set_slba(lba)
        return (yield from self._data_cmd(qid, sqe, n, offset, to_host=True, ring=ring,
                                          what=f"read {lba}+{nblocks}"))

    def submit_write(self, qid: int, lba: int, data: bytes, *, fua: bool = False, txid: int = 0,
                     commit: bool = False, barrier: bool = False, attr: int = ATTR_SIMPLE, tx: bool = False,
                     offset: int = 0, ring: bool = True, nsid: int = 1) -> Gen[Command]:
        """Write (or TX Write when `tx` or any vendor field is given) of whole blocks."""
        if not data or len(data) % self.lba_bytes:
            raise ValueError(f"{len(data)} bytes is not a whole number of {self.lba_bytes}-byte blocks")
        self._check_xfer(len(data))
        vendor = tx or txid or commit or barrier or attr
        nlb = len(data) // self.lba_bytes - 1
        sqe = Sqe(IO_TX_WRITE if vendor else IO_WRITE, nsid=nsid, cdw12=nlb | int(fua) << 30,
                  cdw13=vendor_cdw13(txid, commit, barrier, attr) if vendor else 0)
        sqe.set_slba(lba)
        return (yield from self._data_cmd(qid, sqe, len(data), offset, data, ring=ring,
                                          what=f"write {lba}+{len(data) // self.lba_bytes}"))

    def submit_flush(self, qid: int, nsid: int = 1) -> Gen[Command]:
        return (yield from self.submit(qid, Sqe(IO_FLUSH, nsid=nsid), what="flush"))

    def submit_dsm(self, qid: int, ranges: Sequence[tuple[int, int]], deallocate: bool = True,
                   hints: int = 0) -> Gen[Command]:
        """Dataset Management of up to 8 (lba, blocks) ranges; AD set when `deallocate`."""
        if not 1 <= len(ranges) <= MAX_RANGES:
            raise ValueError(f"{len(ranges)} DSM ranges (1…{MAX_RANGES})")
        raw = dsm_list(ranges)
        sqe = Sqe(IO_DSM, nsid=1, cdw10=len(ranges) - 1, cdw11=(DSM_AD if deallocate else 0) | hints)
        return (yield from self._data_cmd(qid, sqe, len(raw), data=raw, what="dataset management"))

    def submit_tx(self, qid: int, opcode: int, txid: int, attr: int = ATTR_SIMPLE) -> Gen[Command]:
        """TX Begin / TX Commit / TX Abort (opcode IO_TX_BEGIN, IO_TX_COMMIT, IO_TX_ABORT)."""
        sqe = Sqe(opcode, nsid=1, cdw13=vendor_cdw13(txid, attr=attr))
        return (yield from self.submit(qid, sqe, what=f"tx {opcode:#04x} txid {txid}"))

    def submit_diff_write(self, qid: int, lba: int, byte_offset: int, data: bytes, txid: int, fua: bool = False,
                          attr: int = ATTR_SIMPLE, offset: int = 0) -> Gen[Command]:
        """DiffWrite: `data` at `byte_offset` of page `lba`, inside tx `txid`."""
        if not 0 <= byte_offset < 1 << 16 or len(data) >= 1 << 16:
            raise ValueError(f"DiffWrite at {byte_offset} of {len(data)} bytes: both must fit 16 bits")
        sqe = Sqe(IO_DIFF_WRITE, nsid=1, cdw12=int(fua) << 30, cdw13=vendor_cdw13(txid, attr=attr),
                  cdw14=len(data) << 16 | byte_offset)
        sqe.set_slba(lba)
        return (yield from self._data_cmd(qid, sqe, len(data), offset, data, what=f"diffwrite {lba}"))

    def submit_swrite(self, qid: int, ranges: Sequence[tuple[int, int]], data: bytes, *, nlb: int | None = None,
                      list_offset: int = 0x40, offset: int = 0) -> Gen[Command]:
        """SWRITE (0x8D, §1.11): the range list ((lba, blocks) in DSM's format) in a host buffer of
        its own at `list_offset` in its page (CDW14/15), NR = len(ranges) (1-based) in CDW10, the data
        (every range's blocks in list order) by PRPs, NLB (0-based) = the data's blocks − 1 unless
        `nlb` is given. Nothing is checked here: bad lists reach the device."""
        lst = dsm_list(ranges)
        if list_offset & 3 or list_offset + max(len(lst), 1) > PAGE:
            raise ValueError(f"list offset {list_offset}: dword aligned, the list inside its page")
        laddr, _, lbufs = yield from self.map_buffer(max(len(lst), 16), list_offset, lst)
        n = len(data) // self.lba_bytes if nlb is None else nlb + 1
        self._check_xfer(len(data))
        sqe = Sqe(IO_SWRITE, nsid=1, cdw10=len(ranges) & 0xFF, cdw12=(n - 1) & 0xFFFF,
                  cdw14=laddr & 0xFFFFFFFF, cdw15=laddr >> 32)
        addr, prps, bufs = yield from self.map_buffer(len(data), offset, data)
        sqe.prp1, sqe.prp2 = prps.prp1, prps.prp2
        return (yield from self.submit(qid, sqe, buffers=bufs + lbufs, what=f"swrite {len(ranges)} ranges"))

    def submit_range_flush(self, qid: int, ranges: Sequence[tuple[int, int]]) -> Gen[Command]:
        """Range Flush of up to 8 (lba, blocks) ranges."""
        if not 1 <= len(ranges) <= MAX_RANGES:
            raise ValueError(f"{len(ranges)} flush ranges (1…{MAX_RANGES})")
        raw = range_flush_list(ranges)
        sqe = Sqe(IO_RANGE_FLUSH, nsid=1, cdw10=len(ranges) - 1)
        return (yield from self._data_cmd(qid, sqe, len(raw), data=raw, what="range flush"))

    # ------------------------------------------------------------------ I/O commands: blocking
    def _done(self, cmd: Command) -> Gen[Command]:
        yield from self.wait(cmd)
        return cmd.check()

    def read(self, qid: int, lba: int, nblocks: int, **kw) -> Gen[bytes]:
        return (yield from self._done((yield from self.submit_read(qid, lba, nblocks, **kw)))).data

    def write(self, qid: int, lba: int, data: bytes, **kw) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_write(qid, lba, data, **kw))))

    def flush(self, qid: int, nsid: int = 1) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_flush(qid, nsid))))

    def dsm(self, qid: int, ranges: Sequence[tuple[int, int]], deallocate: bool = True) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_dsm(qid, ranges, deallocate))))

    def tx_begin(self, qid: int, txid: int) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_tx(qid, IO_TX_BEGIN, txid))))

    def tx_commit(self, qid: int, txid: int) -> Gen[int]:
        """TX Commit; returns DW0 (the core's result: entries committed)."""
        return (yield from self._done((yield from self.submit_tx(qid, IO_TX_COMMIT, txid)))).cqe.dw0

    def tx_abort(self, qid: int, txid: int) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_tx(qid, IO_TX_ABORT, txid))))

    def diff_write(self, qid: int, lba: int, byte_offset: int, data: bytes, txid: int, **kw) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_diff_write(qid, lba, byte_offset, data, txid, **kw))))

    def range_flush(self, qid: int, ranges: Sequence[tuple[int, int]]) -> Gen[Command]:
        return (yield from self._done((yield from self.submit_range_flush(qid, ranges))))


__all__ = [
    "Transport", "Req", "run_sync", "run_async", "NvmeDriver", "Command", "Sqe", "Cqe", "PrpSet", "build_prps",
    "prp_page_count", "prp_list_pages_needed", "ControllerInfo", "IdentifyController", "IdentifyNamespace",
    "SmartLog", "status_name", "STATUS_NAMES", "NvmeError", "NvmeTimeout", "ControllerFatal",
    "NvmeProtocolError", "NvmeStatusError", "vendor_cdw13", "range_flush_list", "dsm_list",
]
