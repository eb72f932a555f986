"""ats_wbuf_frag (the FRAG table, architecture §11.3) against frag_ref.FragSlot (plain Python from
the document): random creates (at the lowest free number), DIFFWRITE-like word ranges (overlapping
earlier ones: runs merge), frees of one entry and of a txid's entries, with random idle; after
every step the lookup (hit, number, the txid's count, the lowest free number) and every entry's
fields equal the reference's, and a count scan (mode 0) of every entry gives its set words and
runs; scans of random entries (mostly the one with the most runs) in mode 1 send exactly the
reference's runs in word order (`last` on the final one) and in mode 2 exactly its mask bits, with
random backpressure. Four builds: 4 entries x 64-word pages (two mask words: runs across them),
2 entries x 16-word pages (one mask word, part used: the 64-byte pages of the wbuf tests), and
32 x 64 and 64 x 16, past the old maximum of 16 entries: these first fill the whole table, mostly
with one txid, checking the lookup, the txid's count and vector and the lowest free number after
every create, scan every entry above 15, then free most entries and go on as the others; at the
end they give every entry txid 1 (its count up to FRAG_SLOTS) and check a further reservation
refused as frag_ref.FragRef says."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "lib"))

from atstb.runner import block_sources, run  # noqa: E402
from frag_ref import FragRef, FragSlot  # noqa: E402

LPN_W = 6


def _set(dut, **kw):
    for k, v in kw.items():
        getattr(dut, k).value = v


async def _idle(dut):
    for _ in range(20_000):
        await ReadOnly()
        if not int(dut.busy.value):
            await RisingEdge(dut.clk)
            return
        await RisingEdge(dut.clk)
    raise AssertionError("busy for 20000 cycles (a hang)")


async def _op(dut, **kw):
    """One operation: its inputs for one cycle (busy is low), then wait until idle."""
    _set(dut, **kw)
    await RisingEdge(dut.clk)
    for k in kw:
        if k.endswith("_en"):
            getattr(dut, k).value = 0
    await _idle(dut)


async def _scan(dut, n: int, s: FragSlot, mode: int, rng: random.Random, bp: float):
    pw = int(dut.PWORDS.value)
    _set(dut, sc_en=1, sc_num=n, sc_mode=mode, m_run_ready=0, m_bit_ready=0)
    await RisingEdge(dut.clk)
    dut.sc_en.value = 0
    runs, bits = [], []
    cycles = 0
    for _ in range(60 * pw):
        cycles += 1
        rdy = int(rng.random() >= bp)
        dut.m_run_ready.value = rdy
        dut.m_bit_ready.value = rdy
        await ReadOnly()
        if int(dut.m_run_valid.value) and rdy:
            runs.append((int(dut.m_run_first.value), int(dut.m_run_words.value), int(dut.m_run_last.value)))
        if int(dut.m_bit_valid.value) and rdy:
            bits.append((int(dut.m_bit.value), int(dut.m_bit_last.value)))
        busy = int(dut.busy.value)
        await RisingEdge(dut.clk)
        if not busy:
            break
    else:
        raise AssertionError("scan did not end")
    r = s.runs()
    assert (int(dut.sc_words.value), int(dut.sc_runs.value)) == (len(s.words), len(r)), \
        f"entry {n} counts (words, runs) {(int(dut.sc_words.value), int(dut.sc_runs.value))}, " \
        f"expected {(len(s.words), len(r))}"
    exp_runs = [(i, k, int(j == len(r) - 1)) for j, (i, k) in enumerate(r)] if mode == 1 else []
    assert runs == exp_runs, f"scan of entry {n}: runs {runs}, expected {exp_runs}"
    exp_bits = [(int(w in s.words), int(w == pw - 1)) for w in range(pw)] if mode == 2 else []
    assert bits == exp_bits, f"scan of entry {n}: bits {bits}, expected {exp_bits}"
    # modes 0 / 1 without backpressure: the walk's documented bound (rtl/wbuf/README.md "Units": 3
    # cycles to load each mask word, one per stretch between run edges and one per edge), not a
    # cycle per page word
    if mode in (0, 1) and bp == 0:
        bound = 4 * -(-pw // 32) + 4 * len(r) + 8
        assert cycles <= bound, f"scan of entry {n} (mode {mode}, {len(r)} runs): {cycles} cycles > {bound}"
    return mode == 1 and len(r) >= 3 and bp > 0


async def _check(dut, slots: dict[int, FragSlot], nf: int, rng: random.Random):
    held = list(slots.values())
    if held and rng.random() < 0.7:
        s = rng.choice(held)
        t, lpn = s.txid, s.lpn
    else:
        t, lpn = rng.randrange(1, 4), rng.randrange(1 << LPN_W)
    _set(dut, lk_txid=t, lk_lpn=lpn, tv_txid=t)
    for n in range(nf):
        dut.st_num.value = n
        await Timer(1, unit="ns")
        s = slots.get(n)
        assert int(dut.st_v.value) == (s is not None), f"entry {n}: valid {int(dut.st_v.value)}"
        if s is not None:
            got = (int(dut.st_txid.value), int(dut.st_lpn.value), int(dut.st_room.value))
            assert got == (s.txid, s.lpn, s.room), f"entry {n}: (txid, lpn, room) {got}"
    hit = [n for n, s in slots.items() if s.txid == t and s.lpn == lpn]
    assert int(dut.lk_hit.value) == bool(hit), f"lookup ({t}, {lpn}): hit {int(dut.lk_hit.value)}"
    if hit:
        assert int(dut.lk_num.value) == hit[0]
    assert int(dut.lk_txcnt.value) == sum(s.txid == t for s in slots.values())
    assert int(dut.tv_vec.value) == sum(1 << n for n, s in slots.items() if s.txid == t), "tv_vec"
    free = [n for n in range(nf) if n not in slots]
    assert int(dut.free_v.value) == bool(free)
    if free:
        assert int(dut.free_num.value) == min(free), "not the lowest free number"
    await RisingEdge(dut.clk)
    for n, s in slots.items():                    # counts of every entry
        await _scan(dut, n, s, 0, rng, 0.0)


@cocotb.test()
async def run_frag_table(dut):
    rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 1000 + 41)
    nf, pw = int(dut.FRAG_SLOTS.value), int(dut.PWORDS.value)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    _set(dut, rst=1, cr_en=0, rs_en=0, sc_en=0, fr_en=0, frt_en=0, m_run_ready=0, m_bit_ready=0,
         lk_txid=0, lk_lpn=0, tv_txid=0, st_num=0, cr_txid=0, cr_lpn=0, cr_room=0, rs_num=0, rs_lo=0, rs_hi=1,
         sc_num=0, sc_mode=0, fr_num=0, frt_txid=0)
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    slots: dict[int, FragSlot] = {}
    scans = multi = 0
    if nf > 16:
        # more entries than the old maximum (16): the table filled first, mostly by one txid (its
        # count past 16, the lowest free number past 15, entries above 15 written and scanned), with
        # a generator of its own (the builds of 16 entries or fewer keep their random stream)
        frng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 1000 + 43)
        for n in range(nf):
            t = 1 if frng.random() < 0.8 else frng.randrange(2, 4)
            lpn = n * (1 << LPN_W) // nf + frng.randrange((1 << LPN_W) // nf)
            room = frng.randrange(1, 256)
            await _op(dut, cr_en=1, cr_txid=t, cr_lpn=lpn, cr_room=room)
            slots[n] = FragSlot(n, t, lpn, room)
            lo = frng.randrange(pw)
            k = frng.randrange(1, min(4, pw - lo) + 1)
            await _op(dut, rs_en=1, rs_num=n, rs_lo=lo, rs_hi=lo + k)
            for w in range(lo, lo + k):
                slots[n].words[w] = 1
            await _check(dut, slots, nf, frng)
        assert int(dut.free_v.value) == 0 and int(dut.lk_txcnt.value) > 0
        for n in range(16, nf):                   # the entries above the old maximum, scanned
            multi += await _scan(dut, n, slots[n], frng.choice([1, 2]), frng, 0.5)
            scans += 1
        for n in [m for m in slots if frng.random() < 0.7]:   # then most freed: the random steps below
            await _op(dut, fr_en=1, fr_num=n)
            del slots[n]
        await _check(dut, slots, nf, frng)
    for _ in range(300):
        x = rng.random()
        free = [n for n in range(nf) if n not in slots]
        if x < 0.2 and free:
            n = min(free)
            t, lpn, room = rng.randrange(1, 4), rng.randrange(1 << LPN_W), rng.randrange(1, 256)
            if any(s.txid == t and s.lpn == lpn for s in slots.values()):
                continue                          # the caller never creates a second (t, lpn)
            await _op(dut, cr_en=1, cr_txid=t, cr_lpn=lpn, cr_room=room)
            slots[n] = FragSlot(n, t, lpn, room)
        elif x < 0.65 and slots:
            n = rng.choice(list(slots))
            y = rng.random()                      # mostly single words: many runs
            k = pw if y < 0.02 else 1 if y < 0.65 else rng.choice([2, 3]) if y < 0.9 else \
                min(pw, rng.choice([8, pw // 2, 40]))
            lo = rng.randrange(pw - k + 1)
            await _op(dut, rs_en=1, rs_num=n, rs_lo=lo, rs_hi=lo + k)
            for w in range(lo, lo + k):
                slots[n].words[w] = 1
        elif x < 0.72 and slots:
            n = rng.choice(list(slots))
            await _op(dut, fr_en=1, fr_num=n)
            del slots[n]
        elif x < 0.75:
            t = rng.randrange(1, 4)
            await _op(dut, frt_en=1, frt_txid=t)
            slots = {n: s for n, s in slots.items() if s.txid != t}
        elif slots:                               # mostly the entry with the most runs
            n = rng.choice(list(slots)) if rng.random() < 0.3 else \
                max(slots, key=lambda m: len(slots[m].runs()))
            multi += await _scan(dut, n, slots[n], rng.choice([1, 1, 1, 2]), rng, rng.choice([0.0, 0.5, 0.5, 0.9]))
            scans += 1
        for _ in range(rng.choice([0, 0, 1, 3])):
            await RisingEdge(dut.clk)
        await _check(dut, slots, nf, rng)
    dut._log.info("scans %d, of 3 runs or more under backpressure %d", scans, multi)
    assert scans > 20 and multi > 3, f"only {scans} scans, {multi} of 3 runs or more under backpressure"
    if nf > 16:
        await _one_tx_full(dut, slots, nf, pw)


async def _one_tx_full(dut, slots: dict[int, FragSlot], nf: int, pw: int):
    """Every entry held by txid 1 (after the random steps, so their stream stays): its count equals
    FRAG_SLOTS (the count's top bit, 64 = 0b1000000 at 64 entries) and a further reservation is
    refused as frag_ref.FragRef says (a RESERVE only with a free entry and the txid's count below
    SLOG_TXFRAGS: ats_wbuf's fr_ok = free_v && lk_txcnt < SLOG_TXFRAGS), for SLOG_TXFRAGS = FRAG_SLOTS
    and FRAG_SLOTS + 1; then one entry freed: the count FRAG_SLOTS - 1, a reservation allowed."""
    frng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 1000 + 47)
    for t in range(1, 4):
        await _op(dut, frt_en=1, frt_txid=t)
    slots.clear()
    for n in range(nf):
        lpn, room = n, frng.randrange(1, 256)
        await _op(dut, cr_en=1, cr_txid=1, cr_lpn=lpn, cr_room=room)
        slots[n] = FragSlot(n, 1, lpn, room)
        lo = frng.randrange(pw)
        await _op(dut, rs_en=1, rs_num=n, rs_lo=lo, rs_hi=lo + 1)
        slots[n].words[lo] = 1
        _set(dut, lk_txid=1, lk_lpn=lpn, tv_txid=1)
        await Timer(1, unit="ns")
        assert int(dut.lk_txcnt.value) == n + 1, f"txid 1's count {int(dut.lk_txcnt.value)}, expected {n + 1}"
        await RisingEdge(dut.clk)
    await _check(dut, slots, nf, frng)

    async def refused(txfrags: int) -> bool:
        # a DIFFWRITE of txid 1 to an LPN it does not hold (at 64 entries txid 1 holds all 64 LPNs of
        # LPN_W = 6 bits: the reference's LPN is then 64; the count looked up does not depend on it)
        lpn = min(set(range((1 << LPN_W) + 1)) - {s.lpn for s in slots.values()})
        ref = FragRef(4 * pw, nf, txfrags, 4 * pw - 16)
        ref.slots = dict(slots)
        held = len(ref.of_tx(1))
        asked = []
        ref.diffwrite(1, lpn, 0, 4, bytes(4), False, False, lambda t, l: asked.append(l) or (0, 1))
        _set(dut, lk_txid=1, lk_lpn=lpn % (1 << LPN_W), tv_txid=1)
        await Timer(1, unit="ns")
        cnt, free_v = int(dut.lk_txcnt.value), int(dut.free_v.value)
        assert cnt == held, f"txid 1's count {cnt}, the reference's {held}"
        assert (free_v and cnt < txfrags) == bool(asked), \
            f"SLOG_TXFRAGS {txfrags}: free_v {free_v}, count {cnt}; the reference {'reserves' if asked else 'refuses'}"
        await RisingEdge(dut.clk)
        return bool(asked)

    assert int(dut.lk_txcnt.value) == nf and int(dut.free_v.value) == 0
    assert not await refused(nf) and not await refused(nf + 1)
    await _op(dut, fr_en=1, fr_num=nf - 1)
    del slots[nf - 1]
    assert await refused(nf) and not await refused(nf - 1)
    await _check(dut, slots, nf, frng)


@pytest.mark.parametrize("nf,pw", [(4, 64), (2, 16), (32, 64), (64, 16), (4, 1024)])
def test_ats_wbuf_frag(nf, pw):
    run(toplevel="ats_wbuf_frag", sources=block_sources("ats_wbuf_frag"),
        test_module="test_ats_wbuf_frag", test_dir=HERE, build_key=f"n{nf}_w{pw}",
        parameters={"FRAG_SLOTS": nf, "PWORDS": pw, "LPN_W": LPN_W})
