# SPDX-License-Identifier: Apache-2.0
"""ats_sata (the SATA front end, device side) behind LiteSATA's host core (PyPI `litesata` 2024.12,
pinned; link + transport + command layers, elaborated by atstb.litesata_gen as
`ats_litesata_core_host`), through a PHY-less wire with a fault injector each way
(ats_sata_litesata_tb.sv). Behind ats_sata: `atstb.sata_core_model.SataCoreModel` (the core and the
firmware, with random idle and backpressure on all five core-side streams).

The test driver plays the OS above LiteSATA's command ports (`cmd_sink` / `cmd_source`, random idle
on the sink, heavy random backpressure on the source, which makes LiteSATA's link HOLD the device):
IDENTIFY DEVICE, READ DMA EXT and WRITE DMA EXT of 1..128 sectors (PAGE_BYTES = 512, LiteSATA's
sector; up to 64 KiB, the front end's limit) at random LBAs.

Checked (references written from docs/host-interface.md §2 and docs/architecture.md §1, not from
the RTL):
- IDENTIFY DEVICE word by word against `identify_ref`, built from §2.4's table and the core model's
  firmware words (capacity = firmware word 8, words 130..159 = firmware words 1..15, the checksum).
- Every read byte for byte against a shadow of the device (last successful write of each LBA, zeros
  if never written); every successful write also in the core model's medium at once.
- The §1 descriptors of every successful command: one IDENTIFY (op 9, tag 32); one WRITE {lba,
  nlb = count - 1, tag 32, txid/flags/attr/prio 0}; a READ DMA EXT as `count` single-page READs in
  address order (§2.5); dptr = window address 32 * 2^17 + the byte offset in the transfer (§2.5:
  page i of a READ DMA EXT at offset i * PAGE_BYTES). The core model's own dptr check (offset 0) is
  off for that reason. No core traffic the front end did not expect (`cnt_proto` stays 0), the
  core's streams keep the stream stability rule (checked by the core model's sinks).
- Faults (second test), at most one armed per attempt, each attempt's outcome checked against what
  was hit:
  * bad CRC on a read's or an IDENTIFY's Data FIS (device -> host; armed at the command or when the
    k-th Data FIS starts): the command must end `failed` (§2.5: a non-queued Data FIS answered R_ERR
    is not re-sent; the command ends 0x41 / ICRC|ABRT, checked on the device's Register D2H);
  * bad CRC on a write's Data FIS (host -> device): the first (wr_data_crc) or a later one, armed when
    it starts (wr_data2_crc: the device still holds words of the earlier ones): must end `failed`
    (0x41 / ICRC|ABRT) and leave nothing behind for the re-issued write;
    Directed first (`tail_fault`, twice): a 20-sector write whose second (last) Data FIS is
    corrupted while the core is slow to take the first one's words, then re-issued;
  * bad CRC dword of the device's DMA Activate or Register D2H (content intact: LiteSATA uses it,
    the device re-sends it, §2.5 retries: `cnt_retry` must grow): success or failure;
  * bad CRC on the Register H2D (the command FIS): the device drops it (§2.1) and issues no
    descriptor; LiteSATA does not retry and waits for ever, so the driver times out after a quiet
    wire, resets LiteSATA and the device (`port_rst`, the OS's COMRESET; the core model keeps its
    medium) and re-issues;
  * one primitive dropped (X_RDY, R_RDY, R_IP, R_OK, HOLD, HOLDA, WTRM or SYNC, either way): success
    or failure.
  An attempt with no fault hit must succeed. A failed command is re-issued by the driver (LiteSATA
  does not retry) after the wire is quiet and the core model idle, until it succeeds (at most
  MAX_TRIES). Never a success with wrong data; every wait is bounded and names what it waited for.
  Every fault class must have been hit at least once by the end (the choice favours the ones not hit
  yet). LiteSATA's quirks handled by the bench, not the device's: its command TX would read the data
  beats left after a failed WRITE as a new command (the bench gates them until the driver withdraws
  them); it never leaves IDLE after its own reset while the device's SYNC is suppressed by CONT
  (hence the port reset resets the device as well).

Not testable through LiteSATA's command layer (documented, covered elsewhere):
- FLUSH CACHE EXT, DATA SET MANAGEMENT, READ LOG EXT, the FPDMA QUEUED (NCQ) commands and the TxSSD
  fields: LiteSATA's command layer issues only IDENTIFY, READ DMA EXT and WRITE DMA EXT (the NCQ host
  model test covers them).
- Faults whose recovery LiteSATA itself lacks: a corrupted byte (not the CRC dword) of a device
  control FIS (LiteSATA's transport uses register FISes with a bad CRC, so it would act on garbage),
  a bad CRC on a PIO Setup (the device's re-sent copy then blocks LiteSATA's command RX, which waits
  for a Data FIS), lost SOF/EOF (LiteSATA's receiver hangs on a lost EOF; a host Data FIS whose SOF
  is lost leaves the device waiting for data, which only a port reset of both sides ends).
- ALIGN: LiteSATA inserts its own pairs host -> device; the bench's device-PHY stand-in inserts
  them device -> host (LiteSATA's transmitter needs them, rtl/sata/README.md).

Runtime (default, one core): about 40 s for both tests (clean: 13 commands, faults: 25 commands with
their retries). Environment: ATS_SEED, ATS_LONG=1 (more commands, and a read-back of every LBA
written), ATS_VERBOSE=1 (a line per attempt), ATS_WAVES=1.
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from atstb.runner import ROOT, block_sources, run
from atstb.sata_core_model import SataCoreModel
from atstb.sata_link_model import PRIM
from atstb.streams import StreamSink, StreamSource, pause_gen
from atstb.trace import SATA_OUTPUTS, trace_outputs

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
VERBOSE = os.environ.get("ATS_VERBOSE", "0") not in ("", "0")

PAGE_BYTES = 512
SECTOR_DW = PAGE_BYTES // 4
NUM_LBAS = 2048
TAG_NQ = 32                                  # §2.5: non-queued commands use §1 tag 32
WIN_SHIFT = 17
CLK_PS = 6666
OP_READ, OP_WRITE, OP_IDENTIFY = 0, 1, 9
FLIP, DROP = 1, 2
MAX_TRIES = 8
DROP_PRIMS = ["X_RDY", "R_RDY", "R_IP", "R_OK", "HOLD", "HOLDA", "WTRM", "SYNC"]
QUIET = 64                                   # idle wire (both ways SYNC) before the next command
LOST_WAIT = 20000                            # cycles without any answer before a port reset


# ------------------------------------------------------------------------------------------------
# reference: IDENTIFY DEVICE (docs/host-interface.md §2.4)
def _ata_string(w: list[int], first: int, nwords: int, text: str) -> None:
    s = text.ljust(2 * nwords).encode("ascii")
    assert len(s) == 2 * nwords, text
    for i in range(nwords):
        w[first + i] = (s[2 * i] << 8) | s[2 * i + 1]


def identify_ref(fw_words: list[int], page_bytes: int, fr: str = "0000abcd") -> list[int]:
    """The 256 words of §2.4 for the firmware's 16 IDENTIFY words (docs/architecture.md §1.1)."""
    w = [0] * 256
    cap = fw_words[8]
    w[0] = 0x0040
    _ata_string(w, 10, 10, "ATOMSSD-SIM-0001")
    _ata_string(w, 23, 4, fr)
    _ata_string(w, 27, 20, "atomssd transactional SSD")
    w[47] = 0x8001
    w[49] = 0x0300
    w[53] = 0x0006
    c28 = min(cap, 0x0FFFFFFF)
    w[60], w[61] = c28 & 0xFFFF, c28 >> 16
    w[75] = 31
    w[76] = 0x010E
    w[78] = w[79] = 0x0002
    w[80] = 0x0400
    w[83] = 0x7400
    w[84] = w[87] = 0x4000
    w[86] = 0x3400
    w[88] = 0x007F
    for i in range(4):
        w[100 + i] = (cap >> (16 * i)) & 0xFFFF if i < 3 else 0
    w[106] = 0x4000 | (0x1000 if page_bytes > 512 else 0)
    w[117], w[118] = (page_bytes // 2) & 0xFFFF, (page_bytes // 2) >> 16
    w[129] = 0x5344
    for k in range(1, 16):
        w[130 + 2 * (k - 1)] = fw_words[k] & 0xFFFF
        w[131 + 2 * (k - 1)] = fw_words[k] >> 16
    w[169] = 0x0001
    w[217] = 0x0001
    s = sum((x & 0xFF) + (x >> 8) for x in w[:255]) + 0xA5
    w[255] = (((-s) & 0xFF) << 8) | 0xA5
    assert sum((x & 0xFF) + (x >> 8) for x in w) % 256 == 0
    return w


def words_of_dwords(dws: list[int]) -> list[int]:
    """ATA words from Data FIS dwords (word 2j in bits 15:0 of dword j)."""
    out = []
    for d in dws:
        out += [d & 0xFFFF, d >> 16]
    return out


# ------------------------------------------------------------------------------------------------
class Outcome:
    def __init__(self, kind: str):
        self.kind = kind                     # "ok", "failed", "lost"
        self.data: list[int] = []
        self.failed_beats = 0
        self.cycles = 0


class TB:
    def __init__(self, dut, heavy: bool, seed_salt: int):
        self.dut = dut
        seed = int(os.environ.get("ATS_SEED", "1"))
        self.rng = r = random.Random(seed * 104729 + seed_salt)
        self.t0 = 0
        self.t0 = self.cycle()
        cocotb.start_soon(Clock(dut.clk, CLK_PS, unit="ps").start())
        trace_outputs(dut, dut.clk, SATA_OUTPUTS, "ats_sata_litesata")    # ATS_TRACE=<file>: refactoring checks
        self.core = SataCoreModel(dut, r, PAGE_BYTES, NUM_LBAS, num_tx=31, delay=(1, 20),
                                  slow=(100, 800), slow_p=0.05, pauses=True, check_dptr=False)
        self.src = StreamSource(dut, "cmd_sink", dut.clk,
                                ["last", "data", "write", "read", "identify", "sector", "count"],
                                pause=pause_gen(r, True, 0.1))
        self.snk = StreamSink(dut, "cmd_source", dut.clk,
                              ["last", "data", "write", "read", "identify", "end", "failed"],
                              pause=pause_gen(r, "heavy" if heavy else True, max_stall=30))
        for d in ("h2d", "d2h"):
            for f in ("seq", "kind", "n", "mask", "prim"):
                getattr(dut, f"{d}_{f}").value = 0
        dut.phy_ready.value = 1
        dut.port_rst.value = 0
        self.seq = {"h2d": 0, "d2h": 0}
        self.shadow: dict[int, bytes] = {}
        # fault classes not hit yet (chosen first when a fault is due)
        self.to_cover = {"cmd_crc", "drop", "rd_data_crc", "wr_data_crc", "wr_act_crc", "wr_reg_crc", "id_data_crc",
                         "wr_data2_crc"}
        self.stats = {"ok": 0, "retries": 0, "lost": 0, "port_resets": 0, "faults_hit": {}, "cmds": {},
                      "sectors": 0, "fail_other": 0}

    # -------------------------------------------------------------- basics
    def cycle(self) -> int:
        """Clock cycles since this test started (simulation time runs on across cocotb tests)."""
        return int(get_sim_time("ps") // CLK_PS) - self.t0

    def mon(self, name: str) -> int:
        return int(getattr(self.dut, name).value)

    async def cycles(self, n: int) -> None:
        await Timer(n * CLK_PS, unit="ps")

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(8):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        for _ in range(8):
            await RisingEdge(self.dut.clk)

    async def port_reset(self):
        """The OS's port reset after a command timeout: a COMRESET, i.e. LiteSATA and the device
        (ats_sata) reset; the core model keeps its medium (nothing is in flight: checked before).
        A reset of LiteSATA alone does not do: the device, idle, keeps sending the junk of its CONT
        run of SYNC (also across a phy_ready drop), so LiteSATA's restarted link never sees SYNC."""
        assert not self.core.in_core, f"port reset with descriptors in the core: {self.diag()}"
        self.src.flush()
        self.dut.port_rst.value = 1
        for _ in range(16):
            await RisingEdge(self.dut.clk)
        self.dut.port_rst.value = 0
        for _ in range(16):
            await RisingEdge(self.dut.clk)
        self.stats["port_resets"] += 1

    def arm(self, d: str, kind: int, n: int = 0, mask: int = 0, prim: int = 0) -> None:
        dut = self.dut
        getattr(dut, f"{d}_kind").value = kind
        getattr(dut, f"{d}_n").value = n
        getattr(dut, f"{d}_mask").value = mask
        getattr(dut, f"{d}_prim").value = prim
        self.seq[d] = (self.seq[d] + 1) & 0xFF
        getattr(dut, f"{d}_seq").value = self.seq[d]

    def hits(self) -> tuple[int, int]:
        return self.mon("h2d_hits"), self.mon("d2h_hits")

    def diag(self) -> str:
        d = self.dut
        parts = [f"cycle {self.cycle()}"]
        try:
            h = d.u_host
            parts.append("LiteSATA states cmd tx/rx %d/%d transport tx/rx %d/%d link tx/rx %d/%d" % tuple(
                int(getattr(h, n).value) for n in (
                    "litesatacommandtx_state", "litesatacommandrx_state", "litesatatransporttx_state",
                    "litesatatransportrx_state", "litesatalinktx_fsm_state", "litesatalinkrx_fsm_state")))
        except Exception as e:               # internal names may be hidden
            parts.append(f"(LiteSATA states not readable: {e})")
        parts.append(f"FISes h2d {self.mon('mon_h2d_fis')} (last type {self.mon('mon_h2d_type'):#04x}), "
                     f"d2h {self.mon('mon_d2h_fis')} (last type {self.mon('mon_d2h_type'):#04x}, "
                     f"Register D2H {self.mon('mon_d2h_reg')}, last {self.mon('mon_d2h_regw'):#010x}), "
                     f"quiet {self.mon('quiet')}, faults hit h2d/d2h {self.hits()}")
        parts.append(f"device busy {int(d.dev_busy.value)} rx drops {int(d.dev_cnt_rx_drop.value)} retries "
                     f"{int(d.dev_cnt_retry.value)} protocol {int(d.dev_cnt_proto.value)}")
        parts.append(f"cmd_sink queued {len(self.src.queue)} valid {int(d.cmd_sink_valid.value)} "
                     f"ready {int(d.cmd_sink_ready.value)}, cmd_source beats {len(self.snk.queue)}")
        c = self.core
        parts.append(f"core: in core {sorted(c.in_core)}, descriptors {len(c.descs)}, last "
                     f"{[{k: x[k] for k in ('op', 'tag', 'lba', 'nlb', '_st') if k in x} for x in c.descs[-3:]]}, "
                     f"hrd queued {len(c.hrd.queue)}, hwr queued {len(c.hwr.queue)}")
        return "; ".join(parts)

    async def wait_until(self, cond, limit: int, what: str, step: int = 16) -> None:
        t0 = self.cycle()
        while not cond():
            if self.cycle() - t0 > limit:
                raise AssertionError(f"timeout ({limit} cycles) waiting for {what}: {self.diag()}")
            await self.cycles(step)

    async def settle(self) -> None:
        """Between commands: the wire idle both ways for QUIET clocks and the core model idle."""
        await self.wait_until(lambda: self.mon("quiet") >= QUIET and not self.core.in_core
                              and not self.core.hwr.queue and not self.core.hrd.queue, 200_000,
                              "a quiet wire and an idle core between commands")

    # -------------------------------------------------------------- one attempt of one command
    async def attempt(self, kind: str, lba: int, count: int, data: bytes | None, limit: int,
                      lost_possible) -> Outcome:
        """Issue one command through LiteSATA's command ports; collect its answer. `lost_possible()`
        says whether a fault hit so far may have made LiteSATA lose the command (then a quiet wire
        for LOST_WAIT clocks with no answer ends the attempt as "lost")."""
        fields = dict(write=int(kind == "write"), read=int(kind == "read"), identify=int(kind == "identify"),
                      sector=lba, count=count)
        if kind == "write":
            words = struct.unpack(f"<{len(data) // 4}I", data)
            for i, w in enumerate(words):
                self.src.send_nowait(data=w, last=int(i == len(words) - 1), **fields)
        else:
            self.src.send_nowait(data=0, last=1, **fields)
        out = Outcome("ok")
        t0 = self.cycle()
        q = self.snk.queue
        ev = self.snk.event
        while True:
            while q:
                b = q.popleft()
                exp = {"write": (1, 0, 0), "read": (0, 1, 0), "identify": (0, 0, 1)}[kind]
                assert (b["write"], b["read"], b["identify"]) == exp, \
                    f"{kind}: LiteSATA answered a beat of another command: {b} ({self.diag()})"
                out.failed_beats += b["failed"]
                if kind == "identify":
                    out.data.append(b["data"])
                    if b["last"]:
                        out.kind = "failed" if out.failed_beats else "ok"
                        out.cycles = self.cycle() - t0
                        return out
                elif b["end"]:
                    assert b["last"], f"{kind}: end without last: {b}"
                    out.kind = "failed" if b["failed"] else "ok"
                    if kind == "read" and out.kind == "ok" and out.failed_beats:
                        raise AssertionError(f"read: LiteSATA ended ok after a data beat flagged failed "
                                             f"({self.diag()})")
                    out.cycles = self.cycle() - t0
                    return out
                else:
                    out.data.append(b["data"])
            el = self.cycle() - t0
            if lost_possible() and self.mon("quiet") >= LOST_WAIT and not self.core.in_core:
                out.kind = "lost"
                out.cycles = el
                return out
            if el > limit:
                raise AssertionError(f"{kind} lba {lba} count {count}: no answer within {limit} cycles "
                                     f"(a hang): {self.diag()}")
            ev.clear()
            await First(ev.wait(), Timer(256 * CLK_PS, unit="ps"))

    # -------------------------------------------------------------- faults
    def plan_fault(self, kind: str, count: int, p: float):
        """Choose at most one fault for an attempt: (name, direction, arm-now args or None, late arm)."""
        r = self.rng
        if r.random() >= p and not (p and self.to_cover and r.random() < 0.5):
            return None
        choices = ["cmd_crc", "drop", "drop"]
        if kind == "read":
            choices += ["rd_data_crc"] * 4
        elif kind == "write":
            choices += ["wr_data_crc"] * 2 + ["wr_act_crc", "wr_reg_crc"]
            if count > 16:
                choices += ["wr_data2_crc"] * 2
        else:
            choices += ["id_data_crc"] * 3
        todo = [c for c in choices if c in self.to_cover]
        name = r.choice(todo if todo and r.random() < 0.8 else choices)
        mask = r.getrandbits(32) | (1 << r.randrange(32))
        ndw = count * SECTOR_DW
        if name == "cmd_crc":
            return name, "h2d", dict(kind=FLIP, n=r.randint(0, 5), mask=mask), None
        if name == "drop":
            d = r.choice(["h2d", "d2h"])
            return f"drop_{d}", d, dict(kind=DROP, prim=PRIM[r.choice(DROP_PRIMS)]), None
        if name == "id_data_crc":             # PIO Setup (6 dwords with its CRC), then the Data FIS
            return name, "d2h", dict(kind=FLIP, n=r.randint(6, SECTOR_DW + 1), mask=mask), None
        if name == "rd_data_crc":
            # the device's Data FISes carry at most 1024 dwords (§2.5) but may be shorter (a page, 128
            # dwords, at least here): n <= 129 hits the first; late arming picks a later one
            nfis = (ndw + 1023) // 1024
            if nfis == 1 or r.random() < 0.5:
                return name, "d2h", dict(kind=FLIP, n=r.randint(6, SECTOR_DW + 1), mask=mask), None
            k = r.randrange(1, nfis)
            return name, "d2h", None, ("mon_d2h_fis", k + 1, dict(kind=FLIP, n=r.randint(6, 100), mask=mask))
        if name in ("wr_data_crc", "wr_data2_crc"):
            # LiteSATA's Data FISes carry 2048 dwords (the last one the rest); wr_data2_crc: a later
            # one (armed when it starts), while the device still holds words of the earlier ones
            nfis = (ndw + 2047) // 2048
            if name == "wr_data_crc" or nfis == 1:
                return "wr_data_crc", "h2d", dict(kind=FLIP, n=r.randint(6, min(2048, ndw) + 1), mask=mask), None
            k = nfis - 1 if r.random() < 0.7 else r.randrange(1, nfis)   # often the last, shorter one
            lk = min(2048, ndw - 2048 * k)
            # Data FIS k (from 0) is host FIS number k + 2 of this command (after the Register H2D)
            args = dict(kind=FLIP, n=r.randint(6, max(6, lk - 24)), mask=mask)
            return name, "h2d", None, ("mon_h2d_fis", k + 2, args)
        if name == "wr_act_crc":
            return name, "d2h", dict(kind=FLIP, n=1, mask=mask), None
        if name == "wr_reg_crc":
            return name, "d2h", dict(kind=FLIP, n=5, mask=mask), None
        raise AssertionError(name)

    async def _late_arm(self, d: str, counter: str, target: int, args: dict, done: list) -> None:
        """Arm when `counter` (FISes sent that way) reaches `target`: the FIS wanted has started."""
        while self.mon(counter) < target:
            await RisingEdge(self.dut.clk)
            if done[0]:
                return
        self.arm(d, **args)

    # -------------------------------------------------------------- one command, re-issued until ok
    async def command(self, kind: str, lba: int = 0, count: int = 1, data: bytes | None = None,
                      p_fault: float = 0.0, force_plan=None) -> list[int]:
        limit = 150_000 + count * 6000
        for attempt in range(MAX_TRIES):
            await self.settle()
            plan = self.plan_fault(kind, count, p_fault if attempt < MAX_TRIES - 2 else 0.0)
            if force_plan is not None and attempt == 0:
                plan = force_plan
            if VERBOSE:
                self.dut._log.info("start %s lba %d count %d attempt %d, cycle %d, plan %s", kind, lba, count,
                                   attempt, self.cycle(), plan)
            h0 = self.hits()
            nd0 = len(self.core.descs)
            fis0 = {"mon_h2d_fis": self.mon("mon_h2d_fis"), "mon_d2h_fis": self.mon("mon_d2h_fis")}
            reg0 = self.mon("mon_d2h_reg")
            retry0 = self.mon("dev_cnt_retry")
            done = [False]
            late = None
            if plan:
                name, d, now, lt = plan
                if now:
                    self.arm(d, **now)
                else:
                    counter, k, args = lt
                    late = cocotb.start_soon(self._late_arm(d, counter, fis0[counter] + k, args, done))

            def h2d_cmd_hit() -> bool:
                return bool(plan) and plan[0] == "cmd_crc" and self.hits()[0] > h0[0]

            def lost_possible() -> bool:
                # a corrupted Register H2D, or a primitive dropped (LiteSATA never retries)
                return h2d_cmd_hit() or (bool(plan) and plan[0].startswith("drop") and self.hits() != h0)

            out = await self.attempt(kind, lba, count, data, limit, lost_possible)
            done[0] = True
            if late is not None and not late.done():
                late.cancel()
            # disarm whatever was not hit
            for d in ("h2d", "d2h"):
                self.arm(d, 0)
            h1 = self.hits()
            hit = plan[0] if plan and h1 != h0 else None
            if hit:
                self.stats["faults_hit"][hit] = self.stats["faults_hit"].get(hit, 0) + 1
                self.to_cover.discard(hit.split("_")[0] if hit.startswith("drop") else hit)
            new = self.core.descs[nd0:]
            tag = f"{kind} lba {lba} count {count} attempt {attempt} (fault {hit or 'none'})"
            self.dut._log.log(20 if VERBOSE or plan else 10, "%s: %s in %d cycles (plan %s)", tag, out.kind,
                              out.cycles, plan and plan[0])
            if out.kind != "ok" and self.src.queue:
                self.src.flush()                 # the rest of a failed write's data (the bench's gate held it)
            if out.kind == "lost":
                assert hit in ("cmd_crc",) or (hit or "").startswith("drop"), f"{tag}: lost without a fault"
                if hit == "cmd_crc":
                    # §2.1: a Register H2D with a bad CRC is dropped, nothing acted upon
                    assert not new, f"{tag}: the device took a command whose Register H2D had a bad CRC: {new}"
                self.stats["lost"] += 1
                await self.port_reset()
                self.stats["retries"] += 1
                continue
            if hit == "cmd_crc":
                # LiteSATA answered something: the command cannot have been taken
                raise AssertionError(f"{tag}: an answer ({out.kind}) to a command whose Register H2D had a bad CRC; "
                                     f"descriptors {new}: {self.diag()}")
            if hit is None:
                assert out.kind == "ok", f"{tag}: failed with no fault on the wire: {self.diag()}"
            if hit in ("rd_data_crc", "wr_data_crc", "wr_data2_crc", "id_data_crc"):
                assert out.kind == "failed", f"{tag}: a Data FIS with a bad CRC, yet the command ended ok"
                # §2.5: a data FIS lost on the link ends the command with a Register D2H, Status 0x41,
                # Error ICRC|ABRT 0x84 (for IDENTIFY LiteSATA has ended already: seen on the wire)
                await self.wait_until(lambda: self.mon("mon_d2h_reg") > reg0, 5000, "the Register D2H")
                regw = self.mon("mon_d2h_regw")
                st, er = (regw >> 16) & 0xFF, regw >> 24
                assert (st, er) == (0x41, 0x84), \
                    f"{tag}: ended with Status {st:#04x} Error {er:#04x}, 0x41 / 0x84 (ICRC|ABRT) expected (§2.5)"
            if hit in ("wr_act_crc", "wr_reg_crc"):
                # §2.5: a control FIS answered R_ERR is sent again
                await self.wait_until(lambda: self.mon("dev_cnt_retry") > retry0, 5000,
                                      f"the device to send its {hit[3:6]} FIS again after R_ERR")
            if out.kind == "ok":
                self.check_success(kind, lba, count, data, out, new, tag)
                self.stats["ok"] += 1
                self.stats["cmds"][kind] = self.stats["cmds"].get(kind, 0) + 1
                if kind != "identify":
                    self.stats["sectors"] += count
                return out.data
            self.stats["retries"] += 1
            if hit and hit not in ("rd_data_crc", "wr_data_crc", "wr_data2_crc", "id_data_crc"):
                self.stats["fail_other"] += 1     # allowed outcome: failed after a CRC/drop fault
        raise AssertionError(f"{kind} lba {lba} count {count}: not done after {MAX_TRIES} attempts")

    def check_success(self, kind, lba, count, data, out: Outcome, new: list[dict], tag: str) -> None:
        def plain(x: dict) -> dict:
            return {k: x[k] for k in ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr")}

        if kind == "identify":
            assert len(out.data) == 128, f"{tag}: IDENTIFY data of {len(out.data)} dwords, 128 expected"
            assert [x["op"] for x in new] == [OP_IDENTIFY] and new[0]["tag"] == TAG_NQ and \
                new[0]["dptr"] == TAG_NQ << WIN_SHIFT, \
                f"{tag}: descriptors {[plain(x) for x in new]}, one IDENTIFY with tag 32 expected (§2.4)"
            return
        if kind == "write":
            exp = [dict(op=OP_WRITE, tag=TAG_NQ, lba=lba, nlb=count - 1, txid=0, flags=0, attr=0, prio=0,
                        dptr=TAG_NQ << WIN_SHIFT)]
            assert [plain(x) for x in new] == exp, f"{tag}: descriptors {[plain(x) for x in new]}, expected {exp}"
            assert all(x.get("_st") == 0 for x in new), f"{tag}: core status {[x.get('_st') for x in new]}"
            for i in range(count):
                pg = data[i * PAGE_BYTES:(i + 1) * PAGE_BYTES]
                got = self.core.stub.pages.get(lba + i)
                if got != pg:
                    j = next((j for j in range(PAGE_BYTES) if got is None or got[j] != pg[j]), 0)
                    raise AssertionError(
                        f"{tag}: LBA {lba + i} (sector {i} of the write) in the core's medium differs from what the "
                        f"host wrote, from byte {j}: got {got[j:j + 16].hex() if got else None}, written "
                        f"{pg[j:j + 16].hex()}; descriptors {[plain(x) for x in new]}: {self.diag()}")
                self.shadow[lba + i] = pg
            return
        # read
        exp = [dict(op=OP_READ, tag=TAG_NQ, lba=lba + i, nlb=0, txid=0, flags=0, attr=0, prio=0,
                    dptr=(TAG_NQ << WIN_SHIFT) + i * PAGE_BYTES) for i in range(count)]
        assert [plain(x) for x in new] == exp, \
            f"{tag}: descriptors {[plain(x) for x in new][:4]}..., {count} single-page READs in order expected (§2.5)"
        assert len(out.data) == count * SECTOR_DW, \
            f"{tag}: read returned {len(out.data)} dwords, {count * SECTOR_DW} expected, reported ok"
        got = struct.pack(f"<{len(out.data)}I", *out.data)
        for i in range(count):
            want = self.shadow.get(lba + i, bytes(PAGE_BYTES))
            g = got[i * PAGE_BYTES:(i + 1) * PAGE_BYTES]
            if g != want:
                j = next(j for j in range(PAGE_BYTES) if g[j] != want[j])
                raise AssertionError(f"{tag}: LBA {lba + i} byte {j}: got {g[j]:#04x}, expected {want[j]:#04x} "
                                     f"(wrong data returned as success)")

    async def tail_fault(self) -> None:
        """Directed: WRITE DMA EXT of 20 sectors (Data FISes of 2048 + 512 dwords) with the core slow
        to take the window data (m_hrd stalls), the second Data FIS corrupted: the device still
        holds words of the first when the second fails. The write must end failed, leave nothing
        behind, and its re-issue (at once) must store exactly the host's data."""
        r = self.rng
        for _ in range(2):
            lba, count = r.randint(0, NUM_LBAS - 20), 20
            data = r.randbytes(count * PAGE_BYTES)
            self.core.hrd_data.set_pause(pause_gen(r, "heavy", max_stall=40))
            plan = ("wr_data2_crc", "h2d", None,
                    ("mon_h2d_fis", 3, dict(kind=FLIP, n=r.randint(6, 400), mask=r.getrandbits(32) | 1)))
            await self.command("write", lba, count, data, 0.0, force_plan=plan)
            self.core.hrd_data.set_pause(pause_gen(r, True, 0.3, 20))
            await self.command("read", lba, count, None, 0.0)

    # -------------------------------------------------------------- workload
    def rand_count(self) -> int:
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(1, 8)
        if r < 0.8:
            return self.rng.randint(9, 32)
        return self.rng.randint(33, 128)

    async def identify_check(self, p_fault: float = 0.0) -> None:
        got = words_of_dwords(await self.command("identify", p_fault=p_fault))
        ref = identify_ref(self.core.fw_words, PAGE_BYTES)
        bad = [(i, got[i], ref[i]) for i in range(256) if got[i] != ref[i]]
        assert not bad, "IDENTIFY DEVICE words differ from §2.4 (word, got, expected): " + \
            ", ".join(f"{i}: {g:#06x}/{e:#06x}" for i, g, e in bad[:24]) + \
            (f" ... ({len(bad)} words)" if len(bad) > 24 else "")

    async def workload(self, n: int, p_fault: float) -> None:
        r = self.rng
        written: list[tuple[int, int]] = []
        for i in range(n):
            x = r.random()
            if x < 0.06:
                await self.identify_check(p_fault)
                continue
            count = self.rand_count() if i > 2 else (1, 128, 17)[i]
            if x < 0.52 or not written:
                lba = r.randint(0, NUM_LBAS - count)
                if written and r.random() < 0.3:          # overlap an earlier write
                    a, c = r.choice(written)
                    lba = max(0, min(NUM_LBAS - count, a + r.randint(-count + 1, c - 1)))
                data = r.randbytes(count * PAGE_BYTES)
                await self.command("write", lba, count, data, p_fault)
                written.append((lba, count))
            else:
                if r.random() < 0.7:
                    a, c = r.choice(written)
                    lba = max(0, min(NUM_LBAS - count, a + r.randint(-4, c)))
                else:
                    lba = r.randint(0, NUM_LBAS - count)
                await self.command("read", lba, count, None, p_fault)
        if LONG:                                          # read back everything written
            lbas = sorted(self.shadow)
            i = 0
            while i < len(lbas):
                a = lbas[i]
                c = min(r.randint(1, 128), NUM_LBAS - a)
                await self.command("read", a, c, None, 0.0)
                i = next((j for j in range(i, len(lbas)) if lbas[j] >= a + c), len(lbas))


async def _run(dut, faults: bool) -> None:
    tb = TB(dut, heavy=faults, seed_salt=2 if faults else 1)
    await tb.reset()
    await tb.identify_check(0.7 if faults else 0.0)
    if faults:
        await tb.tail_fault()
    n = (120 if LONG else 24) if faults else (80 if LONG else 12)
    await tb.workload(n, 0.45 if faults else 0.0)
    await tb.settle()
    assert not tb.core.errors, tb.core.errors
    assert tb.mon("dev_cnt_proto") == 0, f"the front end dropped core traffic it did not expect: {tb.diag()}"
    s = tb.stats
    if faults:
        hit = s["faults_hit"]
        must = {"rd_data_crc", "wr_data_crc", "wr_data2_crc", "cmd_crc", "drop"}
        assert not must & tb.to_cover and sum(hit.values()) >= 8, \
            f"fault classes never hit: {sorted(tb.to_cover)}, hit: {hit}"
    dut._log.info("faults=%s: %d commands ok %s, %d sectors, %d retries (%d lost + port resets, %d failures "
                  "after a non-data fault), faults hit %s, cycles %d, stalled beats checked %d",
                  faults, s["ok"], s["cmds"], s["sectors"], s["retries"], s["lost"], s["fail_other"],
                  s["faults_hit"], tb.cycle(), tb.snk.stable_checks)


@cocotb.test()
async def clean(dut):
    """IDENTIFY word by word, random DMA writes and reads (1..128 sectors) with random idle and
    backpressure, no faults: every command succeeds first time, data byte for byte."""
    await _run(dut, faults=False)


@cocotb.test()
async def faults(dut):
    """The same with link faults injected at random (module docstring): every command ends ok with
    the right data, or failed and then ok when re-issued; never wrong data as success, never a hang."""
    await _run(dut, faults=True)


def test_ats_sata_litesata():
    try:
        import litesata  # noqa: F401
    except ImportError:
        pytest.fail("litesata is not installed: tools/requirements.txt must pin litesata==2024.12")
    from atstb.litesata_gen import generate
    gen = generate()
    # stream rules on every m_ port of the front end's modules (ats_sata_bind.sv, rtl/common/ats_stream_check.sv)
    sources = block_sources("ats_sata", "ats_stream_check")
    sources += [ROOT / "cocotb_tests/ats_sata_link/ats_sata_fault_inj.sv", gen / "ats_litesata_core_host.v",
                ROOT / "cocotb_tests/ats_sata/ats_sata_bind.sv", HERE / "ats_sata_litesata_tb.sv"]
    run(toplevel="ats_sata_litesata_tb", sources=sources, test_module="test_ats_sata_litesata", test_dir=HERE,
        build_key="p512", parameters={"PAGE_BYTES": PAGE_BYTES}, waves=os.environ.get("ATS_WAVES") and
        str(ROOT / "build/waves/ats_sata_litesata.fst"),
        extra_env={"ATS_LONG": "1" if LONG else "0", "ATS_VERBOSE": "1" if VERBOSE else "0"},
        # visible to cocotb: the TB top's signals and the LiteSATA states diag() prints
        public={"ats_litesata_core_host": [f"litesata{u}{d}_{'fsm_' if u == 'link' else ''}state"
                                           for u in ("command", "transport", "link") for d in ("tx", "rx")]})
