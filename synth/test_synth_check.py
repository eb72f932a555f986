"""Yosys synthesis check of every block in synth/blocks.json (except those marked "check": false),
one pytest item per block, so that `make test` runs them in the same pytest-xdist pool as the
cocotb suite: the two workers stay busy and no core waits for a serial synthesis step.

Each item is `python synth/run_synth.py --check --all --only <block>`: Yosys `synth_ecp5` for the
LFE5U-85F; it fails on any Yosys error, on latches, on `check -assert` problems and on an empty
design (synth/README.md). Reports go to build/synth/check/<block>/ (never over the place-and-route
figures in build/synth/<block>/).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ats_run_synth", _HERE / "run_synth.py")
run_synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_synth)

BLOCKS = run_synth.check_blocks(run_synth.load_blocks(run_synth.BLOCKS_FILE))


@pytest.mark.parametrize("block", BLOCKS, ids=[b["name"] for b in BLOCKS])
def test_synth_check(block):
    try:
        r = run_synth.run_block(block, "check", verbose=False)
    except run_synth.SynthError as e:
        pytest.fail(f"synthesis check of {block['name']} ({block['top']}): {e}", pytrace=False)
    print(f"[synth] check OK: {r['name']} ({r['top']}): LUT4={r['lut4']} FF={r['ff']} "
          f"DP16KD={r['dp16kd']} yosys {r['yosys_seconds']:.1f} s ({r['yosys_cpu_seconds']:.1f} s CPU)")


# Every block's sources, including those not synthesized in `make test` ("check": false: the device
# core), must at least parse in Yosys: Verilator accepts constructs Yosys 0.70 rejects (`return` in
# a function, for one), and lint alone does not catch them. `read_verilog -defer` parses without
# elaborating, so this costs seconds.
ALL_BLOCKS = run_synth.load_blocks(run_synth.BLOCKS_FILE)


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b["name"] for b in ALL_BLOCKS])
def test_yosys_parse(block, tmp_path):
    import subprocess
    fl = run_synth.block_filelist(block)          # the .f list's files, +define+ and +incdir+ too
    srcs = fl.sources
    defines = " ".join(f"-D{d}" for d in fl.defines + block.get("defines", []))
    incs = " ".join(f"-I{run_synth.tp(d)}" for d in fl.incdirs + [run_synth.REPO / d for d in block.get("include_dirs", [])])
    script = run_synth.REPO / "build" / "synth" / "parse" / f"{block['name']}.ys"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"read_verilog -defer -sv {defines} {incs} "
                      + " ".join(f'"{run_synth.tp(s)}"' for s in srcs) + "\n")
    p = subprocess.run([*run_synth.YOSYS_CMD, "-q", "-s", run_synth.tp(script)], cwd=run_synth.REPO,
                       env=run_synth.tool_env(), capture_output=True, text=True)
    errs = [l for l in (p.stdout + p.stderr).splitlines() if "ERROR" in l]
    assert p.returncode == 0, f"Yosys cannot parse {block['name']}'s sources: " + "\n".join(errs or [p.stdout[-2000:]])


def test_yosys_key_follows_inputs(tmp_path):
    """The Yosys netlist is reused only when the key is unchanged: the key must change with any
    byte of a source, of a header in an include directory, and of the script."""
    src = tmp_path / "a.sv"
    inc = tmp_path / "inc"
    inc.mkdir()
    hdr = inc / "defs.svh"
    src.write_text("module a; endmodule\n")
    hdr.write_text("`define W 8\n")
    k0 = run_synth.yosys_key("script", [src], [inc])
    assert k0 == run_synth.yosys_key("script", [src], [inc])
    assert k0 != run_synth.yosys_key("script -x", [src], [inc])
    src.write_text("module a; endmodule \n")
    k1 = run_synth.yosys_key("script", [src], [inc])
    assert k1 != k0
    hdr.write_text("`define W 9\n")
    assert run_synth.yosys_key("script", [src], [inc]) != k1


def test_placer_reaches_nextpnr(tmp_path, monkeypatch):
    """blocks.json's `placer` is validated when the file is read, and run_nextpnr passes it on."""
    bad = tmp_path / "blocks.json"
    bad.write_text('[{"name": "x", "top": "x", "sources": ["a.sv"], "placer": "fast"}]')
    with pytest.raises(run_synth.SynthError, match="placer"):
        run_synth.load_blocks(bad)
    good = tmp_path / "good.json"
    good.write_text('[{"name": "x", "top": "x", "sources": ["a.sv"], "placer": "static"}]')
    assert run_synth.load_blocks(good)[0]["placer"] == "static"
    seen = []

    def fake_run_tool(cmd, log, what):
        seen.append(cmd)
        rpt = Path(cmd[cmd.index("--report") + 1])
        (run_synth.REPO / rpt if not rpt.is_absolute() else rpt).write_text('{"fmax": {}}')
        log.write_text("Info: Program finished normally.\n")
        return run_synth.ToolRun(1.0, 1.0)

    monkeypatch.setattr(run_synth, "run_tool", fake_run_tool)
    for placer, expect in (("static", ["--placer", "static"]), (None, None)):
        seen.clear()
        run_synth.run_nextpnr("x", tmp_path / "x.json", tmp_path, 125.0, 1, 1, 6, False, placer)
        cmd = seen[0]
        if expect:
            assert cmd[cmd.index("--placer"):cmd.index("--placer") + 2] == expect
        else:
            assert "--placer" not in cmd


def test_merge_summary_keeps_other_blocks(tmp_path):
    """`--only` replaces its blocks' entries and keeps the others, in their order."""
    import json
    p = tmp_path / "summary.json"
    p.write_text(json.dumps({"mode": "pnr", "blocks": [{"name": "a", "v": 1}, {"name": "b", "v": 1}]}))
    got = run_synth.merge_summary(p, "pnr", [{"name": "b", "v": 2}, {"name": "c", "v": 2}])
    assert got == [{"name": "a", "v": 1}, {"name": "b", "v": 2}, {"name": "c", "v": 2}]
    # another mode's summary is not merged
    assert run_synth.merge_summary(p, "check", [{"name": "b", "v": 3}]) == [{"name": "b", "v": 3}]


def test_checked_inside_another_block(tmp_path):
    """"check": "<block>" is accepted only for a checked block whose sources include this one's."""
    def blocks(host_srcs, host_check=True):
        f = tmp_path / "blocks.json"
        f.write_text(__import__("json").dumps([
            {"name": "host", "top": "h", "sources": host_srcs, "check": host_check},
            {"name": "part", "top": "p", "sources": ["rtl/a.sv"], "check": "host"}]))
        return f
    ok = run_synth.load_blocks(blocks(["rtl/a.sv", "rtl/h.sv"]))
    assert [b["name"] for b in run_synth.check_blocks(ok)] == ["host"]
    with pytest.raises(run_synth.SynthError, match="sources lack"):
        run_synth.load_blocks(blocks(["rtl/h.sv"]))
    with pytest.raises(run_synth.SynthError, match="itself checked"):
        run_synth.load_blocks(blocks(["rtl/a.sv", "rtl/h.sv"], host_check=False))
