"""attribute the top module's LUT positions of a Yosys JSON to LiteX submodules by net names."""
import json, sys, re, collections
d = json.load(open(sys.argv[1]))
top = d["modules"][sys.argv[2] if len(sys.argv) > 2 else "ecpix5"]
names = collections.defaultdict(list)
for n, info in top["netnames"].items():
    for b in info["bits"]:
        names[b].append(n)
def group(n):
    n = n.lstrip("\\")
    n = re.sub(r"^ecpix5_?soc_|^ecpix5_", "", n)
    n = re.sub(r"^ecp5ddrphy", "ddrphy", n)
    if n.startswith("litedramnativeport") or n.startswith("litedramcore") or n.startswith("litedram"): return "LiteDRAM controller / crossbar / DFII"
    if n.startswith("storage_") or n.startswith("mem_"): return "FIFOs/memories (storage_*, mem_*)"
    if n.startswith("liteeth") or n.startswith("tx_phase") or n.startswith("rx_phase"): return "LiteEth core (MAC/ARP/IP/ICMP/UDP)"
    if n.startswith("csrfield") or n.startswith("bus_errors"): return "CSR banks"
    if n.startswith("uptime") or n.startswith("cycles_status"): return "timer"
    for pre, g in [("sdram_bankmachine", "LiteDRAM bank machines"), ("sdram_", "LiteDRAM controller / crossbar / DFII"),
                   ("ddrphy", "LiteDRAM ECP5 DDR3 PHY"), ("ethcore", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"), ("ethphy", "LiteEth RGMII PHY"),
                   ("ethmac", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"),
                   ("csr_bankarray", "CSR banks"), ("csr_interconnect", "CSR banks"), ("csrbank", "CSR banks"), ("ats_", "ats glue (CSRs, host port)"),
                   ("uart", "UART"), ("timer", "timer"), ("wishbone", "wishbone / bus"), ("interconnect", "wishbone / bus"), ("bus", "wishbone / bus"),
                   ("litedramwishbone", "LiteDRAM wishbone bridge"), ("wishbone_bridge", "LiteDRAM wishbone bridge"), ("converter", "wishbone / bus"),
                   ("emuportarbiter", "EmuPortArbiter"), ("rom", "ROM/SRAM"), ("sram", "ROM/SRAM"), ("crg", "CRG"), ("pll", "CRG"),
                   ("crossbar", "LiteDRAM controller / crossbar / DFII"), ("controller", "LiteDRAM controller / crossbar / DFII"),
                   ("vexriscv", "CPU glue"), ("ctrl", "ctrl"), ("identifier", "ident"), ("udp", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"),
                   ("icmp", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"), ("arp", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"), ("ip_", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"),
                   ("mac", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"), ("tx_", "LiteEth core (MAC/ARP/IP/ICMP/UDP)"), ("rx_", "LiteEth core (MAC/ARP/IP/ICMP/UDP)")]:
        if n.lower().startswith(pre):
            return g
    return None
cnt = collections.Counter(); unk = collections.Counter()
w = {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 2}
for cn, c in top["cells"].items():
    if c["type"] not in w: continue
    outs = [b for p, bits in c["connections"].items() if c["port_directions"].get(p) == "output" for b in bits]
    g = None
    for b in outs:
        for n in sorted(names.get(b, []), key=lambda x: x.startswith("$")):
            if n.startswith("$"): continue
            g = group(n) or ("?" + re.sub(r"\d+", "#", n.lstrip("\\"))[:30])
            break
        if g: break
    if g is None: g = "(unnamed)"
    if g.startswith("?"): unk[g] += w[c["type"]]; g = "other named"
    cnt[g] += w[c["type"]]
for g, v in cnt.most_common(): print(f"{v:7d} {g}")
print("top unknown prefixes:", unk.most_common(25))
