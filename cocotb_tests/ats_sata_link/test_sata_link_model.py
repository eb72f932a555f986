# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the plain-Python SATA link model (cocotb_tests/lib/atstb/sata_link_model.py):
known-answer vectors from the SATA specification, agreement with LiteSATA's own implementation
(its primitive table, and its migen CRC and scrambler run in migen's simulator), and frame
round trips. No HDL simulator needed."""
from __future__ import annotations

import random

import pytest

from atstb.sata_link_model import CRC_SEED, PRIM, Scrambler, crc32, decode_frame, encode_frame, prim_name


def test_scrambler_known_answer():
    # SATA specification, scrambler example: the first dwords after SOF
    s = Scrambler()
    assert [s.next() for _ in range(4)] == [0xC2D2768D, 0x1F26B368, 0xA508436C, 0x3452D354]


def test_scrambler_period():
    # the 16-bit LFSR is maximal: its state returns to all ones after 65535 shifts, not before
    lfsr, period = 0xFFFF, 0
    while True:
        out = lfsr >> 15
        lfsr = ((lfsr << 1) & 0xFFFF) ^ (0xA011 if out else 0)
        period += 1
        if lfsr == 0xFFFF:
            break
    assert period == 65535


def test_crc_residue():
    rng = random.Random(5)
    for n in (1, 2, 5, 100, 2048):
        fis = [rng.getrandbits(32) for _ in range(n)]
        assert crc32(fis + [crc32(fis)]) == 0
    assert crc32([]) == CRC_SEED


def test_primitives_match_litesata():
    pytest.importorskip("litesata")
    from litesata.common import primitives
    # LiteSATA also lists "ALIGN_N" (K28.5 D21.5 D21.5 D27.3), a pattern of its PHY, not a primitive
    common = [n for n in primitives if n != "ALIGN_N"]
    assert len(common) == 13
    for name in common:
        assert PRIM[name] == primitives[name], name
    assert prim_name(PRIM["SYNC"], 1) == "SYNC" and prim_name(0x12345678, 0) is None


def _run_migen(dut, gen):
    from migen.sim import run_simulation
    run_simulation(dut, gen)


def test_crc_matches_litesata():
    pytest.importorskip("litesata")
    from litesata.core.link import LiteSATACRC
    rng = random.Random(7)
    vectors = [[0x00308027, 0xE1234567, 0, 0, 0]] + [[rng.getrandbits(32) for _ in range(rng.randint(1, 40))]
                                                     for _ in range(8)]
    for data in vectors:
        crc = LiteSATACRC()
        out = []

        def gen():
            yield crc.ce.eq(1)
            for d in data:
                yield crc.data.eq(d)
                yield
            yield crc.ce.eq(0)
            yield
            out.append((yield crc.value))
        _run_migen(crc, gen())
        assert out[0] == crc32(data), (hex(out[0]), hex(crc32(data)))


def test_scrambler_matches_litesata():
    pytest.importorskip("litesata")
    from litesata.core.link import Scrambler as LsScrambler
    scr = LsScrambler()
    out = []

    def gen():
        yield scr.ce.eq(1)
        yield                          # a write takes effect at the next clock
        for _ in range(300):
            out.append((yield scr.value))
            yield
    _run_migen(scr, gen())
    s = Scrambler()
    ref = [s.next() for _ in range(300)]
    assert out == ref[:300], [hex(x) for x in out[:4]]


def test_frame_round_trip_and_corruption():
    rng = random.Random(11)
    for n in (1, 3, 64, 2048):
        fis = [rng.getrandbits(32) for _ in range(n)]
        words = encode_frame(fis)
        assert len(words) == n + 1
        assert decode_frame(words) == (fis, True)
        bad = list(words)
        i = rng.randrange(len(bad))
        bad[i] ^= 1 << rng.randrange(32)
        assert decode_frame(bad)[1] is False
