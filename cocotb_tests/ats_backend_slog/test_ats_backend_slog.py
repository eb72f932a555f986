"""cocotb tests of ats_backend_slog (the S-Log index and record assembler, rtl/backend/README_slog.md)
against `SlogRef` (slog_unit_ref.py: plain Python from the README and docs/persistence.md §10, not from
the RTL).

`slog_random` (serial mode): the README's latencies measured first (no idle, no backpressure),
then a random workload of index commands (RESERVE, UNRESERVE, LOOKUP, RELEASE, APPLY, DISCARD) and
records (full pages and fragments of one transaction, their words) with random idle on every source
and random backpressure on every sink, one stream at a time except index commands while a record's
pages stream out. `slog_concurrent`: s_ix, s_rd, s_lg and s_cf offered at once at random times
(TB.run_concurrent), the reference fed in the order the unit took them. Every answer beat, every
record status and every log page byte is compared with the reference, and every OK record's pages
are read back by the recovery's reader (atstb.slog_ref); LOOKUP of every LPN the reference knows
ends each run. Bad input: txid 0 / above NUM_TX, a full set, an LPN at SLOG_FRAGS, another tx's
reservation, a fragment without reservation, too many fragments or full pages, bad off/len, a txid
change inside a record, APPLY / DISCARD without a held record.

Environment: ATS_SEED, ATS_LONG=1 (4x the steps, and the default-configuration item),
ATS_SLOG_STEPS (the steps, directly), ATS_SLOG_SRC (another copy of ats_backend_slog.sv, for
mutation checks), ATS_SLOG_TEST (run only this cocotb test: slog_random or slog_concurrent). Testpoints: rtl/backend/testplan_slog.md.
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
from cocotb.triggers import ClockCycles, Event, NextTimeStep, ReadOnly, RisingEdge, with_timeout

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
sys.path.insert(0, str(Path(__file__).resolve().parent))
from atstb.runner import block_sources, run
from atstb.slog_ref import CFlag, MetaPU, find_records, log_page, parse_record
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen
from slog_unit_ref import BAD_FIELD, BAD_TXID, OK, TX_EMPTY, TX_FULL, SlogRef

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
STEPS = int(os.environ.get("ATS_SLOG_STEPS", "0")) or 1500 * (4 if LONG else 1)
OP_RESERVE, OP_UNRESERVE, OP_LOOKUP, OP_RELEASE, OP_APPLY, OP_DISCARD = range(6)
OP_READ = 7
# the README's latencies (section "Timing"), cycles from a command's acceptance to its answer beat
# being taken with no backpressure
LAT_CMD, LAT_LOOKUP_FIRST, LAT_LOOKUP_NEXT = 6, 7, 2

IX_F = ["op", "txid", "lpn", "n", "lpgn", "pofs", "off", "len"]
IXA_F = ["sts", "cnt", "lpgn", "pofs", "off", "len", "last"]
RD_F = ["txid", "full", "lpn", "ppn", "off", "len", "last"]
RS_F = ["sts", "txid", "lpgn", "reclen"]
LP_F = ["data", "last", "lpgn", "end", "nend"]


class TB:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        g = lambda n: int(getattr(dut, n).value)
        self.pb, self.num_tx = g("PAGE_BYTES"), g("NUM_TX")
        self.lpns, self.ways, self.frags = g("SLOG_LPNS"), g("SLOG_WAYS"), g("SLOG_FRAGS")
        self.txfrags, self.txfull, self.recs = g("SLOG_TXFRAGS"), g("SLOG_TXFULL"), g("SLOG_RECS")
        self.pack = bool(g("SLOG_PACK"))
        self.m = self.new_ref()
        self.dropped: set[int] = set()          # pack: held records whose verdict was drop
        self.batch_pages: list[dict] = []       # pack: pages sent since the last page no record continues past
        self.go_recs: deque = deque()           # pack: go records not yet ended in a sent page
        self.batch_recs: list = []              # ... ended in the batch's pages
        self.cov: Counter = Counter()
        p = lambda: pause_gen(rng, True, 0.3)
        self.ix = StreamSource(dut, "s_ix", dut.clk, IX_F, p())
        self.ixa = StreamSink(dut, "m_ix", dut.clk, IXA_F, p())
        self.rd = StreamSource(dut, "s_rd", dut.clk, RD_F, p())
        self.rs = StreamSink(dut, "m_rs", dut.clk, RS_F, p())
        self.rw = StreamSource(dut, "s_rw", dut.clk, ["data"], p())
        self.lp = StreamSink(dut, "m_lp", dut.clk, LP_F, pause_gen(rng, "heavy" if rng.random() < 0.3 else True, 0.3, 20))
        self.lg = StreamSource(dut, "s_lg", dut.clk, ["lpgn"], p())
        self.go = StreamSource(dut, "s_go", dut.clk, ["drop"], p())
        self.seal = StreamSource(dut, "s_seal", dut.clk, [], p())
        sets = self.lpns // self.ways
        # LPNs crowding a few sets (full sets), with random high bits
        self.pool = [rng.getrandbits(20) * sets + rng.randrange(min(sets, 3)) for _ in range(self.lpns // 2 + 4)]
        self.pool += [rng.getrandbits(32) for _ in range(self.lpns // 2)]

    def new_ref(self) -> SlogRef:
        return SlogRef(self.pb, self.num_tx, self.lpns, self.ways, self.frags, self.txfrags, self.txfull, self.recs,
                       self.pack)

    async def check_quiet(self, what: str) -> None:
        """At a quiet point (nothing offered, the last record's verdict and words taken): the `lpgn`
        output and `pg_open` against the reference, after a page's words of idle cycles (a drop's
        counter goes back after its last discarded word; a record's last words need no input)."""
        # (the last words of a record without data words after its last page sent: at most a page)
        await ClockCycles(self.dut.clk, self.pb // 4 + 8)
        self.check(f"lpgn output ({what})", int(self.dut.lpgn.value), self.m.lpgn)
        self.check(f"pg_open ({what})", int(self.dut.pg_open.value), int(self.m.open is not None))
        self.cov["quiet_checked"] += 1

    async def check_no_output(self) -> None:
        """At the end: no beat left on any output stream (a page, an answer or a status too many)."""
        await ClockCycles(self.dut.clk, 50)
        for name, sink in (("m_lp", self.lp), ("m_ix", self.ixa), ("m_rs", self.rs)):
            assert not sink.queue and not int(getattr(self.dut, f"{name}_valid").value), \
                f"{name}: output left at the end: {list(sink.queue)[:2]}"

    def held_order(self, t: int) -> None:
        """Coverage: an APPLY / DISCARD of a held record that is not the oldest held."""
        if t in self.m.held and next(iter(self.m.held)) != t:
            self.cov["end_not_oldest"] += 1

    async def reset(self) -> None:
        d = self.dut
        d.s_cf_valid.value = 0
        d.rst.value = 1
        # (README_slog: s_lg, s_go, s_seal are refused while rst is high; a seal offered here, none
        # open, would change nothing, so a ready seen is the failure)
        d.s_seal_valid.value = 1
        for _ in range(3):
            await RisingEdge(d.clk)
            await ReadOnly()
            got = (int(d.s_lg_ready.value), int(d.s_go_ready.value), int(d.s_seal_ready.value))
            assert got == (0, 0, 0), f"s_lg / s_go / s_seal ready while rst is high: {got}"
            await NextTimeStep()
        d.s_seal_valid.value = 0
        d.rst.value = 0
        await RisingEdge(d.clk)
        self.cov["rst_refusals"] += 1

    # ---- index commands
    async def ix_cmd(self, op: int, txid: int = 0, lpn: int = 0, n: int = 0, **fr) -> list[dict]:
        self.ix.send_nowait(op=op, txid=txid, lpn=lpn, n=n, **fr)
        beats = []
        while True:
            b = await self.ixa.recv()
            beats.append(b)
            if b["last"]:
                return beats

    def check(self, what: str, got, want) -> None:
        assert got == want, f"{what}: got {got}, reference {want}"

    def rand_txid(self) -> int:
        r = self.rng.random()
        return 0 if r < 0.03 else self.num_tx + 1 + self.rng.randrange(3) if r < 0.06 else self.rng.randint(1, self.num_tx)

    async def do_reserve(self, t=None, lpn=None) -> None:
        t = self.rand_txid() if t is None else t
        lpn = self.rng.choice(self.pool) if lpn is None else lpn
        (b,) = await self.ix_cmd(0, t, lpn)
        sts, cnt = self.m.reserve(t, lpn)
        self.check(f"RESERVE t{t} {lpn:#x}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"reserve_{sts}"] += 1

    async def do_unreserve(self) -> None:
        t = self.rand_txid()
        lpn = self.rng.choice(self.pool)
        held = [e for s in self.m.idx.values() for e in s if e["rsv"]]
        if held and self.rng.random() < 0.5:             # a reservation's owner (an abort)
            e = self.rng.choice(held)
            t, lpn = e["owner"], e["lpn"]
        (b,) = await self.ix_cmd(1, t, lpn)
        sts = self.m.unreserve(t, lpn)
        self.check(f"UNRESERVE t{t} {lpn:#x}", b["sts"], sts)
        self.cov[f"unreserve_{sts}"] += 1

    async def do_lookup(self, lpn=None) -> None:
        lpn = self.rng.choice(self.pool) if lpn is None else lpn
        beats = await self.ix_cmd(2, 0, lpn)
        want = self.m.lookup(lpn)
        if not want:
            self.check(f"LOOKUP {lpn:#x}", [(b["sts"], b["cnt"]) for b in beats], [(OK, 0)])
        else:
            got = [(b["sts"], b["cnt"], b["lpgn"], b["pofs"], b["off"], b["len"]) for b in beats]
            self.check(f"LOOKUP {lpn:#x}", got, [(OK, len(want)) + f for f in want])
        self.cov[f"lookup_k{len(want)}"] += 1

    async def do_release(self) -> None:
        lpn = self.rng.choice(self.pool)
        n = self.rng.choice([1, 1, 2, self.frags, 255])
        (b,) = await self.ix_cmd(3, 0, lpn, n)
        sts, cnt = self.m.release(lpn, n)
        self.check(f"RELEASE {lpn:#x} {n}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"release_{sts}_{cnt > 0}"] += 1

    async def do_apply(self, t=None) -> None:
        t = self.rand_txid() if t is None else t
        (b,) = await self.ix_cmd(OP_APPLY, t)
        self.held_order(t)
        sts, cnt = self.m.apply(t)
        self.check(f"APPLY t{t}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"apply_{sts}"] += 1

    async def do_discard(self, t=None) -> None:
        t = self.rand_txid() if t is None else t
        (b,) = await self.ix_cmd(OP_DISCARD, t)
        self.held_order(t)
        sts, cnt = self.m.discard(t)
        self.dropped.discard(t)
        self.check(f"DISCARD t{t}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"discard_{sts}"] += 1
        self.cov[f"discard_{sts}_frags{min(cnt, 1)}"] += 1

    async def do_insert(self) -> None:
        # INSERT (op 6, the firmware's recovery load): a fragment {lpgn, pofs, off, len}, 20 % with a
        # bad field; then the LPN looked up
        r = self.rng
        P = self.pb - 16
        ln = 4 * r.randint(1, P // 4)
        off, pofs = 4 * r.randrange((self.pb - ln) // 4 + 1), 16 + 4 * r.randrange((P - ln) // 4 + 1)
        if r.random() < 0.2:
            ln, off, pofs = r.choice([(0, off, pofs), (ln + 2, off, pofs), (ln, off, 8), (ln, self.pb - ln + 4, pofs),
                                      (ln, off, self.pb - ln + 4)])
        lpn, lg = r.choice(self.pool), r.getrandbits(32)
        (b,) = await self.ix_cmd(6, 0, lpn, 0, lpgn=lg, pofs=pofs, off=off, len=ln)
        sts, cnt = self.m.insert(lpn, lg, pofs, off, ln)
        self.check(f"INSERT {lpn:#x} {(lg, pofs, off, ln)}", (b["sts"], b["cnt"] if b["sts"] == OK else 0), (sts, cnt))
        self.cov[f"insert_{sts}"] += 1
        await self.do_lookup(lpn)

    async def do_badop(self) -> None:
        op = 6                              # (op 6 INSERT with its fragment fields 0: BAD_FIELD)
        (b,) = await self.ix_cmd(op, self.rand_txid(), self.rng.choice(self.pool), self.rng.getrandbits(8))
        self.check(f"op {op}", (b["sts"], b["cnt"]), (BAD_FIELD, 0))
        self.cov["bad_op"] += 1

    def rand_slot(self) -> tuple[int, int]:
        """A READ's (slot, n): slots past the index now and then, n the entry, a fragment that may
        not exist, or any byte."""
        r = self.rng
        slot = r.randrange(self.lpns + 3) if r.random() < 0.2 else r.randrange(self.lpns)
        n = r.choice([255, 255, 0, 1, self.frags - 1, self.frags, r.getrandbits(8)])
        return slot, n

    async def do_read(self, slot: int, n: int) -> None:
        (b,) = await self.ix_cmd(OP_READ, 0, slot, n)
        got = (b["sts"], b["cnt"], b["lpgn"], b["pofs"], b["off"], b["len"])
        self.check(f"READ {slot} {n}", got, self.m.read(slot, n))
        self.cov[f"read_{'e' if n == 255 else 'f'}_{got[0]}"] += 1

    async def dump(self) -> None:
        """Every slot's entry and every fragment it has, against the reference."""
        for slot in range(self.lpns):
            await self.do_read(slot, 255)
            k = self.m.read(slot, 255)[1]
            for j in range(k):
                await self.do_read(slot, j)
            await self.do_read(slot, k)                   # one past |F|: BAD_FIELD
        for slot in (self.lpns, self.lpns + 1, 0xFFFFFFFF):  # past the index: BAD_FIELD
            await self.do_read(slot, 255)
            await self.do_read(slot, 0)

    async def push_cf(self) -> None:
        d, r = self.dut, self.rng
        t, rl, lg = r.randint(1, self.num_tx), r.randint(1, 255), r.getrandbits(32)
        d.s_cf_txid.value, d.s_cf_reclen.value, d.s_cf_lpgn.value = t, rl, lg
        d.s_cf_valid.value = 1
        await RisingEdge(d.clk)
        d.s_cf_valid.value = 0
        self.m.push_cf(t, rl, lg)
        self.cov["cf"] += 1

    async def set_lpgn(self) -> None:
        while self.m.held:                 # (s_lg is taken only while no record is held, no page open)
            await self.end_held()
        await self.do_seal()
        v = self.rng.choice([self.rng.getrandbits(32), 0xFFFFFFFF - self.rng.randrange(3)])
        self.lg.send_nowait(lpgn=v)
        await self.lg.wait_idle()
        self.m.lpgn = v
        self.cov["lpgn_set"] += 1

    # ---- records
    def make_record(self, t: int | None = None) -> list[dict]:
        r = self.rng
        t = r.randint(1, self.num_tx) if t is None else t
        mine = [e["lpn"] for s in self.m.idx.values() for e in s if e["rsv"] and e["owner"] == t]
        descs = []
        for _ in range(r.choice([0, 0, 1, 2, self.txfull + (1 if r.random() < 0.1 else 0)])):
            descs.append(dict(txid=t, full=1, lpn=r.getrandbits(32), ppn=r.getrandbits(32)))
        lp = list(mine)
        if r.random() < 0.1:
            lp.append(r.choice(self.pool))              # maybe not reserved by t
        r.shuffle(lp)
        nfr = 0
        for lpn in lp[: r.randint(0, len(lp))]:
            for _ in range(r.choice([1, 1, 1, 2, self.frags + 1])):
                if nfr >= self.txfrags + (1 if r.random() < 0.1 else 0):
                    break
                P = self.pb - 16
                ln = 4 * r.randint(1, P // 4) if r.random() < 0.3 else 4 * r.randint(1, min(8, P // 4))
                off = 4 * r.randint(0, (self.pb - ln) // 4)
                if r.random() < 0.03:
                    ln, off = r.choice([(0, 0), (ln + 2, off), (ln, off + 1), (P + 4, 0), (ln, self.pb - ln + 4)])
                    ln, off = ln & 0xFFF, off & 0xFFF
                descs.append(dict(txid=t, full=0, lpn=lpn, ppn=r.getrandbits(32), off=off, len=ln,
                                  data=bytes(r.getrandbits(8) for _ in range(ln // 4 * 4))))
                nfr += 1
        if not descs:
            descs.append(dict(txid=t, full=1, lpn=r.getrandbits(32), ppn=r.getrandbits(32)))
        # fulls and fragments interleaved (the META-PUs: fulls first); an LPN's fragments in order
        fulls = [dd for dd in descs if dd["full"]]
        frs = [dd for dd in descs if not dd["full"]]
        descs = []
        while fulls or frs:
            src = fulls if (fulls and (not frs or r.random() < 0.4)) else frs
            descs.append(src.pop(0))
        if r.random() < 0.03:
            descs[0]["txid"] = r.choice([0, self.num_tx + 1, 255])
        if r.random() < 0.03 and len(descs) > 1:
            descs[-1]["txid"] = (descs[0]["txid"] % self.num_tx) + 1
        return descs

    async def end_held(self, t: int | None = None) -> None:
        """A held record (the given one, else a random one) ends in APPLY or DISCARD."""
        t = self.rng.choice(list(self.m.held)) if t is None else t
        if self.pack:
            # a dropped record ends by DISCARD, a written one by APPLY; the other one first now and
            # then (BAD_FIELD, nothing changed)
            right, wrong = (self.do_discard, self.do_apply) if t in self.dropped else (self.do_apply, self.do_discard)
            if self.rng.random() < 0.1:
                await wrong(t)
            await right(t)
            return
        await (self.do_discard if self.rng.random() < 0.25 or t in self.dropped else self.do_apply)(t)

    async def do_record(self, descs: list[dict] | None = None) -> None:
        # every slot held: one ends first (the unit would not take the descriptors)
        while not self.m.can_take():
            await self.end_held()
        descs = self.make_record() if descs is None else descs
        for i, dd in enumerate(descs):
            self.rd.send_nowait(txid=dd["txid"], full=dd["full"], lpn=dd["lpn"], ppn=dd["ppn"],
                                off=dd.get("off", 0), len=dd.get("len", 0), last=int(i == len(descs) - 1))
        want = self.m.record([dict(dd, off=dd.get("off", 0), len=dd.get("len", 0)) for dd in descs])
        b = await with_timeout(self.rs.recv(), 4, "ms")        # (a wedged unit fails, not hangs)
        if want["sts"] != OK:
            self.check("record status", (b["sts"], b["txid"]), (want["sts"], want["txid"]))
            self.cov[f"record_{want['sts']}"] += 1
            return
        self.check("record status", (b["sts"], b["txid"], b["lpgn"], b["reclen"]),
                   (OK, want["txid"], want["lpgn"], want["reclen"]))
        self.cov["record_ok"] += 1
        self.cov[f"record_pages{min(want['reclen'], 4)}"] += 1
        self.cov[f"record_ncf{min(want['ncf'], 8)}"] += 1
        self.cov[f"record_ok_held{min(len(self.m.held), 3)}"] += 1    # (itself included)
        if len(want["frs"]) == self.txfrags:
            self.cov["record_txfrags_max"] += 1
        if self.pack and self.rng.random() < 0.1:
            await self.emit(want, descs, drop=True)           # its words taken and discarded
            await self.check_quiet("a drop")
            if self.rng.random() < 0.3:
                await self.do_apply(want["txid"])              # a dropped record: BAD_FIELD
            if self.rng.random() < 0.5:
                await self.do_discard(want["txid"])
            return
        # index commands while the pages stream out (they never change the record)
        collector = cocotb.start_soon(self.emit(want, descs))
        for _ in range(self.rng.randint(0, 4)):
            await self.rng.choice([self.do_reserve, self.do_lookup, self.do_release, self.do_unreserve])()
        # the record ends in APPLY (its commit completed) or DISCARD (it became an abort); with
        # several slots it may stay held, ended by a later record's need or at random (any order)
        end = self.do_discard if self.rng.random() < 0.25 and not self.pack else self.do_apply
        if self.pack and self.rng.random() < 0.1:
            await self.do_discard(want["txid"])                # a written record: BAD_FIELD
        if self.pack and self.rng.random() < 0.2:
            await collector
            await self.do_seal()                               # the record's page closed at once
        if self.recs > 1 and self.rng.random() < 0.6:
            await collector
            await self.check_quiet("a record held")
            for _ in range(self.rng.choice([0, 0, 1])):
                await self.end_held()
            return
        if self.rng.random() < 0.5:
            await end(want["txid"])                     # may wait for the last page (it stalls)
            await collector
        else:
            await collector
            if self.rng.random() < 0.2:
                await end(want["txid"] % self.num_tx + 1)   # a wrong txid: TX_EMPTY
            await end(want["txid"])
        if end == self.do_discard and not self.m.held and not self.pack and self.rng.random() < 0.5:
            # the integration's rule (README "Integration"): the counter loaded back to the record's
            # first LPGN, the discarded pages being dropped
            self.lg.send_nowait(lpgn=want["lpgn"])
            await self.lg.wait_idle()
            self.m.lpgn = want["lpgn"]
            self.cov["lpgn_back"] += 1

    def send_words(self, descs: list[dict]) -> None:
        for dd in descs:
            if not dd["full"]:
                for k in range(0, len(dd["data"]), 4):
                    self.rw.send_nowait(data=int.from_bytes(dd["data"][k:k + 4], "little"))

    async def emit(self, want: dict, descs: list[dict], drop: bool = False) -> None:
        """An OK record's words (pack: after its verdict on s_go) and the pages that go out."""
        if not self.pack:
            self.send_words(descs)
            await self.collect_pages(want, descs)
            return
        self.go.send_nowait(drop=int(drop))
        self.send_words(descs)
        if drop:
            self.m.drop()
            self.dropped.add(want["txid"])
            self.cov["pack_drop"] += 1
            await self.go.wait_idle()                  # (a record without fragments: no words)
            await self.rw.wait_idle()
            return
        self.go_recs.append((want, descs))
        self.cov[f"pack_start_{'open' if want['start'][1] > 16 else 'new'}"] += 1
        await self.collect_flushed(self.m.go())
        await self.go.wait_idle()
        await self.rw.wait_idle()

    async def do_seal(self) -> None:
        if not self.pack:
            return
        self.seal.send_nowait()
        pages = self.m.seal()
        self.cov[f"pack_seal_{len(pages)}"] += 1
        await self.collect_flushed(pages)
        await self.seal.wait_idle()
        await self.check_quiet("a seal")

    async def recv_page(self, want: dict, j: int = 0) -> bytes:
        """One page on m_lp against want {data, lpgn, nend}: every word's flags and every byte."""
        words_pp = self.pb // 4
        got = bytearray()
        for w in range(words_pp):
            b = await self.lp.recv()
            got += b["data"].to_bytes(4, "little")
            self.check(f"page LPGN {want['lpgn']:#x} word {w} last/lpgn/end/nend", (b["last"], b["lpgn"], b["end"], b["nend"]),
                       (int(w == words_pp - 1), want["lpgn"], int(want["nend"] > 0), want["nend"]))
        page = want["data"]
        if bytes(got) != page:
            diff = next(i for i in range(len(page)) if got[i] != page[i])
            raise AssertionError(f"log page {j} (LPGN {want['lpgn']:#x}) differs first at byte {diff}: "
                                 f"got {bytes(got[diff:diff + 16]).hex()}, reference {page[diff:diff + 16].hex()}")
        return bytes(got)

    async def collect_flushed(self, pages: list[dict]) -> None:
        """pack: the pages the reference sent, in order; at a page that no record continues past
        the batch since the previous one (its records: those written in order, `nend` a page) is
        read back by the recovery's reader."""
        for p in pages:
            await self.recv_page(p)
            self.batch_pages.append(p)
            self.cov[f"pack_page_nend{min(p['nend'], 3)}"] += 1
            for _ in range(p["nend"]):
                self.batch_recs.append(self.go_recs.popleft())
            if not p["cont"]:          # no record continues past it: the batch is whole
                self.decode_batch()

    def decode_batch(self) -> None:
        """The batch's pages read back by the recovery's reader (atstb.slog_ref, persistence §10):
        every record that ended in them found, none bad or partial, each as its descriptors gave it."""
        pages, recs = self.batch_pages, self.batch_recs
        self.batch_pages, self.batch_recs = [], []
        if not pages:
            return
        lg0 = pages[0]["lpgn"]
        scanned = {}
        for i, p in enumerate(pages):
            lp = log_page(p["data"], seq=100 + i, ppn=1000 + i, epoch=(lg0 + i) & 0xFFFFFFFF, page_bytes=self.pb)
            assert lp is not None, f"log page LPGN {p['lpgn']:#x} not a well-formed log page"
            scanned[lg0 + i] = lp
        found, bad, partial = find_records(scanned, self.pb)
        assert (len(found), bad, partial) == (len(recs), 0, 0), \
            f"find_records over {len(pages)} pages: {len(found)} records, {bad} bad, {partial} partial; want {len(recs)}"
        # where the reader found them (each page's `first`, each record's end) = where the reference
        # put them (its open page's `used` at each record)
        self.check("records found at", sorted((r.first_lpgn, r.first_byte) for r in found),
                   sorted((lg0 + ((w["start"][0] - lg0) & 0xFFFFFFFF), w["start"][1]) for w, _ in recs))
        for want, descs in recs:
            lg, b = want["start"]
            self.decode_one(want, descs, scanned, lg0 + ((lg - lg0) & 0xFFFFFFFF), b, [p["data"] for p in pages])
        self.cov["pack_batch"] += 1
        self.cov[f"pack_batch_recs{min(len(recs), 3)}"] += 1

    async def collect_pages(self, want: dict, descs: list[dict]) -> None:
        words_pp = self.pb // 4
        pages = []
        for j, page in enumerate(want["pages"]):
            got = bytearray()
            for w in range(words_pp):
                b = await self.lp.recv()
                got += b["data"].to_bytes(4, "little")
                self.check(f"page {j} word {w} last/lpgn/end/nend", (b["last"], b["lpgn"], b["end"], b["nend"]),
                           (int(w == words_pp - 1), (want["lpgn"] + j) & 0xFFFFFFFF, int(j == want["reclen"] - 1),
                            int(j == want["reclen"] - 1)))
            if bytes(got) != page:
                diff = next(i for i in range(len(page)) if got[i] != page[i])
                raise AssertionError(f"log page {j} (LPGN {want['lpgn'] + j:#x}) differs first at byte {diff}: "
                                     f"got {bytes(got[diff:diff + 16]).hex()}, reference {page[diff:diff + 16].hex()}")
            pages.append(bytes(got))
        self.decode(want, descs, pages)

    def decode(self, want: dict, descs: list[dict], pages: list[bytes]) -> None:
        """The pages read back by the recovery's reader (atstb.slog_ref, written from persistence
        §10): one complete record, its header, flags, META-PUs (full pages first) and fragment data
        as the descriptors gave them. Keys: LPGNs without the 2^32 wrap (the reader adds)."""
        lg0 = want["lpgn"]
        scanned = {}
        for j, data in enumerate(pages):
            lp = log_page(data, seq=100 + j, ppn=1000 + j, epoch=(lg0 + j) & 0xFFFFFFFF, page_bytes=self.pb)
            assert lp is not None, f"log page {j} of LPGN {lg0 + j:#x} not a well-formed log page"
            scanned[lg0 + j] = lp
        recs, bad, partial = find_records(scanned, self.pb)
        assert (len(recs), bad, partial) == (1, 0, 0), f"find_records: {len(recs)} records, {bad} bad, {partial} partial"
        self.decode_one(want, descs, scanned, lg0, 16, pages)

    def decode_one(self, want: dict, descs: list[dict], scanned: dict, lg0: int, b: int, pages: list[bytes]) -> None:
        """One record parsed at (lg0, b) of the scanned pages (page i: ppn 1000 + i)."""
        r, why = parse_record(scanned, lg0, b, self.pb)
        assert r is not None, f"parse_record: {why}"
        fulls = [d for d in descs if d["full"]]
        frs = [d for d in descs if not d["full"]]
        self.check("decoded txid/reclen/first", (r.txid, r.reclen, r.first_lpgn, r.first_byte),
                   (want["txid"], want["reclen"], lg0, b))
        self.check("decoded flags", r.cflags, [CFlag(t, rl, lg) for (t, rl, lg) in want["cf"]])
        self.check("decoded full META-PUs", r.metas[:len(fulls)], [MetaPU(d["lpn"], d["ppn"]) for d in fulls])
        got_fr = [(m.lpn, m.ppn, m.is_diff, m.off, m.len, m.ver) for m in r.metas[len(fulls):]]
        self.check("decoded fragment META-PUs", got_fr, [(d["lpn"], d["ppn"], True, d["off"], d["len"], d["ver"]) for d in want["frs"]])
        for i, d in enumerate(frs):
            ppn, o = r.frag_at[len(fulls) + i]
            data = pages[ppn - 1000][o:o + d["len"]]
            self.check(f"decoded fragment {i} data", data.hex(), d["data"].hex())
        self.cov["decoded"] += 1

    async def do_max_record(self) -> None:
        """A record of exactly SLOG_TXFRAGS fragments (directed, when the random ones had none):
        new LPNs reserved by a txid without a held record until they have room for them."""
        while not self.m.can_take():
            await self.end_held()
        t = next(x for x in range(1, self.num_tx + 1) if x not in self.m.held)
        room: dict[int, int] = {}
        for _ in range(400):
            if sum(room.values()) >= self.txfrags:
                break
            lpn = self.rng.getrandbits(32)
            await self.do_reserve(t, lpn)
            e = self.m.entry(lpn)
            if e is not None and e["rsv"] and e["owner"] == t:
                room[lpn] = self.frags - len(e["F"]) - e["pend"]
        descs = []
        for lpn, k in room.items():
            for _ in range(min(k, self.txfrags - len(descs))):
                ln = 4 * self.rng.randint(1, min(8, (self.pb - 16) // 4))
                descs.append(dict(txid=t, full=0, lpn=lpn, ppn=self.rng.getrandbits(32), off=0, len=ln,
                                  data=bytes(self.rng.getrandbits(8) for _ in range(ln))))
        assert len(descs) == self.txfrags, f"no room for {self.txfrags} fragments: {room}"
        await self.do_record(descs)

    async def run(self, steps: int) -> None:
        r = self.rng
        for _ in range(steps):
            x = r.random()
            if x < 0.35:
                await self.do_reserve()
            elif x < 0.45:
                await self.do_lookup()
            elif x < 0.52:
                await self.do_release()
            elif x < 0.57:
                await self.do_unreserve()
            elif x < 0.82:
                await self.do_record()
            elif x < 0.835:
                await self.do_apply()
            elif x < 0.84:
                await self.do_discard()
            elif x < 0.85:
                y = r.random()
                await (self.do_badop() if y < 0.15 else self.do_insert() if y < 0.65 else self.do_read(*self.rand_slot()))
            elif x < 0.95:
                for _ in range(9 if r.random() < 0.1 else 1):    # 9: the list holds 8
                    await self.push_cf()
            elif self.pack and r.random() < 0.5:
                await self.do_seal()
            else:
                await self.set_lpgn()
        if self.txfrags & (self.txfrags - 1) == 0 and not self.cov["record_txfrags_max"]:
            await self.do_max_record()
        await self.do_seal()                             # (pack: the last page out and read back)
        if not self.cov["bad_op"]:
            await self.do_badop()                        # (0.15 % of the steps: at least once)
        for s in self.m.idx.values():
            for e in list(s):
                await self.do_lookup(e["lpn"])
        await self.dump()


    # ---- latencies (README "Timing") with no idle and no backpressure on the index streams
    async def measure(self) -> dict:
        self.ix.set_pause(None)
        self.ixa.set_pause(None)
        lat = {}

        async def cmd(op, t=0, lpn=0, n=0):
            self.ix.send_nowait(op=op, txid=t, lpn=lpn, n=n)
            beats = []
            while not beats or not beats[-1]["last"]:
                beats.append(await self.ixa.recv())
            c0 = self.ix.accept_cycles[-1]
            return beats, [b["_cycle"] - c0 for b in beats]

        t, lpn = 1, self.pool[0]
        beats, d = await cmd(OP_RESERVE, t, lpn)
        self.check("latency RESERVE answer", (beats[0]["sts"], beats[0]["cnt"]), self.m.reserve(t, lpn))
        lat["RESERVE"] = d[0]
        beats, d = await cmd(OP_LOOKUP, 0, lpn)
        self.check("latency LOOKUP k0", [(b["sts"], b["cnt"]) for b in beats], [(OK, 0)])
        lat["LOOKUP k0"] = d[0]
        # a record of min(2, SLOG_FRAGS) fragments of lpn, applied: then LOOKUP with fragments
        nf = min(2, self.frags)
        descs = [dict(txid=t, full=0, lpn=lpn, ppn=7 + i, off=4 * i, len=8, data=bytes(range(8 * i, 8 * i + 8)))
                 for i in range(nf)]
        for i, dd in enumerate(descs):
            self.rd.send_nowait(last=int(i == nf - 1), **dd)
        want = self.m.record(descs)
        b = await self.rs.recv()
        self.check("latency record status", (b["sts"], b["lpgn"], b["reclen"]), (OK, want["lpgn"], want["reclen"]))
        await self.emit(want, descs)
        beats, d = await cmd(OP_APPLY, t)
        self.check("latency APPLY answer", (beats[0]["sts"], beats[0]["cnt"]), self.m.apply(t))
        lat[f"APPLY n{nf}"] = d[0]
        beats, d = await cmd(OP_LOOKUP, 0, lpn)
        self.check("latency LOOKUP", [(b["sts"], b["cnt"], b["lpgn"], b["pofs"], b["off"], b["len"]) for b in beats],
                   [(OK, nf) + f for f in self.m.lookup(lpn)])
        lat["LOOKUP first"] = d[0]
        lat["LOOKUP next"] = d[1] - d[0] if nf > 1 else LAT_LOOKUP_NEXT
        self.dut._log.info("latencies (cycles, no backpressure): %s", lat)
        want_lat = {"RESERVE": LAT_CMD, "LOOKUP k0": LAT_CMD, "LOOKUP first": LAT_LOOKUP_FIRST,
                    "LOOKUP next": LAT_LOOKUP_NEXT, f"APPLY n{nf}": LAT_CMD + 6 * nf}
        self.check("latencies (README Timing)", lat, want_lat)
        p = lambda: pause_gen(self.rng, True, 0.3)
        self.ix.set_pause(p())
        self.ixa.set_pause(p())
        return lat

    # ---- concurrent mode: index commands, descriptors, s_lg and s_cf offered at random times by
    # separate drivers. A monitor at every clock edge feeds the reference what the unit took, in
    # the order it took it (the edge's LPGN load, a record's end, an index command, a descriptor,
    # then a flag), checks that s_rd / s_lg were taken only when the README allows it, and queues
    # the expected answers, statuses and pages; checkers compare what comes out in order.
    async def run_concurrent(self, n_records: int, n_cmds: int) -> None:
        d = self.dut
        self.ev: list = []
        self.exp_ix: deque = deque()
        self.exp_rs: deque = deque()
        self.exp_lp: deque = deque()
        self.exp_pages: deque = deque()        # pack: the pages the reference sent, in order
        self.await_go: deque = deque()         # pack: OK records before their verdict (want, descs)
        self.rec_due: deque = deque()          # (last descriptor's edge + 6, its descriptors): a record's end
        self.verdicts: deque = deque()
        self.verdict_ev = Event()
        self.exp_lp_ev = Event()
        self.ix_done_ev = Event()
        self.cf_on = True
        self.cf_drv = None                     # the flag offered this cycle
        self.cyc = 0
        self.ix.on_accept = lambda item, c: self.ev.append(("ix", item))
        self.rd.on_accept = lambda item, c: self.ev.append(("rd", item))
        self.lg.on_accept = lambda item, c: self.ev.append(("lg", item))
        self.go.on_accept = lambda item, c: self.ev.append(("go", item))
        self.seal.on_accept = lambda item, c: self.ev.append(("seal", item))
        every_edge(d.clk, self.cc_edge)
        chk = [cocotb.start_soon(self.cc_check_ix()), cocotb.start_soon(self.cc_check_rs()),
               cocotb.start_soon(self.cc_check_pages() if self.pack else self.cc_check_lp())]
        lg_task = cocotb.start_soon(self.cc_lg())
        seal_task = cocotb.start_soon(self.cc_seal()) if self.pack else None
        rd_task = cocotb.start_soon(self.cc_rd(n_records))
        await self.cc_ix(n_cmds, rd_task)
        self.cf_on = False
        lg_task.cancel()
        self.lg.flush()
        if seal_task is not None:
            seal_task.cancel()
            self.seal.flush()
            await self.seal.wait_idle()
            self.seal.send_nowait()                    # the last page out
            await self.seal.wait_idle()
        if not self.cov["lpgn_set"]:                   # (no window for a load met: one now, all idle)
            await self.lg.wait_idle()
            self.lg.send_nowait(lpgn=self.rng.getrandbits(32))
            await self.lg.wait_idle()
        await self.check_quiet("the concurrent run's end")
        for _ in range(400_000):
            if not (self.exp_ix or self.exp_rs or self.exp_lp or self.exp_pages or self.ev or self.seal.queue
                    or self.seal._driving):
                break
            await RisingEdge(d.clk)
        assert not (self.exp_ix or self.exp_rs or self.exp_lp or self.exp_pages), \
            f"outputs missing at the end: {len(self.exp_ix)} answers, {len(self.exp_rs)} statuses, " \
            f"{len(self.exp_lp)} records' pages, {len(self.exp_pages)} packed pages"
        for s in self.m.idx.values():                  # every entry the reference knows
            for e in list(s):
                await self.cc_cmd(OP_LOOKUP, 0, e["lpn"])
        for slot in range(self.lpns):                  # a dump: every slot, every fragment (and one past)
            await self.cc_cmd(OP_READ, 0, slot, 255)
            for j in range(self.frags + 1):
                await self.cc_cmd(OP_READ, 0, slot, j)
        for t in chk:
            t.cancel()
        self.ix.on_accept = self.rd.on_accept = self.lg.on_accept = self.go.on_accept = self.seal.on_accept = None

    def cc_edge(self) -> None:
        """At every edge, after the stream ends: this edge's flag, then the reference in order."""
        self.cyc += 1
        d, m = self.dut, self.m
        # coverage of the overlaps the serial mode never has
        if self.rd._driving and not m.can_take() and not m.receiving():
            self.cov["cc_rd_waits_for_held"] += 1
        if len(m.held) >= 2:
            self.cov["cc_held2"] += 1
        if self.lg._driving and (m.held or m.receiving()):
            self.cov["cc_lg_waits_for_record"] += 1
        if self.ix._driving and self.rd._driving:
            self.cov["cc_ix_and_rd_offered"] += 1
        cf = self.cf_drv                                   # valid at this edge: taken (always)
        ev, self.ev = self.ev, []
        for kind, item in sorted(ev, key=lambda x: x[0] != "lg"):   # a load first (it is R_FREE's)
            if kind == "lg":
                assert not m.held and not m.receiving() and m.open is None, \
                    f"s_lg taken at cycle {self.cyc} while a record is held or being received"
                m.lpgn = item["lpgn"]
                self.cov["lpgn_set"] += 1
        while self.rec_due and self.rec_due[0][0] <= self.cyc:    # a record's end (its flag list)
            _, descs = self.rec_due.popleft()
            want = m.rec_end()
            self.exp_rs.append(want)
            if want["sts"] == OK and not self.pack:
                self.exp_lp.append((want, descs))
                self.exp_lp_ev.set()
            if want["sts"] == OK and self.pack:
                self.await_go.append((want, descs))
            if want["sts"] == OK:
                self.cov["record_ok"] += 1
                self.cov[f"record_pages{min(want['reclen'], 4)}"] += 1
                self.cov[f"record_ncf{min(want['ncf'], 8)}"] += 1
            else:
                self.cov[f"record_{want['sts']}"] += 1
            self.verdicts.append(want)
            self.verdict_ev.set()
        for kind, item in ev:
            if kind == "go":                           # pack: a verdict (the pages it fills, in order)
                rec = self.await_go.popleft()
                if not item["drop"]:
                    self.go_recs.append(rec)
                if item["drop"]:
                    m.drop()
                    self.cov["cc_pack_drop"] += 1
                else:
                    self.cov[f"cc_pack_go_{'open' if m.open is not None else 'new'}"] += 1
                    self.exp_pages.extend(m.go())
                    self.exp_lp_ev.set()
            elif kind == "seal":
                # (README "Open page": not while a record waits for its verdict)
                assert not self.await_go, f"s_seal taken at cycle {self.cyc} while a record waits for its verdict"
                pages = m.seal()
                self.cov[f"cc_pack_seal_{len(pages)}"] += 1
                self.exp_pages.extend(pages)
                self.exp_lp_ev.set()
        for kind, item in ev:
            if kind in ("go", "seal"):
                continue
            if kind == "ix":
                self.exp_ix.append(self.ix_expect(item))
            elif kind == "rd":
                assert m.can_take() or m.receiving(), \
                    f"a record's first descriptor taken at cycle {self.cyc} with {len(m.held)} records held"
                # (pack: the previous OK record's status and verdict taken first; README "Records")
                assert m.receiving() or not self.await_go, \
                    f"a record's first descriptor taken at cycle {self.cyc} before the previous record's verdict"
                if not m.receiving():
                    m.rec_begin()
                    self.rx_descs = []
                m.desc(item)
                self.rx_descs.append(item)
                if item["last"]:
                    self.rec_due.append((self.cyc + 6, self.rx_descs))
        if cf is not None:
            m.push_cf(*cf)
            self.cov["cf"] += 1
        # the next cycle's flag
        self.cf_drv = None
        if self.cf_on and self.rng.random() < 0.04:
            self.cf_drv = (self.rng.randint(1, self.num_tx), self.rng.randint(1, 255), self.rng.getrandbits(32))
            d.s_cf_txid.value, d.s_cf_reclen.value, d.s_cf_lpgn.value = self.cf_drv
        if (self.cf_drv is not None) != getattr(self, "cf_out", False):
            self.cf_out = self.cf_drv is not None
            d.s_cf_valid.value = int(self.cf_out)

    def ix_expect(self, item: dict) -> tuple:
        """The reference's answer to an index command taken now: (name, beats, cov key)."""
        m, op, t, lpn, n = self.m, item["op"], item["txid"], item["lpn"], item["n"]
        z = (0, 0, 0, 0)
        if op == OP_RESERVE:
            sts, cnt = m.reserve(t, lpn)
            return f"RESERVE t{t} {lpn:#x}", [(sts, cnt) + z], f"reserve_{sts}"
        if op == OP_UNRESERVE:
            sts = m.unreserve(t, lpn)
            return f"UNRESERVE t{t} {lpn:#x}", [(sts, 0) + z], f"unreserve_{sts}"
        if op == OP_LOOKUP:
            f = m.lookup(lpn)
            return f"LOOKUP {lpn:#x}", [(OK, len(f)) + x for x in f] or [(OK, 0) + z], f"lookup_k{len(f)}"
        if op == OP_RELEASE:
            sts, cnt = m.release(lpn, n)
            return f"RELEASE {lpn:#x} {n}", [(sts, cnt) + z], f"release_{sts}_{cnt > 0}"
        if op == OP_APPLY:
            self.held_order(t)
            sts, cnt = m.apply(t)
            return f"APPLY t{t}", [(sts, cnt) + z], f"apply_{sts}"
        if op == OP_DISCARD:
            self.held_order(t)
            sts, cnt = m.discard(t)
            self.dropped.discard(t)
            return f"DISCARD t{t}", [(sts, cnt) + z], f"discard_{sts}_frags{min(cnt, 1)}"
        if op == OP_READ:
            a = m.read(lpn, n)
            return f"READ {lpn} {n}", [a], f"read_{'e' if n == 255 else 'f'}_{a[0]}"
        return f"op {op}", [(BAD_FIELD, 0) + z], "bad_op"

    @staticmethod
    async def beat(sink) -> dict:
        """The next beat of a sink, waiting on its event (no coroutine resumed every cycle)."""
        while not sink.queue:
            sink.event.clear()
            await sink.event.wait()
        return sink.queue.popleft()

    async def cc_check_ix(self) -> None:
        while True:
            b = await self.beat(self.ixa)
            assert self.exp_ix, f"an index answer with no command taken: {b}"
            name, beats, key = self.exp_ix[0]
            i = getattr(self, "ix_beat", 0)
            got = (b["sts"], b["cnt"], b["lpgn"], b["pofs"], b["off"], b["len"])
            self.check(f"{name} beat {i}", (got, b["last"]), (beats[i], int(i == len(beats) - 1)))
            if i == len(beats) - 1:
                self.exp_ix.popleft()
                self.ix_beat = 0
                self.cov[key] += 1
                self.ix_done_ev.set()
            else:
                self.ix_beat = i + 1

    async def cc_check_rs(self) -> None:
        while True:
            b = await self.beat(self.rs)
            assert self.exp_rs, f"a record status with no record: {b}"
            want = self.exp_rs.popleft()
            if want["sts"] != OK:
                self.check("record status", (b["sts"], b["txid"], b["lpgn"], b["reclen"]),
                           (want["sts"], want["txid"], 0, 0))
            else:
                self.check("record status", (b["sts"], b["txid"], b["lpgn"], b["reclen"]),
                           (OK, want["txid"], want["lpgn"], want["reclen"]))

    async def cc_check_lp(self) -> None:
        while True:
            while not self.exp_lp:
                self.exp_lp_ev.clear()
                await self.exp_lp_ev.wait()
            want, descs = self.exp_lp[0]
            await self.collect_pages(want, descs)
            self.exp_lp.popleft()

    async def cc_check_pages(self) -> None:
        """pack: every page on m_lp against the reference's, in order."""
        while True:
            while not self.exp_pages:
                self.exp_lp_ev.clear()
                await self.exp_lp_ev.wait()
            p = self.exp_pages[0]
            await self.recv_page(p)
            self.cov[f"pack_page_nend{min(p['nend'], 3)}"] += 1
            self.batch_pages.append(p)
            for _ in range(p["nend"]):
                self.batch_recs.append(self.go_recs.popleft())
            if not p["cont"]:
                self.decode_batch()
            self.exp_pages.popleft()

    async def cc_seal(self) -> None:
        r = self.rng
        while True:
            await ClockCycles(self.dut.clk, r.randint(40, 600))
            self.seal.send_nowait()
            await self.seal.wait_idle()

    async def cc_cmd(self, op: int, t: int = 0, lpn: int = 0, n: int = 0) -> None:
        """Offer one index command and wait until its answer is checked."""
        self.ix_done_ev.clear()
        self.ix.send_nowait(op=op, txid=t, lpn=lpn, n=n)
        await with_timeout(self.ix_done_ev.wait(), 4, "ms")      # (a wedged unit fails, not hangs)

    async def cc_ix(self, n_cmds: int, rd_task) -> None:
        r = self.rng
        i = 0
        while i < n_cmds or not rd_task.done() or self.m.held:
            if r.random() < 0.5:
                await ClockCycles(self.dut.clk, r.randint(1, 12))
            held = list(self.m.held)
            x = r.random()
            # (with several slots the held records end less eagerly, so that several are held)
            if (held and x < 0.3 / self.recs) or (i >= n_cmds and held):
                t = r.choice(held) if r.random() < 0.9 else self.rand_txid()
                if self.pack:                          # dropped: DISCARD, written: APPLY (10 %: the other)
                    disc = (t in self.dropped) != (r.random() < 0.1)
                else:
                    disc = r.random() < 0.25 or t in self.dropped
                await self.cc_cmd(OP_DISCARD if disc else OP_APPLY, t)
            elif i >= n_cmds:
                await RisingEdge(self.dut.clk)
                continue
            elif x < 0.6:
                t, lpn = self.rand_txid(), r.choice(self.pool)
                await self.cc_cmd(OP_RESERVE, t, lpn)
            elif x < 0.72:
                await self.cc_cmd(OP_LOOKUP, 0, r.choice(self.pool))
            elif x < 0.82:
                await self.cc_cmd(OP_RELEASE, 0, r.choice(self.pool), r.choice([1, 2, self.frags, 255]))
            elif x < 0.92:
                t, lpn = self.rand_txid(), r.choice(self.pool)
                own = [e for s in self.m.idx.values() for e in s if e["rsv"]]
                if own and r.random() < 0.5:
                    e = r.choice(own)
                    t, lpn = e["owner"], e["lpn"]
                await self.cc_cmd(OP_UNRESERVE, t, lpn)
            elif x < 0.98:
                await self.cc_cmd(r.choice([OP_APPLY, OP_DISCARD]), self.rand_txid())
            elif r.random() < 0.3:
                await self.cc_cmd(6, self.rand_txid(), r.choice(self.pool), r.getrandbits(8))
            else:
                await self.cc_cmd(OP_READ, 0, *self.rand_slot())
            i += 1

    async def cc_rd(self, n_records: int) -> None:
        r = self.rng
        for _ in range(n_records):
            if r.random() < 0.5:
                await ClockCycles(self.dut.clk, r.randint(1, 30))
            owners = sorted({e["owner"] for s in self.m.idx.values() for e in s if e["rsv"]})
            descs = self.make_record(r.choice(owners) if owners and r.random() < 0.7 else None)
            for i, dd in enumerate(descs):
                dd.setdefault("off", 0)
                dd.setdefault("len", 0)
                dd["last"] = int(i == len(descs) - 1)
                self.rd.send_nowait(**dd)
            while not self.verdicts:
                self.verdict_ev.clear()
                await with_timeout(self.verdict_ev.wait(), 4, "ms")
            want = self.verdicts.popleft()
            if want["sts"] == OK and self.pack:
                drop = r.random() < 0.1
                if drop:
                    self.dropped.add(want["txid"])
                self.go.send_nowait(drop=int(drop))
            if want["sts"] == OK:
                for dd in descs:
                    if not dd["full"]:
                        for k in range(0, len(dd["data"]), 4):
                            self.rw.send_nowait(data=int.from_bytes(dd["data"][k:k + 4], "little"))

    async def cc_lg(self) -> None:
        r = self.rng
        while True:
            await ClockCycles(self.dut.clk, r.randint(20, 400))
            self.lg.send_nowait(lpgn=r.choice([r.getrandbits(32), 0xFFFFFFFF - r.randrange(3)]))
            await self.lg.wait_idle()


@cocotb.test()
async def slog_random(dut):
    """Serial mode: one stream at a time (a command and its answer, a record and its pages)."""
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed)
    cocotb.start_soon(Clock(dut.clk, 10, "ns").start())
    tb = TB(dut, rng)
    await tb.reset()
    await tb.measure()
    await tb.run(STEPS)
    # rst empties a used index (README "The index": the tag RAMs' clear, SETS cycles, commands wait
    # for it): `used` 0 at once, every slot empty, then the index works from empty again. The last
    # set is filled first (every way, so slot SLOG_LPNS-1 holds an entry before rst); after rst a
    # READ of that slot offered at once, with no idle, is taken exactly SETS cycles after the first
    # edge with rst low (the clear's SETS edges take no command) and answers an empty slot
    sets = tb.lpns // tb.ways
    for k in range(8 * tb.ways):
        if len(tb.m.idx[sets - 1]) == tb.ways:
            break
        await tb.do_reserve(t=tb.rng.randint(1, tb.num_tx), lpn=(sets - 1) + sets * k)
    assert len(tb.m.idx[sets - 1]) == tb.ways, f"the last set not full before rst: {tb.m.idx[sets - 1]}"
    assert int(dut.used.value) > 0, "the index is empty before the reset check"
    rst_low: list[int] = []                       # the source's cycle at each edge sampling rst low
    every_edge(dut.clk, lambda: rst_low.append(tb.ix.cycle) if not int(dut.rst.value) and not rst_low else None)
    await tb.reset()
    tb.m = tb.new_ref()
    tb.dropped = set()
    assert int(dut.used.value) == 0, f"used {int(dut.used.value)} after rst"
    pause = tb.ix.pause
    tb.ix.set_pause(None)
    n0 = len(tb.ix.accept_cycles)
    await tb.do_read(tb.lpns - 1, 255)
    tb.ix.set_pause(pause)
    assert rst_low, "no edge with rst low seen"
    took = tb.ix.accept_cycles[n0] - rst_low[0]
    assert took == sets, f"READ after rst taken {took} cycles after the first edge with rst low, want SETS = {sets}"
    tb.cov["reset_clear_wait"] += 1
    await tb.dump()
    await tb.run(max(50, STEPS // 10))
    await tb.check_no_output()
    tb.cov["reset_used"] += 1
    dut._log.info("coverage: %s", dict(sorted(tb.cov.items())))
    for need in ("reserve_0", "reserve_4", "reserve_2", "record_ok", "record_4", "record_7", "record_2",
                 "apply_0", "apply_6", "discard_0_frags1", "discard_6", "unreserve_0", "unreserve_6",
                 "release_0_True", "cf", "record_pages2", "lpgn_set", "bad_op", "record_ncf8", "decoded", "insert_0",
                 "read_e_0", "read_f_0", "read_e_7", "read_f_7", "reset_clear_wait"):
        assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"
    assert any(tb.cov[f"lookup_k{k}"] for k in range(2, tb.frags + 1)) or tb.frags == 1
    if tb.txfrags & (tb.txfrags - 1) == 0:           # a record of exactly SLOG_TXFRAGS fragments (the
        assert tb.cov["record_txfrags_max"] > 0, dict(tb.cov)   # layout's counter must reach it)
    if tb.pack:                                      # records packed: each case of the open page
        for need in ("pack_start_open", "pack_start_new", "pack_seal_1", "pack_seal_0", "pack_drop",
                     "apply_7", "discard_7",
                     "pack_page_nend0", "pack_page_nend1", "pack_page_nend2", "pack_batch_recs2"):
            assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"
    if tb.recs > 1:                                  # several records held, ended in any order
        for need in ("record_ok_held2", "end_not_oldest"):
            assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"


@cocotb.test()
async def slog_concurrent(dut):
    """Concurrent mode: s_ix, s_rd, s_lg and s_cf offered at random times at once (TB.run_concurrent)."""
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed * 7919 + 1)
    cocotb.start_soon(Clock(dut.clk, 10, "ns").start())
    tb = TB(dut, rng)
    await tb.reset()
    await tb.run_concurrent(max(20, STEPS // 8), max(60, STEPS // 3))
    await tb.check_no_output()
    dut._log.info("coverage: %s", dict(sorted(tb.cov.items())))
    # (packed: only a dropped record, 10 % of them, can be DISCARDed; one with fragments is the
    # serial mode's requirement, here any DISCARD OK)
    for need in ("reserve_0", "record_ok", "apply_0", "unreserve_0",
                 "cf", "lpgn_set", "record_ncf8", "decoded", "cc_rd_waits_for_held",
                 "cc_lg_waits_for_record", "cc_ix_and_rd_offered", "read_e_0", "read_f_7"):
        assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"
    assert tb.cov["discard_0_frags1"] or (tb.pack and tb.cov["discard_0_frags0"]), \
        f"coverage point discard_0_frags1 not reached: {dict(tb.cov)}"
    if tb.pack:
        # (two records ending in one page: the serial mode's requirement; here the flag lists make
        # records long, and at B4's 1,024-entry shape it is met at 5 of seeds 3-10)
        for need in ("cc_pack_drop", "cc_pack_go_open", "cc_pack_go_new", "cc_pack_seal_1", "decoded"):
            assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"
    if tb.recs > 1:
        for need in ("cc_held2", "end_not_oldest"):
            assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"


# (SLOG_LPNS, SLOG_WAYS, SLOG_FRAGS, SLOG_RECS, SLOG_PACK): a tiny index (full sets, 2 fragments),
# a non-power-of-two fragment ring with 3 records held at once and records packed into shared
# pages, the default shape (256 x 4, 4 ways), B4's device shape (b5_256_slog: 1,024 x 4, the tag
# RAMs in block RAM) with 2 held, packed. Each item runs both cocotb tests.
# SLOG_TXFRAGS 6, or a power of two (4, 8: the layout's fragment counter must reach it; a record
# with exactly that many fragments is required coverage there)
CONFIGS = [(8, 2, 2, 1, 0, 6), (16, 4, 3, 3, 1, 4), (256, 4, 4, 1, 0, 8), (1024, 4, 4, 2, 1, 6)]
SEEDS = [1, 2]


def _cfg_id(lpns: int, ways: int, frags: int, recs: int, pack: int, txfrags: int = 6) -> str:
    return f"L{lpns}w{ways}f{frags}" + (f"r{recs}" if recs > 1 else "") + ("p" if pack else "")


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
@pytest.mark.parametrize("lpns,ways,frags,recs,pack,txfrags", CONFIGS, ids=[_cfg_id(*c) for c in CONFIGS])
def test_ats_backend_slog(lpns, ways, frags, recs, pack, txfrags, seed):
    src = os.environ.get("ATS_SLOG_SRC")
    params = dict(PAGE_BYTES=128, NUM_TX=6, SLOG_LPNS=lpns, SLOG_WAYS=ways, SLOG_FRAGS=frags,
                  SLOG_TXFRAGS=txfrags, SLOG_TXFULL=3, PPN_W=32, SLOG_RECS=recs, SLOG_PACK=pack)
    key = _cfg_id(lpns, ways, frags, recs, pack) + ("_" + Path(src).parent.name if src else "")
    run(toplevel="ats_backend_slog",
        sources=block_sources("ats_backend_slog",
                              replace={"ats_backend_slog.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend_slog", test_dir=HERE, build_key=key, parameters=params,
        testcase=os.environ.get("ATS_SLOG_TEST") or None,        # one cocotb test (mutant checks)
        seed=seed, results_name=f"{key}_seed{seed}", extra_env={"ATS_SEED": str(seed)}, public={})


@pytest.mark.skipif(not LONG, reason="ATS_LONG=1 only (4 KiB pages: long)")
def test_ats_backend_slog_default():
    """The default configuration (4 KiB pages, 256 x 4, 4 ways, 64 + 64 per record), fewer steps."""
    src = os.environ.get("ATS_SLOG_SRC")
    key = "default" + ("_" + Path(src).parent.name if src else "")
    run(toplevel="ats_backend_slog",
        sources=block_sources("ats_backend_slog",
                              replace={"ats_backend_slog.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend_slog", test_dir=HERE, build_key=key,
        parameters=dict(PAGE_BYTES=4096, NUM_TX=16, SLOG_LPNS=256, SLOG_WAYS=4, SLOG_FRAGS=4,
                        SLOG_TXFRAGS=64, SLOG_TXFULL=64, PPN_W=32),
        seed=1, results_name=f"{key}_seed1", extra_env={"ATS_SEED": "1", "ATS_SLOG_STEPS": "400"}, public={})


# parameter checks at elaboration: each bad value stops Verilator with the block's message
BAD_PARAMS = [dict(PAGE_BYTES=130), dict(PAGE_BYTES=8192), dict(NUM_TX=0), dict(SLOG_LPNS=12, SLOG_WAYS=4),
              dict(SLOG_LPNS=4, SLOG_WAYS=4), dict(SLOG_FRAGS=0), dict(SLOG_FRAGS=128),
              dict(SLOG_TXFRAGS=0), dict(PAGE_BYTES=64, SLOG_TXFRAGS=300), dict(PPN_W=33),
              dict(SLOG_RECS=0), dict(SLOG_RECS=9), dict(SLOG_PACK=2)]


@pytest.mark.parametrize("bad", BAD_PARAMS, ids=["_".join(f"{k}{v}" for k, v in b.items()) for b in BAD_PARAMS])
def test_ats_backend_slog_params(bad):
    import subprocess
    import shutil
    root = HERE.parents[1]
    vl = shutil.which("verilator") or str(root / ".venv" / "bin" / "verilator")
    args = [vl, "--lint-only", "-Wno-lint", "-Wno-style", "--top-module", "ats_backend_slog"]
    args += [f"-G{k}={v}" for k, v in bad.items()] + [str(p) for p in block_sources("ats_backend_slog")]
    r = subprocess.run(args, cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "ats_backend_slog:" in r.stdout + r.stderr, (r.returncode, r.stderr[-800:])
