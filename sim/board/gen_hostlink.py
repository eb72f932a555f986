# SPDX-License-Identifier: Apache-2.0
"""The board's host link for simulation: the ECPIX-5 SoC's Ethernet and host-link part
(soc/boards/ecpix5.py) with only the PHY replaced. LiteEth's MAC (preamble and CRC on, as with the
RGMII PHY) on the PHY's bytes in the eth clock, ARP / IP / UDP at the system clock on 32 bits
(ecpix5.ETH_SYS_DATAPATH, ETH_ICMP: as the bitstream builds it), the UDP user port
16724 and `ats_udp_host` with the board's parameters (ecpix5.UDP_SLOTS, UDP_SLOT_BYTES, the page
size); the PHY is a byte stream per eth clock (`PhyModel`: the RGMII PHY's sink / source at 125 MHz
without the DDR pins), which the test bench turns into Ethernet frames to and from a real UDP socket.
The core side of `ats_udp_host` (descriptors, completions, host-memory reads and writes) are the
top's ports. Writes `<out>/board_hostlink.v`.

    python sim/board/gen_hostlink.py [--out build/sim_board]
"""
from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "soc" / "boards"), str(ROOT / "soc"), str(ROOT), str(ROOT / "cocotb_tests" / "lib")]

from migen import ClockDomain, ClockSignal, Instance, ResetSignal, Signal  # noqa: E402
from migen.fhdl.verilog import convert  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402
from litex.soc.interconnect import stream  # noqa: E402
from liteeth.common import eth_phy_description  # noqa: E402
from liteeth.core import LiteEthUDPIPCore  # noqa: E402

import ecpix5  # noqa: E402  (the board SoC's constants: port, slots, slot size, addresses)

IP = "192.168.1.50"
MAC = 0x10E2D5000001
SYS_HZ = 75e6
PAGE_BYTES = 4096


class PhyModel(LiteXModule):
    """The PHY's byte streams at the eth clocks: `tx_*` the MAC's frame bytes (preamble and CRC
    included), `rx_*` the frame bytes into the MAC; `rx_last` on a frame's last byte."""
    dw = 8

    def __init__(self):
        self.cd_eth_rx = ClockDomain()
        self.cd_eth_tx = ClockDomain()
        self.sink = sink = stream.Endpoint(eth_phy_description(8))
        self.source = source = stream.Endpoint(eth_phy_description(8))
        self.eth_clk = Signal(name="eth_clk")
        self.eth_rst = Signal(name="eth_rst")
        self.tx_valid, self.tx_data, self.tx_last = Signal(name="tx_valid"), Signal(8, name="tx_data"), Signal(name="tx_last")
        self.rx_valid, self.rx_data, self.rx_last = Signal(name="rx_valid"), Signal(8, name="rx_data"), Signal(name="rx_last")
        self.comb += [
            self.cd_eth_rx.clk.eq(self.eth_clk), self.cd_eth_tx.clk.eq(self.eth_clk),
            self.cd_eth_rx.rst.eq(self.eth_rst), self.cd_eth_tx.rst.eq(self.eth_rst),
            sink.ready.eq(1),
            self.tx_valid.eq(sink.valid), self.tx_data.eq(sink.data), self.tx_last.eq(sink.last),
            source.valid.eq(self.rx_valid), source.data.eq(self.rx_data), source.last.eq(self.rx_last),
            source.last_be.eq(self.rx_last),
        ]


class BoardHostLink(LiteXModule):
    def __init__(self, rx_cdc_depth: int = 32):
        self.cd_sys = ClockDomain()
        self.ethphy = phy = PhyModel()
        # rx_cdc_depth 32: LiteEth's default, as soc/boards/ecpix5.py builds it (other values only
        # for experiments: sim/board/README.md "Found by it")
        # the bitstream's arrangement (soc/boards/ecpix5.py): the MAC on the PHY's bytes in the eth
        # clock (ETH_SYS_DATAPATH False), its CRC stages' input buffers registered both ways
        # (ecpix5.eth_mac_ready_registered), no ICMP, no IP broadcast
        with ecpix5.eth_mac_ready_registered():
            self.ethcore = LiteEthUDPIPCore(phy, mac_address=MAC, ip_address=IP, clk_freq=SYS_HZ, dw=32,
                                            with_sys_datapath=ecpix5.ETH_SYS_DATAPATH, with_icmp=ecpix5.ETH_ICMP,
                                            with_ip_broadcast=False, rx_cdc_depth=rx_cdc_depth)
        udp = self.ethcore.udp.crossbar.get_port(ecpix5.UDP_PORT, dw=32)
        rx = ecpix5.udp_host_rx(self, udp.source)   # (the board's receive register)
        tx = udp.sink
        io = {}

        def port(name, width, out):
            s = Signal(width, name=name)
            io[name] = (s, out)
            return s

        cmd = {f: port(f"cmd_{f}", w, True) for f, w in
               [("valid", 1), ("op", 4), ("tag", 8), ("lba", 48), ("nlb", 16), ("txid", 6), ("flags", 4),
                ("attr", 2), ("prio", 2), ("dptr", 32), ("aux", 32)]}
        cmd_ready = port("cmd_ready", 1, False)
        cpl = {f: port(f"cpl_{f}", w, False) for f, w in [("valid", 1), ("tag", 8), ("status", 8), ("result", 32)]}
        cpl_ready = port("cpl_ready", 1, True)
        hrdq = {f: port(f"hrdq_{f}", w, False) for f, w in [("valid", 1), ("addr", 32), ("len", 16)]}
        hrdq_ready = port("hrdq_ready", 1, True)
        hrdd = {f: port(f"hrdd_{f}", w, True) for f, w in [("valid", 1), ("data", 32), ("last", 1)]}
        hrdd_ready = port("hrdd_ready", 1, False)
        hwr = {f: port(f"hwr_{f}", w, False) for f, w in [("valid", 1), ("addr", 32), ("data", 32), ("last", 1)]}
        hwr_ready = port("hwr_ready", 1, True)
        err_pkts = port("err_pkts", 16, True)
        stray = port("stray_cpls", 16, True)
        drops = port("drop_pkts", 16, True)
        self.io = io
        self.specials += Instance("ats_udp_host",
            **ecpix5.udp_host_udp_ports(PAGE_BYTES, rx, tx),
            o_m_cmd_valid=cmd["valid"], i_m_cmd_ready=cmd_ready, o_m_cmd_op=cmd["op"], o_m_cmd_tag=cmd["tag"],
            o_m_cmd_lba=cmd["lba"], o_m_cmd_nlb=cmd["nlb"], o_m_cmd_txid=cmd["txid"], o_m_cmd_flags=cmd["flags"],
            o_m_cmd_attr=cmd["attr"], o_m_cmd_prio=cmd["prio"], o_m_cmd_dptr=cmd["dptr"], o_m_cmd_aux=cmd["aux"],
            i_s_cpl_valid=cpl["valid"], o_s_cpl_ready=cpl_ready, i_s_cpl_tag=cpl["tag"],
            i_s_cpl_status=cpl["status"], i_s_cpl_result=cpl["result"],
            i_s_hrdq_valid=hrdq["valid"], o_s_hrdq_ready=hrdq_ready, i_s_hrdq_addr=hrdq["addr"],
            i_s_hrdq_len=hrdq["len"],
            o_m_hrdd_valid=hrdd["valid"], i_m_hrdd_ready=hrdd_ready, o_m_hrdd_data=hrdd["data"],
            o_m_hrdd_last=hrdd["last"],
            i_s_hwr_valid=hwr["valid"], o_s_hwr_ready=hwr_ready, i_s_hwr_addr=hwr["addr"],
            i_s_hwr_data=hwr["data"], i_s_hwr_last=hwr["last"],
            o_err_pkts=err_pkts, o_stray_cpls=stray, o_drop_pkts=drops,
        )


def generate(out: Path, rx_cdc_depth: int = 32) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    top = BoardHostLink(rx_cdc_depth)
    phy = top.ethphy
    ios = {top.cd_sys.clk, top.cd_sys.rst, phy.eth_clk, phy.eth_rst, phy.tx_valid, phy.tx_data,
           phy.tx_last, phy.rx_valid, phy.rx_data, phy.rx_last}
    ios |= {s for s, _ in top.io.values()}
    v = convert(top, ios=ios, name="board_hostlink")
    path = out / "board_hostlink.v"
    v.write(str(path))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "sim_board")
    a = ap.parse_args()
    print(generate(a.out))


if __name__ == "__main__":
    main()
# for the test bench
IP_INT = int(ipaddress.IPv4Address(IP))
