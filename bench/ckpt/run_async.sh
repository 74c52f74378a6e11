#!/bin/sh
# run_async.sh BUILD_DIR OUT_DIR TAG - issue 31's measurement (bench/RESULTS.md,
# "Checkpoints: asynchrony"): 16 ranks, np:ng = 8:1, coio and rbio side by side
# in one run, 3 consecutive checkpoints (no barrier between them) after a
# compute phase of 1 s and of 3 s that makes no MPI call; rbio with the
# default hand-off (auto: shared memory, writers on the workers' node) and,
# for comparison, handoff=send (MPI_Isend; plain MPI_Init: no progress
# thread, the data move when the workers next call MPI - the old behaviour).
# TAG names the MPI (mpich, openmpi); BUILD_DIR's sheaf-mpiexec launches.
set -eu
. "$(dirname "$0")/../tee_status.sh"
b=${1:?build dir}
out=${2:?output dir}
tag=${3:?tag (mpich, openmpi)}
mkdir -p "$out"
run() { # name args...
    name=$1
    shift
    rm -f "$out/$name.log" "$out/$name.csv"
    echo "== $name: $(date -u +%FT%TZ) sheaf-mpiexec -n 16 sheaf-ckpt-bench $*" | tee "$out/$name.log"
    tee_status "$out/$name.log" sh -c 'exec "$@" 2>&1' sh \
        "$b/sheaf-mpiexec" -n 16 "$b/bench/ckpt/sheaf-ckpt-bench" --dir "$out/work" --csv "$out/$name.csv" "$@"
    cat "$out/$name.csv".* >"$out/$name.csv" && rm -f "$out/$name.csv".*
    rm -rf "$out/work"
}
for s in 1 3; do
    run "async_np16_8to1_${s}s_${tag}" --npng 8 --nf 1 --steps 3 --reps 1 --compute-ms "${s}000" --durable 1 --verify
done
run "async_np16_8to1_3s_send_${tag}" --npng 8 --nf 1 --steps 3 --reps 1 --compute-ms 3000 --durable 1 --verify \
    --handoff send
