#!/usr/bin/env bash
# coalescing.sh - small-data benchmark of coalescing I/O (issue 4): N ranks
# (default 16) write S bytes each (default 256) into one container, once with
# one chunk per task (sion_fwrite) and once coalesced (sion_coll_fwrite, mode
# "collective": collectors gather about one file-system block). Prints, side
# by side from the same run: the allocated size of the container (du), its
# apparent size, the chunk space its metadata reserve, and the write time
# (open to close, median/min/max of REPS repetitions, cached and durable).
# Usage: bench/coalescing.sh [path/to/sheaf-bench] [scratch-dir]
# Env: N (16) S (256) REPS (5) MPIEXEC (mpiexec) SHEAF (path to the sheaf tool)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../build/bench/sheaf-bench}
DIR=${2:-$(mktemp -d "${TMPDIR:-/tmp}/sheaf-coalescing.XXXXXX")}
SHEAF=${SHEAF:-$(dirname "$BIN")/../tools/sheaf}
N=${N:-16} S=${S:-256} REPS=${REPS:-5} MPIEXEC=${MPIEXEC:-mpiexec}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
mkdir -p "$DIR"
printf '| variant | sync | allocated (du) | apparent size | chunk space | write time median [min, max] |\n'
printf '|---|---|---|---|---|---|\n'
for sync in cached durable; do
    for v in one-chunk-per-task coalesced; do
        f=$DIR/$v.sion
        extra=""
        [ "$v" = coalesced ] && extra="-M"
        rm -f "$f"
        "$MPIEXEC" -n "$N" "$BIN" -f "$f" -s "$S" -b "$S" -R 0 --reps "$REPS" --"$sync" --sleep-wait $extra \
            --json "$DIR/$v-$sync.json" --quiet >/dev/null
        alloc=$(du -B1 "$f" | cut -f1)
        size=$(stat -c %s "$f")
        chunks=$("$SHEAF" dump --json "$f" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(t["chunksize"] for t in d["tasks"]))')
        t=$(python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["runs"][0]["write"]["time_s"]; print("%.4f s [%.4f, %.4f]" % (w["median"], w["min"], w["max"]))' "$DIR/$v-$sync.json")
        printf '| %s | %s | %s B | %s B | %s B | %s |\n' "$v" "$sync" "$alloc" "$size" "$chunks" "$t"
    done
done
echo "($N ranks x $S B, $REPS repetitions; files and JSON in $DIR)"
