#!/usr/bin/env python3
"""The host command contract, read from its one source, rtl/common/ats_host_pkg.sv.

    python tools/contract.py [--out DIR]    writes DIR/ats_host.h (default build/gen/include/),
                                            DIR/ats_nvme_sc.h (the NVMe front end's statuses, from
                                            rtl/nvme/ats_nvme_pkg.sv) and, when the SpinalHDL generation has run,
                                            DIR/ats_remap.h from build/gen/remap_default/params.json

`parse()` returns the package's constants by kind (widths, ops, flags, attrs, statuses, rejection
reasons); tests/system/test_contract.py compares them with every other copy. A header is rewritten
only when its text changes (make and the benches' source hashes see no change otherwise).
Standard library only.

Generated names (C, all unsigned): ATS_OP_<name> (opcodes), ATS_STS_<name> (device status codes),
ATS_FLAG_<name> (flag masks) and ATS_FLAG_<name>_BIT (bit indices), ATS_ATTR_<name>, the field
widths ATS_<FIELD>_W, ATS_REJ_MARK and ATS_REJ_<reason> (a command queue rejection's result is
ATS_REJ_MARK << 24 | reason), ATS_TAG_SHUTDOWN, ATS_FEAT_<name> (device features, §1.2); ats_remap.h: ATS_REMAP_OP_<name>, ATS_REMAP_STS_<name> (the remap
engine's request opcodes and response statuses, from the SpinalHDL source through params.json);
ats_nvme_sc.h: ATS_NVME_SC_<name> = (SCT << 8) | SC, every `SC_<name>` of ats_nvme_pkg (the statuses an
NVMe host sees, docs/host-interface.md §1.8, §1.11; `parse_nvme()`).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ATS_HOST_PKG: read another copy of the package (mutation checks of tests/system/test_contract.py)
PKG = Path(os.environ.get("ATS_HOST_PKG") or ROOT / "rtl" / "common" / "ats_host_pkg.sv")
NVME_PKG = ROOT / "rtl" / "nvme" / "ats_nvme_pkg.sv"
REMAP_PARAMS = ROOT / "build" / "gen" / "remap_default" / "params.json"
OUT_DIR = ROOT / "build" / "gen" / "include"

# localparam <type> NAME = <literal>;   (the package writes one constant a line, a literal value)
_LINE = re.compile(r"^\s*localparam\s+(?P<type>int|logic\s*\[[^\]]*\])\s+(?P<name>[A-Z][A-Z0-9_]*)\s*=\s*"
                   r"(?P<val>[^;]+);")
_SIZED = re.compile(r"^(?P<w>\d+)'(?P<b>[dhb])(?P<d>[0-9a-fA-F_]+)$")
_KINDS = (("OP_", "ops"), ("STS_", "statuses"), ("FLAG_", "flags"), ("ATTR_", "attrs"),
          ("REJ_", "rejects"), ("TAG_", "tags"), ("FEAT_", "features"))


def _value(text: str, name: str) -> int:
    text = text.strip()
    m = _SIZED.match(text)
    if m:
        v = int(m["d"].replace("_", ""), {"d": 10, "h": 16, "b": 2}[m["b"]])
        if v >= 1 << int(m["w"]):
            raise ValueError(f"{PKG.name}: {name} = {text} does not fit its width")
        return v
    if re.fullmatch(r"\d+", text):
        return int(text)
    raise ValueError(f"{PKG.name}: {name} = {text}: not a literal (the contract parser reads literals only)")


def parse(path: Path = PKG) -> dict:
    """{'widths': {'OP_W': 4, …}, 'ops': {'READ': 0, …}, 'statuses': {'OK': 0, …},
    'flags': {'FUA': 0, …} (bit indices), 'attrs': {'SIMPLE': 0, …}, 'rejects': {'MARK': 0xCE, …},
    'tags': {'SHUTDOWN': 0xFF}, 'features': {'SEAL_TIME': 0xC0}}
    (names without their prefix, in the package's order)."""
    out: dict[str, dict[str, int]] = {"widths": {}, "ops": {}, "statuses": {}, "flags": {}, "attrs": {},
                                      "rejects": {}, "tags": {}, "features": {}}
    text = path.read_text()
    if "package ats_host_pkg;" not in text:
        raise ValueError(f"{path}: no `package ats_host_pkg;`")
    for line in text.splitlines():
        m = _LINE.match(line.split("//")[0])
        if not m:
            continue
        name, val = m["name"], _value(m["val"], m["name"])
        if name.endswith("_W") and m["type"] == "int":
            out["widths"][name] = val
            continue
        for prefix, kind in _KINDS:
            if name.startswith(prefix):
                out[kind][name[len(prefix):]] = val
                break
        else:
            raise ValueError(f"{path.name}: {name}: no known prefix (OP_, STS_, FLAG_, ATTR_, REJ_, TAG_, FEAT_, *_W)")
    for kind in ("ops", "statuses", "flags", "attrs"):
        if not out[kind]:
            raise ValueError(f"{path.name}: no {kind}")
    return out


def parse_nvme(path: Path = NVME_PKG) -> dict[str, int]:
    """{'OK': 0, 'BAD_OP': 0x001, …, 'BAD_TXID': 0x702, …}: the package's 11-bit {SCT, SC} constants
    `localparam logic [10:0] SC_<name> = 11'h…;` (names without SC_, in the package's order)."""
    out: dict[str, int] = {}
    text = path.read_text()
    if "package ats_nvme_pkg;" not in text:
        raise ValueError(f"{path}: no `package ats_nvme_pkg;`")
    for line in text.splitlines():
        m = _LINE.match(line.split("//")[0])
        if m and m["name"].startswith("SC_") and re.fullmatch(r"logic\s*\[10:0\]", m["type"]):
            out[m["name"][3:]] = _value(m["val"], m["name"])
    if "OK" not in out:
        raise ValueError(f"{path.name}: no SC_OK")
    return out


def nvme_header(sc: dict[str, int]) -> str:
    L = ["/* SPDX-License-Identifier: Apache-2.0",
         " * GENERATED by tools/contract.py from rtl/nvme/ats_nvme_pkg.sv: do not edit, do not commit.",
         " * The NVMe front end's completion statuses, (SCT << 8) | SC (docs/host-interface.md §1.8). */",
         "#ifndef ATS_NVME_SC_H", "#define ATS_NVME_SC_H", ""]
    L += [f"#define ATS_NVME_SC_{n} 0x{v:04X}u" for n, v in sc.items()]
    L += ["", "#endif", ""]
    return "\n".join(L)


def host_header(c: dict) -> str:
    L = ["/* SPDX-License-Identifier: Apache-2.0",
         " * GENERATED by tools/contract.py from rtl/common/ats_host_pkg.sv: do not edit, do not commit.",
         " * The host command contract (docs/architecture.md §1 descriptor and opcodes, §2 status codes). */",
         "#ifndef ATS_HOST_H", "#define ATS_HOST_H", "", "/* descriptor and completion field widths (bits) */"]
    L += [f"#define ATS_{n} {v}u" for n, v in c["widths"].items()]
    L += ["", "/* opcodes (§1) */"]
    L += [f"#define ATS_OP_{n} {v}u" for n, v in c["ops"].items()]
    L += ["", "/* flags (§1): bit indices and masks */"]
    for n, v in c["flags"].items():
        L += [f"#define ATS_FLAG_{n}_BIT {v}u", f"#define ATS_FLAG_{n} (1u << {v})"]
    L += ["", "/* command attributes (§1) */"]
    L += [f"#define ATS_ATTR_{n} {v}u" for n, v in c["attrs"].items()]
    L += ["", "/* device status codes (§2) */"]
    L += [f"#define ATS_STS_{n} 0x{v:02X}u" for n, v in c["statuses"].items()]
    L += ["", "/* command queue rejections (§2): result = ATS_REJ_MARK << 24 | reason */"]
    L += [f"#define ATS_REJ_{n} 0x{v:02X}u" for n, v in c["rejects"].items()]
    L += ["", "/* tags with a meaning (§1.1) */"]
    L += [f"#define ATS_TAG_{n} 0x{v:02X}u" for n, v in c["tags"].items()]
    L += ["", "/* device features: FEATURE's lba (§1.2) */"]
    L += [f"#define ATS_FEAT_{n} 0x{v:02X}u" for n, v in c["features"].items()]
    L += ["", "#endif", ""]
    return "\n".join(L)


def remap_header(params: dict) -> str:
    L = ["/* SPDX-License-Identifier: Apache-2.0",
         " * GENERATED by tools/contract.py from build/gen/remap_default/params.json (the SpinalHDL remap",
         " * engine's RemapOp / RemapStatus, docs/architecture.md §3): do not edit, do not commit. */",
         "#ifndef ATS_REMAP_H", "#define ATS_REMAP_H", "", "/* request opcodes */"]
    L += [f"#define ATS_REMAP_OP_{n} {v}u" for n, v in params["ops"].items()]
    L += ["", "/* response statuses */"]
    L += [f"#define ATS_REMAP_STS_{n} {v}u" for n, v in params["status"].items()]
    L += ["", "#endif", ""]
    return "\n".join(L)


def _write(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return True


def generate(out_dir: Path = OUT_DIR, remap_params: Path = REMAP_PARAMS) -> list[Path]:
    """Write the headers; returns their paths (ats_remap.h only when params.json exists)."""
    paths = [out_dir / "ats_host.h", out_dir / "ats_nvme_sc.h"]
    _write(paths[0], host_header(parse()))
    _write(paths[1], nvme_header(parse_nvme()))
    if remap_params.exists():
        paths.append(out_dir / "ats_remap.h")
        _write(paths[-1], remap_header(json.loads(remap_params.read_text())))
    return paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="output directory (default build/gen/include)")
    ap.add_argument("--remap-params", type=Path, default=REMAP_PARAMS)
    ap.add_argument("--require-remap", action="store_true",
                    help="fail when the remap engine's params.json is missing (run `make gen` first)")
    a = ap.parse_args()
    if a.require_remap and not a.remap_params.exists():
        print(f"contract.py: {a.remap_params} missing: run `make gen` first", file=sys.stderr)
        return 1
    try:
        generate(a.out, a.remap_params)
    except ValueError as e:
        print(f"contract.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
