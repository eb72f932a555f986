# SPDX-License-Identifier: Apache-2.0
"""libatstx over the UDP host link (sw/host/c/atstx_udp.c, docs/host-port.md "UDP host link"):
`atstx_script --addr udp:127.0.0.1:PORT,...` against the reference model of the device side
(udp_device_model.py, written from docs/host-port.md) on a real UDP socket, with seeded drops,
duplicates and reordering in both directions.

The model's core stub is wrapped here (`Board`): IDENTIFY answers a geometry, transactions (TX_BEGIN,
TX writes / reads, COMMIT flag, TX_COMMIT, TX_ABORT, BAD_TXID, TABLE_FULL, TX_EMPTY) and attr 3 as
the core's BAD_FIELD, and every descriptor handed to the core is recorded. The test keeps its own
reference (a dict of LBA -> bytes, the open transactions' pages) and checks
- every answer line of the library against it (read data byte for byte, statuses in their NVMe
  form: LBA out of range 0x0080, BAD_TXID 0x0702, TX_EMPTY 0x0706, TABLE_FULL 0x0708, ...);
- the descriptors the core received against those the calls must make, in order (one per call,
  one TRIM per range, none for what the library refuses itself): so every command ran exactly
  once, none was lost, and the fields (op, txid, FUA / BARRIER / COMMIT, lba, nlb) are right;
- the link's own errors: a reserved opcode bit is ERROR BAD_FIELD (ATS_E_LINK_ERR(5), nothing
  executed, the handle still works), a reserved opcode the core's BAD_OP;
- a device that stops answering: -ETIMEDOUT within the retry budget, then -EIO, no hang; a port
  nobody listens on, and open against a dead device, the same;
- a restarted host whose sequence numbers are older than the slots' (ERROR STALE, one 2^31 jump);
- atstx_bank (init / run / check, transactions) over a lossy link against a replay of its transfers;
- a flood of forged CPL / RDATA packets from another source: ignored.
ATS_UDP_MUTANTS=1 also builds broken transports (no sequence check, no source check, no retry, no
chunk resend, one sequence number for all, retries without mask) and checks that the random mixes
or the flood fail on each.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from libatstx_build import build_libatstx  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb.nvme_ref import Descriptor, FwFeatures  # noqa: E402  (the device settings' one reference, §1.2)
OUT = ROOT / "build" / "host" / "c"

from udp_device_model import UdpDeviceModel  # noqa: E402

PAGE, NLBA, NSLOT, SLOT_BYTES, NUM_TX, TX_ENTRIES = 512, 256, 4, 8192, 4, 16
MAXN = SLOT_BYTES // PAGE
# core ops (§1) and statuses (§2); NVMe statuses as libatstx returns them (host-interface.md §1.8)
READ, WRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, TRIM, IDENTIFY, FEATURE = 0, 1, 3, 4, 5, 6, 7, 8, 9, 11
S_OK, S_BAD_OP, S_BAD_TXID, S_BAD_LBA, S_TX_EMPTY, S_BAD_FIELD, S_TABLE_FULL = 0, 1, 2, 3, 6, 7, 8
F_FUA, F_BARRIER, F_COMMIT = 1, 2, 4
SC_INVALID_OPCODE, SC_INVALID_FIELD, SC_LBA_RANGE = 0x0001, 0x0002, 0x0080
SC_BAD_TXID, SC_TX_EMPTY, SC_TABLE_FULL = 0x0702, 0x0706, 0x0708
E2BIG, EINVAL, EIO, ETIMEDOUT, ENOTSUP = -7, -22, -5, -110, -95
LINK_BAD_FIELD = -10105                 # ATS_E_LINK_ERR(5)
IDENT_WORDS = [0x41545344, 1, 2, 2, 64, 16, PAGE, 16, NLBA, NUM_TX, TX_ENTRIES, NSLOT, 8, 1, 0, 0]


class Board(UdpDeviceModel):
    """The reference model with a fuller core stub (transactions, IDENTIFY) and a record of every
    descriptor handed to the core: (slot, seq, desc)."""

    def __init__(self, *a, seal: int | None = None, **k):
        self.descs: list[tuple[int, int, dict]] = []
        self.txs: dict[int, dict[int, bytes]] = {}
        self.feat = FwFeatures(seal or 0, seal is not None)   # FEATURE 0xC0 SEAL_TIME; None: a build without it
        super().__init__(*a, **k)

    def _issue(self, i):
        s = self.slots[i]
        self.descs.append((i, s.seq, dict(s.desc)))
        super()._issue(i)

    def _done(self, i, status, result=0):
        s = self.slots[i]
        s.cpl, s.st = (status, result), 3          # DONE
        self._send_done(i, (1 << 32) - 1)

    def _complete(self, i):
        s = self.slots[i]
        d = s.desc
        op, t, lba, n, pg = d["op"], d["txid"], d["lba"], d["nlb"] + 1, self.page
        if d["attr"] == 3:
            return self._done(i, S_BAD_FIELD)
        if op == IDENTIFY:
            s.buf[0:512] = struct.pack("<128I", *IDENT_WORDS, *([0] * 112))
            return self._done(i, S_OK)
        if op == FEATURE:                          # docs/architecture.md §1.2: lba = FID, nlb 0 get / 1 set
            st, res = self.feat.answer(Descriptor(op, 0, lba, d["nlb"], aux=d["aux"]))
            return self._done(i, st, res)
        if op in (TX_BEGIN, TX_COMMIT, TX_ABORT) or (op in (READ, WRITE) and t):
            if not 1 <= t <= NUM_TX:
                return self._done(i, S_BAD_TXID)
            tx = self.txs.setdefault(t, {})
            if op == TX_BEGIN:
                return self._done(i, S_TABLE_FULL if tx else S_OK)
            if op in (TX_COMMIT, TX_ABORT):
                if not tx:
                    return self._done(i, S_TX_EMPTY)
                if op == TX_COMMIT:
                    self.store.update(tx)
                k = len(tx)
                tx.clear()
                return self._done(i, S_OK, k if op == TX_COMMIT else 0)
            if lba + n > self.nlba:
                return self._done(i, S_BAD_LBA)
            if op == WRITE:
                for k in range(n):
                    tx[lba + k] = bytes(s.buf[k * pg:(k + 1) * pg])
                if d["flags"] & F_COMMIT:
                    self.store.update(tx)
                    tx.clear()
            else:
                for k in range(n):
                    s.buf[k * pg:(k + 1) * pg] = tx.get(lba + k, self.store.get(lba + k, bytes(pg)))
            return self._done(i, S_OK, n)
        return super()._complete(i)


@pytest.fixture(scope="module")
def built():
    build_libatstx()
    return OUT / "atstx_script"


class Driver:
    """atstx_script on the link, one line in, one line out (a hung library fails the test)."""

    def __init__(self, exe: Path, port: int, **opts):
        o = dict(dict(slot_bytes=SLOT_BYTES, nslot=NSLOT), **opts)
        self.addr = f"udp:127.0.0.1:{port}," + ",".join(f"{k}={v}" for k, v in o.items())
        self.p = subprocess.Popen([str(exe), "--addr", self.addr], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)

    def cmd(self, line: str, timeout: float = 20.0) -> str:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.readline(timeout)

    def readline(self, timeout: float = 20.0) -> str:
        import select
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            self.p.kill()
            raise AssertionError(f"no answer within {timeout} s: the library hangs")
        return self.p.stdout.readline().strip()

    def stats(self) -> dict:
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", self.cmd("stats"))}

    def close(self) -> str:
        self.p.stdin.close()
        out = self.readline()
        self.p.wait(10)
        return out


def st(line: str) -> int:
    return int(line.split()[1])


class Ref:
    """The test's own model of what the device must answer, and the descriptors each call makes."""

    def __init__(self):
        self.committed: dict[int, bytes] = {}
        self.txs: dict[int, dict[int, bytes]] = {}   # the library's open transactions
        self.want: list[tuple] = []                 # (op, txid, flags, lba, nlb) per descriptor

    def page(self, lba: int, t: int = 0) -> bytes:
        if t and lba in self.txs.get(t, {}):
            return self.txs[t][lba]
        return self.committed.get(lba, bytes(PAGE))

    def held(self, lbas) -> bool:
        return any(lba in tx for tx in self.txs.values() for lba in lbas)


def random_mix(drv: Driver, rng: random.Random, ref: Ref, n_cmds: int) -> dict:
    kinds: dict[str, int] = {}

    def want(op, txid=0, flags=0, lba=0, nlb=0):
        ref.want.append((op, txid, flags, lba, nlb))
        kinds[op] = kinds.get(op, 0) + 1            # descriptors by op

    for _ in range(n_cmds):
        k = rng.random()
        n = rng.randint(1, MAXN)
        lba = rng.randrange(NLBA - n + 1)
        lbas = range(lba, lba + n)
        if k < 0.30:
            if ref.held(lbas):
                continue
            fl = rng.choice([0, 0, 1, 2, 3])
            past = rng.random() < 0.06
            if past:
                lba = NLBA - rng.randint(0, n - 1) if n > 1 else NLBA
            data = rng.randbytes(n * PAGE)
            got = st(drv.cmd(f"w {lba} {n} {fl} {data.hex()}"))
            want(WRITE, 0, (F_FUA if fl & 1 else 0) | (F_BARRIER if fl & 2 else 0), lba, n - 1)
            if past:
                assert got == SC_LBA_RANGE, got
            else:
                assert got == 0, got
                for i in range(n):
                    ref.committed[lba + i] = data[i * PAGE:(i + 1) * PAGE]
        elif k < 0.55:
            past = rng.random() < 0.05
            if past:
                lba = NLBA - 1
            out = drv.cmd(f"r {lba} {n}")
            want(READ, 0, 0, lba, n - 1)
            if past and n > 1:
                assert out == f"st {SC_LBA_RANGE}", out[:80]
            else:
                exp = b"".join(ref.page(lba + i) for i in range(n)).hex()
                assert out == f"st 0 {exp}", f"READ {lba}+{n}: data differ (line {out[:40]}...)"
        elif k < 0.60:
            rs = [(rng.randrange(NLBA - 4), rng.randint(1, 4)) for _ in range(rng.randint(1, 3))]
            if ref.held(x for a, m in rs for x in range(a, a + m)):
                continue
            assert st(drv.cmd("trim " + " ".join(f"{a} {m}" for a, m in rs))) == 0
            for a, m in rs:
                want(TRIM, 0, 0, a, m - 1)
                for x in range(a, a + m):
                    ref.committed.pop(x, None)
        elif k < 0.63:
            assert st(drv.cmd("f")) == 0
            want(FLUSH)
        elif k < 0.66:
            rs = [(rng.randrange(NLBA), rng.randint(1, 8)) for _ in range(rng.randint(1, 8))]
            assert st(drv.cmd("rf " + " ".join(f"{a} {m}" for a, m in rs))) == 0
            want(RFLUSH, 0, 0, 0, len(rs) - 1)
        elif k < 0.72:                                   # TX Begin: the lowest txid the handle does not hold
            out = drv.cmd("tb")
            free = [t for t in range(1, NUM_TX + 1) if t not in ref.txs]
            if free:
                assert out == f"st 0 txid {free[0]}", out
                ref.txs[free[0]] = {}
                want(TX_BEGIN, free[0])
            else:
                assert out == f"st {SC_TABLE_FULL} txid 0", out       # the library's own: nothing sent
        elif k < 0.84 and ref.txs:
            t = rng.choice(sorted(ref.txs))
            tx = ref.txs[t]
            others = {x for u, o in ref.txs.items() if u != t for x in o}
            if set(lbas) & (others | set()) or any(x in others for x in lbas):
                continue
            data = rng.randbytes(n * PAGE)
            new = len(set(tx) | set(lbas))
            commit = rng.random() < 0.2
            out = drv.cmd(f"{'tcw' if commit else 'tw'} {t} {lba} {n} {data.hex()}")
            if new > TX_ENTRIES:
                assert st(out) == E2BIG, out              # refused before sending, still open
                continue
            want(WRITE, t, F_COMMIT if commit else 0, lba, n - 1)
            assert st(out) == 0, out
            for i in range(n):
                tx[lba + i] = data[i * PAGE:(i + 1) * PAGE]
            if commit:
                ref.committed.update(ref.txs.pop(t))
        elif k < 0.90 and ref.txs:
            t = rng.choice(sorted(ref.txs))
            out = drv.cmd(f"tr {t} {lba} {n}")
            want(READ, t, 0, lba, n - 1)
            exp = b"".join(ref.page(lba + i, t) for i in range(n)).hex()
            assert out == f"st 0 {exp}", f"TX READ {t} {lba}+{n}: data differ"
        elif k < 0.96 and ref.txs:
            t = rng.choice(sorted(ref.txs))
            tx = ref.txs.pop(t)
            if rng.random() < 0.7:
                out = drv.cmd(f"tc {t}")
                want(TX_COMMIT, t)
                assert out == (f"st 0 entries {len(tx)}" if tx else f"st {SC_TX_EMPTY} entries 0"), out
                ref.committed.update(tx)
            else:
                assert drv.cmd(f"ta {t}") == "st 0"       # an empty transaction's TX_EMPTY is no failure
                want(TX_ABORT, t)
        else:                                            # statuses the API never provokes: raw commands
            c = rng.randrange(4)
            if c == 0:                                   # TX Write with a txid past num_tx: the core's BAD_TXID
                assert st(drv.cmd(f"raw 0x81 {NUM_TX + 1} {lba} 1")) == SC_BAD_TXID
                want(WRITE, NUM_TX + 1, 0, lba, 0)
            elif c == 1:                                 # reserved CDW13 bits: refused by the library, as the front end
                assert st(drv.cmd(f"raw 0x81 {1 << 20} {lba} 1")) == SC_INVALID_FIELD
            elif c == 2:                                 # ATTR 3: the core's BAD_FIELD
                assert st(drv.cmd(f"raw 0x81 {3 << 16} {lba} 1")) == SC_INVALID_FIELD
                want(WRITE, 0, 0, lba, 0)
            else:                                        # an opcode the front end does not know
                assert st(drv.cmd(f"raw 0x7d 0 {lba} 1")) == SC_INVALID_OPCODE
    return kinds


def check_descs(m: Board, ref: Ref, skip: int = 1) -> None:
    got = [(d["op"], d["txid"], d["flags"], d["lba"], d["nlb"]) for _, _, d in m.descs[skip:]]
    keys = [(s, q) for s, q, _ in m.descs]
    assert len(keys) == len(set(keys)), "a descriptor reached the core twice"
    assert len(got) == len(ref.want), f"{len(got)} descriptors reached the core, {len(ref.want)} sent"
    for j, (g, w) in enumerate(zip(got, ref.want)):
        assert g == w, f"descriptor {j}: core got {g}, the call makes {w}"


def run_mix(exe: Path, seed: int, net: dict, n_cmds: int, timeout_ms: int, max_timeout_ms: int, nslot: int):
    m = Board(seed, NSLOT, SLOT_BYTES, PAGE, NLBA, **net)
    drv = Driver(exe, m.port, timeout_ms=timeout_ms, max_timeout_ms=max_timeout_ms, retries=20, nslot=nslot,
                 seq0=(1 << 32) - 40)                    # the numbers wrap during the run
    try:
        info = drv.cmd("info").split()
        assert info[1:6] == [str(PAGE), str(NLBA), str(NUM_TX), str(TX_ENTRIES), str(SLOT_BYTES)], info
        assert info[8] == "0", info                      # no SWRITE over the link
        ref = Ref()
        # IDENTIFY raw: the core's answer as it is
        out = drv.cmd(f"udp {IDENTIFY} 0 0 0 0 0 512").split()
        assert out[:4] == ["st", "0", "result", "0"] and bytes.fromhex(out[4])[:64] == struct.pack("<16I", *IDENT_WORDS)
        ref.want.append((IDENTIFY, 0, 0, 0, 0))
        kinds = random_mix(drv, random.Random(seed), ref, n_cmds)
        for t in sorted(ref.txs):                        # close aborts the open transactions ...
            ref.want.append((TX_ABORT, t, 0, 0, 0))
        ref.want.append((FLUSH, 0, 0, 0, 0))             # ... and flushes
        stats = drv.stats()
        assert drv.close() == "close 0"
        check_descs(m, ref)
        # every LBA at the end: the model's store is the core's; the reference is the test's
        for lba in range(NLBA):
            assert m.store.get(lba, bytes(PAGE)) == ref.committed.get(lba, bytes(PAGE)), f"LBA {lba}"
        return m, stats, kinds
    finally:
        if drv.p.poll() is None:
            drv.p.kill()
        m.close()


# (seed, network faults, timeout_ms, max_timeout_ms, host slots): "one_slot" puts every command in
# slot 0, so the previous command's late duplicates arrive while the next one runs
CASES = {"clean": (11, dict(), 2000, 2000, NSLOT),
         "lossy": (12, dict(drop=0.08, dup=0.08, delay=0.003), 10, 80, NSLOT),
         "reorder": (13, dict(drop=0.03, dup=0.25, delay=0.01), 15, 60, NSLOT),
         "one_slot": (14, dict(drop=0.03, dup=0.3, delay=0.01), 15, 60, 1)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_random_mix_against_dict(built, case):
    seed, net, to, mx, ns = CASES[case]
    seed += 100 * int(os.environ.get("ATS_SEED", "0"))
    m, stats, kinds = run_mix(built, seed, net, 160, to, mx, ns)
    print(case, kinds, stats, m.stats, sorted(set(m.errors)))
    if case == "clean":
        assert stats["retries"] == 0 and not m.errors, (stats, m.errors)
    else:
        assert stats["retries"] > 0 and m.stats["dropped"] > 0 and m.stats["duplicated"] > 0, (stats, m.stats)
        assert set(m.errors) <= {7}, m.errors            # only STALE (late duplicates of DATA)
        assert stats["ignored"] > 0, stats               # duplicates and late packets were seen and dropped


def test_foreign_packets_ignored(built):
    """Another source floods the host's port with CPL and RDATA packets for every slot and the
    sequence numbers the host will use (status OK, garbage data): the library takes answers from
    the device's address and port only, so the mix still matches the dict and runs exactly once."""
    import socket
    import threading
    seq0 = 5000
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    lport = probe.getsockname()[1]
    probe.close()
    m = Board(51, NSLOT, SLOT_BYTES, PAGE, NLBA, dup=0.05, delay=0.002)
    drv = Driver(built, m.port, timeout_ms=15, max_timeout_ms=60, retries=20, seq0=seq0, local_port=lport)
    stop = threading.Event()
    sent = [0]

    def forge():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        junk = bytes(range(256)) * 4
        while not stop.is_set():
            for q in range(seq0, seq0 + 400):
                for slot in range(NSLOT):
                    for k in range(SLOT_BYTES // 1024):
                        s.sendto(struct.pack("<BBBBI", 0x82, slot, k, 1, q) + junk, ("127.0.0.1", lport))
                    s.sendto(struct.pack("<BBBBII", 0x81, slot, 0, 1, q, 1), ("127.0.0.1", lport))
                    sent[0] += 1
                if stop.is_set():
                    break
        s.close()

    t = threading.Thread(target=forge, daemon=True)
    t.start()
    try:
        ref = Ref()
        ref.want.append((IDENTIFY, 0, 0, 0, 0))
        random_mix(drv, random.Random(51), ref, 60)
        for tx in sorted(ref.txs):
            ref.want.append((TX_ABORT, tx, 0, 0, 0))
        ref.want.append((FLUSH, 0, 0, 0, 0))
        stats = drv.stats()
        assert drv.close() == "close 0"
        check_descs(m, ref, skip=0)
        assert sent[0] > 1000 and stats["ignored"] > 1000, (sent, stats)
    finally:
        stop.set()
        t.join(5)
        if drv.p.poll() is None:
            drv.p.kill()
        m.close()


def test_link_errors_and_dead_device(built):
    """The link's ERROR answers and a device that stops answering: defined statuses, no hang."""
    m = Board(21, NSLOT, SLOT_BYTES, PAGE, NLBA)
    drv = Driver(built, m.port, timeout_ms=5, max_timeout_ms=20, retries=4)
    try:
        # a reserved op bit: ERROR BAD_FIELD, nothing executed; the handle still works
        assert drv.cmd("udp 16 0 0 0 0 0 0") == f"st {LINK_BAD_FIELD} result 0"
        assert drv.cmd("udp 0 0 16 0 0 0 0") == f"st {LINK_BAD_FIELD} result 0"      # reserved flags bit 4
        assert drv.cmd(f"udp {READ} 0 0 0 0 0 {SLOT_BYTES + 4}") == f"st {EINVAL} result 0"  # above slot_bytes
        # a reserved opcode reaches the core: its BAD_OP
        assert drv.cmd("udp 12 0 0 0 0 0 0") == f"st {S_BAD_OP} result 0"
        n0 = len(m.descs)
        data = random.Random(21).randbytes(3 * PAGE)
        assert drv.cmd(f"w 7 3 0 {data.hex()}") == "st 0"
        assert drv.cmd("r 7 3") == f"st 0 {data.hex()}"
        assert drv.cmd(f"r {NLBA - 2} 3") == f"st {SC_LBA_RANGE}"
        assert drv.cmd(f"raw 0x02 0 0 {MAXN + 1}") == f"st {SC_INVALID_FIELD}"   # beyond MDTS: nothing sent
        assert drv.cmd("sw 0 1 " + "00" * PAGE) == f"st {ENOTSUP}"  # no SWRITE over the link
        assert len(m.descs) == n0 + 3
        assert [d["op"] for _, _, d in m.descs[:n0]] == [IDENTIFY, 12], "a refused packet reached the core"
        # the device stops answering: -ETIMEDOUT after 4 retries (5+10+20+20+20 ms), then -EIO
        s0 = drv.stats()
        m.drop = 1.0
        t0 = time.monotonic()
        assert drv.cmd("r 7 1", timeout=10) == f"st {ETIMEDOUT}"
        assert time.monotonic() - t0 < 2.0
        s = drv.stats()
        assert s["retries"] - s0["retries"] == 4 and s["timeouts"] == 1, (s0, s)
        assert drv.cmd("f") == f"st {EIO}"
        assert drv.close() == f"close {EIO}"
    finally:
        if drv.p.poll() is None:
            drv.p.kill()
        m.close()
    # a host told a larger slot than the bitstream's: the device refuses the SUBMIT (BAD_FIELD)
    m = Board(23, NSLOT, SLOT_BYTES, PAGE, NLBA)
    drv = Driver(built, m.port, timeout_ms=5, max_timeout_ms=20, retries=4, slot_bytes=2 * SLOT_BYTES)
    try:
        assert drv.cmd(f"r 0 {MAXN + 1}") == f"st {LINK_BAD_FIELD}"
        assert drv.cmd(f"r 0 {MAXN}") == f"st 0 {bytes(SLOT_BYTES).hex()}"
        assert drv.close() == "close 0"
        assert [d["op"] for _, _, d in m.descs] == [IDENTIFY, READ, FLUSH]
    finally:
        if drv.p.poll() is None:
            drv.p.kill()
        m.close()
    # open against a dead device (IDENTIFY unanswered) and against a port nobody listens on
    m = Board(22, drop=1.0)
    try:
        for port in (m.port, 9):
            t0 = time.monotonic()
            r = subprocess.run([str(built), "--addr", f"udp:127.0.0.1:{port},timeout_ms=5,max_timeout_ms=10,retries=3"],
                               input="", capture_output=True, text=True, timeout=20)
            assert r.returncode == 1 and r.stdout.startswith(f"open {ETIMEDOUT} "), r.stdout
            assert time.monotonic() - t0 < 2.0
    finally:
        m.close()
    for bad in ("udp:", "udp:127.0.0.1:0", "udp:127.0.0.1:99999", "udp:127.0.0.1,nslot", "udp:127.0.0.1,foo=1",
                "udp:127.0.0.1,slot_bytes=1000"):
        r = subprocess.run([str(built), "--addr", bad], input="", capture_output=True, text=True, timeout=20)
        assert r.returncode == 1 and r.stdout.startswith(f"open {EINVAL} "), (bad, r.stdout)


@pytest.mark.parametrize("seal", [2000, None])
def test_features(built, seal):
    """The device settings over the link (ats_get_feature / ats_set_feature / the seal-time calls):
    each a FEATURE descriptor (op 11, lba = FID, nlb 1 set / 0 get, aux = the value of a set, every
    other field 0), the answers against test_libatstx.Features (written from docs/architecture.md
    §1.2) on a device with SEAL_TIME (its value 2,000) and on one without it (Invalid Field
    throughout); FIDs outside 0xC0 … 0xFF send nothing; a raw Set / Get Features with Save and SEL
    bits makes the FEATURE the front end makes (CDW10[7:0] only, a Get's CDW11 not passed on); other
    admin commands are not carried (-ENOTSUP, nothing sent); then plain I/O still works."""
    from test_libatstx import Features, FEAT_SEAL_TIME
    rng = random.Random(61)
    m = Board(61, NSLOT, SLOT_BYTES, PAGE, NLBA, seal=seal)
    drv = Driver(built, m.port)
    try:
        f = Features(seal)
        want = []
        for fid, v, line, ans in f.script(rng):
            assert drv.cmd(line) == ans, line
            if 0xC0 <= fid <= 0xFF:
                want.append((FEATURE, fid, v is not None, v or 0))
        v = rng.randrange(65536)
        for line, fid, nlb, aux, ans in (
                (f"adm 0x09 {FEAT_SEAL_TIME | 1 << 31} {v}", FEAT_SEAL_TIME, 1, v, f.answer(FEAT_SEAL_TIME, v)),
                (f"adm 0x0a {FEAT_SEAL_TIME | 5 << 8} 123", FEAT_SEAL_TIME, 0, 0, f.answer(FEAT_SEAL_TIME)),
                (f"adm 0x09 {0x3C1} 9", 0xC1, 1, 9, f.answer(0xC1, 9))):
            assert drv.cmd(line) == f"st {ans[0]} dw0 {ans[1]}", line
            want.append((FEATURE, fid, nlb, aux))
        for line in ("adm 0x0a 0x07 0", "adm 0x09 0x06 0", "adm 0x06 1 0", "adm 0x02 0xc0 0"):
            assert drv.cmd(line) == f"st {ENOTSUP} dw0 0", line
        data = rng.randbytes(2 * PAGE)
        assert drv.cmd(f"w 3 2 0 {data.hex()}") == "st 0"
        assert drv.cmd("r 3 2") == f"st 0 {data.hex()}"
        assert drv.close() == "close 0"
        got = [(d["op"], d["lba"], d["nlb"], d["aux"]) for _, _, d in m.descs if d["op"] == FEATURE]
        assert got == want, (got, want)
        assert all(d["txid"] == d["flags"] == d["attr"] == d["prio"] == 0 for _, _, d in m.descs if d["op"] == FEATURE)
        assert [d["op"] for _, _, d in m.descs if d["op"] != FEATURE] == [IDENTIFY, WRITE, READ, FLUSH]
        assert m.feat.seal == f.seal
    finally:
        if drv.p.poll() is None:
            drv.p.kill()
        m.close()


@pytest.mark.parametrize("gap", [5, (1 << 31) + 5])
def test_host_restart(built, gap):
    """A second host process whose sequence numbers are older than the slots' (serial-number
    arithmetic): its first SUBMIT gets ERROR STALE, it jumps 2^31 once and every command runs once."""
    m = Board(31, NSLOT, SLOT_BYTES, PAGE, NLBA)
    try:
        data = random.Random(31).randbytes(NSLOT * PAGE)
        drv = Driver(built, m.port, seq0=1000)
        for i in range(NSLOT):                           # IDENTIFY + NSLOT writes: every slot used
            assert drv.cmd(f"w {i} 1 0 {data[i * PAGE:(i + 1) * PAGE].hex()}") == "st 0"
        assert drv.close() == "close 0"
        n0 = len(m.descs)
        drv = Driver(built, m.port, seq0=(1000 - gap) & 0xFFFFFFFF, timeout_ms=2000)
        for i in range(2 * NSLOT):
            assert drv.cmd(f"r {i % NSLOT} 1") == f"st 0 {data[i % NSLOT * PAGE:(i % NSLOT + 1) * PAGE].hex()}"
        s = drv.stats()
        assert drv.close() == "close 0"
        assert len(m.descs) == n0 + 1 + 2 * NSLOT + 1   # IDENTIFY, the reads and close's FLUSH, each once
        assert s["resync"] == (0 if gap > 1 << 31 else 1) and s["retries"] == 0, s
    finally:
        m.close()


def test_bank_over_lossy_link(built):
    """atstx_bank (transactions of 2-4 accounts, COMMIT writes and TX Commits) over a lossy link:
    init, run, check in three processes against one device; the balances equal a Python replay of
    the seeded transfers (test_libatstx.replay, written from atstx_bank.c's comment)."""
    from test_libatstx import replay
    accts, n, seed = 32, 40, 977
    m = Board(41, NSLOT, SLOT_BYTES, PAGE, NLBA, drop=0.05, dup=0.1, delay=0.005)
    addr = f"udp:127.0.0.1:{m.port},slot_bytes={SLOT_BYTES},timeout_ms=10,max_timeout_ms=80,retries=20"
    bank = [str(built.parent / "atstx_bank"), "--addr", addr, "--accounts", str(accts)]
    try:
        for args in (["init"], ["run", "--transfers", str(n), "--seed", str(seed)], ["check"]):
            r = subprocess.run(bank + args, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, (args, r.stdout[-500:], r.stderr[-500:])
        assert r.stdout.count("\n") == accts + 1 and f"total {accts * 1000}" in r.stdout
        want = replay(seed, n, accts)[n]
        got = {int(a): (int(b), int(v), int(x)) for a, b, v, x in
               re.findall(r"account (\d+) balance (-?\d+) version (\d+) xfer (\d+)", r.stdout)}
        assert got == want
        assert m.stats["dropped"] > 0 and m.stats["duplicated"] > 0
        assert not any(m.txs.values()), "a transaction left open in the device"
    finally:
        m.close()


MUTANTS = {
    # packets of earlier commands of the slot are taken as this one's
    "no_seq_check": ("|| p[1] != c->slot || ats_get32(p + 4) != c->seq)", "|| p[1] != c->slot)"),
    # a timeout fails the command at once
    "no_retry": ("if (++tries > u->o.max_retries) {", "if (++tries > 0) {"),
    # STATE loading does not resend the missing chunks
    "no_chunk_resend": ("int st = send_chunks(u, c, miss);\n            return st ? st : 1;", "return 0;"),
    # every command under one sequence number (the device takes it for a retry)
    "one_seq": ("c.seq = ++u->seq;", "c.seq = u->seq;"),
    # answers taken from any source
    "no_src_check": ("            src.sin_port != u->dev.sin_port) {", "            src.sin_port != u->dev.sin_port && 0) {"),
    # retries ask for no RDATA chunk again
    "no_mask": ("if ((st = send_submit(u, &c, miss)))", "if ((st = send_submit(u, &c, 0 * miss)))"),
}


@pytest.mark.skipif(os.environ.get("ATS_UDP_MUTANTS") != "1", reason="ATS_UDP_MUTANTS=1: build broken transports")
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_fails(built, mutant, tmp_path):
    src = ROOT / "sw/host/c"
    for f in src.iterdir():
        if f.suffix in (".c", ".h"):
            shutil.copy(f, tmp_path / f.name)
    a, b = MUTANTS[mutant]
    text = (tmp_path / "atstx_udp.c").read_text()
    assert text.count(a) == 1, mutant
    (tmp_path / "atstx_udp.c").write_text(text.replace(a, b))
    exe = tmp_path / "atstx_script"
    lib = ["atstx.c", "atstx_sqe.c", "atstx_hostport.c", "atstx_sim.c", "atstx_linux.c", "atstx_udp.c"]
    subprocess.run(["cc", "-std=c11", "-O1", f"-I{ROOT / 'build/gen/include'}", f"-I{tmp_path}", "-o", str(exe),
                    str(tmp_path / "atstx_script.c"), *[str(tmp_path / f) for f in lib]], check=True)
    failed = []
    for case in ("lossy", "reorder", "one_slot"):
        try:
            run_mix(exe, *CASES[case][:2], 160, *CASES[case][2:])
        except AssertionError as e:
            failed.append(f"{case}: {str(e)[:120]}")
    try:
        test_foreign_packets_ignored(exe)
    except AssertionError as e:
        failed.append(f"foreign: {str(e)[:120]}")
    print(mutant, failed)
    assert failed, f"mutant {mutant} passed the random mix"
