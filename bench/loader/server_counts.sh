#!/bin/sh
# server_counts.sh BUILD [NPROCS...] - file-system operations on a generated
# library tree, plain and under sheaf-launch, for 1..N processes on this node.
# Plain: strace counts each process's syscalls that name a path in the tree
# (opens, stats, accesses, listings). Loader: the same count for the processes,
# split into ld.so's own stats of the search directories and their hwcaps/tls
# subdirectories (glibc 2.36 makes them outside the audit interface: a
# per-process constant, independent of the number of libraries) and the rest
# (failed probes go to a nonexistent prefix, not the tree), plus the server's
# own operations on the tree (its counters).
# The tree is the one tests/loader/run_loader.py generates (6 libraries in
# 4 LD_LIBRARY_PATH dirs, a decoy first). Needs strace and cc.
set -eu
build=$(cd "${1:?usage: server_counts.sh BUILD [NPROCS...]}" && pwd)
shift
[ $# -gt 0 ] || set -- 1 4 16
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/sheaf-ld-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
python3 "$here/../../tests/loader/run_loader.py" solib --launch "$build/tools/loader/sheaf-launch" \
    --work "$work/gen" >/dev/null
t=$work/gen/tree
export LD_LIBRARY_PATH=$t/d0:$t/d1:$t/d2:$t/d3 LDAPP_TREE=$t
printf '%6s %14s %16s %16s %12s %10s %10s\n' procs plain-ops/proc loader-dirstat/p loader-other/p \
    srv-listings srv-stats srv-reads
for n in "$@"; do
    fan=$work/fan$n.sh
    { echo '#!/bin/sh'; i=0; while [ $i -lt "$n" ]; do echo "$t/ldapp >/dev/null &"; i=$((i+1)); done; echo wait; } >"$fan"
    chmod +x "$fan"
    strace -f -qq -o "$work/plain.tr" -e trace=%file,getdents64 "$fan"
    plain=$(grep -c "\"$t/" "$work/plain.tr" || true)
    "$build/tools/loader/sheaf-launch" --stats-file "$work/s$n" --exe "$fan" -- \
        strace -f -qq -o "$work/ld.tr" -e trace=%file,getdents64 "$fan"
    dirstat=$(grep "\"$t/" "$work/ld.tr" | grep -cE 'newfstatat\(AT_FDCWD, "[^"]*(/d[0-9]|/od|x86_64|tls|x86-64-v[0-9])", ' || true)
    other=$(grep "\"$t/" "$work/ld.tr" | grep -vcE 'newfstatat\(AT_FDCWD, "[^"]*(/d[0-9]|/od|x86_64|tls|x86-64-v[0-9])", ' || true)
    printf '%6d %14s %16s %16s %12s %10s %10s\n' "$n" "$((plain / n))" "$((dirstat / n))" "$((other / n))" \
        "$(awk '$1=="listings"{print $2}' "$work/s$n")" "$(awk '$1=="stats"{print $2}' "$work/s$n")" \
        "$(awk '$1=="reads"{print $2}' "$work/s$n")"
done
