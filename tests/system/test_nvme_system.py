# SPDX-License-Identifier: Apache-2.0
"""The whole device through the NVMe front end: the full-system simulation built with ats_nvme
before the host port (`sim/soc/build.py --nvme`, the harness as PCIe root port), driven by the
project's NVMe driver (sw/host/atomssd/nvme.py over nvme_sim.SimTransport), with power cuts.

Each seed: a fresh device (format on blank dies), NVMe bring-up (Identify against the device's
geometry), a durable base (writes on two I/O queues, then Flush), then a mixed phase submitted
without waiting (plain writes, FUA writes, transactions committed, transactions left open, reads of
the base) with a power cut armed at a random cycle inside it. After the restart (recovery) and a new
bring-up every LBA the seed touched is read back through NVMe and checked against the design brief's
invariants (docs/persistence.md):
  - durability: the base (flushed) and every FUA write and committed transaction whose CQE the host
    saw before the cut hold their data;
  - atomicity: a transaction whose commit was submitted is all new or all old; one never committed
    is all old; a multi-block Write inside the atomic unit (NAWUPF + 1 blocks, not crossing an NABSPF
    boundary: docs/host-interface.md "Atomic writes") is all new or all old, all new when its FUA
    CQE was seen;
  - no torn or foreign data: every page reads as one of the versions the host wrote to it (or the
    base / zeros);
  - reads of the base before the cut returned the base.
`test_nvme_swrite_cut`: static transactions (SWRITE / SREAD, docs/host-interface.md §1.11) with
atomic, plain and FUA Writes across rounds of power cuts on one device, checked against the recovery
oracle and docs/persistence.md §9 (its docstring); it first checks the SWRITE limits of Identify
against those of Get Log Page LID 0xC0.
Environment: ATS_SEED (first seed), ATS_LONG=1 (more seeds; SWRITE: 8 seeds x 25 cuts),
ATS_NVME_SW_CUTS (the SWRITE campaign's cuts a seed)."""
from __future__ import annotations

import os
import random
import re
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "sim" / "soc"))
sys.path.insert(0, str(ROOT / "sw" / "host"))
import harness  # noqa: E402

from atomssd.hostport import CUT_ACCEPT, CUT_CPL, CUT_CYCLE, HostPort, SimError  # noqa: E402
from atomssd import nvme  # noqa: E402
from atomssd.nvme import NvmeError, run_sync  # noqa: E402
from atomssd.nvme_sim import open_device  # noqa: E402

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
SEED0 = int(os.environ.get("ATS_SEED", "1"))
SEEDS = [SEED0 + i for i in range(8 if LONG else 2)]


def _close_clean(hp: HostPort) -> dict:
    """Power off; the root port reported no rule broken, no host-memory access outside, no NAND
    protocol violation."""
    info = hp.close()
    assert not hp.errors, f"the simulation reported errors: {hp.errors[:5]}"
    assert not info.get("mem_errors") and not info.get("viol_total"), info
    return info


def test_nvme_queue_outside_host_memory(tmp_path):
    """Bad input from the host: an I/O SQ whose base is beyond host memory. Its SQE fetch gets an
    Unsupported Request completion from the root port (an ERROR message), the front end sets
    CSTS.CFS and fetches nothing more; a controller reset brings it back. Then data pages outside
    host memory (_data_outside_host_memory), then an I/O CQ beyond host memory: the root port
    refuses its CQE write (`rq_wr_ur`), the front end sets CSTS.CFS and fetches nothing more; CC.EN
    1 -> 0 -> 1 brings it back (docs/host-interface.md §1.8a)."""
    exe, fw, cfg = harness.build("sim", nvme=True)
    hp = HostPort(exe, fw, [tmp_path / f"die{d}.img" for d in range(cfg["ndie"])], cwd=tmp_path)
    try:
        tr, drv = open_device(hp, io_queues=1)
        limit = int(hp.hello["host_mem_bytes"])
        cqe = run_sync(drv.create_io_cq(2, 8), tr)
        assert cqe.ok
        sqe = nvme.Sqe(nvme.ADM_CREATE_SQ, prp1=limit + 0x10000, cdw10=7 << 16 | 2, cdw11=2 << 16 | 1)
        assert run_sync(drv.admin(sqe), tr).ok
        drv.sqs[2] = nvme._SubQ(2, limit + 0x10000, 8, 2)
        run_sync(drv.submit(2, nvme.Sqe(nvme.IO_FLUSH, nsid=1)), tr)    # its SQE cannot be fetched
        tr.wait(200_000)
        assert hp.mmio_read32(nvme.REG_CSTS) & nvme.CSTS_CFS, "no controller fatal status"
        assert any("outside" in e for e in hp.errors), hp.errors
        hp.errors.clear()
        drv.sqs.pop(2)
        drv2 = nvme.NvmeDriver(timeout_cycles=50_000_000, poll_cycles=200)
        run_sync(drv2.bring_up(io_queues=1), tr)                        # the reset clears CFS
        page = bytes(range(256)) * (cfg["page_bytes"] // 256)
        run_sync(drv2.write(1, 3, page), tr)
        assert run_sync(drv2.read(1, 3, 1), tr) == page
        _data_outside_host_memory(hp, tr, drv2, cfg["page_bytes"], limit)
        _cq_outside_host_memory(hp, tr, drv2, cfg["page_bytes"], limit)
    finally:
        info = hp.close()
    assert not hp.errors and not info.get("viol_total"), (hp.errors, info)


def test_die_image_refused(tmp_path):
    """A die image that does not fit the die (sim/nand/README.md "Image file"): another geometry, a
    format version other than 1, a file that ends early. The simulator must stop at start with a
    non-zero exit status and a message naming the image and the reason, and leave the file and its
    journal byte for byte as they were (before: the die printed `cannot load image`, ran blank and
    overwrote the file at its next save). The same image with the die's geometry and version 1
    starts. The image is written by the recovery oracle's `write_image` (the format's independent
    writer)."""
    from atstb.recovery_oracle import write_image
    exe, fw, cfg = harness.build("sim", nvme=True)
    nd, pb, sb = cfg["ndie"], cfg["page_bytes"], cfg["spare_bytes"]
    geo = harness.Geometry(cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], pb, sb)
    rng = random.Random(34)
    pages = {r: rng.randbytes(pb + sb) for r in rng.sample(range(geo.blocks * geo.ppb), 5)}

    def start(images: list, what: str) -> str:
        """Runs the simulator on `images`; it must exit non-zero before its HELLO. Returns its output."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        args = [str(exe), f"+fd={child.fileno()}", f"+firmware={fw}"]
        args += [f"+ats_nand_image{k}={p}" for k, p in enumerate(images)]
        proc = subprocess.Popen(args, pass_fds=(child.fileno(),), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
        child.close()
        parent.shutdown(socket.SHUT_WR)             # no commands: a simulator that runs on powers off
        parent.settimeout(300)
        hello = b""
        while chunk := parent.recv(1 << 16):
            hello += chunk
        parent.close()
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode != 0, f"{what}: the simulator ran on (exit 0):\n{out[-2000:]}"
        assert hello == b"", f"{what}: the simulator said HELLO"
        return out

    bad_d = 1 % nd                                  # one bad die among good (blank) ones
    for what, g, patch, reason in (
            ("geometry", harness.Geometry(geo.num_chan, geo.ways, geo.blocks * 2, geo.ppb, pb, sb), None,
             "geometry"),
            ("version", geo, (28, 2), "format version 2"),
            ("short", geo, "cut", "ends in")):
        d = tmp_path / what
        d.mkdir()
        images = [d / f"die{k}.img" for k in range(nd)]
        write_image(images[bad_d], g, pages)
        raw = bytearray(images[bad_d].read_bytes())
        if patch == "cut":
            raw = raw[:-3]
        elif patch:
            struct.pack_into("<I", raw, patch[0], patch[1])
        images[bad_d].write_bytes(bytes(raw))
        journal = images[bad_d].with_name(images[bad_d].name + ".log")
        jbytes = b"ATSJNL1\0" + bytes(24) + b"E" + struct.pack("<I", 3)   # a journal of another image
        journal.write_bytes(jbytes)
        out = start(images, what)
        assert f"image {images[bad_d]} refused" in out and reason in out, f"{what}: no clear error:\n{out[-2000:]}"
        assert images[bad_d].read_bytes() == bytes(raw), f"{what}: the refused image was changed"
        assert journal.read_bytes() == jbytes, f"{what}: the refused image's journal was changed"
        assert not images[bad_d].with_name(images[bad_d].name + ".tmp").exists()
        assert not any(p.exists() for p in images if p != images[bad_d]), "a good die saved an image"
        # the host library's view: HostPort raises with the simulator's log
        with pytest.raises(SimError, match="refused"):
            HostPort(exe, fw, images, cwd=d)
        assert images[bad_d].read_bytes() == bytes(raw) and journal.read_bytes() == jbytes
    # control: the die's own geometry and version 1 start, and the pages are there at the next save
    d = tmp_path / "good"
    d.mkdir()
    images = [d / f"die{k}.img" for k in range(nd)]
    write_image(images[bad_d], geo, pages)
    written = images[bad_d].read_bytes()
    hp = HostPort(exe, fw, images, cwd=d)
    info = _close_clean(hp)                         # power off at once: the dies save what they loaded
    assert info["exit"] == 0, info["log"][-2000:]
    assert images[bad_d].read_bytes() == written, "the good image did not load (its save differs)"


def _data_outside_host_memory(hp: HostPort, tr, drv, pb: int, limit: int) -> None:
    """Reads and Writes whose data pages are outside host memory complete Data Transfer Error
    (docs/host-interface.md §1.8a): a Write's data read gets Unsupported Request from the root
    port; a Read's data write is dropped by the root port, which tells the device so (`rq_wr_ur`,
    docs/host-port.md "NVMe build"). A Read straddling the end of host memory still writes its
    first page. The root port counts every such access (INFO mem_errors; the first ten are ERROR
    messages), and the device keeps working."""
    rng = random.Random(limit ^ pb)
    d3, d4 = rng.randbytes(pb), rng.randbytes(pb)
    run_sync(drv.write(1, 3, d3 + d4), tr)

    def raw(opc: int, lba: int, nblocks: int, prp1: int, prp2: int = 0):
        sqe = nvme.Sqe(opc, nsid=1, cdw12=nblocks - 1, prp1=prp1, prp2=prp2)
        sqe.set_slba(lba)
        c = run_sync(drv.submit(1, sqe), tr)
        run_sync(drv.wait(c), tr)
        return c.cqe

    dte = (0, 0x04)

    def outside() -> int:
        return int(hp.info()["mem_errors"])

    # (the Write goes to LBA 7: its descriptor was issued before the page was found unreachable)
    for what, opc, lba, prp1, prp2 in (("read, one page beyond", nvme.IO_READ, 3, limit + 0x3000, 0),
                                       ("read, both pages beyond", nvme.IO_READ, 3, limit + 0x2000 - pb, limit + 0x4000),
                                       ("write, one page beyond", nvme.IO_WRITE, 7, limit + 0x1000, 0)):
        n0 = outside()
        nb = 2 if prp2 else 1
        cqe = raw(opc, lba, nb, prp1, prp2)
        assert (cqe.sct, cqe.sc) == dte, f"{what}: status {cqe.name}, not Data Transfer Error"
        assert outside() > n0, f"{what}: the root port saw no access outside host memory"
    # straddling the end: the first LBA lands in the last page of host memory, the second is dropped
    n0 = outside()
    hp.mem_write(limit - pb, rng.randbytes(pb))
    cqe = raw(nvme.IO_READ, 3, 2, limit - pb, limit)
    assert (cqe.sct, cqe.sc) == dte, f"straddling read: status {cqe.name}, not Data Transfer Error"
    assert hp.mem_read(limit - pb, pb) == d3, "straddling read: its first page was not written"
    assert outside() > n0, "straddling read: the root port saw no access outside host memory"
    assert all("outside" in e for e in hp.errors), hp.errors
    hp.errors.clear()
    # the device goes on: the same LBAs read back whole through good pages
    assert run_sync(drv.read(1, 3, 2), tr) == d3 + d4
    assert run_sync(drv.read(1, 3, 1), tr) == d3


def _cq_outside_host_memory(hp: HostPort, tr, drv, pb: int, limit: int) -> None:
    """An I/O CQ beyond host memory, its SQ inside: the CQE of a command on it is a memory write the
    root port refuses (`rq_wr_ur`); the front end sets CSTS.CFS (before: the CQE was lost silently and
    the controller went on) and fetches no more commands; CC.EN 1 -> 0 -> 1 (a new bring-up) clears
    CFS and the device works again."""
    assert not hp.mmio_read32(nvme.REG_CSTS) & nvme.CSTS_CFS
    sqe = nvme.Sqe(nvme.ADM_CREATE_CQ, prp1=limit + 0x20000, cdw10=7 << 16 | 2, cdw11=2 << 16 | 1 << 1 | 1)
    assert run_sync(drv.admin(sqe), tr).ok           # not in drv.cqs: the host never reads it
    assert run_sync(drv.create_io_sq(2, 8, 2), tr).ok
    n0 = int(hp.info()["mem_errors"])
    c = run_sync(drv.submit(2, nvme.Sqe(nvme.IO_FLUSH, nsid=1)), tr)
    tr.wait(200_000)
    assert hp.mmio_read32(nvme.REG_CSTS) & nvme.CSTS_CFS, "a refused CQE write: no controller fatal status"
    assert int(hp.info()["mem_errors"]) > n0, "the root port saw no CQE write outside host memory"
    assert c.cqe is None
    # no more fetches: an admin command submitted now never completes
    a = run_sync(drv.submit(0, nvme.Sqe(nvme.ADM_GET_FEATURES, cdw10=nvme.FID_NUM_QUEUES)), tr)
    tr.wait(100_000)
    run_sync(drv.reap(0), tr)
    assert a.cqe is None, "a command completed after CSTS.CFS"
    assert all("outside" in e for e in hp.errors), hp.errors
    hp.errors.clear()
    drv3 = nvme.NvmeDriver(timeout_cycles=50_000_000, poll_cycles=200)
    run_sync(drv3.bring_up(io_queues=1), tr)           # CC.EN 1 -> 0 -> 1
    assert hp.mmio_read32(nvme.REG_CSTS) == nvme.CSTS_RDY, "CSTS after the reset"
    d = bytes(range(255, -1, -1)) * (pb // 256)
    run_sync(drv3.write(1, 5, d), tr)
    assert run_sync(drv3.read(1, 5, 1), tr) == d


def _acked(c) -> bool:
    """The command's CQE reached host memory with Successful Completion (the host may have seen it)."""
    return c is not None and c.cqe is not None and c.cqe.ok


def _check_recovered(got: dict, base: dict, versions: dict, cmds: list, commits: list, pb: int,
                     atomics: list = ()) -> None:
    """The invariants after a cut and its recovery (the module docstring), over the LBAs read back
    (`got`): `base` = flushed before the cut; `versions` = every version written to an LBA (the
    LBAs of `cmds` and `commits` were never written before these commands: zero or one of them);
    `cmds` = (kind plain / fua / tx / open, lba, data, Command); `commits` = (txid, LBAs, the TX
    Commit's Command or None when it was never submitted); `atomics` = (lba, blocks, data, FUA,
    Command) of multi-block Writes inside the atomic unit on LBAs never written before: all new or
    all zeros, all new when a FUA one's CQE was seen."""
    zero = bytes(pb)
    for lba in got:
        assert got[lba] in versions.get(lba, []) + [zero], f"LBA {lba}: data of no version (torn or foreign)"
    for lba in base:
        assert got[lba] == base[lba], f"LBA {lba}: the flushed base was lost"
    for kind, lba, d, c in cmds:
        if kind == "fua" and _acked(c):
            assert got[lba] == d, f"LBA {lba}: an acknowledged FUA write was lost"
        if kind == "open":
            assert got[lba] == zero, f"LBA {lba}: data of a transaction never committed is visible"
    for txid, group, c in commits:
        new = [got[lba] == versions[lba][-1] for lba in group]
        assert all(got[lba] in (versions[lba][-1], zero) for lba in group)
        if c is not None:
            assert all(new) or not any(new), f"tx {txid}: partly visible after the cut ({new})"
        else:
            assert not any(new), f"tx {txid}: visible without a commit"
        if _acked(c):
            assert all(new), f"tx {txid}: committed (CQE seen) but lost"
    for lba, k, d, fua, c in atomics:
        new = [got[lba + i] == d[i * pb:(i + 1) * pb] for i in range(k)]
        assert all(n or got[lba + i] == zero for i, n in enumerate(new)), f"atomic write at {lba}: foreign data"
        assert all(new) or not any(new), f"atomic write of {k} blocks at {lba}: torn by the cut ({new})"
        if fua and _acked(c):
            assert all(new), f"atomic FUA write of {k} blocks at {lba}: acknowledged but lost"


class _Counting:
    """The host's own count of the I/O commands a test submits (each is `add`ed) and of those whose
    CQE the driver has taken from its completion queues (`completed`)."""

    def __init__(self):
        self.cmds: list = []

    def add(self, c):
        self.cmds.append(c)
        return c

    @property
    def submitted(self) -> int:
        return len(self.cmds)

    @property
    def completed(self) -> int:
        return sum(1 for c in self.cmds if c.cqe is not None)


def test_nvme_cut_by_command_count(tmp_path):
    """CUT_ARM kinds 2 and 3 in the NVMe build (docs/host-port.md "NVMe build"): kind 2 cuts when
    the value-th I/O command is accepted (its SQE handed to the command decoder), kind 3 when the
    value-th I/O CQE has been written to host memory; admin commands count for neither. The host
    counts on its own: every I/O command it submits, every CQE it finds in its completion queues
    (read from host memory after the cut too). Kind 2: value-1 I/O commands (writes in flight
    together, a TX Commit) and an admin command complete without a cut, the next I/O command is
    cut at its acceptance (no CQE for it). Kind 3: a burst of writes, FUA writes, a TX Commit and
    a transaction left open is cut when exactly `value` CQEs are in host memory. After each cut the
    recovery must agree with the recovery oracle (cocotb_tests/lib/atstb/recovery_oracle.py, from the
    die images) and satisfy the invariants (_check_recovered); the LBAs of the first round keep their
    recovered data through the second."""
    exe, fw, cfg = harness.build("sim", nvme=True)
    rng = random.Random(SEED0 * 104729 + 11)
    nd, nlbas, pb = cfg["ndie"], cfg["num_lbas"], cfg["page_bytes"]
    images = [tmp_path / f"die{d}.img" for d in range(nd)]
    geo = harness.Geometry(cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], pb, cfg["spare_bytes"])
    fresh = rng.sample(range(nlbas), 80)           # every LBA written at most once per round below
    versions: dict[int, list[bytes]] = {}

    def write(cnt, q, lba, kind, **kw):
        d = rng.randbytes(pb)
        versions.setdefault(lba, []).append(d)
        return kind, lba, d, cnt.add(run_sync(drv.submit_write(q, lba, d, **kw), tr))

    def recover():
        """Restart; every LBA written so far read back must equal the recovery oracle's page (computed
        from the die images before the firmware sees them) and is returned for the invariants."""
        oracle = harness.recover(images, geo)
        hp = HostPort(exe, fw, images, cwd=tmp_path)
        tr, drv = open_device(hp)
        cnt = _Counting()
        got = {}
        for lba in sorted(versions):
            c = cnt.add(run_sync(drv.submit_read(1 + lba % 2, lba, 1), tr))
            run_sync(drv.wait(c), tr)
            got[lba] = c.check().data
            exp = harness.read_lpn(geo, oracle, lba)
            assert got[lba] == (exp if exp is not None else bytes(pb)), \
                f"LBA {lba}: the firmware's recovery and the oracle disagree"
        return hp, tr, drv, cnt, got

    # ---- round 1: kind 2 (command accepted)
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    tr, drv = open_device(hp)
    cnt = _Counting()
    base = {}
    for i, lba in enumerate(fresh[:12]):
        k, _, d, c = write(cnt, 1 + i % 2, lba, "base")
        base[lba] = d
    cnt.add(run_sync(drv.submit_flush(1), tr))
    run_sync(drv.wait(cnt.cmds), tr)
    assert all(c.ok for c in cnt.cmds)
    k2 = rng.randint(6, 12)                        # the k2-th I/O command from now is cut
    value = cnt.submitted + k2
    hp.arm_cut(CUT_ACCEPT, value)
    lb = iter(fresh[12:40])
    cmds = [write(cnt, 1, next(lb), "tx", txid=1), write(cnt, 2, next(lb), "tx", txid=1),
            write(cnt, 1, next(lb), "tx", txid=2), write(cnt, 2, next(lb), "tx", txid=2)]
    while cnt.submitted < value - 2:               # k2 - 6 more: plain, FUA, open-tx writes
        kind = rng.choice(["plain", "fua", "open"])
        cmds.append(write(cnt, rng.choice([1, 2]), next(lb), kind, fua=kind == "fua",
                          txid=cfg["num_tx"] - cfg.get("atx", 1) - cfg.get("stx", 0) if kind == "open" else 0))
    run_sync(drv.wait([c for *_, c in cmds]), tr)
    c1 = cnt.add(run_sync(drv.submit_tx(2, nvme.IO_TX_COMMIT, 1), tr))      # command value - 1
    run_sync(drv.wait(c1), tr)
    run_sync(drv.get_features(nvme.FID_NUM_QUEUES), tr)                      # admin: not counted
    # a vendor feature through the whole SoC (docs/host-interface.md §1.6: §1 FEATURE answered by the
    # firmware): this build has no open log page, so SEAL_TIME is the firmware's BAD_FIELD
    with pytest.raises(nvme.NvmeStatusError) as ei:
        run_sync(drv.get_seal_time(), tr)
    assert (ei.value.cmd.cqe.sct, ei.value.cmd.cqe.sc, ei.value.cmd.cqe.dw0) == (0, 0x02, 0), ei.value
    tr.wait(20_000)
    assert not hp.cut, f"the cut fired before I/O command {value} (host count {cnt.submitted})"
    assert cnt.completed == cnt.submitted == value - 1 and c1.ok
    c2 = cnt.add(run_sync(drv.submit_tx(1, nvme.IO_TX_COMMIT, 2), tr))      # command value: cut here
    with pytest.raises(SimError):
        run_sync(drv.wait(c2), tr)
    assert hp.cut, f"the cut armed at I/O command {value} never fired"
    info = hp.info()
    for q in (1, 2):                                # CQEs in host memory after the cut
        run_sync(drv.reap(q), tr)
    assert c2.cqe is None, "the command cut at its acceptance has a CQE"
    assert (info["accepted"], info["completed"]) == (value, value - 1) == (cnt.submitted, cnt.completed), info
    commits = [(1, [l for _, l, _, c in cmds[:2]], c1), (2, [l for _, l, _, c in cmds[2:4]], c2)]
    _close_clean(hp)

    hp, tr, drv, cnt, got = recover()
    _check_recovered(got, base, versions, cmds[4:], commits, pb)
    assert all(got[lba] == versions[lba][-1] for _, g, _ in commits[:1] for lba in g)
    after1 = dict(got)

    # ---- round 2: kind 3 (completion written)
    lb = iter(fresh[40:])
    pre = [write(cnt, 1 + i % 2, next(lb), "tx", txid=3) for i in range(3)]
    run_sync(drv.wait([c for *_, c in pre]), tr)
    assert all(c.ok for *_, c in pre)
    k3 = rng.randint(4, 12)
    value = cnt.completed + k3
    hp.arm_cut(CUT_CPL, value)
    burst, at, c3 = [], rng.randint(0, k3 // 2), None     # the TX Commit early in the burst
    for i in range(k3 + 8):
        if i == at:
            c3 = cnt.add(run_sync(drv.submit_tx(rng.choice([1, 2]), nvme.IO_TX_COMMIT, 3), tr))
        kind = rng.choice(["plain", "fua", "fua", "open"])
        burst.append(write(cnt, rng.choice([1, 2]), next(lb), kind, fua=kind == "fua",
                           txid=cfg["num_tx"] - cfg.get("atx", 1) - cfg.get("stx", 0) if kind == "open" else 0))
    with pytest.raises(SimError):
        run_sync(drv.wait([c for *_, c in burst] + [c3]), tr)
    assert hp.cut, f"the cut armed at I/O completion {value} never fired"
    info = hp.info()
    for q in (1, 2):
        run_sync(drv.reap(q), tr)
    assert cnt.completed == value, f"{cnt.completed} I/O CQEs in host memory at the cut armed at {value}"
    assert info["completed"] == value and info["accepted"] >= value, info
    _close_clean(hp)

    hp, tr, drv, cnt, got = recover()
    _close_clean(hp)
    _check_recovered({l: got[l] for l in got if l not in after1}, {}, versions, burst,
                     [(3, [l for _, l, _, _ in pre], c3)], pb)
    for lba, d in after1.items():
        assert got[lba] == d, f"LBA {lba}: changed by the second cut and recovery"
    print("nvme cut by count:", dict(k2=k2, k3=k3, acked_fua=sum(1 for k, *_, c in burst if k == "fua" and _acked(c)),
                                      commit3=None if c3.cqe is None else c3.cqe.name))


@pytest.mark.parametrize("seed", SEEDS)
def test_nvme_power_cut(seed, tmp_path):
    exe, fw, cfg = harness.build("sim", nvme=True)
    rng = random.Random(seed * 7919 + 1)
    nd, nlbas, pb = cfg["ndie"], cfg["num_lbas"], cfg["page_bytes"]
    images = [tmp_path / f"die{d}.img" for d in range(nd)]
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    tr, drv = open_device(hp)
    assert drv.ns.nsze == nlbas and drv.lba_bytes == pb, (drv.ns, pb)
    ctrl = drv.ctrl
    assert ctrl.vendor_valid, "Identify Controller without the firmware's IDENTIFY words"

    # ---- the durable base; three groups of the atomic unit kept for the atomic writes
    awu = struct.unpack_from("<H", drv.ns.raw, 36)[0] + 1          # NAWUPF + 1 (= NABSPF + 1)
    assert drv.ns.nsfeat & 2 and awu >= 16384 // pb and struct.unpack_from("<H", drv.ns.raw, 44)[0] + 1 == awu
    agroups = rng.sample(range(nlbas // awu), 3)
    lbas = rng.sample([x for x in range(nlbas) if x // awu not in agroups], 96)
    base: dict[int, bytes] = {}
    for i, lba in enumerate(lbas[:48]):
        base[lba] = rng.randbytes(pb)
        run_sync(drv.write(1 + i % 2, lba, base[lba]), tr)
    run_sync(drv.flush(1), tr)
    versions: dict[int, list[bytes]] = {lba: [b] for lba, b in base.items()}

    # ---- the mixed phase, with a cut armed inside it
    plain, fua, opened = lbas[48:60], lbas[60:72], lbas[72:80]
    host_tx = cfg["num_tx"] - cfg.get("atx", 1) - cfg.get("stx", 0)    # the host's txids 1 .. host_tx
    txs = [lbas[80 + 4 * k:84 + 4 * k] for k in range(min(4, host_tx - 1))]    # and host_tx: the open one
    atomics = []                                        # (lba, blocks, data, fua, Command): all or nothing (first: the
                                                        # early cuts land among them)
    for g in agroups:
        k = rng.randint(2, awu)
        lba = g * awu + rng.randrange(awu - k + 1)       # inside the group: never crosses a boundary
        d, f = rng.randbytes(k * pb), rng.random() < 0.4
        for i in range(k):
            versions.setdefault(lba + i, []).append(d[i * pb:(i + 1) * pb])
        atomics.append((lba, k, d, f, run_sync(drv.submit_write(rng.choice([1, 2]), lba, d, fua=f), tr)))
    cmds = []
    for lba in plain:
        d = rng.randbytes(pb)
        versions.setdefault(lba, []).append(d)
        cmds.append(("plain", lba, d, run_sync(drv.submit_write(rng.choice([1, 2]), lba, d), tr)))
    for lba in fua:
        d = rng.randbytes(pb)
        versions.setdefault(lba, []).append(d)
        cmds.append(("fua", lba, d, run_sync(drv.submit_write(rng.choice([1, 2]), lba, d, fua=True), tr)))
    commits = []
    for k, group in enumerate(txs):
        txid = 1 + k
        for lba in group:
            d = rng.randbytes(pb)
            versions.setdefault(lba, []).append(d)
            cmds.append(("tx", lba, d, run_sync(drv.submit_write(1, lba, d, txid=txid), tr)))
        commits.append((txid, group, None))
    open_txid = cfg["num_tx"] - cfg.get("atx", 1) - cfg.get("stx", 0)    # never committed (the host's last txid:
                                                        # the last ATX are the front end's, for atomic writes, and
                                                        # the STX below them its SWRITE engines', host-interface §1.10-1.11)
    assert open_txid > len(txs)
    for lba in opened:
        d = rng.randbytes(pb)
        versions.setdefault(lba, []).append(d)
        cmds.append(("open", lba, d, run_sync(drv.submit_write(2, lba, d, txid=open_txid), tr)))
    reads = [(lba, run_sync(drv.submit_read(2, lba, 1), tr)) for lba in rng.sample(lbas[:48], 6)]
    early = rng.random() < 0.5          # the cut among the writes, or among the commits
    if early:
        hp.arm_cut(CUT_CYCLE, hp.cycle + rng.randrange(1_000, 60_000))
    try:
        run_sync(drv.wait([c for *_, c in cmds] + [c for *_, c in atomics]), tr)
        # commits after their writes completed
        for i, (txid, group, _) in enumerate(commits):
            commits[i] = (txid, group, run_sync(drv.submit_tx(1 + i % 2, 0x88, txid), tr))
        if not early:
            hp.arm_cut(CUT_CYCLE, hp.cycle + rng.randrange(100, 40_000))
        run_sync(drv.wait([c for *_, c in commits] + [c for _, c in reads]), tr)
        tr.wait(2_000_000)
    except (SimError, NvmeError):
        if not hp.cut:                                  # a failure of its own, not the cut
            raise
    _close_clean(hp)
    assert hp.cut, "the armed power cut never fired"
    # every write the device completed before the cut was accepted (plain, FUA, transactional,
    # the open transaction's): a rejected one (e.g. BAD_TXID) would leave nothing for the checks
    for kind, lba, _, c in cmds:
        assert c.cqe is None or c.cqe.ok, f"{kind} write of LBA {lba}: {c.cqe.name}"
    for lba, k, _, _, c in atomics:
        assert c.cqe is None or c.cqe.ok, f"atomic write of {k} blocks at {lba}: {c.cqe.name}"
    if not early:                                       # the cut came after every write completed
        assert all(c.cqe is not None for *_, c in cmds), "a write without a CQE before the commits"
    done = _acked
    for lba, c in reads:
        if done(c):
            assert c.data == base[lba], f"read of the base LBA {lba} before the cut"

    # ---- restart (recovery) and check every LBA
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    try:
        tr, drv = open_device(hp)
        got = {lba: run_sync(drv.read(1 + lba % 2, lba, 1), tr) for lba in lbas}
        for lba, k, *_ in atomics:                      # one multi-block read each
            d = run_sync(drv.read(1 + lba % 2, lba, k), tr)
            got.update({lba + i: d[i * pb:(i + 1) * pb] for i in range(k)})
    finally:
        _close_clean(hp)
    _check_recovered(got, base, versions, cmds, commits, pb, atomics)
    st = dict(seed=seed, early=early,
              fua_acked=sum(1 for k, _, _, c in cmds if k == "fua" and done(c)),
              open_acked=sum(1 for k, _, _, c in cmds if k == "open" and done(c)),
              plain_new=sum(1 for k, lba, d, _ in cmds if k == "plain" and got[lba] == d),
              commits_acked=sum(1 for *_, c in commits if done(c)),
              commits_visible=sum(1 for _, g, _ in commits if all(got[lba] == versions[lba][-1] for lba in g)),
              commits_sent=sum(1 for *_, c in commits if c is not None),
              atomic_visible=sum(1 for lba, k, d, *_ in atomics if got[lba] == d[:pb]),
              atomic_acked=sum(1 for *_, c in atomics if done(c)))
    print("nvme power cut:", st)


def test_nvme_clean_shutdown(tmp_path):
    """A clean shutdown takes a checkpoint (docs/host-interface.md "Shutdown"): CC.SHN makes the front
    end FLUSH, then ask the firmware for a checkpoint (GET_LOG with tag 0xFF), and only then report
    CSTS.SHST = 2. The next power-on's recovery (GET_LOG LID 0xC0 `recovery_pages`) reads the
    checkpoint and the dies' open blocks only, not the writes since the last checkpoint, and every
    LBA holds the last data the host wrote (the test's model). Without the checkpoint (the firmware
    before issue 34) the same recovery read 310 pages: the log of every write. The dies' open blocks
    hold only pages older than the checkpoint, so each is searched (docs/persistence.md section 6 step
    2 "Old pages": page 0 and log2(pages a block) probes), not read whole (26 pages; 58-59 before)."""
    exe, fw, cfg = harness.build("sim", nvme=True)
    rng = random.Random(34005)
    nd, nlbas, pb, ppb = cfg["ndie"], cfg["num_lbas"], cfg["page_bytes"], cfg["pages_per_block"]
    images = [tmp_path / f"die{d}.img" for d in range(nd)]
    model: dict[int, bytes] = {}
    # the bound: both checkpoint heads, the checkpoint's pages (at most a block), and per die its open
    # block's page 0, the search's probes, the page it resumes at (erased) and the next block's page 0
    # (docs/persistence.md section 6 step 2 "Old pages"; without the search a die's term was ppb + 2)
    bound = 2 + ppb + nd * (3 + (ppb - 1).bit_length())
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    try:
        tr, drv = open_device(hp)
        # plain writes on two queues, overwrites among them, no Flush: the shutdown makes them durable
        for i in range(320):
            lba = rng.randrange(nlbas)
            model[lba] = rng.randbytes(pb)
            run_sync(drv.write(1 + i % 2, lba, model[lba]), tr)
        c0 = hp.cycle
        run_sync(drv.shutdown(), tr)
        shut = hp.cycle - c0
        up = hp.uart_text().split("ready (boot")[-1]
        assert re.search(r"shutdown: checkpoint \d+: 0\s", up), f"no checkpoint before CSTS.SHST = 2:\n{up[-1500:]}"
    finally:
        _close_clean(hp)
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    try:
        tr, drv = open_device(hp)
        log = run_sync(drv.device_log(), tr)
        got = {lba: run_sync(drv.read(1 + lba % 2, lba, 1), tr) for lba in sorted(model)}
        boot = hp.uart_text()
    finally:
        _close_clean(hp)
    ms = re.search(r"recovery: scan: (\d+) pages read, (\d+) blocks searched past their old pages, (\d+) pages not read",
                   boot)
    assert ms and int(ms.group(2)) >= 1, f"no block searched past its old pages:\n{boot[-1500:]}"
    bad = [lba for lba, d in model.items() if got[lba] != d]
    assert not bad, f"LBAs {bad[:8]} lost their last write across a clean shutdown"
    assert log["recoveries"] == 1 and 0 < log["recovery_pages"] <= bound, \
        f"the recovery after a clean shutdown read {log['recovery_pages']} pages (bound {bound})"
    print("nvme clean shutdown:", dict(lbas=len(model), shutdown_cycles=shut, recovery_pages=log["recovery_pages"],
                                       recovery_cycles=log["recovery_cycles"], bound=bound,
                                       searched=int(ms.group(2)), unread=int(ms.group(3))))


SW_SEEDS = [SEED0 + i for i in range(8 if LONG else 1)]
SW_CUTS = int(os.environ.get("ATS_NVME_SW_CUTS", "25" if LONG else "5"))
SW_POOL = 128                           # LBAs one seed writes (from an atomic-unit boundary)
SW_CUT_MAX = 60_000                     # the cut: a random cycle up to this far after the round starts


def _check_limits(hp: HostPort, tr, drv, cfg: dict, pb: int) -> tuple[int, int]:
    """The static-transaction limits (docs/host-interface.md §1.11): Identify Controller bytes
    3136-3141 and Get Log Page LID 0xC0 counters k59-k63 agree with each other and with the build
    (STX, num_tx, tx_entries); returns (SW_RANGES, SW_PAGES)."""
    rn, stx, pages = struct.unpack_from("<BBH", drv.ctrl.raw, 3136)
    first, atx = struct.unpack_from("<BB", drv.ctrl.raw, 3140)
    log = run_sync(drv.get_log_page(nvme.LID_DEVICE, 512), tr).data
    lim = struct.unpack_from("<5Q", log, 472)
    want = (8, cfg["stx"], min(cfg["tx_entries"], 65536 // pb), cfg["num_tx"] - cfg["stx"] - cfg.get("atx", 1) + 1, cfg["num_tx"])
    assert (rn, stx, pages, first, atx) == want, f"Identify SWRITE limits {(rn, stx, pages, first, atx)}, build {want}"
    assert lim == want, f"LID 0xC0 k59..k63 {lim}, Identify / build {want}"
    return rn, pages


@pytest.mark.parametrize("seed", SW_SEEDS)
def test_nvme_swrite_cut(seed, tmp_path):
    """Static transactions across power cuts (docs/persistence.md §9, docs/host-interface.md §1.11),
    rounds on one device, each ended by a cut at a random cycle: per round, on LBAs of a 128-LBA pool
    (each written by at most one command a round), 3-6 SWRITEs of 1-4 ranges (engines busy: some wait
    in the device), atomic Writes (2 ... 8 blocks inside the atomic unit), plain and FUA Writes, SREADs
    on the SQ of an SWRITE before them (of blocks of that SWRITE) and Reads of an SWRITE's range, on
    two SQs without waiting. After the cut: every CQE seen is Successful Completion; an SREAD completed
    OK returned the new data of the SWRITE before it on its SQ (every SWRITE fetched before it has
    committed) and that SWRITE must then be durable; a Read returned all old or all new blocks of the
    SWRITE range it covers (read committed: never part of one). After the restart the firmware's
    recovery must agree with the recovery oracle (recovery_oracle.py, from the die images) on every
    pool LBA, and: each LBA holds its old data or the new data of its command (no torn or foreign
    page); an SWRITE or an atomic Write is all new or all old over all its blocks, all new when its
    OK CQE was seen (or an SREAD saw it); an acknowledged FUA Write is new; untouched LBAs keep their
    data. The recovered state is the next round's old data. ATS_LONG=1: 8 seeds x 25 cuts (make test:
    one seed x 5); ATS_NVME_SW_CUTS sets the cuts a seed."""
    exe, fw, cfg = harness.build("sim", nvme=True)
    assert cfg.get("stx", 0) >= 1, "the NVMe simulation build has no SWRITE engines"
    rng = random.Random(seed * 15485863 + 39)
    nd, nlbas, pb = cfg["ndie"], cfg["num_lbas"], cfg["page_bytes"]
    images = [tmp_path / f"die{d}.img" for d in range(nd)]
    geo = harness.Geometry(cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], pb, cfg["spare_bytes"])
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    tr, drv = open_device(hp)
    sw_ranges, sw_pages = _check_limits(hp, tr, drv, cfg, pb)
    awu = struct.unpack_from("<H", drv.ns.raw, 36)[0] + 1            # NAWUPF + 1
    mx = min(16, 65536 // pb)                                         # blocks a command (MDTS)
    p0 = awu * rng.randrange((nlbas - SW_POOL) // awu)
    pool = range(p0, p0 + SW_POOL)
    cur: dict[int, bytes] = {}
    for a in range(p0, p0 + SW_POOL, mx):                             # a flushed base: "old" is data
        d = rng.randbytes(mx * pb)
        run_sync(drv.write(1 + a // mx % 2, a, d), tr)
        cur.update({a + i: d[i * pb:(i + 1) * pb] for i in range(mx)})
    run_sync(drv.flush(1), tr)
    st = dict(cuts=0, swrites=0, sw_acked=0, sw_new=0, sw_old=0, sw_new_unacked=0, sw_waited=0, atomics=0,
              at_new=0, at_old=0, plain=0, sreads_ok=0, sreads_sent=0, reads_ok=0, reads_new=0, lbas_checked=0,
              oracle_checked=0, all_done=0, done_cycles=[])
    for rnd in range(SW_CUTS):
        used: set[int] = set()

        def span(n: int, unit: int = 0) -> int | None:
            """n contiguous unused pool LBAs (inside one `unit`-aligned group when unit)."""
            for _ in range(40):
                a = rng.randrange(p0, p0 + SW_POOL - n + 1)
                if unit and a % unit + n > unit:
                    continue
                if not used & set(range(a, a + n)):
                    used.update(range(a, a + n))
                    return a
            return None
        # the round's commands: (kind, SQ, [(lba, data)] in data order, ranges, fua), data decided first
        plan = []
        for _ in range(rng.randint(3, 6)):
            ranges, left = [], sw_pages
            for _ in range(rng.randint(1, min(4, sw_ranges))):
                n = rng.randint(1, min(3, left))
                a = span(n)
                if a is None or left < 1:
                    break
                ranges.append((a, n))
                left -= n
                if left < 1:
                    break
            if ranges:
                plan.append(["sw", rng.choice([1, 2]), ranges, False])
        for _ in range(rng.randint(1, 3)):
            k = rng.randint(2, min(awu, 8))
            a = span(k, awu)
            if a is not None:
                plan.append(["at", rng.choice([1, 2]), [(a, k)], rng.random() < 0.4])
        for _ in range(rng.randint(2, 5)):
            a = span(1)
            if a is not None:
                plan.append(["pl", rng.choice([1, 2]), [(a, 1)], rng.random() < 0.5])
        rng.shuffle(plan)
        cmds = []           # dict(kind, q, blocks {lba: new}, fua, c)
        for kind, q, ranges, fua in plan:
            nb = sum(n for _, n in ranges)
            d = rng.randbytes(nb * pb)
            blocks, off = {}, 0
            for a, n in ranges:
                for i in range(n):
                    blocks[a + i] = d[(off + i) * pb:(off + i + 1) * pb]
                off += n
            cmds.append(dict(kind=kind, q=q, ranges=ranges, blocks=blocks, data=d, fua=fua, c=None))
        reads = []          # dict(kind sread/read, sw: the SWRITE's entry, lba, n, c)
        t0 = hp.cycle
        hp.arm_cut(CUT_CYCLE, t0 + rng.randrange(200, SW_CUT_MAX))
        try:
            for e in cmds:
                if e["kind"] == "sw":
                    e["c"] = run_sync(drv.submit_swrite(e["q"], e["ranges"], e["data"]), tr)
                    st["swrites"] += 1
                    r = rng.random()
                    if r < 0.5:                  # an SREAD on its SQ: blocks of one of its ranges
                        a, n = rng.choice(e["ranges"])
                        o = rng.randrange(n)
                        k = rng.randint(1, n - o)
                        sq = nvme.Sqe(nvme.IO_SREAD, nsid=1, cdw12=k - 1)
                        sq.set_slba(a + o)
                        st["sreads_sent"] += 1
                        reads.append(dict(kind="sread", sw=e, lba=a + o, n=k, c=run_sync(
                            drv._data_cmd(e["q"], sq, k * pb, to_host=True, what="sread"), tr)))
                    elif r < 0.8 and max(n for _, n in e["ranges"]) >= 2:   # a Read of a whole range
                        a, n = max(e["ranges"], key=lambda x: x[1])
                        reads.append(dict(kind="read", sw=e, lba=a, n=n,
                                          c=run_sync(drv.submit_read(rng.choice([1, 2]), a, n), tr)))
                else:
                    (a, n), = e["ranges"]
                    e["c"] = run_sync(drv.submit_write(e["q"], a, e["data"], fua=e["fua"]), tr)
                    st["atomics" if e["kind"] == "at" else "plain"] += 1
            run_sync(drv.wait([e["c"] for e in cmds] + [r["c"] for r in reads]), tr)
            st["all_done"] += 1                          # the cut after every command's CQE
            st["done_cycles"].append(hp.cycle - t0)
            tr.wait(SW_CUT_MAX)
        except (SimError, NvmeError):
            if not hp.cut:
                raise
        assert hp.cut, "the armed power cut never fired"
        st["cuts"] += 1
        for q in (1, 2):                                  # CQEs in host memory at the cut
            run_sync(drv.reap(q), tr)
        _close_clean(hp)
        # ---- what the host saw before the cut
        for e in cmds + reads:
            c = e["c"]
            assert c is None or c.cqe is None or c.cqe.ok, f"{e['kind']} {e.get('ranges', e.get('lba'))}: {c.cqe.name}"
        must_new = {id(e) for e in cmds if _acked(e["c"]) and (e["kind"] != "pl" or e["fua"])}
        for r in reads:
            if not _acked(r["c"]):
                continue
            sw = r["sw"]
            got = [r["c"].data[i * pb:(i + 1) * pb] for i in range(r["n"])]
            new = [sw["blocks"][r["lba"] + i] for i in range(r["n"])]
            old = [cur[r["lba"] + i] for i in range(r["n"])]
            if r["kind"] == "sread":                      # serializable: the SWRITE before it has committed
                st["sreads_ok"] += 1
                assert got == new, f"SREAD of {r['lba']}+{r['n']} completed without the SWRITE before it on its SQ"
                must_new.add(id(sw))
                if not _acked(sw["c"]):
                    st["sw_waited"] += 1
            else:                                         # read committed: never part of one SWRITE
                st["reads_ok"] += 1
                assert got in (new, old), f"Read of {r['lba']}+{r['n']}: part of an SWRITE ({got == new}, {got == old})"
                st["reads_new"] += got == new
        # ---- restart: the firmware's recovery against the oracle, then the invariants
        oracle = harness.recover(images, geo)
        hp = HostPort(exe, fw, images, cwd=tmp_path)
        tr, drv = open_device(hp)
        got: dict[int, bytes] = {}
        for a in range(p0, p0 + SW_POOL, mx):
            d = run_sync(drv.read(1 + a // mx % 2, a, mx), tr)
            got.update({a + i: d[i * pb:(i + 1) * pb] for i in range(mx)})
        for lba in pool:
            exp = harness.read_lpn(geo, oracle, lba)
            assert got[lba] == (exp if exp is not None else bytes(pb)), \
                f"round {rnd}: LBA {lba}: the firmware's recovery and the oracle disagree"
        st["oracle_checked"] += len(pool)
        written = {lba: e for e in cmds for lba in e["blocks"]}
        for lba in pool:
            e = written.get(lba)
            assert got[lba] == cur[lba] or (e is not None and got[lba] == e["blocks"][lba]), \
                f"round {rnd}: LBA {lba}: data of no version (torn or foreign)"
        for e in cmds:
            new = [got[lba] == d for lba, d in e["blocks"].items()]
            if e["kind"] != "pl":
                assert all(new) or not any(new), f"round {rnd}: {e['kind']} {e['ranges']}: torn by the cut ({new})"
            if id(e) in must_new:
                assert all(new), f"round {rnd}: {e['kind']} {e['ranges']}: acknowledged (or seen by an SREAD) but lost"
            if e["kind"] == "sw":
                st["sw_acked"] += _acked(e["c"])
                st["sw_new" if all(new) else "sw_old"] += 1
                st["sw_new_unacked"] += all(new) and not _acked(e["c"])
            elif e["kind"] == "at":
                st["at_new" if all(new) else "at_old"] += 1
        st["lbas_checked"] += len(pool)
        cur = got
    _close_clean(hp)
    dc = st.pop("done_cycles")
    print("nvme swrite cut:", dict(seed=seed, **st, done_cycles_max=max(dc, default=0)))
