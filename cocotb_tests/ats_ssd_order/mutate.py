"""Mutation check of test_ats_ssd_order: builds deliberately broken copies of ats_wbuf.sv /
ats_cmdq.sv under build/ssd_order_mut/<name>/, runs the test against each (ATS_WBUF_SRC /
ATS_CMDQ_SRC; configuration d8_s8, PLP mutants d16_s16_plp, the budget mutant d16_s16_plp_b6), reports whether it failed and
with which check, and deletes the copies (and their build directories) afterwards. Every mutant
must fail.

Run: nice -n 10 python cocotb_tests/ats_ssd_order/mutate.py [name ...]   (one build at a time)
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WBUF, CMDQ = ROOT / "rtl/wbuf/ats_wbuf.sv", ROOT / "rtl/cmdq/ats_cmdq.sv"

# name: (file, original text, broken text, what it breaks[, occurrences replaced, default 1])
MUTANTS = {
    "wbuf_fua_early": (WBUF, "state_d = (op_wr_q && fua_q && !PLP) ? ST_WPUSH : ST_DONE;",
                       "state_d = ST_DONE;", "a FUA write completes when buffered, not when durable"),
    "wbuf_coalesce_epochs": (WBUF, "hit_st_q == SL_DIRTY && hit_ep_q == epoch_q;", "hit_st_q == SL_DIRTY;",
                             "a write coalesces into a dirty page of an earlier epoch (takes its place)"),
    "wbuf_urgent_any_epoch": (WBUF, "uc_urg_q && uc_ep_q == hs_ep_q;", "uc_urg_q;",
                              "RFLUSH-targeted pages go ahead of pages of earlier epochs"),
    "wbuf_flush_early": (WBUF, "else if (!PLP) dec_next = ST_WPUSH;", "",
                         "a FLUSH completes at once (does not wait for durability)"),
    "wbuf_rflush_early": (WBUF, "state_d  = PLP ? ST_DONE : ST_RF_WAIT;", "state_d  = ST_DONE;",
                          "an RFLUSH completes after marking (does not wait for durability)"),
    "wbuf_plp_nodump": (WBUF, "wb_go_q <= (dump_q && PLP) ||", "wb_go_q <=",
                        "PLP: pwr_fail does not start the dump (config d16_s16_plp)"),
    "wbuf_plp_done_early": (WBUF, "assign dump_done  = dump_q && (!PLP ||", "assign dump_done  = dump_q || (!PLP ||",
                            "PLP: dump_done rises at pwr_fail, before the dump (config d16_s16_plp)"),
    "wbuf_plp_budget_noadmit": (WBUF, "plp_room_q  <= !PLP || (16'(held_cnt_q) < budget_q);",
                                "plp_room_q  <= 1'b1;",
                                "PLP: writes not held to the capacitor budget (config d16_s16_plp_b6)"),
    "cmdq_head_epoch": (CMDQ, "waits_for = (x_wr && y_wr && y_epc) || (x_attr != ATTR_HEAD) &&",
                        "waits_for = (x_attr != ATTR_HEAD) &&",
                        "HEAD writes overtake writes of earlier epochs"),
    "cmdq_ordered_nowait": (CMDQ, "((x_attr == ATTR_ORDERED) || y_ord ||", "(y_ord ||",
                            "an ORDERED command does not wait for earlier commands", 2),
    "cmdq_flush_nowait": (CMDQ, "(x_fl && y_wr) || (same_tx", "(same_tx",
                          "FLUSH/RFLUSH do not wait for earlier writes"),
}


def run_one(name: str) -> tuple[bool, str]:
    src, old, new, _, *n = MUTANTS[name]
    text = src.read_text()
    n = n[0] if n else 1           # occurrences replaced (all of them: e.g. both precedence functions)
    assert text.count(old) == n, f"{name}: pattern found {text.count(old)} times in {src.name}, expected {n}"
    d = ROOT / "build/ssd_order_mut" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / src.name).write_text(text.replace(old, new))
    env = dict(os.environ, **{"ATS_WBUF_SRC" if src == WBUF else "ATS_CMDQ_SRC": str(d / src.name)})
    try:
        cfg = "d16_s16_plp_b6" if "budget" in name else "d16_s16_plp" if "plp" in name else "d8_s8"
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-s", "-x",
                            "cocotb_tests/ats_ssd_order", "-k", f"{cfg}]"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
        out = r.stdout + r.stderr
        failed = r.returncode != 0
        first = ""
        m = re.search(r"(AssertionError|TimeoutError): (.*)\n(.*)", out)
        if m:
            first = (m.group(1) + ": " + m.group(2) + " " + m.group(3).strip())[:400]
        tests = re.findall(r"(run_\w+(?:/mode=\w+)?)\s+(PASS|FAIL)", out)
        return failed, f"{first}  results: {tests}"
    finally:
        shutil.rmtree(d, ignore_errors=True)
        for cfg in ("d8_s8", "d16_s16_plp", "d16_s16_plp_b6"):
            shutil.rmtree(ROOT / "build/sim/ats_ssd_bench_top" / f"order_{cfg}_{name}", ignore_errors=True)


if __name__ == "__main__":
    names = sys.argv[1:] or list(MUTANTS)
    bad = 0
    for n in names:
        failed, info = run_one(n)
        print(f"{n:24s} {'KILLED' if failed else 'SURVIVED'}  ({MUTANTS[n][3]})\n    {info}", flush=True)
        bad += not failed
    sys.exit(1 if bad else 0)
