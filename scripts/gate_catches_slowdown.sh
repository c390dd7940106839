#!/usr/bin/env bash
# End-to-end check of the regression gate: a build with extra work on the
# allocation fast path (-DBENCHFP_INJECT_ALLOC_SLOWDOWN=N) is judged against the
# normal build, both run interleaved on this machine. The gate must fail (exit
# 1) with the pool's rows marked :x: and the peers' (glibc, untouched) not.
# Exit 0 when it does, 1 when the gate missed the slowdown.
# Usage: scripts/gate_catches_slowdown.sh [N]   (default 200 steps)
set -uo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}
cmake -S . -B build-slowdown -DBENCHFP_INJECT_ALLOC_SLOWDOWN="$steps" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 2
cmake --build build-slowdown -j "$(nproc)" --target benchfp_alloc_gate >/dev/null || exit 2
out=$(mktemp -d /tmp/benchfp-slowdown-XXXXXX)
trap 'rm -rf "$out"' EXIT
suite=(--benchmark_filter='small_churn|structs' --benchmark_repetitions=3 --benchmark_min_time=0.05
       --benchmark_out_format=json)
for i in 1 2; do
  build/bench/benchfp_alloc_gate "${suite[@]}" --benchmark_out="$out/normal-$i.json" >/dev/null 2>&1 || exit 2
  build-slowdown/bench/benchfp_alloc_gate "${suite[@]}" --benchmark_out="$out/slow-$i.json" >/dev/null 2>&1 || exit 2
done
build/benchfp judge --current="$out/slow-1.json" --current="$out/slow-2.json" \
  --baseline-runs="$out/normal-1.json" --baseline-runs="$out/normal-2.json" --report="$out/report" \
  --commit="injected slowdown ($steps steps)" --baseline-label="this tree" > "$out/judge.txt"
status=$?
grep -E '^\| `alloc/[a-z_]*/[a-z_0-9]*` ' "$out/judge.txt"
missed=0
if ((status != 1)); then echo "gate exit status $status, expected 1"; missed=1; fi
for row in alloc/small_churn/compiled_out alloc/structs/off; do
  grep -q "| \`$row\` | [0-9.]* ([0-9]*%) :x:" "$out/judge.txt" || { echo "row $row not marked :x:"; missed=1; }
done
if grep -q "| \`alloc/small_churn/glibc\` | [0-9.]* ([0-9]*%) :x:" "$out/judge.txt"; then
  echo "note: glibc (untouched) was marked too: machine noise"
fi
((missed)) && exit 1
echo "gate caught the injected slowdown: exit 1, pool rows marked :x:"
