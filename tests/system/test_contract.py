"""The host command contract has one source, rtl/common/ats_host_pkg.sv (issue 36 item 3): every
other copy of its numbers must agree with it. Pure Python, no simulator, a second.

Compared with the package (parsed by tools/contract.py):
- the Python copies: the independent reference models (cocotb_tests/lib/atstb), the host library
  (sw/host/atomssd), test benches and bench hosts that write the numbers themselves. The models stay
  independent in behaviour; only their numbers must be the contract's. Each file is read with `ast`
  (nothing is imported): module-level constants `A, B = 1, 2`, `A, B = range(n)`, `D = dict(K=v)`;
- docs/architecture.md §1 (field widths, opcode table, flags, attributes) and §2 (completion widths,
  status table, the rejection mark), the cmdq README's rejection table, and every `NAME (0xNN` /
  `| 0xNN | NAME |` mention of a status code in docs/*.md;
- the generated C header build/gen/include/ats_host.h (compiled and printed by the C compiler, when
  one is there) and the firmware's own admin opcodes;
- the remap engine's codes (build/gen/remap_default/params.json, from its SpinalHDL source): its
  statuses 0..6 are the first seven device codes (architecture.md §2), BAD_LPN standing for BAD_LBA.
A copy that disagrees, a listed file whose constants are gone (renamed), or a name of the package
that a table misses fails the test with the file and name.
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import contract  # noqa: E402

C = contract.parse()
OPS, STS, FLAGS, ATTRS, REJ, WIDTHS = (C["ops"], C["statuses"], C["flags"], C["attrs"], C["rejects"],
                                       C["widths"])
FEATS = C["features"]                    # FEATURE's device settings (§1.2)
REJ_RESULT = REJ["MARK"] << 24           # a rejection's result: REJ_MARK << 24 | reason
# device statuses an NVMe host sees as SCT 7 / SC = the code (host-interface.md §1.8, ats_nvme_pkg)
NVME_VENDOR = ("BAD_TXID", "TX_FULL", "INDEX_FULL", "TX_EMPTY", "TABLE_FULL")


# ---------------------------------------------------------------------------------- Python copies

def _const(node: ast.AST):
    """The value of a constant expression of the forms the copies use (int, tuple, range, dict)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_const(e) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "range":
            return tuple(range(*[_const(a) for a in node.args]))
        if node.func.id == "dict" and not node.args:
            return {k.arg: _const(k.value) for k in node.keywords}
    if isinstance(node, ast.Dict):
        return {_const_key(k): _const(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.LShift):
        return _const(node.left) << _const(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _const(node.left) | _const(node.right)
    return None


def _const_key(node):
    return node.value if isinstance(node, ast.Constant) else None


def module_constants(path: Path) -> dict:
    """Module-level NAME = value assignments (tuple unpacking included) of a Python file."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        tgt, val = node.targets[0], _const(node.value)
        if val is None:
            continue
        if isinstance(tgt, ast.Name):
            out[tgt.id] = val
        elif isinstance(tgt, ast.Tuple) and isinstance(val, tuple) and len(val) == len(tgt.elts):
            for e, v in zip(tgt.elts, val):
                if isinstance(e, ast.Name):
                    out[e.id] = v
    return out


def expected(kind: str, name: str, form: str = "") -> int | None:
    """The contract's value of `name` in category `kind`, in the copy's form: flags as masks,
    `vendor` statuses as NVMe (SCT 7 << 8) | code, `mark` the rejection result's top byte."""
    table = {"op": OPS, "sts": STS, "flag": FLAGS, "attr": ATTRS, "rej": REJ, "feat": FEATS}[kind]
    if name not in table:
        return None
    v = table[name]
    if kind == "flag" and form != "bit":
        v = 1 << v
    if form == "vendor":          # NVMe vendor specific (SCT 7): the transaction statuses only
        if name not in NVME_VENDOR:
            return None
        v = 0x0700 | v
    return v


# file -> list of (kind, prefix or dict name, form); names after the prefix are the package's,
# `alias` renames a copy's own abbreviations. `dict:X` reads the keys of the dict constant X.
COPIES = {
    "cocotb_tests/lib/atstb/cmdq_model.py": [("op", "", ""), ("attr", "", ""), ("flag", "", ""),
                                             ("sts", "ST_", ""), ("rej", "R_", "")],
    "cocotb_tests/lib/atstb/order_model.py": [("op", "", ""), ("attr", "", ""), ("flag", "", ""),
                                              ("sts", "", "")],
    "cocotb_tests/lib/atstb/wbuf_model.py": [("op", "", ""), ("flag", "", ""), ("sts", "", "")],
    "cocotb_tests/lib/atstb/nvme_ref.py": [("op", "OP_", ""), ("flag", "F_", ""), ("sts", "ST_", ""),
                                           ("feat", "FEAT_", "")],
    "sw/host/atomssd/nvme.py": [("feat", "FID_", "")],
    "cocotb_tests/lib/atstb/media_model.py": [("sts", "ST_", "")],
    "cocotb_tests/ats_backend_slog/slog_unit_ref.py": [("sts", "", "")],
    "cocotb_tests/lib/atstb/sata_core_model.py": [("op", "OP_", "")],
    "cocotb_tests/ats_ssd_core/test_ats_ssd_core.py": [("op", "OP_", ""), ("sts", "", "")],
    "cocotb_tests/ats_sata_core/test_ats_sata_core.py": [("op", "OP_", "")],
    "cocotb_tests/ats_sata_litesata/test_ats_sata_litesata.py": [("op", "OP_", "")],
    "sw/host/atomssd/hostport.py": [("op", "dict:OP", ""), ("sts", "dict:ST", ""), ("flag", "F_", ""),
                                    ("attr", "A_", ""), ("feat", "FEAT_", "")],
    "sw/host/atomssd/txapi.py": [("sts", "ST_", "")],
    "sw/host/tests/test_libatstx.py": [("sts", "", "vendor")],
    "bench/ssd/host.py": [("op", "", ""), ("flag", "", ""), ("attr", "", ""), ("sts", "", "")],
    "bench/sata/ideal_core.py": [("op", "OP_", "")],
}
# a copy's own names for contract entries
ALIASES = {
    "cocotb_tests/ats_ssd_core/test_ats_ssd_core.py": {"OP_DIFF": "DIFFWRITE", "OP_BEGIN": "TX_BEGIN",
                                                       "OP_COMMIT": "TX_COMMIT", "OP_ABORT": "TX_ABORT"},
    "cocotb_tests/ats_sata_core/test_ats_sata_core.py": {"OP_TX_ABORT_DESC": "TX_ABORT"},
}
# whole constants standing for the rejection result's mark (0xCE000000)
REJ_MARKS = {"cocotb_tests/lib/atstb/cmdq_model.py": "REJ_MARK", "cocotb_tests/lib/atstb/order_model.py": "REJ"}


def compare_copy(rel: str, consts: dict) -> tuple[int, list[str]]:
    """(names compared, disagreements) of one Python copy."""
    n, bad = 0, []
    aliases = ALIASES.get(rel, {})
    for kind, prefix, form in COPIES[rel]:
        if prefix.startswith("dict:"):
            items = consts.get(prefix[5:], {})
            items = items.items() if isinstance(items, dict) else []
            where = prefix[5:] + "[{}]"
        else:
            items = [(k[len(prefix):], v) for k, v in consts.items() if k.startswith(prefix)]
            where = prefix + "{}"
        for name, val in items:
            want = expected(kind, name, form)
            if want is None or not isinstance(val, int):
                continue
            n += 1
            if val != want:
                bad.append(f"{rel}: {where.format(name)} = {val:#x}, ats_host_pkg says {want:#x}")
    for alias, name in aliases.items():
        kind = COPIES[rel][0][0]
        if alias in consts:
            n += 1
            if consts[alias] != expected(kind, name):
                bad.append(f"{rel}: {alias} = {consts[alias]:#x}, ats_host_pkg {kind} {name} = "
                           f"{expected(kind, name):#x}")
    if rel in REJ_MARKS:
        n += 1
        if consts.get(REJ_MARKS[rel]) != REJ_RESULT:
            bad.append(f"{rel}: {REJ_MARKS[rel]} = {consts.get(REJ_MARKS[rel])}, want {REJ_RESULT:#x}")
    return n, bad


@pytest.mark.parametrize("rel", sorted(COPIES))
def test_python_copy(rel):
    path = ROOT / rel
    assert path.exists(), f"{rel} is gone: update COPIES in {Path(__file__).name} (where did its numbers go?)"
    n, bad = compare_copy(rel, module_constants(path))
    assert not bad, "\n".join(bad)
    assert n >= 1, f"{rel}: none of the contract's constants found (renamed? update COPIES)"


# ------------------------------------------------------------------------------------------ docs

def _section(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i:text.index(end, i + len(start))]


ARCH = (ROOT / "docs/architecture.md").read_text()
SEC1 = _section(ARCH, "## 1. Command descriptor", "## 2. Completion")
SEC2 = _section(ARCH, "## 2. Completion", "## 3. ")


def test_arch_descriptor_widths():
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+) \|", SEC1, re.M))
    for field in ("op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"):
        assert field in rows, f"architecture.md §1: no row for `{field}`"
        assert int(rows[field]) == WIDTHS[f"{field.upper()}_W"], \
            f"architecture.md §1: `{field}` is {rows[field]} bits, ats_host_pkg {field.upper()}_W = " \
            f"{WIDTHS[field.upper() + '_W']}"
    m = re.search(r"`tag` \((\d+)\), `status` \((\d+)[^)]*\), `result` \((\d+)", SEC2)
    assert m, "architecture.md §2: the completion's `tag` (n), `status` (n …), `result` (n …) line"
    assert tuple(map(int, m.groups())) == (WIDTHS["TAG_W"], WIDTHS["STATUS_W"], WIDTHS["RESULT_W"])


def test_arch_opcode_table():
    rows = re.findall(r"^\| ([A-Z_]+) \| (\d+) \|", SEC1, re.M)
    assert rows, "architecture.md §1: no opcode table"
    doc = {n: int(v) for n, v in rows}
    assert doc == {k: v for k, v in OPS.items() if k != "LAST"}, \
        f"architecture.md §1 opcodes {doc} != ats_host_pkg {OPS}"
    assert OPS["LAST"] == max(doc.values())
    m = re.search(r"^\| (\d+)–(\d+) \| \| reserved: BAD_OP", SEC1, re.M)
    assert m and int(m[1]) == OPS["LAST"] + 1 and int(m[2]) == (1 << WIDTHS["OP_W"]) - 1, \
        "architecture.md §1: the reserved opcode row must be OP_LAST+1 … 2^OP_W−1"


def test_arch_flags_attrs():
    m = re.search(r"^\| `flags` \| \d+ \| (.*) \|$", SEC1, re.M)
    doc = {n: int(b) for b, n in re.findall(r"bit (\d) ([A-Z]+)", m[1])}
    assert doc == {k: v for k, v in FLAGS.items() if k != "RSVD"}, f"architecture.md §1 flags {doc}"
    assert f"bit {FLAGS['RSVD']} reserved" in m[1]
    m = re.search(r"^\| `attr` \| \d+ \| (.*) \|$", SEC1, re.M)
    doc = {n: int(v) for v, n in re.findall(r"(\d) ([A-Z_]+)", m[1])}
    doc["HEAD"] = doc.pop("HEAD_OF_QUEUE")
    assert doc == {k: v for k, v in ATTRS.items() if k != "RSVD"}, f"architecture.md §1 attrs {doc}"
    assert f"{ATTRS['RSVD']} reserved" in m[1]


def test_arch_status_table():
    doc = {n: int(v, 16) for v, n in re.findall(r"^\| 0x([0-9A-Fa-f]{2}) \| ([A-Z_]+) \|", SEC2, re.M)}
    assert doc == STS, f"architecture.md §2 status table {doc} != ats_host_pkg {STS}"
    assert f"0x{REJ_RESULT:08X} | reason" in SEC2, "architecture.md §2: the rejection result 0xCE000000 | reason"


def test_cmdq_readme_rejections():
    rows = re.findall(r"^\| (\d+) \|[^\n]*\| 0x([0-9A-F]{8}) \|$", (ROOT / "rtl/cmdq/README.md").read_text(), re.M)
    assert [int(k) for k, _ in rows] == sorted(v for k, v in REJ.items() if k != "MARK"), \
        "rtl/cmdq/README.md: one row per rejection reason, in order"
    for k, res in rows:
        assert int(res, 16) == REJ_RESULT | int(k), f"rtl/cmdq/README.md reason {k}: result 0x{res}"


# a status code named next to its number anywhere in the docs: `NAME (0xNN`, `NAME** (0xNN`,
# `NAME** (device status 0xNN`, `| 0xNN | NAME |`; and host-interface.md §1.8's vendor row
_MENTION = re.compile(r"\b([A-Z][A-Z_]+)\**\s*\((?:device status )?0x([0-9A-Fa-f]{2})\b")


def test_docs_status_mentions():
    bad, n = [], 0
    for path in sorted((ROOT / "docs").glob("*.md")):
        text = path.read_text()
        for m in _MENTION.finditer(text):
            if m[1] in STS:
                n += 1
                if int(m[2], 16) != STS[m[1]]:
                    bad.append(f"{path.relative_to(ROOT)}: {m[1]} (0x{m[2]}), ats_host_pkg STS_{m[1]} = "
                               f"0x{STS[m[1]]:02X}")
    hi = (ROOT / "docs/host-interface.md").read_text()
    m = re.search(r"^\| ((?:[A-Z_]+, )+[A-Z_]+) \| 7 / the device code \(([^)]*)\) \|", hi, re.M)
    assert m, "host-interface.md §1.8: the vendor-specific row"
    names, codes = m[1].split(", "), [int(c, 16) for c in m[2].split(", ")]
    assert len(names) == len(codes) and set(names) == set(NVME_VENDOR)
    for name, code in zip(names, codes):
        n += 1
        if STS.get(name) != code:
            bad.append(f"docs/host-interface.md §1.8: {name} 0x{code:02X}, ats_host_pkg {STS.get(name)}")
    assert not bad, "\n".join(bad)
    assert n >= 10


# ------------------------------------------------------------------------------- generated C, firmware

def test_generated_header(tmp_path):
    """The header as tools/contract.py writes it, compiled: every macro has the package's value."""
    hdr = tmp_path / "ats_host.h"
    hdr.write_text(contract.host_header(C))
    want = {f"ATS_{k}": v for k, v in WIDTHS.items()}
    want |= {f"ATS_OP_{k}": v for k, v in OPS.items()} | {f"ATS_STS_{k}": v for k, v in STS.items()}
    want |= {f"ATS_FLAG_{k}_BIT": v for k, v in FLAGS.items()} | {f"ATS_FLAG_{k}": 1 << v for k, v in FLAGS.items()}
    want |= {f"ATS_ATTR_{k}": v for k, v in ATTRS.items()} | {f"ATS_REJ_{k}": v for k, v in REJ.items()}
    want |= {f"ATS_TAG_{k}": v for k, v in C["tags"].items()} | {f"ATS_FEAT_{k}": v for k, v in FEATS.items()}
    text = hdr.read_text()
    assert set(re.findall(r"^#define (ATS_\w+) ", text, re.M)) - {"ATS_HOST_H"} == set(want)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:     # without a compiler: the literal values
        got = {n: int(eval(v.replace("u", ""))) for n, v in re.findall(r"^#define (ATS_\w+) (.+)$", text, re.M)
               if n != "ATS_HOST_H"}
    else:
        prog = tmp_path / "p.c"
        prog.write_text('#include <stdio.h>\n#include "ats_host.h"\nint main(void) {\n' +
                        "".join(f'    printf("{n} %lu\\n", (unsigned long)({n}));\n' for n in want) + "    return 0;\n}\n")
        subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-o", str(tmp_path / "p"), str(prog)], check=True)
        out = subprocess.run([str(tmp_path / "p")], check=True, capture_output=True, text=True).stdout
        got = {n: int(v) for n, v in (line.split() for line in out.splitlines())}
    assert got == want
    built = ROOT / "build/gen/include/ats_host.h"
    if built.exists():      # the build tree's copy is current (make gen / the firmware make it)
        assert built.read_text() == text, f"{built} is stale: run `python tools/contract.py` (make gen)"


def test_firmware_admin_opcodes():
    """The firmware's own names for the admin answers' opcodes and the shutdown tag (if it still
    writes them itself)."""
    for path in sorted((ROOT / "sw/firmware").rglob("*.[ch]")):
        text = path.read_text()
        for name, v in re.findall(r"^#define ADM_(IDENTIFY|GET_LOG) (\d+)u?\b", text, re.M):
            assert int(v) == OPS[name], f"{path.relative_to(ROOT)}: ADM_{name} {v}, ats_host_pkg OP_{name} = {OPS[name]}"
        for v in re.findall(r"^#define ADM_SHUT_TAG (0x[0-9A-Fa-f]+|\d+)u?\b", text, re.M):
            assert int(v, 0) == C["tags"]["SHUTDOWN"], f"{path.relative_to(ROOT)}: ADM_SHUT_TAG {v}"


def test_arch_shutdown_tag():
    m = re.search(r"A GET_LOG with tag (0x[0-9A-F]+) first takes a checkpoint", SEC1)
    assert m and int(m[1], 16) == C["tags"]["SHUTDOWN"], "architecture.md §1.1: the shutdown tag"


def test_remap_codes():
    """The remap engine's statuses 0..6 are the first seven device codes (architecture.md §2)."""
    import json
    p = ROOT / "build/gen/remap_default/params.json"
    assert p.exists(), f"{p} is missing: run `make gen` first (make test does)"
    rs = json.loads(p.read_text())["status"]
    for name, v in rs.items():
        assert STS["BAD_LBA" if name == "BAD_LPN" else name] == v, f"remap status {name} = {v}"
    assert "STATUS_W" in WIDTHS and max(rs.values()) < 7


def test_parser_reads_the_package():
    """Every constant of the package is seen by the parser (a constant in another form would be
    left out of the C header and of these comparisons)."""
    text = contract.PKG.read_text()
    n = len(re.findall(r"^\s*localparam\b", text, re.M))
    assert n == sum(len(v) for v in C.values())
    assert STS["OK"] == 0 and OPS["READ"] == 0 and REJ["MARK"] == 0xCE


def test_feature_table():
    """architecture.md §1.2's FID table: the package's FEAT_* (number and name), each once."""
    sec = ARCH.split("### 1.2 Device settings: FEATURE", 1)[1].split("\n## ", 1)[0]
    rows = dict((name, int(fid, 16)) for fid, name in re.findall(r"^\| (0x[0-9A-F]+) \| (\w+) \|", sec, re.M))
    assert rows == FEATS, f"architecture.md §1.2 FIDs {rows}, ats_host_pkg FEAT_* {FEATS}"
