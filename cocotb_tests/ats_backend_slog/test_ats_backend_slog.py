"""cocotb tests of ats_backend_slog (the S-Log index and record assembler, rtl/backend/README_slog.md)
against `SlogRef` (slog_unit_ref.py: plain Python from the README and docs/persistence.md §10, not from
the RTL).

A random workload of index commands (RESERVE, UNRESERVE, LOOKUP, RELEASE, APPLY) and records (full
pages and fragments of one transaction, their words) with random idle on every source and random
backpressure on every sink; index commands also run while a record's pages stream out. Every
answer beat, every record status and every log page byte is compared with the reference; LOOKUP
of every LPN the reference knows ends the run. Bad input: txid 0 / above NUM_TX, a full set, an
LPN at SLOG_FRAGS, another tx's reservation, a fragment without reservation, too many fragments
or full pages, bad off/len, a txid change inside a record, APPLY without a held record.

Environment: ATS_SEED, ATS_LONG=1 (4x the steps), ATS_SLOG_SRC (another copy of ats_backend_slog.sv,
for mutation checks). Testpoints: rtl/backend/testplan_slog.md.
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
from cocotb.triggers import RisingEdge, Timer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))   # atstb, under pytest too
sys.path.insert(0, str(Path(__file__).resolve().parent))
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen
from slog_unit_ref import BAD_FIELD, BAD_TXID, OK, TX_EMPTY, TX_FULL, SlogRef

LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
HERE = Path(__file__).resolve().parent
STEPS = 1500 * (4 if LONG else 1)

IX_F = ["op", "txid", "lpn", "n"]
IXA_F = ["sts", "cnt", "lpgn", "pofs", "off", "len", "last"]
RD_F = ["txid", "full", "lpn", "ppn", "off", "len", "last"]
RS_F = ["sts", "txid", "lpgn", "reclen"]
LP_F = ["data", "last", "lpgn", "end"]


class TB:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        g = lambda n: int(getattr(dut, n).value)
        self.pb, self.num_tx = g("PAGE_BYTES"), g("NUM_TX")
        self.lpns, self.ways, self.frags = g("SLOG_LPNS"), g("SLOG_WAYS"), g("SLOG_FRAGS")
        self.txfrags, self.txfull = g("SLOG_TXFRAGS"), g("SLOG_TXFULL")
        self.m = SlogRef(self.pb, self.num_tx, self.lpns, self.ways, self.frags, self.txfrags, self.txfull)
        self.cov: Counter = Counter()
        p = lambda: pause_gen(rng, True, 0.3)
        self.ix = StreamSource(dut, "s_ix", dut.clk, IX_F, p())
        self.ixa = StreamSink(dut, "m_ix", dut.clk, IXA_F, p())
        self.rd = StreamSource(dut, "s_rd", dut.clk, RD_F, p())
        self.rs = StreamSink(dut, "m_rs", dut.clk, RS_F, p())
        self.rw = StreamSource(dut, "s_rw", dut.clk, ["data"], p())
        self.lp = StreamSink(dut, "m_lp", dut.clk, LP_F, pause_gen(rng, "heavy" if rng.random() < 0.3 else True, 0.3, 20))
        self.lg = StreamSource(dut, "s_lg", dut.clk, ["lpgn"], p())
        sets = self.lpns // self.ways
        # LPNs crowding a few sets (full sets), with random high bits
        self.pool = [rng.getrandbits(20) * sets + rng.randrange(min(sets, 3)) for _ in range(self.lpns // 2 + 4)]
        self.pool += [rng.getrandbits(32) for _ in range(self.lpns // 2)]

    async def reset(self) -> None:
        d = self.dut
        d.s_cf_valid.value = 0
        d.rst.value = 1
        for _ in range(3):
            await RisingEdge(d.clk)
        d.rst.value = 0
        await RisingEdge(d.clk)

    # ---- index commands
    async def ix_cmd(self, op: int, txid: int = 0, lpn: int = 0, n: int = 0) -> list[dict]:
        self.ix.send_nowait(op=op, txid=txid, lpn=lpn, n=n)
        beats = []
        while True:
            b = await self.ixa.recv()
            beats.append(b)
            if b["last"]:
                return beats

    def check(self, what: str, got, want) -> None:
        assert got == want, f"{what}: got {got}, reference {want}"

    def rand_txid(self) -> int:
        r = self.rng.random()
        return 0 if r < 0.03 else self.num_tx + 1 + self.rng.randrange(3) if r < 0.06 else self.rng.randint(1, self.num_tx)

    async def do_reserve(self, t=None, lpn=None) -> None:
        t = self.rand_txid() if t is None else t
        lpn = self.rng.choice(self.pool) if lpn is None else lpn
        (b,) = await self.ix_cmd(0, t, lpn)
        sts, cnt = self.m.reserve(t, lpn)
        self.check(f"RESERVE t{t} {lpn:#x}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"reserve_{sts}"] += 1

    async def do_unreserve(self) -> None:
        t = self.rand_txid()
        lpn = self.rng.choice(self.pool)
        held = [e for s in self.m.idx.values() for e in s if e["rsv"]]
        if held and self.rng.random() < 0.5:             # a reservation's owner (an abort)
            e = self.rng.choice(held)
            t, lpn = e["owner"], e["lpn"]
        (b,) = await self.ix_cmd(1, t, lpn)
        sts = self.m.unreserve(t, lpn)
        self.check(f"UNRESERVE t{t} {lpn:#x}", b["sts"], sts)
        self.cov[f"unreserve_{sts}"] += 1

    async def do_lookup(self, lpn=None) -> None:
        lpn = self.rng.choice(self.pool) if lpn is None else lpn
        beats = await self.ix_cmd(2, 0, lpn)
        want = self.m.lookup(lpn)
        if not want:
            self.check(f"LOOKUP {lpn:#x}", [(b["sts"], b["cnt"]) for b in beats], [(OK, 0)])
        else:
            got = [(b["sts"], b["cnt"], b["lpgn"], b["pofs"], b["off"], b["len"]) for b in beats]
            self.check(f"LOOKUP {lpn:#x}", got, [(OK, len(want)) + f for f in want])
        self.cov[f"lookup_k{len(want)}"] += 1

    async def do_release(self) -> None:
        lpn = self.rng.choice(self.pool)
        n = self.rng.choice([1, 1, 2, self.frags, 255])
        (b,) = await self.ix_cmd(3, 0, lpn, n)
        sts, cnt = self.m.release(lpn, n)
        self.check(f"RELEASE {lpn:#x} {n}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"release_{sts}_{cnt > 0}"] += 1

    async def do_apply(self, t=None) -> None:
        t = self.rand_txid() if t is None else t
        (b,) = await self.ix_cmd(4, t)
        sts, cnt = self.m.apply(t)
        self.check(f"APPLY t{t}", (b["sts"], b["cnt"]), (sts, cnt))
        self.cov[f"apply_{sts}"] += 1

    async def do_badop(self) -> None:
        op = self.rng.randint(5, 7)
        (b,) = await self.ix_cmd(op, self.rand_txid(), self.rng.choice(self.pool), self.rng.getrandbits(8))
        self.check(f"op {op}", (b["sts"], b["cnt"]), (BAD_FIELD, 0))
        self.cov["bad_op"] += 1

    async def push_cf(self) -> None:
        d, r = self.dut, self.rng
        t, rl, lg = r.randint(1, self.num_tx), r.randint(1, 255), r.getrandbits(32)
        d.s_cf_txid.value, d.s_cf_reclen.value, d.s_cf_lpgn.value = t, rl, lg
        d.s_cf_valid.value = 1
        await RisingEdge(d.clk)
        d.s_cf_valid.value = 0
        self.m.push_cf(t, rl, lg)
        self.cov["cf"] += 1

    async def set_lpgn(self) -> None:
        v = self.rng.choice([self.rng.getrandbits(32), 0xFFFFFFFF - self.rng.randrange(3)])
        self.lg.send_nowait(lpgn=v)
        await self.lg.wait_idle()
        self.m.lpgn = v
        self.cov["lpgn_set"] += 1

    # ---- records
    def make_record(self) -> tuple[list[dict], list[list[int]]]:
        r = self.rng
        t = r.randint(1, self.num_tx)
        mine = [e["lpn"] for s in self.m.idx.values() for e in s if e["rsv"] and e["owner"] == t]
        descs = []
        for _ in range(r.choice([0, 0, 1, 2, self.txfull + (1 if r.random() < 0.1 else 0)])):
            descs.append(dict(txid=t, full=1, lpn=r.getrandbits(32), ppn=r.getrandbits(32)))
        lp = list(mine)
        if r.random() < 0.1:
            lp.append(r.choice(self.pool))              # maybe not reserved by t
        r.shuffle(lp)
        nfr = 0
        for lpn in lp[: r.randint(0, len(lp))]:
            for _ in range(r.choice([1, 1, 1, 2, self.frags + 1])):
                if nfr >= self.txfrags + (1 if r.random() < 0.1 else 0):
                    break
                P = self.pb - 16
                ln = 4 * r.randint(1, P // 4) if r.random() < 0.3 else 4 * r.randint(1, min(8, P // 4))
                off = 4 * r.randint(0, (self.pb - ln) // 4)
                if r.random() < 0.03:
                    ln, off = r.choice([(0, 0), (ln + 2, off), (ln, off + 1), (P + 4, 0), (ln, self.pb - ln + 4)])
                    ln, off = ln & 0xFFF, off & 0xFFF
                descs.append(dict(txid=t, full=0, lpn=lpn, ppn=r.getrandbits(32), off=off, len=ln,
                                  data=bytes(r.getrandbits(8) for _ in range(ln // 4 * 4))))
                nfr += 1
        if not descs:
            descs.append(dict(txid=t, full=1, lpn=r.getrandbits(32), ppn=r.getrandbits(32)))
        # fulls and fragments interleaved (the META-PUs: fulls first); an LPN's fragments in order
        fulls = [dd for dd in descs if dd["full"]]
        frs = [dd for dd in descs if not dd["full"]]
        descs = []
        while fulls or frs:
            src = fulls if (fulls and (not frs or r.random() < 0.4)) else frs
            descs.append(src.pop(0))
        if r.random() < 0.03:
            descs[0]["txid"] = r.choice([0, self.num_tx + 1, 255])
        if r.random() < 0.03 and len(descs) > 1:
            descs[-1]["txid"] = (descs[0]["txid"] % self.num_tx) + 1
        return descs, []

    async def do_record(self) -> None:
        descs, _ = self.make_record()
        for i, dd in enumerate(descs):
            self.rd.send_nowait(txid=dd["txid"], full=dd["full"], lpn=dd["lpn"], ppn=dd["ppn"],
                                off=dd.get("off", 0), len=dd.get("len", 0), last=int(i == len(descs) - 1))
        want = self.m.record([dict(dd, off=dd.get("off", 0), len=dd.get("len", 0)) for dd in descs])
        b = await self.rs.recv()
        if want["sts"] != OK:
            self.check("record status", (b["sts"], b["txid"]), (want["sts"], want["txid"]))
            self.cov[f"record_{want['sts']}"] += 1
            return
        self.check("record status", (b["sts"], b["txid"], b["lpgn"], b["reclen"]),
                   (OK, want["txid"], want["lpgn"], want["reclen"]))
        self.cov["record_ok"] += 1
        self.cov[f"record_pages{min(want['reclen'], 4)}"] += 1
        self.cov[f"record_ncf{min(want['ncf'], 8)}"] += 1
        for dd in descs:
            if not dd["full"]:
                for k in range(0, len(dd["data"]), 4):
                    self.rw.send_nowait(data=int.from_bytes(dd["data"][k:k + 4], "little"))
        # index commands while the pages stream out (they never change the record)
        collector = cocotb.start_soon(self.collect_pages(want))
        for _ in range(self.rng.randint(0, 4)):
            await self.rng.choice([self.do_reserve, self.do_lookup, self.do_release, self.do_unreserve])()
        if self.rng.random() < 0.5:
            await self.do_apply(want["txid"])           # may wait for the last page (APPLY stalls)
            await collector
        else:
            await collector
            if self.rng.random() < 0.2:
                await self.do_apply(want["txid"] % self.num_tx + 1)   # a wrong txid: TX_EMPTY
            await self.do_apply(want["txid"])

    async def collect_pages(self, want: dict) -> None:
        words_pp = self.pb // 4
        for j, page in enumerate(want["pages"]):
            got = bytearray()
            for w in range(words_pp):
                b = await self.lp.recv()
                got += b["data"].to_bytes(4, "little")
                self.check(f"page {j} word {w} last/lpgn/end", (b["last"], b["lpgn"], b["end"]),
                           (int(w == words_pp - 1), (want["lpgn"] + j) & 0xFFFFFFFF, int(j == want["reclen"] - 1)))
            if bytes(got) != page:
                diff = next(i for i in range(len(page)) if got[i] != page[i])
                raise AssertionError(f"log page {j} (LPGN {want['lpgn'] + j:#x}) differs first at byte {diff}: "
                                     f"got {bytes(got[diff:diff + 16]).hex()}, reference {page[diff:diff + 16].hex()}")

    async def run(self, steps: int) -> None:
        r = self.rng
        for _ in range(steps):
            x = r.random()
            if x < 0.35:
                await self.do_reserve()
            elif x < 0.45:
                await self.do_lookup()
            elif x < 0.52:
                await self.do_release()
            elif x < 0.57:
                await self.do_unreserve()
            elif x < 0.82:
                await self.do_record()
            elif x < 0.84:
                await self.do_apply()
            elif x < 0.85:
                await self.do_badop()
            elif x < 0.95:
                for _ in range(9 if r.random() < 0.1 else 1):    # 9: the list holds 8
                    await self.push_cf()
            else:
                await self.set_lpgn()
        for s in self.m.idx.values():
            for e in list(s):
                await self.do_lookup(e["lpn"])


@cocotb.test()
async def slog_random(dut):
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed)
    cocotb.start_soon(Clock(dut.clk, 10, "ns").start())
    tb = TB(dut, rng)
    await tb.reset()
    await tb.run(STEPS)
    dut._log.info("coverage: %s", dict(sorted(tb.cov.items())))
    for need in ("reserve_0", "reserve_4", "reserve_2", "record_ok", "record_4", "record_7", "record_2",
                 "apply_0", "apply_6", "unreserve_0", "unreserve_6", "release_0_True", "cf",
                 "record_pages2", "lpgn_set", "bad_op", "record_ncf8"):
        assert tb.cov[need] > 0, f"coverage point {need} not reached: {dict(tb.cov)}"
    assert any(tb.cov[f"lookup_k{k}"] for k in range(2, tb.frags + 1)) or tb.frags == 1


# (SLOG_LPNS, SLOG_WAYS, SLOG_FRAGS): a tiny index (full sets, 2 fragments), a non-power-of-two
# fragment ring, the default shape (256 x 4, 4 ways)
CONFIGS = [(8, 2, 2), (16, 4, 3), (256, 4, 4)]
SEEDS = [1, 2]


@pytest.mark.parametrize("seed", SEEDS, ids=[f"seed{s}" for s in SEEDS])
@pytest.mark.parametrize("lpns,ways,frags", CONFIGS, ids=[f"L{a}w{b}f{c}" for a, b, c in CONFIGS])
def test_ats_backend_slog(lpns, ways, frags, seed):
    src = os.environ.get("ATS_SLOG_SRC")
    params = dict(PAGE_BYTES=128, NUM_TX=6, SLOG_LPNS=lpns, SLOG_WAYS=ways, SLOG_FRAGS=frags,
                  SLOG_TXFRAGS=6, SLOG_TXFULL=3, PPN_W=32)
    key = f"L{lpns}w{ways}f{frags}" + ("_" + Path(src).parent.name if src else "")
    run(toplevel="ats_backend_slog",
        sources=block_sources("ats_backend_slog",
                              replace={"ats_backend_slog.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_backend_slog", test_dir=HERE, build_key=key, parameters=params,
        seed=seed, results_name=f"{key}_seed{seed}", extra_env={"ATS_SEED": str(seed)}, public={})


# parameter checks at elaboration: each bad value stops Verilator with the block's message
BAD_PARAMS = [dict(PAGE_BYTES=130), dict(PAGE_BYTES=8192), dict(NUM_TX=0), dict(SLOG_LPNS=12, SLOG_WAYS=4),
              dict(SLOG_LPNS=4, SLOG_WAYS=4), dict(SLOG_FRAGS=0), dict(SLOG_FRAGS=128),
              dict(SLOG_TXFRAGS=0), dict(PAGE_BYTES=64, SLOG_TXFRAGS=300), dict(PPN_W=33)]


@pytest.mark.parametrize("bad", BAD_PARAMS, ids=["_".join(f"{k}{v}" for k, v in b.items()) for b in BAD_PARAMS])
def test_ats_backend_slog_params(bad):
    import subprocess
    import shutil
    root = HERE.parents[1]
    vl = shutil.which("verilator") or str(root / ".venv" / "bin" / "verilator")
    args = [vl, "--lint-only", "-Wno-lint", "-Wno-style", "--top-module", "ats_backend_slog"]
    args += [f"-G{k}={v}" for k, v in bad.items()] + [str(p) for p in block_sources("ats_backend_slog")]
    r = subprocess.run(args, cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "ats_backend_slog:" in r.stdout + r.stderr, (r.returncode, r.stderr[-800:])
