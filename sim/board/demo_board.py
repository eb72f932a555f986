#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make demo BOARD=ecpix5-sim`: the ECPIX-5 board SoC in Verilator (sim/board/README.md): the
bitstream's RTL with only the PHYs replaced boots its firmware from reset (DDR3 initialisation on
LiteDRAM's DRAM model, format of the eight blank emulated dies), answers IDENTIFY through the
simulated Gigabit Ethernet link to the host library's UDP client, and runs random one-page
WRITE / READ / TRIM / FLUSH checked against a dict over a link that drops, duplicates and delays
datagrams; then (unless --no-power-fail) the power-fail scenario: boot and format again, LBAs
written and FLUSHed, a second host rewriting without a FLUSH, the power-fail input falling at a
random cycle while its writes are in flight, the reset, the reboot and recovery, and every LBA read
back and checked with the system tests' invariants checker (INV-LBA, INV-DUR, INV-ATOM, INV-ORDER).
Prints the firmware's console and the client's counts.

    python sim/board/demo_board.py [--n 24] [--seed 1] [--time-div 10] [--blocks 8] [--no-power-fail]

By default the dies' array times are divided by 10 and each die has 8 blocks (the board: 1 and
128; the build of `make test`'s slice, test_board_soc[slice]), so that the online format of the
blank dies reads 64 pages, about 2 M cycles rather than 30 M (sim/board/README.md "Builds");
--time-div 1 --blocks 0 is the board's configuration (about 45 CPU minutes a boot).
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
    ap.add_argument("--blocks", type=int, default=8, help="blocks a die (0: the board's 128)")
    ap.add_argument("--no-power-fail", action="store_true", help="only the boot and the random commands")
    a = ap.parse_args()
    os.environ["ATS_BOARD_TIME_DIV"] = str(a.time_div)
    os.environ["ATS_BOARD_BLOCKS"] = str(a.blocks)
    os.environ["ATS_BOARD_MIX_N"] = str(a.n)
    os.environ["ATS_SEED"] = str(a.seed)
    os.environ["ATS_BOARD_SOC"] = "1"
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
    if a.no_power_fail:
        return 0
    print("[demo] the power-fail input: boot, writes, a cut while a host writes, reset, recovery, check", flush=True)
    t0 = time.time()
    test_board_soc.test_board_soc("power_fail")
    r = json.loads((out / "board_soc_power_fail.json").read_text())
    print("---- console after the cut (UART) ----")
    print(r["reboot_console"].replace("\r", ""))
    c, w = r["check"], r["write"]
    print("---- host ----")
    print(f"before the cut: {w['done']} LBAs written and FLUSHed (durable) by cycle {r['flushed_cycle']:,}; a "
          f"second host rewrote and wrote more without a FLUSH; the power-fail input fell "
          f"{r['cut_after']:,} cycles after its first frame (cycle {r['cut_cycle']:,})")
    print(f"after the reboot: {c['done']} LBAs read back, checked by the invariants checker (INV-LBA, INV-DUR, "
          f"INV-ATOM, INV-ORDER: no violation): {c['first']} show the flushed version, {c['second']} the "
          f"unflushed rewrite's, {c['zero']} zeros (a fresh LBA whose unflushed write was lost)")
    print(f"simulated {r['cycles_total']:,} cycles in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
