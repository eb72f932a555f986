# SPDX-License-Identifier: Apache-2.0
"""The host of sim/board/test_board_ext4.py, in its own process: the real host stack against the
board SoC's UDP link (the socket model of the PHY on 127.0.0.1:<port>).

    python ext4_client_run.py --port P --dir D [--stage-file F] [--files N] [--timeout S]

1. waits for the board to boot: IDENTIFY through atomssd.udplink, retried (the firmware answers it
   once the format is done);
2. `python -m atomssd.attach`'s building blocks (sw/host/atomssd/attach.py): nbdkit with the plugin
   in UDP mode (`addr=127.0.0.1:P`, the link parameters stretched for the simulation's speed:
   about 11,000 device cycles a wall second), nbdfuse, a loop device;
3. mkfs.ext4 (attach.py's options: 4 KiB blocks, a 1,024-block journal, the minimum jbd2 takes),
   mount, a file tree with SHA-256 sums, sync, unmount, `e2fsck -fn` (must be clean), mount again,
   every file compared, unmount, detach, nbdkit stopped.
Each stage's name goes to `--stage-file` as it starts (the bench logs the cycle of each); the last
line of stdout is a JSON result (stages' wall seconds, the client's CPU seconds with its children:
nbdkit, nbdfuse, mkfs, e2fsck; the link's counters). Exit status 0 only when every check passed."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "sw" / "host"))

from atomssd.attach import Attached, Export, has_fs, missing  # noqa: E402
from atomssd.device import decode_identify  # noqa: E402
from atomssd.hostport import OP  # noqa: E402
from atomssd.udplink import LinkTimeout, UdpDevice  # noqa: E402


def cpu_s() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def flushbufs(dev: str) -> None:
    subprocess.run(["blockdev", "--flushbufs", dev], check=True, capture_output=True)


def tree(fs: Path, rng: random.Random, n: int) -> dict[str, str]:
    sums = {}
    for i in range(n):
        d = fs / f"d{i % 3}"
        d.mkdir(exist_ok=True)
        b = rng.randbytes(rng.randrange(100, 24 * 1024))
        (d / f"f{i}.bin").write_bytes(b)
        sums[f"d{i % 3}/f{i}.bin"] = hashlib.sha256(b).hexdigest()
    return sums


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--stage-file", type=Path)
    ap.add_argument("--files", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=3.0, help="the link's first retry wait, wall s")
    ap.add_argument("--boot-wait", type=float, default=3600.0)
    a = ap.parse_args()
    lack = missing()
    if lack:
        sys.exit("needs: " + ", ".join(lack))
    res: dict = {"stages": {}}
    t_stage = [time.time(), None]

    def stage(name: str) -> None:
        now = time.time()
        if t_stage[1]:
            res["stages"][t_stage[1]] = round(now - t_stage[0], 1)
        t_stage[:] = [now, name]
        if a.stage_file:
            a.stage_file.write_text(name)
        print(f"[ext4] {name}", file=sys.stderr, flush=True)

    addr = f"127.0.0.1:{a.port}"
    stage("boot")                                    # IDENTIFY once the firmware has formatted
    dev = UdpDevice("127.0.0.1", a.port, nslot=4, slot_bytes=4096, timeout=a.timeout, max_timeout=10 * a.timeout,
                    max_retries=int(a.boot_wait / (10 * a.timeout)) + 8)
    try:
        idn = decode_identify(dev.wait(dev.submit(OP["IDENTIFY"]), timeout=a.boot_wait).data)
        res["identify"] = {k: v for k, v in idn.items() if k in ("page_bytes", "num_lbas", "qdepth")}
    except LinkTimeout as e:
        sys.exit(f"no IDENTIFY: {e}")
    finally:
        dev.close()
    link = dict(nslot=4, slot_bytes=4096, timeout=a.timeout, max_timeout=10 * a.timeout, retries=12, boot_wait=600)
    exp = att = None
    fs = a.dir / "fs"
    rng = random.Random(a.seed)
    ok = False
    try:
        stage("attach")
        exp = Export(a.dir / "dev", board=addr, link=link)
        att = Attached(exp)
        res["size_bytes"] = os.path.getsize(att.file)
        stage("mkfs")
        assert not has_fs(att.loop), "a file system before mkfs"
        att.mkfs()
        stage("mount_write_sync")
        att.mount(fs)
        sums = tree(fs, rng, a.files)
        res["tree_bytes"] = sum((fs / p).stat().st_size for p in sums)
        os.sync()
        stage("umount")
        att.umount()
        flushbufs(att.loop)                          # what follows reads the device, not the page cache
        stage("fsck")
        code, out = att.fsck()
        res["fsck"] = code
        assert code == 0, f"e2fsck -fn: {code}\n{out}"
        stage("mount_compare")
        flushbufs(att.loop)
        att.mount(fs)
        for rel, h in sums.items():
            assert hashlib.sha256((fs / rel).read_bytes()).hexdigest() == h, f"{rel} differs after the remount"
        res["files_compared"] = len(sums)
        stage("umount2")
        att.umount()
        ok = True
    finally:
        stage("detach")
        if att is not None:
            att.detach(lazy=not ok)
        if exp is not None:
            exp.stop(timeout=120)
        stage("done")
        st = a.dir / "dev" / "link_stats.json"
        if st.exists():
            res["link"] = json.loads(st.read_text())
        res["client_cpu_s"] = round(cpu_s(), 1)
        res["ok"] = ok
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
