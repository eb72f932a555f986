rtl/common/ats_host_pkg.sv
rtl/soc/ats_admin.sv
