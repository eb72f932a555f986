"""The C++ compiler of the Verilated models that `make test` builds (the cocotb runner's, the board
SoC's among them; the full-system simulator's, sim/soc/build.py, except a PGO build; bench/ssd's):
the make variables CXX and LINK given to Verilator's verilated.mk (standard library only: build
scripts import it). bench/nand and bench/core keep verilated.mk's compiler.

clang++ (Debian 12's clang 14, `make setup` installs it) when it is on PATH: against g++ 12 it
compiled the core and SATA-core TBs 16-21 % faster and the full-system simulator about 40 %, the
board SoC 13 % slower (its run 7 % faster), every run as fast or faster; all of `make test`'s cocotb
builds together 12 % less CPU (cocotb_tests/README.md "Compiler"). `ATS_VL_CXX=<compiler>` overrides it (`g++`: the wheel's default, for a comparison);
where clang++ is missing, the wheel's own `c++`. The choice is part of each build's fingerprint
(runner.py) and of the full-system simulator's build hash (sim/soc/build.py), so changing it rebuilds.
"""
from __future__ import annotations

import os
import shutil


def cxx() -> str:
    """The compiler's command: ATS_VL_CXX, else clang++ when found, else "" (verilated.mk's c++)."""
    c = os.environ.get("ATS_VL_CXX", "")
    if c:
        return c
    return "clang++" if shutil.which("clang++") else ""


def cxx_make_vars() -> dict[str, str]:
    """{"CXX": ..., "LINK": ...} for make's command line; {} for verilated.mk's own compiler."""
    c = cxx()
    return {"CXX": c, "LINK": c} if c else {}
