"""Plain-Python reference for transactions with several pending commits (the write buffer's
contract, rtl/wbuf/README.md "Transactions", "Pending commit", "Reads during a commit";
docs/architecture.md section 9), written from the documents, not from the RTL.

Commands are fed in dispatch order (the command queue's order, the buffer's decode order; a
command of a txid whose commit is pending waits and keeps its place relative to that txid):
- a plain WRITE sets the committed version of its LBAs at its place;
- a WRITE with txid t adds its pages to t's open transaction (the last version of an LBA wins);
- TX_COMMIT t / a WRITE with the COMMIT flag on t: commit number g (in dispatch order), which
  applies t's open transaction at its place in the order; TX_EMPTY if t holds nothing;
- TX_ABORT t drops t's open transaction (TX_EMPTY if it holds nothing).
A plain READ is linearised with the commits: it returns, for all its pages, the state after the
plain WRITEs dispatched before it and the commits 1..k, for one k with
  commits completed before the READ was sent <= k <= commits dispatched before it,
and k never goes down from one READ to the next in dispatch order (once a READ has returned a
commit's data no later READ returns the data before it). `read_candidates` gives the allowed
(k, versions) pairs; `read_seen(k)` records the chosen one.
"""
from __future__ import annotations


class TxCommitRef:
    def __init__(self):
        self.ops: list[tuple] = []          # ("w", lba, ver) | ("c", g, {lba: ver})
        self.open: dict[int, dict[int, int]] = {}
        self.ncommits = 0                   # commits dispatched
        self.completed = 0                  # commits whose completion the host has seen (in order)
        self.k_min = 0                      # monotone read rule

    def write(self, lba: int, nlb: int, ver: int, txid: int = 0) -> None:
        for p in range(nlb + 1):
            if txid:
                self.open.setdefault(txid, {})[lba + p] = ver
            else:
                self.ops.append(("w", lba + p, ver))

    def commit(self, txid: int) -> int | None:
        """A TX_COMMIT (or the COMMIT write's commit, after its pages went through write()):
        the commit's number, None for TX_EMPTY."""
        pages = self.open.pop(txid, None)
        if not pages:
            return None
        self.ncommits += 1
        self.ops.append(("c", self.ncommits, dict(pages)))
        return self.ncommits

    def abort(self, txid: int) -> bool:
        """True (OK) if txid held pages, False for TX_EMPTY."""
        return bool(self.open.pop(txid, None))

    def commit_completed(self, g: int) -> None:
        assert g == self.completed + 1, f"commit {g} completed before commit {self.completed + 1}"
        self.completed = g

    def state(self, k: int) -> dict[int, int]:
        s: dict[int, int] = {}
        for op in self.ops:
            if op[0] == "w":
                s[op[1]] = op[2]
            elif op[1] <= k:
                s.update(op[2])
        return s

    def read_candidates(self, lba: int, nlb: int) -> list[tuple[int, list[int]]]:
        lo = max(self.completed, self.k_min)
        out = []
        for k in range(lo, self.ncommits + 1):
            s = self.state(k)
            out.append((k, [s.get(lba + p, 0) for p in range(nlb + 1)]))
        return out

    def read_seen(self, k: int) -> None:
        self.k_min = max(self.k_min, k)
