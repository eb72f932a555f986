# SPDX-License-Identifier: Apache-2.0
"""The .f file lists are the one place a block's sources are written (issue 36 item 7): lint
(tools/lint.sh), the cocotb tests (atstb.runner.block_sources), the synthesis check
(synth/blocks.json "filelist"), the SoC and the benches read them. This checks that they can be
trusted: every RTL file is in a list, every list resolves in compile order, every blocks.json entry
names a list that resolves, and no cocotb test lists by hand an rtl/ file a list already has.
No simulation, no tool: plain Python over the files (a fraction of a second)."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb import filelist as F  # noqa: E402

# rtl/ files that are in no list on purpose, each with its reason (none today: the simulation-only
# pieces, the clock gate and the stream checker, are in the core's and their own lists)
ALLOW_UNLISTED: dict[str, str] = {}

MODULE = re.compile(r"^\s*module\s+(?:automatic\s+|static\s+)?(\w+)", re.M)
PACKAGE = re.compile(r"^\s*package\s+(\w+)\s*;", re.M)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def hand_lists(root: Path = ROOT) -> list[Path]:
    """The hand-written lists lint reads: every .f under rtl/, sim/, bench/."""
    return sorted(p for d in F.SEARCH for p in (root / d).rglob("*.f"))


def _code(path: Path) -> str:
    return COMMENT.sub("", path.read_text(errors="replace"))


def rel(p: Path, root: Path = ROOT) -> str:
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def list_problems(lst: Path, root: Path = ROOT) -> list[str]:
    """One list: it parses, every entry exists, no file twice, packages before their users, and a
    list named after a top (`<top>.f`) declares that module."""
    try:
        fl = F.read_filelist(lst, root)
    except F.FileListError as e:
        return [str(e)]
    out = []
    words = [w for w in F._words(lst) if not w.startswith(("-", "+"))]
    dups = sorted({w for w in words if words.count(w) > 1})
    if dups:
        out.append(f"{rel(lst, root)}: listed twice: {', '.join(dups)} (Verilator: duplicate modules)")
    # a generated file (build/gen/) may be missing only before `make gen` has run
    generated = not (root / "build" / "gen" / ".stamp").exists()
    missing = [rel(s, root) for s in fl.sources if not s.is_file()
               and not (generated and (root / "build" / "gen") in s.parents)]
    if missing:
        return out + [f"{rel(lst, root)}: no such file: {', '.join(missing)}"]
    codes = {s: _code(s) for s in fl.sources if s.is_file()}
    pkg_at = {name: i for i, s in enumerate(fl.sources) for name in PACKAGE.findall(codes.get(s, ""))}
    for i, s in enumerate(fl.sources):
        for name, at in pkg_at.items():
            if at > i and re.search(rf"\b{name}::|\bimport\s+{name}\b", codes.get(s, "")):
                out.append(f"{rel(lst, root)}: {rel(s, root)} uses package {name} listed after it "
                           f"({rel(fl.sources[at], root)}): packages first")
    if lst.name != "sources.f":
        top = lst.stem
        if not any(top in MODULE.findall(c) for c in codes.values()):
            out.append(f"{rel(lst, root)}: no `module {top}` in its files (a list is named after its top)")
    return out


def test_every_list_resolves():
    lists = hand_lists()
    assert len(lists) >= 20, lists
    gen = sorted((ROOT / "build" / "gen").glob("*/sources.f"))
    bad = [p for lst in lists + gen for p in list_problems(lst)]
    assert not bad, "\n".join(bad)


def nesting_problems(root: Path = ROOT) -> list[str]:
    """A list that holds another top's file holds all of that top's list (a file added to a block's
    list must be added to the lists of every top that includes the block: core, SoC, benches)."""
    lists = {lst.stem: lst for lst in hand_lists(root)}
    files = {lst: set(F.read_filelist(lst, root).sources) for lst in lists.values()}
    out = []
    for lst, srcs in files.items():
        for s in sorted(srcs):
            sub = lists.get(s.stem)
            if sub is None or sub == lst or not s.is_file() or s.stem not in MODULE.findall(_code(s)):
                continue
            lack = sorted(rel(x, root) for x in files[sub] - srcs)
            if lack:
                out.append(f"{rel(lst, root)} holds {rel(s, root)} but not the rest of {rel(sub, root)}: "
                           + ", ".join(lack))
    return out


def test_lists_hold_their_blocks_lists():
    bad = nesting_problems()
    assert not bad, "\n".join(bad)


def unlisted(root: Path = ROOT) -> list[str]:
    listed = set()
    for lst in hand_lists(root):
        try:
            listed |= {s.resolve() for s in F.read_filelist(lst, root).sources}
        except F.FileListError:
            pass
    files = sorted(p for ext in ("*.sv", "*.v", "*.svh") for p in (root / "rtl").rglob(ext))
    return [rel(p, root) for p in files if p.resolve() not in listed and rel(p, root) not in ALLOW_UNLISTED]


def test_every_rtl_file_in_a_list():
    left = unlisted()
    assert not left, ("rtl/ files in no .f list (add each to the list of every top that uses it, "
                      "docs/contributing.md \"Add a block\"; or to ALLOW_UNLISTED with the reason): "
                      + ", ".join(left))
    stale = [f for f in ALLOW_UNLISTED if not (ROOT / f).exists()]
    assert not stale, f"ALLOW_UNLISTED names files that are gone: {stale}"


def blocks_problems(root: Path = ROOT) -> list[str]:
    """synth/blocks.json: every entry names its list ("filelist", no hand-written "sources"), the
    list resolves (a generated one once `make gen` has run) and holds the entry's top."""
    out = []
    for b in json.loads((root / "synth" / "blocks.json").read_text()):
        name = b.get("name", "?")
        if "sources" in b:
            out.append(f"blocks.json {name}: \"sources\" written by hand; name the block's .f list in \"filelist\"")
        if "filelist" not in b:
            out.append(f"blocks.json {name}: no \"filelist\"")
            continue
        lst = root / b["filelist"]
        if b["filelist"].startswith("build/gen/"):
            if not re.fullmatch(r"build/gen/\w+/sources\.f", b["filelist"]):
                out.append(f"blocks.json {name}: a generated list is build/gen/<block>_<preset>/sources.f")
            if not lst.is_file():
                continue                     # before `make gen`
        elif lst not in hand_lists(root):
            out.append(f"blocks.json {name}: {b['filelist']} is not a list lint reads (rtl/, sim/, bench/)")
            continue
        probs = list_problems(lst, root)
        out += [f"blocks.json {name}: {p}" for p in probs]
        if not probs:
            srcs = F.read_filelist(lst, root).sources
            if not any(b["top"] in MODULE.findall(_code(s)) for s in srcs if s.is_file()):
                out.append(f"blocks.json {name}: top {b['top']} is in no file of {b['filelist']}")
    return out


def test_blocks_json_lists_resolve():
    bad = blocks_problems()
    assert not bad, "\n".join(bad)


def hand_listed(root: Path = ROOT) -> list[str]:
    """rtl/ sources a cocotb test names as a string although a .f list has them (a test takes its
    block's sources from the lists: block_sources("ats_<top>", ...) plus its own TB files)."""
    listed = set()
    for lst in hand_lists(root):
        try:
            listed |= {rel(s, root) for s in F.read_filelist(lst, root).sources}
        except F.FileListError:
            pass
    out = []
    for t in sorted((root / "cocotb_tests").glob("*/test_*.py")):
        text = t.read_text()
        if "rtl/" not in text:
            continue
        tree = ast.parse(text)
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}   # docstrings, bare strings
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                m = re.fullmatch(r"(rtl/[\w/.-]+\.s?vh?)", node.value.strip())
                if m and m.group(1) in listed:
                    out.append(f"{rel(t, root)}:{node.lineno}: {m.group(1)}")
    return out


def test_no_hand_written_test_sources():
    bad = hand_listed()
    assert not bad, ("cocotb tests that list rtl/ sources by hand (use atstb.runner.block_sources; "
                     "`replace={name: path}` for a mutated copy):\n" + "\n".join(bad))


def test_parser_and_checks(tmp_path):
    """The parser (nested -f, each file once, +incdir+/+define+, replace, a list including itself)
    and the checks above on a small tree: a package after its user, a file listed twice, a missing
    file, a list without its top, an unlisted file, a hand-listed test source are all reported."""
    (tmp_path / "rtl" / "a").mkdir(parents=True)
    (tmp_path / "cocotb_tests" / "ats_b").mkdir(parents=True)
    (tmp_path / "synth").mkdir()
    w = lambda p, t: (tmp_path / p).write_text(t)   # noqa: E731
    w("rtl/a/ats_pkg.sv", "package ats_p; localparam int W = 2; endpackage\n")
    w("rtl/a/ats_b.sv", "module ats_b(input logic [ats_p::W-1:0] x); endmodule\n")
    w("rtl/a/ats_c.sv", "// module ats_x\nmodule ats_c; ats_b u(); endmodule\n")
    w("rtl/a/ats_lone.sv", "module ats_lone; endmodule\n")
    w("rtl/a/ats_b.f", "rtl/a/ats_pkg.sv  // the package first\n# a comment\nrtl/a/ats_b.sv\n")
    w("rtl/a/ats_c.f", "-f rtl/a/ats_b.f\n+define+X=1 +incdir+rtl/a\nrtl/a/ats_pkg.sv\nrtl/a/ats_c.sv\n")
    fl = F.filelist("ats_c", root=tmp_path)
    assert [rel(s, tmp_path) for s in fl.sources] == ["rtl/a/ats_pkg.sv", "rtl/a/ats_b.sv", "rtl/a/ats_c.sv"]
    assert fl.defines == ["X=1"] and fl.incdirs == [tmp_path / "rtl" / "a"]
    assert fl.verilator_args() == ["+incdir+" + str(tmp_path / "rtl" / "a"), "+define+X=1"]
    other = tmp_path / "mut" / "ats_b.sv"
    assert F.block_sources("ats_b", root=tmp_path, replace={"ats_b.sv": other})[1] == other
    for bad in (lambda: F.block_sources("ats_c", root=tmp_path),          # +define+: refused, not dropped
                lambda: F.block_sources("ats_b", root=tmp_path, replace={"nope.sv": other}),
                lambda: F.block_sources("ats_none", root=tmp_path)):
        try:
            bad()
        except F.FileListError:
            continue
        raise AssertionError("no FileListError")
    assert list_problems(tmp_path / "rtl/a/ats_b.f", tmp_path) == []
    assert list_problems(tmp_path / "rtl/a/ats_c.f", tmp_path) == []
    w("rtl/a/ats_b.f", "rtl/a/ats_b.sv\nrtl/a/ats_pkg.sv\nrtl/a/ats_b.sv\nrtl/a/ats_gone.sv\n")
    assert "listed twice" in " ".join(list_problems(tmp_path / "rtl/a/ats_b.f", tmp_path))
    assert "no such file: rtl/a/ats_gone.sv" in " ".join(list_problems(tmp_path / "rtl/a/ats_b.f", tmp_path))
    w("rtl/a/ats_b.f", "rtl/a/ats_b.sv\nrtl/a/ats_pkg.sv\n")
    assert "packages first" in " ".join(list_problems(tmp_path / "rtl/a/ats_b.f", tmp_path))
    w("rtl/a/ats_x.f", "rtl/a/ats_c.sv\n")                         # `module ats_x` only in a comment
    assert "no `module ats_x`" in " ".join(list_problems(tmp_path / "rtl/a/ats_x.f", tmp_path))
    w("rtl/a/ats_y.f", "-f rtl/a/ats_y.f\n")
    assert "includes itself" in " ".join(list_problems(tmp_path / "rtl/a/ats_y.f", tmp_path))
    assert unlisted(tmp_path) == ["rtl/a/ats_lone.sv"]
    w("rtl/a/ats_y.f", "rtl/a/ats_b.sv\nrtl/a/ats_c.sv\n")      # holds ats_b without the package
    assert ("rtl/a/ats_y.f holds rtl/a/ats_b.sv but not the rest of rtl/a/ats_b.f: rtl/a/ats_pkg.sv"
            in nesting_problems(tmp_path))
    w("rtl/a/ats_b.f", "rtl/a/ats_pkg.sv\nrtl/a/ats_b.sv\n")
    w("synth/blocks.json", json.dumps([{"name": "b", "top": "ats_b", "filelist": "rtl/a/ats_b.f"},
                                       {"name": "c", "top": "ats_c", "sources": ["rtl/a/ats_c.sv"]}]))
    assert [p.split(":")[0] for p in blocks_problems(tmp_path)] == ["blocks.json c", "blocks.json c"]
    w("cocotb_tests/ats_b/test_ats_b.py", '"""rtl/a/ats_b.sv"""\nS = [ROOT / "rtl/a/ats_b.sv", "rtl/a/ats_new.sv"]\n')
    assert hand_listed(tmp_path) == ["cocotb_tests/ats_b/test_ats_b.py:2: rtl/a/ats_b.sv"]
