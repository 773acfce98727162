#!/usr/bin/env bash
# The jobs reports as a person sees them: render them in headless Chromium (installed here when
# missing, as for the sweep report) and check the charts, the tables and the degraded spines'
# note, and that the browser logged no console error.
# Usage: jobs_report_test.sh WIRESIM_BINARY SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/render.sh"
report_test_setup "$@"

# One placement: a bar per job (alone, and what sharing added) and the shared links' table.
"$wiresim" jobs "$src/scenarios/jobs/two-tp16-prefill.yaml" --report "$work/one.html" >/dev/null
render_report "$work/one.html" "$work/one-dom.html" "$work/one-console.log"
grep -q '<svg class="chart"' "$work/one-dom.html" || fail "the jobs chart is missing"
# Two jobs, each alone and slowed down: at least 4 segments, plus 3 legend marks.
bars=$(grep -o '<rect' "$work/one-dom.html" | wc -l)
[ "$bars" -ge 7 ] || fail "expected at least 7 rectangles in the jobs chart, found $bars"
grep -q 'leaf0-&gt;spine0' "$work/one-dom.html" || fail "the shared links' table is missing"
if grep -E 'CONSOLE|Uncaught' "$work/one-console.log" >&2; then fail "the browser logged console errors"; fi

# Placements compared on half-rate spines: a bar per placement, and the faults named.
"$wiresim" jobs "$src/scenarios/jobs/two-tp16-prefill-spine-half.yaml" --placement compare \
  --report "$work/compare.html" >/dev/null
render_report "$work/compare.html" "$work/compare-dom.html" "$work/compare-console.log"
grep -q '<svg class="chart"' "$work/compare-dom.html" || fail "the placements chart is missing"
grep -q '<td>as given, interleave</td>' "$work/compare-dom.html" || fail "the merged placements are missing"
grep -q 'faults: degraded 32 links to 50% (spine\*)' "$work/compare-dom.html" || fail "the degraded spines are not named"
if grep -E 'CONSOLE|Uncaught' "$work/compare-console.log" >&2; then fail "the browser logged console errors"; fi
echo "2 passed, 0 failed: jobs reports rendered ($bars rectangles in one, placements compared in the other), no console errors"
