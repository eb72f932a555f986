"""cocotb tests of ats_backend's write path and transactions (rtl/backend/README.md "Transactions",
docs/persistence.md §4), the backend alone between a Python remap engine and a Python NAND.

The environment: `Engine` answers the remap requests in request order (a committed map and a list
per tx, README "Remap engine" of spinal/.../remap: TX_WRITE appends, COMMIT applies in append order,
ABORT drops, COMMIT / ABORT of an empty tx TX_EMPTY; never refuses), after a random delay; `Nand`
(4 dies, one a channel) queues each die's PROGRAMs, asks for the page (`s_nfetch`), takes its words
and 5 spare words with random backpressure, holds the die for a random program time and completes.
The write buffer's side sends PROGRAMs (plain, tx pages, COMMIT marks), UNMAPs, commit and abort
records as the write buffer may (README "Transactions"): several txs open at once on txids 1..8, a
txid's next commit / abort only after its last one completed; now and then a page of t while t's
commit is in flight (which the write buffer never sends, the backend takes: it belongs to t's next
commit).

The reference (`Ref`, plain Python from the READMEs): the requests in `seq` order; completions in
request order, each with its status (OK; a commit / abort record TX_EMPTY when its tx holds nothing;
a commit record's `ppn` = the entries applied); every programmed page's spare words (lpn, seq,
txid, flags COMMIT / ABORT / TRIM); the final mapping = the replay of the request stream (plain
pages and TRIMs in order, a tx's pages applied at its commit, dropped at its abort). Ordering
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

Environment: ATS_SEED, ATS_BACKEND_SRC (another copy of ats_backend.sv: mutation / old-rule checks).
"""
from __future__ import annotations

import os
import random
import sys
from collections import deque
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
OK, TX_EMPTY = 0x00, 0x06
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
        self.pending: deque = deque()       # (due cycle, response)

    def take(self, r: dict, cyc: int) -> None:
        op, t, lpn, ppn = r["op"], r["txid"], r["lpn"], r["ppn"]
        self.log.append((op, t, lpn, ppn, cyc))
        st, rp, mapped, cnt = OK, 0, 0, 0
        if op == R_MAP_WRITE:
            if lpn in self.l2p:
                rp, mapped = self.l2p[lpn], 1
            self.l2p[lpn] = ppn
        elif op == R_UNMAP:
            if lpn in self.l2p:
                rp, mapped = self.l2p.pop(lpn), 1
        elif op == R_LOOKUP:
            if lpn in self.l2p:
                rp, mapped = self.l2p[lpn], 1
        elif op == R_TX_WRITE:
            self.tx.setdefault(t, []).append((lpn, ppn))
        elif op in (R_COMMIT, R_ABORT):
            ent = self.tx.pop(t, [])
            if not ent:
                st = TX_EMPTY
            elif op == R_COMMIT:
                for lp, pp in ent:
                    self.l2p[lp] = pp
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
        self.ready = [0] * NCH

    def edge(self, cyc: int) -> None:
        tb, dut = self.tb, self.tb.dut
        while tb.nreq.queue:
            r = tb.nreq.queue.popleft()
            assert r["op"] == 1 and r["head"] == 0 and r["prio_read"] == 0, f"nreq {r}"
            assert r["way"] == 0 and r["chan"] < NCH
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
                    assert ppn not in self.pages, f"page {ppn:#x} programmed twice"
                    wd = cur[1]
                    self.pages[ppn] = dict(data=wd[:PW], lpn=wd[PW], seq=wd[PW + 1] | (wd[PW + 2] << 32),
                                           epoch=wd[PW + 3], flags=(wd[PW + 4] >> 16) & 0xFF,
                                           kind=(wd[PW + 4] >> 8) & 3, txid=wd[PW + 4] & 0x3F, tag=r["tag"])
                    cur[2], cur[3] = "prog", cyc + tb.tprog + (tb.rng.randint(0, tb.tprog // 4) if tb.slow else 0)
            if cur is not None and cur[2] == "prog" and cyc >= cur[3]:
                tb.ncpl.send_nowait(tag=cur[0]["tag"], status=0, corrected=0, bad_mark=0)
                tb.ev_prog_done(cur[0]["tag"], ppn_of(c, cur[0]["block"], cur[0]["page"]), cyc)
                self.cur[c] = None
        rdy = 0
        for c in range(NCH):
            self.ready[c] = int(not (tb.slow and tb.rng.random() < 0.3))
            rdy |= self.ready[c] << c
        dut.m_ndata_ready.value = rdy


class TB:
    def __init__(self, dut, rng: random.Random, slow: bool, tprog: int) -> None:
        self.dut, self.rng, self.slow, self.tprog = dut, rng, slow, tprog
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
        self.marks_out = 0
        self.marks_max = 0
        for n in ("s_rd_valid", "s_fw_valid", "s_fwd_valid", "s_inval_valid", "s_map_valid", "wb_hold"):
            getattr(dut, n).value = 0
        dut.m_rdd_ready.value = 1
        dut.m_fwr_ready.value = 1
        dut.m_bad_ready.value = 1
        dut.vc_addr.value = 0
        dut.txs_addr.value = 0
        dut.m_ndata_ready.value = 0
        every_edge(dut.clk, self.edge)

    # ---- events
    def ev_prog_issue(self, ent: int, r: dict, cyc: int) -> None:
        s = self.ent_seq[ent]
        self.iss.setdefault(s, cyc)
        if self.reqs[s]["rec"] != RC_NONE:
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
        # completions: in request order, each once, status and commit count as the reference says
        assert [d[0] for d in self.done] == list(range(len(reqs))), "completions out of request order"
        l2p: dict[int, int] = {}
        pend: dict[int, list] = {}
        for s, r in enumerate(reqs):
            st, ppn = self.done[s][1], self.done[s][2]
            t = r["txid"]
            if r["rec"] == RC_NONE and r["op"] == 1:
                l2p.pop(r["lpn"], None)
                want = OK
            elif r["rec"] == RC_NONE and t == 0:
                l2p[r["lpn"]] = s
                want = OK
            elif r["rec"] == RC_NONE:
                pend.setdefault(t, []).append((r["lpn"], s))
                want = OK
            elif r["rec"] == RC_CMARK:
                ent = pend.pop(t, []) + [(r["lpn"], s)]
                for lp, q in ent:
                    l2p[lp] = q
                want = OK
            elif r["rec"] == RC_CREC:
                ent = pend.pop(t, [])
                for lp, q in ent:
                    l2p[lp] = q
                want = OK if ent else TX_EMPTY
                assert ppn == len(ent), f"commit record seq {s}: count {ppn}, reference {len(ent)}"
            else:
                ent = pend.pop(t, [])
                want = OK if ent else TX_EMPTY
            assert st == want, f"seq {s} {r}: status {st:#x}, reference {want:#x}"
        # every programmed page's spare words
        by_seq = {p["seq"]: (ppn, p) for ppn, p in self.nand.pages.items()}
        assert len(by_seq) == len(reqs), f"{len(by_seq)} pages programmed for {len(reqs)} requests"
        for s, r in enumerate(reqs):
            ppn, p = by_seq[s]
            fl = (F_TRIM if r["op"] == 1 and r["rec"] == RC_NONE else
                  F_ABORT if r["rec"] == RC_AREC else F_COMMIT if r["rec"] != RC_NONE else 0)
            lpn = 0xFFFFFFFF if r["op"] == 1 and r["rec"] != RC_NONE else r["lpn"]
            assert (p["lpn"], p["txid"], p["flags"]) == (lpn, r["txid"], fl), f"seq {s} {r}: spare {p}"
            assert p["data"] == (r["data"] if r["op"] == 0 else [0] * PW), f"seq {s}: data"
            if r["op"] == 0 and r["rec"] == RC_NONE and self.done[s][1] == OK:
                assert self.done[s][2] == ppn, f"seq {s}: completion ppn {self.done[s][2]:#x}, page {ppn:#x}"
        # the final mapping: the replay's
        got = {lp: self.nand.pages[pp]["seq"] for lp, pp in self.eng.l2p.items()}
        assert got == l2p, f"mapping differs from the replay: {sorted(set(got.items()) ^ set(l2p.items()))[:6]}"
        assert not self.eng.tx, f"tx tables left: {self.eng.tx}"
        # ordering at the engine, per tx: TX_WRITEs against the tx's COMMIT / ABORT in seq order
        seq_of_ppn = {pp: p["seq"] for pp, p in self.nand.pages.items()}
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
        return dict(reqs=len(reqs), marks_max=self.marks_max, early=len(self.tw_ans))


async def setup(dut, slow: bool, tprog: int):
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    tb = TB(dut, rng, slow, tprog)
    tb.rsp.on_accept = tb.on_rsp
    tb.wb.on_accept = tb.on_wb
    await ClockCycles(dut.clk, 5)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    return tb


@cocotb.test()
async def tx_random(dut):
    """A random stream: plain pages, TRIMs, several txs open at once (pages, marks, commit and
    abort records), random idle and backpressure everywhere; every check of the module's doc."""
    tb = await setup(dut, True, 80)
    rng = tb.rng
    closing: dict[int, int] = {}            # txid -> seq of its mark / record in flight
    opened: dict[int, int] = {}             # txid -> pages sent since its last commit / abort
    for _ in range(int(os.environ.get("ATS_BACKEND_STEPS", "260"))):
        for t, s in list(closing.items()):
            if tb.completed(s):
                del closing[t]
        x = rng.random()
        free_t = [t for t in range(1, NTX + 1) if t not in closing]
        if x < 0.04 and closing:
            # a page of t while t's commit / abort is in flight (the backend takes it: README
            # "Transactions"; the write buffer sends none): it belongs to t's next commit
            t = rng.choice(sorted(closing))
            tb.send(0, RC_NONE, rng.randrange(24), t)
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
                tb.send(0, RC_NONE, rng.randrange(24), t)
                opened[t] = opened.get(t, 0) + 1
            elif y < 0.85:
                closing[t] = tb.send(0, RC_CMARK, rng.randrange(24), t)
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
            tb.send(0, RC_CMARK, rng.randrange(24), t)
    await tb.drain()
    r = tb.check()
    dut._log.info(f"tx_random: {r}")
    assert r["early"] > 0


@cocotb.test()
async def tx_overlap(dut):
    """Atomic Writes of 1 and 2 pages on 8 txids in turn, queued (no idle, no backpressure): marks
    of several txs in flight at once, and the stream faster than one commit a program round."""
    tprog = 300
    tb = await setup(dut, False, tprog)
    k = 0
    closing: dict[int, int] = {}
    lpn = 0
    t0 = None
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
        t0 = t0 or took
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
