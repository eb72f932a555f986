# SPDX-License-Identifier: Apache-2.0
"""An independent implementation of the recovery scan's read count (docs/persistence.md §6 step 2 and
its "Old pages" shortcut, §2's erased-page rule, "Pages read (INV-BOUND)"), written from the
documentation alone, checked against `recovery_oracle.scan_reads` on die images this file writes.

`fw_scan_reads` is the rule as the documentation states it (the numbers the firmware prints as
`recovery: scan: P pages read, B blocks searched past their old pages, U pages not read`); the page
classification (erased / invalid / valid, with the BCH correction of the reader) is done here on the
raw bits. Only the checkpoint's parsing (§6 step 1) is the oracle's (`find_checkpoint`). The images
are written with the project's page-format helpers (`PageFormat`, `write_image`); the checkpoint's
word stream is written here per §5 / §10.4.

Result: the two agree on every image here except pages with correctable bit errors (§2 "valid when
its CRC holds (after ECC correction, if the reader corrects)"): the firmware's reader corrects, and
scan_reads does not (`test_ecc_correctable`, a strict xfail that records the difference); and the
mirror case, an intact CRC with an uncorrectable parity codeword (`test_parity_only_errors[12]`).

Plain Python, fixed seeds, about 15-20 CPU seconds.
"""
from __future__ import annotations

import functools
import random
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cocotb_tests" / "lib"))

from atstb.bch_model import BCH  # noqa: E402
from atstb.nand_page_model import Meta, PageFormat, crc32c  # noqa: E402
from atstb.recovery_oracle import DieImage, Geometry, find_checkpoint, format_images, write_image  # noqa: E402

# §2 layout
SECT = 512                 # data sector bytes
PAR = 13                   # BCH parity bytes per codeword
META_PAD = 489             # implicit zero bytes of the shortened metadata codeword
ERASED_THR = 8
K_DATA, K_LOG, K_MAP, K_CKPT = 0, 1, 2, 3
CP_MAGIC = 0x50435441
M32 = 0xFFFFFFFF

ERASED, INVALID, VALID = "erased", "invalid", "valid"

_BCH = BCH(13, 8, SECT)


@functools.lru_cache(maxsize=4096)
def _parity(data: bytes) -> bytes:
    return _BCH.parity(data)


_ZEROS = [8 - bin(i).count("1") for i in range(256)]


def _zero_bits(b: bytes) -> int:
    return sum(_ZEROS[x] for x in b)


# ----------------------------------------------------------------------------------------------
# the independent rule
def classify(raw: bytes | None, geo: Geometry):
    """§2: (ERASED | INVALID | VALID, (kind, seq) or None) from the raw page + spare."""
    if raw is None:                          # the die model stores erased rows as absent
        return ERASED, None
    pb = geo.page_bytes
    nsec = pb // SECT
    sp = raw[pb:]
    cws = []                                 # (counted bytes, data part, parity part)
    for s in range(nsec):
        d = raw[SECT * s:SECT * (s + 1)]
        p = sp[37 + PAR * s:37 + PAR * (s + 1)]
        cws.append((d + p, d, p))
    m = sp[1:24]
    mp = sp[24:37]
    cws.append((sp[1:37], None, None))
    looks = [_zero_bits(c[0]) <= ERASED_THR for c in cws]
    if all(looks):
        return ERASED, None
    if any(looks):
        return INVALID, None                 # UNCORRECTABLE
    data = []
    for _, d, p in cws[:-1]:
        if _parity(d) != p:
            r = _BCH.decode(d + p)
            if r.uncorrectable:
                return INVALID, None
            d = r.data
        data.append(d)
    if _BCH.parity(bytes(META_PAD) + m) != mp:
        r = _BCH.decode(bytes(META_PAD) + m + mp)
        if r.uncorrectable or any(r.data[:META_PAD]):
            return INVALID, None
        m = r.data[META_PAD:]
    if crc32c(b"".join(data) + m[:19]) != int.from_bytes(m[19:23], "little"):
        return INVALID, None
    kind = m[5]
    seq = int.from_bytes(m[6:14], "little")
    return VALID, (kind, seq)


def fw_scan_reads(images, geo: Geometry, slog_device: bool) -> dict:
    """§6 step 2 with the "Old pages" shortcut: pages read (probes included), blocks searched past
    their old pages, pages 1..lo of searched blocks the search did not read."""
    dies = [im if isinstance(im, DieImage) else DieImage(Path(im), geo) for im in images]
    cp = find_checkpoint(geo, dies[0], SimpleNamespace(pages_read=0))
    assert cp is not None, "these tests always write a checkpoint"
    seq_base, scan_from = cp.seq_base, cp.scan_from
    shortcut = scan_from == seq_base and seq_base > 0 and (not slog_device or cp.version == 3)
    cache: dict = {}

    def state(d, b, pg):
        k = (d, b, pg)
        if k not in cache:
            cache[k] = classify(dies[d].row(b, pg), geo)
        return cache[k]

    def old(st) -> bool:
        return st[0] == VALID and st[1][0] in (K_DATA, K_LOG) and st[1][1] < seq_base

    P = B = U = 0
    for d in range(geo.ndie):
        for b in cp.plan[d]:
            P += 1
            s0 = state(d, b, 0)
            if s0[0] == ERASED:
                break                         # never opened: the die's log ends here
            start = 1
            if shortcut and old(s0):
                B += 1
                lo, hi = 0, geo.ppb
                probed_low = 0
                while hi - lo > 1:
                    mid = lo + (hi - lo) // 2
                    P += 1
                    if old(state(d, b, mid)):
                        lo = mid
                        probed_low += 1
                    else:
                        hi = mid
                U += lo - probed_low
                start = lo + 1
            for pg in range(start, geo.ppb):
                P += 1
                if state(d, b, pg)[0] == ERASED:
                    break
    return dict(pages=P, searched=B, unread=U)


# ----------------------------------------------------------------------------------------------
# image writing
def ckpt_stream_pages(geo: Geometry, version: int, plan, seq_base: int, scan_from: int, ckpt_no: int,
                      mapping: dict[int, int], bad=(), slog_lpgn: int = 0) -> list[bytes]:
    """§5 version 2 (and §10.4 version 3 with an empty S-Log section)."""
    words = [geo.ndie, geo.blocks, geo.ppb, len(mapping), scan_from & M32, scan_from >> 32, ckpt_no, len(bad)]
    for d in range(geo.ndie):
        words += [len(plan[d])] + list(plan[d])
    words += list(bad)
    ec = [0] * (geo.ndie * geo.blocks)
    for x in bad:
        ec[(x >> 16) * geo.blocks + (x & 0xFFFF)] = 0xFFFF
    ec += [0] * (len(ec) % 2)
    words += [ec[i] | ec[i + 1] << 16 for i in range(0, len(ec), 2)]
    for lpn in sorted(mapping):
        words += [lpn, mapping[lpn]]
    if version == 3:
        words += [slog_lpgn, 0]
    per = geo.page_bytes // 4 - 4
    n = max(1, -(-len(words) // per))
    out = []
    for i in range(n):
        w = [CP_MAGIC, version, i, n] + words[i * per:(i + 1) * per]
        w += [0] * (geo.page_bytes // 4 - len(w))
        out.append(b"".join(x.to_bytes(4, "little") for x in w))
    return out


class Dies:
    def __init__(self, geo: Geometry, rng: random.Random):
        self.geo, self.rng = geo, rng
        self.fmt = PageFormat(geo.page_bytes, geo.spare_bytes)
        self.fmt.bch.parity = _parity        # the same code, memoised (images reuse data patterns)
        self.pages = [dict() for _ in range(geo.ndie)]
        self.bad = [bytearray(geo.blocks) for _ in range(geo.ndie)]
        self.patterns = [bytes(geo.page_bytes)] + [rng.randbytes(geo.page_bytes) for _ in range(3)]

    def put(self, d, b, pg, raw):
        assert raw is None or len(raw) == self.geo.page_bytes + self.geo.spare_bytes
        r = b * self.geo.ppb + pg
        if raw is None:
            self.pages[d].pop(r, None)
        else:
            self.pages[d][r] = raw

    def get(self, d, b, pg):
        return self.pages[d].get(b * self.geo.ppb + pg)

    # page kinds ---------------------------------------------------------------------------------
    def valid(self, kind, seq, lpn=None, flags=0, txid=0, data=None) -> bytes:
        rng = self.rng
        if data is None:
            data = self.patterns[0] if kind == K_LOG else rng.choice(self.patterns)
        if lpn is None:
            lpn = M32 if kind in (K_MAP, K_CKPT) else rng.randrange(256)
        return self.fmt.image(data, Meta(lpn=lpn, txid=txid, kind=kind, seq=seq, epoch=rng.randrange(1 << 16),
                                         flags=flags))

    def torn(self, how=None, seq=0) -> bytes:
        """A page that is neither valid nor erased (torn by a cut, a failed program)."""
        rng, geo = self.rng, self.geo
        how = how or rng.choice(["random", "corrupt", "partial", "meta_only", "data_only"])
        n = geo.page_bytes + geo.spare_bytes
        if how == "random":
            return rng.randbytes(n)
        good = bytearray(self.valid(rng.choice([K_DATA, K_LOG]), seq))
        if how == "corrupt":                  # program failure: many bytes corrupted
            for i in rng.sample(range(n), 40):
                good[i] = rng.randrange(256)
        elif how == "partial":                # some 0 bits of the target not yet programmed
            for i in range(n):
                good[i] |= rng.randrange(256) & rng.randrange(256)
            good[geo.page_bytes] = 0xFF
        elif how == "meta_only":              # data sector still erased
            good[:geo.page_bytes] = b"\xff" * geo.page_bytes
            good[geo.page_bytes + 37:geo.page_bytes + 37 + PAR] = b"\xff" * PAR
        elif how == "data_only":              # metadata codeword still erased
            good[geo.page_bytes + 1:geo.page_bytes + 37] = b"\xff" * 36
        return bytes(good)

    def cw_bytes(self, cw):
        """Byte positions of codeword cw (0..nsec-1 data sectors, nsec = metadata)."""
        pb, nsec = self.geo.page_bytes, self.geo.page_bytes // SECT
        if cw < nsec:
            return list(range(SECT * cw, SECT * (cw + 1))) + list(range(pb + 37 + PAR * cw, pb + 50 + PAR * cw))
        return list(range(pb + 1, pb + 37))

    def noisy_erased(self, zeros_per_cw: list[int], outside_junk: bool = False) -> bytes:
        """An all-0xFF page with the given number of 0 bits in each codeword (and, with
        outside_junk, 0 bits in spare byte 0 and the spare bytes after the last parity)."""
        rng, geo = self.rng, self.geo
        b = bytearray(b"\xff" * (geo.page_bytes + geo.spare_bytes))
        for cw, z in enumerate(zeros_per_cw):
            bits = rng.sample([p * 8 + i for p in self.cw_bytes(cw) for i in range(8)], z)
            for x in bits:
                b[x // 8] &= ~(1 << (x % 8)) & 0xFF
        if outside_junk:
            b[geo.page_bytes] = 0x00
            nsec = geo.page_bytes // SECT
            for i in range(geo.page_bytes + 37 + PAR * nsec, len(b)):
                b[i] = rng.randrange(256)
        return bytes(b)

    def flipped(self, raw: bytes, per_cw: list[int]) -> bytes:
        """raw with per_cw[cw] bit flips in codeword cw."""
        b = bytearray(raw)
        for cw, z in enumerate(per_cw):
            for x in self.rng.sample([p * 8 + i for p in self.cw_bytes(cw) for i in range(8)], z):
                b[x // 8] ^= 1 << (x % 8)
        return bytes(b)

    # checkpoint + files ---------------------------------------------------------------------------
    def ckpt_blocks(self):
        return 0, next(b for b in range(1, self.geo.blocks) if not self.bad[0][b])

    def checkpoint(self, blk, version, plan, seq_base, scan_from, ckpt_no, mapping=None, torn_page=None):
        meta_seq = seq_base
        pages = ckpt_stream_pages(self.geo, version, plan, seq_base, scan_from, ckpt_no, mapping or {},
                                  [(0 << 16) | b for b in range(self.geo.blocks) if self.bad[0][b]] +
                                  [(d << 16) | b for d in range(1, self.geo.ndie)
                                   for b in range(self.geo.blocks) if self.bad[d][b]],
                                  slog_lpgn=self.rng.randrange(1 << 20))
        for pg in range(self.geo.ppb):
            self.put(0, blk, pg, None)
        if torn_page is not None:
            torn_page = min(torn_page, len(pages) - 1)
        for i, data in enumerate(pages):
            raw = self.fmt.image(data, Meta(lpn=M32, txid=0, kind=K_CKPT, seq=meta_seq, epoch=0, flags=0))
            if torn_page is not None and i == torn_page:
                raw = self.torn("corrupt")
            self.put(0, blk, i, raw)
            if torn_page is not None and i == torn_page:
                break
        return len(pages)

    def write(self, tmp: Path) -> list[Path]:
        tmp.mkdir(parents=True, exist_ok=True)
        paths = [tmp / f"die{d}.img" for d in range(self.geo.ndie)]
        for d, p in enumerate(paths):
            write_image(p, self.geo, self.pages[d], bytes(self.bad[d]))
        return paths


def oracle(paths, geo, slog_device):
    from atstb.recovery_oracle import scan_reads      # the reference, only for the comparison
    return scan_reads(paths, geo, slog_device)


def compare(paths, geo, slog_device, what=""):
    mine = fw_scan_reads(paths, geo, slog_device)
    ref = oracle(paths, geo, slog_device)
    ref3 = {k: ref.get(k) for k in ("pages", "searched", "unread")}
    assert mine == ref3, f"{what}: mine {mine} != scan_reads {ref}"
    return mine


def geo_of(rng, ppb=None, blocks=16):
    return Geometry(2, 2, blocks, ppb or rng.choice([16, 32, 64]), 512, 64)


# ----------------------------------------------------------------------------------------------
# 1. device-like images: a seq stream spread over the dies' plan blocks, pages in ascending order
def device_images(rng: random.Random, tmp: Path, version: int, tx_open: bool, cut: bool = True):
    geo = geo_of(rng)
    dies = Dies(geo, rng)
    if rng.random() < 0.25:
        dies.bad[0][1] = 1                   # die 0 block 1 factory bad: checkpoint blocks 0 and 2
    for d in range(geo.ndie):
        for b in rng.sample(range(2, geo.blocks), rng.randrange(0, 2)):
            dies.bad[d][b] = 1
    for d in range(geo.ndie):
        for b in range(geo.blocks):
            if dies.bad[d][b]:
                dies.put(d, b, 0, b"\x00" * (geo.page_bytes + geo.spare_bytes))
    cpb = dies.ckpt_blocks()
    pools = []
    for d in range(geo.ndie):
        pool = [b for b in range(geo.blocks) if not dies.bad[d][b] and not (d == 0 and b in cpb)]
        rng.shuffle(pool)
        pools.append(pool)
    s0 = rng.choice([1, rng.randrange(1, 5000), (1 << 32) - rng.randrange(1, 200), rng.randrange(1 << 33, 1 << 40)])
    n_pre = rng.randrange(0, 3 * geo.ppb)
    if rng.random() < 0.15:
        n_pre = 0
    seq_base = s0 + n_pre
    n_post = rng.choice([0, rng.randrange(0, geo.ppb), rng.randrange(0, 4 * geo.ppb)])
    scan_from = seq_base
    if tx_open and n_pre > 0:
        scan_from = seq_base - rng.randrange(1, n_pre + 1)
    if seq_base == 0:
        scan_from = 0

    used = [[] for _ in range(geo.ndie)]     # blocks handed out, in order
    nxt = [geo.ppb] * geo.ndie                 # next page of the open block (ppb: none open)
    last_pre_block = [None] * geo.ndie
    first_from_block = [None] * geo.ndie      # block of the die's first page with seq >= scan_from

    def place(d, raw, seq=None):
        if nxt[d] >= geo.ppb:
            used[d].append(pools[d][len(used[d])])
            nxt[d] = 0
        b, pg = used[d][-1], nxt[d]
        dies.put(d, b, pg, raw)
        nxt[d] += 1
        if seq is not None and seq < seq_base:
            last_pre_block[d] = len(used[d]) - 1
        if seq is not None and seq >= scan_from and first_from_block[d] is None:
            first_from_block[d] = len(used[d]) - 1
        return b, pg

    end = seq_base + n_post
    win = rng.randrange(0, 5) if cut else 0
    skew = [rng.random() + 0.2 for _ in range(geo.ndie)]
    for seq in range(s0, end):
        d = rng.choices(range(geo.ndie), weights=skew)[0]
        kind = K_LOG if rng.random() < 0.15 else K_DATA
        if rng.random() < 0.03:              # firmware-side kind-2/3 page (seq not looked at)
            place(d, dies.valid(rng.choice([K_MAP, K_CKPT]), rng.choice([seq, s0, seq - 1 if seq else 0])))
        if rng.random() < 0.3 / geo.ppb and len(used[d]) + 3 < len(pools[d]):
            place(d, dies.torn("corrupt", seq))   # program failure: the page is unreliable, the block closes
            nxt[d] = geo.ppb
        if seq >= end - win:                  # in flight at the cut
            r = rng.random()
            if r < 0.4:
                place(d, dies.torn(seq=seq), seq)
                continue
            if r < 0.7:
                continue                      # not yet programmed
        place(d, dies.valid(kind, seq, flags=(0x04 if kind == K_LOG else 0)), seq)

    plan = []
    for d in range(geo.ndie):
        i0 = last_pre_block[d]
        if i0 is None:
            i0 = 0
        if first_from_block[d] is not None and scan_from < seq_base:
            i0 = min(i0, first_from_block[d])
        if i0 > 0 and rng.random() < 0.2:
            i0 -= 1                           # an older block still listed
        p = used[d][i0:]
        extra = pools[d][len(used[d]):]
        p += extra[:rng.randrange(0, min(4, len(extra)) + 1)]
        plan.append(p)

    mapping = {}
    if rng.random() < 0.3:
        mapping = {lpn: rng.randrange(1 << 16) for lpn in rng.sample(range(4096), rng.randrange(60, 300))}
    main, other = cpb if rng.random() < 0.5 else cpb[::-1]
    ckpt_no = rng.randrange(2, 50)
    dies.checkpoint(main, version, plan, seq_base, scan_from, ckpt_no, mapping)
    r = rng.random()
    if r < 0.35:                              # the previous checkpoint, intact in the other block
        old_plan = [list(rng.sample(pools[d], min(3, len(pools[d])))) for d in range(geo.ndie)]
        old_base = max(0, scan_from - rng.randrange(1, 50))
        dies.checkpoint(other, rng.choice([2, 3]), old_plan, old_base, old_base, ckpt_no - 1)
    elif r < 0.5:                             # a newer attempt torn in the other block
        dies.checkpoint(other, version, plan, seq_base + 5, seq_base + 5, ckpt_no + 1, mapping,
                        torn_page=rng.choice([0, 0, 1]))
    return geo, dies.write(tmp), dict(seq_base=seq_base, scan_from=scan_from, plan=plan)


DEVICE_SEEDS = range(16)


@pytest.mark.parametrize("seed", DEVICE_SEEDS)
def test_device_like(seed, tmp_path):
    rng = random.Random(0x5CA0 + seed)
    for j in range(4):
        version = (2, 3)[(seed + j) % 2]
        tx_open = (seed // 2 + j) % 2 == 1
        geo, paths, info = device_images(rng, tmp_path / f"s{j}", version, tx_open, cut=rng.random() < 0.8)
        for slog in (False, True):
            r = compare(paths, geo, slog, f"seed {seed}.{j} v{version} slog {slog} {info['seq_base']}/{info['scan_from']}")



# ----------------------------------------------------------------------------------------------
# 2. structured random blocks: old prefixes, new pages, invalid / kind-2/3 pages at probe points,
#    erased tails, full blocks, erased page 0 ending a plan (with content behind it)
def random_block(dies: Dies, d: int, b: int, seq_base: int, scan_from: int):
    geo, rng = dies.geo, dies.rng
    ppb = geo.ppb
    shape = rng.choice(["erased", "full_old", "old_new", "old_new", "old_new", "mixed", "probe_traps",
                        "starts_odd"])
    old_seq = lambda: rng.randrange(max(0, seq_base - 3 * ppb), seq_base) if seq_base else None  # noqa: E731
    new_seq = lambda: seq_base + rng.randrange(0, 3 * ppb)  # noqa: E731
    states: list = []
    if shape == "erased":
        states = []
    elif shape == "full_old":
        states = ["old"] * ppb
    elif shape == "old_new":
        a = rng.choice([0, 1, rng.randrange(0, ppb + 1), ppb - 1, ppb // 2, ppb // 2 + 1])
        n = rng.randrange(0, ppb - a + 1)
        states = ["old"] * a + ["new"] * n
    elif shape == "mixed":
        n = rng.randrange(1, ppb + 1)
        states = [rng.choice(["old", "old", "new", "invalid", "k2", "k3", "oldseq_new_kind"]) for _ in range(n)]
    elif shape == "probe_traps":
        a = rng.randrange(1, ppb + 1)
        states = ["old"] * a + ["new"] * rng.randrange(0, ppb - a + 1)
        for p in {ppb // 2, ppb // 4, 3 * ppb // 4, ppb // 8, ppb - 1, a - 1, a}:
            if 0 < p < len(states) and rng.random() < 0.5:
                states[p] = rng.choice(["invalid", "k2", "k3", "erased_noise", "noisy_invalid"])
    elif shape == "starts_odd":
        states = [rng.choice(["invalid", "k2", "k3", "new", "noisy_invalid"])] + \
                 [rng.choice(["old", "new"]) for _ in range(rng.randrange(0, ppb))]
    if seq_base == 0:
        states = ["new" if s in ("old", "oldseq_new_kind") else s for s in states]
    for pg, s in enumerate(states):
        if s == "old":
            raw = dies.valid(rng.choice([K_DATA, K_LOG]), rng.choice([old_seq(), seq_base - 1]))
        elif s == "new":
            raw = dies.valid(rng.choice([K_DATA, K_LOG]), rng.choice([new_seq(), seq_base]))
        elif s == "invalid":
            raw = dies.torn(seq=old_seq() or 0)
        elif s in ("k2", "k3"):
            raw = dies.valid(K_MAP if s == "k2" else K_CKPT, rng.choice([old_seq() or 0, seq_base, 0]))
        elif s == "oldseq_new_kind":
            raw = dies.valid(rng.choice([K_MAP, K_CKPT]), old_seq())
        elif s == "erased_noise":
            nsec = geo.page_bytes // SECT
            raw = dies.noisy_erased([rng.randrange(0, ERASED_THR + 1) for _ in range(nsec + 1)], rng.random() < 0.5)
        elif s == "noisy_invalid":            # one codeword just over the threshold, the others erased-looking
            nsec = geo.page_bytes // SECT
            z = [rng.randrange(0, ERASED_THR + 1) for _ in range(nsec + 1)]
            z[rng.randrange(nsec + 1)] = ERASED_THR + 1
            raw = dies.noisy_erased(z)
        else:
            raise AssertionError(s)
        dies.put(d, b, pg, raw)
    # the erased tail: absent rows, or now and then an erased page with a few 0 bits
    if len(states) < ppb and rng.random() < 0.3:
        nsec = geo.page_bytes // SECT
        dies.put(d, b, len(states), dies.noisy_erased([rng.randrange(0, ERASED_THR + 1) for _ in range(nsec + 1)],
                                                      rng.random() < 0.5))
    # content after the first erased page (not readable by the rule: the block's scan stops)
    if len(states) + 1 < ppb and rng.random() < 0.2:
        dies.put(d, b, rng.randrange(len(states) + 1, ppb), dies.valid(K_DATA, new_seq()))


def structured_images(rng, tmp, version, tx_open, ppb=None):
    geo = geo_of(rng, ppb)
    dies = Dies(geo, rng)
    seq_base = rng.choice([0, rng.randrange(1, 4000), (1 << 32) + rng.randrange(0, 100), rng.randrange(200, 400)])
    scan_from = seq_base - rng.randrange(1, min(seq_base, 100) + 1) if (tx_open and seq_base) else seq_base
    plan = []
    for d in range(geo.ndie):
        pool = [b for b in range(geo.blocks) if not (d == 0 and b in (0, 1))]
        p = rng.sample(pool, rng.randrange(0, 6))
        plan.append(p)
        for b in p:
            random_block(dies, d, b, seq_base, scan_from)
    dies.checkpoint(rng.choice([0, 1]), version, plan, seq_base, scan_from, rng.randrange(1, 9))
    return geo, dies.write(tmp)


@pytest.mark.parametrize("seed", range(14))
def test_structured_random(seed, tmp_path):
    rng = random.Random(0xB10C + seed)
    for j in range(4):
        version = rng.choice([2, 3])
        tx_open = rng.random() < 0.3
        geo, paths = structured_images(rng, tmp_path / f"s{j}", version, tx_open)
        for slog in (False, True):
            compare(paths, geo, slog, f"seed {seed}.{j} v{version} tx_open {tx_open} slog {slog}")


# ----------------------------------------------------------------------------------------------
# 3. one block, every (old, new) split and one trap page at every position (16 pages a block)
def test_split_sweep(tmp_path):
    rng = random.Random(77)
    geo = Geometry(2, 2, 8, 16, 512, 64)
    seq_base = 1000
    n = 0
    cases = [(a, m, None, None) for a in range(1, 17) for m in range(0, 17 - a)]
    cases += [(16, 0, t, kind) for t in range(1, 16) for kind in ("invalid", "k2", "erased")]
    cases += [(a, 16 - a, t, "invalid") for a in (3, 8, 11) for t in range(1, 16)]
    for a, m, trap, kind in cases:
        dies = Dies(geo, rng)
        for pg in range(a):
            dies.put(1, 5, pg, dies.valid(K_DATA, seq_base - 1 - (a - pg)))
        for pg in range(a, a + m):
            dies.put(1, 5, pg, dies.valid(K_DATA, seq_base + pg))
        if trap is not None:
            raw = {"invalid": lambda: dies.torn("random"), "k2": lambda: dies.valid(K_MAP, 1),
                   "erased": lambda: None}[kind]()
            dies.put(1, 5, trap, raw)
        dies.checkpoint(0, 3, [[], [5, 6], [], []], seq_base, seq_base, 3)
        paths = dies.write(tmp_path / f"c{n}")
        n += 1
        for slog in (False, True):
            compare(paths, geo, slog, f"old {a} new {m} trap {trap} {kind} slog {slog}")


# ----------------------------------------------------------------------------------------------
# 4. the shortcut's conditions: version x S-Log device x scan_from, on one fixed die content
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("slog", [False, True])
@pytest.mark.parametrize("sf_delta", [0, 1, 40])
def test_shortcut_conditions(version, slog, sf_delta, tmp_path):
    rng = random.Random(version * 100 + slog * 10 + sf_delta)
    geo = Geometry(2, 2, 8, 32, 512, 64)
    dies = Dies(geo, rng)
    seq_base = 500
    for pg in range(20):                       # 20 old pages, 5 new ones, then erased
        dies.put(2, 3, pg, dies.valid(K_DATA, 450 + pg))
    for pg in range(20, 25):
        dies.put(2, 3, pg, dies.valid(K_DATA, 500 + pg))
    for pg in range(32):                       # a full old block
        dies.put(3, 4, pg, dies.valid(K_LOG, 300 + pg))
    dies.checkpoint(0, version, [[2], [], [3, 6, 7], [4]], seq_base, seq_base - sf_delta, 2)
    paths = dies.write(tmp_path)
    r = compare(paths, geo, slog, f"v{version} slog {slog} scan_from = seq_base - {sf_delta}")
    shortcut = sf_delta == 0 and (version == 3 or not slog)
    # independent expectations, worked out by hand from the rule
    if shortcut:
        # die 0 block 2: page 0 erased (1); die 2 block 3: page 0 + probes 16 (old), 24 (new),
        # 20 (new), 18 (old), 19 (old) -> lo 19, then pages 20..25 (25 erased): 1 + 5 + 6;
        # block 6: page 0 erased (1); die 3 block 4: page 0 + probes 16, 24, 28, 30, 31 all old,
        # lo 31 = ppb - 1: nothing more: 6
        assert r == dict(pages=1 + 12 + 1 + 6, searched=2, unread=(19 - 3) + (31 - 5))
    else:
        assert r == dict(pages=1 + 26 + 1 + 32, searched=0, unread=0)


# ----------------------------------------------------------------------------------------------
# 5. §2's erased-page rule at its edges: bits outside the codewords, 8 / 9 zero bits, mixed pages
def test_erased_rule_edges(tmp_path):
    rng = random.Random(5)
    geo = Geometry(2, 2, 8, 16, 512, 64)
    n = 0
    for zeros_data, zeros_meta, junk in [(0, 0, True), (8, 8, False), (8, 8, True), (9, 0, False),
                                         (0, 9, False), (9, 9, False), (3, 7, True), (200, 0, False),
                                         (0, 200, False)]:
        for where in ("page0", "tail"):
            dies = Dies(geo, rng)
            if where == "page0":
                dies.put(0, 4, 0, dies.noisy_erased([zeros_data, zeros_meta], junk))
                for pg in range(1, 6):
                    dies.put(0, 4, pg, dies.valid(K_DATA, 100 + pg))
            else:
                for pg in range(4):
                    dies.put(0, 4, pg, dies.valid(K_DATA, 100 + pg))
                dies.put(0, 4, 4, dies.noisy_erased([zeros_data, zeros_meta], junk))
                dies.put(0, 4, 5, dies.valid(K_DATA, 200))
            dies.put(0, 5, 0, dies.valid(K_DATA, 300))
            dies.checkpoint(0, 2, [[4, 5], [], [], []], 100, 100, 2)
            paths = dies.write(tmp_path / f"c{n}")
            n += 1
            for slog in (False, True):
                compare(paths, geo, slog, f"zeros {zeros_data}/{zeros_meta} junk {junk} at {where}")


# ----------------------------------------------------------------------------------------------
# 6. bit errors in a stored page. §2: "A page is **valid** when its CRC holds (after ECC correction,
#    if the reader corrects)"; the firmware reads through ats_nand_page, which corrects (t = 8 per
#    codeword), so a page with at most 8 wrong bits in every codeword is valid (and old) to the
#    firmware. scan_reads disagrees: it takes such a page as invalid (not old), so a searched block
#    ends its search elsewhere (strict xfail below: the disagreement the report names). Pages with
#    more errors than the code corrects are invalid to both.
CORRECTABLE = ([1, 0], [0, 1], [4, 2], [8, 8])
UNCORRECTABLE = ([9, 0], [0, 9], [12, 12], [40, 0])


def _ecc_case(flips, where, tmp_path):
    rng = random.Random(6 + where + 100 * sum(flips))
    geo = Geometry(2, 2, 8, 16, 512, 64)
    dies = Dies(geo, rng)
    for pg in range(12):
        raw = dies.valid(K_DATA, 90 + pg)        # seq_base 100: pages 0..9 old, 10, 11 new, 12 erased
        if pg == where:
            raw = dies.flipped(raw, flips)
        dies.put(1, 3, pg, raw)
    dies.checkpoint(0, 3, [[], [3], [], []], 100, 100, 2)
    paths = dies.write(tmp_path)
    st = classify(dies.get(1, 3, where), geo)[0]
    assert st == (VALID if max(flips) <= 8 else INVALID)
    for slog in (False, True):
        compare(paths, geo, slog, f"flips {flips} at page {where} slog {slog}")


@pytest.mark.parametrize("where", [0, 8, 9])
@pytest.mark.parametrize("flips", UNCORRECTABLE)
def test_ecc_uncorrectable(flips, where, tmp_path):
    _ecc_case(flips, where, tmp_path)


@pytest.mark.xfail(strict=True, reason="scan_reads does not apply the ECC correction of §2: a page with "
                   "correctable bit errors is invalid to it, valid (old) to the firmware as documented")
@pytest.mark.parametrize("where", [0, 8, 9])
@pytest.mark.parametrize("flips", CORRECTABLE)
def test_ecc_correctable(flips, where, tmp_path):
    _ecc_case(flips, where, tmp_path)


# ----------------------------------------------------------------------------------------------
# 7. version 1 (format_images; its scan_from is its seq_base): the shortcut on a device without
#    the S-Log only
@pytest.mark.parametrize("seq_base", [0, 64])
def test_version1(seq_base, tmp_path):
    rng = random.Random(seq_base)
    geo = Geometry(2, 2, 8, 16, 512, 64)
    plan = [[2, 3], [1, 0], [5], []]
    paths = [tmp_path / f"die{d}.img" for d in range(geo.ndie)]
    format_images(paths, geo, plan, seq_base=seq_base, version=1)
    dies = Dies(geo, rng)
    dies.pages[0] = DieImage(paths[0], geo).pages
    s = max(0, seq_base - 20)
    for pg in range(16):
        dies.put(0, 2, pg, dies.valid(K_DATA, s + pg))
    for pg in range(9):
        dies.put(0, 3, pg, dies.valid(K_DATA, s + 16 + pg))
    for pg in range(3):
        dies.put(1, 1, pg, dies.valid(K_LOG, s + pg))
    paths = dies.write(tmp_path / "v1")
    for slog in (False, True):
        compare(paths, geo, slog, f"version 1 seq_base {seq_base} slog {slog}")


# ----------------------------------------------------------------------------------------------
# 8. errors in the parity bytes only: the CRC still holds on the raw bytes, but §2 says "no codeword
#    looks erased → normal decoding: valid only when every codeword corrects and the CRC holds";
#    with more than 8 wrong parity bits the data-sector codeword does not correct, so the page is
#    invalid to the firmware (and to fw_scan_reads). scan_reads checks the CRC of the raw bytes only
#    and takes it as valid (old). Up to 8 wrong parity bits: valid to both (it passes).
@pytest.mark.parametrize("nbits", [3, pytest.param(12, marks=pytest.mark.xfail(
    strict=True, reason="scan_reads: CRC on raw bytes only, no BCH check (an uncorrectable parity "
    "codeword with an intact CRC is valid to it, invalid per §2)"))])
def test_parity_only_errors(nbits, tmp_path):
    rng = random.Random(8 + nbits)
    geo = Geometry(2, 2, 8, 16, 512, 64)
    dies = Dies(geo, rng)
    for pg in range(12):
        dies.put(1, 3, pg, dies.valid(K_DATA, 90 + pg))   # seq_base 100: pages 0..9 old
    raw = bytearray(dies.get(1, 3, 0))
    par0 = geo.page_bytes + 37                             # data sector 0's parity bytes
    for x in rng.sample(range(par0 * 8, (par0 + PAR) * 8), nbits):
        raw[x // 8] ^= 1 << (x % 8)
    dies.put(1, 3, 0, bytes(raw))
    dies.checkpoint(0, 3, [[], [3], [], []], 100, 100, 2)
    paths = dies.write(tmp_path)
    assert classify(bytes(raw), geo)[0] == (VALID if nbits <= 8 else INVALID)
    compare(paths, geo, False, f"{nbits} parity bits wrong in page 0")
