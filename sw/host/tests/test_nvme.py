# SPDX-License-Identifier: Apache-2.0
"""The NVMe host driver (sw/host/atomssd/nvme.py) against the reference model of the NVMe front
end (cocotb_tests/lib/atstb/nvme_ref.py), end to end in pure Python: bring-up, Identify, queues,
random I/O mixes checked byte by byte against a plain dict, transactions, DSM, flushes, every
host-provokable status of host-interface.md §1.8, CQ wrap-around, slots, shutdown, reset, MSIs;
plus unit tests of PRP building. Seeded, no sleeps: `pytest sw/host/tests/test_nvme.py`."""
from __future__ import annotations

import asyncio
import random
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "sw" / "host"), str(ROOT / "cocotb_tests" / "lib")]

from atomssd import nvme as N  # noqa: E402
from atomssd.nvme import (ControllerFatal, NvmeDriver, NvmeProtocolError, NvmeStatusError, NvmeTimeout,  # noqa: E402
                          Sqe, build_prps, prp_list_pages_needed, prp_page_count, run_async, run_sync)
from atstb import nvme_ref as R  # noqa: E402
from atstb.nvme_ref import CoreStub, HostMemory, ModelTransport, NvmeRef, NvmeRefConfig  # noqa: E402

PAGE = 4096


# ---------------------------------------------------------------------------------- harness
@dataclass
class Env:
    model: NvmeRef
    t: ModelTransport
    drv: NvmeDriver

    def run(self, gen):
        return run_sync(gen, self.t)

    @property
    def core(self) -> CoreStub:
        return self.model.core



# §1.8 of docs/host-interface.md, as {SCT, SC} literals: the tests expect these, not the reference
# model's own constants (a wrong constant in the model must fail a test, not pass it)
SC_INVALID_OPCODE, SC_INVALID_FIELD, SC_DATA_XFER = (0, 0x01), (0, 0x02), (0, 0x04)
SC_INVALID_NS, SC_CMD_SEQ, SC_PRP_OFFSET, SC_LBA_RANGE = (0, 0x0B), (0, 0x0C), (0, 0x13), (0, 0x80)
SC_CQ_INVALID, SC_INVALID_QID, SC_INVALID_QSIZE, SC_AER_LIMIT = (1, 0x00), (1, 0x01), (1, 0x02), (1, 0x05)
SC_INVALID_IV, SC_INVALID_LOG, SC_INVALID_QDEL = (1, 0x08), (1, 0x09), (1, 0x0C)

def make_env(seed: int = 1, *, core: bool = True, rng: bool = True, io_queues: int = 1, qsize: int = 64,
             bring_up: bool = True, tx_entries: int = 64, drv_kw: dict | None = None, **cfg) -> Env:
    c = NvmeRefConfig(tx_entries=tx_entries, **cfg)      # the front end's TX_ENTRIES = the core's
    stub = CoreStub(c.num_lbas, c.page_bytes, c.num_tx, tx_entries) if core else None
    model = NvmeRef(c, HostMemory(), stub, random.Random(seed) if rng else None)
    env = Env(model, ModelTransport(model), NvmeDriver(timeout_cycles=200_000, **(drv_kw or {})))
    if bring_up:
        env.run(env.drv.bring_up(io_queues, qsize))
    return env


def raw(env: Env, qid: int, sqe: Sqe, length: int = 0, offset: int = 0, to_host: bool = False,
        wait: bool = True) -> N.Command:
    """Submits a hand-built SQE (PRPs from a fresh buffer unless set), waits, never checks the status."""
    read = None
    if length:
        addr, prps, _ = env.run(env.drv.map_buffer(length, offset))
        if not sqe.prp1:
            sqe.prp1, sqe.prp2 = prps.prp1, prps.prp2
        read = (addr, length) if to_host else None
    cmd = env.run(env.drv.submit(qid, sqe, read=read))
    if wait:
        env.run(env.drv.wait(cmd))
    return cmd


def io_sqe(opc: int, lba: int = 0, nblocks: int = 1, cdw13: int = 0, nsid: int = 1, **kw) -> Sqe:
    s = Sqe(opc, nsid=nsid, cdw12=nblocks - 1, cdw13=cdw13, **kw)
    s.set_slba(lba)
    return s


def status(cmd: N.Command) -> tuple[int, int]:
    return (cmd.cqe.sct, cmd.cqe.sc)


def pattern(rng: random.Random, n: int) -> bytes:
    return rng.randbytes(n)


# ---------------------------------------------------------------------------------- PRP unit tests
def test_prp_single_page_and_offset():
    assert build_prps(0x10000, 4096) == N.PrpSet(0x10000, 0)
    assert build_prps(0x10100, 0x100) == N.PrpSet(0x10100, 0)           # offset, same page
    p = build_prps(0x10F00, 0x200)                                        # offset, spills into the next page
    assert (p.prp1, p.prp2, p.lists) == (0x10F00, 0x11000, [])
    assert prp_page_count(0x10F00, 0x200) == 2 and prp_page_count(0x10000, 0) == 0


def test_prp_exactly_two_pages():
    p = build_prps(0x20000, 8192)
    assert (p.prp1, p.prp2, p.lists) == (0x20000, 0x21000, [])
    assert prp_list_pages_needed(0x20000, 8192) == 0
    assert prp_list_pages_needed(0x20000, 8196) == 1                     # three pages: a list


def test_prp_list_and_mdts_limit():
    # MDTS: 64 KiB from an offset of 4 bytes touches 17 pages: PRP1 + a 16-entry list
    p = build_prps(0x30004, 65536, [0x90000])
    assert p.prp1 == 0x30004 and p.prp2 == 0x90000
    ents = struct.unpack("<16Q", p.lists[0][1])
    assert list(ents) == [0x31000 + PAGE * i for i in range(16)]
    assert prp_page_count(0x30004, 65536) == 17


def test_prp_list_crossing_a_page_boundary():
    # first list 16 bytes before its page end: 1 entry + the chain pointer, the rest in the next page
    first = 0x90000 + PAGE - 16
    assert prp_list_pages_needed(0x40000, 5 * PAGE, PAGE - 16) == 2
    p = build_prps(0x40000, 5 * PAGE, [first, 0x91000])
    assert p.prp2 == first
    assert struct.unpack("<2Q", p.lists[0][1]) == (0x41000, 0x91000)
    assert struct.unpack("<3Q", p.lists[1][1]) == (0x42000, 0x43000, 0x44000)
    # the first list holds exactly the remaining entries: no chaining
    assert prp_list_pages_needed(0x40000, 3 * PAGE, PAGE - 16) == 1
    assert len(build_prps(0x40000, 3 * PAGE, [first]).lists) == 1


def test_prp_errors():
    with pytest.raises(ValueError):
        build_prps(0x10002, 100)                                          # not dword aligned
    with pytest.raises(ValueError):
        build_prps(0x10000, 3 * PAGE)                                     # list page missing
    with pytest.raises(ValueError):
        build_prps(0x10000, 3 * PAGE, [0x90000, 0x91000])                 # one too many
    with pytest.raises(ValueError):
        build_prps(0x10000, 20 * PAGE, [0x90000 + PAGE - 8, 0x91004])     # chained list not page aligned


@pytest.mark.parametrize("seed", range(3))
def test_prp_round_trip_through_the_model(seed):
    """Random buffers / lengths / list offsets: the model's PRP walk finds the driver's pages."""
    rng = random.Random(seed)
    for _ in range(200):
        mem = HostMemory()
        model = NvmeRef(mem=mem)
        addr = 0x100000 + rng.randrange(0, PAGE, 4)
        length = rng.randint(1, 17 * PAGE - (addr % PAGE))
        loff = rng.choice([0, 8, PAGE - 8, PAGE - 16, PAGE - 24, rng.randrange(0, PAGE, 8)])
        n = prp_list_pages_needed(addr, length, loff)
        lists = ([0x800000 + loff] + [0x801000 + PAGE * i for i in range(1, n)]) if n else []
        p = build_prps(addr, length, lists)
        for a, b in p.lists:
            mem.write(a, b)
        first = addr & ~0xFFF
        want = list(range(first, addr + length, PAGE))   # every page the transfer touches (not the driver's count)
        assert model.prp_walk(p.prp1, p.prp2, length) == want


# ---------------------------------------------------------------------------------- bring-up
def test_bring_up_and_identify():
    env = make_env(rng=False)
    d, info = env.drv, env.drv.info
    assert (info.mqes, info.cqr, info.ams, info.to, info.dstrd, info.css, info.mpsmin, info.mpsmax) == \
        (255, 1, 0, 20, 0, 1, 0, 0)
    assert info.vs == 0x00010400
    c = d.ctrl
    assert (c.vid, c.ssvid, c.sn, c.mn, c.fr) == (0x1D1D, 0x1D1D, "ATOMSSD-SIM-0001", "atomssd transactional SSD",
                                                  "0000abcd")
    assert (c.mdts, c.cntlid, c.ver, c.oacs, c.acl, c.aerl, c.frmw, c.lpa) == (4, 1, 0x00010400, 0, 3, 3, 0x03, 0x04)
    assert (c.sqes, c.cqes, c.nn, c.oncs, c.vwc) == (0x66, 0x44, 1, 0x0004, 1)
    assert c.vendor_valid and c.vendor["num_lbas"] == 16384 and c.vendor["qdepth"] == 32
    assert c.vendor["page_bytes"] == 4096 and c.vendor["rflush_ranges"] == 8
    assert d.max_transfer == 65536
    ns = d.ns
    assert (ns.nsze, ns.ncap, ns.nuse, ns.nsfeat, ns.nlbaf, ns.flbas, ns.lbads) == (16384,) * 3 + (6, 0, 0, 12)
    # atomic writes (host-interface.md "Atomic writes"): NAWUN NAWUPF NACWU NABSN NABO NABSPF NOIOB, AWUN AWUPF
    assert struct.unpack_from("<7H", ns.raw, 34) == (15, 15, 0, 15, 0, 15, 0)
    assert c.vendor["num_tx"] == 31                 # txid 32 is the atomic writes'
    assert env.run(d.active_namespaces()) == [1]
    assert env.run(d.active_namespaces(1)) == []
    assert env.run(d.identify(N.CNS_NS_DESC, 1)) == bytes(PAGE)
    assert env.run(d.get_features(N.FID_NUM_QUEUES)) == 0x00030003
    assert env.run(d.get_features(N.FID_VWC)) == 1
    assert env.model.csts == 1


def test_bring_up_sim_config_512():
    env = make_env(page_bytes=512, num_lbas=768, rng=False)
    assert env.drv.lba_bytes == 512 and env.drv.ns.nsze == 768
    data = bytes(range(256)) * 2 * 128
    env.run(env.drv.write(1, 0, data))                                    # 128 blocks = 64 KiB = MDTS
    assert env.run(env.drv.read(1, 0, 128)) == data
    with pytest.raises(ValueError):
        env.run(env.drv.submit_read(1, 0, 129))


def test_invalid_cc_sets_cfs_and_reset_clears_it():
    env = make_env(bring_up=False)
    with pytest.raises(ControllerFatal):
        env.run(env.drv.enable(iosqes=5))
    assert env.model.csts & 3 == 2                                        # CFS, not RDY
    env.run(env.drv.enable())                                            # EN 1→0 clears CFS, then a valid CC
    assert env.model.csts & 3 == 1
    env.run(env.drv.disable())
    env.model.mmio_write32(R.REG_AQA, 0)                                  # ASQS 0: invalid admin queue size
    env.model.mmio_write32(R.REG_CC, 1 | 6 << 16 | 4 << 20)
    assert env.model.cfs and not env.model.rdy


class _DeadTransport(ModelTransport):
    """A device that never becomes ready (CC writes are lost)."""

    def mmio_write32(self, off, value):
        if off != R.REG_CC:
            super().mmio_write32(off, value)


def test_ready_timeout_raises():
    model = NvmeRef()
    drv = NvmeDriver(ready_timeout_cycles=5_000)
    with pytest.raises(NvmeTimeout, match="CSTS.RDY"):
        run_sync(drv.enable(), _DeadTransport(model))


class _DeadShortWaits(_DeadTransport):
    """A device that never becomes ready, and a transport whose waits end after 10 cycles (as
    nvme_sim.SimTransport's do at an MSI with stop_at_msi) and return the cycles they ran."""

    def __init__(self, model):
        super().__init__(model)
        self.ran = 0

    def wait(self, cycles):
        super().wait(10)
        self.ran += 10
        return 10


def test_timeouts_count_the_cycles_a_transport_ran():
    """A wait that ends early must not count as a whole poll interval: the timeout is device cycles
    (it was waits x poll_cycles, so waits cut short by interrupts timed out 100x too early here)."""
    model = NvmeRef()
    drv = NvmeDriver(ready_timeout_cycles=5_000, poll_cycles=1_000)
    t = _DeadShortWaits(model)
    with pytest.raises(NvmeTimeout, match="CSTS.RDY"):
        run_sync(drv.enable(), t)
    assert 5_000 <= t.ran <= 5_010
    model2 = NvmeRef()                                    # the same through _wait_cycles (a completion)
    drv2 = NvmeDriver(timeout_cycles=3_000, poll_cycles=1_000)
    t2 = _DeadShortWaits(model2)
    with pytest.raises(NvmeTimeout):
        waited = 0
        while True:
            waited = run_sync(drv2._wait_cycles(waited, drv2.timeout_cycles, "a completion"), t2)
    assert 3_000 <= t2.ran <= 3_010


def env_asq(m) -> int:
    """ASQ as two dword reads (bits 11:0 read 0)."""
    return m.mmio_read32(R.REG_ASQ) | m.mmio_read32(R.REG_ASQ + 4) << 32


def test_register_access_rules():
    m = make_env(rng=False).model
    assert m.mmio_read32(0x02) == 0 and m.mmio_read32(0x18) == 0 and m.mmio_read32(0x20) == 0
    # CAP from §1.2: MQES = QSIZE - 1 (255), CQR bit 16, TO 20 (bits 31:24), CSS NVM bit 37
    assert m.mmio_read64(R.REG_CAP) == 255 | 1 << 16 | 20 << 24 | 1 << 37
    assert m.mmio_read64(R.REG_ASQ) == env_asq(m)
    m.mmio_write32(R.REG_INTMS, 0b1010)
    assert m.mmio_read32(R.REG_INTMS) == 0b1010 and m.mmio_read32(R.REG_INTMC) == 0b1010
    m.mmio_write32(R.REG_INTMC, 0b0010)
    assert m.mmio_read32(R.REG_INTMS) == 0b1000
    m.mmio_write32(R.REG_CC + 1, 0)                                        # unaligned: ignored
    assert m.rdy and m.mmio_read32(0x1000) == 0                          # doorbells read as 0


# ---------------------------------------------------------------------------------- random I/O mixes
def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


@pytest.mark.parametrize("seed,page_bytes", [(1, 4096), (2, 4096), (3, 512), (4, 512)])
def test_random_io_mix(seed, page_bytes):
    """Batches of reads/writes of random sizes (up to MDTS), LBAs, buffer offsets and PRP list
    placements over three queue pairs, many outstanding; every read checked byte by byte against
    a dict; every write descriptor's data and window address checked."""
    rng = random.Random(seed)
    nlbas = 4096 if page_bytes == 4096 else 768
    env = make_env(seed, page_bytes=page_bytes, num_lbas=nlbas, bring_up=False)
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_controller())
    env.run(d.identify_namespace())
    env.run(d.set_num_queues(3, 3))
    for q, size in ((1, 4), (2, 16), (3, 64)):
        env.run(d.create_io_queue_pair(q, size, qprio=rng.randrange(4)))
    ref: dict[int, bytes] = {}
    maxb = 65536 // page_bytes
    zero = bytes(page_bytes)
    checked = chained = wchecked = 0
    for _ in range(80):
        batch, ranges = [], []
        d0 = len(env.model.descriptors)
        for _ in range(rng.randint(1, 10)):
            n = rng.choice([1, 1, 2, 3, maxb - 1, maxb, rng.randint(1, maxb)])
            lba = rng.randrange(0, nlbas - n)
            if any(_overlaps((lba, n), r) for r in ranges):
                continue
            ranges.append((lba, n))
            d.prp_list_offset = rng.choice([0, 0, PAGE - 16, PAGE - 8, 8 * rng.randrange(512)])
            off = rng.choice([0, 0, 4, PAGE - 4, rng.randrange(0, PAGE, 4)])
            q = rng.randint(1, 3)
            if rng.random() < 0.5:
                data = pattern(rng, n * page_bytes)
                cmd = env.run(d.submit_write(q, lba, data, offset=off, fua=rng.random() < 0.2))
                batch.append(("w", lba, n, data, cmd, off))
            else:
                cmd = env.run(d.submit_read(q, lba, n, offset=off))
                batch.append(("r", lba, n, None, cmd, off))
        env.run(d.wait([b[4] for b in batch]))
        # every write descriptor of the batch: the bytes the host wrote, its LBA and PRP1 offset
        mine = {(b[4].qid, b[4].cid): b for b in batch if b[0] == "w"}
        for x in env.model.descriptors[d0:]:
            if x.op == R.OP_WRITE:
                _, lba, n, data, _, off = mine[(x.sqid, x.cid)]
                assert (x.lba, x.nlb, x.dptr & 0xFFF, x.data) == (lba, n - 1, off, data), (x.sqid, x.cid)
                wchecked += 1
        chained += sum(len(b[4].buffers) == 2 and b[4].buffers[1][1] > PAGE for b in batch)
        for kind, lba, n, data, cmd, off in batch:
            cmd.check()
            if kind == "w":
                for i in range(n):
                    ref[lba + i] = data[i * page_bytes:(i + 1) * page_bytes]
            else:
                assert cmd.data == b"".join(ref.get(lba + i, zero) for i in range(n)), (lba, n)
                checked += 1
    assert checked > 60 and chained > 3 and wchecked > 60                 # PRP lists spanning two pages
    assert all(x.tag < 32 and x.dptr >> 17 == x.tag for x in env.model.descriptors)
    assert {x.dptr & 0xFFF for x in env.model.descriptors} - {0} != set()  # PRP1 offsets reached the window
    # a final full read-back of everything written
    for lba, page in sorted(ref.items())[::7]:
        assert env.run(d.read(rng.randint(1, 3), lba, 1)) == page


def test_many_outstanding_out_of_order():
    env = make_env(5, qsize=64)
    d, rng = env.drv, random.Random(5)
    pages = {lba: pattern(rng, PAGE) for lba in range(48)}
    cmds = [env.run(d.submit_write(1, lba, p, ring=False)) for lba, p in pages.items()]
    env.run(d.ring(1))
    env.run(d.wait(cmds))
    assert all(c.ok for c in cmds)
    order = [r.cid for r in env.model.cqes if r.sqid == 1]
    assert order != sorted(order)                                         # completions overtook each other
    assert len({c.cid for c in cmds}) == len(cmds)
    reads = [env.run(d.submit_read(1, lba, 1)) for lba in pages]
    env.run(d.wait(reads))
    assert [r.data for r in reads] == list(pages.values())
    assert not env.model.busy_slots()                                      # every slot freed


def test_several_sqs_share_one_cq_and_cids_repeat():
    env = make_env(6, bring_up=False)
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_namespace())
    env.run(d.create_io_cq(1, 8))
    env.run(d.create_io_sq(1, 8, 1, N.QPRIO_URGENT))
    env.run(d.create_io_sq(2, 8, 1, N.QPRIO_LOW))
    a = env.run(d.submit_write(1, 1, b"\x11" * PAGE))
    b = env.run(d.submit_write(2, 2, b"\x22" * PAGE))
    assert a.cid == b.cid == 0                                            # CIDs are per SQ
    env.run(d.wait([a, b]))
    assert a.ok and b.ok and a.cqe.sqid == 1 and b.cqe.sqid == 2
    prio = {x.sqid: x.prio for x in env.model.descriptors}
    assert prio == {1: 3, 2: 0}
    assert env.run(d.read(2, 1, 1)) == b"\x11" * PAGE
    # an SQ on a CQ with an SQ attached cannot go away first
    assert status(env.run(d.delete_io_cq(1, check=False))) == SC_INVALID_QDEL
    env.run(d.delete_io_sq(1))
    env.run(d.delete_io_sq(2))
    env.run(d.delete_io_cq(1))
    assert set(env.model.sqs) == {0} and set(env.model.cqs) == {0}


def test_qprio_to_descriptor_prio():
    env = make_env(7, bring_up=False, rng=False)
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_namespace())
    for q, qprio in zip(range(1, 5), (N.QPRIO_URGENT, N.QPRIO_HIGH, N.QPRIO_MEDIUM, N.QPRIO_LOW)):
        env.run(d.create_io_queue_pair(q, 4, qprio=qprio))
        env.run(d.flush(q))
    assert [x.prio for x in env.model.descriptors] == [3, 2, 1, 0]


# ---------------------------------------------------------------------------------- CQ wrap-around
@pytest.mark.parametrize("sq_size,cq_size", [(2, 2), (3, 2), (4, 3), (8, 2), (5, 5)])
def test_cq_wrap_and_phase(sq_size, cq_size):
    env = make_env(8, bring_up=False)
    d, rng = env.drv, random.Random(sq_size * 10 + cq_size)
    env.run(d.enable(admin_qsize=2))                                      # the admin queue wraps too
    env.run(d.identify_namespace())
    env.run(d.create_io_queue_pair(1, sq_size, cq_size=cq_size))
    ref = {}
    for i in range(6):
        cmds = []
        for j in range(sq_size - 1):                                      # a full SQ each round
            lba = i * 8 + j
            ref[lba] = pattern(rng, PAGE)
            cmds.append(env.run(d.submit_write(1, lba, ref[lba])))
        env.run(d.wait(cmds))
        assert all(c.ok for c in cmds)
    for lba, p in ref.items():
        assert env.run(d.read(1, lba, 1)) == p
    recs = [r for r in env.model.cqes if r.cqid == 1]
    assert [r.index for r in recs] == [i % cq_size for i in range(len(recs))]
    assert [r.phase for r in recs] == [1 - (i // cq_size) % 2 for i in range(len(recs))]
    adm = [r for r in env.model.cqes if r.cqid == 0]
    assert {r.phase for r in adm} == {0, 1}


# ---------------------------------------------------------------------------------- transactions
def test_transactions_commit_abort_visibility():
    env = make_env(9)
    d, rng = env.drv, random.Random(9)
    old = pattern(rng, 2 * PAGE)
    env.run(d.write(1, 10, old))
    env.run(d.tx_begin(1, 1))
    new = pattern(rng, 2 * PAGE)
    env.run(d.write(1, 10, new, txid=1))
    assert env.run(d.read(1, 10, 2)) == old                               # invisible until the commit
    assert env.run(d.read(1, 10, 2, txid=1)) == new                       # read your writes
    with pytest.raises(NvmeStatusError, match="TABLE_FULL") as e:          # holds entries: end it first
        env.run(d.tx_begin(1, 1))
    assert status(e.value.cmd) == (7, 0x08)
    assert env.run(d.tx_commit(1, 1)) == 2                                # DW0 = the entries applied
    env.run(d.tx_begin(1, 1))                                             # ended: TX Begin is OK again
    assert env.run(d.read(1, 10, 2)) == new
    # abort: the tx's pages are dropped
    env.run(d.write(1, 20, pattern(rng, PAGE), txid=2))
    env.run(d.tx_abort(1, 2))
    assert env.run(d.read(1, 20, 1)) == bytes(PAGE)
    with pytest.raises(NvmeStatusError, match="TX_EMPTY") as e:
        env.run(d.tx_commit(1, 2))
    assert status(e.value.cmd) == (7, 0x06) and e.value.cmd.cqe.dnr == 1
    # COMMIT flag on the last write commits the tx (TxSSD commit block)
    a, b = pattern(rng, PAGE), pattern(rng, PAGE)
    env.run(d.write(1, 30, a, txid=3))
    assert env.run(d.read(1, 30, 1)) == bytes(PAGE)
    w = env.run(d.write(1, 31, b, txid=3, commit=True))
    assert w.cqe.dw0 == 1
    assert env.run(d.read(1, 30, 2)) == a + b
    # DiffWrite patches a committed page inside a tx
    env.run(d.diff_write(1, 10, 100, b"\xAA" * 8, txid=4))
    patched = new[:100] + b"\xAA" * 8 + new[108:PAGE]
    assert env.run(d.read(1, 10, 1)) == new[:PAGE]
    assert env.run(d.read(1, 10, 1, txid=4)) == patched
    assert env.run(d.tx_commit(1, 4)) == 1                                # one entry (the DiffWrite's page)
    assert env.run(d.read(1, 10, 1)) == patched
    dw = [x for x in env.model.descriptors if x.op == R.OP_DIFFWRITE][0]
    assert (dw.lba, dw.nlb, dw.txid, dw.aux, dw.data) == (10, 0, 4, 8 << 16 | 100, b"\xAA" * 8)


def test_vendor_descriptor_fields():
    env = make_env(10, bring_up=False, rng=False)
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_namespace())
    env.run(d.create_io_queue_pair(1, 8, qprio=N.QPRIO_HIGH))
    env.run(d.write(1, 7, b"\x01" * PAGE, txid=5, commit=True, fua=True, attr=N.ATTR_ORDERED, offset=8))
    x = env.model.descriptors[-1]
    assert x.fields() == (R.OP_WRITE, 0, 7, 0, 5, R.F_FUA | R.F_COMMIT, 1, 2, 8, 0)
    env.run(d.write(1, 8, b"\x02" * PAGE, barrier=True))                  # a BARRIER write: TXID 0 + BARRIER
    x = env.model.descriptors[-1]
    assert (x.op, x.txid, x.flags, x.attr) == (R.OP_WRITE, 0, R.F_BARRIER, 0)
    env.run(d.read(1, 7, 1, txid=6, attr=N.ATTR_HEAD))
    x = env.model.descriptors[-1]
    assert (x.op, x.txid, x.attr, x.flags) == (R.OP_READ, 6, 2, 0)
    for opc, op in ((N.IO_TX_BEGIN, R.OP_TX_BEGIN), (N.IO_TX_ABORT, R.OP_TX_ABORT)):
        env.run(d.submit_tx(1, opc, 9))
        env.model.settle()
        x = env.model.descriptors[-1]
        assert (x.op, x.txid, x.lba, x.nlb, x.dptr, x.aux) == (op, 9, 0, 0, 0, 0)
    env.run(d.write(1, 9, b"\x03" * PAGE))
    assert env.model.descriptors[-1].flags == 0
    env.run(d.set_features(N.FID_VWC, 0))                                 # WCE = 0: FUA on every write
    assert env.run(d.get_features(N.FID_VWC)) == 0
    env.run(d.write(1, 9, b"\x03" * PAGE))
    env.run(d.write(1, 9, b"\x03" * PAGE, txid=7))
    env.run(d.diff_write(1, 9, 0, b"\x04" * 4, txid=7))
    assert [x.flags & R.F_FUA for x in env.model.descriptors[-3:]] == [R.F_FUA] * 3


def test_tx_full_and_core_errors():
    env = make_env(11, tx_entries=4)
    d = env.drv
    env.run(d.write(1, 0, bytes(3 * PAGE), txid=1))
    with pytest.raises(NvmeStatusError, match="TX_FULL"):
        env.run(d.write(1, 3, bytes(2 * PAGE), txid=1))
    assert status(env.run(d.wait(env.run(d.submit_tx(1, N.IO_TX_COMMIT, 1))))[0]) == (7, 0x04)
    cases = [
        (io_sqe(N.IO_TX_WRITE, 0, 1, N.vendor_cdw13(33)), PAGE, (7, 0x02)),              # txid > NUM_TX
        (io_sqe(N.IO_TX_COMMIT, cdw13=0), 0, (7, 0x02)),                                 # TX Commit txid 0
        (io_sqe(N.IO_TX_WRITE, 0, 1, N.vendor_cdw13(0, commit=True)), PAGE, (7, 0x02)),  # COMMIT without tx
        (io_sqe(N.IO_TX_WRITE, 0, 1, 3 << 16 | 1), PAGE, (0, 0x02)),                     # ATTR 3
        (io_sqe(N.IO_TX_READ, 0, 1, N.vendor_cdw13(1, commit=True)), PAGE, (0, 0x02)),   # COMMIT on a read
        (io_sqe(N.IO_READ, 16383, 2), 2 * PAGE, (0, 0x80)),                              # LBA out of range
        (io_sqe(N.IO_WRITE, 2 ** 40, 1), PAGE, (0, 0x80)),
        (Sqe(N.IO_DIFF_WRITE, nsid=1, cdw13=1, cdw14=8 << 16 | 4092), 8, (0, 0x02)),    # crosses the page
        (Sqe(N.IO_DIFF_WRITE, nsid=1, cdw13=1, cdw14=0), 0, (0, 0x02)),                  # length 0
        (Sqe(N.IO_DIFF_WRITE, nsid=1, cdw13=0, cdw14=4 << 16), 4, (7, 0x02)),            # no txid
    ]
    for sqe, n, want in cases:
        c = raw(env, 1, sqe, n)
        assert status(c) == want and c.cqe.dnr == 1, (sqe, c.cqe.name)
        assert c.cqe.dw0 >> 24 == 0xCE                                    # the core's rejection result


def test_txread_without_txid_is_a_committed_read():
    env = make_env(12)
    d = env.drv
    env.run(d.write(1, 40, b"\x05" * PAGE, txid=2))
    assert env.run(d.read(1, 40, 1, tx=True)) == bytes(PAGE)
    assert env.model.descriptors[-1].op == R.OP_READ


# ---------------------------------------------------------------------------------- DSM, flush, range flush
def test_dataset_management():
    env = make_env(13, rng=False)
    d, rng = env.drv, random.Random(13)
    data = pattern(rng, 10 * PAGE)
    env.run(d.write(1, 0, data))
    env.run(d.dsm(1, [(7, 1), (2, 3)]))
    trims = [x for x in env.model.descriptors if x.op == R.OP_TRIM]
    assert [(x.lba, x.nlb, x.txid, x.dptr) for x in trims] == [(7, 0, 0, 0), (2, 2, 0, 0)]   # list order
    assert trims[0].tag == trims[1].tag and trims[0].cid == trims[1].cid
    got = env.run(d.read(1, 0, 10))
    want = bytearray(data)
    for lba in (2, 3, 4, 7):
        want[lba * PAGE:(lba + 1) * PAGE] = bytes(PAGE)
    assert got == bytes(want)
    n0 = len(env.model.descriptors)
    c = env.run(d.dsm(1, [(0, 1)], deallocate=False))                     # hints only: no descriptor
    assert c.ok and len(env.model.descriptors) == n0
    assert env.run(d.read(1, 0, 1)) == data[:PAGE]
    env.run(d.dsm(1, [(i, 1) for i in range(8)]))                         # 8 ranges: the limit
    assert len(env.model.descriptors) == n0 + 8 + 1
    bad = Sqe(N.IO_DSM, nsid=1, cdw10=8, cdw11=N.DSM_AD)                  # 9 ranges
    assert status(raw(env, 1, bad, 9 * 16)) == SC_INVALID_FIELD
    # a failing range: the first non-OK status, later ranges still issued
    n1 = len(env.model.descriptors)
    c = env.run(d.submit_dsm(1, [(0, 1), (16383, 2), (5, 1)]))
    env.run(d.wait(c))
    assert status(c) == SC_LBA_RANGE and len(env.model.descriptors) == n1 + 3


def test_dsm_zero_length_range_is_skipped():
    env = make_env(34, rng=False)
    n0 = len(env.model.descriptors)
    c = env.run(env.drv.dsm(1, [(3, 0), (4, 2)]))
    assert c.ok and [(x.lba, x.nlb) for x in env.model.descriptors[n0:]] == [(4, 1)]
    sqe = Sqe(N.IO_DSM, nsid=1, cdw11=N.DSM_AD)
    c = raw(env, 1, sqe, 16)                                              # one range, length 0: nothing to do
    assert c.ok and len(env.model.descriptors) == n0 + 1


def test_round_robin_arbitration():
    """One command at a time, round robin over the SQs with entries (admin included)."""
    env = make_env(35, core=False, rng=False, io_queues=3, qsize=8)
    d = env.drv
    for q, n in ((1, 3), (2, 1), (3, 2)):
        for _ in range(n):
            env.run(d.submit(q, Sqe(N.IO_FLUSH, nsid=1), ring=False))
    env.run(d.submit(0, Sqe(N.ADM_ABORT), ring=False))
    for q in (0, 1, 2, 3):
        env.run(d.ring(q))
    env.model.settle()
    assert [x.sqid for x in env.model.take_descriptors()] == [1, 2, 3, 1, 3, 1]
    last = env.model.cqes[-1]
    assert (last.sqid, last.dw0) == (0, 1)                                 # the Abort, fetched in its turn


def test_flush_and_range_flush():
    env = make_env(14, rng=False)
    d = env.drv
    env.run(d.flush(1))
    env.run(d.flush(1, nsid=0xFFFFFFFF))
    assert [x.fields() for x in env.model.descriptors[-2:]] == [(R.OP_FLUSH, 0, 0, 0, 0, 0, 0, 0, 0, 0)] * 2
    ranges = [(5, 3), (2 ** 33 + 7, 1), (100, 256)]
    c = env.run(d.range_flush(1, ranges))
    x = env.model.descriptors[-1]
    assert (x.op, x.nlb, x.lba, x.dptr) == (R.OP_RFLUSH, 2, 0, 0)
    assert x.aux >> 17 == x.tag and x.data == N.range_flush_list(ranges)
    assert c.ok
    lst = struct.unpack("<6I", x.data)
    assert lst[2:4] == (7, 2)                                             # LBA[31:0], {NLB 0, LBA[47:32]}
    assert lst[5] == 255 << 16
    bad = Sqe(N.IO_RANGE_FLUSH, nsid=1, cdw10=8)
    assert status(raw(env, 1, bad, 72)) == SC_INVALID_FIELD


# ---------------------------------------------------------------------------------- §1.8 statuses
def _io_error_cases(env: Env) -> list[tuple[str, Sqe, int, tuple[int, int]]]:
    big = 1 << 40                                                          # outside host memory
    return [
        ("unknown I/O opcode", io_sqe(0x7F), 0, SC_INVALID_OPCODE),
        ("admin opcode on an I/O queue", Sqe(N.ADM_IDENTIFY, nsid=1, cdw10=1), PAGE, SC_INVALID_OPCODE),
        ("vendor opcode not defined", io_sqe(0x8D), 0, SC_INVALID_OPCODE),
        ("FUSE", io_sqe(N.IO_READ, fuse=1), PAGE, SC_INVALID_FIELD),
        ("PSDT", io_sqe(N.IO_WRITE, psdt=1), PAGE, SC_INVALID_FIELD),
        ("NSID 2", io_sqe(N.IO_READ, nsid=2), PAGE, SC_INVALID_NS),
        ("NSID 0", io_sqe(N.IO_TX_BEGIN, cdw13=1, nsid=0), 0, SC_INVALID_NS),
        ("broadcast NSID on a read", io_sqe(N.IO_READ, nsid=0xFFFFFFFF), PAGE, SC_INVALID_NS),
        ("reserved CDW13 bit 7", io_sqe(N.IO_TX_WRITE, cdw13=1 << 7), PAGE, SC_INVALID_FIELD),
        ("reserved CDW13 bits 19:18", io_sqe(N.IO_TX_READ, cdw13=1 << 18), PAGE, SC_INVALID_FIELD),
        ("reserved CDW13 bit 31", io_sqe(N.IO_TX_COMMIT, cdw13=1 << 31 | 1), 0, SC_INVALID_FIELD),
        ("NLB beyond MDTS", io_sqe(N.IO_READ, 0, 17), 17 * PAGE, SC_INVALID_FIELD),
        ("TX Write beyond MDTS", io_sqe(N.IO_TX_WRITE, 0, 17, 1), 17 * PAGE, SC_INVALID_FIELD),
        ("PRP1 offset not dword aligned", io_sqe(N.IO_READ, prp1=0x200002), 0, SC_PRP_OFFSET),
        ("PRP2 page with an offset", io_sqe(N.IO_READ, 0, 2, prp1=0x200000, prp2=0x201010), 0, SC_PRP_OFFSET),
        ("PRP list not 8-byte aligned", io_sqe(N.IO_READ, 0, 3, prp1=0x200000, prp2=0x300004), 0, SC_PRP_OFFSET),
        ("PRP list unreachable", io_sqe(N.IO_WRITE, 0, 3, prp1=0x200000, prp2=big), 0, SC_DATA_XFER),
        ("DSM range list unreachable", Sqe(N.IO_DSM, nsid=1, cdw11=N.DSM_AD, prp1=big), 0, SC_DATA_XFER),
        ("DSM 9 ranges", Sqe(N.IO_DSM, nsid=1, cdw10=8, cdw11=N.DSM_AD), 144, SC_INVALID_FIELD),
        ("Range Flush 9 ranges", Sqe(N.IO_RANGE_FLUSH, nsid=1, cdw10=8), 72, SC_INVALID_FIELD),
    ]


def test_io_error_statuses():
    env = make_env(15)
    env.model.mem.write(0x300000, struct.pack("<Q", 0x201004))            # a list entry with an offset
    for what, sqe, n, want in _io_error_cases(env):
        n0 = len(env.model.descriptors)
        c = raw(env, 1, sqe, n)
        assert status(c) == want, (what, c.cqe.name)
        assert c.cqe.dnr == 1, what
        assert len(env.model.descriptors) == n0, what                     # front-end errors reach no core
        assert N.STATUS_NAMES[want] in c.cqe.name
    c = raw(env, 1, io_sqe(N.IO_READ, 0, 3, prp1=0x200000, prp2=0x300000), 0)
    assert status(c) == SC_PRP_OFFSET                                   # list entry with an offset
    assert env.model.csts == 1


def test_unreachable_data_is_a_data_transfer_error():
    env = make_env(16)
    for opc in (N.IO_READ, N.IO_WRITE):
        n0 = len(env.model.descriptors)
        c = raw(env, 1, io_sqe(opc, 3, 1, prp1=1 << 40), 0)
        assert status(c) == SC_DATA_XFER and c.cqe.dnr == 1
        assert len(env.model.descriptors) == n0 + 1                       # the core got it; the DMA failed


def test_admin_error_statuses():
    env = make_env(17, io_queues=1)
    d = env.drv
    buf, _, _ = env.run(d.map_buffer(PAGE))
    cases = [
        ("unknown admin opcode", Sqe(0x7F), 0, SC_INVALID_OPCODE),
        ("I/O vendor opcode on the admin queue", Sqe(N.IO_TX_BEGIN, nsid=1, cdw13=1), 0, SC_INVALID_OPCODE),
        ("FUSE on an admin command", Sqe(N.ADM_IDENTIFY, cdw10=1, fuse=2), PAGE, SC_INVALID_FIELD),
        ("Identify CNS 5", Sqe(N.ADM_IDENTIFY, cdw10=5), PAGE, SC_INVALID_FIELD),
        ("Identify namespace 2", Sqe(N.ADM_IDENTIFY, nsid=2, cdw10=0), PAGE, SC_INVALID_NS),
        ("Identify PRP1 offset", Sqe(N.ADM_IDENTIFY, cdw10=1, prp1=buf + 1), 0, SC_PRP_OFFSET),
        ("Create CQ 0", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=3 << 16 | 0, cdw11=1), 0, SC_INVALID_QID),
        ("Create CQ 5 (NQ 4)", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=3 << 16 | 5, cdw11=1), 0, SC_INVALID_QID),
        ("Create CQ that exists", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=3 << 16 | 1, cdw11=1), 0, SC_INVALID_QID),
        ("Create CQ of 1 entry", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=0 << 16 | 2, cdw11=1), 0, SC_INVALID_QSIZE),
        ("Create CQ of 257", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=256 << 16 | 2, cdw11=1), 0, SC_INVALID_QSIZE),
        ("Create CQ not contiguous", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=3 << 16 | 2, cdw11=0), 0,
         SC_INVALID_FIELD),
        ("Create CQ IV 32", Sqe(N.ADM_CREATE_CQ, prp1=buf, cdw10=3 << 16 | 2, cdw11=32 << 16 | 3), 0, SC_INVALID_IV),
        ("Create SQ on a missing CQ", Sqe(N.ADM_CREATE_SQ, prp1=buf, cdw10=3 << 16 | 2, cdw11=3 << 16 | 1), 0,
         SC_CQ_INVALID),
        ("Create SQ on the admin CQ", Sqe(N.ADM_CREATE_SQ, prp1=buf, cdw10=3 << 16 | 2, cdw11=1), 0, SC_CQ_INVALID),
        ("Create SQ that exists", Sqe(N.ADM_CREATE_SQ, prp1=buf, cdw10=3 << 16 | 1, cdw11=1 << 16 | 1), 0,
         SC_INVALID_QID),
        ("Delete a missing SQ", Sqe(N.ADM_DELETE_SQ, cdw10=3), 0, SC_INVALID_QID),
        ("Delete the admin SQ", Sqe(N.ADM_DELETE_SQ, cdw10=0), 0, SC_INVALID_QID),
        ("Delete a CQ with an SQ", Sqe(N.ADM_DELETE_CQ, cdw10=1), 0, SC_INVALID_QDEL),
        ("Delete the admin CQ", Sqe(N.ADM_DELETE_CQ, cdw10=0), 0, SC_INVALID_QID),
        ("Get Log LID 5", Sqe(N.ADM_GET_LOG, cdw10=5 | 127 << 16), 512, SC_INVALID_LOG),
        ("Get Log offset 2", Sqe(N.ADM_GET_LOG, cdw10=2 | 3 << 16, cdw12=2), 16, SC_INVALID_FIELD),
        ("Get Log offset past the log", Sqe(N.ADM_GET_LOG, cdw10=2 | 3 << 16, cdw12=512), 16, SC_INVALID_FIELD),
        ("Set Features FID 0x55", Sqe(N.ADM_SET_FEATURES, cdw10=0x55), 0, SC_INVALID_FIELD),
        ("Get Features FID 0x01", Sqe(N.ADM_GET_FEATURES, cdw10=0x01), 0, SC_INVALID_FIELD),
        ("Number of Queues with I/O queues", Sqe(N.ADM_SET_FEATURES, cdw10=7, cdw11=0x10001), 0, SC_CMD_SEQ),
    ]
    for what, sqe, n, want in cases:
        c = raw(env, 0, sqe, n)
        assert status(c) == want, (what, c.cqe.name)
        assert c.cqe.dnr == 1, what
    assert set(env.model.sqs) == {0, 1} and set(env.model.cqs) == {0, 1}


def test_aer_limit_and_abort():
    env = make_env(18, rng=False)
    d = env.drv
    aers = [env.run(d.submit_aer()) for _ in range(4)]
    fifth = env.run(d.submit_aer())
    env.run(d.wait(fifth))
    assert status(fifth) == SC_AER_LIMIT and fifth.cqe.dnr == 1
    assert not any(a.done for a in aers)                                  # no events are generated
    assert env.run(d.abort(1, 0)) == 1                                    # DW0 bit 0: not aborted
    env.run(d.identify_controller())                                      # admin goes on around the AERs


@pytest.mark.parametrize("dev_status,want", [
    (0x00, (0, 0x00)), (0x01, (0, 0x01)), (0x02, (7, 0x02)), (0x03, (0, 0x80)), (0x04, (7, 0x04)),
    (0x05, (7, 0x05)), (0x06, (7, 0x06)), (0x07, (0, 0x02)), (0x08, (7, 0x08)), (0x10, (2, 0x81)),
    (0x11, (2, 0x80)), (0x12, (0, 0x06)), (0x09, (0, 0x06)), (0x7F, (0, 0x06)),
])
def test_device_status_mapping(dev_status, want):
    """§1.8: each §2 device status as the CQE status, DNR on every error, DW0 = the core's result."""
    env = make_env(19, core=False, rng=False)
    c = env.run(env.drv.submit_read(1, 4, 2))
    env.model.settle()
    (x,) = env.model.take_descriptors()
    env.model.window_write(x.dptr, b"\x5A" * 2 * PAGE)
    env.model.complete(x.tag, dev_status, 0x1234)
    env.run(env.drv.wait(c))
    assert status(c) == want and c.cqe.dnr == int(want != (0, 0)) and c.cqe.dw0 == 0x1234
    assert c.data == (b"\x5A" * 2 * PAGE if want == (0, 0) else None)
    assert "unknown" not in N.status_name(*want)


# ---------------------------------------------------------------------------------- slots, stalls, resets
def test_slots_limit_fetching():
    env = make_env(20, core=False, rng=False, qdepth=4)
    d = env.drv
    cmds = [env.run(d.submit_write(1, i, bytes([i]) * PAGE)) for i in range(10)]
    env.model.settle()
    first = env.model.take_descriptors()
    assert [x.tag for x in first] == [0, 1, 2, 3] and [x.lba for x in first] == [0, 1, 2, 3]
    ctrl = env.run(d.identify_controller())                               # admin still served
    assert ctrl.mdts == 4
    env.model.complete(2, R.ST_OK)
    env.model.settle()
    (nxt,) = env.model.take_descriptors()
    assert (nxt.tag, nxt.lba) == (2, 4)                                   # the freed slot, the next SQE
    for x in first[:2] + first[3:] + [nxt]:
        env.model.complete(x.tag, R.ST_OK)
    for _ in range(3):
        env.model.settle()
        for x in env.model.take_descriptors():
            assert x.data == bytes([x.lba]) * PAGE
            env.model.complete(x.tag, R.ST_OK)
    env.run(d.wait(cmds))
    assert all(c.ok for c in cmds)


def test_cq_full_stalls_completions():
    env = make_env(21, core=False, rng=False, bring_up=False)
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_namespace())
    env.run(d.create_io_queue_pair(1, 8, cq_size=2))                      # CQ room for one entry
    cmds = [env.run(d.submit_flush(1)) for _ in range(3)]
    env.model.settle()
    for x in env.model.take_descriptors():
        env.model.complete(x.tag, R.ST_OK)
    env.model.settle()
    assert len([r for r in env.model.cqes if r.cqid == 1]) == 1
    assert len(env.model.busy_slots()) == 2                                # slots held until their CQE
    env.run(d.wait(cmds))
    assert all(c.ok for c in cmds) and not env.model.busy_slots()


def test_delete_sq_waits_for_its_commands_and_drops_the_rest():
    env = make_env(22, core=False, rng=False, qdepth=2)
    d = env.drv
    cmds = [env.run(d.submit_read(1, i, 1)) for i in range(3)]
    env.model.settle()
    fetched = env.model.take_descriptors()
    assert len(fetched) == 2                                               # the third waits for a slot
    dele = env.run(d.submit(0, Sqe(N.ADM_DELETE_SQ, cdw10=1)))
    env.model.settle()
    assert not [r for r in env.model.cqes if r.cqid == 0 and r.cid == dele.cid]
    for x in fetched:
        env.model.window_write(x.dptr, bytes(PAGE))
        env.model.complete(x.tag, R.ST_OK)
    env.model.settle()
    assert [r.cqid for r in env.model.cqes[-3:]] == [1, 1, 0]             # the SQ's CQEs before the delete's
    assert env.model.take_descriptors() == []                             # the unfetched entry was dropped
    env.run(d.wait(dele))
    assert dele.ok and 1 not in env.model.sqs
    env.run(d.reap(1))
    assert cmds[0].ok and cmds[1].ok and not cmds[2].done


def test_shutdown_sequence():
    env = make_env(23, core=False, rng=False)
    d = env.drv
    w = env.run(d.submit_write(1, 1, b"\x07" * PAGE))
    env.model.settle()
    (x,) = env.model.take_descriptors()
    cc = env.model.mmio_read32(R.REG_CC)
    env.model.mmio_write32(R.REG_CC, cc | N.CC_SHN_NORMAL)
    assert (env.model.csts >> 2) & 3 == 1                                 # occurring
    env.run(d.submit_flush(1))
    env.model.settle()
    assert env.model.take_descriptors() == []                             # no fetch, no FLUSH yet
    env.model.complete(x.tag, R.ST_OK)
    env.model.settle()
    (fl,) = env.model.take_descriptors()
    assert fl.op == R.OP_FLUSH and fl.sqid == 0                           # the front end's own FLUSH
    assert (env.model.csts >> 2) & 3 == 1
    env.model.complete(fl.tag, R.ST_OK)
    assert (env.model.csts >> 2) & 3 == 2
    env.run(d.wait(w))
    assert w.ok


def test_shutdown_through_the_driver():
    env = make_env(24)
    env.run(env.drv.write(1, 3, b"\x09" * PAGE))
    env.run(env.drv.shutdown())
    assert env.model.descriptors[-1].op == R.OP_FLUSH and env.model.shst == 2
    env.run(env.drv.enable())                                             # reset and bring up again
    env.run(env.drv.create_io_queue_pair(1, 8))
    assert env.run(env.drv.read(1, 3, 1)) == b"\x09" * PAGE and env.model.shst == 0


def test_disable_with_commands_in_the_core():
    env = make_env(25, core=False, rng=False)
    d = env.drv
    env.run(d.submit_write(1, 1, b"\x01" * PAGE))
    env.model.settle()
    (x,) = env.model.take_descriptors()
    n_cqe = len(env.model.cqes)
    env.model.mmio_write32(R.REG_CC, env.model.cc & ~1)
    assert env.model.rdy                                                  # waits for the core
    env.model.complete(x.tag, R.ST_OK)
    assert not env.model.rdy and len(env.model.cqes) == n_cqe             # its CQE was dropped
    assert set(env.model.sqs) == set() and set(env.model.cqs) == set()
    env.run(d.enable())
    assert env.model.sqs.keys() == {0}


def test_doorbell_errors_set_cfs():
    def fresh():
        env = make_env(26, rng=False, qsize=8)
        return env, env.model
    env, m = fresh()
    m.mmio_write32(0x1000 + 8, 0)                                         # tail equal to the current: no-op
    assert not m.cfs
    m.mmio_write32(0x1000 + 8, 8)                                         # SQ1 tail = size
    assert m.cfs
    env, m = fresh()
    m.mmio_write32(0x1000 + 8 * 3, 1)                                     # SQ3 does not exist
    assert m.cfs
    env, m = fresh()
    m.mmio_write32(0x1000 + 8 + 4, 1)                                     # CQ1 head past its tail
    assert m.cfs
    c = env.run(env.drv.submit_flush(1))                                  # no more fetching
    with pytest.raises(ControllerFatal):
        env.run(env.drv.wait(c, timeout=1000))
    env.run(env.drv.enable())
    assert m.rdy and not m.cfs


# ---------------------------------------------------------------------------------- logs
def test_smart_and_device_logs():
    env = make_env(27)
    d = env.drv
    for i in range(3):
        env.run(d.write(1, i * 16, bytes(16 * PAGE)))                     # 3 × 64 KiB
    env.run(d.diff_write(1, 0, 0, b"\x01" * 4, txid=1))
    env.run(d.read(1, 0, 1))
    env.run(d.read(1, 0, 2, txid=1))
    sm = env.run(d.smart_log())
    assert (sm.critical_warning, sm.temperature_k, sm.available_spare, sm.percentage_used) == (0, 313, 100, 0)
    assert (sm.host_write_commands, sm.host_read_commands) == (4, 2)
    assert sm.data_units_written == -(-(3 * 65536 + 4) // 512_000) == 1
    assert sm.data_units_read == 1 and sm.power_cycles == 0 and sm.unsafe_shutdowns == 0
    part = env.run(d.get_log_page(N.LID_SMART, 16, offset=64)).data
    assert int.from_bytes(part, "little") == 2                            # Host Read Commands
    dl = env.run(d.device_log())
    assert dl["host_pages"] == 48 and dl["host_bytes"] == 48 * PAGE and dl["sys_clk_hz"] == 125_000_000
    assert dl["cycles"] > 0
    assert env.run(d.get_log_page(N.LID_ERROR, 64)).data == bytes(64)
    assert env.run(d.get_log_page(N.LID_FW_SLOT, 512)).data == bytes(512)
    tail = env.run(d.get_log_page(N.LID_DEVICE, 1024)).data               # past the log's end: zeros
    assert tail[512:] == bytes(512)


# ---------------------------------------------------------------------------------- MSI
def test_msi_vectors_masks_and_irq_driven_driver():
    env = make_env(28, bring_up=False, msi_vectors=2, drv_kw=dict(use_irq=True, msi_vectors=2))
    d = env.drv
    env.run(d.enable())
    env.run(d.identify_namespace())
    env.run(d.create_io_queue_pair(1, 8, iv=1))
    env.run(d.create_io_queue_pair(2, 8, iv=3))                            # 3 mod 2 vectors = 1
    m = env.model
    m.msis.clear()
    env.run(d.write(1, 0, bytes(PAGE)))
    env.run(d.write(2, 1, bytes(PAGE)))
    assert m.msis == [1, 1]
    m.mmio_write32(R.REG_INTMS, 1 << 1)
    c = env.run(d.submit_flush(1))
    m.settle()
    assert m.msis == [1, 1] and c.cqe is None                             # masked: remembered
    m.mmio_write32(R.REG_INTMC, 1 << 1)
    assert m.msis == [1, 1, 1]
    env.run(d.wait(c))
    assert c.ok
    env.run(d.create_io_cq(3, 4, iv=0, ien=False))
    env.run(d.create_io_sq(3, 4, 3))
    env.run(d.flush(3))                                                    # IEN = 0: polled, no MSI
    assert m.msis == [1, 1, 1, 0, 0]                                       # the two admin CQEs


# ---------------------------------------------------------------------------------- driver robustness
def _forge(env: Env, cqid: int, sqhd: int, sqid: int, cid: int) -> None:
    cq = env.drv.cqs[cqid]
    rec = R.CqeRecord(cqid, cq.head, 0, sqhd, sqid, cid, cq.phase, 0, 0, 0)
    env.model.mem.write(cq.base + cq.head * 16, rec.to_bytes())


@pytest.mark.parametrize("what", ["cid", "sqid", "sqhd", "repeat"])
def test_driver_rejects_bad_completions(what):
    env = make_env(29, core=False, rng=False)
    d = env.drv
    c = env.run(d.submit_flush(1))
    if what == "cid":
        _forge(env, 1, 1, 1, c.cid + 7)
    elif what == "sqid":
        _forge(env, 1, 1, 0, c.cid)
    elif what == "sqhd":
        _forge(env, 1, 5, 1, c.cid)                                       # beyond the tail (1)
    else:
        _forge(env, 1, 1, 1, c.cid)
        env.run(d.reap(1))
        assert c.ok
        _forge(env, 1, 1, 1, c.cid)                                       # the same CQE again, next entry
    with pytest.raises(NvmeProtocolError):
        env.run(d.reap(1))


def test_completion_timeout_names_the_command():
    env = make_env(30, core=False, rng=False)
    c = env.run(env.drv.submit_read(1, 9, 1))
    with pytest.raises(NvmeTimeout, match=f"read 9\\+1 \\(SQ 1, CID {c.cid}\\)"):
        env.run(env.drv.wait(c, timeout=640))


def test_submit_waits_for_room_in_a_full_sq():
    env = make_env(31, qsize=2)                                           # one entry usable
    cmds = [env.run(env.drv.submit_write(1, i, bytes([i]) * PAGE)) for i in range(5)]
    env.run(env.drv.wait(cmds))
    assert all(c.ok for c in cmds)


# ---------------------------------------------------------------------------------- async runner
class _AsyncTransport:
    """Every method a coroutine, as a cocotb transport would be."""

    def __init__(self, t: ModelTransport):
        self.t = t

    def __getattr__(self, name):
        f = getattr(self.t, name)

        async def call(*args):
            await asyncio.sleep(0)
            return f(*args)
        return call


def test_run_async_with_an_async_transport():
    model = NvmeRef(core=CoreStub(16384, 4096), rng=random.Random(32))
    t = _AsyncTransport(ModelTransport(model))
    d = NvmeDriver()

    async def main():
        await run_async(d.bring_up(2, 16), t)
        await run_async(d.write(2, 77, b"\x42" * 3 * PAGE, offset=12), t)
        return await run_async(d.read(1, 77, 3), t)
    assert asyncio.run(main()) == b"\x42" * 3 * PAGE


def test_model_on_a_plain_bytearray():
    """The model works on any bytes-like host memory; the admin queues live in it."""
    buf = bytearray(64 * 1024)
    m = NvmeRef(mem=buf)
    m.mmio_write32(R.REG_AQA, 3 << 16 | 3)
    m.mmio_write64(R.REG_ASQ, 0x1000)
    m.mmio_write64(R.REG_ACQ, 0x2000)
    m.mmio_write32(R.REG_CC, 1 | 6 << 16 | 4 << 20)
    assert m.csts == 1
    buf[0x1000:0x1040] = Sqe(N.ADM_IDENTIFY, cdw10=1, prp1=0x3000, cid=0x55).to_bytes()
    m.mmio_write32(0x1000, 1)
    m.settle()
    cqe = N.Cqe.from_bytes(bytes(buf[0x2000:0x2010]))
    assert (cqe.cid, cqe.phase, cqe.ok, cqe.sqhd, cqe.sqid) == (0x55, 1, True, 1, 0)
    assert N.IdentifyController.parse(bytes(buf[0x3000:0x4000])).sn == "ATOMSSD-SIM-0001"
    assert m.msis == [0]


def test_disable_stops_a_dsm_between_ranges():
    env = make_env(36, core=False, rng=False)
    env.run(env.drv.submit_dsm(1, [(1, 1), (2, 1), (3, 1)]))
    env.model.settle()
    (x,) = env.model.take_descriptors()
    env.model.mmio_write32(R.REG_CC, env.model.cc & ~1)
    env.model.complete(x.tag, R.ST_OK)
    assert env.model.take_descriptors() == [] and not env.model.rdy


def test_transport_errors_surface_in_the_driver():
    env = make_env(33)

    def bad_read():
        yield N.Req("mem_read", (1 << 40, 16))
    with pytest.raises(R.DmaError):
        env.run(bad_read())


def test_raw_layouts_against_the_doc():
    """Bit layouts checked against docs/host-interface.md literals, not through the other model's
    encoder: a CQE's DW3 in host memory (§1.8: DNR bit 31, SCT 27:25, SC 24:17, phase 16, CID 15:0;
    DW2: SQID 31:16, SQ head 15:0) and CDW13's COMMIT (bit 8) / BARRIER (bit 9) / TXID (5:0)
    / ATTR (17:16) landing in the §1 descriptor (flags bit 2 COMMIT, bit 1 BARRIER)."""
    env = make_env(41)
    c = raw(env, 1, io_sqe(N.IO_READ, fuse=1), PAGE)                   # Invalid Field in Command
    rec = env.model.cqes[-1]
    cq = env.drv.cqs[1]
    dw = struct.unpack("<4I", env.model.mem.read(cq.base + 16 * rec.index, 16))
    assert dw[3] == (1 << 31) | (0x02 << 17) | (rec.phase << 16) | c.cid, hex(dw[3])
    assert dw[2] == (1 << 16) | rec.sqhd
    n0 = len(env.model.descriptors)
    raw(env, 1, io_sqe(N.IO_TX_WRITE, 5, 1, cdw13=3 | 1 << 8 | 1 << 16), PAGE)
    raw(env, 1, io_sqe(N.IO_TX_WRITE, 6, 1, cdw13=1 << 9), PAGE)
    d1, d2 = env.model.descriptors[n0:n0 + 2]
    assert (d1.op, d1.txid, d1.flags, d1.attr, d1.lba) == (1, 3, 4, 1, 5)
    assert (d2.op, d2.txid, d2.flags, d2.attr, d2.lba) == (1, 0, 2, 0, 6)


def test_controller_reset_clears_intms_and_held_msis():
    """§1.2: a controller reset (CC.EN 1 -> 0) clears INTMS; an MSI held back by INTMS is dropped
    with the queues, not sent after the next enable."""
    env = make_env(43)
    m, d = env.model, env.drv
    iv = d.cqs[1].iv % d.msi_vectors
    m.mmio_write32(N.REG_INTMS, 1 << iv)
    env.run(d.read(1, 0, 1))
    n = m.msis.count(iv)
    assert m.mmio_read32(N.REG_INTMS) == 1 << iv
    env.run(d.disable())
    assert m.mmio_read32(N.REG_INTMS) == 0
    env.run(d.bring_up(1, 64))
    m.mmio_write32(N.REG_INTMC, 1 << iv)            # an unmask sends what is held back: nothing now
    assert m.msis.count(iv) == n, "an MSI held back before the reset was sent after it"


def test_delete_sq_and_shutdown_with_a_full_cq():
    """A Delete SQ (and a shutdown) waits in the device for the SQ's commands, whose CQEs wait for
    room in a full CQ: the driver reaps every CQ while it waits, so neither times out."""
    for action in ("delete", "shutdown"):
        env = make_env(23, bring_up=False)
        d = env.drv
        env.run(d.enable())
        env.run(d.identify_namespace())
        env.run(d.create_io_queue_pair(1, 8, cq_size=2))                  # CQ room for one entry
        cmds = [env.run(d.submit_flush(1)) for _ in range(5)]
        if action == "delete":
            env.model.settle()                          # all fetched: CQEs wait for room in CQ 1
            env.run(d.delete_io_sq(1))
            assert 1 not in d.sqs
            # the fetched ones complete, the unfetched ones are dropped (§1.6)
            assert all(c.ok or c.dropped for c in cmds) and any(c.ok for c in cmds)
        else:
            env.model.settle()                          # fetched: CQEs wait for room in CQ 1
            fetched = {x.cid for x in env.model.descriptors if x.sqid == 1}
            assert len(fetched) > 1
            env.run(d.shutdown())
            assert env.model.csts >> 2 & 3 == N.SHST_COMPLETE
            # every command fetched before the shutdown completed, reaped by the shutdown's wait
            assert {c.cid for c in cmds if c.ok} == fetched


def test_driver_refuses_malformed_requests_up_front():
    """Values that do not fit their SQE fields raise ValueError before anything is submitted."""
    env = make_env(44)
    d = env.drv
    bad = [d.submit_read(1, 0, 0), d.submit_diff_write(1, 0, 1 << 16, b"abcd", 1),
           d.get_log_page(N.LID_SMART, 6), d.get_log_page(N.LID_SMART, 0)]
    for gen in bad:
        with pytest.raises(ValueError):
            env.run(gen)
    for ranges in ([(1 << 48, 1)], [(0, 0)], [(0, (1 << 16) + 1)]):
        with pytest.raises(ValueError):
            N.range_flush_list(ranges)
    assert not env.drv.sqs[1].outstanding and env.model.csts == 1
