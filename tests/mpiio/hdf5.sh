#!/bin/sh
# hdf5.sh MPIEXEC PLAIN LINKED PRELOAD_LIB DIR MODE [H5DUMP]
# Parallel HDF5 (its MPI-IO driver, H5Pset_fapl_mpio) over the interposition
# library: tests/mpiio/hdf5_mpio.c at 2 and 4 ranks, once on the MPI library's
# own MPI-IO (PLAIN), once through libsheaf-mpiio-pmpi.so (LINKED: linked in
# front of the MPI library; with MODE=preload also PLAIN under LD_PRELOAD),
# taken over by the MPI_Info hint sheaf_cache=pfr ("hint") or by SHEAF_MPIIO=pfr.
# Asserts: every run reads back every value right (the program checks them);
# sheaf took the file over (both opens report collective calls served by sheaf,
# counted, > 0); the two files are byte-identical, or else h5dump prints the
# same for both and every byte where they differ is 0 in sheaf's file (ROMIO's
# two-phase write leaves stale bytes of its collective buffer in holes past the
# end of file that HDF5 never references; sheaf's sieving reads zeros there).
set -eu
MPIEXEC=$1 PLAIN=$2 LINKED=$3 LIB=$4 DIR=$5 MODE=$6 H5DUMP=${7:-}
mkdir -p "$DIR"
rm -f "$DIR"/*.h5

# took_over ERRFILE: both opens of the file were served by sheaf, with collective calls
took_over() {
  cat "$1"
  n=$(grep -c "served by sheaf" "$1" || true)
  [ "$n" -eq 2 ] || { echo "FAIL: expected 2 taken-over opens, got $n"; exit 1; }
  if grep "served by sheaf" "$1" | grep -q "(0 collective calls"; then
    echo "FAIL: an open was taken over but sheaf served no collective call"; exit 1
  fi
}

# same FILE_A FILE_B: byte-identical, or the same to h5dump with zeros where sheaf's differs
same() {
  if cmp -s "$1" "$2"; then
    echo "  $(basename "$2"): byte-identical to $(basename "$1")"
    return 0
  fi
  ndiff=$(cmp -l "$1" "$2" | wc -l)
  nonzero=$(cmp -l "$1" "$2" | awk '$3 != 0' | wc -l)
  [ "$nonzero" -eq 0 ] || { echo "FAIL: $2: $nonzero differing bytes are not 0 in sheaf's file"; cmp -l "$1" "$2" | head; exit 1; }
  if [ -z "$H5DUMP" ]; then
    echo "FAIL: $1 and $2 differ in $ndiff bytes and h5dump is not there to compare the contents"; exit 1
  fi
  "$H5DUMP" "$1" | sed 1d > "$1.dump"
  "$H5DUMP" "$2" | sed 1d > "$2.dump"
  cmp "$1.dump" "$2.dump" || { echo "FAIL: h5dump differs"; diff "$1.dump" "$2.dump" | head -20; exit 1; }
  echo "  $(basename "$2"): h5dump identical to $(basename "$1"); $ndiff bytes differ, all 0 in sheaf's file (unreferenced by HDF5)"
}

for np in 2 4; do
  $MPIEXEC -n $np "$PLAIN" "$DIR/plain$np.h5"
  # linked in front of MPI; np 2 by the info hint, np 4 by the environment
  if [ $np -eq 2 ]; then how="hint"; envv=""; else how=""; envv="SHEAF_MPIIO=pfr"; fi
  $MPIEXEC -n $np env $envv SHEAF_MPIIO_REPORT=1 "$LINKED" "$DIR/linked$np.h5" $how 2> "$DIR/linked$np.err" ||
    { cat "$DIR/linked$np.err"; exit 1; }
  took_over "$DIR/linked$np.err"
  same "$DIR/plain$np.h5" "$DIR/linked$np.h5"
  if [ "$MODE" = preload ]; then
    if [ $np -eq 2 ]; then how=""; envv="SHEAF_MPIIO=pfr"; else how="hint"; envv=""; fi
    $MPIEXEC -n $np env LD_PRELOAD="$LIB" $envv SHEAF_MPIIO_REPORT=1 "$PLAIN" "$DIR/preload$np.h5" $how \
      2> "$DIR/preload$np.err" || { cat "$DIR/preload$np.err"; exit 1; }
    took_over "$DIR/preload$np.err"
    same "$DIR/plain$np.h5" "$DIR/preload$np.h5"
  fi
done
# without hint or environment the interposition library leaves HDF5's file to MPI
$MPIEXEC -n 2 env SHEAF_MPIIO_REPORT=1 "$LINKED" "$DIR/off2.h5" 2> "$DIR/off2.err"
! grep -q "served by sheaf" "$DIR/off2.err" || { echo "FAIL: took a file over without being asked"; exit 1; }
cmp "$DIR/plain2.h5" "$DIR/off2.h5"
rm -f "$DIR"/*.h5 "$DIR"/*.dump
echo "hdf5: parallel HDF5 through sheaf: all data right, same files as the MPI library's MPI-IO"
