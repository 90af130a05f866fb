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

# Exit status 77 (ctest: skipped) with the reason unless the binary has the
# sim backend.
require_sim_backend() {  # stellatrain binary, why the test needs it
  if ! "$1" info 2>/dev/null | grep -q "sim backend: ns-3"; then
    echo "SKIP: this build has no sim backend ($2)"
    exit 77
  fi
}

# Timing on a shared machine: runs `run` (fresh namespaces, fresh
# connections) and then `check`, up to `attempts` times, and exits 0 at the
# first agreement, 1 when none agreed.
attempt_until_agreed() {  # attempts, test name, run function, check function
  local attempts=$1 name=$2 run=$3 check=$4 attempt
  for attempt in $(seq "$attempts"); do
    "$run"
    if "$check"; then exit 0; fi
    [ "$attempt" -lt "$attempts" ] && echo "$name: the emulator disagreed (attempt $attempt of $attempts); another attempt"
  done
  echo "$name: the emulator disagreed in all $attempts attempts"
  exit 1
}

fail() { echo "FAIL: $*" >&2; exit 1; }
