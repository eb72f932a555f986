"""cocotb tests of ats_fw_bridge (the firmware's side of the backend's firmware port), against
`BridgeModel` below: a plain-Python, cycle-level model written from rtl/soc/README.md
("ats_fw_bridge"), not from the RTL.

Two independent layers of checking:
- `BridgeModel`, fed at every rising edge from the ports (`TB._edge`), predicts and checks `busy`
  (every edge), `m_fw_valid` and its payload (the fields latched at `go`), `s_fwr_ready`,
  `cpu_rdata` (read latency 1, 0 after no read, 0 after a read while busy), `err_overrun`,
  `err_conflict`, `ops_done`, `rsp_beats`, `rsp_status`/`rsp_ppn`/`rsp_mapped`/`rsp_data`, every
  `m_fwd` word (buffer word i in order, `last` on word PAGE_BYTES/4 − 1 only, never outside the
  DATA phase), the page buffer's contents (CPU writes while idle, NREAD beats) and the DATA rate
  (at most one word every second cycle; the next word offered two edges after the previous one
  was taken). The handshake signals of the model's state are checked at every edge, the rest at
  the edge after every event (go, CPU access, handshake, state change) and at every 8th edge
  (runtime: each signal read costs about 1.5 us).
- The transaction level: the behavioural backend (`TB._backend`, rtl/backend/README.md "Firmware
  port") takes each request on m_fw (random ready pauses) and compares it with the request the
  CPU side issued; for NPROG and RELOC takes exactly PAGE_BYTES/4 words on m_fwd (random pauses)
  and compares them with its own shadow of the buffer (CPU writes + NREAD beats it sent); then
  sends the response on s_fwr with random valid gaps (NREAD: PAGE_BYTES/4 + 5 beats, random data,
  status / ppn / mapped on every beat, the last one counts; other ops one beat). The CPU side
  checks after each operation the response registers, `rsp_beats`, `ops_done`, and reads the
  buffer back through the CPU port.
StreamSink checks stream stability on m_fw and m_fwd (payload held while valid and not ready).

Environment: ATS_SEED (seed), ATS_FWB_MODE (plain: no pauses; bp: random idle on s_fwr and on
the CPU side, random backpressure on m_fw and m_fwd), ATS_LONG=1 (more operations),
ATS_TEST_FILTER (cocotb test name regex), ATS_WAVES (FST path), ATS_FWB_SRC (another copy of
ats_fw_bridge.sv, for mutation checks).
Testpoints: rtl/soc/testplan_fw_bridge.md.
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
from cocotb.triggers import Event, RisingEdge, Timer, with_timeout

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
MODE = os.environ.get("ATS_FWB_MODE", "bp")
HERE = Path(__file__).resolve().parent

# firmware-port operations (rtl/backend/README.md "Firmware port"); 6 and 7 do nothing (0xFF)
NREAD, NPROG, NERASE, REMAP, RELOC, SEQSET = range(6)
DATA_OPS = (NPROG, RELOC)                  # the ops that carry PAGE_BYTES/4 words on m_fwd
SPARE_WORDS = 5                            # an NREAD's response: the page, then 5 spare words
IDLE, REQ, DATA, RSP = "IDLE", "REQ", "DATA", "RSP"


def req_widths(ppn_w: int) -> dict[str, int]:
    """The request fields (`req_<f>` in, `m_fw_<f>` out) and their widths."""
    return {"op": 3, "chan": 3, "way": 2, "block": 12, "page": 8, "rop": 4, "txid": 6, "lpn": 32,
            "ppn": ppn_w, "seq": 64, "epoch": 32, "flags": 8, "kind": 2}


RSP_FIELDS = ["status", "data", "last", "ppn", "mapped"]


def buffer_depth(page_bytes: int) -> int:
    """DEPTH = 2^ceil(log2(PAGE_BYTES/4 + 8)) words (README)."""
    return 1 << (page_bytes // 4 + 8 - 1).bit_length()


# ------------------------------------------------------------------------------------ model
class BridgeModel:
    """ats_fw_bridge as rtl/soc/README.md describes it, one rising edge at a time.

    `expect()` gives the outputs of the current cycle; `edge(...)` applies one rising edge with the
    inputs and handshakes sampled at it and returns the errors it found in what the bridge sent
    (m_fwd words). Buffer words never written are None (power-on contents: not checked)."""

    def __init__(self, page_bytes: int, ppn_w: int):
        self.pw = page_bytes // 4
        self.depth = buffer_depth(page_bytes)
        self.ppn_w = ppn_w
        self.buf: list[int | None] = [None] * self.depth
        self.known = False                 # outputs predictable: after the first reset edge
        self.reset()
        self.known = False

    def reset(self) -> None:
        """`rst`: state, counters and sticky flags cleared; the buffer keeps its contents. The
        response registers are neither counters nor flags: unknown until the next beat."""
        self.st = IDLE
        self.req: dict | None = None
        self.fwd_i = 0                     # next m_fwd word
        self.wr_i = 0                      # next NREAD beat
        self.ops_done = 0
        self.rsp_beats = 0
        self.err_overrun = 0
        self.err_conflict = 0
        self.rsp: tuple | None = None      # (status, ppn, mapped, data) of the last beat
        self.rdata: int | None = 0         # cpu_rdata of the coming cycle
        self.known = True

    @property
    def busy(self) -> int:
        return int(self.st != IDLE)

    def edge(self, go: int, req: dict | None, cpu: tuple | None, fw_ready: int,
             fwd: tuple | None, fwr: dict | None) -> list[str]:
        """One rising edge, not in reset. go/req: `go` and the req_* fields; cpu: (we, addr, wdata)
        if cpu_en; fw_ready: m_fw_ready; fwd: (data, last) if an m_fwd handshake; fwr: the s_fwr
        beat if s_fwr_valid."""
        errors = []
        busy = self.st != IDLE
        # CPU port: one access per cycle, read data in the next cycle, nothing while busy
        rdata: int | None = 0
        if cpu is not None:
            we, addr, wdata = cpu
            if busy:
                self.err_conflict = 1
            elif we:
                self.buf[addr] = wdata
            else:
                rdata = self.buf[addr]
        self.rdata = rdata
        if go and busy:
            self.err_overrun = 1
        if self.st == IDLE:
            if go:
                self.req = dict(req)
                self.rsp_beats = 0
                self.fwd_i = 0
                self.wr_i = 0
                self.st = REQ
        elif self.st == REQ:
            if fw_ready:
                self.st = DATA if self.req["op"] in DATA_OPS else RSP
        elif self.st == DATA:
            if fwd is not None:
                data, last = fwd
                exp = self.buf[self.fwd_i]
                if exp is not None and data != exp:
                    errors.append(f"m_fwd word {self.fwd_i}: {data:#010x}, buffer holds {exp:#010x}")
                if last != int(self.fwd_i == self.pw - 1):
                    errors.append(f"m_fwd word {self.fwd_i} of {self.pw}: last = {last}")
                self.fwd_i += 1
                if self.fwd_i == self.pw:
                    self.st = RSP
        elif self.st == RSP:
            if fwr is not None:
                self.rsp = (fwr["status"], fwr["ppn"], fwr["mapped"], fwr["data"])
                self.rsp_beats = (self.rsp_beats + 1) & 0xFFFF
                if self.req["op"] == NREAD and self.wr_i < self.depth:
                    self.buf[self.wr_i] = fwr["data"]
                self.wr_i += 1
                if fwr["last"]:
                    self.ops_done = (self.ops_done + 1) & 0xFFFFFFFF
                    self.st = IDLE
        return errors


# ------------------------------------------------------------------------------------ testbench
class TB:
    def __init__(self, dut, seed: int, mode: str = MODE):
        self.dut = dut
        self.rng = rng = random.Random(seed)
        self.mode = mode
        self.bp = mode != "plain"
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.ppn_w = int(dut.PPN_W.value)
        self.pw = self.page_bytes // 4
        self.depth = buffer_depth(self.page_bytes)
        self.widths = req_widths(self.ppn_w)
        assert len(dut.cpu_addr) == self.depth.bit_length() - 1, "cpu_addr width != log2(DEPTH)"
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.go.value = 0
        self.drive_req(self.rand_req())
        dut.cpu_en.value = 0
        dut.cpu_we.value = 0
        dut.cpu_addr.value = 0
        dut.cpu_wdata.value = 0
        # the backend: m_fw and m_fwd ready with random pauses, s_fwr valid with random gaps
        self.fw = StreamSink(dut, "m_fw", dut.clk, list(self.widths), pause_gen(rng, self.bp))
        self.fwd = StreamSink(dut, "m_fwd", dut.clk, ["data", "last"], pause_gen(rng, self.bp))
        self.fwr = StreamSource(dut, "s_fwr", dut.clk, RSP_FIELDS, pause_gen(rng, self.bp))
        self.fwr.on_accept = self._fwr_accepted
        self.model = BridgeModel(self.page_bytes, self.ppn_w)
        self.shadow: list[int | None] = [None] * self.depth   # the buffer as the TB wrote / sent it
        self.exp_reqs: deque[dict] = deque()   # requests issued by the CPU side, not yet seen on m_fw
        self.cur_op: int | None = None         # op whose response the backend is sending
        self.beat_i = 0
        self.last_beats: list[dict] = []       # the response of the last op sent
        self.ops = 0                           # operations issued since the last reset
        self.cov = Counter()
        self.cycle = 0
        self.fwd_ref = None                    # (edge, limit): next m_fwd word due
        self.fwd_last_fire = None
        self.rst_q = 1
        self.full_next = True
        self.check_rdata = True                # nread_overflow turns it off to name its failure
        self.busy_q = 0
        self.idle_event = Event()              # set by the monitor when busy falls
        # handles the monitor reads at every edge, fetched once
        self.h = SimpleNamespace(
            **{n: getattr(dut, n) for n in (
                "rst", "go", "busy", "m_fw_valid", "m_fw_ready", "s_fwr_valid", "s_fwr_ready",
                "m_fwd_valid", "m_fwd_ready", "m_fwd_data", "m_fwd_last", "cpu_en", "cpu_we",
                "cpu_addr", "cpu_wdata", "cpu_rdata", "err_overrun", "err_conflict", "ops_done",
                "rsp_beats")},
            m_fw={f: getattr(dut, f"m_fw_{f}") for f in self.widths},
            req={f: getattr(dut, f"req_{f}") for f in self.widths},
            s_fwr={f: getattr(dut, f"s_fwr_{f}") for f in RSP_FIELDS},
            rsp=[dut.rsp_status, dut.rsp_ppn, dut.rsp_mapped, dut.rsp_data])
        self.backend_task = None
        self.hold_last = False                 # the backend keeps the last response beat back
        self.last_held = False                 # ... and every other beat has been taken
        every_edge(dut.clk, self._edge)

    # -------------------------------------------------------------- per-edge monitor (model)
    def _fail(self, msg: str):
        raise AssertionError(f"edge {self.cycle} (model state {self.model.st}): {msg}")

    def _edge(self) -> None:
        """One rising edge: check the outputs of the cycle that ends here against the model, then
        feed the model the inputs and handshakes sampled here. Handshake signals of the model's
        state are read at every edge; everything else (counters, flags, cpu_rdata, the response
        registers, the handshake signals of the other states) at the edge after any event
        (go, a CPU access, a handshake, a state change) and at every 8th edge."""
        h, m = self.h, self.model
        self.cycle += 1
        if int(h.rst.value):
            if not self.rst_q and m.known:
                self.cov[f"reset_in_{m.st}"] += 1
            self.rst_q = 1
            m.reset()
            self.fwd_ref = None
            self.full_next = True
            self.busy_q = 0
            return
        self.rst_q = 0
        if not m.known:
            return
        st = m.st
        full = self.full_next or (self.cycle & 7) == 0
        # ---- outputs of the cycle that ends at this edge
        busy = int(h.busy.value)
        if busy != m.busy:
            self._fail(f"busy = {busy}, expected {m.busy}")
        if self.busy_q and not busy:
            self.idle_event.set()
        self.busy_q = busy
        fw_ready = 0
        if st == REQ or full:
            fw_valid = int(h.m_fw_valid.value)
            if fw_valid != int(st == REQ):
                self._fail(f"m_fw_valid = {fw_valid}, expected {int(st == REQ)}")
            if fw_valid:
                for f, hf in h.m_fw.items():
                    got = int(hf.value)
                    if got != m.req[f]:
                        self._fail(f"m_fw_{f} = {got:#x}, latched at go: {m.req[f]:#x}")
                fw_ready = int(h.m_fw_ready.value)
                if not fw_ready:
                    self.cov["m_fw_stall"] += 1
        fwr = None
        if st == RSP or full:
            fwr_ready = int(h.s_fwr_ready.value)
            if fwr_ready != int(st == RSP):
                self._fail(f"s_fwr_ready = {fwr_ready}, expected {int(st == RSP)}")
            if fwr_ready:
                if int(h.s_fwr_valid.value):
                    fwr = {f: int(hf.value) for f, hf in h.s_fwr.items()}
                else:
                    self.cov["s_fwr_gap"] += 1
        fwd = None
        if st == DATA or full:
            if int(h.m_fwd_valid.value):
                if st != DATA:
                    self._fail("m_fwd_valid high outside the DATA phase")
                if int(h.m_fwd_ready.value):
                    fwd = (int(h.m_fwd_data.value), int(h.m_fwd_last.value))
                    if self.fwd_last_fire is not None and self.cycle - self.fwd_last_fire < 2:
                        self._fail("m_fwd words taken on consecutive edges (at most one every second cycle)")
                    self.fwd_last_fire = self.cycle
                    self.fwd_ref = (self.cycle, 2)
                else:
                    self.cov["m_fwd_stall"] += 1
            elif st == DATA and self.cycle - self.fwd_ref[0] >= self.fwd_ref[1]:
                self._fail(f"m_fwd word {m.fwd_i} not offered {self.fwd_ref[1]} edges after "
                           f"{'the request was taken' if m.fwd_i == 0 else 'the previous word was taken'}")
        if full:
            rdata = int(h.cpu_rdata.value)
            if self.check_rdata and m.rdata is not None and rdata != m.rdata:
                self._fail(f"cpu_rdata = {rdata:#x}, expected {m.rdata:#x}")
            for name in ("err_overrun", "err_conflict", "ops_done", "rsp_beats"):
                got = int(getattr(h, name).value)
                if got != getattr(m, name):
                    self._fail(f"{name} = {got}, expected {getattr(m, name)}")
        go = int(h.go.value)
        if (full or go) and m.rsp is not None:
            got = tuple(int(hf.value) for hf in h.rsp)
            if got != m.rsp:
                self._fail(f"rsp (status, ppn, mapped, data) = {got}, last beat was {m.rsp}")
        # ---- inputs sampled at this edge
        req = None
        if go:
            req = {f: int(hf.value) for f, hf in h.req.items()}
            if busy:
                self.cov["overrun"] += 1
        cpu = None
        if int(h.cpu_en.value):
            cpu = (int(h.cpu_we.value), int(h.cpu_addr.value), int(h.cpu_wdata.value))
            self.cov["conflict" if busy else ("cpu_wr" if cpu[0] else "cpu_rd")] += 1
            if go and not busy:
                self.cov["cpu_at_go"] += 1
        errors = m.edge(go, req, cpu, fw_ready, fwd, fwr)
        if errors:
            self._fail("; ".join(errors))
        self.full_next = bool(go or cpu or fw_ready or fwd or fwr or m.st != st)
        if st == REQ and m.st == DATA:
            self.fwd_ref = (self.cycle, 3)      # first word: read (latency 1) + output register
            self.fwd_last_fire = None

    # -------------------------------------------------------------- stimulus helpers
    def rand_req(self, op: int | None = None) -> dict:
        r = {f: self.rng.getrandbits(w) for f, w in self.widths.items()}
        if op is not None:
            r["op"] = op
        return r

    def rand_op(self) -> int:
        # large pages: fewer of the ops that move a page (runtime), every kind still frequent
        w = [2, 1, 2, 2, 1, 2, 1, 1] if self.pw >= 256 else [4, 3, 1, 2, 3, 1, 1, 1]
        return self.rng.choices(range(8), weights=w)[0]

    def drive_req(self, req: dict) -> None:
        for f, v in req.items():
            getattr(self.dut, f"req_{f}").value = v

    def scramble_req(self) -> None:
        """New random req_* values (the bridge latched its own at go)."""
        self.drive_req(self.rand_req())

    async def edges(self, n: int = 1) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    def cpu_drive(self, acc) -> None:
        """acc: None (no access), ("w", addr, data) or ("r", addr); for the coming edge."""
        d = self.dut
        if acc is None:
            d.cpu_en.value = 0
            return
        d.cpu_en.value = 1
        d.cpu_addr.value = acc[1]
        if acc[0] == "w":
            d.cpu_we.value = 1
            d.cpu_wdata.value = acc[2]
        else:
            d.cpu_we.value = 0

    async def cpu_run(self, accs: list, idle: bool | None = None) -> list[tuple]:
        """CPU accesses while idle, one per cycle (random idle cycles between them in bp mode);
        writes update the shadow; returns (addr, data, shadow at the read) of every read (data
        from the next cycle)."""
        idle = self.bp if idle is None else idle
        out = []
        pend = None
        for acc in list(accs) + [None]:
            while acc is not None and idle and self.rng.random() < 0.2:
                self.cpu_drive(None)
                await RisingEdge(self.dut.clk)
                if pend is not None:
                    out.append((*pend, int(self.dut.cpu_rdata.value)))
                    pend = None
            self.cpu_drive(acc)
            if acc is not None and acc[0] == "w":
                self.shadow[acc[1]] = acc[2]
            await RisingEdge(self.dut.clk)
            if pend is not None:
                out.append((*pend, int(self.dut.cpu_rdata.value)))
            pend = (acc[1], self.shadow[acc[1]]) if acc is not None and acc[0] == "r" else None
        self.cpu_drive(None)
        return out

    async def cpu_check(self, addrs) -> int:
        """Read `addrs` through the CPU port and compare with the shadow."""
        got = await self.cpu_run([("r", a) for a in addrs])
        n = 0
        for a, exp, v in got:
            if exp is not None:
                assert v == exp, f"buffer word {a}: CPU port read {v:#010x}, expected {exp:#010x}"
                n += 1
        self.cov["words_read_back"] += n
        return n

    def rand_addr(self) -> int:
        r = self.rng.random()
        if r < 0.75:
            return self.rng.randrange(self.pw)
        if r < 0.9:
            return self.pw + self.rng.randrange(SPARE_WORDS)
        return self.rng.randrange(self.depth)

    async def fill(self, addrs=None) -> None:
        addrs = range(self.depth) if addrs is None else addrs
        await self.cpu_run([("w", a, self.rng.getrandbits(32)) for a in addrs])

    # -------------------------------------------------------------- reset and backend
    async def reset(self, cycles: int = 3) -> None:
        """rst (synchronous) for `cycles` edges; the backend model starts over."""
        d = self.dut
        if self.backend_task is not None:
            self.backend_task.cancel()
            self.backend_task = None
        # past the edge: the stream ends have taken this edge's handshakes (a beat the bridge took
        # at it is in the shadow) before the source drops its beats
        await Timer(1, unit="ns")
        self.fwr.flush()
        d.go.value = 0
        self.cpu_drive(None)
        d.rst.value = 1
        await self.edges(cycles)
        self.fw.queue.clear()
        self.fwd.queue.clear()
        self.exp_reqs.clear()
        self.cur_op = None
        self.ops = 0
        d.rst.value = 0
        self.backend_task = cocotb.start_soon(self._backend())
        await RisingEdge(d.clk)
        # the cycle after reset: idle, counters and sticky flags cleared
        for name in ("busy", "m_fw_valid", "m_fwd_valid", "s_fwr_ready", "ops_done", "rsp_beats",
                     "err_overrun", "err_conflict"):
            assert int(getattr(d, name).value) == 0, f"after reset: {name} = {int(getattr(d, name).value)}"

    async def _recv(self, sink: StreamSink) -> dict:
        while not sink.queue:
            sink.event.clear()
            await sink.event.wait()
        return sink.queue.popleft()

    def _fwr_accepted(self, item: dict, cycle: int) -> None:
        # an NREAD beat taken by the bridge lands in buffer word i (beats beyond DEPTH dropped)
        if self.cur_op == NREAD and self.beat_i < self.depth:
            self.shadow[self.beat_i] = item["data"]
        self.beat_i += 1
        self.cov["fwr_beats"] += 1

    def rand_beat(self, last: int, data: int | None = None) -> dict:
        rng = self.rng
        return {"status": rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 0xFF, rng.getrandbits(8)]),
                "data": rng.getrandbits(32) if data is None else data, "last": last,
                "ppn": rng.getrandbits(self.ppn_w), "mapped": rng.getrandbits(1)}

    def make_response(self, op: int) -> list[dict]:
        """The backend's response (rtl/backend/README.md): NREAD PAGE_BYTES/4 + 5 beats (data, then
        spare words; status/ppn/mapped random on every beat, the last beat's count), else one."""
        n = self.rsp_len(op) if self.rsp_len else (self.pw + SPARE_WORDS if op == NREAD else 1)
        erased = op == NREAD and self.rng.random() < 0.1
        return [self.rand_beat(int(i == n - 1), 0xFFFFFFFF if erased else None) for i in range(n)]

    rsp_len = None                             # op -> beats: odd response lengths (response_lengths)

    async def _backend(self) -> None:
        """The backend's firmware port, one operation at a time."""
        while True:
            req = await self._recv(self.fw)
            assert self.exp_reqs, f"request on m_fw that the CPU side did not issue: {req}"
            exp = self.exp_reqs.popleft()
            for f in self.widths:
                assert req[f] == exp[f], f"m_fw_{f} = {req[f]:#x}, issued {exp[f]:#x}"
            op = req["op"]
            self.cov[f"op{op}"] += 1
            if op in DATA_OPS:
                page = self.shadow[:self.pw]
                for i in range(self.pw):
                    b = await self._recv(self.fwd)
                    assert b["last"] == int(i == self.pw - 1), f"op {op}: m_fwd word {i} last = {b['last']}"
                    if page[i] is not None:
                        assert b["data"] == page[i], \
                            f"op {op}: m_fwd word {i} = {b['data']:#010x}, buffer holds {page[i]:#010x}"
                self.cov["pages_sent"] += 1
            else:
                assert not self.fwd.queue, f"op {op}: m_fwd words without a data phase"
            beats = self.make_response(op)
            self.cur_op, self.beat_i = op, 0
            self.last_beats = beats
            for b in beats[:-1]:
                self.fwr.send_nowait(**b)
            while self.hold_last:                 # busy_negative: the CPU side is making noise
                self.last_held = not self.fwr.queue and not self.fwr._driving
                await RisingEdge(self.dut.clk)
            self.last_held = False
            self.fwr.send_nowait(**beats[-1])

    # -------------------------------------------------------------- operations
    async def go(self, req: dict, cpu=None) -> None:
        """Pulse go with `req` (and an optional CPU access in the same, idle, cycle)."""
        self.drive_req(req)
        self.dut.go.value = 1
        self.cpu_drive(cpu)
        if cpu is not None and cpu[0] == "w":
            self.shadow[cpu[1]] = cpu[2]
        self.exp_reqs.append(dict(req))
        self.ops += 1
        self.cur_op = None
        self.idle_event.clear()
        await RisingEdge(self.dut.clk)
        self.dut.go.value = 0
        self.cpu_drive(None)

    async def wait_done(self, scramble: bool = False, overrun_once: bool = False,
                        timeout: int | None = None) -> None:
        """After go: busy must be high in the next cycle; returns in the first idle cycle (at the
        edge where the monitor sampled busy low). scramble: new random req_* values in the REQ
        cycle and at random busy cycles; overrun_once: a go pulse and a CPU read in the second
        busy cycle (the op cannot end before the third)."""
        d = self.dut
        timeout = timeout or 40 * self.depth + 2000
        if scramble:
            self.scramble_req()
        await RisingEdge(d.clk)
        assert int(d.busy.value) == 1, "busy low in the cycle after go"
        if overrun_once:
            d.go.value = 1
            self.cpu_drive(("r", self.rng.randrange(self.depth)))
            await RisingEdge(d.clk)
            d.go.value = 0
            self.cpu_drive(None)
        if scramble:
            for _ in range(self.rng.randint(0, 2)):
                await self.edges(self.rng.randint(1, 2 * self.pw))
                if self.idle_event.is_set():
                    break
                self.scramble_req()
        await with_timeout(self.idle_event.wait(), 10 * timeout, "ns")

    async def check_after_op(self, op: int, pending: int = 0) -> None:
        """Response registers, beat count and operation count after the op (sampled in its first
        idle cycle); `pending`: requests issued after it (go held across its end)."""
        d = self.dut
        beats = self.last_beats
        assert self.cur_op == op, f"last response was for op {self.cur_op}, expected {op}"
        assert self.beat_i == len(beats), f"{self.beat_i} of {len(beats)} response beats taken"
        lb = beats[-1]
        got = {"status": int(d.rsp_status.value), "ppn": int(d.rsp_ppn.value),
               "mapped": int(d.rsp_mapped.value), "data": int(d.rsp_data.value)}
        for f, v in got.items():
            assert v == lb[f], f"op {op}: rsp_{f} = {v:#x}, last beat {lb[f]:#x}"
        assert int(d.rsp_beats.value) == len(beats) & 0xFFFF, \
            f"op {op}: rsp_beats = {int(d.rsp_beats.value)}, {len(beats)} beats sent"
        assert int(d.ops_done.value) == self.ops, f"ops_done = {int(d.ops_done.value)}, {self.ops} ops"
        assert len(self.exp_reqs) == pending, "a request issued but not seen on m_fw"

    async def one_op(self, op: int | None = None, scramble: bool = True, readback: str = "sample") -> int:
        """Idle-phase CPU traffic, one operation, its checks; NREAD: the buffer read back."""
        rng = self.rng
        op = self.rand_op() if op is None else op
        accs = []
        for _ in range(rng.randint(0, 8)):
            accs.append(("w", self.rand_addr(), rng.getrandbits(32)) if rng.random() < 0.6
                        else ("r", self.rand_addr()))
        for a, exp, v in await self.cpu_run(accs):
            if exp is not None:
                assert v == exp, f"buffer word {a}: read {v:#010x}, expected {exp:#010x}"
        cpu = None
        if rng.random() < 0.2:                    # an access in the go cycle (still idle: it counts)
            cpu = ("w", self.rand_addr(), rng.getrandbits(32)) if rng.random() < 0.6 else ("r", self.rand_addr())
        await self.go(self.rand_req(op), cpu)
        await self.wait_done(scramble)
        await self.check_after_op(op)
        if op == NREAD:
            await self.readback(readback)
        return op

    async def readback(self, how: str) -> None:
        """After an NREAD: the buffer through the CPU port (full: every word the response wrote and
        the spare words; sample: word 0, the spare words, 8 random words), plus the words around
        the end of the response and the last buffer word."""
        n = min(self.beat_i, self.depth)
        ends = [a for a in (n - 2, n - 1, n, n + 1, self.pw - 1, self.depth - 1) if 0 <= a < self.depth]
        spare = list(range(self.pw, self.pw + SPARE_WORDS))
        if how == "full" or self.pw <= 16:
            addrs = list(range(max(n, self.pw + SPARE_WORDS))) + ends
        else:
            addrs = [0] + spare + self.rng.sample(range(self.pw), 8) + ends
        await self.cpu_check(addrs)
        self.cov["nread_readback"] += 1

    def report(self, name: str) -> None:
        self.dut._log.info(f"{name} [{self.mode}, PAGE_BYTES {self.page_bytes}]: {self.cycle} edges, "
                           f"coverage {dict(sorted(self.cov.items()))}")

    def assert_cov(self, keys) -> None:
        for k, v in keys.items():
            assert self.cov[k] >= v, f"coverage {k} = {self.cov[k]} < {v}: {dict(self.cov)}"

    def assert_backpressure(self) -> None:
        if self.bp:
            assert self.fw.stable_checks > 0 and self.fwd.stable_checks > 0, \
                f"no stalled beat checked: m_fw {self.fw.stable_checks}, m_fwd {self.fwd.stable_checks}"
            self.assert_cov({"m_fw_stall": 1, "m_fwd_stall": 1, "s_fwr_gap": 1})


def _seed() -> int:
    return int(os.environ.get("ATS_SEED", "1")) * 7919


def n_ops(page_bytes: int) -> int:
    """Operations per random run: a few hundred on small pages, fewer on 2 KiB pages (each data op
    streams 512 words at most one every second cycle)."""
    base = 300 if page_bytes <= 64 else 120 if page_bytes <= 1024 else 60
    return base * 4 if LONG else base


# ------------------------------------------------------------------------------------ tests
@cocotb.test()
async def random_ops(dut):
    """Random operations with random fields; CPU writes/reads while idle (and in the go cycle);
    req_* change while busy; every op kind; NREAD buffer read back."""
    tb = TB(dut, _seed() + 1)
    await tb.reset()
    await tb.fill()
    await tb.cpu_check(range(tb.depth))
    for i in range(n_ops(tb.page_bytes)):
        await tb.one_op(op=i if i < 8 else None,
                        readback="full" if tb.cov["nread_readback"] % 4 == 0 else "sample")
    await tb.cpu_check(range(tb.depth))
    tb.report("random_ops")
    tb.assert_cov({f"op{o}": 1 for o in range(8)})
    tb.assert_cov({"pages_sent": 2, "nread_readback": 2, "cpu_at_go": 1, "cpu_wr": 1, "cpu_rd": 1})
    tb.assert_backpressure()


@cocotb.test()
async def busy_negative(dut):
    """go while busy (ignored, err_overrun sticky; the op in flight unaffected), go held high across
    the end of an op (the next op starts at the first idle edge), CPU accesses while busy (no effect
    on the buffer, reads return 0, err_conflict sticky); reset clears the flags."""
    tb = TB(dut, _seed() + 2)
    await tb.reset()
    await tb.fill()
    d = dut
    rng = tb.rng
    conflict_writes: list[int] = []

    def noise():
        r = rng.random()
        d.go.value = int(r < 0.15)                # a go pulse with other fields: ignored
        tb.scramble_req()
        if r < 0.35:                              # a CPU write: ignored
            a = rng.randrange(tb.depth)
            conflict_writes.append(a)
            tb.cpu_drive(("w", a, rng.getrandbits(32)))
        elif r < 0.55:                            # a CPU read: returns 0
            tb.cpu_drive(("r", rng.randrange(tb.depth)))
        else:
            tb.cpu_drive(None)

    # 1. noise in every busy phase: the backend keeps the last response beat back until the noise
    #    has stopped (so that no go pulse or CPU access falls on the first idle edge)
    n = max(12, n_ops(tb.page_bytes) // 5)
    for i in range(n):
        op = i % 8 if i < 8 else tb.rand_op()
        await tb.go(tb.rand_req(op))
        tb.hold_last = True
        n_noise = rng.randint(1, min(3 * tb.pw + 12, 300))
        await RisingEdge(d.clk)
        assert int(d.busy.value) == 1, "busy low in the cycle after go"
        k = 0
        while k < n_noise and not tb.last_held:
            noise()
            await RisingEdge(d.clk)
            k += 1
            assert int(d.busy.value), "op ended while the backend held its last beat back"
        d.go.value = 0
        tb.cpu_drive(None)
        tb.hold_last = False
        await with_timeout(tb.idle_event.wait(), 400 * tb.depth + 20000, "ns")
        await tb.check_after_op(op)
        if tb.cov["overrun"]:
            assert int(d.err_overrun.value) == 1, "err_overrun not set after go while busy"
        if tb.cov["conflict"]:
            assert int(d.err_conflict.value) == 1, "err_conflict not set after a CPU access while busy"
        # words the CPU wrote while busy keep the value the shadow holds
        await tb.cpu_check(sorted(set(conflict_writes))[:32] + ([0, tb.pw + 4] if op == NREAD else []))
        conflict_writes.clear()
    tb.assert_cov({"overrun": 5, "conflict": 5})
    # 2. go (and a CPU write) held high from a random busy cycle until after the op: A ends, B
    #    starts at the first idle edge with the fields held, the write lands at that edge (the
    #    busy edges before it are overruns / conflicts)
    for i in range(8):
        op_a = [NREAD, NPROG, REMAP, RELOC, NERASE, 7, NREAD, SEQSET][i]
        op_b = [REMAP, NREAD, NPROG, 6, RELOC, SEQSET, NPROG, RELOC][i]
        await tb.go(tb.rand_req(op_a))
        req_b = tb.rand_req(op_b)
        wr_b = ("w", rng.randrange(tb.pw), rng.getrandbits(32))
        start = rng.randint(0, 6)
        held = False
        ov = tb.cov["overrun"]
        tmo = 400 * tb.depth + 20000
        await RisingEdge(d.clk)
        k = 0
        while k < start and int(d.busy.value):
            tb.scramble_req()
            await RisingEdge(d.clk)
            k += 1
        if int(d.busy.value):
            held = True
            tb.drive_req(req_b)
            d.go.value = 1
            tb.cpu_drive(wr_b)
            tb.exp_reqs.append(dict(req_b))
            # resumes at the edge where the monitor sampled busy low: that edge, idle, sampled
            # go (and the write) high: B started there
            await with_timeout(tb.idle_event.wait(), tmo, "ns")
        await tb.check_after_op(op_a, pending=int(held))
        if held:
            tb.idle_event.clear()
            tb.shadow[wr_b[1]] = wr_b[2]
            tb.ops += 1
            tb.cur_op = None
            d.go.value = 0
            tb.cpu_drive(None)
            if tb.cov["overrun"] > ov:
                tb.cov["go_held_chain"] += 1
            await RisingEdge(d.clk)
            assert int(d.busy.value) == 1, "go held across the end of an op: the next op did not start"
            await with_timeout(tb.idle_event.wait(), tmo, "ns")
        else:                                     # A ended before `start`: B is a plain op
            await tb.go(req_b)
            await tb.wait_done()
        await tb.check_after_op(op_b)
        await tb.cpu_check([wr_b[1]])
    tb.assert_cov({"go_held_chain": 3})
    # 3. the flags are sticky until reset; reset clears them (and keeps the buffer)
    for _ in range(20):
        await RisingEdge(d.clk)
        assert int(d.err_overrun.value) == 1 and int(d.err_conflict.value) == 1
    await tb.reset()
    await tb.cpu_check(range(tb.depth))
    tb.report("busy_negative")
    tb.assert_backpressure()


@cocotb.test()
async def reset_mid_op(dut):
    """rst in IDLE, REQ, DATA and RSP (an NREAD partly written), each time with both sticky flags
    set and ops_done > 0: state, counters and sticky flags cleared, busy low, the buffer kept (the
    NREAD beats taken before the reset included); operations work afterwards, counted from 0."""
    tb = TB(dut, _seed() + 3)
    await tb.reset()
    await tb.fill()
    d = dut
    rng = tb.rng
    never = itertools.repeat(True)
    targets = [REQ, DATA, RSP, IDLE] * (3 if tb.pw <= 128 else 2)
    rng.shuffle(targets)
    for tgt in targets:
        # ops_done > 0, err_overrun and err_conflict set
        await tb.one_op(rng.choice([REMAP, NERASE, SEQSET, 6]))
        await tb.go(tb.rand_req(REMAP))
        await tb.wait_done(overrun_once=True)
        await tb.check_after_op(REMAP)
        assert int(d.err_overrun.value) and int(d.err_conflict.value) and int(d.ops_done.value) >= 2
        if tgt == REQ:
            tb.fw.set_pause(never)                # the backend does not take the request
            await tb.go(tb.rand_req(tb.rand_op()))
            await tb.edges(rng.randint(1, 8))
        elif tgt == DATA:
            await tb.go(tb.rand_req(rng.choice(DATA_OPS)))
            while tb.model.st != DATA:
                await RisingEdge(d.clk)
            await tb.edges(rng.randint(0, tb.pw))
        elif tgt == RSP:
            await tb.go(tb.rand_req(NREAD))
            while tb.cur_op != NREAD or tb.beat_i < 1:
                await RisingEdge(d.clk)
            await tb.edges(rng.randint(0, tb.pw))
        else:
            await tb.edges(rng.randint(0, 3))
        await tb.reset(rng.randint(1, 4))         # checks busy, counters, flags in the next cycle
        tb.fw.set_pause(pause_gen(rng, tb.bp))
        # buffer kept (NREAD beats taken so far included): every word (every 5th on large pages)
        # and the words around the last NREAD beat taken
        n = min(tb.beat_i, tb.depth) if tgt == RSP else 0
        await tb.cpu_check(list(range(0, tb.depth, 1 if tb.depth <= 256 else 5)) +
                           [a for a in range(n - 3, n + 3) if 0 <= a < tb.depth])
        await tb.one_op()
        assert int(d.ops_done.value) == 1
    tb.report("reset_mid_op")
    tb.assert_cov({f"reset_in_{s}": 2 for s in (IDLE, REQ, DATA, RSP)})


@cocotb.test()
async def response_lengths(dut):
    """Responses of other lengths than the backend's: several beats for ops without page data (every
    beat counts in rsp_beats, the last one's fields are kept, the buffer is unchanged), NREADs of
    1, 2, PAGE_BYTES/4 + 5, DEPTH − 1 and DEPTH beats (beat i at word i, the rest unchanged)."""
    tb = TB(dut, _seed() + 4)
    await tb.reset()
    await tb.fill()
    rng = tb.rng
    lens = {}
    tb.rsp_len = lambda op: lens[op]
    nread_lens = [1, 2, tb.pw + SPARE_WORDS, tb.depth - 1, tb.depth]
    for i in range(24 if tb.pw <= 128 else 12):
        op = NREAD if i < len(nread_lens) else tb.rand_op()
        if op == NREAD:
            lens[op] = nread_lens[i] if i < len(nread_lens) else rng.choice(nread_lens)
        else:
            lens[op] = rng.randint(1, 5)
        await tb.one_op(op, readback="full" if tb.pw <= 128 else "sample")
        tb.cov[f"len_{'nread' if op == NREAD else 'other'}_{lens[op]}"] += 1
    await tb.cpu_check(range(tb.depth))
    tb.report("response_lengths")
    assert sum(tb.cov[f"len_other_{n}"] for n in range(2, 6)), "no multi-beat response to a non-NREAD op"


@cocotb.test()
async def nread_overflow(dut):
    """An NREAD response longer than the buffer (DEPTH + 1 … DEPTH + 3 beats): README "beats beyond
    DEPTH are dropped", so words 0 … DEPTH − 1 hold beats 0 … DEPTH − 1; rsp_beats counts all."""
    tb = TB(dut, _seed() + 5)
    await tb.reset()
    await tb.fill()
    for extra in (1, 2, 3):
        tb.rsp_len = lambda op, e=extra: tb.depth + e if op == NREAD else 1
        await tb.go(tb.rand_req(NREAD))
        await tb.wait_done()
        await tb.check_after_op(NREAD)            # rsp_beats = DEPTH + extra, last beat's fields
        # the first words, read with the model's cpu_rdata check off (to name the failure here)
        tb.check_rdata = False
        got = await tb.cpu_run([("r", a) for a in range(extra)] + [("r", tb.depth - 1)])
        tb.check_rdata = True
        beats = tb.last_beats
        for a, exp, v in got:
            if v != exp and a < extra and v == beats[tb.depth + a]["data"]:
                raise AssertionError(
                    f"NREAD of DEPTH + {extra} = {len(beats)} beats (DEPTH {tb.depth}): buffer word {a} "
                    f"holds beat {tb.depth + a} ({v:#010x}), not beat {a} ({exp:#010x}): the beats "
                    f"beyond DEPTH wrapped around to word 0 instead of being dropped")
            assert v == exp, f"buffer word {a}: {v:#010x}, expected beat {a} = {exp:#010x}"
        await tb.cpu_check(range(tb.depth))
    tb.report("nread_overflow")


# ------------------------------------------------------------------------------------ pytest
CONFIGS = {"p16": (16, 12), "p512": (512, 16), "p2048": (2048, 12)}   # PAGE_BYTES, PPN_W
RUNS = [(cfg, mode, seed) for seed in (1, 2) for mode in ("plain", "bp") for cfg in CONFIGS]
# cocotb tests run in every pytest item (nread_overflow: its own item, see below)
TESTS = ["random_ops", "busy_negative", "reset_mid_op", "response_lengths"]


def _run(cfg: str, mode: str, seed: int, tests) -> None:
    page, ppn_w = CONFIGS[cfg]
    seed = seed + 100 * (int(os.environ.get("ATS_SEED", "1")) - 1)
    # ATS_FWB_SRC: run against another copy of the RTL (mutation checks of the testbench)
    src = os.environ.get("ATS_FWB_SRC")
    sources = block_sources("ats_fw_bridge", "ats_stream_check", replace={"ats_fw_bridge.sv": Path(src).resolve()} if src else None) + [HERE / "ats_fw_bridge_bind.sv"]
    run(toplevel="ats_fw_bridge", sources=sources,
        test_module="test_ats_fw_bridge", test_dir=HERE,
        build_key=f"p{page}_w{ppn_w}" + ("_" + Path(src).parent.name if src else ""),
        parameters={"PAGE_BYTES": page, "PPN_W": ppn_w}, seed=seed,
        testcase=list(tests), results_name=f"{mode}_{seed}_{tests[0]}", public={},   # the top's signals only
        waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_SEED": str(seed), "ATS_FWB_MODE": mode, "ATS_LONG": "1" if LONG else "0",
                   **({"COCOTB_TEST_FILTER": os.environ["ATS_TEST_FILTER"]}
                      if os.environ.get("ATS_TEST_FILTER") else {})})


@pytest.mark.parametrize("cfg,mode,seed", RUNS, ids=[f"{c}-{m}{s}" for c, m, s in RUNS])
def test_ats_fw_bridge(cfg, mode, seed):
    _run(cfg, mode, seed, TESTS)


# NREAD beats beyond the buffer's DEPTH are dropped (found by this test: they wrapped to word 0
# while wr_i_q had log2(DEPTH) bits; it has one more bit now).
def test_ats_fw_bridge_nread_overflow():
    _run("p16", "plain", 1, ["nread_overflow"])
