#!/usr/bin/env bash
# The plan report as a person sees it: render it in headless Chromium (installed here when
# missing, as for the sweep report) and check that the front plot was drawn — a point per plan,
# the front's line, the target — and that the browser logged no console error.
# Usage: plan_report_test.sh WIRESIM_BINARY SOURCE_DIR
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

"$wiresim" plan --model "$src/scenarios/models/llama-70b.yaml" --tpot 50ms --systems hgx-h100,mi300x-8 \
  --max-batch 64 --threads 2 --format csv --report "$work/report.html" >"$work/plans.csv" 2>/dev/null
plans=$(($(wc -l <"$work/plans.csv") - 1))

chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
  --dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/console.log" || true

fail() { echo "FAIL: $*" >&2; exit 1; }
grep -q '<svg class="front"' "$work/dom.html" || fail "the front plot is missing"
points=$(grep -o '<circle' "$work/dom.html" | wc -l)
# One point per plan, plus one legend mark per system (2).
[ "$points" -eq $((plans + 2)) ] || fail "expected $((plans + 2)) circles ($plans plans + 2 legend), found $points"
grep -q '<polyline' "$work/dom.html" || fail "the front's line is missing"
grep -q 'class="target"' "$work/dom.html" || fail "the target line is missing"
grep -q '<table>' "$work/dom.html" || fail "the ranking table is missing"
if grep -E 'CONSOLE|Uncaught' "$work/console.log" >&2; then fail "the browser logged console errors"; fi
echo "1 passed, 0 failed: plan report rendered with $points points, front and target drawn, no console errors"
