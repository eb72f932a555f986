# SPDX-License-Identifier: Apache-2.0
"""The host library over the host port: plain, transactional, barrier and flush calls, each as an
asynchronous `submit_*` (returns the tag) and a blocking form (waits for the completion). Commands
use tags 0..qdepth-1; each tag owns a host-memory buffer of `max_pages` pages at
BUF_BASE + tag * max_pages * page_bytes (READ data lands there, WRITE data is taken from there)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .hostport import (A_SIMPLE, F_BARRIER, F_COMMIT, F_FUA, FEAT_SEAL_TIME, OP, R_CUT, ST, U_CPL, Completion,
                       HostPort, SimError)

BUF_BASE = 0x0010_0000
RANGE_BASE = 0x0000_1000     # RFLUSH range lists: 64 bytes per tag


# admin answers (IDENTIFY, GET_LOG): 512 bytes at dptr, little-endian words (docs/architecture.md 1.1)
ADM_BYTES = 512
ADM_MAGIC = 0x41545344
IDENTIFY_FIELDS = ["magic", "version", "num_chan", "ways", "blocks", "pages_per_block", "page_bytes",
                   "spare_bytes", "num_lbas", "num_tx", "tx_entries", "qdepth", "rflush_ranges",
                   "checkpoint_version", "factory_bad", "bad_blocks"]
LOG_FIELDS = ["host_pages", "host_bytes", "nand_programs", "nand_bytes", "wa_x1000", "nand_reads",
              "ecc_corrected", "program_fail", "read_err", "erases", "gc_runs", "gc_relocs", "gc_erases",
              "wl_static", "grown_bad", "factory_bad", "recoveries", "recovery_cycles", "recovery_pages",
              "recovery_records", "checkpoints", "ckpt_pages", "erase_min", "erase_max", "gc_urgent",
              "starved", "cycles", "sys_clk_hz", "no_space", "ckpt_fail", "shutdowns", "recovery_ignored"]


def decode_identify(b: bytes) -> dict:
    w = struct.unpack(f"<{len(b) // 4}I", b)
    d = dict(zip(IDENTIFY_FIELDS, w))
    if d["magic"] != ADM_MAGIC:
        raise DeviceError(f"IDENTIFY: magic {d['magic']:#x}, not an atomssd answer")
    return d


def decode_log(b: bytes) -> dict:
    q = struct.unpack(f"<{len(b) // 8}Q", b)
    return dict(zip(LOG_FIELDS, q))


class DeviceError(RuntimeError):
    pass


@dataclass
class Pending:
    tag: int
    op: int
    lba: int
    nlb: int
    txid: int
    flags: int
    cpl: Completion | None = None
    data: bytes | None = None
    user: dict = field(default_factory=dict)


class Commands:
    """The blocking command calls over `submit` / `wait` / `submit_rflush`, shared by the simulator's
    Device and the board's UdpDevice (udplink.py): each transport supplies those three."""

    def _check(self, p: Pending, what: str) -> Pending:
        if p.cpl.status != ST["OK"]:
            raise DeviceError(f"{what}: status {p.cpl.status:#x}")
        return p

    @staticmethod
    def rflush_list(ranges: list[tuple[int, int]]) -> bytes:
        """RFLUSH's range list: per range the lba's low 32 bits, then {nblocks - 1, lba high}."""
        return b"".join(struct.pack("<II", lba & 0xFFFFFFFF, ((n - 1) << 16) | (lba >> 32)) for lba, n in ranges)

    def trim(self, lba: int, n: int = 1) -> Pending:
        return self._check(self.wait(self.submit(OP["TRIM"], lba, n - 1)), f"TRIM {lba}")

    def flush(self) -> Pending:
        return self._check(self.wait(self.submit(OP["FLUSH"])), "FLUSH")

    def rflush(self, ranges: list[tuple[int, int]]) -> Pending:
        return self._check(self.wait(self.submit_rflush(ranges)), "RFLUSH")

    def tx_begin(self, txid: int) -> Pending:
        return self._check(self.wait(self.submit(OP["TX_BEGIN"], txid=txid)), f"TX_BEGIN {txid}")

    def tx_commit(self, txid: int) -> Pending:
        return self.wait(self.submit(OP["TX_COMMIT"], txid=txid))

    def tx_abort(self, txid: int) -> Pending:
        return self.wait(self.submit(OP["TX_ABORT"], txid=txid))

    def identify(self) -> dict:
        """IDENTIFY: geometry and limits (docs/architecture.md section 1.1)."""
        p = self._check(self.wait(self.submit(OP["IDENTIFY"])), "IDENTIFY")
        return decode_identify(p.data)

    def get_log(self) -> dict:
        """GET_LOG: the device's counters (docs/architecture.md section 1.1)."""
        p = self._check(self.wait(self.submit(OP["GET_LOG"])), "GET_LOG")
        return decode_log(p.data)

    def feature(self, fid: int, value: int | None = None) -> Pending:
        """FEATURE (docs/architecture.md section 1.2): get (value None) or set setting `fid`; the
        Pending's cpl.status is OK or BAD_FIELD, cpl.result the setting after the command."""
        return self.wait(self.submit(OP["FEATURE"], lba=fid, nlb=0 if value is None else 1, aux=value or 0))

    def seal_time(self, cycles: int | None = None) -> int:
        """FEATURE 0xC0 SEAL_TIME: the open log page's seal time in cycles, set when `cycles` is given;
        returns the value in effect (DeviceError on a build without packing: BAD_FIELD)."""
        p = self._check(self.feature(FEAT_SEAL_TIME, cycles), "FEATURE SEAL_TIME")
        return p.cpl.result


class Device(Commands):
    def __init__(self, hp: HostPort, page_bytes: int, nlba: int, qdepth: int = 16, max_pages: int = 8):
        self.hp = hp
        self.page_bytes = page_bytes
        self.nlba = nlba
        self.qdepth = qdepth
        self.max_pages = max_pages
        self.free_tags = list(range(qdepth))
        self.inflight: dict[int, Pending] = {}
        self.done: list[Pending] = []
        self._seen = 0

    # ---- low level
    def buf(self, tag: int) -> int:
        return BUF_BASE + tag * self.max_pages * self.page_bytes

    def submit(self, op: int, lba: int = 0, nlb: int = 0, data: bytes | None = None, txid: int = 0, flags: int = 0,
               attr: int = A_SIMPLE, prio: int = 0, aux: int = 0, **user) -> int:
        if not self.free_tags:
            raise DeviceError("no free tag: wait for a completion first")
        tag = self.free_tags.pop(0)
        if data is not None:
            self.hp.mem_write(self.buf(tag), data)
        self.hp.submit(op, tag, lba=lba, nlb=nlb, txid=txid, flags=flags, attr=attr, prio=prio,
                       dptr=self.buf(tag), aux=aux)
        self.inflight[tag] = Pending(tag, op, lba, nlb, txid, flags, user=user)
        return tag

    def _collect(self) -> list[Pending]:
        out = []
        while self._seen < len(self.hp.cpls):
            c = self.hp.cpls[self._seen]
            self._seen += 1
            p = self.inflight.pop(c.tag, None)
            if p is None:
                raise DeviceError(f"completion for tag {c.tag} with no command in flight")
            p.cpl = c
            if p.op == OP["READ"] and c.status == ST["OK"]:
                p.data = self.hp.mem_read(self.buf(p.tag), (p.nlb + 1) * self.page_bytes)
            elif p.op in (OP["IDENTIFY"], OP["GET_LOG"]) and c.status == ST["OK"]:
                p.data = self.hp.mem_read(self.buf(p.tag), ADM_BYTES)
            self.free_tags.append(p.tag)
            out.append(p)
        self.done += out
        return out

    def poll(self, max_cycles: int = 200_000) -> list[Pending]:
        """Runs until at least one completion (or max_cycles, or a power cut); returns what completed."""
        if not self.inflight:
            return []
        self.hp.run(max_cycles, U_CPL)
        return self._collect()

    def wait(self, tag: int, max_cycles: int = 5_000_000) -> Pending:
        spent = 0
        while tag in self.inflight:
            c0 = self.hp.cycle
            self.poll(min(200_000, max_cycles - spent))
            spent += self.hp.cycle - c0
            if self.hp.cut:
                raise SimError("power cut while waiting")
            if spent >= max_cycles:
                raise DeviceError(f"tag {tag}: no completion within {max_cycles} cycles")
        return next(p for p in reversed(self.done) if p.tag == tag)

    def drain(self, max_cycles: int = 20_000_000) -> None:
        """Waits for every command in flight, at most max_cycles in all (DeviceError after that)."""
        end = self.hp.cycle + max_cycles
        for t in list(self.inflight):
            if t in self.inflight:
                self.wait(t, max(1, end - self.hp.cycle))

    # ---- blocking calls
    def write(self, lba: int, data: bytes, txid: int = 0, fua: bool = False, barrier: bool = False,
              commit: bool = False) -> Pending:
        n = len(data) // self.page_bytes
        flags = (F_FUA if fua else 0) | (F_BARRIER if barrier else 0) | (F_COMMIT if commit else 0)
        return self._check(self.wait(self.submit(OP["WRITE"], lba, n - 1, data, txid, flags)), f"WRITE {lba}")

    def read(self, lba: int, n: int = 1, txid: int = 0) -> bytes:
        return self._check(self.wait(self.submit(OP["READ"], lba, n - 1, None, txid)), f"READ {lba}").data

    def submit_rflush(self, ranges: list[tuple[int, int]], **user) -> int:
        """RFLUSH of up to 8 (lba, nblocks) ranges: the range list (lba low 32 bits, then
        {nblocks - 1, lba high}) in the next tag's 64-byte slot at RANGE_BASE, its address in `aux`."""
        if not self.free_tags:
            raise DeviceError("no free tag: wait for a completion first")
        aux = RANGE_BASE + 64 * self.free_tags[0]
        self.hp.mem_write(aux, self.rflush_list(ranges))
        return self.submit(OP["RFLUSH"], 0, len(ranges) - 1, aux=aux, **user)

    def cut_happened(self) -> bool:
        return bool(self.hp.cut)


__all__ = ["Device", "DeviceError", "Pending", "BUF_BASE", "R_CUT"]
