"""Valid/ready stream drivers for flat-port RTL (`s_<if>_valid`, `s_<if>_ready`, `s_<if>_<field>`).

Both ends take a pause generator: an iterator of bools, True meaning "stall this cycle" (idle
cycles on a source, deasserted ready on a sink). `random_pause(rng, p)` gives random stalls.
Handshakes are sampled at the rising edge, as the RTL sees them.
"""
from __future__ import annotations

import itertools
import random
from collections import deque
from typing import Iterator

import cocotb
from cocotb.triggers import Event, RisingEdge


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
    """Collects beats from `<prefix>_valid`/fields, driving `<prefix>_ready` with backpressure."""

    def __init__(self, dut, prefix: str, clk, fields: list[str], pause: Iterator[bool] | None = None):
        super().__init__(dut, prefix, clk, fields, pause)
        self.event = Event()
        self.ready.value = 0
        self._task = cocotb.start_soon(self._run())

    async def _run(self) -> None:
        ready = False
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if ready and self.valid.value:
                beat = {f: int(h.value) for f, h in self.fields.items()}
                beat["_cycle"] = self.cycle
                self.queue.append(beat)
                self.event.set()
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
