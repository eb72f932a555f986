"""Independent reference model of the write buffer's visible behaviour and of durability, written
from docs/invariants.md (INV-DUR, INV-ORDER, INV-LBA) and docs/architecture.md sections 1, 2, 9.
Plain Python: dicts of versions, no knowledge of slots, FIFOs or the RTL's writeback choices.

- Every WRITE or TRIM command gets a global version number; page p of a WRITE of LBA L, version v
  carries `page_words(L + p, v)` (a pattern that encodes the LBA and the version in every word).
- Expected status of each command from the descriptor alone (BAD_OP, BAD_FIELD, BAD_LBA, OK).
- Expected READ data: the contents the device had when the READ was accepted (commands are
  applied in acceptance order; the write buffer executes them in that order).
- No space (rtl/wbuf/README.md "No space"): while the firmware's bit is set, WRITE, TRIM, FLUSH
  and RFLUSH complete NO_SPACE after the descriptor checks (RFLUSH: before its ranges are read)
  and change nothing; READs work. A WRITE or TRIM that was running when the bit rose may complete
  NO_SPACE with `result` = the pages it put in the buffer (the first `result` pages take the new
  version, the others keep the old one), a FUA write or FLUSH / RFLUSH waiting for durability
  completes NO_SPACE (the FUA write's pages stay in the buffer). `no_space(cycle)` (set by the test)
  says the bit's state for a command accepted at `cycle`: True, False or None (next to a change:
  either outcome is allowed, the completion decides).
- After a power cut, `check_durable(log)` replays the media's durable log and checks INV-LBA (each
  record decodes to its own LBA and a version written to it), INV-DUR (completed FUA writes, writes
  completed before a completed FLUSH, or before a completed RFLUSH for its ranges, are durable with
  that version or a newer one) and INV-ORDER (if any write of epoch N is durable, every completed
  write of an earlier epoch is); with PLP, every completed write must be durable.
"""
from __future__ import annotations

from dataclasses import dataclass, field

READ, WRITE, DIFFWRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, TRIM, IDENTIFY, GET_LOG, FEATURE = range(12)
OK, BAD_OP, BAD_LBA, BAD_FIELD = 0x00, 0x01, 0x03, 0x07
MEDIA_ERROR, PROGRAM_FAIL = 0x10, 0x11
NO_SPACE = 0x13
FUA, BARRIER, COMMIT = 1, 2, 4
MASK = 0xFFFFFFFF


def page_words(lba: int, version: int, pw: int) -> list[int]:
    """Data of LBA `lba` at version `version`: word 0 = lba, word 1 = version, then a mix of both."""
    out = [lba & MASK, version & MASK]
    for i in range(2, pw):
        out.append(((lba * 0x9E3779B1) ^ (version * 0x85EBCA6B) ^ (i * 0xC2B2AE35)) & MASK)
    return out[:pw]


def decode_page(words: list[int]) -> tuple[int, int] | None:
    """(lba, version) if `words` is an intact pattern, else None (garbage)."""
    if len(words) < 2:
        return None
    lba, ver = words[0], words[1]
    return (lba, ver) if page_words(lba, ver, len(words)) == list(words) else None


@dataclass
class Op:
    """One page of a WRITE (kind 'w') or TRIM (kind 't')."""
    lba: int
    version: int
    epoch: int
    kind: str
    cmd: "Cmd"


@dataclass
class Cmd:
    op: int
    tag: int
    lba: int = 0
    nlb: int = 0
    flags: int = 0
    attr: int = 0
    prio: int = 0
    txid: int = 0
    epoch: int = 0
    dptr: int = 0
    aux: int = 0
    ranges: list = field(default_factory=list)     # RFLUSH: [(lba, nlb)]
    version: int = 0
    expect_status: int = OK
    alt_status: set = field(default_factory=set)   # also allowed (no space next to a change of the bit)
    prev: list = field(default_factory=list)       # WRITE/TRIM: contents of its LBAs before it
    expect_data: list | None = None                # READ: list of pages (lists of words)
    accept_cycle: int | None = None
    done_cycle: int | None = None
    status: int | None = None
    segment: int = 0

    def fields(self) -> dict:
        return {"op": self.op, "tag": self.tag, "lba": self.lba, "nlb": self.nlb, "txid": self.txid,
                "flags": self.flags, "attr": self.attr, "prio": self.prio, "dptr": self.dptr,
                "aux": self.aux, "epoch": self.epoch}


class WbufModel:
    def __init__(self, num_lbas: int, page_bytes: int, plp: bool = False):
        self.num_lbas = num_lbas
        self.pw = page_bytes // 4
        self.plp = plp
        self.version = 0
        self.contents: dict[int, tuple[int, str]] = {}   # lba -> (version, kind) as the host sees it
        self.ops_by_lba: dict[int, list[Op]] = {}
        self.cmds: list[Cmd] = []
        self.segment = 0
        self.recovered: dict[int, int] = {}              # lba -> durable version after the last cut
        self.no_space = lambda cycle: False              # the no-space bit for a command accepted at cycle

    # ------------------------------------------------------------------ expectations
    def expected_status(self, c: Cmd) -> int:
        if c.op not in (READ, WRITE, FLUSH, RFLUSH, TRIM):
            return BAD_OP
        if c.attr == 3 or c.flags & 8:
            return BAD_FIELD
        if c.op in (READ, WRITE, TRIM) and c.lba + c.nlb >= self.num_lbas:
            return BAD_LBA
        if c.op == RFLUSH and (c.nlb > 7 or len(c.ranges) != c.nlb + 1):
            return BAD_FIELD
        if c.op != READ and self.no_space(c.accept_cycle):
            return NO_SPACE                      # (an RFLUSH's ranges are not read)
        if c.op == RFLUSH and any(lba + n >= self.num_lbas for lba, n in c.ranges):
            return BAD_LBA
        return OK

    def new_version(self) -> int:
        self.version += 1
        return self.version

    def accept(self, c: Cmd, cycle: int) -> None:
        """The command was accepted on s_disp at `cycle` (acceptance order = execution order)."""
        c.accept_cycle = cycle
        c.segment = self.segment
        c.expect_status = self.expected_status(c)
        if c.op != READ and self.no_space(cycle) is None and (
                c.expect_status == OK or (c.op == RFLUSH and c.expect_status == BAD_LBA)):
            c.alt_status = {NO_SPACE}            # next to a change of the bit: either
        self.cmds.append(c)
        if c.expect_status != OK:
            return
        if c.op == READ:
            pages = []
            for p in range(c.nlb + 1):
                ver, kind = self.contents.get(c.lba + p, (0, "t"))
                pages.append(page_words(c.lba + p, ver, self.pw) if kind == "w" else [0] * self.pw)
            c.expect_data = pages
        elif c.op in (WRITE, TRIM):
            c.prev = [self.contents.get(c.lba + p) for p in range(c.nlb + 1)]
            for p in range(c.nlb + 1):
                kind = "w" if c.op == WRITE else "t"
                self.contents[c.lba + p] = (c.version, kind)
                self.ops_by_lba.setdefault(c.lba + p, []).append(
                    Op(c.lba + p, c.version, c.epoch, kind, c))

    def completed(self, c: Cmd, status: int, cycle: int, result: int | None = None) -> None:
        c.status = status
        c.done_cycle = cycle
        if status == NO_SPACE and c.op in (WRITE, TRIM) and c.prev:
            # the pages from `result` on were not taken: their LBAs keep the contents they had (the
            # buffer runs one command at a time, so no later command touched them yet); a version
            # of them found on the media later is an INV-LBA error (never written)
            r = c.nlb + 1 if result is None else result
            assert 0 <= r <= c.nlb + 1, f"NO_SPACE tag {c.tag}: result {r} > {c.nlb + 1} pages"
            for p in range(r, c.nlb + 1):
                lba = c.lba + p
                if c.prev[p] is None:
                    self.contents.pop(lba, None)
                else:
                    self.contents[lba] = c.prev[p]
                self.ops_by_lba[lba] = [o for o in self.ops_by_lba.get(lba, []) if o.cmd is not c]

    # ------------------------------------------------------------------ power cut
    def cut_reset(self, durable: dict[int, int]) -> None:
        """After a cut: the device now holds `durable` (lba -> version, 0 = unwritten/unmapped)."""
        self.segment += 1
        self.recovered = dict(durable)
        self.contents = {}
        for lba, ver in durable.items():
            kind = "t"
            for op in self.ops_by_lba.get(lba, []):
                if op.version == ver:
                    kind = op.kind
            self.contents[lba] = (ver, kind)

    def replay(self, log) -> tuple[dict[int, int], list[str], int]:
        """Replay a durable log: lba -> durable version, INV-LBA errors, highest durable epoch of
        this segment's writes (-1: none)."""
        errs = []
        state: dict[int, int] = {}
        e_max = -1
        for rec in log:
            if rec.op == 0:
                dec = decode_page(rec.data)
                if dec is None:
                    errs.append(f"INV-LBA: seq {rec.seq} lpn {rec.lpn}: garbage page {rec.data[:4]}...")
                    continue
                lba, ver = dec
                if lba != rec.lpn:
                    errs.append(f"INV-LBA: seq {rec.seq}: lpn {rec.lpn} holds data of lba {lba}")
                    continue
                op = next((o for o in self.ops_by_lba.get(lba, []) if o.version == ver and o.kind == "w"), None)
                if op is None:
                    errs.append(f"INV-LBA: seq {rec.seq}: lba {lba} version {ver} was never written")
                    continue
            else:
                # an UNMAP record: the latest TRIM of this LBA in the record's epoch accepted before it
                cands = [o for o in self.ops_by_lba.get(rec.lpn, []) if o.kind == "t"
                         and o.epoch == rec.epoch and o.cmd.accept_cycle is not None
                         and o.cmd.accept_cycle <= rec.issue_cycle]
                if not cands:
                    errs.append(f"INV-LBA: seq {rec.seq}: unmap of lba {rec.lpn} epoch {rec.epoch} without a TRIM")
                    continue
                op = max(cands, key=lambda o: o.version)
                ver = op.version
            state[rec.lpn] = ver
            if op.cmd.segment == self.segment:
                e_max = max(e_max, op.epoch)
        return state, errs, e_max

    def check_durable(self, log) -> tuple[dict[int, int], list[str], dict]:
        """Check INV-LBA, INV-DUR, INV-ORDER (and PLP: every completed write) on the media's durable
        log after a cut. Returns (durable state, errors, coverage counts)."""
        state, errs, e_max = self.replay(log)
        seg = [c for c in self.cmds if c.segment == self.segment]
        required: dict[int, tuple[int, str]] = {}

        def need(lba, ver, why):
            if required.get(lba, (0, ""))[0] < ver:
                required[lba] = (ver, why)

        done_writes = [c for c in seg if c.op in (WRITE, TRIM) and c.status == OK]
        for c in done_writes:
            if c.op == WRITE and c.flags & FUA or self.plp:
                for p in range(c.nlb + 1):
                    need(c.lba + p, c.version, f"FUA/PLP tag {c.tag}")
        for f in seg:
            if f.op not in (FLUSH, RFLUSH) or f.status != OK:
                continue
            for c in done_writes:
                if c.done_cycle is None or c.done_cycle > f.accept_cycle:
                    continue
                for p in range(c.nlb + 1):
                    lba = c.lba + p
                    if f.op == FLUSH or any(lo <= lba <= lo + n for lo, n in f.ranges):
                        need(lba, c.version, f"{'FLUSH' if f.op == FLUSH else 'RFLUSH'} tag {f.tag}")
        for lba, (ver, why) in required.items():
            if state.get(lba, 0) < ver:
                errs.append(f"INV-DUR: lba {lba} durable version {state.get(lba, 0)} < {ver} ({why})")
        # INV-ORDER: every completed write of an epoch below the highest durable epoch is durable
        n_order = 0
        for c in done_writes:
            if c.epoch < e_max:
                n_order += 1
                for p in range(c.nlb + 1):
                    if state.get(c.lba + p, 0) < c.version:
                        errs.append(f"INV-ORDER: epoch {e_max} durable but lba {c.lba + p} version "
                                    f"{c.version} of epoch {c.epoch} (tag {c.tag}) is not")
        cov = {"required": len(required), "order_checked": n_order, "records": len(log),
               "e_max": e_max}
        return state, errs, cov


class WritebackPolicyModel:
    """Background writeback rule of the write buffer (rtl/wbuf/README.md, "Writeback policy"), on
    page counts and LBAs only (no slots, no FIFO positions), for scenarios without FLUSH, RFLUSH,
    allocation pressure or power loss:
    - `held` = pages not yet durable: dirty (not issued) + staged + in flight (accepted by the media,
      completion not yet taken). Background writeback runs while held >= THRESH =
      ceil(NUM_SLOTS * THRESH_PCT / 100), and issues dirty pages oldest first.
    - The media accepts a request only while fewer than `window` are outstanding (0: unbounded).
      The buffer picks the next page before the handshake: when the window is full, one picked page
      waits ("staged": no longer dirty, not coalescable) and everything else stays dirty.
    - A write to an LBA whose newest buffered version is dirty and of the same epoch coalesces
      (no new page); otherwise it adds a dirty page (a page in flight is never modified).
    """

    def __init__(self, num_slots: int, thresh_pct: int, window: int):
        self.thresh = -(-num_slots * thresh_pct // 100)
        self.window = window
        self.dirty: list[list[int]] = []        # [lba, epoch], oldest first
        self.staged: int | None = None
        self.inflight: list[int] = []           # LBAs accepted by the media, in order
        self.programs = 0                       # requests the media accepted
        self.coalesced = 0

    @property
    def held(self) -> int:
        return len(self.dirty) + len(self.inflight) + (self.staged is not None)

    def write(self, lba: int, epoch: int) -> None:
        # pages are issued oldest first, so a dirty version is newer than any in-flight one
        newest = next((d for d in reversed(self.dirty) if d[0] == lba), None)
        if newest is not None and newest[1] == epoch:
            self.coalesced += 1
        else:
            self.dirty.append([lba, epoch])
        self.settle()

    def set_window(self, window: int) -> None:
        self.window = window
        self.settle()

    def complete_one(self) -> None:
        self.inflight.pop(0)
        self.settle()

    def settle(self) -> None:
        while True:
            if self.staged is not None:
                if self.window and len(self.inflight) >= self.window:
                    return
                self.inflight.append(self.staged)
                self.staged = None
                self.programs += 1
            elif self.dirty and self.held >= self.thresh:
                self.staged = self.dirty.pop(0)[0]
            else:
                return


class PlpCutModel:
    """The PLP budget rule at the cut (rtl/wbuf/README.md, "PLP", "The cut"), from port values only.

    Feed `sample()` once per rising edge with the values the RTL samples at that edge (read right
    after RisingEdge), from the first edge after reset. Definitions of the rule:
    - the cut is the first edge at which `pwr_fail` is 1;
    - budget at the cut B = min(PLP_BUDGET_PAGES, `plp_budget` sampled at the cut edge);
    - in flight at the cut F = media requests presented on m_wb (m_wb_valid 1) at an edge up to and
      including the cut, minus write completions (s_wbc beats) at edges up to and including the cut;
    - dirty at the cut D = `dirty_pages` two edges after the cut (a write page committing at the cut
      is still committed; nothing is issued in those two cycles);
    - after the cut the buffer presents exactly min(D, max(0, B - F)) more requests and leaves the
      rest dirty; `dump_short` = D > max(0, B - F).
    A request is counted once, at the first edge its valid is seen (it stays valid until taken:
    the media model's stream-stability check fails the test otherwise).
    """

    def __init__(self, design_budget: int):
        self.design_budget = design_budget
        self.edge = 0
        self.presented = 0
        self.completed = 0
        self._open = False                     # a presented request not yet taken
        self.errors: list[str] = []
        self.cut_edge: int | None = None
        self.budget = self.in_flight = self.presented_at_cut = self.dirty_at_cut = None

    def sample(self, pwr_fail: int, plp_budget: int, wb_valid: int, wb_ready: int, wbc_valid: int,
               dirty_pages: int) -> None:
        self.edge += 1
        if wb_valid and not self._open:
            self.presented += 1
        self._open = bool(wb_valid and not wb_ready)
        if wbc_valid:
            self.completed += 1
        if self.cut_edge is None:
            if pwr_fail:
                self.cut_edge = self.edge
                self.budget = min(self.design_budget, plp_budget)
                self.in_flight = self.presented - self.completed
                self.presented_at_cut = self.presented
        elif self.edge == self.cut_edge + 2:
            self.dirty_at_cut = dirty_pages

    @property
    def allowance(self) -> int:
        """Requests the buffer may still present after the cut."""
        return max(0, self.budget - self.in_flight)

    @property
    def post(self) -> int:
        """Requests first presented after the cut edge."""
        return self.presented - self.presented_at_cut

    def check(self, dirty_left: int, dump_short: int) -> list[str]:
        """After dump_done: the rule against what was seen."""
        errs = list(self.errors)
        if self.cut_edge is None or self.dirty_at_cut is None:
            return errs + ["no cut seen"]
        exp = min(self.dirty_at_cut, self.allowance)
        what = (f"budget at the cut {self.budget}, in flight {self.in_flight}, dirty {self.dirty_at_cut}"
                f" -> allowance {self.allowance}")
        if self.post != exp:
            errs.append(f"{self.post} requests after the cut, expected {exp} ({what})")
        if dirty_left != self.dirty_at_cut - self.post:
            errs.append(f"{dirty_left} dirty pages left, expected {self.dirty_at_cut - self.post} ({what})")
        if int(dump_short) != int(self.dirty_at_cut > self.allowance):
            errs.append(f"dump_short {dump_short} ({what})")
        return errs
