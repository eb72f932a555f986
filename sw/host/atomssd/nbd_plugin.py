# SPDX-License-Identifier: Apache-2.0
"""nbdkit Python plugin: the simulated atomssd (the full system with the NVMe front end) as an NBD
export. Every NBD request becomes NVMe commands of the project's driver on the simulated device
(docs/host-attach.md):

    nbdkit -U <socket> python sw/host/atomssd/nbd_plugin.py dir=<image dir> exe=<ats_soc_sim> \
        fw=<firmware.init> ndie=<dies> [queues=2] [inflight=32]

(`python -m atomssd.attach` builds the simulator and the firmware and starts it this way.)

- `dir`: the die images (created by the first boot: the firmware formats blank dies; later starts
  recover), the simulator's log and `sim.pid` (the simulator's process id: SIGKILL it to cut power).
- READ → NVMe Read (split at MDTS), WRITE → NVMe Write (FUA when the NBD request has FUA; a request
  not aligned to the LBA size is read-modify-written, one such request at a time), FLUSH → NVMe
  Flush, TRIM → Dataset Management (deallocate; whole LBAs inside the range only). A failed NVMe
  command, or a simulator that is gone, answers the request with EIO.
- Requests run in parallel (thread model parallel): nbdkit's threads hand their NVMe commands to one
  device thread, which owns the simulator: it submits every command waiting (up to `inflight`
  outstanding, round robin over the I/O queues), runs the simulation until the next MSI (a CQE was
  posted; at most SLICE cycles, so that new requests get in), reaps every CQ and answers the
  requests whose commands are all done. So the device sees the client's queue depth, and the
  simulation runs freely between completions instead of in polls of a few hundred cycles.
- The device starts at the first connection and powers off (images saved) when nbdkit exits."""
from __future__ import annotations

import errno
import collections
import json
import queue
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import nbdkit  # noqa: E402  (provided by nbdkit's Python plugin)

from atomssd.hostport import HostPort  # noqa: E402
from atomssd.nvme import CSTS_CFS, REG_CSTS, NvmeError, rd32, run_sync  # noqa: E402
from atomssd.nvme_sim import open_device  # noqa: E402

API_VERSION = 2

SLICE = 20_000               # cycles a run may last before new requests are let in (~0.1 s of wall time)
TIMEOUT = 50_000_000         # cycles a command may take (0.5 s of device time)
HOST_MEM_MB = 64             # the simulator's host memory: data buffers of `inflight` commands

_cfg = {"dir": None, "exe": None, "fw": None, "ndie": None, "queues": "2", "inflight": "32"}
_dev: dict = {}
_dev_lock = threading.Lock()
_rmw_lock = threading.Lock()


def config(key, value):
    if key not in _cfg:
        raise RuntimeError(f"unknown parameter {key} ({', '.join(_cfg)})")
    _cfg[key] = value


def config_complete():
    for k in ("dir", "exe", "fw", "ndie"):
        if not _cfg[k]:
            raise RuntimeError(f"{k}=... is required")


def thread_model():
    return nbdkit.THREAD_MODEL_PARALLEL


class _Request:
    """One NBD request's NVMe commands: ops are ("read", lba, n) / ("write", lba, data, fua) /
    ("flush",) / ("dsm", ranges); `results` the read data (None for others) in op order."""

    def __init__(self, ops: list[tuple]):
        self.ops = ops
        self.results: list = [None] * len(ops)
        self.left = len(ops)
        self.error: str | None = None
        self.done = threading.Event()

    def fail(self, why: str) -> None:
        if not self.done.is_set():
            self.error = why
            self.done.set()


class Device:
    """The simulated device and its device thread (module docstring)."""

    def __init__(self, d: Path):
        self.dir = d
        self.hp = HostPort(Path(_cfg["exe"]), Path(_cfg["fw"]), [d / f"die{i}.img" for i in range(int(_cfg["ndie"]))],
                           cwd=d, extra=[f"+hostmem_mb={HOST_MEM_MB}"])
        (d / "sim.pid").write_text(f"{self.hp.proc.pid}\n")
        try:
            self.tr, self.drv = open_device(self.hp, io_queues=int(_cfg["queues"]), stop_at_msi=True,
                                            timeout_cycles=TIMEOUT)
        except BaseException:
            self.hp.close()                          # no second simulator on the same images later
            raise
        self.drv.poll_cycles = SLICE
        self.lba = self.drv.lba_bytes
        self.nlbas = self.drv.ns.nsze
        self.mdts = min(self.drv.max_transfer, 1 << 16) // self.lba
        self.qids = sorted(q for q in self.drv.sqs if q)
        self.inflight = max(1, int(_cfg["inflight"]))
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.dead: str | None = None
        self.rr = 0
        self.thread = threading.Thread(target=self._loop, name="atomssd-device", daemon=True)
        self.thread.start()

    # ---- nbdkit threads
    def do(self, ops: list[tuple]) -> list:
        """Runs the commands of one request (in parallel with other requests); raises on a failure."""
        r = _Request(ops)
        if self.dead:
            raise RuntimeError(self.dead)
        self.q.put(r)
        while not r.done.wait(2.0):                  # (a device that died fails every request:
            if self.dead:                            # none may wait for ever, or the kernel's
                r.fail(self.dead)                    # flush through nbdfuse hangs an unmount)
        if r.error:
            nbdkit.debug(f"atomssd: {r.error}")
            raise RuntimeError(r.error)
        return r.results

    def stop(self) -> dict:
        self.q.put(None)
        self.thread.join(timeout=120)
        info = self.hp.close()                       # power off: the dies save their images
        info.pop("log", None)
        return info

    # ---- the device thread
    def _submit(self, op: tuple) -> "object":
        self.rr = self.rr % len(self.qids) + 1
        qid = self.qids[self.rr - 1]
        kind = op[0]
        if kind == "read":
            g = self.drv.submit_read(qid, op[1], op[2])
        elif kind == "write":
            g = self.drv.submit_write(qid, op[1], op[2], fua=op[3])
        elif kind == "flush":
            g = self.drv.submit_flush(qid)
        else:
            g = self.drv.submit_dsm(qid, op[1])
        return run_sync(g, self.tr)

    def _loop(self) -> None:
        waiting: collections.deque = collections.deque()   # (request, op index) not submitted yet
        out: dict = {}                               # id(Command) -> (Command, request, op index, cycle submitted)
        stopping = False
        idle_slices = 0
        sub = None                                   # the request whose op is being submitted
        while True:
            try:
                item = self.q.get() if not out and not waiting and not stopping else self.q.get_nowait()
            except queue.Empty:
                item = False
            while item is not False:
                if item is None:
                    stopping = True
                else:
                    waiting.extend((item, i) for i in range(len(item.ops)))
                try:
                    item = self.q.get_nowait()
                except queue.Empty:
                    item = False
            if stopping and not out and not waiting:
                return
            try:
                while waiting and len(out) < self.inflight:
                    r, i = waiting.popleft()
                    if r.done.is_set():
                        continue                     # its request failed already
                    sub = r                          # (failed below if the submission breaks)
                    cmd = self._submit(r.ops[i])
                    sub = None
                    out[id(cmd)] = (cmd, r, i, self.hp.cycle)
                if not out:
                    continue
                self.tr.wait(SLICE)                  # until an MSI, at most SLICE cycles
                self.hp.msis.clear()                 # (every CQ is reaped below)
                for cqid in sorted(self.drv.cqs):
                    if cqid:
                        run_sync(self.drv.reap(cqid), self.tr)
                if self.hp.errors:                   # the root port saw the device break a rule
                    with (self.dir / "harness_errors.txt").open("a") as f:
                        f.write("\n".join(self.hp.errors) + "\n")
                    self.hp.errors.clear()
                    raise RuntimeError("the simulation reported errors (harness_errors.txt)")
                progress = False
                for key in [k for k, v in out.items() if v[0].done]:
                    cmd, r, i, _ = out.pop(key)
                    progress = True
                    if not cmd.ok:
                        r.fail(f"{cmd.what}: {cmd.cqe.name if cmd.cqe else 'dropped'}")
                        continue
                    r.results[i] = cmd.data
                    r.left -= 1
                    if r.left == 0 and not r.done.is_set():
                        r.done.set()
                idle_slices = 0 if progress else idle_slices + 1
                if idle_slices and idle_slices % 64 == 0:          # a controller that stopped
                    csts = run_sync(_rd32(REG_CSTS), self.tr)
                    if csts & CSTS_CFS:
                        raise NvmeError(f"controller fatal status (CSTS {csts:#x})")
                for cmd, r, i, cyc in list(out.values()):
                    if self.hp.cycle - cyc > TIMEOUT:
                        r.fail(f"{cmd.what}: no completion within {TIMEOUT} cycles")
            except Exception as e:  # noqa: BLE001 - the simulator is gone or broke a rule
                self.dead = f"atomssd: the device is gone: {e}"
                if sub is not None:                  # popped from `waiting`, not yet in `out`
                    sub.fail(self.dead)
                for _, r, _, _ in out.values():
                    r.fail(self.dead)
                for r, _ in waiting:
                    r.fail(self.dead)
                out.clear()
                waiting.clear()
                while True:                          # answer whatever arrives until unload
                    item = self.q.get()
                    if item is None:
                        return
                    item.fail(self.dead)


def _rd32(off: int):
    return (yield rd32(off))


def _device() -> Device:
    with _dev_lock:
        if not _dev:
            d = Path(_cfg["dir"]).resolve()
            d.mkdir(parents=True, exist_ok=True)
            dev = Device(d)
            _dev["dev"] = dev
            nbdkit.debug(f"atomssd: {dev.nlbas} LBAs of {dev.lba} bytes, booted at cycle {dev.hp.cycle}")
        return _dev["dev"]


def open(readonly):  # noqa: A001  (nbdkit's name)
    _device()
    return 1


def get_size(h):
    d = _device()
    return d.nlbas * d.lba


def can_write(h):
    return True


def can_flush(h):
    return True


def can_trim(h):
    return True


def can_fua(h):
    return nbdkit.FUA_NATIVE


def can_multi_conn(h):
    return True                                      # one device behind every connection


def _do(ops: list[tuple]) -> list:
    try:
        return _device().do(ops)
    except Exception:
        nbdkit.set_error(errno.EIO)
        raise


def _read(lba: int, n: int) -> bytes:
    d = _device()
    ops = []
    while n:
        k = min(n, d.mdts)
        ops.append(("read", lba, k))
        lba, n = lba + k, n - k
    return b"".join(_do(ops))


def pread(h, buf, offset, flags):
    d = _device()
    lb = d.lba
    first, last = offset // lb, (offset + len(buf) - 1) // lb
    data = _read(first, last - first + 1)
    o = offset - first * lb
    buf[:] = data[o:o + len(buf)]


def _write(first: int, data: bytes, fua: bool) -> None:
    d = _device()
    lb = d.lba
    ops, lba, i = [], first, 0
    while i < len(data):
        k = min((len(data) - i) // lb, d.mdts)
        ops.append(("write", lba, data[i:i + k * lb], fua))
        lba, i = lba + k, i + k * lb
    _do(ops)


def pwrite(h, buf, offset, flags):
    d = _device()
    lb = d.lba
    fua = bool(flags & nbdkit.FLAG_FUA)
    first, last = offset // lb, (offset + len(buf) - 1) // lb
    data = bytes(buf)
    if offset % lb or len(buf) % lb:                 # read-modify-write of the partial LBAs, one at a
        with _rmw_lock:                              # time (two of them may share an LBA)
            old = bytearray(_read(first, last - first + 1))
            o = offset - first * lb
            old[o:o + len(data)] = data
            _write(first, bytes(old), fua)
        return
    _write(first, data, fua)


def flush(h, flags):
    _do([("flush",)])


def trim(h, count, offset, flags):
    d = _device()
    lb = d.lba
    first = -(-offset // lb)
    end = (offset + count) // lb
    ranges = []
    while first < end:
        k = min(end - first, 65536)
        ranges.append((first, k))
        first += k
    if ranges:
        _do([("dsm", ranges[i:i + 8]) for i in range(0, len(ranges), 8)])
    if flags & nbdkit.FLAG_FUA:
        flush(h, 0)


def close(h):
    pass


def unload():
    with _dev_lock:
        if _dev:
            try:
                info = _dev["dev"].stop()
                (Path(_cfg["dir"]) / "sim_info.json").write_text(json.dumps(info, indent=1) + "\n")
            except Exception:  # noqa: BLE001
                pass
            _dev.clear()
