rtl/common/ats_sim_cgate.sv
rtl/soc/ats_wait.sv
