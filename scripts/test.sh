#!/usr/bin/env bash
# Runs benchfp's test suite (unit and end-to-end) through ctest, then the
# allocator's tests again under AddressSanitizer and ThreadSanitizer, built with
# the checked pool (-DBENCHFP_POOL_CHECKED=ON), where every misuse death test runs.
# BENCHFP_REQUIRE_PERF=1 turns "perf_event_open refused" skips into failures (CI sets it).
# BENCHFP_SANITIZERS=0 skips the sanitizer builds, BENCHFP_GATE_E2E=0 the checks
# that the regression gate catches injected slowdowns and frame costs (quicker local runs),
# BENCHFP_PERF_CROSSCHECK=0 the comparison with the real perf (scripts/perf_crosscheck.sh).
# Then every libFuzzer target of tests/fuzz (clang, build-fuzz/) runs for
# BENCHFP_FUZZ_SECONDS (default 20) each; a crash fails the script and its input
# is kept in tests/fuzz/corpus/<target>/ as a regression input (BENCHFP_FUZZ=0 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure "$@"
if [[ "${BENCHFP_PERF_CROSSCHECK:-1}" != 0 ]]; then
  echo "== benchfp's chain verdicts against the real perf"
  scripts/perf_crosscheck.sh
fi
if [[ "${BENCHFP_GATE_E2E:-1}" != 0 ]]; then
  echo "== the regression gate against a build with an injected fast-path slowdown"
  scripts/gate_catches_slowdown.sh
  echo "== ci/gate.sh against a build with an rbp write in frame kernels and a fast-path slowdown"
  scripts/gate_catches_injections.sh
  echo "== the frame-cost limit against a build whose frame kernels pay per loop iteration"
  scripts/gate_catches_frame_cost.sh
fi
if [[ "${BENCHFP_SANITIZERS:-1}" != 0 ]]; then
  for sanitizer in address thread; do
    cmake -S . -B "build-$sanitizer" -DBENCHFP_SANITIZER="$sanitizer" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DBENCHFP_POOL_CHECKED=ON > /dev/null
    cmake --build "build-$sanitizer" -j "$(nproc)" --target benchfp_alloc_tests
    echo "== allocator tests under ${sanitizer} sanitizer, checked pool"
    ctest --test-dir "build-$sanitizer" --output-on-failure -R '^(Pool|Profiler|AllocWorkloads)[A-Za-z]*\.'
  done
fi
if [[ "${BENCHFP_FUZZ:-1}" != 0 ]]; then
  scripts/fuzz.sh "${BENCHFP_FUZZ_SECONDS:-20}"
fi
