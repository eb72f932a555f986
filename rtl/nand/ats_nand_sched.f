rtl/common/ats_sim_cgate.sv
rtl/nand/ats_nand_sched.sv
