rtl/common/ats_ram_sdp.sv
rtl/nvme/ats_nvme_prp.sv
