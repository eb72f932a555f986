# SPDX-License-Identifier: Apache-2.0
"""B4 (issue 40): DiffTx's workload shapes through the real simulated device: write amplification,
NAND bytes per transaction and transactions per second of (a) the S-Log, (b) full-page shadowing and
(c) host data journaling, in one run.

(a) The S-Log (docs/architecture.md §11, docs/persistence.md §10): measured on `b5_256_slog`, the
    default (the device with 64 FRAG slots (32 before 48b0014), SLOG_THR 512: `shadow_diffwrite`'s DIFFWRITEs are S-Log
    fragments and a device transaction with partial updates ends with a TX Commit, its record; its
    figures are the workload's `wa` / `traffic_vs_shadow` / `tps_vs_shadow`); with `--config b5_256`
    they are null with the reason. Next to them, `limit` gives the physical floor they are compared
    against (every full update one page, each device transaction's differential bytes in whole
    pages; tx/s at the NAND's program rate) and `slog_model` gives its NAND bytes as a
    **model, not measured** (bench/difftx/slog_model.py: the S-Log reference's record encoder on the
    same transactions; no timing), labelled so in the JSON and the table; `--model-only` prints it
    without the simulator.
(b) Full-page shadowing, two ways the device runs today:
      shadow            every updated page a whole-page TX Write (the host merges a partial update
                        into its cached page; TxFlash-like in-device shadow paging), the device
                        transaction's last page carrying COMMIT (no record page);
      shadow_diffwrite  partial updates as DIFFWRITE (today: a read-modify-write of the whole page in
                        the write buffer, rtl/wbuf/README.md "DIFFWRITE"), full updates as TX Writes,
                        COMMIT on the last full page, or a TX Commit (a record page) when the part has
                        no full page.
    `shadow` is the reference of the ratios (`traffic_vs_shadow`, `tps_vs_shadow`), as TxFlash is the
    paper's.
(c) journal: host data journaling (ext3 data=journal, the paper's WAL(D)): per transaction, one
    descriptor block per 255 pages and every updated page as a whole block to a circular journal
    area, Flush; the commit block with FUA; then every page to its home LBA and a Flush (the
    checkpoint at once: no coalescing of home writes across transactions; distinct LPNs inside one).

The device is bench-tx's: the `b5_256` configuration (with the S-Log: `b5_256_slog`) (4 channels x 2 ways, 4 KiB pages, 16 Ki LBAs,
FEMU tR 40 / tPROG 200 us, 100 MHz, formatted offline with a plan of 32 blocks a die) in its NVMe
build, driven through the NVMe front end's RTL by the transactional host API
(sw/host/atomssd/txapi.py) and bench-tx's transport (completions at their MSI: exact cycles). One
device per workload, qd and mode (3 modes x the qds; the jobs run in parallel), each booted and prefilled
alike (the metadata pool written once, so a DIFFWRITE's base page is on the media, then the device
settled: `settle`), so every mode starts from the same state and no mode's writes free another's
S-Log fragments; then
  qd1  every transaction of the workload, one at a time, each from an idle device (a Flush waited
       for): tx/s is a commit's latency;
  qd N (--qd, default 8) all the transactions as one segment, up to N in flight: N host threads taking
       the transactions in workload order, a transaction starting only when every earlier one sharing
       an LPN with it has completed (a lock rule, as a database's: conflicting transactions keep the
       workload's order, so every mode computes the same logical result), its device transactions
       bounded by the device's free txids (bench/difftx/difftx_sched.py). The journal mode runs each
       transaction's own sequence (journal blocks + Flush, commit block FUA, home writes + Flush) with
       transactions overlapping, no group commit; its locks are held until the home writes' Flush
       (README "Concurrency": a stricter rule than jbd2's).
then the device settled again (a Flush, GET_LOG polled with idle time between until NAND programs and
reads stop changing: the merges, checkpoints and GC the run started are counted against it), and
read back (after the qd segment, 64 LPNs, those written by two transactions or more first; at the end
64 of the pool) against the host's pages merged in workload order.
A workload of one transaction (fileserver) has no qd N run.

A paper transaction larger than the device's `tx_entries` pages (64: the tx tables' size) runs as
ceil(pages / 64) device transactions submitted at once (txids reused as their commits complete);
the workload shapes are bench/difftx/difftx_workloads.py's (Table 3 averages; Fig. 2's proportions are
stated assumptions there).

Measured per mode: simulated cycles from the first submission of a transaction to the completion of
its last command, summed over the transactions (qd1), or from the segment's first submission to its
last completion (qd N) (tps = transactions / simulated seconds); NAND bytes = GET_LOG k2 (NAND programs:
host pages, commit records, log pages, merges, checkpoint pages, GC copies) after the final settle -
after the prefill's settle x 4 KiB (`background_programs`: those after the last completion);
the workload's bytes = 4 KiB per full update + the differential bytes of each partial update (the
paper's denominator); wa = NAND bytes / workload bytes.

Output: build/bench/difftx.json (`workloads`: per workload `name`, `qd`, `wa`, `traffic_vs_shadow`,
`tps_vs_shadow` of the S-Log at that qd (null on a device without FRAG slots) and the same at qd1
(`*_qd1`); `limit`; `modes_qd` / `modes`: the measured figures of each mode at qd N / qd1;
`programs_check`: each mode's NAND programs, host pages, checkpoint pages and NAND reads in both
runs; `slog_model`; the shape realised), tables on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw/host"), str(ROOT / "tests/system"), str(ROOT / "cocotb_tests/lib"),
                str(ROOT / "soc"), str(ROOT / "bench/recovery"), str(ROOT / "bench/tx"), str(ROOT / "sim/soc"),
                str(ROOT / "bench/difftx")]

from difftx_workloads import PAGE_BYTES, SHAPES, THRESHOLD, Update, gen_workload, split_for_device  # noqa: E402
from slog_model import shadow_nand, slog_nand  # noqa: E402

TX_ENTRIES = 64                    # the b5_256 device's tx tables (IDENTIFY word 10), for --model-only

# the device: b5_256_slog (b5_256 with the S-Log: 64 FRAG slots, SLOG_THR = 512 set by the firmware)
# measures (a), (b) and (c) in one run: there `shadow_diffwrite`'s DIFFWRITEs below 512 bytes are S-Log
# fragments; --config b5_256 (no FRAG slots) measures today's DIFFWRITE (a read-modify-write) instead
CONFIG = os.environ.get("ATS_DIFFTX_CONFIG", "b5_256_slog")
LARGE_SCALE = 0.25                 # fileserver / webproxy pages per tx x this by default (1: Table 3's)
SLOG_TXFULL = 64                   # full pages a record names (the core's default; more: no record)
# the NAND's program-rate limit (bench/core's formula): FEMU tPROG, ONFI SDR byte time (T_WP + T_WH cycles)
T_PROG_S = 200e-6
MODES = ("shadow", "shadow_diffwrite", "journal")
TXS = {"varmail": 24, "tpcc": 24, "fileserver": 1, "webproxy": 2}
QD = 8                             # transactions in flight in the concurrent runs (README "Concurrency")
DESC_PER = 255                     # journal tags per descriptor block
TARGETS = {"wa_max": 1.1, "traffic_vs_shadow_max": 0.5, "tps_vs_shadow_min": 1.25}   # issue 40 item 6
SLOG_STATUS = "not measured on this configuration (its write buffer has no FRAG slots: --config b5_256_slog)"


def slog_measured(frag_slots: int) -> str:
    return (f"measured: shadow_diffwrite on a device with the S-Log (FRAG_SLOTS {frag_slots}, SLOG_THR 512): "
            "partial updates below 512 B as S-Log fragments, full updates as TX Writes, an explicit TX Commit "
            "(the record) for a device transaction with partial updates")


def nand_limits(cfg: dict) -> dict:
    """The device's NAND program-rate limit in pages a second (bench/core/bench_core.py's formula:
    min(dies / (tPROG + t_xfer), channels / t_xfer), t_xfer = (page + spare) bytes x (T_WP + T_WH)
    cycles)."""
    byte_s = (1 if cfg.get("fast_nand_if") else 4) / cfg["sys_clk_hz"]
    xfer = (cfg["page_bytes"] + cfg["spare_bytes"]) * byte_s
    t_prog = T_PROG_S / cfg.get("array_time_div", 1)
    dies, bus = cfg["ndie"] / (t_prog + xfer), cfg["num_chan"] / xfer
    return {"formula": "min(dies / (tPROG + t_xfer), channels / t_xfer)", "t_xfer_us": xfer * 1e6,
            "t_prog_us": t_prog * 1e6, "write_pages_per_s": min(dies, bus),
            "bound": "dies" if dies <= bus else "channel bus"}


def floor_point(wl, entries: int, page_bytes: int) -> dict:
    """The least NAND a transactional device can program for these transactions: each full update one
    page, each device transaction's differential bytes packed into whole pages (they must be durable
    at its commit; no record header, META-PU or merge counted)."""
    full = diff_pages = 0
    for tx in wl:
        for part in split_for_device(tx, entries):
            full += sum(1 for u in part if u.full)
            d = sum(u.length for u in part if not u.full)
            diff_pages += -(-d // page_bytes)
    return {"full_pages": full, "diff_pages": diff_pages, "pages": full + diff_pages}


SIM_PATHS = ("rtl", "sim", "soc", "sw", "spinal")   # what the simulator and its firmware are built from
BENCH_PATHS = ("bench", "tests/system", "cocotb_tests/lib")   # the bench's own Python


def tree() -> dict:
    """The tree's state: HEAD, and for the simulator's sources and the bench's each the files that
    differ from HEAD (tracked, `git status --porcelain`) and the SHA-256 of `git diff HEAD` over them
    (None when clean): what a copy of the simulator or a run was made from, precisely."""
    import hashlib
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = {"head": head or "?"}
    for key, paths in (("sim", SIM_PATHS), ("bench", BENCH_PATHS)):
        st = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", *paths],
                            capture_output=True, text=True).stdout.splitlines()
        diff = subprocess.run(git + ["diff", "HEAD", "--", *paths], capture_output=True).stdout
        out[f"{key}_dirty"] = sorted(l[3:] for l in st)
        out[f"{key}_diff_sha256"] = hashlib.sha256(diff).hexdigest() if diff else None
    return out


class Runner:
    """One device: the pools, the host's page cache, the three modes."""

    def __init__(self, hp, dev, drv, tr, shape, seed: int, slog: bool = False):
        self.hp, self.dev, self.drv, self.tr, self.shape = hp, dev, drv, tr, shape
        self.slog = slog                                  # the device has FRAG slots
        self.rng = random.Random(seed)
        self.cache: dict[int, bytes] = {}
        nl = dev.info.num_lbas
        self.jbase, self.jlen, self.jpos = nl // 2, nl - nl // 2, 0
        self.te = dev.info.tx_entries
        self.free_tx = dev.info.num_tx

    def page(self) -> bytes:
        return self.rng.randbytes(16) * (PAGE_BYTES // 16)

    def log(self) -> dict:
        from atomssd.nvme import run_sync
        return run_sync(self.drv.device_log(), self.tr)

    def prefill(self, lpns: list[int]) -> None:
        for k in range(0, len(lpns), 128):
            cmds = []
            for l in lpns[k:k + 128]:
                self.cache[l] = self.page()
                cmds += self.dev.submit_write(l, self.cache[l])
            self.dev.wait(cmds + [self.dev.submit_flush()])

    def new_contents(self, tx: list[Update]) -> dict[int, bytes | tuple[int, bytes]]:
        """What each update writes: a page (full) or (offset, bytes) (partial)."""
        out = {}
        for u in tx:
            if u.full:
                out[u.lpn] = self.page()
            else:
                out[u.lpn] = (u.offset, self.rng.randbytes(u.length))
        return out

    def merged(self, lpn: int, w) -> bytes:
        if isinstance(w, bytes):
            return w
        off, b = w
        base = self.cache.get(lpn, bytes(PAGE_BYTES))
        return base[:off] + b + base[off + len(b):]

    def run_parts(self, parts: list[list[Update]], submit_part) -> None:
        """Device transactions submitted at once, at most the txids free; a commit completed frees one."""
        live = []
        for p in parts:
            if len(live) >= self.free_tx:
                t, cmds = live.pop(0)
                self.dev.wait(cmds)
                t.complete()
            live.append(submit_part(p))
        for t, cmds in live:
            self.dev.wait(cmds)
            t.complete()

    def shadow_part(self, p: list[Update], new: dict, pages: dict, diff: bool):
        """One device transaction submitted (not waited for): (its Transaction, its commands). `new`:
        what each update writes (`new_contents`), `pages`: each LPN's whole new page (the host's merge)."""
        t = self.dev.begin(explicit=False)
        cmds = []
        # on a device with FRAG slots a part with partial updates ends with a TX Commit: its S-Log
        # record is the commit (a COMMIT-flag WRITE would do the same per architecture §11.4; the
        # explicit commit keeps the measurement independent of that path)
        explicit = diff and (self.slog or not p[-1].full) and any(not u.full for u in p)
        for i, u in enumerate(p):
            last = i == len(p) - 1
            if diff and not u.full:
                off, b = new[u.lpn]
                t.pages.add(u.lpn)
                cmds.append(self.dev.run(self.drv.submit_diff_write(self.dev.qid, u.lpn, off, b, t.txid)))
            else:
                cmds += t.submit_write(u.lpn, pages[u.lpn], commit=last and not explicit)
        if explicit:
            cmds.append(t.submit_commit())
        return t, cmds

    def shadow(self, tx: list[Update], new: dict, diff: bool) -> None:
        pages = {u.lpn: self.merged(u.lpn, new[u.lpn]) for u in tx}
        self.run_parts(split_for_device(tx, self.te), lambda p: self.shadow_part(p, new, pages, diff))

    def journal(self, tx: list[Update], new: dict) -> None:
        pages = [(u.lpn, self.merged(u.lpn, new[u.lpn])) for u in tx]
        blocks = []
        for k in range(0, len(pages), DESC_PER):
            blocks.append(self.page())                  # descriptor block
            blocks += [d for _, d in pages[k:k + DESC_PER]]
        cmds = []
        for b in blocks:
            cmds += self.dev.submit_write(self.jbase + self.jpos, b)
            self.jpos = (self.jpos + 1) % self.jlen
        self.dev.wait(cmds + [self.dev.submit_flush()])
        self.dev.wait(self.dev.submit_write(self.jbase + self.jpos, self.page(), fua=True))   # commit block
        self.jpos = (self.jpos + 1) % self.jlen
        cmds = []
        for l, d in pages:
            cmds += self.dev.submit_write(l, d)
        self.dev.wait(cmds + [self.dev.submit_flush()])

    # ------------------------------------------------------------------ concurrent (--qd N)
    def plan(self, wl: list[list[Update]]) -> tuple[list[dict], list[dict]]:
        """Fresh contents for every transaction of a segment and each one's whole pages, merged in
        workload order from the host's pages (the logical result the lock rule guarantees); the host's
        pages are then the segment's end state."""
        cache = dict(self.cache)
        news, pages = [], []
        for tx in wl:
            new = self.new_contents(tx)
            pg = {}
            for u in tx:
                w = new[u.lpn]
                if isinstance(w, bytes):
                    pg[u.lpn] = w
                else:
                    off, b = w
                    base = cache.get(u.lpn, bytes(PAGE_BYTES))
                    pg[u.lpn] = base[:off] + b + base[off + len(b):]
            cache.update(pg)
            news.append(new)
            pages.append(pg)
        self.cache = cache
        return news, pages

    def journal_stage(self, stage: int, st: dict) -> list:
        """Journal mode, one transaction's stage (submitted, not waited for): 0 its descriptor(s) and
        blocks to the journal + Flush, 1 its commit block (FUA), 2 its home writes + Flush."""
        if stage == 0:
            cmds = []
            for b in st["blocks"]:
                cmds += self.dev.submit_write(self.jbase + st["jpos"], b)
                st["jpos"] = (st["jpos"] + 1) % self.jlen
            return cmds + [self.dev.submit_flush()]
        if stage == 1:
            return self.dev.submit_write(self.jbase + st["jpos"], st["commit"], fua=True)
        cmds = []
        for l, d in st["pages"]:
            cmds += self.dev.submit_write(l, d)
        return cmds + [self.dev.submit_flush()]

    def journal_start(self, tx: list[Update], pages: dict) -> dict:
        """A transaction's journal blocks, laid out at once (its descriptor(s), blocks and commit block
        contiguous in the circular journal area, as jbd2 reserves them)."""
        pg = [(u.lpn, pages[u.lpn]) for u in tx]
        blocks = []
        for k in range(0, len(pg), DESC_PER):
            blocks.append(self.page())
            blocks += [d for _, d in pg[k:k + DESC_PER]]
        st = {"blocks": blocks, "pages": pg, "jpos": self.jpos, "commit": self.page()}
        self.jpos = (self.jpos + len(blocks) + 1) % self.jlen
        return st

    def run_concurrent(self, wl: list[list[Update]], mode: str, qd: int) -> dict:
        """One mode over the segment `wl`, up to `qd` transactions in flight under the lock rule and
        the txid bound (difftx_sched.TxScheduler). Returns the cycles from the first submission to the
        last completion, the transactions' latencies and the mean concurrency reached."""
        from difftx_sched import TxScheduler
        news, pages = self.plan(wl)
        journal = mode == "journal"
        parts = [[tx] if journal else split_for_device(tx, self.te) for tx in wl]
        sch = TxScheduler([{u.lpn for u in tx} for tx in wl], [len(p) for p in parts], qd,
                          None if journal else self.free_tx)
        live = []                                 # [commands, tx, part, Transaction | journal state, stage]
        start, end = {}, {}
        c0 = prev = None
        area_run = area_adm = 0
        while not sch.finished:
            for i, k in sch.step():
                if c0 is None:
                    c0 = prev = self.hp.cycle
                start.setdefault(i, self.hp.cycle)
                if journal:
                    st = self.journal_start(wl[i], pages[i])
                    live.append([self.journal_stage(0, st), i, k, st, 0])
                else:
                    t, cmds = self.shadow_part(parts[i][k], news[i], pages[i], mode == "shadow_diffwrite")
                    live.append([cmds, i, k, t, None])
            assert live, "scheduler: nothing in flight and nothing startable"
            if not any(all(c.done for c in g[0]) for g in live):
                self.dev.run(wait_any(self.drv, [c for g in live for c in g[0] if not c.done]))
            now = self.hp.cycle
            area_run += sch.running() * (now - prev)
            area_adm += sch.in_flight() * (now - prev)
            prev = now
            for g in [g for g in live if all(c.done for c in g[0])]:
                live.remove(g)
                cmds, i, k, t, stage = g
                self.dev.wait(cmds)                   # (all completed: raises on an error status)
                if journal and stage < 2:
                    live.append([self.journal_stage(stage + 1, t), i, k, t, stage + 1])
                    continue
                if not journal:
                    t.complete()
                sch.complete(i, k)
                if sch.done[i]:
                    end[i] = now
        cyc = self.hp.cycle - c0
        lat = [end[i] - start[i] for i in range(len(wl))]
        return {"cycles": cyc, "latency_cycles_mean": sum(lat) / len(lat), "latency_cycles_max": max(lat),
                "running_mean": area_run / cyc, "in_flight_mean": area_adm / cyc,
                "lock_waits": len(sch.lock_waited)}

    def read_back(self, lpns: list[int]) -> list[int]:
        """These LPNs read (all submitted, then waited for) against the host's pages: the differing ones."""
        got = {l: self.dev.submit_read(l) for l in lpns}
        return [l for l, cmds in got.items() if b"".join(c.data for c in self.dev.wait(cmds)) != self.cache[l]]


def wait_any(drv, cmds: list):
    """A driver generator: reaps until one of `cmds` completed (the driver's `wait` waits for all;
    this is its loop with `any`, on the driver's own reap / MSI gate / poll steps)."""
    waited, first = 0, True
    while not any(c.done for c in cmds):
        scope = set(drv.cqs)
        if first or not drv.use_irq or (yield from drv._irq_gate(scope)):
            for cqid in sorted(scope):
                yield from drv.reap(cqid)
        first = False
        if any(c.done for c in cmds):
            break
        waited = yield from drv._wait_cycles(waited, drv.timeout_cycles, "a completion")
    return cmds


def simulator(prebuilt: str | None) -> tuple[Path, Path, dict]:
    """The NVMe simulator of CONFIG: built (sim/soc/build.py, under its lock) or, with `prebuilt`, a
    copy made by `--snapshot` (the tree's RTL may change under a long run on a shared tree)."""
    import build as simbuild
    if not prebuilt:
        return simbuild.build_locked(CONFIG, nvme=True)
    d = Path(prebuilt).resolve()          # (the simulator runs in the workload's directory)
    return d / "ats_soc_sim", d / "firmware.init", json.loads((d / "config.json").read_text())


def snapshot(dest: Path) -> None:
    """The simulator, its firmware and configuration copied to `dest`, with `tree.diff` (`git diff
    HEAD` over SIM_PATHS after the build) and the tree's state (`tree`) before and after the build:
    `tree_dirty` when the simulator's sources differed from HEAD at either (`built_tree_after` only
    when the state changed during the build: then which of the two the build read is not known)."""
    t0 = tree()
    exe, fw, cfg = simulator(None)
    t1 = tree()
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(exe, dest / "ats_soc_sim")
    shutil.copy2(fw, dest / "firmware.init")
    # the uncommitted changes themselves (whose SHA-256 is built_tree's sim_diff_sha256 when unchanged)
    (dest / "tree.diff").write_bytes(subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--", *SIM_PATHS],
                                                    capture_output=True).stdout)
    same = all(t0[k] == t1[k] for k in ("head", "sim_dirty", "sim_diff_sha256"))
    (dest / "config.json").write_text(json.dumps(dict(
        cfg, built_from=t0["head"], tree_dirty=bool(t0["sim_dirty"] or t1["sim_dirty"]), built_tree=t0,
        **({} if same else {"built_tree_after": t1}))))


LOG_KEYS = ("nand_programs", "nand_reads", "host_pages", "ckpt_pages", "gc_relocs")
# the settle after prefill and after a mode's run: a Flush, then GET_LOG every SETTLE_POLL idle cycles
# until NAND programs and reads stay unchanged for SETTLE_QUIET polls in a row. The firmware's main loop
# runs a housekeeping pass at once after one that did something (a merge step is up to SLOG_STEP merges)
# and sleeps at most IDLE_WAIT = 100,000 cycles after one that did nothing (sw/firmware/README.md): the
# quiet window (1,000,000 cycles) spans 10 of its longest sleeps, every one ending in a pass.
SETTLE_POLL = 250_000
SETTLE_QUIET = 4
SETTLE_MAX = 400                   # polls (100 M cycles, 1 simulated s): beyond, the run fails


def settle(r: "Runner") -> tuple[dict, dict]:
    """Flush, then poll GET_LOG with idle time between until the NAND is quiet (SETTLE_*): the final
    counters and the settle's own figures (polls, cycles)."""
    c0 = r.hp.cycle
    r.dev.flush()
    prev = r.log()
    quiet = polls = 0
    while quiet < SETTLE_QUIET:
        assert polls < SETTLE_MAX, f"NAND not quiet after {polls} polls of {SETTLE_POLL} cycles"
        r.hp.run(SETTLE_POLL)
        cur = r.log()
        polls += 1
        same = all(cur[k] == prev[k] for k in ("nand_programs", "nand_reads"))
        quiet = quiet + 1 if same else 0
        prev = cur
    return prev, {"settle_polls": polls, "settle_cycles": r.hp.cycle - c0}


def run_point(name: str, txs: int, scale: float, seed: int, work: Path, prebuilt: str | None = None,
              qd: int = 1, mode: str = "shadow", sealt: int | None = None) -> dict:
    """One device, one workload, one mode (every device booted and prefilled alike, so each mode starts
    from the same state): the pool prefilled and the device settled, then with `qd` 1 every transaction
    one at a time from an idle device (a Flush waited for before each: the qd1 figures), with `qd` > 1
    all the transactions as one segment, up to `qd` in flight (Runner.run_concurrent); then settled
    again. Cycles: the transactions' (qd1: summed; qd: first submission to last completion); NAND
    counters: after the final settle - after the prefill's settle (`window_*`: to the last completion;
    `background_*`: the settle's); then the read-backs. `sealt`: the seal time the host sets after the
    boot (NVMe Set Features 0xC0, docs/architecture.md §1.2; read back), else the build's."""
    from atomssd.nvme_sim import boot
    from bench_tx import close_checked, nvme_up, start_device
    shape = SHAPES[name]
    exe, fw, cfg = simulator(prebuilt)
    hp = start_device(exe, fw, cfg, work.resolve() / f"{name}_qd{qd}_{mode}")
    t0, cpu0 = time.time(), os.times()
    conc = {}
    try:
        boot(hp, max_cycles=1_000_000_000)
        tr, drv, dev = nvme_up(hp)
        assert dev.info.lba_bytes == PAGE_BYTES, dev.info
        if sealt is not None:
            from atomssd.nvme import run_sync
            assert run_sync(drv.set_seal_time(sealt), tr) == sealt and run_sync(drv.get_seal_time(), tr) == sealt
        assert shape.meta_pool + shape.data_pool <= dev.info.num_lbas // 2
        r = Runner(hp, dev, drv, tr, shape, seed, slog=bool(cfg.get("frag_slots")))
        wl = gen_workload(shape, txs, seed, scale, meta_base=0, data_base=shape.meta_pool)
        r.prefill(list(range(shape.meta_pool)))
        l0, _ = settle(r)
        checked = 0
        probe = []
        if qd == 1:
            cyc = 0
            for tx in wl:
                new = r.new_contents(tx)
                dev.flush()
                c0 = hp.cycle
                if mode == "journal":
                    r.journal(tx, new)
                else:
                    r.shadow(tx, new, diff=mode == "shadow_diffwrite")
                cyc += hp.cycle - c0
                for u in tx:
                    r.cache[u.lpn] = r.merged(u.lpn, new[u.lpn])
        else:
            # the LPNs whose result depends on the lock rule's order (written by two transactions or more),
            # then others, read back after the segment (after the settle: reads are counted)
            seen: dict[int, int] = {}
            for tx in wl:
                for u in tx:
                    seen[u.lpn] = seen.get(u.lpn, 0) + 1
            rs = random.Random(seed)
            multi = sorted(l for l, n in seen.items() if n > 1)
            once = sorted(l for l, n in seen.items() if n == 1)
            probe = rs.sample(multi, min(48, len(multi)))
            probe += rs.sample(once, min(64 - len(probe), len(once)))
            conc = r.run_concurrent(wl, mode, qd)
            cyc = conc["cycles"]
        l1 = r.log()                              # at the last completion
        l2, st = settle(r)
        if probe:
            bad = r.read_back(probe)
            assert not bad, f"{name} qd {qd} {mode}: read-back differs at LPNs {bad[:8]}"
            checked += len(probe)
        # read-back: the mode wrote the logical result the host's pages hold
        sample = random.Random(seed).sample(sorted(r.cache), min(64, len(r.cache)))
        bad = [l for l in sample if dev.read(l) != r.cache[l]]
        assert not bad, f"{name} qd {qd} {mode}: read-back differs at LPNs {bad[:8]}"
        checked += len(sample)
        log = r.log()
        info = close_checked(hp)
    except BaseException:
        hp.close()
        raise
    return {"name": name, "qd": qd, "mode": mode, "cycles": cyc, "conc": conc, "settle": st,
            "total": {k: l2[k] - l0[k] for k in LOG_KEYS}, "window": {k: l1[k] - l0[k] for k in LOG_KEYS},
            "background": {k: l2[k] - l1[k] for k in LOG_KEYS}, "read_back_lpns": checked,
            "tx_entries": dev.info.tx_entries, "seal_time": sealt,
            "device_log": {k: log[k] for k in ("host_pages", "nand_programs", "wa_x1000", "checkpoints", "ckpt_pages",
                                               "gc_runs", "gc_relocs") if k in log},
            "sim_mhz": info.get("sim_mhz"), "wall_s": round(time.time() - t0, 1),
            "cpu_s": round(sum(os.times()[:4]) - sum(cpu0[:4]), 1)}     # this worker and its simulator


def make_point(name: str, txs: int, scale: float, seed: int, cfg: dict, raws: dict) -> dict:
    """A workload at one qd from its three devices' `run_point`s (`raws`: mode -> result)."""
    shape = SHAPES[name]
    wl = gen_workload(shape, txs, seed, scale, meta_base=0, data_base=shape.meta_pool)
    te = raws["shadow"]["tx_entries"]
    clk = cfg["sys_clk_hz"]
    app = sum(u.app_bytes for tx in wl for u in tx)
    n_pages = sum(len(tx) for tx in wl)
    n_part = sum(1 for tx in wl for u in tx if not u.full)
    modes = {}
    for m in MODES:
        rw = raws[m]
        d, cyc = rw["total"], rw["cycles"]
        nb = d["nand_programs"] * PAGE_BYTES
        modes[m] = {"cycles": cyc, "sim_s": cyc / clk, "tps": txs / (cyc / clk),
                    "nand_programs": d["nand_programs"], "nand_bytes": nb, "nand_bytes_per_tx": nb / txs,
                    "nand_reads": d["nand_reads"], "wa": nb / app,
                    **{k: d[k] for k in ("host_pages", "ckpt_pages", "gc_relocs")},
                    "window_programs": rw["window"]["nand_programs"], "window_reads": rw["window"]["nand_reads"],
                    "background_programs": rw["background"]["nand_programs"],
                    "background_reads": rw["background"]["nand_reads"],
                    "background_ckpt_pages": rw["background"]["ckpt_pages"], **rw["settle"],
                    "device_log": rw["device_log"], "cpu_s": rw["cpu_s"], **rw["conc"]}
        if rw["conc"]:
            modes[m]["latency_us_mean"] = rw["conc"]["latency_cycles_mean"] / clk * 1e6
    for m in MODES:
        modes[m]["traffic_vs_shadow"] = modes[m]["nand_bytes"] / modes["shadow"]["nand_bytes"]
        modes[m]["tps_vs_shadow"] = modes[m]["tps"] / modes["shadow"]["tps"]
    slog_dev = bool(cfg.get("frag_slots"))
    model = model_point(wl, te, txs, cfg.get("frag_slots") or None, cfg.get("slog_lpns", 256))
    model["traffic_vs_shadow_measured"] = model["nand_bytes"] / modes["shadow"]["nand_bytes"]
    sd = modes["shadow_diffwrite"]
    parts = [len(split_for_device(tx, te)) for tx in wl]
    return {
        "name": name, "wa": sd["wa"] if slog_dev else None,
        "traffic_vs_shadow": sd["traffic_vs_shadow"] if slog_dev else None,
        "tps_vs_shadow": sd["tps_vs_shadow"] if slog_dev else None,
        "slog": slog_measured(cfg["frag_slots"]) if slog_dev else SLOG_STATUS,
        "limit": limit_point(wl, te, txs, cfg, modes),
        "device_txs": {"per_tx": sum(parts) / txs, "max_pages": te, "slog_txfull": SLOG_TXFULL,
                       "note": "a transaction above the tx table's pages runs as ceil(pages / tx_entries) device "
                               "transactions; none has more than SLOG_TXFULL full pages, so each may have a record"},
        "modes": modes, "slog_model": model, "txs": txs, "scale": scale,
        "qd": raws["shadow"]["qd"], "read_back_lpns": sum(raws[m]["read_back_lpns"] for m in MODES),
        "shape": {"pages_per_tx_table3": shape.pages_mean, "pages_per_tx": n_pages / txs,
                  "partial_frac_assumed": shape.partial_frac, "partial_frac": n_part / n_pages,
                  "partial_bytes_mean": (sum(u.length for tx in wl for u in tx if not u.full) / n_part
                                         if n_part else None),
                  "app_bytes": app, "app_bytes_per_tx": app / txs, "threshold": THRESHOLD},
        "sim_mhz": raws["shadow"]["sim_mhz"], "wall_s": max(raws[m]["wall_s"] for m in MODES),
        "cpu_s": round(sum(raws[m]["cpu_s"] for m in MODES), 1),
    }


def merge_point(p1: dict, pq: dict | None) -> dict:
    """A workload's entry: the concurrent run's figures as the headline (`wa`, `traffic_vs_shadow`,
    `tps_vs_shadow`, `modes_qd`), the one-at-a-time run's beside them (`*_qd1`, `modes`); the NAND
    programs of each mode in both runs side by side (`programs_check`)."""
    out = dict(p1, wa_qd1=p1["wa"], traffic_vs_shadow_qd1=p1["traffic_vs_shadow"], tps_vs_shadow_qd1=p1["tps_vs_shadow"],
               qd=1, modes_qd=None, programs_check=None)
    if pq is None:
        return out
    out.update(qd=pq["qd"], wa=pq["wa"], traffic_vs_shadow=pq["traffic_vs_shadow"], tps_vs_shadow=pq["tps_vs_shadow"],
               modes_qd=pq["modes"], cpu_s=p1["cpu_s"] + pq["cpu_s"], cpu_s_qd1=p1["cpu_s"], cpu_s_qd=pq["cpu_s"],
               read_back_lpns=p1["read_back_lpns"] + pq["read_back_lpns"])
    out["programs_check"] = {m: {f"{k}_{w}": pp["modes"][m][k2] for w, pp in (("qd1", p1), ("qd", pq))
                                 for k, k2 in (("programs", "nand_programs"), ("host_pages", "host_pages"),
                                               ("ckpt_pages", "ckpt_pages"), ("nand_reads", "nand_reads"),
                                               ("background_programs", "background_programs"),
                                               ("background_reads", "background_reads"))}
                             for m in MODES}
    lim = out["limit"] = dict(p1["limit"])
    lim["tps_slog_measured_qd"] = pq["modes"]["shadow_diffwrite"]["tps"]
    lim["tps_shadow_measured_qd"] = pq["modes"]["shadow"]["tps"]
    return out


def limit_point(wl, entries: int, txs: int, cfg: dict, modes: dict | None = None) -> dict:
    """The physical limits (a) is compared against: the floor of NAND pages (`floor_point`) as WA and as
    a share of shadowing's bytes, and tx/s at the NAND's program rate for that floor and for shadowing
    (one program per updated page): their ratio bounds `tps_vs_shadow` while the NAND is the bound."""
    lim = nand_limits(cfg)
    fl = floor_point(wl, entries, PAGE_BYTES)
    app = sum(u.app_bytes for tx in wl for u in tx)
    shadow_pages = sum(len(tx) for tx in wl)
    rate = lim["write_pages_per_s"]
    out = {**lim, "floor_pages": fl["pages"], "floor_full_pages": fl["full_pages"], "floor_diff_pages": fl["diff_pages"],
           "wa_floor": fl["pages"] * PAGE_BYTES / app, "traffic_vs_shadow_floor": fl["pages"] / shadow_pages,
           "tps_floor_max": rate * txs / fl["pages"], "tps_shadow_max": rate * txs / shadow_pages,
           "tps_vs_shadow_max": shadow_pages / fl["pages"],
           "note": "floor: every full update one page program, each device transaction's differential bytes in "
                   "whole pages (no record header, META-PU, merge or checkpoint); tx/s limits: the NAND's program "
                   "rate over those pages (at qd1 the bench runs one transaction at a time from an idle device, so "
                   "its tx/s is latency-bound below them; tps_*_measured_qd: the concurrent run's)"}
    if modes:
        out["traffic_vs_shadow_floor_measured"] = fl["pages"] * PAGE_BYTES / modes["shadow"]["nand_bytes"]
    return out


def model_point(wl, entries: int, txs: int, frag_slots: int | None = None, lpns: int = 256) -> dict:
    """(a) as a model (not measured): the S-Log's NAND bytes for these transactions, and the same
    model's full-page shadowing, whose ratio is `traffic_vs_shadow_model`. lpns: the device's S-Log
    index entries (config.json `slog_lpns`, absent at 256; b5_256_slog: 1,024), the merge trigger's base."""
    m = slog_nand(wl, split_for_device, entries, PAGE_BYTES, frag_slots=frag_slots, txfull=SLOG_TXFULL, lpns=lpns)
    m["nand_bytes_per_tx"] = m["nand_bytes"] / txs
    m["shadow_nand_bytes_model"] = shadow_nand(wl, PAGE_BYTES)
    m["traffic_vs_shadow_model"] = m["nand_bytes"] / m["shadow_nand_bytes_model"]
    return m


def config_dict(name: str) -> dict:
    """The configuration's parameters without a build (soc/ats_litex.py), for --model-only."""
    sys.path.insert(0, str(ROOT / "soc"))
    from dataclasses import asdict
    from ats_litex import CONFIGS
    c = CONFIGS[name]
    return dict(asdict(c), ndie=c.ndie)


def model_only(names, txs, scales, seed) -> None:
    cfg = config_dict(CONFIG)
    fs = cfg.get("frag_slots") or None
    lim = nand_limits(cfg)
    print(f"B4 (a) S-Log: model, not measured ({PAGE_BYTES} B pages, threshold {THRESHOLD} B, tx tables {TX_ENTRIES}, "
          f"FRAG slots {fs or 'unlimited'}, index {cfg.get('slog_lpns', 256)} entries ({CONFIG})); limit: the floor of NAND pages and tx/s at "
          f"{lim['write_pages_per_s']:.0f} programs/s ({lim['bound']})")
    print(f"{'workload':>10} {'txs':>4} {'scale':>5} | {'WA':>5} {'KiB/tx':>8} {'log pg':>6} {'full pg':>7} "
          f"{'merges':>6} {'fallb':>5} | {'traffic/shadow':>14} {'tps/sh @NAND':>12} | {'floor WA':>8} "
          f"{'traffic':>7} {'tps/sh':>6}")
    for n in names:
        wl = gen_workload(SHAPES[n], txs[n], seed, scales[n], meta_base=0, data_base=SHAPES[n].meta_pool)
        m = model_point(wl, TX_ENTRIES, txs[n], fs, cfg.get("slog_lpns", 256))
        f = limit_point(wl, TX_ENTRIES, txs[n], cfg)
        print(f"{n:>10} {txs[n]:>4} {scales[n]:>5} | {m['wa']:>5.2f} {m['nand_bytes_per_tx'] / 1024:>8.1f} "
              f"{m['log_pages']:>6} {m['full_pages']:>7} {m['merges']:>6} {m['fragment_fallbacks']:>5} | "
              f"{m['traffic_vs_shadow_model']:>14.2f} {1 / m['traffic_vs_shadow_model']:>12.2f} | "
              f"{f['wa_floor']:>8.2f} {f['traffic_vs_shadow_floor']:>7.2f} {f['tps_vs_shadow_max']:>6.2f}")


def main() -> None:
    global CONFIG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(SHAPES))
    ap.add_argument("--txs", default="", help="name=count,... (default " +
                    ",".join(f"{k}={v}" for k, v in TXS.items()) + ")")
    ap.add_argument("--large-scale", type=float, default=LARGE_SCALE,
                    help=f"pages per transaction x this for fileserver and webproxy (default {LARGE_SCALE}; "
                         "1: Table 3's sizes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build/bench/difftx.json"))
    ap.add_argument("--prebuilt", help="run this copy of the simulator (a --snapshot directory)")
    ap.add_argument("--snapshot", help="build the simulator, copy it with its firmware and configuration here, exit")
    ap.add_argument("--config", default=CONFIG, help="the device (b5_256_slog: (a) measured; b5_256: today's "
                                                      "DIFFWRITE, (a) null)")
    ap.add_argument("--qd", type=int, default=QD,
                    help=f"transactions in flight in the concurrent runs (default {QD}; 1: only the one-at-a-time "
                         "runs; a workload of one transaction has none)")
    ap.add_argument("--seal-time", default="", help="name=cycles,...: the seal time the host sets for that "
                    "workload's devices (NVMe Set Features 0xC0, a device that packs records: b5_256_slogpk*); "
                    "default: the build's")
    ap.add_argument("--model-only", action="store_true",
                    help="print (a)'s model figures (not measured) for the workloads, without the simulator")
    a = ap.parse_args()
    CONFIG = os.environ["ATS_DIFFTX_CONFIG"] = a.config          # (the workers read it too)
    if a.snapshot:
        snapshot(Path(a.snapshot))
        return
    names = [n for n in a.workloads.split(",") if n]
    txs = dict(TXS, **{k: int(v) for k, v in (kv.split("=") for kv in a.txs.split(",") if kv)})
    sealt = {k: int(v) for k, v in (kv.split("=") for kv in a.seal_time.split(",") if kv)}
    if set(sealt) - set(names):
        ap.error(f"--seal-time names {sorted(set(sealt) - set(names))} are not among --workloads {names}")
    scales = {n: (a.large_scale if SHAPES[n].pages_mean > 64 else 1.0) for n in names}
    if a.model_only:
        model_only(names, txs, scales, a.seed)
        return
    work = ROOT / "build/bench/difftx"
    work.mkdir(parents=True, exist_ok=True)
    exe, _, cfg0 = simulator(a.prebuilt)                          # built once, before the workers
    run_tree = tree()                                             # the bench's own code at this run
    if a.prebuilt:
        sim_tree = {k: cfg0[k] for k in ("built_tree", "built_tree_after") if k in cfg0} or None
        head, dirty = cfg0["built_from"], cfg0["tree_dirty"]
    else:
        sim_tree, head, dirty = {"built_tree": run_tree}, run_tree["head"], bool(run_tree["sim_dirty"])
    t0 = time.time()
    # one device per (workload, qd, mode), booted and prefilled alike
    qds = {n: [1] + ([a.qd] if a.qd > 1 and txs[n] > 1 else []) for n in names}
    jobs = [(n, q, m) for n in names for q in qds[n] for m in MODES]
    jobs.sort(key=lambda j: -txs[j[0]] * scales[j[0]] * SHAPES[j[0]].pages_mean)     # the longest first
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        got = list(ex.map(run_point, [n for n, _, _ in jobs], [txs[n] for n, _, _ in jobs],
                          [scales[n] for n, _, _ in jobs], [a.seed] * len(jobs), [work] * len(jobs),
                          [a.prebuilt] * len(jobs), [q for _, q, _ in jobs], [m for _, _, m in jobs],
                          [sealt.get(n) for n, _, _ in jobs]))
    raw = {j: p for j, p in zip(jobs, got)}
    byq = {(n, q): make_point(n, txs[n], scales[n], a.seed, cfg0, {m: raw[(n, q, m)] for m in MODES})
           for n in names for q in qds[n]}
    pts = [merge_point(byq[(n, 1)], byq.get((n, a.qd))) for n in names]
    slog_dev = bool(cfg0.get("frag_slots"))
    slog_txt = slog_measured(cfg0["frag_slots"]) if slog_dev else SLOG_STATUS
    print(f"B4 ({CONFIG}, {PAGE_BYTES} B pages, threshold {THRESHOLD} B; simulated time; S-Log: {slog_txt})")
    if cfg0.get("slog_pack"):
        print("seal time (cycles; set by the host with Set Features 0xC0, else the build's): " +
              ", ".join(f"{n} {sealt.get(n, cfg0.get('slog_sealt'))}" for n in names))
    for key, what in (("modes", "qd1: one transaction at a time from an idle device"),
                      ("modes_qd", f"qd {a.qd}: up to {a.qd} transactions in flight under the lock rule")):
        print(f"-- {what}")
        print(f"{'workload':>10} {'txs':>4} {'pg/tx':>7} {'part':>5} | " +
              " | ".join(f"{m:^30}" for m in MODES) + " | run/adm")
        print(f"{'':>10} {'':>4} {'':>7} {'':>5} | " + " | ".join(f"{'WA':>6} {'KiB/tx':>9} {'tx/s':>8} {'tps/sh':>5}"
                                                                for _ in MODES))
        for p in pts:
            s, md = p["shape"], p.get(key)
            if md is None:
                print(f"{p['name']:>10} (one transaction: no concurrent run)")
                continue
            conc = (" | " + " ".join(f"{md[m]['running_mean']:.1f}/{md[m]['in_flight_mean']:.1f}" for m in MODES)
                    if "running_mean" in md["shadow"] else "")
            print(f"{p['name']:>10} {p['txs']:>4} {s['pages_per_tx']:>7.1f} {s['partial_frac']:>5.2f} | " +
                  " | ".join(f"{md[m]['wa']:>6.2f} {md[m]['nand_bytes_per_tx'] / 1024:>9.1f} "
                             f"{md[m]['tps']:>8.1f} {md[m]['tps_vs_shadow']:>5.2f}" for m in MODES) + conc)
    print("NAND programs qd1 -> qd (host pages qd1 -> qd; checkpoint pages; the settle's background programs / "
          "reads): per mode, each on its own device, prefill to settled end")
    for p in pts:
        if p.get("programs_check"):
            print(f"{p['name']:>10} | " + " | ".join(
                f"{m} {c['programs_qd1']}->{c['programs_qd']} ({c['host_pages_qd1']}->{c['host_pages_qd']}; "
                f"{c['ckpt_pages_qd1']}/{c['ckpt_pages_qd']}; bg {c['background_programs_qd1']}/"
                f"{c['background_reads_qd1']} -> {c['background_programs_qd']}/{c['background_reads_qd']})"
                for m, c in p["programs_check"].items()))
        else:
            print(f"{p['name']:>10} | " + " | ".join(
                f"{m} {c['nand_programs']} ({c['host_pages']}; {c['ckpt_pages']}; bg {c['background_programs']}/"
                f"{c['background_reads']})" for m, c in p["modes"].items()))
    print("tx/s measured against the physical limit (tx/s at the NAND's program rate: the floor's pages, shadowing's)")
    for p in pts:
        f, md = p["limit"], p.get("modes_qd") or p["modes"]
        print(f"{p['name']:>10} | S-Log {md['shadow_diffwrite']['tps']:>8.1f} (limit {f['tps_floor_max']:>8.1f}) | "
              f"shadow {md['shadow']['tps']:>8.1f} (limit {f['tps_shadow_max']:>8.1f}) | ratio "
              f"{md['shadow_diffwrite']['tps_vs_shadow']:.2f} (limit {f['tps_vs_shadow_max']:.2f}) at qd {p['qd']}")
    print("(a) S-Log, model, not measured (bench/difftx/slog_model.py): WA, KiB/tx, NAND bytes / measured shadow's"
          " | limit: floor WA, floor bytes / measured shadow's, tx/s ratio at the NAND's program rate")
    for p in pts:
        m, f = p["slog_model"], p["limit"]
        print(f"{p['name']:>10} | {m['wa']:>6.2f} {m['nand_bytes_per_tx'] / 1024:>9.1f} "
              f"{m['traffic_vs_shadow_measured']:>5.2f} | {f['wa_floor']:>6.2f} "
              f"{f['traffic_vs_shadow_floor_measured']:>5.2f} {f['tps_vs_shadow_max']:>5.2f}")
    print("(a) against the targets (WA <= 1.1 on varmail and TPC-C, bytes <= 0.5x shadowing, tx/s >= 1.25x), "
          "qd N (qd1):")
    for p in pts:
        if p["wa"] is not None:
            print(f"{p['name']:>10} | qd {p['qd']}: WA {p['wa']:.2f} ({p['wa_qd1']:.2f})  bytes "
                  f"{p['traffic_vs_shadow']:.2f}x ({p['traffic_vs_shadow_qd1']:.2f}x)  tx/s {p['tps_vs_shadow']:.2f}x "
                  f"({p['tps_vs_shadow_qd1']:.2f}x)  (cpu {p['cpu_s']:.0f} s)")
    print(f"wall {time.time() - t0:.0f} s")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    res = {"bench": "B4", "config": CONFIG, "frag_slots": cfg0.get("frag_slots", 0), "commit": head,
           "tree_dirty": dirty, "sim_tree": sim_tree, "run_tree": run_tree, "seed": a.seed,
           "large_scale": a.large_scale, "qd": a.qd,
           "seal_time": {n: sealt.get(n, cfg0.get("slog_sealt")) for n in names},     # (the host's, else the build's)
           "threshold": THRESHOLD, "page_bytes": PAGE_BYTES, "slog": slog_txt,
           "targets": TARGETS,
           "definitions": {"wa": "NAND bytes programmed / workload bytes (4 KiB per full update + the differential "
                                 "bytes of each partial update)",
                           "traffic_vs_shadow": "NAND bytes / those of full-page shadowing (mode shadow) in the same run",
                           "tps_vs_shadow": "transactions per simulated second / those of mode shadow",
                           "qd": "wa / traffic_vs_shadow / tps_vs_shadow and modes_qd: the concurrent run (up to qd "
                                 "transactions in flight, a transaction waiting for every earlier one sharing an LPN, "
                                 "at most num_tx device transactions); *_qd1 and modes: one transaction at a time from "
                                 "an idle device; a workload of one transaction: qd 1",
                           "limit": "per workload: the floor of NAND pages and tx/s at the NAND's program rate "
                                    "(limit_point)"},
           "modes": {"slog": "(a) the S-Log: " + slog_txt + "; per workload `slog_model`: its NAND bytes "
                             "as a model, not measured",
                     "shadow": "(b) whole-page TX Writes, COMMIT on the last page (reference of the ratios)",
                     "shadow_diffwrite": ("(a) on this device: partial updates as S-Log DIFFWRITEs (fragments)" if slog_dev
                                          else "(b) partial updates as today's DIFFWRITE (read-modify-write of the page)"),
                     "journal": "(c) host data journaling: journal blocks + Flush, commit block FUA, home writes + Flush"},
           "workloads": pts}
    out.write_text(json.dumps(res, indent=1))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
