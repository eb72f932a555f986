"""Which coroutines the cocotb scheduler resumes, and on what: a profile of a testbench's per-edge
cost (`ATS_RESUME_STATS=1` in the environment of a cocotb run; atstb.streams installs it). At the
simulator's exit it prints the rising edges of the busiest clock trigger and, per (trigger type,
coroutine), the resumes, busiest first, with resumes per edge: a coroutine near 1.0 on RisingEdge
polls every cycle, the first thing to move to a stream ticker function (`streams.every_edge`) or an
Event. Development aid only: it slows the run and changes nothing the design sees."""
from __future__ import annotations

import atexit
import collections
import sys

from cocotb import _base_triggers

_counts: collections.Counter = collections.Counter()
_fires: collections.Counter = collections.Counter()


def _name(cb) -> str:
    fn = getattr(cb, "_func", None)
    task = getattr(fn, "__self__", None)
    coro = getattr(task, "_coro", None)
    return getattr(coro, "__qualname__", None) or repr(fn)[:60]


def install() -> None:
    orig = _base_triggers.Trigger._do_callbacks
    if getattr(orig, "_ats_stats", False):
        return

    def counted(self) -> None:
        kind = type(self).__name__
        _fires[(kind, id(self))] += 1
        for cb in self._callbacks:
            _counts[(kind, _name(cb))] += 1
        orig(self)

    counted._ats_stats = True
    _base_triggers.Trigger._do_callbacks = counted
    atexit.register(report)


def report(top: int = 20) -> None:
    edges = max((n for (k, _), n in _fires.items() if k == "RisingEdge"), default=0)
    print(f"[resume_stats] busiest clock: {edges} rising edges", file=sys.stderr)
    for (kind, name), n in _counts.most_common(top):
        per = f"{n / edges:.3f}/edge" if edges else ""
        print(f"[resume_stats] {n:>10} {per:>12}  {kind:<14} {name}", file=sys.stderr)
