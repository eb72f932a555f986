# SPDX-License-Identifier: Apache-2.0
"""B4's concurrency scheduler (bench_difftx.py --qd N): which transaction, which of its device parts,
may be submitted now. Plain Python, no simulator (tests/system/test_bench_difftx_sched.py).

The model is N host threads running the workload's transactions in order, each under a lock rule:
  - at most `qd` transactions are in flight (admitted and not complete); they are admitted in
    workload order, and an admitted transaction waiting for a lock keeps its place (its thread waits);
  - a transaction starts (its first part is submitted) only when every earlier transaction that
    touches any of its LPNs is complete (two-phase locking of its pages, released at its commit), so
    conflicting transactions run in workload order and every mode computes the same logical result;
  - a device part needs a txid: at most `txids` parts are in flight at once (a commit completed frees
    its txid), given to the startable transactions in workload order; a transaction's parts go in order
    as txids allow (bench_difftx's `run_parts` for one transaction). `txids=None`: no txid needed (the
    journal mode's plain writes; its transaction is one part, the bench's stage machine).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence


class TxScheduler:
    def __init__(self, lpns: Sequence[Iterable[int]], parts: Sequence[int], qd: int, txids: int | None):
        if qd < 1 or (txids is not None and txids < 1):
            raise ValueError(f"qd {qd}, txids {txids}")
        if len(lpns) != len(parts) or any(p < 1 for p in parts):
            raise ValueError("one part count (>= 1) per transaction")
        self.lpns = [frozenset(s) for s in lpns]
        self.parts = list(parts)
        self.qd, self.txids = qd, txids
        n = len(self.lpns)
        # the earlier transactions each one waits for (its lock set's earlier holders)
        last: dict[int, int] = {}
        self.waits: list[set[int]] = []
        for i, s in enumerate(self.lpns):
            self.waits.append({last[l] for l in s if l in last})
            for l in s:
                last[l] = i
        self.admitted = 0                 # transactions 0 .. admitted-1 were admitted
        self.sent = [0] * n               # parts submitted
        self.acked: list[set[int]] = [set() for _ in range(n)]     # parts completed
        self.done = [False] * n
        self.in_parts = 0                 # parts in flight (txids held)
        self.started = [False] * n
        self.lock_waited: set[int] = set()   # transactions found admitted but held by the lock rule

    @property
    def finished(self) -> bool:
        return all(self.done)

    def in_flight(self) -> int:
        """Transactions admitted and not complete (running or waiting for a lock)."""
        return sum(1 for i in range(self.admitted) if not self.done[i])

    def running(self) -> int:
        """Transactions started (a part submitted) and not complete."""
        return sum(1 for i in range(self.admitted) if self.started[i] and not self.done[i])

    def _startable(self, i: int) -> bool:
        return all(self.done[j] for j in self.waits[i])

    def step(self) -> list[tuple[int, int]]:
        """The (transaction, part) pairs to submit now, in order; the caller submits them all."""
        while self.admitted < len(self.lpns) and self.in_flight() < self.qd:
            self.admitted += 1
        out = []
        for i in range(self.admitted):
            if self.done[i] or self.sent[i] == self.parts[i]:
                continue
            if not self.started[i] and not self._startable(i):
                self.lock_waited.add(i)
                continue
            while self.sent[i] < self.parts[i] and (self.txids is None or self.in_parts < self.txids):
                self.started[i] = True
                out.append((i, self.sent[i]))
                self.sent[i] += 1
                self.in_parts += 1
        return out

    def complete(self, i: int, part: int) -> None:
        """Part `part` of transaction `i` completed (its commit; the journal's last Flush)."""
        if not 0 <= part < self.sent[i] or part in self.acked[i]:
            raise ValueError(f"tx {i} part {part}: not in flight")
        self.acked[i].add(part)
        self.in_parts -= 1
        if len(self.acked[i]) == self.parts[i]:
            self.done[i] = True
