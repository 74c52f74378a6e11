#!/usr/bin/env bash
# mp2c_restart.sh - examples/mp2c: checkpoint with one rank count, restart
# with others through the mapped open (ctest: fortran.mp2c).
#   mp2c_restart.sh WORKDIR MPIEXEC PROGRAM
# Each run must print its OK line; the restart itself checks every particle,
# and that the readers got each one exactly once.
set -euo pipefail
work=$1 mpiexec=$2 prog=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
run() { # <ranks> <args...>
    local n=$1 out
    shift
    out=$("$mpiexec" -n "$n" "$prog" "$@" 2>&1) || { echo "$out"; echo "FAILED: $n ranks: $*"; exit 1; }
    echo "$out"
    case "$out" in *": OK ("*) ;; *) echo "FAILED: no OK line ($n ranks: $*)"; exit 1 ;; esac
}
run 4 write a.sion 1001 2
[ -f a.sion ] && [ -f a.sion.000001 ] || { echo "FAILED: 2 files expected"; exit 1; }
for n in 3 2 1; do run "$n" restart a.sion; done
run 3 write b.sion 500 1
run 4 restart b.sion
echo "mp2c_restart: OK"
