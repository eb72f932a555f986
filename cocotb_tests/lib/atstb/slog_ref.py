# SPDX-License-Identifier: Apache-2.0
"""Reference of DiffTx's differential log (S-Log), written from docs/persistence.md §10 alone (never
from the RTL): the log page and record format (encoder and decoder), the record completeness rules of
§10.5, the read merge (base + fragment list in commit order) and the merge / reclaim rules of
docs/architecture.md §11.6 as the volatile state `SlogState` keeps them.

`recovery_oracle.recover` uses it for the S-Log pages of the log (kind 1 with flag SLOG), MERGE pages
(kind 0, RELOC | SLOG) and version-3 checkpoints; `recovery_oracle.read_lpn` applies the fragments.

Sizes: P = page_bytes - 16 payload bytes a log page. A record at byte b of log page L (b >= 16) has its
byte x (0 <= x < `nbytes`) at log page L + (b - 16 + x) // P, byte 16 + (b - 16 + x) % P (§10.1).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

F_SLOG = 0x20
LOG_MAGIC = 0x474F4C53          # "SLOG"
PG_HDR = 16                     # log page header bytes
REC_TYPE, REC_VERSION = 0x01, 1
REC_HDR = 16                    # h0..h3
CF_BYTES = 8                    # one completeness flag
MPU_BYTES = 16                  # one META-PU
MAX_CF = 8
MAX_RECLEN = 255
NO_FIRST = 0xFFFF
UNKNOWN_PPN = 0xFFFFFFFF        # §10.4: a checkpoint fragment whose log page the writer could not name
LG16 = 1 << 16                  # an unknown page's LPGN is kept as its low 16 bits (`lg16`)


class ReadStatus:
    """A read's answer that is not data (`read_merged`, `recovery_oracle.read_lpn`): compares equal
    only to itself. MEDIA_ERROR: an LPN with an unknown page's fragment (§10.4)."""

    def __init__(self, name: str, status: int):
        self.name, self.status = name, status

    def __repr__(self) -> str:
        return self.name


MEDIA_ERROR = ReadStatus("MEDIA_ERROR", 0x10)       # the contract's status (docs/architecture.md §2)


def lpgn_ext_back(lg16: int, slog_lpgn: int) -> int:
    """§10.4: an unknown page's LPGN from its low 16 bits, the newest value below the checkpoint's
    `slog_lpgn` with those bits: slog_lpgn - 1 - ((slog_lpgn - 1 - lg16) mod 2^16), 32-bit."""
    return (slog_lpgn - 1 - ((slog_lpgn - 1 - lg16) % LG16)) & 0xFFFFFFFF


def _w(data: bytes, off: int) -> int:
    return int.from_bytes(data[off:off + 4], "little")


# ---------------------------------------------------------------------------------------------
# META-PU
@dataclass(frozen=True)
class MetaPU:
    lpn: int
    ppn: int                    # full: the transaction's page; diff: the base page
    is_diff: bool = False
    off: int = 0
    len: int = 0
    ver: int = 0
    dloc: int = 0               # byte offset of the fragment from the record's start (0 for full)

    def pack(self) -> bytes:
        m2 = (self.len & 0xFFF) | (self.off & 0xFFF) << 12 | (self.ver & 0x7F) << 24 | int(self.is_diff) << 31
        return struct.pack("<4I", self.lpn, self.ppn, m2, self.dloc)

    @staticmethod
    def unpack(b: bytes) -> "MetaPU":
        lpn, ppn, m2, dloc = struct.unpack("<4I", b)
        return MetaPU(lpn, ppn, bool(m2 >> 31), (m2 >> 12) & 0xFFF, m2 & 0xFFF, (m2 >> 24) & 0x7F, dloc)


@dataclass(frozen=True)
class Frag:
    """A fragment as the writer logs it: `data` replaces bytes off .. off + len(data) - 1 of the LPN's
    page at version `ver` (= k + 1) on base `base_ppn`."""
    lpn: int
    base_ppn: int
    ver: int
    off: int
    data: bytes


@dataclass(frozen=True)
class CFlag:
    txid: int
    reclen: int
    first_lpgn: int


# ---------------------------------------------------------------------------------------------
# writer
@dataclass
class Written:
    """What the writer did with one record."""
    txid: int
    first_lpgn: int
    first_byte: int             # `first` of its first page (byte offset in that page)
    reclen: int
    nbytes: int
    metas: list[MetaPU]
    cflag: CFlag                # the flag a later record carries for it


class LogWriter:
    """Packs records into log pages (§10.1, §10.2). `pack`=False is this version's writer: every record
    starts at byte 16 of a fresh page and its last page is padded (`used` = the record's end); True
    packs records back to back in the stream (the format allows it, for a later group commit).
    `pages()` returns the sealed pages as (LPGN, data)."""

    def __init__(self, page_bytes: int, lpgn: int = 0, pack: bool = False):
        assert page_bytes % 4 == 0 and page_bytes >= 64
        self.pb = page_bytes
        self.P = page_bytes - PG_HDR
        self.lpgn0 = lpgn
        self.pack = pack
        self.stream = bytearray()
        self.starts: list[int] = []               # stream offsets where a record starts
        self.ends: list[int] = []                 # stream offsets where a page is closed (padding after)
        self.page_used: dict[int, int] = {}       # page index -> used (closed pages)

    def _page_of(self, pos: int) -> int:
        return pos // self.P

    def add(self, txid: int, fulls: list[tuple[int, int]], frags: list[Frag],
            cflags: list[CFlag] = ()) -> Written:
        assert 1 <= txid <= 255 and len(cflags) <= MAX_CF
        if not self.pack and len(self.stream) % self.P:
            self.stream += bytes(self.P - len(self.stream) % self.P)
        s0 = len(self.stream)
        txlen = len(fulls) + len(frags)
        hlen = REC_HDR + CF_BYTES * len(cflags) + MPU_BYTES * txlen
        # body: each fragment at the next free byte, skipping to the next page when it would cross one
        locs = []
        p = hlen
        for f in frags:
            n = len(f.data)
            assert n > 0 and n % 4 == 0 and f.off % 4 == 0 and f.off + n <= self.pb and n <= self.P
            a = s0 + p
            if a // self.P != (a + n - 1) // self.P:
                p = (a // self.P + 1) * self.P - s0
            locs.append(p)
            p += n
        nbytes = p
        first_byte = PG_HDR + s0 % self.P
        reclen = (s0 % self.P + nbytes - 1) // self.P + 1
        assert reclen <= MAX_RECLEN
        metas = [MetaPU(lpn, ppn) for lpn, ppn in fulls]
        metas += [MetaPU(f.lpn, f.base_ppn, True, f.off, len(f.data), f.ver, loc) for f, loc in zip(frags, locs)]
        rec = bytearray(nbytes)
        rec[0:16] = struct.pack("<4I", REC_TYPE | REC_VERSION << 8 | len(cflags) << 16,
                                txid | txlen << 8 | reclen << 24, nbytes, 0)
        o = REC_HDR
        for c in cflags:
            rec[o:o + 8] = struct.pack("<2I", (c.txid & 0xFF) | (c.reclen & 0xFF) << 24, c.first_lpgn)
            o += 8
        for m in metas:
            rec[o:o + 16] = m.pack()
            o += 16
        for f, loc in zip(frags, locs):
            rec[loc:loc + len(f.data)] = f.data
        self.starts.append(s0)
        self.stream += rec
        first_lpgn = self.lpgn0 + s0 // self.P
        if not self.pack:
            self.close_page()
        return Written(txid, first_lpgn, first_byte, reclen, nbytes, metas, CFlag(txid, reclen, first_lpgn))

    def close_page(self) -> None:
        """End the current page at the stream's end (padding after `used`); the next record starts at
        byte 16 of the next page."""
        if len(self.stream) % self.P:
            self.page_used[len(self.stream) // self.P] = PG_HDR + len(self.stream) % self.P
            self.stream += bytes(self.P - len(self.stream) % self.P)

    def pages(self) -> list[tuple[int, bytes]]:
        """Every page of the stream so far (the last one closed)."""
        self.close_page()
        out = []
        for i in range(len(self.stream) // self.P):
            starts = [s for s in self.starts if s // self.P == i]
            first = PG_HDR + starts[0] % self.P if starts else NO_FIRST
            used = self.page_used.get(i, self.pb)
            payload = bytes(self.stream[i * self.P:i * self.P + used - PG_HDR])
            data = struct.pack("<2I2HI", LOG_MAGIC, self.lpgn0 + i, first, used, 0) + payload
            out.append((self.lpgn0 + i, data + bytes(self.pb - len(data))))
        return out


# ---------------------------------------------------------------------------------------------
# decoder
@dataclass
class LogPage:
    """A valid scanned log page (CRC held; spare kind 1, flag SLOG)."""
    lpgn: int
    seq: int
    ppn: int
    first: int
    used: int
    data: bytes


def log_page(data: bytes, seq: int, ppn: int, epoch: int, page_bytes: int) -> LogPage | None:
    """The page's header (§10.1), or None when it is not a well-formed log page (magic, LPGN = the
    spare's `epoch`, `first` / `used` in range, zero padding)."""
    magic, lpgn, first, used, z = struct.unpack_from("<2I2HI", data, 0)
    if magic != LOG_MAGIC or lpgn != epoch or z != 0:
        return None
    if not PG_HDR <= used <= page_bytes or used % 4:
        return None
    if first != NO_FIRST and not (PG_HDR <= first < used and first % 4 == 0):
        return None
    return LogPage(lpgn, seq, ppn, first, used, bytes(data[:page_bytes]))


@dataclass
class FragLoc:
    """A fragment of an LPN's list F: `len` bytes at `doff` of log page `ppn` replace bytes
    `off` .. `off` + `len` - 1 of the page; `seq` is its record's commit point. `ppn` = UNKNOWN_PPN: a
    checkpoint's unknown page (§10.4), `lpgn` its log page's LPGN (None for every other fragment); the
    LPN then reads MEDIA_ERROR until a write or TRIM empties its F."""
    ppn: int
    doff: int
    off: int
    len: int
    seq: int
    lpgn: int | None = None


@dataclass
class Parsed:
    """A record whose log pages were all scanned valid and whose stream parses (§10.5 "record")."""
    txid: int
    first_lpgn: int
    first_byte: int
    reclen: int
    nbytes: int
    first_seq: int
    commit_seq: int             # the commit point: its last log page's seq
    cflags: list[CFlag]
    metas: list[MetaPU]
    frag_at: list[tuple[int, int] | None]   # per META-PU: (log PPN, byte in that page) of a diff's data

    @property
    def key(self) -> CFlag:
        return CFlag(self.txid, self.reclen, self.first_lpgn)


def parse_record(pages: dict[int, LogPage], lpgn: int, b: int, page_bytes: int) -> tuple[Parsed | None, str]:
    """The record at byte `b` of log page `lpgn`: (Parsed, "") when complete, else (None, why)."""
    P = page_bytes - PG_HDR
    q0 = b - PG_HDR

    def at(x: int) -> tuple[LogPage | None, int]:
        q = q0 + x
        return pages.get(lpgn + q // P), PG_HDR + q % P

    def word(x: int) -> int | None:
        pg, o = at(x)
        return None if pg is None else _w(pg.data, o)

    h = [word(4 * i) for i in range(4)]
    if None in h:
        return None, "header page missing"
    h0, h1, nbytes, h3 = h
    if h0 & 0xFF != REC_TYPE or (h0 >> 8) & 0xFF != REC_VERSION or h0 >> 24 or h3:
        return None, "bad header"
    ncf = (h0 >> 16) & 0xFF
    txid, txlen, reclen = h1 & 0xFF, (h1 >> 8) & 0xFFFF, h1 >> 24
    hlen = REC_HDR + CF_BYTES * ncf + MPU_BYTES * txlen
    if ncf > MAX_CF or txid == 0 or reclen == 0 or nbytes % 4 or nbytes < hlen:
        return None, "bad header"
    if (q0 + nbytes - 1) // P + 1 != reclen:
        return None, "REC-LEN does not match bytes"
    seq0 = None
    for i in range(reclen):
        pg = pages.get(lpgn + i)
        if pg is None:
            return None, f"log page {lpgn + i} missing"
        if seq0 is None:
            seq0 = pg.seq
        if pg.seq != seq0 + i:
            return None, "log pages without consecutive seqs"
        if i < reclen - 1 and pg.used != page_bytes:
            return None, "a page the record continues past is not full"
    last = pages[lpgn + reclen - 1]
    if last.used < PG_HDR + (q0 + nbytes - 1) % P + 1:
        return None, "record ends after its last page's used"
    cflags = []
    for i in range(ncf):
        c0, c1 = word(REC_HDR + 8 * i), word(REC_HDR + 8 * i + 4)
        if c0 & 0x00FFFF00 or c0 >> 24 == 0:
            return None, "bad completeness flag"
        cflags.append(CFlag(c0 & 0xFF, c0 >> 24, c1))
    metas, frag_at = [], []
    o = REC_HDR + CF_BYTES * ncf
    for i in range(txlen):
        m = MetaPU.unpack(b"".join(word(o + 16 * i + 4 * k).to_bytes(4, "little") for k in range(4)))
        if not m.is_diff:
            if m.off or m.len or m.ver or m.dloc:
                return None, "full META-PU with fragment fields"
            frag_at.append(None)
        else:
            if (m.len == 0 or m.len % 4 or m.off % 4 or m.off + m.len > page_bytes or m.ver == 0
                    or m.dloc % 4 or m.dloc < hlen or m.dloc + m.len > nbytes):
                return None, "bad diff META-PU"
            if (q0 + m.dloc) // P != (q0 + m.dloc + m.len - 1) // P:
                return None, "fragment crosses a log page"
            pg, off = at(m.dloc)
            frag_at.append((pg.ppn, off))
        metas.append(m)
    return Parsed(txid, lpgn, b, reclen, nbytes, seq0, last.seq, cflags, metas, frag_at), ""


def find_records(pages: dict[int, LogPage], page_bytes: int) -> tuple[list[Parsed], int, int]:
    """Every complete record whose first log page is among `pages` (a page's `first`, and the records
    that follow one ending inside a page before its `used`); the count of records that start in a
    scanned page and do not parse (malformed: never written by a correct writer), and of those whose
    log pages are not all there (torn or not yet programmed at a cut)."""
    P = page_bytes - PG_HDR
    out, bad, partial, seen = [], 0, 0, set()
    for lpgn in sorted(pages):
        pg = pages[lpgn]
        b = pg.first
        while b != NO_FIRST and (lpgn, b) not in seen:
            seen.add((lpgn, b))
            r, why = parse_record(pages, lpgn, b, page_bytes)
            if r is None:
                if why.endswith("missing"):
                    partial += 1
                else:
                    bad += 1
                break
            out.append(r)
            end = b - PG_HDR + r.nbytes           # stream offset from the page's payload start
            if end >= P or PG_HDR + end >= pg.used:
                break                             # ends in a later page, or at this page's used
            b = PG_HDR + end
    return out, bad, partial


# ---------------------------------------------------------------------------------------------
# read merge
def merge_page(base: bytes, frags: list[tuple[int, bytes]]) -> bytes:
    """Base + fragments applied in order (later bytes win): each (off, data) replaces those bytes."""
    out = bytearray(base)
    for off, d in frags:
        out[off:off + len(d)] = d
    return bytes(out)


def frag_bytes(read_page, f: FragLoc) -> bytes:
    """The fragment's bytes from its log page (read_page(ppn) -> page data)."""
    return read_page(f.ppn)[f.doff:f.doff + f.len]


def read_merged(read_page, base_ppn: int | None, frags: list[FragLoc]) -> bytes | ReadStatus | None:
    """What an LPN reads: its base page with F applied (None: unmapped, F must be empty; MEDIA_ERROR:
    F holds an unknown page's fragment, §10.4: never the base without its fragments)."""
    if base_ppn is None:
        assert not frags, "unmapped LPN with fragments"
        return None
    if any(f.ppn == UNKNOWN_PPN for f in frags):
        return MEDIA_ERROR
    return merge_page(read_page(base_ppn), [(f.off, frag_bytes(read_page, f)) for f in frags])


# ---------------------------------------------------------------------------------------------
# the state recovery rebuilds and the device keeps: L2P and F, with §10.5's rules
@dataclass
class SlogState:
    l2p: dict[int, int] = field(default_factory=dict)
    F: dict[int, list[FragLoc]] = field(default_factory=dict)

    def copy(self) -> "SlogState":
        return SlogState(dict(self.l2p), {k: list(v) for k, v in self.F.items()})

    # full-page updates and TRIM: the fragments go
    def map_full(self, lpn: int, ppn: int) -> None:
        self.l2p[lpn] = ppn
        self.F.pop(lpn, None)

    def trim(self, lpn: int) -> None:
        self.l2p.pop(lpn, None)
        self.F.pop(lpn, None)

    def bases_ok(self, r: Parsed) -> bool:
        """§10.5 step 3 "bases": each diff META-PU, in order, finds (L2P, |F|) = (m1, ver - 1), counting
        the record's own earlier fragments of that LPN (and its full META-PUs before it)."""
        l2p, n = {}, {}
        for m in r.metas:
            if not m.is_diff:
                l2p[m.lpn], n[m.lpn] = m.ppn, 0
                continue
            base = l2p.get(m.lpn, self.l2p.get(m.lpn))
            k = n.get(m.lpn, len(self.F.get(m.lpn, [])))
            if base != m.ppn or k != m.ver - 1:
                return False
            l2p[m.lpn], n[m.lpn] = base, k + 1
        return True

    def apply_record(self, r: Parsed, fulls: bool = True) -> None:
        """The record's META-PUs in order (full: L2P := m1, F := []; diff: appended to F). `fulls`=False
        applies the diffs only (the prefix maps the full pages through the pending list, §10.5 step 2)."""
        for m, loc in zip(r.metas, r.frag_at):
            if not m.is_diff:
                if fulls:
                    self.map_full(m.lpn, m.ppn)
            else:
                self.F.setdefault(m.lpn, []).append(FragLoc(loc[0], loc[1], m.off, m.len, r.commit_seq))

    def merge(self, lpn: int, base_ppn: int, new_ppn: int, seq: int) -> bool:
        """A MERGE page (§10.3) of `lpn` at `new_ppn` (its `epoch` = base_ppn, its `seq`): applied when
        L2P[lpn] is the base it merged (or already the merged page); removes the fragments with a record
        seq below its own. False: stale (a newer write emptied F), nothing changes."""
        if self.l2p.get(lpn) not in (base_ppn, new_ppn):
            return False
        self.l2p[lpn] = new_ppn
        rest = [f for f in self.F.get(lpn, []) if f.seq >= seq]
        if rest:
            self.F[lpn] = rest
        else:
            self.F.pop(lpn, None)
        return True

    # reclaim (docs/architecture.md §11.6)
    def live_log_pages(self) -> set[int]:
        """Log pages holding a fragment of some F: never erased (an unknown page, §10.4, is none)."""
        return {f.ppn for fs in self.F.values() for f in fs if f.ppn != UNKNOWN_PPN}

    def pinned(self) -> set[int]:
        """Bases of LPNs with fragments: never erased or relocated."""
        return {self.l2p[l] for l, fs in self.F.items() if fs}

    def erasable(self, ppns) -> bool:
        """A block (its PPNs) may be erased only when it holds no live log page and no pinned base."""
        s = set(ppns)
        return not (s & self.live_log_pages()) and not (s & self.pinned())

    def merge_order(self) -> list[int]:
        """LPNs to merge, oldest fragment first (the firmware's policy, §11.6)."""
        return sorted((l for l, fs in self.F.items() if fs), key=lambda l: (self.F[l][0].seq, l))

    def merges_needed(self, hi: int, lo: int, lpns_max: int) -> list[int]:
        """The firmware's budget: when live log pages exceed `hi`, or the index holds more than 3/4 of
        `lpns_max` LPNs, merge LPNs oldest fragment first until the live pages are at most `lo` and the
        index at most half full. Returns the LPNs in merge order (simulated on a copy)."""
        s = self.copy()
        if len(s.live_log_pages()) <= hi and 4 * len(s.F) <= 3 * lpns_max:
            return []
        out = []
        for l in s.merge_order():
            if len(s.live_log_pages()) <= lo and 2 * len(s.F) <= lpns_max:
                break
            out.append(l)
            s.F.pop(l)
        return out
