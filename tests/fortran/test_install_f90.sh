#!/usr/bin/env bash
# test_install_f90.sh - the Fortran 90 interface as a user of an INSTALLED
# sheaf sees it (ctest: fortran.install):
#   test_install_f90.sh BUILD SOURCE FC MPIF90|- MPIEXEC|- [EXTRA_FLAGS]
# Installs BUILD into a temporary prefix, checks the .mod files, libraries
# and `sionconfig --f90` flags, then builds
#   - tests/fortran/f90_serial.f90 with  FC $(sionconfig --cflags --f90) ... --libs --f90
#   - tests/fortran/f90_mpi.f90, a program written for SIONlib's Fortran 90 MPI
#     interface, unchanged, with
#       MPIF90 $(sionconfig --cflags --f90 --mpi) prog.f90 $(sionconfig --libs --f90 --mpi)
#     and runs it at 1, 2, 3 and 4 ranks (1 and 2 files): it reads its data
#     back, and every task of its containers must equal, byte for byte, what
#     the installed sioncat prints;
#   - the C++ tests (tests/cxx) with c++ / mpicxx and sionconfig --ser / --mpi
#     (SHEAF_TEST_CXX, SHEAF_TEST_MPICXX in the environment);
#   - a find_package(sheaf COMPONENTS f90 f90_mpi cxx) project (tests/fortran/consumer).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
fc=$3 mpif90=$4 mpiexec=$5 extra=${6:-}
cmake=${CMAKE_COMMAND:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-f90-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
die() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }
unset LD_LIBRARY_PATH
if [ -n "$extra" ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"  # MPI keeps memory until exit
fi

step "cmake --install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; die "install"; }
sionconfig=$prefix/bin/sionconfig
sioncat=$prefix/bin/sioncat
libdir=$(dirname "$(find "$prefix" -name 'libsheaf_f90.so' | head -n 1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || die "libsheaf_f90.so not installed"
[ -f "$libdir/libsheaf_f90.a" ] || die "libsheaf_f90.a not installed"
for m in sion_f90 sheaf_f90_c sheaf_f90_keyval; do
    [ -f "$prefix/include/mod_64/$m.mod" ] || die "$m.mod not installed in include/mod_64"
done
for h in sion_cxx.h sion_cxx_base.hpp sion_cxx_common.hpp sion_cxx_serial.hpp sion_cxx_mpi.hpp; do
    [ -f "$prefix/include/$h" ] || die "C++ header $h not installed"
done

step "sionconfig --f90"
[ "$("$sionconfig" --cflags --f90)" = "-I$prefix/include/mod_64 -I$prefix/include -D_SION_LINUX" ] ||
    die "sionconfig --cflags --f90: $("$sionconfig" --cflags --f90)"
[ "$("$sionconfig" --libs --f90)" = "-L$libdir -Wl,-rpath,$libdir -lsheaf_f77 -lsheaf_f90 -lsheaf -lpthread" ] ||
    die "sionconfig --libs --f90: $("$sionconfig" --libs --f90)"
"$sionconfig" --help | grep -q -- '--f90' || die "sionconfig --help does not describe --f90"

step "serial program: $fc \$(sionconfig --cflags --f90) f90_serial.f90 \$(sionconfig --libs --f90)"
mkdir "$tmp/ser"
cp "$src/tests/fortran/f90_serial.f90" "$tmp/ser/prog.f90"
# shellcheck disable=SC2046
(cd "$tmp/ser" && "$fc" $extra $("$sionconfig" --cflags --f90) prog.f90 $("$sionconfig" --libs --f90) -o prog) ||
    die "building f90_serial.f90 against the installed tree"
"$src/tests/fortran/run_f90.sh" "$tmp/ser/run" "$sioncat" 3 ser.sion:expect_ser -- "$tmp/ser/prog" . ||
    die "f90_serial against the installed tree"

step "Fortran 77: $fc \$(sionconfig --cflags --f77) f77_every.f \$(sionconfig --libs --f77)"
[ -f "$prefix/include/sion_f77.h" ] || die "sion_f77.h not installed"
[ "$("$sionconfig" --cflags --f77)" = "-I$prefix/include -D_SION_LINUX" ] ||
    die "sionconfig --cflags --f77: $("$sionconfig" --cflags --f77)"
[ "$("$sionconfig" --libs --f77)" = "-L$libdir -Wl,-rpath,$libdir -lsheaf_f77 -lsheaf_f90 -lsheaf -lpthread" ] ||
    die "sionconfig --libs --f77: $("$sionconfig" --libs --f77)"
mkdir "$tmp/f77"
# shellcheck disable=SC2046
(cd "$tmp/f77" && "$fc" $extra -fallow-argument-mismatch $("$sionconfig" --cflags --f77) \
    "$src/tests/fortran/f77_every.f" $("$sionconfig" --libs --f77) -o f77_every) || die "building f77_every.f"
"$src/tests/fortran/run_f90.sh" "$tmp/f77/run" "$sioncat" 0 -- "$tmp/f77/f77_every" "${SHEAF_VECTORS_DIR:?}" ||
    die "f77_every against the installed tree"

if [ "$mpif90" != "-" ] && [ -f "$prefix/include/mod_64/sion_f90_mpi.mod" ]; then
    step "MPI program written for SIONlib: $mpif90 \$(sionconfig --cflags --f90 --mpi) prog.f90 \$(sionconfig --libs --f90 --mpi)"
    [ "$("$sionconfig" --libs --f90 --mpi)" = \
      "-L$libdir -Wl,-rpath,$libdir -lsheaf_f77_mpi -lsheaf_f77 -lsheaf_f90_mpi -lsheaf_f90 -lsheaf_mpi -lsheaf -lpthread" ] ||
        die "sionconfig --libs --f90 --mpi: $("$sionconfig" --libs --f90 --mpi)"
    mkdir "$tmp/mpi"
    cp "$src/tests/fortran/f90_mpi.f90" "$tmp/mpi/prog.f90"
    # Debian with both MPIs and MPICH as the default (install-deps.sh keeps it so):
    # Open MPI's mpif90 names only its Fortran library directory, so its -lmpi
    # finds the default libmpi.so, MPICH's (a plain MPI hello world links
    # libmpich too). Its C library directory (mpicc --showme:libdirs) fixes that.
    ompi_fix=()
    if "$mpif90" --showme:version >/dev/null 2>&1 && [ -n "${SHEAF_MPICC:-}" ]; then
        for d in $("$SHEAF_MPICC" --showme:libdirs); do ompi_fix+=("-L$d"); done
        echo "(Open MPI wrapper: adding ${ompi_fix[*]})"
    fi
    # shellcheck disable=SC2046
    (cd "$tmp/mpi" && "$mpif90" $extra $("$sionconfig" --cflags --f90 --mpi) prog.f90 \
        $("$sionconfig" --libs --f90 --mpi) "${ompi_fix[@]}" -o prog) || die "building the SIONlib-style MPI program"
    if "$mpif90" --showme:version >/dev/null 2>&1 && ldd "$tmp/mpi/prog" | grep -q libmpich; then
        die "the Open MPI program links MPICH's library"
    fi
    # shellcheck disable=SC2046
    (cd "$tmp/mpi" && "$mpif90" $extra -fallow-argument-mismatch $("$sionconfig" --cflags --f77 --mpi) \
        "$src/tests/fortran/f77_mpi.f" $("$sionconfig" --libs --f77 --mpi) "${ompi_fix[@]}" -o f77_mpi) ||
        die "building f77_mpi.f with sionconfig --f77 --mpi"
    "$src/tests/fortran/run_f90.sh" "$tmp/mpi/run_f77" "$sioncat" 0 -- "$mpiexec" -n 2 "$tmp/mpi/f77_mpi" ||
        die "the F77 MPI program at 2 ranks"
    for rf in 1:1 2:1 3:2 4:2; do
        np=${rf%:*} nf=${rf#*:}
        "$src/tests/fortran/run_f90.sh" "$tmp/mpi/run_$np" "$sioncat" "$np" f.sion:expect f.sion.coll:expect_coll -- \
            "$mpiexec" -n "$np" "$tmp/mpi/prog" f.sion "$nf" || die "the MPI program at $np ranks, $nf file(s)"
    done
fi

cxx=${SHEAF_TEST_CXX:-}
if [ -n "$cxx" ]; then
    step "C++: $cxx -std=c++17 \$(sionconfig --cflags --ser) cxx_serial.cpp \$(sionconfig --libs --ser)"
    mkdir "$tmp/cxx"
    # shellcheck disable=SC2046
    (cd "$tmp/cxx" && "$cxx" -std=c++17 -Wall -Wextra -Werror $extra $("$sionconfig" --cflags --ser) \
        "$src/tests/cxx/cxx_serial.cpp" $("$sionconfig" --libs --ser) -o cxx_serial) || die "building cxx_serial.cpp"
    "$src/tests/fortran/run_f90.sh" "$tmp/cxx/run" "$sioncat" 3 s.sion:expect -- "$tmp/cxx/cxx_serial" ||
        die "cxx_serial against the installed tree"
    mpicxx=${SHEAF_TEST_MPICXX:-}
    if [ -n "$mpicxx" ] && [ "$mpiexec" != "-" ]; then
        step "C++ MPI: $mpicxx -std=c++17 \$(sionconfig --cflags --mpi) cxx_mpi.cpp \$(sionconfig --libs --mpi)"
        # shellcheck disable=SC2046
        (cd "$tmp/cxx" && "$mpicxx" -std=c++17 -Wall -Wextra $extra $("$sionconfig" --cflags --mpi) \
            "$src/tests/cxx/cxx_mpi.cpp" $("$sionconfig" --libs --mpi) -o cxx_mpi) || die "building cxx_mpi.cpp"
        "$src/tests/fortran/run_f90.sh" "$tmp/cxx/run_mpi" "$sioncat" 2 m.sion:expect -- \
            "$mpiexec" -n 2 "$tmp/cxx/cxx_mpi" m.sion 1 || die "cxx_mpi against the installed tree"
    fi
fi

step "find_package(sheaf COMPONENTS f90 ...) consumer"
comps="f90 cxx"
margs=()
if [ "$mpif90" != "-" ] && [ -f "$prefix/include/mod_64/sion_f90_mpi.mod" ]; then
    comps="f90 f90_mpi cxx"
    # the MPI sheaf was built with (not the default `mpicc`, which may be the other MPI)
    margs=(-DMPI_Fortran_COMPILER="$mpif90" -DMPI_C_COMPILER="${SHEAF_MPICC:-mpicc}" -DSHEAF_F90_MPI=ON)
fi
"$cmake" -S "$src/tests/fortran/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_Fortran_COMPILER="$fc" -DSHEAF_COMPONENTS="$comps" -DSHEAF_SRC="$src" "${margs[@]}" \
    -DCMAKE_Fortran_FLAGS="$extra" -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
    >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log" >&2; die "configuring the consumer"; }
"$cmake" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log" >&2; die "building the consumer"; }
"$src/tests/fortran/run_f90.sh" "$tmp/consumer/run" "$sioncat" 3 ser.sion:expect_ser -- "$tmp/consumer/f90_serial" . ||
    die "consumer f90_serial"
if [ -x "$tmp/consumer/f90_mpi" ]; then
    "$src/tests/fortran/run_f90.sh" "$tmp/consumer/run_mpi" "$sioncat" 2 f.sion:expect -- \
        "$mpiexec" -n 2 "$tmp/consumer/f90_mpi" f.sion 1 || die "consumer f90_mpi"
fi
echo "fortran install test: OK"
