#!/bin/sh
# expect_output.sh PATTERN COMMAND [ARGS...]
#
# Runs COMMAND, shows its output (stdout and stderr, as it comes) and passes
# only when COMMAND exits 0 AND its output matches PATTERN (an extended regular
# expression; newlines count as spaces, so ".*" may span lines as in CMake's
# PASS_REGULAR_EXPRESSION). It replaces PASS_REGULAR_EXPRESSION, which makes
# ctest ignore the exit status (a test printing "OK" and exiting 1 passed).
#
# Exit status: COMMAND's own when it is not 0 (77, a skip, stays 77); 1 when
# COMMAND exited 0 without printing PATTERN; 0 otherwise.
if [ $# -lt 2 ]; then
    echo "expect_output.sh: usage: expect_output.sh PATTERN COMMAND [ARGS...]" >&2
    exit 2
fi
pattern=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-expect.XXXXXX") || {
    echo "expect_output.sh: cannot create a temporary directory" >&2
    exit 2
}
trap 'rm -rf "$tmp"' EXIT
# the command's status goes through a file: a pipeline's status is tee's
{ "$@" 2>&1; echo $? >"$tmp/rc"; } | tee "$tmp/out"
rc=$(cat "$tmp/rc" 2>/dev/null)
if [ -z "$rc" ]; then
    echo "expect_output.sh: FAIL: no exit status recorded for: $*" >&2
    exit 1
fi
if [ "$rc" -eq 77 ]; then
    echo "expect_output.sh: SKIP: command exited 77: $1" >&2
    exit 77
fi
if [ "$rc" -ne 0 ]; then
    echo "expect_output.sh: FAIL: command exited $rc (whatever it printed): $1" >&2
    exit "$rc"
fi
if ! tr '\n' ' ' <"$tmp/out" | grep -Eq -- "$pattern"; then
    echo "expect_output.sh: FAIL: exit 0 but the output lacks /$pattern/: $1" >&2
    exit 1
fi
exit 0
