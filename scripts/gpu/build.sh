#!/usr/bin/env bash
# Builds the project on a CUDA machine that has a C++ compiler, CMake and a
# Python PyTorch, but no root, no network and none of the Debian libraries
# the project uses (docs/gpu.md, "Building on a CUDA machine without root
# or network"). Those libraries come as .debs that scripts/gpu/bundle.sh
# downloaded on Debian 12 into gpu-bundle/debs/ and that travelled with
# the working tree. This script
#   1. checks the .debs against gpu-bundle/MANIFEST.txt and unpacks them
#      into a prefix (no dpkg database, no root: dpkg-deb -x, or ar + tar,
#      or Python when neither exists);
#   2. rewrites the few absolute /usr paths in the prefix that would point
#      at the machine's own /usr (ns-3's CMake targets, one symlink, the
#      pkg-config files) and checks with ldd that every unpacked shared
#      library finds its dependencies on this machine;
#   3. finds LibTorch through Python (or TORCH_CMAKE_PREFIX), refuses a
#      pre-C++11-ABI build, reports torch, CUDA, nvcc and the GPUs;
#   4. configures build-gpu/ (emu backend and ddp-gloo off, sim backend on
#      when ns-3 is usable), checks in CMakeCache.txt that every package
#      came from the prefix, writes build-gpu/env.sh and builds.
# Run it from anywhere, as root or not; it runs from the repository root.
#
# Environment (all optional):
#   ST_GPU_BUNDLE       bundle folder (default gpu-bundle)
#   ST_GPU_PREFIX       where the .debs are unpacked (default <bundle>/prefix)
#   BUILD_DIR           build folder (default build-gpu)
#   BUILD_TYPE          CMake build type (default Release)
#   JOBS                parallel compile jobs (default: nproc)
#   ST_GPU_TARGETS      space-separated targets to build (default: all)
#   ST_GPU_KEEP_GOING   1: on a compile error, build everything else too, so
#                       one run shows every error (ninja -k 0)
#   ST_SOURCE_COMMIT    the commit this copy of the tree is (the lent machine's
#                       copy has no .git): every run's manifest.json names it
#                       under `build` (cmake/build_info.cmake); without it the
#                       manifests say "unknown". E.g. ST_SOURCE_COMMIT=$(git
#                       rev-parse HEAD) written into the command here.
#   ST_GPU_SIM          auto (default: on when ns-3's libraries load), ON, OFF
#   ST_GPU_UNPACK       dpkg, ar or python: force one unpack method
#   ST_GPU_PIN_HEADERS  1 (default) or 0, see "headers that LibTorch also ships"
#   PYTHON              the Python with torch (default: the first of python3,
#                       /opt/torch/.venv/bin/python3 that imports torch)
#   TORCH_CMAKE_PREFIX  LibTorch's CMake prefix (the folder holding
#                       Torch/TorchConfig.cmake, or that folder itself);
#                       skips Python and its CXX11-ABI check
#   CXX                 the C++ compiler (default: CMake's choice)
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

log() { echo "gpu-build: $*"; }
warn() { echo "gpu-build: warning: $*" >&2; }
die() { echo "gpu-build: error: $*" >&2; exit 1; }

# The bundled libraries are Debian's amd64 build; their files sit in the
# Debian multiarch folder.
ARCH_TRIPLET=x86_64-linux-gnu

abspath() { # abspath PATH: absolute, without requiring that it exists
  case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac
}
BUNDLE_DIR=$(abspath "${ST_GPU_BUNDLE:-gpu-bundle}")
PREFIX=$(abspath "${ST_GPU_PREFIX:-$BUNDLE_DIR/prefix}")
BUILD_DIR=${BUILD_DIR:-build-gpu}
BUILD_TYPE=${BUILD_TYPE:-Release}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
TARGETS=${ST_GPU_TARGETS:-all}
SIM=${ST_GPU_SIM:-auto}
PIN_HEADERS=${ST_GPU_PIN_HEADERS:-1}
DEB_DIR=$BUNDLE_DIR/debs
MANIFEST=$BUNDLE_DIR/MANIFEST.txt
LIBDIR=$PREFIX/usr/lib/$ARCH_TRIPLET

# CMake lists are ';'-separated and the rewrites below use sed with '#'.
case "$PREFIX$ROOT" in
  *[[:space:]\;\#]*) die "the prefix ($PREFIX) or the checkout ($ROOT) contains a space, ';' or '#': choose ST_GPU_PREFIX without them" ;;
esac
case "$SIM" in auto|ON|OFF) ;; *) die "ST_GPU_SIM must be auto, ON or OFF (got '$SIM')" ;; esac

# --- 0. the machine ------------------------------------------------------
os=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}") || echo unknown)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo "glibc unknown")
log "machine: $os, $(uname -m), $glibc, $(nproc 2>/dev/null || echo '?') cores, user $(id -un 2>/dev/null || id -u)"
[ "$(uname -m)" = x86_64 ] || die "the bundled Debian libraries are amd64; this machine is $(uname -m)"

# --- 1. tools ------------------------------------------------------------
command -v cmake >/dev/null || die "cmake not found on PATH"
cmake_version=$(cmake --version | awk 'NR == 1 { print $3 }')
# CMakeLists.txt asks for 3.25.
if [ "$(printf '%s\n' 3.25 "$cmake_version" | sort -V | head -1)" != 3.25 ]; then
  die "cmake $cmake_version is older than 3.25, which CMakeLists.txt requires"
fi
cxx=${CXX:-$(command -v c++ || command -v g++ || true)}
{ [ -n "$cxx" ] && command -v "$cxx" >/dev/null; } || die "no C++ compiler: neither \$CXX, c++ nor g++ is on PATH"
log "tools: cmake $cmake_version, $("$cxx" --version | head -1) ($cxx)"
generator=()
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  if command -v ninja >/dev/null; then
    generator=(-G Ninja)
    log "tools: ninja $(ninja --version)"
  else
    log "tools: no ninja, using CMake's default generator (Makefiles)"
  fi
fi
for tool in sha256sum tar; do
  command -v "$tool" >/dev/null || die "'$tool' not found on PATH"
done

# Steps 2-4, the prefix (unpack the bundle, fix-ups, load checks):
# scripts/gpu/prefix.sh, sourced so that its findings stay in this shell.
. "$ROOT/scripts/gpu/prefix.sh"

# --- 5. LibTorch, CUDA, the GPU -----------------------------------------
torch_dir=""
torch_include=""
torch_cuda=""
if [ -n "${TORCH_CMAKE_PREFIX:-}" ]; then
  if [ -f "$TORCH_CMAKE_PREFIX/TorchConfig.cmake" ]; then torch_dir=$TORCH_CMAKE_PREFIX
  elif [ -f "$TORCH_CMAKE_PREFIX/Torch/TorchConfig.cmake" ]; then torch_dir=$TORCH_CMAKE_PREFIX/Torch
  else die "TORCH_CMAKE_PREFIX=$TORCH_CMAKE_PREFIX holds neither TorchConfig.cmake nor Torch/TorchConfig.cmake"
  fi
  torch_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$torch_dir/TorchConfigVersion.cmake" 2>/dev/null | head -1)
  log "torch: LibTorch ${torch_version:-(version unknown)} from TORCH_CMAKE_PREFIX ($torch_dir); Python and its CXX11-ABI check skipped"
  # pip's layout: <torch>/share/cmake/Torch; Debian's: /usr/lib/<triplet>/cmake/Torch.
  for cand in "$torch_dir/../../../include" "$torch_dir/../../../../include"; do
    if [ -d "$cand/torch" ]; then torch_include=$(cd "$cand" && pwd); break; fi
  done
else
  python=""
  for cand in "${PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
    [ -n "$cand" ] || continue
    command -v "$cand" >/dev/null 2>&1 || continue
    if "$cand" -c 'import torch' >/dev/null 2>&1; then python=$(command -v "$cand"); break; fi
  done
  [ -n "$python" ] || die "no Python that imports torch (tried \$PYTHON, python3, /opt/torch/.venv/bin/python3): set PYTHON=/path/to/python3, or TORCH_CMAKE_PREFIX to LibTorch's CMake prefix"
  info=$("$python" - <<'PY'
import os, torch, torch.utils
print("version", torch.__version__)
print("cuda", torch.version.cuda or "none")
print("abi", int(bool(torch._C._GLIBCXX_USE_CXX11_ABI)))
print("prefix", torch.utils.cmake_prefix_path)
print("include", os.path.join(os.path.dirname(torch.__file__), "include"))
available = torch.cuda.is_available()
print("available", int(available))
if available:
    for i in range(torch.cuda.device_count()):
        print("device", i, torch.cuda.get_device_name(i))
PY
  ) || die "$python could not report torch's version, ABI and CMake prefix"
  get() { echo "$info" | awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }'; }
  torch_version=$(get version)
  torch_cuda=$(get cuda); [ "$torch_cuda" = none ] && torch_cuda=""
  log "torch: $torch_version (CUDA ${torch_cuda:-none}) from $python"
  # Debian's libraries (yaml-cpp, fmt, spdlog, benchmark, ns-3) use the
  # C++11 std::string ABI; a LibTorch built with the old ABI cannot be
  # linked with them.
  [ "$(get abi)" = 1 ] || die "torch $torch_version was built with the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0); the bundled Debian libraries use the C++11 ABI. Use a torch built with the new ABI (recent pip wheels are)"
  log "torch: C++11 ABI (matches the Debian libraries)"
  prefix=$(get prefix)
  [ -f "$prefix/Torch/TorchConfig.cmake" ] || die "torch.utils.cmake_prefix_path ($prefix) has no Torch/TorchConfig.cmake"
  torch_dir=$prefix/Torch
  torch_include=$(get include)
  if [ "$(get available)" = 1 ]; then
    echo "$info" | awk '$1 == "device" { $1 = ""; print "gpu-build: torch sees cuda:" substr($0, 2) }'
  else
    warn "torch.cuda.is_available() is False on this machine"
  fi
fi

cuda_args=()
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
    | sed 's/^/gpu-build: nvidia-smi: /' || warn "nvidia-smi failed"
else
  warn "nvidia-smi not found: cannot report the GPUs"
fi
nvcc=$(command -v nvcc || true)
for cand in ${CUDA_HOME:+$CUDA_HOME/bin/nvcc} /usr/local/cuda/bin/nvcc; do
  [ -n "$nvcc" ] && break
  [ -x "$cand" ] && nvcc=$cand
done
if [ -n "$nvcc" ]; then
  nvcc_version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  log "cuda: nvcc $nvcc_version ($nvcc)"
  if [ -n "$torch_cuda" ] && [ "${nvcc_version%%.*}" != "${torch_cuda%%.*}" ]; then
    warn "nvcc is CUDA $nvcc_version but torch was built with CUDA $torch_cuda"
  fi
  # Caffe2's CMake files (loaded by find_package(Torch)) look for the CUDA
  # toolkit themselves; tell them where it is.
  cuda_args=(-DCUDAToolkit_ROOT="$(dirname "$(dirname "$(readlink -f "$nvcc")")")" -DCMAKE_CUDA_COMPILER="$nvcc")
elif [ -n "$torch_cuda" ]; then
  die "torch is built with CUDA $torch_cuda, and its CMake files look for the CUDA toolkit, but nvcc is neither on PATH nor in \$CUDA_HOME/bin or /usr/local/cuda/bin"
fi

# --- 6. headers that LibTorch also ships ---------------------------------
# A Python torch carries copies of some third-party headers in its
# include folder (fmt, for one). Translation units that include torch get
# that folder as a system include, and whichever copy comes first wins;
# since the build links the prefix's compiled libfmt/libspdlog, their
# headers must be the prefix's. Each name found in both is linked into
# <prefix>/pinned-include, which goes first (-I) on every compile line.
pinned_flags=""
pinned_dir=$PREFIX/pinned-include
rm -rf "$pinned_dir"
if [ -n "$torch_include" ] && [ -d "$torch_include" ]; then
  case "$torch_include" in
    /usr/include|/usr/local/include)
      log "headers: LibTorch's headers are in $torch_include, which the compiler searches last; nothing to pin" ;;
    *)
      overlap=()
      for entry in "$PREFIX"/usr/include/*; do
        name=$(basename "$entry")
        [ -e "$torch_include/$name" ] && overlap+=("$name")
      done
      if [ ${#overlap[@]} -eq 0 ]; then
        log "headers: LibTorch ($torch_include) ships none of the prefix's headers"
      elif [ "$PIN_HEADERS" = 1 ]; then
        mkdir -p "$pinned_dir"
        for name in "${overlap[@]}"; do ln -s "$PREFIX/usr/include/$name" "$pinned_dir/$name"; done
        pinned_flags="-I$pinned_dir"
        log "headers: LibTorch also ships ${overlap[*]}; the prefix's copies go first ($pinned_dir; ST_GPU_PIN_HEADERS=0 turns this off)"
      else
        warn "headers: LibTorch also ships ${overlap[*]}; not pinned (ST_GPU_PIN_HEADERS=0): the copy that wins depends on include order"
      fi ;;
  esac
fi

# --- 7. configure --------------------------------------------------------
declare -A pkg_dirs=(
  [yaml-cpp]=$LIBDIR/cmake/yaml-cpp
  [fmt]=$LIBDIR/cmake/fmt
  [spdlog]=$LIBDIR/cmake/spdlog
  [GTest]=$LIBDIR/cmake/GTest
  [benchmark]=$LIBDIR/cmake/benchmark
  [Eigen3]=$PREFIX/usr/share/eigen3/cmake
  [CLI11]=$PREFIX/usr/share/cmake/CLI11
  [nlohmann_json]=$PREFIX/usr/share/cmake/nlohmann_json
)
[ "$sim_flag" = ON ] && pkg_dirs[ns3]=$LIBDIR/cmake/ns3
dir_args=()
for pkg in "${!pkg_dirs[@]}"; do
  [ -d "${pkg_dirs[$pkg]}" ] || die "the prefix has no CMake package folder for $pkg (${pkg_dirs[$pkg]}): is its -dev package in the bundle?"
  # <Package>_DIR pins each package to the prefix even where the machine
  # has its own copy; CMAKE_PREFIX_PATH below covers anything found
  # indirectly (spdlog's own find_dependency(fmt) uses fmt_DIR too).
  dir_args+=("-D${pkg}_DIR=${pkg_dirs[$pkg]}")
done
{ [ -f "$PREFIX/usr/include/zlib.h" ] && [ -e "$LIBDIR/libz.so" ]; } || die "the prefix has no zlib.h or libz.so link (zlib1g-dev), or the link's target is missing"

# The tree is C++17 (ns-3 3.37 needs it); newer LibTorch releases move
# their headers to C++20. Probe which one this LibTorch accepts; with 20,
# everything but the ns-3 targets is built as C++20 (ST_CXX_STANDARD).
std_args=()
if [ -n "$torch_include" ] && [ -d "$torch_include" ]; then
  probe=$(mktemp -d)
  printf '#include <torch/torch.h>\nint main() { return 0; }\n' > "$probe/probe.cc"
  torch_flags=(-I"$torch_include" -I"$torch_include/torch/csrc/api/include")
  if "$cxx" -std=c++17 -fsyntax-only "${torch_flags[@]}" "$probe/probe.cc" > "$probe/c++17.log" 2>&1; then
    log "c++: LibTorch's headers compile as C++17"
  elif "$cxx" -std=c++20 -fsyntax-only "${torch_flags[@]}" "$probe/probe.cc" > "$probe/c++20.log" 2>&1; then
    std_args=(-DST_CXX_STANDARD=20)
    warn "c++: LibTorch's headers need C++20 (first C++17 error: $(grep -m1 error "$probe/c++17.log")); building as C++20 except the ns-3 targets"
  else
    warn "c++: LibTorch's headers compiled neither as C++17 nor as C++20 in a probe ($probe); the build will say more"
  fi
fi

policy_args=()
# CMake 4 refuses config files that ask for policies older than 3.5; the
# Debian 12 ones were generated by CMake 3.25 and may.
if [ "${cmake_version%%.*}" -ge 4 ]; then policy_args=(-DCMAKE_POLICY_VERSION_MINIMUM=3.5); fi

mkdir -p "$BUILD_DIR"
configure_log=$BUILD_DIR.configure.log
log "configure: $BUILD_DIR (log: $configure_log)"
cmake -S . -B "$BUILD_DIR" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  ${CXX:+-DCMAKE_CXX_COMPILER="$CXX"} \
  -DST_WITH_EMU=OFF -DST_WITH_DDP_GLOO=OFF -DST_WITH_SIM="$sim_flag" \
  -DCMAKE_PREFIX_PATH="$PREFIX/usr;$(dirname "$torch_dir")" \
  -DTorch_DIR="$torch_dir" \
  "${dir_args[@]}" \
  -DZLIB_INCLUDE_DIR="$PREFIX/usr/include" -DZLIB_LIBRARY="$LIBDIR/libz.so" \
  -DCMAKE_BUILD_RPATH="$LIBDIR" \
  -DCMAKE_CXX_FLAGS="$pinned_flags" \
  "${cuda_args[@]}" "${std_args[@]}" "${policy_args[@]}" "$@" > "$configure_log" 2>&1 || {
  tail -n 60 "$configure_log" >&2
  die "configure failed; the whole output is in $configure_log"
}
grep -E "stellatrain:" "$configure_log" | sed 's/^-- /gpu-build: /'

# Which files CMake took each package from: all must be in the prefix.
cache=$BUILD_DIR/CMakeCache.txt
outside=""
for var in "${!pkg_dirs[@]}" ZLIB_INCLUDE_DIR ZLIB_LIBRARY; do
  case "$var" in ZLIB_*) key=$var ;; *) key=${var}_DIR ;; esac
  value=$(sed -n "s/^$key:[A-Z]*=//p" "$cache" | head -1)
  printf 'gpu-build: found %-17s %s\n' "$key" "${value:-(not set)}"
  case "$value" in "$PREFIX"/*) ;; *) outside+=" $key=$value" ;; esac
done
printf 'gpu-build: found %-17s %s\n' Torch_DIR "$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$cache")"
[ -z "$outside" ] || die "packages found outside the prefix:$outside"

# --- 8. env.sh, build ----------------------------------------------------
dataset=$PREFIX/usr/share/datasets/fashion-mnist
if ! ls "$dataset"/train-images-idx3-ubyte.gz >/dev/null 2>&1; then
  warn "no Fashion-MNIST in the prefix ($dataset): runs that train on it will fail"
fi
env_sh=$BUILD_DIR/env.sh
cat > "$env_sh" <<EOF
# Written by scripts/gpu/build.sh. Source it before running the binaries of
# this build: it puts the unpacked Debian libraries on the loader's path
# (the binaries' RUNPATH covers their direct dependencies, not those of
# ns-3's libraries) and points the engine at the unpacked Fashion-MNIST.
st_gpu_libdir='$LIBDIR'
case ":\${LD_LIBRARY_PATH:-}:" in
  *":\$st_gpu_libdir:"*) ;;
  *) export LD_LIBRARY_PATH="\$st_gpu_libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" ;;
esac
export ST_FASHION_MNIST_DIR='$dataset'
export PKG_CONFIG_PATH='$LIBDIR/pkgconfig:$PREFIX/usr/share/pkgconfig'
unset st_gpu_libdir
EOF
# The tests that make TorchScript files (tests/torchscript_model_test.cc)
# run scripts/byo/make_models.py with $ST_PYTHON: the Python whose torch
# this build links, where Debian's /usr/bin/python3 may have none.
if [ -n "${python:-}" ]; then echo "export ST_PYTHON='$python'" >> "$env_sh"; fi

# pip's LibTorch wheels export a copy of std::filesystem from libtorch.so
# (linked in from an older libstdc++). The binaries list libtorch.so before
# libstdc++.so, so the loader binds our std::filesystem calls to that copy,
# and fs::remove_all jumped to address 0 (seen with LibTorch 2.11 + CUDA 13:
# every test that cleans a temporary folder crashed). Preloading the
# compiler's own libstdc++ makes its definitions win.
torch_dir=$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$cache" | head -1)
torch_lib=""
[ -n "$torch_dir" ] && [ -d "$torch_dir/../../../lib" ] && torch_lib=$(cd "$torch_dir/../../../lib" && pwd)
exporter=""
if [ -n "$torch_lib" ]; then
  if command -v nm >/dev/null; then
    for lib in "$torch_lib"/libtorch*.so "$torch_lib"/libc10*.so; do
      [ -f "$lib" ] || continue
      # Into a variable first: `nm | grep -q` can fail under pipefail when
      # grep stops reading early.
      symbols=$(nm -D --defined-only "$lib" 2>/dev/null || true)
      if grep -q ' _ZNSt10filesystem' <<< "$symbols"; then exporter=$lib; break; fi
    done
  else
    warn "nm not found: cannot check whether LibTorch exports std::filesystem (if the tests crash in fs::remove_all, preload the compiler's libstdc++.so.6)"
  fi
fi
if [ -n "$exporter" ]; then
  libtorch=$exporter
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache" | head -1)
  libstdcxx=$("${compiler:-c++}" -print-file-name=libstdc++.so.6)
  [ -f "$libstdcxx" ] || die "$libtorch exports std::filesystem, and the compiler's libstdc++.so.6 to preload was not found"
  cat >> "$env_sh" <<EOF
# $libtorch exports its own std::filesystem (see scripts/gpu/build.sh):
# the compiler's libstdc++ goes first so ours binds to it.
case ":\${LD_PRELOAD:-}:" in
  *":$libstdcxx:"*) ;;
  *) export LD_PRELOAD="$libstdcxx\${LD_PRELOAD:+:\$LD_PRELOAD}" ;;
esac
EOF
  log "$libtorch exports std::filesystem: env.sh preloads $libstdcxx"
fi
log "wrote $env_sh (LD_LIBRARY_PATH, ST_FASHION_MNIST_DIR, PKG_CONFIG_PATH$(grep -q LD_PRELOAD "$env_sh" && echo ', LD_PRELOAD'))"

# gtest_discover_tests runs each test binary at build time, so the build
# needs the same library path as the runs.
# shellcheck disable=SC1090
. "$env_sh"
log "build: targets '$TARGETS' with $JOBS jobs"
# shellcheck disable=SC2086
keep_going=()
[ "${ST_GPU_KEEP_GOING:-0}" = 1 ] && [ -f "$BUILD_DIR/build.ninja" ] && keep_going=(-- -k 0)
# shellcheck disable=SC2086
cmake --build "$BUILD_DIR" -j "$JOBS" --target $TARGETS "${keep_going[@]}" || die "the build failed. Errors inside LibTorch's headers may mean they need a newer C++ standard than the tree's C++17; errors naming fmt:: may mean LibTorch's and the prefix's fmt headers got mixed (see step 6 in this script)"

# --- 9. do the binaries load? --------------------------------------------
problems=""
checked=0
while IFS= read -r exe; do
  checked=$((checked + 1))
  missing=$(ldd "$exe" 2>&1 | awk '/=> not found/ { print $1 }' | sort -u | tr '\n' ' ')
  [ -z "$missing" ] || problems+="  ${exe#"$BUILD_DIR"/}: ${missing% }"$'\n'
done < <(find "$BUILD_DIR" -path "$BUILD_DIR/CMakeFiles" -prune -o -type f -executable -print \
          | while read -r f; do head -c 4 "$f" 2>/dev/null | grep -q 'ELF' && echo "$f"; done)
[ -z "$problems" ] || die "built binaries that do not find their libraries (with env.sh):
$problems"
log "checked the $checked binaries in $BUILD_DIR with ldd: all libraries found"
if [ -x "$BUILD_DIR/apps/stellatrain" ]; then
  log "stellatrain uses from the prefix: $(ldd "$BUILD_DIR/apps/stellatrain" | awk -v p="$PREFIX" 'index($3, p) == 1 { print $1 }' | tr '\n' ' ')"
fi
log "done in ${SECONDS} s. Before running: . $env_sh"
