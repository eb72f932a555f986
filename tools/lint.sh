#!/usr/bin/env bash
# make lint: Verilator -Wall lint of every RTL source (hand-written rtl/ and generated build/gen/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
n=0
# hand-written blocks and simulation models: one .f file list per top, named like the top
for f in $(find rtl sim bench -name '*.f' 2>/dev/null | sort); do
  top="$(basename "$f" .f)"
  echo "[lint] $top ($f)"
  verilator --lint-only -Wall --top-module "$top" rtl/lint/*.vlt -f "$f"
  n=$((n+1))
done
# generated blocks: every build/gen/<block>_<preset>/ with its sources.f (paths from the repo root)
for d in build/gen/*/; do
  [ -f "$d/sources.f" ] || continue
  v="$(head -1 "$d/sources.f")"
  top="$(basename "$v" .v)"
  echo "[lint] $top ($d)"
  verilator --lint-only -Wall --top-module "$top" rtl/lint/*.vlt -f "$d/sources.f"
  n=$((n+1))
done
echo "[lint] $n configurations clean"
