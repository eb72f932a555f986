# SPDX-License-Identifier: Apache-2.0
"""make bench-sata, NVMe half (bench/sata/README.md): ats_nvme (1 I/O queue pair of 64 entries,
QDEPTH 32) on the PCIe user clock of cocotb_tests/ats_nvme (125 MHz, driven by cocotbext-pcie's
UltraScale+ model: Gen3 x4, 256-bit interface) under cocotbext-pcie's root complex and the project's
driver (sw/host/atomssd/nvme.py), behind the same ideal core as the SATA half (ideal_core.IdealCore: each
descriptor executed the clock it is taken, data one word a clock, no pauses). No random pauses on the four AXI streams (a bench, not a test).

Workload as the SATA half: 4 KiB random Writes then Reads of the written LBAs, 32 outstanding: the
host polls its CQ every `BENCH_POLL` cycles (default 8), reaps, checks and submits one new command
per completion, then rings the SQ doorbell once. Completion time = the cycle the host found the CQE
(at most one poll period after it landed). Checked: every CQE OK, every read returns the bytes
written, every written page is in the core's medium byte for byte."""
from __future__ import annotations

import logging
import os
import random

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time

from atstb.nvme_pcie import PcieNvmeHost

import common_tb as C
from ideal_core import IdealCore

CLK_NS = 8.0                      # 125 MHz user clock


async def phase(dut, h, core, rng, kind: str, lbas: list[int], shadow: dict, p: dict, poll: int) -> dict:
    d = h.drv
    q = 1
    nxt = 0
    t_done: list[float] = []
    cmds = []
    t_sub = {}
    snaps = []
    t0 = get_sim_time("ns")

    async def submit():
        nonlocal nxt
        lba = lbas[nxt]
        nxt += 1
        if kind == "write":
            data = rng.randbytes(4096)
            c = await h.do(d.submit_write(q, lba, data, ring=False))
        else:
            data = None
            c = await h.do(d.submit_read(q, lba, 1, ring=False))
        c.b_lba, c.b_data = lba, data
        t_sub[id(c)] = get_sim_time("ns")
        cmds.append(c)

    for _ in range(min(p["qd"], len(lbas))):
        await submit()
    await h.do(d.ring(q))
    while len(t_done) < len(lbas):
        got = await h.do(d.reap(1))
        if not got:
            await ClockCycles(dut.clk, poll)
            continue
        t = get_sim_time("ns") / CLK_NS
        for c in got:
            snaps.append((core.hrd_beats, core.hwr_beats))
            assert c.cqe is not None and c.cqe.ok, f"{c.what}: CQE {c.cqe}"
            if kind == "write":
                shadow[c.b_lba] = c.b_data
            else:
                assert c.data == shadow[c.b_lba], f"{c.what}: the data read differ from the data written"
            t_done.append(t)
            c.b_lat = t - t_sub[id(c)] / CLK_NS
        k = 0
        while nxt < len(lbas) and k < len(got):
            await submit()
            k += 1
        if k:
            await h.do(d.ring(q))
    while core.busy():
        await RisingEdge(dut.clk)
    if kind == "write":                          # the write path alone: the core's medium, byte for byte
        for lba in lbas:
            assert core.pages.get(lba) == shadow[lba], f"LBA {lba}: the core holds other data than written"
    w = C.window(t_done, p["warm"], p["meas"])
    i0, i1 = p["warm"], p["warm"] + p["meas"]
    port = snaps[i1][0] - snaps[i0][0] if kind == "write" else snaps[i1][1] - snaps[i0][1]
    lat = [c.b_lat for c in cmds[p["warm"]:p["warm"] + p["meas"]]]
    return dict(kind=kind, n=len(lbas), window=w, core_port_beats=port, lat_mean_cycles=sum(lat) / len(lat),
                phase_cycles=(get_sim_time("ns") - t0) / CLK_NS)


@cocotb.test()
async def bench_nvme(dut):
    p = C.params()
    poll = int(os.environ.get("BENCH_POLL", "8"))
    rng = random.Random(p["seed"] * 7919 + 16)
    h = PcieNvmeHost(dut, rng, mem_size=8 << 20)
    for s in (h.dev.cq_source, h.dev.rc_source, h.dev.cc_sink, h.dev.rq_sink):
        s.clear_pause_generator()
        s.log.setLevel(logging.WARNING)          # one INFO line per TLP otherwise
    core = IdealCore(dut, 4096, p["num_lbas"])
    await h.start()
    d = h.drv
    d.poll_cycles = poll
    await h.do(d.bring_up(io_queues=1, qsize=64, admin_qsize=32))
    wl, rl = C.plan(rng, p)
    shadow: dict[int, bytes] = {}
    res = {}
    for kind, lbas in (("write", wl), ("read", rl)):
        res[kind] = await phase(dut, h, core, rng, kind, lbas, shadow, p, poll)
        dut._log.info("%s: %s", kind, res[kind])
    res["check"] = dict(commands=2 * len(wl), reads_compared=len(rl), bytes_compared=4096 * len(rl),
                        pages_checked_in_core=len(wl), core_errors=len(core.errors),
                        core_ops={str(k): v for k, v in core.ops.items()},
                        cnt_ur=int(dut.cnt_ur.value), cnt_rd_err=int(dut.cnt_rd_err.value),
                        cnt_late=int(dut.cnt_late.value))
    assert int(dut.cnt_ur.value) == 0 and int(dut.cnt_rd_err.value) == 0 and int(dut.cnt_late.value) == 0, res["check"]
    res["pcie"] = dict(gen=3, width=4, user_clk_mhz=1e3 / CLK_NS, cfg_max_payload=int(dut.cfg_max_payload.value),
                       cfg_max_read_req=int(dut.cfg_max_read_req.value), mem_base=h.mem_base,
                       rc_max_payload_size=h.rc.max_payload_size)
    res["clock_mhz"] = 1e3 / CLK_NS
    res["poll_cycles"] = poll
    C.write_out(p, res)
