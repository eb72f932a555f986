"""Plain-Python reference of ats_backend_slog, written from rtl/backend/README_slog.md (the index
commands, the record's descriptors and statuses) and docs/persistence.md §10.1-10.2 (the log page
and record bytes), not from the RTL. Transaction level: one call per command, per descriptor
(`desc`, then `rec_end` after the last) or per record (`record`)."""
from __future__ import annotations

import struct

OK, BAD_TXID, TX_FULL, TX_EMPTY, BAD_FIELD = 0x00, 0x02, 0x04, 0x06, 0x07
MAGIC = 0x474F4C53
NCF = 8


class SlogRef:
    def __init__(self, page_bytes: int, num_tx: int, lpns: int, ways: int, frags: int,
                 txfrags: int, txfull: int, recs: int = 1, pack: bool = False):
        self.pb, self.num_tx, self.ways, self.frags = page_bytes, num_tx, ways, frags
        self.txfrags, self.txfull, self.recs, self.pack = txfrags, txfull, recs, pack
        # pack: the open page {lpgn, first, used, nend, data} (README_slog "Open page"), and the OK
        # record awaiting its verdict (go / drop)
        self.open: dict | None = None
        self.pending: dict | None = None
        self.sets = lpns // ways
        self.P = page_bytes - 16
        # set -> list of entries {lpn, rsv, owner, F: [frag], pend}
        self.idx: dict[int, list[dict]] = {s: [] for s in range(self.sets)}
        self.cf: list[tuple[int, int, int]] = []
        self.lpgn = 0
        # the accepted records, until APPLY / DISCARD (at most `recs`): txid -> {frags: [(lpn, frag)]}
        self.held: dict[int, dict] = {}
        self.rx = None        # the record being received (its descriptors so far)

    # ---- index
    def _txid_ok(self, t: int) -> bool:
        return 1 <= t <= self.num_tx

    def entry(self, lpn: int) -> dict | None:
        for e in self.idx[lpn % self.sets]:
            if e["lpn"] == lpn:
                return e
        return None

    def _drop_if_empty(self, e: dict) -> None:
        if not e["rsv"] and not e["F"] and e["pend"] == 0:
            self.idx[e["lpn"] % self.sets].remove(e)

    def _new(self, e: dict) -> None:
        """A new entry takes the lowest free way of its set (README_slog "op 7 READ": which way an
        entry takes is visible there)."""
        s = self.idx[e["lpn"] % self.sets]
        used = {x["way"] for x in s}
        e["way"] = min(w for w in range(self.ways) if w not in used)
        s.append(e)

    def read(self, slot: int, n: int) -> tuple:
        """READ (op 7): slot = set * ways + way; n = 255: the entry, else its fragment n. Returns the
        answer (sts, cnt, lpgn, pofs, off, len)."""
        if slot >= self.sets * self.ways:
            return BAD_FIELD, 0, 0, 0, 0, 0
        st, w = divmod(slot, self.ways)
        e = next((x for x in self.idx[st] if x["way"] == w), None)
        if n == 255:
            if e is None:
                return OK, 0, 0, 0, 0, 0
            return OK, len(e["F"]), e["lpn"], 1, (int(e["rsv"]) << 11) | e["pend"], e["owner"]
        if e is None or n >= len(e["F"]):
            return BAD_FIELD, 0, 0, 0, 0, 0
        lg, pofs, off, ln = e["F"][n]
        return OK, len(e["F"]), lg, pofs, off, ln

    def reserve(self, t: int, lpn: int) -> tuple[int, int]:
        if not self._txid_ok(t):
            return BAD_TXID, 0
        e = self.entry(lpn)
        if e is None:
            if len(self.idx[lpn % self.sets]) >= self.ways:
                return TX_FULL, 0
            self._new(dict(lpn=lpn, rsv=True, owner=t, F=[], pend=0))
            return OK, self.frags
        if e["rsv"]:
            return (OK, self.frags - len(e["F"])) if e["owner"] == t else (TX_FULL, 0)
        if len(e["F"]) >= self.frags:
            return TX_FULL, 0
        e["rsv"], e["owner"] = True, t
        return OK, self.frags - len(e["F"])

    def unreserve(self, t: int, lpn: int) -> int:
        if not self._txid_ok(t):
            return BAD_TXID
        e = self.entry(lpn)
        if e is None or not e["rsv"] or e["owner"] != t:
            return TX_EMPTY
        if e["pend"]:
            return BAD_FIELD
        e["rsv"] = False
        self._drop_if_empty(e)
        return OK

    def lookup(self, lpn: int) -> list[tuple[int, int, int, int]]:
        e = self.entry(lpn)
        return list(e["F"]) if e else []

    def release(self, lpn: int, n: int) -> tuple[int, int]:
        e = self.entry(lpn)
        if e is None:
            return OK, 0
        if e["pend"]:
            return BAD_FIELD, 0
        m = min(n, len(e["F"]))
        del e["F"][:m]
        self._drop_if_empty(e)
        return OK, m

    def insert(self, lpn: int, lpgn: int, pofs: int, off: int, ln: int) -> tuple[int, int]:
        """INSERT (op 6, recovery): a committed fragment appended to F[lpn] (README_slog "The index")."""
        if (ln == 0 or ln % 4 or off % 4 or pofs % 4 or ln > self.P or off + ln > self.pb or pofs < 16
                or pofs + ln > self.pb):
            return BAD_FIELD, 0
        e = self.entry(lpn)
        if e is not None and e["pend"]:
            return BAD_FIELD, 0
        if e is None:
            if len(self.idx[lpn % self.sets]) >= self.ways:
                return TX_FULL, 0
            e = dict(lpn=lpn, rsv=False, owner=0, F=[], pend=0)
            self._new(e)
        elif len(e["F"]) >= self.frags:
            return TX_FULL, 0
        e["F"].append((lpgn & 0xFFFFFFFF, pofs, off, ln))
        return OK, len(e["F"])

    def push_cf(self, txid: int, reclen: int, lpgn: int) -> None:
        if len(self.cf) < NCF:
            self.cf.append((txid, reclen, lpgn))

    # ---- records
    def rec_begin(self) -> None:
        """A record's first descriptor is about to be checked."""
        self.rx = dict(t=None, sts=OK, fulls=[], frs=[], pend={})

    def receiving(self) -> bool:
        return getattr(self, "rx", None) is not None

    def desc(self, d: dict) -> None:
        """One descriptor {txid, full, lpn, ppn, off, len (, data)} checked in order (README "Records"):
        a fragment that passes counts in its entry's `pend` at once."""
        if not self.receiving():
            self.rec_begin()
        rx = self.rx
        if rx["t"] is None:
            rx["t"] = d["txid"]
            if not self._txid_ok(d["txid"]) or d["txid"] in self.held:   # (a held txid: its commit in flight)
                rx["sts"] = BAD_TXID
        t = rx["t"]
        if rx["sts"] != OK:
            return                                  # the first error stays; the rest ignored
        if d["txid"] != t:
            rx["sts"] = BAD_FIELD
        elif d["full"]:
            if len(rx["fulls"]) >= self.txfull:
                rx["sts"] = TX_FULL
            else:
                rx["fulls"].append(d)
        else:
            ln, off = d["len"], d["off"]
            e = self.entry(d["lpn"])
            if ln == 0 or ln % 4 or off % 4 or ln > self.P or off + ln > self.pb:
                rx["sts"] = BAD_FIELD
            elif len(rx["frs"]) >= self.txfrags:
                rx["sts"] = TX_FULL
            elif e is None or not e["rsv"] or e["owner"] != t:
                rx["sts"] = BAD_FIELD
            elif len(e["F"]) + e["pend"] >= self.frags:
                rx["sts"] = TX_FULL
            else:
                e["pend"] += 1
                rx["pend"][d["lpn"]] = rx["pend"].get(d["lpn"], 0) + 1
                rx["frs"].append(dict(d, ver=len(e["F"]) + e["pend"]))

    def rec_end(self) -> dict:
        """After the last descriptor: {sts, txid} and, when OK, the held record's pages (see _build);
        a rejected record's pending fragments are dropped (the index as before it)."""
        rx, self.rx = self.rx, None
        if rx["sts"] != OK:
            for lpn, n in rx["pend"].items():
                self.entry(lpn)["pend"] -= n
            return dict(sts=rx["sts"], txid=rx["t"])
        return self._build(rx["t"], rx["fulls"], rx["frs"])

    def record(self, descs: list[dict]) -> dict:
        """A whole record at once (no index command between its descriptors)."""
        self.rec_begin()
        for d in descs:
            self.desc(d)
        return self.rec_end()

    def _build(self, t: int, fulls: list[dict], frs: list[dict]) -> dict:
        P = self.P
        cf, self.cf = self.cf, []
        txlen = len(fulls) + len(frs)
        # pack: the record starts where the open page's payload ends (b0 bytes in), in its LPGN
        r_open = self.pack and self.open is not None
        b0 = self.open["used"] - 16 if r_open else 0
        pos = 16 + 8 * len(cf) + 16 * txlen
        for f in frs:                               # a fragment never crosses a log page
            if (b0 + pos) % P + f["len"] > P:
                pos = ((b0 + pos) // P + 1) * P - b0
            f["loc"] = pos
            pos += f["len"]
        nbytes = pos
        reclen = (b0 + nbytes - 1) // P + 1
        s = bytearray(max(reclen * P, nbytes))
        struct.pack_into("<4I", s, 0, 0x01 | 1 << 8 | len(cf) << 16, t | txlen << 8 | reclen << 24, nbytes, 0)
        o = 16
        for (ct, crl, clg) in cf:
            struct.pack_into("<2I", s, o, ct | crl << 24, clg)
            o += 8
        for f in fulls:
            struct.pack_into("<4I", s, o, f["lpn"], f["ppn"], 0, 0)
            o += 16
        for f in frs:
            struct.pack_into("<4I", s, o, f["lpn"], f["ppn"],
                             f["len"] | f["off"] << 12 | f["ver"] << 24 | 1 << 31, f["loc"])
            o += 16
        for f in frs:
            s[f["loc"]:f["loc"] + f["len"]] = f["data"]
        lpgn0 = (self.lpgn - 1) & 0xFFFFFFFF if r_open else self.lpgn
        pages = []
        if not self.pack:
            for j in range(reclen):
                used = 16 + min(P, nbytes - j * P)
                hdr = struct.pack("<IIHHI", MAGIC, (lpgn0 + j) & 0xFFFFFFFF, 16 if j == 0 else 0xFFFF, used, 0)
                pages.append(bytes(hdr) + bytes(s[j * P:(j + 1) * P]))
        new = reclen - (1 if r_open else 0)
        self.lpgn = (self.lpgn + new) & 0xFFFFFFFF
        assert len(self.held) < self.recs, "a record accepted with every slot held"
        self.held[t] = dict(txid=t, frags=[(f["lpn"], ((lpgn0 + (b0 + f["loc"]) // P) & 0xFFFFFFFF,
                                                    16 + (b0 + f["loc"]) % P, f["off"], f["len"])) for f in frs])
        if self.pack:
            self.pending = dict(txid=t, body=bytes(s[:nbytes]), lpgn0=lpgn0, new=new, b0=b0)
        return dict(sts=OK, txid=t, lpgn=lpgn0, reclen=reclen, pages=pages, ncf=len(cf), cf=cf, frs=frs,
                    start=(lpgn0, 16 + b0), nbytes=nbytes)

    # ---- pack: the open page
    def _flush(self, cont: bool = False) -> dict:
        """The open page as sent: {data, lpgn, nend, cont (a record continues past it)}."""
        o = self.open
        hdr = struct.pack("<IIHHI", MAGIC, o["lpgn"], o["first"], o["used"], 0)
        data = bytes(hdr) + bytes(o["data"][16:o["used"]]) + bytes(self.pb - o["used"])
        return dict(data=data, lpgn=o["lpgn"], nend=o["nend"], cont=cont)

    def go(self) -> list[dict]:
        """The pending record's verdict is go: its bytes written from the open page's end (a new
        page when none is open); returns the pages that filled (each {data, lpgn, nend})."""
        r, self.pending = self.pending, None
        out = []
        if self.open is None:
            self.open = dict(lpgn=r["lpgn0"], first=0xFFFF, used=16, nend=0, data=bytearray(self.pb))
        body, pos = r["body"], 0
        while pos < len(body):
            o = self.open
            if pos == 0 and o["first"] == 0xFFFF:
                o["first"] = o["used"]
            n = min(self.pb - o["used"], len(body) - pos)
            o["data"][o["used"]:o["used"] + n] = body[pos:pos + n]
            o["used"] += n
            pos += n
            if pos == len(body):
                o["nend"] += 1
            if o["used"] == self.pb:
                out.append(self._flush(cont=pos < len(body)))
                self.open = (dict(lpgn=(o["lpgn"] + 1) & 0xFFFFFFFF, first=0xFFFF, used=16, nend=0,
                                  data=bytearray(self.pb)) if pos < len(body) else None)
        return out

    def drop(self) -> None:
        """The pending record's verdict is drop: nothing written, the LPGN counter back; the record
        stays held (DISCARD ends it)."""
        r, self.pending = self.pending, None
        self.lpgn = (self.lpgn - r["new"]) & 0xFFFFFFFF
        self.held[r["txid"]]["dropped"] = True

    def seal(self) -> list[dict]:
        """s_seal: the open page sent as it is (none open: nothing)."""
        assert self.pending is None, "s_seal while a record waits for its verdict"
        if self.open is None:
            return []
        p, self.open = self._flush(), None
        return [p]

    def can_take(self) -> bool:
        """A record's first descriptor can be taken: fewer than `recs` records held."""
        return len(self.held) < self.recs

    def apply(self, t: int) -> tuple[int, int]:
        if not self._txid_ok(t):
            return BAD_TXID, 0
        if t not in self.held:
            return TX_EMPTY, 0
        if self.pack and self.held[t].get("dropped"):
            return BAD_FIELD, 0                     # (its bytes were never written)
        h = self.held.pop(t)
        for lpn, fr in h["frags"]:
            e = self.entry(lpn)
            e["F"].append(fr)
            e["pend"] -= 1
            e["rsv"] = False
        return OK, len(h["frags"])

    def discard(self, t: int) -> tuple[int, int]:
        """DISCARD: the held record of txid t dropped; each of its LPNs' reservation freed as UNRESERVE does."""
        if not self._txid_ok(t):
            return BAD_TXID, 0
        if t not in self.held:
            return TX_EMPTY, 0
        if self.pack and not self.held[t].get("dropped"):
            return BAD_FIELD, 0                     # (written: its bytes are in the log)
        h = self.held.pop(t)
        for lpn, _ in h["frags"]:
            e = self.entry(lpn)
            e["pend"] -= 1
            if e["pend"] == 0:
                e["rsv"] = False
                self._drop_if_empty(e)
        return OK, len(h["frags"])
