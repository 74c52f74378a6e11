#!/usr/bin/env bash
# format.sh [--check] - sheaf's one C style (.clang-format at the top of the
# tree) on every C source and header git tracks under src/, tools/, tests/,
# bench/, include/, examples/ and bindings/. Without --check the files are
# rewritten in place; with --check nothing is written and the exit status is
# 1 when a file is not formatted (clang-format --dry-run -Werror names it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (Debian: clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'src/*.[ch]' 'tools/*.[ch]' 'tests/*.[ch]' 'bench/*.[ch]' 'include/*.h' \
                                  'examples/*.[ch]' 'bindings/*.[ch]')
if [ "${1:-}" = "--check" ]; then
    clang-format --dry-run -Werror "${files[@]}"
    echo "format.sh: ${#files[@]} files follow .clang-format"
else
    clang-format -i "${files[@]}"
    echo "format.sh: ${#files[@]} files formatted"
fi
