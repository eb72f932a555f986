# SPDX-License-Identifier: Apache-2.0
"""ats_nvme_rq: DMA reads and writes of host memory through cocotbext-pcie's root complex.

The host is cocotbext-pcie's root complex with the UltraScale+ hard-IP model; host memory is a
region of the root complex. The root complex's memory-read handler is replaced by `HostReads`: it
answers each read TLP with completions split at random read-completion boundaries, after random
delays, interleaving the completions of different tags (as real root complexes do, and the stock
handler does not), and sabotages some: Unsupported Request, Completer Abort, or no completion at all
(the DUT's timeout; the hard IP's own tag bookkeeping is released as its completion timeout would).

Reference (plain Python, from the module header of ats_nvme_rq.sv):
  - every read request's dwords, in request order, equal host memory, except the dwords of a
    sabotaged TLP, which come as zeros with `err`; `last` on the last dword; `id` on every dword;
  - the TLPs follow the requests in order, tile them exactly, never exceed MRRS (reads) / MPS
    (writes) and never cross 4 KiB;
  - after the writes, host memory equals a shadow copy with every write request applied in order;
    `m_wdone` pulses once per write request, in order, with its id;
  - a write outside host memory: the root complex drops its TLPs (no completion: posted) and the
    test's root port refuses each one with `wr_ur` at its last beat on RQ (as the full-system
    simulation's root port does); the request's `m_wdone` has `err`, the requests around it none. Some
    start inside and run past the end of host memory: their first TLPs land, the later are refused;
  - without bus master enable nothing reaches the host: reads end with `err` on every dword, writes
    report `m_wdone_err` and memory is unchanged; with it back on, traffic is correct again;
  - the counters: read TLPs in error, timeouts, dropped completions.
Random idle and backpressure on every stream (requests, data, RQ, RC).

Environment: ATS_SEED (seed, via the runner), ATS_LONG=1 (more requests).
"""
from __future__ import annotations

import logging
import os
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice

from atstb.runner import block_sources, run
from atstb.streams import StreamSink, StreamSource, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")
MEM = 1 << 20                     # host memory region: reads in the low half, writes in the high half


class HostReads:
    """The root complex's memory reads, with interleaving, random splits and sabotage."""

    def __init__(self, tb, p_bad: float):
        self.tb, self.rng, self.p_bad = tb, tb.rng, p_bad
        self.reqs: list[list] = []      # [addr, ndw, covered bytes, sabotaged] per read request, in order
        self.k = 0                      # the request the next TLP belongs to
        self.tlps = self.sabotaged = self.dropped = 0
        self.kinds: dict[str, int] = {}
        self.active = self.max_active = 0      # requests whose completions are under way (interleaving)
        tb.rc.register_rx_tlp_handler(TlpType.MEM_READ, self.handle)
        tb.rc.register_rx_tlp_handler(TlpType.MEM_READ_64, self.handle)

    async def handle(self, tlp) -> None:
        tb = self.tb
        self.tlps += 1
        tb.check_tlp(tlp.address, tlp.length, tb.mrrs)
        # the TLPs tile the requests, in order
        assert self.k < len(self.reqs), f"read TLP {tlp.address:#x} without a request"
        r = self.reqs[self.k]
        assert tlp.address == r[0] + r[2], f"read TLP at {tlp.address:#x}, expected {r[0] + r[2]:#x}"
        assert tlp.first_be == 0xF and tlp.last_be == (0xF if tlp.length > 1 else 0)
        r[2] += 4 * tlp.length
        assert r[2] <= 4 * r[1]
        if r[2] == 4 * r[1]:
            self.k += 1
        if tlp.address < tb.mem_base or tlp.address + 4 * tlp.length > tb.mem_base + MEM:
            r[3] = True                      # outside host memory: the stock UR
            self.sabotaged += 1
            cocotb.start_soon(self._send([Tlp.create_ur_completion_for_tlp(tlp, PcieId(0, 0, 0))]))
            return
        if self.rng.random() < self.p_bad:
            r[3] = True
            self.sabotaged += 1
            # every kind in turn (a random choice could leave one out); a one-dword TLP cannot be
            # short or poisoned after its first dword: it is poisoned instead and keeps the turn
            self.kind_i = getattr(self, "kind_i", 0)
            kind = ["ur", "ca", "drop", "poisoned", "short", "poison_first"][self.kind_i % 6]
            if kind in ("short", "poison_first") and tlp.length == 1:
                kind = "poisoned"
            else:
                self.kind_i += 1
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            if kind == "drop":
                self.dropped += 1
                # the hard IP's completion timeout releases the tag (the model has none)
                tb.dev.active_request[tlp.tag] = None
                tb.dev.cpld_credit_count = max(tb.dev.cpld_credit_count - tlp.get_data_credits(), 0)
                return
            if kind in ("ur", "ca"):
                mk = Tlp.create_ur_completion_for_tlp if kind == "ur" else Tlp.create_ca_completion_for_tlp
                cocotb.start_soon(self._send([mk(tlp, PcieId(0, 0, 0))]))
                return
        else:
            kind = "ok"
        off = tlp.address - tb.mem_base
        data = bytes(tb.mem[off:off + 4 * tlp.length])
        if kind == "poison_first":
            # a poisoned first piece (not "request completed"), then the rest: the tag must stay
            # taken until the last piece, or the rest would land in the tag's next request
            n = tlp.length // 2
            c1 = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
            c1.byte_count, c1.lower_address, c1.ep = 4 * tlp.length, tlp.address & 0x7F, True
            c1.set_data(data[:4 * n])
            c2 = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
            c2.byte_count, c2.lower_address = 4 * (tlp.length - n), (tlp.address + 4 * n) & 0x7F
            c2.set_data(data[4 * n:])
            cocotb.start_soon(self._send([c1, c2]))
            return
        if kind in ("poisoned", "short"):
            # poisoned: every dword, marked EP (the hard IP reports it as error code 1); short: the
            # first half only, its byte count claiming it is all (the request ends with data missing)
            cpl = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
            n = tlp.length if kind == "poisoned" else tlp.length // 2
            cpl.byte_count = 4 * n
            cpl.lower_address = tlp.address & 0x7F
            cpl.set_data(data[:4 * n])
            cpl.ep = kind == "poisoned"
            cocotb.start_soon(self._send([cpl]))
            return
        cpls, m, addr = [], 0, tlp.address
        while m < tlp.length:
            n = tlp.length - m
            if self.rng.random() < 0.6:        # split at a random 64-byte boundary
                to_rcb = (64 - (addr & 63)) // 4
                n = min(n, to_rcb + 16 * self.rng.randrange(4))
            n = min(n, 32 << tb.rc.max_payload_size)
            cpl = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
            cpl.byte_count = 4 * (tlp.length - m)
            cpl.lower_address = addr & 0x7F
            cpl.set_data(data[4 * m:4 * (m + n)])
            cpls.append(cpl)
            m += n
            addr += 4 * n
        cocotb.start_soon(self._send(cpls))

    async def _send(self, cpls) -> None:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        for c in cpls:
            for _ in range(self.rng.choice([0, 0, 1, 5, 20, 60])):
                await RisingEdge(self.tb.dut.clk)
            await self.tb.rc.send(c)
        self.active -= 1


class TB:
    def __init__(self, dut, cfg: dict):
        self.dut, self.cfg = dut, cfg
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 104729 + 7)
        self.rc = RootComplex()
        self.rc.max_payload_size = cfg["mps"]
        self.rc.max_read_request_size = cfg["mrrs"]
        self.mps, self.mrrs = 128 << cfg["mps"], min(128 << cfg["mrrs"], 512)
        self.timeout = cfg["TIMEOUT"]
        self.dev = UltraScalePlusPcieDevice(
            pcie_generation=3, pcie_link_width=4, user_clk_frequency=125e6, alignment="dword",
            pf_count=1, max_payload_size=512, enable_client_tag=True,
            user_clk=dut.clk, user_reset=dut.rst,
            rq_bus=AxiStreamBus.from_prefix(dut, "m_axis_rq"),
            rc_bus=AxiStreamBus.from_prefix(dut, "s_axis_rc"),
            cfg_max_payload=dut.cfg_max_payload, cfg_max_read_req=dut.cfg_max_read_req,
            cfg_function_status=dut.cfg_function_status)
        self.rc.make_port().connect(self.dev)
        for lg in (self.rc.log, self.dev.log):
            lg.setLevel(logging.WARNING)
        self.mem = self.rc.mem_pool.alloc_region(MEM)
        self.mem_base = self.mem.get_absolute_address(0)
        self.mem[0:MEM] = self.rng.randbytes(MEM)
        self.shadow = bytearray(self.mem[0:MEM])
        self.dev.rc_source.set_pause_generator(pause_gen(self.rng, True, 0.3))
        self.dev.rq_sink.set_pause_generator(pause_gen(self.rng, "heavy", max_stall=20))
        self.rreq = StreamSource(dut, "s_rreq", dut.clk, ["addr", "ndw", "id"], pause=pause_gen(self.rng, True))
        self.wreq = StreamSource(dut, "s_wreq", dut.clk, ["addr", "ndw", "id"], pause=pause_gen(self.rng, True))
        self.wdat = StreamSource(dut, "s_wdat", dut.clk, ["data"], pause=pause_gen(self.rng, True, 0.2))
        self.rdat = StreamSink(dut, "m_rdat", dut.clk, ["data", "last", "err", "id"],
                               pause=pause_gen(self.rng, "heavy", max_stall=30))
        self.reads = HostReads(self, cfg["p_bad"])
        self.writes: list[tuple[int, int, int]] = []        # (addr, ndw, id) issued, in order
        self.wtlp_k, self.wtlp_cov = 0, 0
        self.wdones: list[tuple[int, int]] = []
        self.expect_wid: list[tuple[int, int]] = []     # (id, err) of every write request, in order
        self.zero_reqs = 0
        self.wr_tlps = 0
        orig_write = self.rc.handle_mem_write_tlp

        async def on_write(tlp):
            self.wr_tlps += 1
            self.check_tlp(tlp.address, tlp.length, self.mps)
            a, n, _ = self.writes[self.wtlp_k]
            assert tlp.address == a + self.wtlp_cov, f"write TLP at {tlp.address:#x}, expected {a + self.wtlp_cov:#x}"
            self.wtlp_cov += 4 * tlp.length
            if self.wtlp_cov == 4 * n:
                self.wtlp_k, self.wtlp_cov = self.wtlp_k + 1, 0
            await orig_write(tlp)
        self.rc.register_rx_tlp_handler(TlpType.MEM_WRITE, on_write)
        self.rc.register_rx_tlp_handler(TlpType.MEM_WRITE_64, on_write)
        self.wsent: list[int] = []                      # dwords each write request puts on RQ, in order
        self.refused = 0                                # write TLPs refused with wr_ur
        dut.wr_ur.value = 0
        cocotb.start_soon(self._watch_wdone())
        cocotb.start_soon(self._refuse_outside())
        self.d = None

    def check_tlp(self, addr: int, ndw: int, limit: int) -> None:
        assert 4 * ndw <= limit, f"TLP of {4 * ndw} bytes > {limit}"
        assert addr // 4096 == (addr + 4 * ndw - 1) // 4096, f"TLP {addr:#x}+{4 * ndw} crosses 4 KiB"

    async def _watch_wdone(self) -> None:
        """m_wdone pulses, and what RQ had accepted by then: a request is done only once the hard
        IP took every dword of it (an MSI raised after m_wdone must not overtake the data)."""
        self.rq_beats_no_bme = 0
        dut = self.dut
        in_tlp = is_wr = False
        acc_dw = 0                  # write-data dwords the IP accepted
        ok_dw = 0                   # dwords of the requests completed with m_wdone (no error), in order
        k = 0
        while True:
            await RisingEdge(dut.clk)
            if int(dut.m_axis_rq_tvalid.value) and int(dut.m_axis_rq_tready.value):
                if not int(dut.cfg_function_status.value) & 4:
                    self.rq_beats_no_bme += 1
                keep, data = int(dut.m_axis_rq_tkeep.value), int(dut.m_axis_rq_tdata.value)
                if not in_tlp:
                    is_wr = (data >> 75 & 0xF) == 1
                    if is_wr:
                        acc_dw += bin(keep >> 4).count("1")
                elif is_wr:
                    acc_dw += bin(keep).count("1")
                in_tlp = not int(dut.m_axis_rq_tlast.value)
            if int(dut.m_wdone.value):
                w = (int(dut.m_wdone_id.value), int(dut.m_wdone_err.value))
                self.wdones.append(w)
                ok_dw += self.wsent[k]
                k += 1
                assert acc_dw >= ok_dw, f"m_wdone of write {k - 1} before the IP took its data " \
                                        f"({acc_dw} of {ok_dw} dwords accepted)"

    async def _refuse_outside(self) -> None:
        """The root port's refusal of writes outside host memory: `wr_ur` with the last beat of a
        MemWr TLP whose address is outside the region (decided from the TLP's first beat)."""
        dut = self.dut
        in_tlp, bad = False, False
        while True:
            await FallingEdge(dut.clk)
            v, last = int(dut.m_axis_rq_tvalid.value), int(dut.m_axis_rq_tlast.value)
            cur = bad
            if v and not in_tlp:
                data = int(dut.m_axis_rq_tdata.value)
                addr = data & ((1 << 64) - 4)
                cur = (data >> 75 & 0xF) == 1 and not self.mem_base <= addr < self.mem_base + MEM
            dut.wr_ur.value = int(bool(v and last and cur))
            await RisingEdge(dut.clk)
            if v and int(dut.m_axis_rq_tready.value):
                if not in_tlp:
                    bad = cur
                in_tlp = not last
                if last and cur:
                    self.refused += 1

    async def start(self) -> None:
        await FallingEdge(self.dut.rst)
        await Timer(100, "ns")
        await self.rc.enumerate()
        self.d = self.rc.find_device(self.dev.functions[0].pcie_id)
        await self.d.enable_device()
        await self.d.set_master()
        await self.d.set_readrq(self.cfg["mrrs"])
        assert int(self.dut.cfg_max_read_req.value) == self.cfg["mrrs"]
        assert int(self.dut.cfg_max_payload.value) == self.cfg["mps"]

    # ---- requests
    def rand_req(self, lo: int, hi: int) -> tuple[int, int]:
        r = self.rng
        ndw = r.choice([1, 2, 3, r.randint(1, 16), r.randint(1, 200), r.randint(100, 1024), 1024, 16])
        if r.random() < 0.3:                   # near a 4 KiB boundary
            page = r.randrange(lo // 4096, hi // 4096)
            off = page * 4096 + 4096 - 4 * r.randint(1, 40)
        else:
            off = r.randrange(lo, hi, 4)
        off = min(off, hi - 4 * ndw)
        return off, ndw

    async def run_traffic(self, n: int, bme: bool = True) -> None:
        """n read and n write requests, interleaved, checked against the reference."""
        r = self.rng
        reads: list[tuple[int, int, int, int | None]] = []     # (addr, ndw, id, index in reads.reqs)
        for i in range(n):
            off, ndw = self.rand_req(0, MEM // 2)
            addr = self.mem_base + off
            if r.random() < 0.03:               # outside host memory: Unsupported Request
                addr = self.mem_base + MEM + 0x10000 + 4 * r.randrange(1000)
            if r.random() < 0.03 or i % 16 == 5:  # (and one in 16 in turn: not left to chance)
                ndw = 0                         # an error: one dword, 0 with err and last, no TLP
            rid = r.randrange(16)
            k_req = None
            if bme and ndw:
                k_req = len(self.reads.reqs)
                self.reads.reqs.append([addr, ndw, 0, False])
            reads.append((addr, ndw, rid, k_req))
            self.rreq.send_nowait(addr=addr, ndw=ndw, id=rid)
            woff, wn = self.rand_req(MEM // 2, MEM)
            out = r.random()
            if i % 16 == 11:                    # one in 16 in turn (the random 3 % may miss it)
                out = 0.0
            if out < 0.03:                      # outside host memory: refused (wr_ur)
                woff = MEM + 0x10000 + 4 * r.randrange(2000)
            elif out < 0.06 and (self.mem_base + MEM) % 4096 == 0:
                wn = r.randint(2, 300)          # runs past the end: the TLPs beyond it are refused
                woff = MEM - 4 * r.randint(1, min(wn - 1, 64))
            if r.random() < 0.03:
                wn = 0                          # an error: no data, m_wdone with err, no TLP
            wid = r.randrange(16)
            data = r.randbytes(4 * wn)
            if bme and wn:
                self.writes.append((self.mem_base + woff, wn, wid))
                keep = max(0, min(MEM, woff + 4 * wn) - woff)       # the part inside host memory
                self.shadow[woff:woff + keep] = data[:keep]
            self.zero_reqs += int(not ndw) + int(not wn)
            self.wsent.append(wn if bme else 0)
            self.wreq.send_nowait(addr=self.mem_base + woff, ndw=wn, id=wid)
            for k in range(wn):
                self.wdat.send_nowait(data=int.from_bytes(data[4 * k:4 * k + 4], "little"))
            refused = bool(wn) and woff + 4 * wn > MEM
            self.expect_wid.append((wid, int(not bme or not wn or (bme and refused))))
        # the read data, in request order
        for i, (addr, ndw, rid, k_req) in enumerate(reads):
            got, errs = [], 0
            if ndw == 0:
                b = await self.rdat.recv(timeout_cycles=40 * self.timeout)
                assert (b["id"], b["last"], b["err"], b["data"]) == (rid, 1, 1, 0), f"read {i} of 0 dwords: {b}"
                continue
            for k in range(ndw):
                b = await self.rdat.recv(timeout_cycles=40 * self.timeout)
                assert b["id"] == rid, f"read {i}: id {b['id']} != {rid}"
                assert b["last"] == int(k == ndw - 1), f"read {i}: last at dword {k} of {ndw}"
                if b["err"]:
                    assert b["data"] == 0, "an error dword is not zero"
                    errs += 1
                got.append((b["data"], b["err"]))
            if bme:
                sab = self.reads.reqs[k_req][3]
                assert bool(errs) == sab, f"read {i} {addr:#x}+{ndw}: err {errs} dwords, sabotaged {sab}"
                for k, (v, e) in enumerate(got):
                    if not e:
                        off = addr - self.mem_base + 4 * k
                        exp = int.from_bytes(self.shadow[off:off + 4], "little")
                        assert v == exp, f"read {i} {addr:#x}+{ndw} dword {k}: {v:#x} != {exp:#x}"
            else:
                assert errs == ndw, f"read {i} without bus mastering: {errs} of {ndw} dwords in error"
        # the writes: every wdone, then memory
        for _ in range(20 * self.timeout):
            if len(self.wdones) == len(self.expect_wid):
                break
            await RisingEdge(self.dut.clk)
        assert self.wdones == self.expect_wid, "m_wdone pulses differ (ids, errors, order)"
        await self.d.config_read_dword(0)        # a read after the posted writes: they are done
        for _ in range(200):
            await RisingEdge(self.dut.clk)
        assert bytes(self.mem[MEM // 2:MEM]) == bytes(self.shadow[MEM // 2:MEM]), "host memory != shadow"
        assert not self.rreq.queue and not self.wdat.queue


async def run_dma(dut, cfg: dict) -> None:
    tb = TB(dut, cfg)
    await tb.start()
    n = cfg["n"] * (4 if LONG else 1)
    await tb.run_traffic(n)
    # without bus mastering: nothing reaches the host, every request ends in an error
    await tb.d.clear_master()
    await tb.run_traffic(8, bme=False)
    await tb.d.set_master()
    await tb.run_traffic(max(n // 4, 4))
    h = tb.reads
    bad_tlps = h.sabotaged
    assert int(dut.cnt_timeout.value) == h.dropped, f"timeouts {int(dut.cnt_timeout.value)} != {h.dropped}"
    # every sabotaged TLP, and every TLP not sent for lack of bus mastering, counts once
    assert int(dut.cnt_rd_err.value) >= bad_tlps
    assert int(dut.cnt_late.value) == 0
    assert tb.rq_beats_no_bme == 0, f"{tb.rq_beats_no_bme} RQ beats sent without bus master enable"
    dut._log.info("%d read TLPs (%d sabotaged: %s), %d write TLPs (%d refused), MPS %d, MRRS %d, "
                  "up to %d tags answering at once, %d stalled edges checked", h.tlps, h.sabotaged, h.kinds,
                  tb.wr_tlps, tb.refused, tb.mps, tb.mrrs, h.max_active,
                  tb.rdat.stable_checks)
    assert h.tlps > n and tb.wr_tlps > n
    assert h.max_active >= 2, "no two tags' completions were interleaved"
    assert tb.zero_reqs > 0, "no request of 0 dwords"
    assert tb.refused > 0, "no write TLP refused (wr_ur)"
    assert set(h.kinds) == {"ur", "ca", "drop", "poisoned", "short", "poison_first"}, f"sabotage kinds seen: {h.kinds}"


@cocotb.test()
async def test_dma(dut):
    cfg = {k: int(v) if k != "p_bad" else float(v) for k, v in
           (kv.split("=") for kv in os.environ["ATS_RQ_CFG"].split(","))}
    await run_dma(dut, cfg)


# ------------------------------------------------------------------------------------- pytest
# build parameters, and the root complex's MPS / MRRS (log2(bytes / 128)) and sabotage rate
CONFIGS = {
    "t8_mps128": ({"TAGS": 8, "TIMEOUT": 3000}, {"mps": 0, "mrrs": 3, "p_bad": 0.1, "n": 60}),
    "t2_mps512": ({"TAGS": 2, "TIMEOUT": 3000}, {"mps": 2, "mrrs": 0, "p_bad": 0.1, "n": 40}),
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_nvme_rq(cfg):
    params, run_cfg = CONFIGS[cfg]
    run(toplevel="ats_nvme_rq_tb",
        sources=block_sources("ats_nvme_rq", "ats_stream_check") + [HERE / "ats_nvme_rq_tb.sv", HERE / "ats_nvme_rq_bind.sv"],
        test_module="test_ats_nvme_rq", test_dir=HERE, build_key=f"t{params['TAGS']}", parameters=params,
        waves=os.environ.get("ATS_WAVES"), public={},   # the test reads only the TB top's signals
        extra_env={"ATS_LONG": "1" if LONG else "0", "PYTHONWARNINGS": "ignore::DeprecationWarning",
                   "ATS_RQ_CFG": ",".join(f"{k}={v}" for k, v in {**run_cfg, "TIMEOUT": params["TIMEOUT"]}.items())})
