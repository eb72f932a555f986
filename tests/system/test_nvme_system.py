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
    is all old;
  - no torn or foreign data: every page reads as one of the versions the host wrote to it (or the
    base / zeros);
  - reads of the base before the cut returned the base.
Environment: ATS_SEED (first seed), ATS_LONG=1 (more seeds)."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "sim" / "soc"))
sys.path.insert(0, str(ROOT / "sw" / "host"))
import harness  # noqa: E402

from atomssd.hostport import CUT_CYCLE, HostPort, SimError  # noqa: E402
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
    CSTS.CFS and fetches nothing more; a controller reset brings it back."""
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
    finally:
        info = hp.close()
    assert not hp.errors and not info.get("viol_total"), (hp.errors, info)


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

    # ---- the durable base
    lbas = rng.sample(range(nlbas), 96)
    base: dict[int, bytes] = {}
    for i, lba in enumerate(lbas[:48]):
        base[lba] = rng.randbytes(pb)
        run_sync(drv.write(1 + i % 2, lba, base[lba]), tr)
    run_sync(drv.flush(1), tr)
    versions: dict[int, list[bytes]] = {lba: [b] for lba, b in base.items()}

    # ---- the mixed phase, with a cut armed inside it
    plain, fua, opened = lbas[48:60], lbas[60:72], lbas[72:80]
    txs = [lbas[80 + 4 * k:84 + 4 * k] for k in range(4)]
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
    for lba in opened:                                   # tx 9: never committed
        d = rng.randbytes(pb)
        versions.setdefault(lba, []).append(d)
        cmds.append(("open", lba, d, run_sync(drv.submit_write(2, lba, d, txid=9), tr)))
    reads = [(lba, run_sync(drv.submit_read(2, lba, 1), tr)) for lba in rng.sample(lbas[:48], 6)]
    early = rng.random() < 0.5          # the cut among the writes, or among the commits
    if early:
        hp.arm_cut(CUT_CYCLE, hp.cycle + rng.randrange(1_000, 60_000))
    try:
        run_sync(drv.wait([c for *_, c in cmds]), tr)
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
    done = lambda c: c is not None and c.done and c.cqe is not None and c.cqe.ok   # noqa: E731
    for lba, c in reads:
        if done(c):
            assert c.data == base[lba], f"read of the base LBA {lba} before the cut"

    # ---- restart (recovery) and check every LBA
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    try:
        tr, drv = open_device(hp)
        got = {lba: run_sync(drv.read(1 + lba % 2, lba, 1), tr) for lba in lbas}
    finally:
        _close_clean(hp)
    zero = bytes(pb)
    for lba in lbas:
        assert got[lba] in versions.get(lba, []) + [zero], f"LBA {lba}: data of no version (torn or foreign)"
    for lba in lbas[:48]:
        assert got[lba] == base[lba], f"LBA {lba}: the flushed base was lost"
    for kind, lba, d, c in cmds:
        if kind == "fua" and done(c):
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
        if done(c):
            assert all(new), f"tx {txid}: committed (CQE seen) but lost"
    st = dict(seed=seed, early=early,
              fua_acked=sum(1 for k, _, _, c in cmds if k == "fua" and done(c)),
              plain_new=sum(1 for k, lba, d, _ in cmds if k == "plain" and got[lba] == d),
              commits_acked=sum(1 for *_, c in commits if done(c)),
              commits_visible=sum(1 for _, g, _ in commits if all(got[lba] == versions[lba][-1] for lba in g)),
              commits_sent=sum(1 for *_, c in commits if c is not None))
    print("nvme power cut:", st)
