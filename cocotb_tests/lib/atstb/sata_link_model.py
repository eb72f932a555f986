# SPDX-License-Identifier: Apache-2.0
"""SATA link layer in plain Python, written from the SATA 3.x specification (link layer chapter:
primitive encoding, CRC, scrambling, repeated-primitive suppression, the link state diagrams).

- `PRIM`: primitive dwords built from their 8b/10b character names (K28.3/K28.5 + three Dxx.y).
- `Scrambler`: the frame scrambler (LFSR x^16+x^15+x^13+x^4+1, all ones at SOF, bit-serial here).
- `crc32`: the frame CRC (polynomial 0x04C11DB7, seed 0x52325032, dwords MSB first).
- `encode_frame` / `decode_frame`: FIS dwords <-> the dwords between SOF and EOF.
- `HostLink`: a cycle-by-cycle *host-side* link layer (one dword in and one dword out per clock)
  that sends and receives FISes with faults injected on request: HOLD at chosen points, SYNC escape,
  bit flips, missing EOF, CONT + junk on its own repeated primitives, forced R_ERR, a lost SOF.
  The host wins collisions (it keeps X_RDY when it receives X_RDY), as the specification says; it
  raises X_RDY only while it receives SYNC (after its own SYNC escape the device's R_RDY may still be
  on the way, and would otherwise be taken as the answer to the next X_RDY).

Nothing here is derived from the RTL under rtl/sata; `cocotb_tests/ats_sata_link/test_sata_link_model.py`
checks the known-answer vectors and compares against LiteSATA's own migen implementation.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

K28_3 = 0x7C
K28_5 = 0xBC


def D(x: int, y: int) -> int:
    """The data byte of character Dx.y (x: low 5 bits, y: high 3 bits)."""
    return (y << 5) | x


def _prim(k: int, b1: int, b2: int, b3: int) -> int:
    """A primitive dword: the first character (on the wire first) in bits 7:0."""
    return k | (b1 << 8) | (b2 << 16) | (b3 << 24)


PRIM = {
    "ALIGN":   _prim(K28_5, D(10, 2), D(10, 2), D(27, 3)),
    "CONT":    _prim(K28_3, D(10, 5), D(25, 4), D(25, 4)),
    "DMAT":    _prim(K28_3, D(22, 1), D(22, 1), D(21, 5)),
    "EOF":     _prim(K28_3, D(21, 5), D(21, 6), D(21, 6)),
    "HOLD":    _prim(K28_3, D(10, 5), D(21, 6), D(21, 6)),
    "HOLDA":   _prim(K28_3, D(10, 5), D(21, 4), D(21, 4)),
    "PMACK":   _prim(K28_3, D(21, 4), D(21, 4), D(21, 4)),
    "PMNAK":   _prim(K28_3, D(21, 4), D(21, 7), D(21, 7)),
    "PMREQ_P": _prim(K28_3, D(21, 5), D(23, 0), D(23, 0)),
    "PMREQ_S": _prim(K28_3, D(21, 4), D(21, 3), D(21, 3)),
    "R_ERR":   _prim(K28_3, D(21, 5), D(22, 2), D(22, 2)),
    "R_IP":    _prim(K28_3, D(21, 5), D(21, 2), D(21, 2)),
    "R_OK":    _prim(K28_3, D(21, 5), D(21, 1), D(21, 1)),
    "R_RDY":   _prim(K28_3, D(21, 4), D(10, 2), D(10, 2)),
    "SOF":     _prim(K28_3, D(21, 5), D(23, 1), D(23, 1)),
    "SYNC":    _prim(K28_3, D(21, 4), D(21, 5), D(21, 5)),
    "WTRM":    _prim(K28_3, D(21, 5), D(24, 2), D(24, 2)),
    "X_RDY":   _prim(K28_3, D(21, 5), D(23, 2), D(23, 2)),
}
PRIM_NAME = {v: k for k, v in PRIM.items()}
CHARISK_PRIM = 0b0001

CRC_POLY = 0x04C11DB7
CRC_SEED = 0x52325032
SCR_POLY_TAPS = (16, 15, 13, 4)    # x^16 + x^15 + x^13 + x^4 + 1


def prim_name(data: int, charisk: int) -> str | None:
    """Name of a primitive dword, "?" for an unknown K dword, None for a data dword."""
    if charisk == 0:
        return None
    if charisk != CHARISK_PRIM:
        return "?"
    return PRIM_NAME.get(data, "?")


class Scrambler:
    """Frame scrambler, bit-serial: the LFSR shifts once per bit, 32 times per dword; the bit that
    leaves the top of the 16-bit register is the next scrambling bit (dword bit 0 first)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.lfsr = 0xFFFF

    def next(self) -> int:
        mask = 0
        for t in SCR_POLY_TAPS[1:]:
            mask |= 1 << t
        mask |= 1                         # the x^0 term
        mask &= 0xFFFF                    # x^15, x^13, x^4, 1 -> 0xA011
        word = 0
        for i in range(32):
            out = (self.lfsr >> 15) & 1
            word |= out << i
            self.lfsr = (self.lfsr << 1) & 0xFFFF
            if out:
                self.lfsr ^= mask
        return word


def crc32(dwords, seed: int = CRC_SEED) -> int:
    """CRC of a frame's dwords, each taken as a 32-bit number, most significant bit first."""
    crc = seed
    for d in dwords:
        crc ^= d & 0xFFFFFFFF
        for _ in range(32):
            crc = ((crc << 1) ^ CRC_POLY) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


def encode_frame(fis: list[int]) -> list[int]:
    """The data dwords sent between SOF and EOF: the FIS and its CRC, scrambled."""
    s = Scrambler()
    return [d ^ s.next() for d in list(fis) + [crc32(fis)]]


def decode_frame(words: list[int]) -> tuple[list[int], bool]:
    """(FIS, CRC good) from the data dwords received between SOF and EOF."""
    s = Scrambler()
    plain = [w ^ s.next() for w in words]
    if not plain:
        return [], False
    return plain[:-1], crc32(plain[:-1]) == plain[-1]


# ---------------------------------------------------------------------------------------------------
@dataclass
class TxFrame:
    """A FIS the host model sends, and the faults to apply to it."""
    fis: list[int]
    hold_at: dict = field(default_factory=dict)   # data index -> cycles of HOLD before that dword
    sync_at: int | None = None                    # escape (SYNC) instead of data dword i
    flip: tuple | None = None                     # (data index incl. the CRC at len(fis), xor mask)
    drop_eof: bool = False                        # WTRM without EOF
    result: str | None = None                     # "R_OK", "R_ERR", "SYNC" (device went idle), "ESC"


@dataclass
class RxFrame:
    """A frame the host model received."""
    fis: list[int]
    crc_ok: bool
    answer: str                                    # what the model answered: R_OK / R_ERR / ESC


class HostLink:
    """Host-side link layer, one `step()` per clock.

    step(rx_data, rx_charisk) takes the dword the device sent in this cycle and returns the dword
    the host sends in the next one. Transmit: `send(TxFrame)` queues a FIS. Receive options (set
    before or between frames): `rx_hold_p` (chance per cycle of starting a HOLD of 1..`rx_hold_max`
    cycles while receiving), `rx_escape_after` (send SYNC after that many data dwords of the next
    frame), `rx_force_err` (answer R_ERR to the next good frame), `ignore_sof` (miss the next SOF:
    keep R_RDY, as if the SOF had been lost on the wire). `use_cont`: the host sends its repeated
    primitives as P P CONT junk. `hold_react_max`: data dwords the host may still send after it
    receives HOLD (random, 0..max). Checks raise AssertionError (`hold_bound`: data dwords the
    device may still send after the host's HOLD goes out).
    """

    def __init__(self, rng: random.Random, use_cont: bool = True, hold_react_max: int = 4,
                 hold_bound: int = 20):
        self.rng = rng
        self.use_cont = use_cont
        self.hold_react_max = hold_react_max
        self.hold_bound = hold_bound
        self.txq: deque[TxFrame] = deque()
        self.sent: list[TxFrame] = []
        self.received: list[RxFrame] = []
        self.rx_hold_p = 0.0
        self.rx_hold_max = 8
        self.rx_escape_after: int | None = None
        self.rx_force_err = False
        self.ignore_sof = False
        self.pm_request = False                   # send PMREQ_P while idle (expects PMNAK)
        self.pmnak_seen = 0
        self.collisions = 0                       # X_RDY received while sending X_RDY
        self.log_order: list[str] = []            # "tx" / "rx" for each frame completed
        self.holds_sent = 0                       # HOLD runs the host started as receiver
        self.holds_seen = 0                       # HOLD runs the device started as receiver
        self.state = "IDLE"
        self.cycle = 0
        self.trace: deque = deque(maxlen=400)     # (cycle, state, received, sent), for failure reports
        # receive decoding (ALIGN removal, CONT)
        self._last_prim = "SYNC"
        self._in_cont = False
        # transmit output (CONT suppression)
        self._out_last = None
        self._out_count = 0
        self._junk = Scrambler()
        self._cur: TxFrame | None = None
        self._words: list[int] = []
        self._idx = 0
        self._hold_left = 0
        self._react = 0
        self._rx_words: list[int] = []
        self._rx_hold_left = 0
        self._rx_hold_run = 0                     # cycles the host has been sending HOLD
        self._rx_answer = ""
        self._dev_hold = False

    # ---- public -------------------------------------------------------------------------------
    def send(self, frame: TxFrame) -> None:
        self.txq.append(frame)

    @property
    def idle(self) -> bool:
        return self.state == "IDLE" and not self.txq

    # ---- receive decoding -------------------------------------------------------------------------
    def _decode(self, data: int, charisk: int):
        """("P", name) for a primitive in effect, ("D", dword) for a data dword, None for nothing."""
        name = prim_name(data, charisk)
        if name == "ALIGN":
            return None
        if name == "CONT":
            self._in_cont = True
            return ("P", self._last_prim)
        if name is not None:
            self._in_cont = False
            self._last_prim = name
            return ("P", name)
        if self._in_cont:                        # junk after CONT
            return ("P", self._last_prim)
        return ("D", data)

    # ---- transmit encoding ----------------------------------------------------------------------
    def _out_prim(self, name: str, force: bool = False) -> tuple[int, int]:
        if self.use_cont and not force and name == self._out_last and name not in ("SOF", "EOF"):
            self._out_count += 1
            if self._out_count == 2:
                return PRIM["CONT"], CHARISK_PRIM
            if self._out_count > 2:
                return self._junk.next(), 0
            return PRIM[name], CHARISK_PRIM
        self._out_last = name
        self._out_count = 0
        return PRIM[name], CHARISK_PRIM

    def _out_data(self, word: int) -> tuple[int, int]:
        if self._out_count >= 2:                 # in a CONT run: a primitive must end it first
            return None
        self._out_last = None
        self._out_count = 0
        return word, 0

    # ---- one clock ---------------------------------------------------------------------------------
    def step(self, rx_data: int, rx_charisk: int) -> tuple[int, int]:
        st = self.state
        out = self._step(rx_data, rx_charisk)
        self.trace.append((self.cycle, st, prim_name(rx_data, rx_charisk) or f"{rx_data:08x}",
                           prim_name(*out) or f"{out[0]:08x}"))
        return out

    def _step(self, rx_data: int, rx_charisk: int) -> tuple[int, int]:
        self.cycle += 1
        ev = self._decode(rx_data, rx_charisk)
        p = ev[1] if ev and ev[0] == "P" else None
        dat = ev[1] if ev and ev[0] == "D" else None
        st = self.state

        if p == "PMNAK":
            self.pmnak_seen += 1

        if st == "IDLE":
            if p == "X_RDY":
                self.state = "RX_RDY"
                return self._out_prim("R_RDY")
            if self.txq and p == "SYNC":         # only from an idle link: R_RDY seen right after an
                self._cur = self.txq.popleft()   # escape can be the receiver's, still in flight
                self.state = "TX_XRDY"
                return self._out_prim("X_RDY")
            if self.pm_request:
                return self._out_prim("PMREQ_P")
            return self._out_prim("SYNC")

        if st == "TX_XRDY":
            if p == "X_RDY":
                self.collisions += 1             # the host wins: keep X_RDY
            if p == "R_RDY":
                self.state = "TX_DATA"
                s = Scrambler()
                fr = self._cur
                self._words = [d ^ s.next() for d in fr.fis + [crc32(fr.fis)]]
                if fr.flip is not None and fr.flip[0] < len(self._words):
                    self._words[fr.flip[0]] ^= fr.flip[1]
                self._idx = 0
                self._hold_left = fr.hold_at.get(0, 0)
                self._react = -1
                return self._out_prim("SOF", force=True)
            return self._out_prim("X_RDY")

        if st in ("TX_DATA", "TX_RHOLD"):
            fr = self._cur
            if p == "SYNC":
                fr.result = "SYNC"
                return self._tx_done()
            if p == "HOLD":
                if not self._dev_hold:
                    self.holds_seen += 1
                self._dev_hold = True
                if self._react < 0:
                    self._react = self.rng.randint(0, self.hold_react_max)
            elif p is not None:
                self._dev_hold = False
                self._react = -1
            if st == "TX_RHOLD":
                if self._dev_hold:
                    return self._out_prim("HOLDA")
                self.state = "TX_DATA"
            if self._dev_hold:
                if self._react == 0:
                    self.state = "TX_RHOLD"
                    return self._out_prim("HOLDA")
                self._react -= 1
            if fr.sync_at is not None and self._idx == fr.sync_at:
                fr.result = "ESC"
                return self._tx_done()
            if self._hold_left > 0:              # the host has no data: HOLD
                self._hold_left -= 1
                return self._out_prim("HOLD")
            if self._idx < len(self._words):
                out = self._out_data(self._words[self._idx])
                if out is None:                  # end the CONT run of HOLD first
                    return self._out_prim(self._out_last, force=True)
                self._idx += 1
                self._hold_left = fr.hold_at.get(self._idx, 0)
                return out
            self.state = "TX_WAIT"
            if fr.drop_eof:
                return self._out_prim("WTRM")
            return self._out_prim("EOF", force=True)

        if st == "TX_WAIT":
            fr = self._cur
            if p in ("R_OK", "R_ERR", "SYNC"):
                fr.result = p
                return self._tx_done()
            return self._out_prim("WTRM")

        if st == "RX_RDY":
            if p == "SOF" and not self.ignore_sof:
                self.state = "RX_DATA"
                self._rx_words = []
                self._rx_hold_left = 0
                self._rx_hold_run = 0
                return self._out_prim("R_IP")
            if p == "SOF":
                self.ignore_sof = False          # lost: stay in R_RDY
                return self._out_prim("R_RDY")
            if p not in (None, "X_RDY"):
                self.state = "IDLE"
                return self._out_prim("SYNC")
            return self._out_prim("R_RDY")

        if st == "RX_DATA":
            if dat is not None:
                self._rx_words.append(dat)
                assert self._rx_hold_run <= self.hold_bound, (
                    f"device sent data after {self._rx_hold_run} cycles of the host's HOLD")
            if p == "SYNC":
                self.received.append(RxFrame(*decode_frame(self._rx_words), answer="SYNC"))
                self.state = "IDLE"
                return self._out_prim("SYNC")
            if p in ("EOF", "WTRM"):
                fis, ok = decode_frame(self._rx_words)
                ok = ok and p == "EOF"
                if ok and self.rx_force_err:
                    self.rx_force_err = False
                    self._rx_answer = "R_ERR"
                else:
                    self._rx_answer = "R_OK" if ok else "R_ERR"
                self.received.append(RxFrame(fis, ok, self._rx_answer))
                self.log_order.append("rx")
                self.state = "RX_DONE"
                return self._out_prim("R_IP")
            if self.rx_escape_after is not None and len(self._rx_words) >= self.rx_escape_after:
                self.rx_escape_after = None
                self.received.append(RxFrame(*decode_frame(self._rx_words), answer="ESC"))
                self.state = "IDLE"
                return self._out_prim("SYNC")
            if p == "HOLD":                      # the device has no data: HOLDA
                return self._out_prim("HOLDA")
            if self._rx_hold_left == 0 and self.rng.random() < self.rx_hold_p:
                self._rx_hold_left = self.rng.randint(1, self.rx_hold_max)
                self.holds_sent += 1
            if self._rx_hold_left > 0:
                self._rx_hold_left -= 1
                self._rx_hold_run += 1
                return self._out_prim("HOLD")
            self._rx_hold_run = 0
            return self._out_prim("R_IP")

        if st == "RX_DONE":
            if p == "SYNC":
                self.state = "IDLE"
                return self._out_prim("SYNC")
            return self._out_prim(self._rx_answer)

        raise AssertionError(f"host model in unknown state {st}")

    def _tx_done(self) -> tuple[int, int]:
        self.sent.append(self._cur)
        self.log_order.append("tx")
        self._cur = None
        self.state = "IDLE"
        self._dev_hold = False
        return self._out_prim("SYNC")
