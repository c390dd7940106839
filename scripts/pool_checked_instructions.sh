#!/usr/bin/env bash
# What the checked pool (-DBENCHFP_POOL_CHECKED=ON: every free validated, see
# lib/alloc/pool.hpp) costs per allocation+free of 48 bytes, in instructions
# counted by callgrind, against the normal build: configures and builds
# benchfp_alloc_instructions in both (Release), then runs
# scripts/alloc_hook_instructions.sh in each. Needs valgrind (Debian package).
# Usage: scripts/pool_checked_instructions.sh [N] [NORMAL_BUILD_DIR] [CHECKED_BUILD_DIR]
#   (defaults: 1000000 build build-checked)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
declare -A dir=([OFF]=${2:-build} [ON]=${3:-build-checked}) per
for checked in OFF ON; do
  cmake -S . -B "${dir[$checked]}" -DCMAKE_BUILD_TYPE=Release -DBENCHFP_POOL_CHECKED=$checked > /dev/null
  cmake --build "${dir[$checked]}" -j "$(nproc)" --target benchfp_alloc_instructions > /dev/null
  # Its "hook-off" line: the pool as shipped, profiler stopped.
  per[$checked]=$(scripts/alloc_hook_instructions.sh "$n" --build "${dir[$checked]}" |
                  sed -n 's/^hook-off: \([0-9.]*\) .*/\1/p')
  echo "BENCHFP_POOL_CHECKED=$checked: ${per[$checked]} instructions per pool_alloc(48)+free, profiler stopped"
done
awk -v c="${per[ON]}" -v u="${per[OFF]}" \
  'BEGIN { printf "checked build: +%.3f instructions per allocation+free (x%.2f)\n", c - u, c / u }'
