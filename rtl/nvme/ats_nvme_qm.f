rtl/nvme/ats_nvme_qm.sv
