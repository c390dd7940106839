#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (build-fuzz/), replays
# each seed corpus, then fuzzes each target for SECONDS (default 20). New inputs
# go to build-fuzz/corpus/<target>/, never into the source tree; a crash fails
# the script, and its input is copied into tests/fuzz/corpus/<target>/ so that
# it stays a regression input (commit it with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DBENCHFP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBENCHFP_SANITIZER=fuzzer-no-link,address,undefined > /dev/null
cmake --build build-fuzz -j "$(nproc)" --target benchfp_fuzz
failed=0
while read -r target; do
  [[ -n "$target" ]] || continue
  seeds="tests/fuzz/corpus/$target" work="build-fuzz/corpus/$target" crashes="build-fuzz/crashes/$target"
  mkdir -p "$seeds" "$work" "$crashes"
  echo "== fuzzing $target for ${seconds}s"
  if ! "build-fuzz/tests/fuzz/$target" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | tail -n 25; then
    failed=1
  fi
  for crash in "$crashes"/*; do
    [[ -e "$crash" ]] || continue
    mv "$crash" "$seeds/regression-$(basename "$crash")"  # replayed from there by every later run
    echo "!! $target crashed on $crash: kept as $seeds/regression-$(basename "$crash")"
    failed=1
  done
done < build-fuzz/fuzz_targets.txt
exit "$failed"
