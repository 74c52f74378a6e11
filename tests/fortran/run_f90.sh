#!/usr/bin/env bash
# run_f90.sh - run one Fortran test program in a fresh directory, require its
# "OK" line, then compare every task of the containers it wrote with the
# bytes it says it stored, through sioncat (byte-exact).
#   run_f90.sh WORKDIR SIONCAT NTASKS [FILE:PREFIX ...] -- COMMAND [ARGS...]
# For each FILE:PREFIX and t in 0..NTASKS-1: `SIONCAT -t t FILE` must equal
# the file PREFIX.t that the program wrote.
set -euo pipefail
work=$1 sioncat=$2 ntasks=$3
shift 3
checks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do checks+=("$1"); shift; done
[ $# -gt 1 ] || { echo "usage: run_f90.sh WORKDIR SIONCAT NTASKS [FILE:PREFIX ...] -- COMMAND..." >&2; exit 2; }
shift
rm -rf "$work"
mkdir -p "$work"
cd "$work"
rc=0
out=$("$@" 2>&1) || rc=$?
[ "$rc" -eq 0 ] || { echo "$out"; echo "FAILED: $* exited $rc"; exit 1; }
echo "$out"
case "$out" in *": OK"*) ;; *) echo "FAILED: no OK line"; exit 1 ;; esac
for c in "${checks[@]}"; do
    file=${c%%:*} prefix=${c#*:}
    for ((t = 0; t < ntasks; t++)); do
        "$sioncat" -t "$t" "$file" >"cat.$t" || { echo "FAILED: sioncat -t $t $file"; exit 1; }
        cmp "cat.$t" "$prefix.$t" || { echo "FAILED: sioncat -t $t $file differs from $prefix.$t"; exit 1; }
    done
    echo "sioncat: the $ntasks task(s) of $file are byte-exact"
done
