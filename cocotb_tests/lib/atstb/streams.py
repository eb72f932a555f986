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
from cocotb.triggers import Event, RisingEdge
from cocotb.utils import get_sim_time


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


class _StreamEnd:
    """What both ends share: the handshake and payload handles of `<prefix>_*`, a clock, a pause pattern."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None):
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.fields = {f: getattr(dut, f"{prefix}_{f}") for f in fields}
        self.clk = clk
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
        self._task = cocotb.start_soon(self._run())

    def send_nowait(self, **fields) -> None:
        self.queue.append(fields)
        self._idle.clear()

    async def wait_idle(self) -> None:
        while self.queue or self.valid.value:
            await RisingEdge(self.clk)

    def flush(self) -> int:
        """Drop every item not yet accepted (including the one being driven) and deassert valid
        now, e.g. before a reset. Returns the number of items dropped."""
        dropped = len(self.queue)
        self.queue.clear()
        self._driving = False
        self.valid.value = 0
        return dropped

    async def _run(self) -> None:
        self._driving = False
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if self._driving and self.ready.value:
                item = self.queue.popleft()
                self.sent += 1
                self.accept_cycles.append(self.cycle)
                self._driving = False
                if self.on_accept is not None:
                    self.on_accept(item, self.cycle)
            if not self._driving:
                if self.queue and not next(self.pause):
                    for f, h in self.fields.items():
                        h.value = int(self.queue[0].get(f, 0))
                    self.valid.value = 1
                    self._driving = True
                else:
                    self.valid.value = 0


class StreamSink(_StreamEnd):
    """Collects beats from `<prefix>_valid`/fields, driving `<prefix>_ready` with backpressure.

    Stream stability (docs/architecture.md, AXI-Stream rule), checked by default: a beat offered
    and not taken (valid = 1, ready = 0 at an edge) must still be offered at the next edge with
    every payload field unchanged. A violation raises AssertionError (failing the test) naming the
    stream, the field and the cycle. Cost: the valid bit is read every edge and the payload once
    per edge with valid (it is read anyway when a beat is taken). An edge with `rst` high (the dut's
    `rst`, or `rst=` given), or right after one, is exempt: a reset may drop valid.
    `check_stable=False` turns the check off for one sink (to be justified where it is used);
    ATS_STREAM_CHECK=0 in the environment turns it off for all (to measure its cost, or to bisect)."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None = None,
                 check_stable: bool | None = None, rst=None):
        super().__init__(dut, prefix, clk, fields, pause)
        self.name = prefix
        self.check_stable = STABLE_CHECK_DEFAULT if check_stable is None else check_stable
        self.rst = rst if rst is not None else getattr(dut, "rst", None)
        self.stable_checks = 0               # stalled edges checked (coverage)
        self.event = Event()
        self.ready.value = 0
        self._task = cocotb.start_soon(self._run())

    def _payload(self) -> dict:
        return {f: int(h.value) for f, h in self.fields.items()}   # X/Z with valid: ValueError

    def _in_reset(self) -> bool:
        if self.rst is None:
            return False
        try:
            return int(self.rst.value) != 0
        except ValueError:                   # X/Z: not out of reset yet
            return True

    def _violation(self, held: dict, cur: dict | None, held_rst: bool) -> None:
        """A beat offered at the previous edge changed or was withdrawn: fail, unless a reset
        explains it (rst high at this edge or at the previous one)."""
        if held_rst or self._in_reset():
            return
        where = f"sink cycle {self.cycle}, {get_sim_time('ns'):.0f} ns"
        if cur is None:
            raise AssertionError(f"stream {self.name}: valid dropped while a beat was waiting for "
                                 f"ready ({where}); the beat was {held}")
        for f in self.fields:
            if cur[f] != held[f]:
                raise AssertionError(f"stream {self.name}: field {f} changed while valid and not "
                                     f"ready: {held[f]:#x} -> {cur[f]:#x} ({where})")

    async def _run(self) -> None:
        ready = False
        held = None                          # payload offered and not taken at the previous edge
        held_rst = False
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if not self.check_stable:
                held = None
                if ready and self.valid.value:
                    beat = self._payload()
                    beat["_cycle"] = self.cycle
                    self.queue.append(beat)
                    self.event.set()
            elif int(self.valid.value):
                cur = self._payload()        # one read of the payload per edge with valid
                if held is not None:
                    self.stable_checks += 1
                    if cur != held:
                        self._violation(held, cur, held_rst)
                if ready:
                    held = None
                    beat = cur
                    beat["_cycle"] = self.cycle
                    self.queue.append(beat)
                    self.event.set()
                else:
                    held = cur
                    held_rst = self._in_reset()
            else:
                if held is not None:
                    self.stable_checks += 1
                    self._violation(held, None, held_rst)
                held = None
            ready = not next(self.pause)
            self.ready.value = int(ready)

    async def recv(self, timeout_cycles: int = 100_000) -> dict:
        waited = 0
        while not self.queue:
            await RisingEdge(self.clk)
            waited += 1
            if waited > timeout_cycles:
                raise TimeoutError(f"no beat on {self.valid._name} within {timeout_cycles} cycles")
        return self.queue.popleft()
