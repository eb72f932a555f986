rtl/nvme/ats_nvme_regs.sv
rtl/nvme/ats_nvme_bar.sv
