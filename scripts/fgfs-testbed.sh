#!/usr/bin/env bash
# fgfs-testbed.sh - simulated nodes for FGFS on one Linux machine (root).
# Each node is a persistent mount + UTS namespace (own host name "nodeK")
# with, at the same paths on every node (under DIR/mnt):
#   local       a tmpfs of its own (node-local storage)
#   bind        a bind mount of local/sub
#   one         a FUSE mount of "srvA:/one" (every node: one server)
#   half-same   "srvA:/same" on the first half of the nodes, "srvB:/same" on the
#               rest, both serving the same bytes
#   half-diff   "srvA:/diff" / "srvB:/diff", serving different bytes
# FUSE servers are tests/fgfs/fusesrv (no NFS on this kernel): a mount's
# source names its "server", as an NFS mount's does.
#   fgfs-testbed.sh up DIR NODES FUSESRV       set up (exit 77 + reason if not permitted)
#   fgfs-testbed.sh run DIR PPN -- CMD...      run CMD in the node of rank (PMI_RANK or
#                                              OMPI_COMM_WORLD_RANK) / PPN; for mpiexec
#   fgfs-testbed.sh down DIR                   kill the servers it started, unmount, remove
set -euo pipefail

skip() { echo "SKIPPED: $*"; exit 77; }

up() {
    local dir=$1 nodes=$2 srv=$3
    [ "$(id -u)" -eq 0 ] || skip "the test bed needs root (mount and UTS namespaces)"
    command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "unshare/nsenter (util-linux) missing"
    unshare -m -u true 2>/dev/null || skip "unshare of mount and UTS namespaces is not permitted here"
    [ -c /dev/fuse ] && grep -qw fuse /proc/filesystems || skip "no FUSE in this kernel (/dev/fuse)"
    mkdir -p "$dir/ns" "$dir/mnt"/{local,bind,one,half-same,half-diff}
    : > "$dir/pids"
    mountpoint -q "$dir/ns" || { mount --bind "$dir/ns" "$dir/ns"; mount --make-private "$dir/ns"; }
    local m=$dir/mnt half=$(( nodes / 2 ))
    for ((k = 0; k < nodes; k++)); do
        local s=srvA; [ "$k" -ge "$half" ] && s=srvB
        touch "$dir/ns/node$k.mnt" "$dir/ns/node$k.uts"
        unshare --mount="$dir/ns/node$k.mnt" --uts="$dir/ns/node$k.uts" --propagation private sh -ec "
            hostname node$k
            mount -t tmpfs -o size=8m tmpfs '$m/local'
            mkdir '$m/local/sub'; echo 'node-local file of node$k' > '$m/local/sub/f'
            mount --bind '$m/local/sub' '$m/bind'
            '$srv' '$m/one' srvA:/one 'one server, the same bytes' '$dir/pids' </dev/null >>'$dir/servers.log' 2>&1
            '$srv' '$m/half-same' $s:/same 'replicated bytes' '$dir/pids' </dev/null >>'$dir/servers.log' 2>&1
            '$srv' '$m/half-diff' $s:/diff 'bytes of $s' '$dir/pids' </dev/null >>'$dir/servers.log' 2>&1
        " || { echo "fgfs-testbed: node$k could not be set up" >&2; down "$dir"; exit 1; }
    done
    echo "$nodes" > "$dir/nodes"
    echo "fgfs-testbed: $nodes nodes up in $dir (servers: $(wc -l < "$dir/pids") FUSE processes)"
}

run() {
    local dir=$1 ppn=$2; shift 2
    [ "${1:-}" = "--" ] && shift
    local rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
    local k=$(( rank / ppn ))
    exec nsenter --mount="$dir/ns/node$k.mnt" --uts="$dir/ns/node$k.uts" --wd="$PWD" "$@"
}

down() {
    local dir=$1
    if [ -f "$dir/pids" ]; then
        # only the servers this bed started: a pid from the file is killed
        # only while it still runs fusesrv for this directory (never a reused pid)
        while read -r p; do
            if tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q "fusesrv.* $dir/pids"; then
                kill "$p" 2>/dev/null || true
            fi
        done < "$dir/pids"
        rm -f "$dir/pids"
    fi
    for f in "$dir"/ns/node*.mnt "$dir"/ns/node*.uts; do
        [ -e "$f" ] && umount "$f" 2>/dev/null || true
    done
    mountpoint -q "$dir/ns" 2>/dev/null && umount "$dir/ns" || true
    rm -rf "$dir"
}

cmd=${1:-}; shift || true
case "$cmd" in
    up) up "$@" ;;
    run) run "$@" ;;
    down) down "$@" ;;
    *) echo "usage: $0 up DIR NODES FUSESRV | run DIR PPN -- CMD... | down DIR" >&2; exit 2 ;;
esac
