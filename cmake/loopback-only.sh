#!/bin/sh
# loopback-only.sh COMMAND [ARGS...] - run COMMAND in a network namespace of
# its own whose only interface is loopback (brought up here), so that nothing
# it starts can listen on, or reach, any other network.
# Why: Open MPI's mpiexec (ORTE's out-of-band TCP) binds its listening sockets
# to INADDR_ANY and in6addr_any whatever oob_tcp_if_include says; only the
# addresses it advertises follow that setting. cmake/SheafMPI.cmake starts
# every Open MPI run of the tests through this script.
# As root: unshare --net; otherwise in a user namespace as well (--map-root-user).
# Already inside (a script started through here starts a launcher): runs
# COMMAND as it is. Needs unshare (util-linux) and ip (iproute2).
set -u
if [ "${SHEAF_LOOPBACK_ONLY:-}" = 1 ]; then
    exec "$@"
fi
export SHEAF_LOOPBACK_ONLY=1
userns=""
[ "$(id -u)" = 0 ] || userns=--map-root-user
# shellcheck disable=SC2016
exec unshare --net $userns sh -c '
    if ! ip link set lo up; then
        echo "loopback-only.sh: cannot bring up lo in a new network namespace" >&2
        exit 126
    fi
    exec "$@"' loopback-only.sh "$@"
