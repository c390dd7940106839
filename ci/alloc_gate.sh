#!/usr/bin/env bash
# The allocator regression gate: the suites (every workload, every variant, peer
# allocators) with repetitions in random interleaving, the callgrind count of the
# hook, then `benchfp judge` against the checked-in baseline. Writes
# results/alloc-current.json (and results/alloc-jemalloc.json, jemalloc's run
# under LD_PRELOAD), results/alloc-instructions.json and the report in
# results/report/. Exit status: 0 passed, 1 a regression, 2 bad input.
# Usage: ci/alloc_gate.sh [--update-baseline] [extra benchfp judge options]
set -euo pipefail
cd "$(dirname "$0")/.."
suite=(--benchmark_repetitions="${BENCHFP_GATE_REPETITIONS:-5}" --benchmark_enable_random_interleaving=true
       --benchmark_min_time="${BENCHFP_GATE_MIN_TIME:-0.1}" --benchmark_out_format=json)
build/bench/benchfp_alloc_gate "${suite[@]}" --benchmark_out=results/alloc-current.json > /dev/null 2>&1
# jemalloc in a process of its own: Debian's cannot be dlopen'd (see bench/alloc_gate.cpp).
jemalloc=$(ldconfig -p | sed -n 's/^\s*libjemalloc.so.2 (libc6,x86-64) => //p' | head -1)
current=(--current=results/alloc-current.json)
if [[ -n "$jemalloc" ]]; then
  LD_PRELOAD=$jemalloc build/bench/benchfp_alloc_gate "${suite[@]}" --benchmark_filter=/jemalloc/ \
    --benchmark_out=results/alloc-jemalloc.json > /dev/null 2>&1
  current+=(--current=results/alloc-jemalloc.json)
fi
scripts/alloc_hook_instructions.sh 1000000 --json results/alloc-instructions.json
build/benchfp judge "${current[@]}" --instructions=results/alloc-instructions.json \
  --commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$@"
