#!/usr/bin/env bash
# The README's frame-cost table, measured: each line below runs one perf
# command (paired ABBA chunks, every policy beside clobber, with the A/A
# control), and each kernel x ISA x problem becomes a Markdown row: frame /
# clobber and preserve / clobber as median [95% interval] ±half-width, then the
# A/A control the same way. The half-width is the larger distance from the
# median to an end of the interval, over the median.
# Usage: scripts/frame_cost_table.sh [BUILD_DIR]   (default build; run on an idle machine)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/benchfp ]] || { echo "scripts/frame_cost_table.sh: no $build/benchfp (build first)" >&2; exit 2; }
commands=(
  "--kernel=reorder --alg=nchw2nhwc --isa=sse41,avx2,avx512 --max-ms-per-prb=4000 8x64x56x56"
  "--kernel=reorder --alg=transpose --isa=sse41,avx2,avx512 --max-ms-per-prb=4000 4096x4096"
  "--kernel=conv --isa=avx2,avx512 --max-ms-per-prb=2000 mb1ic64ih56oc64kh3ph1"
  "--kernel=gemm --isa=avx2,avx512 --max-ms-per-prb=3000 m1024n1024k1024"
  "--kernel=eltwise --alg=relu,exp,gelu_tanh,tanh --isa=sse41,avx2,avx512 --max-ms-per-prb=2000 16777216 65536"
  "--kernel=reduce --alg=sum,max,softmax --isa=sse41,avx2,avx512 --max-ms-per-prb=2000 4096x4096 256x256"
)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
echo "| kernel / alg | ISA | problem | frame / clobber | preserve / clobber | A/A (noise floor) |"
echo "|---|---|---|---|---|---|"
for c in "${commands[@]}"; do
  # shellcheck disable=SC2086  # the command line is split into its options on purpose
  { "$build/benchfp" kernel --mode=perf --perf-template=csv --frame=clobber,preserve,frame $c 2> "$err" ||
      { echo "scripts/frame_cost_table.sh: benchfp kernel $c failed:" >&2; cat "$err" >&2; exit 2; }; } |
    awk -F, '
      function cell(m, lo, hi,   hw) {
        if (m == "n/a" || lo == "n/a") return "-"
        hw = (m - lo > hi - m ? m - lo : hi - m) / m * 100
        return sprintf("%.4f [%.4f, %.4f] ±%.2f%%", m, lo, hi, hw)
      }
      NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
      {
        key = $col["kernel"] " " $col["alg"] " | " $col["isa"] " | " $col["problem"]
        if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        cost[key, $col["frame"]] = cell($col["frame_cost"], $col["frame_lo"], $col["frame_hi"])
        aa[key] = cell($col["aa"], $col["aa_lo"], $col["aa_hi"])
      }
      END { for (i = 1; i <= n; ++i) { k = order[i]; printf "| %s | %s | %s | %s |\n", k, cost[k, "frame"], cost[k, "preserve"], aa[k] } }'
done
