rtl/wbuf/ats_wbuf_frag.sv
