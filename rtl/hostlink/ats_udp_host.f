rtl/common/ats_host_pkg.sv
rtl/hostlink/ats_udp_host_ram.sv
rtl/hostlink/ats_udp_host_rd.sv
rtl/hostlink/ats_udp_host.sv
