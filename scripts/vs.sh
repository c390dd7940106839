#!/usr/bin/env bash
# Like nanosoldier's runbenchmarks(..., vs = ":master"): builds REF in a git
# worktree, runs both builds' allocator suites interleaved (REF, this tree, REF,
# this tree, ...) on this machine, and judges this tree against REF with the
# checked-in tolerances. The report goes to results/vs-<REF>/.
# Usage: scripts/vs.sh REF [ROUNDS]   (default 3 rounds of 3 repetitions each)
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: scripts/vs.sh REF [ROUNDS]}
rounds=${2:-3}
sha=$(git rev-parse --verify --short "$ref^{commit}") || { echo "benchfp: unknown revision '$ref'" >&2; exit 2; }
work=$(mktemp -d /tmp/benchfp-vs-XXXXXX)
trap 'git worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/tree" "$sha" >/dev/null
if [[ ! -f "$work/tree/bench/alloc_gate.cpp" ]]; then
  echo "benchfp: $ref ($sha) predates the allocator gate suites (bench/alloc_gate.cpp)" >&2
  exit 2
fi
cmake -S "$work/tree" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j "$(nproc)" --target benchfp_alloc_gate >/dev/null
cmake --build build -j "$(nproc)" --target benchfp_alloc_gate benchfp >/dev/null

out="results/vs-$sha"
mkdir -p "$out"
suite=(--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_min_time=0.1
       --benchmark_out_format=json)
current=() baseline=()
for ((i = 1; i <= rounds; ++i)); do
  echo "== round $i of $rounds: $ref, then this tree"
  "$work/build/bench/benchfp_alloc_gate" "${suite[@]}" --benchmark_out="$out/ref-$i.json" >/dev/null 2>&1
  build/bench/benchfp_alloc_gate "${suite[@]}" --benchmark_out="$out/current-$i.json" >/dev/null 2>&1
  baseline+=(--baseline-runs="$out/ref-$i.json")
  current+=(--current="$out/current-$i.json")
done
build/benchfp judge "${current[@]}" "${baseline[@]}" --report="$out" \
  --commit="$(git rev-parse --short HEAD) (working tree)" --baseline-label="$ref ($sha)"
