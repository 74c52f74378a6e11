#!/bin/sh
# run.sh BENCH FSCOUNT DIR [smoke]
# Every workload (subarray, btio, sliding) in every mode (the MPI library's
# MPI-IO, sheaf percall, pfr, nocache) at 4 and 8 ranks with as many
# aggregators as ranks, fs calls counted by FSCOUNT (LD_PRELOAD). smoke: 4
# ranks, a 2x2 sliding window on the MPI library and on pfr only, fails on any verification error or a sliding window
# where pfr reads more file-system bytes than the MPI library.
# MPIEXEC: the launcher (default: mpiexec). SCALE: size factor (default 1).
set -eu
# tee_status FILE CMD... (bench/tee_status.sh): CMD's output shown and kept, its exit status
. "$(dirname "$0")/../tee_status.sh"
BENCH=$1 FSCOUNT=$2 DIR=$3 SMOKE=${4:-}
MPIEXEC=${MPIEXEC:-mpiexec}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
nps="4 8" scale=${SCALE:-1} grid=${GRID:-8} wls="subarray btio sliding"
modes="mpi percall pfr nocache"
[ "$SMOKE" = smoke ] && nps=4 grid=2 wls=sliding modes="mpi pfr"
rm -f "$DIR/out.txt"
preload=$FSCOUNT
# under ASan the sanitizer runtime must come first in the preload list
if ldd "$BENCH" 2>/dev/null | grep -q libasan; then preload="$(ldd "$BENCH" | awk '/libasan/ {print $3}'):$FSCOUNT"; fi
for np in $nps; do
  for wl in $wls; do
    for mode in $modes; do
      tee_status "$DIR/out.txt" $MPIEXEC -n "$np" env LD_PRELOAD="$preload" FSCOUNT_PREFIX="$DIR" "$BENCH" "$wl" "$mode" "$DIR" "$np" "$scale" "$grid"
    done
  done
done
if [ "$SMOKE" = smoke ]; then
  if grep -q "errors [1-9]" "$DIR/out.txt"; then echo "verification errors"; exit 1; fi
  mpi=$(awk '$1=="sliding" && $2=="mpi" {for(i=1;i<NF;i++) if($i=="fs_read_MB") print $(i+1)}' "$DIR/out.txt")
  pfr=$(awk '$1=="sliding" && $2=="pfr" {for(i=1;i<NF;i++) if($i=="fs_read_MB") print $(i+1)}' "$DIR/out.txt")
  echo "sliding window fs MB read: MPI-IO $mpi, sheaf pfr $pfr"
  awk -v a="$pfr" -v b="$mpi" 'BEGIN { exit !(a < b) }' || { echo "pfr did not read fewer fs bytes"; exit 1; }
  rm -f "$DIR/out.txt"
fi
