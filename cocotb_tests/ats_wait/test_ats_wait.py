"""cocotb tests of ats_wait (the firmware's wait for event, rtl/soc/README.md "ats_wait") against
`WaitModel` below: a plain-Python, cycle-level model written from the README, not from the RTL.

Checks:
- `WaitModel`, fed at every rising edge from the inputs of the cycle that ends there, predicts
  `bus_ack`, `bus_rdata` (while acknowledged), `pending`, `dl_hit`, `waits` and `timeouts` after
  the edge and compares them.
- The transaction level, from the behavioural CPU (a Wishbone master that holds a read or a write
  until it sees the acknowledge): every access is acknowledged exactly once; a write at the second
  edge (the request is registered); a read never before a wake condition held (an enabled source
  pending, the deadline passed with the deadline enabled) and at the latest 2^CAP_W + 1 cycles
  after it began (the cap: bit 31);
  the answer has an enabled source, the deadline bit with the deadline enabled, or bit 31; never
  a hang (every read answered within the cap).
- The CPU clock (built with ATS_SIM_CGATE, as the full-system simulation): a process on `cpu_clk`
  sees every acknowledge (one per access: the CPU is clocked at the edge that ends the acknowledged
  cycle, so a gated CPU sees what an ungated one does), and during a read stalled longer than HOLD
  edges `cpu_clk` stops (coverage `gated`).
- A master that drops its request before the acknowledge (`dropped_request`): no acknowledge for it.
Coverage: a wake by each source (level and sticky), by the deadline, by the cap; a sticky set and
cleared in the same cycle; back-to-back accesses.

Environment: ATS_SEED, ATS_LONG=1 (four times the accesses), ATS_WAIT_SRC (another copy of ats_wait.sv,
for mutation checks).
Testpoints: rtl/soc/testplan_wait.md.
"""
from __future__ import annotations

import os
import random
import sys
from collections import Counter
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.runner import block_sources, run

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
NSRC = 8
CAP_W = 6              # a short cap, so the tests reach it
HOLD = 8
M64 = (1 << 64) - 1


class WaitModel:
    """rtl/soc/README.md "ats_wait", one rising edge at a time."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sticky = 0
        self.cnt = 0
        self.ack = 0
        self.cs = 0          # the registered request: the master's cyc && stb (not while ack) ...
        self.we = 0          # ... and we, of the cycle before
        self.rdata = 0
        self.waits = 0
        self.timeouts = 0

    def pending(self, lvl: int) -> int:
        return lvl | self.sticky

    def edge(self, i: dict) -> dict:
        """i: the inputs of the cycle ending at this edge. Returns what the edge did."""
        if i["rst"]:
            self.reset()
            return {}
        pend = self.pending(i["lvl"])
        dl_hit = i["cycles"] >= i["deadline"]
        req = self.cs and not self.ack
        rd = req and not self.we
        cap_hit = self.cnt == (1 << CAP_W) - 1
        by = []
        if pend & i["mask"]:
            by.append("src")
        if i["dl_en"] and dl_hit:
            by.append("deadline")
        if cap_hit:
            by.append("cap")
        wake = bool(by)
        clr = i["clr"] if i["clr_we"] else 0
        self.sticky = (self.sticky & ~clr) | i["evt"]
        self.cs = int(bool(i["cyc"] and i["stb"] and not self.ack))
        # answered only while the master still holds the request (dropped early: no acknowledge)
        self.ack = int(bool(req and (self.we or wake) and i["cyc"] and i["stb"]))
        self.we = i["we"]
        self.cnt = self.cnt + 1 if (rd and not wake) else 0
        done = {}
        if rd and wake:
            self.rdata = (int(cap_hit) << 31) | (int(dl_hit) << 16) | pend
            self.waits += 1
            self.timeouts += int(cap_hit)
            done = dict(by=by, pend=pend & i["mask"], sticky_only=pend & i["mask"] & ~i["lvl"], rdata=self.rdata)
        return done


class TB:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        self.m = WaitModel()
        self.cov: Counter = Counter()
        self.cycle = 0
        self.errors: list[str] = []
        self.acks_seen_cpu = 0
        self.acks = 0
        self.cpu_edges = 0
        self.cpu_edges_q = 0
        self.lvl = 0
        self.mask = 0
        self.dl_en = 0
        self.deadline = 0

    def drive_defaults(self) -> None:
        d = self.dut
        for n in ("bus_cyc", "bus_stb", "bus_we", "evt_clr_we", "dl_en"):
            getattr(d, n).value = 0
        d.src_lvl.value = 0
        d.src_evt.value = 0
        d.evt_clr.value = 0
        d.mask.value = 0
        d.deadline.value = 0
        d.cycles.value = 0
        d.rst.value = 1

    def sample(self) -> dict:
        d = self.dut
        return dict(rst=int(d.rst.value), cyc=int(d.bus_cyc.value), stb=int(d.bus_stb.value),
                    we=int(d.bus_we.value), lvl=int(d.src_lvl.value), evt=int(d.src_evt.value),
                    clr_we=int(d.evt_clr_we.value), clr=int(d.evt_clr.value), mask=int(d.mask.value),
                    dl_en=int(d.dl_en.value), deadline=int(d.deadline.value), cycles=int(d.cycles.value))

    async def monitor(self) -> None:
        """At every rising edge: the model steps on the cycle's inputs; after the edge, outputs."""
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            i = self.sample_q
            ack_in = self.m.ack               # the acknowledge of the cycle that ends at this edge
            done = self.m.edge(i)
            if done:
                for b in done["by"]:
                    self.cov[f"wake_{b}"] += 1
                for s in range(NSRC):
                    if done["pend"] >> s & 1:
                        self.cov[f"wake_src{s}"] += 1
                    if done["sticky_only"] >> s & 1:
                        self.cov[f"wake_sticky{s}"] += 1
            if i["clr_we"] and i["clr"] & i["evt"]:
                self.cov["clr_and_evt"] += 1
            await ReadOnly()
            got = dict(ack=int(d.bus_ack.value), pending=int(d.pending.value), dl_hit=int(d.dl_hit.value),
                       waits=int(d.waits.value), timeouts=int(d.timeouts.value))
            lvl_now = int(d.src_lvl.value)
            want = dict(ack=self.m.ack, pending=self.m.pending(lvl_now),
                        dl_hit=int(int(d.cycles.value) >= int(d.deadline.value)),
                        waits=self.m.waits, timeouts=self.m.timeouts)
            if got != want:
                self.errors.append(f"cycle {self.cycle}: got {got}, model {want}")
            if self.m.ack and not i["we"]:
                if int(d.bus_rdata.value) != self.m.rdata:
                    self.errors.append(f"cycle {self.cycle}: rdata {int(d.bus_rdata.value):#x}, model {self.m.rdata:#x}")
            self.acks += self.m.ack
            # the CPU takes an acknowledge at the edge that ends its cycle: its clock must run there
            if ack_in:
                self.acks_seen_cpu += int(self.cpu_edges != self.cpu_edges_q)
            self.cpu_edges_q = self.cpu_edges
            assert not self.errors, self.errors[:5]

    async def pre_edge(self) -> None:
        """Latch the inputs of the cycle just before its rising edge (the falling edge onwards the
        TB drives nothing: everything changes right after rising edges)."""
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            await Timer(4, "ns")              # inputs driven after the edge have settled
            self.sample_q = self.sample()

    async def cpu_clock(self) -> None:
        """The CPU's clock: its edges, counted (the monitor checks one at each acknowledge)."""
        d = self.dut
        while True:
            await RisingEdge(d.cpu_clk)
            self.cpu_edges += 1

    async def step(self) -> None:
        """One clock cycle; random changes of the sources and control right after the edge."""
        d, r = self.dut, self.rng
        await RisingEdge(d.clk)
        await Timer(1, "ns")
        self.cycle += 1
        d.cycles.value = self.cycle
        if r.random() < 0.05:
            self.lvl ^= 1 << r.randrange(NSRC)
        d.src_lvl.value = self.lvl
        d.src_evt.value = (1 << r.randrange(NSRC)) if r.random() < 0.03 else 0
        if r.random() < 0.05:
            d.evt_clr_we.value = 1
            d.evt_clr.value = r.getrandbits(NSRC)
        else:
            d.evt_clr_we.value = 0

    async def access(self, we: int, mask: int, dl_en: int, deadline: int, budget: int) -> tuple[int, int]:
        """A Wishbone access held until acknowledged; returns (cycles, rdata)."""
        d = self.dut
        d.mask.value = mask
        d.dl_en.value = dl_en
        d.deadline.value = deadline & M64
        d.bus_we.value = we
        d.bus_cyc.value = 1
        d.bus_stb.value = 1
        n = 0
        while True:
            await self.step()
            n += 1
            await ReadOnly()
            if int(d.bus_ack.value):
                rdata = int(d.bus_rdata.value)
                await RisingEdge(d.clk)            # the master takes the acknowledge at this edge
                await Timer(1, "ns")
                self.cycle += 1
                d.cycles.value = self.cycle
                d.bus_cyc.value = 0
                d.bus_stb.value = 0
                return n, rdata
            assert n <= budget, f"access not acknowledged within {budget} cycles (a hang)"


async def setup(dut, seed: int) -> TB:
    rng = random.Random(seed)
    tb = TB(dut, rng)
    tb.drive_defaults()
    tb.sample_q = tb.sample()
    cocotb.start_soon(Clock(dut.clk, 10, "ns").start())
    cocotb.start_soon(tb.pre_edge())
    cocotb.start_soon(tb.monitor())
    cocotb.start_soon(tb.cpu_clock())
    for _ in range(3):
        await RisingEdge(dut.clk)
    await Timer(1, "ns")
    dut.rst.value = 0
    return tb


@cocotb.test()
async def random_waits(dut):
    """Reads with random masks and deadlines under random sources and events, writes, gaps."""
    seed = int(os.environ.get("ATS_SEED", "1"))
    tb = await setup(dut, seed)
    r = tb.rng
    n_acc = 400 * (4 if LONG else 1)
    reads = 0
    for k in range(n_acc):
        if r.random() < 0.15:
            n, _ = await tb.access(1, r.getrandbits(NSRC), 0, 0, 3)
            assert n == 2, "a write is acknowledged at the second edge"
            continue
        kind = r.random()
        mask = r.getrandbits(NSRC) if kind < 0.6 else (1 << r.randrange(NSRC)) if kind < 0.85 else 0
        dl_en = int(r.random() < 0.5)
        deadline = tb.cycle + r.randrange(-5, 3 * (1 << CAP_W)) if r.random() < 0.9 else M64
        if kind >= 0.85 and r.random() < 0.5:
            dl_en = 0                                     # nothing can end it but the cap
        n, rdata = await tb.access(0, mask, dl_en, deadline, (1 << CAP_W) + 5)
        reads += 1
        ok = (rdata & 0xFF & mask) or (dl_en and rdata >> 16 & 1) or rdata >> 31
        assert ok, f"read {k}: answer {rdata:#x} has no enabled reason (mask {mask:#x}, dl_en {dl_en})"
        if rdata >> 31:
            assert n >= (1 << CAP_W) - 1, f"read {k}: cap after {n} cycles"
        if n > HOLD + 3:
            tb.cov["long_stall"] += 1
        if r.random() < 0.5:                              # a gap, else back to back
            for _ in range(r.randrange(1, 6)):
                await tb.step()
        else:
            tb.cov["back_to_back"] += 1
    for _ in range(3):
        await tb.step()
    assert tb.acks_seen_cpu == tb.acks == n_acc, \
        f"the CPU clock saw {tb.acks_seen_cpu} acknowledges of {tb.acks} ({n_acc} accesses)"
    all_edges = tb.cycle
    dut._log.info(f"{reads} reads, cpu_clk {tb.cpu_edges} of ~{all_edges} edges; coverage {dict(tb.cov)}")
    assert tb.cpu_edges < all_edges, "cpu_clk never stopped (the gate)"
    tb.cov["gated"] = int(tb.cpu_edges < all_edges)
    need = ["wake_src", "wake_deadline", "wake_cap", "clr_and_evt", "back_to_back", "long_stall", "gated"]
    need += [f"wake_src{s}" for s in range(NSRC)] + [f"wake_sticky{s}" for s in range(NSRC)]
    missing = [c for c in need if not tb.cov[c]]
    assert not missing, f"coverage holes: {missing}"


@cocotb.test()
async def reset_mid_wait(dut):
    """A reset while a read is stalled: the read is dropped (no acknowledge), counters and sticky bits 0."""
    tb = await setup(dut, int(os.environ.get("ATS_SEED", "1")) + 7)
    d = dut
    d.src_evt.value = 0x80
    await tb.step()
    d.src_evt.value = 0
    d.mask.value = 0
    d.dl_en.value = 0
    d.bus_we.value = 0
    d.bus_cyc.value = 1
    d.bus_stb.value = 1
    for _ in range(10):
        await RisingEdge(d.clk)
    await Timer(1, "ns")
    d.rst.value = 1
    d.bus_cyc.value = 0
    d.bus_stb.value = 0
    await RisingEdge(d.clk)
    await Timer(1, "ns")
    d.rst.value = 0
    await ReadOnly()
    assert int(d.bus_ack.value) == 0 and int(d.pending.value) & 0x80 == 0 and int(d.waits.value) == 0


@cocotb.test()
async def dropped_request(dut):
    """A master that drops its request before the acknowledge (a CPU reset mid-access): no
    acknowledge for it, ever (LiteX's decoder ORs the slaves' acks: a late one would complete another
    master's access). Writes dropped after one cycle (answered at the second edge otherwise), reads
    dropped after 1..4 cycles with their wake condition coming up in the first cycle without the
    request (the registered request still up) or in the last cycle with it (then answered normally
    when the request was seen). The model checks every edge; here bus_ack must stay low for 4 cycles
    after the drop, and a normal access after each drop is answered once."""
    tb = await setup(dut, int(os.environ.get("ATS_SEED", "1")) + 13)
    d = dut
    late = 0
    for k in range(48):
        we = int(k % 4 == 0)
        hold = 1 if we else 1 + k % 4          # cycles the request is up
        wake_after = (k // 4) % 2 == 0         # the wake in the first cycle after the drop, else the last held
        tb.lvl &= ~1
        d.mask.value = 1
        d.dl_en.value = 0
        d.deadline.value = M64
        d.bus_we.value = we
        d.bus_cyc.value = 1
        d.bus_stb.value = 1
        acked = 0
        for c in range(hold):                  # cycle c with the request up
            if c == hold - 1 and not wake_after:
                tb.lvl |= 1
                d.src_lvl.value = tb.lvl
            await tb.step()                    # the edge that ends cycle c (ack: a register)
            if int(d.bus_ack.value):           # answered while held: taken at the next edge
                acked = 1
                await tb.step()
                break
        d.bus_cyc.value = 0                    # dropped from this cycle on
        d.bus_stb.value = 0
        for c in range(4):                     # no acknowledge after the drop
            if c == 0 and wake_after:
                tb.lvl |= 1
                d.src_lvl.value = tb.lvl
            await tb.step()
            if int(d.bus_ack.value) and not acked:
                late += 1
        tb.cov["dropped" if not acked else "answered_before_drop"] += 1
        tb.lvl &= ~1
        await tb.step()
        n, _ = await tb.access(we, 0 if we else 0xFF, 1, tb.cycle + 3, (1 << CAP_W) + 5)
        assert n >= 2
    dut._log.info(f"dropped requests: coverage {dict(tb.cov)}")
    assert late == 0, f"{late} acknowledges after the master dropped its request"
    assert tb.cov["dropped"] >= 20 and tb.cov["answered_before_drop"] >= 5, dict(tb.cov)


# ------------------------------------------------------------------------------------ pytest
RUNS = [1, 2]


@pytest.mark.parametrize("seed", RUNS, ids=[f"seed{s}" for s in RUNS])
def test_ats_wait(seed):
    seed = seed + 100 * (int(os.environ.get("ATS_SEED", "1")) - 1)
    # ATS_WAIT_SRC: run against another copy of the RTL (mutation checks of the testbench)
    src = os.environ.get("ATS_WAIT_SRC")
    run(toplevel="ats_wait", sources=block_sources("ats_wait", replace={"ats_wait.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_wait", test_dir=HERE, build_key="cg" + ("_" + Path(src).parent.name if src else ""),
        parameters={"NSRC": NSRC, "CAP_W": CAP_W, "HOLD": HOLD},
        build_args=["+define+ATS_SIM_CGATE"], seed=seed, results_name=f"seed{seed}",
        extra_env={"ATS_SEED": str(seed), "ATS_LONG": "1" if LONG else "0"})
