rtl/common/ats_host_pkg.sv
rtl/backend/ats_backend_slog.sv
