# SPDX-License-Identifier: Apache-2.0
"""ats_sata_link: the device-side SATA link layer (rtl/sata/README.md), two ways.

(a) Against LiteSATA's host link layer (`litesata` 2024.12, elaborated by atstb.litesata_gen), back
    to back through a PHY-less wire with a fault injector each way (ats_sata_link_tb.sv). Random FISes
    of 1..2048 dwords both ways at once (so collisions happen), random idle and backpressure on all
    four user streams, faults injected at random: flipped bits in a data dword (CRC error: R_ERR),
    a dropped SOF or EOF, CONT + junk inserted into runs of a primitive. The bench stands in for the
    device PHY's ALIGN insertion (LiteSATA needs ALIGNs to leave WTRM after a SYNC). The test plays the transport
    layer: a FIS whose outcome is not R_OK is sent again. Checked: every FIS arrives good exactly
    once, in order, byte for byte; a corrupted frame is never delivered as good; every non-R_OK
    outcome has an injected fault behind it; LiteSATA's own error flags match our results.
(b) Against the plain-Python host model (atstb.sata_link_model.HostLink) driving the PHY side
    directly, for what LiteSATA never does: HOLD from the host at arbitrary points both as sender and
    receiver, the host's own CONT, SYNC escape mid-FIS both ways, missing EOF, empty frames, a lost SOF
    (peer timeout), forced R_ERR, collisions where the host keeps X_RDY, PMREQ, PHY loss.

Environment: ATS_SEED, ATS_LONG=1 (more and longer FISes), ATS_WAVES=1.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from atstb.runner import ROOT, block_sources, run
from atstb.sata_link_model import PRIM, HostLink, TxFrame
from atstb.streams import StreamSink, StreamSource, every_edge, pause_gen

HERE = Path(__file__).resolve().parent
LONG = os.environ.get("ATS_LONG", "0") not in ("", "0")

RXS_OK, RXS_CRC, RXS_ABORT, RXS_FRAMING = 0, 1, 2, 3
TXR_OK, TXR_ERR, TXR_ABORT = 0, 1, 2
FLIP, DROP, CONTJ = 1, 2, 3


class TB:
    def __init__(self, dut, idle=True, backpressure=True):
        self.dut = dut
        self.rng = random.Random(int(os.environ.get("ATS_SEED", "1")) * 7919 + 17)
        cocotb.start_soon(Clock(dut.clk, 6666, unit="ps").start())
        r = self.rng
        self.h_tx = StreamSource(dut, "h_tx", dut.clk, ["data", "last"], pause=pause_gen(r, idle, 0.05))
        self.h_rx = StreamSink(dut, "h_rx", dut.clk, ["data", "last", "error"],
                               pause=pause_gen(r, "heavy" if backpressure else False, max_stall=30))
        self.s_tx = StreamSource(dut, "s_tx", dut.clk, ["data", "last"], pause=pause_gen(r, idle, 0.05))
        self.m_rx = StreamSink(dut, "m_rx", dut.clk, ["data", "last", "status"],
                               pause=pause_gen(r, "heavy" if backpressure else False, max_stall=30))
        self.m_txr = StreamSink(dut, "m_txr", dut.clk, ["status"], pause=pause_gen(r, backpressure, 0.3))
        for d in ("h2d", "d2h"):
            for f, v in (("seq", 0), ("kind", 0), ("n", 0), ("mask", 0), ("prim", 0)):
                getattr(dut, f"{d}_{f}").value = v
        dut.use_model.value = 0
        dut.phy_ready.value = 1
        dut.mdl_tx_data.value = PRIM["SYNC"]
        dut.mdl_tx_charisk.value = 1
        self.seq = {"h2d": 0, "d2h": 0}

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(8):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        for _ in range(4):
            await RisingEdge(self.dut.clk)

    async def cycles(self, n):
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    def arm(self, d: str, kind: int, n: int = 0, mask: int = 0, prim: int = 0) -> int:
        """Arm one fault on direction d; returns the hit count before it."""
        dut = self.dut
        getattr(dut, f"{d}_kind").value = kind
        getattr(dut, f"{d}_n").value = n
        getattr(dut, f"{d}_mask").value = mask
        getattr(dut, f"{d}_prim").value = prim
        self.seq[d] = (self.seq[d] + 1) & 0xFF
        getattr(dut, f"{d}_seq").value = self.seq[d]
        return int(getattr(dut, f"{d}_hits").value)

    def diag(self) -> str:
        d = self.dut
        try:
            st = int(d.u_dut.st_q.value)
            hst = (int(d.u_host.litesatalinktx_fsm_state.value), int(d.u_host.litesatalinkrx_fsm_state.value))
        except Exception:                    # internal names may be hidden
            st, hst = -1, None
        return (f"device state {st}, LiteSATA tx/rx state {hst}, h_tx queued {len(self.h_tx.queue)}, s_tx queued {len(self.s_tx.queue)}, "
                f"dev tx {int(d.dev_tx_data.value):#010x}/{int(d.dev_tx_charisk.value)}")

    def hits(self, d: str) -> int:
        return int(getattr(self.dut, f"{d}_hits").value)

    @staticmethod
    def frames(beats, field):
        """Split collected beats into (dwords, flag of the last beat) per FIS."""
        out, cur = [], []
        for b in beats:
            cur.append(b["data"])
            if b["last"]:
                out.append((cur, b[field]))
                cur = []
        return out, cur

    def fis(self, n: int) -> list[int]:
        return [self.rng.getrandbits(32) for _ in range(n)]

    def length(self, big: bool) -> int:
        r = self.rng.random()
        if r < 0.55:
            return self.rng.randint(1, 16)
        if r < 0.85 or not big:
            return self.rng.randint(17, 300)
        return self.rng.choice([2048, self.rng.randint(301, 2048)])


# ------------------------------------------------------------------------------------------------
# (a) against LiteSATA
async def _h2d(tb: TB, fises, faults: bool, log: dict, limit: int):
    dut = tb.dut
    for fis in fises:
        while True:
            kind, hit0 = 0, tb.hits("h2d")
            if faults and tb.rng.random() < 0.3:
                kind = tb.rng.choice([FLIP, FLIP, DROP, CONTJ])
                if kind == FLIP:
                    hit0 = tb.arm("h2d", FLIP, n=tb.rng.randint(0, len(fis)), mask=1 << tb.rng.randrange(32)
                                  | tb.rng.getrandbits(32))
                elif kind == DROP:
                    hit0 = tb.arm("h2d", DROP, prim=PRIM[tb.rng.choice(["SOF", "EOF"])])
                else:
                    hit0 = tb.arm("h2d", CONTJ, n=tb.rng.randint(1, 40))
            before = (int(dut.mon_ok.value), int(dut.mon_err.value), int(dut.mon_sync.value))
            for i, d in enumerate(fis):
                tb.h_tx.send_nowait(data=d, last=int(i == len(fis) - 1))
            waited = 0
            while True:
                await RisingEdge(dut.clk)
                now = (int(dut.mon_ok.value), int(dut.mon_err.value), int(dut.mon_sync.value))
                if now != before:
                    break
                waited += 1
                assert waited < limit, f"host frame without an outcome (fault {kind}, {tb.diag()})"
            outcome = ("R_OK", "R_ERR", "SYNC")[[a != b for a, b in zip(now, before)].index(True)]
            hit = tb.hits("h2d") > hit0
            log["h2d"].append((len(fis), kind, hit, outcome))
            if hit and kind in (FLIP, DROP):
                assert outcome != "R_OK", f"host frame with a {('', 'flip', 'drop')[kind]} answered R_OK"
            else:
                assert outcome == "R_OK", f"host frame without a fault answered {outcome}"
            if kind and not hit:
                tb.arm("h2d", 0)
            if outcome == "R_OK":
                break


async def _d2h(tb: TB, fises, faults: bool, log: dict, limit: int):
    for fis in fises:
        while True:
            kind, hit0 = 0, tb.hits("d2h")
            if faults and tb.rng.random() < 0.3:
                # no dropped EOF this way: LiteSATA's receiver has no way out of it (README)
                kind = tb.rng.choice([FLIP, FLIP, DROP, CONTJ])
                if kind == FLIP:
                    hit0 = tb.arm("d2h", FLIP, n=tb.rng.randint(0, len(fis)), mask=tb.rng.getrandbits(32) | 1)
                elif kind == DROP:
                    hit0 = tb.arm("d2h", DROP, prim=PRIM["SOF"])
                else:
                    hit0 = tb.arm("d2h", CONTJ, n=tb.rng.randint(1, 40))
            for i, d in enumerate(fis):
                tb.s_tx.send_nowait(data=d, last=int(i == len(fis) - 1))
            waited = 0
            while not tb.m_txr.queue:
                await RisingEdge(tb.dut.clk)
                waited += 1
                assert waited < limit, f"device frame without a result (fault {kind}, {tb.diag()})"
            res = tb.m_txr.queue.popleft()["status"]
            hit = tb.hits("d2h") > hit0
            log["d2h"].append((len(fis), kind, hit, res))
            if hit and kind in (FLIP, DROP):
                assert res != TXR_OK, "device frame with a fault reported R_OK"
                if kind == FLIP:
                    assert res == TXR_ERR, f"flipped device frame: result {res}, R_ERR expected"
                else:
                    assert res == TXR_ABORT, f"device frame with its SOF lost: result {res}, abort expected"
            else:
                assert res == TXR_OK, f"device frame without a fault: result {res}"
            if kind and not hit:
                tb.arm("d2h", 0)
            if res == TXR_OK:
                break


@cocotb.test()
@cocotb.parametrize(faults=[False, True], stress=[False, True])
async def litesata_random(dut, faults, stress):
    """Random FISes both ways against LiteSATA's host link, with or without faults on the wire."""
    tb = TB(dut, idle=stress, backpressure=stress)
    await tb.reset()
    n = (60 if LONG else 20) if stress else (40 if LONG else 14)
    h2d = [tb.fis(tb.length(big=True)) for _ in range(n)]
    d2h = [tb.fis(tb.length(big=True)) for _ in range(n)]
    h2d[0], d2h[0] = tb.fis(2048), tb.fis(1)
    log = {"h2d": [], "d2h": []}
    limit = 200_000
    t1 = cocotb.start_soon(_h2d(tb, h2d, faults, log, limit))
    t2 = cocotb.start_soon(_d2h(tb, d2h, faults, log, limit))
    await t1
    await t2
    # drain the user sides
    for _ in range(limit):
        got_dev, _ = TB.frames(tb.m_rx.queue, "status")
        got_host, _ = TB.frames(tb.h_rx.queue, "error")
        if sum(1 for _, s in got_dev if s == RXS_OK) >= len(h2d) and \
                sum(1 for _, e in got_host if e == 0) >= len(d2h):
            break
        await RisingEdge(dut.clk)
    got_dev, rest_dev = TB.frames(tb.m_rx.queue, "status")
    got_host, rest_host = TB.frames(tb.h_rx.queue, "error")
    assert not rest_dev and not rest_host, "a FIS without its last dword"
    good_dev = [f for f, s in got_dev if s == RXS_OK]
    good_host = [f for f, e in got_host if e == 0]
    assert len(good_dev) == len(h2d) and good_dev == h2d, "host->device FISes lost, repeated or corrupted"
    assert len(good_host) == len(d2h) and good_host == d2h, "device->host FISes lost, repeated or corrupted"
    # bad frames delivered to either user were answered with R_ERR (or never answered)
    bad_dev = [s for _, s in got_dev if s != RXS_OK]
    n_err = sum(1 for *_, o in log["h2d"] if o != "R_OK")
    assert len(bad_dev) <= n_err
    host_err = sum(1 for _, e in got_host if e)
    dev_err = sum(1 for *_, r in log["d2h"] if r == TXR_ERR)
    assert host_err == dev_err, f"LiteSATA saw {host_err} bad frames, the device was told R_ERR {dev_err} times"
    cov = {k: int(getattr(dut, f"cov_{k}").value) for k in ("coll", "host_hold", "dev_hold", "dev_cont")}
    if faults:
        kinds = {(d, k) for d in ("h2d", "d2h") for _, k, h, _ in log[d] if h}
        assert {("h2d", FLIP), ("d2h", FLIP), ("h2d", DROP), ("d2h", DROP)} <= kinds or not LONG, kinds
        assert any(h for _, k, h, _ in log["h2d"] if k == FLIP) and any(h for _, k, h, _ in log["d2h"] if k == FLIP)
    if stress:
        # FIFO pressure makes both sides HOLD; the device's underflow HOLD runs get CONT with TX_CONT
        assert cov["host_hold"] > 0 and cov["dev_hold"] > 0, cov
        assert cov["dev_cont"] > 0 or not int(dut.TX_CONT.value), cov
    dut._log.info("litesata faults=%s stress=%s: h2d %d FISes in %d frames (%d bad delivered, %d not OK), "
                  "d2h %d FISes in %d frames (%d R_ERR), %d stalled beats checked, coverage %s, faults hit %s",
                  faults, stress, len(h2d), len(log["h2d"]), len(bad_dev), n_err, len(d2h), len(log["d2h"]),
                  dev_err, tb.m_rx.stable_checks + tb.h_rx.stable_checks, cov,
                  sorted((d, k) for d in log for _, k, h, _ in log[d] if h))


# ------------------------------------------------------------------------------------------------
# (b) against the Python host model
class ModelTB(TB):
    def __init__(self, dut, **kw):
        super().__init__(dut, **kw)
        self.host = HostLink(self.rng)
        dut.use_model.value = 1
        self.running = False
        every_edge(dut.clk, self._edge)

    def _edge(self):
        if not self.running:
            return
        d = int(self.dut.dev_tx_data.value)
        k = int(self.dut.dev_tx_charisk.value)
        od, ok = self.host.step(d, k)
        self.dut.mdl_tx_data.value = od
        self.dut.mdl_tx_charisk.value = ok

    async def start(self):
        self.running = True                  # from reset on: the host sees the device's first SYNCs
        await self.reset()

    async def until(self, cond, limit=100_000, what="condition"):
        for _ in range(limit):
            if cond():
                return
            await RisingEdge(self.dut.clk)
        self.dut._log.error("host model trace (cycle, state, received, sent):\n%s",
                            "\n".join(map(str, list(self.host.trace)[-120:])))
        raise AssertionError(f"timeout waiting for {what}")

    def dev_send(self, fis):
        for i, d in enumerate(fis):
            self.s_tx.send_nowait(data=d, last=int(i == len(fis) - 1))

    def dev_frames(self):
        return TB.frames(self.m_rx.queue, "status")[0]


@cocotb.test()
async def model_hold_cont(dut):
    """HOLD from the host as sender (arbitrary points) and as receiver (random, longer than the
    HOLD->HOLDA bound), the host's CONT + junk, device HOLD from FIFO pressure and user underflow."""
    tb = ModelTB(dut, idle=True, backpressure=True)
    h = tb.host
    h.rx_hold_p, h.rx_hold_max, h.hold_react_max = 0.05, 40, 20
    await tb.start()
    n = 30 if LONG else 12
    h2d = [tb.fis(tb.rng.randint(1, 200)) for _ in range(n)]
    d2h = [tb.fis(tb.rng.randint(1, 200)) for _ in range(n)]
    for f in h2d:
        holds = {i: tb.rng.randint(1, 12) for i in tb.rng.sample(range(len(f) + 1), min(len(f) + 1, 4))}
        h.send(TxFrame(f, hold_at=holds))
    for f in d2h:
        tb.dev_send(f)
    await tb.until(lambda: len(h.sent) == n and len(h.received) == n and len(tb.m_txr.queue) == n
                   and len(tb.dev_frames()) == n, 400_000, "all frames")
    assert [f.result for f in h.sent] == ["R_OK"] * n
    assert tb.dev_frames() == [(f, RXS_OK) for f in h2d]
    assert [(r.fis, r.crc_ok, r.answer) for r in h.received] == [(f, True, "R_OK") for f in d2h]
    assert [x["status"] for x in tb.m_txr.queue] == [TXR_OK] * n
    assert h.holds_sent > 3 and h.holds_seen > 0, (h.holds_sent, h.holds_seen)
    dut._log.info("hold/cont: host HOLD runs %d, device HOLD runs %d, collisions %d", h.holds_sent,
                  h.holds_seen, h.collisions)


@cocotb.test()
async def model_rx_errors(dut):
    """Host frames with a flipped dword, a flipped CRC, no EOF, SYNC escape mid-FIS, no payload:
    reported to the device's user with the right status, answered R_ERR (or not at all), never good;
    good frames in between still arrive."""
    tb = ModelTB(dut, idle=True, backpressure=True)
    h = tb.host
    await tb.start()
    cases = []
    for rnd in range(3 if LONG else 1):
        for kind in ("flip", "flip_crc", "no_eof", "escape", "empty", "good"):
            f = tb.fis(tb.rng.randint(3, 120))
            if kind == "flip":
                fr = TxFrame(f, flip=(tb.rng.randrange(len(f)), 1 << tb.rng.randrange(32)))
                exp = ("R_ERR", RXS_CRC)
            elif kind == "flip_crc":
                fr = TxFrame(f, flip=(len(f), tb.rng.getrandbits(32) | 1))
                exp = ("R_ERR", RXS_CRC)
            elif kind == "no_eof":
                fr = TxFrame(f, drop_eof=True)
                exp = ("R_ERR", RXS_FRAMING)
            elif kind == "escape":
                fr = TxFrame(f, sync_at=tb.rng.randint(2, len(f)))
                exp = ("ESC", RXS_ABORT)
            elif kind == "empty":
                f = []
                fr = TxFrame(f)
                exp = ("R_ERR", RXS_FRAMING)
            else:
                fr = TxFrame(f, hold_at={1: 3})
                exp = ("R_OK", RXS_OK)
            cases.append((f, fr, exp))
            h.send(fr)
    await tb.until(lambda: len(h.sent) == len(cases) and h.idle, 200_000, "host frames")
    await tb.until(lambda: len(tb.dev_frames()) >= len(cases), 50_000, "frames delivered")
    got = tb.dev_frames()
    exp_dev = [(f, st) for f, _, (_, st) in cases]
    assert [s for _, s in got] == [st for _, st in exp_dev], ([s for _, s in got], exp_dev)
    for (g, s), (f, st) in zip(got, exp_dev):
        if st == RXS_OK:
            assert g == f
    assert [fr.result for _, fr, _ in cases] == [e for *_, (e, _) in cases], \
        ([fr.result for _, fr, _ in cases], "\n".join(map(str, list(h.trace)[-200:])))


@cocotb.test()
async def model_tx_errors(dut):
    """Device frames the host answers R_ERR, escapes with SYNC mid-FIS, or never sees (lost SOF:
    the device's peer timeout): the device reports R_ERR / aborted, drains the rest of the FIS, and
    the next frame goes through."""
    tb = ModelTB(dut, idle=True, backpressure=False)
    h = tb.host
    await tb.start()
    for rnd in range(3 if LONG else 1):
        for kind, expect in (("force_err", TXR_ERR), ("escape", TXR_ABORT), ("lost_sof", TXR_ABORT),
                             ("good", TXR_OK)):
            f = tb.fis(tb.rng.randint(8, 300))
            if kind == "force_err":
                h.rx_force_err = True
            elif kind == "escape":
                h.rx_escape_after = tb.rng.randint(1, 6)
            elif kind == "lost_sof":
                h.ignore_sof = True
            n0 = len(h.received)
            tb.dev_send(f)
            await tb.until(lambda: len(tb.m_txr.queue) > 0, 50_000, f"device result ({kind})")
            res = tb.m_txr.queue.popleft()["status"]
            assert res == expect, f"{kind}: result {res}, expected {expect}"
            assert not tb.s_tx.queue, "the aborted FIS was not drained"
            if kind == "good":
                assert h.received[-1].fis == f and h.received[-1].answer == "R_OK"
            elif kind == "lost_sof":
                assert len(h.received) == n0
            await tb.until(lambda: bool(dut.link_idle.value), 1000, "idle")


@cocotb.test()
async def model_collision(dut):
    """Both sides raise X_RDY together: the device backs off, receives the host's FIS, then sends its
    own (the host keeps X_RDY: it wins)."""
    tb = ModelTB(dut, idle=False, backpressure=False)
    h = tb.host
    await tb.start()
    n = 12 if LONG else 6
    for i in range(n):
        await tb.until(lambda: h.idle and bool(dut.link_idle.value), 1000, "idle")
        a, b = tb.fis(tb.rng.randint(1, 40)), tb.fis(tb.rng.randint(1, 40))
        skew = tb.rng.randint(0, 2)          # the device asks first, the host within its round trip
        c0 = h.collisions
        tb.dev_send(b)
        await tb.cycles(skew)
        h.send(TxFrame(a))
        await tb.until(lambda: len(tb.m_txr.queue) > 0 and len(tb.dev_frames()) == i + 1, 20_000, "both frames")
        assert tb.m_txr.queue.popleft()["status"] == TXR_OK
        assert h.sent[-1].result == "R_OK" and h.received[-1].fis == b
        assert tb.dev_frames()[-1] == (a, RXS_OK)
        if h.collisions > c0:                # the host kept X_RDY: its frame went first
            assert h.log_order[-2:] == ["tx", "rx"], h.log_order[-2:]
    assert h.collisions >= n // 3, f"only {h.collisions} collisions provoked"


@cocotb.test()
async def model_pm_phy_down(dut):
    """PMREQ is answered PMNAK; losing the PHY mid-frame aborts a device frame (result aborted) and a
    host frame (delivered with status aborted), and the link comes back."""
    tb = ModelTB(dut, idle=False, backpressure=False)
    h = tb.host
    await tb.start()
    h.pm_request = True
    await tb.cycles(50)
    h.pm_request = False
    assert h.pmnak_seen > 10
    await tb.cycles(20)
    # device frame, PHY lost in the middle
    f = tb.fis(400)
    tb.dev_send(f)
    await tb.until(lambda: h.state == "RX_DATA" and len(h._rx_words) > 50, 5000, "device frame")
    dut.phy_ready.value = 0
    await tb.until(lambda: len(tb.m_txr.queue) > 0, 5000, "device result")
    assert tb.m_txr.queue.popleft()["status"] == TXR_ABORT
    await tb.cycles(20)
    dut.phy_ready.value = 1
    await tb.until(lambda: h.state == "IDLE", 5000, "host idle")
    # host frame, PHY lost in the middle
    g = tb.fis(300)
    h.send(TxFrame(g))
    await tb.until(lambda: h.state == "TX_DATA" and h._idx > 50, 5000, "host frame")
    dut.phy_ready.value = 0
    await tb.cycles(30)
    dut.phy_ready.value = 1
    await tb.until(lambda: len(tb.dev_frames()) == 1, 5000, "aborted frame delivered")
    assert tb.dev_frames()[0][1] == RXS_ABORT
    # and the link works again both ways
    h.sent.clear()
    h.send(TxFrame(g))
    tb.dev_send(f)
    await tb.until(lambda: len(tb.m_txr.queue) > 0 and h.sent and len(tb.dev_frames()) == 2, 20_000, "recovery")
    assert tb.m_txr.queue.popleft()["status"] == TXR_OK and h.received[-1].fis == f
    assert tb.dev_frames()[1] == (g, RXS_OK)


# ------------------------------------------------------------------------------------------------
CONFIGS = {
    "d64_cont": {"RX_FIFO_DEPTH": 64, "TX_CONT": 1},
    "d512_nocont": {"RX_FIFO_DEPTH": 512, "TX_CONT": 0},
}


@pytest.mark.parametrize("cfg", list(CONFIGS))
def test_ats_sata_link(cfg):
    try:
        import litesata  # noqa: F401
    except ImportError:
        pytest.fail("litesata is not installed: tools/requirements.txt must pin litesata==2024.12")
    from atstb.litesata_gen import generate
    gen = generate()
    sources = block_sources("ats_sata_link")
    sources += [HERE / "ats_sata_fault_inj.sv", gen / "ats_litesata_link_host.v",
                *block_sources("ats_stream_check"), HERE / "ats_sata_link_tb.sv"]
    run(toplevel="ats_sata_link_tb", sources=sources, test_module="test_ats_sata_link", test_dir=HERE,
        build_key=cfg, parameters=CONFIGS[cfg], waves=os.environ.get("ATS_WAVES") and
        str(ROOT / "build/waves/ats_sata_link.fst"),
        extra_env={"ATS_LONG": "1" if LONG else "0"},
        # visible to cocotb: the TB top's signals and the states diag() prints
        public={"ats_sata_link": ["st_q"],
                "ats_litesata_link_host": ["litesatalinktx_fsm_state", "litesatalinkrx_fsm_state"]})
