#!/usr/bin/env bash
# fullfs.sh MPIEXEC NP PROGRAM ARGS... - run the fault test with dir= a fresh
# 1 MiB tmpfs (mounted here; as root directly, otherwise in a user and mount
# namespace with unshare). Exit 77 (skipped) when no tmpfs can be mounted.
set -u
mpiexec=$1 np=$2 prog=$3
shift 3
mnt=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-fullfs-XXXXXX")
run() {
    mount -t tmpfs -o size=1m tmpfs "$mnt" || return 77
    "$mpiexec" -n "$np" "$prog" dir="$mnt" "$@"
    local rc=$?
    umount "$mnt"
    return $rc
}
if [ "$(id -u)" = 0 ]; then
    run "$@"
    rc=$?
elif command -v unshare >/dev/null && unshare -rm true 2>/dev/null; then
    export -f run
    export mnt mpiexec np prog
    unshare -rm bash -c 'run "$@"' _ "$@"
    rc=$?
else
    echo "fullfs: cannot mount a tmpfs (not root, no user namespaces): skipped"
    rc=77
fi
rmdir "$mnt" 2>/dev/null
exit $rc
