#!/usr/bin/env bash
# Tries scripts/gpu/build.sh on this Debian 12 machine as if it were the
# CUDA machine (docs/gpu.md): inside a private mount namespace, an overlay
# on /usr hides every file that the bundle's .debs would install, plus
# what a machine without those packages would also lack (pkg-config,
# Gloo's headers, the GSL/SQLite/libxml2 headers and -dev links). The
# build then has to take everything from the unpacked prefix; LibTorch is
# Debian's CPU-only one (TORCH_CMAKE_PREFIX), since this machine has no
# Python torch and no GPU. The rest of the machine does not see the
# overlay. Needs root, or unprivileged user namespaces.
#
# Builds the targets in ST_GPU_TARGETS (default: a few small ones that
# link each bundled library) with JOBS (default 1) into BUILD_DIR (default
# build-gpu-check) and the prefix ST_GPU_PREFIX (default
# build-gpu-check-prefix), then runs the tests among them with env.sh;
# with ST_GPU_CTEST set (ctest arguments, e.g. "-L unit") it runs ctest
# instead. When stellatrain is built it also runs `stellatrain info` and a
# 10-iteration training run on Fashion-MNIST inside ns-3.
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "gpu-check: $*"; }
die() { echo "gpu-check: error: $*" >&2; exit 1; }

if [ "${1:-}" != --inside ]; then
  command -v unshare >/dev/null || die "unshare (util-linux) not found"
  [ -d gpu-bundle/debs ] || die "no gpu-bundle/debs: run scripts/gpu/bundle.sh first"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
  if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
  exec "${ns[@]}" bash "$0" --inside
fi

# --- inside the namespace ---------------------------------------------------
mount --make-rprivate /
work=$(mktemp -d)
trap 'umount /usr 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/upper" "$work/work"

hide() { # hide /usr/PATH: a whiteout in the overlay's upper layer
  local rel=${1#/usr/}
  [ -e "$1" ] || [ -L "$1" ] || return 0
  mkdir -p "$work/upper/$(dirname "$rel")"
  mknod "$work/upper/$rel" c 0 0
}
count=0
for deb in gpu-bundle/debs/*.deb; do
  while IFS= read -r path; do
    case "$path" in /usr/*) ;; *) continue ;; esac
    [ -d "$path" ] && [ ! -L "$path" ] && continue
    hide "$path" && count=$((count + 1))
  done < <(dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); print p }')
done
triplet=x86_64-linux-gnu
extra=(
  /usr/bin/pkg-config /usr/bin/pkgconf "/usr/bin/$triplet-pkg-config" "/usr/bin/$triplet-pkgconf"
  /usr/include/gloo "/usr/lib/$triplet/cmake/Gloo" /usr/share/cmake/Gloo
  /usr/include/gsl /usr/include/sqlite3.h /usr/include/libxml2
  "/usr/lib/$triplet/libgsl.so" "/usr/lib/$triplet/libgslcblas.so"
  "/usr/lib/$triplet/libsqlite3.so" "/usr/lib/$triplet/libxml2.so"
)
for path in "${extra[@]}"; do hide "$path" && count=$((count + 1)); done
mount -t overlay overlay -o "lowerdir=/usr,upperdir=$work/upper,workdir=$work/work" /usr
log "hid $count paths under /usr in this namespace (the bundle's files, pkg-config, Gloo, GSL/SQLite/libxml2 headers and -dev links)"
for probe in /usr/include/yaml-cpp/yaml.h /usr/include/asio.hpp /usr/include/ns3/core-module.h \
             /usr/lib/$triplet/libfmt.so.9 /usr/lib/$triplet/cmake/GTest/GTestConfig.cmake /usr/bin/pkg-config \
             /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz; do
  [ ! -e "$probe" ] || die "$probe is still visible"
done
log "probes hidden: yaml-cpp, asio, ns-3 headers, libfmt.so.9, GTest's CMake files, pkg-config, Fashion-MNIST"

export BUILD_DIR=${BUILD_DIR:-build-gpu-check}
export ST_GPU_PREFIX=${ST_GPU_PREFIX:-build-gpu-check-prefix}
export JOBS=${JOBS:-1}
export TORCH_CMAKE_PREFIX=${TORCH_CMAKE_PREFIX:-/usr/lib/$triplet/cmake/Torch}
# Small targets, together linking every bundled library: yaml-cpp, fmt,
# GTest/GMock (every test), ns-3 + GSL (sim_network_test), Eigen
# (wire_test), Google Benchmark (st_dense_step_bench), spdlog + Asio
# (frame_test through st_comm), CLI11 + nlohmann-json (st_trace_command).
export ST_GPU_TARGETS=${ST_GPU_TARGETS:-yaml_fields_test traces_test wire_test sim_network_test frame_test st_dense_step_bench st_trace_command}
bash scripts/gpu/build.sh

# shellcheck disable=SC1091
. "$BUILD_DIR/env.sh"
status=0
if [ -n "${ST_GPU_CTEST:-}" ]; then
  log "running ctest ${ST_GPU_CTEST} in $BUILD_DIR"
  # shellcheck disable=SC2086
  (cd "$BUILD_DIR" && ctest $ST_GPU_CTEST --output-on-failure) > "$work/ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed|Total Test time|\*\*\*|Failed|Not Run" "$work/ctest.log" | tail -40
  ST_GPU_TARGETS=""  # the tests ran through ctest
fi
for t in $ST_GPU_TARGETS; do
  exe=$(find "$BUILD_DIR" -path "$BUILD_DIR/CMakeFiles" -prune -o -type f -executable -name "$t" -print | head -1)
  [ -n "$exe" ] || continue
  case "$t" in
    *_test)
      log "running $exe"
      if "$exe" --gtest_brief=1 > "$work/$t.log" 2>&1; then
        log "$t: $(grep -E '^\[  PASSED  \]' "$work/$t.log" || tail -1 "$work/$t.log")"
      else
        tail -n 30 "$work/$t.log" >&2
        log "$t: FAILED"; status=1
      fi ;;
    *_bench)
      log "running $exe (small size, briefly)"
      if "$exe" --numel 100000 --benchmark_min_time=0.01 > "$work/$t.log" 2>&1; then
        grep -E "numel|ratio" "$work/$t.log" | sed "s/^/gpu-check: $t: /"
      else
        tail -n 30 "$work/$t.log" >&2
        log "$t: FAILED"; status=1
      fi ;;
  esac
done
if [ -x "$BUILD_DIR/apps/stellatrain" ]; then
  "$BUILD_DIR/apps/stellatrain" info || status=1
  log "training the CNN on Fashion-MNIST (from the prefix) for 10 iterations inside ns-3"
  if "$BUILD_DIR/apps/stellatrain" train --backend sim --sim-config scenarios/sim-2x2-115mbps.yaml \
       --system stellatrain --model cnn --dataset fashion-mnist --gpus-per-node 2 --iterations 10 \
       --out "$work/train" > "$work/train.log" 2>&1; then
    tail -n 5 "$work/train.log"
    log "training run finished; results in a temporary folder (removed)"
  else
    tail -n 30 "$work/train.log" >&2
    log "training run FAILED"; status=1
  fi
fi
exit $status
