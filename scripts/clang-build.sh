# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures a clang
# build folder with the given -fsanitize= list. Debug with its flags
# emptied: asserts stay on, and the sanitizer flags (CMakeLists.txt) choose
# -O1 and line tables.
configure_clang() {  # folder, sanitizers, extra cmake args...
  local dir=$1 sanitize=$2
  shift 2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= -DCMAKE_CXX_COMPILER=clang++ -DST_SANITIZE="$sanitize" "$@" \
    > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
}
