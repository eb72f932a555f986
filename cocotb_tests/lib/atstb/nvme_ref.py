# SPDX-License-Identifier: Apache-2.0
"""Reference model of the NVMe front end (the device side of docs/host-interface.md §1 and
rtl/nvme/README.md), plain Python, written from those two pages only (not from the RTL).

What it models: the BAR0 registers (CAP … ACQ, doorbells, CC.EN / CC.SHN sequencing, CSTS), the
queue manager (SQ/CQ tables, round-robin arbitration with burst 1, `QDEPTH` command slots), SQE
decode and every front-end check of §1.5/§1.6/§1.8, PRP walking (PRP1 offset, PRP2 page or list,
chained lists), the §1 descriptors a command becomes (tag = slot, `dptr` / `aux` = window
addresses slot · 2^17 + byte offset), the admin commands, CQE writes (phase, SQ head, SQID, CID,
status with DNR) and MSIs. It is transaction-level, not cycle-level: `step()` does one unit of work
(fetch and decode one SQE, let the core execute one descriptor, post one CQE, …) and everything is
deterministic given the optional `random.Random` that picks among the possible units of work.

Inspectable results for an RTL test:
  - `descriptors`: every §1 descriptor issued, in issue order (`Descriptor.fields()` is the §1
    tuple; `data` the bytes the core reads through the window: write data, the RFLUSH range list);
  - `cqes`: every CQE written (`CqeRecord`, with its CQ index and raw 16 bytes);
  - `msis`: every MSI vector raised, in order.
The core is either the in-model `CoreStub` (a dict of LBA → page, transactions per txid, committed
on commit, dropped on abort; unmapped LBAs read as zeros) or the test: `take_descriptors()` and
`complete(tag, status, result)` (READ data first through `window_write`).

Interpretations where §1 is silent (each is listed in the module's report to the spec owners):
  - window byte offset = PRP1's offset in its page + the byte's position in the transfer, so
    `dptr` = slot << 17 | PRP1[11:0] and window page k is the transfer's k-th PRP page;
  - fields a command does not define are 0 in its descriptor (FLUSH/TX_* have lba = nlb = dptr =
    aux = 0; TRIM has dptr = 0; RFLUSH has lba = 0, dptr = 0 and `aux` = the list's window address;
    DIFFWRITE has nlb = 0 and FUA from CDW12[30]);
  - slots are allocated lowest-free first; the admin SQ is still fetched when every slot is in use
    (admin commands take no slot); one admin command is handled at a time;
  - CDW13 vendor fields are decoded for the vendor opcodes only (0x81…0x8C); for Flush / Write /
    Read / DSM CDW13 is NVMe's (hints) and ignored. Vendor fields the command does not use (COMMIT
    on a TX Read, …) are passed into the descriptor and left to the core (BAD_FIELD there);
  - check order: opcode, FUSE/PSDT, NSID, reserved CDW13 bits, MDTS / NR limits, PRP1 offset, then
    the PRP walk (PRP2 as a page or a chained list page with an offset, or a list entry with one:
    PRP Offset Invalid; an unreachable list: Data Transfer Error), then the DSM list;
  - DSM: ranges of length 0 are skipped; a range longer than 65,536 LBAs is Invalid Field; the
    TRIMs of one command share its tag and are issued one after the other (§1 tags are unique);
  - the SQ head in a CQE is the head right after that command's fetch; SMART counts commands
    completed OK when their CQE is written (Read/TX Read; Write/TX Write/DiffWrite, DiffWrite
    counting its length);
  - a data page the host cannot serve is found when the core reads/writes it (the descriptor is
    already issued; reads give zeros) and the command completes Data Transfer Error; an
    unreachable PRP list or DSM range list fails the command before any descriptor;
  - doorbell writes while CSTS.RDY = 0 are ignored; an invalid AQA at enable sets CFS like an
    invalid CC; masked MSIs are remembered and sent at unmask (INTMC); features (VWC, …) return
    to their defaults at EN 1→0; the shutdown FLUSH uses tag 0 and fetching stays stopped after
    SHST = 2 until the next reset; after EN 1→0 no further TRIM of a DSM is issued;
  - Identify CNS 0/3 need NSID 1, CNS 2 lists the NSIDs above CDW1.NSID; a Set Number of Queues
    after an I/O queue exists is Command Sequence Error; IV ≥ 32 is Invalid Interrupt Vector; a
    fifth outstanding AER is AER Limit Exceeded; queue base addresses ignore their low 12 bits;
    Get Log Page: offset not dword aligned, beyond the log, or a length above MDTS is Invalid
    Field; bytes past the end of the log read as zero;
  - Set / Get Features: only CDW10[7:0] (the FID) is decoded, for every FID: Save (CDW10[31]) and
    SEL (Get, CDW10[10:8]) are ignored, a Get returns the current value. FIDs 0xC0 … 0xFF are the
    device's (docs/architecture.md §1.2): one §1 FEATURE to the firmware (tag `qdepth`, lba = FID,
    nlb = 1 Set / 0 Get, aux = CDW11 for a Set, 0 for a Get; `fw_requests`), answered by
    `fw_features` (the firmware, `FwFeatures`); its status mapped as the core's (§1.8: BAD_FIELD →
    Invalid Field), DW0 = its result when OK, else 0. These keep their values over a controller
    reset (the firmware holds them); the front end does not know which vendor FIDs exist.

Atomic writes (docs/host-interface.md "Atomic writes"): `awu` = NAWUPF + 1 = the largest power of two
of at most MDTS in LBAs and at most `tx_entries`; a Write of 2 … `awu` LBAs inside one `awu`-aligned
group leaves as WRITE with COMMIT (FUA kept) on one of the `atx` atomic txids `num_tx` − `atx` + 1 …
`num_tx`: the atomic Writes take the pool's entries in turn (entry k, txid `num_tx` − `atx` + 1 + k,
then k + 1 mod `atx`, in decode order), each only once the WRITE of the entry's previous atomic Write
has completed (the decoder waits meanwhile); one completed with an error makes its txid dirty, and
the next atomic Write on that entry sends a TX_ABORT of it first under its own tag (the decoder waits
for its answer: OK / TX_EMPTY clears the mark and is not the command's status, its WRITE follows on
the same entry; any other status ends the command with it, still dirty, the entry not moved on); a
vendor command with a reserved TXID is BAD_TXID (7/0x02) after the CDW13 check; the firmware's
IDENTIFY word 9 (num_tx) reads min(word, `num_tx` − `atx` − `stx`) in Identify Controller.

Static transactions (docs/host-interface.md §1.11, `stx` ≥ 1 SWRITE engines): `swrite_plan` states
what an SWRITE (0x8D) does from its SQE fields and the bytes of its range list: the status of the
first failed check (in the documented order) or the WRITEs it issues (lba, nlb, data offset in
blocks; the last with COMMIT); txids `num_tx` − `atx` − `stx` + 1 … `num_tx` are the front end's (BAD_TXID
for a vendor command naming one; engine k's txid `num_tx` − `atx` − `stx` + 1 + k), dword 784 =
{sw_pages 16, stx 8, 8 ranges 8} (0 when stx = 0), dword 785 = {0, num_tx, num_tx − atx − stx + 1}, and the
same limits in Get Log Page LID 0xC0's counters k59 … k63 (`device_log`). The model
runs them as the RTL does: SWRITE's WRITEs one at a time on engine k's txid (the lowest free engine;
the decoder fetches nothing while an SWRITE waits for one), stopping at a failed one (the txid then
dirty: a TX_ABORT before its next WRITE, its OK / TX_EMPTY not the command's status); an SREAD's READ
waits (the decoder held) until every SWRITE / atomic Write taken before it has its CQE queued.
"""
from __future__ import annotations

import random
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from . import cmdq_model

PAGE = 4096                    # memory page size (CAP.MPSMIN = 0)
WIN_SHIFT = 17                 # window address = slot << 17 | byte offset
MDTS_BYTES = 16 * PAGE         # MDTS = 4
SQE_BYTES, CQE_BYTES = 64, 16
DB_BASE = 0x1000
BAR_BYTES = 0x4000
CC_MASK = 0x00FFFFF1                                # EN, CSS, MPS, AMS, SHN, IOSQES, IOCQES
ADM_BYTES = 512                # the firmware's IDENTIFY / GET_LOG answers (architecture.md §1.1)
IDENTIFY_MAGIC = 0x41545344

# §1 descriptor ops and flags (docs/architecture.md §1); IDENTIFY, GET_LOG and FEATURE are the
# firmware's (the admin commands' requests, tag `qdepth`), not CoreStub's
OP_READ, OP_WRITE, OP_DIFFWRITE, OP_TX_BEGIN, OP_TX_COMMIT, OP_TX_ABORT, OP_FLUSH, OP_RFLUSH, OP_TRIM = range(9)
OP_IDENTIFY, OP_GET_LOG, OP_FEATURE = 9, 10, 11
OP_NAMES = ["READ", "WRITE", "DIFFWRITE", "TX_BEGIN", "TX_COMMIT", "TX_ABORT", "FLUSH", "RFLUSH", "TRIM"]
F_FUA, F_BARRIER, F_COMMIT = 1, 2, 4

# §2 device status codes
ST_OK, ST_BAD_OP, ST_BAD_TXID, ST_BAD_LBA, ST_TX_FULL, ST_INDEX_FULL, ST_TX_EMPTY, ST_BAD_FIELD, \
    ST_TABLE_FULL = range(9)
ST_MEDIA_ERROR, ST_PROGRAM_FAIL = 0x10, 0x11
ST_NO_SPACE = 0x13

# NVMe statuses (SCT, SC), §1.8
SC_OK = (0, 0x00)
SC_INVALID_OPCODE = (0, 0x01)
SC_INVALID_FIELD = (0, 0x02)
SC_DATA_XFER = (0, 0x04)
SC_INTERNAL = (0, 0x06)
SC_INVALID_NS = (0, 0x0B)
SC_CMD_SEQ = (0, 0x0C)
SC_PRP_OFFSET = (0, 0x13)
SC_LBA_RANGE = (0, 0x80)
SC_CAP_EXCEEDED = (0, 0x81)
SC_CQ_INVALID = (1, 0x00)
SC_INVALID_QID = (1, 0x01)
SC_INVALID_QSIZE = (1, 0x02)
SC_AER_LIMIT = (1, 0x05)
SC_INVALID_IV = (1, 0x08)
SC_INVALID_LOG = (1, 0x09)
SC_INVALID_QDEL = (1, 0x0C)
SC_WRITE_FAULT = (2, 0x80)
SC_UNRECOVERED_READ = (2, 0x81)

DEVICE_TO_NVME = {
    ST_OK: SC_OK, ST_BAD_OP: SC_INVALID_OPCODE, ST_BAD_FIELD: SC_INVALID_FIELD, ST_BAD_LBA: SC_LBA_RANGE,
    ST_MEDIA_ERROR: SC_UNRECOVERED_READ, ST_PROGRAM_FAIL: SC_WRITE_FAULT, ST_NO_SPACE: SC_CAP_EXCEEDED,
    ST_BAD_TXID: (7, 0x02), ST_TX_FULL: (7, 0x04), ST_INDEX_FULL: (7, 0x05), ST_TX_EMPTY: (7, 0x06),
    ST_TABLE_FULL: (7, 0x08),
}

# NVMe opcodes
IO_FLUSH, IO_WRITE, IO_READ, IO_DSM = 0x00, 0x01, 0x02, 0x09
IO_TX_WRITE, IO_TX_READ, IO_TX_BEGIN, IO_DIFF_WRITE, IO_TX_COMMIT, IO_RANGE_FLUSH, IO_TX_ABORT = \
    0x81, 0x82, 0x84, 0x85, 0x88, 0x89, 0x8C
IO_SWRITE, IO_SREAD = 0x8D, 0x8E       # static transactions (§1.11)
SW_RANGES = 8
SC_SW_NONE, SC_SW_MANY, SC_SW_PAGES, SC_SW_EMPTY, SC_SW_LENGTH, SC_SW_OVERLAP = \
    (7, 0x20), (7, 0x21), (7, 0x22), (7, 0x23), (7, 0x24), (7, 0x25)
IO_OPCODES = {IO_FLUSH, IO_WRITE, IO_READ, IO_DSM, IO_TX_WRITE, IO_TX_READ, IO_TX_BEGIN, IO_DIFF_WRITE,
              IO_TX_COMMIT, IO_RANGE_FLUSH, IO_TX_ABORT}
VENDOR_OPCODES = {o for o in IO_OPCODES if o & 0x80}.union((IO_SWRITE, IO_SREAD))
ADM_DELETE_SQ, ADM_CREATE_SQ, ADM_GET_LOG, ADM_DELETE_CQ, ADM_CREATE_CQ, ADM_IDENTIFY, ADM_ABORT, \
    ADM_SET_FEATURES, ADM_GET_FEATURES, ADM_AER = 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0A, 0x0C
CDW13_DEFINED = 0x3F | 1 << 8 | 1 << 9 | 3 << 16      # TXID, COMMIT, BARRIER, ATTR
FID_VWC, FID_NUM_QUEUES, FID_INT_COALESCING, FID_ASYNC_EVENT = 0x06, 0x07, 0x08, 0x0B
FID_VENDOR = 0xC0              # Set / Get Features FIDs 0xC0 … 0xFF: the device's (FEATURE, architecture.md §1.2)
FEAT_SEAL_TIME = 0xC0          # FEATURE lba: the S-Log's seal time in clock cycles
FEAT_MAX = {FEAT_SEAL_TIME: 0xFFFF}   # each device feature's highest value (its range starts at 0)
LID_ERROR, LID_SMART, LID_FW_SLOT, LID_DEVICE = 0x01, 0x02, 0x03, 0xC0
LOG_BYTES = {LID_ERROR: 64, LID_SMART: 512, LID_FW_SLOT: 512, LID_DEVICE: ADM_BYTES}
LOG_FE_FIRST = 59               # LID 0xC0's counters k59 … k63 are the front end's (§1.11)
AER_MAX = 4                    # AERL + 1

# registers
REG_CAP, REG_VS, REG_INTMS, REG_INTMC, REG_CC, REG_CSTS, REG_AQA, REG_ASQ, REG_ACQ = \
    0x00, 0x08, 0x0C, 0x10, 0x14, 0x1C, 0x24, 0x28, 0x30


class ModelError(AssertionError):
    """The test or the core broke the model's interface (a spurious completion, a window access
    outside a command's data, …): a bug in the test bench, never a device status."""


class DmaError(Exception):
    """A host-memory access outside the host memory (the PCIe completion would carry an error)."""


class _Fail(Exception):
    """A front-end check failed: the command completes with `status` (SCT, SC)."""

    def __init__(self, status: tuple[int, int]):
        super().__init__(status)
        self.status = status


class HostMemory:
    """Sparse host memory of `limit` bytes (4 KiB pages, zero until written) with a bump allocator.
    Addresses at or above `limit` are unreachable: accesses raise DmaError."""

    def __init__(self, limit: int = 1 << 32, base: int = 0x10000):
        self.limit = limit
        self.pages: dict[int, bytearray] = {}
        self.next = base

    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or addr + n > self.limit:
            raise DmaError(f"host address {addr:#x}+{n} outside host memory ({self.limit:#x})")

    def read(self, addr: int, n: int) -> bytes:
        self._check(addr, n)
        out = bytearray()
        while n:
            pg, off = divmod(addr, PAGE)
            k = min(n, PAGE - off)
            p = self.pages.get(pg)
            out += p[off:off + k] if p is not None else bytes(k)
            addr, n = addr + k, n - k
        return bytes(out)

    def write(self, addr: int, data: bytes) -> None:
        self._check(addr, len(data))
        i = 0
        while i < len(data):
            pg, off = divmod(addr + i, PAGE)
            k = min(len(data) - i, PAGE - off)
            p = self.pages.setdefault(pg, bytearray(PAGE))
            p[off:off + k] = data[i:i + k]
            i += k

    def alloc(self, size: int, align: int = PAGE) -> int:
        addr = -(-self.next // align) * align
        self.next = addr + max(size, 1)
        self._check(addr, size)
        return addr


class BufferMemory:
    """A bytes-like store (bytearray, memoryview) as host memory starting at address `base`;
    accesses outside it raise DmaError. Same interface as HostMemory (no allocator)."""

    def __init__(self, buf: bytearray | memoryview, base: int = 0):
        self.buf = buf
        self.base = base

    def _off(self, addr: int, n: int) -> int:
        off = addr - self.base
        if off < 0 or off + n > len(self.buf):
            raise DmaError(f"host address {addr:#x}+{n} outside the host buffer")
        return off

    def read(self, addr: int, n: int) -> bytes:
        off = self._off(addr, n)
        return bytes(self.buf[off:off + n])

    def write(self, addr: int, data: bytes) -> None:
        off = self._off(addr, len(data))
        self.buf[off:off + len(data)] = data


@dataclass
class Descriptor:
    """One §1 descriptor as the front end issues it, plus where it came from (`sqid`, `cid`)."""
    op: int
    tag: int
    lba: int = 0
    nlb: int = 0
    txid: int = 0
    flags: int = 0
    attr: int = 0
    prio: int = 0
    dptr: int = 0
    aux: int = 0
    data: bytes | None = field(default=None, repr=False)   # what the core reads through the window
    sqid: int = 0
    cid: int = 0

    def fields(self) -> tuple[int, ...]:
        """The §1 fields in architecture.md order, for comparison with the RTL's m_cmd beats."""
        return (self.op, self.tag, self.lba, self.nlb, self.txid, self.flags, self.attr, self.prio,
                self.dptr, self.aux)


@dataclass
class CqeRecord:
    """One CQE written to host memory."""
    cqid: int
    index: int                      # entry index in the CQ
    dw0: int
    sqhd: int
    sqid: int
    cid: int
    phase: int
    sct: int
    sc: int
    dnr: int

    @property
    def status(self) -> tuple[int, int]:
        return (self.sct, self.sc)

    def to_bytes(self) -> bytes:
        st = self.sc | self.sct << 8 | self.dnr << 14
        return struct.pack("<IIHHHH", self.dw0, 0, self.sqhd, self.sqid, self.cid, self.phase | st << 1)


@dataclass
class NvmeRefConfig:
    """Front-end parameters (host-interface.md §1) and the device answers it relays."""
    qsize: int = 256               # QSIZE: entries per queue (CAP.MQES = QSIZE - 1)
    nq: int = 4                    # NQ: I/O queue pairs
    qdepth: int = 32               # QDEPTH: command slots (tags)
    page_bytes: int = 4096         # LBA size
    num_lbas: int = 16384
    num_tx: int = 32               # the core's txids; the last atx are the atomic writes' (reserved)
    tx_entries: int = 32           # TX_ENTRIES of ats_nvme: pages per transaction (bounds the atomic unit)
    stx: int = 0                   # STX of ats_nvme: SWRITE engines (txids num_tx - atx - stx + 1 … num_tx - atx)
    atx: int = 1                   # ATX of ats_nvme: atomic Writes' txids (num_tx - atx + 1 … num_tx)
    msi_vectors: int = 32          # MSI vectors the host allocated
    vid: int = 0x1D1D
    sn: str = "ATOMSSD-SIM-0001"
    mn: str = "atomssd transactional SSD"
    fr: str = "0000abcd"           # git short hash at build time
    fw_identify: bytes | None = None           # the firmware's IDENTIFY answer (default: from the above)
    fw_log: Callable[[], bytes] | None = None  # the firmware's GET_LOG answer (default: a few counters)
    fw_features: FwFeatures | None = None      # the firmware's FEATURE answers (default: FwFeatures())


def default_identify_words(cfg: NvmeRefConfig, tx_entries: int = 64) -> bytes:
    """The firmware's 16 IDENTIFY words (architecture.md §1.1) for the default 4 × 2 device."""
    w = [IDENTIFY_MAGIC, 1, 4, 2, 128, 64, cfg.page_bytes, 224, cfg.num_lbas, cfg.num_tx, tx_entries,
         cfg.qdepth, 8, 1, 0, 0]
    return struct.pack("<16I", *w)


@dataclass
class _Sq:
    qid: int
    base: int
    size: int
    cqid: int
    prio: int = 0
    head: int = 0
    tail: int = 0
    deleting: bool = False


@dataclass
class _Cq:
    qid: int
    base: int
    size: int
    iv: int = 0
    ien: bool = True
    head: int = 0
    tail: int = 0
    phase: int = 1
    pending: deque = field(default_factory=deque)   # (slot or None, CqeRecord without index/phase)


@dataclass
class _Slot:
    tag: int
    sqid: int
    cid: int
    opc: int
    sqhd: int
    pages: list[int] = field(default_factory=list)
    offset: int = 0
    length: int = 0
    dma_error: bool = False
    trims: deque = field(default_factory=deque)      # the DSM's TRIM descriptors still to issue
    first_bad: tuple[int, int] | None = None         # first non-OK NVMe status of its descriptors
    result: int = 0
    in_core: bool = False
    shutdown: bool = False
    swk: bool = False                                # an SWRITE or an atomic Write (SREAD waits for it)
    done: bool = False                               # its CQE is queued (no descriptor will follow)
    sw_eng: int | None = None                        # SWRITE: its engine
    sw_abort: bool = False                           # SWRITE: the descriptor in the core is the TX_ABORT
    atom_abort: bool = False                         # atomic Write: the descriptor in the core is the TX_ABORT
    atom_k: int | None = None                        # atomic Write: its pool entry


def _cdw(sqe: bytes) -> list[int]:
    return list(struct.unpack("<16I", sqe))


@dataclass
class _Cmd:
    """A decoded SQE."""
    opc: int
    fuse: int
    psdt: int
    cid: int
    nsid: int
    prp1: int
    prp2: int
    cdw: list[int]                  # cdw[10] … cdw[15] valid

    @classmethod
    def parse(cls, raw: bytes) -> "_Cmd":
        d = _cdw(raw)
        return cls(d[0] & 0xFF, (d[0] >> 8) & 3, (d[0] >> 14) & 3, d[0] >> 16, d[1], d[6] | d[7] << 32,
                   d[8] | d[9] << 32, d)

    @property
    def slba(self) -> int:
        return self.cdw[10] | self.cdw[11] << 32


def nvme_status(device_status: int) -> tuple[int, int]:
    """§1.8: the (SCT, SC) of a §2 device status; unknown codes are Internal Error."""
    return DEVICE_TO_NVME.get(device_status, SC_INTERNAL)


class FwFeatures:
    """The firmware's answer to a §1 FEATURE descriptor (docs/architecture.md §1.2), what the NVMe
    tests' firmware stand-ins and `NvmeRef` answer with: SEAL_TIME (lba 0xC0) held, default
    `seal_time`, a set takes 0 … 65,535 (`FEAT_MAX`); `seal=False` is a build without packing (0xC0
    unknown). Every other lba (bits above 7 included), `nlb` > 1 or a value out of range: BAD_FIELD,
    result 0, nothing changed. OK: result = the value after the command."""

    def __init__(self, seal_time: int = 0, seal: bool = True):
        self.values: dict[int, int] = {FEAT_SEAL_TIME: seal_time} if seal else {}

    def answer(self, d: Descriptor) -> tuple[int, int]:
        """(status, result) of FEATURE descriptor `d` (lba = FID, nlb 0 get / 1 set, aux = value)."""
        if d.lba not in self.values or d.nlb > 1:
            return ST_BAD_FIELD, 0
        if d.nlb == 1:
            if d.aux > FEAT_MAX[d.lba]:
                return ST_BAD_FIELD, 0
            self.values[d.lba] = d.aux
        return ST_OK, self.values[d.lba]

    def run(self, fid: int, value: int | None = None) -> tuple[int, int]:
        """(status, result) of a get (value None) or a set of `fid`: `answer` of that descriptor.
        The one reference of the device settings for every front end's and host library's test
        (NVMe, SATA, libatstx over NVMe and UDP)."""
        return self.answer(Descriptor(OP_FEATURE, 0, fid, 0 if value is None else 1, aux=value or 0))

    @property
    def seal(self) -> int | None:
        """SEAL_TIME's value, None on a build without it."""
        return self.values.get(FEAT_SEAL_TIME)


class CoreStub:
    """The device core in a few dicts (architecture.md §1–2, rtl/cmdq/README.md "Validation",
    rtl/wbuf/README.md "Transactions"): committed pages, one page dict per open txid (invisible to
    a READ without txid until the commit), unmapped LBAs read as zeros. Validation as the command
    queue's rules 1–8 (cmdq_model) plus the write buffer's DIFFWRITE and TRIM checks; a tx with more than `tx_entries` distinct
    pages fails its write with TX_FULL and its commit with TX_FULL (the tx is then gone).
    No space (rtl/wbuf/README.md "No space"): while `no_space` is set, WRITE, DIFFWRITE, TRIM, FLUSH,
    RFLUSH and a TX_COMMIT / TX_ABORT of a txid holding entries complete NO_SPACE, result 0, nothing
    changed; `execute(..., taken=m)` runs a WRITE that waited for a buffer slot after its first m pages
    when the bit rose: those m pages are in (a tx write's as entries of its txid, not committed: its
    COMMIT mark rides on the last page), NO_SPACE, result m."""

    def __init__(self, num_lbas: int, page_bytes: int, num_tx: int = 32, tx_entries: int = 64):
        self.num_lbas = num_lbas
        self.page_bytes = page_bytes
        self.num_tx = num_tx
        self.tx_entries = tx_entries
        self.pages: dict[int, bytes] = {}
        self.tx: dict[int, dict[int, bytes]] = {}
        self.tx_err: dict[int, int] = {}
        self.pages_written = 0
        self.pages_read = 0
        self.no_space = False

    def _reject(self, d: Descriptor) -> tuple[int, int]:
        """(status, result) of a descriptor the core refuses, (0, 0) when it is good: the command
        queue's validation (cmdq_model.reject_reason, the one Python copy of rtl/cmdq/README.md
        "Validation"; result 0xCE000000 | reason), then the write buffer's own checks
        (rtl/wbuf/README.md: DIFFWRITE offset and length in words within the page, TRIM without a
        txid; result 0)."""
        r = cmdq_model.reject_reason(dict(op=d.op, flags=d.flags, attr=d.attr, txid=d.txid, lba=d.lba,
                                          nlb=d.nlb, aux=d.aux), self.num_lbas, self.num_tx, tag_live=False)
        if r:
            return cmdq_model.REASON_STATUS[r], cmdq_model.REJ_MARK | r
        off, ln = d.aux & 0xFFFF, d.aux >> 16
        if d.op == OP_DIFFWRITE and (ln < 4 or off + ln > self.page_bytes or off % 4 or ln % 4):
            return ST_BAD_FIELD, 0
        if d.op == OP_TRIM and d.txid != 0:
            return ST_BAD_FIELD, 0
        return ST_OK, 0

    def execute(self, d: Descriptor, read: Callable[[int, int], bytes],
                write: Callable[[int, bytes], None], taken: int | None = None) -> tuple[int, int]:
        """Runs one descriptor; `read` / `write` are the front end's window. Returns (status, result).
        `taken`: a WRITE ended by no space after that many pages (class docstring)."""
        st, res = self._reject(d)
        if st:
            return st, res
        if taken is not None:
            assert d.op == OP_WRITE and 0 < taken <= d.nlb, (d, taken)
            pb = self.page_bytes
            data = read(d.dptr, taken * pb)
            pages = {d.lba + i: data[i * pb:(i + 1) * pb] for i in range(taken)}
            self.pages_written += taken
            if d.txid:
                self._tx_put(d.txid, pages)
            else:
                self.pages.update(pages)
            return ST_NO_SPACE, taken
        if self.no_space and (d.op in (OP_WRITE, OP_DIFFWRITE, OP_TRIM, OP_FLUSH, OP_RFLUSH) or
                              d.op in (OP_TX_COMMIT, OP_TX_ABORT) and (self.tx.get(d.txid) or d.txid in self.tx_err)):
            return ST_NO_SPACE, 0
        return getattr(self, "_" + OP_NAMES[d.op].lower())(d, read, write)

    def _page(self, lba: int, txid: int) -> bytes:
        if txid and lba in self.tx.get(txid, {}):
            return self.tx[txid][lba]
        return self.pages.get(lba, bytes(self.page_bytes))

    def _read(self, d, read, write):
        write(d.dptr, b"".join(self._page(d.lba + i, d.txid) for i in range(d.nlb + 1)))
        self.pages_read += d.nlb + 1
        return ST_OK, 0

    def _tx_put(self, txid: int, pages: dict[int, bytes]) -> int:
        if txid in self.tx_err:
            return self.tx_err[txid]
        t = self.tx.setdefault(txid, {})
        if len(t.keys() | pages.keys()) > self.tx_entries:
            self.tx_err[txid] = ST_TX_FULL
            return ST_TX_FULL
        t.update(pages)
        return ST_OK

    def _commit(self, txid: int) -> tuple[int, int]:
        err = self.tx_err.pop(txid, None)
        t = self.tx.pop(txid, {})
        if err:
            return err, 0
        if not t:
            return ST_TX_EMPTY, 0
        self.pages.update(t)
        return ST_OK, len(t)

    def _write(self, d, read, write):
        pb = self.page_bytes
        data = read(d.dptr, (d.nlb + 1) * pb)
        pages = {d.lba + i: data[i * pb:(i + 1) * pb] for i in range(d.nlb + 1)}
        self.pages_written += d.nlb + 1
        if not d.txid:
            self.pages.update(pages)
            return ST_OK, 0
        st = self._tx_put(d.txid, pages)
        if d.flags & F_COMMIT:
            st2, _ = self._commit(d.txid)
            return (st or st2), (d.nlb + 1 if not (st or st2) else 0)
        return st, 0

    def _diffwrite(self, d, read, write):
        off, ln = d.aux & 0xFFFF, d.aux >> 16
        base = self._page(d.lba, d.txid)
        new = base[:off] + read(d.dptr, ln) + base[off + ln:]
        st = self._tx_put(d.txid, {d.lba: new})
        return st, 1 if st == ST_OK else 0

    def _tx_begin(self, d, read, write):
        # a txid that still holds entries (writes since its last commit / abort) is refused: the
        # leftovers must be committed or aborted first (docs/architecture.md section 1)
        if self.tx.get(d.txid) or d.txid in self.tx_err:
            return ST_TABLE_FULL, 0
        return ST_OK, 0

    def _tx_commit(self, d, read, write):
        return self._commit(d.txid)       # result: the entries the commit applied (distinct pages here)

    def _tx_abort(self, d, read, write):
        err = self.tx_err.pop(d.txid, None)
        t = self.tx.pop(d.txid, {})
        return (ST_TX_EMPTY if not t and err is None else ST_OK), 0

    def _flush(self, d, read, write):
        return ST_OK, 0

    def _rflush(self, d, read, write):
        read(d.aux, (d.nlb + 1) * 8)
        return ST_OK, 0

    def _trim(self, d, read, write):
        for lba in range(d.lba, d.lba + d.nlb + 1):
            self.pages.pop(lba, None)
        return ST_OK, 0


class NvmeRef:
    """The NVMe front end: registers, queues, slots, descriptors, CQEs, MSIs (module docstring)."""

    def __init__(self, cfg: NvmeRefConfig | None = None, mem: HostMemory | BufferMemory | bytearray | None = None,
                 core: CoreStub | None = None, rng: random.Random | None = None):
        """`mem`: host memory (HostMemory, BufferMemory or a bytearray at address 0); `core`: the
        in-model core, or None when the test is the core; `rng`: picks among the possible units of
        work at each step (None: a fixed priority, fetch first)."""
        self.cfg = cfg or NvmeRefConfig()
        if isinstance(mem, (bytearray, memoryview)):
            mem = BufferMemory(mem)
        self.mem = mem if mem is not None else HostMemory()
        self.core = core
        self.rng = rng
        self.fw_identify = self.cfg.fw_identify or default_identify_words(self.cfg)
        self.fw_log = self.cfg.fw_log or self._default_fw_log
        self.fw_features = self.cfg.fw_features if self.cfg.fw_features is not None else FwFeatures()
        self.fw_requests: list[Descriptor] = []     # the FEATURE descriptors sent to the firmware
        self.descriptors: list[Descriptor] = []
        self.cqes: list[CqeRecord] = []
        self.msis: list[int] = []
        self.irq: set[int] = set()
        self.cycle = 0
        # SMART counters (since power-on)
        self.bytes_read = self.bytes_written = self.read_cmds = self.write_cmds = 0
        # registers
        self.cc = self.aqa = self.asq = self.acq = 0
        self.intms = 0
        self.rdy = self.cfs = False
        self.shst = 0
        self._masked_pending: set[int] = set()
        self._eng_dirty = [False] * self.cfg.stx        # SWRITE engines' txids (kept over controller resets)
        self._atom_dirty = [False] * self.cfg.atx       # atomic txids after a failed atomic Write (kept too)
        self._atom_nx = 0                               # the pool entry the next atomic Write takes (kept)
        self._reset_state()

    # ------------------------------------------------------------------ state
    def _reset_state(self) -> None:
        self.sqs: dict[int, _Sq] = {}
        self.cqs: dict[int, _Cq] = {}
        self.slots: list[_Slot | None] = [None] * self.cfg.qdepth
        self.outbox: deque[Descriptor] = deque()      # issued, not yet taken by the core / test
        self._rr = 0
        self._admin_busy: tuple | None = None          # (deleting sqid, cid, sqhd)
        self._disabling = False
        self._held: tuple[Callable[[], bool], Callable[[], None]] | None = None   # the decoder waits
        self._eng: list[_Slot | None] = [None] * self.cfg.stx                  # SWRITE engines
        self._atom: list[_Slot | None] = [None] * self.cfg.atx   # entry k: the atomic Write in the core
        self._shutdown = False
        self._aers: list[int] = []
        self.features = {FID_VWC: 1, FID_INT_COALESCING: 0, FID_ASYNC_EVENT: 0}

    @property
    def cap(self) -> int:
        return (self.cfg.qsize - 1) | 1 << 16 | 20 << 24 | 1 << 37

    @property
    def csts(self) -> int:
        return int(self.rdy) | int(self.cfs) << 1 | self.shst << 2

    def busy_slots(self) -> list[_Slot]:
        return [s for s in self.slots if s is not None]

    # ------------------------------------------------------------------ registers
    def mmio_read32(self, off: int) -> int:
        """An aligned 32-bit read; anything else reads as 0 (§1.2)."""
        if off & 3:
            return 0
        regs = {REG_CAP: self.cap & 0xFFFFFFFF, REG_CAP + 4: self.cap >> 32, REG_VS: 0x00010400,
                REG_INTMS: self.intms, REG_INTMC: self.intms, REG_CC: self.cc, REG_CSTS: self.csts,
                REG_AQA: self.aqa, REG_ASQ: self.asq & 0xFFFFFFFF, REG_ASQ + 4: self.asq >> 32,
                REG_ACQ: self.acq & 0xFFFFFFFF, REG_ACQ + 4: self.acq >> 32}
        return regs.get(off, 0)

    def mmio_read64(self, off: int) -> int:
        """A 64-bit read is two dword reads (the RTL's 2-dword memory read)."""
        if off & 7:
            return 0
        return self.mmio_read32(off) | self.mmio_read32(off + 4) << 32

    def mmio_write64(self, off: int, value: int) -> None:
        if off & 7:
            return
        self.mmio_write32(off, value & 0xFFFFFFFF)
        self.mmio_write32(off + 4, value >> 32 & 0xFFFFFFFF)

    def mmio_write32(self, off: int, value: int) -> None:
        """An aligned 32-bit write; other writes are ignored (§1.2)."""
        value &= 0xFFFFFFFF
        if off & 3 or off >= BAR_BYTES:
            return
        if off >= DB_BASE:
            self._doorbell((off - DB_BASE) // 8, bool(off & 4), value)
        elif off == REG_INTMS:
            self.intms |= value
        elif off == REG_INTMC:
            self._unmask(value)
        elif off == REG_CC:
            self._write_cc(value)
        elif off == REG_AQA:
            self.aqa = value & 0x0FFF0FFF
        elif off in (REG_ASQ, REG_ASQ + 4, REG_ACQ, REG_ACQ + 4):
            name = "asq" if off < REG_ACQ else "acq"
            old = getattr(self, name)
            hi = off & 4
            new = (old & 0xFFFFFFFF) | value << 32 if hi else (old & ~0xFFFFFFFF) | (value & ~0xFFF)
            setattr(self, name, new)      # bits 11:0 are reserved: read as 0

    def _unmask(self, bits: int) -> None:
        self.intms &= ~bits
        for v in sorted(self._masked_pending):
            if not self.intms >> v & 1:
                self._masked_pending.discard(v)
                self._send_msi(v)

    def _write_cc(self, value: int) -> None:
        old, self.cc = self.cc, value & CC_MASK     # reserved bits 3:1 and 31:24 read as 0
        en_old, en_new = old & 1, value & 1
        if not en_old and en_new:
            self._enable()
        elif en_old and not en_new:
            self.intms = 0                              # a controller reset clears INTMS (§1.2)
            self._begin_disable()
        shn_old, shn_new = (old >> 14) & 3, (value >> 14) & 3
        if en_new and not shn_old and shn_new:
            self._begin_shutdown()

    def _enable(self) -> None:
        if self._disabling:
            return
        cc, qmax = self.cc, self.cfg.qsize - 1
        asqs, acqs = self.aqa & 0xFFF, (self.aqa >> 16) & 0xFFF
        ok = ((cc >> 4) & 7) == 0 and ((cc >> 7) & 0xF) == 0 and ((cc >> 11) & 7) == 0 and \
            ((cc >> 16) & 0xF) == 6 and ((cc >> 20) & 0xF) == 4 and 1 <= asqs <= qmax and 1 <= acqs <= qmax
        if not ok:
            self.cfs = True
            return
        self._reset_state()
        self.sqs[0] = _Sq(0, self.asq & ~0xFFF, asqs + 1, 0)
        self.cqs[0] = _Cq(0, self.acq & ~0xFFF, acqs + 1, iv=0, ien=True)
        self.shst = 0
        self.rdy = True

    def _begin_disable(self) -> None:
        self._disabling = True
        for cq in self.cqs.values():          # completions not yet written are dropped
            while cq.pending:
                slot, _ = cq.pending.popleft()
                if slot is not None:
                    self.slots[slot.tag] = None
        self._maybe_finish_disable()

    def _maybe_finish_disable(self) -> None:
        if self._disabling and not self.busy_slots():
            self._reset_state()
            self._masked_pending.clear()                 # MSIs held back are dropped with the queues
            self.irq.clear()
            self.rdy = self.cfs = False

    def _begin_shutdown(self) -> None:
        if not self.rdy:                                # nothing runs (an invalid CC): SHST stays 0
            return
        self.shst = 1
        self._shutdown = True

    def _doorbell(self, y: int, is_cq: bool, value: int) -> None:
        if not self.rdy or self._disabling:
            return
        q = self.cqs.get(y) if is_cq else self.sqs.get(y)
        if q is None or value >= q.size:
            self.cfs = True
            return
        if is_cq:
            dist = lambda a, b: (b - a) % q.size
            if dist(q.head, value) > dist(q.head, q.tail):
                self.cfs = True
                return
            q.head = value
        else:
            q.tail = value

    # ------------------------------------------------------------------ running
    def run(self, cycles: int) -> int:
        """Up to `cycles` units of work; stops early when idle. Returns the units done."""
        n = 0
        while n < cycles and self.step():
            n += 1
        return n

    def settle(self, limit: int = 1_000_000) -> int:
        """Runs until idle (nothing to fetch, execute or post)."""
        n = self.run(limit)
        if n >= limit:
            raise ModelError(f"not idle after {limit} steps")
        return n

    def step(self) -> bool:
        """One unit of work (module docstring); False when there is nothing to do."""
        acts = self._actions()
        if not acts:
            return False
        act = acts[0] if self.rng is None else self.rng.choice(acts)
        act()
        self.cycle += 1
        return True

    def _actions(self) -> list[Callable[[], None]]:
        acts: list[Callable[[], None]] = []
        qid = self._fetchable() if self._held is None else None
        if qid is not None:
            acts.append(lambda: self._fetch(qid))
        if self._held is not None and self._held[0]():
            acts.append(self._release_held)
        if self._admin_busy is not None and not self._disabling and self._admin_can_finish():
            acts.append(self._admin_finish)
        if self._shutdown and not self.busy_slots() and not self.outbox:
            acts.append(self._shutdown_flush)
        if self.core is not None and self.outbox:
            acts.append(self._core_step)
        for cq in self.cqs.values():
            if cq.pending and (cq.tail + 1) % cq.size != cq.head:
                acts.append(lambda cq=cq: self._post(cq))
        return acts

    def _release_held(self) -> None:
        _, go = self._held
        self._held = None
        go()

    def _running(self) -> bool:
        return self.rdy and not self.cfs and not self._disabling and self.shst == 0

    def _free_slot(self) -> int | None:
        return next((i for i, s in enumerate(self.slots) if s is None), None)

    def _fetchable(self) -> int | None:
        if not self._running():
            return None
        n = self.cfg.nq + 1
        for k in range(1, n + 1):
            qid = (self._rr + k) % n
            sq = self.sqs.get(qid)
            if sq is None or sq.deleting or sq.head == sq.tail:
                continue
            if qid == 0 and (self._admin_busy is not None):
                continue
            if qid != 0 and self._free_slot() is None:
                continue
            return qid
        return None

    def _fetch(self, qid: int) -> None:
        sq = self.sqs[qid]
        try:
            raw = self.mem.read(sq.base + sq.head * SQE_BYTES, SQE_BYTES)
        except DmaError:
            self.cfs = True
            return
        sq.head = (sq.head + 1) % sq.size
        self._rr = qid
        cmd = _Cmd.parse(raw)
        if qid == 0:
            self._admin(cmd, sq.head)
        else:
            self._io(cmd, sq, sq.head)

    # ------------------------------------------------------------------ DMA and PRPs
    def _dma_read(self, addr: int, n: int) -> bytes:
        try:
            return self.mem.read(addr, n)
        except DmaError:
            raise _Fail(SC_DATA_XFER) from None

    def prp_walk(self, prp1: int, prp2: int, length: int) -> list[int]:
        """The pages (host addresses) a transfer of `length` bytes covers, from PRP1/PRP2 (§1.4)."""
        if prp1 & 3:
            raise _Fail(SC_PRP_OFFSET)
        n = -(-((prp1 & 0xFFF) + length) // PAGE) if length else 0
        pages = [prp1 & ~0xFFF] if n else []
        if n == 2:
            if prp2 & 0xFFF:
                raise _Fail(SC_PRP_OFFSET)
            pages.append(prp2)
        elif n > 2:
            if prp2 & 7:
                raise _Fail(SC_PRP_OFFSET)
            ptr, left = prp2, n - 1
            while left:
                cap = (PAGE - (ptr & 0xFFF)) // 8
                take = left if left <= cap else cap - 1
                ents = struct.unpack(f"<{min(left, cap)}Q", self._dma_read(ptr, 8 * min(left, cap)))
                for e in ents[:take]:
                    if e & 0xFFF:
                        raise _Fail(SC_PRP_OFFSET)
                    pages.append(e)
                left -= take
                if left:
                    ptr = ents[cap - 1]
                    if ptr & 0xFFF:
                        raise _Fail(SC_PRP_OFFSET)
        return pages

    def _slot_of(self, waddr: int, n: int) -> tuple[_Slot, int]:
        tag, off = waddr >> WIN_SHIFT, waddr & ((1 << WIN_SHIFT) - 1)
        slot = self.slots[tag] if tag < len(self.slots) else None
        if slot is None or off < slot.offset or off + n > slot.offset + slot.length:
            raise ModelError(f"window access {waddr:#x}+{n} outside the data of slot {tag}")
        return slot, off

    def _win_chunks(self, slot: _Slot, off: int, n: int):
        while n:
            k = min(n, PAGE - (off & 0xFFF))
            yield slot.pages[off >> 12] + (off & 0xFFF), k
            off, n = off + k, n - k

    def window_read(self, waddr: int, n: int) -> bytes:
        """The core reads host memory at a window address; unreachable bytes read as 0 and mark the
        command Data Transfer Error."""
        slot, off = self._slot_of(waddr, n)
        out = bytearray()
        for addr, k in self._win_chunks(slot, off, n):
            try:
                out += self.mem.read(addr, k)
            except DmaError:
                slot.dma_error = True
                out += bytes(k)
        return bytes(out)

    def window_write(self, waddr: int, data: bytes) -> None:
        """The core writes host memory at a window address (READ data)."""
        slot, off = self._slot_of(waddr, len(data))
        i = 0
        for addr, k in self._win_chunks(slot, off, len(data)):
            try:
                self.mem.write(addr, data[i:i + k])
            except DmaError:
                slot.dma_error = True
            i += k

    def _host_write(self, prp1: int, prp2: int, data: bytes) -> None:
        """Admin data to the host through PRP1/PRP2 (the whole of `data`): every reachable page is
        written; an unreachable one makes the command Data Transfer Error (as the core's window
        writes: the pages after it are still written)."""
        pages = self.prp_walk(prp1, prp2, len(data))
        off, i, failed = prp1 & 0xFFF, 0, False
        while i < len(data):
            k = min(len(data) - i, PAGE - (off & 0xFFF))
            try:
                self.mem.write(pages[off >> 12] + (off & 0xFFF), data[i:i + k])
            except DmaError:
                failed = True
            off, i = off + k, i + k
        if failed:
            raise _Fail(SC_DATA_XFER)

    # ------------------------------------------------------------------ I/O commands
    def _alloc_slot(self, sqid: int, cmd: _Cmd, sqhd: int) -> _Slot:
        tag = self._free_slot()
        slot = _Slot(tag, sqid, cmd.cid, cmd.opc, sqhd)
        self.slots[tag] = slot
        return slot

    def _xfer_len(self, cmd: _Cmd) -> int:
        nlb = cmd.cdw[12] & 0xFFFF
        return {IO_WRITE: (nlb + 1) * self.cfg.page_bytes, IO_READ: (nlb + 1) * self.cfg.page_bytes,
                IO_SREAD: (nlb + 1) * self.cfg.page_bytes,
                IO_TX_WRITE: (nlb + 1) * self.cfg.page_bytes, IO_TX_READ: (nlb + 1) * self.cfg.page_bytes,
                IO_DIFF_WRITE: cmd.cdw[14] >> 16, IO_RANGE_FLUSH: ((cmd.cdw[10] & 0xFF) + 1) * 8,
                IO_DSM: ((cmd.cdw[10] & 0xFF) + 1) * 16}.get(cmd.opc, 0)

    def _io_check(self, cmd: _Cmd) -> None:
        if cmd.opc not in IO_OPCODES | {IO_SREAD} and not (cmd.opc == IO_SWRITE and self.cfg.stx):
            raise _Fail(SC_INVALID_OPCODE)
        if cmd.fuse or cmd.psdt:
            raise _Fail(SC_INVALID_FIELD)
        if cmd.nsid != 1 and not (cmd.opc == IO_FLUSH and cmd.nsid == 0xFFFFFFFF):
            raise _Fail(SC_INVALID_NS)
        if cmd.opc in VENDOR_OPCODES and cmd.cdw[13] & ~CDW13_DEFINED:
            raise _Fail(SC_INVALID_FIELD)
        if cmd.opc in (IO_SWRITE, IO_SREAD) and cmd.cdw[13]:
            raise _Fail(SC_INVALID_FIELD)
        if cmd.opc == IO_SWRITE and (cmd.cdw[10] >> 8 or cmd.cdw[11]):
            raise _Fail(SC_INVALID_FIELD)
        if cmd.opc in VENDOR_OPCODES and self.res0 <= cmd.cdw[13] & 0x3F <= self.cfg.num_tx:
            raise _Fail(DEVICE_TO_NVME[ST_BAD_TXID])
        if cmd.opc in (IO_READ, IO_WRITE, IO_TX_READ, IO_TX_WRITE, IO_SREAD) and self._xfer_len(cmd) > MDTS_BYTES:
            raise _Fail(SC_INVALID_FIELD)
        if cmd.opc in (IO_DSM, IO_RANGE_FLUSH) and (cmd.cdw[10] & 0xFF) > 7:
            raise _Fail(SC_INVALID_FIELD)

    def _swrite(self, cmd: _Cmd, sq: _Sq, slot: _Slot) -> None:
        """SWRITE (§1.11): the list, its checks, the data's PRPs, then an engine (the decoder waits
        for one)."""
        c = cmd.cdw
        laddr = c[14] | c[15] << 32
        st, plan = self.swrite_plan(c[10], c[11], c[12], c[13], laddr, None)   # the static checks
        if st not in (SC_OK, SC_DATA_XFER):
            raise _Fail(st)
        nr = c[10] & 0xFF
        try:
            lst = self.mem.read(laddr, 16 * nr)
        except DmaError:
            lst = None
        st, plan = self.swrite_plan(c[10], c[11], c[12], c[13], laddr, lst)
        if st != SC_OK:
            raise _Fail(st)
        slot.length = ((c[12] & 0xFFFF) + 1) * self.cfg.page_bytes
        slot.offset = cmd.prp1 & 0xFFF
        slot.pages = self.prp_walk(cmd.prp1, cmd.prp2, slot.length)
        slot.swk = True
        win = slot.tag << WIN_SHIFT | slot.offset

        def go() -> None:
            k = self._eng.index(None)
            self._eng[k] = slot
            slot.sw_eng = k
            base = dict(tag=slot.tag, prio=sq.prio, sqid=sq.qid, cid=cmd.cid, txid=self.res0 + k)
            descs = [Descriptor(OP_WRITE, lba=a, nlb=n, flags=fl, dptr=win + off * self.cfg.page_bytes, **base)
                     for a, n, off, fl in plan]
            if self._eng_dirty[k]:
                slot.sw_abort = True
                descs.insert(0, Descriptor(OP_TX_ABORT, **base))
            self._issue(slot, descs[0])
            slot.trims.extend(descs[1:])
        if None in self._eng:
            go()
        else:
            self._held = (lambda: None in self._eng, go)

    def _sw_complete(self, slot: _Slot, status: int, result: int) -> None:
        k = slot.sw_eng
        if slot.sw_abort:
            slot.sw_abort = False
            if status in (ST_OK, ST_TX_EMPTY):
                self._eng_dirty[k] = False
                self._issue(slot, slot.trims.popleft())
                return
        elif status == ST_OK and slot.trims:
            self._issue(slot, slot.trims.popleft())
            return
        elif status != ST_OK:
            self._eng_dirty[k] = True
        self._eng[k] = None
        slot.trims.clear()
        self._finish(slot, nvme_status(status), result)

    def _io(self, cmd: _Cmd, sq: _Sq, sqhd: int) -> None:
        slot = self._alloc_slot(sq.qid, cmd, sqhd)
        try:
            self._io_check(cmd)
            if cmd.opc == IO_SWRITE:
                self._swrite(cmd, sq, slot)
                return
            if cmd.opc & 3:
                slot.length = self._xfer_len(cmd)
                slot.offset = cmd.prp1 & 0xFFF
                slot.pages = self.prp_walk(cmd.prp1, cmd.prp2, slot.length)
            descs = self._io_descriptors(cmd, sq, slot)
        except _Fail as f:
            self._finish(slot, f.status)
            return
        if not descs:
            self._finish(slot, SC_OK)
            return
        if cmd.opc == IO_SREAD:                        # waits for the SWRITEs / atomic Writes before it
            mask = [x for x in self.slots if x is not None and x.swk and not x.done]
            d0 = descs[0]
            self._held = (lambda: all(x.done for x in mask), lambda: self._issue(slot, d0))
            return
        slot.swk = cmd.opc == IO_WRITE and self.is_atomic(cmd.slba, cmd.cdw[12] & 0xFFFF)
        if slot.swk:
            self._atomic(slot, descs[0])
            return
        self._issue(slot, descs[0])
        slot.trims.extend(descs[1:])

    def _atomic(self, slot: _Slot, w: Descriptor) -> None:
        """An atomic Write's WRITE (§1.10) on pool entry k = `_atom_nx` (txid `atom0` + k): issued once
        the entry's previous atomic Write's WRITE has completed (the decoder waits meanwhile); while
        the txid is dirty (a failed atomic Write may have left entries) a TX_ABORT of it goes first
        under the same tag, and the decoder waits for its answer (`complete`): OK / TX_EMPTY → the
        WRITE on the same entry, else the command ends with that status (the entry not moved on)."""
        k = self._atom_nx
        w.txid = self.atom0 + k

        def go() -> None:
            if self._atom_dirty[k]:
                slot.atom_abort = True
                slot.atom_k = k
                slot.trims.append(w)
                self._issue(slot, Descriptor(OP_TX_ABORT, tag=w.tag, prio=w.prio, sqid=w.sqid, cid=w.cid,
                                             txid=w.txid))
                self._held = (lambda: not slot.atom_abort, lambda: None)
            else:
                self._take_atom(slot, k, w)
        if self._atom[k] is None:
            go()
        else:
            self._held = (lambda: self._atom[k] is None, go)

    def _take_atom(self, slot: _Slot, k: int, w: Descriptor) -> None:
        self._atom[k] = slot
        slot.atom_k = k
        self._atom_nx = (k + 1) % self.cfg.atx
        self._issue(slot, w)

    @property
    def res0(self) -> int:
        """The first reserved txid (the SWRITE engines', then the atomic pool's)."""
        return self.cfg.num_tx - self.cfg.atx - self.cfg.stx + 1

    @property
    def atom0(self) -> int:
        """The first atomic Writes' txid."""
        return self.cfg.num_tx - self.cfg.atx + 1

    def _io_descriptors(self, cmd: _Cmd, sq: _Sq, slot: _Slot) -> list[Descriptor]:
        c13, nlb, opc = cmd.cdw[13], cmd.cdw[12] & 0xFFFF, cmd.opc
        fua = F_FUA if (cmd.cdw[12] >> 30 & 1 or not self.features[FID_VWC]) else 0
        win = slot.tag << WIN_SHIFT | slot.offset
        base = dict(tag=slot.tag, prio=sq.prio, sqid=sq.qid, cid=cmd.cid)
        vend = dict(txid=c13 & 0x3F, attr=(c13 >> 16) & 3,
                    flags=(F_COMMIT if c13 >> 8 & 1 else 0) | (F_BARRIER if c13 >> 9 & 1 else 0))
        if opc == IO_FLUSH:
            return [Descriptor(OP_FLUSH, **base)]
        if opc == IO_WRITE:
            if self.is_atomic(cmd.slba, nlb):           # the implicit transaction of an atomic write
                return [Descriptor(OP_WRITE, lba=cmd.slba, nlb=nlb, txid=self.atom0, flags=fua | F_COMMIT,
                                   dptr=win, data=self._gather(slot), **base)]
            return [Descriptor(OP_WRITE, lba=cmd.slba, nlb=nlb, flags=fua, dptr=win, data=self._gather(slot),
                               **base)]
        if opc in (IO_READ, IO_SREAD):
            return [Descriptor(OP_READ, lba=cmd.slba, nlb=nlb, dptr=win, **base)]
        if opc == IO_DSM:
            return self._dsm(cmd, slot, base)
        if opc == IO_TX_WRITE:
            vend["flags"] |= fua
            return [Descriptor(OP_WRITE, lba=cmd.slba, nlb=nlb, dptr=win, data=self._gather(slot), **vend, **base)]
        if opc == IO_TX_READ:
            return [Descriptor(OP_READ, lba=cmd.slba, nlb=nlb, dptr=win, **vend, **base)]
        if opc == IO_DIFF_WRITE:
            vend["flags"] |= fua
            return [Descriptor(OP_DIFFWRITE, lba=cmd.slba, dptr=win, aux=cmd.cdw[14], data=self._gather(slot),
                               **vend, **base)]
        if opc == IO_RANGE_FLUSH:
            return [Descriptor(OP_RFLUSH, nlb=cmd.cdw[10] & 0xFF, aux=win, data=self._gather(slot), **vend,
                               **base)]
        op = {IO_TX_BEGIN: OP_TX_BEGIN, IO_TX_COMMIT: OP_TX_COMMIT, IO_TX_ABORT: OP_TX_ABORT}[opc]
        return [Descriptor(op, **vend, **base)]

    def _gather(self, slot: _Slot) -> bytes | None:
        """The bytes the core will read through the window (None when the host memory is unreachable)."""
        if not slot.length:
            return b""
        err = slot.dma_error
        data = self.window_read(slot.tag << WIN_SHIFT | slot.offset, slot.length)
        if slot.dma_error:
            slot.dma_error = err        # the core's own read marks the error; the log just says None
            return None
        return data

    def _dsm(self, cmd: _Cmd, slot: _Slot, base: dict) -> list[Descriptor]:
        if not cmd.cdw[11] >> 2 & 1:                        # no AD: hints only
            return []
        raw = self.window_read(slot.tag << WIN_SHIFT | slot.offset, slot.length)
        if slot.dma_error:
            raise _Fail(SC_DATA_XFER)
        out = []
        for i in range((cmd.cdw[10] & 0xFF) + 1):
            _, length, slba = struct.unpack_from("<IIQ", raw, 16 * i)
            if length > 1 << 16:
                raise _Fail(SC_INVALID_FIELD)
            if length:
                out.append(Descriptor(OP_TRIM, lba=slba, nlb=length - 1, **base))
        return out

    def _issue(self, slot: _Slot, d: Descriptor) -> None:
        slot.in_core = True
        self.descriptors.append(d)
        self.outbox.append(d)

    def take_descriptors(self) -> list[Descriptor]:
        """Descriptors issued and not yet taken (for a test acting as the core)."""
        out = list(self.outbox)
        self.outbox.clear()
        return out

    def _core_step(self) -> None:
        i = 0 if self.rng is None else self.rng.randrange(len(self.outbox))
        d = self.outbox[i]
        del self.outbox[i]
        st, res = self.core.execute(d, self.window_read, self.window_write)
        self.complete(d.tag, st, res)

    def complete(self, tag: int, status: int, result: int = 0) -> None:
        """A §2 completion from the core for slot `tag`; a decoder wait it ends is released at once."""
        self._complete(tag, status, result)
        if self._held is not None and self._held[0]():
            self._release_held()

    def _complete(self, tag: int, status: int, result: int) -> None:
        slot = self.slots[tag] if 0 <= tag < len(self.slots) else None
        if slot is None or not slot.in_core:
            raise ModelError(f"completion for tag {tag}, which has no descriptor in the core")
        slot.in_core = False
        if slot.shutdown:
            self.slots[tag] = None
            self.shst = 2
            self._shutdown = False
            self._maybe_finish_disable()
            return
        if slot.sw_eng is not None:
            self._sw_complete(slot, status, result)
            return
        if slot.atom_abort:                            # the TX_ABORT before an atomic Write's WRITE
            slot.atom_abort = False
            if status in (ST_OK, ST_TX_EMPTY):
                self._atom_dirty[slot.atom_k] = False
                self._take_atom(slot, slot.atom_k, slot.trims.popleft())
            else:
                slot.trims.clear()
                self._finish(slot, nvme_status(status), result)
            return
        if slot.atom_k is not None and slot is self._atom[slot.atom_k]:
            self._atom[slot.atom_k] = None
            if status != ST_OK:
                self._atom_dirty[slot.atom_k] = True
        if status != ST_OK and slot.first_bad is None:
            slot.first_bad = nvme_status(status)
        slot.result = result
        if slot.trims and not self._disabling:       # a reset passes no more of a DSM's ranges
            self._issue(slot, slot.trims.popleft())
            return
        self._finish(slot, slot.first_bad or SC_OK, result)

    def _shutdown_flush(self) -> None:
        slot = _Slot(0, 0, 0, IO_FLUSH, 0, shutdown=True)
        self.slots[0] = slot
        self._issue(slot, Descriptor(OP_FLUSH, tag=0))

    # ------------------------------------------------------------------ completions
    def _finish(self, slot: _Slot | None, status: tuple[int, int], dw0: int = 0, sqid: int = 0, cid: int = 0,
                sqhd: int = 0) -> None:
        """Queues the CQE of a command (an I/O slot, or an admin command when slot is None)."""
        if slot is not None:
            slot.done = True
            if slot.dma_error:
                status = SC_DATA_XFER
            sqid, cid, sqhd = slot.sqid, slot.cid, slot.sqhd
            if self._disabling:
                self.slots[slot.tag] = None
                self._maybe_finish_disable()
                return
        cq = self.cqs[self.sqs[sqid].cqid]
        sct, sc = status
        rec = CqeRecord(cq.qid, -1, dw0, sqhd, sqid, cid, 0, sct, sc, int(status != SC_OK))
        cq.pending.append((slot, rec))

    def _count(self, slot: _Slot) -> None:
        if slot.opc in (IO_READ, IO_TX_READ, IO_SREAD):
            self.read_cmds += 1
            self.bytes_read += slot.length
        elif slot.opc in (IO_WRITE, IO_TX_WRITE, IO_DIFF_WRITE, IO_SWRITE):
            self.write_cmds += 1
            self.bytes_written += slot.length

    def _post(self, cq: _Cq) -> None:
        slot, rec = cq.pending.popleft()
        rec.index, rec.phase = cq.tail, cq.phase
        try:
            self.mem.write(cq.base + cq.tail * CQE_BYTES, rec.to_bytes())
        except DmaError:
            self.cfs = True
        self.cqes.append(rec)
        cq.tail = (cq.tail + 1) % cq.size
        if cq.tail == 0:
            cq.phase ^= 1
        if slot is not None:
            self.slots[slot.tag] = None
            if (rec.sct, rec.sc) == SC_OK:
                self._count(slot)                  # SMART counts a command when its CQE is written
        if cq.ien:
            v = cq.iv % self.cfg.msi_vectors
            if self.intms >> v & 1:
                self._masked_pending.add(v)
            else:
                self._send_msi(v)

    def _send_msi(self, v: int) -> None:
        self.msis.append(v)
        self.irq.add(v)

    # ------------------------------------------------------------------ admin commands
    def _admin(self, cmd: _Cmd, sqhd: int) -> None:
        handlers = {ADM_DELETE_SQ: self._adm_delete_sq, ADM_CREATE_SQ: self._adm_create_sq,
                    ADM_GET_LOG: self._adm_get_log, ADM_DELETE_CQ: self._adm_delete_cq,
                    ADM_CREATE_CQ: self._adm_create_cq, ADM_IDENTIFY: self._adm_identify,
                    ADM_ABORT: lambda c: 1, ADM_SET_FEATURES: self._adm_set_features,
                    ADM_GET_FEATURES: self._adm_get_features, ADM_AER: self._adm_aer}
        try:
            h = handlers.get(cmd.opc)
            if h is None:
                raise _Fail(SC_INVALID_OPCODE)
            if cmd.fuse or cmd.psdt:
                raise _Fail(SC_INVALID_FIELD)
            dw0 = h(cmd)
        except _Fail as f:
            self._finish(None, f.status, 0, 0, cmd.cid, sqhd)
            return
        if isinstance(dw0, _Later):
            self._admin_busy = (dw0.qid, cmd.cid, sqhd)
            return
        if dw0 is _NO_CQE:
            return
        self._finish(None, SC_OK, dw0, 0, cmd.cid, sqhd)

    def _admin_can_finish(self) -> bool:
        qid = self._admin_busy[0]
        return not any(s.sqid == qid for s in self.busy_slots())

    def _admin_finish(self) -> None:
        qid, cid, sqhd = self._admin_busy
        self._admin_busy = None
        del self.sqs[qid]
        self._finish(None, SC_OK, 0, 0, cid, sqhd)

    def _qid_size(self, cmd: _Cmd) -> tuple[int, int]:
        qid, size = cmd.cdw[10] & 0xFFFF, (cmd.cdw[10] >> 16) + 1
        if not 1 <= qid <= self.cfg.nq:
            raise _Fail(SC_INVALID_QID)
        return qid, size

    def _check_new_queue(self, cmd: _Cmd, table: dict) -> tuple[int, int]:
        qid, size = self._qid_size(cmd)
        if qid in table:
            raise _Fail(SC_INVALID_QID)
        if not 2 <= size <= self.cfg.qsize:
            raise _Fail(SC_INVALID_QSIZE)
        if not cmd.cdw[11] & 1:
            raise _Fail(SC_INVALID_FIELD)
        return qid, size

    def _adm_create_cq(self, cmd: _Cmd) -> int:
        qid, size = self._check_new_queue(cmd, self.cqs)
        iv, ien = cmd.cdw[11] >> 16, bool(cmd.cdw[11] >> 1 & 1)
        if iv >= 32:
            raise _Fail(SC_INVALID_IV)
        self.cqs[qid] = _Cq(qid, cmd.prp1 & ~0xFFF, size, iv=iv, ien=ien)
        return 0

    def _adm_create_sq(self, cmd: _Cmd) -> int:
        qid, size = self._check_new_queue(cmd, self.sqs)
        cqid, qprio = cmd.cdw[11] >> 16, (cmd.cdw[11] >> 1) & 3
        if cqid == 0 or cqid not in self.cqs:
            raise _Fail(SC_CQ_INVALID)
        self.sqs[qid] = _Sq(qid, cmd.prp1 & ~0xFFF, size, cqid, prio=3 - qprio)
        return 0

    def _adm_delete_sq(self, cmd: _Cmd):
        qid, _ = self._qid_size(cmd)
        sq = self.sqs.get(qid)
        if sq is None:
            raise _Fail(SC_INVALID_QID)
        sq.deleting = True                # unfetched entries are dropped
        if any(s.sqid == qid for s in self.busy_slots()):
            return _Later(qid)
        del self.sqs[qid]
        return 0

    def _adm_delete_cq(self, cmd: _Cmd) -> int:
        qid, _ = self._qid_size(cmd)
        if qid not in self.cqs:
            raise _Fail(SC_INVALID_QID)
        if any(sq.cqid == qid for sq in self.sqs.values()):
            raise _Fail(SC_INVALID_QDEL)
        del self.cqs[qid]
        return 0

    def _adm_identify(self, cmd: _Cmd) -> int:
        cns = cmd.cdw[10] & 0xFF
        if cns == 0:
            if cmd.nsid != 1:
                raise _Fail(SC_INVALID_NS)
            data = self.identify_namespace()
        elif cns == 1:
            data = self.identify_controller()
        elif cns == 2:
            if cmd.nsid >= 0xFFFFFFFE:
                raise _Fail(SC_INVALID_NS)
            data = struct.pack("<I", 1) + bytes(PAGE - 4) if cmd.nsid == 0 else bytes(PAGE)
        elif cns == 3:
            if cmd.nsid != 1:
                raise _Fail(SC_INVALID_NS)
            data = bytes(PAGE)
        else:
            raise _Fail(SC_INVALID_FIELD)
        self._host_write(cmd.prp1, cmd.prp2, data)
        return 0

    @property
    def awu(self) -> int:
        """The atomic write unit in LBAs (NAWUPF + 1)."""
        m = min(MDTS_BYTES // self.cfg.page_bytes, self.cfg.tx_entries)
        return 1 << (m.bit_length() - 1)

    @property
    def sw_pages(self) -> int:
        """The blocks one SWRITE may carry: what a txid holds, at most MDTS."""
        return min(self.cfg.tx_entries, MDTS_BYTES // self.cfg.page_bytes)

    def swrite_plan(self, cdw10: int, cdw11: int, cdw12: int, cdw13: int, laddr: int,
                    lst: bytes | None) -> tuple[tuple[int, int], list[tuple[int, int, int, int]]]:
        """An SWRITE's outcome before the core (§1.11), in the documented check order: (status, [])
        or (SC_OK, [(lba, nlb, offset in blocks, flags) per WRITE, the last with COMMIT]). `lst` = the
        range list's bytes as the device reads them (None: its memory read fails). Opcode, FUSE/PSDT
        and NSID are the caller's (as every command's); the data's PRP walk follows an OK."""
        nr, nlb = cdw10 & 0xFF, cdw12 & 0xFFFF
        if not self.cfg.stx:
            return SC_INVALID_OPCODE, []
        if cdw13 or cdw10 >> 8 or cdw11:
            return SC_INVALID_FIELD, []
        if nr == 0:
            return SC_SW_NONE, []
        if nr > SW_RANGES:
            return SC_SW_MANY, []
        if nlb + 1 > self.sw_pages:
            return SC_SW_PAGES, []
        if (laddr & 0xFFF) + 16 * nr > PAGE:
            return SC_INVALID_FIELD, []
        if laddr & 3:
            return SC_PRP_OFFSET, []
        if lst is None:
            return SC_DATA_XFER, []
        rng = [struct.unpack_from("<IIQ", lst, 16 * i)[1:] for i in range(nr)]   # (length, slba)
        if any(n == 0 for n, _ in rng):
            return SC_SW_EMPTY, []
        if sum(n for n, _ in rng) != nlb + 1:
            return SC_SW_LENGTH, []
        if any(a + n > self.cfg.num_lbas for n, a in rng):
            return SC_LBA_RANGE, []
        for i, (ni, ai) in enumerate(rng):
            for nj, aj in rng[i + 1:]:
                if ai < aj + nj and aj < ai + ni:
                    return SC_SW_OVERLAP, []
        out, off = [], 0
        for i, (n, a) in enumerate(rng):
            out.append((a, n - 1, off, F_COMMIT if i == nr - 1 else 0))
            off += n
        return SC_OK, out

    def is_atomic(self, slba: int, nlb: int) -> bool:
        """A Write the device makes all or nothing with an implicit transaction (nlb 0-based)."""
        return 1 <= nlb < self.awu and slba % self.awu + nlb < self.awu

    def identify_controller(self) -> bytes:
        """The 4 KiB Identify Controller data structure (§1.6)."""
        b = bytearray(PAGE)
        c = self.cfg
        struct.pack_into("<HH", b, 0, c.vid, c.vid)
        b[4:24] = c.sn.encode().ljust(20)[:20]
        b[24:64] = c.mn.encode().ljust(40)[:40]
        b[64:72] = c.fr.encode().ljust(8)[:8]
        b[77] = 4                                      # MDTS
        struct.pack_into("<HI", b, 78, 1, 0x00010400)  # CNTLID, VER
        struct.pack_into("<HBBBB", b, 256, 0, 3, 3, 0x03, 0x04)  # OACS, ACL, AERL, FRMW, LPA
        b[512], b[513] = 0x66, 0x44                    # SQES, CQES
        struct.pack_into("<IH", b, 516, 1, 0x0004)     # NN, ONCS (DSM)
        b[525] = 1                                     # VWC
        struct.pack_into("<HH", b, 526, self.awu - 1, self.awu - 1)   # AWUN, AWUPF
        b[3072:3136] = self.fw_identify[:64]
        w9 = struct.unpack_from("<I", b, 3072 + 36)[0]                 # num_tx: the reserved txids not
        struct.pack_into("<I", b, 3072 + 36, min(w9, self.res0 - 1))
        if self.cfg.stx:                               # SWRITE limits (§1.11)
            struct.pack_into("<BBH", b, 3136, SW_RANGES, self.cfg.stx, self.sw_pages)
        struct.pack_into("<BB", b, 3140, self.res0, self.cfg.num_tx)
        return bytes(b)

    def identify_namespace(self) -> bytes:
        b = bytearray(PAGE)
        n = self.cfg.num_lbas
        struct.pack_into("<QQQBBB", b, 0, n, n, n, 0x06, 0, 0)     # NSZE NCAP NUSE NSFEAT NLBAF FLBAS
        a = self.awu - 1                               # NAWUN NAWUPF NACWU NABSN NABO NABSPF NOIOB
        struct.pack_into("<HHHHHHH", b, 34, a, a, 0, a, 0, a, 0)
        struct.pack_into("<I", b, 128, (self.cfg.page_bytes.bit_length() - 1) << 16)   # LBAF0: LBADS
        return bytes(b)

    def smart_log(self) -> bytes:
        b = bytearray(512)
        struct.pack_into("<BHBBB", b, 0, 0, 313, 100, 0, 0)
        units = lambda n: -(-n // 512_000)
        for off, v in ((32, units(self.bytes_read)), (48, units(self.bytes_written)), (64, self.read_cmds),
                       (80, self.write_cmds)):
            b[off:off + 16] = v.to_bytes(16, "little")
        return bytes(b)

    def _default_fw_log(self) -> bytes:
        k = [0] * 64
        if self.core is not None:
            k[0] = self.core.pages_written
            k[1] = k[0] * self.cfg.page_bytes
        k[26], k[27] = self.cycle, 125_000_000
        return struct.pack("<64Q", *k)

    def device_log(self, fw: bytes | None = None) -> bytes:
        """Get Log Page LID 0xC0 (§1.11): the firmware's 512-byte GET_LOG answer (`fw`, default
        `fw_log()`; missing bytes 0) with its 64-bit counters k59 … k63 (bytes 472 … 511) replaced by the
        front end's: SW_RANGES, STX, SW_PAGES (both 0 when stx = 0), the first reserved txid
        num_tx − atx − stx + 1, the last atomic Writes' txid num_tx."""
        b = bytearray((self.fw_log() if fw is None else fw)[:ADM_BYTES].ljust(ADM_BYTES, b"\0"))
        c = self.cfg
        struct.pack_into("<5Q", b, 8 * LOG_FE_FIRST, SW_RANGES if c.stx else 0, c.stx,
                         self.sw_pages if c.stx else 0, self.res0, c.num_tx)
        return bytes(b)

    def _adm_get_log(self, cmd: _Cmd) -> int:
        lid = cmd.cdw[10] & 0xFF
        numd = ((cmd.cdw[11] & 0xFFFF) << 16 | cmd.cdw[10] >> 16) + 1
        off = cmd.cdw[12] | cmd.cdw[13] << 32
        if lid not in LOG_BYTES:
            raise _Fail(SC_INVALID_LOG)
        size = LOG_BYTES[lid]
        if off & 3 or off >= size or numd * 4 > MDTS_BYTES:
            raise _Fail(SC_INVALID_FIELD)
        log = {LID_SMART: self.smart_log, LID_DEVICE: self.device_log}.get(lid, lambda: bytes(size))()
        data = log[off:off + numd * 4]
        self._host_write(cmd.prp1, cmd.prp2, data + bytes(numd * 4 - len(data)))
        return 0

    def _fw_feature(self, fid: int, nlb: int, aux: int) -> int:
        """A vendor FID: one FEATURE to the firmware; its status is the command's, its result DW0."""
        d = Descriptor(OP_FEATURE, self.cfg.qdepth, lba=fid, nlb=nlb, aux=aux)
        self.fw_requests.append(d)
        st, res = self.fw_features.answer(d)
        if st != ST_OK:
            raise _Fail(nvme_status(st))
        return res

    def _adm_set_features(self, cmd: _Cmd) -> int:
        fid, v = cmd.cdw[10] & 0xFF, cmd.cdw[11]
        if fid >= FID_VENDOR:
            return self._fw_feature(fid, 1, v)
        if fid == FID_NUM_QUEUES:
            if (v & 0xFFFF) == 0xFFFF or (v >> 16) == 0xFFFF:
                raise _Fail(SC_INVALID_FIELD)
            if any(q != 0 for q in self.sqs) or any(q != 0 for q in self.cqs):
                raise _Fail(SC_CMD_SEQ)
            return (self.cfg.nq - 1) * 0x10001
        if fid in self.features:
            self.features[fid] = v & 1 if fid == FID_VWC else v
            return 0
        raise _Fail(SC_INVALID_FIELD)

    def _adm_get_features(self, cmd: _Cmd) -> int:
        fid = cmd.cdw[10] & 0xFF
        if fid >= FID_VENDOR:
            return self._fw_feature(fid, 0, 0)
        if fid == FID_NUM_QUEUES:
            return (self.cfg.nq - 1) * 0x10001
        if fid in self.features:
            return self.features[fid]
        raise _Fail(SC_INVALID_FIELD)

    def _adm_aer(self, cmd: _Cmd):
        if len(self._aers) >= AER_MAX:
            raise _Fail(SC_AER_LIMIT)
        self._aers.append(cmd.cid)
        return _NO_CQE


@dataclass
class _Later:
    """An admin command that completes later: Delete I/O SQ `qid` with commands in the core."""
    qid: int


_NO_CQE = object()    # admin command outstanding until a reset (AER)


class ModelTransport:
    """The driver's Transport (sw/host/atomssd/nvme.py) on top of an NvmeRef and its host memory:
    `wait(cycles)` runs the model for up to that many units of work."""

    def __init__(self, model: NvmeRef):
        self.model = model
        self.mem = model.mem

    def mmio_read32(self, off: int) -> int:
        return self.model.mmio_read32(off)

    def mmio_write32(self, off: int, value: int) -> None:
        self.model.mmio_write32(off, value)

    def mmio_write64(self, off: int, value: int) -> None:
        self.model.mmio_write64(off, value)

    def mem_alloc(self, size: int, align: int) -> int:
        return self.mem.alloc(size, align)

    def mem_write(self, addr: int, data: bytes) -> None:
        self.mem.write(addr, data)

    def mem_read(self, addr: int, n: int) -> bytes:
        return self.mem.read(addr, n)

    def wait(self, cycles: int) -> None:
        self.model.run(cycles)

    def irq_pending(self, vector: int) -> bool:
        return vector in self.model.irq

    def irq_clear(self, vector: int) -> None:
        self.model.irq.discard(vector)
