#!/usr/bin/env bash
# install-deps.sh - install what building and testing sheaf needs (Debian 12).
# Idempotent: does nothing when every package is present; otherwise runs
# `apt-get update` once and installs the missing ones (with sudo if not root).
#   build-essential cmake ninja-build pkg-config  build
#   python3 libcmocka-dev                         tests
#   clang libclang-rt-14-dev                      libFuzzer targets (tests/fuzz)
#   mpich libmpich-dev                            the parallel (MPI) layer and its tests
#   libxxhash-dev                                 libsheaf_fgfs (src/fgfs): XXH3 hashes of global
#                                                 names (Bloom filter, triage) and of files (the
#                                                 consistency check); header only, compiled in
#   fio python3-matplotlib                        bench/: the disk's limit next to sheaf-bench,
#                                                 and the plots (not needed to build or test)
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config python3 libcmocka-dev
          clang libclang-rt-14-dev mpich libmpich-dev libxxhash-dev fio python3-matplotlib)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages are installed"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: apt-get not found; this script supports Debian/Ubuntu." >&2
    echo "install-deps: please install the equivalents of: ${missing[*]}" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps: not root and sudo is missing; as root run: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    sudo=(sudo)
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
