#!/bin/sh
# The scale simulation at SIONlib's headline sizes (issue 28): 10^6 and
# 1.8*10^6 simulated tasks, one process, every task on one shared run stack
# (scale_sim --copy-stacks: a waiting task keeps only the bytes its stack
# uses). Not in ctest (tens of minutes, ~14.5 KB per task: 14.5 GB at 10^6);
# ctest runs the same mode at 10^2..10^4 (scale.protocol.copystacks).
#   bench/scale/run_big.sh [build-dir] [out-dir] [P list] [files list]
# Defaults: build, bench/scale/results-big, 1000000,1835008, tpf1024,
# i.e. 1024 tasks per file (977 and 1792 files). Before each size it checks
# MemAvailable against KB_PER_TASK (default 15) x P + 1 GiB and skips the
# size with the reason when the machine cannot give it (others share it).
# Writes out-dir/scale.csv, out-dir/big.log (with /usr/bin/time -v: peak RSS).
set -eu
. "$(dirname "$0")/../tee_status.sh"
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
out=${2:-$here/results-big}
Ps=${3:-1000000,1835008}
Fs=${4:-tpf1024}
kb=${KB_PER_TASK:-15}
sim="$build/tests/scale/scale_sim"
[ -x "$sim" ] || { echo "build scale_sim first ($sim)"; exit 1; }
mkdir -p "$out"
date -u +"start %Y-%m-%dT%H:%M:%SZ" | tee -a "$out/big.log"
for P in $(echo "$Ps" | tr ',' ' '); do
  need=$((P * kb + 1048576))
  avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
  if [ "$avail" -lt "$need" ]; then
    echo "P=$P skipped: needs ~$((need / 1048576)) GiB (${kb} KB per task), $((avail / 1048576)) GiB available" | tee -a "$out/big.log"
    continue
  fi
  # SHEAF_SID_NOREUSE=1: one process holds P sids; with SIONlib's reuse rule every sid of the
  # read open would search the 10^6 closed slots of the write's sids (tests/scale/README.md)
  tee_status "$out/big.log" env SION_ERROR_MSG=0 SHEAF_SID_NOREUSE=1 nice /usr/bin/time -v "$sim" -P "$P" -f "$Fs" --copy-stacks \
    --dir "$out" --csv "$out/scale.csv"
done
date -u +"end %Y-%m-%dT%H:%M:%SZ" | tee -a "$out/big.log"
