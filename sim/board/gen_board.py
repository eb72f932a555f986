# SPDX-License-Identifier: Apache-2.0
"""The whole ECPIX-5 board SoC for simulation (issue 38 item 6): soc/boards/ecpix5.py's Ecpix5SoC,
the same class and RTL as the bitstream (VexRiscv, ROM / SRAM, the device core through add_atomssd,
LiteDRAM's controller and crossbar, the eight ats_nand_emu dies on their native ports through
EmuPortArbiter, LiteEth's MAC / ARP / IP / UDP and ats_udp_host), with only the PHYs replaced
(`SimPhys`, the board file's `sim` hook):

  - clocks: sys (75 MHz) and its reset from top-level pins (`sys_clk`, `sys_rst`) in place of the
    PLL / ECLKSYNCB / CLKDIVF clock tree
  - DDR3: LiteDRAM's SDRAMPHYModel with the board's MT41K256M16 (512 MB, all of it modelled; a 1:4
    DFI as LiteX's simulations use, the same 128-bit native port) in place of ECP5DDRPHY
  - Ethernet: the byte streams of sim/board/gen_hostlink.py's PhyModel on top-level pins (`eth_clk`
    125 MHz, `tx_*`, `rx_*`), which the test bench's UDP socket model drives, in place of the RGMII PHY
  - UART: LiteX's simulation PHY (a byte stream, `serial_*`) in place of the 115,200-baud pins
  - the power-fail button's pin `pwr_fail_n` is a top-level input as on the board (its reset guard,
    soc/boards/ecpix5.py PowerFailResetGuard, is the board's, its debounce divided by --time-div)

Writes <out>/gateware/board_sim.v (the ROM reads +firmware=<file>, soc/atomssd_soc.py
patch_rom_init), the firmware's headers, csr.json, config.json and board.json, and the firmware
built as soc/boards/build.py builds it for the board (the DDR3 initialisation first, then
sw/firmware) -> <out>/fw/firmware.init. Each step only when its inputs changed.

    python sim/board/gen_board.py [--out build/sim_board/soc] [--time-div 1]
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "soc" / "boards"), str(ROOT / "soc"), str(ROOT),
                str(ROOT / "cocotb_tests" / "lib")]

from migen import ClockDomain, ResetSignal, Signal  # noqa: E402
from litex.build.generic_platform import Pins, Subsignal  # noqa: E402
from litex.build.sim import SimPlatform  # noqa: E402
from litex.soc.integration.builder import Builder  # noqa: E402

import ecpix5  # noqa: E402
from atomssd_soc import _CRG, patch_rom_init, sim_io  # noqa: E402
from gen_hostlink import PhyModel  # noqa: E402

NAME = "board_sim"
OUT = ROOT / "build" / "sim_board" / "soc"


def board_sim_io(cfg) -> list:
    """The simulation SoC's clock, reset and UART stream pins (soc/atomssd_soc.py sim_io), the
    power-fail pin and the Ethernet PHY's byte streams."""
    io = [r for r in sim_io(cfg) if r[0] in ("sys_clk", "sys_rst", "serial")]
    return io + [
        ("pwr_fail_n", 0, Pins(1)),
        ("eth_clk", 0, Pins(1)),
        ("eth_rst", 0, Pins(1)),
        ("tx", 0, Subsignal("valid", Pins(1)), Subsignal("data", Pins(8)), Subsignal("last", Pins(1))),
        ("rx", 0, Subsignal("valid", Pins(1)), Subsignal("data", Pins(8)), Subsignal("last", Pins(1))),
    ]


class SimCRG(_CRG):
    """The clock tree's replacement: sys and its reset from the pins, the reset ORed with `hold` (the
    power-fail pin's reset guard, as BoardCRG ORs it into its sys reset synchroniser)."""

    def __init__(self, clk, rst):
        self.hold = Signal()
        rst_or = Signal()
        super().__init__(clk, rst_or)
        self.comb += rst_or.eq(rst | self.hold)


class SimPhys:
    """The board SoC's PHYs for simulation (Ecpix5SoC's `sim` argument). time_div > 1 divides the
    emulated dies' array times (the emulator's ARRAY_TIME_DIV, as the sim configuration's dies) and
    the power-fail pin's debounce (ecpix5.PF_DEBOUNCE_CYCLES)."""
    uart_name = "sim"

    def __init__(self, cfg, time_div: int = 1):
        self.platform = SimPlatform("SIM", board_sim_io(cfg))
        self.emu_times = dict(ecpix5.EMU_TIMES, ARRAY_TIME_DIV=time_div)
        self.pf_debounce = max(1, ecpix5.PF_DEBOUNCE_CYCLES // time_div)

    def crg(self, platform):
        return SimCRG(platform.request("sys_clk"), platform.request("sys_rst"))

    def ddrphy(self, sys_hz):
        from litedram.modules import MT41K256M16
        from litedram.phy.model import SDRAMPHYModel, get_sdram_phy_settings
        module = MT41K256M16(sys_hz, "1:4")
        settings = get_sdram_phy_settings(memtype="DDR3", data_width=16, clk_freq=sys_hz)
        return SDRAMPHYModel(module=module, settings=settings, clk_freq=sys_hz), module

    def ethphy(self, platform):
        phy = PhyModel()
        clk, rst = platform.request("eth_clk"), platform.request("eth_rst")
        tx, rx = platform.request("tx"), platform.request("rx")
        # the eth domains' reset: the pin, and the system reset as on the board, where the RGMII PHY's
        # LiteEthPHYHWReset holds them while sys is in reset and 256 cycles after (a reset of the
        # guard's, with the bench's eth_rst low, must not leave LiteEth's clock-crossing FIFOs half reset)
        phy.comb += [phy.eth_clk.eq(clk), phy.eth_rst.eq(rst | ResetSignal("sys")),
                     tx.valid.eq(phy.tx_valid), tx.data.eq(phy.tx_data), tx.last.eq(phy.tx_last),
                     phy.rx_valid.eq(rx.valid), phy.rx_data.eq(rx.data), phy.rx_last.eq(rx.last)]
        return phy


def _digest(paths, extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for p in paths:
        h.update(str(p).encode())
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def sim_config(blocks: int = 0):
    """The board's configuration, or (blocks > 0) the same with fewer blocks a die and half the pages
    as LBAs: a shorter online format (it reads page 0 of every block, one at a time, about 29,000
    cycles each: 4,320 bytes at the 2 + 2-cycle pin timings, then the ECC path; sim/board/README.md), the same RTL with other parameters."""
    cfg = ecpix5.ECPIX5
    if blocks:
        pages = cfg.num_chan * cfg.ways * blocks * cfg.pages_per_block
        cfg = dataclasses.replace(cfg, blocks=blocks, num_lbas=min(cfg.num_lbas, pages // 2))
    return cfg


def generate(out: Path = OUT, time_div: int = 1, quiet: bool = False, blocks: int = 0) -> dict:
    """The SoC's Verilog and headers, then the firmware; returns {verilog, sources, firmware, board}."""
    from ats_litex import core_sources
    cfg = sim_config(blocks)
    out = out.resolve()
    gw = out / "gateware"
    v = gw / f"{NAME}.v"
    srcs = sorted((ROOT / "soc").glob("*.py")) + sorted((ROOT / "soc" / "boards").glob("*.py")) \
        + [HERE / "gen_board.py", HERE / "gen_hostlink.py"] + core_sources(cfg)
    d = _digest(srcs, json.dumps([cfg.as_dict(), time_div], sort_keys=True))
    stamp = out / ".gen.sha256"
    if not (stamp.exists() and stamp.read_text().strip() == d and v.exists()):
        if not quiet:
            print(f"[board-sim] generating the board SoC -> {out}", flush=True)
        phys = SimPhys(cfg, time_div)
        soc = ecpix5.Ecpix5SoC(cfg, sim=phys)
        builder = Builder(soc, output_dir=str(out), compile_software=False, compile_gateware=False,
                          csr_json=str(out / "csr.json"), csr_csv=str(out / "csr.csv"))
        builder.build(build_name=NAME, run=False, build=False)     # headers, csr.json (no Verilog)
        platform = phys.platform
        fragment = soc.get_fragment()
        platform.finalize(fragment)
        gw.mkdir(parents=True, exist_ok=True)
        cwd = os.getcwd()
        os.chdir(gw)                      # the memories' .init files are written next to the Verilog
        try:
            platform.get_verilog(fragment, name=NAME).write(str(v))
        finally:
            os.chdir(cwd)
        patch_rom_init(v)
        (gw / "sources.f").write_text("\n".join(str(p) for p, *_ in platform.sources) + "\n")
        (out / "config.json").write_text(json.dumps(cfg.as_dict(), indent=1) + "\n")
        board = dict(board="ecpix5-sim", config=cfg.name, udp_port=ecpix5.UDP_PORT, udp_slots=ecpix5.UDP_SLOTS,
                     udp_slot_bytes=ecpix5.UDP_SLOT_BYTES, sys_clk_mhz=cfg.sys_clk_hz / 1e6, eth_clk_mhz=125.0,
                     rom_bytes=ecpix5.ROM_SIZE, emu_dram_bases=soc.emu_bases, time_div=time_div,
                     dram_port_words_bits=ecpix5.ports_info(soc), pf_debounce=phys.pf_debounce)
        (out / "board.json").write_text(json.dumps(board, indent=1) + "\n")
        stamp.write_text(d + "\n")
    fw = firmware(out, quiet)
    sources = [v] + [Path(p) for p in (gw / "sources.f").read_text().split()]
    return dict(verilog=v, sources=sources, firmware=fw, board=json.loads((out / "board.json").read_text()))


def _board_build():
    """soc/boards/build.py as the module ats_board_build (one load per process)."""
    import importlib.util
    mod = sys.modules.get("ats_board_build")
    if mod is None:
        spec = importlib.util.spec_from_file_location("ats_board_build", ROOT / "soc" / "boards" / "build.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["ats_board_build"] = mod
        spec.loader.exec_module(mod)
    return mod


def firmware(out: Path, quiet: bool = False) -> Path:
    """soc/boards/build.py's board firmware (DDR3 initialisation, then sw/firmware; checked against
    the 32 KiB ROM) against the simulated SoC's headers -> <out>/fw/firmware.init."""
    # soc/boards/build.py, loaded by its path: in a pytest worker `import build` can already name
    # sim/soc/build.py (the system tests import it under that name)
    board_build = _board_build()
    fw = out / "fw" / "firmware.init"
    srcs = sorted((ROOT / "sw" / "firmware").rglob("*.[chS]")) + [ROOT / "sw" / "firmware" / "linker.ld",
                                                                ROOT / "sw" / "firmware" / "Makefile",
                                                                ROOT / "soc" / "boards" / "fw" / "dram_init.c",
                                                                out / ".gen.sha256"]
    d = _digest(srcs, "fw")
    stamp = out / ".fw.sha256"
    if not (stamp.exists() and stamp.read_text().strip() == d and fw.exists()):
        if not quiet:
            print("[board-sim] building the board firmware", flush=True)
        info = board_build.firmware_rom(out, NAME)
        if not quiet:
            print(f"[board-sim] firmware: {info}", flush=True)
        stamp.write_text(d + "\n")
    return fw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--time-div", type=int, default=1, help="the emulated dies' ARRAY_TIME_DIV (1: the board's)")
    ap.add_argument("--blocks", type=int, default=0, help="blocks a die (0: the board's 128)")
    a = ap.parse_args()
    r = generate(a.out, a.time_div, blocks=a.blocks)
    print(r["verilog"], r["firmware"])


if __name__ == "__main__":
    main()
