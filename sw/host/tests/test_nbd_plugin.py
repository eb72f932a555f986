# SPDX-License-Identifier: Apache-2.0
"""The nbdkit plugin's device thread (sw/host/atomssd/nbd_plugin.py) when the simulator dies while a
request's command is being submitted: the request must fail (nbdkit answers EIO), not wait for ever.
A request lost there once left an NBD flush unanswered, so the kernel's flush through nbdfuse and
the attach test's lazy unmount after its power cut (tests/attach) hung."""
from __future__ import annotations

import queue
import sys
import threading
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.modules.setdefault("nbdkit", types.SimpleNamespace(debug=lambda *a: None, THREAD_MODEL_PARALLEL=3))
from atomssd import nbd_plugin  # noqa: E402


class _DeadOnSubmit(nbd_plugin.Device):
    """A Device whose simulator is gone: the first submission breaks the pipe (no simulator is run)."""

    def __init__(self):                              # noqa: D107 - only the fields the thread uses
        self.q = queue.SimpleQueue()
        self.dead = None
        self.inflight = 4
        self.submits = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _submit(self, op):
        self.submits += 1
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("ops", [[("flush",)], [("read", 0, 1)], [("flush",), ("read", 8, 2)]])
def test_request_fails_when_the_device_dies_in_submission(ops):
    dev = _DeadOnSubmit()
    res: dict = {}

    def call():
        try:
            dev.do(ops)
            res["ok"] = True
        except RuntimeError as e:
            res["err"] = str(e)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive(), "the request waits for ever after the device died"
    assert "device is gone" in res.get("err", ""), res
    assert dev.submits == 1
    # every later request fails at once, too
    with pytest.raises(RuntimeError, match="device is gone"):
        dev.do([("flush",)])


# ---- UDP mode: the plugin under nbdkit against the UDP device model -------------------------------
# nbdkit runs nbd_plugin.py with addr=127.0.0.1:<port> of udp_device_model.UdpDeviceModel (the device
# side of the UDP host link, written from docs/host-port.md) with seeded drops, duplicates and delays
# (reordering); the test is an NBD client of its own (the protocol's fixed newstyle handshake and
# simple replies, several requests in flight) whose random READ / WRITE (aligned or not, FUA or not) /
# TRIM / FLUSH requests are checked against a bytearray kept here: read data equal, a READ that
# touches an LBA the model fails (MEDIA_ERROR) answered EIO, every WRITE command carrying FUA exactly
# for the LBAs of FUA requests, every command executed once; a device that stops answering gives EIO
# within the retry budget (no hang), and every later request EIO at once.
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from udp_device_model import UdpDeviceModel  # noqa: E402

PLUGIN = Path(nbd_plugin.__file__)
EIO = 5
NBD_READ, NBD_WRITE, NBD_DISC, NBD_FLUSH, NBD_TRIM = 0, 1, 2, 3, 4
NBD_CMD_FLAG_FUA = 1
_nbdkit_ok = shutil.which("nbdkit") is not None and subprocess.run(
    ["nbdkit", "python", "--dump-plugin"], capture_output=True).returncode == 0
udp_mode = pytest.mark.skipif(not _nbdkit_ok, reason="needs nbdkit with its Python plugin (nbdkit-plugin-python)")


class NbdClient:
    """A minimal NBD client (the NBD protocol: fixed newstyle, NBD_OPT_EXPORT_NAME, simple replies)."""

    def __init__(self, path: Path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(str(path))
        self.s.settimeout(60)
        magic, opt, hflags = struct.unpack(">8s8sH", self._recv(18))
        assert magic == b"NBDMAGIC" and opt == b"IHAVEOPT", (magic, opt)
        cflags = 1 | (2 if hflags & 2 else 0)                 # FIXED_NEWSTYLE, NO_ZEROES when offered
        self.s.sendall(struct.pack(">I", cflags) + b"IHAVEOPT" + struct.pack(">II", 1, 0))
        self.size, self.flags = struct.unpack(">QH", self._recv(10))
        if not hflags & 2:
            self._recv(124)
        self.pending: dict[int, int] = {}                    # handle -> bytes of read data expected
        self.n = 0

    def _recv(self, n: int) -> bytes:
        b = bytearray()
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise ConnectionError("nbdkit closed the connection")
            b += c
        return bytes(b)

    def send(self, typ: int, off: int = 0, length: int = 0, data: bytes = b"", flags: int = 0) -> int:
        self.n += 1
        self.s.sendall(struct.pack(">IHHQQI", 0x25609513, flags, typ, self.n, off, length) + data)
        self.pending[self.n] = length if typ == NBD_READ else 0
        return self.n

    def reply(self) -> tuple[int, int, bytes]:
        """The next reply: (handle, error, read data)."""
        magic, err, h = struct.unpack(">IIQ", self._recv(16))
        assert magic == 0x67446698, hex(magic)
        n = self.pending.pop(h)
        return h, err, (self._recv(n) if n and not err else b"")

    def call(self, typ: int, off: int = 0, length: int = 0, data: bytes = b"", flags: int = 0) -> tuple[int, bytes]:
        self.send(typ, off, length, data, flags)
        _, err, d = self.reply()
        return err, d

    def close(self) -> None:
        try:
            self.s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, NBD_DISC, 0, 0, 0))
        except OSError:
            pass
        self.s.close()


class UdpExport:
    """nbdkit with the plugin in UDP mode on a Unix socket in `tmp`."""

    def __init__(self, tmp: Path, port: int, **params):
        self.sock = tmp / "nbd.sock"
        self.log = open(tmp / "nbdkit.log", "w")
        args = [f"addr=127.0.0.1:{port}"] + [f"{k}={v}" for k, v in params.items()]
        self.proc = subprocess.Popen(["nbdkit", "-U", str(self.sock), "-f", "-v", "python", str(PLUGIN), *args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        while not self.sock.exists():
            assert self.proc.poll() is None, (tmp / "nbdkit.log").read_text()[-3000:]
            assert time.monotonic() - t0 < 30, "nbdkit did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


PAGE_U, NLBA_U, NSLOT_U = 4096, 40, 4


def _nbd_workload(c: NbdClient, rng: random.Random, n_req: int, bad: set[int], depth: int) -> dict:
    """`n_req` random requests, up to `depth` in flight (never two on one LBA at once), checked against
    `ref`; returns the expected FUA writes per LBA and the counts."""
    size = NLBA_U * PAGE_U
    ref = bytearray(size)
    fua_lbas: dict[int, int] = {}
    busy: dict[int, tuple] = {}                  # handle -> (kind, off, len, data, flags, lbas)
    counts = dict(read=0, write=0, unaligned=0, trim=0, flush=0, eio=0)
    sent = 0

    def lbas_of(off, n):
        return set(range(off // PAGE_U, (off + n - 1) // PAGE_U + 1))

    def finish():
        h, err, data = c.reply()
        kind, off, n, wdata, flags, lbas = busy.pop(h)
        if kind == NBD_READ:
            if lbas & bad:
                assert err == EIO, f"READ {off}+{n} over a failing LBA: error {err}, not EIO"
                counts["eio"] += 1
                return
            assert err == 0, f"READ {off}+{n}: error {err}"
            assert data == bytes(ref[off:off + n]), f"READ {off}+{n}: data differ from the reference"
        elif kind == NBD_WRITE:
            unaligned = off % PAGE_U or n % PAGE_U
            if unaligned and lbas & bad:             # its read-modify-write's read fails: nothing written
                assert err == EIO, f"unaligned WRITE {off}+{n} over a failing LBA: error {err}"
                counts["eio"] += 1
                return
            assert err == 0, f"WRITE {off}+{n}: error {err}"
            ref[off:off + n] = wdata
            if flags & NBD_CMD_FLAG_FUA:
                for lba in lbas:
                    fua_lbas[lba] = fua_lbas.get(lba, 0) + 1
        elif kind == NBD_TRIM:
            assert err == 0, f"TRIM {off}+{n}: error {err}"
            first, end = -(-off // PAGE_U), (off + n) // PAGE_U          # whole LBAs inside: zero
            if end > first:
                ref[first * PAGE_U:end * PAGE_U] = bytes((end - first) * PAGE_U)
        else:
            assert err == 0, f"FLUSH: error {err}"

    while sent < n_req or busy:
        if sent < n_req and len(busy) < depth and (not busy or rng.random() < 0.75):
            taken = set().union(*(b[5] for b in busy.values())) if busy else set()
            k = rng.random()
            if k < 0.9:
                if rng.random() < 0.6:
                    lba, nl = rng.randrange(NLBA_U), rng.randint(1, 3)
                    nl = min(nl, NLBA_U - lba)
                    off, n = lba * PAGE_U, nl * PAGE_U
                else:
                    off = rng.randrange(size - 1)
                    n = rng.randint(1, min(3 * PAGE_U, size - off))
                lbas = lbas_of(off, n)
                if lbas & taken:
                    continue
                r = rng.random()
                if r < 0.4:
                    h = c.send(NBD_READ, off, n)
                    busy[h] = (NBD_READ, off, n, None, 0, lbas)
                    counts["read"] += 1
                elif r < 0.85:
                    data = rng.randbytes(n)
                    flags = NBD_CMD_FLAG_FUA if rng.random() < 0.3 else 0
                    h = c.send(NBD_WRITE, off, n, data, flags)
                    busy[h] = (NBD_WRITE, off, n, data, flags, lbas)
                    counts["write"] += 1
                    counts["unaligned"] += bool(off % PAGE_U or n % PAGE_U)
                else:
                    flags = NBD_CMD_FLAG_FUA if rng.random() < 0.3 else 0
                    h = c.send(NBD_TRIM, off, n, flags=flags)
                    busy[h] = (NBD_TRIM, off, n, None, flags, lbas)
                    counts["trim"] += 1
                    counts["flush"] += bool(flags)
            else:
                h = c.send(NBD_FLUSH)
                busy[h] = (NBD_FLUSH, 0, 0, None, 0, set())
                counts["flush"] += 1
            sent += 1
        else:
            finish()
    # every LBA read back at the end (one request over the whole device but the failing LBAs)
    for lba in range(NLBA_U):
        if lba not in bad:
            err, d = c.call(NBD_READ, lba * PAGE_U, PAGE_U)
            assert err == 0 and d == bytes(ref[lba * PAGE_U:(lba + 1) * PAGE_U]), f"LBA {lba} differs at the end"
    counts["fua_lbas"] = fua_lbas
    return counts


@udp_mode
@pytest.mark.parametrize("case", ["lossy", "reorder"])
def test_udp_mode_random_requests(tmp_path, case):
    """Random NBD requests through nbdkit + the plugin in UDP mode over a lossy / reordering link."""
    seed = {"lossy": 11, "reorder": 12}[case]
    net = {"lossy": dict(drop=0.06, dup=0.06, delay=0.003), "reorder": dict(drop=0.02, dup=0.2, delay=0.015)}[case]
    bad = {7, 23}
    m = UdpDeviceModel(seed, NSLOT_U, PAGE_U, PAGE_U, NLBA_U, bad_read_lbas=frozenset(bad), **net)
    exp = UdpExport(tmp_path, m.port, nslot=NSLOT_U, slot_bytes=PAGE_U, timeout=0.02, max_timeout=0.2)
    try:
        c = NbdClient(exp.sock)
        assert c.size == NLBA_U * PAGE_U, c.size                  # the size from the device's IDENTIFY
        assert c.flags & (1 << 2) and c.flags & (1 << 3) and c.flags & (1 << 5), f"flags {c.flags:#x}"  # FLUSH FUA TRIM
        counts = _nbd_workload(c, random.Random(seed), 160, bad, depth=6)
        c.close()
    finally:
        exp.stop()
        m.close()
    print(case, {k: v for k, v in counts.items() if k != "fua_lbas"}, m.stats)
    keys = [(s, q) for s, q, _ in m.executed]
    assert len(keys) == len(set(keys)), "a command executed twice"
    got: dict[int, int] = {}
    for lba, n, flags in m.writes:
        if flags & 1:
            for k in range(lba, lba + n):
                got[k] = got.get(k, 0) + 1
    assert got == counts["fua_lbas"], "WRITE commands with FUA differ from the FUA requests' LBAs"
    assert sum(op == 6 for _, _, op in m.executed) == counts["flush"], "FLUSH commands differ from the flushes"
    assert counts["eio"] > 0 and counts["unaligned"] > 0 and m.stats["dropped"] and m.stats["duplicated"]


@udp_mode
def test_udp_mode_dead_device_gives_eio(tmp_path):
    """A device that stops answering: the requests in flight and every later one answer EIO within
    the retry budget, never data and never a hang; nbdkit still exits cleanly."""
    m = UdpDeviceModel(13, NSLOT_U, PAGE_U, PAGE_U, NLBA_U)
    exp = UdpExport(tmp_path, m.port, nslot=NSLOT_U, slot_bytes=PAGE_U, timeout=0.01, max_timeout=0.04, retries=4)
    try:
        c = NbdClient(exp.sock)
        assert c.call(NBD_WRITE, 0, PAGE_U, b"\x5a" * PAGE_U) == (0, b"")
        assert c.call(NBD_READ, 0, PAGE_U) == (0, b"\x5a" * PAGE_U)
        m.mute = True
        t0 = time.monotonic()
        hs = [c.send(NBD_READ, 0, 2 * PAGE_U), c.send(NBD_WRITE, PAGE_U, PAGE_U, bytes(PAGE_U)), c.send(NBD_FLUSH),
              c.send(NBD_READ, 100, 10)]
        errs = {}
        for _ in hs:
            h, err, d = c.reply()
            errs[h] = (err, d)
        assert all(v == (EIO, b"") for v in errs.values()), errs
        dt = time.monotonic() - t0
        assert dt < 10, f"EIO after {dt:.1f} s"
        t0 = time.monotonic()
        for typ in (NBD_READ, NBD_FLUSH, NBD_WRITE):               # every slot lost: EIO at once
            assert c.call(typ, 0, PAGE_U if typ != NBD_FLUSH else 0,
                          bytes(PAGE_U) if typ == NBD_WRITE else b"")[0] == EIO
        assert time.monotonic() - t0 < 5
        c.close()
    finally:
        exp.stop()
        m.close()
    assert exp.proc.returncode == 0, exp.proc.returncode


# ---- attach's mkfs decision (sw/host/atomssd/attach.py need_mkfs) ----------------------------------
# A file system is made only with --mkfs, or (not on a board) when the device reads without error and
# blkid -p finds no signature (exit 2). Another exit code, another file system, or a device whose
# first blocks answer EIO stops attach: a board's data must never be formatted over because a read
# failed. The EIO case is real: nbdkit + the plugin against udp_device_model failing reads of LBA 0,
# through nbdfuse, where blkid -p itself exits 2 ("nothing found") despite the EIO.
from atomssd import attach  # noqa: E402


class _Blkid:
    def __init__(self, rc: int, out: str = ""):
        self.rc, self.out, self.calls = rc, out, 0

    def __call__(self, argv, **kw):
        self.calls += 1
        assert argv[:2] == ["blkid", "-p"]
        return subprocess.CompletedProcess(argv, self.rc, self.out, "")


def test_attach_mkfs_decision_by_blkid_exit(tmp_path):
    dev = tmp_path / "disk"
    dev.write_bytes(bytes(1 << 20))
    d = str(dev)
    for board in (False, True):
        assert attach.need_mkfs(d, True, board, _Blkid(4)) is True            # --mkfs: always
        assert attach.need_mkfs(d, False, board, _Blkid(0, "ext4\n")) is False
        for rc in (1, 4, 8):                                                   # a probe that failed
            with pytest.raises(RuntimeError, match=f"exit {rc}"):
                attach.need_mkfs(d, False, board, _Blkid(rc))
        with pytest.raises(RuntimeError, match="xfs"):                         # another file system
            attach.need_mkfs(d, False, board, _Blkid(0, "xfs\n"))
    assert attach.need_mkfs(d, False, False, _Blkid(2)) is True                # simulator, no signature
    with pytest.raises(RuntimeError, match="--mkfs"):                          # a board: only when asked
        attach.need_mkfs(d, False, True, _Blkid(2))
    # the real blkid: a blank image, an ext4 image
    if shutil.which("blkid") and shutil.which("mkfs.ext4"):
        assert attach.need_mkfs(d, False, False) is True
        subprocess.run(["mkfs.ext4", "-q", "-F", d], check=True, capture_output=True)
        assert attach.need_mkfs(d, False, True) is False


_fuse_ok = _nbdkit_ok and shutil.which("nbdfuse") and shutil.which("blkid") and os.path.exists("/dev/fuse") \
    and os.geteuid() == 0


@pytest.mark.skipif(not _fuse_ok, reason="needs nbdkit-plugin-python, nbdfuse, blkid, /dev/fuse and root")
def test_attach_no_mkfs_when_lba0_fails(tmp_path):
    """The board's export answers EIO on LBA 0: attach must stop, not format (blkid alone says 'empty')."""
    m = UdpDeviceModel(14, NSLOT_U, PAGE_U, PAGE_U, NLBA_U, bad_read_lbas=frozenset({0}))
    exp = UdpExport(tmp_path, m.port, nslot=NSLOT_U, slot_bytes=PAGE_U, timeout=0.02, max_timeout=0.2)
    mnt = tmp_path / "fuse"
    mnt.mkdir()
    fuse = subprocess.Popen(["nbdfuse", str(mnt / "disk"), "--unix", str(exp.sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        while not (mnt / "disk").exists():
            assert fuse.poll() is None and time.monotonic() - t0 < 30, "nbdfuse did not start"
            time.sleep(0.05)
        disk = str(mnt / "disk")
        assert subprocess.run(["blkid", "-p", disk], capture_output=True).returncode == 2   # blkid: "nothing"
        for board in (True, False):
            with pytest.raises(RuntimeError, match="cannot read"):
                attach.need_mkfs(disk, False, board)
        assert not m.writes, "something was written"
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)
        try:
            fuse.wait(20)
        except subprocess.TimeoutExpired:
            fuse.kill()
        exp.stop()
        m.close()


def test_udp_mode_lba_above_slot_bytes_refused_at_open(monkeypatch):
    """IDENTIFY's LBA size above slot_bytes: no command could carry one LBA, so the plugin refuses at
    open with the reason (it opened, and every I/O then failed and declared the device gone)."""
    m = UdpDeviceModel(17, NSLOT_U, 2 * PAGE_U, 2 * PAGE_U, NLBA_U, core_delay=0.0)
    try:
        for k, v in dict(addr=f"127.0.0.1:{m.port}", slot_bytes=str(PAGE_U), timeout="0.01", boot_wait="2").items():
            monkeypatch.setitem(nbd_plugin._cfg, k, v)
        with pytest.raises(RuntimeError, match=f"LBAs of {2 * PAGE_U} bytes, above slot_bytes={PAGE_U}"):
            nbd_plugin.UdpBackend(nbd_plugin._cfg["addr"])
        monkeypatch.setitem(nbd_plugin._cfg, "slot_bytes", str(2 * PAGE_U))      # one LBA a command: opens
        dev = nbd_plugin.UdpBackend(nbd_plugin._cfg["addr"])
        try:
            assert dev.mdts == 1
            data = random.Random(17).randbytes(2 * PAGE_U)
            dev.do([("write", 3, data, False)])
            assert dev.do([("read", 3, 1)]) == [data]
        finally:
            dev.stop()
    finally:
        m.close()


@udp_mode
def test_udp_mode_flush_after_every_earlier_command(tmp_path):
    """The plugin's FLUSH barrier: a FLUSH reaches the device only after every command sent before it
    completed. Writes stay in flight (up to 6 requests) while the client sends flushes, one at a time;
    the model records per FLUSH reaching its core the pages written so far and the WRITE commands
    still in its core. Every page of every write the client saw answered before it sent the flush
    must be among the first (the NBD contract), and no WRITE sent before the FLUSH (older seq) may be in
    the core (the barrier; the first check alone cannot see it: the plugin answers a write only at its
    completion)."""
    m = UdpDeviceModel(18, NSLOT_U, PAGE_U, PAGE_U, NLBA_U, drop=0.03, dup=0.03, delay=0.004, core_delay=0.006)
    exp = UdpExport(tmp_path, m.port, nslot=NSLOT_U, slot_bytes=PAGE_U, timeout=0.02, max_timeout=0.2)
    rng = random.Random(18)
    answered: list[tuple[int, bytes]] = []          # (lba, page) of every write answered, in order
    covers: list[int] = []                          # per flush sent: len(answered) then
    busy: dict[int, tuple] = {}
    sent = 0
    try:
        c = NbdClient(exp.sock)
        while sent < 150 or busy:
            flushing = any(b[0] == NBD_FLUSH for b in busy.values())
            if sent < 150 and len(busy) < 6 and (not busy or rng.random() < 0.8):
                if not flushing and sent > 6 and rng.random() < 0.15:
                    busy[c.send(NBD_FLUSH)] = (NBD_FLUSH,)
                    covers.append(len(answered))
                else:
                    taken = set().union(*(b[1] for b in busy.values() if b[0] == NBD_WRITE))
                    lba, n = rng.randrange(NLBA_U - 1), rng.randint(1, 2)
                    if {lba, lba + n - 1} & taken:
                        continue
                    data = rng.randbytes(n * PAGE_U)
                    busy[c.send(NBD_WRITE, lba * PAGE_U, n * PAGE_U, data)] = (NBD_WRITE, {lba, lba + n - 1}, lba, data)
                sent += 1
                continue
            h, err, _ = c.reply()
            assert err == 0, err
            b = busy.pop(h)
            if b[0] == NBD_WRITE:
                answered += [(b[2] + k, b[3][k * PAGE_U:(k + 1) * PAGE_U]) for k in range(len(b[3]) // PAGE_U)]
        c.close()
    finally:
        exp.stop()
        m.close()
    assert len(m.flushes) == len(covers) >= 8, (len(m.flushes), len(covers))
    for k, ((nwritten, in_core), upto) in enumerate(zip(m.flushes, covers)):
        done = set(m.written[:nwritten])
        missing = [lba for lba, d in answered[:upto] if (lba, d) not in done]
        assert not missing, f"flush {k}: answered writes of LBAs {missing} not executed before the FLUSH"
        assert in_core == 0, f"flush {k}: {in_core} WRITE commands sent before it still in the core when it came"
