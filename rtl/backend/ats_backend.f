rtl/common/ats_host_pkg.sv
rtl/common/ats_ram_sdp.sv
rtl/wbuf/ats_wbuf_mem.sv
rtl/backend/ats_backend_vcount.sv
rtl/backend/ats_backend_fetch.sv
rtl/backend/ats_backend_read.sv
rtl/backend/ats_backend_fw.sv
rtl/backend/ats_backend.sv
