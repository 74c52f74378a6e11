#!/usr/bin/env bash
# readme_snippets.sh - build and run the C code blocks of README.md the SIONlib
# way (cc/mpicc + sionconfig), so they stay correct and portable. Run by
# test_install.sh against the installed sheaf; also works against a real
# SIONlib installation (give its sionconfig).
#   readme_snippets.sh <README.md> <sionconfig> <cc> <workdir> [<mpicc> <mpiexec>]
# Block 1 is a whole serial program; block 2 an MPI fragment ("after MPI_Init")
# that is wrapped into a program giving it `state` and `nbytes`.
set -euo pipefail
readme=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
sionconfig=$2
cc=$3
work=$4
mpicc=${5:-}
mpiexec=${6:-}
extra=${SNIPPET_EXTRA:-}   # e.g. sanitizer flags
die() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work"
cd "$work"

# the first screen (issue 27): the Quick start with its two commands within the
# first 40 lines, then the table of parts; every relative link of the README
# names an existing file (its directory is the source tree)
top=$(dirname "$readme")
qs=$(grep -m 1 -n '^## Quick start$' "$readme" | cut -d: -f1)
[ -n "$qs" ] && [ "$qs" -le 40 ] || die "README.md: '## Quick start' is not within the first 40 lines (line ${qs:-none})"
# (one awk over the file: `tail | awk` with pipefail failed at random when awk
# exited before tail had written everything - SIGPIPE, a silent set -e exit)
qsblock=$(awk -v from="$qs" 'NR < from {next} /^```sh$/ {on = 1; next} on && /^```$/ {exit} on {print}' "$readme")
for c in ./scripts/demo.sh ./scripts/test.sh; do
    grep -qF "$c " <<<"$qsblock" || die "README.md: the Quick start's first sh block lacks $c"
    [ -x "$top/$c" ] || die "README.md: $c is not an executable in the tree"
done
grep -q '^| part | what it is | docs | state |$' "$readme" || die "README.md: no table of the parts"
parts=$(grep -m 1 -n '^## Parts$' "$readme" | cut -d: -f1)
[ -n "$parts" ] && [ "$parts" -gt "$qs" ] || die "README.md: no '## Parts' after the Quick start"
for l in $(grep -o '](\([^)#:]*\))' "$readme" | sed 's/^](//; s/)$//' | sort -u); do
    [ -e "$top/$l" ] || die "README.md: link to $l: no such file"
done
echo "README first screen: Quick start at line $qs, parts table at line $parts, links exist"

# the ```c blocks, one file each
awk '/^```c$/ { n++; f = sprintf("snippet%d.c", n); inblk = 1; next }
     /^```/   { inblk = 0; next }
     inblk    { print > f }' "$readme"
[ -f snippet1.c ] && [ -f snippet2.c ] || die "README.md: expected two C code blocks"

echo "--- README block 1 (serial program)"
# shellcheck disable=SC2046
"$cc" $extra -std=c99 -Wall $("$sionconfig" --cflags --ser) -o snippet1 snippet1.c $("$sionconfig" --libs --ser) ||
    die "README block 1 does not build"
rm -f demo.sion
out=$(timeout 60 ./snippet1) || die "README block 1 failed"
[ "$out" = "hello from task 0
and from task 1" ] || die "README block 1 printed: $out"

if [ -n "$mpicc" ]; then
    echo "--- README block 2 (MPI fragment)"
    grep -q '^/\* \.\.\. after MPI_Init: \*/$' snippet2.c || die "README block 2: no '/* ... after MPI_Init: */' line"
    {
        sed -n '1,/^\/\* \.\.\. after MPI_Init: \*\/$/p' snippet2.c | grep -v 'after MPI_Init'
        echo '#include <stdio.h>'
        echo '#include <string.h>'
        echo 'int main(int argc, char **argv)'
        echo '{'
        echo '    MPI_Init(&argc, &argv);'
        echo '    char state[1000];'
        echo '    size_t nbytes = sizeof state;'
        echo '    memset(state, 42, nbytes);'
        echo '    {'
        sed -n '/^\/\* \.\.\. after MPI_Init: \*\/$/,$p' snippet2.c | grep -v 'after MPI_Init'
        echo '    if (sid < 0) fprintf(stderr, "README block 2: open failed\n");'
        echo '    MPI_Finalize();'
        echo '    return sid < 0;'
        echo '    }'
        echo '}'
    } >snippet2_main.c
    # shellcheck disable=SC2046
    "$mpicc" $extra -std=c99 -Wall $("$sionconfig" --cflags --mpi) -o snippet2 snippet2_main.c \
        $("$sionconfig" --libs --mpi) || die "README block 2 does not build"
    rm -f ckpt.sion
    timeout 120 "$mpiexec" -n 2 ./snippet2 || die "README block 2 failed"
    [ -s ckpt.sion ] || die "README block 2 wrote no ckpt.sion"
fi
echo "README snippets: OK"
