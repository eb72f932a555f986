"""Independent recovery oracle: rebuilds the device state from the NAND die images alone, following
docs/persistence.md (never the RTL). Also the offline format step (the checkpoint page with the
allocation plan that a factory format / the firmware writes before the first power-on).

Images are the die model's files (sim/nand/ats_nand_store.cpp, "ATSNAND1": 6 x u32 geometry, u32
page count, then (u32 row, page + spare bytes) per programmed page, then one byte per block =
factory bad). A page absent from the image is erased (all 0xFF).

The oracle reads a page only when the algorithm needs it and counts the reads (INV-BOUND).

The S-Log (persistence.md section 10: log pages with flag SLOG, MERGE pages, checkpoint version 3,
records decided by completeness after the durable prefix's gap) is `atstb.slog_ref`'s format; on images
without S-Log pages the result is section 6's. A version-3 checkpoint's "unknown page" (section 10.4: PPN
0xFFFFFFFF, its LPGN's low 16 bits) stays in F[lpn] with its LPGN extended below `slog_lpgn`; `read_lpn`
answers MEDIA_ERROR for that LPN (tests/system/test_oracle_unknown_page.py).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from atstb.nand_page_model import Meta, PageFormat, crc32c
from atstb.slog_ref import (F_SLOG, LG16, MEDIA_ERROR, UNKNOWN_PPN, FragLoc, ReadStatus, SlogState,  # noqa: F401
                            find_records, lpgn_ext_back, log_page, read_merged)

KIND_DATA, KIND_LOG, KIND_MAP, KIND_CKPT = 0, 1, 2, 3
F_COMMIT, F_COMMIT_BLOCK, F_TRIM, F_ABORT, F_RELOC = 0x01, 0x02, 0x04, 0x08, 0x10
CP_MAGIC = 0x50435441    # "ATCP"
CP_VERSION = 1


@dataclass
class Geometry:
    num_chan: int
    ways: int
    blocks: int
    ppb: int
    page_bytes: int
    spare_bytes: int

    @property
    def ndie(self) -> int:
        return self.num_chan * self.ways

    @property
    def die_bits(self) -> int:
        return (self.ndie - 1).bit_length() if self.ndie > 1 else 0

    @property
    def pg_bits(self) -> int:
        return (self.ppb - 1).bit_length()

    def ppn(self, die: int, block: int, page: int) -> int:
        return (block << (self.pg_bits + self.die_bits)) | (page << self.die_bits) | die

    def unppn(self, ppn: int) -> tuple[int, int, int]:
        die = ppn & ((1 << self.die_bits) - 1)
        page = (ppn >> self.die_bits) & (self.ppb - 1)
        return die, ppn >> (self.die_bits + self.pg_bits), page


class DieImage:
    """One die's image file, read-only."""

    def __init__(self, path: Path, geo: Geometry):
        self.geo = geo
        self.pages: dict[int, bytes] = {}
        self.bad = bytes(geo.blocks)
        row_bytes = geo.page_bytes + geo.spare_bytes
        raw = Path(path).read_bytes() if Path(path).exists() else b""
        if raw:
            assert raw[:8] == b"ATSNAND1", f"{path}: not a die image"
            hdr = struct.unpack_from("<7I", raw, 8)
            assert (hdr[1], hdr[2], hdr[3], hdr[4]) == (geo.blocks, geo.ppb, geo.page_bytes, geo.spare_bytes)
            off = 8 + 28
            for _ in range(hdr[6]):
                row = struct.unpack_from("<I", raw, off)[0]
                self.pages[row] = raw[off + 4:off + 4 + row_bytes]
                off += 4 + row_bytes
            self.bad = raw[off:off + geo.blocks]

    def row(self, block: int, page: int) -> bytes | None:
        """Page + spare, or None if erased."""
        return self.pages.get(block * self.geo.ppb + page)


def write_image(path: Path, geo: Geometry, pages: dict[int, bytes], bad: bytes | None = None) -> None:
    hdr = struct.pack("<7I", 1, geo.blocks, geo.ppb, geo.page_bytes, geo.spare_bytes, 1, len(pages))
    out = bytearray(b"ATSNAND1" + hdr)
    for row in sorted(pages):
        out += struct.pack("<I", row) + pages[row]
    out += bad if bad is not None else bytes(geo.blocks)
    Path(path).write_bytes(bytes(out))


# --------------------------------------------------------------------------------------------------
# checkpoint record (persistence.md "Checkpoint page")
def checkpoint_data(geo: Geometry, plan: list[list[int]], mapping: dict[int, int], seq_base: int) -> bytes:
    words = [CP_MAGIC, CP_VERSION, geo.ndie, geo.blocks, geo.ppb, len(mapping)]
    for d in range(geo.ndie):
        words.append(len(plan[d]))
        words.extend(plan[d])
    for lpn in sorted(mapping):
        words.extend([lpn, mapping[lpn]])
    data = b"".join(w.to_bytes(4, "little") for w in words)
    assert len(data) <= geo.page_bytes, "checkpoint does not fit one page (multi-page checkpoints: firmware)"
    return data + b"\x00" * (geo.page_bytes - len(data))


def parse_checkpoint(geo: Geometry, data: bytes):
    w = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    if w[0] != CP_MAGIC or w[1] != CP_VERSION or w[2] != geo.ndie:
        return None
    n_map = w[5]
    i = 6
    plan = []
    for _ in range(geo.ndie):
        n = w[i]
        plan.append(w[i + 1:i + 1 + n])
        i += 1 + n
    mapping = {}
    for _ in range(n_map):
        mapping[w[i]] = w[i + 1]
        i += 2
    return plan, mapping


@dataclass
class Checkpoint:
    seq_base: int
    scan_from: int
    plan: list[list[int]]
    mapping: dict[int, int]
    version: int = 1
    ckpt_no: int = 0
    bad: list[int] = field(default_factory=list)            # (die << 16) | block
    erase_cnt: list[int] = field(default_factory=list)
    slog_lpgn: int = 0                                      # version 3: the next LPGN
    slog: dict[int, tuple[int, list[FragLoc]]] = field(default_factory=dict)   # lpn -> (base, F)


def parse_checkpoint_v2(geo: Geometry, pages: list[bytes], seq: int) -> Checkpoint | None:
    """Version 2 (persistence.md section 5): pages each with the header magic, 2, index, count;
    their payloads concatenated give the word stream. Version 3 (section 10.4): the same with the
    S-Log section after the mapping pairs."""
    stream: list[int] = []
    version = int.from_bytes(pages[0][4:8], "little")
    for i, data in enumerate(pages):
        w = [int.from_bytes(data[k:k + 4], "little") for k in range(0, len(data), 4)]
        if w[0] != CP_MAGIC or w[1] != version or version not in (2, 3) or w[2] != i or w[3] != len(pages):
            return None
        stream += w[4:]
    it = iter(stream)
    try:
        ndie, blocks, ppb, n_map = next(it), next(it), next(it), next(it)
        if (ndie, blocks, ppb) != (geo.ndie, geo.blocks, geo.ppb):
            return None
        scan_from = next(it) | next(it) << 32
        ckpt_no, n_bad = next(it), next(it)
        plan = []
        for _ in range(ndie):
            n = next(it)
            plan.append([next(it) for _ in range(n)])
            if n > blocks or any(b >= blocks for b in plan[-1]):
                return None                 # section 6 step 1: a plan past the die does not parse
        bad = [next(it) for _ in range(n_bad)]
        ec: list[int] = []
        for _ in range((ndie * blocks + 1) // 2):
            x = next(it)
            ec += [x & 0xFFFF, x >> 16]
        mapping = {}
        for _ in range(n_map):
            lpn = next(it)
            mapping[lpn] = next(it)
        slog_lpgn, slog = 0, {}
        if version == 3:
            slog_lpgn, nsl = next(it), next(it)
            for _ in range(nsl):
                lpn, base, nf = next(it), next(it), next(it)
                fr = [(next(it), next(it), next(it)) for _ in range(nf)]
                sq = [next(it) | next(it) << 32 for _ in range(nf)]
                # an unknown page (section 10.4): PPN 0xFFFFFFFF, lg16 (bits 31:16 of the third word)
                # extended to the newest LPGN below slog_lpgn; lg16 of any other PPN (0 from a correct
                # writer) is not used (this reader is lenient)
                slog[lpn] = (base, [FragLoc(p, d & 0xFFFF, ol & 0xFFFF, ol >> 16, s,
                                            lpgn_ext_back(d >> 16, slog_lpgn) if p == UNKNOWN_PPN else None)
                                    for (p, ol, d), s in zip(fr, sq)])
    except StopIteration:
        return None
    if scan_from > seq:
        return None
    return Checkpoint(seq, scan_from, plan, mapping, version, ckpt_no, bad, ec[:ndie * blocks], slog_lpgn, slog)


def checkpoint_blocks(geo: Geometry, die0: DieImage) -> tuple[int, int]:
    """Persistence.md section 5: die 0 block 0 and the first block after it without the factory bad
    mark (block 1 unless it is factory bad)."""
    second = next((b for b in range(1, geo.blocks) if not die0.bad[b]), 1)
    return 0, second


def find_checkpoint(geo: Geometry, die0: DieImage, rec) -> Checkpoint | None:
    """Persistence.md section 6 step 1: die 0 block 0, and the second checkpoint block (block 1, or
    the first good one after it) unless block 0 holds a version-1 checkpoint (version 2 alternates
    between the two blocks); in each, pages in order up to the first erased one. The valid
    checkpoint with the highest seq wins (then the highest number)."""
    best: Checkpoint | None = None
    v1_in_block0 = False
    for blk in checkpoint_blocks(geo, die0):
        if blk != 0 and v1_in_block0:
            break
        cand: dict[int, dict[int, bytes]] = {}       # seq -> index -> data (version 2)
        count: dict[int, int] = {}
        for pg in range(geo.ppb):
            raw = die0.row(blk, pg)
            rec.pages_read += 1
            if raw is None:
                break
            dec = _decode(geo, raw)
            if dec is None or dec[0].kind != KIND_CKPT:
                continue
            m, data = dec
            ver = int.from_bytes(data[4:8], "little")
            if ver == 1:
                cp = parse_checkpoint(geo, data)
                if cp is None:
                    continue
                v1_in_block0 |= blk == 0
                c = Checkpoint(m.seq, m.seq, cp[0], cp[1], 1)
            elif ver in (2, 3):
                idx, n = int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")
                cand.setdefault(m.seq, {})[idx] = data
                count[m.seq] = n
                if len(cand[m.seq]) != n or sorted(cand[m.seq]) != list(range(n)):
                    continue
                c = parse_checkpoint_v2(geo, [cand[m.seq][i] for i in range(n)], m.seq)
                if c is None:
                    continue
            else:
                continue
            if best is None or (c.seq_base, c.ckpt_no) >= (best.seq_base, best.ckpt_no):
                best = c
    return best


def checkpoint_pages_v2(geo: Geometry, plan: list[list[int]], mapping: dict[int, int], seq_base: int,
                        scan_from: int | None = None, ckpt_no: int = 1, bad: list[int] | None = None,
                        erase_cnt: list[int] | None = None,
                        slog: tuple[int, dict[int, tuple[int, list[FragLoc]]]] | None = None) -> list[bytes]:
    """Version 2 (persistence.md section 5): the word stream cut into pages, each with the header
    magic, 2, index, count; the last page zero-padded. With `slog` = (next LPGN, {lpn: (base, F)}):
    version 3, the S-Log section (section 10.4) after the mapping pairs."""
    scan_from = seq_base if scan_from is None else scan_from
    bad = bad or []
    ec = erase_cnt or [0] * (geo.ndie * geo.blocks)
    ec = ec + [0] * (len(ec) % 2)
    words = [geo.ndie, geo.blocks, geo.ppb, len(mapping), scan_from & 0xFFFFFFFF, scan_from >> 32, ckpt_no, len(bad)]
    for d in range(geo.ndie):
        words += [len(plan[d])] + list(plan[d])
    words += list(bad)
    words += [ec[i] | ec[i + 1] << 16 for i in range(0, len(ec), 2)]
    for lpn in sorted(mapping):
        words += [lpn, mapping[lpn]]
    if slog is not None:
        words += [slog[0], len(slog[1])]
        for lpn in sorted(slog[1]):
            base, fr = slog[1][lpn]
            words += [lpn, base, len(fr)]
            for f in fr:
                lg16 = 0
                if f.ppn == UNKNOWN_PPN:             # section 10.4: only within 2^16 LPGNs below slog_lpgn
                    if f.lpgn is None or not 1 <= (slog[0] - f.lpgn) & 0xFFFFFFFF <= LG16:
                        raise ValueError(f"lpn {lpn}: unknown page LPGN {f.lpgn} not in [slog_lpgn - 2^16, "
                                         f"slog_lpgn - 1] (slog_lpgn {slog[0]})")
                    lg16 = f.lpgn & 0xFFFF
                words += [f.ppn, f.off | f.len << 16, f.doff | lg16 << 16]
            for f in fr:
                words += [f.seq & 0xFFFFFFFF, f.seq >> 32]
    per = geo.page_bytes // 4 - 4
    n = max(1, -(-len(words) // per))
    out = []
    for i in range(n):
        w = [CP_MAGIC, 2 if slog is None else 3, i, n] + words[i * per:(i + 1) * per]
        w += [0] * (geo.page_bytes // 4 - len(w))
        out.append(b"".join(x.to_bytes(4, "little") for x in w))
    return out


def format_images(paths: list[Path], geo: Geometry, plan: list[list[int]], seq_base: int = 0,
                  mapping: dict[int, int] | None = None, version: int = 1) -> None:
    """Offline format: every die erased, the checkpoint (plan, empty mapping) in die 0 block 0 from
    page 0 (version 1: one page; version 2: as many pages as its stream needs, checkpoint number 1)."""
    fmt = PageFormat(geo.page_bytes, geo.spare_bytes)
    for d, p in enumerate(paths):
        pages = {}
        if d == 0:
            meta = Meta(lpn=0xFFFFFFFF, txid=0, kind=KIND_CKPT, seq=seq_base, epoch=0, flags=0)
            if version == 1:
                pages[0] = fmt.image(checkpoint_data(geo, plan, mapping or {}, seq_base), meta)
            else:
                for i, data in enumerate(checkpoint_pages_v2(geo, plan, mapping or {}, seq_base)):
                    pages[i] = fmt.image(data, meta)
        write_image(p, geo, pages)


# --------------------------------------------------------------------------------------------------
@dataclass
class Record:
    seq: int
    die: int
    block: int
    page: int
    lpn: int
    txid: int
    kind: int
    epoch: int
    flags: int
    data: bytes


@dataclass
class Recovered:
    mapping: dict[int, int] = field(default_factory=dict)     # lpn -> ppn
    records: list[Record] = field(default_factory=list)       # the durable prefix, in seq order
    prefix_end: int = 0                                       # first seq not in the prefix
    max_seq_seen: int = -1
    pages_read: int = 0
    torn: int = 0                                             # pages read that failed the CRC
    beyond_prefix: int = 0                                    # valid records after the first gap
    aborted_tx: int = 0                                       # open transactions dropped
    ignored: int = 0                                          # prefix records with a txid above num_tx
    commits: int = 0                                          # tx commits replayed
    aborts: int = 0                                           # tx aborts replayed
    relocs: int = 0                                           # GC relocations applied
    plan: list[list[int]] = field(default_factory=list)
    checkpoint: "Checkpoint | None" = None
    dies: list[DieImage] = field(default_factory=list)        # the images recovery read
    # the S-Log (persistence.md section 10)
    frags: dict = field(default_factory=dict)                 # lpn -> [FragLoc] (F), in commit order
    next_lpgn: int = 0                                        # the backend's LPGN counter after recovery
    slog_commits: int = 0                                     # records applied in the prefix
    slog_after_gap: int = 0                                   # complete records applied after the gap
    slog_incomplete: int = 0                                  # records after the gap not applied
    slog_flag_skips: int = 0                                  # full-page checks a completeness flag replaced
    slog_bad: int = 0                                         # log pages / records that do not parse
    slog_partial: int = 0                                     # records whose log pages are not all valid
    slog_full_mismatch: int = 0                               # prefix records whose full META-PUs differ from t's pending pages
    slog_full_failed: int = 0                                 # prefix full META-PUs naming a failed first program (10.2)
    slog_mismatch_info: list = field(default_factory=list)    # (txid, lpn, META-PU's PPN, pending page's PPN or None)
    slog_failed_info: list = field(default_factory=list)      # the same for the META-PUs counted in slog_full_failed
    merges: int = 0                                           # MERGE pages applied


def _decode(geo: Geometry, raw: bytes):
    """(Meta, data) if the page's CRC-32C holds, else None. Raw bytes: no ECC correction (runs with
    bit flips check reads through the controller instead)."""
    data, spare = raw[:geo.page_bytes], raw[geo.page_bytes:]
    mb = spare[1:20]
    crc = int.from_bytes(spare[20:24], "little")
    if crc32c(data + mb) != crc:
        return None
    m = Meta(lpn=int.from_bytes(mb[0:4], "little"), txid=mb[4], kind=mb[5],
             seq=int.from_bytes(mb[6:14], "little"), epoch=int.from_bytes(mb[14:18], "little"), flags=mb[18])
    return m, data


def recover(paths: list[Path], geo: Geometry, num_tx: int | None = None, use_flags: bool = True,
            failed: set[int] | None = None) -> Recovered:
    """num_tx: the device's transaction count; a record whose txid is above it changes nothing
    (persistence.md section 4; counted in `ignored`). None: every txid is taken as valid.
    failed: PPNs whose program may have failed (the test's fault model: e.g. every page of the blocks
    reported grown bad). A prefix record's full META-PU names the PPN of its page's first program
    (section 10.2): the pending page's PPN, or, when that program failed and the page was programmed
    again elsewhere, the failed copy: accepted only if it is in `failed` and is not a valid kept page
    (None: no PPN is taken as failed). Anything else counts in `slog_full_mismatch`.
    use_flags: S-Log records after the gap whose completeness flag a later record carries skip the
    full-page check (section 10.5 step 3); False always checks the full pages (the same result on
    images a correct device wrote)."""
    dies = [DieImage(p, geo) for p in paths]
    rec = Recovered(dies=dies)
    # 1. checkpoint (version 1: die 0 block 0; version 2: blocks 0 and 1 of die 0)
    cp = find_checkpoint(geo, dies[0], rec)
    if cp is None:
        raise RuntimeError("no checkpoint: device not formatted")
    seq_base, scan_from, plan = cp.seq_base, cp.scan_from, cp.plan
    rec.checkpoint = cp
    rec.plan = plan
    rec.mapping = dict(cp.mapping)
    # 2. scan the active log: per die the planned blocks in order, each up to its first erased page;
    #    a block whose page 0 is erased was never opened: the die's log ends there
    found: dict[int, Record] = {}
    by_ppn: dict[int, Record] = {}                    # every valid kept page (section 10.5's full-page check)
    max_lpgn = -1
    for d in range(geo.ndie):
        for blk in plan[d]:
            opened = True
            for pg in range(geo.ppb):
                raw = dies[d].row(blk, pg)
                rec.pages_read += 1
                if raw is None:
                    opened = pg != 0
                    break
                dec = _decode(geo, raw)
                if dec is None:
                    rec.torn += 1
                    continue
                m, data = dec
                if m.kind not in (KIND_DATA, KIND_LOG):
                    continue
                rec.max_seq_seen = max(rec.max_seq_seen, m.seq)
                if (m.kind == KIND_LOG and m.flags & F_SLOG
                        and log_page(data, m.seq, geo.ppn(d, blk, pg), m.epoch, geo.page_bytes) is not None):
                    max_lpgn = max(max_lpgn, m.epoch)   # well-formed log pages only (section 10.5 step 4)
                if m.seq < scan_from:
                    continue
                found[m.seq] = by_ppn[geo.ppn(d, blk, pg)] = Record(m.seq, d, blk, pg, m.lpn, m.txid, m.kind,
                                                                    m.epoch, m.flags, data)
            if not opened:
                break
    # 3. the durable prefix: scan_from, scan_from + 1, ... without a gap
    n = scan_from
    while n in found:
        rec.records.append(found[n])
        n += 1
    rec.prefix_end = n
    rec.beyond_prefix = sum(1 for s in found if s >= n)
    # the S-Log's records (section 10.1, 10.2): every log page kept, every record complete in them
    st = SlogState(rec.mapping, {})
    for lpn, (base, fr) in cp.slog.items():         # version 3: exact at seq_base
        st.l2p[lpn] = base
        st.F[lpn] = list(fr)
    lpages = {}
    for s in sorted(found):
        r = found[s]
        if r.kind == KIND_LOG and r.flags & F_SLOG:
            lp = log_page(r.data, r.seq, geo.ppn(r.die, r.block, r.page), r.epoch, geo.page_bytes)
            if lp is None or lp.lpgn in lpages:
                rec.slog_bad += 1
                continue
            lpages[lp.lpgn] = lp
    slog_recs, nbad, rec.slog_partial = find_records(lpages, geo.page_bytes)
    rec.slog_bad += nbad
    by_commit: dict[int, list] = {}      # commit point -> its records in stream order (packed records share one)
    for r in slog_recs:
        by_commit.setdefault(r.commit_seq, []).append(r)
    rec.next_lpgn = max(max_lpgn + 1, cp.slog_lpgn)
    ppn_of = lambda r: geo.ppn(r.die, r.block, r.page)     # noqa: E731

    def full_meta_ok(m1: int, p: Record) -> bool:
        """section 10.2: m1 = the PPN of p's page's first program: p itself, a kept copy with p's seq,
        or a failed program's copy (in `failed`, not a valid kept page)"""
        if m1 == ppn_of(p) or getattr(by_ppn.get(m1), "seq", None) == p.seq:
            return True
        if failed is not None and m1 in failed and m1 not in by_ppn:
            rec.slog_full_failed += 1
            rec.slog_failed_info.append((p.txid, p.lpn, m1, ppn_of(p)))
            return True
        return False
    # 4. replay in seq order; transactions apply at their commit record, open ones are dropped
    pending: dict[int, list[Record]] = {}
    for r in rec.records:
        if num_tx is not None and r.txid > num_tx:
            rec.ignored += 1                  # not the device's: keeps its seq, changes nothing
            continue
        srs = by_commit.get(r.seq, []) if r.kind == KIND_LOG and r.flags & F_SLOG else []
        if num_tx is not None:
            rec.ignored += sum(1 for x in srs if x.txid > num_tx)
            srs = [x for x in srs if x.txid <= num_tx]
        if r.seq < seq_base:
            # before the checkpoint (version 2, transactions open at it): only the pending lists
            if r.kind == KIND_DATA and r.txid != 0:
                pending.setdefault(r.txid, []).append(r)
            if r.txid != 0 and r.flags & (F_ABORT | F_COMMIT):
                pending.pop(r.txid, None)
            for sr in srs:
                pending.pop(sr.txid, None)
            continue
        if r.kind == KIND_LOG and r.flags & F_TRIM:
            st.trim(r.lpn)
        elif r.kind == KIND_LOG and r.flags & F_SLOG:
            for sr in srs:
                # the record's commit point: t commits as at a COMMIT (its pending pages in seq order),
                # then its fragments are appended (section 10.5 step 2); records packed into one page
                # share it and are applied in stream order
                newest = {}
                for p in pending.pop(sr.txid, []):
                    st.map_full(p.lpn, ppn_of(p))
                    newest[p.lpn] = p
                fulls = {m.lpn: m.ppn for m in sr.metas if not m.is_diff}
                bad = [(sr.txid, l, fulls.get(l), ppn_of(newest[l]) if l in newest else None)
                       for l in sorted(set(fulls) | set(newest))
                       if l not in fulls or l not in newest or not full_meta_ok(fulls[l], newest[l])]
                if bad:
                    rec.slog_full_mismatch += 1
                    rec.slog_mismatch_info += bad
                st.apply_record(sr, fulls=False)
                rec.slog_commits += 1
        elif r.kind == KIND_DATA and r.txid == 0 and r.flags & F_RELOC and r.flags & F_SLOG:
            rec.merges += st.merge(r.lpn, r.epoch, ppn_of(r), r.seq)
        elif r.kind == KIND_DATA and r.txid == 0 and r.flags & F_RELOC:
            # a GC relocation: applied only if the LPN still maps to the page it copied (epoch field)
            if rec.mapping.get(r.lpn) == r.epoch:
                rec.mapping[r.lpn] = geo.ppn(r.die, r.block, r.page)
                rec.relocs += 1
        elif r.kind == KIND_DATA and r.txid == 0:
            st.map_full(r.lpn, ppn_of(r))
        elif r.kind == KIND_DATA:
            pending.setdefault(r.txid, []).append(r)
        # a tx ends at a record (kind 1, no LPN) or a data page of it that carries the flag
        if r.txid != 0 and r.flags & F_ABORT:
            pending.pop(r.txid, None)
            rec.aborts += 1
        elif r.txid != 0 and r.flags & F_COMMIT:
            for p in pending.pop(r.txid, []):
                st.map_full(p.lpn, ppn_of(p))
            rec.commits += 1
    # 5. after the gap (section 10.5 step 3): complete S-Log records, in commit-point order
    flags = {c for r in slog_recs for c in r.cflags}
    for sr in sorted((r for r in slog_recs if r.commit_seq >= rec.prefix_end), key=lambda r: r.commit_seq):
        if num_tx is not None and sr.txid > num_tx:
            continue
        if use_flags and sr.key in flags:
            full_ok = True
            rec.slog_flag_skips += 1
        else:
            full_ok = all(
                (p := by_ppn.get(m.ppn)) is not None and p.kind == KIND_DATA and p.txid == sr.txid
                and p.lpn == m.lpn and not p.flags & (F_COMMIT | F_ABORT) and p.seq < sr.first_seq
                for m in sr.metas if not m.is_diff)
        if full_ok and st.bases_ok(sr):
            st.apply_record(sr)
            pending.pop(sr.txid, None)
            rec.slog_after_gap += 1
        else:
            rec.slog_incomplete += 1
    rec.frags = st.F
    rec.aborted_tx = len(pending)
    return rec


def read_lpn(geo: Geometry, rec: Recovered, lpn: int) -> bytes | ReadStatus | None:
    """Data of `lpn` in the recovered state (None = unmapped), from the images recovery read: the
    mapped page with the LPN's S-Log fragments applied in order (section 10.5 "Reads after recovery");
    MEDIA_ERROR (a ReadStatus, not data) when its fragments include a checkpoint's unknown page
    (section 10.4: the device answers MEDIA_ERROR)."""
    def page(ppn: int) -> bytes:
        d, blk, pg = geo.unppn(ppn)
        raw = rec.dies[d].row(blk, pg)
        assert raw is not None, f"lpn {lpn}: page {ppn:#x} is erased"
        return raw[:geo.page_bytes]
    return read_merged(page, rec.mapping.get(lpn), rec.frags.get(lpn, []))


def slog_records_on_dies(rec, geo: Geometry) -> list:
    """Every complete S-Log record in the dies' planned blocks, in the durable prefix or not: the
    scan of persistence section 10.1 over `rec.dies` / `rec.plan` (a `recover` result), for tests'
    coverage counts (which records the device wrote), not for recovery."""
    pages = {}
    for ppn, meta, data in pages_on_dies(rec, geo):
        if meta.kind == KIND_LOG and meta.flags & F_SLOG:
            lp = log_page(data, meta.seq, ppn, meta.epoch, geo.page_bytes)
            if lp is not None:
                pages[lp.lpgn] = lp
    return find_records(pages, geo.page_bytes)[0]


def pages_on_dies(rec, geo: Geometry):
    """Every page of the dies' planned blocks that decodes (ECC and metadata), in plan order, each
    block up to its first erased page: (ppn, meta, data), from `rec.dies` / `rec.plan` (a `recover`
    result); for tests' coverage counts, not for recovery."""
    for d, blocks in enumerate(rec.plan):
        for blk in blocks:
            for pg in range(geo.ppb):
                raw = rec.dies[d].row(blk, pg)
                if raw is None:
                    break
                dec = _decode(geo, raw)
                if dec is not None:
                    yield geo.ppn(d, blk, pg), dec[0], dec[1]


# ---- the firmware's page reads in section 6 step 2 (the "Old pages" rule), counted from the images
def _looks_erased_state(geo: Geometry, raw: bytes | None) -> str:
    """Section 2's erased-page rule on a raw row: 'erased' when every codeword has at most 8 zero bits
    (an absent row is all 0xFF), 'invalid' when some do and others do not, else 'programmed'."""
    if raw is None:
        return "erased"
    data, spare = raw[:geo.page_bytes], raw[geo.page_bytes:]

    def zeros(b: bytes) -> int:
        return len(b) * 8 - int.from_bytes(b, "little").bit_count()

    words = [spare[1:37]]
    for s in range(geo.page_bytes // 512):
        words.append(data[512 * s:512 * (s + 1)] + spare[37 + 13 * s:50 + 13 * s])
    flags = [zeros(w) <= 8 for w in words]
    return "erased" if all(flags) else "invalid" if any(flags) else "programmed"


def scan_reads(paths: list[Path], geo: Geometry, slog_device: bool) -> dict:
    """What the firmware's section 6 step 2 reads on these images (persistence.md section 6 "Old
    pages"): per die, per plan block in order, page 0, then (the skip taken: scan_from = seq_base > 0,
    and a version-3 checkpoint on a device with the S-Log; page 0 valid, kind 0/1, seq below
    seq_base) the binary search's probes and the pages from its result on, else pages 1, 2, ...; each
    block up to its first erased page, a die's plan ending at a block whose page 0 is erased.
    Returns {'pages': reads, 'searched': blocks searched, 'unread': pages 1..result-1 not probed}.
    Without ECC: a page with 1-8 stored bit errors in a codeword, which the firmware corrects,
    counts here as invalid (and one with an intact CRC and more errors in its parity as valid); the
    die model stores none (torn pages and indeterminate blocks are random bits, read flips happen per
    read), so on its images the firmware's numbers are these (tests/system/test_scan_rule_indep.py)."""
    dies = [DieImage(p, geo) for p in paths]
    scratch = Recovered(dies=dies)
    cp = find_checkpoint(geo, dies[0], scratch)
    if cp is None:
        raise RuntimeError("no checkpoint: device not formatted")
    skip = cp.scan_from == cp.seq_base and cp.seq_base > 0 and (not slog_device or cp.version == 3)
    out = {"pages": 0, "searched": 0, "unread": 0}

    def state(d: int, blk: int, pg: int):
        raw = dies[d].row(blk, pg)
        st = _looks_erased_state(geo, raw)
        dec = _decode(geo, raw) if st == "programmed" else None
        return st, dec

    def old(d: int, blk: int, pg: int) -> bool:
        out["pages"] += 1
        st, dec = state(d, blk, pg)
        return dec is not None and dec[0].kind in (KIND_DATA, KIND_LOG) and dec[0].seq < cp.seq_base

    for d in range(geo.ndie):
        for blk in cp.plan[d]:
            pg, opened = 0, True
            while pg < geo.ppb:
                out["pages"] += 1
                st, dec = state(d, blk, pg)
                if st == "erased":
                    opened = pg != 0
                    break
                if (pg == 0 and skip and dec is not None and dec[0].kind in (KIND_DATA, KIND_LOG)
                        and dec[0].seq < cp.seq_base):
                    lo, hi, n_old = 0, geo.ppb, 0
                    while hi - lo > 1:
                        mid = lo + (hi - lo) // 2
                        if old(d, blk, mid):
                            lo, n_old = mid, n_old + 1
                        else:
                            hi = mid
                    out["searched"] += 1
                    out["unread"] += lo - n_old          # pages 1..lo not probed (every probe there was old)
                    pg = lo + 1
                    continue
                pg += 1
            if not opened:
                break
    return out
