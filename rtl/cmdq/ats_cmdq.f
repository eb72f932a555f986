rtl/cmdq/ats_cmdq.sv
