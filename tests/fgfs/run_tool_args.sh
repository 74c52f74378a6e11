#!/bin/sh
# run_tool_args.sh SHEAF_FGFS: the tool's argument rules on one process:
# "--" ends the options, so paths that start with "-" (or equal an option)
# are queried, not parsed; bad usage exits 2 with the usage text.
tool=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/-v" "$dir/--json" || exit 1
cd "$dir" || exit 1
out=$("$tool" --json classify -- -v --json 2>&1) || { echo "FAIL: classify -- -v --json: exit $? ($out)"; exit 1; }
for p in '"path": "-v"' '"path": "--json"'; do
    case $out in *"$p"*) ;; *) echo "FAIL: no $p in: $out"; exit 1 ;; esac
done
"$tool" classify >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: classify without a path exited $rc, expected 2"; exit 1; }
"$tool" --bogus classify . >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: an unknown option exited $rc, expected 2"; exit 1; }
echo "ok: '--' ends the options; usage errors exit 2"
