#!/usr/bin/env bash
# A distributed sweep prints exactly what the single-process sweep prints: run the same small
# sweep once plainly and once under `mpirun --oversubscribe -np 2`, and compare byte for byte.
# Usage: sweep_mpi_test.sh WIRESIM_BINARY SOURCE_DIR
set -euo pipefail
wiresim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (tools/setup.sh installs openmpi-bin)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# In the sanitizer build, Open MPI's own allocations (and plugins it unloads) show up as leaks
# that are not ours: leak checking is off for the processes mpirun starts (-x passes it on);
# ASan's other checks stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
args=(sweep --topo "$src/topologies/cluster-h100-ib.yaml" --set nodes=2 --model "$src/scenarios/models/llama-70b.yaml"
      --peak-flops 989TFLOP/s --threads 1)
for format in table csv json; do
  "$wiresim" "${args[@]}" --format $format >"$work/one.$format" 2>/dev/null
  mpirun --oversubscribe -x ASAN_OPTIONS -np 2 "$wiresim" "${args[@]}" --format $format >"$work/two.$format" 2>"$work/mpi.err" ||
    { cat "$work/mpi.err" >&2; echo "FAIL: mpirun -np 2 wiresim sweep failed" >&2; exit 1; }
  cmp -s "$work/one.$format" "$work/two.$format" ||
    { diff "$work/one.$format" "$work/two.$format" | head -20 >&2; echo "FAIL: $format output differs" >&2; exit 1; }
  [ -s "$work/one.$format" ] || { echo "FAIL: empty $format output" >&2; exit 1; }
done
echo "1 passed, 0 failed: mpirun -np 2 sweep output identical to one process (table, csv, json)"
