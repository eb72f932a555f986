rtl/nand_emu/ats_nand_emu.sv
