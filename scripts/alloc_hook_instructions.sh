#!/usr/bin/env bash
# Instructions per allocation that the profiler hook adds while the profiler is
# off (compiled in vs compiled out), counted by callgrind: deterministic, unlike
# time on a shared machine. Needs valgrind (Debian package) and a build.
# Usage: scripts/alloc_hook_instructions.sh [N]   (default 1000000 allocations)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
count() {  # count VARIANT COUNT -> total instructions of the run
  valgrind --tool=callgrind --callgrind-out-file=/dev/null build/bench/benchfp_alloc_instructions "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for variant in compiled-out hook-off; do
  base=$(count "$variant" 0)
  total=$(count "$variant" "$n")
  per=$(awk -v a="$total" -v b="$base" -v n="$n" 'BEGIN { printf "%.3f", (a - b) / n }')
  echo "$variant: $per instructions per allocation+free ($total - $base over $n)"
  eval "per_${variant//-/_}=$per"
done
awk -v a="$per_hook_off" -v b="$per_compiled_out" 'BEGIN { printf "hook compiled in but off: %+.3f instructions per allocation\n", a - b }'
