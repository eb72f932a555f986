# SPDX-License-Identifier: Apache-2.0
"""B5, "Old pages": recovery after a checkpoint taken in the middle of the dies' open blocks, with the
firmware's shortcut (docs/persistence.md section 6 step 2 "Old pages": a plan block whose page 0 is
older than the checkpoint is searched, not read from page 1) and without it, on the same images in
one run.

Every point: a `b5_<MiB>` device (bench_recovery.py's: 4 KiB pages, 128 pages a block, 8 dies, FEMU
array times, 100 MHz) formatted offline, booted, given `writes` random page writes (FLUSH at the end:
about writes / 8 pages in each die's open block), a checkpoint (console `ckpt`, no transaction open:
`scan_from` = `seq_base`), then 40 mixed commands (bench_recovery.py's workload) and a power cut. The
images after the cut are recovered twice: by the tree's firmware (with the shortcut) and by the same
firmware built with `-DATS_SCAN_FROM_0` (every plan block from page 0: the rule before). Both
recoveries' states are checked against the recovery oracle and the host's model (every LBA the mix
touched and 64 sampled written LBAs read back); the tree's step-2 reads must equal
`recovery_oracle.scan_reads` of the images (the harness's check). Printed per point: pages read and
recovery cycles of both, their ratio, and the floor: the pages the active log holds (the mix's
records) plus the checkpoint.

  python bench/recovery/bench_old_pages.py [--caps 256] [--writes 256,512,896] [--seed 1] [--jobs 2]

Output: build/bench/recovery_old.json and a table. The figures: bench/recovery/README.md "Old pages".
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests/system"), str(ROOT / "cocotb_tests/lib"), str(ROOT / "soc")]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import System, build, fill  # noqa: E402
from bench_recovery import offline_format  # noqa: E402

REC_RE = re.compile(r"recovery: (\d+) pages read, (\d+) cycles")
SCAN_RE = re.compile(r"recovery: scan: (\d+) pages read, (\d+) blocks searched past their old pages, (\d+) pages not read")
SUM_RE = re.compile(r"recovery: checkpoint (\d+) .*?seq_base (\d+), scan_from (\d+), (\d+) mappings\); (\d+) records, "
                    r"prefix (\d+); applied (\d+)")


def firmware_scan0(cfg_name: str, out: Path) -> Path:
    """The tree's firmware for cfg_name built with -DATS_SCAN_FROM_0 (every plan block from page 0)."""
    r = subprocess.run(["make", "-s", "-C", str(ROOT / "sw/firmware"), f"SOC_DIR={ROOT / 'build/soc' / cfg_name}",
                        f"OUT={out}", "XCFLAGS=-DATS_SCAN_FROM_0"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return out / "firmware.init"


def recover_once(sysm: System, model, oracle, check: set[int], what: str) -> dict:
    sysm.model = model
    assert sysm.start(), f"{what}: recovery boot was cut"
    boot = sysm.hp.uart_text().split("atomssd firmware")[-1]
    m, ms, mx = REC_RE.search(boot), SCAN_RE.search(boot), SUM_RE.search(boot)
    assert m and ms and mx, boot[-2000:]
    sysm.verify(check, oracle, what)
    sysm.stop()
    return {"pages": int(m.group(1)), "cycles": int(m.group(2)), "scan_pages": int(ms.group(1)),
            "searched": int(ms.group(2)), "unread": int(ms.group(3)), "records": int(mx.group(5)),
            "prefix": int(mx.group(6)), "applied": int(mx.group(7)), "seq_base": int(mx.group(2)),
            "scan_from": int(mx.group(3)),
            "violations": len(sysm.model.violations) + len(sysm.errors),
            "violation_text": (sysm.model.violations + sysm.errors)[:5]}


def run_old_point(cap: int, writes: int, seed: int, work: Path) -> dict:
    cfg_name = f"b5_{cap}"
    _, _, cfg = build(cfg_name)
    wdir = work.resolve() / f"old_{cfg_name}_w{writes}"
    shutil.rmtree(wdir, ignore_errors=True)
    fw0 = firmware_scan0(cfg_name, wdir / "fw_scan0")
    tmpl = offline_format(wdir / "template", cfg)
    sysm = System(wdir / "run", seed, cfg_name=cfg_name, template=tmpl)
    sysm.boot_limit = 1_000_000_000
    t0 = time.time()
    assert sysm.start(), "first boot was cut"
    lbas = list(range(cfg["num_lbas"]))
    rng = random.Random(seed)
    fill(sysm, writes, lbas, flush_every=max(writes, 1) + 1)
    written = sorted(sysm.model.vers)
    ck = sysm.console("ckpt", cycles=200_000_000)
    assert "ckpt: 0" in ck, ck[-500:]
    touched = sysm.workload(40, lbas)
    sysm.settle_inflight(400)
    sysm.hp.cut_now()
    info = sysm.hp.info()
    sysm.stop()
    sysm.settle_cut(info["accepted"])
    oracle = sysm.oracle()
    imgs = wdir / "after_cut"
    imgs.mkdir()
    for d, p in enumerate(sysm.images):
        shutil.copy(p, imgs / f"die{d}.img")
    check = touched | set(rng.sample(written, min(64, len(written))))
    model0 = copy.deepcopy(sysm.model)
    new = recover_once(sysm, sysm.model, oracle, check, f"old pages {cfg_name} w{writes} (shortcut)")
    s0 = System(wdir / "run_scan0", seed, cfg_name=cfg_name, template=imgs)
    s0.boot_limit = 1_000_000_000
    s0.fw = str(fw0)
    s0.check_scan = False
    old = recover_once(s0, model0, oracle, check, f"old pages {cfg_name} w{writes} (from page 0)")
    for k in ("records", "prefix", "applied", "seq_base", "scan_from"):
        assert new[k] == old[k], (k, new, old)
    res = {"capacity_mib": cap, "config": cfg_name, "writes": writes, "ndie": cfg["ndie"],
           "pages_per_block": cfg["pages_per_block"], "clock_mhz": cfg["sys_clk_hz"] / 1e6,
           "shortcut": new, "from_page_0": old,
           "pages_ratio": old["pages"] / new["pages"], "cycles_ratio": old["cycles"] / new["cycles"],
           "log_records": new["records"],
           "violations": new["violations"] + old["violations"], "wall_s": round(time.time() - t0, 1)}
    (wdir / "point.json").write_text(json.dumps(res, indent=1))
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--caps", default="256", help="raw capacities (MiB): b5_<MiB> configurations")
    ap.add_argument("--writes", default="256,512,896", help="page writes before the checkpoint")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default=str(ROOT / "build/bench/recovery_old.json"))
    a = ap.parse_args()
    caps = [int(x) for x in a.caps.split(",")]
    ws = [int(x) for x in a.writes.split(",")]
    for c in caps:
        build(f"b5_{c}")
    work = ROOT / "build/bench/recovery"
    t0 = time.time()
    with ProcessPoolExecutor(a.jobs) as ex:
        futs = {(c, w): ex.submit(run_old_point, c, w, a.seed, work) for c in caps for w in ws}
        pts = [futs[k].result() for k in sorted(futs)]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True).stdout.strip())
    res = {"benchmark": "B5 old pages", "commit": commit, "tree_dirty": dirty,
           "command": "python bench/recovery/bench_old_pages.py " + " ".join(sys.argv[1:]), "points": pts,
           "violations": sum(p["violations"] for p in pts), "wall_s": round(time.time() - t0, 1)}
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(res, indent=1))
    print("B5 old pages (commit %s%s, seed %d): a checkpoint after the writes, 40 mixed commands, a cut; "
          "the same images recovered with the shortcut and from page 0" % (commit, " dirty" if dirty else "", a.seed))
    print("%9s %6s %7s %9s %9s %8s %8s %12s %12s %8s %8s %5s" % (
        "capacity", "writes", "log rec", "searched", "unread", "pages", "pages/0", "cycles", "cycles/0",
        "pg ×", "cyc ×", "viol"))
    for p in pts:
        n, o = p["shortcut"], p["from_page_0"]
        print("%6d MiB %6d %7d %9d %9d %8d %8d %12d %12d %7.2fx %7.2fx %5d" % (
            p["capacity_mib"], p["writes"], p["log_records"], n["searched"], n["unread"], n["pages"], o["pages"],
            n["cycles"], o["cycles"], p["pages_ratio"], p["cycles_ratio"], p["violations"]))
    print("floor of step 2 (the pages the active log holds, about its records, plus per die its open "
          "block's first erased page and its next block's page 0): compare `pages` with log rec + 2 x dies")
    print("violations: %d; json %s" % (res["violations"], a.json))
    return 1 if res["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
