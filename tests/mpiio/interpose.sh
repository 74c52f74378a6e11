#!/bin/sh
# interpose.sh MPIEXEC PLAIN LINKED PRELOAD_LIB DIR [preload]
# The same unmodified MPI-IO program (romio_style) on the MPI library's own
# MPI-IO, then through libsheaf-mpiio-pmpi.so (linked in front of the MPI
# library; with "preload" also by LD_PRELOAD): same output file byte for byte,
# and the interposed runs say the file was served by sheaf.
set -eu
MPIEXEC=$1 PLAIN=$2 LINKED=$3 LIB=$4 DIR=$5 MODE=${6:-}
mkdir -p "$DIR"
$MPIEXEC -n 4 "$PLAIN" "$DIR/plain.dat"
SHEAF_MPIIO=pfr SHEAF_MPIIO_REPORT=1 $MPIEXEC -n 4 "$LINKED" "$DIR/linked.dat" 2> "$DIR/linked.err" || { cat "$DIR/linked.err"; exit 1; }
cat "$DIR/linked.err"
grep -q "served by sheaf" "$DIR/linked.err" || { echo "interposition did not take the file over"; exit 1; }
cmp "$DIR/plain.dat" "$DIR/linked.dat"
# DACHe (SHEAF_MPIIO=dache): independent blocking calls through the cache too
SHEAF_MPIIO=dache SHEAF_MPIIO_REPORT=1 $MPIEXEC -n 4 "$LINKED" "$DIR/dache.dat" 2> "$DIR/dache.err" || { cat "$DIR/dache.err"; exit 1; }
grep -q "served by sheaf" "$DIR/dache.err" || { echo "dache: interposition did not take the file over"; exit 1; }
cmp "$DIR/plain.dat" "$DIR/dache.dat"
# without the hint or environment the file is left to the MPI library
$MPIEXEC -n 4 env SHEAF_MPIIO_REPORT=1 "$LINKED" "$DIR/off.dat" 2> "$DIR/off.err"
! grep -q "served by sheaf" "$DIR/off.err" || { echo "took a file over without being asked"; exit 1; }
cmp "$DIR/plain.dat" "$DIR/off.dat"
if [ "$MODE" = preload ]; then
  $MPIEXEC -n 4 env LD_PRELOAD="$LIB" SHEAF_MPIIO=pfr SHEAF_MPIIO_REPORT=1 "$PLAIN" "$DIR/preload.dat" 2> "$DIR/preload.err" || { cat "$DIR/preload.err"; exit 1; }
  grep -q "served by sheaf" "$DIR/preload.err" || { echo "LD_PRELOAD: not taken over"; exit 1; }
  cmp "$DIR/plain.dat" "$DIR/preload.dat"
fi
rm -f "$DIR"/*.dat
echo "interposition: same bytes as the MPI library's MPI-IO"
