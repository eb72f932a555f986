# SPDX-License-Identifier: Apache-2.0
"""The waveform of `make demo` (sim/soc/demo.py): a TX_COMMIT traced through the whole SoC (the
FST build of sim/soc) exactly as the demo traces it, then its GTKWave save files checked against the
FST by a reader of its own: every named marker stands on the rising edge that takes the handshake it
names (the TX_COMMIT accepted by the host port, the remap engine's COMMIT request and response for
it, the completion, whose cycle must also be the one the simulator reported in its CPL message),
each is the first such event, and the window the save file opens on holds all of them (and the
commit fills most of it); the zoomed save file holds B-D; every signal it lists is in the FST."""
from __future__ import annotations

import bisect
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402
from test_system import template  # noqa: E402,F401  (the session's formatted device)

sys.path.insert(0, str(harness.ROOT / "sim" / "soc"))
import demo  # noqa: E402

GTKW_FRAME_PX, PX_PER_FRAME = 100, 200.0    # GTKWave: 2^-zoom / 200 time units a pixel (bench/remap)
TXID = 2


def parse_gtkw(path: Path) -> dict:
    txt = path.read_text().splitlines()
    one = lambda key: next(ln.split(None, 1)[1] for ln in txt if ln.startswith(f"[{key}]"))  # noqa: E731
    z = next(ln for ln in txt if ln.startswith("*")).split()
    zoom, named = float(z[0][1:]), [int(x) for x in z[2:]]
    names = {}
    for ln in txt:
        if ln.startswith("[markername] "):
            rest = ln[len("[markername] "):]
            names[rest[0]] = rest[1:]
    sx = int(one("size").split()[0])
    pane = sx - int(one("sst_width")) - int(one("signals_width")) - GTKW_FRAME_PX
    t0 = int(one("timestart"))
    sigs = [ln for ln in txt if ln and ln[0] not in "[*@-"]
    return dict(dumpfile=one("dumpfile").strip('"'), t0=t0, t1=t0 + pane * 2.0 ** -zoom / PX_PER_FRAME,
                markers={chr(ord("A") + i): t for i, t in enumerate(named) if t >= 0}, names=names, signals=sigs)


class Fst:
    """Values a flop takes at a rising clock edge: the last change strictly before it."""

    def __init__(self, path: Path):
        import pywellen
        self.vars = {v.full_name: v for v in pywellen.Waveform(str(path)).all_vars()}
        self.tv = {}
        clk = self.changes(demo.T + "clk")
        self.edges = [t for (t, v), (_, pv) in zip(clk[1:], clk) if v == 1 and pv == 0]

    def changes(self, name: str) -> list:
        if name not in self.tv:
            ch = list(self.vars[name].tv)
            self.tv[name] = (ch, [c[0] for c in ch])
        return self.tv[name][0]

    def at(self, name: str, t: int) -> int:
        ch = self.changes(name)
        k = bisect.bisect_left(self.tv[name][1], t) - 1
        return int(ch[k][1]) if k >= 0 and ch[k][1] is not None else 0

    def handshakes(self, prefix: str, **want) -> list[int]:
        """Rising edges where `prefix`_valid and _ready are 1 and each `prefix`_<field> = value."""
        out = []
        for t in self.edges:
            if self.at(prefix + "_valid", t) and self.at(prefix + "_ready", t) and \
                    all(self.at(f"{prefix}_{k}", t) == v for k, v in want.items()):
                out.append(t)
        return out


def test_demo_commit_waveform(template, tmp_path):
    exe, fw, cfg = harness.build(trace=True)
    imgs = [tmp_path / f"die{d}.img" for d in range(cfg["ndie"])]
    for d, p in enumerate(imgs):
        shutil.copy(template / f"die{d}.img", p)
    hp = harness.HostPort(exe, fw, imgs, cwd=tmp_path)
    assert hp.run(harness.BOOT_CYCLES, harness.U_HOST_EN) & harness.U_HOST_EN
    dev = harness.Device(hp, cfg["page_bytes"], cfg["num_lbas"])
    for lba in range(16, 20):
        dev.write(lba, harness.page_bytes_for(lba, 1, TXID, cfg["page_bytes"]), txid=TXID)
    fst = tmp_path / "soc_commit.fst"
    c0, c1, p = demo.trace_commit(hp, dev, TXID, fst)
    assert p.cpl.status == 0
    hp.close()
    gtkw, gtkw_remap = tmp_path / "soc_commit.gtkw", tmp_path / "soc_commit_remap.gtkw"
    demo.wave_files(fst, TXID, gtkw, gtkw_remap)

    # the events, read from the FST here
    f = Fst(fst)
    h, r = demo.T + "host_", demo.C + "u_remap."
    acc = f.handshakes(h + "cmd", op=harness.OP["TX_COMMIT"], txid=TXID)
    assert len(acc) == 1, f"TX_COMMITs of tx {TXID} in the trace: {acc}"
    tag = f.at(h + "cmd_tag", acc[0])
    req = [t for t in f.handshakes(r + "s_req", op=demo.R_COMMIT, txid=TXID) if t > acc[0]]
    rtag = f.at(r + "s_req_tag", req[0])
    rsp = [t for t in f.handshakes(r + "m_rsp", tag=rtag) if t > req[0]]
    cpl = [t for t in f.handshakes(h + "cpl", tag=tag) if t > acc[0]]
    events = {"A": acc[0], "B": req[0], "C": rsp[0], "D": cpl[0]}
    assert events["A"] < events["B"] < events["C"] <= events["D"], events
    # the completion's cycle as the simulator reported it (CPL message), not from the FST
    assert (events["D"] - demo.CLK_PS // 2) // demo.CLK_PS + 1 == p.cpl.cycle

    words = {"A": "accept", "B": "request", "C": "response", "D": "completion"}
    for path, need, fill in ((gtkw, "ABCD", 0.8), (gtkw_remap, "BCD", 0.4)):
        g = parse_gtkw(path)
        assert Path(g["dumpfile"]) == fst
        assert g["markers"] == events, f"{path.name}: markers {g['markers']} != the FST's events {events}"
        for letter, word in words.items():
            assert word in g["names"].get(letter, "").lower(), f"{path.name}: marker {letter} named {g['names']}"
        for letter in need:
            assert g["t0"] < events[letter] < g["t1"], \
                f"{path.name}: marker {letter} at {events[letter]} outside the window [{g['t0']}, {g['t1']:.0f}]"
        assert f.edges[0] <= g["t0"] and g["t1"] <= f.edges[-1] + 2 * demo.CLK_PS, "window outside the trace"
        span = events[need[-1]] - events[need[0]]
        assert span >= fill * (g["t1"] - g["t0"]), f"{path.name}: the events fill {span / (g['t1'] - g['t0']):.0%}"
        for s in g["signals"]:
            m = re.fullmatch(r"(.*?)(\[(\d+):0\])?", s)
            v = f.vars.get(m.group(1))
            assert v is not None, f"{path.name}: {s} is not in the FST"
            assert v.bitwidth == (int(m.group(3)) + 1 if m.group(2) else 1), f"{path.name}: {s} has {v.bitwidth} bits"
