"""Build ats_ssd_bench_top once and run workload configurations on it (optionally 2 at a time).

Each configuration is one cocotb run of bench/ssd/bench_ssd_tb.py with its own results file and
working directory, so two runs can share one build. Build: build/bench/sim/<key>/.
"""
from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))

TOP = "ats_ssd_bench_top"


def sources() -> list[Path]:
    from atstb.filelist import block_sources
    return block_sources(HERE / f"{TOP}.f")


VLT = HERE / "ats_ssd_bench_top.vlt"


def _build_unlocked(key: str, parameters: dict) -> Path:
    """Verilate and compile the top for cocotb. Same command as cocotb's Verilator runner, except
    that only the top module's signals are public (ats_ssd_bench_top.vlt; the runner's
    --public-flat-rw makes every internal signal public, which keeps Verilator from optimising the
    model: ~35 us per cycle for the 64-slot top) and the per-cycle code is compiled with -O2, not -Os.
    The benches only touch the top's ports and parameters."""
    import subprocess
    import cocotb_tools.config as cc
    build_dir = ROOT / "build" / "bench" / "sim" / key
    build_dir.mkdir(parents=True, exist_ok=True)
    exe = build_dir / TOP
    stamp = build_dir / "build_key.json"
    from atstb.cxx import cxx_make_vars          # the compiler (clang++ where installed)
    mk = cxx_make_vars()
    want = json.dumps({"parameters": parameters, "sources": [str(s) for s in sources()], "make": mk,
                       "mtimes": [os.path.getmtime(s) for s in sources() + [VLT, Path(__file__)]]}, sort_keys=True)
    if exe.exists() and stamp.exists() and stamp.read_text() == want:
        return build_dir
    # objects of another build (other flags, another compiler) go first: make would keep them
    for f in [*build_dir.glob("*.o"), *build_dir.glob("*.a"), *build_dir.glob("*.gch"), exe]:
        f.unlink(missing_ok=True)
    cmd = ["verilator", "-cc", "--exe", "-Mdir", str(build_dir), "--top-module", TOP, "--vpi",
           "--prefix", "Vtop", "-o", TOP,
           "-LDFLAGS", f"-Wl,-rpath,{cc.libs_dir} -L{cc.libs_dir} -lcocotbvpi_verilator",
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "fast", "--x-initial", "unique"]
    cmd += [f"-G{k}={v}" for k, v in parameters.items()]
    cmd += [str(cc.share_dir / "lib" / "verilator" / "verilator.cpp"), str(VLT)] + [str(s) for s in sources()]
    subprocess.run(cmd, check=True, cwd=build_dir)
    # -O2 for the per-cycle code, -O0 for the (large, run-once) constructors of big buffers
    subprocess.run(["make", "-j", "2", "-C", str(build_dir), "-f", "Vtop.mk", "VM_TRACE=0", "OPT_FAST=-O2",
                    "OPT_SLOW=-O0", *[f"{k}={v}" for k, v in mk.items()]],
                   check=True, stdout=subprocess.DEVNULL)
    stamp.write_text(want)
    return build_dir


def build(key: str, parameters: dict) -> Path:
    """Build once per key; concurrent callers (pytest-xdist workers, --jobs) serialise on a file
    lock so that two compilers never write the same build directory."""
    import fcntl
    lock_dir = ROOT / "build" / "bench" / "sim"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f".{key}.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            return _build_unlocked(key, parameters)
        finally:
            fcntl.flock(lk, fcntl.LOCK_UN)


def run_one(build_dir: Path, name: str, cfg: dict) -> dict:
    """Run one configuration; returns its results (raises if the run failed its checks)."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner
    work = build_dir / "runs" / name
    work.mkdir(parents=True, exist_ok=True)
    out = work / "result.json"
    if out.exists():
        out.unlink()
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "cocotb_tests" / "lib"), str(HERE),
                                          os.environ.get("PYTHONPATH", "")]),
           "ATS_BENCH_CFG": json.dumps(cfg), "ATS_BENCH_OUT": str(out)}
    t = time.time()
    xml = get_runner("verilator").test(test_module="bench_ssd_tb", hdl_toplevel=TOP, hdl_toplevel_lang="verilog",
                                       build_dir=build_dir,
                                       test_dir=work, extra_env=env, seed=int(cfg.get("seed", 1)),
                                       results_xml=str(work / "results.xml"))
    num, failed = get_results(xml)
    if num == 0 or failed or not out.exists():
        raise RuntimeError(f"bench run {name} failed ({failed} of {num}); see the log above")
    res = json.loads(out.read_text())
    res["wall_s"] = time.time() - t
    return res


def run_many(build_dir: Path, runs: list[tuple[str, dict]], jobs: int = 1) -> dict[str, dict]:
    if jobs <= 1:
        return {name: run_one(build_dir, name, cfg) for name, cfg in runs}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {name: ex.submit(run_one, build_dir, name, cfg) for name, cfg in runs}
        return {name: f.result() for name, f in futs.items()}
