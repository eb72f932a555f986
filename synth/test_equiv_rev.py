"""synth/equiv_rev.py proves what it should and refuses what it should (synth/README.md
"Equivalence against a revision"): on ats_cmdq at DEPTH 4 (seconds), against the checked-out
revision, with the gate side's source swapped for a rewritten or a mutated copy.

- a rewrite that keeps the function (a row update by De Morgan) is proven equivalent;
- a one-bit mutant of the precedence update is refused; its effect reaches the outputs only
  through `ins_prec_q`, the output of a kept-hierarchy register bank (`ats_cmdq_rep`), which the
  first version of the tool left unflattened and so proved this very mutant "equivalent".
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SRC = "rtl/cmdq/ats_cmdq.sv"
ROW_OLD = "dep_d[k] = ins_dep_q[k] ? (s3_dep & ~hit_col_q) : (dep_q[k] & ~(ins_col_q | hit_col_q));"
ROW_NEW = "dep_d[k] = ins_dep_q[k] ? (s3_dep & ~hit_col_q) : (dep_q[k] & ~ins_col_q & ~hit_col_q);"
PREC_OLD = "= !s3_prec_q[k];   // = key_new > key_q[k] (k in use)"
PREC_MUT = "= s3_prec_q[k];   // = key_new > key_q[k] (k in use)"


def _head_has_file() -> bool:
    r = subprocess.run(["git", "cat-file", "-e", f"HEAD:{SRC}"], cwd=REPO, capture_output=True)
    return r.returncode == 0


def _run(tmp_path: Path, old: str, new: str) -> subprocess.CompletedProcess:
    # the gate: HEAD's file with one edit (HEAD, not the working tree: the gold side is HEAD's)
    text = subprocess.run(["git", "show", f"HEAD:{SRC}"], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout
    assert text.count(old) == 1, f"the test's anchor is not once in {SRC}: {old!r}"
    gate = tmp_path / "ats_cmdq.sv"
    gate.write_text(text.replace(old, new))
    return subprocess.run([sys.executable, str(HERE / "equiv_rev.py"), "--block", "cmdq", "--param", "DEPTH=4",
                           "--swap", f"{SRC}={gate}"], cwd=REPO, capture_output=True, text=True)


@pytest.mark.skipif(not _head_has_file(), reason="needs a git checkout with rtl/cmdq at HEAD")
@pytest.mark.parametrize("case, old, new, proven", [
    ("rewrite", ROW_OLD, ROW_NEW, True),
    ("prec_mutant", PREC_OLD, PREC_MUT, False),
])
def test_equiv_rev(tmp_path, case, old, new, proven):
    p = _run(tmp_path, old, new)
    out = p.stdout + p.stderr
    if proven:
        assert p.returncode == 0 and "equivalent" in p.stdout, out
    else:
        # the verdict itself (equiv_status -assert), not any Yosys failure on the way
        assert p.returncode == 1 and "NOT proven" in p.stderr and \
            "unproven $equiv cells in 'equiv_status -assert'" in p.stderr, out
