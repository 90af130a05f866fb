#!/usr/bin/env bash
# Downloads, on a Debian 12 machine with apt, the Debian packages that a
# build on a CUDA machine without root or network needs and that such a
# machine lacks (docs/gpu.md, "Building on a CUDA machine without root or
# network"). They go to gpu-bundle/debs/ (ignored by git), which travels
# to that machine inside the working tree; scripts/gpu/build.sh unpacks
# them there into a prefix.
#
# Idempotent: a .deb already present with the expected SHA256 is not
# downloaded again; .debs that are no longer in the list are removed, so
# the folder always holds exactly the list below.
#
# Environment:
#   ST_GPU_BUNDLE            bundle folder (default gpu-bundle)
#   ST_GPU_BUNDLE_LIMIT_MIB  size limit for the .debs (default 56: a carry
#                            holds 64 MiB and the tracked tree travels too)
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "gpu-bundle: $*"; }
warn() { echo "gpu-bundle: warning: $*" >&2; }
die() { echo "gpu-bundle: error: $*" >&2; exit 1; }

BUNDLE_DIR=${ST_GPU_BUNDLE:-gpu-bundle}
LIMIT_MIB=${ST_GPU_BUNDLE_LIMIT_MIB:-56}
DEB_DIR=$BUNDLE_DIR/debs
MANIFEST=$BUNDLE_DIR/MANIFEST.txt

# What the build and the runs need, beyond a compiler, CMake, Ninja, the
# CUDA toolkit and a Python PyTorch (which the GPU machine has). Runtime
# libraries come with their -dev packages because the -dev packages only
# hold the headers, CMake files and the unversioned .so link.
PACKAGES=(
  # core/util (st_yaml), scenarios, sim configs
  libyaml-cpp-dev libyaml-cpp0.7
  # logging and formatting everywhere; spdlog is built against this fmt
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  # header-only: the command line, JSON, linear algebra (st_compress)
  libcli11-dev nlohmann-json3-dev libeigen3-dev
  # the test suites: libgtest-dev ships the static libgtest*.a, libgmock-dev
  # libgmock*.a (the googletest package, sources only, is not needed)
  libgtest-dev libgmock-dev
  # tests/bench and `stellatrain bench`
  libbenchmark-dev libbenchmark1debian
  # core/data reads the gzip'd IDX files; only the headers and the libz.so
  # link are used: build.sh points the link at the machine's own libz.so.1
  zlib1g-dev
  # .npz dataset files (core/data/npz.h); libzip4 needs libbz2 and liblzma,
  # which every distribution has
  libzip-dev libzip4
  # core/comm's TCP transport (standalone Asio, header-only)
  libasio-dev
  # the ns-3 backend (sim/): ns-3 3.37 and the GSL that libns3-core needs.
  # libns3.37 also needs libsqlite3 and libxml2, which a CUDA machine
  # normally has; build.sh checks with ldd and names what is missing.
  # ns3 (90 kB) holds the three helper programs that ns-3's CMake targets
  # import; CMake stops when an imported target's file is missing.
  libns3-dev libns3.37 ns3 libgsl27 libgslcblas0
  # Fashion-MNIST (30 MB), read from ST_FASHION_MNIST_DIR
  dataset-fashion-mnist
)
# Not bundled, on purpose:
#   pkg-config    only the emu backend needs it; the GPU build has ST_WITH_EMU=OFF
#   libgloo-dev   only the ddp-gloo system (core/c10d) needs it; ST_WITH_DDP_GLOO=OFF
#   libgsl-dev    ns-3's CMake targets name libgsl.so, which build.sh rewrites to
#                 libgsl27's libgsl.so.27; no GSL header is included

for tool in apt-get apt-cache dpkg-deb sha256sum; do
  command -v "$tool" >/dev/null || die "'$tool' not found: this script runs on Debian 12 with apt"
done

# The package names and versions (libns3.37, libyaml-cpp0.7, ...) are
# Debian 12's; another release would have other names or an ns-3 that
# CMakeLists.txt does not accept (it asks for 3.37).
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-unknown}")
if [ "$codename" != "bookworm" ]; then
  warn "this is '$codename', not Debian 12 (bookworm): package names or versions may not match"
fi

mkdir -p "$DEB_DIR"

# One field of a package's candidate version, from `apt-cache show` text.
field() { # field SHOW_TEXT FIELD
  awk -v f="$2:" '$1 == f { print $2; exit }' <<<"$1"
}

ns3_version=$(field "$(apt-cache show --no-all-versions libns3-dev 2>/dev/null)" Version)
case "$ns3_version" in
  3.37*) ;;
  "") die "apt knows no libns3-dev: run 'apt-get update' (Debian 12 has ns-3 3.37)" ;;
  *) die "apt's libns3-dev is $ns3_version, but CMakeLists.txt needs ns-3 3.37" ;;
esac

expected=()
manifest_lines=()
total=0
for pkg in "${PACKAGES[@]}"; do
  show=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null || true)
  version=$(field "$show" Version)
  [ -n "$version" ] || die "apt knows no package '$pkg' (run 'apt-get update'?)"
  sha=$(field "$show" SHA256)
  size=$(field "$show" Size)
  arch=$(field "$show" Architecture)
  { [ -n "$sha" ] && [ -n "$arch" ]; } || die "apt-cache shows no SHA256/Architecture for $pkg"
  # The name apt-get download gives the file: the epoch's colon becomes %3a.
  filename=${pkg}_${version//:/%3a}_${arch}.deb
  path=$DEB_DIR/$filename
  if [ -f "$path" ] && [ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ]; then
    state="present"
  else
    rm -f "$path"
    # apt-get download writes into the current folder. As root, apt warns
    # that its _apt sandbox user cannot write there; the download is
    # still checked against the archive's signature and SHA256.
    (cd "$DEB_DIR" && apt-get download -qq "$pkg=$version" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
    [ -f "$path" ] || die "apt-get download $pkg=$version did not produce $path"
    [ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ] || die "$path: SHA256 differs from apt's"
    state="downloaded"
  fi
  actual=$(stat -c %s "$path")
  total=$((total + actual))
  expected+=("$filename")
  manifest_lines+=("$pkg $version $arch $filename $actual $sha")
  printf 'gpu-bundle: %-11s %8.2f MiB  %s\n' "$state" "$(awk -v b="$actual" 'BEGIN { print b / 1048576 }')" "$filename"
  [ "$actual" = "$size" ] || warn "$filename is $actual bytes, apt said $size"
done

# Remove .debs that are not in the list (an older version, a dropped package).
for f in "$DEB_DIR"/*.deb; do
  [ -e "$f" ] || continue
  keep=0
  for e in "${expected[@]}"; do [ "$(basename "$f")" = "$e" ] && keep=1 && break; done
  if [ "$keep" = 0 ]; then
    log "removing $(basename "$f"): not in the package list"
    rm -f "$f"
  fi
done

{
  echo "# Written by scripts/gpu/bundle.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ) from Debian $codename's archive."
  echo "# scripts/gpu/build.sh checks each file against this list before unpacking."
  echo "# package version architecture file bytes sha256"
  printf '%s\n' "${manifest_lines[@]}"
} > "$MANIFEST"

total_mib=$(awk -v b="$total" 'BEGIN { printf "%.2f", b / 1048576 }')
log "${#PACKAGES[@]} packages, $total_mib MiB in $DEB_DIR (limit $LIMIT_MIB MiB); list in $MANIFEST"
if [ "$total" -gt $((LIMIT_MIB * 1048576)) ]; then
  die "the bundle is $total_mib MiB, over the $LIMIT_MIB MiB limit"
fi

# Everything in the bundle folder travels when the folder is carried; a
# prefix or build left here by a local run of build.sh would not fit.
bundle_total=$(du -sb "$BUNDLE_DIR" | cut -f1)
if [ "$bundle_total" -gt $((LIMIT_MIB * 1048576)) ]; then
  warn "$BUNDLE_DIR holds $(awk -v b="$bundle_total" 'BEGIN { printf "%.1f", b / 1048576 }') MiB in all:"
  du -sh "$BUNDLE_DIR"/* >&2
  warn "carry only $DEB_DIR and $MANIFEST, or remove the rest (e.g. a local prefix) first"
fi
