# SPDX-License-Identifier: Apache-2.0
"""ats_sata: the SATA front end (transport + command layers over ats_sata_link), between a Python
SATA host (atstb.sata_host: transport and command layers over the Python host link layer, written
from docs/host-interface.md §2) and a Python device core (atstb.sata_core_model: nvme_ref.CoreStub
behind the core ports, out-of-order completions, random delays, the firmware's IDENTIFY words).

References are independent of the RTL and written from the docs: the IDENTIFY page built word by
word from §2.4 with the core model's firmware words; a shadow of the medium (committed pages, per-tx
overlays: read your writes, commit makes visible, abort / recovery discards) that every read is
compared against byte for byte; the §1 descriptor every host command must produce (§2.2, §2.3:
TXID / COMMIT / BARRIER / FUA / ORDERED / PRIO from the FIS, tag, window dptr), compared as a
multiset per batch; the Status / Error of every command (§2.5); the NCQ error log (log 0x10)
built from §2.5; the device's settings (SET FEATURES 0x56, §2.2a, with docs/architecture.md §1.2's
FEATURE semantics: `nvme_ref.FwFeatures`), their descriptor and their Register D2H dword by dword. The host
model checks the device's FIS layouts and protocol as it goes.

cocotb tests: identify_page, ncq_random (32 tags, random mixes, transactions, recovery),
nonqueued (DMA EXT, FLUSH, DSM TRIM), errors (every §2.5 refusal, device statuses, the error log),
link_faults (bad CRC from the host, R_ERR from the host, retries both ways), write_prefetch (the next
NCQ write's data fetched while the previous page goes to the core, with pauses, bad CRCs and R_ERR),
sdb_take_same_clock (an NCQ command taken by DEC in the clock an SDB is done stays outstanding),
features (SET FEATURES 0x56: get / set / read-back, unknown FIDs, every other subcommand and every
must-be-0 field refused, the result's 32 bits, busy refusals, a build without the feature).
SET FEATURES forms are also mixed into ncq_random (between batches) and nonqueued.

Environment: ATS_SEED, ATS_LONG=1 (longer random campaign), ATS_WAVES=1, ATS_SATA_TESTS (a regex
on the cocotb test names), ATS_SATA_BATCHES (NCQ batches of ncq_random, default 3).
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from atstb import nvme_ref as R
from atstb.runner import ROOT, block_sources, run
from atstb.sata_core_model import SataCoreModel
from atstb import sata_host as H
from atstb.sata_host import SataHost
from atstb.streams import every_edge
from atstb.trace import SATA_OUTPUTS, trace_outputs

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
NQ_TAG = 32
WIN = 17
PRIO_MAP = {0: 0, 1: 2, 2: 3}
OK = (0x40, 0)
ABRT = (0x41, 0x04)
NUM_TX = 31


def _env_int(name, default):
    return int(os.environ.get(name, str(default)))


# ------------------------------------------------------------------------------------------------
# references from the docs
def ata_string(s: str, nchars: int) -> list[int]:
    s = s.ljust(nchars)
    return [(ord(s[2 * i]) << 8) | ord(s[2 * i + 1]) for i in range(nchars // 2)]


def identify_ref(page_bytes: int, fw: list[int], fr: str = "0000abcd") -> list[int]:
    """docs/host-interface.md §2.4, word by word."""
    w = [0] * 256
    w[0] = 0x0040
    w[10:20] = ata_string("ATOMSSD-SIM-0001", 20)
    w[23:27] = ata_string(fr, 8)
    w[27:47] = ata_string("atomssd transactional SSD", 40)
    w[47] = 0x8001
    w[49] = 0x0300
    w[53] = 0x0006
    cap = fw[8]
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
        w[100 + i] = (cap >> (16 * i)) & 0xFFFF
    w[106] = 0x4000 | (0x1000 if page_bytes > 512 else 0)
    w[117], w[118] = (page_bytes // 2) & 0xFFFF, (page_bytes // 2) >> 16
    w[129] = 0x5344
    for k in range(1, 16):
        w[130 + 2 * (k - 1)] = fw[k] & 0xFFFF
        w[131 + 2 * (k - 1)] = fw[k] >> 16
    w[169] = 0x0001
    w[217] = 0x0001
    s = sum((x & 0xFF) + (x >> 8) for x in w[:255]) + 0xA5
    w[255] = ((-s) & 0xFF) << 8 | 0xA5
    return w


def status_of(dev_status: int) -> tuple[int, int]:
    """§2.5: Status / Error from a §2 device status."""
    return {R.ST_OK: OK, R.ST_BAD_LBA: (0x41, 0x10), R.ST_MEDIA_ERROR: (0x41, 0x40),
            R.ST_PROGRAM_FAIL: (0x61, 0x04)}.get(dev_status, ABRT)


def ncq_log_ref(tag, st, err, lba, device, count, dev_status) -> bytes:
    b = bytearray(512)
    b[0] = tag & 0x1F
    b[2], b[3] = st, err
    for i in range(3):
        b[4 + i] = (lba >> (8 * i)) & 0xFF
        b[8 + i] = (lba >> (24 + 8 * i)) & 0xFF
    b[7] = device
    b[12], b[13] = count & 0xFF, count >> 8
    b[256] = dev_status
    b[511] = (-sum(b)) & 0xFF
    return bytes(b)


FID_SEAL = R.FEAT_SEAL_TIME
# SET FEATURES subcommands that are not the device's (§2.2a: ERR ABRT, no descriptor): standard
# ones, the other vendor-specific codes (0x57 … 0x5C, 0xD6 … 0xDC, 0xE0), CFA's, reserved ones
BAD_SUBS = (0x00, 0x02, 0x03, 0x05, 0x10, 0x43, 0x55, 0x57, 0x5A, 0x5C, 0x66, 0x82, 0x90, 0xAA, 0xC3,
            0xCC, 0xD6, 0xDC, 0xE0, 0xF0, 0xFF, 0x156, 0x8056)   # the last two: Features 15:8 not 0
FEAT_FORMS = ("get", "set", "unknown", "inject", "badsub", "rsvd")


def d2h_ref(st: int, err: int, result: int = 0) -> list[int]:
    """A non-queued command's ending Register D2H (§2.5, I = 1); §2.2a: LBA 31:0 = `result`."""
    return [err << 24 | st << 16 | 1 << 14 | H.FIS_D2H, result & 0xFFFFFF, result >> 24, 0, 0]


def desc(op, tag, lba=0, nlb=0, txid=0, flags=0, attr=0, prio=0, dptr=None, aux=0) -> tuple:
    return (op, tag, lba, nlb, txid, flags, attr, prio, (tag << WIN) if dptr is None else dptr, aux)


def dtuple(f: dict) -> tuple:
    return tuple(f[k] for k in ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"))


FIELDS = "op tag lba nlb txid flags attr prio dptr aux"


def fmt_desc(t) -> str:
    return " ".join(f"{k}={v:#x}" for k, v in zip(FIELDS.split(), t))


# ------------------------------------------------------------------------------------------------
class TB:
    def __init__(self, dut, num_lbas: int | None = None, pauses=True):
        self.dut = dut
        seed = _env_int("ATS_SEED", 1)
        self.rng = random.Random(seed * 65537 + 29)
        cocotb.start_soon(Clock(dut.clk, 6666, unit="ps").start())
        self.pb = int(dut.PAGE_BYTES.value)
        self.num_tx = int(dut.NUM_TX.value) if hasattr(dut, "NUM_TX") else NUM_TX
        self.maxn = 65536 // self.pb
        self.num_lbas = num_lbas if num_lbas is not None else (0x12345678 if self.pb == 4096 else 50_000)
        dut.rst.value = 1
        dut.phy_ready.value = 1
        self.core = SataCoreModel(dut, self.rng, self.pb, self.num_lbas, num_tx=self.num_tx, pauses=pauses,
                                  delay=(1, 40), slow=(200, 1500), slow_p=0.1)
        self.host = SataHost(dut, self.rng, self.pb)
        # the build's seal time (the firmware's at power-on), drawn apart from `rng`
        self.seal0 = random.Random(seed * 31 + 5).randrange(65536)
        self.core.fw_features = R.FwFeatures(self.seal0)
        self.feat = R.FwFeatures(self.seal0)   # the device settings' one reference (§1.2)
        trace_outputs(dut, dut.clk, SATA_OUTPUTS, "ats_sata")    # ATS_TRACE=<file>: refactoring checks
        self.shadow: dict[int, bytes] = {}
        self.txs: dict[int, dict[int, bytes]] = {}
        self.ndesc = 0

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 10)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 20)

    def page(self, lba: int, txid: int = 0) -> bytes:
        if txid and lba in self.txs.get(txid, {}):
            return self.txs[txid][lba]
        return self.shadow.get(lba, bytes(self.pb))

    def view(self, lba: int, n: int, txid: int = 0) -> bytes:
        return b"".join(self.page(lba + i, txid) for i in range(n))

    def new_descs(self) -> list[tuple]:
        d = self.core.descs[self.ndesc:]
        self.ndesc = len(self.core.descs)
        return [dtuple(f) for f in d]

    def check_descs(self, expected: list[tuple], what: str, ordered: bool = False) -> None:
        got = self.new_descs()
        if ordered:
            ok = got == expected
        else:
            ok = sorted(got) == sorted(expected)
        if not ok:
            miss = [fmt_desc(t) for t in expected if t not in got][:6]
            extra = [fmt_desc(t) for t in got if t not in expected][:6]
            raise AssertionError(f"{what}: descriptors differ ({len(got)} got, {len(expected)} expected)\n"
                                 f"  expected, not seen: {miss}\n  seen, not expected: {extra}")

    def check_data(self, got: bytes, exp: bytes, what: str) -> None:
        if got != exp:
            i = next(i for i in range(min(len(got), len(exp))) if got[i] != exp[i]) \
                if len(got) == len(exp) else -1
            raise AssertionError(f"{what}: data differ (lengths {len(got)} / {len(exp)}, first byte {i}: "
                                 f"{got[i:i + 8].hex() if i >= 0 else ''} vs {exp[i:i + 8].hex() if i >= 0 else ''})")

    async def expect_quiet(self, cycles: int, what: str) -> None:
        """No FIS from the device and no descriptor for `cycles`."""
        n_rx, n_d = len(self.host.link.received), len(self.core.descs)
        await ClockCycles(self.dut.clk, cycles)
        assert len(self.host.link.received) == n_rx, f"{what}: the device sent a FIS"
        assert len(self.core.descs) == n_d, f"{what}: a descriptor was issued"

    def cov(self) -> str:
        h, c = self.host, self.core
        return (f"host stats {h.stats}, link collisions {h.link.collisions}, holds sent {h.link.holds_sent}, "
                f"descriptors {len(c.descs)}, cycles {h.cycle}")


async def start(dut, **kw) -> TB:
    tb = TB(dut, **kw)
    await tb.reset()
    return tb


# ------------------------------------------------------------------------------------------------
async def do_identify(tb: TB, what: str) -> None:
    page = await tb.host.identify()
    words = list(struct.unpack("<256H", page))
    ref = identify_ref(tb.pb, tb.core.fw_words)
    bad = [(i, words[i], ref[i]) for i in range(256) if words[i] != ref[i]]
    assert not bad, f"{what}: IDENTIFY words differ (word, got, expected): " + \
        ", ".join(f"{i}: {g:#06x}/{e:#06x}" for i, g, e in bad[:20])
    tb.check_descs([desc(9, NQ_TAG)], f"{what}: IDENTIFY descriptor", ordered=True)


async def do_feature(tb: TB, form: str | None = None, what: str = "") -> None:
    """One SET FEATURES (form from FEAT_FORMS, random when None; ignored fields random at times),
    checked against §2.2a: Status / Error, the ending D2H dword by dword (the result in LBA 31:0),
    the FEATURE descriptor (none for a refused form)."""
    r, host, core = tb.rng, tb.host, tb.core
    form = form or r.choice(FEAT_FORMS)
    kw = {}
    if r.random() < 0.4:                          # Device, ICC, Control, dword 4: ignored
        kw = dict(device=r.getrandbits(8), icc=r.getrandbits(8), control=r.getrandbits(8) & ~0x04,
                  aux=r.getrandbits(32))
    fid = FID_SEAL
    value = r.choice([0, 0xFFFF, r.randrange(65536), r.randrange(65536)])
    set_ = form == "set" or form != "get" and r.random() < 0.5
    exp_desc = None
    if form in ("get", "set", "unknown", "inject"):
        if form == "unknown":
            fid = r.choice([r.randrange(0xC1, 0x100), r.randrange(0xC0), 0xC1, 0xFF, 0x00])
        if not set_ and r.random() < 0.5:
            value = 0                             # a get's value field: ignored (its aux 0)
        if form == "inject":
            st = r.choice([R.ST_OK, R.ST_OK, R.ST_BAD_FIELD, R.ST_MEDIA_ERROR, R.ST_TX_FULL, R.ST_NO_SPACE,
                           R.ST_PROGRAM_FAIL])
            res = r.choice([r.getrandbits(32), 0xFFFFFFFF, 0x80000001, 0x01000000, 0x00800000])
            core.inject(NQ_TAG, st, result=res, op=R.OP_FEATURE, data=False)
        else:
            st, res = tb.feat.run(fid, value if set_ else None)
        exp_desc = desc(R.OP_FEATURE, NQ_TAG, fid, int(set_), aux=value if set_ else 0)
        c = host.feature_cmd(fid, value, set_=set_, **kw)
    elif form == "badsub":
        c = host.feature_cmd(fid, value, set_=set_, features=r.choice(BAD_SUBS), **kw)
        st, res = R.ST_BAD_FIELD, 0
    else:                                          # rsvd: one must-be-0 field not 0
        k = r.randrange(3)
        bad = dict(lba_hi=1 << r.randrange(31)) if k == 0 else dict(count_hi=1 << r.randrange(8)) if k == 1 \
            else dict(features=H.SF_FEATURE | (1 << r.randrange(8, 16)))
        c = host.feature_cmd(fid, value, set_=set_, **bad, **kw)
        st, res = R.ST_BAD_FIELD, 0
    got = await c
    ste = status_of(st)
    name = f"{what}SET FEATURES {form} ({c.name})"
    assert got[:2] == ste, f"{name}: status {got[0]:#x} error {got[1]:#x}, expected {ste}"
    exp = d2h_ref(*ste, res if st == R.ST_OK else 0)
    assert c.d2h == exp, f"{name}: D2H {[hex(x) for x in c.d2h]}, expected {[hex(x) for x in exp]}"
    assert c.feature_result == (res if st == R.ST_OK else None), (name, c.feature_result)
    tb.check_descs([exp_desc] if exp_desc else [], f"{name}: descriptor", ordered=True)


@cocotb.test()
async def identify_page(dut):
    """IDENTIFY DEVICE: the page word by word vs §2.4 (with the firmware's random words), its §1
    descriptor; a non-OK firmware answer ends it with §2.5's status; twice in a row."""
    tb = await start(dut)
    await do_identify(tb, "IDENTIFY")
    await do_identify(tb, "IDENTIFY again")
    for st in (R.ST_BAD_FIELD, R.ST_MEDIA_ERROR):
        tb.core.inject(NQ_TAG, st, op=9, data=False)
        got = await tb.host.identify(check=False)
        assert got[:2] == status_of(st), f"IDENTIFY with firmware status {st:#x}: {got[:2]}"
        tb.check_descs([desc(9, NQ_TAG)], "failed IDENTIFY descriptor")
    await do_identify(tb, "IDENTIFY after failures")
    dut._log.info("identify_page: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
class Batch:
    """NCQ commands issued together on disjoint LBAs, checked when all are done."""

    def __init__(self, tb: TB):
        self.tb = tb
        self.used: set[int] = set()
        self.items = []
        self.exp_descs: list[tuple] = []
        self.tags = list(range(32))
        tb.rng.shuffle(self.tags)
        self.closed: set[int] = set()               # txids committed in this batch
        self.pending: dict[int, int] = {}           # txid -> pages written in this batch

    def span(self, n: int, region: int) -> int | None:
        r = self.tb.rng
        for _ in range(30):
            lba = r.randrange(max(1, region - n))
            s = set(range(lba, lba + n))
            if not self.used & s:
                self.used |= s
                return lba
        return None

    def add(self, op, n, region, txid=0, commit=False, barrier=False, ordered=False, fua=False, prio=0,
            lba=None) -> bool:
        tb = self.tb
        if not self.tags or txid in self.closed and op == "write":
            return False
        if op == "write" and txid and (commit and txid in self.pending
                                       or len(tb.txs.get(txid, {})) + self.pending.get(txid, 0) + n > 48):
            return False
        if lba is None:
            lba = self.span(n, region)
            if lba is None:
                return False
        if commit:
            pages = set(tb.txs.get(txid, {}))
            if self.used & pages - set(range(lba, lba + n)):
                return False
            self.used |= pages
        tag = self.tags.pop()
        if op == "write" and txid:
            self.pending[txid] = self.pending.get(txid, 0) + n
            if commit:
                self.closed.add(txid)
        r = tb.rng
        data = r.randbytes(n * tb.pb) if op == "write" else None
        c = tb.host.submit_fpdma(op, tag, lba, n, data=data, txid=txid, commit=commit, barrier=barrier,
                                 ordered=ordered, fua=fua, prio=prio)
        exp = data if op == "write" else tb.view(lba, n, txid)
        flags = (int(fua) | int(barrier) << 1 | int(commit) << 2) if op == "write" else 0
        d = desc(int(op == "write"), tag, lba, n - 1, txid, flags, int(ordered), PRIO_MAP[prio])
        self.exp_descs.append(d)
        self.items.append((c, op, lba, n, txid, commit, exp, d))
        return True

    async def finish(self, what: str) -> None:
        tb = self.tb
        for c, op, lba, n, txid, commit, exp, d in self.items:
            st, err, data = await c
            self.exp_descs += [d] * c.retries       # a command the host retried (ICRC|ABRT) comes again
            assert (st, err) == OK, f"{what}: {c.name} txid {txid}: status {st:#x} error {err:#x}"
            if op == "read":
                tb.check_data(data, exp, f"{what}: {c.name} txid {txid}")
        for c, op, lba, n, txid, commit, exp, d in self.items:
            if op == "write":
                pages = {lba + i: exp[i * tb.pb:(i + 1) * tb.pb] for i in range(n)}
                if txid:
                    tb.txs.setdefault(txid, {}).update(pages)
                    if commit:
                        tb.shadow.update(tb.txs.pop(txid))
                else:
                    tb.shadow.update(pages)
        tb.check_descs(self.exp_descs, what)


def rand_len(tb: TB, big: float = 0.1) -> int:
    """Sectors of a command: mostly a few pages' worth, sometimes up to 64 KiB (probability `big`)."""
    r = tb.rng
    x = r.random()
    small = max(1, 4096 // tb.pb)
    if x < big:
        return r.randint(1, tb.maxn)
    if x < 0.6:
        return r.randint(1, small)
    return r.randint(1, min(4 * small, tb.maxn))


@cocotb.test()
async def ncq_random(dut):
    """Random NCQ batches of reads and writes on up to 32 tags (some with every tag outstanding
    at once), random lengths up to 64 KiB, random TxSSD fields; transactions: tx writes, tx reads
    (read your writes), COMMIT writes (visible after), abort (FLUSH CACHE EXT tag field 1: discarded),
    recovery (tag field 2: one TX_ABORT per txid 1..NUM_TX). Every read checked byte by byte
    against the shadow, every descriptor against the FIS."""
    tb = await start(dut)
    r, host, core = tb.rng, tb.host, tb.core
    region = 96 if tb.pb == 4096 else 600
    nb = 16 if LONG else _env_int("ATS_SATA_BATCHES", 3)
    max_out = 0
    for b in range(nb):
        bt = Batch(tb)
        full = b % 2 == 1
        if full:
            core.hold()
        ncmd = 32 if full else r.randint(8, 32)
        open_tx = sorted(tb.txs)
        while len(bt.items) < ncmd and bt.tags:
            x = r.random()
            n = rand_len(tb) if not full else r.randint(1, min(2, tb.maxn))
            fields = dict(ordered=r.random() < 0.15, prio=r.choice([0, 0, 1, 2]))
            if x < 0.4:
                bt.add("read", n, region, txid=r.choice(open_tx) if open_tx and r.random() < 0.3 else 0, **fields)
            elif x < 0.8:
                bt.add("write", n, region, barrier=r.random() < 0.15, fua=r.random() < 0.2, **fields)
            elif x < 0.92:
                bt.add("write", n, region, txid=r.randint(1, tb.num_tx), fua=r.random() < 0.2, **fields)
            elif open_tx:
                bt.add("write", 1, region, txid=r.choice(open_tx), commit=True, **fields)
        if full:
            for _ in range(400_000):
                max_out = max(max_out, len(host.ncq))
                if len(host.ncq) == len(bt.items):
                    break
                await RisingEdge(dut.clk)
            assert len(host.ncq) == len(bt.items), f"batch {b}: {len(host.ncq)} of {len(bt.items)} accepted"
            await ClockCycles(dut.clk, r.randint(1, 2000))
            core.release()
        await bt.finish(f"batch {b}")
        await host.idle()
        await do_feature(tb, what=f"after batch {b}: ")
        # a transaction abort or a read of committed data between batches
        if tb.txs and r.random() < 0.4:
            txid = r.choice(sorted(tb.txs))
            assert await host.tx_abort(txid) == OK
            tb.check_descs([desc(5, NQ_TAG, txid=txid)], "TX_ABORT")
            del tb.txs[txid]
    assert max_out == 32, f"never 32 tags outstanding (max {max_out})"
    # abort of a tx with no writes: the core answers TX_EMPTY -> ABRT
    free = next(t for t in range(1, tb.num_tx + 1) if t not in tb.txs)
    assert await host.tx_abort(free) == ABRT, "abort of an empty transaction"
    tb.check_descs([desc(5, NQ_TAG, txid=free)], "TX_ABORT (empty)")
    # recovery: every open tx discarded, committed data kept
    bt = Batch(tb)
    for _ in range(3):
        bt.add("write", 1, region, txid=r.randint(1, tb.num_tx))
    await bt.finish("tx writes before recovery")
    assert await host.recover() == OK, "recovery"
    got = tb.new_descs()
    assert sorted(got) == [desc(5, NQ_TAG, txid=t) for t in range(1, tb.num_tx + 1)], \
        f"recovery descriptors: {[fmt_desc(t) for t in got][:8]}..."
    tb.txs.clear()
    bt = Batch(tb)
    for lba in sorted(tb.shadow)[:20]:
        bt.add("read", 1, region, lba=lba, txid=r.randint(0, tb.num_tx))
    await bt.finish("reads after recovery")
    s = host.stats
    assert s["ooo"] > 0 and s["sdb_multi"] > 0 and s["setup_nonzero"] > 0, f"coverage: {s}"
    dut._log.info("ncq_random: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
@cocotb.test()
async def nonqueued(dut):
    """READ / WRITE DMA EXT (1 sector .. 64 KiB), FLUSH CACHE EXT, DSM TRIM with zero-length entries
    skipped, mixed with NCQ batches and SET FEATURES 0x56 (random forms); data byte by byte,
    descriptors exact."""
    tb = await start(dut)
    r, host = tb.rng, tb.host
    region = 32 if tb.pb == 4096 else 128
    for i in range(10 if not LONG else 30):
        n = tb.maxn if r.random() < 0.15 else r.choice([1, rand_len(tb, 0)])
        lba = r.randrange(region)
        kind = r.random()
        if kind < 0.35:
            data = r.randbytes(n * tb.pb)
            assert await host.write_dma_ext(lba, data) == OK
            tb.check_descs([desc(1, NQ_TAG, lba, n - 1)], f"WRITE DMA EXT {lba}+{n}")
            tb.shadow.update({lba + k: data[k * tb.pb:(k + 1) * tb.pb] for k in range(n)})
        elif kind < 0.7:
            st, err, data = await host.read_dma_ext(lba, n)
            assert (st, err) == OK, f"READ DMA EXT {lba}+{n}: {st:#x}/{err:#x}"
            tb.check_data(data, tb.view(lba, n), f"READ DMA EXT {lba}+{n}")
            tb.check_descs([desc(0, NQ_TAG, lba + k, 0, dptr=(NQ_TAG << WIN) + k * tb.pb) for k in range(n)],
                           f"READ DMA EXT {lba}+{n}", ordered=True)
        elif kind < 0.8:
            ext = r.random() < 0.5
            assert await host.flush(ext) == OK
            tb.check_descs([desc(6, NQ_TAG)], "FLUSH CACHE EXT" if ext else "FLUSH CACHE")
        elif kind < 0.9:
            ranges = []
            for _ in range(r.randint(1, 64)):
                ranges.append((r.randrange(region), 0 if r.random() < 0.3 else r.randint(1, 8)))
            assert await host.trim(ranges) == OK, "DSM TRIM"
            tb.check_descs([desc(8, NQ_TAG, lba_, n_ - 1) for lba_, n_ in ranges if n_], "DSM TRIM", ordered=True)
            for lba_, n_ in ranges:
                for k in range(n_):
                    tb.shadow.pop(lba_ + k, None)
        else:
            bt = Batch(tb)
            for _ in range(r.randint(1, 8)):
                bt.add(r.choice(["read", "write"]), rand_len(tb, 0), region)
            await bt.finish("NCQ between non-queued")
            await host.idle()
        if r.random() < 0.3:
            await do_feature(tb, what=f"non-queued step {i}: ")
    # everything read back through READ DMA EXT
    for lba in range(0, region, tb.maxn):
        st, err, data = await host.read_dma_ext(lba, tb.maxn)
        assert (st, err) == OK
        tb.check_data(data, tb.view(lba, tb.maxn), f"final READ DMA EXT {lba}")
    tb.new_descs()
    dut._log.info("nonqueued: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
async def expect_refused(tb: TB, cmd, what: str) -> None:
    st, err, _ = await cmd
    assert (st, err) == ABRT, f"{what}: status {st:#x} error {err:#x}, expected ABRT"
    d = cmd.d2h
    assert d is not None and (d[0] >> 14) & 1, f"{what}: D2H with I = 1 expected: {d}"
    tb.check_descs([], f"{what}: no descriptor")


@cocotb.test()
async def errors(dut):
    """§2.5's refusals (each: D2H 0x41 / ABRT, I = 1, no descriptor, other commands go on), device
    statuses mapped to Status / Error (IDNF, UNC, DF, ABRT) for NCQ (error SDB for one tag, the
    others finish) and non-queued commands, and the NCQ error log (log 0x10) contents."""
    tb = await start(dut)
    r, host, core = tb.rng, tb.host, tb.core
    # unknown commands
    for code in (0x00, 0xC8, 0xCA, 0xB0, 0x47, 0x65, 0xFF):
        await expect_refused(tb, host._nq(f"command {code:#x}", H.h2d(code, count=1, device=0x40)),
                             f"unknown command {code:#x}")
    # reserved TxSSD bits, PRIO 3, count beyond 64 KiB or 0, FLUSH tag field 3..31, DSM without TRIM / count != 1
    for kw in (dict(rsvd=1), dict(rsvd=4), dict(prio=3)):
        await expect_refused(tb, host.submit_fpdma("read", 3, 0, 1, **kw), f"FPDMA {kw}")
    for n in (tb.maxn + 1, 0):
        await expect_refused(tb, host.submit_fpdma("write", 4, 0, n, force=True), f"WRITE FPDMA count {n}")
        await expect_refused(tb, host.read_dma_ext_cmd(0, n), f"READ DMA EXT count {n}")
    await expect_refused(tb, host.flush_cmd(r.randint(3, 31)), "FLUSH CACHE EXT unknown tag field")
    await expect_refused(tb, host.trim_cmd([(1, 1)], features=0), "DSM without TRIM")
    await expect_refused(tb, host._nq("DSM count 2", H.h2d(H.ATA_DSM, features=1, count=2, device=0x40)),
                         "DSM count 2")
    await expect_refused(tb, host._nq("READ LOG 0x11", H.h2d(H.ATA_READ_LOG_EXT, lba=0x11, count=1, device=0x40)),
                         "READ LOG EXT log 0x11")
    await expect_refused(tb, host._nq("READ LOG 0x10 page 1", H.h2d(H.ATA_READ_LOG_EXT, lba=0x110, count=1,
                                                                   device=0x40)), "READ LOG EXT log 0x10 page 1")
    await expect_refused(tb, host._nq("READ LOG 0x10 count 2", H.h2d(H.ATA_READ_LOG_EXT, lba=0x10, count=2,
                                                                    device=0x40)), "READ LOG EXT count 2")
    if tb.num_tx < 31:
        await expect_refused(tb, host.submit_fpdma("write", 5, 0, 1, txid=tb.num_tx + 1,
                                                   data=bytes(tb.pb)), f"txid {tb.num_tx + 1}")
    # wrong-length H2D (§2.5: ERR ABRT), C = 0 (ignored)
    for ln in (4, 6):
        fis = (H.fpdma_fis(False, 1, 0, 1) + [0, 0])[:ln]
        res, d2h = await host.send_fis(fis)
        assert res == "R_OK" and d2h is not None and ((d2h[0] >> 16) & 0xFF, d2h[0] >> 24) == ABRT, \
            f"H2D of {ln} dwords: link {res}, D2H {d2h and hex(d2h[0])}"
        tb.check_descs([], f"H2D of {ln} dwords")
    fis = H.fpdma_fis(False, 1, 0, 1)
    fis[0] &= ~(1 << 15)
    res, _ = await host.send_fis(fis, answer=False)
    assert res == "R_OK"
    await tb.expect_quiet(3000, "H2D with C = 0")
    # tag in use: tag 7 held in the core, a second tag 7 refused, the first finishes right
    core.hold()
    data = r.randbytes(tb.pb)
    c1 = host.submit_fpdma("write", 7, 10, 1, data=data)
    for _ in range(100_000):
        if 7 in host.ncq and core.in_core:
            break
        await RisingEdge(dut.clk)
    tb.check_descs([desc(1, 7, 10, 0)], "write of the tag-in-use test")
    await expect_refused(tb, host.submit_fpdma("read", 7, 10, 1, force=True), "tag in use")
    await expect_refused(tb, host.flush_cmd(force=True), "FLUSH while an NCQ tag is outstanding")
    core.release()
    assert await c1 == (0x40, 0, None)
    tb.shadow[10] = data
    # an NCQ command while a non-queued one runs
    core.hold()
    f = host.flush_cmd()
    for _ in range(100_000):
        if core.in_core:
            break
        await RisingEdge(dut.clk)
    tb.check_descs([desc(6, NQ_TAG)], "FLUSH of the mix test")
    await expect_refused(tb, host.submit_fpdma("read", 2, 10, 1, force=True), "NCQ during FLUSH")
    core.release()
    assert (await f)[:2] == OK
    # device statuses on NCQ: one command fails, the others finish; the error log
    for dev_st, op in ((R.ST_MEDIA_ERROR, "read"), (R.ST_PROGRAM_FAIL, "write"), (R.ST_TX_FULL, "write"),
                       (R.ST_BAD_LBA, "read")):
        bt = Batch(tb)
        for _ in range(r.randint(2, 10)):
            bt.add(r.choice(["read", "write"]), rand_len(tb, 0), 200)
        tag = bt.tags.pop()
        n = r.randint(1, 4)
        lba = tb.num_lbas - n + 1 if dev_st == R.ST_BAD_LBA else r.randrange(1000, 2000)
        txid = r.randint(1, tb.num_tx) if dev_st == R.ST_TX_FULL else 0
        if dev_st != R.ST_BAD_LBA:
            core.inject(tag, dev_st, op=int(op == "write"), data=False)
        fis = H.fpdma_fis(op == "write", tag, lba, n, txid=txid)
        bad = host.submit_fpdma(op, tag, lba, n, data=r.randbytes(n * tb.pb) if op == "write" else None,
                                txid=txid)
        bt.exp_descs.append(desc(int(op == "write"), tag, lba, n - 1, txid))
        st, err, _ = await bad
        exp = status_of(dev_st)
        assert (st, err) == exp, f"NCQ {op} with device status {dev_st:#x}: {st:#x}/{err:#x}, expected {exp}"
        await bt.finish(f"batch around a failed NCQ command ({dev_st:#x})")
        await host.idle()
        log = await host.read_log_ncq()
        ref = ncq_log_ref(tag, *exp, lba, (fis[1] >> 24) & 0xFF, fis[3] & 0xFFFF, dev_st)
        diff = [(i, log[i], ref[i]) for i in range(512) if log[i] != ref[i]]
        assert not diff, f"NCQ error log after {dev_st:#x} (byte, got, expected): {diff[:12]}"
        log = await host.read_log_ncq()
        assert log == bytes(512), "NCQ error log not cleared by reading it"
        tb.new_descs()
        if txid:
            await host.tx_abort(txid)
            tb.new_descs()
    # device statuses on non-queued commands
    n = 2
    st, err, _ = await host.read_dma_ext(tb.num_lbas - 1, n)
    assert (st, err) == (0x41, 0x10), f"READ DMA EXT beyond the capacity: {st:#x}/{err:#x}"
    tb.new_descs()
    core.inject(NQ_TAG, R.ST_PROGRAM_FAIL, op=1, data=False)
    assert await host.write_dma_ext(20, r.randbytes(tb.pb)) == (0x61, 0x04), "WRITE DMA EXT PROGRAM_FAIL"
    tb.new_descs()
    core.inject(NQ_TAG, R.ST_MEDIA_ERROR, op=0, data=False)
    st, err, _ = await host.read_dma_ext(20, 1)
    assert (st, err) == (0x41, 0x40), f"READ DMA EXT MEDIA_ERROR: {st:#x}/{err:#x}"
    tb.new_descs()
    core.inject(NQ_TAG, R.ST_BAD_FIELD, op=6, data=False)
    assert await host.flush() == ABRT, "FLUSH with a failing core"
    tb.new_descs()
    # still working
    bt = Batch(tb)
    for _ in range(8):
        bt.add(r.choice(["read", "write"]), rand_len(tb, 0), 200)
    await bt.finish("after the errors")
    dut._log.info("errors: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
@cocotb.test()
async def link_faults(dut):
    """Bad CRC on FISes the host sends (Register H2D: the host sends it again; an NCQ write's Data
    FIS: the device sends the DMA Setup again, after 5 failures ICRC|ABRT and the host retries; a
    non-queued Data FIS: ICRC|ABRT at once, host retry) and R_ERR from the host on FISes the device
    sends (D2H, SDB, DMA Setup, NCQ read Data: sent again; PIO / READ DMA EXT data: ICRC|ABRT and
    the host retries). Data byte by byte after every case."""
    tb = await start(dut)
    r, host = tb.rng, tb.host
    region = 64 if tb.pb == 4096 else 400

    async def ncq_mix(what, k=6):
        bt = Batch(tb)
        for i in range(k):
            bt.add("read" if i == 0 else r.choice(["read", "write"]), rand_len(tb, 0), region)
        await bt.finish(what)
        await host.idle()

    async def retried(what, exp_retries):
        await host.idle()
        assert host.stats["retries"] == exp_retries, f"{what}: {host.stats['retries']} retries, expected {exp_retries}"

    # host -> device
    host.corrupt(H.FIS_H2D, 3)
    await ncq_mix("H2D with bad CRC")
    assert host.stats["h2d_resent"] >= 3 and not host.corrupts, host.stats
    host.escape(H.FIS_H2D, 2)
    await ncq_mix("H2D cut short by SYNC")
    assert host.stats.get("escaped") == 2 and not host.escapes, host.stats
    # FISes the device does not take: another type, a Data FIS with no transfer open: dropped,
    # nothing acted upon (§2.5). The link answer is not checked: §2.1 says R_ERR for a type the
    # device does not take, §2.5 "dropped (counted)"; the RTL answers R_OK (reported to the lead).
    res1, _ = await host.send_fis([0x58, 0, 0], answer=False)
    res2, _ = await host.send_fis([H.FIS_DATA] + [r.getrandbits(32) for _ in range(16)], answer=False)
    dut._log.info("link answers: FIS type 0x58 %s, stray Data FIS %s", res1, res2)
    await tb.expect_quiet(2000, "stray FISes")
    await ncq_mix("after stray FISes")
    # NCQ write data, 1..4 failures: DMA Setup again
    setups = host.stats["setups"]
    bt = Batch(tb)
    bt.add("write", 1, region)
    host.corrupt(H.FIS_DATA, 4)
    await bt.finish("NCQ write, Data FIS with bad CRC 4 times")
    assert host.stats["retries"] == 0 and host.stats["setups"] - setups == 5, host.stats
    # 5 failures: ICRC|ABRT, the host retries the command (and the error log says so)
    bt = Batch(tb)
    bt.add("write", 1, region)
    host.corrupt(H.FIS_DATA, 5)
    await bt.finish("NCQ write, Data FIS with bad CRC 5 times")
    await retried("NCQ write 5 bad CRCs", 1)
    log = await host.read_log_ncq()
    assert (log[2], log[3]) == (0x41, 0x84), f"error log after ICRC: {log[:16].hex()}"
    tb.new_descs()
    # non-queued write: ICRC|ABRT at once, host retry
    data = r.randbytes(2 * tb.pb)
    host.corrupt(H.FIS_DATA, 1)
    assert await host.write_dma_ext(5, data) == OK
    await retried("WRITE DMA EXT bad CRC", 2)
    tb.shadow.update({5: data[:tb.pb], 6: data[tb.pb:]})
    tb.new_descs()
    host.corrupt(H.FIS_DATA, 1)
    assert await host.trim([(5, 1)]) == OK
    await retried("DSM bad CRC", 3)
    tb.shadow.pop(5, None)
    got = tb.new_descs()
    assert got[-1] == desc(8, NQ_TAG, 5, 0) and all(g[0] == 8 for g in got), f"DSM retry descriptors {got}"
    # device -> host: R_ERR, the device sends again
    for t in (H.FIS_D2H, H.FIS_SDB, H.FIS_SETUP, H.FIS_DATA):
        host.rerr(t, r.randint(1, 4))
        await ncq_mix(f"R_ERR on FIS {t:#x}", 8)
        assert not host.rerrs, f"R_ERR on {t:#x} not used: {host.rerrs}"
        assert host.stats["retries"] == 3, host.stats
    host.rerr(H.FIS_ACT, 2)
    data = r.randbytes(tb.maxn * tb.pb)
    assert await host.write_dma_ext(100, data) == OK
    tb.shadow.update({100 + k: data[k * tb.pb:(k + 1) * tb.pb] for k in range(tb.maxn)})
    assert not host.rerrs
    tb.check_descs([desc(1, NQ_TAG, 100, tb.maxn - 1)], "WRITE DMA EXT with DMA Activate R_ERR")
    host.rerr(H.FIS_PIO, 1)
    await do_identify(tb, "IDENTIFY with PIO Setup R_ERR")
    # non-queued data R_ERR: ICRC|ABRT, host retry
    host.rerr(H.FIS_DATA, 1)
    page = await host.identify()
    assert page == bytes(b for w in identify_ref(tb.pb, tb.core.fw_words) for b in struct.pack("<H", w))
    await retried("IDENTIFY data R_ERR", 4)
    tb.new_descs()
    host.rerr(H.FIS_DATA, 1)
    n = min(4, tb.maxn)
    st, err, data = await host.read_dma_ext(100, n)
    assert (st, err) == OK
    tb.check_data(data, tb.view(100, n), "READ DMA EXT after R_ERR")
    await retried("READ DMA EXT data R_ERR", 5)
    tb.new_descs()
    await ncq_mix("final", 10)
    dut._log.info("link_faults: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
@cocotb.test()
async def write_prefetch(dut):
    """Regression (issue 37 item 3, WDE's write prefetch, rtl/sata/README.md): the next NCQ write's
    DMA Setup and Data FIS come while the previous page still goes to the core. A port monitor keeps
    every m_hrd page's first and last beat; the host model's FIS log gives the clock each write DMA
    Setup (A = 1) arrived. (1) Core without pauses, batches of 32 one-page writes: DMA Setups arrive
    inside a page's delivery (the old WDE asked for a write page only after the previous one was
    delivered: none did). (2) Random pauses on every core port, writes of 1..4 pages with Data FISes
    answered by bad CRCs (1..4 times: the same DMA Setup again; 5 times: ICRC|ABRT and the host's
    retry) and R_ERR on DMA Setups while pages are delivered. Every page read back byte by byte
    against the shadow; cnt_proto stays 0."""
    tb = await start(dut)
    r, host, core = tb.rng, tb.host, tb.core
    region = 4096 if tb.pb == 4096 else 30_000
    pages: list[list[int]] = []                  # [first beat, last beat] (host clocks)
    cur: list[int] = []

    def mon() -> None:
        if int(dut.m_hrd_valid.value) and int(dut.m_hrd_ready.value):
            if not cur:
                cur.append(host.cycle)
            if int(dut.m_hrd_last.value):
                pages.append([cur[0], host.cycle])
                cur.clear()
    every_edge(dut.clk, mon)

    setups: list[int] = []                       # clocks the host took a write DMA Setup
    rx_setup = host._rx_setup

    def on_setup(fis) -> None:
        if (fis[0] >> 15) & 1:
            setups.append(host.cycle)
        rx_setup(fis)
    host._rx_setup = on_setup

    def wr_setups(since: int) -> list[int]:
        return setups[since:]

    def overlaps(setups: list[int], pg: list[list[int]]) -> int:
        return sum(1 for s in setups if any(a + 2 < s < b - 2 for a, b in pg))

    def medium_check(lbas, what):
        """what the core received (the core model's medium) against the shadow, page by page"""
        bad = [lba for lba in sorted(lbas) if core.stub.pages.get(lba) != tb.shadow.get(lba)]
        assert not bad, f"{what}: {len(bad)} pages in the core differ from the data written, e.g. LBA {bad[:4]}"

    async def readback(lbas, what, k=16):
        bt = Batch(tb)
        for lba in r.sample(sorted(lbas), min(k, len(lbas))):
            bt.add("read", 1, region, lba=lba)
        await bt.finish(what)

    # (1) core without pauses
    core.set_pauses(False)
    written: set[int] = set()
    n_log, n_pg = len(setups), len(pages)
    for b in range(1 if tb.pb == 4096 else 2):
        bt = Batch(tb)
        for _ in range(32):
            bt.add("write", 1, region)
        t0 = host.cycle
        await bt.finish(f"prefetch batch {b}")
        written |= {it[2] for it in bt.items}
        dut._log.info("write_prefetch: batch %d, 32 one-page writes in %d clocks", b, host.cycle - t0)
    await host.idle()
    ov = overlaps(wr_setups(n_log), pages[n_pg:])
    nw = len(pages) - n_pg
    dut._log.info("write_prefetch: %d of %d write DMA Setups arrived while a page went to the core", ov, nw)
    assert ov >= nw // 4, (f"write prefetch: only {ov} of {nw} write DMA Setups arrived while an earlier "
                           f"page was still being delivered to the core")
    medium_check(written, "prefetch (1)")
    await readback(written, "prefetch read-back (1)")
    # (2) pauses, bad CRCs and R_ERR while pages are delivered
    core.set_pauses(True)
    n_log, n_pg = len(setups), len(pages)
    faults = [("crc", 1), ("crc", 3), ("crc", 5), ("rerr", 2), ("crc", 4), ("rerr", 1)]
    retries0 = host.stats["retries"]
    for k, (kind, n) in enumerate(faults):
        bt = Batch(tb)
        for _ in range(r.randint(6, 10)):
            bt.add("write", r.randint(1, min(3, tb.maxn)), region)

        async def inject(kind=kind, n=n, pg0=len(pages)):
            # the fault once a page of this batch went to the core and another one is going
            while not (cur and len(pages) > pg0):
                await RisingEdge(dut.clk)
            if kind == "crc":
                host.corrupt(H.FIS_DATA, n)
            else:
                host.rerr(H.FIS_SETUP, n)
        cocotb.start_soon(inject())
        await bt.finish(f"prefetch faults {k} ({kind} x{n})")
        await host.idle()
        assert not host.corrupts.get(H.FIS_DATA) and not host.rerrs.get(H.FIS_SETUP), \
            f"prefetch faults {k}: fault not used ({host.corrupts}, {host.rerrs})"
        for c, op, lba, n_, *_ in bt.items:
            written |= set(range(lba, lba + n_))
    assert host.stats["retries"] - retries0 == 1, f"one ICRC retry expected: {host.stats}"
    ov2 = overlaps(wr_setups(n_log), pages[n_pg:])
    medium_check(written, "prefetch (2)")
    await readback(written, "prefetch read-back (2)")
    assert int(dut.cnt_proto.value) == 0, f"cnt_proto {int(dut.cnt_proto.value)}"
    dut._log.info("write_prefetch: with pauses and faults %d overlaps; %s", ov2, tb.cov())


# ------------------------------------------------------------------------------------------------
@cocotb.test()
async def features(dut):
    """SET FEATURES 0x56, the device's settings (docs/host-interface.md §2.2a; FEATURE, architecture.md
    §1.2), with random pauses on every core port: the build's SEAL_TIME read, set to 0, 65,535 and a
    random value and read back (the host API `set_seal_time` / `get_seal_time`); every form of
    `do_feature` several times between small NCQ batches (get, set, an unknown FID: BAD_FIELD ->
    ABRT with its descriptor; the firmware's answer replaced: OK with results using all 32 bits,
    non-OK statuses with a non-zero result that must not reach the host; every other subcommand and
    each must-be-0 field: ABRT, no descriptor); refused while an NCQ tag is outstanding, and an NCQ
    command refused while it runs; a build without the feature (every FID ABRT)."""
    tb = await start(dut)
    r, host, core = tb.rng, tb.host, tb.core
    region = 64 if tb.pb == 4096 else 400

    def sdesc(value=None):
        return desc(R.OP_FEATURE, NQ_TAG, FID_SEAL, int(value is not None), aux=value or 0)

    assert await host.get_seal_time() == tb.seal0, "the build's seal time"
    tb.check_descs([sdesc()], "get_seal_time")
    for v in (0, 0xFFFF, r.randrange(1, 0xFFFF)):
        assert await host.set_seal_time(v) == v, f"set_seal_time({v})"
        tb.feat.run(FID_SEAL, v)
        assert await host.get_seal_time() == v, f"get_seal_time after set {v}"
        tb.check_descs([sdesc(v), sdesc()], f"set_seal_time({v}), get_seal_time")
    assert core.fw_features.values[FID_SEAL] == v
    forms = list(FEAT_FORMS) * 4
    r.shuffle(forms)
    for i, f in enumerate(forms):
        await do_feature(tb, f, f"form {i}: ")
        if i % 6 == 5:
            bt = Batch(tb)
            for _ in range(4):
                bt.add(r.choice(["read", "write"]), rand_len(tb, 0), region)
            await bt.finish(f"NCQ batch after form {i}")
            await host.idle()
    for sub in BAD_SUBS:
        c = host.feature_cmd(FID_SEAL, features=sub)
        assert await c == (*ABRT, None), f"subcommand {sub:#x}"
        assert c.d2h == d2h_ref(*ABRT), f"subcommand {sub:#x}: D2H {[hex(x) for x in c.d2h]}"
        tb.check_descs([], f"subcommand {sub:#x}")
    # each must-be-0 field (LBA 47:17: bits 17, 23, 24, 31, 32, 47; Count 15:8; Features 15:8)
    for bad in [dict(lba_hi=1 << k) for k in (0, 6, 7, 14, 15, 30)] + [dict(count_hi=0x01), dict(count_hi=0x80)]:
        c = host.feature_cmd(FID_SEAL, 5, **bad)
        assert await c == (*ABRT, None) and c.d2h == d2h_ref(*ABRT), f"must-be-0 field {bad}: {c.result}"
        tb.check_descs([], f"must-be-0 field {bad}")
    for res in (0xFFFFFFFF, 0x12345678):
        core.inject(NQ_TAG, R.ST_OK, result=res, op=R.OP_FEATURE, data=False)
        assert await host.feature(FID_SEAL) == (*OK, res), f"result {res:#x}"
        tb.check_descs([sdesc()], f"result {res:#x}")
    # busy: a FEATURE while an NCQ tag is outstanding; an NCQ command while a FEATURE runs
    core.hold()
    c1 = host.submit_fpdma("read", 9, 3, 1)
    for _ in range(100_000):
        if 9 in host.ncq and core.in_core:
            break
        await RisingEdge(dut.clk)
    tb.check_descs([desc(0, 9, 3, 0)], "read of the busy test")
    await expect_refused(tb, host.feature_cmd(FID_SEAL, 7, force=True), "SET FEATURES while an NCQ tag is outstanding")
    core.release()
    st, err, data = await c1
    assert (st, err) == OK
    tb.check_data(data, tb.view(3, 1), "read of the busy test")
    core.hold()
    cf = host.feature_cmd(FID_SEAL, 0x1234)
    for _ in range(100_000):
        if core.in_core:
            break
        await RisingEdge(dut.clk)
    tb.check_descs([sdesc(0x1234)], "SET FEATURES of the busy test")
    await expect_refused(tb, host.submit_fpdma("read", 2, 10, 1, force=True), "NCQ while SET FEATURES runs")
    core.release()
    assert await cf == (*OK, None) and cf.feature_result == 0x1234, (cf.result, cf.feature_result)
    assert cf.d2h == d2h_ref(*OK, 0x1234), [hex(x) for x in cf.d2h]
    tb.feat.run(FID_SEAL, 0x1234)
    # a build without the feature
    core.fw_features = R.FwFeatures(seal=False)
    tb.feat = R.FwFeatures(0, seal=False)
    for f in ("get", "set", "unknown"):
        await do_feature(tb, f, "no SEAL_TIME: ")
    dut._log.info("features: %s", tb.cov())


# ------------------------------------------------------------------------------------------------
class Gate:
    """A sink's pause pattern the test opens and closes (True = ready low)."""

    def __init__(self):
        self.closed = False

    def __iter__(self):
        return self

    def __next__(self) -> bool:
        return self.closed


@cocotb.test()
async def sdb_take_same_clock(dut):
    """Regression (rtl/sata/README.md, DEC's tag table): an NCQ command taken by DEC in the very
    clock the Set Device Bits FIS of other tags finishes must stay outstanding. Tag A is held
    completed in the core, the core's descriptor ready is held low with B in the descriptor
    register, so C's Register H2D waits in DEC; A's completion is released and the ready opened a
    chosen number of clocks after the sender starts waiting for the SDB's link result (a sweep
    around the measured latency), so that C is taken in the clock the SDB is done. Every command
    must complete (bounded wait, a failure names the lost tag); statuses, read data and
    descriptors are checked against the reference (Batch); the coincidence must have happened."""
    tb = await start(dut, pauses=False)
    r, host, core = tb.rng, tb.host, tb.core
    core.delay, core.slow_p = (1, 8), 0.0           # A's completion is ready when released
    gate = Gate()
    core.cmd.set_pause(gate)
    dec, tx = dut.u_cmd.u_dec, dut.u_cmd.u_tx
    T_RES, X_SDB = 2, 2                             # ats_sata_cmd_tx's state / FIS kind
    region = 64 if tb.pb == 4096 else 400
    hits: list[tuple[int, int, int]] = []           # (cycle, tag taken, SDB mask)

    def monitor() -> None:
        if int(dec.ncq_acc.value) and int(dec.sdb_done.value):
            hits.append((host.cycle, int(dec.ncq_tag.value), int(dec.sdb_mask.value)))
    every_edge(dut.clk, monitor)

    async def until(cond, what: str, limit: int = 20_000) -> None:
        for _ in range(limit):
            if cond():
                return
            await RisingEdge(dut.clk)
        raise AssertionError(f"sdb_take_same_clock: {what} not reached in {limit} cycles")

    async def trial(delay: int | None, k: int) -> int:
        """One A / B / C round; delay None: open the ready after the SDB was done (measures the
        latency from the sender's T_RES for the SDB to sdb_done)."""
        bt = Batch(tb)
        core.hold()
        bt.add(r.choice(["read", "write"]), 1, region)
        ca = bt.items[-1][0]
        await until(lambda: ca.tag in host.ncq and ca.moved() and ca.tag in core.in_core
                    and not int(dec.m_cmd_valid.value) and host.link.idle, "A in the core, its data moved")
        await ClockCycles(dut.clk, 40)              # A's completion waits for the release
        gate.closed = True
        bt.add(r.choice(["read", "write"]), 1, region)
        bt.add(r.choice(["read", "write"]), 1, region)
        cb, cc = bt.items[-2][0], bt.items[-1][0]
        await until(lambda: cb.tag in host.ncq and host.issuing is cc and int(dec.d2v_q.value)
                    and host.link.idle, "B in the descriptor register, C's H2D waiting in DEC")
        n_hits = len(hits)
        core.release()
        await until(lambda: int(tx.tst_q.value) == T_RES and int(tx.tk_q.value) == X_SDB, "the SDB of A")
        t0 = host.cycle
        lat = 0
        if delay is None:
            await until(lambda: int(dec.sdb_done.value), "the SDB of A done")
            lat = host.cycle - t0
            await ClockCycles(dut.clk, 3)
        else:
            await ClockCycles(dut.clk, delay)
        gate.closed = False
        for _ in range(20_000):
            if all(c.done for c, *_ in bt.items):
                break
            await RisingEdge(dut.clk)
        lost = [c.tag for c, *_ in bt.items if not c.done]
        if lost:
            raise AssertionError(
                f"sdb_take_same_clock trial {k} (ready opened {delay} clocks after T_RES): tag(s) {lost} "
                f"never completed (A {ca.tag}, B {cb.tag}, C {cc.tag}); DEC took a tag in the clock an SDB "
                f"was done: {hits[n_hits:]} (cycle, tag, SDB mask); tbusy {int(dec.tbusy.value):#010x}, "
                f"core completions {core.completions[-3:]}, cnt_proto {int(dut.cnt_proto.value)}")
        await bt.finish(f"sdb_take_same_clock trial {k}")
        await host.idle()
        return lat

    lat = await trial(None, 0)
    k = 1
    for d in range(max(0, lat - 3), lat + 2):      # hits at lat - 2 (ready, then cv_q, then DEC's take)
        await trial(d, k)
        k += 1
    assert hits, f"sdb_take_same_clock: no NCQ command was taken in the clock of an SDB (latency {lat})"
    assert int(dut.cnt_proto.value) == 0, f"cnt_proto {int(dut.cnt_proto.value)}: a completion was dropped"
    dut._log.info("sdb_take_same_clock: latency %d, coincidences %s; %s", lat, hits, tb.cov())


# ------------------------------------------------------------------------------------------------
CONFIGS = {
    "p4096": {"PAGE_BYTES": 4096},
    # NUM_TX < 31: a txid above it is encodable; WR_AHEAD 3: the write prefetch's queue wraps at 3
    # and holds up to four 512-byte pages
    "p512": {"PAGE_BYTES": 512, "NUM_TX": 20, "WR_AHEAD": 3},
}


# the signals below the top that sdb_take_same_clock reads (u_cmd.u_dec, u_cmd.u_tx); only these and
# the top's own are visible to cocotb (runner.run `public`)
PUBLIC = {"ats_sata_cmd_dec": ["ncq_acc", "sdb_done", "ncq_tag", "sdb_mask", "m_cmd_valid", "d2v_q", "tbusy"],
          "ats_sata_cmd_tx": ["tst_q", "tk_q"]}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_sata(cfg):
    # stream rules on every m_ port of the front end's modules (ats_sata_bind.sv, rtl/common/ats_stream_check.sv)
    srcs = block_sources("ats_sata", "ats_stream_check") + [HERE / "ats_sata_bind.sv"]
    run(toplevel="ats_sata", sources=srcs, test_module="test_ats_sata", test_dir=HERE, build_key=cfg,
        test_filter=os.environ.get("ATS_SATA_TESTS") or None,
        parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES") and str(ROOT / f"build/waves/ats_sata_{cfg}.fst"),
        extra_env={"ATS_LONG": "1" if LONG else "0"},
        public=PUBLIC)
