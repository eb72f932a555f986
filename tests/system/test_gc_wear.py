# SPDX-License-Identifier: Apache-2.0
"""GC and wear levelling through the whole SoC: write 3x the device's capacity over every LBA, then
read every LBA back (each must hold its latest version); report write amplification and the
erase-count spread (build/system/gc_wear.json). Then power cuts while GC runs, each recovery checked
against the oracle and the invariants."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from test_system import template  # noqa: E402,F401  (the session's formatted device)


def _check_latest(sysm, lbas) -> dict:
    """READ every LBA of `lbas`: each must complete OK with its latest version in the oracle (zeros
    when never written). Returns lba -> that version (None when never written)."""
    shown = {}
    for lba in lbas:
        while not sysm.dev.free_tags:
            sysm.dev.poll(200_000)
        sysm.dev.submit(harness.OP["READ"], lba, 0, lba_check=lba)
    sysm.dev.drain(100_000_000)
    for p in sysm.dev.done:
        lba = p.user["lba_check"]
        latest = sysm.model.vers[lba][-1] if lba in sysm.model.vers else None
        exp = harness.page_bytes_for(lba, latest.version, 0, sysm.model.page_bytes) if latest else bytes(sysm.model.page_bytes)
        assert p.cpl.status == 0 and p.data == exp, f"lba {lba}: status {p.cpl.status:#x}, wrong data after GC"
        shown[lba] = latest
    sysm.dev.done.clear()
    return shown


def test_gc_wear(template, tmp_path):
    sysm = harness.System(tmp_path, 77, template=template)
    assert sysm.start()
    nlba = sysm.model.nlba
    lbas = list(range(nlba))
    st = harness.fill(sysm, 3 * nlba, lbas)
    # every written LBA reads its latest version (the data path under GC)
    shown = _check_latest(sysm, lbas)
    wa = st["nand_programs"] / max(1, st["host_pages"])
    spread = st["erase_max"] - st["erase_min"]
    rec = dict(host_pages=st["host_pages"], nand_programs=st["nand_programs"], write_amplification=round(wa, 3),
               gc_runs=st["gc_runs"], gc_relocs=st["gc_relocs"], gc_erases=st["gc_erases"],
               wl_static=st["wl_static"], erase_min=st["erase_min"], erase_max=st["erase_max"],
               erase_spread=spread, checkpoints=st["checkpoints"], ckpt_pages=st.get("ckpt_pages"), capacity_pages=nlba,
               raw_pages=sysm.geo.ndie * sysm.geo.blocks * sysm.geo.ppb)
    harness.ROOT.joinpath("build/system").mkdir(parents=True, exist_ok=True)
    (harness.ROOT / "build/system/gc_wear.json").write_text(json.dumps(rec, indent=1))
    print("gc_wear:", json.dumps(rec))
    assert st["host_pages"] >= 3 * nlba
    assert st["gc_runs"] > 0 and st["gc_erases"] > 0 and st["gc_relocs"] > 0, "GC never ran"
    assert spread <= 16, f"erase-count spread {spread}"
    # power cuts with GC running: the campaign's checks (oracle + invariants)
    harness.settle(sysm)
    cs = sysm.campaign(6, lbas, cmds=(60, 120), recovery_cut_p=0.2)
    msgs = sysm.model.violations + sysm.errors
    assert not msgs, "\n".join(msgs[:10])
    assert cs.fw.get("gc_runs", 0) > 0


# ---- GC under program failures and grown bad blocks (issue 34 item 2)
LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
BAD_SEEDS = [1, 2, 3, 4] if LONG else [1]


def _fw_view(sysm) -> str:
    return "".join(sysm.console(c, 2_000_000) for c in ("status", "bbt", "stats"))


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_gc_grown_bad(template, tmp_path, seed):
    """Random writes over every LBA with GC running and 1.5 % of programs failing (each failure a
    grown bad block), 3 capacities: the device keeps
    completing writes (before the fix it stopped for good after about two capacities with a few
    grown bad blocks: every plan empty, no erased block, GC copying nothing; `checkpoint failed: -7`),
    every LBA then reads its latest version, and power cuts with GC running under the same faults
    (seeded slice: 8 cuts; 30 under ATS_LONG) recover to the oracle's state with the invariants."""
    sysm = harness.System(tmp_path, seed, faults="pfail_ppm=15000", template=template)
    assert sysm.start()
    nlba = sysm.model.nlba
    lbas = list(range(nlba))
    st = {}
    for rnd in range(3):
        c0 = sysm.hp.cycle
        try:
            st = harness.fill(sysm, nlba, lbas)
        except AssertionError as e:
            raise AssertionError(f"seed {seed}: writes stopped in capacity {rnd + 1}: {e}") from None
        print(f"gc_grown_bad seed {seed} capacity {rnd + 1}: {sysm.hp.cycle - c0} cycles, grown_bad "
              f"{st.get('grown_bad')}, gc_runs {st.get('gc_runs')}, gc_relocs {st.get('gc_relocs')}, "
              f"checkpoints {st.get('checkpoints')}, ckpt_fail {st.get('ckpt_fail')}, no_space {st.get('no_space')}")
        assert not st.get("no_space"), f"seed {seed}: the firmware reports no space:\n{_fw_view(sysm)}"
    assert st.get("grown_bad", 0) >= 3 and st.get("gc_relocs", 0) > 0, st
    assert st.get("ckpt_fail", 0) == 0, f"seed {seed}: checkpoints failed:\n{_fw_view(sysm)}"
    # every LBA holds its latest version (the model's), the data path after GC around bad blocks
    _check_latest(sysm, lbas)
    # power cuts with GC running around grown bad blocks, under the same program failures
    harness.settle(sysm)
    cs = sysm.campaign(30 if LONG else 8, lbas, cmds=(60, 120), recovery_cut_p=0.2)
    msgs = sysm.model.violations + sysm.errors
    assert not msgs, "\n".join(msgs[:10])
    assert cs.oracle_checked > 0
    harness.ROOT.joinpath("build/system").mkdir(parents=True, exist_ok=True)
    rec = dict(vars(cs))
    # summed by summary.py with the campaign's seeds
    rec.update(grown_bad_seeds=1, grown_bad=int(st.get("grown_bad", 0)), fill_gc_runs=int(st.get("gc_runs", 0)),
               fill_gc_relocs=int(st.get("gc_relocs", 0)))
    (harness.ROOT / f"build/system/campaign_gb{seed}.json").write_text(json.dumps(rec, indent=1))
