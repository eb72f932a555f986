"""Independent plain-Python reference of the atomssd sector BCH code (rtl/nand/README_ecc.md).

Written from the textbook math (GF(2^m) log/antilog tables, cyclotomic cosets and minimal
polynomials, systematic encoding by polynomial division, syndromes by direct evaluation, the
classical Berlekamp-Massey algorithm *with* inversion over all 2t steps, Chien search by brute-force
evaluation at every position), not from the RTL (which uses an LFSR encoder, byte-parallel Horner
syndromes, the inversionless binary BM over t steps and an 8-position-a-cycle Chien search).

Bit order (shared contract with the RTL): a codeword is K data bytes followed by P = m*t/8 parity
bytes; inside a byte bit 7 comes first. The first bit sent is the coefficient of x^(n-1), n = 8*(K+P),
the last parity bit is the coefficient of x^0, i.e. `int.from_bytes(codeword, "big")` is c(x).

Decoder result semantics (what the RTL must reproduce bit for bit):
  * S = 0                               -> data unchanged, corrected 0, ok
  * BM length L > t, or deg(Lambda) != L -> data unchanged, corrected 0, UNCORRECTABLE
  * otherwise every position p in 0..n-1 with Lambda(alpha^-p) = 0 is a root; every data bit at a
    root is flipped; if #roots == L -> corrected = #roots, ok; else corrected 0, UNCORRECTABLE (the
    data then carries the flips of the roots that were found, and must be discarded by the user).
"""
from __future__ import annotations

from dataclasses import dataclass

PRIM_POLY = {13: 0x201B, 14: 0x4443}   # x^13+x^4+x^3+x+1, x^14+x^10+x^6+x+1 (primitive)


class GF2m:
    """GF(2^m) with log/antilog tables built from a primitive polynomial."""

    def __init__(self, m: int, prim: int | None = None):
        self.m = m
        self.prim = prim if prim is not None else PRIM_POLY[m]
        self.q = (1 << m) - 1                  # multiplicative order
        self.exp = [0] * (2 * self.q)
        self.log = [-1] * (1 << m)
        x = 1
        for i in range(self.q):
            if self.log[x] != -1:
                raise ValueError(f"polynomial {self.prim:#x} is not primitive")
            self.exp[i] = x
            self.log[x] = i
            x <<= 1
            if x >> m:
                x ^= self.prim
        if x != 1:
            raise ValueError(f"polynomial {self.prim:#x} is not primitive")
        for i in range(self.q, 2 * self.q):
            self.exp[i] = self.exp[i - self.q]

    def mul(self, a: int, b: int) -> int:
        if a == 0 or b == 0:
            return 0
        return self.exp[self.log[a] + self.log[b]]

    def div(self, a: int, b: int) -> int:
        if b == 0:
            raise ZeroDivisionError
        if a == 0:
            return 0
        return self.exp[(self.log[a] - self.log[b]) % self.q]

    def alpha(self, e: int) -> int:
        return self.exp[e % self.q]


def clmul(a: int, b: int) -> int:
    """Product of two GF(2)[x] polynomials held as ints."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        b >>= 1
    return r


def clmod(a: int, g: int) -> int:
    """a mod g in GF(2)[x]."""
    dg = g.bit_length() - 1
    while a and a.bit_length() - 1 >= dg:
        a ^= g << (a.bit_length() - 1 - dg)
    return a


@dataclass
class DecodeResult:
    data: bytes
    corrected: int
    uncorrectable: bool
    L: int = 0                 # for diagnostics
    roots: int = 0


class BCH:
    """Binary narrow-sense BCH code, shortened to K data bytes, t-error-correcting, over GF(2^m)."""

    def __init__(self, m: int, t: int, k_bytes: int):
        self.gf = GF2m(m)
        self.m, self.t, self.k_bytes = m, t, k_bytes
        self.g = self._generator()
        self.r = self.g.bit_length() - 1              # parity bits
        if self.r % 8:
            raise ValueError("parity bits must fill whole bytes")
        self.p_bytes = self.r // 8
        self.n = 8 * (k_bytes + self.p_bytes)
        if self.n > self.gf.q:
            raise ValueError("sector too long for this field")

    # ---- code construction ---------------------------------------------------------------------
    def _min_poly(self, i: int) -> int:
        """Minimal polynomial of alpha^i: product of (x - alpha^c) over the cyclotomic coset of i."""
        coset, c = [], i % self.gf.q
        while c not in coset:
            coset.append(c)
            c = (2 * c) % self.gf.q
        poly = [1]                                     # GF(2^m) coefficients, poly[d] of x^d
        for c in coset:
            root = self.gf.alpha(c)
            nxt = [0] * (len(poly) + 1)
            for d, a in enumerate(poly):
                nxt[d + 1] ^= a                        # x * a
                nxt[d] ^= self.gf.mul(a, root)         # root * a
            poly = nxt
        assert all(a in (0, 1) for a in poly), "minimal polynomial not binary"
        return sum(a << d for d, a in enumerate(poly))

    def _generator(self) -> int:
        g, seen = 1, set()
        for i in range(1, 2 * self.t + 1):
            mp = self._min_poly(i)
            if mp not in seen:
                seen.add(mp)
                g = clmul(g, mp)
        for i in range(1, 2 * self.t + 1):              # self-check: alpha^1..alpha^2t are roots
            v = 0
            for d in range(g.bit_length()):
                if (g >> d) & 1:
                    v ^= self.gf.alpha(i * d)
            assert v == 0, f"g(alpha^{i}) != 0"
        return g

    # ---- encoder -------------------------------------------------------------------------------
    def parity(self, data: bytes) -> bytes:
        assert len(data) == self.k_bytes
        msg = int.from_bytes(data, "big")
        rem = clmod(msg << self.r, self.g)
        return rem.to_bytes(self.p_bytes, "big")

    def encode(self, data: bytes) -> bytes:
        return bytes(data) + self.parity(data)

    # ---- decoder -------------------------------------------------------------------------------
    def syndromes(self, cw: bytes) -> list[int]:
        """S[1..2t] (S[0] unused) by direct evaluation of r(alpha^i) over the set bits."""
        c = int.from_bytes(cw, "big")
        S = [0] * (2 * self.t + 1)
        pos = [p for p in range(self.n) if (c >> p) & 1]
        for i in range(1, 2 * self.t + 1):
            s = 0
            for p in pos:
                s ^= self.gf.alpha(i * p)
            S[i] = s
        return S

    def berlekamp_massey(self, S: list[int]) -> tuple[list[int], int]:
        """Classical Berlekamp-Massey (Massey 1969) over S_1..S_2t. Returns (Lambda, L)."""
        gf = self.gf
        C, B = [1], [1]
        L, shift, b = 0, 1, 1
        for r in range(2 * self.t):
            d = S[r + 1]
            for j in range(1, L + 1):
                if j < len(C):
                    d ^= gf.mul(C[j], S[r + 1 - j])
            if d == 0:
                shift += 1
                continue
            coef = gf.div(d, b)
            newC = C + [0] * max(0, len(B) + shift - len(C))
            for j, bj in enumerate(B):
                newC[j + shift] ^= gf.mul(coef, bj)
            if 2 * L <= r:
                B, L, b, shift = C, r + 1 - L, d, 1
            else:
                shift += 1
            C = newC
        while len(C) > 1 and C[-1] == 0:
            C.pop()
        return C, L

    def decode(self, cw: bytes) -> DecodeResult:
        assert len(cw) == self.k_bytes + self.p_bytes
        data = bytes(cw[: self.k_bytes])
        S = self.syndromes(cw)
        if not any(S[1:]):
            return DecodeResult(data, 0, False)
        lam, L = self.berlekamp_massey(S)
        deg = len(lam) - 1
        if L > self.t or deg != L:
            return DecodeResult(data, 0, True, L, 0)
        gf = self.gf
        roots = []
        for p in range(self.n):
            v = 0
            for j, lj in enumerate(lam):
                if lj:
                    v ^= gf.mul(lj, gf.alpha(-j * p))
            if v == 0:
                roots.append(p)
        c = int.from_bytes(data, "big")
        for p in roots:
            if p >= self.r:                            # data region: x^r .. x^(n-1)
                c ^= 1 << (p - self.r)
        out = c.to_bytes(self.k_bytes, "big")
        if len(roots) == L:
            return DecodeResult(out, len(roots), False, L, len(roots))
        return DecodeResult(out, 0, True, L, len(roots))


def flip_bits(cw: bytes, positions) -> bytes:
    """Flip codeword bits given as stream bit indices (0 = bit 7 of byte 0)."""
    b = bytearray(cw)
    for i in positions:
        b[i // 8] ^= 0x80 >> (i % 8)
    return bytes(b)


if __name__ == "__main__":       # print the generator polynomials the RTL tables hold
    for m, t in [(13, 8), (13, 16), (14, 4), (14, 8), (14, 12), (14, 16)]:
        code = BCH(m, t, 512)
        print(f"M={m} T={t} R={code.r} g_low=0x{code.g ^ (1 << code.r):x}")
