"""The ECPIX-5 board SoC (issue 38, docs/boards.md): LiteX generation and a Yosys check, no place and
route (`make bitstream BOARD=ecpix5` does that, tens of minutes).

test_board_soc: the generated design against what docs/boards.md and the blocks' READMEs say, each
figure recomputed here from the geometry (not read from the generator): one core, eight emulated
dies and one UDP host link instantiated with the board's parameters, every die's DRAM array inside
the 512 MB DDR3, above the CPU's 16 MiB and disjoint from the others, the power-fail pin with its
pull-up in the LPF, the host link's UDP port that of docs/host-port.md, the core's CSR bank where
the firmware expects it.
test_board_synth_check: Yosys elaborates the whole board top (every instance's ports and parameters
against the RTL, `$fatal` parameter checks included) and runs synth_ecp5 + `check` on all of
it except the blocks (the device core: `make synth`, 84 % of the part and tens of minutes; the
emulated dies and the host link: their own checks in synth/test_synth_check.py), which are black
boxes after elaboration: the CPU, LiteDRAM with its ECP5 DDR3 PHY, LiteEth and the glue go through
synth_ecp5 up to the LUT mapping (memories, I/O and flip-flops mapped to ECP5 cells) without errors and without multiple drivers, logic loops or undriven nets (outside the
VexRiscv's own Verilog).
test_sta_sdf: soc/boards/breakdown/sta_sdf.py (worst paths of a clock from a placed design's SDF)
against a plain enumeration of every path of a random netlist written as nextpnr's SDF.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "build" / "gen" / "remap_default" / "ats_remap_engine.v"

pytestmark = pytest.mark.skipif(not GEN.exists(), reason="needs make gen (the remap engine's Verilog)")


def _load_board():
    spec = importlib.util.spec_from_file_location("ats_board_ecpix5", ROOT / "soc" / "boards" / "ecpix5.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# under build/, not /tmp: the YoWASP tools run in a WASI sandbox with a /tmp of their own, so they
# get paths relative to the repository (synth/run_synth.py tp())
OUT = ROOT / "build" / "boards" / "test_ecpix5"


def tp(p) -> str:
    return os.path.relpath(Path(p).resolve(), ROOT.resolve())


@pytest.fixture(scope="module")
def board():
    if OUT.exists():
        shutil.rmtree(OUT)
    _load_board().generate(OUT)
    return OUT


def _instances(v: str, module: str) -> list[dict]:
    """Parameters of every instance of `module` in LiteX's Verilog (`module #(.P (N'dV), ...) name (`)."""
    res = []
    for m in re.finditer(rf"^{module} #\((.*?)\n\) \w+ \(", v, re.S | re.M):
        params = {}
        for p in re.finditer(r"\.(\w+)\s*\(([^()]*)\)", m.group(1)):
            val = p.group(2).strip()
            num = re.fullmatch(r"\d+'d(\d+)", val)
            params[p.group(1)] = int(num.group(1)) if num else val
        res.append(params)
    return res


def test_board_soc(board):
    v = (board / "gateware" / "ecpix5.v").read_text()
    cfg = json.loads((board / "config.json").read_text())
    assert (cfg["num_chan"], cfg["ways"], cfg["page_bytes"], cfg["spare_bytes"]) == (4, 2, 4096, 224)
    ndie = cfg["num_chan"] * cfg["ways"]

    core = _instances(v, "ats_ssd_core")
    assert len(core) == 1
    # the sys reset (every flip-flop's LSR) on a global network: a DCCA between its synchroniser and
    # the sys domain (soc/boards/ecpix5.py BoardCRG; docs/boards.md "Whole-device place and route")
    dcca = re.findall(r"^DCCA \w+\(\s*// Inputs\.\s*\.CE\s*\(1'd1\),\s*\.CLKI\s*\((\w+)\),\s*// Outputs\.\s*"
                      r"\.CLKO\s*\((\w+)\)", v, re.M)
    assert dcca == [("rstgen_rst", "sys_rst")], dcca
    # its synchroniser: two FD1S3BX (asynchronous set) with fixed places, the second's output the
    # DCCA's input, so that nextpnr puts the DCCA at the DCC next to them (docs/boards.md pnr_e15)
    sync = re.findall(r'^\(\* BEL = "([^"]+)" \*\)\n(?://.*\n)*FD1S3BX \w+\(\s*// Inputs\.\s*\.CK\s*\(rstgen_clk\),'
                      r"\s*\.D\s*\(([\w']+)\),\s*\.PD\s*\((\w+)\),\s*// Outputs\.\s*\.Q\s*\((\w+)\)", v, re.M)
    assert len(sync) == 2, sync
    (bel0, d0, pd0, q0), (bel1, d1, pd1, q1) = sync
    assert (d0, d1, q1) == ("1'd0", q0, "rstgen_rst") and pd0 == pd1, sync
    assert (bel0, bel1) == _load_board().RST_SYNC_BELS and bel0.rsplit(".", 1)[0] == bel1.rsplit(".", 1)[0], sync
    assert (core[0]["NUM_CHAN"], core[0]["WAYS"], core[0]["BLOCKS"]) == (4, 2, cfg["blocks"])

    host = _instances(v, "ats_udp_host")
    assert len(host) == 1
    # the port of docs/host-port.md "UDP host link"
    doc = (ROOT / "docs" / "host-port.md").read_text()
    port = host[0]["LOCAL_PORT"]
    assert port == 16724 and "16724" in doc
    assert host[0]["PAGE_BYTES"] == cfg["page_bytes"]
    # the command queue holds every command the host link can have in flight (its only source of
    # commands; docs/boards.md "Resources": the board's queue is sized to the link's slots)
    assert core[0]["QDEPTH"] >= host[0]["NSLOT"]

    emus = _instances(v, "ats_nand_emu")
    assert len(emus) == ndie
    assert sorted(e["DIE_ID"] for e in emus) == list(range(ndie))
    dram_bytes = 512 << 20                      # the board's DDR3 (MT41K256M16: 4 Gbit)
    rows = cfg["blocks"] * cfg["pages_per_block"]
    spans = []
    for e in emus:
        word = e["DRAM_DW"] // 8
        assert e["DRAM_DW"] == 64               # half the 128-bit port (16-bit DDR3, 1:2, burst of 8)
        assert 1 << e["DRAM_AW"] == dram_bytes // word
        row_words = -(-(cfg["page_bytes"] + cfg["spare_bytes"]) // word)
        spans.append((e["DRAM_BASE"], e["DRAM_BASE"] + rows * row_words))
        assert (e["BLOCKS"], e["PAGES_PER_BLOCK"], e["PAGE_BYTES"], e["SPARE_BYTES"]) == \
            (cfg["blocks"], cfg["pages_per_block"], cfg["page_bytes"], cfg["spare_bytes"])
        assert e["CLK_PS"] == round(1e12 / cfg["sys_clk_hz"])
        assert e["SYNC_STAGES"] == 1            # the pins come from the core, on the same clock
        assert (e["T_R_NS"], e["T_PROG_NS"], e["T_BERS_NS"], e["ARRAY_TIME_DIV"]) == (40000, 200000, 2000000, 1)
    spans.sort()
    assert spans[0][0] * word >= 16 << 20      # above the CPU's main RAM
    assert spans[-1][1] * word <= dram_bytes
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans

    lpf = (board / "gateware" / "ecpix5.lpf").read_text()
    assert re.search(r'LOCATE COMP "pwr_fail_n" SITE "T25";', lpf)        # PMOD 0 pin 1
    assert re.search(r'IOBUF PORT "pwr_fail_n" .*PULLMODE=UP', lpf)
    assert 'FREQUENCY PORT "clk100" 100.0 MHz;' in lpf

    csr = json.loads((board / "csr.json").read_text())
    assert csr["csr_bases"]["ats"] == 0xF0008000                          # CSR_LOC 16 (soc/README.md)
    assert csr["constants"]["ats_udp_port"] == port
    assert csr["constants"]["ats_ndie"] == ndie
    assert "sdram" in csr["csr_bases"] and "ethphy" in csr["csr_bases"]


def _nm(path: Path, *args: str) -> list[tuple[str, str, str]]:
    out = subprocess.run(["riscv64-unknown-elf-nm", *args, str(path)], check=True, capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        rows.append((f[0], f[1], f[2]) if len(f) == 3 else ("", f[0], f[1]))
    return rows


def test_board_firmware(board):
    """The board's firmware initialises the DDR3 before its first main-RAM access (docs/boards.md
    "DDR3 initialisation"). No DRAM model runs here (there is no board simulation yet): this checks
    the link and the order, statically. The firmware is built as `make bitstream` builds it
    (soc/boards/build.py firmware_rom: LiteX's liblitedram sdram_init with soc/boards/fw/dram_init.c)
    and fits the board's ROM; _start calls ats_board_init (the board's, not crt0's empty default)
    before its first store and before it touches .data / .bss; ats_board_init calls sdram_init; the
    init objects refer to nothing but each other, the firmware's memset / memcpy and constants, and
    their variables lie in SRAM."""
    build = _build_module()
    info = build.firmware_rom(board, "ecpix5")
    rom = json.loads((board / "board.json").read_text())["rom_bytes"]
    assert 0 < info["text_data_bytes"] <= rom
    elf = board / "fw" / "firmware.elf"
    syms = {name: (int(addr, 16), kind) for addr, kind, name in _nm(elf) if addr}
    regions = (board / "software" / "include" / "generated" / "regions.ld").read_text()
    reg = {m.group(1): (int(m.group(2), 16), int(m.group(3), 16))
           for m in re.finditer(r"(\w+)\s*:\s*ORIGIN\s*=\s*0x([0-9a-f]+),\s*LENGTH\s*=\s*0x([0-9a-f]+)", regions)}
    sram0, sram_len = reg["sram"]
    main0, _ = reg["main_ram"]
    dis = subprocess.run(["riscv64-unknown-elf-objdump", "-d", "--no-show-raw-insn", str(elf)], check=True,
                         capture_output=True, text=True).stdout

    def body(fn: str) -> list[str]:
        m = re.search(rf"^[0-9a-f]+ <{fn}>:\n(.*?)(?:\n\n|\Z)", dis, re.S | re.M)
        assert m, fn
        return m.group(1).splitlines()

    start = body("_start")
    first_call = next(i for i, l in enumerate(start) if re.search(r"\b(jal|call)\b", l))
    assert "<ats_board_init>" in start[first_call], start[:first_call + 1]
    first_store = next(i for i, l in enumerate(start) if re.search(r"\bs[bhw]\b", l))
    first_data = next(i for i, l in enumerate(start) if re.search(rf"# {main0:x}\b|<_fdata>|<_fbss>|4000", l))
    assert first_call < first_store and first_call < first_data
    # the board's ats_board_init (dram_init.c), which calls sdram_init
    init = body("ats_board_init")
    assert any("<sdram_init>" in l for l in init), init
    assert "sdram_init" in syms and "read_dq_delay" in syms
    # the init objects: self-contained, their variables in SRAM
    objs = sorted((board / "fw_init").glob("*.o"))
    assert {o.stem for o in objs} == {"dram_init", "sdram", "accessors"}
    defined = {n for o in objs for _, k, n in _nm(o) if k not in "Uw"}
    undef = {n for o in objs for _, k, n in _nm(o, "-u")} - defined
    assert undef <= {"memset", "memcpy", "_fsram_bss", "_esram_bss"}, undef
    for o in objs:
        for _, k, n in _nm(o):
            if k in "bBdDsSgG" or k == "C":
                addr = syms[n][0]
                assert sram0 <= addr < sram0 + sram_len, (o.name, n, hex(addr))
    assert sram0 <= syms["_fsram_bss"][0] <= syms["_esram_bss"][0] <= sram0 + sram_len


def test_board_synth_check(board):
    gw = board / "gateware"
    work = board / "check"
    work.mkdir(exist_ok=True)
    ys = (gw / "ecpix5.ys").read_text()
    reads = [f"{l.rsplit(' ', 1)[0]} {tp(l.rsplit(' ', 1)[1])}" for l in ys.splitlines() if l.startswith("read_verilog")]
    core_top = tp(ROOT / "rtl" / "core" / "ats_ssd_core.sv")
    # the core's own files (not its packages) are left out: the core is a black box (its ports from
    # its top file), so the check costs a minute, not the core's half hour
    core_dirs = ("/rtl/cmdq/", "/rtl/wbuf/", "/rtl/backend/", "/rtl/core/", "remap_engine.v")
    core_nand = re.compile(r"/rtl/nand/(?!ats_gf_pkg|ats_nand_pkg)")
    keep = [l for l in reads if not any(d in l for d in core_dirs) and not core_nand.search(l)
            and not l.endswith("ecpix5.v")]
    script = "\n".join([
        "verilog_defines -DATS_ECP5_BRAM",
        "read_verilog -lib -specify +/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v",
        "verilog_defaults -push", "verilog_defaults -add -defer", *keep, "verilog_defaults -pop",
        f"read_verilog -sv -lib {core_top}",
        f"read_verilog -defer {tp(gw / 'ecpix5.v')}",
        "hierarchy -check -top ecpix5",
        # elaborated with the board's parameters above (their $fatal checks ran); mapped as blocks of
        # their own by synth/test_synth_check.py (nand_emu, udp_host): black boxes from here on
        "blackbox $paramod*ats_nand_emu $paramod*ats_udp_host",
        # up to the LUT mapping: ABC9 on the CPU, LiteDRAM and LiteEth alone costs minutes of CPU and
        # finds nothing that the steps before it have not (make bitstream maps everything)
        "synth_ecp5 -top ecpix5 -run :map_luts",
        "check",
        f"tee -q -o {tp(work / 'stat.json')} stat -json",
    ]) + "\n"
    (work / "check.ys").write_text(script)
    env = dict(os.environ, YOWASP_CACHE_DIR=str(ROOT / ".cache" / "yowasp"))
    p = subprocess.run([*_build_module().yosys_cmd(), "-q", "-l", tp(work / "yosys.log"), tp(work / "check.ys")],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    log = (work / "yosys.log").read_text(errors="replace") if (work / "yosys.log").exists() else ""
    errs = [l for l in (log + p.stdout + p.stderr).splitlines() if "ERROR" in l]
    assert p.returncode == 0, "Yosys check of the board failed:\n" + "\n".join(errs[:10] or [p.stderr[-2000:]])
    # the post-mapping check's problems (multiple drivers, logic loops, used-but-undriven wires), except
    # the CPU's: the VexRiscv Verilog of pythondata-cpu-vexriscv leaves a few unused plugin wires undriven
    check = log[log.rindex("Executing CHECK pass"):]
    check = check[:check.find("\n\n", check.find("Found and reported"))]
    problems = [l for l in check.splitlines() if l.startswith("Warning:")
                and not re.search(r"VexRiscv|DataCache|InstructionCache", l)]
    assert not problems, "\n".join(problems[:20])
    assert "Found and reported" in check
    cells = json.loads((work / "stat.json").read_text())["design"]["num_cells_by_type"]
    assert cells.get("ats_ssd_core") == 1                    # the black boxes
    assert sum(v for k, v in cells.items() if k.endswith("ats_nand_emu")) == 8
    assert sum(v for k, v in cells.items() if k.endswith("ats_udp_host")) == 1
    assert cells.get("DP16KD", 0) > 0 and sum(v for k, v in cells.items() if k.startswith("TRELLIS_FF")) > 0
    # the ECP5 DDR3 PHY's and the RGMII PHY's I/O primitives are there
    for prim in ("DQSBUFM", "ODDRX2F", "IDDRX1F", "EHXPLLL"):
        assert cells.get(prim, 0) > 0, (prim, sorted(cells))
    print(f"[board] check OK: {cells.get('DP16KD')} DP16KD outside the blocks")


def _arbiter_run(n_masters: int, seed: int, transfers: int, cycles: int, half: bool = False):
    """EmuPortArbiter (soc/boards/emu_arbiter.py) in migen's simulator: n_masters dies' engines as the
    emulator drives its port (one transfer of consecutive words at a time; a write's word is offered
    on wdata before its command, wdata.valid while a taken write's data is owed; read data always
    accepted), a crossbar port model behind it (random cmd.ready, each command's wdata.ready or
    rdata.valid some random cycles later in command order, as LiteDRAM's crossbar keeps one port's
    order; wdata is taken at ready without looking at valid, so the model fails if it is not valid),
    against a plain dict as the DRAM. Every read word must be what the master wrote there last.
    half: masters of half the slave's width (the board's 64-bit dies on the 128-bit port): the model
    merges each write by its byte enables, and a master's word a is half a & 1 of slave word a >> 1."""
    import random
    sys_path = [str(ROOT / "soc"), str(ROOT / "soc" / "boards")]
    import sys
    for p in sys_path:
        if p not in sys.path:
            sys.path.insert(0, p)
    from migen import run_simulation
    from litedram.common import LiteDRAMNativePort
    from emu_arbiter import EmuPortArbiter

    aw, dw = 12, 32
    rng = random.Random(seed)
    masters = [LiteDRAMNativePort("both", aw, dw) for _ in range(n_masters)]
    slave = LiteDRAMNativePort("both", aw - 1, 2 * dw) if half else LiteDRAMNativePort("both", aw, dw)
    sdw = slave.data_width
    dut = EmuPortArbiter(masters, slave)
    mem: dict[int, int] = {}
    state = {"done": 0, "words": 0, "errors": [], "grant_moves": 0}
    region = (1 << aw) // n_masters

    def master(i):
        r = random.Random(seed * 100 + i)
        shadow: dict[int, int] = {}            # what this master wrote (its own region)
        for _ in range(transfers):
            ln = r.randint(1, 12)
            base = i * region + r.randrange(region - ln)
            write = r.random() < 0.5 or not shadow
            if not write:                       # read words written before (else undefined)
                base = r.choice(sorted(shadow))
                ln = 1
                while ln < 12 and base + ln in shadow:
                    ln += 1
            data = [r.getrandbits(dw) for _ in range(ln)]
            issued = taken = got = 0
            while (taken if write else got) < ln:
                # this cycle's handshakes, from the values now visible
                fire = (yield masters[i].cmd.valid) and (yield masters[i].cmd.ready)
                wr = write and (yield masters[i].wdata.ready)
                rv = (not write) and (yield masters[i].rdata.valid)
                if wr:
                    assert (yield masters[i].wdata.valid), "wdata taken while not valid"
                    taken += 1
                if rv:
                    word = yield masters[i].rdata.data
                    if word != shadow[base + got]:
                        state["errors"].append((i, base + got, word, shadow[base + got]))
                    got += 1
                if fire:
                    issued += 1
                # next cycle's outputs
                offer = issued < ln and r.random() < 0.8
                yield masters[i].cmd.valid.eq(offer)
                yield masters[i].cmd.we.eq(write)
                yield masters[i].cmd.addr.eq(base + issued)
                yield masters[i].wdata.valid.eq(write and taken < issued + (1 if offer else 0))
                yield masters[i].wdata.data.eq(data[taken] if write and taken < ln else 0)
                yield masters[i].wdata.we.eq((1 << (dw // 8)) - 1)
                yield masters[i].rdata.ready.eq(1)
                yield
            if write:
                for k, w in enumerate(data):
                    shadow[base + k] = w
            state["words"] += ln
            for _ in range(r.randint(0, 3)):
                yield masters[i].cmd.valid.eq(0)
                yield
        state["done"] += 1

    def port():
        pend = []                               # [due cycle, we, addr] in command order
        t = 0
        while state["done"] < n_masters and t < cycles:
            fire = (yield slave.cmd.valid) and (yield slave.cmd.ready)
            if fire:
                we = yield slave.cmd.we
                addr = yield slave.cmd.addr
                due = max(t + rng.randint(1, 6), pend[-1][0] if pend else 0)
                pend.append([due, we, addr])
            if (yield slave.wdata.ready):
                assert (yield slave.wdata.valid), "the crossbar takes wdata at ready: it must be valid"
                data, we = (yield slave.wdata.data), (yield slave.wdata.we)
                old = mem.get(wd_addr, 0)
                mask = sum(0xFF << (8 * b) for b in range(sdw // 8) if (we >> b) & 1)
                mem[wd_addr] = (old & ~mask) | (data & mask)
            wd = rv = False
            if pend and pend[0][0] <= t + 1:
                _, we, addr = pend.pop(0)
                if we:
                    wd, wd_addr = True, addr
                else:
                    rv = True
                    yield slave.rdata.data.eq(mem.get(addr, 0))
            yield slave.wdata.ready.eq(wd)
            yield slave.rdata.valid.eq(rv)
            yield slave.cmd.ready.eq(rng.random() < 0.7)
            g = yield dut.grant
            yield
            t += 1
            if (yield dut.grant) != g:
                state["grant_moves"] += 1
        state["cycles"] = t

    wd_addr = 0
    run_simulation(dut, [master(i) for i in range(n_masters)] + [port()])
    return state


@pytest.mark.parametrize("n_masters,half", [(4, False), (4, True)])
def test_board_dram_arbiter(n_masters, half):
    """The dies' shared crossbar port (EmuPortArbiter): four masters with random transfers, gaps and
    port latencies; every read returns what its master wrote, no write data is taken invalid, every
    transfer completes (no hang) and the grant moves between the masters; also with masters of half
    the port's width (the board's dies)."""
    st = _arbiter_run(n_masters, seed=38, transfers=40, cycles=40000, half=half)
    assert not st["errors"], st["errors"][:5]
    assert st["done"] == n_masters, f"only {st['done']} of {n_masters} masters finished in {st['cycles']} cycles"
    assert st["grant_moves"] > 20
    print(f"[board] arbiter: {st['words']} words in {st['cycles']} cycles, {st['grant_moves']} grant moves")


def _build_module():
    """soc/boards/build.py, by path under a name of its own ("build" may already be sim/soc/build.py
    in this worker)."""
    spec = importlib.util.spec_from_file_location("ats_board_build", ROOT / "soc" / "boards" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_board_pnr_report():
    """build.py's reading of a nextpnr run (report.json's clocks, critical paths by block, router2
    congestion) and `--reuse-pnr`: a finished run on the same netlist (SHA-256) is read back, one on
    another netlist runs again. The figures below are worked out by hand from the synthetic report."""
    B = _build_module()
    gw = ROOT / "build" / "boards" / "test_ecpix5_pnr"          # build.py names its logs relative to ROOT
    shutil.rmtree(gw, ignore_errors=True)
    gw.mkdir(parents=True)
    (gw / "x.json").write_text("{}")
    sha = B.sha256(gw / "x.json")
    rep = {"fmax": {"sys": {"achieved": 71.234, "constraint": 75.0}, "eth": {"achieved": 190.0, "constraint": 125.0}},
           "utilization": {"TRELLIS_COMB": {"used": 76532, "available": 83640}},
           "critical_paths": [{"from": "sys", "to": "sys", "path": [
               {"type": "clk-to-q", "from": {"cell": "ats_ssd_core.u_nand.g_chan[2].u_page.u_rd.u_dec.r_q[3]_TRELLIS_FF_Q"},
                "to": {"cell": "ats_ssd_core.u_nand.g_chan[2].u_page.u_rd.u_dec.r_q[3]_TRELLIS_FF_Q"}, "delay": 0.5},
               {"type": "routing", "from": {"cell": "a"}, "to": {"cell": "b"}, "delay": 2.25},
               {"type": "logic", "from": {"cell": "b"}, "to": {"cell": "b"}, "delay": 0.75},
               {"type": "routing", "from": {"cell": "b"}, "to": {"cell": "sram.0.1_DIA0_LUT4_Z"}, "delay": 1.0}]}]}
    (gw / "nextpnr_seed1.json").write_text(json.dumps(rep))
    (gw / "nextpnr_seed1.log").write_text(
        "Info: \t        TRELLIS_COMB:   76532/  83640    91%\n"
        "Info:     iter=1 wires=1000 overused=300 overuse=420 archfail=NA\n"
        "Info:     iter=2 wires=990 overused=12 overuse=12 archfail=NA\n"
        "Info:     iter=3 wires=985 overused=0 overuse=0 archfail=0\n")
    same = ("nextpnr-ecp5 --json x.json --lpf x.lpf --textcfg x_seed1.config --seed 1 --timing-allow-fail "
            "--report nextpnr_seed1.json --threads 1 --placer heap --router router2 -l nextpnr_seed1.log -q")
    ran = []
    B.run = lambda cmd, cwd, logfile: ran.append(cmd) or (1, 0.0, 0.0)
    # a run of another command (here: the static placer) is not reused
    (gw / "nextpnr_seed1.result.json").write_text(json.dumps({"exit": 0, "wall_s": 10.0, "cpu_s": 9.5,
        "netlist_sha256": sha, "command": same.replace("--placer heap", "--placer sa")}))
    saved = {f: (gw / f).read_text() for f in ("nextpnr_seed1.json", "nextpnr_seed1.log")}
    r = B.nextpnr_seed(gw, "x", [], 1, 1, "heap", "router2", reuse=True, netlist_sha=sha)
    assert len(ran) == 1 and not r.get("reused") and r["exit"] == 1
    ran.clear()
    for f, t in saved.items():
        (gw / f).write_text(t)
    (gw / "nextpnr_seed1.result.json").write_text(json.dumps({"exit": 0, "wall_s": 10.0, "cpu_s": 9.5,
                                                              "netlist_sha256": sha, "command": same}))
    r = B.nextpnr_seed(gw, "x", [], 1, 1, "heap", "router2", reuse=True, netlist_sha=sha)
    assert ran == [] and r["reused"] and r["exit"] == 0 and r["cpu_s"] == 9.5
    assert r["fmax"] == {"sys": {"fmax_mhz": 71.23, "target_mhz": 75.0}, "eth": {"fmax_mhz": 190.0, "target_mhz": 125.0}}
    assert r["utilisation"]["TRELLIS_COMB"] == {"used": 76532, "avail": 83640, "pct": 92}
    cp, = r["critical_paths"]
    assert (cp["delay_ns"], cp["logic_ns"], cp["routing_ns"], cp["steps"]) == (4.5, 1.25, 3.25, 4)
    assert cp["source_block"] == "ats_ssd_core.u_nand.g_chan[2].u_page.u_rd.u_dec" and cp["sink_block"] == "sram"
    assert r["congestion"] == {"router2_iterations": 3, "first_overused_wires": 300, "first_overuse": 420,
                               "last_overused_wires": 0, "routed_wires": 985}
    assert B.block_of("litedramcore_roundrobin2_grant_TRELLIS_FF_Q") == "litex:litedramcore"
    # another netlist: nextpnr runs (the stub fails it: exit 1, the old report removed)
    r = B.nextpnr_seed(gw, "x", [], 1, 1, "heap", "router2", reuse=True, netlist_sha="0" * 64)
    assert len(ran) == 1 and not r["reused"] and r["exit"] == 1 and "fmax" not in r
    assert ran[0][ran[0].index("--placer") + 1] == "heap" and ran[0][ran[0].index("--router") + 1] == "router2"


def _sdf_name(s: str) -> str:
    """nextpnr's SDF escaping (common/kernel/sdf.cc escape_name)."""
    return "".join("\\" + c if c in "$\\[]:" else c for c in s)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sta_sdf(seed, tmp_path):
    """soc/boards/breakdown/sta_sdf.py (the worst paths of one clock from a placed design's SDF,
    docs/boards.md "Whole-device place and route") on a random netlist written as nextpnr-ecp5's
    SDF writer writes one (escaped names, INTERCONNECT / IOPATH / SETUPHOLD, two clocks, two setup
    checks a data pin, a register clocked by the other clock on the paths): its worst delay, failing
    endpoints and worst endpoint against a plain enumeration of every register-to-register path of
    the main clock; and with --exclude-launch, the same without one launching register."""
    import random
    import sys as _sys
    r = random.Random(seed)
    ff = [f"u_{c}.r$q[{i}]" for i, c in enumerate("ab" * 6)]          # 12 registers
    clk_of = {f: ("main" if i % 5 else "other") for i, f in enumerate(ff)}
    luts = [f"u_c.l_{i}:x" for i in range(25)]
    # a DAG: a LUT's inputs come from registers or earlier LUTs; each register's D from one LUT
    lut_in = {l: r.sample(ff + luts[:k], min(r.randint(1, 3), len(ff) + k)) for k, l in enumerate(luts)}
    d_src = {f: r.choice(luts) for f in ff}
    ic, io, setup = [], {}, {}
    cq = {f: r.randint(250, 450) for f in ff}
    for f in ff:
        ic.append((f"$gbuf$clk_{clk_of[f]}", "CLKO", f, "CLK", 0))
        setup[f] = r.randint(20, 120)
    net = {}                                              # (src, dst, pin) -> ps
    for l, srcs in lut_in.items():
        for k, s in enumerate(srcs):
            pin = "ABCD"[k]
            d = r.randint(0, 3000)
            ic.append((s, "Q" if s in ff else "F", l, pin, d))
            net[(s, l, pin)] = d
        io[l] = {("ABCD"[k]): r.randint(90, 160) for k in range(len(srcs))}
    for f, l in d_src.items():
        d = r.randint(0, 3000)
        ic.append((l, "F", f, "DI", d))
        net[(l, f, "DI")] = d
    lines = ['(DELAYFILE', '  (SDFVERSION "3.0")', '  (TIMESCALE 1ps)', '  (CELL', '    (CELLTYPE "top")',
             '    (INSTANCE )', '    (DELAY', '      (ABSOLUTE']
    for a, ap, b, bp, d in ic:
        lines.append(f"        (INTERCONNECT {_sdf_name(a + '/' + ap)} {_sdf_name(b + '/' + bp)} "
                     f"({d // 2}:{d * 3 // 4}:{d}) ({d // 3}:{d // 2}:{d - 1}))")
    lines += ['      )', '    )', '  )']
    for f in ff:
        lines += ['  (CELL', '    (CELLTYPE "TRELLIS_FF")', f'    (INSTANCE {_sdf_name(f)})', '    (DELAY',
                  '      (ABSOLUTE', f'        (IOPATH CLK Q ({cq[f]}:{cq[f]}:{cq[f]}) (1:1:{cq[f] - 5}))',
                  '      )', '    )', '    (TIMINGCHECK']
        for e in ("posedge", "negedge"):
            lines.append(f'      (SETUPHOLD ({e} DI) (posedge CLK) ({setup[f]}:{setup[f]}:{setup[f]}) (-5:0:5))')
        lines += ['    )', '  )']
    for l in luts:
        lines += ['  (CELL', '    (CELLTYPE "TRELLIS_COMB")', f'    (INSTANCE {_sdf_name(l)})', '    (DELAY',
                  '      (ABSOLUTE']
        lines += [f'        (IOPATH {p} F (1:2:{d}) (1:2:{d - 3}))' for p, d in io[l].items()]
        lines += ['      )', '    )', '  )']
    lines.append(')')
    sdf = tmp_path / "t.sdf"
    sdf.write_text("\n".join(lines) + "\n")

    # reference: every path from a main-clock register through LUTs to a main-clock register's D
    def arrivals(excl):
        best = {}                                         # endpoint register -> (delay, launch)

        def walk(node, t, launch):                        # node: a LUT; t: arrival at its output
            for f, l in d_src.items():
                if l == node and clk_of[f] == "main":
                    tot = t + net[(l, f, "DI")] + setup[f]
                    if tot > best.get(f, (-1, None))[0]:
                        best[f] = (tot, launch)
            for l2, srcs in lut_in.items():
                for k, s in enumerate(srcs):
                    if s == node:
                        walk(l2, t + net[(s, l2, "ABCD"[k])] + io[l2]["ABCD"[k]], launch)
        for f in ff:
            if clk_of[f] == "main" and f not in excl:
                walk(f, cq[f], f)
        return best
    period = 6.0
    first = arrivals([])
    for excl in ([], [first[max(first, key=lambda f: first[f][0])][1]]):   # then without the worst's launch
        best = arrivals(excl)
        worst = max(v[0] for v in best.values())
        out = tmp_path / "o.json"
        cmd = [_sys.executable, str(ROOT / "soc" / "boards" / "breakdown" / "sta_sdf.py"), str(sdf),
               "--period-ns", str(period), "--clock-driver", "clk_main", "--json", str(out), "--top", "3"]
        for e in excl:
            cmd += ["--exclude-launch", e]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        got = json.loads(out.read_text())
        assert got["clock_driver"] == "$gbuf$clk_main/CLKO"
        assert got["endpoints"] == len(best)
        assert got["worst_ns"] == round(worst / 1000, 3), (got["worst_ns"], worst)
        assert got["failing_endpoints"] == sum(v[0] > period * 1000 for v in best.values())
        top = max(best, key=lambda f: best[f][0])
        assert got["paths"][0]["endpoint"] == f"{top}/DI"
        assert got["paths"][0]["path"][0]["to"] == f"{best[top][1]}/CLK"
