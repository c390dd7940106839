#!/usr/bin/env bash
# Cross-checks benchfp's chain verdicts against the real Linux perf: for each
# kernel family (from `benchfp kernel --list --json=-`) and frame policy, runs
# the unwind mode under `perf record -g --call-graph fp`, reads `perf script`,
# gives every sample in JIT code perf's own callers the same verdict rule, and
# compares with benchfp's tallies. Exits 1 when perf and benchfp disagree by
# more than the prologue window (the samples benchfp sets aside as `prologue`,
# plus 5% of the JIT samples for the samples each profiler takes at other times),
# 2 when a run cannot be compared (perf or benchfp missing, a run under perf
# record that exits over 1 or writes no record).
#
# Usage: scripts/perf_crosscheck.sh [FAMILY ...]     (default: every family)
#   BENCHFP_BIN=build/benchfp PERF=perf DURATION_MS=400
#
# The event is task-clock: a VM without a hardware PMU has no cycles event.
set -euo pipefail
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
esac
cd "$(dirname "$0")/.."
bin=${BENCHFP_BIN:-build/benchfp}
perf_bin=${PERF:-perf}
duration=${DURATION_MS:-400}
command -v "$perf_bin" >/dev/null || { echo "perf_crosscheck: $perf_bin not found (apt-get install linux-perf)" >&2; exit 2; }
[[ -x $bin ]] || { echo "perf_crosscheck: $bin not built" >&2; exit 2; }

families=("$@")
if ((${#families[@]} == 0)); then
  listing=$("$bin" kernel --list --json=-) || { echo "perf_crosscheck: benchfp kernel --list failed" >&2; exit 2; }
  mapfile -t families < <(python3 -c 'import json,sys; [print(f["name"]) for f in json.load(sys.stdin)["families"]]' <<< "$listing")
fi
for family in "${families[@]}"; do
  [[ $family =~ ^[a-z0-9_]+$ && -f cases/$family/unwind ]] ||
    { echo "perf_crosscheck: unknown kernel family '$family' (no cases/$family/unwind)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first case line of the family's unwind batch: its alg and problem.
case_of() { grep -v '^\s*#' "cases/$1/unwind" | grep -m1 -- '--kernel' | sed -E 's/--(isa|frame|expect)=[^ ]+//g'; }

status=0
printf '%-10s %-9s %8s %-16s %-28s %-28s %s\n' family frame samples verdict benchfp perf agree
# No family checked is no check: never a pass.
((${#families[@]})) || { echo "perf_crosscheck: no kernel family to check" >&2; exit 2; }
for family in "${families[@]}"; do
  line=$(case_of "$family")
  for frame in clobber preserve frame; do
    # Each policy's own record: one left by the policy before must not stand in for this one's.
    rm -f "$work/k.json"
    run_status=0
    "$perf_bin" record -q -e task-clock -F 2000 -g --call-graph fp -o "$work/perf.data" -- \
      "$bin" kernel $line --frame=$frame --mode=unwind --min-samples=1 --duration-ms="$duration" \
      --json="$work/k.json" >/dev/null 2>"$work/record.err" || run_status=$?
    # perf record exits with the case's status: 1 is the case's own verdict, which is
    # not the point here; anything else is a run that did not happen as asked.
    if ((run_status > 1)) || [[ ! -s $work/k.json ]]; then
      cat "$work/record.err" >&2
      [[ -s $work/k.json ]] && what="exited $run_status" || what="exited $run_status and wrote no record"
      echo "perf_crosscheck: $family --frame=$frame: benchfp under perf record $what" >&2
      exit 2
    fi
    "$perf_bin" script -i "$work/perf.data" -F tid,ip,sym,dso 2>/dev/null >"$work/script.txt"
    python3 - "$work/k.json" "$work/script.txt" "$family" "$frame" <<'PY' || status=1
import sys
sys.path.insert(0, "scripts/lib")
sys.dont_write_bytecode = True
import strict_json
record = strict_json.load(sys.argv[1])
case = record["cases"][0] if isinstance(record, dict) and "cases" in record else record[0]
u = case["unwind"]
outer, direct = u["expected_callers"], u["expected_direct_caller"]
# JIT code is anonymous memory: perf names its frames "[unknown] (//anon)", "[unknown] ([unknown])",
# or "[unknown] (/tmp/perf-PID.map)" when it looked for a perf map.

def verdict(callers):
    def starts(want): return callers[:len(want)] == want
    def contains(want): return any(callers[i:i + len(want)] == want for i in range(len(callers)))
    if not direct:
        return "full" if starts(outer) else "skipped_caller" if starts(outer[1:]) else "broken"
    if not contains(outer): return "broken"
    return "full" if callers and callers[0] == direct else "skipped_caller"

tally = {"full": 0, "skipped_caller": 0, "broken": 0}
for block in open(sys.argv[2]).read().split("\n\n"):
    frames = [l.split(None, 1) for l in block.strip().splitlines()[1:] if "kernel.kallsyms" not in l]
    if not frames or len(frames[0]) < 2: continue
    first = frames[0][1]
    dso = first.rsplit("(", 1)[-1].rstrip(")")
    if not (dso in ("//anon", "[unknown]") or dso.startswith("/tmp/perf-")): continue  # not JIT code
    names = [f[1].rsplit(" (", 1)[0].split("+0x")[0] for f in frames[1:] if len(f) > 1]
    tally[verdict(names)] += 1
t = u["tally"]
want = max(("full", "skipped_caller", "broken"), key=lambda k: t[k])
perf_jit = sum(tally.values())
allowed = (t["prologue"] / max(1, t["judged"] + t["prologue"]) + 0.05) * perf_jit
off = perf_jit - tally[want]
ok = perf_jit > 0 and off <= allowed
fmt = lambda d: "full:%d skipped:%d broken:%d" % (d["full"], d["skipped_caller"], d["broken"])
print("%-10s %-9s %8d %-16s %-28s %-28s %s" % (sys.argv[3], sys.argv[4], perf_jit, want, fmt(t), fmt(tally),
                                               "yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
  done
done
exit $status
