# Shared by the emulation backend's shell tests (emu_cleanup_test.sh,
# emu_run_test.sh, emu_compare_test.sh): sourced, not run.

# The stellatrain binary as an absolute path (the tests cd elsewhere).
absolute_binary() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# Exit status 77 (ctest: skipped) with the reason unless running as root.
require_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): it builds network namespaces"
    exit 77
  fi
}

# cd into WORK: the given folder (kept), or a new temporary one removed on exit.
enter_work_dir() {  # test name, [folder]
  WORK=${2:-}
  if [ -z "$WORK" ]; then
    WORK=$(mktemp -d "/tmp/$1.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
  fi
  mkdir -p "$WORK"
  cd "$WORK"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
