#!/usr/bin/env bash
# install-deps.sh - install what building and testing sheaf needs (Debian 12).
# Idempotent: does nothing when every package is present; otherwise runs
# `apt-get update` once and installs the missing ones (with sudo if not root).
#   build-essential cmake ninja-build pkg-config  build
#   python3 libcmocka-dev                         tests
#   clang libclang-rt-14-dev                      libFuzzer targets (tests/fuzz)
#   clang-format                                  the one code style (.clang-format): CI checks
#                                                 src/ tools/ tests/ bench/ include/ with
#                                                 scripts/format.sh --check
#   mpich libmpich-dev                            the parallel (MPI) layer and its tests
#   libxxhash-dev                                 libsheaf_fgfs (src/fgfs): XXH3 hashes of global
#                                                 names (Bloom filter, triage) and of files (the
#                                                 consistency check); header only, compiled in
#   libopenmpi-dev openmpi-bin                    the same with Open MPI (CI builds and tests
#                                                 both, in build/ and build-openmpi/)
#   iproute2                                      `ip`, for the loopback-only network
#                                                 namespace of Open MPI test runs
#   strace python3-dev                            loader tests (tests/loader): strace is the
#                                                 oracle that every .so/.py open comes from the
#                                                 cache; Python.h builds extension modules
# MPICH stays the default MPI: installing Open MPI switches Debian's `mpicc` /
# `mpiexec` alternatives to it (higher priority), which would silently change
# the MPI of every build that uses the plain names. So the alternatives are set
# back to MPICH afterwards (also on every later run: a no-op when they are).
# sheaf's builds name their MPI explicitly anyway (SHEAF_MPI_FLAVOR).
#   gfortran                                      bindings/fortran: SIONlib's Fortran 90 modules
#                                                 and their tests (without it sheaf builds without
#                                                 the Fortran interface); g++ (build-essential)
#                                                 builds the C++ interface's tests
#   python3-venv python3-numpy python3-pytest     the Python package's tests (tests/python): a venv
#                                                 in the build tree over Debian's numpy and pytest
#                                                 (mpi4py, scikit-build-core: pip, from PyPI)
#   fio python3-matplotlib                        bench/: the disk's limit next to sheaf-bench,
#                                                 and the plots (not needed to build or test)
#   libfuse3-dev fuse3                            the loader measurement bed (tests/loader/bed):
#                                                 countfs, a counting FUSE file system on libfuse3
#                                                 (fuse3: fusermount3, /etc/fuse.conf), and the
#                                                 Python C extension modules of its workloads
#   python3-numpy                                 tests/ckpt: `sheaf ckpt extract --npy` output read
#                                                 back with numpy.load (a real .npy reader)
#   python3-meshio                                tests/ckpt (ckpt.tool.vtk): `sheaf ckpt export --vtk`
#                                                 output opened by a real VTK reader (Debian's
#                                                 python3, /usr/bin/python3, which the ckpt tests use)
#   libhdf5-mpich-dev libhdf5-openmpi-dev         tests/mpiio (mpiio.hdf5): parallel HDF5 on its MPI-IO
#   hdf5-tools                                    driver through libsheaf-mpiio-pmpi.so, for each MPI
#                                                 (pkg-config hdf5-mpich / hdf5-openmpi); h5dump
#                                                 compares the files' contents. The Open MPI one
#                                                 switches the h5pcc alternative: set back to MPICH's
#   lmod                                          packaging.easybuild: EasyBuild (pip) needs a
#                                                 modules tool to check the easyconfig
#   libsodium-dev                                 the loader's overlay across nodes (src/loader):
#                                                 HMAC (crypto_auth) of the servers' handshake and
#                                                 random nonces; without it the loader is not built
#   chromium                                      tests/monitor (monitor.export.report): the HTML page
#                                                 of `sheaf stats report` opened in a real headless
#                                                 browser (--dump-dom, --screenshot)
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config python3 libcmocka-dev
          clang libclang-rt-14-dev clang-format mpich libmpich-dev libopenmpi-dev openmpi-bin iproute2
          libxxhash-dev fio python3-matplotlib strace
          libfuse3-dev fuse3 python3-dev gfortran python3-venv python3-numpy python3-pytest python3-meshio
          libhdf5-mpich-dev libhdf5-openmpi-dev hdf5-tools libsodium-dev chromium lmod)

sudo=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
fi
# keep_mpich_default: point the MPI alternatives at MPICH if both MPIs are there
keep_mpich_default() {
    command -v update-alternatives >/dev/null 2>&1 || return 0
    [ -x /usr/bin/mpicc.mpich ] && [ -x /usr/bin/mpicc.openmpi ] || return 0
    local name target
    if [ "$(id -u)" -ne 0 ] && [ ${#sudo[@]} -eq 0 ]; then
        echo "install-deps: not root and no sudo: cannot check that MPICH is the default MPI" >&2
        return 0
    fi
    for name in mpi:/usr/bin/mpicc.mpich mpirun:/usr/bin/mpirun.mpich \
                mpi-x86_64-linux-gnu:/usr/include/x86_64-linux-gnu/mpich \
                h5pcc:/usr/bin/h5pcc.mpich hdf5.pc:/usr/lib/x86_64-linux-gnu/pkgconfig/hdf5-mpi.pc; do
        target=${name#*:} name=${name%%:*}
        [ -e "$target" ] || continue
        if [ "$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^Value: //p')" != "$target" ]; then
            echo "install-deps: MPICH stays the default MPI: update-alternatives --set $name $target"
            "${sudo[@]}" update-alternatives --set "$name" "$target"
        fi
    done
}

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages are installed"
    keep_mpich_default
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: apt-get not found; this script supports Debian/Ubuntu." >&2
    echo "install-deps: please install the equivalents of: ${missing[*]}" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ] && [ ${#sudo[@]} -eq 0 ]; then
    echo "install-deps: not root and sudo is missing; as root run: apt-get install ${missing[*]}" >&2
    exit 1
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
keep_mpich_default
echo "install-deps: done"
