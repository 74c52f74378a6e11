#!/bin/sh
# sweep.sh - the parameter sweeps behind bench/RESULTS.md and the plots:
#   openclose : container open+close at 1..MAXNP ranks (+ bare MPI_Gather+MPI_Bcast)
#   manytask  : N logical tasks x 4 KiB, container vs N files, cached + durable; hybrid API
#               (2 ranks x N/2 threads) and mapped API (2 ranks x N/2 tasks, no threads)
#   ranks     : bandwidth vs ranks (container, tasklocal, mpiio-ind), SIZE_PER_RANK each
#   xfer      : bandwidth vs transfer size (container, container -L, tasklocal), 2 ranks
# Usage: bench/sweep.sh [what...]   (default: all)
# Env: BIN (sheaf-bench), DATA (scratch dir), OUT (JSON dir, default bench/results/json),
#      MAXNP (32), MANYMAX (16384), SIZE_PER_RANK (64M), REPS (3)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$HERE/../build-bench/bench/sheaf-bench}
DATA=${DATA:-$HERE/../build-bench/data}
OUT=${OUT:-$HERE/results/json}
MAXNP=${MAXNP:-32}; MANYMAX=${MANYMAX:-16384}; SIZE_PER_RANK=${SIZE_PER_RANK:-64M}; REPS=${REPS:-3}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
mkdir -p "$DATA" "$OUT"
what=${*:-openclose manytask ranks xfer}
b() { echo "+ mpiexec -n $*" >&2; mpiexec -n "$@"; }
for w in $what; do
  case $w in
  openclose)
    np=1; while [ $np -le "$MAXNP" ]; do
      b $np "$BIN" --mode=openclose -f "$DATA/oc.sion" --reps 5 -X --json "$OUT/openclose_np$np.json"
      np=$((np * 2)); done ;;
  manytask)
    for api in hybrid mapped; do for pol in cached durable; do
      n=64; while [ $n -le "$MANYMAX" ]; do
        b 2 "$BIN" --mode=manytask --manytask-api=$api --threads $((n / 2)) -s 4k -b 4k -f "$DATA/mt.sion" \
          --reps "$REPS" -X --$pol --json "$OUT/manytask_${api}_${pol}_N$n.json"
        n=$((n * 4)); done; done; done ;;
  ranks)
    for np in 1 2 4 8; do for m in container tasklocal mpiio-ind; do
      b $np "$BIN" --mode=$m -s "$SIZE_PER_RANK" -b 1M -f "$DATA/r.sion" --reps "$REPS" -X --durable \
        --json "$OUT/ranks_${m}_np$np.json"; done; done ;;
  xfer)
    for bs in 64k 256k 1M 4M 16M; do
      b 2 "$BIN" --mode=container -s 256M -b $bs -f "$DATA/x.sion" --reps "$REPS" -X --durable --label ansi --json "$OUT/xfer_container_$bs.json"
      b 2 "$BIN" --mode=container -L -s 256M -b $bs -f "$DATA/x.sion" --reps "$REPS" -X --durable --label posix --json "$OUT/xfer_container-posix_$bs.json"
      b 2 "$BIN" --mode=tasklocal -s 256M -b $bs -f "$DATA/x.sion" --reps "$REPS" -X --durable --json "$OUT/xfer_tasklocal_$bs.json"
    done ;;
  *) echo "unknown sweep $w" >&2; exit 1 ;;
  esac
done
