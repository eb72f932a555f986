rtl/nvme/ats_nvme_arb2.sv
