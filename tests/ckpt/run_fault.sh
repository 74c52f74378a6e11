#!/bin/sh
# run_fault.sh MODE MPIEXEC PROG DIR NP OPTS FAULT
# MODE stall: a writer stalls past the timeout at step 2; every rank must
#   report the same nonzero code (err.<rank> files: the first failure of
#   write(2) or wait), the job must end, and step 1 must stay the newest
#   complete checkpoint, readable.
# MODE kill: a writer is SIGKILLed in the middle of writing step 2; the job
#   must end with an error (no hang), step 2 is never listed, step 1 readable.
set -u
mode=$1 mpiexec=$2 prog=$3 dir=$4 np=$5 opts=$6 fault=$7
rm -rf "$dir" && mkdir -p "$dir" || exit 1
start=$(date +%s)
SHEAF_CKPT_FAULT=$fault "$mpiexec" -n "$np" "$prog" stall base="$dir" opts="$opts" >"$dir.log" 2>&1
rc=$?
end=$(date +%s)
cat "$dir.log"
echo "run_fault: $mode: job exit status $rc after $((end - start)) s"
if [ "$mode" = kill ]; then
    [ "$rc" -ne 0 ] || { echo "FAIL: a killed writer must end the job with an error"; exit 1; }
else
    r=0 first=
    while [ "$r" -lt "$np" ]; do
        [ -f "$dir/err.$r" ] || { echo "FAIL: rank $r reported nothing"; exit 1; }
        read -r code rest <"$dir/err.$r"
        [ "$code" -ne 0 ] || { echo "FAIL: rank $r got no error"; exit 1; }
        echo "run_fault: rank $r got code $code: $rest"
        # one code for the step on every rank (sheaf_ckpt.h), a timeout's too
        [ -z "$first" ] && first=$code
        [ "$code" -eq "$first" ] || { echo "FAIL: rank $r got $code, rank 0 got $first for the same step"; exit 1; }
        r=$((r + 1))
    done
fi
ls "$dir"
ls "$dir" | grep -q 'step-00000000000000000002$' && { echo "FAIL: step 2 is listed as complete"; exit 1; }
"$mpiexec" -n 1 "$prog" restart base="$dir" wnp="$np" opts="$opts" expect_step=1 || exit 1
echo "run_fault: OK $mode"
