# SPDX-License-Identifier: Apache-2.0
"""The ideal device core of make bench-sata (bench/sata/README.md): behind the core ports of ats_sata
and ats_nvme (the same ports), it executes each descriptor the clock it is taken and moves data one
32-bit word a clock with no pause, so that the front end and its host link are what is measured.

Why not atstb.sata_core_model with zero delay: that model sends a READ's completion only when the
whole `s_hwr` queue is empty (the beats of the READs queued after it included), so with 32 READs in
flight completions bunch up and the host's queue depth drops; its execution also waits on a
ClockCycles per descriptor. The rules kept are the real core's (tmp notes / sata_core_model): a
WRITE's pages are asked one `s_hrd` request per page in increasing address order (requests of
different commands queue behind each other, data comes back in request order); a READ's data is
one `s_hwr` burst per page (addr = dptr + i * page), its completion queued in the clock its last
beat is taken; IDENTIFY (op 9): 128 words at dptr, then status 0 / result 64.

Medium: `pages` (LBA -> bytes; never written = zeros). Counters: `hrd_beats`, `hwr_beats` (core
port beats, for the port's utilisation), `ops` (descriptors by op)."""
from __future__ import annotations

import struct
from collections import deque

from atstb.nvme_ref import OP_READ, OP_WRITE, ST_BAD_LBA
from atstb.streams import StreamSink, StreamSource, every_edge

OP_IDENTIFY = 9
IDENTIFY_MAGIC = 0x41545344
CMD_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"]


class IdealCore:
    def __init__(self, dut, page_bytes: int, num_lbas: int):
        clk = dut.clk
        self.dut, self.pb, self.num_lbas = dut, page_bytes, num_lbas
        self.cmd = StreamSink(dut, "m_cmd", clk, CMD_FIELDS)
        self.cpl = StreamSource(dut, "s_cpl", clk, ["tag", "status", "result"])
        self.hrd = StreamSource(dut, "s_hrd", clk, ["addr", "len"])
        self.hrd_data = StreamSink(dut, "m_hrd", clk, ["data", "last"])
        self.hwr = StreamSource(dut, "s_hwr", clk, ["addr", "data", "last"])
        self.hwr.on_accept = self._hwr_taken
        self.pages: dict[int, bytes] = {}
        self.fw_words = [0] * 16
        self.fw_words[0], self.fw_words[6], self.fw_words[8] = IDENTIFY_MAGIC, page_bytes, num_lbas
        self._rd: deque = deque()        # window reads asked: [descriptor, page index, words]
        self.in_core: dict[int, dict] = {}
        self.ops: dict[int, int] = {}
        self.hrd_beats = self.hwr_beats = 0
        self.cycle = 0
        self.errors: list[str] = []
        every_edge(clk, self._edge)

    def _fail(self, msg: str) -> None:
        self.errors.append(msg)
        raise AssertionError(f"ideal core (cycle {self.cycle}): {msg}")

    def _complete(self, f: dict, status: int = 0, result: int = 0) -> None:
        self.in_core.pop(f["tag"], None)
        f["_done"] = self.cycle
        self.cpl.send_nowait(tag=f["tag"], status=status, result=result)

    def _burst(self, addr: int, data: bytes, f: dict | None) -> None:
        words = struct.unpack(f"<{len(data) // 4}I", data)
        n = len(words)
        for j, w in enumerate(words):
            it = dict(addr=addr, data=w, last=int(j == n - 1))
            if j == n - 1 and f is not None:
                it["_f"] = f
            self.hwr.send_nowait(**it)

    def _hwr_taken(self, item: dict, cycle: int) -> None:
        self.hwr_beats += 1
        f = item.get("_f")
        if f is not None:
            f["_left"] -= 1
            if f["_left"] == 0:
                self._complete(f, 0, 64 if f["op"] == OP_IDENTIFY else 0)

    def _edge(self) -> None:
        self.cycle += 1
        while self.cmd.queue:
            f = self.cmd.queue.popleft()
            f["_cycle"] = self.cycle
            tag, op = f["tag"], f["op"]
            self.ops[op] = self.ops.get(op, 0) + 1
            if tag in self.in_core:
                self._fail(f"descriptor with tag {tag} while tag {tag} is in the core: {f}")
            self.in_core[tag] = f
            n = f["nlb"] + 1
            if op == OP_WRITE:
                if f["lba"] + n > self.num_lbas:
                    self._complete(f, ST_BAD_LBA)             # not expected in the bench
                    continue
                f["_pages"] = [None] * n
                for i in range(n):
                    self._rd.append([f, i, []])
                    self.hrd.send_nowait(addr=f["dptr"] + i * self.pb, len=self.pb)
            elif op == OP_READ:
                if f["lba"] + n > self.num_lbas:
                    self._complete(f, ST_BAD_LBA)
                    continue
                f["_left"] = n
                for i in range(n):
                    self._burst(f["dptr"] + i * self.pb, self.pages.get(f["lba"] + i, bytes(self.pb)), f)
            elif op == OP_IDENTIFY:
                f["_left"] = 1
                self._burst(f["dptr"], b"".join(struct.pack("<I", w) for w in self.fw_words).ljust(512, b"\0"), f)
            else:
                self._complete(f)                            # FLUSH and the like: nothing to do here
        q = self.hrd_data.queue
        while q:
            b = q.popleft()
            self.hrd_beats += 1
            if not self._rd:
                self._fail(f"m_hrd beat {b['data']:#010x} with no window read outstanding")
            r = self._rd[0]
            r[2].append(b["data"])
            last = len(r[2]) == self.pb // 4
            if b["last"] != int(last):
                self._fail(f"window read of tag {r[0]['tag']} page {r[1]}: last = {b['last']} on word {len(r[2]) - 1}")
            if last:
                self._rd.popleft()
                f, i, words = r
                f["_pages"][i] = struct.pack(f"<{len(words)}I", *words)
                if all(p is not None for p in f["_pages"]):
                    for k, p in enumerate(f["_pages"]):
                        self.pages[f["lba"] + k] = p
                    self._complete(f)

    def busy(self) -> bool:
        return bool(self.in_core or self.cmd.queue or self.cpl.queue or self.hwr.queue or self.hrd.queue or self._rd)
