#!/usr/bin/env bash
# test_examples.sh - round trips through the in-tree examples (ctest "examples").
#   test_examples.sh <pack_dir binary> <sion_convert binary>
set -euo pipefail
pack_dir=$1
sion_convert=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-examples-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

mkdir in
: >in/empty
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    head -c $((i * i * 9001 % 70000)) /dev/urandom >"in/task-$i.dat"
done
head -c $((2 * 1024 * 1024 + 3)) /dev/urandom >in/big.dat   # more than one copy buffer
mkdir in/subdir                                              # not a regular file: skipped
ln -s big.dat in/link.dat                                    # followed like a regular file

echo "--- pack_dir pack / list / unpack"
"$pack_dir" pack in c.sion
"$pack_dir" list c.sion >list.txt
[ "$(wc -l <list.txt)" -eq 16 ] || { cat list.txt; die "pack_dir list: expected a header and 15 files"; }
"$pack_dir" unpack c.sion out
rm -r in/subdir
diff -r in out || die "pack_dir unpack differs from the input"
if "$pack_dir" unpack missing.sion out2 2>/dev/null; then die "unpacking a missing container must fail"; fi
if "$pack_dir" pack no-such-dir d.sion 2>/dev/null; then die "packing a missing directory must fail"; fi

echo "--- sion_convert -w / -r"
"$sion_convert" -c 8192 -w s.sion in/task-3.dat in/empty in/big.dat
"$sion_convert" -r s.sion o1 o2 o3
cmp o1 in/task-3.dat && cmp o2 in/empty && cmp o3 in/big.dat || die "sion_convert round trip"
if "$sion_convert" -r s.sion o1 2>/dev/null; then die "wrong number of outputs must fail"; fi
if "$pack_dir" list s.sion 2>/dev/null; then die "pack_dir list of a non-pack_dir container must fail"; fi
echo "examples test: OK"
