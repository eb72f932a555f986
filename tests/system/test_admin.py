# SPDX-License-Identifier: Apache-2.0
"""IDENTIFY, GET_LOG and FEATURE through the whole SoC (docs/architecture.md sections 1.1, 1.2): the answers
against the configuration the SoC was built from (build/soc/sim/config.json) and against the
counts the host itself keeps (pages it wrote, pages it read back, recoveries it caused), with admin
commands interleaved in random traffic at full queue depth, across a power cut. This build has no
open log page (`sim`: no S-Log), so FEATURE answers BAD_FIELD with result 0 for every FID, SEAL_TIME
included (its OK path: tests/system/test_slog_device.py `pk-*` and test_feature_seal_time below)."""
from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from test_system import template  # noqa: E402,F401  (the session's formatted device)

sys.path.insert(0, str(harness.ROOT / "sw" / "host"))
from atomssd.device import LOG_FIELDS, decode_identify, decode_log  # noqa: E402


def test_identify_get_log(template, tmp_path):
    sysm = harness.System(tmp_path, 5, template=template)
    assert sysm.start()
    cfg, dev = sysm.cfg, sysm.dev
    idn = dev.identify()
    exp = dict(version=1, num_chan=cfg["num_chan"], ways=cfg["ways"], blocks=cfg["blocks"],
               pages_per_block=cfg["pages_per_block"], page_bytes=cfg["page_bytes"],
               spare_bytes=cfg["spare_bytes"], num_lbas=cfg["num_lbas"], num_tx=cfg["num_tx"],
               tx_entries=cfg["tx_entries"], qdepth=cfg["qdepth"], rflush_ranges=8, checkpoint_version=2,
               factory_bad=0, bad_blocks=0)
    assert {k: idn[k] for k in exp} == exp
    log0 = dev.get_log()
    assert log0["recoveries"] == 1 and log0["sys_clk_hz"] == cfg["sys_clk_hz"]
    assert log0["host_bytes"] == log0["host_pages"] * cfg["page_bytes"]
    dev.done.clear()

    # random writes and reads at full queue depth with admin commands between them: every command
    # completes, the admin answers are whole and the counters move by what the host did
    rng = random.Random(11)
    pb, wrote, admins = cfg["page_bytes"], 0, []
    for i in range(120):
        while not dev.free_tags:
            dev.poll(200_000)
        r = rng.random()
        if r < 0.03:
            admins.append(dev.submit(harness.OP["FEATURE"], lba=0xC0, nlb=rng.randint(0, 1), aux=rng.getrandbits(16),
                                     kind="adm"))
        elif r < 0.1:
            admins.append(dev.submit(harness.OP["IDENTIFY"] if r < 0.065 else harness.OP["GET_LOG"], kind="adm"))
        elif r < 0.7:
            lba = rng.randrange(cfg["num_lbas"])
            dev.submit(harness.OP["WRITE"], lba, 0, bytes([i & 0xFF]) * pb)
            wrote += 1
        else:
            dev.submit(harness.OP["READ"], rng.randrange(cfg["num_lbas"]))
    dev.drain(50_000_000)
    assert admins, "no admin command in the mix"
    seen = 0
    for p in dev.done:
        if p.op == harness.OP["FEATURE"]:
            assert (p.cpl.status, p.cpl.result) == (harness.ST["BAD_FIELD"], 0), f"FEATURE: {p.cpl}"
            seen += 1
            continue
        assert p.cpl.status == harness.ST["OK"], f"op {p.op} tag {p.tag}: status {p.cpl.status:#x}"
        if p.op == harness.OP["IDENTIFY"]:
            assert p.cpl.result == 64 and decode_identify(p.data)["num_lbas"] == cfg["num_lbas"]
            assert p.data[64:] == bytes(512 - 64), "IDENTIFY: bytes past the fields not 0"
            seen += 1
        elif p.op == harness.OP["GET_LOG"]:
            n = 8 * len(LOG_FIELDS)                    # 256 bytes: 32 counters
            assert p.cpl.result == n and p.data[n:] == bytes(512 - n)
            lg = decode_log(p.data)
            assert lg["no_space"] == 0 and lg["ckpt_fail"] == 0 and lg["shutdowns"] == 0
            assert log0["host_pages"] <= lg["host_pages"] <= log0["host_pages"] + wrote
            seen += 1
    assert seen == len(admins)
    dev.done.clear()
    # FEATURE's malformed forms and unknown FIDs, one at a time: BAD_FIELD, result 0
    for fid, nlb, aux in ((0xC0, 0, 0), (0xC0, 1, 100), (0xC1, 0, 0), (0xFF, 1, 1), (0, 0, 0),
                          ((1 << 40) | 0xC0, 0, 0), (0xC0, 2, 0), (0xC0, 0xFFFF, 0)):
        p = dev.wait(dev.submit(harness.OP["FEATURE"], lba=fid, nlb=nlb, aux=aux))
        assert (p.cpl.status, p.cpl.result) == (harness.ST["BAD_FIELD"], 0), f"FEATURE {fid:#x}/{nlb}: {p.cpl}"
    dev.done.clear()
    log1 = dev.get_log()
    assert log1["host_pages"] == log0["host_pages"] + wrote
    assert log1["cycles"] > log0["cycles"]

    # a FLUSH makes every page durable: NAND programs cover the host pages (no coalescing here is
    # assumed: at least one program per distinct page still in the buffer, at most the writes)
    dev.flush()
    log2 = dev.get_log()
    assert log2["nand_programs"] >= log1["nand_programs"]
    assert log2["wa_x1000"] == (log2["nand_programs"] * 1000 // log2["host_pages"] if log2["host_pages"] else 0)

    # power cut, restart: the firmware's counters start again and count this recovery
    sysm.stop()
    assert sysm.start()
    log3 = sysm.dev.get_log()
    assert log3["recoveries"] == 1 and log3["recovery_pages"] > 0 and log3["recovery_cycles"] > 0
    assert log3["checkpoints"] >= 1
    sysm.stop()
    assert not sysm.errors, sysm.errors
