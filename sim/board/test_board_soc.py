# SPDX-License-Identifier: Apache-2.0
"""The whole ECPIX-5 board SoC in Verilator (issue 38 item 6): soc/boards/ecpix5.py's Ecpix5SoC with
the bitstream's RTL (VexRiscv and the board firmware in its ROM, the device core, LiteDRAM's
controller with the eight ats_nand_emu dies' pages in the DDR3, LiteEth + ats_udp_host) and only the
PHYs replaced (sim/board/gen_board.py: LiteDRAM's SDRAMPHYModel, the UDP socket model of the
Ethernet PHY, LiteX's UART stream), driven by the host library's UDP client (atomssd.udplink) in its
own process over a real UDP socket (socket_phy.py).

`boot`: from reset the firmware initialises the DDR3 (liblitedram), finds the dies blank and formats
them, and answers IDENTIFY through the UDP link: the client's IDENTIFY (sent from the first cycle,
retried while the device boots) must report the board's geometry (soc/boards/ecpix5.py ECPIX5),
then a short random mix (WRITE / READ / TRIM / FLUSH, read data checked against the client's dict)
with seeded drops, duplicates and delays on the link. The console (UART) is kept in the log.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import Event, ReadOnly, RisingEdge, SimTimeoutError, Timer, with_timeout
from cocotb.utils import get_sim_time

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(HERE)]

from socket_phy import SYS_PS, SocketPhy, run_client  # noqa: E402

BOARD = ROOT / "build" / "sim_board" / "soc"


def board_key(div: int, blocks: int) -> str:
    """The build of one ARRAY_TIME_DIV (the dies' array times divided) and blocks a die (0: the board's)."""
    return "default" if div == 1 and not blocks else f"div{div}" + (f"_b{blocks}" if blocks else "")


def board_dir(div: int, blocks: int = 0) -> Path:
    """The generated SoC of one build (its own Verilog, headers and firmware)."""
    k = board_key(div, blocks)
    return BOARD if k == "default" else BOARD.with_name(f"soc_{k}")


class BoardTB:
    def __init__(self, dut, rng, **faults):
        self.dut, self.rng = dut, rng
        cocotb.start_soon(Clock(dut.sys_clk, SYS_PS, unit="ps").start())
        cocotb.start_soon(Clock(dut.eth_clk, 8000, unit="ps").start())       # 125 MHz
        dut.pwr_fail_n.value = 1
        dut.sim_trace.value = 0
        dut.serial_sink_valid.value = 0
        dut.serial_sink_data.value = 0
        dut.serial_source_ready.value = 1
        self.console = bytearray()
        self.client_done = Event()
        bdir = Path(os.environ.get("ATS_BOARD_DIR", BOARD))
        self.board = json.loads((bdir / "board.json").read_text())
        self.cfg = json.loads((bdir / "config.json").read_text())
        self.phy = SocketPhy(dut, self, rng, ready="soc_mac_core_rx_preamble_sink_ready", stop_idle=False, **faults)
        cocotb.start_soon(self._uart())
        mon = int(os.environ.get("ATS_BOARD_MON", "0"))
        if mon:
            cocotb.start_soon(self._monitor(mon))
        tr = os.environ.get("ATS_BOARD_TRACE", "")
        if tr:
            cocotb.start_soon(self._trace(*map(int, tr.split(","))))

    @property
    def cycle(self) -> int:
        return int(get_sim_time("ps")) // SYS_PS

    def activity(self) -> None:
        pass

    def idle(self) -> bool:
        return False

    async def _monitor(self, every: int):
        """ATS_BOARD_MON=<cycles>: a log line every so many cycles (where the CPU fetches, the dies'
        CE# and R/B#), to see a boot that prints nothing for long."""
        d = self.dut
        while True:
            await Timer(every * SYS_PS, unit="ps")
            d._log.info("mon @%d: ibus %08x ce_n %02x rb_n %02x", self.cycle, int(d.soc_ecpix5soc_ibus_adr.value) << 2,
                        int(d.soc_nand_ce_n.value), int(d.soc_nand_rb_n.value))

    async def _trace(self, start: int, lines: int):
        """ATS_BOARD_TRACE=<cycle>,<lines>: from that cycle, a log line whenever channel 0's pins seen
        by die 0 change (CE#, RE#, WE#, CLE, ALE), with its DQ output enable and the bus the core samples."""
        d = self.dut
        await Timer(start * SYS_PS, unit="ps")
        last = None
        while lines > 0:
            await RisingEdge(d.sys_clk)
            await ReadOnly()
            v = (int(d.soc_nand_ce_n.value) & 1, int(d.soc_nand_re_n.value) & 1, int(d.soc_nand_we_n.value) & 1,
                 int(d.soc_nand_cle.value) & 1, int(d.soc_nand_ale.value) & 1, int(d.soc_emu0_dq_oe.value),
                 int(d.soc_nand_dq_i.value) & 0xFF, int(d.soc_emu0_dq_o.value))
            if v != last:
                d._log.info("trace @%d: ce_n %d re_n %d we_n %d cle %d ale %d | oe0 %d dq_i %02x emu0_dq_o %02x",
                            self.cycle, *v)
                last = v
                lines -= 1

    async def _uart(self):
        """The console: one byte a cycle while the UART's stream offers one (ready held at 1)."""
        d = self.dut
        line = bytearray()
        while True:
            if not int(d.serial_source_valid.value):
                await RisingEdge(d.serial_source_valid)
                await ReadOnly()
            b = int(d.serial_source_data.value)
            self.console.append(b)
            if b == 10:
                d._log.info("uart @%d: %s", self.cycle, line.decode(errors="replace").rstrip())
                line.clear()
            elif b != 13:
                line.append(b)
            await RisingEdge(d.sys_clk)
            await ReadOnly()

    def udp_counters(self) -> dict:
        """The host link's CSRs (soc/boards/ecpix5.py UdpHostCounters, bank `udp_host`): each
        register's value as the CSR bank returns it to a bus read (its `_w` read-data wire, found by
        name: the bank's number is LiteX's allocation)."""
        out = {}
        for reg in ("drop_pkts", "err_pkts", "stray_cpls"):
            for bank in range(32):
                h = getattr(self.dut, f"csr_bankarray_csrbank{bank}_{reg}_w", None)
                if h is not None:
                    out[reg] = int(h.value)
                    break
            else:
                raise AssertionError(f"no CSR {reg} in the board SoC")
        return out

    async def reset(self, ns: int = 200, pin_up: bool = False):
        """The system reset for `ns` (at least 200); pin_up: the power-fail pin rises half-way through
        (power back before the reset ends: at least 100 ns, the pin's 2-flop synchroniser, before)."""
        self.dut.sys_rst.value = 1
        self.dut.eth_rst.value = 1
        if pin_up:
            await Timer(ns // 2, unit="ns")
            self.dut.pwr_fail_n.value = 1
            ns -= ns // 2
        await Timer(ns, unit="ns")
        self.dut.sys_rst.value = 0
        self.dut.eth_rst.value = 0

    async def client(self, mode: str, n: int, seed: int, timeout: float, *args: str) -> dict:
        """One client run; fails (the client killed) if it has not finished within ATS_BOARD_LIMIT
        simulated cycles (default 40 M: the board's own geometry formats in about 30 M)."""
        limit = int(float(os.environ.get("ATS_BOARD_LIMIT", "40e6")))
        diag = lambda: f"console:\n{self.console.decode(errors='replace')[-2000:]}"   # noqa: E731
        try:
            res = await with_timeout(run_client(self, mode, n, seed, timeout,
                                                ["--nlba", "64", "--page", str(self.cfg["page_bytes"]), "--nslot",
                                                 str(self.board["udp_slots"]), "--slot-bytes",
                                                 str(self.board["udp_slot_bytes"]), *args], diag),
                                     limit * SYS_PS, "ps")
        except SimTimeoutError:
            if self.phy.proc is not None:
                self.phy.proc.kill()
                self.phy.proc.wait()
                self.phy.proc = None
            raise AssertionError(f"client {mode}: not done within {limit} cycles (cycle {self.cycle}); "
                                 f"phy {dict(self.phy.stats)}; {diag()}") from None
        self.dut._log.info("%s %d: %s, phy %s", mode, n, res, dict(self.phy.stats))
        return res


class GuardWatch:
    """The power-fail pin's reset guard seen from outside: the sys reset as applied (the pins' reset
    ORed with the guard's `hold`, `SimCRG`) sampled every cycle."""

    def __init__(self, dut):
        self.dut = dut
        self.held_cycles = 0
        self.end = None

    async def released(self, debounce: int):
        """Waits until the system reset has ended after the guard held it (at most 4 x debounce +
        the reset: the guard must not hold for ever); held_cycles: cycles the guard held it."""
        d = self.dut
        rst, hold = d.soc_simphys_rst_or, d.soc_pf_guard_hold
        limit = 4 * debounce + 100_000
        seen = False
        for _ in range(limit):
            await RisingEdge(d.sys_clk)
            await ReadOnly()
            if int(hold.value):
                seen = True
                self.held_cycles += 1
            if seen and not int(rst.value):
                self.end = int(get_sim_time("ps")) // SYS_PS
                return
        raise AssertionError(f"the guard held the reset {self.held_cycles} cycles, not released within {limit}"
                             if seen else f"the guard never held the system reset after the pin's release ({limit} cycles)")


# C++ flags of the board model (atstb.runner ATS_VL_OPT: OPT_FAST, OPT_SLOW, OPT_GLOBAL, parallel):
# the per-cycle code at -O1 in the split form (sim/board/README.md "Build": the slice in 295 CPU s
# with a cold build against 630 at -O0; -O2 ran 4.7 % more cycles a CPU second and built 18 % slower)
BOARD_OPT = "-O1,,-O2,1"
BOARD_SPLIT = 4000


def seed_of(default: int) -> int:
    return int(os.environ.get("ATS_SEED", default))


@cocotb.test()
async def boot(dut):
    """Reset, DDR3 init, format of the blank dies, IDENTIFY through the UDP link, a short random mix
    with a lossy link."""
    n = int(os.environ.get("ATS_BOARD_MIX_N", "12"))
    lbas = int(os.environ.get("ATS_BOARD_MIX_LBAS", "0"))
    tb = BoardTB(dut, random.Random(seed_of(1)), drop=0.03, dup=0.03, delay=2000)
    await tb.reset()
    r = await tb.client("boot", n, seed_of(1), float(os.environ.get("ATS_BOARD_CLIENT_TIMEOUT", "2.0")),
                        "--lbas", str(lbas))
    # the host link's CSRs against what the PHY model saw: every ERROR the block queued went out
    # (the model counts before its own faults), no stray completion; drop_pkts: packets the block
    # dropped whole (their reply found its queue full), at most the datagrams it was given
    for _ in range(2000):                                # the last reply's frame is out; nothing comes in
        await RisingEdge(dut.sys_clk)
    csr, st = tb.udp_counters(), tb.phy.stats
    dut._log.info("udp_host CSRs %s; phy: ERROR replies %d, datagrams in %d (%d dropped, %d duplicated by the model)",
                  csr, st["err_out"], st["to_dev"], st["dropped"], st["duplicated"])
    assert csr["err_pkts"] == st["err_out"] % 65536, (csr, dict(st))
    assert csr["stray_cpls"] == 0 and csr["drop_pkts"] <= st["to_dev"], (csr, dict(st))
    if lbas:                                             # the slice's window: what its READs met
        assert min(r["read_never"], r["read_trimmed"], r["overwrite"], r["trim"], r["flush"]) > 0, r
    con = tb.console.decode(errors="replace")
    assert "DDR3 ready" in con and "format: 0, 0 factory bad blocks" in con and "ready (boot" in con, con[-2000:]
    idn = r["identify"]
    cfg = tb.cfg
    assert idn["page_bytes"] == cfg["page_bytes"] and idn["num_lbas"] == cfg["num_lbas"], (idn, cfg)
    assert r["done"] == n, r
    dut._log.info("boot: done at cycle %d, IDENTIFY %s", tb.cycle, idn)
    out = ROOT / "build" / "sim_board"
    name = os.environ.get("ATS_BOARD_OUT", "boot")             # slice: board_soc_slice.json
    (out / ("board_soc_console.txt" if name == "boot" else f"board_soc_{name}_console.txt")).write_text(con)
    res = dict(r, cycles_total=tb.cycle, sim_us=round(tb.cycle * SYS_PS / 1e6, 1), phy=dict(tb.phy.stats),
               udp_host_csr=csr)
    (out / f"board_soc_{name}.json").write_text(json.dumps(res, indent=1) + "\n")


@cocotb.test()
async def power_fail(dut):
    """The power-fail input and recovery: boot and format, N LBAs written and FLUSHed through the link
    (durable), then a second host rewrites the first N/2 and writes N/4 fresh LBAs without a FLUSH
    and the power-fail pin falls while its writes are in flight (the dies tear what they program,
    the core sees pwr_fail); the system reset follows (the board's reset button; the dies keep their
    page states, the DDR3 model its contents), the pin rises after the reset ended (ATS_BOARD_PF_RELEASE),
    the reset guard holds the system reset until the pin has been high for its debounce, the
    firmware boots again and recovers;
    a third host reads every LBA of the history and checks it with the system tests' invariants
    checker (tests/system/model.py Model: INV-LBA, INV-DUR, INV-ATOM, INV-ORDER; udp_client_run.py
    pf_history / pf_check)."""
    n = int(os.environ.get("ATS_BOARD_PF_N", "12"))
    n2 = n // 2
    seed = seed_of(1)
    rng = random.Random(seed)
    tb = BoardTB(dut, rng)
    await tb.reset()
    r1 = await tb.client("pfwrite", n, seed, 2.0, "--n2", str(n2))
    c_flushed = tb.cycle
    # the rewrite, cut: the client is killed at the cut (its commands never complete)
    phy = tb.phy
    phy.first_in = None
    py = ROOT / ".venv" / "bin" / "python"
    phy.proc = subprocess.Popen([str(py if py.exists() else "python3"), str(HERE / "udp_client_run.py"), "pfrewrite",
                                 str(n), "--n2", str(n2), "--port", str(phy.port), "--timeout", "2.0",
                                 "--nlba", "64", "--page", str(tb.cfg["page_bytes"]),
                                 "--nslot", str(tb.board["udp_slots"]), "--slot-bytes", str(tb.board["udp_slot_bytes"])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while phy.first_in is None:
        await RisingEdge(dut.sys_clk)
    c_in = tb.cycle
    cut_after = rng.randint(0, int(os.environ.get("ATS_BOARD_PF_WINDOW", "20000")))
    for _ in range(cut_after):
        await RisingEdge(dut.sys_clk)
    dut.pwr_fail_n.value = 0
    c_cut = tb.cycle
    phy.proc.kill()
    phy.proc.wait()
    phy.proc = None
    # the board's power is off: what the dead host sent and the PHY has not put on the wire yet is
    # lost (its socket's unread datagrams, the frames queued for the MAC, the delayed ones). Kept,
    # they reached the rebooted device and wrote the dead host's pages after the reboot (seen: two
    # LBAs showing the rewrite although the cut came 1,554 cycles after its first frame, before any
    # of its programs could end, and recovery found only the 12 flushed records)
    phy.sock.setblocking(False)
    try:
        while True:
            phy.sock.recvfrom(4096)
    except BlockingIOError:
        pass
    phy.rxq.clear()
    phy.late = [x for x in phy.late if x[3] is not None]
    for _ in range(rng.randint(500, 3000)):                  # the power off
        await RisingEdge(dut.sys_clk)
    # power on. ATS_BOARD_PF_RELEASE: `after` (default) the reset (the board's reset button) with the
    # pin still low, the pin released 0..20,000 cycles after the reset ended: the write buffer's
    # power-fail state is sticky until a reset (rtl/wbuf `dump_q`), and before the reset guard
    # (soc/boards/ecpix5.py PowerFailResetGuard) that froze every host READ and WRITE for ever;
    # `in`: the pin rising while the reset holds (the supply good before a power-on reset ends);
    # `only`: no reset button, the pin's release alone (power back). The guard must hold or apply
    # the system reset from the release until the pin has been high for its debounce
    # the cut as before the guard: the core sees pwr_fail and nothing is reset while the pin is held
    assert int(dut.soc_pwr_fail.value) == 1 and int(dut.soc_pf_guard_hold.value) == 0
    mode = os.environ.get("ATS_BOARD_PF_RELEASE", "after")
    deb = tb.board["pf_debounce"]
    guard = GuardWatch(dut)
    if mode == "in":
        await tb.reset(rng.randint(200, 2000), pin_up=True)
    else:
        if mode == "after":
            await tb.reset(rng.randint(200, 2000))
        else:
            assert mode == "only", mode
        for _ in range(rng.randint(0, 20_000)):
            await RisingEdge(dut.sys_clk)
        dut.pwr_fail_n.value = 1
    c_up = tb.cycle
    await guard.released(deb)
    dut._log.info("power_fail: release %s, the pin up at cycle %d, the system reset held by the guard %d cycles "
                  "(debounce %d), ended at cycle %d", mode, c_up, guard.held_cycles, deb, guard.end)
    assert guard.end - c_up >= deb, (guard.end, c_up, deb)
    con0 = len(tb.console)
    r3 = await tb.client("pfcheck", n, seed, 2.0, "--n2", str(n2))
    con = tb.console.decode(errors="replace")
    assert con.count("DDR3 ready") == 2, con[-3000:]
    assert r3["done"] == n + n2 // 2, r3
    dut._log.info("power_fail: cut %d cycles after the rewrite's first frame (cycle %d); after the reboot "
                  "%d LBAs show the flushed version, %d the unflushed rewrite's, %d zeros", cut_after, c_cut,
                  r3["first"], r3["second"], r3["zero"])
    out = ROOT / "build" / "sim_board"
    (out / "board_soc_pf_console.txt").write_text(con)
    res = dict(write=r1, check=r3, cut_cycle=c_cut, flushed_cycle=c_flushed, rewrite_first_in=c_in,
               cut_after=cut_after, release=mode, pin_up_cycle=c_up, guard_held_cycles=guard.held_cycles,
               guard_reset_end=guard.end, pf_debounce=deb, cycles_total=tb.cycle, reboot_console=con[con0:][-4000:])
    (out / "board_soc_power_fail.json").write_text(json.dumps(res, indent=1) + "\n")


@cocotb.test()
async def throughput(dut):
    """The UDP host link's throughput through the whole SoC (issue 38's figure): boot and format,
    then ATS_BOARD_TPUT_N (32) one-page WRITEs of seeded data, then READs of them checked by a second
    host, 4 in flight (the board's slots), no faults on the link. MB/s = data bytes over the
    simulated time at 75 MHz from the first frame in to the last datagram out, against the GbE limit
    (about 114 MB/s of data for this framing, sim/board/README.md). The client's wall-clock time
    costs simulated cycles here (the simulation never stops for it), a few per millisecond of wall
    time at this bench's speed; the longest command latency is reported beside it."""
    n = int(os.environ.get("ATS_BOARD_TPUT_N", "32"))
    seed = seed_of(3)
    tb = BoardTB(dut, random.Random(seed))
    await tb.reset()
    r = await tb.client("boot", 0, seed, 2.0)                  # IDENTIFY once the device is ready
    out = dict(boot_cycles=tb.cycle, identify=r["identify"])
    for mode in ("wstream", "rstream"):
        r = await tb.client(mode, n, seed, float(os.environ.get("ATS_BOARD_TPUT_TIMEOUT", "5")))
        assert r["done"] == n, r
        page = tb.cfg["page_bytes"]
        mbs = n * page / (r["busy_cycles"] * SYS_PS * 1e-12) / 1e6
        out[mode] = dict(commands=n, bytes=n * page, cycles=r["busy_cycles"], mb_s=round(mbs, 1),
                         max_latency_cycles=r["max_latency"], retries=r["retries"])
    dut._log.info("throughput: %s", out)
    path = ROOT / "build" / "sim_board" / "board_soc_throughput.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


# `slice` (make test): the smallest build that is still the board's RTL and firmware (SLICE: the
# dies' array times / 10, 8 blocks a die, so the online format reads 64 pages, not 1,024), boot,
# IDENTIFY and SLICE_MIX_N random commands over a lossy link (the `boot` cocotb test). The other
# cases are millions of cycles more at about 11,000 a CPU second (sim/board/README.md "Status"):
# ATS_BOARD_SOC=1 runs them (the demo calls them directly) with ATS_BOARD_TIME_DIV / ATS_BOARD_BLOCKS
SLICE = dict(div=10, blocks=8)
SLICE_MIX_N = 16               # random commands after the client's fixed opening (9 commands)
SLICE_MIX_LBAS = 8             # on 8 LBAs: overwrites, TRIMs of written LBAs, reads of trimmed ones
SLICE_TIMEOUT = 1.0            # the client's first timeout, s (each lost datagram costs it in cycles)
SLICE_LIMIT = 6_000_000        # cycles for the client (the slice is about 2.6 M: a hang fails, not waits)


@pytest.mark.parametrize("case", ["slice", "boot", "power_fail", "throughput"])
def test_board_soc(case):
    sys.path.insert(0, str(HERE))
    import gen_board
    from atstb.runner import run
    env = {}
    if case == "slice":
        div, blocks = SLICE["div"], SLICE["blocks"]
        env = {"ATS_BOARD_MIX_N": os.environ.get("ATS_BOARD_MIX_N", str(SLICE_MIX_N)), "ATS_BOARD_OUT": "slice",
               "ATS_BOARD_MIX_LBAS": os.environ.get("ATS_BOARD_MIX_LBAS", str(SLICE_MIX_LBAS)),
               "ATS_BOARD_CLIENT_TIMEOUT": os.environ.get("ATS_BOARD_CLIENT_TIMEOUT", str(SLICE_TIMEOUT)),
               "ATS_BOARD_LIMIT": os.environ.get("ATS_BOARD_LIMIT", str(SLICE_LIMIT))}
    else:
        if os.environ.get("ATS_BOARD_SOC", "0") in ("", "0"):
            pytest.skip("ATS_BOARD_SOC=1 runs the whole board SoC (millions of cycles: boot and the online format)")
        div = int(os.environ.get("ATS_BOARD_TIME_DIV", "1"))
        blocks = int(os.environ.get("ATS_BOARD_BLOCKS", "0"))
    bdir = board_dir(div, blocks)
    g = gen_board.generate(bdir, div, quiet=True, blocks=blocks)
    # The build (sim/board/README.md "Build"): Verilator's parallel form (one object per file, make
    # -j), functions split at BOARD_SPLIT statements, OPT_FAST from BOARD_OPT (the 11.7 MB model as
    # one -O1 unit did not finish in 35 CPU minutes; split, it builds in about 140); set only around
    # this build, not for the worker
    old = os.environ.get("ATS_VL_OPT")
    os.environ["ATS_VL_OPT"] = old or BOARD_OPT
    try:
        run(toplevel=gen_board.NAME, sources=g["sources"], test_module="test_board_soc", test_dir=HERE,
            build_key=board_key(div, blocks), public={}, plusargs=[f"+firmware={g['firmware']}"],
            extra_env={"ATS_BOARD_DIR": str(bdir), **env}, results_name=f"test_board_soc_{case}",
            build_args=["--output-split", str(BOARD_SPLIT), "--output-split-cfuncs", str(BOARD_SPLIT)],
            testcase=["boot"] if case == "slice" else os.environ.get("ATS_BOARD_SOC_CASES", case).split(","))
    finally:
        if old is None:
            os.environ.pop("ATS_VL_OPT", None)
        else:
            os.environ["ATS_VL_OPT"] = old


# ---- the power-fail pin's reset guard alone (soc/boards/ecpix5.py PowerFailResetGuard), in migen's
# simulator: random pin and reset waveforms (presses, bounces, resets in and out of cuts) against a
# reference written from its contract, and the properties the board relies on

def guard_ref(pins: list[int], rsts: list[int], debounce: int) -> list[int]:
    """The sys reset as applied in each cycle, from the contract (docs/boards.md "The power-fail
    button"), on the synchronised pin (1: power failed) and the reset pin: a cut is on in a cycle when
    the pin was seen low (pins 1) in one of the `debounce` cycles before it; the guard holds the
    reset in the next cycle when a cut is on and (it holds it now, or the reset is applied now, or
    the pin is seen high now)."""
    out, held = [], 0
    for t, (pf, r) in enumerate(zip(pins, rsts)):
        applied = r | held
        out.append(applied)
        cut = any(pins[max(0, t - debounce):t])
        held = int(cut and (held or applied or not pf))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pf_reset_guard(seed):
    sys.path.insert(0, str(ROOT / "soc" / "boards"))
    from migen import ClockDomain, Module, Signal, run_simulation
    import ecpix5

    deb = 9
    rng = random.Random(seed)
    pins, rsts = [], []
    while len(pins) < 4000:                     # segments: idle, press (with bounces), reset pulses
        k = rng.random()
        n = rng.randint(1, 3 * deb)
        if k < 0.3:
            seg = [0] * n
        elif k < 0.6:
            seg = [1] * n
        else:
            seg = [rng.randint(0, 1) for _ in range(n)]        # a bouncing pin
        pins += seg
        rsts += [int(rng.random() < 0.01) for _ in seg]

    class Top(Module):
        def __init__(self):
            self.clock_domains.cd_sys = ClockDomain()
            self.ext = Signal()
            self.submodules.g = g = ecpix5.PowerFailResetGuard(deb)
            self.applied = Signal()
            self.comb += [self.applied.eq(self.ext | g.hold), self.cd_sys.rst.eq(self.applied)]

    top = Top()
    got = []

    def gen():
        for pf, r in zip(pins, rsts):
            yield top.g.pf.eq(pf)
            yield top.ext.eq(r)
            yield
            got.append((yield top.applied))

    run_simulation(top, gen(), clocks={"sys": 10})
    ref = guard_ref(pins, rsts, deb)
    bad = [t for t, (a, b) in enumerate(zip(got, ref)) if a != b]
    assert not bad, f"the guard differs from its contract at cycles {bad[:8]} (of {len(bad)})"
    # the properties the board relies on: (1) no freeze: when the pin has just been high for
    # `deb` cycles after being low, the reset was applied in one of those cycles (the write buffer's
    # power-fail state is cleared after the last low cycle); (2) the cut itself resets nothing: a
    # press with no cut on and the device running, while the pin stays low and no reset pin comes,
    # leaves the reset off (the core sees pwr_fail, as without the guard)
    cuts = 0
    for t in range(deb + 1, len(got)):
        if pins[t - deb - 1] and not any(pins[t - deb:t]):
            cuts += 1
            assert any(got[t - deb:t + 1]), f"a cut ended at cycle {t} without a reset: the device would freeze"
    presses = 0
    for t0 in range(deb, len(got)):
        if pins[t0] and not any(pins[t0 - deb:t0]) and not got[t0 - 1]:       # a press, no cut on
            presses += 1
            t = t0
            while t < len(got) and pins[t] and not any(rsts[t0 - 1:t + 1]):
                assert not got[t], f"the reset applied at cycle {t} while the pin is held since {t0}, no reset pin"
                t += 1
    assert cuts > 20 and presses > 20, (cuts, presses)
