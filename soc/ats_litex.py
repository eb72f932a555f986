# SPDX-License-Identifier: Apache-2.0
"""atomssd as a LiteX peripheral: the device core (rtl/core/ats_ssd_core.sv) and the firmware-port
bridge (rtl/soc/ats_fw_bridge.sv) with their CSRs, the bridge's page buffer on the bus, and the host
port and NAND pins as pads.

The CSRs below are the single source of the register map: LiteX generates the firmware header
(csr.h), csr.json (read by soc/regmap.py into the Python constants and docs/registers.md) from
them. Every register has a description; the bank's location is pinned (CSR_LOC). Theory of
operation: soc/README.md.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, asdict, field, replace
from pathlib import Path

from migen import Signal, Instance, ClockSignal, ResetSignal, If, Cat, Constant
from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStorage, CSRStatus, CSRField
from litex.soc.interconnect import wishbone
from litex.soc.integration.soc import SoCRegion

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cocotb_tests" / "lib"))     # the .f lists' parser (standard library only)
from atstb.filelist import block_sources  # noqa: E402

CSR_LOC = 16                  # the "ats" CSR bank's location (pinned; address = csr base + loc * 0x800)
BUF_ORIGIN = 0x9000_0000      # the bridge's page buffer (uncached IO region, VexRiscv: >= 0x80000000)
WAIT_ORIGIN = 0x9100_0000     # the wait word of ats_wait (uncached IO region): a read waits for WAIT_MASK's events
ADM_WORDS = 128              # words of an admin answer (IDENTIFY, GET_LOG: 512 bytes, docs/architecture.md §1.1)

# The wait unit's wake sources (rtl/soc/ats_wait.sv), bit i of WAIT_MASK / WAIT_PENDING and of the
# wait word's answer, in this order (name, description). Level sources are pending while their
# condition holds; `act` is sticky (set by an event, cleared through WAIT_CLR).
WAKE_SOURCES = [
    ("fw_idle", "the firmware port is idle (STATUS.fw_busy low)"),
    ("need", "a die asks for a block (BLK_NEED not 0) and FREE is empty (STATUS.free_pending low)"),
    ("bad", "a grown bad block waits in BAD (STATUS.bad_valid)"),
    ("adm", "an admin command waits (ADM.pending)"),
    ("uart", "the UART has a received character"),
    ("pwr", "the power-fail input (STATUS.pwr_fail)"),
    ("drain", "every accepted request has completed (CPL_SEQ = NEXT_SEQ)"),
    ("act", "sticky: activity since the last WAIT_CLR: a host command accepted, a completion taken "
            "by the host, BLK_NEED or NEXT_SEQ changed"),
]
WAKE_DEADLINE_BIT = 16        # the deadline's bit in WAIT_MASK, WAIT_PENDING and the wait word
WAKE_TIMEOUT_BIT = 31         # the wait word: ended by the unit's cap (2^19 + 1 cycles after the read began)

# The core's counters brought out as CSRs, in this order (name, description).
COUNTERS = [
    ("cnt_host_pages", "pages written by the host into the write buffer"),
    ("cnt_coalesced", "host page writes absorbed by a page already in the buffer"),
    ("cnt_nand_prog", "NAND PROGRAMs completed OK (host pages, records, GC copies, firmware NPROG)"),
    ("cnt_nand_read", "NAND READs completed for host read misses"),
    ("cnt_ecc_corr", "bits corrected by the BCH decoder in good host reads"),
    ("cnt_prog_fail", "NAND PROGRAMs that failed (re-programmed elsewhere)"),
    ("cnt_read_err", "host reads answered MEDIA_ERROR"),
    ("cnt_proto_err", "internal protocol errors (must stay 0)"),
    ("cnt_erases", "NAND ERASEs completed OK (firmware port)"),
    ("cnt_relocs", "GC relocations applied"),
]

# the S-Log configurations' LPGN -> PPN table entries (ats_ssd_core SLOG_PPNS): one value for the core's
# parameter and soc.h's ATS_HW_SLOG_PPNS (the firmware's SLOAD refuses pages that clash modulo it)
SLOG_PPNS = 256


@dataclass
class AtsConfig:
    """One device configuration: the core's parameters, the NAND die models' array times (sim)."""
    name: str = "sim"
    num_chan: int = 2
    ways: int = 2
    page_bytes: int = 512
    spare_bytes: int = 64
    pages_per_block: int = 16
    blocks: int = 32
    num_lbas: int = 768
    qdepth: int = 16
    num_slots: int = 8
    win: int = 4
    rd_slots: int = 4
    sched_depth: int = 16
    remap_preset: str = "mid"
    sys_clk_hz: int = 100_000_000
    # simulation only: NAND array time divider (FEMU preset / this) and erase time
    array_time_div: int = 20
    t_bers_ns: int = 2_000_000
    # NAND interface timing: False = the core's defaults (T_WP = T_WH = T_RP = T_REH = 2 cycles, 40 ns a
    # byte at 100 MHz); True = one cycle each (20 ns a byte, ONFI timing mode 5's tWC/tRC; the die
    # models' FAST minimums are 10 / 7 ns), twice the page transfer rate
    fast_nand_if: bool = False
    # the write buffer's pending commits of distinct txids (ats_ssd_core / ats_wbuf PTXQ, 1..8): 1 in
    # the synthesized configurations (the board's LUT budget), 8 in the simulated ones, so that
    # queued NVMe atomic Writes (the front end's ATX pool: sim/soc/build.py) overlap their commits
    ptxq: int = 1
    # DiffTx's S-Log in the backend (ats_ssd_core SLOG = 1: the read merge of fragments, op 7 SLOAD;
    # docs/architecture.md section 11) at the core's S-Log defaults. The firmware sees it as ATS_HW_SLOG
    # (soc.h) and loads the recovered S-Log into the backend (sw/firmware/README.md "S-Log")
    slog: bool = False
    # the write buffer's FRAG slots (ats_ssd_core FRAG_SLOTS: 0 or a power of two 2..64, needs slog):
    # > 0 = DIFFWRITEs below the SLOG_THR CSR become S-Log records (the firmware sets SLOG_THR at boot,
    # soc.h ATS_HW_FRAG_SLOTS); 0 = every DIFFWRITE a read-modify-write
    frag_slots: int = 0
    # the backend's S-Log index entries (ats_ssd_core SLOG_LPNS, 4 ways: SLOG_LPNS / 4 sets, set = LPN mod
    # the sets; rtl/backend/README_slog.md "The index"; needs slog): the core's default 256, or a larger
    # power of two. The firmware sizes its copies of F and its checkpoint's S-Log section from it
    # (soc.h ATS_HW_SLOG_LPNS, sw/firmware/fw.h SLOG_LPNS)
    slog_lpns: int = 256
    # group commit (docs/architecture.md §11.4, rtl/backend/README.md "Packing"; needs frag_slots):
    # S-Log records in flight together (ats_ssd_core SLOG_RIF: the write buffer's, the backend's
    # SLOG_RECS, 1..8), records packed into shared log pages (SLOG_PACK, with slog_rif > 1 the page
    # kept open for the next record) and the open page's wait for it in cycles (SLOG_SEALT, 0..65535)
    slog_rif: int = 1
    slog_pack: bool = False
    slog_sealt: int = 0

    @property
    def ndie(self) -> int:
        return self.num_chan * self.ways

    @property
    def open_page(self) -> bool:
        """A log page kept open for the next record (packing with records in flight, rtl/backend
        README "Packing"): its seal time is the host's setting (CSR SLOG_SEALT, FEATURE 0xC0)."""
        return self.slog_pack and self.slog_rif > 1

    def remap(self) -> dict:
        return json.loads((ROOT / "build" / "gen" / f"remap_{self.remap_preset}" / "params.json").read_text())

    def as_dict(self) -> dict:
        d = asdict(self)
        if not d["fast_nand_if"]:
            del d["fast_nand_if"]             # (the configurations without it keep their build digests)
        if d["ptxq"] == 1:
            del d["ptxq"]                     # (likewise)
        if not d["slog"]:
            del d["slog"]                     # (likewise)
        if not d["frag_slots"]:
            del d["frag_slots"]               # (likewise)
        if d["slog_lpns"] == 256:
            del d["slog_lpns"]                # (likewise)
        for k, v in (("slog_rif", 1), ("slog_pack", False), ("slog_sealt", 0)):
            if d[k] == v:
                del d[k]                      # (likewise)
        r = self.remap()
        d.update(ndie=self.ndie, num_tx=r["NUM_TX"], tx_entries=r["TX_ENTRIES"], ppn_w=r["PPN_W"],
                 map_depth=r["MAP_DEPTH"])
        return d

    def check(self) -> None:
        r = self.remap()
        if self.num_lbas > r["MAP_DEPTH"]:
            raise ValueError(f"num_lbas {self.num_lbas} > the remap preset's MAP_DEPTH {r['MAP_DEPTH']}")
        if self.ndie * self.blocks * self.pages_per_block > 1 << r["PPN_W"]:
            raise ValueError("the geometry has more pages than the remap preset's PPN width addresses")
        if not 1 <= self.ptxq <= min(8, r["NUM_TX"]):
            raise ValueError(f"ptxq {self.ptxq} not in 1..min(8, NUM_TX {r['NUM_TX']})")
        if self.frag_slots and (not self.slog or self.frag_slots not in (2, 4, 8, 16, 32, 64)):
            raise ValueError(f"frag_slots {self.frag_slots}: 0, or 2/4/8/16/32/64 with slog")
        if self.slog_lpns != 256 and (not self.slog or self.slog_lpns not in (256, 512, 1024, 2048)):
            raise ValueError(f"slog_lpns {self.slog_lpns}: 256, or 512/1024/2048 with slog")
        if not 1 <= self.slog_rif <= min(8, self.ptxq) or (self.slog_rif > 1 and not self.frag_slots):
            raise ValueError(f"slog_rif {self.slog_rif}: 1, or up to ptxq {self.ptxq} (<= 8) with frag_slots")
        if (self.slog_pack or self.slog_sealt) and not self.frag_slots or not 0 <= self.slog_sealt <= 65535:
            raise ValueError(f"slog_pack / slog_sealt {self.slog_sealt}: with frag_slots, 0..65535")


CONFIGS = {
    # the full-system simulation (tests, demo): 2 x 2 dies, 512-byte pages, 2048 pages (1 MiB) raw,
    # 768 LBAs (37.5 % of the raw pages: GC runs after about one capacity of writes). Small so that
    # the whole SoC simulates fast enough for hundreds of power cuts in `make test`
    "sim": AtsConfig(ptxq=8),
    # the sim configuration with the S-Log (SLOG = 1: the read merge, SLOAD; 4 FRAG slots: DIFFWRITEs
    # below SLOG_THR become S-Log records): tests/system/test_slog_fw.py (recovery of writer-made
    # images), test_slog_device.py (the device's own records under power cuts), bench/difftx's slog mode
    "sim_slog": AtsConfig(name="sim_slog", ptxq=8, slog=True, frag_slots=4),
    # the product's default device (synthesis): the core's defaults, 4 x 2 dies
    "default": AtsConfig(name="default", num_chan=4, ways=2, page_bytes=4096, spare_bytes=224,
                         pages_per_block=64, blocks=128, num_lbas=16384, win=8, rd_slots=16,
                         remap_preset="default", sys_clk_hz=75_000_000),
    # host attach (NBD, docs/host-attach.md): 64 MiB of 4 KiB LBAs (the on-chip L2P's 16 Ki entries)
    # on 4 x 2 dies of 16 MiB raw (128 MiB: 50 % spare), with the fast NAND interface: the page
    # transfer was most of a write's device time, and a random 4 KiB write now takes about 3,000
    # cycles instead of 7,900 (it was 8 MiB on 2 x 2 dies at 40 ns a byte, too small for XFS and
    # Btrfs). Few large blocks (32 of 128 pages a die): the first boot's factory bad-block scan (one
    # whole-page read a block, about 15,700 cycles each) is 4.0 M of its 4.17 M cycles
    # (docs/host-attach.md "Boot cycles")
    "attach": AtsConfig(name="attach", num_chan=4, ways=2, page_bytes=4096, spare_bytes=224,
                        pages_per_block=128, blocks=32, num_lbas=16384, win=8, rd_slots=8,
                        remap_preset="default", fast_nand_if=True, ptxq=8),
}
# benchmark B5 (bench/recovery): the default device with its geometry scaled from 256 MiB to 4 GiB
# raw (blocks per die; 128 pages of 4 KiB a block), FEMU array times, 16 Ki LBAs (the on-chip L2P)
for _mib in (256, 512, 1024, 2048, 4096):
    CONFIGS[f"b5_{_mib}"] = AtsConfig(name=f"b5_{_mib}", num_chan=4, ways=2, page_bytes=4096, spare_bytes=224,
                                      pages_per_block=128, blocks=_mib * 256 // (8 * 128), num_lbas=16384,
                                      win=8, rd_slots=16, remap_preset="large", array_time_div=1, ptxq=8)
# B4 (a) (bench/difftx --config b5_256_slog, simulation only): b5_256 with the S-Log and 64 FRAG slots
# (the firmware sets SLOG_THR = 512 at boot): a transaction's DIFFWRITE below 512 bytes becomes an
# S-Log fragment. 32 is the smallest power of two above any B4 TPC-C transaction's partial pages (its
# shape draws at most 27 pages a transaction, bench/difftx/difftx_workloads.py; seed 1's 16 have 6-20
# partial pages, varmail's 1-12), so no partial update falls back for want of a FRAG slot while one
# transaction runs at a time (16 let 13 of TPC-C's fall back: results_b4_4a8914e.json). 64: B4's
# headline is 8 transactions in flight (about 3.1 running at once), which share the slots: with 32,
# 5 of TPC-C's partial updates at qd 8 found the table full and became full pages (373b42d: 158 host
# pages, WA 1.14, tx/s 1.40x of shadowing); with 64 none does (48b0014: 153 host pages at both qds,
# as at qd 1, WA 1.108, tx/s 1.54x; bench/difftx/README.md "Results at 48b0014",
# results_b4_48b0014.json). The core's checks hold: SLOG_TX = max(16,
# NUM_TX 32) >= NUM_TX; a record's fragments <= SLOG_TXFRAGS 64; the FRAG pages 64 x 1,024 words =
# 64 Ki words, four banks of ats_wbuf_mem's largest block-RAM depth (256 KiB: 128 DP16KD if it were
# synthesized, rtl/wbuf/README.md's S-Log cost row: 164 of the LFE5U-85F's 208 with the rest of the
# buffer; a board build would keep the FRAG pages in the DDR3, architecture §11.8)
# Its S-Log index: 1,024 entries (256 sets x 4 ways), not the core's 256 (64 x 4): TPC-C's 512-LPN
# metadata pool puts 8 LPNs on each of 64 sets, and at 256 its RESERVEs were refused by full sets from
# 116 entries in use on (45 read-modify-writes) and the firmware's 3/4 trigger merged (104 programs):
# WA 1.98 (bench/difftx/README.md "Diagnosis" item 2); at 1,024 the pool puts 2 LPNs on a set
CONFIGS["b5_256_slog"] = replace(CONFIGS["b5_256"], name="b5_256_slog", slog=True, frag_slots=64, slog_lpns=1024)
# B4 (a) with group commit (bench/difftx --config b5_256_slogpk, simulation only): b5_256_slog with
# 4 S-Log records in flight and records packed into shared log pages, an open page sealed 25,000
# cycles (250 us) after its last record unless another record comes first (bench/difftx/README.md
# "Group commit": the model's timer for TPC-C, 22,500-30,000; rtl/backend/README.md "Packing")
CONFIGS["b5_256_slogpk"] = replace(CONFIGS["b5_256_slog"], name="b5_256_slogpk", slog_rif=4, slog_pack=True,
                                   slog_sealt=25000)
# ... and with a 40,000-cycle timer (the model's next row; B4 runs TPC-C on it: a timer per workload
# while the timer is a build parameter, not a CSR)
CONFIGS["b5_256_slogpk40"] = replace(CONFIGS["b5_256_slogpk"], name="b5_256_slogpk40", slog_sealt=40000)
# sim_slog with b5_256_slog's S-Log shape (issue 40's system test gap: the firmware at a 1,024-entry
# index): 1,024 index entries (256 sets x 4 ways: LPN mod 256, the sim's 768 LBAs put at most 3 on a
# set) and 32 FRAG slots (32 x 128 words of FRAG pages at 512-byte pages; B4's device had 32 when
# this was made and has 64 since: the slots are the write buffer's, volatile, and the firmware never
# sees them, so the index is the shape this configuration checks), 2 MiB of main RAM
# (atomssd_soc.main_ram_size). tests/system/test_slog_fw.py, test_slog_ckpt.py, test_slog_device.py
# run on it with ATS_LONG=1 (items `1k-*`); simulation only
CONFIGS["sim_slog1k"] = replace(CONFIGS["sim_slog"], name="sim_slog1k", frag_slots=32, slog_lpns=1024)
# sim_slog with group commit (records packed into shared log pages, rtl/backend/README.md "Packing"):
# 4 S-Log records in flight and an open page sealed 2,000 cycles after its last record unless the
# host sets another seal time (FEATURE 0xC0, docs/architecture.md section 1.2). At 512-byte pages
# a short record leaves room for the next. `make test` runs the device's power-cut campaign on it
# (tests/system/test_slog_device.py items `spk-*`) and the FEATURE's system test; simulation only
CONFIGS["sim_slogpk"] = replace(CONFIGS["sim_slog"], name="sim_slogpk", slog_rif=4, slog_pack=True, slog_sealt=2000)


def core_sources(cfg: AtsConfig) -> list[Path]:
    """The RTL of the core, the bridge and the admin mailbox: their .f lists (each file once), the
    remap preset's generated Verilog in place of the default's."""
    gen = ROOT / "build" / "gen" / f"remap_{cfg.remap_preset}" / "ats_remap_engine.v"
    return block_sources("ats_ssd_core", "ats_fw_bridge", "ats_admin", "ats_wait", replace={"ats_remap_engine.v": gen})


def nand_pads(cfg: AtsConfig):
    from litex.build.generic_platform import Subsignal, Pins
    n, d = cfg.num_chan, cfg.ndie
    return ("nand", 0,
            Subsignal("ce_n", Pins(d)), Subsignal("cle", Pins(n)), Subsignal("ale", Pins(n)),
            Subsignal("we_n", Pins(n)), Subsignal("re_n", Pins(n)), Subsignal("wp_n", Pins(n)),
            Subsignal("dq_o", Pins(8 * n)), Subsignal("dq_i", Pins(8 * n)), Subsignal("rb_n", Pins(d)))


HOST_FIELDS = [  # host port pads: (name, width, direction seen from the SoC)
    ("cmd_valid", 1, "i"), ("cmd_ready", 1, "o"), ("cmd_op", 4, "i"), ("cmd_tag", 8, "i"),
    ("cmd_lba", 48, "i"), ("cmd_nlb", 16, "i"), ("cmd_txid", 6, "i"), ("cmd_flags", 4, "i"),
    ("cmd_attr", 2, "i"), ("cmd_prio", 2, "i"), ("cmd_dptr", 32, "i"), ("cmd_aux", 32, "i"),
    ("cpl_valid", 1, "o"), ("cpl_ready", 1, "i"), ("cpl_tag", 8, "o"), ("cpl_status", 8, "o"),
    ("cpl_result", 32, "o"),
    ("hrd_valid", 1, "o"), ("hrd_ready", 1, "i"), ("hrd_addr", 32, "o"), ("hrd_len", 16, "o"),
    ("hrdd_valid", 1, "i"), ("hrdd_ready", 1, "o"), ("hrdd_data", 32, "i"), ("hrdd_last", 1, "i"),
    ("hwr_valid", 1, "o"), ("hwr_ready", 1, "i"), ("hwr_addr", 32, "o"), ("hwr_data", 32, "o"),
    ("hwr_last", 1, "o"),
    ("pwr_fail", 1, "i"),
]


def host_pads():
    from litex.build.generic_platform import Subsignal, Pins
    return ("host", 0, *[Subsignal(n, Pins(w)) for n, w, _ in HOST_FIELDS])


class AtomSSD(LiteXModule):
    """The device core + firmware bridge with CSRs. `host` and `nand` are pad records."""

    def __init__(self, cfg: AtsConfig, host, nand):
        cfg.check()
        r = cfg.remap()
        ppn_w = r["PPN_W"]
        pw = cfg.page_bytes // 4
        buf_aw = (pw + 8 - 1).bit_length()
        self.buf_words = 1 << buf_aw
        nd = cfg.ndie

        # ---- control and status
        self.ctrl = CSRStorage(description="Device control.", fields=[
            CSRField("host_en", size=1, description="1: host commands enter the command queue "
                     "(the firmware sets it after recovery); 0: the host port's cmd_ready is low"),
            CSRField("wb_hold", size=1, description="1: the backend accepts no new write-back "
                     "request (checkpoint: drain until cpl_seq = next_seq)"),
            CSRField("no_space", size=1, description="1: no space (the firmware can free no block): "
                     "commands that need the media to take new data (WRITE, DIFFWRITE, TRIM, FLUSH, "
                     "RFLUSH, TX_COMMIT, TX_ABORT, FUA writes) complete with status NO_SPACE (0x13) "
                     "instead of waiting, also those already waiting in the write buffer; reads keep "
                     "working; 0: writes proceed (rtl/wbuf/README.md \"No space\")"),
        ])
        self.status = CSRStatus(description="Device status.", fields=[
            CSRField("init_done", size=1, description="remap tables cleared and every NAND die reset"),
            CSRField("no_free_block", size=1, description="a page waits and no die has a block"),
            CSRField("free_pending", size=1, description="the last FREE write has not been taken yet"),
            CSRField("bad_valid", size=1, description="a grown bad block is waiting in BAD"),
            CSRField("fw_busy", size=1, description="a firmware-port operation is in progress"),
            CSRField("pwr_fail", size=1, description="the power-fail input (early warning)"),
            CSRField("err_spurious", size=1, description="sticky: command queue or NAND scheduler saw a spurious event"),
            CSRField("fw_overrun", size=1, description="sticky: FW_CMD written while busy (ignored)"),
            CSRField("fw_conflict", size=1, description="sticky: page buffer accessed while busy (ignored)"),
        ])
        self.blk_need = CSRStatus(nd, description="Bit d: die d = chan * WAYS + way has no next "
                                  "block; answer with FREE from its allocation plan.")
        self.free = CSRStorage(description="Writing hands an erased block to the backend (s_free); "
                               "wait until STATUS.free_pending is 0 before the next write.", fields=[
            CSRField("chan", size=3, description="channel"),
            CSRField("way", size=2, description="way"),
            CSRField("block", size=12, description="block number in the die"),
        ])
        self.bad = CSRStatus(description="The oldest grown bad block reported by the backend "
                             "(valid when STATUS.bad_valid); write BAD_POP to take it.", fields=[
            CSRField("chan", size=3, description="channel"),
            CSRField("way", size=2, description="way"),
            CSRField("block", size=12, description="block number"),
        ])
        self.bad_pop = CSRStorage(1, description="Write 1: take the block shown in BAD.")
        self.vc_addr = CSRStorage(15, description="Valid-page count read address: die * BLOCKS + block.")
        self.vc_data = CSRStatus(9, description="Valid-page count of VC_ADDR's block, since power-on "
                                 "(a delta modulo 512: soc/README.md, valid counts).")
        # ---- firmware port (ats_fw_bridge)
        self.fw_addr = CSRStorage(description="Firmware port: NAND address of NREAD / NPROG / NERASE.", fields=[
            CSRField("page", size=8, description="page in the block"),
            CSRField("block", size=12, description="block"),
            CSRField("way", size=2, description="way"),
            CSRField("chan", size=3, description="channel"),
        ])
        self.fw_lpn = CSRStorage(32, description="Firmware port: LPN (REMAP, RELOC, NPROG spare).")
        self.fw_ppn = CSRStorage(ppn_w, description="Firmware port: PPN (REMAP; RELOC: the page copied).")
        self.fw_seq = CSRStorage(64, description="Firmware port: seq (NPROG spare; SEQSET: the next seq).")
        self.fw_epoch = CSRStorage(32, description="Firmware port: epoch field (NPROG spare).")
        self.fw_cmd = CSRStorage(description="Firmware port: writing starts the operation "
                                 "(rtl/backend/README.md, firmware port; rtl/soc/README.md).", fields=[
            CSRField("op", size=3, description="0 NREAD, 1 NPROG, 2 NERASE, 3 REMAP, 4 RELOC, 5 SEQSET"),
            CSRField("rop", size=4, description="REMAP: remap operation (0 MAP_WRITE, 1 LOOKUP, 6 UNMAP, ...)"),
            CSRField("txid", size=6, description="REMAP txid; NPROG spare txid"),
            CSRField("kind", size=2, description="NPROG spare kind (0 data, 1 log, 2 map, 3 checkpoint)"),
            CSRField("flags", size=8, description="NPROG spare flags"),
        ])
        self.fw_rsp = CSRStatus(description="Firmware port: the last response (valid when STATUS.fw_busy is 0).", fields=[
            CSRField("status", size=8, description="status of the last beat"),
            CSRField("mapped", size=1, description="REMAP: mapped flag"),
            CSRField("beats", size=16, description="beats of the response (NREAD: page words + 5)"),
        ])
        self.fw_rsp_ppn = CSRStatus(ppn_w, description="Firmware port: ppn of the last response beat.")
        self.fw_rsp_data = CSRStatus(32, description="Firmware port: data of the last response beat.")
        self.fw_ops = CSRStatus(32, description="Firmware port: operations completed since reset.")
        # ---- checkpoint support and sequence numbers
        self.next_seq = CSRStatus(64, description="seq the backend gives its next request.")
        self.cpl_seq = CSRStatus(64, description="every request with a lower seq has completed.")
        self.txs_addr = CSRStorage(6, description="txid whose open state TXS / TXS_SEQ show.")
        self.txs = CSRStatus(1, description="1: TXS_ADDR has pages accepted and no commit / abort yet.")
        self.txs_seq = CSRStatus(64, description="seq of the first page of TXS_ADDR's open transaction.")
        self.cycles = CSRStatus(64, description="clock cycles since reset (firmware timing).")
        for name, desc in COUNTERS:
            setattr(self, name, CSRStatus(32, name=name, description=desc.capitalize() + "."))
        # admin commands (IDENTIFY, GET_LOG, FEATURE) answered by the firmware (rtl/soc/README.md "ats_admin")
        self.adm = CSRStatus(description="Admin mailbox (IDENTIFY / GET_LOG / FEATURE from the host).", fields=[
            CSRField("pending", size=1, description="1: an admin command waits for its answer"),
            CSRField("op", size=4, offset=8, description="its opcode (9 IDENTIFY, 10 GET_LOG, 11 FEATURE)"),
            CSRField("tag", size=8, offset=16, description="its host tag"),
        ])
        self.adm_lba = CSRStatus(32, description="The admin command's lba[31:0] (FEATURE: the feature id).")
        self.adm_arg = CSRStatus(description="The admin command's other fields (FEATURE).", fields=[
            CSRField("nlb", size=16, description="its nlb (FEATURE: 0 get, 1 set)"),
            CSRField("lba_hi", size=1, offset=16, description="1: its lba[47:32] is not 0"),
        ])
        self.adm_aux = CSRStatus(32, description="The admin command's aux (FEATURE set: the value).")
        self.adm_data = CSRStorage(32, description="Writing pushes the next word of the admin answer "
                                   f"(up to {ADM_WORDS} words; words not pushed are sent as 0).")
        self.adm_result = CSRStorage(32, description="Completion result of the admin answer (its bytes).")
        self.adm_done = CSRStorage(8, description="Writing ends the admin command with this status "
                                   "(0: the words go to host memory at dptr, then the completion).")
        # ---- wait for event (rtl/soc/ats_wait.sv, rtl/soc/README.md "ats_wait"): a read of the wait word
        # (WAIT_ORIGIN on the bus) is acknowledged only when a source enabled here is pending
        wake_fields = [CSRField(n, size=1, offset=i, description=d) for i, (n, d) in enumerate(WAKE_SOURCES)]
        self.wait_mask = CSRStorage(description="Wait: the sources that end a read of the wait word "
                                    f"(at {WAIT_ORIGIN:#x}; it returns WAIT_PENDING's layout at the wake, "
                                    f"bit {WAKE_TIMEOUT_BIT} set when the wait was ended by the unit's cap of "
                                    "2^19 + 1 cycles after the read began). A write of the wait word is acknowledged "
                                    "at the second edge after the master raised it and ignored.",
                                    fields=wake_fields + [CSRField("deadline", size=1, offset=WAKE_DEADLINE_BIT,
                                        description="CYCLES >= WAIT_DEADLINE ends the wait")])
        self.wait_deadline = CSRStorage(64, description="Wait: the deadline, compared with CYCLES.")
        self.wait_pending = CSRStatus(description="Wait: the sources pending now (whatever WAIT_MASK holds).",
                                      fields=[CSRField(n, size=1, offset=i, description=d)
                                              for i, (n, d) in enumerate(WAKE_SOURCES)] +
                                      [CSRField("deadline", size=1, offset=WAKE_DEADLINE_BIT,
                                                description="CYCLES >= WAIT_DEADLINE")])
        self.wait_clr = CSRStorage(len(WAKE_SOURCES), description="Wait: writing clears the sticky sources "
                                   "whose bits are 1 (an event in the same cycle stays pending).")
        self.wait_count = CSRStatus(32, description="Wait: reads of the wait word answered since reset.")
        self.wait_timeouts = CSRStatus(32, description="Wait: of them, those ended by the unit's cap.")
        self.slog_thr = CSRStorage(16, description="S-Log threshold in bytes: a DIFFWRITE shorter than "
                                   "min(SLOG_THR, page bytes - 16) may become an S-Log fragment "
                                   "(docs/architecture.md section 11.3; no effect while the write buffer has "
                                   "no FRAG slots, as in every configuration now). 0 after reset: none.")
        self.slog_sealt = CSRStorage(16, reset=cfg.slog_sealt,
                                     description="S-Log seal time in clock cycles: an open log page is sealed "
                                     "this many idle cycles after the last record (rtl/backend/README.md "
                                     "\"Packing\"; only with packing and slog_rif > 1). Resets to the build's SLOG_SEALT; the "
                                     "firmware sets it for the host's FEATURE 0xC0 (docs/architecture.md section 1.2).")
        # the UART's receive level (a wake source), wired by add_atomssd from the SoC's UART
        self.uart_rx = Signal()

        # ---- page buffer on the bus (word access only)
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.buf_size = 4 * self.buf_words
        self.wait_bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.cpu_clk = Signal()       # the CPU's clock (add_atomssd): sys, gated in simulation while it waits

        # ---- logic
        cyc = Signal(64)
        self.sync += cyc.eq(cyc + 1)
        self.comb += self.cycles.status.eq(cyc)

        free_v = Signal()
        free_ready = Signal()
        self.sync += If(self.free.re, free_v.eq(1)).Elif(free_ready, free_v.eq(0))
        bad_v = Signal()
        bad_pop = Signal()
        self.comb += bad_pop.eq(self.bad_pop.re & self.bad_pop.storage[0])

        bus_en = Signal()
        ack = Signal()
        buf_rdata = Signal(32)
        self.comb += [
            bus_en.eq(self.bus.cyc & self.bus.stb & ~ack),
            self.bus.ack.eq(ack),
            self.bus.dat_r.eq(buf_rdata),
        ]
        self.sync += ack.eq(bus_en)

        # host port gating: no command enters before the firmware enables the host
        host_en = self.ctrl.fields.host_en
        cmd_ready = Signal()
        adm_ready = Signal()
        core_cmd_valid = Signal()
        self.comb += host.cmd_ready.eq(adm_ready & host_en)
        # the core's completions and host writes, merged with the admin answers by ats_admin
        c_cpl = {n: Signal(w, name=f"core_cpl_{n}") for n, w in
                 [("valid", 1), ("ready", 1), ("tag", 8), ("status", 8), ("result", 32)]}
        c_hwr = {n: Signal(w, name=f"core_hwr_{n}") for n, w in
                 [("valid", 1), ("ready", 1), ("addr", 32), ("data", 32), ("last", 1)]}
        self.specials += Instance("ats_admin", p_WORDS=ADM_WORDS,
            i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
            i_s_cmd_valid=host.cmd_valid & host_en, o_s_cmd_ready=adm_ready, i_s_cmd_op=host.cmd_op,
            i_s_cmd_tag=host.cmd_tag, i_s_cmd_dptr=host.cmd_dptr, i_s_cmd_lba=host.cmd_lba,
            i_s_cmd_nlb=host.cmd_nlb, i_s_cmd_aux=host.cmd_aux,
            o_m_cmd_valid=core_cmd_valid, i_m_cmd_ready=cmd_ready,
            i_s_cpl_valid=c_cpl["valid"], o_s_cpl_ready=c_cpl["ready"], i_s_cpl_tag=c_cpl["tag"],
            i_s_cpl_status=c_cpl["status"], i_s_cpl_result=c_cpl["result"],
            o_m_cpl_valid=host.cpl_valid, i_m_cpl_ready=host.cpl_ready, o_m_cpl_tag=host.cpl_tag,
            o_m_cpl_status=host.cpl_status, o_m_cpl_result=host.cpl_result,
            i_s_hwr_valid=c_hwr["valid"], o_s_hwr_ready=c_hwr["ready"], i_s_hwr_addr=c_hwr["addr"],
            i_s_hwr_data=c_hwr["data"], i_s_hwr_last=c_hwr["last"],
            o_m_hwr_valid=host.hwr_valid, i_m_hwr_ready=host.hwr_ready, o_m_hwr_addr=host.hwr_addr,
            o_m_hwr_data=host.hwr_data, o_m_hwr_last=host.hwr_last,
            o_adm_pending=self.adm.fields.pending, o_adm_op=self.adm.fields.op, o_adm_tag=self.adm.fields.tag,
            o_adm_lba=self.adm_lba.status, o_adm_lba_hi=self.adm_arg.fields.lba_hi,
            o_adm_nlb=self.adm_arg.fields.nlb, o_adm_aux=self.adm_aux.status,
            i_adm_wdata_we=self.adm_data.re, i_adm_wdata=self.adm_data.storage,
            i_adm_done_we=self.adm_done.re, i_adm_done_status=self.adm_done.storage,
            i_adm_done_result=self.adm_result.storage,
        )

        fw = {n: Signal(w, name=f"fw_{n}") for n, w in [
            ("valid", 1), ("ready", 1), ("op", 3), ("chan", 3), ("way", 2), ("block", 12), ("page", 8),
            ("rop", 4), ("txid", 6), ("lpn", 32), ("ppn", ppn_w), ("seq", 64), ("epoch", 32),
            ("flags", 8), ("kind", 2), ("dvalid", 1), ("dready", 1), ("ddata", 32), ("dlast", 1),
            ("rvalid", 1), ("rready", 1), ("rstatus", 8), ("rdata", 32), ("rlast", 1), ("rppn", ppn_w),
            ("rmapped", 1)]}
        busy = Signal()
        overrun = Signal()
        conflict = Signal()
        spurious = Signal()
        init_done = Signal()
        no_free = Signal()
        rsp_status = Signal(8)
        rsp_mapped = Signal()
        rsp_beats = Signal(16)
        self.comb += [
            self.status.fields.free_pending.eq(free_v),
            self.status.fields.bad_valid.eq(bad_v),
            self.status.fields.fw_busy.eq(busy),
            self.status.fields.pwr_fail.eq(host.pwr_fail),
            self.status.fields.err_spurious.eq(spurious),
            self.status.fields.fw_overrun.eq(overrun),
            self.status.fields.fw_conflict.eq(conflict),
            self.status.fields.init_done.eq(init_done),
            self.status.fields.no_free_block.eq(no_free),
            self.fw_rsp.fields.status.eq(rsp_status),
            self.fw_rsp.fields.mapped.eq(rsp_mapped),
            self.fw_rsp.fields.beats.eq(rsp_beats),
        ]

        self.specials += Instance("ats_fw_bridge",
            p_PAGE_BYTES=cfg.page_bytes, p_PPN_W=ppn_w,
            i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
            i_go=self.fw_cmd.re,
            i_req_op=self.fw_cmd.fields.op, i_req_chan=self.fw_addr.fields.chan,
            i_req_way=self.fw_addr.fields.way, i_req_block=self.fw_addr.fields.block,
            i_req_page=self.fw_addr.fields.page, i_req_rop=self.fw_cmd.fields.rop,
            i_req_txid=self.fw_cmd.fields.txid, i_req_lpn=self.fw_lpn.storage,
            i_req_ppn=self.fw_ppn.storage, i_req_seq=self.fw_seq.storage,
            i_req_epoch=self.fw_epoch.storage, i_req_flags=self.fw_cmd.fields.flags,
            i_req_kind=self.fw_cmd.fields.kind,
            o_busy=busy, o_rsp_status=rsp_status, o_rsp_ppn=self.fw_rsp_ppn.status,
            o_rsp_mapped=rsp_mapped, o_rsp_data=self.fw_rsp_data.status, o_rsp_beats=rsp_beats,
            o_ops_done=self.fw_ops.status, o_err_overrun=overrun, o_err_conflict=conflict,
            i_cpu_en=bus_en, i_cpu_we=self.bus.we, i_cpu_addr=self.bus.adr[:buf_aw],
            i_cpu_wdata=self.bus.dat_w, o_cpu_rdata=buf_rdata,
            o_m_fw_valid=fw["valid"], i_m_fw_ready=fw["ready"], o_m_fw_op=fw["op"],
            o_m_fw_chan=fw["chan"], o_m_fw_way=fw["way"], o_m_fw_block=fw["block"],
            o_m_fw_page=fw["page"], o_m_fw_rop=fw["rop"], o_m_fw_txid=fw["txid"],
            o_m_fw_lpn=fw["lpn"], o_m_fw_ppn=fw["ppn"], o_m_fw_seq=fw["seq"],
            o_m_fw_epoch=fw["epoch"], o_m_fw_flags=fw["flags"], o_m_fw_kind=fw["kind"],
            o_m_fwd_valid=fw["dvalid"], i_m_fwd_ready=fw["dready"], o_m_fwd_data=fw["ddata"],
            o_m_fwd_last=fw["dlast"],
            i_s_fwr_valid=fw["rvalid"], o_s_fwr_ready=fw["rready"], i_s_fwr_status=fw["rstatus"],
            i_s_fwr_data=fw["rdata"], i_s_fwr_last=fw["rlast"], i_s_fwr_ppn=fw["rppn"],
            i_s_fwr_mapped=fw["rmapped"],
        )

        cnt = {n: getattr(self, n).status for n, _ in COUNTERS}
        self.specials += Instance("ats_ssd_core",
            p_NUM_CHAN=cfg.num_chan, p_WAYS=cfg.ways, p_PAGE_BYTES=cfg.page_bytes,
            p_SPARE_BYTES=cfg.spare_bytes, p_PAGES_PER_BLOCK=cfg.pages_per_block, p_BLOCKS=cfg.blocks,
            p_NUM_LBAS=cfg.num_lbas, p_NUM_TX=r["NUM_TX"], p_QDEPTH=cfg.qdepth,
            p_NUM_SLOTS=cfg.num_slots, p_WIN=cfg.win, p_RD_SLOTS=cfg.rd_slots,
            p_SCHED_DEPTH=cfg.sched_depth, p_REMAP_LPN_W=r["LPN_W"], p_REMAP_PPN_W=ppn_w,
            **(dict(p_PTXQ=cfg.ptxq) if cfg.ptxq != 1 else {}),   # (1: the core's default, Verilog unchanged)
            **(dict(p_SLOG=1, p_SLOG_PPNS=SLOG_PPNS) if cfg.slog else {}),   # (SLOG 0: the core's default)
            **(dict(p_SLOG_LPNS=cfg.slog_lpns) if cfg.slog_lpns != 256 else {}),   # (256: the core's default)
            **(dict(p_SLOG_RIF=cfg.slog_rif) if cfg.slog_rif != 1 else {}),        # (group commit: the core's
            **(dict(p_SLOG_PACK=1) if cfg.slog_pack else {}),                    #  defaults otherwise)
            **(dict(p_SLOG_SEALT=cfg.slog_sealt) if cfg.slog_sealt else {}),
            **(dict(p_FRAG_SLOTS=cfg.frag_slots, p_SLOG_TX=max(16, r["NUM_TX"])) if cfg.frag_slots else {}),
            **(dict(p_T_WP=1, p_T_WH=1, p_T_RP=1, p_T_REH=1) if cfg.fast_nand_if else {}),
            p_REMAP_TXID_W=r["TXID_W"], p_REMAP_CNT_W=r["CNT_W"],
            i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
            i_s_cmd_valid=core_cmd_valid, o_s_cmd_ready=cmd_ready,
            i_s_cmd_op=host.cmd_op, i_s_cmd_tag=host.cmd_tag, i_s_cmd_lba=host.cmd_lba,
            i_s_cmd_nlb=host.cmd_nlb, i_s_cmd_txid=host.cmd_txid, i_s_cmd_flags=host.cmd_flags,
            i_s_cmd_attr=host.cmd_attr, i_s_cmd_prio=host.cmd_prio, i_s_cmd_dptr=host.cmd_dptr,
            i_s_cmd_aux=host.cmd_aux,
            o_m_cpl_valid=c_cpl["valid"], i_m_cpl_ready=c_cpl["ready"], o_m_cpl_tag=c_cpl["tag"],
            o_m_cpl_status=c_cpl["status"], o_m_cpl_result=c_cpl["result"],
            o_m_hrd_valid=host.hrd_valid, i_m_hrd_ready=host.hrd_ready, o_m_hrd_addr=host.hrd_addr,
            o_m_hrd_len=host.hrd_len,
            i_s_hrd_valid=host.hrdd_valid, o_s_hrd_ready=host.hrdd_ready, i_s_hrd_data=host.hrdd_data,
            i_s_hrd_last=host.hrdd_last,
            o_m_hwr_valid=c_hwr["valid"], i_m_hwr_ready=c_hwr["ready"], o_m_hwr_addr=c_hwr["addr"],
            o_m_hwr_data=c_hwr["data"], o_m_hwr_last=c_hwr["last"],
            i_s_free_valid=free_v, o_s_free_ready=free_ready, o_blk_need=self.blk_need.status,
            i_s_free_chan=self.free.fields.chan, i_s_free_way=self.free.fields.way,
            i_s_free_block=self.free.fields.block,
            o_m_bad_valid=bad_v, i_m_bad_ready=bad_pop, o_m_bad_chan=self.bad.fields.chan,
            o_m_bad_way=self.bad.fields.way, o_m_bad_block=self.bad.fields.block,
            i_vc_addr=self.vc_addr.storage, o_vc_data=self.vc_data.status,
            i_slog_thr=self.slog_thr.storage,
            **(dict(i_slog_sealt=self.slog_sealt.storage) if cfg.open_page else {}),
            i_wb_hold=self.ctrl.fields.wb_hold, i_no_space=self.ctrl.fields.no_space, o_cpl_seq=self.cpl_seq.status,
            i_txs_addr=self.txs_addr.storage, o_txs_open=self.txs.status, o_txs_seq=self.txs_seq.status,
            i_s_fw_valid=fw["valid"], o_s_fw_ready=fw["ready"], i_s_fw_op=fw["op"],
            i_s_fw_chan=fw["chan"], i_s_fw_way=fw["way"], i_s_fw_block=fw["block"],
            i_s_fw_page=fw["page"], i_s_fw_rop=fw["rop"], i_s_fw_txid=fw["txid"],
            i_s_fw_lpn=fw["lpn"], i_s_fw_ppn=fw["ppn"], i_s_fw_seq=fw["seq"],
            i_s_fw_epoch=fw["epoch"], i_s_fw_flags=fw["flags"], i_s_fw_kind=fw["kind"],
            i_s_fwd_valid=fw["dvalid"], o_s_fwd_ready=fw["dready"], i_s_fwd_data=fw["ddata"],
            i_s_fwd_last=fw["dlast"],
            o_m_fwr_valid=fw["rvalid"], i_m_fwr_ready=fw["rready"], o_m_fwr_status=fw["rstatus"],
            o_m_fwr_data=fw["rdata"], o_m_fwr_last=fw["rlast"], o_m_fwr_ppn=fw["rppn"],
            o_m_fwr_mapped=fw["rmapped"],
            i_pwr_fail=host.pwr_fail, o_init_done=init_done, o_no_free_block=no_free,
            o_next_seq=self.next_seq.status,
            **{f"o_{n}": cnt[n] for n, _ in COUNTERS},
            o_err_spurious=spurious,
            o_nand_ce_n=nand.ce_n, o_nand_cle=nand.cle, o_nand_ale=nand.ale, o_nand_we_n=nand.we_n,
            o_nand_re_n=nand.re_n, o_nand_wp_n=nand.wp_n, o_nand_dq_o=nand.dq_o, i_nand_dq_i=nand.dq_i,
            i_nand_rb_n=nand.rb_n,
        )

        # ---- wait for event (rtl/soc/ats_wait.sv)
        nsrc = len(WAKE_SOURCES)
        need_q = Signal(nd)
        seq_q = Signal(64)
        self.sync += [need_q.eq(self.blk_need.status), seq_q.eq(self.next_seq.status)]
        lvl = Signal(nsrc)
        evt = Signal(nsrc)
        self.comb += [
            lvl.eq(Cat(~busy, (self.blk_need.status != 0) & ~free_v, bad_v, self.adm.fields.pending,
                       self.uart_rx, host.pwr_fail, self.cpl_seq.status == self.next_seq.status, Constant(0, 1))),
            evt[nsrc - 1].eq((host.cmd_valid & host.cmd_ready) | (host.cpl_valid & host.cpl_ready) |
                             (self.blk_need.status != need_q) | (self.next_seq.status != seq_q)),
        ]
        pend = Signal(nsrc)
        dl_hit = Signal()
        self.comb += self.wait_pending.status.eq(Cat(pend, Constant(0, WAKE_DEADLINE_BIT - nsrc), dl_hit))
        self.specials += Instance("ats_wait", p_NSRC=nsrc,
            i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
            i_bus_cyc=self.wait_bus.cyc, i_bus_stb=self.wait_bus.stb, i_bus_we=self.wait_bus.we,
            o_bus_ack=self.wait_bus.ack, o_bus_rdata=self.wait_bus.dat_r,
            i_src_lvl=lvl, i_src_evt=evt, i_evt_clr_we=self.wait_clr.re, i_evt_clr=self.wait_clr.storage,
            i_mask=self.wait_mask.storage[:nsrc], i_dl_en=self.wait_mask.storage[WAKE_DEADLINE_BIT],
            i_deadline=self.wait_deadline.storage, i_cycles=cyc,
            o_pending=pend, o_dl_hit=dl_hit, o_waits=self.wait_count.status,
            o_timeouts=self.wait_timeouts.status, o_cpu_clk=self.cpu_clk,
        )


def add_atomssd(soc, platform, cfg: AtsConfig, name: str = "ats", host=None, nand=None) -> AtomSSD:
    """The SoC entry point: checks the configuration, adds the core's RTL to the platform, pins the
    CSR bank at CSR_LOC, maps the page buffer at BUF_ORIGIN (uncached) and returns the module.
    `host` / `nand`: records in place of the platform's `host` / `nand` pads (a board SoC wires the
    host port and the NAND pins inside the design: soc/boards/)."""
    cfg.check()
    for p in core_sources(cfg):
        if not p.exists():
            raise FileNotFoundError(f"{p} (run `make gen` for the remap engine)")
        platform.add_source(str(p))
    soc.csr.add(name, n=CSR_LOC)
    m = AtomSSD(cfg, platform.request("host") if host is None else host,
                platform.request("nand") if nand is None else nand)
    setattr(soc, name, m)
    soc.bus.add_slave(f"{name}buf", m.bus, SoCRegion(origin=BUF_ORIGIN, size=m.buf_size, cached=False))
    soc.bus.add_slave(f"{name}wait", m.wait_bus, SoCRegion(origin=WAIT_ORIGIN, size=0x100, cached=False))
    # the wait unit's wake sources: the UART's receive level; the CPU's clock from the unit (the
    # same clock, gated only in a simulation built with ATS_SIM_CGATE while the CPU waits)
    uart = getattr(soc, "uart", None)
    if uart is not None and hasattr(uart, "_rxempty"):
        m.comb += m.uart_rx.eq(~uart._rxempty.status)
    cpu_params = getattr(getattr(soc, "cpu", None), "cpu_params", None)
    if cpu_params is not None and "i_clk" in cpu_params:
        cpu_params["i_clk"] = m.cpu_clk
    # the geometry as constants of the generated soc.h (firmware) and csr.json (host tools)
    r = cfg.remap()
    for k, v in dict(NUM_CHAN=cfg.num_chan, WAYS=cfg.ways, NDIE=cfg.ndie, PAGE_BYTES=cfg.page_bytes,
                     SPARE_BYTES=cfg.spare_bytes, PAGES_PER_BLOCK=cfg.pages_per_block, BLOCKS=cfg.blocks,
                     NUM_LBAS=cfg.num_lbas, NUM_TX=r["NUM_TX"], TX_ENTRIES=r["TX_ENTRIES"], PPN_W=r["PPN_W"],
                     WIN=cfg.win, BUF_WORDS=m.buf_words, SYS_CLK_HZ=cfg.sys_clk_hz, QDEPTH=cfg.qdepth,
                     ADM_WORDS=ADM_WORDS).items():
        soc.add_constant(f"ATS_{k}", v)
    if cfg.slog:
        soc.add_constant("ATS_HW_SLOG", 1)       # (not ATS_SLOG: LiteX adds ats_<name>_read(), ftl.h has ats_slog_read)
        soc.add_constant("ATS_HW_SLOG_PPNS", SLOG_PPNS)  # the value the core was built with (above)
        soc.add_constant("ATS_HW_SLOG_LPNS", cfg.slog_lpns)   # the index's entries the core was built with
    if cfg.frag_slots:
        soc.add_constant("ATS_HW_FRAG_SLOTS", cfg.frag_slots)   # the firmware sets SLOG_THR at boot
    if cfg.open_page:
        soc.add_constant("ATS_HW_SLOG_OPEN_PAGE", 1)   # an open log page and its seal time: FEATURE 0xC0
    return m
