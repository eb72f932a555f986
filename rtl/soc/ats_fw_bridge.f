rtl/soc/ats_fw_bridge.sv
rtl/common/ats_sim_cgate.sv
