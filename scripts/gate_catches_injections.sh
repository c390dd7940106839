#!/usr/bin/env bash
# End-to-end check of ci/gate.sh itself: a build with two deliberate bugs, frame
# kernels that overwrite rbp in their body (-DBENCHFP_INJECT_RBP_WRITE=ON) and
# extra work on the allocation fast path (-DBENCHFP_INJECT_ALLOC_SLOWDOWN=200),
# is gated against a baseline this script records from the normal build, on this
# machine (so it holds on any CPU). The gate must exit 1, with the frame cases
# failed and the pool's time rows marked :x:. Exit 0 when it does, 1 when not.
# Usage: scripts/gate_catches_injections.sh [ISA]   (default avx2: one ISA keeps it short)
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
isa=${1:-avx2}
out=$(mktemp -d /tmp/benchfp-injections-XXXXXX)
trap 'rm -rf "$out"' EXIT
cmake -S . -B build-inject -DCMAKE_BUILD_TYPE=Release -DBENCHFP_INJECT_RBP_WRITE=ON \
  -DBENCHFP_INJECT_ALLOC_SLOWDOWN=200 > /dev/null || exit 2
cmake --build build-inject -j "$(nproc)" --target benchfp benchfp_alloc_gate benchfp_alloc_instructions > /dev/null || exit 2

echo "== baseline: the normal build, $isa" >&2
ci/gate.sh --quick --isa="$isa" --baselines="$out/baselines" --report="$out/normal" --update-baseline > "$out/normal.txt" 2>&1 ||
  { tail -20 "$out/normal.txt"; echo "the normal build did not record a baseline"; exit 1; }
echo "== the injected build against it" >&2
ci/gate.sh --quick --isa="$isa" --build=build-inject --baselines="$out/baselines" --report="$out/injected" \
  > "$out/injected.txt" 2>&1
status=$?
report="$out/injected/report.md"
missed=0
((status == 1)) || { echo "gate exit status $status, expected 1"; missed=1; }
[[ -f $report ]] || { echo "no report: $report"; missed=1; touch "$report"; }
grep -q -- "--frame=frame" <(sed -n '/### Failed cases/,$p' "$report") ||
  { echo "no failed frame case in the report"; missed=1; }
# (perf groups are left out: their FMA-peak peer is a frame kernel too, so the injection fails it.)
if sed -n '/### Failed cases/,$p' "$report" | grep -v -- "--mode=perf" | grep -q -- "--frame=clobber"; then
  echo "a clobber case failed too (untouched by the injection)"; missed=1
fi
for row in alloc/small_churn/compiled_out alloc/structs/off; do
  grep -q "| \`$row\` | [0-9.]* ([0-9]*%) :x:" "$report" || { echo "row $row not marked :x:"; missed=1; }
done
if ((missed)); then
  tail -15 "$out/injected.txt"
  [[ -f $report ]] && sed -n '/### Failed cases/,+5p' "$report"
  exit 1
fi
echo "gate caught both injections: exit 1, frame cases failed, pool rows marked :x:"
