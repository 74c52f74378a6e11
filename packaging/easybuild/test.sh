#!/usr/bin/env bash
# packaging/easybuild/test.sh - the easyconfig passes EasyBuild's own checks:
# `eb --check-style` (EasyBuild's style rules) and `eb --dry-run --robot`
# (parses, resolves the toolchain and every dependency from EasyBuild's
# easyconfigs; nothing is built). A copy with a style error must fail the
# style check. Run by ctest as packaging.easybuild.
#   SHEAF_EB_WORK   work directory, kept (default: temporary, removed): its
#                   venv (pip install easybuild pycodestyle) is reused
# Exits 77 when EasyBuild cannot be pip-installed or no Lmod is installed
# (Debian: lmod; scripts/install-deps.sh installs it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }
if [ -n "${SHEAF_EB_WORK:-}" ]; then
    work=$SHEAF_EB_WORK; mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-eb.XXXXXX"); trap 'rm -rf "$work"' EXIT
fi
lmod_init=""
for f in /usr/share/lmod/lmod/init/bash /usr/share/lmod/*/init/bash; do
    [ -f "$f" ] && { lmod_init=$f; break; }
done
[ -n "$lmod_init" ] || skip "no Lmod (EasyBuild needs a modules tool; Debian: apt-get install lmod)"
eb=$work/venv/bin/eb
if ! [ -x "$eb" ] || ! "$work/venv/bin/python" -c 'import pycodestyle' 2>/dev/null; then
    python3 -m venv "$work/venv" || skip "python3 -m venv failed"
    "$work/venv/bin/pip" install -q easybuild pycodestyle >"$work/pip.log" 2>&1 ||
        skip "pip install easybuild failed: $(tail -n 1 "$work/pip.log")"
fi
# shellcheck disable=SC1090
set +u; source "$lmod_init"; set -u
export EASYBUILD_PREFIX=$work/eb EASYBUILD_ALLOW_USE_AS_ROOT_AND_ACCEPT_CONSEQUENCES=1
export PATH=$work/venv/bin:$PATH
"$eb" --version
n=0
for ec in "$here"/*.eb; do
    name=$(basename "$ec" .eb)
    echo "--- eb --check-style $name.eb"
    "$eb" --check-style "$ec" >"$work/style.log" 2>&1 || { cat "$work/style.log"; die "$name: style check"; }
    grep -q 'All style checks PASSed' "$work/style.log" || { cat "$work/style.log"; die "$name: no PASSed line"; }
    echo "--- eb --dry-run --robot $name.eb"
    "$eb" --dry-run --robot "$ec" >"$work/dry.log" 2>&1 || { cat "$work/dry.log"; die "$name: dry run"; }
    grep -q "$ec (module: sheaf/" "$work/dry.log" || { cat "$work/dry.log"; die "$name: sheaf not in the dry run"; }
    for dep in CMake OpenMPI libsodium gompi; do
        grep -q "(module: $dep/" "$work/dry.log" || { cat "$work/dry.log"; die "$name: dependency $dep not resolved"; }
    done
    echo "--- a copy with a style error (a tab, a too long line) fails --check-style"
    sed -e 's/^moduleclass = /moduleclass\t= /' -e "s/^name = 'sheaf'/name = 'sheaf'  $(printf 'x%.0s' $(seq 130))/" \
        "$ec" >"$work/$name.eb"
    if "$eb" --check-style "$work/$name.eb" >"$work/bad.log" 2>&1 && grep -q 'All style checks PASSed' "$work/bad.log"; then
        die "$name: a style error passed --check-style"
    fi
    n=$((n + 1))
done
[ "$n" -ge 1 ] || die "no easyconfig in $here"
echo "packaging.easybuild: $n easyconfig(s) pass --check-style and --dry-run --robot: OK"
