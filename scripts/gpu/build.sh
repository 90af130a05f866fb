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

# Bumped when the fix-ups below change, so that an old prefix is redone.
FIXUP_VERSION=1
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

# How to unpack a .deb without dpkg's database: dpkg-deb -x when dpkg is
# there, else ar (binutils, which comes with gcc) and tar, else Python's
# tarfile (which reads the gzip/xz data.tar that Debian 12's .debs use).
python_for_unpack=$(command -v python3 || true)
unpack=${ST_GPU_UNPACK:-}
if [ -z "$unpack" ]; then
  if command -v dpkg-deb >/dev/null; then unpack="dpkg"
  elif command -v ar >/dev/null && command -v xz >/dev/null; then unpack="ar"
  elif [ -n "$python_for_unpack" ]; then unpack="python"
  else die "cannot unpack .debs: none of dpkg-deb, ar (with xz) or python3 is on PATH"
  fi
fi
case "$unpack" in
  dpkg) command -v dpkg-deb >/dev/null || die "ST_GPU_UNPACK=dpkg but dpkg-deb is not on PATH" ;;
  ar) command -v ar >/dev/null || die "ST_GPU_UNPACK=ar but ar is not on PATH" ;;
  python) [ -n "$python_for_unpack" ] || die "ST_GPU_UNPACK=python but python3 is not on PATH" ;;
  *) die "ST_GPU_UNPACK must be dpkg, ar or python (got '$unpack')" ;;
esac

unpack_deb() { # unpack_deb DEB DEST
  case "$unpack" in
    dpkg) dpkg-deb -x "$1" "$2" ;;
    ar)
      local tmp member
      tmp=$(mktemp -d)
      (cd "$tmp" && ar x "$1")
      member=$(find "$tmp" -maxdepth 1 -name 'data.tar.*' | head -1)
      [ -n "$member" ] || { rm -rf "$tmp"; die "$1 has no data.tar.* member"; }
      case "$member" in
        *.xz) command -v xz >/dev/null || die "$1's data is xz-compressed and xz is not on PATH (try ST_GPU_UNPACK=python)" ;;
        *.zst) command -v zstd >/dev/null || die "$1's data is zstd-compressed and zstd is not on PATH" ;;
      esac
      tar -C "$2" -xf "$member"
      rm -rf "$tmp" ;;
    python)
      "$python_for_unpack" - "$1" "$2" <<'PY'
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
with open(deb, "rb") as f:
    if f.read(8) != b"!<arch>\n":
        sys.exit(f"{deb}: not an ar archive")
    while True:
        header = f.read(60)
        if len(header) < 60:
            sys.exit(f"{deb}: no data.tar member")
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        data = f.read(size)
        f.read(size % 2)  # members are 2-byte aligned
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                # The .debs were checked against the manifest's SHA256;
                # 'tar' keeps dpkg's behaviour (absolute symlinks included).
                if hasattr(tarfile, "tar_filter"):
                    tar.extractall(dest, filter="tar")
                else:
                    tar.extractall(dest)
            break
PY
      ;;
  esac
}

# --- 2. the bundle: check against the manifest, unpack -------------------
[ -d "$DEB_DIR" ] || die "no $DEB_DIR: run scripts/gpu/bundle.sh on Debian 12 and carry $BUNDLE_DIR here (docs/gpu.md)"
[ -f "$MANIFEST" ] || die "no $MANIFEST: run scripts/gpu/bundle.sh again (it writes the manifest)"
packages=()
debs=()
while read -r pkg version _arch file bytes sha; do
  case "$pkg" in ''|'#'*) continue ;; esac
  path=$DEB_DIR/$file
  [ -f "$path" ] || die "$file (package $pkg $version) is listed in $MANIFEST but missing from $DEB_DIR"
  [ "$(stat -c %s "$path")" = "$bytes" ] || die "$file is $(stat -c %s "$path") bytes, $MANIFEST says $bytes (damaged in transit?)"
  [ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ] || die "$file: SHA256 differs from $MANIFEST (damaged in transit?)"
  packages+=("$pkg")
  debs+=("$path")
done < "$MANIFEST"
[ ${#debs[@]} -gt 0 ] || die "$MANIFEST lists no packages"
have_pkg() { local p; for p in "${packages[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
log "bundle: ${#debs[@]} packages checked against $MANIFEST"

stamp_file=$PREFIX/.st-gpu-prefix
stamp_text="fixups $FIXUP_VERSION
$(grep -v '^#' "$MANIFEST")"
fresh=0
if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_text" ]; then
  log "prefix: $PREFIX is up to date with the manifest"
else
  if [ -e "$PREFIX" ] && [ ! -f "$stamp_file" ] && [ -n "$(ls -A "$PREFIX" 2>/dev/null)" ]; then
    die "refusing to empty $PREFIX: it is not a prefix made by this script (no .st-gpu-prefix); choose another ST_GPU_PREFIX"
  fi
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  log "prefix: unpacking ${#debs[@]} .debs into $PREFIX (method: $unpack)"
  for deb in "${debs[@]}"; do
    unpack_deb "$deb" "$PREFIX"
  done
  fresh=1
fi

# --- 3. fix-ups: absolute paths that would leave the prefix --------------
# A library on this machine by file name: the multiarch and lib64 folders,
# then the loader's cache.
host_lib() { # host_lib FILE_NAME
  local d p
  for d in /lib/$ARCH_TRIPLET /usr/lib/$ARCH_TRIPLET /lib64 /usr/lib64 /lib /usr/lib; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  for ldc in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
    if command -v "$ldc" >/dev/null 2>&1; then
      p=$("$ldc" -p 2>/dev/null | awk -v n="$1" '$1 == n && /x86-64/ { print $NF; exit }')
      [ -n "$p" ] && [ -e "$p" ] && { echo "$p"; return 0; }
    fi
  done
  return 1
}
# The runtime library (libfoo.so.N) behind a link name (libfoo.so or
# libfoo.so.N.M.K): the shortest libfoo.so.* in FOLDER, or on this machine.
runtime_lib() { # runtime_lib LINK_NAME [FOLDER]
  local stem=${1%%.so*}.so cand best=""
  if [ -n "${2:-}" ]; then
    for cand in "$2/$stem".[0-9]*; do
      [ -e "$cand" ] || continue
      if [ -z "$best" ] || [ ${#cand} -lt ${#best} ]; then best=$cand; fi
    done
    [ -n "$best" ] && { echo "$best"; return 0; }
    return 1
  fi
  local d
  for d in /lib/$ARCH_TRIPLET /usr/lib/$ARCH_TRIPLET /lib64 /usr/lib64; do
    for cand in "$d/$stem".[0-9]*; do
      [ -e "$cand" ] || continue
      if [ -z "$best" ] || [ ${#cand} -lt ${#best} ]; then best=$cand; fi
    done
    [ -n "$best" ] && { echo "$best"; return 0; }
  done
  # Not in the usual folders: ask the loader's cache for libfoo.so.<digit>.
  local n
  for n in 0 1 2 3 4 5 6 7 8 9; do
    host_lib "$stem.$n" && return 0
  done
  return 1
}

ns3_targets=$LIBDIR/cmake/ns3/ns3Targets.cmake
if [ "$fresh" = 1 ]; then
  # (a) Absolute symlinks. Only zlib1g-dev has one: libz.so ->
  # /lib/x86_64-linux-gnu/libz.so.1.2.13 (zlib1g's file, not bundled).
  # Point it at this machine's own zlib runtime rather than bundling
  # Debian's: every library here that uses zlib then shares one copy.
  while IFS= read -r link; do
    target=$(readlink "$link")
    if [ -e "$PREFIX$target" ]; then
      ln -sfn "$PREFIX$target" "$link"
      log "fix-up: ${link#"$PREFIX"/} -> $PREFIX$target (inside the prefix)"
    elif host=$(runtime_lib "$(basename "$target")"); then
      ln -sfn "$host" "$link"
      log "fix-up: ${link#"$PREFIX"/} -> $host (this machine's runtime; Debian's pointed at $target)"
    else
      warn "${link#"$PREFIX"/} points at $target, which neither the prefix nor this machine has"
    fi
  done < <(find "$PREFIX" -type l -lname '/*')

  # (b) ns-3's CMake targets (generated by Debian's build) list the build
  # machine's include folders (/usr/include, /usr, /usr/include/libxml2,
  # /usr/include/python3.11) after the prefix-relative one, and the GSL,
  # SQLite and libxml2 link libraries by absolute /usr/lib paths of their
  # -dev packages. CMake stops on an imported target whose include folder
  # does not exist, and the -dev .so links are not on this machine. The
  # other packages' CMake files are relocatable (paths relative to the
  # file) and are left alone.
  if [ -f "$ns3_targets" ]; then
    # Keep only "${_IMPORT_PREFIX}/include": ns-3's public headers that
    # this tree includes need nothing from the other folders.
    sed -i -E 's#(INTERFACE_INCLUDE_DIRECTORIES "\$\{_IMPORT_PREFIX\}/include)[^"]*"#\1"#' "$ns3_targets"
    for lib in $(grep -oE '/usr/lib/[^;"]+\.so' "$ns3_targets" | sort -u); do
      name=$(basename "$lib")
      users=$(awk -v l="$lib" '/^add_library\(/ { t = $1; sub(/add_library\(/, "", t) } index($0, l) { print t }' "$ns3_targets" | sort -u | tr '\n' ' ')
      if new=$(runtime_lib "$name" "$LIBDIR"); then
        where="the prefix"
      elif [ -e "$lib" ]; then
        new=$lib; where="this machine (-dev link)"
      elif new=$(runtime_lib "$name"); then
        where="this machine (runtime)"
      else
        warn "ns-3: $lib (used by ${users% }) is not on this machine; left as is"
        continue
      fi
      sed -i "s#$lib\([;\"]\)#$new\1#g" "$ns3_targets"
      log "fix-up: ns-3 links $name from $where: $new"
    done
  fi

  # (c) pkg-config files: point /usr paths into the prefix. The build does
  # not use them (pkg-config is only for the emu backend, which is off);
  # this keeps `pkg-config` answers right for anyone who does, through
  # PKG_CONFIG_PATH in env.sh.
  while IFS= read -r pc; do
    sed -i -E "s#(^|[=\" ;]|-[IL])/usr(/|\"|;| |\$)#\1$PREFIX/usr\2#g" "$pc"
  done < <(find "$PREFIX" -name '*.pc' -type f)

  # What is left: lines in the prefix's CMake files that still name /usr.
  # The guards generated by CMake ("_realOrig" and the assignment inside
  # it) only apply when the file sits in the original /usr, so they are
  # harmless here.
  left=$(grep -rn --include='*.cmake' -E '(^|[";])/usr/' "$PREFIX" 2>/dev/null \
    | grep -vE '_realOrig|set\((_IMPORT_PREFIX|PACKAGE_PREFIX_DIR) "/usr' || true)
  if [ -n "$left" ]; then
    # Paths that exist here (a -dev link this machine has) are fine; the
    # missing ones are reported again, with their users, in step 4.
    log "fix-up: CMake files in the prefix that still name files under /usr:"
    echo "$left" | sed "s#^$PREFIX/##" | head -20
  else
    log "fix-up: no CMake file in the prefix names a /usr path any more (besides CMake's own relocation guards)"
  fi
  printf '%s\n' "$stamp_text" > "$stamp_file"
fi

# --- 4. do the unpacked libraries load here? ------------------------------
# ns-3 link libraries that the fix-up could not place (checked on every
# run, not only after unpacking), with the ns-3 targets that name them.
unresolved_ns3_libs=()
if [ -f "$ns3_targets" ]; then
  for lib in $(grep -oE '(^|[;"])/[^;"]+\.so[^;"]*' "$ns3_targets" | sed 's/^[;"]//' | sort -u); do
    [ -e "$lib" ] && continue
    users=$(awk -v l="$lib" '/^add_library\(/ { t = $1; sub(/add_library\(/, "", t) } index($0, l) { print t }' "$ns3_targets" | sort -u | tr '\n' ' ')
    unresolved_ns3_libs+=("$lib (named by ${users% })")
  done
fi
command -v ldd >/dev/null || die "ldd not found: cannot check that the bundled libraries load on this machine"
ns3_usable=0
ns3_problems=""
other_problems=""
if [ -d "$LIBDIR" ]; then
  while IFS= read -r so; do
    out=$(LD_LIBRARY_PATH=$LIBDIR ldd "$so" 2>&1 || true)
    # "libfoo.so.1 => not found", or "/lib/.../libc.so.6: version `GLIBC_2.38' not found (required by ...)"
    missing=$(echo "$out" | awk '/=> not found/ { print $1 } /version .* not found/ { print $3 "(" $1 ")" }' | sort -u | tr '\n' ' ')
    [ -n "$missing" ] || continue
    case "$(basename "$so")" in
      libns3-*) ns3_problems+="  $(basename "$so"): ${missing% }"$'\n' ;;
      *) other_problems+="  $(basename "$so"): ${missing% }"$'\n' ;;
    esac
  done < <(find "$LIBDIR" -maxdepth 1 -type f -name '*.so*')
fi
if [ -n "$other_problems" ]; then
  die "bundled libraries that do not load on this machine (missing libraries, or GLIBC/GLIBCXX versions it is too old for):
$other_problems"
fi
# The ns-3 modules sim/ links (and, through them, bridge and stats).
ns3_needed="core network internet point-to-point applications traffic-control bridge stats"
if have_pkg libns3-dev && have_pkg libns3.37; then
  needed_problems=""
  if [ -n "$ns3_problems" ]; then
    for m in $ns3_needed; do
      line=$(echo "$ns3_problems" | grep -F "libns3-$m.so" || true)
      [ -n "$line" ] && needed_problems+="$line"$'\n'
    done
    others=$(echo "$ns3_problems" | grep -vF -f <(for m in $ns3_needed; do echo "libns3-$m.so"; done) || true)
    [ -n "$others" ] && log "ns-3 modules this tree does not link miss libraries here (harmless):"$'\n'"$others"
  fi
  if [ -n "$needed_problems" ]; then
    msg="ns-3 modules the sim backend links do not load here:
$needed_problems(libsqlite3.so.0 comes from libsqlite3-0, libxml2.so.2 from libxml2)"
    [ "$SIM" = ON ] && die "$msg"
    warn "$msg"
    warn "building without the sim backend (ST_GPU_SIM=ON would stop here instead)"
  elif [ ${#unresolved_ns3_libs[@]} -gt 0 ] && printf '%s\n' "${unresolved_ns3_libs[@]}" | grep -qE "ns3::lib($(echo "$ns3_needed" | tr ' ' '|'))( |\))"; then
    msg="ns-3's CMake targets name libraries this machine lacks: ${unresolved_ns3_libs[*]}"
    [ "$SIM" = ON ] && die "$msg"
    warn "$msg; building without the sim backend"
  else
    ns3_usable=1
  fi
fi
case "$SIM" in
  OFF) sim_flag=OFF ;;
  ON) [ "$ns3_usable" = 1 ] || die "ST_GPU_SIM=ON but ns-3 (libns3-dev, libns3.37) is not in the bundle"; sim_flag=ON ;;
  auto) if [ "$ns3_usable" = 1 ]; then sim_flag=ON; else sim_flag=OFF; fi ;;
esac
log "libraries: every bundled library finds its dependencies with LD_LIBRARY_PATH=$LIBDIR; sim backend $sim_flag"

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
