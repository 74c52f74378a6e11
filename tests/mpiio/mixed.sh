#!/bin/sh
# mixed.sh MPIEXEC NP MODE PLAIN LINKED DIR [key=value...]
# The unmodified MPI-IO program mixed_io (independent, collective,
# nonblocking, split collective, shared and ordered calls) on the MPI
# library's own MPI-IO, then through libsheaf-mpiio-pmpi.so with
# SHEAF_MPIIO=MODE (dache, pfr, nocache): both runs check every read against
# their model; here the two files must be equal byte for byte, and so must
# every value read (each rank's log of its reads); sheaf must have served the
# file on every rank with no call falling back to the real handle, and the
# per-call log (SHEAF_MPIIO_VERBOSE) must show sheaf serving each kind of call.
set -eu
MPIEXEC=$1 NP=$2 MODE=$3 PLAIN=$4 LINKED=$5 DIR=$6
shift 6
mkdir -p "$DIR"
rm -f "$DIR"/plain.dat* "$DIR"/sheaf.dat*
$MPIEXEC -n "$NP" "$PLAIN" mixed "$DIR/plain.dat" "$@"
SHEAF_MPIIO=$MODE SHEAF_MPIIO_REPORT=1 SHEAF_MPIIO_VERBOSE=1 $MPIEXEC -n "$NP" "$LINKED" mixed "$DIR/sheaf.dat" "$@" \
  2> "$DIR/sheaf.err" || { cat "$DIR/sheaf.err"; exit 1; }
grep -v ": served by sheaf (" "$DIR/sheaf.err" || true
n=$(grep -c "sheaf.dat served by sheaf (.*, 0 fell back" "$DIR/sheaf.err" || true)
[ "$n" -eq "$NP" ] || { echo "$MODE: $n of $NP ranks report the file served with 0 calls falling back"; exit 1; }
# every kind of data call was served by sheaf (one log line per call)
for call in MPI_File_write_at_all MPI_File_read_at MPI_File_write MPI_File_iwrite_at MPI_File_iread_at \
  MPI_File_iwrite MPI_File_iread_all MPI_File_iwrite_at_all MPI_File_write_all_begin MPI_File_write_all_end \
  MPI_File_read_at_all_begin MPI_File_read_at_all_end MPI_File_write_shared MPI_File_iread_shared \
  MPI_File_write_ordered MPI_File_read_ordered MPI_File_write_ordered_begin MPI_File_seek_shared \
  MPI_File_get_position_shared; do
  grep -q ": $call(.*): served by sheaf (" "$DIR/sheaf.err" || { echo "$MODE: no log line says sheaf served $call"; exit 1; }
done
echo "$MODE: $(grep -c ': served by sheaf (' "$DIR/sheaf.err") data calls served by sheaf on $NP ranks, none passed to the MPI library"
cmp "$DIR/plain.dat" "$DIR/sheaf.dat"
r=0
while [ "$r" -lt "$NP" ]; do
  cmp "$DIR/plain.dat.reads.$r" "$DIR/sheaf.dat.reads.$r"
  [ -s "$DIR/plain.dat.reads.$r" ] || { echo "rank $r logged no reads"; exit 1; }
  r=$((r + 1))
done
echo "$MODE mixed at $NP ranks: same file and same values read as the MPI library's MPI-IO"
rm -f "$DIR"/plain.dat* "$DIR"/sheaf.dat*
