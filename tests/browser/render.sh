# Sourced by the report tests: report_test_setup "$@" reads the test's arguments (WIRESIM_BINARY
# SOURCE_DIR) into $wiresim and $src and makes $work, a scratch folder removed at exit;
# render_report HTML DOM LOG renders a page in headless Chromium (Debian's package, installed
# here when missing), writing the DOM after its scripts ran to DOM and the browser's log to LOG.
report_test_setup() {
  wiresim=$1
  src=$2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

render_report() {
  if ! command -v chromium >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing chromium for the report test" >&2
    # Two report tests may start at once on a fresh machine (ctest -j2): one installs, the
    # other waits on the lock and then finds chromium there.
    (
      flock 9
      if ! command -v chromium >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q -o DPkg::Lock::Timeout=600 \
          --no-install-recommends chromium >/dev/null
      fi
    ) 9>"${TMPDIR:-/tmp}/wiresim-chromium-install.lock"
  fi
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(dirname "$2")/profile" --enable-logging=stderr --v=0 \
    --dump-dom "file://$1" >"$2" 2>"$3" || true
}

fail() { echo "FAIL: $*" >&2; exit 1; }
