# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_admin: admin SQEs to queue operations, PRP setups, window writes, firmware requests and
CQEs, against the NVMe reference model.

Around the DUT, plain-Python models of its neighbours:
  - the queue manager: queue operations answered from its own queue table with the checks of
    rtl/nvme/README.md "ats_nvme_qm" (from the fields the DUT sends, not from the SQE), `ioq_any`
    from that table, `sq_busy` held for a while after a Delete SQ, CQE requests taken with random
    stalls only while CQ 0 has room (`cq_room`, toggled at random);
  - ats_nvme_prp: setups answered from the reference walk (`NvmeRef.prp_walk`) over host memory,
    window writes translated through the walk into host memory (unreachable pages set `slot_err`),
    the write-order counters `wr_acc` / `wr_done` (bursts of other producers counted too, `wr_done`
    following after random delays);
  - the firmware (ats_admin): §1 IDENTIFY / GET_LOG descriptors answered with 128 words on `s_lwr`
    (random gaps) and a completion, now and then with an error status; §1 FEATURE descriptors (Set /
    Get Features of FIDs 0xC0 … 0xFF) answered by a firmware feature model of its own
    (`nvme_ref.FwFeatures`: SEAL_TIME 0xC0 held, other FIDs BAD_FIELD), no words, now and then an
    error status with a random result (DW0 must stay 0);
  - ats_nvme_cmd: SQEs handed over one at a time while `adm_busy` is low, SMART events between them.
Reference: `atstb.nvme_ref.NvmeRef._admin` on its own copy of host memory, with the same firmware
answers (its FEATURE requests answered by its own `FwFeatures`, the same default): every firmware
request equals the reference's (op, tag, FEATURE's lba / nlb / aux, dptr), every CQE request equals
the reference's (SQ head, CID, status with DNR, DW0), host memory
equals the reference's after every command, `vwc` equals the reference's VWC feature, no CQE before
`wr_done` reached the `wr_acc` of its window burst, no CQE of a Delete SQ while its SQ is busy.

Environment: ATS_SEED, ATS_LONG=1.
"""
from __future__ import annotations

import copy
import os
import random
import struct
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from atstb import nvme_ref as R
from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
PAGE = 4096
LIMIT = 1 << 36
NQ = 4
QSIZE = 256
LOCAL_ADDR = 0x8000_0000


class QmModel:
    """The queue manager's queue table and checks (rtl/nvme/README.md "ats_nvme_qm")."""

    def __init__(self):
        self.cqs: dict[int, dict] = {}
        self.sqs: dict[int, dict] = {}

    def op(self, q: dict) -> tuple[int, int]:
        op, qid = q["op"], q["qid"]
        table = self.sqs if op in (1, 3) else self.cqs
        if not 1 <= qid <= NQ:
            return R.SC_INVALID_QID
        if op in (0, 1):
            if qid in table:
                return R.SC_INVALID_QID
            if not 2 <= q["qsz"] + 1 <= QSIZE:
                return R.SC_INVALID_QSIZE
            if not q["pc"]:
                return R.SC_INVALID_FIELD
            if op == 0:
                if q["iv"] >= 32:
                    return R.SC_INVALID_IV
                table[qid] = {"base": q["base"] & ~0xFFF, "size": q["qsz"] + 1, "iv": q["iv"], "ien": q["ien"]}
            else:
                if q["iv"] not in self.cqs:
                    return R.SC_CQ_INVALID
                table[qid] = {"base": q["base"] & ~0xFFF, "size": q["qsz"] + 1, "cqid": q["iv"],
                              "prio": 3 - q["qprio"]}
            return R.SC_OK
        if qid not in table:
            return R.SC_INVALID_QID
        if op == 2 and any(s["cqid"] == qid for s in self.sqs.values()):
            return R.SC_INVALID_QDEL
        del table[qid]
        return R.SC_OK


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 5)
        self.qdepth = int(dut.QDEPTH.value)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        self.mem = R.HostMemory(limit=LIMIT, base=0x100000)       # what the DUT writes
        self.rmem = R.HostMemory(limit=LIMIT, base=0x100000)      # what the reference writes
        seal0 = self.rng.randrange(R.FEAT_MAX[R.FEAT_SEAL_TIME] + 1)   # the build's SEAL_TIME default
        self.fw_feat = R.FwFeatures(seal_time=seal0)                    # the firmware's (the DUT's)
        cfg = R.NvmeRefConfig(qdepth=self.qdepth, page_bytes=self.page_bytes, nq=NQ, qsize=QSIZE,
                              num_lbas=self.num_lbas, fw_identify=bytes(64), stx=int(dut.STX.value),
                              atx=int(dut.ATX.value),
                              num_tx=int(dut.NUM_TX.value), tx_entries=int(dut.TX_ENTRIES.value),
                              fw_features=R.FwFeatures(seal_time=seal0))   # the reference's own
        self.ref = R.NvmeRef(cfg, mem=self.rmem)
        self.ref.sqs[0] = R._Sq(0, 0, 64, cqid=0)
        self.ref.cqs[0] = R._Cq(0, 0, 64)
        self.qm = QmModel()
        rp = lambda: pause_gen(self.rng, True)          # noqa: E731
        self.adm = StreamSource(dut, "s_adm", dut.clk, ["data", "sqhd"], pause=rp())
        self.qop = StreamSink(dut, "m_qop", dut.clk, ["op", "qid", "qsz", "base", "pc", "ien", "iv", "qprio"],
                              pause=rp())
        self.qrsp = StreamSource(dut, "s_qrsp", dut.clk, ["status"], pause=rp())
        self.set = StreamSink(dut, "m_set", dut.clk, ["slot", "prp1", "prp2", "len"], pause=rp())
        self.setr = StreamSource(dut, "s_setr", dut.clk, ["status"], pause=rp())
        self.wwr = StreamSink(dut, "m_wwr", dut.clk, ["addr", "data", "last"],
                              pause=pause_gen(self.rng, "heavy", max_stall=12))
        # the firmware's port: random backpressure, or held off (hold_fw: a request offered and not
        # taken when the controller reset comes)
        self.hold_fw = False

        def fw_pause(base=rp()):
            while True:
                yield True if self.hold_fw else next(base)
        self.fcmd = StreamSink(dut, "m_cmd", dut.clk, ["op", "tag", "lba", "nlb", "dptr", "aux"], pause=fw_pause())
        self.lwr = StreamSource(dut, "s_lwr", dut.clk, ["data"], pause=rp())
        self.room = 1
        self.cqe_taken: list[dict] = []
        dut.m_cqe_ready.value = 0
        for n, v in (("st_rdy", 1), ("st_dis", 0), ("ioq_any", 0), ("sq_busy", 0), ("slot_err", 0), ("wr_acc", 0),
                     ("wr_done", 0), ("s_cpl_valid", 0), ("s_cpl_status", 0), ("s_cpl_result", 0),
                     ("smart_rd", 0),
                     ("smart_wr", 0), ("smart_bytes", 0), ("cq_room", 1)):
            getattr(dut, n).value = v
        self.slot_err = 0
        self.acc = self.done = 0                  # wr_acc / wr_done, unwrapped
        self.pending_done: list[int] = []         # cycles at which wr_done moves on
        self.need = 0                             # wr_acc after the DUT's last window burst
        self.walk: list[int] | None = None        # the admin slot's pages
        self.win: tuple[int, int] = (0, 0)        # its open window (offset, length)
        self.w_off: int | None = None             # offset of the next beat of the burst
        self.fw_jobs: list[dict] = []             # firmware answers under way
        self.fw_status = 0                        # the firmware's status of the current command
        self.abandon = False                      # a controller reset comes while the firmware answers
        self.fw_words = 128                       # words the firmware sends for this answer
        self.fw_expect: dict | None = None        # the §1 request the current command must send
        self.n_fw = {"data": 0, "feat": 0}        # commands that may ask the firmware, by kind
        self.seal_set = False                     # a Set Features 0xC0 completed OK
        self.n_vendor = 0                         # vendor Set / Get Features made
        self.busy_sq: dict[int, int] = {}         # sq -> cycle its busy bit drops
        self.cycle = 0
        self.stats = dict(cmds=0, cqe=0, err_cqe=0, aer=0, qop=0, fw=0, fw_fail=0, data=0, xfer=0,
                          drain=0, full_cq=0, smart=0, rdy_drop=0, feat_set=0, feat_get=0, feat_readback=0,
                          feat_bad=0, feat_fail=0, feat_abandoned=0, feat_sv_sel=0, early=0, feat_early=0)
        cocotb.start_soon(self._cqe_port())
        every_edge(dut.clk, self._edge)

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(5):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    async def _cqe_port(self) -> None:
        """The queue manager's CQE side (mid-cycle): CQ 0 fills and drains at random; a request is
        taken only while it has room; a request newly presented must have seen room the cycle
        before (cq_room's contract)."""
        d, pause = self.dut, pause_gen(self.rng, True)
        room_last, cur = self.room, False
        while True:
            await FallingEdge(d.clk)
            v = bool(int(d.m_cqe_valid.value))
            if v and not cur:
                assert room_last, "CQE request presented while CQ 0 was full"
            cur = v
            if self.rng.random() < 0.02:
                self.room ^= 1
                self.stats["full_cq"] += not self.room
                d.cq_room.value = self.room
            take = v and self.room and not next(pause)
            d.m_cqe_ready.value = int(take)
            room_last = self.room
            if take:
                cur = False
                self.cqe_taken.append({f: int(getattr(d, f"m_cqe_{f}").value)
                                       for f in ("sqhd", "cid", "status", "dw0")})

    # ------------------------------------------------------------------ every edge: the models
    def _edge(self) -> None:
        self.cycle += 1
        d = self.dut
        # write-order counters: bursts of other producers now and then
        if self.rng.random() < 0.02:
            self.acc += 1
            self.pending_done.append(max(self.pending_done[-1] if self.pending_done else 0,
                                         self.cycle + self.rng.randrange(1, 40)))
        while self.pending_done and self.pending_done[0] <= self.cycle:
            self.pending_done.pop(0)
            self.done += 1
        # queue operations
        while self.qop.queue:
            q = self.qop.queue.popleft()
            st = self.qm.op(q)
            self.stats["qop"] += 1
            if st == R.SC_OK and q["op"] == 3 and self.rng.random() < 0.8:
                self.busy_sq[q["qid"]] = self.cycle + self.rng.randrange(1, 80)
                self.stats["drain"] += 1
            self.qrsp.send_nowait(status=st[0] << 8 | st[1])
        d.ioq_any.value = int(bool(self.qm.sqs or self.qm.cqs))
        for q in [q for q, c in self.busy_sq.items() if c <= self.cycle]:
            del self.busy_sq[q]
        d.sq_busy.value = sum(1 << q for q in self.busy_sq)
        # prp model: the admin slot's setup
        while self.set.queue:
            s = self.set.queue.popleft()
            assert s["slot"] == self.qdepth, f"setup of slot {s['slot']}, not the admin slot"
            self.slot_err = 0
            try:
                self.walk = self.ref.prp_walk(s["prp1"], s["prp2"], s["len"])
                self.win = (s["prp1"] & 0xFFF, s["len"])
                st = 0
            except R._Fail as f:
                st = {R.SC_PRP_OFFSET: 1, R.SC_DATA_XFER: 2}[f.status]
                self.walk, self.win = None, (0, 0)
            self.setr.send_nowait(status=st)
        # prp model: window writes
        while self.wwr.queue:
            b = self.wwr.queue.popleft()
            if self.w_off is None:
                slot, self.w_off = b["addr"] >> 17, b["addr"] & 0x1FFFF
                assert slot == self.qdepth, f"window write to slot {slot}"
            off = self.w_off
            lo, ln = self.win
            assert self.walk is not None and lo <= off and off + 4 <= lo + ln, (
                f"window write at {off:#x} outside the open window {lo:#x}+{ln}")
            try:
                self.mem.write(self.walk[off >> 12] + (off & 0xFFF), struct.pack("<I", b["data"]))
            except R.DmaError:
                self.slot_err = 1
            self.w_off += 4
            if b["last"]:
                self.w_off = None
                self.acc += 1
                self.need = self.acc
                self.pending_done.append(max(self.pending_done[-1] if self.pending_done else 0,
                                             self.cycle + self.rng.randrange(2, 60)))
        d.wr_acc.value = self.acc & 0xFF
        d.wr_done.value = self.done & 0xFF
        d.slot_err.value = self.slot_err
        # the firmware
        d.s_cpl_valid.value = 0
        while self.fcmd.queue:
            c = self.fcmd.queue.popleft()
            c.pop("_cycle")
            assert c == self.fw_expect, f"firmware request {c}, expected {self.fw_expect}"
            self.fw_expect = None
            self.stats["fw"] += 1
            if c["op"] == R.OP_FEATURE:                 # no words; an injected error with a stray result
                words = []
                st, res = (self.fw_status, self.rng.getrandbits(32)) if self.fw_status else \
                    self.fw_feat.answer(R.Descriptor(c["op"], c["tag"], c["lba"], c["nlb"], aux=c["aux"]))
            else:
                ans = self.ref.fw_identify[:64] if c["op"] == R.OP_IDENTIFY else self.ref.fw_log()[:512]
                ans = ans.ljust(512, b"\0")
                words = list(struct.unpack("<128I", ans))[:self.fw_words] if self.fw_status == 0 else []
                self.stats["short"] = self.stats.get("short", 0) + (self.fw_words < 128)
                st, res = self.fw_status, self.rng.getrandbits(32)     # the result is not DW0 here
            late = self.rng.randrange(150, 400) if self.abandon else self.rng.randrange(1, 30)
            # the firmware answers one request at a time, in order (ats_admin)
            self.fw_jobs.append({"at": self.cycle + late, "words": words, "st": st, "res": res, "queued": False,
                                 "words_at": self.cycle + late - 60 if self.abandon else self.cycle})
        if self.fw_jobs:
            j = self.fw_jobs[0]
            if not j["queued"] and self.cycle >= j["words_at"]:     # an abandoned answer comes late
                for w in j["words"]:
                    self.lwr.send_nowait(data=w)
                j["queued"] = True
            if j["queued"] and not self.lwr.queue and j["at"] <= self.cycle:
                self.fw_jobs.pop(0)
                d.s_cpl_valid.value = 1
                d.s_cpl_status.value = j["st"]
                d.s_cpl_result.value = j["res"]

    # ------------------------------------------------------------------ host memory and SQEs
    def alloc(self, size: int) -> int:
        a = self.mem.alloc(size)
        assert self.rmem.alloc(size) == a
        return a

    def page(self) -> int:
        if self.rng.random() < 0.03:
            return LIMIT + PAGE * self.rng.randrange(1, 100)
        a = self.alloc(PAGE)
        init = self.rng.randbytes(PAGE)
        self.mem.write(a, init)
        self.rmem.write(a, init)
        return a

    def prps(self, ln: int) -> tuple[int, int]:
        off = 4 * self.rng.randrange(1024) if self.rng.random() < 0.5 else 0
        if self.rng.random() < 0.02:
            off |= 2
        n = -(-((off & 0xFFF) + ln) // PAGE)
        pages = [self.page() for _ in range(n)]
        if n <= 2:
            p2 = pages[1] if n == 2 else 0
            if n == 2 and self.rng.random() < 0.02:
                p2 |= 0x10                                     # PRP2 with an offset
            return pages[0] + off, p2
        lp = self.alloc(PAGE)
        body = struct.pack(f"<{n - 1}Q", *pages[1:])
        if self.rng.random() < 0.02:
            body = body[:8] + struct.pack("<Q", pages[2] | 0x20) + body[16:]   # an entry with an offset
        self.mem.write(lp, body)
        self.rmem.write(lp, body)
        return pages[0] + off, lp

    def make_sqe(self) -> bytes:
        r = self.rng
        d = [0] * 16
        d[0] = r.getrandbits(16) << 16
        k = r.random()
        ln = 0
        if k < 0.25:
            opc = R.ADM_IDENTIFY
            d[10] = r.choice([0, 1, 1, 1, 2, 3]) if r.random() < 0.95 else r.choice([4, 0x10, 0xFF])
            d[1] = 1 if r.random() < 0.8 else r.choice([0, 2, 0xFFFFFFFE, 0xFFFFFFFF])
            ln = PAGE
        elif k < 0.5:
            opc = R.ADM_GET_LOG
            lid = r.choice([1, 2, 2, 3, 0xC0, 0xC0]) if r.random() < 0.95 else r.choice([0, 4, 0x80, 0xC1])
            size = R.LOG_BYTES.get(lid, 512)
            numd = r.randrange(1, size // 4 + 1) if r.random() < 0.85 else r.choice([1, 2048, 16384, 16385])
            off = 4 * r.randrange(size // 4) if r.random() < 0.5 else 0
            if r.random() < 0.04:
                off = r.choice([off | 2, size, 1 << 33])
            d[10] = lid | ((numd - 1) & 0xFFFF) << 16
            d[11] = (numd - 1) >> 16
            d[12], d[13] = off & 0xFFFFFFFF, off >> 32
            ln = min(numd * 4, 65536)
        elif k < 0.7:
            opc = r.choice([R.ADM_CREATE_CQ, R.ADM_CREATE_SQ, R.ADM_DELETE_SQ, R.ADM_DELETE_CQ])
            qid = r.randrange(1, NQ + 1) if r.random() < 0.9 else r.choice([0, NQ + 1, 0xFFFF])
            have = {R.ADM_DELETE_SQ: self.ref.sqs, R.ADM_DELETE_CQ: self.ref.cqs}.get(opc)
            if have is not None and len(have) > 1 and r.random() < 0.7:
                qid = r.choice([q for q in have if q])            # mostly queues that exist
            elif opc == R.ADM_CREATE_SQ and r.random() < 0.5:
                opc = R.ADM_CREATE_CQ if len(self.ref.cqs) == 1 else opc
            size = r.randrange(2, QSIZE + 1) if r.random() < 0.9 else r.choice([1, QSIZE + 1, 0x10000])
            d[10] = qid | ((size - 1) & 0xFFFF) << 16
            pc = 1 if r.random() < 0.95 else 0
            if opc == R.ADM_CREATE_CQ:
                iv = r.randrange(32) if r.random() < 0.9 else r.choice([32, 0xFFFF])
                d[11] = pc | r.randrange(2) << 1 | iv << 16
            else:
                cqid = r.randrange(1, NQ + 1) if r.random() < 0.9 else r.choice([0, NQ + 1])
                if len(self.ref.cqs) > 1 and r.random() < 0.7:
                    cqid = r.choice([q for q in self.ref.cqs if q])
                d[11] = pc | r.randrange(4) << 1 | cqid << 16
            p = r.getrandbits(44) << 12 | r.getrandbits(12)
            d[6], d[7] = p & 0xFFFFFFFF, p >> 32
        elif k < 0.85:
            opc = r.choice([R.ADM_SET_FEATURES, R.ADM_GET_FEATURES])
            if r.random() < 0.45:                       # the device's (FEATURE): mostly SEAL_TIME
                d[10] = R.FEAT_SEAL_TIME if r.random() < 0.75 else r.choice([0xC1, 0xC7, 0xE0, 0xFF])
                d[11] = r.randrange(0x10000) if r.random() < 0.8 else r.choice([0x10000, 0xFFFFFFFF,
                                                                                  r.getrandbits(32)])
                self.n_vendor += 1
                if self.n_vendor % 5 == 2:              # Save / SEL on every 5th: the path not left to chance
                    d[10] |= r.choice([1 << 31, r.randrange(1, 8) << 8])
            else:
                d[10] = r.choice([6, 7, 8, 0x0B]) if r.random() < 0.9 else r.choice([1, 2, 5, 0x80, 0xBF])
                d[11] = r.getrandbits(32) if r.random() < 0.5 else r.randrange(2)
                if d[10] == 7 and r.random() < 0.2:
                    d[11] |= 0xFFFF << r.choice([0, 16])
            if r.random() < 0.1:                        # Save (Set) / SEL (Get), other bits: ignored
                d[10] |= r.choice([1 << 31, r.randrange(1, 8) << 8, r.getrandbits(24) << 8])
        elif k < 0.92:
            opc = R.ADM_AER
        elif k < 0.96:
            opc = R.ADM_ABORT
            d[10] = r.getrandbits(32)
        else:
            opc = r.choice([0x03, 0x07, 0x0B, 0x10, 0x7F, 0x81, 0xC0])
        d[0] |= opc
        if r.random() < 0.03:
            d[0] |= r.choice([1 << 8, 2 << 8, 1 << 14, 2 << 14])
        if ln:
            prp1, prp2 = self.prps(ln)
            d[6], d[7], d[8], d[9] = prp1 & 0xFFFFFFFF, prp1 >> 32, prp2 & 0xFFFFFFFF, prp2 >> 32
        return struct.pack("<16I", *d)

    # ------------------------------------------------------------------ one command
    async def command(self, raw: bytes) -> None:
        d, r = self.dut, self.rng
        cmd = R._Cmd.parse(raw)
        sqhd = r.randrange(64)
        # fresh firmware answers, and whether the firmware fails this one
        # a short answer now and then (ats_admin sends 128 words; a shorter one must not leave an
        # older answer's words in the buffer): the words it does not send are 0 in the reference
        self.fw_words = 128 if r.random() < 0.9 else r.randrange(0, 128)
        self.ref.fw_identify = r.randbytes(64)[:4 * self.fw_words].ljust(64, b"\0")
        log = r.randbytes(512)[:4 * self.fw_words].ljust(512, b"\0")
        self.ref.fw_log = lambda: log
        self.fw_status = 0 if r.random() < 0.93 else r.choice([1, 2, 3, 7, 0x10, 0x42])
        self.abandon = self.fw_status == 0 and r.random() < 0.06
        # every 8th command of a kind that may ask the firmware (Identify Controller / LID 0xC0;
        # a vendor Set / Get Features) fails there, and every 8th (offset 4) is abandoned: the two
        # paths are not left to chance (about 55 of each kind a run)
        vendor = cmd.opc in (R.ADM_SET_FEATURES, R.ADM_GET_FEATURES) and cmd.cdw[10] & 0xFF >= R.FID_VENDOR
        kind = "feat" if vendor else "data" if (cmd.opc == R.ADM_IDENTIFY and cmd.cdw[10] & 0xFF == 1) or \
            (cmd.opc == R.ADM_GET_LOG and cmd.cdw[10] & 0xFF == 0xC0) else None
        # and every 8th (offset 5) is abandoned before its request is taken: the firmware's port held
        # off, the reset, then the request must stay offered, unchanged, until it is taken (rtl/nvme/
        # README.md "Controller reset while the firmware answers"), its answer swallowed
        early = False
        if kind:
            self.n_fw[kind] += 1
            if self.n_fw[kind] % 8 == 3 and not self.fw_status and not self.abandon:
                self.fw_status = 0x10
            elif self.n_fw[kind] % 8 == 7 and not self.fw_status:
                self.abandon = True
            elif self.n_fw[kind] % 8 == 5 and not self.fw_status and not self.abandon:
                early = True
        saved = copy.deepcopy(self.rmem.pages) if self.fw_status or self.abandon or early else None
        feat_saved = copy.deepcopy(self.ref.fw_features) if self.fw_status else None
        before = len(self.ref.cqs[0].pending)
        aers = len(self.ref._aers)
        n_req = len(self.ref.fw_requests)
        self.ref._admin(cmd, sqhd)
        exp = self.ref.cqs[0].pending[-1][1] if len(self.ref.cqs[0].pending) > before else None
        if exp is not None:
            self.ref.cqs[0].pending.pop()
        asks_fw = exp is not None and exp.sct == 0 and exp.sc in (0, 4) and (
            (cmd.opc == R.ADM_IDENTIFY and cmd.cdw[10] & 0xFF == 1) or
            (cmd.opc == R.ADM_GET_LOG and cmd.cdw[10] & 0xFF == 0xC0))
        # the firmware is asked once the PRP walk succeeded
        if asks_fw:
            walk_ok = True
            try:
                self.ref.prp_walk(cmd.prp1, cmd.prp2, PAGE if cmd.opc == R.ADM_IDENTIFY else
                                  4 * (((cmd.cdw[11] & 0xFFFF) << 16 | cmd.cdw[10] >> 16) + 1))
            except R._Fail:
                walk_ok = False
            if walk_ok:
                self.fw_expect = dict(op=R.OP_IDENTIFY if cmd.opc == R.ADM_IDENTIFY else R.OP_GET_LOG, lba=0,
                                      nlb=0, aux=0)
        # a vendor Set / Get Features: the FEATURE the reference sent (or none: FUSE / PSDT)
        assert len(self.ref.fw_requests) - n_req <= 1
        for f in self.ref.fw_requests[n_req:]:
            assert f.tag == self.qdepth
            self.fw_expect = dict(op=f.op, lba=f.lba, nlb=f.nlb, aux=f.aux)
        if self.fw_expect is None:
            self.fw_status = 0
            self.abandon = False
            early = False
        else:
            self.fw_expect.update(tag=self.qdepth, dptr=LOCAL_ADDR)
            if self.fw_status:
                st = R.nvme_status(self.fw_status)           # §1.8, as for the core's statuses
                exp.sct, exp.sc, exp.dnr, exp.dw0 = st[0], st[1], 1, 0
                self.rmem.pages = saved                       # no data for a failed answer
                self.ref.fw_features = feat_saved             # nor a setting changed
                self.stats["fw_fail"] += 1
                self.stats["feat_fail"] += vendor
            elif self.abandon or early:                       # st_dis while the answer is awaited
                exp.sct, exp.sc, exp.dnr, exp.dw0 = R.SC_INTERNAL[0], R.SC_INTERNAL[1], 1, 0
                self.rmem.pages = saved
            elif vendor:
                ok = (exp.sct, exp.sc) == R.SC_OK
                seal = cmd.cdw[10] & 0xFF == R.FEAT_SEAL_TIME
                self.stats["feat_set" if cmd.opc == R.ADM_SET_FEATURES else "feat_get"] += ok
                self.stats["feat_bad"] += not ok
                self.stats["feat_readback"] += ok and seal and self.seal_set and cmd.opc == R.ADM_GET_FEATURES
                self.stats["feat_sv_sel"] += cmd.cdw[10] >> 8 != 0
                self.seal_set |= ok and seal and cmd.opc == R.ADM_SET_FEATURES
        self.hold_fw = early
        self.adm.send_nowait(data=int.from_bytes(raw, "little"), sqhd=sqhd)
        self.stats["cmds"] += 1
        drain = None
        for _ in range(200_000):
            await RisingEdge(d.clk)
            if early and int(d.m_cmd_valid.value) and not int(d.st_dis.value):
                d.st_dis.value = 1                              # the request offered, not taken
                self.stats["early"] += 1
                self.stats["feat_early"] += vendor
            if self.abandon and self.fw_expect is None and not int(d.st_dis.value):
                d.st_dis.value = 1                              # the firmware has the request now
                self.stats["abandoned"] = self.stats.get("abandoned", 0) + 1
                self.stats["feat_abandoned"] += vendor
            if cmd.opc == R.ADM_DELETE_SQ and self.busy_sq:
                drain = max(self.busy_sq.values())
            if self.cqe_taken:
                break
            if exp is None and not self.adm.queue and not int(d.adm_busy.value):
                break
        else:
            raise AssertionError(f"admin command {cmd.opc:#x} never completed")
        d.st_dis.value = 0
        self.abandon = False
        if early:
            # the command ended (its CQE above); its request is still offered and the next admin SQE
            # is not taken; once the firmware's port takes it, it is answered and the answer swallowed
            for _ in range(self.rng.randrange(1, 60)):
                await RisingEdge(d.clk)
                assert int(d.m_cmd_valid.value) and self.fw_expect is not None, \
                    "a request abandoned before it was taken was withdrawn"
                assert not int(d.s_adm_ready.value), "an admin SQE taken while an abandoned request is offered"
            self.hold_fw = False
            for _ in range(1000):
                await RisingEdge(d.clk)
                if self.fw_expect is None:
                    break
            assert self.fw_expect is None, "the abandoned request was never taken"
        if exp is None:                                     # a parked AER: no CQE
            assert len(self.ref._aers) == aers + 1
            self.stats["aer"] += 1
            for _ in range(10):
                await RisingEdge(d.clk)
            assert not self.cqe_taken, f"a CQE for a parked AER: {self.cqe_taken}"
        else:
            got = self.cqe_taken.pop(0)
            want = {"sqhd": exp.sqhd, "cid": exp.cid, "status": exp.dnr << 14 | exp.sct << 8 | exp.sc,
                    "dw0": exp.dw0}
            assert got == want, f"admin {cmd.opc:#x} cdw10 {cmd.cdw[10]:#x}: CQE {got} != the reference's {want}"
            assert self.done >= self.need, f"CQE before its window writes were issued ({self.done} < {self.need})"
            if drain is not None:
                assert self.cycle >= drain, "Delete SQ completed while its SQ still had commands"
            self.stats["cqe"] += 1
            self.stats["err_cqe"] += want["status"] != 0
            self.stats["data"] += cmd.opc in (R.ADM_IDENTIFY, R.ADM_GET_LOG) and want["status"] == 0
            self.stats["xfer"] += (exp.sct, exp.sc) == R.SC_DATA_XFER
        assert self.fw_expect is None, "the firmware was not asked"
        if self.mem.pages != self.rmem.pages:
            diff = [(pg, next(i for i in range(PAGE) if self.mem.pages.get(pg, bytes(PAGE))[i] != self.rmem.pages.get(pg, bytes(PAGE))[i]))
                    for pg in set(self.mem.pages) | set(self.rmem.pages)
                    if self.mem.pages.get(pg, bytes(PAGE)) != self.rmem.pages.get(pg, bytes(PAGE))]
            pg, i = diff[0]
            raise AssertionError(f"host memory differs from the reference after {cmd.opc:#x} cdw10 {cmd.cdw[10]:#x} "
                                 f"cdw11 {cmd.cdw[11]:#x} cdw12 {cmd.cdw[12]:#x}: page {pg:#x} byte {i}: "
                                 f"{self.mem.pages.get(pg, bytes(PAGE))[i & ~15:(i & ~15) + 32].hex()} != "
                                 f"{self.rmem.pages.get(pg, bytes(PAGE))[i & ~15:(i & ~15) + 32].hex()}")
        assert int(d.vwc.value) == self.ref.features[R.FID_VWC]
        # the queue tables: the DUT's queue operations left what the reference made
        assert set(self.qm.cqs) == {q for q in self.ref.cqs if q} and set(self.qm.sqs) == {q for q in self.ref.sqs if q}
        for q, c in self.qm.cqs.items():
            rc = self.ref.cqs[q]
            assert (c["base"], c["size"], c["iv"], c["ien"]) == (rc.base, rc.size, rc.iv, int(rc.ien)), (c, rc)
        for q, s in self.qm.sqs.items():
            rs = self.ref.sqs[q]
            assert (s["base"], s["size"], s["cqid"], s["prio"]) == (rs.base, rs.size, rs.cqid, rs.prio), (s, rs)

    async def queue_cycle(self) -> None:
        """A valid Create CQ, Create SQ on it, Delete SQ, Delete CQ (the Delete SQ often waits for
        its SQ's commands), on a queue id that is free."""
        free = [q for q in range(1, NQ + 1) if q not in self.ref.cqs and q not in self.ref.sqs]
        if not free:
            return
        q, r = self.rng.choice(free), self.rng
        base = r.getrandbits(40) << 12
        for opc, c10, c11 in ((R.ADM_CREATE_CQ, q | r.randrange(1, QSIZE) << 16, 1 | r.randrange(2) << 1 | r.randrange(32) << 16),
                              (R.ADM_CREATE_SQ, q | r.randrange(1, QSIZE) << 16, 1 | r.randrange(4) << 1 | q << 16),
                              (R.ADM_DELETE_SQ, q, 0), (R.ADM_DELETE_CQ, q, 0)):
            await self.command(struct.pack("<16I", opc | r.getrandbits(16) << 16, 0, 0, 0, 0, 0,
                                           base & 0xFFFFFFFF, base >> 32, 0, 0, c10, c11, 0, 0, 0, 0))
        self.stats["queue_cycle"] = self.stats.get("queue_cycle", 0) + 1

    async def feature_cycle(self) -> None:
        """Vendor features in a row: Get SEAL_TIME, Set it in range, Get it back, Set it out of range,
        Get and Set an unknown vendor FID, Set an unknown FID below 0xC0 (the front end's Invalid Field,
        no FEATURE); each checked against the reference like any command."""
        r = self.rng
        bad = r.choice([0xC1, 0xD5, 0xFF])
        low = r.choice([0x80, 0xBF, r.randrange(0x0C, 0xC0)])
        for opc, fid, v in ((R.ADM_GET_FEATURES, R.FEAT_SEAL_TIME, 0),
                            (R.ADM_SET_FEATURES, R.FEAT_SEAL_TIME, r.randrange(0x10000)),
                            (R.ADM_GET_FEATURES, R.FEAT_SEAL_TIME, r.getrandbits(32)),
                            (R.ADM_SET_FEATURES, R.FEAT_SEAL_TIME, r.randrange(0x10000, 1 << 32)),
                            (R.ADM_GET_FEATURES, bad, 0), (R.ADM_SET_FEATURES, bad, r.randrange(0x10000)),
                            (R.ADM_SET_FEATURES, low, r.randrange(0x10000))):
            await self.command(struct.pack("<16I", opc | r.getrandbits(16) << 16, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                           fid, v, 0, 0, 0, 0))
        self.stats["feature_cycle"] = self.stats.get("feature_cycle", 0) + 1

    async def smart_events(self) -> None:
        """ats_nvme_cmd's SMART events between commands: reads and writes completed OK."""
        d = self.dut
        for _ in range(self.rng.randrange(1, 6)):
            rd = self.rng.random() < 0.5
            n = self.rng.choice([512, 4096, 65536, self.rng.randrange(1, 65537)])
            d.smart_rd.value, d.smart_wr.value, d.smart_bytes.value = int(rd), int(not rd), n
            await RisingEdge(d.clk)
            if rd:
                self.ref.read_cmds += 1
                self.ref.bytes_read += n
            else:
                self.ref.write_cmds += 1
                self.ref.bytes_written += n
            d.smart_rd.value = d.smart_wr.value = 0
            self.stats["smart"] += 1
        for _ in range(3):                  # the data units register follows a cycle later
            await RisingEdge(d.clk)

    async def controller_reset(self) -> None:
        """CSTS.RDY low for a while (a controller reset): features and parked AERs are dropped, the
        queue manager deletes every queue."""
        d = self.dut
        if self.rng.random() < 0.7:                       # a feature away from its default first
            await self.command(struct.pack("<16I", R.ADM_SET_FEATURES | 0x77 << 16, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                           R.FID_VWC, 0, 0, 0, 0, 0))
            assert int(d.vwc.value) == 0
        d.st_rdy.value = 0
        for _ in range(self.rng.randrange(1, 10)):
            await RisingEdge(d.clk)
        d.st_rdy.value = 1
        await RisingEdge(d.clk)
        self.ref.features = {R.FID_VWC: 1, R.FID_INT_COALESCING: 0, R.FID_ASYNC_EVENT: 0}
        self.ref._aers = []
        for t in (self.ref.sqs, self.ref.cqs):
            for q in [q for q in t if q]:
                del t[q]
        self.qm.sqs.clear()
        self.qm.cqs.clear()
        assert int(d.vwc.value) == 1, "Volatile Write Cache not back to its default after a controller reset"
        self.stats["rdy_drop"] += 1


@cocotb.test()
async def admin_random(dut):
    tb = TB(dut)
    await tb.reset()
    n = 1200 if LONG else 300
    for i in range(n):
        if tb.rng.random() < 0.1:
            await tb.smart_events()
        if tb.rng.random() < 0.03:
            await tb.controller_reset()
        if i % 50 == 25:
            await tb.queue_cycle()
        if i % 50 == 40:
            await tb.feature_cycle()
        await tb.command(tb.make_sqe())
    dut._log.info("admin: %s", tb.stats)
    for k in ("cqe", "err_cqe", "aer", "qop", "fw", "fw_fail", "data", "xfer", "drain", "full_cq", "smart",
              "rdy_drop", "queue_cycle", "feature_cycle", "abandoned", "short", "feat_set", "feat_get",
              "feat_readback", "feat_bad", "feat_fail", "feat_abandoned", "feat_sv_sel", "early", "feat_early"):
        assert tb.stats[k] > 0, f"no {k}: {tb.stats}"


CONFIGS = {"q32_p4096": {"QDEPTH": 32, "PAGE_BYTES": 4096, "NUM_LBAS": 16384},
           "q4_p512": {"QDEPTH": 4, "PAGE_BYTES": 512, "NUM_LBAS": "64'h2_0000_3039", "STX": 2, "ATX": 3}}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_admin(cfg):
    run(toplevel="ats_nvme_admin", sources=block_sources("ats_nvme_admin", "ats_stream_check") + [HERE / "ats_nvme_admin_bind.sv"], test_module="test_ats_nvme_admin",
        test_dir=HERE, build_key=cfg, parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES"),
        extra_env={"ATS_LONG": "1" if LONG else "0"}, public={})   # the test reads only the top's signals
