"""ats_wbuf_frag (the FRAG table, architecture §11.3) against frag_ref.FragSlot (plain Python from
the document): random creates (lowest free number), DIFFWRITE-like word writes (a range of words,
one per cycle, overlapping earlier ones), frees of one entry and of a txid's entries; after every
step the lookup (hit, number, the txid's count, the lowest free number) and every entry's set
words and runs equal the reference's, and a scan of a random entry with random backpressure on
m_run sends exactly the reference's runs in word order, `last` on the final one. Random idle
between steps. One small build (4 entries, 16-word pages: runs often touch both page ends)."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "lib"))

from atstb.runner import block_sources, run  # noqa: E402
from frag_ref import FragSlot  # noqa: E402

NF, PW, LPN_W = 4, 16, 6


def _set(dut, **kw):
    for k, v in kw.items():
        getattr(dut, k).value = v


async def _check(dut, slots: dict[int, FragSlot], rng: random.Random):
    """Lookup of a random (txid, lpn) (often one held) and every entry's fields and counters."""
    held = list(slots.values())
    if held and rng.random() < 0.7:
        s = rng.choice(held)
        t, lpn = s.txid, s.lpn
    else:
        t, lpn = rng.randrange(1, 4), rng.randrange(1 << LPN_W)
    _set(dut, lk_txid=t, lk_lpn=lpn)
    for n in range(NF):
        dut.st_num.value = n
        await Timer(1, unit="ns")
        s = slots.get(n)
        assert int(dut.st_v.value) == (s is not None), f"entry {n}: valid {int(dut.st_v.value)}"
        if s is not None:
            got = (int(dut.st_txid.value), int(dut.st_lpn.value), int(dut.st_room.value),
                   int(dut.st_words.value), int(dut.st_runs.value))
            exp = (s.txid, s.lpn, s.room, len(s.words), len(s.runs()))
            assert got == exp, f"entry {n}: (txid, lpn, room, words, runs) {got}, expected {exp}"
            for w in range(PW):
                dut.mk_widx.value = w
                await Timer(1, unit="ns")
                assert int(dut.mk_bit.value) == (w in s.words), f"entry {n} mask word {w}"
    await Timer(1, unit="ns")
    hit = [n for n, s in slots.items() if s.txid == t and s.lpn == lpn]
    assert int(dut.lk_hit.value) == bool(hit), f"lookup ({t}, {lpn}): hit {int(dut.lk_hit.value)}"
    if hit:
        assert int(dut.lk_num.value) == hit[0]
    assert int(dut.lk_txcnt.value) == sum(s.txid == t for s in slots.values())
    free = [n for n in range(NF) if n not in slots]
    assert int(dut.free_v.value) == bool(free)
    if free:
        assert int(dut.free_num.value) == min(free), "not the lowest free number"
    await RisingEdge(dut.clk)


async def _scan(dut, n: int, s: FragSlot, rng: random.Random, bp: float):
    _set(dut, sc_start=1, sc_num=n, m_run_ready=0)
    await RisingEdge(dut.clk)
    dut.sc_start.value = 0
    got = []
    for _ in range(40 * PW):
        rdy = int(rng.random() >= bp)
        dut.m_run_ready.value = rdy
        await ReadOnly()
        if int(dut.m_run_valid.value) and rdy:
            got.append((int(dut.m_run_first.value), int(dut.m_run_words.value), int(dut.m_run_last.value)))
        busy = int(dut.sc_busy.value)
        await RisingEdge(dut.clk)
        if not busy:
            break
    else:
        raise AssertionError("scan did not end")
    r = s.runs()
    exp = [(i, k, int(j == len(r) - 1)) for j, (i, k) in enumerate(r)]
    assert got == exp, f"scan of entry {n}: {got}, expected {exp}"
    return len(r) >= 3 and bp > 0


@cocotb.test()
async def run_frag_table(dut):
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 1000 + 41)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    _set(dut, rst=1, cr_en=0, wr_en=0, fr_en=0, frt_en=0, sc_start=0, m_run_ready=0,
         lk_txid=0, lk_lpn=0, st_num=0, mk_widx=0, cr_txid=0, cr_lpn=0, cr_room=0, wr_num=0,
         wr_widx=0, fr_num=0, frt_txid=0, sc_num=0)
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    slots: dict[int, FragSlot] = {}
    scans = multi = 0
    for step in range(300):
        x = rng.random()
        free = [n for n in range(NF) if n not in slots]
        if x < 0.2 and free:
            n = min(free)
            t, lpn, room = rng.randrange(1, 4), rng.randrange(1 << LPN_W), rng.randrange(1, 256)
            if any(s.txid == t and s.lpn == lpn for s in slots.values()):
                continue                          # the caller never creates a second (t, lpn)
            _set(dut, cr_en=1, cr_txid=t, cr_lpn=lpn, cr_room=room)
            await RisingEdge(dut.clk)
            dut.cr_en.value = 0
            slots[n] = FragSlot(n, t, lpn, room)
        elif x < 0.65 and slots:
            n = rng.choice(list(slots))
            k = PW if rng.random() < 0.03 else rng.choice([1, 1, 1, 1, 2, 3, PW // 2])
            lo = rng.randrange(PW - k + 1)
            for w in range(lo, lo + k):           # one word a cycle, as the DIFFWRITE's host words
                _set(dut, wr_en=1, wr_num=n, wr_widx=w)
                await RisingEdge(dut.clk)
                slots[n].words[w] = 1
                if rng.random() < 0.2:
                    dut.wr_en.value = 0
                    await RisingEdge(dut.clk)
            dut.wr_en.value = 0
        elif x < 0.72 and slots:
            n = rng.choice(list(slots))
            _set(dut, fr_en=1, fr_num=n)
            await RisingEdge(dut.clk)
            dut.fr_en.value = 0
            del slots[n]
        elif x < 0.75:
            t = rng.randrange(1, 4)
            _set(dut, frt_en=1, frt_txid=t)
            await RisingEdge(dut.clk)
            dut.frt_en.value = 0
            slots = {n: s for n, s in slots.items() if s.txid != t}
        elif slots:                               # mostly the entry with the most runs
            n = rng.choice(list(slots)) if rng.random() < 0.3 else \
                max(slots, key=lambda m: len(slots[m].runs()))
            multi += await _scan(dut, n, slots[n], rng, rng.choice([0.0, 0.5, 0.9]))
            scans += 1
        for _ in range(rng.choice([0, 0, 1, 3])):
            await RisingEdge(dut.clk)
        await _check(dut, slots, rng)
    dut._log.info("scans %d, of 3 runs or more under backpressure %d", scans, multi)
    assert scans > 20 and multi > 5, f"only {scans} scans, {multi} of 3 runs or more under backpressure"


def test_ats_wbuf_frag():
    run(toplevel="ats_wbuf_frag", sources=block_sources("ats_wbuf_frag"),
        test_module="test_ats_wbuf_frag", test_dir=HERE, build_key=f"n{NF}_w{PW}",
        parameters={"FRAG_SLOTS": NF, "PWORDS": PW, "LPN_W": LPN_W})
