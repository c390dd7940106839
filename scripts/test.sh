#!/usr/bin/env bash
# Runs benchfp's test suite (unit and end-to-end) through ctest.
# BENCHFP_REQUIRE_PERF=1 turns "perf_event_open refused" skips into failures (CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure "$@"
