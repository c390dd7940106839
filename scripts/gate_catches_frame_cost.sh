#!/usr/bin/env bash
# End-to-end check of the frame-cost limit: a build whose frame kernels pay for
# their policy (-DBENCHFP_INJECT_FRAME_COST=N: N dependent instructions at every
# loop head of a frame kernel, none in preserve's or clobber's) is judged against
# a baseline this script records from the normal build, on this machine. The
# normal build's row must be within the limit (1.005) or straddle it, else the
# check could not tell the injection's cost from the kernel's own; the injected
# build's must exit the judge with 1, its frame / clobber over the limit and its
# preserve / clobber, which the injection does not touch, not over it. A row
# over the limit on code that costs nothing (a slow code placement, README) is
# measured once more in a new process before it counts, as ci/gate.sh re-runs.
# Then the same injection counted: every frame call of the eltwise step batch
# must count more instructions than the normal build's, judged against a
# baseline of its counts, and no clobber or preserve call.
# Exit 0 when the limit caught the cost, 1 when not, 2 when a step could not run.
# Usage: scripts/gate_catches_frame_cost.sh [N] [ISA]   (default 64 and avx2)
# The case is eltwise relu of 65536 floats: about 13 cycles per loop iteration
# on the AMD EPYC Zen 5 guest, so 16 injected instructions cost about 22% there,
# and 4 cost nothing measurable (the chain runs beside the body's loads and stores).
# On the Zen 4 guest 16 cost 1-9% (frame / clobber 1.0125 [0.9920, 1.0226] in one
# process: not over the limit, and a CI of unchanged code failed this check), 64
# cost 73-114%: the default is 64, a cost every CPU shows.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/gate_common.sh
steps=${1:-64} isa=${2:-avx2}
build_variant . build-framecost benchfp -DBENCHFP_INJECT_FRAME_COST="$steps" || exit 2
# The normal build, brought up to date, and not itself configured with an injection.
build_variant . build benchfp || exit 2
grep -q '^BENCHFP_INJECT_FRAME_COST:STRING=0$' build/CMakeCache.txt ||
  { echo "build/ is configured with BENCHFP_INJECT_FRAME_COST: not the normal build"; exit 2; }
out=$(mktemp -d /tmp/benchfp-framecost-XXXXXX)
trap 'rm -rf "$out"' EXIT
row="kernel/eltwise/relu/$isa/65536"
perf_run() {  # perf_run BUILD JSON: the case under every policy, in perf mode
  "$1/benchfp" kernel --kernel=eltwise --alg=relu --isa="$isa" --frame=clobber,preserve,frame --mode=perf \
    --max-ms-per-prb=300 --json="$2" 65536 > "$2.txt" 2>&1 < /dev/null ||
    { cat "$2.txt"; echo "the perf run of $1 failed"; exit 2; }
}
judged() {  # judged JSON: the run judged against the recorded baseline, to JSON.judge; the judge's status
  build/benchfp judge --current="$1" --baselines="$out/baselines" --suite=gate --report="$1.report" \
    > "$1.judge" 2>&1
}
over() { grep -q "^| \`$row: $2\` | .* :no_entry: over the limit" "$1.judge"; }  # over JSON RATIO
frame_costs() { grep -E "^\| \`$row\` \| [0-9.]+ \[" "$1.judge"; }  # the row of the frame-cost table
# judged_again_if_over BUILD NAME RATIO: judges $out/NAME.json, measured already; when its RATIO is
# over the limit, measures and judges once more in a new process ($out/NAME2.json). Sets counted
# (the run whose judgement counts) and status (its judge's exit status).
judged_again_if_over() {
  counted="$out/$2.json"
  judged "$counted"
  status=$?
  over "$counted" "$3" || return 0
  frame_costs "$counted"
  counted="$out/${2}2.json"
  perf_run "$1" "$counted"
  judged "$counted"
  status=$?
}

perf_run build "$out/normal.json"
build/benchfp judge --current="$out/normal.json" --baselines="$out/baselines" --suite=gate --update-baseline \
  --commit=normal > /dev/null || { echo "the normal build's baseline was not recorded"; exit 2; }
judged_again_if_over build normal "frame / clobber"
if over "$counted" "frame / clobber"; then
  frame_costs "$counted"
  echo "$row: the normal build's frame / clobber is over the limit in two processes: the check cannot tell the injection's cost"
  exit 2
fi

perf_run build-framecost "$out/injected.json"
judged_again_if_over build-framecost injected "preserve / clobber"
frame_costs "$counted" || { echo "$row: no frame-cost row in the judgement"; exit 1; }
missed=0
((status == 1)) || { echo "judge exit status $status, expected 1"; missed=1; }
over "$counted" "frame / clobber" || { echo "$row: frame / clobber not over its limit"; missed=1; }
if over "$counted" "preserve / clobber"; then
  echo "$row: preserve / clobber over its limit too, in two processes (untouched by the injection)"; missed=1
fi
if ((missed)); then
  grep -E "Verdict|$row" "$counted.judge"
  exit 1
fi
echo "the frame-cost limit caught the injected cost ($steps instructions per loop iteration): exit 1, frame / clobber over 1.005"

# The same injection counted instead of timed: the eltwise step batch of each
# build, the injected build's counts judged against a baseline recorded with
# the normal build's. No noise here: every frame call must count more, and no
# clobber or preserve call (which the injection leaves alone) may.
step_run() {  # step_run BUILD JSON
  "$1/benchfp" kernel --batch=cases/eltwise/step --isa="$isa" --json="$2" > "$2.txt" 2>&1 < /dev/null ||
    { cat "$2.txt"; echo "the step run of $1 failed"; exit 2; }
}
step_run build "$out/normal-step.json"
step_run build-framecost "$out/injected-step.json"
build/benchfp judge --current="$out/normal.json" --cases="$out/normal-step.json" --baselines="$out/stepped" --suite=gate \
  --update-baseline --commit=normal > /dev/null || { echo "the normal build's stepped baseline was not recorded"; exit 2; }
build/benchfp judge --current="$out/normal.json" --cases="$out/injected-step.json" --baselines="$out/stepped" --suite=gate \
  --report="$out/stepped-report" > "$out/stepped.judge" 2>&1
stepped_status=$?
((stepped_status == 2)) && { cat "$out/stepped.judge"; echo "the stepped judge could not run"; exit 2; }
# Of the stepped instruction counts in the report: frame's that regressed, frame's, and the other policies' that regressed.
read -r regressed frame_calls others < <(python3 - "$out/stepped-report/report.json" <<'PY'
import json, sys
rows = [r for m in json.load(open(sys.argv[1]))["machines"] for r in m["rows"] if ": stepped instructions per call" in r["id"]]
frame = [r for r in rows if "/frame: " in r["id"]]
print(sum(r["verdict"] == "regression" for r in frame), len(frame),
      sum(r["verdict"] == "regression" for r in rows if "/frame: " not in r["id"]))
PY
)
if ((stepped_status != 1 || ${frame_calls:-0} == 0 || regressed != frame_calls || others != 0)); then
  grep -E "Verdict|stepped" "$out/stepped.judge" | head -20
  echo "the stepped counts: judge exit $stepped_status (expected 1), ${regressed:-?} of ${frame_calls:-?} frame calls regressed, ${others:-?} clobber or preserve calls (expected every frame call, none other)"
  exit 1
fi
echo "the stepped counts caught it too: all $frame_calls frame calls of the eltwise step batch count more than the normal build's, no clobber or preserve call"
