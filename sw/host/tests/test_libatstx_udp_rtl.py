# SPDX-License-Identifier: Apache-2.0
"""libatstx's UDP transport against the RTL: `atstx_script --addr udp:...` as the host of the board's
host link in simulation (sim/board/test_board_hostlink.py's bench: LiteEth's MAC / ARP / IP / UDP and
`ats_udp_host` as the ECPIX-5 SoC builds them, in Verilator, behind the UDP socket model of the PHY
with seeded drops, duplicates and delays; its Python core model behind the block).

The script (random one-page WRITE, READ, trim, FLUSH, Range Flush, a write and a read past the end,
raw descriptors: a reserved opcode, the link's BAD_FIELD) is generated here with the answers of the
test's own dict, fed to the C program at once, and its answer lines compared when it exits; the
core model counts the descriptors it took (each command exactly once). The bench's IDENTIFY words
are replaced by a geometry (the library's open reads page_bytes, num_lbas, num_tx, tx_entries).
Opt-in (ATS_LIBATSTX_RTL=1): about 10 CPU s, plus its own Verilator build
(build/sim/board_hostlink/libatstx, about 25 CPU s cold). The host uses one slot, so every command
follows the previous one in its slot and must ignore its late duplicates.
ATS_LIBATSTX_BIN=<atstx_script> runs another build of the program (mutant checks).
"""
from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import cocotb
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BOARD = ROOT / "sim" / "board"
sys.path[:0] = [str(ROOT / "cocotb_tests" / "lib"), str(BOARD)]

import test_board_hostlink as hl  # noqa: E402

OUT = ROOT / "build" / "host" / "c"
PAGE, NLBA, NSLOT, SLOT_BYTES = hl.PAGE, hl.NLBA, hl.NSLOT, hl.SLOT_BYTES
IDENT = struct.pack("<16I", 0x41545344, 1, 1, 1, 2, 64, PAGE, 0, NLBA, 1, 1, NSLOT, 8, 1, 0, 0) + bytes(448)
SC_LBA_RANGE, LINK_BAD_FIELD = 0x0080, -10105


class Core(hl.CoreModel):
    """The bench's core model with an IDENTIFY answer the library can open."""

    async def _write(self, addr: int, data: bytes):
        if data[:8] == struct.pack("<II", 0x41545344, 0x01010101):
            data = IDENT
        await super()._write(addr, data)


def script(rng: random.Random, n: int) -> tuple[list[str], list[str], int]:
    """Lines, the answers the device must give, and the descriptors they make (IDENTIFY at open,
    FLUSH at close included)."""
    ref: dict[int, bytes] = {}
    lines, want, descs = [], [], 2
    for _ in range(n):
        k = rng.random()
        lba = rng.randrange(NLBA)
        if k < 0.4:
            data = rng.randbytes(PAGE)
            lines.append(f"w {lba} 1 {rng.choice([0, 1, 2])} {data.hex()}")
            want.append("st 0")
            ref[lba] = data
        elif k < 0.75:
            lines.append(f"r {lba} 1")
            want.append(f"st 0 {ref.get(lba, bytes(PAGE)).hex()}")
        elif k < 0.83:
            lines.append(f"trim {lba} 1")
            want.append("st 0")
            ref.pop(lba, None)
        elif k < 0.88:
            lines.append("f")
            want.append("st 0")
        elif k < 0.93:
            lines.append(f"rf {lba} 2 {rng.randrange(NLBA)} 1")
            want.append("st 0")
        else:
            c = rng.randrange(4)
            lines.append([f"w {NLBA} 1 0 {bytes(PAGE).hex()}", f"r {NLBA} 1", "udp 12 0 0 0 0 0 0",
                          "udp 16 0 0 0 0 0 0"][c])
            want.append([f"st {SC_LBA_RANGE}", f"st {SC_LBA_RANGE}", "st 1 result 0", f"st {LINK_BAD_FIELD} result 0"][c])
            descs -= c == 3                               # refused by the link: never reaches the core
        descs += 1
    for lba in sorted(set(ref) | {0, NLBA - 1}):          # what was written read back at the end
        lines.append(f"r {lba} 1")
        want.append(f"st 0 {ref.get(lba, bytes(PAGE)).hex()}")
        descs += 1
    return lines, want + ["close 0"], descs


@cocotb.test()
async def libatstx_mix(dut):
    seed = int(os.environ.get("ATS_SEED", "5"))
    hl.CoreModel = Core                                    # this simulation process only
    tb = hl.TB(dut, random.Random(seed), drop=0.05, dup=0.15, delay=3000)
    await tb.reset()
    lines, want, descs = script(random.Random(seed), 24)
    # one slot: every command follows the previous one in its slot, whose late duplicates it must ignore
    got, cyc = await run_script(dut, tb, lines, 1, "mix")
    dut._log.info("libatstx over the RTL link: %d lines, %d cycles, %d descriptors, phy %s", len(got),
                  cyc, tb.core.descriptors, dict(tb.phy.stats))
    for j, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"line {j} ({lines[j][:30] if j < len(lines) else 'close'}): got {g[:60]}, want {w[:60]}"
    assert len(got) == len(want), (len(got), len(want))
    assert tb.core.descriptors == descs, (tb.core.descriptors, descs)      # each command exactly once
    assert tb.phy.stats["dropped"] > 0 and tb.phy.stats["duplicated"] > 0, tb.phy.stats
    assert int(dut.stray_cpls.value) == 0


async def run_script(dut, tb, lines: list[str], nslot: int, tag: str) -> tuple[list[str], int]:
    """The C program on `lines` until it exits; its answer lines and the system cycles it took (the
    PHY model stops the simulation while the device idles waiting for the host: host time is free)."""
    work = Path(os.environ.get("ATS_LIBATSTX_RTL_DIR", ROOT / "build" / "sim_board" / "libatstx"))
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{tag}.txt").write_text("\n".join(lines) + "\n")
    addr = (f"udp:127.0.0.1:{tb.phy.port},nslot={nslot},slot_bytes={SLOT_BYTES},timeout_ms=500,"
            "max_timeout_ms=4000,retries=12")
    with open(work / f"{tag}.txt") as fin, open(work / f"{tag}.out", "w") as fout:
        tb.client_done.clear()
        exe = os.environ.get("ATS_LIBATSTX_BIN", str(OUT / "atstx_script"))   # another build (mutant checks)
        tb.phy.proc = subprocess.Popen([exe, "--addr", addr], stdin=fin, stdout=fout)
        c0 = tb.cycle
        await tb.client_done.wait()
        tb.phy.proc.wait()
    return (work / f"{tag}.out").read_text().splitlines(), tb.cycle - c0


@cocotb.test()
async def libatstx_qd1_rate(dut):
    """No faults: 32 one-page WRITEs then their READs, one command at a time (the library's queue
    depth): MB/s of data in simulated time at 75 MHz, each direction."""
    hl.CoreModel = Core
    tb = hl.TB(dut, random.Random(7), pause=0)
    await tb.reset()
    rng = random.Random(7)
    data = [rng.randbytes(PAGE) for _ in range(32)]
    out = {}
    for mode in ("w", "r"):
        lines = [f"w {i} 1 0 {d.hex()}" if mode == "w" else f"r {i} 1" for i, d in enumerate(data)]
        got, cyc = await run_script(dut, tb, lines, NSLOT, f"rate_{mode}")
        want = ["st 0" if mode == "w" else f"st 0 {d.hex()}" for d in data]
        assert got[:32] == want and got[32] == "close 0", got[:2]
        out[mode] = round(32 * PAGE / (cyc / hl.SYS_HZ) / 1e6, 1)
        dut._log.info("qd1 %s: %d commands (and IDENTIFY, FLUSH) in %d cycles: %.1f MB/s", mode, 32, cyc, out[mode])
    assert int(dut.stray_cpls.value) == 0


@pytest.mark.skipif(os.environ.get("ATS_LIBATSTX_RTL") != "1", reason="ATS_LIBATSTX_RTL=1 runs it (~10 CPU s, "
                    "its own Verilator build ~25 CPU s cold)")
def test_libatstx_on_rtl_link():
    import fcntl
    from atstb.runner import run
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / ".build.lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-j1", "-C", str(ROOT / "sw/host/c")], check=True)
    run(toplevel="board_hostlink", sources=hl._build_sources(), test_module="test_libatstx_udp_rtl", test_dir=HERE,
        build_key="libatstx", public={"ats_udp_host": ["s_udp_valid", "s_udp_ready", "s_udp_last", "s_udp_data", "rx_q",
                                                       "rq_cnt_q", "tx_q", "s_hwr_valid", "s_hwr_ready"]},
        testcase=os.environ.get("ATS_LIBATSTX_RTL_CASES", "libatstx_mix").split(","))
