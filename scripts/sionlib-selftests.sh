#!/bin/bash
# Runs SIONlib 1.7.6's own C test programs (test/serial, test/parallel of its public source,
# which this script does not contain or copy into the repository) against sheaf, with
# SIONlib's own run scripts and expected logs, and prints one line per program and a count.
#
#   scripts/sionlib-selftests.sh SIONLIB_SRC BUILD_DIR [WORK_DIR] [test names...]
#
# SIONLIB_SRC: an unpacked SIONlib 1.7.6 source tree (the directory holding test/).
# BUILD_DIR:   a configured and built sheaf tree (libsheaf*, tools/siondump).
# WORK_DIR:    where the tests are copied, built and run (default: a new mktemp -d).
# Programs that include SIONlib's internal headers (sion_file.h, sion_flags.h, the key-value
# tables, ...) are listed as "internal" and not built. Each run script compares the program's
# stdout and stderr with SIONlib's logs; the line "stdout same" says whether only stderr (error
# texts, which sheaf words differently: README "Differences from SIONlib") differed.
# Not part of ctest: it needs SIONlib's source and takes a few minutes (4 MPI ranks).
set -u
src=${1:?SIONlib source tree}
build=$(cd "${2:?sheaf build tree}" && pwd)
work=${3:-$(mktemp -d /tmp/sionlib-selftests.XXXXXX)}
shift $(($# < 3 ? $# : 3))
only=("$@")
here=$(cd "$(dirname "$0")/.." && pwd)
np=${SIONLIB_TESTS_NP:-4}
timeout_s=${SIONLIB_TESTS_TIMEOUT:-300}

[ -d "$src/test/parallel" ] || { echo "no test/parallel under $src" >&2; exit 2; }
mkdir -p "$work" || exit 2
cp -r "$src/test/serial" "$src/test/parallel" "$work/" || exit 2

inc="-I$here/include -I$build/include -I$build"
libs="-L$build/src -L$build/src/mpi -L$build/src/omp -L$build/src/ompi"
rpath="-Wl,-rpath,$build/src:$build/src/mpi:$build/src/omp:$build/src/ompi"
internal='#include "sion_(file|flags|fd|filedesc|internal|keyvalue_[a-z]*|metadata|printts|tools|cache|buffer)\.h"'

for d in serial parallel; do
    printf 'MPIRUN="mpiexec -n %s"\nMPIRUNEXECPARM=""\n' "$np" >"$work/$d/mpirun.defs"
    cp "$build/tools/siondump" "$work/$d/siondump" 2>/dev/null || cp -L "$build/tools/siondump" "$work/$d/"
done

pass=0 fail=0 skip=0 stdout_ok=0
declare -a failed
for c in "$work"/serial/test_*.c "$work"/parallel/test_*.c; do
    name=$(basename "$c" .c)
    dir=$(dirname "$c")
    [ -f "$dir/$name.run.sh" ] || continue
    if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then continue; fi
    kind=$(basename "$dir")
    # only the programs SIONlib's own Makefile builds (not commented out; SIONfwd's need SIONfwd)
    if ! grep -v '^\s*#' "$dir/Makefile" | grep -q "\b$name\.c\b" || [[ $name == test_sfwd* ]]; then
        continue
    fi
    if grep -Eq "$internal" "$c"; then
        echo "$kind/$name: internal (includes SIONlib's internal headers)"
        skip=$((skip + 1))
        continue
    fi
    # the flags of SIONlib's Makefile for the list naming the program: TESTS_OMP_* (-DSION_OMP),
    # TESTS_HYB_* (-DSION_OMPI), TESTS_MPI_* (-DSION_MPI), else serial
    list=$(grep -v '^\s*#' "$dir/Makefile" | grep "\b$name\.c\b" | grep -o 'TESTS_[A-Z]*' | head -1)
    case $list in
    TESTS_OMP) cc=gcc flags="-fopenmp -DSION_OMP" lib="-lsheaf_omp -lsheaf" ;;
    TESTS_HYB) cc=mpicc flags="-fopenmp -DSION_OMPI -DSION_MPI" lib="-lsheaf_ompi -lsheaf_mpi -lsheaf" ;;
    TESTS_MPI) cc=mpicc flags="-DSION_MPI" lib="-lsheaf_mpi -lsheaf" ;;
    *) cc=gcc flags= lib=-lsheaf ;;
    esac
    if ! (cd "$dir" && $cc -std=gnu11 -w $flags $inc -o "$name" "$name.c" $libs $rpath $lib -lm -lpthread) \
        >"$dir/$name.build.log" 2>&1; then
        echo "$kind/$name: FAILED (build: $(head -c 300 "$dir/$name.build.log" | tr '\n' ' '))"
        fail=$((fail + 1)) failed+=("$name")
        continue
    fi
    out=$(cd "$dir" && timeout "$timeout_s" bash "./$name.run.sh" 2>&1)
    if echo "$out" | grep -q '\.\.\. OK'; then
        echo "$kind/$name: OK"
        pass=$((pass + 1))
    else
        # the run script stops at the first differing log; compare stdout here
        t=${name#test_} same=no
        if [ -f "$dir/run_test_$t/stdout_0.log" ]; then
            cmp -s "$dir/run_test_$t/stdout_0.log" "$dir/${name}_stdout_0.log" && same=yes
        elif [ -f "$dir/run_test_$t/stdout.log" ]; then
            cmp -s "$dir/run_test_$t/stdout.log" "$dir/${name}_stdout.log" && same=yes
        fi
        [ $same = yes ] && stdout_ok=$((stdout_ok + 1))
        echo "$kind/$name: FAILED ($(echo "$out" | grep -o 'FAILED ([^)]*)' | head -1); stdout same: $same)"
        echo "$out" | sed -n '2,40p' | sed 's/^/    /' >"$dir/$name.diff.log"
        fail=$((fail + 1)) failed+=("$name")
    fi
done
echo "sionlib-selftests: $pass OK, $fail failed ($stdout_ok of them with the expected stdout), $skip internal; work dir $work"
[ $fail -eq 0 ]
