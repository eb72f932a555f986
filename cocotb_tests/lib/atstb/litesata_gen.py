# SPDX-License-Identifier: Apache-2.0
"""Elaborate LiteSATA's host core (PyPI `litesata`, a migen design) without a PHY and write Verilog.

Two tops are generated, each into one Verilog file under `build/gen/litesata/<hash>/`:

`ats_litesata_link_host`: LiteSATALink only (link layer of the host), for the link-layer tests.
  sys_clk, sys_rst                         clock, synchronous active-high reset (migen "sys")
  phy_tx_data[31:0], phy_tx_charisk[3:0]   host -> device, one dword per clock (what LiteSATA's
                                           PHY would serialize; ALIGN pairs included)
  phy_rx_data[31:0], phy_rx_charisk[3:0]   device -> host, one dword per clock
  link_sink_{valid,ready,data,last}        FIS dwords to send (no CRC: the link appends it)
  link_source_{valid,ready,data,last,error} FIS dwords received; `error` on the last dword = bad CRC

`ats_litesata_core_host`: LiteSATACore (link + transport + command layers), for the command tests.
  same clock/reset/PHY ports, plus the command-layer user ports of LiteSATA
  cmd_sink_{valid,ready,last,data,write,read,identify,sector[47:0],count[15:0]}
  cmd_source_{valid,ready,last,data,write,read,identify,end,failed}

The PHY-less shim stands where LiteSATAPHY's datapath would be: its `sink` (from the link) is always
ready and its `source` (to the link) always valid, one dword per clock each way, with the data and
charisk of each dword on ports. LiteSATAPHY's own datapath (clock-domain crossing, 16/32-bit
conversion, OOB control) is absent: no OOB, no `ready`.

The output is cached: the directory name is a hash of the installed litesata version and of this
file, so a new litesata or an edited generator regenerates, and concurrent pytest workers are
serialised by a lock. Generated files live only under build/ (never committed).

Usage: `python -m atstb.litesata_gen` prints the directory; tests call `generate()`.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GEN_ROOT = ROOT / "build" / "gen" / "litesata"

TOPS = ("ats_litesata_link_host", "ats_litesata_core_host")


def _key() -> str:
    h = hashlib.sha256()
    h.update(importlib.metadata.version("litesata").encode())
    h.update(importlib.metadata.version("migen").encode())
    h.update(importlib.metadata.version("litex").encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def _build(out: Path) -> None:
    # imports here: only a cache miss needs migen/LiteX
    from migen import ClockDomain, Module, Signal
    from litex.gen.fhdl.verilog import convert
    from litex.soc.interconnect import stream
    from litesata.common import phy_description
    from litesata.core import LiteSATACore
    from litesata.core.link import LiteSATALink

    class PhyShim(Module):
        """What LiteSATALink sees of a PHY: `sink` (to the wire) and `source` (from the wire)."""

        def __init__(self):
            self.sink = stream.Endpoint(phy_description(32))
            self.source = stream.Endpoint(phy_description(32))
            self.tx_data = Signal(32, name="phy_tx_data")
            self.tx_charisk = Signal(4, name="phy_tx_charisk")
            self.rx_data = Signal(32, name="phy_rx_data")
            self.rx_charisk = Signal(4, name="phy_rx_charisk")
            self.comb += [
                self.sink.ready.eq(1),
                self.tx_data.eq(self.sink.data),
                self.tx_charisk.eq(self.sink.charisk),
                self.source.valid.eq(1),
                self.source.data.eq(self.rx_data),
                self.source.charisk.eq(self.rx_charisk),
            ]

        def ios(self):
            return {self.tx_data, self.tx_charisk, self.rx_data, self.rx_charisk}

    def ports(ep, prefix: str, fields: list[str]) -> tuple[list, set]:
        """Named top-level signals for a stream endpoint; returns (comb statements, ios)."""
        stmts, ios = [], set()
        is_sink = prefix.endswith("sink")        # the top's input stream
        for f in ["valid", "ready", "last"] + fields:
            inner = getattr(ep, f)
            s = Signal(len(inner), name=f"{prefix}_{f}")
            ios.add(s)
            drive_in = (f != "ready") if is_sink else (f == "ready")
            stmts.append(inner.eq(s) if drive_in else s.eq(inner))
        return stmts, ios

    class LinkTop(Module):
        def __init__(self):
            self.clock_domains.cd_sys = ClockDomain("sys")
            self.submodules.phy = phy = PhyShim()
            self.submodules.link = link = LiteSATALink(phy)
            s1, i1 = ports(link.sink, "link_sink", ["data"])
            s2, i2 = ports(link.source, "link_source", ["data", "error"])
            self.comb += s1 + s2
            self.io = phy.ios() | i1 | i2 | {self.cd_sys.clk, self.cd_sys.rst}

    class CoreTop(Module):
        def __init__(self):
            self.clock_domains.cd_sys = ClockDomain("sys")
            self.submodules.phy = phy = PhyShim()
            self.submodules.core = core = LiteSATACore(phy)
            s1, i1 = ports(core.sink, "cmd_sink", ["data", "write", "read", "identify", "sector", "count"])
            s2, i2 = ports(core.source, "cmd_source", ["data", "write", "read", "identify", "end", "failed"])
            self.comb += s1 + s2
            self.io = phy.ios() | i1 | i2 | {self.cd_sys.clk, self.cd_sys.rst}

    for name, cls in (("ats_litesata_link_host", LinkTop), ("ats_litesata_core_host", CoreTop)):
        top = cls()
        v = convert(top, ios=top.io, name=name)
        v.write(str(out / f"{name}.v"))


def generate() -> Path:
    """Directory holding `<top>.v` for every top in TOPS (generated on a cache miss)."""
    out = GEN_ROOT / _key()
    done = out / "done.json"
    if done.exists():
        return out
    GEN_ROOT.mkdir(parents=True, exist_ok=True)
    with open(GEN_ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            tmp = out.with_name(out.name + f".tmp{os.getpid()}")
            tmp.mkdir(parents=True, exist_ok=True)
            _build(tmp)
            (tmp / "done.json").write_text(json.dumps({
                "litesata": importlib.metadata.version("litesata"),
                "migen": importlib.metadata.version("migen"),
                "litex": importlib.metadata.version("litex"),
                "tops": list(TOPS)}, indent=1) + "\n")
            if out.exists():                 # a stale partial directory
                import shutil
                shutil.rmtree(out)
            tmp.rename(out)
    return out


def sources(top: str = "ats_litesata_link_host") -> list[Path]:
    return [generate() / f"{top}.v"]


if __name__ == "__main__":
    print(generate())
