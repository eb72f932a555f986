# SPDX-License-Identifier: Apache-2.0
"""The transactional host API (sw/host/atomssd/txapi.py) against the reference model of the NVMe
front end and its core stub (cocotb_tests/lib/atstb/nvme_ref.py), in pure Python: random mixes of
plain writes, transactions committed (TX Commit, COMMIT write, context manager), aborted (call or
exception) and reads, checked against a plain dict written here; txid ownership, the page limit,
device statuses as TxError. Seeded, fast: `pytest sw/host/tests/test_txapi.py`."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "sw" / "host"), str(ROOT / "cocotb_tests" / "lib"), str(Path(__file__).parent)]

from atomssd.txapi import AtomDevice, TxError  # noqa: E402
from atstb.nvme_ref import NvmeRefConfig, default_identify_words  # noqa: E402
from test_nvme import make_env  # noqa: E402

# docs/host-interface.md §1.8 as literals (not the library's constants)
LBA_RANGE, BAD_TXID, TX_FULL, TX_EMPTY, TABLE_FULL = (0, 0x80), (7, 0x02), (7, 0x04), (7, 0x06), (7, 0x08)


def make_dev(seed: int = 1, num_tx: int = 8, tx_entries: int = 16, num_lbas: int = 256, page_bytes: int = 512,
             rng: bool = True):
    cfg = dict(num_tx=num_tx, num_lbas=num_lbas, page_bytes=page_bytes)
    words = default_identify_words(NvmeRefConfig(**cfg), tx_entries)     # the firmware's IDENTIFY words
    env = make_env(seed, tx_entries=tx_entries, fw_identify=words, rng=rng, **cfg)
    return env, AtomDevice(env.drv, env.t)


class Oracle:
    """What the host may read: committed pages (zeros when never written) and per-tx overlays."""

    def __init__(self, page: int):
        self.page = page
        self.committed: dict[int, bytes] = {}
        self.tx: dict[int, dict[int, bytes]] = {}

    def get(self, lba: int, txid: int = 0) -> bytes:
        if txid and lba in self.tx.get(txid, {}):
            return self.tx[txid][lba]
        return self.committed.get(lba, bytes(self.page))


def test_info_from_identify():
    env, dev = make_dev(num_tx=8, tx_entries=16, num_lbas=256, page_bytes=512)
    assert (dev.info.lba_bytes, dev.info.num_lbas, dev.info.num_tx, dev.info.tx_entries) == (512, 256, 7, 16)   # txid 8: the atomic writes'


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_mix_against_dict(seed):
    rng = random.Random(seed)
    env, dev = make_dev(seed)
    pb, n = dev.info.lba_bytes, dev.info.num_lbas
    o = Oracle(pb)
    open_tx = {}
    counts = dict(commit=0, commit_write=0, ctx=0, abort=0, ctx_abort=0, plain=0, reads=0, txreads=0)
    for step in range(400):
        r = rng.random()
        if r < 0.2:
            lba, k = rng.randrange(n - 3), rng.randint(1, 3)
            data = rng.randbytes(k * pb)
            dev.write(lba, data, fua=rng.random() < 0.3)
            for i in range(k):
                o.committed[lba + i] = data[i * pb:(i + 1) * pb]
            counts["plain"] += 1
        elif r < 0.3 and len(open_tx) < dev.info.num_tx:
            tx = dev.begin(explicit=rng.random() < 0.5)
            assert tx.txid not in open_tx
            open_tx[tx.txid] = tx
            o.tx[tx.txid] = {}
        elif r < 0.55 and open_tx:
            tx = open_tx[rng.choice(sorted(open_tx))]
            lba = rng.randrange(n)
            if len(tx.pages | {lba}) > dev.info.tx_entries:
                continue
            data = rng.randbytes(pb)
            tx.write(lba, data)
            o.tx[tx.txid][lba] = data
        elif r < 0.65 and open_tx:
            txid = rng.choice(sorted(open_tx))
            tx = open_tx.pop(txid)
            pages = o.tx.pop(txid)
            if not pages:
                with pytest.raises(TxError) as e:
                    tx.commit()
                assert e.value.status == TX_EMPTY
                continue
            if rng.random() < 0.5:
                assert tx.commit() == len(pages)  # DW0: the entries applied (distinct pages in the model)
                counts["commit"] += 1
            else:
                lba = rng.choice(sorted(pages))
                data = rng.randbytes(pb)
                tx.commit_write(lba, data)
                pages[lba] = data
                counts["commit_write"] += 1
            o.committed.update(pages)
        elif r < 0.72 and open_tx:
            txid = rng.choice(sorted(open_tx))
            open_tx.pop(txid).abort()
            o.tx.pop(txid)
            counts["abort"] += 1
        elif r < 0.8:
            # a whole transaction in a with-block: committed, or aborted by an exception
            fail = rng.random() < 0.3
            staged = {}
            try:
                with dev.transaction() as tx:
                    for _ in range(rng.randint(1, 4)):
                        lba = rng.randrange(n)
                        staged[lba] = rng.randbytes(pb)
                        tx.write(lba, staged[lba])
                    if fail:
                        raise KeyError("application error")
            except KeyError:
                assert tx.state == "aborted"
                counts["ctx_abort"] += 1
            else:
                assert tx.state == "committed"
                o.committed.update(staged)
                counts["ctx"] += 1
        elif r < 0.9:
            lba = rng.randrange(n - 2)
            assert dev.read(lba, 2) == o.get(lba) + o.get(lba + 1), f"step {step}: plain read {lba}"
            counts["reads"] += 1
        elif open_tx:
            tx = open_tx[rng.choice(sorted(open_tx))]
            lba = rng.choice(sorted(o.tx[tx.txid]) or [rng.randrange(n)])
            assert tx.read(lba) == o.get(lba, tx.txid), f"step {step}: tx {tx.txid} read {lba}"
            counts["txreads"] += 1
        if rng.random() < 0.05:
            dev.flush()
    for lba in range(n):
        assert dev.read(lba) == o.get(lba), f"final read {lba}"
    assert sorted(open_tx) == dev.open_transactions
    assert all(v > 0 for k, v in counts.items() if k != "ctx_abort") and counts["ctx_abort"] + counts["ctx"] > 0, counts


def test_atomic_write():
    """atomic_write (docs/host-interface.md §1.10): the unit and boundary from Identify Namespace,
    one Write the device sends as its implicit transaction (txid num_tx + COMMIT in the reference
    model's descriptor), data read back; too long or crossing: refused before sending."""
    env, dev = make_dev(num_tx=8, tx_entries=32)
    i = dev.info
    assert (i.atomic_blocks, i.atomic_boundary, i.num_tx) == (32, 32, 7), i
    for n, lba in ((2, 64), (32, 96), (5, 64 + 27)):
        d = bytes((n + k) & 0xFF for k in range(n * 512))
        k0 = len(env.model.descriptors)
        dev.atomic_write(lba, d, fua=n == 5)
        w = [x for x in env.model.descriptors[k0:] if x.op == 1]
        assert len(w) == 1 and (w[0].txid, w[0].flags) == (8, 4 | (n == 5)), w
        assert dev.read(lba, n) == d
    for n, lba in ((33, 0), (4, 30)):                  # too long; crossing the boundary at 32
        k0 = len(env.model.descriptors)
        with pytest.raises(TxError) as e:
            dev.atomic_write(lba, bytes(n * 512))
        assert e.value.local and e.value.status == (0, 0x02) and len(env.model.descriptors) == k0


def test_txids_are_owned_and_recycled():
    env, dev = make_dev(num_tx=5)                   # the host gets 1..4 (5: the atomic writes')
    txs = [dev.begin() for _ in range(4)]
    assert [t.txid for t in txs] == [1, 2, 3, 4]
    with pytest.raises(TxError) as e:
        dev.begin()
    assert e.value.status == TABLE_FULL and e.value.local
    txs[2].write(7, b"\x11" * 512)
    txs[2].commit()
    assert dev.begin().txid == 3                    # the freed one, lowest first
    txs[1].abort()
    assert dev.open_transactions == [1, 3, 4]
    with pytest.raises(TxError) as e:
        txs[1].write(1, b"\0" * 512)                # an ended transaction refuses, nothing sent
    assert e.value.local and e.value.status == BAD_TXID


def test_page_limit_is_refused_before_sending():
    env, dev = make_dev(tx_entries=8)
    tx = dev.begin()
    tx.write(0, bytes(range(256)) * 2 * 8)          # 8 pages in one command
    tx.write(3, b"\x55" * 512)                      # a page it already holds: no new entry
    sent = env.core.pages_written
    with pytest.raises(TxError) as e:
        tx.write(100, b"\x66" * 512)
    assert e.value.status == TX_FULL and e.value.local and tx.state == "open"
    assert env.core.pages_written == sent           # nothing reached the device
    assert tx.commit() == 8                         # DW0: 8 entries (pages 0-7, page 3 rewritten)
    assert dev.read(3) == b"\x55" * 512 and dev.read(0) == (bytes(range(256)) * 2)


def test_device_statuses_become_tx_errors():
    env, dev = make_dev(num_lbas=64)
    with pytest.raises(TxError) as e:
        dev.write(64, b"\0" * 512)
    assert e.value.status == LBA_RANGE and not e.value.local
    tx = dev.begin()
    with pytest.raises(TxError) as e:
        tx.write(63, b"\1" * 1024)                  # runs past the last LBA
    assert e.value.status == LBA_RANGE
    with pytest.raises(TxError) as e:
        tx.commit()                                 # nothing was staged
    assert e.value.status == TX_EMPTY
    assert tx.state == "committed" and dev.open_transactions == []
    tx = dev.begin()
    tx.write(5, b"\2" * 512)
    tx.abort()
    assert dev.read(5) == bytes(512)


def test_large_writes_split_at_mdts():
    # the model's core in arrival order: the device orders a COMMIT write after its transaction's
    # earlier writes (rtl/cmdq/README.md rule 5), which the random-order core stub does not model
    env, dev = make_dev(num_lbas=512, tx_entries=512, rng=False)
    big = random.Random(5).randbytes(dev.info.max_transfer * 2 + 1024)
    dev.write(10, big)
    assert dev.read(10, len(big) // 512) == big
    tx = dev.begin()
    cmds = tx.submit_write(200, big, commit=True)
    assert len(cmds) == 3 and [bool(c.sqe.cdw13 >> 8 & 1) for c in cmds] == [False, False, True]
    dev.wait(cmds)
    assert dev.read(200, len(big) // 512) == big


def test_barrier_flush_rflush_trim():
    env, dev = make_dev()
    dev.barrier_write(1, b"\x01" * 512)
    cmds = dev.submit_write(2, b"\x02" * 1024, barrier=True)
    assert [c.sqe.opc for c in cmds] == [0x81] and cmds[0].sqe.cdw13 == 1 << 9   # TXID 0 + BARRIER
    dev.wait(cmds)
    dev.flush()
    dev.rflush([(1, 2), (40, 1)])
    dev.trim([(1, 1)])
    assert dev.read(1, 3) == bytes(512) + b"\x02" * 1024


def test_diff_write_patches_a_page_inside_the_transaction():
    env, dev = make_dev()
    base = bytes(range(256)) * 2
    dev.write(9, base)
    tx = dev.begin()
    tx.diff_write(9, 64, b"\xAA" * 16)
    want = base[:64] + b"\xAA" * 16 + base[80:]
    assert tx.read(9) == want and dev.read(9) == base      # read your writes; others see the old page
    tx.commit()
    assert dev.read(9) == want
    tx = dev.begin()
    with pytest.raises(TxError) as e:
        tx.diff_write(9, 510, b"\1\2\3\4")                  # crosses the page end
    assert e.value.status == (0, 0x02) and not e.value.local
    tx.abort()
