#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which Verilated statements an active cycle pays for (issue 35; bench/sim/README.md "Per
statement"): the self cost of a callgrind dump of icount_sim.py, per source line of the Verilated
C++, grouped by the statement each line belongs to and named by the signal it assigns.

  python bench/sim/lines_sim.py --dump build/bench/sim/icount/run0/dumps/callgrind.out.<pid>.1 \\
      --src build/soc/sim/sim_<name> --cycles 60000 [--fn 'u_soc__2\\('] [--by stmt|line|block] [--top 40]

The simulator must be built with debug information (`CPPFLAGS=-g python sim/soc/build.py --define X`:
-g does not change the code GCC emits at -O2, so the instruction counts are those of the plain
build). --src is the build directory holding the Verilated .cpp files the binary was compiled from.
--fn keeps the functions whose name matches a regular expression (icount_sim.py --top names them;
`..._nba_sequent__TOP__ats_soc_sim_top__u_soc__N` is one clocked block). Groups, Ir per simulated
cycle:
- `stmt`: the signal the statement assigns (the nearest line above that starts an assignment;
  `if:<signal>` when the nearest is a condition, e.g. the delayed-assignment flags `__VdlySet`
  that Verilator tests every cycle for each element of an unpacked array written in a loop);
- `line`: the C++ line with its text;
- `block`: the RTL instance path (two levels below the core) of the first signal on or above the line.
"""
from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

NAME = re.compile(r"(?:__PVT__)?(\w+?__DOT__\w+)")
LHS = re.compile(r"^\s*(?:vlSelfRef\.|vlSymsp->[\w.]+\.)?(?:__PVT__)?(\w+)(?:\[[^=]*\])*\s*=[^=]")
COND = re.compile(r"^\s*(?:if|else if) \(")


def self_cost(dump: Path, fn_pat: str) -> collections.Counter:
    """(file, line) -> self Ir of the functions matching fn_pat (calls' inclusive costs left out)."""
    files: dict[str, str] = {}
    fns: dict[str, str] = {}
    cost: collections.Counter = collections.Counter()
    cur_file = cur_fn = None
    in_call = False
    last = 0
    pat = re.compile(fn_pat)
    for ln in dump.read_text(errors="replace").splitlines():
        m = re.match(r"^(fl|fi|fe)=\((\d+)\)(?: (.*))?", ln)
        if m:
            if m.group(3):
                files[m.group(2)] = m.group(3)
            cur_file = files.get(m.group(2))
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?", ln)
        if m:
            if m.group(3):
                fns[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                cur_fn = fns.get(m.group(2))
            continue
        m = re.match(r"^(cfi|cfl)=\((\d+)\)(?: (.*))?", ln)
        if m:
            if m.group(3):
                files[m.group(2)] = m.group(3)
            continue
        if ln.startswith("calls="):
            in_call = True
            continue
        m = re.match(r"^([+-]?\d+|\*)\s+(\d+)", ln)
        if m:
            p = m.group(1)
            line = last + int(p) if p[0] in "+-" else (last if p == "*" else int(p))
            last = line
            if in_call:                 # the line of a call: its inclusive cost, not this function's
                in_call = False
                continue
            if cur_fn and pat.search(cur_fn):
                cost[(cur_file, line)] += int(m.group(2))
    return cost


def short(name: str) -> str:
    return re.sub(r"^__Vdly\w*?__", "", name).replace("ats_ssd_core__DOT__", "").replace("__DOT__", "/")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--src", required=True, help="build directory of the Verilated C++")
    ap.add_argument("--cycles", type=float, required=True, help="cycles of the dump's slice")
    ap.add_argument("--fn", default=".", help="regular expression on function names")
    ap.add_argument("--by", choices=("stmt", "line", "block"), default="stmt")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    cost = self_cost(Path(a.dump), a.fn)
    src = Path(a.src)
    texts: dict = {}

    def text(f):
        if f not in texts:
            p = src / Path(f).name if f else None
            texts[f] = p.read_text().split("\n") if p and p.exists() else None
        return texts[f]

    groups: collections.Counter = collections.Counter()
    for (f, n), c in cost.items():
        t = text(f)
        if t is None:
            key = f"[{Path(f).name if f else '?'}]"
        elif a.by == "line":
            key = f"{Path(f).name}:{n}  {t[n - 1].strip()[:120] if 0 < n <= len(t) else '?'}"
        else:
            key = "?"
            for j in range(n - 1, max(n - 400, -1), -1):
                s = t[j]
                if a.by == "block":
                    names = [x for x in NAME.findall(s) if not x.startswith("vlSelf")]
                    if names:
                        key = "/".join(short(names[0]).split("/")[:3])
                        break
                    continue
                m = LHS.match(s)
                if m:
                    key = short(m.group(1))
                    break
                if COND.match(s):
                    names = NAME.findall(s)
                    key = "if:" + (short(names[0]) if names else s.strip()[:60])
                    break
        groups[key] += c
    total = sum(cost.values())
    print(f"{total / a.cycles:.1f} Ir/cycle in functions matching {a.fn!r}")
    for k, c in groups.most_common(a.top):
        print(f"{c / a.cycles:9.1f} {100 * c / max(total, 1):5.1f} %  {k}")


if __name__ == "__main__":
    main()
