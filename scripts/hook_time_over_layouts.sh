#!/usr/bin/env bash
# What the profiler hook costs in time, with code layout as a variable: where
# the allocator's entry points and the gate's workloads land in the binary moves
# the paired ratio "hook off / compiled out" by more than the hook's two
# instructions cost (lib/alloc/layout_shift.hpp). This builds the gate at several
# layout shifts (build-layout/), measures each workload's paired ratios in each
# build, and prints them per layout with their mean, min and max over layouts.
# "byte-sampled / hook off" runs the same code either way: the control.
# Each layout has its own build (build-layout/<shift>/), so --build-only can
# build them all under a shared lock first and the timed run (under flock -x)
# finds them up to date instead of compiling while it holds the machine.
# A layout's ratio also moves from one process to the next (the same layout by
# up to 6% between two sweeps on the AMD Zen 5 guest): --processes=N runs every
# layout's gate N times, the layouts in turn, and a layout's figure is the
# median of all its processes' repetitions.
# --floor=count or --floor=compare builds the hooked entries with the cheapest
# form an exact sampling count could take besides their hook (lib/alloc/pool.hpp,
# hook_floor; in build-layout-<floor>/<shift>/): "hook off / compiled out" then
# reads what a read-modify-write and a branch (count), or a load and a branch
# (compare), cost the fast path there, layout by layout; --floor=pad puts the
# same bytes there as two nops, the control for the code they move.
# Usage: scripts/hook_time_over_layouts.sh [--build-only] [--processes=N] [--floor=KIND] [SHIFT ...]
#        (N default 1; shifts in bytes, default 0 16 32 48 80 96 112 144)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
build_only=0
processes=1
floor=none
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --build-only) build_only=1 ;;
    --processes=*)
      processes=${1#--processes=}
      [[ $processes =~ ^[1-9][0-9]*$ ]] || { echo "benchfp: --processes '$processes' is not a positive whole number" >&2; exit 2; } ;;
    --floor=*)
      floor=${1#--floor=}
      [[ $floor == count || $floor == compare || $floor == pad ]] ||
        { echo "benchfp: --floor '$floor' is not count, compare or pad" >&2; exit 2; } ;;
    *) echo "benchfp: unknown option '$1' (expected --build-only, --processes=N or --floor=KIND)" >&2; exit 2 ;;
  esac
  shift
done
shifts=("$@")
((${#shifts[@]})) || shifts=(0 16 32 48 80 96 112 144)
for s in "${shifts[@]}"; do
  [[ $s =~ ^[0-9]+$ && $((s % 16)) -eq 0 ]] || { echo "benchfp: layout shift '$s' is not a multiple of 16 bytes" >&2; exit 2; }
done
alloc_suite_flags 3 0.05 '/(off|sampled_512k)/'  # the console lines are parsed below
ratios=$(mktemp /tmp/benchfp-layouts-XXXXXX)
trap 'rm -f "$ratios"' EXIT
builds=build-layout
[[ $floor == none ]] || builds=build-layout-$floor
for s in "${shifts[@]}"; do
  build_variant . "$builds/$s" benchfp_alloc_gate -DBENCHFP_LAYOUT_SHIFT="$s" -DBENCHFP_HOOK_FLOOR="$floor"
done
((build_only)) && exit 0
for ((process = 1; process <= processes; ++process)); do
  for s in "${shifts[@]}"; do
    echo "== layout shift $s bytes, process $process of $processes, hook floor: $floor" >&2
    # One line per repetition: "<shift> <workload> <variant> <ratio>".
    "$builds/$s/bench/benchfp_alloc_gate" "${SUITE[@]}" 2> /dev/null |
      sed -n "s|^alloc/\([a-z_]*\)/\([a-z_0-9]*\)/manual_time .* ratio_to_[a-z_]*=\([0-9.]*\).*|$s \1 \2 \3|p" >> "$ratios"
  done
done
# Per layout, the median of the repetitions (of every process; the mean of the middle two where
# their count is even); over layouts, mean, min and max.
sort -k2,2 -k3,3 -k1,1n -k4,4g "$ratios" | awk -v n_shifts="${#shifts[@]}" '
  { key = $2 " " $3 " " $1; reps[key] = reps[key] " " $4; order[$2 " " $3] = 1 }
  END {
    printf "| workload | ratio |"
    split("'"${shifts[*]}"'", shift_list, " ")
    for (i = 1; i <= n_shifts; ++i) printf " +%s B |", shift_list[i]
    printf " mean | min | max |\n|---|---|"
    for (i = 1; i <= n_shifts + 3; ++i) printf "---|"
    printf "\n"
    for (wv in order) {
      split(wv, parts, " ")
      name = parts[2] == "off" ? "hook off / compiled out" : "byte-sampled 512 KiB / hook off"
      line = "| " parts[1] " | " name " |"; sum = 0; lo = 1e9; hi = 0; count = 0
      for (i = 1; i <= n_shifts; ++i) {
        m = split(reps[wv " " shift_list[i]], values, " ")
        if (m == 0) { line = line " - |"; continue }
        median = m % 2 ? values[(m + 1) / 2] : (values[m / 2] + values[m / 2 + 1]) / 2
        line = line sprintf(" %.3f |", median); sum += median; ++count
        if (median < lo) lo = median; if (median > hi) hi = median
      }
      printf "%s %.3f | %.3f | %.3f |\n", line, sum / count, lo, hi
    }
  }' | { read -r header; read -r rule; echo "$header"; echo "$rule"; sort; }
