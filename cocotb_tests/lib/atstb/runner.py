"""Build and run cocotb tests on Verilator, one build directory per (toplevel, parameter set)."""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import get_runner

ROOT = Path(__file__).resolve().parents[3]
LIB = ROOT / "cocotb_tests" / "lib"


def run(toplevel: str, sources: list[Path], test_module: str, test_dir: Path, build_key: str,
        parameters: dict | None = None, extra_env: dict | None = None, waves: str | None = None,
        testcase: str | None = None, seed: int | None = None,
        build_args: list[str] | None = None, plusargs: list[str] | None = None,
        test_filter: str | None = None, results_name: str | None = None) -> Path:
    """Build (once per build_key) and run `test_module`. `waves`: FST path to write, or None.
    `build_args`: extra Verilator arguments (C++ sources, `-CFLAGS ...`), after the defaults.
    `plusargs`: simulator plusargs of this run; `test_filter`: regex on cocotb test names;
    `results_name`: results file results_<name>.xml (default: the test module), for several runs
    of one build."""
    # Trace support is compiled only into builds that write waves (a run with `waves`, or any run
    # under ATS_WAVES=1): it costs about a fifth more C++ compile time and the campaigns never trace.
    # Traced builds live in their own directory (`<key>_fst`), so the two never rebuild each other.
    # C++ optimisation stays Verilator's own (-Os for the model, none for the "Slow" constructors):
    # -CFLAGS -O1 took 10 % off the NAND subsystem TB's build and 20 % off its run, but it applies
    # to the Slow files as well, and the core TB's symbol-table constructor (--public-flat-rw) then
    # compiled for more than 15 minutes; -O0 halves builds but runs 4x slower.
    trace = bool(waves) or os.environ.get("ATS_WAVES", "") not in ("", "0")
    if trace:
        build_key = f"{build_key}_fst"
    build_dir = ROOT / "build" / "sim" / toplevel / build_key
    runner = get_runner("verilator")
    # several pytest items (xdist workers) may share a build: the first builds, the others wait
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    lock = open(build_dir.parent / f".{build_key}.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    t_build = time.time()
    runner.build(
        sources=[str(s) for s in sources],
        hdl_toplevel=toplevel,
        build_dir=build_dir,
        parameters=parameters or {},
        build_args=(["--trace-fst", "--trace-structs"] if trace else [])
        + ["--assert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "unique",
           "--x-initial", "unique"] + list(build_args or []),
        waves=trace,
        always=False,
    )
    t_build = time.time() - t_build
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    t_run = time.time()
    env = {"PYTHONPATH": os.pathsep.join([str(LIB), str(test_dir), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    test_args = []
    if waves:
        Path(waves).parent.mkdir(parents=True, exist_ok=True)
        test_args = ["--trace-file", str(waves)]
    seed = int(os.environ.get("ATS_SEED", "1")) if seed is None else seed
    xml = runner.test(
        test_module=test_module,
        hdl_toplevel=toplevel,
        build_dir=build_dir,
        test_dir=build_dir,
        extra_env=env,
        waves=bool(waves),
        test_args=test_args,
        plusargs=list(plusargs or []),
        testcase=testcase,
        **({"test_filter": test_filter} if test_filter else {}),
        seed=seed,
        # absolute: cocotb_tools refuses relative paths under pytest (same file as before otherwise)
        results_xml=str(build_dir / f"results_{results_name or test_module}.xml"),
    )
    # Under pytest the runner checks the results itself; scripts (demo, bench) get the same check.
    _account(build_dir, test_module, t_build, time.time() - t_run)
    num_tests, num_failed = get_results(xml)
    if num_tests == 0 or num_failed:
        raise RuntimeError(f"{test_module}: {num_failed} of {num_tests} cocotb tests failed")
    return xml


def _account(build_dir: Path, test_module: str, build_s: float, run_s: float) -> None:
    """One line per run in build/sim/times.jsonl: where `make test`'s time goes (wall seconds of
    the build step, a no-op `make` when the build is up to date, and of the simulation)."""
    line = json.dumps({"build": str(build_dir.relative_to(ROOT / "build" / "sim")), "module": test_module,
                       "build_s": round(build_s, 2), "run_s": round(run_s, 2)})
    with open(ROOT / "build" / "sim" / "times.jsonl", "a") as f:
        f.write(line + "\n")


def load_sources(gen_dir: Path) -> list[Path]:
    """Every source of a generated block (its `sources.f`, paths relative to the repository)."""
    lines = (Path(gen_dir) / "sources.f").read_text().split()
    return [ROOT / line for line in lines]


def load_params(gen_dir: Path) -> dict:
    """Parameters of a generated SpinalHDL configuration (written by its generator)."""
    import json
    return json.loads((Path(gen_dir) / "params.json").read_text())
