# SPDX-License-Identifier: Apache-2.0
"""Where the NVMe atomic-Write parameters are set (issue 39): the write buffer's `PTXQ` pending
commits (soc/ats_litex.py `AtsConfig.ptxq` -> ats_ssd_core -> ats_wbuf) and the NVMe front end's
`ATX` atomic txids (sim/soc/build.py `nvme_atx` -> ats_soc_nvme_sim_top -> ats_nvme).

- the synthesized configurations (`default`, the ECPIX-5 board's) keep `PTXQ` = 1 and their SoC
  Verilog unchanged (no PTXQ parameter on the core's instance, no `ptxq` in the build digest): the
  board's LUT budget (docs/boards.md) was measured with it;
- the simulated ones (`sim`, `attach`, `b5_*`) run `PTXQ` = 8;
- every configuration's `ATX` leaves the host a txid beside the SWRITE engines' (ats_nvme_cmd's
  elaboration check) and at least 4 on `sim` (test_nvme_power_cut's transactions);
- `AtsConfig.check` refuses a `PTXQ` the core's elaboration check refuses (0, 9, above NUM_TX).
No simulation: plain Python over the configurations (well under a second); needs `make gen`."""
from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "soc"))
from ats_litex import CONFIGS, AtsConfig  # noqa: E402


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _board_configs() -> list[AtsConfig]:
    src = (ROOT / "soc" / "boards" / "ecpix5.py").read_text()
    # the board module imports LiteX's board support; read its AtsConfig(...) literals instead
    # the module's integer constants (e.g. qdepth=UDP_SLOTS) by their values; any other name fails
    consts = {m.group(1): eval(m.group(2), {}, {})    # noqa: S307 (our file)
              for m in re.finditer(r"^([A-Z][A-Z0-9_]*) = ([0-9_x<>() ]+?)\s*(?:#.*)?$", src, re.M)}
    cfgs = []
    for m in re.finditer(r"^(\w+) = AtsConfig\((.*?)\)\n", src, re.S | re.M):
        cfgs.append(eval(f"AtsConfig({m.group(2)})", {"__builtins__": {}}, dict(consts, AtsConfig=AtsConfig)))  # noqa: S307
    assert cfgs, "no AtsConfig in soc/boards/ecpix5.py"
    return cfgs


@pytest.fixture(scope="module")
def simbuild():
    if not (ROOT / "build" / "gen" / "remap_mid" / "params.json").exists():
        pytest.skip("run `make gen` first (the remap presets' params.json)")
    return _load(ROOT / "sim" / "soc" / "build.py", "ats_simbuild")


def test_synthesized_keep_ptxq_1():
    for cfg in [CONFIGS["default"], *_board_configs()]:
        assert cfg.ptxq == 1, f"{cfg.name}: PTXQ {cfg.ptxq} (the board's LUT budget is PTXQ 1)"
        assert "ptxq" not in cfg.as_dict(), f"{cfg.name}: ptxq in the build digest"
    src = (ROOT / "rtl" / "core" / "ats_ssd_core.sv").read_text()
    assert re.search(r"parameter int PTXQ\s*=\s*1,", src), "the core's PTXQ default is not 1"


def test_simulated_ptxq_atx(simbuild):
    for name, cfg in CONFIGS.items():
        if name == "default":
            continue
        assert cfg.ptxq == 8, f"{name}: PTXQ {cfg.ptxq}"
        cfg.check()
        ntx = cfg.remap()["NUM_TX"]
        atx = simbuild.nvme_atx(ntx)
        assert 1 <= atx <= 8 and ntx - atx - simbuild.NVME_STX >= 1, (name, ntx, atx)
    assert simbuild.nvme_atx(CONFIGS["sim"].remap()["NUM_TX"]) == 2
    assert CONFIGS["sim"].remap()["NUM_TX"] - 2 - simbuild.NVME_STX >= 4
    assert simbuild.nvme_atx(CONFIGS["b5_256"].remap()["NUM_TX"]) == 8


@pytest.mark.parametrize("ptxq", [0, 9, "num_tx+1"])
def test_check_refuses_ptxq(simbuild, ptxq):   # (simbuild: check() reads the preset's params.json)
    cfg = CONFIGS["sim"]
    if ptxq == "num_tx+1":                          # the tiny preset's NUM_TX 4: PTXQ 5 is refused
        cfg = dataclasses.replace(cfg, remap_preset="tiny", num_lbas=32, blocks=4, pages_per_block=4)
        ptxq = cfg.remap()["NUM_TX"] + 1
        assert ptxq <= 8
    with pytest.raises(ValueError, match="ptxq"):
        dataclasses.replace(cfg, ptxq=ptxq).check()

