rtl/common/ats_ram_sdp.sv
rtl/nand/ats_gf_pkg.sv
rtl/nand/ats_bch_bm.sv
rtl/nand/ats_bch_enc.sv
rtl/nand/ats_bch_dec.sv
rtl/nand/ats_nand_chan.sv
rtl/nand/ats_nand_page.sv
