# SPDX-License-Identifier: Apache-2.0
"""B4 (issue 40): DiffTx's workload shapes through the real simulated device: write amplification,
NAND bytes per transaction and transactions per second of (a) the S-Log, (b) full-page shadowing and
(c) host data journaling, in one run.

(a) The S-Log (docs/architecture.md §11, docs/persistence.md §10): measured with `--config b5_256_slog`
    (the device with 4 FRAG slots, SLOG_THR 512: `shadow_diffwrite`'s DIFFWRITEs are S-Log fragments,
    its figures are the workload's `wa` / `traffic_vs_shadow` / `tps_vs_shadow`); on `b5_256` they are
    null with the reason. Next to them, `slog_model` gives its NAND bytes as a
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

The device is bench-tx's: the `b5_256` configuration (4 channels x 2 ways, 4 KiB pages, 16 Ki LBAs,
FEMU tR 40 / tPROG 200 us, 100 MHz, formatted offline with a plan of 32 blocks a die) in its NVMe
build, driven through the NVMe front end's RTL by the transactional host API
(sw/host/atomssd/txapi.py) and bench-tx's transport (completions at their MSI: exact cycles). One
device per workload (the jobs run in parallel); on it the metadata pool is written once (so a
DIFFWRITE's base page is on the media), then every transaction of the workload runs under each mode,
the order of the modes rotated per transaction, each from an idle device (a Flush waited for).

A paper transaction larger than the device's `tx_entries` pages (64: the tx tables' size) runs as
ceil(pages / 64) device transactions submitted at once (txids reused as their commits complete);
the workload shapes are bench/difftx/difftx_workloads.py's (Table 3 averages; Fig. 2's proportions are
stated assumptions there).

Measured per mode: simulated cycles from the first submission of a transaction to the completion of
its last command (tps = transactions / simulated seconds); NAND bytes = GET_LOG k2 (NAND programs:
host pages, commit records, checkpoint pages, GC copies) before / after the mode's segment x 4 KiB;
the workload's bytes = 4 KiB per full update + the differential bytes of each partial update (the
paper's denominator); wa = NAND bytes / workload bytes. At the end a sample of the pools is read
back and compared with the host's pages (every mode writes the same logical result).

Output: build/bench/difftx.json (`workloads`: per workload `name`, `wa`, `traffic_vs_shadow`,
`tps_vs_shadow` of the S-Log: null, not built; `modes`: the measured figures of each mode; the shape
realised), a table on stdout.
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

# the device; --config b5_256_slog (the same with the S-Log: 4 FRAG slots, SLOG_THR = 512 set by the
# firmware) measures (a): there `shadow_diffwrite`'s DIFFWRITEs below 512 bytes are S-Log fragments
CONFIG = os.environ.get("ATS_DIFFTX_CONFIG", "b5_256")
MODES = ("shadow", "shadow_diffwrite", "journal")
TXS = {"varmail": 24, "tpcc": 24, "fileserver": 1, "webproxy": 2}
DESC_PER = 255                     # journal tags per descriptor block
TARGETS = {"wa_max": 1.1, "traffic_vs_shadow_max": 0.5, "tps_vs_shadow_min": 1.25}   # issue 40 item 6
SLOG_STATUS = "not measured on this configuration (its write buffer has no FRAG slots: --config b5_256_slog)"
SLOG_MEASURED = ("measured: shadow_diffwrite on a device with the S-Log (FRAG_SLOTS 4, SLOG_THR 512): partial "
                 "updates below 512 B as S-Log fragments, full updates as TX Writes")


def tree() -> tuple[str, bool]:
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", "rtl", "sim", "soc",
                                  "sw", "spinal"], capture_output=True, text=True).stdout.strip()
    return head or "?", bool(dirty)


class Runner:
    """One device: the pools, the host's page cache, the three modes."""

    def __init__(self, hp, dev, drv, tr, shape, seed: int):
        self.hp, self.dev, self.drv, self.tr, self.shape = hp, dev, drv, tr, shape
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

    def shadow(self, tx: list[Update], new: dict, diff: bool) -> None:
        def part(p: list[Update]):
            t = self.dev.begin(explicit=False)
            cmds = []
            for i, u in enumerate(p):
                last = i == len(p) - 1
                if diff and not u.full:
                    off, b = new[u.lpn]
                    t.pages.add(u.lpn)
                    cmds.append(self.dev.run(self.drv.submit_diff_write(self.dev.qid, u.lpn, off, b, t.txid)))
                else:
                    cmds += t.submit_write(u.lpn, self.merged(u.lpn, new[u.lpn]), commit=last)
            if diff and not p[-1].full:
                cmds.append(t.submit_commit())
            return t, cmds
        self.run_parts(split_for_device(tx, self.te), part)

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


def simulator(prebuilt: str | None) -> tuple[Path, Path, dict]:
    """The NVMe simulator of CONFIG: built (sim/soc/build.py, under its lock) or, with `prebuilt`, a
    copy made by `--snapshot` (the tree's RTL may change under a long run on a shared tree)."""
    import build as simbuild
    if not prebuilt:
        return simbuild.build_locked(CONFIG, nvme=True)
    d = Path(prebuilt)
    return d / "ats_soc_sim", d / "firmware.init", json.loads((d / "config.json").read_text())


def snapshot(dest: Path) -> None:
    exe, fw, cfg = simulator(None)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(exe, dest / "ats_soc_sim")
    shutil.copy2(fw, dest / "firmware.init")
    head, dirty = tree()
    (dest / "config.json").write_text(json.dumps(dict(cfg, built_from=head, tree_dirty=dirty)))


def run_point(name: str, txs: int, scale: float, seed: int, work: Path, prebuilt: str | None = None) -> dict:
    from atomssd.nvme_sim import boot
    from bench_tx import close_checked, nvme_up, start_device
    shape = SHAPES[name]
    exe, fw, cfg = simulator(prebuilt)
    hp = start_device(exe, fw, cfg, work.resolve() / name)
    t0 = time.time()
    try:
        boot(hp, max_cycles=1_000_000_000)
        tr, drv, dev = nvme_up(hp)
        assert dev.info.lba_bytes == PAGE_BYTES, dev.info
        assert shape.meta_pool + shape.data_pool <= dev.info.num_lbas // 2
        r = Runner(hp, dev, drv, tr, shape, seed)
        wl = gen_workload(shape, txs, seed, scale, meta_base=0, data_base=shape.meta_pool)
        r.prefill(list(range(shape.meta_pool)))
        cyc = {m: 0 for m in MODES}
        progs = {m: 0 for m in MODES}
        reads = {m: 0 for m in MODES}
        app = sum(u.app_bytes for tx in wl for u in tx)
        for i, tx in enumerate(wl):
            new = r.new_contents(tx)
            order = MODES[i % len(MODES):] + MODES[:i % len(MODES)]
            for m in order:
                dev.flush()
                l0 = r.log()
                c0 = hp.cycle
                if m == "journal":
                    r.journal(tx, new)
                else:
                    r.shadow(tx, new, diff=m == "shadow_diffwrite")
                cyc[m] += hp.cycle - c0
                l1 = r.log()
                progs[m] += l1["nand_programs"] - l0["nand_programs"]
                reads[m] += l1["nand_reads"] - l0["nand_reads"]
            for u in tx:
                r.cache[u.lpn] = r.merged(u.lpn, new[u.lpn])
        # read-back: every mode wrote the same logical result
        sample = random.Random(seed).sample(sorted(r.cache), min(64, len(r.cache)))
        bad = [l for l in sample if dev.read(l) != r.cache[l]]
        assert not bad, f"{name}: read-back differs at LPNs {bad[:8]}"
        log = r.log()
        info = close_checked(hp)
    except BaseException:
        hp.close()
        raise
    clk = cfg["sys_clk_hz"]
    n_pages = sum(len(tx) for tx in wl)
    n_part = sum(1 for tx in wl for u in tx if not u.full)
    modes = {}
    for m in MODES:
        nb = progs[m] * PAGE_BYTES
        modes[m] = {"cycles": cyc[m], "sim_s": cyc[m] / clk, "tps": txs / (cyc[m] / clk),
                    "nand_programs": progs[m], "nand_bytes": nb, "nand_bytes_per_tx": nb / txs,
                    "nand_reads": reads[m], "wa": nb / app}
    for m in MODES:
        modes[m]["traffic_vs_shadow"] = modes[m]["nand_bytes"] / modes["shadow"]["nand_bytes"]
        modes[m]["tps_vs_shadow"] = modes[m]["tps"] / modes["shadow"]["tps"]
    model = model_point(wl, dev.info.tx_entries, txs)
    model["traffic_vs_shadow_measured"] = model["nand_bytes"] / modes["shadow"]["nand_bytes"]
    slog_dev = bool(cfg.get("frag_slots"))
    sd = modes["shadow_diffwrite"]
    return {
        "name": name, "wa": sd["wa"] if slog_dev else None,
        "traffic_vs_shadow": sd["traffic_vs_shadow"] if slog_dev else None,
        "tps_vs_shadow": sd["tps_vs_shadow"] if slog_dev else None,
        "slog": SLOG_MEASURED if slog_dev else SLOG_STATUS,
        "modes": modes, "slog_model": model, "txs": txs, "scale": scale,
        "shape": {"pages_per_tx_table3": shape.pages_mean, "pages_per_tx": n_pages / txs,
                  "partial_frac_assumed": shape.partial_frac, "partial_frac": n_part / n_pages,
                  "partial_bytes_mean": (sum(u.length for tx in wl for u in tx if not u.full) / n_part
                                         if n_part else None),
                  "app_bytes": app, "app_bytes_per_tx": app / txs, "threshold": THRESHOLD},
        "device_log": {k: log[k] for k in ("host_pages", "nand_programs", "wa_x1000", "checkpoints", "ckpt_pages",
                                           "gc_runs", "gc_relocs") if k in log},
        "sim_mhz": info.get("sim_mhz"), "wall_s": round(time.time() - t0, 1),
    }


def model_point(wl, entries: int, txs: int) -> dict:
    """(a) as a model (not measured): the S-Log's NAND bytes for these transactions, and the same
    model's full-page shadowing, whose ratio is `traffic_vs_shadow_model`."""
    m = slog_nand(wl, split_for_device, entries, PAGE_BYTES)
    m["nand_bytes_per_tx"] = m["nand_bytes"] / txs
    m["shadow_nand_bytes_model"] = shadow_nand(wl, PAGE_BYTES)
    m["traffic_vs_shadow_model"] = m["nand_bytes"] / m["shadow_nand_bytes_model"]
    return m


def model_only(names, txs, scales, seed) -> None:
    print(f"B4 (a) S-Log: model, not measured ({PAGE_BYTES} B pages, threshold {THRESHOLD} B, tx tables {TX_ENTRIES})")
    print(f"{'workload':>10} {'txs':>4} {'scale':>5} | {'WA':>5} {'KiB/tx':>8} {'log pg':>6} {'full pg':>7} "
          f"{'merges':>6} {'fallb':>5} | {'traffic/shadow':>14}")
    for n in names:
        wl = gen_workload(SHAPES[n], txs[n], seed, scales[n], meta_base=0, data_base=SHAPES[n].meta_pool)
        m = model_point(wl, TX_ENTRIES, txs[n])
        print(f"{n:>10} {txs[n]:>4} {scales[n]:>5} | {m['wa']:>5.2f} {m['nand_bytes_per_tx'] / 1024:>8.1f} "
              f"{m['log_pages']:>6} {m['full_pages']:>7} {m['merges']:>6} {m['fragment_fallbacks']:>5} | "
              f"{m['traffic_vs_shadow_model']:>14.2f}")


def main() -> None:
    global CONFIG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(SHAPES))
    ap.add_argument("--txs", default="", help="name=count,... (default " +
                    ",".join(f"{k}={v}" for k, v in TXS.items()) + ")")
    ap.add_argument("--large-scale", type=float, default=1.0,
                    help="pages per transaction x this for fileserver and webproxy (1: Table 3's sizes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build/bench/difftx.json"))
    ap.add_argument("--prebuilt", help="run this copy of the simulator (a --snapshot directory)")
    ap.add_argument("--snapshot", help="build the simulator, copy it with its firmware and configuration here, exit")
    ap.add_argument("--config", default=CONFIG, help="the device (b5_256; b5_256_slog: (a) measured)")
    ap.add_argument("--model-only", action="store_true",
                    help="print (a)'s model figures (not measured) for the workloads, without the simulator")
    a = ap.parse_args()
    CONFIG = os.environ["ATS_DIFFTX_CONFIG"] = a.config          # (the workers read it too)
    if a.snapshot:
        snapshot(Path(a.snapshot))
        return
    names = [n for n in a.workloads.split(",") if n]
    txs = dict(TXS, **{k: int(v) for k, v in (kv.split("=") for kv in a.txs.split(",") if kv)})
    scales = {n: (a.large_scale if SHAPES[n].pages_mean > 64 else 1.0) for n in names}
    if a.model_only:
        model_only(names, txs, scales, a.seed)
        return
    work = ROOT / "build/bench/difftx"
    work.mkdir(parents=True, exist_ok=True)
    exe, _, cfg0 = simulator(a.prebuilt)                          # built once, before the workers
    head, dirty = (cfg0["built_from"], cfg0["tree_dirty"]) if a.prebuilt else tree()
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        pts = list(ex.map(run_point, names, [txs[n] for n in names], [scales[n] for n in names],
                          [a.seed] * len(names), [work] * len(names), [a.prebuilt] * len(names)))
    slog_dev = bool(cfg0.get("frag_slots"))
    print(f"B4 ({CONFIG}, {PAGE_BYTES} B pages, threshold {THRESHOLD} B; simulated time; S-Log: "
          f"{SLOG_MEASURED if slog_dev else SLOG_STATUS})")
    print(f"{'workload':>10} {'txs':>4} {'pg/tx':>7} {'part':>5} | " +
          " | ".join(f"{m:^30}" for m in MODES))
    print(f"{'':>10} {'':>4} {'':>7} {'':>5} | " + " | ".join(f"{'WA':>6} {'KiB/tx':>9} {'tx/s':>8} {'tps/sh':>5}"
                                                            for _ in MODES))
    for p in pts:
        s = p["shape"]
        print(f"{p['name']:>10} {p['txs']:>4} {s['pages_per_tx']:>7.1f} {s['partial_frac']:>5.2f} | " +
              " | ".join(f"{p['modes'][m]['wa']:>6.2f} {p['modes'][m]['nand_bytes_per_tx'] / 1024:>9.1f} "
                         f"{p['modes'][m]['tps']:>8.1f} {p['modes'][m]['tps_vs_shadow']:>5.2f}" for m in MODES))
    print("(a) S-Log, model, not measured (bench/difftx/slog_model.py): WA, KiB/tx, NAND bytes / measured shadow's")
    for p in pts:
        m = p["slog_model"]
        print(f"{p['name']:>10} | {m['wa']:>6.2f} {m['nand_bytes_per_tx'] / 1024:>9.1f} "
              f"{m['traffic_vs_shadow_measured']:>5.2f}")
    print(f"wall {time.time() - t0:.0f} s")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    res = {"bench": "B4", "config": CONFIG, "commit": head, "tree_dirty": dirty, "seed": a.seed,
           "threshold": THRESHOLD, "page_bytes": PAGE_BYTES, "slog": SLOG_MEASURED if slog_dev else SLOG_STATUS,
           "targets": TARGETS,
           "modes": {"slog": "(a) the S-Log: " + (SLOG_MEASURED if slog_dev else SLOG_STATUS) +
                             "; per workload `slog_model`: its NAND bytes "
                             "as a model, not measured",
                     "shadow": "(b) whole-page TX Writes, COMMIT on the last page (reference of the ratios)",
                     "shadow_diffwrite": "(b) partial updates as today's DIFFWRITE (read-modify-write of the page)",
                     "journal": "(c) host data journaling: journal blocks + Flush, commit block FUA, home writes + Flush"},
           "workloads": pts}
    out.write_text(json.dumps(res, indent=1))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
