#!/usr/bin/env bash
# check_exports_f90.sh - the Fortran libraries export their module procedures
# (__<module>_MOD_<name>, with the compiler's helpers for derived types) and
# nothing else: the C glue (glue_mpi.c) is hidden.
#   check_exports_f90.sh NM LIB...
set -euo pipefail
nm=$1
shift
bad=0
for lib in "$@"; do
    syms=$("$nm" -D --defined-only "$lib" | awk '{print $3}')
    other=$(echo "$syms" | grep -v -E '^__[A-Za-z0-9_]+_MOD_[A-Za-z0-9_]+$' |
            grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' || true)
    if [ -n "$other" ]; then
        echo "FAILED: $(basename "$lib") exports non-module symbols:"; echo "$other"; bad=1
    fi
    n=$(echo "$syms" | grep -c '_MOD_fsion_' || true)
    [ "$n" -gt 0 ] || { echo "FAILED: $(basename "$lib") exports no fsion_ routine"; bad=1; }
    echo "$(basename "$lib"): $n fsion_ routines, nothing else"
done
[ $bad -eq 0 ] && echo "check_exports_f90: OK"
exit $bad
