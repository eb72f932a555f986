# SPDX-License-Identifier: Apache-2.0
"""B5 with the S-Log (issue 40 item 4, docs/persistence.md §10.4-§10.5, INV-BOUND): recovery cycles on
the `sim_slog` SoC (the backend's S-Log, SLOAD) against (a) the S-Log records in the active log and
(b) the live fragments the checkpoint names, whose log pages lie before the active log.

Every point: die images written by the reference writer (tests/system/slog_sim.py, the sim_slog
geometry: 2 x 2 dies, 32 blocks of 16 pages of 512 bytes) are booted by the real firmware; its
`recovery: N pages read, C cycles` line is the figure. The writer's checkpoints here close every
die's open block first, so that the active log (the checkpoint's plan) holds no page written before
the checkpoint: an old log page is read at recovery only if the recovery reads outside its bound.
The check is test_slog_fw's `boot_and_check`: the firmware's F (console `slog`) equals the recovery
oracle's (cocotb_tests/lib/atstb/recovery_oracle.py), the oracle's base + F equals the writer's own
logical state (slog_sim `expected`), and every LPN read through the host port (the backend's merge of
the fragments SLOAD gave it) equals it; a mismatch is a violation (the benchmark exits 1).

Workloads (seeded; every record one log page, the cut after the last program completed):
- log sweep (a): 64 LPNs written, a checkpoint, then `n` S-Log records of one fragment each (4..64
  bytes at a random 4-aligned offset, at most SLOG_FRAGS = 4 on an LPN);
- ckpt sweep (b): 80 LPNs written, `m` fragments on LPNs 0..63 in records of 8 fragments (16 bytes
  each), a checkpoint (version 3: its S-Log section names the m fragments and their m / 8 log pages),
  then a fixed active log of `n` one-fragment records on LPNs 64..79.
"""
from __future__ import annotations

import importlib.util
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYS = ROOT / "tests/system"
CFG = "sim_slog"
NLPN = 96


def _load(name: str, path: Path):
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = sys.modules[name] = importlib.util.module_from_spec(spec)    # its dataclasses need it there
        spec.loader.exec_module(mod)
    return mod


def _dev_class():
    sim = _load("ats_sys_slog_sim", SYS / "slog_sim.py")

    class Dev(sim.SimDev):
        def checkpoint(self) -> None:
            # every die's open block closed (its unwritten pages left erased, outside any plan): the
            # new active log starts in fresh blocks, so the recovery's plan holds no older page
            for d in range(self.geo.ndie):
                blk, pg = self.open[d]
                if pg > 0 and self.free[d]:
                    nb = self.free[d].pop(0)
                    self.order[d].append(nb)
                    self.open[d] = (nb, 0)
            super().checkpoint()

    return sim, Dev


def build_images(dest: Path, kind: str, n_active: int, n_ckpt: int, seed: int):
    """The writer's device after the workload, its images at a cut after everything completed."""
    sim, Dev = _dev_class()
    rng = random.Random(f"b5slog-{kind}-{n_active}-{n_ckpt}-{seed}")
    dev = Dev(rng, nlpn=NLPN)
    nbase = 64 if kind == "log" else 80
    for lpn in range(nbase):
        dev.write(lpn)
    if kind == "ckpt":
        assert n_ckpt % 8 == 0 and n_ckpt <= 4 * 64
        lp = [l for l in range(64) for _ in range(4)][:n_ckpt]          # LPN l: up to 4 fragments
        rng.shuffle(lp)
        i = 0
        while i < len(lp):
            grp = lp[i:i + 8]
            i += 8
            # one record: 8 fragments (an LPN twice in a record: consecutive vers, slog_sim handles it)
            dev.slog_tx(rng.randint(1, 4), [], [(l, 4 * rng.randrange(0, 124), rng.randbytes(16)) for l in grp])
        dev.checkpoint()
        act = list(range(64, 80))
    else:
        dev.checkpoint()
        act = list(range(64))
    # the active log: n one-fragment records, each on an LPN with fewer than 4 fragments
    for _ in range(n_active):
        c = [l for l in act if len(dev.F.get(l, [])) < 4]
        assert c, "no LPN left for a fragment"
        ln = 4 * rng.randint(1, 16)
        dev.slog_tx(rng.randint(1, 4), [], [(rng.choice(c), 4 * rng.randrange(0, (512 - ln) // 4 + 1),
                                                rng.randbytes(ln))])
    cut = max(r.done for r in dev.reqs) + 1
    dest.mkdir(parents=True, exist_ok=True)
    dev.images(dest, cut, "tail")
    return dev, cut


def run_slog_point(kind: str, n_active: int, n_ckpt: int, seed: int, work: Path) -> dict:
    sys.path[:0] = [str(SYS), str(ROOT / "cocotb_tests/lib"), str(ROOT / "soc")]
    import harness
    from atstb.recovery_oracle import recover
    tfw = _load("ats_b5_test_slog_fw", SYS / "test_slog_fw.py")
    _, _, cfg = harness.build(CFG)
    t0 = time.time()
    wdir = work.resolve() / f"slog_{kind}_a{n_active}_c{n_ckpt}"
    dev, cut = build_images(wdir / "template", kind, n_active, n_ckpt, seed)
    geo = dev.geo
    rec = recover(sorted((wdir / "template").glob("die*.img")), geo, cfg["num_tx"])
    sysm = harness.System(wdir / "run", seed, cfg_name=CFG, template=wdir / "template")
    sysm.uart_log.unlink(missing_ok=True)             # (System appends: a rerun's directory holds the last run's)
    sysm.boot_limit = 100_000_000      # 1 s simulated (128 records recover in 8 M cycles); a failed recovery waits it
    viol, text = 0, ""
    try:
        st = tfw.boot_and_check(sysm, geo, rec, dev, cut, f"B5 slog {kind} active {n_active} ckpt {n_ckpt}")
    except AssertionError as e:                       # a mismatch with the oracle / the writer's state
        viol, text, st = 1, str(e)[:3000], {}
    boot = sysm.uart_log.read_text(errors="replace")
    ms = re.findall(r"recovery: (\d+) pages read, (\d+) cycles", boot)
    mc = re.findall(r"recovery: checkpoint (\d+) .*?scan_from (\d+), (\d+) mappings\); (\d+) records", boot)
    ml = re.findall(r"recovery: slog: loaded lpgn (\d+), (\d+) log pages, (\d+) LPNs", boot)
    if not ms:
        viol, text = 1, text or boot[-3000:]
    pages, cycles = (int(ms[0][0]), int(ms[0][1])) if ms else (0, 0)
    clk = cfg["sys_clk_hz"]
    nfr = sum(len(f) for f in rec.frags.values())
    raw = geo.ndie * geo.blocks * geo.ppb
    t_r_ns = 40_000 / cfg["array_time_div"]           # the die model's tR in this configuration
    scan_pages = raw - 2 * geo.ppb
    return {
        "kind": kind, "config": CFG, "seed": seed, "active_records": n_active, "ckpt_fragments": n_ckpt,
        "ckpt_log_pages": n_ckpt // 8, "oracle_fragments": nfr,
        "oracle_lpns_with_f": len([f for f in rec.frags.values() if f]),
        "recovery_cycles": cycles, "recovery_us": cycles / clk * 1e6, "recovery_pages": pages,
        "log_records": int(mc[0][3]) if mc else -1, "ckpt_mappings": int(mc[0][2]) if mc else -1,
        "sload_log_pages": int(ml[0][1]) if ml else 0, "sload_lpns": int(ml[0][2]) if ml else 0,
        "fw_slog": st, "clock_mhz": clk / 1e6, "raw_pages": raw, "page_bytes": geo.page_bytes,
        "full_scan_bound_us": scan_pages * t_r_ns / geo.ndie / 1e3, "t_r_ns": t_r_ns,
        "lpns_checked": NLPN, "violations": viol, "violation_text": text,
        "wall_s": round(time.time() - t0, 1),
    }


def slope(points: list[dict], x: str) -> float:
    """Least-squares cycles per unit of x."""
    xs = [p[x] for p in points]
    ys = [p["recovery_cycles"] for p in points]
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((a - mx) ** 2 for a in xs)
    return sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / den if den else 0.0
