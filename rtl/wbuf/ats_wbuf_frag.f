rtl/common/ats_ram_sdp.sv
rtl/wbuf/ats_wbuf_mem.sv
rtl/wbuf/ats_wbuf_frag.sv
