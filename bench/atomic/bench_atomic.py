# SPDX-License-Identifier: Apache-2.0
"""Issue 39 item 7: NVMe atomic writes, static transactions and a doublewrite page store, through
the NVMe front end of the full-system simulation (SoC + firmware + NAND die models with FEMU array
times), with the transactional host API (sw/host/atomssd/txapi.py).

The device is bench-tx's: the `b5_256` configuration (4 channels x 2 ways, 4 KiB pages = LBAs,
FEMU tR 40 / tPROG 200 / tBERS 2000 us, 100 MHz) in its NVMe build, formatted offline (no GC in the
run). Its atomic-write unit AWU (Identify NAWUPF + 1, docs/host-interface.md §1.10) is 16 LBAs
= 64 KiB with a boundary every 16 LBAs. One device, the parts one after the other:

A. sizes: atomic multi-block Writes against the same plain Writes, n = 2 … AWU blocks. The front
   end makes every Write of 2 … AWU blocks inside one boundary atomic, so the plain Write of n
   blocks is the same command placed across a boundary (SLBA = k·AWU − j, 1 ≤ j < n: plain
   semantics, each block atomic on its own), the atomic one inside a boundary
   (`AtomDevice.atomic_write`'s checks). Two regimes, each a group of `--writes` Writes of n blocks
   per mode, the modes rotated per size:
     qd1     one Write at a time, each durable when it completes: plain with FUA, atomic with FUA
             (an atomic Write is durable at its completion with or without FUA in this version);
     stream  all Writes of the group submitted at once (the SQ's depth), then one Flush: time to
             the Flush's completion (the same durability at the end for both modes);
     stream_fua  all at once, each durable when it completes (plain with FUA), no Flush: the same
             durability per Write as the atomic ones.
   Throughput = bytes / simulated time; ratio atomic / plain per size and regime;
   `atomic_over_plain` = the worst ratio over every size and regime measured (target >= 0.97).
B. SWRITE (a static transaction: ranges + data in one command) against the same pages through a
   txid: TX Writes, the last carrying COMMIT. Measured only when the device has SWRITE
   (docs/host-interface.md §1.11); otherwise reported as not measured with the reason.
C. page store: 16 KiB database pages (4 LBAs) written in batches of `--batch` pages,
     doublewrite  InnoDB style: the batch written to the doublewrite area (sequential, MDTS-sized
                  Writes), Flush, then each page to its home location, Flush;
     atomic       each page one atomic Write to its home location, Flush;
   NAND bytes programmed per page (GET_LOG LID 0xC0 `nand_bytes` before / after the mode's
   batches: data, commit marks, records, checkpoint pages) and pages per simulated second. On this
   device every 16 KiB page Write (and the aligned 64 KiB doublewrite Writes) is atomic in both
   modes: the doublewrite store pays its second copy on top of what the atomic store pays.

Time: simulated cycles at the SoC clock from a group's first submission to its last completion;
completions are taken at their MSI (bench/tx's transport: exact cycles). Every group starts on an
idle device (a Flush waited for). Limits printed with the figures: the NAND program bandwidth
min(dies / (tPROG + t_xfer), channels / t_xfer) pages per second (t_xfer = (4096 + 224) bytes x 4
cycles), and the NAND bytes a page needs (16 KiB: 4 data pages).

Output: build/bench/atomic.json, a table on stdout. Default run: about 4 minutes of wall time on a loaded 2-core
machine (0.09 M simulated cycles/s) after the simulator build.
"""
from __future__ import annotations

import argparse
import datetime
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw/host"), str(ROOT / "tests/system"), str(ROOT / "cocotb_tests/lib"),
                str(ROOT / "soc"), str(ROOT / "bench/recovery"), str(ROOT / "bench/tx"), str(ROOT / "sim/soc")]

from atomssd.hostport import HostPort  # noqa: E402
from atomssd.nvme import NvmeDriver, run_sync  # noqa: E402
from atomssd.nvme_sim import boot  # noqa: E402
from atomssd.txapi import AtomDevice, TxError  # noqa: E402
from bench_tx import T_PROG_US, close_checked, nvme_up, program_limit, start_device  # noqa: E402

CONFIG = "b5_256"
TARGET = 0.97                                 # atomic >= 0.97 of plain (issue 39 item 7)
DB_PAGE = 16 * 1024                           # InnoDB's default page
REGIMES = ("qd1", "stream", "stream_fua")


def tree() -> tuple[str, bool]:
    """(HEAD's short commit, whether the sources the simulation is built from have changes)"""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", "rtl", "sim", "soc",
                                  "sw", "spinal", "bench/atomic", "bench/tx"],
                           capture_output=True, text=True).stdout.strip()
    return head or "?", bool(dirty)


def has_swrite(dev: AtomDevice) -> str | None:
    """None when the device and the API have SWRITE, else the reason it is not measured."""
    if not hasattr(dev, "static_tx"):
        return "the host API has no static_tx"
    lim = getattr(dev.info, "static_ranges", 0)
    if not lim:
        return ("the device reports no SWRITE (Identify Controller byte 3136 = 0: the full-system simulation's "
                "NVMe front end is built with STX = 0 or has no SWRITE; docs/host-interface.md §1.11)")
    return None


class Bench:
    def __init__(self, hp: HostPort, dev: AtomDevice, drv: NvmeDriver, tr, seed: int):
        self.hp, self.dev, self.drv, self.tr = hp, dev, drv, tr
        self.rng = random.Random(seed)
        self.pb = dev.info.lba_bytes
        self.awu = dev.info.atomic_blocks
        self.bd = dev.info.atomic_boundary or self.awu

    def data(self, nblocks: int) -> bytes:
        return self.rng.randbytes(16) * (nblocks * self.pb // 16)

    def idle(self) -> None:
        self.dev.flush()

    def log(self) -> dict:
        return run_sync(self.drv.device_log(), self.tr)

    # ---------------------------------------------------------------------------------- part A
    def lbas(self, n: int, k: int, atomic: bool, area: tuple[int, int]) -> list[int]:
        """k distinct start LBAs of n-block Writes in `area` [lo, hi): inside one boundary (atomic)
        or across one (plain); never overlapping each other."""
        lo, hi = area
        slots = self.rng.sample(range(lo // self.bd + 1, hi // self.bd - 1), k)
        out = []
        for s in slots:
            if atomic:
                out.append(s * self.bd + self.rng.randrange(self.bd - n + 1))
            else:
                out.append(s * self.bd - self.rng.randrange(1, n))
        return out

    def sizes(self, sizes: list[int], k: int) -> list[dict]:
        nl = self.dev.info.num_lbas
        area = (0, nl // 2)
        pts = []
        for si, n in enumerate(sizes):
            cyc = {}
            for ri, regime in enumerate(REGIMES):
                modes = ("plain", "atomic") if (si + ri) % 2 == 0 else ("atomic", "plain")
                for m in modes:
                    starts = self.lbas(n, k, m == "atomic", area)
                    datas = [self.data(n) for _ in starts]
                    self.idle()
                    c0 = self.hp.cycle
                    if regime == "qd1":
                        for l, d in zip(starts, datas):
                            if m == "atomic":
                                self.dev.atomic_write(l, d, fua=True)
                            else:
                                self.dev.write(l, d, fua=True)
                    else:
                        fua = regime == "stream_fua"
                        cmds = []
                        for l, d in zip(starts, datas):
                            cmds += ([self.dev.submit_atomic_write(l, d, fua=fua)] if m == "atomic"
                                     else self.dev.submit_write(l, d, fua=fua))
                        if not fua:
                            cmds.append(self.dev.submit_flush())
                        self.dev.wait(cmds)
                    cyc[(regime, m)] = self.hp.cycle - c0
                    if m == "plain":   # the plain Writes did cross a boundary (not atomic in the device)
                        assert all(l // self.bd != (l + n - 1) // self.bd for l in starts)
            p = {"blocks": n, "bytes": n * self.pb, "writes": k}
            for regime in REGIMES:
                pl, at = cyc[(regime, "plain")], cyc[(regime, "atomic")]
                p[regime] = {"plain_cycles": pl, "atomic_cycles": at,
                             "plain_mb_s": k * n * self.pb / (pl / self.clk) / 1e6,
                             "atomic_mb_s": k * n * self.pb / (at / self.clk) / 1e6,
                             "atomic_over_plain": pl / at,
                             "plain_us_per_write": pl / self.clk * 1e6 / k,
                             "atomic_us_per_write": at / self.clk * 1e6 / k}
            pts.append(p)
            print(f"  n={n:>2}: " + ", ".join(f"{r} {p[r]['atomic_over_plain']:.3f}" for r in REGIMES), flush=True)
        return pts

    # ---------------------------------------------------------------------------------- part B
    def swrite(self, groups: int) -> dict:
        why = has_swrite(self.dev)
        if why:
            return {"measured": False, "reason": why}
        return self.swrite_measure(groups)

    def swrite_measure(self, groups: int) -> dict:
        """SWRITE of R ranges against the same pages as TX Writes on a txid, the last with COMMIT."""
        i = self.dev.info
        nl = i.num_lbas
        nr = min(4, i.static_ranges)
        per = max(1, min(4, i.static_pages // nr))
        cyc = {"swrite": 0, "tx_commit_write": 0}
        pages = 0
        for g in range(groups):
            for m in (("swrite", "tx_commit_write") if g % 2 == 0 else ("tx_commit_write", "swrite")):
                starts = sorted(self.rng.sample(range(0, nl // 2 - per, per + 1), nr))
                rs = [(l, self.data(per)) for l in starts]
                self.idle()
                c0 = self.hp.cycle
                if m == "swrite":
                    self.dev.static_tx(rs)
                else:
                    tx = self.dev.begin(explicit=False)
                    cmds = []
                    for j, (l, d) in enumerate(rs):
                        cmds += tx.submit_write(l, d, commit=j == len(rs) - 1)
                    self.dev.wait(cmds)
                    tx.complete()
                cyc[m] += self.hp.cycle - c0
            pages += nr * per
        return {"measured": True, "ranges": nr, "blocks_per_range": per, "groups": groups,
                "swrite_us": cyc["swrite"] / self.clk * 1e6 / groups,
                "tx_commit_write_us": cyc["tx_commit_write"] / self.clk * 1e6 / groups,
                "swrite_over_tx": cyc["tx_commit_write"] / cyc["swrite"]}

    # ---------------------------------------------------------------------------------- part C
    def page_store(self, batch: int, batches: int) -> dict:
        i = self.dev.info
        per = DB_PAGE // self.pb                      # LBAs a database page
        nl = i.num_lbas
        home = list(range(0, nl // 2, per))           # home pages (aligned: never across a boundary)
        dw_base = nl // 2                             # the doublewrite area (fixed, reused each batch)
        step = max(per, i.max_transfer // self.pb // per * per)
        out = {}
        order = ("doublewrite", "atomic")
        for m in order:
            self.idle()
            l0 = self.log()
            cyc = 0
            for b in range(batches):
                pages = self.rng.sample(home, batch)
                datas = [self.data(per) for _ in pages]
                self.idle()
                c0 = self.hp.cycle
                if m == "doublewrite":
                    blob = b"".join(datas)
                    nb = step * self.pb
                    cmds = [c for o in range(0, len(blob), nb)
                            for c in self.dev.submit_write(dw_base + o // self.pb, blob[o:o + nb])]
                    self.dev.wait(cmds + [self.dev.submit_flush()])
                    cmds = [c for p, d in zip(pages, datas) for c in self.dev.submit_write(p, d)]
                    self.dev.wait(cmds + [self.dev.submit_flush()])
                else:
                    cmds = [self.dev.submit_atomic_write(p, d) for p, d in zip(pages, datas)]
                    self.dev.wait(cmds + [self.dev.submit_flush()])
                cyc += self.hp.cycle - c0
            self.idle()
            l1 = self.log()
            n = batch * batches
            d = {k: l1[k] - l0[k] for k in ("host_pages", "nand_programs", "nand_bytes", "checkpoints", "gc_runs")}
            out[m] = {"pages": n, "cycles": cyc, "pages_per_s": n / (cyc / self.clk),
                      "nand_bytes_per_page": d["nand_bytes"] / n, "nand_programs_per_page": d["nand_programs"] / n,
                      "host_pages_per_page": d["host_pages"] / n, "log_delta": d}
        out["batch"], out["batches"], out["page_bytes"] = batch, batches, DB_PAGE
        out["atomic_over_doublewrite_pages_per_s"] = out["atomic"]["pages_per_s"] / out["doublewrite"]["pages_per_s"]
        out["nand_bytes_doublewrite_over_atomic"] = (out["doublewrite"]["nand_bytes_per_page"]
                                                     / out["atomic"]["nand_bytes_per_page"])
        return out


def bad_inputs(dev: AtomDevice) -> dict:
    """The API refuses writes the device cannot make atomic before sending them (a stated error,
    never a split): checked on the bench's device so the figures above are of atomic writes."""
    i, pb = dev.info, dev.info.lba_bytes
    bd = i.atomic_boundary or i.atomic_blocks
    got = {}
    for what, lba, n in (("too_long", 0, i.atomic_blocks + 1), ("crossing", bd - 1, 2)):
        try:
            dev.atomic_write(lba, bytes(n * pb))
            got[what] = "sent"
        except TxError as e:
            got[what] = "refused" if e.local else f"device {e.status}"
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2,4,8,16", help="blocks per Write (2 ... AWU; 'all' = every size)")
    ap.add_argument("--writes", type=int, default=8, help="Writes per size, mode and regime")
    ap.add_argument("--batch", type=int, default=8, help="database pages a batch (part C)")
    ap.add_argument("--batches", type=int, default=6, help="batches per mode (part C)")
    ap.add_argument("--swrite-groups", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "build/bench/atomic.json"))
    a = ap.parse_args()
    import build as simbuild
    commit, dirty = tree()
    exe, fw, cfg = simbuild.build_locked(CONFIG, nvme=True)
    hp = start_device(exe, fw, cfg, ROOT / "build/bench/atomic")
    t0 = time.time()
    try:
        boot(hp, max_cycles=1_000_000_000)
        tr, drv, dev = nvme_up(hp)
        b = Bench(hp, dev, drv, tr, a.seed)
        b.clk = cfg["sys_clk_hz"]
        awu = dev.info.atomic_blocks
        sizes = list(range(2, awu + 1)) if a.sizes == "all" else [int(v) for v in a.sizes.split(",")]
        if awu < 2 or any(not 2 <= n <= awu for n in sizes):
            raise SystemExit(f"sizes {sizes}: the device's atomic unit is {awu} blocks")
        refused = bad_inputs(dev)
        print(f"bench-atomic ({CONFIG}: {cfg['ndie']} dies, {dev.info.lba_bytes} B LBAs, AWU {awu} blocks, "
              f"boundary {dev.info.atomic_boundary}; simulated time at {b.clk / 1e6:.0f} MHz)", flush=True)
        print("A. atomic / plain Writes of n blocks (qd1: FUA one at a time; stream: all + Flush)", flush=True)
        pts = b.sizes(sizes, a.writes)
        print("B. SWRITE vs TX Writes + COMMIT", flush=True)
        sw = b.swrite(a.swrite_groups)
        print("C. page store: doublewrite vs atomic", flush=True)
        ps = b.page_store(a.batch, a.batches)
        log = b.log()
        info = close_checked(hp)
    except BaseException:
        hp.close()
        raise
    clk = cfg["sys_clk_hz"]
    t_xfer_us, bw_pages = program_limit(cfg, dev.info.lba_bytes)
    worst = min((p[r]["atomic_over_plain"], p["blocks"], r) for p in pts for r in REGIMES)
    by_regime = {r: min(p[r]["atomic_over_plain"] for p in pts) for r in REGIMES}
    met = worst[0] >= TARGET
    print(f"\nA. atomic_over_plain (worst over sizes {sizes} and the regimes {', '.join(REGIMES)}) = {worst[0]:.3f} "
          f"at n = {worst[1]} ({worst[2]}); target >= {TARGET}: {'met' if met else 'MISSED'}")
    print("   worst per regime: " + ", ".join(f"{r} {v:.3f}" for r, v in by_regime.items())
          + f"; NAND program bandwidth limit {bw_pages * dev.info.lba_bytes / 1e6:.1f} MB/s")
    print(f"   {'n':>2}  " + "  ".join(f"{r + ' plain/atomic MB/s (ratio)':>34}" for r in REGIMES))
    for p in pts:
        print(f"   {p['blocks']:>2}  " + "  ".join(
            f"{p[r]['plain_mb_s']:>12.1f} / {p[r]['atomic_mb_s']:>6.1f} ({p[r]['atomic_over_plain']:.3f})" for r in REGIMES))
    if sw["measured"]:
        print(f"B. SWRITE {sw['swrite_us']:.0f} us vs TX Writes + COMMIT {sw['tx_commit_write_us']:.0f} us a "
              f"transaction of {sw['ranges']} x {sw['blocks_per_range']} blocks: {sw['swrite_over_tx']:.3f}x")
    else:
        print(f"B. SWRITE not measured: {sw['reason']}")
    d, at = ps["doublewrite"], ps["atomic"]
    print(f"C. 16 KiB pages, batches of {ps['batch']}: doublewrite {d['pages_per_s']:.0f} pages/s, "
          f"{d['nand_bytes_per_page']:.0f} NAND B/page | atomic {at['pages_per_s']:.0f} pages/s, "
          f"{at['nand_bytes_per_page']:.0f} NAND B/page | atomic/doublewrite {ps['atomic_over_doublewrite_pages_per_s']:.2f}x "
          f"pages/s, doublewrite/atomic {ps['nand_bytes_doublewrite_over_atomic']:.2f}x NAND bytes "
          f"(limits: {DB_PAGE} B a page; {bw_pages / (DB_PAGE // dev.info.lba_bytes):.0f} pages/s of program bandwidth)")
    res = {"bench": "atomic", "config": CONFIG, "commit": commit, "tree_dirty": dirty,
           "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), "lba_bytes": dev.info.lba_bytes, "awu_blocks": awu,
           "atomic_boundary": dev.info.atomic_boundary, "clock_mhz": clk / 1e6, "ndie": cfg["ndie"],
           "atomic_over_plain": worst[0], "atomic_over_plain_at": {"blocks": worst[1], "regime": worst[2]},
           "atomic_over_plain_by_regime": by_regime, "target": TARGET, "target_met": met,
           "sizes": pts, "swrite": sw, "page_store": ps, "refused": refused,
           "limit_program_bw_mb_s": bw_pages * dev.info.lba_bytes / 1e6, "t_xfer_us": t_xfer_us,
           "device_log": {k: log[k] for k in ("host_pages", "nand_programs", "wa_x1000", "checkpoints", "gc_runs")},
           "sim_mhz": info.get("sim_mhz"), "wall_s": round(time.time() - t0, 1),
           "args": vars(a)}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"-> {out}; wall {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
