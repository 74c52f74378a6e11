#!/usr/bin/env bash
# sionlib-fortran-tests.sh - build SIONlib 1.7's own Fortran test programs
# (F77 and F90) UNCHANGED against an installed sheaf and run them with their
# own run scripts and expected logs. SIONlib's source is not part of sheaf:
# pass a checkout of it (e.g. git clone of SIONlib 1.7.6).
#   scripts/sionlib-fortran-tests.sh SIONLIB_SRC SHEAF_PREFIX [WORKDIR]
# Prints one line per test (OK / FAILED with the diff) and exits 1 if any
# failed. Needs mpifort (MPICH) and gfortran with OpenMP.
set -uo pipefail
src=$(cd "$1" && pwd) prefix=$(cd "$2" && pwd)
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/sheaf-sionlib-f.XXXXXX")}
mkdir -p "$work" && cd "$work" || exit 2
cfg=$prefix/bin/sionconfig
fc=${FC:-gfortran} mpifc=${MPIFC:-mpifort}
# name language layer source-dir
tests="fsropn_1:f77:ser:serial Fsropn_1:f90:ser:serial
smplef_1:f77:mpi:parallel mchnkf_1:f77:mpi:parallel collf__1:f77:mpi:parallel
fomp___1:f77:omp:parallel ompif__1:f77:ompi:parallel
Fmpi___1:f90:mpi:parallel Fomp___1:f90:omp:parallel ompiF__1:f90:ompi:parallel"
ln -sf "$prefix/bin/siondump" siondump
printf 'MPIRUN="mpiexec -n 4"\nMPIRUNEXECPARM=""\n' > mpirun.defs
fail=0
for t in $tests; do
    IFS=: read -r name lang layer dir <<<"$t"
    ext=f; [ "$lang" = f90 ] && ext=f90
    cp "$src/test/$dir/test_$name.$ext" "$src/test/$dir/test_$name.run.sh" .
    cp "$src/test/$dir/test_${name}"_std*.log . 2>/dev/null
    cp "$src/test/$dir/test_$name.sion" . 2>/dev/null
    comp=$mpifc; [ "$layer" = ser ] || [ "$layer" = omp ] && comp=$fc
    omp=""; case $layer in omp|ompi) omp=-fopenmp ;; esac
    # shellcheck disable=SC2046
    if ! "$comp" $omp -fallow-argument-mismatch -w $("$cfg" --cflags --"$lang" --"$layer") "test_$name.$ext" \
         $("$cfg" --libs --"$lang" --"$layer") -o "test_$name" > "build_$name.log" 2>&1; then
        echo "     test_$name  ... FAILED (build)"; cat "build_$name.log"; fail=1; continue
    fi
    out=$(bash "./test_$name.run.sh" 2>&1)
    echo "$out"
    case $out in *"... OK"*) ;; *) fail=1 ;; esac
done
exit $fail
