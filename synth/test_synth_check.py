"""Yosys synthesis check of every block in synth/blocks.json (except those marked "check": false),
one pytest item per block, so that `make test` runs them in the same pytest-xdist pool as the
cocotb suite: the two workers stay busy and no core waits for a serial synthesis step.

Each item is `python synth/run_synth.py --check --all --only <block>`: Yosys `synth_ecp5` for the
LFE5U-85F; it fails on any Yosys error, on latches, on `check -assert` problems and on an empty
design (synth/README.md). Reports go to build/synth/check/<block>/ (never over the place-and-route
figures in build/synth/<block>/).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ats_run_synth", _HERE / "run_synth.py")
run_synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_synth)

BLOCKS = run_synth.check_blocks(run_synth.load_blocks(run_synth.BLOCKS_FILE))


@pytest.mark.parametrize("block", BLOCKS, ids=[b["name"] for b in BLOCKS])
def test_synth_check(block):
    try:
        r = run_synth.run_block(block, "check", verbose=False)
    except run_synth.SynthError as e:
        pytest.fail(f"synthesis check of {block['name']} ({block['top']}): {e}", pytrace=False)
    print(f"[synth] check OK: {r['name']} ({r['top']}): LUT4={r['lut4']} FF={r['ff']} "
          f"DP16KD={r['dp16kd']} yosys {r['yosys_seconds']:.1f} s ({r['yosys_cpu_seconds']:.1f} s CPU)")
