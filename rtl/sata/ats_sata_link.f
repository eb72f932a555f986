rtl/common/ats_ram_sdp.sv
rtl/sata/ats_sata_pkg.sv
rtl/sata/ats_sata_rx_fifo.sv
rtl/sata/ats_sata_link.sv
