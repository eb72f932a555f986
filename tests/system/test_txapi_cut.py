# SPDX-License-Identifier: Apache-2.0
"""The transactional host API (sw/host/atomssd/txapi.py) on the whole device through the NVMe front
end, with a power cut: an application that keeps a set of "accounts" (one LBA each) consistent
only through device transactions, with no journal of its own.

Each seed: a fresh device (format), an initial state written in one transaction; then transfers:
each moves an amount between 2–4 accounts in one transaction (the txapi's `with
dev.transaction()`, or a transaction whose last write carries COMMIT), some transactions are
aborted by the application (an exception inside the with-block), and barrier writes of a sequence
counter page close epochs between groups; a power cut is armed at a random cycle among them. After
the restart (the firmware's recovery) the accounts are read back through NVMe and checked:
  - every page is a version the application wrote (never torn, never another LBA's);
  - the total is conserved and each account's page names the transfer that wrote it; the set of
    transfers visible is exactly a set of whole transactions (INV-ATOM), never an aborted one;
  - every transfer whose commit returned before the cut is visible (durability of a commit);
  - barrier order (INV-ORDER): each group ends with a plain (never flushed) log page and a barrier
    write of a counter page; if counter g is durable, the log pages of groups 1 … g-1 are.
Environment: ATS_SEED (first seed), ATS_LONG=1 (more seeds)."""
from __future__ import annotations

import os
import random
import struct
import sys
import zlib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "sim" / "soc"), str(ROOT / "sw" / "host")]
import harness  # noqa: E402

from atomssd.hostport import CUT_CYCLE, HostPort, SimError  # noqa: E402
from atomssd.nvme import NvmeError  # noqa: E402
from atomssd.nvme_sim import open_device  # noqa: E402
from atomssd.txapi import AtomDevice, NotAtomicError, TxError  # noqa: E402

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
SEED0 = int(os.environ.get("ATS_SEED", "1"))
SEEDS = [SEED0 + i for i in range(6 if LONG else 1)]
ACCOUNTS, BASE_LBA, COUNTER_LBA, LOG_LBA = 24, 100, 99, 200
MAGIC = 0x41434354                                   # "ACCT"


def page(pb: int, acct: int, balance: int, xfer: int) -> bytes:
    """An account page: magic, account, balance, the transfer that wrote it, CRC, padding."""
    head = struct.pack("<IIqI", MAGIC, acct, balance, xfer)
    body = head + struct.pack("<I", zlib.crc32(head))
    return body + bytes(pb - len(body))


def parse(b: bytes) -> tuple[int, int, int] | None:
    magic, acct, bal, xfer, crc = struct.unpack_from("<IIqII", b)
    if magic != MAGIC or crc != zlib.crc32(b[:20]) or any(b[24:]):
        return None
    return acct, bal, xfer


@pytest.mark.parametrize("seed", SEEDS)
def test_txapi_accounts_power_cut(seed, tmp_path):
    exe, fw, cfg = harness.build("sim", nvme=True)
    rng = random.Random(seed * 104729 + 3)
    images = [tmp_path / f"die{d}.img" for d in range(cfg["ndie"])]
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    tr, drv = open_device(hp, io_queues=1)
    dev = AtomDevice(drv, tr)
    pb = dev.info.lba_bytes
    bal = {a: 1000 for a in range(ACCOUNTS)}
    with dev.transaction() as tx:                     # transfer 0: the initial state
        for a in range(ACCOUNTS):
            tx.write(BASE_LBA + a, page(pb, a, bal[a], 0))
    dev.flush()
    total = sum(bal.values())
    # atomic writes: the account pages lie inside one atomic unit; refusals send nothing
    aw, bd = dev.info.atomic_blocks, dev.info.atomic_boundary
    assert aw >= ACCOUNTS and bd and BASE_LBA // bd == (BASE_LBA + ACCOUNTS - 1) // bd, dev.info
    for lba, n in ((BASE_LBA, aw + 1), (bd * (BASE_LBA // bd + 1) - 1, 2)):   # too long; across the boundary
        with pytest.raises(NotAtomicError) as e:
            dev.atomic_write(lba, bytes(n * pb))
        assert e.value.local and e.value.status == (0, 0x02)
    assert [parse(dev.read(BASE_LBA + a)) for a in range(ACCOUNTS)] == [(a, 1000, 0) for a in range(ACCOUNTS)]
    n_atomic = n_static = 0                          # (static transactions when the front end has SWRITE)
    # history: transfer id -> {account: (balance after, writer id)}; acked: commit returned
    writes: dict[int, dict[int, int]] = {0: dict(bal)}
    acked, aborted, sent = {0}, set(), [0]
    barrier_before: dict[int, set[int]] = {}         # group g -> transfers acknowledged before its barrier
    last_g = 0
    hp.arm_cut(CUT_CYCLE, hp.cycle + rng.randrange(200_000, 3_000_000))
    xid = 0
    try:
        for g in range(1, 500):
            for _ in range(rng.randint(2, 5)):
                xid += 1
                accts = rng.sample(range(ACCOUNTS), rng.randint(2, 4))
                amt = rng.randint(1, 50)
                new = dict((a, bal[a]) for a in accts)
                new[accts[0]] -= amt * (len(accts) - 1)
                for a in accts[1:]:
                    new[a] += amt
                if rng.random() < 0.15:               # the application gives up half way
                    aborted.add(xid)
                    try:
                        with dev.transaction() as tx:
                            tx.write(BASE_LBA + accts[0], page(pb, accts[0], new[accts[0]], xid))
                            raise ValueError("application abort")
                    except ValueError:
                        pass
                    continue
                if dev.info.static_ranges >= 4 and rng.random() < 0.25:   # a static transaction (SWRITE)
                    writes[xid] = new
                    sent.append(xid)
                    n_static += 1
                    dev.static_tx([(BASE_LBA + a, page(pb, a, new[a], xid)) for a in accts])
                    acked.add(xid)
                    bal.update(new)
                    continue
                if rng.random() < 0.25:               # one atomic write of the span lo..hi
                    lo, hi = min(accts), max(accts)
                    for a in range(lo, hi + 1):
                        new.setdefault(a, bal[a])
                    writes[xid] = new
                    sent.append(xid)
                    n_atomic += 1
                    dev.atomic_write(BASE_LBA + lo, b"".join(page(pb, a, new[a], xid) for a in range(lo, hi + 1)))
                    acked.add(xid)
                    bal.update(new)
                    continue
                writes[xid] = new
                sent.append(xid)
                if rng.random() < 0.5:
                    with dev.transaction() as tx:
                        for a in accts:
                            tx.write(BASE_LBA + a, page(pb, a, new[a], xid))
                else:
                    tx = dev.begin(explicit=False)
                    for a in accts[:-1]:
                        tx.write(BASE_LBA + a, page(pb, a, new[a], xid))
                    tx.commit_write(BASE_LBA + accts[-1], page(pb, accts[-1], new[accts[-1]], xid))
                acked.add(xid)
                bal.update(new)
            barrier_before[g] = set(acked)
            dev.write(LOG_LBA + g, struct.pack("<II", 0x474F4C31, g) + bytes(pb - 8))   # plain, not flushed
            dev.barrier_write(COUNTER_LBA, struct.pack("<II", 0x434E5452, g) + bytes(pb - 8))
            last_g = g
    except (SimError, NvmeError, TxError):
        if not hp.cut:
            raise
    info = hp.close()
    assert hp.cut, "the armed power cut never fired"
    assert not hp.errors and not info.get("viol_total"), (hp.errors[:5], info)

    # ---- restart (recovery) and check
    hp = HostPort(exe, fw, images, cwd=tmp_path)
    try:
        tr, drv = open_device(hp, io_queues=1)
        dev = AtomDevice(drv, tr)
        got = [dev.read(BASE_LBA + a) for a in range(ACCOUNTS)]
        counter = dev.read(COUNTER_LBA)
        logs = {g: dev.read(LOG_LBA + g) for g in range(1, last_g + 2)}
    finally:
        info = hp.close()
    assert not hp.errors and not info.get("viol_total"), (hp.errors[:5], info)
    state = {}
    for a, b in enumerate(got):
        p = parse(b)
        assert p is not None, f"account {a}: torn or foreign page {b[:32].hex()}"
        assert p[0] == a, f"account {a} holds account {p[0]}'s page"
        assert p[2] in writes and a in writes[p[2]], f"account {a}: written by transfer {p[2]}, which never wrote it"
        assert writes[p[2]][a] == p[1], f"account {a}: balance {p[1]} is not transfer {p[2]}'s"
        assert p[2] not in aborted
        state[a] = p[2]
    visible = set(state.values())
    # INV-ATOM: a visible transfer shows on every account it wrote, unless a later visible transfer
    # overwrote that account
    for x in visible:
        for a in writes[x]:
            assert state[a] >= x, f"transfer {x} visible on some accounts, not on account {a} (holds {state[a]})"
    # no later transfer on an account means every earlier one touching it is superseded consistently:
    # the newest visible transfer per account is the newest transfer touching it among those visible
    for a in range(ACCOUNTS):
        newer = [x for x in writes if a in writes[x] and x > state[a] and x in visible]
        assert not newer, f"account {a}: holds transfer {state[a]}, but {newer} (visible) wrote it later"
    assert sum(writes[state[a]][a] for a in range(ACCOUNTS)) == total, "money created or destroyed"
    for x in acked:
        for a in writes[x]:
            assert state[a] >= x, f"transfer {x} was committed (acknowledged) but account {a} lost it"
    # INV-ORDER: the counter page of group g is the barrier write that closes epoch g; if it is
    # durable, every write of the epochs before (the plain log pages 1 … g-1, never flushed) is
    for g, b in logs.items():
        assert b == bytes(pb) or b == struct.pack("<II", 0x474F4C31, g) + bytes(pb - 8), f"log page {g} torn"
    if counter == bytes(pb):
        g = 0
    else:
        assert counter[:4] == b"RTNC" and not any(counter[8:]), f"counter page torn: {counter[:16].hex()}"
        g = struct.unpack_from("<I", counter, 4)[0]
        assert 1 <= g <= last_g + 1
        for k in range(1, g):
            assert logs[k] != bytes(pb), f"barrier of epoch {g} durable, the plain write of epoch {k} lost"
        for x in barrier_before[g]:
            for a in writes[x]:
                assert state[a] >= x, f"barrier {g} durable but transfer {x} before it is not (account {a})"
    print(f"txapi cut: seed {seed}, {len(sent)} transfers sent ({n_atomic} atomic writes, {n_static} static transactions), {len(acked)} acknowledged, "
          f"{len(aborted)} aborted by the application, {len(visible)} visible after recovery, epochs {last_g} written, counter {g}")
