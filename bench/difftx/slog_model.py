# SPDX-License-Identifier: Apache-2.0
"""B4 (a) as a **model, not measured**: the NAND bytes the S-Log would program for a workload, from
the S-Log reference's record encoder (cocotb_tests/lib/atstb/slog_ref.py, docs/persistence.md §10)
and the rules of docs/architecture.md §11, until the device writes the S-Log.

Per device transaction (the workload's split into parts of at most `tx_entries` pages, as the bench
runs them): its full updates are full pages of the transaction (one program each); its partial
updates are fragments, unless the LPN already holds `SLOG_FRAGS` fragments, when the write buffer
takes today's read-modify-write path (§11.3 step 5: a full page); the record (header, one META-PU per
full page and per fragment, the fragments' bytes) is packed by `LogWriter` exactly as the format says
(each record from a fresh log page): REC-LEN log pages. A full page of an LPN frees its fragments.
Merges: the firmware's budget (§11.6, `SlogState.merges_needed`: above `SLOG_HI` live log pages or an
index above 3/4 of `SLOG_LPNS`, down to `SLOG_LO` / half), one page program each. Not modelled:
checkpoints (their pages are in the measured modes' figures), GC, program failures, NAND reads.
The workload's bytes (the denominator of WA) are the bench's: 4 KiB per full update + the partial
update's bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "cocotb_tests/lib") not in sys.path:
    sys.path.insert(0, str(ROOT / "cocotb_tests/lib"))

from atstb.slog_ref import Frag, FragLoc, LogWriter, SlogState  # noqa: E402

SLOG_FRAGS, SLOG_LPNS = 4, 256                 # docs/architecture.md §11.1 defaults (slog_nand's `lpns`:
                                               # B4's b5_256_slog has 1,024, soc/ats_litex.py slog_lpns)
SLOG_HI, SLOG_LO = 192, 128
NOTE = ("model, not measured: the S-Log's NAND bytes from the reference encoder (bench/difftx/slog_model.py); "
        "checkpoints, GC and timing not modelled; tps not modelled")


def slog_nand(txs, split, entries: int, page_bytes: int, frag_slots: int | None = None,
              txfull: int | None = None, lpns: int = SLOG_LPNS, records: list | None = None) -> dict:
    """txs: the workload (lists of Update: lpn, full, offset, length); split(tx, entries) -> parts.
    frag_slots: the write buffer's FRAG slots (None: unlimited): a part's partial update of a new LPN
    when they are all taken is a full page (§11.3 step 5, today's path). txfull: a part with more full
    pages (conversions included) sends no record: every fragment of it a full page (the plain commit).
    lpns: the index's entries (the merge budget's 3/4 trigger; the model has no sets). records: when a
    list, each record's (workload transaction index, part index, full LPNs, fragments) is appended to
    it in workload order (group_commit_model.py replays them). Returns the model's counts and bytes."""
    st = SlogState()
    w = LogWriter(page_bytes)
    full_pages = log_pages = merges = fallbacks = app = 0
    for ti, tx in enumerate(txs):
        for pi, part in enumerate(split(tx, entries)):
            fulls, frags = [], []
            k: dict[int, int] = {}
            for u in part:
                app += u.app_bytes
                n = k.get(u.lpn, len(st.F.get(u.lpn, [])))
                if u.full or n >= SLOG_FRAGS or (frag_slots is not None and u.lpn not in k
                                                   and len(k) >= frag_slots):
                    fallbacks += not u.full
                    fulls.append(u.lpn)
                else:
                    frags.append(Frag(u.lpn, 0, n + 1, u.offset, bytes(u.length)))
                    k[u.lpn] = n + 1
            if txfull is not None and frags and len(fulls) > txfull:
                fallbacks += len(frags)                 # no record: the FRAG slots converted
                fulls += [f.lpn for f in frags]
                frags = []
            full_pages += len(fulls)
            for l in fulls:
                st.map_full(l, 0)
            if not frags:
                continue                        # no fragment: commits as today (COMMIT on its last page)
            if records is not None:
                records.append((ti, pi, list(fulls), list(frags)))
            n0 = len(w.stream) // w.P
            rec = w.add(1, [(l, 0) for l in fulls], frags)
            assert rec.first_lpgn == n0
            log_pages += rec.reclen
            P = w.P
            for m in rec.metas:
                if m.is_diff:
                    st.F.setdefault(m.lpn, []).append(FragLoc(rec.first_lpgn + (m.dloc // P), 0, m.off, m.len,
                                                              rec.first_lpgn))
            for l in st.merges_needed(SLOG_HI, SLOG_LO, lpns):
                st.F.pop(l, None)
                merges += 1
    pages = full_pages + log_pages + merges
    return {"note": NOTE, "nand_bytes": pages * page_bytes, "full_pages": full_pages, "log_pages": log_pages,
            "merges": merges, "fragment_fallbacks": fallbacks, "app_bytes": app,
            "wa": pages * page_bytes / app if app else None}


def shadow_nand(txs, page_bytes: int) -> int:
    """Full-page shadowing in the same model: one program per updated page (the COMMIT on the last)."""
    return sum(len(tx) for tx in txs) * page_bytes
