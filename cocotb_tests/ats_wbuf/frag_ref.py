"""Plain-Python reference of the write buffer's S-Log part (FRAG slots, the 0xFD / 0xFC
reservation requests, the commit's fragments and its two-pass `m_wbd` stream), written from
docs/architecture.md §11.3 ("The write buffer's part exactly") and §11.4, not from any RTL.

Transaction level: one call per DIFFWRITE / WRITE / READ / TX_COMMIT / TX_ABORT of a transaction,
with the backend's answers given by callbacks. Pages are `bytes` of `page_bytes`; words are 32
bits, little endian (word i = bytes 4i..4i+3)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

OK, BAD_FIELD = 0x00, 0x07
ID_UNRESERVE, ID_RESERVE = 0xFC, 0xFD


@dataclass
class FragSlot:
    num: int                      # its FRAG-table number (the commit's order)
    txid: int
    lpn: int
    room: int
    words: dict[int, int] = field(default_factory=dict)   # word index -> value (the set mask bits)

    def runs(self) -> list[tuple[int, int]]:
        """Maximal runs of set mask bits, increasing word order: [(first word, words)]."""
        out: list[tuple[int, int]] = []
        for i in sorted(self.words):
            if out and out[-1][0] + out[-1][1] == i:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            else:
                out.append((i, 1))
        return out

    def set_bytes(self) -> int:
        return 4 * len(self.words)


def page_from_words(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def words_of(page: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(page) // 4}I", page))


class FragRef:
    """The FRAG table of one write buffer. `slog_thr` is the CSR value; `thr` the one used."""

    def __init__(self, page_bytes: int, frag_slots: int, txfrags: int, slog_thr: int,
                 txfull: int = 64):
        self.pb, self.pw = page_bytes, page_bytes // 4
        # SLOG_TXFULL: a record is sent beside the tx's full pages (the backend adds their
        # META-PUs, §11.4) only while the tx's full pages, counted as below, are at most this
        self.txfull = txfull
        self.nf, self.txfrags = frag_slots, txfrags
        self.thr = min(slog_thr, page_bytes - 16)
        self.slots: dict[int, FragSlot] = {}      # FRAG number -> slot
        self.reqs: list[tuple[int, int, int]] = []   # (tag, lpn, txid) read requests sent, in order

    # ---- lookups
    def find(self, t: int, lpn: int) -> FragSlot | None:
        for s in self.slots.values():
            if s.txid == t and s.lpn == lpn:
                return s
        return None

    def of_tx(self, t: int) -> list[FragSlot]:
        return [self.slots[n] for n in sorted(self.slots) if self.slots[n].txid == t]

    def _free(self, s: FragSlot, unreserve: bool) -> None:
        del self.slots[s.num]
        if unreserve:
            self.reqs.append((ID_UNRESERVE, s.lpn, s.txid))

    # ---- DIFFWRITE
    def diffwrite(self, t: int, lpn: int, off: int, ln: int, data: bytes, fua: bool,
                  has_full_page: bool, reserve) -> tuple[str, FragSlot | None]:
        """DIFFWRITE of t (its txid, LBA checks passed). `has_full_page`: t holds a full page of
        `lpn` (a domain-t slot or its table: steps 2-3). `reserve(t, lpn)` -> (status, room): the
        backend's answer to id 0xFD. Returns the path taken:
        'bad_field'; 'rmw' (step 1-3: today's read-modify-write, a full page of t; the caller does
        it); 'convert' (step 1 with a FRAG slot: overlay, then the RMW on the FRAG page: the caller
        takes the slot returned as the base's overlay and calls convert_done if the base read was good); 'frag_write' (step 4);
        'frag_new' (step 5)."""
        if ln == 0 or ln % 4 or off % 4 or off + ln > self.pb:
            return "bad_field", None
        s = self.find(t, lpn)
        if ln >= self.thr or fua or self.thr == 0 or self.nf == 0:
            if s is not None:
                return "convert", s          # freed by convert_done once its base read is good
            return "rmw", None
        if has_full_page:
            assert s is None, "invariant: a FRAG slot and a full page of one LPN"
            return "rmw", None
        if s is not None:
            self._write(s, off, data)
            return "frag_write", s
        if len(self.slots) >= self.nf or len(self.of_tx(t)) >= self.txfrags:
            return "rmw", None
        self.reqs.append((ID_RESERVE, lpn, t))
        sts, room = reserve(t, lpn)
        room &= 0xFF
        if sts != OK or room == 0:
            return "rmw", None
        num = min(n for n in range(self.nf) if n not in self.slots)
        s = FragSlot(num, t, lpn, room)
        self.slots[num] = s
        self._write(s, off, data)
        return "frag_new", s

    def convert_done(self, s: FragSlot) -> None:
        """A conversion's base read was good: the slot ends (UNRESERVE). After a failed one
        (MEDIA_ERROR) the slot and its reservation stay: nothing changed (§11.3)."""
        self._free(s, True)

    def _write(self, s: FragSlot, off: int, data: bytes) -> None:
        for k, w in enumerate(words_of(data)):
            s.words[off // 4 + k] = w

    # ---- other commands of t
    def write(self, t: int, lpn: int) -> None:
        """A WRITE of `lpn` by t (with or without COMMIT): the FRAG slot is replaced."""
        s = self.find(t, lpn)
        if s is not None:
            self._free(s, True)

    def overlay(self, s: FragSlot, base: bytes) -> bytes:
        """The page t sees: the base with the slot's masked words over it."""
        w = words_of(base)
        for i, v in s.words.items():
            w[i] = v
        return page_from_words(w)

    def read(self, t: int, lpn: int, base: bytes) -> bytes:
        """A READ with txid t: `base` is the page it would return without the FRAG slot."""
        s = self.find(t, lpn)
        return base if s is None else self.overlay(s, base)

    def abort(self, t: int) -> None:
        for s in self.of_tx(t):
            self._free(s, True)

    # ---- TX_COMMIT
    def commit(self, t: int, nfull: int = 0) -> dict:
        """Which FRAG slots of t become fragments, which are converted (§11.3 "Which FRAG slots
        become fragments"), and the record's m_wbd stream [(word, last)] (empty when no fragment:
        today's commit). `nfull`: t's full pages committed into the buffer since its last commit
        or abort before this commit (every WRITE / DIFFWRITE page of t, conversions included, a
        rewrite of one LPN each time). Converted slots are freed (UNRESERVE sent); the sent ones
        stay until `commit_done`."""
        sent, conv, frags = self._plan(t, nfull)
        for s in conv:
            self._free(s, True)
        stream: list[tuple[int, int]] = []
        for j, (s, i, k) in enumerate(frags):
            stream.append((s.lpn & 0xFFFFFFFF, 0))
            stream.append((4 * i | (4 * k) << 16, int(j == len(frags) - 1)))
        body = [s.words[i + m] for (s, i, k) in frags for m in range(k)]
        stream += [(w, int(m == len(body) - 1)) for m, w in enumerate(body)]
        return dict(sent=sent, converted=conv, stream=stream,
                    slog=bool(frags))

    def _plan(self, t: int, nfull: int):
        """(sent, converted in the walk's conversion order, the fragments) of t's commit."""
        sent, conv, frags, n = [], [], [], 0
        for s in self.of_tx(t):
            r = s.runs()
            # more full pages than SLOG_TXFULL already: every slot converted, in number order
            if (nfull <= self.txfull and s.set_bytes() < self.thr and len(r) <= s.room and
                    n + len(r) <= self.txfrags):
                sent.append(s)
                n += len(r)
                frags += [(s, i, k) for (i, k) in r]
            else:
                conv.append(s)
        if sent and nfull + len(conv) > self.txfull:
            # the conversions took t's full pages above SLOG_TXFULL (the backend would reject
            # the record): the slots kept are converted too, after the others (a second walk)
            conv, sent, frags = conv + sent, [], []
        return sent, conv, frags

    def commit_failed(self, t: int, nfull: int, lpn: int) -> list[FragSlot]:
        """t's commit whose conversion of `lpn` failed its base read (MEDIA_ERROR): the slots
        converted before it are freed (UNRESERVE; full pages of t now), it and the rest stay (§11.3)."""
        _, conv, _ = self._plan(t, nfull)
        k = [s.lpn for s in conv].index(lpn)
        for s in conv[:k]:
            self._free(s, True)
        return conv[:k]

    def commit_done(self, t: int) -> None:
        """The record's completion (any status): t's remaining FRAG slots freed, no UNRESERVE (an
        applied record turned the reservations into entries; a discarded one ended them)."""
        for s in self.of_tx(t):
            self._free(s, False)


def parse_stream(stream: list[tuple[int, int]]) -> list[dict]:
    """The backend's side of a `slog` record's m_wbd: descriptors (two words each, `last` on the
    final one's second), then the runs' words (`last` on the final). [{lpn, off, len, data}]."""
    descs, i = [], 0
    while True:
        (lpn, l0), (ol, l1) = stream[i], stream[i + 1]
        assert not l0, "last on a descriptor's first word"
        descs.append(dict(lpn=lpn, off=ol & 0xFFFF, len=ol >> 16))
        i += 2
        if l1:
            break
    for j, d in enumerate(descs):
        ws = stream[i:i + d["len"] // 4]
        i += d["len"] // 4
        assert all(not la for _, la in ws[:-1]) and ws[-1][1] == int(j == len(descs) - 1)
        d["data"] = page_from_words([w for w, _ in ws])
    assert i == len(stream), "words after the final one"
    return descs
