#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The whole device on the LambdaConcept ECPIX-5 85F (LFE5UM5G-85F-8BG554): docs/boards.md.

  python soc/boards/ecpix5.py [--out build/boards/ecpix5] [--ip 192.168.1.50] [--mac 0x10e2d5000001]

writes the board SoC (gateware/: Verilog, LPF, LiteX's Yosys script; software/include/generated/:
the firmware's headers; csr.json, config.json). soc/boards/build.py (`make bitstream BOARD=ecpix5`)
adds the firmware to the ROM and runs Yosys, nextpnr-ecp5 and ecppack.

What it holds (docs/architecture.md, soc/README.md):
  - the CPU side of the simulation SoC (soc/atomssd_soc.py): VexRiscv standard, ROM 64 KiB (the
    firmware and its DDR3 initialisation), SRAM 16 KiB, no timer, UART console on the board's USB
    serial; main RAM in the DDR3
  - the device core through add_atomssd (the same RTL and CSRs as the simulation SoC), 4 channels x
    2 ways, 4 KiB pages (the `default` device's geometry)
  - LiteDRAM on the 512 MB DDR3 (ECP5DDRPHY, MT41K256M16, 1:2); no L2 cache (the CPU's data cache only:
    an L2 at the 128-bit port is 16 byte-lane block RAMs)
  - eight NAND die emulators (rtl/nand_emu) on the core's NAND pins, each with a LiteDRAM native
    port of its own (the crossbar arbitrates), their arrays in the DDR3 above the CPU's 16 MiB
  - LiteEth on the RGMII PHY with its ARP / IP / UDP stack (no ICMP) (32-bit datapath at the system
    clock; the MAC on 8 bits in the PHY's clock) and the UDP host link (rtl/hostlink/ats_udp_host) on UDP port 16724, wired to the core's
    host port in place of the simulation's host port pads
  - the power-fail input (constraints/ecpix5.py: a button on PMOD 0 pin 1), synchronised, to the
    core's pwr_fail and to the emulated dies' power_ok, and its reset guard (PowerFailResetGuard:
    the system reset is held, or applied, until the pin has been released for PF_DEBOUNCE_CYCLES)
  - the host link's counters (drop_pkts, err_pkts, stray_cpls) as CSRs (`udp_host` bank)
NVMe (PCIe) stays in simulation: no open flow places a PCIe block on the ECP5.
"""
from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "soc"))
sys.path.insert(0, str(ROOT))

from migen import ClockDomain, Signal, Instance, ClockSignal, ResetSignal, If, Cat, Record  # noqa: E402
from litex.soc.interconnect.csr import CSRStatus  # noqa: E402
from migen.genlib.cdc import MultiReg  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402
from litex.soc.cores.clock import ECP5PLL  # noqa: E402
from litex.soc.integration.soc_core import SoCCore  # noqa: E402
from litex.soc.integration.builder import Builder  # noqa: E402
from litex_boards.platforms import lambdaconcept_ecpix5  # noqa: E402

from ats_litex import AtsConfig, HOST_FIELDS, add_atomssd  # noqa: E402
from atomssd_soc import SRAM_SIZE  # noqa: E402
from constraints.ecpix5 import EXTENSIONS  # noqa: E402
sys.path.insert(0, str(HERE))
from emu_arbiter import EmuPortArbiter  # noqa: E402
from atstb.filelist import block_sources  # noqa: E402  (ats_litex put cocotb_tests/lib on the path)

UDP_PORT = 16724            # the host link's port (docs/host-port.md "UDP host link")
UDP_SLOTS = 4               # the host link's commands in flight
UDP_SLOT_BYTES = 4096       # and each one's buffer: one 4 KiB LBA
DRAM_CPU_BYTES = 16 << 20   # the DDR3's first 16 MiB: the CPU's main RAM (firmware data)
# The board's ROM: 64 KiB (32 DP16KD of the part's 208, as the simulation's): the firmware with the
# S-Log recovery (5f301a3) and the DDR3 initialisation (soc/boards/fw, about 4 KB) is 41 KB, 8,300
# bytes over the 32 KiB (16 DP16KD) it had before
ROM_SIZE = 0x10000

# The board's device: the `default` geometry (soc/README.md "Configurations") at 75 MHz, with the
# `sim` configuration's backend sizes (the ones the full-system tests run): 4 read slots and a
# request table of 4 pages in flight (8 and 8: the backend 1,005 LUT positions and 16 DP16KD more;
# docs/boards.md "Resources"). 4 writes of tPROG 200 us in flight are about 80 MB/s of NAND programs, 4 reads in
# flight of tR 40 us about 400 MB/s: both near or above what the GbE link moves. The command queue
# holds 4 commands (the host link's UDP_SLOTS, the only source of commands: its precedence matrices
# grow with the square of the depth, 16 entries 3,364 LUT positions, 4 entries 962) and the write
# buffer 4 page slots (8 before: 698 positions). docs/boards.md "Resources": bench-core's read IOPS
# at these sizes unchanged (the 4 read slots bound them), its write IOPS 2.3 % lower
ECPIX5 = AtsConfig(name="ecpix5", num_chan=4, ways=2, page_bytes=4096, spare_bytes=224,
                   pages_per_block=64, blocks=128, num_lbas=16384, qdepth=UDP_SLOTS, num_slots=4,
                   win=4, rd_slots=4, remap_preset="default", sys_clk_hz=75_000_000)
# The same eight dies on two channels of four ways (`make bitstream BOARD=ecpix5_2x4`): half the
# channels' page controllers and BCH decoders, the part of the core that grows with the channels
# (docs/boards.md "Resources": 4 x 2 does not fit the 85F yet). The same capacity and die count; half
# the NAND transfer rate (two buses of 8 bits at 2 + 2 cycles a byte: about 2 x 19 MB/s at 75 MHz)
ECPIX5_2X4 = AtsConfig(name="ecpix5_2x4", num_chan=2, ways=4, page_bytes=4096, spare_bytes=224,
                       pages_per_block=64, blocks=128, num_lbas=16384, win=4, rd_slots=4,
                       remap_preset="default", sys_clk_hz=75_000_000)
BOARD_CONFIGS = {"ecpix5": ECPIX5, "ecpix5_2x4": ECPIX5_2X4}

# the dies' crossbar ports: 2, four dies (two channels) on each through EmuPortArbiter. A die
# waits at most for three other rows on its port (below). 8 = one a die
EMU_PORTS = 2
# the dies' DRAM word: 64 bits, half the crossbar port's 128 (EmuPortArbiter writes a word with
# half the byte enables, reads a port word and returns its half): a die's 128-bit data path (page
# register input and write mask multiplexers, write queue) and the arbiters' multiplexers halved,
# about 170 LUT positions a die (docs/boards.md "Resources"). A row is then 540 port commands, about
# 14 us at one BL8 burst every two cycles (7 us at 128 bits): when four dies of a port load at once
# the last one's busy time runs up to ~20 us past tR; the channels' read rate is bound by the NAND
# bus (a page ~230 us a channel), not by tR (rtl/nand_emu/README.md "Limits")
EMU_DW = 64
# LiteDRAM's bank machines' command buffers (LiteDRAM's default 8): the dies and the CPU move
# sequential words, so little look-ahead is needed
CMD_BUFFER_DEPTH = 4

# LiteEth's MAC in the PHY's clock domain on 8 bits (LiteEth's default, as litex-boards' ECPIX-5
# target), not at the system clock on 32: the MAC's CRC-32 on 32-bit words a cycle, its padding
# and preamble inserters and their 32-bit converters take about 1,400 LUT positions more
# (docs/boards.md "Resources"); 8 bits at 125 MHz is the GbE line rate, the UDP side stays 32-bit
ETH_SYS_DATAPATH = False
# LiteEth's ICMP (ping: its echo FIFO, packetizer and IP crossbar port) and IP broadcast reception
# left out: the host link needs ARP and UDP to its own address only (docs/boards.md "Resources")
ETH_ICMP = False


@contextlib.contextmanager
def eth_mac_ready_registered():
    """LiteEth's MAC builds with its CRC stages' input buffers registered in both directions.

    LiteEth (liteeth/mac/core.py) puts a `stream.Buffer` in front of the TX CRC inserter and the RX
    CRC checker through LiteX's `BufferizeEndpoints`, with `pipe_valid` only: the buffer's ready is
    its output's ready, so in the 125 MHz TX clock the gap inserter's and preamble inserter's ready
    logic reached through the buffer into the clock-domain-crossing FIFO's read side (its `readable`,
    read gray counter and read word): the RGMII clock's failing group in every placement, pnr_e14..e16
    (8.05-10.28 ns against 8, docs/boards.md). `pipe_ready`, an argument of `BufferizeEndpoints` that
    LiteEth does not pass, makes that buffer a skid buffer (ready from a register, full throughput),
    which cuts the chain there. Within this context the name LiteEth's MAC module calls is a wrapper
    that passes it; every other use of `BufferizeEndpoints` is untouched, and the name is restored on
    exit. Both the bitstream (Ecpix5SoC) and the host-link bench (sim/board/gen_hostlink.py) build
    their LiteEth core inside it."""
    import liteeth.mac.core as mac_core
    orig = mac_core.BufferizeEndpoints

    def registered(endpoint_dict, pipe_valid=True, pipe_ready=False):
        return orig(endpoint_dict, pipe_valid=True, pipe_ready=True)

    mac_core.BufferizeEndpoints = registered
    try:
        yield
    finally:
        mac_core.BufferizeEndpoints = orig

# the emulated dies' array times: the FEMU preset (40 / 200 / 2000 us), as the die model's defaults
EMU_TIMES = dict(T_R_NS=40_000, T_PROG_NS=200_000, T_BERS_NS=2_000_000, ARRAY_TIME_DIV=1)

# the power-fail pin's debounce (PowerFailResetGuard): 10 ms at 75 MHz, longer than a push button's
# bounce; the board simulation divides it as it divides the array times (sim/board/gen_board.py)
PF_DEBOUNCE_CYCLES = 750_000


class PowerFailResetGuard(LiteXModule):
    """The power-fail pin's reset guard (docs/boards.md "The power-fail button"): the write buffer's
    power-fail state is sticky until a reset (rtl/wbuf `dump_q`), so a device whose reset ended with
    the pin still low, or that saw the pin at all, stays frozen until the next reset; power coming
    back is that reset here. In the sys domain, on the synchronised pin `pf` (1: power failed):

      ok   counts the cycles since `pf` was last 1, saturating at `debounce` (0 while `pf`; `debounce`
           at configuration). "cut" = ok != debounce: the pin was asserted and has not yet been
           released for `debounce` consecutive cycles.
      held <= cut & (held | rst | ~pf)    (0 at configuration; `rst` = the sys reset as applied)
      hold = held                         (ORed into the sys reset by the CRG)

    So, after a cut: while the pin stays low nothing is reset (the core sees pwr_fail: the write
    buffer freezes, STATUS.pwr_fail, the dies tear their operations); the reset is applied from the
    cycle after the pin is first seen high (power back), or held from any reset during the cut (the
    reset button with the pin low), and ends when the pin has been high for `debounce` consecutive
    cycles (a bounce restarts the count inside the reset). Without a cut (ok = debounce) the guard
    adds nothing to a reset. Both registers are outside the reset they drive (reset_less)."""

    def __init__(self, debounce: int):
        if debounce < 1:
            raise ValueError("debounce must be at least one cycle")
        self.pf = Signal()
        self.hold = Signal()
        ok = Signal(max=debounce + 1, reset=debounce, reset_less=True)
        held = Signal(reset_less=True)
        cut = Signal()
        self.ok, self.held = ok, held
        self.comb += [cut.eq(ok != debounce), self.hold.eq(held)]
        self.sync += [
            If(self.pf, ok.eq(0)).Elif(cut, ok.eq(ok + 1)),
            held.eq(cut & (held | ResetSignal("sys") | ~self.pf)),
        ]


class UdpHostCounters(LiteXModule):
    """`ats_udp_host`'s counters as CSRs (rtl/hostlink/README.md "Ports"; docs/host-port.md "At the
    link's rate"), 16 bits each, wrapping, cleared by the system reset: `drop_pkts` packets dropped
    whole (their reply found the reply queue full), `err_pkts` ERROR replies queued, `stray_cpls`
    completions of the core for no running slot."""

    def __init__(self):
        self.drop_pkts = CSRStatus(16, description="packets dropped whole: their reply found the reply queue full")
        self.err_pkts = CSRStatus(16, description="ERROR replies queued")
        self.stray_cpls = CSRStatus(16, description="completions of the core for no running slot (dropped)")


# The sys reset synchroniser's two flip-flops (BoardCRG): one slice of the LFE5UM5G-85F next to the
# left DCC column (X3/Y46), by nextpnr-ecp5's BEL names (metastable stage, output stage). The BEL
# attribute is read by nextpnr only: Lattice Diamond ignores it (a Diamond build places them freely)
RST_SYNC_BELS = ("X3/Y47/SLICEA.FF0", "X3/Y47/SLICEA.FF1")


class BoardCRG(LiteXModule):
    """Clocks from the board's 100 MHz oscillator: a PLL makes 2 x sys, the DDR3 PHY's edge clock
    (ECLKSYNCB, stopped by the PHY's init sequence), and CLKDIVF divides it by 2 into sys, so the
    PHY's 2:1 gearing is phase aligned; `init` (25 MHz) runs the PHY's initialisation. sys is held
    in reset until the PLL locks and while the PHY asks for it; rst_n (the board's reset) and a
    power-on counter reset the PLL. `hold` (PowerFailResetGuard) holds the sys domain's reset (the
    PLL stays locked, the DDR3 PHY's clock alignment is kept). The sys reset leaves its synchroniser
    through a DCCA, so that its ~7,100 flip-flop LSR loads ride a global network instead of the
    general routing (nextpnr-ecp5 promotes clock nets only; docs/boards.md "Whole-device place and
    route")."""

    def __init__(self, platform, sys_hz: float):
        self.rst = Signal()
        self.hold = Signal()        # the power-fail pin's reset guard
        self.stop = Signal()        # from the DDR3 PHY's init
        self.reset = Signal()       # from the DDR3 PHY's init
        self.cd_por = ClockDomain(reset_less=True)
        self.cd_init = ClockDomain()
        self.cd_sys = ClockDomain()
        self.cd_sys2x = ClockDomain()
        self.cd_sys2x_i = ClockDomain(reset_less=True)
        self.cd_rstgen = ClockDomain()  # sys's clock; its reset is the synchroniser's, before the DCCA

        clk100 = platform.request("clk100")
        rst_n = platform.request("rst_n")
        por_count = Signal(16, reset=0xFFFF)
        self.comb += self.cd_por.clk.eq(clk100)
        self.sync.por += If(por_count != 0, por_count.eq(por_count - 1))
        self.comb += self.cd_rstgen.clk.eq(self.cd_sys.clk)

        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq((por_count != 0) | ~rst_n | self.rst)
        pll.register_clkin(clk100, 100e6)
        pll.create_clkout(self.cd_sys2x_i, 2 * sys_hz)
        pll.create_clkout(self.cd_init, 25e6)
        self.specials += [
            Instance("ECLKSYNCB", i_ECLKI=self.cd_sys2x_i.clk, i_STOP=self.stop, o_ECLKO=self.cd_sys2x.clk),
            Instance("CLKDIVF", p_DIV="2.0", i_ALIGNWD=0, i_CLKI=self.cd_sys2x.clk, i_RST=self.reset,
                     o_CDIVX=self.cd_sys.clk),
        ]
        # The synchroniser (LiteX's ECP5 AsyncResetSynchronizer: two FD1S3BX, asynchronous set, the
        # second's output the reset) written out so that its flip-flops carry a placement: the BEL
        # attribute (kept by Yosys on the TRELLIS_FF, read by nextpnr at USER strength) puts both in
        # one slice beside the left DCC column, and nextpnr places a DCCA whose input driver is fixed
        # at the nearest free DCC (X3/Y46, LDCC). Unplaced, the last flip-flop landed 49 columns from
        # its DCCA (pnr_e14: a 5.0 ns net ahead of every fabric load of the reset, 14.21 ns).
        rst_async = Signal()
        rst_meta = Signal()
        self.comb += rst_async.eq(~pll.locked | self.reset | self.hold)
        self.specials += [
            Instance("FD1S3BX", i_D=0, i_PD=rst_async, i_CK=self.cd_rstgen.clk, o_Q=rst_meta,
                     attr={("BEL", RST_SYNC_BELS[0])}),
            Instance("FD1S3BX", i_D=rst_meta, i_PD=rst_async, i_CK=self.cd_rstgen.clk,
                     o_Q=self.cd_rstgen.rst, attr={("BEL", RST_SYNC_BELS[1])}),
            Instance("DCCA", i_CLKI=self.cd_rstgen.rst, i_CE=1, o_CLKO=self.cd_sys.rst),
        ]


def emu_dram_bases(cfg: AtsConfig, words_per_row: int, word_bytes: int = EMU_DW // 8) -> list[int]:
    """Each die's first DRAM word (the dies' words: EMU_DW bits): the dies' arrays one after the
    other above the CPU's main RAM."""
    rows = cfg.blocks * cfg.pages_per_block
    first = DRAM_CPU_BYTES // word_bytes
    return [first + d * rows * words_per_row for d in range(cfg.ndie)]


class Ecpix5SoC(SoCCore):
    def __init__(self, cfg: AtsConfig = ECPIX5, ip: str = "192.168.1.50", mac: int = 0x10E2D5000001,
                 l2_cache: int = 0, toolchain: str = "trellis", emu_ports: int = EMU_PORTS,
                 cmd_buffer_depth: int = CMD_BUFFER_DEPTH, sim=None):
        """sim: the board simulation's PHYs (sim/board/gen_board.py SimPhys: platform, uart_name, crg()
        (with a `hold` input as BoardCRG's), ddrphy() -> (phy, module), ethphy(), emu_times,
        pf_debounce) in place of the board's; None for the board."""
        from litedram.modules import MT41K256M16
        from litedram.phy import ECP5DDRPHY
        from litedram.common import LiteDRAMNativePort
        from litedram.core.controller import ControllerSettings
        from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII
        from liteeth.core import LiteEthUDPIPCore

        platform = sim.platform if sim else lambdaconcept_ecpix5.Platform(device="85F", toolchain=toolchain)
        if sim is None:
            platform.add_extension(EXTENSIONS)
        sys_hz = cfg.sys_clk_hz
        SoCCore.__init__(self, platform, clk_freq=sys_hz, ident=f"atomssd {cfg.name}",
                         cpu_type="vexriscv", cpu_variant="standard",
                         integrated_rom_size=ROM_SIZE, integrated_rom_init=[0] * 4,
                         integrated_sram_size=SRAM_SIZE, integrated_main_ram_size=0,
                         # no timer: neither the firmware nor LiteX's DDR3 initialisation reads one
                         uart_name=sim.uart_name if sim else "serial", with_timer=False)
        self.crg = sim.crg(platform) if sim else BoardCRG(platform, sys_hz)

        # ---- DDR3 (main RAM of the CPU; the emulated NAND arrays above DRAM_CPU_BYTES)
        if sim:
            self.ddrphy, module = sim.ddrphy(sys_hz)
        else:
            self.ddrphy, module = ECP5DDRPHY(platform.request("ddram"), sys_clk_freq=sys_hz), MT41K256M16(sys_hz, "1:2")
            self.comb += [self.crg.stop.eq(self.ddrphy.init.stop), self.crg.reset.eq(self.ddrphy.init.reset)]
        self.add_sdram("sdram", phy=self.ddrphy, module=module, l2_cache_size=l2_cache,
                       controller_settings=ControllerSettings(cmd_buffer_depth=cmd_buffer_depth))

        # ---- power-fail input: a button (active low, pulled up), two flops into sys
        pwr_fail = Signal()
        btn_n = platform.request("pwr_fail_n")
        self.specials += MultiReg(~btn_n, pwr_fail)
        # the reset guard: the sys reset held / applied until the pin has been released for the
        # debounce (PowerFailResetGuard), so power coming back always restarts the device
        self.pf_guard = PowerFailResetGuard(sim.pf_debounce if sim else PF_DEBOUNCE_CYCLES)
        self.comb += [self.pf_guard.pf.eq(pwr_fail), self.crg.hold.eq(self.pf_guard.hold)]

        # ---- the device core (the simulation SoC's RTL and CSRs) on internal records
        host = Record([(n, w) for n, w, _ in HOST_FIELDS])
        nand = Record([("ce_n", cfg.ndie), ("cle", cfg.num_chan), ("ale", cfg.num_chan),
                       ("we_n", cfg.num_chan), ("re_n", cfg.num_chan), ("wp_n", cfg.num_chan),
                       ("dq_o", 8 * cfg.num_chan), ("dq_i", 8 * cfg.num_chan), ("rb_n", cfg.ndie)])
        self.ats = None
        add_atomssd(self, platform, cfg, host=host, nand=nand)
        self.comb += host.pwr_fail.eq(pwr_fail)

        # ---- NAND: one emulated die per (channel, way), each with a LiteDRAM native port
        for p in block_sources("ats_nand_emu", "ats_udp_host"):
            if str(p) not in {str(s[0]) for s in platform.sources}:
                platform.add_source(str(p))
        # emu_ports crossbar ports for the dies, each shared by ndie / emu_ports of them through
        # EmuPortArbiter (soc/boards/emu_arbiter.py): LiteDRAM's crossbar logic grows with its ports
        if cfg.ndie % emu_ports:
            raise ValueError("emu_ports must divide the dies")
        xports = [self.sdram.crossbar.get_port(mode="both") for _ in range(emu_ports)]
        # the dies' ports: EMU_DW-bit words (half the crossbar's), one more address bit
        xdw = xports[0].data_width
        if xdw not in (EMU_DW, 2 * EMU_DW):
            raise ValueError(f"EMU_DW {EMU_DW} must be the crossbar port's {xdw} bits or half of it")
        dw, aw = EMU_DW, xports[0].address_width + (xdw // EMU_DW - 1)
        ports = [LiteDRAMNativePort("both", aw, dw) for _ in range(cfg.ndie)]
        per = cfg.ndie // emu_ports
        for k, xp in enumerate(xports):
            self.submodules += EmuPortArbiter(ports[k * per:(k + 1) * per], xp)
        self.xports = xports
        row_words = -(-(cfg.page_bytes + cfg.spare_bytes) // (dw // 8))
        bases = emu_dram_bases(cfg, row_words, dw // 8)
        dram_words = (512 << 20) // (dw // 8)
        if bases[-1] + cfg.blocks * cfg.pages_per_block * row_words > dram_words:
            raise ValueError("the emulated NAND arrays do not fit the DDR3")
        self.emu_ports = ports
        self.emu_bases = bases
        dq_d = [Signal(8, name=f"emu{d}_dq_o") for d in range(cfg.ndie)]
        oe = [Signal(name=f"emu{d}_dq_oe") for d in range(cfg.ndie)]
        clk_ps = round(1e12 / sys_hz)
        for c in range(cfg.num_chan):
            for w in range(cfg.ways):
                d = c * cfg.ways + w
                port = ports[d]
                self.specials += Instance("ats_nand_emu",
                    p_DIE_ID=d, p_PLANES=1, p_BLOCKS=cfg.blocks, p_PAGES_PER_BLOCK=cfg.pages_per_block,
                    p_PAGE_BYTES=cfg.page_bytes, p_SPARE_BYTES=cfg.spare_bytes, p_CLK_PS=clk_ps,
                    p_SYNC_STAGES=1, p_DRAM_DW=dw, p_DRAM_AW=aw, p_DRAM_BASE=bases[d],
                    **{f"p_{k}": v for k, v in (sim.emu_times if sim else EMU_TIMES).items()},
                    i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"), o_init_done=Signal(name=f"emu{d}_init_done"),
                    i_power_ok=~pwr_fail,
                    i_ce_n=nand.ce_n[d], i_cle=nand.cle[c], i_ale=nand.ale[c], i_we_n=nand.we_n[c],
                    i_re_n=nand.re_n[c], i_wp_n=nand.wp_n[c], i_dq_i=nand.dq_o[8 * c:8 * c + 8],
                    o_dq_o=dq_d[d], o_dq_oe=oe[d], o_rb_n=nand.rb_n[d],
                    i_s_bad_valid=0, o_s_bad_ready=Signal(name=f"emu{d}_bad_ready"), i_s_bad_block=0, i_s_bad_set=0,
                    o_m_dram_cmd_valid=port.cmd.valid, i_m_dram_cmd_ready=port.cmd.ready,
                    o_m_dram_cmd_we=port.cmd.we, o_m_dram_cmd_addr=port.cmd.addr,
                    o_m_dram_wdata_valid=port.wdata.valid, i_m_dram_wdata_ready=port.wdata.ready,
                    o_m_dram_wdata_data=port.wdata.data, o_m_dram_wdata_we=port.wdata.we,
                    i_s_dram_rdata_valid=port.rdata.valid, o_s_dram_rdata_ready=port.rdata.ready,
                    i_s_dram_rdata_data=port.rdata.data,
                )
            # the channel's DQ bus as the dies drive it (the simulation's ats_nand_array does the same)
            bus = 0
            for w in range(cfg.ways):
                d = c * cfg.ways + w
                bus = bus | (dq_d[d] & Cat(*[oe[d]] * 8))
            self.comb += nand.dq_i[8 * c:8 * c + 8].eq(bus)

        # ---- Ethernet: RGMII PHY; the MAC (preamble, CRC, padding) on the PHY's 8-bit bytes in its
        # 125 MHz clocks, ARP / IP / UDP at the system clock on 32 bits (ETH_SYS_DATAPATH, ETH_ICMP)
        self.ethphy = sim.ethphy(platform) if sim else LiteEthPHYRGMII(clock_pads=platform.request("eth_clocks"),
                                                                       pads=platform.request("eth"), rx_delay=0e-9)
        with eth_mac_ready_registered():
            self.ethcore = LiteEthUDPIPCore(self.ethphy, mac_address=mac, ip_address=ip, clk_freq=sys_hz,
                                            dw=32, with_sys_datapath=ETH_SYS_DATAPATH,
                                            with_icmp=ETH_ICMP, with_ip_broadcast=False)
        # (the board file constrains the PHY's receive clock, eth_clocks:rx, to 125 MHz; the transmit
        # clock is made from it)
        udp = self.ethcore.udp.crossbar.get_port(UDP_PORT, dw=32)
        # the block's counters, readable by the CPU (and so the console) as CSRs
        self.udp_host = UdpHostCounters()
        rx = udp_host_rx(self, udp.source)
        tx = udp.sink
        # 4 slots of one page each: 8 DP16KD (4 x 8 KiB would take 16, beyond the 85F's block RAM
        # with everything else; a host splits longer requests into one-LBA commands)
        self.specials += Instance("ats_udp_host", **udp_host_udp_ports(cfg.page_bytes, rx, tx),
            o_m_cmd_valid=host.cmd_valid, i_m_cmd_ready=host.cmd_ready, o_m_cmd_op=host.cmd_op,
            o_m_cmd_tag=host.cmd_tag, o_m_cmd_lba=host.cmd_lba, o_m_cmd_nlb=host.cmd_nlb,
            o_m_cmd_txid=host.cmd_txid, o_m_cmd_flags=host.cmd_flags, o_m_cmd_attr=host.cmd_attr,
            o_m_cmd_prio=host.cmd_prio, o_m_cmd_dptr=host.cmd_dptr, o_m_cmd_aux=host.cmd_aux,
            i_s_cpl_valid=host.cpl_valid, o_s_cpl_ready=host.cpl_ready, i_s_cpl_tag=host.cpl_tag,
            i_s_cpl_status=host.cpl_status, i_s_cpl_result=host.cpl_result,
            i_s_hrdq_valid=host.hrd_valid, o_s_hrdq_ready=host.hrd_ready, i_s_hrdq_addr=host.hrd_addr,
            i_s_hrdq_len=host.hrd_len,
            o_m_hrdd_valid=host.hrdd_valid, i_m_hrdd_ready=host.hrdd_ready, o_m_hrdd_data=host.hrdd_data,
            o_m_hrdd_last=host.hrdd_last,
            i_s_hwr_valid=host.hwr_valid, o_s_hwr_ready=host.hwr_ready, i_s_hwr_addr=host.hwr_addr,
            i_s_hwr_data=host.hwr_data, i_s_hwr_last=host.hwr_last,
            o_err_pkts=self.udp_host.err_pkts.status, o_stray_cpls=self.udp_host.stray_cpls.status,
            o_drop_pkts=self.udp_host.drop_pkts.status,
        )
        ipn = int(ipaddress.IPv4Address(ip))
        self.add_constant("ATS_UDP_PORT", UDP_PORT)
        self.add_constant("ATS_IP_ADDRESS", ipn)



def udp_host_rx(mod, source):
    """LiteEth's UDP user port's source through a valid / payload register (LiteX's `PipeValid`):
    the host link's receiver takes a beat from a register, not from LiteEth's depacketizers' valid
    (pnr_e19: LiteEth's MAC / IP / UDP valid chain ran into the core's write buffer through the
    host link's RAM write port, `s_hwr_ready`). One cycle of latency; the register's ready is
    `!valid || ready`, so the link still takes a beat in every cycle of RX_PKT. Returns the
    register's source, for `udp_host_udp_ports`."""
    from litex.soc.interconnect import stream
    pipe = stream.PipeValid(source.description)
    mod.submodules += pipe
    mod.comb += source.connect(pipe.sink)
    return pipe.source


def udp_host_udp_ports(page_bytes: int, rx, tx) -> dict:
    """`ats_udp_host`'s parameters, clock, reset and UDP ports on LiteEth's user port (rx = `udp_host_rx`'s
    output, the port's source through its register; tx = the port's sink): one wiring for the board SoC and the board simulation (sim/board)."""
    return dict(
        p_NSLOT=UDP_SLOTS, p_SLOT_BYTES=UDP_SLOT_BYTES, p_PAGE_BYTES=page_bytes, p_LOCAL_PORT=UDP_PORT,
        i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
        i_s_udp_valid=rx.valid, o_s_udp_ready=rx.ready, i_s_udp_src_port=rx.src_port,
        i_s_udp_dst_port=rx.dst_port, i_s_udp_ip_address=rx.ip_address, i_s_udp_length=rx.length,
        i_s_udp_data=rx.data, i_s_udp_last=rx.last, i_s_udp_last_be=rx.last_be, i_s_udp_error=rx.error,
        o_m_udp_valid=tx.valid, i_m_udp_ready=tx.ready, o_m_udp_src_port=tx.src_port,
        o_m_udp_dst_port=tx.dst_port, o_m_udp_ip_address=tx.ip_address, o_m_udp_length=tx.length,
        o_m_udp_data=tx.data, o_m_udp_last=tx.last, o_m_udp_last_be=tx.last_be, o_m_udp_error=tx.error)

def generate(out: Path, ip: str = "192.168.1.50", mac: int = 0x10E2D5000001, l2_cache: int = 0,
             emu_ports: int = EMU_PORTS, cmd_buffer_depth: int = CMD_BUFFER_DEPTH,
             config: str = "ecpix5") -> Ecpix5SoC:
    """LiteX build without synthesis: gateware/ (ecpix5.v, ecpix5.lpf, ecpix5.ys, the ROM's init
    file), the software headers, csr.json, config.json, board.json (what soc/boards/build.py needs)."""
    out = out.resolve()
    cfg = BOARD_CONFIGS[config]
    soc = Ecpix5SoC(cfg, ip=ip, mac=mac, l2_cache=l2_cache, emu_ports=emu_ports,
                    cmd_buffer_depth=cmd_buffer_depth)
    builder = Builder(soc, output_dir=str(out), compile_software=False, compile_gateware=False,
                      csr_json=str(out / "csr.json"), csr_csv=str(out / "csr.csv"))
    builder.build(build_name=config, run=False)
    (out / "config.json").write_text(json.dumps(cfg.as_dict(), indent=1) + "\n")
    board = dict(board="ecpix5", config=config, device=soc.platform.device, ip=ip, mac=f"{mac:012x}", udp_port=UDP_PORT,
                 sys_clk_mhz=cfg.sys_clk_hz / 1e6, eth_clk_mhz=125.0,
                 dram_port_words_bits=ports_info(soc),
                 emu_dram_bases=soc.emu_bases, rom_bytes=ROM_SIZE, udp_slots=UDP_SLOTS,
                 udp_slot_bytes=UDP_SLOT_BYTES, pf_debounce_cycles=PF_DEBOUNCE_CYCLES)
    (out / "board.json").write_text(json.dumps(board, indent=1) + "\n")
    return soc


def ports_info(soc: Ecpix5SoC) -> dict:
    p = soc.emu_ports[0]
    return {"data_width": p.data_width, "address_width": p.address_width, "ports": len(soc.emu_ports),
            "crossbar_ports": len(soc.xports)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "boards" / "ecpix5")
    ap.add_argument("--ip", default="192.168.1.50", help="the board's IPv4 address")
    ap.add_argument("--mac", type=lambda s: int(s, 0), default=0x10E2D5000001, help="the board's MAC address")
    ap.add_argument("--l2-cache", type=int, default=0,
                    help="LiteDRAM L2 cache bytes of the CPU (0: none; at the 128-bit port any L2 takes 16 DP16KD)")
    ap.add_argument("--emu-ports", type=int, default=EMU_PORTS,
                    help="LiteDRAM crossbar ports for the emulated dies (8: one a die; fewer: shared by EmuPortArbiter)")
    ap.add_argument("--cmd-buffer-depth", type=int, default=CMD_BUFFER_DEPTH,
                    help="LiteDRAM bank machines' command buffer depth")
    ap.add_argument("--config", default="ecpix5", choices=sorted(BOARD_CONFIGS),
                    help="ecpix5: 4 channels x 2 ways; ecpix5_2x4: 2 x 4 (the same eight dies)")
    a = ap.parse_args()
    generate(a.out, a.ip, a.mac, a.l2_cache, a.emu_ports, a.cmd_buffer_depth, a.config)


if __name__ == "__main__":
    main()
