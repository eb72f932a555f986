# SPDX-License-Identifier: Apache-2.0
"""make bench-sata, SATA half (bench/sata/README.md): ats_sata at 150 MHz between the Python SATA NCQ
host (atstb.sata_host, no HOLD of its own, no faults) and an ideal core (ideal_core.IdealCore: each
descriptor executed the clock it is taken, data moved one word a clock, no pauses), 4 KiB
random WRITE FPDMA QUEUED then READ FPDMA QUEUED of the written LBAs, 32 tags outstanding.

Measured: completion cycles at the host (the cycle the Set Device Bits FIS was taken); per clock a
monitor of both wire directions sorts the link's time into Data FIS payload, other FIS dwords, CRC,
SOF/EOF, HOLD/HOLDA inside a frame, handshake primitives outside frames (hs_rdy: X_RDY / R_RDY,
before a SOF; hs_end: WTRM / R_IP / R_OK after an EOF; hs_other: anything else) and idle (SYNC both
ways). Checked: every command ends 0x40 / 0, every read returns the
bytes written, every written page is in the core's medium byte for byte, and the host model's
protocol checks (atstb.sata_host) pass on every FIS."""
from __future__ import annotations

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, with_timeout

from atstb.sata_host import SataHost
from atstb.sata_link_model import PRIM_NAME
from atstb.streams import every_edge

import common_tb as C
from ideal_core import IdealCore

SOF_SCR0 = 0xC2D2768D          # the scrambler's first word after SOF (rtl/sata/README.md)
FIS_DATA = 0x46
CATS = ("payload", "fis", "crc", "sof_eof", "hold", "hs_rdy", "hs_end", "hs_other", "idle")


class _Dir:
    """One direction of the wire, decoded as a receiver would (ALIGN dropped, CONT expanded)."""

    def __init__(self):
        self.last = "SYNC"
        self.cont = False
        self.in_frame = False
        self.idx = 0
        self.ftype = None
        self.last_cat = None

    def step(self, data: int, k: int):
        """('P', name) or ('D', dword) or None (ALIGN)."""
        if k:
            name = PRIM_NAME.get(data, "?") if k == 1 else "?"
            if name == "ALIGN":
                return None
            if name == "CONT":
                self.cont = True
                return ("P", self.last)
            self.cont = False
            self.last = name
            return ("P", name)
        if self.cont:
            return ("P", self.last)
        return ("D", data)


class LinkMonitor:
    """Sorts each clock of the link into one of CATS (module docstring)."""

    def __init__(self, dut, host, core):
        self.dut, self.host, self.core = dut, host, core
        self.dev, self.hst = _Dir(), _Dir()
        self.cnt = dict.fromkeys(CATS, 0)
        self.frames = {"dev": 0, "host": 0}
        self.qd_sum = 0
        self.cycles = 0
        every_edge(dut.clk, self._edge)

    def _frame(self, d: _Dir, ev, who: str):
        """Category of this clock if direction d is sending a frame, else None."""
        if ev is None:
            return "hold" if d.in_frame else None
        kind, v = ev
        if kind == "P":
            if v == "SOF":
                d.in_frame, d.idx, d.ftype = True, 0, None
                return "sof_eof"
            if not d.in_frame:
                return None
            if v == "EOF":
                d.in_frame = False
                self.frames[who] += 1
                if d.last_cat is not None:      # the frame's last data dword was its CRC
                    self.cnt[d.last_cat] -= 1
                    self.cnt["crc"] += 1
                return "sof_eof"
            if v in ("SYNC", "WTRM"):           # aborted / EOF lost (not expected here)
                d.in_frame = False
                return None
            return "hold"                       # HOLD / HOLDA / others inside the frame
        if not d.in_frame:
            return None
        if d.idx == 0:
            d.ftype = (v ^ SOF_SCR0) & 0xFF
        cat = "payload" if d.ftype == FIS_DATA and d.idx > 0 else "fis"
        d.idx += 1
        d.last_cat = cat
        return cat

    def _edge(self) -> None:
        dut = self.dut
        try:
            td, tk = int(dut.phy_tx_data.value), int(dut.phy_tx_charisk.value)
        except ValueError:
            td, tk = 0xB5B5957C, 1
        rd, rk = int(dut.phy_rx_data.value), int(dut.phy_rx_charisk.value)
        evd, evh = self.dev.step(td, tk), self.hst.step(rd, rk)
        cd = self._frame(self.dev, evd, "dev")
        ch = self._frame(self.hst, evh, "host")
        cat = cd or ch
        if cat is None:
            pd = evd[1] if evd and evd[0] == "P" else "SYNC"
            ph = evh[1] if evh and evh[0] == "P" else "SYNC"
            if "X_RDY" in (pd, ph) or "R_RDY" in (pd, ph):
                cat = "hs_rdy"                  # a frame asked for / granted, its SOF not yet sent
            elif {pd, ph} & {"WTRM", "R_OK", "R_ERR", "R_IP"}:
                cat = "hs_end"                  # after EOF: WTRM until R_OK, and its turn-around
            else:
                cat = "idle" if pd == "SYNC" and ph == "SYNC" else "hs_other"
        self.cnt[cat] += 1
        self.cycles += 1
        self.qd_sum += len(self.host.ncq)

    def snap(self) -> dict:
        return dict(self.cnt, cycles=self.cycles, qd_sum=self.qd_sum, frames_dev=self.frames["dev"],
                    frames_host=self.frames["host"], sdb=self.host.stats["sdb"],
                    hrd_beats=self.core.hrd_beats, hwr_beats=self.core.hwr_beats)


async def phase(dut, host, core, mon, rng, kind: str, lbas: list[int], shadow: dict, p: dict) -> dict:
    """Closed loop at QD p['qd']: a new command on a freed tag as soon as one completes."""
    qd = p["qd"]
    free = list(range(qd))
    nxt = 0
    cmds = []
    ncomp0 = len(host.completed)
    seen = 0
    snaps = []
    cyc0 = host.cycle
    while seen < len(lbas):
        while free and nxt < len(lbas):
            tag = free.pop(0)
            lba = lbas[nxt]
            nxt += 1
            data = rng.randbytes(4096) if kind == "write" else None
            c = host.submit_fpdma(kind, tag, lba, 1, data=data)
            c.b_lba, c.b_data = lba, data
            cmds.append(c)
        await RisingEdge(dut.clk)
        new = host.completed[ncomp0 + seen:]
        for c in new:
            seen += 1
            snaps.append((c.done_cycle, mon.snap()))
            st, err, data = c.result
            assert (st, err) == (0x40, 0), f"{c.name}: status {st:#04x} error {err:#04x}"
            if kind == "write":
                shadow[c.b_lba] = c.b_data
            else:
                assert data == shadow[c.b_lba], f"{c.name}: the data read differ from the data written"
            free.append(c.tag)
    await host.idle()
    while core.busy():
        await RisingEdge(dut.clk)
    if kind == "write":                          # the write path alone: the core's medium, byte for byte
        for lba in lbas:
            assert core.pages.get(lba) == shadow[lba], f"LBA {lba}: the core holds other data than written"
    w = C.window([t for t, _ in snaps], p["warm"], p["meas"])
    i0, i1 = p["warm"], p["warm"] + p["meas"]
    s0, s1 = snaps[i0][1], snaps[i1][1]
    link = {k: s1[k] - s0[k] for k in CATS}
    lat = [c.done_cycle - c.issue_cycle for c in cmds[i0:i1]]
    lat_acc = [c.done_cycle - c.accept_cycle for c in cmds[i0:i1]]
    port = (s1["hrd_beats"] - s0["hrd_beats"]) if kind == "write" else (s1["hwr_beats"] - s0["hwr_beats"])
    return dict(kind=kind, n=len(lbas), window=w, link_cycles=link, core_port_beats=port,
                frames_dev=s1["frames_dev"] - s0["frames_dev"], frames_host=s1["frames_host"] - s0["frames_host"],
                sdbs=s1["sdb"] - s0["sdb"], mean_qd=(s1["qd_sum"] - s0["qd_sum"]) / max(1, s1["cycles"] - s0["cycles"]),
                lat_mean_cycles=sum(lat) / len(lat), lat_accept_mean_cycles=sum(lat_acc) / len(lat_acc),
                phase_cycles=host.cycle - cyc0)


@cocotb.test()
async def bench_sata(dut):
    p = C.params()
    rng = random.Random(p["seed"] * 7919 + 15)
    cocotb.start_soon(Clock(dut.clk, 6666, unit="ps").start())   # 150 MHz (figures use cycles at 150 MHz)
    dut.rst.value = 1
    dut.phy_ready.value = 1
    core = IdealCore(dut, 4096, p["num_lbas"])
    host = SataHost(dut, rng, 4096, rx_hold_p=0.0, tx_hold_p=0.0)
    mon = LinkMonitor(dut, host, core)
    await ClockCycles(dut.clk, 10)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 20)
    # the front end is up (and says QD 32, word 75); a hang fails in 200,000 cycles, not the host's 2 M
    ident = await with_timeout(host.identify(), 200_000 * 6666, "ps")
    assert ident[150] == 31, f"IDENTIFY word 75 = {ident[150]}"
    wl, rl = C.plan(rng, p)
    shadow: dict[int, bytes] = {}
    res = {}
    for kind, lbas in (("write", wl), ("read", rl)):
        res[kind] = await phase(dut, host, core, mon, rng, kind, lbas, shadow, p)
        dut._log.info("%s: %s", kind, res[kind])
    res["check"] = dict(commands=len(host.completed) - 1, reads_compared=len(rl), bytes_compared=4096 * len(rl),
                        pages_checked_in_core=len(wl), host_stats=dict(host.stats),
                        retries=int(dut.cnt_retry.value), rx_drop=int(dut.cnt_rx_drop.value),
                        proto=int(dut.cnt_proto.value), collisions=host.link.collisions,
                        core_errors=len(core.errors), core_ops={str(k): v for k, v in core.ops.items()})
    assert int(dut.cnt_retry.value) == 0 and int(dut.cnt_rx_drop.value) == 0 and int(dut.cnt_proto.value) == 0, \
        res["check"]
    res["clock_mhz"] = 150.0
    res["cycles_total"] = host.cycle
    C.write_out(p, res)
