# SPDX-License-Identifier: Apache-2.0
"""ats_nvme: the whole NVMe front end between cocotbext-pcie's root complex (the project's NVMe
driver, sw/host/atomssd/nvme.py) and a Python device core.

The core behind the front end (`CoreModel`): descriptors taken with random backpressure, executed
after random delays and completed out of order by the reference model's `CoreStub` (committed pages,
per-tx pages, the command queue's validation), its data moved through the front end's host-memory
port exactly as the core does: window reads (`s_hrd` requests of at most one page, data on `m_hrd`)
and window writes (`s_hwr` bursts of random length), the READ completion only after its last beat
was taken (ordering rule 1). §1 IDENTIFY / GET_LOG / FEATURE descriptors (tag QDEPTH) are the
firmware's (ats_admin): IDENTIFY / GET_LOG 128 words written at their dptr, then the completion;
FEATURE answered by the firmware's feature model (`nvme_ref.FwFeatures`: SEAL_TIME 0xC0 held, default
SEAL_DEFAULT, other FIDs BAD_FIELD), no data.

Reference: the host's view. Every read returns what the shadow of the device holds (the last write
of each LBA, zeros after a TRIM or never written), data written by transactions appears only after
their commit; every CQE status is the expected one (errors: LBA Out of Range from the core, Invalid
Opcode, Invalid Namespace, PRP Offset Invalid from the front end); Identify Controller / Namespace
are byte-for-byte the reference model's with the firmware's words, SMART counts the commands the
host saw complete OK, LID 0xC0 is the firmware's page with the front end's SWRITE limits in its
counters k59..k63 (the reference's `device_log`, equal to Identify's). Set / Get Features of the vendor
FIDs 0xC0 … 0xFF (the device's settings: one FEATURE each) give the status and DW0 of a persistent
reference (`fref`, `admin_ref`: its own FwFeatures, fed every such command in admin-SQ order), through
the driver's helpers (`check_features`) and inside the batches. The shared ports' contention is made,
not left to chance: a Get Features and a Read wait at the descriptor arbiter together (the core's
sink held, `feature_beside_io`), an Identify's burst and a Read's data meet at the window-write
arbiter (the Read's data held until the Identify's burst starts, `identify_beside_read`). Then the
sequences around the queues: Delete SQ with commands held in the core (completes after them), a
disable while an Identify, then a Set Features of SEAL_TIME, waits for the firmware (RDY falls at
once; the Set's value is the firmware's all the same: a Get after re-enabling reads it), a disable
with commands in the core (RDY falls after they complete), re-enable, MSIs, shutdown (one FLUSH,
SHST 2). Random idle and backpressure on every stream.

Atomic writes (docs/host-interface.md "Atomic writes"): the Identify fields against a plain-Python
statement of the Linux NVMe driver's and block layer's rules (`linux_atomic_limits`), then Writes of
every size up to the atomic unit at random offsets inside a group, at a group's end, crossing a
boundary and above the unit, with and without FUA: each one's descriptor is the implicit
transaction (a txid of the atomic pool, taken in turn, + COMMIT) exactly when Linux would send it as
an atomic write of two or more blocks (`linux_atomic_ok`), its data read back; the reserved txids are
BAD_TXID. No space (`atomic_no_space`): an atomic Write whose WRITE the core ends NO_SPACE after its
first pages entered the write buffer (the core model's `stall`, the reference's
`CoreStub.execute(taken=m)`: m uncommitted entries of its txid t) completes Capacity Exceeded with
DW0 = m; the next atomic Write on t's pool entry (the next one with ATX = 1, ATX later with a pool),
submitted while the failed one waits in the core or after its CQE, reaches the core only after that
completion and sends a TX_ABORT of t before its WRITE; a TX_ABORT refused (still no space) fails its
Write, the next one on the entry aborts again; every failed Write's blocks read their old data. With
ATX > 1 the atomic Write submitted while the failing one waits in the core is on the next entry: it
reaches the core and completes while the failing one is still there. The core model keeps the
command queue's rule 5 (a COMMIT write or TX_* waits for the earlier commands of its txid).

Static transactions (docs/host-interface.md §1.11, STX = 2 engines): batches of SWRITEs of random
range counts and sizes (disjoint ranges, the list in a random order, random list and data offsets)
on the I/O queues at once, each followed on its SQ by an SREAD of some of their blocks and a Read
beside them: every SWRITE's WRITE descriptors are the reference's `swrite_plan` (list order, its
engine's reserved txid, COMMIT on the last, dptr at each range's data), the SREAD returns every
earlier SWRITE's data, the Read sees each SWRITE all or nothing, and two engines ran at once; an
SWRITE whose WRITE the core fails (NO_SPACE) completes Capacity Exceeded, its blocks keep their old
data and its engine's next SWRITE starts with a TX_ABORT of the txid; every bad list gets the
reference's status with DNR and sends nothing to the core.

Cost (rtl/nvme/README.md "The cocotb test's cost"): the run is Python-bound (a million clock edges a
build); nothing here resumes a task at every edge unless it reads signals there: the contention
counters are in the model (ats_nvme_cover.sv), the core model waits for beats on the sinks' events and
for `held` on an event, long delays and the driver's polling go through `PcieNvmeHost.cycles` (a timer,
then the edge: the same edges as ClockCycles).

Environment: ATS_SEED, ATS_LONG=1, ATS_PCIE_LOG=1 (cocotbext-pcie's line per TLP and frame).
"""
from __future__ import annotations

import itertools
import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Event, Lock, RisingEdge
from cocotb.utils import get_sim_time

from atstb import nvme_ref as R
from atstb.nvme_pcie import PcieNvmeHost
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen

from atomssd import nvme  # noqa: E402  (on sys.path through atstb.nvme_pcie)
from atomssd.nvme import Req, Sqe  # noqa: E402

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
LOCAL_ADDR = 0x8000_0000
SEAL_DEFAULT = 40_000          # the firmware's SEAL_TIME at power-on (a build's SLOG_SEALT)


def _pow2_floor(x: int) -> int:
    return 1 << (x.bit_length() - 1) if x > 0 else 0


def linux_atomic_limits(idc: bytes, idns: bytes) -> dict:
    """The atomic-write limits Linux derives from Identify Controller / Namespace, written from the
    kernel's rules (drivers/nvme/host/core.c nvme_configure_atomic_write, block/blk-settings.c
    blk_validate_atomic_write_limits, 6.11 and later; docs/host-interface.md "Atomic writes"):
    NABO != 0 disables atomics; with NSFEAT bit 1 (NSABP) and NAWUPF != 0 the unit is (NAWUPF + 1)
    blocks and the boundary (NABSPF + 1) blocks (none when NABSPF = 0), else the controller's
    AWUPF with no boundary; the subsystem's size (from AWUPF) must agree with the namespace's;
    unit_max = the unit rounded down to a power of two, capped by MDTS; a boundary must be a
    power of two, at least the unit, and divide NOIOB's chunk. Returns unit_min / unit_max / max /
    boundary in bytes (all 0: no atomic writes) and `why` when refused."""
    bs = 1 << (struct.unpack_from("<I", idns, 128)[0] >> 16 & 0xFF)
    nsfeat = idns[24]
    nawun, nawupf, nacwu, nabsn, nabo, nabspf, noiob = struct.unpack_from("<7H", idns, 34)
    awun, awupf = struct.unpack_from("<HH", idc, 526)
    mdts = idc[77]
    off = dict(unit_min=0, unit_max=0, max=0, boundary=0)
    if nabo:
        return dict(off, why="NABO != 0")
    if nsfeat & 2 and nawupf:
        atomic, boundary = (nawupf + 1) * bs, (nabspf + 1) * bs if nabspf else 0
    else:
        atomic, boundary = (awupf + 1) * bs, 0
    if (awupf + 1) * bs != atomic:
        return dict(off, why="subsystem (AWUPF) and namespace (NAWUPF) sizes differ")
    unit_min, unit_max = bs, _pow2_floor(atomic)
    if boundary:
        chunk = noiob * bs
        if atomic > boundary or boundary & (boundary - 1) or (chunk and chunk % boundary):
            return dict(off, why="boundary not a power of two, below the unit or not dividing NOIOB")
    max_hw = 4096 << mdts if mdts else 1 << 30
    cap = _pow2_floor(max_hw)
    return dict(unit_min=min(unit_min, cap), unit_max=min(unit_max, cap), max=min(atomic, max_hw),
                boundary=boundary, why="", nawun=nawun, nacwu=nacwu, nabsn=nabsn, awun=awun)


def linux_atomic_ok(lim: dict, bs: int, slba: int, nblocks: int) -> bool:
    """Linux sends a RWF_ATOMIC write of `nblocks` at `slba` only when this holds (nvme_valid_atomic_write)."""
    n = nblocks * bs
    if not lim["unit_max"] or n > lim["unit_max"]:
        return False
    b = lim["boundary"]
    start, end = slba * bs, slba * bs + n - 1
    return not b or (n <= b and start // b == end // b)


class _NeedRead(Exception):
    def __init__(self, addr: int, n: int):
        super().__init__(f"{addr:#x}+{n}")
        self.addr, self.n = addr, n


class CoreModel:
    """The device core and the firmware's admin answers behind ats_nvme (module docstring)."""

    def __init__(self, tb: "TB"):
        d, rng = tb.dut, tb.rng
        self.tb, self.dut, self.rng = tb, d, rng
        self.stub = R.CoreStub(tb.num_lbas, tb.page_bytes, num_tx=32, tx_entries=64)
        rp = lambda: pause_gen(rng, True)              # noqa: E731
        self.cmd = StreamSink(d, "m_cmd", d.clk, ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio",
                                                  "dptr", "aux"], pause=pause_gen(rng, "heavy", max_stall=20))
        self.cpl = StreamSource(d, "s_cpl", d.clk, ["tag", "status", "result"], pause=rp())
        self.hrd = StreamSource(d, "s_hrd", d.clk, ["addr", "len"], pause=rp())
        self.hrd_data = StreamSink(d, "m_hrd", d.clk, ["data", "last"], pause=rp())
        self.hwr = StreamSource(d, "s_hwr", d.clk, ["addr", "data", "last"], pause=rp())
        self.rd_lock, self.wr_lock = Lock(), Lock()
        self.fw_identify = rng.randbytes(64)
        self.fw_log = rng.randbytes(512)
        self.fw_feat = R.FwFeatures(seal_time=SEAL_DEFAULT)   # the firmware's settings (FEATURE)
        self._held = 0                                  # completions are held while > 0
        self.released = Event()                         # set when held falls to 0
        self.in_core: dict[int, dict] = {}              # tag -> descriptor
        self.left = Event()                             # set when a descriptor leaves in_core
        self.descs: list[dict] = []
        self.flushes = 0
        self.fail = None                                # f -> bool: complete that descriptor NO_SPACE
        self.stall = None                               # f -> m: that WRITE waits for a buffer slot after its
        self.stalled: list[dict] = []                   # first m pages until no_space rises (stub.no_space)
        self.nosp_pulse = True                          # ... and the bit falls once its completion is out
        self.sw_txids: range = range(0)                 # the SWRITE engines' txids
        self.sw_par = 0                                 # most SWRITE txids in the core at once
        self.rd_gate: Event | None = None               # set: a READ's data wait until it fires
        self.rd_gated = 0                               # READs waiting at the gate
        cocotb.start_soon(self._run())

    async def _run(self) -> None:
        while True:
            while not self.cmd.queue:                   # the sink sets its event with each beat
                self.cmd.event.clear()
                await self.cmd.event.wait()
            f = self.cmd.queue.popleft()
            assert f["tag"] not in self.in_core, f"descriptor with tag {f['tag']} already in the core: {f}"
            self.in_core[f["tag"]] = f
            f["_seq"] = len(self.descs)
            self.descs.append(f)
            self.sw_par = max(self.sw_par, len({g["txid"] for g in self.in_core.values()
                                                if g["txid"] in self.sw_txids}))
            cocotb.start_soon(self._exec(f))

    @property
    def held(self) -> int:
        return self._held

    @held.setter
    def held(self, v: int) -> None:
        self._held = v
        if not v:
            self.released.set()

    async def host_read(self, addr: int, n: int) -> bytes:
        """Window read of n bytes, in requests of at most one page (the core's page reads)."""
        out = b""
        async with self.rd_lock:
            while n:
                k = min(n, self.rng.choice([4096, 512, 100, 4096 - (addr & 0xFFF)]), 4096)
                k = max(1, min(k, n))
                self.hrd.send_nowait(addr=addr, len=k)
                ndw = ((addr & 3) + k + 3) // 4
                raw = b""
                for j in range(ndw):
                    while not self.hrd_data.queue:
                        self.hrd_data.event.clear()
                        await self.hrd_data.event.wait()
                    b = self.hrd_data.queue.popleft()
                    assert b["last"] == int(j == ndw - 1), f"window read {addr:#x}+{k}: last on dword {j} of {ndw}"
                    raw += struct.pack("<I", b["data"])
                out += raw[addr & 3:(addr & 3) + k]
                addr, n = addr + k, n - k
        return out

    async def host_write(self, addr: int, data: bytes) -> None:
        """Window write in bursts of random length (each burst's address = its first byte's);
        returns when the last beat was taken."""
        assert addr % 4 == 0 and len(data) % 4 == 0, (addr, len(data))
        async with self.wr_lock:
            i = 0
            while i < len(data):
                k = 4 * self.rng.choice([1, 7, 64, 128, 1024])
                chunk = data[i:i + k]
                words = struct.unpack(f"<{len(chunk) // 4}I", chunk)
                for j, w in enumerate(words):
                    self.hwr.send_nowait(addr=addr + i, data=w, last=int(j == len(words) - 1))
                i += len(chunk)
            await self.hwr.wait_idle()

    def _rule5(self, f: dict) -> bool:
        """The command queue's rule 5 (rtl/cmdq/README.md "Ordering"): f waits for an earlier command of
        its txid still in the core when either is a TX_BEGIN / TX_COMMIT / TX_ABORT or a COMMIT write."""
        def cm(g):
            return g["op"] in (R.OP_TX_BEGIN, R.OP_TX_COMMIT, R.OP_TX_ABORT) or \
                (g["op"] == R.OP_WRITE and g["flags"] & R.F_COMMIT)
        return bool(f["txid"]) and any(g["_seq"] < f["_seq"] and g["txid"] == f["txid"] and (cm(f) or cm(g))
                                       for g in self.in_core.values())

    async def _exec(self, f: dict) -> None:
        while self._rule5(f):                           # rule 5 can end only when a command leaves
            self.left.clear()                           # the core: tested at the next edge after each
            await self.left.wait()
            await RisingEdge(self.dut.clk)
        slow = self.rng.random() < 0.2                  # some commands take long: their data move late
        await self.tb.cycles(self.rng.randrange(300, 3000) if slow else self.rng.randrange(1, 60))
        tag = f["tag"]
        taken = self.stall(f) if self.stall is not None else None
        if taken is not None:                           # waits for a slot until no_space rises
            self.stalled.append(f)
            while not self.stub.no_space:
                await RisingEdge(self.dut.clk)
        if f["op"] in (R.OP_IDENTIFY, R.OP_GET_LOG, R.OP_FEATURE):     # the firmware (ats_admin)
            assert tag == self.tb.qdepth and f["dptr"] == LOCAL_ADDR, f
            assert (f["txid"], f["flags"], f["attr"], f["prio"]) == (0, 0, 0, 0), f
            if f["op"] == R.OP_FEATURE:                 # no data; the value is the result
                st, res = self.fw_feat.answer(R.Descriptor(f["op"], tag, f["lba"], f["nlb"], aux=f["aux"]))
            else:
                assert (f["lba"], f["nlb"], f["aux"]) == (0, 0, 0), f
                ans = (self.fw_identify if f["op"] == R.OP_IDENTIFY else self.fw_log).ljust(512, b"\0")
                await self.host_write(f["dptr"], ans)
                st, res = 0, 64 if f["op"] == R.OP_IDENTIFY else 224
        else:
            d = R.Descriptor(f["op"], tag, f["lba"], f["nlb"], f["txid"], f["flags"], f["attr"], f["prio"],
                             f["dptr"], f["aux"])
            if d.op == R.OP_FLUSH and tag == 0 and self.tb.expect_shutdown_flush:
                self.flushes += 1
            fetched: dict[tuple[int, int], bytes] = {}
            wrote: list[tuple[int, bytes]] = []
            while True:
                if self.fail is not None and self.fail(f):
                    st, res = R.ST_NO_SPACE, 0
                    break
                wrote: list[tuple[int, bytes]] = []

                def rd(a, n):
                    if (a, n) not in fetched:
                        raise _NeedRead(a, n)
                    return fetched[(a, n)]
                try:
                    st, res = self.stub.execute(d, rd, lambda a, b: wrote.append((a, b)), taken)
                    break
                except _NeedRead as e:
                    fetched[(e.addr, e.n)] = await self.host_read(e.addr, e.n)
            if self.rd_gate is not None and d.op == R.OP_READ:
                gate = self.rd_gate
                self.rd_gated += 1
                await gate.wait()
                self.rd_gated -= 1
            for a, b in wrote:
                await self.host_write(a, b)
        while self.held:
            self.released.clear()
            await self.released.wait()
        del self.in_core[tag]
        self.left.set()
        self.cpl.send_nowait(tag=tag, status=st, result=res)
        f["_st"], f["_res"], f["_ndesc"] = st, res, len(self.descs)
        if taken is not None and self.nosp_pulse:
            self.stub.no_space = False                  # space is back before any later command runs


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 104729 + 17)
        self.qdepth = int(dut.QDEPTH.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.bad_lba_n = 0             # LBA Out of Range reads sent: odd past the namespace, even SLBA >= 2^48
        self.nq = int(dut.NQ.value)
        self.num_tx = int(dut.NUM_TX.value)
        self.stx = int(dut.STX.value)
        self.atx = int(dut.ATX.value)
        self.res0 = self.num_tx - self.atx - self.stx + 1   # the first reserved txid
        self.atom0 = self.num_tx - self.atx + 1             # the first atomic Writes' txid
        self.qsize = int(dut.QSIZE.value)
        self.host = PcieNvmeHost(dut, self.rng, mem_size=8 << 20)
        self.cycles = self.host.cycles                  # ClockCycles without a resume per cycle
        self.drv = self.host.drv
        self.core = CoreModel(self)
        self.core.sw_txids = range(self.res0, self.atom0)
        self.expect_shutdown_flush = False
        self.shadow: dict[int, bytes] = {}              # LBA -> page (what a read must return)
        self.smart = [0, 0, 0, 0]                       # reads, bytes read, writes, bytes written
        self.stats = dict(admin=0, cmds=0, reads=0, writes=0, tx=0, trims=0, errors=0, flushes=0, bytes=0,
                          feat=0)
        # the host's reference of the vendor features: every vendor Set / Get Features the device runs
        # goes through it, in admin-SQ order (`admin_ref`); its firmware features are its own
        self.fref = self.ref()
        self.fref.fw_features = R.FwFeatures(seal_time=SEAL_DEFAULT)
        self.fref.sqs[0] = R._Sq(0, 0, 64, cqid=0)
        self.fref.cqs[0] = R._Cq(0, 0, 64)

    async def do(self, gen):
        return await self.host.do(gen)

    @property
    def contended(self) -> dict:
        """Cycles both inputs of a shared port offered (ats_nvme_cover.sv's counters bound into each
        ats_nvme_arb2: a Python read of 8 signals at every edge cost a tenth of the run)."""
        d = self.dut
        return {k: int(a.u_contend.n.value) for k, a in
                (("wwr", d.u_wwarb), ("cqe", d.u_qarb), ("cmd", d.u_carb), ("rd", d.u_rdarb))}

    # ------------------------------------------------------------------ checks of the admin data
    def ref(self) -> R.NvmeRef:
        cfg = R.NvmeRefConfig(qdepth=self.qdepth, page_bytes=self.page_bytes, nq=self.nq, qsize=self.qsize,
                              num_lbas=self.num_lbas, fw_identify=self.core.fw_identify, stx=self.stx,
                              atx=self.atx)
        return R.NvmeRef(cfg)

    def admin_ref(self, sqe: Sqe) -> tuple[tuple[int, int], int]:
        """((SCT, SC), DW0) the reference gives the admin command `sqe` (a vendor Set / Get Features
        here: its FEATURE answered by the reference's own firmware features)."""
        self.fref._admin(R._Cmd.parse(sqe.to_bytes()), 0)
        rec = self.fref.cqs[0].pending.pop()[1]
        return (rec.sct, rec.sc), rec.dw0

    def random_feature(self) -> Sqe:
        """A vendor Set / Get Features: mostly SEAL_TIME, in range mostly, now and then Save / SEL."""
        r = self.rng
        fid = nvme.FID_SEAL_TIME if r.random() < 0.7 else r.choice([0xC1, 0xE0, 0xFF])
        if r.random() < 0.1:
            fid |= r.choice([1 << 31, r.randrange(1, 8) << 8])
        if r.random() < 0.5:
            return Sqe(nvme.ADM_GET_FEATURES, cdw10=fid)
        v = r.randrange(0x10000) if r.random() < 0.8 else r.choice([0x10000, r.getrandbits(32)])
        return Sqe(nvme.ADM_SET_FEATURES, cdw10=fid, cdw11=v)

    async def feature(self, sqe: Sqe) -> int:
        """One vendor Set / Get Features through the driver: its status, DNR and DW0 = the reference's."""
        want, dw0 = self.admin_ref(sqe)
        what = f"Features {sqe.opc:#x} CDW10 {sqe.cdw10:#x}"
        c = await self.do(self.drv.admin(sqe, check=False, what=what))
        assert ((c.cqe.sct, c.cqe.sc), c.cqe.dnr, c.cqe.dw0) == (want, int(want != R.SC_OK), dw0), \
            f"{c.what} CDW11 {sqe.cdw11:#x}: {c.cqe}, the reference's {want}, DW0 {dw0:#x}"
        self.stats["feat"] += 1
        return c.cqe.dw0

    async def check_features(self) -> None:
        """The vendor features (docs/architecture.md §1.2, host-interface.md §1.6): SEAL_TIME's default,
        a Set (DW0 = the value) and a Get through the driver's helpers; out of range and unknown vendor
        FIDs Invalid Field (the value kept); Save and SEL ignored. Each against the reference."""
        d, r = self.drv, self.rng
        get = Sqe(nvme.ADM_GET_FEATURES, cdw10=nvme.FID_SEAL_TIME)
        assert self.admin_ref(get) == (R.SC_OK, SEAL_DEFAULT)
        assert await self.do(d.get_seal_time()) == SEAL_DEFAULT, "SEAL_TIME is not the firmware's default"
        v = r.randrange(0x10000)
        assert self.admin_ref(Sqe(nvme.ADM_SET_FEATURES, cdw10=nvme.FID_SEAL_TIME, cdw11=v)) == (R.SC_OK, v)
        assert await self.do(d.set_seal_time(v)) == v
        assert self.admin_ref(get) == (R.SC_OK, v)
        assert await self.do(d.get_seal_time()) == v, "Get after Set"
        for c10, c11 in ((nvme.FID_SEAL_TIME, 0x10000), (nvme.FID_SEAL_TIME, 0xFFFFFFFF),
                         (nvme.FID_SEAL_TIME | 1 << 31, r.randrange(0x10000)), (0xC1, 5), (0xFF, 0)):
            await self.feature(Sqe(nvme.ADM_SET_FEATURES, cdw10=c10, cdw11=c11))
        for c10 in (nvme.FID_SEAL_TIME | 1 << 8, nvme.FID_SEAL_TIME | 3 << 8, 0xC1, 0xFE):
            await self.feature(Sqe(nvme.ADM_GET_FEATURES, cdw10=c10))

    async def feature_beside_io(self) -> None:
        """A vendor Get Features and an I/O Read waiting at the descriptor arbiter together: the core
        takes no descriptor meanwhile (its sink held not ready) until the arbiter has seen both offer;
        then both complete, the Read's data = the shadow, the Get's status and DW0 = the reference's."""
        d, r, pb = self.drv, self.rng, self.page_bytes
        sink = self.core.cmd
        keep, sink.pause = sink.pause, itertools.repeat(True)
        n0 = self.contended["cmd"]
        lba = r.randrange(self.num_lbas)
        rd = await self.do(d.submit_read(r.choice(sorted(q for q in d.sqs if q)), lba, 1))
        await self.cycles(r.randrange(1, 300))
        sqe = Sqe(nvme.ADM_GET_FEATURES, cdw10=nvme.FID_SEAL_TIME)
        want, dw0 = self.admin_ref(sqe)
        c = await self.do(d.submit(0, sqe, what="Get Features 0xc0 beside a Read"))
        for _ in range(200):
            await ClockCycles(self.dut.clk, 20)
            if self.contended["cmd"] > n0:
                break
        else:
            raise AssertionError("the FEATURE and the Read's descriptor never waited together")
        sink.pause = keep
        await self.do(d.wait([rd, c]))
        assert rd.cqe.ok and rd.data == self.shadow.get(lba, bytes(pb)), f"{rd.what}: {rd.cqe}"
        assert ((c.cqe.sct, c.cqe.sc), c.cqe.dw0) == (want, dw0), \
            f"{c.what}: {c.cqe}, the reference's {want} {dw0}"
        self.smart[0] += 1
        self.smart[1] += pb
        self.stats["feat"] += 1

    async def identify_beside_read(self) -> None:
        """An Identify Controller's data burst and a Read's data bursts offered together at the
        window-write arbiter: the core holds the Read's data (`rd_gate`) until the admin block writes
        the Identify (its state S_WR, 1,024 beats), then sends them; both data = the reference's."""
        d, r, pb, dut = self.drv, self.rng, self.page_bytes, self.dut
        n0 = self.contended["wwr"]
        k = min(16, 65536 // pb)
        lba = r.randrange(self.num_lbas - k)
        self.core.rd_gate = gate = Event()
        rd = await self.do(d.submit_read(r.choice(sorted(q for q in d.sqs if q)), lba, k))
        for _ in range(400):
            await ClockCycles(dut.clk, 20)
            if self.core.rd_gated:
                break
        else:
            raise AssertionError("the Read never reached the core's gate")
        idc = await self.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096,
                                        to_host=True))
        for _ in range(2000):
            await ClockCycles(dut.clk, 4)
            if int(dut.u_adm.a_q.value) == 9:           # S_WR: the Identify's burst
                break
        else:
            raise AssertionError("the Identify's burst never started")
        self.core.rd_gate = None
        gate.set()
        await self.do(d.wait([rd, idc]))
        want = b"".join(self.shadow.get(lba + i, bytes(pb)) for i in range(k))
        assert rd.cqe.ok and rd.data == want, f"{rd.what}: {rd.cqe}"
        assert idc.cqe.ok and idc.data == self.ref().identify_controller(), \
            f"Identify beside a Read: {idc.cqe}"
        assert self.contended["wwr"] > n0, "the Identify's and the Read's bursts never offered together"
        self.smart[0] += 1
        self.smart[1] += k * pb
        self.stats["admin"] += 1

    async def check_identify(self) -> None:
        d = self.drv
        got = await self.do(d.identify(nvme.CNS_CONTROLLER))
        assert got == self.ref().identify_controller(), "Identify Controller differs from the reference"
        got = await self.do(d.identify(nvme.CNS_NAMESPACE, 1))
        assert got == self.ref().identify_namespace(), "Identify Namespace differs from the reference"
        assert await self.do(d.active_namespaces()) == [1]

    async def check_logs(self) -> None:
        log = await self.do(self.drv.get_log_page(nvme.LID_SMART, 512))
        ref = self.ref()
        ref.read_cmds, ref.bytes_read, ref.write_cmds, ref.bytes_written = self.smart
        assert log.data == ref.smart_log(), f"SMART log differs: {nvme.SmartLog.parse(log.data)} vs {self.smart}"
        dev = ref.device_log(self.core.fw_log)            # the firmware's page, k59..k63 the front end's
        off = 4 * self.rng.randrange(64)
        log = await self.do(self.drv.get_log_page(nvme.LID_DEVICE, 256, offset=off))
        assert log.data == dev[off:off + 256], "LID 0xC0 differs from the reference (firmware page + limits)"
        # the whole page: the SWRITE limits (k59..k63) are those of Identify Controller bytes 3136..3141
        log = await self.do(self.drv.get_log_page(nvme.LID_DEVICE, 512))
        assert log.data == dev, "LID 0xC0 differs from the reference (firmware page + limits)"
        assert log.data[:472] == self.core.fw_log[:472], "LID 0xC0: the firmware's counters k0..k58 changed"
        idc = await self.do(self.drv.identify(nvme.CNS_CONTROLLER))
        rng_, stx, pages = struct.unpack_from("<BBH", idc, 3136)
        first, atx = struct.unpack_from("<BB", idc, 3140)
        lim = struct.unpack_from("<5Q", log.data, 472)
        assert lim == (rng_, stx, pages, first, atx) and stx == self.stx, \
            f"LID 0xC0 limits {lim} vs Identify {(rng_, stx, pages, first, atx)}, STX {self.stx}"

    # ------------------------------------------------------------------ I/O
    async def batch(self, n: int) -> None:
        """n commands over the I/O queues at once, on disjoint LBAs; each one's status and data
        checked when all are done."""
        r, d = self.rng, self.drv
        maxb = min(16, 65536 // self.page_bytes)
        used: set[int] = set()
        cmds = []

        def span(k: int) -> int | None:
            for _ in range(20):
                lba = r.randrange(self.num_lbas - k)
                if not used & set(range(lba, lba + k)):
                    used.update(range(lba, lba + k))
                    return lba
            return None
        for _ in range(n):
            q = r.choice(sorted(q for q in d.sqs if q))
            k = r.randrange(1, maxb + 1) if r.random() < 0.7 else 1
            off = 4 * r.randrange(1024) if r.random() < 0.3 else 0
            kind = r.random()
            lba = span(k)
            if lba is None:
                continue
            if kind < 0.35:
                data = r.randbytes(k * self.page_bytes)
                c = await self.do(d.submit_write(q, lba, data, offset=off, fua=r.random() < 0.2, ring=False))
                cmds.append((c, "write", lba, data))
            elif kind < 0.7:
                c = await self.do(d.submit_read(q, lba, k, offset=off, ring=False))
                cmds.append((c, "read", lba, b"".join(self.shadow.get(lba + i, bytes(self.page_bytes))
                                                       for i in range(k))))
            elif kind < 0.8:
                c = await self.do(d.submit_dsm(q, [(lba, k)]))
                cmds.append((c, "trim", lba, k))
            elif kind < 0.87:
                c = await self.do(d.submit_flush(q))
                cmds.append((c, "flush", 0, None))
            elif kind < 0.93:
                sqe = Sqe(r.choice([0x03, 0x7F, 0x90]), nsid=1)   # not an NVM opcode
                c = await self.do(d.submit(q, sqe))
                cmds.append((c, "err", 0, R.SC_INVALID_OPCODE))
            elif kind < 0.97:
                # past the namespace (the core's BAD_LBA) or above the core's 48 LBA bits (the decoder's own check)
                # (one draw, as before the second kind: the random stream and the other checks' coverage unchanged)
                k = r.randrange(1, 4)
                self.bad_lba_n += 1
                bad = self.num_lbas - 1 + k if self.bad_lba_n % 2 else (k | self.bad_lba_n << 2) << 48
                c = await self.do(d.submit_read(q, bad, 1, ring=False))
                cmds.append((c, "err", 0, R.SC_LBA_RANGE))
            else:
                c = await self.do(d.submit_read(q, lba, 1, nsid=2, ring=False))
                cmds.append((c, "err", 0, R.SC_INVALID_NS))
            if r.random() < 0.15:              # admin data beside the I/O (window writes of both),
                a = r.random()                 # or a vendor feature (its FEATURE beside the descriptors)
                if a < 0.2:
                    sqe = self.random_feature()
                    want = self.admin_ref(sqe)
                    c = await self.do(d.submit(0, sqe, ring=False, what=f"Features {sqe.opc:#x} "
                                               f"CDW10 {sqe.cdw10:#x} CDW11 {sqe.cdw11:#x}"))
                    cmds.append((c, "feat", 0, want))
                elif a < 0.6:
                    c = await self.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096,
                                                  offset=4 * r.randrange(1024), to_host=True, ring=False))
                    cmds.append((c, "admin", 0, self.ref().identify_controller()))
                else:
                    off, ln = 4 * r.randrange(64), 4 * r.randrange(1, 65)
                    sqe = Sqe(nvme.ADM_GET_LOG, nsid=0xFFFFFFFF, cdw10=nvme.LID_DEVICE | (ln // 4 - 1) << 16,
                              cdw12=off)
                    c = await self.do(d._data_cmd(0, sqe, ln, offset=4 * r.randrange(1024), to_host=True,
                                                  ring=False))
                    cmds.append((c, "admin", 0, self.ref().device_log(self.core.fw_log)[off:off + ln]))
        for q in r.sample(sorted(d.sqs), len(d.sqs)):     # the admin SQ too, in a random order
            await self.do(d.ring(q))
        await self.do(d.wait([c for c, *_ in cmds]))
        for c, what, lba, x in cmds:
            self.stats["cmds"] += 1
            st = (c.cqe.sct, c.cqe.sc)
            if what == "feat":
                assert (st, c.cqe.dnr, c.cqe.dw0) == (x[0], int(x[0] != R.SC_OK), x[1]), \
                    f"{c.what}: {c.cqe}, the reference's {x[0]}, DW0 {x[1]:#x}"
                self.stats["feat"] += 1
                continue
            if what == "err":
                assert st == x and c.cqe.dnr == 1, f"{c.what}: status {st}, expected {x}"
                self.stats["errors"] += 1
                continue
            assert st == R.SC_OK, (f"{c.what}: status {nvme.status_name(*st)}; CQE {c.cqe}; descriptors "
                                   f"{[f for f in self.core.descs if f['lba'] == lba]}")
            if what == "write":
                for i in range(len(x) // self.page_bytes):
                    self.shadow[lba + i] = x[i * self.page_bytes:(i + 1) * self.page_bytes]
                self.smart[2] += 1
                self.smart[3] += len(x)
                self.stats["writes"] += 1
                self.stats["bytes"] += len(x)
            elif what == "read":
                assert c.data == x, f"{c.what}: data differs from the device's contents"
                self.smart[0] += 1
                self.smart[1] += len(x)
                self.stats["reads"] += 1
                self.stats["bytes"] += len(x)
            elif what == "admin":
                assert c.data == x, f"{c.what}: admin data differ"
                self.stats["admin"] += 1
            elif what == "trim":
                for i in range(x):
                    self.shadow.pop(lba + i, None)
                self.stats["trims"] += 1
            else:
                self.stats["flushes"] += 1

    async def transactions(self, n: int) -> None:
        """TX writes then commit or abort; a read outside the tx sees the old data until the commit."""
        r, d = self.rng, self.drv
        q = r.choice(sorted(q for q in d.sqs if q))
        for _ in range(n):
            txid = r.randrange(1, self.res0)               # the last stx + atx txids are the front end's
            lbas = r.sample(range(self.num_lbas), r.randrange(1, 4))
            pages = {lba: r.randbytes(self.page_bytes) for lba in lbas}
            for lba, p in pages.items():
                await self.do(d.write(q, lba, p, txid=txid))
                self.smart[2] += 1
                self.smart[3] += len(p)
            lba0 = lbas[0]
            got = await self.do(d.read(q, lba0, 1))
            assert got == self.shadow.get(lba0, bytes(self.page_bytes)), "tx data visible before its commit"
            self.smart[0] += 1
            self.smart[1] += self.page_bytes
            if r.random() < 0.7:
                assert await self.do(d.tx_commit(q, txid)) == len(pages)   # DW0: the entries applied
                self.shadow.update(pages)
            else:
                await self.do(d.tx_abort(q, txid))
            got = await self.do(d.read(q, lba0, 1))
            assert got == self.shadow.get(lba0, bytes(self.page_bytes)), "data after commit / abort"
            self.smart[0] += 1
            self.smart[1] += self.page_bytes
            self.stats["tx"] += 1


    async def atomic_writes(self) -> None:
        """Identify's atomic fields against Linux's rules, then Writes around the atomic unit (module
        docstring): the implicit transaction exactly for Linux's atomic writes of 2+ blocks."""
        r, d, pb, ref = self.rng, self.drv, self.page_bytes, self.ref()
        idc = await self.do(d.identify(nvme.CNS_CONTROLLER))
        idns = await self.do(d.identify(nvme.CNS_NAMESPACE, 1))
        lim = linux_atomic_limits(idc, idns)
        awu = ref.awu
        assert not lim["why"], lim
        assert lim["unit_max"] == lim["max"] == lim["boundary"] == awu * pb >= 16384, (lim, awu)
        assert lim["unit_min"] == pb and lim["nawun"] == lim["awun"] == awu - 1 and lim["nacwu"] == 0, lim
        assert lim["nabsn"] == awu - 1, lim
        assert struct.unpack_from("<I", idc, 3072 + 36)[0] == self.res0 - 1, \
            "num_tx not less the reserved txids"
        q = r.choice(sorted(q for q in d.sqs if q))
        maxb = 65536 // pb
        groups = self.num_lbas // awu
        cases = [(k, r.randrange(awu - k + 1)) for k in range(1, awu + 1)]          # inside a group
        cases += [(k, awu - k) for k in range(1, awu + 1, max(1, awu // 8))]         # at a group's end
        cases += [(k, r.randrange(awu - k + 1, awu)) for k in r.sample(range(2, awu + 1), min(6, awu - 1))]
        cases += [(k, r.randrange(awu)) for k in range(awu + 1, maxb + 1, max(1, (maxb - awu) // 4))]
        seen = dict(atomic=0, plain=0)
        prev = None                                    # the pool's txids are taken in turn
        for k, off in cases:
            lba = r.randrange(groups - (k + off) // awu - 1) * awu + off
            data, fua = r.randbytes(k * pb), r.random() < 0.3
            n0 = len(self.core.descs)
            c = await self.do(d.write(q, lba, data, fua=fua))
            assert c.cqe.ok, f"atomic-unit write {k} at {lba}: {c.cqe}"
            w = [f for f in self.core.descs[n0:] if f["op"] == R.OP_WRITE]
            assert len(w) == 1 and w[0]["lba"] == lba and w[0]["nlb"] == k - 1, w
            atomic = k >= 2 and linux_atomic_ok(lim, pb, lba, k)
            assert atomic == ref.is_atomic(lba, k - 1)
            if atomic:
                txid = w[0]["txid"] if prev is None else self.atom0 + (prev - self.atom0 + 1) % self.atx
                assert self.atom0 <= txid <= self.num_tx, w[0]
                prev = txid
            want = (txid if atomic else 0, (4 if atomic else 0) | (1 if fua else 0))
            assert (w[0]["txid"], w[0]["flags"]) == want, f"{k} blocks at {lba} (group offset {off}): {w[0]}"
            seen["atomic" if atomic else "plain"] += 1
            for i in range(k):
                self.shadow[lba + i] = data[i * pb:(i + 1) * pb]
            self.smart[2] += 1
            self.smart[3] += len(data)
            got = await self.do(d.read(q, lba, k))
            assert got == data, f"atomic-unit write {k} at {lba}: data differ"
            self.smart[0] += 1
            self.smart[1] += len(data)
        assert seen["atomic"] >= awu - 1 and seen["plain"] >= 4, seen
        # the reserved txids are the device's: BAD_TXID from the front end, no descriptor
        n0 = len(self.core.descs)
        for c in [await self.do(d.submit_write(q, 0, bytes(pb), txid=self.num_tx, tx=True)),
                  await self.do(d.submit_tx(q, nvme.IO_TX_BEGIN, self.atom0)),
                  await self.do(d.submit_tx(q, nvme.IO_TX_COMMIT, r.randrange(self.res0, self.num_tx + 1)))]:
            await self.do(d.wait(c))
            assert (c.cqe.sct, c.cqe.sc) == (7, 0x02) and c.cqe.dnr == 1, c.cqe
        assert len(self.core.descs) == n0, "a command of the reserved txid reached the core"
        self.stats["atomic"] = seen

    async def atomic_no_space(self) -> None:
        """An atomic Write ended NO_SPACE with its first pages in the write buffer (the core model's
        `stall`: it waits for a slot after m pages when no_space rises) leaves m uncommitted entries
        of its txid t: it completes Capacity Exceeded with DW0 = m, and the front end sends a TX_ABORT
        of t before the next atomic Write on t's pool entry, so no later COMMIT applies them
        (docs/host-interface.md §1.10). With a pool (ATX > 1) `fillers` take the entries between.
        Three rounds on fresh groups of LBAs: (1) the next atomic Write submitted while the failing
        one waits in the core (ATX = 1: it must not reach the core before that one's completion;
        space is back before it runs; ATX > 1: it is on the next entry and completes while the
        failing one waits); (2) submitted after the failure's CQE; (3) no space still up at the next
        one on the entry: its TX_ABORT is refused, it completes Capacity Exceeded with nothing
        written, and the one after it on the entry (space back) aborts and commits. Reads of every
        failed Write's LBAs return the old data."""
        r, d, pb, awu, atx = self.rng, self.drv, self.page_bytes, self.ref().awu, self.atx
        sqs = sorted(q for q in d.sqs if q)
        groups = r.sample(range(self.num_lbas // awu), 7 + 3 * (atx - 1))
        nx = [7]                                        # the next free group for fillers

        def pick(g: int) -> tuple[int, bytes]:
            k = r.randrange(2, awu + 1)
            return g * awu + r.randrange(awu - k + 1), r.randbytes(k * pb)

        def after(t: int, n: int = 1) -> int:
            """The pool txid n entries after t."""
            return self.atom0 + (t - self.atom0 + n) % atx

        async def read_back(lba: int, n: int, what: str) -> None:
            got = await self.do(d.read(r.choice(sqs), lba, n))
            assert got == b"".join(self.shadow.get(lba + i, bytes(pb)) for i in range(n)), what
            self.smart[0] += 1
            self.smart[1] += n * pb

        async def fail_one(lba: int, data: bytes, q: int):
            """Submits an atomic Write that stalls in the core; returns (command, its WRITE, m)."""
            n = len(data) // pb
            m = r.randrange(1, n)
            self.core.stalled.clear()
            self.core.stall = lambda f: m if (f["op"] == R.OP_WRITE and f["txid"] >= self.atom0 and f["lba"] == lba) else None
            c = await self.do(d.submit_write(q, lba, data))
            for _ in range(4000):
                if self.core.stalled:
                    break
                await ClockCycles(self.dut.clk, 5)
            assert self.core.stalled, "the atomic Write never reached the core"
            return c, self.core.stalled[0], m

        async def ok_one(c, lba: int, data: bytes, what: str) -> None:
            """c is an atomic Write that must complete OK."""
            await self.do(d.wait(c))
            assert c.cqe.ok and c.cqe.dw0 == len(data) // pb, f"{what}: {c.cqe}"
            for i in range(len(data) // pb):
                self.shadow[lba + i] = data[i * pb:(i + 1) * pb]
            self.smart[2] += 1
            self.smart[3] += len(data)

        async def fillers(t: int, n: int) -> None:
            """n atomic Writes that complete OK, on the pool entries after txid t (no abort: clean)."""
            for i in range(n):
                lba, data = pick(groups[nx[0]])
                nx[0] += 1
                n0 = len(self.core.descs)
                await ok_one(await self.do(d.submit_write(r.choice(sqs), lba, data)), lba, data, "filler")
                fs = [(f["op"], f["txid"]) for f in self.core.descs[n0:] if f["lba"] == lba or f["op"] == R.OP_TX_ABORT]
                assert fs == [(R.OP_WRITE, after(t, i + 1))], f"filler {i} after txid {t}: {fs}"

        def abort_first(lba: int, data: bytes, n0: int, t: int, what: str) -> None:
            """Its descriptors (from n0 on): a TX_ABORT of t (answered OK), then its WRITE on t."""
            fs = [f for f in self.core.descs[n0:] if f["txid"] == t]
            assert [(f["op"], f["txid"]) for f in fs] == [(R.OP_TX_ABORT, t), (R.OP_WRITE, t)], f"{what}: {fs}"
            assert fs[0]["tag"] == fs[1]["tag"] and fs[0]["_st"] == R.ST_OK, f"{what}: {fs}"
            assert (fs[1]["lba"], fs[1]["nlb"], fs[1]["flags"] & R.F_COMMIT) == (lba, len(data) // pb - 1, R.F_COMMIT), fs

        def failed(c, m: int, what: str) -> None:
            assert (c.cqe.sct, c.cqe.sc) == R.SC_CAP_EXCEEDED and c.cqe.dnr and c.cqe.dw0 == m, f"{what}: {c.cqe}"
            self.stats["errors"] += 1

        # (1) the next atomic Write already behind the failing one
        la, da = pick(groups[0])
        lb, db = pick(groups[1])
        n0 = len(self.core.descs)
        ca, fa, m = await fail_one(la, da, r.choice(sqs))
        ta = fa["txid"]
        cb = await self.do(d.submit_write(r.choice(sqs), lb, db))
        for _ in range(4000):                           # B fetched: waiting in the decoder (D_DESC), or
            if int(self.dut.u_cmd.d_q.value) == 7 or any(f["lba"] == lb for f in self.core.descs[n0:]):
                break                                   # in the core (behind A, rule 5, or on its own txid)
            await ClockCycles(self.dut.clk, 5)
        else:
            raise AssertionError("the second atomic Write was never fetched")
        if atx > 1:                                     # B on the next entry: done while A waits in the core
            await ok_one(cb, lb, db, "atomic Write on the next pool txid while one waits in the core")
            fb = [f for f in self.core.descs[n0:] if f["lba"] == lb and f["op"] == R.OP_WRITE]
            assert [(f["op"], f["txid"]) for f in fb] == [(R.OP_WRITE, after(ta))], fb
            assert not ca.done and self.core.stalled, "the failing atomic Write left the core before B"
            self.stats["atomic_pool"] = self.stats.get("atomic_pool", 0) + 1
        await ClockCycles(self.dut.clk, r.randrange(1, 200))
        self.core.stub.no_space = True                  # no space: A ends with its first m pages buffered
        await self.do(d.wait(ca))
        failed(ca, m, "atomic Write ended by no space")
        if atx > 1:
            await fillers(after(ta), atx - 2)
            lb, db = pick(groups[nx[0]])
            nx[0] += 1
            n1 = len(self.core.descs)
            cb = await self.do(d.submit_write(r.choice(sqs), lb, db))
        await ok_one(cb, lb, db, "atomic Write behind the failed one")
        await read_back(la, len(da) // pb, "a failed atomic Write became visible (committed by the next one)")
        await read_back(lb, len(db) // pb, "the atomic Write after the failure")
        assert all(f["_seq"] >= fa["_ndesc"] for f in self.core.descs[n0:] if f["txid"] == ta and f is not fa), \
            "the next atomic Write on the txid reached the core before the failed one completed"
        abort_first(lb, db, fa["_seq"] + 1 if atx == 1 else n1, ta, "atomic Write behind the failed one")
        # (2) the next atomic Write submitted after the failure's CQE
        la, da = pick(groups[2])
        lc, dc = pick(groups[3])
        ca, fa, m = await fail_one(la, da, r.choice(sqs))
        ta = fa["txid"]
        self.core.stub.no_space = True
        await self.do(d.wait(ca))
        failed(ca, m, "atomic Write ended by no space")
        await fillers(ta, atx - 1)
        n0 = len(self.core.descs)
        cc = await self.do(d.submit_write(r.choice(sqs), lc, dc))
        await ok_one(cc, lc, dc, "atomic Write after the failure's CQE")
        await read_back(la, len(da) // pb, "a failed atomic Write became visible (committed by the next one)")
        await read_back(lc, len(dc) // pb, "the atomic Write after the failure")
        abort_first(lc, dc, n0, ta, "atomic Write after the failure's CQE")
        # (3) no space still up at the next one: its TX_ABORT is refused; the one after it goes through
        la, da = pick(groups[4])
        ld, dd = pick(groups[5])
        le, de = pick(groups[6])
        self.core.nosp_pulse = atx > 1                  # a pool: space back for the fillers, then up again
        ca, fa, m = await fail_one(la, da, r.choice(sqs))
        ta = fa["txid"]
        self.core.stub.no_space = True
        await self.do(d.wait(ca))
        failed(ca, m, "atomic Write ended by no space")
        if atx > 1:
            await fillers(ta, atx - 1)
            self.core.nosp_pulse = False
            self.core.stub.no_space = True
        n0 = len(self.core.descs)
        cd = await self.do(d.submit_write(r.choice(sqs), ld, dd))
        await self.do(d.wait(cd))
        failed(cd, 0, "atomic Write whose TX_ABORT met no space")
        fs = [f for f in self.core.descs[n0:] if f["txid"] == ta]
        assert [(f["op"], f["_st"]) for f in fs] == [(R.OP_TX_ABORT, R.ST_NO_SPACE)], f"refused abort: {fs}"
        self.core.stub.no_space = False
        self.core.nosp_pulse = True
        n0 = len(self.core.descs)
        ce = await self.do(d.submit_write(r.choice(sqs), le, de))
        await ok_one(ce, le, de, "atomic Write after a refused abort")
        for lba, data, what in ((la, da, "failed"), (ld, dd, "refused"), (le, de, "last")):
            await read_back(lba, len(data) // pb, f"atomic Write ({what}) after no space")
        abort_first(le, de, n0, ta, "atomic Write after a refused abort")
        self.core.stall = None
        for t in range(self.atom0, self.num_tx + 1):
            assert not self.core.stub.tx.get(t), f"txid {t} still holds entries: {self.core.stub.tx.get(t)}"
        self.stats["atomic_nosp"] = 3

    # ------------------------------------------------------------------ static transactions (§1.11)
    def sw_sqe(self, nr: int, nlb: int, laddr: int, **kw) -> Sqe:
        return Sqe(R.IO_SWRITE, nsid=1, cdw10=kw.pop("cdw10", nr), cdw12=nlb, cdw14=laddr & 0xFFFFFFFF,
                   cdw15=laddr >> 32, **kw)

    def submit_swrite(self, q: int, ranges: list[tuple[int, int]], data: bytes, *, lst: bytes | None = None,
                      loff: int | None = None, doff: int = 0, ring: bool = True, **kw):
        """An SWRITE of `ranges` [(lba, blocks)] with `data` (their blocks in list order); `lst` replaces
        the list's bytes, `kw` the SQE's fields. Returns the command and the SQE."""
        d = self.drv
        raw = nvme.dsm_list(ranges) if lst is None else lst
        if loff is None:
            loff = 16 * self.rng.randrange((4096 - max(len(raw), 16)) // 16 + 1)
        lbase = yield from d._alloc(2 * 4096)
        yield Req("mem_write", (lbase + loff, raw or b"\0" * 4))
        addr, prps, bufs = yield from d.map_buffer(max(len(data), 4), doff, data)
        nr = kw.pop("nr", len(ranges))
        sqe = self.sw_sqe(nr, kw.pop("nlb", len(data) // self.page_bytes - 1), lbase + loff, **kw)
        sqe.prp1, sqe.prp2 = prps.prp1, prps.prp2
        c = yield from d.submit(q, sqe, ring=ring, buffers=bufs + [(lbase, 2 * 4096, 4096)], what=f"swrite {ranges}")
        return c, sqe

    def pick_ranges(self, used: set[int], maxp: int) -> list[tuple[int, int]]:
        r = self.rng
        total = r.randrange(1, maxp + 1)
        nr = r.randrange(1, min(R.SW_RANGES, total) + 1)
        cuts = sorted(r.sample(range(1, total), nr - 1)) if nr > 1 else []
        lens = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        out = []
        for n in lens:
            for _ in range(50):
                lba = r.randrange(self.num_lbas - n + 1) if r.random() < 0.9 else self.num_lbas - n
                if not used & set(range(lba, lba + n)):
                    break
            else:
                continue
            used.update(range(lba, lba + n))
            out.append((lba, n))
        r.shuffle(out)
        return out

    def check_swrite_descs(self, descs: list[dict], ranges: list[tuple[int, int]], data: bytes, sqe: Sqe,
                           ref: R.NvmeRef) -> None:
        """The SWRITE's WRITE descriptors (found by its first LBA, after any TX_ABORT of its txid)
        against the reference's plan: in list order, one txid of the engines, COMMIT on the last."""
        st, plan = ref.swrite_plan(sqe.cdw10, sqe.cdw11, sqe.cdw12, sqe.cdw13, sqe.cdw14 | sqe.cdw15 << 32,
                                   nvme.dsm_list(ranges))
        assert st == R.SC_OK, st
        first = [i for i, f in enumerate(descs) if f["op"] == R.OP_WRITE and f["lba"] == plan[0][0]
                 and f["txid"] in self.core.sw_txids]
        assert len(first) == 1, (ranges, first)
        i0, tag, txid = first[0], descs[first[0]]["tag"], descs[first[0]]["txid"]
        mine = [f for f in descs[i0:] if f["tag"] == tag][:len(plan)]
        got = [(f["op"], f["lba"], f["nlb"], f["txid"], f["flags"], f["dptr"] - mine[0]["dptr"]) for f in mine]
        want = [(R.OP_WRITE, a, n, txid, fl, off * self.page_bytes) for a, n, off, fl in plan]
        assert got == want, f"SWRITE {ranges}: descriptors {got}, expected {want}"
        assert mine[0]["dptr"] == tag << 17 | (sqe.prp1 & 0xFFF), mine[0]

    async def static_tx(self, rounds: int) -> None:
        r, d, pb, ref = self.rng, self.drv, self.page_bytes, self.ref()
        idc = await self.do(d.identify(nvme.CNS_CONTROLLER))
        w784, w785 = struct.unpack_from("<II", idc, 3136)
        maxp = ref.sw_pages
        assert w784 == maxp << 16 | self.stx << 8 | R.SW_RANGES and w785 == self.num_tx << 8 | self.res0
        sqs = sorted(q for q in d.sqs if q)
        self.core.sw_par = 0
        waits = dict(swgo=0, srw=0, on=True)           # cycles the decoder waited for an engine / in an SREAD

        async def watch():
            while waits["on"]:
                await RisingEdge(self.dut.clk)
                st = int(self.dut.u_cmd.d_q.value)
                if st == 12:                            # D_SWGO
                    waits["swgo"] += 1
                elif st == 13:                          # D_SRW
                    waits["srw"] += 1
        cocotb.start_soon(watch())
        nsw = rnd = 0
        # whether an SWRITE waits for an engine depends on the doorbells' order (an SREAD decoded
        # first holds the decoder until the release): up to 3 more rounds until one did
        while rnd < rounds or (waits["swgo"] <= nsw and rnd < rounds + 3):
            rnd += 1
            n0 = len(self.core.descs)
            used: set[int] = set()
            cmds, srs = [], []
            for _ in range(r.randrange(self.stx + 1, 2 * self.stx + 2)):     # more than the engines
                q = r.choice(sqs)
                ranges = self.pick_ranges(used, maxp)
                data = r.randbytes(sum(n for _, n in ranges) * pb)
                c, sqe = await self.do(self.submit_swrite(q, ranges, data, doff=4 * r.randrange(1024) if r.random() < 0.3 else 0,
                                                          ring=False))
                cmds.append((c, sqe, ranges, data))
            # an SREAD and a Read of some of their blocks behind them (the SREAD on the last SWRITE's SQ)
            old = dict(self.shadow)
            new = {}
            for _, _, ranges, data in cmds:
                o = 0
                for lba, n in ranges:
                    for i in range(n):
                        new[lba + i] = data[(o + i) * pb:(o + i + 1) * pb]
                    o += n
            for c, sqe, ranges, data in cmds[-2:]:
                lba, n = ranges[0]
                k = min(n, 65536 // pb)
                sr = Sqe(R.IO_SREAD, nsid=1, cdw12=k - 1)
                sr.set_slba(lba)
                src = await self.do(d._data_cmd(c.qid, sr, k * pb, to_host=True, ring=False, what="sread"))
                rd = await self.do(d.submit_read(r.choice(sqs), lba, k, ring=False))
                srs.append((src, rd, lba, k, ranges))
            self.core.held = 1                          # the core completes nothing for a while: every
            for q in r.sample(sqs, len(sqs)):           # engine busy, the next SWRITE waits for one
                await self.do(d.ring(q))

            async def release():
                await self.cycles(r.randrange(2000, 6000))
                self.core.held = 0
            cocotb.start_soon(release())
            await self.do(d.wait([c for c, *_ in cmds] + [x for s_ in srs for x in s_[:2]]))
            for c, sqe, ranges, data in cmds:
                assert c.cqe.ok, f"{c.what}: {c.cqe}"
                self.check_swrite_descs(self.core.descs[n0:], ranges, data, sqe, ref)
                self.smart[2] += 1
                self.smart[3] += len(data)
            self.shadow.update(new)
            for src, rd, lba, k, ranges in srs:
                assert src.cqe.ok and rd.cqe.ok, (src.cqe, rd.cqe)
                want = b"".join(self.shadow.get(lba + i, bytes(pb)) for i in range(k))
                assert src.data == want, f"SREAD {lba}+{k}: not every earlier SWRITE's data"
                was = b"".join(old.get(lba + i, bytes(pb)) for i in range(k))
                assert rd.data in (want, was), f"Read {lba}+{k}: part of an SWRITE"
                self.smart[0] += 2
                self.smart[1] += 2 * k * pb
            # a range of every SWRITE reads back (its data at its place in the transfer)
            for _, _, ranges, _ in cmds:
                for lba, n in r.sample(ranges, 1):
                    got = await self.do(d.read(sqs[0], lba, n))
                    assert got == b"".join(self.shadow[lba + i] for i in range(n)), f"SWRITE range {lba}+{n}"
                    self.smart[0] += 1
                    self.smart[1] += n * pb
            self.stats["swrite"] = self.stats.get("swrite", 0) + len(cmds)
            nsw += len(cmds)
        waits["on"] = False
        assert self.core.sw_par >= 2, f"never two SWRITEs in the core at once ({self.core.sw_par})"
        assert waits["swgo"] > nsw and waits["srw"] > 2 * rounds, f"no SWRITE waited for an engine or SREAD: {waits}"
        self.stats["sw_waits"] = (waits["swgo"], waits["srw"])
        q = sqs[0]
        # a WRITE the core fails: Capacity Exceeded, nothing visible; the engine's next SWRITE aborts the txid first
        used = set()
        ranges = self.pick_ranges(used, maxp)
        while len(ranges) < 2:
            used.clear()
            ranges = self.pick_ranges(used, maxp)
        data = r.randbytes(sum(n for _, n in ranges) * pb)
        bad_i = r.randrange(len(ranges) - 1)            # a WRITE before the COMMIT write fails
        bad_lba = ranges[bad_i][0]
        self.core.fail = lambda f: f["op"] == R.OP_WRITE and f["lba"] == bad_lba and f["txid"] in self.core.sw_txids
        n0 = len(self.core.descs)
        c, sqe = await self.do(self.submit_swrite(q, ranges, data))
        await self.do(d.wait(c))
        self.core.fail = None
        assert (c.cqe.sct, c.cqe.sc) == R.SC_CAP_EXCEEDED and c.cqe.dnr, c.cqe
        failed = [f for f in self.core.descs[n0:]]
        assert [f["lba"] for f in failed] == [a for a, _ in ranges[:bad_i + 1]], failed
        assert not any(f["flags"] & R.F_COMMIT for f in failed), failed
        txid = failed[0]["txid"]
        for lba, n in ranges:
            got = await self.do(d.read(q, lba, n))
            assert got == b"".join(self.shadow.get(lba + i, bytes(pb)) for i in range(n)), "a failed SWRITE is visible"
            self.smart[0] += 1
            self.smart[1] += n * pb
        n0 = len(self.core.descs)
        c, sqe = await self.do(self.submit_swrite(q, ranges, data))
        await self.do(d.wait(c))
        assert c.cqe.ok, c.cqe
        ab = self.core.descs[n0]
        assert (ab["op"], ab["txid"]) == (R.OP_TX_ABORT, txid), ab
        self.check_swrite_descs(self.core.descs[n0 + 1:], ranges, data, sqe, ref)
        o = 0
        for lba, n in ranges:
            for i in range(n):
                self.shadow[lba + i] = data[(o + i) * pb:(o + i + 1) * pb]
            o += n
        self.smart[2] += 1
        self.smart[3] += len(data)
        # bad lists: the reference's status, DNR, nothing to the core
        a0 = r.randrange(self.num_lbas - 2 * maxp)
        one = [(a0, 2)]
        d2 = r.randbytes(2 * pb)
        cases = [
            ("zero ranges", one, d2, dict(nr=0)),
            ("too many ranges", [(a0 + i, 1) for i in range(9)], r.randbytes(9 * pb) if 9 <= maxp else d2, {}),
            ("too many pages", [(a0, maxp + 1)], r.randbytes(min(maxp + 1, 65536 // pb) * pb), dict(nlb=maxp)),
            ("empty range", [(a0, 2), (a0 + 5, 0)], d2, {}),
            ("list past the transfer", [(a0, 2), (a0 + 4, 3)], r.randbytes(4 * pb), {}),
            ("list short of the transfer", [(a0, 1)], d2, {}),
            ("LBA out of range", [(a0, 1), (self.num_lbas - 1, 2)], r.randbytes(3 * pb), {}),
            ("SLBA above 48 bits", [(1 << 48 | a0, 2)], d2, {}),
            ("overlapping ranges", [(a0, 3), (a0 + 5, 1), (a0 + 2, 2)], r.randbytes(6 * pb), {}),
            ("list across a page", [(a0 + 3 * i, 1) for i in range(3)], r.randbytes(3 * pb), dict(loff=4096 - 32)),
            ("list offset", one, d2, dict(loff=4 * r.randrange(1, 8) + 2)),
            ("CDW13", one, d2, dict(cdw13=1 << r.randrange(32))),
            ("CDW11", one, d2, dict(cdw11=1)),
            ("CDW10 bits 31:8", one, d2, dict(cdw10=2 | 1 << r.randrange(8, 32))),
        ]
        for what, ranges, data, kw in cases:
            n0 = len(self.core.descs)
            c, sqe = await self.do(self.submit_swrite(q, ranges, data, **kw))
            await self.do(d.wait(c))
            laddr = sqe.cdw14 | sqe.cdw15 << 32
            want, _ = ref.swrite_plan(sqe.cdw10, sqe.cdw11, sqe.cdw12, sqe.cdw13, laddr, nvme.dsm_list(ranges))
            assert want != R.SC_OK, what
            assert (c.cqe.sct, c.cqe.sc) == want and c.cqe.dnr == 1 and c.cqe.dw0 == 0, f"{what}: {c.cqe}, expected {want}"
            assert len(self.core.descs) == n0, f"{what}: a descriptor reached the core"
            self.stats["errors"] += 1
        # SREAD's own checks: CDW13 (Invalid Field), MDTS
        for cdw13, nb, want in ((1, 1, R.SC_INVALID_FIELD), (0, 65536 // pb + 1, R.SC_INVALID_FIELD)):
            sr = Sqe(R.IO_SREAD, nsid=1, cdw12=nb - 1, cdw13=cdw13)
            c = await self.do(d._data_cmd(q, sr, min(nb * pb, 65536), to_host=True, what="sread"))
            await self.do(d.wait(c))
            assert (c.cqe.sct, c.cqe.sc) == want and c.cqe.dnr, c.cqe


async def run_top(dut) -> None:
    tb = TB(dut)                                       # the device model drives clk and rst
    h, d = tb.host, tb.drv
    await h.start()
    nb = 6 if LONG else 3
    await tb.do(d.bring_up(io_queues=tb.nq, qsize=min(64, tb.qsize), admin_qsize=min(32, tb.qsize)))
    await tb.check_identify()
    await tb.check_features()
    await tb.feature_beside_io()
    await tb.identify_beside_read()
    # I/O, polled then with MSIs
    for i in range(nb):
        d.use_irq = i % 2 == 1
        await tb.batch(3 * tb.qdepth)
    d.use_irq = False
    await tb.transactions(3 if LONG else 2)
    await tb.atomic_writes()
    if tb.stx:
        t0 = get_sim_time("ns")
        await tb.static_tx(2 if LONG else 1)
        dut._log.info("static transactions: %.0f us, %d SWRITEs, %d SWRITE txids in the core at once, "
                      "decoder cycles waiting for an engine / in SREADs %s", (get_sim_time("ns") - t0) / 1000,
                      tb.stats["swrite"], tb.core.sw_par, tb.stats["sw_waits"])
    t0 = get_sim_time("ns")                            # after static_tx: its random draws as before
    await tb.atomic_no_space()
    dut._log.info("atomic Writes ended by no space: %.0f us", (get_sim_time("ns") - t0) / 1000)
    await tb.check_logs()
    # Delete SQ with commands held in the core: it completes after them
    q = max(d.sqs)
    tb.core.held = 1
    cmds = [await tb.do(d.submit_read(q, tb.rng.randrange(tb.num_lbas), 1)) for _ in range(3)]
    await ClockCycles(dut.clk, 300)
    held = [f for f in tb.core.in_core.values() if f["op"] == R.OP_READ]
    assert len(held) == 3, f"the three reads are not all held in the core: {tb.core.in_core}"

    async def release():
        await tb.cycles(2000)
        tb.core.held = 0
    cocotb.start_soon(release())
    t0 = get_sim_time("ns")
    await tb.do(d.delete_io_sq(q))
    assert get_sim_time("ns") - t0 > 2000 * 8 * 0.9, "Delete SQ completed before its commands"
    assert all(c.done and c.cqe.ok for c in cmds)
    tb.smart[0] += 3
    tb.smart[1] += 3 * tb.page_bytes
    await tb.do(d.create_io_sq(q, min(64, tb.qsize), q))
    await tb.batch(tb.qdepth)
    # a controller reset while an Identify waits for the firmware (its answer held in the core):
    # the disable does not wait for the firmware (the command ends, its CQE dropped); its completion
    # comes later and is discarded: the next Identify is byte for byte the reference's with new words.
    # Then the same with a Set Features of SEAL_TIME (its FEATURE held in the core): the firmware
    # takes the value though the host sees no CQE, a Get after the bring-up reads it
    from atomssd.nvme import NvmeDriver
    for op in (R.OP_IDENTIFY, R.OP_FEATURE):
        tb.core.held = 1
        if op == R.OP_IDENTIFY:
            await tb.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096, to_host=True))
        else:
            seal = tb.rng.randrange(0x10000)
            sqe = Sqe(nvme.ADM_SET_FEATURES, cdw10=nvme.FID_SEAL_TIME, cdw11=seal)
            assert tb.admin_ref(sqe) == (R.SC_OK, seal)
            await tb.do(d.submit(0, sqe, what="Set Features 0xc0 (abandoned)"))
        for _ in range(100):
            await ClockCycles(dut.clk, 20)
            if tb.core.in_core:
                break
        assert [f["op"] for f in tb.core.in_core.values()] == [op]
        await h.tr.mmio_write32(nvme.REG_CC, 6 << 16 | 4 << 20)
        for _ in range(100):
            if not await h.csts() & 1:
                break
            await ClockCycles(dut.clk, 20)
        assert not await h.csts() & 1, "the disable waited for the firmware's answer"
        assert [f["op"] for f in tb.core.in_core.values()] == [op], "the firmware request left the core early"
        tb.core.fw_identify = tb.rng.randbytes(64)     # new words for the Identify after the reset
        tb.core.held = 0
        for _ in range(200):
            await ClockCycles(dut.clk, 20)
            if not tb.core.in_core:
                break
        assert not tb.core.in_core
        tb.drv = d = NvmeDriver(timeout_cycles=400_000, poll_cycles=40)
        h.drv = d
        await tb.do(d.bring_up(io_queues=tb.nq, qsize=min(64, tb.qsize), admin_qsize=min(32, tb.qsize)))
        if op == R.OP_IDENTIFY:
            await tb.check_identify()
        else:
            assert await tb.feature(Sqe(nvme.ADM_GET_FEATURES, cdw10=nvme.FID_SEAL_TIME)) == seal, \
                "SEAL_TIME after a controller reset is not the value of the Set it abandoned"
    await tb.batch(tb.qdepth)
    # a controller reset with commands in the core: RDY falls only once they completed
    tb.core.held = 1
    for _ in range(tb.qdepth // 2):
        await tb.do(d.submit_write(tb.rng.choice(sorted(q for q in d.sqs if q)), tb.rng.randrange(tb.num_lbas),
                                   tb.rng.randbytes(tb.page_bytes)))
    # and an admin command whose firmware answer is held in the core too
    await tb.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096, to_host=True))
    for _ in range(100):
        await ClockCycles(dut.clk, 50)
        if any(f["op"] == 9 for f in tb.core.in_core.values()):
            break
    else:
        raise AssertionError(f"the Identify's firmware request is not in the core: {tb.core.in_core}; "
                             f"adm state {int(dut.u_adm.a_q.value)}, cmd state {int(dut.u_cmd.d_q.value)}, "
                             f"fetch_ok_adm {int(dut.u_qm.fetch_ok_adm.value)}")
    await h.tr.mmio_write32(nvme.REG_CC, 6 << 16 | 4 << 20)
    await ClockCycles(dut.clk, 500)
    assert await h.csts() & 1, "RDY fell with commands in the core"
    tb.core.held = 0
    for _ in range(400):
        if not await h.csts() & 1:
            break
        await ClockCycles(dut.clk, 50)
    assert not await h.csts() & 1
    for _ in range(200):                    # the disable does not wait for the firmware: its answer may
        if not tb.core.in_core:             # come after RDY fell (discarded)
            break
        await ClockCycles(dut.clk, 50)
    assert not tb.core.in_core
    # the writes of the reset may or may not have landed: forget their LBAs' contents
    for f in tb.core.descs[-tb.qdepth:]:
        if f["op"] == R.OP_WRITE:
            for i in range(f["nlb"] + 1):
                tb.shadow.pop(f["lba"] + i, None)
                tb.core.stub.pages.pop(f["lba"] + i, None)
    # a new driver on the same host memory: bring-up again, SMART kept since power-on
    tb.drv = d = NvmeDriver(timeout_cycles=400_000, poll_cycles=40)
    h.drv = d
    await tb.do(d.bring_up(io_queues=tb.nq, qsize=min(64, tb.qsize), admin_qsize=min(32, tb.qsize)))
    await tb.batch(2 * tb.qdepth)
    await tb.check_logs()
    # shutdown: one FLUSH (tag 0) to the core, SHST complete
    tb.expect_shutdown_flush = True
    await tb.do(d.shutdown())
    assert (await h.csts()) >> 2 & 3 == 2 and tb.core.flushes == 1
    assert int(dut.cnt_msi_fail.value) == 0 and int(dut.cnt_ur.value) == 0
    assert int(dut.cnt_rd_err.value) == 0 and int(dut.cnt_late.value) == 0
    dut._log.info("ats_nvme: %s; %d descriptors, %d MSIs; contended cycles %s; CQ frames that waited for "
                  "room in the CQ source (the model's task fallback) %d", tb.stats, len(tb.core.descs),
                  len(h.msis), tb.contended, h.cq_fallbacks)
    assert tb.stats["reads"] and tb.stats["writes"] and tb.stats["errors"] and tb.stats["tx"] and h.msis
    assert tb.stats["admin"], tb.stats
    if tb.qdepth >= 8:                  # the small build has too few commands in flight to contend
        assert tb.contended["wwr"] and tb.contended["cmd"], f"shared ports never contended: {tb.contended}"


@cocotb.test()
async def test_top(dut):
    await run_top(dut)


# signals below the top that the test reads: the contention counters bound into the shared ports' arbiters
# (ats_nvme_cover.sv), and
# the admin/command/queue-manager states of a timeout report; only these and the top's own are
# visible to cocotb (runner.run `public`)
PUBLIC = {"ats_nvme_tb_contend": ["n"], "ats_nvme_admin": ["a_q"], "ats_nvme_cmd": ["d_q"],
          "ats_nvme_qm": ["fetch_ok_adm"]}
CONFIGS = {
    "q8_p4096": {"NQ": 2, "QSIZE": 64, "QDEPTH": 8, "PAGE_BYTES": 4096, "NUM_LBAS": 2048, "TAGS": 4, "STX": 2},
    "q4_p512": {"NQ": 1, "QSIZE": 16, "QDEPTH": 4, "PAGE_BYTES": 512, "NUM_LBAS": 4096, "TAGS": 2, "STX": 2},
    "q8_p4096_atx3": {"NQ": 2, "QSIZE": 64, "QDEPTH": 8, "PAGE_BYTES": 4096, "NUM_LBAS": 2048, "TAGS": 4, "STX": 2,
                      "ATX": 3},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme(cfg):
    # stream rules on the m_ ports of the top and of every block inside it (bound by module name)
    srcs = block_sources("ats_nvme", "ats_stream_check") + [
        HERE.parent / d / f"{d}_bind.sv" for d in ("ats_nvme", "ats_nvme_bar", "ats_nvme_rq", "ats_nvme_arb2",
                                                    "ats_nvme_qm", "ats_nvme_prp", "ats_nvme_cmd", "ats_nvme_admin")] + [
        HERE / "ats_nvme_cover.sv"]
    run(toplevel="ats_nvme", sources=srcs, test_module="test_ats_nvme", test_dir=HERE, build_key=cfg,
        parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES"), extra_env={"ATS_LONG": "1" if LONG else "0"},
        public=PUBLIC)
