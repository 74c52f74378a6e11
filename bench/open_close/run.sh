#!/bin/sh
# bench/open_close/run.sh - parallel open + close (write and read, 1 KiB per
# rank, one physical file) timed for sheaf and, when SIONLIB_PREFIX names a
# SIONlib installation, for SIONlib built from the same source, side by side
# in one run (issue 19).
#
#   SIONLIB_PREFIX=/path/to/sionlib bench/open_close/run.sh [BUILD] [OUTDIR]
#
# BUILD: sheaf's build tree (default ./build; its sheaf-mpiexec starts the
# ranks, so SIONlib must be built with the same MPI). Environment: NP (rank
# counts, default "8 16"), ROUNDS (default 3), REPS (timed repetitions per
# launch, default 5), NUMFILES (default 1), EXTRA ("name=program ..." more
# builds of open_close.c to run alongside, e.g. an older sheaf; a name=program
# may be a script that sets SHEAF_COMM_CACHE=0 and execs sheaf-open-close).
# The first open of every launch is its own row (write-first, read-first: one
# sample per round), the REPS repeated opens of the same communicator and
# file split the write and read rows. Each round runs, for every rank
# count, sheaf then SIONlib (write, then read of what it wrote), so both see
# the same machine load; every repetition is one line of OUTDIR/raw.txt and
# the summary (median and minimum of all repetitions, milliseconds, the
# slowest rank's open+transfer+close) goes to OUTDIR/summary.txt and stdout.
# SIONlib itself is never built here: only this benchmark's one source file
# is compiled against the installation's sionconfig.
set -eu
BUILD=${1:-build}
OUT=${2:-bench/open_close/out}
NP=${NP:-"8 16"}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-5}
NUMFILES=${NUMFILES:-1}
SHEAF_BIN=$BUILD/bench/open_close/sheaf-open-close
LAUNCH=$BUILD/sheaf-mpiexec
[ -x "$SHEAF_BIN" ] || { echo "no $SHEAF_BIN: build the tree first" >&2; exit 1; }
[ -x "$LAUNCH" ] || { echo "no $LAUNCH (sheaf's MPI launcher)" >&2; exit 1; }
SRC=$(dirname "$0")/open_close.c
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
impls=sheaf
if [ -n "${SIONLIB_PREFIX:-}" ]; then
    S=$SIONLIB_PREFIX/bin/sionconfig
    # shellcheck disable=SC2046
    mpicc -O2 $($S --mpi --cflags) "$SRC" -o "$OUT/sionlib-open-close" $($S --mpi --libs)
    impls="sheaf sionlib"
else
    echo "SIONLIB_PREFIX not set: the SIONlib column is skipped" >&2
fi
for e in ${EXTRA:-}; do
    impls="$impls ${e%%=*}"
done
: > "$OUT/raw.txt"
for round in $(seq 1 "$ROUNDS"); do
    for np in $NP; do
        for impl in $impls; do
            bin=$SHEAF_BIN
            [ "$impl" = sionlib ] && bin=$OUT/sionlib-open-close
            for e in ${EXTRA:-}; do
                [ "$impl" = "${e%%=*}" ] && bin=${e#*=}
            done
            dir=$(mktemp -d "$OUT/$impl.XXXXXX")
            for op in write read; do
                # no pipe: a failing run must stop the script (set -e), not vanish into sed
                "$LAUNCH" -n "$np" "$bin" "$dir" "$op" "$REPS" "$NUMFILES" >"$OUT/run.tmp"
                sed "s/^/$impl $round /" "$OUT/run.tmp" >>"$OUT/raw.txt"
            done
            rm -rf "$dir"
        done
    done
done
rm -f "$OUT/run.tmp"
# columns of raw.txt: impl round op np milliseconds
awk '{ k = $1 " " $3 " " $4; v[k] = v[k] " " $5 }
     END { for (k in v) print k, v[k] }' "$OUT/raw.txt" | sort |
python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    f = line.split()
    rows[(f[1], int(f[2]), f[0])] = [float(x) for x in f[3:]]
print("%-6s %3s  %-8s %5s %9s %9s  %s" % ("op", "np", "impl", "n", "median", "min", "median vs SIONlib"))
for (op, np_, impl), v in sorted(rows.items()):
    ref = rows.get((op, np_, "sionlib"))
    ratio = "%.2fx" % (statistics.median(v) / statistics.median(ref)) if ref and impl != "sionlib" else ""
    print("%-6s %3d  %-8s %5d %9.1f %9.1f  %s" % (op, np_, impl, len(v), statistics.median(v), min(v), ratio))
' >"$OUT/summary.txt"
cat "$OUT/summary.txt"
