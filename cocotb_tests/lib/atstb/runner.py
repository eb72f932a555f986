"""Build and run cocotb tests on Verilator, one build directory per (toplevel, parameter set)."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import resource
import shutil
import time
from pathlib import Path

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import Verilator

# a block's sources come from its .f file list, the one place they are written (atstb/filelist.py)
from .filelist import FileListError, block_sources, filelist, find_filelist, read_filelist  # noqa: F401
from .cxx import cxx_make_vars

ROOT = Path(__file__).resolve().parents[3]
LIB = ROOT / "cocotb_tests" / "lib"

# C++ optimisation (make variables of verilated.mk): -O1 for the model's per-cycle code (-Os, Verilator's
# default, compiled the core TB 22 % slower for the same run time, -O2 slower still and no faster),
# none for its run-once constructors (the "Slow" files: at -O1, with --public-flat-rw, the core TB's
# symbol table compiled for 15+ min), -O2 for Verilator's runtime library, cocotb's VPI calls go
# through it (12 % off the core TB's run; compiled once per flag set through ccache).
# The model is compiled as one translation unit (VM_PARALLEL_BUILDS=0: Verilator's files included
# into Vtop__ALL.cpp, all of it at OPT_FAST): the parallel form (one object per file, make -j) first
# compiles two precompiled headers that include the model's own headers (so ccache never shares them
# between models) and parses the model's headers once per file; for ats_sata that was 15.7 CPU s of
# model compile against 5.2, for the core TB 47.7 against 33.0. The pytest pool runs two builds at a
# time anyway, so a build's own make -j gains nothing there. Builds with --public-flat-rw keep the
# parallel form (below).
# The compiler: atstb/cxx.py (clang++ where installed, CXX and LINK; in the fingerprint too).
# cocotb_tests/README.md "Build cost" has the figures. ATS_VL_OPT="FAST,SLOW,GLOBAL[,PARALLEL]"
# overrides them (measurements); the flags are part of the build fingerprint.
LEGACY_OPT = {"OPT_FAST": "-Os", "OPT_SLOW": "", "OPT_GLOBAL": "-Os"}   # Verilator's, before
OPT = {"OPT_FAST": "-O1", "OPT_SLOW": "", "OPT_GLOBAL": "-O2", "VM_PARALLEL_BUILDS": "0"}


def _opt() -> dict:
    """The make variables of a build: the optimisation flags above and the compiler (atstb/cxx.py:
    clang++ where installed, CXX and LINK)."""
    return {**_opt_flags(), **cxx_make_vars()}


def _opt_flags() -> dict:
    o = os.environ.get("ATS_VL_OPT")
    if not o:
        return dict(OPT)
    fast, slow, glob, par = (o.split(",") + ["", "", "", ""])[:4]
    return {"OPT_FAST": fast, "OPT_SLOW": slow, "OPT_GLOBAL": glob, "VM_PARALLEL_BUILDS": par or "0"}


class _Verilator(Verilator):
    """cocotb's Verilator runner with two changes: `--public-flat-rw` (every signal of the design
    readable and writable through VPI) only when the test asks for it, otherwise the signals a
    control file (.vlt) names; and the C++ optimisation flags on make's command line."""
    public_all = True
    make_vars: dict = {}

    def _build_command(self):
        cmds = super()._build_command()
        if not self.public_all:
            cmds[0].remove("--public-flat-rw")
        cmds[1] += [f"{k}={v}" for k, v in self.make_vars.items()]
        if "OBJCACHE" not in os.environ and shutil.which("ccache"):   # `make test` sets it; pytest alone too
            cmds[1] += ["OBJCACHE=ccache", f"CCACHE_DIR={os.environ.get('CCACHE_DIR', ROOT / '.cache' / 'ccache')}"]
        return cmds


def _vlt(toplevel: str, public: dict[str, list[str]]) -> str:
    """The control file of a build without --public-flat-rw: every signal and parameter of the
    top module readable and writable (the ports the test drives, the top's own signals; in a
    wrapper TB top that is all there is), and below it only the signals the test reads."""
    lines = ["`verilator_config", f'public_flat_rw -module "{toplevel}" -var "*"']
    for module, names in sorted(public.items()):
        lines += [f'public_flat_rd -module "{module}" -var "{n}"' for n in names]
    return "\n".join(lines) + "\n"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(toplevel: str, sources: list[Path], test_module: str, test_dir: Path, build_key: str,
        parameters: dict | None = None, extra_env: dict | None = None, waves: str | None = None,
        testcase: str | None = None, seed: int | None = None,
        build_args: list[str] | None = None, plusargs: list[str] | None = None,
        test_filter: str | None = None, results_name: str | None = None,
        public: dict[str, list[str]] | None = None) -> Path:
    """Build (once per build_key) and run `test_module`. `waves`: FST path to write, or None.
    `build_args`: extra Verilator arguments (C++ sources, `-CFLAGS ...`), after the defaults.
    `plusargs`: simulator plusargs of this run; `test_filter`: regex on cocotb test names;
    `results_name`: results file results_<name>.xml (default: the test module), for several runs
    of one build. `public`: None builds with --public-flat-rw (every signal visible to cocotb);
    a dict {module name: [signal names or globs]} builds with only the top module's signals and
    parameters and these signals below it visible (read-only), which Verilator can optimise
    around: smaller, faster builds and runs. A test reading a signal that is not listed fails
    with an AttributeError, so the list is checked by every run."""
    # Trace support is compiled only into builds that write waves (a run with `waves`, or any run
    # under ATS_WAVES=1): it costs about a fifth more C++ compile time and the campaigns never trace.
    # Traced builds live in their own directory (`<key>_fst`), so the two never rebuild each other.
    trace = bool(waves) or os.environ.get("ATS_WAVES", "") not in ("", "0")
    if os.environ.get("ATS_VL_PUBLIC_ALL", "") not in ("", "0"):   # measurements: the old builds
        public = None
    if trace:
        build_key = f"{build_key}_fst"
    if os.environ.get("ATS_VL_VARIANT"):        # measurements: a build apart from the normal one
        build_key = f"{build_key}@{os.environ['ATS_VL_VARIANT']}"
    build_dir = ROOT / "build" / "sim" / toplevel / build_key
    runner = _Verilator()
    runner.public_all = public is None
    runner.make_vars = _opt()
    if public is None and not os.environ.get("ATS_VL_OPT"):
        # --public-flat-rw: Verilator's parallel form, whose "Slow" files get OPT_SLOW (none): in one
        # unit at OPT_FAST, such a symbol table compiled for 15+ min (the core TB, before its list)
        runner.make_vars.pop("VM_PARALLEL_BUILDS")
    args = (["--trace-fst", "--trace-structs"] if trace else []) \
        + ["--assert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "unique",
           "--x-initial", "unique"] + list(build_args or [])
    srcs = [str(s) for s in sources]
    # The fingerprint of the model: what Verilator and the C++ compiler are given. One build
    # directory holds one model; when the fingerprint changes (other flags, another public list,
    # other sources or parameters under the same key), the old objects are removed first, since
    # make alone would not recompile them for changed flags.
    fp = json.dumps({"top": toplevel, "sources": srcs, "parameters": parameters or {}, "args": args,
                     "public": public, "make": runner.make_vars}, sort_keys=True, default=str)
    fp_hash = hashlib.sha256(fp.encode()).hexdigest()[:16]
    # several pytest items (xdist workers) may share a build: the first builds, the others wait
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    lock = open(build_dir.parent / f".{build_key}.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    # released in `finally`: a failed build (a compile error, no verilator) must fail this item, not
    # leave the lock held so that the worker's next item on this build waits for ever
    try:
        t_build, c_build = time.time(), _cpu()
        stamp = build_dir / "model.sha"
        # a directory built before the fingerprints (no stamp) holds the legacy model: kept as it is
        legacy = public is None and runner.make_vars == LEGACY_OPT
        if build_dir.exists() and (stamp.read_text() != fp_hash if stamp.exists() else not legacy):
            for f in [*build_dir.glob("*.o"), *build_dir.glob("*.a"), *build_dir.glob("*.gch"),
                      build_dir / toplevel]:
                f.unlink(missing_ok=True)
            stamp.unlink(missing_ok=True)
        if public is not None:
            build_dir.mkdir(parents=True, exist_ok=True)
            vlt = build_dir / "public.vlt"
            text = _vlt(toplevel, public)
            if not vlt.exists() or vlt.read_text() != text:
                vlt.write_text(text)
            srcs = [str(vlt)] + srcs          # cocotb's runner wants a control file first
        runner.build(
            sources=srcs,
            hdl_toplevel=toplevel,
            build_dir=build_dir,
            parameters=parameters or {},
            build_args=args,
            waves=trace,
            always=False,
        )
        stamp.write_text(fp_hash)
        t_build, c_build = time.time() - t_build, _cpu() - c_build
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    t_run, c_run = time.time(), _cpu()
    env = {"PYTHONPATH": os.pathsep.join([str(LIB), str(test_dir), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    test_args = []
    if waves:
        Path(waves).parent.mkdir(parents=True, exist_ok=True)
        test_args = ["--trace-file", str(waves)]
    seed = int(os.environ.get("ATS_SEED", "1")) if seed is None else seed
    try:
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
    finally:        # a failed run is accounted too (under pytest, cocotb_tools raises on failures)
        _account(build_dir, test_module, t_build, time.time() - t_run, c_build, _cpu() - c_run)
    # Under pytest the runner checks the results itself; scripts (demo, bench) get the same check.
    num_tests, num_failed = get_results(xml)
    if num_tests == 0 or num_failed:
        raise RuntimeError(f"{test_module}: {num_failed} of {num_tests} cocotb tests failed")
    return xml


def _account(build_dir: Path, test_module: str, build_s: float, run_s: float,
             build_cpu: float, run_cpu: float) -> None:
    """One line per run in build/sim/times.jsonl: where `make test`'s time goes (wall and CPU
    seconds of the build step, a no-op when the build is up to date, and of the simulation)."""
    line = json.dumps({"build": str(build_dir.relative_to(ROOT / "build" / "sim")), "module": test_module,
                       "build_s": round(build_s, 2), "run_s": round(run_s, 2),
                       "build_cpu": round(build_cpu, 2), "run_cpu": round(run_cpu, 2)})
    with open(ROOT / "build" / "sim" / "times.jsonl", "a") as f:
        f.write(line + "\n")


def load_sources(gen_dir: Path) -> list[Path]:
    """Every source of a generated block (its `sources.f`, paths relative to the repository)."""
    return block_sources(Path(gen_dir) / "sources.f")


def load_params(gen_dir: Path) -> dict:
    """Parameters of a generated SpinalHDL configuration (written by its generator)."""
    import json
    return json.loads((Path(gen_dir) / "params.json").read_text())
