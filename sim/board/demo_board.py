#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make demo BOARD=ecpix5-sim`: the ECPIX-5 board SoC in Verilator (sim/board/README.md): the
bitstream's RTL with only the PHYs replaced boots its firmware from reset (DDR3 initialisation on
LiteDRAM's DRAM model, format of the eight blank emulated dies), answers IDENTIFY through the
simulated Gigabit Ethernet link to the host library's UDP client, and runs random one-page
WRITE / READ / TRIM / FLUSH checked against a dict over a link that drops, duplicates and delays
datagrams. Prints the firmware's console and the client's counts.

    python sim/board/demo_board.py [--n 24] [--seed 1] [--time-div 10] [--blocks 16]

By default the dies' array times are divided by 10 and each die has 16 blocks (the board: 1 and
128), so that the online format of the blank dies is about 4 M cycles rather than 30 M (about 6
CPU minutes at the model's speed, sim/board/README.md "Builds"); --time-div 1 --blocks 0 is the
board's configuration.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "cocotb_tests" / "lib")]

import test_board_soc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=24, help="random commands after IDENTIFY")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time-div", type=int, default=10, help="the dies' ARRAY_TIME_DIV (1: the board's)")
    ap.add_argument("--blocks", type=int, default=16, help="blocks a die (0: the board's 128)")
    a = ap.parse_args()
    os.environ["ATS_BOARD_TIME_DIV"] = str(a.time_div)
    os.environ["ATS_BOARD_BLOCKS"] = str(a.blocks)
    os.environ["ATS_BOARD_MIX_N"] = str(a.n)
    os.environ["ATS_SEED"] = str(a.seed)
    print("[demo] the ECPIX-5 board SoC in Verilator: generate, firmware, build (cached), boot, I/O", flush=True)
    t0 = time.time()
    test_board_soc.test_board_soc("boot")
    out = ROOT / "build" / "sim_board"
    print("---- console (UART) ----")
    print((out / "board_soc_console.txt").read_text().replace("\r", ""))
    r = json.loads((out / "board_soc_boot.json").read_text())
    idn = r["identify"]
    print("---- host (atomssd.udplink over the simulated GbE link) ----")
    print(f"IDENTIFY: {idn['num_chan']} channels x {idn['ways']} ways, {idn['blocks']} blocks x "
          f"{idn['pages_per_block']} pages x {idn['page_bytes']} B, {idn['num_lbas']} LBAs, "
          f"{idn['factory_bad']} factory bad blocks")
    print(f"commands: {r['write']} WRITE, {r['read']} READ, {r['trim']} TRIM, {r['flush']} FLUSH, "
          f"{r['readback']} LBAs read back, all equal to the dict; link: {r['retries']} retries, "
          f"model {r['phy'].get('dropped', 0)} dropped / {r['phy'].get('duplicated', 0)} duplicated datagrams")
    print(f"simulated {r['cycles_total']:,} cycles at 75 MHz ({r['sim_us']:,} us) in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
