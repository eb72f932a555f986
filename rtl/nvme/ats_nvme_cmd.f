rtl/nvme/ats_nvme_cmd.sv
