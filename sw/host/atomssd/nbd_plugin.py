# SPDX-License-Identifier: Apache-2.0
"""nbdkit Python plugin: the simulated atomssd (the full system with the NVMe front end) as an NBD
export. Every NBD request becomes NVMe commands of the project's driver on the simulated device
(docs/host-attach.md):

    nbdkit -U <socket> python sw/host/atomssd/nbd_plugin.py dir=<image dir> exe=<ats_soc_sim> \
        fw=<firmware.init> ndie=<dies> [queues=2]

(`python -m atomssd.attach` builds the simulator and the firmware and starts it this way.)

- `dir`: the die images (created by the first boot: the firmware formats blank dies; later starts
  recover), the simulator's log and `sim.pid` (the simulator's process id: SIGKILL it to cut power).
- READ → NVMe Read (split at MDTS), WRITE → NVMe Write (FUA when the NBD request has FUA; a request
  not aligned to the LBA size is read-modify-written), FLUSH → NVMe Flush, TRIM → Dataset Management
  (deallocate; whole LBAs inside the range only). A failed NVMe command, or a simulator that is
  gone, answers the request with EIO.
- Requests are served one at a time (thread model serialize_all_requests); the device starts at the
  first connection and powers off (images saved) when nbdkit exits."""
from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import nbdkit  # noqa: E402  (provided by nbdkit's Python plugin)

from atomssd.hostport import HostPort  # noqa: E402
from atomssd.nvme import NvmeError, run_sync  # noqa: E402
from atomssd.nvme_sim import open_device  # noqa: E402

API_VERSION = 2

_cfg = {"dir": None, "exe": None, "fw": None, "ndie": None, "queues": "2"}
_dev: dict = {}


def config(key, value):
    if key not in _cfg:
        raise RuntimeError(f"unknown parameter {key} ({', '.join(_cfg)})")
    _cfg[key] = value


def config_complete():
    for k in ("dir", "exe", "fw", "ndie"):
        if not _cfg[k]:
            raise RuntimeError(f"{k}=... is required")


def thread_model():
    return nbdkit.THREAD_MODEL_SERIALIZE_ALL_REQUESTS


def _device():
    if _dev:
        return _dev
    d = Path(_cfg["dir"]).resolve()
    d.mkdir(parents=True, exist_ok=True)
    hp = HostPort(Path(_cfg["exe"]), Path(_cfg["fw"]), [d / f"die{i}.img" for i in range(int(_cfg["ndie"]))], cwd=d)
    (d / "sim.pid").write_text(f"{hp.proc.pid}\n")
    try:
        tr, drv = open_device(hp, io_queues=int(_cfg["queues"]))
    except BaseException:
        hp.close()                                   # no second simulator on the same images later
        raise
    _dev.update(hp=hp, tr=tr, drv=drv, lba=drv.lba_bytes, nlbas=drv.ns.nsze,
                mdts=min(drv.max_transfer, 1 << 16) // drv.lba_bytes, q=0)
    nbdkit.debug(f"atomssd: {drv.ns.nsze} LBAs of {drv.lba_bytes} bytes, booted at cycle {hp.cycle}")
    return _dev


def open(readonly):  # noqa: A001  (nbdkit's name)
    _device()
    return 1


def get_size(h):
    d = _device()
    return d["nlbas"] * d["lba"]


def can_write(h):
    return True


def can_flush(h):
    return True


def can_trim(h):
    return True


def can_fua(h):
    return nbdkit.FUA_NATIVE


def _run(gen):
    d = _device()
    try:
        r = run_sync(gen, d["tr"])
    except (NvmeError, OSError, RuntimeError) as e:
        nbdkit.debug(f"atomssd: {e}")
        nbdkit.set_error(errno.EIO)
        raise
    if d["hp"].errors:                               # the root port saw the device break a rule
        with (Path(_cfg["dir"]) / "harness_errors.txt").open("a") as f:
            f.write("\n".join(d["hp"].errors) + "\n")
        d["hp"].errors.clear()
        nbdkit.set_error(errno.EIO)
        raise RuntimeError("the simulation reported errors (harness_errors.txt)")
    return r


def _queue() -> int:
    d = _dev
    d["q"] = d["q"] % len([q for q in d["drv"].sqs if q]) + 1        # round robin over the I/O queues
    return d["q"]


def _read(lba: int, n: int) -> bytes:
    d = _device()
    out = bytearray()
    while n:
        k = min(n, d["mdts"])
        out += _run(d["drv"].read(_queue(), lba, k))
        lba, n = lba + k, n - k
    return bytes(out)


def pread(h, buf, offset, flags):
    d = _device()
    lb = d["lba"]
    first, last = offset // lb, (offset + len(buf) - 1) // lb
    data = _read(first, last - first + 1)
    o = offset - first * lb
    buf[:] = data[o:o + len(buf)]


def pwrite(h, buf, offset, flags):
    d = _device()
    lb = d["lba"]
    fua = bool(flags & nbdkit.FLAG_FUA)
    first, last = offset // lb, (offset + len(buf) - 1) // lb
    data = bytes(buf)
    if offset % lb or len(buf) % lb:                    # read-modify-write of the partial LBAs
        old = bytearray(_read(first, last - first + 1))
        o = offset - first * lb
        old[o:o + len(data)] = data
        data = bytes(old)
    lba, i = first, 0
    while i < len(data):
        k = min((len(data) - i) // lb, d["mdts"])
        _run(d["drv"].write(_queue(), lba, data[i:i + k * lb], fua=fua))
        lba, i = lba + k, i + k * lb


def flush(h, flags):
    _run(_device()["drv"].flush(1))


def trim(h, count, offset, flags):
    d = _device()
    lb = d["lba"]
    first = -(-offset // lb)
    end = (offset + count) // lb
    ranges = []
    while first < end:
        k = min(end - first, 65536)
        ranges.append((first, k))
        first += k
    for i in range(0, len(ranges), 8):
        _run(d["drv"].dsm(1, ranges[i:i + 8]))
    if flags & nbdkit.FLAG_FUA:
        flush(h, 0)


def close(h):
    pass


def unload():
    if _dev:
        try:
            info = _dev["hp"].close()                   # power off: the dies save their images
            info.pop("log", None)
            (Path(_cfg["dir"]) / "sim_info.json").write_text(json.dumps(info, indent=1) + "\n")
        except Exception:  # noqa: BLE001
            pass
        _dev.clear()
