#!/usr/bin/env bash
# expect_injected.sh NPROC COMMAND [ARGS...] - run COMMAND (an MPI run whose
# ranks preload faultfs with FAULTFS_VERBOSE=1) and pass only if it exits 0,
# all NPROC processes report the shim at their exit (so it was preloaded,
# whichever launcher passed the environment), and faults were injected.
set -u
nproc=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "expect_injected: exit $rc"; exit 1; }
loaded=$(printf '%s\n' "$out" | grep -c '^faultfs: [0-9]* fault(s) injected$')
injected=$(printf '%s\n' "$out" | sed -n 's/^faultfs: \([0-9]*\) fault(s) injected$/\1/p' |
           awk '{ s += $1 } END { print s + 0 }')
if [ "$loaded" -ne "$nproc" ] || [ "$injected" -eq 0 ]; then
    echo "expect_injected: faultfs reported by $loaded of $nproc processes, $injected fault(s) injected"
    exit 1
fi
echo "expect_injected: $nproc processes, $injected fault(s) injected, all survived"
