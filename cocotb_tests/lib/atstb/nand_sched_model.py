"""Reference model of the NAND scheduler (rtl/nand/README_sched.md), plain Python.

Written from the README's rules, not from the RTL: per die a list of queued requests in arrival
order; the die's front is its oldest HEAD request if it has one, otherwise its oldest request; a
channel takes, among the fronts of its idle dies, the HEAD ones first, then priority reads
(`prio_read`, or any read while `reads_first` is high), then the oldest. A die is busy from the
dispatch of a command until that command's completion is taken (forwarded to m_ncpl), or until an
earlier *release* of it is taken (a channel beat with `rel` set: the die is free, nothing is
forwarded, and the tag is *released*: its later completion is forwarded without a die).

`check_trace` replays a cycle-by-cycle trace of every port (values as sampled at each rising edge,
i.e. as the RTL sees them) against the model with the README's timing contract (edges are
counted from the first edge after reset, edge 0):
  - a request accepted at edge e takes part in selections from edge e+7 on (REQ_VISIBLE);
  - s_nreq_ready = (entries in use < depth) and no BAD_REQ waiting, where entries in use =
    queued requests + requests selected at the two previous edges (ENTRY_HOLD) + bad requests
    accepted at the three previous edges (BAD_HOLD); a bad request accepted at e waits as BAD_REQ
    from e+2 (BAD_DELAY; in arrival order behind earlier ones) and the first waiting one leaves
    at an edge where the m_ncpl register is free;
  - a completion accepted at edge e waits in a one-deep buffer (s_ccpl_ready = buffer empty or
    taken at this edge), matched against the in-flight tags at e (after a take at e); it is taken
    at the first edge t > e where the m_ncpl register is free and no BAD_REQ waits: it then frees
    its die for selections from t+4 on (DIE_FREE) and goes to m_ncpl, or, unmatched, is dropped
    with err_spurious;
  - a release (rel = 1) is matched and taken the same way: matched, it frees its die (DIE_FREE),
    goes nowhere, and its tag becomes released from t on; unmatched, it is dropped with
    err_spurious. A completion (rel = 0) that matches no die but whose tag is released at its
    acceptance edge e (after a take at e) goes to m_ncpl when taken and unreleases the tag;
    otherwise it is spurious;
  - channel c can select only at its slot edges, e = SEL_PHASE + c + k * period with
    period = max(num_chan, MIN_PERIOD), and does when its output register is free at e (valid
    low, or ready high at e); the class of a read uses `reads_first` as sampled at edge e-2
    (RF_DELAY);
  - the command selected at edge e appears on m_ccmd[c] after edge e+2 (CMD_DELAY, sampled at
    e+3);
  - a selection at edge e makes the die busy for every later selection; its tag can be matched by
    a completion from edge e+3 on (TAG_MATCH; an earlier completion with that tag is spurious).
Arrival order is exact in the README's contract as long as two requests compared for a
channel (fronts of two idle dies) arrived fewer than 2^(STAMP_W-1) good requests apart (the RTL
compares STAMP_W-bit arrival stamps modulo 2^STAMP_W). `check_trace(stamp_w=...)` reports a
trace that leaves this bound as an error of the test itself (the contract does not define the
order then), and records the widest gap seen as coverage `stamp_max_gap`.
and checks, exactly: every m_ccmd beat (payload and timing), s_nreq_ready, s_ccpl_ready, every
m_ncpl beat, err_spurious. It returns a list of error strings (empty = pass) and coverage counts.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

READ, PROGRAM, ERASE = 0, 1, 2
ST_BAD_REQ = 4
# timing constants of the contract (README_sched.md, "Timing"), in edges
REQ_VISIBLE = 7   # a request accepted at edge e can be selected from edge e+7 on
DIE_FREE = 4      # a die whose completion was taken at edge t can be selected from t+4 on
TAG_MATCH = 3     # a command selected at edge e can be matched by a completion from e+3 on
CMD_DELAY = 2     # a command selected at edge e is loaded into m_ccmd at edge e+2
RF_DELAY = 2      # a selection at edge e classes reads with reads_first sampled at edge e-2
ENTRY_HOLD = 2    # a request selected at edge e still holds its entry for ready at e+1, e+2
BAD_HOLD = 3      # a bad request accepted at edge e holds an entry for ready at e+1..e+3
BAD_DELAY = 2     # a bad request accepted at edge e joins the BAD_REQ queue at edge e+2
SEL_PHASE = 3     # channel c selects only at edges SEL_PHASE + c + k * period
MIN_PERIOD = 6    # period = max(num_chan, MIN_PERIOD)
CCMD_FIELDS = ("tag", "op", "way", "block", "page", "slot")


@dataclass
class Req:
    seq: int          # arrival order
    edge: int         # edge it was accepted
    tag: int
    op: int
    chan: int
    way: int
    block: int
    page: int
    head: int
    prio_read: int
    slot: int


@dataclass
class Die:
    queue: list = field(default_factory=list)   # queued Req, arrival order
    inflight: Optional[Req] = None              # dispatched, completion not yet accepted
    pick_edge: int = -10                        # edge the in-flight request was selected
    free_edge: int = -10                        # edge its last completion was accepted


class NandSchedModel:
    """Dispatch rules. `depth`: table entries (queued requests)."""

    def __init__(self, num_chan: int, num_ways: int, depth: int, stamp_w: int = 16):
        self.num_chan, self.num_ways, self.depth = num_chan, num_ways, depth
        self.stamp_bound = 1 << (stamp_w - 1)     # arrival order defined within this gap
        self.bound_violations = 0
        self.dies = {(c, w): Die() for c in range(num_chan) for w in range(num_ways)}
        self.seq = 0
        self.outstanding: dict[int, Req] = {}     # tag -> request (accepted, m_ncpl not yet taken)
        self.released: set[int] = set()           # tags whose die was released, completion not taken
        self.cov = Counter()

    # -- request classification -------------------------------------------------------------
    def bad_reason(self, tag: int, op: int, chan: int, way: int) -> Optional[str]:
        if tag in self.outstanding:
            return "dup_tag"
        if op not in (READ, PROGRAM, ERASE):
            return "bad_op"
        if chan >= self.num_chan:
            return "bad_chan"
        if way >= self.num_ways:
            return "bad_way"
        return None

    def queued(self) -> int:
        return sum(len(d.queue) for d in self.dies.values())

    def accept(self, edge: int, f: dict) -> Req:
        r = Req(self.seq, edge, f["tag"], f["op"], f["chan"], f["way"], f["block"], f["page"],
                f["head"], f["prio_read"], f["slot"])
        self.seq += 1
        self.dies[(r.chan, r.way)].queue.append(r)
        self.outstanding[r.tag] = r
        return r

    # -- dispatch rules ---------------------------------------------------------------------
    def front(self, die: Die, edge: int) -> Optional[Req]:
        """The die's next request among those visible at `edge`: oldest HEAD, else oldest."""
        vis = [r for r in die.queue if r.edge <= edge - REQ_VISIBLE]
        heads = [r for r in vis if r.head]
        return heads[0] if heads else (vis[0] if vis else None)

    def idle(self, die: Die, edge: int) -> bool:
        return die.inflight is None and die.free_edge <= edge - DIE_FREE

    def choose(self, chan: int, edge: int, reads_first: int) -> Optional[Req]:
        cands = []
        for w in range(self.num_ways):
            d = self.dies[(chan, w)]
            if self.idle(d, edge):
                r = self.front(d, edge)
                if r is not None:
                    cands.append(r)
        if not cands:
            return None

        def key(r):
            cls = 2 if r.head else (1 if r.op == READ and (r.prio_read or reads_first) else 0)
            return (-cls, r.seq)
        best = min(cands, key=key)
        if len(cands) > 1:
            gap = max(r.seq for r in cands) - min(r.seq for r in cands)
            self.cov["stamp_max_gap"] = max(self.cov["stamp_max_gap"], gap)
            if gap >= self.stamp_bound:
                self.bound_violations += 1
        # coverage: what the rules made happen
        older = [r for w in range(self.num_ways) for r in self.dies[(chan, w)].queue
                 if r.seq < best.seq and r.edge <= edge - REQ_VISIBLE]
        if best.head and any(r.way == best.way for r in older):
            self.cov["head_overtakes_same_die"] += 1
        if best.head and any(r.way != best.way for r in older):
            self.cov["head_overtakes_other_die"] += 1
        if not best.head and best.op == READ and any(r.op != READ and r.seq < best.seq for r in cands):
            self.cov["read_overtakes_program_erase" + ("_rf" if (reads_first and not best.prio_read) else "")] += 1
        if len(cands) > 1:
            self.cov["choice_among_%d" % min(len(cands), 4)] += 1
        return best

    def dispatch(self, r: Req, edge: int) -> None:
        d = self.dies[(r.chan, r.way)]
        assert d.inflight is None
        d.queue.remove(r)
        d.inflight = r
        d.pick_edge = edge

    def match(self, tag: int, edge: int) -> Optional[tuple]:
        """The die a completion accepted on s_ccpl at `edge` belongs to (None: spurious)."""
        for k, d in self.dies.items():
            if d.inflight is not None and d.inflight.tag == tag and edge >= d.pick_edge + TAG_MATCH:
                return k
        return None

    def complete(self, die: tuple, edge: int) -> None:
        """The completion of `die`'s command is taken (forwarded) at `edge`: the die is free."""
        d = self.dies[die]
        d.inflight = None
        d.free_edge = edge


def check_trace(trace: list[dict], num_chan: int, num_ways: int, depth: int,
                max_errors: int = 10, stamp_w: int = 16) -> tuple[list[str], Counter, list[dict]]:
    """Replay `trace` (one dict per rising edge, see the test's monitor) against the model.
    Returns (errors, coverage, log of requests with their outcome)."""
    m = NandSchedModel(num_chan, num_ways, depth, stamp_w)
    errs: list[str] = []
    cov = m.cov
    # edge 0 is the first edge after reset: leading edges with rst high are not part of the trace
    start = 0
    while start < len(trace) and trace[start].get("rst", 0):
        start += 1
    trace = trace[start:]
    if any(s.get("rst", 0) for s in trace):
        errs.append("trace: reset asserted inside the checked trace (not supported)")
    period = max(num_chan, MIN_PERIOD)
    exp_cmd = [None] * num_chan          # expected m_ccmd register per channel (dict or None)
    pend = [[] for _ in range(num_chan)] # per channel: (load edge, request) selected, not yet out
    pick_edges: list[int] = []           # edges of selections (one entry per selected request)
    bad_edges: list[int] = []            # edges bad requests were accepted
    err_pending: list[int] = []          # tags of BAD_REQ completions waiting for m_ncpl, in order
    bad_recent: list[tuple] = []         # (edge, tag) of bad requests not yet waiting as BAD_REQ
    c1 = None                            # channel beat waiting: (fields, matched die, rel, released)
    exp_out = None                       # expected m_ncpl register (tuple) or None
    exp_out_real = False                 # the expected m_ncpl beat comes from a channel
    exp_spur = 0
    log: list[dict] = []

    def err(msg):
        if len(errs) < max_errors:
            errs.append(msg)

    for e, s in enumerate(trace):
        # ---- compare the registered outputs with what the model expects after edge e-1
        for c in range(num_chan):
            got = s["ccmd"][c]
            exp = exp_cmd[c]
            if (got is None) != (exp is None) or (got is not None and got != exp):
                err(f"edge {e} m_ccmd[{c}]: got {got}, expected {exp}")
                exp_cmd[c] = got          # resynchronise so that one error is not reported forever
        got_out = s["ncpl"]
        if got_out != exp_out:
            err(f"edge {e} m_ncpl: got {got_out}, expected {exp_out}")
        if s["spur"] != exp_spur:
            err(f"edge {e} err_spurious: got {s['spur']}, expected {exp_spur}")
        # entries still held by recent selections and recent bad requests
        held = sum(1 for p in pick_edges if p >= e - ENTRY_HOLD)
        bheld = sum(1 for b in bad_edges if b >= e - BAD_HOLD)
        exp_nreq_ready = int(m.queued() + held + bheld < depth and not err_pending)
        if s["nreq_ready"] != exp_nreq_ready:
            err(f"edge {e} s_nreq_ready: got {s['nreq_ready']}, expected {exp_nreq_ready} "
                f"(queued {m.queued()}, held {held}+{bheld}, BAD_REQ waiting {len(err_pending)})")
        out_free = got_out is None or s["ncpl_ready"]
        take = c1 is not None and out_free and not err_pending
        exp_ccpl_ready = int(c1 is None or take)
        if s["ccpl_ready"] != exp_ccpl_ready:
            err(f"edge {e} s_ccpl_ready: got {s['ccpl_ready']}, expected {exp_ccpl_ready}")
        if m.queued() + held + bheld >= depth:
            cov["table_full_cycles"] += 1
        pick_edges = [p for p in pick_edges if p >= e - ENTRY_HOLD]
        bad_edges = [b for b in bad_edges if b >= e - BAD_HOLD]

        # ---- the m_ccmd register at edge e: taken, and/or loaded with an earlier selection
        rf_sel = trace[max(e - RF_DELAY, 0)]["reads_first"]
        picks = []
        for c in range(num_chan):
            got = s["ccmd"][c]
            out_free_c = got is None or s["ccmd_ready"][c]
            if out_free_c:
                exp_cmd[c] = None
            if pend[c] and pend[c][0][0] == e:
                r = pend[c].pop(0)[1]
                if exp_cmd[c] is not None:
                    err(f"edge {e} channel {c}: command register loaded while full (model)")
                exp_cmd[c] = {"tag": r.tag, "op": r.op, "way": r.way,
                              "block": r.block, "page": r.page, "slot": r.slot}
            # ---- selection at edge e (state before the edge), only at the channel's slot
            if out_free_c and e >= SEL_PHASE and (e - SEL_PHASE - c) % period == 0:
                r = m.choose(c, e, rf_sel)
                if r is not None:
                    picks.append(r)
                    pend[c].append((e + CMD_DELAY, r))
        if len(picks) > 1:
            cov["multi_channel_dispatch"] += 1
        for r in picks:
            m.dispatch(r, e)
            pick_edges.append(e)
            cov["dispatch"] += 1

        # ---- completion accepted on s_ccpl at e, and the m_ncpl register
        ncpl_fire = got_out is not None and s["ncpl_ready"]
        fired_real = exp_out_real
        new_out = exp_out if (got_out is not None and not s["ncpl_ready"]) else None
        new_real = exp_out_real if new_out is not None else False
        exp_spur = 0
        fwd = False
        if take:                          # the waiting beat frees its die, or is dropped
            fields, die, rel, was_rel = c1
            c1 = None
            if die is not None:
                m.complete(die, e)
                if rel:
                    m.released.add(fields[0])
                    cov["release"] += 1
                else:
                    fwd = True
            elif not rel and was_rel:
                m.released.discard(fields[0])
                cov["released_completion"] += 1
                fwd = True
            else:
                exp_spur = 1
                cov["spurious_" + ("release" if rel else "completion")] += 1
        if out_free:
            if err_pending:
                new_out, new_real = (err_pending.pop(0), ST_BAD_REQ, 0), False
            elif fwd:
                new_out, new_real = fields, True
        exp_out, exp_out_real = new_out, new_real
        if s["ccpl"] is not None and s["ccpl_ready"]:      # matched against the dies after `take`
            f = tuple(s["ccpl"][:3])
            rel = bool(s["ccpl"][3]) if len(s["ccpl"]) > 3 else False
            c1 = (f, m.match(f[0], e), rel, f[0] in m.released)
        # a bad request accepted at e-BAD_DELAY joins the waiting BAD_REQ completions at e
        while bad_recent and bad_recent[0][0] == e - BAD_DELAY:
            err_pending.append(bad_recent.pop(0)[1])
            if len(err_pending) > 1:
                cov["bad_req_queue_%d" % len(err_pending)] += 1

        # ---- request accepted on s_nreq at e (a tag whose completion is taken at e is still
        # outstanding at e)
        if s["nreq"] is not None and s["nreq_ready"]:
            f = s["nreq"]
            why = m.bad_reason(f["tag"], f["op"], f["chan"], f["way"])
            log.append({"edge": e, **f, "bad": why})
            if why is not None:
                cov["bad_" + why] += 1
                bad_recent.append((e, f["tag"]))
                bad_edges.append(e)
            else:
                r = m.accept(e, f)
                cov["accept_" + ("head" if r.head else ("read" if r.op == READ else "prog_erase"))] += 1
        # ---- m_ncpl handshake at e: a real completion ends its tag's outstanding time
        if ncpl_fire:
            cov["ncpl_" + ("real" if fired_real else "bad_req")] += 1
            if fired_real:
                m.outstanding.pop(got_out[0], None)

    # at the end of a trace that drained, nothing may be left behind
    left = [(k, [r.tag for r in d.queue], d.inflight.tag if d.inflight else None)
            for k, d in m.dies.items() if d.queue or d.inflight]
    if left:
        err(f"end of trace: requests left (die, queued tags, in-flight tag): {left[:8]}")
    if m.outstanding:
        err(f"end of trace: tags still outstanding: {sorted(m.outstanding)[:16]}")
    if m.released:
        err(f"end of trace: released tags without completion: {sorted(m.released)[:16]}")
    if m.bound_violations:
        err(f"test outside the contract: {m.bound_violations} selections compared requests "
            f"{m.stamp_bound} or more arrivals apart (STAMP_W = {stamp_w})")
    return errs, cov, log
