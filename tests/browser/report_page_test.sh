#!/usr/bin/env bash
# The HTML report as a reader sees it: headless Chromium (Debian's chromium,
# scripts/setup.sh installs it) loads a FAILED report and the test checks that
# the page loaded without errors, that its DOM holds the verdict and the failing
# row (hostile name read whole) before the folded rows, and that the failing row
# is painted within the first screen (a 1280x800 screenshot holds its colour).
# Usage: report_page_test.sh BENCHFP_BINARY SOURCE_DIR
# Exit 77 (ctest SKIP) when chromium is absent, unless BENCHFP_REQUIRE_PERF=1 (CI).
set -uo pipefail
benchfp=$1 source=$2
here=$(dirname "$0")
if ! command -v chromium > /dev/null; then
  if [[ "${BENCHFP_REQUIRE_PERF:-0}" == 1 ]]; then
    echo "FAIL: BENCHFP_REQUIRE_PERF=1 but chromium is not installed (scripts/setup.sh installs it)"; exit 1
  fi
  echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"; exit 77
fi
work=$(mktemp -d /tmp/benchfp-page-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 "$here/make_report_inputs.py" "$work" || fail "cannot write the inputs"
"$benchfp" judge --current="$work/current.json" --baseline="$work/baseline.json" --tolerances="$work/tolerances.json" \
  --cases="$work/cases.json" --report="$work/report" --commit="test<1>" > "$work/judge.txt" 2>&1
status=$?
((status == 1)) || fail "judge exit status $status, expected 1 (a regression): $(cat "$work/judge.txt")"
page="file://$work/report/report.html"

# --no-sandbox: the test runs as root in CI. The profile dir keeps runs apart.
browser() { chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
  --enable-logging=stderr --v=0 "$@"; }
browser --dump-dom "$page" > "$work/dom.html" 2> "$work/dom.err" || fail "chromium --dump-dom failed: $(tail -5 "$work/dom.err")"
if grep -E 'CONSOLE|Uncaught|Failed to load' "$work/dom.err"; then fail "the page logged errors"; fi
python3 - "$work/dom.html" <<'PY' || exit 1
import sys
dom = open(sys.argv[1]).read()
def need(what, text):
    if text not in dom:
        print(f"FAIL: the DOM lacks {what}: {text}"); sys.exit(1)
    return dom.index(text)
need("the end of the page", "</html>")
verdict = need("the verdict element", 'id="verdict" class="failed"')
need("the verdict text", "FAILED: ")
row = need("the failing row, its name whole", "BM_Vec&lt;std::pair&lt;int,float&gt;&gt;&amp;/N")
folded = need("the folded rows", '<details class="all-rows">')
need("the unwind rate table", 'id="unwind-rates"')
need("a flame graph per policy", 'id="flame-clobber"')
need("a flame graph per policy", 'id="flame-frame"')
if not verdict < row < folded:
    print(f"FAIL: DOM order verdict {verdict}, failing row {row}, folded rows {folded}"); sys.exit(1)
PY
browser --window-size=1280,800 --screenshot="$work/first-screen.png" "$page" 2> "$work/shot.err" > /dev/null ||
  fail "chromium --screenshot failed: $(tail -5 "$work/shot.err")"
python3 "$here/png_colours.py" "$work/first-screen.png" 1280 800 fde2e1 ffd6d6 || fail "first screen"
echo "PASS: the report page loads in $(chromium --version | head -1); verdict and failing row on the first screen"
