# atomssd top-level Makefile. A newcomer types `make demo` or `make test`; both set up first.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
ROOT := $(abspath .)
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
SETUP_STAMP := .stamps/setup
export PATH := $(VENV)/bin:$(PATH)
export YOWASP_CACHE_DIR := $(ROOT)/.cache/yowasp
export OBJCACHE := ccache
export CCACHE_DIR := $(ROOT)/.cache/ccache
JOBS ?= 2

.PHONY: attach help setup gen lint synth-check formal check test test-rtl test-harness test-long demo demo-remap sim-soc regs synth-soc wave-remap bench-remap bench-nand bench-order bench-rflush bench-rflush-regimes bench-core bench-recovery bench-recovery-old bench-tx bench-atomic bench-difftx bench-sata bench-sim wave-core synth results bitstream prog clean distclean

help:
	@echo "make demo        the simulated SSD: boot, transactions, power cut in a commit, recovery, stats, FST (sets up first)"
	@echo "make demo-remap  remap engine commit scenario: latency table + waveform"
	@echo "make attach      the simulated SSD as an ext4 mount (root); BOARD_ADDR=HOST[:PORT]: a board over UDP"
	@echo "make test        lint, generation, synthesis check, every cocotb test (sets up first)"
	@echo "make formal      SymbiYosys proofs of the stream blocks (formal/, also in make test)"
	@echo "make check BLOCK=<name>  one block's lint, cocotb tests, synthesis check and proofs (e.g. BLOCK=wbuf)"
	@echo "make test-long   longer random campaigns (ATS_LONG=1; core power cuts: 2,000)"
	@echo "make wave-remap  commit scenario with FST + GTKWave save file under build/waves/"
	@echo "make bench-remap B1: commit-remap latency from the FST -> build/bench/remap.json"
	@echo "make bench-nand  B7: NAND bandwidth vs channels x ways (NAND_PRESET=femu) -> build/bench/nand.json, nand.png"
	@echo "make bench-order B2: 4 KiB random writes orderless/barrier/wait-on-transfer/transfer-and-flush -> build/bench/order.json"
	@echo "make bench-rflush B3: 1 syncing + 12 bulk writers, FLUSH/RFLUSH/NOFLUSH fsync sweep -> build/bench/rflush.json"
	@echo "make bench-rflush-regimes B3 across flash speed and buffer size (hours of CPU) -> build/bench/rflush_regimes.json"
	@echo "make bench-recovery B5: recovery time vs capacity (256 MiB..4 GiB) and active log, full-system sim -> build/bench/recovery.json, recovery.png"
	@echo "make bench-recovery-old B5 after a checkpoint mid-block: Old pages search vs from page 0, same images -> build/bench/recovery_old.json"
	@echo "make bench-tx    B6: tx writes vs plain writes vs host data journaling, fsync every 1/10/100/1000, NVMe front end, full-system sim -> build/bench/tx.json, tx.png"
	@echo "make bench-atomic issue 39: NVMe atomic writes vs plain, SWRITE vs txid + COMMIT, doublewrite vs atomic page store, full-system sim -> build/bench/atomic.json"
	@echo "make bench-difftx B4: DiffTx shapes (varmail, TPC-C, fileserver, webproxy): S-Log (b5_256_slog: 64 FRAG slots, 8 transactions in flight beside one at a time) / full-page shadowing / host data journaling, WA, NAND bytes a tx, tx/s, full-system sim -> build/bench/difftx.json"
	@echo "make bench-sim   full-system simulation speed (M cycles per CPU s) by phase vs 5a048bf, exactness vs the synthesis form -> build/bench/sim.json"
	@echo "make bench-core  through the whole device core with NAND die models: B1 TX_COMMIT cycles, B2, 4 KiB random write/read IOPS -> build/bench/core.json"
	@echo "make wave-core   one TX_COMMIT of 8 pages through the device core: FST + GTKWave save files -> build/waves/core_commit.*"
	@echo "make synth       Yosys + nextpnr-ecp5 (LFE5U-85F-6, out of context, seeds SEEDS=1,2,3): LUT/FF/BRAM/Fmax"
	@echo "make synth-soc   the whole SoC (default device 4 x 2, VexRiscv, LiteDRAM controller) on the LFE5U-85F -> build/synth/summary.json 'soc'"
	@echo "make bitstream BOARD=ecpix5  the whole device on the ECPIX-5 85F: bitstream + report.json -> build/boards/ecpix5/ (docs/boards.md)"
	@echo "make prog BOARD=ecpix5       load that bitstream with openFPGALoader"
	@echo "make results    docs/results.md from docs/results/*.json (tools/results.py; update an area from a bench JSON first)"
	@echo "make setup       install everything (apt, .venv, Maven cache); idempotent"

# ---- setup: runs once (stamp), again when its inputs change --------------------------------------
setup:
	bash tools/setup.sh
	mkdir -p $(dir $(SETUP_STAMP)) && touch $(SETUP_STAMP)

$(SETUP_STAMP): tools/setup.sh tools/requirements.txt tools/constraints.txt spinal/pom.xml
	$(MAKE) setup

# ---- SpinalHDL generation -> build/gen/<block>_<preset>/ -----------------------------------------
SCALA_SRC := $(shell find spinal/src -name '*.scala')
GEN_STAMP := build/gen/.stamp
$(GEN_STAMP): $(SETUP_STAMP) $(SCALA_SRC) spinal/pom.xml
	cd spinal && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
	rm -rf build/gen && mkdir -p build/gen
	java -cp spinal/target/classes:$$(cat spinal/target/cp.txt) atomssd.remap.RemapEngineVerilog build/gen \
	  > build/gen/spinal.log 2>&1 || { cat build/gen/spinal.log; exit 1; }
	touch $@
# the host command contract's C header (and the remap engine's codes) from rtl/common/ats_host_pkg.sv
# and params.json: build/gen/include/ats_host.h, ats_remap.h (tools/contract.py; the firmware, libatstx
# and the core bench also make them before they compile)
HOST_H := build/gen/include/ats_host.h
$(HOST_H): $(GEN_STAMP) rtl/common/ats_host_pkg.sv tools/contract.py
	$(PY) tools/contract.py --require-remap
gen: $(GEN_STAMP) $(HOST_H)

# ---- checks --------------------------------------------------------------------------------------
lint: $(GEN_STAMP)
	bash tools/lint.sh

synth-check: $(GEN_STAMP)
	$(PY) synth/run_synth.py --all --check --jobs $(JOBS)

# `make test` puts the per-block synthesis checks (synth/test_synth_check.py, the same checks as
# synth-check) into this pytest-xdist pool: both cores stay busy, no serial synthesis step first.
# the full-system simulation (SoC Verilog, Verilated harness, firmware); its tests (tests/system,
# tests/attach, sw/host/tests) share it and build it themselves under build/soc/.build.lock when it is
# missing or stale, so `make test` builds it inside the pytest pool (while the other worker runs
# cocotb items) rather than in a serial step before it
sim-soc: $(GEN_STAMP)
	$(PY) sim/soc/build.py
	$(PY) sim/soc/build.py --nvme --no-firmware

# docs/registers.md is the sim configuration's generated register document (soc/regmap.py)
regs: sim-soc
	cp build/soc/sim/registers.md docs/registers.md

# docs/results.md, the current figures, is rendered from docs/results/*.json (tools/results.py;
# `python tools/results.py update <area> build/bench/<x>.json` refreshes an area from a bench run);
# tests/system/test_results_doc.py checks that it is current
results:
	$(PY) tools/results.py render

test-rtl: $(GEN_STAMP) $(HOST_H)
	rm -rf build/system
	$(PY) -m pytest -n $(JOBS) --maxschedchunk 1 -q cocotb_tests bench/ssd/test_bench_ssd.py sw/firmware/tests sw/host/tests sim/board tests/system tests/attach formal/test_formal.py $(SYNTH_TESTS)

# SymbiYosys proofs of the small stream blocks and their mutants (formal/README.md; also in make test)
formal: $(SETUP_STAMP)
	$(PY) -m pytest -q formal/test_formal.py

# one block (a synth/blocks.json name or its top without ats_): its .f list's lint, its cocotb tests
# (-n JOBS), its Yosys check and the proofs of the blocks in its list; prints what it ran
check: $(GEN_STAMP)
	$(PY) tools/check_block.py "$(BLOCK)" --jobs $(JOBS)

test-harness: $(SETUP_STAMP)
	$(MAKE) -f sim/nand/harness.mk

test: SYNTH_TESTS = synth/test_synth_check.py synth/test_equiv_rev.py
test: $(SETUP_STAMP) lint test-harness test-rtl
	$(PY) cocotb_tests/ats_ssd_core/cut_summary.py
	$(PY) tests/system/summary.py
	@echo "make test: all checks passed"

test-long: $(GEN_STAMP) $(HOST_H)
	rm -rf build/system
	ATS_LONG=1 ATS_WL_CHECK=1 $(PY) -m pytest -n $(JOBS) --maxschedchunk 1 -q cocotb_tests bench/ssd/test_bench_ssd.py sw/firmware/tests sw/host/tests tests/system tests/attach
	$(PY) cocotb_tests/ats_ssd_core/cut_summary.py
	$(PY) tests/system/summary.py

# ---- demo, waveforms, benchmarks, synthesis ------------------------------------------------------
# the simulated SSD's main job: boot (format), transactions, a power cut inside a commit, recovery,
# committed transactions whole and the cut one gone, statistics, an FST of a commit (sim/soc/demo.py)
# BOARD=ecpix5-sim: the ECPIX-5 board SoC in Verilator instead (sim/board/demo_board.py)
demo: $(GEN_STAMP)
ifeq ($(BOARD),ecpix5-sim)
	$(PY) sim/board/demo_board.py
else
	$(PY) sim/soc/demo.py
endif

# the remap engine's commit scenario (the demo before the SoC existed)
demo-remap: $(GEN_STAMP)
	$(PY) bench/remap/bench_remap.py --preset default --sizes 1,8,16,32,64 \
	  --gtkw build/waves/remap_commit_default.gtkw

wave-remap: $(GEN_STAMP)
	$(PY) bench/remap/bench_remap.py --preset bench --sizes 1,8,64,512,1024,4096 \
	  --gtkw build/waves/remap_commit.gtkw --check-gtkw sim/waves/remap_commit.gtkw

SEEDS ?= 1,2,3
build/synth/remap/report.json: $(GEN_STAMP) rtl/common/ats_ram_sdp.sv
	$(PY) synth/run_synth.py --all --only remap --seeds $(SEEDS)

bench-remap: $(GEN_STAMP) build/synth/remap/report.json
	$(PY) bench/remap/bench_remap.py --preset bench --sizes 1,8,64,512,1024,4096 --json build/bench/remap.json

NAND_PRESET ?= femu
bench-nand: $(SETUP_STAMP)
	$(PY) bench/nand/bench_nand.py --preset $(NAND_PRESET)

bench-order: $(SETUP_STAMP)
	$(PY) bench/order/bench_order.py --jobs $(JOBS)

bench-rflush: $(SETUP_STAMP)
	$(PY) bench/rflush/bench_rflush.py --jobs $(JOBS)

# B3 on devices whose flash programs slower or faster than the write buffer fills (slots:channels,
# 4 ways each); bench/rflush/README.md "Both of the paper's figures in one configuration". --reuse
# skips runs of this target whose result (same run name and configuration) is already there.
RFLUSH_REGIMES ?= 512:6 512:5 512:4 1024:6 1024:5
bench-rflush-regimes: $(SETUP_STAMP)
	set -e; for r in $(RFLUSH_REGIMES); do s=$${r%%:*}; c=$${r##*:}; \
	  $(PY) bench/rflush/bench_rflush.py --slots $$s --chan $$c --ways 4 --periods-kib 4,16 \
	    --modes flush,rflush --min-syncs 6 --max-window-ms 40 --jobs $(JOBS) --reuse \
	    --json build/bench/rflush_s$${s}_c$$c.json --plot build/bench/rflush_s$${s}_c$$c.png; done
	$(PY) bench/rflush/regimes.py $(foreach r,$(RFLUSH_REGIMES),build/bench/rflush_s$(firstword $(subst :, ,$(r)))_c$(lastword $(subst :, ,$(r))).json) \
	  --plot build/bench/rflush_regimes.png --out build/bench/rflush_regimes.json

# the whole device core (ats_ssd_core + NAND die models) in a Verilator C++ harness: bench/core/README.md
bench-core: $(GEN_STAMP)
	$(PY) bench/core/bench_core.py --jobs $(JOBS)

# B5: power cut and recovery on the full-system simulation, capacity and active-log sweeps
# (bench/recovery/README.md)
bench-recovery: $(GEN_STAMP)
	$(PY) bench/recovery/bench_recovery.py --jobs $(JOBS)

# B5 after a checkpoint mid-block: the same images recovered with the Old pages search and from
# page 0 (bench/recovery/README.md "Old pages")
bench-recovery-old: $(GEN_STAMP)
	$(PY) bench/recovery/bench_old_pages.py --jobs $(JOBS)

bench-tx: $(GEN_STAMP)
	$(PY) bench/tx/bench_tx.py --jobs $(JOBS)

# issue 39 item 7: atomic writes, static transactions, a doublewrite page store (bench/atomic/README.md)
bench-atomic: $(GEN_STAMP)
	$(PY) bench/atomic/bench_atomic.py

# B4 (issue 40): DiffTx's workload shapes, S-Log (not built) vs full-page shadowing vs host data
# journaling (bench/difftx/README.md)
bench-difftx: $(GEN_STAMP)
	$(PY) bench/difftx/bench_difftx.py --jobs $(JOBS)

# issue 15: 4 KiB random R/W IOPS at NCQ depth 32, SATA front end vs its link limit and vs the NVMe
# front end on the same ideal core (bench/sata/README.md)
bench-sata: $(SETUP_STAMP)
	$(PY) bench/sata/bench_sata.py --jobs $(JOBS)

# issue 35: the full-system simulation's speed by phase (boot, I/O, idle, recovery; host-port and
# NVMe builds) against a baseline commit, and the RTL's simulation forms checked exact against
# their synthesis forms (bench/sim/README.md)
# (ATS_SIM_PGO=1: the simulators compiled with PGO, as make attach's: sim/soc/README.md "PGO")
bench-sim: $(GEN_STAMP)
	ATS_SIM_PGO=1 $(PY) bench/sim/bench_sim.py

# one TX_COMMIT of 8 durable pages through the core, traced around the commit (bench/core/README.md)
wave-core: $(GEN_STAMP)
	$(PY) bench/core/bench_core.py --wave

synth: $(GEN_STAMP)
	$(PY) synth/run_synth.py --all --seeds $(SEEDS)

# the whole SoC of the default device (VexRiscv, LiteDRAM controller without L2 cache, 4 x 2 core,
# firmware in ROM) -> build/synth/soc/report.json and the entry `soc` of build/synth/summary.json
# (about 40 minutes; README "Synthesis of the SoC")
synth-soc: $(GEN_STAMP)
	$(PY) synth/synth_soc.py --seed 1 --threads 1 --l2-cache 0

# the whole device on a board (docs/boards.md; soc/boards/build.py): the board SoC, the firmware in its
# ROM, Yosys, nextpnr-ecp5 at seeds BOARD_SEEDS (BOARD_JOBS at once, one thread each), ecppack -> build/boards/$(BOARD)/
# (bitstream, report.json); `make prog` loads it with openFPGALoader
BOARD ?= ecpix5
BOARD_SEEDS ?= 1,2,3
BOARD_JOBS ?= 3
bitstream: $(GEN_STAMP)
	$(PY) soc/boards/build.py --board $(BOARD) --seeds $(BOARD_SEEDS) --threads 1 --jobs $(BOARD_JOBS)
prog:
	$(PY) soc/boards/build.py --board $(BOARD) --prog

clean:
	rm -rf build
distclean: clean
	rm -rf .venv .cache .stamps spinal/target

# host attach (docs/host-attach.md): the simulated device as an ext4 mount until Ctrl-C (needs root,
# /dev/fuse and loop devices); BOARD_ADDR=HOST[:PORT]: a board over its UDP host link instead (no simulator)
attach: $(SETUP_STAMP) $(if $(BOARD_ADDR),,$(GEN_STAMP))
ifeq ($(BOARD_ADDR),)
	cd sw/host && ATS_SIM_PGO=1 $(PY) -m atomssd.attach --dir $(ROOT)/build/attach/dev --mount $(ROOT)/build/attach/fs
else
	cd sw/host && $(PY) -m atomssd.attach --board $(BOARD_ADDR) --dir $(ROOT)/build/attach/board --mount $(ROOT)/build/attach/fs $(if $(MKFS),--mkfs)
endif
