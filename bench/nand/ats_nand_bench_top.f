bench/nand/ats_nand_bench_top.sv
bench/nand/ats_nand_bench_adapter.sv
bench/nand/ats_nand_bench_cpl_merge.sv
rtl/common/ats_sim_cgate.sv
rtl/nand/ats_nand_sched.sv
rtl/nand/ats_nand_chan.sv
sim/nand/ats_nand_die.sv
