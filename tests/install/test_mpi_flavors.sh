#!/usr/bin/env bash
# test_mpi_flavors.sh - sheaf's MPI libraries are built for one MPI flavour
# (issue 27), and a downstream project of the other flavour is refused at
# configure time, never linked. Run by ctest (test install.mpi_flavors):
#   test_mpi_flavors.sh <build-dir> <source-dir> [extra compiler/linker flags]
# (the extra flags: a sanitizer build's, which the consumers need too)
# Environment: CMAKE_COMMAND; SHEAF_OTHER_MPI_BUILD=<a complete build tree of
# the other MPI flavour> adds the side-by-side part (.ci/run sets it in its
# Open MPI step, where both trees exist).
#
# For the flavour F of <build-dir> (installed into a prefix of its own):
#   1. the installed CMake package and sheaf_mpi.pc / sheaf_mpi-F.pc name F;
#   2. a CMake project (find_package(sheaf COMPONENTS mpi)) and a Makefile +
#      pkg-config project (examples/mpi/Makefile) built with mpicc.F run at
#      2 ranks and say OK;
#   3. the same two configured with the other MPI's wrapper (mpicc.G,
#      -DMPI_C_COMPILER / MPICC=) fail at configure time with a message that
#      names both MPIs, and nothing is compiled; pkg-config sheaf_mpi-G fails;
#   4. with SHEAF_OTHER_MPI_BUILD: that tree installed into a second prefix,
#      both projects built with mpicc.G against it run at 2 ranks, write the
#      same container bytes as F's, and mpicc.F against it is refused.
# Exits 77 (after the checks it could do) when the other MPI is not installed.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
cmake=${CMAKE_COMMAND:-cmake}
extra=${3:-}
if [ -n "$extra" ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"   # MPI keeps memory until exit
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-mpi-flavors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
step() { echo "--- $*"; }
die() { echo "FAIL: $*" >&2; exit 1; }
other_of() { case $1 in mpich) echo openmpi ;; openmpi) echo mpich ;; *) echo unknown ;; esac; }

# install <build> <prefix>: prints the flavour the installed package names
install_tree() {
    "$cmake" --install "$1" --prefix "$2" >"$2.log" 2>&1 || { cat "$2.log" >&2; die "cmake --install $1"; }
    local cfg=$2/lib/cmake/sheaf/sheafConfig.cmake
    [ -f "$cfg" ] || cfg=$(find "$2" -name sheafConfig.cmake | head -n 1)
    [ -f "$(dirname "$cfg")/sheafMPIFlavor.cmake" ] || die "sheafMPIFlavor.cmake not installed beside $cfg"
    sed -n 's/^set(sheaf_MPI_FLAVOR "\(.*\)")$/\1/p' "$cfg"
}

# run_ok <dir> <launcher> <program> <container>: 2 ranks, one file, says OK
run_ok() {
    local out
    out=$(cd "$1" && "$2" -n 2 "$3" "$4" 1 2>&1) || { echo "$out" >&2; die "$2 -n 2 $3 (exit $?)"; }
    case $out in *"sion_mpi_example: OK (2 tasks, 1 file(s)"*) ;; *) echo "$out" >&2; die "$3: no OK line" ;; esac
    [ -s "$1/$4" ] || die "$3 wrote no $4"
}

# consumers_ok <prefix> <flavour> <launcher> <tag>: both projects with mpicc.<flavour>
consumers_ok() {
    local prefix=$1 fl=$2 launch=$3 tag=$4 libdir
    libdir=$(dirname "$(find "$prefix" -name 'libsheaf_mpi.so' | head -n 1)")
    step "$tag: CMake project, find_package(sheaf COMPONENTS mpi), MPI_C_COMPILER=mpicc.$fl, 2 ranks"
    "$cmake" -S "$src/tests/install/consumer_mpi" -B "$tmp/$tag-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
        -DMPI_C_COMPILER="$(command -v "mpicc.$fl")" -DSHEAF_MPI_EXAMPLE="$src/examples/mpi/sion_mpi_example.c" \
        -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/$tag-cmake.log" 2>&1 || { cat "$tmp/$tag-cmake.log" >&2; die "$tag: CMake consumer configure"; }
    grep -q "sheaf built with MPI flavour: $fl" "$tmp/$tag-cmake.log" || die "$tag: sheaf_MPI_FLAVOR is not $fl"
    "$cmake" --build "$tmp/$tag-cmake" >>"$tmp/$tag-cmake.log" 2>&1 || { cat "$tmp/$tag-cmake.log" >&2; die "$tag: CMake consumer build"; }
    run_ok "$tmp/$tag-cmake" "$launch" ./consumer_mpi c.sion
    step "$tag: Makefile + pkg-config (examples/mpi/Makefile), MPICC=mpicc.$fl, 2 ranks"
    mkdir -p "$tmp/$tag-make"
    PKG_CONFIG_PATH=$libdir/pkgconfig make -s -C "$tmp/$tag-make" -f "$src/examples/mpi/Makefile" \
        MPICC="mpicc.$fl" CFLAGS="$extra" >"$tmp/$tag-make.log" 2>&1 || { cat "$tmp/$tag-make.log" >&2; die "$tag: make"; }
    run_ok "$tmp/$tag-make" "$launch" ./sion_mpi_example c.sion
    cmp "$tmp/$tag-cmake/c.sion" "$tmp/$tag-make/c.sion" || die "$tag: the two consumers wrote different containers"
    # the library really is built on that MPI
    readelf -d "$libdir/libsheaf_mpi.so" | grep -q "NEEDED.*$( [ "$fl" = mpich ] && echo libmpich || echo 'libmpi\.so')" ||
        die "$tag: $libdir/libsheaf_mpi.so does not link $fl's library"
}

# consumers_refused <prefix> <built flavour> <consumer flavour> <tag>
consumers_refused() {
    local prefix=$1 fl=$2 wrong=$3 tag=$4 libdir log
    libdir=$(dirname "$(find "$prefix" -name 'libsheaf_mpi.so' | head -n 1)")
    for mode in "ON REQUIRED" "OFF REQUIRED" "ON OPTIONAL"; do
        set -- $mode
        step "$tag: CMake project with mpicc.$wrong (FIND_MPI_FIRST=$1, component $2) against a $fl sheaf: configure fails"
        log=$tmp/$tag-bad-$1-$2.log
        if "$cmake" -S "$src/tests/install/consumer_mpi" -B "$tmp/$tag-bad-$1-$2" -DCMAKE_PREFIX_PATH="$prefix" \
            -DMPI_C_COMPILER="$(command -v "mpicc.$wrong")" -DFIND_MPI_FIRST="$1" -DSHEAF_COMPONENT="$2" \
            -DSHEAF_MPI_EXAMPLE="$src/examples/mpi/sion_mpi_example.c" >"$log" 2>&1; then
            cat "$log" >&2; die "$tag: a $wrong consumer of a $fl sheaf configured (mode $mode)"
        fi
        # the message names both MPIs (CMake wraps long lines: join them)
        tr -s ' \n' ' ' <"$log" >"$log.flat"
        grep -q "built with $( [ "$fl" = mpich ] && echo MPICH || echo 'Open MPI') ($fl," "$log.flat" &&
            grep -q "this project uses $( [ "$wrong" = mpich ] && echo MPICH || echo 'Open MPI') ($wrong," "$log.flat" ||
            { cat "$log" >&2; die "$tag: the configure error does not name both MPIs (mode $mode)"; }
        if [ "$2" = OPTIONAL ]; then
            grep -q "sheaf_mpi_FOUND=FALSE" "$log" || die "$tag: optional mpi component found despite the mismatch"
            grep -q "MPI_FLAVOR_MISMATCH_built_with_${fl}_used_with_${wrong}" "$log" ||
                { cat "$log" >&2; die "$tag: linking sheaf::sheaf_mpi was not stopped at generation"; }
        fi
        # a required component stops at configure, before any build system exists
        # (the optional one at generation: CMake may have written files, but failed)
        [ "$2" = OPTIONAL ] || [ ! -e "$tmp/$tag-bad-$1-$2/Makefile" ] ||
            die "$tag: a build system was generated despite the mismatch (mode $mode)"
    done
    step "$tag: Makefile + pkg-config with MPICC=mpicc.$wrong against a $fl sheaf: make fails before compiling"
    mkdir -p "$tmp/$tag-make-bad"
    log=$tmp/$tag-make-bad.log
    if PKG_CONFIG_PATH=$libdir/pkgconfig make -C "$tmp/$tag-make-bad" -f "$src/examples/mpi/Makefile" \
        MPICC="mpicc.$wrong" >"$log" 2>&1; then
        cat "$log" >&2; die "$tag: make with mpicc.$wrong succeeded"
    fi
    grep -q "MPI flavour mismatch: sheaf (sheaf_mpi, $prefix) was built with $fl but MPICC=mpicc.$wrong is $wrong" "$log" ||
        { cat "$log" >&2; die "$tag: make's error does not name both MPIs"; }
    [ ! -e "$tmp/$tag-make-bad/sion_mpi_example" ] || die "$tag: make compiled despite the mismatch"
    step "$tag: pkg-config sheaf_mpi-$wrong fails, sheaf_mpi-$fl works"
    if PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --exists "sheaf_mpi-$wrong"; then
        die "$tag: pkg-config found sheaf_mpi-$wrong in a $fl installation"
    fi
    PKG_CONFIG_PATH=$libdir/pkgconfig make -s -C "$tmp/$tag-make-bad" -f "$src/examples/mpi/Makefile" \
        MPICC="mpicc.$wrong" SHEAF_PC="sheaf_mpi-$wrong" >"$log" 2>&1 && die "$tag: make SHEAF_PC=sheaf_mpi-$wrong succeeded"
    grep -q "sheaf_mpi-$wrong: not found by pkg-config" "$log" || { cat "$log" >&2; die "$tag: SHEAF_PC=sheaf_mpi-$wrong error"; }
}

step "install $build into a prefix of its own"
pa=$tmp/prefix-a
fa=$(install_tree "$build" "$pa")
case $fa in mpich|openmpi) ;; *) die "the installed sheafConfig.cmake names MPI flavour '$fa'" ;; esac
echo "    flavour: $fa"
libdir_a=$(dirname "$(find "$pa" -name 'libsheaf_mpi.so' | head -n 1)")
for pc in sheaf_mpi "sheaf_mpi-$fa"; do
    [ "$(PKG_CONFIG_PATH=$libdir_a/pkgconfig pkg-config --variable=mpi_flavor "$pc")" = "$fa" ] ||
        die "$pc.pc: mpi_flavor is not $fa"
done
req=$(PKG_CONFIG_PATH=$libdir_a/pkgconfig pkg-config --print-requires sheaf_mpi)
case $fa in mpich) want=mpich ;; *) want=ompi-c ;; esac
case " $(echo $req) " in *" $want "*) ;; *) die "sheaf_mpi.pc requires '$req', not $want" ;; esac
command -v "mpicc.$fa" >/dev/null || die "mpicc.$fa not found (the build tree's own MPI)"
consumers_ok "$pa" "$fa" "$build/sheaf-mpiexec" "$fa"

fb=$(other_of "$fa")
if ! command -v "mpicc.$fb" >/dev/null; then
    echo "SKIP: mpicc.$fb not found: the other MPI is not installed, a mismatched consumer cannot be tried"
    exit 77
fi
consumers_refused "$pa" "$fa" "$fb" "$fa"

if [ -z "${SHEAF_OTHER_MPI_BUILD:-}" ]; then
    echo "--- side by side not tried: SHEAF_OTHER_MPI_BUILD (a $fb build tree) is not set (.ci/run sets it)"
    echo "install.mpi_flavors: $fa built, run and refused to $fb: OK"
    exit 0
fi
step "side by side: $SHEAF_OTHER_MPI_BUILD into a second prefix"
pb=$tmp/prefix-b
fb2=$(install_tree "$SHEAF_OTHER_MPI_BUILD" "$pb")
[ "$fb2" = "$fb" ] || die "SHEAF_OTHER_MPI_BUILD is a '$fb2' build, not $fb"
consumers_ok "$pb" "$fb" "$SHEAF_OTHER_MPI_BUILD/sheaf-mpiexec" "$fb"
consumers_refused "$pb" "$fb" "$fa" "$fb"
cmp "$tmp/$fa-cmake/c.sion" "$tmp/$fb-cmake/c.sion" || die "$fa and $fb wrote different containers"
echo "install.mpi_flavors: $fa and $fb side by side, each built, run at 2 ranks and refused to the other: OK"
