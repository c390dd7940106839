#!/usr/bin/env bash
# The kernel gate, per ISA: every CI batch in correctness mode and every unwind
# batch, once per ISA cap (like running benchdnn under ONEDNN_MAX_CPU_ISA), with a
# JSON record per batch, ISA and mode under results/ci/. Exit status: 0 all
# passed, 1 a case failed, 2 bad input or no sampling.
# Usage: ci/kernel_gate.sh [ISA ...]   (default: sse41 avx2 avx512)
set -uo pipefail
cd "$(dirname "$0")/.."
isas=("$@")
((${#isas[@]})) || isas=(sse41 avx2 avx512)
mkdir -p results/ci
status=0
run() {  # run NAME MODE BATCH ISA
  echo "== $1, mode $2, ISA cap $4"
  BENCHFP_MAX_CPU_ISA="$4" build/benchfp kernel --batch="$3" --mode="$2" --json="results/ci/$1-$4-$2.json"
  local rc=$?
  if ((rc > status)); then status=$rc; fi
}
for isa in "${isas[@]}"; do
  for kernel in eltwise reduce gemm conv reorder; do
    run "$kernel" corr "cases/$kernel/ci" "$isa"
  done
  run all unwind cases/unwind "$isa"
done
exit "$status"
