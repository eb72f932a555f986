#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The atomssd SoC: VexRiscv, UART, timer, ROM / SRAM / main RAM, and the device core on the bus
through add_atomssd(). Targets:
  sim     the full-system simulation (sim/soc/): Verilog + generated headers under build/soc/<cfg>/
  synth   the LFE5U-85F synthesis of `make synth-soc` (synth/synth_soc.py): UART on tx/rx pins, main
          RAM in SDRAM through LiteDRAM (controller, crossbar, L2 cache; the board's PHY attaches to
          the DFI port on the top level, so the design places out of context)

  python soc/atomssd_soc.py --config sim --out build/soc/sim
writes gateware/ (the SoC Verilog), software/include/generated/ (csr.h, soc.h, mem.h, regions.ld),
csr.json, config.json (the AtsConfig) and regmap.py's outputs (soc/README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from migen import ClockDomain, Signal  # noqa: E402
from litex.build.generic_platform import Pins, Subsignal  # noqa: E402
from litex.build.sim import SimPlatform  # noqa: E402
from litex.soc.integration.soc_core import SoCCore  # noqa: E402
from litex.soc.integration.builder import Builder  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402

from ats_litex import CONFIGS, AtsConfig, add_atomssd, host_pads, nand_pads  # noqa: E402

ROM_SIZE = 0x10000        # firmware code (integrated ROM, loaded from the firmware image at start)
SRAM_SIZE = 0x4000        # stack
MAIN_RAM_SIZE = 0x100000  # firmware data: block tables, recovery records, checkpoint staging


def main_ram_size(cfg: AtsConfig) -> int:
    """The integrated main RAM: MAIN_RAM_SIZE, twice that with an S-Log index above the core's 256
    entries (cfg.slog_lpns): the firmware's copies of F, its index dump and the checkpoint's S-Log
    section take about 450 bytes an entry (sw/firmware/fw.h SLOG_LPNS; b5_256_slog's 1,024 overflow 1 MiB)."""
    return MAIN_RAM_SIZE * (2 if cfg.slog_lpns > 256 else 1)


class _CRG(LiteXModule):
    def __init__(self, clk, rst):
        self.cd_sys = ClockDomain()
        self.comb += [self.cd_sys.clk.eq(clk), self.cd_sys.rst.eq(rst)]


def sim_io(cfg: AtsConfig):
    return [
        ("sys_clk", 0, Pins(1)),
        ("sys_rst", 0, Pins(1)),
        ("serial", 0,
            Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)),
            Subsignal("source_data", Pins(8)),
            Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)),
            Subsignal("sink_data", Pins(8))),
        host_pads(),
        nand_pads(cfg),
    ]


# the synthesis target's main RAM: a 32 MiB SDR SDRAM (16 bits, as on LFE5U-85F boards such as the
# ULX3S) behind LiteDRAM; the PHY (I/O registers of the board) sits outside, on the DFI port
SDRAM_MODULE = "MT48LC16M16"


class _DFIPortPHY(LiteXModule):
    """A PHY stand-in for synthesis: the controller's DFI phase 0 on top-level pins (platform
    resource "dfi"), the settings of a full-rate SDR PHY (litedram GENSDRPHY with CL 2)."""

    def __init__(self, pads, databits: int = 16):
        from litedram.common import PhySettings
        from litedram.phy.dfi import Interface
        self.settings = PhySettings(phytype="GENSDRPHY", memtype="SDR", databits=databits,
                                    dfi_databits=databits, nranks=1, nphases=1, rdphase=0, wrphase=0,
                                    cl=2, read_latency=3, write_latency=0)
        self.dfi = Interface(13, 2, 1, databits, 1)
        p = self.dfi.phases[0]
        for name, _ in DFI_OUT:
            self.comb += getattr(pads, name).eq(getattr(p, name))
        for name, _ in DFI_IN:
            self.comb += getattr(p, name).eq(getattr(pads, name))


DFI_OUT = [("address", 13), ("bank", 2), ("cas_n", 1), ("cs_n", 1), ("ras_n", 1), ("we_n", 1),
           ("cke", 1), ("wrdata", 16), ("wrdata_en", 1), ("wrdata_mask", 2), ("rddata_en", 1)]
DFI_IN = [("rddata", 16), ("rddata_valid", 1)]


def synth_io(cfg: AtsConfig):
    return [
        ("sys_clk", 0, Pins(1)),
        ("sys_rst", 0, Pins(1)),
        ("serial", 0, Subsignal("tx", Pins(1)), Subsignal("rx", Pins(1))),
        ("dfi", 0, *[Subsignal(n, Pins(w)) for n, w in DFI_OUT + DFI_IN]),
        host_pads(),
        nand_pads(cfg),
    ]


class AtsSoC(SoCCore):
    def __init__(self, platform, cfg: AtsConfig, uart_name="sim", sdram: bool = False, l2_cache: int = 8192):
        SoCCore.__init__(self, platform, clk_freq=cfg.sys_clk_hz, ident=f"atomssd {cfg.name}",
                         cpu_type="vexriscv", cpu_variant="standard",
                         integrated_rom_size=ROM_SIZE, integrated_rom_init=[0] * 4,
                         integrated_sram_size=SRAM_SIZE,
                         integrated_main_ram_size=0 if sdram else main_ram_size(cfg),
                         uart_name=uart_name, with_timer=True, timer_uptime=True)
        self.crg = _CRG(platform.request("sys_clk"), platform.request("sys_rst"))
        if sdram:
            from litedram import modules
            self.sdrphy = _DFIPortPHY(platform.request("dfi"))
            self.add_sdram("sdram", phy=self.sdrphy,
                           module=getattr(modules, SDRAM_MODULE)(cfg.sys_clk_hz, "1:1"),
                           l2_cache_size=l2_cache)
        self.ats = None
        add_atomssd(self, platform, cfg)


FW_INIT_PATCH = (
    'begin : ats_fw_init\n'
    '\treg [8*1024-1:0] ats_fw_file;\n'
    '\tif ($value$plusargs("firmware=%s", ats_fw_file)) $readmemh(ats_fw_file, {mem});\n'
    'end\n'
)


def patch_rom_init(verilog: Path) -> None:
    """The ROM's $readmemh reads the firmware image named by +firmware=<file> at simulation start
    (so one Verilated model runs any firmware build); without it the ROM stays as generated."""
    s = verilog.read_text()
    pat = re.compile(r'\$readmemh\("([^"]*rom[^"]*\.init)", (\w+)\);')
    m = pat.search(s)
    if not m:
        raise SystemExit("soc: no ROM $readmemh in the generated Verilog")
    s = s[:m.start()] + FW_INIT_PATCH.format(mem=m.group(2)) + s[m.end():]
    # the other memories' init files (SRAM, main RAM, identifier) by absolute path: the simulator
    # runs in any directory
    s = re.sub(r'\$readmemh\("([^"/]+\.init)"', lambda k: f'$readmemh("{verilog.parent / k.group(1)}"', s)
    verilog.write_text(s)


def generate(cfg: AtsConfig, out: Path, target: str = "sim", l2_cache: int = 8192) -> None:
    if target == "synth":
        platform = SimPlatform("SYNTH", synth_io(cfg))
        soc = AtsSoC(platform, cfg, uart_name="serial", sdram=True, l2_cache=l2_cache)
    else:
        platform = SimPlatform("SIM", sim_io(cfg))
        soc = AtsSoC(platform, cfg)
    builder = Builder(soc, output_dir=str(out), compile_software=False, compile_gateware=False,
                      csr_json=str(out / "csr.json"), csr_csv=str(out / "csr.csv"))
    builder.build(build_name="ats_soc", run=False, build=False)    # headers, csr.json (no Verilog)
    fragment = soc.get_fragment()
    platform.finalize(fragment)
    (out / "gateware").mkdir(parents=True, exist_ok=True)
    v = out / "gateware" / "ats_soc.v"
    cwd = os.getcwd()
    os.chdir(out / "gateware")            # the memories' .init files are written next to the Verilog
    try:
        platform.get_verilog(fragment, name="ats_soc").write(str(v))
    finally:
        os.chdir(cwd)
    # the core's RTL files, in order, for the simulation build
    (out / "gateware" / "sources.f").write_text("\n".join(str(p) for p, *_ in platform.sources) + "\n")
    if target == "sim":
        patch_rom_init(v)
    (out / "config.json").write_text(json.dumps(cfg.as_dict(), indent=1) + "\n")
    import regmap
    regmap.generate(out, soc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="sim", choices=sorted(CONFIGS))
    ap.add_argument("--target", default="sim", choices=("sim", "synth"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--l2-cache", type=int, default=8192, help="synth: LiteDRAM L2 cache bytes (0: none)")
    a = ap.parse_args()
    cfg = CONFIGS[a.config]
    out = a.out or HERE.parent / "build" / "soc" / (cfg.name if a.target == "sim" else f"{cfg.name}_synth")
    generate(cfg, out.resolve(), a.target, a.l2_cache)


if __name__ == "__main__":
    main()
