# SPDX-License-Identifier: Apache-2.0
"""The host library over the UDP host link (docs/host-port.md "UDP host link"): a board's
`ats_udp_host` reached by address. `UdpDevice` has the calls of `device.Device` (the host-port
library of the simulation): asynchronous `submit` + `poll` / `wait` / `drain`, and blocking `write`,
`read`, `trim`, `flush`, `rflush`, `tx_begin`, `tx_commit`, `tx_abort`, `identify`, `get_log`;
waits are in seconds of wall time instead of simulated cycles.

The link's host rules: a command takes a free slot and a new sequence number; its SUBMIT is sent,
then its write data in 1024-byte DATA chunks; it is finished when its CPL and all its RDATA chunks
have arrived. On a timeout the same SUBMIT is sent again with `mask` = the RDATA chunks still
missing; the device answers STATE (loading: the chunks it lacks are sent again; running: wait) or
the CPL and the chunks asked for. Packets of other commands (old sequence numbers), duplicates and
ERROR STALE (late duplicates of one's own DATA) are ignored. A command with no answer after
`max_retries` timeouts fails with `LinkTimeout`; its slot stays out of use (its command may still
run). A command the device refuses (another ERROR) fails with `LinkError`; its slot is free again.
A completion is handed out once (by `poll`, or `wait(tag)`); the client keeps only the last one of
each tag (`done`), so a long run holds no more than NSLOT of them. Ordering: the device
hands commands to the core in the order their last piece arrives, so a command that must reach the
core after the earlier ones (TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, the COMMIT or BARRIER flag, a
non-SIMPLE attribute) is sent only when every earlier command in flight is known to be running
(STATE 2) or complete; the client asks by sending their SUBMITs again at once.
"""
from __future__ import annotations

import random
import socket
import struct
import time

from .device import ADM_BYTES, Commands, DeviceError, Pending
from .hostport import A_SIMPLE, F_BARRIER, F_COMMIT, F_FUA, OP, Completion

DEV_PORT = 16724
CHUNK = 1024
VER = 1
T_SUBMIT, T_DATA, T_CPL, T_RDATA, T_STATE, T_ERROR = 0x01, 0x02, 0x81, 0x82, 0x83, 0x8F
ERR = {1: "SHORT", 2: "BAD_TYPE", 3: "BAD_LEN", 4: "BAD_SLOT", 5: "BAD_FIELD", 6: "BUSY", 7: "STALE"}
E_BUSY, E_STALE = 6, 7
S_LOADING, S_RUNNING = 1, 2
ORDERED_OPS = (OP["TX_COMMIT"], OP["TX_ABORT"], OP["FLUSH"], OP["RFLUSH"])


class LinkError(DeviceError):
    """The device refused a packet (ERROR `code`) or the link lost a command."""

    def __init__(self, msg: str, code: int = 0):
        super().__init__(msg)
        self.code = code
        self.tag: int | None = None               # the failed command's tag (slot), set when raised by poll / wait


class LinkTimeout(LinkError):
    pass


def submit_pkt(slot: int, seq: int, op: int, lba: int = 0, nlb: int = 0, wr_len: int = 0, rd_len: int = 0,
               mask: int = 0, txid: int = 0, flags: int = 0, attr: int = 0, prio: int = 0, aux: int = 0,
               aux_buf: int = 0) -> bytes:
    ap = (attr & 3) | ((prio & 3) << 2) | ((aux_buf & 1) << 6)
    return struct.pack("<BBBBIIHHBBBBHHII", T_SUBMIT, slot, 0, VER, seq, mask, wr_len, rd_len, op, txid, flags, ap,
                       nlb, (lba >> 32) & 0xFFFF, lba & 0xFFFFFFFF, aux & 0xFFFFFFFF)


def data_pkt(slot: int, seq: int, chunk: int, payload: bytes) -> bytes:
    return struct.pack("<BBBBI", T_DATA, slot, chunk, VER, seq) + payload


def nchunks(n: int) -> int:
    return (n + CHUNK - 1) // CHUNK


class _Cmd:
    __slots__ = ("p", "slot", "seq", "wdata", "rd_len", "aux", "aux_buf", "rdata", "cpl", "running", "deadline",
                 "tries", "failed", "t0", "epoch")

    def __init__(self, p: Pending, slot: int, seq: int, wdata: bytes, rd_len: int, aux: int, aux_buf: int):
        self.p, self.slot, self.seq, self.wdata, self.rd_len = p, slot, seq, wdata, rd_len
        self.aux, self.aux_buf = aux, aux_buf
        self.rdata: dict[int, bytes] = {}
        self.cpl: tuple[int, int] | None = None
        self.running = False
        self.deadline = 0.0
        self.tries = 0
        self.failed: LinkError | None = None
        self.t0 = 0.0
        self.epoch = 0

    def missing_rdata(self) -> int:
        return sum(1 << k for k in range(nchunks(self.rd_len)) if k not in self.rdata)


class UdpDevice(Commands):
    """A device behind the UDP host link at (`addr`, `port`). `nslot` / `slot_bytes` are the
    bitstream's (`ats_udp_host` NSLOT / SLOT_BYTES); `timeout` is the first retry's wait in seconds
    (doubled per retry up to `max_timeout`)."""

    def __init__(self, addr: str, port: int = DEV_PORT, page_bytes: int = 4096, nlba: int = 0, nslot: int = 4,
                 slot_bytes: int = 8192, timeout: float = 0.02, max_timeout: float = 1.0, max_retries: int = 30,
                 seq0: int | None = None, local_port: int = 0):
        self.addr = (socket.gethostbyname(addr), port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("0.0.0.0", local_port))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.page_bytes, self.nlba = page_bytes, nlba
        self.nslot, self.slot_bytes = nslot, slot_bytes
        self.qdepth = nslot
        self.timeout, self.max_timeout, self.max_retries = timeout, max_timeout, max_retries
        # a restarted host starts far from its earlier sequence numbers (host rules)
        self.seq = random.SystemRandom().randrange(1 << 32) if seq0 is None else seq0 & 0xFFFFFFFF
        self.free_tags = list(range(nslot))
        self.inflight: dict[int, Pending] = {}
        self.done: dict[int, Pending] = {}        # tag -> its last completion (wait(tag) after a poll)
        self._ready: list[Pending] = []           # completed, not yet returned by poll / wait
        self._refused: dict[int, LinkError] = {}  # tag -> the device's ERROR for it (wait(tag) raises it)
        self._cmds: dict[int, _Cmd] = {}          # slot -> command in flight
        self._order: list[int] = []               # slots in submission order
        self._epoch = 0                           # 2^31 jumps so far (ERROR STALE of a SUBMIT)
        self.retry_log: list[dict] = []           # the first retries: what was missing (diagnostics)
        self.stats = dict(sent=0, received=0, retries=0, ignored=0, stale=0, busy=0, resent_chunks=0, resync=0)

    def close(self) -> None:
        self.sock.close()

    @property
    def outstanding(self) -> int:
        """Commands in flight that have not failed (a failed command's slot stays out of use)."""
        return len(self._order)

    # ---- packets
    def _send(self, pkt: bytes) -> None:
        self.sock.sendto(pkt, self.addr)
        self.stats["sent"] += 1

    def _send_submit(self, c: _Cmd, mask: int = 0) -> None:
        p = c.p
        self._send(submit_pkt(c.slot, c.seq, p.op, p.lba, p.nlb, len(c.wdata), c.rd_len, mask, p.txid, p.flags,
                              p.user.get("_attr", 0), p.user.get("_prio", 0), c.aux, c.aux_buf))

    def _send_chunks(self, c: _Cmd, which) -> None:
        for k in which:
            self._send(data_pkt(c.slot, c.seq, k, c.wdata[k * CHUNK:(k + 1) * CHUNK]))

    def _arm(self, c: _Cmd) -> None:
        c.deadline = time.monotonic() + min(self.max_timeout, self.timeout * (2 ** min(c.tries, 16)))

    def _retry(self, c: _Cmd) -> None:
        c.tries += 1
        self.stats["retries"] += 1
        if c.tries > self.max_retries:
            c.failed = LinkTimeout(f"slot {c.slot} seq {c.seq:#x}: no answer after {self.max_retries} retries")
            return
        if len(self.retry_log) < 16:
            self.retry_log.append(dict(slot=c.slot, seq=c.seq, op=c.p.op, cpl=c.cpl is not None, running=c.running,
                                       missing_rdata=c.missing_rdata(), t=round(time.monotonic() - c.t0, 3)))
        self._send_submit(c, c.missing_rdata())
        self._arm(c)

    def _handle(self, pkt: bytes) -> None:
        self.stats["received"] += 1
        if len(pkt) < 8:
            self.stats["ignored"] += 1
            return
        t, slot, arg, ver, seq = struct.unpack_from("<BBBBI", pkt)
        c = self._cmds.get(slot)
        if c is None or c.seq != seq or c.failed is not None or ver != VER:
            self.stats["ignored"] += 1            # an earlier command's late packet, or a duplicate
            return
        if t == T_RDATA:
            if arg < nchunks(c.rd_len) and arg not in c.rdata:
                want = min(CHUNK, c.rd_len - arg * CHUNK)
                if len(pkt) - 8 == want:
                    c.rdata[arg] = pkt[8:]
        elif t == T_CPL and len(pkt) == 12:
            c.cpl = (arg, struct.unpack_from("<I", pkt, 8)[0])
            c.running = True                      # missing RDATA chunks: asked for at the timeout
        elif t == T_STATE and len(pkt) == 12:
            w2 = struct.unpack_from("<I", pkt, 8)[0]
            if arg == S_LOADING:
                miss = [k for k in range(nchunks(len(c.wdata))) if not (w2 >> k) & 1]
                self.stats["resent_chunks"] += len(miss)
                self._send_chunks(c, miss)
                self._arm(c)
            elif arg == S_RUNNING:
                c.running = True
        elif t == T_ERROR:
            w2 = struct.unpack_from("<I", pkt, 8)[0] if len(pkt) >= 12 else 0
            if arg == E_STALE and (w2 & 0xFF) == T_SUBMIT and c.cpl is None and not c.running:
                # our SUBMIT is older than the slot's command: that one is of an earlier run of this
                # host (or another host). STALE means ours was never accepted, so it is sent again
                # with a sequence number 2^31 further on, newer than the slot's
                self.stats["resync"] += 1
                if c.epoch < self._epoch:
                    self.seq = (self.seq + 1) & 0xFFFFFFFF            # numbered before the last jump
                else:
                    self.seq = (self.seq + (1 << 31)) & 0xFFFFFFFF
                    self._epoch += 1
                c.seq, c.epoch = self.seq, self._epoch
                self._send_submit(c)
                self._send_chunks(c, range(nchunks(len(c.wdata))))
                self._arm(c)
            elif arg == E_STALE:
                self.stats["stale"] += 1          # a late duplicate of our own DATA
            elif arg == E_BUSY:
                self.stats["busy"] += 1           # the slot's earlier command still runs: retry later
            else:
                c.failed = LinkError(f"slot {slot} seq {seq:#x}: ERROR {ERR.get(arg, arg)}", arg)
        else:
            self.stats["ignored"] += 1

    def _pump(self, until: float) -> None:
        """Receives and handles packets until `until` (monotonic seconds) or the first packet
        after which there is nothing queued; fires the retries that are due."""
        while True:
            now = time.monotonic()
            for c in list(self._cmds.values()):
                if c.failed is None and not self._finished(c) and now >= c.deadline:
                    self._retry(c)
            if any(c.failed is not None for c in self._cmds.values() if c.slot in self._order):
                return                            # reported by _collect
            due = [c.deadline for c in self._cmds.values() if c.failed is None and not self._finished(c)]
            wait = min([until] + due) - now
            self.sock.settimeout(max(wait, 0.0005))
            try:
                pkt, src = self.sock.recvfrom(2048)
            except (socket.timeout, BlockingIOError):
                if time.monotonic() >= until:
                    return
                continue
            if src == self.addr:
                self._handle(pkt)
            # drain what is queued without blocking
            self.sock.setblocking(False)
            try:
                while True:
                    pkt, src = self.sock.recvfrom(2048)
                    if src == self.addr:
                        self._handle(pkt)
            except (BlockingIOError, socket.timeout):
                pass
            return

    @staticmethod
    def _finished(c: _Cmd) -> bool:
        return c.cpl is not None and not c.missing_rdata()

    # ---- asynchronous calls (the API of device.Device)
    def submit(self, op: int, lba: int = 0, nlb: int = 0, data: bytes | None = None, txid: int = 0, flags: int = 0,
               attr: int = A_SIMPLE, prio: int = 0, aux: int = 0, aux_data: bytes | None = None,
               max_wait: float = 60.0, **user) -> int:
        """Sends one command; returns its tag (the slot). `data`: WRITE / DIFFWRITE data;
        `aux_data`: data for the slot's buffer with `aux` pointing into it (RFLUSH's range list)."""
        wdata = data if data is not None else (aux_data or b"")
        aux_buf = 1 if aux_data is not None else 0
        if len(wdata) % 4:
            wdata += bytes(-len(wdata) % 4)
        if op == OP["READ"]:
            rd_len = (nlb + 1) * self.page_bytes
        elif op in (OP["IDENTIFY"], OP["GET_LOG"]):
            rd_len = ADM_BYTES
        else:
            rd_len = 0
        if len(wdata) > self.slot_bytes or rd_len > self.slot_bytes or \
                (op in (OP["READ"], OP["WRITE"]) and (nlb + 1) * self.page_bytes > self.slot_bytes):
            raise DeviceError(f"op {op}: {max(len(wdata), rd_len, (nlb + 1) * self.page_bytes)} bytes, "
                              f"above the link's {self.slot_bytes} per command (split it)")
        end = time.monotonic() + max_wait
        ordered = op in ORDERED_OPS or flags & (F_COMMIT | F_BARRIER) or attr != A_SIMPLE
        if ordered:
            self._wait_running(end)
        while not self.free_tags:
            if time.monotonic() >= end:
                raise DeviceError("no free slot: wait for a completion first")
            self._collect_after(end)
        slot = self.free_tags.pop(0)
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        p = Pending(slot, op, lba, nlb, txid, flags, user=dict(user, _attr=attr, _prio=prio, seq=self.seq))
        c = _Cmd(p, slot, self.seq, wdata, rd_len, aux, aux_buf)
        c.t0, c.epoch = time.monotonic(), self._epoch
        self._cmds[slot] = c
        self._order.append(slot)
        self.done.pop(slot, None)                 # the tag's earlier command is forgotten
        self._refused.pop(slot, None)
        self.inflight[slot] = p
        self._send_submit(c)
        self._send_chunks(c, range(nchunks(len(wdata))))
        self._arm(c)
        return slot

    def _wait_running(self, end: float) -> None:
        """Until every command in flight is known to have reached the core (ordering)."""
        probed: dict[int, float] = {}
        while True:
            self._collect()
            todo = [c for c in self._cmds.values() if not c.running and c.failed is None]
            if not todo:
                return
            now = time.monotonic()
            if now >= end:
                raise LinkTimeout("ordering: earlier commands not running in time")
            for c in todo:                       # ask for their state at once rather than at the timeout
                if now - probed.get(c.slot, 0.0) > self.timeout:
                    probed[c.slot] = now
                    self._send_submit(c, c.missing_rdata())
            self._pump(min(end, now + self.timeout))

    def _collect(self) -> list[Pending]:
        out = []
        failed = None
        for slot in list(self._order):
            c = self._cmds[slot]
            if c.failed is not None:
                if failed is None:                # one failure a call: raised after the completions are
                    self._order.remove(slot)      # recorded (poll returns them next time)
                    c.failed.tag = slot
                    failed = c.failed
                    if not isinstance(failed, LinkTimeout):
                        # the device refused it (ERROR): it answers a newer seq on the slot, which is
                        # free again; a LinkTimeout's slot stays out of use (its command may still run)
                        del self._cmds[slot]
                        self.inflight.pop(slot, None)
                        self.free_tags.append(slot)
                        self._refused[slot] = failed
                continue
            if not self._finished(c):
                continue
            self._order.remove(slot)
            del self._cmds[slot]
            p = self.inflight.pop(slot)
            status, result = c.cpl
            p.cpl = Completion(slot, status, result, 0)
            p.user["latency_s"] = time.monotonic() - c.t0
            if c.rd_len:
                p.data = b"".join(c.rdata[k] for k in range(nchunks(c.rd_len)))
            self.free_tags.append(slot)
            out.append(p)
        for p in out:
            self.done[p.tag] = p
        self._ready += out
        if failed is not None:
            raise failed
        return out

    def _collect_after(self, end: float) -> list[Pending]:
        self._pump(end)
        return self._collect()

    def poll(self, timeout: float = 0.1) -> list[Pending]:
        """Waits up to `timeout` seconds for at least one completion; returns what completed."""
        end = time.monotonic() + timeout
        self._collect()
        while not self._ready and self.inflight and time.monotonic() < end:
            self._collect_after(end)
        out, self._ready = self._ready, []
        return out

    def wait(self, tag: int, timeout: float = 60.0) -> Pending:
        end = time.monotonic() + timeout
        while tag in self.inflight:
            if time.monotonic() >= end:
                raise LinkTimeout(f"tag {tag}: no completion within {timeout} s")
            self._collect_after(end)
        if tag in self._refused:
            raise self._refused[tag]
        p = self.done.get(tag)
        if p is None:
            raise DeviceError(f"tag {tag}: no command")
        if p in self._ready:
            self._ready.remove(p)
        return p

    def drain(self, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        for t in list(self.inflight):
            if t in self.inflight:
                self.wait(t, max(0.001, end - time.monotonic()))

    # ---- blocking calls (hosts split I/O above SLOT_BYTES: commit / barrier on the last piece)
    def _pieces(self, n: int) -> list[tuple[int, int]]:
        per = max(1, self.slot_bytes // self.page_bytes)
        return [(i, min(per, n - i)) for i in range(0, n, per)]

    def write(self, lba: int, data: bytes, txid: int = 0, fua: bool = False, barrier: bool = False,
              commit: bool = False) -> Pending:
        n = len(data) // self.page_bytes
        pcs = self._pieces(n)
        tags = []
        for j, (i, k) in enumerate(pcs):
            last = j == len(pcs) - 1
            flags = (F_FUA if fua else 0) | (F_BARRIER if barrier and last else 0) | (F_COMMIT if commit and last else 0)
            tags.append(self.submit(OP["WRITE"], lba + i, k - 1, data[i * self.page_bytes:(i + k) * self.page_bytes],
                                    txid, flags))
        res = [self._check(self.wait(t), f"WRITE {lba}") for t in tags]
        return res[-1]

    def read(self, lba: int, n: int = 1, txid: int = 0) -> bytes:
        tags = [self.submit(OP["READ"], lba + i, k - 1, None, txid) for i, k in self._pieces(n)]
        return b"".join(self._check(self.wait(t), f"READ {lba}").data for t in tags)

    def submit_rflush(self, ranges: list[tuple[int, int]], **user) -> int:
        """RFLUSH of up to 8 (lba, nblocks) ranges: the range list goes as write data into the slot's
        buffer, `aux` = its offset there (SUBMIT's aux_buf bit)."""
        return self.submit(OP["RFLUSH"], 0, len(ranges) - 1, aux=0, aux_data=self.rflush_list(ranges), **user)


__all__ = ["UdpDevice", "LinkError", "LinkTimeout", "DEV_PORT", "submit_pkt", "data_pkt"]
