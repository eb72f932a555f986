"""End-to-end reference model of the command queue + write buffer pair (ats_cmdq -> ats_wbuf), plain
Python, written from the design brief (Commands), docs/invariants.md (INV-QUEUE, INV-ORDER, INV-DUR, INV-LBA) and the
contracts in docs/architecture.md sections 1, 2, 4, 9 and rtl/cmdq/README.md ("Validation",
"Ordering", "Epochs"). It does not reuse the block models (cmdq_model, wbuf_model) nor any RTL
structure: it only knows descriptors, events (accepted on s_cmd, dispatched on the internal m_disp,
done on the internal s_done, completed on m_cpl) and the media's durable log.

- `expect(c, dup)`: end-to-end status/result of a descriptor: the queue's rejection (status, result
  0xCE0000<rule>), or what the write buffer answers (BAD_OP for opcodes it does not execute, BAD_LBA
  for an RFLUSH range past the device, else OK).
- Epochs: counted in arrival order per power-on segment; a kept BARRIER write closes its epoch.
- Contents: the write buffer executes commands one at a time in dispatch order, so a READ returns
  the contents after every command dispatched before it. `hist[lba]` lists the versions written to
  an LBA in dispatch order (across power cuts); "version v or a later one" means an index in that
  list at least v's. Unwritten/unmapped = version 0 (index -1).
- `queue_check(seg)`: INV-QUEUE and the queue's ordering rules as event-level checks on the
  arrival / presentation / dispatch / done cycles (see the function).
- `cut_check(log, ...)`: replay of the media's durable log and INV-LBA, INV-DUR, INV-ORDER (barrier
  epochs and ORDERED writes), PLP (every buffered write durable).
"""
from __future__ import annotations

from dataclasses import dataclass, field

READ, WRITE, DIFFWRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, TRIM, IDENTIFY, GET_LOG, FEATURE = range(12)
SIMPLE, ORDERED, HEAD = 0, 1, 2
FUA, BARRIER, COMMIT = 1, 2, 4
OK, BAD_OP, BAD_TXID, BAD_LBA, BAD_FIELD = 0x00, 0x01, 0x02, 0x03, 0x07
MEDIA_ERROR, PROGRAM_FAIL = 0x10, 0x11
REJ = 0xCE000000
RANGED = (READ, WRITE, DIFFWRITE, TRIM)
WRITES = (WRITE, DIFFWRITE, TRIM)
TXOPS = (TX_BEGIN, TX_COMMIT, TX_ABORT)
UNIT_OPS = (READ, WRITE, FLUSH, RFLUSH, TRIM)       # what the write buffer executes
MASK = 0xFFFFFFFF


def page_words(lba: int, version: int, pw: int) -> list[int]:
    """Page pattern of (lba, version): word 0 lba, word 1 version, then a hash of both and the index."""
    out = [lba & MASK, version & MASK]
    for i in range(2, pw):
        out.append(((lba * 0x2545F491) ^ (version * 0x9E3779B9) ^ (i * 0x68E31DA5) ^ 0x5A5A5A5A) & MASK)
    return out[:pw]


def decode(words: list[int]) -> tuple[int, int] | None:
    if len(words) < 2:
        return None
    return (words[0], words[1]) if page_words(words[0], words[1], len(words)) == list(words) else None


@dataclass
class Cmd:
    op: int
    tag: int
    lba: int = 0
    nlb: int = 0
    txid: int = 0
    flags: int = 0
    attr: int = SIMPLE
    prio: int = 0
    dptr: int = 0
    aux: int = 0
    ranges: list = field(default_factory=list)   # RFLUSH: [(lba, nlb)] as written to host memory
    version: int = 0                            # WRITE/TRIM: unique, in creation order
    dup: bool = False                           # sent with the tag of a command still in the table
    force_status: int | None = None             # error injected by the test (MEDIA_ERROR, PROGRAM_FAIL)
    lost: bool = False                          # its program failed: dropped by the write buffer
    # filled in by the model / monitors
    seg: int = -1
    kept: bool = False                          # passed the queue's validation
    exp_status: int = OK
    exp_result: int | None = None
    epoch: int = 0                              # model's epoch (arrival order)
    t_acc: int | None = None                    # accepted on s_cmd
    t_pres: int | None = None                   # first cycle valid on the internal m_disp
    t_disp: int | None = None                   # accepted on the internal m_disp
    disp_epoch: int | None = None
    t_done: int | None = None                   # accepted on the internal s_done
    done_status: int | None = None
    done_result: int | None = None
    t_cpl: int | None = None                    # accepted on m_cpl
    status: int | None = None
    result: int | None = None
    exp_pages: list | None = None               # READ: expected page words (at dispatch)
    arr_versions: list | None = None            # READ: expected versions by arrival order (or None)

    @property
    def pages(self) -> range:
        return range(self.lba, self.lba + self.nlb + 1)

    def fields(self) -> dict:
        return {"op": self.op, "tag": self.tag, "lba": self.lba, "nlb": self.nlb, "txid": self.txid,
                "flags": self.flags, "attr": self.attr, "prio": self.prio, "dptr": self.dptr,
                "aux": self.aux}

    def name(self) -> str:
        a = "SOH"[self.attr] if self.attr < 3 else "?"
        return f"#{self.tag}:{self.op}{a}[{self.lba}+{self.nlb}]v{self.version}e{self.epoch}"


class OrderModel:
    def __init__(self, num_lbas: int, num_tx: int, page_bytes: int, plp: bool = False):
        self.num_lbas, self.num_tx, self.pw, self.plp = num_lbas, num_tx, page_bytes // 4, plp
        self.seg = 0
        self.seg_start = [0]                      # first cycle of each segment
        self.epoch = 0
        self.cmds: list[Cmd] = []                 # accepted on s_cmd, arrival order, all segments
        self.hist: dict[int, list[int]] = {}      # lba -> versions in dispatch order
        self.kind: dict[int, str] = {}            # version -> 'w' / 't'
        self.by_version: dict[int, Cmd] = {}
        self.contents: dict[int, int] = {}        # lba -> version (dispatch order; 0 = none)
        self.arrival: dict[int, int] = {}         # lba -> version (arrival order, kept writes)
        self.head_touched: set[int] = set()       # LBAs written by a HEAD write in this segment
        self.seg_base: dict[int, int] = {}        # lba -> version at the start of the segment
        self.dispatch_order: list[Cmd] = []
        self.errors: list[str] = []

    # ------------------------------------------------------------------ validation
    def reject_rule(self, c: Cmd) -> int:
        """The queue's validation table (rtl/cmdq/README.md), first failing rule, 0 = kept."""
        op, fl = c.op, c.flags
        if op > FEATURE:
            return 1
        if c.attr == 3 or fl & 8:
            return 2
        allowed = FUA | BARRIER | COMMIT if op == WRITE else FUA if op == DIFFWRITE else 0
        if fl & 7 & ~allowed:
            return 3
        if c.txid > self.num_tx:
            return 4
        if c.txid == 0 and (op in TXOPS or op == DIFFWRITE or (op == WRITE and fl & COMMIT)):
            return 5
        if op in RANGED and c.lba + c.nlb >= self.num_lbas:
            return 6
        if op == DIFFWRITE:
            off, ln = c.aux & 0xFFFF, c.aux >> 16
            if ln == 0 or off + ln > 4096:
                return 7
        if op == RFLUSH and c.nlb > 7:
            return 8
        if c.dup:
            return 9
        return 0

    def expect(self, c: Cmd) -> None:
        rule = self.reject_rule(c)
        st = {1: BAD_OP, 2: BAD_FIELD, 3: BAD_FIELD, 4: BAD_TXID, 5: BAD_TXID, 6: BAD_LBA,
              7: BAD_FIELD, 8: BAD_FIELD, 9: BAD_FIELD}
        if rule:
            c.kept, c.exp_status, c.exp_result = False, st[rule], REJ | rule
            return
        c.kept = True
        if c.force_status is not None:
            c.exp_status, c.exp_result = c.force_status, None
        elif c.op not in UNIT_OPS:
            c.exp_status, c.exp_result = BAD_OP, None
        elif c.op == RFLUSH and (len(c.ranges) != c.nlb + 1 or
                                 any(lo + n >= self.num_lbas for lo, n in c.ranges)):
            c.exp_status, c.exp_result = (BAD_LBA if len(c.ranges) == c.nlb + 1 else BAD_FIELD), None
        else:
            c.exp_status = OK
            c.exp_result = c.nlb + 1 if c.op in (READ, WRITE, TRIM) else 0

    def is_write(self, c: Cmd) -> bool:
        """A command that changes contents (kept WRITE/TRIM the buffer executes)."""
        return c.kept and c.op in (WRITE, TRIM) and c.exp_status == OK

    # ------------------------------------------------------------------ events
    def accepted(self, c: Cmd, cycle: int) -> None:
        c.t_acc, c.seg = cycle, self.seg
        self.expect(c)
        self.cmds.append(c)
        if not c.kept:
            return
        c.epoch = self.epoch
        if c.op == WRITE and c.flags & BARRIER:
            self.epoch += 1
        if c.op == READ and c.exp_status == OK:
            vs = []
            for lba in c.pages:
                vs.append(None if lba in self.head_touched else self.arrival.get(lba, self.seg_base.get(lba, 0)))
            c.arr_versions = vs
        if self.is_write(c):
            for lba in c.pages:
                self.arrival[lba] = c.version
                if c.attr == HEAD:
                    self.head_touched.add(lba)
            self.by_version[c.version] = c
            self.kind[c.version] = "w" if c.op == WRITE else "t"

    def dispatched(self, c: Cmd, cycle: int, epoch: int) -> None:
        c.t_disp, c.disp_epoch = cycle, epoch
        self.dispatch_order.append(c)
        if c.op == READ and c.exp_status == OK:
            c.exp_pages = []
            for lba in c.pages:
                v = self.contents.get(lba, 0)
                c.exp_pages.append(page_words(lba, v, self.pw) if v and self.kind.get(v) == "w"
                                   else [0] * self.pw)
        if self.is_write(c):
            for lba in c.pages:
                self.hist.setdefault(lba, []).append(c.version)
                self.contents[lba] = c.version

    def drop(self, c: Cmd) -> None:
        """A buffered write whose program failed (PROGRAM_FAIL): the buffer dropped its pages, each
        LBA is back to its previous version."""
        c.lost = True
        for lba in c.pages:
            h = self.hist.get(lba, [])
            if c.version in h:
                h.remove(c.version)
            prev = h[-1] if h else self.seg_base.get(lba, 0)
            if self.contents.get(lba) == c.version:
                self.contents[lba] = prev
            if self.arrival.get(lba) == c.version:
                self.arrival[lba] = prev

    def index(self, lba: int, version: int) -> int:
        h = self.hist.get(lba, [])
        return h.index(version) if version in h else -1

    # ------------------------------------------------------------------ power cut
    def seg_of(self, cycle: int) -> int:
        s = 0
        for k, start in enumerate(self.seg_start):
            if cycle >= start:
                s = k
        return s

    def replay(self, log) -> tuple[dict[int, int], list[str], list]:
        """Durable state lba -> version from the media's log; INV-LBA errors; records with the
        command each one carries."""
        errs, state, recs = [], {}, []
        for rec in log:
            rseg = self.seg_of(rec.issue_cycle)
            if rec.op == 0:
                dec = decode(rec.data)
                if dec is None:
                    errs.append(f"INV-LBA: record {rec.seq} lpn {rec.lpn}: garbage {rec.data[:3]}")
                    continue
                lba, ver = dec
                c = self.by_version.get(ver)
                if lba != rec.lpn or c is None or c.op != WRITE or lba not in c.pages:
                    errs.append(f"INV-LBA: record {rec.seq} lpn {rec.lpn} holds lba {lba} version {ver}"
                                f" ({c.name() if c else 'never written'})")
                    continue
            else:
                cands = [x for x in self.dispatch_order if x.op == TRIM and self.is_write(x)
                         and rec.lpn in x.pages and x.seg == rseg and x.epoch == rec.epoch
                         and x.t_disp is not None and x.t_disp < rec.issue_cycle]
                if not cands:
                    errs.append(f"INV-LBA: unmap record {rec.seq} lpn {rec.lpn} epoch {rec.epoch}: no TRIM")
                    continue
                c = cands[-1]
                ver = c.version
            if c.seg != rseg:
                errs.append(f"record {rec.seq} issued in segment {rseg} carries {c.name()} of segment {c.seg}")
            if rec.epoch != c.epoch:
                errs.append(f"record {rec.seq} epoch {rec.epoch} != epoch {c.epoch} of {c.name()}")
            state[rec.lpn] = ver
            recs.append((rec, c))
        return state, errs, recs

    def cut_check(self, log, plp: bool) -> tuple[dict[int, int], list[str], dict]:
        """Checks on the durable log after a cut of the current segment: INV-LBA (replay), INV-DUR
        (FUA; FLUSH/RFLUSH in three strengths), PLP (every write done before the cut), INV-ORDER
        (barrier epochs; ORDERED writes). Returns (durable state, errors, coverage counts)."""
        state, errs, recs = self.replay(log)
        seg = [c for c in self.cmds if c.seg == self.seg]
        writes = [c for c in seg if self.is_write(c) and not c.lost]
        need: dict[int, tuple[int, str]] = {}
        cov = {"need": 0, "fua": 0, "flush": 0, "rflush": 0, "order_epoch": 0, "order_ordered": 0,
               "plp": 0, "records": len(recs)}

        def req(c: Cmd, why: str, lbas=None) -> None:
            for lba in c.pages:
                if lbas is not None and lba not in lbas:
                    continue
                ix = self.index(lba, c.version)
                if ix < 0:
                    errs.append(f"{why}: {c.name()} was never dispatched")
                    continue
                if need.get(lba, (-1, ""))[0] < ix:
                    need[lba] = (ix, why)

        def in_ranges(f: Cmd, lba: int) -> bool:
            return any(lo <= lba <= lo + n for lo, n in f.ranges)

        for c in writes:
            if c.op == WRITE and c.flags & FUA and c.status == OK and c.t_cpl is not None:
                req(c, f"INV-DUR FUA {c.name()}")
                cov["fua"] += 1
            if plp and c.t_done is not None and c.done_status == OK:
                req(c, f"PLP {c.name()} buffered")
                cov["plp"] += 1
        for f in seg:
            if f.op not in (FLUSH, RFLUSH) or f.status != OK:
                continue
            key = "flush" if f.op == FLUSH else "rflush"
            for c in writes:
                lbas = None if f.op == FLUSH else {l for l in c.pages if in_ranges(f, l)}
                if lbas is not None and not lbas:
                    continue
                why = None
                if c.status == OK and c.t_cpl is not None and c.t_cpl < f.t_acc:
                    why = "completed before"             # the brief's INV-DUR
                elif f.attr != HEAD and c.t_acc < f.t_acc:
                    why = "accepted before"              # queue rule 4: a flush waits for earlier writes
                elif c.t_done is not None and c.done_status == OK and f.t_disp is not None and c.t_done < f.t_disp:
                    why = "buffered before the dispatch of"
                if why:
                    req(c, f"INV-DUR {c.name()} {why} {key.upper()} {f.name()}", lbas)
                    cov[key] += 1
        for lba, (ix, why) in need.items():
            got = self.index(lba, state.get(lba, 0)) if state.get(lba, 0) else -1
            if got < ix:
                errs.append(f"{why}: lba {lba} durable version {state.get(lba, 0)} (index {got}) "
                            f"< required {self.hist[lba][ix]} (index {ix})")
        cov["need"] = len(need)

        def durable(c: Cmd) -> bool:
            for lba in c.pages:
                v = state.get(lba, 0)
                if (self.index(lba, v) if v else -1) < self.index(lba, c.version):
                    return False
            return True

        # INV-ORDER, barrier epochs: a durable record of epoch e -> every kept write of an earlier
        # epoch of this segment durable (with its version or a later one)
        mine = [(r, c) for r, c in recs if c.seg == self.seg]
        e_max = max((c.epoch for _, c in mine), default=-1)
        for c in writes:
            if c.epoch < e_max:
                cov["order_epoch"] += 1
                if not durable(c):
                    errs.append(f"INV-ORDER: epoch {e_max} has a durable record but {c.name()} "
                                f"(epoch {c.epoch}) is not durable")
        # INV-ORDER, ORDERED writes: durable only if every write accepted before it is (unless an
        # RFLUSH dispatched after it targeted its pages: RFLUSH writes targeted pages first).
        # Coalescing (rtl/wbuf/README.md): a page that replaces a still-dirty version of its LBA of
        # the same epoch takes that version's place in the writeback order, so an ORDERED write's
        # durable page may sit where the oldest same-epoch write of that LBA was buffered. The rule
        # is therefore checked for the writes accepted before that point (the earliest same-epoch
        # write, accepted no later than o, of an LBA of o's durable pages); inside the epoch, after
        # it, any subset is legal, as the brief's INV-ORDER says.
        for o in {c.version: c for _, c in mine if c.attr == ORDERED}.values():
            if any(f.op == RFLUSH and f.t_disp is not None and f.t_disp > o.t_disp and f.seg == self.seg
                   and f.exp_status == OK and any(in_ranges(f, l) for l in o.pages) for f in seg):
                continue
            o_lbas = {r.lpn for r, c in mine if c is o}
            t_pos = min((w.t_acc for w in writes if w.epoch == o.epoch and w.t_acc <= o.t_acc
                         and o_lbas & set(w.pages)), default=o.t_acc)
            if t_pos < o.t_acc:
                cov["order_ordered_coalesced"] = cov.get("order_ordered_coalesced", 0) + 1
            for c in writes:
                if c.t_acc < t_pos:
                    cov["order_ordered"] += 1
                    if not durable(c):
                        errs.append(f"INV-ORDER: ORDERED {o.name()} durable but earlier {c.name()} is not")
        return state, errs, cov

    def restart(self, state: dict[int, int], cycle: int) -> None:
        """Power back on: the device holds `state`; a new segment starts at `cycle`."""
        self.seg += 1
        self.seg_start.append(cycle)
        self.epoch = 0
        self.contents = dict(state)
        self.arrival = dict(state)
        self.seg_base = dict(state)
        self.head_touched = set()

    # ------------------------------------------------------------------ INV-QUEUE
    def queue_check(self, seg: int, end: int, slack: int = 4) -> tuple[list[str], dict]:
        """Event-level checks of one segment (`end`: last cycle observed). Cycles: a = accepted on
        s_cmd, v = first valid on the internal m_disp, d = accepted there, f = done accepted.
        - every kept command dispatched at most once, rejected ones never; dispatch epoch = model's;
        - INV-QUEUE ORDERED o: every earlier kept command done before d_o; nothing else in service at
          d_o; nothing dispatched in (d_o, f_o]; SIMPLE x after o: d_x > f_o;
        - hazards (non-HEAD x after y): overlapping ranges with a write, FLUSH/RFLUSH after a write,
          same txid with a TX op: f_y < d_x;
        - epoch order: dispatched writes carry non-decreasing epochs, and no write is dispatched
          before an earlier kept write of a lower epoch is done (HEAD included);
        - HEAD goes first: a non-HEAD x must not be picked while an earlier-arrived or queued HEAD h
          could be: if h sat in the table, not blocked (ORDERED in service, or for a HEAD write an
          earlier lower-epoch write not done), from `slack` cycles before the previous command's
          presentation until v_x, x went first illegally."""
        errs: list[str] = []
        cov = {"ordered": 0, "head_overtook": 0, "head_pairs": 0, "head_free": 0, "hazards": 0, "overtakes": 0}
        kept = [c for c in self.cmds if c.seg == seg and c.kept]
        for c in self.cmds:
            if c.seg == seg and not c.kept and c.t_disp is not None:
                errs.append(f"rejected {c.name()} was dispatched")
        disp = sorted((c for c in kept if c.t_disp is not None), key=lambda c: c.t_disp)
        inf = float("inf")

        def f(c: Cmd) -> float:
            return c.t_done if c.t_done is not None else inf

        for c in disp:
            if c.disp_epoch != (c.epoch & 0xFFFF):
                errs.append(f"{c.name()} dispatched with epoch {c.disp_epoch}, model {c.epoch}")
        # ordered
        for o in kept:
            if o.attr != ORDERED:
                continue
            for x in kept:
                if x is o:
                    continue
                if o.t_disp is not None:
                    if x.t_acc < o.t_acc and not f(x) < o.t_disp:
                        errs.append(f"INV-QUEUE: ORDERED {o.name()} dispatched at {o.t_disp} before earlier "
                                    f"{x.name()} was done ({x.t_done})")
                    if x.t_disp is not None and x.t_disp < o.t_disp and f(x) >= o.t_disp:
                        errs.append(f"INV-QUEUE: ORDERED {o.name()} dispatched at {o.t_disp} while "
                                    f"{x.name()} in service ({x.t_disp}..{x.t_done})")
                    if x.t_disp is not None and o.t_disp < x.t_disp <= f(o):
                        errs.append(f"INV-QUEUE: {x.name()} dispatched at {x.t_disp} while ORDERED "
                                    f"{o.name()} in service ({o.t_disp}..{o.t_done})")
                if x.t_acc > o.t_acc and x.attr != HEAD and x.t_disp is not None and not f(o) < x.t_disp:
                    errs.append(f"INV-QUEUE: {x.name()} dispatched at {x.t_disp} before earlier ORDERED "
                                f"{o.name()} was done ({o.t_done})")
            cov["ordered"] += int(o.t_disp is not None)
        # hazards and epoch order
        for i, x in enumerate(kept):
            if x.t_disp is None:
                continue
            for y in kept[:i]:
                why = None
                if x.op in WRITES and y.op in WRITES and y.epoch < x.epoch:
                    why = "epoch order"
                elif x.attr == HEAD:
                    continue
                elif (x.op in RANGED and y.op in RANGED and (x.op in WRITES or y.op in WRITES)
                      and x.lba <= y.lba + y.nlb and y.lba <= x.lba + x.nlb):
                    why = "LBA overlap"
                elif x.op in (FLUSH, RFLUSH) and y.op in WRITES:
                    why = "flush after write"
                elif x.txid and x.txid == y.txid and (x.op in TXOPS or y.op in TXOPS or
                                                      (x.op == WRITE and x.flags & COMMIT) or
                                                      (y.op == WRITE and y.flags & COMMIT)):
                    why = "transaction op"
                if why:
                    cov["hazards"] += 1
                    if not f(y) < x.t_disp:
                        errs.append(f"{why}: {x.name()} dispatched at {x.t_disp} before earlier "
                                    f"{y.name()} was done ({y.t_done})")
                elif y.t_disp is None or y.t_disp > x.t_disp:
                    cov["overtakes"] += 1
        last = -1
        for c in disp:
            if c.op in WRITES:
                if c.epoch < last:
                    errs.append(f"epoch order: write {c.name()} dispatched after a write of epoch {last}")
                last = max(last, c.epoch)
        # HEAD goes first
        ordered = [o for o in kept if o.attr == ORDERED and o.t_pres is not None]
        prev_v = None
        for x in disp:
            if x.attr != HEAD and x.t_pres is not None and prev_v is not None:
                t0, t1 = prev_v - slack, x.t_pres
                for h in kept:
                    if h.attr != HEAD or h is x or h.t_acc + 6 > t0:
                        continue
                    if h.t_pres is not None and h.t_pres <= t1:
                        continue
                    cov["head_pairs"] += 1     # h was waiting in the table while x was picked
                    if any(o.t_pres - 2 <= t1 and f(o) + slack >= t0 for o in ordered):
                        continue              # an ORDERED command in service blocks everything
                    if h.op in WRITES and any(y.op in WRITES and y.t_acc < h.t_acc and y.epoch < h.epoch
                                              and f(y) + slack >= t0 for y in kept):
                        continue              # epoch order holds the HEAD write back
                    cov["head_free"] += 1      # ... and nothing held it back: x went first illegally
                    errs.append(f"INV-QUEUE HEAD: {x.name()} presented at {x.t_pres} while HEAD {h.name()} "
                                f"(accepted {h.t_acc}) was waiting since before {t0} (presented {h.t_pres})")
            if x.t_pres is not None:
                prev_v = x.t_pres
        # HEAD coverage: HEAD commands that overtook at least one earlier queued command
        for h in kept:
            if h.attr == HEAD and h.t_disp is not None and any(
                    y.t_acc < h.t_acc and (y.t_disp is None or y.t_disp > h.t_disp) for y in kept):
                cov["head_overtook"] += 1
        return errs, cov
