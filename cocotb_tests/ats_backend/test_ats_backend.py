"""cocotb tests of ats_backend's write path and transactions (rtl/backend/README.md "Transactions",
docs/persistence.md §4), the backend alone between a Python remap engine and a Python NAND.

The environment: `Engine` answers the remap requests in request order (a committed map and a list
per tx, README "Remap engine" of spinal/.../remap: TX_WRITE appends, COMMIT applies in append order,
ABORT drops, COMMIT / ABORT of an empty tx TX_EMPTY), after a random delay; `Nand` (4 dies, one a
channel) queues each die's PROGRAMs, asks for the page (`s_nfetch`), takes its words and 5 spare
words with random backpressure, holds the die for a random program time and completes. Failures
(`tx_random`, their own seeded generator): the engine refuses a TX_WRITE (TX_FULL or INDEX_FULL,
nothing appended) with probability ATS_BACKEND_REFUSE (0.05), the NAND fails a program
(PROGRAM_FAIL, the page not on flash) with probability ATS_BACKEND_PFAIL (0.02); `m_bad` is taken
with random backpressure and the firmware side hands each die its next block on `blk_need`.
The write buffer's side sends PROGRAMs (plain, tx pages, COMMIT marks), UNMAPs, commit and abort
records as the write buffer may (README "Transactions"): several txs open at once on txids 1..8, a
txid's next commit / abort only after its last one completed; now and then a page of t while t's
commit is in flight (which the write buffer never sends, the backend takes: it belongs to t's next
commit).

The reference (`TB.check`, plain Python from rtl/backend/README.md "Transactions" and
docs/persistence.md §4): the requests in `seq` order; completions in request order, each with its
status (OK; a commit / abort record TX_EMPTY when its tx holds nothing; a commit record's `ppn` = the
entries applied; a tx page whose TX_WRITE was refused: that status; a commit (mark or record) of a
tx with a refused TX_WRITE: the first refusal's status, count 0); every programmed page's spare
words (lpn, seq, txid, flags COMMIT / ABORT / TRIM: such a commit is programmed ABORT); the mapping
= the replay of the request stream (plain pages and TRIMs in order, a tx's pages applied at its
COMMIT flag, dropped at its ABORT flag), at the end and, per LPN, every value on the way; the
engine's mapping requests exactly as the completion rules give them (MAP_WRITE per plain page,
UNMAP per TRIM, a marked page's MAP_WRITE after its COMMIT when its own TX_WRITE was refused or named
a failed page, per fix of a committed tx a LOOKUP and, unless a later page of the tx has the LPN,
a MAP_WRITE to the re-programmed page; none after an ABORT); a tx page's one TX_WRITE, none for a
doomed mark; a failed page re-programmed with the same spare words and data; `m_bad` = the failed
programs' blocks in order, `cnt_prog_fail`; no PROGRAM to a block after its failure was taken. Ordering
(cycles-independent): at the engine, a TX_WRITE of t is after every COMMIT / ABORT of t before it in
`seq` order and before every one after it; a mark / record of t goes to NAND only after every
TX_WRITE of t's earlier pages has been answered; a completion only once its page and every earlier
one are programmed.

`tx_overlap` (issue 39 (c)): atomic Writes as the NVMe front end sends them with `ATX` txids (one
marked page, or a page and a marked page, each on its own txid), no idle, no backpressure. Per
transaction the mark waits only for its own TX_WRITEs: marks of several txs are programmed at once
(at least 2 in flight at some time) and the stream takes at most 0.75 of the time the txs take one
commit at a time (K program rounds). The rule before (a mark issued only with no commit / abort of
any tx in flight) meets neither.

Environment: ATS_SEED, ATS_BACKEND_SRC (another copy of ats_backend.sv: mutation / old-rule checks),
ATS_BACKEND_TEST (one cocotb test), ATS_BACKEND_STEPS (tx_random's steps, 800), ATS_BACKEND_REFUSE,
ATS_BACKEND_PFAIL (failure rates; with both at or above the defaults tx_random requires every
failure path met: refusals, a doomed commit, a refused mark, failed programs, fixes, a superseded fix).
"""
from __future__ import annotations

import os
import random
import sys
from collections import Counter, deque
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

HERE = Path(__file__).resolve().parent
NCH, PB, PPB, BLOCKS, WIN = 4, 16, 8, 32, 8
PW = PB // 4
OK, TX_FULL, INDEX_FULL, TX_EMPTY = 0x00, 0x04, 0x05, 0x06
NAND_PROGRAM_FAIL = 1
R_MAP_WRITE, R_LOOKUP, R_TX_WRITE, R_TX_LOOKUP, R_COMMIT, R_ABORT, R_UNMAP = 0, 1, 2, 3, 4, 5, 6
RC_NONE, RC_CMARK, RC_CREC, RC_AREC = 0, 1, 2, 3
F_COMMIT, F_TRIM, F_ABORT = 0x01, 0x04, 0x08
NTX = 8


def ppn_of(die: int, block: int, page: int) -> int:
    """architecture.md §5 packing: {block, page, die} (4 dies, 8 pages a block)."""
    return (block << 5) | (page << 2) | die


class Engine:
    """The remap engine as its README gives it, requests applied in the order taken."""

    def __init__(self, tb) -> None:
        self.tb = tb
        self.l2p: dict[int, int] = {}
        self.tx: dict[int, list] = {}
        self.log: list = []                 # (op, txid, lpn, ppn, cycle taken)
        self.refused: dict = {}             # (txid, ppn) of a refused TX_WRITE -> its status
        self.hist: dict[int, list] = {}     # lpn -> the values its mapping took, in order (None: unmapped)
        self.pending: deque = deque()       # (due cycle, response)

    def take(self, r: dict, cyc: int) -> None:
        op, t, lpn, ppn = r["op"], r["txid"], r["lpn"], r["ppn"]
        self.log.append((op, t, lpn, ppn, cyc))
        st, rp, mapped, cnt = OK, 0, 0, 0
        if op == R_MAP_WRITE:
            if lpn in self.l2p:
                rp, mapped = self.l2p[lpn], 1
            self.l2p[lpn] = ppn
            self.hist.setdefault(lpn, []).append(ppn)
        elif op == R_UNMAP:
            if lpn in self.l2p:
                rp, mapped = self.l2p.pop(lpn), 1
            self.hist.setdefault(lpn, []).append(None)
        elif op == R_LOOKUP:
            if lpn in self.l2p:
                rp, mapped = self.l2p[lpn], 1
        elif op == R_TX_WRITE:
            if self.tb.frng.random() < self.tb.refuse:
                # a refusal (the engine's TX_FULL / INDEX_FULL; which one and when is the model's
                # choice here, the backend must handle either at any TX_WRITE): nothing appended
                st = self.tb.frng.choice((TX_FULL, INDEX_FULL))
                self.refused[(t, ppn)] = st
            else:
                self.tx.setdefault(t, []).append((lpn, ppn))
        elif op in (R_COMMIT, R_ABORT):
            ent = self.tx.pop(t, [])
            if not ent:
                st = TX_EMPTY
            elif op == R_COMMIT:
                for lp, pp in ent:
                    self.l2p[lp] = pp
                    self.hist.setdefault(lp, []).append(pp)
                cnt = len(ent)
        else:
            raise AssertionError(f"engine: unexpected op {op}")
        due = max(cyc + self.tb.rng.randint(1, 6 if self.tb.slow else 1),
                  self.pending[-1][0] + 1 if self.pending else 0)
        self.pending.append((due, dict(tag=r["tag"], status=st, ppn=rp, mapped=mapped, from_tx=0, count=cnt)))


class Nand:
    """Dies (one a channel): PROGRAM queue, page fetch and words, program time, completion."""

    def __init__(self, tb) -> None:
        self.tb = tb
        self.q = [deque() for _ in range(NCH)]
        self.cur = [None] * NCH             # [req, words, phase, due]
        self.pages: dict[int, dict] = {}    # ppn -> spare fields and data
        self.failed: dict[int, dict] = {}   # ppn -> the same, for a program that failed
        self.fails: list = []               # (chan, block) of each failed program, in order
        self.ready = [0] * NCH

    def edge(self, cyc: int) -> None:
        tb, dut = self.tb, self.tb.dut
        while tb.nreq.queue:
            r = tb.nreq.queue.popleft()
            assert r["op"] == 1 and r["head"] == 0 and r["prio_read"] == 0, f"nreq {r}"
            assert r["way"] == 0 and r["chan"] < NCH
            assert (r["chan"], r["block"]) not in tb.bad_known, \
                f"PROGRAM {r} to block {r['block']} of die {r['chan']} after its program failure was taken"
            tb.ev_prog_issue(r["tag"], r, cyc)
            self.q[r["chan"]].append(r)
        vv, dd, ll = int(dut.m_ndata_valid.value), int(dut.m_ndata_data.value), int(dut.m_ndata_last.value)
        for c in range(NCH):
            cur = self.cur[c]
            if cur is None and self.q[c]:
                r = self.q[c].popleft()
                cur = self.cur[c] = [r, [], "xfer", 0]
                tb.fetch.send_nowait(chan=c, slot=r["slot"])
            if cur is not None and cur[2] == "xfer" and self.ready[c] and (vv >> c) & 1:
                w = (dd >> (32 * c)) & 0xFFFFFFFF
                cur[1].append(w)
                last = (ll >> c) & 1
                assert last == (len(cur[1]) == PW + 5), f"chan {c}: last at word {len(cur[1])}"
                if last:
                    r = cur[0]
                    ppn = ppn_of(c, r["block"], r["page"])
                    assert ppn not in self.pages and ppn not in self.failed, f"page {ppn:#x} programmed twice"
                    wd = cur[1]
                    cur.append(dict(data=wd[:PW], lpn=wd[PW], seq=wd[PW + 1] | (wd[PW + 2] << 32),
                                           epoch=wd[PW + 3], flags=(wd[PW + 4] >> 16) & 0xFF,
                                           kind=(wd[PW + 4] >> 8) & 3, txid=wd[PW + 4] & 0x3F, tag=r["tag"]))
                    cur[2], cur[3] = "prog", cyc + tb.tprog + (tb.rng.randint(0, tb.tprog // 4) if tb.slow else 0)
            if cur is not None and cur[2] == "prog" and cyc >= cur[3]:
                ppn = ppn_of(c, cur[0]["block"], cur[0]["page"])
                if tb.frng.random() < tb.pfail:
                    # a program failure: the page is not on flash, the block goes bad
                    self.failed[ppn] = cur[4]
                    self.fails.append((c, cur[0]["block"]))
                    tb.ncpl.send_nowait(tag=cur[0]["tag"], status=NAND_PROGRAM_FAIL, corrected=0, bad_mark=0)
                else:
                    self.pages[ppn] = cur[4]
                    tb.ncpl.send_nowait(tag=cur[0]["tag"], status=0, corrected=0, bad_mark=0)
                    tb.ev_prog_done(cur[0]["tag"], ppn, cyc)
                self.cur[c] = None
        rdy = 0
        for c in range(NCH):
            self.ready[c] = int(not (tb.slow and tb.rng.random() < 0.3))
            rdy |= self.ready[c] << c
        dut.m_ndata_ready.value = rdy


class TB:
    def __init__(self, dut, rng: random.Random, slow: bool, tprog: int, frng: random.Random,
                 refuse: float, pfail: float) -> None:
        self.dut, self.rng, self.slow, self.tprog = dut, rng, slow, tprog
        # failure injection: its own generator, so the stimulus is the one without failures
        self.frng, self.refuse, self.pfail = frng, refuse, pfail
        self.bad_known: set = set()         # (chan, block) whose failure completion the backend took
        p = lambda: pause_gen(rng, slow)
        self.wb = StreamSource(dut, "s_wb", dut.clk, ["op", "rec", "lpn", "txid", "epoch", "kind", "fua", "tag"], p())
        self.wbd = StreamSource(dut, "s_wbd", dut.clk, ["data", "last"], p())
        self.wbc = StreamSink(dut, "m_wbc", dut.clk, ["tag", "status", "ppn"], p())
        self.nreq = StreamSink(dut, "m_nreq", dut.clk, ["tag", "op", "chan", "way", "block", "page", "head",
                                                         "prio_read", "slot"], p())
        self.fetch = StreamSource(dut, "s_nfetch", dut.clk, ["chan", "slot"], p())
        self.ncpl = StreamSource(dut, "s_ncpl", dut.clk, ["tag", "status", "corrected", "bad_mark"], p())
        self.req = StreamSink(dut, "m_req", dut.clk, ["op", "tag", "txid", "lpn", "ppn"], p())
        self.rsp = StreamSource(dut, "s_rsp", dut.clk, ["tag", "status", "ppn", "mapped", "from_tx", "count"])
        self.free = StreamSource(dut, "s_free", dut.clk, ["chan", "way", "block"], p())
        self.bad = StreamSink(dut, "m_bad", dut.clk, ["chan", "way", "block"], p())
        self.eng, self.nand = Engine(self), Nand(self)
        self.cyc = 0
        self.next_blk = [0] * NCH
        self.offered = [False] * NCH
        self.reqs: list[dict] = []          # by seq: the requests as sent
        self.by_tag: dict[int, int] = {}    # wb tag -> seq (of the request in flight)
        self.done: list = []                # (tag, status, ppn, cycle)
        self.tw_ans: dict[int, int] = {}    # seq -> cycle its TX_WRITE was answered
        self.iss: dict[int, int] = {}       # seq -> first PROGRAM issue cycle
        self.prog_ok: dict[int, int] = {}   # seq -> programmed cycle
        self.ent_seq: dict[int, int] = {}   # table entry (NAND tag) -> seq in it
        self.nand_last: dict[int, dict] = {}  # table entry -> its last PROGRAM request
        self.marks_out = 0
        self.marks_max = 0
        for n in ("s_rd_valid", "s_fw_valid", "s_fwd_valid", "s_inval_valid", "s_map_valid", "wb_hold"):
            getattr(dut, n).value = 0
        dut.m_rdd_ready.value = 1
        dut.m_fwr_ready.value = 1
        dut.vc_addr.value = 0
        dut.txs_addr.value = 0
        dut.m_ndata_ready.value = 0
        every_edge(dut.clk, self.edge)

    # ---- events
    def ev_prog_issue(self, ent: int, r: dict, cyc: int) -> None:
        s = self.ent_seq[ent]
        first = s not in self.iss
        self.nand_last[ent] = r
        self.iss.setdefault(s, cyc)
        if self.reqs[s]["rec"] != RC_NONE and first:
            self.marks_out += 1
            self.marks_max = max(self.marks_max, self.marks_out)

    def ev_prog_done(self, ent: int, ppn: int, cyc: int) -> None:
        self.prog_ok[self.ent_seq[ent]] = cyc

    def edge(self) -> None:
        self.cyc += 1
        cyc, dut = self.cyc, self.dut
        need = int(dut.blk_need.value)
        for d in range(NCH):                # the firmware: the die's next erased block
            if (need >> d) & 1 and not self.offered[d] and self.next_blk[d] < BLOCKS:
                self.free.send_nowait(chan=d, way=0, block=self.next_blk[d])
                self.next_blk[d] += 1
                self.offered[d] = True
            elif not (need >> d) & 1:
                self.offered[d] = False
        while self.req.queue:
            r = self.req.queue.popleft()
            self.eng.take(r, cyc)
        while self.eng.pending and self.eng.pending[0][0] <= cyc:
            _, a = self.eng.pending.popleft()
            self.rsp.send_nowait(**a)
        self.nand.edge(cyc)
        while self.wbc.queue:
            c = self.wbc.queue.popleft()
            s = self.by_tag.pop(c["tag"])
            self.done.append((s, c["status"], c["ppn"], cyc))
            if self.reqs[s]["rec"] != RC_NONE:
                self.marks_out -= 1

    def on_wb(self, item, cyc) -> None:
        # the table is a ring in arrival order (README): entry = requests accepted before mod WIN
        self.ent_seq[item["seq"] % WIN] = item["seq"]

    def on_ncpl(self, item, cyc) -> None:
        if item["status"] != 0:             # from here on the backend must not program that block
            r = self.nand_last[item["tag"]]
            self.bad_known.add((r["chan"], r["block"]))

    def on_rsp(self, item, cyc) -> None:
        if item["tag"] & 0xC0 == 0x40:      # an early TX_WRITE's answer (tag 0x40 + entry)
            self.tw_ans[self.ent_seq[item["tag"] & 0x3F]] = cyc

    # ---- the write buffer's side
    def send(self, op: int, rec: int, lpn: int, txid: int) -> int:
        s = len(self.reqs)
        tag = s & 0xFF
        assert tag not in self.by_tag
        data = [self.rng.getrandbits(32) for _ in range(PW)] if op == 0 else []
        self.reqs.append(dict(op=op, rec=rec, lpn=lpn, txid=txid, data=data, tag=tag))
        self.by_tag[tag] = s
        self.wb.send_nowait(op=op, rec=rec, lpn=lpn, txid=txid, epoch=s & 0xFFFF, kind=0, fua=0, tag=tag, seq=s)
        for i, w in enumerate(data):
            self.wbd.send_nowait(data=w, last=int(i == PW - 1))
        return s

    def completed(self, s: int) -> bool:
        return any(d[0] == s for d in self.done)

    async def wait_done(self, s: int, limit: int = 200_000) -> None:
        n = 0
        while not self.completed(s):
            await RisingEdge(self.dut.clk)
            n += 1
            assert n < limit, f"request seq {s} not completed after {limit} cycles"

    async def drain(self) -> None:
        n = 0
        while len(self.done) < len(self.reqs):
            await RisingEdge(self.dut.clk)
            n += 1
            assert n < 400_000, f"{len(self.reqs) - len(self.done)} requests never completed"
        await ClockCycles(self.dut.clk, 20)

    # ---- the reference and its checks
    def check(self) -> dict:
        reqs = self.reqs
        # completions: in request order, each once
        assert [d[0] for d in self.done] == list(range(len(reqs))), "completions out of request order"
        # which page each TX_WRITE named (a failed program's page included) and which were refused
        seq_of_ppn = {pp: p["seq"] for pp, p in list(self.nand.pages.items()) + list(self.nand.failed.items())}
        tw_seq: dict[int, int] = {}         # seq -> number of TX_WRITEs naming its page
        tw_failed: dict[int, bool] = {}     # seq -> its TX_WRITE named a page whose program failed
        for op, t, lpn, ppn, cyc in self.eng.log:
            if op == R_TX_WRITE:
                assert ppn in seq_of_ppn, f"TX_WRITE of tx {t} names page {ppn:#x}, never programmed"
                q = seq_of_ppn[ppn]
                assert (reqs[q]["txid"], reqs[q]["lpn"]) == (t, lpn), f"TX_WRITE {t} {lpn} for seq {q}"
                tw_seq[q] = tw_seq.get(q, 0) + 1
                tw_failed[q] = ppn in self.nand.failed
        refused = {seq_of_ppn[pp]: st for (t, pp), st in self.eng.refused.items()}
        # the reference (README "Transactions", persistence.md §4): per tx its pending pages in seq
        # order and its first refused TX_WRITE's status (the error); a commit of a tx with an error
        # is programmed ABORT and completes with that status, the tx dropped; the marked page's own
        # TX_WRITE is not part of the error (it goes at the mark's issue: a refused one still
        # commits, with the page mapped, status OK); an abort record completes with the engine's
        # answer (OK, or TX_EMPTY when no TX_WRITE of t was taken); the error ends with the commit
        l2p: dict[int, int] = {}
        hist: dict[int, list] = {}          # lpn -> the values the replay gives it, in order
        pend: dict[int, list] = {}          # txid -> [(lpn, seq, taken by the engine)]
        err: dict[int, int] = {}
        flags: dict[int, int] = {}
        n_doomed = n_fix = n_fix_sup = 0
        # the mapping requests the README's completion rules give: a plain page MAP_WRITE, a TRIM
        # UNMAP, a COMMIT-marked page whose own TX_WRITE failed or named a failed page MAP_WRITE after
        # its COMMIT, and after a COMMIT one LOOKUP per fix of the tx (a taken TX_WRITE that named
        # a failed page; the mark's own page is no fix), MAP_WRITE to the new page when the LOOKUP
        # still gives the failed one (no later page of the tx on that LPN); after an ABORT none
        want_ops: list = []
        for s, r in enumerate(reqs):
            st, ppn = self.done[s][1], self.done[s][2]
            t = r["txid"]
            fl = 0
            cnt_want = None
            if r["rec"] == RC_NONE and r["op"] == 1:
                l2p.pop(r["lpn"], None)
                hist.setdefault(r["lpn"], []).append(None)
                want_ops.append((R_UNMAP, r["lpn"], None))
                want, fl = OK, F_TRIM
            elif r["rec"] == RC_NONE and t == 0:
                l2p[r["lpn"]] = s
                hist.setdefault(r["lpn"], []).append(s)
                want_ops.append((R_MAP_WRITE, r["lpn"], s))
                want = OK
            elif r["rec"] == RC_NONE:
                assert tw_seq.get(s) == 1, f"seq {s}: tx page with {tw_seq.get(s, 0)} TX_WRITEs"
                want = refused.get(s, OK)
                pend.setdefault(t, []).append((r["lpn"], s, s not in refused))
                if s in refused:
                    err.setdefault(t, refused[s])
            else:
                ent = pend.pop(t, [])
                e = err.pop(t, None)
                if r["rec"] == RC_AREC or e is not None:
                    fl = F_ABORT
                    if r["rec"] == RC_AREC:
                        want = OK if any(k for _, _, k in ent) else TX_EMPTY
                    else:
                        want = e
                        n_doomed += 1
                        cnt_want = 0 if r["rec"] == RC_CREC else None   # a record's count: 0 unless OK
                    if r["rec"] == RC_CMARK:
                        assert s not in tw_seq, f"seq {s}: mark of tx {t} with an error sent a TX_WRITE"
                else:
                    fl = F_COMMIT
                    if r["rec"] == RC_CMARK:
                        assert tw_seq.get(s) == 1, f"seq {s}: mark with {tw_seq.get(s, 0)} TX_WRITEs"
                        ent.append((r["lpn"], s, s not in refused))
                        want = OK
                        if s in refused or tw_failed[s]:
                            want_ops.append((R_MAP_WRITE, r["lpn"], s))
                    else:
                        want = OK if ent else TX_EMPTY
                        cnt_want = len(ent)
                    for lp, q, _ in ent:
                        l2p[lp] = q
                        hist.setdefault(lp, []).append(q)
                    for i, (lp, q, k) in enumerate(ent):
                        if k and tw_failed[q] and reqs[q]["rec"] == RC_NONE:
                            n_fix += 1
                            want_ops.append((R_LOOKUP, lp, None))
                            if all(lp2 != lp for lp2, _, _ in ent[i + 1:]):
                                want_ops.append((R_MAP_WRITE, lp, q))
                            else:
                                n_fix_sup += 1
                if cnt_want is not None:
                    assert ppn == cnt_want, f"commit record seq {s}: count {ppn}, reference {cnt_want}"
            flags[s] = fl
            assert st == want, f"seq {s} {r}: status {st:#x}, reference {want:#x}"
        g = Counter((op, lpn, None if op != R_MAP_WRITE else seq_of_ppn.get(ppn, -1))
                    for op, t, lpn, ppn, _ in self.eng.log if op in (R_MAP_WRITE, R_UNMAP, R_LOOKUP))
        w = Counter(want_ops)
        assert g == w, f"mapping requests (op, lpn, seq): not asked {list((w - g).elements())[:6]}, " \
                       f"asked beyond the rules {list((g - w).elements())[:6]}"
        # every programmed page's spare words
        by_seq = {p["seq"]: (ppn, p) for ppn, p in self.nand.pages.items()}
        assert len(by_seq) == len(reqs), f"{len(by_seq)} pages programmed for {len(reqs)} requests"
        for s, r in enumerate(reqs):
            ppn, p = by_seq[s]
            lpn = 0xFFFFFFFF if r["op"] == 1 and r["rec"] != RC_NONE else r["lpn"]
            assert (p["lpn"], p["txid"], p["flags"]) == (lpn, r["txid"], flags[s]), f"seq {s} {r}: spare {p}"
            assert p["data"] == (r["data"] if r["op"] == 0 else [0] * PW), f"seq {s}: data"
            if r["op"] == 0 and r["rec"] == RC_NONE and self.done[s][1] == OK:
                assert self.done[s][2] == ppn, f"seq {s}: completion ppn {self.done[s][2]:#x}, page {ppn:#x}"
        for pp, p in self.nand.failed.items():   # a failed page was the same record
            ppn, q = by_seq[p["seq"]]
            assert {k: v for k, v in p.items() if k != "tag"} == {k: v for k, v in q.items() if k != "tag"}, \
                f"failed page {pp:#x} {p}, re-programmed as {q}"
        # the final mapping: the replay's (a failed page is never mapped)
        bad = {lp: pp for lp, pp in self.eng.l2p.items() if pp not in self.nand.pages}
        assert not bad, f"mapped to pages not on flash: {bad}"
        got = {lp: self.nand.pages[pp]["seq"] for lp, pp in self.eng.l2p.items()}
        assert got == l2p, f"mapping differs from the replay: {sorted(set(got.items()) ^ set(l2p.items()))[:6]}"
        assert not self.eng.tx, f"tx tables left: {self.eng.tx}"
        # and every mapping on the way (completions apply in request order, README "Completion in
        # order"): per LPN, the values the engine's map took are the replay's, in order (a value
        # as its record's seq: a fix's COMMIT maps the failed page, its MAP_WRITE the same record's
        # new page; repeats of a value merged)
        def merged(h):
            out = [None]
            for v in h:
                if v != out[-1]:
                    out.append(v)
            return out
        for lp in sorted(set(hist) | set(self.eng.hist)):
            eh = merged(None if pp is None else seq_of_ppn[pp] for pp in self.eng.hist.get(lp, []))
            rh = merged(hist.get(lp, []))
            assert eh == rh, f"LPN {lp}: the engine's map went through {eh}, the replay's through {rh}"
        # grown bad blocks: each failed program's block, once, in failure order
        got_bad = [(b["chan"], b["block"]) for b in self.bad.queue]
        assert all(b["way"] == 0 for b in self.bad.queue)
        assert got_bad == self.nand.fails, f"m_bad {got_bad}, failed programs {self.nand.fails}"
        assert int(self.dut.cnt_prog_fail.value) == len(self.nand.fails), "cnt_prog_fail"
        # ordering at the engine, per tx: TX_WRITEs against the tx's COMMIT / ABORT in seq order
        ops: dict[int, list] = {}
        for op, t, lpn, ppn, cyc in self.eng.log:
            if op == R_TX_WRITE:
                ops.setdefault(t, []).append(("w", seq_of_ppn[ppn], cyc))
            elif op in (R_COMMIT, R_ABORT):
                # the record / mark it belongs to: the oldest of t's not yet seen
                ops.setdefault(t, []).append(("c", None, cyc))
        recs = {t: [s for s, r in enumerate(reqs) if r["txid"] == t and r["rec"] != RC_NONE] for t in ops}
        for t, lst in ops.items():
            k = 0
            for kind, s, _ in lst:
                if kind == "c":
                    k += 1
                    continue
                lo = recs[t][k - 1] if k > 0 else -1
                hi = recs[t][k] if k < len(recs[t]) else 1 << 60
                assert lo < s <= hi, f"tx {t}: TX_WRITE of seq {s} reached the engine between its commits " \
                                     f"{lo} and {hi} out of seq order"
        # a mark / record of t goes to NAND after t's earlier TX_WRITEs were answered
        last_tw: dict[int, int] = {}
        for s, r in enumerate(reqs):
            t = r["txid"]
            if r["rec"] != RC_NONE:
                if t in last_tw and s in self.iss:
                    assert self.iss[s] >= last_tw[t], f"seq {s}: mark of tx {t} issued at {self.iss[s]} " \
                                                      f"before its TX_WRITE answered at {last_tw[t]}"
                last_tw.pop(t, None)
            elif t and r["op"] == 0 and s in self.tw_ans:
                last_tw[t] = max(last_tw.get(t, 0), self.tw_ans[s])
        # completion only once its page and every earlier one are programmed
        hi = 0
        for s in range(len(reqs)):
            hi = max(hi, self.prog_ok[s])
            assert self.done[s][3] > hi, f"seq {s} completed at {self.done[s][3]} before page programmed at {hi}"
        assert int(self.dut.cnt_proto_err.value) == 0, "protocol errors counted"
        return dict(reqs=len(reqs), marks_max=self.marks_max, early=len(self.tw_ans), refused=len(refused),
                    doomed=n_doomed, prog_fail=len(self.nand.fails),
                    refused_mark=sum(1 for q in refused if reqs[q]["rec"] == RC_CMARK),
                    tw_failed_page=sum(1 for (t, pp) in ((t, pp) for op, t, _, pp, _ in self.eng.log
                                                         if op == R_TX_WRITE) if pp in self.nand.failed),
                    fixes=n_fix, fixes_superseded=n_fix_sup)


async def setup(dut, slow: bool, tprog: int, refuse: float = 0.0, pfail: float = 0.0):
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed)
    frng = random.Random(seed * 1_000_003 + 17)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    tb = TB(dut, rng, slow, tprog, frng, refuse, pfail)
    tb.rsp.on_accept = tb.on_rsp
    tb.ncpl.on_accept = tb.on_ncpl
    tb.wb.on_accept = tb.on_wb
    await ClockCycles(dut.clk, 5)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    return tb


@cocotb.test()
async def tx_random(dut):
    """A random stream: plain pages, TRIMs, several txs open at once (pages, marks, commit and
    abort records), random idle and backpressure everywhere; every check of the module's doc."""
    tb = await setup(dut, True, 80, float(os.environ.get("ATS_BACKEND_REFUSE", "0.05")),
                     float(os.environ.get("ATS_BACKEND_PFAIL", "0.02")))
    rng = tb.rng
    closing: dict[int, int] = {}            # txid -> seq of its mark / record in flight
    opened: dict[int, int] = {}             # txid -> pages sent since its last commit / abort
    used: dict[int, list] = {}              # txid -> its last LPNs: a tx writes an LPN again now and
                                            # then (a later page of t supersedes a fixed one)

    def tlpn(t: int) -> int:
        lst = used.setdefault(t, [])
        lp = rng.choice(lst) if lst and rng.random() < 0.3 else rng.randrange(24)
        lst.append(lp)
        del lst[:-4]
        return lp
    for _ in range(int(os.environ.get("ATS_BACKEND_STEPS", "800"))):
        for t, s in list(closing.items()):
            if tb.completed(s):
                del closing[t]
        x = rng.random()
        free_t = [t for t in range(1, NTX + 1) if t not in closing]
        if x < 0.04 and closing:
            # a page of t while t's commit / abort is in flight (the backend takes it: README
            # "Transactions"; the write buffer sends none): it belongs to t's next commit
            t = rng.choice(sorted(closing))
            tb.send(0, RC_NONE, tlpn(t), t)
            opened[t] = opened.get(t, 0) + 1
            continue
        if x < 0.2 or not free_t:
            if not free_t:
                await tb.wait_done(min(closing.values()))
                continue
            tb.send(rng.random() < 0.15, RC_NONE, rng.randrange(24), 0)
        else:
            t = rng.choice(free_t)
            y = rng.random()
            if y < 0.55 or (y < 0.7 and not opened.get(t)):
                tb.send(0, RC_NONE, tlpn(t), t)
                opened[t] = opened.get(t, 0) + 1
            elif y < 0.85:
                closing[t] = tb.send(0, RC_CMARK, tlpn(t), t)
                opened[t] = 0
            elif y < 0.94:
                closing[t] = tb.send(1, RC_CREC, 0, t)
                opened[t] = 0
            else:
                closing[t] = tb.send(1, RC_AREC, 0, t)
                opened[t] = 0
        if rng.random() < 0.1:
            await ClockCycles(dut.clk, rng.randint(1, 200))
    for t in range(1, NTX + 1):             # every tx ends
        if t in closing:
            await tb.wait_done(closing.pop(t))
        if opened.get(t):
            tb.send(0, RC_CMARK, tlpn(t), t)
    await tb.drain()
    r = tb.check()
    dut._log.info(f"tx_random: {r}")
    assert r["early"] > 0
    if tb.refuse >= 0.05 and tb.pfail >= 0.02:  # the failure paths were exercised
        assert min(r["refused"], r["doomed"], r["refused_mark"], r["prog_fail"], r["tw_failed_page"],
                   r["fixes"], r["fixes_superseded"]) > 0, f"a failure path not met: {r}"


@cocotb.test()
async def tx_overlap(dut):
    """Atomic Writes of 1 and 2 pages on 8 txids in turn, queued (no idle, no backpressure): marks
    of several txs in flight at once, and the stream faster than one commit a program round."""
    tprog = 300
    tb = await setup(dut, False, tprog)
    k = 0
    closing: dict[int, int] = {}
    lpn = 0
    for n in (1, 2):
        start = tb.cyc
        sent = []
        tb.marks_max = 0
        for i in range(16):
            t = 1 + k % NTX
            k += 1
            if t in closing:
                await tb.wait_done(closing.pop(t))
            for _ in range(n - 1):
                tb.send(0, RC_NONE, lpn, t)
                lpn += 1
            closing[t] = tb.send(0, RC_CMARK, lpn, t)
            sent.append(closing[t])
            lpn += 1
        for s in sent:
            await tb.wait_done(s)
        took = tb.cyc - start
        # one commit at a time: each mark a program round of its own (16 rounds)
        bound = int(0.75 * 16 * tprog)
        dut._log.info(f"tx_overlap n={n}: {took} cycles for 16 atomic Writes (bound {bound}), "
                      f"marks in flight at most {tb.marks_max}")
        assert tb.marks_max >= 2, f"n={n}: never two commit marks in flight at once"
        assert took <= bound, f"n={n}: {took} cycles > {bound}: the marks did not overlap"
    await tb.drain()
    tb.check()


SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
def test_ats_backend(seed):
    src = os.environ.get("ATS_BACKEND_SRC")
    key = "tx" + ("_" + Path(src).parent.name if src else "")
    run(toplevel="ats_backend",
        sources=block_sources("ats_backend", replace={"ats_backend.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend", test_dir=HERE, build_key=key,
        parameters=dict(NUM_CHAN=NCH, WAYS=1, PAGE_BYTES=PB, PAGES_PER_BLOCK=PPB, BLOCKS=BLOCKS, WIN=WIN,
                        RD_SLOTS=2, PPN_W=16),
        testcase=os.environ.get("ATS_BACKEND_TEST") or None,
        seed=seed, results_name=f"{key}_seed{seed}", extra_env={"ATS_SEED": str(seed)}, public={})
