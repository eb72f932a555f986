#!/usr/bin/env python3
"""Benchmark B1 / `make demo` / `make wave-remap`: commit-remap latency read from the waveform.

Runs the commit scenario (scenario_remap_commit.py) on a generated configuration with FST tracing,
then reads the FST itself (not the testbench's counters): for every COMMIT it finds the cycle the
request was accepted (s_req_valid & s_req_ready & op == COMMIT) and the cycle its response appears
(m_rsp_valid with the same tag); likewise for TX_LOOKUP. Cycles are converted to ns at the
synthesized Fmax (build/synth/remap/report.json) when one is available.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))

TXSSD_FIRMWARE_REMAP_US = 2474.0   # TxSSD (IEEE Access 2019), firmware remap function per commit
TXSSD_FLUSH_US = 30.0               # the same device's FLUSH with supercapacitor


def run_scenario(preset: str, sizes: list[int], fst: Path) -> None:
    from atstb.runner import load_sources, run
    gen = ROOT / "build" / "gen" / f"remap_{preset}"
    run(toplevel="ats_remap_engine", sources=load_sources(gen),
        test_module="scenario_remap_commit", test_dir=Path(__file__).parent, build_key=preset,
        extra_env={"ATS_GEN_DIR": str(gen), "ATS_COMMIT_SIZES": ",".join(map(str, sizes))},
        waves=str(fst), public={})   # the scenario reads only the top's signals (the FST has them all)


class Trace:
    """Port values of the engine sampled at each rising clock edge, read from an FST."""

    PORTS = ("s_req_valid", "s_req_ready", "s_req_op", "s_req_tag", "m_rsp_valid", "m_rsp_ready", "m_rsp_tag",
             "m_rsp_count", "commit_active")

    def __init__(self, fst: Path):
        import pywellen
        w = pywellen.Waveform(str(fst))
        tv = {}
        self.widths = {}
        self.names = set()                       # every variable, scope.leaf
        for var in w.all_vars():
            self.names.add(var.full_name)
            scope, _, leaf = var.full_name.rpartition(".")
            if scope == "ats_remap_engine":
                self.widths[leaf] = var.bitwidth
                if leaf in self.PORTS or leaf == "clk":
                    tv[leaf] = var.tv
        missing = [p for p in self.PORTS + ("clk",) if p not in tv]
        if missing:
            raise SystemExit(f"{fst}: signals missing from the waveform: {missing}")
        self.edges = [t for (t, v), (_, prev) in zip(tv["clk"][1:], tv["clk"]) if v == 1 and prev == 0]
        self.period_ps = self.edges[1] - self.edges[0]
        # value during the cycle that ends at each edge = the last change strictly before the edge
        self.at = {}
        for port in self.PORTS:
            changes = tv[port]
            vals, j, cur = [], 0, 0
            for t in self.edges:
                while j < len(changes) and changes[j][0] < t:
                    cur = changes[j][1]
                    j += 1
                vals.append(int(cur) if cur is not None else 0)
            self.at[port] = vals

    def handshakes(self, prefix: str) -> list[int]:
        v, r = self.at[f"{prefix}_valid"], self.at[f"{prefix}_ready"]
        return [i for i in range(len(self.edges)) if v[i] and r[i]]

    def latencies(self, op: int) -> list[dict]:
        """Every request of `op`: the accepting edge, and the first edge presenting its response."""
        out = []
        rsp_edges = [i for i in range(len(self.edges)) if self.at["m_rsp_valid"][i]]
        for i in self.handshakes("s_req"):
            if self.at["s_req_op"][i] != op:
                continue
            tag = self.at["s_req_tag"][i]
            j = next(k for k in rsp_edges if k > i and self.at["m_rsp_tag"][k] == tag)
            out.append({"accept_edge": i, "rsp_edge": j, "cycles": j - i, "count": self.at["m_rsp_count"][j],
                        "t_accept_ps": self.edges[i], "t_rsp_ps": self.edges[j]})
        return out


def fmax_from_synth() -> float | None:
    rpt = ROOT / "build" / "synth" / "remap" / "report.json"
    if rpt.exists():
        f = json.loads(rpt.read_text()).get("fmax_mhz")
        return float(f) if f else None
    return None


# GTKWave save-file geometry. GTKWave shows 2^(-zoom) / 200 time units per pixel of the wave pane
# (its zoom is per "frame" of 200 pixels), and the pane is the window width minus the SST and
# signal-name panes and a few pixels of frame.
GTKW_SIZE = (1600, 900)
GTKW_SST_W, GTKW_SIGNALS_W = 200, 360
GTKW_FRAME_PX = 100                # borders, scroll bar, paned handles (measured: the pane is ~940 px)
GTKW_PX_PER_FRAME = 200.0


def gtkw_wave_px() -> int:
    return GTKW_SIZE[0] - GTKW_SST_W - GTKW_SIGNALS_W - GTKW_FRAME_PX


# Groups in the order a reader follows the commit; the first five fit a 900-pixel window at once.
GTKW_GROUPS = [
    ("Request", ["s_req_valid", "s_req_ready", "s_req_op", "s_req_tag", "s_req_txid"]),
    ("Response", ["m_rsp_valid", "m_rsp_ready", "m_rsp_tag", "m_rsp_status", "m_rsp_count"]),
    ("Commit walk", ["commit_active", "core_wPhase", "core_wIdx", "core_ovActive"]),
    ("Mapping-table writes", ["core_mapWr_en_0", "core_mapWr_addr", "core_mapWr_data_ppn"]),
    ("Events", ["m_map_valid", "m_map_lpn", "m_map_last", "m_inval_valid", "m_inval_ppn"]),
    ("Index writes (CLEAR frees the slots)", ["core_idxWr_en_0", "core_idxWr_addr", "core_idxWr_data_valid",
                                              "core_deadPending"]),
]


def write_gtkw(path: Path, fst: Path, start_ps: int, end_ps: int, widths: dict[str, int]) -> None:
    """GTKWave save file: the commit's signals in groups, markers A (accepted) and B (response),
    zoomed so that the whole commit fills the wave pane with a margin on both sides."""
    e = "ats_remap_engine."
    rel = fst.relative_to(ROOT) if fst.is_relative_to(ROOT) else fst
    span = max(end_ps - start_ps, 1)
    view = span * 1.3                                   # 10 % before A, 20 % after B
    zoom = -math.log2(view * GTKW_PX_PER_FRAME / gtkw_wave_px())   # 2^-zoom / 200 = view / pane
    lines = [
        "[*] atomssd remap engine: commit-remap latency. Written by bench/remap/bench_remap.py.",
        f"[*] Marker A = COMMIT accepted (s_req handshake), marker B = its response on m_rsp.",
        f"[*] Open from the repository root: gtkwave {rel} <this file>",
        f'[dumpfile] "{rel}"',
    ] + gtkw_view_lines(zoom, [start_ps, end_ps], max(start_ps - span // 10, 0), GTKW_GROUPS, widths, e)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def gtkw_view_lines(zoom: float, markers: list[int], timestart: int, groups, widths: dict[str, int],
                    prefix: str = "", clk: str | None = None) -> list[str]:
    """The part of a GTKWave save file after its comments and [dumpfile]: window size, zoom and
    markers (A, B, ... = `markers`, the rest unset), [timestart], pane widths, the clock (`clk`, default
    `prefix`clk), then each
    (title, signals) group of `groups`; a signal is `prefix` + its name, `widths[name]` bits wide
    (1 if absent). Shared by bench/remap and bench/core."""
    lines = [
        f"[size] {GTKW_SIZE[0]} {GTKW_SIZE[1]}",
        "[pos] -1 -1",
        "*" + f"{zoom:.6f} {markers[0]} " + " ".join(str(m) for m in list(markers) + [-1] * (26 - len(markers))),
        f"[timestart] {timestart}",
        f"[sst_width] {GTKW_SST_W}",
        f"[signals_width] {GTKW_SIGNALS_W}",
        "[sst_expanded] 1",
        "[sst_vpaned_height] 250",
        "@28",
        clk if clk is not None else prefix + "clk",
    ]
    for title, sigs in groups:
        lines += ["@800200", f"-{title}"]
        for s in sigs:
            w = widths.get(s, 1)
            lines += ["@28", prefix + s] if w == 1 else ["@22", f"{prefix}{s}[{w - 1}:0]"]
        lines += ["@1000200", f"-{title}"]
    return lines


def check_gtkw(path: Path, fst_vars: set[str]) -> list[str]:
    """What a user opening `path` would miss, computed from the save file alone: both markers
    inside the visible window ([timestart], zoom, window size), every group holding signals, every
    signal present in the FST (`fst_vars`: full names, scope.leaf). Returns the problems."""
    import re
    probs = []
    txt = path.read_text().splitlines()
    zl = [l for l in txt if l.startswith("*") and not l.startswith("[*]")]
    ts = [l for l in txt if l.startswith("[timestart]")]
    sz = [l for l in txt if l.startswith("[size]")]
    widths = {k: [l for l in txt if l.startswith(f"[{k}]")] for k in ("sst_width", "signals_width")}
    if not (zl and ts and sz and all(widths.values())):
        return [f"{path}: zoom line, [timestart], [size], [sst_width] or [signals_width] missing"]
    f = zl[0][1:].split()
    zoom, markers = float(f[0]), [int(x) for x in f[2:] if int(x) >= 0]
    t0 = int(ts[0].split()[1])
    pane = int(sz[0].split()[1]) - int(widths["sst_width"][0].split()[1]) \
        - int(widths["signals_width"][0].split()[1]) - GTKW_FRAME_PX
    t1 = t0 + pane * 2.0 ** (-zoom) / GTKW_PX_PER_FRAME
    if len(markers) < 2:
        probs.append(f"{path}: markers A and B not set ({zl[0][:60]})")
    for name, m in zip("AB", markers):
        if not (t0 < m < t1):
            probs.append(f"{path}: marker {name} at {m} outside the visible window [{t0}, {t1:.0f}]")
    if len(markers) >= 2 and (markers[1] - markers[0]) < 0.3 * (t1 - t0):
        probs.append(f"{path}: the commit A..B fills only {(markers[1] - markers[0]) / (t1 - t0):.0%} of the window")
    group, members = None, 0
    for l in txt:
        if l.startswith("-") and group is None:
            group, members = l[1:], 0
        elif l.startswith("-") and l[1:] == group:
            if members == 0:
                probs.append(f"{path}: group '{group}' is empty")
            group = None
        elif l and not l[0] in "[*@-":
            name = re.sub(r"\[\d+:\d+\]$", "", l)
            if name not in fst_vars:
                probs.append(f"{path}: signal {name} is not in the waveform")
            elif group is not None:
                members += 1
    return probs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--sizes", default="1,8,64,512,1024,4096")
    ap.add_argument("--fst", default=None)
    ap.add_argument("--json", default=None, help="write the machine-readable result here")
    ap.add_argument("--gtkw", default=None, help="write a GTKWave save file marking the largest commit")
    ap.add_argument("--check-gtkw", default=None, help="committed save file that should match --gtkw")
    ap.add_argument("--no-run", action="store_true", help="analyse an existing FST")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    fst = Path(args.fst or ROOT / "build" / "waves" / f"remap_commit_{args.preset}.fst").resolve()
    if not args.no_run:
        run_scenario(args.preset, sizes, fst)
    params = json.loads((ROOT / "build" / "gen" / f"remap_{args.preset}" / "params.json").read_text())
    tr = Trace(fst)
    commits = tr.latencies(params["ops"]["COMMIT"])
    lookups = tr.latencies(params["ops"]["TX_LOOKUP"])
    # the scenario's rounds, then one more commit (concurrency phase) and a LOOKUP burst
    if [c["count"] for c in commits[:len(sizes)]] != sizes or len(commits) != len(sizes) + 1:
        raise SystemExit(f"commits in the waveform {[c['count'] for c in commits]} != scenario {sizes} + 1")
    conc = commits.pop()
    active = [i for i in range(conc["accept_edge"], conc["rsp_edge"] + 1) if tr.at["commit_active"][i]]
    acc = set(tr.handshakes("s_req"))
    during = sum(1 for i in active if i in acc)
    lk_edges = [i for i in sorted(acc) if i > conc["rsp_edge"] and tr.at["s_req_op"][i] == params["ops"]["LOOKUP"]]
    lk_burst = lk_edges[-128:]
    lookup_rate = len(lk_burst) / (lk_burst[-1] - lk_burst[0] + 1)
    # TX_LOOKUPs of round k were issued against a table holding sizes[k] entries
    lookups = lookups[:3 * len(sizes)]            # the rounds' probes (3 per round)
    per = 3
    lk_by_n = [max(l["cycles"] for l in lookups[k * per:(k + 1) * per]) for k in range(len(sizes))]
    fmax = fmax_from_synth()
    clock_mhz = fmax or 1e6 / tr.period_ps
    clock_src = f"synthesized Fmax {fmax:.1f} MHz" if fmax else f"simulation clock {clock_mhz:.0f} MHz (no synthesis report yet: make synth)"
    ns = [c["cycles"] * 1000.0 / clock_mhz for c in commits]

    print()
    print(f"B1 commit-remap latency, read from {fst.relative_to(ROOT) if fst.is_relative_to(ROOT) else fst}")
    print(f"   preset '{args.preset}', times at the {clock_src}")
    hdr = f"{'entries':>8} {'cycles':>8} {'bound N+16':>10} {'ns':>10} {'us':>9} {'TxSSD fw us':>12} {'speed-up':>9}"
    print(hdr)
    print("-" * len(hdr))
    for n, c, t in zip(sizes, commits, ns):
        print(f"{n:>8} {c['cycles']:>8} {n + 16:>10} {t:>10.1f} {t / 1000:>9.3f} {TXSSD_FIRMWARE_REMAP_US:>12.0f} "
              f"{TXSSD_FIRMWARE_REMAP_US * 1000 / t:>8.0f}x")
    print(f"   limit: one entry a cycle (N cycles); TxSSD firmware remap {TXSSD_FIRMWARE_REMAP_US:.0f} us per commit, "
          f"its FLUSH {TXSSD_FLUSH_US:.0f} us")
    print(f"TX_LOOKUP latency (accept -> response), worst case per table size: "
          + ", ".join(f"N={n}: {l}" for n, l in zip(sizes, lk_by_n)) + " cycles")
    print(f"during a {conc['count']}-entry commit ({len(active)} cycles of commit_active), the engine accepted "
          f"{during} other requests (LOOKUP / TX_WRITE / TX_LOOKUP of another tx): {during / len(active):.2f} per cycle")
    print(f"LOOKUP throughput, 128 back-to-back: {lookup_rate:.2f} per cycle (limit 1.00)")
    over = [c["cycles"] - n for n, c in zip(sizes, commits)]
    ok = all(o <= 16 for o in over)
    print(f"bound check: commit cycles - N = {sorted(set(over))} -> {'within' if ok else 'VIOLATES'} N + 16")
    result = {"entries": sizes, "commit_cycles": [c["cycles"] for c in commits], "tx_lookup_cycles": max(lk_by_n),
              "tx_lookup_cycles_by_entries": lk_by_n, "lookups_per_cycle": round(lookup_rate, 3),
              "accepted_per_cycle_during_commit": round(during / len(active), 3), "commit_ns": [round(x, 2) for x in ns],
              "fmax_mhz": fmax, "clock_mhz_used": clock_mhz, "preset": args.preset,
              "txssd_firmware_remap_us": TXSSD_FIRMWARE_REMAP_US, "fst": str(fst)}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.gtkw:
        big = max(commits, key=lambda c: c["count"])
        write_gtkw(Path(args.gtkw), fst, big["t_accept_ps"], big["t_rsp_ps"], tr.widths)
        print(f"waveform: {fst}\n  open it: gtkwave {fst} {args.gtkw}  (markers A/B = commit of {big['count']} entries)")
        probs = check_gtkw(Path(args.gtkw), tr.names)
        if probs:
            raise SystemExit("save file check failed:\n  " + "\n  ".join(probs))
        if args.check_gtkw:
            committed = Path(args.check_gtkw)
            if committed.exists() and committed.read_text() == Path(args.gtkw).read_text():
                print(f"  {committed} (committed save file) matches this run: gtkwave {fst.relative_to(ROOT)} {committed}")
            else:
                print(f"  NOTE: {committed} differs from this run's save file (markers moved?); "
                      f"copy {args.gtkw} over it if the change is intended")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
