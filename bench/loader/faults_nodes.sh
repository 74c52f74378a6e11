#!/usr/bin/env bash
# faults_nodes.sh - issue 15's fault items on simulated nodes (doc/loader-bed.md
# section 7):
#   1. a peer with a wrong secret: the bed starts the overlay (one
#      sheaf-ld-server per node, --mode overlay-bed) and, once it is up, a
#      peer from the front end does the handshake with a random key against
#      the root: refused, counted (net_refused), logged;
#   2. one node's load server killed mid-start: N nodes x P, C driver, with
#      LATENCY_US per metadata operation (so the start takes seconds), under
#      `sheaf-launch --hosts ... --rsh bed-rsh --overlay MODE`; the
#      sheaf-ld-server of node KILL_NODE is SIGKILLed KILL_AFTER seconds after
#      the launch. The job must complete (every driver prints its sums),
#      slower than the same run without the kill, with a message.
#
#   bench/loader/faults_nodes.sh [BUILD_DIR]
# Environment: NODES (4), PPN (2), LATENCY_US (1000), KILL_NODE (1),
#   KILL_AFTER (1.0), MODE (pull), LIBS/LIB_DIRS (100/10), WORK, OUT
#   (BUILD/bench-loader/faults.jsonl). Prints one line per run and the
#   messages; exit 0 when both behave as required, 1 otherwise, 3 when the
#   overlay is not in this build, 77 when the bed cannot run here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bed=$root/tests/loader/bed
py=${PYTHON:-python3}
"$py" "$bed/ldnodes.py" check || exit 77
WORK=${WORK:-$build/bench-loader/work}
OUT=${OUT:-$build/bench-loader/faults.jsonl}
NODES=${NODES:-4} PPN=${PPN:-2} MODE=${MODE:-pull} KILL_NODE=${KILL_NODE:-1} KILL_AFTER=${KILL_AFTER:-1.0}
"$py" "$bed/genload.py" "$WORK" --libs "${LIBS:-100}" --lib-dirs "${LIB_DIRS:-10}" \
    --ext "${EXT:-100}" --py "${PY:-100}" --py-dirs "${PY_DIRS:-5}" --python "$py" >/dev/null || exit 1
common=(--countfs "$build/tests/loader/countfs" --work "$WORK" --json "$OUT"
        --launch-exe "$build/tools/loader/sheaf-launch" --driver c --nodes "$NODES" --ppn "$PPN")
rc=0
echo "== 1. a peer with a wrong secret (load average $(cut -d' ' -f1 /proc/loadavg))"
"$py" "$bed/ldnodes_run.py" "${common[@]}" --mode overlay-bed --overlay "$MODE" --wrong-peer
r=$?; [ $r -eq 3 ] || [ $r -eq 77 ] && exit $r
[ $r -eq 0 ] || rc=1
echo "== 2. node $KILL_NODE's server killed ${KILL_AFTER:-1.0} s after the launch, ${LATENCY_US:-1000} us per metadata op"
lat=(--latency-us "${LATENCY_US:-1000}" --mode overlay --overlay "$MODE")
"$py" "$bed/ldnodes_run.py" "${common[@]}" "${lat[@]}" || rc=1
"$py" "$bed/ldnodes_run.py" "${common[@]}" "${lat[@]}" --kill-node "${KILL_NODE:-1}" \
    --kill-after "${KILL_AFTER:-1.0}" || rc=1
"$py" - "$OUT" <<'EOF' || rc=1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
wp = [r for r in recs if r["faults"].get("wrong_peer_refused") is not None][-1]
f = wp["faults"]
ok1 = f["wrong_peer_refused"] and f["net_refused"] == 1 and "refused peer" in f["server_log"]
print("wrong secret: refused=%s net_refused=%d message: %s"
      % (f["wrong_peer_refused"], f["net_refused"], f["server_log"].strip()))
lat = [r for r in recs if r["mode"] == "overlay" and r["latency_us"] > 0]
kill = [r for r in lat if r["faults"].get("killed_node") is not None][-1]
base = [r for r in lat if r["faults"].get("killed_node") is None][-1]
kf = kill["faults"]
msgs = [l for l in kill["stderr_tail"].splitlines() if "sheaf-ld" in l or "fall back" in l]
ok2 = kill["ok"] and kf.get("killed_pids")
print("kill: node %s's server (pids %s) killed at %.2f s; job %s; time to main max %.2f s "
      "(without the kill %.2f s); shared-FS meta ops %d (without %d)"
      % (kf["killed_node"], kf.get("killed_pids"), kf["killed_at_s"],
         "completed, every driver printed its sums" if kill["ok"] else "FAILED",
         kill["t_main_max_s"] or -1, base["t_main_max_s"] or -1,
         kill["counts"]["total"]["meta"], base["counts"]["total"]["meta"]))
print("messages:\n  " + "\n  ".join(msgs[-6:]))
sys.exit(0 if ok1 and ok2 else 1)
EOF
exit $rc
