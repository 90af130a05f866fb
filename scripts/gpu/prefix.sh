# Sourced by scripts/gpu/build.sh after its step 1 (tools), in the same
# shell: steps 2-4, the prefix. It checks the bundle's .debs against
# gpu-bundle/MANIFEST.txt, unpacks them into $PREFIX (no dpkg database, no
# root), rewrites the absolute /usr paths that would leave the prefix, and
# checks with ldd that every unpacked library loads on this machine. It
# reads build.sh's settings (PREFIX, BUNDLE_DIR, DEB_DIR, MANIFEST, LIBDIR,
# ARCH_TRIPLET, SIM, and ST_GPU_UNPACK from the environment) and its
# log/warn/die, and leaves for the steps after it: packages and have_pkg,
# the ns-3 findings and sim_flag. Not meant to run alone.
# Bumped when the fix-ups below change, so that an old prefix is redone.
FIXUP_VERSION=1

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
