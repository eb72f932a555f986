# SPDX-License-Identifier: Apache-2.0
"""Host attach (docs/host-attach.md): the simulated atomssd, or a board by address, as a Linux block device.

    python -m atomssd.attach --dir build/attach [--config attach] [--mount build/attach/fs] [--mkfs]
    python -m atomssd.attach --board HOST[:PORT] --dir build/attach/board [--mount ...] [--link-param K=V ...]

starts nbdkit with the atomssd plugin (nbd_plugin.py: the full-system simulation with the NVMe
front end, every NBD request NVMe commands; with `--board`, the board's UDP host link instead, every
NBD request host-link commands, the size from the device's IDENTIFY, no simulator and no die
images; `--link-param` passes the plugin's link parameters: nslot, slot_bytes, timeout,
max_timeout, retries, boot_wait) on `<dir>/nbd.sock`; with `--mount`, nbdfuse exposes the
export as `<dir>/fuse/disk`, a loop device is attached to it, an ext4 file system is made on it
(`--mkfs`, or when `blkid -p` finds no signature; with `--board` only with `--mkfs`; another file
system or a failed probe stops attach) and mounted. Ctrl-C (or SIGTERM) unmounts and detaches in order,
and the device powers off (images saved in `<dir>`). Needs root, /dev/fuse and loop devices, and
the Debian packages nbdkit, nbdkit-plugin-python, libnbd-bin (nbdfuse), e2fsprogs (`make setup`).

The functions are the test's building blocks (tests/attach)."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = HERE / "nbd_plugin.py"
LINK_PARAMS = ("nslot", "slot_bytes", "timeout", "max_timeout", "retries", "boot_wait")
TOOLS = ("nbdkit", "nbdfuse", "losetup", "mkfs.ext4", "e2fsck", "mount", "umount", "fusermount3")


def missing() -> list[str]:
    """What this machine lacks for host attach (empty: everything is there)."""
    out = [f"tool {t}" for t in TOOLS if shutil.which(t) is None]
    if os.geteuid() != 0:
        out.append("root")
    for dev in ("/dev/fuse", "/dev/loop-control"):
        if not os.path.exists(dev):
            out.append(dev)
    r = subprocess.run(["nbdkit", "python", "--dump-plugin"], capture_output=True, text=True) \
        if shutil.which("nbdkit") else None
    if r is not None and r.returncode != 0:
        out.append("nbdkit's python plugin (nbdkit-plugin-python)")
    return out


def build(config: str) -> tuple[Path, Path, int]:
    """The NVMe build of the full-system simulation, the firmware and the number of dies of
    `config` (sim/soc/build.py, under its file lock)."""
    sys.path.insert(0, str(HERE.parents[2] / "sim" / "soc"))
    import build as simbuild
    exe, fw, cfg = simbuild.build_locked(config, nvme=True)
    return exe, fw, int(cfg["ndie"])


def _wait_for(path: Path, proc: subprocess.Popen, what: str, timeout: float = 600) -> None:
    t0 = time.time()
    while not path.exists():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before {path} appeared")
        if time.time() - t0 > timeout:
            raise RuntimeError(f"{what}: {path} did not appear within {timeout} s")
        time.sleep(0.1)


class Export:
    """nbdkit serving the simulated device on a Unix socket (the device boots at the first
    connection: format on blank images, recovery otherwise)."""

    def __init__(self, d: Path, config: str = "attach", queues: int = 2, board: str | None = None,
                 link: dict | None = None):
        self.dir = Path(d).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.sock = self.dir / "nbd.sock"
        self.sock.unlink(missing_ok=True)
        self.board = board
        if board:                                    # a board by address: the UDP host link
            params = [f"addr={board}", f"dir={self.dir}"] + [f"{k}={v}" for k, v in (link or {}).items()]
        else:
            exe, fw, ndie = build(config)
            params = [f"dir={self.dir}", f"exe={exe}", f"fw={fw}", f"ndie={ndie}", f"queues={queues}"]
        self.log = open(self.dir / "nbdkit.log", "a")
        env = dict(os.environ, PYTHONPATH=str(HERE.parent))
        self.proc = subprocess.Popen(["nbdkit", "-U", str(self.sock), "-f", "python", str(PLUGIN), *params],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        _wait_for(self.sock, self.proc, "nbdkit", 60)

    @property
    def uri(self) -> str:
        return f"nbd+unix:///?socket={self.sock}"

    def sim_pid(self) -> int | None:
        p = self.dir / "sim.pid"
        return int(p.read_text()) if p.exists() else None

    def stop(self, timeout: float = 300) -> None:
        """Power off: nbdkit unloads the plugin, which closes the simulator (images saved)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Attached:
    """nbdfuse + a loop device on an Export: `loop` is the block device."""

    def __init__(self, exp: Export):
        self.exp = exp
        self.mnt = exp.dir / "fuse"
        self.mnt.mkdir(exist_ok=True)
        self.file = self.mnt / "disk"
        self.fuse = subprocess.Popen(["nbdfuse", str(self.file), "--unix", str(exp.sock)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        _wait_for(self.file, self.fuse, "nbdfuse")
        # direct I/O: the loop device's requests reach nbdfuse several at a time (buffered, one by
        # one through the FUSE file's page cache); without it where the kernel refuses it
        r = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", str(self.file)], capture_output=True, text=True)
        if r.returncode != 0:
            r = subprocess.run(["losetup", "-f", "--show", str(self.file)], capture_output=True, text=True)
        if r.returncode != 0:
            self.loop = ""
            self._unfuse(lazy=False)
            raise RuntimeError(f"losetup failed: {r.stderr.strip()}")
        self.loop = r.stdout.strip()
        self.fs: Path | None = None

    def mkfs(self) -> None:
        # no discard (a TRIM of the whole device) and lazy inode tables and journal: the simulated
        # device writes a few hundred KiB/s at best, so mkfs writes only what the file system needs.
        # 4 KiB blocks, the device's LBA (mke2fs picks 1 KiB below 512 MiB: every metadata and
        # journal block written would be a read-modify-write of its LBA), and one inode per 16 KiB
        # (mke2fs's ratio above 512 MiB; its 4 KiB for small file systems makes a 4 MiB inode table
        # on 64 MiB, which e2fsck -f reads whole)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-i", "16384", "-E",
                        "nodiscard,lazy_itable_init=1,lazy_journal_init=1", self.loop],
                       check=True, capture_output=True)

    def fsck(self) -> tuple[int, str]:
        """e2fsck -fn (no changes): (exit code, output); 0 = clean."""
        r = subprocess.run(["e2fsck", "-fn", self.loop], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def mount(self, where: Path, fstype: str = "ext4") -> None:
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", fstype, self.loop, str(where)], check=True, capture_output=True)
        self.fs = where

    def umount(self, lazy: bool = False) -> None:
        if self.fs is not None:
            subprocess.run(["umount"] + (["-l"] if lazy else []) + [str(self.fs)], check=not lazy,
                           capture_output=True)
            self.fs = None

    def detach(self, lazy: bool = False) -> None:
        self.umount(lazy)
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], check=False, capture_output=True)
            self.loop = ""
        self._unfuse(lazy)

    def _unfuse(self, lazy: bool) -> None:
        subprocess.run(["fusermount3", "-u"] + (["-z"] if lazy else []) + [str(self.mnt)], check=False,
                       capture_output=True)
        try:
            self.fuse.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.fuse.kill()


PROBE_HEAD, PROBE_TAIL = 256 << 10, 64 << 10      # read before blkid: its superblock areas (ext4 1 KiB, btrfs 64 KiB...)


def probe_fs(dev: str, run=subprocess.run) -> str | None:
    """The file system on `dev` by `blkid -p` (a low-level probe of the device itself): its TYPE, or
    None only when the device's first PROBE_HEAD and last PROBE_TAIL bytes read without error and
    blkid says there is no signature (exit 2). A failed read (EIO: a link that timed out, a board
    still recovering) or any other exit of blkid (4: usage / probe error, 8: ambiguous) raises:
    "could not read" must never read as "empty"."""
    if not Path(dev).exists():
        raise RuntimeError(f"{dev}: no such device")
    # blkid -p exits 2 (nothing found) also when its reads fail with EIO (util-linux 2.38, checked on a
    # loop device over an export answering EIO), so the regions it probes are read here first
    try:
        fd = os.open(dev, os.O_RDONLY)
        try:
            size = os.lseek(fd, 0, os.SEEK_END)
            for off, n in ((0, min(PROBE_HEAD, size)), (max(0, size - PROBE_TAIL), min(PROBE_TAIL, size))):
                if len(os.pread(fd, n, off)) != n:
                    raise OSError(f"short read at {off}")
        finally:
            os.close(fd)
    except OSError as e:
        raise RuntimeError(f"{dev}: cannot read its first / last blocks ({e}): no file system is made") from e
    r = run(["blkid", "-p", "-o", "value", "-s", "TYPE", dev], capture_output=True, text=True)
    if r.returncode == 2:
        return None
    if r.returncode != 0:
        raise RuntimeError(f"blkid -p {dev}: exit {r.returncode} ({(r.stderr or r.stdout).strip() or 'probe failed'}):"
                           " the device could not be probed; no file system is made")
    return r.stdout.strip() or "unknown"


def has_fs(dev: str) -> bool:
    """An ext4 file system on `dev` (probe_fs: raises when the probe fails)."""
    return probe_fs(dev) == "ext4"


def need_mkfs(dev: str, mkfs: bool, board: bool, run=subprocess.run) -> bool:
    """Whether to make a new ext4 file system on `dev`: `--mkfs` always; else only when blkid finds no
    signature at all, and never on a board (its data are the user's: `--mkfs` is asked for).
    Another file system, a failed probe, or an empty board stops attach with the reason."""
    if mkfs:
        return True
    fs = probe_fs(dev, run)
    if fs == "ext4":
        return False
    if fs is not None:
        raise RuntimeError(f"{dev}: holds a {fs} file system, not ext4 (--mkfs replaces it)")
    if board:
        raise RuntimeError(f"{dev}: the board's export has no file system; --mkfs (make attach ... MKFS=1) makes one")
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="build/attach", type=Path, help="images, sockets and logs")
    ap.add_argument("--config", default="attach", help="device configuration (soc/ats_litex.py CONFIGS)")
    ap.add_argument("--mount", type=Path, help="also attach a loop device and mount ext4 here")
    ap.add_argument("--mkfs", action="store_true", help="make a new ext4 file system first")
    ap.add_argument("--board", metavar="HOST[:PORT]",
                    help="a board by address over the UDP host link (port 16724 by default) instead of the simulator")
    ap.add_argument("--link-param", action="append", default=[], metavar="K=V",
                    help="with --board: the plugin's link parameters (nslot, slot_bytes, timeout, max_timeout, "
                         "retries, boot_wait; docs/host-attach.md)")
    a = ap.parse_args()
    lack = missing()
    if lack and a.mount:
        sys.exit("host attach needs: " + ", ".join(lack))
    link = {}
    for kv in a.link_param:
        k, sep, v = kv.partition("=")
        if not sep or k not in LINK_PARAMS:
            sys.exit(f"--link-param {kv}: K=V with K one of {', '.join(LINK_PARAMS)}")
        link[k] = v
    if link and not a.board:
        sys.exit("--link-param needs --board")
    exp = Export(a.dir, a.config, board=a.board, link=link)
    print(f"[attach] NBD export: {exp.uri} (" + (f"the board at {a.board}: IDENTIFY at the first connection)"
                                                 if a.board else "the device boots at the first connection)"),
          flush=True)
    att = None
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        if a.mount:
            att = Attached(exp)
            try:
                make = need_mkfs(att.loop, a.mkfs, bool(a.board))
            except RuntimeError as e:
                sys.exit(f"[attach] {e}")
            if make:
                print(f"[attach] mkfs.ext4 {att.loop}", flush=True)
                att.mkfs()
            att.mount(a.mount)
            print(f"[attach] {att.loop} mounted on {a.mount}; Ctrl-C to unmount and power off", flush=True)
        while not stop["now"] and exp.proc.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        if att is not None:
            att.detach()
        exp.stop()
        print("[attach] detached (the board keeps running)" if a.board else "[attach] powered off (images saved)",
              flush=True)


if __name__ == "__main__":
    main()
