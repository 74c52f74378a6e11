#!/bin/sh
# run.sh BUILD_DIR OUT_DIR - the checkpoint measurements of bench/RESULTS.md
# ("Checkpoints"): coio vs rbio side by side at 16 ranks (np:ng = 8:1,
# durable and cached), an np:ng sweep and an nf sweep. Files go to
# OUT_DIR/work (removed afterwards); logs and per-rank CSVs to OUT_DIR.
set -eu
# tee_status FILE CMD... (bench/tee_status.sh): CMD's output shown and kept, its exit status
. "$(dirname "$0")/../tee_status.sh"
b=${1:?build dir}
out=${2:?output dir}
mkdir -p "$out"; rm -f "$out"/*.log "$out"/*.csv
run() { # name np args...
    name=$1 np=$2
    shift 2
    echo "== $name: sheaf-mpiexec -n $np sheaf-ckpt-bench $*" | tee "$out/$name.log"
    tee_status "$out/$name.log" sh -c 'exec "$@" 2>&1' sh \
        "$b/sheaf-mpiexec" -n "$np" "$b/bench/ckpt/sheaf-ckpt-bench" --dir "$out/work" --csv "$out/$name.csv" "$@"
    cat "$out/$name.csv".* >"$out/$name.csv" && rm -f "$out/$name.csv".*
    rm -rf "$out/work"
}
# the issue's criterion: 16 ranks, 8:1, the same data (NekCEM's 2.38 MB per rank)
run np16_8to1_durable 16 --npng 8 --nf 1 --steps 4 --reps 3 --compute-ms 1000 --durable 1 --verify
run np16_8to1_cached 16 --npng 8 --nf 1 --steps 4 --reps 2 --compute-ms 1000 --durable 0 --verify
# np:ng sweep (rbio nf = ng) and nf sweep (coio nf files, rbio nf <= ng)
for k in 4 16; do
    run np16_${k}to1_durable 16 --npng "$k" --nf 16 --steps 3 --reps 1 --compute-ms 1000 --durable 1
done
for nf in 2; do
    run np16_8to1_nf${nf}_durable 16 --npng 8 --nf "$nf" --steps 3 --reps 1 --compute-ms 1000 --durable 1
done
# all four strategies once, 8 ranks
run np8_all_durable 8 --npng 4 --nf 2 --steps 3 --reps 1 --compute-ms 500 --durable 1 --strategies fpp,coio,rbio,sion --verify
