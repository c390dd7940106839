#!/usr/bin/env bash
# The kernel gate, per ISA: every kernel batch in correctness and unwind modes,
# once per ISA cap (like running benchdnn under ONEDNN_MAX_CPU_ISA), with a JSON
# record per ISA and mode under results/ci/. Exit status: 0 all passed, 1 a case
# failed, 2 bad input or no sampling.
# Usage: ci/kernel_gate.sh [ISA ...]   (default: sse41 avx2 avx512)
set -uo pipefail
cd "$(dirname "$0")/.."
isas=("${@:-sse41 avx2 avx512}")
read -r -a isas <<<"${isas[*]}"
mkdir -p results/ci
status=0
for isa in "${isas[@]}"; do
  for mode in corr unwind; do
    echo "== ISA cap ${isa}, mode ${mode}"
    BENCHFP_MAX_CPU_ISA="$isa" build/benchfp kernel --batch=cases/eltwise/ci --mode="$mode" \
      --json="results/ci/eltwise-${isa}-${mode}.json"
    rc=$?
    if ((rc > status)); then status=$rc; fi
  done
done
exit "$status"
