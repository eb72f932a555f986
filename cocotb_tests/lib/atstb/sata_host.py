# SPDX-License-Identifier: Apache-2.0
"""A SATA host (transport and command layers) in Python over `sata_link_model.HostLink`, written
from docs/host-interface.md §2 only (nothing here is derived from rtl/sata).

    host = SataHost(dut, rng, page_bytes)          # drives phy_rx_*, reads phy_tx_* every clock
    data = await host.identify()                   # 512 bytes, checksum checked
    st, err, data = await host.read_dma_ext(lba, n)
    st, err = await host.write_dma_ext(lba, data)
    st, err = await host.flush() / tx_abort(txid) / recover() / trim([(lba, n), ...])
    log = await host.read_log_ncq()                # 512 bytes (log 0x10)
    st, err, result = await host.feature(fid, value=None)   # SET FEATURES 0x56 (§2.2a): get / set
    v = await host.set_seal_time(cycles) / get_seal_time()  # FID 0xC0; SataCmdError unless OK
    c = host.submit_fpdma("read" | "write", tag, lba, n, data=None, txid=0, commit=False,
                          barrier=False, ordered=False, fua=False, prio=0)
    st, err, data = await c                        # data: the bytes read (reads), else None
    res, d2h = await host.send_fis(dwords, answer=True)   # raw FIS (malformed-FIS tests)

The link (HostLink) is stepped from one `every_edge` callback: each clock it takes the device's
dword (`phy_tx_data/charisk`) and drives the host's (`phy_rx_data/charisk`). The transport and
command logic runs in the same callback, on the frames the link has finished.

Protocol (§2.5) as the host runs it:
- Command FISes go one at a time: the next only after the previous one's answer (NCQ: the
  accept / error Register D2H; non-queued: its end). A Register H2D answered R_ERR (or not
  answered R_OK) is sent again.
- NCQ: DMA Setup (read: then the device's Data FIS; write: auto-activate, the host sends the
  Data FIS at once, ahead of any queued command FIS); Set Device Bits complete one or more tags.
- Non-queued: DMA Activate -> one Data FIS of min(8192, bytes left); READ DMA EXT data in address
  order; PIO Setup + 128-dword Data FIS for IDENTIFY / READ LOG EXT (no Register D2H on success).
- A command that ends ICRC|ABRT (Error 0x84) is retried by the host, up to `max_retries`
  (`retries` counts them).

Checks (every FIS the host takes with R_OK; a failure raises `SataProtocolError` at once, with the
cycle, the FIS and the link trace): FIS type known and its length; each field value §2.5 fixes
(D2H I bit / Status / Error pairs, its dwords 1-4 zero but a SET FEATURES 0x56's result in LBA
31:0 with status OK; DMA Setup flags, tag, zero dwords, offset and count inside the
command's transfer, count a non-zero multiple of 4 and at most 8,192; SDB I bit, status fields,
only outstanding tags whose data are all moved, an error SDB naming one tag; PIO Setup words;
DMA Activate dword); no Data FIS without its DMA Setup / PIO Setup / open READ DMA EXT; every
byte of a transfer moved exactly once before the tag completes OK; no FIS for a command not
issued; a frame from the device with a bad CRC; IDENTIFY's checksum (word 255).

Fault hooks: `corrupt(fis_type, n=1)`: the next n FISes of that type the host sends go out with a
bad CRC (the device answers R_ERR). `rerr(fis_type, n=1)`: the host answers R_ERR to the next n
good FISes of that type it receives (they are then ignored, as the SATA transport does).
`stats`: counters of what happened (out-of-order completions, multi-tag SDBs, offsets, retries...).
"""
from __future__ import annotations

import heapq
import random
import struct
from collections import deque

from cocotb.triggers import Event, First, RisingEdge

from .sata_link_model import HostLink, Scrambler, TxFrame
from .streams import every_edge

# FIS types
FIS_H2D, FIS_D2H, FIS_ACT, FIS_SETUP, FIS_DATA, FIS_SDB, FIS_PIO = 0x27, 0x34, 0x39, 0x41, 0x46, 0xA1, 0x5F
FIS_LEN = {FIS_D2H: 5, FIS_ACT: 1, FIS_SETUP: 7, FIS_SDB: 2, FIS_PIO: 5}
# ATA commands
ATA_DSM, ATA_READ_DMA_EXT, ATA_READ_LOG_EXT, ATA_WRITE_DMA_EXT = 0x06, 0x25, 0x2F, 0x35
ATA_READ_FPDMA, ATA_WRITE_FPDMA, ATA_FLUSH_EXT, ATA_IDENTIFY = 0x60, 0x61, 0xEA, 0xEC
ATA_SET_FEATURES = 0xEF
SF_FEATURE = 0x56               # SET FEATURES subcommand (vendor specific): the device's settings (§2.2a)
FID_SEAL_TIME = 0xC0            # its FID (Count 7:0): the S-Log's seal time in cycles (architecture.md §1.2)
# status / error
ST_OK, ST_ERR, ST_DF_ERR = 0x40, 0x41, 0x61
ER_ABRT, ER_IDNF, ER_UNC, ER_ICRC = 0x04, 0x10, 0x40, 0x80
MAX_XFER = 65536


_SCR_TABLE: list[int] = []


class FastScrambler(Scrambler):
    """The link scrambler's dword sequence from its reset state, from a table (the LFSR has 16 bits:
    the sequence repeats every 65,535 dwords); same output as Scrambler, for the CONT junk the
    host sends every idle cycle."""

    def __init__(self):
        if not _SCR_TABLE:
            s = Scrambler()
            _SCR_TABLE.extend(s.next() for _ in range(65535))
        self.i = 0

    def reset(self) -> None:
        self.i = 0

    def next(self) -> int:
        w = _SCR_TABLE[self.i]
        self.i = (self.i + 1) % 65535
        return w


def _reader(h):
    """A fast read of a (2-state, Verilator) signal as int; the public API otherwise."""
    g = getattr(getattr(h, "_handle", None), "get_signal_val_long", None)
    if g is not None:
        mask = (1 << len(h)) - 1                             # the VPI integer value is signed

        def rdf():
            return g() & mask
        return rdf

    def rd():
        try:
            return int(h.value)
        except ValueError:
            return 0
    return rd


def _writer(h):
    """A fast deposit of an int (through cocotb's write scheduling); the public API otherwise."""
    try:
        from cocotb.handle import _GPISetAction, _schedule_write
        f = h._handle.set_signal_val_int

        def wr(v):
            _schedule_write(h, f, _GPISetAction.DEPOSIT, v)
        return wr
    except (ImportError, AttributeError):
        def wr(v):
            h.value = v
        return wr


class SataProtocolError(AssertionError):
    pass


class SataCmdError(Exception):
    def __init__(self, status: int, error: int):
        super().__init__(f"command failed: status {status:#04x} error {error:#04x}")
        self.status, self.error = status, error


def h2d(command: int, features: int = 0, lba: int = 0, device: int = 0, count: int = 0, c: int = 1,
        icc: int = 0, control: int = 0, aux: int = 0, pm: int = 0) -> list[int]:
    """Register H2D FIS (5 dwords), ATA layout: byte 1 {C, PM port}, 2 command, 3 features 7:0,
    4-6 LBA 23:0, 7 device, 8-10 LBA 47:24, 11 features 15:8, 12-13 count, 14 ICC, 15 control."""
    return [FIS_H2D | ((c << 7 | pm) << 8) | (command << 16) | ((features & 0xFF) << 24),
            (lba & 0xFFFFFF) | (device << 24),
            ((lba >> 24) & 0xFFFFFF) | (((features >> 8) & 0xFF) << 24),
            (count & 0xFFFF) | (icc << 16) | (control << 24),
            aux]


def fpdma_fis(write: bool, tag: int, lba: int, n: int, txid: int = 0, commit: bool = False,
              barrier: bool = False, ordered: bool = False, fua: bool = False, prio: int = 0,
              rsvd: int = 0) -> list[int]:
    """READ / WRITE FPDMA QUEUED (§2.3): sector count in Features (0 = 65,536), Count = {PRIO 15:14,
    COMMIT 13, TXID 12:8, TAG 7:3, reserved 2:0 (`rsvd`)}, Device = {FUA 7, 1 6, ORDERED 1, BARRIER 0}."""
    count = (prio & 3) << 14 | int(commit) << 13 | (txid & 0x1F) << 8 | (tag & 0x1F) << 3 | (rsvd & 7)
    dev = int(fua) << 7 | 0x40 | int(ordered) << 1 | int(barrier)
    return h2d(ATA_WRITE_FPDMA if write else ATA_READ_FPDMA, features=n & 0xFFFF, lba=lba, device=dev, count=count)


class Cmd:
    """One host command, awaitable: resolves to (status, error, data)."""

    def __init__(self, host: "SataHost", kind: str, name: str, fis: list[int], tag: int | None = None,
                 nbytes: int = 0, direction: str | None = None, data: bytes | None = None,
                 force: bool = False, answer: bool = True, retry: bool = True):
        self.host, self.kind, self.name, self.fis = host, kind, name, fis
        self.tag, self.nbytes, self.dir, self.wdata = tag, nbytes, direction, data
        self.force, self.answer, self.retry = force, answer, retry
        self.result: tuple | None = None
        self.retries = 0
        self.link_results: list[str] = []
        self.d2h: list[int] | None = None
        self.feature = False                       # SET FEATURES 0x56: its D2H carries the result
        self.feature_result: int | None = None     # LBA 31:0 of its D2H with status OK
        self.issue_cycle = self.accept_cycle = self.done_cycle = None
        self.order = None
        self._done = Event()
        self._reset()

    def _reset(self) -> None:
        self.buf = bytearray(self.nbytes) if self.dir == "r" else None
        self.cov = bytearray(self.nbytes)          # bytes moved with R_OK
        self.pos = 0                               # non-queued: next byte of the transfer
        self.pio = False                           # PIO Setup seen, data FIS expected

    def _resolve(self, result: tuple) -> None:
        self.result = result
        self._done.set()

    @property
    def done(self) -> bool:
        return self.result is not None

    def moved(self) -> bool:
        return self.cov.count(1) == self.nbytes

    async def wait(self, limit: int = 400_000):
        h = self.host
        if self.result is None:
            # the timeout counted by the host's edge function (`_timeout`), not by ClockCycles, whose
            # task is resumed at every edge while the command runs
            await First(self._done.wait(), h._timeout(limit).wait())
        if self.result is not None:
            return self.result
        h.fail(f"timeout: {self.name} (tag {self.tag}) not done after {limit} cycles")

    def __await__(self):
        return self.wait().__await__()


class SataHost:
    """The host (module docstring)."""

    def __init__(self, dut, rng: random.Random, page_bytes: int, max_retries: int = 3,
                 rx_hold_p: float = 0.01, tx_hold_p: float = 0.002, use_cont: bool = True):
        self.dut, self.rng, self.page_bytes = dut, rng, page_bytes
        self.link = HostLink(rng, use_cont=use_cont)
        self.link.rx_hold_p = rx_hold_p
        self.link._junk = FastScrambler()
        self.tx_hold_p = tx_hold_p
        self.max_retries = max_retries
        self.cycle = 0
        self.issue_q: deque[Cmd] = deque()
        self.issuing: Cmd | None = None            # command FIS sent, its first answer not yet in
        self.ncq: dict[int, Cmd] = {}              # accepted NCQ commands by tag
        self.nq: Cmd | None = None                 # the running non-queued command
        self.rd_expect: tuple | None = None        # (cmd, offset, count) after a read DMA Setup
        self.wr_frames: dict[int, tuple] = {}      # id(TxFrame) -> (cmd, offset, count)
        self.frame_cmd: dict[int, Cmd] = {}        # id(TxFrame) of a command FIS -> cmd
        self.corrupts: dict[int, int] = {}
        self.escapes: dict[int, int] = {}
        self.rerrs: dict[int, int] = {}
        self._rx_seen = 0
        self._tx_seen = 0
        self._rerr_frame = -1                      # index in link.received of the frame we decided on
        self.seq = 0
        self.completed: list[Cmd] = []             # in completion order
        self.fis_log: deque = deque(maxlen=60)     # (cycle, dir, answer, first dwords)
        self.stats = dict(sdb=0, sdb_multi=0, ooo=0, setups=0, setup_nonzero=0, setup_backwards=0,
                          rd_fis=0, wr_fis=0, retries=0, h2d_resent=0, rerr_sent=0, crc_bad_sent=0,
                          dev_resent=0, collisions=0, act=0, pio=0, ncq_err=0)
        self._last_setup: dict[int, int] = {}
        self.running = True
        dut.phy_rx_data.value = 0
        dut.phy_rx_charisk.value = 0
        self._rd_d, self._rd_k = _reader(dut.phy_tx_data), _reader(dut.phy_tx_charisk)
        self._wr_d, self._wr_k = _writer(dut.phy_rx_data), _writer(dut.phy_rx_charisk)
        self._last_k = 0
        self._edges = 0                            # rising edges seen (also while not running)
        self._deadlines: list = []                 # heap of (edge, n, Event): Cmd.wait's timeouts
        every_edge(dut.clk, self._edge)

    # ------------------------------------------------------------------ failure
    def fail(self, msg: str):
        tr = "\n".join(map(str, list(self.link.trace)[-60:]))
        fl = "\n".join(map(str, self.fis_log))
        self.dut._log.error("SATA host: %s\nlast FISes (cycle, dir, answer, dwords):\n%s\nlink trace:\n%s",
                            msg, fl, tr)
        self.running = False
        raise SataProtocolError(f"SATA host, cycle {self.cycle}: {msg}")

    def check(self, cond: bool, msg: str) -> None:
        if not cond:
            self.fail(msg)

    # ------------------------------------------------------------------ fault hooks
    def corrupt(self, fis_type: int, n: int = 1) -> None:
        self.corrupts[fis_type] = self.corrupts.get(fis_type, 0) + n

    def escape(self, fis_type: int, n: int = 1) -> None:
        """The next n FISes of that type the host sends are cut short by SYNC (the host sends again)."""
        self.escapes[fis_type] = self.escapes.get(fis_type, 0) + n

    def rerr(self, fis_type: int, n: int = 1) -> None:
        self.rerrs[fis_type] = self.rerrs.get(fis_type, 0) + n

    # ------------------------------------------------------------------ API
    def _submit(self, cmd: Cmd) -> Cmd:
        self.issue_q.append(cmd)
        return cmd

    def submit_fpdma(self, op: str, tag: int, lba: int, n: int, data: bytes | None = None, txid: int = 0,
                     commit: bool = False, barrier: bool = False, ordered: bool = False, fua: bool = False,
                     prio: int = 0, rsvd: int = 0, force: bool = False) -> Cmd:
        """Queue an NCQ command; returns the awaitable Cmd. `n` sectors (the FIS count is n & 0xFFFF);
        `rsvd` (Count 2:0) and `force` (send even with the tag in use / a non-queued command
        running) are for error tests."""
        write = op == "write"
        nbytes = n * self.page_bytes if 0 < n and n * self.page_bytes <= MAX_XFER else 0
        if write and data is None:
            data = bytes(nbytes)
        if write:
            assert len(data) == nbytes or force, (len(data), nbytes)
        assert force or tag not in self.ncq and all(c.tag != tag for c in self.issue_q if c.kind == "ncq"), \
            f"tag {tag} in use"
        fis = fpdma_fis(write, tag, lba, n, txid, commit, barrier, ordered, fua, prio, rsvd)
        c = Cmd(self, "ncq", f"{op.upper()} FPDMA tag {tag} lba {lba} n {n}", fis, tag=tag, nbytes=nbytes,
                direction="w" if write else "r", data=data, force=force)
        c.lba, c.n = lba, n
        return self._submit(c)

    def _nq(self, name: str, fis: list[int], nbytes: int = 0, direction: str | None = None,
            data: bytes | None = None, force: bool = False) -> Cmd:
        return self._submit(Cmd(self, "nq", name, fis, tag=None, nbytes=nbytes, direction=direction,
                                data=data, force=force))

    async def identify(self, check: bool = True):
        c = self._nq("IDENTIFY", h2d(ATA_IDENTIFY), 512, "r")
        c.pio_cmd = True
        st, err, data = await c
        if not check:
            return st, err, data
        if st != 0x50:
            raise SataCmdError(st, err)
        self.check(sum(data) % 256 == 0 and data[510] == 0xA5,
                   f"IDENTIFY checksum: word 255 = {data[510] | data[511] << 8:#06x}, sum {sum(data) % 256}")
        return data

    async def read_log_ncq(self, check: bool = True, lba: int = 0x10, count: int = 1):
        c = self._nq("READ LOG EXT", h2d(ATA_READ_LOG_EXT, lba=lba, count=count, device=0x40), 512, "r")
        c.pio_cmd = True
        st, err, data = await c
        if not check:
            return st, err, data
        if st != 0x50:
            raise SataCmdError(st, err)
        self.check(sum(data) % 256 == 0, f"NCQ error log checksum: sum {sum(data) % 256}")
        return data

    def feature_cmd(self, fid: int, value: int | None = None, set_: bool | None = None, features: int = SF_FEATURE,
                    lba_hi: int = 0, count_hi: int = 0, device: int = 0, icc: int = 0, control: int = 0,
                    aux: int = 0, force: bool = False) -> Cmd:
        """SET FEATURES (0xEF) with subcommand `features` (Features 15:0; §2.2a: 0x56, the device's
        settings): Count 7:0 = `fid`, LBA 15:0 = `value` (0 when None), LBA 16 = `set_` (default: a
        set when `value` is given, else a get). Must-be-0 fields for error tests: `lba_hi` (LBA
        47:17), `count_hi` (Count 15:8), Features 15:8; `device`, `icc`, `control`, `aux` (dword 4)
        are ignored by the device. The result: `Cmd.feature_result`."""
        assert 0 <= fid <= 0xFF and (value is None or 0 <= value <= 0xFFFF), (fid, value)
        set_ = value is not None if set_ is None else set_
        lba = (lba_hi << 17) | (int(set_) << 16) | (value or 0)
        fis = h2d(ATA_SET_FEATURES, features=features, lba=lba, device=device, count=count_hi << 8 | fid,
                  icc=icc, control=control, aux=aux)
        what = f"set {value or 0:#x}" if set_ else "get"
        c = self._nq(f"SET FEATURES {features:#x} fid {fid:#x} {what}", fis, force=force)
        c.feature = True
        return c

    async def feature(self, fid: int, value: int | None = None, **kw) -> tuple[int, int, int | None]:
        """A get (value None) or set of the device setting `fid`: (status, error, result), result =
        the Register D2H's LBA 31:0 (the value after the command) with status OK, else None."""
        c = self.feature_cmd(fid, value, **kw)
        st, err, _ = await c
        return st, err, c.feature_result

    async def set_seal_time(self, cycles: int) -> int:
        """SET FEATURES 0x56, FID 0xC0: the S-Log's seal time (0 … 65,535 cycles); returns the value
        now in effect. SataCmdError (ERR ABRT) on a build that does not pack records."""
        if not 0 <= cycles <= 0xFFFF:
            raise ValueError(f"seal time {cycles}: 0 … 65,535 cycles (the command's 16-bit value field)")
        st, err, res = await self.feature(FID_SEAL_TIME, cycles)
        if st != ST_OK:
            raise SataCmdError(st, err)
        return res

    async def get_seal_time(self) -> int:
        """SET FEATURES 0x56, FID 0xC0, get: the S-Log's seal time in cycles."""
        st, err, res = await self.feature(FID_SEAL_TIME)
        if st != ST_OK:
            raise SataCmdError(st, err)
        return res

    def read_dma_ext_cmd(self, lba: int, n: int, force: bool = False) -> Cmd:
        nb = (n or 65536) * self.page_bytes
        return self._nq(f"READ DMA EXT lba {lba} n {n}", h2d(ATA_READ_DMA_EXT, lba=lba, count=n, device=0x40),
                        nb if nb <= MAX_XFER else 0, "r", force=force)

    async def read_dma_ext(self, lba: int, n: int):
        return await self.read_dma_ext_cmd(lba, n)

    def write_dma_ext_cmd(self, lba: int, data: bytes, n: int | None = None, force: bool = False) -> Cmd:
        n = len(data) // self.page_bytes if n is None else n
        return self._nq(f"WRITE DMA EXT lba {lba} n {n}", h2d(ATA_WRITE_DMA_EXT, lba=lba, count=n, device=0x40),
                        len(data), "w", data=data, force=force)

    async def write_dma_ext(self, lba: int, data: bytes):
        st, err, _ = await self.write_dma_ext_cmd(lba, data)
        return st, err

    def flush_cmd(self, tagfield: int = 0, txid: int = 0, rsvd: int = 0, prio: int = 0, force: bool = False) -> Cmd:
        count = (prio & 3) << 14 | (txid & 0x1F) << 8 | (tagfield & 0x1F) << 3 | (rsvd & 7)
        return self._nq(f"FLUSH CACHE EXT tf {tagfield} txid {txid}", h2d(ATA_FLUSH_EXT, count=count, device=0x40),
                        force=force)

    async def flush(self, ext: bool = True):
        """FLUSH CACHE EXT (0xEA), or FLUSH CACHE (0xE7) with ext=False."""
        if ext:
            st, err, _ = await self.flush_cmd(0)
        else:
            st, err, _ = await self._nq("FLUSH CACHE", h2d(0xE7, device=0x40))
        return st, err

    async def tx_abort(self, txid: int):
        st, err, _ = await self.flush_cmd(1, txid)
        return st, err

    async def recover(self):
        st, err, _ = await self.flush_cmd(2)
        return st, err

    def trim_cmd(self, ranges, blocks: int = 1, features: int = 1) -> Cmd:
        ent = b"".join(struct.pack("<Q", (lba & ((1 << 48) - 1)) | (n & 0xFFFF) << 48) for lba, n in ranges)
        assert len(ent) <= 512 * blocks
        data = ent.ljust(512 * blocks, b"\0")
        return self._nq(f"DSM TRIM {list(ranges)[:4]}", h2d(ATA_DSM, features=features, count=blocks, device=0x40),
                        len(data), "w", data=data)

    async def trim(self, ranges):
        st, err, _ = await self.trim_cmd(ranges)
        return st, err

    def raw_cmd(self, fis: list[int], answer: bool = True, name: str = "raw FIS") -> Cmd:
        """A raw FIS sent once (no retry); `answer`: a Register D2H is expected for it."""
        return self._submit(Cmd(self, "raw", name, list(fis), answer=answer, force=True, retry=False))

    async def send_fis(self, dwords: list[int], answer: bool = True, limit: int = 200_000):
        """Send a raw FIS. Returns (link result, D2H dwords or None)."""
        c = self.raw_cmd(dwords, answer)
        await c.wait(limit)
        return c.link_results[-1], c.d2h

    async def idle(self, limit: int = 2_000_000) -> None:
        """Until every command is done and the link is idle."""
        for _ in range(limit):
            if (not self.issue_q and self.issuing is None and not self.ncq and self.nq is None
                    and self.link.idle and not self.wr_frames and self.rd_expect is None):
                return
            await RisingEdge(self.dut.clk)
        self.fail(f"not idle after {limit} cycles: ncq {sorted(self.ncq)}, nq {self.nq and self.nq.name}")

    # ------------------------------------------------------------------ per clock
    def _timeout(self, n: int) -> Event:
        """An Event set at the n-th rising edge from now (as ClockCycles(clk, n) would end there)."""
        ev = Event()
        heapq.heappush(self._deadlines, (self._edges + max(int(n), 1), id(ev), ev))
        return ev

    def _edge(self) -> None:
        self._edges += 1
        dl = self._deadlines
        while dl and dl[0][0] <= self._edges:
            heapq.heappop(dl)[2].set()
        if not self.running:
            return
        self.cycle += 1
        link = self.link
        if self.rerrs:
            self._maybe_rerr()
        od, ok = link.step(self._rd_d(), self._rd_k())
        self._wr_d(od)
        if ok != self._last_k:
            self._wr_k(ok)
            self._last_k = ok
        if len(link.sent) != self._tx_seen:
            for fr in link.sent[self._tx_seen:]:
                self._tx_result(fr)
            self._tx_seen = len(link.sent)
        if len(link.received) != self._rx_seen:
            for fr in link.received[self._rx_seen:]:
                self._rx_frame(fr)
            self._rx_seen = len(link.received)
        self._issue()

    def _maybe_rerr(self) -> None:
        """Decide R_ERR for the frame being received once its first dword is in (before its EOF)."""
        link = self.link
        if not self.rerrs or link.state != "RX_DATA" or not link._rx_words:
            return
        idx = len(link.received)
        if self._rerr_frame == idx:
            return
        self._rerr_frame = idx
        t = (link._rx_words[0] ^ Scrambler().next()) & 0xFF
        if self.rerrs.get(t, 0) > 0:
            self.rerrs[t] -= 1
            if not self.rerrs[t]:
                del self.rerrs[t]
            link.rx_force_err = True
            self.stats["rerr_sent"] += 1

    # ------------------------------------------------------------------ sending
    def _send(self, fis: list[int], front: bool = False) -> TxFrame:
        fr = TxFrame(list(fis))
        t = fis[0] & 0xFF
        if self.corrupts.get(t, 0) > 0:
            self.corrupts[t] -= 1
            if not self.corrupts[t]:
                del self.corrupts[t]
            fr.flip = (len(fis), 1 << self.rng.randrange(32))
            self.stats["crc_bad_sent"] += 1
        elif self.escapes.get(t, 0) > 0:
            self.escapes[t] -= 1
            if not self.escapes[t]:
                del self.escapes[t]
            fr.sync_at = self.rng.randrange(1, len(fis) + 1)
            self.stats["escaped"] = self.stats.get("escaped", 0) + 1
        if self.tx_hold_p and self.rng.random() < 0.3:
            for i in range(len(fis) + 1):
                if self.rng.random() < self.tx_hold_p * 10:
                    fr.hold_at[i] = self.rng.randint(1, 6)
        if front:
            self.link.txq.appendleft(fr)
        else:
            self.link.txq.append(fr)
        self.fis_log.append((self.cycle, "tx", "", [f"{x:08x}" for x in fis[:7]]))
        return fr

    def _issue(self) -> None:
        if self.issuing is not None or not self.issue_q or self.link.txq or self.wr_frames:
            return
        c = self.issue_q[0]
        if not c.force:
            if c.kind == "ncq" and (self.nq is not None or c.tag in self.ncq):
                return
            if c.kind == "nq" and (self.nq is not None or self.ncq):
                return
        self.issue_q.popleft()
        self.issuing = c
        c.issue_cycle = self.cycle
        fr = self._send(c.fis)
        self.frame_cmd[id(fr)] = c

    def _tx_result(self, fr: TxFrame) -> None:
        self.fis_log.append((self.cycle, "tx-res", fr.result, [f"{fr.fis[0]:08x}"]))
        c = self.frame_cmd.pop(id(fr), None)
        if c is not None:                                    # a command FIS
            c.link_results.append(fr.result)
            if c.kind == "raw":
                if not c.answer:
                    self.issuing = None
                    c._resolve((None, None, None))
                elif fr.result != "R_OK":
                    self.issuing = None
                    c._resolve((None, None, None))
                return
            if fr.result != "R_OK":                          # dropped by the device: send it again
                self.stats["h2d_resent"] += 1
                self.check(len(c.link_results) < 20, f"{c.name}: command FIS not taken 20 times")
                nf = self._send(c.fis, front=True)
                self.frame_cmd[id(nf)] = c
                return
            if c.kind == "nq" and self.nq is None and not (c.force and self.ncq):
                self.issuing = None                          # its answers are the command's own FISes
                self.nq = c
            return
        w = self.wr_frames.pop(id(fr), None)
        if w is None:
            return
        c, off, cnt = w
        if fr.result == "R_OK":
            self.check(c.cov.count(1, off, off + cnt) == 0, f"{c.name}: data {off}+{cnt} delivered twice")
            c.cov[off:off + cnt] = b"\x01" * cnt
            if c.kind == "nq":
                c.pos = off + cnt
        # else: NCQ: the device sends the DMA Setup again; non-queued: the command ends ICRC|ABRT

    # ------------------------------------------------------------------ receiving
    def _rx_frame(self, fr) -> None:
        fis = fr.fis
        self.fis_log.append((self.cycle, "rx", fr.answer, [f"{x:08x}" for x in fis[:7]]))
        if fr.answer == "R_ERR" and fr.crc_ok:               # forced R_ERR: ignored, the device re-sends
            if fis and fis[0] & 0xFF == FIS_DATA:
                self.rd_expect = None                        # an NCQ read: DMA Setup + Data come again
            return
        if fr.answer != "R_OK":
            self.fail(f"device frame not good: answer {fr.answer}, CRC ok {fr.crc_ok}, {len(fis)} dwords")
        self.check(len(fis) >= 1, "empty FIS from the device")
        t = fis[0] & 0xFF
        if t == FIS_DATA:
            self._rx_data(fis)
            return
        self.check(t in FIS_LEN, f"FIS type {t:#04x} the device must not send: {fis[:4]}")
        self.check(len(fis) == FIS_LEN[t], f"FIS {t:#04x}: {len(fis)} dwords, expected {FIS_LEN[t]}")
        if self.rd_expect is not None:
            self.fail(f"FIS {t:#04x} between a read DMA Setup {self.rd_expect[1:]} and its Data FIS")
        {FIS_D2H: self._rx_d2h, FIS_ACT: self._rx_act, FIS_SETUP: self._rx_setup, FIS_SDB: self._rx_sdb,
         FIS_PIO: self._rx_pio}[t](fis)

    def _finish(self, c: Cmd, st: int, err: int, data) -> None:
        """A command ended: retry on ICRC|ABRT, else resolve it."""
        c.done_cycle = self.cycle
        if err == (ER_ICRC | ER_ABRT) and c.retry and c.retries < self.max_retries:
            c.retries += 1
            self.stats["retries"] += 1
            c._reset()
            self.issue_q.appendleft(c)
            return
        c._resolve((st, err, data))
        c.order = self.seq
        self.seq += 1
        self.completed.append(c)

    def _rx_d2h(self, fis) -> None:
        d0 = fis[0]
        i_bit = (d0 >> 14) & 1
        st, err = (d0 >> 16) & 0xFF, d0 >> 24
        self.check(d0 & 0xBF00 == 0, f"D2H dword 0 {d0:#010x}: reserved / PM bits set")
        self.check((st, err) in ((ST_OK, 0), (ST_ERR, ER_ABRT), (ST_ERR, ER_IDNF), (ST_ERR, ER_UNC),
                                 (ST_DF_ERR, ER_ABRT), (ST_ERR, ER_ICRC | ER_ABRT)),
                   f"D2H status {st:#04x} error {err:#04x} is not a §2.5 pair")
        c = self.issuing
        if c is not None and (c.kind in ("ncq", "raw") or (c.kind == "nq" and c is not self.nq)):
            self.issuing = None
            c.d2h = list(fis)
            self.check(list(fis[1:]) == [0, 0, 0, 0], f"{c.name}: D2H dwords 1-4 not zero: {[hex(x) for x in fis]}")
            if c.kind == "raw":
                c._resolve((st, err, None))
                return
            if st == ST_OK:
                self.check(c.kind == "ncq", f"{c.name}: accepted with a D2H before it started")
                self.check(i_bit == 0, f"{c.name}: accept D2H with I = 1")
                self.check(c.tag not in self.ncq, f"{c.name}: accepted while tag {c.tag} is outstanding")
                self.ncq[c.tag] = c
                c.accept_cycle = self.cycle
                return
            self.check((st, err) == (ST_ERR, ER_ABRT) and i_bit == 1,
                       f"{c.name}: refused with status {st:#04x} error {err:#04x} I {i_bit} (§2.5: 0x41 / 0x04, I = 1)")
            self._finish(c, st, err, None)
            return
        c = self.nq
        self.check(c is not None, f"D2H {d0:#010x} with no command waiting for one")
        self.check(i_bit == 1, f"{c.name}: ending D2H with I = 0")
        self.check(not c.pio or st != ST_OK, f"{c.name}: D2H OK after PIO Setup (E_Status ends it)")
        if st == ST_OK:
            self.check(c.moved(), f"{c.name}: ended OK with {c.cov.count(1)} of {c.nbytes} bytes moved")
            self.check(not getattr(c, "pio_cmd", False), f"{c.name}: PIO command ended by D2H OK")
        if c.feature and st == ST_OK:                      # §2.2a: LBA 31:0 = the result, the rest 0
            self.check(fis[1] >> 24 == 0 and fis[2] >> 8 == 0 and fis[3] == 0 and fis[4] == 0,
                       f"{c.name}: D2H {[hex(x) for x in fis]}: only LBA 31:0 may be non-zero")
            c.feature_result = (fis[1] & 0xFFFFFF) | (fis[2] & 0xFF) << 24
        else:
            self.check(list(fis[1:]) == [0, 0, 0, 0], f"{c.name}: D2H dwords 1-4 not zero: {[hex(x) for x in fis]}")
        self.nq = None
        c.d2h = list(fis)
        self._finish(c, st, err, bytes(c.buf) if c.buf is not None else None)

    def _rx_act(self, fis) -> None:
        self.stats["act"] += 1
        self.check(fis[0] == FIS_ACT, f"DMA Activate dword 0 {fis[0]:#010x}")
        c = self.nq
        self.check(c is not None and c.dir == "w", f"DMA Activate with no non-queued write running "
                                                   f"({c.name if c else None})")
        self.check(not self.wr_frames, f"{c.name}: DMA Activate while a Data FIS is in flight")
        left = c.nbytes - c.pos
        self.check(left > 0, f"{c.name}: DMA Activate with all {c.nbytes} bytes sent")
        cnt = min(8192, left)
        fr = self._send([FIS_DATA] + list(struct.unpack(f"<{cnt // 4}I", c.wdata[c.pos:c.pos + cnt])), front=True)
        self.wr_frames[id(fr)] = (c, c.pos, cnt)
        self.stats["wr_fis"] += 1

    def _rx_setup(self, fis) -> None:
        self.stats["setups"] += 1
        d0 = fis[0]
        dbit, ibit, abit = (d0 >> 13) & 1, (d0 >> 14) & 1, (d0 >> 15) & 1
        self.check(d0 & 0xFFFF1F00 == 0 and ibit == 0, f"DMA Setup dword 0 {d0:#010x}: reserved bits or I set")
        tag, off, cnt = fis[1], fis[4], fis[5]
        self.check(fis[2] == 0 and fis[3] == 0 and fis[6] == 0, f"DMA Setup reserved dwords not 0: {fis}")
        self.check(tag < 32 and tag in self.ncq, f"DMA Setup for tag {tag:#x}, not outstanding ({sorted(self.ncq)})")
        c = self.ncq[tag]
        self.check(dbit == int(c.dir == "r"), f"{c.name}: DMA Setup D = {dbit}")
        self.check(abit == int(c.dir == "w"), f"{c.name}: DMA Setup A = {abit} (auto-activate on writes only)")
        self.check(cnt > 0 and cnt % 4 == 0 and cnt <= 8192 and off % 4 == 0,
                   f"{c.name}: DMA Setup offset {off} count {cnt}")
        self.check(off + cnt <= c.nbytes, f"{c.name}: DMA Setup {off}+{cnt} beyond the transfer of {c.nbytes}")
        self.check(not self.wr_frames, f"{c.name}: DMA Setup while a write Data FIS is in flight")
        if off:
            self.stats["setup_nonzero"] += 1
        if off < self._last_setup.get(tag, -1):
            self.stats["setup_backwards"] += 1
        self._last_setup[tag] = off
        if c.dir == "r":
            self.rd_expect = (c, off, cnt)
        else:
            fr = self._send([FIS_DATA] + list(struct.unpack(f"<{cnt // 4}I", c.wdata[off:off + cnt])), front=True)
            self.wr_frames[id(fr)] = (c, off, cnt)
            self.stats["wr_fis"] += 1

    def _rx_data(self, fis) -> None:
        self.check(fis[0] == FIS_DATA, f"Data FIS dword 0 {fis[0]:#010x}")
        payload = struct.pack(f"<{len(fis) - 1}I", *fis[1:])
        n = len(payload)
        self.stats["rd_fis"] += 1
        if self.rd_expect is not None:
            c, off, cnt = self.rd_expect
            self.rd_expect = None
            self.check(n == cnt, f"{c.name}: Data FIS of {n} bytes after a DMA Setup of {cnt}")
            self.check(c.tag in self.ncq, f"{c.name}: data after the tag completed")
            self.check(c.cov.count(1, off, off + cnt) == 0, f"{c.name}: read data {off}+{cnt} delivered twice")
            c.buf[off:off + cnt] = payload
            c.cov[off:off + cnt] = b"\x01" * cnt
            return
        c = self.nq
        if c is None and self.issuing is not None and self.issuing.kind == "nq":
            c = None                                      # data before the FIS was acknowledged: impossible
        self.check(c is not None and c.dir == "r", f"Data FIS of {n} bytes with no transfer open "
                                                  f"(no DMA Setup, no PIO Setup, no read running)")
        if getattr(c, "pio_cmd", False):
            self.check(c.pio, f"{c.name}: Data FIS before PIO Setup")
            self.check(n == 512, f"{c.name}: PIO Data FIS of {n} bytes (512 expected)")
            c.buf[:] = payload
            c.cov[:] = b"\x01" * 512
            self.nq = None
            self._finish(c, 0x50, 0, bytes(c.buf))
            return
        self.check(0 < n <= 4096 and n % 4 == 0, f"{c.name}: READ DMA EXT Data FIS of {n} bytes")
        self.check(c.pos + n <= c.nbytes, f"{c.name}: {c.pos + n} bytes sent, the transfer is {c.nbytes}")
        c.buf[c.pos:c.pos + n] = payload
        c.cov[c.pos:c.pos + n] = b"\x01" * n
        c.pos += n

    def _rx_pio(self, fis) -> None:
        self.stats["pio"] += 1
        c = self.nq
        self.check(c is not None and getattr(c, "pio_cmd", False), "PIO Setup with no IDENTIFY / READ LOG running")
        exp = [FIS_PIO | 1 << 13 | 1 << 14 | 0x58 << 16, 0, 0, 0x50 << 24, 512]
        self.check(list(fis) == exp, f"{c.name}: PIO Setup {[hex(x) for x in fis]}, expected {[hex(x) for x in exp]}")
        self.check(not c.pio, f"{c.name}: second PIO Setup")
        c.pio = True

    def _rx_sdb(self, fis) -> None:
        self.stats["sdb"] += 1
        d0, sact = fis
        st = ((d0 >> 20) & 7) << 4 | ((d0 >> 16) & 7)
        err = d0 >> 24
        self.check(d0 & 0xFF00 == 0x4000 and d0 & 0x00880000 == 0,
                   f"SDB dword 0 {d0:#010x}: I must be 1, N and reserved bits 0")
        tags = [t for t in range(32) if sact >> t & 1]
        self.check(tags, "SDB with no SActive bit")
        for t in tags:
            self.check(t in self.ncq, f"SDB completes tag {t}, not outstanding ({sorted(self.ncq)})")
        if st == ST_OK:
            self.check(err == 0, f"SDB status 0x40 with error {err:#04x}")
        else:
            self.check(len(tags) == 1 and st in (ST_ERR, ST_DF_ERR) and err,
                       f"error SDB status {st:#04x} error {err:#04x} tags {tags} (one tag, 0x41 / 0x61)")
            self.stats["ncq_err"] += 1
        if len(tags) > 1:
            self.stats["sdb_multi"] += 1
        for t in tags:
            c = self.ncq.pop(t)
            if st == ST_OK:
                self.check(c.moved(), f"{c.name}: completed OK with {c.cov.count(1)} of {c.nbytes} bytes moved")
            older = [o for o in self.ncq.values() if o.accept_cycle < c.accept_cycle]
            if older:
                self.stats["ooo"] += 1
            self._last_setup.pop(t, None)
            self._finish(c, st, err, bytes(c.buf) if (c.buf is not None and st == ST_OK) else None)
