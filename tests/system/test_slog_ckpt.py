# SPDX-License-Identifier: Apache-2.0
"""The checkpoint's S-Log section from the backend's index (issue 40; docs/persistence.md §10.4,
sw/firmware/ckpt.c with ATS_HW_SLOG, rtl/backend/README.md "Firmware port" op 7 rops 3-6) on the
whole `sim_slog` SoC.

Die images written by the reference writer (tests/system/slog_sim.py: plain writes, TRIMs,
transactions, S-Log transactions, MERGE pages, version-3 checkpoints) are cut after the writer's
last checkpoint at the point where the recovery oracle (cocotb_tests/lib/atstb/recovery_oracle.py)
finds the most LPNs with fragments; the firmware recovers them (F loaded into the backend by SLOAD).
Then, through the host port, full-page writes of some LPNs with fragments and a TRIM of another
and a FLUSH (the backend RELEASEs their F as they are written back; the firmware's own table does
not see it), a forced
checkpoint (console `ckpt`), and a power cycle: the recovery from that checkpoint must give every LPN
byte for byte the test's model (the writer's state at the cut, then the host's writes), and the
firmware's F (console `slog`) must be the oracle's for the LPNs not written, none for the others.
Before the checkpoint every LPN is read too (the loads). The old ckpt.c (F from the firmware's
table, the bases from the fuzzy mapping) wrote the written LPNs' stale fragments over their new
pages: their reads after the power cycle differ.

`make test`: one seed (ATS_SLOG_CKPT_SEEDS sets more). ATS_LONG=1 (`make test-long`) adds the same
items on `sim_slog1k` (items `1k-<seed>`: a 1,024-entry index, 32 FRAG slots, 2 MiB of main RAM; the
writer's 24 LPNs spread over the index, slog_sim.index_spread) and `test_slog_ckpt_cut_in_section` on
both: a power cut while the firmware programs a page of a checkpoint's S-Log section."""
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

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
SEEDS = list(range(int(os.environ.get("ATS_SLOG_CKPT_SEEDS", "1"))))
# (configuration, seed): `sim_slog` always (ids: the seed, as before), `sim_slog1k` with ATS_LONG=1
PARAMS = [pytest.param("sim_slog", s, id=str(s)) for s in SEEDS] + \
    [pytest.param("sim_slog1k", s, id=f"1k-{s}") for s in (SEEDS if LONG else [])]



def oracle_frags(rec) -> dict[int, list[tuple]]:
    return {l: [(f.ppn, f.doff, f.off, f.len, f.seq) for f in fr] for l, fr in rec.frags.items() if fr}


def read_all(sysm, model: dict[int, bytes], where: str) -> None:
    bad = []
    for lpn, want in sorted(model.items()):
        got = sysm.dev.read(lpn)
        if got != want:
            bad.append(lpn)
    assert not bad, f"{where}: LPNs read differently from the model: {bad} (uart: {sysm.uart_log})"


def boot_with_fragments(tmp_path, seed, cfg_name="sim_slog"):
    """slog_sim's images cut where the oracle has the most LPNs with fragments, booted: (sysm, geo,
    the oracle's F, the model of every LPN, cut). An index above 256 entries: the writer's LPNs spread
    over it (slog_sim.index_spread)."""
    sim = harness.slog_sim()
    exe, fw, cfg = harness.build(cfg_name)
    geo = sim.GEO
    assert cfg.get("slog"), f"the {cfg_name} configuration has the backend's S-Log"
    rng = random.Random(f"slogckpt{seed}")
    nidx = cfg.get("slog_lpns", 256)
    lpns = sim.index_spread(rng, 24, cfg["num_lbas"], nidx // 4) if nidx > 256 else None
    dev = sim.SimDev(rng, p_slow=0.1, lpns=lpns)
    dev.random_ops(40)
    end = max(r.done for r in dev.reqs) + 1
    # the cut (after the writer's last checkpoint) whose recovery has the most LPNs with fragments
    best = None
    for i, cut in enumerate(rng.sample(range(dev.ckpt_time + 1, end + 1), min(8, end - dev.ckpt_time))):
        d = tmp_path / f"cand{i}"
        d.mkdir()
        rec = recover(dev.images(d, cut, "tail"), geo, cfg["num_tx"])
        if best is None or len(oracle_frags(rec)) > len(oracle_frags(best[2])):
            best = (cut, d, rec)
    cut, d, rec = best
    ofr = oracle_frags(rec)
    assert len(ofr) >= 2, f"seed {seed}: no cut with fragments on 2 LPNs ({len(ofr)})"
    exp = dev.expected(cut)
    zero = bytes(geo.page_bytes)
    model = {lpn: exp.get(lpn) or zero for lpn in dev.lpns}

    sysm = harness.System(tmp_path / "run", seed, cfg_name=cfg_name, template=d)
    assert sysm.start(), "boot cut"
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace")
    assert "recovery: slog: loaded lpgn" in boot, f"no SLOAD at the boot:\n{boot[-2000:]}"
    assert harness.fw_frags(harness.console_answer(sysm, "slog"))[1] == ofr, "the firmware's F after the recovery != the oracle's"
    read_all(sysm, model, "after the recovery")
    return sysm, geo, ofr, model, cut, rng


@pytest.mark.parametrize("cfg,seed", PARAMS)
def test_slog_ckpt_from_hw_index(tmp_path, cfg, seed):
    sysm, geo, ofr, model, cut, rng = boot_with_fragments(tmp_path, seed, cfg)
    zero = bytes(geo.page_bytes)
    # full pages over LPNs with fragments, a TRIM of another: the backend RELEASEs their F
    lpns = sorted(ofr)
    rng.shuffle(lpns)
    nw = max(1, len(lpns) // 2)
    written, trimmed = lpns[:nw], lpns[nw:nw + 1]
    for lpn in written:
        model[lpn] = rng.randbytes(geo.page_bytes)
        sysm.dev.write(lpn, model[lpn])
    for lpn in trimmed:
        sysm.dev.trim(lpn)
        model[lpn] = zero
    sysm.dev.flush()                                    # written back: the backend has RELEASEd their F
    rx0 = rx_counts(harness.console_answer(sysm, "slog"))
    out = harness.console_answer(sysm, "ckpt")
    assert re.search(r"ckpt: 0\b", out), f"ckpt: {out[-1000:]}"
    keep = {l: f for l, f in ofr.items() if l not in written + trimmed}
    text = harness.console_answer(sysm, "slog")
    f_ck = harness.fw_frags(text)[1]
    # the checkpoint waited (write-backs held) for no S-Log record being received before its drain
    # (architecture 11.7, ckpt.c): one checkpoint wait at least (housekeeping's checkpoints may add
    # more; GC's waits count apart), none failed
    rx1 = rx_counts(text)
    assert rx1[0] >= rx0[0] + 1 and rx1[2] == 0, (rx0, rx1)
    read_all(sysm, model, "after the checkpoint")
    sysm.stop()
    # power cycle: the recovery starts from that checkpoint (its S-Log section) and replays nothing of F
    assert sysm.start(), "boot cut"
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace")
    assert "recovery: checkpoint" in boot, boot[-2000:]
    f_pc = harness.fw_frags(harness.console_answer(sysm, "slog"))[1]
    read_all(sysm, model, "after the power cycle")
    sysm.stop()
    assert f_ck == keep, f"the firmware's F after the checkpoint: {f_ck}, the hardware's {keep}"
    assert f_pc == keep, f"F after the power cycle: {f_pc}, before it {keep}"
    assert not sysm.errors, sysm.errors
    print(f"seed {seed}: cut {cut}, {len(ofr)} LPNs with fragments ({sum(map(len, ofr.values()))} fragments), "
          f"{len(written)} written, {len(trimmed)} trimmed before the checkpoint")


def rx_counts(text: str) -> tuple[int, int, int]:
    """The console `slog` merge line's waits for no record being received: (the checkpoints' waits, polls,
    failed)."""
    m = re.search(r"rx_waits_ckpt (\d+) rx_polls (\d+) rx_fails (\d+)", text)
    assert m, text[-1000:]
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


CORE = harness.ROOT / "rtl/core/ats_ssd_core.sv"


@pytest.mark.skipif(".s_map_lpn(" not in CORE.read_text(),
                    reason="the core does not connect the backend's s_map_lpn (rtl/backend/README.md 'Transaction "
                           "commit'): a tx page of an LPN with fragments still reads them over it")
@pytest.mark.parametrize("cfg,seed", PARAMS)
def test_slog_tx_commit_releases(tmp_path, cfg, seed):
    """A transaction's full pages of LPNs with fragments (TX_BEGIN, WRITEs with the txid, TX_COMMIT):
    the COMMIT's applied mappings RELEASE their F in the backend (README "Transaction commit"); every
    LPN reads the model (t's pages whole), then after a checkpoint and a power cycle again."""
    sysm, geo, ofr, model, cut, rng = boot_with_fragments(tmp_path, seed, cfg)
    lpns = sorted(ofr)
    rng.shuffle(lpns)
    t = 3
    sysm.dev.tx_begin(t)
    for lpn in lpns[:max(1, len(lpns) // 2)]:
        model[lpn] = rng.randbytes(geo.page_bytes)
        sysm.dev.write(lpn, model[lpn], txid=t)
    c = sysm.dev.tx_commit(t)
    assert c.cpl.status == 0, f"TX_COMMIT: {c.cpl.status:#x}"
    sysm.dev.flush()
    read_all(sysm, model, "after the commit")
    out = harness.console_answer(sysm, "ckpt")
    assert re.search(r"ckpt: 0\b", out), f"ckpt: {out[-1000:]}"
    sysm.stop()
    assert sysm.start(), "boot cut"
    read_all(sysm, model, "after the power cycle")
    sysm.stop()
    assert not sysm.errors, sysm.errors


def _cut_in_section(tmp_path, monkeypatch, cfg, seed):
    """test_slog_ckpt_cut_in_section (ATS_LONG=1 only)."""
    monkeypatch.setenv("ATS_NAND_TRACE", "1")           # the simulators log every PROGRAM (the cut's place)
    sysm, geo, ofr, model, cut, rng = boot_with_fragments(tmp_path, seed, cfg)
    from atstb.recovery_oracle import DieImage, checkpoint_blocks
    ck_blocks = checkpoint_blocks(geo, DieImage(sysm.images[0], geo))
    # a quarter of the LPNs with fragments written whole (the backend RELEASEs their F), then FLUSH
    lpns = sorted(ofr)
    rng.shuffle(lpns)
    written = lpns[:len(lpns) // 4]
    for lpn in written:
        model[lpn] = rng.randbytes(geo.page_bytes)
        sysm.dev.write(lpn, model[lpn])
    sysm.dev.flush()
    keep = {l: f for l, f in ofr.items() if l not in written}
    # a checkpoint measured (its pages and their ends), then the same one again (nothing changed: the
    # same pages) cut in a page holding S-Log section words, drawn from the tail the section fills
    first = harness.ckpt_traced(sysm, ck_blocks)
    assert first["answer"] == 0 and first["ends"], first
    f_ck = harness.fw_frags(harness.console_answer(sysm, "slog"))[1]
    assert f_ck == keep, f"the firmware's F after the checkpoint: {f_ck}, the hardware's {keep}"
    j = harness.section_cut_page(rng, geo, len(first["ends"]), f_ck)
    assert j is not None, (first, f_ck)
    second = harness.ckpt_traced(sysm, ck_blocks, cut_page=j, rng=rng,
                                 cut_span=first["ends"][j] - first["ends"][j - 1])
    assert second["cut"], f"the cut aimed at checkpoint page {j} did not fire: {second}"
    sysm.stop()
    torn = harness.ckpt_torn(sysm.images, geo, second["block"])
    assert torn["in_section"], f"the cut was not inside the S-Log section: aimed at page {j}, {torn}"
    # the recovery: from the first checkpoint (the second is torn), its S-Log section is F; the
    # oracle's F on the cut images, the model's bytes on every LPN
    oracle = recover(sysm.images, geo, sysm.cfg["num_tx"])
    assert oracle_frags(oracle) == keep, f"the oracle's F {oracle_frags(oracle)} != {keep}"
    assert sysm.start(), "boot cut"
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace")
    assert "recovery: checkpoint" in boot, boot[-2000:]
    f_pc = harness.fw_frags(harness.console_answer(sysm, "slog"))[1]
    assert f_pc == oracle_frags(oracle), f"F after the cut: fw {f_pc}, oracle {oracle_frags(oracle)}"
    read_all(sysm, model, "after the cut inside the S-Log section")
    sysm.stop()
    # once more: from the checkpoint that recovery wrote
    again = recover(sysm.images, geo, sysm.cfg["num_tx"])
    assert oracle_frags(again) == keep, "the recovery's own checkpoint lost fragments"
    assert sysm.start(), "boot cut"
    read_all(sysm, model, "after a second power cycle")
    sysm.stop()
    assert not sysm.errors, sysm.errors
    print(f"{cfg} seed {seed}: cut at page {torn['done']} of {torn['n']} (section from page {torn['k0']}, "
          f"aimed at {j}), {len(keep)} LPNs with fragments ({sum(map(len, keep.values()))} fragments)")


if LONG:
    @pytest.mark.parametrize("cfg,seed", PARAMS)
    def test_slog_ckpt_cut_in_section(tmp_path, monkeypatch, cfg, seed):
        """A power cut while the firmware programs a page that holds its checkpoint's S-Log section
        (located from the NAND trace of the same checkpoint written just before; the torn checkpoint's
        pages read from the image show the place): the recovery from the checkpoint before it gives
        the recovery oracle's F and the model's bytes on every LPN, and so does a second power cycle."""
        _cut_in_section(tmp_path, monkeypatch, cfg, seed)
