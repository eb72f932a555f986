# SPDX-License-Identifier: Apache-2.0
"""The host side of the board host-link simulation: `atomssd.udplink.UdpDevice` in its own process,
talking over a real UDP socket to the simulated board (test_board_hostlink.py's socket model).
Prints one JSON line with its counts; exits 1 on a data mismatch or a link error.

    mix N      random WRITE / READ / TRIM / FLUSH / RFLUSH / IDENTIFY, read data checked against a dict
    wstream N  N one-page WRITEs of seeded data, NSLOT in flight (throughput)
    rstream N  N one-page READs of what wstream wrote, checked, NSLOT in flight
    boot N     the whole board SoC (test_board_soc.py): IDENTIFY, sent at once and retried while the
               device boots; then a fixed opening (reads of a never-written and a trimmed LBA, an
               overwrite, a FLUSH) and N random one-page WRITE / READ / TRIM / FLUSH on --lbas LBAs,
               one at a time, each READ checked against a dict, and the LBAs read back at the end
    pfwrite N  the power-fail test with the system tests' invariants checker (tests/system/model.py
               `Model`, `pf_history`): IDENTIFY as in boot, LBAs 0..N-1 written with the Model's
               self-identifying pages (NSLOT in flight), then FLUSH
    pfrewrite N  the history's second part, without a FLUSH (killed at the power cut): LBAs
               0..N2-1 rewritten and N..N+N2/2-1 written for the first time
    pfcheck N  after the reboot: IDENTIFY, READ every LBA of the history, each checked by the Model
               (INV-LBA, INV-DUR: the flushed version or a later accepted one, whole; never garbage,
               another LBA's data or an older version) and INV-ATOM / INV-ORDER over all of them
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw" / "host"), str(ROOT / "sw" / "host" / "tests"), str(ROOT / "tests" / "system")]

from atomssd.device import decode_identify  # noqa: E402
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


def put_pages(dev: UdpDevice, pages: list[tuple[int, bytes]]) -> int:
    """One-page WRITEs of (lba, data), NSLOT in flight; every completion must be OK."""
    pending: dict[tuple[int, int], int] = {}
    i = done = 0
    while done < len(pages):
        while i < len(pages) and dev.free_tags:
            lba, data = pages[i]
            pending[dev.submit(OP["WRITE"], lba, 0, data), dev.seq] = lba
            i += 1
        for p in dev.poll(1.0):
            lba = pending.pop((p.tag, p.user["seq"]))
            if p.cpl.status != 0:
                raise SystemExit(f"WRITE lba {lba}: status {p.cpl.status:#x}")
            done += 1
    return done


def pf_history(n: int, n2: int, page: int):
    """The power-fail test's history in the system tests' Model (tests/system/model.py): LBAs 0..n-1
    written (versions 1..n), then FLUSHed; then, without a FLUSH, LBAs 0..n2-1 rewritten and
    n..n+n2//2-1 written for the first time. Returns (model, [(Ver, lba, data)] first, second)."""
    from model import Model
    m = Model(n + n2, page)
    first = [(*m.new_write(lba), lba) for lba in range(n)]
    second = [(*m.new_write(lba), lba) for lba in list(range(n2)) + list(range(n, n + n2 // 2))]
    return m, [(v, lba, d) for v, d, lba in first], [(v, lba, d) for v, d, lba in second]


def pf_check(dev: UdpDevice, n: int, n2: int, page: int) -> dict:
    """Every LBA of pf_history read back and checked by the Model: the first part completed and
    durable (FLUSH completed), the second accepted (possibly in the device when power failed), none
    of it completed as far as the checker knows (the host was killed)."""
    idn, t_id = identify(dev)
    m, first, second = pf_history(n, n2, page)
    for v, _, _ in first:
        v.accepted = v.completed = v.durable = True
    for v, _, _ in second:
        v.accepted = True
    shown, counts = {}, dict(first=0, second=0, zero=0)
    for lba in sorted({lba for _, lba, _ in first + second}):
        ver = m.check_page(lba, dev.read(lba), "after the power cut")
        if ver is not None:
            shown[lba] = ver
            counts["zero" if ver.version == 0 else "first" if ver.version <= n else "second"] += 1
    m.check_all(shown, "after the power cut")
    if m.violations:
        raise SystemExit("pfcheck: " + "; ".join(m.violations))
    return dict(counts, done=len(shown), identify=idn, identify_wall_s=round(t_id, 1),
                versions={lba: v.version for lba, v in sorted(shown.items())})


def identify(dev: UdpDevice) -> tuple[dict, float]:
    """IDENTIFY, retried while the device boots (minutes of wall time in the simulation)."""
    t0 = time.monotonic()
    p = dev.wait(dev.submit(OP["IDENTIFY"]), timeout=7200.0)
    if p.cpl.status != 0:
        raise SystemExit(f"IDENTIFY: status {p.cpl.status:#x}")
    return decode_identify(p.data), time.monotonic() - t0


def boot(dev: UdpDevice, n: int, seed: int, nlba: int, page: int, lbas: int = 0) -> dict:
    """IDENTIFY (retried while the device boots), then on `lbas` LBAs (0: all `nlba`; few: every
    command meets earlier ones' LBAs) a fixed opening (a READ of a never-written LBA, a WRITE and its
    overwrite read back, a TRIM and a READ of the trimmed LBA, a WRITE, FLUSH and READ of another)
    and `n` random one-page WRITE / READ / TRIM / FLUSH, one at a time, every READ checked against
    the dict (`ref`: an LBA absent from it, never written or trimmed, reads zeros), and at the end
    every LBA of the window read back. The counts say what the READs met."""
    idn, t_id = identify(dev)
    rng = random.Random(seed)
    lbas = lbas or nlba
    ref: dict[int, bytes] = {}
    written: set[int] = set()
    counts = dict(write=0, overwrite=0, read=0, read_never=0, read_trimmed=0, trim=0, flush=0, script=0)
    zero = bytes(page)

    def write(lba: int) -> None:
        data = rng.randbytes(page)
        dev.write(lba, data)
        counts["overwrite"] += lba in ref
        ref[lba] = data
        written.add(lba)
        counts["write"] += 1

    def read(lba: int, what: str) -> None:
        got = dev.read(lba)
        if got != ref.get(lba, zero):
            state = "written" if lba in ref else "trimmed" if lba in written else "never written"
            raise SystemExit(f"{what} {lba} ({state}): data differ from the dict")
        counts["read"] += 1
        if lba not in ref:
            counts["read_trimmed" if lba in written else "read_never"] += 1

    def trim(lba: int) -> None:
        dev.trim(lba)
        ref.pop(lba, None)
        counts["trim"] += 1

    def flush() -> None:
        dev.flush()
        counts["flush"] += 1

    a, b = rng.sample(range(lbas), 2)
    for step in (lambda: read(a, "READ"), lambda: write(a), lambda: write(a), lambda: read(a, "READ"),
                 lambda: trim(a), lambda: read(a, "READ"), lambda: write(b), flush, lambda: read(b, "READ")):
        step()
        counts["script"] += 1
    for _ in range(n):
        k, lba = rng.random(), rng.randrange(lbas)
        if k < 0.35:
            write(lba)
        elif k < 0.7:
            read(lba, "READ")
        elif k < 0.9:
            trim(lba)
        else:
            flush()
    for lba in range(lbas) if lbas < nlba else sorted(ref):
        read(lba, "read-back")
    return dict(counts, done=n, readback=lbas if lbas < nlba else len(ref), identify=idn,
                identify_wall_s=round(t_id, 1))


BOOTS = ("boot", "pfwrite", "pfcheck")       # modes that start while the device boots


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["mix", "wstream", "rstream", "boot", "pfwrite", "pfrewrite", "pfcheck"])
    ap.add_argument("n", type=int)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nlba", type=int, default=64)
    ap.add_argument("--page", type=int, default=4096)
    ap.add_argument("--nslot", type=int, default=4)
    ap.add_argument("--slot-bytes", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--n2", type=int, default=0, help="pf*: LBAs 0..n2-1 rewritten without a FLUSH")
    ap.add_argument("--lbas", type=int, default=0, help="boot: the LBAs the mix uses (0: all --nlba)")
    a = ap.parse_args()
    # boot: the device answers only once its firmware has booted (minutes of wall time in the
    # simulation): retried for as long as that takes
    dev = UdpDevice("127.0.0.1", a.port, page_bytes=a.page, nlba=a.nlba, nslot=a.nslot, slot_bytes=a.slot_bytes,
                    timeout=a.timeout, max_timeout=(8 if a.mode in BOOTS else 4) * a.timeout,
                    max_retries=2000 if a.mode in BOOTS else 20)
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
    if a.mode == "boot":
        return boot(dev, a.n, a.seed, a.nlba, a.page, a.lbas)
    if a.mode == "pfwrite":
        idn, t_id = identify(dev)
        put_pages(dev, [(lba, d) for _, lba, d in pf_history(a.n, a.n2, a.page)[1]])
        dev.flush()
        return dict(done=a.n, identify=idn, identify_wall_s=round(t_id, 1))
    if a.mode == "pfrewrite":
        return dict(done=put_pages(dev, [(lba, d) for _, lba, d in pf_history(a.n, a.n2, a.page)[2]]))
    if a.mode == "pfcheck":
        return pf_check(dev, a.n, a.n2, a.page)
    if a.mode == "mix":
        from test_udplink import random_workload
        return random_workload(dev, None, random.Random(a.seed), a.n, nlba=a.nlba, slot_bytes=a.slot_bytes)
    else:
        counts = stream(dev, a.mode, a.n, a.seed, a.nlba, a.page)
    return counts


if __name__ == "__main__":
    main()
