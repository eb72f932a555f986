rtl/common/ats_stream_check.sv
