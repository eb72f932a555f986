"""Independent plain-Python model of NAND flash contents (reference for the ats_nand_die tests).

Written from the design brief and ONFI, never from the die's code: a dict row -> page bytes
(page + spare) for pages whose content is known, a set of rows whose content is unknown (torn by a
power cut, failed program, failed or interrupted erase), and erased = absent = all 0xFF.
Also: the NAND presets of the design brief and the ONFI parameter-page CRC.
"""
from __future__ import annotations

import json

# Array times (ns) of the design brief's presets (read / program / erase). NVMeVirt's 970 PRO
# numbers give no erase time: 2000 us is our choice. Geometry is the tests' choice except DiffTx
# (4 KiB pages, 64 pages per block). `bus`: the interface timing set (atstb.onfi.MODE0 / FAST).
PRESETS = {
    "femu":     dict(T_R_NS=40_000, T_PROG_NS=200_000, T_BERS_NS=2_000_000),
    "nvmevirt": dict(T_R_NS=36_000, T_PROG_NS=185_000, T_BERS_NS=2_000_000),
    "mqsim":    dict(T_R_NS=75_000, T_PROG_NS=750_000, T_BERS_NS=3_800_000),
    "difftx":   dict(T_R_NS=25_000, T_PROG_NS=200_000, T_BERS_NS=1_500_000,
                     PAGE_BYTES=4096, PAGES_PER_BLOCK=64),
}


def onfi_crc16(data: bytes) -> int:
    """ONFI parameter page integrity CRC: polynomial 0x8005, initial value 0x4F4E, MSB first."""
    crc = 0x4F4E
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


class NandModel:
    def __init__(self, blocks: int, pages_per_block: int, page_bytes: int, spare_bytes: int):
        self.blocks = blocks
        self.ppb = pages_per_block
        self.page_bytes = page_bytes
        self.row_bytes = page_bytes + spare_bytes
        self.pages: dict[int, bytes] = {}
        self.unknown: set[int] = set()
        self.bad: set[int] = set()          # factory bad blocks (learned from the marks)
        self.next_page = [0] * blocks       # lowest page that may still be programmed in order

    # --- operations as the host saw them complete
    def erase(self, block: int, ok: bool) -> None:
        rows = range(block * self.ppb, (block + 1) * self.ppb)
        for r in rows:
            self.pages.pop(r, None)
            if ok:
                self.unknown.discard(r)
            else:
                self.unknown.add(r)
        self.next_page[block] = 0 if ok else self.ppb

    def program(self, row: int, data: bytes, col: int, ok: bool) -> None:
        """Program `data` at column `col` (the rest of the row 0xFF in the page register)."""
        reg = bytearray(b"\xff" * self.row_bytes)
        reg[col:col + len(data)] = data
        if row in self.unknown or not ok:
            self.unknown.add(row)
            self.pages.pop(row, None)
        else:
            old = self.pages.get(row, b"\xff" * self.row_bytes)
            self.pages[row] = bytes(a & b for a, b in zip(old, reg))
        b, p = divmod(row, self.ppb)
        self.next_page[b] = max(self.next_page[b], p + 1)

    def tear_page(self, row: int) -> None:
        self.pages.pop(row, None)
        self.unknown.add(row)
        b, p = divmod(row, self.ppb)
        self.next_page[b] = max(self.next_page[b], p + 1)

    def tear_block(self, block: int) -> None:
        self.erase(block, ok=False)

    # --- queries
    def known(self, row: int) -> bool:
        return row not in self.unknown

    def expected(self, row: int) -> bytes | None:
        """Content of the row, or None when it is unknown."""
        if row in self.unknown:
            return None
        return self.pages.get(row, b"\xff" * self.row_bytes)

    def is_erased(self, row: int) -> bool:
        return row not in self.unknown and row not in self.pages

    # --- persistence (the image test hands the model to a second simulation)
    def to_json(self) -> str:
        return json.dumps(dict(pages={str(k): v.hex() for k, v in self.pages.items()},
                               unknown=sorted(self.unknown), bad=sorted(self.bad),
                               next_page=self.next_page))

    def load_json(self, s: str) -> None:
        d = json.loads(s)
        self.pages = {int(k): bytes.fromhex(v) for k, v in d["pages"].items()}
        self.unknown = set(d["unknown"])
        self.bad = set(d["bad"])
        self.next_page = list(d["next_page"])
