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
# STEPS: the strided workload's sizes in time steps of 2048 elements of 32
# bytes per rank (default "16 256": 1 MiB and 16 MiB per rank; a list: one
# strided run pair per size; the ratios are printed per size).
set -eu
# tee_status FILE CMD... (bench/tee_status.sh): CMD's output shown and kept, its exit status
. "$(dirname "$0")/../tee_status.sh"
BENCH=$1 FSCOUNT=$2 DIR=$3
MPIEXEC=${MPIEXEC:-mpiexec} PROGRESS=${PROGRESS:-auto} NPS=${NPS:-"4 8"} SIZES=${STEPS:-"16 256"}
unset STEPS
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
out="$DIR/dache-out.txt"
rm -f "$out"
preload=$FSCOUNT
if ldd "$BENCH" 2>/dev/null | grep -q libasan; then preload="$(ldd "$BENCH" | awk '/libasan/ {print $3}'):$FSCOUNT"; fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # run NP WORKLOAD MODE STEPS
  tee_status "$out" $MPIEXEC -n "$1" env LD_PRELOAD="$preload" FSCOUNT_PREFIX="$DIR" STEPS="$4" "$BENCH" "$2" "$3" "$DIR" "$PROGRESS"
}
for np in $NPS; do
  for mode in mpi dache; do run "$np" sliding "$mode" 16; done
  for st in $SIZES; do
    for mode in mpi dache; do run "$np" strided "$mode" "$st"; done
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
  $1 == "sliding" { for (i = 1; i < NF; i++) s[$2, $4, $i] = $(i + 1); nps[$4] = 1 }
  $1 == "strided" { for (i = 1; i < NF; i++) v[$2, $4, $6, $i] = $(i + 1); key[$4 " " $6] = 1 }
  END {
    for (np in nps)
      printf "np %s: sliding fs reads MPI-IO %s / DACHe %s = %.1f\n", np, s["mpi", np, "fs_reads"], s["dache", np, "fs_reads"],
        s["mpi", np, "fs_reads"] / s["dache", np, "fs_reads"]
    for (k in key) {
      split(k, a, " "); np = a[1]; st = a[2]
      printf "np %s steps %s: strided fs writes %s / %s = %.0f, io_s %s / %s = %.1fx, acc_s %s / %s = %.1fx\n", np, st,
        v["mpi", np, st, "fs_writes"], v["dache", np, st, "fs_writes"], v["mpi", np, st, "fs_writes"] / v["dache", np, st, "fs_writes"],
        v["mpi", np, st, "io_s"], v["dache", np, st, "io_s"], v["mpi", np, st, "io_s"] / v["dache", np, st, "io_s"],
        v["mpi", np, st, "acc_s"], v["dache", np, st, "acc_s"], v["mpi", np, st, "acc_s"] / v["dache", np, st, "acc_s"]
    }
  }' "$out"
if grep -q "errors [1-9]" "$out"; then echo "verification errors"; exit 1; fi
