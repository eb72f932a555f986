rtl/common/ats_host_pkg.sv
rtl/common/ats_ram_sdp.sv
rtl/wbuf/ats_wbuf_mem.sv
rtl/wbuf/ats_wbuf_rmiss.sv
rtl/wbuf/ats_wbuf_cpl.sv
rtl/wbuf/ats_wbuf_frag.sv
rtl/wbuf/ats_wbuf.sv
