# SPDX-License-Identifier: Apache-2.0
"""The board's host link in simulation (issue 38 item 6, first step): LiteEth's MAC / ARP / IP / UDP
stack and `ats_udp_host` as the ECPIX-5 SoC builds them (sim/board/gen_hostlink.py; only the RGMII
PHY replaced by byte streams), in Verilator at the board's clocks (system 75 MHz, eth 125 MHz),
driven by the host library's UDP client (`atomssd.udplink`) in its own process over a real UDP
socket.

`SocketPhy` is the UDP socket model of the Ethernet PHY: each datagram the client sends to the
model's socket becomes an Ethernet / IPv4 / UDP frame from the host (192.168.1.100) to the board
(preamble, padding to 60 bytes, FCS, 12 idle bytes between frames); every frame the MAC sends is
checked (preamble, FCS, IPv4 header checksum, addresses) and answered (ARP requests for the host's
address) or forwarded (UDP payloads from port 16724 to the client's address). It can drop,
duplicate and delay (reorder) datagrams in both directions at seeded rates. While the simulated
device has nothing to do (no frame in flight, the core model idle, 256 quiet cycles) the model
waits for the client's next datagram with the simulation stopped, so the client's wall-clock time
costs no simulated cycles (a host answering within 256 cycles, 3.4 us).

Behind `ats_udp_host` the core is a Python model (`CoreModel`): it takes the descriptors, executes
them against its own LBA dict after random delays through the block's host-memory ports with random
backpressure, and completes them in random order. The client keeps its own reference dict and checks
every READ; the core model counts the descriptors (each command exactly once).

The PHY cannot wait: a byte offered while the MAC's first stage is not ready is lost, and the
model counts the frames cut (`frames_cut`, `bytes_lost`; the first few with the receive chain's
ready signals in the log). Without faults no frame may be cut and no command retried
(`mix_clean`, `soc_core`: the whole board SoC's situation, a core with 0.5k-20k cycles of latency
writing READ data in unbroken page bursts while write data and SUBMITs arrive; `throughput`, whose
commands must also finish within 30,000 cycles). `ATS_UDP_HOST_SRC=<path>` builds another copy of
ats_udp_host.sv (old code, mutants) in a build of its own.
"""
from __future__ import annotations

import collections
import json
import os
import random
import socket
import struct
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import Event, RisingEdge, Timer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(HERE)]

from atstb.streams import StreamSink, StreamSource, random_pause  # noqa: E402
from socket_phy import SocketPhy, run_client  # noqa: E402

NSLOT, SLOT_BYTES, PAGE = 4, 4096, 4096
NLBA = 64
SYS_HZ = 75e6
OP_READ, OP_WRITE, OP_FLUSH, OP_RFLUSH, OP_TRIM, OP_IDENTIFY = 0, 1, 6, 7, 8, 9


class CoreModel:
    """Executes the descriptors against an LBA dict, through the block's host-memory ports.
    `pause`: random idle / backpressure on every port (0: none); `hwr_burst`: the host-memory
    writes (READ data) as unbroken 1,024-word bursts whatever `pause` is (the SoC's core writes a
    page at one word a cycle); `lat`: (lo, hi) cycles from a descriptor taken to its execution
    (the SoC's NAND and DDR latency), drawn per command."""

    def __init__(self, tb, rng, pause: float, hwr_burst: bool = False, lat: tuple[int, int] = (0, 0)):
        self.tb, self.rng = tb, rng
        d = tb.dut
        p = (lambda: random_pause(random.Random(rng.random()), pause)) if pause else (lambda: None)
        self.cmd = StreamSink(d, "cmd", d.sys_clk, ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio",
                                                   "dptr", "aux"], p(), rst=d.sys_rst)
        self.cpl = StreamSource(d, "cpl", d.sys_clk, ["tag", "status", "result"], p())
        self.hrdq = StreamSource(d, "hrdq", d.sys_clk, ["addr", "len"], p())
        self.hrdd = StreamSink(d, "hrdd", d.sys_clk, ["data", "last"], p(), rst=d.sys_rst)
        self.hwr = StreamSource(d, "hwr", d.sys_clk, ["addr", "data", "last"], None if hwr_burst else p())
        self.store: dict[int, bytes] = {}
        self.pending: list[dict] = []
        self.busy = 0
        self.descriptors = 0
        self.lat = lat
        self.exec_p = 0.1 if pause and not lat[1] else 1.0
        cocotb.start_soon(self._run())

    def idle(self) -> bool:
        return not self.pending and not self.busy and not self.cmd.queue and not self.cpl.queue

    async def _read(self, addr: int, n: int) -> bytes:
        self.hrdq.send_nowait(addr=addr, len=n)
        words = []
        while True:
            b = await self.hrdd.recv(10 ** 6)
            words.append(b["data"])
            if b["last"]:
                break
        assert len(words) == (n + 3) // 4, (len(words), n)
        return b"".join(w.to_bytes(4, "little") for w in words)

    async def _write(self, addr: int, data: bytes):
        for k in range(len(data) // 4):
            self.hwr.send_nowait(addr=addr, data=int.from_bytes(data[4 * k:4 * k + 4], "little"),
                                 last=int(k == len(data) // 4 - 1))
        await self.hwr.wait_idle()

    async def _run(self):
        while True:
            await RisingEdge(self.tb.dut.sys_clk)
            while self.cmd.queue:
                d = self.cmd.queue.popleft()
                assert d["tag"] < NSLOT and d["dptr"] == d["tag"] * SLOT_BYTES, d
                self.descriptors += 1
                d["due"] = self.tb.cycle + self.rng.randint(*self.lat)
                self.pending.append(d)
            due = [d for d in self.pending if d["due"] <= self.tb.cycle]
            if not due or self.rng.random() >= self.exec_p:
                continue
            d = self.rng.choice(due)                  # completes in random order
            self.pending.remove(d)
            self.busy = 1
            op, lba, n = d["op"], d["lba"], d["nlb"] + 1
            status, result = 0, 0
            if op in (OP_READ, OP_WRITE, OP_TRIM) and lba + n > NLBA:
                status = 0x03
            elif op == OP_WRITE:
                data = await self._read(d["dptr"], n * PAGE)
                for i in range(n):
                    self.store[lba + i] = data[i * PAGE:(i + 1) * PAGE]
                result = n
            elif op == OP_READ:
                await self._write(d["dptr"], b"".join(self.store.get(lba + i, bytes(PAGE)) for i in range(n)))
                result = n
            elif op == OP_TRIM:
                for i in range(n):
                    self.store.pop(lba + i, None)
            elif op == OP_IDENTIFY:
                await self._write(d["dptr"], struct.pack("<128I", 0x41545344, *[(k * 0x01010101) & 0xFFFFFFFF
                                                                               for k in range(1, 128)]))
            elif op == OP_RFLUSH:
                words = await self._read(d["aux"], 8 * n)
                result = sum((struct.unpack_from("<II", words, 8 * r)[1] >> 16) + 1 for r in range(n))
            elif op != OP_FLUSH:
                status = 0x01
            self.cpl.send_nowait(tag=d["tag"], status=status, result=result)
            await self.cpl.wait_idle()
            self.busy = 0
            self.tb.activity()


class TB:
    def __init__(self, dut, rng, pause=0.3, hwr_burst=False, lat=(0, 0), **faults):
        self.dut, self.rng = dut, rng
        cocotb.start_soon(Clock(dut.sys_clk, 13336, unit="ps").start())   # 75 MHz
        cocotb.start_soon(Clock(dut.eth_clk, 8000, unit="ps").start())    # 125 MHz
        self.cycle = 0
        self.blk_in = collections.Counter()         # packets the block took, by type
        self.last_act = 0
        self.client_done = Event()
        cocotb.start_soon(self._count())
        self.core = CoreModel(self, rng, pause, hwr_burst, lat)
        u = dut.ats_udp_host
        chain = ["mac_core_rx_cdc_cdc_asyncfifo_writable", "mac_depacketizer_source_ready",
                 "ip_rx_depacketizer_source_ready", "rx_depacketizer_source_ready"]
        diag = {n: getattr(dut, n) for n in chain} | {n: getattr(u, n) for n in ("s_udp_ready", "s_hwr_valid", "rx_q",
                                                                                 "rq_cnt_q", "tx_q")}
        self.phy = SocketPhy(dut, self, rng, diag_sigs=diag, **faults)

    async def _count(self):
        u = self.dut.ats_udp_host
        first = True
        while True:
            await RisingEdge(self.dut.sys_clk)
            self.cycle += 1
            if int(u.s_udp_valid.value) and int(u.s_udp_ready.value):   # packets into the block
                if first:
                    w = int(u.s_udp_data.value)
                    self.blk_in[w & 0xFF] += 1
                first = bool(int(u.s_udp_last.value))

    def activity(self):
        self.last_act = self.cycle

    def idle(self) -> bool:
        return self.core.idle() and self.cycle - self.last_act > 256

    async def reset(self):
        self.dut.sys_rst.value = 1
        self.dut.eth_rst.value = 1
        await Timer(200, unit="ns")
        self.dut.sys_rst.value = 0
        self.dut.eth_rst.value = 0
        for _ in range(20):
            await RisingEdge(self.dut.sys_clk)

    async def client(self, mode: str, n: int, seed: int, timeout: float = 2.0) -> dict:
        d0 = self.core.descriptors
        c0 = (self.phy.stats["frames_cut"], self.phy.stats["bytes_lost"], int(self.dut.drop_pkts.value))

        def diag() -> str:
            d, c = self.dut, self.core
            sig = {n: int(getattr(d, n).value) for n in ("cmd_valid", "cmd_ready", "cpl_valid", "cpl_ready",
                                                         "hrdq_valid", "hrdq_ready", "hrdd_valid", "hwr_valid",
                                                         "hwr_ready", "tx_valid", "rx_valid", "err_pkts", "stray_cpls")}
            return (f"core: pending {len(c.pending)} busy {c.busy} descriptors {c.descriptors} queues cpl "
                    f"{len(c.cpl.queue)} hwr {len(c.hwr.queue)} hrdq {len(c.hrdq.queue)}; signals {sig}; "
                    f"last activity {self.last_act}")

        res = await run_client(self, mode, n, seed, timeout, ["--nlba", str(NLBA), "--page", str(PAGE), "--nslot",
                                                              str(NSLOT), "--slot-bytes", str(SLOT_BYTES)], diag)
        res["descriptors"] = self.core.descriptors - d0
        st = self.phy.stats
        res["frames_cut"], res["bytes_lost"] = st["frames_cut"] - c0[0], st["bytes_lost"] - c0[1]
        res["drop_pkts"] = int(self.dut.drop_pkts.value) - c0[2]
        self.dut._log.info("%s %d: %s, phy %s, block took %s", mode, n, res, dict(st), dict(self.blk_in))
        if self.phy.diag:
            self.dut._log.info("first bytes lost (cycle, byte, frame bytes, signals): %s", self.phy.diag[:4])
        return res

    async def probe(self, pkt: bytes, max_cycles: int = 200_000) -> bytes:
        """One datagram from a socket of its own; returns the first reply."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        s.sendto(pkt, ("127.0.0.1", self.phy.port))
        c0 = self.cycle
        try:
            while self.cycle - c0 < max_cycles:
                for _ in range(64):
                    await RisingEdge(self.dut.sys_clk)
                try:
                    return s.recvfrom(4096)[0]
                except BlockingIOError:
                    pass
        finally:
            s.close()
        raise AssertionError(f"no reply to {pkt.hex()} within {max_cycles} cycles")


def seed_of(default: int) -> int:
    return int(os.environ.get("ATS_SEED", default))


@cocotb.test()
async def mix_clean(dut):
    """Random commands from the UDP client through LiteEth and the block; no faults, no retries."""
    tb = TB(dut, random.Random(seed_of(1)))
    await tb.reset()
    r = await tb.client("mix", 30, seed_of(1), timeout=30.0)
    assert r["done"] == 30 and r["descriptors"] == 30, r           # every command reached the core once
    # no faults in the model: no frame cut by the MAC (the PHY cannot wait), no retry, no ERROR
    assert r["frames_cut"] == 0 and r["retries"] == 0 and r["drop_pkts"] == 0, r
    assert int(dut.stray_cpls.value) == 0 and int(dut.err_pkts.value) == 0
    assert tb.phy.stats["arp"] >= 1


@cocotb.test()
async def soc_core(dut):
    """The whole board SoC's situation on the link alone: a core that takes 0.5k-20k cycles per
    command (random order) and writes READ data as unbroken 1,024-word bursts, random backpressure
    on its other ports, reads and writes in flight together, so 4 KiB replies go out and write data
    and SUBMITs come in while the core writes a page into the buffer. The PHY cannot wait: no frame
    may be cut, no command retried (the client's timeout, 30 s, is far above any latency here)."""
    tb = TB(dut, random.Random(seed_of(5)), pause=0.3, hwr_burst=True, lat=(500, 20_000))
    await tb.reset()
    n = int(os.environ.get("ATS_BOARD_SOC_CORE_N", "40"))
    r = await tb.client("mix", n, seed_of(5), timeout=30.0)
    assert r["done"] == n and r["descriptors"] == n, r
    assert r["write"] >= n // 4 and r["read"] >= n // 4, r                 # both directions at once
    assert r["frames_cut"] == 0 and r["bytes_lost"] == 0, r
    assert r["retries"] == 0 and r["drop_pkts"] == 0 and int(dut.err_pkts.value) == 0, r
    assert int(dut.stray_cpls.value) == 0


@cocotb.test()
async def short_frames(dut):
    """Datagrams whose frames the host pads to Ethernet's 60 bytes: the block must see the UDP
    length, not the padding (a 12-byte DATA for a free slot is ERROR STALE, not BAD_LEN); an
    RFLUSH with a one-range list (a 16-byte DATA) completes with the range's block count."""
    tb = TB(dut, random.Random(seed_of(4)))
    await tb.reset()
    data = struct.pack("<BBBBI", 0x02, 0, 0, 1, 7) + b"\xAA\xBB\xCC\xDD"
    r = await tb.probe(data)
    assert r == struct.pack("<BBBBII", 0x8F, 0, 7, 1, 7, struct.unpack_from("<I", data)[0]), r.hex()
    # RFLUSH, slot 1, seq 9: range (lba 5, 3 blocks) as write data, aux_buf
    sub = struct.pack("<BBBBIIHHBBBBHHII", 0x01, 1, 0, 1, 9, 0, 8, 0, OP_RFLUSH, 0, 0, 0x40, 0, 0, 0, 0)
    tb.phy.clients.clear()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.setblocking(False)
    s.sendto(sub, ("127.0.0.1", tb.phy.port))
    s.sendto(struct.pack("<BBBBI", 0x02, 1, 0, 1, 9) + struct.pack("<II", 5, (2 << 16) | 0), ("127.0.0.1", tb.phy.port))
    got = None
    for _ in range(3000):
        for _ in range(64):
            await RisingEdge(dut.sys_clk)
        try:
            got = s.recvfrom(4096)[0]
            break
        except BlockingIOError:
            pass
    s.close()
    assert got == struct.pack("<BBBBII", 0x81, 1, 0, 1, 9, 3), got
    assert int(dut.err_pkts.value) == 1 and int(dut.stray_cpls.value) == 0


@cocotb.test()
async def mix_lossy(dut):
    """The same with datagrams dropped, duplicated and delayed (reordered) in both directions."""
    tb = TB(dut, random.Random(seed_of(2)), drop=0.05, dup=0.05, delay=3000)
    await tb.reset()
    r = await tb.client("mix", 24, seed_of(2), timeout=1.0)
    assert r["done"] == 24 and r["descriptors"] == 24, r           # exactly once despite duplicates
    assert r["retries"] > 0 and tb.phy.stats["dropped"] > 0 and tb.phy.stats["duplicated"] > 0, (r, tb.phy.stats)
    assert r["frames_cut"] == 0, r            # the model's drops are whole datagrams; the MAC cuts none
    assert int(dut.stray_cpls.value) == 0


@cocotb.test()
async def throughput(dut):
    """One-page WRITEs then READs with 4 in flight, no backpressure from the core model: MB/s of
    data in simulated time at 75 MHz against the GbE limit."""
    tb = TB(dut, random.Random(seed_of(3)), pause=0)
    await tb.reset()
    n = int(os.environ.get("ATS_BOARD_TPUT_N", "32"))
    out = {}
    for mode in ("wstream", "rstream"):
        # the client's first timeout (wall-clock s): far above a command's time on a loaded machine, so
        # that a retry means a lost frame; the latency bound below is in cycles
        r = await tb.client(mode, n, seed_of(3), timeout=float(os.environ.get("ATS_BOARD_TPUT_TIMEOUT", "30")))
        assert r["done"] == n and r["descriptors"] == n, r
        assert r["frames_cut"] == 0 and r["retries"] == 0, (mode, r)
        # 4 in flight, ~2,700 cycles of wire a command: a command waits for at most the three others
        # (a lowest-slot-first transmit starved the highest slot: 86,903 cycles, then a retry)
        assert r["max_latency"] < 30_000, (mode, r)
        mbs = n * PAGE / (r["busy_cycles"] / SYS_HZ) / 1e6
        # a retry (a frame the device dropped) costs the client's wall-clock timeout, during which
        # the simulation stops: the figure is of the cycles run, retries are reported beside it
        out[mode] = dict(commands=n, bytes=n * PAGE, cycles=r["busy_cycles"], mb_s=round(mbs, 1),
                         max_latency_cycles=r["max_latency"], retries=r["retries"], resync=r["resync"],
                         frames_cut=r["frames_cut"], drop_pkts=r["drop_pkts"])
    dut._log.info("throughput: %s", out)
    path = Path(os.environ.get("ATS_BOARD_OUT", ROOT / "build" / "sim_board")) / "throughput.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")


def _build_sources() -> list[Path]:
    sys.path.insert(0, str(HERE))
    import gen_hostlink
    from atstb.filelist import block_sources
    out = ROOT / "build" / "sim_board"
    depth = int(os.environ.get("ATS_BOARD_RX_CDC_DEPTH", "32"))     # experiments only (README)
    tmp = gen_hostlink.generate(out / "gen_tmp", depth)
    v = out / ("board_hostlink.v" if depth == 32 else f"board_hostlink_rx{depth}.v")
    if not v.exists() or v.read_bytes() != tmp.read_bytes():   # same text: no rebuild
        v.write_bytes(tmp.read_bytes())
    src = os.environ.get("ATS_UDP_HOST_SRC")          # another copy of ats_udp_host.sv (old / mutant checks)
    return [v] + list(block_sources("ats_udp_host", replace={"ats_udp_host.sv": Path(src).resolve()} if src else None))


@pytest.mark.parametrize("case", ["all"])
def test_board_hostlink(case):
    from atstb.runner import run
    run(toplevel="board_hostlink", sources=_build_sources(), test_module="test_board_hostlink", test_dir=HERE,
        build_key=("default" if os.environ.get("ATS_BOARD_RX_CDC_DEPTH", "32") == "32"
                   else f"rx{os.environ['ATS_BOARD_RX_CDC_DEPTH']}")
        + ("_" + Path(os.environ["ATS_UDP_HOST_SRC"]).parent.name if os.environ.get("ATS_UDP_HOST_SRC") else ""),
        public={"ats_udp_host": ["s_udp_valid", "s_udp_ready", "s_udp_last", "s_udp_data", "rx_q", "rq_cnt_q", "tx_q",
                                 "s_hwr_valid", "s_hwr_ready"]},
        testcase=os.environ.get("ATS_BOARD_CASES", "short_frames,mix_clean,soc_core,mix_lossy,throughput").split(","))
