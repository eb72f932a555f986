"""Reference model of `ats_remap_engine`, written from its README (spinal/.../remap/README.md) only.

Plain Python: the committed map is a dict, each transaction an append list of (lpn, ppn). Requests
are applied one at a time in the order the engine accepted them (the README's linearisation rule:
"requests take effect in request order", a COMMIT at its place in the request stream), so every
response field and every event beat is fully determined; the model allows exactly one answer.

`RemapModel.step(req)` applies one request and returns a `Step`: the allowed status (one), the
expected response fields, and the m_inval / m_map beats the request must produce (COMMIT, ABORT).

INDEX_FULL (README "Index"): a TX_WRITE of a new (tx, lpn) pair is refused when the pair's bucket
already holds HASH_WAYS pairs of transactions that are open in request order. The pairs of a tx
whose COMMIT/ABORT was accepted earlier do not count, even while the engine's CLEAR is still
freeing their slots: a status follows from the requests accepted before it, never from timing.
The bucket is the README's hash: XOR-fold of the LPN over B = log2(HASH_BUCKETS) bit chunks, xor
the tx term rev_X(txid-1) (X = log2(NUM_TX)) shifted left by B-X (B >= X) or cut to its B low bits.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional


# --------------------------------------------------------------------------------------------
# Hash (README "Index")
# --------------------------------------------------------------------------------------------
def _clog2(n: int) -> int:
    return max(0, (n - 1).bit_length())


def _rev(v: int, w: int) -> int:
    r = 0
    for i in range(w):
        if (v >> i) & 1:
            r |= 1 << (w - 1 - i)
    return r


def xor_fold(v: int, b: int) -> int:
    """XOR of the b-bit chunks of v, starting at bit 0."""
    if b == 0:
        return 0
    m = (1 << b) - 1
    r = 0
    while v:
        r ^= v & m
        v >>= b
    return r


def tx_term(p: dict, txid: int) -> int:
    """The tx part of the bucket index: rev_X(txid-1), aligned to the top of B bits (B >= X) or
    cut to its B low bits (B < X)."""
    b, x = _clog2(p["HASH_BUCKETS"]), _clog2(p["NUM_TX"])
    r = _rev((txid - 1) & ((1 << x) - 1), x)
    return (r << (b - x)) if b >= x else r & ((1 << b) - 1)


def bucket(p: dict, txid: int, lpn: int) -> int:
    return xor_fold(lpn, _clog2(p["HASH_BUCKETS"])) ^ tx_term(p, txid)


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------
@dataclass
class Req:
    op: int
    tag: int = 0
    txid: int = 0
    lpn: int = 0
    ppn: int = 0


@dataclass
class Step:
    allowed: set                      # the status the engine must answer (one)
    ok_rsp: Optional[dict]            # expected {ppn, mapped, from_tx, count} if the answer is OK
    inval: list = field(default_factory=list)   # [(ppn, txid, aborted)] in order
    map: list = field(default_factory=list)     # [(txid, lpn, ppn, last)]
    err_count: int = 0                # count of an error answer (TX_WRITE: entries in the tx)
    note: str = ""

    def expected(self, status: int, ok: int = 0) -> dict:
        """Expected response fields for `status`. Every error answers ppn = mapped = from_tx = 0;
        its count is 0, except a TX_WRITE's TX_FULL / INDEX_FULL (entries in the tx)."""
        if status == ok and self.ok_rsp is not None:
            return self.ok_rsp
        return {"ppn": 0, "mapped": 0, "from_tx": 0, "count": self.err_count}


class RemapModel:
    def __init__(self, p: dict):
        self.p = p
        self.OP = dict(p["ops"])
        self.ST = dict(p["status"])
        self.num_tx = p["NUM_TX"]
        self.n = p["TX_ENTRIES"]
        self.depth = p["MAP_DEPTH"]
        self.ways = p["HASH_WAYS"]
        self.ppn_mask = (1 << p["PPN_W"]) - 1
        self.reset()

    # ---- state ------------------------------------------------------------------------------
    def reset(self) -> None:
        self.l2p: dict[int, int] = {}                          # committed mapping
        self.tx: dict[int, list] = {t: [] for t in range(1, self.num_tx + 1)}  # append lists
        self.buckets: Counter = Counter()                      # bucket -> pairs of open txs in it
        self.seq = 0
        self.pair_seq: dict = {}                               # (tx, lpn) -> seq of its first write

    def latest(self, t: int, lpn: int) -> Optional[int]:
        for l, p in reversed(self.tx[t]):
            if l == lpn:
                return p
        return None

    def lookup(self, lpn: int) -> tuple[int, int]:
        """Committed mapping: (mapped, ppn); ppn = 0 when unmapped (README)."""
        return (1, self.l2p[lpn]) if lpn in self.l2p else (0, 0)

    def bucket_of(self, t: int, lpn: int) -> int:
        return bucket(self.p, t, lpn)

    def bucket_fill(self, t: int, lpn: int) -> int:
        """Pairs of open transactions in the bucket of (t, lpn)."""
        return self.buckets[self.bucket_of(t, lpn)]

    def bucket_occupants(self, t: int, lpn: int) -> list:
        """(tx, lpn, model seq of the TX_WRITE that created the pair) of every pair of an open tx
        in the bucket of (t, lpn) (for failure reports)."""
        bkt = self.bucket_of(t, lpn)
        return [(u, l, self.pair_seq.get((u, l))) for u, ents in self.tx.items()
                for l in dict.fromkeys(l for l, _ in ents) if self.bucket_of(u, l) == bkt]

    def _drop_pairs(self, t: int) -> None:
        for l in dict.fromkeys(l for l, _ in self.tx[t]):
            self.buckets[self.bucket_of(t, l)] -= 1
            self.pair_seq.pop((t, l), None)
        self.tx[t] = []

    # ---- classification ---------------------------------------------------------------------
    def is_tx_op(self, op: int) -> bool:
        return op in (self.OP["TX_WRITE"], self.OP["TX_LOOKUP"], self.OP["COMMIT"], self.OP["ABORT"])

    def has_lpn(self, op: int) -> bool:
        return op in (self.OP["MAP_WRITE"], self.OP["LOOKUP"], self.OP["TX_WRITE"],
                      self.OP["TX_LOOKUP"], self.OP["UNMAP"])

    def precheck(self, r: Req) -> Optional[int]:
        """Status of the request-only checks (BAD_OP, BAD_TXID, BAD_LPN), or None."""
        if r.op not in self.OP.values():
            return self.ST["BAD_OP"]
        if self.is_tx_op(r.op) and not (1 <= r.txid <= self.num_tx):
            return self.ST["BAD_TXID"]
        if self.has_lpn(r.op) and r.lpn >= self.depth:
            return self.ST["BAD_LPN"]
        return None

    # ---- one request ------------------------------------------------------------------------
    def step(self, r: Req, follow: Optional[int] = None) -> Step:
        """Apply request r (the next one the engine accepted). `follow`: the engine's status; when
        a TX_WRITE's OK / INDEX_FULL disagrees with the model, the model still reports its own
        status as the allowed one but then follows the engine's, so that one error does not
        cascade into every later check."""
        self.seq += 1
        OP, ST = self.OP, self.ST
        zero = {"ppn": 0, "mapped": 0, "from_tx": 0}
        err = self.precheck(r)
        if err is not None:
            return Step({err}, None, note="error: changes nothing")

        if r.op in (OP["MAP_WRITE"], OP["UNMAP"]):
            mapped, old = self.lookup(r.lpn)
            if r.op == OP["MAP_WRITE"]:
                self.l2p[r.lpn] = r.ppn & self.ppn_mask
            else:
                self.l2p.pop(r.lpn, None)
            return Step({ST["OK"]}, {"ppn": old, "mapped": mapped, "from_tx": 0, "count": 0})

        if r.op == OP["LOOKUP"]:
            mapped, ppn = self.lookup(r.lpn)
            return Step({ST["OK"]}, {"ppn": ppn, "mapped": mapped, "from_tx": 0, "count": 0})

        t = r.txid
        if r.op == OP["TX_LOOKUP"]:
            hit = self.latest(t, r.lpn)
            if hit is not None:
                return Step({ST["OK"]}, {"ppn": hit, "mapped": 1, "from_tx": 1, "count": 0})
            mapped, ppn = self.lookup(r.lpn)
            return Step({ST["OK"]}, {"ppn": ppn, "mapped": mapped, "from_tx": 0, "count": 0})

        if r.op == OP["TX_WRITE"]:
            cnt = len(self.tx[t])
            if cnt >= self.n:
                return Step({ST["TX_FULL"]}, None, err_count=cnt)
            new_pair = self.latest(t, r.lpn) is None
            strict = ST["OK"]
            if new_pair:                                 # new (tx, lpn) pair: needs a free way
                strict = ST["INDEX_FULL"] if self.bucket_fill(t, r.lpn) >= self.ways else ST["OK"]
                act = follow if follow in (ST["OK"], ST["INDEX_FULL"]) else strict
                if act == ST["INDEX_FULL"]:
                    return Step({strict}, None, err_count=cnt, note="INDEX_FULL")
                self.buckets[self.bucket_of(t, r.lpn)] += 1
                self.pair_seq[(t, r.lpn)] = self.seq
            self.tx[t].append((r.lpn, r.ppn & self.ppn_mask))
            return Step({strict}, dict(zero, count=len(self.tx[t])))

        if r.op in (OP["COMMIT"], OP["ABORT"]):
            ents = list(self.tx[t])
            if not ents:
                return Step({ST["TX_EMPTY"]}, None)
            self._drop_pairs(t)                          # its slots are free from here on
            if r.op == OP["ABORT"]:
                inval = [(p, t, 1) for _, p in ents]     # every PPN written, in append order
                return Step({ST["OK"]}, dict(zero, count=len(ents)), inval=inval)
            inval, mp = [], []
            for i, (lpn, p) in enumerate(ents):
                if lpn in self.l2p:
                    inval.append((self.l2p[lpn], t, 0))
                self.l2p[lpn] = p
                mp.append((t, lpn, p, int(i == len(ents) - 1)))
            return Step({ST["OK"]}, dict(zero, count=len(ents)), inval=inval, map=mp)

        raise AssertionError("unreachable")

    # ---- what a lookup may return --------------------------------------------------------------
    def lookup_view(self, lpn: int, txid: int = 0) -> dict:
        """The one answer a LOOKUP (txid=0) or TX_LOOKUP accepted now gives (linearisation:
        every COMMIT accepted earlier is entirely visible, none accepted later is)."""
        if txid:
            hit = self.latest(txid, lpn)
            if hit is not None:
                return {"mapped": 1, "ppn": hit, "from_tx": 1}
        mapped, ppn = self.lookup(lpn)
        return {"mapped": mapped, "ppn": ppn, "from_tx": 0}
