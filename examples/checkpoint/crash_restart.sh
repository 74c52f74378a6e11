#!/usr/bin/env bash
# crash_restart.sh CKPT_DEMO SHEAF DIR [NP] - a checkpoint that dies before its
# close, brought back by `sheaf recover`: NP ranks (default 4) write their
# states into DIR/state.sion and sion_flush, then all are killed (SIGKILL);
# `sheaf verify` shows what is recoverable, `sheaf recover` closes the
# container from the journal, and a restart reads every state back exactly.
# Exit 0 only if the restart is exact.
# MPIEXEC: the launcher (the tests give the build tree's sheaf-mpiexec, which
# carries the MPI's own settings); default mpiexec.
set -u
ckpt=$1 sheaf=$2 dir=$3 np=${4:-4}
mpiexec=${MPIEXEC:-mpiexec}
mpiflags=()
if [ -z "${MPIEXEC:-}" ] && mpiexec --version 2>&1 | grep -qi 'open mpi'; then
    mpiflags=(--oversubscribe --allow-run-as-root)
fi
rm -rf "$dir" && mkdir -p "$dir"
echo "   mpiexec -n $np ckpt_demo -s 1 -d $dir --crash"
# mpiexec's banner about the killed processes is expected; keep the program's own line
"$mpiexec" "${mpiflags[@]}" -n "$np" "$ckpt" -s 1 -d "$dir" --crash 2>/dev/null |
    grep -v -E '^$|^=|^YOUR APPLICATION|This typically|Please see the FAQ' | sed 's/^/   /'
echo "   (mpiexec reported the killed ranks)"
[ -f "$dir/state.sion.sheafj" ] && echo "   left behind: state.sion (never closed) and its journal state.sion.sheafj"
echo "   sheaf verify:"
"$sheaf" verify "$dir/state.sion" 2>&1 | sed 's/^/     /'
echo "   sheaf recover:"
"$sheaf" recover "$dir/state.sion" | sed 's/^/     /' || exit 1
echo "   mpiexec -n $np ckpt_demo -s 1 -d $dir --restart"
"$mpiexec" "${mpiflags[@]}" -n "$np" "$ckpt" -s 1 -d "$dir" --restart | sed 's/^/   /'
exit "${PIPESTATUS[0]}"
