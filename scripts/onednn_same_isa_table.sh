#!/usr/bin/env bash
# The README's table of the elementwise, reduction, softmax and convolution
# kernels beside oneDNN at the same ISA. oneDNN takes one ISA cap per process
# (ONEDNN_MAX_CPU_ISA), so each ISA is a run of its own with oneDNN capped to
# it; `--vs=onednn` without the cap compares with oneDNN at the host's best ISA.
# Prints a Markdown row per kernel x ISA: clobber's minimum time, its bandwidth,
# and the ratios of minimum times, the other's over ours (> 1: faster than
# oneDNN, or than memcpy of the input; conv: its fraction of the FMA peak).
# Usage: scripts/onednn_same_isa_table.sh [BUILD_DIR]   (default build; run on an idle machine)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/benchfp ]] || { echo "scripts/onednn_same_isa_table.sh: no $build/benchfp (build first)" >&2; exit 2; }
declare -A onednn_cap=([sse41]=SSE41 [avx2]=AVX2 [avx512]=AVX512_CORE)
# One process per kernel and ISA, so that no row depends on what ran before it
# (oneDNN's softmax took 6.5 ms alone and 11-12 ms after its sum and max in one
# process while its thread count was fixed at creation: see onednn.hpp).
problems=()
for alg in relu exp tanh gelu_tanh; do problems+=("--kernel=eltwise --alg=$alg --vs=onednn,copy 16777216"); done
for alg in sum max softmax; do problems+=("--kernel=reduce --alg=$alg --vs=onednn,copy 4096x4096"); done
# cases/conv/perf's shapes; conv has no sse41 code.
for shape in $(grep -o 'mb1[a-z0-9]*' cases/conv/perf); do problems+=("--kernel=conv --vs=onednn,peak $shape"); done
echo "| kernel / alg | ISA | problem | min ms | GB/s | vs oneDNN at this ISA | vs memcpy (or FMA peak) |"
echo "|---|---|---|---|---|---|---|"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
listing=$("$build/benchfp" kernel --list --json=-) ||
  { echo "scripts/onednn_same_isa_table.sh: $build/benchfp kernel --list failed" >&2; exit 2; }
usable=$(python3 -c 'import json, sys; print(*json.load(sys.stdin)["host"]["usable"])' <<< "$listing" 2> /dev/null) ||
  { echo "scripts/onednn_same_isa_table.sh: $build/benchfp kernel --list --json=- gave no ISA list" >&2; exit 2; }
for isa in $usable; do
  for p in "${problems[@]}"; do
    [[ $isa == sse41 && $p == *--kernel=conv* ]] && continue
    # shellcheck disable=SC2086  # the problem line is split into its options on purpose
    if ! csv=$(ONEDNN_MAX_CPU_ISA=${onednn_cap[$isa]} "$build/benchfp" kernel --mode=perf --perf-template=csv \
      --frame=clobber --max-ms-per-prb=1500 --isa="$isa" $p 2> "$log"); then
      echo "scripts/onednn_same_isa_table.sh: failed: benchfp kernel --isa=$isa $p" >&2
      cat "$log" >&2
      exit 1
    fi
    printf '%s\n' "$csv" |
      awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
        { against = $col["kernel"] == "conv" ? sprintf("%.2f of FMA peak", $col["vs_peak"]) : sprintf("%.2f", $col["vs_copy"])
          printf "| %s %s | %s | %s | %.3f | %.1f | %.2f | %s |\n", $col["kernel"], $col["alg"], $col["isa"],
            $col["problem"], $col["min_ms"], $col["gbps_min"], $col["vs_onednn"],
            against }'
  done
done
