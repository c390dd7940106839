#!/usr/bin/env bash
# Instructions per allocation that the profiler hook adds while the profiler is
# off, and while it byte-samples at 512 KiB (both against the hook compiled
# out), counted by callgrind: deterministic, unlike time on a shared machine.
# Needs valgrind (Debian package) and a build (build/, or the one --build names).
# Usage: scripts/alloc_hook_instructions.sh [N] [--json FILE] [--build DIR]   (default N = 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=1000000
json=""
build=build
bad() { echo "scripts/alloc_hook_instructions.sh: $1" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --json|--build) (($# >= 2)) || bad "$1 needs a value"
      if [[ $1 == --json ]]; then json=$2; else build=$2; fi
      shift 2 ;;
    *) n=$1; shift ;;
  esac
done
[[ $n =~ ^[1-9][0-9]{0,9}$ ]] || bad "N '$n' is not a positive whole number (allocations to count)"
[[ -x "$build/bench/benchfp_alloc_instructions" ]] || bad "no $build/bench/benchfp_alloc_instructions (build it first)"
command -v valgrind > /dev/null || bad "valgrind is not installed (Debian package valgrind)"
count() {  # count VARIANT COUNT -> total instructions of the run
  # valgrind exits with the program's status: a program that refused its input
  # (BENCHFP_POOL_RELEASE_BYTES, exit 2) or failed has its message shown, not a
  # count made of nothing.
  local out status=0
  out=$(valgrind --tool=callgrind --smc-check=all --callgrind-out-file=/dev/null "$build/bench/benchfp_alloc_instructions" "$1" "$2" 2>&1) ||
    status=$?
  if ((status != 0)); then
    grep -v '^==[0-9]*==' <<< "$out" >&2 || true
    bad "benchfp_alloc_instructions $1 $2 exited with status $status"
  fi
  local total
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<< "$out")
  [[ $total =~ ^[0-9]+$ ]] || bad "callgrind gave no instruction count for benchfp_alloc_instructions $1 $2"
  echo "$total"
}
declare -A per
for variant in compiled-out hook-off sampled-512k; do
  base=$(count "$variant" 0)
  total=$(count "$variant" "$n")
  per[$variant]=$(awk -v a="$total" -v b="$base" -v n="$n" 'BEGIN { printf "%.3f", (a - b) / n }')
  echo "$variant: ${per[$variant]} instructions per allocation+free ($total - $base over $n)"
done
hook=$(awk -v a="${per[hook-off]}" -v b="${per[compiled-out]}" 'BEGIN { printf "%.3f", a - b }')
sampled=$(awk -v a="${per[sampled-512k]}" -v b="${per[compiled-out]}" 'BEGIN { printf "%.3f", a - b }')
echo "hook compiled in but off: +$hook instructions per allocation"
echo "byte sampling at 512 KiB: +$sampled instructions per allocation"
if [[ -n "$json" ]]; then
  text=$(cat <<JSON
{
  "pool_alloc+free, hook compiled out (instructions)": ${per[compiled-out]},
  "pool_alloc+free, hook compiled in but off (instructions)": ${per[hook-off]},
  "pool_alloc+free, byte sampling at 512 KiB (instructions)": ${per[sampled-512k]},
  "pool_alloc: hook compiled in but off, minus compiled out (instructions per allocation)": $hook,
  "pool_alloc: byte sampling at 512 KiB, minus compiled out (instructions per allocation)": $sampled
}
JSON
)
  # As benchfp writes (lib/report/file.hpp): through a symbolic link; a device
  # or FIFO in place; a file atomically, a temporary beside it renamed over it,
  # keeping the replaced file's mode.
  target=$json
  [[ -L $target ]] && target=$(readlink -f -- "$target")
  if [[ -e $target && ! -f $target ]]; then
    printf '%s\n' "$text" > "$target" || bad "cannot write '$json'"
  else
    tmp=$(mktemp "$(dirname -- "$target")/.$(basename -- "$target").XXXXXX") || bad "cannot write beside '$json'"
    trap 'rm -f "$tmp"' EXIT
    if [[ -f $target ]]; then chmod --reference="$target" "$tmp"; else chmod "$(printf '%o' $((0666 & ~$(umask))))" "$tmp"; fi
    printf '%s\n' "$text" > "$tmp" || bad "cannot write '$json'"
    mv -f "$tmp" "$target" || bad "cannot write '$json'"
  fi
fi
