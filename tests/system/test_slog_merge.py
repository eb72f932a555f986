# SPDX-License-Identifier: Apache-2.0
"""The firmware's S-Log merge policy and GC protection on the whole SoC (issue 40 item 4;
docs/architecture.md §11.6, sw/firmware/README.md "S-Log").

A die image written by the reference writer (tests/system/slog_sim.py, the `sim` geometry) holds
N_LPN mapped LPNs with FRAGS fragments each, one S-Log record (one log page) per fragment, in rounds
(LPN 0..N-1, then again), so the live log pages (N_LPN x FRAGS + the records after the checkpoint) are
above SLOG_HI = 192 and the oldest fragment is older than 3/4 of the backend's LPGN -> PPN table;
a version-3 checkpoint, then a few more records (fragments on the first LPNs) and a plain write that
empties one LPN's F. The `sim_slog` SoC boots it (recovery + SLOAD); then:

1. every LPN read through the host equals the writer's logical state (slog_sim `expected`: base +
   fragments, stated on requests) while the firmware merges;
2. the firmware merges down: its console `slog` line says merging is off, and the fragment lists it
   keeps (`slog` per LPN) are exactly those the test's own model of §11.6 leaves: LPNs merged oldest
   first fragment first, until fewer than SLOG_LO live log pages and half the index's entries remain;
   every LPN reads the same bytes again;
3. `gc D B` (console) on a used block holding pinned bases, and on one holding only live log pages:
   the LPNs whose base or live log page lies there are merged first (the console's gc_merges), the
   block is erased, every LPN reads the same;
   Then a restart from the dies the firmware left (MERGE pages replayed, its checkpoint): the same reads;
4. a power cut at a random cycle 20,000 .. ATS_SLOG_MERGE_CUT_MAX (1,000,000) cycles after the boot, while
   the firmware merges (a second run of the same image), then a recovery: every LPN reads the same; the
   fragment lists the recovery oracle finds on the cut images, run through the model from a boot's
   state (merging off: the hysteresis is not kept across a power cut), give exactly the LPNs the
   firmware leaves and the number it merges.

5. (test_slog_merge_unreadable) MERGE status 3: each unreadable LPN merged once, never in a loop,
   and a GC block holding its base kept.

Variants (VARIANTS, the image fixture's parameter): `plain` (above) on sim_slog; `pk` (ATS_LONG=1
only) on sim_slogpk, the packing build (group commit, records packed into shared log pages): 68 LPNs x
4 fragments, and in each round the records of LPNs 4i and 4i + 1 written as one packed group, so a
log page holds two LPNs' fragments: merging one frees no page the other still needs, and GC of a
block of log pages must merge both (the age order meets ties, both LPNs' oldest fragment in one
page, but since the pair always shares its pages the stop never falls between the two: the final
set cannot tell a wrong tie-break; the merge order is not compared); items 1, 2, 3 and 4 (ATS_SLOG_MERGE_CUTS cuts inside the merges) as above.

Cost (make test: ATS_SLOG_MERGE_CUTS = 1 power cut; ATS_LONG=1: 4): 42 CPU s for the three items on
the sim_slog simulator of test_slog_fw. It fails on: the firmware before the policy (no merge line, F unchanged), GC without
the S-Log step (the console's gc_merges; without that check, the reads after GC of a block of live
log pages answer MEDIA_ERROR), no hysteresis (merging stops at 152 live pages, not below SLOG_LO)."""
from __future__ import annotations

import os
import random
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from atstb.recovery_oracle import recover  # noqa: E402

CFG = "sim_slog"
N_LPN, FRAGS = 70, 3
SLOG_HI, SLOG_LO, SLOG_LPNS, SLOG_PPNS = 192, 128, 256, 256
LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
CUTS = int(os.environ.get("ATS_SLOG_MERGE_CUTS", "4" if LONG else "1"))
# the image variants: `plain` (make test) on sim_slog, one record a log page; `pk` (ATS_LONG) on
# sim_slogpk, the packing build (group commit), with packed log pages: in each round of fragments
# the records of LPNs 4i and 4i + 1 are one packed group (one log page holds both LPNs' fragments),
# so merging one LPN frees no page its partner still needs and GC of a block of log pages merges both
# (the tie-break of the age order is not told apart by the final set: the pair's pages are shared)
# (68 LPNs x 4 fragments: 202 live log pages, above SLOG_HI, below the 256 LPGNs of the table; at
# 72 x 4 the checkpoint's S-Log section no longer fits its block and the image recovers no fragment)
VARIANTS = {"plain": dict(cfg=CFG, n_lpn=N_LPN, pack=False, frags=FRAGS)}
if LONG:
    VARIANTS["pk"] = dict(cfg="sim_slogpk", n_lpn=68, pack=True, frags=4)


def fw_slog(sysm) -> tuple[dict, dict]:
    """The console's `slog`: the merge line's fields and the firmware's F (lpn -> its fragments' PPNs)."""
    text = harness.console_answer(sysm, "slog")
    m = re.search(r"slog: merge: next (\d+) used (\d+) live (\d+) \(at most (\d+)\) oldest (\d+) on (\d+) "
                  r"stall (\d+); dumps (\d+) merged (\d+) stale (\d+) nothing (\d+) unreadable (\d+) "
                  r"gc_merges (\d+) gc_kept (\d+) over (\d+) rx_waits_gc (\d+) rx_waits_ckpt (\d+) rx_polls (\d+) "
                  r"rx_fails (\d+) holds (\d+) hold_max (\d+) hold_total (\d+)", text)
    assert m, text[-2000:]
    keys = ("next", "used", "live", "live_ub", "oldest", "on", "stall", "dumps", "merged", "stale", "nothing",
            "unreadable", "gc_merges", "gc_kept", "over", "rx_waits_gc", "rx_waits_ckpt", "rx_polls", "rx_fails",
            "holds", "hold_max", "hold_total")
    st = dict(zip(keys, (int(x) for x in m.groups())))
    F = {}
    for line in text.splitlines():
        mm = re.match(r"slog (\d+):((?: \d+/\d+/\d+/\d+/\d+)*)\s*$", line.strip())
        if mm:
            F[int(mm.group(1))] = [int(f.split("/")[0]) for f in mm.group(2).split()]
    return st, F


def build_image(sim, rng, out: Path, n_lpn: int = N_LPN, pack: bool = False, frags: int = FRAGS):
    """The workload (module docstring; `pack`: VARIANTS); returns the writer, the cut (after
    everything) and the images."""
    dev = sim.SimDev(rng, nlpn=n_lpn + 2, p_slow=0.0)
    for lpn in range(n_lpn + 2):
        dev.write(lpn)
    pb = dev.geo.page_bytes

    def frag(lpn):
        return (lpn, 4 * rng.randrange(pb // 4 - 16), rng.randbytes(4 * rng.randint(1, 16)))
    for _ in range(frags):
        for lpn in range(n_lpn):
            if pack and lpn % 4 == 0 and lpn + 1 < n_lpn:
                dev.slog_group([(1 + lpn % 4, [], [frag(lpn)]), (1 + (lpn + 1) % 4, [], [frag(lpn + 1)])], pack=True)
            elif not (pack and lpn % 4 == 1):
                dev.slog_tx(1 + lpn % 4, [], [frag(lpn)])
    dev.checkpoint()
    # after the checkpoint: records the recovery parses, one LPN's F emptied by a plain write
    for lpn in (n_lpn, n_lpn + 1):
        dev.slog_tx(2, [], [(lpn, 8, rng.randbytes(32))])
    dev.write(3)
    cut = max(r.done for r in dev.reqs) + 1
    return dev, cut, dev.images(out, cut, "tail")


def model_merge(F: dict, lpgn: dict, nxt: int) -> set[int]:
    """§11.6 on fragment lists F (lpn -> its fragments' log page PPNs, oldest first; lpgn: PPN -> LPGN;
    nxt: the next LPGN), merging off at the start (a boot): a merge is due while the capacity
    hysteresis is on (set above SLOG_HI live pages or 3/4 of the index, cleared below SLOG_LO and half)
    or the oldest fragment's age passes 3/4 of the LPGN -> PPN table; LPNs merged oldest fragment
    first. Returns the LPNs left with fragments."""
    left = {lpn: fr for lpn, fr in F.items() if fr}
    on = False
    while left:
        pages = {p for fr in left.values() for p in fr}
        if len(pages) > SLOG_HI or 4 * len(left) > 3 * SLOG_LPNS:
            on = True
        elif len(pages) < SLOG_LO and 2 * len(left) < SLOG_LPNS:
            on = False
        age = lambda lpn: nxt - lpgn[left[lpn][0]]   # noqa: E731
        aged = max(nxt - lpgn[p] for p in pages) > SLOG_PPNS - SLOG_PPNS // 4
        if not (on or aged):
            break
        del left[max(sorted(left), key=age)]      # the oldest fragment 0; a tie: the lowest LPN
    return set(left)


def check_reads(sysm, exp: dict, nlpn: int, where: str) -> None:
    errs = []
    for lpn in range(nlpn):
        try:
            got = sysm.dev.read(lpn)
        except harness.DeviceError as e:
            errs.append(f"{where}: lpn {lpn}: {e}")
            continue
        want = exp.get(lpn)
        if want is None:
            want = bytes(sysm.cfg["page_bytes"])
        if got != want:
            errs.append(f"{where}: lpn {lpn}: read != the writer's base + fragments")
    assert not errs, "\n".join(errs[:8]) + f"\n({len(errs)} LPNs; uart: {sysm.uart_log})"


def wait_merged(sysm, where: str, limit: int = 60_000_000) -> tuple[dict, dict]:
    """Runs until the firmware's merging is off and it merged nothing since the last look."""
    end = sysm.hp.cycle + limit
    last = None
    while sysm.hp.cycle < end:
        st, F = fw_slog(sysm)
        if not st["on"] and last == st["merged"]:
            return st, F
        last = st["merged"]
        sysm.hp.run(1_000_000, 0)
    raise AssertionError(f"{where}: merging did not end in {limit} cycles: {st}")


@pytest.fixture(scope="module", params=list(VARIANTS))
def image(tmp_path_factory, request):
    v = VARIANTS[request.param]
    sim = harness.slog_sim()
    exe, fw, cfg = harness.build(v["cfg"])
    geo = sim.GEO
    assert (cfg["num_chan"], cfg["ways"], cfg["blocks"], cfg["pages_per_block"], cfg["page_bytes"]) == \
        (geo.num_chan, geo.ways, geo.blocks, geo.ppb, geo.page_bytes)
    d = tmp_path_factory.mktemp("slog_merge_img")
    rng = random.Random("slogmerge" if request.param == "plain" else f"slogmerge-{request.param}")
    dev, cut, paths = build_image(sim, rng, d, v["n_lpn"], v["pack"], v["frags"])
    if v["pack"]:           # the premise: log pages holding two LPNs' fragments
        owners = {}
        for lpn, fr in dev.F.items():
            for f in fr:
                owners.setdefault(f.ppn, set()).add(lpn)
        assert sum(len(o) > 1 for o in owners.values()) >= v["n_lpn"] // 4, "the image packed no log page"
    rec = recover(paths, geo, cfg["num_tx"])
    exp = dev.expected(cut)
    # the oracle agrees with the writer on what the image holds (the test's premise)
    assert {l for l, fr in rec.frags.items() if fr} == {l for l, fr in dev.F.items() if fr}
    lpgn = {r.ppn: r.meta.epoch for r in dev.reqs if r.meta.kind == 1 and r.meta.flags & 0x20}
    F = {lpn: [f.ppn for f in fr] for lpn, fr in dev.F.items() if fr}
    assert len({p for fr in F.values() for p in fr}) > SLOG_HI, "the image is below SLOG_HI"
    left = model_merge(F, lpgn, rec.next_lpgn)
    assert len(left) < len(F)
    return dict(sim=sim, dev=dev, cut=cut, dir=d, exp=exp, left=left, geo=geo, lpgn=lpgn, cfg=cfg,
                cfg_name=v["cfg"], nlpn=v["n_lpn"] + 4)


def test_slog_merge_and_gc(tmp_path, image):
    dev, exp, geo = image["dev"], image["exp"], image["geo"]
    nlpn = image["nlpn"]
    sysm = harness.System(tmp_path / "run", 1, cfg_name=image["cfg_name"], template=image["dir"])
    assert sysm.start(), "boot cut"
    boot = sysm.hp.uart_text()
    assert "recovery: slog: loaded lpgn" in boot, boot[-2000:]
    # 1. reads while the firmware merges
    check_reads(sysm, exp, nlpn, "during the merges")
    # 2. merged down to the model's set
    st, F = wait_merged(sysm, "boot")
    assert st["merged"] > 0 and st["unreadable"] == 0 and st["over"] == 0, st
    assert st["live_ub"] < SLOG_LO and st["used"] * 2 < SLOG_LPNS, st
    assert set(F) == image["left"], (f"the firmware kept F of {sorted(F)}\n the model {sorted(image['left'])}"
                                     f"\n {st}")
    check_reads(sysm, exp, nlpn, "after the merges")
    # 3. GC of a block holding pinned bases, then of one holding live log pages only (the blocks from
    #    the firmware's F of the moment: the writer's l2p is the bases' of the LPNs not merged)
    done = []
    for kind in ("bases", "log pages"):
        pinned, logblk = {}, {}
        for lpn in sorted(F):
            d, b, _ = geo.unppn(dev.l2p[lpn])
            pinned.setdefault((d, b), set()).add(lpn)
        for lpn in sorted(F):
            for f in dev.F[lpn]:
                d, b, _ = geo.unppn(f.ppn)
                if (d, b) not in pinned:
                    logblk.setdefault((d, b), set()).add(lpn)
        cands = pinned if kind == "bases" else logblk
        for (d, b), lpns in sorted(cands.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            out = harness.console_answer(sysm, f"gc {d} {b}")
            if "not a used block" in out:
                continue
            assert f"gc: {d}/{b}: 0" in out, out[-1500:]
            st2, F2 = fw_slog(sysm)
            assert st2["gc_merges"] >= st["gc_merges"] + len(lpns), (kind, lpns, st2)
            # GC waited (write-backs held) for no S-Log record being received before its index read
            # (architecture 11.6): one GC wait at least (housekeeping's GC may add more), none failed;
            # and its hold was counted (gc_block: from the hold to the moved pages)
            assert st2["rx_waits_gc"] >= st["rx_waits_gc"] + 1 and st2["rx_fails"] == 0, (kind, st, st2)
            assert st2["holds"] >= st["holds"] + 1 and st2["hold_total"] > st["hold_total"], (kind, st, st2)
            assert st2["hold_max"] <= st2["hold_total"], st2
            assert not lpns & set(F2), f"GC of {d}/{b} left F of {lpns & set(F2)}"
            st, F = st2, F2
            done.append((kind, d, b, sorted(lpns)))
            check_reads(sysm, exp, nlpn, f"after GC of {d}/{b} ({kind})")
            break
    assert [k for k, *_ in done] == ["bases", "log pages"], done
    print(f"merged {st['merged']} LPNs, {st['dumps']} index reads; GC {done}; rx_waits_gc {st['rx_waits_gc']} "
          f"rx_waits_ckpt {st['rx_waits_ckpt']} rx_polls {st['rx_polls']}; GC write-back holds {st['holds']}: "
          f"longest {st['hold_max']} cycles, total {st['hold_total']} cycles")
    sysm.stop()
    # a restart from what the firmware left: MERGE pages replayed, F from its checkpoint
    again = harness.System(tmp_path / "run2", 2, cfg_name=image["cfg_name"], template=sysm.dir)
    assert again.start()
    check_reads(again, exp, nlpn, "after a restart")
    again.stop()


@pytest.mark.parametrize("k", range(CUTS))
def test_slog_merge_power_cut(tmp_path, image, k):
    """A power cut at a random cycle while the firmware merges, then a recovery: the reads, and the
    merges end where the model says (persistence §10.3: a MERGE page removes the fragments older
    than it)."""
    exp = image["exp"]
    nlpn = image["nlpn"]
    sysm = harness.System(tmp_path / "run", 10 + k, cfg_name=image["cfg_name"], template=image["dir"])
    assert sysm.start()
    rng = random.Random(f"cut{k}")
    at = rng.randrange(20_000, int(os.environ.get("ATS_SLOG_MERGE_CUT_MAX", "1000000")))
    sysm.hp.arm_cut(harness.CUT_CYCLE, sysm.hp.cycle + at)
    sysm.hp.run(10_000_000, 0)
    assert sysm.hp.cut, "the cut did not happen"
    sysm.stop()
    # what the recovery must find (the MERGE pages durable at the cut applied, §10.3), and where the
    # policy takes it from there: merging starts off at a boot (the hysteresis is not kept), so a cut
    # inside a run of merges may leave the S-Log between SLOG_LO and SLOG_HI
    rec = recover(sysm.images, image["geo"], image["cfg"]["num_tx"])
    F0 = {lpn: [f.ppn for f in fr] for lpn, fr in rec.frags.items() if fr}
    want = model_merge(F0, image["lpgn"], rec.next_lpgn)
    again = harness.System(tmp_path / "run2", 20 + k, cfg_name=image["cfg_name"], template=sysm.dir)
    assert again.start()
    check_reads(again, exp, nlpn, f"after the cut {k}")
    st, F = wait_merged(again, f"after the cut {k}")
    assert set(F) == want, (sorted(F), sorted(want))
    assert st["merged"] == len(F0) - len(want), (st, len(F0), len(want))
    check_reads(again, exp, nlpn, f"after the cut {k} and the merges")
    print(f"cut {k}: {at} cycles after the boot: {len(F0)} LPNs with F recovered, {st['merged']} merged after")
    again.stop()


def test_slog_merge_unreadable(tmp_path):
    """MERGE status 3 (unreadable): three LPNs whose log pages (LPGN 0..2) share the LPGN -> PPN
    table's entries with newer live pages (LPGN 256..258: the recovery loads only the newest, the
    older fragments read MEDIA_ERROR) are the oldest fragments, so the age rule wants them merged. The
    firmware issues each MERGE once (status 3, counted, reported) and never loops: the age rule then
    looks only at the LPNs it may merge (young here: no MERGE of them, no further index read); GC of the block holding one of their bases merges
    the other LPNs there and keeps the block (status -7, gc_kept); every other LPN reads its bytes,
    the three MEDIA_ERROR (never other bytes)."""
    sim = harness.slog_sim()
    exe, fw, cfg = harness.build(CFG)
    geo = sim.GEO
    rng = random.Random("slogmerge3")
    dev = sim.SimDev(rng, nlpn=8, p_slow=0.0)
    x = 7
    for lpn in list(range(6)) + [x]:
        dev.write(lpn)
    for lpn in (0, 1, 2):
        dev.slog_tx(1, [], [(lpn, 4 * lpn, rng.randbytes(16))])
    while len(dev.writer.stream) // dev.writer.P < SLOG_PPNS:      # log pages whose fragments die
        dev.slog_tx(2, [], [(x, 64, rng.randbytes(8))])
        dev.write(x)
    for lpn in (3, 4, 5):
        dev.slog_tx(3, [], [(lpn, 32, rng.randbytes(24))])
    dev.checkpoint()
    cut = max(r.done for r in dev.reqs) + 1
    d = tmp_path / "img"
    d.mkdir()
    dev.images(d, cut, "tail")
    exp = dev.expected(cut)
    lost = {0, 1, 2}
    sysm = harness.System(tmp_path / "run", 3, cfg_name=CFG, template=d)
    assert sysm.start()
    boot = sysm.hp.uart_text()
    assert "3 older log pages share a table entry" in boot, boot[-2000:]

    def reads(where):
        errs = []
        for lpn in range(8):
            try:
                got = sysm.dev.read(lpn)
                if lpn in lost or got != (exp.get(lpn) or bytes(geo.page_bytes)):
                    errs.append(f"{where}: lpn {lpn}: " + ("read" if lpn in lost else "wrong bytes"))
            except harness.DeviceError as e:
                if lpn not in lost:
                    errs.append(f"{where}: lpn {lpn}: {e}")
        assert not errs, "\n".join(errs)

    reads("boot")
    sysm.hp.run(3_000_000, 0)
    st, F = fw_slog(sysm)
    # each MERGE once; then the age rule looks only at the LPNs it may merge (all young): nothing due
    assert st["unreadable"] == 3 and st["merged"] == 0 and not st["on"], st
    assert set(F) == {0, 1, 2, 3, 4, 5}, F
    uart = sysm.hp.uart_text()
    assert all(f"slog: merge lpn {lpn}: status 3" in uart for lpn in lost), uart[-2000:]
    sysm.hp.run(3_000_000, 0)
    st2, _ = fw_slog(sysm)
    assert (st2["dumps"], st2["unreadable"]) == (st["dumps"], 3), (st, st2)   # no loop
    # GC of the block holding LPN 0's base: its other pinned LPNs merged, the block kept
    d0, b0, _ = geo.unppn(dev.l2p[0])
    others = {lpn for lpn in (3, 4, 5) if geo.unppn(dev.l2p[lpn])[:2] == (d0, b0)}
    out = harness.console_answer(sysm, f"gc {d0} {b0}")
    assert f"gc: {d0}/{b0}: -7" in out, out[-1500:]
    st3, F3 = fw_slog(sysm)
    assert st3["gc_kept"] == 1 and st3["gc_merges"] == len(others) and st3["unreadable"] == 3, st3
    assert set(F3) == {0, 1, 2, 3, 4, 5} - others, F3
    reads("after the kept GC")
    sysm.stop()
