# SPDX-License-Identifier: Apache-2.0
"""libatstx, the C transactional host API (sw/host/c), on the whole device through the NVMe front
end of the full-system simulation (the simulator listens on a Unix socket, the C programs are its
host):
  - atstx_unit: SQE encodings, PRPs and status decoding against hand-worked values;
  - atstx_script driven by a random script: plain and transactional writes, reads, read your
    writes, commits (TX Commit and COMMIT write), aborts, flush, range flush, trim, a write past
    the last LBA, a transaction past its page limit, more transactions than txids; every status
    and every read's CRC-32 checked against a plain-Python model written here;
  - atstx_bank across a power cut: every transfer printed committed before the cut is visible, the
    recovered accounts equal a Python replay of the seeded transfers up to the last committed one
    or the one in flight (never a part of one), the total conserved.
Seeded (ATS_SEED); about a minute of wall time."""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "sim" / "soc"))
OUT = ROOT / "build" / "host" / "c"
SEED = int(os.environ.get("ATS_SEED", "1"))
M32 = 0xFFFFFFFF

# docs/host-interface.md §1.8 as (SCT << 8) | SC
OK, LBA_RANGE, TX_EMPTY = 0, 0x0080, 0x0706
TX_FULL = 0x0704
ENOSPC = -28


def xs32(x: int) -> int:
    x ^= (x << 13) & M32
    x ^= x >> 17
    x ^= (x << 5) & M32
    return x


def pattern(n: int, seed: int) -> bytes:
    """atstx_demo_util.h fill_pattern, written again here from its definition."""
    x, out = seed or 1, bytearray()
    while len(out) < n:
        x = xs32(x)
        out += x.to_bytes(4, "little")
    return bytes(out[:n])


@pytest.fixture(scope="module")
def built():
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc): libatstx cannot be built")
    subprocess.run(["make", "-s", "-C", str(ROOT / "sw/host/c")], check=True)
    import build as simbuild
    exe, fw, cfg = simbuild.build_locked("sim", nvme=True)
    return exe, fw, cfg


class Sim:
    """The NVMe build of the simulator listening on `sock` (one client, then it exits)."""

    def __init__(self, exe: Path, fw: Path, images: list[Path], d: Path):
        self.sock = d / "host.sock"
        if self.sock.exists():
            self.sock.unlink()
        self.log = open(d / "sim.log", "a")
        self.proc = subprocess.Popen([str(exe), f"+port={self.sock}", f"+firmware={fw}"]
                                     + [f"+ats_nand_image{i}={p}" for i, p in enumerate(images)],
                                     stdout=self.log, stderr=subprocess.STDOUT, cwd=d,
                                     env=dict(os.environ, ATS_NAND_FAULTS=""))
        for _ in range(300):
            if self.sock.exists():
                break
            time.sleep(0.05)

    def client(self, *args: str, stdin: str | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
        r = subprocess.run([str(OUT / args[0]), "--socket", str(self.sock), *args[1:]], input=stdin,
                           capture_output=True, text=True, timeout=timeout)
        self.proc.wait(timeout=120)              # the simulator exits when its client is gone
        return r


def test_unit(built):
    r = subprocess.run([str(OUT / "atstx_unit")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "all checks passed" in r.stdout


def test_script_against_model(built, tmp_path):
    exe, fw, cfg = built
    rng = random.Random(SEED * 31 + 5)
    pb, nl, num_tx = cfg["page_bytes"], cfg["num_lbas"], cfg["num_tx"]
    te = cfg["tx_entries"]
    committed: dict[int, bytes] = {}
    lines: list[str] = ["info"]
    expect: list = [None]                     # per line: a status, (status, crc), or None (info)
    txs: dict[int, dict[int, bytes]] = {}
    free = list(range(1, num_tx + 1))

    def page(lba: int, txid: int = 0) -> bytes:
        if txid and lba in txs[txid]:
            return txs[txid][lba]
        return committed.get(lba, bytes(pb))

    def crc(lbas, txid=0):
        return zlib.crc32(b"".join(page(l, txid) for l in lbas))

    def held(lbas, but: int = 0) -> bool:
        """an LBA an open transaction (other than `but`) has written: the host must not write it
        outside that transaction (rtl/wbuf/README.md "Linearisation": the device locks no LBA)"""
        return any(l in p for t, p in txs.items() if t != but for l in lbas)

    for _ in range(160):
        r = rng.random()
        if r < 0.18:
            lba, n, s = rng.randrange(nl - 4), rng.randint(1, 4), rng.getrandbits(32)
            if held(range(lba, lba + n)):
                continue
            lines.append(f"w {lba} {n} {s} {rng.choice([0, 1, 2])}")
            d = pattern(n * pb, s)
            for i in range(n):
                committed[lba + i] = d[i * pb:(i + 1) * pb]
            expect.append(OK)
        elif r < 0.3:
            lba, n = rng.randrange(nl - 4), rng.randint(1, 4)
            lines.append(f"r {lba} {n}")
            expect.append((OK, crc(range(lba, lba + n))))
        elif r < 0.4:
            lines.append("tb")
            if free:
                t = free.pop(0)
                txs[t] = {}
                expect.append(("tb", OK, t))
            else:
                expect.append(("tb", ENOSPC, 0))
        elif r < 0.62 and txs:
            t = rng.choice(sorted(txs))
            lba, s = rng.randrange(nl), rng.getrandbits(32)
            if held([lba], but=t):
                continue
            lines.append(f"tw {t} {lba} 1 {s}")
            if lba not in txs[t] and len(txs[t]) >= te:
                expect.append(TX_FULL)
            else:
                txs[t][lba] = pattern(pb, s)
                expect.append(OK)
        elif r < 0.7 and txs:
            t = rng.choice(sorted(txs))
            lba = rng.choice(sorted(txs[t]) or [rng.randrange(nl)])
            lines.append(f"tr {t} {lba} 1")
            expect.append((OK, crc([lba], t)))
        elif r < 0.8 and txs:
            t = rng.choice(sorted(txs))
            pages = txs.pop(t)
            free.append(t)
            free.sort()
            if rng.random() < 0.5:
                lines.append(f"tc {t}")
                expect.append(("tc", TX_EMPTY if not pages else OK, 0))     # DW0: the core's result, 0
            else:
                lba, s = rng.choice(sorted(pages) or [rng.randrange(nl)]), rng.getrandbits(32)
                pages[lba] = pattern(pb, s)
                lines.append(f"tcw {t} {lba} 1 {s}")
                expect.append(OK)
            committed.update(pages)
        elif r < 0.86 and txs:
            t = rng.choice(sorted(txs))
            txs.pop(t)
            free.append(t)
            free.sort()
            lines.append(f"ta {t}")
            expect.append(OK)
        elif r < 0.9:
            lines.append(rng.choice(["f", f"rf {rng.randrange(nl - 8)} 8"]))
            expect.append(OK)
        elif r < 0.94:
            lba = rng.randrange(nl - 2)
            if held([lba, lba + 1]):
                continue
            lines.append(f"trim {lba} 2")
            committed[lba] = committed[lba + 1] = bytes(pb)
            expect.append(OK)
        else:
            lines.append(f"w {nl - 1} 2 7 0")         # runs past the last LBA
            expect.append(LBA_RANGE)
    for t in sorted(txs):                           # end: abort what is still open
        lines.append(f"ta {t}")
        expect.append(OK)
    for lba in range(0, nl, 4):
        lines.append(f"r {lba} 4")
        expect.append((OK, crc(range(lba, lba + 4))))
    images = [tmp_path / f"die{d}.img" for d in range(cfg["ndie"])]
    sim = Sim(exe, fw, images, tmp_path)
    r = sim.client("atstx_script", stdin="\n".join(lines) + "\n")
    out = r.stdout.splitlines()
    assert r.returncode == 0 and out and out[-1] == "close 0", (r.returncode, out[-3:], r.stderr)
    assert len(out) == len(lines) + 1, (len(out), len(lines), out[:3])
    info = out[0].split()
    assert [int(v) for v in info[1:5]] == [pb, nl, num_tx, te], out[0]
    kinds = dict(ok=0, reads=0, tx_full=0, enospc=0, lba=0)
    for i, (ln, got, exp) in enumerate(zip(lines[1:], out[1:], expect[1:]), 1):
        f = got.split()
        if isinstance(exp, tuple) and exp[0] in ("tb", "tc"):
            assert int(f[1]) == exp[1] and int(f[3]) == exp[2], f"line {i} '{ln}': got '{got}', want {exp}"
            kinds["enospc"] += exp[1] == ENOSPC
        elif isinstance(exp, tuple):
            assert int(f[1]) == exp[0] and int(f[3]) == exp[1], f"line {i} '{ln}': got '{got}', want {exp}"
            kinds["reads"] += 1
        else:
            assert int(f[1]) == exp, f"line {i} '{ln}': got '{got}', want status {exp:#x}"
            kinds["tx_full"] += exp == TX_FULL
            kinds["lba"] += exp == LBA_RANGE
            kinds["ok"] += exp == OK
    assert kinds["reads"] > 20 and kinds["lba"] > 0 and kinds["ok"] > 50, kinds


def replay(seed: int, n: int, accts: int) -> list[tuple[dict[int, int], dict[int, int]]]:
    """States (balances, writer transfer) after transfers 0 … n of atstx_bank.c's generator."""
    bal, who = {a: 1000 for a in range(accts)}, {a: 0 for a in range(accts)}
    out = [(dict(bal), dict(who))]
    for t in range(1, n + 1):
        x = (seed * 2654435761 + t) & M32 or 1
        x = xs32(x)
        k = 2 + x % 3
        a: list[int] = []
        while len(a) < k:
            x = xs32(x)
            if x % accts not in a:
                a.append(x % accts)
        x = xs32(x)
        amt = 1 + x % 50
        bal[a[0]] -= amt * (k - 1)
        for v in a[1:]:
            bal[v] += amt
        for v in a:
            who[v] = t
        out.append((dict(bal), dict(who)))
    return out


def test_bank_power_cut(built, tmp_path):
    exe, fw, cfg = built
    rng = random.Random(SEED * 977 + 13)
    images = [tmp_path / f"die{d}.img" for d in range(cfg["ndie"])]
    accts, n, seed = 24, 400, rng.randrange(1, 1 << 16)
    r = Sim(exe, fw, images, tmp_path).client("atstx_bank", "init", "--accounts", str(accts))
    assert r.returncode == 0, (r.stdout, r.stderr)
    cut = rng.randrange(300_000, 3_000_000)
    r = Sim(exe, fw, images, tmp_path).client("atstx_bank", "run", "--accounts", str(accts), "--transfers", str(n),
                                              "--seed", str(seed), "--cut-after-cycles", str(cut))
    assert r.returncode == 3, f"the power cut did not stop the run ({r.returncode}):\n{r.stdout[-500:]}\n{r.stderr}"
    done = [int(m) for m in re.findall(r"^committed (\d+)$", r.stdout, re.M)]
    assert done == list(range(1, len(done) + 1))
    last = done[-1] if done else 0
    r = Sim(exe, fw, images, tmp_path).client("atstx_bank", "check", "--accounts", str(accts))
    assert r.returncode == 0, f"check failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    got = {int(a): (int(b), int(t)) for a, b, t in re.findall(r"^account (\d+) balance (-?\d+) xfer (\d+)$",
                                                                r.stdout, re.M)}
    assert len(got) == accts
    states = replay(seed, min(last + 1, n), accts)
    match = [k for k in (last, last + 1) if k < len(states) and
             all(got[a] == (states[k][0][a], states[k][1][a]) for a in range(accts))]
    assert match, (f"recovered accounts are no state of the replay after transfer {last} (last committed) or "
                   f"{last + 1} (in flight): {got}")
    print(f"bank: seed {seed}, cut {cut} cycles into the run, {last} transfers committed, recovered state = "
          f"after transfer {match[0]}")
