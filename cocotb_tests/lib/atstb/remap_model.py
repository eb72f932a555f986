"""Reference model of `ats_remap_engine`, written from its README (spinal/.../remap/README.md) only.

Plain Python: the committed map is a dict, each transaction an append list of (lpn, ppn). Requests
are applied one at a time in the order the engine accepted them (the README's linearisation rule:
"requests take effect in request order", a COMMIT at its place in the request stream), so every
response is fully determined, with one exception documented below (INDEX_FULL).

`RemapModel.step(req, observed_status)` applies one request and returns a `Step`: the allowed
statuses, the expected response fields (None = the README does not define the field, not checked),
and the m_inval / m_map beats the request must produce (COMMIT, ABORT only).

INDEX_FULL. The README defines it as "a TX_WRITE of a new (tx, lpn) pair whose index bucket has no
free way", with the bucket "XOR-fold of the LPN xor bit-reversed tx". Two things are not fixed by
the text, and the model keeps every reading open instead of guessing:
  * the exact tx term (txid or txid-1, reversed over TXID_W, log2(NUM_TX) or log2(HASH_BUCKETS)
    bits, then aligned/truncated/folded to log2(HASH_BUCKETS) bits): `hash_candidates()` lists
    them; each observed OK/INDEX_FULL removes the candidates that disagree, and the test fails when
    none is left (the engine then follows no reading of the README, or leaks/miscounts slots);
  * when the slots of a committed/aborted tx become free: CLEAR frees them over the N cycles after
    the APPLY, while other transactions' TX_WRITEs keep flowing. Until the checker knows CLEAR has
    ended (`retire_clears`), those pairs count as "maybe occupied": a TX_WRITE is then allowed to
    answer either OK or INDEX_FULL only if the bucket is full with them and not full without them.
When the status is ambiguous, the model follows the engine's answer (passed as observed_status).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional


# --------------------------------------------------------------------------------------------
# Hash readings
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


def hash_candidates(p: dict) -> dict[str, Callable[[int], int]]:
    """Every reading of "bit-reversed tx" (as a function txid -> bucket term), deduplicated over
    txid 1..NUM_TX. The bucket of (tx, lpn) is xor_fold(lpn, B) ^ term(tx), B = log2(HASH_BUCKETS)."""
    b = _clog2(p["HASH_BUCKETS"])
    mb = (1 << b) - 1
    cands: dict[str, Callable[[int], int]] = {}
    widths = sorted({p["TXID_W"], _clog2(p["NUM_TX"]), b})
    for base_name, base in (("txid", 0), ("txid-1", 1)):
        for w in widths:
            if w == 0:
                continue

            def rv(t, w=w, base=base):
                return _rev((t - base) & ((1 << w) - 1), w)

            if w <= b:
                cands[f"rev{w}({base_name})"] = lambda t, rv=rv: rv(t)
                cands[f"rev{w}({base_name})<<{b - w}"] = lambda t, rv=rv, s=b - w: rv(t) << s
            else:
                cands[f"rev{w}({base_name})&mask{b}"] = lambda t, rv=rv: rv(t) & mb
                cands[f"rev{w}({base_name})>>{w - b}"] = lambda t, rv=rv, s=w - b: rv(t) >> s
                cands[f"fold{b}(rev{w}({base_name}))"] = lambda t, rv=rv: xor_fold(rv(t), b)
    seen: dict[tuple, str] = {}
    out: dict[str, Callable[[int], int]] = {}
    for name, f in cands.items():
        key = tuple(f(t) & mb for t in range(1, p["NUM_TX"] + 1))
        if key not in seen:
            seen[key] = name
            out[name] = (lambda t, f=f: f(t) & mb)
    return out


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
    allowed: set                      # statuses the engine may answer
    ok_rsp: Optional[dict]            # expected {ppn, mapped, from_tx, count} if the answer is OK
    inval: list = field(default_factory=list)   # [(ppn, txid, aborted)] in order
    inval_unordered: bool = False     # ABORT: the README does not fix the order of its PPNs
    map: list = field(default_factory=list)     # [(txid, lpn, ppn, last)]
    clear: Optional["Clear"] = None   # the CLEAR this COMMIT/ABORT starts
    note: str = ""

    def expected(self, status: int, ok: int = 0) -> dict:
        """Expected response fields for `status` (None: not defined by the README). Every error
        answers ppn = mapped = from_tx = 0; its count is not defined."""
        if status == ok and self.ok_rsp is not None:
            return self.ok_rsp
        return {"ppn": 0, "mapped": 0, "from_tx": 0, "count": None}


@dataclass
class Clear:
    """Index slots of a committed/aborted tx that CLEAR is freeing."""
    txid: int
    pairs: set
    folds: Counter                    # XOR-fold of each pair's LPN -> number of pairs
    seq: int
    done_by: Optional[int] = None     # cycle by which CLEAR has certainly ended (None: unknown)


class RemapModel:
    def __init__(self, p: dict):
        self.p = p
        self.OP = dict(p["ops"])
        self.ST = dict(p["status"])
        self.num_tx = p["NUM_TX"]
        self.n = p["TX_ENTRIES"]
        self.depth = p["MAP_DEPTH"]
        self.ways = p["HASH_WAYS"]
        self.b = _clog2(p["HASH_BUCKETS"])
        self.ppn_mask = (1 << p["PPN_W"]) - 1
        self.reset()

    # ---- state ------------------------------------------------------------------------------
    def reset(self) -> None:
        self.l2p: dict[int, int] = {}                          # committed mapping
        self.tx: dict[int, list] = {t: [] for t in range(1, self.num_tx + 1)}  # append lists
        self.folds: dict[int, Counter] = {t: Counter() for t in self.tx}        # per tx: fold -> #pairs
        self.clears: list[Clear] = []                          # CLEARs possibly still running
        self.cands = hash_candidates(self.p)                   # surviving hash readings
        self.eliminated: dict[str, str] = {}                   # reading -> first contradiction
        self.seq = 0
        self.pair_seq: dict = {}                               # (tx, lpn) -> seq of its first write

    def tx_pairs(self, t: int) -> set:
        return {(t, lpn) for lpn, _ in self.tx[t]}

    def latest(self, t: int, lpn: int) -> Optional[int]:
        for l, p in reversed(self.tx[t]):
            if l == lpn:
                return p
        return None

    def lookup(self, lpn: int) -> tuple[int, int]:
        """Committed mapping: (mapped, ppn)."""
        return (1, self.l2p[lpn]) if lpn in self.l2p else (0, None)

    def retire_clears(self, before_cycle: int) -> None:
        """CLEARs known to have ended before `before_cycle` free their slots."""
        self.clears = [c for c in self.clears if c.done_by is None or c.done_by >= before_cycle]

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

    def index_status(self, t: int, lpn: int) -> dict[str, set]:
        """Per surviving hash reading: statuses allowed for a TX_WRITE of the new pair (t, lpn)."""
        maybe = [c for c in self.clears if c.txid != t]
        fold = xor_fold(lpn, self.b)
        out = {}
        for name, term in self.cands.items():
            bkt = fold ^ term(t)
            d = sum(fc[bkt ^ term(u)] for u, fc in self.folds.items() if fc)
            m = sum(c.folds[bkt ^ term(c.txid)] for c in maybe)
            if d >= self.ways:
                out[name] = {self.ST["INDEX_FULL"]}
            elif d + m < self.ways:
                out[name] = {self.ST["OK"]}
            else:
                out[name] = {self.ST["OK"], self.ST["INDEX_FULL"]}
        return out

    def bucket_of(self, name: str, t: int, lpn: int) -> int:
        return xor_fold(lpn, self.b) ^ self.cands[name](t)

    def bucket_occupants(self, name: str, t: int, lpn: int) -> list:
        """(tx, lpn, "open" | "clearing", model seq of the TX_WRITE that created the pair) of every
        pair in the bucket of (t, lpn) under hash reading `name` (for failure reports)."""
        term = self.cands[name]
        bkt = xor_fold(lpn, self.b) ^ term(t)
        out = []
        for u, ents in self.tx.items():
            for l in dict.fromkeys(l for l, _ in ents):
                if xor_fold(l, self.b) ^ term(u) == bkt:
                    out.append((u, l, "open", self.pair_seq.get((u, l))))
        for c in self.clears:
            for (u, l) in c.pairs:
                if xor_fold(l, self.b) ^ term(u) == bkt:
                    out.append((u, l, f"clearing(until<{c.done_by})", None))
        return out

    # ---- one request ------------------------------------------------------------------------
    def step(self, r: Req, observed_status: Optional[int] = None) -> Step:
        """Apply request r (the next one the engine accepted). observed_status resolves the
        INDEX_FULL ambiguity (see module doc); pass the engine's answer."""
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
            return Step({ST["OK"]}, {"ppn": old, "mapped": mapped, "from_tx": 0, "count": None})

        if r.op == OP["LOOKUP"]:
            mapped, ppn = self.lookup(r.lpn)
            return Step({ST["OK"]}, {"ppn": ppn, "mapped": mapped, "from_tx": 0, "count": None})

        # tx ops: the tx's previous CLEARs have ended (ops on a committing txid wait for it).
        self.clears = [c for c in self.clears if c.txid != r.txid]
        t = r.txid

        if r.op == OP["TX_LOOKUP"]:
            hit = self.latest(t, r.lpn)
            if hit is not None:
                return Step({ST["OK"]}, {"ppn": hit, "mapped": 1, "from_tx": 1, "count": None})
            mapped, ppn = self.lookup(r.lpn)
            return Step({ST["OK"]}, {"ppn": ppn, "mapped": mapped, "from_tx": 0, "count": None})

        if r.op == OP["TX_WRITE"]:
            if len(self.tx[t]) >= self.n:
                return Step({ST["TX_FULL"]}, None)
            allowed = {ST["OK"]}
            new_pair = self.latest(t, r.lpn) is None
            if new_pair:                                 # new (tx, lpn) pair: needs a slot
                per = self.index_status(t, r.lpn)
                allowed = set().union(*per.values()) if per else {ST["INDEX_FULL"]}
                if observed_status is not None:
                    keep = {n for n, s in per.items() if observed_status in s}
                    if keep:                             # drop the readings the answer contradicts
                        for n in list(self.cands):
                            if n not in keep:
                                self.eliminated[n] = (f"model seq {self.seq}: TX_WRITE tx={t} lpn={r.lpn} "
                                                      f"answered {observed_status}, reading allows {sorted(per[n])}")
                                del self.cands[n]
                    # follow the engine's OK/INDEX_FULL even when it is wrong (reported by the
                    # caller), so that one error does not cascade into every later check
                    status = observed_status if observed_status in (ST["OK"], ST["INDEX_FULL"]) \
                        else min(allowed)
                else:
                    status = ST["OK"] if ST["OK"] in allowed else ST["INDEX_FULL"]
                if status == ST["INDEX_FULL"]:
                    return Step(allowed, None, note="INDEX_FULL")
            self.tx[t].append((r.lpn, r.ppn & self.ppn_mask))
            if new_pair:
                self.folds[t][xor_fold(r.lpn, self.b)] += 1
                self.pair_seq[(t, r.lpn)] = self.seq
            return Step(allowed, dict(zero, count=len(self.tx[t])))

        if r.op in (OP["COMMIT"], OP["ABORT"]):
            ents = self.tx[t]
            if not ents:
                return Step({ST["TX_EMPTY"]}, None)
            clear = Clear(t, self.tx_pairs(t), self.folds[t], self.seq)
            self.clears.append(clear)
            self.tx[t] = []
            self.folds[t] = Counter()
            if r.op == OP["ABORT"]:
                inval = [(p, t, 1) for _, p in ents]
                return Step({ST["OK"]}, dict(zero, count=len(ents)), inval=inval,
                            inval_unordered=True, clear=clear)
            inval, mp = [], []
            for i, (lpn, p) in enumerate(ents):
                if lpn in self.l2p:
                    inval.append((self.l2p[lpn], t, 0))
                self.l2p[lpn] = p
                mp.append((t, lpn, p, int(i == len(ents) - 1)))
            return Step({ST["OK"]}, dict(zero, count=len(ents)), inval=inval, map=mp, clear=clear)

        raise AssertionError("unreachable")

    # ---- what a lookup may return --------------------------------------------------------------
    def lookup_view(self, lpn: int, txid: int = 0) -> dict:
        """The one answer a LOOKUP (txid=0) or TX_LOOKUP accepted now may give (linearisation:
        every COMMIT accepted earlier is entirely visible, none accepted later is)."""
        if txid:
            hit = self.latest(txid, lpn)
            if hit is not None:
                return {"mapped": 1, "ppn": hit, "from_tx": 1}
        mapped, ppn = self.lookup(lpn)
        return {"mapped": mapped, "ppn": ppn, "from_tx": 0}
