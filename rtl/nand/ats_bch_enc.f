rtl/nand/ats_bch_enc.sv
