#!/usr/bin/env bash
# Usage: tools/gpu-check.sh [BUILD_DIR]
# On a machine with a GPU: builds wiresim-probe (and wiresim), runs the probe, fits α–β per
# tier from its CSV, and keeps the results under calibrate/results/ (or $WIRESIM_RESULTS):
#   <date>-<gpu>.csv, .json (machine facts), -fit.txt (the fit), -overlay.yaml.
# Where the project's libraries are missing (a bare CUDA machine: no yaml-cpp, Boost, ...),
# the probe is built alone with nvcc and the fit is left to a machine with wiresim: the script
# prints the command. WIRESIM_PROBE_ARGS replaces the probe's arguments (default --quick).
# Everything together stays under 5 minutes: the build takes the first ~2 (the native CUDA
# architecture, two targets), the probe is bounded by its budget, the fit is instant.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu}"
results="${WIRESIM_RESULTS:-$root/calibrate/results}"
cd "$root"

nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv || true

# Build only what the check needs; the native architecture of this GPU, nothing else.
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 || true)
arch=""
[ -n "$cap" ] && arch="-DCMAKE_CUDA_ARCHITECTURES=${cap/./}"
probe="$build/calibrate/wiresim-probe"
wiresim="$build/tools/wiresim"
mkdir -p "$build"
if timeout 180 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF $arch >"$build/configure.log" 2>&1; then
  timeout 300 cmake --build "$build" -j"$(nproc)" --target wiresim-probe wiresim
else
  # The probe needs only CUDA (and NCCL where found): build it alone.
  echo "gpu-check: the project does not configure here ($(grep -m1 -i 'could not find\|error' "$build/configure.log" || true));" \
       "building wiresim-probe alone with nvcc" >&2
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  nccl_h=$(find /usr/local/cuda/include /usr/include /opt /usr/local/lib -name nccl.h 2>/dev/null | head -1 || true)
  nccl_so=$(find /usr/local/cuda/lib /usr/local/cuda/lib64 /usr/lib /opt /usr/local/lib -name 'libnccl.so*' 2>/dev/null | head -1 || true)
  flags=()
  if [ -n "$nccl_h" ] && [ -n "$nccl_so" ]; then
    flags=(-DWIRESIM_PROBE_NCCL -I"$(dirname "$nccl_h")" -L"$(dirname "$nccl_so")" -l:"$(basename "$nccl_so")"
           -Xlinker -rpath -Xlinker "$(dirname "$nccl_so")")
    echo "gpu-check: NCCL from $nccl_so" >&2
  else
    echo "gpu-check: no NCCL found: collectives not measured" >&2
  fi
  mkdir -p "$build/calibrate"
  timeout 300 "$nvcc" -O2 -std=c++17 ${cap:+-arch=sm_${cap/./}} -I. calibrate/probes/*.cu -o "$probe" "${flags[@]}" -ldl
  wiresim=""
fi
if [ ! -x "$probe" ]; then
  echo "gpu-check: wiresim-probe was not built (is nvcc on PATH or CUDACXX set?)" >&2
  exit 2
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' |
      sed 's/-$//')
mkdir -p "$results"
out="$results/$(date -u +%Y-%m-%d)-${gpu:-unknown-gpu}"

# shellcheck disable=SC2086
timeout 300 "$probe" ${WIRESIM_PROBE_ARGS:---quick} --out "$out"
if [ -n "$wiresim" ] && [ -x "$wiresim" ]; then
  "$wiresim" calibrate fit "$out.csv" -o "$out-overlay.yaml" | tee "$out-fit.txt"
  echo "gpu-check: wrote $out.csv $out.json $out-fit.txt $out-overlay.yaml"
else
  echo "gpu-check: wrote $out.csv $out.json; fit it where wiresim builds:"
  echo "  wiresim calibrate fit $(basename "$out").csv -o $(basename "$out")-overlay.yaml"
fi
