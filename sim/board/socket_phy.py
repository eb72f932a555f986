# SPDX-License-Identifier: Apache-2.0
"""The UDP socket model of the board's Ethernet PHY (sim/board/README.md), shared by the host-link
bench (test_board_hostlink.py) and the whole board SoC's (test_board_soc.py); and the host client
run in its own process (udp_client_run.py), started and checked by `run_client`.

`SocketPhy`: each datagram a client sends to the model's socket (127.0.0.1, a free port) becomes an
Ethernet II / IPv4 / UDP frame from the host (192.168.1.100) to the board (192.168.1.50): padded to
60 bytes, FCS, preamble, one byte per eth clock, 12 idle bytes between frames. Every frame the MAC
sends is checked (preamble, FCS, IPv4 header checksum, addresses) and answered (ARP requests for the
host's address) or its UDP payload forwarded to the client (by destination port). Seeded faults
drop, duplicate and delay (reorder) datagrams in both directions. The bench object `tb` gives
`cycle` (system clock cycles), `activity()`, `idle()` and `client_done` (an Event). With
`stop_idle` (the host-link bench) the model waits for the client's next datagram with the
simulation stopped while `tb.idle()`; without it (the whole SoC, whose firmware never idles in a
way the bench can see) the simulation runs on while the client thinks.
"""
from __future__ import annotations

import collections
import json
import socket
import struct
import subprocess
import zlib
from pathlib import Path

import cocotb
from cocotb.triggers import Event, RisingEdge, Timer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

BOARD_IP, BOARD_MAC = (192, 168, 1, 50), 0x10E2D5000001      # gen_hostlink.IP / MAC (the board SoC's)
HOST_IP, HOST_MAC = (192, 168, 1, 100), 0x020000000064
UDP_PORT = 16724
PREAMBLE = b"\x55" * 7 + b"\xd5"
SYS_PS = 13336          # the board's system clock period (75 MHz)


def mac_b(m: int) -> bytes:
    return m.to_bytes(6, "big")


def csum(h: bytes) -> int:
    s = sum(struct.unpack(f"!{len(h) // 2}H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def wire(frame: bytes) -> bytes:
    """An Ethernet frame (no FCS) as the PHY carries it: padded to 60 bytes, FCS, preamble."""
    frame = frame.ljust(60, b"\0")
    return PREAMBLE + frame + struct.pack("<I", zlib.crc32(frame))


def udp_frame(payload: bytes, sport: int) -> bytes:
    udp = struct.pack("!HHHH", sport, UDP_PORT, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, bytes(HOST_IP), bytes(BOARD_IP))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return mac_b(BOARD_MAC) + mac_b(HOST_MAC) + b"\x08\x00" + ip + udp


class SocketPhy:
    """The UDP socket model of the Ethernet PHY (module docstring)."""

    def __init__(self, dut, tb, rng, drop=0.0, dup=0.0, delay=0, ready="mac_core_rx_preamble_sink_ready",
                 stop_idle=True, diag_sigs=None):
        self.dut, self.tb, self.rng = dut, tb, rng
        self.stop_idle = stop_idle
        self.drop, self.dup, self.delay = drop, dup, delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.port = self.sock.getsockname()[1]
        self.rxq: collections.deque[bytes] = collections.deque()    # wire bytes into the MAC
        self.late: list[tuple[int, int, bytes, object]] = []       # (due cycle, n, datagram, to) delayed
        self.n = 0
        self.rx_ev = Event()
        self.rx_busy = self.tx_busy = False
        self.clients: dict[int, tuple[str, int]] = {}
        self.stats = collections.Counter()
        self.first_in = self.last_out = None
        self.proc = None
        self.started: dict[bytes, int] = {}        # (slot, seq) -> cycle of its first SUBMIT
        self.max_latency = 0                       # cycles, first SUBMIT in to the first CPL out
        # the MAC's first receive stage (LiteEth's preamble checker, eth clock): not ready
        # while a byte is offered means the byte is lost (a diagnostic count, README "Found by it")
        self._phy_ready = getattr(dut, ready)
        # diagnostics: the signals `diag_sigs` (name -> handle) at the first lost byte of a frame
        self.diag: list[tuple[int, int, int, dict]] = []
        self.diag_sigs = diag_sigs or {}
        dut.rx_valid.value = 0
        dut.rx_last.value = 0
        dut.rx_data.value = 0
        cocotb.start_soon(self._rx())
        cocotb.start_soon(self._tx())
        cocotb.start_soon(self._sock())

    # ---- faults
    def _fault(self) -> int:
        r = self.rng.random()
        if r < self.drop:
            self.stats["dropped"] += 1
            return 0
        if r < self.drop + self.dup:
            self.stats["duplicated"] += 1
            return 2
        return 1

    def _later(self, dgram: bytes, to) -> None:
        """A datagram into the device (to None) or to the host, through the faults."""
        for _ in range(self._fault()):
            self.n += 1
            self.late.append((self.tb.cycle + (self.rng.randint(0, self.delay) if self.delay else 0), self.n, dgram, to))

    def _deliver(self) -> None:
        now = self.tb.cycle
        due = sorted(x for x in self.late if x[0] <= now)
        for x in due:
            self.late.remove(x)
            _, _, dgram, to = x
            if to is None:
                self._into(dgram[0], dgram[1])
            else:
                self.sock.sendto(dgram, to)
                self.last_out = self.tb.cycle
                self.stats["to_host"] += 1

    def _into(self, payload: bytes, sport: int) -> None:
        if self.first_in is None:
            self.first_in = self.tb.cycle
        if len(payload) >= 8 and payload[0] == 0x01:              # a SUBMIT: its command's start
            self.started.setdefault(payload[1:2] + payload[4:8], self.tb.cycle)
        self.rxq.append(wire(udp_frame(payload, sport)))
        self.stats["to_dev"] += 1
        self.rx_ev.set()

    # ---- the PHY's byte streams (eth clock)
    async def _rx(self):
        clk = self.dut.eth_clk
        while True:
            if not self.rxq:
                self.rx_busy = False
                self.rx_ev.clear()
                await self.rx_ev.wait()
                await RisingEdge(clk)
            self.rx_busy = True
            fr = self.rxq.popleft()
            lost = 0
            for i, b in enumerate(fr):
                self.dut.rx_valid.value = 1
                self.dut.rx_data.value = b
                self.dut.rx_last.value = int(i == len(fr) - 1)
                await RisingEdge(clk)
                if not int(self._phy_ready.value):        # the PHY cannot wait: a byte lost
                    lost += 1
                    if lost == 1 and len(self.diag) < 16:    # where the backpressure came from
                        self.diag.append((self.tb.cycle, i, len(fr), {k: int(h.value) for k, h in self.diag_sigs.items()}))
            if lost:
                self.stats["frames_cut"] += 1
                self.stats["bytes_lost"] += lost
            self.dut.rx_valid.value = 0
            self.dut.rx_last.value = 0
            for _ in range(12):                       # inter-frame gap
                await RisingEdge(clk)
            self.tb.activity()

    async def _tx(self):
        clk = self.dut.eth_clk
        buf = bytearray()
        while True:
            if not self.tx_busy and not int(self.dut.tx_valid.value):
                await RisingEdge(self.dut.tx_valid)       # no Python per clock between frames
            await RisingEdge(clk)
            if int(self.dut.tx_valid.value):
                self.tx_busy = True
                buf.append(int(self.dut.tx_data.value))
                if int(self.dut.tx_last.value):
                    self._frame(bytes(buf))
                    buf.clear()
                    self.tx_busy = False
                    self.tb.activity()

    def _frame(self, w: bytes) -> None:
        """One frame from the MAC: checked, then answered (ARP) or forwarded (UDP)."""
        assert w[:8] == PREAMBLE, f"preamble {w[:8].hex()}"
        fr, fcs = w[8:-4], w[-4:]
        assert len(fr) >= 60, f"frame of {len(fr)} bytes"
        assert struct.pack("<I", zlib.crc32(fr)) == fcs, "bad FCS from the MAC"
        dst, src, et = fr[:6], fr[6:12], struct.unpack("!H", fr[12:14])[0]
        assert src == mac_b(BOARD_MAC), src.hex()
        self.stats["frames_out"] += 1
        if et == 0x0806:
            htype, ptype, hl, pl, oper = struct.unpack("!HHBBH", fr[14:22])
            spa, tpa = fr[28:32], fr[38:42]
            self.stats["arp"] += 1
            if oper == 1 and tpa == bytes(HOST_IP):
                arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, mac_b(HOST_MAC), bytes(HOST_IP),
                                  mac_b(BOARD_MAC), spa)
                self.rxq.append(wire(mac_b(BOARD_MAC) + mac_b(HOST_MAC) + b"\x08\x06" + arp))
                self.rx_ev.set()
            return
        assert et == 0x0800, f"ethertype {et:#x}"
        assert dst == mac_b(HOST_MAC), dst.hex()
        ip = fr[14:34]
        assert ip[0] == 0x45 and csum(ip) == 0, "IPv4 header / checksum"
        total = struct.unpack("!H", ip[2:4])[0]
        assert ip[9] == 17 and ip[12:16] == bytes(BOARD_IP) and ip[16:20] == bytes(HOST_IP), ip.hex()
        sport, dport, ulen = struct.unpack("!HHH", fr[34:40])
        assert sport == UDP_PORT and ulen == total - 20, (sport, ulen, total)
        payload = fr[42:14 + total]
        assert len(payload) == ulen - 8
        self.stats["udp_out"] += 1
        if payload[0] == 0x8F:                                    # an ERROR: the block's err_pkts
            self.stats["err_out"] += 1
        if payload[0] == 0x81:                                    # a CPL: the command's latency
            t0 = self.started.pop(payload[1:2] + payload[4:8], None)
            if t0 is not None:
                self.max_latency = max(self.max_latency, self.tb.cycle - t0)
        to = self.clients.get(dport)
        assert to is not None, f"reply to port {dport}, no client there"
        self._later(payload, to)

    # ---- the socket (system clock)
    async def _sock(self):
        self.sock.setblocking(False)
        while True:
            await Timer(32 * SYS_PS, unit="ps")
            self._deliver()
            got = self._poll(False)
            if not self.stop_idle:
                if self.proc is not None and self.proc.poll() is not None and not self.late and not self.rxq:
                    self.tb.client_done.set()
                continue
            if not got and self.tb.idle() and not self.late and not self.rx_busy and not self.tx_busy \
                    and not self.rxq:
                if self.proc is not None and self.proc.poll() is not None:
                    self.tb.client_done.set()
                    continue
                self.stats["waits"] += 1
                self._poll(True)                  # the simulation stops until the host sends

    def _poll(self, block: bool) -> int:
        got = 0
        self.sock.settimeout(0.02 if block else 0)
        try:
            while True:
                d, addr = self.sock.recvfrom(4096)
                self.clients[addr[1]] = addr
                self._later((d, addr[1]), None)
                got += 1
                self.sock.setblocking(False)
        except (BlockingIOError, socket.timeout):
            pass
        self.sock.setblocking(False)
        return got


async def run_client(tb, mode: str, n: int, seed: int, timeout: float, args: list[str], diag=lambda: "") -> dict:
    """udp_client_run.py `mode` in its own process against tb.phy's socket; the simulation runs until
    it exits (tb.client_done). Returns its JSON counts with the cycles run, the busy cycles (first
    frame into the device to the last datagram out) and the longest command latency."""
    py = ROOT / ".venv" / "bin" / "python"
    cmd = [str(py if py.exists() else "python3"), str(HERE / "udp_client_run.py"), mode, str(n),
           "--port", str(tb.phy.port), "--seed", str(seed), "--timeout", str(timeout), *args]
    phy = tb.phy
    tb.client_done.clear()
    phy.first_in = phy.last_out = None
    phy.max_latency = 0
    phy.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    c0 = tb.cycle
    await tb.client_done.wait()
    out, err = phy.proc.communicate()
    if phy.proc.returncode != 0:
        raise AssertionError(f"client {mode} failed:\n{err[-3000:]}\n{diag()}; phy: rxq {len(phy.rxq)} late "
                             f"{len(phy.late)} rx_busy {phy.rx_busy} tx_busy {phy.tx_busy} stats {dict(phy.stats)}; "
                             f"cycle {tb.cycle}")
    res = json.loads(out.strip().splitlines()[-1])
    res["cycles"] = tb.cycle - c0
    res["busy_cycles"] = (phy.last_out or 0) - (phy.first_in or 0)
    res["max_latency"] = phy.max_latency
    phy.proc = None
    return res
