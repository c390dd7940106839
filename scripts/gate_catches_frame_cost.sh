#!/usr/bin/env bash
# End-to-end check of the frame-cost limit: a build whose frame kernels pay for
# their policy (-DBENCHFP_INJECT_FRAME_COST=N: N dependent instructions at every
# loop head of a frame kernel, none in preserve's or clobber's) is judged against
# a baseline this script records from the normal build, on this machine. The
# judge must exit 1 with the row's frame / clobber over its limit (1.005), and
# its preserve / clobber, which the injection does not touch, not over it.
# Exit 0 when it does, 1 when the limit missed the cost, 2 when a step could not run.
# Usage: scripts/gate_catches_frame_cost.sh [N] [ISA]   (default 16 and avx2)
# The case is eltwise relu of 65536 floats: about 13 cycles per loop iteration
# here (AMD EPYC Zen 5 guest), so 16 injected instructions cost about 22%, and 4
# cost nothing measurable (the chain runs beside the body's loads and stores).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
steps=${1:-16} isa=${2:-avx2}
build_variant . build-framecost benchfp -DBENCHFP_INJECT_FRAME_COST="$steps" || exit 2
[[ -x build/benchfp ]] || cmake --build build -j "$(nproc)" --target benchfp > /dev/null || exit 2
out=$(mktemp -d /tmp/benchfp-framecost-XXXXXX)
trap 'rm -rf "$out"' EXIT
row="kernel/eltwise/relu/$isa/65536"
perf_run() {  # perf_run BUILD JSON: the case under every policy, in perf mode
  "$1/benchfp" kernel --kernel=eltwise --alg=relu --isa="$isa" --frame=clobber,preserve,frame --mode=perf \
    --max-ms-per-prb=300 --json="$2" 65536 > "$2.txt" 2>&1 < /dev/null ||
    { cat "$2.txt"; echo "the perf run of $1 failed"; exit 2; }
}
perf_run build "$out/normal.json"
build/benchfp judge --current="$out/normal.json" --baselines="$out/baselines" --suite=gate --update-baseline \
  --commit=normal > /dev/null || { echo "the normal build's baseline was not recorded"; exit 2; }
perf_run build-framecost "$out/injected.json"
build/benchfp judge --current="$out/injected.json" --baselines="$out/baselines" --suite=gate --report="$out/report" \
  > "$out/judge.txt" 2>&1
status=$?
grep -E "^\| \`$row\` \|" "$out/judge.txt"
missed=0
((status == 1)) || { echo "judge exit status $status, expected 1"; missed=1; }
grep -q "^| \`$row: frame / clobber\` | .* :no_entry: over the limit" "$out/judge.txt" ||
  { echo "$row: frame / clobber not over its limit"; missed=1; }
if grep -q "^| \`$row: preserve / clobber\` | .* :no_entry:" "$out/judge.txt"; then
  echo "$row: preserve / clobber over its limit too (untouched by the injection)"; missed=1
fi
if ((missed)); then
  grep -E "Verdict|$row" "$out/judge.txt"
  exit 1
fi
echo "the frame-cost limit caught the injected cost ($steps instructions per loop iteration): exit 1, frame / clobber over 1.005"
