# SPDX-License-Identifier: Apache-2.0
"""Host-side model and invariant checker of the system tests (plain Python, written from
docs/invariants.md and docs/architecture.md, never from the RTL or the firmware).

Every page the tests write carries its identity: `ATSD`, lba, version, txid, then filler bytes that
are a function of (lba, version), so a read tells which write it returns (or zeros: never written,
trimmed). The model keeps, per LBA, every version in submission order with what the host saw
(accepted by the device, completed, required durable), and checks after each recovery:
  INV-LBA   a page is all zeros or a self-consistent page of this LBA (never garbage, never another
            LBA's data), and one of the versions submitted for it;
  INV-DUR   not older than the newest version required durable (FUA completed, completed before a
            completed FLUSH, or before a completed RFLUSH covering it, or in a completed commit);
  INV-ATOM  a transaction shows on all of its pages or on none (pages overwritten later aside),
            and on all of them if its commit completed; never one that was not committed;
  INV-ORDER if a write of epoch N+1 is visible, every write of epochs <= N is (or a newer version);
  INV-ISO   checked during the run: a READ without txid never returns an uncommitted tx page.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

MAGIC = b"ATSD"


def page_bytes_for(lba: int, version: int, txid: int, page_bytes: int) -> bytes:
    head = MAGIC + struct.pack("<III", lba, version, txid)
    fill = hashlib.blake2b(struct.pack("<II", lba, version), digest_size=64).digest()
    body = (fill * (page_bytes // len(fill) + 1))[:page_bytes - len(head)]
    return head + body


def decode(data: bytes, page_bytes: int):
    """(lba, version, txid) of a test page, 'zero' for an all-zero page, None for anything else."""
    if data == bytes(page_bytes):
        return "zero"
    if data[:4] != MAGIC:
        return None
    lba, version, txid = struct.unpack_from("<III", data, 4)
    if data != page_bytes_for(lba, version, txid, page_bytes):
        return None
    return lba, version, txid


@dataclass
class Ver:
    version: int          # 0 = trim (reads zeros)
    idx: int              # command submission index (global order)
    txid: int = 0
    tx_seq: int = 0       # which incarnation of the txid (0: no tx)
    epoch: int = 0
    accepted: bool = False
    completed: bool = False
    durable: bool = False  # required durable by a completed FUA / FLUSH / RFLUSH / commit


@dataclass
class TxRec:
    txid: int
    seq: int
    pages: dict[int, Ver] = field(default_factory=dict)   # lba -> its version in this tx
    commit_idx: int | None = None
    commit_done: bool = False
    committed_ok: bool = False     # commit completed with status OK
    aborted: bool = False


class Model:
    def __init__(self, nlba: int, page_bytes: int):
        self.nlba = nlba
        self.page_bytes = page_bytes
        self.vers: dict[int, list[Ver]] = {}
        self.next_version = 1
        self.idx = 0
        self.epoch = 0
        self.txs: list[TxRec] = []          # transactions not yet settled by a recovery check
        self.tx_by_seq: dict[int, TxRec] = {}   # every transaction (never pruned)
        self.open_tx: dict[int, TxRec] = {}
        self.tx_seq = 0
        self.violations: list[str] = []

    # ---- building the history
    def new_write(self, lba: int, txid: int = 0, barrier: bool = False) -> tuple[Ver, bytes]:
        self.idx += 1
        v = Ver(self.next_version, self.idx, txid, epoch=self.epoch)
        self.next_version += 1
        if barrier:
            self.epoch += 1           # the barrier write is the last write of its epoch
        if txid:
            tx = self.open_tx.get(txid)
            if tx is None:
                self.tx_seq += 1
                tx = self.open_tx[txid] = TxRec(txid, self.tx_seq)
                self.txs.append(tx)
                self.tx_by_seq[tx.seq] = tx
            v.tx_seq = tx.seq
            tx.pages[lba] = v
        self.vers.setdefault(lba, []).append(v)
        return v, page_bytes_for(lba, v.version, txid, self.page_bytes)

    def commit_submitted(self, tx: TxRec) -> None:
        """A transaction's pages take effect at its commit (the device remaps them then; in the log the
        commit is the newest request, docs/persistence.md section 4): each page moves to the end of
        its LBA's history, at the commit's position, so a plain write submitted between the tx's
        write and its commit is older than the tx's page."""
        for lba, v in tx.pages.items():
            hist = self.vers.get(lba, [])
            if v in hist:
                hist.remove(v)
                hist.append(v)
            v.idx = tx.commit_idx

    def new_trim(self, lba: int) -> Ver:
        self.idx += 1
        v = Ver(0, self.idx, epoch=self.epoch)
        self.vers.setdefault(lba, []).append(v)
        return v

    # ---- checks
    def allowed(self, lba: int) -> list[Ver]:
        vs = self.vers.get(lba, [])
        last_dur = max((i for i, v in enumerate(vs) if v.durable), default=-1)
        return vs[last_dur:] if last_dur >= 0 else [Ver(0, 0, accepted=True)] + vs

    def check_page(self, lba: int, data: bytes, where: str) -> Ver | None:
        """INV-LBA and INV-DUR for one LBA; returns the version it shows."""
        d = decode(data, self.page_bytes)
        if d is None:
            self.violations.append(f"{where}: INV-LBA lba {lba} reads garbage ({data[:16].hex()})")
            return None
        if d != "zero" and d[0] != lba:
            self.violations.append(f"{where}: INV-LBA lba {lba} reads the data of lba {d[0]}")
            return None
        ver = 0 if d == "zero" else d[1]
        cands = [v for v in self.allowed(lba) if v.version == ver and (ver == 0 or v.accepted)]
        if not cands:
            vs = self.vers.get(lba, [])
            self.violations.append(
                f"{where}: INV-DUR lba {lba} reads version {ver}; history "
                f"{[(v.version, v.idx, v.txid, 'A' if v.accepted else '-', 'C' if v.completed else '-', 'D' if v.durable else '-') for v in vs]}")
            return None
        return cands[-1]

    def check_all(self, shown: dict[int, Ver], where: str) -> None:
        """INV-ATOM and INV-ORDER over the LBAs read back (shown: lba -> version read)."""
        # atomicity
        for tx in self.txs:
            seen = [lba for lba, v in tx.pages.items() if lba in shown and shown[lba] is v]
            if not seen and not tx.committed_ok:
                continue
            applied = bool(seen) or tx.committed_ok
            if seen and (tx.aborted or tx.commit_idx is None):
                self.violations.append(f"{where}: INV-ATOM tx {tx.txid}#{tx.seq} was never committed "
                                       f"but lba {seen[0]} shows it")
                continue
            if applied:
                for lba, v in tx.pages.items():
                    if lba not in shown:
                        continue
                    s = shown[lba]
                    if s is v:
                        continue
                    # a newer version of the LBA (submitted after the commit) may hide the tx's page
                    if s.idx > (tx.commit_idx or 0) and (s.version != 0 or s.idx > v.idx):
                        continue
                    self.violations.append(f"{where}: INV-ATOM tx {tx.txid}#{tx.seq} applied (commit "
                                           f"{'completed' if tx.committed_ok else 'seen'}) but lba {lba} "
                                           f"shows version {s.version} (idx {s.idx})")
        # barrier order: the newest epoch visible
        vis = [s for s in shown.values() if s.idx and not s.txid and s.version]
        if not vis:
            return
        emax = max(s.epoch for s in vis)
        top = next((l, s) for l, s in shown.items() if s in vis and s.epoch == emax)
        for lba, s in shown.items():
            if s.txid:
                continue          # a tx page takes effect at its commit: INV-ATOM / INV-DUR cover it
            older = [v for v in self.vers.get(lba, []) if v.epoch < emax and v.accepted and not v.txid and v.version]
            if older and s.idx < older[-1].idx:
                self.violations.append(f"{where}: INV-ORDER a write of epoch {emax} is durable (lba {top[0]} "
                                       f"version {top[1].version}) but lba {lba} "
                                       f"shows version {s.version} (epoch {s.epoch}), older than version "
                                       f"{older[-1].version} of epoch {older[-1].epoch}")
