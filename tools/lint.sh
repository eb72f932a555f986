#!/usr/bin/env bash
# make lint: Verilator -Wall lint of every RTL source (hand-written rtl/ and generated build/gen/).
# The configurations are linted $JOBS at a time (default: the number of cores); each one's output
# is printed whole, in the listed order, and the script fails if any of them failed.
# Usage: tools/lint.sh (every list) or tools/lint.sh LIST.f... (only these; make check BLOCK=).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="${JOBS:-$(nproc)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tops=() lists=()
add_gen() {   # a generated block's sources.f: its top is its first file's name
  v="$(head -1 "$1")"; tops+=("$(basename "$v" .v)"); lists+=("$1")
}
if [ "$#" -gt 0 ]; then
  # `tools/lint.sh LIST.f...` (make check BLOCK=...): only these lists
  for f in "$@"; do
    case "$f" in */sources.f) add_gen "$f" ;; *) tops+=("$(basename "$f" .f)"); lists+=("$f") ;; esac
  done
else
  # hand-written blocks and simulation models: one .f file list per top, named like the top
  for f in $(find rtl sim bench -name '*.f' 2>/dev/null | sort); do
    tops+=("$(basename "$f" .f)"); lists+=("$f")
  done
  # generated blocks: every build/gen/<block>_<preset>/ with its sources.f (paths from the repo root)
  for d in build/gen/*/; do
    [ -f "$d/sources.f" ] || continue
    add_gen "$d/sources.f"
  done
fi
# each list flattened by the parser the tests and synthesis use (cocotb_tests/lib/atstb/filelist.py:
# nested `-f` lists resolved, each file once), so Verilator reads what they read
lint_one() {   # index top file-list
  { echo "[lint] $2 ($3)"; python3 cocotb_tests/lib/atstb/filelist.py "$3" > "$tmp/$1.f" &&
    verilator --lint-only -Wall --top-module "$2" rtl/lint/*.vlt -f "$tmp/$1.f"; } \
    > "$tmp/$1.log" 2>&1 || touch "$tmp/$1.fail"
}
for i in "${!tops[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  lint_one "$i" "${tops[$i]}" "${lists[$i]}" &
done
wait
failed=0
for i in "${!tops[@]}"; do
  cat "$tmp/$i.log"
  if [ -e "$tmp/$i.fail" ]; then echo "[lint] FAILED: ${tops[$i]} (${lists[$i]})"; failed=$((failed+1)); fi
done
[ "$failed" -eq 0 ] || { echo "[lint] $failed of ${#tops[@]} configurations failed"; exit 1; }
echo "[lint] ${#tops[@]} configurations clean"
