# SPDX-License-Identifier: Apache-2.0
"""Power cut during NCQ traffic through the SATA front end and the device core (issue 15): the
invariants hold after recovery.

Top: ats_sata_core_tb.sv = ats_sata in front of cocotb_tests/ats_ssd_core's test top (ats_ssd_core +
NAND die models with image files and power cuts). The Python side reuses the ats_ssd_core TB class
(`test_ats_ssd_core.TB`) for everything but the host: the firmware model (blocks from the plan, grown
bad blocks, GC relocations, raw NAND operations, write-back holds), power-on (format, init, SEQSET),
the cut, and `check_recovery` (the independent oracle `atstb.recovery_oracle` rebuilds the state
from the die images alone: INV-LBA, INV-DUR, INV-ORDER, INV-ATOM, INV-BOUND, the clean-shutdown
comparison and the valid-page counts). This file replaces the host: the SATA host model
`atstb.sata_host` (transport + command layers over the Python link layer, written from
docs/host-interface.md §2) sends the traffic, and what it saw complete (the Set Device Bits /
Register D2H of each command) fills the same host view the oracle's checks compare against.

Testplan (docs/host-interface.md §2.3, §2.5; design brief "Invariants"):
- traffic: READ / WRITE FPDMA QUEUED of 1-4 pages with random tags, some FUA (Device bit 7), some
  BARRIER (Device bit 0), some ORDERED (Device bit 1), random PRIO; "burst" power cycles start with
  32 one-page writes back to back (the write buffer fills, later writes wait in the core's queue,
  32 deep as NCQ: QDEPTH = 32, since ats_sata takes a command FIS only when the core took the last
  descriptor) and go on with one-page NCQ commands only, for deep queues; TxSSD transactions
  (TXID in Count 12:8, the COMMIT write = the commit block with Count 13, tx reads = read your
  writes, abort = FLUSH CACHE EXT tag field 1, transactions larger than a tx table whose commit must
  fail); FLUSH CACHE EXT; DATA SET MANAGEMENT TRIM; READ / WRITE DMA EXT; the recovery command
  (FLUSH CACHE EXT tag field 2) in the middle of traffic too; refused commands (TXID above NUM_TX:
  ERR ABRT, an LBA range past the capacity: ERR IDNF);
- every read compared with the host view (latest completed write of each LBA; a tx read: its own
  writes first; a read racing a commit: either side); every status against §2.5's mapping of the
  core's status (OK 0x40/0, BAD_LBA 0x41/IDNF, TX_FULL / INDEX_FULL / TX_EMPTY 0x41/ABRT);
- a cut at a random cycle (in some power cycles held until a die is busy, to tear a page in
  flight; in others at the cycle the core completes a COMMIT write, before its Set Device Bits:
  the commit is durable and the host does not know it: all or nothing);
- "acknowledged" = reported OK to the SATA host (Set Device Bits for NCQ, Register D2H for the
  non-queued commands): a FUA write, every write acknowledged before an acknowledged FLUSH, and
  every acknowledged commit (the whole tx) must survive; a tx without an acknowledged commit must
  be gone (INV-ATOM: a tx whose commit was in flight: all or nothing); epochs closed by barriers
  (INV-ORDER); every LBA holds one of its own versions (INV-LBA);
- every eighth power cycle (the first one included) starts with a one-page COMMIT write, a tx write
  and its tx read, and ends cleanly (every tx committed or aborted, FLUSH, reads through the NAND,
  valid-page counts): the recovered state must equal the host view exactly;
- after power returns, ats_sata and the core restart (one reset) on a freshly formatted device
  (this test top has no recovering firmware: the oracle is the recovery), and the host sends the
  recovery command before any traffic: it must complete OK and issue exactly one TX_ABORT (tag 32)
  for each txid 1..NUM_TX to the core;
- the SATA host checks every FIS the device sends (layouts, tags, offsets, every byte moved once);
  a few FISes are corrupted (the device answers R_ERR, the host re-sends) or answered R_ERR (the
  device re-sends); ats_sata's cnt_proto (core traffic of no command) must stay 0;
- coverage each run must reach (else it fails): reads checked, durability checked, commits, aborts,
  tx reads, INV-ATOM checks, acknowledged FUA writes, FLUSHes and barriers, 20 or more NCQ
  commands outstanding at once, out-of-order completions.

Environment: ATS_LONG=1 (4 seeds x 50 cuts), ATS_SATA_CORE_CUTS (cuts per run, default 6),
ATS_SATA_CORE_SEEDS (comma-separated seeds), ATS_PROFILE=<file> (cProfile of the campaign).
"""
from __future__ import annotations

import json
import os
import random
import struct
import sys
import time
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import RisingEdge

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
sys.path.insert(0, str(HERE.parent / "ats_ssd_core"))
import test_ats_ssd_core as base                                   # noqa: E402
from test_ats_ssd_core import (OP_ABORT, OP_FLUSH, OP_READ, OP_TRIM, OP_WRITE, OK, BAD_LBA,  # noqa: E402
                               BARRIER, COMMIT, FUA, Op, Tx)
from atstb import sata_host as H                                    # noqa: E402
from atstb.runner import ROOT, block_sources, run                   # noqa: E402
from atstb.sata_host import SataHost                                # noqa: E402
from atstb.streams import every_edge                                # noqa: E402
from atstb.trace import SATA_OUTPUTS, trace_outputs                    # noqa: E402

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
ST_OK = (0x40, 0x00)
ST_ABRT = (0x41, 0x04)
ST_IDNF = (0x41, 0x10)
NQ_TAG = 32
OP_TX_ABORT_DESC = 5          # §1 opcode of TX_ABORT
STALL = 300_000               # cycles without a completion while commands are outstanding: a hang


def sata_status(dev_status: int) -> tuple[int, int]:
    """§2.5: Status / Error of a §2 device status."""
    if dev_status == OK:
        return ST_OK
    if dev_status == BAD_LBA:
        return ST_IDNF
    if dev_status == 0x11:                                  # PROGRAM_FAIL
        return (0x61, 0x04)
    if dev_status == 0x10:                                  # MEDIA_ERROR
        return (0x41, 0x40)
    return ST_ABRT


class _CoreView:
    """This top seen as the core TB's (test_ats_ssd_core.TB reads the core as `dut.u_dut`; here the
    core is `u_core.u_dut`): every other name is the top's own."""

    def __init__(self, dut):
        object.__setattr__(self, "_top", dut)

    def __getattr__(self, name):
        top = object.__getattribute__(self, "_top")
        return top.u_core.u_dut if name == "u_dut" else getattr(top, name)


class SataCoreTB(base.TB):
    """The ats_ssd_core TB with its host replaced by ats_sata + the SATA host model."""

    def __init__(self, dut, seed: int, image_dir: Path):
        self.sata_seed = seed
        super().__init__(dut, seed, idle=True, backpressure=True, image_dir=image_dir)
        self.ntx_used = self.ntx                     # every txid of the core (the recovery aborts them all)
        self.host: SataHost | None = None
        self.hrng = random.Random(seed * 7919 + 3)
        dut.phy_ready.value = 0
        dut.phy_rx_data.value = 0
        dut.phy_rx_charisk.value = 0
        self.mon_on = False
        self.mon: list[tuple] = []
        self.mon_cpl: list[tuple] = []
        every_edge(dut.clk, self._mon)
        trace_outputs(dut, dut.clk, SATA_OUTPUTS, "ats_sata_core")    # ATS_TRACE=<file>: refactoring checks
        self.hstats: dict[str, int] = {}
        for k in ("sdb", "sdb_multi", "ooo", "setups", "setup_nonzero", "setup_backwards", "rd_fis", "wr_fis",
                  "retries", "h2d_resent", "rerr_sent", "crc_bad_sent", "act", "ncq_err"):
            self.hstats[k] = 0
        self.stats.update(ncq_max=0, refused=0, idnf=0, recover_cmds=0, recover_mid=0, flushes_ok=0,
                          trims=0, dma_ext=0, fua_acked=0, barriers=0, ordered=0, sata_cycles=0,
                          cut_in_cmd=0)

    # ------------------------------------------------------------------ host side hooks
    def _host_streams(self, rng, idle, backpressure):
        pass                                         # the core's host ports belong to ats_sata

    def _dma(self):
        pass

    def _host_power_on(self):
        """A new SATA host at every power-on (the old one is stopped at the cut)."""
        self._stop_host()
        self.host = SataHost(self.dut, self.hrng, self.geo.page_bytes)
        self.dut.phy_ready.value = 1

    def _stop_host(self):
        h = self.host
        if h is None:
            return
        for k in self.hstats:
            self.hstats[k] += h.stats.get(k, 0)
        h.running = False
        self.host = None
        self.dut.phy_rx_data.value = 0
        self.dut.phy_rx_charisk.value = 0
        self.dut.phy_ready.value = 0

    def backend_state(self) -> dict:
        be = self.dut.u_core.u_dut.u_backend
        return {n: int(getattr(getattr(be, inst) if inst else be, n).value)
                for module, inst in base.BACKEND_UNITS.items() for n in base.PUBLIC[module]}

    def _mon(self):
        """The descriptors ats_sata hands the core, while mon_on."""
        if not self.mon_on:
            return
        d = self.dut
        if int(d.c_cmd_valid.value) and int(d.c_cmd_ready.value):
            self.mon.append((int(d.c_cmd_op.value), int(d.c_cmd_tag.value), int(d.c_cmd_txid.value)))
        if int(d.c_cpl_valid.value) and int(d.c_cpl_ready.value):
            self.mon_cpl.append((int(d.c_cpl_tag.value), int(d.c_cpl_status.value)))

    async def cut(self):
        # the front end's counters before the reset clears them
        self.sata_proto = int(self.dut.sata_cnt_proto.value)
        self.stats["sata_rx_drop"] = self.stats.get("sata_rx_drop", 0) + int(self.dut.sata_cnt_rx_drop.value)
        self.stats["sata_retry"] = self.stats.get("sata_retry", 0) + int(self.dut.sata_cnt_retry.value)
        self._stop_host()
        top = self.dut
        self.dut = _CoreView(top)                  # the core TB's cut() reads dut.u_dut.u_backend
        try:
            await super().cut()
        finally:
            self.dut = top

    # ------------------------------------------------------------------ after power-on
    async def recover_cmd(self):
        """The TxSSD recovery command before any traffic: OK, one TX_ABORT per txid to the core."""
        self.mon, self.mon_cpl, self.mon_on = [], [], True
        p0 = int(self.dut.cnt_nand_prog.value)
        c = self.host.flush_cmd(2)
        e0 = self.edges
        st, err, _ = await c.wait(400_000)
        self.mon_on = False
        self.stats["recover_cycles_max"] = max(self.stats.get("recover_cycles_max", 0), self.edges - e0)
        self.stats["recover_progs"] = self.stats.get("recover_progs", 0) + int(self.dut.cnt_nand_prog.value) - p0
        for _tag, cst in self.mon_cpl:
            k = f"recover_core_status_{cst:#x}"
            self.stats[k] = self.stats.get(k, 0) + 1
        self.stats["recover_cmds"] += 1
        if (st, err) != ST_OK:
            self.errors.append(f"recovery command after power-on: status {st:#x} error {err:#x}")
        exp = [(OP_TX_ABORT_DESC, NQ_TAG, t) for t in range(1, self.ntx + 1)]
        if sorted(self.mon) != exp:
            self.errors.append(f"recovery command: descriptors {self.mon}, expected {exp}")

    # ------------------------------------------------------------------ the host's traffic
    def page_bytes_of(self, lba: int, version: int) -> bytes:
        return struct.pack(f"<{self.pw}I", *self.page_words(lba, version))

    def _reset_view(self):
        self.ops: dict[int, list[Op]] = {}
        self.recent_w: list[int] = []
        self.view: dict[int, tuple] = {}
        self.flushes: list[tuple] = []
        self.version = 0
        self.content: dict[int, list[int]] = {}
        self.epoch = 0
        self.ncpl = 0
        self.txs = {t: Tx() for t in range(1, self.ntx + 1)}
        self.txlock: dict[int, int] = {}
        self.all_txs: list[list[Op]] = []
        self.inflight: dict[int, dict] = {}

    async def sata_workload(self, n_cmds: int, cut_at: int | None, clean: bool, cut_on_busy: bool,
                            cut_on_commit: bool, burst: bool = False):
        """One power cycle's traffic until the cut (or, clean, until the orderly end). `burst`: one-page
        commands back to back (deep NCQ queues: up to 32 tags outstanding)."""
        rng = self.rng
        self._reset_view()
        host = self.host
        done = len(host.completed)
        busy: dict[int, int] = {}       # lba -> reads in flight (> 0), or -1: a write / trim in flight
        self.burst_mode = burst
        free_tags = list(range(32))
        rng.shuffle(free_tags)
        by_tag: dict[int, dict] = {}
        sent = 0
        cycle = 0
        last_progress = 0
        phase = "random"
        # a clean power cycle starts with a one-page COMMIT write of a new tx: every run sees commits
        # acknowledged, whatever its cuts hit
        todo: list[dict] = []
        if clean:
            # then a tx write and a tx read of it (read your writes, once the write completed)
            w = {"k": "txw"}
            todo = [{"k": "txcommit"}, w, {"k": "txr", "w": w}]
        if burst:
            # a burst cycle starts with 32 one-page writes back to back (half of them FUA): the write
            # buffer fills, the later writes wait in the core's queue, every NCQ tag gets taken
            todo = [{"k": "deepw"} for _ in range(32)]
        self.gc_on = True
        nid = 0
        dut = self.dut
        # the loop runs every 4th cycle (completions are taken up to 3 cycles late, the cut cycle is
        # rounded), every cycle when it watches for a commit's completion to cut at
        step = 1 if cut_at is not None and cut_on_commit else 4
        while True:
            await self.cycles(step)                       # ClockCycles without a resume an edge
            cycle += step
            self.stats["sata_cycles"] += step
            if cut_at is not None:
                if cut_on_commit and int(dut.c_cpl_valid.value) and int(dut.c_cpl_tag.value) < 32:
                    c = by_tag.get(int(dut.c_cpl_tag.value))
                    if c is not None and c.get("commit") and int(dut.c_cpl_status.value) == OK:
                        self.stats["cut_at_commit_cpl"] += 1
                        return
                limit = cut_at + (base.COMMIT_WAIT if cut_on_commit else 0)
                if cycle >= limit:
                    ndie_mask = (1 << self.geo.ndie) - 1
                    if not cut_on_busy or int(dut.u_core.rb_n.value) & ndie_mask != ndie_mask \
                            or cycle > limit + 20_000:
                        self.stats["cut_in_cmd"] += int(bool(self.inflight))
                        return
            # completions, in the order the host saw them
            while done < len(host.completed):
                hc = host.completed[done]
                done += 1
                cmd = hc.meta
                self.inflight.pop(cmd["id"], None)
                if cmd.get("tag") is not None and cmd["tag"] < 32:
                    by_tag.pop(cmd["tag"], None)
                    free_tags.append(cmd["tag"])
                for x in cmd["lbas"]:
                    if busy[x] > 1:
                        busy[x] -= 1
                    else:
                        del busy[x]
                last_progress = cycle
                self.sata_complete(cmd, hc.result)
            self.stats["ncq_max"] = max(self.stats["ncq_max"], len(host.ncq))
            if self.inflight and cycle - last_progress > STALL:
                raise AssertionError(
                    f"hang: no command completed for {STALL} cycles; outstanding "
                    f"{sorted((c['name'], c.get('tag')) for c in self.inflight.values())}; host ncq "
                    f"{sorted(host.ncq)}, non-queued {host.nq and host.nq.name}; sata busy "
                    f"{int(dut.sata_busy.value)}; backend {self.backend_state()}")
            if not self.inflight:
                last_progress = cycle
            if sent >= n_cmds and not todo:
                if self.inflight:
                    continue
                if not clean:
                    return                         # (a random cut came later than the traffic: it waits)
                if phase == "random":
                    if self.gc_on or self.gc_busy:
                        self.gc_on = False         # the firmware's operations stop first
                        continue
                    # a clean shutdown ends every transaction (commit write or abort), then FLUSH
                    phase = "txend"
                    need_abort = not self.stats["tx_aborts"]     # (one abort for sure: not left to the 30 %)
                    for t, tx in self.txs.items():
                        if tx.ops:
                            k = "commit" if tx.big or rng.random() < 0.7 else "abort"
                            if k == "commit" and not tx.big and need_abort:
                                k = "abort"
                            need_abort = need_abort and k != "abort"
                            todo.append({"k": k, "t": t})
                    continue
                if phase == "txend":
                    phase = "flush"
                    todo.append({"k": "flush"})
                    continue
                if phase == "flush":
                    phase = "readback"
                    lbas = sorted(self.ops)
                    rng.shuffle(lbas)
                    todo.extend({"k": "read", "lba": x} for x in lbas[:10])
                    continue
                return
            if len(host.issue_q) > 1 or len(self.inflight) >= 40 or (not self.burst_mode and rng.random() < 0.15):
                continue
            if todo:
                if not free_tags:
                    continue
                cmd = self.build_fixed(todo[0], free_tags, busy)
                if cmd is None:
                    if todo[0]["k"] == "deepw":
                        todo.pop(0)
                    continue
                todo.pop(0)
            else:
                cmd = self.build_random(rng, free_tags, busy)
                if cmd is None:
                    continue
                sent += 1
            nid += 1
            cmd["id"] = nid
            self.issue(cmd, busy, by_tag)

    # --------------------------------------------------------------- building commands
    def _lbas_ok(self, lbas, txid, busy, read=False) -> bool:
        """No write on an LBA with anything in flight; reads of one LBA may overlap."""
        if any(busy.get(x, 0) < 0 if read else x in busy for x in lbas):
            return False
        return read or all(self.txlock.get(x, txid) == txid for x in lbas)

    def _new(self, kind, tag=None, lba=0, n=0, txid=0, **kw) -> dict:
        cmd = {"kind": kind, "tag": tag, "lba": lba, "n": n, "txid": txid, "lbas": [], "flags": 0,
               "expect": {ST_OK}, "op": {"ncq_w": OP_WRITE, "ncq_r": OP_READ, "dma_w": OP_WRITE,
                                         "dma_r": OP_READ, "flush": OP_FLUSH, "abort": OP_ABORT,
                                         "recover": OP_ABORT, "trim": OP_TRIM}.get(kind, -1)}
        cmd.update(kw)
        return cmd

    def build_fixed(self, t, free_tags, busy):
        """The clean ending's commands (nothing else in flight)."""
        rng = self.rng
        if t["k"] == "deepw":
            free = [x for x in range(self.num_lbas) if x not in busy and x not in self.txlock]
            if not free:
                return None
            x = rng.choice(free)
            return self._new("ncq_w", tag=free_tags.pop(), lba=x, n=1, lbas=[x],
                             flags=FUA if rng.random() < 0.5 else 0, prio=rng.randrange(3))
        if t["k"] == "txw":
            ts = [tt for tt, tx in self.txs.items() if not tx.ending]
            free = [x for x in range(self.num_lbas) if x not in busy and x not in self.txlock]
            t["t"], t["lba"] = rng.choice(ts), rng.choice(free)
            return self._new("ncq_w", tag=free_tags.pop(), lba=t["lba"], n=1, lbas=[t["lba"]], txid=t["t"])
        if t["k"] == "txr":
            x, tt = t["w"]["lba"], t["w"]["t"]
            if x in busy:
                return None                                     # its write is still in flight
            return self._new("ncq_r", tag=free_tags.pop(), lba=x, n=1, lbas=[x], txid=tt, tx_read=True)
        if t["k"] == "txcommit":
            tt = rng.randint(1, self.ntx)
            x = rng.choice([x for x in range(self.num_lbas) if x not in busy and x not in self.txlock])
            return self._new("ncq_w", tag=free_tags.pop(), lba=x, n=1, txid=tt, commit=True, lbas=[x],
                             flags=COMMIT)
        if t["k"] == "commit":
            tx = self.txs[t["t"]]
            x = tx.ops[-1].lba
            return self._new("ncq_w", tag=free_tags.pop(), lba=x, n=1, txid=t["t"], commit=True,
                             lbas=[x], flags=COMMIT)
        if t["k"] == "abort":
            return self._new("abort", txid=t["t"])
        if t["k"] == "flush":
            return self._new("flush")
        return self._new("ncq_r", tag=free_tags.pop(), lba=t["lba"], n=1, lbas=[t["lba"]])

    def build_random(self, rng, free_tags, busy):
        r = rng.random()
        if self.burst_mode and rng.random() < 0.9:
            r *= 0.74                                           # NCQ commands only, mostly
        lba = rng.randrange(self.num_lbas)
        n = 1 if self.burst_mode else rng.choice([1, 1, 1, 2, 3, 4])
        if not free_tags and r < 0.8:
            return None
        if r < 0.30:                                            # plain NCQ write
            lbas = list(range(lba, min(self.num_lbas, lba + n)))
            if not self._lbas_ok(lbas, 0, busy):
                return None
            f = rng.choice([0, 0, 0, FUA, BARRIER, BARRIER | FUA])
            return self._new("ncq_w", tag=free_tags.pop(), lba=lba, n=len(lbas), lbas=lbas, flags=f,
                             ordered=rng.random() < 0.15, prio=rng.randrange(3))
        if r < 0.58:                                            # transactions
            return self.build_tx(rng, free_tags, busy)
        if r < 0.74:                                            # plain NCQ read
            if self.ops and rng.random() < 0.7:
                lba = rng.choice(list(self.ops))
            lbas = list(range(lba, min(self.num_lbas, lba + n)))
            if not self._lbas_ok(lbas, 0, busy, read=True):
                return None
            return self._new("ncq_r", tag=free_tags.pop(), lba=lba, n=len(lbas), lbas=lbas,
                             ordered=rng.random() < 0.1, prio=rng.randrange(3))
        if r < 0.80:
            return self._new("flush")
        if r < 0.83:                                            # DSM TRIM: 1-2 ranges
            ranges, lbas = [], []
            for _ in range(rng.randint(1, 2)):
                l0 = rng.randrange(self.num_lbas)
                k = rng.randint(1, min(3, self.num_lbas - l0))
                new = [x for x in range(l0, l0 + k) if x not in lbas]
                if not new or new[0] != l0 or len(new) != k:
                    continue
                ranges.append((l0, k))
                lbas.extend(new)
            if not ranges or not self._lbas_ok(lbas, 0, busy):
                return None
            return self._new("trim", lbas=lbas, ranges=ranges)
        if r < 0.86:                                            # WRITE / READ DMA EXT
            lbas = list(range(lba, min(self.num_lbas, lba + n)))
            w = rng.random() < 0.6
            if not self._lbas_ok(lbas, 0, busy, read=not w):
                return None
            return self._new("dma_w" if w else "dma_r", lba=lba, n=len(lbas), lbas=lbas)
        if r < 0.875:                                           # recovery in the middle of traffic
            return self._new("recover")
        if not free_tags:
            return None
        if r < 0.89:                                            # refused: TXID above NUM_TX
            t = rng.randint(self.ntx + 1, 31)
            return self._new("ncq_w" if rng.random() < 0.5 else "ncq_r", tag=free_tags.pop(), lba=lba, n=1,
                             txid=t, expect={ST_ABRT}, refused=True)
        if r < 0.90:                                            # LBA range past the capacity: IDNF
            k = rng.randint(1, 3)
            return self._new("ncq_w" if rng.random() < 0.5 else "ncq_r", tag=free_tags.pop(),
                             lba=self.num_lbas - rng.randint(0, k - 1), n=k + 1, expect={ST_IDNF}, bad_lba=True)
        if self.ops:                                            # read of a written LBA
            lba = rng.choice(list(self.ops))
        if not self._lbas_ok([lba], 0, busy, read=True):
            return None
        return self._new("ncq_r", tag=free_tags.pop(), lba=lba, n=1, lbas=[lba])

    def build_tx(self, rng, free_tags, busy):
        t = rng.randint(1, self.ntx)
        tx = self.txs[t]
        if tx.ending:
            return None
        k = rng.random()
        if k < 0.62:                                            # tx write (maybe the commit block)
            if not free_tags:
                return None
            n = 1 if self.burst_mode else rng.choice([1, 1, 2, 3])
            lba = rng.randrange(self.num_lbas)
            big = False
            if not tx.ops and rng.random() < 0.05:
                n = self.tx_entries + 1                         # larger than a tx table: its commit fails
                lba = rng.randrange(self.num_lbas - n)
                big = True
            elif tx.own and rng.random() < 0.4:
                lba = rng.choice(list(tx.own))
            lbas = list(range(lba, min(self.num_lbas, lba + n)))
            if not self._lbas_ok(lbas, t, busy):
                return None
            f = rng.choice([0, 0, 0, BARRIER, FUA])
            commit = rng.random() < 0.3
            if commit:
                f |= COMMIT
            return self._new("ncq_w", tag=free_tags.pop(), lba=lba, n=len(lbas), lbas=lbas, txid=t, flags=f,
                             commit=commit, big=big, ordered=rng.random() < 0.1, prio=rng.randrange(3))
        if k < 0.82:                                            # tx read: read your writes
            if not free_tags:
                return None
            lba = rng.choice(list(tx.own)) if tx.own and rng.random() < 0.7 else rng.randrange(self.num_lbas)
            if not self._lbas_ok([lba], t, busy, read=True):
                return None
            return self._new("ncq_r", tag=free_tags.pop(), lba=lba, n=1, lbas=[lba], txid=t, tx_read=True)
        if self.burst_mode:
            return None                                         # (non-queued: it would drain the queue)
        return self._new("abort", txid=t)                       # FLUSH CACHE EXT tag field 1

    # --------------------------------------------------------------- issue and complete
    def issue(self, cmd, busy, by_tag):
        host = self.host
        k = cmd["kind"]
        t = cmd["txid"]
        for x in cmd["lbas"]:
            busy[x] = busy.get(x, 0) + 1 if k in ("ncq_r", "dma_r") else -1
        if k in ("ncq_w", "dma_w") and not cmd.get("refused") and not cmd.get("bad_lba"):
            cmd["versions"] = []
            data = []
            for x in cmd["lbas"]:
                self.version += 1
                o = Op(x, "w", self.version, self.epoch, bool(cmd["flags"] & FUA), tx=t)
                self.add_op(o)
                cmd["versions"].append(o)
                data.append(self.page_bytes_of(x, self.version))
                if t:
                    self.txs[t].ops.append(o)
                    self.txlock[x] = t
            cmd["data"] = b"".join(data)
            if cmd.get("big"):
                self.txs[t].big = True
            if cmd.get("commit"):
                self.tx_mark_ending(cmd, t)
                cmd["expect"] = self._expect_of(cmd["expect_any"])
                if cmd.get("big") and len(self.txs[t].ops) == len(cmd["lbas"]):
                    # the whole tx in its COMMIT write: only the marked (last) page finds the table
                    # full, and persistence.md section 4 commits the tx then maps that page itself
                    # (the commit may complete OK; the oracle checks whichever it did)
                    cmd["expect"] = cmd["expect"] | {ST_OK}
                    cmd["big_commit"] = True
            if cmd["flags"] & BARRIER:
                self.epoch += 1
                self.stats["barriers"] += 1
        elif k in ("ncq_r", "dma_r") and not cmd.get("refused") and not cmd.get("bad_lba"):
            own = self.txs[t].own if t else {}
            cmd["expect_data"] = [("w", own[x]) if x in own else self.view.get(x) for x in cmd["lbas"]]
            cmd["alt"] = {}
            if not t:
                for x in cmd["lbas"]:
                    lt = self.txlock.get(x)
                    if lt and self.txs[lt].commit_ops is not None:
                        cmd["alt"][x] = self.txs[lt].commit_ops[x]
        elif k == "trim":
            cmd["versions"] = []
            for x in cmd["lbas"]:
                o = Op(x, "t", 0, self.epoch, False)
                self.add_op(o)
                cmd["versions"].append(o)
        elif k == "abort":
            self.tx_mark_ending(cmd, t)
            cmd["expect"] = self._expect_of(cmd["expect_any"])
        elif k == "recover":
            cmd["aborts"] = []
            for tt, tx in self.txs.items():
                # (a tx whose commit or abort is in flight ends before the recovery runs: the
                # recovery is non-queued, so it waits for every NCQ command and goes after an abort)
                if tx.ops and not tx.ending:
                    a = {"op": OP_ABORT, "txid": tt}
                    self.tx_mark_ending(a, tt)
                    cmd["aborts"].append(a)
        if k in ("ncq_w", "ncq_r"):
            data = cmd.get("data")
            if k == "ncq_w" and data is None:
                data = bytes(cmd["n"] * self.geo.page_bytes)
            hc = host.submit_fpdma("write" if k == "ncq_w" else "read", cmd["tag"], cmd["lba"], cmd["n"],
                                   data=data, txid=t, commit=bool(cmd.get("commit")),
                                   barrier=bool(cmd["flags"] & BARRIER), ordered=bool(cmd.get("ordered")),
                                   fua=bool(cmd["flags"] & FUA), prio=cmd.get("prio", 0))
            by_tag[cmd["tag"]] = cmd
            self.stats["ordered"] += int(bool(cmd.get("ordered")))
        elif k == "dma_w":
            hc = host.write_dma_ext_cmd(cmd["lba"], cmd["data"])
        elif k == "dma_r":
            hc = host.read_dma_ext_cmd(cmd["lba"], cmd["n"])
        elif k == "flush":
            hc = host.flush_cmd(0)
        elif k == "abort":
            hc = host.flush_cmd(1, t)
        elif k == "recover":
            hc = host.flush_cmd(2)
        else:
            hc = host.trim_cmd(cmd["ranges"])
        cmd["name"] = hc.name
        hc.meta = cmd
        self.inflight[cmd["id"]] = cmd
        self.stats["cmds"] += 1

    @staticmethod
    def _expect_of(dev_statuses) -> set:
        return {sata_status(s) for s in dev_statuses}

    def sata_complete(self, cmd, result):
        st, err, data = result
        name = f"{cmd['name']} txid {cmd['txid']}"
        if (st, err) not in cmd["expect"]:
            self.errors.append(f"{name}: status {st:#x} error {err:#x}, expected one of "
                               f"{sorted(cmd['expect'])}")
            return
        k = cmd["kind"]
        ok = (st, err) == ST_OK
        if cmd.get("refused"):
            self.stats["refused"] += 1
            return
        if cmd.get("bad_lba"):
            self.stats["idnf"] += 1
            return
        if "tx_ops" in cmd and k != "recover":                  # a commit write or an abort
            committed = k == "ncq_w" and ok
            if k == "abort":
                self.stats["tx_aborts"] += 1
            elif ok:
                self.stats["tx_commits"] += 1
                self.stats["big_commit_ok"] = self.stats.get("big_commit_ok", 0) + int(bool(cmd.get("big_commit")))
            else:
                self.stats["tx_failed"] += 1
            if committed:
                self.ncpl += 1
            self.tx_finish(cmd, committed)
            return
        if k == "recover":
            self.stats["recover_mid"] += 1
            for a in cmd["aborts"]:
                self.tx_finish(a, False)
                self.stats["tx_aborts"] += 1
            return
        if k == "flush":
            self.flushes.append((None, self.ncpl))              # nothing else runs with a non-queued command
            self.stats["flushes_ok"] += 1
            return
        if k in ("ncq_w", "dma_w", "trim"):
            self.ncpl += 1
            self.stats["trims"] += int(k == "trim")
            self.stats["dma_ext"] += int(k == "dma_w")
            for o in cmd["versions"]:
                if o.tx:
                    self.txs[o.tx].own[o.lba] = o.version
                    continue
                o.cpl = self.ncpl
                self.stats["fua_acked"] += int(o.fua)
                self.view[o.lba] = ("w", o.version) if o.kind == "w" else ("t",)
            return
        # reads
        self.stats["dma_ext"] += int(k == "dma_r")
        pb = self.geo.page_bytes
        if data is None or len(data) != pb * len(cmd["lbas"]):
            self.errors.append(f"{name}: {None if data is None else len(data)} bytes read")
            return
        for i, (x, e) in enumerate(zip(cmd["lbas"], cmd["expect_data"])):
            got = list(struct.unpack(f"<{self.pw}I", data[i * pb:(i + 1) * pb]))
            exp = self.page_words(x, e[1]) if e and e[0] == "w" else [0] * self.pw
            if got != exp and x in cmd["alt"] and got == self.page_words(x, cmd["alt"][x]):
                exp = got                                       # the commit it raced with came first
            if got != exp:
                j = next(j for j in range(self.pw) if got[j] != exp[j])
                self.errors.append(f"{name}: LBA {x} word {j}: {got[j]:#x} != {exp[j]:#x} (view {e}; "
                                   f"got words 0-1 {got[0]:#x} {got[1]})")
            self.stats["reads_checked"] += 1
            self.stats["tx_reads"] += int(bool(cmd.get("tx_read")))


async def campaign(dut, seed: int, cuts: int):
    image_dir = Path(os.environ["ATS_CORE_IMAGES"])
    image_dir.mkdir(parents=True, exist_ok=True)
    tb = SataCoreTB(dut, seed, image_dir)
    rng = tb.rng
    for i in range(cuts):
        t0, e0 = time.time(), tb.edges
        await tb.power_on()
        e1 = tb.edges
        for _ in range(rng.randint(0, 200)):
            await RisingEdge(dut.clk)
        await tb.recover_cmd()
        if tb.errors:
            break
        # link faults now and then: a command / data FIS with a bad CRC, an SDB answered R_ERR
        if rng.random() < 0.5:
            tb.host.corrupt(rng.choice([H.FIS_H2D, H.FIS_DATA]), 1)
        if rng.random() < 0.5:
            tb.host.rerr(rng.choice([H.FIS_SDB, H.FIS_SETUP, H.FIS_D2H]), 1)
        clean = i % 8 == 0
        burst = not clean and (i % 4 == 1 or rng.random() < 0.2)
        n = rng.randint(8, 20) if clean else rng.randint(40, 70) if burst else rng.randint(4, 30)
        cut_at = None if clean else rng.randint(200, min(1500 * n + 3000, 40_000))
        busy = rng.random() < 0.4
        commit = not clean and rng.random() < 0.3
        await tb.sata_workload(n, cut_at, clean, busy, commit, burst)
        tb.stats["bursts"] = tb.stats.get("bursts", 0) + int(burst)
        vcounts = None
        if clean:
            for _ in range(rng.randint(0, 50)):
                await RisingEdge(dut.clk)
            vcounts = await tb.read_valid_counts()
        e2 = tb.edges
        await tb.cut()
        tb.check_recovery(clean, vcounts)
        dut._log.info("power cycle %d: clean %d, burst %d, %d commands, cut at %s (busy %d, commit %d): %d cycles "
                      "(power-on %d), %.1f s", i, clean, burst, n, cut_at, busy, commit, e2 - e0, e1 - e0,
                      time.time() - t0)
        if tb.sata_proto:
            tb.errors.append(f"ats_sata counted {tb.sata_proto} core transfers of no command (cnt_proto)")
        if tb.errors:
            break
        if int(dut.viol_total.value):
            tb.errors.append(f"NAND protocol violations: {int(dut.viol_total.value)}")
            break
        if int(dut.prog_head_total.value):
            tb.errors.append(f"{int(dut.prog_head_total.value)} PROGRAM request(s) sent to the scheduler as HEAD")
            break
    tb.stats.update({f"host_{k}": v for k, v in tb.hstats.items()})
    dut._log.info("sata core campaign seed %d: %s", seed, json.dumps(tb.stats))
    out = os.environ.get("ATS_CORE_STATS")
    if out:
        Path(out).write_text(json.dumps(tb.stats))
    assert not tb.errors, "\n".join(tb.errors[:20])
    s = tb.stats
    assert s["cuts"] == cuts and s["recover_cmds"] == cuts
    # coverage every run must reach
    assert s["reads_checked"] > 0 and s["durable_checked"] > 0 and s["vc_checked"] > 0
    assert s["tx_commits"] > 0 and s["tx_aborts"] > 0 and s["tx_reads"] > 0 and s["atom_checked"] > 0
    assert s["flushes_ok"] > 0 and s["fua_acked"] > 0 and s["barriers"] > 0
    assert s["ncq_max"] >= 20, f"never more than {s['ncq_max']} NCQ commands outstanding"
    assert s["host_sdb"] > 0 and s["host_ooo"] > 0, "no out-of-order NCQ completion"


@cocotb.test()
async def run_campaign(dut):
    seed = int(os.environ.get("ATS_SEED", "1"))
    cuts = int(os.environ.get("ATS_SATA_CORE_CUTS", "10"))
    prof = None
    if os.environ.get("ATS_PROFILE"):                 # where the campaign's wall time goes (cProfile)
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    try:
        await campaign(dut, seed, cuts)
    finally:
        if prof is not None:
            prof.disable()
            prof.dump_stats(os.environ["ATS_PROFILE"])


# --------------------------------------------------------------------------------------------------
# the core's command queue as deep as NCQ (the core's default; ats_sata takes the next command FIS
# only when the core took the last descriptor, so QDEPTH bounds the tags outstanding)
CONFIG = dict(NUM_CHAN=2, WAYS=2, RD_SLOTS=16, QDEPTH=32)
SEEDS = [int(x) for x in os.environ["ATS_SATA_CORE_SEEDS"].split(",")] if os.environ.get("ATS_SATA_CORE_SEEDS") \
    else [1, 2, 3, 4] if LONG else [1]
CUTS = int(os.environ.get("ATS_SATA_CORE_CUTS", 50 if LONG else 6))


@pytest.mark.parametrize("seed", SEEDS)
def test_ats_sata_core(seed):
    params, srcs, rp = base.core_build(CONFIG)
    sata = block_sources("ats_sata")
    # core_build binds the stream checker inside the core; ats_sata_bind.sv: the front end's m_ ports
    srcs = [s for s in sata if s not in srcs] + srcs + [ROOT / "cocotb_tests/ats_sata/ats_sata_bind.sv",
                                                        HERE / "ats_sata_core_tb.sv"]
    key = "_".join(f"{k}{v}" for k, v in sorted(params.items()))
    build_dir = ROOT / "build" / "sim" / "ats_sata_core_tb" / key
    nd = params["NUM_CHAN"] * params["WAYS"]
    img = build_dir / f"img_{seed}"
    run(toplevel="ats_sata_core_tb", sources=srcs, test_module="test_ats_sata_core", test_dir=HERE,
        build_key=key, parameters=params, seed=seed,
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), "-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        plusargs=[f"+ats_nand_image{d}={img / f'die{d}.img'}" for d in range(nd)],
        results_name=f"seed{seed}",
        # visible to cocotb: the top's signals, the core TB's R/B# lines, the watchdog's backend registers
        public={**base.PUBLIC, "ats_ssd_core_tb": ["rb_n"]},
        extra_env={"ATS_SEED": str(seed), "ATS_CORE_IMAGES": str(img), "ATS_SATA_CORE_CUTS": str(CUTS),
                   "ATS_TX_ENTRIES": str(rp["TX_ENTRIES"]),
                   "ATS_CORE_STATS": str(build_dir / f"stats_{seed}.json"),
                   **({"ATS_PROFILE": os.environ["ATS_PROFILE"]} if os.environ.get("ATS_PROFILE") else {})})
