# SPDX-License-Identifier: Apache-2.0
"""ats_ssd_core with the S-Log (SLOG = 1, FRAG_SLOTS > 0): the device writes S-Log records
(docs/architecture.md section 11). Run by test_ats_ssd_core.py::test_ats_ssd_core_slog (its build).

The host side, the die models and the firmware's block supply are test_ats_ssd_core's TB (random idle
on every input, backpressure on every output). Per power cycle (a fresh format, SLOG_THR drawn from
64 / 128 / 256 / 512 bytes), concurrent actors:
 - 4 transaction actors (txids 1..4), one command at a time each: TX_BEGIN (sometimes), DIFFWRITEs below
   the threshold (most of them: FRAG slots), above it and with FUA (read-modify-write, conversions),
   WRITEs, READs of their own LBAs (read your writes, byte for byte) and of others, ended by TX_COMMIT,
   a COMMIT-flag WRITE or TX_ABORT;
 - 2 plain actors: WRITE (some FUA), READ, TRIM, FLUSH on LBAs no open transaction holds; now and then
   a plain WRITE of an LBA an open tx has only small DIFFWRITEs of (a concurrent writer): the commit
   may then show the tx's bytes on the plain version (a fragment: applied onto the version committed at
   the commit, section 11.4) or on the version before it (a read-modify-write at the DIFFWRITE); both are
   kept as candidates until a read shows one;
 - the firmware: MERGE (port op 6) of random LBAs (status 0 / 1 / 2; 3 = unreadable is an error).
Reference (plain Python, from section 11 and docs/architecture.md section 1): each LBA's committed
content (zeros when never written / trimmed), a tx's view = its own full page or the committed one with
its DIFFWRITEs applied in order; a commit replaces the committed content of its LBAs. Every READ is
checked word for word; every status against the model. The power cycle ends with a FLUSH, a read of
every LBA, a cut and the recovery oracle (atstb.recovery_oracle, docs/persistence.md section 10): every
LBA's recovered content (base + fragments) must be its committed content.
Coverage that fails the run when missing: RESERVEs answered OK, S-Log records sent (m_wb slog), log
pages accepted (the LPGN counter), records found by the oracle, MERGEs that merged, tx reads of
fragment LBAs, concurrent writers. ATS_SLOG_CYCLES power cycles (4; make test passes 2), ATS_SLOG_TXS
transactions per actor and cycle (15: the firmware model has no GC, rtl/core/testplan.md)."""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles, Event, RisingEdge, with_timeout

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_ats_ssd_core as core  # noqa: E402  (the TB; its cocotb test is not collected here)
from atstb.nand_page_model import bytes_to_words  # noqa: E402
from atstb.recovery_oracle import F_ABORT, F_COMMIT, pages_on_dies, read_lpn, recover, slog_records_on_dies  # noqa: E402
from atstb.streams import every_edge  # noqa: E402

OP_READ, OP_WRITE, OP_DIFF, OP_BEGIN, OP_COMMIT, OP_ABORT, OP_FLUSH, OP_TRIM = (
    core.OP_READ, core.OP_WRITE, core.OP_DIFF, core.OP_BEGIN, core.OP_COMMIT, core.OP_ABORT, core.OP_FLUSH,
    core.OP_TRIM)
OK, TX_EMPTY, FUA, COMMIT = core.OK, core.TX_EMPTY, core.FUA, core.COMMIT
FW_MERGE = 6
CMD_TIMEOUT_NS = 40_000_000        # 4 M cycles without the completion of one command: a hang


class SlogTB(core.TB):
    def __init__(self, dut, seed, idle, backpressure, image_dir):
        super().__init__(dut, seed, idle, backpressure, image_dir)
        self.waiting: dict[int, list] = {}          # tag -> [event, completion]
        self.free_tags = list(range(64))
        self.addr = 0x100000
        every_edge(dut.clk, self._cpls)
        if os.environ.get("ATS_SLOG_DEBUG") == "2":   # (a build with ATS_VL_PUBLIC_ALL=1 ATS_VL_VARIANT=dbg)
            every_edge(dut.clk, self._debug)
        for k in ("slog_cycles", "tx_commits", "tx_aborts", "diff_small", "diff_large", "diff_fua",
                  "tx_reads_own", "reads_checked", "plain_writes", "trims", "flushes", "merges",
                  "merges_stale", "merges_none", "contended", "contended_frag", "contended_rmw",
                  "oracle_lbas", "oracle_slog_records", "recovered_frags", "mixed_records", "gap_records",
                  "gap_incomplete", "gap_other", "other_cycles",
                  "cut_mid", "cut_tx_new", "cut_tx_old", "cut_tx_done"):
            self.stats.setdefault(k, 0)

    # ---------------------------------------------------------------- commands
    def _cpls(self):
        while self.cpl.queue:
            c = self.cpl.queue.popleft()
            w = self.waiting.pop(c["tag"], None)
            if w is None:
                self.errors.append(f"completion with tag {c['tag']} not in flight: {c}")
                continue
            w[1] = c
            w[0].set()

    def _debug(self):
        u = self.dut.u_dut
        t = cocotb.utils.get_sim_time("ns") // 10
        if int(u.wb_valid.value) and int(u.wb_ready.value) and (int(u.wb_rec.value) or int(u.wb_slog.value)):
            self.dut._log.info("DBG %d wb op %d rec %d slog %d txid %d lpn %d", t, int(u.wb_op.value),
                               int(u.wb_rec.value), int(u.wb_slog.value), int(u.wb_txid.value), int(u.wb_lpn.value))
        if int(u.wbc_valid.value) and int(u.wbc_ready.value) and int(u.wbc_status.value):
            self.dut._log.info("DBG %d wbc tag %d status %#x", t, int(u.wbc_tag.value), int(u.wbc_status.value))
        if int(u.rd_valid.value) and int(u.rd_ready.value) and int(u.rd_tag.value) >= 0xFB:
            self.dut._log.info("DBG %d rd tag %#x lpn %d txid %d", t, int(u.rd_tag.value), int(u.rd_lpn.value),
                               int(u.rd_txid.value))
        if int(u.rdd_valid.value) and int(u.rdd_ready.value) and int(u.rdd_last.value) and int(u.rdd_tag.value) >= 0xFB:
            self.dut._log.info("DBG %d rdd tag %#x status %#x", t, int(u.rdd_tag.value), int(u.rdd_status.value))
        if int(self.dut.s_fw_valid.value) and int(self.dut.s_fw_ready.value):
            self.dut._log.info("DBG %d fw op %d lpn %d", t, int(self.dut.s_fw_op.value), int(self.dut.s_fw_lpn.value))
        if int(self.dut.m_fwr_valid.value) and int(self.dut.m_fwr_ready.value):
            self.dut._log.info("DBG %d fwr status %d", t, int(self.dut.m_fwr_status.value))
        if int(self.dut.s_cmd_valid.value) and int(self.dut.s_cmd_ready.value):
            self.dut._log.info("DBG %d cmd op %d txid %d lba %d aux %#x", t, int(self.dut.s_cmd_op.value),
                               int(self.dut.s_cmd_txid.value), int(self.dut.s_cmd_lba.value), int(self.dut.s_cmd_aux.value))
        if int(self.dut.m_cpl_valid.value) and int(self.dut.m_cpl_ready.value):
            self.dut._log.info("DBG %d cpl tag %d status %#x", t, int(self.dut.m_cpl_tag.value), int(self.dut.m_cpl_status.value))

    def backend_state(self) -> dict:
        """(the base TB's watchdog report) with the write buffer's and the S-Log unit's states."""
        d = super().backend_state()
        # blocks the firmware model has left to hand per die (0 everywhere: the TB ran out, no GC)
        d["plan_left"] = [len(p) - i for p, i in zip(self.plan, self.plan_pos)]
        if os.environ.get("ATS_SLOG_DEBUG"):
            d["dbg"] = self.debug_state()
        return d

    def debug_state(self) -> str:
        """The write buffer's FSMs and pending commits (ATS_SLOG_DEBUG: a build with every signal public)."""
        if not os.environ.get("ATS_SLOG_DEBUG"):
            return ""
        w = self.dut.u_dut.u_wbuf
        names = ["state_q", "en_q", "fin_q", "pq_v_q", "pq_hd_q", "pq_done_q", "fu_eng_q", "out_empty", "cw_q",
                 "rd_act_q", "se_q", "se_pass_q", "hs_q", "fifo_ne_q", "live_q", "wb_go_q"]
        out = {}
        for n in names:
            try:
                out[n] = int(getattr(w, n).value)
            except Exception as e:      # noqa: BLE001
                out[n] = str(e)[:40]
        u = self.dut.u_dut
        for n in ["wb_valid", "wb_ready", "wb_slog", "wb_rec", "wb_txid", "wb_op", "wbd_valid", "wbd_ready",
                  "rd_valid", "rd_ready", "rd_tag"]:
            try:
                out[n] = int(getattr(u, n).value)
            except Exception as e:      # noqa: BLE001
                out[n] = str(e)[:40]
        for n in ["recv_q", "recv_fw_q", "recv_mg_q", "tbl_full", "tbl_empty", "acc_ptr_q", "cpl_ptr_q", "iss_ptr_q",
                  "fw_reloc_req", "wb_hold", "mg_acc_req", "fw_acc"]:
            try:
                out["be." + n] = int(getattr(u.u_backend, n).value)
            except Exception as e:      # noqa: BLE001
                out["be." + n] = str(e)[:40]
        be = u.u_backend
        for n in ["e_st", "e_rec", "e_txid", "e_sl", "e_fw"]:
            try:
                out["be." + n] = [int(getattr(be, n)[i].value) for i in range(int(self.dut.WIN.value))]
            except Exception as e:      # noqa: BLE001
                out["be." + n] = str(e)[:40]
        for n in ["txr_q", "txl_q", "iss_ok_q", "iss_mv_q", "iss_have", "iss_retry"]:
            try:
                out["be." + n] = hex(int(getattr(be, n).value))
            except Exception as e:      # noqa: BLE001
                out["be." + n] = str(e)[:40]
        g = u.u_backend.g_slog
        for n in ["rx_st_q", "g_st_q", "mg_st_q", "ix_v_q"]:
            try:
                out["be." + n] = int(getattr(g, n).value)
            except Exception as e:      # noqa: BLE001
                out["be." + n] = str(e)[:40]
        return f"; wbuf {out}"

    def buf(self, words=None) -> int:
        a = self.addr
        self.addr += self.geo.page_bytes * 4
        for j, v in enumerate(words or []):
            self.mem[a + 4 * j] = v
        return a

    async def do(self, op, lba=0, nlb=0, txid=0, flags=0, dptr=0, aux=0) -> tuple[int, int]:
        while not self.free_tags:
            await RisingEdge(self.dut.clk)
        tag = self.free_tags.pop(self.rng.randrange(len(self.free_tags)))
        ev = Event()
        w = self.waiting[tag] = [ev, None]
        self.cmd.send_nowait(op=op, tag=tag, lba=lba, nlb=nlb, txid=txid, flags=flags, attr=0, prio=0,
                             dptr=dptr, aux=aux)
        self.stats["cmds"] += 1
        try:
            await with_timeout(ev.wait(), CMD_TIMEOUT_NS, "ns")
        except Exception:
            raise AssertionError(f"no completion for op {op} lba {lba} txid {txid}: backend {self.backend_state()}")
        c = w[1]
        if c is None:                               # the power was cut (cut_phase): no completion
            return None, None
        self.free_tags.append(tag)
        return c["status"], c["result"]

    async def read(self, lba, txid=0) -> tuple[int, tuple]:
        a = self.buf()
        st, _ = await self.do(OP_READ, lba=lba, txid=txid, dptr=a)
        self.drain_hwr()
        return st, tuple(self.mem.get(a + 4 * j) for j in range(self.pw))


class Model:
    """Committed content per LBA (a list of candidate pages, one unless a concurrent writer left two),
    the open transactions' events, the locks."""

    def __init__(self, pw: int, nlbas: int):
        self.pw, self.nlbas = pw, nlbas
        self.zero = (0,) * pw
        self.committed: dict[int, list[tuple]] = {}
        self.owner: dict[int, int] = {}             # lba -> txid of the open tx that touched it
        self.busy: set[int] = set()                  # lbas with a plain command in flight
        self.frozen: set[int] = set()                # contended lbas: their tx issues nothing more on them
        self.txev: dict[int, dict] = {}              # txid -> its open tx's events (lba -> list)
        self.ending: set[int] = set()                # txids whose end (commit / abort) is under way
        self.trimmed: set[int] = set()               # LBAs with a TRIM completed and not yet flushed
        self.trim_log: list[int] = []                # LBAs of every TRIM completed, in order
        self.contended: dict[int, tuple] = {}        # lba -> the plain version written over a tx's DIFFWRITEs
        self.hist: dict[int, list] = {}              # lba -> what happened to it (printed with an error)
        # lba -> small DIFFWRITEs committed since its last plain WRITE / TRIM / MERGE (fragments or not):
        # only to tell a mismatch that shows some of them over a newer full page (stale fragments)
        self.smalls: dict[int, list] = {}

    def note(self, lba, what):
        self.hist.setdefault(lba, []).append(f"{cocotb.utils.get_sim_time('ns') // 10}: {what}")

    def cands(self, lba) -> list[tuple]:
        return self.committed.get(lba, [self.zero])

    @staticmethod
    def apply(page: tuple, events: list) -> tuple:
        w = list(page)
        for e in events:
            if e[0] == "full":
                w = list(e[1])
            else:
                w[e[1]:e[1] + len(e[2])] = e[2]
        return tuple(w)

    def view(self, tx: dict, lba) -> list[tuple]:
        ev = tx.get(lba)
        if not ev:
            return self.cands(lba)
        out = []
        for c in (ev[0][2] if ev[0][0] == "cand" else self.cands(lba)):
            p = self.apply(c, [e for e in ev if e[0] != "cand"])
            if p not in out:
                out.append(p)
        return out


def stale(m, lba, got, cands) -> bool:
    """`got` = a candidate with some of the LBA's earlier small DIFFWRITEs applied again (in order)?"""
    sm = m.smalls.get(lba, [])[-6:]
    for c in cands:
        for mask in range(1, 1 << len(sm)):
            if Model.apply(c, [e for i, e in enumerate(sm) if mask >> i & 1]) == got:
                return True
    return False


STALE_OK = os.environ.get("ATS_SLOG_STALE_OK", "") not in ("", "0")


def check_read(tb, what, got, cands, m=None, lba=None) -> int:
    """1: `got` is a candidate; 0: not (an error); 2: stale fragments accepted (ATS_SLOG_STALE_OK)."""
    if got in cands:
        if len(cands) > 1:      # a concurrent writer's LBA: [0] = the DIFFWRITEs on the version at the commit
            tb.stats["contended_frag" if got == cands[0] else "contended_rmw"] += 1
        return 1
    if m is not None and stale(m, lba, got, cands):
        tb.stats["stale_frags"] = tb.stats.get("stale_frags", 0) + 1
        if STALE_OK:        # diagnosis only (RELEASE at a tx's full-page commit not built): counted
            return 2
        what += " [STALE FRAGMENTS: earlier committed small DIFFWRITEs applied over the newer page]"

    c = cands[0]
    bad = [j for j in range(len(c)) if got[j] != c[j]]
    tb.errors.append(f"{what}: words {bad[:3]}..{bad[-1]} ({len(bad)}) = {got[bad[0]]:#x}, expected {c[bad[0]]:#x} "
                     f"({len(cands)} candidate(s)); history: {m.hist.get(lba) if m else ''}")
    return 0


async def tx_actor(tb: SlogTB, m: Model, t: int, ntx: int, thr: int, rng: random.Random, gen: int):
    pw, pb = tb.pw, tb.geo.page_bytes
    for _ in range(ntx):
        if tb.errors or gen != tb.gen:
            return
        tx = m.txev[t] = {}                           # lba -> events
        tr0, tl0 = set(m.trimmed), len(m.trim_log)    # TRIMs not yet flushed at its start, and later ones
        wrote = False
        frag_only = rng.random() < 0.4                # only small DIFFWRITEs and READs: an S-Log record
        if rng.random() < 0.3:
            st, _ = await tb.do(OP_BEGIN, txid=t)
            if st != OK:
                tb.errors.append(f"TX_BEGIN {t}: status {st:#x}")
        for _ in range(rng.randint(1, 8)):
            await ClockCycles(tb.dut.clk, rng.choice([0, 0, rng.randint(1, 300)]))
            mine = [x for x in tx if x not in m.frozen]
            r = rng.random()
            if mine and r < 0.45:
                x = rng.choice(mine)
            else:
                free = [x for x in range(m.nlbas) if x not in m.owner and x not in m.busy]
                if not free or len(tx) >= 6:
                    continue
                x = rng.choice(free[:24] if rng.random() < 0.7 else free)   # a hot set: fragments pile up
            m.owner[x] = t
            tx.setdefault(x, [])
            m.busy.add(x)
            try:
                if not await tx_op(tb, m, t, tx, x, thr, rng, frag_only):
                    return
            finally:
                m.busy.discard(x)
            wrote = wrote or any(e[0] != "cand" for e in tx[x])
        await ClockCycles(tb.dut.clk, rng.choice([0, rng.randint(1, 200)]))
        m.ending.add(t)                              # no concurrent writer from here
        while any(x in m.busy for x in tx):         # a concurrent plain WRITE completes first
            await RisingEdge(tb.dut.clk)
        wrote = any(tx.values())
        r = rng.random()
        new = {x: m.view(tx, x) for x in tx}
        # TRIMs whose UNMAP may have reached the backend after a RESERVE of this tx saw the LBA mapped:
        # not flushed at its start, or completed since (a FLUSH in between does not matter)
        trimmed = tr0 | set(m.trim_log[tl0:]) | set(m.trimmed)
        if r < 0.15:
            st, _ = await tb.do(OP_ABORT, txid=t)
            exp = OK if wrote else TX_EMPTY
            tb.stats["tx_aborts"] += 1
            new = {x: [m.contended[x]] for x in tx if x in m.contended}
        elif r < 0.3 and not frag_only and [x for x in tx if x not in m.frozen]:
            x = rng.choice([x for x in tx if x not in m.frozen])
            words = [rng.getrandbits(32) for _ in range(pw)]
            st, _ = await tb.do(OP_WRITE, lba=x, txid=t, flags=COMMIT, dptr=tb.buf(words))
            new[x] = [tuple(words)]
            exp = OK
            tb.stats["tx_commits"] += 1
        else:
            st, _ = await tb.do(OP_COMMIT, txid=t)
            exp = OK if wrote else TX_EMPTY
            tb.stats["tx_commits"] += 1
            r = max(r, 0.3)                          # (a TX_COMMIT: a frag-only tx's r in [0.15, 0.3) too)
        # (only LBAs of t with nothing but small DIFFWRITEs, i.e. fragments: a trimmed LBA t wrote as
        # a full page must not hide a rejection for another reason, e.g. more than SLOG_TXFULL full pages)
        frag_trimmed = [x for x in tx if x in trimmed and tx[x] and
                        all(e[0] == "diff" and e[3] == "small" for e in tx[x])]
        if st == core.TX_FULL and exp == OK and r >= 0.3 and frag_trimmed:
            # §11.3 / §11.4: a fragment reserved while the LBA's TRIM was still in the write buffer (the
            # backend still mapped it); its UNMAP, written back before the record, makes the backend
            # reject the record: the commit is an abort, answered TX_FULL
            tb.stats["commit_refused_trim"] = tb.stats.get("commit_refused_trim", 0) + 1
            new = {x: [m.contended[x]] for x in tx if x in m.contended}
            st = exp
        if st != exp:
            tb.errors.append(f"tx {t} end (lbas {sorted(tx)}): status {st:#x}, expected {exp:#x}; "
                             f"history: {[(x, m.hist.get(x)) for x in tx]}; tx {t}: {m.hist.get(('tx', t), [])[-4:]}")
            return
        for x in tx:
            if st == OK and r >= 0.15 and tx[x] and all(e[0] == "diff" and e[3] == "small" for e in tx[x]):
                m.smalls.setdefault(x, []).extend(e for e in tx[x])
            m.note(x, f"tx {t} end op {('abort' if r < 0.15 else 'commit')} st {st}: {len(new.get(x, []))} cands")
            if x in new:
                m.committed[x] = new[x]
            m.owner.pop(x, None)
            m.frozen.discard(x)
            m.contended.pop(x, None)
        m.txev.pop(t, None)
        m.ending.discard(t)
        m.note(("tx", t), f"ended {st} lbas {sorted(tx)} ({'abort' if r < 0.15 else 'commit'}) "
                          f"{[(x, [e[0] + str(len(e[2]) if e[0] == 'diff' else '') for e in tx[x]]) for x in tx]}")


async def tx_op(tb, m, t, tx, x, thr, rng, frag_only) -> bool:
    pw, pb = tb.pw, tb.geo.page_bytes
    if True:
        if True:
            r = rng.random()
            if frag_only and r < 0.75:
                r = 0.0
            elif frag_only:
                r = 0.9
            if r < 0.55:                                # DIFFWRITE
                kind = "small" if frag_only else rng.choices(["small", "large", "fua"], [8, 2, 1])[0]
                if kind == "large" and thr <= pb - 4:
                    n = rng.randrange(thr, pb + 1, 4) if thr < pb else pb
                    n = max(4, min(n - n % 4, pb))
                else:
                    kind = "small" if kind == "large" else kind
                    n = 4 * rng.randint(1, max(1, min(thr // 4 - 1, 24)))
                off = 4 * rng.randint(0, (pb - n) // 4)
                words = [rng.getrandbits(32) for _ in range(n // 4)]
                st, res = await tb.do(OP_DIFF, lba=x, txid=t, flags=FUA if kind == "fua" else 0,
                                      dptr=tb.buf(words), aux=off | n << 16)
                if st != OK or res != 1:
                    tb.errors.append(f"DIFFWRITE tx {t} lba {x} off {off} len {n}: status {st:#x} result {res}")
                    return False
                tx[x].append(("diff", off // 4, words, kind))
                m.note(x, f"tx {t} DIFF {kind} off {off} len {n}")
                tb.stats[f"diff_{kind}"] += 1
                wrote = True
            elif r < 0.75:                              # WRITE (a full page of t)
                words = [rng.getrandbits(32) for _ in range(pw)]
                st, res = await tb.do(OP_WRITE, lba=x, txid=t, dptr=tb.buf(words))
                if st != OK:
                    tb.errors.append(f"WRITE tx {t} lba {x}: status {st:#x}")
                    return False
                tx[x] = [("full", tuple(words))]
                m.note(x, f"tx {t} WRITE w0 {words[0]:#x}")
                wrote = True
            else:                                       # READ (read your writes)
                st, got = await tb.read(x, txid=t)
                if st != OK:
                    tb.errors.append(f"READ tx {t} lba {x}: status {st:#x}")
                    return False
                own = any(e[0] == "diff" for e in tx[x])
                if check_read(tb, f"tx {t} READ lba {x} (events {[e[0] for e in tx[x]]})", got, m.view(tx, x), m, x):
                    tb.stats["reads_checked"] += 1
                    tb.stats["tx_reads_own"] += int(own)
    return True


async def plain_actor(tb: SlogTB, m: Model, nops: int, rng: random.Random, gen: int):
    pw = tb.pw
    for _ in range(nops):
        if tb.errors or gen != tb.gen:
            return
        await ClockCycles(tb.dut.clk, rng.choice([0, rng.randint(1, 400)]))
        r = rng.random()
        if r < 0.06:
            snap = set(m.trimmed)
            st, _ = await tb.do(OP_FLUSH)
            m.trimmed -= snap
            tb.stats["flushes"] += 1
            if st != OK:
                tb.errors.append(f"FLUSH: status {st:#x}")
            continue
        if r < 0.14:
            # a concurrent writer: a plain WRITE of an LBA an open tx holds only small DIFFWRITEs of
            cont = [x for x, t in m.owner.items() if x not in m.busy and x not in m.frozen and t not in m.ending and
                    m.txev.get(t, {}).get(x) and all(e[0] == "diff" and e[3] == "small" for e in m.txev[t][x])]
            if cont:
                x = rng.choice(cont)
                m.frozen.add(x)
                m.busy.add(x)
                old = m.cands(x)
                words = tuple(rng.getrandbits(32) for _ in range(pw))
                st, _ = await tb.do(OP_WRITE, lba=x, dptr=tb.buf(list(words)))
                m.busy.discard(x)
                if st != OK:
                    tb.errors.append(f"plain WRITE lba {x} (contended): status {st:#x}")
                    return
                tb.stats["contended"] += 1
                m.note(x, f"plain WRITE (contended) w0 {words[0]:#x}")
                # the owner's events stay; its view is over the plain version or the old one
                m.committed[x] = [words] + [c for c in old if c != words]
                m.contended[x] = words
                continue
        free = [x for x in range(m.nlbas) if x not in m.owner and x not in m.busy]
        if not free:
            continue
        x = rng.choice(free[:24] if rng.random() < 0.7 else free)
        m.busy.add(x)
        try:
            if r < 0.5:
                words = tuple(rng.getrandbits(32) for _ in range(pw))
                st, _ = await tb.do(OP_WRITE, lba=x, flags=FUA if rng.random() < 0.2 else 0,
                                    dptr=tb.buf(list(words)))
                if st != OK:
                    tb.errors.append(f"plain WRITE lba {x}: status {st:#x}")
                    return
                m.committed[x] = [words]
                m.smalls.pop(x, None)
                m.note(x, f"plain WRITE w0 {words[0]:#x}")
                tb.stats["plain_writes"] += 1
            elif r < 0.6:
                st, _ = await tb.do(OP_TRIM, lba=x)
                if st != OK:
                    tb.errors.append(f"TRIM lba {x}: status {st:#x}")
                    return
                m.committed[x] = [m.zero]
                m.trimmed.add(x)
                m.trim_log.append(x)
                m.smalls.pop(x, None)
                m.note(x, "TRIM")
                tb.stats["trims"] += 1
            else:
                st, got = await tb.read(x)
                if st != OK:
                    tb.errors.append(f"READ lba {x}: status {st:#x}")
                    return
                if check_read(tb, f"plain READ lba {x}", got, m.cands(x), m, x) == 1:
                    m.committed[x] = [got]
                    tb.stats["reads_checked"] += 1
        finally:
            m.busy.discard(x)


async def merge_actor(tb: SlogTB, m: Model, rng: random.Random, gen: int, done: list):
    while not done[0] and gen == tb.gen and not tb.errors:
        await ClockCycles(tb.dut.clk, rng.randint(200, 3000))
        x = rng.choice(list(m.smalls)) if m.smalls and rng.random() < 0.7 else rng.randrange(min(24, m.nlbas))
        b = await tb.fw_call(gen, op=FW_MERGE, lpn=x)
        if b is None:
            return
        st = b[0]["status"]
        if st not in (0, 1, 2):
            tb.errors.append(f"MERGE lpn {x}: status {st}")
            return
        tb.stats[("merges", "merges_stale", "merges_none")[st]] += 1
        if st < 2:
            m.note(x, f"MERGE st {st}")


async def cut_phase(tb: SlogTB, m: Model, thr: int, rng: random.Random, gen: int, other: bool = False) -> dict:
    """After the clean part (everything durable and read back): up to 4 transactions, each a full page
    (WRITE) and small DIFFWRITEs of mapped LBAs (an S-Log record with full META-PUs), committed at
    once; the power is cut at a random cycle while the commits are in flight (or after them). Returns
    {txid: (its LBAs, the new pages, completed status or None)} for the oracle's INV-ATOM / DUR check."""
    pw, pb = tb.pw, tb.geo.page_bytes
    mapped = [x for x in range(m.nlbas) if len(m.cands(x)) == 1 and m.cands(x)[0] != m.zero]
    rng.shuffle(mapped)
    txs = {}
    if other:
        # the `other` power cycles (run_slog): t = 1 (a full page and fragments), then u = 2 (5-6
        # full pages, written back behind t's), then at once t's commit, then u's
        txs[2] = [mapped.pop() for _ in range(min(len(mapped) - 2, rng.randint(5, 6)))]
        txs[1] = [mapped.pop() for _ in range(min(len(mapped), rng.randint(2, 3)))]
    else:
        for t in range(1, min(tb.ntx, 4) + 1):
            if len(mapped) < 2:
                break
            txs[t] = [mapped.pop() for _ in range(min(len(mapped), rng.randint(2, 4)))]
    new: dict[int, dict] = {}

    # chained (half the cycles, below): two full pages a tx (more dies busy with its pages)
    chained = rng.random() < 0.5

    async def build(t, lbas):
        ev = {x: [] for x in lbas}
        for i, x in enumerate(lbas):
            if i == 0 or (chained and i == 1) or (other and t == 2) or rng.random() < 0.15:   # a full page
                words = [rng.getrandbits(32) for _ in range(pw)]
                st, _ = await tb.do(OP_WRITE, lba=x, txid=t, dptr=tb.buf(words))
                ev[x] = [("full", tuple(words))]
            else:                                     # 1-2 small DIFFWRITEs: a FRAG slot
                for _ in range(rng.randint(1, 2)):
                    n = 4 * rng.randint(1, max(1, min(thr // 4 - 1, 16)))
                    off = 4 * rng.randint(0, (pb - n) // 4)
                    words = [rng.getrandbits(32) for _ in range(n // 4)]
                    st, _ = await tb.do(OP_DIFF, lba=x, txid=t, dptr=tb.buf(words), aux=off | n << 16)
                    if st != OK:
                        break
                    ev[x].append(("diff", off // 4, words, "small"))
            if st != OK:
                tb.errors.append(f"cut phase: tx {t} lba {x}: status {st:#x}")
                return
        new[t] = {x: Model.apply(m.cands(x)[0], ev[x]) for x in lbas}
    done: dict[int, int] = {}

    async def commit(t, delay):
        await ClockCycles(tb.dut.clk, delay)
        if gen != tb.gen:                             # cut before it was sent
            return
        st, _ = await tb.do(OP_COMMIT, txid=t)
        done[t] = st
    # chained (half the cycles): each tx built after the previous one's commit was sent, its commit
    # sent at once, so its pages follow the previous record in the write-back order and are the
    # among the requests its own record does not wait for (transactions' data pages, architecture §11.4):
    # the record's log pages may then be durable at the cut while one of its full pages is not
    # (`gap_incomplete`)
    if other:
        # u's pages are written back (in order, as soon as the backend takes them) after t's, just
        # before t's record, which waits for none of them (architecture §11.4); u commits after t's
        # record. The cut: right after the k-th NAND program since t's first WRITE (k around t's
        # record's program), or at once when both commits have completed
        p0 = int(tb.dut.cnt_nand_prog.value)
        # the firmware model hands out no block until a page has waited for `starve` cycles
        # (test_ats_ssd_core.py `_firmware`): a die whose block ends under u's pages holds them
        # while the other dies program t's record
        tb.fw_cycles, tb.starve = 0, rng.randint(1000, 4000)
        # a reader of the other mapped LBAs (NAND reads: a channel busy with them delays the
        # programs of its dies, u's among them, while the other channel programs t's record)
        rd_lbas = [x for x in mapped]

        async def reader():
            while gen == tb.gen and len(done) < len(new) and rd_lbas:
                x = rng.choice(rd_lbas)
                st, got = await tb.read(x)
                if gen != tb.gen:
                    return
                if st != OK:
                    tb.errors.append(f"cut phase (other): READ lba {x}: status {st:#x}")
                    return
                if check_read(tb, f"cut phase (other): READ lba {x}", got, m.cands(x), m, x) == 1:
                    tb.stats["reads_checked"] += 1
        readers = []
        for t in (1, 2):
            if t == 2:
                readers = [cocotb.start_soon(reader()) for _ in range(3)]
            await build(t, txs[t])
            if tb.errors or gen != tb.gen:
                return {}
        tasks = readers + [cocotb.start_soon(commit(1, 0)), cocotb.start_soon(commit(2, rng.randint(1, 40)))]
        k = rng.randint(len(txs[2]), len(txs[2]) + len(txs[1]) + 2)
        n = 0
        while len(done) < len(new) and n < 2_000_000 and int(tb.dut.cnt_nand_prog.value) - p0 < k:
            await RisingEdge(tb.dut.clk)
            n += 1
        at_cut = dict(done)
        tb.dut._log.info("cut phase (other): t 1 %d lbas, u 2 %d pages, cut after %d cycles at program %d, "
                         "commits completed %s", len(txs[1]), len(txs[2]), n, k, sorted(at_cut))
        tb.stats["cut_mid"] += len(at_cut) < len(new)
        tb.stats["cut_tx_done"] += len(at_cut)
        await tb.cut()
        for w in tb.waiting.values():
            w[0].set()
        await cocotb.triggers.Combine(*tasks)
        tb.waiting.clear()
        tb.free_tags = list(range(64))
        return {t: (sorted(new[t]), new[t], at_cut.get(t)) for t in new}
    if chained:
        tb.stats["cut_chained"] = tb.stats.get("cut_chained", 0) + 1
        tasks = []
        for t, lbas in txs.items():
            await build(t, lbas)
            if tb.errors or gen != tb.gen:
                return {}
            tasks.append(cocotb.start_soon(commit(t, 0)))
    else:
        await cocotb.triggers.Combine(*[cocotb.start_soon(build(t, lbas)) for t, lbas in txs.items()])
        if tb.errors or gen != tb.gen:
            return {}
        tasks = [cocotb.start_soon(commit(t, rng.randint(0, 300))) for t in new]
    # the cut: a random number of cycles after the first commit's completion (others in flight),
    # or at once when all have completed; in half of the odd power cycles before any completes
    # (never in the first: a run always has a cut after a completed commit)
    early = tb.stats["slog_cycles"] % 2 == 1 and rng.random() < 0.5
    extra, n = rng.randint(0, 4000), 0
    while len(done) < len(new) and n < 2_000_000:
        await RisingEdge(tb.dut.clk)
        n += 1
        if early and n >= extra or done and not early and (extra := extra - 1) <= 0:
            break
    at_cut = dict(done)
    tb.dut._log.info("cut phase: %d txs, cut after %d cycles (%s, extra %d), %d commit(s) completed",
                     len(new), n, "early" if early else "after the first", extra, len(at_cut))
    tb.stats["cut_mid"] += len(at_cut) < len(new)
    tb.stats["cut_tx_done"] += len(at_cut)
    await tb.cut()
    for w in tb.waiting.values():                    # commands in flight at the cut never complete
        w[0].set()
    await cocotb.triggers.Combine(*tasks)
    tb.waiting.clear()
    tb.free_tags = list(range(64))
    return {t: (sorted(new[t]), new[t], at_cut.get(t)) for t in new}


async def slog_cycle(tb: SlogTB, ntx: int, other: bool = False):
    rng = tb.rng
    await tb.power_on()
    thr = rng.choice([64, 128, 256, 512])
    tb.dut.slog_thr.value = thr
    tb.dut._log.info("power cycle: SLOG_THR %d", thr)
    thr_eff = min(thr, tb.geo.page_bytes - 16)
    lpgn0 = int(tb.dut.slog_lpgn.value)
    m = Model(tb.pw, min(tb.num_lbas, 48))
    gen = tb.gen
    done = [False]
    if other:
        # (run_slog's `other` cycles) no workload: 20-44 LBAs written plainly (the dies' open blocks
        # near their ends), then the cut phase
        for x in range(rng.randint(20, 44)):
            words = [rng.getrandbits(32) for _ in range(tb.pw)]
            st, _ = await tb.do(OP_WRITE, lba=x, dptr=tb.buf(words))
            if st != OK:
                tb.errors.append(f"other cycle: WRITE lba {x}: status {st:#x}")
                return
            m.committed[x] = [tuple(words)]
    else:
        acts = [cocotb.start_soon(tx_actor(tb, m, t, ntx, thr_eff, random.Random(rng.getrandbits(32)), gen))
                for t in range(1, min(tb.ntx, 4) + 1)]
        acts += [cocotb.start_soon(plain_actor(tb, m, 3 * ntx, random.Random(rng.getrandbits(32)), gen))
                 for _ in range(2)]
        mg = cocotb.start_soon(merge_actor(tb, m, random.Random(rng.getrandbits(32)), gen, done))
        for a in acts:
            await a
        done[0] = True
        await mg
    if tb.errors:
        return
    # clean end: FLUSH, every LBA read back, the cut, the recovery oracle
    st, _ = await tb.do(OP_FLUSH)
    if st != OK:
        tb.errors.append(f"final FLUSH: status {st:#x}")
    for x in range(m.nlbas):
        st, got = await tb.read(x)
        if st != OK:
            tb.errors.append(f"final READ lba {x}: status {st:#x}")
        elif check_read(tb, f"final READ lba {x}", got, m.cands(x), m, x) == 1:
            m.committed[x] = [got]
            tb.stats["reads_checked"] += 1
    tb.stats["slog_lpgn"] = tb.stats.get("slog_lpgn", 0) + int(tb.dut.slog_lpgn.value) - lpgn0
    # then mixed transactions committed at once and the cut among their commits
    cut_txs = await cut_phase(tb, m, thr_eff, rng, gen, other) if not tb.errors else {}
    if tb.errors:
        return
    if not cut_txs:
        await tb.cut()
    progs = tb.counters["cnt_nand_prog"]
    tb.stats["max_progs"] = max(tb.stats.get("max_progs", 0), progs)
    # the pages a program may have failed on: every page of the blocks reported grown bad in this
    # power cycle (the backend reports the block of every failed program, cut() drains the reports)
    g = tb.geo
    failed = {g.ppn(c * g.ways + w, b, pg) for c, w, b in tb.grown_bad for pg in range(g.ppb)}
    rec = recover(tb.paths, tb.geo, failed=failed)
    tb.stats["slog_full_failed"] = tb.stats.get("slog_full_failed", 0) + rec.slog_full_failed
    if rec.slog_failed_info:
        tb.dut._log.info("oracle: full META-PUs naming a failed first program (txid, lpn, m1, pending page): %s",
                         [(t, l, hex(a), hex(b)) for t, l, a, b in rec.slog_failed_info])
    tb.stats["oracle_slog_records"] += rec.slog_commits + rec.slog_after_gap
    tb.stats["gap_records"] += rec.slog_after_gap
    # records durable after the gap without all their full pages (not applied: §10.5 step 3)
    tb.stats["gap_incomplete"] += rec.slog_incomplete
    tb.stats["recovered_frags"] += sum(len(f) for f in rec.frags.values())
    if other and cut_txs:
        gap_other(tb, rec, cut_txs)
    tb.stats["mixed_records"] += sum(1 for r in slog_records_on_dies(rec, tb.geo)
                                     if any(mp.is_diff for mp in r.metas) and any(not mp.is_diff for mp in r.metas))
    if rec.slog_full_mismatch:
        # a prefix record's full META-PUs are not t's pages written before it (persistence 10.5 step 2)
        info = [(t, l, a if a is None else hex(a), b if b is None else hex(b),
                 "in a grown-bad block" if a in failed else "not failed") for t, l, a, b in rec.slog_mismatch_info]
        tb.errors.append(f"oracle: {rec.slog_full_mismatch} S-Log record(s) whose full META-PUs differ from "
                         f"the transaction's pages: (txid, lpn, META-PU's PPN, pending page's PPN) {info}; "
                         f"grown bad blocks (chan, way, block) {tb.grown_bad}")

    def recovered(x):
        data = read_lpn(tb.geo, rec, x)
        return tuple(bytes_to_words(data)) if data is not None else m.zero
    in_cut = {x for lbas, _, _ in cut_txs.values() for x in lbas}
    for x in range(m.nlbas):
        if x in in_cut:
            continue
        if not check_read(tb, f"recovered lba {x} (oracle: base {rec.mapping.get(x)}, "
                              f"{len(rec.frags.get(x, []))} fragments)", recovered(x), m.cands(x), m, x):
            break
        tb.stats["oracle_lbas"] += 1
    # INV-ATOM: a transaction committed at the cut is recovered all new or all old; INV-DUR: new when
    # its commit completed OK before the cut
    for t, (lbas, pages, st) in cut_txs.items():
        got = {x: recovered(x) for x in lbas}
        is_new = all(got[x] == pages[x] for x in lbas)
        is_old = all(got[x] == m.cands(x)[0] for x in lbas)
        if st is not None and st != OK:
            tb.errors.append(f"cut phase: TX_COMMIT {t} completed {st:#x}")
        elif st == OK and not is_new:
            tb.errors.append(f"INV-DUR: tx {t} committed OK before the cut, recovered "
                             f"{[x for x in lbas if got[x] != pages[x]]} of {lbas} not its pages")
        elif not (is_new or is_old):
            tb.errors.append(f"INV-ATOM: tx {t} (lbas {lbas}) recovered partly: new "
                             f"{[x for x in lbas if got[x] == pages[x]]}, old "
                             f"{[x for x in lbas if got[x] == m.cands(x)[0]]}")
        else:
            tb.stats["cut_tx_new" if is_new else "cut_tx_old"] += 1
            tb.stats["oracle_lbas"] += len(lbas)
    tb.stats["other_cycles" if other else "slog_cycles"] += 1


def gap_other(tb: SlogTB, rec, cut_txs: dict) -> None:
    """`gap_other` (an `other` cycle): t's (txid 1) record applied after the gap (recovered new,
    its commit point at or above the prefix's end) while one of u's (txid 2) pages, written before
    t was built, has no valid copy on the dies, and every seq missing between the prefix's end and
    the record's first log page is one of them: since the FLUSH the only requests before t's record
    were u's and t's data pages, and t's are there (applied), so the first missing seq (the prefix's
    end) is a page of u (persistence §10.5 step 3)."""
    g = tb.geo
    seqs, u_pages = set(), set()
    for _, mt, _ in pages_on_dies(rec, g):
        seqs.add(mt.seq)
        if mt.kind == 0 and mt.txid == 2 and not mt.flags & (F_COMMIT | F_ABORT):
            u_pages.add(mt.lpn)
    lbas_t, pages_t, _ = cut_txs[1]
    tb.dut._log.info("gap_other: prefix end %d, %d valid pages beyond it, records of tx 1 %s, u's pages missing %s",
                     rec.prefix_end, sum(1 for q in seqs if q > rec.prefix_end), [(r.first_seq, r.commit_seq) for r in slog_records_on_dies(rec, g)
                                                    if r.txid == 1],
                     [x for x in cut_txs[2][0] if x not in u_pages])
    if not all(tuple(bytes_to_words(d)) == pages_t[x] if isinstance(d := read_lpn(g, rec, x), bytes) else False
               for x in lbas_t):
        return                                        # t recovered old: no record applied
    recs = [r for r in slog_records_on_dies(rec, g) if r.txid == 1 and r.commit_seq >= rec.prefix_end]
    missing_u = [x for x in cut_txs[2][0] if x not in u_pages]
    for r in recs:
        holes = [s for s in range(rec.prefix_end, r.first_seq) if s not in seqs]
        tb.dut._log.info("gap_other check: record of tx 1 seqs %d..%d, prefix end %d, holes %s, u's pages "
                         "missing %s", r.first_seq, r.commit_seq, rec.prefix_end, holes, missing_u)
        if holes and holes[0] == rec.prefix_end and missing_u and len(holes) <= len(missing_u):
            tb.stats["gap_other"] = tb.stats.get("gap_other", 0) + 1


@cocotb.test()
async def run_slog(dut):
    seed = int(os.environ.get("ATS_SEED", "1"))
    mode = os.environ.get("ATS_CORE_MODE", "bp")
    image_dir = Path(os.environ["ATS_CORE_IMAGES"])
    image_dir.mkdir(parents=True, exist_ok=True)
    tb = SlogTB(dut, seed, idle=mode != "plain", backpressure=mode != "plain", image_dir=image_dir)
    # the firmware model hands the plan's blocks and collects nothing (no GC): a power cycle must
    # program fewer pages than the plan holds (15 blocks x 8 pages a die); 15 transactions an actor
    # program about 200-300 (stats `max_progs`); more would stall the device for want of blocks
    cycles = int(os.environ.get("ATS_SLOG_CYCLES", "4"))
    faults = dict(kv.split("=") for kv in os.environ.get("ATS_NAND_FAULTS", "").split(",") if "=" in kv)
    pfail = int(faults.get("pfail_ppm", 0)) > 0          # program failures on (the long sweep's even seeds)
    ntx = int(os.environ.get("ATS_SLOG_TXS", "15"))
    for _ in range(cycles):
        await slog_cycle(tb, ntx)
        if tb.errors:
            break
    # then the `other` power cycles (short: 12 plain pages, then cut_phase(other=True)): u's pages
    # written back, t built and committed (its record), u committed; the cut at a program around
    # t's record's, so that t's record may be durable after the gap while one of u's earlier pages
    # is not (`gap_other`, persistence §10.5 step 3)
    others = int(os.environ.get("ATS_SLOG_OTHER", "8"))
    for _ in range(others if not tb.errors else 0):
        await slog_cycle(tb, ntx, other=True)
        if tb.errors:
            break
    # up to 8 more while none met `gap_other` (the cut's program is drawn at random around t's
    # record's: a run of 8 may miss the window; seed 1 meets it in its first 8, so no extra there)
    extra = 0
    while others and not tb.stats.get("gap_other") and extra < 8 and not tb.errors:
        await slog_cycle(tb, ntx, other=True)
        extra += 1
    tb.stats["other_extra"] = extra
    tb.stats["slog_rsv_ok"] = int(dut.slog_rsv_total.value)
    tb.stats["slog_records_sent"] = int(dut.slog_rec_total.value)
    tb.stats["slog_records_beside"] = int(dut.slog_rec_beside.value)
    tb.stats["slog_records_paired"] = int(dut.slog_rec_pair.value)     # (SLOG_RIF > 1 only)
    tb.stats["slog_records_packed"] = int(dut.slog_rec_packed.value)   # (SLOG_PACK 1 with SLOG_RIF > 1 only)
    tb.stats["cnt_slog_err"] = int(dut.cnt_slog_err.value)
    dut._log.info("slog campaign seed %d: %s", seed, json.dumps(tb.stats))
    out = os.environ.get("ATS_CORE_STATS")
    if out:
        Path(out).write_text(json.dumps(tb.stats))
    assert not tb.errors, "\n".join(tb.errors[:20])
    s = tb.stats
    assert s["slog_cycles"] == cycles and s["other_cycles"] == others + extra
    if int(os.environ.get("ATS_SLOG_RIF", "1")) > 1:   # (records in flight together were met)
        assert s["slog_records_paired"] > 0, f"SLOG_RIF > 1: no record sent beside another: {s}"
        if int(os.environ.get("ATS_SLOG_PACK", "0")):     # (a record written into a page left open)
            assert s["slog_records_packed"] > 0, f"SLOG_PACK 1: no record packed behind another: {s}"
    # a record applied after the gap with another tx's earlier page missing (seed 1: see the testplan)
    assert others == 0 or s["gap_other"] > 0, "no record applied after the gap before another tx's missing page"
    assert s["slog_rsv_ok"] > 0, "no RESERVE answered OK: no fragment taken"
    assert s["slog_records_sent"] > 0 and s["slog_lpgn"] > 0, "no S-Log record sent / no log page accepted"
    assert s["oracle_slog_records"] > 0, "the recovery oracle found no S-Log record on the dies"
    # records with full META-PUs and fragments (architecture 11.3: a tx with full pages sends its
    # record), and cuts among the commits of such transactions
    assert s["mixed_records"] > 0, "no S-Log record with both full-page and fragment META-PUs"
    assert s["cut_tx_new"] > 0, "no transaction of the cut phase recovered"
    # a cut with a commit of the cut phase still in flight, and a tx of it recovered old (seed 1 of
    # make test reaches both in its 2 power cycles)
    assert s["cut_mid"] > 0 and s["cut_tx_old"] > 0, "no cut among the cut phase's commits / no tx recovered old"
    if pfail:
        # persistence §10.2: a record whose full META-PU names a failed first program, replayed in the prefix
        assert s["prog_fail"] > 0 and s["slog_full_failed"] > 0, "no S-Log record naming a failed program"
    assert s["tx_reads_own"] > 0 and s["diff_small"] > 0 and s["diff_large"] + s["diff_fua"] > 0
    assert s["merges"] > 0, "no MERGE merged anything"
    assert s["contended"] > 0, "no concurrent writer of a tx's DIFFWRITE LBA"
