#!/bin/sh
# run_all.sh - every measurement behind bench/RESULTS.md, in order; JSON to
# bench/results/json, logs to bench/results/logs, plots to bench/results.
# Data files go to DATA (default build-bench/data) and are deleted.
# Takes ~30-60 min on the 2-core development machine.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
export DATA=${DATA:-$HERE/../build-bench/data}
J=$HERE/results/json; L=$HERE/results/logs
mkdir -p "$J" "$L" "$DATA"
W=${WAIT_IDLE:-20}
vs() { # vs NAME ARGS... : one run_vs_fio comparison
  name=$1; shift
  "$HERE/run_vs_fio.py" --dir "$DATA" --wait-idle "$W" --out "$J/vs_fio_$name.json" "$@" > "$L/vs_fio_$name.log" 2>&1
  tail -n 12 "$L/vs_fio_$name.log"
}
what=${*:-vs sweeps plots}
for w in $what; do case $w in
vs)
  vs 8x256M_durable -n 8 -s 256M -b 1M --durable --reps 3 --modes "container,tasklocal,container@-L,container@-n 8"
  vs 8x256M_cached  -n 8 -s 256M -b 1M --reps 3 --modes "container,tasklocal,container@-L,container@-n 8"
  vs 2x1G_durable   -n 2 -s 1G -b 1M --durable --reps 3 --modes "container,tasklocal,container@-L,mpiio-ind"
  ;;
sweeps)
  "$HERE/sweep.sh" manytask > "$L/sweep_manytask.log" 2>&1
  "$HERE/sweep.sh" openclose > "$L/sweep_openclose.log" 2>&1
  SIZE_PER_RANK=128M "$HERE/sweep.sh" ranks xfer > "$L/sweep_ranks_xfer.log" 2>&1
  ;;
plots) /usr/bin/python3 "$HERE/plot.py" ;;
esac; done
