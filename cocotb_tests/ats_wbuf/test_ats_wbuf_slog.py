"""ats_wbuf with FRAG slots (DiffTx's S-Log, docs/architecture.md §11.3 "The write buffer's part
exactly", rtl/wbuf/README.md "S-Log") against the plain-Python reference `frag_ref.FragRef` and a
page-copy model, with a plain-Python backend of its own (below) that answers RESERVE (id 0xFD:
the room, or TX_FULL at random, for an LPN another transaction holds, whose fragment list is
full or that is unmapped) and UNRESERVE (id 0xFC: OK, or TX_FULL at random), the probe (0xFE), base (0xFF) and miss
reads (a tx read: its table, else the committed page), and consumes the write-back stream: pages,
UNMAPs, COMMIT marks, commit and abort records, and an S-Log record's two passes on m_wbd (parsed
with frag_ref.parse_stream, its fragments applied onto the committed page at the record's
completion, each on an LPN the transaction had reserved; 20 % of records rejected as ats_backend
rejects one: nothing applied, the reservations ended by the backend, the commit answered TX_FULL).
An S-Log record taken while any earlier request but a transaction's data page (its own or another's)
is in flight is an error (§11.4's wait: a plain page, TRIM, COMMIT mark or record in flight);
`run_slog_beside_own` holds the transaction's own full page in flight until its record has been
taken (and its commit after the page), and `run_slog_beside_other` holds another transaction's page in flight until the record has been
taken (the buffer's earlier wait, for every request but the transaction's own pages, never sends it),
then holds the other transaction's commit record, and (PTXQ 2) its COMMIT WRITE's mark page, in
flight: the record must wait for each.

Random commands (DIFFWRITEs of random ranges, some past the page, tx and plain WRITEs, COMMIT
writes, tx and plain READs of 1-2 pages, TX_COMMIT / TX_ABORT / TX_BEGIN, FLUSH; the threshold
`slog_thr` changed now and then, 0 included), one at a time, with random idle / backpressure on
every stream. Checked after each command: its status (and a commit's result: the backend's entry
count), every READ's data word by word (read your writes: the FRAG slot's words over the base),
the 0xFD / 0xFC requests sent (tag, lpn, txid, in order) equal the reference's, an S-Log record's
m_wbd stream equals the reference's `commit()` stream word for word; at the end (FLUSH) the
backend's committed pages and a READ of every LBA equal the page-copy model, and `cnt_slog_err`
equals the UNRESERVEs answered TX_FULL.
With SLOG_RIF > 1 (the fourth build; rtl/wbuf/README.md "Records in flight") a record may also be
taken beside up to SLOG_RIF - 1 earlier records in flight, and the model keeps the backend's rule
for them: a record's descriptors are stalled, their bases not looked up, while an earlier record in
flight names one of their LPNs as a full page (`run_slog_rif`).
Environment: ATS_SEED, ATS_SLOG_STEPS (commands, default 600), ATS_SLOG_BP (fixed backpressure),
ATS_SLOG_DEBUG=1 (log every command and its 0xFD / 0xFC requests; 2: every host word too),
ATS_SLOG_NORULE=1 (the model without that rule: a mutant, `run_slog_rif` must fail at SLOG_RIF 2)."""
from __future__ import annotations

import os
import random
import struct
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "lib"))

from atstb.runner import block_sources, run  # noqa: E402
from frag_ref import BAD_FIELD, OK, FragRef, parse_stream, words_of  # noqa: E402

READ, WRITE, DIFFWRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH = 0, 1, 2, 3, 4, 5, 6
FUA_F, COMMIT_F = 1 << 0, 1 << 2
TX_FULL, TX_EMPTY, TABLE_FULL, MEDIA_ERROR = 0x04, 0x06, 0x08, 0x10
NUM_LBAS, NUM_TX, SLOG_FRAGS = 12, 3, 3
ID_UNRES, ID_RESV, ID_PROBE, ID_BASE = 0xFC, 0xFD, 0xFE, 0xFF


def _is_rec(rq) -> bool:
    """An S-Log record's request (op 1, rec 2, slog)."""
    return rq["op"] == 1 and rq["rec"] == 2 and bool(rq["slog"])


def _page(words):
    return struct.pack(f"<{len(words)}I", *words)


class Backend:
    """The backend's side of architecture §4 / §11.3-§11.4, transaction level, for this test."""

    def __init__(self, pb, rng):
        self.pb, self.pw, self.rng = pb, pb // 4, rng
        self.committed: dict[int, bytes] = {}
        self.k: dict[int, int] = {}              # fragments on the base (room = SLOG_FRAGS - k)
        self.resv: dict[int, int] = {}           # lpn -> txid holding its reservation
        self.table: dict[int, dict[int, bytes]] = {}
        self.answers: list[tuple[int, int]] = []   # RESERVE answers (status, room), in order
        self.rq: list[tuple[int, int, int]] = []   # 0xFD / 0xFC requests (tag, lpn, txid)
        self.unres_bad = 0
        self.err_p = 0.0                           # MEDIA_ERROR on a base read (id 0xFF), set per command
        self.base_errs = 0
        self.err_lpns: list[int] = []            # LPNs of the failed base reads, in order
        self.records: list[list[tuple[int, int]]] = []   # S-Log records' m_wbd streams
        self.rejected: list[int] = []            # txids of S-Log records rejected (TX_FULL), in order
        self.errors: list[str] = []
        # ats_backend's per-tx list of full pages (rtl/backend/README_slog.md "Integration"): one
        # append per data page of t taken, emptied when t's commit / abort / S-Log record request is
        # taken; an S-Log record of a t with more than SLOG_TXFULL appends would be rejected: a
        # correct buffer never sends one (an error here)
        self.txfull = 64
        self.appends: dict[int, int] = {}
        self.over: set[int] = set()              # txids whose S-Log record request came with too many
        self.rec_open: set[int] = set()          # txids whose commit / abort record was taken, not completed
        self.mixed = 0                           # S-Log records taken with appends (full pages) > 0
        self.beside = 0                          # S-Log records taken while a data page of their tx was in flight
        self.beside_other = 0                    # ... while a data page of another tx was in flight
        self.refuse: set[tuple[int, int]] = set()  # (txid, lpn): its next data page's TX_WRITE refused (TX_FULL)
        self.log: list[dict] = []                # every write-back request taken, in order
        # records in flight together (SLOG_RIF > 1, rtl/wbuf/README.md "Records in flight"): the
        # LPNs of t's data pages taken since its last commit / abort request (t's full pages, which
        # its record names); a later record's fragment base on one of them is looked up only once
        # that earlier record has completed (the backend's rule), its descriptors stalled meanwhile
        self.tpages: dict[int, set[int]] = {}
        self.beside_rec = 0                      # S-Log records taken while an earlier one was in flight
        self.lk_deferred = 0                     # ... whose base lookups waited for an earlier record
        self.no_rule = os.environ.get("ATS_SLOG_NORULE") == "1"   # (the rule's mutant: looked up at once)

    def taken(self, rq):
        """A write-back request taken on m_wb (in order)."""
        self.log.append(rq)
        t = rq["txid"]
        if not t:
            return
        if rq["op"] == 0:
            if t in self.rec_open:
                self.errors.append(f"a page of tx {t} (lpn {rq['lpn']}) after its commit record")
            self.appends[t] = self.appends.get(t, 0) + 1
            self.tpages.setdefault(t, set()).add(rq["lpn"])
            if rq["rec"] == 1:
                self.appends[t] = 0
                self.tpages.pop(t, None)
        elif rq["rec"] in (2, 3):
            rq["full_lpns"] = self.tpages.pop(t, set())
            self.rec_open.add(t)
            if rq["slog"]:
                self.mixed += self.appends.get(t, 0) > 0
                if self.appends.get(t, 0) > self.txfull:
                    self.over.add(t)
            self.appends[t] = 0

    def page(self, lpn, txid):
        if txid and lpn in self.table.get(txid, {}):
            return self.table[txid][lpn]
        return self.committed.get(lpn, bytes(self.pb))

    def read(self, lpn, txid, tag):
        """Answer of a read request taken now: (words, status)."""
        z = [0] * self.pw
        if tag == ID_PROBE:
            return z, OK if lpn in self.table.get(txid, {}) else TX_EMPTY
        if tag == ID_RESV:
            self.rq.append((tag, lpn, txid))
            if lpn in self.resv and self.resv[lpn] == txid:
                self.errors.append(f"RESERVE of lpn {lpn} by tx {txid} that holds it")
            room = SLOG_FRAGS - self.k.get(lpn, 0)
            if self.rng.random() < 0.15 and room > 0:
                self.k[lpn] = 0                    # a merge (firmware): the room grows
                room = SLOG_FRAGS
            # refused: held by another tx, no room, an unmapped LPN (no base: ats_backend refuses it
            # before its index, architecture §11.3 step 5), or at random
            if lpn in self.resv or room <= 0 or lpn not in self.committed or self.rng.random() < 0.15:
                self.answers.append((TX_FULL, 0))
                return z, TX_FULL
            self.resv[lpn] = txid
            self.answers.append((OK, room))
            return [room] + z[1:], OK
        if tag == ID_UNRES:
            self.rq.append((tag, lpn, txid))
            if self.resv.get(lpn) != txid:
                self.errors.append(f"UNRESERVE of lpn {lpn} by tx {txid} without its reservation")
            self.resv.pop(lpn, None)
            if self.rng.random() < 0.1:
                self.unres_bad += 1
                return z, TX_FULL
            return z, OK
        if tag == ID_BASE and self.rng.random() < self.err_p:
            self.base_errs += 1
            self.err_lpns.append(lpn)
            return words_of(self.page(lpn, txid)), MEDIA_ERROR
        return words_of(self.page(lpn, txid)), OK

    def complete(self, rq, data):
        """A write-back request's completion (durable, applied): (ppn field, status)."""
        if rq["op"] == 0 and (rq["txid"], rq["lpn"]) in self.refuse:
            # its TX_WRITE refused (the tx table full): nothing applied, the tx is doomed
            self.refuse.discard((rq["txid"], rq["lpn"]))
            return 0, TX_FULL
        if rq["op"] == 1 and rq["rec"] in (2, 3):
            self.rec_open.discard(rq["txid"])
        if rq["op"] == 1 and rq["rec"] == 2 and rq["slog"] and rq["txid"] in self.over:
            self.errors.append(f"S-Log record of tx {rq['txid']} with more than SLOG_TXFULL full pages")
            self.over.discard(rq["txid"])
        if rq["op"] == 1 and rq["rec"] == 2 and rq["slog"] and self.rng.random() < 0.2:
            # rejected (as ats_backend does, e.g. a base unmapped after its RESERVE): nothing
            # applied, the tx aborted, its fragments' reservations ended by the backend itself
            self.records.append(data)
            self.rejected.append(rq["txid"])
            for f in parse_stream(data):
                if self.resv.get(f["lpn"]) == rq["txid"]:
                    self.resv.pop(f["lpn"])
            self.table.pop(rq["txid"], None)
            return 0, TX_FULL
        if rq["op"] == 1 and rq["rec"] == 3 and not self.table.get(rq["txid"]):
            # an abort record of a tx without table entries (one that held only FRAG slots): the
            # remap engine's ABORT answers TX_EMPTY, and ats_backend passes it on
            self._complete(rq, data)
            return 0, TX_EMPTY
        return self._complete(rq, data), OK

    def _complete(self, rq, data):
        op, rec, slog, lpn, txid = rq["op"], rq["rec"], rq["slog"], rq["lpn"], rq["txid"]
        if op == 0:
            page = _page(data)
            if txid:
                self.table.setdefault(txid, {})[lpn] = page
                if rec == 1:
                    return self._apply(txid, [])
            else:
                self.committed[lpn] = page
                self.k[lpn] = 0                  # a full-page write empties F
            return 0
        if rec == 0:                              # UNMAP
            self.committed[lpn] = bytes(self.pb)
            self.k[lpn] = 0
            return 0
        if rec == 3:
            self.table.pop(txid, None)
            if any(t == txid for t in self.resv.values()):
                self.errors.append(f"abort record of tx {txid} with reservations left")
            return 0
        frags = []
        if slog:
            self.records.append(data)
            frags = parse_stream(data)
            for f in frags:
                if self.resv.get(f["lpn"]) != txid:
                    self.errors.append(f"fragment of lpn {f['lpn']} without tx {txid}'s reservation")
        return self._apply(txid, frags, rq.get("bases", {}))

    def _apply(self, txid, frags, bases=None):
        """A commit: the tx's table, then its fragments, each onto its LPN's base as the backend
        looked it up when it took the record's descriptors (`bases`), then onto the previous one."""
        tab = self.table.pop(txid, {})
        for lpn, page in tab.items():
            self.committed[lpn] = page
            self.k[lpn] = 0
        cur = dict(bases or {})
        for f in frags:
            b = bytearray(cur.get(f["lpn"], self.committed.get(f["lpn"], bytes(self.pb))))
            b[f["off"]:f["off"] + f["len"]] = f["data"]
            self.committed[f["lpn"]] = cur[f["lpn"]] = bytes(b)
            self.k[f["lpn"]] = self.k.get(f["lpn"], 0) + 1
        for f in frags:
            self.resv.pop(f["lpn"], None)
        return len(tab) + len(frags)


class TB:
    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.pb = int(dut.PAGE_BYTES.value)
        self.pw = self.pb // 4
        self.be = Backend(self.pb, rng)
        self.rif = int(dut.SLOG_RIF.value)       # S-Log records the buffer may have in flight
        self.mem: dict[int, int] = {}            # host memory, by word address
        self.disp = None                         # the command beat offered
        self.done: list[tuple[int, int, int]] = []
        self.hrd_q: list[list[int]] = []         # host read replies (words)
        self.hwr_addr = None
        self.wb_q: list[dict] = []               # requests taken, waiting for their data
        self.cpl_q: list[tuple[int, int]] = []   # (tag, ppn) completions ready, in order
        self.cpl_cur = None
        self.out = 0                             # requests taken, completion not sent
        self.inflight: list[dict] = []           # those requests, in order
        self.slow_tx = None                      # the tx whose TX_COMMIT is being run
        self.hold_tx = None                      # a tx whose data pages' completions are held (run_slog_beside_other)
        self.hold_cm = None                      # a tx whose COMMIT mark's (RC_CMARK page's) completion is held
        self.hold_rec = None                     # a tx whose S-Log record's completion is held
        # out-of-order completions as a group-committing backend would give them (bench/difftx/README.md
        # "Group commit": a record's log pages take their seqs when sealed, so the transactions' data
        # pages taken right after it may complete first): with probability defer_p a ready data page
        # of a transaction directly behind the head S-Log record in request order (only such pages
        # between them) completes before the record
        self.defer_p = 0.0
        self.defer_left = None                   # if set: passes still allowed (each one counts it down)
        self.defer_any = False                   # (a backend breaking the rule) any request may pass
        self.deferred = 0                        # completions sent before an earlier S-Log record's
        self.cpl_rq = None                       # the request whose completion is on s_wbc
        self.cpl_order: list[dict] = []          # requests in the order their completions were taken
        self.rd_q: list[tuple[int, list[int], int]] = []   # pages to answer (tag, words, status)
        self.rd_cur = None
        self.hrd_pend = self.rdd_pend = False
        self.p = dict(idle=rng.choice([0.0, 0.3]), bp=rng.choice([0.0, 0.3, 0.6]))
        if os.environ.get("ATS_SLOG_BP"):
            self.p["bp"] = float(os.environ["ATS_SLOG_BP"])

    async def start(self, thr):
        """Inputs idle, `slog_thr` = thr, the clock, five cycles of reset, then the TB's clock loop."""
        dut = self.dut
        for name in ("s_disp_valid", "s_hrd_valid", "s_wbc_valid", "s_rdd_valid", "pwr_fail", "no_space"):
            getattr(dut, name).value = 0
        dut.plp_budget.value = 0
        dut.slog_thr.value = thr
        for k in ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux", "epoch"):
            getattr(dut, f"s_disp_{k}").value = 0
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        for _ in range(5):
            await RisingEdge(dut.clk)
        dut.rst.value = 0
        cocotb.start_soon(self.clock())

    def r(self, p=None):
        return self.rng.random() < (self.p["bp"] if p is None else p)

    async def clock(self):
        # at each rising edge: the beats of that edge (the DUT's outputs as the edge sees them, and
        # the values this TB drove for it), then the values for the next edge (streams.py's rule)
        self.drv: dict[str, int] = {}
        self.cyc = 0
        while True:
            await RisingEdge(self.dut.clk)
            self.cyc += 1
            if self.drv:
                self.sample()
            self.drive()

    def _set(self, name, v):
        self.drv[name] = v
        getattr(self.dut, name).value = v

    def _v(self, name):
        return self.drv[name] if name in self.drv else int(getattr(self.dut, name).value)

    def drive(self):
        d, idle = self.dut, self.p["idle"]
        if self.disp is not None:
            for k, v in self.disp.items():
                self._set(f"s_disp_{k}", v)
            self._set('s_disp_valid', 1)
        else:
            self._set('s_disp_valid', 0)
        self._set('m_done_ready', int(not self.r()))
        self._set('m_hrd_ready', int(not self.r()))
        self._set('m_hwr_ready', int(not self.r()))
        self._set('m_wb_ready', int(not self.r() and self.out < 6))
        # (a record whose fragment bases wait for an earlier record: its descriptors stalled)
        self._set('m_wbd_ready', int(not self.r() and not (self.wb_q and self.wb_q[0].get("lk_wait"))))
        self._set('m_rd_ready', int(not self.r()))
        # host read data
        # (a source keeps an offered beat until it is taken: random idle only between beats)
        if self.hrd_q and (self.hrd_pend or not self.r(idle)):
            self._set('s_hrd_valid', 1)
            self._set('s_hrd_data', self.hrd_q[0][0])
            self._set('s_hrd_last', int(len(self.hrd_q[0]) == 1))
        else:
            self._set('s_hrd_valid', 0)
        # completions in request order, when their data is in (but for defer_p)
        if self.cpl_cur is None and self.cpl_q and not self.r(idle):
            i = 0
            if self.defer_p and len(self.cpl_q) > 1 and _is_rec(self.cpl_q[0]):
                n = self.cpl_q[1]
                if (self.defer_any or n["op"] == 0 and n["rec"] == 0 and 0 < n["txid"] <= NUM_TX) and n["t_done"] <= self.cyc and \
                        not n.get("held") and self.defer_left != 0 and self.rng.random() < self.defer_p:
                    i = 1
            rq = self.cpl_q[i]
            if rq["t_done"] <= self.cyc and not rq.get("held"):
                self.cpl_q.pop(i)
                self.deferred += i
                if i and self.defer_left is not None:
                    self.defer_left -= 1
                self.cpl_rq = rq
                self.cpl_cur = (rq["tag"], *self.be.complete(rq, rq["data"]))
        if self.cpl_cur is not None:
            self._set('s_wbc_valid', 1)
            self._set('s_wbc_tag', self.cpl_cur[0])
            self._set('s_wbc_status', self.cpl_cur[2])
            self._set('s_wbc_ppn', self.cpl_cur[1])
        else:
            self._set('s_wbc_valid', 0)
        # read pages, any order, whole pages
        if self.rd_cur is None and self.rd_q and not self.r(idle):
            self.rd_cur = [*self.rd_q.pop(self.rng.randrange(len(self.rd_q))), 0]
        if self.rd_cur is not None and (self.rdd_pend or not self.r(idle / 2)):
            tag, words, sts, i = self.rd_cur
            self._set('s_rdd_valid', 1)
            self._set('s_rdd_data', words[i])
            self._set('s_rdd_tag', tag)
            self._set('s_rdd_last', int(i == self.pw - 1))
            self._set('s_rdd_status', sts if i == self.pw - 1 else OK)
        else:
            self._set('s_rdd_valid', 0)

    def sample(self):
        d = self.dut
        self.hrd_pend = bool(self._v('s_hrd_valid') and not int(d.s_hrd_ready.value))
        self.rdd_pend = bool(self._v('s_rdd_valid') and not int(d.s_rdd_ready.value))
        if self.disp is not None and self._v('s_disp_valid') and int(d.s_disp_ready.value):
            self.disp = None
        if int(d.m_done_valid.value) and self._v('m_done_ready'):
            self.done.append((int(d.m_done_tag.value), int(d.m_done_status.value), int(d.m_done_result.value)))
        if int(d.m_hrd_valid.value) and self._v('m_hrd_ready'):
            a, n = int(d.m_hrd_addr.value), int(d.m_hrd_len.value)
            self.hrd_q.append([self.mem.get(a // 4 + i, 0) for i in range(n // 4)])
        if self._v('s_hrd_valid') and int(d.s_hrd_ready.value):
            if os.environ.get("ATS_SLOG_DEBUG") == "2":
                d._log.info(f"hrd {self._v('s_hrd_data')}")
            self.hrd_q[0].pop(0)
            if not self.hrd_q[0]:
                self.hrd_q.pop(0)
        if int(d.m_hwr_valid.value) and self._v('m_hwr_ready'):
            if self.hwr_addr is None:
                self.hwr_addr = int(d.m_hwr_addr.value) // 4
            self.mem[self.hwr_addr] = int(d.m_hwr_data.value)
            if os.environ.get("ATS_SLOG_DEBUG") == "2":
                d._log.info(f"hwr {self.hwr_addr * 4:#x} {int(d.m_hwr_data.value)} last {int(d.m_hwr_last.value)}")
            self.hwr_addr = None if int(d.m_hwr_last.value) else self.hwr_addr + 1
        if int(d.m_wb_valid.value) and self._v('m_wb_ready'):
            rq = dict(op=int(d.m_wb_op.value), rec=int(d.m_wb_rec.value), slog=int(d.m_wb_slog.value),
                      lpn=int(d.m_wb_lpn.value), txid=int(d.m_wb_txid.value), tag=int(d.m_wb_tag.value),
                      data=[], passes=0)
            self.out += 1
            if rq["op"] == 1 and rq["rec"] == 2 and rq["slog"]:
                # architecture §11.4: the record waits for every earlier request but the data pages
                # of transactions, its own or others' (a fragment's base is looked up when its
                # descriptor is taken: an earlier write / TRIM / commit / record of that LPN
                # completing later would change it; a tx's data page maps nothing at completion)
                # (SLOG_RIF > 1: also beside up to SLOG_RIF - 1 earlier records, README "Records in flight")
                data = [q for q in self.inflight if q["op"] == 0 and q["rec"] == 0 and 0 < q["txid"] <= NUM_TX]
                recs = [q for q in self.inflight if _is_rec(q)] if self.rif > 1 else []
                if len(data) + len(recs) < len(self.inflight) or len(recs) >= self.rif:
                    self.be.errors.append(f"S-Log record of tx {rq['txid']} taken while a request other than a "
                                          f"tx's data page (or SLOG_RIF records) was in flight: "
                                          f"{[(q['op'], q['rec'], q['txid'], q['lpn']) for q in self.inflight]}")
                self.be.beside += any(q["txid"] == rq["txid"] for q in data)
                self.be.beside_other += any(q["txid"] != rq["txid"] for q in data)
                self.be.beside_rec += bool(recs)
            self.inflight.append(rq)
            self.be.taken(rq)
            self.wb_q.append(rq)
            self._wb_ready()
        if int(d.m_wbd_valid.value) and self._v('m_wbd_ready'):
            assert self.wb_q and (self.wb_q[0]["op"] == 0 or self.wb_q[0]["slog"]), "m_wbd beat without a data request"
            rq = self.wb_q[0]
            last = int(d.m_wbd_last.value)
            if rq["slog"]:
                rq["data"].append((int(d.m_wbd_data.value), last))
                rq["passes"] += last
                if last and rq["passes"] == 1:    # the descriptors: the backend looks their bases up now
                    if self._lk_conflict(rq):
                        rq["lk_wait"] = True      # ... unless an earlier record names one as a full page
                        self.be.lk_deferred += 1
                    else:
                        self._lookup(rq)
            else:
                rq["data"].append(int(d.m_wbd_data.value))
                assert last == (len(rq["data"]) == self.pw), "m_wbd last"
            self._wb_ready()
        if self._v('s_wbc_valid') and int(d.s_wbc_ready.value) and self.cpl_cur is not None:
            self.cpl_cur = None
            self.out -= 1
            # completions in request order but for the deferred S-Log records (defer_p)
            self.inflight.pop(next(i for i, q in enumerate(self.inflight) if q is self.cpl_rq))
            self.cpl_order.append(self.cpl_rq)
            if self.wb_q and self.wb_q[0].get("lk_wait") and not self._lk_conflict(self.wb_q[0]):
                del self.wb_q[0]["lk_wait"]
                self._lookup(self.wb_q[0])
        if int(d.m_rd_valid.value) and self._v('m_rd_ready'):
            lpn, txid, tag = int(d.m_rd_lpn.value), int(d.m_rd_txid.value), int(d.m_rd_tag.value)
            words, sts = self.be.read(lpn, txid, tag)
            self.rd_q.append((tag, words, sts))
        if self._v('s_rdd_valid') and int(d.s_rdd_ready.value) and self.rd_cur is not None:
            self.rd_cur[3] += 1
            if self.rd_cur[3] == self.pw:
                self.rd_cur = None

    def _lk_conflict(self, rq) -> bool:
        """The backend's rule for records in flight together (README "Records in flight"): a
        fragment's base is not looked up while an earlier record in flight (completion not taken)
        names its LPN as a full page; the record's descriptors wait."""
        if self.be.no_rule:
            return False
        lpns = {rq["data"][i][0] for i in range(0, len(rq["data"]), 2)}
        for q in self.inflight:
            if q is rq:
                return False
            if _is_rec(q) and q.get("full_lpns", set()) & lpns:
                return True
        return False

    def _lookup(self, rq):
        rq["bases"] = {rq["data"][i][0]: self.be.committed.get(rq["data"][i][0], bytes(self.pb))
                       for i in range(0, len(rq["data"]), 2)}

    def _wb_ready(self):
        """Requests whose data is complete queue their completions, in order (applied when sent)."""
        while self.wb_q:
            rq = self.wb_q[0]
            need_data = rq["op"] == 0 or rq["slog"]
            if need_data and not ((rq["op"] == 0 and len(rq["data"]) == self.pw) or (rq["slog"] and rq["passes"] == 2)):
                return
            self.wb_q.pop(0)
            # a program's latency; a long one for half the data pages of the tx being committed
            # and of the others while it is (slow_tx: so that its S-Log record may be taken while
            # they are in flight, §11.4)
            slow = rq["op"] == 0 and rq["rec"] == 0 and self.slow_tx is not None and rq["txid"] and \
                (rq["txid"] == self.slow_tx or self.rng.random() < 0.5) and self.rng.random() < 0.5
            rq["held"] = (rq["op"] == 0 and rq["txid"] and (rq["rec"] == 0 and rq["txid"] == self.hold_tx or
                                                            rq["rec"] == 1 and rq["txid"] == self.hold_cm)) or \
                (_is_rec(rq) and rq["txid"] == self.hold_rec)
            rq["t_done"] = self.cyc + (self.rng.randrange(300, 1200) if slow else self.rng.randrange(10, 150))
            if _is_rec(rq) and self.defer_p and self.rng.random() < self.defer_p:
                # a record's page kept open for a while (a group commit's timer): later data pages
                # may complete first
                rq["t_done"] += self.rng.randrange(300, 1500)
            self.cpl_q.append(rq)                 # applied (durable) when its completion is sent


async def _wait_done(tb, tag, cycles=60_000):
    for _ in range(cycles):
        for i, (t, st, res) in enumerate(tb.done):
            if t == tag:
                tb.done.pop(i)
                return st, res
        await RisingEdge(tb.dut.clk)
    raise AssertionError(f"command tag {tag} did not complete")


@cocotb.test()
async def run_slog_random(dut):
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed * 7919 + int(dut.FRAG_SLOTS.value) + 1000 * (int(dut.PTXQ.value) - 1) +
                        100_000 * (int(dut.SLOG_RIF.value) - 1))
    steps = int(os.environ.get("ATS_SLOG_STEPS", "600"))
    tb = TB(dut, rng)
    tb.defer_p = 0.5                             # data pages may complete before an earlier S-Log record
    pb, pw = tb.pb, tb.pw
    nf, txfrags = int(dut.FRAG_SLOTS.value), int(dut.SLOG_TXFRAGS.value)
    thr_v = rng.choice([pb - 16, pb // 2])
    txfull = int(dut.SLOG_TXFULL.value)
    ref = FragRef(pb, nf, txfrags, thr_v, txfull)
    tb.be.txfull = txfull
    await tb.start(thr_v)

    view0 = {}                                   # what a plain READ returns
    full = {t: {} for t in range(1, NUM_TX + 1)}  # each tx's full pages
    ents = {t: False for t in range(1, NUM_TX + 1)}
    nfull = {t: 0 for t in range(1, NUM_TX + 1)}  # each tx's full pages committed into the buffer (a rewrite each time)
    tags = iter(i % 200 + 1 for i in range(10**9))
    epoch = [1]
    stats = dict(frag_new=0, frag_write=0, convert=0, rmw=0, slog_records=0, overlay_reads=0, sent=0, conv_commit=0, conv_err=0, rejected=0, commit_err=0,
                 base_err=0, read_err=0, overlapped=0, mixed=0, txfull_conv=0, late_w=0)

    def v0(lpn):
        return view0.get(lpn, bytes(pb))

    def host_put(addr, data):
        for i, w in enumerate(words_of(data)):
            tb.mem[addr // 4 + i] = w

    def host_get(addr, n):
        return _page([tb.mem.get(addr // 4 + i, 0) for i in range(n // 4)])

    async def cmd(op, lba=0, nlb=0, txid=0, flags=0, dptr=0, aux=0):
        tag = next(tags)
        n_rq, n_ans = len(tb.be.rq), len(tb.be.answers)
        while tb.disp is not None:
            await RisingEdge(dut.clk)
        tb.disp = dict(op=op, tag=tag, lba=lba, nlb=nlb, txid=txid, flags=flags, attr=0, prio=0,
                       dptr=dptr, aux=aux, epoch=epoch[0])
        st, res = await _wait_done(tb, tag)
        if os.environ.get("ATS_SLOG_DEBUG"):
            dut._log.info(f"cmd op {op} lba {lba} nlb {nlb} tx {txid} fl {flags} aux {aux:#x} -> {st:#x} {res} "
                          f"rq {tb.be.rq[n_rq:]} ans {tb.be.answers[n_ans:]}")
        return st, res, tb.be.rq[n_rq:], tb.be.answers[n_ans:]

    def reserve_cb(answers):
        it = iter(answers)

        def cb(t, lpn):
            a = next(it, None)
            assert a is not None, f"the reference sends RESERVE ({lpn}, {t}); the buffer did not"
            return a
        return cb

    addr_w, addr_r, addr_l = 0x1000, 0x8000, 0x4000

    async def do_diffwrite(t, lpn, step, err_p=0.08):
        """A random DIFFWRITE of tx t on lpn, checked against the reference; its 0xFD / 0xFC requests."""
        off = 4 * rng.randrange(pw)
        held = ref.find(t, lpn) is not None
        ln = (4 * rng.randrange(1, pw - off // 4 + 1) if rng.random() < (0.6 if held else 0.4)
              else 4 * rng.randrange(1, min(4, pw - off // 4) + 1))
        if held and rng.random() < 0.15:
            off, ln = 0, pb                   # a whole page: a conversion (len >= thr)
        if rng.random() < 0.03:
            ln = pb - off + 4                 # past the page
        fua = rng.random() < 0.05
        data = bytes(rng.randrange(256) for _ in range(ln))
        host_put(addr_w, data)
        # (a held LPN's base read fails more often: a failed conversion must change nothing)
        tb.be.err_p, e0 = (min(1.0, 4 * err_p) if held else err_p), tb.be.base_errs
        st, res, rq, ans = await cmd(DIFFWRITE, lpn, 0, t, FUA_F if fua else 0, addr_w, off | ln << 16)
        tb.be.err_p = 0.0
        assert (st == MEDIA_ERROR) == (tb.be.base_errs > e0), f"step {step}: DIFFWRITE {st:#x}, base read errors {tb.be.base_errs - e0}"
        path, s = ref.diffwrite(t, lpn, off, ln, data, fua, lpn in full[t], reserve_cb(ans))
        if st == MEDIA_ERROR:
            # its base read failed: nothing changed (a conversion's FRAG slot and its reservation
            # stay, architecture §11.3: later READs and the commit must still see its bytes)
            assert path in ("rmw", "convert"), f"step {step}: MEDIA_ERROR on a {path}"
            stats["base_err"] += 1
            stats["conv_err"] += path == "convert"
        elif path == "bad_field":
            assert st == BAD_FIELD, f"step {step}: DIFFWRITE past the page: status {st:#x}"
        else:
            assert st == OK, f"step {step}: DIFFWRITE {path} status {st:#x}"
            stats[path] += 1
            ents[t] = True
            if path in ("rmw", "convert"):
                nfull[t] += 1
                base = full[t].get(lpn) if lpn in full[t] else v0(lpn)
                if path == "convert":
                    base = ref.overlay(s, v0(lpn))
                    ref.convert_done(s)
                b = bytearray(base)
                b[off:off + ln] = data
                full[t][lpn] = bytes(b)
        return rq

    async def do_read(t, lpn, step, err_p=0.08):
        """A READ (of tx t or plain) of 1-2 pages from lpn, checked; its 0xFD / 0xFC requests."""
        tx = t if rng.random() < 0.75 else 0
        nlb = rng.randrange(2)
        tb.be.err_p, e0 = err_p, tb.be.base_errs
        st, res, rq, _ = await cmd(READ, lpn, nlb, tx, 0, addr_r)
        tb.be.err_p = 0.0
        assert (st == MEDIA_ERROR) == (tb.be.base_errs > e0), f"step {step}: READ {st:#x}, base read errors {tb.be.base_errs - e0}"
        ovl = [lp for lp in range(lpn, lpn + nlb + 1) if tx and lp not in full[tx] and ref.find(tx, lp)]
        if st == MEDIA_ERROR:                 # only an overlay's base read (id 0xFF) can fail here
            assert ovl, f"step {step}: READ MEDIA_ERROR without an overlay"
            stats["read_err"] += 1
        else:
            assert st == OK, f"step {step}: READ status {st:#x}"
        for p in range(nlb + 1 if st == OK else 0):
            lp = lpn + p
            if tx and lp in full[tx]:
                exp = full[tx][lp]
            else:
                if tx and ref.find(tx, lp):
                    stats["overlay_reads"] += 1
                exp = ref.read(tx, lp, v0(lp)) if tx else v0(lp)
            got = host_get(addr_r + p * pb, pb)
            assert got == exp, (f"step {step}: READ lpn {lp} tx {tx}: got {words_of(got)} "
                                f"expected {words_of(exp)}; the backend's committed page "
                                f"{words_of(tb.be.committed.get(lp, bytes(pb)))}")
        return rq

    for step in range(steps):
        if rng.random() < 0.04:                   # the CSR changes now and then (0: no fragments)
            thr_v = rng.choice([0, pb // 4, pb // 2, pb - 16, pb])
            dut.slog_thr.value = thr_v
            ref.thr = min(thr_v, pb - 16)
            for _ in range(3):
                await RisingEdge(dut.clk)
        if rng.random() < 0.1:
            epoch[0] = (epoch[0] + 1) & 0xFFFF
        t = rng.randrange(1, NUM_TX + 1)
        lpn = rng.randrange(NUM_LBAS - 1)
        if ref.of_tx(t) and rng.random() < 0.4:   # often an LPN the tx holds a FRAG slot of
            lpn = rng.choice(ref.of_tx(t)).lpn
        x = rng.random()
        n_before = len(ref.reqs)
        if x < 0.34:                              # DIFFWRITE
            rq = await do_diffwrite(t, lpn, step)
        elif x < 0.44 or (x < 0.5 and ents[t]):   # WRITE (a tx's, plain, a COMMIT write)
            tx = t if rng.random() < 0.6 else 0
            cm = tx != 0 and rng.random() < 0.15
            data = bytes(rng.randrange(256) for _ in range(pb))
            host_put(addr_w, data)
            st, res, rq, _ = await cmd(WRITE, lpn, 0, tx, COMMIT_F if cm else 0, addr_w)
            assert st == OK, f"step {step}: WRITE status {st:#x}"
            if tx:
                if cm:                            # its walk converts every FRAG slot of the tx first
                    for fs in ref.of_tx(tx):      # (README "S-Log": a COMMIT write sends no fragments)
                        full[tx][fs.lpn] = ref.overlay(fs, v0(fs.lpn))
                        ref._free(fs, True)
                        stats["conv_commit"] += 1
                ref.write(tx, lpn)
                full[tx][lpn] = data
                ents[tx] = True
                nfull[tx] += 1
                if cm:
                    view0.update(full[tx])
                    full[tx], ents[tx], nfull[tx] = {}, False, 0
            else:
                view0[lpn] = data
        elif x < 0.72:                            # READ, a tx's or plain, 1-2 pages
            rq = await do_read(t, lpn, step)
        elif x < 0.82:                            # TX_COMMIT
            if ref.of_tx(t) and rng.random() < 0.3:
                # a plain WRITE of a FRAG slot's LPN just before the commit: its fragments go onto
                # this version (architecture §11.4: the record waits until it has completed)
                lp = rng.choice(ref.of_tx(t)).lpn
                data = bytes(rng.randrange(256) for _ in range(pb))
                host_put(addr_w, data)
                st, *_ = await cmd(WRITE, lp, 0, 0, 0, addr_w)
                assert st == OK
                view0[lp] = data
            n_rec, rej0 = len(tb.be.records), len(tb.be.rejected)
            nf0, late_w = nfull[t], None
            # (coverage: slots that would be sent but for SLOG_TXFULL)
            capped = bool(ref._plan(t, -10**6)[0]) and not ref._plan(t, nf0)[0]
            tset = set(full[t]) | {fs.lpn for fs in ref.of_tx(t)}
            free_lpns = [lp for lp in range(NUM_LBAS - 1) if lp not in tset and lp + 1 not in tset]
            if ents[t] and free_lpns and rng.random() < 0.5:
                # other txs' DIFFWRITEs and READs of LPNs t does not touch while t's commit is
                # pending: the FSM's FRAG table work beside the record streamer. Their requests
                # follow the commit's (its walk runs before the FSM takes the next command); no
                # base read fails meanwhile (the walk's conversions read bases too)
                n_rq0, n_ref0 = len(tb.be.rq), len(ref.reqs)
                tag_c = next(tags)
                while tb.disp is not None:
                    await RisingEdge(dut.clk)
                tb.slow_tx = t
                tb.disp = dict(op=TX_COMMIT, tag=tag_c, lba=0, nlb=0, txid=t, flags=0, attr=0, prio=0,
                               dptr=0, aux=0, epoch=epoch[0])
                r = ref.commit(t, nf0)
                for _ in range(rng.randrange(1, 4)):
                    # (a DIFFWRITE only where u holds a FRAG slot or a full page: a new FRAG slot
                    # would depend on when t's record frees t's slots, which the model cannot know)
                    u = rng.choice([v for v in range(1, NUM_TX + 1) if v != t])
                    held = [fs.lpn for fs in ref.of_tx(u) if fs.lpn in free_lpns] + \
                           [lp for lp in full[u] if lp in free_lpns]
                    if held and rng.random() < 0.7:
                        await do_diffwrite(u, rng.choice(held), step, 0.0)
                    elif rng.random() < 0.5:
                        # a full page of u, written back behind t's record: with the TB's defer_p
                        # it may complete before the record (a group-committing backend's order)
                        lp = rng.choice(free_lpns)
                        data = bytes(rng.randrange(256) for _ in range(pb))
                        host_put(addr_w, data)
                        st_w, *_ = await cmd(WRITE, lp, 0, u, 0, addr_w)
                        assert st_w == OK, f"step {step}: u's WRITE status {st_w:#x}"
                        ref.write(u, lp)
                        full[u][lp] = data
                        ents[u] = True
                        nfull[u] += 1
                    else:
                        await do_read(u, rng.choice(free_lpns), step, 0.0)
                if rng.random() < 0.4:
                    # a WRITE of t itself right behind its commit: it waits until the commit has
                    # ended (its page is t's next incarnation's: never written back before the record)
                    late_w = (next(tags), rng.randrange(NUM_LBAS - 1),
                              bytes(rng.randrange(256) for _ in range(pb)))
                    host_put(addr_l, late_w[2])
                    while tb.disp is not None:
                        await RisingEdge(dut.clk)
                    tb.disp = dict(op=WRITE, tag=late_w[0], lba=late_w[1], nlb=0, txid=t, flags=0, attr=0,
                                   prio=0, dptr=addr_l, aux=0, epoch=epoch[0])
                st, res = await _wait_done(tb, tag_c)
                tb.slow_tx = None
                rq, exp_group = tb.be.rq[n_rq0:], ref.reqs[n_ref0:]
                assert rq == exp_group, f"step {step}: 0xFD / 0xFC requests {rq}, expected {exp_group}"
                stats["overlapped"] += 1
            else:
                # a commit's conversions read bases too: one may fail (then nothing is lost, §11.3)
                tb.be.err_p, e0 = (0.15 if ref.of_tx(t) else 0.0), tb.be.base_errs
                tb.slow_tx = t
                st, res, rq, _ = await cmd(TX_COMMIT, 0, 0, t)
                tb.be.err_p, tb.slow_tx = 0.0, None
                r = None
                assert (st == MEDIA_ERROR) == (tb.be.base_errs > e0), f"step {step}: TX_COMMIT {st:#x}"
            if st == MEDIA_ERROR:
                # its conversion of err_lpns[-1] failed: the slots converted before it are full
                # pages of t, it and the rest stay FRAG slots, t stays open
                for fs in ref.commit_failed(t, nf0, tb.be.err_lpns[-1]):
                    full[t][fs.lpn] = ref.overlay(fs, v0(fs.lpn))
                    nfull[t] += 1
                stats["commit_err"] += 1
            elif not ents[t]:
                assert st == TX_EMPTY, f"step {step}: empty commit {st:#x}"
            elif rej0 < len(tb.be.rejected):
                # its S-Log record was rejected: the commit became an abort, nothing of t visible
                assert st == TX_FULL, f"step {step}: TX_COMMIT of a rejected record: status {st:#x}"
                r = ref.commit(t, nf0) if r is None else r
                assert r["slog"], f"step {step}: rejected {r}"
                assert tb.be.records[n_rec:] == [r["stream"]], f"step {step}: S-Log record stream"
                stats["rejected"] += 1
                ref.commit_done(t)
                full[t], ents[t], nfull[t] = {}, False, 0
            else:
                assert st == OK, f"step {step}: TX_COMMIT status {st:#x}"
                r = ref.commit(t, nf0) if r is None else r
                for fs in r["converted"]:
                    full[t][fs.lpn] = ref.overlay(fs, v0(fs.lpn))
                    stats["conv_commit"] += 1
                recs = tb.be.records[n_rec:]
                stats["txfull_conv"] += capped
                if r["slog"]:
                    stats["slog_records"] += 1
                    stats["sent"] += len(r["sent"])
                    stats["mixed"] += bool(full[t])
                    assert len(recs) == 1 and recs[0] == r["stream"], \
                        f"step {step}: S-Log record stream {recs} expected {r['stream']}"
                else:
                    assert not recs, f"step {step}: an S-Log record without fragments"
                exp_res = len(full[t]) + sum(len(fs.runs()) for fs in r["sent"])
                assert res == exp_res, f"step {step}: commit result {res}, expected {exp_res}"
                view0.update(full[t])
                for fs in r["sent"]:
                    view0[fs.lpn] = ref.overlay(fs, v0(fs.lpn))
                ref.commit_done(t)
                full[t], ents[t], nfull[t] = {}, False, 0
            if late_w is not None:
                st, _ = await _wait_done(tb, late_w[0])
                assert st == OK, f"step {step}: late WRITE status {st:#x}"
                ref.write(t, late_w[1])
                full[t][late_w[1]], ents[t] = late_w[2], True
                nfull[t] += 1
                stats["late_w"] += 1
        elif x < 0.87:                            # TX_ABORT
            st, res, rq, _ = await cmd(TX_ABORT, 0, 0, t)
            assert st == (OK if ents[t] else TX_EMPTY), f"step {step}: TX_ABORT status {st:#x}"
            ref.abort(t)
            full[t], ents[t], nfull[t] = {}, False, 0
        elif x < 0.92:
            st, res, rq, _ = await cmd(TX_BEGIN, 0, 0, t)
            assert st == (TABLE_FULL if ents[t] else OK), f"step {step}: TX_BEGIN status {st:#x}"
        else:
            st, res, rq, _ = await cmd(FLUSH)
            assert st == OK
        exp_rq = ref.reqs[n_before:]
        assert rq == exp_rq, f"step {step}: 0xFD / 0xFC requests {rq}, expected {exp_rq}"
        assert not tb.be.errors, tb.be.errors
        assert int(dut.cnt_proto_err.value) == 0, f"step {step}: protocol error"
    # end: every tx aborted, FLUSH, the backend's committed pages and every LBA read back
    for t in range(1, NUM_TX + 1):
        n_before = len(ref.reqs)
        st, res, rq, _ = await cmd(TX_ABORT, 0, 0, t)
        ref.abort(t)
        assert rq == ref.reqs[n_before:]
    st, *_ = await cmd(FLUSH)
    assert st == OK
    for lp in range(NUM_LBAS):
        assert tb.be.committed.get(lp, bytes(pb)) == v0(lp), f"backend lpn {lp}"
        st, *_ = await cmd(READ, lp, 0, 0, 0, addr_r)
        assert st == OK and host_get(addr_r, pb) == v0(lp), f"final READ lpn {lp}"
    assert int(dut.cnt_slog_err.value) == tb.be.unres_bad, "cnt_slog_err"
    assert not tb.be.errors, tb.be.errors
    dut._log.info(f"S-Log run: {stats}, unreserve refused {tb.be.unres_bad}, streams {tb.p}")
    assert stats["frag_new"] and stats["frag_write"] and stats["convert"] and \
        stats["slog_records"] + stats["rejected"], stats
    # records beside full pages (the backend's model saw appends), and the SLOG_TXFULL rule taken
    assert stats["mixed"] and tb.be.mixed and stats["txfull_conv"], stats
    # records taken beside their own full pages / another tx's data page still in flight (the wait
    # is not for every request): logged here, where they happen by chance (0-4 a run); required by
    # the directed run_slog_beside_own and run_slog_beside_other, which hold those pages in flight
    dut._log.info(f"S-Log records taken beside their tx's pages in flight: {tb.be.beside}, "
                  f"beside another tx's: {tb.be.beside_other}; completions before an earlier record's: "
                  f"{tb.deferred}; beside an earlier record in flight (SLOG_RIF > 1): {tb.be.beside_rec}, "
                  f"their lookups deferred: {tb.be.lk_deferred}")
    assert tb.deferred, "no completion was taken before an earlier S-Log record's (defer_p)"


class _NoLuck(random.Random):
    """The backend's random choices never taken (no refused RESERVE, no rejected record, no merge)."""

    def random(self):
        return 0.99



async def _directed_tb(dut, salt: int):
    """The directed items' set-up: a TB whose backend model has no luck (no random refusals) and
    the build's SLOG_TXFULL, started; `cmd` sends one command (tags 1, 2, ...) and waits for its
    completion ((status, result); with wait=False it returns the tag), `put` writes a page's bytes
    into host memory."""
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed * salt + int(dut.FRAG_SLOTS.value))
    tb = TB(dut, rng)
    tb.be.rng = _NoLuck()
    tb.be.txfull = int(dut.SLOG_TXFULL.value)
    await tb.start(tb.pb - 16)
    tags = iter(range(1, 200))

    async def cmd(op, lba=0, txid=0, flags=0, dptr=0, aux=0, wait=True):
        tag = next(tags)
        while tb.disp is not None:
            await RisingEdge(dut.clk)
        tb.disp = dict(op=op, tag=tag, lba=lba, nlb=0, txid=txid, flags=flags, attr=0, prio=0,
                       dptr=dptr, aux=aux, epoch=1)
        return (await _wait_done(tb, tag)) if wait else tag

    def put(addr, data):
        for i, w in enumerate(words_of(data)):
            tb.mem[addr // 4 + i] = w

    return rng, tb, cmd, put

@cocotb.test()
async def run_slog_refused_page(dut):
    """A data page of t refused (TX_FULL), then a small DIFFWRITE of its LPN x: the probe misses (x
    is not in t's table), so x becomes a FRAG slot of t; but x is already in the backend's list of
    t's full pages. t's commit must send no S-Log record: the FRAG slot is converted (a full page of
    x of t written back, its bytes over the committed base) and the plain commit record follows
    (architecture §11.3, "Which FRAG slots become fragments")."""
    rng, tb, cmd, put = await _directed_tb(dut, 104729)
    pb, pw = tb.pb, tb.pw

    t, x = rng.randrange(1, NUM_TX + 1), rng.randrange(NUM_LBAS - 1)
    base = bytes(rng.randrange(256) for _ in range(pb))
    put(0x1000, base)
    assert (await cmd(WRITE, x, 0, 0, 0x1000))[0] == OK          # x committed (a RESERVE needs a base)
    assert (await cmd(FLUSH))[0] == OK
    tb.be.refuse.add((t, x))
    put(0x1000, bytes(rng.randrange(256) for _ in range(pb)))
    assert (await cmd(WRITE, x, t, 0, 0x1000))[0] == OK
    assert (await cmd(FLUSH))[0] == OK                           # TX_FULL is the tx's failure, not the FLUSH's
    for _ in range(2000):
        if not tb.be.refuse and tb.out == 0:
            break
        await RisingEdge(dut.clk)
    assert not tb.be.refuse and tb.out == 0, "t's page of x was not written back"
    off, ln = 4 * rng.randrange(pw - 1), 4
    diff = bytes(rng.randrange(256) for _ in range(ln))
    put(0x1000, diff)
    n_rq = len(tb.be.rq)
    st, _ = await cmd(DIFFWRITE, x, t, 0, 0x1000, off | ln << 16)
    assert st == OK, f"DIFFWRITE {st:#x}"
    assert tb.be.rq[n_rq:] == [(ID_RESV, x, t)], f"no FRAG slot of x: requests {tb.be.rq[n_rq:]}"
    n_log, n_rec = len(tb.be.log), len(tb.be.records)
    st, res = await cmd(TX_COMMIT, 0, t)
    for _ in range(2000):
        if tb.out == 0:
            break
        await RisingEdge(dut.clk)
    taken = [(q["op"], q["rec"], q["slog"], q["lpn"], q["txid"]) for q in tb.be.log[n_log:]]
    assert not any(q[2] for q in taken) and len(tb.be.records) == n_rec, \
        f"an S-Log record of tx {t} after its page of lpn {x} was refused: {taken}"
    assert [q for q in taken if q[0] == 0] == [(0, 0, 0, x, t)] and (1, 2, 0, 0, t) in taken, \
        f"requests {taken}: expected the conversion of x, then t's plain commit record"
    exp = bytearray(base)
    exp[off:off + ln] = diff
    conv = [q for q in tb.be.log[n_log:] if q["op"] == 0]
    assert _page(conv[0]["data"]) == bytes(exp), "the converted page"
    assert st == OK and res == 1, f"TX_COMMIT {st:#x} {res}"   # (this model applies t's table: x)
    assert tb.be.committed[x] == bytes(exp) and not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


async def _record_beside_held(dut, rng, tb, cmd, put, t: int, h: int, ln: int):
    """run_slog_beside_own / _other's common part: x committed with a random base; tx h's full page of
    another LPN z written and its completion held by the backend model (tb.hold_tx); t's DIFFWRITE
    of `ln` bytes of x (a FRAG slot: its RESERVE); t's TX_COMMIT. t's S-Log record must be taken
    within 5,000 cycles while h's page of z is in flight and ahead of it (counted as beside its own
    page, h = t, or another tx's), and t's commit must not complete while that page is held (random
    idle after); then released, t's commit OK with the fragment on x's committed base. Returns
    (t's commit result, x, x's base, x's expected page, z, z's page)."""
    pb, pw = tb.pb, tb.pw
    x, z = rng.sample(range(NUM_LBAS - 1), 2)
    base, zpage = (bytes(rng.randrange(256) for _ in range(pb)) for _ in range(2))
    put(0x1000, base)
    assert (await cmd(WRITE, x, 0, 0, 0x1000))[0] == OK          # x committed (a RESERVE needs a base)
    assert (await cmd(FLUSH))[0] == OK
    tb.hold_tx = h                                               # h's data pages complete only when released
    put(0x2000, zpage)
    assert (await cmd(WRITE, z, h, 0, 0x2000))[0] == OK          # h's full page of z, in the buffer
    off = 4 * rng.randrange(pw - 1)
    ln = min(ln, pb - off)
    diff = bytes(rng.randrange(256) for _ in range(ln))
    put(0x1000, diff)
    n_rq = len(tb.be.rq)
    assert (await cmd(DIFFWRITE, x, t, 0, 0x1000, off | ln << 16))[0] == OK
    assert tb.be.rq[n_rq:] == [(ID_RESV, x, t)], f"no FRAG slot of x: requests {tb.be.rq[n_rq:]}"
    n_log, n_rec = len(tb.be.log), len(tb.be.records)
    n_bes = tb.be.beside if h == t else tb.be.beside_other
    tag_c = await cmd(TX_COMMIT, 0, t, wait=False)
    # the commit writes back what is before its record (h's page of z, held), then the record
    await _until_taken(tb, n_log, lambda q: q["slog"], 5000)
    taken = [(q["op"], q["rec"], q["slog"], q["lpn"], q["txid"]) for q in tb.be.log[n_log:]]
    assert (1, 2, 1, 0, t) in taken, f"t's S-Log record not sent while h's page of z is in flight: {taken}"
    held = [q for q in tb.inflight if q["txid"] == h and q["op"] == 0 and q["lpn"] == z]
    assert held and tb.inflight.index(held[0]) < next(i for i, q in enumerate(tb.inflight) if q["slog"]), \
        f"h's page of z not in flight before the record: {taken}"
    assert (tb.be.beside if h == t else tb.be.beside_other) > n_bes
    for _ in range(rng.randrange(0, 300)):                     # the commit stays behind z's page
        await RisingEdge(dut.clk)
    assert not any(d[0] == tag_c for d in tb.done), "t's commit completed before h's earlier page of z"
    tb.hold_tx = None
    for q in tb.cpl_q:
        q["held"] = False
    st, res = await _wait_done(tb, tag_c)
    assert st == OK, f"TX_COMMIT of t {st:#x} {res}"
    exp = bytearray(base)
    exp[off:off + ln] = diff
    assert tb.be.records[n_rec:] and parse_stream(tb.be.records[n_rec])[0]["lpn"] == x
    assert tb.be.committed[x] == bytes(exp), "the fragment on x's committed base"
    return res, x, base, bytes(exp), z, zpage


async def _until_taken(tb, n_log: int, pred, cycles: int) -> bool:
    """Waits up to `cycles` for a write-back request taken since `tb.be.log[n_log]` that meets
    `pred`; whether one was taken."""
    for _ in range(cycles):
        if any(pred(q) for q in tb.be.log[n_log:]):
            return True
        await RisingEdge(tb.dut.clk)
    return any(pred(q) for q in tb.be.log[n_log:])


async def _rec_taken(tb, n_log: int, t: int, cycles: int = 5000) -> bool:
    """`_until_taken` for tx t's S-Log record."""
    return await _until_taken(tb, n_log, lambda q: _is_rec(q) and q["txid"] == t, cycles)


async def _read_back(tb, cmd, pages):
    """READ of each (lpn, expected page) through the buffer: OK and the page."""
    for lp, want in pages:
        st, _ = await cmd(READ, lp, 0, 0, 0x8000)
        got = _page([tb.mem.get(0x8000 // 4 + i, 0) for i in range(tb.pw)])
        assert st == OK and got == want, f"READ lpn {lp}"


@cocotb.test()
async def run_slog_beside_own(dut):
    """t's S-Log record is sent while t's own full page is in flight (architecture §11.4: t's pages
    are issued before the record and need no wait; the backend's list holds their PPNs). t's full
    page of z is written back at the commit and its completion held by the backend model; t's record
    (one fragment of x) must be taken within a bound while z's page is still in flight, and t's
    commit must not complete before it; released, the commit is OK with z's page and the fragment on
    x's committed base, both read back. Random idle / backpressure on every stream. (The random run
    met this case by chance at seed 1 while a FRAG slot's scan took a cycle per page word; with the
    scan's jump over the words inside and between runs it did not in one build.)"""
    rng, tb, cmd, put = await _directed_tb(dut, 32452843)
    t = rng.randrange(1, NUM_TX + 1)
    res, x, _, xpage, z, zpage = await _record_beside_held(dut, rng, tb, cmd, put, t, t, 4)
    assert res == 2, f"TX_COMMIT of t: result {res}, not its page of z and its fragment of x"
    assert tb.be.committed[z] == zpage
    await _read_back(tb, cmd, ((x, xpage), (z, zpage)))
    assert not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_slog_beside_other(dut):
    """t's S-Log record is sent while an earlier data page of another transaction u is in flight
    (architecture §11.4: a tx's data page maps nothing at its completion, so the record does not
    wait for it). u's page of y is written back before t's record and its completion is held by the
    backend model; t's record (one fragment of x) must be taken within a bound while u's page is
    still in flight, then both complete in request order: t's commit OK with the fragment on x's
    committed base, u's commit OK, x and y read back. Random idle / backpressure on every stream;
    the wait for every request but t's own pages (the rule before) times out here. Then u's commit
    record held: t's record must wait for it; and (PTXQ 2) u's COMMIT WRITE's mark page held: t's
    record must wait for it too (a wait counting COMMIT marks as data pages fails here)."""
    rng, tb, cmd, put = await _directed_tb(dut, 15485863)
    pb, pw = tb.pb, tb.pw
    t, u = rng.sample(range(1, NUM_TX + 1), 2)
    res, x, base, xpage, y, upage = await _record_beside_held(dut, rng, tb, cmd, put, t, u, 4 * rng.randrange(1, 3))
    assert res == 1, f"TX_COMMIT of t: result {res}"
    st, res = await cmd(TX_COMMIT, 0, u)
    assert st == OK and res == 1, f"TX_COMMIT of u {st:#x} {res}"
    await _read_back(tb, cmd, ((x, xpage), (y, upage)))
    # an earlier COMMIT of another tx in flight is waited for (it maps u's pages at its completion;
    # one of them could be a fragment's LPN): u's page and commit record held, t's record must not
    # be taken before u's commit has completed (PTXQ >= 2: both commits pending at once; with
    # PTXQ 1 t's TX_COMMIT itself waits for u's commit to end)
    x2 = rng.choice([lp for lp in range(NUM_LBAS - 1) if lp != y])
    put(0x1000, base)
    if x2 != x:
        assert (await cmd(WRITE, x2, 0, 0, 0x1000))[0] == OK
        assert (await cmd(FLUSH))[0] == OK
    cur = xpage if x2 == x else base
    diff2 = bytes(rng.randrange(256) for _ in range(4))
    off2 = 4 * rng.randrange(pw - 1)
    put(0x1000, diff2)
    assert (await cmd(DIFFWRITE, x2, t, 0, 0x1000, off2 | 4 << 16))[0] == OK
    tb.hold_tx = u
    put(0x2000, upage[::-1])
    assert (await cmd(WRITE, y, u, 0, 0x2000))[0] == OK
    n_log, n_rec = len(tb.be.log), len(tb.be.records)
    tag_u = await cmd(TX_COMMIT, 0, u, wait=False)
    await _until_taken(tb, n_log, lambda q: q["op"] == 1 and q["rec"] == 2 and q["txid"] == u, 5000)
    tag_c = await cmd(TX_COMMIT, 0, t, wait=False)
    for _ in range(rng.randrange(1500, 2500)):
        await RisingEdge(dut.clk)
    taken = [(q["op"], q["rec"], q["slog"], q["lpn"], q["txid"]) for q in tb.be.log[n_log:]]
    assert (1, 2, 0, 0, u) in taken and not any(q[2] for q in taken), \
        f"t's record taken while u's commit record was in flight, or u's not taken: {taken}"
    tb.hold_tx = None
    for q in tb.cpl_q:
        q["held"] = False
    assert (await _wait_done(tb, tag_u)) == (OK, 1), "TX_COMMIT of u"
    st, res = await _wait_done(tb, tag_c)
    assert st == OK and res == 1, f"TX_COMMIT of t {st:#x} {res}"
    exp2 = bytearray(cur)
    exp2[off2:off2 + 4] = diff2
    assert tb.be.committed[x2] == bytes(exp2) and tb.be.committed[y] == upage[::-1]
    await _read_back(tb, cmd, ((x2, bytes(exp2)), (y, upage[::-1])))
    if int(dut.PTXQ.value) >= 2:
        # an earlier COMMIT mark of another tx in flight is waited for too (its completion maps u's
        # pages): u's COMMIT WRITE of y (its RC_CMARK page) held, t's TX_COMMIT taken meanwhile (PTXQ 2:
        # both pending at once); t's record must not be taken before the mark has completed (a wait
        # that counted COMMIT marks as data pages would send it)
        x3 = rng.choice([lp for lp in range(NUM_LBAS - 1) if lp != y])
        put(0x1000, base)
        assert (await cmd(WRITE, x3, 0, 0, 0x1000))[0] == OK
        assert (await cmd(FLUSH))[0] == OK
        diff3 = bytes(rng.randrange(256) for _ in range(4))
        off3 = 4 * rng.randrange(pw - 1)
        put(0x1000, diff3)
        assert (await cmd(DIFFWRITE, x3, t, 0, 0x1000, off3 | 4 << 16))[0] == OK
        tb.hold_cm = u
        upage3 = bytes(rng.randrange(256) for _ in range(pb))
        put(0x2000, upage3)
        n_log = len(tb.be.log)
        tag_w = await cmd(WRITE, y, u, COMMIT_F, 0x2000, wait=False)
        await _until_taken(tb, n_log, lambda q: q["op"] == 0 and q["rec"] == 1 and q["txid"] == u, 5000)
        tag_c = await cmd(TX_COMMIT, 0, t, wait=False)
        for _ in range(rng.randrange(1500, 2500)):
            await RisingEdge(dut.clk)
        taken = [(q["op"], q["rec"], q["slog"], q["lpn"], q["txid"]) for q in tb.be.log[n_log:]]
        assert (0, 1, 0, y, u) in taken and not any(q[2] for q in taken), \
            f"t's record taken while u's COMMIT mark was in flight, or u's mark not taken: {taken}"
        tb.hold_cm = None
        for q in tb.cpl_q:
            q["held"] = False
        st, _ = await _wait_done(tb, tag_w)
        assert st == OK, f"COMMIT WRITE of u {st:#x}"
        st, res = await _wait_done(tb, tag_c)
        assert st == OK and res == 1, f"TX_COMMIT of t {st:#x} {res}"
        exp3 = bytearray(base)
        exp3[off3:off3 + 4] = diff3
        assert tb.be.committed[x3] == bytes(exp3) and tb.be.committed[y] == upage3
        await _read_back(tb, cmd, ((x3, bytes(exp3)), (y, upage3)))
    assert not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_slog_cpl_by_tag(dut):
    """An S-Log record's completion after later requests' (the write buffer's part of a group
    commit, bench/difftx/README.md "Group commit" step 2: a backend that seals a shared log page
    later gives the record's pages later seqs than the transactions' data pages it took after the
    record, so those complete first). t's record (one fragment of x) is held by the backend model
    while another transaction u, which holds a FRAG slot of x2, writes 2-3 full pages, which the
    buffer writes back behind the record (background write-back runs while a commit is pending),
    and then commits (pending beside t's at PTXQ 2: u's record must not be taken while t's is in
    flight with SLOG_RIF 1; with SLOG_RIF 2 it is taken beside it: README "Records in flight").
    Once u's pages are all queued, t's record is released
    with defer_p 1 for all of u's pages but the last: they complete before it, the last one after it
    (the record's completion taken while a later request is still in out_q). A FLUSH sent after u's
    pages must complete only after the record and u's last page (its target counts them; the pages
    that passed the record do not make up for it). The buffer must take them by their tags: no
    protocol error, t's commit OK (result 1) only after its record, then u's commit OK (its pages and
    its fragment; at PTXQ 2 with room for them, an S-Log record taken after t's completed),
    everything read back. Before, completions were matched in request order: the first page's tag
    against the record's slot counted a protocol error and ended the record's slot instead."""
    rng, tb, cmd, put = await _directed_tb(dut, 7368787)
    pb, pw = tb.pb, tb.pw
    t, u = rng.sample(range(1, NUM_TX + 1), 2)
    x, x2, *ys = rng.sample(range(NUM_LBAS - 1), 2 + rng.randrange(2, 4))
    bases = {}
    for lp in (x, x2):                                           # committed (a RESERVE needs a base)
        bases[lp] = bytes(rng.randrange(256) for _ in range(pb))
        put(0x1000, bases[lp])
        assert (await cmd(WRITE, lp, 0, 0, 0x1000))[0] == OK
    assert (await cmd(FLUSH))[0] == OK
    exp = {}
    for tx, lp in ((t, x), (u, x2)):                             # a FRAG slot each
        off = 4 * rng.randrange(pw - 1)
        diff = bytes(rng.randrange(256) for _ in range(4))
        put(0x1000, diff)
        assert (await cmd(DIFFWRITE, lp, tx, 0, 0x1000, off | 4 << 16))[0] == OK
        e = bytearray(bases[lp])
        e[off:off + 4] = diff
        exp[lp] = bytes(e)
    tb.hold_rec = t
    n_log = len(tb.be.log)
    tag_c = await cmd(TX_COMMIT, 0, t, wait=False)
    assert await _rec_taken(tb, n_log, t), "t's S-Log record not taken"      # (and held)
    upages = {}
    for y in ys:                                                 # u's pages, behind the record
        upages[y] = bytes(rng.randrange(256) for _ in range(pb))
        put(0x2000, upages[y])
        assert (await cmd(WRITE, y, u, 0, 0x2000))[0] == OK
    tag_f = await cmd(FLUSH, wait=False)
    tag_u = await cmd(TX_COMMIT, 0, u, wait=False)
    for _ in range(20000):                                       # ... all written back and ready
        ready = [q for q in tb.cpl_q if q["op"] == 0 and q["txid"] == u and q["t_done"] <= tb.cyc]
        if len(ready) == len(ys):
            break
        await RisingEdge(dut.clk)
    assert len(ready) == len(ys), f"u's pages not written back behind t's record: {len(ready)} of {len(ys)}"
    for _ in range(rng.randrange(500, 1500)):                    # u's commit pending meanwhile
        await RisingEdge(dut.clk)
    assert _is_rec(tb.cpl_q[0]) and tb.cpl_q[0]["txid"] == t, "t's record is not the oldest completion"
    assert not any(d[0] == tag_c for d in tb.done), "t's commit completed before its record"
    u_taken = any(_is_rec(q) and q["txid"] == u for q in tb.be.log[n_log:])
    if tb.rif > 1 and int(dut.PTXQ.value) > 1:   # (README "Records in flight": u's record beside t's)
        assert u_taken, "u's S-Log record not taken while t's was in flight (SLOG_RIF 2)"
    else:
        assert not u_taken, "u's S-Log record taken while t's was in flight"
    assert not any(d[0] == tag_f for d in tb.done), "the FLUSH completed while t's record was held"
    tb.defer_p, tb.defer_left = 1.0, len(ys) - 1
    tb.hold_rec = None
    tb.cpl_q[0]["held"] = False
    st, res = await _wait_done(tb, tag_c)
    assert st == OK and res == 1, f"TX_COMMIT of t {st:#x} {res}"
    st_f, _ = await _wait_done(tb, tag_f)
    assert st_f == OK, f"FLUSH {st_f:#x}"
    rec_i = next(i for i, q in enumerate(tb.cpl_order) if _is_rec(q) and q["txid"] == t)
    upos = [i for i, q in enumerate(tb.cpl_order) if q["op"] == 0 and q["txid"] == u and q["lpn"] in ys]
    order = [(q["op"], q["txid"], q["lpn"]) for q in tb.cpl_order[rec_i - len(ys) + 1:]]
    assert len(upos) == len(ys) and sum(i < rec_i for i in upos) == len(ys) - 1 and max(upos) > rec_i, \
        f"not all of u's pages but the last completed before t's record: {order}"
    assert tb.deferred >= len(ys) - 1
    assert tb.be.committed[x] == exp[x], "t's fragment on x's committed base"
    assert int(dut.cnt_proto_err.value) == 0, "protocol error: a completion matched against the wrong request"
    st, res = await _wait_done(tb, tag_u)
    assert st == OK and res == len(ys) + 1, f"TX_COMMIT of u {st:#x} {res}"
    if int(dut.PTXQ.value) > 1 and int(dut.SLOG_TXFULL.value) >= len(ys):
        assert any(_is_rec(q) and q["txid"] == u for q in tb.be.log[n_log:]), "u's commit sent no S-Log record"
    tb.defer_p, tb.defer_left = 0.0, None
    assert (await cmd(FLUSH))[0] == OK
    await _read_back(tb, cmd, [(x, exp[x]), (x2, exp[x2])] + [(y, upages[y]) for y in ys])
    assert not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_slog_rif(dut):
    """Records in flight together (SLOG_RIF, rtl/wbuf/README.md "Records in flight"; issue 40's
    group commit). t writes a full page of x and a fragment of y; u then takes fragments of x (t's
    full page, not a reservation: u's RESERVE of x is granted) and of z (with 3 FRAG slots or more). t's record is taken and held
    by the backend model, then u commits. With SLOG_RIF 2 and PTXQ 2, u's record must be taken while
    t's is in flight (within 3,000 cycles), and the model's backend rule must hold u's descriptors:
    x's base may be looked up only after t's record, which maps x to t's page, has completed (the
    model counts the wait, `lk_deferred`). Otherwise (SLOG_RIF 1 or PTXQ 1) u's record must not be
    taken while t's is in flight. Then t's record is released: t's commit OK (result 2: x's page, y's
    fragment), u's commit OK (its fragments), x = t's page with u's fragment, y and z their bases with
    the fragments, read back; no protocol error. With the rule off (ATS_SLOG_NORULE=1, the mutant)
    u's fragment lands on x's old base in the SLOG_RIF 2 build and the item fails."""
    rng, tb, cmd, put = await _directed_tb(dut, 6700417)
    pb, pw = tb.pb, tb.pw
    both = tb.rif > 1 and int(dut.PTXQ.value) > 1
    t, u = rng.sample(range(1, NUM_TX + 1), 2)
    x, y, z = rng.sample(range(NUM_LBAS - 1), 3)
    bases = {}
    for lp in (x, y, z):                                         # committed (a RESERVE needs a base)
        bases[lp] = bytes(rng.randrange(256) for _ in range(pb))
        put(0x1000, bases[lp])
        assert (await cmd(WRITE, lp, 0, 0, 0x1000))[0] == OK
    assert (await cmd(FLUSH))[0] == OK
    tpage = bytes(rng.randrange(256) for _ in range(pb))
    put(0x1000, tpage)
    assert (await cmd(WRITE, x, t, 0, 0x1000))[0] == OK           # t's full page of x
    exp = {x: bytearray(tpage), y: bytearray(bases[y]), z: bytearray(bases[z])}
    # fragments: t of y, u of x and (with a third FRAG slot) z; without it z stays its base
    frs = ((t, y), (u, x), (u, z)) if int(dut.FRAG_SLOTS.value) >= 3 else ((t, y), (u, x))
    for tx, lp in frs:
        off = 4 * rng.randrange(pw - 1)
        diff = bytes(rng.randrange(256) for _ in range(4))
        put(0x1000, diff)
        assert (await cmd(DIFFWRITE, lp, tx, 0, 0x1000, off | 4 << 16))[0] == OK
        exp[lp][off:off + 4] = diff
    assert tb.be.resv == {lp: tx for tx, lp in frs}, f"reservations {tb.be.resv}"
    tb.hold_rec = t
    n_log, d0 = len(tb.be.log), tb.be.lk_deferred
    tag_t = await cmd(TX_COMMIT, 0, t, wait=False)
    assert await _rec_taken(tb, n_log, t), "t's S-Log record not taken"      # (and held)
    tag_u = await cmd(TX_COMMIT, 0, u, wait=False)
    u_taken = await _rec_taken(tb, n_log, u, 3000)
    if both:
        assert u_taken, "u's S-Log record not taken while t's was in flight (SLOG_RIF 2)"
        for _ in range(300):
            await RisingEdge(dut.clk)
        if not tb.be.no_rule:
            assert tb.be.lk_deferred == d0 + 1, "u's base lookups did not wait for t's record"
        assert tb.be.beside_rec >= 1
    else:
        assert not u_taken, "u's S-Log record taken while t's was in flight (SLOG_RIF 1 or PTXQ 1)"
    assert not any(d[0] in (tag_t, tag_u) for d in tb.done), "a commit completed before t's record"
    tb.hold_rec = None
    for q in tb.cpl_q:
        q["held"] = False
    st, res = await _wait_done(tb, tag_t)
    assert st == OK and res == 2, f"TX_COMMIT of t {st:#x} {res}"
    st, res = await _wait_done(tb, tag_u)
    assert st == OK and res == len(frs) - 1, f"TX_COMMIT of u {st:#x} {res}"
    for lp in (x, y, z):
        assert tb.be.committed[lp] == bytes(exp[lp]), f"lpn {lp}: committed page (x {x}, y {y}, z {z})"
    assert (await cmd(FLUSH))[0] == OK
    await _read_back(tb, cmd, [(lp, bytes(exp[lp])) for lp in (x, y, z)])
    assert not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_slog_rif_limit(dut):
    """The limit of records in flight (`rif_n_q` < SLOG_RIF in `slog_go_q`, README "Records in
    flight"): transactions t, u, v each take one fragment (distinct LPNs, no full pages: no base
    waits) and commit one after another without waiting, t's record held by the backend model.
    Records taken while t's is held: at most min(SLOG_RIF, PTXQ) (the pending commits bound them
    too), exactly that many within 3,000 cycles; in the build with PTXQ 4 and SLOG_RIF 2, v's
    record waits for the limit alone. Then t's record is released: the three commits OK (1 each), in
    order, the fragments on their bases, read back, no protocol error."""
    rng, tb, cmd, put = await _directed_tb(dut, 4256249)
    pb, pw = tb.pb, tb.pw
    if int(dut.FRAG_SLOTS.value) < 3:                            # (three FRAG slots needed: the
        dut._log.info("run_slog_rif_limit: not in this build (FRAG_SLOTS < 3)")   # other builds run it)
        return
    lim = min(tb.rif, int(dut.PTXQ.value), 3)
    t, u, v = rng.sample(range(1, NUM_TX + 1), 3)
    lps = rng.sample(range(NUM_LBAS - 1), 3)
    exp = {}
    for lp in lps:
        base = bytes(rng.randrange(256) for _ in range(pb))
        put(0x1000, base)
        assert (await cmd(WRITE, lp, 0, 0, 0x1000))[0] == OK
        exp[lp] = bytearray(base)
    assert (await cmd(FLUSH))[0] == OK
    for tx, lp in zip((t, u, v), lps):
        off = 4 * rng.randrange(pw - 1)
        diff = bytes(rng.randrange(256) for _ in range(4))
        put(0x1000, diff)
        assert (await cmd(DIFFWRITE, lp, tx, 0, 0x1000, off | 4 << 16))[0] == OK
        exp[lp][off:off + 4] = diff
    tb.hold_rec = t
    n_log = len(tb.be.log)
    tags = []
    for tx in (t, u, v):
        tags.append(await cmd(TX_COMMIT, 0, tx, wait=False))

    def taken():
        return [q["txid"] for q in tb.be.log[n_log:] if _is_rec(q)]
    most = 0
    for _ in range(3000):
        most = max(most, sum(1 for q in tb.inflight if _is_rec(q)))
        await RisingEdge(dut.clk)
    assert most == lim and taken() == [t, u, v][:lim], \
        f"records taken while t's is held: {taken()} (at most {most} in flight), expected {lim}"
    assert not any(d[0] in tags for d in tb.done), "a commit completed while t's record was held"
    tb.hold_rec = None
    for q in tb.cpl_q:
        q["held"] = False
    for tag in tags:
        st, res = await _wait_done(tb, tag)
        assert st == OK and res == 1, f"TX_COMMIT tag {tag}: {st:#x} {res}"
    assert taken() == [t, u, v]
    for lp in lps:
        assert tb.be.committed[lp] == bytes(exp[lp]), f"lpn {lp}: committed page"
    assert (await cmd(FLUSH))[0] == OK
    await _read_back(tb, cmd, [(lp, bytes(exp[lp])) for lp in lps])
    assert not tb.be.resv and not tb.be.errors, tb.be.errors
    assert int(dut.cnt_proto_err.value) == 0


@cocotb.test()
async def run_slog_cpl_rule_broken(dut):
    """The write buffer's check of the rule a backend must keep (README "A record's completion, by
    its tag"): only transactions' data pages taken directly after an S-Log record may complete
    before it. A model that lets a plain page written back behind t's held record complete first
    must count one protocol error (`cnt_proto_err`), and only one: the record's own completion
    after it is not one (nothing issued before the record is outstanding then). The last item of
    its build (the buffer goes on, but a wrong order is not a state it promises anything for)."""
    rng, tb, cmd, put = await _directed_tb(dut, 2750159)
    pb, pw = tb.pb, tb.pw
    t = rng.randrange(1, NUM_TX + 1)
    x, z = rng.sample(range(NUM_LBAS - 1), 2)
    put(0x1000, bytes(rng.randrange(256) for _ in range(pb)))
    assert (await cmd(WRITE, x, 0, 0, 0x1000))[0] == OK
    assert (await cmd(FLUSH))[0] == OK
    put(0x1000, bytes(4))
    assert (await cmd(DIFFWRITE, x, t, 0, 0x1000, 4 << 16))[0] == OK
    tb.hold_rec = t
    n_log = len(tb.be.log)
    tag_c = await cmd(TX_COMMIT, 0, t, wait=False)
    assert await _rec_taken(tb, n_log, t), "t's S-Log record not taken"
    put(0x2000, bytes(rng.randrange(256) for _ in range(pb)))
    assert (await cmd(WRITE, z, 0, 0, 0x2000))[0] == OK         # a plain page, behind the record
    for _ in range(20000):
        if any(q["op"] == 0 and q["txid"] == 0 and q["lpn"] == z and q["t_done"] <= tb.cyc for q in tb.cpl_q):
            break
        await RisingEdge(dut.clk)
    assert int(dut.cnt_proto_err.value) == 0
    tb.defer_p, tb.defer_any = 1.0, True
    tb.hold_rec = None
    tb.cpl_q[0]["held"] = False
    st, _ = await _wait_done(tb, tag_c)
    for _ in range(50):
        await RisingEdge(dut.clk)
    assert tb.deferred == 1, f"the plain page did not pass the record ({tb.deferred})"
    assert int(dut.cnt_proto_err.value) == 1, f"cnt_proto_err {int(dut.cnt_proto_err.value)}, expected 1"


@pytest.mark.parametrize("frag_slots,txfrags,txfull,ptxq,rif", [
    pytest.param(2, 64, 3, 1, 1, id="2-64-3-1"), pytest.param(4, 2, 1, 1, 1, id="4-2-1-1"),
    pytest.param(4, 64, 3, 2, 1, id="4-64-3-2"), pytest.param(4, 64, 3, 2, 2, id="4-64-3-2-r2"),
    pytest.param(4, 64, 3, 4, 2, id="4-64-3-4-r2")])
def test_ats_wbuf_slog(frag_slots, txfrags, txfull, ptxq, rif):
    params = {"NUM_SLOTS": 8, "PAGE_BYTES": 64, "NUM_LBAS": NUM_LBAS, "THRESH_PCT": 90,
              "NUM_WAITERS": 4, "MISS_Q": 4, "TX": 1, "NUM_TX": NUM_TX, "PTXQ": ptxq,
              "FRAG_SLOTS": frag_slots, "SLOG_TXFRAGS": txfrags, "SLOG_TXFULL": txfull, "SLOG_RIF": rif}
    run(toplevel="ats_wbuf",
        sources=block_sources("ats_wbuf", "ats_stream_check") + [HERE / "ats_wbuf_bind.sv"],
        test_module="test_ats_wbuf_slog", test_dir=HERE,
        build_key=f"slog_f{frag_slots}_x{txfrags}_u{txfull}" + (f"_p{ptxq}" if ptxq != 1 else "") + (f"_r{rif}" if rif != 1 else ""),
        parameters=params, public={})
