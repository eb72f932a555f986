#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make synth-soc`: the whole SoC of the product's default device (4 channels x 2 ways, 4 KiB pages)
through Yosys synth_ecp5 and nextpnr-ecp5 for the LFE5U-85F (out of context, one clock).

  python synth/synth_soc.py [--seed 1] [--threads 1] [--freq 75]

1. soc/atomssd_soc.py --config default --target synth: VexRiscv (standard), ROM 64 KiB holding the
   firmware built for this configuration, SRAM 16 KiB, UART, timer, LiteDRAM (controller, crossbar,
   an L2 cache of --l2-cache bytes: `make synth-soc` uses none) for a 32 MiB SDR SDRAM whose PHY attaches at the DFI port, and the device core with
   the firmware bridge (add_atomssd) -> build/soc/default_synth/.
2. The firmware for that SoC (its own generated headers) -> the ROM's init file, so that Yosys sees
   the real ROM contents (an all-zero ROM would be optimised away).
3. synth/run_synth.py's synth_block: Yosys, then nextpnr at the target frequency; the report goes to
   build/synth/soc/report.json and into build/synth/summary.json as the entry `soc`.
The one clock is the CPU's and the core's: the target is 75 MHz (the CPU side); the core placed
alone reaches 68 MHz (README "Synthesis of the core"), so the SoC's Fmax is reported against both.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "synth"))
import run_synth  # noqa: E402

OUT_SOC = ROOT / "build" / "soc" / "default_synth_soc"


def generate(l2_cache: int) -> list[Path]:
    py = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([py, str(ROOT / "soc" / "atomssd_soc.py"), "--config", "default", "--target", "synth",
                    "--out", str(OUT_SOC), "--l2-cache", str(l2_cache)], check=True, stdout=subprocess.DEVNULL)
    fw = OUT_SOC / "fw"
    subprocess.run(["make", "-s", "-C", str(ROOT / "sw" / "firmware"), f"SOC_DIR={OUT_SOC}", f"OUT={fw}"],
                   check=True)
    size = (fw / "size.txt").read_text().split("\n")[1].split()
    text = int(size[0]) + int(size[1])
    gw = OUT_SOC / "gateware"
    words = (fw / "firmware.init").read_text().split()
    rom_words = 0x10000 // 4
    if len(words) > rom_words:
        raise SystemExit(f"synth-soc: firmware {len(words) * 4} bytes > the 64 KiB ROM")
    (gw / "ats_soc_rom.init").write_text("\n".join(words + ["00000000"] * (rom_words - len(words))) + "\n")
    print(f"[synth-soc] firmware: {text} bytes of code and data in ROM, {size[2]} bytes of .bss in SDRAM")
    v = gw / "ats_soc.v"
    # the memories' init files by absolute path (Yosys runs in the report directory)
    s = v.read_text()
    for f in ("ats_soc_rom.init", "ats_soc_sram.init", "ats_soc_mem.init"):
        s = s.replace(f'$readmemh("{f}"', f'$readmemh("{gw / f}"')
    v.write_text(s)
    srcs = [v] + [Path(p) for p in (gw / "sources.f").read_text().split()]
    return srcs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--freq", type=float, default=75.0, help="target MHz (the CPU side)")
    ap.add_argument("--yosys-only", action="store_true", help="Yosys only (resources, no Fmax)")
    ap.add_argument("--l2-cache", type=int, default=8192, help="LiteDRAM L2 cache bytes (0: none)")
    ap.add_argument("--name", default="soc", help="report name (build/synth/<name>/, summary entry)")
    a = ap.parse_args()
    global OUT_SOC
    OUT_SOC = ROOT / "build" / "soc" / f"default_synth_{a.name}"
    srcs = generate(a.l2_cache)
    mode = "check" if a.yosys_only else "pnr"
    out = run_synth.synth_root(mode) / a.name
    rep = run_synth.synth_block(a.name, "ats_soc", srcs, mode, a.freq, out, a.seed, a.threads, 6, "sys_clk",
                                [ROOT / "rtl" / "common"], [], False, False, [], False, placer="static")
    rep["config"] = "default (4 x 2 dies, 4 KiB pages, 16384 LBAs)"
    rep["l2_cache_bytes"] = a.l2_cache
    rep["core_alone_fmax_mhz"] = 68.42
    (out / "report.json").write_text(json.dumps(rep, indent=2) + "\n")
    root = run_synth.synth_root(mode)
    summ_path = root / "summary.json"
    try:
        summ = json.loads(summ_path.read_text())
    except (OSError, ValueError):
        summ = {"mode": mode, "blocks": []}
    if summ.get("mode") != mode:
        summ = {"mode": mode, "blocks": []}
    summ["blocks"] = run_synth.merge_summary(summ_path, mode, [rep])
    summ_path.write_text(json.dumps(summ, indent=2) + "\n")
    keys = ("lut4", "ff", "dp16kd", "comb_used", "comb_avail", "fmax_mhz", "target_mhz", "yosys_seconds",
            "pnr_seconds")
    print("[synth-soc]", json.dumps({k: rep.get(k) for k in keys}))
    print(f"[synth-soc] {run_synth.rel(out / 'report.json')}, entry 'soc' in {run_synth.rel(summ_path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
