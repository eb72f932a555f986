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

from atomssd.txapi import AtomDevice, NotAtomicError, TxError  # noqa: E402
from atstb.nvme_ref import NvmeRefConfig, default_identify_words  # noqa: E402
from test_nvme import make_env  # noqa: E402
import atomssd.nvme as N  # noqa: E402

# docs/host-interface.md §1.8 as literals (not the library's constants)
LBA_RANGE, BAD_TXID, TX_FULL, TX_EMPTY, TABLE_FULL = (0, 0x80), (7, 0x02), (7, 0x04), (7, 0x06), (7, 0x08)


def make_dev(seed: int = 1, num_tx: int = 8, tx_entries: int = 16, num_lbas: int = 256, page_bytes: int = 512,
             rng: bool = True, stx: int = 0):
    cfg = dict(num_tx=num_tx, num_lbas=num_lbas, page_bytes=page_bytes, **({"stx": stx} if stx else {}))
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
        with pytest.raises(NotAtomicError) as e:
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


def _nvme_pkg_statuses() -> dict:
    sys.path.insert(0, str(ROOT / "tools"))
    import contract
    return contract.parse_nvme()


def test_static_tx_statuses_are_the_front_ends():
    """txapi's SWRITE statuses are rtl/nvme/ats_nvme_pkg.sv's SC_SW_* (SCT 7), the one source."""
    from atomssd import txapi
    pkg = _nvme_pkg_statuses()
    names = ("NONE", "MANY", "PAGES", "EMPTY", "LENGTH", "OVERLAP")
    assert all(f"SW_{n}" in pkg for n in names), sorted(pkg)
    for n in names:
        assert pkg[f"SW_{n}"] == 0x700 | getattr(txapi, f"SW_{n}"), n


def test_static_tx_encoding_and_refusals():
    """static_tx's SWRITE against docs/host-interface.md §1.11, byte for byte (opcode 0x8D, NSID 1, NR
    1-based in CDW10, NLB = all blocks - 1 in CDW12, CDW14/15 = the range list's address, dword
    aligned, inside one page; the list in DSM's format; the data the ranges' blocks in list order
    by PRPs), and against the reference front end's `swrite_plan` (cocotb_tests/lib/atstb/nvme_ref.py,
    STX = 2): it plans the WRITEs of exactly these ranges; every list the library refuses gets the
    same status from `swrite_plan` (the device's checks in the device's order), and the library sends
    nothing. The limits come from Identify (bytes 3136, 3138-3139); a device without SWRITE (STX = 0):
    Invalid Command Opcode, local."""
    env0, dev0 = make_dev(num_lbas=256)
    assert (dev0.info.static_ranges, dev0.info.static_pages) == (0, 0)
    with pytest.raises(TxError) as e:
        dev0.static_tx([(1, bytes(512))])
    assert e.value.local and e.value.status == (0, 0x01)
    env, dev = make_dev(num_lbas=256, num_tx=8, tx_entries=16, stx=2)
    ref = env.model
    assert (dev.info.static_ranges, dev.info.static_pages, dev.info.num_tx) == (8, 16, 8 - 1 - 2), dev.info
    a, b = bytes(range(256)) * 2, bytes(range(255, -1, -1)) * 4
    c = dev.submit_static_tx([(0x2F, a), (0x10, b)])
    sq = c.sqe.to_bytes()
    laddr = c.sqe.cdw15 << 32 | c.sqe.cdw14
    assert sq[:2] == b"\x8d\x00" and sq[4:8] == b"\1\0\0\0" and sq[40:] == bytes.fromhex(
        "02000000" "00000000" "02000000" "00000000") + laddr.to_bytes(8, "little")
    assert laddr % 4 == 0 and laddr % 4096 + 32 <= 4096
    lst = env.t.mem_read(laddr, 32)
    assert lst == bytes.fromhex("00000000 01000000 2f000000 00000000 00000000 02000000 10000000 00000000"
                                .replace(" ", ""))
    k = min(1536, 4096 - c.sqe.prp1 % 4096)
    assert env.t.mem_read(c.sqe.prp1, k) == (a + b)[:k]
    assert ref.swrite_plan(c.sqe.cdw10, c.sqe.cdw11, c.sqe.cdw12, c.sqe.cdw13, laddr, lst) == \
        ((0, 0), [(0x2F, 0, 0, 0), (0x10, 1, 1, 4)])            # OK; WRITEs (lba, nlb, offset, COMMIT)
    env.run(env.drv.wait([c]))
    k0, n = len(env.model.descriptors), env.core.pages_written
    bad = (([], (7, 0x20)), ([(i * 2, bytes(512)) for i in range(9)], (7, 0x21)),
           ([(0, bytes(512 * 15)), (40, bytes(1024))], (7, 0x22)), ([(0, bytes(512)), (9, b"")], (7, 0x23)),
           ([(0, bytes(512)), (255, bytes(1024))], (0, 0x80)),
           ([(10, bytes(2048)), (20, bytes(512)), (13, bytes(1024))], (7, 0x25)),
           ([(0, bytes(512 * 17)), (300, b"")], (7, 0x22)),          # two faults: the device's order
           ([(0, b""), (300, bytes(512))], (7, 0x23)), ([(300, bytes(512)), (0, bytes(512)), (0, bytes(512))], (0, 0x80)))
    for ranges, st in bad:
        with pytest.raises(TxError) as e:
            dev.static_tx(ranges)
        assert e.value.local and e.value.status == st, (ranges[:2], e.value)
        blocks = [(l, len(d) // 512) for l, d in ranges]
        nlb = sum(x for _, x in blocks) - 1
        got, plan = ref.swrite_plan(len(blocks), 0, nlb & 0xFFFF, 0, 0x1000, N.dsm_list(blocks))
        assert got == st and not plan, (blocks[:3], got)
    with pytest.raises(ValueError):
        dev.static_tx([(0, bytes(100))])
    assert len(env.model.descriptors) == k0 and env.core.pages_written == n


def test_static_tx_on_the_reference_front_end():
    """static_tx and the statuses the device gives bad lists (sent raw through the driver) on the
    reference front end with STX = 2, checked against a dict: the ranges read back, a refused list
    leaves nothing."""
    env, dev = make_dev(num_lbas=256, stx=2, tx_entries=32, num_tx=8)
    assert (dev.info.static_ranges, dev.info.static_pages) == (8, 32) and dev.info.num_tx == 8 - 1 - 2
    rng = random.Random(7)
    want: dict[int, bytes] = {}
    for _ in range(20):
        starts = sorted(rng.sample(range(0, 250, 6), rng.randint(1, 8)))
        rs = [(s, rng.randbytes(512 * rng.randint(1, 4))) for s in starts]
        if sum(len(d) for _, d in rs) > 32 * 512:
            continue
        dev.static_tx(rs)
        for s, d in rs:
            for i in range(len(d) // 512):
                want[s + i] = d[i * 512:(i + 1) * 512]
    for lba in range(256):
        assert dev.read(lba) == want.get(lba, bytes(512)), lba
    # the device's own statuses: lists the library would refuse, sent raw
    for ranges, data_blocks, st in (([(0, 2), (1, 2)], 4, (7, 0x25)), ([(0, 1), (4, 0)], 1, (7, 0x23)),
                                    ([(0, 2)], 3, (7, 0x24))):
        cmd = env.run(env.drv.submit_swrite(1, ranges, bytes(512 * data_blocks)))
        env.run(env.drv.wait(cmd))
        assert (cmd.cqe.sct, cmd.cqe.sc) == st
    for lba in range(256):
        assert dev.read(lba) == want.get(lba, bytes(512)), lba
