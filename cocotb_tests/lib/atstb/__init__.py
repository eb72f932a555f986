"""atstb: shared cocotb testbench library of atomssd (stream drivers, runner, reference models)."""
