# SPDX-License-Identifier: Apache-2.0
"""What the LambdaConcept ECPIX-5 board file (litex-boards `lambdaconcept_ecpix5`, pinned in
tools/requirements.txt) does not have: the power-fail input. soc/boards/ecpix5.py adds these
resources with `platform.add_extension(EXTENSIONS)`; LiteX writes them into the board's LPF.

Power-fail input (`pwr_fail_n`): PMOD 0, pin 1 (the board file's connector `pmod0`, index 0),
LVCMOS33 with the FPGA's pull-up. Wire a normally-open push button between that pin and a PMOD
ground pin: released = 1 (power good), pressed = 0 (power cut of the emulated NAND and the core's
power-fail warning). Without a button the pull-up keeps the power good.
"""
from litex.build.generic_platform import IOStandard, Misc, Pins

EXTENSIONS = [
    ("pwr_fail_n", 0, Pins("pmod0:0"), IOStandard("LVCMOS33"), Misc("PULLMODE=UP")),
]
