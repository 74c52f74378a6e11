#!/bin/sh
# run_tool_sim.sh SHEAF_FGFS PYTHON3: the tool's JSON stays valid when the
# Bloom filter saturates. 10^5 simulated processes (--sim), 9 in 10 with the
# path on their node-local disk (10^5 x 0.9 distinct names), 1 in 10 on one
# NFS server: the default filter (11,840 bits) is full, the estimate is a
# finite lower bound flagged as such ("servers_lower_bound": true; it used to
# print "servers": inf). At 100 processes (91 names) the filter is not full
# and the estimate is within 15%. Every output is parsed by python3's json.
tool=$1 py=$2
[ -n "$py" ] && "$py" -c 'import json' 2>/dev/null || { echo "SKIP: no python3 to parse the JSON"; exit 77; }
if [ "${FGFS_SIM_MAXP:-100000}" -lt 100000 ]; then
    echo "SKIP: 10^5 simulated processes are not run in this build (FGFS_SIM_MAXP=$FGFS_SIM_MAXP, sanitizers)"; exit 77
fi
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
printf '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n' > "$dir/local.txt"
printf '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:40 / /data rw - nfs srvA:/data rw\n' > "$dir/nfs.txt"
t="$dir/nfs.txt"
for i in 1 2 3 4 5 6 7 8 9; do t="$t,$dir/local.txt"; done
fail=0
run() { # P what python-assertion
    SHEAF_FGFS_HOST=n timeout 250 "$tool" --json --sim "$1" --sim-tables "$t" classify /data/x > "$dir/out.json" ||
        { echo "FAIL: $2: the tool exited $?"; cat "$dir/out.json"; fail=1; return; }
    "$py" - "$dir/out.json" "$3" <<'PY' || { echo "FAIL: $2: $(cat "$dir/out.json")"; fail=1; return; }
import json, math, sys
r = json.load(open(sys.argv[1]))["results"][0]      # strict JSON: no inf, no nan
s = r["servers"]
ok = isinstance(s, (int, float)) and math.isfinite(s) and eval(sys.argv[2], {"r": r, "s": s})
print("ok" if ok else "WRONG", json.dumps(r))
sys.exit(0 if ok else 1)
PY
}
run 100000 "10^5 processes, saturated" \
    'r["class"] == "well-distributed" and r["servers_lower_bound"] is True and s >= 10000 and r["triage_level"] == 2'
run 100 "100 processes, 91 names" \
    'r["class"] == "well-distributed" and r["servers_lower_bound"] is False and abs(s - 91) <= 0.15 * 91'
out=$(SHEAF_FGFS_HOST=n "$tool" --sim 100000 --sim-tables "$t" classify /data/x) || fail=1
case $out in *"servers>="*) echo "ok: text: $out" ;; *) echo "FAIL: text output: $out"; fail=1 ;; esac
"$tool" --sim-tables "$t" classify /data/x >/dev/null 2>&1 && { echo "FAIL: --sim-tables without --sim accepted"; fail=1; }
"$tool" --sim 0 classify / >/dev/null 2>&1 && { echo "FAIL: --sim 0 accepted"; fail=1; }
exit $fail
