#!/usr/bin/env bash
# End-to-end check of the regression gate: a build with extra work on the
# allocation fast path (-DBENCHFP_INJECT_ALLOC_SLOWDOWN=N) is judged against the
# normal build, both run interleaved on this machine. The gate must fail (exit
# 1) with the pool's rows marked :x: and the peers' (glibc, untouched) not.
# Exit 0 when it does, 1 when the gate missed the slowdown.
# Usage: scripts/gate_catches_slowdown.sh [N]   (default 200 steps)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
steps=${1:-200}
build_variant . build-slowdown benchfp_alloc_gate -DBENCHFP_INJECT_ALLOC_SLOWDOWN="$steps" || exit 2
out=$(mktemp -d /tmp/benchfp-slowdown-XXXXXX)
trap 'rm -rf "$out"' EXIT
alloc_suite_flags 3 0.05 'small_churn|structs'
judge_interleaved build/bench/benchfp_alloc_gate build-slowdown/bench/benchfp_alloc_gate 2 "$out" \
  "this tree" "injected slowdown ($steps steps)" > "$out/judge.txt"
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
