rtl/nand/ats_nand_sched.sv
