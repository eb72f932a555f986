rtl/soc/ats_fw_bridge.sv
