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
import sys
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import Event, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(HERE)]

from socket_phy import SYS_PS, SocketPhy, run_client  # noqa: E402

BOARD = ROOT / "build" / "sim_board" / "soc"


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
        self.board = json.loads((BOARD / "board.json").read_text())
        self.cfg = json.loads((BOARD / "config.json").read_text())
        self.phy = SocketPhy(dut, self, rng, ready="soc_mac_core_rx_converter_sink_ready", stop_idle=False, **faults)
        cocotb.start_soon(self._uart())

    @property
    def cycle(self) -> int:
        return int(get_sim_time("ps")) // SYS_PS

    def activity(self) -> None:
        pass

    def idle(self) -> bool:
        return False

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

    async def reset(self):
        self.dut.sys_rst.value = 1
        self.dut.eth_rst.value = 1
        await Timer(200, unit="ns")
        self.dut.sys_rst.value = 0
        self.dut.eth_rst.value = 0

    async def client(self, mode: str, n: int, seed: int, timeout: float, *args: str) -> dict:
        res = await run_client(self, mode, n, seed, timeout,
                               ["--nlba", "64", "--page", str(self.cfg["page_bytes"]), "--nslot",
                                str(self.board["udp_slots"]), "--slot-bytes", str(self.board["udp_slot_bytes"]), *args],
                               lambda: f"console:\n{self.console.decode(errors='replace')[-2000:]}")
        self.dut._log.info("%s %d: %s, phy %s", mode, n, res, dict(self.phy.stats))
        return res


def seed_of(default: int) -> int:
    return int(os.environ.get("ATS_SEED", default))


@cocotb.test()
async def boot(dut):
    """Reset, DDR3 init, format of the blank dies, IDENTIFY through the UDP link, a short random mix
    with a lossy link."""
    n = int(os.environ.get("ATS_BOARD_MIX_N", "12"))
    tb = BoardTB(dut, random.Random(seed_of(1)), drop=0.03, dup=0.03, delay=2000)
    await tb.reset()
    r = await tb.client("boot", n, seed_of(1), 2.0)
    con = tb.console.decode(errors="replace")
    assert "DDR3 ready" in con, con[-2000:]
    idn = r["identify"]
    cfg = tb.cfg
    assert idn["page_bytes"] == cfg["page_bytes"] and idn["num_lbas"] == cfg["num_lbas"], (idn, cfg)
    assert r["done"] == n, r
    dut._log.info("boot: done at cycle %d, IDENTIFY %s", tb.cycle, idn)
    out = ROOT / "build" / "sim_board"
    (out / "board_soc_console.txt").write_text(con)
    res = dict(r, cycles_total=tb.cycle, sim_us=round(tb.cycle * SYS_PS / 1e6, 1), phy=dict(tb.phy.stats))
    (out / "board_soc_boot.json").write_text(json.dumps(res, indent=1) + "\n")


# Not in `make test` until a run has passed and its cost is known (its build alone is about 15 CPU
# minutes, sim/board/README.md): ATS_BOARD_SOC=1 runs it (the demo calls it directly)
@pytest.mark.skipif(os.environ.get("ATS_BOARD_SOC", "0") in ("", "0"), reason="ATS_BOARD_SOC=1 runs the whole board SoC")
@pytest.mark.parametrize("case", ["boot"])
def test_board_soc(case):
    sys.path.insert(0, str(HERE))
    import gen_board
    from atstb.runner import run
    g = gen_board.generate(BOARD, int(os.environ.get("ATS_BOARD_TIME_DIV", "1")), quiet=True)
    run(toplevel=gen_board.NAME, sources=g["sources"], test_module="test_board_soc", test_dir=HERE,
        build_key="default", public={}, plusargs=[f"+firmware={g['firmware']}"],
        testcase=os.environ.get("ATS_BOARD_SOC_CASES", case).split(","))
