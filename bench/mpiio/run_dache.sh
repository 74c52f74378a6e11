#!/bin/sh
# run_dache.sh BENCH FSCOUNT DIR
# DACHe against the MPI library's independent MPI-IO, side by side in one run:
# the sliding window with independent reads and the small-strided writes, at 4
# and 8 ranks, file-system calls counted by FSCOUNT (LD_PRELOAD). Prints one
# line per run, then the ratios (fs reads MPI-IO / DACHe on the sliding
# window; fs writes, io time and access time MPI-IO / DACHe on the strided
# writes).
# MPIEXEC: the launcher (default: mpiexec). PROGRESS: sheaf_dache_progress
# (default auto = shared memory on one node). NPS: rank counts (default "4 8").
# STEPS (environment, passed to the benchmark): time steps of the strided
# workload (default 16; bench/RESULTS.md also reports a larger row).
set -eu
BENCH=$1 FSCOUNT=$2 DIR=$3
MPIEXEC=${MPIEXEC:-mpiexec} PROGRESS=${PROGRESS:-auto} NPS=${NPS:-"4 8"}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
out="$DIR/dache-out.txt"
rm -f "$out"
preload=$FSCOUNT
if ldd "$BENCH" 2>/dev/null | grep -q libasan; then preload="$(ldd "$BENCH" | awk '/libasan/ {print $3}'):$FSCOUNT"; fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for np in $NPS; do
  for wl in sliding strided; do
    for mode in mpi dache; do
      $MPIEXEC -n "$np" env LD_PRELOAD="$preload" FSCOUNT_PREFIX="$DIR" "$BENCH" "$wl" "$mode" "$DIR" "$PROGRESS" | tee -a "$out"
    done
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
  { for (i = 1; i < NF; i++) v[$1, $2, $4, $i] = $(i + 1) }
  $1 == "sliding" || $1 == "strided" { nps[$4] = 1 }
  END {
    for (np in nps) {
      printf "np %s: sliding fs reads MPI-IO %s / DACHe %s = %.1f; ", np, v["sliding", "mpi", np, "fs_reads"],
        v["sliding", "dache", np, "fs_reads"], v["sliding", "mpi", np, "fs_reads"] / v["sliding", "dache", np, "fs_reads"]
      printf "strided fs writes %s / %s = %.0f, io_s %s / %s = %.1fx, acc_s %s / %s = %.1fx\n", v["strided", "mpi", np, "fs_writes"],
        v["strided", "dache", np, "fs_writes"], v["strided", "mpi", np, "fs_writes"] / v["strided", "dache", np, "fs_writes"],
        v["strided", "mpi", np, "io_s"], v["strided", "dache", np, "io_s"], v["strided", "mpi", np, "io_s"] / v["strided", "dache", np, "io_s"],
        v["strided", "mpi", np, "acc_s"], v["strided", "dache", np, "acc_s"], v["strided", "mpi", np, "acc_s"] / v["strided", "dache", np, "acc_s"]
    }
  }' "$out"
if grep -q "errors [1-9]" "$out"; then echo "verification errors"; exit 1; fi
