#!/usr/bin/env bash
# test_install.sh - install the current build into a temporary prefix and use
# it the way a downstream project would: sionconfig, pkg-config and
# find_package(sheaf). Run by ctest (test "install"):
#   test_install.sh <build-dir> <source-dir> <c-compiler> [extra compiler/linker flags]
# The extra flags are those of a sanitizer build (the library needs them too).
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
cc=$3
extra=${4:-}
cmake=${CMAKE_COMMAND:-cmake}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { echo "--- $*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
    cat "$tmp/install.log" >&2; die "cmake --install failed"; }

step "installed files"
for h in sion.h sheaf.h sion_const.h sion_common.h sion_datatypes.h sion_platform.h \
         sion_serial.h sion_generic.h sion_libversion_rep.h sion_debug.h; do
    [ -f "$prefix/include/$h" ] || die "header $h not installed"
done
libdir=$(dirname "$(find "$prefix" -name 'libsheaf.a' | head -n 1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || die "libsheaf.a not installed"
[ -e "$libdir/libsheaf.so" ] || die "libsheaf.so not installed in $libdir"
[ -f "$libdir/pkgconfig/sheaf.pc" ] || die "sheaf.pc not installed in $libdir/pkgconfig"
for f in sheafConfig.cmake sheafConfigVersion.cmake sheafTargets.cmake; do
    [ -f "$libdir/cmake/sheaf/$f" ] || die "$f not installed in $libdir/cmake/sheaf"
done
sionconfig=$prefix/bin/sionconfig
[ -x "$sionconfig" ] || die "sionconfig not installed in $prefix/bin"
mandir=$prefix/share/man/man1
[ -f "$mandir/sionconfig.1" ] || die "man page sionconfig.1 not installed in $mandir"
if command -v man >/dev/null 2>&1; then
    man -l "$mandir/sionconfig.1" 2>/dev/null | grep -q -- "--cflags" || die "man -l sionconfig.1 shows no --cflags"
fi

if [ -e "$prefix/bin/sheaf" ]; then
    for t in siondump sioncat sionsplit siondefrag sionversion; do
        [ -x "$prefix/bin/$t" ] || die "tool $t not installed in $prefix/bin (next to sheaf)"
    done
fi

step "every installed dynamic library and program has a RUNPATH with \$ORIGIN"
# (issue 30: libsheaf_mpiio.so had none, so an LD_PREloaded interposition
# library failed with "libsheaf_lock.so.0: cannot open"). The loader's
# auditor is the exception by design: DT_RPATH to libc's directory only.
if command -v readelf >/dev/null 2>&1; then
    nelf=0
    for f in "$libdir"/lib*.so.* "$prefix"/bin/*; do
        [ -f "$f" ] && [ ! -L "$f" ] && head -c 4 "$f" | grep -q 'ELF' || continue
        readelf -d "$f" 2>/dev/null | grep -q 'NEEDED' || continue   # static: nothing to find
        case $f in */libsheaf_audit.so.*) continue ;; esac
        rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
        case ":$rp:" in *':$ORIGIN'*) ;; *) die "$f has no RUNPATH with \$ORIGIN (RUNPATH '$rp')" ;; esac
        nelf=$((nelf + 1))
    done
    [ "$nelf" -ge 3 ] || die "only $nelf ELF files checked for RUNPATH"
    echo "    $nelf files"
else
    echo "    readelf not found: RUNPATH not checked"
fi

step "every installed program starts from the prefix ($prefix, not a system path)"
# No LD_LIBRARY_PATH: the programs must find their libraries themselves.
unset LD_LIBRARY_PATH
# MPICH itself leaks ~1 KB at MPI_Finalize: programs that start MPI run
# without LeakSanitizer's check in sanitizer builds (as the MPI tests do)
noleak="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
for f in "$prefix"/bin/*; do
    [ -x "$f" ] || continue
    if head -c 4 "$f" | grep -q 'ELF'; then
        if ldd "$f" 2>&1 | grep -q 'not found'; then
            ldd "$f" >&2; die "$(basename "$f"): a library is not found"
        fi
    fi
    case $(basename "$f") in
        sheaf) out=$("$f" version) || die "sheaf version"
               case $out in "sheaf "*) ;; *) die "sheaf version printed: $out" ;; esac ;;
        sionversion) out=$("$f") || die "sionversion: exit $?"
               case $out in "SIONlib Version "*) ;; *) die "sionversion printed: $out" ;; esac ;;
        siondump|sioncat|sionsplit|siondefrag)
               # SIONlib's utilities print their version to stderr and exit 1 on -V
               out=$("$f" -V 2>&1) && die "$(basename "$f") -V: exit 0 (SIONlib's utilities exit 1)"
               case $out in "SIONlib utility "*) ;; *) die "$(basename "$f") -V printed: $out" ;; esac ;;
        sionconfig) "$f" --path >/dev/null || die "sionconfig --path" ;;
        sheaf-bench)
               if [ -n "${SHEAF_TEST_MPI:-}" ] && command -v "${SHEAF_MPIEXEC:-mpiexec}" >/dev/null; then
                   out=$(cd "$tmp" && ASAN_OPTIONS=$noleak "${SHEAF_MPIEXEC:-mpiexec}" -n 1 "$f" -h) || die "sheaf-bench -h: exit $?"
                   case $out in "usage: mpiexec"*) ;; *) die "sheaf-bench -h printed: $out" ;; esac
                   mkdir -p "$tmp/bench"
                   (cd "$tmp/bench" && ASAN_OPTIONS=$noleak "${SHEAF_MPIEXEC:-mpiexec}" -n 1 "$f" -s 64k -b 16k --reps 1 -X \
                       >bench.log 2>&1) || { cat "$tmp/bench/bench.log" >&2; die "sheaf-bench run"; }
               else
                   out=$(ASAN_OPTIONS=$noleak "$f" -h 2>/dev/null) || die "sheaf-bench -h: exit $?"
                   case $out in "usage: mpiexec"*) ;; *) die "sheaf-bench -h printed: $out" ;; esac
               fi ;;
        sheaf-ckpt-bench)
               # the checkpoint benchmark (bench/ckpt) from the prefix: 1 rank, fpp and rbio, read back
               if [ -n "${SHEAF_TEST_MPI:-}" ] && command -v "${SHEAF_MPIEXEC:-mpiexec}" >/dev/null; then
                   out=$(ASAN_OPTIONS=$noleak "${SHEAF_MPIEXEC:-mpiexec}" -n 1 "$f" --dir "$tmp/ckb" --npng 1 --bytes 4K \
                         --steps 1 --reps 1 --compute-ms 0 --strategies fpp,rbio --verify 2>&1) || die "sheaf-ckpt-bench: $out"
                   case $out in *"summary"*"verify_errors=0"*) ;; *) die "sheaf-ckpt-bench printed: $out" ;; esac
               fi ;;
        sheaf-fgfs)
               out=$(ASAN_OPTIONS=$noleak "$f" --json classify "$tmp" 2>&1) || die "sheaf-fgfs classify: exit $? ($out)"
               case $out in *"$tmp"*) ;; *) die "sheaf-fgfs classify printed: $out" ;; esac ;;
        sheaf-launch)   # the loader (src/loader): finds sheaf-boot and libsheaf_audit.so in the prefix
               out=$(ASAN_OPTIONS=$noleak "$f" --stats --cache-dir "$tmp" -- /bin/echo loaded 2>&1) \
                   || die "sheaf-launch: exit $? ($out)"
               case $out in *loaded*"sheaf-launch: reads "[1-9]*) ;; *) die "sheaf-launch printed: $out" ;; esac ;;
        sheaf-ld-server)   # the loader's overlay server: its usage, and a missing secret is refused by name
               out=$(ASAN_OPTIONS=$noleak "$f" --help 2>&1) || die "sheaf-ld-server --help: exit $? ($out)"
               case $out in "usage: sheaf-ld-server"*) ;; *) die "sheaf-ld-server printed: $out" ;; esac
               out=$(ASAN_OPTIONS=$noleak "$f" --rank 0 --hosts 127.0.0.1:9 --secret "$tmp/no-secret" 2>&1) \
                   && die "sheaf-ld-server without its secret: exit 0"
               case $out in *"$tmp/no-secret"*) ;; *) die "sheaf-ld-server printed: $out" ;; esac ;;
        sheaf-boot) out=$("$f" 2>&1) && die "sheaf-boot without arguments: exit 0"
               case $out in "usage: sheaf-boot"*) ;; *) die "sheaf-boot printed: $out" ;; esac
               out=$("$f" --help 2>/dev/null) || die "sheaf-boot --help: exit $?"
               case $out in "usage: sheaf-boot"*--timeout*) ;; *) die "sheaf-boot --help printed: $out" ;; esac ;;
        *) die "installed program $(basename "$f") is not checked by this test: add it" ;;
    esac
done
if [ -e "$prefix/bin/siondump" ]; then
    # SIONlib's test scripts copy siondump next to the test programs
    mkdir "$tmp/copied"
    cp -L "$prefix/bin/siondump" "$tmp/copied/siondump"
    out=$("$tmp/copied/siondump" -V 2>&1) || true
    case $out in "SIONlib utility "*) ;; *) die "a copied siondump does not start: $out" ;; esac
fi

step "sionconfig options"
if "$sionconfig" >/dev/null 2>&1; then die "sionconfig without arguments must exit 1"; fi
"$sionconfig" >/dev/null 2>&1 || [ $? -eq 1 ] || die "sionconfig without arguments: exit code is not 1"
[ "$("$sionconfig" --path)" = "$prefix" ] || die "sionconfig --path: $("$sionconfig" --path)"
[ "$("$sionconfig" --mpi --cflags)" = "-I$prefix/include -D_SION_LINUX -DSION_MPI" ] ||
    die "sionconfig --mpi --cflags: $("$sionconfig" --mpi --cflags)"
case " $("$sionconfig" --cflags --omp) " in *" -DSION_OMP "*) ;; *) die "--omp --cflags" ;; esac
case " $("$sionconfig" -cflags -ompi) " in *" -DSION_OMPI "*) ;; *) die "-ompi -cflags" ;; esac
case " $("$sionconfig" --cflags --ser) " in *"-DSION_"*) die "--ser --cflags has -DSION_*" ;; esac
[ "$("$sionconfig" --libs --ser --64 --be --gcc --threadsafe)" = \
  "-L$libdir -Wl,-rpath,$libdir -lsheaf -lpthread" ] || die "sionconfig --libs: $("$sionconfig" --libs --ser)"
[ "$("$sionconfig" --libs --gen)" = "$("$sionconfig" --libs --sequential)" ] || die "--gen --libs"
[ "$("$sionconfig" --libs --mpi)" = "-L$libdir -Wl,-rpath,$libdir -lsheaf_mpi -lsheaf -lpthread" ] ||
    die "sionconfig --libs --mpi: $("$sionconfig" --libs --mpi)"
[ "$("$sionconfig" -libs -omp)" = "-L$libdir -Wl,-rpath,$libdir -lsheaf_omp -lsheaf -lpthread -fopenmp" ] ||
    die "sionconfig -libs -omp: $("$sionconfig" -libs -omp)"
[ "$("$sionconfig" --libs --ompi)" = "-L$libdir -Wl,-rpath,$libdir -lsheaf_ompi -lsheaf -lpthread -fopenmp" ] ||
    die "sionconfig --libs --ompi: $("$sionconfig" --libs --ompi)"
case " $("$sionconfig" --cflags --omp) " in *" -fopenmp "*) ;; *) die "--omp --cflags lacks -fopenmp" ;; esac
case " $("$sionconfig" --cflags --mpi) " in *"-fopenmp"*) die "--mpi --cflags has -fopenmp" ;; esac
"$sionconfig" --help | grep -q -- --cflags || die "sionconfig --help"
"$sionconfig" -V >/dev/null || die "sionconfig -V"
if [ -f "$prefix/include/sion_f77.h" ]; then   # built with Fortran: the F77 interface is there
    [ "$("$sionconfig" --cflags --f77)" = "-I$prefix/include -D_SION_LINUX" ] ||
        die "sionconfig --cflags --f77: $("$sionconfig" --cflags --f77)"
elif "$sionconfig" --cflags --f77 >/dev/null 2>&1; then
    die "--f77 must fail in a build without Fortran"
fi
if "$sionconfig" --bogus >/dev/null 2>&1; then die "an unknown option must fail"; fi

step "compile examples/sion_convert.c with sionconfig --cflags/--libs --ser"
# shellcheck disable=SC2046  # word splitting of the flags is intended
"$cc" $extra $("$sionconfig" --cflags --ser) -o "$tmp/sion_convert" "$src/examples/sion_convert.c" \
    $("$sionconfig" --libs --ser) || die "compiling sion_convert.c with sionconfig flags"

step "round trip of generated files through sion_convert"
mkdir "$tmp/in"
inputs=()
i=0
for size in 0 1 100 4095 4096 4097 65536 100003 1048577 3000000; do
    f=$tmp/in/task$i
    head -c "$size" /dev/urandom >"$f"
    inputs+=("$f")
    i=$((i + 1))
done
for chunk in "" "-c 65536" "-c 4096 -q 4096"; do
    outputs=()
    for f in "${inputs[@]}"; do outputs+=("$f.out"); done
    # shellcheck disable=SC2086
    "$tmp/sion_convert" $chunk -w "$tmp/c.sion" "${inputs[@]}" || die "sion_convert $chunk -w"
    "$tmp/sion_convert" -r "$tmp/c.sion" "${outputs[@]}" || die "sion_convert -r (after $chunk)"
    for f in "${inputs[@]}"; do cmp "$f" "$f.out" || die "round trip with '$chunk' changed $f"; done
    rm -f "$tmp/c.sion" "${outputs[@]}"
done
if "$tmp/sion_convert" -r "$tmp/missing.sion" "$tmp/x" 2>/dev/null; then
    die "reading a missing container must fail"
fi

# With the MPI layer (SHEAF_TEST_MPI=1, set by ctest when libsheaf_mpi is built):
mpi=${SHEAF_TEST_MPI:-}
mpicc=${SHEAF_MPICC:-mpicc}
mpiexec=${SHEAF_MPIEXEC:-mpiexec}
mpi_skipped=""
if [ -n "$mpi" ] && ! { command -v "$mpicc" && command -v "$mpiexec"; } >/dev/null 2>&1; then
    # the MPI layer was built but its compiler wrapper or launcher is gone:
    # the other checks still run, then the test exits 77 (a skip), not 0
    mpi_skipped="$mpicc or $mpiexec not found (the MPI layer is built: its install checks could not run)"
    echo "--- SKIP (at the end): $mpi_skipped"
    mpi=""
fi
if [ -n "$extra" ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"   # MPI libraries keep memory until exit (a later option wins)
fi
# Output of an MPI example run; fails unless it exits 0 and says OK.
run_mpi_example() { # <dir> <binary> <container> <numFiles>
    local out
    out=$(cd "$1" && "$mpiexec" -n 2 "$2" "$3" "$4" 2>&1) || { echo "$out" >&2; die "mpiexec -n 2 $2 $3 $4"; }
    case "$out" in
        *"sion_mpi_example: OK (2 tasks, $4 file(s)"*) ;;
        *) echo "$out" >&2; die "$2: no OK line" ;;
    esac
}

if [ -n "$mpi" ]; then
    step "MPI layer installed"
    [ -f "$prefix/include/sion_mpi.h" ] || die "header sion_mpi.h not installed"
    [ -f "$prefix/include/sion_datatypes_mpi.h" ] || die "header sion_datatypes_mpi.h not installed"
    [ -f "$libdir/libsheaf_mpi.a" ] || die "libsheaf_mpi.a not installed in $libdir"
    [ -e "$libdir/libsheaf_mpi.so" ] || die "libsheaf_mpi.so not installed in $libdir"

    step "examples/mpi the SIONlib way: mpicc \$(sionconfig --cflags --mpi) / --libs --mpi, mpiexec -n 2"
    mkdir "$tmp/mpi"
    cp "$src/examples/mpi/sion_mpi_example.c" "$tmp/mpi/ex.c"
    # shellcheck disable=SC2046
    (cd "$tmp/mpi" && "$mpicc" $extra $("$sionconfig" --cflags --mpi) -c ex.c &&
        "$mpicc" $extra ex.o $("$sionconfig" --libs --mpi) -o ex) || die "building ex.c with mpicc + sionconfig --mpi"
    run_mpi_example "$tmp/mpi" ./ex c.sion 1

    step "examples/mpi with pkg-config sheaf_mpi: mpicc \$(pkg-config --cflags --libs sheaf_mpi), mpiexec -n 2"
    pcm=$libdir/pkgconfig/sheaf_mpi.pc
    [ -f "$pcm" ] || die "sheaf_mpi.pc not installed in $libdir/pkgconfig"
    case $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=mpi sheaf_mpi) in
        mpich|openmpi) ;; *) die "sheaf_mpi.pc: variable mpi is not mpich or openmpi" ;;
    esac
    pflags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs sheaf_mpi) || die "pkg-config sheaf_mpi"
    case " $pflags " in *" -DSION_MPI "*"-lsheaf_mpi -lsheaf "*) ;; *) die "pkg-config sheaf_mpi: $pflags" ;; esac
    mkdir "$tmp/mpi_pc"
    cp "$src/examples/mpi/sion_mpi_example.c" "$tmp/mpi_pc/ex.c"
    # shellcheck disable=SC2086
    (cd "$tmp/mpi_pc" && "$mpicc" $extra ex.c $pflags -Wl,-rpath,"$libdir" -o ex) ||
        die "building ex.c with mpicc + pkg-config sheaf_mpi"
    run_mpi_example "$tmp/mpi_pc" ./ex c.sion 1
    cmp "$tmp/mpi/c.sion" "$tmp/mpi_pc/c.sion" || die "the pkg-config sheaf_mpi build wrote a different c.sion"
    run_mpi_example "$tmp/mpi" ./ex m.sion 2
    [ -f "$tmp/mpi/m.sion" ] && [ -f "$tmp/mpi/m.sion.000001" ] || die "numFiles=2 did not write m.sion + m.sion.000001"

    step "a program that calls only libsheaf_mpi (libsheaf.so.0 found through libsheaf_mpi's RUNPATH)"
    printf '%s\n' '#include <mpi.h>' '#include <sion.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); int r = sion_parclose_mpi(-1); MPI_Finalize(); return r == SION_SUCCESS; }' \
        >"$tmp/mpi/only.c"
    # shellcheck disable=SC2046
    (cd "$tmp/mpi" && "$mpicc" $extra $("$sionconfig" --cflags --mpi) -Wl,--as-needed -o only only.c \
        $("$sionconfig" --libs --mpi)) || die "building only.c"
    (cd "$tmp/mpi" && SION_ERROR_MSG=0 "$mpiexec" -n 1 ./only) || die "a program using only libsheaf_mpi does not start"
    for layer in omp ompi; do
        [ -e "$libdir/libsheaf_$layer.so" ] || continue
        printf '%s\n' '#include <sion.h>' \
            "int main(void) { return sion_parclose_$layer(-1) == SION_SUCCESS; }" >"$tmp/mpi/only_$layer.c"
        # shellcheck disable=SC2046
        (cd "$tmp/mpi" && "$mpicc" $extra $("$sionconfig" --cflags --$layer) -Wl,--as-needed -o "only_$layer" \
            "only_$layer.c" $("$sionconfig" --libs --$layer)) || die "building only_$layer.c"
        ldd "$tmp/mpi/only_$layer" | grep -q 'not found' && { ldd "$tmp/mpi/only_$layer" >&2;
            die "a program using only libsheaf_$layer: a library is not found"; }
    done

    step "sion.h with MPI: -DSION_MPI alone, and after <mpi.h>"
    echo '#include <sion.h>
int main(void) { return sion_parclose_mpi(-1) == SION_SUCCESS; }' |
        "$mpicc" -std=c99 -Wall -Werror $("$sionconfig" --cflags --mpi) -fsyntax-only -x c - ||
        die "sion.h with -DSION_MPI does not compile"
    echo '#include <mpi.h>
#include <sion.h>
int main(void) { return sion_parclose_mpi(-1) == SION_SUCCESS; }' |
        "$mpicc" -std=c99 -Wall -Werror -I"$prefix/include" -fsyntax-only -x c - ||
        die "sion.h after <mpi.h> does not declare the MPI layer"
    echo '#include <mpi.h>
#include <sion.h>
static sion_int64 v;
int main(void) { sion_file_check_par_args_mpi *a = sion_file_check_par_args_init_mpi("br", MPI_COMM_WORLD, 1, MPI_COMM_NULL);
    MPI_Datatype t32 = SION_MPI_INT32, t64 = SION_MPI_INT64; (void)t32; (void)t64; (void)v;
    int (*cb)(char *, void *) = sion_file_check_par_cb_mpi; (void)cb;
    return sion_file_check_par_args_free_mpi(a) == SION_SUCCESS; }' |
        "$mpicc" -std=c99 -Wall -Werror -I"$prefix/include" -fsyntax-only -x c - ||
        die "sion.h after <mpi.h> lacks SION_MPI_INT32/64 or the file-check calls"
fi

if [ -n "$mpi" ] && [ -e "$libdir/libsheaf-mpiio-pmpi.so" ] && [ -z "$extra" ]; then
    # (not in sanitizer builds: ASan must come first in a preload list)
    step "the installed interposition library preloads with no LD_LIBRARY_PATH (SHEAF_MPIIO=nocache and pfr)"
    mkdir -p "$tmp/preload"
    "$mpicc" -o "$tmp/preload/romio_style" "$src/tests/mpiio/romio_style.c" || die "mpicc romio_style.c"
    (cd "$tmp/preload" && "$mpiexec" -n 2 ./romio_style plain.dat) || die "romio_style on MPI's MPI-IO"
    for m in nocache pfr; do
        (cd "$tmp/preload" && "$mpiexec" -n 2 env -u LD_LIBRARY_PATH LD_PRELOAD="$libdir/libsheaf-mpiio-pmpi.so" \
            SHEAF_MPIIO=$m SHEAF_MPIIO_REPORT=1 ./romio_style $m.dat 2> $m.err) || {
            cat "$tmp/preload/$m.err" >&2; die "LD_PRELOAD of the installed libsheaf-mpiio-pmpi.so (SHEAF_MPIIO=$m)"; }
        grep -q "served by sheaf" "$tmp/preload/$m.err" || {
            cat "$tmp/preload/$m.err" >&2; die "SHEAF_MPIIO=$m: the preloaded library did not take the file over"; }
        cmp "$tmp/preload/plain.dat" "$tmp/preload/$m.dat" || die "SHEAF_MPIIO=$m: other bytes than MPI's MPI-IO"
    done
fi

step "README.md's C code blocks build and run with sionconfig${mpi:+ (and the MPI one with mpicc)}"
if [ -n "$mpi" ]; then
    SNIPPET_EXTRA="$extra" "$src/tests/install/readme_snippets.sh" "$src/README.md" "$sionconfig" "$cc" \
        "$tmp/readme" "$mpicc" "$mpiexec" || die "README code blocks"
else
    SNIPPET_EXTRA="$extra" "$src/tests/install/readme_snippets.sh" "$src/README.md" "$sionconfig" "$cc" \
        "$tmp/readme" || die "README code blocks"
fi

step "find_package(sheaf) consumer (shared and static${mpi:+, and sheaf::sheaf_mpi})"
mpi_consumer=()
# the consumer's find_package(MPI) must find the MPI sheaf was built with (not
# whatever `mpicc` is on the PATH: Debian's alternatives may name another MPI)
[ -n "$mpi" ] && mpi_consumer=(-DSHEAF_MPI_EXAMPLE="$src/examples/mpi/sion_mpi_example.c"
                               -DMPI_C_COMPILER="$mpicc")
"$cmake" -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "${mpi_consumer[@]}" \
    -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/consumer.log" 2>&1 || {
    cat "$tmp/consumer.log" >&2; die "configuring the find_package consumer"; }
"$cmake" --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || {
    cat "$tmp/consumer.log" >&2; die "building the find_package consumer"; }
# The container stores the name it was created with: same name, separate directories.
mkdir "$tmp/shared" "$tmp/static" "$tmp/pc"
(cd "$tmp/shared" && "$tmp/consumer/consumer_shared" c.sion) || die "consumer_shared"
(cd "$tmp/static" && "$tmp/consumer/consumer_static" c.sion) || die "consumer_static"
cmp "$tmp/shared/c.sion" "$tmp/static/c.sion" || die "shared and static library wrote different containers"
if [ -n "$mpi" ]; then
    mkdir "$tmp/mpi_shared" "$tmp/mpi_static"
    run_mpi_example "$tmp/mpi_shared" "$tmp/consumer/consumer_mpi_shared" c.sion 2
    run_mpi_example "$tmp/mpi_static" "$tmp/consumer/consumer_mpi_static" c.sion 2
    for f in c.sion c.sion.000001; do
        cmp "$tmp/mpi_shared/$f" "$tmp/mpi_static/$f" || die "sheaf_mpi shared and static wrote different $f"
    done
fi

step "pkg-config consumer"
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion sheaf)" = "$(sed -n 's/^Version: //p' "$libdir/pkgconfig/sheaf.pc")" ] ||
    die "pkg-config --modversion"
pkg-config --static --libs sheaf | grep -q -- -lpthread || die "pkg-config --static --libs lacks -lpthread"
# shellcheck disable=SC2046
"$cc" $extra $(pkg-config --cflags sheaf) -o "$tmp/consumer_pc" "$src/tests/install/consumer/consumer.c" \
    $(pkg-config --libs sheaf) -Wl,-rpath,"$libdir" || die "compiling with pkg-config flags"
(cd "$tmp/pc" && "$tmp/consumer_pc" c.sion) || die "consumer built with pkg-config"
cmp "$tmp/shared/c.sion" "$tmp/pc/c.sion" || die "pkg-config consumer wrote a different container"

step "installed headers are self-contained (C99, and C++ if available)"
for h in sion.h sheaf.h; do
    echo "#include <$h>" | "$cc" -std=c99 -Wall -Werror -I"$prefix/include" -fsyntax-only -x c - ||
        die "$h does not compile alone as C99"
done
if command -v c++ >/dev/null 2>&1; then
    echo '#include <sion.h>
int main() { int a, b, c, d; return sion_get_version(&a, &b, &c, &d) ? 0 : 1; }' |
        c++ -Wall -Werror -I"$prefix/include" -fsyntax-only -x c++ - || die "sion.h does not compile as C++"
fi

step "DESTDIR staging keeps the final prefix in sheaf.pc and sionconfig"
DESTDIR=$tmp/stage "$cmake" --install "$build" --prefix /opt/sheaf-test >/dev/null || die "DESTDIR install"
[ "$("$tmp/stage/opt/sheaf-test/bin/sionconfig" --path)" = /opt/sheaf-test ] || die "sionconfig under DESTDIR"
grep -q '^prefix=/opt/sheaf-test$' "$(find "$tmp/stage" -name sheaf.pc)" || die "sheaf.pc under DESTDIR"

if [ -n "$mpi_skipped" ]; then
    echo "SKIP: install test: every non-MPI check passed, but $mpi_skipped"
    exit 77
fi
echo "install test: OK"
