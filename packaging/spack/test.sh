#!/usr/bin/env bash
# packaging/spack/test.sh - `spack install sheaf` from this tree, offline, with
# the system's compiler, CMake, make and MPICH as externals, then the recipe's
# smoke test (`spack test run sheaf`). Run by ctest as packaging.spack
# (label packaging) and by .ci/run; see packaging/spack/README.md.
#
#   packaging/spack/test.sh [SOURCE_DIR]        (default: this checkout)
#
# Environment:
#   SPACK_ROOT          a Spack checkout to use as is; otherwise
#   SHEAF_SPACK_GIT     a git URL or directory to clone Spack from (default:
#                       Spack's public repository); a clone that fails exits 77
#   SHEAF_SPACK_WORK    work directory (default: a temporary one, removed)
#   SHEAF_SPACK_SPEC    the spec to install (default: sheaf@=0.1.0+mpi+openmp~fortran~python~loader)
# Spack needs clingo: the python running it must import clingo (else a venv in
# the work directory gets `pip install clingo`; no network: exit 77).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "${1:-$here/../..}" && pwd)
spec=${SHEAF_SPACK_SPEC:-sheaf@=0.1.0+mpi+openmp~fortran~python~loader}
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $* ($(( $(date +%s) - t0 ))s)"; }
t0=$(date +%s)

if [ -n "${SHEAF_SPACK_WORK:-}" ]; then
    work=$SHEAF_SPACK_WORK
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-spack.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
for t in git cmake make mpicc.mpich mpichversion gcc; do
    command -v "$t" >/dev/null || skip "$t not found (Spack's externals are the system's)"
done

step "Spack"
if [ -n "${SPACK_ROOT:-}" ]; then
    [ -x "$SPACK_ROOT/bin/spack" ] || die "SPACK_ROOT=$SPACK_ROOT has no bin/spack"
elif [ -x "$work/spack/bin/spack" ]; then
    SPACK_ROOT=$work/spack
else
    url=${SHEAF_SPACK_GIT:-https://github.com/spack/spack.git}
    timeout 600 git clone -q --depth 1 "$url" "$work/spack" 2>"$work/clone.log" ||
        skip "cannot clone Spack from $url ($(tail -n 1 "$work/clone.log")); set SPACK_ROOT or SHEAF_SPACK_GIT"
    SPACK_ROOT=$work/spack
fi
export SPACK_ROOT
echo "    $SPACK_ROOT ($(git -C "$SPACK_ROOT" log -1 --format='%h %cs' 2>/dev/null || echo '?'))"

step "a python that imports clingo"
py=${SHEAF_SPACK_PYTHON:-python3}
if ! "$py" -c 'import clingo' 2>/dev/null; then
    py=$work/py/bin/python
    if ! "$py" -c 'import clingo' 2>/dev/null; then
        python3 -m venv "$work/py" || skip "python3 -m venv failed"
        "$py" -m pip install -q clingo >"$work/pip.log" 2>&1 ||
            skip "pip install clingo failed ($(tail -n 1 "$work/pip.log"))"
    fi
fi
"$py" -c 'import clingo; print("    clingo", clingo.__version__)'
spack() { "$py" "$SPACK_ROOT/bin/spack" "$@"; }

# Spack's user configuration and caches in the work directory: ~/.spack is
# neither read nor written, and what this script finds goes to that scope
unset SPACK_DISABLE_LOCAL_CONFIG
export SPACK_USER_CONFIG_PATH=$work/user SPACK_USER_CACHE_PATH=$work/cache
# a kept work directory (SHEAF_SPACK_WORK) keeps only its Spack clone and venv
rm -rf "$work/user" "$work/cache" "$work/opt" "$work/stage" "$work/env" "$work/src" "$work/build"
mkdir -p "$SPACK_USER_CONFIG_PATH"
cat >"$SPACK_USER_CONFIG_PATH/config.yaml" <<EOF
config:
  install_tree:
    root: $work/opt
  build_stage: [$work/stage]
  source_cache: $work/source-cache
  misc_cache: $work/cache/misc
  build_jobs: 2
EOF
cat >"$SPACK_USER_CONFIG_PATH/bootstrap.yaml" <<EOF
bootstrap:
  enable: false
EOF

step "externals: the compiler, cmake, gmake, mpich (nothing is downloaded)"
# The compiler by `spack compiler find` (PATH cut to the system's directories:
# 14 s). The three packages are written from their own version output rather
# than by `spack external find`, which took 5 min on the 2-core machine (it
# loads Spack's whole package index) and finds the same specs
# (cmake@3.25.1, gmake@4.3, mpich@4.0.2 on Debian 12).
PATH=/usr/bin:/bin spack compiler find --scope user >"$work/compilers.log" 2>&1 ||
    { cat "$work/compilers.log"; die "spack compiler find"; }
grep -q 'gcc@' "$SPACK_USER_CONFIG_PATH/compilers.yaml" || { cat "$work/compilers.log"; die "no gcc found by Spack"; }
v_cmake=$(cmake --version | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p')
v_make=$(make --version | sed -n '1s/^GNU Make \([0-9.]*\).*/\1/p')
v_mpich=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*\([0-9.]*\).*/\1/p')
[ -n "$v_cmake" ] && [ -n "$v_make" ] && [ -n "$v_mpich" ] ||
    skip "cmake ($v_cmake), GNU make ($v_make) or MPICH (mpichversion: $v_mpich) version unknown"
prefix_of() { dirname "$(dirname "$(command -v "$1")")"; }
cat >"$SPACK_USER_CONFIG_PATH/packages.yaml" <<EOF
packages:
  cmake:
    externals: [{spec: cmake@$v_cmake, prefix: $(prefix_of cmake)}]
    buildable: false
  gmake:
    externals: [{spec: gmake@$v_make, prefix: $(prefix_of make)}]
    buildable: false
  mpich:
    externals: [{spec: mpich@$v_mpich+hydra, prefix: $(prefix_of mpichversion)}]
    buildable: false
EOF
grep 'spec:' "$SPACK_USER_CONFIG_PATH/packages.yaml"
# every other package must be an external too, except the compiler's runtime
# libraries (copied from the compiler, not downloaded) and sheaf itself
cat >>"$SPACK_USER_CONFIG_PATH/packages.yaml" <<EOF
  all:
    buildable: false
    providers:
      mpi: [mpich]
  gcc-runtime:
    buildable: true
  sheaf:
    buildable: true
EOF

step "sheaf's source: the files git knows in $src, copied"
mkdir -p "$work/src"
(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$work/src" -xf -
[ -f "$work/src/CMakeLists.txt" ] || die "no CMakeLists.txt copied from $src"

step "spack install $spec (environment, develop from the copy)"
env=$work/env
spack env create -d "$env" >/dev/null
spack -e "$env" repo add "$work/src/packaging/spack" >/dev/null
spack -e "$env" add "$spec" >/dev/null
spack -e "$env" develop --no-clone -p "$work/src" -b "$work/build" "${spec%%[+~ ]*}" >/dev/null
spack -e "$env" concretize -f >"$work/concretize.log" 2>&1 || { cat "$work/concretize.log"; die "spack concretize"; }
sed 's/^/    /' "$work/concretize.log" | grep -E 'sheaf|mpich|cmake' | head -n 6
spack -e "$env" install --fail-fast >"$work/install.log" 2>&1 || { tail -n 60 "$work/install.log"; die "spack install"; }
tail -n 3 "$work/install.log"
prefix=$(spack -e "$env" location -i sheaf)
echo "    installed in $prefix"
for f in bin/sheaf bin/sionconfig include/sion.h lib/libsheaf.so lib/cmake/sheaf/sheafConfig.cmake; do
    [ -e "$prefix/$f" ] || die "$f not installed in $prefix"
done
case $spec in *+mpi*)
    [ -e "$prefix/lib/libsheaf_mpi.so" ] || die "+mpi: libsheaf_mpi.so not installed"
    [ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=mpi_flavor sheaf_mpi)" = mpich ] ||
        die "+mpi: sheaf_mpi.pc does not say mpi_flavor=mpich" ;;
esac

step "spack test run sheaf (the recipe's smoke test)"
spack -e "$env" test run --alias smoke sheaf >"$work/test.log" 2>&1 || { cat "$work/test.log"; die "spack test run"; }
spack -e "$env" test results smoke >"$work/results.log" 2>&1 || true
cat "$work/results.log"
grep -q 'PASSED' "$work/results.log" && ! grep -q -E 'FAILED|NO-TESTS|SKIPPED' "$work/results.log" ||
    { cat "$work/test.log"; die "smoke test did not pass"; }
step "spack install and smoke test of $spec: OK"
