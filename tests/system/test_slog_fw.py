# SPDX-License-Identifier: Apache-2.0
"""The firmware's S-Log recovery on the whole SoC (issue 40; sw/firmware/README.md "S-Log",
docs/persistence.md §10.5): die images written by the reference writer (tests/system/slog_sim.py:
plain writes, TRIMs, transactions, S-Log transactions, MERGE pages, version-3 checkpoints; a power cut
at a random time, the page each die was programming torn, the rest erased) are loaded into the
simulation (the `sim` configuration has slog_sim's geometry) and recovered by the real firmware.
Compared with two plain-Python references:
- the recovery oracle (cocotb_tests/lib/atstb/recovery_oracle.py `recover`, written from §10): the
  fragment lists F (console `slog`: every fragment's log PPN, byte, off, len, record seq) and the
  mapping (its base page of every LPN);
- the writer's own logical state (slog_sim `expected(cut)`, stated on requests, not pages): the
  oracle's base with the oracle's F applied from the log pages in the images equals it, and so does
  every LPN read through the host port: the `sim_slog` configuration's backend (SLOG = 1) merges the
  fragments the firmware loaded into it after its recovery (op 7 SLOAD, sw/firmware/README.md
  "S-Log"). ATS_SLOG_FW_CFG=sim runs the configuration without the S-Log, where a read is the base.
Then a second power cycle without writes: the firmware recovers from the version-3 checkpoint it wrote
(ckpt.c) and must give the same F and reads.

`make test`: one seed, the two most S-Log-heavy of a few random cuts (a record decided after the gap
and F not empty); ATS_LONG=1 (`make test-long`): 6 seeds x 4 cuts, and 3 seeds x 4 cuts on `sim_slog1k`
(items `1k-<seed>`: a 1,024-entry index, 32 FRAG slots, 2 MiB of main RAM; the writer's 24 LPNs
spread over the index, slog_sim.index_spread); ATS_SLOG_FW_SEEDS / _CUTS override (both).
ATS_SLOG_FW_CFG: that configuration only."""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from atomssd.device import DeviceError  # noqa: E402
from atstb.recovery_oracle import DieImage, recover  # noqa: E402

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
CFG = os.environ.get("ATS_SLOG_FW_CFG", "sim_slog")
SEEDS = list(range(int(os.environ.get("ATS_SLOG_FW_SEEDS", "6" if LONG else "1"))))
SEEDS_1K = list(range(int(os.environ.get("ATS_SLOG_FW_SEEDS", "3"))))
# P_PACK: the chance that one of the writer's S-Log operations is a packed group of 2-3 transactions
# (slog_sim.SimDev.slog_group: records sharing log pages and commit points, persistence.md section
# 10.1 / 10.5 step 2), in the `packed-<seed>` items
P_PACK = float(os.environ.get("ATS_SLOG_FW_PACK", "0.5"))
# (configuration, seed, p_pack): CFG (ids: the seed, as before) and CFG packed (ids packed-<seed>);
# with ATS_LONG=1 also `sim_slog1k` (ids 1k-<seed>)
PARAMS = [pytest.param(CFG, s, 0.0, id=f"1k-{s}" if CFG == "sim_slog1k" else str(s)) for s in SEEDS] + \
    [pytest.param(CFG, s, P_PACK, id=f"packed-{s}") for s in SEEDS] + \
    [pytest.param("sim_slog1k", s, 0.0, id=f"1k-{s}") for s in SEEDS_1K if LONG and "ATS_SLOG_FW_CFG" not in os.environ]
CUTS = int(os.environ.get("ATS_SLOG_FW_CUTS", "4" if LONG else "2"))



def oracle_frags(rec) -> dict[int, list[tuple]]:
    return {l: [(f.ppn, f.doff, f.off, f.len, f.seq) for f in fr] for l, fr in rec.frags.items() if fr}


def merged(geo, dies, base: bytes, frags: list[tuple]) -> bytes:
    """base with the fragments applied in order, each from its log page in the images."""
    b = bytearray(base)
    for ppn, doff, off, ln, _ in frags:
        d, blk, pg = geo.unppn(ppn)
        raw = dies[d].row(blk, pg)
        assert raw is not None, f"log page {ppn:#x} erased"
        b[off:off + ln] = raw[doff:doff + ln]
    return bytes(b)


def boot_and_check(sysm, geo, rec, dev, cut, where: str) -> dict:
    assert sysm.start(), f"{where}: boot cut"
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace").split("atomssd firmware")[-1]
    assert "recovery: checkpoint" in boot, f"{where}: no recovery:\n{boot[-2000:]}"
    lpgn, F = harness.fw_frags(harness.console_answer(sysm, "slog"))
    errs = []
    if F != oracle_frags(rec):
        errs.append(f"{where}: F differs:\n fw     {F}\n oracle {oracle_frags(rec)}")
    if lpgn != rec.next_lpgn:
        errs.append(f"{where}: next LPGN fw {lpgn}, oracle {rec.next_lpgn}")
    dies = [DieImage(p, geo) for p in sysm.images]
    exp = dev.expected(cut)
    ofr = oracle_frags(rec)
    hw_merge = bool(sysm.cfg.get("slog"))
    if hw_merge and ofr and "recovery: slog: loaded lpgn" not in boot:
        errs.append(f"{where}: F not empty and no SLOAD line in the boot log")
    for lpn in dev.lpns:
        try:
            got = sysm.dev.read(lpn)
        except DeviceError as e:                          # MEDIA_ERROR: the merge could not name a log page
            errs.append(f"{where}: lpn {lpn}: {e}")
            continue
        ppn = rec.mapping.get(lpn)
        if ppn is None:
            base = bytes(geo.page_bytes)
        else:
            d, blk, pg = geo.unppn(ppn)
            base = rec.dies[d].row(blk, pg)[:geo.page_bytes]
        want = exp.get(lpn)
        have = merged(geo, dies, base, ofr.get(lpn, [])) if (ppn is not None or ofr.get(lpn)) else None
        if have != want:
            errs.append(f"{where}: lpn {lpn}: the oracle's base + F != the writer's state")
        if hw_merge:
            # the hardware's merge: base + F (an unmapped LPN without fragments reads zeros)
            if got != (have if have is not None else base):
                errs.append(f"{where}: lpn {lpn}: the host read != base + F ({len(ofr.get(lpn, []))} fragments, "
                            f"base {ppn})")
        elif got != base:
            errs.append(f"{where}: lpn {lpn}: the host reads another page than the oracle's base {ppn}")
    m = re.search(r"recovery: slog: (\d+) log pages \(\d+ over SLOG_PG, (\d+) read again\).*?commits (\d+), "
                  r"after the gap (\d+).*?merges (\d+)/", boot)
    sysm.stop()
    assert not errs, "\n".join(errs[:8]) + f"\n(uart: {sysm.uart_log})"
    g = [int(x) for x in m.groups()] if m else [0] * 5
    return dict(zip(("log_pages", "read_again", "commits", "after_gap", "merges"), g))


@pytest.mark.parametrize("cfg_name,seed,p_pack", PARAMS)
def test_slog_recovery_on_soc(tmp_path, cfg_name, seed, p_pack):
    sim = harness.slog_sim()
    exe, fw, cfg = harness.build(cfg_name)
    geo = sim.GEO
    assert (cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], cfg["page_bytes"],
            cfg["spare_bytes"]) == (geo.num_chan, geo.ways, geo.blocks, geo.ppb, geo.page_bytes, geo.spare_bytes)
    rng = random.Random(f"slogfw{seed}")
    # an index above 256 entries: the writer's LPNs spread over it (low and high slots, several ways)
    nidx = cfg.get("slog_lpns", 256)
    lpns = sim.index_spread(rng, 24, cfg["num_lbas"], nidx // 4) if nidx > 256 else None
    dev = sim.SimDev(rng, p_slow=0.1, lpns=lpns, p_pack=p_pack)
    dev.random_ops(40)
    cps = [o.commit for o in dev.ops if o.kind == "slog"]
    shared = {c for c in cps if cps.count(c) > 1}
    end = max(r.done for r in dev.reqs) + 1
    # candidate cuts after the last checkpoint; the oracle (cheap) ranks them by what they exercise
    cands = []
    for i, cut in enumerate(rng.sample(range(dev.ckpt_time + 1, end + 1), min(12, end - dev.ckpt_time))):
        d = tmp_path / f"cand{i}"
        d.mkdir()
        paths = dev.images(d, cut, "tail" if i % 2 else "random")
        rec = recover(paths, geo, cfg["num_tx"])
        score = (rec.slog_after_gap > 0) + (rec.merges > 0) + (len(oracle_frags(rec)) > 0) + (rec.slog_commits > 0) + \
            any(rec.checkpoint.seq_base <= c < rec.prefix_end for c in shared)
        cands.append((score, -i, cut, d, rec))
    cands.sort(reverse=True)
    # every other cut with a firmware whose log-page cache holds 2 pages: records read their pages
    # again from the NAND (the path a long S-Log takes)
    small = tmp_path / "fw_cache2"
    r = subprocess.run(["make", "-s", "-C", str(harness.ROOT / "sw/firmware"), f"SOC_DIR={harness.ROOT / 'build/soc' / cfg_name}",
                        f"OUT={small}", "XCFLAGS=-DSLOG_CACHE=2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = {"log_pages": 0, "commits": 0, "after_gap": 0, "merges": 0, "read_again": 0}
    packed = 0                     # recoveries whose prefix holds records sharing a commit point
    for k, (score, _, cut, d, rec) in enumerate(cands[:CUTS]):
        where = f"seed {seed} cut {cut}" + (" (2-page cache)" if k % 2 else "")
        sysm = harness.System(tmp_path / f"run{cut}", seed, cfg_name=cfg_name, template=d)
        if k % 2 and not os.environ.get("ATS_SYS_FW"):
            sysm.fw = small / "firmware.init"
        st = boot_and_check(sysm, geo, rec, dev, cut, where)
        packed += any(rec.checkpoint.seq_base <= c < rec.prefix_end for c in shared)
        seen = {k: seen[k] + st[k] for k in seen}
        if k == 0:
            first = (d, st["log_pages"])
        # again from what the firmware wrote: its version-3 checkpoint (always with the backend's S-Log;
        # with the build without it version 3 while F is not empty, else version 2)
        again = recover(sysm.images, geo, cfg["num_tx"])
        assert again.mapping == rec.mapping and oracle_frags(again) == oracle_frags(rec), where
        boot_and_check(sysm, geo, again, dev, cut, where + " (second boot)")
        shutil.rmtree(sysm.dir, ignore_errors=True)
    print(f"seed {seed}: firmware recoveries' S-Log figures {seen}; replaying records that share a commit point "
          f"(at or above the checkpoint's seq_base): {packed} (the writer's shared commit points: {len(shared)})")
    assert p_pack == 0 or (shared and packed), (len(shared), packed)
    # one log page more than the table keeps: the recovery fails (ATS_E_FULL), it does not drop a
    # record's page and take a committed transaction as partial (sw/firmware/README.md "S-Log")
    d, npg = first
    print(f"seed {seed}: the first cut's log pages {npg}")
    if npg >= 2 and not os.environ.get("ATS_SYS_FW"):
        ovf = tmp_path / "fw_pg"
        r = subprocess.run(["make", "-s", "-C", str(harness.ROOT / "sw/firmware"), f"SOC_DIR={harness.ROOT / 'build/soc' / cfg_name}",
                            f"OUT={ovf}", f"XCFLAGS=-DSLOG_PG={npg - 1}u"], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        sysm = harness.System(tmp_path / "run_pg", seed, cfg_name=cfg_name, template=d)
        sysm.fw = ovf / "firmware.init"
        sysm.boot_limit = 4_000_000
        with pytest.raises(AssertionError, match="did not come up"):
            sysm.start()
        uart = sysm.hp.uart_text()
        sysm.stop()
        assert f"1 log pages over SLOG_PG {npg - 1}" in uart and "recovery failed: -3" in uart \
            and "device not ready" in uart, uart[-1500:]
    # (ATS_SYS_FW: that image runs every cut, not the 2-page-cache build)
    assert seen["log_pages"] and seen["commits"] and (seen["read_again"] or CUTS < 2 or os.environ.get("ATS_SYS_FW")), seen
