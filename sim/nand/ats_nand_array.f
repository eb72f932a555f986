sim/nand/ats_nand_die.sv
sim/nand/ats_nand_array.sv
