rtl/common/ats_ram_sdp.sv
rtl/nand/ats_gf_pkg.sv
rtl/nand/ats_bch_bm.sv
rtl/nand/ats_bch_bm_arb.sv
rtl/nand/ats_bch_dec.sv
