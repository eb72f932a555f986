# SPDX-License-Identifier: Apache-2.0
"""Static wear levelling through the whole SoC (sw/firmware/README.md "Wear levelling"): cold data
that never changes (every LBA but a few, written once) and hot data (the few, rewritten over and
over). Dynamic wear levelling alone keeps the cold data's blocks at their erase count while the
blocks the hot data cycles through wear; the firmware's static wear levelling must notice the
spread (max - min erase count over good blocks) exceed its threshold and move the cold data.

The test reports the spread before static wear levelling acted and after, asserts that it acted
(GET_LOG `wl_static`), that cold data moved (its pages' addresses in the checkpoints read from the
die images by the independent recovery oracle), that the spread stays bounded by the threshold,
and that every LBA reads its latest version (through the device, and on flash after power-off by
the oracle). Figures: build/system/wear_static.json.

Aged device: the pool of blocks the hot data cycles through would need WL_SPREAD + 1 erases each
(about 9 x 54 blocks x 16 pages = 7,800 hot pages here, over 10 minutes of one core) before the
threshold is crossed. In `make test` the history is shortened: after the cold fill
the device is powered off and the erase counts of its newest checkpoint (persisted, read back by
recovery: docs/persistence.md section 5) are set to WL_SPREAD for every good block that holds no
mapped page, as if the pool had already cycled that often while the cold data sat; the rest of the
run is the real thing. ATS_LONG=1 (make test-long) runs without that shortcut: the hot workload
alone wears the pool up to the threshold."""
from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402

sys.path.insert(0, str(harness.ROOT / "cocotb_tests" / "lib"))
from atstb.nand_page_model import PageFormat  # noqa: E402
from atstb.recovery_oracle import (KIND_CKPT, DieImage, _decode, checkpoint_blocks, checkpoint_pages_v2,  # noqa: E402
                                   parse_checkpoint_v2, read_lpn)

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
# the firmware's threshold (sw/firmware/fw.h): static wear levelling when the spread exceeds it
WL_SPREAD = int(re.search(r"#define WL_SPREAD (\d+)u", (harness.ROOT / "sw/firmware/fw.h").read_text()).group(1))
HOT = 16                    # hot LBAs 0..15; the other 752 are cold
CHUNK = 256                 # hot pages between two GET_LOG samples
IDLE = 300_000              # cycles the host pauses after each CHUNK (3 ms)
SEED, BAD_PPM = 5, 200_000  # factory bad blocks (test_badblocks.py): erase counts over good blocks only
AFTER = 1                   # erases more on the most worn block after static wear levelling first acted


def newest_checkpoint(geo, die0: DieImage):
    """(checkpoint, its rows in die 0, their metadata): the one recovery takes (highest seq, then
    number), read like the oracle's find_checkpoint, in the checkpoint blocks it names."""
    best = None
    for blk in checkpoint_blocks(geo, die0):
        pages: dict[int, tuple[int, bytes, object]] = {}
        for pg in range(geo.ppb):
            raw = die0.row(blk, pg)
            if raw is None:
                break
            dec = _decode(geo, raw)
            if dec is None or dec[0].kind != KIND_CKPT:
                continue
            m, data = dec
            if int.from_bytes(data[4:8], "little") == 2:
                pages[int.from_bytes(data[8:12], "little")] = (blk * geo.ppb + pg, data, m)
        if not pages:
            continue
        idx = sorted(pages)
        cp = parse_checkpoint_v2(geo, [pages[i][1] for i in idx], pages[idx[0]][2].seq)
        if cp is not None and (best is None or (cp.seq_base, cp.ckpt_no) > (best[0].seq_base, best[0].ckpt_no)):
            best = (cp, [pages[i][0] for i in idx], pages[idx[0]][2])
    assert best is not None, "no version-2 checkpoint in die 0"
    return best


def age_pool(sysm, age: int, mapping: dict[int, int]) -> tuple[int, int]:
    """Powered off: sets the erase count of every good block holding no page of `mapping` (the
    recovered one: checkpoint + log) to `age` in the newest checkpoint (re-encoded page by page with
    the page format's model: CRC, BCH). Returns (blocks aged, blocks left at their count)."""
    geo = sysm.geo
    die0 = DieImage(sysm.images[0], geo)
    cp, rows, meta = newest_checkpoint(geo, die0)
    fmt = PageFormat(geo.page_bytes, geo.spare_bytes)
    # the encoder must give back the firmware's pages bit for bit before it is trusted with a change
    same = checkpoint_pages_v2(geo, cp.plan, cp.mapping, cp.seq_base, cp.scan_from, cp.ckpt_no, cp.bad, cp.erase_cnt)
    assert [fmt.image(p, meta) for p in same] == [die0.pages[r] for r in rows], "checkpoint re-encoding differs"
    holding = {(d, b) for d, b, _ in (geo.unppn(p) for p in mapping.values())}
    bad = {(x >> 16, x & 0xFFFF) for x in cp.bad} | {(0, 0), (0, 1)}
    ec = list(cp.erase_cnt)
    aged = 0
    for d in range(geo.ndie):
        for b in range(geo.blocks):
            if (d, b) not in holding and (d, b) not in bad:
                ec[d * geo.blocks + b] = max(ec[d * geo.blocks + b], age)
                aged += 1
    new = checkpoint_pages_v2(geo, cp.plan, cp.mapping, cp.seq_base, cp.scan_from, cp.ckpt_no, cp.bad, ec)
    assert len(new) == len(rows)
    # the rows rewritten in place in the image file (header and every other byte as the die wrote
    # them); the die's journal no longer names the file, so it is dropped at the next power-on
    raw = bytearray(sysm.images[0].read_bytes())
    rb, off, at = geo.page_bytes + geo.spare_bytes, 8 + 28, {}
    for _ in range(int.from_bytes(raw[8 + 24:8 + 28], "little")):
        at[int.from_bytes(raw[off:off + 4], "little")] = off + 4
        off += 4 + rb
    for r, p in zip(rows, new):
        raw[at[r]:at[r] + rb] = fmt.image(p, meta)
    sysm.images[0].write_bytes(bytes(raw))
    return aged, len(holding)


def write_pages(sysm, starts: list[int], n: int) -> None:
    """Writes n consecutive LBAs from each start (one command each), waits for all."""
    m = sysm.model
    for st in starts:
        vs, data = [], b""
        for lba in range(st, st + n):
            v, d = m.new_write(lba)
            v.accepted = True
            vs.append(v)
            data += d
        sysm._submit(harness.OP["WRITE"], st, n - 1, data, vers=vs)
    sysm.dev.drain(500_000_000)
    for p in sysm.dev.done:
        assert p.cpl.status == 0, f"write at lba {p.lba}: status {p.cpl.status:#x}"
        sysm._complete(p)
    sysm.dev.done.clear()


def sample(sysm, hot_pages: int) -> dict:
    lg = sysm.dev.get_log()
    sysm.dev.done.clear()
    keys = ("host_pages", "erases", "gc_runs", "gc_relocs", "wl_static", "erase_min", "erase_max", "checkpoints")
    return dict(hot_pages=hot_pages, spread=lg["erase_max"] - lg["erase_min"], **{k: lg[k] for k in keys})


def test_static_wear_levelling(tmp_path):
    # blank dies with 23 factory bad blocks (seed 5, 20 %: 4, 6, 7 and 6 on dies 0-3), formatted:
    # the dies hold 25-28 good blocks, 12 of which the cold data fills, so a die's GC can run out of
    # anything to collect while its old blocks are all cold (the case static wear levelling is for)
    sysm = harness.System(tmp_path, SEED, faults=f"bad_ppm={BAD_PPM}")
    geo, m = sysm.geo, sysm.model
    nlba = m.nlba
    rng = random.Random(21)
    # ---- cold data: every LBA but the hot ones, written once, flushed, power off
    assert sysm.start()
    write_pages(sysm, list(range(HOT, nlba, 8)), 8)
    assert sysm.dev.flush().cpl.status == 0
    sysm.stop()
    cold_before = sysm.oracle()
    cold = list(range(HOT, nlba))
    assert all(l in cold_before.mapping for l in cold)
    aged = age_pool(sysm, WL_SPREAD, cold_before.mapping) if not LONG else (0, 0)
    # ---- hot data: the hot LBAs rewritten at random until static wear levelling has acted, then
    # AFTER passes over the pool more (the hot blocks' erase counts keep growing)
    assert sysm.start()
    samples = [sample(sysm, 0)]
    first = None
    hot = 0
    limit = 40_000 if LONG else 4_096
    while hot < limit:
        write_pages(sysm, [rng.randrange(0, HOT - 3) for _ in range(CHUNK // 4)], 4)
        hot += CHUNK
        sysm.hp.run(IDLE, 0)               # the host pauses: housekeeping without host writes
        samples.append(sample(sysm, hot))
        if first is None and samples[-1]["wl_static"] > 0:
            first = len(samples) - 1
        if first is not None and samples[-1]["erase_max"] >= samples[first]["erase_max"] + AFTER:
            break
    # idle: the firmware goes on moving the coldest blocks (each move's erase calls for the next
    # look) until every block at the old minimum erase count has been erased once more
    for _ in range(60):
        if first is not None and samples[-1]["erase_min"] > samples[first]["erase_min"]:
            break
        sysm.hp.run(500_000, 0)
        samples.append(sample(sysm, hot))
        first = first if first is not None or samples[-1]["wl_static"] == 0 else len(samples) - 1
    # ---- every LBA reads its latest version
    for lba in range(nlba):
        while not sysm.dev.free_tags:
            sysm.dev.poll(200_000)
        sysm.dev.submit(harness.OP["READ"], lba, 0, lba_check=lba)
    sysm.dev.drain(100_000_000)
    bad_reads = []
    for p in sysm.dev.done:
        lba = p.user["lba_check"]
        exp = harness.page_bytes_for(lba, m.vers[lba][-1].version, 0, m.page_bytes)
        if p.cpl.status != 0 or p.data != exp:
            bad_reads.append(lba)
    sysm.dev.done.clear()
    assert sysm.dev.flush().cpl.status == 0           # no power-loss protection: flushed, then off
    fw = harness.parse_fw_stats(sysm.console("stats"))
    sysm.stop()
    after = sysm.oracle()                     # power off: the flash alone must hold the same
    flash_bad = [l for l in range(nlba)
                 if read_lpn(geo, after, l) != harness.page_bytes_for(l, m.vers[l][-1].version, 0, m.page_bytes)]
    moved = sum(1 for l in cold if after.mapping[l] != cold_before.mapping[l])

    before = max(samples[:first] or samples[:1], key=lambda x: x["spread"]) if first is not None else samples[-1]
    trig = samples[first] if first is not None else samples[-1]
    end = samples[-1]
    peak = max(s["spread"] for s in samples[first:]) if first is not None else None
    rec = dict(aged_pool_blocks=aged[0], cold_blocks=aged[1], long=LONG, wl_spread=WL_SPREAD, hot_pages=hot,
               before=before, at_first_move=trig, end=end, peak_spread_after_first=peak,
               cold_lbas_moved=moved, cold_lbas=len(cold), gc_relocs=fw.get("gc_relocs"),
               wl_static=end["wl_static"], samples=samples)
    harness.ROOT.joinpath("build/system").mkdir(parents=True, exist_ok=True)
    (harness.ROOT / "build/system/wear_static.json").write_text(json.dumps(rec, indent=1))
    print("wear_static:", json.dumps({k: v for k, v in rec.items() if k != "samples"}))
    assert not bad_reads, f"lbas reading wrong data after wear levelling: {bad_reads[:10]}"
    assert not flash_bad, f"lbas whose flash copy is wrong after power-off: {flash_bad[:10]}"
    assert not sysm.errors, sysm.errors
    assert first is not None, f"static wear levelling never acted in {hot} hot pages: {samples[-1]}"
    assert trig["spread"] > WL_SPREAD, f"it acted at spread {trig['spread']} (threshold {WL_SPREAD})"
    assert moved >= len(cold) // 2, f"only {moved} of {len(cold)} cold LBAs moved"
    assert end["erase_max"] > trig["erase_max"], "the hot blocks did not wear further after the first move"
    # bounded: the spread exceeds the threshold by the erase that crosses it, and by one more while
    # the hot writes keep GC busy on some die (static wear levelling runs in the housekeeping passes
    # without GC work); once the blocks at the old minimum have all moved it is at most one above
    # (the next erase of the most worn block starts the next round of moves)
    assert peak <= WL_SPREAD + 2, f"spread reached {peak} (threshold {WL_SPREAD})"
    assert end["erase_min"] > trig["erase_min"], f"the coldest blocks never moved: {end}"
    assert end["spread"] <= WL_SPREAD + 1, f"spread {end['spread']} after the moves (threshold {WL_SPREAD})"
