#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make demo`: the simulated SSD's main job. Builds and boots the SoC (VexRiscv firmware + device
core + NAND die models) on blank dies (the firmware formats them), runs a transactional workload,
cuts power in the middle of a commit, restarts, lets the firmware recover, and shows that the
committed transactions are whole and the cut one is gone; prints the firmware's statistics and
leaves an FST of one commit with GTKWave save files (build/waves/soc_commit.{fst,gtkw}: opens on the
whole commit with named markers A-D at its TX_COMMIT's acceptance, the remap engine's COMMIT request
and response, and its completion, all found in the FST; soc_commit_remap.gtkw: zoomed on B-D).
"""
from __future__ import annotations

import argparse
import math
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
CLK_PS = 10_000                               # the SoC clock (100 MHz): one cycle in the FST's ps

T = "TOP.ats_soc_sim_top."                    # the simulation top in the FST
C = T + "u_soc.ats_ssd_core."                  # the device core
R_COMMIT = 4                                   # the remap engine's COMMIT op (rtl/backend/ats_backend.sv R_COMMIT)
# the named markers of the save files, in the order the commit passes them
MARKERS = [("accept", "A", "TX_COMMIT accepted"), ("remap_req", "B", "remap COMMIT request"),
           ("remap_rsp", "C", "remap COMMIT response"), ("complete", "D", "TX_COMMIT completion")]

GTKW_SIGNALS = [
    ("Host port: TX_COMMIT (A), completion (D)",
     [T + s for s in ("host_cmd_valid", "host_cmd_ready", "host_cmd_op", "host_cmd_tag", "host_cmd_txid",
                      "host_cpl_valid", "host_cpl_ready", "host_cpl_tag", "host_cpl_status")]),
    ("Remap engine: COMMIT request (B), response (C)",
     [C + s for s in ("u_remap.s_req_valid", "u_remap.s_req_ready", "u_remap.s_req_op", "u_remap.s_req_tag",
                      "u_remap.s_req_txid", "commit_active", "u_remap.m_rsp_valid", "u_remap.m_rsp_ready",
                      "u_remap.m_rsp_tag", "u_remap.m_rsp_status")]),
    ("Write buffer -> backend (the tx pages, then the commit record)",
     [C + s for s in ("u_backend.s_wb_valid", "u_backend.s_wb_ready", "u_backend.s_wb_rec", "u_backend.s_wb_txid",
                      "u_backend.m_wbc_valid", "u_backend.next_seq")]),
    ("NAND requests",
     [C + s for s in ("u_nand.s_nreq_valid", "u_nand.s_nreq_ready", "u_nand.s_nreq_op", "u_nand.s_nreq_chan",
                      "u_nand.s_nreq_way", "u_nand.s_nreq_block", "u_nand.s_nreq_page", "u_nand.m_ncpl_valid",
                      "u_nand.m_ncpl_status")]),
]

# the handshakes the markers stand on (values sampled at the rising clock edge that takes them)
EVENT_SIGNALS = [T + s for s in ("host_cmd_valid", "host_cmd_ready", "host_cmd_op", "host_cmd_tag", "host_cmd_txid",
                                 "host_cpl_valid", "host_cpl_ready", "host_cpl_tag")] + \
                [C + "u_remap." + s for s in ("s_req_valid", "s_req_ready", "s_req_op", "s_req_tag", "s_req_txid",
                                              "m_rsp_valid", "m_rsp_ready", "m_rsp_tag")]


def read_fst(fst: Path) -> tuple[list[int], dict[str, list[int]], dict[str, int]]:
    """The rising edges of the SoC clock (ps), EVENT_SIGNALS sampled at each (the value a flop takes
    there: the last change strictly before the edge), and every variable's width."""
    import pywellen
    w = pywellen.Waveform(str(fst))
    widths, tv = {}, {}
    for v in w.all_vars():
        widths[v.full_name] = v.bitwidth
        if v.full_name in EVENT_SIGNALS or v.full_name == T + "clk":
            tv[v.full_name] = list(v.tv)
    missing = [n for n in EVENT_SIGNALS + [T + "clk"] if n not in tv]
    if missing:
        raise SystemExit(f"{fst}: signals missing: {missing}")
    clk = tv[T + "clk"]
    edges = [t for (t, v), (_, pv) in zip(clk[1:], clk) if v == 1 and pv == 0]
    at = {}
    for n in EVENT_SIGNALS:
        ch, vals, j, cur = tv[n], [], 0, 0
        for t in edges:
            while j < len(ch) and ch[j][0] < t:
                cur = ch[j][1]
                j += 1
            vals.append(int(cur) if cur is not None else 0)
        at[n] = vals
    return edges, at, widths


def commit_events(fst: Path, txid: int) -> dict[str, int]:
    """Times (ps, rising edges) of the commit of `txid` in the FST: its TX_COMMIT accepted by the
    host port, the remap engine's COMMIT request for it accepted, that request's response taken,
    and the TX_COMMIT's completion taken by the host."""
    edges, at, _ = read_fst(fst)
    h = lambda s, i: at[T + s][i]                     # noqa: E731
    r = lambda s, i: at[C + "u_remap." + s][i]        # noqa: E731
    n = len(edges)
    i = next((i for i in range(n) if h("host_cmd_valid", i) and h("host_cmd_ready", i)
              and h("host_cmd_op", i) == OP["TX_COMMIT"] and h("host_cmd_txid", i) == txid), None)
    if i is None:
        raise SystemExit(f"{fst}: no TX_COMMIT of tx {txid} accepted")
    tag = h("host_cmd_tag", i)
    j = next(j for j in range(i, n) if r("s_req_valid", j) and r("s_req_ready", j)
             and r("s_req_op", j) == R_COMMIT and r("s_req_txid", j) == txid)
    rtag = r("s_req_tag", j)
    k = next(k for k in range(j + 1, n) if r("m_rsp_valid", k) and r("m_rsp_ready", k) and r("m_rsp_tag", k) == rtag)
    m = next(m for m in range(k, n) if h("host_cpl_valid", m) and h("host_cpl_ready", m) and h("host_cpl_tag", m) == tag)
    return dict(accept=edges[i], remap_req=edges[j], remap_rsp=edges[k], complete=edges[m],
                t_first=edges[0], t_last=edges[-1])


def edge_cycle(t_ps: int) -> int:
    """The harness's cycle count after the rising edge at t_ps (ats_soc_sim.cpp: an edge every 10 ns
    from 5 ns; the count steps at the end of the cycle): what a CPL message reports."""
    return (t_ps - CLK_PS // 2) // CLK_PS + 1


def write_gtkw(path: Path, fst: Path, ev: dict[str, int], view: tuple[int, int], widths: dict[str, int],
               title: str) -> None:
    """GTKWave save file: the groups of GTKW_SIGNALS, named markers A-D on the commit's events
    (`[markername]` lines), the window `view` (ps) filling the wave pane (the geometry of
    bench/remap's save files)."""
    sys.path.insert(0, str(ROOT / "bench" / "remap"))
    import bench_remap as g
    start, end = view
    zoom = -math.log2((end - start) * g.GTKW_PX_PER_FRAME / g.gtkw_wave_px())
    rel = fst.relative_to(ROOT) if fst.is_relative_to(ROOT) else fst
    me = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    body = g.gtkw_view_lines(zoom, [ev[k] for k, _, _ in MARKERS], start, GTKW_SIGNALS, widths, clk=T + "clk")
    z = next(i for i, ln in enumerate(body) if ln.startswith("*"))
    body[z + 1:z + 1] = [f"[markername] {letter}{name}" for _, letter, name in MARKERS]
    lines = [f"[*] atomssd `make demo`: {title}. Written by sim/soc/demo.py.",
             "[*] Markers: " + ", ".join(f"{letter} = {name}" for _, letter, name in MARKERS)
             + " (the rising edges that take each handshake).",
             f"[*] Open from the repository root: gtkwave {rel} {me}",
             f'[dumpfile] "{rel}"'] + body
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def wave_files(fst: Path, txid: int, gtkw: Path, gtkw_remap: Path) -> dict[str, int]:
    """The commit's events from the FST; two save files: the whole commit (A..D with a margin) and
    the remap engine's part (B..D, a few hundred ns)."""
    ev = commit_events(fst, txid)
    _, _, widths = read_fst(fst)
    span = ev["complete"] - ev["accept"]
    view = (max(ev["t_first"], ev["accept"] - span // 20), min(ev["t_last"], ev["complete"] + span // 20))
    write_gtkw(gtkw, fst, ev, view, widths, f"TX_COMMIT of tx {txid}, acceptance (A) to completion (D)")
    rv = (ev["remap_req"] - 8 * CLK_PS, min(ev["t_last"], ev["complete"] + 8 * CLK_PS))
    write_gtkw(gtkw_remap, fst, ev, rv, widths, f"TX_COMMIT of tx {txid}, zoomed on the remap COMMIT (B, C) and the completion (D)")
    return ev


def trace_commit(hp: HostPort, dev: Device, txid: int, fst: Path):
    """TX_COMMIT of `txid` with the FST on from 20 cycles before its submission to 50 after its
    completion; returns (first cycle, completion cycle, the completed command)."""
    hp.trace(fst)
    hp.run(20, 0)
    c0 = hp.cycle
    p = dev.tx_commit(txid)
    c1 = p.cpl.cycle
    hp.run(50, 0)
    hp.trace(None)
    return c0, c1, p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "demo")
    a = ap.parse_args()
    t_wall = time.time()
    print("[demo] building the SoC simulation (VexRiscv + device core + NAND die models) and the firmware", flush=True)
    exe, fw, cfg = simbuild.build_locked("sim", trace=True)      # (waits for a build by someone else)
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
            c0, c1, p = trace_commit(hp, dev, t, WAVES / "soc_commit.fst")
            print(f"[demo] TX_COMMIT of tx 2 (4 pages): {c1 - c0} cycles from submission to completion, traced")
        else:
            p = dev.tx_commit(t)
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
    ev = wave_files(fst, 2, WAVES / "soc_commit.gtkw", WAVES / "soc_commit_remap.gtkw")
    print(f"[demo] waveform of the tx-2 commit ({(ev['t_last'] - ev['t_first']) / 1e6:.1f} us traced), markers:")
    for key, letter, name in MARKERS:
        print(f"  {letter} {name:<22} {ev[key] / 1e6:10.3f} us  (+{(ev[key] - ev['accept']) // CLK_PS} cycles)")
    if edge_cycle(ev["complete"]) != c1:
        ok = False
        print(f"[demo]   marker D is at cycle {edge_cycle(ev['complete'])}, the completion came at cycle {c1}: WRONG")
    print(f"  whole commit:  gtkwave {fst.relative_to(ROOT)} {(WAVES / 'soc_commit.gtkw').relative_to(ROOT)}")
    print(f"  remap COMMIT:  gtkwave {fst.relative_to(ROOT)} {(WAVES / 'soc_commit_remap.gtkw').relative_to(ROOT)}")
    print(f"[demo] done in {time.time() - t_wall:.0f} s")
    if not (whole and gone and ok):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
