# Sourced by the gate scripts (scripts/vs.sh, scripts/gate_catches_slowdown.sh,
# scripts/gate_catches_injections.sh, scripts/gate_catches_frame_cost.sh,
# scripts/hook_time_over_layouts.sh, ci/gate.sh): the allocator suites' flags,
# "build a variant", and "run two builds interleaved, judge one against the
# other", written once. Paths are relative to the repository root, where every
# caller runs.

# The allocator suites' Google Benchmark flags: repetitions in random order so
# load drifts hit every benchmark alike; JSON out; and every flag whose default a
# BENCHMARK_* environment variable could change into output the scripts cannot
# read (BENCHMARK_FORMAT=json or BENCHMARK_COUNTERS_TABULAR=true left
# hook_time_over_layouts.sh's parse empty, exit 0) or a suite cut short
# (BENCHMARK_FILTER), given. Usage:
#   alloc_suite_flags REPETITIONS MIN_TIME [FILTER]   -> sets the array SUITE
alloc_suite_flags() {
  SUITE=(--benchmark_repetitions="$1" --benchmark_enable_random_interleaving=true
         --benchmark_min_time="$2" --benchmark_out_format=json
         --benchmark_format=console --benchmark_color=false --benchmark_counters_tabular=false
         --benchmark_list_tests=false --benchmark_report_aggregates_only=false
         --benchmark_display_aggregates_only=false)
  SUITE+=(--benchmark_filter="${3:-.}")  # every benchmark by default, whatever BENCHMARK_FILTER says
}

# build_variant SOURCE_DIR BUILD_DIR TARGET [CMAKE_ARGS...]: configures a Release
# build of SOURCE_DIR with the given options and builds one target. Quiet;
# returns cmake's status.
build_variant() {
  local source=$1 dir=$2 target=$3
  shift 3
  cmake -S "$source" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" > /dev/null &&
    cmake --build "$dir" -j "$(nproc)" --target "$target" > /dev/null
}

# judge_interleaved BASELINE_GATE CURRENT_GATE ROUNDS OUT_DIR LABEL COMMIT [benchfp judge options...]:
# runs the two allocator-gate binaries alternately (baseline, current, baseline,
# ...) ROUNDS times with the flags in SUITE, each run's JSON in OUT_DIR, then
# judges current against baseline with the checked-in tolerances and writes the
# report to OUT_DIR. Returns the judge's exit status (0 passed, 1 regression, 2
# bad input); its report goes to stdout.
judge_interleaved() {
  local baseline=$1 current=$2 rounds=$3 out=$4 label=$5 commit=$6
  shift 6
  local -a runs=()
  local i
  for ((i = 1; i <= rounds; ++i)); do
    echo "== round $i of $rounds: $label, then this build" >&2
    "$baseline" "${SUITE[@]}" --benchmark_out="$out/baseline-$i.json" > /dev/null 2>&1 || return 2
    "$current" "${SUITE[@]}" --benchmark_out="$out/current-$i.json" > /dev/null 2>&1 || return 2
    runs+=(--baseline-runs="$out/baseline-$i.json" --current="$out/current-$i.json")
  done
  build/benchfp judge "${runs[@]}" --report="$out" --commit="$commit" --baseline-label="$label" "$@"
}
