#!/usr/bin/env bash
# The sweep report as a person sees it: render it in headless Chromium (Debian's package,
# installed here when missing) and check that the charts were drawn and that the browser
# logged no console error. Usage: sweep_report_test.sh WIRESIM_BINARY SOURCE_DIR
set -euo pipefail
wiresim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing chromium for the report test" >&2
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null
fi

"$wiresim" sweep --topo "$src/topologies/cluster-h100-ib.yaml" --set nodes=2 \
  --model "$src/scenarios/models/llama-70b.yaml" --peak-flops 989TFLOP/s --threads 2 \
  --report "$work/report.html" >/dev/null 2>&1

chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
  --dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/console.log" || true

fail() { echo "FAIL: $*" >&2; exit 1; }
charts=$(grep -o '<svg class="chart"' "$work/dom.html" | wc -l)
maps=$(grep -o '<svg class="heatmap"' "$work/dom.html" | wc -l)
bars=$(grep -o '<rect' "$work/dom.html" | wc -l)
[ "$charts" -eq 2 ] || fail "expected 2 bar charts in the rendered page, found $charts"
[ "$maps" -eq 2 ] || fail "expected 2 heat maps in the rendered page, found $maps"
[ "$bars" -ge 40 ] || fail "expected the charts to draw at least 40 rectangles, found $bars"
grep -q '<table>' "$work/dom.html" || fail "the ranking table is missing"
if grep -E 'CONSOLE|Uncaught' "$work/console.log" >&2; then fail "the browser logged console errors"; fi
echo "1 passed, 0 failed: report rendered with $charts charts, $maps heat maps, $bars rectangles, no console errors"
