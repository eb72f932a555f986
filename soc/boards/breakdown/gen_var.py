"""gen_var.py OUT VARIANT: the ECPIX-5 board SoC (soc/boards/ecpix5.py, 4 x 2) with one option changed,
for the resource breakdown (docs/boards.md "Resources"): base (as committed), cpu_lite, cpu_minimal,
noicmp (LiteEth without ICMP), ethphydp (LiteEth's MAC in the PHY's clock: now the default), ports1 (one crossbar port
for the dies)."""
import sys, importlib.util
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("ecpix5", ROOT / "soc/boards/ecpix5.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
out, var = Path(sys.argv[1]), sys.argv[2]
kw = {}
if var.startswith("cpu_"):
    v = var[4:]
    orig = m.SoCCore.__init__
    def patched(self, *a, **k):
        k["cpu_variant"] = v
        return orig(self, *a, **k)
    m.SoCCore.__init__ = patched
if var == "noicmp":
    import liteeth.core as lc
    orig = lc.LiteEthUDPIPCore.__init__
    def p2(self, *a, **k):
        k["with_icmp"] = False
        return orig(self, *a, **k)
    m.LiteEthUDPIPCore = None
    lc.LiteEthUDPIPCore.__init__ = p2
if var == "ethphydp":
    import liteeth.core as lc
    orig3 = lc.LiteEthUDPIPCore.__init__
    def p3(self, *a, **k):
        k["with_sys_datapath"] = False
        return orig3(self, *a, **k)
    lc.LiteEthUDPIPCore.__init__ = p3
if var == "ports1":
    kw["emu_ports"] = 1
m.generate(out, **kw)
