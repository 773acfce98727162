#!/usr/bin/env bash
# The sweep report as a person sees it: render it in headless Chromium (Debian's package,
# installed here when missing) and check that the charts were drawn and that the browser
# logged no console error. Usage: sweep_report_test.sh WIRESIM_BINARY SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/render.sh"
report_test_setup "$@"

"$wiresim" sweep --topo "$src/topologies/cluster-h100-ib.yaml" --set nodes=2 \
  --model "$src/scenarios/models/llama-70b.yaml" --peak-flops 989TFLOP/s --threads 2 \
  --report "$work/report.html" >/dev/null 2>&1

render_report "$work/report.html" "$work/dom.html" "$work/console.log"

charts=$(grep -o '<svg class="chart"' "$work/dom.html" | wc -l)
maps=$(grep -o '<svg class="heatmap"' "$work/dom.html" | wc -l)
bars=$(grep -o '<rect' "$work/dom.html" | wc -l)
[ "$charts" -eq 2 ] || fail "expected 2 bar charts in the rendered page, found $charts"
[ "$maps" -eq 2 ] || fail "expected 2 heat maps in the rendered page, found $maps"
[ "$bars" -ge 40 ] || fail "expected the charts to draw at least 40 rectangles, found $bars"
grep -q '<table>' "$work/dom.html" || fail "the ranking table is missing"
if grep -E 'CONSOLE|Uncaught' "$work/console.log" >&2; then fail "the browser logged console errors"; fi
echo "1 passed, 0 failed: report rendered with $charts charts, $maps heat maps, $bars rectangles, no console errors"
