#!/bin/sh
# run_bed.sh BED FUSESRV DIR NODES PPN MPIEXEC... - set up the namespace test
# bed, run the MPI command, always tear down. Exit 77 (skipped) with the
# reason when namespaces or FUSE are not permitted.
bed=$1 srv=$2 dir=$3 nodes=$4 ppn=$5; shift 5
"$bed" down "$dir" 2>/dev/null
"$bed" up "$dir" "$nodes" "$srv"
rc=$?
if [ $rc -ne 0 ]; then
    "$bed" down "$dir" 2>/dev/null
    exit $rc
fi
"$@"
rc=$?
"$bed" down "$dir"
exit $rc
