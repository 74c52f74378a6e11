#!/usr/bin/env bash
# check_completion.sh - bash completion for sheaf (tools/completion/sheaf.bash),
# as a user's shell runs it: completes commands, subcommands and options from
# the sheaf given (its own help), and files after `--`.
#   check_completion.sh COMPLETION_SCRIPT SHEAF
# Every command `sheaf help` lists must complete from its first letters.
set -uo pipefail
script=$1 sheaf=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-compl.XXXXXX")
trap 'rm -rf "$dir"' EXIT
ln -s "$(cd "$(dirname "$sheaf")" && pwd)/$(basename "$sheaf")" "$dir/sheaf"
export PATH="$dir:$PATH"
# shellcheck disable=SC1090
source "$script" || { echo "FAILED: sourcing $script"; exit 1; }
complete -p sheaf >/dev/null || { echo "FAILED: no completion registered for sheaf"; exit 1; }
fail=0
c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _sheaf; echo "${COMPREPLY[*]}"; }
expect() {  # expect "WORDS..." -- the words that must be offered (and nothing else if exact)
    local want=$1 got
    shift
    got=$(c "$@")
    if [ "$got" != "$want" ]; then echo "FAILED: '$*' completes to '$got', expected '$want'"; fail=1; fi
}
has() {  # has WORD -- CMDLINE: WORD is among the offers
    local want=$1 got
    shift
    got=" $(c "$@") "
    case $got in *" $want "*) ;; *) echo "FAILED: '$*' does not offer $want (got:$got)"; fail=1 ;; esac
}
expect "stats" sheaf st
expect "summary" sheaf stats su
expect "--json" sheaf dump --j
has list sheaf ckpt ''
has extract sheaf ckpt ''
has --force sheaf split -
has --npy sheaf ckpt extract -
has --step sheaf ckpt extract --
expect "" sheaf stats run -- ls -          # after --: the command's own words (files)
for cmd in $("$sheaf" help | sed -n '/^commands:/,/^[^ ]/ s/^  \([a-z][a-z-]*\) .*/\1/p'); do
    has "$cmd" sheaf "${cmd:0:2}"
done
[ "$fail" -eq 0 ] || exit 1
echo "check_completion: OK"
