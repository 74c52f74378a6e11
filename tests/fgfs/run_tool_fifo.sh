#!/bin/sh
# run_tool_fifo.sh SHEAF_FGFS: a FIFO named as the mount table
# (SHEAF_FGFS_MOUNTINFO) or as the site parameters (SHEAF_FGFS_SITE,
# --site) must be refused at once with a message naming it, by classify and
# by select - never opened for a read that waits for a writer. Each run is
# bounded by `timeout 20`: exit 124 there is the old hang.
tool=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo" || { echo "SKIP: mkfifo failed"; exit 77; }
fail=0
check() { # what rc-want env... -- args
    what=$1; shift
    out=$(env "$@" 2>&1); rc=$?
    if [ $rc -eq 124 ]; then echo "FAIL: $what: hung (killed after 20 s)"; fail=1; return; fi
    if [ $rc -ne 1 ]; then echo "FAIL: $what: exit $rc, expected 1 ($out)"; fail=1; return; fi
    case $out in *"$dir/fifo"*FIFO*) echo "ok: $what: $out" ;;
        *) echo "FAIL: $what: message does not name the FIFO: $out"; fail=1 ;; esac
}
check "MOUNTINFO classify" SHEAF_FGFS_MOUNTINFO="$dir/fifo" timeout 20 "$tool" classify /
check "MOUNTINFO select" SHEAF_FGFS_MOUNTINFO="$dir/fifo" timeout 20 "$tool" select --bytes 1K
check "SITE select" SHEAF_FGFS_SITE="$dir/fifo" timeout 20 "$tool" select --bytes 1K
check "--site select" timeout 20 "$tool" --site "$dir/fifo" select --bytes 1K
# a directory is no mount table either (EINVAL naming it, not "read failed")
out=$(SHEAF_FGFS_MOUNTINFO="$dir" timeout 20 "$tool" classify / 2>&1); rc=$?
case "$rc:$out" in 1:*"$dir: the mount table is a directory"*) echo "ok: MOUNTINFO directory: $out" ;;
    *) echo "FAIL: MOUNTINFO directory: exit $rc: $out"; fail=1 ;; esac
# the regular files still work
grep -v '^#' /proc/self/mountinfo > "$dir/mi" 2>/dev/null || cp /proc/self/mountinfo "$dir/mi"
printf 'type tmpfs speed=123 scal=7 multi=0\n' > "$dir/site"
SHEAF_FGFS_MOUNTINFO="$dir/mi" timeout 20 "$tool" --site "$dir/site" select --bytes 1K >/dev/null ||
    { echo "FAIL: regular mount table and site file refused"; fail=1; }
exit $fail
