# SPDX-License-Identifier: Apache-2.0
"""The register map's one source: docs/registers.md is the generated document of the sim
configuration (`make regs`), the Python constants agree with csr.json, and the firmware header
defines every register of the document."""
import importlib.util
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402

ROOT = harness.ROOT


def test_registers_doc_current():
    harness.build("sim")
    gen = (ROOT / "build/soc/sim/registers.md").read_text()
    doc = (ROOT / "docs/registers.md").read_text()
    assert doc == gen, "docs/registers.md is stale: run `make regs`"


def test_constants_match_csr_json_and_header():
    harness.build("sim")
    out = ROOT / "build/soc/sim"
    spec = importlib.util.spec_from_file_location("ats_regs", out / "ats_regs.py")
    regs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regs)
    j = json.loads((out / "csr.json").read_text())
    hdr = (out / "software/include/generated/csr.h").read_text()
    assert regs.CSR_BASE == j["csr_bases"]["ats"] == 0xF0008000     # pinned location
    for name, r in regs.REGS.items():
        assert j["csr_registers"][f"ats_{name}"]["addr"] == r["addr"]
        assert re.search(rf"#define CSR_ATS_{name.upper()}_ADDR \(CSR_BASE \+ {r['addr'] - 0xF0000000:#x}L\)", hdr), name
        for f, (off, size) in r["fields"].items():
            assert f"#define CSR_ATS_{name.upper()}_{f.upper()}_OFFSET {off}" in hdr
            assert f"#define CSR_ATS_{name.upper()}_{f.upper()}_SIZE {size}" in hdr
    assert len(regs.REGS) >= 30
