# common.sh - sourced by the scripts in this directory (not run on its own).
# Provides: SHEAF_ROOT (source tree), SHEAF_BUILD (build dir, default
# $SHEAF_ROOT/build, override with SHEAF_BUILD_DIR), sheaf_configure [cmake args].

SHEAF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHEAF_BUILD=${SHEAF_BUILD_DIR:-$SHEAF_ROOT/build}
SHEAF_JOBS=$(nproc 2>/dev/null || echo 2)

# Configure the build directory: Ninja on first configuration when present;
# later runs only re-run cmake (cheap) with the given extra arguments.
sheaf_configure() {
    local gen=()
    if [ ! -f "$SHEAF_BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
        gen=(-G Ninja)
    fi
    cmake -S "$SHEAF_ROOT" -B "$SHEAF_BUILD" "${gen[@]}" "$@"
}
