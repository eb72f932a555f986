"""Timing-faithful behavioural media (backend) for the write buffer: the media interface of
docs/architecture.md section 4 as ats_wbuf drives it.

Ports (the write buffer's names): `m_wb_*` writeback request {op (0 PROGRAM, 1 UNMAP), slot, lpn,
txid, epoch, kind, fua, tag}, then for a PROGRAM `m_wbd_*` page data words {data, last};
`s_wbc_*` completion {tag, status, ppn}; `m_rd_*` read request {lpn, txid, tag} answered by
`s_rdd_*` page data words {data, last, status}.

What it models (written from docs/architecture.md section 4 and the design brief's NAND model):
- NUM_CHAN x WAYS dies; page i of the writeback stream goes to die i mod (NUM_CHAN*WAYS) (striping,
  die d on channel d mod NUM_CHAN). A program occupies its channel bus for the transfer time
  (page / bus rate, default ONFI 200 MT/s x 8 bit) once the die is free, then the die for tPROG.
  A read occupies the die for tR, then the channel for the transfer. Several dies program at once.
- Durability: every request gets the next sequence number; the backend persists mappings as an
  append-only log in sequence order, so record n is durable once it and every record before it
  have finished ("durable prefix"). Completions go out in that order: a completion means durable.
  An UNMAP is a log record only (no program).
- Power cut (`cut()`): the durable state is the durable prefix; in-flight programs are lost.
  `restart()` clears in-flight work and keeps the durable log (the recovered image).
- Faults: `fail_seqs` (sequence numbers whose program fails: status PROGRAM_FAIL, record dropped),
  `read_err_lpns` (reads answered with MEDIA_ERROR).
- Counters for benchmarks: programs, unmaps, reads, bytes programmed/read, per-request latency
  (request accepted -> completion sent, in cycles).

Times are nanoseconds; `time_scale` multiplies all of them (tests scale them down), `clk_ns` converts
to cycles. Presets (read / program / erase, microseconds) from the design brief.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import RisingEdge

from .streams import StreamSink, StreamSource

PRESETS = {          # tR, tPROG, tBERS in microseconds
    "femu": (40.0, 200.0, 2000.0),
    "nvmevirt": (36.0, 185.0, 2000.0),
    "mqsim": (75.0, 750.0, 3800.0),
    "difftx": (25.0, 200.0, 1500.0),
}
PROGRAM, UNMAP = 0, 1
ST_OK, ST_MEDIA_ERROR, ST_PROGRAM_FAIL = 0x00, 0x10, 0x11
WB_FIELDS = ["op", "slot", "lpn", "txid", "epoch", "kind", "fua", "tag"]
WBD_FIELDS = ["data", "last"]
WBC_FIELDS = ["tag", "status", "ppn"]
RD_FIELDS = ["lpn", "txid", "tag"]
RDD_FIELDS = ["data", "last", "status"]


@dataclass
class Record:
    seq: int
    op: int
    lpn: int
    txid: int
    epoch: int
    data: list | None          # page words (PROGRAM) or None (UNMAP)
    issue_cycle: int
    done_cycle: int = 0        # when the program finished physically
    failed: bool = False


@dataclass
class MediaConfig:
    page_bytes: int = 4096
    num_chan: int = 8
    ways: int = 4
    preset: str = "femu"
    bus_mts: float = 200.0     # channel bus, mega-transfers per second, 1 byte per transfer
    time_scale: float = 1.0    # multiply every time (tests: e.g. 1e-3)
    clk_ns: float = 10.0

    def cycles(self, ns: float) -> int:
        return max(1, int(round(ns * self.time_scale / self.clk_ns)))

    @property
    def t_read(self) -> int:
        return self.cycles(PRESETS[self.preset][0] * 1000.0)

    @property
    def t_prog(self) -> int:
        return self.cycles(PRESETS[self.preset][1] * 1000.0)

    @property
    def t_xfer(self) -> int:
        return self.cycles(self.page_bytes * 1000.0 / self.bus_mts)


@dataclass
class MediaStats:
    programs: int = 0
    unmaps: int = 0
    reads: int = 0
    bytes_programmed: int = 0
    bytes_read: int = 0
    wb_latency: list = field(default_factory=list)   # cycles, request accepted -> completion sent
    rd_latency: list = field(default_factory=list)   # cycles, request accepted -> last word sent


class MediaModel:
    def __init__(self, dut, clk, cfg: MediaConfig, rng: random.Random | None = None,
                 wb_pause=None, wbd_pause=None, wbc_pause=None, rd_pause=None, rdd_pause=None):
        self.dut = dut
        self.clk = clk
        self.cfg = cfg
        self.rng = rng or random.Random(0)
        self.pw = cfg.page_bytes // 4
        self.ndies = cfg.num_chan * cfg.ways
        self.wb = StreamSink(dut, "m_wb", clk, WB_FIELDS, wb_pause)
        self.wbd = StreamSink(dut, "m_wbd", clk, WBD_FIELDS, wbd_pause)
        self.wbc = StreamSource(dut, "s_wbc", clk, WBC_FIELDS, wbc_pause)
        self.rd = StreamSink(dut, "m_rd", clk, RD_FIELDS, rd_pause)
        self.rdd = StreamSource(dut, "s_rdd", clk, RDD_FIELDS, rdd_pause)
        self.cycle = 0
        self.log: list[Record] = []          # durable log (survives cuts)
        self.mapping: dict[int, list | None] = {}   # lpn -> data of the durable mapping
        self.die_of: dict[int, int] = {}
        self.fail_seqs: set[int] = set()
        self.read_err_lpns: set[int] = set()
        self.stats = MediaStats()
        self.seq = 0
        self.errors: list[str] = []
        self._gen = 0
        self._reset_inflight()
        cocotb.start_soon(self._clock())
        self.restart()

    # ------------------------------------------------------------------ state
    def _reset_inflight(self):
        self.inflight: list[Record] = []     # issued, not yet durable, in sequence order
        self.receiving = False               # in the middle of a PROGRAM's data words
        self.chan_free = [0] * self.cfg.num_chan
        self.die_free = [0] * self.ndies
        self.next_die = 0

    async def _clock(self):
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1

    def restart(self):
        """(Re)start after reset or a power cut: drop in-flight work, keep the durable log."""
        self._gen += 1
        self._reset_inflight()
        for s in (self.wb, self.wbd, self.rd):
            s.queue.clear()
        self.wbc.flush()
        self.rdd.flush()
        cocotb.start_soon(self._wb_loop(self._gen))
        cocotb.start_soon(self._rd_loop(self._gen))
        cocotb.start_soon(self._durable_loop(self._gen))

    def cut(self) -> list[Record]:
        """Power cut now: the durable prefix is what survives; in-flight programs are lost."""
        self._advance_durable()
        self._gen += 1
        self.inflight.clear()
        return list(self.log)

    def summary(self) -> dict:
        """Counters and latency statistics (cycles) for benchmarks."""
        def pct(v, q):
            v = sorted(v)
            return v[min(len(v) - 1, int(q * len(v)))] if v else 0
        st = self.stats
        return {"programs": st.programs, "unmaps": st.unmaps, "reads": st.reads,
                "bytes_programmed": st.bytes_programmed, "bytes_read": st.bytes_read,
                "wb_lat_mean": sum(st.wb_latency) / len(st.wb_latency) if st.wb_latency else 0,
                "wb_lat_p99": pct(st.wb_latency, 0.99),
                "rd_lat_mean": sum(st.rd_latency) / len(st.rd_latency) if st.rd_latency else 0,
                "rd_lat_p99": pct(st.rd_latency, 0.99)}

    @property
    def busy(self) -> bool:
        return bool(self.inflight) or bool(self.wbc.queue) or bool(self.wb.queue)

    # ------------------------------------------------------------------ writeback path
    async def _next(self, sink: StreamSink, gen: int) -> dict | None:
        while True:
            if gen != self._gen:         # a cut or restart ended this loop's generation
                return None
            if sink.queue:
                return sink.queue.popleft()
            await RisingEdge(self.clk)

    async def _wb_loop(self, gen: int):
        while True:
            req = await self._next(self.wb, gen)
            if req is None:
                return
            words = None
            if req["op"] == PROGRAM:
                self.receiving = True
                words = []
                for i in range(self.pw):
                    beat = await self._next(self.wbd, gen)
                    if beat is None:
                        return
                    words.append(beat["data"])
                    if beat["last"] != int(i == self.pw - 1):
                        self.errors.append(f"m_wbd last={beat['last']} at word {i} (page {self.pw} words)")
            elif req["op"] != UNMAP:
                self.errors.append(f"m_wb op {req['op']} unknown")
            self.receiving = False
            now = self.cycle
            rec = Record(seq=self.seq, op=req["op"], lpn=req["lpn"], txid=req["txid"],
                         epoch=req["epoch"], data=words, issue_cycle=req["_cycle"])
            rec.tag = req["tag"]
            self.seq += 1
            if words is not None:
                die = self.next_die
                self.next_die = (self.next_die + 1) % self.ndies
                ch = die % self.cfg.num_chan
                start = max(now, self.chan_free[ch], self.die_free[die])
                self.chan_free[ch] = start + self.cfg.t_xfer
                self.die_free[die] = self.chan_free[ch] + self.cfg.t_prog
                rec.done_cycle = self.die_free[die]
                rec.die = die
                rec.failed = rec.seq in self.fail_seqs
                self.stats.programs += 1
                self.stats.bytes_programmed += self.cfg.page_bytes
            else:
                rec.done_cycle = now
                self.stats.unmaps += 1
            self.inflight.append(rec)

    def _advance_durable(self) -> list[Record]:
        done = []
        while self.inflight and self.inflight[0].done_cycle <= self.cycle:
            rec = self.inflight.pop(0)
            if not rec.failed:
                self.log.append(rec)
                if rec.op == PROGRAM:
                    self.mapping[rec.lpn] = rec.data
                    self.die_of[rec.lpn] = rec.die
                else:
                    self.mapping.pop(rec.lpn, None)
            done.append(rec)
        return done

    async def _durable_loop(self, gen: int):
        while True:
            await RisingEdge(self.clk)
            if gen != self._gen:
                return
            for rec in self._advance_durable():
                self.wbc.send_nowait(tag=rec.tag, status=ST_PROGRAM_FAIL if rec.failed else ST_OK,
                                     ppn=rec.seq & 0xFFFF)
                self.stats.wb_latency.append(self.cycle - rec.issue_cycle)

    # ------------------------------------------------------------------ read path
    async def _rd_loop(self, gen: int):
        while True:
            req = await self._next(self.rd, gen)
            if req is None:
                return
            lpn = req["lpn"]
            die = self.die_of.get(lpn, lpn % self.ndies)
            ch = die % self.cfg.num_chan
            t = max(self.cycle, self.die_free[die]) + self.cfg.t_read
            self.die_free[die] = t
            t = max(t, self.chan_free[ch]) + self.cfg.t_xfer
            self.chan_free[ch] = t
            while self.cycle < t:
                await RisingEdge(self.clk)
                if gen != self._gen:
                    return
            data = self.mapping.get(lpn) or [0] * self.pw
            status = ST_MEDIA_ERROR if lpn in self.read_err_lpns else ST_OK
            for i, w in enumerate(data):
                self.rdd.send_nowait(data=w, last=int(i == self.pw - 1), status=status)
            self.stats.reads += 1
            self.stats.bytes_read += self.cfg.page_bytes
            self.stats.rd_latency.append(t - req["_cycle"])
            while self.rdd.queue or self.rdd._driving:       # one read at a time, like a die queue
                await RisingEdge(self.clk)
                if gen != self._gen:
                    return
