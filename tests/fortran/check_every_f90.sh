#!/usr/bin/env bash
# check_every_f90.sh - every public fsion_* routine of module sion_f90 (its
# own and the key-value ones it re-exports) is called in f90_every.f90, so
# that a routine added to the module without a known-answer check fails here.
#   check_every_f90.sh BINDINGS_DIR TEST_SOURCE
set -euo pipefail
src=$1/sion_f90.f90 test=$2
# the names in the module's `public ::` statements (continuation lines included)
names=$(awk '/^[[:space:]]*public[[:space:]]*::/ {on = 1}
             on {print; if ($0 !~ /&[[:space:]]*$/) on = 0}' "$src" |
        grep -o 'fsion_[a-z0-9_]*' | sort -u)
[ -n "$names" ] || { echo "FAILED: no public fsion_* names found in $src"; exit 1; }
code=$(sed 's/!.*$//' "$test")  # calls in comments do not count
missing=0 n=0
for f in $names; do
    n=$((n + 1))
    if ! grep -Eq "(call[[:space:]]+$f[[:space:]]*\(|[^a-z0-9_]$f[[:space:]]*\()" <<<"$code"; then
        echo "FAILED: $f is public in sion_f90 but f90_every.f90 does not call it"
        missing=$((missing + 1))
    fi
done
[ "$missing" -eq 0 ] || exit 1
echo "check_every_f90: all $n public fsion_* routines of sion_f90 are called"
