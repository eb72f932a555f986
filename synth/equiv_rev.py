#!/usr/bin/env python3
"""Prove that a block's RTL is unchanged in function against a git revision (synth/README.md
"Equivalence against a revision"): Yosys elaborates the block's top from the revision's sources
(gold) and from the working tree's (gate), each as the synthesis check reads it (the block's
file list, defines and include directories from synth/blocks.json, SYNTHESIS defined, so the
synthesis forms), flattens both, maps memories to flip-flops, and proves every output and every
register's next state equal: `equiv_make` (registers matched by name), `equiv_simple -seq N`, then
`equiv_induct -seq N` for what is left; `equiv_status -assert` fails on any cell not proven.

    python synth/equiv_rev.py --block cmdq [--rev HEAD] [--param DEPTH=4] [--swap SRC=FILE]
                              [--seq 2] [--keep DIR]

For a rewrite that keeps every register (its name and width) and changes only how the logic is
written: loops, functions, generate forms. Every submodule is flattened into the top (kept
hierarchies too) and memories become flip-flops. `--param NAME=VALUE` elaborates both with that
top parameter (a smaller instance proves faster; the block's defaults otherwise). A rewrite that renames or retimes registers is not
provable this way (equiv_make cannot pair them). A source not tracked at the revision (a generated
file under build/) is read from the working tree on both sides, and named; none tracked, or an
unknown revision: exit 2. The file list, defines and include directories are today's
(synth/blocks.json and the .f list of the working tree), on both sides: a revision whose list
differs is not elaborated as it was. A block whose sources instantiate ECP5 primitives (the
`ATS_ECP5_BRAM` forms' DP16KD) cannot be compared: the primitives stay cells, which the check
refuses. Exit status: 0 proven, 1 not proven (`equiv_status -assert`), 2 no verdict (usage, an
unknown revision, a Yosys error before the verdict).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_synth  # noqa: E402

REPO = run_synth.REPO


def _export(rev: str, path: Path, dest_root: Path) -> Path | None:
    """The file at `rev` under dest_root (same relative path), or None when the revision does not
    track it (a generated file under build/, a file added since)."""
    try:
        rel = path.resolve().relative_to(REPO)
    except ValueError:
        return None
    r = subprocess.run(["git", "show", f"{rev}:{rel.as_posix()}"], cwd=REPO, capture_output=True)
    if r.returncode != 0:
        return None
    out = dest_root / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(r.stdout)
    return out


def _read(name: str, top: str, sources: list[Path], incs: list[Path], defines: list[str],
          params: list[tuple[str, str]]) -> list[str]:
    rd = ["read_verilog", "-defer", "-sv", *[f"-I{run_synth.tp(d)}" for d in incs], *[f"-D{d}" for d in defines]]
    return [" ".join(rd + [f'"{run_synth.tp(s)}"' for s in sources]),
            *[f"chparam -set {k} {v} {top}" for k, v in params],
            f"hierarchy -check -top {top}",
            # flatten everything, kept hierarchies too (a submodule left as a cell would not be
            # copied into the equivalence design below: its outputs would be undriven there, and
            # every difference behind them unobservable); then no cell may be a module
            "proc", "setattr -mod -unset keep_hierarchy", "flatten", "memory", "opt_clean",
            "select -assert-none t:* t:$* %d",
            f"rename {top} {name}",
            f"design -stash {name}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--block", required=True, help="a name in synth/blocks.json")
    ap.add_argument("--rev", default="HEAD", help="the git revision to compare with (default HEAD)")
    ap.add_argument("--seq", type=int, default=2, help="equiv_simple / equiv_induct depth (default 2)")
    ap.add_argument("--keep", type=Path, help="write the script, log and the revision's files here")
    ap.add_argument("--swap", action="append", default=[], metavar="SOURCE=FILE",
                    help="the gate side reads FILE in place of the block's SOURCE (a path in the repository; "
                         "repeatable): a candidate or a mutant without touching the working tree")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a top parameter for both sides (chparam; repeatable): a smaller instance proves faster")
    a = ap.parse_args(argv)
    blocks = {b["name"]: b for b in run_synth.load_blocks(run_synth.BLOCKS_FILE)}
    if a.block not in blocks:
        print(f"equiv_rev: no block {a.block!r} in {run_synth.rel(run_synth.BLOCKS_FILE)}", file=sys.stderr)
        return 2
    b = blocks[a.block]
    params = [tuple(x.split("=", 1)) for x in a.param]
    swaps = {}
    for x in a.swap:
        src, _, f = x.partition("=")
        if not f:
            print("equiv_rev: --swap wants SOURCE=FILE", file=sys.stderr)
            return 2
        swaps[(REPO / src).resolve()] = Path(f).resolve()
    if any(len(x) != 2 for x in params):
        print("equiv_rev: --param wants NAME=VALUE", file=sys.stderr)
        return 2
    fl = run_synth.block_filelist(b)
    defines = fl.defines + b.get("defines", [])
    incs = fl.incdirs + [REPO / d for d in b.get("include_dirs", [])]
    with tempfile.TemporaryDirectory(prefix="ats_equiv_") as tmp:
        work = a.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        gold_root = work / "gold"
        # the revision must exist: otherwise every source would fall back to the working tree's and
        # the two sides would be one file
        rv = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{a.rev}^{{commit}}"], cwd=REPO,
                            capture_output=True, text=True)
        if rv.returncode != 0:
            print(f"equiv_rev: no revision {a.rev!r} in this repository", file=sys.stderr)
            return 2
        exported = [_export(a.rev, s, gold_root) for s in fl.sources]
        untracked = [run_synth.rel(s) for s, e in zip(fl.sources, exported) if e is None]
        if len(untracked) == len(exported):
            print(f"equiv_rev: none of {a.block}'s sources is tracked at {a.rev}: nothing to compare",
                  file=sys.stderr)
            return 2
        if untracked:
            print(f"equiv_rev: not tracked at {a.rev}, read from the working tree on both sides: "
                  f"{', '.join(untracked)}", file=sys.stderr)
        gold_src = [e or s for s, e in zip(fl.sources, exported)]
        # an include directory's headers at the revision too (each file the revision tracks there)
        gold_incs = []
        for d in incs:
            rel = d.resolve().relative_to(REPO).as_posix()
            ls = subprocess.run(["git", "ls-tree", "-r", "--name-only", a.rev, "--", rel], cwd=REPO,
                                capture_output=True, text=True)
            for f in ls.stdout.split():
                _export(a.rev, REPO / f, gold_root)
            gold_incs.append(gold_root / rel if ls.stdout.strip() else d)
        top = b["top"]
        lines = ["read_verilog -lib -specify +/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v", "design -save cells"]
        lines += _read("gold", top, gold_src, gold_incs, defines, params)
        lines += ["design -load cells"]
        unknown = set(swaps) - {p.resolve() for p in fl.sources}
        if unknown:
            print(f"equiv_rev: --swap names no source of {a.block}: {', '.join(map(str, unknown))}", file=sys.stderr)
            return 2
        gate_src = [swaps.get(p.resolve(), p) for p in fl.sources]
        lines += _read("gate", top, gate_src, incs, defines, params)
        lines += ["design -reset",
                  "design -copy-from gold -as gold gold", "design -copy-from gate -as gate gate",
                  "equiv_make gold gate equiv", "hierarchy -top equiv",
                  f"equiv_simple -seq {a.seq}", f"equiv_induct -seq {a.seq}", "equiv_status -assert"]
        script = work / "equiv.ys"
        script.write_text("\n".join(lines) + "\n")
        log = work / "equiv.log"
        t0 = time.monotonic()
        p = subprocess.run([*run_synth.YOSYS_CMD, "-q", "-l", run_synth.tp(log), "-s", run_synth.tp(script)],
                           cwd=REPO, env=run_synth.tool_env(), capture_output=True, text=True)
        dt = time.monotonic() - t0
        text = log.read_text() if log.exists() else p.stdout + p.stderr
        summary = [l.strip() for l in text.splitlines() if "Of those cells" in l or "unproven" in l.lower()]
        errors = [l.strip() for l in (text + p.stderr).splitlines() if "ERROR" in l]
        refuted = [l for l in errors if "unproven $equiv cells in 'equiv_status -assert'" in l]
        if p.returncode != 0 and refuted:
            print(f"equiv_rev: {a.block} ({top}) against {a.rev}: NOT proven ({dt:.0f} s wall)", file=sys.stderr)
            print("\n".join(summary[-6:] + refuted[:1]), file=sys.stderr)
            return 1
        if p.returncode != 0:
            # not a verdict: Yosys failed before it (a parse error, a parameter the top lacks, or a
            # cell left unflattened: an ECP5 primitive such as DP16KD from an ATS_ECP5_BRAM form)
            print(f"equiv_rev: {a.block} ({top}): Yosys failed before a verdict ({dt:.0f} s wall)", file=sys.stderr)
            print("\n".join(errors[-6:] or [text[-2000:]]), file=sys.stderr)
            return 2
        print(f"equiv_rev: {a.block} ({top}) against {a.rev}: equivalent ({dt:.0f} s wall; "
              f"{summary[-1] if summary else 'equiv_status passed'})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
