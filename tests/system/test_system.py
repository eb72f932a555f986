# SPDX-License-Identifier: Apache-2.0
"""System tests of the whole SoC (VexRiscv firmware + device core + NAND die models) through the
host port: the power-cut campaign (tests/system/README.md). Seeds are sharded by ATS_SYS_SEEDS
("first-last"); cuts per seed by ATS_SYS_CUTS; `make test` runs 4 seeds x 25 cuts, `make test-long`
50 x 100. Every fourth seed runs with NAND faults, every fifth starts from an aged device (GC)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
_seeds = os.environ.get("ATS_SYS_SEEDS", "1-50" if LONG else "1-4")
SEEDS = list(range(int(_seeds.split("-")[0]), int(_seeds.split("-")[-1]) + 1))
CUTS = int(os.environ.get("ATS_SYS_CUTS", "100" if LONG else "25"))
OUT = harness.ROOT / "build" / "system"


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    return harness.format_template(tmp_path_factory.mktemp("template"))


@pytest.mark.parametrize("seed", SEEDS)
def test_powercut_campaign(template, tmp_path, seed):
    # every fourth seed runs with NAND faults: program and erase failures, bit flips
    faults = "pfail_ppm=20000,efail_ppm=20000,flip_ppb=200000" if seed % 4 == 0 else ""
    sysm = harness.System(tmp_path, seed, faults=faults, template=template)
    aged = seed % 5 == 0
    if aged:
        # every fifth seed starts from an aged device: twice its capacity written over every LBA,
        # so that GC, checkpoints for blocks and write-back holds run between (and under) the cuts
        assert sysm.start()
        lbas = list(range(sysm.model.nlba))
        harness.fill(sysm, 2 * sysm.model.nlba, lbas)
        harness.settle(sysm)
    else:
        lbas = sorted(sysm.rng.sample(range(sysm.model.nlba), 96))
    st = sysm.campaign(CUTS, lbas, mid_ckpt_p=0.3)
    OUT.mkdir(parents=True, exist_ok=True)
    rec = dict(vars(st))
    rec["aged_seeds"] = int(aged)
    (OUT / f"campaign_{seed}.json").write_text(json.dumps(rec, indent=1))
    msgs = sysm.model.violations + sysm.errors
    assert not msgs, "\n".join(msgs[:10]) + f"\n(uart log: {sysm.uart_log})"
    assert st.cuts == CUTS and st.recoveries >= CUTS - st.cuts_in_recovery
    assert st.oracle_checked > 0 and st.lbas_checked > 0
    # every recovery's step-2 reads were compared with scan_reads (harness.System.start), and without
    # NAND faults every mid-cycle checkpoint was written
    assert st.scan_boots >= st.recoveries, (st.scan_boots, st.recoveries)
    assert faults or st.mid_ckpts_ok == st.mid_ckpts, (st.mid_ckpts_ok, st.mid_ckpts)
