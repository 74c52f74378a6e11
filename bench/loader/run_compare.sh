#!/usr/bin/env bash
# run_compare.sh - plain loading and loading under a launcher wrapper side by
# side on the loader bed (same tree, same process counts, same countfs
# settings): runs run_plain.sh without and with LAUNCH_WRAPPER, then prints
# both in one table.
#
#   LAUNCH_WRAPPER="build/tools/loader/sheaf-launch --" bench/loader/run_compare.sh [BUILD_DIR]
#
# All other variables as for run_plain.sh (NPS, DRIVERS, LAUNCHES, LATENCY_US, ...),
# except ENV_INHERIT, 1 here by default: the search paths are exported to the
# whole launch line, so it reads `WRAPPER mpiexec -n P cdriver` (the form a
# launcher that rewrites the line expects: the executable right after the
# launcher's options, not `env VAR=... cdriver`) in both runs alike.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LAUNCH_WRAPPER:?set LAUNCH_WRAPPER to the launcher to compare, e.g. \"sheaf-launch --\"}"
build=$(cd "${1:-$here/../../build}" && pwd)
export OUT=${OUT:-$build/bench-loader/compare.jsonl}
export ENV_INHERIT=${ENV_INHERIT:-1}
rc=0
LAUNCH_WRAPPER= "$here/run_plain.sh" "$build" > /dev/null || rc=1
"$here/run_plain.sh" "$build" > /dev/null || rc=1
"${PYTHON:-python3}" "$here/summarize.py" "$OUT"
exit $rc
