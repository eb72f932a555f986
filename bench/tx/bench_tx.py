# SPDX-License-Identifier: Apache-2.0
"""B6: transactional writes against plain writes and against host data journaling, fsync every N
writes (N = 1, 10, 100, 1000), through the NVMe front end of the full-system simulation (SoC +
firmware + NAND die models with FEMU array times), with the transactional host API
(sw/host/atomssd/txapi.py).

The device is the `b5_256` configuration (soc/ats_litex.py: 4 channels x 2 ways, 4 KiB pages,
128 pages a block, 64 blocks a die = 256 MiB raw, 16 Ki LBAs, FEMU array times tR 40 / tPROG 200 /
tBERS 2000 us, 100 MHz) in its NVMe build, formatted offline (bench/recovery: a version-2
checkpoint with a plan of 32 blocks a die: no GC during the run).

One point = one N on a fresh device (the jobs run in parallel, one device each); on it, side by
side, each of four ways of making N application writes of 4 KiB durable, repeated for `groups(N)`
groups. Every group is submitted at once (up to the SQ's depth in flight) and waited for: the
device orders a Flush after the writes queued before it and a commit after its transaction's
writes (rtl/cmdq/README.md rules 4 and 5), so no mode waits for the host between its writes and
its sync command.
  plain    N Writes to random home LBAs + Flush ("fsync");
  journal  host data journaling (ext4 data=journal, TxSSD's baseline): N Writes to the journal
           area (sequential LBAs of a circular region) + Flush, waited for (the home writes must
           not start before the journal is durable), then the same N Writes home + Flush;
  tx       N TX Writes in a transaction (txapi, implicit begin), the last one carrying COMMIT
           (TxSSD's commit block: the transaction commits with that page, no record page);
  tx_cmd   N TX Writes + a TX Commit command (the commit record is one more NAND page).
A transaction holds at most `tx_entries` (64) pages: N > 64 is ceil(N / 64) transactions in the
group, each committed by its own last write (`tx_per_fsync` in the JSON).
Time is simulated cycles at the SoC clock from the first submission of the point to the completion
of its last sync command (the host's own time is zero: submissions are posted MMIO between RUNs);
completions are taken at their MSI (the transport runs until the MSI, so the cycle is exact).
IOPS = application writes / simulated seconds (journal counts each application write once, as
TxSSD does). The modes of one N run on the same device one after the other, order rotated per
group (plain, journal, tx; journal, tx, plain; ...), each group starting after the device idled.

The limits printed with the figures: the NAND program bandwidth min(dies / (tPROG + t_xfer),
channels / t_xfer) with t_xfer = (4096 + 224) bytes x 4 cycles of the 100 MHz clock = 172.8 us
(the core's ONFI SDR timing); the journal halves it; and the fsync-latency floor of a group:
ceil(N / dies) program rounds of tPROG + t_xfer (journal: two of them). `limit` in the table is the
smaller of the two for plain writes.

Output: build/bench/tx.json (keys per point: fsync_every, tx_iops, journal_iops, plain_iops, ...),
build/bench/tx.png, a table on stdout. Targets (issue 14): tx >= 1.5x journal and >= 97 % of plain.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw/host"), str(ROOT / "tests/system"), str(ROOT / "cocotb_tests/lib"),
                str(ROOT / "soc"), str(ROOT / "bench/recovery")]

from atomssd.hostport import U_MSI, HostPort, SimError  # noqa: E402
from atomssd.nvme import NvmeDriver, run_sync  # noqa: E402
from atomssd.nvme_sim import SimTransport, boot  # noqa: E402
from atomssd.txapi import AtomDevice  # noqa: E402

CONFIG = "b5_256"
FSYNC_EVERY = (1, 10, 100, 1000)
T_PROG_US = 200.0                             # FEMU preset tPROG (sim/nand/README.md)
BYTE_CYCLES = 4                               # ONFI SDR byte time: T_WP + T_WH = 2 + 2 clock cycles (ats_ssd_core)
TARGET_VS_JOURNAL, TARGET_VS_PLAIN = 1.5, 0.97
MODES = ("plain", "journal", "tx", "tx_cmd")


def close_checked(hp) -> dict:
    """Closes the simulator session and fails on a harness error, a host-memory error or an ONFI
    timing violation the die models counted (shared by the NVMe benches)."""
    info = hp.close()
    assert not hp.errors, hp.errors[:5]
    assert not info.get("mem_errors") and not info.get("viol_total"), info
    return info


def program_limit(cfg: dict, page_bytes: int) -> tuple[float, float]:
    """(one page + spare's transfer time on its ONFI bus in us, pages a second the dies can program:
    every die programming back to back, or every bus busy with transfers, whichever is lower)."""
    t_xfer_us = (page_bytes + cfg["spare_bytes"]) * BYTE_CYCLES / cfg["sys_clk_hz"] * 1e6
    return t_xfer_us, min(cfg["ndie"] / (T_PROG_US + t_xfer_us), cfg["num_chan"] / t_xfer_us) * 1e6


def groups_for(n: int, scale: float) -> int:
    """Groups per mode: about 96 application writes at least, 2 groups at least."""
    return max(2, round(max(96 // n, 1) * scale)) if n < 1000 else max(1, round(scale))


class MsiTransport(SimTransport):
    """Waiting runs until the next MSI (or the poll budget): a completion is seen at its cycle.
    The driver counts a poll as its whole budget, so its own timeout is off; a hang is `quiet`
    budgets in a row without an MSI (HANG_CYCLES of simulated time with nothing completing)."""
    POLL = 200_000
    QUIET = 100                                   # x POLL = 20 M cycles = 200 ms at 100 MHz

    def __init__(self, hp: HostPort):
        super().__init__(hp)
        self.quiet = 0

    def wait(self, cycles: int) -> None:
        why = self.hp.run(max(int(cycles), 1), U_MSI)
        self.quiet = 0 if why & U_MSI else self.quiet + 1
        if self.quiet >= self.QUIET:
            raise SimError(f"no completion for {self.QUIET * self.POLL} cycles (cycle {self.hp.cycle}): a hang")


def start_device(exe: Path, fw: Path, cfg: dict, wdir: Path) -> HostPort:
    """A device formatted offline into wdir/dev (bench/recovery) and its simulator session, not yet
    booted (shared by the NVMe benches: bench/tx, bench/atomic, bench/difftx)."""
    from bench_recovery import offline_format
    shutil.rmtree(wdir, ignore_errors=True)
    imgs = offline_format(wdir / "dev", cfg)
    return HostPort(exe, fw, [imgs / f"die{d}.img" for d in range(cfg["ndie"])], cwd=wdir)


def nvme_up(hp: HostPort) -> tuple:
    """After the boot: the MSI transport, the NVMe driver brought up with one I/O queue of 256 entries,
    and the transactional device on it: (tr, drv, dev)."""
    tr = MsiTransport(hp)
    drv = NvmeDriver(timeout_cycles=1 << 62, poll_cycles=MsiTransport.POLL, use_irq=True)
    run_sync(drv.bring_up(io_queues=1, qsize=256), tr)
    return tr, drv, AtomDevice(drv, tr)


def run_point(n: int, scale: float, seed: int, work: Path) -> dict:
    import build as simbuild
    exe, fw, cfg = simbuild.build_locked(CONFIG, nvme=True)
    hp = start_device(exe, fw, cfg, work.resolve() / f"n{n}")
    t0 = time.time()
    try:
        boot(hp, max_cycles=1_000_000_000)
        boot_cycles = hp.cycle
        tr, drv, dev = nvme_up(hp)
        pb, nl, te = dev.info.lba_bytes, dev.info.num_lbas, dev.info.tx_entries
        home_n = nl // 2                          # home LBAs [0, nl/2); journal area [nl/2, nl)
        jbase, jlen = nl // 2, nl // 2
        rng = random.Random(seed * 7919 + n)
        jpos = 0
        cyc = {m: 0 for m in MODES}
        cmds = {m: 0 for m in MODES}
        g = groups_for(n, scale)
        txs = []

        def data() -> bytes:
            return rng.randbytes(16) * (pb // 16)

        def idle() -> None:
            """Every command completed; let the write-back of the previous mode drain (a flush)."""
            dev.flush()

        for gi in range(g):
            order = MODES[gi % len(MODES):] + MODES[:gi % len(MODES)]
            for m in order:
                idle()
                lbas = rng.sample(range(home_n), n)
                c0 = hp.cycle
                if m == "plain":
                    dev.wait([c for l in lbas for c in dev.submit_write(l, data())] + [dev.submit_flush()])
                    cmds[m] += n + 1
                elif m == "journal":
                    jl = []
                    for _ in range(n):
                        jl.append(jbase + jpos)
                        jpos = (jpos + 1) % jlen
                    dev.wait([c for l in jl for c in dev.submit_write(l, data())] + [dev.submit_flush()])
                    dev.wait([c for l in lbas for c in dev.submit_write(l, data())] + [dev.submit_flush()])
                    cmds[m] += 2 * n + 2
                else:
                    pend = []
                    for k in range(0, n, te):
                        tx = dev.begin(explicit=False)
                        part = lbas[k:k + te]
                        for i, l in enumerate(part):
                            pend += tx.submit_write(l, data(), commit=m == "tx" and i == len(part) - 1)
                        if m == "tx_cmd":
                            pend.append(tx.submit_commit())
                        txs.append(tx)
                    dev.wait(pend)
                    for tx in txs:
                        tx.complete()
                    txs.clear()
                    cmds[m] += n + (-(-n // te) if m == "tx_cmd" else 0)
                cyc[m] += hp.cycle - c0
        idle()
        log = run_sync(drv.device_log(), tr)
        info = close_checked(hp)
    except BaseException:
        hp.close()
        raise
    clk = cfg["sys_clk_hz"]
    writes = n * g
    iops = {m: writes / (cyc[m] / clk) for m in MODES}
    ndie = cfg["ndie"]
    t_xfer_us, bw = program_limit(cfg, pb)
    rounds = -(-n // ndie)
    floor_us = rounds * (T_PROG_US + t_xfer_us)
    return {
        "fsync_every": n, "groups": g, "app_writes": writes, "config": CONFIG, "page_bytes": pb, "ndie": ndie,
        "clock_mhz": clk / 1e6, "tx_entries": te, "tx_per_fsync": -(-n // te),
        "tx_iops": iops["tx"], "journal_iops": iops["journal"], "plain_iops": iops["plain"],
        "tx_commit_cmd_iops": iops["tx_cmd"], "tx_cmd_vs_plain": iops["tx_cmd"] / iops["plain"],
        "tx_vs_journal": iops["tx"] / iops["journal"], "tx_vs_plain": iops["tx"] / iops["plain"],
        "cycles": cyc, "commands": cmds,
        "us_per_fsync": {m: cyc[m] / clk * 1e6 / g for m in MODES},
        "t_xfer_us": t_xfer_us, "limit_bw_iops": bw, "limit_bw_iops_journal": bw / 2,
        "limit_latency_iops": n / (floor_us * 1e-6), "limit_latency_iops_journal": n / (2 * floor_us * 1e-6),
        "device_log": {k: log[k] for k in ("host_pages", "nand_programs", "wa_x1000", "checkpoints", "gc_runs")
                       if k in log},
        "boot_cycles": boot_cycles, "sim_mhz": info.get("sim_mhz"), "wall_s": round(time.time() - t0, 1),
    }


def plot(points: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = [p["fsync_every"] for p in points]
    for key, s, lab in (("plain_iops", "o-", "plain writes + Flush"), ("tx_iops", "s-", "tx (COMMIT on the last write)"),
                        ("tx_commit_cmd_iops", "d-", "tx + TX Commit command"),
                        ("journal_iops", "^--", "host data journaling")):
        a.plot(x, [p[key] for p in points], s, label=lab)
    a.plot(x, [min(p["limit_bw_iops"], p["limit_latency_iops"]) for p in points], "k:",
           label="NAND limit (program bandwidth, fsync latency)")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("fsync every N writes")
    a.set_ylabel("4 KiB writes / simulated s")
    a.legend(fontsize=8)
    a.set_title("B6: IOPS through the NVMe front end")
    b.plot(x, [p["tx_vs_journal"] for p in points], "s-", label="tx / journal")
    b.plot(x, [p["tx_vs_plain"] for p in points], "o-", label="tx / plain")
    b.axhline(TARGET_VS_JOURNAL, color="C0", ls=":", label=f"target tx/journal {TARGET_VS_JOURNAL}")
    b.axhline(TARGET_VS_PLAIN, color="C1", ls=":", label=f"target tx/plain {TARGET_VS_PLAIN}")
    b.axhspan(1.32, 1.50, color="0.9", label="TxSSD: 1.32-1.50x journaling")
    b.set_xscale("log")
    b.set_xlabel("fsync every N writes")
    b.set_ylabel("ratio")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fsync-every", default=",".join(map(str, FSYNC_EVERY)))
    ap.add_argument("--scale", type=float, default=1.0, help="groups per point x this")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build/bench/tx.json"))
    a = ap.parse_args()
    ns = [int(v) for v in a.fsync_every.split(",")]
    work = ROOT / "build/bench/tx"
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "sim/soc"))
    import build as simbuild
    simbuild.build_locked(CONFIG, nvme=True)                      # once, before the workers
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        points = list(ex.map(run_point, ns, [a.scale] * len(ns), [a.seed] * len(ns), [work] * len(ns)))
    points.sort(key=lambda p: p["fsync_every"])
    print(f"B6 ({CONFIG}: {points[0]['ndie']} dies, {points[0]['page_bytes']} B pages, FEMU tPROG "
          f"{T_PROG_US:.0f} us, {points[0]['clock_mhz']:.0f} MHz; simulated time)")
    print(f"{'N':>5} {'groups':>6} {'plain':>9} {'journal':>9} {'tx':>9} {'tx_cmd':>9} {'tx/jrnl':>8} "
          f"{'tx/plain':>8} {'limit':>9}  us/fsync plain/journal/tx/tx_cmd")
    ok = True
    for p in points:
        lim = min(p["limit_bw_iops"], p["limit_latency_iops"])
        u = p["us_per_fsync"]
        print(f"{p['fsync_every']:>5} {p['groups']:>6} {p['plain_iops']:>9.0f} {p['journal_iops']:>9.0f} "
              f"{p['tx_iops']:>9.0f} {p['tx_commit_cmd_iops']:>9.0f} {p['tx_vs_journal']:>8.2f} "
              f"{p['tx_vs_plain']:>8.3f} {lim:>9.0f}  {u['plain']:.0f}/{u['journal']:.0f}/{u['tx']:.0f}/{u['tx_cmd']:.0f}")
        p["met_vs_journal"] = p["tx_vs_journal"] >= TARGET_VS_JOURNAL
        p["met_vs_plain"] = p["tx_vs_plain"] >= TARGET_VS_PLAIN
        ok &= p["met_vs_journal"] and p["met_vs_plain"]
    print(f"targets: tx >= {TARGET_VS_JOURNAL}x journal and >= {TARGET_VS_PLAIN:.0%} of plain at every N: "
          f"{'met' if ok else 'MISSED'}; wall {time.time() - t0:.0f} s")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    res = {"bench": "B6", "config": CONFIG, "points": points, "targets_met": ok,
           "target_vs_journal": TARGET_VS_JOURNAL, "target_vs_plain": TARGET_VS_PLAIN}
    out.write_text(json.dumps(res, indent=1))
    plot(points, out.with_suffix(".png"))
    print(f"-> {out}, {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
