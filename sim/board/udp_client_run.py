# SPDX-License-Identifier: Apache-2.0
"""The host side of the board host-link simulation: `atomssd.udplink.UdpDevice` in its own process,
talking over a real UDP socket to the simulated board (test_board_hostlink.py's socket model).
Prints one JSON line with its counts; exits 1 on a data mismatch or a link error.

    mix N      random WRITE / READ / TRIM / FLUSH / RFLUSH / IDENTIFY, read data checked against a dict
    wstream N  N one-page WRITEs of seeded data, NSLOT in flight (throughput)
    rstream N  N one-page READs of what wstream wrote, checked, NSLOT in flight
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw" / "host"), str(ROOT / "sw" / "host" / "tests")]

from atomssd.hostport import OP  # noqa: E402
from atomssd.udplink import UdpDevice  # noqa: E402


def page_of(seed: int, lba: int, page: int) -> bytes:
    return random.Random(seed * 1_000_003 + lba).randbytes(page)


def stream(dev: UdpDevice, mode: str, n: int, seed: int, nlba: int, page: int) -> dict:
    pending: dict[tuple[int, int], int] = {}
    issued = done = 0
    while done < n:
        while issued < n and dev.free_tags:
            lba = issued % nlba
            if mode == "wstream":
                tag = dev.submit(OP["WRITE"], lba, 0, page_of(seed, lba, page))
            else:
                tag = dev.submit(OP["READ"], lba, 0)
            pending[tag, dev.seq] = lba
            issued += 1
        for p in dev.poll(1.0):
            lba = pending.pop((p.tag, p.user["seq"]))
            if p.cpl.status != 0:
                raise SystemExit(f"{mode} lba {lba}: status {p.cpl.status:#x}")
            if mode == "rstream" and p.data != page_of(seed, lba, page):
                raise SystemExit(f"rstream lba {lba}: data differ")
            done += 1
    return dict(done=done)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["mix", "wstream", "rstream"])
    ap.add_argument("n", type=int)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nlba", type=int, default=64)
    ap.add_argument("--page", type=int, default=4096)
    ap.add_argument("--nslot", type=int, default=4)
    ap.add_argument("--slot-bytes", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=2.0)
    a = ap.parse_args()
    dev = UdpDevice("127.0.0.1", a.port, page_bytes=a.page, nlba=a.nlba, nslot=a.nslot, slot_bytes=a.slot_bytes,
                    timeout=a.timeout, max_timeout=4 * a.timeout, max_retries=20)
    t0 = time.monotonic()
    try:
        counts = run(dev, a)
    except BaseException:
        print(json.dumps(dict(dev.stats, retry_log=dev.retry_log)), file=sys.stderr, flush=True)
        raise
    counts.update(dev.stats, wall_s=round(time.monotonic() - t0, 2), retry_log=dev.retry_log)
    print(json.dumps(counts), flush=True)
    dev.close()


def run(dev: UdpDevice, a) -> dict:
    if a.mode == "mix":
        from test_udplink import random_workload
        return random_workload(dev, None, random.Random(a.seed), a.n, nlba=a.nlba, slot_bytes=a.slot_bytes)
    else:
        counts = stream(dev, a.mode, a.n, a.seed, a.nlba, a.page)
    return counts


if __name__ == "__main__":
    main()
