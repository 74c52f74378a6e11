#!/bin/sh
# run_bed_tables.sh BED FUSESRV DIR NODES CHECK - set up NODES namespace nodes,
# capture each node's /proc/self/mountinfo from inside it, check the
# classifications with 1 and 2 in-process processes per node, tear down.
# Exit 77 (skipped) with the reason when namespaces or FUSE are not permitted.
bed=$1 srv=$2 dir=$3 nodes=$4 check=$5
"$bed" down "$dir" 2>/dev/null
"$bed" up "$dir" "$nodes" "$srv"
rc=$?
[ $rc -eq 0 ] || { "$bed" down "$dir" 2>/dev/null; exit $rc; }
k=0
while [ $k -lt "$nodes" ]; do
    PMI_RANK=$k "$bed" run "$dir" 1 -- sh -c "hostname; cat /proc/self/mountinfo" > "$dir/node$k.out" || rc=1
    [ "$(head -n1 "$dir/node$k.out")" = "node$k" ] || { echo "node$k has host name $(head -n1 "$dir/node$k.out")"; rc=1; }
    tail -n +2 "$dir/node$k.out" > "$dir/node$k.mountinfo"
    k=$((k + 1))
done
[ $rc -eq 0 ] && "$check" "$nodes" 1 "$dir/mnt" "$dir" && "$check" "$nodes" 2 "$dir/mnt" "$dir"
rc=$?
"$bed" down "$dir"
exit $rc
