# SPDX-License-Identifier: Apache-2.0
"""ext4 through the board SoC's UDP link (issue 38 item 6: "boot, format, host attach with ext4
through the UDP link"), in Verilator: the board SoC of test_board_soc.py (soc/boards/ecpix5.py's
Ecpix5SoC, the bitstream's RTL with only the PHYs replaced, its `BoardTB` bench and the UDP socket
model of the Ethernet PHY) and, as its host in its own process (ext4_client_run.py), the real host
stack: nbdkit with sw/host/atomssd/nbd_plugin.py in UDP mode (`addr=127.0.0.1:<the PHY model's
port>`) → nbdfuse → a loop device → ext4.

The cocotb test `ext4`: reset; the firmware initialises the DDR3, formats the blank dies and answers
IDENTIFY; the host attaches (the export's size from IDENTIFY: 2,048 LBAs of 4 KiB = 8 MiB on the
8-blocks-a-die build), runs mkfs.ext4 (4 KiB blocks, a 1,024-block journal: jbd2's minimum, so the
smallest file system that is still ext4 with a journal on 4 KiB LBAs; lazy inode tables and
journal, no discard: attach.py's options), mounts, writes a file tree with SHA-256 sums, syncs,
unmounts, runs `e2fsck -fn` (must be clean), mounts again and compares every file, unmounts and
detaches. The checks are the client's (its exit status); the bench logs the simulated cycle at which
each stage began, the cycles and CPU seconds in all, and writes them to
build/sim_board/board_ext4.json (with the client's wall seconds per stage and the link's counters).

Not in `make test` (millions of cycles at about 11,000 a CPU second): `ATS_BOARD_EXT4=1` runs it on
the short build (`ATS_BOARD_TIME_DIV`, default 10: the dies' array times / 10; `ATS_BOARD_BLOCKS`,
default 8 blocks a die), `nice -n 10` advised:

    ATS_BOARD_EXT4=1 nice -n 10 python -m pytest -s sim/board/test_board_ext4.py

Ran (b03fa15's plugin on 09426b6, the build of test_board_soc[slice]: ARRAY_TIME_DIV 10, 8 blocks a
die; the shared 2-core machine, load 5–6): passed, 4,734,322 cycles (63.1 ms simulated) in 412 CPU s
of the simulation (11,494 cycles a CPU second) + 4.7 CPU s of the host (nbdkit, nbdfuse, mkfs,
e2fsck), 610 s wall. Cycles by stage (from the bench's 20,000-cycle polls): boot and format 2,240,000
(the firmware's "ready (boot 1,964,349 cycles)"), attach 20,000, mkfs.ext4 360,000, mount + 6 files
(78,442 bytes) + sync 660,000, umount 120,000, e2fsck -fn 480,000 (clean), mount + compare 620,000,
umount 214,322. The link: 858 datagrams sent by the plugin, 129 retries (the first wait, 3 s of wall
time, is about 33,000 cycles here: a NAND read behind others takes longer; each retry found the
command running), no frame cut, no fault injected. With a broken plugin (split reads joined in
completion order, not request order) the same run fails: mkfs, e2fsck and the mounts pass, then
"d0/f3.bin differs after the remount" (10 min wall). With `ATS_BOARD_EXT4_FAULTS=0.02` (2 % of the
datagrams dropped and 2 % duplicated each way, delays up to 2,000 cycles: 55 dropped, 55 duplicated):
passed, 6,357,842 cycles, 543 CPU s of simulation + 9.9 CPU s of the host, 290 retries (each loss
costs the 3 s first wait, about 33,000 cycles: mkfs 1,040,000 cycles instead of 360,000).

Knobs: `ATS_BOARD_EXT4_FILES` (files in the tree, 6), `ATS_BOARD_EXT4_FAULTS` (drop, duplicate
rate on the link, 0), `ATS_BOARD_LIMIT` (cycles before the client is killed, 60 M), `ATS_SEED`.
Needs root, /dev/fuse, loop devices, nbdkit with its Python plugin, nbdfuse, e2fsprogs."""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import SimTimeoutError, Timer, with_timeout

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(HERE), str(ROOT / "sw" / "host")]

from socket_phy import SYS_PS  # noqa: E402
from test_board_soc import BOARD_OPT, BOARD_SPLIT, BoardTB, board_dir, board_key  # noqa: E402

OUT = ROOT / "build" / "sim_board"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@cocotb.test()
async def ext4(dut):
    """Boot, format, attach through nbdkit's UDP mode, mkfs.ext4, a file tree, e2fsck, remount."""
    seed = int(os.environ.get("ATS_SEED", "1"))
    f = float(os.environ.get("ATS_BOARD_EXT4_FAULTS", "0"))
    tb = BoardTB(dut, random.Random(seed), drop=f, dup=f, delay=2000 if f else 0)
    limit = int(float(os.environ.get("ATS_BOARD_LIMIT", "60e6")))
    work = OUT / "ext4"
    subprocess.run(["rm", "-rf", str(work)], check=False)
    work.mkdir(parents=True)
    stage_file = work / "stage"
    await tb.reset()
    c0, cpu0, t0 = tb.cycle, _cpu(), time.time()
    py = ROOT / ".venv" / "bin" / "python"
    log = open(work / "client.log", "w")
    phy = tb.phy
    tb.client_done.clear()
    phy.proc = subprocess.Popen([str(py if py.exists() else "python3"), str(HERE / "ext4_client_run.py"),
                                 "--port", str(phy.port), "--dir", str(work), "--stage-file", str(stage_file),
                                 "--files", os.environ.get("ATS_BOARD_EXT4_FILES", "6"), "--seed", str(seed)],
                                stdout=subprocess.PIPE, stderr=log, text=True)
    stages: dict[str, int] = {}

    async def watch():
        while True:
            s = stage_file.read_text() if stage_file.exists() else ""
            if s and s not in stages:
                stages[s] = tb.cycle
                dut._log.info("ext4: stage %s at cycle %d", s, tb.cycle)
            await Timer(20_000 * SYS_PS, unit="ps")

    w = cocotb.start_soon(watch())
    try:
        await with_timeout(tb.client_done.wait(), limit * SYS_PS, "ps")
    except SimTimeoutError:
        phy.proc.kill()
        raise AssertionError(f"ext4: the host not done within {limit} cycles (stages {stages}); "
                             f"console:\n{tb.console.decode(errors='replace')[-2000:]}") from None
    finally:
        w.cancel()
    out, _ = phy.proc.communicate()
    log.close()
    rc = phy.proc.returncode
    phy.proc = None
    lines = [x for x in out.strip().splitlines() if x.startswith("{")]
    res = json.loads(lines[-1]) if lines else {}
    order = list(stages)
    cyc = {s: (stages[order[i + 1]] if i + 1 < len(order) else tb.cycle) - stages[s] for i, s in enumerate(order)}
    fig = dict(res, rc=rc, stage_cycles=cyc, cycles=tb.cycle - c0, sim_us=round((tb.cycle - c0) * SYS_PS / 1e6, 1),
               sim_cpu_s=round(_cpu() - cpu0, 1), wall_s=round(time.time() - t0, 1),
               cycles_per_cpu_s=round((tb.cycle - c0) / max(_cpu() - cpu0, 1e-9)), phy=dict(phy.stats))
    (OUT / "board_ext4.json").write_text(json.dumps(fig, indent=1) + "\n")
    (OUT / "board_ext4_console.txt").write_text(tb.console.decode(errors="replace"))
    dut._log.info("ext4: %s", fig)
    assert rc == 0 and res.get("ok"), f"the host's checks failed (rc {rc}): {(work / 'client.log').read_text()[-3000:]}"
    assert res.get("fsck") == 0 and res.get("files_compared", 0) > 0, res


def test_board_ext4():
    if os.environ.get("ATS_BOARD_EXT4", "0") in ("", "0"):
        pytest.skip("ATS_BOARD_EXT4=1 runs ext4 through the board SoC (millions of cycles)")
    from atomssd.attach import missing
    lack = missing()
    if lack:
        pytest.skip("needs: " + ", ".join(lack))
    import gen_board
    from atstb.runner import run
    div = int(os.environ.get("ATS_BOARD_TIME_DIV", "10"))
    blocks = int(os.environ.get("ATS_BOARD_BLOCKS", "8"))
    bdir = board_dir(div, blocks)
    g = gen_board.generate(bdir, div, quiet=True, blocks=blocks)
    old = os.environ.get("ATS_VL_OPT")
    os.environ["ATS_VL_OPT"] = old or BOARD_OPT        # the build of test_board_soc (shared: same key)
    try:
        run(toplevel=gen_board.NAME, sources=g["sources"], test_module="test_board_ext4", test_dir=HERE,
            build_key=board_key(div, blocks), public={}, plusargs=[f"+firmware={g['firmware']}"],
            extra_env={"ATS_BOARD_DIR": str(bdir)}, results_name="test_board_ext4",
            build_args=["--output-split", str(BOARD_SPLIT), "--output-split-cfuncs", str(BOARD_SPLIT)],
            testcase=["ext4"])
    finally:
        if old is None:
            os.environ.pop("ATS_VL_OPT", None)
        else:
            os.environ["ATS_VL_OPT"] = old
