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
    return [ROOT / line for line in (HERE / f"{TOP}.f").read_text().split()]


def _build_unlocked(key: str, parameters: dict) -> Path:
    from cocotb_tools.runner import get_runner
    build_dir = ROOT / "build" / "bench" / "sim" / key
    runner = get_runner("verilator")
    runner.build(sources=[str(s) for s in sources()], hdl_toplevel=TOP, build_dir=build_dir,
                 parameters=parameters,
                 build_args=["-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "unique",
                             "--x-initial", "unique"],
                 always=False)
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
