"""Mutation check of test_ats_ssd_order: builds deliberately broken copies of ats_wbuf.sv /
ats_cmdq.sv under build/ssd_order_mut/<name>/, runs the test against each (ATS_WBUF_SRC /
ATS_CMDQ_SRC; configuration d8_s8, PLP mutants d16_s16_plp, the budget mutant d16_s16_plp_b6), reports whether it failed and
with which check, and deletes the copies (and their build directories) afterwards. Every mutant
must fail.

Each mutant is one or more text edits (original text, broken text, how many times the original
must occur). A pattern that no longer occurs exactly that many times in the current RTL is an
error naming the mutant (StalePattern; the run stops before any build, exit 2): the RTL changed
and the mutant must be re-targeted onto it. test_mutants.py (in make test) checks every pattern.

Run: nice -n 10 python cocotb_tests/ats_ssd_order/mutate.py [name ...]   (one build at a time)
     python cocotb_tests/ats_ssd_order/mutate.py --check [name ...]     (patterns only, no build)
     python cocotb_tests/ats_ssd_order/mutate.py --list
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WBUF, CMDQ = ROOT / "rtl/wbuf/ats_wbuf.sv", ROOT / "rtl/cmdq/ats_cmdq.sv"
# the files the test can take from a copy (test_ats_ssd_order.py, its environment variables)
SRC_ENV = {WBUF: "ATS_WBUF_SRC", CMDQ: "ATS_CMDQ_SRC"}

# name: (file, [(original text, broken text, occurrences: all of them are replaced), ...], what it breaks)
MUTANTS = {
    # ST_FIN: a FUA WRITE / DIFFWRITE (no PLP) goes through ST_WPUSH and completes when durable
    "wbuf_fua_early": (WBUF, [("state_d = ((op_wr_q || op_diff_q) && fua_q && !PLP) ? ST_WPUSH : ST_DONE;",
                               "state_d = ST_DONE;", 1)],
                       "a FUA write completes when buffered, not when durable"),
    # only the take-over (c_take_q: the new version takes the old one's FIFO position); the COMMIT term stays
    "wbuf_coalesce_epochs": (WBUF, [("c_take_q     <= hit_q && hit_st_q == SL_DIRTY && hit_ep_q == epoch_q && "
                                     "!(cmt_q && page_last_q) && !ptx_v_q;",
                                     "c_take_q     <= hit_q && hit_st_q == SL_DIRTY && !(cmt_q && page_last_q) && !ptx_v_q;", 1)],
                             "a write coalesces into a dirty page of an earlier epoch (takes its place)"),
    "wbuf_urgent_any_epoch": (WBUF, [("uc_urg_q && uc_ep_q == hs_ep_q;", "uc_urg_q;", 1)],
                              "RFLUSH-targeted pages go ahead of pages of earlier epochs"),
    "wbuf_flush_early": (WBUF, [("else if (!PLP) dec_next = ST_WPUSH;", "", 1)],
                         "a FLUSH completes at once (does not wait for durability)"),
    "wbuf_rflush_early": (WBUF, [("state_d  = PLP ? ST_DONE : ST_RF_WAIT;", "state_d  = ST_DONE;", 1)],
                          "an RFLUSH completes after marking (does not wait for durability)"),
    "wbuf_plp_nodump": (WBUF, [("wb_go_q <= (dump_q && PLP) ||", "wb_go_q <=", 1)],
                        "PLP: pwr_fail does not start the dump (config d16_s16_plp)"),
    "wbuf_plp_done_early": (WBUF, [("assign dump_done  = dump_q && (!PLP ||", "assign dump_done  = dump_q || (!PLP ||", 1)],
                            "PLP: dump_done rises at pwr_fail, before the dump (config d16_s16_plp)"),
    "wbuf_plp_budget_noadmit": (WBUF, [("plp_room_q  <= !PLP || (16'(held_cnt_q) < budget_q);",
                                        "plp_room_q  <= 1'b1;", 1)],
                                "PLP: writes not held to the capacitor budget (config d16_s16_plp_b6)"),
    # the queue's precedence is in two functions, waits_for (stage 1 vs stage 2) and waits_nov (stage 2
    # vs the table): each cmdq mutant breaks both
    "cmdq_head_epoch": (CMDQ, [("= (x_wr && y_wr && y_epc) || (x_attr != ats_host_pkg::ATTR_HEAD) &&",
                                "= (x_attr != ats_host_pkg::ATTR_HEAD) &&", 2)],
                        "writes (HEAD included) overtake writes of earlier epochs"),
    "cmdq_ordered_nowait": (CMDQ, [("((x_attr == ats_host_pkg::ATTR_ORDERED) || y_ord ||", "(y_ord ||", 2)],
                            "an ORDERED command does not wait for earlier commands"),
    "cmdq_flush_nowait": (CMDQ, [("(x_fl && y_wr) || (same_tx", "(same_tx", 1),        # waits_for
                                 ("y_ord || (x_fl && y_wr));", "y_ord);", 1)],           # waits_nov
                          "FLUSH/RFLUSH do not wait for earlier writes"),
}


class StalePattern(Exception):
    """A mutant's pattern does not match the current RTL the expected number of times."""


def mutated(name: str) -> tuple[Path, str]:
    """The mutant's file and its broken text; StalePattern (naming the mutant) if an edit's original
    text is not in the file exactly as often as given, or the edits leave the file unchanged."""
    if name not in MUTANTS:
        raise KeyError(f"unknown mutant {name!r} (known: {', '.join(MUTANTS)})")
    src, edits, _ = MUTANTS[name]
    orig = text = src.read_text()
    bad = []
    for k, (old, new, n) in enumerate(edits):
        found = text.count(old)
        if found != n or old == new:
            bad.append(f"edit {k}: {old!r} found {found} times in {src.relative_to(ROOT)}, expected {n}")
            continue
        text = text.replace(old, new)
    if bad:
        raise StalePattern(f"mutant {name}: stale pattern (the RTL changed; re-target it onto the "
                           f"current source): " + "; ".join(bad))
    if text == orig:
        raise StalePattern(f"mutant {name}: the edits leave {src.name} unchanged")
    return src, text


def config(name: str) -> str:
    return "d16_s16_plp_b6" if "budget" in name else "d16_s16_plp" if "plp" in name else "d8_s8"


def run_one(name: str) -> tuple[bool, str]:
    src, text = mutated(name)
    d = ROOT / "build/ssd_order_mut" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / src.name).write_text(text)
    env = dict(os.environ, **{SRC_ENV[src]: str(d / src.name)})
    try:
        cfg = config(name)
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-s", "-x",
                            "cocotb_tests/ats_ssd_order/test_ats_ssd_order.py", "-k", f"{cfg}]"],
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="mutants to run (default: all)")
    ap.add_argument("--check", action="store_true", help="only apply the patterns (no build, no run)")
    ap.add_argument("--list", action="store_true", help="list the mutants")
    a = ap.parse_args(argv)
    if a.list:
        for n, (src, _, what) in MUTANTS.items():
            print(f"{n:24s} {src.name:12s} {config(n):15s} {what}")
        return 0
    unknown = [n for n in a.names if n not in MUTANTS]
    if unknown:
        print(f"mutate.py: unknown mutant(s) {', '.join(unknown)} (known: {', '.join(MUTANTS)})", file=sys.stderr)
        return 2
    names = a.names or list(MUTANTS)
    stale = []
    for n in names:                               # every pattern first: a stale one stops the run
        try:
            mutated(n)
        except StalePattern as e:
            stale.append(str(e))
    for s in stale:
        print(f"STALE {s}", file=sys.stderr)
    if stale:
        return 2
    if a.check:
        print(f"{len(names)} mutant patterns match the current RTL")
        return 0
    bad = 0
    for n in names:
        failed, info = run_one(n)
        print(f"{n:24s} {'KILLED' if failed else 'SURVIVED'}  ({MUTANTS[n][2]})\n    {info}", flush=True)
        bad += not failed
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
