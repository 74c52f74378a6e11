#!/usr/bin/env bash
# test.sh - install missing packages, configure and build sheaf in build/, run
# the test suite. Works from any directory. Extra arguments go to ctest
# (e.g. scripts/test.sh -R vectors). Build dir: $SHEAF_BUILD_DIR or build/.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$SHEAF_ROOT/scripts/install-deps.sh"

echo "== configure ($SHEAF_BUILD)"
sheaf_configure -DBUILD_TESTING=ON
echo "== build"
cmake --build "$SHEAF_BUILD" -j "$SHEAF_JOBS"
echo "== test"
cd "$SHEAF_BUILD"
ctest --output-on-failure -j2 "$@"
