# SPDX-License-Identifier: Apache-2.0
"""A killed simulator is a power cut: the NAND dies journal every change next to their images
(sim/nand/ats_nand_store.cpp), so SIGKILL at any instant loses nothing the array already holds.
Before the journal, a kill (a host attach whose host goes away, a crash) lost every NAND change
since the simulator started, acknowledged FLUSHes included.

Check: writes, a FLUSH (acknowledged: durable), more writes without one, then SIGKILL in the middle
of traffic, a restart on the same images (the firmware recovers), and a read-back: every LBA the
FLUSH covered has its flushed data (or a later write of it), every other written LBA one of the
values the host wrote to it or its value before (never anything else); then a second kill with no
traffic and a clean restart."""
from __future__ import annotations

import random
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from test_system import template  # noqa: E402,F401  (the session's formatted device)


def kill(sysm: "harness.System") -> None:
    hp = sysm.hp
    hp.proc.send_signal(signal.SIGKILL)
    hp.proc.wait(timeout=60)
    hp.sock.close()
    hp._err.close()
    sysm.hp = sysm.dev = None


def test_kill_is_a_power_cut(template, tmp_path):
    sysm = harness.System(tmp_path, 21, template=template)
    cfg = sysm.cfg
    pb, n = cfg["page_bytes"], cfg["num_lbas"]
    rng = random.Random(21)
    lbas = rng.sample(range(n), 48)
    before = {}
    assert sysm.start()
    dev = sysm.dev
    for lba in lbas:                       # what the formatted device holds
        before[lba] = dev.read(lba)
    history = {lba: [before[lba]] for lba in lbas}
    flushed = {}
    for i, lba in enumerate(lbas[:32]):
        data = bytes([i + 1]) * pb
        dev.write(lba, data)
        history[lba].append(data)
        flushed[lba] = data
    p = dev.flush()
    dev.drain(20_000_000)
    assert p.cpl.status == harness.ST["OK"]
    # more writes, not flushed, some over flushed LBAs; the kill lands while they run
    for i, lba in enumerate(rng.sample(lbas, 24)):
        data = bytes([0x80 | i]) * pb
        waited = 0
        while not dev.free_tags:
            dev.poll(200_000)
            waited += 200_000
            assert waited < harness.HANG_CYCLES, "no completion for a free tag"
        dev.submit(harness.OP["WRITE"], lba, 0, data)
        history[lba].append(data)
    dev.poll(20_000)
    assert len(dev.free_tags) < dev.qdepth, "no write in flight at the kill"
    kill(sysm)
    assert any(Path(str(im) + ".log").stat().st_size > 0 for im in sysm.images), "no journal written"

    assert sysm.start(), "the device did not come back after the kill"
    dev = sysm.dev
    for lba in lbas:
        got = dev.read(lba)
        assert got in history[lba], f"LBA {lba}: data never written to it"
        if lba in flushed:
            h = history[lba]
            assert h.index(got) >= h.index(flushed[lba]), f"LBA {lba}: flushed data lost after the kill"
    # a kill while idle, then a clean QUIT: the state survives both
    state = {lba: dev.read(lba) for lba in lbas}
    kill(sysm)
    assert sysm.start()
    assert {lba: sysm.dev.read(lba) for lba in lbas} == state
    info = sysm.stop()
    assert not sysm.errors, sysm.errors
    assert info.get("exit") == 0, info.get("log", "")[-2000:]
