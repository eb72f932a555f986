"""Timing-faithful behavioural media (backend) for the write buffer: the media interface of
docs/architecture.md section 4 as ats_wbuf drives it.

Ports (the write buffer's names): `m_wb_*` writeback request {op (0 PROGRAM, 1 UNMAP), slot, lpn,
txid, epoch, kind, fua, tag}, then for a PROGRAM `m_wbd_*` page data words {data, last};
`s_wbc_*` completion {tag, status, ppn}; `m_rd_*` read request {lpn, txid, tag} answered by
`s_rdd_*` page data words {data, last, status, tag} (tag = the request's tag, constant over the page).

What it models (written from docs/architecture.md section 4 and the design brief's NAND model):
- NUM_CHAN x WAYS dies; page i of the writeback stream goes to die i mod (NUM_CHAN*WAYS) (striping,
  die d on channel d mod NUM_CHAN). A program occupies its channel bus for the transfer time
  (page / bus rate, default ONFI 200 MT/s x 8 bit) once the die is free, then the die for tPROG.
  A read occupies the die for tR, then the channel for the transfer. Several dies program at once.
- Bounded request window (`MediaConfig.window`): the backend holds at most `window` writeback
  requests whose completion the write buffer has not taken yet (the NAND scheduler's request table:
  DEPTH 32 entries for 32 dies, i.e. one per die, the default; an entry is freed when its completion
  leaves); when it is full, `m_wb_ready` stays low (backpressure), so
  the write buffer cannot push its whole dirty set into a media queue where it could no longer be
  coalesced. `window = 0`: unbounded (every request accepted at once, the old behaviour).
- Durability: every request gets the next sequence number; the backend persists mappings as an
  append-only log in sequence order, so record n is durable once it and every record before it
  have finished ("durable prefix"). Completions go out in that order: a completion means durable.
  An UNMAP is a log record only (no program). `hold = True` withholds durability (and so the
  completions) until it is cleared, except `release(n)` more records: tests use it to freeze the
  in-flight set and let completions through one at a time.
- Power cut (`cut()`): the durable state is the durable prefix; in-flight programs are lost.
  `restart()` clears in-flight work and keeps the durable log (the recovered image).
- Faults: `fail_seqs` (sequence numbers whose program fails: status PROGRAM_FAIL, record dropped),
  `read_err_lpns` (reads answered with MEDIA_ERROR).
- Transactions (`tx_aware=True`, for a write buffer with `TX` = 1; off by default: then a tx page is
  mapped when it is durable, whatever its commit): the request's `rec` field is read too; a durable
  page with a txid goes into that txid's table instead of the mapping; a commit record (`rec` 2)
  applies the table to the mapping in the table's order, a COMMIT-marked page (`rec` 1) joins the
  table and then applies it, an abort record (`rec` 3) drops the table; records change no LBA of
  the mapping. A commit record's or marked page's completion carries the entries applied in `ppn`.
  A read with a txid returns the txid's table entry first, else the mapping (no probe answers:
  tests with it issue plain READs only).
- Counters for benchmarks: programs, unmaps, reads, bytes programmed/read, per-request latency
  (request accepted -> completion sent, in cycles), peak outstanding requests.

All five streams are served by one coroutine woken once per clock edge (handshakes sampled at the
rising edge, as the RTL sees them), with random idle / backpressure from the pause generators.
`MediaModel(..., clocked=False)` starts no coroutine: the owner calls `step()` once per rising
edge from its own clock loop (the SSD benches do, from the host model's loop: one wake-up per cycle
instead of two; same cycle behaviour, since the host loop ran first at every edge anyway).
Ports are read and written through `port_reader` (streams.py) / `port_writer` (below): the same values and the
same write timing as `handle.value`, without cocotb's per-access object conversions
(`fast_ports=False`: plain `.value`, the reference the bench self-test compares against).

Times are nanoseconds; `time_scale` multiplies all of them (tests scale them down), `clk_ns` converts
to cycles. Presets (read / program / erase, microseconds) from the design brief.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import RisingEdge

from .streams import STABLE_CHECK_DEFAULT, StabilityCheck, never_pause, port_reader, slow_reader  # noqa: F401

try:        # cocotb 2.x internals: the write queue behind `handle.value = v` (applied at ReadWrite)
    from cocotb.handle import _GPISetAction, _schedule_write
except ImportError:     # pragma: no cover - other cocotb versions: plain `.value`
    _GPISetAction = _schedule_write = None


def slow_writer(h):
    """Reference writer: `h.value = v` (what port_writer must equal)."""
    def w(v):
        h.value = v
    return w


def port_writer(h):
    """Fast writer of a port of at most 32 bits: `w(v)` queues the same deposit as `h.value = v`
    (cocotb's write queue, applied in the ReadWrite phase of the time step) without the type and
    range checks of the `.value` setter; values must be non-negative ints that fit the port."""
    raw = getattr(h, "_handle", None)
    if _schedule_write is None or raw is None or len(h) > 32 or not hasattr(raw, "set_signal_val_int"):
        def w(v):
            h.value = v
        return w
    put, dep = raw.set_signal_val_int, _GPISetAction.DEPOSIT
    return lambda v: _schedule_write(h, put, dep, v)

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
RDD_FIELDS = ["data", "last", "status", "tag"]


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
    tag: int = 0
    die: int = 0
    rec: int = 0               # tx_aware: 0 page, 1 COMMIT-marked page, 2 commit record, 3 abort record
    applied: int = 0           # tx_aware: entries a commit applied (the completion's ppn)


@dataclass
class MediaConfig:
    page_bytes: int = 4096
    num_chan: int = 8
    ways: int = 4
    preset: str = "femu"
    bus_mts: float = 200.0     # channel bus, mega-transfers per second, 1 byte per transfer
    time_scale: float = 1.0    # multiply every time (tests: e.g. 1e-3)
    clk_ns: float = 10.0
    window: int | None = None  # outstanding writeback requests; None: one per die; 0: unbounded

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

    @property
    def window_size(self) -> int:
        """Outstanding-request limit in force (0 = unbounded)."""
        return self.num_chan * self.ways if self.window is None else self.window


@dataclass
class MediaStats:
    programs: int = 0
    unmaps: int = 0
    reads: int = 0
    bytes_programmed: int = 0
    bytes_read: int = 0
    max_outstanding: int = 0
    max_rd_outstanding: int = 0                      # read requests taken and not yet answered
    rd_reordered: int = 0                            # pages sent before an older request's page
    wb_latency: list = field(default_factory=list)   # cycles, request accepted -> completion sent
    rd_latency: list = field(default_factory=list)   # cycles, request accepted -> last word sent


class _Port:
    """Handles of one valid/ready stream with payload fields, a pause generator and a beat queue."""

    def __init__(self, dut, prefix: str, fields: list[str], pause, fast: bool = True):
        self.rd_fn, self.wr_fn = (port_reader, port_writer) if fast else (slow_reader, slow_writer)
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.fields = [(f, getattr(dut, f"{prefix}_{f}")) for f in fields]
        self.pause = pause or never_pause()
        self.never = pause is None             # never pauses: skip the generator
        self.queue: deque = deque()


class _Source(_Port):
    """Output stream state (s_wbc, s_rdd): a queue of beats, driven by MediaModel.step."""

    def __init__(self, dut, prefix: str, fields: list[str], pause, fast: bool = True):
        super().__init__(dut, prefix, fields, pause, fast)
        self.driving = False
        self._valid_w, self._valid_r = self.wr_fn(self.valid), self.rd_fn(self.valid)
        self._ready_r = self.rd_fn(self.ready)
        self._field_w = [(f, self.wr_fn(h)) for f, h in self.fields]
        self._valid_w(0)

    def send_nowait(self, **beat) -> None:
        self.queue.append(beat)

    def flush(self) -> None:
        self.queue.clear()
        self.driving = False
        self._valid_w(0)

    def step(self) -> None:
        """Once per rising edge: retire an accepted beat, drive the next one."""
        if self.driving and self._ready_r():
            self.queue.popleft()
            self.driving = False
        if not self.driving:
            if self.queue and (self.never or not next(self.pause)):
                b = self.queue[0]
                for f, w in self._field_w:
                    w(b[f])
                self._valid_w(1)
                self.driving = True
            elif self._valid_r():
                self._valid_w(0)


class _Sink(_Port):
    """Input stream state (m_wb, m_wbd, m_rd): captured beats; ready driven by MediaModel.step.
    Beats are dicts of the fields plus `_cycle`; with `tuples` (m_wbd) (field values...) tuples."""

    def __init__(self, dut, prefix: str, fields: list[str], pause, tuples: bool = False, fast: bool = True):
        super().__init__(dut, prefix, fields, pause, fast)
        self.rdy = False
        self.tuples = tuples
        self._valid_r, self._ready_w = self.rd_fn(self.valid), self.wr_fn(self.ready)
        self._field_r = [(f, self.rd_fn(h)) for f, h in self.fields]
        self._ready_w(0)
        # stream stability of the write buffer's outputs (ATS_STREAM_CHECK=0: off)
        self.stab = StabilityCheck(prefix, fields, getattr(dut, "rst", None)) if STABLE_CHECK_DEFAULT else None

    def capture(self, cycle: int) -> None:
        if self.stab is not None:
            cur = {f: r() for f, r in self._field_r} if self._valid_r() else None
            self.stab.edge(cur, self.rdy, cycle)
        if self.rdy and self._valid_r():
            if self.tuples:
                self.queue.append(tuple(r() for _, r in self._field_r))
            else:
                beat = {f: r() for f, r in self._field_r}
                beat["_cycle"] = cycle
                self.queue.append(beat)

    def set_ready(self, allow: bool) -> None:
        r = allow and (self.never or not next(self.pause))
        if r != self.rdy:
            self._ready_w(int(r))
            self.rdy = r


class MediaModel:
    def __init__(self, dut, clk, cfg: MediaConfig, rng: random.Random | None = None,
                 wb_pause=None, wbd_pause=None, wbc_pause=None, rd_pause=None, rdd_pause=None,
                 clocked: bool = True, fast_ports: bool = True, tx_aware: bool = False):
        self.dut = dut
        self.clk = clk
        self.cfg = cfg
        self.rng = rng or random.Random(0)
        self.pw = cfg.page_bytes // 4
        self.ndies = cfg.num_chan * cfg.ways
        fp = fast_ports
        self.tx_aware = tx_aware
        self.txtab: dict[int, list] = {}     # tx_aware: txid -> [(lpn, data or None)] durable, not committed
        self.wb = _Sink(dut, "m_wb", WB_FIELDS + (["rec"] if tx_aware else []), wb_pause, fast=fp)
        self.wbd = _Sink(dut, "m_wbd", WBD_FIELDS, wbd_pause, tuples=True, fast=fp)   # (data, last)
        self.rd = _Sink(dut, "m_rd", RD_FIELDS, rd_pause, fast=fp)
        self.wbc = _Source(dut, "s_wbc", WBC_FIELDS, wbc_pause, fast=fp)
        self.rdd = _Source(dut, "s_rdd", RDD_FIELDS, rdd_pause, fast=fp)
        self.cycle = 0
        self.log: list[Record] = []          # durable log (survives cuts)
        self.mapping: dict[int, list | None] = {}   # lpn -> data of the durable mapping
        self.die_of: dict[int, int] = {}
        self.fail_seqs: set[int] = set()
        self.read_err_lpns: set[int] = set()
        self.stats = MediaStats()
        self.seq = 0
        self.errors: list[str] = []
        self.hold = False                    # withhold durability/completions (tests)
        self._release = 0                    # records allowed through while holding
        self.active = False
        self._reset_inflight()
        if clocked:
            cocotb.start_soon(self._run())
        self.restart()

    # ------------------------------------------------------------------ state
    def _reset_inflight(self):
        self.inflight: deque[Record] = deque()   # issued, not yet durable, in sequence order
        self.chan_free = [0] * self.cfg.num_chan
        self.die_free = [0] * self.ndies
        self.next_die = 0
        self.rd_pend: list = []                  # [ready cycle, order, request]: reads scheduled on their dies
        self.rd_order = 0
        self.rd_sending = False                  # a page's words are queued on s_rdd

    @property
    def receiving(self) -> bool:
        """A writeback request or data words captured but not yet scheduled."""
        return bool(self.wb.queue) or bool(self.wbd.queue)

    @property
    def outstanding(self) -> int:
        """Writeback requests accepted whose completion has not been taken (what the window bounds)."""
        return len(self.inflight) + len(self.wb.queue) + len(self.wbc.queue)

    def release(self, n: int = 1) -> None:
        """While `hold` is set, let the next `n` records become durable (and complete)."""
        self._release += n

    def restart(self):
        """(Re)start after reset or a power cut: drop in-flight work, keep the durable log."""
        self._reset_inflight()
        for s in (self.wb, self.wbd, self.rd):
            s.queue.clear()
        self.wbc.flush()
        self.rdd.flush()
        self.active = True

    def cut(self) -> list[Record]:
        """Power cut now: the durable prefix is what survives; in-flight programs are lost."""
        if not self.hold:
            self._advance_durable()
        self.active = False
        self.inflight.clear()
        self.txtab.clear()                   # tx_aware: uncommitted transactions do not survive a cut
        return list(self.log)

    def summary(self) -> dict:
        """Counters and latency statistics (cycles) for benchmarks."""
        def pct(v, q):
            v = sorted(v)
            return v[min(len(v) - 1, int(q * len(v)))] if v else 0
        st = self.stats
        return {"programs": st.programs, "unmaps": st.unmaps, "reads": st.reads,
                "bytes_programmed": st.bytes_programmed, "bytes_read": st.bytes_read,
                "max_outstanding": st.max_outstanding, "window": self.cfg.window_size,
                "wb_lat_mean": sum(st.wb_latency) / len(st.wb_latency) if st.wb_latency else 0,
                "wb_lat_p99": pct(st.wb_latency, 0.99),
                "rd_lat_mean": sum(st.rd_latency) / len(st.rd_latency) if st.rd_latency else 0,
                "rd_lat_p99": pct(st.rd_latency, 0.99)}

    @property
    def busy(self) -> bool:
        return bool(self.inflight) or bool(self.wbc.queue) or bool(self.wb.queue)

    # ------------------------------------------------------------------ the clock loop
    async def _run(self):
        edge = RisingEdge(self.clk)
        step = self.step
        while True:
            await edge
            step()

    def step(self) -> None:
        """One rising edge: sample the handshakes, advance the dies, drive the next cycle's outputs."""
        self.cycle += 1
        if not self.active:
            for s in (self.wb, self.wbd, self.rd):
                s.set_ready(False)
                if s.stab is not None:
                    s.stab.held = None
            return
        cyc = self.cycle
        self.wb.capture(cyc)
        self.wbd.capture(cyc)
        self.rd.capture(cyc)
        # a read returns the page mapped when its request was taken (architecture.md section 4: reads
        # may be outstanding; a later write-back's mapping never reaches an earlier read)
        for req in self.rd.queue:
            if "_data" not in req:
                req["_data"] = self.mapping.get(req["lpn"])
                if self.tx_aware and req["txid"]:
                    for lpn, d in self.txtab.get(req["txid"], []):
                        if lpn == req["lpn"]:
                            req["_data"] = d
        n_rd = len(self.rd.queue) + len(self.rd_pend)
        if n_rd > self.stats.max_rd_outstanding:
            self.stats.max_rd_outstanding = n_rd
        self.wbc.step()
        self.rdd.step()
        if self.wb.queue:
            self._schedule_writebacks()
        if self.inflight and (not self.hold or self._release):
            for rec in self._advance_durable(self._release if self.hold else None):
                if self.hold:
                    self._release -= 1
                self.wbc.send_nowait(tag=rec.tag, status=ST_PROGRAM_FAIL if rec.failed else ST_OK,
                                     ppn=(rec.applied if self.tx_aware and rec.rec in (1, 2) else rec.seq) & 0xFFFF)
                self.stats.wb_latency.append(cyc - rec.issue_cycle)
        if self.rd_pend or self.rd.queue or self.rd_sending:
            self._read_step()
        win = self.cfg.window_size
        out = self.outstanding
        if out > self.stats.max_outstanding:
            self.stats.max_outstanding = out
        # ready for the next edge only while one more request fits the window (this edge's
        # request, if any, is already in wb.queue and counted)
        self.wb.set_ready(win == 0 or out < win)
        self.wbd.set_ready(True)
        self.rd.set_ready(True)

    # ------------------------------------------------------------------ writeback path
    def _schedule_writebacks(self) -> None:
        """Turn complete requests (an UNMAP, or a PROGRAM with all its words) into records."""
        while self.wb.queue:
            req = self.wb.queue[0]
            words = None
            if req["op"] == PROGRAM:
                if len(self.wbd.queue) < self.pw:
                    return
                words = []
                q = self.wbd.queue
                for i in range(self.pw):
                    data, last = q.popleft()
                    words.append(data)
                    if last != int(i == self.pw - 1):
                        self.errors.append(f"m_wbd last={last} at word {i} (page {self.pw} words)")
            elif req["op"] != UNMAP:
                self.errors.append(f"m_wb op {req['op']} unknown")
            self.wb.queue.popleft()
            now = self.cycle
            rec = Record(seq=self.seq, op=req["op"], lpn=req["lpn"], txid=req["txid"],
                         epoch=req["epoch"], data=words, issue_cycle=req["_cycle"], tag=req["tag"],
                         rec=req.get("rec", 0) if self.tx_aware else 0)
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

    def _advance_durable(self, limit: int | None = None) -> list[Record]:
        done = []
        while self.inflight and self.inflight[0].done_cycle <= self.cycle and (limit is None or len(done) < limit):
            rec = self.inflight.popleft()
            if not rec.failed and self.tx_aware and (rec.txid or rec.rec):
                self.log.append(rec)
                if rec.rec in (0, 1):
                    self.txtab.setdefault(rec.txid, []).append((rec.lpn, rec.data if rec.op == PROGRAM else None))
                    if rec.op == PROGRAM:
                        self.die_of[rec.lpn] = rec.die
                if rec.rec in (1, 2):
                    tab = self.txtab.pop(rec.txid, [])
                    rec.applied = len(tab)
                    for lpn, d in tab:
                        if d is None:
                            self.mapping.pop(lpn, None)
                        else:
                            self.mapping[lpn] = d
                elif rec.rec == 3:
                    self.txtab.pop(rec.txid, None)
            elif not rec.failed:
                self.log.append(rec)
                if rec.op == PROGRAM:
                    self.mapping[rec.lpn] = rec.data
                    self.die_of[rec.lpn] = rec.die
                else:
                    self.mapping.pop(rec.lpn, None)
            done.append(rec)
        return done

    # ------------------------------------------------------------------ read path
    def _read_step(self) -> None:
        """Reads are taken at once (several may be outstanding) and scheduled when taken: tR on the
        die holding the page (after that die's earlier work), then the transfer on its channel. A
        page is sent when its transfer is done and s_rdd is free (one page's words at a time, tag =
        the request's tag): pages leave in the order their dies finish, not in request order (ties:
        a random one). The page is the one mapped at the request."""
        if self.rd_sending:
            if self.rdd.queue:
                return
            self.rd_sending = False
        while self.rd.queue:
            req = self.rd.queue.popleft()
            lpn = req["lpn"]
            die = self.die_of.get(lpn, lpn % self.ndies)
            ch = die % self.cfg.num_chan
            t = max(self.cycle, self.die_free[die]) + self.cfg.t_read
            self.die_free[die] = t
            t = max(t, self.chan_free[ch]) + self.cfg.t_xfer
            self.chan_free[ch] = t
            self.rd_pend.append([t, self.rd_order, req])
            self.rd_order += 1
        ready = [p for p in self.rd_pend if p[0] <= self.cycle]
        if not ready:
            return
        tmin = min(p[0] for p in ready)
        first = [p for p in ready if p[0] == tmin]
        pick = first[0] if len(first) == 1 else self.rng.choice(first)
        self.rd_pend.remove(pick)
        if any(p[1] < pick[1] for p in self.rd_pend):
            self.stats.rd_reordered += 1
        req = pick[2]
        lpn = req["lpn"]
        data = req["_data"] or [0] * self.pw
        status = ST_MEDIA_ERROR if lpn in self.read_err_lpns else ST_OK
        for i, w in enumerate(data):
            self.rdd.send_nowait(data=w, last=int(i == self.pw - 1), status=status, tag=req["tag"])
        self.stats.reads += 1
        self.stats.bytes_read += self.cfg.page_bytes
        self.stats.rd_latency.append(self.cycle - req["_cycle"])
        self.rd_sending = True
