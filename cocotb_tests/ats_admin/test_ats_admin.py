"""cocotb tests of ats_admin (IDENTIFY, GET_LOG and FEATURE answered by the firmware, the other descriptors
passed to the core, the core's and the mailbox's completions and host writes merged), against
`AdminModel` below: a plain-Python, cycle-level model written from rtl/soc/README.md ("ats_admin:
IDENTIFY, GET_LOG and FEATURE through the firmware"), not from the RTL.

Two independent layers of checking:
- `AdminModel`, fed at every rising edge from the ports (`TB._edge`), predicts and checks every
  output of the cycle that ends at that edge: `adm_pending` (FW only), `adm_op`/`adm_tag` (the
  latched command, in FW; `adm_lba` = lba[31:0], `adm_lba_hi` = lba[47:32] != 0, `adm_nlb`, `adm_aux`), `m_cmd_valid` (= `s_cmd_valid` for non-admin descriptors, 0 for admin
  ones), `s_cmd_ready` (admin: IDLE; else `m_cmd_ready`) whenever a descriptor is offered, and for
  both merges the source chosen (lock while a beat is offered and not taken, `m_hwr` also from the
  first beat of a burst to its `last`; unlocked: the mailbox if it offers and the core does not
  or the turn flag is set), `m_*_valid` (the chosen source's), `s_*_ready` (the output's ready for
  the chosen core, else 0, also in cycles without a core beat), the payload (the core's ports
  unchanged, or the mailbox's burst beat: addr = dptr, word i or 0 beyond the pushed count, `last`
  on beat WORDS - 1; the mailbox's completion: tag, status, result). Mailbox state: admin taken in
  IDLE only, pushes counted while wi < WORDS, a push in the done cycle counts, done -> XFER
  (status 0, not FEATURE) or CPL (FEATURE: no data, docs/architecture.md §1.2), pushes and dones outside FW ignored, synchronous reset.
- The transaction level, written from what the TB sent: every non-admin descriptor reaches the
  core once, in order (the `m_cmd` sink collects the descriptor fields at each `m_cmd` handshake);
  every core completion and burst appears exactly once, in order, bursts unbroken (constant addr,
  no foreign beat inside); each admin command (checked by the behavioural firmware against
  `adm_op`/`adm_tag` when it sees `adm_pending`) gives one burst of WORDS beats at its dptr with
  the words the firmware pushed (0 beyond), only for status 0 and not FEATURE, and then its completion. The
  mailbox's traffic is told from the core's by the top nibble of addr / result (0xA: the mailbox).
  Fairness: while the mailbox offers, at most two core bursts end on m_hwr (the one in progress,
  one more) and at most two core completions are taken on m_cpl (what the turn flag allows).
StreamSink checks stream stability on m_cmd (with the descriptor fields the core sees), m_cpl and
m_hwr.

Environment: ATS_SEED (seed), ATS_ADM_MODE (plain: no pauses; bp: random idle on s_cmd, s_cpl,
s_hwr and between firmware pushes, random backpressure on m_cmd, m_cpl and m_hwr), ATS_LONG=1
(four times the admin commands of random_mix and fairness, three times the reset targets, and WORDS
2 and 5 added to the sweep), ATS_TEST_FILTER (cocotb test name regex), ATS_WAVES (FST path),
ATS_ADM_SRC (another copy of ats_admin.sv, for mutation checks).
Testpoints: rtl/soc/testplan_admin.md.
"""
from __future__ import annotations

import itertools
import os
import random
import sys
from collections import Counter, deque
from pathlib import Path
from types import SimpleNamespace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer
from cocotb.utils import get_sim_time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
MODE = os.environ.get("ATS_ADM_MODE", "bp")
HERE = Path(__file__).resolve().parent

IDENTIFY, GET_LOG, FEATURE = 9, 10, 11     # docs/architecture.md §1: the admin commands
ADMIN_OPS = (IDENTIFY, GET_LOG, FEATURE)
CORE_OPS = [o for o in range(16) if o not in ADMIN_OPS]
IDLE, FW, XFER, CPL = "IDLE", "FW", "XFER", "CPL"
CORE, MBOX = "core", "mbox"
CMD_FIELDS = ["op", "tag", "dptr", "lba", "nlb", "aux"]
CPL_FIELDS = ["tag", "status", "result"]
HWR_FIELDS = ["addr", "data", "last"]
ADM_MARK = 0xA                             # top nibble of an admin dptr / result (never the core's)
EXTRA = 6                                  # pushes beyond WORDS: up to this many


def marked(v: int) -> bool:
    return (v >> 28) == ADM_MARK


def unmarked(v: int) -> int:
    """v with a top nibble other than ADM_MARK (the core's addresses and results)."""
    return v ^ (1 << 28) if marked(v) else v


# ------------------------------------------------------------------------------------ model
class Merge:
    """One merge (m_hwr: bursts, m_cpl: single beats) as README "Merges" describes it."""

    def __init__(self, bursts: bool):
        self.bursts = bursts
        self.reset()

    def reset(self) -> None:
        self.held: str | None = None       # source whose beat was offered and not taken at the last edge
        self.burst: str | None = None      # m_hwr: source whose burst is open (first beat taken, not last)
        self.turn = False                  # the mailbox was passed over

    @property
    def lock(self) -> str | None:
        return self.held or self.burst

    def choose(self, mbox_valid: bool, core_valid: int) -> str:
        if self.lock is not None:
            return self.lock
        if mbox_valid and (not core_valid or self.turn):
            return MBOX
        return CORE

    def edge(self, chosen: str, mbox_valid: bool, valid: int, ready: int, last: int) -> None:
        if self.lock is None and mbox_valid and chosen == CORE:
            self.turn = True
        if chosen == MBOX:
            self.turn = False
        self.held = chosen if valid and not ready else None
        if self.bursts and valid and ready:
            self.burst = None if last else chosen


class AdminModel:
    """ats_admin as rtl/soc/README.md describes it, one rising edge at a time. `mbox_hwr()` /
    `mbox_cpl()` give what the mailbox offers in the current cycle, `hwr`/`cpl` the merges."""

    def __init__(self, words: int):
        self.W = words
        self.mem = [0] * words
        self.op = self.tag = self.dptr = self.status = self.result = 0
        self.lba = self.nlb = self.aux = 0
        self.hwr = Merge(True)
        self.cpl = Merge(False)
        self.reset()
        self.known = False                 # outputs predictable: after the first reset edge

    def reset(self) -> None:
        """`rst`: IDLE, counters 0, no lock, turn flags 0."""
        self.st = IDLE
        self.wi = 0
        self.ri = 0
        self.hwr.reset()
        self.cpl.reset()
        self.known = True

    def mbox_hwr(self) -> dict | None:
        if self.st != XFER:
            return None
        return {"addr": self.dptr, "data": self.mem[self.ri] if self.ri < self.wi else 0,
                "last": int(self.ri == self.W - 1)}

    def mbox_cpl(self) -> dict | None:
        if self.st != CPL:
            return None
        return {"tag": self.tag, "status": self.status, "result": self.result}

    def edge(self, adm_cmd: tuple | None, push: int | None, done: tuple | None,
             hwr: tuple, cpl: tuple) -> None:
        """adm_cmd: (op, tag, dptr, lba, nlb, aux) of an admin descriptor offered at this edge; push: adm_wdata if
        adm_wdata_we; done: (status, result) if adm_done_we; hwr / cpl: (chosen, valid, ready,
        last) of the merge in the cycle ending here."""
        mb_h = self.st == XFER
        mb_c = self.st == CPL
        if self.st == IDLE:
            if adm_cmd is not None:
                self.op, self.tag, self.dptr, self.lba, self.nlb, self.aux = adm_cmd
                self.wi = self.ri = 0
                self.st = FW
        elif self.st == FW:
            if push is not None and self.wi < self.W:
                self.mem[self.wi] = push
                self.wi += 1
            if done is not None:
                self.status, self.result = done
                self.st = XFER if self.status == 0 and self.op != FEATURE else CPL
        elif self.st == XFER:
            if hwr[0] == MBOX and hwr[2]:
                self.ri += 1
                if self.ri == self.W:
                    self.st = CPL
        elif self.st == CPL:
            if cpl[0] == MBOX and cpl[2]:
                self.st = IDLE
        self.hwr.edge(hwr[0], mb_h, *hwr[1:])
        self.cpl.edge(cpl[0], mb_c, *cpl[1:])


# ------------------------------------------------------------------------------------ firmware
class Firmware:
    """The behavioural firmware, run at every rising edge after the monitor. It polls
    `adm_pending` (the value of the cycle that ends at the edge): seen high while no command is in
    hand, it takes the next admin descriptor the TB saw accepted on s_cmd, checks `adm_op`/`adm_tag`
    against it, waits a random poll latency, pushes its words (random idle between pushes in bp
    mode), then pulses done (the last push sometimes in the same cycle). Pulses outside FW
    (`noise`): only in cycles the model knows are not FW (the state after this edge)."""

    def __init__(self, tb: "TB"):
        self.tb = tb
        d = tb.dut
        self.h = SimpleNamespace(pend=d.adm_pending, op=d.adm_op, tag=d.adm_tag, lba=d.adm_lba,
                                 lba_hi=d.adm_lba_hi, nlb=d.adm_nlb, aux=d.adm_aux, we=d.adm_wdata_we,
                                 wdata=d.adm_wdata, dwe=d.adm_done_we, status=d.adm_done_status,
                                 result=d.adm_done_result)
        self.cur: dict | None = None       # the command in hand
        self.d_push: int | None = None     # what is driven for the cycle ending at the next edge
        self.d_done: tuple | None = None
        self.plans: deque[dict] = deque()  # forced plans (pushes_and_status), else random
        self.noise_p = {IDLE: 0.06, XFER: 0.06, CPL: 0.5}   # CPL is short: more often
        self.done_count = 0

    def abort(self) -> None:
        self.cur = None
        self.drive(None, None)

    def drive(self, push: int | None, done: tuple | None) -> None:
        h = self.h
        if push is not None:
            h.we.value = 1
            h.wdata.value = push
        elif self.d_push is not None:
            h.we.value = 0
        if done is not None:
            h.dwe.value = 1
            h.status.value, h.result.value = done
        elif self.d_done is not None:
            h.dwe.value = 0
        self.d_push, self.d_done = push, done

    def rand_plan(self) -> dict:
        rng, W = self.tb.rng, self.tb.W
        r = rng.random()
        n = (0 if r < 0.1 else W if r < 0.25 else W + rng.randint(1, EXTRA) if r < 0.4
             else rng.randint(1, 3) if r < 0.55 else rng.randint(1, W))
        status = 0 if rng.random() < 0.8 else rng.choice([1, 2, 0x80, 0xFF, rng.randint(1, 255)])
        # in turn, one plan in 8 each: no word, exactly W, more than W, a failed status (the w128
        # builds answer about 30 commands: the random shares could miss one)
        self.n_plan = getattr(self, "n_plan", 0) + 1
        k = self.n_plan % 8
        if k == 1:
            n = 0
        elif k == 3:
            n = W
        elif k == 5:
            n = W + 1 + (self.n_plan // 8) % EXTRA
        elif k == 7 and not status:
            status = 0x80
        return {"n": n, "status": status, "at_done": n > 0 and rng.random() < 0.3}

    def start(self) -> None:
        tb, rng = self.tb, self.tb.rng
        if not tb.adm_taken:
            tb.fail("adm_pending high, but no admin descriptor was taken on s_cmd")
        desc = tb.adm_taken.popleft()
        op, tag = int(self.h.op.value), int(self.h.tag.value)
        if (op, tag) != (desc["op"], desc["tag"]):
            tb.fail(f"firmware: adm_op/adm_tag = {op}/{tag:#x}, the admin descriptor taken was "
                    f"op {desc['op']} tag {desc['tag']:#x}")
        got = (int(self.h.lba.value), int(self.h.lba_hi.value), int(self.h.nlb.value), int(self.h.aux.value))
        want = (desc["lba"] & 0xFFFFFFFF, int(desc["lba"] >> 32 != 0), desc["nlb"], desc["aux"])
        if got != want:
            tb.fail(f"firmware: adm_lba/adm_lba_hi/adm_nlb/adm_aux = {got}, the admin descriptor taken "
                    f"has {want}")
        if desc["lba"] >> 32:                     # coverage: an admin descriptor's lba[47:32] seen set
            tb.cov["lba_hi"] += 1
        plan = self.plans.popleft() if self.plans else self.rand_plan()
        words = [rng.choice([0, 0xFFFFFFFF, rng.getrandbits(32)]) if rng.random() < 0.1
                 else rng.getrandbits(32) for _ in range(plan["n"])]
        self.cur = {"desc": desc, "words": words, "i": 0, "pushed": [],
                    "delay": rng.randint(0, 10), **plan,
                    "result": (ADM_MARK << 28) | rng.getrandbits(28)}
        tb.cov[f"adm_op{op}"] += 1

    def step(self) -> tuple:
        """(push, done) for the next cycle, which is FW."""
        c, rng = self.cur, self.tb.rng
        if c["delay"] > 0:
            c["delay"] -= 1
            return None, None
        if self.tb.bp and rng.random() < 0.3:
            return None, None
        n = c["n"]
        if c["i"] < n - int(c["at_done"]):
            c["i"] += 1
            return c["words"][c["i"] - 1], None
        push = c["words"][n - 1] if c["at_done"] else None
        return push, (c["status"], c["result"])

    def finish(self) -> None:
        tb, c, W = self.tb, self.cur, self.tb.W
        pushed = c["pushed"]
        assert pushed == c["words"], "firmware bookkeeping: pushed words differ from the plan"
        d = c["desc"]
        rec = {"tag": d["tag"], "op": d["op"], "dptr": d["dptr"], "status": c["status"],
               "result": c["result"], "n": len(pushed),
               "words": [pushed[i] if i < len(pushed) else 0 for i in range(W)]
               if c["status"] == 0 and d["op"] != FEATURE else None, "burst_cycle": None}
        tb.exp_adm_cpl.append(rec)
        if c["status"] == 0 and d["op"] != FEATURE:
            tb.exp_adm_bursts.append(rec)
        elif c["status"] == 0:
            tb.cov["feature_ok"] += 1
        else:
            tb.cov["adm_failed"] += 1
        tb.cov["pushes_0" if not pushed else "pushes_W" if len(pushed) == W
               else "pushes_over_W" if len(pushed) > W else "pushes_part"] += 1
        if c["at_done"]:
            tb.cov["push_at_done" + ("_dropped" if len(pushed) > W else "")] += 1
        self.cur = None
        self.done_count += 1

    def edge(self) -> None:
        tb = self.tb
        if tb.in_reset:
            return
        pend = int(self.h.pend.value)
        finished = False
        # what was driven in the cycle that ends here
        if self.d_push is not None:
            if self.cur is not None:
                self.cur["pushed"].append(self.d_push)
            elif pend:
                tb.fail("testbench: a noise push fell in FW")
        if self.d_done is not None:
            if self.cur is not None:
                self.finish()
                finished = True
            elif pend:
                tb.fail("testbench: a noise done fell in FW")
        if self.cur is None and pend and not finished:
            self.start()
        push = done = None
        if self.cur is not None:
            push, done = self.step()
        elif tb.model.st != FW and tb.rng.random() < self.noise_p[tb.model.st]:
            rng = tb.rng
            r = rng.random()
            if r < 0.6 or r > 0.85:
                push = rng.getrandbits(32)
            if r >= 0.6:
                done = (rng.choice([0, 0, 1, 0xFF]), rng.getrandbits(32))
        self.drive(push, done)


# ------------------------------------------------------------------------------------ testbench
def cmd_sink(dut, clk, pause) -> StreamSink:
    """The core's end of m_cmd: m_cmd_valid / m_cmd_ready, with the descriptor fields the core sees
    (s_cmd_*, wired to the core outside the module) as payload: collected at each handshake and
    checked for stability."""
    s = StreamSink(dut, "m_cmd", clk, [], pause)
    s.fields = {f: getattr(dut, f"s_cmd_{f}") for f in CMD_FIELDS}
    s.stab.fields = list(CMD_FIELDS)
    return s


class TB:
    def __init__(self, dut, seed: int, mode: str = MODE, core_gaps: bool = True):
        self.dut = dut
        self.rng = rng = random.Random(seed)
        self.mode = mode
        self.bp = mode != "plain"
        self.W = int(dut.WORDS.value)
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.adm_wdata_we.value = 0
        dut.adm_done_we.value = 0
        dut.adm_wdata.value = 0
        dut.adm_done_status.value = 0
        dut.adm_done_result.value = 0
        gaps = self.bp and core_gaps
        self.cmd = StreamSource(dut, "s_cmd", dut.clk, CMD_FIELDS, pause_gen(rng, self.bp))
        self.cmd.on_accept = self._cmd_taken
        self.s_cpl = StreamSource(dut, "s_cpl", dut.clk, CPL_FIELDS, pause_gen(rng, gaps))
        self.s_hwr = StreamSource(dut, "s_hwr", dut.clk, HWR_FIELDS, pause_gen(rng, gaps))
        self.m_cmd = cmd_sink(dut, dut.clk, pause_gen(rng, self.bp))
        self.m_cpl = StreamSink(dut, "m_cpl", dut.clk, CPL_FIELDS, pause_gen(rng, self.bp))
        self.m_hwr = StreamSink(dut, "m_hwr", dut.clk, HWR_FIELDS, pause_gen(rng, self.bp))
        self.model = AdminModel(self.W)
        self.fw = Firmware(self)
        self.cov = Counter()
        self.cycle = 0
        self.rst_q = 1
        self.in_reset = True
        # transaction level
        self.exp_cmds: deque[tuple] = deque()      # non-admin descriptors sent, not yet on m_cmd
        self.adm_taken: deque[dict] = deque()      # admin descriptors taken, not yet seen by the firmware
        self.exp_core_cpl: deque[dict] = deque()
        self.exp_core_bursts: deque[dict] = deque()
        self.exp_adm_cpl: deque[dict] = deque()    # admin commands done by the firmware
        self.exp_adm_bursts: deque[dict] = deque()  # ... with status 0 (a burst is due)
        self.obu: dict | None = None               # burst being received on m_hwr
        self.adm_sent = 0                          # admin descriptors queued on s_cmd since reset
        self.adm_out = 0                           # admin completions seen on m_cpl since reset
        self.fair = {"hwr_bursts": 0, "cpl_beats": 0, "hwr_wait": 0, "cpl_wait": 0}
        self.max_fair = Counter()
        self.h = SimpleNamespace(
            **{n: getattr(dut, n) for n in (
                "rst", "adm_pending", "adm_op", "adm_tag", "adm_wdata_we", "adm_wdata",
                "adm_done_we", "adm_done_status", "adm_done_result", "s_cmd_valid", "s_cmd_ready",
                "s_cmd_op", "s_cmd_tag", "s_cmd_dptr", "s_cmd_lba", "s_cmd_nlb", "s_cmd_aux",
                "m_cmd_valid", "m_cmd_ready",
                "s_cpl_valid", "s_cpl_ready", "m_cpl_valid", "m_cpl_ready",
                "s_hwr_valid", "s_hwr_ready", "m_hwr_valid", "m_hwr_ready")},
            s_cpl={f: getattr(dut, f"s_cpl_{f}") for f in CPL_FIELDS},
            m_cpl={f: getattr(dut, f"m_cpl_{f}") for f in CPL_FIELDS},
            s_hwr={f: getattr(dut, f"s_hwr_{f}") for f in HWR_FIELDS},
            m_hwr={f: getattr(dut, f"m_hwr_{f}") for f in HWR_FIELDS})
        every_edge(dut.clk, self._edge)        # after the stream ends: their beats of this edge are in
        every_edge(dut.clk, self.fw.edge)      # after the monitor: the model's state is the next cycle's

    # -------------------------------------------------------------- per-edge monitor (model)
    def fail(self, msg: str):
        m = self.model
        raise AssertionError(
            f"edge {self.cycle} ({get_sim_time('ns'):.0f} ns), model state {m.st} (wi {m.wi}, ri {m.ri}), "
            f"m_hwr lock {m.hwr.lock} turn {int(m.hwr.turn)}, m_cpl lock {m.cpl.lock} turn "
            f"{int(m.cpl.turn)}: {msg}")

    def _merge(self, name: str, mg: Merge, mb: dict | None, hv, hr, hs_v, hs_r, hm: dict, hs: dict,
               cov: Counter) -> tuple:
        """Check one merge's outputs in this cycle; returns (chosen, valid, ready, last, payload)."""
        cv = int(hs_v.value)
        chosen = mg.choose(mb is not None, cv)
        ov = int(hv.value)
        ev = cv if chosen == CORE else int(mb is not None)
        why = (f"locked to {mg.lock}" if mg.lock else
               f"unlocked, mailbox {'offers' if mb else 'idle'}, s_{name}_valid {cv}, turn {int(mg.turn)}")
        if ov != ev:
            self.fail(f"m_{name}_valid = {ov}, README: {ev} (chosen source {chosen}: {why})")
        ready = int(hr.value)
        sr = int(hs_r.value)
        esr = ready if chosen == CORE else 0
        if sr != esr:
            self.fail(f"s_{name}_ready = {sr}, README: {esr} (m_{name}_ready {ready}, s_{name}_valid {cv}, "
                      f"chosen source {chosen}: {why})")
        last = 0
        got = None
        if ov:
            got = {f: int(x.value) for f, x in hm.items()}
            exp = {f: int(x.value) for f, x in hs.items()} if chosen == CORE else mb
            if got != exp:
                f = next(f for f in got if got[f] != exp[f])
                self.fail(f"m_{name}_{f} = {got[f]:#x}, README: {exp[f]:#x} (from {chosen}; "
                          f"whole beat {got}, expected {exp})")
            last = got.get("last", 0)
            if not ready:
                cov[f"m_{name}_stall"] += 1
        if mg.lock is None and mb is not None and cv:
            cov[f"{name}_contend_{'turn' if mg.turn else 'core_first'}"] += 1
        if mg.lock is not None and mb is not None and not ev:
            cov[f"{name}_locked_gap"] += 1     # a gap inside the core's burst: the mailbox waits
        return chosen, ov, ready, last, got

    def _edge(self) -> None:
        """One rising edge: check the outputs of the cycle that ends here against the model, then
        feed the model the inputs sampled here; then the transaction-level checks."""
        h, m, cov = self.h, self.model, self.cov
        self.cycle += 1
        if int(h.rst.value):
            if not self.rst_q and m.known:
                cov[f"reset_in_{m.st}"] += 1
                if m.hwr.turn or m.cpl.turn:
                    cov["reset_with_turn"] += 1
                if m.hwr.lock or m.cpl.lock:
                    cov["reset_with_lock"] += 1
            self.rst_q = 1
            m.reset()
            return
        self.rst_q = 0
        if not m.known:
            return
        st = m.st
        # ---- firmware side
        pend = int(h.adm_pending.value)
        if pend != int(st == FW):
            self.fail(f"adm_pending = {pend}, README: {int(st == FW)} (high in FW only)")
        if st == FW:
            op, tag = int(h.adm_op.value), int(h.adm_tag.value)
            if (op, tag) != (m.op, m.tag):
                self.fail(f"adm_op/adm_tag = {op}/{tag:#x}, latched {m.op}/{m.tag:#x}")
        push = int(h.adm_wdata.value) if int(h.adm_wdata_we.value) else None
        done = ((int(h.adm_done_status.value), int(h.adm_done_result.value))
                if int(h.adm_done_we.value) else None)
        if st != FW and (push is not None or done is not None):
            cov[f"noise_{st}"] += 1
        if st == FW and push is not None and m.wi >= m.W:
            cov["push_dropped"] += 1
        # ---- descriptors
        cmd_v = int(h.s_cmd_valid.value)
        is_adm = False
        adm_cmd = None
        if cmd_v:
            op = int(h.s_cmd_op.value)
            is_adm = op in ADMIN_OPS
            rdy = int(h.s_cmd_ready.value)
            mr = int(h.m_cmd_ready.value)
            exp = int(st == IDLE) if is_adm else mr
            if rdy != exp:
                self.fail(f"s_cmd_ready = {rdy} for a {'admin' if is_adm else 'non-admin'} descriptor "
                          f"(op {op}), README: {exp} ({'IDLE only' if is_adm else 'm_cmd_ready'})")
            if is_adm:
                if st == IDLE:
                    adm_cmd = (op, int(h.s_cmd_tag.value), int(h.s_cmd_dptr.value), int(h.s_cmd_lba.value),
                               int(h.s_cmd_nlb.value), int(h.s_cmd_aux.value))
                    if push is not None or done is not None:
                        cov["noise_at_accept"] += 1
                else:
                    cov["adm_waits"] += 1
            elif st != IDLE and mr:
                cov[f"core_cmd_in_{st}"] += 1
            elif not mr:
                cov["m_cmd_stall"] += 1
        mcv = int(h.m_cmd_valid.value)
        if mcv != int(cmd_v and not is_adm):
            self.fail(f"m_cmd_valid = {mcv}, README: {int(cmd_v and not is_adm)} "
                      f"(s_cmd_valid {cmd_v}{', admin op' if is_adm else ''})")
        # ---- merges
        mb_h, mb_c = m.mbox_hwr(), m.mbox_cpl()
        hwr = self._merge("hwr", m.hwr, mb_h, h.m_hwr_valid, h.m_hwr_ready, h.s_hwr_valid,
                          h.s_hwr_ready, h.m_hwr, h.s_hwr, cov)
        cpl = self._merge("cpl", m.cpl, mb_c, h.m_cpl_valid, h.m_cpl_ready, h.s_cpl_valid,
                          h.s_cpl_ready, h.m_cpl, h.s_cpl, cov)
        # ---- fairness: what the core gets while the mailbox offers (README: the turn flag)
        fr = self.fair
        if mb_h is not None and m.ri == 0:
            fr["hwr_wait"] += 1
            if hwr[0] == CORE and hwr[1] and hwr[2] and hwr[3]:
                fr["hwr_bursts"] += 1             # a core burst ended while the mailbox's burst waited
                if fr["hwr_bursts"] > 2:
                    self.fail("fairness: a third core burst ended on m_hwr while the mailbox's burst was "
                              "waiting (the one in progress, then one more: the turn flag gives the "
                              "mailbox the next choice)")
            if hwr[0] == MBOX and hwr[2]:
                self.max_fair["hwr_bursts"] = max(self.max_fair["hwr_bursts"], fr["hwr_bursts"])
                self.max_fair["hwr_wait"] = max(self.max_fair["hwr_wait"], fr["hwr_wait"])
                fr["hwr_bursts"] = fr["hwr_wait"] = 0
        if mb_c is not None:
            fr["cpl_wait"] += 1
            if cpl[0] == CORE and cpl[1] and cpl[2]:
                fr["cpl_beats"] += 1
                if fr["cpl_beats"] > 2:
                    self.fail("fairness: a third core completion taken on m_cpl while the mailbox's "
                              "completion was waiting")
            if cpl[0] == MBOX and cpl[2]:
                self.max_fair["cpl_beats"] = max(self.max_fair["cpl_beats"], fr["cpl_beats"])
                self.max_fair["cpl_wait"] = max(self.max_fair["cpl_wait"], fr["cpl_wait"])
                fr["cpl_beats"] = fr["cpl_wait"] = 0
        m.edge(adm_cmd, push if st == FW else None, done if st == FW else None,
               hwr[:4], cpl[:4])
        if st != m.st:
            cov[f"{st}->{m.st}"] += 1
        self._txn()

    # -------------------------------------------------------------- transaction level
    def _txn(self) -> None:
        """The beats the sinks took at this edge against what the TB sent and the firmware answered."""
        q = self.m_cmd.queue
        while q:
            b = q.popleft()
            got = tuple(b[f] for f in CMD_FIELDS)
            if b["op"] in ADMIN_OPS:
                self.fail(f"admin descriptor op {b['op']} tag {b['tag']:#x} reached the core (m_cmd)")
            if not self.exp_cmds:
                self.fail(f"descriptor {got} on m_cmd that was not sent (or a duplicate)")
            exp = self.exp_cmds.popleft()
            if got != exp:
                self.fail(f"m_cmd descriptor (op, tag, dptr, lba, nlb, aux) = {got}, next sent was {exp} "
                          f"(lost, duplicated or reordered)")
            self.cov[f"cmd_op{b['op']}"] += 1
        q = self.m_hwr.queue
        while q:
            self._hwr_beat(q.popleft())
        q = self.m_cpl.queue
        while q:
            self._cpl_beat(q.popleft())

    def _hwr_beat(self, b: dict) -> None:
        ob = self.obu
        if ob is None:                      # first beat of a burst
            adm = marked(b["addr"])
            src = self.exp_adm_bursts if adm else self.exp_core_bursts
            if not src:
                self.fail(f"m_hwr burst at addr {b['addr']:#x} from the {'mailbox' if adm else 'core'} "
                          f"that nobody sent (a duplicate, or an admin burst for a failed command)")
            ob = self.obu = {"adm": adm, "addr": b["addr"], "i": 0, "rec": src[0]}
        who = "admin" if ob["adm"] else "core"
        if b["addr"] != ob["addr"]:
            self.fail(f"m_hwr beat {ob['i']} of a {who} burst at {ob['addr']:#x} has addr {b['addr']:#x}: "
                      f"another source's beat inside the burst (or addr not constant)")
        i, rec = ob["i"], ob["rec"]
        if ob["adm"]:
            if rec["dptr"] != b["addr"]:
                self.fail(f"admin burst addr {b['addr']:#x}, the command's dptr is {rec['dptr']:#x}")
            if i >= self.W:
                self.fail(f"admin burst longer than WORDS = {self.W}")
            exp = (rec["words"][i], int(i == self.W - 1))
            what = f"word {i} (pushed {rec['n']})" if i < rec["n"] else f"word {i} (beyond the {rec['n']} pushed: 0)"
        else:
            if i >= len(rec["beats"]):
                self.fail(f"core burst at {ob['addr']:#x} longer than the {len(rec['beats'])} beats sent")
            exp = rec["beats"][i]
            what = f"core beat {i} of {len(rec['beats'])}"
        got = (b["data"], b["last"])
        if got != exp:
            self.fail(f"m_hwr {who} burst at {ob['addr']:#x}, {what}: (data, last) = "
                      f"({got[0]:#010x}, {got[1]}), expected ({exp[0]:#010x}, {exp[1]})")
        ob["i"] += 1
        if b["last"]:
            if ob["adm"]:
                self.exp_adm_bursts.popleft()
                rec["burst_cycle"] = self.cycle
                self.cov["adm_bursts"] += 1
            else:
                self.exp_core_bursts.popleft()
                self.cov["core_bursts"] += 1
            self.obu = None

    def _cpl_beat(self, b: dict) -> None:
        if marked(b["result"]):
            if not self.exp_adm_cpl:
                self.fail(f"admin completion {b} on m_cpl that the firmware did not give (or a duplicate)")
            rec = self.exp_adm_cpl.popleft()
            exp = {"tag": rec["tag"], "status": rec["status"], "result": rec["result"]}
            if rec["words"] is not None and (rec["burst_cycle"] is None or rec["burst_cycle"] >= self.cycle):
                self.fail(f"admin completion (tag {rec['tag']:#x}) before the last beat of its burst")
            self.adm_out += 1
            self.cov["adm_cpls"] += 1
        else:
            if not self.exp_core_cpl:
                self.fail(f"core completion {b} on m_cpl that the core did not send (or a duplicate)")
            exp = self.exp_core_cpl.popleft()
            self.cov["core_cpls"] += 1
        got = {f: b[f] for f in CPL_FIELDS}
        if got != exp:
            self.fail(f"m_cpl completion {got}, expected {exp} (lost, duplicated or reordered)")

    def _cmd_taken(self, item: dict, cycle: int) -> None:
        if item["op"] in ADMIN_OPS:
            self.adm_taken.append(item)

    # -------------------------------------------------------------- stimulus
    def send_admin(self, op: int | None = None, lba: int | None = None) -> None:
        rng = self.rng
        op = rng.choice(ADMIN_OPS) if op is None else op
        f = self.rand_fields()
        if lba is not None:
            f["lba"] = lba
        self.cmd.send_nowait(op=op, tag=rng.getrandbits(8), dptr=(ADM_MARK << 28) | rng.getrandbits(28), **f)
        self.adm_sent += 1

    def send_core_cmd(self) -> None:
        rng = self.rng
        f = self.rand_fields()
        d = (rng.choice(CORE_OPS), rng.getrandbits(8), rng.getrandbits(32), f["lba"], f["nlb"], f["aux"])
        self.cmd.send_nowait(**dict(zip(CMD_FIELDS, d)))
        self.exp_cmds.append(d)

    def rand_fields(self) -> dict:
        """lba / nlb / aux of a descriptor: FEATURE's shapes (a FID, 0 or 1, a value) and any
        others (lba above 32 bits, large nlb)"""
        rng = self.rng
        lba = rng.choice([0xC0, rng.randint(0xC0, 0xFF), rng.getrandbits(32), rng.getrandbits(48),
                          1 << rng.randint(32, 47)])
        nlb = rng.choice([0, 1, 1, rng.getrandbits(16)])
        aux = rng.choice([0, rng.getrandbits(16), rng.getrandbits(32), 0xFFFFFFFF])
        return {"lba": lba, "nlb": nlb, "aux": aux}

    def send_core_cpl(self) -> None:
        rng = self.rng
        c = {"tag": rng.getrandbits(8), "status": rng.choice([0, 0, 0, 1, 0xFF, rng.getrandbits(8)]),
             "result": unmarked(rng.getrandbits(32))}
        self.s_cpl.send_nowait(**c)
        self.exp_core_cpl.append(c)

    def send_core_burst(self, n: int | None = None) -> None:
        rng = self.rng
        if n is None:
            r = rng.random()
            n = 1 if r < 0.2 else rng.randint(2, 8) if r < 0.7 else rng.randint(9, 40)
        addr = unmarked(rng.getrandbits(32))
        beats = [(rng.getrandbits(32), int(i == n - 1)) for i in range(n)]
        for d, last in beats:
            self.s_hwr.send_nowait(addr=addr, data=d, last=last)
        self.exp_core_bursts.append({"addr": addr, "beats": beats})

    def adm_time(self) -> int:
        """Rough cycles of one admin command (pushes, burst, completion)."""
        return int((2.5 if self.bp else 1.3) * self.W) + 30

    async def cmd_traffic(self, n_adm: int, gap: int = 8, p_adm: float | None = None) -> None:
        """Random descriptors: non-admin ones (every op but 9, 10) and `n_adm` admin ones among them
        (about one per admin command time, sometimes two in a row: the second waits)."""
        rng = self.rng
        p_adm = p_adm if p_adm is not None else min(0.35, max(0.02, 1.2 * gap / 2 / self.adm_time()))
        k = 0
        while k < n_adm:
            while len(self.cmd.queue) > 6:
                await RisingEdge(self.dut.clk)
            if rng.random() < p_adm:
                for _ in range(2 if rng.random() < 0.2 and k + 1 < n_adm else 1):
                    self.send_admin()
                    k += 1
            else:
                self.send_core_cmd()
            await self.edges(rng.randint(0, gap))

    async def core_traffic(self, gap: int = 12, p_cpl: float = 0.5, p_burst: float = 0.35,
                           keep: tuple | None = None) -> None:
        """The core's completions and bursts at random times; `keep` = (completions, bursts):
        keep at least that many queued (back to back)."""
        rng = self.rng
        while True:
            if keep:
                while len(self.s_cpl.queue) < keep[0]:
                    self.send_core_cpl()
                while len(self.exp_core_bursts) < keep[1]:
                    self.send_core_burst()
                await RisingEdge(self.dut.clk)
                continue
            if rng.random() < p_cpl and len(self.s_cpl.queue) < 8:
                self.send_core_cpl()
            if rng.random() < p_burst and len(self.s_hwr.queue) < 64:
                self.send_core_burst()
            await self.edges(rng.randint(0, gap))

    async def edges(self, n: int = 1) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    async def wait_until(self, cond, cycles: int, what: str) -> None:
        for _ in range(cycles):
            if cond():
                return
            await RisingEdge(self.dut.clk)
        if not cond():
            raise AssertionError(f"timeout ({cycles} cycles) waiting for {what}; {self.pending_str()}")

    def pending_str(self) -> str:
        return (f"model {self.model.st}, cmd queue {len(self.cmd.queue)}, exp cmds {len(self.exp_cmds)}, "
                f"admin taken {len(self.adm_taken)}, firmware {'busy' if self.fw.cur else 'idle'}, "
                f"core cpls {len(self.exp_core_cpl)}, core bursts {len(self.exp_core_bursts)}, "
                f"admin cpls {len(self.exp_adm_cpl)}, admin bursts {len(self.exp_adm_bursts)}, "
                f"admin sent {self.adm_sent} out {self.adm_out}")

    def quiet(self) -> bool:
        return (not self.cmd.queue and not self.cmd._driving and not self.exp_cmds
                and not self.s_cpl.queue and not self.s_hwr.queue and not self.exp_core_cpl
                and not self.exp_core_bursts and not self.adm_taken and self.fw.cur is None
                and not self.exp_adm_cpl and not self.exp_adm_bursts and self.obu is None
                and self.adm_out == self.adm_sent and self.model.st == IDLE)

    async def drain(self, tasks=()) -> None:
        """Stop the traffic tasks and wait until every descriptor, completion and burst sent is out."""
        for t in tasks:
            t.cancel()
        await self.wait_until(self.quiet, 200 * self.W + 40 * len(self.s_hwr.queue) + 20_000,
                              "everything sent to come out")

    # -------------------------------------------------------------- reset
    async def reset(self, cycles: int = 3) -> None:
        """rst (synchronous) for `cycles` edges: the sources drop what they had, the firmware
        drops its command, the expectations start over."""
        d = self.dut
        await Timer(1, unit="ns")           # past the edge: its handshakes are booked
        self.in_reset = True
        for s in (self.cmd, self.s_cpl, self.s_hwr):
            s.flush()
        self.fw.abort()
        d.rst.value = 1
        await self.edges(cycles)
        await Timer(1, unit="ns")           # past the last reset edge: its beats are booked (dropped here)
        for s in (self.m_cmd, self.m_cpl, self.m_hwr):
            s.queue.clear()
        for q in (self.exp_cmds, self.adm_taken, self.exp_core_cpl, self.exp_core_bursts,
                  self.exp_adm_cpl, self.exp_adm_bursts):
            q.clear()
        self.obu = None
        self.adm_sent = self.adm_out = 0
        self.fair.update(hwr_bursts=0, cpl_beats=0, hwr_wait=0, cpl_wait=0)
        d.rst.value = 0
        self.in_reset = False
        await RisingEdge(d.clk)
        # the cycle after reset: IDLE, nothing offered by the mailbox (the sources are idle)
        for name in ("adm_pending", "m_hwr_valid", "m_cpl_valid", "m_cmd_valid"):
            v = int(getattr(d, name).value)
            assert v == 0, f"the cycle after reset: {name} = {v}"

    # -------------------------------------------------------------- reporting
    def report(self, name: str) -> None:
        self.dut._log.info(f"{name} [{self.mode}, WORDS {self.W}]: {self.cycle} edges, "
                           f"fairness max {dict(self.max_fair)}, coverage {dict(sorted(self.cov.items()))}")

    def assert_cov(self, keys) -> None:
        for k, v in keys.items():
            assert self.cov[k] >= v, f"coverage {k} = {self.cov[k]} < {v}: {dict(self.cov)}"

    def assert_backpressure(self) -> None:
        if self.bp:
            for s in (self.m_cmd, self.m_cpl, self.m_hwr):
                assert s.stable_checks > 0, f"no stalled beat checked on {s.name}"
            self.assert_cov({"m_hwr_stall": 1, "m_cpl_stall": 1, "m_cmd_stall": 1})


def _seed() -> int:
    return int(os.environ.get("ATS_SEED", "1")) * 7919


def n_admin(W: int) -> int:
    base = 200 if W <= 16 else 30
    return base * 4 if LONG else base


# ------------------------------------------------------------------------------------ tests
@cocotb.test()
async def random_mix(dut):
    """Random descriptors (every op; admin ones about one per admin command time, sometimes two in a
    row), the core's completions and bursts at random times, the firmware answering each admin
    command with random pushes and statuses and pulsing outside FW."""
    tb = TB(dut, _seed() + 1)
    await tb.reset()
    tasks = [cocotb.start_soon(tb.core_traffic())]
    await tb.cmd_traffic(n_admin(tb.W))
    await tb.drain(tasks)
    # every op at least once: a last round of descriptors of each op, then drain again
    for op in CORE_OPS:
        d = dict(op=op, tag=tb.rng.getrandbits(8), dptr=tb.rng.getrandbits(32), **tb.rand_fields())
        tb.cmd.send_nowait(**d)
        tb.exp_cmds.append(tuple(d[f] for f in CMD_FIELDS))
    tb.fw.plans.extend([{"n": 0, "status": 0, "at_done": False}, {"n": 3, "status": 0, "at_done": True}])
    tb.send_admin(FEATURE)                 # OK without a word, and with words pushed: no burst either way
    tb.send_admin(FEATURE, lba=(1 << 32) | 0xC0)                 # bit 32 alone: adm_lba_hi
    tb.send_admin(IDENTIFY)
    tb.send_admin(GET_LOG)
    await tb.drain()
    tb.report("random_mix")
    tb.assert_cov({f"cmd_op{o}": 1 for o in CORE_OPS})
    tb.assert_cov({"adm_op9": 1, "adm_op10": 1, "adm_op11": 1, "feature_ok": 2, "lba_hi": 1, "adm_waits": 1, "core_cmd_in_FW": 1,
                   "adm_failed": 1, "pushes_0": 1, "pushes_W": 1, "pushes_over_W": 1, "pushes_part": 1,
                   "push_at_done": 1, "noise_IDLE": 1, "noise_XFER": 1, "noise_CPL": 1,
                   "adm_bursts": 3, "core_bursts": 5, "core_cpls": 5})
    tb.assert_backpressure()


@cocotb.test()
async def pushes_and_status(dut):
    """The firmware's corner cases, one admin command at a time with core traffic running: all
    WORDS words, then 2 (the stale words beyond must read 0), none, WORDS + 3 with a push in the
    done cycle (dropped), WORDS - 1 plus a push in the done cycle (the last word), a failed command
    with pushes (no burst), a failed one without; then two admin descriptors back to back (the
    second waits; the second answer's stale words read 0); then firmware pulses in every IDLE
    cycle, including the one in which an admin descriptor is taken."""
    tb = TB(dut, _seed() + 2)
    await tb.reset()
    W = tb.W
    plans = [(W, 0, False), (2, 0, False), (0, 0, False), (W + 3, 0, True), (W, 0, True),
             (W, 5, False), (0, 0xFF, False), (1, 0, True), (W - 1, 0, False), (3, 0x80, True)]
    tasks = [cocotb.start_soon(tb.core_traffic())]
    for n, status, at_done in plans:
        tb.fw.plans.append({"n": n, "status": status, "at_done": at_done})
        tb.send_admin()
        await tb.wait_until(lambda: tb.adm_out == tb.adm_sent, 60 * W + 4000, "the admin command")
    for _ in range(3):
        tb.fw.plans.extend([{"n": W, "status": 0, "at_done": False}, {"n": 1, "status": 0, "at_done": False}])
        tb.send_admin()
        tb.send_admin()
        await tb.wait_until(lambda: tb.adm_out == tb.adm_sent, 120 * W + 8000, "the admin commands")
    # pulses in every IDLE cycle, so also in the cycle an admin descriptor is taken: ignored
    tb.fw.noise_p[IDLE] = 1.0
    for _ in range(3):
        tb.send_admin()
        await tb.wait_until(lambda: tb.adm_out == tb.adm_sent, 60 * W + 4000, "the admin command")
    tb.fw.noise_p[IDLE] = 0.06
    await tb.drain(tasks)
    tb.report("pushes_and_status")
    tb.assert_cov({"adm_failed": 3, "push_at_done": 2, "push_at_done_dropped": 1, "push_dropped": 3,
                   "pushes_0": 2, "adm_waits": 3, "noise_at_accept": 3})


@cocotb.test()
async def fairness(dut):
    """The core offers completions and bursts back to back (no valid gaps, always something queued):
    the mailbox's burst and completion still get out, after at most two core bursts / two core
    completions (the one in progress, then the turn flag); bounded time per admin command."""
    tb = TB(dut, _seed() + 3, core_gaps=False)
    await tb.reset()
    W = tb.W
    tasks = [cocotb.start_soon(tb.core_traffic(keep=(3, 3)))]
    n = 8 if W > 16 else 20
    n = 4 * n if LONG else n
    for i in range(n):
        tb.send_admin(tb.rng.choice((IDENTIFY, GET_LOG)) if i % 4 else FEATURE)   # FEATURE: no burst
        # bound: the answer (pushes + WORDS beats), up to two core bursts of 40, backpressure
        await tb.wait_until(lambda: tb.adm_out == tb.adm_sent, (4 if tb.bp else 2) * (3 * W + 100) + 200,
                            "the admin answer while the core offers back to back")
    await tb.drain(tasks)
    tb.report("fairness")
    tb.assert_cov({"hwr_contend_turn": 1, "cpl_contend_turn": 1, "hwr_contend_core_first": 1,
                   "cpl_contend_core_first": 1, "adm_bursts": n // 3})
    assert tb.max_fair["hwr_bursts"] >= 1 and tb.max_fair["cpl_beats"] >= 1, \
        f"the mailbox never waited behind the core: {dict(tb.max_fair)}"


@cocotb.test()
async def reset_mid(dut):
    """rst in IDLE (core traffic going), FW (words pushed, more to come), XFER (mid admin burst),
    CPL (the admin completion offered and not taken), inside a core burst, with the m_hwr turn flag
    set (the mailbox waiting behind a core burst), for 1-4 cycles: IDLE afterwards (adm_pending
    low), the next admin descriptor taken at the first edge it is offered, and the traffic after it
    checked in full (with the same core load: a lock or turn flag left over would show)."""
    tb = TB(dut, _seed() + 4)
    await tb.reset()
    rng, m, W = tb.rng, tb.model, tb.W
    fw = tb.fw
    conds = {
        IDLE: lambda: m.st == IDLE and (tb.s_hwr._driving or tb.s_cpl._driving),
        FW: lambda: m.st == FW and m.wi > 0 and fw.cur is not None and fw.cur["i"] + 3 < fw.cur["n"],
        XFER: lambda: m.st == XFER and 0 < m.ri <= max(1, W - 3),
        CPL: lambda: m.st == CPL,
        "core_burst": lambda: m.hwr.burst == CORE,
        "turn": lambda: m.hwr.turn and m.hwr.burst == CORE,
    }
    targets = list(conds) * (6 if LONG else 2)
    rng.shuffle(targets)
    never = itertools.repeat(True)
    for tgt in targets:
        heavy = tgt == "turn"
        if tgt == FW:                          # a long answer: still pushing when the reset comes
            fw.plans.append({"n": W + EXTRA, "status": 0, "at_done": False})
        if tgt == XFER:
            fw.plans.append({"n": rng.randint(0, W), "status": 0, "at_done": False})
        tasks = [cocotb.start_soon(tb.core_traffic(keep=(2, 2) if heavy else None)),
                 cocotb.start_soon(tb.cmd_traffic(10**6, p_adm=0.0 if tgt == IDLE else 0.3))]
        if tgt == CPL:
            tb.m_cpl.set_pause(never)          # CPL stays (the mailbox's completion, or a core one, held)
        await tb.wait_until(conds[tgt], 100 * W + 20_000, f"state {tgt} before the reset")
        if tgt in (IDLE, CPL):
            await tb.edges(rng.randint(0, 2))
        for t in tasks:
            t.cancel()
        fw.plans.clear()
        await tb.reset(rng.randint(1, 4))
        tb.cov[f"reset_target_{tgt}"] += 1
        tb.m_cpl.set_pause(pause_gen(rng, tb.bp))
        # the next admin descriptor: taken at the first edge it is offered
        tb.cmd.set_pause(None)
        tb.send_admin()
        await tb.edges(2)
        await Timer(1, unit="ns")
        assert tb.cmd.sent and tb.cmd.accept_cycles[-1] == tb.cmd.cycle, \
            "after reset: the admin descriptor offered in IDLE was not taken at the first edge"
        assert int(dut.adm_pending.value) == 1, "after reset: adm_pending low after an admin descriptor was taken"
        tb.cmd.set_pause(pause_gen(rng, tb.bp))
        tasks = [cocotb.start_soon(tb.core_traffic(keep=(2, 2) if heavy else None)),
                 cocotb.start_soon(tb.cmd_traffic(2))]
        await tasks[1]
        await tb.drain(tasks[:1])
    tb.report("reset_mid")
    tb.assert_cov({f"reset_in_{s}": 1 for s in (IDLE, FW, XFER, CPL)})
    tb.assert_cov({"reset_with_lock": 1, "reset_with_turn": 1})


# ------------------------------------------------------------------------------------ pytest
CONFIGS = {"w4": 4, "w128": 128}                   # WORDS
if LONG:                                           # the minimum, and a size that is not a power of 2
    CONFIGS.update({"w2": 2, "w5": 5})
RUNS = [(cfg, mode, seed) for seed in (1, 2) for mode in ("plain", "bp") for cfg in CONFIGS]
TESTS = ["random_mix", "pushes_and_status", "fairness", "reset_mid"]


def _run(cfg: str, mode: str, seed: int, tests) -> None:
    words = CONFIGS[cfg]
    seed = seed + 100 * (int(os.environ.get("ATS_SEED", "1")) - 1)
    # ATS_ADM_SRC: run against another copy of the RTL (mutation checks of the testbench)
    src = os.environ.get("ATS_ADM_SRC")
    sources = block_sources("ats_admin", "ats_stream_check", replace={"ats_admin.sv": Path(src).resolve()} if src else None) + [HERE / "ats_admin_bind.sv"]
    run(toplevel="ats_admin", sources=sources,
        test_module="test_ats_admin", test_dir=HERE,
        build_key=f"w{words}" + ("_" + Path(src).parent.name if src else ""),
        parameters={"WORDS": words}, seed=seed,
        testcase=list(tests), results_name=f"{mode}_{seed}", public={},   # the top's signals only
        waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_SEED": str(seed), "ATS_ADM_MODE": mode, "ATS_LONG": "1" if LONG else "0",
                   **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                      if os.environ.get("ATS_TEST_FILTER") else {})})


@pytest.mark.parametrize("cfg,mode,seed", RUNS, ids=[f"{c}-{m}{s}" for c, m, s in RUNS])
def test_ats_admin(cfg, mode, seed):
    _run(cfg, mode, seed, TESTS)
