#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make demo`: the simulated SSD's main job. Builds and boots the SoC (VexRiscv firmware + device
core + NAND die models) on blank dies (the firmware formats them), runs a transactional workload,
cuts power in the middle of a commit, restarts, lets the firmware recover, and shows that the
committed transactions are whole and the cut one is gone; prints the firmware's statistics and
leaves an FST of one commit with its GTKWave save file (build/waves/soc_commit.{fst,gtkw}).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw/host"), str(ROOT / "sim/soc"), str(ROOT / "soc"), str(ROOT / "tests/system")]

from atomssd.device import Device  # noqa: E402
from atomssd.hostport import CUT_CYCLE, OP, R_CUT, U_HOST_EN, HostPort  # noqa: E402
from model import page_bytes_for  # noqa: E402

import build as simbuild  # noqa: E402

WAVES = ROOT / "build" / "waves"

GTKW_SIGNALS = [
    ("host port", ["host_cmd_valid", "host_cmd_ready", "host_cmd_op[3:0]", "host_cmd_tag[7:0]", "host_cmd_txid[5:0]",
                   "host_cpl_valid", "host_cpl_tag[7:0]", "host_cpl_status[7:0]"]),
    ("write buffer -> backend", ["ats_ssd_core.u_backend.s_wb_valid", "ats_ssd_core.u_backend.s_wb_ready",
                                 "ats_ssd_core.u_backend.s_wb_rec[1:0]", "ats_ssd_core.u_backend.s_wb_txid[5:0]",
                                 "ats_ssd_core.u_backend.m_wbc_valid", "ats_ssd_core.u_backend.next_seq[63:0]"]),
    ("NAND requests", ["ats_ssd_core.u_nand.s_nreq_valid", "ats_ssd_core.u_nand.s_nreq_op[1:0]",
                       "ats_ssd_core.u_nand.s_nreq_block[11:0]", "ats_ssd_core.u_nand.s_nreq_page[7:0]",
                       "ats_ssd_core.u_nand.m_ncpl_valid"]),
    ("remap engine (commit)", ["ats_ssd_core.u_remap.s_req_valid", "ats_ssd_core.u_remap.s_req_op[2:0]",
                               "ats_ssd_core.u_remap.s_req_txid[3:0]", "ats_ssd_core.commit_active",
                               "ats_ssd_core.u_remap.m_rsp_valid", "ats_ssd_core.u_remap.m_rsp_status[3:0]"]),
]


def write_gtkw(path: Path, fst: Path, t0_ps: int, t1_ps: int) -> None:
    lines = [f'[dumpfile] "{fst}"', f"[timestart] {t0_ps}", "[size] 1600 900", "[sst_width] 260",
             "[signals_width] 320", f"*-20.0 {t1_ps} -1"]
    top = "TOP.ats_soc_sim_top."
    for title, sigs in GTKW_SIGNALS:
        lines.append(f"-{title}")
        for s in sigs:
            name = top + ("u_soc." + s if s.startswith("ats_ssd_core") else s)
            lines.append(("@22\n" if "[" in s else "@28\n") + name)
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "demo")
    a = ap.parse_args()
    t_wall = time.time()
    print("[demo] building the SoC simulation (VexRiscv + device core + NAND die models) and the firmware", flush=True)
    exe = simbuild.build_sim("sim", trace=True)
    fw = simbuild.build_firmware("sim")
    import json
    cfg = json.loads((ROOT / "build/soc/sim/config.json").read_text())
    pb = cfg["page_bytes"]
    if a.out.exists():
        shutil.rmtree(a.out)
    a.out.mkdir(parents=True)
    WAVES.mkdir(parents=True, exist_ok=True)
    imgs = [a.out / f"die{d}.img" for d in range(cfg["ndie"])]

    # ---- power-on 1: blank dies -> format; a transactional workload; cut inside a commit
    hp = HostPort(exe, fw, imgs, cwd=a.out)
    hp.run(20_000_000, U_HOST_EN)
    print("[demo] power-on 1 (blank dies), firmware console:")
    print("  | " + hp.uart_text().strip().replace("\r", "").replace("\n", "\n  | "))
    dev = Device(hp, pb, cfg["num_lbas"])
    base = {lba: page_bytes_for(lba, 1, 0, pb) for lba in range(0, 64)}
    for lba, d in base.items():
        dev.submit(OP["WRITE"], lba, 0, d)
        if not dev.free_tags:
            dev.poll()
    dev.drain()
    dev.flush()
    print(f"[demo] 64 pages written and flushed (cycle {hp.cycle})")
    committed = {}
    for t in range(1, 4):                      # three transactions of 4 pages, committed
        pages = {lba: page_bytes_for(lba, 10 + t, t, pb) for lba in range(8 * t, 8 * t + 4)}
        for lba, d in pages.items():
            dev.write(lba, d, txid=t)
        if t == 2:                             # trace the second commit
            hp.trace(WAVES / "soc_commit.fst")
            c0 = hp.cycle
        p = dev.tx_commit(t)
        if t == 2:
            c1 = hp.cycle
            hp.run(50, 0)
            hp.trace(None)
            print(f"[demo] TX_COMMIT of tx 2 (4 pages): {c1 - c0} cycles from submission to completion, traced")
        assert p.cpl.status == 0, f"commit {t}: status {p.cpl.status:#x}"
        committed.update(pages)
    print(f"[demo] transactions 1-3 committed (pages {sorted(committed)})")
    # transaction 4: written, then its commit is cut by the power failure
    cut_pages = {lba: page_bytes_for(lba, 20, 4, pb) for lba in range(40, 44)}
    for lba, d in cut_pages.items():
        dev.write(lba, d, txid=4)
    tag = dev.submit(OP["TX_COMMIT"], txid=4)
    while hp.info()["accepted"] < hp.info()["submitted"]:
        hp.run(20, 0)
    # cut half-way through the commit (the traced commit of tx 2 took c1 - c0 cycles): tx 4's pages
    # are being programmed, its commit record not yet
    hp.arm_cut(CUT_CYCLE, hp.cycle + (c1 - c0) // 2)
    why = hp.run(100_000, 1)
    done = any(c.tag == tag for c in hp.cpls[-3:])
    print(f"[demo] TX_COMMIT of tx 4 accepted; power cut at cycle {hp.cycle}, half-way through the commit "
          f"({'after' if done else 'before'} its completion)")
    hp.close()

    # ---- power-on 2: recovery
    hp = HostPort(exe, fw, imgs, cwd=a.out)
    t0 = time.time()
    hp.run(20_000_000, U_HOST_EN)
    print(f"[demo] power-on 2: the firmware recovers ({time.time() - t0:.1f} s wall), console:")
    print("  | " + hp.uart_text().strip().replace("\r", "").replace("\n", "\n  | "))
    dev = Device(hp, pb, cfg["num_lbas"])
    ok = True
    for lba in range(0, 64):
        got = dev.read(lba)
        if lba in committed:
            exp, what = committed[lba], "committed tx"
        else:
            exp, what = base[lba], "plain write"
        if got != exp:
            ok = False
            print(f"[demo]   lba {lba}: WRONG ({what})")
    whole = all(dev.read(lba) == committed[lba] for lba in committed)
    gone = all(dev.read(lba) == base[lba] for lba in cut_pages)
    print(f"[demo] committed transactions whole: {'yes' if whole else 'NO'}; the cut transaction gone: "
          f"{'yes' if gone else 'NO'}; all 64 LBAs as expected: {'yes' if ok else 'NO'}")
    mark = len(hp.uart)
    hp.uart_in("stats\n")
    hp.run(300_000, 0)
    print("[demo] firmware statistics:")
    print("  | " + hp.uart[mark:].decode().strip().replace("\r", "").replace("\n", "\n  | "))
    info = hp.close()
    print(f"[demo] simulated {info['cycle']} cycles at {info['sim_mhz']:.3f} MHz (clock 100 MHz)")
    fst = WAVES / "soc_commit.fst"
    write_gtkw(WAVES / "soc_commit.gtkw", fst, c0 * 10_000, c1 * 10_000 + 500_000)
    print(f"[demo] waveform of the tx-2 commit: gtkwave {fst.relative_to(ROOT)} "
          f"{(WAVES / 'soc_commit.gtkw').relative_to(ROOT)}")
    print(f"[demo] done in {time.time() - t_wall:.0f} s")
    if not (whole and gone and ok):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
