#!/usr/bin/env python3
"""make check BLOCK=<name>: everything `make test` checks about one block, in minutes.

<name> is a synth/blocks.json name (`wbuf`, `remap`, `nvme_arb2`) or a top with or without its
`ats_` prefix (`ram_sdp`, `ats_nvme_arb2`). The steps, each printed with its command and result:
1. lint: tools/lint.sh on the top's .f list (the blocks.json entry's list when the top has none);
2. tests: pytest cocotb_tests/<top>/ (-n JOBS when JOBS > 1);
3. synthesis: synth/run_synth.py --all --check --only <name> (blocks.json entries; not for
   "check": false entries, the device core and the NVMe front end, which `make synth` covers);
4. formal: formal/test_formal.py's proofs and mutants of every proof whose subject (the last rtl/
   file of its [files]) is one of the block's sources (its own proof, the stream blocks inside it).
All steps run; the exit status is 1 if any failed. Usage: tools/check_block.py NAME [--jobs N]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / ".venv" / "bin" / "python"
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb import filelist as F  # noqa: E402


def resolve(name: str) -> dict:
    """The block's blocks.json entry (or None), its top, its .f list (or None), its test folder."""
    blocks = json.loads((ROOT / "synth" / "blocks.json").read_text())
    bare = name.removeprefix("ats_")
    entry = next((b for b in blocks if b["name"] == name), None) or \
        next((b for b in blocks if b["top"] in (name, f"ats_{bare}")), None)
    top = entry["top"] if entry else f"ats_{bare}"
    try:
        own = F.find_filelist(top)
    except F.FileListError:
        own = None
    lst = own or (ROOT / entry["filelist"] if entry and "filelist" in entry else None)
    tests = ROOT / "cocotb_tests" / top
    if entry is None and lst is None and not tests.is_dir():
        names = sorted({b["name"] for b in blocks} | {p.stem.removeprefix("ats_") for p in (ROOT / "rtl").rglob("ats_*.f")})
        raise SystemExit(f"check: unknown block {name!r}; one of: {', '.join(names)}")
    return {"entry": entry, "top": top, "list": lst, "tests": tests if tests.is_dir() else None}


def proof_subject(sby: Path) -> Path | None:
    """The block a proof is about: the last rtl/ file of its [files] (its dependencies come first)."""
    out, inside = None, False
    for line in sby.read_text().splitlines():
        s = line.strip()
        if s.startswith("["):
            inside = s == "[files]"
        elif inside and s and not s.startswith("#"):
            p = (sby.parent / s.split()[-1]).resolve()
            if (ROOT / "rtl") in p.parents:
                out = p
    return out


def formal_items(sources: list[Path]) -> list[str]:
    """Node ids of formal/test_formal.py (proofs and mutants) of the proofs whose subject is one of
    these sources (a block's own proof and those of the stream blocks inside it)."""
    srcs = {s.resolve() for s in sources}
    stems = [sby.stem for sby in sorted((ROOT / "formal").glob("*/*.sby")) if proof_subject(sby) in srcs]
    if not stems:
        return []
    r = subprocess.run([str(PY), "-m", "pytest", "--collect-only", "-q", "formal/test_formal.py"],
                       cwd=ROOT, capture_output=True, text=True)
    ids = [l.strip() for l in r.stdout.splitlines() if "::" in l]
    return [i for i in ids for s in stems if i.split("[", 1)[-1].startswith((f"{s}]", f"{s}-"))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name", nargs="?", help="blocks.json name or top (with or without ats_)")
    ap.add_argument("--jobs", "-j", type=int, default=int(os.environ.get("JOBS", "1")))
    a = ap.parse_args(argv)
    if not a.name:
        ap.error("usage: make check BLOCK=<name> (e.g. nvme_arb2, ram_sdp, wbuf)")
    os.environ["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    b = resolve(a.name)
    entry, top = b["entry"], b["top"]
    print(f"[check] {a.name}: top {top}, list {b['list'].relative_to(ROOT) if b['list'] else '-'}, "
          f"blocks.json {entry['name'] if entry else '-'}, tests {b['tests'].relative_to(ROOT) if b['tests'] else '-'}",
          flush=True)
    steps: list[tuple[str, list[str] | None, str]] = []   # (step, command or None, why not)
    steps.append(("lint", ["bash", "tools/lint.sh", str(b["list"].relative_to(ROOT))] if b["list"] else None,
                  "no .f list"))
    xdist = ["-n", str(a.jobs), "--maxschedchunk", "1"] if a.jobs > 1 else []
    steps.append(("tests", [str(PY), "-m", "pytest", "-q", *xdist, str(b["tests"].relative_to(ROOT))]
                  if b["tests"] else None, f"no cocotb_tests/{top}/"))
    if entry is None:
        steps.append(("synthesis", None, "no synth/blocks.json entry"))
    elif entry.get("check", True) is False:
        steps.append(("synthesis", None, f"\"check\": false in blocks.json (`python synth/run_synth.py "
                      f"--all --check --only {entry['name']}` runs it; make synth places it)"))
    else:
        steps.append(("synthesis", [str(PY), "synth/run_synth.py", "--all", "--check", "--only", entry["name"]], ""))
    sources = F.filelist(b["list"]).sources if b["list"] else []
    items = formal_items(sources)
    steps.append(("formal", [str(PY), "-m", "pytest", "-q", *items] if items else None,
                  "no proof covers its sources"))
    results = []
    for step, cmd, why in steps:
        if cmd is None:
            print(f"[check] {step}: skipped ({why})", flush=True)
            results.append((step, "skipped", 0.0, why))
            continue
        print(f"[check] {step}: {' '.join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in cmd)}",
              flush=True)
        t = time.monotonic()
        rc = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, JOBS=str(a.jobs))).returncode
        results.append((step, "ok" if rc == 0 else f"FAILED (exit {rc})", time.monotonic() - t,
                        " ".join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in cmd)))
    print(f"\n[check] {a.name}: what ran")
    for step, res, dt, what in results:
        print(f"  {step:<10} {res:<18} {dt:7.1f} s  {what}")
    failed = [r for r in results if r[1].startswith("FAILED")]
    print(f"[check] {a.name}: {'FAILED: ' + ', '.join(r[0] for r in failed) if failed else 'all checks passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
