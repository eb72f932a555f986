# SPDX-License-Identifier: Apache-2.0
"""make bench-sata (issue 15; bench/sata/README.md): 4 KiB random read and write IOPS at NCQ depth 32
through the SATA front end ats_sata (150 MHz, one dword a clock = 600 MB/s) against the SATA link
limit, and the same workload through the NVMe front end ats_nvme on the same ideal core, against its
own limits. Two cocotb simulations (bench_sata_tb.py, bench_nvme_tb.py), run side by side; figures
are simulated cycles only. Writes build/bench/sata.json and prints the table.

SATA link limit (limit_iops): every dword of an NCQ command on the wire, both directions, one
dword a clock (the link is half duplex for frames: the receiver sends primitives meanwhile):
  frame overhead F = SOF + CRC + EOF + X_RDY + R_RDY + WTRM + R_OK = 7 dwords
  D = (H2D 5 + F) + (D2H accept 5 + F) + (DMA Setup 7 + F) + (Data 1 + PAGE/4 + F) + (SDB 2 + F) / k
  limit_iops = f_link / D, f_link = 150 MHz dwords/s, k = tags sharing one SDB (32 at best).
The ALIGN pairs the PHY inserts (2 every 256 dwords) are not in the simulation and not in D.
"""
from __future__ import annotations

import argparse
import datetime
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(HERE)]

PAGE = 4096
SATA_MHZ = 150.0
NVME_MHZ = 125.0
FRAME_OVH = {"SOF": 1, "CRC": 1, "EOF": 1, "X_RDY": 1, "R_RDY": 1, "WTRM": 1, "R_OK": 1}
NCQ_FIS = {"Register H2D": 5, "Register D2H (accept)": 5, "DMA Setup": 7, "Data": 1 + PAGE // 4}
SDB_DW = 2
# PCIe Gen3 x4 (cocotbext-pcie's UltraScale+ model of cocotb_tests/ats_nvme): 8 GT/s a lane, 128b/130b
PCIE_BPS = 8e9 * 4 * 128 / 130 / 8          # bytes/s per direction
TLP_OVH = 4 + 4                              # STP token (Gen3 framing, with the sequence number) + LCRC
SQE, CQE, DB = 64, 16, 4


def sata_limit(k: int) -> dict:
    f = sum(FRAME_OVH.values())
    per = sum(n + f for n in NCQ_FIS.values()) + (SDB_DW + f) / k
    iops = SATA_MHZ * 1e6 / per
    return dict(dwords_per_cmd=round(per, 3), sdb_share=k, iops=iops, mbps=iops * PAGE / 1e6,
                formula=("D = (5+F) + (5+F) + (7+F) + (1+PAGE/4+F) + (2+F)/k, F = SOF+CRC+EOF+X_RDY+R_RDY+WTRM+R_OK "
                         f"= {f}; limit_iops = 150e6 / D"))


def pcie_limit(mps: int, mrrs: int, hdr: int) -> dict:
    """Gen3 x4 per-direction bytes of one 4 KiB command (TLP = framing 8 + header + payload; DLLPs and
    SKP ordered sets left out: an upper bound). Read: data MWr device->host; write: CplD host->device."""
    t = TLP_OVH + hdr
    cpl_hdr = TLP_OVH + 12
    n_data = -(-PAGE // mps)
    rd_up = n_data * (t) + PAGE + (t + CQE) + t                   # MWr data, CQE MWr, SQE MRd
    rd_down = (cpl_hdr + SQE) + 2 * (t + DB)                      # SQE CplD, SQ / CQ doorbells
    wr_down = n_data * cpl_hdr + PAGE + (cpl_hdr + SQE) + 2 * (t + DB)   # CplD of <= MPS each
    wr_up = -(-PAGE // mrrs) * t + t + (t + CQE)                 # MRd requests, SQE MRd, CQE MWr
    r = dict(read_iops=PCIE_BPS / max(rd_up, rd_down), write_iops=PCIE_BPS / max(wr_up, wr_down),
             read_bytes_busiest_dir=max(rd_up, rd_down), write_bytes_busiest_dir=max(wr_up, wr_down),
             link_bytes_per_s=PCIE_BPS, mps=mps, mrrs=mrrs, tlp_header=hdr)
    return r


def git_state() -> tuple[str, list[str]]:
    try:
        c = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
        st = subprocess.run(["git", "status", "--porcelain", "--", "rtl/sata", "rtl/nvme", "bench/sata",
                             "cocotb_tests/lib/atstb"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return c, sorted(ln[3:] for ln in st.splitlines() if ln.strip())
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown", []


def base_sources(rev: str) -> tuple[list[Path], str]:
    """ats_sata's sources with rtl/sata/ as it was at `rev` (git show into build/bench/sata/base_<rev>/):
    the "before" of a before/after run (--base). rtl/common is today's."""
    from atstb.runner import block_sources
    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    d = ROOT / "build" / "bench" / "sata" / f"base_{short}"
    names = subprocess.run(["git", "ls-tree", "--name-only", short, "rtl/sata/"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    (d / "rtl" / "sata").mkdir(parents=True, exist_ok=True)
    for n in names:
        txt = subprocess.run(["git", "show", f"{short}:{n}"], cwd=ROOT, capture_output=True, check=True).stdout
        (d / n).write_bytes(txt)
    fl = [ln.strip() for ln in (d / "rtl/sata/ats_sata.f").read_text().splitlines()
          if ln.strip() and not ln.startswith("#")]
    srcs = [(d / x) if x.startswith("rtl/sata/") else (ROOT / x) for x in fl]
    assert all(p.exists() for p in srcs), srcs
    return srcs, short


def run_one(which: str, a, out: Path) -> dict:
    from atstb.runner import block_sources, run
    env = {"BENCH_WARM": str(a.warm), "BENCH_MEAS": str(a.meas), "BENCH_QD": str(a.qd), "BENCH_OUT": str(out),
           "BENCH_POLL": str(a.poll), "ATS_SEED": str(a.seed)}
    t = time.time()
    if which in ("sata", "sata_base"):
        srcs, key = block_sources("ats_sata"), "bench_p4096"
        if which == "sata_base":
            srcs, short = base_sources(a.base)
            key = f"bench_p4096_base_{short}"
        run(toplevel="ats_sata", sources=srcs, test_module="bench_sata_tb", test_dir=HERE, build_key=key,
            parameters={"PAGE_BYTES": PAGE}, extra_env=env, seed=a.seed)
    else:
        srcs = block_sources("ats_nvme")
        run(toplevel="ats_nvme", sources=srcs, test_module="bench_nvme_tb", test_dir=HERE, build_key="bench_q32",
            parameters={"NQ": 1, "QSIZE": 64, "QDEPTH": 32, "PAGE_BYTES": PAGE, "NUM_LBAS": a.lbas},
            extra_env=dict(env, BENCH_LBAS=str(a.lbas)), seed=a.seed)
    r = json.loads(out.read_text())
    r["wall_s"] = round(time.time() - t, 1)
    return r


def fig(ph: dict, mhz: float) -> dict:
    w = ph["window"]
    iops = w["n"] / (w["cycles"] / (mhz * 1e6))
    q = [(w["n"] / 4) / (c / (mhz * 1e6)) for c in w["quarter_cycles"]]
    return dict(iops=iops, mbps=iops * PAGE / 1e6, cycles_per_cmd=w["cycles"] / w["n"],
                quarters_iops=[round(x) for x in q], window_cycles=w["cycles"], window_cmds=w["n"],
                core_port_util=ph["core_port_beats"] / w["cycles"], latency_us=ph["lat_mean_cycles"] / mhz)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warm", type=int, default=64, help="completions before the window (each phase)")
    ap.add_argument("--meas", type=int, default=256, help="completions in the window (each phase)")
    ap.add_argument("--qd", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--poll", type=int, default=8, help="NVMe host: CQ poll period in cycles")
    ap.add_argument("--lbas", type=int, default=1 << 20, help="LBAs the random offsets are drawn from")
    ap.add_argument("--runs", default="sata,nvme")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "sata.json"))
    ap.add_argument("--base", default="", help="also run the SATA bench on rtl/sata as of this git revision "
                                               "(the 'before' of a before/after comparison in one run)")
    a = ap.parse_args()
    runs = [r for r in a.runs.split(",") if r]
    if a.base and "sata_base" not in runs:
        runs.append("sata_base")
    tmp = ROOT / "build" / "bench" / "sata"
    tmp.mkdir(parents=True, exist_ok=True)
    commit, dirty = git_state()                  # the sources the simulations are built from
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {r: ex.submit(run_one, r, a, tmp / f"{r}_raw.json") for r in runs}
        res = {r: f.result() for r, f in futs.items()}
    wall = time.time() - t0

    lim = sata_limit(32)
    lim1 = sata_limit(1)
    rows = []
    out = {"issue": 15, "workload": {"op": "4 KiB random WRITE then READ of the written LBAs", "qd": a.qd,
                                     "warm": a.warm, "meas": a.meas, "tail": a.qd, "seed": a.seed,
                                     "lbas": a.lbas}}
    if "sata" in res:
        s = res["sata"]
        out["sata"] = {"clock_mhz": SATA_MHZ, "limit": {**lim, "one_sdb_per_cmd": lim1,
                                                         "core_port_iops": SATA_MHZ * 1e6 * 4 / PAGE},
                       "check": s["check"], "wall_s": s["wall_s"], "cycles_total": s["cycles_total"]}
        for kind in ("write", "read"):
            f = fig(s[kind], SATA_MHZ)
            ph = s[kind]
            lk = ph["link_cycles"]
            f.update(limit_iops=lim["iops"], ratio=f["iops"] / lim["iops"],
                     link_cycles_per_cmd={k: round(v / ph["window"]["n"], 2) for k, v in lk.items()},
                     link_share={k: round(v / ph["window"]["cycles"], 4) for k, v in lk.items()},
                     sdb_per_cmd=ph["sdbs"] / ph["window"]["n"], mean_qd=ph["mean_qd"])
            out["sata"][f"rand_{kind}"] = f
            rows.append((f"SATA rand_{kind}", f, lim["iops"], "link (600 MB/s less FIS overhead)"))
    if "sata_base" in res:
        s = res["sata_base"]
        out["sata_base"] = {"rev": a.base, "commit": base_sources(a.base)[1], "check": s["check"],
                            "wall_s": s["wall_s"]}
        for kind in ("write", "read"):
            f = fig(s[kind], SATA_MHZ)
            ph = s[kind]
            f.update(limit_iops=lim["iops"], ratio=f["iops"] / lim["iops"],
                     link_cycles_per_cmd={k: round(v / ph["window"]["n"], 2) for k, v in ph["link_cycles"].items()})
            out["sata_base"][f"rand_{kind}"] = f
            rows.append((f"SATA rand_{kind} before", f, lim["iops"], f"link; rtl/sata of {out['sata_base']['commit']}"))
    if "nvme" in res:
        n = res["nvme"]
        pc = n["pcie"]
        mps, mrrs = 128 << pc["cfg_max_payload"], 128 << pc["cfg_max_read_req"]
        hdr = 12 if pc["mem_base"] + (8 << 20) < (1 << 32) else 16
        pl = pcie_limit(mps, mrrs, hdr)
        port = NVME_MHZ * 1e6 * 4 / PAGE
        out["nvme"] = {"clock_mhz": NVME_MHZ, "pcie": pc, "limit": {
            "pcie_gen3x4": pl, "core_port_iops": port, "user_if_bytes_per_s": 32 * NVME_MHZ * 1e6,
            "formula": "min(PCIe Gen3 x4 after TLP framing/headers (busiest direction), core data port 32 bit x 125 MHz)"},
            "check": n["check"], "wall_s": n["wall_s"], "poll_cycles": n["poll_cycles"]}
        for kind in ("write", "read"):
            f = fig(n[kind], NVME_MHZ)
            pcl = pl[f"{kind}_iops"]
            limv = min(pcl, port)
            f.update(limit_iops=limv, limit_bound="core port" if port <= pcl else "PCIe link",
                     pcie_limit_iops=pcl, ratio=f["iops"] / limv, ratio_pcie=f["iops"] / pcl)
            out["nvme"][f"rand_{kind}"] = f
            rows.append((f"NVMe rand_{kind}", f, limv, f"{f['limit_bound']} (PCIe Gen3 x4: {pcl:,.0f})"))
    cmd = "python " + " ".join(shlex.quote(x) for x in [str(Path(sys.argv[0]).resolve().relative_to(ROOT))
                                                          if Path(sys.argv[0]).resolve().is_relative_to(ROOT)
                                                          else sys.argv[0]] + sys.argv[1:])
    out["meta"] = {"commit": commit, "modified_sources": dirty, "command": cmd, "make": "make bench-sata",
                   "wall_s": round(wall, 1),
                   "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")}

    print(f"\nbench-sata: 4 KiB random I/O at QD {a.qd}, ideal core; window {a.meas} completions after {a.warm} "
          f"(simulated cycles)")
    print(f"{'figure':<18} {'IOPS':>9} {'MB/s':>7} {'limit IOPS':>11} {'ratio':>6}  {'cyc/cmd':>8} {'port':>5}  limit is")
    print("-" * 100)
    for name, f, limv, what in rows:
        print(f"{name:<18} {f['iops']:9,.0f} {f['mbps']:7.1f} {limv:11,.0f} {f['ratio']:6.3f}  "
              f"{f['cycles_per_cmd']:8.1f} {f['core_port_util']:5.2f}  {what}")
    if "sata" in res:
        print(f"\nSATA limit: {lim['formula']}\n  = 12 + 12 + 14 + {1 + PAGE // 4 + 7} + 9/32 = {lim['dwords_per_cmd']} "
              f"dwords/command -> {lim['iops']:,.0f} IOPS, {lim['mbps']:.1f} MB/s of data "
              f"(one SDB per command: {lim1['dwords_per_cmd']} -> {lim1['iops']:,.0f}); the core port (1 word/clock) "
              f"would allow {SATA_MHZ * 1e6 / (PAGE / 4):,.0f}")
        for kind in ("write", "read"):
            f = out["sata"][f"rand_{kind}"]
            print(f"  SATA {kind:<5} link cycles per command: " +
                  ", ".join(f"{k} {v}" for k, v in f["link_cycles_per_cmd"].items()) +
                  f"; SDBs/cmd {f['sdb_per_cmd']:.2f}, mean tags outstanding {f['mean_qd']:.1f}, "
                  f"quarters {f['quarters_iops']}")
    if "sata_base" in res and "sata" in res:
        print(f"\nbefore/after (rtl/sata of {out['sata_base']['commit']} -> the tree measured above), "
              f"link limit {lim['iops']:,.0f} IOPS:")
        for kind in ("write", "read"):
            b, f = out["sata_base"][f"rand_{kind}"], out["sata"][f"rand_{kind}"]
            print(f"  SATA rand_{kind:<5} {b['iops']:9,.0f} IOPS ({b['ratio']:.3f}, {b['cycles_per_cmd']:.1f} cyc/cmd, "
                  f"idle {b['link_cycles_per_cmd'].get('idle', 0)}) -> {f['iops']:9,.0f} IOPS ({f['ratio']:.3f}, "
                  f"{f['cycles_per_cmd']:.1f} cyc/cmd, idle {f['link_cycles_per_cmd'].get('idle', 0)})")
    if "nvme" in res:
        pl = out["nvme"]["limit"]["pcie_gen3x4"]
        print(f"\nNVMe limits: core data port 4 B x 125 MHz = 500 MB/s = {out['nvme']['limit']['core_port_iops']:,.0f} IOPS; "
              f"PCIe Gen3 x4 {PCIE_BPS / 1e9:.3f} GB/s a direction, MPS {pl['mps']}, MRRS {pl['mrrs']}, "
              f"{pl['tlp_header']}-byte headers + 8 framing: read {pl['read_bytes_busiest_dir']} B/cmd -> "
              f"{pl['read_iops']:,.0f}, write {pl['write_bytes_busiest_dir']} B/cmd -> {pl['write_iops']:,.0f} IOPS")
        for kind in ("write", "read"):
            f = out["nvme"][f"rand_{kind}"]
            print(f"  NVMe {kind:<5} quarters {f['quarters_iops']}, core port busy {f['core_port_util']:.3f}, "
                  f"{f['cycles_per_cmd'] - PAGE / 4:.0f} cycles a command beyond its 1024 data beats")
    if "sata" in res and "nvme" in res:
        for kind in ("write", "read"):
            r = out["sata"][f"rand_{kind}"]["iops"] / out["nvme"][f"rand_{kind}"]["iops"]
            out.setdefault("sata_over_nvme", {})[kind] = r
        print(f"\nSATA / NVMe: write {out['sata_over_nvme']['write']:.3f}, read {out['sata_over_nvme']['read']:.3f}")
    for r in runs:
        c = res[r]["check"]
        print(f"check {r}: {c['commands']} commands OK, {c['reads_compared']} reads compared "
              f"({c['bytes_compared']} bytes), {c['pages_checked_in_core']} written pages checked in the core; "
              f"{res[r]['wall_s']:.0f} s wall")
    jp = Path(a.json)
    jp.parent.mkdir(parents=True, exist_ok=True)
    jp.write_text(json.dumps(out, indent=1) + "\n")
    print(f"[bench-sata] commit {commit}{' (modified: ' + ', '.join(dirty) + ')' if dirty else ''}; "
          f"wrote {jp} ({wall:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
