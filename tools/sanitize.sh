# The sanitizer build, shared by `tools/test --sanitize` and tools/fuzz. Sourced after
# tools/setup.sh, not run. One clang build in build-asan/ serves both: the libraries, the
# program and the tests with AddressSanitizer + UndefinedBehaviorSanitizer (any undefined
# behaviour aborts), plus libFuzzer's coverage hooks so the fuzz targets link against the
# same objects. Installs clang-14 and libclang-rt-14-dev when missing.
WIRESIM_ASAN_BUILD=${WIRESIM_ASAN_BUILD:-$WIRESIM_ROOT/build-asan}
WIRESIM_PACKAGES+=(clang-14 libclang-rt-14-dev)
# Leaks are errors too; a failed allocation throws (std::bad_alloc) rather than aborting.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$WIRESIM_ROOT/tools/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Configures build-asan when needed, then builds the given targets (all when none).
wiresim_sanitizer_build() {
  local log="$WIRESIM_ASAN_BUILD/build.log"
  if [ ! -f "$WIRESIM_ASAN_BUILD/CMakeCache.txt" ]; then
    mkdir -p "$WIRESIM_ASAN_BUILD"
    echo "wiresim: configuring the sanitizer build in $WIRESIM_ASAN_BUILD" >&2
    local flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
    cmake -S "$WIRESIM_ROOT" -B "$WIRESIM_ASAN_BUILD" -DCMAKE_BUILD_TYPE=Asan \
          -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS="$flags -fsanitize=fuzzer-no-link" \
          -DWIRESIM_FUZZ=ON -DWIRESIM_PROBE=OFF >"$log" 2>&1 || { cat "$log" >&2; return 1; }
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$WIRESIM_ASAN_BUILD" -j2 "${targets[@]}" >"$log" 2>&1 || { tail -n 80 "$log" >&2; return 1; }
}
