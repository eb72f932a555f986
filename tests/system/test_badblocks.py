# SPDX-License-Identifier: Apache-2.0
"""Factory bad blocks through the whole SoC: blank dies whose factory bad blocks a seed chooses
(the die model's `bad_ppm`, sim/nand/README.md; `ATS_NAND_FAULTS="bad_ppm=N,seed=S"`), formatted by
the firmware, then written and cut.

The truth is the die model's: the factory-bad flags its images carry (never the firmware's word).
Checked:
- format: the firmware's bad-block table (console `bbt`), IDENTIFY (factory / total bad blocks) and
  the format checkpoint's bad list (read from the images by the independent recovery oracle) are
  exactly the dies' factory bad blocks; no plan lists one;
- no data ever lands in them: every PROGRAM the dies receive (the store's `ATS_NAND_TRACE` log of
  every simulator process) is outside them, each bad block holds only its mark (page 0 of 00h) in
  the images after every cut, and the device reports no program failure and no grown bad block;
- recovery after power cuts keeps them out: after every cut (the campaign of harness.System: random
  workload, cuts at random cycles / commands / inside recovery, aged by a fill first so that GC and
  many checkpoints run) the newest checkpoint's bad list is still exactly them and its plan avoids
  them, and every recovery is checked against the oracle and the invariants (model.py) as in the
  power-cut campaign."""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402

sys.path.insert(0, str(harness.ROOT / "cocotb_tests" / "lib"))
from atstb.recovery_oracle import DieImage  # noqa: E402

# seed 2 with 6 % factory bad blocks: 8 of the 124 blocks that may be bad (block 0 of each die never
# is), 2 on every die, none of them die 0 block 1 (the second checkpoint block when it is good; a bad
# one: test_boot_edges.py test_ckpt_block_factory_bad)
SEED = 2
BAD_PPM = 60_000
CUTS = 8
PROG_RE = re.compile(r"ats_nand_store: die (\d+) PROGRAM block (\d+) page (\d+)")


class BadBlockSystem(harness.System):
    """harness.System whose oracle step also checks the images against the factory bad blocks."""

    truth: set[tuple[int, int]] = set()
    image_checks = 0

    def oracle(self):
        rec = super().oracle()
        self.check_images(rec.dies, rec.checkpoint, f"cut {self.stats.cuts}")
        return rec

    def check_images(self, dies: list[DieImage], cp, where: str) -> None:
        g, errs = self.geo, self.errors
        flags = {(d, b) for d, img in enumerate(dies) for b in range(g.blocks) if img.bad[b]}
        if flags != self.truth:
            errs.append(f"{where}: the dies' factory-bad flags changed: {sorted(flags ^ self.truth)}")
        mark = bytes(g.page_bytes + g.spare_bytes)
        for d, b in sorted(self.truth):
            rows = sorted(r - b * g.ppb for r in dies[d].pages if r // g.ppb == b)
            if rows != [0] or dies[d].pages[b * g.ppb] != mark:
                errs.append(f"{where}: bad block {d}/{b} holds pages {rows} besides its mark (data landed in it)")
        if cp is None:
            errs.append(f"{where}: no checkpoint")
            return
        cp_bad = {(x >> 16, x & 0xFFFF) for x in cp.bad}
        if cp_bad != self.truth or len(cp.bad) != len(self.truth):
            errs.append(f"{where}: checkpoint {cp.ckpt_no} lists bad blocks {sorted(cp_bad)} (with repeats: "
                        f"{len(cp.bad)}), the dies have {sorted(self.truth)}")
        planned = {(d, b) for d in range(g.ndie) for b in cp.plan[d]} & self.truth
        if planned:
            errs.append(f"{where}: checkpoint {cp.ckpt_no} plans bad blocks {sorted(planned)}")
        self.image_checks += 1


def bbt(sysm) -> set[tuple[int, int]]:
    """The firmware's bad-block table (console `bbt`: `bbt: N bad blocks: d/b ...`)."""
    hp = sysm.hp
    mark, end = len(hp.uart), hp.cycle + 20_000_000
    hp.uart_in("bbt\n")
    pat = re.compile(r"bbt: (\d+) bad blocks:([ \d/]*)\r?\n")    # (the boot's `ready` line may come first)
    while hp.cycle < end and not pat.search(hp.uart[mark:].decode(errors="replace")):
        hp.run(50_000, harness.U_LINE)
    out = hp.uart[mark:].decode(errors="replace")
    m = pat.search(out)
    assert m, f"no answer to bbt: {out!r}"
    got = {(int(d), int(b)) for d, b in re.findall(r"(\d+)/(\d+)", m.group(2))}
    assert len(got) == int(m.group(1)), f"bbt lists a block twice: {out!r}"
    return got


def programs(dirpath: Path) -> list[tuple[int, int, int]]:
    """(die, block, page) of every PROGRAM the dies of every simulator process in `dirpath` received."""
    out = []
    for log in sorted(dirpath.glob("sim_*.log")):
        out += [tuple(map(int, m.groups())) for m in PROG_RE.finditer(log.read_text(errors="replace"))]
    return out


def test_factory_bad_blocks(tmp_path, monkeypatch):
    monkeypatch.setenv("ATS_NAND_TRACE", "1")          # every PROGRAM on each simulator's log
    sysm = BadBlockSystem(tmp_path, SEED, faults=f"bad_ppm={BAD_PPM}")   # no template: blank dies
    g = sysm.geo
    # ---- power-on 1: the firmware formats the blank dies
    assert sysm.start(), "format was cut"
    assert "format: 0" in sysm.hp.uart_text(), sysm.hp.uart_text()[-2000:]
    fw_bad = bbt(sysm)
    idn = sysm.dev.identify()
    sysm.stop()                                          # power off: the dies save their images
    dies = [DieImage(p, g) for p in sysm.images]
    truth = {(d, b) for d, img in enumerate(dies) for b in range(g.blocks) if img.bad[b]}
    print(f"factory bad blocks (seed {SEED}, {BAD_PPM} ppm): {sorted(truth)}")
    assert len(truth) >= 4 and len({d for d, _ in truth}) >= 3, f"seed {SEED}: too few bad blocks to test: {truth}"
    assert (0, 1) not in truth
    sysm.truth = truth
    assert fw_bad == truth, f"bbt {sorted(fw_bad)} != the dies' factory bad blocks {sorted(truth)}"
    assert (idn["factory_bad"], idn["bad_blocks"]) == (len(truth), len(truth)), idn
    fmt = sysm.oracle()                                  # the format checkpoint, from the images
    assert fmt.checkpoint.ckpt_no <= 1 and not fmt.mapping

    # ---- aged: the whole capacity written (every good block of the plans in use, GC starting),
    # then power cuts under a random workload over every LBA, each recovery checked
    assert sysm.start()
    lbas = list(range(sysm.model.nlba))
    st = harness.fill(sysm, 3 * sysm.model.nlba // 2, lbas)
    assert (st["grown_bad"], st["program_fail"]) == (0, 0), st
    harness.settle(sysm)
    cs = sysm.campaign(CUTS, lbas, cmds=(40, 100), recovery_cut_p=0.2)
    msgs = sysm.model.violations + sysm.errors
    assert not msgs, "\n".join(msgs[:10]) + f"\n(uart log: {sysm.uart_log})"
    assert cs.cuts == CUTS and cs.oracle_checked > 0
    assert sysm.image_checks >= CUTS + 1
    fw = cs.fw
    assert (fw.get("grown_bad"), fw.get("program_fail")) == (0, 0), fw
    # one more power-on: the recovered bad-block table (console, IDENTIFY) is still exactly them, and
    # IDENTIFY word 14 / GET_LOG 15 still count them as factory bad (recounted by their marks; they
    # read 0 after a recovery before)
    assert sysm.start()
    fw_bad = bbt(sysm)
    idn, lg = sysm.dev.identify(), sysm.dev.get_log()
    sysm.stop()
    assert fw_bad == truth and idn["bad_blocks"] == len(truth), (fw_bad, idn)
    assert idn["factory_bad"] == lg["factory_bad"] == len(truth), (idn, lg)
    sysm.oracle()
    assert not sysm.errors, sysm.errors

    # ---- every PROGRAM of every power-on (format, fill, the cycles, the recoveries)
    progs = programs(tmp_path)
    used = {(d, b) for d, b, _ in progs}
    hit = sorted(used & truth)
    print(f"{len(progs)} programs into {len(used)} of {g.ndie * g.blocks - len(truth)} good blocks; "
          f"{cs.cuts} cuts ({cs.cuts_in_recovery} inside recovery), {cs.recoveries} recoveries checked, "
          f"GC runs {fw.get('gc_runs')}, checkpoints {fw.get('checkpoints')}")
    assert not hit, f"programs into factory bad blocks: {hit}"
    assert len(used) >= (g.ndie * g.blocks - len(truth)) * 3 // 4, "the workload reached too few blocks"
