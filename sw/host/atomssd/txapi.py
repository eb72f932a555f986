# SPDX-License-Identifier: Apache-2.0
"""The transactional host API of atomssd (Python): plain, transactional, barrier and flush calls
over the NVMe vendor commands of docs/host-interface.md §1.5, on any `nvme.Transport` (the
full-system simulation, a model, a cocotb root complex).

    dev = AtomDevice(drv, transport)              # a driver that is brought up (nvme.bring_up)
    with dev.transaction() as tx:                 # commit at the end of the block, abort on an exception
        tx.write(10, page_a)
        tx.write(900, page_b)                     # both or neither survive a power cut
    dev.write(5, page, fua=True)                  # plain (FUA: durable when it returns)
    dev.barrier_write(6, page)                    # closes the epoch: nothing later is durable before it
    dev.atomic_write(64, four_pages)              # all or nothing (NVMe atomic write, NAWUPF)
    dev.static_tx([(10, a), (900, b)])            # SWRITE: a static transaction, all or nothing
    dev.flush(); dev.rflush([(10, 1), (900, 1)])

Transaction ids: the library owns the device's txids 1 … `num_tx` (IDENTIFY word 9, read from the
Identify Controller vendor words). `begin()` takes the lowest free one and, with `explicit` (the
default), opens it with TX Begin (a txid that still holds entries, e.g. left by another host or a
crashed program, gives TABLE_FULL: commit or abort it first); it is free again
after the commit or abort returned, or after a status that ended the transaction in the device
(TX_FULL / INDEX_FULL at a write or commit: the device aborted it, docs/architecture.md §2; after
such a write the library sends TX Abort so that the txid carries no stale status when reused).

A transaction holds at most `tx_entries` distinct pages (IDENTIFY word 10). The library counts
them and refuses a write that would exceed the limit *before* sending it (`TxError` TX_FULL, the
transaction still open and intact), so an application can commit and continue in a new one.

Atomic writes (docs/host-interface.md §1.10): `atomic_write` sends one Write of at most
`atomic_blocks` (NAWUPF + 1 when Identify Namespace has NSFEAT bit 1, else 1) blocks that does not
cross an NABSPF boundary, which the device makes all or nothing across power loss; a longer or
crossing one is refused before sending (`NotAtomicError`: a `TxError` Invalid Field, local), as Linux refuses a
RWF_ATOMIC write beyond its limits. The device reserves its last txid for them (and the `STX` below
it for its SWRITE engines, §1.11): `num_tx` here is what Identify reports (the core's less 1 + STX).

Errors: every device status other than Successful Completion raises `TxError` with the NVMe
{SCT, SC} and its name (§1.8: the vendor statuses BAD_TXID, TX_FULL, INDEX_FULL, TX_EMPTY,
TABLE_FULL are SCT 7 with the device code as SC). Queueing: `submit_*` calls return the driver's
`Command` without waiting (up to the SQ's depth in flight); `wait()` collects them. Blocking calls
are `submit_*` + `wait`.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from . import nvme
from .nvme import Command, NvmeDriver, NvmeStatusError, run_sync

SCT_VENDOR = 7
ST_BAD_TXID, ST_TX_FULL, ST_INDEX_FULL, ST_TX_EMPTY, ST_TABLE_FULL = 0x02, 0x04, 0x05, 0x06, 0x08
ENDS_TX = {(SCT_VENDOR, ST_TX_FULL), (SCT_VENDOR, ST_INDEX_FULL)}   # the device aborted the transaction
# SWRITE's range-list statuses (SCT 7; docs/host-interface.md §1.11; rtl/nvme/ats_nvme_pkg.sv SC_SW_*,
# compared with the package by sw/host/tests/test_txapi.py)
SW_NONE, SW_MANY, SW_PAGES, SW_EMPTY, SW_LENGTH, SW_OVERLAP = 0x20, 0x21, 0x22, 0x23, 0x24, 0x25


class TxError(RuntimeError):
    """A command of the API completed with an error status (or was refused before it was sent)."""

    def __init__(self, what: str, sct: int, sc: int, local: bool = False):
        self.sct, self.sc, self.local = sct, sc, local
        super().__init__(f"{what}: {nvme.status_name(sct, sc)} (SCT {sct}, SC {sc:#04x})"
                         + (" [refused by the library, not sent]" if local else ""))

    @property
    def status(self) -> tuple[int, int]:
        return self.sct, self.sc


class NotAtomicError(TxError):
    """`atomic_write` of a write the device cannot make atomic (longer than `atomic_blocks`, across
    an `atomic_boundary`, or beyond MDTS): refused before sending, never split. Status Invalid Field
    (what the device answers a bad field), `local` set; libatstx returns ATS_E_NOT_ATOMIC."""

    def __init__(self, what: str):
        super().__init__(what, 0, 0x02, local=True)


@dataclass
class DeviceInfo:
    lba_bytes: int
    num_lbas: int
    num_tx: int
    tx_entries: int
    max_transfer: int            # bytes per command (MDTS)
    atomic_blocks: int = 1       # NAWUPF + 1 (1: no multi-block atomic writes)
    atomic_boundary: int = 0     # NABSPF + 1 in blocks (0: no boundary)
    static_ranges: int = 0       # ranges an SWRITE carries (Identify byte 3136; 0: no SWRITE)
    static_pages: int = 0        # blocks an SWRITE carries (bytes 3138-3139)


class AtomDevice:
    """The API on one brought-up `NvmeDriver` and its transport; commands go to I/O queue `qid`.
    `runner(gen, transport)` runs the driver's generators (`nvme.run_sync` by default)."""

    def __init__(self, drv: NvmeDriver, transport: Any, qid: int = 1,
                 runner: Callable[[Any, Any], Any] = run_sync):
        if drv.ctrl is None or drv.ns is None or qid not in drv.sqs:
            raise ValueError("the driver is not brought up (bring_up with at least one I/O queue)")
        if not drv.ctrl.vendor_valid:
            raise ValueError("Identify Controller carries no atomssd vendor words (not an atomssd device?)")
        self.drv, self.tr, self.qid, self._run = drv, transport, qid, runner
        v = drv.ctrl.vendor
        raw = drv.ns.raw
        nawupf, nabo, nabspf = (int.from_bytes(raw[o:o + 2], "little") for o in (36, 42, 44)) if raw else (0, 0, 0)
        ok = drv.ns.nsfeat & 2 and nawupf and not nabo                  # NSABP, NAWUPF, NABO = 0
        c = drv.ctrl.raw
        swr, swp = (c[3136], int.from_bytes(c[3138:3140], "little")) if len(c) >= 3140 else (0, 0)
        swp = min(swp, drv.max_transfer // drv.lba_bytes)
        self.info = DeviceInfo(drv.lba_bytes, drv.ns.nsze, v["num_tx"], v["tx_entries"], drv.max_transfer,
                               nawupf + 1 if ok else 1, nabspf + 1 if ok and nabspf else 0,
                               swr if swr and swp else 0, swp if swr and swp else 0)
        self._free = list(range(1, self.info.num_tx + 1))
        self._open: dict[int, "Transaction"] = {}

    # ------------------------------------------------------------------ plumbing
    def run(self, gen):
        return self._run(gen, self.tr)

    def wait(self, cmds: Command | Sequence[Command], what: str = "") -> list[Command]:
        """Waits for `cmds`; raises TxError for the first one that failed (after all completed)."""
        cmds = [cmds] if isinstance(cmds, Command) else list(cmds)
        if cmds:
            self.run(self.drv.wait(cmds))
        for c in cmds:
            self._check(c, what or c.what)
        return cmds

    @staticmethod
    def _check(c: Command, what: str) -> Command:
        if c.cqe is None:
            raise TxError(f"{what}: dropped (the controller was reset)", 0, 0x06)
        if not c.cqe.ok:
            raise TxError(what, c.cqe.sct, c.cqe.sc)
        return c

    def _chunks(self, lba: int, data: bytes) -> Iterator[tuple[int, bytes]]:
        """(lba, bytes) pieces of at most MDTS, whole blocks."""
        b = self.info.lba_bytes
        if not data or len(data) % b:
            raise ValueError(f"{len(data)} bytes is not a whole number of {b}-byte blocks")
        step = max(b, self.info.max_transfer // b * b)
        for o in range(0, len(data), step):
            yield lba + o // b, data[o:o + step]

    # ------------------------------------------------------------------ plain I/O
    def submit_write(self, lba: int, data: bytes, *, fua: bool = False, barrier: bool = False) -> list[Command]:
        """Write (Write, or TX Write with TXID 0 and BARRIER for a barrier write): one command per
        MDTS piece; a barrier is put on the last piece only (it closes the epoch after the data)."""
        parts = list(self._chunks(lba, data))
        out = []
        for i, (l, d) in enumerate(parts):
            out.append(self.run(self.drv.submit_write(self.qid, l, d, fua=fua,
                                                      barrier=barrier and i == len(parts) - 1)))
        return out

    def write(self, lba: int, data: bytes, *, fua: bool = False) -> None:
        self.wait(self.submit_write(lba, data, fua=fua), f"write {lba}")

    def submit_atomic_write(self, lba: int, data: bytes, *, fua: bool = False) -> Command:
        """One Write the device makes all or nothing (module docstring); refused locally when it
        is longer than `atomic_blocks` or crosses an `atomic_boundary`."""
        b, i = self.info.lba_bytes, self.info
        if not data or len(data) % b:
            raise ValueError(f"{len(data)} bytes is not a whole number of {b}-byte blocks")
        n, bd = len(data) // b, i.atomic_boundary
        if n > i.atomic_blocks or n * b > i.max_transfer or (bd and lba // bd != (lba + n - 1) // bd):
            raise NotAtomicError(f"atomic write of {n} blocks at {lba} (unit {i.atomic_blocks}, boundary {bd})")
        return self.run(self.drv.submit_write(self.qid, lba, data, fua=fua))

    def atomic_write(self, lba: int, data: bytes, *, fua: bool = False) -> None:
        self.wait(self.submit_atomic_write(lba, data, fua=fua), f"atomic write {lba}")

    def submit_static_tx(self, ranges: Sequence[tuple[int, bytes]]) -> Command:
        """SWRITE without waiting (module docstring); the list checked as the device checks it."""
        i, b = self.info, self.info.lba_bytes
        if not i.static_ranges:
            raise TxError("static tx: the device has no SWRITE (Identify: no static-transaction limits)",
                          0, 0x01, local=True)
        rs = []
        for lba, data in ranges:
            if len(data) % b:
                raise ValueError(f"range at {lba}: {len(data)} bytes is not a whole number of {b}-byte blocks")
            rs.append((lba, len(data) // b))
        total = sum(n for _, n in rs)
        bad = (SW_NONE if not rs else SW_MANY if len(rs) > i.static_ranges else SW_PAGES if total > i.static_pages
               else SW_EMPTY if any(n == 0 for _, n in rs) else None)
        st = (SCT_VENDOR, bad) if bad else None
        if st is None and any(not 0 <= l or l + n > i.num_lbas for l, n in rs):
            st = (0, 0x80)
        if st is None and any(a < c + m and c < a + n for k, (a, n) in enumerate(rs) for c, m in rs[k + 1:]):
            st = (SCT_VENDOR, SW_OVERLAP)
        if st:
            raise TxError(f"static tx of {len(rs)} ranges, {total} blocks", *st, local=True)
        return self.run(self.drv.submit_swrite(self.qid, rs, b"".join(d for _, d in ranges)))

    def static_tx(self, ranges: Sequence[tuple[int, bytes]]) -> int:
        """A static transaction (SWRITE, docs/host-interface.md §1.11): every (lba, data) range written
        all or nothing across power loss, durable and visible as a whole when it returns; independent
        of this host's txids, several may run at once (`submit_static_tx`). A list the device would
        refuse (no range, more than `static_ranges` ranges or `static_pages` blocks, an empty range,
        one past the namespace, overlapping ranges) raises `TxError` with the device's status and
        `local` set, nothing sent; a device without SWRITE: Invalid Command Opcode, local. Returns
        DW0: the COMMIT write's result, its pages, i.e. the last range's length in blocks (§1.11).
        A Data Transfer Error (host memory failed) leaves the SWRITE all or nothing but either."""
        c = self.wait(self.submit_static_tx(ranges), f"static tx of {len(ranges)} ranges")[0]
        return c.cqe.dw0

    def barrier_write(self, lba: int, data: bytes, *, fua: bool = False) -> None:
        """A write that closes the current epoch (INV-ORDER: if anything written after it is durable,
        everything written before it and it are)."""
        self.wait(self.submit_write(lba, data, fua=fua, barrier=True), f"barrier write {lba}")

    def submit_read(self, lba: int, nblocks: int = 1, *, txid: int = 0) -> list[Command]:
        b = self.info.lba_bytes
        per = max(1, self.info.max_transfer // b)
        return [self.run(self.drv.submit_read(self.qid, lba + o, min(per, nblocks - o), txid=txid))
                for o in range(0, nblocks, per)]

    def read(self, lba: int, nblocks: int = 1) -> bytes:
        """Committed data only (never an open transaction's writes)."""
        return b"".join(c.data for c in self.wait(self.submit_read(lba, nblocks), f"read {lba}+{nblocks}"))

    def flush(self) -> None:
        """Every write completed before it is durable when it returns."""
        self.wait(self.run(self.drv.submit_flush(self.qid)), "flush")

    def submit_flush(self) -> Command:
        return self.run(self.drv.submit_flush(self.qid))

    def rflush(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Range flush (RFLUSH): only the completed writes to these (lba, blocks) ranges (≤ 8) are
        made durable, first; the rest of the buffer keeps coalescing."""
        self.wait(self.run(self.drv.submit_range_flush(self.qid, ranges)), "range flush")

    def trim(self, ranges: Sequence[tuple[int, int]]) -> None:
        self.wait(self.run(self.drv.submit_dsm(self.qid, ranges)), "trim")

    # ------------------------------------------------------------------ transactions
    def begin(self, explicit: bool = True) -> "Transaction":
        """A new transaction on the lowest free txid; `explicit` opens it with TX Begin (else the
        first TX Write opens it in the device)."""
        if not self._free:
            raise TxError("begin: every txid of this host is in use", SCT_VENDOR, ST_TABLE_FULL, local=True)
        txid = self._free.pop(0)
        tx = Transaction(self, txid)
        self._open[txid] = tx
        if explicit:
            try:
                self.wait(self.run(self.drv.submit_tx(self.qid, nvme.IO_TX_BEGIN, txid)), f"tx {txid} begin")
            except TxError:
                self._release(txid)
                raise
        return tx

    @contextmanager
    def transaction(self, explicit: bool = True) -> Iterator["Transaction"]:
        """`with dev.transaction() as tx:` commits when the block ends, aborts when it raises."""
        tx = self.begin(explicit)
        try:
            yield tx
        except BaseException:
            if tx.state == "open":
                try:
                    tx.abort()
                except TxError:
                    pass
            raise
        if tx.state == "open":
            tx.commit()

    def _release(self, txid: int) -> None:
        self._open.pop(txid, None)
        if txid not in self._free:
            self._free.append(txid)
            self._free.sort()

    @property
    def open_transactions(self) -> list[int]:
        return sorted(self._open)


class Transaction:
    """One open transaction (txid). Its writes are invisible to plain reads until `commit` returns;
    `read` sees them (read your writes). After a power cut before the commit returned the device
    recovers it as all or nothing (INV-ATOM)."""

    def __init__(self, dev: AtomDevice, txid: int):
        self.dev, self.txid = dev, txid
        self.pages: set[int] = set()
        self.state = "open"                          # open, committed, aborted
        self.entries = 0                             # DW0 of the TX Commit CQE (the core's result)
        self._cmt: Command | None = None             # a commit submitted and not yet completed

    def _live(self, what: str) -> None:
        if self.state != "open":
            raise TxError(f"tx {self.txid} {what}: the transaction is {self.state}", SCT_VENDOR, ST_BAD_TXID,
                          local=True)

    def _failed(self, e: TxError) -> None:
        """A write failed with a status that ends the transaction: the device keeps that status for
        the txid until a commit or abort, so the library aborts it before the txid is reused."""
        if e.status in ENDS_TX and not e.local:
            try:
                self.dev.wait(self.dev.run(self.dev.drv.submit_tx(self.dev.qid, nvme.IO_TX_ABORT, self.txid)))
            except TxError:
                pass
            self.state = "aborted"
            self.dev._release(self.txid)

    def submit_write(self, lba: int, data: bytes, *, commit: bool = False) -> list[Command]:
        """TX Write of whole blocks (one command per MDTS piece). `commit` marks the last piece as the
        transaction's commit block (TxSSD: the transaction commits atomically with it; the device
        orders it after the transaction's earlier writes)."""
        self._live("write")
        b = self.dev.info.lba_bytes
        new = {lba + i for i in range(len(data) // b)} - self.pages
        if len(self.pages) + len(new) > self.dev.info.tx_entries:
            raise TxError(f"tx {self.txid} write {lba}: {len(self.pages) + len(new)} pages, a transaction "
                          f"holds at most {self.dev.info.tx_entries}", SCT_VENDOR, ST_TX_FULL, local=True)
        self.pages |= new
        parts = list(self.dev._chunks(lba, data))
        out = [self.dev.run(self.dev.drv.submit_write(self.dev.qid, l, d, txid=self.txid,
                                                      commit=commit and i == len(parts) - 1))
               for i, (l, d) in enumerate(parts)]
        if commit:
            self._cmt = out[-1]
        return out

    def submit_commit(self) -> Command:
        """TX Commit without waiting (the device orders it after the transaction's earlier writes);
        `complete()` after it completed."""
        self._live("commit")
        self._cmt = self.dev.run(self.dev.drv.submit_tx(self.dev.qid, nvme.IO_TX_COMMIT, self.txid))
        return self._cmt

    def complete(self) -> int:
        """After the commit submitted with `submit_commit` or `submit_write(commit=True)` completed
        (`dev.wait`): the transaction is committed (DW0 of a TX Commit returned) or, for a
        status that ended it, aborted (TxError raised); the txid is free either way."""
        c = self._cmt
        if c is None or not c.done:
            raise RuntimeError(f"tx {self.txid}: no completed commit to complete")
        self._cmt = None
        ok = c.cqe is not None and c.cqe.ok
        self.state = "committed" if ok else "aborted"
        self.dev._release(self.txid)
        if not ok:
            AtomDevice._check(c, f"tx {self.txid} commit")
        self.entries = c.cqe.dw0 if c.sqe.opc == nvme.IO_TX_COMMIT else self.entries
        return self.entries

    def write(self, lba: int, data: bytes) -> None:
        try:
            self.dev.wait(self.submit_write(lba, data), f"tx {self.txid} write {lba}")
        except TxError as e:
            self._failed(e)
            raise

    def read(self, lba: int, nblocks: int = 1) -> bytes:
        """Read your writes: this transaction's latest pages, committed data elsewhere."""
        self._live("read")
        cmds = self.dev.submit_read(lba, nblocks, txid=self.txid)
        return b"".join(c.data for c in self.dev.wait(cmds, f"tx {self.txid} read {lba}"))

    def diff_write(self, lba: int, byte_offset: int, data: bytes) -> None:
        """DiffWrite (DiffTx): `data` at `byte_offset` of page `lba` (4-byte aligned, inside the page)."""
        self._live("diff write")
        if lba not in self.pages and len(self.pages) + 1 > self.dev.info.tx_entries:
            raise TxError(f"tx {self.txid} diff write {lba}", SCT_VENDOR, ST_TX_FULL, local=True)
        self.pages.add(lba)
        try:
            self.dev.wait(self.dev.run(self.dev.drv.submit_diff_write(self.dev.qid, lba, byte_offset, data,
                                                                      self.txid)), f"tx {self.txid} diffwrite {lba}")
        except TxError as e:
            self._failed(e)
            raise

    def commit(self) -> int:
        """TX Commit: returns when the whole transaction is durable and visible, with the CQE's DW0
        (the entries the commit applied: one per page of the transaction that reached the media, so
        at least its distinct pages; a page rewritten after its earlier version had been written
        back counts twice). A transaction with no write gives TX_EMPTY (and is closed; nothing is
        programmed). The COMMIT flag on the last write (`commit_write`) saves the commit record page."""
        self._live("commit")
        try:
            c = self.dev.wait(self.dev.run(self.dev.drv.submit_tx(self.dev.qid, nvme.IO_TX_COMMIT, self.txid)),
                              f"tx {self.txid} commit")[0]
        except TxError as e:
            self.state = "aborted" if e.status in ENDS_TX else "committed" if e.status == (SCT_VENDOR, ST_TX_EMPTY) \
                else self.state
            if self.state != "open":
                self.dev._release(self.txid)
            raise
        self.state, self.entries = "committed", c.cqe.dw0
        self.dev._release(self.txid)
        return self.entries

    def commit_write(self, lba: int, data: bytes) -> None:
        """The last write of the transaction carries COMMIT (no separate commit command)."""
        try:
            self.dev.wait(self.submit_write(lba, data, commit=True), f"tx {self.txid} commit write {lba}")
        except TxError as e:
            self._failed(e)
            raise
        self.state = "committed"
        self.dev._release(self.txid)

    def abort(self) -> None:
        """TX Abort: every write of the transaction is discarded."""
        self._live("abort")
        try:
            self.dev.wait(self.dev.run(self.dev.drv.submit_tx(self.dev.qid, nvme.IO_TX_ABORT, self.txid)),
                          f"tx {self.txid} abort")
        except TxError as e:
            if e.status != (SCT_VENDOR, ST_TX_EMPTY):
                raise
        self.state = "aborted"
        self.dev._release(self.txid)


__all__ = ["AtomDevice", "Transaction", "TxError", "NotAtomicError", "DeviceInfo", "NvmeStatusError"]
