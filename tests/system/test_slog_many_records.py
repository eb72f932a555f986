# SPDX-License-Identifier: Apache-2.0
"""The firmware's recovery of an active log with more S-Log records than it used to parse (128:
`recovery failed: -3`, the device did not come up; found by B5, bench/recovery --slog-active 192).
sw/firmware/README.md "S-Log", docs/persistence.md §10.5: a recovery keeps SLOG_PG log pages and parses
as many records (every record starts at a log page); the checkpoint policy keeps the active log's log
pages below that (ftl/policy.c, tested in sw/firmware/tests/test_policy.py).

The image is bench/recovery/slog_points.py's log sweep (a): 64 LPNs written, a checkpoint, then
N_ACTIVE one-fragment S-Log records (each its own log page), written by the reference writer
(tests/system/slog_sim.py) on the `sim_slog` geometry; a cut after the last program. The real firmware
boots it; test_slog_fw.boot_and_check compares its F and next LPGN with the recovery oracle's
(cocotb_tests/lib/atstb/recovery_oracle.py), the oracle's base + F with the writer's own state, and
every LPN read through the host port (the backend merges the fragments SLOAD gave it) with both. Then
a second boot from the checkpoint the firmware wrote after its recovery, same checks.
ATS_SLOG_MANY=<n> sets N_ACTIVE (default 192; at most 4 fragments on each of 64 LPNs: 256).

test_slog_device_log_pages_checkpoint: the device's own S-Log (DIFFWRITE + TX_COMMIT, one record and
log page each) on a formatted device, 64 full pages then N_DEV = 220 one-fragment transactions: 505
requests, below the request-count rule (LOG_CKPT = 512), so only the rule by log pages (a checkpoint at
SLOG_PG / 2 = 128) keeps the active log short. Power off, boot: the device comes up and every LPN reads
the plain-Python model's bytes. The old firmware: `recovery failed: -3` (220 records)."""
from __future__ import annotations

import importlib.util
import random
import os
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from atomssd.device import OP, ST  # noqa: E402
from atstb.recovery_oracle import recover  # noqa: E402

CFG = "sim_slog"
N_ACTIVE = int(os.environ.get("ATS_SLOG_MANY", "192"))
N_DEV = 220


def _load(name: str, path: Path):
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    return mod


def test_slog_many_records_recover(tmp_path):
    points = _load("ats_b5_slog_points", ROOT / "bench/recovery/slog_points.py")
    tfw = _load("ats_test_slog_fw", HERE / "test_slog_fw.py")
    _, _, cfg = harness.build(CFG)
    dev, cut = points.build_images(tmp_path / "template", "log", N_ACTIVE, 0, 1)
    geo = dev.geo
    rec = recover(sorted((tmp_path / "template").glob("die*.img")), geo, cfg["num_tx"])
    # the image is what the test says: N_ACTIVE records after the gap, more than the old limit of 128
    assert rec.slog_commits >= N_ACTIVE or rec.slog_after_gap >= N_ACTIVE, (rec.slog_commits, rec.slog_after_gap)
    assert sum(len(f) for f in rec.frags.values()) == N_ACTIVE
    sysm = harness.System(tmp_path / "run", 1, cfg_name=CFG, template=tmp_path / "template")
    sysm.boot_limit = 40_000_000      # the recovery takes 12.7 M cycles (the old firmware: `recovery failed: -3`)
    st = tfw.boot_and_check(sysm, geo, rec, dev, cut, f"{N_ACTIVE} S-Log records")
    assert st["log_pages"] == N_ACTIVE, st
    # the firmware's own checkpoint (version 3: F names the N_ACTIVE fragments) boots again
    again = recover(sysm.images, geo, cfg["num_tx"])
    assert again.mapping == rec.mapping and tfw.oracle_frags(again) == tfw.oracle_frags(rec)
    tfw.boot_and_check(sysm, geo, again, dev, cut, f"{N_ACTIVE} S-Log records (second boot)")
    shutil.rmtree(sysm.dir, ignore_errors=True)


def test_slog_device_log_pages_checkpoint(tmp_path):
    tpl = harness.format_template(tmp_path / "tpl", CFG)
    sysm = harness.System(tmp_path / "run", 2, cfg_name=CFG, template=tpl)
    sysm.boot_limit = 40_000_000
    assert sysm.start()
    dev, pb, rng = sysm.dev, sysm.cfg["page_bytes"], random.Random("slog-many-dev")

    def wait(tag):
        while tag in dev.inflight:
            dev.poll(rng.choice([5_000, 50_000]))
        return next(p for p in reversed(dev.done) if p.tag == tag).cpl.status

    model = {}
    for lpn in range(64):
        model[lpn] = bytearray(rng.randbytes(pb))
        while not dev.free_tags:
            dev.poll(50_000)
        dev.submit(OP["WRITE"], lpn, 0, bytes(model[lpn]), 0, 0)
    dev.drain(harness.HANG_CYCLES)
    assert dev.flush().cpl.status == ST["OK"]
    for i in range(N_DEV):
        lpn, n = rng.randrange(64), 4 * rng.randint(1, 8)
        off = 4 * rng.randrange(0, (pb - n) // 4 + 1)
        data = rng.randbytes(n)
        assert wait(dev.submit(OP["DIFFWRITE"], lpn, 0, data, 1, 0, aux=off | n << 16)) == ST["OK"], i
        assert wait(dev.submit(OP["TX_COMMIT"], 0, 0, None, 1, 0)) == ST["OK"], i
        model[lpn][off:off + n] = data
    st = harness.parse_fw_stats(sysm.console("stats"))
    # the format's and the boot's checkpoints are on the template; this boot's recovery wrote one:
    # a second one here is the rule by log pages (505 requests: the request-count rule did not fire)
    assert st.get("checkpoints", 0) >= 2 and st.get("ckpt_fail", 1) == 0, st
    sysm.stop()                                        # power off after every command completed
    assert sysm.start()
    boot = sysm.hp.uart[:sysm.uart_mark].decode(errors="replace").split("atomssd firmware")[-1]
    m = [int(x) for x in re.findall(r"recovery: slog: (\d+) log pages", boot)]
    assert m and m[0] < 128, boot[-1500:]
    bad = [lpn for lpn in range(64) if sysm.dev.read(lpn) != bytes(model[lpn])]
    sysm.stop()
    assert not bad, f"LPNs read other bytes than the model: {bad[:10]}"
