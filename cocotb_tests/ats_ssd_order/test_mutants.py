"""The order mutants (mutate.py) still fit the RTL: every mutant's patterns occur in the current
source exactly as often as the mutant says (a pattern that went stale would make the mutant a
no-op or an error only when someone runs the slow mutation check), the mutated file is one the
order test builds and can take from a copy (its environment variable), and a stale pattern is an
error naming the mutant. Pure Python, no build: the mutants themselves run with
`nice -n 10 python cocotb_tests/ats_ssd_order/mutate.py` (testplan.md "Mutation check")."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
from atstb.filelist import block_sources  # noqa: E402


def _load():
    spec = importlib.util.spec_from_file_location("ats_ssd_order_mutate", HERE / "mutate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mutant_patterns_match_rtl():
    mut = _load()
    srcs = {p.resolve() for p in block_sources("ats_ssd_bench_top")}
    test_text = (HERE / "test_ats_ssd_order.py").read_text()
    errors = []
    for name, (src, edits, what) in mut.MUTANTS.items():
        if src.resolve() not in srcs:
            errors.append(f"{name}: {src} is not in ats_ssd_bench_top's file list (the test would not build it)")
        env = mut.SRC_ENV.get(src)
        if env is None or f'("{src.name}", "{env}")' not in test_text:
            errors.append(f"{name}: test_ats_ssd_order.py takes no copy of {src.name} (environment variable {env})")
        try:
            path, text = mut.mutated(name)
        except mut.StalePattern as e:
            errors.append(str(e))
            continue
        assert path == src and text != src.read_text(), name
    assert not errors, "order mutants out of date (re-target them: testplan.md \"Mutation check\"):\n" + \
        "\n".join(errors)
    assert mut.main(["--check"]) == 0            # the command line's dry run agrees


def test_stale_pattern_is_an_error(monkeypatch):
    """A pattern that is not in the source, or occurs more often than the mutant says, raises
    StalePattern naming the mutant (and the command line exits 2 before any build)."""
    mut = _load()
    src, edits, what = mut.MUTANTS["wbuf_fua_early"]
    old, new, n = edits[0]
    monkeypatch.setitem(mut.MUTANTS, "stale_gone", (src, [(old + " // gone", new, 1)], what))
    monkeypatch.setitem(mut.MUTANTS, "stale_count", (src, [(old, new, n + 1)], what))
    for name in ("stale_gone", "stale_count"):
        with pytest.raises(mut.StalePattern, match=name):
            mut.mutated(name)
        assert mut.main(["--check", name]) == 2
