# SPDX-License-Identifier: Apache-2.0
"""B4's workload shapes (DiffTx, seed 002, Table 3 and Fig. 2) and the generator of transactions.

A transaction is a list of page updates to distinct LPNs. An update is either
  full     the whole page (a WRITE; also every update of THRESHOLD bytes or more: DiffTx sends those
           as full pages, section 4.1 of the paper), or
  partial  `length` bytes at `offset` of the page, length < THRESHOLD (a DIFFWRITE).
Offsets and lengths are multiples of 4 (the device's DIFFWRITE granularity, docs/architecture.md §1).

Pages per transaction: Table 3's averages (varmail 17.5, TPC-C 18.0, fileserver 6151.1, webproxy
1239.6). The count of a transaction is drawn as x uniform on [m - w, m + w] (continuous) rounded down
or up with the probability of its fraction, so that E[pages] = m exactly for any w < m.

The partial-update proportions are assumptions: Fig. 2 (the CDF of update sizes per page) is an
image that the seed's text does not carry. What the text says and what is assumed from it:
  fileserver  "either full page updates ... or partial page updates with extreme small writes ...
              tens of bytes" (section 4.4); data pages written fully (section 2.3): 20 % partial of
              16-124 bytes, 80 % full;
  varmail     "most pages in varmail have update size larger than 512 B" (section 4.3): 35 % partial
              of 64-508 bytes, 65 % full (most of them 512 B - 4 KiB updates, sent as full pages);
  webproxy    metadata partial, data full, like fileserver with more metadata: 30 % partial of
              16-252 bytes, 70 % full;
  TPC-C       "the size of a record is only several bytes" (section 2.3), most pages updated
              partially: 70 % partial of 8-400 bytes, 30 % full.
Partial sizes are uniform over the multiples of 4 in the range; the offset is uniform over the
4-aligned offsets that keep the update inside the page. Partial updates go to a "metadata" pool of
LPNs (written before the measurement, so a DIFFWRITE's base page is on the media), full updates to a
"data" pool; the LPNs of one transaction are distinct.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

THRESHOLD = 512          # bytes: an update below it is partial (the paper's default; a parameter)
PAGE_BYTES = 4096        # the b5_256 device's page (= LBA)


@dataclass(frozen=True)
class Shape:
    name: str
    pages_mean: float            # Table 3: average pages per transaction
    pages_spread: float          # w: pages uniform on [mean - w, mean + w] before rounding
    partial_frac: float          # fraction of page updates that are partial (assumption, module doc)
    partial_min: int             # bytes, multiple of 4
    partial_max: int             # bytes, multiple of 4, < THRESHOLD
    meta_pool: int               # LPNs the partial updates draw from
    data_pool: int               # LPNs the full updates draw from
    table3_txs: int              # Table 3: transactions in the paper's trace (for the record)


SHAPES = {
    "varmail": Shape("varmail", 17.5, 8.5, 0.35, 64, 508, 256, 1024, 60_227),
    "tpcc": Shape("tpcc", 18.0, 9.0, 0.70, 8, 400, 512, 512, 78_129),
    "fileserver": Shape("fileserver", 6151.1, 200.0, 0.20, 16, 124, 1536, 6144, 52),
    "webproxy": Shape("webproxy", 1239.6, 100.0, 0.30, 16, 252, 512, 1536, 1_045),
}


@dataclass(frozen=True)
class Update:
    lpn: int
    full: bool
    offset: int = 0
    length: int = PAGE_BYTES

    @property
    def app_bytes(self) -> int:
        """The update's share of the workload's bytes (the paper's write-amplification denominator:
        a page for a full update, the differential bytes for a partial one)."""
        return PAGE_BYTES if self.full else self.length


def tx_pages(shape: Shape, rng: random.Random, scale: float = 1.0) -> int:
    """Pages of one transaction: E = shape.pages_mean * scale (at least 1)."""
    m, w = shape.pages_mean * scale, shape.pages_spread * scale
    x = m + w * (2 * rng.random() - 1)
    n = math.floor(x) + (1 if rng.random() < x - math.floor(x) else 0)
    return max(1, n)


def gen_tx(shape: Shape, rng: random.Random, scale: float = 1.0, meta_base: int = 0,
           data_base: int = 0) -> list[Update]:
    """One transaction: its updates in submission order (partial and full interleaved as drawn)."""
    n = tx_pages(shape, rng, scale)
    kinds = [rng.random() < shape.partial_frac for _ in range(n)]
    n_part = sum(kinds)
    if n_part > shape.meta_pool or n - n_part > shape.data_pool:
        raise ValueError(f"{shape.name}: {n_part} partial / {n - n_part} full pages do not fit the pools "
                         f"({shape.meta_pool} / {shape.data_pool})")
    metas = iter(rng.sample(range(shape.meta_pool), n_part))
    datas = iter(rng.sample(range(shape.data_pool), n - n_part))
    out = []
    for part in kinds:
        if part:
            length = 4 * rng.randint(shape.partial_min // 4, shape.partial_max // 4)
            offset = 4 * rng.randint(0, (PAGE_BYTES - length) // 4)
            out.append(Update(meta_base + next(metas), False, offset, length))
        else:
            out.append(Update(data_base + next(datas), True))
    return out


def gen_workload(shape: Shape, txs: int, seed: int, scale: float = 1.0, meta_base: int = 0,
                 data_base: int = 0) -> list[list[Update]]:
    rng = random.Random(f"{shape.name}/{seed}")
    return [gen_tx(shape, rng, scale, meta_base, data_base) for _ in range(txs)]


def split_for_device(tx: list[Update], entries: int) -> list[list[Update]]:
    """A paper transaction as device transactions of at most `entries` pages (the device's tx
    tables hold `tx_entries` pages, IDENTIFY word 10); each part ends with a full update when it has
    one, so that its commit rides on that page (COMMIT flag) instead of a TX_COMMIT record page."""
    parts = [tx[i:i + entries] for i in range(0, len(tx), entries)]
    out = []
    for p in parts:
        k = max((i for i, u in enumerate(p) if u.full), default=None)
        if k is not None and k != len(p) - 1:
            p = p[:k] + p[k + 1:] + [p[k]]
        out.append(p)
    return out
