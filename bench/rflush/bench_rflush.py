#!/usr/bin/env python3
"""Benchmark B3 (`make bench-rflush`): 1 syncing writer + 12 bulk writers on the command queue + write
buffer (bench/ssd/ats_ssd_bench_top.sv) with the behavioural media; fsync period sweep, FLUSH vs
RFLUSH vs NOFLUSH: syncing-writer IOPS and p99/p99.9 latency, bulk throughput, bytes written to NAND.

Workload (RFLUSH, FAST'18, section 5, scaled down; see bench/rflush/README.md): every thread does
4 KiB random direct writes, one outstanding; the syncing writer has its own file, the 12 bulk writers
share 4 files (3 each); after every `period` KiB the syncing writer syncs with FLUSH, RFLUSH of its
file's range, or nothing (NOFLUSH). Writes build/bench/rflush.json and build/bench/rflush.png.

Scaling (bench/rflush/README.md): a 512-slot buffer (2 MiB of 4 KiB pages), bulk files of 256 pages
(hot set 2x the buffer), simulated with 1 KiB pages and every media and host time divided by 4
(time compression; results converted back to the 4 KiB device). `--sweep-slots 256,512,1024` adds a
buffer-size sweep at one fsync period (FLUSH cost grows with the buffer, RFLUSH cost does not);
`--reuse` takes the results of identical earlier runs (same name, configuration and build).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "ssd"))
import run_bench  # noqa: E402

MODES = ["flush", "rflush", "noflush"]
REF_PAGE = 4096          # the modelled device's page; a smaller simulation page compresses time
TIME_KEYS = ["window_us", "sync_p99_us", "sync_p999_us", "sync_mean_us", "write_p99_us", "fsync_mean_us",
             "fsync_p99_us", "tail_window_us"]
RATE_KEYS = ["sync_iops", "bulk_iops", "tail_sync_iops"]
BYTE_KEYS = ["nand_bytes", "host_bytes"]


def to_ref(x: dict, k: float) -> dict:
    """Results of a time-compressed run (page REF_PAGE / k simulated, every time / k) in the units of
    the modelled 4 KiB device: times x k, rates / k, bytes x k (ratios and MiB/s unchanged)."""
    y = dict(x)
    for key in TIME_KEYS:
        if key in x:
            y[key] = x[key] * k
    for key in RATE_KEYS:
        if key in x:
            y[key] = x[key] / k
    for key in BYTE_KEYS:
        y[key] = x[key] * k
    if "fsync_us" in x:
        y["fsync_us"] = [t * k for t in x["fsync_us"]]
    if "sync_marks" in x:       # (us, syncing-writer writes, host pages, coalesced, NAND bytes)
        y["sync_marks"] = [[m[0] * k, m[1], m[2], m[3], m[4] * k] for m in x["sync_marks"]]
    return y


def vs_flush(x: dict, f: dict | None) -> tuple[float, float]:
    """(sync-writer IOPS gain, reduction of NAND bytes per host byte) of run x against the FLUSH run
    f of the same period / buffer (NaN without one)."""
    gain = x["sync_iops"] / f["sync_iops"] if f else float("nan")
    red = 1 - x["nand_per_host"] / f["nand_per_host"] if f and f["nand_per_host"] else float("nan")
    return gain, red


def vs_flush_steady(x: dict, f: dict | None) -> tuple[float, float]:
    """The same over the second half of each window (the warm buffer's first drains left out): gain of
    the tail sync IOPS, reduction of the eventual NAND bytes per host byte (1 - coalesced / host
    pages, which does not depend on what the buffer holds at the window's ends). NaN without them."""
    nan = float("nan")
    if not f or "tail_sync_iops" not in x or "tail_sync_iops" not in f:
        return nan, nan
    gain = x["tail_sync_iops"] / f["tail_sync_iops"] if f["tail_sync_iops"] else nan
    red = (1 - x["tail_eventual_nand_per_host"] / f["tail_eventual_nand_per_host"]
           if f["tail_eventual_nand_per_host"] else nan)
    return gain, red


def cached(bd: Path, name: str, cfg: dict) -> dict | None:
    """--reuse: the result of an earlier run of the same name with the same configuration on the same
    build (result newer than the simulator executable); None otherwise. Changes of the Python harness
    are not detected: do not reuse across harness changes."""
    f = bd / "runs" / name / "result.json"
    exe = bd / run_bench.TOP
    if not f.exists() or not exe.exists() or f.stat().st_mtime <= exe.stat().st_mtime:
        return None
    r = json.loads(f.read_text())
    return r if r.get("config") == cfg else None


def run_jobs(jobs: list, n: int, reuse: bool = False) -> dict:
    """Run (build dir, name, config) jobs, n at a time (builds may differ: the buffer-size sweep)."""
    from concurrent.futures import ThreadPoolExecutor
    out = {}
    todo = []
    for bd, name, cfg in jobs:
        r = cached(bd, name, cfg) if reuse else None
        if r is not None:
            print(f"reusing {bd.name}/runs/{name}/result.json")
            out[name] = r
        else:
            todo.append((bd, name, cfg))
    if n <= 1:
        out.update({name: run_bench.run_one(bd, name, cfg) for bd, name, cfg in todo})
        return out
    with ThreadPoolExecutor(max_workers=n) as ex:
        futs = {name: ex.submit(run_bench.run_one, bd, name, cfg) for bd, name, cfg in todo}
        out.update({name: f.result() for name, f in futs.items()})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--periods-kib", default="4,16,64", help="fsync periods (KiB written between syncs)")
    ap.add_argument("--sync-writes", default="4=160,16=160,64=192,256=256",
                    help="syncing-writer writes per period (period_kib=n,...): the run length")
    ap.add_argument("--max-window-ms", type=float, default=20.0,
                    help="stop a run once its window passes this (4 KiB-equivalent ms), after --min-syncs")
    ap.add_argument("--min-syncs", type=int, default=12)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--slots", type=int, default=512, help="write buffer slots (power of two, <= 1024)")
    ap.add_argument("--thresh-pct", type=int, default=90)
    ap.add_argument("--page-bytes", type=int, default=1024,
                    help="simulated page; 4096/page-bytes = time compression (media and host times "
                         "scaled by the same factor; results reported for 4 KiB pages)")
    ap.add_argument("--window", type=int, default=None, help="media request window (default one per die)")
    ap.add_argument("--warmup-pages", type=int, default=None, help="bulk writes before the window (default 1.25 x slots)")
    ap.add_argument("--sync-file-pages", type=int, default=64)
    ap.add_argument("--bulk-file-pages", type=int, default=None, help="pages per bulk file (default slots / 2)")
    ap.add_argument("--chan", type=int, default=8)
    ap.add_argument("--ways", type=int, default=4)
    ap.add_argument("--preset", default="femu")
    ap.add_argument("--clk-ns", type=float, default=8.0)
    ap.add_argument("--t-submit-us", type=float, default=2.0)
    ap.add_argument("--t-complete-us", type=float, default=6.0)
    ap.add_argument("--sweep-slots", default="",
                    help="buffer-size sweep, e.g. 256,512,1024: write buffer slots (default none); bulk files = "
                         "slots / 2 pages each, warm-up 1.25 x slots, as the main runs (bench/rflush/README.md)")
    ap.add_argument("--sweep-period-kib", type=int, default=4, help="fsync period of the sweep")
    ap.add_argument("--sweep-modes", default="flush,rflush",
                    help="modes of the sweep (NOFLUSH, the ceiling, is in the main table)")
    ap.add_argument("--sweep-max-window-ms", type=float, default=10.0,
                    help="window cut of the sweep runs (4 KiB-equivalent ms, after --sweep-min-syncs)")
    ap.add_argument("--sweep-min-syncs", type=int, default=6,
                    help="minimum syncs per sweep run (the window cut of --max-window-ms applies); the run "
                         "with --slots is the main table's (--min-syncs)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the result of a run with the same name and configuration on the same build "
                         "(e.g. after a partial invocation); harness changes are not detected")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=str(ROOT / "build" / "bench" / "rflush.json"))
    ap.add_argument("--plot", default=str(ROOT / "build" / "bench" / "rflush.png"))
    a = ap.parse_args()
    periods = [int(x) for x in a.periods_kib.split(",")]
    nsw = {int(k): int(v) for k, v in (x.split("=") for x in a.sync_writes.split(","))}
    modes = a.modes.split(",")
    page_kib = REF_PAGE // 1024          # the period counts 4 KiB pages of the modelled device
    k = REF_PAGE / a.page_bytes          # time compression
    bulk_pages = a.bulk_file_pages or a.slots // 2
    warm = a.warmup_pages if a.warmup_pages is not None else a.slots * 5 // 4
    device = {"DEPTH": 32, "NUM_SLOTS": a.slots, "NUM_LBAS": 16384, "PAGE_BYTES": a.page_bytes,
              "THRESH_PCT": a.thresh_pct}

    t = time.time()

    def cfg_for(mode: str, p: int, slots: int, min_syncs: int, max_window_ms: float) -> dict:
        bp = a.bulk_file_pages or slots // 2
        return {"workload": "rflush", "mode": mode, "period_pages": max(1, p // page_kib),
                "n_sync_writes": nsw.get(p, 96), "sync_file_pages": a.sync_file_pages,
                "bulk_file_pages": bp, "bulk_writers": 12, "bulk_files": 4,
                "warmup_pages": a.warmup_pages if a.warmup_pages is not None else slots * 5 // 4,
                "max_window_us": max_window_ms * 1000 / k, "min_syncs": min_syncs,
                "num_chan": a.chan, "ways": a.ways, "preset": a.preset, "clk_ns": a.clk_ns,
                "time_scale": 1 / k, "window": a.window,
                "t_submit_us": a.t_submit_us / k, "t_complete_us": a.t_complete_us / k, "seed": a.seed}

    def build_for(slots: int):
        return run_bench.build(f"ssd_b3_s{slots}_p{a.page_bytes}_t{a.thresh_pct}", {**device, "NUM_SLOTS": slots})

    # run names: one directory per run under the build's runs/; devices other than the default 8 x 4
    # get their own names so that runs of several devices on one build can be kept and --reuse'd
    dsfx = "" if (a.chan, a.ways) == (8, 4) else f"_c{a.chan}w{a.ways}"

    def rname(m: str, p: int) -> str:
        return f"rflush_{m}_{p}k{dsfx}"

    # (build dir, run name, config); the sweep reuses a main run when the configuration is the same
    jobs = [(build_for(a.slots), rname(m, p), cfg_for(m, p, a.slots, a.min_syncs, a.max_window_ms))
            for p in periods for m in modes]
    slots_of = {n: a.slots for _, n, _ in jobs}
    sweep = [int(x) for x in a.sweep_slots.split(",") if x.strip()]
    sp = a.sweep_period_kib
    sweep_name = {}
    smodes = [m for m in a.sweep_modes.split(",") if m]
    for sl in sweep:
        for m in smodes:
            cfg = (cfg_for(m, sp, sl, a.min_syncs, a.max_window_ms) if sl == a.slots
                   else cfg_for(m, sp, sl, a.sweep_min_syncs, a.sweep_max_window_ms))
            same = next((n for b, n, c in jobs if sl == a.slots and c == cfg), None)
            if same is None:
                same = f"sweep_s{sl}_{m}_{sp}k{dsfx}"
                jobs.append((build_for(sl), same, cfg))
                slots_of[same] = sl
            sweep_name[(sl, m)] = same
    # longest runs first so that the two workers finish together (FLUSH, big buffers)
    jobs.sort(key=lambda x: (x[2]["mode"] != "flush", -slots_of[x[1]], -x[2]["n_sync_writes"]))
    res = run_jobs(jobs, a.jobs, a.reuse)
    r = {}
    for p in periods:
        for m in modes:
            r[(m, p)] = to_ref(res[rname(m, p)], k)
            r[(m, p)]["period_kib"] = p
    rs = {key: to_ref(res[name], k) for key, name in sweep_name.items()}

    dev = res[rname(modes[0], periods[0])]["device"]
    print()
    print(f"B3: 1 syncing + 12 bulk writers (4 files), 4 KiB random direct writes; ats_cmdq (DEPTH "
          f"{dev['depth']}) -> ats_wbuf ({dev['num_slots']} slots = {dev['num_slots'] * REF_PAGE // 1024} KiB "
          f"of 4 KiB pages, writeback when >= {a.thresh_pct} % not durable), {1000 / dev['clk_ns']:.0f} MHz; "
          f"media {dev['preset']} {dev['num_chan']} ch x {dev['ways']} ways, window {dev['media_window']}; "
          f"sync file {a.sync_file_pages} pages, bulk files 4 x {bulk_pages} pages, warm-up {warm} bulk writes; "
          f"host submit {a.t_submit_us} us, completion {a.t_complete_us} us")
    if k != 1:
        print(f"time-compressed simulation: {a.page_bytes} B pages with media and host times / {k:g}; "
              f"figures below converted to the 4 KiB device (times x {k:g}, rates / {k:g})")
    hdr = (f"{'period':>7s} {'mode':8s} {'syncW':>5s} {'sync IOPS':>9s} {'xFLUSH':>6s} {'p99 us':>8s} "
           f"{'p99.9 us':>8s} {'fsync us':>8s} {'bulk MiB/s':>10s} {'NAND MiB':>8s} {'NAND/host':>9s} "
           f"{'vs FLUSH':>8s} {'coalesced':>9s} {'cpu s':>5s}")
    print(hdr)
    print("-" * len(hdr))
    for p in periods:
        for m in modes:
            x = r[(m, p)]
            f = r.get(("flush", p))
            gain, red = vs_flush(x, f)
            print(f"{p:5d}Ki {m:8s} {x['n_sync_writes']:5d} {x['sync_iops']:9.0f} {gain:6.2f} "
                  f"{x['sync_p99_us']:8.0f} {x['sync_p999_us']:8.0f} {x['fsync_mean_us']:8.0f} "
                  f"{x['bulk_mib_s']:10.1f} {x['nand_bytes'] / 2**20:8.2f} {x['nand_per_host']:9.3f} "
                  f"{100 * red:7.1f}% {x['coalesced']:9d} {x.get('cpu_s', 0):5.0f}")
    print("xFLUSH: syncing-writer IOPS / FLUSH's; vs FLUSH: NAND bytes per host byte, reduction vs FLUSH.")
    if all("tail_sync_iops" in r[(m, p)] for p in periods for m in modes):
        print()
        print("steady state: second half of each window (from its middle sync to its last); eventual NAND/host "
              "= 1 - coalesced / host pages")
        h3 = (f"{'period':>7s} {'mode':8s} {'syncs':>5s} {'sync IOPS':>9s} {'xFLUSH':>6s} {'fsync us':>8s} "
              f"{'NAND/host':>9s} {'eventual':>8s} {'vs FLUSH':>8s}")
        print(h3)
        print("-" * len(h3))
        for p in periods:
            for m in modes:
                x = r[(m, p)]
                gain, red = vs_flush_steady(x, r.get(("flush", p)))
                tf = x["fsync_us"][len(x["fsync_us"]) // 2 + 1:] or [0.0]
                print(f"{p:5d}Ki {m:8s} {x['tail_syncs']:5d} {x['tail_sync_iops']:9.0f} {gain:6.2f} "
                      f"{sum(tf) / len(tf):8.0f} {x['tail_nand_per_host']:9.3f} "
                      f"{x['tail_eventual_nand_per_host']:8.3f} {100 * red:7.1f}%")
    print("paper (RFLUSH, FAST'18): syncing IOPS up to 6.5x, 24-43 % less NAND traffic, RFLUSH can lose "
          "to FLUSH at very frequent syncs")
    if sweep:
        print()
        print(f"buffer-size sweep at a {sp} KiB fsync period (bulk files 4 x slots/2 pages: hot set 2x the buffer; "
              f"warm-up 1.25 x slots; window {a.sweep_max_window_ms:g} ms after at least {a.sweep_min_syncs} syncs; "
              f"{a.slots} slots: the main table's run):")
        h2 = (f"{'slots':>5s} {'KiB':>5s} {'mode':8s} {'syncW':>5s} {'syncs':>5s} {'sync IOPS':>9s} {'xFLUSH':>6s} "
              f"{'p99 us':>8s} {'fsync us':>8s} {'bulk MiB/s':>10s} {'NAND/host':>9s} {'vs FLUSH':>8s} {'cpu s':>5s}")
        print(h2)
        print("-" * len(h2))
        for sl in sweep:
            for m in smodes:
                x = rs[(sl, m)]
                f = rs.get((sl, "flush"))
                gain, red = vs_flush(x, f)
                print(f"{sl:5d} {sl * REF_PAGE // 1024:5d} {m:8s} {x['n_sync_writes']:5d} {x['n_syncs']:5d} "
                      f"{x['sync_iops']:9.0f} {gain:6.2f} {x['sync_p99_us']:8.0f} {x['fsync_mean_us']:8.0f} "
                      f"{x['bulk_mib_s']:10.1f} {x['nand_per_host']:9.3f} {100 * red:7.1f}% {x.get('cpu_s', 0):5.0f}")
    print(f"wall {time.time() - t:.0f} s, cpu {sum(x.get('cpu_s', 0) for x in res.values()):.0f} s")

    def series(key):
        return {m: [r[(m, p)][key] for p in periods] for m in modes}

    out = {"fsync_period_kib": periods, "sync_iops": series("sync_iops"), "sync_p99_us": series("sync_p99_us"),
           "nand_bytes": series("nand_bytes"), "sync_p999_us": series("sync_p999_us"),
           "sync_mean_us": series("sync_mean_us"), "fsync_mean_us": series("fsync_mean_us"),
           "fsync_p99_us": series("fsync_p99_us"), "bulk_iops": series("bulk_iops"),
           "bulk_mib_s": series("bulk_mib_s"), "host_bytes": series("host_bytes"),
           "nand_per_host": series("nand_per_host"), "coalesced": series("coalesced"),
           "n_sync_writes": series("n_sync_writes"), "n_syncs": series("n_syncs"),
           "window_us": series("window_us"), "cpu_s": series("cpu_s"),
           "eventual_nand_per_host": {m: [r[(m, p)].get("eventual_nand_per_host") for p in periods] for m in modes},
           "tail_sync_iops": {m: [r[(m, p)].get("tail_sync_iops") for p in periods] for m in modes},
           "tail_eventual_nand_per_host": {m: [r[(m, p)].get("tail_eventual_nand_per_host") for p in periods]
                                           for m in modes},
           "tail_nand_per_host": {m: [r[(m, p)].get("tail_nand_per_host") for p in periods] for m in modes},
           "fsync_us": {m: [r[(m, p)].get("fsync_us") for p in periods] for m in modes},
           "sync_marks": {m: [r[(m, p)].get("sync_marks") for p in periods] for m in modes},
           "device": dev, "layout": res[rname(modes[0], periods[0])]["layout"],
           "host": {"t_submit_us": a.t_submit_us, "t_complete_us": a.t_complete_us},
           "verify": {name: v["verify"] for name, v in res.items()},
           "sim_cycles": {name: v.get("sim_cycles") for name, v in res.items()},
           "media": {name: v.get("media") for name, v in res.items()},
           "simulation": {"page_bytes": a.page_bytes, "time_compression": k, "ref_page_bytes": REF_PAGE,
                          "max_window_ms": a.max_window_ms, "min_syncs": a.min_syncs,
                          "cpu_s_total": sum(v.get("cpu_s", 0) for v in res.values())}}
    if sweep:
        def sw(key):
            return {m: [rs[(sl, m)][key] for sl in sweep] for m in smodes}
        out["slot_sweep"] = {
            "slots": sweep, "buffer_kib": [sl * REF_PAGE // 1024 for sl in sweep], "period_kib": sp,
            "min_syncs": a.sweep_min_syncs, "max_window_ms": a.sweep_max_window_ms, "modes": smodes,
            "bulk_file_pages": [a.bulk_file_pages or sl // 2 for sl in sweep],
            "sync_iops": sw("sync_iops"), "sync_p99_us": sw("sync_p99_us"), "fsync_mean_us": sw("fsync_mean_us"),
            "bulk_mib_s": sw("bulk_mib_s"), "nand_bytes": sw("nand_bytes"), "nand_per_host": sw("nand_per_host"),
            "n_sync_writes": sw("n_sync_writes"), "n_syncs": sw("n_syncs"), "cpu_s": sw("cpu_s"),
            "gain_vs_flush": {m: [rs[(sl, m)]["sync_iops"] / rs[(sl, "flush")]["sync_iops"] for sl in sweep]
                              for m in smodes} if "flush" in smodes else {},
            "runs": {f"{sl}_{m}": sweep_name[(sl, m)] for sl in sweep for m in smodes}}
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(out, indent=1))
    plot(out, modes, Path(a.plot))
    print(f"wrote {a.json} and {a.plot}")
    return 0


def plot(out: dict, modes: list[str], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    per = out["fsync_period_kib"]
    sw = out.get("slot_sweep")
    fig, axs = plt.subplots(1, 5 if sw else 4, figsize=(20 if sw else 16, 3.8))
    colors = {"flush": "tab:red", "rflush": "tab:green", "noflush": "grey"}
    for ax, key, label in [(axs[0], "sync_iops", "syncing-writer IOPS"),
                           (axs[1], "sync_p99_us", "syncing writer p99 latency (us)"),
                           (axs[2], "bulk_mib_s", "bulk writers MiB/s"),
                           (axs[3], "nand_per_host", "NAND bytes / host bytes")]:
        for m in modes:
            ax.plot(per, out[key][m], marker="o", label=m.upper(), color=colors.get(m))
        ax.set_xscale("log", base=2)
        ax.set_xticks(per)
        ax.set_xticklabels([str(p) for p in per])
        ax.set_xlabel("fsync period (KiB)")
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    axs[1].set_yscale("log")
    axs[0].legend(fontsize=8)
    if sw:
        ax = axs[4]
        for m, g in sw["gain_vs_flush"].items():
            ax.plot(sw["buffer_kib"], g, marker="o", label=f"{m.upper()} / FLUSH", color=colors.get(m))
        ax.axhline(6.5, color="k", ls=":", lw=1, label="paper's best (6.5x)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sw["buffer_kib"])
        ax.set_xticklabels([str(b) for b in sw["buffer_kib"]])
        ax.set_xlabel(f"write buffer (KiB of 4 KiB pages), fsync period {sw['period_kib']} KiB")
        ax.set_title("syncing-writer IOPS gain vs buffer size", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    d = out["device"]
    fig.suptitle(f"B3: 1 syncing + 12 bulk writers; cmdq+wbuf {d['num_slots']} slots, {d['preset']} "
                 f"{d['num_chan']}ch x {d['ways']}w", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
