# SPDX-License-Identifier: Apache-2.0
"""A reference model of the device side of the UDP host link, written from docs/host-port.md
"UDP host link" (not from rtl/hostlink): slots with FREE / LOAD / RUN / DONE, sequence numbers in
serial-number arithmetic, 1024-byte chunks, the error codes in their order, STATE answers and the
retransmission of a finished command's CPL and RDATA chunks. Behind it a core stub executes the
descriptors against a dict of LBAs after a random delay. It serves a real UDP socket in a thread;
`Net` between the socket and the model drops, duplicates and delays (reorders) packets in both
directions at seeded rates. Records every execution (slot, seq) and the issue order for the checks,
and every WRITE's (lba, pages, flags). IDENTIFY answers docs/architecture.md 1.1's fields with the
model's geometry (page_bytes, num_lbas, qdepth = NSLOT); `bad_read_lbas`: a READ touching one
completes with MEDIA_ERROR (0x10); `mute` = True: the device answers nothing (a board that stopped).
Every page a WRITE executed, in order (`written`: (lba, data)); per FLUSH reaching the core
(`flushes`): how many of those pages had been written then, and how many WRITE commands sent before
it (older seq) were still in the core (issued, not executed)."""
from __future__ import annotations

import heapq
import random
import socket
import struct
import threading
import time

CHUNK = 1024
FREE, LOAD, RUN, DONE = range(4)
E_SHORT, E_TYPE, E_LEN, E_SLOT, E_FIELD, E_BUSY, E_STALE = range(1, 8)
READ, WRITE, TX_BEGIN, TX_COMMIT, TX_ABORT, FLUSH, RFLUSH, TRIM, IDENTIFY, GET_LOG = 0, 1, 3, 4, 5, 6, 7, 8, 9, 10
OK, BAD_OP, BAD_LBA, MEDIA_ERROR = 0x00, 0x01, 0x03, 0x10


class Slot:
    def __init__(self, nbytes: int):
        self.st, self.seq, self.buf = FREE, 0, bytearray(nbytes)
        self.wr_len = self.rd_len = 0
        self.got = 0
        self.desc: dict = {}
        self.cpl = (0, 0)
        self.host = None


class UdpDeviceModel:
    def __init__(self, seed: int = 1, nslot: int = 4, slot_bytes: int = 8192, page: int = 4096, nlba: int = 64,
                 drop: float = 0.0, dup: float = 0.0, delay: float = 0.0, core_delay: float = 0.002,
                 bad_read_lbas: frozenset = frozenset()):
        self.rng = random.Random(seed)
        self.nslot, self.slot_bytes, self.page, self.nlba = nslot, slot_bytes, page, nlba
        self.drop, self.dup, self.delay, self.core_delay = drop, dup, delay, core_delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.port = self.sock.getsockname()[1]
        self.slots = [Slot(slot_bytes) for _ in range(nslot)]
        self.store: dict[int, bytes] = {}
        self.bad_read_lbas = set(bad_read_lbas)            # a READ touching one completes with MEDIA_ERROR
        self.writes: list[tuple[int, int, int]] = []        # (lba, pages, flags) of every WRITE executed
        self.written: list[tuple[int, bytes]] = []          # (lba, data) of every page written, in order
        self.flushes: list[tuple[int, int]] = []            # per FLUSH issued: (len(written), older WRITEs in the core)
        self._writes_in_core: dict[int, int] = {}           # slot -> seq of a WRITE issued, not executed
        self.mute = False                                   # True: the device answers nothing (stopped)
        self.executed: list[tuple[int, int, int]] = []      # (slot, seq, op) in issue order
        self.errors: list[int] = []
        self.stats = dict(dropped=0, duplicated=0, to_dev=0, to_host=0)
        self._q: list = []                                  # (due, n, direction, pkt, addr)
        self._n = 0
        self._core: list = []                               # (due, n, slot)
        self._stop = False
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def close(self):
        self._stop = True
        self.thread.join(5)
        self.sock.close()

    # ---- the lossy network between the socket and the model
    def _net(self, direction: str, pkt: bytes, addr):
        r = self.rng.random()
        copies = 1
        if r < self.drop:
            self.stats["dropped"] += 1
            copies = 0
        elif r < self.drop + self.dup:
            self.stats["duplicated"] += 1
            copies = 2
        for _ in range(copies):
            self._n += 1
            heapq.heappush(self._q, (time.monotonic() + self.rng.random() * self.delay, self._n, direction, pkt, addr))

    def _reply(self, s: Slot | None, pkt: bytes, addr=None):
        self._net("host", pkt, addr if addr is not None else s.host)

    def _loop(self):
        self.sock.settimeout(0.0005)
        while not self._stop:
            try:
                pkt, addr = self.sock.recvfrom(4096)
                if not self.mute:
                    self._net("dev", pkt, addr)
            except socket.timeout:
                pass
            now = time.monotonic()
            while self._q and self._q[0][0] <= now:
                _, _, d, pkt, addr = heapq.heappop(self._q)
                if d == "dev":
                    self.stats["to_dev"] += 1
                    self._packet(pkt, addr)
                elif not self.mute:
                    self.stats["to_host"] += 1
                    self.sock.sendto(pkt, addr)
            while self._core and self._core[0][0] <= now:
                _, _, i = heapq.heappop(self._core)
                self._complete(i)

    # ---- the protocol
    def _error(self, pkt: bytes, code: int, addr):
        self.errors.append(code)
        t = slot = 0
        seq = 0
        w0 = struct.unpack_from("<I", pkt)[0] if len(pkt) >= 4 else 0
        if len(pkt) >= 4:
            slot = pkt[1]
        if len(pkt) >= 8:
            seq = struct.unpack_from("<I", pkt, 4)[0]
        del t
        self._reply(None, struct.pack("<BBBBII", 0x8F, slot, code, 1, seq, w0), addr)

    @staticmethod
    def _newer(new: int, old: int) -> int:
        d = (new - old) & 0xFFFFFFFF
        return 0 if d == 0 else (1 if d < 1 << 31 else -1)

    def _packet(self, pkt: bytes, addr):
        n = len(pkt)
        if n < 8:
            return self._error(pkt, E_SHORT, addr)
        t, slot, arg, ver, seq = struct.unpack_from("<BBBBI", pkt)
        if t not in (1, 2) or ver != 1:
            return self._error(pkt, E_TYPE, addr)
        if n % 4 or (t == 1 and n != 32) or (t == 2 and not 12 <= n <= 8 + CHUNK):
            return self._error(pkt, E_LEN, addr)
        if slot >= self.nslot:
            return self._error(pkt, E_SLOT, addr)
        s = self.slots[slot]
        if t == 1:
            mask, wr_len, rd_len, op, txid, flags, ap, nlb, lba_hi, lba_lo, aux = \
                struct.unpack_from("<IHHBBBBHHII", pkt, 8)
            bad = (wr_len % 4 or rd_len % 4 or wr_len > self.slot_bytes or rd_len > self.slot_bytes
                   or op >> 4 or txid >> 6 or flags >> 4 or ap & 0xB0
                   or (op in (READ, WRITE) and (nlb + 1) * self.page > self.slot_bytes))
            if bad:
                return self._error(pkt, E_FIELD, addr)
            if s.st != FREE:
                rel = self._newer(seq, s.seq)
                if rel == 0:
                    s.host = addr
                    if s.st == LOAD:
                        return self._reply(s, struct.pack("<BBBBII", 0x83, slot, 1, 1, seq, s.got))
                    if s.st == RUN:
                        return self._reply(s, struct.pack("<BBBBII", 0x83, slot, 2, 1, seq, 0))
                    return self._send_done(slot, mask)
                if rel < 0:
                    return self._error(pkt, E_STALE, addr)
                if s.st == RUN:
                    return self._error(pkt, E_BUSY, addr)
            s.st, s.seq, s.wr_len, s.rd_len, s.got, s.host = LOAD, seq, wr_len, rd_len, 0, addr
            s.desc = dict(op=op, txid=txid, flags=flags, attr=ap & 3, prio=(ap >> 2) & 3, nlb=nlb,
                          lba=(lba_hi << 32) | lba_lo, aux=(slot * self.slot_bytes + aux) if ap & 0x40 else aux)
            if wr_len == 0:
                self._issue(slot)
            return None
        # DATA
        if s.st != LOAD or s.seq != seq:
            return self._error(pkt, E_STALE, addr)
        nch = (s.wr_len + CHUNK - 1) // CHUNK
        if arg >= nch:
            return self._error(pkt, E_FIELD, addr)
        size = min(CHUNK, s.wr_len - arg * CHUNK)
        if n != 8 + size:
            return self._error(pkt, E_LEN, addr)
        if s.got >> arg & 1:
            return None
        s.buf[arg * CHUNK:arg * CHUNK + size] = pkt[8:]
        s.got |= 1 << arg
        if s.got == (1 << nch) - 1:
            self._issue(slot)
        return None

    def _issue(self, i: int):
        s = self.slots[i]
        s.st = RUN
        self.executed.append((i, s.seq, s.desc["op"]))
        if s.desc["op"] == WRITE:
            self._writes_in_core[i] = s.seq
        elif s.desc["op"] == FLUSH:
            older = sum(self._newer(s.seq, q) > 0 for q in self._writes_in_core.values())
            self.flushes.append((len(self.written), older))
        self._n += 1
        heapq.heappush(self._core, (time.monotonic() + self.rng.random() * self.core_delay, self._n, i))

    def _complete(self, i: int):
        """The core stub: executes the descriptor against the dict, data through the slot's buffer."""
        s = self.slots[i]
        d = s.desc
        op, lba, n, pg = d["op"], d["lba"], d["nlb"] + 1, self.page
        status, result = OK, 0
        self._writes_in_core.pop(i, None)
        if op in (READ, WRITE, TRIM) and lba + n > self.nlba:
            status = BAD_LBA
        elif op == READ and self.bad_read_lbas.intersection(range(lba, lba + n)):
            status = MEDIA_ERROR
        elif op == WRITE:
            self.writes.append((lba, n, d["flags"]))
            for k in range(n):
                self.store[lba + k] = bytes(s.buf[k * pg:(k + 1) * pg])
                self.written.append((lba + k, self.store[lba + k]))
            result = n
        elif op == READ:
            for k in range(n):
                s.buf[k * pg:(k + 1) * pg] = self.store.get(lba + k, bytes(pg))
            result = n
        elif op == TRIM:
            for k in range(n):
                self.store.pop(lba + k, None)
        elif op == IDENTIFY:
            # docs/architecture.md 1.1: magic, version, num_chan, ways, blocks, pages_per_block, page_bytes,
            # spare_bytes, num_lbas, num_tx, tx_entries, qdepth, rflush_ranges, ...; the rest 0
            s.buf[0:512] = struct.pack("<16I", 0x41545344, 1, 1, 1, 2 * self.nlba // 64 + 1, 64, self.page, 0,
                                       self.nlba, 0, 0, self.nslot, 8, 1, 0, 0) + bytes(448)
            result = 64
        elif op == RFLUSH:
            off = d["aux"] - i * self.slot_bytes
            assert 0 <= off < self.slot_bytes, "RFLUSH range list outside the slot's buffer"
            result = sum(((struct.unpack_from("<II", s.buf, off + 8 * r)[1] >> 16) + 1) for r in range(n))
        elif op in (FLUSH, TX_BEGIN, TX_COMMIT, TX_ABORT):
            pass
        else:
            status = BAD_OP
        s.cpl = (status, result)
        s.st = DONE
        self._send_done(i, (1 << 32) - 1)

    def _send_done(self, i: int, mask: int):
        s = self.slots[i]
        for k in range((s.rd_len + CHUNK - 1) // CHUNK):
            if mask >> k & 1:
                self._reply(s, struct.pack("<BBBBI", 0x82, i, k, 1, s.seq)
                            + bytes(s.buf[k * CHUNK:min(s.rd_len, (k + 1) * CHUNK)]))
        self._reply(s, struct.pack("<BBBBII", 0x81, i, s.cpl[0], 1, s.seq, s.cpl[1]))
