rtl/common/ats_ram_sdp.sv
