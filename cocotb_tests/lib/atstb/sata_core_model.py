# SPDX-License-Identifier: Apache-2.0
"""The device core and the firmware behind the SATA front end `ats_sata` (docs/host-interface.md
§2.6, docs/architecture.md §1, §2, §9), for cocotb tests.

    core = SataCoreModel(dut, rng, page_bytes, num_lbas, num_tx=31)

Ports served (names as ats_sata's, all with random idle / backpressure from `rng`):
  `m_cmd_*`  (StreamSink)   §1 descriptors {op, tag, lba, nlb, txid, flags, attr, prio, dptr, aux}
  `s_cpl_*`  (StreamSource) §2 completions {tag, status, result}
  `s_hrd_*`  (StreamSource) window read requests {addr, len}, answered on
  `m_hrd_*`  (StreamSink)   {data, last}: len/4 words, `last` on the final one (checked)
  `s_hwr_*`  (StreamSource) window write bursts {addr, data, last}

Behaviour (the real core's rules, common to every SATA test):
- Every descriptor is executed by `nvme_ref.CoreStub` (committed pages, one page dict per open
  txid, the command queue's validation: BAD_LBA, BAD_TXID, BAD_FIELD, ...) after a random delay
  (`delay=(lo, hi)` cycles; a fraction `slow_p` of the commands takes `slow=(lo, hi)`), so that
  completions of different tags come in any order.
- A WRITE's data is read one page per request, `dptr + i*page_bytes`, len `page_bytes`, pages in
  increasing address order. Requests of different commands may interleave (`hrd_interleave`,
  default True; False: one command's reads at a time). Data comes back in request order.
- A READ's data is written one `s_hwr` burst per page (addr `dptr + i*page_bytes`,
  page_bytes/4 words), the pages of one READ in random order; its completion is sent only after
  its last beat was taken.
- IDENTIFY (op 9) is the firmware's: 128 words (the 16 words `fw_words` then zeros) as one burst
  at `dptr`, then completion status 0, result 64. `fw_words`: random, except word 0 = 0x41545344,
  word 6 = page_bytes, word 8 = num_lbas. GET_LOG (op 10): 128 words of `fw_log`, result 224.
  FEATURE (op 11) is the firmware's too: `fw_features` (`nvme_ref.FwFeatures`, SEAL_TIME 0xC0 from
  `seal_time`, or no feature with `seal=False`) answers (status, result); nothing moves.
- `tag` must not be in the core already (asserted); window addresses are tag*2^17 + offset and the
  model asserts that each descriptor's `dptr` lies in its tag's window with its data inside the
  64 KiB a command may move (§2.5), unless `check_dptr=False`. The test checks exact values.

Knobs and records (the API other tests rely on; keep it stable):
- `inject(tag, status, result=0, op=None, data=True, count=1)`: the next `count` descriptors
  with this tag (and this op, when given) complete with `status` / `result` instead of the stub's
  answer. `data=True`: a READ still writes its pages (as a media error found after the transfer
  could); `data=False`: no data moves and the stub is not run (a WRITE changes nothing; a FEATURE
  is not given to `fw_features`).
- `held`: while > 0, completions wait (e.g. to fill all 32 tags); `hold()` / `release()`.
- `descs`: every descriptor seen, in arrival order: dict of the fields plus `_cycle` (clock edge
  it was taken), and once completed `_st`, `_res`, `_done` (cycle the completion was queued).
- `completions`: (tag, status, result) in the order they were sent; `in_core`: tag -> descriptor.
- `stub`: the CoreStub (its `pages` dict is the committed medium; `tx` the open transactions).
- `wait_idle(limit)`: until no descriptor is in the core and every stream is drained.
- `errors`: protocol violations seen by the model (it also raises at once).
- `set_pauses(kind)`: False / True / "heavy" for every stream at once.
"""
from __future__ import annotations

import random
import struct
from collections import deque

import cocotb
from cocotb.triggers import ClockCycles, Event, RisingEdge

from . import nvme_ref as R
from .streams import StreamSink, StreamSource, every_edge, pause_gen

WIN_SHIFT = 17
IDENTIFY_MAGIC = 0x41545344
OP_IDENTIFY, OP_GET_LOG, OP_FEATURE = 9, 10, 11
CMD_FIELDS = ["op", "tag", "lba", "nlb", "txid", "flags", "attr", "prio", "dptr", "aux"]


class _NeedRead(Exception):
    def __init__(self, addr: int, n: int):
        super().__init__(f"{addr:#x}+{n}")
        self.addr, self.n = addr, n


class _ReadReq:
    __slots__ = ("addr", "n", "words", "done")

    def __init__(self, addr: int, n: int):
        self.addr, self.n, self.words, self.done = addr, n, [], Event()


class SataCoreModel:
    """The core side of ats_sata (module docstring)."""

    def __init__(self, dut, rng: random.Random, page_bytes: int, num_lbas: int, num_tx: int = 31,
                 tx_entries: int = 64, delay: tuple[int, int] = (1, 80), slow: tuple[int, int] = (300, 2500),
                 slow_p: float = 0.15, pauses=True, hrd_interleave: bool = True, check_dptr: bool = True,
                 seal_time: int = 0, seal: bool = True):
        self.dut, self.rng = dut, rng
        self.page_bytes, self.num_lbas, self.num_tx = page_bytes, num_lbas, num_tx
        self.delay, self.slow, self.slow_p = delay, slow, slow_p
        self.hrd_interleave = hrd_interleave
        self.check_dptr = check_dptr
        self.stub = R.CoreStub(num_lbas, page_bytes, num_tx=num_tx, tx_entries=tx_entries)
        clk = dut.clk
        self.cmd = StreamSink(dut, "m_cmd", clk, CMD_FIELDS)
        self.cpl = StreamSource(dut, "s_cpl", clk, ["tag", "status", "result"])
        self.hrd = StreamSource(dut, "s_hrd", clk, ["addr", "len"])
        self.hrd_data = StreamSink(dut, "m_hrd", clk, ["data", "last"])
        self.hwr = StreamSource(dut, "s_hwr", clk, ["addr", "data", "last"])
        self.set_pauses(pauses)
        w = [rng.getrandbits(32) for _ in range(16)]
        w[0], w[6], w[8] = IDENTIFY_MAGIC, page_bytes, num_lbas
        self.fw_words = w
        self.fw_log = rng.randbytes(512)
        self.fw_features = R.FwFeatures(seal_time, seal)
        self._held = 0
        self._unheld = Event()
        self._unheld.set()
        self.in_core: dict[int, dict] = {}
        self.descs: list[dict] = []
        self.completions: list[tuple[int, int, int]] = []
        self.errors: list[str] = []
        self.injections: list[dict] = []
        self.cycle = 0
        self._rd_pending: deque[_ReadReq] = deque()
        self._rd_free = Event()                     # one command's reads at a time (hrd_interleave False)
        self._rd_free.set()
        self.hwr.on_accept = self._hwr_accepted
        every_edge(clk, self._edge)
        cocotb.start_soon(self._run())

    # ------------------------------------------------------------------ knobs
    def set_pauses(self, kind) -> None:
        r = self.rng
        self.cmd.set_pause(pause_gen(r, "heavy" if kind else False, max_stall=20) if kind else None)
        for s in (self.cpl, self.hrd, self.hrd_data, self.hwr):
            s.set_pause(pause_gen(r, kind, 0.3, 20))

    def inject(self, tag: int, status: int, result: int = 0, op: int | None = None, data: bool = True,
               count: int = 1) -> None:
        self.injections.append(dict(tag=tag, status=status, result=result, op=op, data=data, count=count))

    @property
    def held(self) -> int:
        return self._held

    @held.setter
    def held(self, v: int) -> None:
        self._held = max(0, v)
        if self._held:
            self._unheld.clear()
        else:
            self._unheld.set()

    def hold(self) -> None:
        self.held = self._held + 1

    def release(self) -> None:
        self.held = self._held - 1

    async def wait_idle(self, limit: int = 1_000_000) -> None:
        for _ in range(limit):
            if (not self.in_core and not self.cmd.queue and not self.cpl.queue and not self.hwr.queue
                    and not self.hrd.queue and not self._rd_pending):
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"core model not idle after {limit} cycles: in core {sorted(self.in_core)}")

    def _fail(self, msg: str) -> None:
        self.errors.append(msg)
        raise AssertionError(f"core model (cycle {self.cycle}): {msg}")

    # ------------------------------------------------------------------ edge logic
    def _edge(self) -> None:
        self.cycle += 1
        q = self.hrd_data.queue
        while q:
            b = q.popleft()
            if not self._rd_pending:
                self._fail(f"m_hrd beat {b['data']:#010x} with no window read outstanding")
            r = self._rd_pending[0]
            r.words.append(b["data"])
            last = len(r.words) == r.n // 4
            if b["last"] != int(last):
                self._fail(f"window read {r.addr:#x}+{r.n}: last = {b['last']} on word {len(r.words) - 1} "
                           f"of {r.n // 4}")
            if last:
                r.done.set()
                self._rd_pending.popleft()

    def _hwr_accepted(self, item: dict, cycle: int) -> None:
        ev = item.get("_ev")
        if ev is not None:
            ev.set()

    async def _run(self) -> None:
        while True:
            while not self.cmd.queue:
                self.cmd.event.clear()
                await self.cmd.event.wait()
            f = self.cmd.queue.popleft()
            tag = f["tag"]
            if tag in self.in_core:
                self._fail(f"descriptor with tag {tag} while tag {tag} is in the core: {f} / {self.in_core[tag]}")
            if self.check_dptr and f["op"] in (R.OP_READ, R.OP_WRITE, OP_IDENTIFY, OP_GET_LOG):
                off = f["dptr"] - (tag << WIN_SHIFT)
                n = 512 if f["op"] >= OP_IDENTIFY else (f["nlb"] + 1) * self.page_bytes
                if not (0 <= off and off + n <= 65536 and off % 4 == 0):
                    self._fail(f"descriptor dptr {f['dptr']:#x} + {n} bytes is not inside tag {tag}'s window: {f}")
            self.in_core[tag] = f
            self.descs.append(f)
            cocotb.start_soon(self._exec(f))

    # ------------------------------------------------------------------ host memory (window)
    async def host_read(self, addr: int, n: int) -> bytes:
        """Window read of n bytes (a multiple of the page): one request per page, in increasing order."""
        pb = self.page_bytes
        assert n % pb == 0 and addr % 4 == 0, (addr, n)
        if not self.hrd_interleave:
            while not self._rd_free.is_set():
                await self._rd_free.wait()
            self._rd_free.clear()
        reqs = []
        for i in range(n // pb):
            r = _ReadReq(addr + i * pb, pb)
            reqs.append(r)
            self._rd_pending.append(r)
            self.hrd.send_nowait(addr=r.addr, len=pb)
        await reqs[-1].done.wait()
        self._rd_free.set()
        return b"".join(struct.pack(f"<{len(r.words)}I", *r.words) for r in reqs)

    async def host_write_pages(self, addr: int, data: bytes, shuffle: bool = True) -> None:
        """One burst per page (page_bytes/4 words at addr + i*page_bytes), pages in random order;
        returns when the last beat was taken."""
        pb = self.page_bytes
        idx = list(range(len(data) // pb))
        if shuffle:
            self.rng.shuffle(idx)
        ev = None
        for i in idx:
            ev = self.host_write(addr + i * pb, data[i * pb:(i + 1) * pb])
        if ev is not None:
            await ev.wait()

    def host_write(self, addr: int, data: bytes) -> Event:
        """Queue one burst (consecutive words from addr; every beat carries the burst's address,
        docs/architecture.md §9)."""
        words = struct.unpack(f"<{len(data) // 4}I", data)
        ev = Event()
        for j, w in enumerate(words):
            if j == len(words) - 1:
                self.hwr.send_nowait(addr=addr, data=w, last=1, _ev=ev)
            else:
                self.hwr.send_nowait(addr=addr, data=w, last=0)
        return ev

    # ------------------------------------------------------------------ execution
    def _take_injection(self, f: dict) -> dict | None:
        for inj in self.injections:
            if inj["tag"] == f["tag"] and (inj["op"] is None or inj["op"] == f["op"]) and inj["count"] > 0:
                inj["count"] -= 1
                if inj["count"] == 0:
                    self.injections.remove(inj)
                return inj
        return None

    async def _exec(self, f: dict) -> None:
        r = self.rng
        lo, hi = self.slow if r.random() < self.slow_p else self.delay
        await ClockCycles(self.dut.clk, r.randint(lo, hi))
        tag = f["tag"]
        inj = self._take_injection(f)
        if f["op"] in (OP_IDENTIFY, OP_GET_LOG):                 # the firmware (ats_admin)
            st, res = 0, 64 if f["op"] == OP_IDENTIFY else 224
            if inj is None or inj["data"]:
                ans = (b"".join(struct.pack("<I", w) for w in self.fw_words) if f["op"] == OP_IDENTIFY
                       else self.fw_log).ljust(512, b"\0")
                await self.host_write(f["dptr"], ans).wait()
        elif f["op"] == OP_FEATURE:                              # the firmware too, no data
            st, res = 0, 0
            if inj is None or inj["data"]:
                st, res = self.fw_features.answer(R.Descriptor(f["op"], tag, f["lba"], f["nlb"], aux=f["aux"]))
        elif inj is not None and not inj["data"]:
            st, res = 0, 0
        else:
            d = R.Descriptor(f["op"], tag, f["lba"], f["nlb"], f["txid"], f["flags"], f["attr"], f["prio"],
                             f["dptr"], f["aux"])
            fetched: dict[tuple[int, int], bytes] = {}
            while True:
                wrote: list[tuple[int, bytes]] = []

                def rd(a, n):
                    if (a, n) not in fetched:
                        raise _NeedRead(a, n)
                    return fetched[(a, n)]
                try:
                    st, res = self.stub.execute(d, rd, lambda a, b: wrote.append((a, b)))
                    break
                except _NeedRead as e:
                    fetched[(e.addr, e.n)] = await self.host_read(e.addr, e.n)
            for a, b in wrote:
                await self.host_write_pages(a, b)
        if inj is not None:
            st, res = inj["status"], inj["result"]
        while self._held:
            await self._unheld.wait()
        del self.in_core[tag]
        self.cpl.send_nowait(tag=tag, status=st, result=res)
        self.completions.append((tag, st, res))
        f["_st"], f["_res"], f["_done"] = st, res, self.cycle
