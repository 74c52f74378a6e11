#!/bin/sh
# Sweep of the scale simulation (issue 19): sheaf's real generic open/close
# protocol at P simulated tasks in one process (tests/scale/scale_sim).
#   bench/scale/run_sweep.sh [build-dir] [out-dir] [P list] [files list]
# Defaults: build, bench/scale/results, 1000,3000,10000,30000,100000,
# 1,tpf1024,tpf256. Writes out-dir/scale.csv (one row per run and phase) and
# the plots (plot.py). One run at a time (they are big); nice'd.
set -eu
# tee_status FILE CMD... (bench/tee_status.sh): CMD's output shown and kept, its exit status
. "$(dirname "$0")/../tee_status.sh"
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
out=${2:-$here/results}
Ps=${3:-1000,3000,10000,30000,100000}
Fs=${4:-1,tpf1024,tpf256}
mkdir -p "$out"
rm -f "$out/scale.csv"
sim="$build/tests/scale/scale_sim"
[ -x "$sim" ] || { echo "build scale_sim first ($sim)"; exit 1; }
date -u +"start %Y-%m-%dT%H:%M:%SZ" | tee "$out/sweep.log"
for P in $(echo "$Ps" | tr ',' ' '); do
  tee_status "$out/sweep.log" env SION_ERROR_MSG=0 nice "$sim" -P "$P" -f "$Fs" --dir "$out" --csv "$out/scale.csv"
done
date -u +"end %Y-%m-%dT%H:%M:%SZ" | tee -a "$out/sweep.log"
/usr/bin/python3 "$here/plot.py" "$out/scale.csv" "$out"
