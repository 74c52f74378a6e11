#!/bin/sh
# run_perf.sh BENCH DIR [REPS]
# ROMIO perf's contiguous 4 MiB write_at/read_at per rank (perf_bench.c), the
# MPI library's MPI-IO, DACHe (large requests on the direct path) and DACHe
# through its pages (sheaf_dache_direct_size=0), side by side: REPS rounds
# (default 5) of the three, interleaved, then the medians and the ratios
# DACHe / MPI-IO. MPIEXEC (default mpiexec), NP (default 4), SIZE (bytes per
# rank, default 4 MiB).
set -eu
BENCH=$1 DIR=$2 REPS=${3:-5}
MPIEXEC=${MPIEXEC:-mpiexec} NP=${NP:-4}
mkdir -p "$DIR"
out="$DIR/perf-out.txt"
rm -f "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$REPS" ]; do
  for mode in mpi dache dache-pages; do $MPIEXEC -n "$NP" "$BENCH" "$mode" "$DIR" | tee -a "$out"; done
  i=$((i + 1))
done
med() {  # med MODE FIELD
  grep "mode=$1 " "$out" | sed -n "s/.*$2=\([0-9.]*\).*/\1/p" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
for mode in mpi dache dache-pages; do
  echo "median mode=$mode write_MBps=$(med "$mode" write_MBps) read_MBps=$(med "$mode" read_MBps)"
done
for mode in dache dache-pages; do
  awk -v m="$mode" -v w="$(med "$mode" write_MBps)" -v r="$(med "$mode" read_MBps)" \
      -v mw="$(med mpi write_MBps)" -v mr="$(med mpi read_MBps)" \
      'BEGIN {printf "ratio %s/mpi: write %.2fx read %.2fx\n", m, w / mw, r / mr}'
done
