"""Reference model of the NAND page controller's page format and read verdicts (ats_nand_page).

Written from the page format of rtl/nand/README_page.md and docs/architecture.md section 6, not from
the RTL: CRC-32C by a byte table, metadata packing by field, BCH parity from `atstb.bch_model`.

Page layout (PAGE_BYTES data, then the spare):
  spare[0]            0xFF (factory bad-block mark position, never programmed)
  spare[1:20]         metadata: lpn (4, LE), txid, kind, seq (8, LE), epoch (4, LE), flags
  spare[20:24]        CRC-32C of data + spare[1:20], little endian
  spare[24:37]        BCH parity of the metadata codeword (489 zero bytes + spare[1:24])
  spare[37+13s:50+13s] BCH parity of data sector s
  the rest            0xFF
"""
from __future__ import annotations

from dataclasses import dataclass

from atstb.bch_model import BCH

K = 512
PAR = 13
META_B = 19
MCW_PAD = K - META_B - 4
SP_DPAR = 1 + META_B + 4 + PAR

ST_OK, ST_PFAIL, ST_EFAIL, ST_UNCORR, ST_BAD, ST_ERASED = 0, 1, 2, 3, 4, 5
OP_READ, OP_PROG, OP_ERASE, OP_RESET, OP_RDID, OP_PARAM, OP_PRAW, OP_RRAW = range(8)


def _crc32c_table() -> list[int]:
    tab = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        tab.append(c)
    return tab


_CRC_TAB = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TAB[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283   # the standard CRC-32C check value


@dataclass(frozen=True)
class Meta:
    lpn: int = 0xFFFFFFFF
    txid: int = 0xFF
    kind: int = 0xFF
    seq: int = (1 << 64) - 1
    epoch: int = 0xFFFFFFFF
    flags: int = 0xFF

    def to_bytes(self) -> bytes:
        """Spare bytes 1..19."""
        return (self.lpn.to_bytes(4, "little") + bytes([self.txid, self.kind]) +
                self.seq.to_bytes(8, "little") + self.epoch.to_bytes(4, "little") +
                bytes([self.flags]))

    def to_words(self, reserved: int = 0) -> list[int]:
        """The five metadata words of the s_wdata / m_rdata streams."""
        return [self.lpn, self.seq & 0xFFFFFFFF, self.seq >> 32, self.epoch,
                self.txid | (self.kind << 8) | (self.flags << 16) | ((reserved & 0xFF) << 24)]

    @staticmethod
    def from_words(w: list[int]) -> "Meta":
        return Meta(lpn=w[0], seq=w[1] | (w[2] << 32), epoch=w[3], txid=w[4] & 0xFF,
                    kind=(w[4] >> 8) & 0xFF, flags=(w[4] >> 16) & 0xFF)


ERASED_META = Meta()


def words_to_bytes(words: list[int]) -> bytes:
    return b"".join(w.to_bytes(4, "little") for w in words)


def bytes_to_words(b: bytes) -> list[int]:
    assert len(b) % 4 == 0
    return [int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b), 4)]


class PageFormat:
    """Builds the raw page + spare image the controller must program, and says where codewords are."""

    def __init__(self, page_bytes: int, spare_bytes: int):
        self.page_bytes = page_bytes
        self.spare_bytes = spare_bytes
        self.sect = page_bytes // K
        self.spare_used = SP_DPAR + self.sect * PAR
        assert self.spare_used <= spare_bytes
        self.bch = BCH(13, 8, K)

    def image(self, data: bytes, meta: Meta, crc_xor: int = 0) -> bytes:
        assert len(data) == self.page_bytes
        spare = bytearray(b"\xff" * self.spare_bytes)
        mb = meta.to_bytes()
        spare[1:20] = mb
        crc = crc32c(data + mb) ^ crc_xor
        spare[20:24] = crc.to_bytes(4, "little")
        spare[24:37] = self.bch.parity(bytes(MCW_PAD) + bytes(spare[1:24]))
        for s in range(self.sect):
            spare[SP_DPAR + PAR * s:SP_DPAR + PAR * (s + 1)] = self.bch.parity(data[K * s:K * (s + 1)])
        return bytes(data) + bytes(spare)

    def codeword_bits(self, cw: int) -> list[int]:
        """Bit positions (byte * 8 + bit) in the raw image of codeword cw (sect = the metadata one)."""
        if cw < self.sect:
            byts = list(range(K * cw, K * (cw + 1)))
            base = self.page_bytes + SP_DPAR + PAR * cw
            byts += list(range(base, base + PAR))
        else:
            byts = list(range(self.page_bytes + 1, self.page_bytes + 1 + META_B + 4 + PAR))
        return [b * 8 + i for b in byts for i in range(8)]


def flip(image: bytes, bits) -> bytes:
    b = bytearray(image)
    for p in bits:
        b[p // 8] ^= 1 << (p % 8)
    return bytes(b)
