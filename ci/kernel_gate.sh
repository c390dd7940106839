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
# A run in which every case is skipped fails (nothing was tested), so a family
# with no code at or below the cap (gemm and conv start at avx2) is left out
# of that cap's corr runs, and the gate says so.
rank() { case "$1" in sse41) echo 1 ;; avx2) echo 2 ;; avx512) echo 3 ;; *) echo 9 ;; esac; }
lowest_isa() { build/benchfp kernel --list | grep -A1 "^$1:" | sed -n 's/.*--isa=\([a-z0-9]*\).*/\1/p'; }
for isa in "${isas[@]}"; do
  for kernel in eltwise reduce gemm conv reorder; do
    lowest=$(lowest_isa "$kernel")
    if (($(rank "$lowest") > $(rank "$isa"))); then
      echo "== $kernel, mode corr, ISA cap $isa: left out (its lowest ISA is $lowest)"
      continue
    fi
    run "$kernel" corr "cases/$kernel/ci" "$isa"
  done
  run all unwind cases/unwind "$isa"
done
exit "$status"
