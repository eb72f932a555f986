#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Worst register-to-register paths of one clock from a placed (not routed) nextpnr-ecp5 design.

nextpnr-ecp5 0.11.1 prints only the Fmax estimate after placement: its critical-path report runs
after routing (router1's end, common/route/router1.cc), and `--no-route --report` writes an empty
timing section (the placer's timing_analysis does not keep its result). Its SDF writer
(`--no-route --sdf FILE`) does write every arc's delay: cell delays, clock-to-Q, setup, and for
each unrouted net arc `predictArcDelay`, the same estimate the placer's timing analysis uses
(common/kernel/context.cc: getNetinfoRouteDelay; global nets 0). This script reads that SDF and
does the same longest-path analysis for one clock domain (launch and capture on the same clock
driver, as nextpnr does): the worst endpoints, their paths cell by cell, and the failing endpoints
counted by block (the cell name's first hierarchy levels).

  python soc/boards/breakdown/sta_sdf.py build/boards/pnr_e12/placed.sdf --period-ns 13.332 \
      [--clock-driver SUBSTRING] [--top 10] [--json out.json]

Without --clock-driver the clock is the driver with the most clock-pin loads (the system clock).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict, deque

TUP = re.compile(r"\(([-\d.eE+]*):([-\d.eE+]*):([-\d.eE+]*)\)")
ESC = re.compile(r"\\(.)")


def unesc(s: str) -> str:
    return ESC.sub(r"\1", s)


def split_port(tok: str) -> tuple[str, str]:
    cell, _, port = unesc(tok).rpartition("/")
    return cell, port


def dmax(tup: str) -> float:
    m = TUP.match(tup)
    return max(float(x) for x in m.groups() if x not in ("",))


def parse(path: str):
    ic_from = {}                       # (cell, port) sink -> ((cell, port) driver, ps)
    fanout = defaultdict(list)         # driver -> [(sink, ps)]
    iopath = defaultdict(list)         # cell -> [(from port, to port, ps)]
    checks = []                        # (cell, data port, clock port, setup ps)
    cell = None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("(INTERCONNECT "):
                body = s[len("(INTERCONNECT "):]
                toks = body.split()
                a, b = split_port(toks[0]), split_port(toks[1])
                d = max(dmax(toks[2]), dmax(toks[3]))
                ic_from[b] = (a, d)
                fanout[a].append((b, d))
            elif s.startswith("(INSTANCE "):
                cell = unesc(s[len("(INSTANCE "):-1])
            elif s.startswith("(IOPATH "):
                toks = s[len("(IOPATH "):].split()
                d = max(dmax(toks[2]), dmax(toks[3]))
                iopath[cell].append((unesc(toks[0]), unesc(toks[1]), d))
            elif s.startswith("(SETUPHOLD "):
                m = re.match(r"\(SETUPHOLD \((?:posedge|negedge) (\S+)\) \((posedge|negedge) (\S+)\) (\([^)]*\))", s)
                if m:
                    checks.append((cell, unesc(m.group(1)), unesc(m.group(3)), dmax(m.group(4)), m.group(2)))
    return ic_from, fanout, iopath, checks


def block_of(cell: str, depth: int = 2) -> str:
    """The cell's block: its first `depth` hierarchy levels (a cell's own name, after the last
    level, is Yosys's: the net it drives and the packer's suffixes)."""
    parts = cell.split(".")
    return ".".join(parts[:min(depth, len(parts) - 1)]) if len(parts) > 1 else cell


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdf")
    ap.add_argument("--period-ns", type=float, required=True)
    ap.add_argument("--clock-driver", default=None, help="substring of the clock pins' driver cell name")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", default=None)
    ap.add_argument("--exclude-launch", action="append", default=[],
                    help="cell name of a launching register whose paths are left out (repeatable)")
    a = ap.parse_args()

    ic_from, fanout, iopath, checks = parse(a.sdf)
    clk_ports = {(c, ck) for c, _, ck, _, _ in checks}
    # register outputs: IOPATHs whose from port is a checked clock port of that cell
    drivers = Counter()
    for c, ck in clk_ports:
        drv = ic_from.get((c, ck))
        if drv:
            drivers[drv[0]] += 1
    print("clock-pin drivers (loads):", file=sys.stderr)
    for drv, n in drivers.most_common(8):
        print(f"  {n:6d}  {drv[0]}/{drv[1]}", file=sys.stderr)
    if a.clock_driver:
        clk = next(d for d, _ in drivers.most_common() if a.clock_driver in d[0])
    else:
        clk = drivers.most_common(1)[0][0]
    in_dom = lambda c, ck: (ic_from.get((c, ck)) or ((None, None), 0))[0] == clk

    arr: dict = {}
    pred: dict = {}
    starts = 0
    for c, paths in iopath.items():
        for fp, tp, d in paths:
            if (c, fp) in clk_ports and in_dom(c, fp) and c not in a.exclude_launch:
                node = (c, tp)
                if d > arr.get(node, -1.0):
                    arr[node] = d
                    pred[node] = ((c, fp), "clk->q", d)
                starts += 1
    # combinational iopaths by (cell, in port)
    comb = defaultdict(list)
    for c, paths in iopath.items():
        for fp, tp, d in paths:
            if (c, fp) not in clk_ports:
                comb[(c, fp)].append(((c, tp), d))

    def succ(n):
        for s, d in fanout.get(n, ()):
            yield s, d, "net"
        for s, d in comb.get(n, ()):
            yield s, d, "cell"

    # Kahn's algorithm on the part of the graph reachable from the start points
    indeg = Counter()
    seen = set(arr)
    q = deque(arr)
    while q:
        n = q.popleft()
        for s, _, _ in succ(n):
            indeg[s] += 1
            if s not in seen:
                seen.add(s)
                q.append(s)
    q = deque(n for n in seen if indeg[n] == 0)
    done = 0
    while q:
        n = q.popleft()
        done += 1
        an = arr.get(n)
        for s, d, kind in succ(n):
            if an is not None and an + d > arr.get(s, -1.0):
                arr[s] = an + d
                pred[s] = (n, kind, d)
            indeg[s] -= 1
            if indeg[s] == 0:
                q.append(s)
    loops = len(seen) - done

    period = a.period_ns * 1000.0
    ends, seen_ep = [], set()
    for c, dp, ck, su, edge in checks:           # two checks a data pin (its rising and falling data)
        if (c, dp) in arr and in_dom(c, ck) and (c, dp) not in seen_ep:
            seen_ep.add((c, dp))
            ends.append((arr[(c, dp)] + su, c, dp, su))
    ends.sort(reverse=True)
    worst = ends[0][0] if ends else 0.0
    fail = [e for e in ends if e[0] > period]
    by_block = Counter(block_of(e[1]) for e in fail)

    def launch_of(node):
        while node in pred:
            p, kind, _ = pred[node]
            if kind == "clk->q":
                return p[0]
            node = p
        return None
    by_launch = Counter(launch_of((e[1], e[2])) for e in fail)
    near = [e for e in ends if e[0] > period - 1000.0]          # within 1 ns of the period
    near_by_block = Counter(block_of(e[1]) for e in near)

    def trace(node):
        path = []
        while node in pred:
            p, kind, d = pred[node]
            path.append({"to": f"{node[0]}/{node[1]}", "via": kind, "ps": round(d)})
            if kind == "clk->q":
                path.append({"to": f"{p[0]}/{p[1]}", "via": "launch", "ps": 0})
                break
            node = p
        return list(reversed(path))

    out = {"clock_driver": f"{clk[0]}/{clk[1]}", "clock_loads": drivers[clk], "period_ns": a.period_ns,
           "start_points": starts, "endpoints": len(ends), "loop_nodes_skipped": loops,
           "worst_ns": round(worst / 1000, 3), "fmax_mhz": round(1e6 / worst, 2) if worst else None,
           "failing_endpoints": len(fail), "failing_by_block": by_block.most_common(25),
           "failing_by_launch": by_launch.most_common(10),
           "within_1ns_endpoints": len(near), "within_1ns_by_block": near_by_block.most_common(12), "excluded_launches": a.exclude_launch, "paths": []}
    printed = set()
    for tot, c, dp, su in ends:
        if len(out["paths"]) >= a.top:
            break
        key = block_of(c, 3)
        if key in printed:            # one path per endpoint block, so the top N are not one bus
            continue
        printed.add(key)
        p = trace((c, dp))
        net = sum(x["ps"] for x in p if x["via"] == "net")
        out["paths"].append({"endpoint": f"{c}/{dp}", "delay_ns": round(tot / 1000, 3), "setup_ps": round(su),
                             "routing_ns": round(net / 1000, 3), "logic_levels": sum(x["via"] == "cell" for x in p),
                             "path": p})
    print(json.dumps({k: v for k, v in out.items() if k != "paths"}, indent=1))
    for p in out["paths"]:
        print(f"\n{p['delay_ns']:.3f} ns (routing {p['routing_ns']:.3f}, {p['logic_levels']} cells) -> {p['endpoint']}")
        for x in p["path"]:
            print(f"   {x['via']:7s} {x['ps']:6d}  {x['to']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
