sim/nand/ats_nand_die.sv
