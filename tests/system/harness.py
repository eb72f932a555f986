# SPDX-License-Identifier: Apache-2.0
"""The system-test driver: the full SoC simulation (sim/soc), the host library (sw/host), the host
model and invariant checker (model.py) and the independent recovery oracle
(cocotb_tests/lib/atstb/recovery_oracle.py, extended to checkpoint version 2).

One campaign = one seed: format, then power cycles of a random workload (plain / FUA / barrier
writes, transactions committed by a COMMIT write or TX_COMMIT, aborts, FLUSH, RFLUSH, TRIM, reads),
each ended by a power cut at a random cycle or command, or inside the next recovery; after every
restart the firmware's recovered state is compared with the oracle's (every LBA read back must hold
the oracle's page) and with the invariants."""
from __future__ import annotations

import os
import random
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "sw/host"), str(ROOT / "cocotb_tests/lib"), str(ROOT / "sim/soc"), str(ROOT / "soc")]

from atomssd.device import Device, DeviceError  # noqa: E402
from atomssd.hostport import (CUT_ACCEPT, CUT_CYCLE, CUT_NONE, F_BARRIER, F_COMMIT, F_FUA, OP, R_CUT, ST, U_HOST_EN, U_LINE,  # noqa: E402
                              HostPort, SimError)
from atstb.recovery_oracle import Geometry, read_lpn, recover, scan_reads  # noqa: E402
from model import Model, Ver, decode, page_bytes_for  # noqa: E402

BOOT_CYCLES = 20_000_000     # a boot or recovery must enable the host within this many cycles
HANG_CYCLES = 20_000_000     # a full queue with no completion for this long is a hang (test fails)


def build(cfg_name: str = "sim", trace: bool = False, nvme: bool = False):
    """The simulator (the NVMe build with `nvme`), the firmware and the configuration (built once;
    pytest-xdist workers wait on a file lock)."""
    import build as simbuild
    if os.environ.get("ATS_SYS_FW") and not nvme:
        # another firmware image runs (System): the simulator only, the tree's firmware is not built
        # (it may be mid-edit; a scratch build of sw/firmware is what runs)
        import fcntl
        import json
        lock = ROOT / "build" / "soc" / ".build.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            asrt = ("ATS_SIM_ASSERT",) if os.environ.get("ATS_SIM_ASSERT") == "1" else ()
            exe = simbuild.build_sim(cfg_name, trace=trace, quiet=True, defines=asrt)
        return exe, Path(os.environ["ATS_SYS_FW"]), json.loads((ROOT / "build" / "soc" / cfg_name / "config.json").read_text())
    return simbuild.build_locked(cfg_name, trace=trace, nvme=nvme)


@dataclass
class Stats:
    cuts: int = 0
    recoveries: int = 0
    cuts_in_recovery: int = 0
    violations: int = 0
    oracle_checked: int = 0
    lbas_checked: int = 0
    oracle_media_error: int = 0   # LBAs the oracle says read MEDIA_ERROR (an unknown page's fragment)
    cmds: int = 0
    writes: int = 0
    tx_commits: int = 0
    tx_aborts: int = 0
    tx_cut_in_commit: int = 0
    flushes: int = 0
    rflushes: int = 0
    trims: int = 0
    reads: int = 0
    iso_checked: int = 0
    max_recovery_pages: int = 0
    max_recovery_cycles: int = 0
    relocs_replayed: int = 0        # GC relocations found in the active logs the recoveries replayed
    mid_ckpts: int = 0              # checkpoints taken in the middle of a power cycle (campaign's mid_ckpt_p)
    mid_ckpts_ok: int = 0           # ... that the firmware reported written (`ckpt: 0`)
    mid_ckpts_tx_open: int = 0      # ... with a transaction open across them
    scan_boots: int = 0             # recoveries whose step-2 reads were compared with scan_reads
    scan_searched: int = 0          # plan blocks the recoveries searched past their old pages (section 6)
    scan_unread: int = 0            # pages those searches did not read
    fw: dict = field(default_factory=dict)


def parse_fw_stats(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if line.startswith("stats:"):
            toks = line[6:].split()
            for k, v in zip(toks[::2], toks[1::2]):
                try:
                    out[k] = int(v)
                except ValueError:
                    pass
    return out



def console_answer(sysm: "System", cmd: str, cycles: int = 6_000_000) -> str:
    """The console's answer to `cmd`, complete once the prompt AFTER the answer came (System.console
    stops at the first prompt, which may be the one the boot printed after the command was sent);
    stops early if an armed power cut fired (the simulator then stops advancing)."""
    mark = len(sysm.hp.uart)
    sysm.hp.uart_in(cmd + "\n")
    end = sysm.hp.cycle + cycles
    key = cmd.split()[0] + ":"
    while sysm.hp.cycle < end and not sysm.hp.cut:
        text = sysm.hp.uart[mark:].decode(errors="replace")
        i = text.find(key)
        if i >= 0 and "> " in text[i:]:
            break
        sysm.hp.run(min(50_000, end - sysm.hp.cycle), U_LINE)
    return sysm.hp.uart[mark:].decode(errors="replace")


def slog_sim():
    """tests/system/slog_sim.py (the S-Log reference writer), loaded once under one module name
    (its dataclasses need the module in sys.modules)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ats_sys_slog_sim", Path(__file__).resolve().parent / "slog_sim.py")
    mod = sys.modules.get(spec.name)
    if mod is None:
        mod = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    return mod

class System:
    def __init__(self, workdir: Path, seed: int, faults: str = "", cfg_name: str = "sim", template: Path | None = None):
        self.exe, self.fw, self.cfg = build(cfg_name)
        self.fw = os.environ.get("ATS_SYS_FW") or self.fw    # another firmware image (e.g. an older one, to bisect)
        self.dir = Path(workdir).resolve()      # the simulator runs there: image paths must be absolute
        self.dir.mkdir(parents=True, exist_ok=True)
        self.rng = random.Random(seed)
        self.seed = seed
        self.faults = f"{faults},seed={seed}" if faults else ""
        c = self.cfg
        self.geo = Geometry(c["num_chan"], c["ways"], c["blocks"], c["pages_per_block"], c["page_bytes"], c["spare_bytes"])
        self.images = [self.dir / f"die{d}.img" for d in range(self.geo.ndie)]
        if template:
            for d, p in enumerate(self.images):
                shutil.copy(template / f"die{d}.img", p)
        self.model = Model(c["num_lbas"], c["page_bytes"])
        self.stats = Stats()
        self.hp: HostPort | None = None
        self.dev: Device | None = None
        self.uart_log = self.dir / "uart.log"
        self.boot_limit = BOOT_CYCLES     # a benchmark with a long active log raises it
        self.check_scan = True            # each recovery's step-2 reads against scan_reads (False: another rule)
        self.errors: list[str] = []

    # ---- process
    def start(self, cut_at: int | None = None) -> bool:
        """Starts the simulator, waits for the firmware to enable the host. cut_at: power cut at
        that cycle (inside the boot / recovery); returns False if it was cut there."""
        want = self._scan_want()
        self.hp = HostPort(self.exe, self.fw, self.images, faults=self.faults, cwd=self.dir)
        if cut_at:
            self.hp.arm_cut(CUT_CYCLE, cut_at)
        why = self.hp.run(self.boot_limit, U_HOST_EN)
        with open(self.uart_log, "a") as f:
            f.write(self.hp.uart_text())
        if why & R_CUT:
            self.stop()
            return False
        if cut_at:
            self.hp.arm_cut(CUT_NONE, 0)       # the boot finished first: the cut is for the boot only
        if not why & U_HOST_EN:
            raise AssertionError(f"seed {self.seed}: the device did not come up in {self.boot_limit} cycles:\n"
                                 + self.hp.uart_text()[-2000:])
        self.boot_cycles = self.hp.cycle
        self._check_scan_report(self.hp.uart_text(), want)
        self.dev = Device(self.hp, self.cfg["page_bytes"], self.cfg["num_lbas"], qdepth=min(16, self.cfg["qdepth"]))
        self.cmd_no = 0
        self.uart_mark = len(self.hp.uart)
        return True

    def stop(self) -> dict:
        info = self.hp.close()
        if info.get("viol_total"):
            self.errors.append(f"NAND protocol violations: {info['viol_total']}")
        if info.get("mem_errors"):
            self.errors.append(f"host memory errors: {info['mem_errors']}")
        self.hp = None
        self.dev = None
        return info

    def console(self, cmd: str, cycles: int = 4_000_000) -> str:
        """Sends a console command; returns its output, complete once the next prompt came (the
        firmware answers between housekeeping steps: a checkpoint or a GC step may delay it)."""
        mark = len(self.hp.uart)
        self.hp.uart_in(cmd + "\n")
        end = self.hp.cycle + cycles
        while self.hp.cycle < end and b"> " not in self.hp.uart[mark:] and not self.hp.cut:
            # (a power cut armed earlier may fire meanwhile: the simulator then stops advancing)
            self.hp.run(min(50_000, end - self.hp.cycle), U_LINE)
        return self.hp.uart[mark:].decode(errors="replace")

    # ---- workload
    def hang(self, what: str) -> None:
        """The device stopped completing commands: fail with the firmware's view (never wait forever)."""
        view = "".join(self.console(c, 2_000_000) for c in ("status", "log", "stats"))
        raise AssertionError(f"seed {self.seed}: {what}: no completion for {HANG_CYCLES} cycles at cycle "
                             f"{self.hp.cycle}\n{view}")

    def _submit(self, op, lba=0, nlb=0, data=None, txid=0, flags=0, aux=0, **user):
        c0 = self.hp.cycle
        while not self.dev.free_tags:
            self._poll()
            if self.hp.cut:
                return None
            if self.hp.cycle - c0 > HANG_CYCLES:
                self.hang("submit")
        t = self.dev.submit(op, lba, nlb, data, txid, flags, aux=aux, **user)
        self.cmd_no = self.hp.submitted       # the simulator's acceptance count of this command
        self.stats.cmds += 1
        return t

    def _poll(self, cycles: int = 100_000):
        for p in self.dev.poll(cycles):
            self._complete(p)

    def _complete(self, p):
        u = p.user
        st = p.cpl.status
        m = self.model
        if p.op == OP["WRITE"]:
            for v in u.get("vers", []):
                v.completed = st == ST["OK"]
                if st == ST["OK"] and p.flags & F_FUA and not v.txid:
                    v.durable = True
            tx = u.get("commit_tx")
            if tx is not None:
                self._commit_done(tx, st)
        elif p.op == OP["TRIM"]:
            for v in u.get("vers", []):
                v.completed = st == ST["OK"]
        elif p.op in (OP["FLUSH"], OP["RFLUSH"]):
            if st == ST["OK"]:
                for v in u["snap"]:
                    v.durable = True
        elif p.op == OP["TX_COMMIT"]:
            self._commit_done(u["tx"], st)
        elif p.op == OP["TX_ABORT"]:
            pass
        elif p.op == OP["READ"] and st == ST["OK"]:
            d = decode(p.data, m.page_bytes)
            self.stats.reads += 1
            if d is None or (d != "zero" and d[0] != p.lba):
                m.violations.append(f"run: READ lba {p.lba} returned garbage or another LBA's data")
            elif d != "zero" and d[2] and not p.txid:
                # INV-ISO: a tx page seen without txid must belong to a committed (or committing) tx
                v = next((x for x in m.vers.get(p.lba, []) if x.version == d[1]), None)
                tx = m.tx_by_seq.get(v.tx_seq) if v is not None else None
                if v is None or not (v.durable or (tx is not None and tx.commit_idx is not None and not tx.aborted)):
                    m.violations.append(f"run: INV-ISO READ lba {p.lba} returned version {d[1]} of an "
                                        f"uncommitted transaction {d[2]}")
                self.stats.iso_checked += 1

    def _commit_done(self, tx, st):
        tx.commit_done = True
        if st == ST["OK"]:
            tx.committed_ok = True
            for v in tx.pages.values():
                v.completed = v.durable = True
            self.stats.tx_commits += 1
        else:
            tx.aborted = True          # a refused commit aborts the tx (architecture.md)

    def _tx_locked(self) -> set[int]:
        """LBAs of transactions open or with a commit in flight: no plain write or TRIM goes there
        meanwhile (the queue may order a SIMPLE commit and a SIMPLE write either way; the checker
        stays exact by not creating that race)."""
        m = self.model
        return {l for t in m.txs if not t.commit_done and not t.aborted for l in t.pages}

    def _plain_busy(self) -> set[int]:
        return {l for l, vs in self.model.vers.items() for v in vs if not v.txid and not v.completed
                and getattr(v, "cmd_no", None) is not None}

    def workload(self, n: int, lbas: list[int]) -> set[int]:
        rng, m = self.rng, self.model
        touched: set[int] = set()
        ntx = min(self.cfg["num_tx"], 4)
        for _ in range(n):
            if self.hp.cut:
                break
            r = rng.random()
            locked = self._tx_locked()
            free = [l for l in lbas if l not in locked] or lbas[:1]
            if r < 0.45:                                   # plain write, sometimes FUA or a barrier
                lba = rng.choice(free)
                if lba in locked:
                    continue
                fua, bar = rng.random() < 0.15, rng.random() < 0.15
                v, data = m.new_write(lba, barrier=bar)
                t = self._submit(OP["WRITE"], lba, 0, data, 0, (F_FUA if fua else 0) | (F_BARRIER if bar else 0), vers=[v])
                v.cmd_no = self.cmd_no
                touched.add(lba)
                self.stats.writes += 1
            elif r < 0.65:                                 # a transaction of 1-4 pages
                txid = rng.randint(1, ntx)
                if txid in m.open_tx:
                    continue
                k = rng.randint(1, 4)
                avail = [l for l in lbas if l not in locked and l not in self._plain_busy()]
                if len(avail) < k:
                    continue
                pages = rng.sample(avail, k)
                how = rng.random()
                for i, lba in enumerate(pages):
                    last = i == k - 1 and how < 0.4       # COMMIT flag on the last write
                    v, data = m.new_write(lba, txid=txid)
                    tx = m.open_tx[txid]
                    if last:
                        tx.commit_idx = m.idx
                        del m.open_tx[txid]
                        m.commit_submitted(tx)
                    self._submit(OP["WRITE"], lba, 0, data, txid, F_COMMIT if last else 0, vers=[v],
                                 commit_tx=tx if last else None)
                    v.cmd_no = self.cmd_no
                    touched.add(lba)
                    self.stats.writes += 1
                if how >= 0.4 and txid in m.open_tx:
                    if how < 0.85:
                        self._tx_commit(txid)
                    else:
                        tx = m.open_tx.pop(txid)
                        tx.aborted = True
                        self._submit(OP["TX_ABORT"], txid=txid)
                        self.stats.tx_aborts += 1
            elif r < 0.72:                                 # FLUSH
                snap = [v for vs in m.vers.values() for v in vs if v.completed and not v.txid]
                self._submit(OP["FLUSH"], snap=snap)
                self.stats.flushes += 1
            elif r < 0.77:                                 # RFLUSH of 1-3 ranges
                ranges = []
                for _ in range(rng.randint(1, 3)):
                    lo = rng.choice(lbas)
                    ranges.append((lo, rng.randint(1, 4)))
                cover = {l for lo, k in ranges for l in range(lo, lo + k)}
                snap = [v for l, vs in m.vers.items() if l in cover for v in vs if v.completed and not v.txid]
                tag_aux = self._rflush(ranges, snap)
                if tag_aux is None:
                    break
                self.stats.rflushes += 1
            elif r < 0.83:                                 # TRIM
                lba = rng.choice(free)
                if lba in locked:
                    continue
                v = m.new_trim(lba)
                self._submit(OP["TRIM"], lba, 0, vers=[v])
                v.cmd_no = self.cmd_no
                touched.add(lba)
                self.stats.trims += 1
            else:                                          # READ (INV-ISO, INV-LBA while running)
                self._submit(OP["READ"], rng.choice(lbas))
            if rng.random() < 0.3:
                self._poll(rng.randint(500, 20_000))
        return touched

    def _tx_commit(self, txid: int) -> None:
        """TX_COMMIT of the open transaction txid (the model's commit point taken at its submission)."""
        m = self.model
        tx = m.open_tx.pop(txid)
        m.idx += 1
        tx.commit_idx = m.idx
        m.commit_submitted(tx)
        self._submit(OP["TX_COMMIT"], txid=txid, tx=tx)

    def settle_inflight(self, polls: int = 200) -> None:
        """Polls (50,000 cycles each, at most `polls` times) until no command is in flight or the power
        was cut."""
        for _ in range(polls):
            if self.hp.cut or not self.dev.inflight:
                break
            self._poll(50_000)

    def _open_tx(self, lbas: list[int], touched: set[int]) -> int | None:
        """Writes 1-3 pages of a free txid and leaves the transaction open; returns the txid (None when
        no txid or LBAs are free)."""
        m, rng = self.model, self.rng
        free_tx = [t for t in range(1, min(self.cfg["num_tx"], 4) + 1) if t not in m.open_tx]
        locked = self._tx_locked()
        avail = [l for l in lbas if l not in locked and l not in self._plain_busy()]
        k = rng.randint(1, 3)
        if not free_tx or len(avail) < k:
            return None
        txid = rng.choice(free_tx)
        for lba in rng.sample(avail, k):
            v, data = m.new_write(lba, txid=txid)
            self._submit(OP["WRITE"], lba, 0, data, txid, 0, vers=[v])
            v.cmd_no = self.cmd_no
            touched.add(lba)
            self.stats.writes += 1
        return txid

    def _rflush(self, ranges, snap):
        c0 = self.hp.cycle
        while not self.dev.free_tags:
            self._poll()
            if self.hp.cut:
                return None
            if self.hp.cycle - c0 > HANG_CYCLES:
                self.hang("submit")
        t = self.dev.submit_rflush(ranges, snap=snap)
        self.cmd_no = self.hp.submitted
        self.stats.cmds += 1
        return t

    # ---- after a cut: what was accepted, then the oracle
    def settle_cut(self, info_accepted: int):
        for vs in self.model.vers.values():
            for v in vs:
                n = getattr(v, "cmd_no", None)
                if n is not None and not v.accepted and n <= info_accepted:
                    v.accepted = True
                if n is not None:
                    v.cmd_no = None         # a later power cycle counts commands again

    def verify(self, touched: set[int], oracle, where: str):
        """Reads `touched` (and a random sample) back through the device; each page must equal the
        oracle's and pass the invariants; then the checked LBAs' history collapses to what they show."""
        m = self.model
        sample = set(self.rng.sample(range(m.nlba), min(16, m.nlba)))
        lbas = sorted(touched | sample)
        shown: dict[int, Ver] = {}
        for lba in lbas:
            c0 = self.hp.cycle
            while not self.dev.free_tags:
                self.dev.poll(200_000)
                if self.hp.cycle - c0 > HANG_CYCLES:
                    self.hang("read-back")
            self.dev.submit(OP["READ"], lba, 0, lba_check=lba)
        try:
            self.dev.drain(HANG_CYCLES)
        except DeviceError:
            self.hang("read-back")
        for p in self.dev.done:
            if p.op != OP["READ"] or "lba_check" not in p.user:
                continue
            lba = p.user["lba_check"]
            exp = read_lpn(self.geo, oracle, lba) if oracle is not None else None
            if exp is not None and not isinstance(exp, (bytes, bytearray)):
                # the oracle's MEDIA_ERROR (persistence §10.4: a checkpoint's unknown page in F[lpn]): the
                # device could not read the LBA before the cut either; agreement is the status, not data
                self.stats.oracle_checked += 1
                self.stats.oracle_media_error += 1
                if p.cpl.status != ST["MEDIA_ERROR"]:
                    m.violations.append(f"{where}: READ lba {lba} after recovery: status {p.cpl.status:#x}, "
                                        f"the oracle's MEDIA_ERROR (an unknown page's fragment)")
                continue
            if p.cpl.status != ST["OK"]:
                m.violations.append(f"{where}: READ lba {lba} after recovery: status {p.cpl.status:#x}")
                continue
            exp = exp if exp is not None else bytes(m.page_bytes)
            if oracle is not None:
                self.stats.oracle_checked += 1
                if p.data != exp:
                    m.violations.append(f"{where}: lba {lba}: the firmware's recovery and the oracle disagree "
                                        f"(device {decode(p.data, m.page_bytes)}, oracle {decode(exp, m.page_bytes)})")
            v = m.check_page(lba, p.data, where)
            if v is not None:
                shown[lba] = v
            self.stats.lbas_checked += 1
        self.dev.done.clear()
        m.check_all(shown, where)
        # collapse: what a checked LBA shows is its durable state now
        for lba, v in shown.items():
            v.durable = v.accepted = v.completed = True
            m.vers[lba] = [v]
        m.txs = [t for t in m.txs if not (set(t.pages) <= set(shown)) and t.commit_idx is None and not t.aborted]
        m.open_tx.clear()

    def oracle(self):
        return recover(self.images, self.geo, self.cfg["num_tx"])

    def _scan_want(self) -> dict | None:
        """scan_reads of the images the next boot recovers from (persistence.md section 6 "Old pages"),
        None when there is nothing to compare: blank dies (a format), dies with journal records (a
        killed simulator), another firmware (ATS_SYS_FW, check_scan False). With read flips
        (`flip_ppb`) the controller can read a torn page as erased that the raw bits do not (section
        2's threshold counts the bits as read): the blocks searched and pages not read must still be
        equal (a probe reads a torn page as not old either way), the pages read may differ by 2 a die
        (`tol`: a torn last page read as erased ends the block, or the die's plan, a read or two early)."""
        if not self.check_scan or os.environ.get("ATS_SYS_FW") or not all(p.exists() for p in self.images):
            return None
        # a killed simulator leaves records in the dies' journals, which the next start replays into
        # the images (sim/nand/README.md "Journal"): the files on disk are not what it will recover
        if any(Path(f"{p}.log").exists() and Path(f"{p}.log").stat().st_size > 32 for p in self.images):
            return None
        try:
            want = scan_reads(self.images, self.geo, bool(self.cfg.get("slog")))
        except RuntimeError:                    # no checkpoint: the boot formats
            return None
        want["tol"] = 2 * self.geo.ndie if "flip_ppb" in self.faults else 0
        return want

    def _check_scan_report(self, boot: str, want: dict | None) -> None:
        """The recovery's step-2 report (`recovery: scan: ...`) against scan_reads of the images it
        recovered from: the same pages read (within `tol`), blocks searched and pages not read."""
        if want is None:
            return
        m = re.search(r"recovery: scan: (\d+) pages read, (\d+) blocks searched past their old pages, "
                      r"(\d+) pages not read", boot)
        if not m:
            self.errors.append(f"seed {self.seed}: no recovery scan report in the boot log")
            return
        got = {"pages": int(m.group(1)), "searched": int(m.group(2)), "unread": int(m.group(3))}
        if ((got["searched"], got["unread"]) != (want["searched"], want["unread"])
                or abs(got["pages"] - want["pages"]) > want["tol"]):
            self.errors.append(f"seed {self.seed} boot {self.stats.scan_boots}: recovery scan {got}, the images say {want}")
        self.stats.scan_boots += 1
        self.stats.scan_searched += got["searched"]
        self.stats.scan_unread += got["unread"]

    # ---- the campaign
    def campaign(self, cuts: int, lbas: list[int], cmds=(10, 40), recovery_cut_p: float = 0.1,
                 mid_ckpt_p: float = 0.0) -> Stats:
        """mid_ckpt_p: the probability that a power cycle first runs a workload to its end and takes a
        checkpoint (the console's `ckpt`) before the workload the cut falls in: the blocks the cycle
        opened then hold pages older than the checkpoint, which the next recovery searches past
        (persistence.md section 6 "Old pages")."""
        s = self.stats
        assert self.start(), "first boot was cut"
        touched: set[int] = set()
        oracle = None
        while s.cuts < cuts:
            if oracle is not None or touched:
                self.verify(touched, oracle, f"seed {self.seed} cut {s.cuts}")
                s.recoveries += 1
                boot = self.hp.uart[:self.uart_mark].decode(errors="replace")
                m = re.search(r"relocs (\d+)/(\d+) stale", boot)
                if m:
                    s.relocs_replayed += int(m.group(1)) + int(m.group(2))
                m = re.search(r"recovery: (\d+) pages read, (\d+) cycles", boot)
                if m:
                    s.max_recovery_pages = max(s.max_recovery_pages, int(m.group(1)))
                    s.max_recovery_cycles = max(s.max_recovery_cycles, int(m.group(2)))
                elif not self.model.violations:
                    self.errors.append(f"seed {self.seed} cut {s.cuts}: no recovery report in the boot log")
                if s.recoveries % 8 == 1:
                    # the console after a recovery (every eighth: a stats line costs ~50k cycles);
                    # its recovery figures must agree with the boot report
                    fw = parse_fw_stats(self.console("stats"))
                    if m and fw and (fw.get("recovery_pages"), fw.get("recovery_cycles")) != (int(m.group(1)), int(m.group(2))):
                        self.errors.append(f"seed {self.seed} cut {s.cuts}: stats disagree with the boot report")
                    if fw:
                        s.fw = fw
                if self.model.violations:
                    break
            pre: set[int] = set()
            straddle = None
            if mid_ckpt_p and self.rng.random() < mid_ckpt_p:
                pre = self.workload(self.rng.randint(*cmds), lbas)
                if self.rng.random() < 0.5:
                    # a transaction open across the checkpoint (its scan_from below its seq_base: the
                    # next recovery reads every plan block from page 0), committed in half of the cases
                    # by the workload the cut falls in
                    straddle = self._open_tx(lbas, pre)
                self.settle_inflight()
                ans = self.console("ckpt")
                s.mid_ckpts += 1
                s.mid_ckpts_ok += "ckpt: 0" in ans
                s.mid_ckpts_tx_open += straddle is not None
            n = self.rng.randint(*cmds)
            c0 = self.hp.cycle
            how = self.rng.random()
            if how < 0.6:
                self.hp.arm_cut(CUT_CYCLE, c0 + self.rng.randint(200, 2500 * n))
            elif how < 0.9:
                self.hp.arm_cut(CUT_ACCEPT, self.hp.submitted + self.rng.randint(1, n))
            if straddle is not None and self.rng.random() < 0.5 and not self.hp.cut:
                self._tx_commit(straddle)
            touched = self.workload(n, lbas) | pre
            if not self.hp.cut:
                self.settle_inflight()
            if not self.hp.cut:
                self.hp.cut_now()                      # every command done: cut anyway (a clean cut)
            info = self.hp.info()
            in_commit = any(t.commit_idx is not None and not t.commit_done for t in self.model.txs)
            s.tx_cut_in_commit += int(in_commit)
            self.stop()
            s.cuts += 1
            self.settle_cut(info["accepted"])
            oracle = self.oracle()
            # a cut inside the recovery now and then: the next recovery must give the same state
            while True:
                if s.cuts < cuts and self.rng.random() < recovery_cut_p:
                    if self.start(cut_at=self.rng.randint(20_000, 400_000)):
                        break                           # the recovery finished before the cut
                    s.cuts += 1
                    s.cuts_in_recovery += 1
                    again = self.oracle()
                    bad = [l for l in range(self.model.nlba) if read_lpn(self.geo, again, l) != read_lpn(self.geo, oracle, l)]
                    if bad:
                        self.model.violations.append(f"seed {self.seed}: a cut inside recovery changed lba {bad[:5]}")
                    continue
                assert self.start(), "a boot without an armed cut was cut"
                break
        if self.hp is not None and oracle is not None and not self.model.violations:
            self.verify(touched, oracle, f"seed {self.seed} cut {s.cuts}")
            s.recoveries += 1
        if self.hp is not None:
            fw = parse_fw_stats(self.console("stats"))
            if fw:
                s.fw = fw
            self.stop()
        s.violations = len(self.model.violations) + len(self.errors)
        return s


def format_template(dest: Path, cfg_name: str = "sim") -> Path:
    """A formatted device (first boot on blank dies), reused by every campaign of a session."""
    exe, fw, cfg = build(cfg_name)
    stamp = dest / "fw.hash"
    import hashlib
    h = hashlib.sha256(Path(fw).read_bytes() + Path(exe).read_bytes()[:4096]).hexdigest()
    if stamp.exists() and stamp.read_text() == h:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    for f in dest.glob("die*.img"):
        f.unlink()
    nd = cfg["ndie"]
    hp = HostPort(exe, fw, [dest / f"die{d}.img" for d in range(nd)], cwd=dest)
    why = hp.run(BOOT_CYCLES, U_HOST_EN)
    if not why & U_HOST_EN:
        raise AssertionError("format did not finish:\n" + hp.uart_text())
    hp.close()
    stamp.write_text(h)
    return dest


def settle(sysm: "System") -> None:
    """After a fill: no violation so far, a FLUSH, power off, every written version counts as accepted
    and the completed ones as durable (the campaign that follows starts from this state). Without the
    FLUSH the fill's writes after its last FLUSH could still be in the write buffer at the power-off,
    lost there, and a FLUSH of the next power cycle (whose snapshot takes every completed version)
    made them 'required durable': a false INV-DUR (test_badblocks seed 2, lba 547, once the
    firmware's timing had changed a little)."""
    assert not sysm.model.violations, "\n".join(sysm.model.violations[:10])
    assert sysm.dev.flush().cpl.status == ST["OK"], "settle: FLUSH failed"
    sysm.stop()
    for v in sysm.model.vers.values():
        for x in v:
            x.accepted = True
            x.durable = x.durable or (x.completed and not x.txid)


def fill(sysm: "System", pages: int, lbas: list[int], flush_every: int = 256, max_cycles: int = 200_000_000) -> dict:
    """Writes `pages` random pages over `lbas` (queue depth 16, a FLUSH every `flush_every`), no
    cut; returns the firmware's statistics after it."""
    m, rng = sysm.model, sysm.rng
    for i in range(pages):
        lba = rng.choice(lbas)
        v, data = m.new_write(lba)
        sysm._submit(OP["WRITE"], lba, 0, data, 0, 0, vers=[v])
        v.accepted = True
        if (i + 1) % flush_every == 0:
            snap = [x for vs in m.vers.values() for x in vs if x.completed and not x.txid]
            sysm._submit(OP["FLUSH"], snap=snap)
    sysm.dev.drain(max_cycles)
    for p in sysm.dev.done:
        if p.op in (OP["WRITE"], OP["FLUSH"]) and p.cpl.status != ST["OK"]:
            m.violations.append(f"fill: {p.op} lba {p.lba} status {p.cpl.status:#x}")
    for p in sysm.dev.done:
        sysm._complete(p)
    sysm.dev.done.clear()
    return parse_fw_stats(sysm.console("stats"))


def fw_frags(text: str) -> tuple[int, dict[int, list[tuple]]]:
    """The console's `slog` answer: the next LPGN and lpn -> [(log ppn, data offset, off, len, seq)]."""
    m = re.search(r"slog: lpgn (\d+), (\d+) lpns", text)
    assert m, text[-1000:]
    out = {}
    for line in text.splitlines():
        mm = re.match(r"slog (\d+):((?: \d+/\d+/\d+/\d+/\d+)*)\s*$", line.strip())
        if mm:
            out[int(mm.group(1))] = [tuple(int(x) for x in f.split("/")) for f in mm.group(2).split()]
    assert len(out) == int(m.group(2)), text[-1000:]
    return int(m.group(1)), out


# ---- power cuts inside a checkpoint's S-Log section (located from the NAND trace)
PROG_RE = re.compile(rb"die (\d+) PROGRAM block (\d+) page (\d+)")
CK_HDR_WORDS = 4          # a checkpoint page's header: magic, version, index, count (docs/persistence.md §5)
CK_FIXED = 8              # the stream's fixed words before the plans (§5)


class NandTrace:
    """The PROGRAMs the running simulator logs with ATS_NAND_TRACE=1 in its environment (sim/nand
    ats_nand_store.cpp: one line a program, at the end of its tPROG), read from its log between runs."""

    def __init__(self, sysm: "System"):
        self.path = sysm.hp.stderr_path
        self.pos = 0
        self.new()

    def new(self) -> list[tuple[int, int, int]]:
        t = self.path.read_bytes()
        end = t.rfind(b"\n") + 1
        out = [tuple(map(int, m.groups())) for m in PROG_RE.finditer(t, self.pos, max(end, self.pos))]
        self.pos = max(end, self.pos)
        return out


def ckpt_traced(sysm: "System", ck_blocks: tuple[int, int], step: int = 250, cut_page: int | None = None,
                cut_span: int = 0, rng: random.Random | None = None, limit: int = 40_000_000) -> dict:
    """Console `ckpt`, the simulation run in steps of `step` cycles with the NAND trace on: the die-0
    checkpoint block it programs (one of `ck_blocks`) and the cycle each of its pages ended (to a step).
    cut_page = j (>= 1): when page j - 1 has ended, a power cut armed at a cycle drawn from
    1 .. cut_span later (cut_span: page j's time in a measured checkpoint), i.e. in page j's transfer
    or tPROG. Returns block, ends, the answer (None if cut first), cut (the cut fired), cut_at."""
    hp = sysm.hp
    assert os.environ.get("ATS_NAND_TRACE"), "ckpt_traced needs ATS_NAND_TRACE=1 in the simulator's environment"
    tr = NandTrace(sysm)
    mark = len(hp.uart)
    hp.uart_in("ckpt\n")
    out = dict(block=None, ends=[], answer=None, cut=False, cut_at=None)
    c0 = hp.cycle
    while hp.cycle - c0 < limit and not hp.cut:
        text = hp.uart[mark:].decode(errors="replace")
        m = re.search(r"ckpt: (-?\d+)\s", text)
        if m and "> " in text[m.end():]:
            out["answer"] = int(m.group(1))
            break
        hp.run(step, 0)
        for d, b, p in tr.new():
            if d != 0 or b not in ck_blocks:
                continue
            if p == 0:                                  # (a housekeeping checkpoint may come first)
                out["ends"] = []
            out["block"] = b
            assert p == len(out["ends"]), f"checkpoint page {p} after {len(out['ends'])} pages"
            out["ends"].append(hp.cycle)
            if cut_page is not None and p == cut_page - 1 and out["cut_at"] is None:
                # (the ends are known to a step: 2 steps short of the measured page, so not past page j)
                out["cut_at"] = hp.cycle + rng.randint(1, max(1, cut_span - 2 * step))
                hp.arm_cut(CUT_CYCLE, out["cut_at"])
    out["cut"] = hp.cut
    if not hp.cut and out["cut_at"] is not None:
        hp.arm_cut(CUT_NONE, 0)                         # (the checkpoint ended first: not left armed)
    assert out["cut"] or out["answer"] is not None, f"ckpt did not answer in {limit} cycles"
    return out


def slog_section_words(frags: dict[int, list]) -> int:
    """The checkpoint's S-Log section for F = lpn -> fragments (docs/persistence.md §10.4): next LPGN,
    count, then per LPN (lpn, base, |F|), 3 words a fragment and its 2-word seq."""
    return 2 + sum(3 + 5 * len(f) for f in frags.values()) if frags else 0


def section_cut_page(rng: random.Random, geo: Geometry, npages: int, frags: dict[int, list]) -> int | None:
    """A page of a checkpoint of `npages` pages that holds S-Log section words: the section is the
    stream's tail, so its last ceil(words / payload) pages do (at least one word each); page 0 never
    (the cut is placed after the end of the page before it). None: no section."""
    w = slog_section_words(frags)
    if not w or npages < 2:
        return None
    per = geo.page_bytes // 4 - CK_HDR_WORDS
    return rng.randint(max(1, npages - -(-w // per)), npages - 1)


def ckpt_torn(images: list[Path], geo: Geometry, blk: int) -> dict:
    """The checkpoint in die 0 block `blk` read from the image (docs/persistence.md §5, §10.4; no
    firmware code): its version and page count (page 0's header), the pages complete in order
    (CRC, kind, header), and `k0`, the page holding the stream's first S-Log section word (after the
    fixed words, the plans, the bad list, the erase counts and the mapping pairs, read from the
    complete pages); `in_section`: version 3 and the first page not complete is one of k0 .. n - 1."""
    from atstb.recovery_oracle import CP_MAGIC, KIND_CKPT, DieImage, _decode
    die0 = DieImage(images[0], geo)
    pages: list[list[int]] = []
    for pg in range(geo.ppb):
        raw = die0.row(blk, pg)
        dec = _decode(geo, raw) if raw is not None else None
        if dec is None or dec[0].kind != KIND_CKPT:
            break
        w = [int.from_bytes(dec[1][k:k + 4], "little") for k in range(0, geo.page_bytes, 4)]
        if w[0] != CP_MAGIC or w[2] != pg or (pages and w[1:4:2] != pages[0][1:4:2]):
            break
        pages.append(w)
    out = dict(version=None, n=None, done=len(pages), k0=None, in_section=False)
    if not pages:
        return out
    out["version"], out["n"] = pages[0][1], pages[0][3]
    s = [x for w in pages for x in w[CK_HDR_WORDS:]]
    try:
        ndie, blocks, n_map, n_bad = s[0], s[1], s[3], s[7]
        i = CK_FIXED
        for _ in range(ndie):
            i += 1 + s[i]
    except IndexError:
        return out
    i += n_bad + (ndie * blocks + 1) // 2 + 2 * n_map
    out["k0"] = i // (geo.page_bytes // 4 - CK_HDR_WORDS)
    out["in_section"] = out["version"] == 3 and out["k0"] <= out["done"] < out["n"]
    return out
