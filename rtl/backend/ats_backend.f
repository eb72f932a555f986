rtl/common/ats_ram_sdp.sv
rtl/wbuf/ats_wbuf_mem.sv
rtl/backend/ats_backend.sv
