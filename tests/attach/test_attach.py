# SPDX-License-Identifier: Apache-2.0
"""Host attach (docs/host-attach.md): Linux puts ext4 on the simulated atomssd.

The device is the full-system simulation with the NVMe front end (`attach` configuration: 64 MiB
of 4 KiB LBAs on 4 x 2 dies), exported by nbdkit with the atomssd plugin (every NBD request NVMe
commands of the project's driver, requests in parallel), attached with nbdfuse and a loop device.
One test, in stages on one device (each stage needs the state the previous one left):
  1. fio (its nbd engine) on the raw export: 4 KiB random writes with crc32c verification, then 4 KiB
     random reads, both at queue depth 8 (several NVMe commands in flight); IOPS recorded;
  2. mkfs.ext4, mount, a file tree with checksums, unmount, power off (images saved), power on
     (recovery), e2fsck -fn clean, mount, every checksum equal; the write throughput recorded;
  3. SQLite: 40 transactions on the mounted file system, an aggregate checked, then again after a
     remount;
  4. power cut: files written and fsynced, more written without fsync, the simulator SIGKILLed (a
     power cut: the NAND journal, sim/nand/README.md), power on (recovery), mount (the ext4 journal
     replays), unmount, e2fsck -fn clean, mount: every fsynced file intact;
  5. (ATS_LONG, where installed) Btrfs (mixed block groups, -M: btrfs-progs wants 114 MB for the
     default layout) and XFS (xfsprogs >= 5.19 refuses less than 300 MB outside fstests, whose
     override is used) on the same device: a file tree, unmount, mount, every checksum equal.
`make test` runs the short slice (ATS_LONG unset): stage 2 without its clean power cycle (the
file tree is checked after the power cut of stage 4 instead) and 10 SQLite transactions; every kind
of check is kept, one boot and one recovery. `make test-long` (ATS_LONG=1) runs every stage in full.
Figures go to build/attach/attach.json. Needs root, /dev/fuse, loop devices, nbdkit with its Python
plugin, nbdfuse, fio, e2fsprogs: where one is missing the test says what and is skipped."""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sw" / "host"))
from atomssd.attach import Attached, Export, missing  # noqa: E402

CONFIG = os.environ.get("ATS_ATTACH_CONFIG", "attach")
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
OUT = ROOT / "build" / "attach"

_lack = missing() + ([] if shutil.which("fio") else ["tool fio"])
pytestmark = pytest.mark.skipif(bool(_lack), reason="host attach needs: " + ", ".join(_lack))


def _tree(fs: Path, rng: random.Random, n: int, prefix: str, fsync: bool) -> dict[str, str]:
    sums = {}
    for i in range(n):
        d = fs / f"{prefix}{i % 3}"
        d.mkdir(exist_ok=True)
        p = d / f"{prefix}{i}.bin"
        b = rng.randbytes(rng.randrange(100, 48 * 1024))
        with open(p, "wb") as f:
            f.write(b)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        sums[str(p.relative_to(fs))] = hashlib.sha256(b).hexdigest()
    if fsync:
        for d in {p.split("/")[0] for p in sums}:
            fd = os.open(fs / d, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    return sums


def _check(fs: Path, sums: dict[str, str], what: str) -> None:
    for rel, h in sums.items():
        p = fs / rel
        assert p.exists(), f"{what}: {rel} is missing"
        assert hashlib.sha256(p.read_bytes()).hexdigest() == h, f"{what}: {rel} differs"


def _fio(uri: str, rw: str, size: str, io_size: str, seed: int, iodepth: int = 8) -> dict:
    cmd = ["fio", "--name=atomssd", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", "--bs=4k",
           f"--size={size}", f"--io_size={io_size}", f"--iodepth={iodepth}", f"--randseed={seed}",
           "--output-format=json"]
    if rw == "randwrite":
        cmd += ["--verify=crc32c", "--do_verify=1", "--verify_state_save=0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, f"fio {rw} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    assert j["error"] == 0, f"fio {rw}: error {j['error']}"
    return j


def _restart(att: Attached, exp: Export, d: Path, fig: dict, lazy: bool = False) -> tuple[Attached, Export]:
    """Detach, power off (nbdkit exits), power on again and attach: fig['attach_s'] = the boot
    (recovery) and attach time."""
    att.detach(lazy=lazy)
    exp.stop(timeout=60 if lazy else 300)
    t = time.time()
    exp = Export(d, CONFIG)
    att = Attached(exp)
    fig["attach_s"] = round(time.time() - t, 1)
    return att, exp


def _sim_info(d: Path, fig: dict, key: str) -> None:
    """The simulated MHz of the last power-on (the plugin's INFO at power-off)."""
    p = d / "sim_info.json"
    if p.exists():
        fig[key] = round(json.loads(p.read_text()).get("sim_mhz", 0), 4)


def test_attach(tmp_path):
    seed = int(os.environ.get("ATS_SEED", "1"))
    rng = random.Random(seed * 31 + 7)
    fig: dict = {"config": CONFIG, "seed": seed, "long": LONG}
    d = tmp_path / "dev"
    fs = tmp_path / "fs"
    t0 = time.time()
    exp = att = None
    try:
        exp = Export(d, CONFIG)                      # (builds first when the sources changed)
        t = time.time()
        att = Attached(exp)
        fig["first_boot_s"] = round(time.time() - t, 1)
        # ---- 1. fio on the raw export
        w = _fio(exp.uri, "randwrite", "1M", "96k", seed)
        r = _fio(exp.uri, "randread", "1M", "96k", seed)
        fig["fio_randwrite_iops"] = round(w["write"]["iops"], 2)
        fig["fio_randread_iops"] = round(r["read"]["iops"], 2)
        # ---- 2. ext4, a file tree, power off / on, fsck, compare
        t = time.time()
        att.mkfs()
        fig["mkfs_s"] = round(time.time() - t, 1)
        att.mount(fs)
        t = time.time()
        sums = _tree(fs, rng, 12, "t", fsync=False)
        os.sync()
        dt = time.time() - t
        nbytes = sum((fs / p).stat().st_size for p in sums)
        fig["write_MBps_wall"] = round(nbytes / dt / 1e6, 4)
        if LONG:                                     # a clean power cycle (the short slice: stage 4's cut)
            att, exp = _restart(att, exp, d, fig)
            _sim_info(d, fig, "sim_mhz_first_power_on")
            fig["recovery_boot_s"] = fig.pop("attach_s")
            code, out = att.fsck()
            assert code == 0, f"e2fsck after a clean power cycle:\n{out}"
            att.mount(fs)
            t = time.time()
            _check(fs, sums, "after a power cycle")
            fig["read_MBps_wall"] = round(nbytes / max(time.time() - t, 1e-6) / 1e6, 4)
        # ---- 3. SQLite
        db = sqlite3.connect(fs / "bank.db")
        db.execute("create table acct (id integer primary key, bal integer not null)")
        db.executemany("insert into acct values (?, ?)", [(i, 1000) for i in range(20)])
        db.commit()
        for _ in range(40 if LONG else 10):          # transfers: the total never changes
            a, b, x = rng.randrange(20), rng.randrange(20), rng.randrange(1, 50)
            with db:
                db.execute("update acct set bal = bal - ? where id = ?", (x, a))
                db.execute("update acct set bal = bal + ? where id = ?", (x, b))
        assert db.execute("select sum(bal), count(*) from acct").fetchone() == (20000, 20)
        state = db.execute("select * from acct order by id").fetchall()
        db.close()
        att.umount()
        att.mount(fs)
        db = sqlite3.connect(fs / "bank.db")
        assert db.execute("select * from acct order by id").fetchall() == state, "SQLite rows after a remount"
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        db.close()
        # ---- 4. power cut under the file system
        synced = _tree(fs, rng, 6, "s", fsync=True)
        _tree(fs, rng, 6, "u", fsync=False)          # not fsynced: may or may not survive
        pid = exp.sim_pid()
        assert pid, "no simulator pid"
        os.kill(pid, signal.SIGKILL)                 # the power cut (NAND journal)
        time.sleep(1)
        att, exp = _restart(att, exp, d, fig, lazy=True)
        fig["recovery_after_cut_s"] = fig.pop("attach_s")
        att.mount(fs)                                # the ext4 journal replays
        att.umount()
        code, out = att.fsck()
        assert code == 0, f"e2fsck after a power cut (journal replayed):\n{out}"
        att.mount(fs)
        _check(fs, synced, "fsynced before the power cut")
        _check(fs, sums, "the earlier tree after the power cut")
        db = sqlite3.connect(fs / "bank.db")
        assert db.execute("select * from acct order by id").fetchall() == state
        db.close()
        # ---- 5. Btrfs and XFS on the same device (ATS_LONG, where installed)
        if LONG:
            for kind, mkfs, env in (("btrfs", ["mkfs.btrfs", "-q", "-f", "-K", "-M"], {}),
                                    ("xfs", ["mkfs.xfs", "-q", "-f", "-K"],
                                     {"TEST_DIR": "1", "TEST_DEV": "1", "QA_CHECK_FS": "1"})):
                if shutil.which(mkfs[0]) is None:
                    fig[kind] = "not installed"
                    continue
                att.umount()
                t = time.time()
                r = subprocess.run(mkfs + [att.loop], capture_output=True, text=True, env=dict(os.environ, **env))
                assert r.returncode == 0, f"{mkfs[0]} on the 64 MiB device:\n{r.stdout}{r.stderr}"
                att.mount(fs, kind)
                other = _tree(fs, rng, 6, kind, fsync=False)
                os.sync()
                att.umount()
                att.mount(fs, kind)
                _check(fs, other, f"{kind} after a remount")
                fig[f"{kind}_s"] = round(time.time() - t, 1)
        errs = d / "harness_errors.txt"                 # the root port saw no rule broken
        assert not errs.exists(), f"the simulation reported errors:\n{errs.read_text()[:2000]}"
    finally:
        if att is not None:
            att.detach(lazy=True)
        if exp is not None:
            exp.stop()
        fig["total_s"] = round(time.time() - t0, 1)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "attach.json").write_text(json.dumps(fig, indent=1) + "\n")
        print("host attach:", fig)
