"""Reference model of the ordered command queue (rtl/cmdq/README.md), plain Python.

Written from the README's rules, not from the RTL. A command is validated (first failing rule gives
the reason), then either completed by the queue with an error or kept until its unit reports it done.
Ordering rules (README "Ordering"): a kept command x waits for an earlier kept command y to be *done*
when x is not HEAD and
  - x is ORDERED, or y is ORDERED;
  - both have LBA ranges (READ, WRITE, DIFFWRITE, TRIM) that overlap and one of them writes
    (WRITE, DIFFWRITE, TRIM);
  - x is FLUSH/RFLUSH and y writes;
  - both have the same txid != 0 and one of them is TX_BEGIN/TX_COMMIT/TX_ABORT.
Nothing is dispatched while an ORDERED command is in service; an ORDERED command is dispatched only
when nothing is in service. Among the dispatchable: HEAD first, then higher prio, then reads, then
the oldest.

`check_trace` replays a trace of every port, sampled at each rising edge (pre-edge values, i.e. what
the RTL sees at that edge), against the README's timing contract:
  - a command accepted at edge a is validated at edge a+3 (duplicate tag: against the commands in
    the table after edge a, plus the commands inserted at edges a+1 and a+2) and enters the table,
    or the rejection queue, at edge a+3;
  - the eligibility used by the pick at edge p is that of the state after edge p-2, re-checked
    against the state after edge p-1 (still queued, no ORDERED in service, an ORDERED candidate only
    while nothing is in service);
  - dispatch is a pipeline of three registers, pick -> select -> m_disp; select and m_disp load
    when empty or when they move on at that edge (m_disp: when accepted); a pick needs an empty
    pick register and a select register that is empty or moving on, so picks are at least two
    cycles apart; a command is "in service" from its pick edge;
  - a done accepted at edge d matches a command accepted on m_disp before d and not already freed
    at d; the match frees it at d+1 (its dependants may be picked from edge d+3 on); no match:
    err_spurious is high after edge d+1;
  - an accepted done waits in a one-entry stage until the done buffer is empty or leaving, then
    moves to it (a done without a match is dropped there); s_done_ready = stage empty or moving;
  - the m_cpl register takes the oldest queued rejection or the buffered done, alternating when
    both wait (after a rejection the done goes first);
  - s_cmd_ready = (table entries + commands in stages 1 and 2 + queued rejections) < DEPTH, where
    the count (like occupancy) sees a free one edge late.
Every output is compared exactly. Returns (errors, coverage Counter, list of dispatched descriptors).
"""
from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

READ, WRITE, DIFFWRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, TRIM, IDENTIFY, GET_LOG, FEATURE = range(12)
OP_NAMES = ["READ", "WRITE", "DIFFWRITE", "TX_BEGIN", "TX_COMMIT", "TX_ABORT", "FLUSH", "RFLUSH",
            "TRIM", "IDENTIFY", "GET_LOG", "FEATURE"]
SIMPLE, ORDERED, HEAD = 0, 1, 2
FUA, BARRIER, COMMIT = 1, 2, 4
ST_OK, ST_BAD_OP, ST_BAD_TXID, ST_BAD_LBA, ST_BAD_FIELD = 0x00, 0x01, 0x02, 0x03, 0x07
# rejection reasons (result = 0xCE000000 | reason)
R_BAD_OP, R_RSVD, R_FLAG, R_TXID_RANGE, R_TXID_NEEDED, R_LBA, R_DIFF, R_RFLUSH, R_DUP_TAG = range(1, 10)
REASON_STATUS = {R_BAD_OP: ST_BAD_OP, R_RSVD: ST_BAD_FIELD, R_FLAG: ST_BAD_FIELD,
                 R_TXID_RANGE: ST_BAD_TXID, R_TXID_NEEDED: ST_BAD_TXID, R_LBA: ST_BAD_LBA,
                 R_DIFF: ST_BAD_FIELD, R_RFLUSH: ST_BAD_FIELD, R_DUP_TAG: ST_BAD_FIELD}
REJ_MARK = 0xCE000000
CMD_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"]
DISP_FIELDS = CMD_FIELDS + ["epoch"]
RANGE_OPS = {READ, WRITE, DIFFWRITE, TRIM}
WRITE_OPS = {WRITE, DIFFWRITE, TRIM}
TX_OPS = {TX_BEGIN, TX_COMMIT, TX_ABORT}


def tx_end(c) -> bool:
    """A transaction op for the same-transaction rule: TX_BEGIN/COMMIT/ABORT, or a WRITE that
    carries the COMMIT flag (it commits the tx: it must follow the tx's earlier writes)."""
    return c["op"] in TX_OPS or (c["op"] == WRITE and bool(c["flags"] & COMMIT))
FLUSH_OPS = {FLUSH, RFLUSH}


def reject_reason(c: dict, num_lba: int, num_tx: int, tag_live: bool) -> int:
    """0 if the descriptor is accepted, else the first failing rule (README "Validation")."""
    op, fl = c["op"], c["flags"]
    if op > FEATURE:
        return R_BAD_OP
    if c["attr"] == 3 or fl & 8:
        return R_RSVD
    allowed = {WRITE: FUA | BARRIER | COMMIT, DIFFWRITE: FUA}.get(op, 0)
    if fl & ~allowed & 7:
        return R_FLAG
    if c["txid"] > num_tx:
        return R_TXID_RANGE
    if c["txid"] == 0 and (op in TX_OPS or op == DIFFWRITE or (op == WRITE and fl & COMMIT)):
        return R_TXID_NEEDED
    if op in RANGE_OPS and c["lba"] + c["nlb"] >= num_lba:
        return R_LBA
    if op == DIFFWRITE:
        off, length = c["aux"] & 0xFFFF, c["aux"] >> 16
        if length == 0 or off + length > 4096:
            return R_DIFF
    if op == RFLUSH and c["nlb"] > 7:
        return R_RFLUSH
    if tag_live:
        return R_DUP_TAG
    return 0


def must_wait(x: dict, y: dict, ex: int | None = None, ey: int | None = None) -> bool:
    """Does the later command x (epoch ex) wait until the earlier command y (epoch ey) is done?
    Epoch order (architecture.md section 9): a write never goes before an earlier write of a
    lower epoch, whatever its attribute (HEAD included)."""
    if ex is not None and ey is not None and x["op"] in WRITE_OPS and y["op"] in WRITE_OPS and ey < ex:
        return True
    if x["attr"] == HEAD:
        return False
    if x["attr"] == ORDERED or y["attr"] == ORDERED:
        return True
    if x["op"] in RANGE_OPS and y["op"] in RANGE_OPS and (x["op"] in WRITE_OPS or y["op"] in WRITE_OPS):
        if x["lba"] <= y["lba"] + y["nlb"] and y["lba"] <= x["lba"] + x["nlb"]:
            return True
    if x["op"] in FLUSH_OPS and y["op"] in WRITE_OPS:
        return True
    if x["txid"] != 0 and x["txid"] == y["txid"] and (tx_end(x) or tx_end(y)):
        return True
    return False


def pick_key(c: dict) -> int:
    return 15 if c["attr"] == HEAD else c["prio"] * 2 + (1 if c["op"] == READ else 0)


@dataclass
class Ent:
    seq: int
    desc: dict
    epoch: int
    state: str = "q"                       # q queued, p picked (in service), s accepted on m_disp
    waits: set = field(default_factory=set)


class CmdqModel:
    def __init__(self, depth: int, num_lba: int, num_tx: int):
        self.depth, self.num_lba, self.num_tx = depth, num_lba, num_tx
        self.live: dict[int, Ent] = {}
        self.seq = 0
        self.s1 = None
        self.s2 = None
        self.s3 = None
        self.pick = None
        self.sel = None
        self.out = None
        self.elig_prev: set[int] = set()
        self.dbuf = None
        self.dst = None                        # done stage: [done fields, matched]
        self.dst_new = False                   # the done in the stage was accepted at the last edge
        self.freed_next = None                 # entry matched by the done accepted at the last edge
        self.freed_last = False                # an entry was freed at the last edge (counters lag)
        self.rejq: deque = deque()
        self.cpl = None
        self.turn = 0
        self.res = 0
        self.epoch = 0
        self.spur = False
        self.tags_hist: deque = deque([set(), set()], maxlen=2)   # tags in the table after e-3, e-2
        self.ins_hist: deque = deque([None, None], maxlen=2)      # tags inserted at e-2, e-1
        self.cov = Counter()
        self.dispatched: list[dict] = []
        self.errors: list[str] = []

    # -- state predicates ------------------------------------------------------------------
    def in_service(self):
        return [e for e in self.live.values() if e.state != "q"]

    def eligible(self) -> set[int]:
        svc = self.in_service()
        ord_busy = any(e.desc["attr"] == ORDERED for e in svc)
        if ord_busy:
            return set()
        out = set()
        for e in self.live.values():
            if e.state != "q":
                continue
            a = e.desc["attr"]
            if not e.waits and (a == HEAD or a != ORDERED or not svc):
                out.add(e.seq)
        return out

    # -- one edge ---------------------------------------------------------------------------
    def step(self, e: int, s: dict) -> None:
        err = self.errors

        def chk(cond, msg):
            if not cond:
                err.append(f"edge {e}: {msg}")

        # outputs as sampled at edge e reflect the state after edge e-1
        chk(s["cmd_ready"] == int(self.res < self.depth),
            f"s_cmd_ready {s['cmd_ready']} expected {int(self.res < self.depth)} (reserved {self.res})")
        exp_disp = None if self.out is None else dict(self.live[self.out].desc, epoch=self.live[self.out].epoch)
        chk(s["disp"] == exp_disp, f"m_disp {s['disp']} expected {exp_disp}")
        chk(s["cpl"] == self.cpl, f"m_cpl {s['cpl']} expected {self.cpl}")
        chk(s["epoch"] == self.epoch & 0xFFFF, f"epoch {s['epoch']} expected {self.epoch & 0xFFFF}")
        exp_occ = len(self.live) + int(self.freed_last)
        chk(s["occ"] == exp_occ, f"occupancy {s['occ']} expected {exp_occ}")
        chk(s["spur"] == int(self.spur), f"err_spurious {s['spur']} expected {int(self.spur)}")
        if s["cmd"] is not None and not s["cmd_ready"]:
            self.cov["cmd_backpressured"] += 1

        out_ld = self.out is None or bool(s["disp_ready"])
        sel_ld = self.sel is None or out_ld
        # a pick needs an empty pick register and a select register empty or moving on: at most
        # one command in pick + select (so a picked command always moves on at the next edge)
        pick_ld = self.pick is None and sel_ld
        cpl_ld = self.cpl is None or bool(s["cpl_ready"])
        take_rej = cpl_ld and bool(self.rejq) and (self.dbuf is None or self.turn == 0)
        take_done = cpl_ld and self.dbuf is not None and not take_rej
        dst_go = self.dbuf is None or take_done
        exp_dr = int(self.dst is None or dst_go)
        chk(s["done_ready"] == exp_dr, f"s_done_ready {s['done_ready']} expected {exp_dr}")

        elig_now = self.eligible()
        svc = self.in_service()
        ord_busy = any(x.desc["attr"] == ORDERED for x in svc)
        cand = [self.live[x] for x in self.elig_prev
                if x in self.live and self.live[x].state == "q" and not ord_busy
                and not (self.live[x].desc["attr"] == ORDERED and svc)]
        if len(self.live) and any(self.live[x].state == "q" for x in elig_now) and not cand:
            self.cov["pick_latency_bubble"] += 1

        # done: the match of the done accepted at e-1 frees its entry at e
        freed = self.freed_next
        spur_next = self.dst_new and not self.dst[1]
        new_dst = None
        self.freed_next = None
        if s["done"] is not None and s["done_ready"]:
            tag = s["done"][0]
            hits = [x for x in self.live.values()
                    if x.state == "s" and x.desc["tag"] == tag and x.seq != freed]
            if hits:
                self.freed_next = hits[0].seq
            else:
                self.cov["spurious"] += 1
                if freed is not None and self.live[freed].desc["tag"] == tag:
                    self.cov["spurious_double"] += 1       # the entry is freed at this very edge
                if any(x.desc["tag"] == tag for x in self.live.values() if x.seq != freed):
                    # a command with that tag is in the table but not accepted on m_disp yet
                    self.cov["spurious_live_tag"] += 1
            new_dst = [s["done"], bool(hits)]

        tags_now = {x.desc["tag"] for x in self.live.values()}     # table after edge e-1
        # stage 3: validate (duplicate tag against the table after e-3 plus the inserts at e-2
        # and e-1), then insert or reject at e
        r = 0
        if self.s3 is not None:
            c = self.s3
            live_tag = c["tag"] in self.tags_hist[0] or c["tag"] in self.ins_hist
            r = reject_reason(c, self.num_lba, self.num_tx, live_tag)
            if r:
                self.rejq.append((c["tag"], r))
                self.cov[f"reject_{r}"] += 1
            else:
                waits = {x.seq for x in self.live.values()
                         if x.seq != freed and must_wait(c, x.desc, self.epoch, x.epoch)}
                ent = Ent(self.seq, dict(c), self.epoch, waits=waits)
                self.seq += 1
                self.live[ent.seq] = ent
                if c["op"] == WRITE and c["flags"] & BARRIER:
                    self.epoch += 1
                    self.cov["barrier"] += 1
                self.cov["accepted"] += 1
                if len(self.live) == self.depth:
                    self.cov["table_full"] += 1

        ins_now = None
        if self.s3 is not None and not r:
            ins_now = self.s3["tag"]
        # dispatch pipeline
        if self.out is not None and s["disp_ready"]:
            ent = self.live[self.out]
            ent.state = "s"
            self.dispatched.append(dict(ent.desc, epoch=ent.epoch))
            self.cov[f"disp_attr{ent.desc['attr']}"] += 1
            self.cov[f"disp_op{ent.desc['op']}"] += 1
            if any(x.seq < ent.seq and x.state == "q" for x in self.live.values()):
                self.cov["overtook"] += 1
        if out_ld:
            self.out = self.sel
        if sel_ld:
            self.sel = self.pick
            self.pick = None
        if pick_ld:
            self.pick = None
            if cand:
                best = max(cand, key=lambda x: (pick_key(x.desc), -x.seq))
                best.state = "p"
                self.pick = best.seq
                if len(cand) > 1:
                    self.cov["pick_choice"] += 1

        # free
        if freed is not None:
            del self.live[freed]
            for x in self.live.values():
                x.waits.discard(freed)

        # completions
        if take_rej:
            tag, r = self.rejq.popleft()
            self.cpl = (tag, REASON_STATUS[r], REJ_MARK | r)
            self.turn = 1
        elif take_done:
            self.cpl = self.dbuf
            self.dbuf = None
            self.turn = 0
        elif cpl_ld:
            self.cpl = None
        if self.dst is not None and dst_go:
            self.dbuf = self.dst[0] if self.dst[1] else None
            self.dst = None
        if new_dst is not None:
            self.dst = new_dst
        self.dst_new = new_dst is not None

        acc = s["cmd"] is not None and s["cmd_ready"]
        self.res += int(acc) - int(self.freed_last) - int(take_rej)
        self.freed_last = freed is not None
        self.s3 = self.s2
        self.s2 = self.s1
        self.s1 = dict(s["cmd"]) if acc else None
        self.elig_prev = elig_now
        self.tags_hist.append(tags_now)
        self.ins_hist.append(ins_now)
        self.spur = spur_next


def check_trace(trace: list[dict], depth: int, num_lba: int, num_tx: int, max_errors: int = 20):
    m = CmdqModel(depth, num_lba, num_tx)
    for e, s in enumerate(trace):
        m.step(e, s)
        if len(m.errors) >= max_errors:
            break
    return m.errors, m.cov, m.dispatched, m


def check_invariants(trace: list[dict]) -> list[str]:
    """Event-level checks, independent of the timing contract and of CmdqModel: from the accepted
    commands (arrival order), the m_disp acceptances and the s_done acceptances only, check
    INV-QUEUE (ORDERED alone and in arrival position, SIMPLE not before an earlier ORDERED),
    hazards (overlap with a write, flush after writes, tx control) as done-before-dispatch, one
    dispatch per command, a completion for every command, and the epochs of dispatched writes."""
    errs: list[str] = []
    arrivals = []                                   # (edge, desc)
    disp = {}                                       # arrival index -> dispatch edge
    done = {}                                       # arrival index -> done edge
    by_tag_inflight = {}                            # tag -> arrival index (dispatched, not done)
    unmatched = []                                  # arrival indices not yet dispatched
    for e, s in enumerate(trace):
        if s["cmd"] is not None and s["cmd_ready"]:
            arrivals.append((e, s["cmd"]))
            unmatched.append(len(arrivals) - 1)
        if s["disp"] is not None and s["disp_ready"]:
            d = {k: v for k, v in s["disp"].items() if k != "epoch"}
            for i in unmatched:
                if arrivals[i][1] == d:
                    unmatched.remove(i)
                    disp[i] = (e, s["disp"]["epoch"])
                    if d["tag"] in by_tag_inflight:
                        errs.append(f"edge {e}: tag {d['tag']} dispatched while in service")
                    by_tag_inflight[d["tag"]] = i
                    break
            else:
                errs.append(f"edge {e}: dispatch {d} matches no accepted command")
        if s["done"] is not None and s["done_ready"] and s["done"][0] in by_tag_inflight:
            done[by_tag_inflight.pop(s["done"][0])] = e
    kept = sorted(disp)
    inf = float("inf")
    # ordering: x waits for earlier y -> disp(x) > done(y)
    for xi, x in enumerate(kept):
        dx = disp[x][0]
        cx = arrivals[x][1]
        for y in kept[:xi]:
            if must_wait(cx, arrivals[y][1], disp[x][1], disp[y][1]) and not done.get(y, inf) < dx:
                errs.append(f"command {x} {cx} dispatched at {dx} before earlier {arrivals[y][1]} "
                            f"was done ({done.get(y)})")
                break
    # ORDERED alone: no other command dispatched while it is in service, nothing in service at its start
    for o in kept:
        if arrivals[o][1]["attr"] != ORDERED:
            continue
        d0, d1 = disp[o][0], done.get(o, inf)
        for z in kept:
            if z != o and (d0 < disp[z][0] <= d1 or (disp[z][0] <= d0 and done.get(z, inf) >= d0)):
                errs.append(f"ORDERED {arrivals[o][1]['tag']} in service {d0}..{d1} overlaps "
                            f"{arrivals[z][1]['tag']} ({disp[z][0]}..{done.get(z)})")
                break
    # epoch order at dispatch: the writes reach the write buffer with non-decreasing epochs
    wlast = None
    for i in sorted((i for i in kept if arrivals[i][1]["op"] in WRITE_OPS), key=lambda i: disp[i][0]):
        if wlast is not None and disp[i][1] < wlast:
            errs.append(f"write {i} of epoch {disp[i][1]} dispatched after a write of epoch {wlast}")
        wlast = disp[i][1] if wlast is None else max(wlast, disp[i][1])
    # epochs: in arrival order, dispatched commands carry non-decreasing epochs, a barrier write's
    # successor carries a larger one
    prev = None
    for i in kept:
        ep = disp[i][1]
        if prev is not None:
            pep, pbar = prev
            if ep < pep or (pbar and ep == pep):
                errs.append(f"epoch of command {i} ({ep}) after {pep} (barrier {pbar})")
        c = arrivals[i][1]
        prev = (ep, c["op"] == WRITE and bool(c["flags"] & BARRIER))
    return errs[:20]
