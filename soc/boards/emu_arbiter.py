# SPDX-License-Identifier: Apache-2.0
"""EmuPortArbiter: several emulated NAND dies' LiteDRAM native ports on one crossbar port.

LiteDRAM's crossbar arbitrates every port at every bank (a round robin of all ports a bank, a lock
check of every port against every other bank, the ports' address multiplexers a bank), so one port
a die (eight on the ECPIX-5) made it one of the largest parts of the board's glue (docs/boards.md
"Resources"). The dies move whole rows (ROW_WORDS words, one transfer at a time a die), so a plain
multiplexer that stays with one die while it has anything in flight keeps every die's transfer
intact and in order:

  - the grant moves (round robin) only when the granted die offers no command and has no read
    data outstanding and no write data owed; the slave's `wdata.ready` and `rdata.valid` go to the
    granted die only, the read data to all (they look at it only with their valid);
  - the masters' `rdata.ready` is not looked at: the emulator's is always 1, as the crossbar's
    contract asks (it does not wait for rdata.ready either).

A die waits at most for the other dies' transfers on the port (one row each): a row of 4,320
bytes is 270 port words at 128 bits, 540 commands with 64-bit masters (the board's), and the
board's 16-bit DDR3 at 1:2 moves one port word (a BL8 burst) every two cycles, so about 7 / 14 us at
75 MHz: with four dies loading at once on a port the last one waits 22 / 43 us, and the emulator's
R/B# rises when its timer has run out and its transfer is done, so then its busy time exceeds tR
(40 us) by up to ~20 us at 64 bits (rtl/nand_emu/README.md "Array times", "Limits").
"""
from __future__ import annotations

from migen import Array, Case, Cat, If, Module, Mux, Replicate, Signal


class EmuPortArbiter(Module):
    """`masters`' native ports (all of one data width: the slave's, or half of it) on `slave`.

    Half-width masters (the emulated dies at 64 bits on the 128-bit crossbar port): master word a is
    half a & 1 of slave word a >> 1; a write is a slave write with that half's byte enables (its
    data in both halves), a read a slave read whose half a & 1 goes back. The half of each returned
    read word and of each taken write word is tracked, not queued: it is the address bit of the
    first command taken while none of that kind was outstanding, then alternates, so a master must
    issue consecutive addresses while it has words in flight (the emulator's transfers are rows of
    consecutive words)."""

    def __init__(self, masters, slave, count_bits: int = 12):
        n = len(masters)
        mdw, sdw = masters[0].data_width, slave.data_width
        if mdw not in (sdw, sdw // 2) or any(m.data_width != mdw for m in masters):
            raise ValueError("masters must be of the slave's data width or half of it")
        half = (mdw != sdw)
        self.grant = grant = Signal(max=max(n, 2))
        rd_out = Signal(count_bits)     # read commands taken, data not yet returned
        wr_out = Signal(count_bits)     # write commands taken, data not yet taken
        cmd_fire = Signal()
        self.comb += cmd_fire.eq(slave.cmd.valid & slave.cmd.ready)

        cmd_valid = Array([m.cmd.valid for m in masters])
        m_addr = Signal(len(masters[0].cmd.addr))
        m_wdata = Signal(mdw)
        m_we = Signal(mdw // 8)
        self.comb += [
            m_addr.eq(Array([m.cmd.addr for m in masters])[grant]),
            m_wdata.eq(Array([m.wdata.data for m in masters])[grant]),
            m_we.eq(Array([m.wdata.we for m in masters])[grant]),
            slave.cmd.valid.eq(cmd_valid[grant]),
            slave.cmd.we.eq(Array([m.cmd.we for m in masters])[grant]),
            slave.cmd.last.eq(1),
            slave.wdata.valid.eq(Array([m.wdata.valid for m in masters])[grant]),
            slave.rdata.ready.eq(1),
        ]
        rd_take = Signal()
        wr_take = Signal()
        self.comb += [rd_take.eq(cmd_fire & ~slave.cmd.we), wr_take.eq(cmd_fire & slave.cmd.we)]
        if half:
            # the half of the next read word back / write word taken (see the class doc)
            rphase, wphase = Signal(), Signal()
            rdata = Signal(mdw)
            self.sync += [
                If(rd_take & (rd_out == 0), rphase.eq(m_addr[0] ^ slave.rdata.valid))
                .Elif(slave.rdata.valid, rphase.eq(~rphase)),
                If(wr_take & (wr_out == 0), wphase.eq(m_addr[0] ^ slave.wdata.ready))
                .Elif(slave.wdata.ready, wphase.eq(~wphase)),
            ]
            self.comb += [
                slave.cmd.addr.eq(m_addr[1:]),
                slave.wdata.data.eq(Cat(m_wdata, m_wdata)),
                If(wphase, slave.wdata.we.eq(Cat(Replicate(0, mdw // 8), m_we)))
                .Else(slave.wdata.we.eq(Cat(m_we, Replicate(0, mdw // 8)))),
                rdata.eq(Mux(rphase, slave.rdata.data[mdw:], slave.rdata.data[:mdw])),
            ]
        else:
            rdata = slave.rdata.data
            self.comb += [slave.cmd.addr.eq(m_addr), slave.wdata.data.eq(m_wdata), slave.wdata.we.eq(m_we)]
        for i, m in enumerate(masters):
            self.comb += [
                m.cmd.ready.eq(slave.cmd.ready & (grant == i)),
                m.wdata.ready.eq(slave.wdata.ready & (grant == i)),
                m.rdata.valid.eq(slave.rdata.valid & (grant == i)),
                m.rdata.data.eq(rdata),
            ]

        self.sync += [
            rd_out.eq(rd_out + rd_take - slave.rdata.valid),
            wr_out.eq(wr_out + wr_take - slave.wdata.ready),
        ]
        # the next grant: the first master after the granted one that offers a command, while the
        # granted one is idle (nothing offered, nothing in flight)
        idle = Signal()
        self.comb += idle.eq(~cmd_valid[grant] & (rd_out == 0) & (wr_out == 0) & ~rd_take & ~wr_take)
        cases = {}
        for g in range(n):
            nxt = None
            for k in range(n - 1, 0, -1):          # built inside out: the nearest one wins
                j = (g + k) % n
                step = If(masters[j].cmd.valid, grant.eq(j))
                nxt = step if nxt is None else step.Else(nxt)
            cases[g] = nxt
        if n > 1:
            self.sync += If(idle, Case(grant, cases))
