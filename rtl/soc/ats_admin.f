rtl/soc/ats_admin.sv
