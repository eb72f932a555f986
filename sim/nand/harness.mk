# Plain Verilator C++ harness for the NAND die model (no cocotb): builds and runs the store's
# journal test (journal_test.cpp, plain C++), the smoke sequence of harness_main.cpp, then a misuse
# run that must fail. From the repository root:
#   make -f sim/nand/harness.mk                    # build + run (build/sim/ats_nand_die/harness/)
#   make -f sim/nand/harness.mk NAND_OUT=/tmp/x    # elsewhere (the directory is created)
# Another design includes the model the same way: ats_nand_die.sv + ats_nand_store.cpp on the
# Verilator command line and -CFLAGS -I<sim/nand>.
VERILATOR ?= $(if $(wildcard .venv/bin/verilator),.venv/bin/verilator,verilator)
NAND_DIR  ?= sim/nand
NAND_OUT  ?= build/sim/ats_nand_die/harness
NAND_GEOM := -GPLANES=2 -GBLOCKS=16 -GPAGES_PER_BLOCK=8 -GPAGE_BYTES=512 -GSPARE_BYTES=16 -GARRAY_TIME_DIV=100

.PHONY: nand-harness
nand-harness: $(NAND_OUT)/harness $(NAND_OUT)/journal_test
	cd $(NAND_OUT) && ./journal_test .
	cd $(NAND_OUT) && ./harness +save=die0.img
	@# default reporting is loud: one protocol violation must end the run with a non-zero exit status
	cd $(NAND_OUT) && if ./harness +misuse > misuse.log 2>&1; then \
	  cat misuse.log; echo "FAIL: the misuse run exited 0"; exit 1; fi; \
	  grep -q "NAND protocol violation" misuse.log && echo "misuse run failed as it must (see $(NAND_OUT)/misuse.log)"

# the store's journal, without a simulator (journal_test.cpp)
$(NAND_OUT)/journal_test: $(NAND_DIR)/journal_test.cpp $(NAND_DIR)/ats_nand_store.cpp $(NAND_DIR)/ats_nand_store.h
	mkdir -p $(NAND_OUT)
	$(CXX) -std=c++17 -O1 -Wall -I$(NAND_DIR) -o $@ $(NAND_DIR)/journal_test.cpp $(NAND_DIR)/ats_nand_store.cpp

$(NAND_OUT)/harness: $(NAND_DIR)/ats_nand_die.sv $(NAND_DIR)/ats_nand_store.cpp $(NAND_DIR)/ats_nand_store.h $(NAND_DIR)/harness_main.cpp
	mkdir -p $(NAND_OUT)
	$(VERILATOR) --cc --exe --build -j 2 -Mdir $(NAND_OUT) --top-module ats_nand_die -o harness \
	  -Wno-fatal -Wno-lint -Wno-style $(NAND_GEOM) -CFLAGS -I$(abspath $(NAND_DIR)) \
	  $(NAND_DIR)/ats_nand_die.sv $(abspath $(NAND_DIR)/ats_nand_store.cpp) $(abspath $(NAND_DIR)/harness_main.cpp)
