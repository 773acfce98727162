#!/usr/bin/env bash
# The plan report as a person sees it: render it in headless Chromium (installed here when
# missing, as for the sweep report) and check that the front plot was drawn — a point per plan,
# the front's line, the target — and that the browser logged no console error.
# Usage: plan_report_test.sh WIRESIM_BINARY SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/render.sh"
report_test_setup "$@"

"$wiresim" plan --model "$src/scenarios/models/llama-70b.yaml" --tpot 50ms --systems hgx-h100,mi300x-8 \
  --max-batch 64 --threads 2 --format csv --report "$work/report.html" >"$work/plans.csv" 2>/dev/null
plans=$(($(wc -l <"$work/plans.csv") - 1))

render_report "$work/report.html" "$work/dom.html" "$work/console.log"

grep -q '<svg class="front"' "$work/dom.html" || fail "the front plot is missing"
points=$(grep -o '<circle' "$work/dom.html" | wc -l)
# One point per plan, plus one legend mark per system (2).
[ "$points" -eq $((plans + 2)) ] || fail "expected $((plans + 2)) circles ($plans plans + 2 legend), found $points"
grep -q '<polyline' "$work/dom.html" || fail "the front's line is missing"
grep -q 'class="target"' "$work/dom.html" || fail "the target line is missing"
grep -q '<table>' "$work/dom.html" || fail "the ranking table is missing"
if grep -E 'CONSOLE|Uncaught' "$work/console.log" >&2; then fail "the browser logged console errors"; fi
echo "1 passed, 0 failed: plan report rendered with $points points, front and target drawn, no console errors"
