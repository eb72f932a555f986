# SPDX-License-Identifier: Apache-2.0
"""Boot edge cases of the firmware through the whole SoC, each on die images the test writes or
changes itself, checked against the independent recovery oracle (recovery_oracle.py, from
docs/persistence.md) and the dies' own contents:

- a valid log record whose txid is above `num_tx` (persistence.md section 4): recovery ignores it
  (its seq stays in the durable prefix, it changes nothing), counts it (GET_LOG 31) and lets the host
  in; the records after it are replayed;
- no readable checkpoint on dies that hold data (persistence.md section 5 "Format"): the firmware
  refuses to format, erases and programs nothing, and says why (`format: -8`, console `status`);
  dies whose only programmed pages are in the checkpoint blocks (a first checkpoint torn by a cut)
  are formatted;
- die 0 block 1 factory bad: format takes the next good block as the second checkpoint block,
  recovery finds the checkpoints there, no page is ever programmed into block 1; the factory bad
  block count (IDENTIFY word 14, GET_LOG 15) is the same after every recovery as after the format
  (every checkpoint gives the factory bad blocks erase count 0xFFFF);
- a version-1 checkpoint in block 0 (the core tests' offline format, whose plans hold die 0 block 1):
  the firmware refuses it (persistence.md section 6 step 1 "Version 1 and the firmware"), lets no
  host in and changes no page;
- erase counts at 0xFFFE: an erase keeps them there (persistence.md section 5: 0xFFFF is the factory
  bad mark; past it the count wrapped to 0).

Each test boots the simulator 2-3 times with a few host writes (no campaign)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402

sys.path.insert(0, str(harness.ROOT / "cocotb_tests" / "lib"))
from atstb.nand_page_model import Meta, PageFormat  # noqa: E402
from atstb.recovery_oracle import (F_COMMIT, KIND_CKPT, KIND_DATA, DieImage, _decode,  # noqa: E402
                                   checkpoint_pages_v2, format_images, read_lpn, recover, write_image)


def blank_dies(sysm, bad: set[tuple[int, int]]) -> None:
    """Blank dies with the given factory bad blocks (page 0 all 0x00, the flag set: sim/nand/README.md)."""
    g = sysm.geo
    for d, path in enumerate(sysm.images):
        blocks = [b for dd, b in bad if dd == d]
        write_image(path, g, {b * g.ppb: bytes(g.page_bytes + g.spare_bytes) for b in blocks},
                    bytes(int(b in blocks) for b in range(g.blocks)))


def rewrite(path: Path, img: DieImage) -> None:
    """The image file with img's pages and flags; the die's journal removed (it continued the old file)."""
    write_image(path, img.geo, img.pages, img.bad)
    Path(str(path) + ".log").unlink(missing_ok=True)


def write_some(sysm, lbas: list[int], tag: int) -> dict[int, bytes]:
    """One plain write per LBA, then a FLUSH: every page durable. Returns the data written."""
    pb, out = sysm.cfg["page_bytes"], {}
    for lba in lbas:
        out[lba] = bytes([tag, lba & 0xFF]) * (pb // 2)
        sysm.dev.write(lba, out[lba])
    sysm.dev.flush()
    return out


def check_lbas(sysm, rec, want: dict[int, bytes | None]) -> None:
    """Each LBA read through the device equals the oracle's page (zeros when unmapped) and `want`."""
    pb = sysm.cfg["page_bytes"]
    for lba, data in sorted(want.items()):
        got = sysm.dev.read(lba)
        ref = read_lpn(sysm.geo, rec, lba)
        assert (ref or bytes(pb)) == (data or bytes(pb)), f"lba {lba}: the oracle disagrees with the test's data"
        assert got == (ref or bytes(pb)), f"lba {lba}: the device's data is not the oracle's"


def test_txid_above_num_tx(tmp_path):
    sysm = harness.System(tmp_path, 1)
    g, ntx = sysm.geo, sysm.cfg["num_tx"]
    blank_dies(sysm, {(1, 5)})
    assert sysm.start(), sysm.hp.uart_text()
    assert "format: 0, 1 factory bad blocks" in sysm.hp.uart_text()
    data = write_some(sysm, list(range(8)), 1)
    sysm.stop()
    rec = recover(sysm.images, g, ntx)
    assert rec.max_seq_seen == rec.prefix_end - 1 and len(rec.records) >= 8
    # two records appended to the log after the last one, on the same die and block: seq s (lba 0,
    # txid num_tx + 1, COMMIT: a transaction's commit page if its txid were valid) and s + 1 (lba 1,
    # plain: it must still be replayed, the ignored record leaves no gap)
    last = rec.records[-1]
    img = DieImage(sysm.images[last.die], g)
    pg = 1 + max(r % g.ppb for r in img.pages if r // g.ppb == last.block)
    assert pg + 1 < g.ppb
    fmt, s, pb = PageFormat(g.page_bytes, g.spare_bytes), rec.prefix_end, g.page_bytes
    img.pages[last.block * g.ppb + pg] = fmt.image(b"\xaa" * pb, Meta(lpn=0, txid=ntx + 1, kind=KIND_DATA, seq=s,
                                                                       epoch=0, flags=F_COMMIT))
    img.pages[last.block * g.ppb + pg + 1] = fmt.image(b"\xbb" * pb, Meta(lpn=1, txid=0, kind=KIND_DATA, seq=s + 1,
                                                                          epoch=0, flags=0))
    rewrite(sysm.images[last.die], img)
    rec = recover(sysm.images, g, ntx)
    assert rec.ignored == 1 and rec.prefix_end == s + 2
    # the firmware before the fix: `recovery failed: -1`, the host never let in (start() fails)
    assert sysm.start(), sysm.hp.uart_text()
    boot = sysm.hp.uart_text()
    assert f"recovery: 1 records with a txid above {ntx} ignored" in boot, boot[-1500:]
    data[1] = b"\xbb" * pb
    check_lbas(sysm, rec, data)
    lg, idn = sysm.dev.get_log(), sysm.dev.identify()
    assert (lg["recovery_ignored"], lg["recoveries"]) == (1, 1), lg
    # the factory bad block count survives the recovery (was 0 after one)
    assert (idn["factory_bad"], idn["bad_blocks"], lg["factory_bad"]) == (1, 1, 1), (idn, lg)
    # one more power cycle: the record is behind the recovery's checkpoint now, nothing to ignore
    sysm.stop()
    assert sysm.start()
    assert sysm.dev.get_log()["recovery_ignored"] == 0
    check_lbas(sysm, recover(sysm.images, g, ntx), data)
    sysm.stop()
    assert not sysm.errors, sysm.errors


def boot_until_line(sysm, pattern: str, cycles: int = 6_000_000) -> tuple[int, str]:
    """A simulator on sysm's images until the UART shows `pattern` or the host is let in; returns the
    stop reason bits and the UART text (the simulator left running in sysm.hp)."""
    sysm.hp = harness.HostPort(sysm.exe, sysm.fw, sysm.images, cwd=sysm.dir)
    why = 0
    while sysm.hp.cycle < cycles and not re.search(pattern, sysm.hp.uart_text()) and not why & harness.U_HOST_EN:
        why = sysm.hp.run(100_000, harness.U_LINE | harness.U_HOST_EN)
    return why, sysm.hp.uart_text()


def test_format_refuses_data(tmp_path):
    sysm = harness.System(tmp_path, 2)
    g = sysm.geo
    blank_dies(sysm, set())
    assert sysm.start()
    write_some(sysm, list(range(0, 40, 3)), 2)
    sysm.stop()
    # both checkpoints unreadable: the checkpoint blocks' pages gone (read erased), the data stays
    die0 = DieImage(sysm.images[0], g)
    die0.pages = {r: p for r, p in die0.pages.items() if r // g.ppb not in (0, 1)}
    rewrite(sysm.images[0], die0)
    before = [DieImage(p, g).pages for p in sysm.images]
    assert sum(len(p) for p in before) >= 13
    # the firmware before the fix formatted here: every block with data erased, the host let in
    why, text = boot_until_line(sysm, r"device not ready")
    assert not why & harness.U_HOST_EN, "the device formatted dies that hold data:\n" + text[-1500:]
    assert re.search(r"format: refused: not blank, \d+ good blocks hold data", text) and "format: -8" in text, text
    why = sysm.hp.run(300_000, harness.U_HOST_EN)
    assert not why & harness.U_HOST_EN
    st = sysm.console("status")
    assert "device not ready (boot -8)" in st and "host disabled" in st, st
    sysm.stop()
    after = [DieImage(p, g).pages for p in sysm.images]
    assert after == before, "the refused format changed the dies"
    # only the checkpoint blocks programmed (a first checkpoint torn by a cut: a page 0 of kind 3
    # without its other pages): blank dies for the format, which goes ahead
    for d, p in enumerate(sysm.images):
        img = DieImage(p, g)
        img.pages = {}
        if d == 0:
            fmt = PageFormat(g.page_bytes, g.spare_bytes)
            head = [0x50435441, 2, 0, 3] + [0] * (g.page_bytes // 4 - 4)
            img.pages[1 * g.ppb] = fmt.image(b"".join(w.to_bytes(4, "little") for w in head),
                                             Meta(lpn=0xFFFFFFFF, txid=0, kind=KIND_CKPT, seq=0, epoch=0, flags=0))
        rewrite(p, img)
    assert sysm.start(), sysm.hp.uart_text()
    assert "format: 0" in sysm.hp.uart_text()
    data = write_some(sysm, [5, 6], 3)
    sysm.stop()
    assert sysm.start()
    check_lbas(sysm, recover(sysm.images, g, sysm.cfg["num_tx"]), data)
    sysm.stop()
    assert not sysm.errors, sysm.errors


def test_ckpt_block_factory_bad(tmp_path):
    sysm = harness.System(tmp_path, 3)
    g = sysm.geo
    bad = {(0, 1), (2, 7)}
    blank_dies(sysm, bad)
    # the firmware before the fix: `format: -4`, `device not ready`, the host never let in
    assert sysm.start(), sysm.hp.uart_text()
    assert "format: 0, 2 factory bad blocks" in sysm.hp.uart_text()
    assert (sysm.dev.identify()["factory_bad"], sysm.dev.get_log()["factory_bad"]) == (2, 2)
    data = write_some(sysm, list(range(10)), 4)
    sysm.stop()
    rec = recover(sysm.images, g, sysm.cfg["num_tx"])
    assert rec.checkpoint is not None and rec.checkpoint.ckpt_no == 1
    for n in (2, 3):                                    # two recoveries: checkpoints in block 2, then 0
        assert sysm.start(), sysm.hp.uart_text()
        boot = sysm.hp.uart_text()
        m = re.search(r"recovery: checkpoint (\d+) \(block (\d+),", boot)
        assert m and int(m.group(1)) == rec.checkpoint.ckpt_no, boot[-1500:]
        check_lbas(sysm, rec, data)
        idn, lg = sysm.dev.identify(), sysm.dev.get_log()
        assert (idn["factory_bad"], idn["bad_blocks"], lg["factory_bad"]) == (2, 2, 2), (idn, lg)
        if n == 2:
            data.update(write_some(sysm, [3, 20], 5))
        sysm.stop()
        rec = recover(sysm.images, g, sysm.cfg["num_tx"])
        # the newest checkpoint: the recovery's, in the block the previous one was not in (0 <-> 2)
        die0 = DieImage(sysm.images[0], g)
        ck = {b for b in range(g.blocks) for p in range(g.ppb)
              if (raw := die0.row(b, p)) is not None and (dec := _decode(g, raw)) and dec[0].kind == KIND_CKPT}
        assert ck == {0, 2}, f"checkpoint pages in die 0 blocks {sorted(ck)}"
        assert rec.checkpoint.ckpt_no >= n
        # the factory bad blocks carry erase count 0xFFFF in every checkpoint (persistence.md section 5)
        ec = rec.checkpoint.erase_cnt
        assert [ec[d * g.blocks + b] for d, b in sorted(bad)] == [0xFFFF] * len(bad)
        assert {(x >> 16, x & 0xFFFF) for x in rec.checkpoint.bad} == bad
        # block 1 holds its mark only, never a programmed page
        assert sorted(r for r in die0.pages if r // g.ppb == 1) == [g.ppb]
        assert die0.pages[g.ppb] == bytes(g.page_bytes + g.spare_bytes)
    assert not sysm.errors, sysm.errors


@pytest.mark.parametrize("blk", [0, 1])
def test_version1_refused(tmp_path, blk):
    """A version-1 checkpoint in die 0 block `blk` (0: where the offline format puts it; 1: block 0
    erased, the second checkpoint block read instead) with a durable write in die 0's first plan
    block (the core tests' offline format, whose plans hold die 0 block 1): the firmware says why,
    lets no host in, and programs and erases nothing. Before 2026-11-29 it recovered such dies once
    and put its next checkpoint into block 1, erasing the page the recovery had just mapped there."""
    sysm = harness.System(tmp_path, 5)
    g = sysm.geo
    first = 1 if blk == 0 else 2
    plan = [[first, 3, 4, 5] if d == 0 else [0, 1, 2, 3] for d in range(g.ndie)]   # (one checkpoint page)
    format_images(sysm.images, g, plan, seq_base=0, version=1)
    data = bytes([7, 1]) * (g.page_bytes // 2)
    die0 = DieImage(sysm.images[0], g)
    if blk:
        die0.pages[blk * g.ppb] = die0.pages.pop(0)             # the checkpoint page moved to block 1
    die0.pages[first * g.ppb] = PageFormat(g.page_bytes, g.spare_bytes).image(
        data, Meta(lpn=3, txid=0, kind=KIND_DATA, seq=0, epoch=0, flags=0))
    rewrite(sysm.images[0], die0)
    assert read_lpn(g, recover(sysm.images, g, sysm.cfg["num_tx"]), 3) == data   # what the dies hold
    before = [DieImage(p, g).pages for p in sysm.images]
    why, text = boot_until_line(sysm, r"device not ready")
    assert not why & harness.U_HOST_EN, "the firmware let the host in on a version-1 checkpoint:\n" + text[-1500:]
    assert f"block {blk} holds a version-1 checkpoint" in text and "recovery failed: -2" in text, text[-1500:]
    sysm.stop()
    assert [DieImage(p, g).pages for p in sysm.images] == before, "the refused recovery changed the dies"
    assert not sysm.errors, sysm.errors


def test_erase_count_saturates(tmp_path):
    """A version-2 checkpoint in die 0 block 0 whose every erase count is 0xFFFE: the recovery's own
    checkpoint erases die 0 block 1 (the second checkpoint block), whose count stays 0xFFFE in that
    checkpoint (persistence.md section 5: good blocks saturate, 0xFFFF is the factory bad mark); the
    next recovery counts no factory bad block and reads back the data. Before 2026-11-29 the count
    became 0xFFFF (a block going bad after that was counted factory bad) and the next erase
    wrapped it to 0."""
    sysm = harness.System(tmp_path, 6)
    g = sysm.geo
    plan = [[2, 3, 4, 5] if d == 0 else [0, 1, 2, 3] for d in range(g.ndie)]
    ec = [0xFFFE] * (g.ndie * g.blocks)
    fmt = PageFormat(g.page_bytes, g.spare_bytes)
    ck = checkpoint_pages_v2(g, plan, {}, 0, ckpt_no=1, erase_cnt=ec)
    for d, path in enumerate(sysm.images):
        write_image(path, g, {i: fmt.image(data, Meta(lpn=0xFFFFFFFF, txid=0, kind=KIND_CKPT, seq=0, epoch=0, flags=0))
                              for i, data in enumerate(ck)} if d == 0 else {})
    assert recover(sysm.images, g, sysm.cfg["num_tx"]).checkpoint.erase_cnt == ec
    assert sysm.start(), sysm.hp.uart_text()
    data = write_some(sysm, [1, 2, 30], 9)
    sysm.stop()
    rec = recover(sysm.images, g, sysm.cfg["num_tx"])
    assert rec.checkpoint.ckpt_no >= 2
    cnt = rec.checkpoint.erase_cnt
    assert cnt[1] == 0xFFFE and 0xFFFF not in cnt, [(i, c) for i, c in enumerate(cnt) if c != 0xFFFE]
    assert sysm.start(), sysm.hp.uart_text()
    idn, lg = sysm.dev.identify(), sysm.dev.get_log()
    assert (idn["factory_bad"], lg["factory_bad"]) == (0, 0), (idn, lg)
    check_lbas(sysm, rec, data)
    sysm.stop()
    assert not sysm.errors, sysm.errors
