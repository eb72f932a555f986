"""Plain-Python DRAM behind a LiteDRAM native user port (cmd / wdata / rdata), for cocotb.

Written from LiteDRAM's port definition (litedram/common.py: cmd {we, addr} in controller words,
wdata {data, we byte enables}, rdata {data}) and its crossbar's behaviour, not from the emulator:
- cmd is a valid/ready handshake (random backpressure on ready);
- each accepted write takes its data later, in command order, on a cycle where the port raises
  wdata.ready (LiteDRAM does not look at wdata.valid then: the user must already offer the word,
  so this model fails the test if wdata.valid is 0 when it raises wdata.ready);
- each accepted read returns its word later, in command order, with rdata.valid for one cycle
  (LiteDRAM does not wait for rdata.ready: the model fails the test if it is 0 then);
- latencies are random (`lat` = (min, max) cycles); words never written read as random bits, as
  DRAM does after power-up;
- commands outside [lo, hi) (the words the emulator's geometry may use) fail the test.
"""
from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import RisingEdge


class DramModel:
    def __init__(self, dut, clk, dw: int, lo: int, hi: int, rng: random.Random,
                 lat=(1, 8), cmd_stall: float = 0.3, prefix: str = "dram"):
        self.dut = dut
        self.clk = clk
        self.dw = dw
        self.lo, self.hi = lo, hi
        self.rng = rng
        self.lat = lat
        self.cmd_stall = cmd_stall
        self.mem: dict[int, int] = {}
        g = lambda n: getattr(dut, n)  # noqa: E731
        self.cmd_valid, self.cmd_ready = g(f"m_{prefix}_cmd_valid"), g(f"m_{prefix}_cmd_ready")
        self.cmd_we, self.cmd_addr = g(f"m_{prefix}_cmd_we"), g(f"m_{prefix}_cmd_addr")
        self.wd_valid, self.wd_ready = g(f"m_{prefix}_wdata_valid"), g(f"m_{prefix}_wdata_ready")
        self.wd_data, self.wd_we = g(f"m_{prefix}_wdata_data"), g(f"m_{prefix}_wdata_we")
        self.rd_valid, self.rd_ready = g(f"s_{prefix}_rdata_valid"), g(f"s_{prefix}_rdata_ready")
        self.rd_data = g(f"s_{prefix}_rdata_data")
        self.writes: deque = deque()      # [due_cycle, addr] waiting for their data
        self.reads: deque = deque()       # [due_cycle, addr] waiting to return
        self.cycle = 0
        self.n_reads = self.n_writes = self.n_stalls = 0
        self.errors: list[str] = []
        self._cmd_ready = self._wd_ready = self._rd_valid = 0
        self.cmd_ready.value = 0
        self.wd_ready.value = 0
        self.rd_valid.value = 0
        self.rd_data.value = 0
        self.task = cocotb.start_soon(self._run())

    def word(self, addr: int) -> int:
        if addr not in self.mem:
            self.mem[addr] = self.rng.getrandbits(self.dw)      # power-up garbage
        return self.mem[addr]

    def _due(self) -> int:
        return self.cycle + self.rng.randint(*self.lat)

    def _idle(self) -> bool:
        return not (self.writes or self.reads or self._cmd_ready or self._wd_ready or self._rd_valid)

    async def _run(self) -> None:
        while True:
            if self._idle() and not int(self.cmd_valid.value):
                await RisingEdge(self.cmd_valid)                # nothing to do until a command
            await RisingEdge(self.clk)
            self.cycle += 1
            self._edge()

    def _edge(self) -> None:
        # --- what happened at this edge (values sampled at the edge)
        if self._cmd_ready and int(self.cmd_valid.value):
            addr = int(self.cmd_addr.value)
            if not self.lo <= addr < self.hi:
                self.errors.append(f"command address {addr} outside [{self.lo}, {self.hi})")
            if int(self.cmd_we.value):
                self.writes.append([self._due(), addr])
            else:
                self.reads.append([self._due(), addr])
        elif int(self.cmd_valid.value):
            self.n_stalls += 1
        if self._wd_ready:
            _, addr = self.writes.popleft()
            if not int(self.wd_valid.value):
                self.errors.append(f"wdata.ready for the write of word {addr} while wdata.valid is 0")
            data, we = int(self.wd_data.value), int(self.wd_we.value)
            old = self.word(addr)
            mask = 0
            for j in range(self.dw // 8):
                if we >> j & 1:
                    mask |= 0xFF << (8 * j)
            self.mem[addr] = (old & ~mask) | (data & mask)
            self.n_writes += 1
        if self._rd_valid:
            if not int(self.rd_ready.value):
                self.errors.append("rdata.valid while rdata.ready is 0 (LiteDRAM does not wait)")
            self.n_reads += 1
        # --- drive the next cycle
        cmd_ready = int(self.rng.random() >= self.cmd_stall)
        wd_ready = int(bool(self.writes) and self.writes[0][0] <= self.cycle)
        rd_valid = 0
        if self.reads and self.reads[0][0] <= self.cycle:
            _, addr = self.reads.popleft()
            self.rd_data.value = self.word(addr)
            rd_valid = 1
        if cmd_ready != self._cmd_ready:
            self.cmd_ready.value = cmd_ready
        if wd_ready != self._wd_ready:
            self.wd_ready.value = wd_ready
        if rd_valid != self._rd_valid:
            self.rd_valid.value = rd_valid
        self._cmd_ready, self._wd_ready, self._rd_valid = cmd_ready, wd_ready, rd_valid
        if self._idle() and not int(self.cmd_valid.value):
            if self._cmd_ready:
                self.cmd_ready.value = 0
                self._cmd_ready = 0
