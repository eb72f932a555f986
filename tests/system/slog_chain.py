# SPDX-License-Identifier: Apache-2.0
"""Version chains of one LBA for the host model once DIFFWRITE goes to the S-Log (docs/invariants.md
"S-Log"): a page's contents are a full version (a test page of tests/system/model.py, which carries
its identity in its first 16 bytes) followed by committed fragments applied in commit order. Plain
Python, from docs/invariants.md only; used by tests/system/test_slog_device.py (the `sim_slog` device's
own S-Log records under power cuts) and tested by tests/system/test_slog_chain.py.

A fragment's bytes carry their identity too (`frag_bytes`: a function of LBA and fragment number) and
never cover bytes 0-15, so a read tells which full version it starts from; `Chain.match` then says how
many of that version's fragments it shows. The rules it checks:
  INV-LBA (extended)  the page is a full version of this LBA (or zeros) with a prefix of the fragments
                      committed on it applied in commit order: every fragment up to some point, none
                      after; never a fragment on another version, never another LBA's bytes;
  INV-DUR             the state shown is not older than the newest required-durable event (a full
                      version or a fragment whose commit completed).
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

from model import page_bytes_for

HDR = 16          # the test page's identity (ATSD, lba, version, txid): fragments start at or after it


def frag_bytes(lba: int, frag: int, n: int) -> bytes:
    """n bytes (a multiple of 4) of fragment number `frag` of `lba`."""
    d = hashlib.blake2b(struct.pack("<II", lba, frag), digest_size=64, person=b"ats-frag").digest()
    return (d * (n // len(d) + 1))[:n]


@dataclass
class Event:
    kind: str                    # "full" (version; 0 = TRIM, reads zeros) or "frag"
    ident: int                   # the version number (full) or the fragment number (frag)
    off: int = 0
    length: int = 0
    txid: int = 0
    durable: bool = False        # required durable (a completed FUA / FLUSH / commit covers it)


@dataclass
class Chain:
    """One LBA's events in commit order (the order the device applies them)."""
    lba: int
    page_bytes: int
    events: list[Event] = field(default_factory=list)

    def full(self, version: int, txid: int = 0) -> Event:
        e = Event("full", version, txid=txid)
        self.events.append(e)
        return e

    def frag(self, frag: int, off: int, length: int, txid: int = 0) -> Event:
        assert off >= HDR and off % 4 == 0 and length % 4 == 0 and 0 < length and off + length <= self.page_bytes
        e = Event("frag", frag, off, length, txid)
        self.events.append(e)
        return e

    def contents(self, j: int) -> bytes:
        """The page after events 0 .. j (j = -1: never written, zeros)."""
        base = next((i for i in range(j, -1, -1) if self.events[i].kind == "full"), None)
        if base is None:
            out = bytearray(self.page_bytes)
            start = 0
        else:
            v = self.events[base]
            out = bytearray(page_bytes_for(self.lba, v.ident, v.txid, self.page_bytes) if v.ident
                            else bytes(self.page_bytes))
            start = base + 1
        for e in self.events[start:j + 1]:
            out[e.off:e.off + e.length] = frag_bytes(self.lba, e.ident, e.length)
        return bytes(out)

    def match(self, data: bytes) -> tuple[int | None, str]:
        """(j, "") when `data` is the state after events 0 .. j and no required-durable event is after
        j; (None, violation) otherwise."""
        if data[:4] == b"ATSD":
            lba, version, txid = struct.unpack_from("<III", data, 4)
            if lba != self.lba:
                return None, f"INV-LBA lba {self.lba} reads the data of lba {lba}"
            starts = [i for i, e in enumerate(self.events) if e.kind == "full" and e.ident == version]
        elif data[:HDR] == bytes(HDR):
            starts = [-1] + [i for i, e in enumerate(self.events) if e.kind == "full" and e.ident == 0]
        else:
            return None, f"INV-LBA lba {self.lba} reads garbage ({data[:16].hex()})"
        last_dur = max((i for i, e in enumerate(self.events) if e.durable), default=-1)
        # every state that gives this page (zeros may be the start and a later TRIM, equal bytes
        # several states): the newest one that is not older than the required-durable event
        hits = []
        for s in starts:
            end = next((i for i in range(s + 1, len(self.events)) if self.events[i].kind == "full"), len(self.events))
            hits += [j for j in range(s, end) if self.contents(j) == data]
        if hits:
            if max(hits) < last_dur:
                return None, (f"INV-DUR lba {self.lba} shows event {max(hits)} of {len(self.events)}, older than "
                              f"the required-durable event {last_dur}")
            return max(hits), ""
        return None, (f"INV-LBA lba {self.lba}: no full version with a prefix of its fragments in commit order "
                      f"gives this page")
