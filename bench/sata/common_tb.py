# SPDX-License-Identifier: Apache-2.0
"""What the two bench benches (bench_sata_tb: ats_sata, bench_nvme_tb: ats_nvme) share: the workload
(4 KiB random WRITEs then random READs of the written LBAs, a closed loop at QD 32), the window
arithmetic and the result file. bench/sata/README.md."""
from __future__ import annotations

import json
import os
import random
from pathlib import Path


def params() -> dict:
    """The run's knobs, from the environment bench_sata.py sets."""
    e = os.environ
    return dict(qd=int(e.get("BENCH_QD", "32")), warm=int(e.get("BENCH_WARM", "64")),
                meas=int(e.get("BENCH_MEAS", "256")), seed=int(e.get("ATS_SEED", "1")),
                num_lbas=int(e.get("BENCH_LBAS", str(1 << 20))), out=e.get("BENCH_OUT", ""),
                selftest=e.get("BENCH_SELFTEST", ""))


def plan(rng: random.Random, p: dict) -> tuple[list[int], list[int]]:
    """LBAs of the write phase (distinct, uniformly random) and of the read phase (the write phase's
    LBAs in a random order: every read returns data the write phase stored). Each phase has warm +
    meas + qd commands (the last qd are the tail that keeps the queue full until the window ends)."""
    n = p["warm"] + p["meas"] + p["qd"]
    w = rng.sample(range(p["num_lbas"]), n)
    r = list(w)
    rng.shuffle(r)
    return w, r


def window(done_cycles: list[float], warm: int, meas: int) -> dict:
    """Completion times (in cycles, any origin) -> the window from completion `warm` to completion
    `warm + meas` (meas commands completed inside it), with its four quarters."""
    t = sorted(done_cycles)
    assert len(t) > warm + meas, (len(t), warm, meas)
    a, b = t[warm], t[warm + meas]
    q = [t[warm + meas * i // 4] for i in range(5)]
    return dict(start=a, end=b, cycles=b - a, n=meas,
                quarter_cycles=[q[i + 1] - q[i] for i in range(4)])


def write_out(p: dict, data: dict) -> None:
    if p["out"]:
        Path(p["out"]).parent.mkdir(parents=True, exist_ok=True)
        Path(p["out"]).write_text(json.dumps(data, indent=1) + "\n")
