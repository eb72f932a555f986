"""ats_ssd_core end to end: command queue -> write buffer -> backend -> remap engine + NAND subsystem ->
NAND die models, with random power cuts, checked by an independent recovery oracle.

Host side (random idle on every input, random backpressure on every output): the command stream
s_cmd, completions m_cpl, the host-memory DMA (m_hrd/s_hrd, m_hwr), and a firmware model that hands
erased blocks from the allocation plan of the checkpoint (s_free, driven by blk_need) and takes grown
bad blocks (m_bad). The die models keep their contents in image files (+ats_nand_image<D>).

Reference (plain Python, from the design brief and docs/architecture.md, never from the RTL):
 - statuses and results of every command; READ data word by word against the host's view (latest
   completed write, zeros for never written / trimmed LBAs; the host never has two commands on one
   LBA in flight, so the expected value is exact);
 - after each cut, `atstb.recovery_oracle` rebuilds the device state from the die images alone
   (docs/persistence.md) and the test checks INV-LBA (every mapped LBA holds exactly one of its own
   written versions), INV-DUR (FUA writes, writes and trims completed before a completed FLUSH, or an
   RFLUSH covering their LBA), INV-ORDER (epochs) and INV-BOUND (pages read <= pages the device
   programmed + one per die + the checkpoint block's scan);
 - a "clean" iteration (every 5th) runs longer, ends with a FLUSH, reads back every LBA written
   (read misses through NAND and ECC) and reads the backend's valid-page count of every block, then
   cuts: the recovered state must equal the host's view exactly and the valid-page counts the live
   pages per block of the recovered mapping; every failed program must have been reported once on
   m_bad (a block handed to that die);
 - the firmware model withholds blocks in a quarter of the iterations until a page has waited
   (no_free_block); die faults (program failures, read bit flips) come from ATS_NAND_FAULTS;
 - transactions: a tx reads its own latest versions first (`Tx.own`), also after a plain WRITE / TRIM
   of the LBA (plain writes may hit an open tx's LBAs; every sixteenth power cycle is tx-heavy), a
   commit's versions take the commit's place in each LBA's order, TX_BEGIN of a txid holding entries
   is TABLE_FULL, TX_COMMIT returns its entries (distinct pages .. pages written); a directed scenario
   on its own power cycle first (`directed_tx`: eviction, DIFFWRITE base, exact entry count, empty
   TX_ABORT / TX_COMMIT program nothing); atomic writes as the NVMe front end sends them (2-4 pages
   with COMMIT on a txid without entries, docs/host-interface.md 1.10; stats `atomic_writes`) are
   transactions of their own: all or nothing after every cut;
 - coverage that fails the campaign when missing: torn pages, read misses through NAND, no_free_block,
   relocated program failures and ECC corrections where the faults are on.

Environment: ATS_SEED, ATS_LONG=1 (the long campaign), ATS_CORE_CUTS (cuts per run), ATS_CUT_TRACE=1,
ATS_CORE_TRACE=<file> (every host completion and firmware-port response with its time, and the final
stats: two runs of a refactored RTL that must be cycle-identical give the same file)
(log each power cycle's kind and cycles), ATS_PROFILE=<file> (cProfile of the campaign: where the
wall time goes).
"""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, RisingEdge, Timer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from atstb.nand_page_model import bytes_to_words
from atstb.recovery_oracle import Geometry, format_images, read_lpn, recover
from atstb.runner import ROOT, block_sources, load_params, load_sources, run
from atstb.streams import CycleWait, StreamSink, StreamSource, every_edge, pause_gen, port_reader

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
CMD_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"]
FW_FIELDS = ["op", "chan", "way", "block", "page", "rop", "txid", "lpn", "ppn", "seq", "epoch", "flags", "kind"]
FW_NREAD, FW_NPROG, FW_NERASE, FW_REMAP, FW_RELOC, FW_SEQSET = range(6)
N_OK, N_PROGRAM_FAIL, N_ERASE_FAIL, N_ERASED = 0, 1, 2, 5
R_LOOKUP = 1
COMMIT_WAIT = 300_000   # cycles: how much later than its cycle a cut-on-commit run cuts if no commit completed
OP_READ, OP_WRITE, OP_DIFF, OP_BEGIN, OP_COMMIT, OP_ABORT, OP_FLUSH, OP_RFLUSH, OP_TRIM = range(9)
OK, BAD_OP, BAD_TXID, BAD_LBA, BAD_FIELD, MEDIA_ERROR = 0x00, 0x01, 0x02, 0x03, 0x07, 0x10
TX_FULL, INDEX_FULL, TX_EMPTY, TABLE_FULL = 0x04, 0x05, 0x06, 0x08
FUA, BARRIER, COMMIT = 1, 2, 4


def pattern(lba: int, version: int, nwords: int) -> list[int]:
    """Page content of version `version` of `lba`: self-describing (lba, version) and unique."""
    words = [0xA5000000 | lba, version]
    x = (lba * 0x9E3779B1 + version * 0x85EBCA77) & 0xFFFFFFFF
    for i in range(2, nwords):
        x = (x * 1103515245 + 12345 + i) & 0xFFFFFFFF
        words.append(x)
    return words


class Op:
    """A write or trim as the host submitted it (one page)."""
    __slots__ = ("lba", "kind", "version", "epoch", "fua", "cpl", "idx", "tx", "state")

    def __init__(self, lba, kind, version, epoch, fua, tx=0):
        self.lba, self.kind, self.version, self.epoch, self.fua = lba, kind, version, epoch, fua
        self.cpl = None      # completion number (host order) if it completed OK
        self.idx = 0         # position among the ops of its LBA
        self.tx = tx         # transaction (0: none)
        # a tx write: "open" (not committed), "ending" (its commit is in flight), "committed", "dead"
        self.state = "open" if tx else "committed"


class Tx:
    """Host view of one txid: the writes since the last commit/abort, its own latest versions."""

    def __init__(self):
        self.ops: list[Op] = []
        self.own: dict[int, int] = {}      # lba -> latest completed own version (read your writes)
        self.ending = False                # TX_COMMIT / TX_ABORT / COMMIT write submitted
        self.commit_ops: dict[int, int] | None = None   # commit in flight: lba -> the version it applies
        self.big = False                   # wrote more distinct pages than a tx table holds


class TB:
    def __init__(self, dut, seed: int, idle: bool, backpressure: bool, image_dir: Path):
        self.dut = dut
        self.rng = rng = random.Random(seed)
        self.geo = Geometry(int(dut.NUM_CHAN.value), int(dut.WAYS.value), int(dut.BLOCKS.value),
                            int(dut.PAGES_PER_BLOCK.value), int(dut.PAGE_BYTES.value), int(dut.SPARE_BYTES.value))
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.qdepth = int(dut.QDEPTH.value)
        self.win = int(dut.WIN.value)
        self.ntx = int(dut.NUM_TX.value)
        self.ntx_used = min(self.ntx, 4)
        self.tx_entries = int(os.environ.get("ATS_TX_ENTRIES", "32"))
        self.pw = self.geo.page_bytes // 4
        self.paths = [image_dir / f"die{d}.img" for d in range(self.geo.ndie)]
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        self.cycles = CycleWait(dut.clk, 10_000)        # ClockCycles without a resume an edge
        cocotb.start_soon(self.cycles.sync())
        dut.rst.value = 1
        dut.power_ok.value = 0
        dut.pwr_fail.value = 0
        dut.vc_addr.value = 0
        dut.wb_hold.value = 0
        dut.txs_addr.value = 0
        self._host_streams(rng, idle, backpressure)
        self.free = StreamSource(dut, "s_free", dut.clk, ["chan", "way", "block"], pause_gen(rng, idle))
        self.bad = StreamSink(dut, "m_bad", dut.clk, ["chan", "way", "block"], pause_gen(rng, backpressure))
        self.fw = StreamSource(dut, "s_fw", dut.clk, FW_FIELDS, pause_gen(rng, idle))
        self.fwd = StreamSource(dut, "s_fwd", dut.clk, ["data", "last"], pause_gen(rng, idle))
        self.fwr = StreamSink(dut, "m_fwr", dut.clk, ["status", "data", "last", "ppn", "mapped"],
                              pause_gen(rng, backpressure))
        self.stats = {"cuts": 0, "clean": 0, "atomic_writes": 0, "cmds": 0, "reads_checked": 0, "pages_read": 0, "rd_cpl_ooo": 0,
                      "pages_programmed": 0, "torn": 0, "beyond_prefix": 0, "durable_checked": 0,
                      "prog_fail": 0, "grown_bad": 0, "violations": 0, "max_pages_read": 0,
                      "ecc_corr": 0, "nand_reads": 0, "starved": 0, "no_free_seen": 0, "vc_checked": 0,
                      "tx_commits": 0, "tx_aborts": 0, "tx_failed": 0, "tx_reads": 0, "atom_checked": 0,
                      "tx_cut_in_commit": 0, "tx_applied_in_cut": 0, "diffwrites": 0,
                      "fw_ops": 0, "cut_at_commit_cpl": 0, "relocs": 0, "relocs_stale": 0, "raw_progs": 0, "raw_reads": 0, "erases": 0, "erase_fail": 0,
                      "seqset": 0, "holds": 0, "txs_open_seen": 0}
        self.errors: list[str] = []
        self.plain_after: dict[int, set] = {}
        self.tx_heavy = False
        self.burst = None
        every_edge(dut.clk, self._dma)
        # edges since the start (the ticker's count; the workload's cycle numbers come from it) and
        # the workload's wait (see _wl_edge)
        self.edges = 0
        self._wl_wait = None
        self._wl_progress = 0                    # edge of the workload's last progress (watchdog)
        self._wl_stall = False
        self._fw_wait = None                     # (op, edge) of a firmware call waiting for its response
        self.trace = [] if os.environ.get("ATS_CORE_TRACE") else None   # (ns, kind, fields) per event
        self._wl_skip = False
        self._wl_wake = Event()
        every_edge(dut.clk, self._wl_edge)
        # the firmware model's reads (the handle's integer get: streams.port_reader)
        self._rd_no_free, self._rd_free_valid, self._rd_blk_need = (
            port_reader(dut.no_free_block), port_reader(dut.s_free_valid), port_reader(dut.blk_need))
        every_edge(dut.clk, self._firmware)
        self.fw_on = False
        self.gc_on = False
        self.gc_busy = False
        self.gen = 0
        cocotb.start_soon(self._fw_ops())
        cocotb.start_soon(self._watchdog())

    # ---------------------------------------------------------------- host memory and firmware
    # The host side is replaceable (cocotb_tests/ats_sata_core puts the SATA front end and a SATA
    # host in front of the core): a subclass overrides _host_streams, _host_power_on and _dma, and
    # brings its own workload; the firmware model, power cycles and check_recovery stay.
    def _host_streams(self, rng, idle, backpressure):
        """The core's host ports: descriptors in, completions out, host-memory DMA."""
        dut = self.dut
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, CMD_FIELDS, pause_gen(rng, idle))
        self.cpl = StreamSink(dut, "m_cpl", dut.clk, ["tag", "status", "result"], pause_gen(rng, backpressure))
        self.hrd = StreamSink(dut, "m_hrd", dut.clk, ["addr", "len"], pause_gen(rng, backpressure))
        self.hrdd = StreamSource(dut, "s_hrd", dut.clk, ["data", "last"], pause_gen(rng, idle))
        self.hwr = StreamSink(dut, "m_hwr", dut.clk, ["addr", "data", "last"], pause_gen(rng, backpressure))

    def _host_power_on(self):
        """Power-on of the host side (before the reset is released): nothing left of the last cycle."""
        for s in (self.cmd, self.hrdd):
            s.flush()
        for s in (self.cpl, self.hrd, self.hwr):
            s.queue.clear()
        self.burst = None
        self.mem: dict[int, int] = {}

    def _dma(self):
        """Host memory, at every edge: answer m_hrd with words from self.mem, store m_hwr bursts."""
        while self.hrd.queue:
            r = self.hrd.queue.popleft()
            n = r["len"] // 4
            for i in range(n):
                self.hrdd.send_nowait(data=self.mem.get(r["addr"] + 4 * i, 0xDEADBEEF), last=int(i == n - 1))
        self.drain_hwr()

    def drain_hwr(self):
        while self.hwr.queue:
            b = self.hwr.queue.popleft()
            if self.burst is None:
                self.burst = [b["addr"], 0]
            self.mem[self.burst[0] + 4 * self.burst[1]] = b["data"]
            self.burst[1] += 1
            if b["last"]:
                self.burst = None

    def _firmware(self):
        """Every 4th edge (on the ticker): hands the next planned block of every die that asks for
        one; records grown bad blocks."""
        if self.edges % 4:
            return
        if not self.fw_on:
            return
        self.fw_cycles += 4
        if self._rd_no_free():
            self.stats["no_free_seen"] += 1
            self.starve -= 4                    # starving: held back until a page has waited
        if self.fw_cycles > 20_000:
            self.starve = 0
        while self.bad.queue:
            b = self.bad.queue.popleft()
            self.stats["grown_bad"] += 1
            self.grown_bad.append((b["chan"], b["way"], b["block"]))
        if self.free.queue or self._rd_free_valid() or self.starve > 0:
            return
        need = self._rd_blk_need()
        for d in range(self.geo.ndie):
            if need >> d & 1 and self.plan_pos[d] < len(self.plan[d]):
                blk = self.plan[d][self.plan_pos[d]]
                self.plan_pos[d] += 1
                self.free.send_nowait(chan=d // self.geo.ways, way=d % self.geo.ways, block=blk)
                break

    async def _watchdog(self):
        """A firmware-port operation without a response beat for STALL_EDGES cycles is a hang: the
        test fails with the backend's state (woken by a timer, so it does not reorder the other
        coroutines of an edge)."""
        while True:
            await Timer(STALL_EDGES * 10 // 4, "ns")          # 10 ns clock
            w = self._fw_wait
            if w is not None and self.edges - w[1] > STALL_EDGES:
                raise AssertionError(f"device hang: firmware op {w[0]} without a response for "
                                     f"{self.edges - w[1]} cycles; backend {self.backend_state()}")

    def backend_state(self) -> dict:
        """The backend's read-ring and FSM registers, printed when a watchdog fires."""
        be = self.dut.u_dut.u_backend
        return {n: int(getattr(getattr(be, inst) if inst else be, n).value)
                for module, inst in BACKEND_UNITS.items() for n in PUBLIC[module]}

    async def fw_call(self, gen, **f):
        """One firmware-port operation: request (+ data words), then its response beats."""
        req = {k: 0 for k in FW_FIELDS}
        req.update(f)
        data = req.pop("data", None)
        self.fw.send_nowait(**req)
        for i, w in enumerate(data or []):
            self.fwd.send_nowait(data=w, last=int(i == len(data) - 1))
        beats = []
        # Waits for response beats (the sink's event, set at the edge that takes a beat) instead of
        # resuming at every edge; a cut sets the event too: the call then ends at the next edge.
        ev = self.fwr.event
        while gen == self.gen:
            ev.clear()
            self._fw_wait = (f.get("op"), self.edges)     # watched by _watchdog
            await ev.wait()
            self._fw_wait = None
            if gen != self.gen:
                await RisingEdge(self.dut.clk)
            while self.fwr.queue:
                beats.append(self.fwr.queue.popleft())
                if self.trace is not None:
                    self.trace.append((cocotb.utils.get_sim_time("ns"), "fwr", beats[-1]))
            if beats and beats[-1]["last"]:
                self.stats["fw_ops"] += 1
                return beats
        return None

    async def _fw_ops(self):
        """The firmware port under host traffic: GC relocations of live pages (LOOKUP, raw READ of the
        page, RELOC applied only if the LPN still maps to it), and raw PROGRAM / READ / ERASE on a
        scratch block of each die that no plan holds (recovery never reads it)."""
        rng = random.Random(self.rng.getrandbits(32))
        g = None
        while True:
            await RisingEdge(self.dut.clk)
            if not self.gc_on:
                await self.cycles(15)
                continue
            gen = self.gen
            self.gc_busy = True
            try:
                await self._fw_one(rng, gen)
            finally:
                self.gc_busy = False
            await self.cycles(rng.randint(20, 400))

    async def _fw_one(self, rng, gen):
        g = self.geo
        pw = self.pw
        r = rng.random()
        if r < 0.55:
            # GC relocation of a committed, written LBA
            cands = [x for x, e in self.view.items() if e[0] == "w"]
            if not cands:
                return
            lba = rng.choice(cands)
            b = await self.fw_call(gen, op=FW_REMAP, rop=R_LOOKUP, lpn=lba)
            if b is None:
                return
            if b[0]["status"] != 0:
                self.errors.append(f"fw LOOKUP {lba}: status {b[0]['status']}")
                return
            if not b[0]["mapped"]:
                return                                  # still in the write buffer
            ppn = b[0]["ppn"]
            d, blk, pg = g.unppn(ppn)
            b = await self.fw_call(gen, op=FW_NREAD, chan=d // g.ways, way=d % g.ways, block=blk, page=pg)
            if b is None:
                return
            words = [x["data"] for x in b]
            if len(words) != pw + 5 or b[-1]["status"] != N_OK:
                self.errors.append(f"fw NREAD ppn {ppn}: {len(words)} words, status {b[-1]['status']}")
                return
            self.stats["raw_reads"] += 1
            if words[pw] != lba or not any(self.page_words(lba, o.version) == words[:pw]
                                           for o in self.ops.get(lba, []) if o.kind == "w"):
                self.errors.append(f"fw NREAD ppn {ppn}: spare lpn {words[pw]}, expected {lba}, or data of no version")
                return
            # GC takes its time between the copy and the RELOC: the host may overwrite or trim the
            # LBA meanwhile (the RELOC must then be stale)
            wait = rng.choice([0, 0, rng.randint(100, 4000)])
            if wait:
                await self.cycles(wait)
                if gen != self.gen:
                    return
            b = await self.fw_call(gen, op=FW_RELOC, lpn=lba, ppn=ppn, data=words[:pw])
            if b is None:
                return
            st = b[0]["status"]
            if st not in (0, 1):
                self.errors.append(f"fw RELOC {lba}: status {st}")
            self.stats["relocs" if st == 0 else "relocs_stale"] += 1
            if st == 0 and (rng.random() < 0.6 or self.stats["relocs_stale"] == 0):
                # the same copy again: the LPN now maps to the first copy, so this one must be stale
                # (always while no stale RELOC was seen yet: every run covers the stale path)
                b = await self.fw_call(gen, op=FW_RELOC, lpn=lba, ppn=ppn, data=words[:pw])
                if b is None:
                    return
                if b[0]["status"] != 1:
                    self.errors.append(f"fw RELOC {lba} of page {ppn} twice: status {b[0]['status']}, expected stale")
                self.stats["relocs_stale"] += 1
        elif r < 0.9:
            # raw PROGRAM then READ back of the next scratch page (data and every spare field)
            d = rng.randrange(g.ndie)
            blk, pg = self.scratch[d], self.scratch_pg[d]
            if pg is None:
                return                                  # its erase failed: a grown bad block for the firmware
            # with erase failures injected (ATS_NAND_FAULTS efail_ppm), the scratch block is erased
            # again at every raw op until the firmware has seen one fail: not left to the few erases
            # of a short run (a full block's, about one in 8 raw programs)
            efail = "efail_ppm=" in os.environ.get("ATS_NAND_FAULTS", "") and \
                "efail_ppm=0," not in os.environ.get("ATS_NAND_FAULTS", "") + ","
            if pg >= g.ppb or (efail and not self.stats["erase_fail"] and pg > 0):
                b = await self.fw_call(gen, op=FW_NERASE, chan=d // g.ways, way=d % g.ways, block=blk)
                if b is None:
                    return
                if b[0]["status"] == N_ERASE_FAIL:
                    self.stats["erase_fail"] += 1       # fault injection (efail_ppm): the block is retired
                    self.scratch_pg[d] = None
                    return
                if b[0]["status"] != N_OK:
                    self.errors.append(f"fw NERASE die {d} block {blk}: status {b[0]['status']}")
                    return
                self.stats["erases"] += 1
                self.scratch_pg[d] = 0
                b = await self.fw_call(gen, op=FW_NREAD, chan=d // g.ways, way=d % g.ways, block=blk, page=0)
                if b is None:
                    return
                # data and the spare LPN read all ones (architecture section 5)
                if b[-1]["status"] != N_ERASED or len(b) != pw + 5 or \
                        any(x["data"] != 0xFFFFFFFF for x in b[:pw + 1]):
                    self.errors.append(f"fw NREAD of an erased page: status {b[-1]['status']}")
                return
            meta = dict(lpn=rng.getrandbits(32), seq=rng.getrandbits(64), epoch=rng.getrandbits(32),
                        flags=rng.getrandbits(8), kind=2, txid=rng.randrange(64))
            data = [rng.getrandbits(32) for _ in range(pw)]
            self.scratch_pg[d] = pg + 1
            b = await self.fw_call(gen, op=FW_NPROG, chan=d // g.ways, way=d % g.ways, block=blk, page=pg,
                                   data=data, **meta)
            if b is None:
                return
            if b[0]["status"] == N_PROGRAM_FAIL:
                return                                  # fault injection: nothing to read back
            if b[0]["status"] != N_OK:
                self.errors.append(f"fw NPROG die {d} block {blk} page {pg}: status {b[0]['status']}")
                return
            self.stats["raw_progs"] += 1
            b = await self.fw_call(gen, op=FW_NREAD, chan=d // g.ways, way=d % g.ways, block=blk, page=pg)
            if b is None:
                return
            words = [x["data"] for x in b]
            exp = data + [meta["lpn"], meta["seq"] & 0xFFFFFFFF, meta["seq"] >> 32, meta["epoch"],
                          meta["flags"] << 16 | meta["kind"] << 8 | meta["txid"]]
            if b[-1]["status"] != N_OK or words != exp:
                bad = next((i for i in range(min(len(words), len(exp))) if words[i] != exp[i]), None)
                self.errors.append(f"fw NREAD after NPROG die {d} block {blk} page {pg}: status "
                                   f"{b[-1]['status']}, first difference at word {bad} of {len(words)}")
            self.stats["raw_reads"] += 1
        elif r < 0.95:
            await self._hold_check(rng, gen)
        else:
            # malformed: an unknown port operation, an unknown remap operation
            if rng.random() < 0.5:
                b = await self.fw_call(gen, op=rng.randint(6, 7))
                if b is not None and b[0]["status"] != 0xFF:
                    self.errors.append(f"fw unknown op: status {b[0]['status']}, expected 0xff")
            else:
                b = await self.fw_call(gen, op=FW_REMAP, rop=rng.choice([7, 8, 15]), lpn=0)
                if b is not None and b[0]["status"] != 1:
                    self.errors.append(f"fw remap op unknown: status {b[0]['status']}, expected BAD_OP")

    async def _hold_check(self, rng, gen):
        """Checkpoint support (C27): wb_hold stops new write-back requests; once the table has
        drained, cpl_seq = next_seq and neither moves while held; a SEQSET then is refused only
        when requests are in flight; every open tx of txs_open is a tx the host has begun and not
        seen completed, its first seq below next_seq."""
        self.dut.wb_hold.value = 1
        try:
            seq0 = int(self.dut.next_seq.value)
            for _ in range(40_000):
                await RisingEdge(self.dut.clk)
                if gen != self.gen:
                    return
                if int(self.dut.cpl_seq.value) == int(self.dut.next_seq.value):
                    break
            else:
                self.errors.append("wb_hold: the request table never drained")
                return
            nseq = int(self.dut.next_seq.value)
            if nseq > seq0 + self.win:
                self.errors.append(f"wb_hold: next_seq moved from {seq0} to {nseq} (more than WIN)")
            for t in range(1, self.ntx_used + 1):
                self.dut.txs_addr.value = t
                await Timer(1, "ns")
                if int(self.dut.txs_open.value):
                    self.stats["txs_open_seen"] += 1
                    tseq = int(self.dut.txs_seq.value)
                    if not (self.seq_base <= tseq < nseq):
                        self.errors.append(f"txs_seq[{t}] = {tseq} outside [{self.seq_base}, {nseq})")
                    if t not in self.txs or not self.txs[t].ops and not self.txs[t].ending:
                        self.errors.append(f"txs_open[{t}] while the host has no open tx {t}")
            for _ in range(rng.randint(10, 300)):
                await RisingEdge(self.dut.clk)
                if gen != self.gen:
                    return
                if int(self.dut.next_seq.value) != nseq or int(self.dut.cpl_seq.value) != nseq:
                    self.errors.append("wb_hold: a write-back request was accepted while held")
                    return
            self.stats["holds"] += 1
        finally:
            if gen == self.gen:
                self.dut.wb_hold.value = 0

    # ---------------------------------------------------------------- one power cycle
    async def power_on(self):
        g = self.geo
        self.plan = []
        self.scratch = []
        for d in range(g.ndie):
            blocks = [b for b in range(g.blocks) if not (d == 0 and b == 0)]   # die 0 block 0: checkpoints
            self.rng.shuffle(blocks)
            self.scratch.append(blocks.pop())            # firmware scratch block: in no plan
            self.plan.append(blocks)
        # the format erased it; the firmware erases it again when full, and in half of the power
        # cycles it starts as if full (erase first), so that every run erases
        self.scratch_pg = [g.ppb if self.rng.random() < 0.5 else 0 for _ in range(g.ndie)]
        self.plan_pos = [0] * g.ndie
        self.grown_bad = []
        # now and then the firmware hands out no block until a page has waited (no_free_block) for
        # 200-2000 cycles (at most 20,000 cycles after power-on): the backend must hold, not drop
        self.fw_cycles = 0
        self.starve = self.rng.randint(200, 2000) if self.rng.random() < 0.25 else 0
        self.stats["starved"] += int(self.starve > 0)
        # the log starts at a random seq in half of the power cycles (the firmware's SEQSET after a
        # recovery, C27): the format's checkpoint carries it as seq_base
        self.seq_base = 0 if self.rng.random() < 0.5 else self.rng.getrandbits(40)
        format_images(self.paths, g, self.plan, seq_base=self.seq_base)
        for s in (self.free, self.fw, self.fwd):
            s.flush()
        for s in (self.bad, self.fwr):
            s.queue.clear()
        self._host_power_on()
        self.dut.pwr_fail.value = 0
        self.dut.rst.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.power_ok.value = 1
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.fw_on = True
        for _ in range(200_000):
            await RisingEdge(self.dut.clk)
            if int(self.dut.init_done.value):
                break
        else:
            raise AssertionError("init_done never rose")
        if self.seq_base:
            b = await self.fw_call(self.gen, op=FW_SEQSET, seq=self.seq_base)
            nseq = int(self.dut.next_seq.value)
            if b is None or b[0]["status"] != 0 or nseq != self.seq_base or int(self.dut.cpl_seq.value) != nseq:
                self.errors.append(f"SEQSET {self.seq_base:#x} at power-on: {b}, next_seq {nseq:#x}")
            self.stats["seqset"] += 1

    async def read_valid_counts(self) -> dict[tuple[int, int], int]:
        """The backend's per-block valid-page counts (vc_addr -> vc_data, one cycle), every block."""
        out = {}
        for d in range(self.geo.ndie):
            for b in range(self.geo.blocks):
                self.dut.vc_addr.value = d * self.geo.blocks + b
                await RisingEdge(self.dut.clk)
                await RisingEdge(self.dut.clk)
                out[(d, b)] = int(self.dut.vc_data.value)
        return out

    async def cut(self):
        self.fw_on = False
        self.gc_on = False
        self.gen += 1
        self.fwr.event.set()                        # a fw_call in progress ends (see fw_call)
        self.dut.power_ok.value = 0
        self.dut.pwr_fail.value = 1
        self.dut.wb_hold.value = 0
        await RisingEdge(self.dut.clk)
        self.counters = {k: int(getattr(self.dut, k).value) for k in
                         ("cnt_nand_prog", "cnt_prog_fail", "cnt_proto_err", "cnt_host_pages", "cnt_nand_read",
                          "cnt_ecc_corr")}
        self.stats["prog_fail"] += self.counters["cnt_prog_fail"]
        # the backend's transaction state at the cut (README "Transactions"): fixes pending (a tx
        # page whose early TX_WRITE named a page that failed to program), txs on the late path
        be = self.dut.u_dut.u_backend
        fx, tl = getattr(be, "fx_cnt_q", None), getattr(be, "txl_q", None)   # (None: a backend before issue 37)
        self.stats["fixes_at_cut"] = self.stats.get("fixes_at_cut", 0) + (int(fx.value) if fx is not None else 0)
        self.stats["late_tx_at_cut"] = self.stats.get("late_tx_at_cut", 0) + \
            (bin(int(tl.value)).count("1") if tl is not None else 0)
        self.stats["ecc_corr"] += self.counters["cnt_ecc_corr"]
        self.stats["nand_reads"] += self.counters["cnt_nand_read"]
        while self.bad.queue:                       # reports taken before the cut, not yet seen
            b = self.bad.queue.popleft()
            self.stats["grown_bad"] += 1
            self.grown_bad.append((b["chan"], b["way"], b["block"]))
        self.dut.rst.value = 1
        for _ in range(4):
            await RisingEdge(self.dut.clk)

    # ---------------------------------------------------------------- workload
    def _wl_edge(self):
        """Every edge (on the ticker, after the stream ends): counts edges and wakes the workload,
        which runs after the ticker at the edges it is woken at. `_wl_wait` True: wake at this
        edge. A tuple (command-queue length, cycle limit in edges, watch m_cpl_valid): the workload
        sleeps until a completion was taken, a command was accepted, the cut cycle came, or
        (cut-on-commit) a completion is on offer: at any other edge its loop would change nothing.
        With WL_CHECK it is woken at every edge and told which ones it would have slept through."""
        self.edges += 1
        w = self._wl_wait
        if w is None:
            return
        if w is not True and not (self.cpl.queue or len(self.cmd.queue) != w[0] or self.edges >= w[1]
                                  or (w[2] and int(self.dut.m_cpl_valid.value))):
            if self.edges - self._wl_progress > STALL_EDGES:
                # watchdog: commands in flight, and neither a completion nor an acceptance for
                # STALL_EDGES cycles: the device hangs (the workload fails with its state)
                self._wl_stall = True
                self._wl_wait = None
                self._wl_wake.set()
                return
            if not WL_CHECK:
                return
            self._wl_skip = True
        else:
            self._wl_progress = self.edges
        self._wl_wait = None
        self._wl_wake.set()

    async def workload(self, n_cmds: int, cut_at: int | None, clean: bool):
        rng = self.rng
        self.ops: dict[int, list[Op]] = {}       # lba -> ops in submission order
        self.recent_w: list[int] = []            # LBAs of the last 8 writes (RFLUSH targets: dirty pages)
        self.view: dict[int, tuple] = {}         # host view: lba -> ("w", version) | ("t",)
        self.flushes: list[tuple] = []           # (kind, cpl count at submission, ranges or None)
        self.version = 0
        self.content: dict[int, list[int]] = {}   # version -> words, for DIFFWRITE versions
        self.epoch = 0
        self.ncpl = 0
        self.txs = {t: Tx() for t in range(1, self.ntx_used + 1)}
        self.txlock: dict[int, int] = {}         # lba -> txid of the open tx that wrote it
        self.plain_after: dict[int, set] = {}    # txid -> its LBAs a plain WRITE / TRIM completed on since
        self.all_txs: list[list[Op]] = []        # every tx incarnation's writes (for INV-ATOM)
        inflight: dict[int, dict] = {}
        self.inflight = inflight
        busy: set[int] = set()
        free_tags = list(range(self.qdepth))
        rng.shuffle(free_tags)
        addr = 0x100000
        cycle = 0
        sent = 0
        phase = "random"        # clean iterations: then "flush" (one FLUSH), then "readback"
        readback: list[int] = []
        self.gc_on = True
        # cycle = edges since the workload started (its first iteration is at the next edge, cycle 1)
        edge0 = self.edges
        limit = None if cut_at is None else edge0 + cut_at + (COMMIT_WAIT if self.cut_on_commit else 0)
        watch_cpl = cut_at is not None and self.cut_on_commit
        noop = None                           # WL_CHECK: the state an iteration must leave unchanged
        while True:
            if noop is not None:
                now = (rng.getstate(), sent, n_cmds, phase, len(inflight), len(free_tags), len(self.cmd.queue))
                assert now == noop, f"workload: an iteration the wait would skip changed the state (cycle {cycle})"
                self.stats["wl_noop_checked"] = self.stats.get("wl_noop_checked", 0) + 1
                noop = None
            # An iteration in either state below changes nothing until a completion comes, a
            # command is accepted or a cut condition holds (no random numbers drawn, no command
            # built): the loop sleeps until _wl_edge sees one of those, instead of running at every
            # edge: the same cycles and decisions as an iteration at every edge (ATS_WL_CHECK checks it).
            if (limit is None or self.edges + 1 < limit) and (
                    (sent >= n_cmds and inflight) or
                    (sent < n_cmds and (not free_tags or len(self.cmd.queue) > 1 or (self.tx_heavy and len(inflight) >= 2)))):
                self._wl_wait = (len(self.cmd.queue), limit if limit is not None else 1 << 62, watch_cpl)
            else:
                self._wl_wait = True
            self._wl_skip = False
            self._wl_wake.clear()
            await self._wl_wake.wait()
            if self._wl_stall:
                raise AssertionError(f"device hang: no completion or acceptance for {STALL_EDGES} cycles with "
                                     f"{len(inflight)} commands in flight (ops {sorted(c['op'] for c in inflight.values())}, "
                                     f"{len(self.cmd.queue)} waiting); backend {self.backend_state()}")
            if self._wl_skip:                 # WL_CHECK: an edge the wait would have slept through
                noop = (rng.getstate(), sent, n_cmds, phase, len(inflight), len(free_tags), len(self.cmd.queue))
            cycle = self.edges - edge0
            if cut_at is not None and self.cut_on_commit and int(self.dut.m_cpl_valid.value):
                c = inflight.get(int(self.dut.m_cpl_tag.value))
                if c is not None and "tx_ops" in c and c["op"] != OP_ABORT and c["tx_ops"]:
                    self.stats["cut_at_commit_cpl"] += 1
                    assert noop is None, "workload: a cut-on-commit at an edge the wait would skip"
                    return                                # the commit is durable, the host has not seen it
            # a cut-on-commit run waits up to COMMIT_WAIT cycles longer for a commit's completion
            if cut_at is not None and cycle >= cut_at + (COMMIT_WAIT if self.cut_on_commit else 0):
                # some cuts wait for a die to be busy (R/B# low: most likely programming), so that
                # the campaign tears pages in flight, not only idle dies
                ndie_mask = (1 << self.geo.ndie) - 1
                if not self.cut_on_busy or int(self.dut.rb_n.value) & ndie_mask != ndie_mask \
                        or cycle > cut_at + 20_000:
                    assert noop is None, "workload: a cut at an edge the wait would skip"
                    return
            # completions
            while self.cpl.queue:
                c = self.cpl.queue.popleft()
                if self.trace is not None:
                    self.trace.append((cocotb.utils.get_sim_time("ns"), "cpl", c))
                cmd = inflight.pop(c["tag"], None)
                if cmd is None:
                    self.errors.append(f"completion of unknown tag {c['tag']}")
                    continue
                free_tags.append(c["tag"])
                busy.difference_update(cmd["lbas"])
                if cmd["op"] == OP_READ and any(o["op"] == OP_READ and o["sent"] < cmd["sent"] for o in inflight.values()):
                    self.stats["rd_cpl_ooo"] += 1        # a READ completed ahead of an older, open READ (any path; reported)
                self.complete(cmd, c)
            if sent >= n_cmds:
                if not inflight:
                    if clean and phase == "random" and (self.gc_on or self.gc_busy):
                        self.gc_on = False                # the firmware's operations stop first
                    elif clean and phase == "random":
                        # a clean shutdown ends every transaction first (commit or abort)
                        phase = "txend"
                        txend = [t for t, tx in self.txs.items() if tx.ops]
                        n_cmds += len(txend)
                        if not txend:
                            phase, n_cmds = "flush", n_cmds + 1
                    elif clean and phase == "txend":
                        phase, n_cmds = "flush", n_cmds + 1
                    elif clean and phase == "flush":
                        # read back every LBA written: most were written back and evicted from the
                        # 8-slot buffer, so these are read misses through the NAND (ECC)
                        phase = "readback"
                        readback = sorted(self.ops)
                        rng.shuffle(readback)
                        readback = readback[:10]
                        n_cmds += len(readback)
                    else:
                        assert noop is None, "workload: the end at an edge the wait would skip"
                        return
                continue
            # (heavy cycles keep at most two commands in flight, so that each builds on the
            # completed ones: a tx write, then a plain write of its LBA, then the tx's read of it)
            if not free_tags or len(self.cmd.queue) > 1 or (self.tx_heavy and len(inflight) >= 2) or \
                    rng.random() < 0.2:
                continue
            # next command
            tag = free_tags.pop()
            r = rng.random()
            nlb = rng.choice([0, 0, 0, 1, 2, 3])
            lba = rng.randrange(self.num_lbas)
            cmd = {"op": OP_WRITE, "tag": tag, "lba": lba, "nlb": nlb, "txid": 0, "flags": 0,
                   "attr": rng.choice([0, 0, 0, 1, 2]), "prio": rng.randrange(4), "dptr": addr, "aux": 0,
                   "lbas": [], "expect": OK}
            if phase == "flush":
                cmd.update(op=OP_FLUSH, lba=0, nlb=0, attr=0)
            elif phase == "txend":
                t = txend.pop()
                # (a tx larger than its table is always committed here: that commit must be refused)
                self.tx_end(cmd, t, OP_COMMIT if self.txs[t].big or rng.random() < 0.7 else OP_ABORT)
            elif phase == "readback":
                cmd.update(op=OP_READ, lba=readback.pop(), nlb=0)
            elif clean and sent == 0 and self.clean_big:
                # a tx larger than its table (TX_ENTRIES + 1 distinct pages): its commit must fail
                cmd.update(txid=1, lba=rng.randrange(self.num_lbas - self.tx_entries - 1), nlb=self.tx_entries,
                           big=True, flags=0)
            elif clean and sent == 1 and (ts := [t for t in range(1, self.ntx_used + 1)
                                                 if not self.txs[t].ending and not self.txs[t].big
                                                 and not self.plain_inflight(t)]):
                # every clean iteration commits a small tx (a WRITE with COMMIT on one page), so each
                # run sees commits complete whatever its cuts hit (coverage, not luck)
                cmd.update(txid=rng.choice(ts), nlb=0, flags=COMMIT, attr=cmd["attr"] & 1)
            elif r < (0.6 if self.cut_on_commit and cut_at is not None else 0.4 if self.tx_heavy else 0.25):
                # (a cut-on-commit power cycle sends mostly tx commands: more commits to cut at)
                if not self.tx_cmd(cmd, rng, busy):
                    free_tags.append(tag)
                    continue
            elif r < (0.7 if self.tx_heavy else 0.55):
                cmd["flags"] = rng.choice([0, 0, 0, FUA, BARRIER, BARRIER | FUA])
                held = [x for x, t in self.txlock.items() if not self.txs[t].ending and
                        (x in self.txs[t].own or not self.tx_heavy)]
                if held and rng.random() < (0.6 if self.tx_heavy else 0.2):
                    # a plain write of an LBA an open tx wrote (the tx must still read its own)
                    cmd.update(lba=rng.choice(held), nlb=0)
            elif r < 0.70:
                cmd["op"] = OP_READ
                if self.ops and rng.random() < 0.7:       # mostly LBAs written before: read misses
                    cmd["lba"] = rng.choice(list(self.ops))
            elif r < 0.76:
                cmd["op"] = OP_TRIM
            elif r < 0.82:
                cmd.update(op=OP_FLUSH, lba=0, nlb=0)
            elif r < 0.86:
                n = rng.randint(1, 3)
                ranges = []
                for i in range(n):
                    l0 = rng.randrange(self.num_lbas)
                    if self.recent_w and (i == 0 or rng.random() < 0.5):
                        # the last write's LBA (first range), or a recent one's: likely still dirty
                        # in the buffer, so the RFLUSH makes it urgent (urgent write-back path, C24)
                        l0 = self.recent_w[-1] if i == 0 else rng.choice(self.recent_w)
                    k = rng.randint(0, min(7, self.num_lbas - 1 - l0))
                    ranges.append((l0, k))
                    self.mem[addr + 8 * i] = l0
                    self.mem[addr + 8 * i + 4] = k << 16
                cmd.update(op=OP_RFLUSH, lba=0, nlb=n - 1, aux=addr, ranges=ranges)
            elif r < 0.94:
                # malformed: unknown opcode, LBA out of range, txid out of range / missing
                if rng.random() < 0.25:
                    bad = rng.randint(self.ntx + 1, 63)
                    cmd.update(op=rng.choice([OP_WRITE, OP_READ, OP_COMMIT, OP_ABORT, OP_BEGIN]), txid=bad,
                               expect=BAD_TXID)
                elif rng.random() < 0.2:
                    cmd.update(op=rng.choice([OP_COMMIT, OP_ABORT, OP_BEGIN, OP_WRITE]), txid=0, expect=BAD_TXID)
                    if cmd["op"] == OP_WRITE:
                        cmd["flags"] = COMMIT
                elif rng.random() < 0.5:
                    cmd.update(op=rng.randint(12, 15), expect=BAD_OP)
                else:
                    cmd.update(lba=self.num_lbas - rng.randint(0, 1), nlb=rng.randint(1, 3), expect=BAD_LBA,
                               op=rng.choice([OP_WRITE, OP_READ, OP_TRIM]))
            else:
                cmd["op"] = OP_READ
            if cmd["op"] in (OP_WRITE, OP_READ, OP_TRIM, OP_DIFF) and cmd["expect"] == OK:
                lbas = list(range(cmd["lba"], min(self.num_lbas, cmd["lba"] + cmd["nlb"] + 1)))
                cmd["nlb"] = len(lbas) - 1
                # a tx writes only LBAs no other open tx holds; a plain WRITE / TRIM may hit an LBA an
                # open tx wrote (the tx still reads its own version, and its commit replaces the
                # plain one), except while that tx's commit is in flight (its order is unknown then)
                if any(x in busy for x in lbas) or \
                        (cmd["op"] != OP_READ and cmd["txid"] and
                         any(self.txlock.get(x, cmd["txid"]) != cmd["txid"] for x in lbas)) or \
                        (cmd["op"] != OP_READ and not cmd["txid"] and
                         any(x in self.txlock and self.txs[self.txlock[x]].ending for x in lbas)):
                    free_tags.append(tag)
                    continue
                cmd["lbas"] = lbas
                busy.update(lbas)
            if cmd["op"] == OP_WRITE and cmd["expect"] == OK:
                cmd["versions"] = []
                for i, x in enumerate(cmd["lbas"]):
                    self.version += 1
                    for j, w in enumerate(pattern(x, self.version, self.pw)):
                        self.mem[addr + i * self.geo.page_bytes + 4 * j] = w
                    o = Op(x, "w", self.version, self.epoch, bool(cmd["flags"] & FUA), tx=cmd["txid"])
                    self.add_op(o)
                    cmd["versions"].append(o)
                    if cmd["txid"]:
                        self.txs[cmd["txid"]].ops.append(o)
                        self.txlock[x] = cmd["txid"]
                if cmd.get("big"):
                    self.txs[cmd["txid"]].big = True
                if cmd["txid"] and cmd["flags"] & COMMIT:
                    self.tx_mark_ending(cmd, cmd["txid"])
                if cmd["flags"] & BARRIER:
                    self.epoch += 1
            elif cmd["op"] == OP_DIFF and cmd["expect"] == OK:
                # the new version: the tx's view of the page (own latest, else committed) with the
                # diff's words in place
                x, t = cmd["lba"], cmd["txid"]
                own = self.txs[t].own
                if x in own and x in self.plain_after.get(t, ()):
                    self.stats["tx_diffs_over_plain"] = self.stats.get("tx_diffs_over_plain", 0) + 1
                base = ("w", own[x]) if x in own else self.view.get(x)
                words = list(self.page_words(x, base[1])) if base and base[0] == "w" else [0] * self.pw
                off, n = cmd["aux"] & 0xFFFF, cmd["aux"] >> 16
                for j in range(n // 4):
                    v = rng.getrandbits(32)
                    self.mem[addr + 4 * j] = v
                    words[off // 4 + j] = v
                self.version += 1
                self.content[self.version] = words
                o = Op(x, "w", self.version, self.epoch, bool(cmd["flags"] & FUA), tx=t)
                self.add_op(o)
                cmd["versions"] = [o]
                self.txs[t].ops.append(o)
                self.txlock[x] = t
                self.stats["diffwrites"] += 1
            elif cmd["op"] == OP_TRIM and cmd["expect"] == OK:
                cmd["versions"] = []
                for x in cmd["lbas"]:
                    o = Op(x, "t", 0, self.epoch, False)
                    self.add_op(o)
                    cmd["versions"].append(o)
            elif cmd["op"] == OP_READ and cmd["expect"] == OK:
                own = self.txs[cmd["txid"]].own if cmd["txid"] else {}
                # coverage: a tx read of its own page after a plain WRITE / TRIM of that LBA completed
                cmd["over_plain"] = sum(1 for x in cmd["lbas"] if x in own and x in self.plain_after.get(cmd["txid"], ()))
                cmd["expect_data"] = [("w", own[x]) if x in own else self.view.get(x) for x in cmd["lbas"]]
                if cmd["txid"] and self.tx_maybe_full(self.txs[cmd["txid"]]):
                    cmd["unchecked"] = True                # (tx_maybe_full)
                    self.stats["tx_reads_unchecked"] = self.stats.get("tx_reads_unchecked", 0) + 1
                # a READ without txid of an LBA whose tx commit is in flight may see either side of it
                cmd["alt"] = {}
                if not cmd["txid"]:
                    for x in cmd["lbas"]:
                        t = self.txlock.get(x)
                        if t and self.txs[t].commit_ops is not None:
                            cmd["alt"][x] = self.txs[t].commit_ops[x]
                for i in range(len(cmd["lbas"])):
                    for j in range(self.pw):
                        self.mem.pop(addr + i * self.geo.page_bytes + 4 * j, None)
            elif cmd["op"] in (OP_FLUSH, OP_RFLUSH):
                cmd["at_ncpl"] = self.ncpl
            addr += 0x10000
            cmd["sent"] = sent
            inflight[tag] = cmd
            self.cmd.send_nowait(**{k: cmd[k] for k in CMD_FIELDS})
            sent += 1
            self.stats["cmds"] += 1

    # ---------------------------------------------------------------- transactions
    def tx_cmd(self, cmd, rng, busy) -> bool:
        """Turn `cmd` into a transactional command of a random txid; False: nothing to send now."""
        t = rng.randint(1, self.ntx_used)
        if self.tx_heavy and rng.random() < 0.7:
            # (heavy cycles: mostly a tx that has a page a plain write hit since, else tx 1)
            cands = [u for u in range(1, self.ntx_used + 1) if set(self.txs[u].own) & self.plain_after.get(u, set())]
            t = rng.choice(cands) if cands else 1
        tx = self.txs[t]
        if tx.ending:
            return False
        cmd["txid"] = t
        k = rng.random()
        over = sorted(set(tx.own) & self.plain_after.get(t, set()))
        if over and self.tx_heavy and k < 0.5:
            k = 0.5 + k / 2                                # (heavy cycles: a DIFFWRITE or tx read of it)
        if self.tx_heavy and 0.75 <= k < 0.96 and rng.random() < 0.7:
            return False                                   # (heavy cycles: transactions live longer)
        if self.plain_inflight(t) and 0.75 <= k < 0.88:
            return False                                  # (a commit now would race the plain write)
        if k < 0.5:                                       # tx write (the generic path adds its ops)
            cmd["op"] = OP_WRITE
            if not tx.ops and rng.random() < 0.04:
                # a tx larger than its table: its commit must fail (TX_FULL, or INDEX_FULL first)
                cmd["nlb"] = self.tx_entries
                cmd["lba"] = rng.randrange(self.num_lbas - self.tx_entries - 1)
                cmd["big"] = True
            elif tx.own and rng.random() < 0.4:
                cmd["lba"] = rng.choice(list(tx.own))     # rewrite of its own page
            cmd["flags"] = rng.choice([0, 0, 0, BARRIER, FUA])
            if rng.random() < 0.25 and not self.plain_inflight(t):
                cmd["flags"] |= COMMIT                    # the tx's last write carries the commit
                cmd["attr"] &= 1                          # (not HEAD: see tx_end)
            if not tx.ops and not cmd.get("big") and not self.plain_inflight(t) and rng.random() < 0.3:
                # an atomic write: 2-4 pages with COMMIT on a txid without entries, what the NVMe front
                # end sends for a Write inside its atomic unit (docs/host-interface.md 1.10)
                cmd.update(nlb=rng.randint(1, 3), flags=COMMIT | (cmd["flags"] & FUA), attr=cmd["attr"] & 1)
                self.stats["atomic_writes"] += 1
        elif k < 0.65:                                    # DIFFWRITE: words of one page
            cmd.update(op=OP_DIFF, nlb=0, flags=rng.choice([0, 0, FUA]))
            if over and rng.random() < 0.5:
                cmd["lba"] = rng.choice(over)             # its base: the tx's own page, not the plain one
            elif tx.own and rng.random() < 0.5:
                cmd["lba"] = rng.choice(list(tx.own))
            w0 = rng.randrange(self.pw)
            nw = rng.randint(1, min(self.pw - w0, 8))
            off, n = 4 * w0, 4 * nw
            if rng.random() < 0.1:                        # malformed: not word multiples, or past the page
                cmd["expect"] = BAD_FIELD
                if rng.random() < 0.5:
                    off += rng.randint(1, 3)
                else:
                    n = self.geo.page_bytes - off + 4
            cmd["aux"] = off | n << 16
        elif k < 0.75:                                    # tx read: its own writes, else committed data
            cmd["op"] = OP_READ
            if over and rng.random() < 0.7:
                cmd["lba"] = rng.choice(over)             # its own page after a plain WRITE / TRIM of it
            elif tx.own and rng.random() < 0.7:
                cmd["lba"] = rng.choice(list(tx.own))
            cmd["tx_read"] = True
        elif k < 0.88:
            self.tx_end(cmd, t, OP_COMMIT)
        elif k < 0.96:
            self.tx_end(cmd, t, OP_ABORT)
        else:
            # TX_BEGIN of a txid that holds entries fails with TABLE_FULL (the command queue runs it
            # after the tx's earlier commands, so every write submitted before it is in the device)
            # (not HEAD: a HEAD command may overtake the tx's earlier writes, architecture §9)
            cmd.update(op=OP_BEGIN, lba=0, nlb=0, expect=TABLE_FULL if tx.ops else OK, attr=cmd["attr"] & 1)
        if cmd["op"] in (OP_WRITE, OP_DIFF) and any(c["op"] == OP_BEGIN and c["txid"] == t
                                                    for c in self.inflight.values()):
            cmd["attr"] &= 1                              # (nor may a write overtake a TX_BEGIN of its tx)
        return True

    def plain_inflight(self, t) -> bool:
        """A plain WRITE / TRIM on an LBA of tx t is in flight: a commit of t submitted now could be
        ordered either side of it."""
        lbas = {o.lba for o in self.txs[t].ops}
        return any(c["op"] in (OP_WRITE, OP_TRIM) and not c["txid"] and lbas.intersection(c["lbas"])
                   for c in self.inflight.values())

    def tx_end(self, cmd, t, op):
        # not HEAD_OF_QUEUE: a HEAD command may overtake the tx's earlier writes (architecture §9),
        # and the host model gives the commit exactly the writes submitted before it
        cmd.update(op=op, txid=t, lba=0, nlb=0, flags=0, attr=cmd["attr"] & 1)
        self.tx_mark_ending(cmd, t)

    def tx_mark_ending(self, cmd, t):
        """A commit (TX_COMMIT, a WRITE with COMMIT) or TX_ABORT of tx t was submitted: the statuses it
        may complete with, and the writes it covers."""
        tx = self.txs[t]
        tx.ending = True
        tx.big |= bool(cmd.get("big"))
        cmd["tx_ops"] = list(tx.ops)
        if cmd["op"] == OP_ABORT:
            cmd["expect_any"] = {TX_EMPTY} if not tx.ops else ({OK, TX_EMPTY} if tx.big else {OK})
        else:
            for o in tx.ops:
                o.state = "ending"
            tx.commit_ops = {o.lba: o.version for o in tx.ops}
            # a commit takes effect at its place in the order: the version it applies to an LBA
            # follows the plain WRITEs / TRIMs of that LBA submitted before it (they completed
            # before it was submitted: plain_inflight), so its op moves to the end of the LBA's ops
            last = {o.lba: o for o in tx.ops}
            for x, o in last.items():
                lst = self.ops[x]
                if lst[-1] is not o:
                    lst.remove(o)
                    lst.append(o)
                    for i, p in enumerate(lst):
                        p.idx = i
            # READs without txid already in flight on these LBAs may be served after the commit
            for c in self.inflight.values():
                if c["op"] == OP_READ and not c["txid"] and "alt" in c:
                    for x in c["lbas"]:
                        if x in tx.commit_ops:
                            c["alt"][x] = tx.commit_ops[x]
            # a big WRITE that carries the COMMIT itself: only its marked page (entry TX_ENTRIES + 1)
            # overflows the table; the backend then applies COMMIT and the page's own MAP_WRITE
            # (docs/persistence.md §4), the replay's result: OK, the whole tx committed
            big_self = bool(cmd.get("big")) and cmd["op"] == OP_WRITE
            cmd["expect_any"] = {TX_EMPTY} if not tx.ops else ({OK, TX_FULL, INDEX_FULL} if big_self else
                                                              {TX_FULL, INDEX_FULL} if tx.big else
                                                              {OK, INDEX_FULL, TX_FULL} if self.tx_maybe_full(tx)
                                                              else {OK, INDEX_FULL})
        self.all_txs.append(cmd["tx_ops"])

    def tx_maybe_full(self, tx) -> bool:
        """Every page of a tx written back takes an entry of its table (a rewrite coalesced in the
        buffer does not, one written back again does): with more page writes than TX_ENTRIES, a
        write-back may have been refused TX_FULL (the tx is then doomed: its commit fails, its own
        pages may read as the committed data). Which writes coalesce depends on the write-back
        timing, so such a tx's own reads are not checked and its commit may answer TX_FULL."""
        return len(tx.ops) > self.tx_entries

    def tx_finish(self, cmd, committed: bool):
        t = cmd["txid"]
        tx = self.txs[t]
        for o in cmd["tx_ops"]:
            o.state = "committed" if committed else "dead"
            if committed:
                o.cpl = self.ncpl
                self.view[o.lba] = ("w", o.version)
            if self.txlock.get(o.lba) == t:
                del self.txlock[o.lba]
        self.txs[t] = Tx()
        self.plain_after.pop(t, None)

    def page_words(self, lba: int, version: int) -> list[int]:
        """Content of a version: a DIFFWRITE's explicit words, else the write's pattern."""
        return self.content[version] if version in self.content else pattern(lba, version, self.pw)

    def starve_seen_expected(self) -> bool:
        return self.stats["starved"] >= 3

    def add_op(self, o: Op):
        lst = self.ops.setdefault(o.lba, [])
        o.idx = len(lst)
        lst.append(o)
        if o.kind == "w":
            self.recent_w = (self.recent_w + [o.lba])[-8:]

    def complete(self, cmd, c):
        st, res = c["status"], c["result"]
        name = f"op {cmd['op']} tag {cmd['tag']} lba {cmd['lba']} nlb {cmd['nlb']} txid {cmd['txid']}"
        ok_set = cmd.get("expect_any", {cmd["expect"]})
        if st not in ok_set:
            self.errors.append(f"{name}: status {st:#x}, expected one of {sorted(ok_set)}")
            return
        if "tx_ops" in cmd:                       # commit / abort of a tx (TX_COMMIT, TX_ABORT, WRITE+COMMIT)
            committed = cmd["op"] != OP_ABORT and st == OK
            if cmd["op"] == OP_ABORT:
                self.stats["tx_aborts"] += 1
            elif st == OK:
                self.stats["tx_commits"] += 1
            elif st != TX_EMPTY:
                self.stats["tx_failed"] += 1
            if committed:
                self.ncpl += 1
            self.tx_finish(cmd, committed)
            if cmd["op"] == OP_WRITE and st == OK and res != cmd["nlb"] + 1:
                self.errors.append(f"{name}: result {res}, expected {cmd['nlb'] + 1}")
            elif cmd["op"] == OP_COMMIT and st == OK:
                # the entries the commit applied: one per page of the tx that reached the media
                # (a rewrite coalesced in the buffer once, one written back before its rewrite twice)
                lo, hi = len({o.lba for o in cmd["tx_ops"]}), len(cmd["tx_ops"])
                self.stats["commit_entries"] = self.stats.get("commit_entries", 0) + res
                if not lo <= res <= hi:
                    self.errors.append(f"{name}: result {res}, expected {lo}..{hi} entries")
            elif cmd["op"] in (OP_COMMIT, OP_ABORT) and res != 0:
                self.errors.append(f"{name}: result {res}, expected 0")
            return
        if st != OK:
            return
        if cmd["op"] == OP_BEGIN:
            return
        pages = cmd["nlb"] + 1
        exp_res = pages if cmd["op"] in (OP_READ, OP_WRITE, OP_TRIM, OP_DIFF) else 0
        if res != exp_res:
            self.errors.append(f"{name}: result {res}, expected {exp_res}")
        self.ncpl += 1
        if cmd["op"] in (OP_WRITE, OP_TRIM, OP_DIFF):
            for o in cmd["versions"]:
                if o.tx:                          # buffered in its tx: visible to the tx only
                    self.txs[o.tx].own[o.lba] = o.version
                    continue
                o.cpl = self.ncpl
                self.view[o.lba] = ("w", o.version) if o.kind == "w" else ("t",)
                if o.lba in self.txlock:
                    self.plain_after.setdefault(self.txlock[o.lba], set()).add(o.lba)
                    self.stats["plain_over_tx"] = self.stats.get("plain_over_tx", 0) + 1
        elif cmd["op"] == OP_READ:
            self.drain_hwr()
            for i, (x, e) in enumerate(zip(cmd["lbas"], cmd["expect_data"])):
                base = cmd["dptr"] + i * self.geo.page_bytes
                got = [self.mem.get(base + 4 * j) for j in range(self.pw)]
                exp = self.page_words(x, e[1]) if e and e[0] == "w" else [0] * self.pw
                if got != exp and x in cmd.get("alt", {}) and got == self.page_words(x, cmd["alt"][x]):
                    exp = got                             # the commit it raced with came first
                if cmd.get("unchecked"):
                    exp = got                             # a tx that may have been refused TX_FULL
                if got != exp:
                    bad = next(j for j in range(self.pw) if got[j] != exp[j])
                    src = [(v, [(o.lba, o.tx, o.state) for l, ops in self.ops.items() for o in ops if o.version == v])
                           for v, wds in self.content.items() if wds[bad] == got[bad]]
                    self.errors.append(f"{name}: LBA {x} word {bad}: {got[bad]} != {exp[bad]} (view {e}; "
                                       f"diff versions with that word: {src})")
                self.stats["reads_checked"] += 1
                self.stats["tx_reads"] += int(bool(cmd.get("tx_read")))
            self.stats["tx_reads_over_plain"] = self.stats.get("tx_reads_over_plain", 0) + cmd.get("over_plain", 0)
        elif cmd["op"] == OP_FLUSH:
            self.flushes.append((None, cmd["at_ncpl"]))
        elif cmd["op"] == OP_RFLUSH:
            self.flushes.append((cmd["ranges"], cmd["at_ncpl"]))

    # ---------------------------------------------------------------- directed transaction scenario
    async def run_one(self, **f) -> tuple[int, int]:
        """One command alone (the directed scenario): send it, wait for its completion."""
        cmd = dict(op=OP_READ, tag=3, lba=0, nlb=0, txid=0, flags=0, attr=0, prio=0, dptr=0x200000, aux=0)
        cmd.update(f)
        self.cmd.send_nowait(**{k: cmd[k] for k in CMD_FIELDS})
        for _ in range(STALL_EDGES):
            await RisingEdge(self.dut.clk)
            if self.cpl.queue:
                c = self.cpl.queue.popleft()
                if self.trace is not None:
                    self.trace.append((cocotb.utils.get_sim_time("ns"), "cpl", c))
                assert c["tag"] == cmd["tag"], c
                return c["status"], c["result"]
        raise AssertionError(f"directed scenario: no completion for {cmd}")

    async def directed_tx(self):
        """Transactions against the contract (docs/architecture.md section 1, docs/host-interface.md
        section 1.5), one command at a time on a fresh device:
        - read your writes after eviction: tx 1 writes x and y, a FLUSH and 10 plain writes of
          other LBAs write its pages back and evict them (8-slot buffer), then a plain WRITE of x and
          a TRIM of y: a TX READ still returns tx 1's pages, plain READs the plain ones;
        - the DIFFWRITE base in the same case is tx 1's page;
        - TX_BEGIN of a txid that holds entries: TABLE_FULL; after its commit / abort: OK;
        - TX_COMMIT's result: the entries applied (x, y and the DIFFWRITE's x: 3, each written back
          once), and the commit replaces the plain version and the TRIM;
        - TX_ABORT and TX_COMMIT of a txid without entries: TX_EMPTY, and no NAND program;
        - tx 3 with a page on the media reads an LBA it never wrote: the committed (plain) version."""
        pw = self.pw
        addr = 0x200000
        errs = []
        nv = [1 << 20]

        def expect(what, got, exp):
            if got != exp:
                errs.append(f"directed: {what}: got {got}, expected {exp}")

        async def write(lba, txid=0):
            nv[0] += 1
            for j, w in enumerate(pattern(lba, nv[0], pw)):
                self.mem[addr + 4 * j] = w
            expect(f"WRITE {lba} txid {txid}", await self.run_one(op=OP_WRITE, lba=lba, txid=txid, dptr=addr), (OK, 1))
            return pattern(lba, nv[0], pw)

        async def read(what, lba, exp, txid=0):
            for j in range(pw):
                self.mem.pop(addr + 4 * j, None)
            expect(f"{what}: status", await self.run_one(op=OP_READ, lba=lba, txid=txid, dptr=addr), (OK, 1))
            self.drain_hwr()
            got = [self.mem.get(addr + 4 * j) for j in range(pw)]
            if got != exp:
                j = next(j for j in range(pw) if got[j] != exp[j])
                errs.append(f"directed: {what}: LBA {lba} word {j}: {got[j]} != {exp[j]} (got words 0-1 {got[:2]})")

        async def evict(base):
            # after the FLUSH every slot is clean; writeback starts only when all 8 slots hold pages
            # not yet durable, so 8 writes of other LBAs take every old slot (10: a margin)
            expect("FLUSH", await self.run_one(op=OP_FLUSH), (OK, 0))
            for i in range(10):
                await write(base + i)
            expect("FLUSH", await self.run_one(op=OP_FLUSH), (OK, 0))

        x, y, z, w = 40, 41, 42, 43
        zeros = [0] * pw
        vx = await write(x, txid=1)
        vy = await write(y, txid=1)
        await evict(0)
        px = await write(x)
        expect("TRIM y", await self.run_one(op=OP_TRIM, lba=y), (OK, 1))
        await read("tx 1 reads x after a plain write", x, vx, txid=1)
        await read("tx 1 reads y after a TRIM", y, vy, txid=1)
        await read("plain read of x", x, px)
        await read("plain read of y", y, zeros)
        # DIFFWRITE of words 2-3 of x in tx 1: its base is tx 1's x, not the plain one
        for j, v in enumerate((0x11112222, 0x33334444)):
            self.mem[addr + 4 * j] = v
        expect("DIFFWRITE x", await self.run_one(op=OP_DIFF, lba=x, txid=1, dptr=addr, aux=8 | 8 << 16), (OK, 1))
        dx = vx[:2] + [0x11112222, 0x33334444] + vx[4:]
        await read("tx 1 reads x after its DIFFWRITE", x, dx, txid=1)
        await read("plain read of x after the DIFFWRITE", x, px)
        expect("TX_BEGIN of a txid holding entries", await self.run_one(op=OP_BEGIN, txid=1), (TABLE_FULL, 0))
        # empty txids: TX_EMPTY and nothing programmed
        expect("FLUSH", await self.run_one(op=OP_FLUSH), (OK, 0))
        await ClockCycles(self.dut.clk, 500)
        n0 = int(self.dut.cnt_nand_prog.value)
        expect("TX_ABORT of an empty txid", await self.run_one(op=OP_ABORT, txid=2), (TX_EMPTY, 0))
        expect("TX_COMMIT of an empty txid", await self.run_one(op=OP_COMMIT, txid=3), (TX_EMPTY, 0))
        await ClockCycles(self.dut.clk, 2000)
        expect("NAND programs for an empty abort / commit", int(self.dut.cnt_nand_prog.value) - n0, 0)
        expect("TX_COMMIT of tx 1 (entries applied)", await self.run_one(op=OP_COMMIT, txid=1), (OK, 3))
        await read("plain read of x after the commit", x, dx)
        await read("plain read of y after the commit", y, vy)
        expect("TX_BEGIN after the commit", await self.run_one(op=OP_BEGIN, txid=1), (OK, 0))
        # tx 2: entries, then abort; TX_BEGIN refused before, accepted after
        await write(z, txid=2)
        expect("TX_BEGIN of tx 2 holding entries", await self.run_one(op=OP_BEGIN, txid=2), (TABLE_FULL, 0))
        expect("TX_ABORT of tx 2", await self.run_one(op=OP_ABORT, txid=2), (OK, 0))
        expect("TX_BEGIN of tx 2 after its abort", await self.run_one(op=OP_BEGIN, txid=2), (OK, 0))
        await read("tx 2 reads z after its abort", z, zeros, txid=2)
        # tx 3 has a page on the media (w, evicted); x is not in its table: committed data, the
        # plain version still in the buffer (the probe of the tx's table misses)
        vw = await write(w, txid=3)
        await evict(16)
        qx = await write(x)
        await read("tx 3 reads x it never wrote", x, qx, txid=3)
        await read("tx 3 reads its own w after eviction", w, vw, txid=3)
        expect("TX_ABORT of tx 3", await self.run_one(op=OP_ABORT, txid=3), (OK, 0))
        # an RFLUSH of a page still dirty in the buffer (one page: the buffer writes back only when
        # every slot holds a page not yet durable) makes its write-back urgent (m_wb's fua), the path
        # the HEAD-program check (C24) watches; directed, so that every campaign has one whatever the
        # random mix's timing (its RFLUSHes of recent writes can find their pages written back
        # already: a one-cycle change of the remap response's path took the last one from
        # 1x4_faults-bp4); the RFLUSH completes OK and the page reads back
        u0 = int(self.dut.urgent_wb_total.value)
        vu = await write(44)
        raddr = 0x280000
        self.mem[raddr], self.mem[raddr + 4] = 44, 0        # one range: LBA 44, NLB 0 (one LBA)
        got = await self.run_one(op=OP_RFLUSH, lba=0, nlb=0, aux=raddr)
        expect("RFLUSH of a dirty page: status", got[0], OK)
        expect("urgent write-backs for the RFLUSH of a dirty page", int(self.dut.urgent_wb_total.value) > u0, True)
        await read("read of the RFLUSHed page", 44, vu)
        await self.directed_commit_timing(write, expect)
        expect("protocol errors", int(self.dut.cnt_proto_err.value), 0)
        self.stats["directed_checks"] = self.stats.get("directed_checks", 0) + 1
        self.errors.extend(errs)

    async def directed_nawun(self, rounds: int):
        """Reads concurrent with a commit (NAWUN, docs/host-interface.md 1.10 "Reads during a
        commit"): on a fresh device, per round a tx t writes new versions of 2-4 consecutive LBAs
        whose old (plain) versions are in the buffer (clean after a FLUSH, or dirty) or on flash,
        then its commit (TX_COMMIT; the last page as a WRITE with COMMIT; or, as the NVMe front end
        sends an atomic Write, all pages in one WRITE with COMMIT on a txid without entries) is
        submitted while READs of those LBAs (mostly multi-page) are submitted continuously at random
        gaps, before, during and after the commit, up to 6 in flight (a READ that overlaps the COMMIT
        write is ordered by the queue; the others run beside the commit in the write buffer; the
        commit has prio 1, else the queue would dispatch every queued READ first). Reference: the
        host's view (old / new version of each LBA). Checked:
        - every page returned is the LBA's old or new version, and one READ's pages are all old or all new;
        - a READ completed before the commit was submitted is all old, one submitted after the
          commit completed (OK) all new;
        - linearisable: no READ submitted after another READ completed with the new data returns
          the old data.
        Stats `nawun_reads` (reads checked), `nawun_concurrent` (submitted while the commit was in
        flight), `nawun_old` / `nawun_new` among those."""
        rng = random.Random(self.rng.getrandbits(32))
        pw, pb = self.pw, self.geo.page_bytes
        errs = []
        nv = [2 << 20]
        st = self.stats
        for k in ("nawun_reads", "nawun_concurrent", "nawun_old", "nawun_new"):
            st.setdefault(k, 0)

        async def write(lba, n, txid=0, flags=0, addr=0x200000):
            vs = []
            for i in range(n):
                nv[0] += 1
                vs.append(nv[0])
                for j, w in enumerate(pattern(lba + i, nv[0], pw)):
                    self.mem[addr + i * pb + 4 * j] = w
            got = await self.run_one(op=OP_WRITE, lba=lba, nlb=n - 1, txid=txid, flags=flags, dptr=addr)
            if got != (OK, n):
                errs.append(f"nawun: WRITE {lba}+{n} txid {txid}: {got}")
            return vs

        now = lambda: cocotb.utils.get_sim_time("ns") // 10   # noqa: E731
        # the write buffer's commit window (cw_q, public): its length per commit and the latency of
        # the READs submitted while it is open (held) or while no window is open (not held); the
        # stats hold the figures of the last call (one power cycle)
        cw = getattr(self.dut.u_dut.u_wbuf, "cw_q", None)
        win = {"open": None, "len": [], "held": [], "free": []}
        for rnd in range(rounds):
            t = 1 + rnd % self.ntx_used
            k = rng.randint(2, 4)
            # the commit: TX_COMMIT; or the last page as a WRITE + COMMIT; or (atomic) every page
            # in one WRITE + COMMIT on a txid without entries, as the NVMe front end sends an
            # atomic Write (the queue orders a READ that overlaps a write behind it or ahead of it)
            mode = rng.choices(("commit", "cmt_write", "atomic"), (6, 3, 1))[0]
            base = rng.randrange(0, self.num_lbas - k)
            old = dict(zip(range(base, base + k), await write(base, k)))
            # where the old versions are when the commit is applied: the first j pages in the
            # buffer (dirty, or clean after a FLUSH), the others only on flash (evicted: a FLUSH and
            # 10 writes of other LBAs take every slot of the 8-slot buffer), so that a READ's pages
            # come from the buffer's committed copies and from the media's mapping (both in 3 of
            # 4 rounds: the mix the RTL before "Reads during a commit" returned)
            j = rng.randint(1, k - 1) if rng.random() < 0.75 else rng.choice((0, k))
            if j < k:
                other = (base + k + 4) % (self.num_lbas - 10)
                for _ in range(2):
                    if await self.run_one(op=OP_FLUSH) != (OK, 0):
                        errs.append("nawun: FLUSH")
                    await write(other, 5)
                    await write(other + 5, 5)
                if j:
                    old.update(zip(range(base, base + j), await write(base, j)))
            if rng.random() < 0.5:
                if await self.run_one(op=OP_FLUSH) != (OK, 0):
                    errs.append("nawun: FLUSH")
            m = {"commit": k, "cmt_write": k - 1, "atomic": 0}[mode]     # pages of the tx's own WRITE
            new = dict(zip(range(base, base + m), await write(base, m, txid=t))) if m else {}
            if mode == "atomic":
                t = self.ntx                               # (the campaign's txids are 1 .. ntx_used)
            # the concurrent phase: the commit among a stream of reads
            tags = list(range(self.qdepth))
            rng.shuffle(tags)
            ctag = tags.pop()
            if mode != "commit":
                for i in range(k - m):
                    nv[0] += 1
                    new[base + m + i] = nv[0]
                    for j, w in enumerate(pattern(base + m + i, nv[0], pw)):
                        self.mem[0x210000 + i * pb + 4 * j] = w
                ccmd = dict(op=OP_WRITE, lba=base + m, nlb=k - m - 1, txid=t, flags=COMMIT, dptr=0x210000)
            else:
                ccmd = dict(op=OP_COMMIT, lba=0, nlb=0, txid=t, flags=0, dptr=0)
            pre = rng.randint(0, 3)                        # reads submitted before the commit
            c_sub = c_done = None
            c_ok = False
            after = rng.randint(2, 5)                      # reads submitted after its completion
            inflight = {}                                  # tag -> (lba, nlb, submitted)
            done = []                                      # (submitted, completed, lba, nlb, kind)
            nread = 0
            gap = 0
            for _ in range(STALL_EDGES):
                await RisingEdge(self.dut.clk)
                if cw is not None:
                    o = int(cw.value)
                    if o and win["open"] is None:
                        win["open"] = now()
                    elif not o and win["open"] is not None:
                        win["len"].append(now() - win["open"])
                        win["open"] = None
                while self.cpl.queue:
                    c = self.cpl.queue.popleft()
                    if c["tag"] == ctag:
                        c_done = now()
                        c_ok = c["status"] == OK
                        if c["status"] not in (OK, INDEX_FULL, TX_FULL):
                            errs.append(f"nawun: commit of tx {t}: status {c['status']:#x}")
                        continue
                    if c["tag"] not in inflight:
                        errs.append(f"nawun: completion of unknown tag {c}")
                        continue
                    lba, nlb, sub, held = inflight.pop(c["tag"])
                    win["held" if held else "free"].append(now() - sub)
                    tags.append(c["tag"])
                    self.drain_hwr()
                    a = 0x300000 + c["tag"] * 0x2000
                    kinds = set()
                    for i in range(nlb + 1):
                        got = [self.mem.get(a + i * pb + 4 * j) for j in range(pw)]
                        x = lba + i
                        if got == pattern(x, old[x], pw):
                            kinds.add("old")
                        elif x in new and got == pattern(x, new[x], pw):
                            kinds.add("new")
                        else:
                            kinds.add("bad")
                            errs.append(f"nawun: READ {lba}+{nlb + 1} page {x}: words 0-1 {got[:2]}, "
                                        f"old v{old[x]}, new v{new.get(x)}")
                    if c["status"] != OK or c["result"] != nlb + 1:
                        errs.append(f"nawun: READ {lba}+{nlb + 1}: {c}")
                    kind = kinds.pop() if len(kinds) == 1 else "mixed"
                    if kind == "mixed":
                        errs.append(f"nawun: round {rnd} READ {lba}+{nlb + 1} submitted at {sub}, completed at "
                                    f"{now()}, commit of tx {t} submitted at {c_sub}, completed at {c_done}: "
                                    f"some pages old, some new")
                    done.append((sub, now(), lba, nlb, kind))
                if c_done is not None and not inflight and after <= 0:
                    break
                if gap > 0:
                    gap -= 1
                    continue
                if c_sub is None and nread >= pre:
                    # prio 1: the queue dispatches a READ before anything else of its prio, and
                    # this stream always has one queued (a prio-0 commit would wait for its end)
                    self.cmd.send_nowait(tag=ctag, attr=0, prio=1, aux=0, **ccmd)
                    c_sub = now()
                    gap = rng.randint(0, 40)
                    continue
                if len(inflight) >= 6 or not tags or (c_done is not None and after <= 0):
                    continue
                tag = tags.pop()
                r = rng.random()                           # all k pages, some (2 or more), one
                a0 = 0 if r < 0.5 else rng.randrange(0, k - 1) if r < 0.85 else rng.randrange(0, k)
                n = k if r < 0.5 else rng.randint(2, k - a0) if r < 0.85 else 1
                a = 0x300000 + tag * 0x2000
                for j in range(n * pw):
                    self.mem.pop(a + 4 * j, None)
                self.cmd.send_nowait(op=OP_READ, tag=tag, lba=base + a0, nlb=n - 1, txid=0, flags=0, attr=0,
                                     prio=0, dptr=a, aux=0)
                inflight[tag] = (base + a0, n - 1, now(), win["open"] is not None)
                nread += 1
                if c_done is not None:
                    after -= 1
                gap = rng.choice((0, 0, rng.randint(0, 20), rng.randint(0, 200)))
            else:
                errs.append(f"nawun: round {rnd}: no end (commit of tx {t} {mode} "
                            f"submitted at {c_sub}, completed at {c_done}, reads in flight {inflight}; "
                            f"backend {self.backend_state()})")
                break
            for sub, cpl, lba, nlb, kind in done:
                st["nawun_reads"] += 1
                if kind not in ("old", "new"):
                    continue
                if cpl < c_sub and kind != "old":
                    errs.append(f"nawun: round {rnd} READ {lba}+{nlb + 1} completed before the commit: {kind}")
                if sub > c_done and kind != ("new" if c_ok else "old"):
                    errs.append(f"nawun: round {rnd} READ {lba}+{nlb + 1} submitted after the commit "
                                f"completed ({'OK' if c_ok else 'refused'}): {kind}")
                if c_sub <= sub <= c_done:
                    st["nawun_concurrent"] += 1
                    st[f"nawun_{kind}"] += 1
                # linearisable: an old read after a new one (completed before it was submitted)
                if kind == "old" and any(k2 == "new" and c2 < sub for _, c2, _, _, k2 in done):
                    errs.append(f"nawun: round {rnd} READ {lba}+{nlb + 1} submitted at {sub} returns the old "
                                f"data after a read that completed with the new data before it")
            if errs:
                break
        for key, v in (("window", win["len"]), ("held_lat", win["held"]), ("free_lat", win["free"])):
            if v:
                st[f"nawun_{key}"] = [min(v), round(sum(v) / len(v)), max(v), len(v)]   # min, mean, max, n
        self.errors.extend(errs)

    async def directed_commit_timing(self, write, expect):
        """A commit costs no program round of its own (issue 37; rtl/backend/README.md
        "Transactions": the COMMIT / ABORT flag is decided from the tx's own early TX_WRITEs, so the
        mark is issued with the tx's other pages). One page per die: plain = `ndie` WRITEs, then a
        FLUSH (its latency: one program round); tx = `ndie` - 1 WRITEs of tx 5, then its last page as
        a WRITE with COMMIT (its latency: one round too). The old rule (a mark issued only when every
        earlier request had completed) took two rounds. Twice, the smaller latency of each counts."""
        nd = self.geo.ndie
        lat = {"plain": [], "tx": []}
        expect("FLUSH (before timing)", await self.run_one(op=OP_FLUSH), (OK, 0))
        for rnd in range(2):
            base = 44 + 2 * nd * rnd             # plain base.., tx base + nd.. (< NUM_LBAS 64)
            for i in range(nd):
                await write(base + i)
            t0 = cocotb.utils.get_sim_time("ns")
            expect("FLUSH (timing)", await self.run_one(op=OP_FLUSH), (OK, 0))
            lat["plain"].append(cocotb.utils.get_sim_time("ns") - t0)
            for i in range(nd - 1):
                await write(base + nd + i, txid=5)
            # the last page carries COMMIT (data already in host memory from the helper's pattern)
            t0 = cocotb.utils.get_sim_time("ns")
            st, _ = await self.run_one(op=OP_WRITE, lba=base + 2 * nd - 1, txid=5, flags=COMMIT, dptr=0x200000)
            lat["tx"].append(cocotb.utils.get_sim_time("ns") - t0)
            expect("WRITE+COMMIT of tx 5 (timing): status", st, OK)
        plain, tx = min(lat["plain"]), min(lat["tx"])
        self.stats["commit_vs_flush_pct"] = round(100 * tx / plain)
        if tx > 1.4 * plain:
            self.errors.append(f"directed: a commit of {nd} pages took {tx} ns, a FLUSH of {nd} plain pages "
                               f"{plain} ns: the commit mark waited for an extra program round")

    # ---------------------------------------------------------------- after the cut
    def check_recovery(self, clean: bool, vcounts: dict | None = None):
        g = self.geo
        rec = recover(self.paths, g)
        self.stats["cuts"] += 1
        self.stats["clean"] += int(clean)
        self.stats["pages_read"] += rec.pages_read
        self.stats["max_pages_read"] = max(self.stats["max_pages_read"], rec.pages_read)
        self.stats["torn"] += rec.torn
        self.stats["beyond_prefix"] += rec.beyond_prefix
        programmed = self.counters["cnt_nand_prog"] + self.counters["cnt_prog_fail"]
        self.stats["pages_programmed"] += programmed
        errs = []
        # INV-BOUND (persistence.md section 6): what was programmed or torn (completed + in flight),
        # two erased pages per die (end of its open block, page 0 of the next plan block), one more
        # per block closed by a program failure, and the checkpoint block up to its first erased page
        bound = programmed + self.win + 2 * g.ndie + self.counters["cnt_prog_fail"] + 2
        if rec.pages_read > bound:
            errs.append(f"INV-BOUND: {rec.pages_read} pages read > {bound}")
        # recovered version of every LBA (INV-LBA: exactly one of its own versions)
        got: dict[int, int | None] = {}
        for lpn in range(self.num_lbas):
            data = read_lpn(g, rec, lpn)
            if data is None:
                got[lpn] = None
                continue
            w = bytes_to_words(data)
            mine = [o.version for o in self.ops.get(lpn, []) if o.kind == "w"]
            ver = w[1] if w[1] in mine and self.page_words(lpn, w[1]) == w else \
                next((v for v in reversed(mine) if self.page_words(lpn, v) == w), None)
            if ver is None:
                errs.append(f"INV-LBA: LBA {lpn} recovered content (w0 {w[0]:#x}, w1 {w[1]}) is not one of its writes")
                got[lpn] = None
                continue
            got[lpn] = ver
        for x in range(self.num_lbas, max(rec.mapping.keys(), default=-1) + 1):
            if x in rec.mapping:
                errs.append(f"INV-LBA: LPN {x} beyond the device is mapped")

        def reflected_idx(lba):
            """Index of the op of `lba` the recovered state shows: a write by version; unmapped ->
            the set of positions it can stand for (before any write, or any trim)."""
            ops = self.ops.get(lba, [])
            v = got.get(lba)
            if v is not None:
                return {next(o.idx for o in ops if o.kind == "w" and o.version == v)}
            return {-1} | {o.idx for o in ops if o.kind == "t"}

        def durable(o: Op) -> bool:
            return max(reflected_idx(o.lba)) >= o.idx

        # INV-DUR (a committed tx: every write; an uncommitted one: none, see INV-ATOM below)
        for lba, ops in self.ops.items():
            for o in ops:
                if o.tx and o.state != "committed":
                    continue
                if o.cpl is None:
                    continue
                need = (o.fua and o.kind == "w") or bool(o.tx)
                for ranges, at in self.flushes:
                    if o.cpl <= at and (ranges is None or any(l0 <= lba <= l0 + k for l0, k in ranges)):
                        need = True
                if clean:
                    need = True
                if need:
                    self.stats["durable_checked"] += 1
                    if not durable(o):
                        errs.append(f"INV-DUR: LBA {lba} op {o.kind}{o.version} (completion {o.cpl}) lost; "
                                    f"recovered {got.get(lba)}")
        # INV-ORDER: the highest epoch reflected exactly by a recovered write bounds what must be there
        # (transactional writes are ordered by their commit, not their epoch: left out here; a
        # completed commit is checked by INV-DUR, an uncommitted tx by INV-ATOM)
        e_max = -1
        for lba, v in got.items():
            if v is not None:
                o = next(o for o in self.ops[lba] if o.kind == "w" and o.version == v)
                if not o.tx:
                    e_max = max(e_max, o.epoch)
        for lba, ops in self.ops.items():
            for o in ops:
                if not o.tx and o.epoch < e_max and not durable(o):
                    errs.append(f"INV-ORDER: LBA {lba} op {o.kind}{o.version} of epoch {o.epoch} missing, "
                                f"epoch {e_max} present")
        # INV-ATOM / INV-ISO: a tx that did not commit shows none of its writes; one whose commit
        # was in flight at the cut shows all of its last versions or none, never an earlier one
        open_txs = [list(tx.ops) for tx in self.txs.values() if tx.ops and not tx.ending]
        for ops in self.all_txs + open_txs:
            if not ops or ops[0].state == "committed":
                continue
            last = {}
            for o in ops:
                last[o.lba] = o
            versions = {o.version for o in ops}
            applied = []
            for lba, o in last.items():
                g_ = got.get(lba)
                if g_ in versions and g_ != o.version:
                    errs.append(f"INV-ATOM: tx {o.tx} LBA {lba}: an earlier tx version {g_} recovered")
                applied.append(g_ == o.version)
            self.stats["atom_checked"] += 1
            st = ops[0].state
            if st in ("dead", "open") and any(applied):
                errs.append(f"INV-ATOM: tx {ops[0].tx} ({st}) has {sum(applied)} of {len(applied)} pages recovered")
            elif st == "ending":
                self.stats["tx_cut_in_commit"] += 1
                self.stats["tx_applied_in_cut"] += int(all(applied))
                if any(applied) and not all(applied):
                    errs.append(f"INV-ATOM: tx {ops[0].tx} cut in its commit: {sum(applied)} of {len(applied)} "
                                f"pages recovered")
        # clean: exactly the host view
        if clean:
            for lba in range(self.num_lbas):
                e = self.view.get(lba)
                exp = e[1] if e and e[0] == "w" else None
                if got.get(lba) != exp:
                    errs.append(f"clean: LBA {lba} recovered {got.get(lba)}, host view {e}")
        # grown bad blocks: one report per failed program, each a block handed to that die; after a
        # clean shutdown every report has been taken
        handed = {(d // g.ways, d % g.ways, b) for d in range(g.ndie) for b in self.plan[d][:self.plan_pos[d]]}
        for r in self.grown_bad:
            if r not in handed:
                errs.append(f"m_bad reported {r}, a block never handed to that die")
        nf = self.counters["cnt_prog_fail"]
        if len(self.grown_bad) > nf or (clean and len(self.grown_bad) != nf):
            errs.append(f"{len(self.grown_bad)} grown bad blocks reported for {nf} failed programs")
        # valid-page counts (read before a clean cut) = live pages per block of the recovered mapping
        if vcounts is not None:
            exp: dict[tuple[int, int], int] = {}
            for ppn in rec.mapping.values():
                d, b, _ = g.unppn(ppn)
                exp[(d, b)] = exp.get((d, b), 0) + 1
            for key, v in vcounts.items():
                self.stats["vc_checked"] += 1
                if v != exp.get(key, 0):
                    recs = [(r.seq, r.page, r.lpn, r.txid, r.kind, r.flags,
                             rec.mapping.get(r.lpn) == g.ppn(r.die, r.block, r.page),
                             [(o.kind, o.version, o.tx, o.state) for o in self.ops.get(r.lpn, [])])
                            for r in rec.records if (r.die, r.block) == key]
                    errs.append(f"valid-page count of die {key[0]} block {key[1]}: {v}, recovered mapping has "
                                f"{exp.get(key, 0)} live pages (records seq/page/lpn/txid/kind/flags: {recs})")
        if self.counters["cnt_proto_err"]:
            errs.append(f"protocol errors counted by the core: {self.counters['cnt_proto_err']}")
        self.stats["violations"] += len(errs)
        self.errors.extend(errs)


async def campaign(dut, seed, cuts, idle, backpressure):
    image_dir = Path(os.environ["ATS_CORE_IMAGES"])
    image_dir.mkdir(parents=True, exist_ok=True)
    tb = TB(dut, seed, idle, backpressure, image_dir)
    rng = tb.rng
    # the directed transaction scenario on its own power cycle (not counted as a cut;
    # ATS_CORE_DIRECTED=0 leaves it out)
    if os.environ.get("ATS_CORE_DIRECTED", "1") != "0":
        await tb.power_on()
        await tb.directed_tx()
        await tb.cut()
    # reads concurrent with a commit (NAWUN) on power cycles of their own (ATS_CORE_NAWUN rounds, 0:
    # none), 6 rounds each: a round programs about 30 pages and nothing is collected (no GC)
    nawun = int(os.environ.get("ATS_CORE_NAWUN", "24" if LONG else "6"))
    while nawun > 0:
        await tb.power_on()
        await tb.directed_nawun(min(nawun, 6))
        await tb.cut()
        nawun -= 6
        if tb.errors:
            assert not tb.errors, "\n".join(tb.errors[:20])
    for i in range(cuts):
        await tb.power_on()
        # every eighth power cycle ends cleanly (every command completes, FLUSH, read-back, valid
        # counts): those cost about ten random cuts each in cycles, most of them page transfers
        clean = i % 8 == 0
        n = rng.randint(8, 16) if clean else rng.randint(3, 16)
        # every sixteenth cycle (offset 4) is transaction-heavy and runs all its commands before the
        # cut: tx pages written back and evicted, then plain writes of their LBAs, then tx reads /
        # DIFFWRITEs of them (read your writes after eviction, issue 34)
        tb.tx_heavy = i % 16 == 4
        if tb.tx_heavy:
            n = rng.randint(20, 28)
        cut_at = None if clean or tb.tx_heavy else rng.randint(100, 400 * n + 2000)
        tb.cut_on_busy = rng.random() < 0.4
        tb.cut_on_commit = rng.random() < 0.3
        tb.clean_big = clean and (i // 8) % 2 == 0     # every other clean cycle: a tx larger than its table
        _t0 = cocotb.utils.get_sim_time("ns")
        await tb.workload(n, cut_at, clean)
        if os.environ.get("ATS_CUT_TRACE"):
            dut._log.info("CUTTRACE %d clean=%d n=%d cut_at=%s busy=%d commit=%d cycles=%d", i, clean, n, cut_at,
                          tb.cut_on_busy, tb.cut_on_commit, (cocotb.utils.get_sim_time("ns") - _t0) // 10)
        vcounts = None
        if clean:
            for _ in range(rng.randint(0, 50)):
                await RisingEdge(dut.clk)
            vcounts = await tb.read_valid_counts()
        await tb.cut()
        tb.check_recovery(clean, vcounts)
        if tb.errors:
            break
        if int(dut.viol_total.value):
            tb.errors.append(f"NAND protocol violations: {int(dut.viol_total.value)}")
            break
        if int(dut.prog_head_total.value):
            # C24: a HEAD program may pass the die's queued programs (out of order in its block)
            tb.errors.append(f"{int(dut.prog_head_total.value)} PROGRAM request(s) sent to the scheduler as HEAD")
            break
    tb.stats["urgent_wb"] = int(dut.urgent_wb_total.value)
    tb.stats["max_rd_ring"] = int(dut.rd_ring_max.value)
    tb.stats["rd_overlap"] = int(dut.rd_overlap_total.value)
    tb.stats["rd_ooo"] = int(dut.rd_ooo_total.value)
    tb.stats["rd_ilv"] = int(dut.rd_ilv_total.value)
    dut._log.info("campaign seed %d: %s", seed, json.dumps(tb.stats))
    if tb.trace is not None:
        with open(os.environ["ATS_CORE_TRACE"], "w") as f:
            for t, kind, fields in tb.trace:
                f.write(f"{t} {kind} {json.dumps(fields, sort_keys=True)}\n")
            f.write(f"stats {json.dumps(tb.stats, sort_keys=True)}\n")
    out = os.environ.get("ATS_CORE_STATS")
    if out:
        Path(out).write_text(json.dumps(tb.stats))
    assert not tb.errors, "\n".join(tb.errors[:20])
    assert tb.stats["cuts"] == cuts
    # coverage the campaign must reach
    assert tb.stats["reads_checked"] > 0 and tb.stats["durable_checked"] > 0 and tb.stats["vc_checked"] > 0
    assert tb.stats["torn"] > 0, "no cut hit a program in flight"
    if tb.starve_seen_expected():
        assert tb.stats["no_free_seen"] > 0, "no_free_block never seen while the firmware starved the backend"
    faults = dict(kv.split("=") for kv in os.environ.get("ATS_NAND_FAULTS", "").split(",") if "=" in kv)
    if int(faults.get("pfail_ppm", 0)):
        assert tb.stats["prog_fail"] > 0 and tb.stats["grown_bad"] > 0, "no program failure relocated"
    assert tb.stats["nand_reads"] >= 10, "too few read misses reached the NAND"
    # several reads in the backend's ring at once (lookups, zeros, NAND); NAND READs overlapping
    # each other depend on the timing of a run: cut_summary.py requires them over the campaign
    assert tb.stats["max_rd_ring"] >= 2, "never two reads in the backend's read ring at once"
    assert tb.stats["tx_commits"] > 0 and tb.stats["tx_aborts"] > 0 and tb.stats["tx_reads"] > 0
    assert tb.stats["diffwrites"] > 0 and tb.stats["tx_failed"] > 0, "no DIFFWRITE, or no tx refused"
    assert tb.stats["tx_applied_in_cut"] > 0, "no cut between a commit's durability and its completion"
    assert tb.stats["relocs"] > 0 and tb.stats["relocs_stale"] > 0 and tb.stats["raw_progs"] > 0 and \
        tb.stats["erases"] > 0, "firmware port not exercised"
    assert tb.stats["atom_checked"] > 0 and tb.stats["tx_cut_in_commit"] > 0, "no cut during a commit"
    assert tb.stats["urgent_wb"] > 0, "no urgent (RFLUSH) write-back: the HEAD-program check (C24) saw nothing"
    if int(faults.get("efail_ppm", 0)):
        assert tb.stats["erase_fail"] > 0, "no erase failure seen by the firmware"
    if int(faults.get("flip_ppb", 0)):
        assert tb.stats["ecc_corr"] > 0, "no bit corrected on a read miss"


@cocotb.test()
async def run_campaign(dut):
    seed = int(os.environ.get("ATS_SEED", "1"))
    cuts = int(os.environ.get("ATS_CORE_CUTS", "10"))
    mode = os.environ.get("ATS_CORE_MODE", "plain")
    prof = None
    if os.environ.get("ATS_PROFILE"):                 # where the campaign's wall time goes (cProfile)
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    try:
        await campaign(dut, seed, cuts, idle=mode != "plain", backpressure=mode != "plain")
    finally:
        if prof is not None:
            prof.disable()
            prof.dump_stats(os.environ["ATS_PROFILE"])


# --------------------------------------------------------------------------------------------------
# pytest: configurations x seeds
REMAP_PRESET = "mid"
CONFIGS = {
    # name: (tb parameters, [(mode, seed), ...]); one build per name, its runs in sequence
    # RD_SLOTS: the core's default 32 (write buffer MISS_Q 128) on 2x2, 8 (MISS_Q 32) on 1x4_faults
    "2x2": (dict(NUM_CHAN=2, WAYS=2, RD_SLOTS=32), [("plain", 1), ("bp", 2), ("bp", 3)]),
    "1x4_faults": (dict(NUM_CHAN=1, WAYS=4, RD_SLOTS=8), [("bp", 4), ("bp", 5)]),
}
# die faults at run time (ATS_NAND_FAULTS): 3 % program failures, 15 % erase failures (the firmware
# model's scratch erases), read bit flips (BCH corrects them;
# the die's array keeps the right bits, so the oracle's raw images are clean)
FAULTS = {"1x4_faults": "pfail_ppm=30000,flip_ppb=400000,efail_ppm=150000"
}
# ATS_WL_CHECK=1: the workload runs at every edge and checks that each edge its wait would sleep
# through changes nothing (the wait's proof; `make test-long` runs with it)
WL_CHECK = os.environ.get("ATS_WL_CHECK", "") not in ("", "0")
# watchdog: a power cycle fails if, with commands in flight, nothing completes and nothing is
# accepted for this many cycles (a whole 40-cut run is about 700k cycles; a hang used to run forever)
STALL_EDGES = 400_000
CUTS = int(os.environ.get("ATS_CORE_CUTS", 400 if LONG else 40))  # per run: 5 runs -> 200 cuts in make test, 2,000 in test-long


# the configurations' runs interleaved, so that two xdist workers start on different builds
RUNS = sorted(((name, mode, seed) for name, (_, runs) in CONFIGS.items() for mode, seed in runs),
              key=lambda r: [i for i, x in enumerate(CONFIGS[r[0]][1]) if x[1] == r[2]][0])


# The signals below the TB top that the tests read (the watchdog's report of the backend: module ->
# names); the build makes only these and the top's own signals visible to cocotb (runner.run `public`)
PUBLIC = {"ats_wbuf": ["cw_q"],     # the commit window (directed_nawun's figures)
          "ats_backend": ["nq_v_q", "c_st_q", "rq_v_q", "tw_out_q", "fx_cnt_q", "txl_q"],
          "ats_backend_read": ["ra_q", "rl_q", "rn_q", "lk_wait_q", "rl_fresh_q", "rn_ok_q", "rn_adv_q"],
          "ats_backend_fw": ["fw_st_q", "rd_st_q"]}
BACKEND_UNITS = {"ats_backend": None, "ats_backend_read": "u_read", "ats_backend_fw": "u_fw"}   # module -> instance


def core_build(params: dict) -> tuple[dict, list[Path], dict]:
    """The parameters (with the remap preset's), the sources of ats_ssd_core_tb and the remap
    preset's parameters (also used by cocotb_tests/ats_sata_core)."""
    gen = ROOT / "build" / "gen" / f"remap_{REMAP_PRESET}"
    rp = load_params(gen)
    params = dict(params, REMAP_LPN_W=rp["LPN_W"], REMAP_PPN_W=rp["PPN_W"], REMAP_TXID_W=rp["TXID_W"],
                  REMAP_CNT_W=rp["CNT_W"], NUM_TX=rp["NUM_TX"])
    # the core's list with the remap preset's generated engine first, the die models, the TB
    srcs = [s for s in load_sources(gen) if s.suffix == ".v"]
    srcs += [s for s in block_sources("ats_ssd_core", "ats_nand_array") if s.name != "ats_remap_engine.v"]
    srcs += [HERE / "ats_ssd_core_tb.sv"]
    # stream rules on every block interface inside the core (rtl/common/ats_stream_check.sv bound to
    # the m_ ports of each block by module name: the block tests' bind files and the core's own)
    srcs += block_sources("ats_stream_check") + [
        ROOT / "cocotb_tests" / d / f"{d}_bind.sv"
        for d in ("ats_cmdq", "ats_wbuf", "ats_remap_engine", "ats_nand_sched", "ats_nand_page",
                  "ats_nand_chan", "ats_bch_enc", "ats_bch_dec", "ats_ssd_core")]
    return params, srcs, rp


@pytest.mark.parametrize("name,mode,seed", RUNS, ids=[f"{n}-{m}{s}" for n, m, s in RUNS])
def test_ats_ssd_core(name, mode, seed):
    params, srcs, rp = core_build(CONFIGS[name][0])
    key = "_".join(f"{k}{v}" for k, v in sorted(params.items()))
    build_dir = ROOT / "build" / "sim" / "ats_ssd_core_tb" / key
    nd = params["NUM_CHAN"] * params["WAYS"]
    img = build_dir / f"img_{name}_{seed}"
    run(toplevel="ats_ssd_core_tb", sources=srcs, test_module="test_ats_ssd_core", test_dir=HERE,
        build_key=key, parameters=params, seed=seed,
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), "-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        plusargs=[f"+ats_nand_image{d}={img / f'die{d}.img'}" for d in range(nd)],
        results_name=f"{name}_{seed}", public=PUBLIC,
        extra_env={"ATS_SEED": str(seed), "ATS_CORE_IMAGES": str(img),
                   "ATS_NAND_FAULTS": f"{FAULTS[name]},seed={seed}" if name in FAULTS else "",
                   "ATS_CORE_CUTS": str(CUTS), "ATS_CORE_MODE": mode, "ATS_TX_ENTRIES": str(rp["TX_ENTRIES"]),
                   "ATS_CORE_STATS": str(build_dir / f"stats_{name}_{seed}.json")})


# The S-Log in the device (docs/architecture.md section 11): the write buffer's FRAG slots and the
# backend's S-Log unit, a campaign of its own (test_ats_ssd_core_slog.py: random transactions with
# small and large DIFFWRITEs, WRITEs, READs, TRIM, FLUSH, concurrent writers and MERGEs against a
# byte-exact reference, then a clean cut and the recovery oracle). make test: seed 1, 2 power cycles;
# ATS_LONG=1: seeds 1-8, 4 power cycles each (ATS_SLOG_SEED: the short run's seed).
# SLOG_TXFULL 4: a transaction with more full pages converts its FRAG slots (architecture §11.3)
# ATS_SLOG_RIF=n (n > 1): S-Log records in flight together (the write buffer's SLOG_RIF and the
# backend's SLOG_RECS; the TB's PTXQ 8 bounds it), a build of its own
# ATS_SLOG_PACK=1: the backend's open log page (with ATS_SLOG_RIF > 1 kept for the next record,
# sealed after ATS_SLOG_SEALT idle cycles or before anything else; rtl/backend/README.md "Packing")
SLOG_RIF = int(os.environ.get("ATS_SLOG_RIF", "1"))
SLOG_PACK = int(os.environ.get("ATS_SLOG_PACK", "0"))
SLOG_SEALT = int(os.environ.get("ATS_SLOG_SEALT", "0"))
SLOG_PARAMS = dict(NUM_CHAN=2, WAYS=2, RD_SLOTS=8, SLOG=1, FRAG_SLOTS=4, SLOG_TXFULL=4,
                   **({"SLOG_RIF": SLOG_RIF} if SLOG_RIF > 1 else {}),
                   **({"SLOG_PACK": SLOG_PACK} if SLOG_PACK else {}),
                   **({"SLOG_SEALT": SLOG_SEALT} if SLOG_SEALT else {}))
SLOG_RUNS = [("bp", s) for s in (range(1, 9) if LONG else (int(os.environ.get("ATS_SLOG_SEED", "1")),))]
# ATS_LONG=1: the even seeds with 5 % program failures (persistence §10.2: a record's full META-PU
# names the failed first program; the recovery oracle gets the grown-bad blocks); otherwise
# ATS_NAND_FAULTS from the environment
SLOG_PFAIL = "pfail_ppm=50000"
SLOG_CYCLES = os.environ.get("ATS_SLOG_CYCLES", "4" if LONG else "2")


@pytest.mark.parametrize("mode,seed", SLOG_RUNS, ids=[f"slog-{m}{s}" for m, s in SLOG_RUNS])
def test_ats_ssd_core_slog(mode, seed):
    slog_run(mode, seed, SLOG_PARAMS, SLOG_RIF, SLOG_PACK)


# ATS_LONG=1: the campaign also with group commit (records in flight together, packed into shared
# log pages, a 100-cycle seal timer: cuts while a page is open; rtl/backend/README.md "Packing")
SLOG_PK_PARAMS = dict(NUM_CHAN=2, WAYS=2, RD_SLOTS=8, SLOG=1, FRAG_SLOTS=4, SLOG_TXFULL=4, SLOG_RIF=2,
                      SLOG_PACK=1, SLOG_SEALT=100)
SLOG_PK_RUNS = [("bp", s) for s in (1, 3, 4)]


@pytest.mark.skipif(not LONG, reason="ATS_LONG=1 only")
@pytest.mark.parametrize("mode,seed", SLOG_PK_RUNS, ids=[f"slog-pk-{m}{s}" for m, s in SLOG_PK_RUNS])
def test_ats_ssd_core_slog_pk(mode, seed):
    slog_run(mode, seed, SLOG_PK_PARAMS, 2, 1)


def slog_run(mode, seed, slog_params, rif, pack):
    params, srcs, rp = core_build(slog_params)
    key = "_".join(f"{k}{v}" for k, v in sorted(params.items()))
    build_dir = ROOT / "build" / "sim" / "ats_ssd_core_tb" / key
    nd = params["NUM_CHAN"] * params["WAYS"]
    img = build_dir / f"img_slog_{seed}"
    run(toplevel="ats_ssd_core_tb", sources=srcs, test_module="test_ats_ssd_core_slog", test_dir=HERE,
        build_key=key, parameters=params, seed=seed,
        build_args=[str(ROOT / "sim/nand/ats_nand_store.cpp"), "-CFLAGS", f"-I{ROOT / 'sim/nand'}"],
        plusargs=[f"+ats_nand_image{d}={img / f'die{d}.img'}" for d in range(nd)],
        results_name=f"slog_{seed}", public=PUBLIC,
        extra_env={"ATS_SEED": str(seed), "ATS_CORE_IMAGES": str(img), "ATS_CORE_MODE": mode,
                   "ATS_TX_ENTRIES": str(rp["TX_ENTRIES"]), "ATS_SLOG_CYCLES": SLOG_CYCLES,
                   "ATS_SLOG_RIF": str(rif), "ATS_SLOG_PACK": str(pack),
                   "ATS_NAND_FAULTS": f"{SLOG_PFAIL},seed={seed}" if LONG and seed % 2 == 0 else
                   os.environ.get("ATS_NAND_FAULTS", ""),
                   # (not stats_*.json: cut_summary.py sums those of the power-cut campaign)
                   "ATS_CORE_STATS": str(build_dir / f"slog_stats_{seed}.json")})
