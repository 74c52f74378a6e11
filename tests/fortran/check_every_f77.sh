#!/usr/bin/env bash
# check_every_f77.sh - SIONlib's Fortran 77 interface as linked: each shared
# library libsheaf_f77* exports LFSION_* routines only, and every routine it
# exports is called by one of the F77 test programs (so a routine added
# without a known-answer check fails here).
#   check_every_f77.sh NM "TEST_SOURCES" LIB...
set -euo pipefail
nm=$1 sources=$2
shift 2
code=$(for f in $sources; do grep -v '^[Cc!*]' "$f"; done | tr 'A-Z' 'a-z')
missing=0 n=0
for lib in "$@"; do
    syms=$("$nm" -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ {print $3}')
    [ -n "$syms" ] || { echo "FAILED: $lib exports nothing"; exit 1; }
    other=$(grep -v '^lfsion_[a-z0-9_]*_$' <<<"$syms" || true)
    [ -z "$other" ] || { echo "FAILED: $lib exports more than LFSION_* routines:"; echo "$other"; exit 1; }
    for s in $syms; do
        n=$((n + 1))
        name=${s%_}
        grep -Eq "(call[[:space:]]+$name[[:space:]]*\(|[^a-z0-9_]$name[[:space:]]*\()" <<<"$code" ||
            { echo "FAILED: $lib exports $name but no F77 test program calls it"; missing=$((missing + 1)); }
    done
done
[ "$missing" -eq 0 ] || exit 1
echo "check_every_f77: all $n exported LFSION_* routines are called by the F77 tests"
