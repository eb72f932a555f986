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
- The device starts at the first connection and powers off (images saved) when nbdkit exits.

**A board by address** (UDP mode, docs/host-attach.md "A board by address"):

    nbdkit -U <socket> python sw/host/atomssd/nbd_plugin.py addr=HOST[:PORT] [dir=<dir>] [nslot=4] \
        [slot_bytes=4096] [timeout=0.02] [max_timeout=1.0] [retries=30] [boot_wait=60]

the board's UDP host link (udplink.UdpDevice, docs/host-port.md "UDP host link"; port 16724 when not
given) instead of the simulator: no simulator, no die images; the size is IDENTIFY's num_lbas ×
page_bytes (asked at the first connection, retried for up to `boot_wait` s). READ → READs, WRITE →
WRITEs (FUA flag when the request has FUA; unaligned: read-modify-write as above), each split at
`slot_bytes` (the bitstream's SLOT_BYTES: one 4 KiB LBA a command on the ECPIX-5; an LBA larger
than it is refused at open), FLUSH → FLUSH
(sent once every command sent before it has completed), TRIM → TRIM of the whole LBAs inside the
range. Up to `nslot` commands in flight (the bitstream's NSLOT). A command completing with a status
other than OK, or without an answer after `retries` retries (the wait `timeout` s doubled per retry
up to `max_timeout`), answers its request with EIO; when every slot is lost that way the device is
gone and every request answers EIO at once (restart nbdkit). `dir`: where `link_stats.json` (the
link's counters) is written when nbdkit exits (UdpBackend)."""
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

from atomssd.device import decode_identify  # noqa: E402
from atomssd.hostport import OP, ST, F_FUA, HostPort  # noqa: E402
from atomssd.nvme import CSTS_CFS, REG_CSTS, NvmeError, rd32, run_sync  # noqa: E402
from atomssd.nvme_sim import open_device  # noqa: E402
from atomssd.udplink import DEV_PORT, LinkError, LinkTimeout, UdpDevice  # noqa: E402

API_VERSION = 2

SLICE = 20_000               # cycles a run may last before new requests are let in (~0.1 s of wall time)
TIMEOUT = 50_000_000         # cycles a command may take (0.5 s of device time)
HOST_MEM_MB = 64             # the simulator's host memory: data buffers of `inflight` commands

_cfg = {"dir": None, "exe": None, "fw": None, "ndie": None, "queues": "2", "inflight": "32",
        "addr": None, "nslot": "4", "slot_bytes": "4096", "timeout": "0.02", "max_timeout": "1.0", "retries": "30",
        "boot_wait": "60"}
_dev: dict = {}
_dev_lock = threading.Lock()
_rmw_lock = threading.Lock()


def config(key, value):
    if key not in _cfg:
        raise RuntimeError(f"unknown parameter {key} ({', '.join(_cfg)})")
    _cfg[key] = value


def config_complete():
    if _cfg["addr"]:
        return                                       # a board by address: nothing local
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

    @staticmethod
    def trim_ops(ranges: list[tuple[int, int]]) -> list[tuple]:
        return [("dsm", ranges[i:i + 8]) for i in range(0, len(ranges), 8)]

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
            stopping |= _intake(self.q, waiting, block=not out and not waiting and not stopping)
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
                # sub: popped from `waiting`, not yet in `out`
                return self._gone(e, [sub] + [v[1] for v in out.values()] + [r for r, _ in waiting])

    def _gone(self, e: Exception, reqs: list) -> None:
        """The device is gone: fails `reqs` (None entries skipped) and every request that arrives
        until unload (none may wait for ever)."""
        self.dead = f"atomssd: the device is gone: {e}"
        for r in reqs:
            if r is not None:
                r.fail(self.dead)
        while True:
            item = self.q.get()
            if item is None:
                return
            item.fail(self.dead)


def _intake(q: queue.SimpleQueue, waiting: collections.deque, block: bool) -> bool:
    """The device thread's request intake (both backends): moves every request queued on `q` to
    `waiting` as (request, op index), waiting for the first when `block`; True when the stop marker
    (None) was among them."""
    try:
        item = q.get() if block else q.get_nowait()
    except queue.Empty:
        return False
    stop = False
    while True:
        if item is None:
            stop = True
        else:
            waiting.extend((item, i) for i in range(len(item.ops)))
        try:
            item = q.get_nowait()
        except queue.Empty:
            return stop


def parse_addr(addr: str) -> tuple[str, int]:
    """HOST[:PORT] (IPv4 address or name; the port 16724 when not given)."""
    host, sep, port = addr.rpartition(":")
    if not sep:
        return addr, DEV_PORT
    if not host or not port.isdigit():
        raise RuntimeError(f"addr={addr}: HOST[:PORT] expected")
    return host, int(port)


class UdpBackend:
    """A board by address (`addr=HOST[:PORT]`): the UDP host link's client (udplink.UdpDevice) and a
    device thread that owns it. The geometry is the device's IDENTIFY (page_bytes, num_lbas), asked
    at the first connection and retried for up to `boot_wait` seconds (a board still booting).
    Requests are split into commands of at most `slot_bytes` (the bitstream's SLOT_BYTES); the
    thread sends every command waiting while a slot is free (up to `nslot` in flight: the link's
    own limit), so the device sees the client's queue depth. A FLUSH is sent when every command
    sent before it has completed (NBD asks only for the writes already answered; this also keeps
    the link's ordering rule trivially). A command that completes with a status other than OK, or
    that gets no answer after `retries` retries (udplink's LinkTimeout: its slot stays out of use),
    fails its request (EIO); when no slot is left the device is declared gone and every request
    fails at once."""

    def __init__(self, addr: str):
        host, port = parse_addr(addr)
        c = _cfg
        self.link = UdpDevice(host, port, nslot=int(c["nslot"]), slot_bytes=int(c["slot_bytes"]),
                              timeout=float(c["timeout"]), max_timeout=float(c["max_timeout"]),
                              max_retries=int(c["retries"]))
        try:
            self.idn = self._identify(float(c["boot_wait"]))
        except BaseException:
            self.link.close()
            raise
        self.lba = self.idn["page_bytes"]
        self.nlbas = self.idn["num_lbas"]
        if self.lba <= 0 or self.lba % 512 or self.nlbas <= 0:
            self.link.close()
            raise RuntimeError(f"IDENTIFY: page_bytes {self.lba}, num_lbas {self.nlbas}")
        if self.lba > self.link.slot_bytes:
            self.link.close()
            raise RuntimeError(f"IDENTIFY: LBAs of {self.lba} bytes, above slot_bytes={self.link.slot_bytes}: no "
                               "command could carry one (slot_bytes must be the bitstream's SLOT_BYTES)")
        self.link.page_bytes, self.link.nlba = self.lba, self.nlbas
        self.mdts = self.link.slot_bytes // self.lba
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.dead: str | None = None
        self.thread = threading.Thread(target=self._loop, name="atomssd-udp", daemon=True)
        self.thread.start()

    def _identify(self, boot_wait: float) -> dict:
        """IDENTIFY, retried while the board boots (the retry budget stretched to `boot_wait` s)."""
        link = self.link
        keep = link.max_retries
        link.max_retries = max(keep, int(boot_wait / max(link.max_timeout, 1e-3)) + 8)
        try:
            p = link.wait(link.submit(OP["IDENTIFY"]), timeout=max(boot_wait, 1.0))
            return decode_identify(link._check(p, "IDENTIFY").data)
        finally:
            link.max_retries = keep

    do = Device.do
    _gone = Device._gone

    @staticmethod
    def trim_ops(ranges: list[tuple[int, int]]) -> list[tuple]:
        return [("trim", lba, n) for lba, n in ranges]

    def stop(self) -> dict:
        self.q.put(None)
        self.thread.join(timeout=120)
        self.link.close()
        return dict(self.link.stats)

    def _submit(self, op: tuple) -> int:
        kind, link = op[0], self.link
        if kind == "read":
            return link.submit(OP["READ"], op[1], op[2] - 1)
        if kind == "write":
            return link.submit(OP["WRITE"], op[1], len(op[2]) // self.lba - 1, op[2], flags=F_FUA if op[3] else 0)
        if kind == "trim":
            return link.submit(OP["TRIM"], op[1], op[2] - 1)
        return link.submit(OP["FLUSH"])

    def _loop(self) -> None:
        link = self.link
        waiting: collections.deque = collections.deque()   # (request, op index) not sent yet
        out: dict = {}                               # tag (slot) -> (request, op index)
        stopping = False
        sub = None
        while True:
            stopping |= _intake(self.q, waiting, block=not out and not waiting and not stopping)
            if stopping and not out and not waiting:
                return
            try:
                while waiting and link.free_tags:
                    r, i = waiting[0]
                    if r.done.is_set():
                        waiting.popleft()            # its request failed already
                        continue
                    if r.ops[i][0] == "flush" and link.outstanding:
                        break                        # after every command sent before it (an ordered submit
                                                     # with commands out would collect completions
                                                     # here, their slots reused: test_nbd_plugin)
                    waiting.popleft()
                    sub = r
                    out[self._submit(r.ops[i])] = (r, i)
                    sub = None
                if not out:
                    if waiting and not link.free_tags:
                        raise LinkTimeout("every slot of the link is lost (commands that got no answer)")
                    continue
                try:
                    done = link.poll(0.05 if waiting or not link.free_tags else 0.002)
                except LinkError as e:               # one command failed (no answer, or the device's ERROR)
                    if e.tag not in out:
                        raise
                    r, i = out.pop(e.tag)
                    r.fail(f"{r.ops[i][0]}: {e}")
                    continue
                for p in done:
                    r, i = out.pop(p.tag)
                    if p.cpl.status != ST["OK"]:
                        r.fail(f"{r.ops[i][0]} {r.ops[i][1:2]}: status {p.cpl.status:#x}")
                        continue
                    r.results[i] = p.data
                    r.left -= 1
                    if r.left == 0 and not r.done.is_set():
                        r.done.set()
            except Exception as e:  # noqa: BLE001 - the link is gone
                return self._gone(e, [sub] + [r for r, _ in out.values()] + [r for r, _ in waiting])


def _rd32(off: int):
    return (yield rd32(off))


def _device() -> Device:
    with _dev_lock:
        if not _dev and _cfg["addr"]:
            dev = UdpBackend(_cfg["addr"])
            _dev["dev"] = dev
            nbdkit.debug(f"atomssd: {_cfg['addr']}: {dev.nlbas} LBAs of {dev.lba} bytes, IDENTIFY {dev.idn}")
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
        _do(d.trim_ops(ranges))
    if flags & nbdkit.FLAG_FUA:
        flush(h, 0)


def close(h):
    pass


def unload():
    with _dev_lock:
        if _dev:
            try:
                info = _dev["dev"].stop()
                if _cfg["dir"]:
                    (Path(_cfg["dir"]) / ("link_stats.json" if _cfg["addr"] else "sim_info.json")).write_text(
                        json.dumps(info, indent=1) + "\n")
            except Exception as e:  # noqa: BLE001
                nbdkit.debug(f"atomssd: unload: {e!r}")
            _dev.clear()


def cleanup():
    """nbdkit's Python plugin calls `cleanup` when nbdkit exits (1.32 has no `unload` callback, so
    `unload` above never ran in the simulator mode: the simulator ends when its socket closes). UDP
    mode only: stop the device thread, close the socket, write `<dir>/link_stats.json`."""
    if _cfg["addr"]:
        unload()
