#!/usr/bin/env bash
# run_plain.sh - plain loading (or loading under a launcher wrapper) on the
# loader measurement bed: mounts countfs over a generated Pynamic-like tree,
# runs the C and Python drivers at 1, 4 and 16 processes, as plain background
# processes and under this build's MPI launcher, and prints the operations
# that reached the shared tree and the times. See doc/loader-bed.md.
#
#   bench/loader/run_plain.sh [BUILD_DIR]          (default: build)
#
# Environment (defaults in brackets):
#   NPS="1 4 16"  DRIVERS="c py"  LAUNCHES="plain mpi"
#   LAUNCH_WRAPPER=""     put in front of the launch line, e.g.
#                         LAUNCH_WRAPPER="build/sheaf-launch --" measures
#                         `sheaf-launch -- sheaf-mpiexec -n 16 cdriver`
#   ENV_INHERIT=0         1: LD_LIBRARY_PATH/PYTHONPATH in the environment of
#                         the whole launch line (else only the drivers get them)
#   LATENCY_US=0 READ_LATENCY_US=0   injected latency per metadata / READ request
#   KEEP_CACHE=0          1: countfs lets the kernel keep file pages across opens
#   NODES=0               K>0: the processes spread over K simulated nodes (UTS
#                         namespaces ldbnode0..K-1, blocks of P/K processes)
#   LIBS=100 LIB_DIRS=10 EXT=100 PY=100 PY_DIRS=5   workload size
#   WORK=BUILD_DIR/bench-loader/work   the generated tree (kept, reused)
#   OUT=BUILD_DIR/bench-loader/results.jsonl   one JSON record per run (appended)
#   PLOT=0                1: bench/loader/plot.py OUT afterwards (PNG next to OUT;
#                         run by PLOT_PYTHON, default /usr/bin/python3 with matplotlib)
# Needs root and /dev/fuse (mounts FUSE). Exit 0, or 1 if a run failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
countfs=$build/tests/loader/countfs
bed=$root/tests/loader/bed
[ -x "$countfs" ] || { echo "run_plain: $countfs not built (needs libfuse3-dev)" >&2; exit 1; }
NPS=${NPS:-"1 4 16"} DRIVERS=${DRIVERS:-"c py"} LAUNCHES=${LAUNCHES:-"plain mpi"}
WORK=${WORK:-$build/bench-loader/work}
OUT=${OUT:-$build/bench-loader/results.jsonl}
py=${PYTHON:-python3}
mkdir -p "$(dirname "$OUT")"
"$py" "$bed/genload.py" "$WORK" --libs "${LIBS:-100}" --lib-dirs "${LIB_DIRS:-10}" \
    --ext "${EXT:-100}" --py "${PY:-100}" --py-dirs "${PY_DIRS:-5}" --python "$py"
opts=(--countfs "$countfs" --work "$WORK" --json "$OUT"
      --latency-us "${LATENCY_US:-0}" --read-latency-us "${READ_LATENCY_US:-0}")
[ "${KEEP_CACHE:-0}" = 1 ] && opts+=(--keep-cache)
[ "${ENV_INHERIT:-0}" = 1 ] && opts+=(--env-inherit)
[ -n "${LAUNCH_WRAPPER:-}" ] && opts+=(--wrapper "$LAUNCH_WRAPPER")
rc=0
for drv in $DRIVERS; do
  for launch in $LAUNCHES; do
    extra=()
    if [ "$launch" = mpi ]; then
      if [ ! -x "$build/sheaf-mpiexec" ]; then
        echo "run_plain: no $build/sheaf-mpiexec (MPI off): mpi launch skipped"; continue
      fi
      extra=(--launch mpi --mpiexec "$build/sheaf-mpiexec")
    fi
    [ "${NODES:-0}" -gt 0 ] && extra+=(--nodes "$NODES")
    for np in $NPS; do
      "$py" "$bed/ldbed_run.py" "${opts[@]}" "${extra[@]}" --driver "$drv" --np "$np" || rc=1
    done
  done
done
echo "run_plain: records appended to $OUT"
"$py" "$here/summarize.py" "$OUT"
if [ "${PLOT:-0}" = 1 ]; then
  "${PLOT_PYTHON:-/usr/bin/python3}" "$here/plot.py" "$OUT" "${OUT%.jsonl}.png"
fi
exit $rc
