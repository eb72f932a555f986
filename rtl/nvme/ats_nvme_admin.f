rtl/common/ats_host_pkg.sv
rtl/nvme/ats_nvme_pkg.sv
rtl/nvme/ats_nvme_admin.sv
