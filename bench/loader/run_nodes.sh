#!/usr/bin/env bash
# run_nodes.sh - the multi-node measurements of issue 15 on simulated nodes
# (tests/loader/bed/ldnodes.py: network + mount + UTS namespaces on a bridge,
# one countfs shared file system). See doc/loader-bed.md, "Simulated nodes".
#
#   bench/loader/run_nodes.sh [BUILD_DIR]            (default: build; all experiments)
#   EXPS=counts bench/loader/run_nodes.sh            (one experiment)
#
# Experiments (EXPS, default "counts latency mpmd"):
#   counts   N = NODES_LIST nodes x PPN processes, C and Python drivers, modes
#            plain / pernode (part 1's server on every node, no overlay) /
#            overlay (sheaf-launch --hosts ... --rsh bed-rsh, OVERLAYS="push pull"):
#            operations and bytes at the shared file system
#   latency  LATENCY_US (1000) per metadata operation, C driver, the same
#            modes: time to main of the slowest process against N (plotted)
#   mpmd     even nodes the C driver, odd nodes the Python driver: push vs
#            pull (MPMD_MODES: overlay = sheaf-launch --no-boot, overlay-bed =
#            servers started by the bed, drivers under sheaf-boot; and pernode
#            for reference): RAM-disk bytes per node and time
# A mode the build cannot run (overlay: sheaf-launch without --hosts) is
# reported as MISSING and skipped; rerun the same command after the merge.
#
# Environment (defaults in brackets): NODES_LIST ("1 2 4 8 16"), PPN (2),
#   MODES ("plain pernode overlay"; also overlay-bed), OVERLAYS ("push pull"),
#   MPMD_MODES ("overlay overlay-bed"), DRIVERS ("c py"), LATENCY_US (1000),
#   LAUNCH (rsh: bed-rsh fan-out; mpi: MPICH hydra -launcher ssh
#   -launcher-exec bed-rsh), OVERLAY_LAUNCH (launch line under the overlay,
#   default $LAUNCH), OVERLAY_ARGS (more sheaf-launch options), workload
#   LIBS=100 LIB_DIRS=10 EXT=100 PY=100 PY_DIRS=5, WORK
#   (BUILD/bench-loader/work), OUT (BUILD/bench-loader/nodes.jsonl, appended),
#   PLOT (1), PLOT_PYTHON (/usr/bin/python3, with matplotlib).
# Afterwards: bench/loader/nodes_table.py OUT (table + OUT.csv) and, with PLOT=1,
# OUT-time.png and OUT-ops.png. Needs root, /dev/fuse, unshare/nsenter/ip.
# Exit 0, 1 if a run failed, 77 if the bed cannot run here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
countfs=$build/tests/loader/countfs
launch_exe=$build/tools/loader/sheaf-launch
bed=$root/tests/loader/bed
py=${PYTHON:-python3}
[ -x "$countfs" ] || { echo "run_nodes: $countfs not built (needs libfuse3-dev)" >&2; exit 1; }
"$py" "$bed/ldnodes.py" check || exit 77
EXPS=${EXPS:-"counts latency mpmd"}
NODES_LIST=${NODES_LIST:-"1 2 4 8 16"} PPN=${PPN:-2}
MODES=${MODES:-"plain pernode overlay"} DRIVERS=${DRIVERS:-"c py"}
LAUNCH=${LAUNCH:-rsh} OVERLAY_LAUNCH=${OVERLAY_LAUNCH:-$LAUNCH}
WORK=${WORK:-$build/bench-loader/work}
OUT=${OUT:-$build/bench-loader/nodes.jsonl}
mkdir -p "$(dirname "$OUT")"
"$py" "$bed/genload.py" "$WORK" --libs "${LIBS:-100}" --lib-dirs "${LIB_DIRS:-10}" \
    --ext "${EXT:-100}" --py "${PY:-100}" --py-dirs "${PY_DIRS:-5}" --python "$py" || exit 1
MPMD_MODES=${MPMD_MODES:-"overlay overlay-bed"} OVERLAYS=${OVERLAYS:-"push pull"}
ovs() { case $1 in overlay*) echo "$OVERLAYS" ;; *) echo push ;; esac; }
rc=0
missing=()
one() {   # one run: ldnodes_run.py with the common options + "$@"
  local mode=$1; shift
  local extra=(--mode "$mode" --launch "$LAUNCH")
  [ "$mode" = pernode ] && extra=(--mode pernode --launch rsh)
  if [ "${mode#overlay}" != "$mode" ]; then
    extra=(--mode "$mode" --launch "$OVERLAY_LAUNCH" --overlay-args "${OVERLAY_ARGS:-}")
  fi
  "$py" "$bed/ldnodes_run.py" --countfs "$countfs" --work "$WORK" --json "$OUT" \
      --launch-exe "$launch_exe" --mpiexec "${MPIEXEC:-mpiexec}" --ppn "$PPN" --trace \
      "${extra[@]}" "$@"
  local r=$?
  case $r in
    0) ;;
    3) missing+=("$mode $*") ;;
    77) exit 77 ;;
    *) rc=1 ;;
  esac
}
for exp in $EXPS; do
  echo "== $exp (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  case $exp in
    counts)
      for drv in $DRIVERS; do for mode in $MODES; do for ov in $(ovs "$mode"); do
        for n in $NODES_LIST; do
          one "$mode" --driver "$drv" --nodes "$n" --overlay "$ov"
        done
      done; done; done ;;
    latency)
      for mode in $MODES; do for ov in $(ovs "$mode"); do for n in $NODES_LIST; do
        one "$mode" --driver c --nodes "$n" --latency-us "${LATENCY_US:-1000}" --overlay "$ov"
      done; done; done ;;
    mpmd)
      for n in $NODES_LIST; do
        [ "$n" -ge 2 ] || continue
        one pernode --driver mpmd --nodes "$n"
        for mode in $MPMD_MODES; do
          OVERLAY_LAUNCH=rsh one "$mode" --driver mpmd --nodes "$n" --overlay push
          OVERLAY_LAUNCH=rsh one "$mode" --driver mpmd --nodes "$n" --overlay pull
        done
      done ;;
    *) echo "run_nodes: unknown experiment $exp" >&2; rc=1 ;;
  esac
done
"$py" "$here/nodes_table.py" "$OUT"
if [ "${PLOT:-1}" = 1 ]; then
  "${PLOT_PYTHON:-/usr/bin/python3}" "$here/plot_nodes.py" "$OUT" "${OUT%.jsonl}" || rc=1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "run_nodes: MISSING (not in this build; rerun after the overlay lands): ${#missing[@]} runs"
  printf '  %s\n' "${missing[@]}" | sort -u | head -20
fi
exit $rc
