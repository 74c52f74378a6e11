#!/usr/bin/env bash
# check_modules.sh - the Fortran modules compile cleanly as standard Fortran
# 2018 with every warning an error and without -fallow-argument-mismatch
# (which old-style interfaces such as SIONlib's own need with gfortran >= 10).
#   check_modules.sh FC SOURCE_DIR
set -euo pipefail
fc=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-f90-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for m in sheaf_f90_c sheaf_f90_keyval sion_f90 sion_f90_mpi sion_f90_omp sion_f90_ompi; do
    "$fc" -Wall -Wextra -pedantic -std=f2018 -Werror -fimplicit-none -J "$tmp" -c "$src/$m.f90" \
        -o "$tmp/$m.o" || { echo "FAILED: $m.f90 does not compile cleanly"; exit 1; }
    echo "$m.f90: clean (-Wall -Wextra -pedantic -std=f2018 -Werror)"
done
echo "check_modules: OK"
