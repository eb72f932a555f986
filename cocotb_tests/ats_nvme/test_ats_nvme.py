# SPDX-License-Identifier: Apache-2.0
"""ats_nvme: the whole NVMe front end between cocotbext-pcie's root complex (the project's NVMe
driver, sw/host/atomssd/nvme.py) and a Python device core.

The core behind the front end (`CoreModel`): descriptors taken with random backpressure, executed
after random delays and completed out of order by the reference model's `CoreStub` (committed pages,
per-tx pages, the command queue's validation), its data moved through the front end's host-memory
port exactly as the core does: window reads (`s_hrd` requests of at most one page, data on `m_hrd`)
and window writes (`s_hwr` bursts of random length), the READ completion only after its last beat
was taken (ordering rule 1). §1 IDENTIFY / GET_LOG descriptors (tag QDEPTH) are the firmware's
(ats_admin): 128 words written at their dptr, then the completion.

Reference: the host's view. Every read returns what the shadow of the device holds (the last write
of each LBA, zeros after a TRIM or never written), data written by transactions appears only after
their commit; every CQE status is the expected one (errors: LBA Out of Range from the core, Invalid
Opcode, Invalid Namespace, PRP Offset Invalid from the front end); Identify Controller / Namespace
are byte-for-byte the reference model's with the firmware's words, SMART counts the commands the
host saw complete OK, LID 0xC0 is the firmware's page. Then the sequences around the queues: Delete
SQ with commands held in the core (completes after them), a disable with commands in the core
(RDY falls after they complete), re-enable, MSIs, shutdown (one FLUSH, SHST 2). Random idle and
backpressure on every stream.

Atomic writes (docs/host-interface.md "Atomic writes"): the Identify fields against a plain-Python
statement of the Linux NVMe driver's and block layer's rules (`linux_atomic_limits`), then Writes of
every size up to the atomic unit at random offsets inside a group, at a group's end, crossing a
boundary and above the unit, with and without FUA: each one's descriptor is the implicit
transaction (txid NUM_TX + COMMIT) exactly when Linux would send it as an atomic write of two or
more blocks (`linux_atomic_ok`), its data read back; the reserved txid is BAD_TXID.

Environment: ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Lock, RisingEdge
from cocotb.utils import get_sim_time

from atstb import nvme_ref as R
from atstb.nvme_pcie import PcieNvmeHost
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

from atomssd import nvme  # noqa: E402  (on sys.path through atstb.nvme_pcie)
from atomssd.nvme import Sqe  # noqa: E402

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
LOCAL_ADDR = 0x8000_0000


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
        self.held = 0                                   # completions are held while > 0
        self.in_core: dict[int, dict] = {}              # tag -> descriptor
        self.descs: list[dict] = []
        self.flushes = 0
        cocotb.start_soon(self._run())

    async def _run(self) -> None:
        while True:
            while not self.cmd.queue:
                await RisingEdge(self.dut.clk)
            f = self.cmd.queue.popleft()
            assert f["tag"] not in self.in_core, f"descriptor with tag {f['tag']} already in the core: {f}"
            self.in_core[f["tag"]] = f
            self.descs.append(f)
            cocotb.start_soon(self._exec(f))

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
                        await RisingEdge(self.dut.clk)
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

    async def _exec(self, f: dict) -> None:
        slow = self.rng.random() < 0.2                  # some commands take long: their data move late
        await ClockCycles(self.dut.clk, self.rng.randrange(300, 3000) if slow else self.rng.randrange(1, 60))
        tag = f["tag"]
        if f["op"] in (9, 10):                          # the firmware (ats_admin)
            assert tag == self.tb.qdepth and f["dptr"] == LOCAL_ADDR, f
            ans = (self.fw_identify if f["op"] == 9 else self.fw_log).ljust(512, b"\0")
            await self.host_write(f["dptr"], ans)
            st, res = 0, 64 if f["op"] == 9 else 224
        else:
            d = R.Descriptor(f["op"], tag, f["lba"], f["nlb"], f["txid"], f["flags"], f["attr"], f["prio"],
                             f["dptr"], f["aux"])
            if d.op == R.OP_FLUSH and tag == 0 and self.tb.expect_shutdown_flush:
                self.flushes += 1
            fetched: dict[tuple[int, int], bytes] = {}
            while True:
                wrote: list[tuple[int, bytes]] = []

                def rd(a, n):
                    if (a, n) not in fetched:
                        raise _NeedRead(a, n)
                    return fetched[(a, n)]
                try:
                    st, res = self.stub.execute(d, rd, lambda a, b: wrote.append((a, b)))
                    break
                except _NeedRead as e:
                    fetched[(e.addr, e.n)] = await self.host_read(e.addr, e.n)
            for a, b in wrote:
                await self.host_write(a, b)
        while self.held:
            await RisingEdge(self.dut.clk)
        del self.in_core[tag]
        self.cpl.send_nowait(tag=tag, status=st, result=res)
        f["_st"], f["_res"] = st, res


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 104729 + 17)
        self.qdepth = int(dut.QDEPTH.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.nq = int(dut.NQ.value)
        self.num_tx = int(dut.NUM_TX.value)
        self.qsize = int(dut.QSIZE.value)
        self.host = PcieNvmeHost(dut, self.rng, mem_size=8 << 20)
        self.drv = self.host.drv
        self.core = CoreModel(self)
        self.expect_shutdown_flush = False
        self.shadow: dict[int, bytes] = {}              # LBA -> page (what a read must return)
        self.smart = [0, 0, 0, 0]                       # reads, bytes read, writes, bytes written
        self.contended = dict(wwr=0, cqe=0, cmd=0, rd=0)   # cycles both inputs of a shared port offered
        every_edge(dut.clk, self._cover)
        self.stats = dict(admin=0, cmds=0, reads=0, writes=0, tx=0, trims=0, errors=0, flushes=0, bytes=0)

    async def do(self, gen):
        return await self.host.do(gen)

    def _cover(self) -> None:
        d = self.dut
        for k, a in (("wwr", d.u_wwarb), ("cqe", d.u_qarb), ("cmd", d.u_carb), ("rd", d.u_rdarb)):
            if int(a.s0_valid.value) and int(a.s1_valid.value):
                self.contended[k] += 1

    # ------------------------------------------------------------------ checks of the admin data
    def ref(self) -> R.NvmeRef:
        cfg = R.NvmeRefConfig(qdepth=self.qdepth, page_bytes=self.page_bytes, nq=self.nq, qsize=self.qsize,
                              num_lbas=self.num_lbas, fw_identify=self.core.fw_identify)
        return R.NvmeRef(cfg)

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
        off = 4 * self.rng.randrange(64)
        log = await self.do(self.drv.get_log_page(nvme.LID_DEVICE, 256, offset=off))
        assert log.data == self.core.fw_log[off:off + 256], "LID 0xC0 differs from the firmware's page"

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
                c = await self.do(d.submit_read(q, self.num_lbas - 1 + r.randrange(1, 4), 1, ring=False))
                cmds.append((c, "err", 0, R.SC_LBA_RANGE))
            else:
                c = await self.do(d.submit_read(q, lba, 1, nsid=2, ring=False))
                cmds.append((c, "err", 0, R.SC_INVALID_NS))
            if r.random() < 0.15:              # admin data beside the I/O (window writes of both)
                if r.random() < 0.5:
                    c = await self.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096,
                                                  offset=4 * r.randrange(1024), to_host=True, ring=False))
                    cmds.append((c, "admin", 0, self.ref().identify_controller()))
                else:
                    off, ln = 4 * r.randrange(64), 4 * r.randrange(1, 65)
                    sqe = Sqe(nvme.ADM_GET_LOG, nsid=0xFFFFFFFF, cdw10=nvme.LID_DEVICE | (ln // 4 - 1) << 16,
                              cdw12=off)
                    c = await self.do(d._data_cmd(0, sqe, ln, offset=4 * r.randrange(1024), to_host=True,
                                                  ring=False))
                    cmds.append((c, "admin", 0, self.core.fw_log[off:off + ln]))
        for q in r.sample(sorted(d.sqs), len(d.sqs)):     # the admin SQ too, in a random order
            await self.do(d.ring(q))
        await self.do(d.wait([c for c, *_ in cmds]))
        for c, what, lba, x in cmds:
            self.stats["cmds"] += 1
            st = (c.cqe.sct, c.cqe.sc)
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
            txid = r.randrange(1, self.num_tx)              # txid num_tx is the atomic writes'
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
        assert struct.unpack_from("<I", idc, 3072 + 36)[0] == self.num_tx - 1, "num_tx not less the reserved txid"
        q = r.choice(sorted(q for q in d.sqs if q))
        maxb = 65536 // pb
        groups = self.num_lbas // awu
        cases = [(k, r.randrange(awu - k + 1)) for k in range(1, awu + 1)]          # inside a group
        cases += [(k, awu - k) for k in range(1, awu + 1, max(1, awu // 8))]         # at a group's end
        cases += [(k, r.randrange(awu - k + 1, awu)) for k in r.sample(range(2, awu + 1), min(6, awu - 1))]
        cases += [(k, r.randrange(awu)) for k in range(awu + 1, maxb + 1, max(1, (maxb - awu) // 4))]
        seen = dict(atomic=0, plain=0)
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
            want = (self.num_tx if atomic else 0, (4 if atomic else 0) | (1 if fua else 0))
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
        # the reserved txid is the device's: BAD_TXID from the front end, no descriptor
        n0 = len(self.core.descs)
        for c in [await self.do(d.submit_write(q, 0, bytes(pb), txid=self.num_tx, tx=True)),
                  await self.do(d.submit_tx(q, nvme.IO_TX_BEGIN, self.num_tx)),
                  await self.do(d.submit_tx(q, nvme.IO_TX_COMMIT, self.num_tx))]:
            await self.do(d.wait(c))
            assert (c.cqe.sct, c.cqe.sc) == (7, 0x02) and c.cqe.dnr == 1, c.cqe
        assert len(self.core.descs) == n0, "a command of the reserved txid reached the core"
        self.stats["atomic"] = seen


async def run_top(dut) -> None:
    tb = TB(dut)                                       # the device model drives clk and rst
    h, d = tb.host, tb.drv
    await h.start()
    nb = 6 if LONG else 3
    await tb.do(d.bring_up(io_queues=tb.nq, qsize=min(64, tb.qsize), admin_qsize=min(32, tb.qsize)))
    await tb.check_identify()
    # I/O, polled then with MSIs
    for i in range(nb):
        d.use_irq = i % 2 == 1
        await tb.batch(3 * tb.qdepth)
    d.use_irq = False
    await tb.transactions(3 if LONG else 2)
    await tb.atomic_writes()
    await tb.check_logs()
    # Delete SQ with commands held in the core: it completes after them
    q = max(d.sqs)
    tb.core.held = 1
    cmds = [await tb.do(d.submit_read(q, tb.rng.randrange(tb.num_lbas), 1)) for _ in range(3)]
    await ClockCycles(dut.clk, 300)
    held = [f for f in tb.core.in_core.values() if f["op"] == R.OP_READ]
    assert len(held) == 3, f"the three reads are not all held in the core: {tb.core.in_core}"

    async def release():
        await ClockCycles(dut.clk, 2000)
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
    # comes later and is discarded: the next Identify is byte for byte the reference's with new words
    tb.core.held = 1
    await tb.do(d._data_cmd(0, Sqe(nvme.ADM_IDENTIFY, cdw10=nvme.CNS_CONTROLLER), 4096, to_host=True))
    for _ in range(100):
        await ClockCycles(dut.clk, 20)
        if tb.core.in_core:
            break
    assert [f["op"] for f in tb.core.in_core.values()] == [9]
    await h.tr.mmio_write32(nvme.REG_CC, 6 << 16 | 4 << 20)
    for _ in range(100):
        if not await h.csts() & 1:
            break
        await ClockCycles(dut.clk, 20)
    assert not await h.csts() & 1, "the disable waited for the firmware's answer"
    assert [f["op"] for f in tb.core.in_core.values()] == [9], "the firmware request left the core early"
    tb.core.fw_identify = tb.rng.randbytes(64)         # new words for the Identify after the reset
    tb.core.held = 0
    for _ in range(200):
        await ClockCycles(dut.clk, 20)
        if not tb.core.in_core:
            break
    assert not tb.core.in_core
    from atomssd.nvme import NvmeDriver
    tb.drv = d = NvmeDriver(timeout_cycles=400_000, poll_cycles=40)
    h.drv = d
    await tb.do(d.bring_up(io_queues=tb.nq, qsize=min(64, tb.qsize), admin_qsize=min(32, tb.qsize)))
    await tb.check_identify()
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
    assert not await h.csts() & 1 and not tb.core.in_core
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
    dut._log.info("ats_nvme: %s; %d descriptors, %d MSIs; contended cycles %s", tb.stats, len(tb.core.descs),
                  len(h.msis), tb.contended)
    assert tb.stats["reads"] and tb.stats["writes"] and tb.stats["errors"] and tb.stats["tx"] and h.msis
    assert tb.stats["admin"], tb.stats
    if tb.qdepth >= 8:                  # the small build has too few commands in flight to contend
        assert tb.contended["wwr"] and tb.contended["cmd"], f"shared ports never contended: {tb.contended}"


@cocotb.test()
async def test_top(dut):
    await run_top(dut)


# signals below the top that the test reads: the shared ports' arbiters (contention coverage), and
# the admin/command/queue-manager states of a timeout report; only these and the top's own are
# visible to cocotb (runner.run `public`)
PUBLIC = {"ats_nvme_arb2": ["s0_valid", "s1_valid"], "ats_nvme_admin": ["a_q"], "ats_nvme_cmd": ["d_q"],
          "ats_nvme_qm": ["fetch_ok_adm"]}
CONFIGS = {
    "q8_p4096": {"NQ": 2, "QSIZE": 64, "QDEPTH": 8, "PAGE_BYTES": 4096, "NUM_LBAS": 2048, "TAGS": 4},
    "q4_p512": {"NQ": 1, "QSIZE": 16, "QDEPTH": 4, "PAGE_BYTES": 512, "NUM_LBAS": 4096, "TAGS": 2},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme(cfg):
    # stream rules on the m_ ports of the top and of every block inside it (bound by module name)
    srcs = block_sources("ats_nvme", "ats_stream_check") + [
        HERE.parent / d / f"{d}_bind.sv" for d in ("ats_nvme", "ats_nvme_bar", "ats_nvme_rq", "ats_nvme_arb2",
                                                    "ats_nvme_qm", "ats_nvme_prp", "ats_nvme_cmd", "ats_nvme_admin")]
    run(toplevel="ats_nvme", sources=srcs, test_module="test_ats_nvme", test_dir=HERE, build_key=cfg,
        parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES"), extra_env={"ATS_LONG": "1" if LONG else "0"},
        public=PUBLIC)
