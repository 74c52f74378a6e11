#!/bin/sh
# smoke.sh - quick check of sheaf-bench: every mode at 2 ranks with tiny
# sizes, cached and durable, read-back verified; plus one deliberately
# corrupted task-local file that must be reported as a mismatch (exit 3).
# Usage: bench/smoke.sh [path/to/sheaf-bench] [scratch-dir]
# Exits non-zero on any failure or checksum mismatch.
set -u
BIN=${1:-$(dirname "$0")/../build-bench/bench/sheaf-bench}
DIR=${2:-$(mktemp -d "${TMPDIR:-/tmp}/sheaf-smoke.XXXXXX")}
MPIEXEC=${MPIEXEC:-mpiexec}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
mkdir -p "$DIR"
fail=0
run() { # run NAME ARGS...
    name=$1; shift
    if out=$($MPIEXEC -n 2 "$BIN" -f "$DIR/smoke.sion" -s 300k -b 64k --reps 2 -X "$@" 2>&1); then
        if echo "$out" | grep -q "mismatches [1-9]"; then
            echo "FAIL $name: mismatches"; echo "$out"; fail=1
        else
            echo "ok   $name"
        fi
    else
        echo "FAIL $name (exit $?)"; echo "$out"; fail=1
    fi
}
run container           --mode=container
run container-durable   --mode=container --durable
run container-posix     --mode=container -L -n 2
run container-coll      --mode=container -M -m
run container-rank      -T 1 --durable
run tasklocal           -T 3
run tasklocal-durable   -T 3 --durable
run mpiio-ind           -T 2 --durable
run mpiio-coll          --mode=mpiio-coll
run openclose           --mode=openclose
run manytask            --mode=manytask --threads 4 -s 4k -b 1k
run manytask-durable    --mode=manytask --threads 4 -s 4k -b 4k --durable
run json                --mode=container --json "$DIR/smoke.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$DIR/smoke.json" 2>/dev/null || { echo "FAIL json not valid"; fail=1; }

# negative check: a corrupted byte must be counted and give exit status 3
$MPIEXEC -n 2 "$BIN" -T 3 -f "$DIR/neg" -s 256k -b 64k -R 0 --reps 1 >/dev/null 2>&1
printf 'X' | dd of="$DIR/neg.tasks/task.000001" bs=1 seek=70000 conv=notrunc 2>/dev/null
$MPIEXEC -n 2 "$BIN" -T 3 -f "$DIR/neg" -s 256k -b 64k -W 0 --reps 1 -X >"$DIR/neg.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && grep -q "mismatches 1" "$DIR/neg.out"; then echo "ok   corrupted byte detected"
else echo "FAIL corrupted byte not detected (exit $rc)"; cat "$DIR/neg.out"; fail=1; fi
rm -rf "$DIR/neg.out" "$DIR/neg.tasks" "$DIR/smoke.json"
rmdir "$DIR" 2>/dev/null
[ $fail -eq 0 ] && echo "smoke: all passed"
exit $fail
