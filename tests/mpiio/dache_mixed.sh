#!/bin/sh
# dache_mixed.sh MPIEXEC NP PLAIN LINKED DIR [key=value...]
# The unmodified MPI-IO program mixed_io (nonblocking, split collective,
# shared and ordered calls) on the MPI library's own MPI-IO, then through
# libsheaf-mpiio-pmpi.so on a dache file (SHEAF_MPIIO=dache): both runs check
# every read against their model; here the two files must be equal byte for
# byte, and so must every value read (each rank's log of its reads); sheaf
# must have served the file with no call falling back to the real handle.
set -eu
MPIEXEC=$1 NP=$2 PLAIN=$3 LINKED=$4 DIR=$5
shift 5
mkdir -p "$DIR"
rm -f "$DIR"/plain.dat* "$DIR"/dache.dat*
$MPIEXEC -n "$NP" "$PLAIN" mixed "$DIR/plain.dat" "$@"
SHEAF_MPIIO=dache SHEAF_MPIIO_REPORT=1 $MPIEXEC -n "$NP" "$LINKED" mixed "$DIR/dache.dat" "$@" 2> "$DIR/dache.err" \
  || { cat "$DIR/dache.err"; exit 1; }
cat "$DIR/dache.err"
grep -q "served by sheaf" "$DIR/dache.err" || { echo "interposition did not take the file over"; exit 1; }
grep -q " 0 fell back" "$DIR/dache.err" || { echo "some MPI_File calls fell back to the real handle"; exit 1; }
cmp "$DIR/plain.dat" "$DIR/dache.dat"
r=0
while [ "$r" -lt "$NP" ]; do
  cmp "$DIR/plain.dat.reads.$r" "$DIR/dache.dat.reads.$r"
  [ -s "$DIR/plain.dat.reads.$r" ] || { echo "rank $r logged no reads"; exit 1; }
  r=$((r + 1))
done
echo "dache mixed at $NP ranks: same file and same values read as the MPI library's MPI-IO"
rm -f "$DIR"/plain.dat* "$DIR"/dache.dat*
