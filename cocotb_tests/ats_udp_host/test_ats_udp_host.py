"""ats_udp_host: the UDP host link against a host-side client model, a core model and a lossy network.

References, written from docs/host-port.md "UDP host link" and rtl/hostlink/README.md, not from the
RTL: `Client` is a host that speaks the protocol (slots, sequence numbers, chunking, retries on
timeout) and keeps its own copy of every LBA it wrote (the data a READ must return); `CoreModel`
executes the descriptors the block hands over against a Python LBA store, reading WRITE data and
writing READ data through the block's host-memory ports, completing in random order. `Network`
drops, duplicates and delays (reorders) packets in both directions at seeded rates. Checked: every
command completes exactly once with the status, result and data the client expects; the core sees
each command exactly once with the submitted fields; malformed packets get the documented ERROR.
Random idle / backpressure on every stream (atstb.streams); the sinks check stream stability.
See rtl/hostlink/testplan.md.
"""
from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, heavy_pause, random_pause

HERE = Path(__file__).parent
NSLOT, SLOT_BYTES, PAGE = 4, 8192, 4096
CHUNK = 1024
T_SUBMIT, T_DATA, T_CPL, T_RDATA, T_STATE, T_ERROR = 0x01, 0x02, 0x81, 0x82, 0x83, 0x8F
E_SHORT, E_TYPE, E_LEN, E_SLOT, E_FIELD, E_BUSY, E_STALE = range(1, 8)
OP_READ, OP_WRITE, OP_FLUSH, OP_IDENTIFY = 0, 1, 6, 9
STS_OK, STS_BAD_OP, STS_BAD_LBA = 0x00, 0x01, 0x03
NUM_LBA = 64
HOST_IP, HOST_PORT, DEV_PORT = 0x0A000002, 50000, 16724
UDP_FIELDS = ["src_port", "dst_port", "ip_address", "length", "data", "last", "last_be", "error"]


# ------------------------------------------------------------------ packet formats (the document's)
def submit_pkt(slot, seq, op, lba=0, nlb=0, wr_len=0, rd_len=0, mask=0, txid=0, flags=0, attr=0,
               prio=0, aux=0, aux_buf=0, ver=1):
    ap = attr | (prio << 2) | (aux_buf << 6)
    return struct.pack("<BBBBIIHHBBBBHHII", T_SUBMIT, slot, 0, ver, seq, mask, wr_len, rd_len,
                       op, txid, flags, ap, nlb, (lba >> 32) & 0xFFFF, lba & 0xFFFFFFFF, aux)


def data_pkt(slot, seq, chunk, payload):
    return struct.pack("<BBBBI", T_DATA, slot, chunk, 1, seq) + payload


def parse(pkt: bytes) -> dict:
    t, slot, arg, ver, seq = struct.unpack_from("<BBBBI", pkt)
    d = dict(type=t, slot=slot, arg=arg, ver=ver, seq=seq, len=len(pkt))
    if t in (T_CPL, T_STATE, T_ERROR):
        assert len(pkt) == 12, f"{t:#x} packet of {len(pkt)} bytes"
        d["w2"] = struct.unpack_from("<I", pkt, 8)[0]
    elif t == T_RDATA:
        d["payload"] = pkt[8:]
    else:
        raise AssertionError(f"device sent type {t:#x}")
    assert ver == 1
    return d


def chunks(n_bytes: int) -> int:
    return (n_bytes + CHUNK - 1) // CHUNK


# ------------------------------------------------------------------ DUT ends
class WireRx:
    """The receive side as the board has it: a PHY that cannot wait. Packets arrive one 32-bit word
    every `rate` cycles with `gap` word times between packets (the Ethernet, IP and UDP headers,
    preamble and gap), into a FIFO of `depth` words (LiteEth's receive buffering) that feeds
    `s_udp`; a word that finds the FIFO full is lost (`overflow`), which must never happen."""

    def __init__(self, dut, rate=2, gap=16, depth=16):
        self.dut, self.rate, self.gap, self.depth = dut, rate, gap, depth
        self.pkts: list[list[dict]] = []
        self.fifo: list[dict] = []
        self.overflow = 0
        self.beats = 0
        for f in UDP_FIELDS:
            getattr(dut, f"s_udp_{f}").value = 0
        dut.s_udp_valid.value = 0
        cocotb.start_soon(self._run())

    def idle(self) -> bool:
        return not self.pkts and not self.fifo

    async def _run(self):
        d = self.dut
        cur: list[dict] = []
        t = 0
        while True:
            await RisingEdge(d.clk)
            if int(d.s_udp_valid.value) and int(d.s_udp_ready.value):
                self.fifo.pop(0)
                self.beats += 1
            t += 1
            if t >= self.rate:
                t = 0
                if not cur and self.pkts:
                    cur = [None] * self.gap + self.pkts.pop(0)     # None: header / gap word times
                if cur:
                    w = cur.pop(0)
                    if w is not None:
                        if len(self.fifo) >= self.depth:
                            self.overflow += 1
                            raise AssertionError(f"a word lost at the PHY (FIFO of {self.depth} full): the block "
                                                 "held s_udp_ready low too long")
                        else:
                            self.fifo.append(w)
            if self.fifo:
                for k, v in self.fifo[0].items():
                    getattr(d, f"s_udp_{k}").value = v
            d.s_udp_valid.value = int(bool(self.fifo))


class TB:
    def __init__(self, dut, rng: random.Random, pause=0.3, wire: WireRx | None = None, hwr_burst=False,
                 tx_pause=None, cmd_pause=None):
        self.dut, self.rng = dut, rng
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        p = lambda: random_pause(random.Random(rng.random()), pause)
        self.wire = wire
        self.rx = None if wire else StreamSource(dut, "s_udp", dut.clk, UDP_FIELDS, p())
        self.tx = StreamSink(dut, "m_udp", dut.clk, UDP_FIELDS, tx_pause if tx_pause is not None else p())
        self.cmd = StreamSink(dut, "m_cmd", dut.clk, ["op", "tag", "lba", "nlb", "txid", "flags", "attr",
                                                      "prio", "dptr", "aux"],
                              cmd_pause if cmd_pause is not None else p())
        self.cpl = StreamSource(dut, "s_cpl", dut.clk, ["tag", "status", "result"], p())
        self.hrdq = StreamSource(dut, "s_hrdq", dut.clk, ["addr", "len"], p())
        self.hrdd = StreamSink(dut, "m_hrdd", dut.clk, ["data", "last"], p())
        # hwr_burst: the core writes READ data in unbroken bursts (the SoC's core: a word a cycle)
        self.hwr = StreamSource(dut, "s_hwr", dut.clk, ["addr", "data", "last"], None if hwr_burst else p())
        self.cycle = 0
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def send(self, pkt: bytes, src_port=HOST_PORT, ip=HOST_IP, error_beat=None):
        """One UDP packet into the block: 32-bit beats, byte 0 in data[7:0], last_be one-hot."""
        n = (len(pkt) + 3) // 4
        beats = []
        for i in range(n):
            w = pkt[4 * i:4 * i + 4]
            last = i == n - 1
            be = (1 << (len(w) - 1)) if last else 0
            beats.append(dict(src_port=src_port, dst_port=DEV_PORT, ip_address=ip, length=len(pkt),
                              data=int.from_bytes(w.ljust(4, b"\0"), "little"), last=int(last),
                              last_be=be, error=int(error_beat == i)))
        if self.wire:
            self.wire.pkts.append(beats)
        else:
            for b in beats:
                self.rx.send_nowait(**b)

    async def recv(self, timeout=20000) -> tuple[bytes, dict]:
        """One packet out of the block: its bytes and sideband (checked constant over the packet)."""
        words, side = [], None
        while True:
            b = await self.tx.recv(timeout)
            s = {k: b[k] for k in ("src_port", "dst_port", "ip_address", "length")}
            assert side is None or s == side, f"sideband changed inside a packet: {side} -> {s}"
            side = s
            assert b["error"] == 0
            words.append(b["data"])
            # last_be 0 on every beat but the last (LiteEth's MAC in the PHY's clock ends the frame
            # at the first byte whose last_be bit is set)
            assert b["last_be"] == (0b1000 if b["last"] else 0), f"last_be {b['last_be']:#06b} on beat {len(words) - 1}"
            if b["last"]:
                break
        pkt = b"".join(w.to_bytes(4, "little") for w in words)
        assert side["length"] == len(pkt), f"length {side['length']} for {len(pkt)} bytes"
        assert side["src_port"] == DEV_PORT
        return pkt, side


# ------------------------------------------------------------------ the core (reference executor)
class CoreModel:
    """Takes descriptors, executes them in random order against a Python LBA store."""

    def __init__(self, tb: TB, client: "Client", rng: random.Random, hold=False):
        self.tb, self.client, self.rng = tb, client, rng
        self.store: dict[int, bytes] = {}
        self.pending: list[dict] = []
        self.executed: set[tuple[int, int]] = set()
        self.taken: list[int] = []            # slots in the order their descriptors were taken
        self.hold = hold                      # malformed test: keep commands until released
        cocotb.start_soon(self._take())
        cocotb.start_soon(self._exec())

    async def _take(self):
        while True:
            d = await self.tb.cmd.recv(10 ** 9)
            slot = d["tag"]
            assert slot < NSLOT, d
            c = self.client.active.get(slot)
            assert c is not None, f"descriptor for slot {slot} with no command in it: {d}"
            key = (slot, c["seq"])
            assert key not in self.executed, f"command executed twice: slot {slot} seq {c['seq']}"
            self.executed.add(key)
            self.taken.append(slot)
            for f in ("op", "lba", "nlb", "txid", "flags", "attr", "prio"):
                assert d[f] == c[f], f"descriptor field {f}: {d[f]:#x} != {c[f]:#x}"
            assert d["dptr"] == slot * SLOT_BYTES
            assert d["aux"] == (slot * SLOT_BYTES + c["aux"] if c["aux_buf"] else c["aux"])
            c["executions"] += 1
            self.pending.append(d)

    async def _exec(self):
        while True:
            await RisingEdge(self.tb.dut.clk)
            if not self.pending or self.hold or self.rng.random() < 0.9:
                continue
            d = self.pending.pop(self.rng.randrange(len(self.pending)))
            op, lba, n = d["op"], d["lba"], d["nlb"] + 1
            status, result = STS_OK, 0
            if op in (OP_READ, OP_WRITE) and lba + n > NUM_LBA:
                status = STS_BAD_LBA
            elif op == OP_WRITE:
                self.tb.hrdq.send_nowait(addr=d["dptr"], len=n * PAGE)
                words = []
                while True:
                    b = await self.tb.hrdd.recv(10 ** 6)
                    words.append(b["data"])
                    if b["last"]:
                        break
                assert len(words) == n * PAGE // 4
                data = b"".join(w.to_bytes(4, "little") for w in words)
                for i in range(n):
                    self.store[lba + i] = data[i * PAGE:(i + 1) * PAGE]
                result = n
            elif op == OP_READ:
                for i in range(n):
                    page = self.store.get(lba + i, bytes(PAGE))
                    for k in range(PAGE // 4):
                        self.tb.hwr.send_nowait(addr=d["dptr"] + i * PAGE, data=int.from_bytes(page[4 * k:4 * k + 4], "little"),
                                                last=int(k == PAGE // 4 - 1))
                await self.tb.hwr.wait_idle()
                result = n
            elif op == OP_IDENTIFY:
                for k in range(128):
                    self.tb.hwr.send_nowait(addr=d["dptr"], data=(0x41545344 if k == 0 else k * 0x01010101) & 0xFFFFFFFF,
                                            last=int(k == 127))
                await self.tb.hwr.wait_idle()
                result = 64
            elif op == OP_FLUSH:
                pass
            else:
                status = STS_BAD_OP
            self.tb.cpl.send_nowait(tag=d["tag"], status=status, result=result)


# ------------------------------------------------------------------ host side and network
class Network:
    """Delivers packets with drops, duplicates and random delays (reordering), seeded."""

    def __init__(self, tb: TB, rng, drop=0.0, dup=0.0, delay=(0, 0)):
        self.tb, self.rng, self.drop, self.dup, self.delay = tb, rng, drop, dup, delay
        self.to_dev: list[tuple[int, int, bytes]] = []
        self.to_host: list[tuple[int, int, bytes]] = []
        self.n = 0
        self.host_rx: list[bytes] = []
        self.stats = dict(dropped=0, duplicated=0)
        cocotb.start_soon(self._dev_side())
        cocotb.start_soon(self._from_dev())

    def _sched(self, q, pkt):
        copies = 1
        if self.rng.random() < self.drop:
            self.stats["dropped"] += 1
            copies = 0
        elif self.rng.random() < self.dup:
            self.stats["duplicated"] += 1
            copies = 2
        for _ in range(copies):
            self.n += 1
            q.append((self.tb.cycle + self.rng.randint(*self.delay), self.n, pkt))

    def host_send(self, pkt: bytes):
        self._sched(self.to_dev, pkt)

    async def _dev_side(self):
        while True:
            await RisingEdge(self.tb.dut.clk)
            now = self.tb.cycle
            due = sorted(x for x in self.to_dev if x[0] <= now)
            for x in due:
                self.to_dev.remove(x)
                self.tb.send(x[2])
            due = sorted(x for x in self.to_host if x[0] <= now)
            for x in due:
                self.to_host.remove(x)
                self.host_rx.append(x[2])

    async def _from_dev(self):
        while True:
            pkt, side = await self.tb.recv(10 ** 9)
            assert side["ip_address"] == HOST_IP and side["dst_port"] == HOST_PORT, side
            self._sched(self.to_host, pkt)


class Client:
    """The host: NSLOT slots, a sequence number per command, retries on timeout. Its own copy of
    every LBA it wrote is the reference for READ data."""

    def __init__(self, tb: TB, net: Network, rng, timeout=6000):
        self.tb, self.net, self.rng, self.timeout = tb, net, rng, timeout
        self.seq = rng.randrange(1 << 32)
        self.active: dict[int, dict] = {}         # slot -> command in flight
        self.ref: dict[int, bytes] = {}           # lba -> data (what a READ must return)
        self.done: list[dict] = []
        self.retries = 0
        self.busy_lbas: set[int] = set()
        cocotb.start_soon(self._rx())

    def submit(self, slot, cmd):
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        c = dict(cmd, seq=self.seq, slot=slot, got=None, rdata={}, executions=0, sent_at=self.tb.cycle)
        self.active[slot] = c
        self._send_all(c, mask=0)
        self._send_data(c, range(chunks(len(c["wdata"]))))

    def _send_all(self, c, mask):
        self.net.host_send(submit_pkt(c["slot"], c["seq"], c["op"], c["lba"], c["nlb"], len(c["wdata"]),
                                      c["rd_len"], mask, c["txid"], c["flags"], c["attr"], c["prio"],
                                      c["aux"], c["aux_buf"]))

    def _send_data(self, c, which):
        for k in which:
            self.net.host_send(data_pkt(c["slot"], c["seq"], k, c["wdata"][k * CHUNK:(k + 1) * CHUNK]))

    async def _rx(self):
        while True:
            await RisingEdge(self.tb.dut.clk)
            while self.net.host_rx:
                self._handle(parse(self.net.host_rx.pop(0)))

    def _handle(self, p):
        c = self.active.get(p["slot"])
        assert self.timeout < 10 ** 8 or p["type"] != T_ERROR, f"error in a lossless run: {p}"
        if c is None or c["seq"] != p["seq"]:
            return                                # an old command's late packet
        if p["type"] == T_ERROR:
            assert self.timeout < 10 ** 8, f"error in a lossless run: {p}"
            assert p["arg"] == E_STALE, f"error {p['arg']} for a valid packet: {p}"
            return                                # late duplicate data
        if p["type"] == T_STATE:
            if p["arg"] == 1:                     # loading: resend the chunks it has not got
                missing = [k for k in range(chunks(len(c["wdata"]))) if not (p["w2"] >> k) & 1]
                self._send_data(c, missing)
            else:
                assert p["arg"] == 2, p
            return
        if p["type"] == T_RDATA:
            c["rdata"][p["arg"]] = p["payload"]
            return
        c["got"] = (p["arg"], p["w2"])            # CPL
        self._maybe_done(c)

    def _maybe_done(self, c):
        if c["got"] is None:
            return
        n = chunks(c["rd_len"])
        missing = [k for k in range(n) if k not in c["rdata"]]
        if missing:
            return                                # the timeout asks for them
        data = b"".join(c["rdata"][k] for k in range(n))
        assert len(data) == c["rd_len"]
        status, result = c["got"]
        assert (status, result) == (c["exp_status"], c["exp_result"]), \
            f"slot {c['slot']} op {c['op']}: ({status:#x}, {result}) != ({c['exp_status']:#x}, {c['exp_result']})"
        if c["op"] == OP_READ and status == STS_OK:
            for i in range(c["nlb"] + 1):
                exp = self.ref.get(c["lba"] + i, bytes(PAGE))
                assert data[i * PAGE:(i + 1) * PAGE] == exp, f"READ lba {c['lba'] + i}: data differ"
        if c["op"] == OP_WRITE and status == STS_OK:
            for i in range(c["nlb"] + 1):
                self.ref[c["lba"] + i] = c["wdata"][i * PAGE:(i + 1) * PAGE]
        if c["op"] == OP_IDENTIFY:
            assert struct.unpack_from("<I", data)[0] == 0x41545344
        for i in range(c["nlb"] + 1):
            self.busy_lbas.discard(c["lba"] + i)
        del self.active[c["slot"]]
        self.done.append(c)

    async def tick_timeouts(self):
        while True:
            for _ in range(200):
                await RisingEdge(self.tb.dut.clk)
            for c in list(self.active.values()):
                if self.tb.cycle - c["sent_at"] > self.timeout:
                    self.retries += 1
                    c["sent_at"] = self.tb.cycle
                    n = chunks(c["rd_len"])
                    mask = sum(1 << k for k in range(n) if k not in c["rdata"])
                    self._send_all(c, mask)       # the device answers by its state


def random_cmd(rng, busy: set[int]) -> dict:
    c = dict(op=OP_FLUSH, lba=0, nlb=0, wdata=b"", rd_len=0, txid=0, flags=0, attr=0, prio=0, aux=0,
             aux_buf=0, exp_status=STS_OK, exp_result=0)
    k = rng.random()
    if k < 0.75:
        op = OP_WRITE if rng.random() < 0.5 else OP_READ
        nlb = rng.randint(0, SLOT_BYTES // PAGE - 1)
        for _ in range(50):
            lba = rng.randrange(NUM_LBA - nlb)
            if not any(lba + i in busy for i in range(nlb + 1)):
                break
        else:
            return c
        if rng.random() < 0.05:
            lba = NUM_LBA - 1 + rng.randint(0, 4)      # past the end: BAD_LBA from the core, nothing moved
            nlb = 1
            c["exp_status"] = STS_BAD_LBA
        else:
            busy.update(lba + i for i in range(nlb + 1))
            c["exp_result"] = nlb + 1
        c.update(op=op, lba=lba, nlb=nlb, flags=rng.choice([0, 1]), prio=rng.randint(0, 3),
                 attr=rng.randint(0, 2), txid=rng.choice([0, 0, 5]))
        if op == OP_WRITE:
            c["wdata"] = rng.randbytes((nlb + 1) * PAGE)
        else:
            c["rd_len"] = (nlb + 1) * PAGE
            if c["exp_status"] != STS_OK:
                c["rd_len"] = 0
    elif k < 0.85:
        c.update(op=OP_IDENTIFY, rd_len=512, exp_result=64, aux=0x1234)
    elif k < 0.93:
        c.update(aux=rng.randrange(1 << 32), aux_buf=rng.randint(0, 1))        # FLUSH
    else:
        c.update(op=12, exp_status=STS_BAD_OP)                                  # reserved opcode
    return c


async def workload(tb, client, rng, n_cmds, max_cycles):
    cocotb.start_soon(client.tick_timeouts())
    issued = 0
    while len(client.done) < n_cmds:
        await RisingEdge(tb.dut.clk)
        if tb.cycle >= max_cycles and os.environ.get("ATS_UDP_DEBUG"):
            u = tb.dut
            for i in range(NSLOT):
                dut_log = f"slot {i}: st {int(u.st_q[i].value)} got {int(u.got_q[i].value):#x} wlen {int(u.wlen_q[i].value)} seq {int(u.seq_q[i].value):#x}"
                u._log.info(dut_log)
            u._log.info(f"iss {int(u.iss_q.value):#x} cmd_v {int(u.cmd_v_q.value)} rx {int(u.rx_q.value)} tx {int(u.tx_q.value)}")
        assert tb.cycle < max_cycles, f"hang: {len(client.done)} of {n_cmds} done, rxq {len(tb.rx.queue) if tb.rx else len(tb.wire.fifo)} txq {len(tb.tx.queue)} hrdq {len(tb.hrdq.queue)} hwr {len(tb.hwr.queue)} cmdq {len(tb.cmd.queue)} cpl {len(tb.cpl.queue)} hrdd {len(tb.hrdd.queue)} done ops {[c['op'] for c in client.done]}, active " + "; ".join(
            f"slot {c['slot']} op {c['op']} nlb {c['nlb']} wr {len(c['wdata'])} rd {c['rd_len']} got {c['got']} rdata {sorted(c['rdata'])} x{c['executions']}" for c in client.active.values())
        if issued < n_cmds and rng.random() < 0.05:
            free = [s for s in range(NSLOT) if s not in client.active]
            if free:
                client.submit(rng.choice(free), random_cmd(rng, client.busy_lbas))
                issued += 1
    for c in client.done:
        assert c["executions"] == 1, f"slot {c['slot']} seq {c['seq']}: executed {c['executions']} times"


def seed_of(default: int) -> int:
    return int(os.environ.get("ATS_SEED", default))


@cocotb.test()
async def clean(dut):
    """No loss: a random workload through the link, every command once, data compared."""
    rng = random.Random(seed_of(1))
    tb = TB(dut, rng)
    await tb.reset()
    net = Network(tb, rng)
    client = Client(tb, net, rng, timeout=10 ** 8)
    CoreModel(tb, client, rng)
    await workload(tb, client, rng, 30, 400_000)
    assert client.retries == 0
    assert int(dut.err_pkts.value) == 0 and int(dut.stray_cpls.value) == 0
    dut._log.info("clean: %d commands", len(client.done))


async def lossy_run(dut, seed, n_cmds, drop, dup, delay):
    rng = random.Random(seed)
    tb = TB(dut, rng)
    await tb.reset()
    net = Network(tb, rng, drop=drop, dup=dup, delay=delay)
    client = Client(tb, net, rng, timeout=4000 + delay[1])
    CoreModel(tb, client, rng)
    await workload(tb, client, rng, n_cmds, 40_000_000)
    assert int(dut.stray_cpls.value) == 0
    dut._log.info("lossy seed %d: %d commands, %d retries, %s, %d error replies", seed, len(client.done),
                  client.retries, net.stats, int(dut.err_pkts.value))
    assert client.retries > 0 and net.stats["dropped"] > 0 and net.stats["duplicated"] > 0


@cocotb.test()
async def lossy(dut):
    """Drops, duplicates and reordering at seeded rates; retries on timeout: still exactly once."""
    await lossy_run(dut, seed_of(11), 400 if os.environ.get("ATS_LONG") else 40, 0.08, 0.08, (0, 600))


@cocotb.test()
async def lossy_reorder(dut):
    """Heavier duplication and reordering (delays up to 3000 cycles, longer than a packet), fewer drops."""
    await lossy_run(dut, seed_of(11) + 1, 300 if os.environ.get("ATS_LONG") else 30, 0.03, 0.25, (0, 3000))


@cocotb.test()
async def malformed(dut):
    """Every malformed form gets its ERROR (code, slot, seq, first word); nothing changes."""
    rng = random.Random(seed_of(3))
    tb = TB(dut, rng)
    await tb.reset()

    class NoClient:
        active: dict = {}
    nc = NoClient()
    core = CoreModel(tb, nc, rng, hold=True)

    async def expect(pkt, t, arg, slot, seq, w2=None, **kw):
        tb.send(pkt, **kw)
        got, side = await tb.recv(5000)
        p = parse(got)
        assert (p["type"], p["arg"], p["slot"], p["seq"]) == (t, arg, slot, seq), (p, t, arg, slot, seq)
        if w2 is not None:
            assert p["w2"] == w2, (hex(p["w2"]), hex(w2))
        assert side["ip_address"] == kw.get("ip", HOST_IP) and side["dst_port"] == kw.get("src_port", HOST_PORT)
        return p

    w0 = lambda pkt: struct.unpack_from("<I", pkt.ljust(4, b"\0"))[0]
    await expect(b"\x01\x00\x00", T_ERROR, E_SHORT, 0, 0, 0)
    await expect(b"\x01\x02\x00\x01\x07", T_ERROR, E_SHORT, 2, 0, 0x01000201)
    p = submit_pkt(1, 5, OP_FLUSH)
    await expect(bytes([0x05]) + p[1:], T_ERROR, E_TYPE, 1, 5, w0(bytes([0x05]) + p[1:]))
    await expect(p[:3] + b"\x02" + p[4:], T_ERROR, E_TYPE, 1, 5)                  # version 2
    await expect(p[:28], T_ERROR, E_LEN, 1, 5)                                       # SUBMIT short of 32
    await expect(p + b"\0\0\0\0", T_ERROR, E_LEN, 1, 5)
    await expect(p + b"\0", T_ERROR, E_LEN, 1, 5)                                    # not a multiple of 4
    await expect(submit_pkt(4, 5, OP_FLUSH), T_ERROR, E_SLOT, 4, 5, src_port=1234, ip=0x0A000063)
    await expect(submit_pkt(200, 5, OP_FLUSH), T_ERROR, E_SLOT, 200, 5)
    await expect(submit_pkt(0, 5, OP_WRITE, wr_len=SLOT_BYTES + 4), T_ERROR, E_FIELD, 0, 5)
    await expect(submit_pkt(0, 5, OP_WRITE, wr_len=6), T_ERROR, E_FIELD, 0, 5)
    await expect(submit_pkt(0, 5, OP_READ, nlb=SLOT_BYTES // PAGE, rd_len=0), T_ERROR, E_FIELD, 0, 5)
    await expect(submit_pkt(0, 5, OP_READ)[:16] + bytes([0, 0, 0, 0x80]) + submit_pkt(0, 5, OP_READ)[20:],
                 T_ERROR, E_FIELD, 0, 5)                                             # reserved ap bit 7
    await expect(data_pkt(0, 5, 0, bytes(CHUNK)), T_ERROR, E_STALE, 0, 5)           # data for a free slot
    await expect(data_pkt(0, 5, 0, b""), T_ERROR, E_LEN, 0, 5)
    await expect(data_pkt(0, 5, 0, bytes(CHUNK + 4)), T_ERROR, E_LEN, 0, 5)
    # a WRITE of two pages, chunk 0 received, then bad and duplicate chunks
    nc.active[2] = dict(op=OP_WRITE, lba=3, nlb=1, txid=0, flags=0, attr=0, prio=0, aux=0, aux_buf=0,
                        seq=100, executions=0)
    wdata = rng.randbytes(2 * PAGE)
    tb.send(submit_pkt(2, 100, OP_WRITE, lba=3, nlb=1, wr_len=2 * PAGE))
    tb.send(data_pkt(2, 100, 0, wdata[:CHUNK]))
    await expect(submit_pkt(2, 100, OP_WRITE, lba=3, nlb=1, wr_len=2 * PAGE), T_STATE, 1, 2, 100, 0b1)
    await expect(data_pkt(2, 100, 0, bytes(CHUNK - 4)), T_ERROR, E_LEN, 2, 100)      # wrong length
    await expect(data_pkt(2, 100, 1, bytes(CHUNK + 4)), T_ERROR, E_LEN, 2, 100)      # too long (not marked)
    await expect(data_pkt(2, 100, 8, bytes(CHUNK)), T_ERROR, E_FIELD, 2, 100)        # chunk past wr_len
    await expect(data_pkt(2, 99, 1, bytes(CHUNK)), T_ERROR, E_STALE, 2, 99)          # other command
    await expect(submit_pkt(2, 99, OP_WRITE, lba=3, nlb=1, wr_len=2 * PAGE), T_ERROR, E_STALE, 2, 99)
    tb.send(data_pkt(2, 100, 0, bytes(CHUNK)))                                       # duplicate, other bytes: ignored
    for k in range(1, 8):
        tb.send(data_pkt(2, 100, k, wdata[k * CHUNK:(k + 1) * CHUNK]))
    d = None
    for _ in range(20000):
        await RisingEdge(dut.clk)
        if core.pending:
            d = core.pending[0]
            break
    assert d is not None and d["tag"] == 2
    await expect(submit_pkt(2, 100, OP_WRITE, lba=3, nlb=1, wr_len=2 * PAGE), T_STATE, 2, 2, 100, 0)
    await expect(submit_pkt(2, 101, OP_FLUSH), T_ERROR, E_BUSY, 2, 101)
    await expect(data_pkt(2, 100, 1, bytes(CHUNK)), T_ERROR, E_STALE, 2, 100)        # data of a running command
    # a beat with LiteEth's error bits: dropped without an answer
    tb.send(submit_pkt(3, 1, OP_FLUSH), error_beat=2)
    core.hold = False
    got, _ = await tb.recv(50000)
    p = parse(got)
    assert (p["type"], p["slot"], p["seq"], p["arg"], p["w2"]) == (T_CPL, 2, 100, STS_OK, 2)
    assert core.store[3] + core.store[4] == wdata, "write data corrupted by the bad packets"
    assert core.executed == {(2, 100)}
    # duplicate SUBMIT of a finished command: its CPL again, not executed again
    await expect(submit_pkt(2, 100, OP_WRITE, lba=3, nlb=1, wr_len=2 * PAGE), T_CPL, STS_OK, 2, 100, 2)
    assert core.executed == {(2, 100)}
    for _ in range(200):
        await RisingEdge(dut.clk)
    assert not tb.tx.queue and not tb.cmd.queue
    assert int(dut.err_pkts.value) == 23, int(dut.err_pkts.value)


@cocotb.test()
async def no_wait(dut):
    """The PHY cannot wait (WireRx: a word every 2 cycles into a 16-word FIFO): a random workload
    with duplicates and reordering, the core writing READ data in unbroken bursts and the
    transmitter slowed by long stalls (replies queue up). No word may find the FIFO full (the
    block takes a beat every cycle but 4 per packet); every command exactly once, data compared;
    a packet whose reply finds the queue full is dropped whole and the host's retry recovers it."""
    rng = random.Random(seed_of(21))
    wire = WireRx(dut, rate=2, gap=16, depth=16)
    tb = TB(dut, rng, wire=wire, hwr_burst=True, tx_pause=heavy_pause(random.Random(rng.random()), 60))
    await tb.reset()
    net = Network(tb, rng, drop=0.0, dup=0.15, delay=(0, 2000))
    client = Client(tb, net, rng, timeout=20000)
    CoreModel(tb, client, rng)
    await workload(tb, client, rng, 300 if os.environ.get("ATS_LONG") else 30, 40_000_000)
    dut._log.info("no_wait: %d commands, %d retries, %s, %d beats, %d error replies, %d dropped", len(client.done),
                  client.retries, net.stats, wire.beats, int(dut.err_pkts.value), int(dut.drop_pkts.value))
    assert wire.overflow == 0, f"{wire.overflow} words lost: the block held s_udp_ready low too long"
    assert int(dut.stray_cpls.value) == 0 and net.stats["duplicated"] > 0


@cocotb.test()
async def reply_queue(dut):
    """Replies (STATE / ERROR) against a busy transmitter (README "Receive", "Transmit"): a STATE
    goes out after the RDATA chunk under way, not after the slot's whole send; with the
    transmitter stalled, one ERROR in the transmitter and two queued, every further packet that
    needs a reply is dropped whole (drop_pkts) while the receiver keeps taking beats (no word
    lost at the PHY); after the stall exactly the first three ERRORs come, in order."""
    rng = random.Random(seed_of(22))
    hold = [False]

    def gate():
        while True:
            yield hold[0]
    wire = WireRx(dut, rate=2, gap=16, depth=16)
    tb = TB(dut, rng, pause=0.0, wire=wire, tx_pause=gate())
    await tb.reset()

    class NoClient:
        active: dict = {}
    nc = NoClient()
    core = CoreModel(tb, nc, rng)
    base = dict(txid=0, flags=0, attr=0, prio=0, aux=0, aux_buf=0, executions=0)
    # slot 1: a WRITE loading (chunk 0 of 4 received); slot 0: a two-page READ
    tb.send(submit_pkt(1, 50, OP_WRITE, lba=9, wr_len=PAGE))
    tb.send(data_pkt(1, 50, 0, rng.randbytes(CHUNK)))
    core.store[20], core.store[21] = rng.randbytes(PAGE), rng.randbytes(PAGE)
    nc.active[0] = dict(base, op=OP_READ, lba=20, nlb=1, seq=60)
    hold[0] = True
    tb.send(submit_pkt(0, 60, OP_READ, lba=20, nlb=1, rd_len=2 * PAGE))
    for _ in range(20000):                         # until slot 0's first RDATA waits in the transmitter
        await RisingEdge(dut.clk)
        if int(dut.m_udp_valid.value):
            break
    assert int(dut.m_udp_valid.value)
    # again, twice, from two other hosts: STATE loading (chunk 0 got) to each, both before RDATA chunk 1
    others = [(0x0A000063, 41000), (0x0A000064, 42000)]
    for ip, port in others:
        tb.send(submit_pkt(1, 50, OP_WRITE, lba=9, wr_len=PAGE), src_port=port, ip=ip)
    for _ in range(200):
        await RisingEdge(dut.clk)
    hold[0] = False
    rx = [await tb.recv(20000) for _ in range(11)]
    got = [parse(x[0]) for x in rx]
    dest = [(x[1]["ip_address"], x[1]["dst_port"]) for x in rx]
    order = [(p["type"], p["slot"], p["arg"]) for p in got]
    assert order == [(T_RDATA, 0, 0), (T_STATE, 1, 1), (T_STATE, 1, 1)] + [(T_RDATA, 0, k) for k in range(1, 8)] \
        + [(T_CPL, 0, STS_OK)], order
    assert all(p["w2"] == 0b1 and p["seq"] == 50 for p in got[1:3])
    # each reply to its sender, the paused READ's packets back to the READ's host
    assert dest == [(HOST_IP, HOST_PORT)] + others + [(HOST_IP, HOST_PORT)] * 8, dest
    assert b"".join(p["payload"] for p in got if p["type"] == T_RDATA) == core.store[20] + core.store[21]
    # the transmitter stalled and idle: 40 packets that each need an ERROR (a DATA for a free slot)
    e0, d0 = int(dut.err_pkts.value), int(dut.drop_pkts.value)
    hold[0] = True
    for k in range(40):
        tb.send(data_pkt(2, 1000 + k, 0, bytes(4)))
    for _ in range(40 * 80):
        await RisingEdge(dut.clk)
        if wire.idle() and int(dut.drop_pkts.value) - d0 == 37:
            break
    assert wire.overflow == 0, f"{wire.overflow} words lost at the PHY"
    assert int(dut.drop_pkts.value) - d0 == 37, int(dut.drop_pkts.value) - d0
    hold[0] = False
    got = [parse((await tb.recv(5000))[0]) for _ in range(3)]
    assert [(p["type"], p["arg"], p["slot"], p["seq"]) for p in got] == [(T_ERROR, E_STALE, 2, 1000 + k) for k in range(3)], got
    for _ in range(500):
        await RisingEdge(dut.clk)
    assert not tb.tx.queue and int(dut.err_pkts.value) - e0 == 3
    assert core.executed == {(0, 60)} and not core.pending                    # the READ, once; slot 1 still loading


@cocotb.test()
async def cmd_order(dut):
    """The host's ordering rule (docs/host-port.md "Order"): a command that must reach the core after
    another is sent only when the other's STATE says running (2). With the core's command port held,
    slot 1's FLUSH is offered and waits; slot 3's FLUSH waits behind it for its turn. A host probing
    slot 3 must not hear "running" before slot 3's descriptor is offered: the round robin (from slot 1)
    would hand a command of slot 2 to the core before slot 3's. The host here follows the rule
    (probes slot 3, sends slot 2's command only on STATE 2 or slot 3's CPL); the core must see the
    commands in the order 1, 3, 2."""
    rng = random.Random(seed_of(23))
    hold = [True]

    def gate():
        while True:
            yield hold[0] or rng.random() < 0.3
    tb = TB(dut, rng, cmd_pause=gate())
    await tb.reset()

    class NoClient:
        active: dict = {}
    nc = NoClient()
    core = CoreModel(tb, nc, rng)
    base = dict(op=OP_FLUSH, lba=0, nlb=0, txid=0, flags=0, attr=0, prio=0, aux=0, aux_buf=0, executions=0)
    nc.active[1] = dict(base, seq=70)
    nc.active[3] = dict(base, seq=71)
    nc.active[2] = dict(base, seq=72)
    tb.send(submit_pkt(1, 70, OP_FLUSH))
    for _ in range(300):                           # slot 1 offered (m_cmd held)
        await RisingEdge(dut.clk)
    assert int(dut.m_cmd_valid.value) and int(dut.m_cmd_tag.value) == 1
    tb.send(submit_pkt(3, 71, OP_FLUSH))
    for _ in range(300):
        await RisingEdge(dut.clk)
    states = []
    released = False
    while True:                                    # probe slot 3 until running or complete
        tb.send(submit_pkt(3, 71, OP_FLUSH))
        p = parse((await tb.recv(20000))[0])
        assert p["slot"] == 3 and p["seq"] == 71, p
        states.append((p["type"], p["arg"]))
        if p["type"] == T_CPL or (p["type"] == T_STATE and p["arg"] == 2):
            break
        assert p["type"] == T_STATE and p["arg"] == 1 and p["w2"] == 0, p      # waiting, no chunks to send
        if not released:
            for _ in range(rng.randint(0, 200)):
                await RisingEdge(dut.clk)
            hold[0] = False                        # the core takes slot 1's, then slot 3's is offered
            released = True
        assert len(states) < 20, states
    tb.send(submit_pkt(2, 72, OP_FLUSH))           # the dependent command
    for _ in range(rng.randint(300, 500)):         # the core's port still held (if it was): slot 2 arrives
        await RisingEdge(dut.clk)
    hold[0] = False
    cpls = set()
    while len(cpls) < 3:
        p = parse((await tb.recv(20000))[0])
        if p["type"] == T_CPL:
            cpls.add(p["slot"])
    dut._log.info("cmd_order: probes of slot 3 %s, core took %s", states, core.taken)
    assert core.executed == {(1, 70), (3, 71), (2, 72)}
    assert core.taken == [1, 3, 2], f"the core took slot 2's command before slot 3's: {core.taken}"


@pytest.mark.parametrize("case", ["all"])
def test_ats_udp_host(case):
    src = os.environ.get("ATS_UDP_HOST_SRC")          # another copy of ats_udp_host.sv (old / mutant checks)
    run(toplevel="ats_udp_host",
        sources=block_sources("ats_udp_host", replace={"ats_udp_host.sv": Path(src).resolve()} if src else None),
        test_module="test_ats_udp_host", test_dir=HERE,
        build_key="default" + ("_" + Path(src).parent.name if src else ""), parameters=dict(NSLOT=NSLOT, SLOT_BYTES=SLOT_BYTES, PAGE_BYTES=PAGE),
        public={}, testcase=os.environ.get("ATS_UDP_CASES", "malformed,clean,lossy,lossy_reorder,no_wait,reply_queue,cmd_order").split(","))
