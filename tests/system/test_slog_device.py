# SPDX-License-Identifier: Apache-2.0
"""The S-Log written by the device itself, on the whole SoC (issue 40; docs/architecture.md §11): the
`sim_slog` configuration (4 FRAG slots, the firmware sets SLOG_THR = 512 at boot: a DIFFWRITE shorter
than 496 bytes becomes an S-Log fragment), DIFFWRITE-heavy transactions through the host port, power
cuts at random cycles, the firmware's recovery of the device's own records (docs/persistence.md §10.5).

Workload per power cycle (queue depth up to 16): transactions on txids 1..4 of 1-3 LBAs, each LBA 1-3
DIFFWRITEs of 4-60 bytes (fragments, or read-modify-writes when the FRAG slots, the index room or the
transaction's record cannot take them), half with a full page WRITE of another LBA (its record then
names that page too: a full-page META-PU beside the fragments, §11.3, §11.4), ended by TX_COMMIT (85 %) or TX_ABORT;
plain WRITEs (some FUA), TRIMs, FLUSHes and READs of LBAs no transaction holds. One command at a time
per transaction (its DIFFWRITEs of one LBA apply in order), the others concurrent. Then a power cut at a
random cycle (60 %) or after every command completed, and the recovery. In 3 of 4 cycles (and in the
last one while no checkpoint held fragments) a checkpoint (console `ckpt`) halfway or later through the
workload, every command completed: the checkpoint's S-Log section comes from the backend's index
(sw/firmware/ckpt.c `ckpt_slog_hw`, docs/persistence.md §10.4), i.e. from fragments the device logged
itself; `ckpt: 0` is required, the cut falls after it (in the second phase or after it), and the
recovery starts from that checkpoint, so a fragment committed before it and not replaced since must
come back from its S-Log section (INV-DUR below: a checkpoint with an empty section, or without the
fragments the firmware's own table does not know, fails it).

Reference (plain Python): each LBA's version chain (tests/system/slog_chain.py, from docs/invariants.md
"S-Log": a full version or zeros, then committed fragments in commit order). After every recovery every
LBA of the pool is read through the host port and must be
- the recovery oracle's page (cocotb_tests/lib/atstb/recovery_oracle.py, from docs/persistence.md §10:
  its base with its fragments), i.e. the firmware's recovery and the independent one agree;
- INV-LBA (a state of its chain: a full version with a prefix of its committed fragments), INV-DUR (not
  older than its newest required-durable event: a FUA write, anything completed before a completed
  FLUSH, a completed commit), INV-ATOM (a transaction's events shown on all of its LBAs or on none);
then each LBA's chain collapses to what it shows. READs while running are checked against the chains too.
INV-ORDER (barriers) is the campaign's (test_system.py): no barrier here.
Coverage that fails the test when missing: S-Log records on the dies (the oracle's `slog_commits`),
records with both full-page and fragment META-PUs (`mixed_records`, distinct records seen on the dies),
fragments recovered (the oracle's F not empty after a cut), a recovery from a checkpoint whose S-Log
section holds fragments (`ckpt_frags`: the oracle's checkpoint F after a cycle with a `ckpt`).

DIFFWRITEs overlap earlier ones and a transaction's full page lands on LBAs with fragments (the backend
empties F at each page a COMMIT maps). ATS_SLOG_DEV_OVERLAP=0 gives each LBA's DIFFWRITEs since its last
plain WRITE / TRIM disjoint byte ranges (lanes) and a tx's full page only LBAs without fragments: the
workload a backend without that RELEASE passes (stale fragments never show).

`make test`: 1 seed x 3 cuts, on `sim_slog` and on `sim_slogpk` (items `spk-<seed>`: group commit, 4
records in flight packed into shared log pages; the host sets a random seal time each power cycle,
FEATURE 0xC0, after checking that the boot shows the build's: see below); ATS_LONG=1: 6 seeds x 12
cuts (ATS_SLOG_DEV_SEEDS, ATS_SLOG_DEV_CUTS), and the same on `sim_slog1k` (items `1k-<seed>`: a 1,024-entry index, 32 FRAG slots, 2 MiB of main
RAM), and on B4's device `b5_256_slog` (items `b4-<seed>`, ATS_SLOG_DEV_B4_SEEDS seeds, default 2:
4 KiB pages, 64 FRAG slots in four banks, 8 dies) and on it with group commit, `b5_256_slogpk`
(items `pk-<seed>`: records packed into shared log pages, cuts while a page is open; the seal time
as on `sim_slogpk`) in the wider shape of SHAPES below (many transactions
held open at once: more than 64 FRAG slots wanted; records of several log pages; filler LBAs read back
at the end); ATS_SLOG_DEV_CKPT: the probability of a checkpoint in a cycle (0.75; 0: none, the test before them).
ATS_SLOG_DEV_SECT (ATS_LONG=1: 0.3, else 0): the share of the checkpoint cycles whose cut falls inside
the checkpoint's S-Log section: after the checkpoint (measured with the NAND trace: its pages and their
ends) the same checkpoint again, the host idle, cut while the firmware programs a page of its tail that
the section fills (harness.section_cut_page); the torn checkpoint's pages read from the image must show
the cut there (harness.ckpt_torn), and the recovery starts from the checkpoint before it. With the
share > 0 at least one such cut is required (the last 3 cycles force one while none was)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from atomssd.device import OP, ST, F_FUA  # noqa: E402
from atstb.recovery_oracle import read_lpn, slog_records_on_dies  # noqa: E402
from model import page_bytes_for  # noqa: E402
from slog_chain import HDR, Chain, frag_bytes  # noqa: E402

LONG = os.environ.get("ATS_LONG", "") not in ("", "0")
SEEDS = list(range(1, 1 + int(os.environ.get("ATS_SLOG_DEV_SEEDS", "6" if LONG else "1"))))
CUTS = int(os.environ.get("ATS_SLOG_DEV_CUTS", "12" if LONG else "3"))
OVERLAP = os.environ.get("ATS_SLOG_DEV_OVERLAP", "1") not in ("", "0")
# The workload's shape per configuration: `pool` LBAs, txids 1..`ntx`, `k` LBAs a transaction,
# DIFFWRITEs of 4..`lane` bytes inside one lane of `lane` bytes, and `hold`: the probability that a
# transaction stays open after its writes (its FRAG slots held; its TX_COMMIT or TX_ABORT is sent at a
# later step with probability `close`, drawn per power cycle from the shape's, or when every txid is
# taken), so that the slots of many transactions are held at once; `slots_min`: the most FRAG slots
# the workload must have wanted at once (distinct (txid, LBA) of small DIFFWRITEs whose transaction
# is open or committing), checked at the end; `fill` > 0: before the first cut every pool LBA is
# written once (mapped: RESERVE refuses an unmapped LPN, so a fresh device's DIFFWRITEs would all be
# read-modify-writes) and `fill` LBAs outside the pool too (Host.prefill), so that the checkpoint's
# mapping fills more than its first page and a cut can be aimed inside its S-Log section (with 4 KiB
# pages the pool alone fits in one page), and at a checkpoint and at the end of a power cycle's
# workload the held transactions all end in half of the cases (Host.close_all); `steps`:
# the workload steps of a power cycle; `boot`: the cycles a boot or recovery may take.
# `sim_slog`, `sim_slog1k`: 24 LBAs, txids 1-4, 1-3 LBAs, lanes of 60 bytes, 20-40 steps, no held transaction (at
# most 12 slots wanted; the seeds' workloads as before). `b5_256_slog`, B4's device (4 KiB pages, 64
# FRAG slots whose pages are four banks of the write buffer's memory, 8 dies, 32 txids, a 1,024-entry
# index): 160 LBAs, txids 1-16, 4-12 LBAs, lanes of 480 bytes (a fragment up to 480 bytes, under
# SLOG_THR 512: records of several log pages), 80 % of transactions held open, closed at 40 % of the
# steps or only when all 16 txids are taken (cycles that commit them and cycles that pile them up),
# 30-60 steps a power cycle, so that more than 32
# slots are wanted at once (the upper two banks) and more than 64 (a DIFFWRITE that finds the table
# full becomes a read-modify-write); 1,024 filler LBAs; 100 M boot cycles: recovery reads every block
# of its plan from page 0 (docs/persistence.md §6 step 2: the blocks that may hold records from
# `scan_from` on, until a die's first erased page), so its reads are bounded in blocks, 128 pages of
# 4 KiB here, at about 34 k cycles a page read with B4's array times (seed 1's first cut: 924 pages,
# 31.5 M cycles): up to 2 blocks a die, 2,048 reads, about 70 M cycles.
SHAPES = {"sim_slog": dict(pool=24, ntx=4, k=(1, 3), lane=60, hold=0.0, close=(0.0,), slots_min=1, fill=0, steps=(20, 40),
                           boot=harness.BOOT_CYCLES),
          "b5_256_slog": dict(pool=160, ntx=16, k=(4, 12), lane=480, hold=0.8, close=(0.0, 0.4), slots_min=65,
                              fill=1024, steps=(30, 60), boot=100_000_000)}
SHAPES["sim_slog1k"] = SHAPES["sim_slogpk"] = SHAPES["sim_slog"]
# B4's device with group commit (`b5_256_slogpk`: 4 records in flight, records packed into shared log
# pages, an open page sealed 25,000 cycles after its last record): the same shape, so that the cuts
# fall while pages are open (rtl/backend/README.md "Packing")
SHAPES["b5_256_slogpk"] = SHAPES["b5_256_slog"]
PACKED = {"b5_256_slogpk": True, "sim_slogpk": True}
CKPT_P = float(os.environ.get("ATS_SLOG_DEV_CKPT", "0.75"))
SECT_P = float(os.environ.get("ATS_SLOG_DEV_SECT", "0.3" if LONG else "0"))
# (configuration, seed): `sim_slog` always (ids: the seed, as before), `sim_slog1k` (ids `1k-<seed>`)
# and B4's device `b5_256_slog` (ids `b4-<seed>`, ATS_SLOG_DEV_B4_SEEDS seeds, default 2) with ATS_LONG=1
B4_SEEDS = list(range(1, 1 + int(os.environ.get("ATS_SLOG_DEV_B4_SEEDS", "2"))))
PARAMS = [pytest.param("sim_slog", s, id=str(s)) for s in SEEDS] + \
    [pytest.param("sim_slogpk", s, id=f"spk-{s}") for s in SEEDS] + \
    [pytest.param("sim_slog1k", s, id=f"1k-{s}") for s in (SEEDS if LONG else [])] + \
    [pytest.param("b5_256_slog", s, id=f"b4-{s}") for s in (B4_SEEDS if LONG else [])] + \
    [pytest.param("b5_256_slogpk", s, id=f"pk-{s}") for s in (B4_SEEDS if LONG else [])]


def packed_records(oracle, geo) -> set[int]:
    """The first seqs of the complete S-Log records on the dies that start in a log page another
    record ended in (group commit: byte > 16 of their first page, persistence §10.1)."""
    return {r.first_seq for r in slog_records_on_dies(oracle, geo) if r.first_byte > 16}


def mixed_records(oracle, geo) -> set[int]:
    """The first seqs of the complete S-Log records on the dies (the oracle's scan of the planned
    blocks, persistence §10.1) that name both a full page and a fragment."""
    return {r.first_seq for r in slog_records_on_dies(oracle, geo)
            if any(m.is_diff for m in r.metas) and any(not m.is_diff for m in r.metas)}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A formatted device per configuration (made at its first use)."""
    made: dict[str, Path] = {}

    def get(cfg: str) -> Path:
        if cfg not in made:
            made[cfg] = harness.format_template(tmp_path_factory.mktemp(f"{cfg}_template"), cfg)
        return made[cfg]
    return get


class Host:
    def __init__(self, sysm, shape: dict):
        self.s = sysm
        self.pb = sysm.cfg["page_bytes"]
        self.rng = sysm.rng
        self.shape = shape
        self.lane = shape["lane"]
        self.close = shape["close"][0]
        self.lbas = sorted(self.rng.sample(range(sysm.cfg["num_lbas"]), shape["pool"]))
        self.chains = {x: Chain(x, self.pb) for x in self.lbas}
        self.lanes = {x: set() for x in self.lbas}      # lanes of DIFFWRITEs since the LBA's last plain WRITE / TRIM
        self.ver = 1 << 20
        self.frag = 0
        self.txs: list[dict] = []                       # commits submitted this power cycle
        self.busy: set[int] = set()                     # lbas with a command in flight or an open tx
        self.open: dict[int, tuple] = {}                # txid -> (tx, its writes): held open, no commit sent yet
        self.slot_keys: set[tuple[int, int]] = set()    # (txid, lba) of small DIFFWRITEs not yet committed / aborted
        self.violations: list[str] = []
        self.trimmed: set[int] = set()                  # TRIMs completed and not yet covered by a FLUSH
        self.stats = dict(diffs=0, diff_small=0, diff_large=0, tx_commits=0, tx_aborts=0, plain=0, trims=0,
                          flushes=0, reads=0, cuts=0, cut_in_commit=0, oracle_slog_records=0, recovered_frags=0,
                          lbas_checked=0, atom_checked=0,
                          commit_refused_trim=0, ckpts=0, ckpt_frags=0, held=0, lost_open=0, slots_wanted_max=0)

    # ---- the device
    def submit(self, op, lba=0, data=None, txid=0, flags=0, aux=0, nlb=0, **user):
        dev = self.s.dev
        while not dev.free_tags:
            self.poll()
            if self.s.hp.cut:
                return None
        return dev.submit(op, lba, nlb, data, txid, flags, aux=aux, **user)

    def poll(self, cycles=100_000):
        for p in self.s.dev.poll(cycles):
            self.complete(p)

    def wait(self, tag) -> int | None:
        """Polls until command `tag` completed: its status (None: cut first)."""
        dev = self.s.dev
        c0 = self.s.hp.cycle
        while tag in dev.inflight:
            self.poll()
            if self.s.hp.cut:
                return None
            if self.s.hp.cycle - c0 > harness.HANG_CYCLES:
                self.s.hang("slog workload")
        return next(p for p in reversed(dev.done) if p.tag == tag).cpl.status

    def complete(self, p):
        st, u = p.cpl.status, p.user
        if p.op == OP["WRITE"] and "ev" in u:
            u["ev"].completed = st == ST["OK"]
            u["ev"].durable |= st == ST["OK"] and bool(p.flags & F_FUA)
            self.busy.discard(p.lba)
        elif p.op == OP["TRIM"] and "ev" in u:
            u["ev"].completed = st == ST["OK"]
            self.busy.discard(p.lba)
            self.trimmed.add(p.lba)
        elif p.op == OP["FLUSH"] and st == ST["OK"]:
            for e in u["snap"]:
                e.durable = True
            self.trimmed -= u["trimmed"]
        elif p.op == OP["TX_COMMIT"]:
            tx = u["tx"]
            tx["done"] = True
            for x, e in tx["events"]:
                if st == ST["OK"]:
                    e.completed = e.durable = True
                else:                                   # a refused commit aborts the transaction
                    self.chains[x].events.remove(e)
            if st == ST["TX_FULL"] and tx["after_trim"]:
                # §11.3 / §11.4: a fragment reserved while the LBA's TRIM was still in the write buffer
                # (the backend still mapped it); the UNMAP written back before the record makes the
                # backend reject the record: the commit is an abort, answered TX_FULL
                self.stats["commit_refused_trim"] += 1
            elif st != ST["OK"]:
                self.violations.append(f"TX_COMMIT {tx['txid']}: status {st:#x}; its writes "
                                       f"{[(x, e.kind, e.off, e.length) for x, e in tx['events']]}; "
                                       f"{[(x, self.events(x)) for x in tx['lbas']]}")
            for x in tx["lbas"]:
                self.busy.discard(x)
            self.slot_keys = {k for k in self.slot_keys if k[0] != tx["txid"]}
            self.stats["tx_commits"] += st == ST["OK"]
        elif p.op == OP["READ"] and "chk" in u:
            self.busy.discard(p.lba)
            if st != ST["OK"]:
                self.violations.append(f"READ lba {p.lba}: status {st:#x}")
                return
            j, why = self.chains[p.lba].match(p.data)
            if j is None:
                self.violations.append(f"run: {why}; {self.events(p.lba)}; page holds {self.shows(p.lba, p.data)}")
            self.stats["reads"] += 1
        if st != ST["OK"] and p.op in (OP["WRITE"], OP["TRIM"], OP["FLUSH"], OP["DIFFWRITE"]):
            self.violations.append(f"op {p.op} lba {p.lba}: status {st:#x}")

    def shows(self, x, data):
        """Which of the LBA's events' bytes the page holds (diagnosis)."""
        out = [data[:16].hex()]
        for e in self.chains[x].events:
            if e.kind == "frag":
                out.append((e.ident, data[e.off:e.off + e.length] == frag_bytes(x, e.ident, e.length)))
        return out

    def events(self, x):
        return [(e.kind, e.ident, e.off, e.length, e.txid, "D" if e.durable else "", "C" if getattr(e, "completed", 1) else "")
                for e in self.chains[x].events]

    # ---- the workload
    def free_lbas(self):
        return [x for x in self.lbas if x not in self.busy]

    def full(self, x, txid=0):
        self.ver += 1
        e = self.chains[x].full(self.ver, txid)
        self.lanes[x] = set()
        return e, page_bytes_for(x, self.ver, txid, self.pb)

    def transaction(self, txid):
        rng = self.rng
        free = self.free_lbas()
        k = rng.randint(*self.shape["k"])
        if len(free) < k + 1:
            return
        lbas = rng.sample(free, k)
        # a full page of the tx only on an LBA without fragments since its last plain WRITE / TRIM
        # (the rule above: the backend does not empty F at a tx's full-page commit yet)
        fl = [x for x in free if x not in lbas and (OVERLAP or not self.lanes[x])]
        full_lba = rng.choice(fl) if fl and rng.random() < 0.5 else None
        tx = dict(txid=txid, lbas=lbas + ([full_lba] if full_lba is not None else []), events=[], done=False)
        self.busy.update(tx["lbas"])
        ops = []                                        # (lba, kind, off, len, frag no / version, data)
        for x in lbas:
            for _ in range(rng.randint(1, 3)):
                big = rng.random() < (0.3 if not self.lanes[x] else 0.05)
                lanes = [i for i in range((self.pb - HDR) // self.lane) if i not in self.lanes[x]]
                if big and (OVERLAP or not self.lanes[x]):
                    off, n = HDR, self.pb - HDR         # >= the threshold: a read-modify-write
                    self.lanes[x].update(range((self.pb - HDR) // self.lane))
                else:
                    big = False
                    if not lanes and not OVERLAP:
                        break
                    lane = rng.choice(lanes) if lanes and not OVERLAP else rng.randrange((self.pb - HDR) // self.lane)
                    self.lanes[x].add(lane)
                    n = 4 * rng.randint(1, self.lane // 4)
                    off = HDR + lane * self.lane + 4 * rng.randint(0, (self.lane - n) // 4)
                self.frag += 1
                ops.append((x, "diff", off, n, self.frag, frag_bytes(x, self.frag, n), big))
        if full_lba is not None:
            self.ver += 1
            ops.insert(rng.randrange(len(ops) + 1), (full_lba, "full", 0, 0, self.ver,
                                                     page_bytes_for(full_lba, self.ver, txid, self.pb), False))
        if not ops:                                     # every lane of its LBAs used: no transaction
            self.busy.difference_update(tx["lbas"])
            return
        # an LBA whose last event before this tx is a TRIM not yet known flushed (see complete()): taken
        # before the tx's writes, which reserve its FRAG slots (the LBAs are busy from here on, so the
        # set can only shrink until the commit)
        tx["after_trim"] = any(x in self.trimmed for x in lbas)
        for x, kind, off, n, ident, data, big in ops:
            if kind == "diff":
                tag = self.submit(OP["DIFFWRITE"], x, data, txid, 0, aux=off | n << 16)
                self.stats["diffs"] += 1
                self.stats["diff_large" if big else "diff_small"] += 1
                if not big and tag is not None:
                    self.slot_keys.add((txid, x))
                    self.stats["slots_wanted_max"] = max(self.stats["slots_wanted_max"], len(self.slot_keys))
            else:
                tag = self.submit(OP["WRITE"], x, data, txid)
            if tag is None or self.wait(tag) is None:
                return                                  # cut: the open tx never commits
            st = next(p for p in reversed(self.s.dev.done) if p.tag == tag).cpl.status
            if st != ST["OK"]:
                self.violations.append(f"tx {txid} op {kind} lba {x}: status {st:#x}")
                return
        if self.shape["hold"] and rng.random() < self.shape["hold"]:
            self.open[txid] = (tx, ops)                 # its commit or abort at a later step
            self.stats["held"] += 1
            return
        self.finish(txid, tx, ops)

    def close_all(self):
        """Every held transaction ends now (TX_COMMIT or TX_ABORT as at a step), in txid order: so
        that the FRAG slots of a pile-up become records before a checkpoint or a cut, not only lost."""
        for txid in sorted(self.open):
            if self.s.hp.cut:
                return
            tx, ops = self.open.pop(txid)
            self.finish(txid, tx, ops)

    def finish(self, txid, tx, ops):
        """The end of a transaction whose writes completed: TX_ABORT (15 %) or TX_COMMIT."""
        rng = self.rng
        if rng.random() < 0.15:
            tag = self.submit(OP["TX_ABORT"], txid=txid)
            self.stats["tx_aborts"] += 1
            st = self.wait(tag) if tag is not None else None
            if st is not None and st != ST["OK"]:       # (a tx of FRAG slots only is not TX_EMPTY, §11.3)
                self.violations.append(f"TX_ABORT {txid} after {len(ops)} writes: status {st:#x}")
            self.busy.difference_update(tx["lbas"])
            self.slot_keys = {k for k in self.slot_keys if k[0] != txid}
            return
        for x, kind, off, n, ident, data, big in ops:   # the commit's events, in the tx's order
            if kind == "diff":
                e = self.chains[x].frag(ident, off, n, txid)
            else:
                e = self.chains[x].full(ident, txid)    # (F is not emptied by it: lanes stay)
            e.completed = False
            tx["events"].append((x, e))
        self.txs.append(tx)
        self.submit(OP["TX_COMMIT"], txid=txid, tx=tx)

    def step(self, free_tx):
        rng = self.rng
        if self.open and (free_tx is None or rng.random() < self.close):
            txid = rng.choice(sorted(self.open))        # a held transaction ends
            tx, ops = self.open.pop(txid)
            self.finish(txid, tx, ops)
            return
        r = rng.random()
        if r < 0.5 and free_tx:
            self.transaction(free_tx)
            return
        free = self.free_lbas()
        if not free:
            self.poll()
            return
        x = rng.choice(free)
        if r < 0.68:
            e, data = self.full(x)
            e.completed = False
            self.busy.add(x)
            self.submit(OP["WRITE"], x, data, 0, F_FUA if rng.random() < 0.2 else 0, ev=e)
            self.stats["plain"] += 1
        elif r < 0.74:
            self.ver += 1
            e = self.chains[x].full(0)
            self.lanes[x] = set()
            e.completed = False
            self.busy.add(x)
            self.submit(OP["TRIM"], x, ev=e)
            self.stats["trims"] += 1
        elif r < 0.8:
            snap = [e for c in self.chains.values() for e in c.events if getattr(e, "completed", True)]
            self.submit(OP["FLUSH"], snap=snap, trimmed=set(self.trimmed))
            self.stats["flushes"] += 1
        else:
            self.busy.add(x)
            self.submit(OP["READ"], x, chk=True)

    def workload(self, n):
        """n steps; a transaction runs to its commit's submission before the next step (the device
        overlaps it with the plain commands in flight)."""
        for _ in range(n):
            if self.s.hp.cut:
                return
            busy_tx = {tx["txid"] for tx in self.txs if not tx["done"]} | set(self.open)
            free = [t for t in range(1, self.shape["ntx"] + 1) if t not in busy_tx]
            self.step(self.rng.choice(free) if free else None)
            if self.rng.random() < 0.3:
                self.poll(self.rng.randint(500, 20_000))

    def drain(self, what: str | None) -> None:
        """Polls until no command is in flight or the power is cut (at most 20 M cycles); `what`: a
        command still in flight after that fails the test as a hang (None: the caller cuts next)."""
        for _ in range(400):
            if self.s.hp.cut or not self.s.dev.inflight:
                break
            self.poll(50_000)
        if what is not None and self.s.dev.inflight:
            self.s.hang(what)

    def checkpoint(self, ck_blocks=None):
        """Every command completed, then console `ckpt`: it must answer 0 (written). ck_blocks: with
        the NAND trace (harness.ckpt_traced): returns its pages' ends."""
        self.drain("drain before the checkpoint")
        if ck_blocks is not None:
            tr = harness.ckpt_traced(self.s, ck_blocks)
            ok, out = tr["answer"] == 0, f"ckpt: {tr['answer']}"
        else:
            out = harness.console_answer(self.s, "ckpt")
            ok, tr = bool(re.search(r"ckpt: 0\b", out)), None
        if not ok:
            self.violations.append(f"checkpoint {self.stats['ckpts'] + 1}: {out[-500:]!r}")
        self.stats["ckpts"] += 1
        return tr if ok else None

    def section_cut(self, first) -> tuple[int, int] | None:
        """After the checkpoint `first` (measured), the same checkpoint again cut while a page of its
        S-Log section is programmed: (the page aimed at, the checkpoint block), or None (no section:
        F was empty, or one page)."""
        frags = harness.fw_frags(harness.console_answer(self.s, "slog"))[1]
        j = harness.section_cut_page(self.rng, self.s.geo, len(first["ends"]), frags)
        if j is None:
            return None
        tr = harness.ckpt_traced(self.s, self.ck_blocks, cut_page=j, rng=self.rng,
                                 cut_span=first["ends"][j] - first["ends"][j - 1])
        if not tr["cut"]:
            self.violations.append(f"the cut aimed at checkpoint page {j} did not fire: {tr}")
            return None
        return j, tr["block"]

    FILL_VER = 7

    def prefill(self, n: int) -> None:
        """Before the first cut: every pool LBA written once (a full version of its chain: a fragment
        needs a mapped base, RESERVE answers TX_FULL for an unmapped LPN, architecture §11.3 step 5),
        and `n` filler LBAs outside the pool (runs of 8 aligned LBAs without a pool LBA, from a random
        run on), 8 pages a WRITE; every write completed, then a FLUSH (all durable from then on: the
        chains, check_fill) and a checkpoint."""
        runs = [b for b in range(0, self.s.cfg["num_lbas"], 8) if not any(b + i in self.chains for i in range(8))]
        j = self.rng.randrange(len(runs))
        runs = (runs[j:] + runs[:j])[:n // 8]
        self.filler = [b + i for b in sorted(runs) for i in range(8)]
        for x in self.lbas:
            e, data = self.full(x)
            e.completed = False
            self.busy.add(x)
            if self.submit(OP["WRITE"], x, data, 0, 0, ev=e) is None:
                return
        for b in runs:
            data = b"".join(page_bytes_for(b + i, self.FILL_VER, 0, self.pb) for i in range(8))
            if self.submit(OP["WRITE"], b, data, 0, 0, nlb=7) is None:
                return
        self.drain("prefill")
        snap = [e for c in self.chains.values() for e in c.events if getattr(e, "completed", True)]
        tag = self.submit(OP["FLUSH"], snap=snap, trimmed=set())
        if tag is None or self.wait(tag) != ST["OK"]:
            self.violations.append("prefill: the FLUSH after the fill did not complete OK")
        # a checkpoint, so that the fill is not in the active log that the first cut's recovery reads
        # (about 1,100 pages at some 20 k cycles a page read with B4's array times: past BOOT_CYCLES)
        self.checkpoint()

    def check_fill(self, where: str) -> None:
        """Every filler LBA reads its one version (written before the first cut and flushed)."""
        dev = self.s.dev
        for b in range(0, len(self.filler), 8):
            while not dev.free_tags:
                dev.poll(200_000)
            dev.submit(OP["READ"], self.filler[b], 7, fill_check=self.filler[b])
        dev.drain(harness.HANG_CYCLES)
        for p in dev.done:
            if p.op != OP["READ"] or "fill_check" not in p.user:
                continue
            b = p.user["fill_check"]
            exp = b"".join(page_bytes_for(b + i, self.FILL_VER, 0, self.pb) for i in range(8))
            if p.cpl.status != ST["OK"] or p.data != exp:
                self.violations.append(f"{where}: filler LBAs {b}..{b + 7}: status {p.cpl.status:#x}"
                                       + (", data differs" if p.cpl.status == ST["OK"] else ""))
        dev.done.clear()
        self.stats["fill_checked"] = len(self.filler)

    # ---- after a cut
    def verify(self, oracle, where):
        dev = self.s.dev
        shown = {}
        for x in self.lbas:
            while not dev.free_tags:
                dev.poll(200_000)
            dev.submit(OP["READ"], x, 0, lba_check=x)
        dev.drain(harness.HANG_CYCLES)
        for p in dev.done:
            if p.op != OP["READ"] or "lba_check" not in p.user:
                continue
            x = p.user["lba_check"]
            if p.cpl.status != ST["OK"]:
                self.violations.append(f"{where}: READ lba {x}: status {p.cpl.status:#x}")
                continue
            exp = read_lpn(self.s.geo, oracle, x)
            exp = exp if exp is not None else bytes(self.pb)
            if p.data != exp:
                self.violations.append(f"{where}: lba {x}: the firmware's recovery and the oracle disagree "
                                       f"(device {p.data[:16].hex()}, oracle {exp[:16].hex()}, oracle F "
                                       f"{len(oracle.frags.get(x, []))})")
            j, why = self.chains[x].match(p.data)
            if j is None:
                self.violations.append(f"{where}: {why}; {self.events(x)}; page holds {self.shows(x, p.data)}")
                continue
            shown[x] = j
            self.stats["lbas_checked"] += 1
        dev.done.clear()
        # INV-ATOM: every commit submitted shows on all of its LBAs or on none
        for tx in self.txs:
            seen = set()
            for x, e in tx["events"]:
                if x in shown and e in self.chains[x].events:
                    seen.add(self.chains[x].events.index(e) <= shown[x])
            if len(seen) > 1:
                self.violations.append(f"{where}: INV-ATOM tx {tx['txid']} (lbas {tx['lbas']}) shows in part")
            self.stats["atom_checked"] += 1
        # collapse: what an LBA shows is its durable state now
        for x, j in shown.items():
            c = self.chains[x]
            c.events = c.events[:j + 1]
            for e in c.events:
                e.durable = e.completed = True
            # lanes from what survived (a plain WRITE lost in the cut reset them at its submission)
            last = max((i for i, e in enumerate(c.events) if e.kind == "full" and not e.txid), default=-1)
            self.lanes[x] = {ln for e in c.events[last + 1:] if e.kind == "frag"
                             for ln in range((e.off - HDR) // self.lane, (e.off + e.length - 1 - HDR) // self.lane + 1)}
        self.txs = []
        self.busy = set()
        self.trimmed = set()
        self.open = {}                                  # held transactions: gone with the cut
        self.slot_keys = set()


@pytest.mark.parametrize("cfg,seed", PARAMS)
def test_slog_device_cuts(template, tmp_path, monkeypatch, cfg, seed):
    if SECT_P > 0:
        monkeypatch.setenv("ATS_NAND_TRACE", "1")       # the simulators log every PROGRAM (the cut's place)
    sysm = harness.System(tmp_path, seed, cfg_name=cfg, template=template(cfg))
    assert sysm.cfg.get("frag_slots", 0) > 0, f"{cfg} without FRAG slots"
    from atstb.recovery_oracle import DieImage, checkpoint_blocks
    shape = SHAPES[cfg]
    sysm.boot_limit = shape["boot"]
    h = Host(sysm, shape)
    h.ck_blocks = checkpoint_blocks(sysm.geo, DieImage(sysm.images[0], sysm.geo))
    assert sysm.start(), "first boot was cut"
    st = h.stats
    h.filler = []
    if shape["fill"]:
        h.prefill(shape["fill"])
    if SECT_P > 0:
        st.update(sect_cuts=0, sect_aimed=0)
    frag_cuts = 0
    mixed: set[int] = set()
    packed: set[int] = set()
    open_page = bool(sysm.cfg.get("slog_pack")) and sysm.cfg.get("slog_rif", 1) > 1
    assert open_page == PACKED.get(cfg, False), f"{cfg}: open page {open_page}, PACKED says otherwise"
    while st["cuts"] < CUTS:
        if open_page:
            # the seal time (FEATURE 0xC0, docs/architecture.md §1.2): volatile, so every boot shows the
            # build's; then a random one for this power cycle (the records' packing changes, never
            # what recovery finds correct)
            got = sysm.dev.seal_time()
            if got != sysm.cfg["slog_sealt"]:
                h.violations.append(f"seed {seed} boot {st['cuts'] + 1}: seal time {got} after power-on, "
                                    f"the build's is {sysm.cfg['slog_sealt']}")
                break
            # (B4's device draws from its build's and longer ones: its records come far apart in its
            # wide shape, and at 3 cuts with short seal times none was packed, which is required)
            dflt = sysm.cfg["slog_sealt"]
            want = h.rng.choice((dflt, 40000, 65535) if cfg.startswith("b5") else (0, 1, 500, 5000, dflt, 65535))
            if sysm.dev.seal_time(want) != want or sysm.dev.seal_time() != want:
                h.violations.append(f"seed {seed} boot {st['cuts'] + 1}: FEATURE 0xC0 set {want} not taken")
                break
            st[f"seal_time_{want}"] = st.get(f"seal_time_{want}", 0) + 1
        n = h.rng.randint(*shape["steps"])
        if shape["hold"]:                                # (no draw for the shapes without held txs)
            h.close = h.rng.choice(shape["close"])
        # (ATS_SLOG_DEV_SECT: the cut inside a checkpoint's S-Log section; no draw while it is 0; the
        # last 3 cycles force one while none was, unless ATS_SLOG_DEV_CKPT=0: no checkpoints at all)
        force = SECT_P > 0 and CKPT_P > 0 and st["cuts"] >= CUTS - 3 and not st["sect_cuts"]
        ck = h.rng.random() < CKPT_P or (CKPT_P > 0 and st["cuts"] == CUTS - 1 and not st["ckpt_frags"]) or force
        n1 = h.rng.randint(n // 2, n) if ck else 0      # a checkpoint after n1 steps; the cut after it
        sect = ck and SECT_P > 0 and (h.rng.random() < SECT_P or force)
        aimed = None
        if ck:
            h.workload(n1)
            if h.open and not sysm.hp.cut and h.rng.random() < 0.5:
                h.close_all()                           # (held transactions: none in sim_slog's shape)
            if not sysm.hp.cut:
                first = h.checkpoint(h.ck_blocks if sect else None)
                if sect and first is not None and not sysm.hp.cut:
                    aimed = h.section_cut(first)
        if aimed is None:
            c0 = sysm.hp.cycle
            if h.rng.random() < 0.6:
                sysm.hp.arm_cut(harness.CUT_CYCLE, c0 + h.rng.randint(2000, 6000 * (n - n1) + 2000))
            h.workload(n - n1)
            if h.open and not sysm.hp.cut and h.rng.random() < 0.5:
                h.close_all()
            if not sysm.hp.cut:
                h.drain(None)
            if not sysm.hp.cut:
                sysm.hp.cut_now()
        st["cut_in_commit"] += any(not tx["done"] for tx in h.txs)
        st["lost_open"] += len(h.open)                  # held transactions the cut aborts
        sysm.stop()
        if aimed is not None:
            torn = harness.ckpt_torn(sysm.images, sysm.geo, aimed[1])
            st["sect_aimed"] += 1
            st["sect_cuts"] += torn["in_section"]
            if not torn["in_section"]:
                h.violations.append(f"seed {seed} cut {st['cuts'] + 1}: aimed at checkpoint page {aimed[0]}, "
                                    f"not inside the S-Log section: {torn}")
        st["cuts"] += 1
        oracle = sysm.oracle()
        st["oracle_slog_records"] += oracle.slog_commits + oracle.slog_after_gap
        st["gap_records"] = st.get("gap_records", 0) + oracle.slog_after_gap
        mixed |= mixed_records(oracle, sysm.geo)
        st["mixed_records"] = len(mixed)
        packed |= packed_records(oracle, sysm.geo)
        st["packed_records"] = len(packed)
        if oracle.slog_full_mismatch:
            h.violations.append(f"seed {seed} cut {st['cuts']}: the oracle found {oracle.slog_full_mismatch} "
                                f"S-Log record(s) whose full META-PUs differ from the transaction's pages")
        nf = sum(len(f) for f in oracle.frags.values())
        if ck:
            st["ckpt_frags"] += sum(len(fr) for _, fr in oracle.checkpoint.slog.values())
        st["recovered_frags"] += nf
        frag_cuts += nf > 0
        assert sysm.start(), "a boot without an armed cut was cut"
        h.verify(oracle, f"seed {seed} cut {st['cuts']}")
        if h.violations or sysm.errors:
            break
    if h.filler and not h.violations and not sysm.errors:
        h.check_fill(f"seed {seed} after {st['cuts']} cuts")
    fw = harness.parse_fw_stats(sysm.console("stats"))
    sysm.stop()
    print(f"slog device seed {seed}: {st} fw {fw}")
    msgs = h.violations + sysm.errors
    assert not msgs, "\n".join(msgs[:10]) + f"\n(uart log: {sysm.uart_log})"
    assert st["oracle_slog_records"] + st["ckpt_frags"] > 0, "no S-Log record on the dies (log or checkpoint): the device wrote none"
    assert frag_cuts > 0, "no cut left fragments to recover"
    assert st["mixed_records"] > 0, "no S-Log record with both full-page and fragment META-PUs"
    if PACKED.get(cfg):                     # (group commit: records packed into pages, cut while open)
        assert st["packed_records"] > 0, "no S-Log record packed behind another on the dies"
    assert CKPT_P == 0 or st["ckpts"] > 0 and st["ckpt_frags"] > 0, "no recovery from a checkpoint with fragments"
    assert SECT_P == 0 or CKPT_P == 0 or st["sect_cuts"] > 0, "no cut inside a checkpoint's S-Log section"
    assert st["lbas_checked"] > 0 and st["diff_small"] > 0 and st["tx_commits"] > 0
    assert st["slots_wanted_max"] >= shape["slots_min"], \
        f"at most {st['slots_wanted_max']} FRAG slots wanted at once, below the shape's {shape['slots_min']}"


def commit_cycles(sysm, txid: int, lba: int, v: int) -> int:
    """The base page written and flushed, then one transaction of one small DIFFWRITE (a fragment: an
    S-Log record), committed; the cycles from the commit's submission to its completion, the host
    idle meanwhile (nothing else can seal the page)."""
    dev = sysm.dev
    p = dev.wait(dev.submit(OP["WRITE"], lba, data=bytes([v ^ 0xFF]) * sysm.cfg["page_bytes"]))
    assert p.cpl.status == ST["OK"] and dev.flush().cpl.status == ST["OK"], f"WRITE of the base: {p.cpl}"
    p = dev.wait(dev.submit(OP["DIFFWRITE"], lba, txid=txid, aux=64 << 16 | 8 * v, data=bytes([v]) * 64))
    assert p.cpl.status == ST["OK"], f"DIFFWRITE: {p.cpl}"
    c0 = sysm.hp.cycle
    p = dev.tx_commit(txid)
    assert p.cpl.status == ST["OK"], f"TX_COMMIT: {p.cpl}"
    return sysm.hp.cycle - c0


def test_feature_seal_time(template, tmp_path):
    """FEATURE 0xC0 SEAL_TIME (docs/architecture.md §1.2) on the group-commit device `sim_slogpk`:
    get shows the build's 2,000; sets of 0, 65,535 and values between are taken and read back; a
    value above 65,535, nlb 2, lba bits above 31, FIDs with 0xC0 in their low byte (0x1C0, 0x100C0)
    and other FIDs are BAD_FIELD with nothing changed;
    the setting acts on the open page's wait: a lone record's commit (the host idle, so only the
    timer seals) takes the seal time longer than at 0 (within 64 cycles, at 20,000 and 65,535);
    after a power cut the build's value is back (volatile)."""
    cfg = "sim_slogpk"
    sysm = harness.System(tmp_path, 1, cfg_name=cfg, template=template(cfg))
    assert sysm.start(), "first boot was cut"
    dev, dflt = sysm.dev, sysm.cfg["slog_sealt"]
    assert dflt == 2000 and dev.seal_time() == dflt
    for v in (0, 1, 777, 65535):
        assert dev.seal_time(v) == v and dev.seal_time() == v
    for fid, nlb, aux in ((0xC0, 1, 65536), (0xC0, 1, 0xFFFFFFFF), (0xC0, 2, 5), ((1 << 32) | 0xC0, 1, 5),
                          (0xC1, 1, 5), (0xC1, 0, 0), (0xBF, 0, 0), (0x1C0, 1, 5), (0x100C0, 0, 0)):
        p = dev.feature(fid, aux) if nlb == 1 else dev.wait(dev.submit(OP["FEATURE"], lba=fid, nlb=nlb, aux=aux))
        assert (p.cpl.status, p.cpl.result) == (ST["BAD_FIELD"], 0), f"FEATURE {fid:#x} nlb {nlb} aux {aux:#x}: {p.cpl}"
    assert dev.seal_time() == 65535, "a refused FEATURE changed the seal time"
    lat = {}
    for i, v in enumerate((65535, 0, 20000)):
        assert dev.seal_time(v) == v
        lat[v] = commit_cycles(sysm, 1 + i, 3 + i, 1 + i)
    for v in (20000, 65535):
        assert abs(lat[v] - lat[0] - v) <= 64, f"commit cycles by seal time {lat}: not the seal time apart"
    log = dev.get_log()
    assert log["nand_programs"] >= 6 and log["host_pages"] == 3, log
    sysm.stop()
    assert sysm.start(), "the boot after the cut was cut"
    assert sysm.dev.seal_time() == dflt, "the seal time after a power cut is not the build's"
    sysm.stop()
    assert not sysm.errors, sysm.errors
    print(f"seal time: a lone record's commit in cycles by seal time {lat}")
