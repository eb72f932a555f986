rtl/nand/ats_nand_chan.sv
