rtl/common/ats_host_pkg.sv
rtl/cmdq/ats_cmdq.sv
