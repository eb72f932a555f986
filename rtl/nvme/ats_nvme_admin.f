rtl/nvme/ats_nvme_admin.sv
