# SPDX-License-Identifier: Apache-2.0
"""A small device that writes the S-Log's on-flash format (docs/persistence.md §10) for the S-Log
reference's tests: requests in `seq` order onto the dies (consecutive PPNs on different dies, pages of
a block in order), each die programming one page at a time with a random program time, and a power cut
at any instant (the page a die is programming is torn, the pages queued behind it are erased). The
writer side uses `atstb.slog_ref.LogWriter` (the encoder under test).

Independently of the recovery, it keeps the **logical** state: each LPN's bytes and the identity of
its version ((base page, fragments on it), docs/architecture.md §11.1), and `expected(cut)` computes
what every LPN must read after recovery from §10.5's rules stated on requests, not on pages: every
operation whose commit point is before the first request not programmed at the cut, then each S-Log
transaction after it whose log pages and full pages were all programmed and whose fragments were
written for the versions the state then holds, in commit-point order.
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
try:                                        # PYTHONPATH may name another copy (the mutant runs of the tests)
    import atstb.slog_ref  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "cocotb_tests/lib"))

from atstb.nand_page_model import Meta, PageFormat  # noqa: E402
from atstb.recovery_oracle import (F_ABORT, F_COMMIT, F_RELOC, F_TRIM, KIND_CKPT, KIND_DATA, KIND_LOG,  # noqa: E402
                                   Geometry, checkpoint_pages_v2, write_image)
from atstb.slog_ref import F_SLOG, CFlag, Frag, FragLoc, LogWriter  # noqa: E402

GEO = Geometry(num_chan=2, ways=2, blocks=32, ppb=16, page_bytes=512, spare_bytes=64)


def index_spread(rng: random.Random, n: int = 24, nlba: int = 768, sets: int = 256) -> list[int]:
    """n LPNs below nlba for a backend S-Log index of `sets` sets (set = LPN mod sets, 4 ways:
    rtl/backend/README_slog.md "The index"): the last set's LPNs (its last slots), then whole columns
    (s, s + sets, ...: several ways of one random set s) until at least n // 3 + 3 LPNs are taken (a
    third of n besides the last set's 3; the last column may pass it), the rest at random: entries
    over the whole index, low and high slots."""
    out = list(range(sets - 1, nlba, sets))
    while len(out) < n // 3 + 3:
        s = rng.randrange(sets)
        out += [x for x in range(s, nlba, sets) if x not in out]
    while len(out) < n:
        x = rng.randrange(nlba)
        if x not in out:
            out.append(x)
    return sorted(out[:n])


@dataclass
class Req:
    seq: int
    ppn: int
    data: bytes
    meta: Meta
    issue: int                  # time the backend issued it
    start: int = 0              # time its die starts programming it
    done: int = 0               # time its program completes


@dataclass
class Op:
    """One logical operation: its requests' seqs and its commit point (the last one)."""
    kind: str                   # full, trim, tx, slog, merge
    seqs: list[int]
    fulls: dict[int, bytes] = field(default_factory=dict)               # lpn -> page
    frags: list[tuple[int, int, bytes, tuple]] = field(default_factory=list)   # lpn, off, data, (base id, k)
    lpn: int = -1
    base: int = -1              # merge: the base PPN it merged
    new: int = -1               # merge: its page
    log_seqs: list[int] = field(default_factory=list)
    full_seqs: list[int] = field(default_factory=list)

    @property
    def commit(self) -> int:
        return self.seqs[-1]


class SimDev:
    def __init__(self, rng: random.Random, geo: Geometry = GEO, nlpn: int = 24, max_lag: int = 6,
                 p_slow: float = 0.0, lpns: list[int] | None = None, p_pack: float = 0.0):
        """p_slow: the share of programs 8 times slower (a die lagging behind the others: the gap the
        other dies' complete records are decided across). p_pack: the share of `random_ops`' S-Log
        transactions written as a packed group of two or three records (`slog_group`; 0: none, and
        the same random choices as before it existed). lpns: the LPNs written (default 0 .. nlpn - 1;
        `index_spread` spreads them over a larger S-Log index); the random choices are the same
        for the same count (a choice of the list draws as one of the range)."""
        self.lpns = sorted(lpns) if lpns is not None else list(range(nlpn))
        nlpn = len(self.lpns)
        self.rng, self.geo, self.nlpn, self.max_lag, self.p_slow = rng, geo, nlpn, max_lag, p_slow
        self.p_pack = p_pack
        self.fmt = PageFormat(geo.page_bytes, geo.spare_bytes)
        self.reqs: list[Req] = []
        self.rows: dict[int, dict[int, bytes]] = {d: {} for d in range(geo.ndie)}   # die -> row -> image
        self.time = 0
        self.die_free = [0] * geo.ndie
        self.seq = 0
        # allocation: per die its blocks in order (block 0/1 of die 0 are the checkpoint blocks)
        self.free = {d: [b for b in range(2 if d == 0 else 0, geo.blocks)] for d in range(geo.ndie)}
        self.open = {d: (self.free[d].pop(0), 0) for d in range(geo.ndie)}
        self.order = {d: [self.open[d][0]] for d in range(geo.ndie)}     # blocks in hand-out order
        self.opened: dict[int, list[Req]] = {}     # S-Log transactions open: txid -> their full pages
        self.plan = {d: [self.open[d][0]] + self.free[d][:] for d in range(geo.ndie)}
        self.die_rr = 0
        self.ckpt_no = 0
        self.ckpt_time = -1
        self.writer = LogWriter(geo.page_bytes, 0)
        # the device's volatile state (what the writer needs: bases, versions, the index)
        self.l2p: dict[int, int] = {}
        self.F: dict[int, list[FragLoc]] = {}
        self.flags_pending: list[tuple[CFlag, list[int]]] = []   # records not yet flagged: (flag, their seqs)
        # the logical state, kept apart from the pages
        self.ops: list[Op] = []
        self.content: dict[int, bytes] = {}
        self.ident: dict[int, tuple] = {}
        self.format()

    # ---- the media
    def _alloc(self) -> int:
        d = self.die_rr
        self.die_rr = (self.die_rr + 1) % self.geo.ndie
        blk, pg = self.open[d]
        if pg == self.geo.ppb:
            blk, pg = self.free[d].pop(0), 0
            self.order[d].append(blk)
        self.open[d] = (blk, pg + 1)
        return self.geo.ppn(d, blk, pg)

    def _program(self, data: bytes, meta: Meta, ppn: int | None = None, take_seq: bool = True) -> Req:
        ppn = self._alloc() if ppn is None else ppn
        d, blk, pg = self.geo.unppn(ppn)
        self.time += 1
        start = max(self.time, self.die_free[d])
        t = self.rng.randint(1, self.max_lag) * (8 if self.rng.random() < self.p_slow else 1)
        r = Req(meta.seq, ppn, data, meta, self.time, start, start + t)
        self.die_free[d] = r.done
        self.reqs.append(r)
        self.rows[d][blk * self.geo.ppb + pg] = self.fmt.image(data, meta)
        return r

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq - 1

    def format(self) -> None:
        self.checkpoint()

    def checkpoint(self) -> None:
        """Drain (every request programmed), then a version-3 checkpoint of the exact state at
        seq_base = the next seq; scan_from = the first page of the oldest open transaction (or
        seq_base); a plan of each die's blocks holding a page at or after scan_from, its open block and
        the blocks after it (docs/persistence.md §5)."""
        self.time = max([self.time] + self.die_free) + 1
        scan_from = min([rs[0].seq for rs in self.opened.values() if rs] + [self.seq])
        keep = {self.geo.unppn(r.ppn)[:2] for r in self.reqs if r.seq >= scan_from}
        plan = [[b for b in self.order[d] if (d, b) in keep and b != self.open[d][0]] + [self.open[d][0]] + self.free[d]
                for d in range(self.geo.ndie)]
        blk = self.ckpt_no % 2
        self.ckpt_no += 1
        pages = checkpoint_pages_v2(self.geo, plan, dict(self.l2p), self.seq, scan_from, ckpt_no=self.ckpt_no,
                                    slog=(self.writer.lpgn0 + len(self.writer.stream) // self.writer.P,
                                          {l: (self.l2p[l], list(f)) for l, f in self.F.items() if f}))
        meta = Meta(lpn=0xFFFFFFFF, txid=0, kind=KIND_CKPT, seq=self.seq, epoch=0, flags=0)
        self.rows[0] = {r: v for r, v in self.rows[0].items() if r // self.geo.ppb != blk}
        for i, data in enumerate(pages):
            self.rows[0][blk * self.geo.ppb + i] = self.fmt.image(data, meta)
        self.ckpt_time = self.time
        self.time += 1

    def data_page(self, lpn: int, txid: int = 0, flags: int = 0, data: bytes | None = None,
                  epoch: int = 0) -> Req:
        data = data if data is not None else self.rng.randbytes(self.geo.page_bytes)
        return self._program(data, Meta(lpn=lpn, txid=txid, kind=KIND_DATA, seq=self._next_seq(), epoch=epoch,
                                        flags=flags))

    # ---- operations (each updates the device state as at its in-order completion, and the logical one)
    def write(self, lpn: int) -> Op:
        r = self.data_page(lpn)
        self.l2p[lpn] = r.ppn
        self.F.pop(lpn, None)
        op = Op("full", [r.seq], fulls={lpn: r.data})
        op.full_seqs = [r.seq]
        self.ops.append(op)
        return op

    def trim(self, lpn: int) -> Op:
        r = self._program(bytes(self.geo.page_bytes), Meta(lpn=lpn, txid=0, kind=KIND_LOG, seq=self._next_seq(),
                                                          epoch=0, flags=F_TRIM))
        self.l2p.pop(lpn, None)
        self.F.pop(lpn, None)
        op = Op("trim", [r.seq], lpn=lpn)
        self.ops.append(op)
        return op

    def tx(self, txid: int, lpns: list[int], abort: bool = False) -> Op:
        """A transaction of full pages ended by a COMMIT (or ABORT) flag on its last page."""
        rs = [self.data_page(l, txid, (F_ABORT if abort else F_COMMIT) if i == len(lpns) - 1 else 0)
              for i, l in enumerate(lpns)]
        op = Op("abort" if abort else "tx", [r.seq for r in rs], fulls={r.meta.lpn: r.data for r in rs})
        if not abort:
            for r in rs:
                self.l2p[r.meta.lpn] = r.ppn
                self.F.pop(r.meta.lpn, None)
        self.ops.append(op)
        return op

    def open_slog(self, txid: int, fulls: list[int]) -> None:
        """The full pages of an S-Log transaction whose record comes later (`slog_tx(txid, ...)`)."""
        self.opened[txid] = [self.data_page(l, txid) for l in fulls]

    def slog_tx(self, txid: int, fulls: list[int], frags: list[tuple[int, int, bytes]]) -> Op:
        """An S-Log transaction: its full pages (data pages of txid, no flag), then its record."""
        return self.slog_group([(txid, fulls, frags)])[0]

    def slog_group(self, items: list[tuple[int, list[int], list[tuple[int, int, bytes]]]],
                   pack: bool = False) -> list[Op]:
        """S-Log transactions of distinct txids, each (txid, fulls, frags) as `slog_tx`'s, whose records
        are written back to back in `items` order: with `pack` packed into shared log pages
        (persistence §10.1): every record's full pages first, then the group's log pages with
        consecutive `seq`s (a group-commit writer with the sealing rule, bench/difftx/README.md "Group
        commit", when nothing else is accepted between them); records that end in one log page share
        its `seq` as their commit point. Records of a group may have fragments of one LPN (a later
        one's `ver` counts the earlier ones': §10.2, the order matters); a full page's LPN is in no
        other record of the group. Without `pack` each record starts on a fresh log page."""
        assert len({t for t, _, _ in items}) == len(items), "one record per txid in a group"
        prep = []
        k = {}                  # fragments per LPN so far: the LPN's F, then the group's records'
        for txid, fulls, frags in items:
            rs = self.opened.pop(txid, []) + [self.data_page(l, txid) for l in fulls]
            fulls = [r.meta.lpn for r in rs]
            fr, logical = [], []
            for lpn, off, d in frags:
                assert lpn in self.l2p and lpn not in fulls
                kk = k.get(lpn, len(self.F.get(lpn, [])))
                fr.append(Frag(lpn, self.l2p[lpn], kk + 1, off, d))
                logical.append((lpn, off, d, (self.l2p[lpn], kk)))
                k[lpn] = kk + 1
            prep.append((txid, rs, fr, logical))
        for i, (_, rs, _, _) in enumerate(prep):
            others = set().union(set(), *({r.meta.lpn for r in rj} | {f.lpn for f in fj}
                                           for j, (_, rj, fj, _) in enumerate(prep) if j != i))
            assert not {r.meta.lpn for r in rs} & others, "a full page's LPN in no other record of the group"
        n0 = len(self.writer.stream) // self.writer.P
        self.writer.pack = pack
        ws = []
        for txid, rs, fr, _ in prep:
            # completeness flags: records whose every page completed before this record is sealed
            now = self.time + 1
            done = {r.seq: r.done for r in self.reqs}
            cf, rest = [], []
            for f, seqs in self.flags_pending:
                if len(cf) < 8 and all(done[s] < now for s in seqs):
                    cf.append(f)
                else:
                    rest.append((f, seqs))
            self.flags_pending = rest
            ws.append(self.writer.add(txid, [(r.meta.lpn, r.ppn) for r in rs], fr, cf))
        self.writer.pack = False
        pages = self.writer.pages()[n0:]
        assert [p[0] for p in pages] == list(range(ws[0].first_lpgn, ws[-1].first_lpgn + ws[-1].reclen))
        by_lpgn = {lpgn: self._program(data, Meta(lpn=0xFFFFFFFF, txid=0, kind=KIND_LOG, seq=self._next_seq(),
                                                  epoch=lpgn, flags=F_SLOG)) for lpgn, data in pages}
        ops = []
        P = self.writer.P
        for (txid, rs, fr, logical), w in zip(prep, ws):
            lreqs = [by_lpgn[g] for g in range(w.first_lpgn, w.first_lpgn + w.reclen)]
            self.flags_pending.append((w.cflag, [r.seq for r in rs + lreqs]))
            # at its completion: the full pages mapped, the fragments appended
            for r in rs:
                self.l2p[r.meta.lpn] = r.ppn
                self.F.pop(r.meta.lpn, None)
            for m in w.metas:
                if m.is_diff:
                    q = w.first_byte - 16 + m.dloc
                    lr = lreqs[q // P]
                    self.F.setdefault(m.lpn, []).append(FragLoc(lr.ppn, 16 + q % P, m.off, m.len, lreqs[-1].seq))
            op = Op("slog", [r.seq for r in rs + lreqs], fulls={r.meta.lpn: r.data for r in rs}, frags=logical)
            op.log_seqs, op.full_seqs = [r.seq for r in lreqs], [r.seq for r in rs]
            self.ops.append(op)
            ops.append(op)
        return ops

    def merged_bytes(self, lpn: int) -> bytes:
        base = self.page_data(self.l2p[lpn])
        out = bytearray(base)
        for f in self.F.get(lpn, []):
            out[f.off:f.off + f.len] = self.page_data(f.ppn)[f.doff:f.doff + f.len]
        return bytes(out)

    def page_data(self, ppn: int) -> bytes:
        d, blk, pg = self.geo.unppn(ppn)
        return self.rows[d][blk * self.geo.ppb + pg][:self.geo.page_bytes]

    def merge(self, lpn: int) -> Op:
        base = self.l2p[lpn]
        r = self.data_page(lpn, 0, F_RELOC | F_SLOG, self.merged_bytes(lpn), epoch=base)
        self.l2p[lpn] = r.ppn
        self.F.pop(lpn, None)
        op = Op("merge", [r.seq], lpn=lpn, base=base, new=r.ppn)
        self.ops.append(op)
        return op

    # ---- random workload
    def random_ops(self, n: int) -> None:
        rng = self.rng
        pb = self.geo.page_bytes
        for _ in range(n):
            x = rng.random()
            mapped = sorted(self.l2p)
            if x < 0.15 or len(mapped) < 4:
                self.write(rng.choice(self.lpns))
            elif x < 0.2:
                self.trim(rng.choice(mapped))
            elif x < 0.3:
                self.tx(rng.randint(1, 4), rng.sample(self.lpns, rng.randint(1, 3)), abort=rng.random() < 0.2)
            elif x < 0.75 and self.p_pack and rng.random() < self.p_pack:
                self._rand_group()
            elif x < 0.75:
                dl = rng.sample(mapped, rng.randint(1, min(4, len(mapped))))
                fl = rng.sample([l for l in self.lpns if l not in dl], rng.randint(0, 2))
                frags = []
                for l in dl:
                    if len(self.F.get(l, [])) >= 4:       # SLOG_FRAGS: the writer falls back to a full page
                        fl.append(l)
                        continue
                    nrun = rng.randint(1, 2) if len(self.F.get(l, [])) <= 2 else 1
                    cuts = sorted(rng.sample(range(0, pb // 4 + 1), 2 * nrun))
                    for i in range(nrun):
                        a, b = 4 * cuts[2 * i], 4 * cuts[2 * i + 1]
                        b = min(b, a + 4 * rng.randint(1, 40))
                        frags.append((l, a, rng.randbytes(b - a)))
                self.slog_tx(rng.randint(1, 4), fl, frags)
            elif x < 0.86:
                c = [l for l in mapped if self.F.get(l)]
                if c:
                    self.merge(rng.choice(c))
            elif x < 0.95:
                # an S-Log transaction (txid 5) open across other requests and checkpoints
                if 5 not in self.opened:
                    self.open_slog(5, rng.sample(self.lpns, rng.randint(1, 2)))
                else:
                    fl = {r.meta.lpn for r in self.opened[5]}
                    c = [l for l in mapped if l not in fl and len(self.F.get(l, [])) < 4]
                    self.slog_tx(5, [], [(l, 16, rng.randbytes(4 * rng.randint(1, 20))) for l in c[:2]])
            else:
                self.checkpoint()

    def _rand_group(self) -> None:
        """Two or three S-Log transactions (txids 1-4, small fragments so that records share log
        pages) written as one packed group; about half of the later records also have a fragment of
        an LPN an earlier one has (in the first 64 bytes, so their bytes often overlap: the order in
        which they apply shows in the page)."""
        rng = self.rng
        txids = rng.sample(range(1, 5), rng.randint(2, 3))
        free = [l for l in self.lpns if not (5 in self.opened and l in {r.meta.lpn for r in self.opened[5]})]
        items, full_l, frag_n = [], set(), {}
        for t in txids:
            cand = [l for l in free if l in self.l2p and l not in full_l
                    and len(self.F.get(l, [])) + frag_n.get(l, 0) < 4]
            again = [l for l in cand if l in frag_n]
            dl = rng.sample(cand, min(len(cand), rng.randint(1, 2)))
            if again and rng.random() < 0.5:
                dl = [rng.choice(again)] + [l for l in dl if l not in again][:1]
            fl = [l for l in rng.sample(free, min(len(free), rng.randint(0, 1)))
                  if l not in dl and l not in frag_n and l not in full_l]
            frags = [(l, 4 * rng.randrange(0, 16), rng.randbytes(4 * rng.randint(1, 12))) for l in dl]
            for l in dl:
                frag_n[l] = frag_n.get(l, 0) + 1
            full_l |= set(fl)
            items.append((t, fl, frags))
        self.slog_group(items, pack=True)

    # ---- power cut
    def images(self, out: Path, cut: int, torn: str = "random") -> list[Path]:
        """The dies at time `cut`: pages done before it programmed; on each die the page being
        programmed then torn (`torn`: 'random' bits or 'tail' = the data from a random byte on left
        erased), the pages after it erased. Checkpoint pages are always there (cuts are after them)."""
        rows = {d: {} for d in range(self.geo.ndie)}
        by_row = {}
        for r in self.reqs:
            d, blk, pg = self.geo.unppn(r.ppn)
            by_row[(d, blk * self.geo.ppb + pg)] = r
        for d in range(self.geo.ndie):
            for row, img in self.rows[d].items():
                r = by_row.get((d, row))
                if r is None or r.done < cut:
                    rows[d][row] = img
                elif r.start <= cut:
                    rows[d][row] = self.tear(img, torn)          # the page its die was programming
        paths = []
        for d in range(self.geo.ndie):
            p = out / f"die{d}.img"
            write_image(p, self.geo, rows[d])
            paths.append(p)
        return paths

    def tear(self, img: bytes, how: str) -> bytes:
        pb = self.geo.page_bytes
        if how == "tail":
            k = self.rng.randrange(0, pb + 20)
            return img[:k] + b"\xff" * (len(img) - k)
        b = bytearray(img)
        for _ in range(64):
            i = self.rng.randrange(len(b))
            b[i] ^= 1 << self.rng.randrange(8)
        return bytes(b)

    def programmed(self, cut: int) -> set[int]:
        return {r.seq for r in self.reqs if r.done < cut}

    def expected(self, cut: int) -> dict[int, bytes | None]:
        """What every LPN reads after a recovery from the images at `cut` (module docstring)."""
        prog = self.programmed(cut)
        gap = min((r.seq for r in self.reqs if r.seq not in prog), default=self.seq)
        content: dict[int, bytes] = {}
        ident: dict[int, tuple] = {}
        live: dict[int, list] = {}      # lpn -> fragments on its base: (commit seq)

        def apply(op: Op) -> None:
            if op.kind in ("full", "tx", "slog"):
                for l, d in op.fulls.items():
                    content[l], ident[l], live[l] = d, ("page", op.seqs[list(op.fulls).index(l)] if op.kind != "slog"
                                                        else op.full_seqs[list(op.fulls).index(l)]), []
            if op.kind == "trim":
                content.pop(op.lpn, None)
                ident.pop(op.lpn, None)
                live.pop(op.lpn, None)
            for l, off, d, _ in op.frags:
                c = bytearray(content[l])
                c[off:off + len(d)] = d
                content[l] = bytes(c)
                live[l].append(op.commit)
            if op.kind == "merge":
                if ident.get(op.lpn) == ("ppn", op.base) or self._ident_ppn(ident.get(op.lpn)) == op.base:
                    ident[op.lpn] = ("ppn", op.new)
                    live[op.lpn] = [s for s in live[op.lpn] if s >= op.commit]

        for op in sorted(self.ops, key=lambda o: o.commit):
            if op.commit < gap:
                apply(op)
            elif op.kind == "slog" and all(s in prog for s in op.seqs):
                # complete; its fragments' bases: the version each was written for must be the one held
                k: dict[int, int] = {}
                ok = True
                for l, off, d, (base, kk) in op.frags:
                    held = (self._ident_ppn(ident.get(l)), k.get(l, len(live.get(l, []))))
                    if held != (base, kk):
                        ok = False
                        break
                    k[l] = kk + 1
                if ok:
                    apply(op)
        return {l: content.get(l) for l in self.lpns}

    def _ident_ppn(self, ident) -> int | None:
        """The PPN of a version's base page (data pages are identified by their seq)."""
        if ident is None:
            return None
        if ident[0] == "ppn":
            return ident[1]
        return next(r.ppn for r in self.reqs if r.seq == ident[1])
