"""Host model for the SSD benchmarks (B2 `make bench-order`, B3 `make bench-rflush`).

Drives `ats_ssd_bench_top` (ats_cmdq -> ats_wbuf) like an NVMe host driver with a submission queue
and a completion queue, and serves the write buffer's host-memory DMA ports:
- Submission: `Host.submit(Cmd)` pays the host's submission cost (`t_submit_us`: block layer +
  driver + doorbell), queues the descriptor (section 1 of docs/architecture.md) on the `s_cmd`
  stream (the submission queue; the device takes one descriptor per cycle when it has room), waits
  for the completion (`m_cpl`, section 2) and then pays the completion cost (`t_complete_us`:
  interrupt, completion handling and waking the waiting thread). Returns the completion.
- Host memory: every WRITE gets its own 4 KiB buffer whose words encode (lba, version)
  (`atstb.wbuf_model.page_words`); RFLUSH range lists ({lba 48, nlb 16} as two words); READ data
  written by the device (`m_hwr`) is collected per page. The DMA responder answers `m_hrd` requests
  in order on `s_hrd` (optional random idle on s_hrd, random backpressure on m_hrd/m_hwr/m_cpl).
- Bookkeeping: the version of every LBA in acceptance order (the command queue serialises
  overlapping writes in arrival order, so the last accepted write of an LBA is its content), and a
  trace of (cycle, outstanding) for the time-averaged host queue depth.

Host costs (defaults, microseconds), with their sources:
- t_submit_us = 2.0: Linux block layer + NVMe driver submission path, ~1.5-2.5 us per 4 KiB I/O on
  a server core (Yang et al., "When poll is better than interrupt", FAST'12: 2-3 us kernel path).
- t_complete_us = 6.0: interrupt + completion handling + context switch to the waiting thread,
  ~5-7 us (same source: interrupt completion + context switch 4-6 us; the Barrier paper, ToS 2018,
  measures whole wake-ups of tens of us on mobile cores, e.g. D and JD 160 us apart).
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import ClockCycles, Event, RisingEdge, Timer

from atstb.media_model import port_reader as fast_reader, port_writer as fast_writer, slow_reader, slow_writer
from atstb.streams import never_pause, pause_gen
from atstb.wbuf_model import page_words

READ, WRITE, FLUSH, RFLUSH = 0, 1, 6, 7
FUA, BARRIER = 1, 2
SIMPLE, ORDERED, HEAD = 0, 1, 2
OK = 0


@dataclass
class HostConfig:
    clk_ns: float = 8.0            # core clock period (125 MHz, the architecture's target)
    page_bytes: int = 4096
    t_submit_us: float = 2.0
    t_complete_us: float = 6.0
    idle: object = False           # random idle on s_hrd (False, True, "heavy")
    backpressure: object = False   # random backpressure on m_hrd, m_hwr, m_cpl
    seed: int = 1
    fast_ports: bool = True        # port_reader/port_writer; False: plain `.value` (reference)


@dataclass
class Cmd:
    op: int
    lba: int = 0
    nlb: int = 0
    flags: int = 0
    attr: int = SIMPLE
    prio: int = 0
    ranges: list = field(default_factory=list)
    tag: int = -1
    dptr: int = 0
    aux: int = 0
    version: int = 0
    t_submit: int = 0              # cycle the host started submitting (before t_submit)
    t_accept: int = 0              # cycle the device accepted the descriptor
    t_cpl: int = 0                 # cycle the completion left the device
    t_done: int = 0                # cycle the waiting thread resumed (after t_complete)
    status: int = -1
    result: int = 0
    data: list = field(default_factory=list)   # READ: pages of words
    event: Event = field(default_factory=Event)


class Host:
    def __init__(self, dut, cfg: HostConfig):
        self.dut = dut
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.pw = cfg.page_bytes // 4
        self.cycle = 0
        self.free_tags = deque(range(256))
        self.tag_wait = Event()
        self.by_tag: dict[int, Cmd] = {}
        self.mem_pages: dict[int, tuple[int, int]] = {}    # page address -> (lba, version)
        self.mem_words: dict[int, int] = {}                # other words (range lists)
        self.read_pages: dict[int, list[int]] = {}         # READ destination address -> words
        self.next_addr = 0x0010_0000
        self.version = 0
        self.expected: dict[int, int] = {}                 # lba -> version of the last accepted write
        self.accept_order: list[int] = []                  # versions of WRITEs in acceptance order
        self.outstanding = 0                               # accepted, completion not yet seen
        self.qd_trace: list[tuple[int, int]] = [(0, 0)]
        self.errors: list[str] = []
        self._words_cache: dict[tuple[int, int], list[int]] = {}
        self.sq: deque[Cmd] = deque()                      # submission queue (host side)
        self.hrd_pause = pause_gen(self.rng, cfg.backpressure) or never_pause()
        self.hrdd_pause = pause_gen(self.rng, cfg.idle) or never_pause()
        self.hwr_pause = pause_gen(self.rng, cfg.backpressure) or never_pause()
        self.cpl_pause = pause_gen(self.rng, cfg.backpressure) or never_pause()
        self.tick_hooks: list = []                         # called once per cycle after the ports
        cocotb.start_soon(self._loop())

    # ------------------------------------------------------------------ time
    def us(self, cycles: int) -> float:
        return cycles * self.cfg.clk_ns / 1000.0

    async def host_delay(self, us: float) -> None:
        """Host CPU time (no clock-edge work while waiting)."""
        if us > 0:
            cyc = max(1, int(round(us * 1000.0 / self.cfg.clk_ns)))
            await Timer(cyc * self.cfg.clk_ns, unit="ns")

    # ------------------------------------------------------------------ commands
    def alloc(self, nbytes: int) -> int:
        a = self.next_addr
        self.next_addr = (self.next_addr + ((nbytes + 0xFFF) & ~0xFFF)) & 0xFFFF_FFFF
        if self.next_addr < 0x0010_0000:
            self.next_addr = 0x0010_0000
        return a

    def words(self, lba: int, version: int) -> list[int]:
        key = (lba, version)
        w = self._words_cache.get(key)
        if w is None:
            if len(self._words_cache) > 4096:
                self._words_cache.clear()
            w = self._words_cache[key] = page_words(lba, version, self.pw)
        return w

    def _prepare(self, c: Cmd) -> None:
        if c.op == WRITE:
            c.dptr = self.alloc((c.nlb + 1) * self.cfg.page_bytes)
            self.version += 1
            c.version = self.version
            for p in range(c.nlb + 1):
                self.mem_pages[c.dptr + p * self.cfg.page_bytes] = (c.lba + p, c.version)
        elif c.op == READ:
            c.dptr = self.alloc((c.nlb + 1) * self.cfg.page_bytes)
        elif c.op == RFLUSH:
            c.nlb = len(c.ranges) - 1
            c.aux = self.alloc(8 * len(c.ranges))
            for k, (lo, n) in enumerate(c.ranges):
                self.mem_words[c.aux + 8 * k] = lo & 0xFFFF_FFFF
                self.mem_words[c.aux + 8 * k + 4] = ((lo >> 32) & 0xFFFF) | (n << 16)

    def _accepted(self, c: Cmd, cycle: int) -> None:
        c.t_accept = cycle
        if c.op == WRITE:
            for p in range(c.nlb + 1):
                self.expected[c.lba + p] = c.version
            self.accept_order.append(c.version)
        self.outstanding += 1
        self.qd_trace.append((cycle, self.outstanding))

    async def submit(self, c: Cmd, host_costs: bool = True) -> Cmd:
        """Submit one command and wait for its completion (a host thread's synchronous I/O)."""
        await self.issue(c, host_costs)
        return await self.wait(c, host_costs)

    async def issue(self, c: Cmd, host_costs: bool = True) -> None:
        """Submission half: pay the submission cost, take a tag, queue the descriptor."""
        c.t_submit = self.cycle
        if host_costs:
            await self.host_delay(self.cfg.t_submit_us)
        while not self.free_tags:
            self.tag_wait.clear()
            await self.tag_wait.wait()
        c.tag = self.free_tags.popleft()
        self._prepare(c)
        self.by_tag[c.tag] = c
        self.sq.append(c)

    async def wait(self, c: Cmd, host_costs: bool = True) -> Cmd:
        """Completion half: wait for the device, then pay the completion cost."""
        await c.event.wait()
        if host_costs:
            await self.host_delay(self.cfg.t_complete_us)
        c.t_done = self.cycle
        return c

    # ------------------------------------------------------------------ device-side loop
    async def _loop(self):
        """Every device-facing port in one coroutine (one wake-up per cycle keeps the simulation
        fast): s_cmd (submission queue, in order), m_cpl (completions), m_hrd/s_hrd (host memory
        reads, in request order), m_hwr (host memory writes). Handshakes sampled at the rising edge.
        Then the per-cycle hooks (`tick_hooks`, e.g. the media model's `step` when it runs without
        its own coroutine) in registration order.

        Port access goes through `port_reader` / `port_writer` (the simulator handle's integer get,
        and cocotb's write queue without the type checks of `.value`): same values, same write
        timing as `.value`. A stream whose pause generator never pauses keeps its ready (valid)
        constant instead of drawing from the generator every cycle."""
        dut = self.dut
        sq = self.sq
        port_reader, port_writer = ((fast_reader, fast_writer) if self.cfg.fast_ports
                                    else (slow_reader, slow_writer))
        sq_drv = cpl_rdy = hrd_rdy = hwr_rdy = hd_drv = False
        reqs: deque = deque()
        cur: list[int] | None = None
        pos = 0
        hw_base = None
        hw_words: list[int] = []
        # handles looked up once (attribute access on the design object is slow)
        cmd_valid, cmd_ready = port_writer(dut.s_cmd_valid), port_reader(dut.s_cmd_ready)
        cmd_fields = [port_writer(getattr(dut, f"s_cmd_{f}")) for f in
                      ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux")]
        cpl_valid, cpl_ready = port_reader(dut.m_cpl_valid), port_writer(dut.m_cpl_ready)
        cpl_tag, cpl_status, cpl_result = (port_reader(dut.m_cpl_tag), port_reader(dut.m_cpl_status),
                                           port_reader(dut.m_cpl_result))
        hrd_valid, hrd_ready = port_reader(dut.m_hrd_valid), port_writer(dut.m_hrd_ready)
        hrd_addr, hrd_len = port_reader(dut.m_hrd_addr), port_reader(dut.m_hrd_len)
        hd_valid, hd_ready = port_writer(dut.s_hrd_valid), port_reader(dut.s_hrd_ready)
        hd_data, hd_last = port_writer(dut.s_hrd_data), port_writer(dut.s_hrd_last)
        hwr_valid, hwr_ready = port_reader(dut.m_hwr_valid), port_writer(dut.m_hwr_ready)
        hwr_addr, hwr_data, hwr_last = (port_reader(dut.m_hwr_addr), port_reader(dut.m_hwr_data),
                                        port_reader(dut.m_hwr_last))
        cpl_pause, hrd_pause, hrdd_pause, hwr_pause = self.cpl_pause, self.hrd_pause, self.hrdd_pause, self.hwr_pause
        # never-pausing generators (no backpressure / no idle): ready/valid decisions are constant
        cpl_np, hrd_np, hwr_np = (not self.cfg.backpressure,) * 3
        hrdd_np = not self.cfg.idle
        hooks = self.tick_hooks
        cmd_valid(0)
        hd_valid(0)
        hrd_ready(0)
        hwr_ready(0)
        cpl_ready(0)
        cmd_v = hd_v = False          # what we drive on s_cmd_valid / s_hrd_valid
        hd_l = 0                      # what we drive on s_hrd_last
        edge = RisingEdge(dut.clk)
        while True:
            await edge
            self.cycle += 1
            cyc = self.cycle
            # ---- submission queue -> s_cmd
            if sq_drv and cmd_ready():
                self._accepted(sq.popleft(), cyc)
                sq_drv = False
            if not sq_drv:
                if sq:
                    c = sq[0]
                    for h, v in zip(cmd_fields, (c.op, c.tag, c.lba, c.nlb, 0, c.flags, c.attr, c.prio,
                                                 c.dptr, c.aux)):
                        h(v)
                    cmd_valid(1)
                    cmd_v = sq_drv = True
                elif cmd_v:
                    cmd_valid(0)
                    cmd_v = False
            # ---- completions
            if cpl_rdy and cpl_valid():
                self._completed(cpl_tag(), cpl_status(), cpl_result(), cyc)
            if cpl_np:
                if not cpl_rdy:
                    cpl_ready(1)
                    cpl_rdy = True
            else:
                r = not next(cpl_pause)
                if r != cpl_rdy:
                    cpl_ready(int(r))
                    cpl_rdy = r
            # ---- host memory reads
            if hrd_rdy and hrd_valid():
                reqs.append((hrd_addr(), hrd_len()))
            if hd_drv and hd_ready():
                pos += 1
                hd_drv = False
                if pos == len(cur):
                    cur = None
            if cur is None and reqs:
                cur = self._read_mem(*reqs.popleft())
                pos = 0
            if not hd_drv:
                if cur is not None and (hrdd_np or not next(hrdd_pause)):
                    hd_data(cur[pos])
                    lst = int(pos == len(cur) - 1)
                    if lst != hd_l:
                        hd_last(lst)
                        hd_l = lst
                    if not hd_v:
                        hd_valid(1)
                        hd_v = True
                    hd_drv = True
                elif hd_v:
                    hd_valid(0)
                    hd_v = False
            if hrd_np:
                if not hrd_rdy:
                    hrd_ready(1)
                    hrd_rdy = True
            else:
                r = not next(hrd_pause)
                if r != hrd_rdy:
                    hrd_ready(int(r))
                    hrd_rdy = r
            # ---- host memory writes (READ data)
            if hwr_rdy and hwr_valid():
                addr = hwr_addr()
                if hw_base is None:
                    hw_base = addr
                elif addr != hw_base:
                    self.errors.append(f"m_hwr burst address changed {hw_base:#x} -> {addr:#x}")
                hw_words.append(hwr_data())
                if hwr_last():
                    self.read_pages[hw_base] = hw_words
                    hw_base, hw_words = None, []
            if hwr_np:
                if not hwr_rdy:
                    hwr_ready(1)
                    hwr_rdy = True
            else:
                r = not next(hwr_pause)
                if r != hwr_rdy:
                    hwr_ready(int(r))
                    hwr_rdy = r
            for hook in hooks:
                hook()

    def _completed(self, tag: int, status: int, result: int, cyc: int) -> None:
        c = self.by_tag.pop(tag, None)
        if c is None:
            self.errors.append(f"cycle {cyc}: completion of tag {tag} not in flight")
            return
        c.status, c.result, c.t_cpl = status, result, cyc
        if c.op == READ and status == OK:
            c.data = [self.read_pages.pop(c.dptr + p * self.cfg.page_bytes, []) for p in range(c.nlb + 1)]
        if c.op == WRITE:
            for p in range(c.nlb + 1):
                self.mem_pages.pop(c.dptr + p * self.cfg.page_bytes, None)
        self.outstanding -= 1
        self.qd_trace.append((cyc, self.outstanding))
        self.free_tags.append(tag)
        self.tag_wait.set()
        c.event.set()

    def _read_mem(self, addr: int, nbytes: int) -> list[int]:
        n = max(1, nbytes // 4)
        page = self.mem_pages.get(addr)
        if page is not None and n == self.pw:
            return self.words(*page)
        out = []
        for i in range(n):
            a = addr + 4 * i
            if a not in self.mem_words:
                self.errors.append(f"device read host address {a:#x} that holds no data")
            out.append(self.mem_words.get(a, 0xDEAD_BEEF))
        return out

    # ------------------------------------------------------------------ statistics
    def mean_outstanding(self, t0: int, t1: int) -> float:
        """Time average of the host's outstanding commands (accepted, not completed) in [t0, t1)."""
        if t1 <= t0:
            return 0.0
        area = 0
        tr = self.qd_trace
        for i, (t, q) in enumerate(tr):
            tn = tr[i + 1][0] if i + 1 < len(tr) else t1
            a, b = max(t, t0), min(tn, t1)
            if b > a:
                area += q * (b - a)
        return area / (t1 - t0)


class OccupancySampler:
    """Time average of the command queue occupancy (`q_occupancy`: entries queued or in service),
    sampled every `every` cycles between start() and stop()."""

    def __init__(self, dut, every: int = 4):
        self.dut = dut
        self.every = every
        self.sum = 0
        self.n = 0
        self.max = 0
        self.running = False

    def start(self):
        self.running = True
        cocotb.start_soon(self._run())

    def stop(self):
        self.running = False

    async def _run(self):
        while self.running:
            await ClockCycles(self.dut.clk, self.every)
            if not self.running:
                return
            v = int(self.dut.q_occupancy.value)
            self.sum += v
            self.n += 1
            self.max = max(self.max, v)

    @property
    def mean(self) -> float:
        return self.sum / self.n if self.n else 0.0


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]
