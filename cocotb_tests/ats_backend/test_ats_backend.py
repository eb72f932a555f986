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
The SLOG = 1 build: ATS_BACKEND_TXFULL (its SLOG_TXFULL, 4), ATS_BACKEND_FULLSTEPS (slog_random's
full-page rounds, 24), ATS_BACKEND_BLOCKS (blocks a die, 32), ATS_BACKEND_RXSTEPS (slog_rx's rounds, 10), ATS_BACKEND_DEBUG=1 (the table's and the
S-Log receiver's state printed when a request does not complete); ATS_LONG=1 adds
test_ats_backend_slog_txfull (SLOG_TXFULL 1 and 6, 80 full-page rounds).
"""
from __future__ import annotations

import os
import random
import struct
import sys
from collections import Counter, deque
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen, random_pause

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "ats_backend_slog"))
from slog_unit_ref import SlogRef                        # noqa: E402  (the unit's reference, README_slog)
from atstb import slog_ref                               # noqa: E402  (persistence §10's decoder)
SLOG = os.environ.get("ATS_BACKEND_SLOG", "0") == "1"   # the SLOG = 1 build (its unit needs 64-byte pages)
NCH, PB, PPB, BLOCKS, WIN = 4, (64 if SLOG else 16), 8, int(os.environ.get("ATS_BACKEND_BLOCKS", "32")), 8
PW = PB // 4
SL_LPNS, SL_WAYS, SL_FRAGS, SL_TXFRAGS = 8, 2, 3, 6      # the SLOG build's index: 4 sets of 2 ways
SL_TXFULL = int(os.environ.get("ATS_BACKEND_TXFULL", "4"))  # full pages a record names (t's list, README_slog "Integration")
SL_CACHE = int(os.environ.get("ATS_BACKEND_SLCACHE", "2"))   # the read merge's cached log pages (0: none)
SL_RECS = int(os.environ.get("ATS_BACKEND_SLRECS", "1"))     # records the unit holds at once (SLOG_RECS)
SL_PACK = int(os.environ.get("ATS_BACKEND_SLPACK", "0"))     # SLOG_PACK: the unit's open page, sealed after each record
SL_OPEN = SL_PACK and SL_RECS > 1   # (SLOG_PACK 1, SLOG_RECS > 1: the page kept open for the next record)
SL_SEALT = int(os.environ.get("ATS_BACKEND_SEALT", "0"))    # SLOG_SEALT (SL_OPEN)
SL_PPNS = 8                                 # its LPGN -> PPN table: the 8 newest log pages (= WIN)
SL_TAG = 0xC0                               # the NAND tag of the merge's log page READ
# a COMMIT's applied mappings RELEASE their F (README "S-Log"); ATS_BACKEND_TXREL=0: the driver and the
# reference without it (the test before it)
TXREL = os.environ.get("ATS_BACKEND_TXREL", "1") != "0"
NAND_UNCORRECTABLE = 3
F_SLOG = 0x20
F_MERGE = 0x30                              # a MERGE page: RELOC | SLOG (persistence §10.3)
MG_TAG = 0xFB                               # the MERGE's read on the read unit (never a host read's tag)
RID_RSV, RID_UNRSV = 0xFD, 0xFC
OK, TX_FULL, INDEX_FULL, TX_EMPTY, BAD_FIELD, MEDIA_ERROR = 0x00, 0x04, 0x05, 0x06, 0x07, 0x10
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
        key = None                          # a refused TX_WRITE: (txid, ppn), its answer's cycle kept
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
                st = self.tb.frng.choice(self.tb.refuse_sts)
                self.refused[(t, ppn)] = st
                key = (t, ppn)
            else:
                self.tx.setdefault(t, []).append((lpn, ppn))
        elif op in (R_COMMIT, R_ABORT):
            ent = self.tx.pop(t, [])
            if not ent:
                st = TX_EMPTY
            elif op == R_COMMIT:
                for k, (lp, pp) in enumerate(ent):
                    self.l2p[lp] = pp
                    self.hist.setdefault(lp, []).append(pp)
                    # the applied mappings on m_map (remap README "Event streams"), the response
                    # independent of them (it may come before they are taken)
                    if self.tb.smap is not None:
                        self.tb.smap.send_nowait(lpn=lp, last=int(k == len(ent) - 1))
                cnt = len(ent)
        else:
            raise AssertionError(f"engine: unexpected op {op}")
        due = max(cyc + self.tb.rng.randint(1, 6 if self.tb.slow else 1),
                  self.pending[-1][0] + 1 if self.pending else 0)
        self.pending.append((due, dict(tag=r["tag"], status=st, ppn=rp, mapped=mapped, from_tx=0, count=cnt), key))


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
        self.rq: deque = deque()            # READs (SLOG build): (due cycle, request)
        self.rd_busy = False                # a READ's words are being sent
        self.log_reads: list = []           # the merge's log page READs: (LPGN of the page read, failed)

    def edge(self, cyc: int) -> None:
        tb, dut = self.tb, self.tb.dut
        while tb.nreq.queue:
            r = tb.nreq.queue.popleft()
            start = tb.nq_starts.popleft()
            assert r["way"] == 0 and r["chan"] < NCH
            if r["op"] == 0:                # a READ (host read 0x80 + slot, the merge's log page SL_TAG)
                assert r["head"] == 0 and r["prio_read"] == 1 and (0x80 <= r["tag"] < 0x80 + RD_SLOTS or r["tag"] == SL_TAG), \
                    f"nreq {r}"
                self.rq.append((cyc + tb.rng.randint(4, 60 if tb.slow else 4), r))
                continue
            assert r["op"] == 1 and r["head"] == 0 and r["prio_read"] == 0, f"nreq {r}"
            # issued (first valid on m_nreq) at the latest in the cycle after the one in which the
            # backend took the block's failure (an issue in that same cycle is registered: README
            # "Program failure"); the sink's backpressure may delay its acceptance further
            fail = tb.bad_at.get((r["chan"], r["block"]))
            assert fail is None or start <= fail + 1, \
                f"PROGRAM {r} to block {r['block']} of die {r['chan']} issued at {start}, after its program " \
                f"failure was taken at {fail}"
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
                    extra = tb.rng.randint(0, tb.tprog // 4) if tb.slow else 0
                    # (slog_random's rounds with two records in flight, SLOG_RECS > 1: an S-Log record's
                    # last page programs slowly, so the record is held while the next one is taken)
                    slow = tb.slow_last and int(dut.e_sl[r["tag"]].value) and int(dut.e_rec[r["tag"]].value) == RC_CREC
                    cur[2], cur[3] = "prog", cyc + (2000 if slow else tb.tprog + extra)
            if cur is not None and cur[2] == "prog" and cyc >= cur[3]:
                ppn = ppn_of(c, cur[0]["block"], cur[0]["page"])
                # (a MERGE page fails more often: its re-programming is a case of slog_random)
                # (a page whose first data word is in force_fail fails once: slog_random's full pages)
                forced = cur[4]["data"][0] in tb.force_fail
                tb.force_fail.discard(cur[4]["data"][0])
                if forced or tb.frng.random() < (0.25 if cur[4]["flags"] == F_MERGE and tb.pfail else tb.pfail):
                    # a program failure: the page is not on flash, the block goes bad
                    self.failed[ppn] = cur[4]
                    self.fails.append((c, cur[0]["block"]))
                    tb.ncpl.send_nowait(tag=cur[0]["tag"], status=NAND_PROGRAM_FAIL, corrected=0, bad_mark=0)
                else:
                    self.pages[ppn] = cur[4]
                    tb.ncpl.send_nowait(tag=cur[0]["tag"], status=0, corrected=0, bad_mark=0)
                    tb.ev_prog_done(cur[0]["tag"], ppn, cyc)
                self.cur[c] = None
        if self.rq and self.rq[0][0] <= cyc and not self.rd_busy:
            # a READ: the page's words and its 5 spare words on s_ndata (widx 0 ..), then (after the
            # last word was taken: on_nd) the completion; a log page READ fails now and then
            # (UNCORRECTABLE: the host read must answer MEDIA_ERROR)
            _, r = self.rq.popleft()
            ppn = ppn_of(r["chan"], r["block"], r["page"])
            assert ppn in self.pages, f"READ {r} of page {ppn:#x}, never programmed"
            p = self.pages[ppn]
            st = 0
            if r["tag"] == SL_TAG:
                assert p["kind"] == 1 and p["flags"] == F_SLOG, f"log page READ of a page that is not one: {p}"
                st = NAND_UNCORRECTABLE if tb.frng.random() < tb.lrfail else 0
                self.log_reads.append((p["epoch"], st != 0))
            words = p["data"] + [p["lpn"], p["seq"] & 0xFFFFFFFF, p["seq"] >> 32, p["epoch"],
                                 p["flags"] << 16 | p["kind"] << 8 | p["txid"]]
            for i, w in enumerate(words):
                tb.ndata.send_nowait(data=w, last=int(i == len(words) - 1), tag=r["tag"], widx=i, cpl=st)
            self.rd_busy = True
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
        self.bad_at: dict = {}              # ... and the cycle it took the first
        self.nq_start = None                # the cycle the NAND request on m_nreq became valid
        self.nq_starts: deque = deque()     # ... of each request the sink took, in order
        p = lambda: pause_gen(rng, slow)
        self.wb = StreamSource(dut, "s_wb", dut.clk, ["op", "rec", "lpn", "txid", "epoch", "kind", "fua", "tag",
                                                       "slog"], p())
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
        # the engine's applied mappings (SLOG = 1: the backend RELEASEs them; own pause generator)
        # (the engine's walk: a beat every few cycles; stalls in long bursts, the window the reads must not see)
        # map_hold: s_map offers nothing new while it is set (slog_random's RELEASE race rounds)
        self.map_hold = False
        self.race = 0                       # ... those rounds run
        mp = pause_gen(random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 11), "heavy", max_stall=30)

        def map_pause():
            while True:
                yield True if self.map_hold else next(mp)
        self.smap = StreamSource(dut, "s_map", dut.clk, ["lpn", "last"], map_pause()) if SLOG else None
        self.eng, self.nand = Engine(self), Nand(self)
        self.cyc = 0
        self.next_blk = [0] * NCH
        self.offered = [False] * NCH
        self.reqs: list[dict] = []          # by seq: the requests as sent
        self.by_tag: dict[int, int] = {}    # wb tag -> seq (of the request in flight)
        self.done: list = []                # (tag, status, ppn, cycle)
        self.tw_ans: dict[int, int] = {}    # seq -> cycle its TX_WRITE was answered
        self.iss: dict[int, int] = {}       # seq -> first PROGRAM issue cycle
        self.first_ppn: dict[int, int] = {} # seq -> the PPN of its first PROGRAM (a full META-PU's m1)
        self.force_fail: set = set()        # first data words of pages whose next program fails
        self.refuse_sts = (TX_FULL, INDEX_FULL)     # a refused TX_WRITE's status: one of these
        self.full_iter = self.full_skip = 0 # slog_random's full-page rounds: run, skipped (no room)
        self.full_pair = 0                  # ... of them with two S-Log commits in flight
        self.prog_ok: dict[int, int] = {}   # seq -> programmed cycle
        self.ent_seq: dict[int, int] = {}   # table entry (NAND tag) -> seq in it
        self.nand_last: dict[int, dict] = {}  # table entry -> its last PROGRAM request
        self.marks_out = 0
        self.marks_max = 0
        self.slog_mode = False              # requests and seqs not one to one (slog_random)
        self.acc_cyc: dict[int, int] = {}   # request -> the cycle s_wb took it
        self.rsp_meta: deque = deque()      # the engine responses sent, in order: (txid, ppn) of a refusal
        self.ref_cyc: dict = {}             # (txid, ppn) of a refused TX_WRITE -> the cycle its answer was taken
        self.rej_cyc: list = []             # (cycle, txid) of each S-Log record's rejection (sl_err_set)
        self.snap_cyc: list = []            # cycles of records' last descriptors taken by the unit
        self.cf_cyc: list = []              # ... of completeness flags sent to it
        self.scans = self.scan_waits = self.held_max = 0    # (SLOG_RECS > 1) scans, matches; records held
        self.slow_last = False
        self.conflicts = 0                  # slog_random's conflict rounds (SLOG_RECS > 1)
        self.seals = 0                      # (SLOG_PACK 1) seals the unit took
        self.seal_cyc: list = []            # ... their cycles
        self.pack_rounds = 0                # (SL_OPEN) slog_random's rounds of records back to back
        self.sealt_rounds = Counter()       # ... by their seal time (slog_sealt: the SoC's CSR SLOG_SEALT)
        self.sealt_cut = 0                  # ... seal time lowered under an open page's wait: sealed at once
        self.sealt_exact = 0                # ... and checked to the cycle (no record offered in between)
        self.pk_beside = 0                  # ... data pages completed before an earlier record (check_slog)
        for n in ("s_rd_valid", "s_fw_valid", "s_fwd_valid", "s_inval_valid", "wb_hold") + (() if SLOG else ("s_map_valid",)):
            getattr(dut, n).value = 0
        if True:                            # the write buffer's read ids 0xFD / 0xFC, host reads
            self.rd = StreamSource(dut, "s_rd", dut.clk, ["lpn", "txid", "tag"], p())
            self.ndata = StreamSource(dut, "s_ndata", dut.clk, ["data", "last", "tag", "widx"], p())
            self.ndata.on_accept = self.on_nd
            self.lrfail = 0.1 if pfail > 0 else 0.0
            # (SLOG = 0: no backpressure: a sink draws from rng every cycle, the old stimulus stays)
            self.rdd = StreamSink(dut, "m_rdd", dut.clk, ["data", "last", "status", "tag"], p() if SLOG else None)
            self.rdd_cur: list = []         # the page being received on m_rdd
            self.rid_pages: deque = deque() # the read ids' answer pages, in order
            self.read_pages: list = []      # (tag, words) of the host reads' pages
            self.read_done_c: list = []     # ... the cycle each was received (slog_snapshot)
        dut.m_fwr_ready.value = 1
        dut.vc_addr.value = 0
        dut.txs_addr.value = 0
        dut.slog_sealt.value = SL_SEALT     # (a top's port default is not applied: the CSR's reset value)
        dut.m_ndata_ready.value = 0
        every_edge(dut.clk, self.edge)

    # ---- events
    def seq_of_ent(self, ent: int) -> int:
        # the table is a ring in seq order (README): an allocated entry's seq is the one of
        # next_seq - WIN .. next_seq - 1 that is the entry mod WIN (an S-Log record takes one entry
        # per log page, so requests and entries are not one to one)
        ns = int(self.dut.next_seq.value)
        return ns - 1 - ((ns - 1 - ent) % WIN)

    def ev_prog_issue(self, ent: int, r: dict, cyc: int) -> None:
        s = self.seq_of_ent(ent)
        self.ent_seq[ent] = s
        first = s not in self.iss
        self.nand_last[ent] = r
        self.iss.setdefault(s, cyc)
        self.first_ppn.setdefault(s, ppn_of(r["chan"], r["block"], r["page"]))
        if not self.slog_mode and self.reqs[s]["rec"] != RC_NONE and first:
            self.marks_out += 1
            self.marks_max = max(self.marks_max, self.marks_out)

    def ev_prog_done(self, ent: int, ppn: int, cyc: int) -> None:
        self.prog_ok[self.seq_of_ent(ent)] = cyc

    def edge(self) -> None:
        self.cyc += 1
        cyc, dut = self.cyc, self.dut
        if int(dut.m_nreq_valid.value):     # (values before this edge: the sink takes it at this edge)
            if self.nq_start is None:
                self.nq_start = cyc
            if int(dut.m_nreq_ready.value):
                self.nq_starts.append(self.nq_start)
                self.nq_start = None
        if int(dut.s_rsp_valid.value):      # a response taken at this edge (s_rsp_ready is 1), in order
            key = self.rsp_meta.popleft()
            if key is not None:
                self.ref_cyc[key] = cyc
        if SLOG and int(dut.sl_err_set.value):  # an S-Log record rejected at this edge: t's error
            self.rej_cyc.append((cyc, int(dut.sl_t.value)))     # unless one is set (first wins)
        if SLOG and self.slog_mode:         # a record's last descriptor, a completeness flag (check_slog)
            if int(dut.g_slog.sl_snap_ev.value):
                self.snap_cyc.append(cyc)
            if int(dut.g_slog.sl_cf_ev.value):
                self.cf_cyc.append(cyc)
            if SL_PACK and int(dut.g_slog.sl_seal_ev.value):
                self.seals += 1
                self.seal_cyc.append(cyc)
                if os.environ.get("ATS_BACKEND_DEBUG"):
                    print("SEAL", cyc, int(dut.g_slog.rx_st_q.value), int(dut.s_wb_valid.value), int(dut.g_slog.sp_tm_q.value))
            if SL_RECS > 1:                 # the scan of held records' full pages (README "S-Log")
                self.scans += int(dut.g_slog.sl_scan_ev.value)
                self.scan_waits += int(dut.g_slog.sl_match_ev.value)
                self.held_max = max(self.held_max, int(dut.g_slog.hq_n_q.value))
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
            _, a, key = self.eng.pending.popleft()
            self.rsp.send_nowait(**a)
            self.rsp_meta.append(key)
        self.nand.edge(cyc)
        while self.rdd.queue:               # m_rdd: whole pages, never two interleaved (architecture §4)
            w = self.rdd.queue.popleft()
            assert not self.rdd_cur or w["tag"] == self.rdd_cur[0]["tag"], \
                f"m_rdd: a word of tag {w['tag']:#x} inside a page of tag {self.rdd_cur[0]['tag']:#x}"
            self.rdd_cur.append(w)
            if w["last"]:
                pg, self.rdd_cur = self.rdd_cur, []
                if pg[0]["tag"] in (RID_RSV, RID_UNRSV):
                    self.rid_pages.append(pg)
                else:
                    self.read_pages.append((pg[0]["tag"], pg))
                    self.read_done_c.append(cyc)
        while self.wbc.queue:
            c = self.wbc.queue.popleft()
            s = self.by_tag.pop(c["tag"])
            self.done.append((s, c["status"], c["ppn"], cyc))
            if self.reqs[s]["rec"] != RC_NONE:
                self.marks_out -= 1

    def on_wb(self, item, cyc) -> None:
        self.acc_cyc[item["seq"]] = self.cyc    # (slog_random: by request index)
        # the table is a ring in arrival order (README): entry = requests accepted before mod WIN
        self.ent_seq[item["seq"] % WIN] = item["seq"]

    def on_ncpl(self, item, cyc) -> None:
        if item["status"] != 0 and item["tag"] < WIN:   # from here on the backend must not program that block
            r = self.nand_last[item["tag"]]
            self.bad_known.add((r["chan"], r["block"]))
            # (the sources' callbacks run before TB.edge counts this edge: + 1)
            self.bad_at.setdefault((r["chan"], r["block"]), self.cyc + 1)

    def on_nd(self, item, cyc) -> None:
        if item["last"]:                    # a READ's last word taken: its completion
            self.ncpl.send_nowait(tag=item["tag"], status=item["cpl"], corrected=0, bad_mark=0)
            self.nand.rd_busy = False

    def on_rsp(self, item, cyc) -> None:
        if item["tag"] & 0xC0 == 0x40:      # an early TX_WRITE's answer (tag 0x40 + entry)
            self.tw_ans[self.seq_of_ent(item["tag"] & 0x3F)] = cyc

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

    def send_record(self, txid: int, frs, rng) -> tuple[int, list]:
        """An S-Log commit record of txid on s_wb (rec 2, slog 1); its fragments [(lpn, off, len)] get
        words drawn from `rng` (the caller's stream), returned with the request's index; the caller
        sends the two passes on s_wbd."""
        s = len(self.reqs)
        tag = s & 0xFF
        data = [[rng.getrandbits(32) for _ in range(ln // 4)] for _, _, ln in frs]
        self.reqs.append(dict(op=1, rec=RC_CREC, lpn=0, txid=txid, data=[], tag=tag, slog=True,
                              frs=[(lpn, o, ln, d) for (lpn, o, ln), d in zip(frs, data)]))
        self.by_tag[tag] = s
        self.wb.send_nowait(op=1, rec=RC_CREC, lpn=0, txid=txid, epoch=0, kind=0, fua=0, tag=tag, slog=1, seq=s)
        return s, data

    def completed(self, s: int) -> bool:
        return any(d[0] == s for d in self.done)

    async def wait_done(self, s: int, limit: int = 200_000) -> None:
        n = 0
        while not self.completed(s):
            await RisingEdge(self.dut.clk)
            n += 1
            if n >= limit and os.environ.get("ATS_BACKEND_DEBUG"):
                d = self.dut
                for nm in ("iss_ptr_q", "acc_ptr_q", "cpl_ptr_q", "c_st_q", "s_wb_ready", "s_wbd_ready", "s_wbd_valid",
                           "m_nreq_valid", "blk_need", "no_free_block", "next_seq", "s_wb_valid"):
                    try:
                        print("DBG", nm, int(getattr(d, nm).value))
                    except Exception as ex:
                        print("DBG", nm, ex)
                for nm in ("rx_st_q", "fi_q", "fj_q", "fn_q", "rx_t_q", "ix_who_q", "apl_s_q", "g_st_q"):
                    try:
                        print("DBG", nm, int(getattr(d.g_slog, nm).value))
                    except Exception as ex:
                        print("DBG", nm, ex)
                print("DBG e_st", [int(d.e_st[i].value) for i in range(WIN)])
                print("DBG e_txid", [int(d.e_txid[i].value) for i in range(WIN)], "e_rec", [int(d.e_rec[i].value) for i in range(WIN)])
                print("DBG e_sl", [int(d.e_sl[i].value) for i in range(WIN)])
                print("DBG req", self.reqs[s], "done", len(self.done), "reqs", len(self.reqs))
            assert n < limit, f"request seq {s} not completed after {limit} cycles"

    async def read_page(self, tag: int, what: str, limit: int = 50_000) -> list:
        """The first host read page of tag received (its words), taken off read_pages / read_done_c;
        fails after limit cycles without one."""
        k = 0
        while not any(g == tag for g, _ in self.read_pages):
            await RisingEdge(self.dut.clk)
            k += 1
            assert k < limit, f"{what}: no page"
        i = next(j for j, (g, _) in enumerate(self.read_pages) if g == tag)
        self.read_done_c.pop(i)
        return self.read_pages.pop(i)[1]

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
    # a fix superseded, the rarest failure path (met by chance above at some seeds only): three
    # times, t's page of x fails its first program after its early TX_WRITE named it, a later page
    # of t writes x again, then t's commit record; the checks below (a fix whose LPN a later page of
    # its tx writes: no MAP_WRITE for it) count it; a refused TX_WRITE leaves that round without one
    rf0, tb.refuse = tb.refuse, 0.0                 # (no refusal spoils these rounds)
    for k in range(3):
        t, x = 1 + k, 20 + k
        q1 = tb.send(0, RC_NONE, x, t)
        tb.force_fail.add(tb.reqs[q1]["data"][0])
        tb.send(0, RC_NONE, x, t)
        await tb.wait_done(tb.send(1, RC_CREC, 0, t))
    tb.refuse = rf0
    await tb.drain()
    r = tb.check()
    dut._log.info(f"tx_random: {r}")
    assert r["early"] > 0
    if tb.refuse >= 0.05 and tb.pfail >= 0.02:  # the failure paths were exercised (the SLOG build's
        # 64-byte pages change the timing: a superseded fix is the SLOG = 0 build's to meet)
        assert min(r["refused"], r["doomed"], r["refused_mark"], r["prog_fail"], r["tw_failed_page"],
                   r["fixes"], 1 if SLOG else r["fixes_superseded"]) > 0, f"a failure path not met: {r}"


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

@cocotb.test()
async def read_latency(dut):
    """Host read misses one at a time, no idle, no backpressure (both builds): a mapped LPN (its page
    from NAND, 4 cycles in the model) and an unmapped one (zeros), each checked; the cycles from the
    read's acceptance to its page's first and last word are logged, so the two builds' figures give
    what the read merge adds to a read of an LPN without fragments (README_slog "Read merge")."""
    tb = await setup(dut, False, 80)
    s = tb.send(0, RC_NONE, 5, 0)
    await tb.wait_done(s)
    acc: dict = {}
    tb.rd.on_accept = lambda item, cyc: acc.__setitem__(item["tag"], tb.cyc + 1)
    lat = {5: [], 99: []}
    for i in range(16):
        lpn = (5, 99)[i % 2]
        tb.rd.send_nowait(lpn=lpn, txid=0, tag=i)
        first = None
        while not any(g == i for g, _ in tb.read_pages):
            await RisingEdge(dut.clk)
            if first is None and tb.rdd_cur and tb.rdd_cur[0]["tag"] == i:
                first = tb.cyc
        k = next(j for j, (g, _) in enumerate(tb.read_pages) if g == i)
        _, pg = tb.read_pages.pop(k)
        tb.read_done_c.pop(k)
        want = tb.reqs[s]["data"] if lpn == 5 else [0] * PW
        assert [w["data"] for w in pg] == want and pg[-1]["status"] == OK, f"read {i} of lpn {lpn}: {pg}"
        lat[lpn].append((first - acc[i], tb.cyc - acc[i]))
        await ClockCycles(dut.clk, 20)
    dut._log.info(f"read_latency (SLOG = {int(SLOG)}): cycles from acceptance to first / last word: "
                  f"from NAND {sorted(set(lat[5]))}, unmapped {sorted(set(lat[99]))}")
    assert int(dut.cnt_proto_err.value) == 0, "protocol errors counted"


@cocotb.test()
async def read_ring(dut):
    """Reads behind a mapped read that waits for the NAND (`m_nreq` held), README "Read miss": pages
    leave in any order, but a read's page only once the issue pointer has passed it, so no read
    behind the waiting one is answered while it waits, and a slot back in the free list is named by
    no ring entry. Two rounds: (1) a PROGRAM holds the NAND request register, a mapped read waits
    for it with 3 x RD_SLOTS reads of unmapped LPNs (zeros) behind it; (2) the mapped read's own READ
    holds the register, a second mapped read waits for it, then RD_SLOTS - 2 zero reads (the ring
    one short of full), mapped reads of both LPNs again and more zero reads. Each round: nothing answered in 400 cycles; then every read answered exactly once,
    mapped ones with their page, the others zeros, all OK; no protocol error (a second NAND READ of
    one read is one). Before 2026-11-30 a zero read behind the waiting one was answered and freed its
    slot while its ring entry was still ahead of the issue pointer: a read taken into that slot
    overwrote the waiting read's entry (round 1 with RD_SLOTS 2: never answered; found by a seed
    sweep of slog_random, a MERGE's read lost) or, once the ring had room again, was issued twice
    (round 2 with RD_SLOTS 4: the stale entry issues it, then its own)."""
    tb = await setup(dut, False, 80)
    tb.rd.set_pause(pause_gen(tb.rng, True))        # random idle on s_rd, backpressure on m_rdd
    tb.rdd.set_pause(pause_gen(tb.rng, True))
    s5 = tb.send(0, RC_NONE, 5, 0)
    s6 = tb.send(0, RC_NONE, 6, 0)
    await tb.wait_done(s6)
    data = {5: tb.reqs[s5]["data"], 6: tb.reqs[s6]["data"]}
    hold = [False]

    def held():
        while True:
            yield hold[0]
    tb.nreq.set_pause(held())

    async def until(cond, what, limit=2_000):
        k = 0
        while not cond():
            await RisingEdge(dut.clk)
            k += 1
            assert k < limit, what

    async def round_(reads, what):
        want = {}
        for lpn in reads:
            tag = 64 + len(want) if what == "2" else len(want)
            want[tag] = data.get(lpn, [0] * PW)
            tb.rd.send_nowait(lpn=lpn, txid=0, tag=tag)
            if len(want) <= 2:              # (the first reads reach the NAND side before the rest)
                await ClockCycles(dut.clk, 40)
        await ClockCycles(dut.clk, 400)
        early = sorted(g for g, _ in tb.read_pages)
        assert not early, f"round {what}: answered while the first mapped read waits: {early}"
        hold[0] = False
        await until(lambda: len(tb.read_pages) >= len(want), f"round {what}: reads answered: "
                    f"{sorted(g for g, _ in tb.read_pages)} of {sorted(want)}", 20_000)
        await ClockCycles(dut.clk, 200)     # (a second answer of a read would come now)
        got = [g for g, _ in tb.read_pages]
        assert sorted(got) == sorted(want), f"round {what}: answers {sorted(got)}, reads {sorted(want)}"
        for g, pg in tb.read_pages:
            assert [w["data"] for w in pg] == want[g] and pg[-1]["status"] == OK, f"round {what}, read {g}: {pg}"
        tb.read_pages.clear()
        tb.read_done_c.clear()
    # round 1: a PROGRAM in the NAND request register, the mapped read waiting for it
    hold[0] = True
    s7 = tb.send(0, RC_NONE, 7, 0)
    await until(lambda: int(dut.m_nreq_valid.value), "the PROGRAM did not reach m_nreq")
    await round_([5] + [99 + i for i in range(3 * RD_SLOTS)], "1")
    await tb.wait_done(s7)
    # round 2: the mapped read's own READ in the register, a second mapped read waiting for it
    hold[0] = True
    await round_([5, 6] + [99 + i for i in range(RD_SLOTS - 2)] + [5, 6] + [120 + i for i in range(RD_SLOTS)], "2")
    assert int(dut.cnt_proto_err.value) == 0, "protocol errors counted"


# ---------------------------------------------------------------------------------------------
# S-Log (the SLOG = 1 build): the write buffer's reservations and S-Log commits (architecture
# §11.3-§11.4, README "S-Log"), checked against SlogRef (the unit's reference, README_slog) and
# persistence §10's decoder (atstb.slog_ref), both plain Python written from the docs
RD_SLOTS = int(os.environ.get("ATS_RD_SLOTS", "2"))   # host read slots: 2, 4 in test_ats_backend_rd4
FR_LPNS = list(range(24, 36))
MERGES = os.environ.get("ATS_BACKEND_MERGE", "1") == "1"   # slog_random's MERGEs (0: the test before them)               # LPNs that take fragments (3 a set: a set can fill)


async def rid(tb, tag: int, t: int, lpn: int) -> tuple[int, int]:
    """A RESERVE (0xFD) / UNRESERVE (0xFC) as the write buffer sends it: (status on last, word 0)."""
    tb.rd.send_nowait(lpn=lpn, txid=t, tag=tag)
    n = 0
    while not tb.rid_pages:
        await RisingEdge(tb.dut.clk)
        n += 1
        assert n < 20_000, f"read id {tag:#x} of tx {t} lpn {lpn}: no answer"
    words = tb.rid_pages.popleft()
    assert words[0]["tag"] == tag, f"answer page with tag {words[0]['tag']:#x}, read id {tag:#x} outstanding"
    assert len(words) == PW, f"read id {tag:#x}: {len(words)} words"
    assert all(w["status"] == OK for w in words[:-1])
    assert all(w["data"] == 0 for w in words[1:]) and (tag == RID_RSV or words[0]["data"] == 0)
    return words[-1]["status"], words[0]["data"]


def runs_of(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """n disjoint runs (off, len) in increasing order, each at most a log page's payload."""
    out, w = [], rng.randrange(3)
    for _ in range(n):
        if w >= PW:
            break
        ln = rng.randint(1, min(PW - w, (PB - 16) // 4, 5))
        out.append((4 * w, 4 * ln))
        w += ln + 1 + rng.randrange(2)
    return out


@cocotb.test(skip=not SLOG)
async def slog_random(dut):
    """Plain pages and TRIMs, S-Log transactions on txids 1..8 (reservations, tx pages, S-Log
    commits of 1..SLOG_TXFRAGS fragments, UNRESERVEs), some records the backend must reject
    (unreserved LPN, more fragments than the room, an unmapped base), doomed ones (a refused
    TX_WRITE of t), failed programs; random idle and backpressure; then every LPN's room probed.
    Every record of a tx with tx pages names its full pages (README_slog "Integration": t's list,
    newest per LPN, m1 = the first program's PPN), checked byte for byte against `SlogRef` and
    persistence §10's encoder (`atstb.slog_ref.LogWriter`); a full-page phase adds duplicates,
    exactly SLOG_TXFULL pages, SLOG_TXFULL + 1 (rejected TX_FULL), re-programmed full pages and t's
    previous incarnation ended by a COMMIT-marked page or an abort record (its list emptied there)."""
    tb = await setup(dut, True, 80, float(os.environ.get("ATS_BACKEND_REFUSE", "0.2")),
                     float(os.environ.get("ATS_BACKEND_PFAIL", "0.02")))
    tb.slog_mode = True
    rng = tb.rng
    # long NAND request stalls: a tx page sent just before its commit may be issued (its TX_WRITE
    # sent) only after the record's descriptors were taken, so the record's verdict must wait
    tb.nreq.set_pause(pause_gen(rng, "heavy"))
    tl: list = []                           # the timeline: ("req", index) and index operations
    rsv: dict[int, dict] = {}               # txid -> {lpn: room} reserved OK
    pages: dict[int, int] = {}              # txid -> its tx pages since its last commit
    last_fr = -1                            # the last request that wrote an LPN of FR_LPNS
    reads: list = []                        # the host reads' tags, in order
    mapped: set = set()                     # LPNs of FR_LPNS last written (not trimmed)
    fr_seen: list = []                      # LPNs named by a record's fragments (MERGE candidates)
    applied: set = set()                    # LPNs of a record answered OK, not written, trimmed or merged since
    rec_lpns: dict = {}                     # a record's request -> its fragments' LPNs
    trng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 13)   # (their choices: own generator)
    mrng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 5)   # the MERGEs' choices
    fw = StreamSource(dut, "s_fw", dut.clk, ["op", "chan", "way", "block", "page", "rop", "txid", "lpn", "ppn",
                                             "seq", "epoch", "flags", "kind"], pause_gen(mrng, True))
    fwr = StreamSink(dut, "m_fwr", dut.clk, ["status", "data", "last", "ppn", "mapped"], pause_gen(mrng, True))

    def send(op, rec, lpn, t):
        nonlocal last_fr
        s = tb.send(op, rec, lpn, t)
        tl.append(("req", s))
        if rec == RC_NONE and lpn in FR_LPNS and t == 0:
            last_fr = s
            fr_seen[:] = [x for x in fr_seen if x != lpn]
            applied.discard(lpn)
            (mapped.discard if op else mapped.add)(lpn)
        elif rec == RC_NONE and lpn in FR_LPNS:     # a tx page: maps nothing until its commit
            last_fr = s
        return s

    async def settle():
        # every plain write of a fragment LPN completed (its RELEASE done: README "S-Log"), so the
        # index operations meet the index in the driver's order
        if last_fr >= 0:
            await tb.wait_done(last_fr)

    async def reserve(t, lpn):
        await settle()
        st, room = await rid(tb, RID_RSV, t, lpn)
        tl.append(("rsv", t, lpn, st, room))
        if st == OK and room:
            rsv.setdefault(t, {})[lpn] = room

    async def host_read(lpn):
        # a read miss of a fragment LPN (architecture §11.5) when nothing of it is in flight (its plain
        # writes completed, no S-Log commit in flight: the driver awaits each), waited for: its page is
        # the version of the reference's state at that point; which log pages it read from NAND
        await settle()
        tag = 0x40 | (len(tl) & 0x3F)
        n0 = len(tb.nand.log_reads)
        tb.rd.send_nowait(lpn=lpn, txid=0, tag=tag)
        pg = await tb.read_page(tag, f"host read of lpn {lpn}")
        tl.append(("read", lpn, pg, tb.nand.log_reads[n0:]))

    async def merge(lpn, quiet=False):
        # firmware op 6 MERGE (architecture §11.6, README "Firmware port") once every request sent so
        # far was taken (the merge page's seq follows theirs); while it is in flight, now and then a
        # plain write or TRIM of lpn (the stale case) or a host read of lpn (must see base + F: the
        # RELEASE and the MAP_WRITE only at the merge's completion)
        await settle()
        k = 0
        while len(tb.acc_cyc) < len(tb.reqs):
            await RisingEdge(dut.clk)
            k += 1
            assert k < 50_000, "requests not taken"
        n0 = len(tb.nand.log_reads)
        ev = ["merge", lpn, None, None, None, None]
        tl.append(ev)
        fw.send_nowait(op=6, chan=0, way=0, block=0, page=0, rop=0, txid=0, lpn=lpn, ppn=0, seq=0, epoch=0,
                       flags=0, kind=0)
        x, tag = mrng.random(), None
        if quiet:                           # (nothing beside it: a MERGE that merges, below)
            x = 1.0
        if x < 0.35 and lpn in mapped:
            await ClockCycles(dut.clk, mrng.randint(0, 20))
            send(int(mrng.random() < 0.2), RC_NONE, lpn, 0)
        elif x < 0.6:                       # (no log page READ fails meanwhile: both read the same pages)
            lrf, tb.lrfail = tb.lrfail, 0.0
            await ClockCycles(dut.clk, mrng.randint(0, 150))
            tag = 0x40 | (len(tl) & 0x3F)
            tb.rd.send_nowait(lpn=lpn, txid=0, tag=tag)
        b = await fwr.recv(100_000)
        assert b["last"] == 1, "MERGE: a response of more than one beat"
        pg = None
        if tag is not None:
            pg = await tb.read_page(tag, f"host read of lpn {lpn} during its MERGE")
            tb.lrfail = lrf
        ev[2:] = [b["status"], b["ppn"], tb.nand.log_reads[n0:], pg]
        if b["status"] in (0, 2):           # (its fragments merged, or none: no candidate now)
            fr_seen[:] = [x for x in fr_seen if x != lpn]
            applied.discard(lpn)
        if mrng.random() < 0.6:
            await host_read(lpn)
        return b["status"]

    async def sread(rop, lpn=0, epoch=0):
        fw.send_nowait(op=7, chan=0, way=0, block=0, page=0, rop=rop, txid=0, lpn=lpn, ppn=0, seq=0, epoch=epoch,
                       flags=0, kind=0)
        b = await fwr.recv(20_000)
        assert b["last"] == 1, f"SLOAD rop {rop}: a response of more than one beat"
        return b["status"], b["mapped"], b["ppn"], b["data"]

    async def dump(slots):
        # the firmware's index reads (op 7 rops 3 / 4, README "Firmware port") of these slots: each
        # entry, each of its fragments and one past them (BAD_FIELD), a fragment number past 254;
        # checked against the reference at this point of the timeline (check_slog)
        await settle()
        got = []
        for i in slots:
            e = await sread(3, i)
            got.append(("e", i, 255, e))
            k = e[3] & 0xFF if e[0] == OK else 0
            for j in list(range(k + 1)) + ([300] if mrng.random() < 0.2 else []):
                got.append(("f", i, j, await sread(4, i, j)))
        tl.append(("dump", got))

    async def unreserve(t, lpn):
        await settle()
        st, _ = await rid(tb, RID_UNRSV, t, lpn)
        tl.append(("unrsv", t, lpn, st))
        rsv.get(t, {}).pop(lpn, None)

    async def commit(t):
        s, mine = await commit_send(t)
        await tb.wait_done(s)
        if s in rec_lpns and next(d[1] for d in tb.done if d[0] == s) == OK:
            applied.update(rec_lpns.pop(s))
        await commit_end(t, mine)

    async def commit_send(t, extra=True):
        # t's commit (a record of its fragments or a plain commit record) sent, not waited for
        # (extra: maybe tx pages just before it)
        frs = []
        mine = dict(rsv.get(t, {}))
        bad = not pages.get(t) and rng.random() < 0.4      # (a rejected record only without tx pages:
        if not pages.get(t) and mine and rng.random() < 0.3:    # a base unmapped after its RESERVE:
            send(1, RC_NONE, rng.choice(sorted(mine)), 0)       # the record is rejected (TX_FULL)
        if extra and not bad and mine and rng.random() < 0.4:   # tx pages just before the record: its
            await settle()                                  # verdict waits for their TX_WRITEs
            for _ in range(rng.randint(1, 2)):
                send(0, RC_NONE, rng.randrange(24), t)
                pages[t] = pages.get(t, 0) + 1
        for lpn, room in mine.items():                      #  its status races no refusal)
            n = room + 1 if bad and rng.random() < 0.5 else rng.randint(1, room)
            frs += [(lpn, o, ln) for o, ln in runs_of(rng, n)]
        if bad and rng.random() < 0.5:                      # an LPN t did not reserve
            frs.append((rng.choice([x for x in FR_LPNS if x not in mine]), 0, 8))
        if pages.get(t):                                    # (an unmapped base rejects the record)
            frs = [f for f in frs if f[0] in mapped]
        frs = frs[:SL_TXFRAGS + (1 if bad else 0)]
        if not frs:                                         # nothing to log: today's commit record
            s = send(1, RC_CREC, 0, t)
        else:
            await settle()                                  # its bases committed (architecture §11.4's wait)
            s, data = tb.send_record(t, frs, rng)
            tl.append(("req", s))
            for i, (lpn, o, ln) in enumerate(frs):
                tb.wbd.send_nowait(data=lpn, last=0)
                tb.wbd.send_nowait(data=o | ln << 16, last=int(i == len(frs) - 1))
            words = [w for d in data for w in d]
            for i, w in enumerate(words):
                tb.wbd.send_nowait(data=w, last=int(i == len(words) - 1))
            fr_seen.extend(lpn for lpn, _, _ in frs)
            rec_lpns[s] = [lpn for lpn, _, _ in frs]
        pages[t] = 0
        return s, mine

    async def commit_end(t, mine):
        # after t's commit completed: its reservations probed (UNRESERVE), its fragments read back
        for lpn in sorted(mine):            # the reservations: ended by APPLY / DISCARD (TX_EMPTY) or not
            await unreserve(t, lpn)
        rsv.pop(t, None)
        for lpn in sorted(mine):            # its fragments read back (read merge)
            if rng.random() < 0.5:
                await host_read(lpn)

    for lpn in FR_LPNS[:-2]:                # bases for most fragment LPNs (the last two: unmapped)
        send(0, RC_NONE, lpn, 0)
    async def phase(nsteps, merging):
        for _ in range(nsteps):
            x = rng.random()
            t = rng.randint(1, NTX)
            if x < 0.3:
                send(rng.random() < 0.1, RC_NONE, rng.choice(FR_LPNS if rng.random() < 0.5 else range(24)), 0)
            elif x < 0.45:
                send(0, RC_NONE, rng.randrange(24), t)
                pages[t] = pages.get(t, 0) + 1
            elif x < 0.65 and len(rsv.get(t, {})) < 3:
                await reserve(t, rng.choice(FR_LPNS))
            elif x < 0.7 and rsv.get(t):
                await unreserve(t, rng.choice(sorted(rsv[t])))
            elif x < 0.9 and (rsv.get(t) or pages.get(t)):
                await commit(t)
            if rng.random() < 0.1:
                await host_read(rng.choice(FR_LPNS))
            if merging and mrng.random() < 0.2:
                await merge(mrng.choice(fr_seen) if fr_seen and mrng.random() < 0.85 else mrng.choice(FR_LPNS))
            if rng.random() < 0.15:         # host reads (of never written LPNs: zero pages, no NAND)
                for _ in range(rng.randint(1, 3)):
                    tb.rd.send_nowait(lpn=100 + rng.randrange(8), txid=0, tag=len(reads) % 64)
                    reads.append(len(reads) % 64)
            if rng.random() < 0.1:
                await ClockCycles(dut.clk, rng.randint(1, 200))
        for t in range(1, NTX + 1):
            if rsv.get(t) or pages.get(t):
                await commit(t)
        await tb.drain()
        for lpn in FR_LPNS:                 # every fragment LPN read back
            await host_read(lpn)
    await phase(int(os.environ.get("ATS_BACKEND_STEPS", "300")), False)
    await dump(range(SL_LPNS))              # the whole index after the first phase (F not merged away)
    if MERGES:                              # then MERGEs among the same traffic (the test before them: MERGE=0)
        await phase(int(os.environ.get("ATS_BACKEND_MSTEPS", "100")), True)
        # merged, read back again: LPNs whose fragments a record applied first (a MERGE that merges:
        # not left to the random phase's luck), then the first six
        for lpn in sorted(applied)[:3] + FR_LPNS[:6]:
            await merge(lpn)
    # transactions' full pages of LPNs with fragments (README "S-Log" "Transaction commit"): t2 logs
    # fragments of a (an S-Log commit), then t writes a tx page of a (t has not reserved a) and
    # commits, half the time with an S-Log record of its own on b (APPLY, then the COMMIT's RELEASE
    # of a): a reads t's page, F[a] = [] (the room probes and dumps below check the index)
    lrf, tb.lrfail = tb.lrfail, max(tb.lrfail, 0.3) if tb.lrfail else 0.0   # (log page READs fail more often)
    for _ in range(int(os.environ.get("ATS_BACKEND_TXSTEPS", "20")) if TXREL else 0):
        t = trng.randint(1, NTX)
        t2 = t % NTX + 1
        c = sorted(mapped)
        if len(c) < 2 or rsv.get(t) or rsv.get(t2) or pages.get(t) or pages.get(t2):
            continue
        a, b = trng.sample(c, 2)
        await reserve(t2, a)
        if rsv.get(t2):
            await commit(t2)
        if trng.random() < 0.5:
            await reserve(t, b)
        await settle()
        send(0, RC_NONE, a, t)
        pages[t] = pages.get(t, 0) + 1
        if trng.random() < 0.5:
            send(0, RC_NONE, trng.randrange(24), t)
            pages[t] += 1
        await commit(t)
        await host_read(a)
        await host_read(b if trng.random() < 0.5 else trng.choice(FR_LPNS))
    # the RELEASE race (README "S-Log" "Transaction commit"): F[a] holds fragments (if it is empty,
    # t2 logs one first); u reserves a and writes a tx page (its record is then never a deliberately rejected one); t
    # writes a tx page of a and commits with a plain commit record while s_map is held, so t's
    # completion comes before its RELEASE of a; u's record of fragments of a is sent at once. Its
    # descriptor's LOOKUP (and so its APPLY) must wait until t's RELEASEs are done: looked up
    # between them, the RELEASE of a meets u's record held and leaves t2's stale fragments under
    # t's page (a read of a then merges them). No refusal spoils a round
    nrace = int(os.environ.get("ATS_BACKEND_RACESTEPS", "4")) if TXREL else 0
    for _ in range(4 * nrace):
        if tb.race >= nrace:
            break
        t, t2, u = trng.sample(range(1, NTX + 1), 3)
        c = sorted(mapped)
        if not c or any(rsv.get(x) or pages.get(x) for x in (t, t2, u)):
            continue
        a = trng.choice(c)
        rf0, tb.refuse = tb.refuse, 0.0
        await reserve(u, a)
        if rsv.get(u, {}).get(a) == SL_FRAGS:   # F[a] empty: t2 logs one fragment of a first (a tx
            await unreserve(u, a)               # page too: its record is then not a deliberately
            await reserve(t2, a)                # rejected one), room left for u
            if rsv.get(t2):
                rsv[t2][a] = 1
                send(0, RC_NONE, trng.randrange(24), t2)
                pages[t2] = pages.get(t2, 0) + 1
                await commit(t2)
            await reserve(u, a)
        room = rsv.get(u, {}).get(a, SL_FRAGS)
        if room < SL_FRAGS:                 # F[a] holds fragments (else: no round, u's reservation ended)
            send(0, RC_NONE, trng.randrange(24), u)
            pages[u] = pages.get(u, 0) + 1
            await settle()
            tb.map_hold = True
            send(0, RC_NONE, a, t)
            s = send(1, RC_CREC, 0, t)
            await tb.wait_done(s)
            n0 = tb.wbd.sent + len(tb.wbd.queue)
            su, mu = await commit_send(u)
            k = 0                           # u's first descriptor taken (its LOOKUP, unless it waits)
            while tb.wbd.sent < n0 + 2 and k < 5_000:
                await RisingEdge(dut.clk)
                k += 1
            await ClockCycles(dut.clk, trng.randint(30, 200))
            tb.map_hold = False
            tb.race += 1
            await tb.wait_done(su)
            await commit_end(u, mu)
            await host_read(a)
        elif rsv.get(u):
            await unreserve(u, a)
            rsv.pop(u, None)
        tb.refuse = rf0
    # t's full pages (README_slog "Integration"): t reserves an LPN, writes k tx pages (1 ..
    # SL_TXFULL, every fourth time SL_TXFULL + 1; LPNs from a pool of 1-4: duplicates) and commits
    # with an S-Log record: it names the newest page of each LPN (m1 = its first program's PPN)
    # before its fragments; more than SL_TXFULL pages: rejected TX_FULL, t aborted. Program failures
    # more often (a full page programmed again: the record is not flagged), refusals less (INDEX_FULL;
    # more in overflow rounds). Some rounds: t's previous incarnation ends at a COMMIT-marked page or
    # an abort record first; SL_TXFULL distinct LPNs; two records in flight (t's and t2's)
    # bases for two S-Log commits in flight below (t's and t2's records name two mapped LPNs): at
    # least four fragment LPNs mapped, whatever the phases above trimmed
    for lpn in FR_LPNS[:-2]:
        if len(mapped) < 4 and lpn not in mapped:
            send(0, RC_NONE, lpn, 0)
    await settle()
    pf, rf = tb.pfail, tb.refuse
    tb.pfail, tb.refuse = (0.05 if pf else 0.0), min(rf, 0.03)
    tb.refuse_sts = (INDEX_FULL, INDEX_FULL)    # (a refusal unlike the rejection's TX_FULL: which came first)
    for k in range(int(os.environ.get("ATS_BACKEND_FULLSTEPS", "24"))):
        t = trng.randint(1, NTX)
        c = sorted(mapped)
        if not c or rsv.get(t) or pages.get(t):
            continue
        b = trng.choice(c)
        if k % 3 == 0:                      # t's previous incarnation ends with a COMMIT-marked page or
            pool = trng.sample(range(24), 2)    # an abort record: its list is emptied there, the
            for _ in range(trng.randint(1, SL_TXFULL)):     # record below names none of these pages
                send(0, RC_NONE, trng.choice(pool), t)
            if k % 2 == 0:
                send(0, RC_CMARK, trng.choice(pool), t)
            else:
                send(1, RC_AREC, 0, t)
            pages[t] = 0
        await reserve(t, b)
        if not rsv.get(t):                  # no room (F or the set full): a plain write of b empties F
            send(0, RC_NONE, b, 0)
            await reserve(t, b)
        if not rsv.get(t):
            tb.full_skip += 1
            continue
        tb.full_iter += 1
        pool = trng.sample(range(24), trng.randint(1, 4))
        if k % 8 == 2:                      # SL_TXFULL distinct LPNs: a record of SL_TXFULL full META-PUs
            pool = trng.sample(range(24), SL_TXFULL)
        if k % 4 == 3 and rf:               # an overflow: its TX_WRITEs refused more often (a refusal
            tb.refuse = 0.25                # answered before the record's rejection: t's status wins)
        for j in range({3: SL_TXFULL + 1, 2: SL_TXFULL}.get(k % 4) or trng.randint(1, SL_TXFULL)):
            sq = send(0, RC_NONE, pool[j] if k % 8 == 2 else trng.choice(pool), t)
            pages[t] = pages.get(t, 0) + 1
            if pf and j == 0 and k % 3 == 1:    # (its first program fails: m1 names the failed copy)
                tb.force_fail.add(tb.reqs[sq]["data"][0])
        t2 = t % NTX + 1
        if k % 4 == 1 and not rsv.get(t2) and not pages.get(t2) and len(c) > 1:
            # two S-Log commits in flight: t2 (another LPN reserved, full pages of its own) sends its
            # record right behind t's, and t's next incarnation's pages go right after t's record
            # (before or after t2's; t's list emptied at its record's issue, their appends after);
            # neither record awaited before the other is sent; then t's next incarnation commits
            # with a record of its own
            b2 = trng.choice([x for x in c if x != b])
            await reserve(t2, b2)
            if not rsv.get(t2):             # no room: a plain write of b2 empties F (t2 logs a record)
                send(0, RC_NONE, b2, 0)
                await reserve(t2, b2)
            for _ in range(trng.randint(1, SL_TXFULL)):
                send(0, RC_NONE, trng.randrange(24), t2)
                pages[t2] = pages.get(t2, 0) + 1
            # with several records held (SLOG_RECS > 1), every other such round is a conflict: t
            # also writes a full page of b2, which t2 has reserved (README "S-Log" "Records in
            # flight"); t's last log page programs slowly (every such round), so that t2's record is taken
            # while t's is held, and in a conflict round its fragment of b2's LOOKUP must wait for
            # t's COMMIT (the scan)
            # (in a conflict round no TX_WRITE is refused and t's record gets no more tx pages: t's
            # and t2's records are both applied, t's not rejected for too many pages)
            conflict = SL_RECS > 1 and bool(rsv.get(t2, {}).get(b2)) and pages.get(t, 0) < SL_TXFULL and \
                2 * tb.conflicts <= tb.full_pair
            rf1 = tb.refuse
            if conflict:
                send(0, RC_NONE, b2, t)
                pages[t] = pages.get(t, 0) + 1
                tb.conflicts += 1
                tb.refuse = 0.0
            # (t's and t2's pages completed first: with WIN 8 they could fill the table, and t2's
            # record would then be taken only after t's commit completed, not beside it)
            await tb.wait_done(len(tb.reqs) - 1)
            tb.slow_last = SL_RECS > 1      # (t's record still held when t2's is taken: its last page slow)
            s1, m1 = await commit_send(t, extra=not conflict)
            nxt = trng.randint(1, SL_TXFULL)
            # (t's next pages between the records, only with SLOG_RECS 1: they wait for t's commit
            # to complete, txr_q, and t2's record behind them: the two would never be held together)
            between = trng.random() < 0.5 and SL_RECS == 1
            for _ in range(nxt if between else 0):
                send(0, RC_NONE, trng.randrange(24), t)
            s2, m2 = await commit_send(t2, extra=not conflict)
            for _ in range(0 if between else nxt):
                send(0, RC_NONE, trng.randrange(24), t)
            pages[t] = nxt
            await tb.wait_done(s1)
            tb.slow_last = False
            await tb.wait_done(s2)
            tb.refuse = rf1
            if conflict:                    # (both applied: the conflict was met, not dodged)
                assert [d[1] for d in tb.done if d[0] in (s1, s2)] == [OK, OK], \
                    f"conflict round: t's / t2's record not both applied {[d for d in tb.done if d[0] in (s1, s2)]}"
            await commit_end(t, m1)
            await commit_end(t2, m2)
            await reserve(t, b)
            tb.full_pair += 1
        if trng.random() < 0.3:
            await ClockCycles(dut.clk, trng.randint(1, 300))
        await commit(t)
        tb.refuse = min(rf, 0.03)
        await host_read(b)
    tb.pfail, tb.refuse = pf, rf
    tb.refuse_sts = (TX_FULL, INDEX_FULL)
    if SL_OPEN:
        # packed records (README "S-Log" "Packing"): 3-5 transactions each reserve a mapped fragment
        # LPN of their own and commit back to back with one small fragment (a record of 36-44 bytes
        # against a page's 48), so records start in a page left open and a page ends two of them;
        # between two records an idle gap now and then, below SLOG_SEALT (packed anyway) or above
        # it (the timer seals); then every record awaited, the reservations probed, a read back
        prng = random.Random(cocotb.RANDOM_SEED + 11)
        # the seal time (input slog_sealt, README "Packing": the SoC's CSR SLOG_SEALT, which the
        # host sets with FEATURE 0xC0) per round: SLOG_SEALT in two rounds of four, a short one
        # (0..7 cycles: sealed at nearly every gap) in one, 65535 in one: then, the records taken,
        # the page still open and idle for more than 24 cycles, it is lowered to 24 and the page
        # must be sealed within 4 cycles (the wait under way compares with the new value)
        for rnd in range(int(os.environ.get("ATS_BACKEND_PACKSTEPS", "10"))):
            kind = ("param", "param", "short", "long")[rnd % 4]
            sealt = {"param": SL_SEALT, "short": prng.choice((0, 1, 2, 7)), "long": 65535}[kind]
            dut.slog_sealt.value = sealt
            free_t = [u for u in range(1, NTX + 1) if not rsv.get(u) and not pages.get(u)]
            c = [y for y in FR_LPNS if y in mapped]
            m = min(len(free_t), len(c), prng.randint(3, 5))
            if m < 2:
                break
            ts, xs, go = prng.sample(free_t, m), prng.sample(c, m), []
            for u, x in zip(ts, xs):
                await reserve(u, x)
                if not rsv.get(u):          # no room: a plain write of x empties its F
                    send(0, RC_NONE, x, 0)
                    await reserve(u, x)
                if rsv.get(u):
                    go.append((u, x))
            await settle()
            sent = []
            # another transaction's data pages after the first record (taken beside its open page
            # when that page holds no record's tail; completed before it), committed after the round
            td = next((u for u in range(1, NTX + 1) if u not in ts and not rsv.get(u) and not pages.get(u)), None)
            nd = prng.randint(1, 4) if td is not None and prng.random() < 0.7 else 0
            for u, x in go:
                if len(sent) == 1 and nd:
                    for _ in range(nd):
                        send(0, RC_NONE, prng.randrange(24), td)
                        pages[td] = pages.get(td, 0) + 1
                if sent and prng.random() < 0.3:
                    gap = prng.randint(1, max(1, min(sealt, SL_SEALT) // 2))
                    await ClockCycles(dut.clk, prng.choice((gap, sealt + 30)) if sealt < 1000 else gap)
                w = prng.randrange(PW - 8)
                frs = [(x, 4 * w, 4 * prng.randint(1, 2))]
                sq, data = tb.send_record(u, frs, prng)
                tl.append(("req", sq))
                tb.wbd.send_nowait(data=x, last=0)
                tb.wbd.send_nowait(data=frs[0][1] | frs[0][2] << 16, last=1)
                words = [wd for d in data for wd in d]
                for i, wd in enumerate(words):
                    tb.wbd.send_nowait(data=wd, last=int(i == len(words) - 1))
                fr_seen.append(x)
                rec_lpns[sq] = [x]
                pages[u] = 0
                sent.append((sq, u))
            if kind == "long" and sent:
                while sent[-1][0] not in tb.acc_cyc:
                    await RisingEdge(dut.clk)
                g = dut.g_slog
                for _ in range(400):        # the receiver idle with the page open for more than 24 cycles
                    await RisingEdge(dut.clk)
                    if not int(g.pg_open.value) or int(g.sp_q.value) != 0 or int(g.sp_tm_q.value) > 24:
                        break
                if (int(g.sp_q.value) == 0 and int(g.pg_open.value) and int(g.sp_tm_q.value) > 24
                        and not int(dut.s_wb_valid.value)):
                    n0 = tb.seals
                    dut.slog_sealt.value = 24
                    # the exact cycle (README "Packing"): the input is registered at the next edge E1,
                    # the seal starts at E2 (the idle count is past 24 already) unless a record is
                    # offered in the cycle between (the rule waits for no record offered). Signals
                    # read at an edge show the cycle before it: after E2's read the state of E1, after
                    # E3's that of E2
                    await RisingEdge(dut.clk)
                    await RisingEdge(dut.clk)
                    assert int(g.sp_q.value) == 0, \
                        "the seal started before the lowered slog_sealt was registered"
                    offered = int(dut.s_wb_valid.value)
                    await RisingEdge(dut.clk)
                    if not offered:
                        assert int(g.sp_q.value) != 0, \
                            "slog_sealt lowered to 24 under a page idle past 24: the seal did not start at E2"
                        tb.sealt_exact += 1
                    await ClockCycles(dut.clk, 2)
                    assert tb.seals > n0, \
                        "slog_sealt lowered to 24 under an open page idle for more than 24 cycles: no seal within 4 cycles"
                    tb.sealt_cut += 1
            tb.sealt_rounds[kind] += 1
            for sq, u in sent:
                await tb.wait_done(sq)
                if next(d[1] for d in tb.done if d[0] == sq) == OK:
                    applied.update(rec_lpns.pop(sq))
            for sq, u in sent:
                await commit_end(u, dict(rsv.get(u, {})))
            if nd:
                await tb.wait_done(send(1, RC_CREC, 0, td))
                pages[td] = 0
            tb.pack_rounds += 1
        dut.slog_sealt.value = SL_SEALT
    if MERGES:
        # an applied MERGE for sure (the phases meet one by chance: not at every seed): t reserves a
        # mapped fragment LPN x, writes a tx page (so its record is not one of the deliberately
        # rejected ones) and commits with no TX_WRITE refused; then a MERGE of x with nothing beside
        # it; up to three tries (a program failure or a full index may still spoil one)
        rf0, tb.refuse = tb.refuse, 0.0             # (no refusal, failed program or failed log page
        pf0, tb.pfail = tb.pfail, 0.0               # READ spoils these tries)
        lr0, tb.lrfail = tb.lrfail, 0.0
        for _ in range(3):
            t = next((u for u in range(1, NTX + 1) if not rsv.get(u) and not pages.get(u)), None)
            c = [y for y in FR_LPNS if y in mapped]
            if t is None or not c:
                break
            x = mrng.choice(c)
            await reserve(t, x)
            if not rsv.get(t):              # no room: a plain write of x empties its F
                send(0, RC_NONE, x, 0)
                await reserve(t, x)
                if not rsv.get(t):
                    continue
            send(0, RC_NONE, mrng.randrange(24), t)
            pages[t] = pages.get(t, 0) + 1
            await commit(t)
            if await merge(x, quiet=True) == 0:
                break
        tb.refuse, tb.pfail, tb.lrfail = rf0, pf0, lr0
    if TXREL:
        for lpn in FR_LPNS:                 # every fragment LPN read back once more
            await host_read(lpn)
    tb.lrfail = lrf
    nd = 0
    for lpn in FR_LPNS:                     # the index's contents: each LPN's room (SLOG_FRAGS - |F|)
        await reserve(1, lpn)
        if lpn in rsv.get(1, {}):
            if nd < 2:                      # the whole index read with a reservation held (rop 3's rsv, owner)
                await dump(range(SL_LPNS))
                nd += 1
            await unreserve(1, lpn)
    await ClockCycles(dut.clk, 200)
    await dump(range(SL_LPNS + 2))          # the whole index (and two slots past it: BAD_FIELD)
    c0, c1 = await sread(6), await sread(6, epoch=1)
    tb.slog_ctr = (c0, c1)
    # the LPGN -> PPN table (rop 5) around every LPGN used, and the answer to a rop past 6
    tb.slog_pt = [(lg, await sread(5, epoch=lg)) for lg in range(max(0, c1[3] - 2 * SL_PPNS), c1[3] + 2)]
    tb.slog_rop7 = await sread(7 + mrng.randrange(9))
    assert sorted(g for g, _ in tb.read_pages) == sorted(reads), "host reads: pages missing or extra"
    for g, pg in tb.read_pages:             # an unmapped LPN reads zeros, OK (README "Read miss")
        assert len(pg) == PW and all(w["data"] == 0 for w in pg) and all(w["status"] == OK for w in pg), \
            f"host read tag {g}: {pg}"
    r = check_slog(tb, tl)
    r["host_reads"] = len(reads)
    r["full_iter"], r["full_skip"], r["full_pair"] = tb.full_iter, tb.full_skip, tb.full_pair
    r["race"] = tb.race
    r["pack_rounds"] = tb.pack_rounds
    r["pk_beside"] = tb.pk_beside
    r["sealt_rounds"], r["sealt_cut"], r["sealt_exact"] = dict(tb.sealt_rounds), tb.sealt_cut, tb.sealt_exact
    r["conflicts"], r["scans"], r["scan_waits"], r["held_max"] = tb.conflicts, tb.scans, tb.scan_waits, tb.held_max
    dut._log.info(f"slog_random: {r}")
    assert min(r["records"], r["rejected"], r["doomed"], r["multi_page"], r["prog_fail"], r["unmapped_rsv"], r["flags"],
               r["late_tw"], r["unmapped_base"], r["rd_multi"], r["rd_overlap"], r["rd_release"], r["rd_nand"],
               r["rd_cached"] if SL_CACHE else 1, r["rd_lost"], r["rd_lrfail"],
               r["dump_rsv"], r["dump_entries"], r["dump_frags"], r["dump_bad"], r["pt_hit"], r["tx_release"] if TXREL else 1, r["race"] if TXREL else 1,
               *((r["conflicts"], r["scans"], r["scan_waits"], int(r["held_max"] >= 2), r["cf_held"]) if SL_RECS > 1 else ()),
               *((r["pk_shared"], r["pk_multi"], r["pk_seal_pages"], r["pack_rounds"], r["pk_beside"],
                  r["sealt_cut"], r["sealt_exact"], len(r["sealt_rounds"]) == 3) if SL_OPEN else ()),
               r["full_recs"], r["full_dup"] if SL_TXFULL > 1 else 1, r["full_ovf"], r["full_at_max"], r["full_refail"] if tb.pfail else 1,
               r["full_cmark"], r["full_arec"], r["rec_overlap"], int(r["full_max"] == SL_TXFULL),
               r["rej_ref_first_ix"],
               *((r["mg_ok"], r["mg_empty"], r["mg_stale"] + r["mg_rd"]) if MERGES else ())) > 0, \
        f"a path not met: {r}"


@cocotb.test(skip=not SLOG)
async def slog_recover(dut):
    """The firmware's loads after a recovery (README "Firmware port" op 7 SLOAD, README_slog
    "Recovery loads"): the LPGN counter, the LPGN -> PPN entries of log pages already on flash
    (written into the NAND model as recovery finds them), and the recovered fragments INSERTed into
    the index, some refused (room, a full set, bad fields); then every LPN read through the read merge
    (all from NAND: nothing cached) and RESERVEd (its room), against a plain-Python model."""
    tb = await setup(dut, True, 80)
    rng = tb.rng
    fw = StreamSource(dut, "s_fw", dut.clk, ["op", "chan", "way", "block", "page", "rop", "txid", "lpn", "ppn",
                                             "seq", "epoch", "flags", "kind"], pause_gen(rng, True))
    fwr = StreamSink(dut, "m_fwr", dut.clk, ["status", "data", "last", "ppn", "mapped"], pause_gen(rng, True))

    async def fw_op(op, **f):
        fw.send_nowait(op=op, **f)
        b = await fwr.recv(20_000)
        assert b["last"] == 1, f"firmware op {op}: a response of more than one beat"
        return b["status"], b["data"]

    async def fw_op4(op, **f):
        fw.send_nowait(op=op, **{k: 0 for k in ("chan", "way", "block", "page", "txid", "ppn", "seq", "flags",
                                                 "kind", "lpn", "epoch")} | f)
        b = await fwr.recv(20_000)
        return b["status"], b["mapped"], b["ppn"], b["data"]
    lpns = [40, 41, 42, 43, 44, 45, 48, 50]     # sets (lpn mod 4): 0 0 1 1 2 2 0 2: the last two find a full set
    base = {lpn: tb.send(0, RC_NONE, lpn, 0) for lpn in lpns}
    for q in base.values():
        await tb.wait_done(q)
    # log pages on flash (block 31: never handed to the backend here), LPGNs 1000..1005; 1006's table
    # entry names a page that is another log page (epoch 999); 1007 is in no table entry
    lg_ppn, lg_data = {}, {}
    for i, lg in enumerate(list(range(1000, 1006)) + [999]):
        ppn = ppn_of(i % NCH, 31, i // NCH)
        lg_data[lg] = [rng.getrandbits(32) for _ in range(PW)]
        tb.nand.pages[ppn] = dict(data=lg_data[lg], lpn=0xFFFFFFFF, seq=1 << 40 | i, epoch=lg, flags=F_SLOG, kind=1,
                                  txid=0, tag=0)
        lg_ppn[lg] = ppn
    lg_ppn[1006] = lg_ppn.pop(999)
    st, _ = await fw_op(7, rop=0, epoch=2000)                # the LPGN counter (persistence §10.5 step 4)
    assert st == OK and int(dut.slog_lpgn.value) == 2000, f"SLOAD LPGN: {st:#x}, slog_lpgn {int(dut.slog_lpgn.value)}"
    for lg, ppn in lg_ppn.items():
        st, _ = await fw_op(7, rop=1, epoch=lg, ppn=ppn)
        assert st == OK, f"SLOAD PPN of LPGN {lg}: {st:#x}"
    st, _ = await fw_op(7, rop=7)
    assert st == 0xFF, f"SLOAD rop 7: {st:#x}"
    # the fragments, in commit order as recovery found them; the model: F per LPN, entries per set
    P = PB - 16
    F: dict[int, list] = {}
    n_full = n_bad = 0
    ins_order = []
    for i in range(40):
        lpn = rng.choice(lpns) if i >= 2 else (44, 41)[i]
        ln = 4 * rng.randint(1, P // 4)
        off = 4 * rng.randrange((PB - ln) // 4 + 1)
        pofs = 16 + 4 * rng.randrange((PB - 16 - ln) // 4 + 1)
        lg = rng.choice(list(range(1000, 1006)) * 4 + [1006, 1007]) if i >= 2 else (1006, 1007)[i]
        bad = rng.random() < 0.1 and i >= 2
        if bad:                                             # len 0, a pofs in the header, or past the page
            ln, pofs = rng.choice([(0, pofs), (ln, 12), (ln, PB - ln + 4)])
        st, cnt = await fw_op(7, rop=2, lpn=lpn, epoch=lg, seq=ln | off << 12 | pofs << 32)
        in_set = [x for x in F if x % 4 == lpn % 4 and F[x]]
        if bad:
            want = (BAD_FIELD, 0)
            n_bad += 1
        elif len(F.get(lpn, [])) >= SL_FRAGS or (not F.get(lpn) and len(in_set) >= SL_WAYS):
            want = (TX_FULL, 0)
            n_full += 1
        else:
            F.setdefault(lpn, []).append((lg, pofs, off, ln))
            ins_order.append(lpn)
            want = (OK, len(F[lpn]))
        assert (st, cnt if st == OK else 0) == want, f"INSERT lpn {lpn} {(lg, pofs, off, ln)}: {(st, cnt)}, reference {want}"
    assert n_full and n_bad, f"INSERT: {n_full} refused for room, {n_bad} for fields"
    # the index read back (op 7 rops 3 / 4): slot = set * SLOG_WAYS + way, a set's LPNs in the ways
    # in the order of their first INSERT (each takes the lowest free way; none is dropped here)
    sets = SL_LPNS // SL_WAYS
    order = [x for x in dict.fromkeys(ins_order)]
    for slot in range(SL_LPNS + 1):
        st, mp, pp, data = await fw_op4(7, rop=3, lpn=slot)
        ways = [x for x in order if x % sets == slot // SL_WAYS]
        if slot >= SL_LPNS:
            want = (BAD_FIELD, 0, 0, 0)
        elif slot % SL_WAYS < len(ways):
            x = ways[slot % SL_WAYS]
            want = (OK, 1, x, len(F[x]))
        else:
            want = (OK, 0, 0, 0)
        assert (st, mp, pp, data) == want, f"SLOAD rop 3 slot {slot}: {(st, mp, pp, data)}, reference {want}"
        fr = F[want[2]] if want[1] else []
        for j in range(len(fr) + 1):
            got = await fw_op4(7, rop=4, lpn=slot, epoch=j)
            if j < len(fr):
                lg, pofs, off, ln = fr[j]
                want = (OK, 0, lg, ln // 4 << 20 | off // 4 << 10 | pofs // 4)
            else:
                want = (BAD_FIELD, 0, 0, 0)
            assert got == want, f"SLOAD rop 4 slot {slot} fragment {j}: {got}, reference {want}"
    for lg in range(996, 1010):             # the LPGN -> PPN table (rop 5): the entries loaded
        got = await fw_op4(7, rop=5, epoch=lg)
        want = (OK, 1, lg_ppn[lg], 0) if lg in lg_ppn else (OK, 0, 0, 0)
        assert got == want, f"SLOAD rop 5 LPGN {lg}: {got}, reference {want}"
    # (mapped 0: a quiet point, no S-Log record being received: README "Firmware port" rop 6)
    got = await fw_op4(7, rop=6), await fw_op4(7, rop=6, epoch=1)
    want = (OK, 0, 2000, len(order)), (OK, 0, 2000, 2000)
    assert got == want, f"SLOAD rop 6: {got}, reference {want}"
    # every LPN read (read merge): base + its fragments in order; a fragment of 1006 (the table names a
    # page that is not that log page) or 1007 (no entry): MEDIA_ERROR
    n_err = n_ok = 0
    for lpn in lpns:
        n0 = len(tb.nand.log_reads)
        tag = 0x40 | lpn
        tb.rd.send_nowait(lpn=lpn, txid=0, tag=tag)
        pg = await tb.read_page(tag, f"read of lpn {lpn}")
        page = bytearray(b"".join(w.to_bytes(4, "little") for w in tb.reqs[base[lpn]]["data"]))
        plan, ok = [], True
        for lg, pofs, off, ln in F.get(lpn, []):
            if lg == 1007:
                ok = False
                break
            plan.append(lg if lg != 1006 else 999)
            if lg == 1006:
                ok = False
                break
            src = b"".join(w.to_bytes(4, "little") for w in lg_data[lg])
            page[off:off + ln] = src[pofs:pofs + ln]
        got_lr = [lg for lg, _ in tb.nand.log_reads[n0:]]
        assert got_lr == plan, f"read of lpn {lpn}: log page READs {got_lr}, reference {plan} (F {F.get(lpn)})"
        st = pg[-1]["status"]
        if ok:
            got = b"".join(w["data"].to_bytes(4, "little") for w in pg)
            assert st == OK and got == bytes(page), f"read of lpn {lpn}: {st:#x} {got.hex()}, reference {page.hex()}"
            n_ok += 1
        else:
            assert st == MEDIA_ERROR, f"read of lpn {lpn}: status {st:#x}, reference MEDIA_ERROR (F {F.get(lpn)})"
            n_err += 1
    for lpn in lpns:                                        # the rooms: SLOG_FRAGS - |F| (a full set: TX_FULL)
        st, room = await rid(tb, RID_RSV, 1, lpn)
        in_set = [x for x in F if x % 4 == lpn % 4 and F[x]]
        want = (OK, SL_FRAGS - len(F[lpn])) if F.get(lpn) and len(F[lpn]) < SL_FRAGS else \
               (TX_FULL, 0) if F.get(lpn) or len(in_set) >= SL_WAYS else (OK, SL_FRAGS)
        assert (st, room if st == OK else 0) == want, f"RESERVE lpn {lpn}: {(st, room)}, reference {want}"
        if st == OK:
            assert (await rid(tb, RID_UNRSV, 1, lpn))[0] == OK
    assert int(dut.cnt_proto_err.value) == 0, "protocol errors counted"
    dut._log.info(f"slog_recover: {sum(len(v) for v in F.values())} fragments inserted, {n_full} refused for room, "
                  f"{n_bad} for fields; reads {n_ok} OK, {n_err} MEDIA_ERROR, {len(tb.nand.log_reads)} log page READs")
    assert n_ok and n_err


@cocotb.test(skip=not SLOG)
async def slog_snapshot(dut):
    """The read merge's snapshot rule (architecture §11.5, README "S-Log"): reads of one LPN sent
    one after another (in a random half of the rounds with random idle on s_rd and backpressure on
    m_rdd, their own generator; back to back in the others) while S-Log commits add fragments to it
    (APPLY) and plain writes replace it (RELEASE, then MAP_WRITE): each accepted read gets exactly one
    page, and every page read is one of the versions the LPN had (base + its fragments in order)
    while the read was in flight: from its acceptance (s_rd) to its page, a version counting from 40 cycles before the completion that made it (its APPLY or
    RELEASE goes first) to the completion of the next change. The old base without its fragments (a
    RELEASE seen by a read's LOOKUP before the MAP_WRITE its L2P lookup did not see) was a version
    too, but only before their APPLY, long before the write that releases them."""
    tb = await setup(dut, False, 80)
    tb.slog_mode = True                     # (log pages: requests and seqs not one to one)
    rng = tb.rng
    # s_rd idle and m_rdd backpressure (their own generator), in half the rounds: the other half keeps
    # reads back to back (a read accepted just before each APPLY / RELEASE: the snapshot mutants)
    prng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 5)
    noisy = [False]

    def phased(gen):
        while True:
            yield next(gen) if noisy[0] else False
    tb.rd.pause = phased(random_pause(prng, 0.3))
    tb.rdd.pause = phased(random_pause(prng, 0.3))
    X, t = 24, 1
    versions: list[bytes] = []

    def pbytes(words):
        return bytearray(b"".join(w.to_bytes(4, "little") for w in words))
    s = tb.send(0, RC_NONE, X, 0)
    cur = pbytes(tb.reqs[s]["data"])
    await tb.wait_done(s)
    versions.append((bytes(cur), 0))        # (page, the cycle of the completion that made it)
    acc: dict = {}                          # read tag -> the cycle s_rd took it
    acc_of: dict = {}                       # read number -> that cycle
    tb.rd.on_accept = lambda item, cyc: acc.__setitem__(item["tag"], tb.cyc + 1)
    running = True

    async def reader():
        n = 0
        while running:
            tag = 0x40 | (n & 0x3F)
            n += 1
            tb.rd.send_nowait(lpn=X, txid=0, tag=tag)
            k = 0
            while tag not in acc:
                await RisingEdge(dut.clk)
                k += 1
                assert k < 50_000, f"read {n - 1}: not taken by s_rd"
            acc_of[n - 1] = acc.pop(tag)
            if noisy[0] and prng.random() < 0.3:
                await ClockCycles(dut.clk, prng.randint(1, 4))
    rd_task = cocotb.start_soon(reader())
    fw = StreamSource(dut, "s_fw", dut.clk, ["op", "chan", "way", "block", "page", "rop", "txid", "lpn", "ppn",
                                             "seq", "epoch", "flags", "kind"], None)
    fwr = StreamSink(dut, "m_fwr", dut.clk, ["status", "data", "last", "ppn", "mapped"], None)
    n_mg = n_tx = 0
    n_noisy = 0
    for rnd in range(48):
        noisy[0] = prng.random() < 0.5
        n_noisy += noisy[0]
        st, room = await rid(tb, RID_RSV, t, X)
        assert st == OK and room >= 1, f"round {rnd}: RESERVE {st:#x} room {room}"
        frs = []
        for _ in range(rng.randint(1, min(room, 2))):
            ln = 4 * rng.randint(1, (PB - 16) // 4)
            off = 4 * rng.randrange((PB - ln) // 4 + 1)
            frs.append((off, ln, [rng.getrandbits(32) for _ in range(ln // 4)]))
        q = len(tb.reqs)
        tag = q & 0xFF
        tb.reqs.append(dict(op=1, rec=RC_CREC, lpn=0, txid=t, data=[], tag=tag, slog=True))
        tb.by_tag[tag] = q
        tb.wb.send_nowait(op=1, rec=RC_CREC, lpn=0, txid=t, epoch=0, kind=0, fua=0, tag=tag, slog=1, seq=q)
        for i, (off, ln, _) in enumerate(frs):
            tb.wbd.send_nowait(data=X, last=0)
            tb.wbd.send_nowait(data=off | ln << 16, last=int(i == len(frs) - 1))
        words = [w for _, _, d in frs for w in d]
        for i, w in enumerate(words):
            tb.wbd.send_nowait(data=w, last=int(i == len(words) - 1))
        await tb.wait_done(q)
        assert tb.done[-1][1] == OK, f"round {rnd}: S-Log commit status {tb.done[-1][1]:#x}"
        for off, ln, d in frs:
            cur[off:off + ln] = pbytes(d)
        versions.append((bytes(cur), tb.done[-1][3]))
        if MERGES and not (TXREL and rnd % 2):   # a MERGE of X: the same bytes, from one page (its RELEASE
            await ClockCycles(dut.clk, rng.randint(0, 30))   # and MAP_WRITE one step for the reads)
            fw.send_nowait(op=6, chan=0, way=0, block=0, page=0, rop=0, txid=0, lpn=X, ppn=0, seq=0, epoch=0,
                           flags=0, kind=0)
            b = await fwr.recv(50_000)
            assert b["status"] == OK, f"round {rnd}: MERGE status {b['status']}"
            n_mg += 1
        if rnd % 4 != 3 and not (TXREL and rnd % 2):   # a plain write: the fragments released, a new base
            await ClockCycles(dut.clk, rng.randint(0, 30))
            s = tb.send(0, RC_NONE, X, 0)
            await tb.wait_done(s)
            cur = pbytes(tb.reqs[s]["data"])
            versions.append((bytes(cur), tb.done[-1][3]))
        elif TXREL:                         # a tx page of X (tx 2) and its commit record: the COMMIT's
            await ClockCycles(dut.clk, rng.randint(0, 30))   # mapping RELEASEs F (one step for reads)
            s = tb.send(0, RC_NONE, X, 2)
            c = tb.send(1, RC_CREC, 0, 2)
            await tb.wait_done(c)
            assert tb.done[-1][1] == OK, f"round {rnd}: tx commit status {tb.done[-1][1]:#x}"
            cur = pbytes(tb.reqs[s]["data"])
            versions.append((bytes(cur), tb.done[-1][3]))
            n_tx += 1
        await ClockCycles(dut.clk, rng.randint(0, 40))
    running = False
    await rd_task
    k = 0                                   # every accepted read's page (a dropped or hung one fails)
    while len(tb.read_pages) < len(acc_of) and k < 20_000:
        await RisingEdge(dut.clk)
        k += 1
    await ClockCycles(dut.clk, 400)
    assert len(tb.read_pages) == len(acc_of), \
        f"{len(acc_of)} reads taken, {len(tb.read_pages)} pages (a read dropped, hung or answered twice)"
    n_ver = set()
    pend: dict = {}                         # pages by tag, in arrival order: a read's page is the
    for (g, pg), d in zip(tb.read_pages, tb.read_done_c):   # first one of its tag after its acceptance
        pend.setdefault(g, []).append((pg, d))
    for i in range(len(acc_of)):
        g = 0x40 | (i & 0x3F)
        assert pend.get(g), f"read {i} (tag {g:#x}, taken at {acc_of[i]}): no page"
        pg, d = pend[g].pop(0)
        a = acc_of[i]
        b = b"".join(w["data"].to_bytes(4, "little") for w in pg)
        assert pg[-1]["status"] == OK, f"read tag {g:#x}: status {pg[-1]['status']:#x}"
        ok = [j for j, (v, c) in enumerate(versions) if v == b and c - 40 <= d and
              (j + 1 == len(versions) or versions[j + 1][1] >= a)]
        assert ok, f"read {i} (tag {g:#x}, taken at {a}, page at {d}): not a version of lpn {X} in that time " \
                   f"(a version at all: {[j for j, (v, _) in enumerate(versions) if v == b]}; versions from " \
                   f"{[c for _, c in versions]})"
        n_ver.add(ok[0])
    # coverage: reads taken in the 12 cycles before a MAP_WRITE of X reached the engine (the window
    # between its RELEASE and its MAP_WRITE, where the backend takes none)
    mw = [c for op, _, lp, _, c in tb.eng.log if op == R_MAP_WRITE and lp == X]
    near = sum(1 for a in acc_of.values() if any(0 <= m - a <= 12 for m in mw))
    cm = [c for op, tt, _, _, c in tb.eng.log if op == R_COMMIT and tt == 2]
    near_cm = sum(1 for a in acc_of.values() if any(-2 <= a - c <= 30 for c in cm))
    dut._log.info(f"slog_snapshot: {len(tb.read_pages)} reads, {len(n_ver)} of {len(versions)} versions seen, "
                  f"{near} reads taken at most 12 cycles before one of the {len(mw)} MAP_WRITEs ({n_mg} MERGEs, "
                  f"{n_tx} tx commits, {near_cm} reads taken from 2 cycles before to 30 after one's COMMIT, "
                  f"{n_noisy} rounds with idle / backpressure)")
    assert len(tb.read_pages) > 100 and len(n_ver) > len(versions) // 2 and 0 < n_noisy < 48
    assert int(dut.cnt_proto_err.value) == 0, "protocol errors counted"


@cocotb.test(skip=not SLOG)
async def slog_rx(dut):
    """Firmware port op 7 rop 6's `mapped`: an S-Log record is being received (README "Firmware
    port", architecture §11.6's GC rule). Records of t sent right behind t's own full pages (so the
    backend takes their descriptors only once those pages are issued: NAND requests stalled), random
    idle and backpressure everywhere, rop 6 polled meanwhile; the reference from the ports alone: 1
    from the record's acceptance on `s_wb` at least until its last word is taken on `s_wbd`, 0 when no
    record is between its acceptance and its completion on `m_wbc`. GC steps (`wb_hold` set just
    after a record's acceptance, or before it is sent): polled until 0, then every record accepted
    shows all its fragments in the index (rop 3: `pend` + |F|), no request is taken and rop 6 stays 0
    until the hold is released."""
    tb = await setup(dut, True, 80)
    tb.slog_mode = True
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 29)   # (its own: the TB's stream stays)
    tb.nreq.set_pause(pause_gen(rng, "heavy", max_stall=120))
    fw = StreamSource(dut, "s_fw", dut.clk, ["op", "chan", "way", "block", "page", "rop", "txid", "lpn", "ppn",
                                             "seq", "epoch", "flags", "kind"], pause_gen(rng, True))
    fwr = StreamSink(dut, "m_fwr", dut.clk, ["status", "data", "last", "ppn", "mapped"], pause_gen(rng, True))
    fw_acc: list = []
    fw.on_accept = lambda item, cyc: fw_acc.append(tb.cyc)
    wmark: dict = {}                        # (what, request) -> the cycle its s_wbd word was taken
    tb.wbd.on_accept = lambda item, cyc: wmark.__setitem__(item["mark"], tb.cyc) if item.get("mark") else None
    recs: list = []                         # the records' request indices
    samples: list = []                      # (fw op accepted, answer received, mapped)
    frag_of: dict = {}                      # record -> {lpn: fragments}

    async def rop(r, lpn=0, epoch=0):
        n0 = len(fw_acc)
        fw.send_nowait(op=7, chan=0, way=0, block=0, page=0, rop=r, txid=0, lpn=lpn, ppn=0, seq=0, epoch=epoch,
                       flags=0, kind=0)
        b = await fwr.recv(20_000)
        assert b["last"] == 1 and b["status"] == OK, f"rop {r}: {b}"
        if r == 6:
            samples.append((fw_acc[n0], tb.cyc, b["mapped"]))
        return b

    lpns = FR_LPNS[:8]                      # every set of the index twice (8 slots: 4 sets of 2 ways)
    for lpn in lpns:                        # their bases
        s = tb.send(0, RC_NONE, lpn, 0)
    await tb.wait_done(s)
    n_gc = n_gc_wait = n_gc_before = 0
    nrx = int(os.environ.get("ATS_BACKEND_RXSTEPS", "10"))
    for rnd in range(nrx):
        t = rng.randint(1, NTX)
        mine = rng.sample(lpns, rng.randint(1, 2))
        for lpn in mine:
            st, room = await rid(tb, RID_RSV, t, lpn)
            assert (st, room) == (OK, SL_FRAGS), f"RESERVE {lpn} for tx {t}: {st:#x} room {room}"
        frs = [(lpn, o, ln) for lpn in mine for o, ln in runs_of(rng, rng.randint(1, 2))][:SL_TXFRAGS]
        gc = rng.random() < 0.6
        before = gc and rng.random() < 0.3  # the hold before the record is sent: never taken meanwhile
        # each GC case once at least (not left to chance): the hold just after a record's acceptance
        # (the wait for it), the hold before a record is sent
        if rnd == nrx - 2 and not n_gc_wait and not (gc and not before):
            gc, before = True, False
        if rnd == nrx - 1 and not n_gc_before and not before:
            gc = before = True
        if before:
            dut.wb_hold.value = 1
            hold_c = tb.cyc
        for _ in range(rng.randint(1, 2)):  # t's full pages, the record right behind them
            s = tb.send(0, RC_NONE, rng.randrange(24), t)
        s, data = tb.send_record(t, frs, rng)
        recs.append(s)
        frag_of[s] = Counter(lpn for lpn, _, _ in frs)
        for i, (lpn, o, ln) in enumerate(frs):
            tb.wbd.send_nowait(data=lpn, last=0, mark=("d0", s) if i == 0 else None)
            tb.wbd.send_nowait(data=o | ln << 16, last=int(i == len(frs) - 1))
        words = [w for d in data for w in d]
        for i, w in enumerate(words):
            tb.wbd.send_nowait(data=w, last=int(i == len(words) - 1), mark=("wl", s) if i == len(words) - 1 else None)
        if gc:
            n_gc += 1
            if before:
                n_gc_before += 1
                await ClockCycles(dut.clk, rng.randint(0, 40))
            else:                           # just after the record's acceptance (its descriptors wait)
                k = 0
                while s not in tb.acc_cyc:
                    await RisingEdge(dut.clk)
                    k += 1
                    assert k < 20_000, "record not taken"
                await ClockCycles(dut.clk, rng.randint(0, 4))
                dut.wb_hold.value = 1
                hold_c = tb.cyc
            k, first = 0, None
            while True:                     # GC: polled until no record is being received
                b = await rop(6)
                first = b["mapped"] if first is None else first
                if not b["mapped"]:
                    break
                k += 1
                assert k < 2000, "rop 6: a record received for ever under wb_hold"
            n_gc_wait += first
            accepted = [q for q in recs if q in tb.acc_cyc]
            for q in accepted:
                assert tb.acc_cyc[q] <= hold_c + 1, f"record {q} taken under wb_hold"
            ent = {}
            for i in range(SL_LPNS):        # the index as GC reads it (rop 3)
                b = await rop(3, i)
                if b["mapped"]:
                    ent[b["ppn"]] = ((b["data"] >> 16) & 0xFF, b["data"] & 0xFF)
            if s in tb.acc_cyc:             # the record accepted: every fragment visible (pend or F;
                for lpn, n in frag_of[s].items():   # the earlier rounds' were RELEASEd)
                    pend, nf = ent.get(lpn, (0, 0))
                    assert pend + nf == n, \
                        f"record {s} (accepted {tb.acc_cyc[s]}, hold {hold_c}): lpn {lpn} shows pend {pend} |F| {nf}, {n} fragments"
            for _ in range(rng.randint(2, 6)):   # the hold on: nothing starts being received
                await ClockCycles(dut.clk, rng.randint(0, 60))
                b = await rop(6)
                assert b["mapped"] == 0, "rop 6: a record started being received under wb_hold"
            assert before == (s not in tb.acc_cyc), f"record {s}: taken {s in tb.acc_cyc} under the hold"
            dut.wb_hold.value = 0
        while not tb.completed(s):          # polled until the record completed
            await rop(6)
            await ClockCycles(dut.clk, rng.randint(0, 30))
        for _ in range(rng.randint(0, 2)):
            await rop(6)
        st = next(d[1] for d in tb.done if d[0] == s)
        assert st == OK, f"record {s}: status {st:#x}"
        for lpn in mine:                    # F emptied again (a plain write RELEASEs it)
            s2 = tb.send(0, RC_NONE, lpn, 0)
        await tb.wait_done(s2)
    # the reference, from the ports: 1 while a record lies between its acceptance and its last word,
    # 0 while none lies between its acceptance and its completion (2 cycles' margin each side)
    done_c = {d[0]: d[3] for d in tb.done}
    n_one = n_early = n_zero = 0
    for a, r, m in samples:
        busy = [q for q in recs if q in tb.acc_cyc and tb.acc_cyc[q] + 2 <= a and r + 2 <= wmark[("wl", q)]]
        idle = all(q not in tb.acc_cyc or done_c.get(q, 1 << 60) + 2 <= a or tb.acc_cyc[q] >= r + 2 for q in recs)
        if busy:
            assert m == 1, f"rop 6 in cycles {a}..{r}: mapped 0 while record {busy[0]} is received"
            n_one += 1
            n_early += any(r + 2 <= wmark[("d0", q)] for q in busy)
        elif idle:
            assert m == 0, f"rop 6 in cycles {a}..{r}: mapped 1 with no record in flight"
            n_zero += 1
    dut._log.info(f"slog_rx: {len(recs)} records, {len(samples)} polls: 1 {n_one} (descriptors not yet taken "
                  f"{n_early}), 0 {n_zero}; GC steps {n_gc} (waited {n_gc_wait}, hold before the record {n_gc_before})")
    assert min(n_one, n_early, n_zero, n_gc_wait, n_gc_before) > 0, "a case not met"
    # SEQSET (op 5) while a record is received and the request table is empty (the record's request
    # takes no entry: README "Firmware port"): refused, status 4, the next seq unchanged; the record
    # then completes OK
    await tb.drain()
    t, lpn = 1, lpns[0]
    st, room = await rid(tb, RID_RSV, t, lpn)
    assert (st, room) == (OK, SL_FRAGS), f"RESERVE {lpn} for tx {t}: {st:#x} room {room}"
    ns = int(dut.next_seq.value)
    s, data = tb.send_record(t, [(lpn, 0, 8)], rng)
    k = 0
    while s not in tb.acc_cyc:
        await RisingEdge(dut.clk)
        k += 1
        assert k < 20_000, "record not taken"
    await ClockCycles(dut.clk, 5)           # (its descriptor words not sent: it waits for them)
    assert int(dut.next_seq.value) == int(dut.cpl_seq.value) == ns, "the table not empty under the record"
    fw.send_nowait(op=5, chan=0, way=0, block=0, page=0, rop=0, txid=0, lpn=0, ppn=0, seq=ns + 1000, epoch=0,
                   flags=0, kind=0)
    b = await fwr.recv(20_000)
    assert b["last"] == 1 and b["status"] == 4, f"SEQSET while a record is received: {b}"
    assert int(dut.next_seq.value) == ns, "SEQSET moved the counter"
    tb.wbd.send_nowait(data=lpn, last=0)
    tb.wbd.send_nowait(data=0 | 8 << 16, last=1)
    words = [w for d in data for w in d]
    for i, w in enumerate(words):
        tb.wbd.send_nowait(data=w, last=int(i == len(words) - 1))
    await tb.wait_done(s)
    st = next(d[1] for d in tb.done if d[0] == s)
    assert st == OK, f"record {s} after the refused SEQSET: status {st:#x}"
    assert int(dut.cnt_proto_err.value) == 0


def check_slog(tb, tl: list) -> dict:
    """The reference of slog_random, in request (seq) order with the index operations where the
    write buffer's side sent them (no index operation while an S-Log commit is in flight; two records
    in flight name distinct fragment LPNs)."""
    reqs = tb.reqs
    # completions in request order; with the open page (SL_OPEN, README "S-Log" "Packing") a
    # transaction's data page taken while a record's page is open completes before that record: in
    # order once those pages are left out, and a page passes only records of other transactions
    order = [d[0] for d in tb.done]
    assert sorted(order) == list(range(len(reqs))), "completions missing or repeated"

    def txpage(j):
        return reqs[j]["op"] == 0 and reqs[j]["rec"] == RC_NONE and reqs[j]["txid"] != 0
    if SL_OPEN:
        assert [j for j in order if not txpage(j)] == [j for j in range(len(reqs)) if not txpage(j)], \
            "completions out of request order (data pages left out)"
        pos = {j: k for k, j in enumerate(order)}
        for j in range(len(reqs)):
            if not txpage(j):
                continue
            passed = [a for a in range(j) if pos[a] > pos[j]]
            assert all(reqs[a].get("slog") and reqs[a]["txid"] != reqs[j]["txid"] for a in passed), \
                f"data page request {j} completed before requests {passed}, not all other transactions' records"
            tb.pk_beside += bool(passed)
    else:
        assert order == list(range(len(reqs))), "completions out of request order"
    dn = {d[0]: d for d in tb.done}
    by_seq = {p["seq"]: (ppn, p) for ppn, p in tb.nand.pages.items()}
    seq_of_ppn = {pp: p["seq"] for pp, p in list(tb.nand.pages.items()) + list(tb.nand.failed.items())}
    refused = {seq_of_ppn[pp]: st for (t, pp), st in tb.eng.refused.items()}
    ref_at = {seq_of_ppn[pp]: tb.ref_cyc[(t, pp)] for (t, pp) in tb.eng.refused}   # seq -> refusal taken

    def base_ppn(q: int) -> int:
        assert q in by_seq, f"seq {q} (a fragment's base) never programmed"
        return by_seq[q][0]
    ref = SlogRef(PB, NTX, SL_LPNS, SL_WAYS, SL_FRAGS, SL_TXFRAGS, SL_TXFULL, recs=SL_RECS, pack=bool(SL_OPEN))
    # SL_OPEN (README "S-Log" "Packing"): the seals in order, each with the records laid out before
    # it (a record's last descriptor executes 5 cycles after it is taken: a seal taken before that
    # comes first, README_slog "Open page"); a sealed page, or one a record filled, takes the next
    # seq when it is sent (lg2seq: where the backend put it, checked to be the next in order)
    seals = deque(sum(1 for d in tb.snap_cyc if d + 5 <= c) for c in tb.seal_cyc) if SL_OPEN else deque()
    lg2seq = {p["epoch"]: p["seq"] for p in tb.nand.pages.values() if p["kind"] == 1 and p["flags"] == F_SLOG}
    lw_all = slog_ref.LogWriter(PB, lpgn=0, pack=True)     # (SL_OPEN: persistence §10's encoder, fed alike)
    sent_lp: dict[int, bytes] = {}
    failed_seqs = {p["seq"] for p in tb.nand.failed.values()}
    l2p: dict[int, int] = {}                # lpn -> seq of its page
    pend: dict[int, list] = {}
    err: dict[int, int] = {}
    want_pages: dict[int, tuple] = {}       # seq -> (lpn, txid, kind, flags, epoch, data words)
    want_recs = []                          # applied records: (txid, lpgn, [(lpn, base, off, len, ver, data)])
    kf: dict[int, int] = {}                 # lpn -> fragments applied
    exp_cf: list = []                       # completeness flags not yet taken by a record
    rec_cf: list = []
    # the flags by time (README_slog "Completeness flags"): a flag joins the unit's list in the cycle
    # of its APPLY's answer (tb.cf_cyc, in completion order); a record takes the list 6 cycles after
    # its last descriptor was taken (tb.snap_cyc, in record order): with several records held, a
    # record completing after a later one's snapshot flags the record after that one
    pend_cf: deque = deque()                # (join cycle, flag) of flags not yet in the list
    k_rec = k_cf = 0
    n = dict(records=0, rejected=0, doomed=0, multi_page=0, prog_fail=len(tb.nand.fails), reserves=0,
             unmapped_rsv=0, flags=0, late_tw=0, unmapped_base=0, reads=0, rd_frag=0, rd_multi=0, rd_overlap=0,
             rd_release=0, rd_cached=0, rd_nand=0, rd_lost=0, rd_lrfail=0, dump_rsv=0, dump_entries=0,
             dump_frags=0, dump_bad=0, pt_hit=0, tx_release=0, full_recs=0, full_dup=0, full_refail=0,
             full_ovf=0, full_max=0, full_at_max=0, full_cmark=0, full_arec=0, rej_ref_first=0, rej_ref_first_ix=0, rej_ref_later=0,
             cf_held=0, pk_fill=0, pk_pages=0, pk_multi=0, pk_seal_pages=0, pk_shared=0)
    closed: dict[int, int] = {}             # txid -> how its last incarnation with pages ended (rec)
    own: dict[int, list] = {}               # lpn -> its committed fragments (off, bytes), in order (own copy)
    released: set = set()                   # LPNs whose fragments a plain write / TRIM released, none since
    n.update(mg_ok=0, mg_stale=0, mg_empty=0, mg_err=0, mg_pfail=0, mg_rd=0)
    # S-Log records accepted while an earlier S-Log commit was not complete (two in flight)
    done_cyc = {d[0]: d[3] for d in tb.done}
    sl_seqs = [i for i, r in enumerate(reqs) if r.get("slog")]
    n["rec_overlap"] = sum(1 for a, b in zip(sl_seqs, sl_seqs[1:]) if tb.acc_cyc[b] < done_cyc[a])
    # the MERGE pages (flags RELOC | SLOG), in seq order: one per MERGE that programmed, in order
    mg_pages = iter(sorted((p["seq"], ppn) for ppn, p in tb.nand.pages.items() if p["flags"] == F_MERGE))
    mg_pend: deque = deque()                # MERGEs programmed, their seq not reached yet
    mw = {(lp, pp) for op, _, lp, pp, _ in tb.eng.log if op == R_MAP_WRITE}
    failed_mg = {p["seq"] for p in tb.nand.failed.values() if p["flags"] == F_MERGE}

    def version(lpn, lrd, twice=False):
        # base + F in order (later bytes win): (page, ok, failed) as the read merge gives it; a
        # fragment is read from the cache (the SL_CACHE newest log pages) or from NAND (the SL_PPNS
        # newest: the LPGN -> PPN table), else MEDIA_ERROR; a failed log page READ: MEDIA_ERROR
        F = ref.lookup(lpn)
        fr = own.get(lpn, [])
        assert len(F) == len(fr), f"lpn {lpn}: the index reference has {len(F)} fragments, the read's {len(fr)}"
        page = bytearray(b"".join(w.to_bytes(4, "little") for w in want_pages[l2p[lpn]][-1])) \
            if lpn in l2p else bytearray(PB)
        plan, ok = [], True             # the log pages the merge must READ, in order
        for (lg, _, _, _), (o, d) in zip(F, fr):
            if lg < ref.lpgn - SL_PPNS:
                ok = False
                break
            if lg < ref.lpgn - SL_CACHE:
                plan.append(lg)
            else:
                n["rd_cached"] += 1
            page[o:o + len(d)] = d
        got_lr = [lg for lg, _ in lrd]
        failed = any(f for _, f in lrd)
        if failed:                      # the merge stops at the failed READ
            assert lrd[-1][1] and got_lr == plan[:len(got_lr)], \
                f"read of lpn {lpn}: log page READs {lrd}, reference {plan}"
            ok = False
        else:                           # (twice: a MERGE and a host read, the read's LOOKUP before
            assert got_lr == plan or (twice and got_lr == plan + plan), \
                f"read of lpn {lpn}: log page READs {got_lr}, reference {plan} (F {F})"   # or after its RELEASE)
        n["rd_nand"] += len(got_lr)
        return bytes(page), ok, failed

    def emit(q, pgs):
        # (SL_OPEN) log pages the unit sent, in order: each the next seq
        for pg in pgs:
            assert lg2seq.get(pg["lpgn"]) == q, f"log page LPGN {pg['lpgn']}: seq {lg2seq.get(pg['lpgn'])}, reference {q}"
            want_pages[q] = (0xFFFFFFFF, 0, 1, F_SLOG, pg["lpgn"], list(struct.unpack(f"<{PW}I", pg["data"])))
            sent_lp[pg["lpgn"]] = pg["data"]
            n["pk_pages"] += 1
            n["pk_multi"] += pg["nend"] > 1
            q += 1
        return q

    def seal(q):
        seals.popleft()
        lw_all.close_page()
        n["pk_seal_pages"] += ref.open is not None
        return emit(q, ref.seal())

    def flush(q):
        # the MERGEs whose page has seq q (in order: its completion): applied when lpn still maps to
        # the base (MAP_WRITE, its fragments RELEASEd), else stale (F is empty then: a plain write or
        # TRIM completed in between released it); SL_OPEN: a seal taken after the records laid out so
        # far whose page is the next seq
        while True:
            if seals and seals[0] <= k_rec and ref.open is not None and lg2seq.get(ref.open["lpgn"]) == q:
                q = seal(q)
                continue
            if not (mg_pend and mg_pend[0]["seq"] == q):
                break
            m = mg_pend.popleft()
            lpn = m["lpn"]
            applied = l2p.get(lpn) == m["base"]
            assert m["st"] == (OK if applied else 1), f"MERGE of lpn {lpn}: status {m['st']}, applied {applied}"
            assert ((lpn, m["ppn"]) in mw) == applied, f"MERGE of lpn {lpn}: MAP_WRITE of its page {m['ppn']:#x}: " \
                                                      f"{(lpn, m['ppn']) in mw}, reference {applied}"
            if applied:
                assert m["rppn"] == m["ppn"], f"MERGE of lpn {lpn}: response ppn {m['rppn']:#x}, page {m['ppn']:#x}"
                l2p[lpn] = q
                assert ref.release(lpn, m["n"]) == (OK, m["n"])
                own[lpn] = own.get(lpn, [])[m["n"]:]
                if not own[lpn]:
                    own.pop(lpn)
                kf[lpn] = kf.get(lpn, 0) - m["n"]
                n["mg_ok"] += 1
            else:
                assert not own.get(lpn), f"stale MERGE of lpn {lpn}: F {own.get(lpn)} not emptied"
                n["mg_stale"] += 1
            n["mg_pfail"] += q in failed_mg
            want_pages[q] = (lpn, 0, 0, F_MERGE, base_ppn(m["base"]), list(struct.unpack(f"<{PW}I", m["data"])))
            q += 1
        return q
    def commit_release(lp):
        # a tx page the COMMIT applied empties its LPN's F (m_map -> RELEASE n 255; persistence §10.5)
        if not TXREL:
            return
        assert ref.release(lp, 255)[0] == OK
        kf.pop(lp, None)
        if own.pop(lp, None):
            released.add(lp)
            n["tx_release"] += 1

    q = 0
    for ev in tl:
        if ev[0] == "merge":
            # firmware op 6 (architecture §11.6): F = [] or no base: 2, nothing programmed; a base or a
            # fragment that cannot be read: 3 (media error), nothing programmed; else a MERGE page of
            # base + F (completion: flush); a host read during it: the same version
            _, lpn, st, rppn, lrd, rdpg = ev
            if lpn not in l2p or not ref.lookup(lpn):
                assert st == 2, f"MERGE of lpn {lpn} without fragments: status {st}, reference 2"
                assert not lrd
                n["mg_empty"] += 1
                page, ok = None, True
            else:
                page, ok, failed = version(lpn, lrd, rdpg is not None)
                if not ok:
                    assert st == 3, f"MERGE of lpn {lpn}: status {st}, reference 3 (a fragment unreadable)"
                    n["mg_err"] += 1
                else:
                    assert st in (OK, 1), f"MERGE of lpn {lpn}: status {st}, reference 0 or 1"
                    sq, pp = next(mg_pages)
                    assert sq >= q, f"MERGE of lpn {lpn}: page seq {sq} before the requests sent earlier ({q})"
                    mg_pend.append(dict(seq=sq, ppn=pp, lpn=lpn, base=l2p[lpn], n=len(ref.lookup(lpn)), data=page,
                                        st=st, rppn=rppn))
            if rdpg is not None and page is not None:
                got = b"".join(w["data"].to_bytes(4, "little") for w in rdpg)
                assert (rdpg[-1]["status"] == OK and got == page) or (rdpg[-1]["status"] == MEDIA_ERROR and not ok), \
                    f"host read of lpn {lpn} during its MERGE: status {rdpg[-1]['status']:#x}, {got.hex()}, " \
                    f"reference {page.hex()}"
                n["mg_rd"] += 1
            q = flush(q)
            continue
        if ev[0] == "read":
            _, lpn, pg, lrd = ev
            n["reads"] += 1
            F = ref.lookup(lpn)
            fr = own.get(lpn, [])
            page, ok, failed = version(lpn, lrd)
            n["rd_lrfail"] += failed
            assert len(pg) == PW and all(w["status"] == OK for w in pg[:-1])
            st = pg[-1]["status"]
            if not ok:
                n["rd_lost"] += not failed
                assert st == MEDIA_ERROR, f"read of lpn {lpn}: status {st:#x}, reference MEDIA_ERROR (F {F})"
            else:
                got = b"".join(w["data"].to_bytes(4, "little") for w in pg)
                assert st == OK and got == page, \
                    f"read of lpn {lpn}: status {st:#x}, page {got.hex()}, reference {page.hex()} (F {F})"
            n["rd_frag"] += len(F) > 0
            n["rd_multi"] += len(F) > 1
            n["rd_release"] += lpn in released
            spans = [set(range(o, o + len(d))) for o, d in fr]
            n["rd_overlap"] += any(spans[i] & spans[j] for i in range(len(spans)) for j in range(i))
            continue
        if ev[0] == "rsv":
            _, t, lpn, st, room = ev
            n["reserves"] += 1
            # an unmapped LPN has no base: refused, the index untouched (README "S-Log")
            w = ref.reserve(t, lpn) if lpn in l2p else (TX_FULL, 0)
            n["unmapped_rsv"] += lpn not in l2p
            assert (st, room if st == OK else 0) == w, f"RESERVE tx {t} lpn {lpn}: ({st:#x}, {room}), reference {w}"
            continue
        if ev[0] == "dump":
            q = flush(q)                    # (a MERGE completed before the dump: its RELEASE)
            for kind, i, j, got in ev[1]:
                a = ref.read(i, 255 if kind == "e" else min(j, 254))
                if kind == "e":             # SREAD-ENTRY: mapped = an entry; ppn = its LPN; data
                    want = (a[0], a[3], a[2] & 0xFFFF, (a[4] >> 11) << 31 | (a[4] & 0xFF) << 16 | a[5] << 8 | a[1])
                    n["dump_rsv"] += a[4] >> 11
                    n["dump_entries"] += a[3]
                else:                       # SREAD-FRAG: ppn = its LPGN; data {len/4, off/4, pofs/4}
                    want = (a[0], 0, a[2] & 0xFFFF, (a[5] // 4) << 20 | (a[4] // 4) << 10 | a[3] // 4) \
                        if a[0] == OK else (a[0], 0, 0, 0)
                    n["dump_frags"] += a[0] == OK
                n["dump_bad"] += a[0] == BAD_FIELD
                assert got == want, f"SLOAD rop {3 if kind == 'e' else 4} slot {i} fragment {j}: {got}, reference {want}"
            continue
        if ev[0] == "unrsv":
            _, t, lpn, st = ev
            w = ref.unreserve(t, lpn)
            assert st == w, f"UNRESERVE tx {t} lpn {lpn}: {st:#x}, reference {w:#x}"
            continue
        q = flush(q)
        i = ev[1]
        r = reqs[i]
        st, ppn = dn[i][1], dn[i][2]
        t = r["txid"]
        zero = [0] * PW
        if r["rec"] == RC_NONE and t == 0:  # a full-page write or TRIM empties F (RELEASE, n 255)
            assert ref.release(r["lpn"], 255)[0] == OK
            kf.pop(r["lpn"], None)
            if own.pop(r["lpn"], None):
                released.add(r["lpn"])
        if r["rec"] == RC_NONE and r["op"] == 1:
            l2p.pop(r["lpn"], None)
            want, pgs = OK, [(r["lpn"], 0, 1, F_TRIM, zero)]
        elif r["rec"] == RC_NONE and t == 0:
            l2p[r["lpn"]] = q
            want, pgs = OK, [(r["lpn"], 0, 0, 0, r["data"])]
        elif r["rec"] == RC_NONE:
            want = refused.get(q, OK)
            pend.setdefault(t, []).append((r["lpn"], q, q not in refused))
            if q in refused:
                err.setdefault(t, refused[q])
            pgs = [(r["lpn"], t, 0, 0, r["data"])]
        else:                               # a commit record, S-Log or not, a marked page, an abort
            ent = pend.pop(t, [])
            e = err.pop(t, None)
            taken = sum(1 for _, _, k in ent if k)
            res = None
            last_close = closed.pop(t, None)
            if ent:
                closed[t] = r["rec"]
            if r.get("slog"):
                # t's full pages (README_slog "Integration"): its data pages since its last commit, one
                # per LPN, the newest (dropping every earlier page of the LPN, the order of the newest
                # ones kept), m1 = the PPN of its first program; more than SL_TXFULL pages: the record
                # is rejected TX_FULL (SL_TXFULL + 1 full descriptors)
                newest = {lp: k for k, (lp, _, _) in enumerate(ent)}
                if len(ent) > SL_TXFULL:
                    fulls = [(lp, tb.first_ppn[q2]) for lp, q2, _ in ent]
                    n["full_ovf"] += 1
                else:
                    fulls = [(lp, tb.first_ppn[q2]) for k, (lp, q2, _) in enumerate(ent) if newest[lp] == k]
                    n["full_dup"] += len(fulls) < len(ent)
                # (its list was emptied where t's previous incarnation ended: a marked page, an abort)
                n["full_cmark"] += bool(fulls) and last_close == RC_CMARK
                n["full_arec"] += bool(fulls) and last_close == RC_AREC
                descs = [dict(txid=t, full=1, lpn=lp, ppn=pp, off=0, len=0) for lp, pp in fulls]
                descs += [dict(txid=t, full=0, lpn=lpn, off=o,
                              ppn=base_ppn(l2p[lpn]) if lpn in l2p else 0,
                              len=ln if lpn in l2p else 0,    # an unmapped base: rejected (README "S-Log")
                              data=b"".join(w.to_bytes(4, "little") for w in d)) for lpn, o, ln, d in r["frs"]]
                snap = tb.snap_cyc[k_rec] + 6
                while seals and seals[0] <= k_rec:      # (SL_OPEN) sealed before this record's layout
                    q = seal(q)
                k_rec += 1
                while pend_cf and pend_cf[0][0] < snap:
                    _, f = pend_cf.popleft()
                    ref.push_cf(*f)
                    if len(exp_cf) < 8:
                        exp_cf.append(f)
                res = ref.record(descs)
                n["cf_held"] += bool(pend_cf)   # a flag of an earlier record joins after this snapshot
                if res["sts"] == OK:        # the flags a record takes (its own list, from the docs:
                    rec_cf, exp_cf = exp_cf, []   # architecture §11.5, README_slog; a doomed one's lost)
                # a TX_WRITE of t sent to the engine after the record was taken: its verdict had to wait
                n["late_tw"] += any(op == R_TX_WRITE and tt == t and tb.acc_cyc[i] < c < dn[i][3]
                                    for op, tt, _, _, c in tb.eng.log)
                if res["sts"] != OK:
                    # any rejection: the commit became an abort (architecture §2, §4), TX_FULL unless t
                    # has an error already: the first error wins, a refusal of a TX_WRITE of t taken
                    # at an earlier edge than the rejection (at the same edge or later: TX_FULL)
                    assert e is None or len(ent) > SL_TXFULL, \
                        f"a record rejected only without tx pages or with too many: {res['sts']:#x} {r['frs']} {ent} {e}"
                    rj = [c for c, tt in tb.rej_cyc if tt == t and tb.acc_cyc[i] <= c <= dn[i][3]]
                    assert len(rj) == 1, f"record of tx {t} (seq {q}): rejected at edges {rj}"
                    fr = min((ref_at[q2], q2) for _, q2, _ in ent if q2 in ref_at) if e is not None else None
                    if fr is not None and fr[0] < rj[0]:
                        e = refused[fr[1]]
                        n["rej_ref_first"] += 1
                        n["rej_ref_first_ix"] += e != TX_FULL   # (the status tells the two apart)
                    else:
                        n["rej_ref_later"] += fr is not None
                        e = TX_FULL
                    n["rejected"] += 1
                    n["unmapped_base"] += any(lpn not in l2p for lpn, _, _, _ in r["frs"])
                    for lpn, _, _, _ in r["frs"][:SL_TXFRAGS]:   # its reservations end (README "S-Log")
                        ref.unreserve(t, lpn)
                elif e is not None:         # doomed: DISCARD, the LPGN counter loaded back
                    if SL_OPEN:             # (dropped at the verdict: the unit puts its counter back)
                        ref.drop()
                        assert ref.discard(t)[0] == OK
                    else:
                        assert ref.discard(t)[0] == OK
                        ref.lpgn = res["lpgn"]
                    n["doomed"] += 1
            if r["rec"] == RC_AREC:         # an abort record: the engine's answer (README "Transactions")
                want, cnt = (OK if taken else TX_EMPTY), None
                pgs = [(0xFFFFFFFF, t, 1, F_ABORT, zero)]
            elif r["rec"] == RC_CMARK and e is not None:    # a marked page of t with an error: an abort
                want, cnt = e, None
                pgs = [(r["lpn"], t, 0, F_ABORT, r["data"])]
            elif r["rec"] == RC_CMARK:      # the marked page commits t with it (its own refused
                want, cnt = OK, None        # TX_WRITE too: mapped after the COMMIT)
                for lp, q2 in [(lp, q2) for lp, q2, _ in ent] + [(r["lpn"], q)]:
                    l2p[lp] = q2
                    commit_release(lp)
                pgs = [(r["lpn"], t, 0, F_COMMIT, r["data"])]
            elif e is not None:             # written and answered as an abort
                want, cnt = e, 0
                pgs = [(0xFFFFFFFF, t, 1, F_ABORT, zero)]
            elif res is not None:
                a_st, a_n = ref.apply(t)
                assert a_st == OK
                q1 = lg2seq[res["lpgn"]] if SL_OPEN else q      # (the page its first bytes are in)
                for _, q2, _ in ent:        # the verdict: no log page to NAND before t's TX_WRITEs answered
                    assert q2 not in tb.tw_ans or tb.iss[q1] >= tb.tw_ans[q2], \
                        f"record of tx {t}: log page seq {q1} issued at {tb.iss[q1]}, before the TX_WRITE of " \
                        f"its page seq {q2} was answered at {tb.tw_ans[q2]}"
                # applied: programmed whole (README "S-Log"), flagged unless a data page of t was
                # programmed again after a failure (persistence §10.2: m1 may name the failed copy)
                if any(q2 in failed_seqs for _, q2, _ in ent):
                    n["full_refail"] += 1
                else:
                    pend_cf.append((tb.cf_cyc[k_cf], (t, res["reclen"], res["lpgn"])))
                    k_cf += 1
                # the pages, byte for byte, from persistence §10's own encoder (atstb.slog_ref)
                kk, frg = dict(kf), []
                for dd in descs[len(fulls):]:
                    kk[dd["lpn"]] = kk.get(dd["lpn"], 0) + 1
                    frg.append(slog_ref.Frag(dd["lpn"], dd["ppn"], kk[dd["lpn"]], dd["off"], dd["data"]))
                if SL_OPEN:                 # (the whole log at the end: sent_lp)
                    lw_all.add(t, fulls, frg, [slog_ref.CFlag(*c) for c in rec_cf])
                    n["pk_shared"] += res["start"][1] > 16      # (it starts in a page left open)
                else:
                    lw = slog_ref.LogWriter(PB, lpgn=res["lpgn"])
                    lw.add(t, fulls, frg, [slog_ref.CFlag(*c) for c in rec_cf])
                    enc = lw.pages()
                    assert [d for _, d in enc] == list(res["pages"]), \
                        f"record of tx {t}: the unit reference's pages differ from slog_ref's encoder"
                n["full_recs"] += len(fulls) > 0
                n["full_at_max"] += len(ent) == SL_TXFULL     # (SL_TXFULL appends: not an overflow)
                n["full_max"] = max(n["full_max"], len(fulls))
                want, cnt = OK, taken + a_n
                for lp, q2, k in ent:
                    if k:
                        l2p[lp] = q2
                        commit_release(lp)
                pgs = [(0xFFFFFFFF, 0, 1, F_SLOG, list(struct.unpack(f"<{PW}I", pg))) for pg in res["pages"]]
                for j in range(len(pgs)):
                    pgs[j] = pgs[j][:4] + (res["lpgn"] + j,) + pgs[j][4:]
                if SL_OPEN:                 # the pages its bytes filled, sent now (the last may stay open)
                    q = emit(q, ref.go())
                fl = [(lp, pp, 0, 0, 0, None) for lp, pp in fulls]
                for (lpn, o, ln, d), dd in zip(r["frs"], descs[len(fulls):]):
                    kf[lpn] = kf.get(lpn, 0) + 1    # VER: the fragment's ordinal on its base (no merge yet)
                    fl.append((lpn, dd["ppn"], o, ln, kf[lpn], d))
                    own.setdefault(lpn, []).append((o, dd["data"]))
                    released.discard(lpn)
                want_recs.append((t, res["lpgn"], fl, rec_cf))
                # SLOG_PACK 1 (sealed after every record, README "S-Log" "Packing"): the unit sends a
                # final page that the record filled (used = PAGE_BYTES) at its last byte, any other
                # one at the seal: one seal a record that ends inside its page
                n["pk_fill"] += not SL_OPEN and struct.unpack_from("<H", res["pages"][-1], 10)[0] == PB
                n["records"] += 1
                n["multi_page"] += res["reclen"] > 1
            else:
                want, cnt = (OK if ent else TX_EMPTY), taken
                for lp, q2, k in ent:
                    if k:
                        l2p[lp] = q2
                        commit_release(lp)
                pgs = [(0xFFFFFFFF, t, 1, F_COMMIT, zero)]
            assert cnt is None or ppn == cnt, f"request {i} (seq {q}): completion count {ppn}, reference {cnt}"
        assert st == want, \
            f"request {i} (seq {q}) {r}: status {st:#x}, reference {want:#x}"
        if pgs:
            q = flush(q)                    # (SL_OPEN: sealed before a doomed record's abort entry)
        for pg in pgs:
            want_pages[q] = pg
            q += 1
    q = flush(q)
    assert not mg_pend and next(mg_pages, None) is None, "MERGE pages left over"
    assert not seals, f"seals left over: {list(seals)} (records {k_rec})"
    if SL_OPEN:                             # the packed log, byte for byte, from persistence §10's encoder
        enc = dict(lw_all.pages())
        assert enc == sent_lp, f"packed log pages differ from slog_ref's encoder: LPGNs " \
                               f"{sorted(k for k in set(enc) | set(sent_lp) if enc.get(k) != sent_lp.get(k))[:8]}"
    # one snapshot per record, one flag per flagged record (the flags' order is the completions')
    assert (k_rec, k_cf) == (len(tb.snap_cyc), len(tb.cf_cyc)), \
        f"records {k_rec} / last descriptors {len(tb.snap_cyc)}, flags {k_cf} / sent {len(tb.cf_cyc)}"
    # every programmed page: its spare words and data, by seq
    assert sorted(by_seq) == list(range(q)), f"programmed seqs {sorted(set(by_seq) ^ set(range(q)))[:8]}"
    for s, pg in want_pages.items():
        p = by_seq[s][1]
        lpn, t, kind, fl = pg[:4]
        epoch = pg[4] if len(pg) == 6 else None     # a log page's LPGN, a MERGE page's base PPN
        data = pg[-1]
        got = (p["lpn"], p["txid"], p["kind"], p["flags"])
        assert got == (lpn, t, kind, fl), f"seq {s}: spare (lpn, txid, kind, flags) {got}, reference {pg[:4]}"
        if epoch is not None:
            assert p["epoch"] == epoch, f"seq {s}: epoch {p['epoch']}, reference {epoch} (flags {fl:#x})"
        assert p["data"] == data, f"seq {s}: data {p['data']}, reference {data}"
    for pp, p in tb.nand.failed.items():    # a failed page was programmed again with the same words
        q2 = by_seq[p["seq"]][1]
        assert {k: v for k, v in p.items() if k != "tag"} == {k: v for k, v in q2.items() if k != "tag"}
    # the log pages decoded on their own (persistence §10): the records, their META-PUs and bytes
    lps = {}
    for ppn, p in tb.nand.pages.items():
        if p["kind"] == 1 and p["flags"] == F_SLOG:
            lp = slog_ref.log_page(struct.pack(f"<{PW}I", *p["data"]), p["seq"], ppn, p["epoch"], PB)
            assert lp is not None, f"page {ppn:#x} seq {p['seq']}: not a well-formed log page"
            assert lp.lpgn not in lps, f"LPGN {lp.lpgn} programmed twice"
            lps[lp.lpgn] = lp
    recs, bad, partial = slog_ref.find_records(lps, PB)
    assert bad == 0 and partial == 0, f"log: {bad} malformed, {partial} partial records"
    assert len(recs) == len(want_recs), f"{len(recs)} records decoded, {len(want_recs)} applied"
    assert sorted(lps) == list(range(len(lps))), "LPGNs not consecutive from 0"
    for rr, (t, lpgn, frs, cfl) in zip(sorted(recs, key=lambda x: x.first_lpgn), want_recs):
        assert (rr.txid, rr.first_lpgn) == (t, lpgn), f"record {rr.txid}@{rr.first_lpgn}, reference {t}@{lpgn}"
        got_cf = [(c.txid, c.reclen, c.first_lpgn) for c in rr.cflags]
        assert got_cf == cfl, f"record of tx {t} at LPGN {lpgn}: completeness flags {got_cf}, reference {cfl}"
        n["flags"] += len(got_cf)
        got = [(m.lpn, m.ppn, m.off, m.len, m.ver) for m in rr.metas]
        assert got == [f[:5] for f in frs], f"record of tx {t}: META-PUs {got}, reference {[f[:5] for f in frs]}"
        nf = sum(1 for f in frs if f[-1] is None)
        assert all(not m.is_diff for m in rr.metas[:nf])
        for m, at, (_, _, _, ln, _, d) in zip(rr.metas[nf:], rr.frag_at[nf:], frs[nf:]):
            assert m.is_diff and at is not None
            pg = next(x for x in lps.values() if x.ppn == at[0])
            assert pg.data[at[1]:at[1] + ln] == b"".join(w.to_bytes(4, "little") for w in d), \
                f"record of tx {t}: fragment of lpn {m.lpn} bytes"
    assert int(tb.dut.slog_lpgn.value) == ref.lpgn, f"next LPGN {int(tb.dut.slog_lpgn.value)}, reference {ref.lpgn}"
    got = {lp: tb.nand.pages[pp]["seq"] for lp, pp in tb.eng.l2p.items()}
    assert got == l2p, f"mapping differs from the replay: {sorted(set(got.items()) ^ set(l2p.items()))[:6]}"
    if hasattr(tb, "slog_ctr"):             # SREAD-CTR, SREAD-PPN, a rop past 6 (README "Firmware port")
        used = sum(len(x) for x in ref.idx.values())
        # read at a quiet point (every record completed, none being received): mapped 0 expected
        c0, c1 = tb.slog_ctr
        assert c0 == (OK, 0, ref.lpgn & 0xFFFF, used), f"SLOAD rop 6: {c0}, reference {(OK, 0, ref.lpgn, used)}"
        assert c1 == (OK, 0, ref.lpgn & 0xFFFF, ref.lpgn), f"SLOAD rop 6 epoch 1: {c1}, reference counter {ref.lpgn}"
        logs = {p["epoch"]: pp for pp, p in tb.nand.pages.items() if p["kind"] == 1 and p["flags"] == F_SLOG}
        newest = {}
        for lg in logs:
            if lg > newest.get(lg % SL_PPNS, -1):
                newest[lg % SL_PPNS] = lg
        for lg, got in tb.slog_pt:
            want = (OK, 1, logs[lg], 0) if newest.get(lg % SL_PPNS) == lg else (OK, 0, 0, 0)
            n["pt_hit"] += want[1]
            assert got == want, f"SLOAD rop 5 LPGN {lg}: {got}, reference {want}"
        assert tb.slog_rop7[0] == 0xFF, f"SLOAD rop past 6: {tb.slog_rop7}"
    assert not tb.eng.tx, f"tx tables left: {tb.eng.tx}"
    assert int(tb.dut.cnt_proto_err.value) == 0, "protocol errors counted"
    n["seals"] = tb.seals
    if SL_PACK and not SL_OPEN:
        assert tb.seals == n["records"] - n["pk_fill"], \
            f"seals {tb.seals}, reference {n['records'] - n['pk_fill']} (records {n['records']}, filling {n['pk_fill']})"
    return n


SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
def test_ats_backend(seed):
    src = os.environ.get("ATS_BACKEND_SRC")
    key = "tx" + ("_" + Path(src).parent.name if src else "")
    run(toplevel="ats_backend",
        sources=block_sources("ats_backend", replace={"ats_backend.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend", test_dir=HERE, build_key=key,
        parameters=dict(NUM_CHAN=NCH, WAYS=1, PAGE_BYTES=PB, PAGES_PER_BLOCK=PPB, BLOCKS=BLOCKS, WIN=WIN,
                        RD_SLOTS=RD_SLOTS, PPN_W=16),
        testcase=os.environ.get("ATS_BACKEND_TEST") or None,
        seed=seed, results_name=f"{key}_seed{seed}", extra_env={"ATS_SEED": str(seed)}, public={})



def test_ats_backend_rd4():
    """`read_ring` with 4 host read slots (its round 2, a slot freed and taken again while the ring
    still named it, needs more than two)."""
    run(toplevel="ats_backend", sources=block_sources("ats_backend"),
        test_module="test_ats_backend", test_dir=HERE, build_key="rd4",
        parameters=dict(NUM_CHAN=NCH, WAYS=1, PAGE_BYTES=PB, PAGES_PER_BLOCK=PPB, BLOCKS=BLOCKS, WIN=WIN,
                        RD_SLOTS=4, PPN_W=16),
        testcase="read_ring", seed=1, results_name="rd4_seed1",
        extra_env={"ATS_SEED": "1", "ATS_RD_SLOTS": "4"}, public={})

def run_slog(key: str, seed: int, testcase: str | None, cache: int = 2, txfull: int = SL_TXFULL,
             recs: int = 1, blocks: int = BLOCKS, env: dict | None = None, pack: int = 0, sealt: int = 0) -> None:
    """One SLOG = 1 build (64-byte pages, the small index of SL_*) and its run; ATS_BACKEND_SRC: a
    mutant source (its directory's name joins the build key)."""
    src = os.environ.get("ATS_BACKEND_SRC")
    key += "_" + Path(src).parent.name if src else ""
    run(toplevel="ats_backend",
        sources=block_sources("ats_backend", replace={"ats_backend.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend", test_dir=HERE, build_key=key,
        parameters=dict(NUM_CHAN=NCH, WAYS=1, PAGE_BYTES=64, PAGES_PER_BLOCK=PPB, BLOCKS=blocks, WIN=WIN,
                        RD_SLOTS=RD_SLOTS, PPN_W=16, SLOG=1, SLOG_TX=NTX, SLOG_LPNS=SL_LPNS, SLOG_WAYS=SL_WAYS,
                        SLOG_FRAGS=SL_FRAGS, SLOG_TXFRAGS=SL_TXFRAGS, SLOG_TXFULL=txfull, SLOG_CACHE=cache,
                        SLOG_PPNS=SL_PPNS, **({"SLOG_RECS": recs} if recs > 1 else {}),
                        **({"SLOG_PACK": pack} if pack else {}), **({"SLOG_SEALT": sealt} if sealt else {})),
        testcase=testcase, seed=seed, results_name=f"{key}_seed{seed}",
        extra_env={"ATS_SEED": str(seed), "ATS_BACKEND_SLOG": "1", "ATS_BACKEND_SLCACHE": str(cache),
                   "ATS_BACKEND_TXFULL": str(txfull), "ATS_BACKEND_SLRECS": str(recs), "ATS_BACKEND_SLPACK": str(pack), "ATS_BACKEND_SEALT": str(sealt),
                   "ATS_BACKEND_BLOCKS": str(blocks), **(env or {})},
        public={})


SLOG_CASES = [(1, 2), (2, 2), (3, 0)]         # (seed, SLOG_CACHE): the cache, and no cache at all


@pytest.mark.parametrize("seed,cache", SLOG_CASES, ids=[f"seed{s}" + ("" if c else "_nocache") for s, c in SLOG_CASES])
def test_ats_backend_slog(seed, cache):
    """The SLOG = 1 build (64-byte pages, a small index, SLOG_CACHE 2 or 0): slog_random (with the
    read merge), and tx_random / tx_overlap (the traffic without S-Log records behaves as in the
    SLOG = 0 build)."""
    run_slog(f"slog_c{cache}", seed, os.environ.get("ATS_BACKEND_TEST") or None, cache=cache)


def test_ats_backend_slog_r2():
    """slog_random with SLOG_RECS 2 (records held together, README "S-Log" "Records in flight"):
    the full-page phase's rounds with two records in flight hold both, half of them with the
    conflict (a later record's fragment on an earlier held record's full page: the scan waits)."""
    run_slog("slog_c2_r2", 4, "slog_random", recs=2)


def test_ats_backend_slog_pk():
    """slog_random with SLOG_PACK 1 and SLOG_RECS 1 (the unit's open page, README "S-Log" "Packing",
    sealed after every record): the same pages, seqs and answers as SLOG_PACK 0; the verdict on
    s_go (a doomed record dropped, its LPGNs given back by the unit), one seal a record that ends
    inside its final page."""
    run_slog("slog_c2_pk", 5, "slog_random", pack=1)


# ATS_LONG adds 1, 3, 6, 7. Seed 8 was dropped (2026-12-01): since the seal-time rounds its 10 pack
# rounds end no page with two records (pk_multi 0, a path the item requires), and more rounds run the
# test's stand-in firmware out of free blocks (blk_need with no block to hand: a request waits for
# good), so no setting of the round count meets every path at that seed
PK2_SEEDS = [5] + ([1, 3, 6, 7] if os.environ.get("ATS_LONG", "0") not in ("", "0") else [])


@pytest.mark.parametrize("seed", PK2_SEEDS, ids=[f"seed{s}" for s in PK2_SEEDS])
def test_ats_backend_slog_pk2(seed):
    """slog_random with SLOG_PACK 1, SLOG_RECS 2 and SLOG_SEALT 40 (README "S-Log" "Packing"): the
    page left open for the next record, records packed back to back, a page that completes two
    records, the seals (before any other request, a held record's wait, the timer); the log pages
    byte for byte from the unit's reference and from persistence §10's encoder (seed 5; ATS_LONG=1:
    seeds 1, 3, 6, 7, 8 too)."""
    run_slog("slog_c2_r2_pk", seed, "slog_random", recs=2, pack=1, sealt=40)


LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
TXFULL_LONG = [(4, 1, 2), (5, 6, 2)]          # (seed, SLOG_TXFULL, SLOG_CACHE)


@pytest.mark.skipif(not LONG, reason="ATS_LONG=1 only")
@pytest.mark.parametrize("seed,txfull,cache", TXFULL_LONG, ids=[f"seed{s}_txfull{f}" for s, f, _ in TXFULL_LONG])
def test_ats_backend_slog_txfull(seed, txfull, cache):
    """slog_random with another SLOG_TXFULL (1: one full page a record, two pages overflow; 6) and a
    longer full-page phase (80 rounds; 64 blocks a die: the firmware model hands out each block once)."""
    run_slog(f"slog_c{cache}_tf{txfull}", seed, "slog_random", cache=cache, txfull=txfull, blocks=64,
             env={"ATS_BACKEND_FULLSTEPS": "80"})
