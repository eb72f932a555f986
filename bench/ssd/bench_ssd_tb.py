"""cocotb entry of the SSD benchmarks: one run of one workload configuration on ats_ssd_bench_top.

The configuration comes as JSON in ATS_BENCH_CFG; the results are written as JSON to
ATS_BENCH_OUT. Used by bench/order/bench_order.py (B2), bench/rflush/bench_rflush.py (B3) and the
harness self-test bench/ssd/test_bench_ssd.py.

Every run ends with an end-to-end check, independent of the RTL: a FLUSH, then every LBA the host
wrote must be durable in the media model with the version of the last accepted write (decoded from
the page pattern), and a sample of LBAs is read back through the device (READ, m_hwr) and compared
word by word. Any error status, protocol error or mismatch fails the run.
"""
from __future__ import annotations

import json
import os
import random
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from atstb.media_model import MediaConfig, MediaModel
from atstb.streams import pause_gen
from atstb.wbuf_model import decode_page
from host import FLUSH, OK, READ, Cmd, Host, HostConfig
import workloads


class Bench:
    def __init__(self, dut, cfg: dict):
        self.dut = dut
        self.cfg = cfg
        self.rng = random.Random(cfg.get("seed", 1))
        self.clk_ns = cfg.get("clk_ns", 8.0)
        self.page_bytes = int(dut.PAGE_BYTES.value)
        self.num_lbas = int(dut.NUM_LBAS.value)
        self.num_slots = int(dut.NUM_SLOTS.value)
        self.depth = int(dut.DEPTH.value)
        cocotb.start_soon(Clock(dut.clk, self.clk_ns, unit="ns").start())
        dut.rst.value = 1
        dut.pwr_fail.value = 0
        idle, bp = cfg.get("idle", False), cfg.get("backpressure", False)
        self.host = Host(dut, HostConfig(clk_ns=self.clk_ns, page_bytes=self.page_bytes,
                                         t_submit_us=cfg.get("t_submit_us", 2.0),
                                         t_complete_us=cfg.get("t_complete_us", 6.0),
                                         idle=idle, backpressure=bp, seed=cfg.get("seed", 1),
                                         fast_ports=not cfg.get("reference_loops", False)))
        self.mcfg = MediaConfig(page_bytes=self.page_bytes, num_chan=cfg.get("num_chan", 4),
                                ways=cfg.get("ways", 2), preset=cfg.get("preset", "femu"),
                                time_scale=cfg.get("time_scale", 1.0), clk_ns=self.clk_ns,
                                window=cfg.get("window"))
        r = self.rng
        # the media model runs in the host's clock loop (one wake-up per cycle for both; the host
        # loop was started first, so the order at each edge is the same as with two coroutines).
        # cfg "reference_loops": its own coroutine and plain `.value` port access everywhere (the
        # self-test checks that both give the same results, cycle for cycle)
        ref = bool(cfg.get("reference_loops", False))
        self.media = MediaModel(dut, dut.clk, self.mcfg, r,
                                wb_pause=pause_gen(r, bp), wbd_pause=pause_gen(r, bp),
                                wbc_pause=pause_gen(r, idle), rd_pause=pause_gen(r, bp),
                                rdd_pause=pause_gen(r, idle), clocked=ref, fast_ports=not ref)
        if not ref:
            self.host.tick_hooks.append(self.media.step)

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(8):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        for _ in range(4):
            await RisingEdge(self.dut.clk)

    def counters(self) -> dict:
        d = self.dut
        return {"host_pages": int(d.cnt_host_pages.value), "coalesced": int(d.cnt_coalesced.value),
                "wb_pages": int(d.cnt_wb_pages.value), "media_bytes": int(d.cnt_media_bytes.value),
                "proto_err": int(d.cnt_proto_err.value),
                "nand_bytes": self.media.stats.bytes_programmed, "nand_programs": self.media.stats.programs}

    async def verify(self, n_read: int = 12) -> dict:
        """FLUSH, then check durable contents in the media and read a sample back."""
        host = self.host
        c = await host.submit(Cmd(FLUSH), host_costs=False)
        assert c.status == OK, f"final FLUSH status {c.status:#x}"
        bad = 0
        for lba, ver in host.expected.items():
            words = self.media.mapping.get(lba)
            got = decode_page(words) if words else None
            if got != (lba, ver):
                bad += 1
                if bad <= 5:
                    host.errors.append(f"LBA {lba}: durable {got}, expected (lba, version) {(lba, ver)}")
        lbas = list(host.expected)
        self.rng.shuffle(lbas)
        sample = lbas[:n_read]
        for lba in sample:
            r = await host.submit(Cmd(READ, lba=lba), host_costs=False)
            assert r.status == OK, f"READ lba {lba} status {r.status:#x}"
            exp = host.words(lba, host.expected[lba])
            if not r.data or r.data[0] != exp:
                host.errors.append(f"READ lba {lba}: data {decode_page(r.data[0]) if r.data and r.data[0] else None}"
                                   f" != version {host.expected[lba]}")
        # conservation, after the final FLUSH: every page version the host wrote was either programmed
        # (media model's count) or coalesced away (write buffer's counter) - the premise of the B3
        # "eventual NAND bytes" metric, checked on the two sides independently
        cnt = self.counters()
        programs = self.media.stats.programs
        if programs != cnt["host_pages"] - cnt["coalesced"]:
            host.errors.append(f"conservation: media programmed {programs} pages, write buffer took "
                               f"{cnt['host_pages']} and coalesced {cnt['coalesced']}")
        res = {"durable_checked": len(host.expected), "durable_bad": bad, "reads_checked": len(sample),
               "programs": programs, "host_pages": cnt["host_pages"], "coalesced": cnt["coalesced"]}
        if self.cfg.get("mode") == "barrier":
            res["order_checked"] = self.check_barrier_order()
        return res

    def check_barrier_order(self) -> int:
        """Every write was BARRIER + ORDERED: each is its own epoch, so nothing may coalesce and the
        media's durable log must hold every write, in acceptance order, with epoch = its index
        (INV-ORDER, INV-QUEUE seen from the media)."""
        progs = [r for r in self.media.log if r.op == 0]
        got = [decode_page(r.data) for r in progs]
        vers = [g[1] if g else None for g in got]
        exp = self.host.accept_order
        if vers != exp:
            i = next((k for k, (a, e) in enumerate(zip(vers, exp)) if a != e), min(len(vers), len(exp)))
            self.host.errors.append(f"barrier order: media log differs from acceptance order at record {i} "
                                    f"({len(vers)} records, {len(exp)} writes)")
        for k, r in enumerate(progs):
            if r.epoch != (k & 0xFFFF):
                self.host.errors.append(f"barrier order: record {k} has epoch {r.epoch}")
                break
        return len(progs)

    def final_checks(self):
        errs = list(self.host.errors) + list(self.media.errors)
        if int(self.dut.cnt_proto_err.value):
            errs.append(f"write buffer protocol errors: {int(self.dut.cnt_proto_err.value)}")
        assert not errs, "\n".join(errs[:20])


@cocotb.test()
async def run_bench(dut):
    cfg = json.loads(os.environ["ATS_BENCH_CFG"])
    cpu0 = time.process_time()      # the simulator process: Verilator model + Python
    b = Bench(dut, cfg)
    await b.reset()
    if cfg["workload"] == "order":
        res = await workloads.order(b, cfg)
    elif cfg["workload"] == "rflush":
        res = await workloads.rflush(b, cfg)
    else:
        raise ValueError(f"unknown workload {cfg['workload']}")
    res["verify"] = await b.verify(cfg.get("n_read", 12))
    res["config"] = cfg
    res["device"] = {"depth": b.depth, "num_slots": b.num_slots, "num_lbas": b.num_lbas,
                     "page_bytes": b.page_bytes, "clk_ns": b.clk_ns, "num_chan": b.mcfg.num_chan,
                     "ways": b.mcfg.ways, "preset": b.mcfg.preset,
                     "t_read_us": b.mcfg.t_read * b.clk_ns / 1000, "t_prog_us": b.mcfg.t_prog * b.clk_ns / 1000,
                     "t_xfer_us": b.mcfg.t_xfer * b.clk_ns / 1000, "thresh_pct": int(dut.THRESH_PCT.value),
                     "media_window": b.mcfg.window_size}
    res["media"] = b.media.summary()
    res["cpu_s"] = time.process_time() - cpu0
    res["sim_cycles"] = b.host.cycle
    out = os.environ.get("ATS_BENCH_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
    b.final_checks()
