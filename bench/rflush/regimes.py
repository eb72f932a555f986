#!/usr/bin/env python3
"""B3 across devices: the RFLUSH gain and the NAND-byte reduction of several `bench_rflush.py` runs
side by side, against the flash's program rate and the write buffer's fill rate.

Each input is a JSON written by `bench/rflush/bench_rflush.py --json ...` (one device: channels, ways,
buffer slots); this script runs no simulation. For every device and fsync period it prints the FLUSH
and RFLUSH figures, the syncing-writer IOPS gain of RFLUSH over FLUSH and the reduction of NAND bytes
per host byte, with the two physical rates that decide them:

- program limit = dies / (tPROG + page transfer), pages/s of the modelled 4 KiB device;
- fill limit = the write buffer's one 32-bit word per cycle (PAGE_BYTES / 4 cycles per page).

and marks the rows where both of the paper's figures hold (gain >= --gain, reduction >= --reduction:
RFLUSH, FAST'18: up to 6.5x and 24-43 %). Plot: gain against reduction, one point per device and period.

    python bench/rflush/regimes.py build/bench/rflush_s512_c6.json build/bench/rflush_s1024_c6.json \\
        --plot build/bench/rflush_regimes.png
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REF_PAGE = 4096


def rates(dev: dict, k: float) -> tuple[float, float]:
    """(program limit, fill limit) in pages/s of the modelled 4 KiB device. dev holds the simulated
    (time-compressed) times; k is the time compression."""
    dies = dev["num_chan"] * dev["ways"]
    prog = dies / ((dev["t_prog_us"] + dev["t_xfer_us"]) * k * 1e-6)
    fill = 1.0 / (dev["page_bytes"] / 4 * dev["clk_ns"] * k * 1e-9)
    return prog, fill


def eventual(d: dict, mode: str, i: int) -> float:
    """Eventual NAND bytes per host byte of a run: 1 - coalesced / host pages (every host page is
    programmed once unless a later write coalesces it), from the run's own figure or, in JSONs written
    before it was recorded, from its coalesced count and host bytes (4 KiB-device units)."""
    v = d.get("eventual_nand_per_host", {}).get(mode, [None] * (i + 1))[i]
    if v is not None:
        return v
    host_pages = d["host_bytes"][mode][i] / REF_PAGE
    return 1 - d["coalesced"][mode][i] / host_pages if host_pages else float("nan")


def rows(path: Path) -> list[dict]:
    d = json.loads(path.read_text())
    dev, sim = d["device"], d["simulation"]
    k = sim["time_compression"]
    prog, fill = rates(dev, k)
    out = []
    for i, p in enumerate(d["fsync_period_kib"]):
        if "flush" not in d["sync_iops"] or "rflush" not in d["sync_iops"]:
            raise SystemExit(f"{path}: needs FLUSH and RFLUSH runs (--modes flush,rflush[,noflush])")
        f = {key: d[key]["flush"][i] for key in ("sync_iops", "nand_per_host", "fsync_mean_us", "n_syncs",
                                                 "bulk_mib_s")}
        r = {key: d[key]["rflush"][i] for key in ("sync_iops", "nand_per_host", "fsync_mean_us", "n_syncs",
                                                  "bulk_mib_s")}
        out.append({"file": str(path), "chan": dev["num_chan"], "ways": dev["ways"], "slots": dev["num_slots"],
                    "buffer_kib": dev["num_slots"] * REF_PAGE // 1024, "preset": dev["preset"],
                    "prog_pages_s": prog, "fill_pages_s": fill, "period_kib": p,
                    "window_ms": sim["max_window_ms"], "min_syncs": sim["min_syncs"],
                    "flush": f, "rflush": r,
                    "noflush_iops": d["sync_iops"].get("noflush", [None] * (i + 1))[i],
                    "gain": r["sync_iops"] / f["sync_iops"],
                    "reduction": 1 - r["nand_per_host"] / f["nand_per_host"]})
        x = out[-1]
        f["eventual_nand_per_host"] = eventual(d, "flush", i)
        r["eventual_nand_per_host"] = eventual(d, "rflush", i)
        x["eventual_reduction"] = 1 - r["eventual_nand_per_host"] / f["eventual_nand_per_host"]
        tf = d.get("tail_sync_iops", {}).get("flush", [None] * (i + 1))[i]
        tr = d.get("tail_sync_iops", {}).get("rflush", [None] * (i + 1))[i]
        x["tail_gain"] = tr / tf if tf and tr is not None else None
        ef = d.get("tail_eventual_nand_per_host", {}).get("flush", [None] * (i + 1))[i]
        er = d.get("tail_eventual_nand_per_host", {}).get("rflush", [None] * (i + 1))[i]
        x["tail_reduction"] = 1 - er / ef if ef and er is not None else None
    return out


def fmt(v, spec: str) -> str:
    return spec.format(v) if v is not None else f"{'n/a':>{len(spec.format(0.0))}s}"


def steady(x: dict, a) -> str:
    if x["tail_gain"] is None or x["tail_reduction"] is None:
        return "n/a"
    return "yes" if x["tail_gain"] >= a.gain and x["tail_reduction"] >= a.reduction else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", type=Path, help="outputs of bench_rflush.py --json")
    ap.add_argument("--gain", type=float, default=6.5, help="target syncing-writer IOPS gain (paper: up to 6.5x)")
    ap.add_argument("--reduction", type=float, default=0.24,
                    help="target NAND-byte reduction (paper: 24-43 %%)")
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None, help="write the combined table as JSON")
    a = ap.parse_args()
    allr = [x for p in a.json for x in rows(p)]
    allr.sort(key=lambda x: (x["slots"], -x["prog_pages_s"], x["period_kib"]))
    hdr = (f"{'buffer':>8s} {'device':>9s} {'prog k/s':>8s} {'fill k/s':>8s} {'period':>6s} "
           f"{'FLUSH IOPS':>10s} {'fsync us':>8s} {'syncs':>5s} {'RFLUSH IOPS':>11s} {'fsync us':>8s} "
           f"{'gain':>6s} {'N/H FLUSH':>9s} {'N/H RFLUSH':>10s} {'reduction':>9s} {'both':>4s} | "
           f"{'eventual':>8s} {'tail gain':>9s} {'tail red.':>9s} {'both':>4s}")
    print("B3 across devices (4 KiB-device units; prog = program-rate limit, fill = write-buffer fill limit, "
          "N/H = NAND bytes per host byte)")
    print(hdr)
    print("-" * len(hdr))
    for x in allr:
        f, r = x["flush"], x["rflush"]
        both = x["gain"] >= a.gain and x["reduction"] >= a.reduction
        print(f"{x['buffer_kib']:6d}Ki {x['chan']:3d}ch x{x['ways']:2d}w {x['prog_pages_s'] / 1e3:8.1f} "
              f"{x['fill_pages_s'] / 1e3:8.1f} {x['period_kib']:4d}Ki {f['sync_iops']:10.0f} "
              f"{f['fsync_mean_us']:8.0f} {f['n_syncs']:5d} {r['sync_iops']:11.0f} {r['fsync_mean_us']:8.0f} "
              f"{x['gain']:5.2f}x {f['nand_per_host']:9.3f} {r['nand_per_host']:10.3f} "
              f"{100 * x['reduction']:8.1f}% {'yes' if both else '-':>4s} | "
              f"{100 * x['eventual_reduction']:7.1f}% {fmt(x['tail_gain'], '{:8.2f}x')} "
              f"{fmt(x['tail_reduction'], '{:8.1%}')} {steady(x, a):>4s}")
    print(f"both = gain >= {a.gain:g}x and reduction >= {100 * a.reduction:g} % (RFLUSH, FAST'18: up to 6.5x, "
          f"24-43 %). Left of '|': the whole window; right: eventual = reduction of 1 - coalesced / host pages "
          f"over the window (what the buffer holds at the window's ends left out), tail = second half of the "
          f"window (from its middle sync), steady both = tail gain and tail reduction; n/a: run recorded "
          f"without per-sync marks")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({"target": {"gain": a.gain, "reduction": a.reduction}, "rows": allr},
                                    indent=1))
    if a.plot:
        plot(allr, a, a.plot)
        print(f"wrote {a.plot}")
    return 0


def plot(allr: list[dict], a, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    ax.axhline(a.gain, color="k", ls=":", lw=1, label=f"paper's gain ({a.gain:g}x)")
    ax.axvline(100 * a.reduction, color="k", ls="--", lw=1, label=f"paper's lowest reduction "
               f"({100 * a.reduction:g} %)")
    markers = {4: "o", 16: "s", 64: "^", 256: "D"}
    palette = ["tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange"]
    for slots in sorted({x["slots"] for x in allr}):
        sub = [x for x in allr if x["slots"] == slots]
        color = palette[sorted({y["slots"] for y in allr}).index(slots) % len(palette)]
        for x in sub:
            ax.scatter(100 * x["reduction"], x["gain"], marker=markers.get(x["period_kib"], "x"), color=color)
            if x["tail_gain"] is not None and x["tail_reduction"] is not None:
                # steady state (second half of the window): hollow, joined to the whole-window point
                ax.scatter(100 * x["tail_reduction"], x["tail_gain"], marker=markers.get(x["period_kib"], "x"),
                           facecolors="none", edgecolors=color)
                ax.plot([100 * x["reduction"], 100 * x["tail_reduction"]], [x["gain"], x["tail_gain"]],
                        color=color, lw=0.6, ls="--")
            ax.annotate(f"{x['chan']}ch {x['period_kib']}K", (100 * x["reduction"], x["gain"]),
                        fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.scatter([], [], color=color, label=f"{slots} slots ({slots * REF_PAGE // 1024} KiB)")
    if any(x["tail_gain"] is not None for x in allr):
        ax.scatter([], [], marker="o", facecolors="none", edgecolors="grey", label="steady state (second half)")
    for p, m in markers.items():
        if any(x["period_kib"] == p for x in allr):
            ax.scatter([], [], marker=m, color="grey", label=f"fsync period {p} KiB")
    ax.set_yscale("log")
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    ax.fill_between([100 * a.reduction, max(x1, 100 * a.reduction + 5)], a.gain, max(y1, a.gain * 1.5),
                    color="tab:green", alpha=0.08, label="both of the paper's figures")
    ax.set_xlim(x0, max(x1, 100 * a.reduction + 5))
    ax.set_ylim(y0, max(y1, a.gain * 1.5))
    ax.set_xlabel("NAND bytes per host byte, RFLUSH vs FLUSH: reduction, %\n"
                  "(filled: whole window; hollow: second half, eventual NAND bytes)", fontsize=9)
    ax.set_ylabel("syncing-writer IOPS, RFLUSH / FLUSH")
    ax.set_title("B3: RFLUSH gain vs NAND-byte reduction across flash speed and buffer size", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
