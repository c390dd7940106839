#!/usr/bin/env bash
# Like nanosoldier's runbenchmarks(..., vs = ":master"): builds REF in a git
# worktree, runs both builds' allocator suites interleaved (REF, this tree, REF,
# this tree, ...) on this machine, and judges this tree against REF with the
# checked-in tolerances. The report goes to results/vs-<REF>/.
# Usage: scripts/vs.sh REF [ROUNDS]   (default 3 rounds of 3 repetitions each)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
usage="usage: scripts/vs.sh REF [ROUNDS]   (ROUNDS: 1 to 999, default 3)"
case "${1:-}" in
  -h | --help) echo "$usage"; exit 0 ;;
  '') echo "$usage" >&2; exit 2 ;;
esac
(($# <= 2)) || { echo "$usage" >&2; exit 2; }
ref=$1
rounds=${2:-3}
# Checked before the two builds it would otherwise wait for.
[[ $rounds =~ ^[1-9][0-9]{0,2}$ ]] || { echo "benchfp: ROUNDS '$rounds' is not a whole number from 1 to 999" >&2; exit 2; }
sha=$(git rev-parse --verify --short "$ref^{commit}") || { echo "benchfp: unknown revision '$ref'" >&2; exit 2; }
work=$(mktemp -d /tmp/benchfp-vs-XXXXXX)
trap 'git worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/tree" "$sha" >/dev/null
if [[ ! -f "$work/tree/bench/alloc_gate.cpp" ]]; then
  echo "benchfp: $ref ($sha) predates the allocator gate suites (bench/alloc_gate.cpp)" >&2
  exit 2
fi
build_variant "$work/tree" "$work/build" benchfp_alloc_gate
build_variant . build benchfp_alloc_gate
cmake --build build -j "$(nproc)" --target benchfp > /dev/null
out="results/vs-$sha"
mkdir -p "$out"
alloc_suite_flags 3 0.1
judge_interleaved "$work/build/bench/benchfp_alloc_gate" build/bench/benchfp_alloc_gate "$rounds" "$out" \
  "$ref ($sha)" "$(git rev-parse --short HEAD) (working tree)"
