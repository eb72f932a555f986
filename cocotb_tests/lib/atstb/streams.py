"""Valid/ready stream drivers for flat-port RTL (`s_<if>_valid`, `s_<if>_ready`, `s_<if>_<field>`).

Both ends take a pause generator: an iterator of bools, True meaning "stall this cycle" (idle
cycles on a source, deasserted ready on a sink). `random_pause(rng, p)` gives random stalls.
Handshakes are sampled at the rising edge, as the RTL sees them. StreamSink also checks stream
stability (a beat offered and not taken stays offered, payload unchanged) on by default.
"""
from __future__ import annotations

import itertools
import os
import random
from collections import deque
from typing import Iterator

import cocotb
from cocotb.triggers import ClockCycles, Event, RisingEdge, Timer
from cocotb.utils import get_sim_time


# ATS_RESUME_STATS=1: print what the scheduler resumed at the simulator's exit (resume_stats.py)
if os.environ.get("ATS_RESUME_STATS", "0") not in ("0", ""):
    from . import resume_stats
    resume_stats.install()

# stream stability check of StreamSink: on unless ATS_STREAM_CHECK=0
STABLE_CHECK_DEFAULT = os.environ.get("ATS_STREAM_CHECK", "1") not in ("0", "")


def random_pause(rng: random.Random, p: float = 0.3) -> Iterator[bool]:
    """Stall with probability p each cycle, in bursts (so that FIFOs fill and drain)."""
    while True:
        if rng.random() < p:
            for _ in range(rng.randint(1, 6)):
                yield True
        else:
            yield False


def heavy_pause(rng: random.Random, max_stall: int = 40) -> Iterator[bool]:
    """Long stalls (up to max_stall cycles, half the time): fills FIFOs and tables."""
    while True:
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, max_stall)):
                yield True
        else:
            for _ in range(rng.randint(1, 8)):
                yield False


def pause_gen(rng: random.Random, kind, p: float = 0.3, max_stall: int = 40) -> Iterator[bool] | None:
    """kind: False (never stall), True (random short bursts), "heavy" (long stalls)."""
    if kind == "heavy":
        return heavy_pause(rng, max_stall)
    return random_pause(rng, p) if kind else None


def never_pause() -> Iterator[bool]:
    return itertools.repeat(False)


# ATS_FAST_READ: how the stream ends read the signals they sample at every edge. Unset or "1":
# port_reader; "0" or empty: cocotb's `.value` (to measure, or to bisect); "check": both, compared
# at every read (a mismatch raises)
FAST_READ = os.environ.get("ATS_FAST_READ", "1") or "0"


def slow_reader(h):
    """Reference reader: `int(h.value)` (what port_reader must equal)."""
    return lambda: int(h.value)


def port_reader(h):
    """Fast reader of a port: a function returning the same int as `int(h.value)` (2-state
    simulators: Verilator) without building a Logic / LogicArray per read: the simulator handle's
    integer get up to 32 bits (the VPI integer is signed: masked at 32), its bit string through
    int(..., 2) above; `.value` for a handle without them. On a 4-state simulator X / Z would read
    as some integer up to 32 bits (int(h.value) raises ValueError); Verilator has none."""
    raw = getattr(h, "_handle", None)
    n = len(h)
    if raw is not None and n <= 32 and hasattr(raw, "get_signal_val_long"):
        get = raw.get_signal_val_long
        if n == 32:
            return lambda: get() & 0xFFFF_FFFF
        return get
    if raw is not None and hasattr(raw, "get_signal_val_binstr"):
        getb = raw.get_signal_val_binstr
        return lambda: int(getb(), 2)
    return slow_reader(h)


# ATS_FAST_WRITE: how the stream ends write the signals they drive at an edge. Unset or "1":
# port_writer; "0" or empty: cocotb's `.value =` (to measure, or to bisect)
FAST_WRITE = os.environ.get("ATS_FAST_WRITE", "1") or "0"


def port_writer(h, fast: bool | None = None):
    """Fast writer of a port: a function v -> None that schedules exactly the write `h.value = v`
    schedules (cocotb's `_schedule_write`: a deposit, applied at the step's ReadWrite phase or at
    once inside it, keyed by the handle, so that the last write of a step wins whichever way it was
    made), through the simulator handle's integer put, without building a Logic and its bit string
    per write (a 1-bit signal) or checking the type (a vector). Up to 32 bits (the VPI integer);
    an int outside what `.value` accepts for the width (-2^(n-1) .. 2^n - 1; 0 .. 1 for one bit)
    raises ValueError as `.value` does. `.value =` for a wider handle or one without the put.
    cocotb 2.0's `_schedule_write` and `_GPISetAction` are private: the pinned cocotb
    (tools/constraints.txt) is the one this is written against; cocotb_tests/atstb_streams checks
    it against `.value`. `fast`: None follows ATS_FAST_WRITE; True the integer put whatever it says
    (the test, which would otherwise compare `.value` with itself under ATS_FAST_WRITE=0)."""
    raw = getattr(h, "_handle", None)
    n = len(h)
    if (FAST_WRITE != "0" if fast is None else fast) and raw is not None and n <= 32 and hasattr(raw, "set_signal_val_int"):
        from cocotb.handle import _GPISetAction, _schedule_write
        put, dep = raw.set_signal_val_int, _GPISetAction.DEPOSIT
        lo, hi = (-(1 << (n - 1)) if n > 1 else 0), (1 << n) - 1

        def write(v: int) -> None:
            if not lo <= v <= hi:
                raise ValueError(f"{v!r} out of range for the {n}-bit signal {h._path}")
            _schedule_write(h, put, dep, v)
        return write

    def slow(v: int) -> None:
        h.value = v
    return slow


def stream_reader(h):
    """The per-edge reader of h for the stream ends and the NVMe host model's AXI loops: port_reader,
    `.value` or both compared, as ATS_FAST_READ says."""
    if FAST_READ == "0":
        return slow_reader(h)
    fast = port_reader(h)
    if FAST_READ != "check":
        return fast
    slow = slow_reader(h)

    def checked():
        a, b = fast(), slow()
        if a != b:
            raise AssertionError(f"port_reader({h._path}) read {a:#x}, .value {b:#x}")
        return a
    return checked


class _Ticker:
    """One coroutine per clock runs the edge logic of every stream end on that clock.

    A testbench with ten streams used to resume ten coroutines at each edge; the scheduler's cost
    per resume dominated long campaigns. The ends' logic is independent and reads only values
    sampled at the edge (writes are applied after the edge), so running it from one coroutine is
    equivalent. A ticker belongs to the cocotb test that started it: when that test ends (its tasks
    are cancelled), the next stream end on the clock starts a fresh one."""

    _by_clk: dict = {}

    def __init__(self, clk):
        self.clk = clk
        self.ends: list = []
        self.task = cocotb.start_soon(self._run())

    @classmethod
    def add(cls, clk, end) -> "_Ticker":
        t = cls._by_clk.get(clk)
        if t is None or t.task.done():
            t = cls._by_clk[clk] = cls(clk)
        t.ends.append(end)
        return t

    async def _run(self) -> None:
        ends = self.ends
        while True:
            await RisingEdge(self.clk)
            for e in ends:
                e._edge()


class CycleWait:
    """`await w(n)`: the n-th rising edge of `clk` from now, as ClockCycles(clk, n), without resuming
    the waiting task at each edge (cocotb's ClockCycles awaits every edge: a driver polling every 40
    cycles, or a core model delaying a command 3000 cycles, cost a task resume per cycle). A timer to
    the middle of the cycle before the n-th edge, then that edge. `sync()` (at a rising edge) learns
    the clock's phase; before it, and for n <= 2, it is ClockCycles. The clock's period must be
    constant (a cocotb Clock). Called at or after an edge, never at an edge's time before it."""

    def __init__(self, clk, period_ps: int):
        self.clk, self.p, self.e0 = clk, int(period_ps), None

    async def sync(self) -> None:
        await RisingEdge(self.clk)
        self.e0 = get_sim_time("ps") % self.p

    async def __call__(self, n: int) -> None:
        n = max(int(n), 1)
        if n <= 2 or self.e0 is None:
            await ClockCycles(self.clk, n)
            return
        now = get_sim_time("ps")
        first = now + self.p - (now - self.e0) % self.p          # the first edge ClockCycles would count
        await Timer(first + (n - 1) * self.p - self.p // 2 - now, "ps")
        await RisingEdge(self.clk)


class _FnEnd:
    def __init__(self, fn):
        self._edge = fn


def every_edge(clk, fn) -> None:
    """Call fn() at every rising edge of clk, from the clock's stream ticker (after the stream ends
    registered before it): cheaper than a coroutine awaiting each edge, for testbench logic that
    only reacts to what the stream ends collected (e.g. a host-memory model)."""
    _Ticker.add(clk, _FnEnd(fn))


class _StreamEnd:
    """What both ends share: the handshake and payload handles of `<prefix>_*`, a clock, a pause pattern."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None):
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.fields = {f: getattr(dut, f"{prefix}_{f}") for f in fields}
        self._rd_valid, self._rd_ready = stream_reader(self.valid), stream_reader(self.ready)
        self._rd_fields = None               # the payload's readers, made at the first read (`fields`
        self.clk = clk                       # may be replaced after the constructor)
        self.pause = pause or never_pause()
        self.queue: deque[dict] = deque()
        self.cycle = 0

    def set_pause(self, pause: Iterator[bool] | None) -> None:
        self.pause = pause or never_pause()


class StreamSource(_StreamEnd):
    """Drives `<prefix>_valid` and the payload fields, honouring `<prefix>_ready`."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None = None):
        super().__init__(dut, prefix, clk, fields, pause)
        self.sent = 0
        self.accept_cycles: list[int] = []   # cycle number of each accepted item
        self._idle = Event()
        self.on_accept = None                # optional callback(item, cycle) at each acceptance
        self._driving = False
        self.valid.value = 0
        self._wr_valid = port_writer(self.valid)
        self._wr_fields = None               # the payload's writers, made at the first beat
        self._valid_out = 0                  # the value last written to valid (written on change only)
        self._ticker = _Ticker.add(clk, self)

    def send_nowait(self, **fields) -> None:
        self.queue.append(fields)
        self._idle.clear()

    async def wait_idle(self) -> None:
        """Returns at the first edge at which nothing is queued and valid is low (as read there).
        Not a resume an edge: while items are queued it sleeps until the last is taken (`_idle`, set
        by `_edge`; valid falls after that edge), then checks at the next edge, as polling would. A
        `flush()` ends the wait at the next edge (a polling loop that ran after a flush made at an
        edge, in the same step, could end at that edge itself; no testbench flushes a source that
        is being waited for). cocotb_tests/atstb_streams checks it against the polling loop."""
        while self.queue or self.valid.value:
            if self.queue:
                self._idle.clear()
                await self._idle.wait()
            await RisingEdge(self.clk)

    def flush(self) -> int:
        """Drop every item not yet accepted (including the one being driven) and deassert valid
        now, e.g. before a reset. Returns the number of items dropped."""
        dropped = len(self.queue)
        self.queue.clear()
        self._idle.set()
        self._driving = False
        self.valid.value = 0
        self._valid_out = 0
        return dropped

    def _edge(self) -> None:
        """One rising edge (called by the clock's _Ticker)."""
        self.cycle += 1
        if self._driving and self._rd_ready():
            item = self.queue.popleft()
            if not self.queue:
                self._idle.set()
            self.sent += 1
            self.accept_cycles.append(self.cycle)
            self._driving = False
            if self.on_accept is not None:
                self.on_accept(item, self.cycle)
        if not self._driving:
            if self.queue and not next(self.pause):
                wr = self._wr_fields
                if wr is None or wr[0] is not self.fields:
                    wr = self._wr_fields = (self.fields, [(f, port_writer(h)) for f, h in self.fields.items()])
                item = self.queue[0]
                for f, w in wr[1]:
                    w(int(item.get(f, 0)))
                self._wr_valid(1)
                self._valid_out = 1
                self._driving = True
            elif self._valid_out:
                self._wr_valid(0)
                self._valid_out = 0


class StabilityCheck:
    """Stream stability (docs/architecture.md, AXI-Stream rule) of one stream, fed one clock edge at a
    time: a beat offered and not taken at an edge (valid = 1, ready = 0) must still be offered at
    the next edge with every payload field unchanged. A violation raises AssertionError naming the
    stream, the field and the time. An edge with `rst` high, or right after one, is exempt (a reset
    may drop valid). `checks` counts the stalled edges checked (coverage)."""

    def __init__(self, name: str, fields, rst=None):
        self.name = name
        self.fields = list(fields)
        self.rst = rst
        self.checks = 0
        self.held: dict | None = None        # payload offered and not taken at the previous edge
        self.held_rst = False

    def _in_reset(self) -> bool:
        if self.rst is None:
            return False
        try:
            return int(self.rst.value) != 0
        except ValueError:                   # X/Z: not out of reset yet
            return True

    def edge(self, payload: dict | None, taken: bool, cycle: int) -> None:
        """payload: the fields at this edge if valid, else None; taken: ready was high too."""
        if self.held is not None:
            self.checks += 1
            if payload != self.held and not (self.held_rst or self._in_reset()):
                where = f"cycle {cycle}, {get_sim_time('ns'):.0f} ns"
                if payload is None:
                    raise AssertionError(f"stream {self.name}: valid dropped while a beat was waiting "
                                         f"for ready ({where}); the beat was {self.held}")
                f = next(f for f in self.fields if payload[f] != self.held[f])
                raise AssertionError(f"stream {self.name}: field {f} changed while valid and not "
                                     f"ready: {self.held[f]:#x} -> {payload[f]:#x} ({where})")
        if payload is None or taken:
            self.held = None
        else:
            self.held = payload
            self.held_rst = self._in_reset()


class StreamSink(_StreamEnd):
    """Collects beats from `<prefix>_valid`/fields, driving `<prefix>_ready` with backpressure.

    Stream stability is checked by default (`StabilityCheck`). Cost: the valid bit is read every
    edge and the payload once per edge with valid (it is read anyway when a beat is taken). `rst`:
    the dut's `rst` unless given. `check_stable=False` turns the check off for one sink (to be
    justified where it is used); ATS_STREAM_CHECK=0 in the environment turns it off for all (to
    measure its cost, or to bisect). `stable_checks`: stalled edges checked."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None = None,
                 check_stable: bool | None = None, rst=None):
        super().__init__(dut, prefix, clk, fields, pause)
        self.name = prefix
        self.check_stable = STABLE_CHECK_DEFAULT if check_stable is None else check_stable
        self.stab = StabilityCheck(prefix, fields, rst if rst is not None else getattr(dut, "rst", None))
        self.event = Event()
        self.ready.value = 0
        self._wr_ready = port_writer(self.ready)
        self._ready_out = False              # the value last written to ready (written on change only)
        self._ticker = _Ticker.add(clk, self)

    @property
    def stable_checks(self) -> int:
        return self.stab.checks

    def _payload(self) -> dict:
        rd = self._rd_fields
        if rd is None or rd[0] is not self.fields:
            rd = self._rd_fields = (self.fields, [(f, stream_reader(h)) for f, h in self.fields.items()])
        return {f: r() for f, r in rd[1]}    # X/Z with valid: ValueError

    def _edge(self) -> None:
        """One rising edge (called by the clock's _Ticker)."""
        self.cycle += 1
        ready = self._ready_out
        cur = self._payload() if self._rd_valid() else None
        if self.check_stable:
            self.stab.edge(cur, ready, self.cycle)
        if ready and cur is not None:
            cur["_cycle"] = self.cycle
            self.queue.append(cur)
            self.event.set()
        ready = not next(self.pause)
        if ready != self._ready_out:
            self._wr_ready(int(ready))
            self._ready_out = ready

    async def recv(self, timeout_cycles: int = 100_000) -> dict:
        waited = 0
        while not self.queue:
            await RisingEdge(self.clk)
            waited += 1
            if waited > timeout_cycles:
                raise TimeoutError(f"no beat on {self.valid._name} within {timeout_cycles} cycles")
        return self.queue.popleft()
