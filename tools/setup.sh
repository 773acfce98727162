# Shared by tools/run and tools/test: install missing Debian packages, then configure and
# build (Release, -j2) when the build is missing or stale. Sourced, not run.
set -euo pipefail
WIRESIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WIRESIM_BUILD=${WIRESIM_BUILD:-$WIRESIM_ROOT/build}
WIRESIM_PACKAGES=(g++ cmake make pkg-config libyaml-cpp-dev libboost-graph-dev libeigen3-dev
                  libspdlog-dev libfmt-dev libcli11-dev doctest-dev nlohmann-json3-dev libexpat1-dev
                  libopenmpi-dev openmpi-bin)

wiresim_install_packages() {
  local missing=()
  for p in "${WIRESIM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "wiresim: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  fi
}

wiresim_build() {
  local log="$WIRESIM_BUILD/build.log"
  if [ ! -f "$WIRESIM_BUILD/CMakeCache.txt" ]; then
    mkdir -p "$WIRESIM_BUILD"
    echo "wiresim: configuring in $WIRESIM_BUILD" >&2
    cmake -S "$WIRESIM_ROOT" -B "$WIRESIM_BUILD" -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 ||
      { cat "$log" >&2; return 1; }
  fi
  # make decides what is stale; a fresh build takes a few minutes on 2 cores.
  cmake --build "$WIRESIM_BUILD" -j2 >"$log" 2>&1 || { tail -n 80 "$log" >&2; return 1; }
}
