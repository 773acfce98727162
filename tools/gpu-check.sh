#!/usr/bin/env bash
# Usage: tools/gpu-check.sh [BUILD_DIR]
# On a machine with a GPU: builds wiresim-probe and wiresim, runs the probe's --quick mode,
# fits α–β per tier from its CSV, and keeps the results under calibrate/results/:
#   <date>-<gpu>.csv, .json (machine facts), -fit.txt (the fit), -overlay.yaml.
# Everything together stays under 5 minutes: the build takes the first ~2 (two CUDA
# architectures, two targets), the probe is bounded by its 100 s budget, the fit is instant.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu}"
cd "$root"

nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv || true

# Build only what the check needs; the native architecture of this GPU, nothing else.
arch=""
if cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1); then
  arch="-DCMAKE_CUDA_ARCHITECTURES=${cap/./}"
fi
timeout 180 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF $arch >/dev/null
timeout 180 cmake --build "$build" -j"$(nproc)" --target wiresim-probe wiresim
if [ ! -x "$build/calibrate/wiresim-probe" ]; then
  echo "gpu-check: wiresim-probe was not built (is nvcc on PATH or CUDACXX set?)" >&2
  exit 2
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' |
      sed 's/-$//')
out="calibrate/results/$(date -u +%Y-%m-%d)-${gpu:-unknown-gpu}"
mkdir -p calibrate/results

timeout 150 "$build/calibrate/wiresim-probe" --quick --out "$out"
"$build/tools/wiresim" calibrate fit "$out.csv" -o "$out-overlay.yaml" | tee "$out-fit.txt"
echo "gpu-check: wrote $out.csv $out.json $out-fit.txt $out-overlay.yaml"
