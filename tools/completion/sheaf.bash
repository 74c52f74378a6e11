# bash completion for sheaf (installed as <datadir>/bash-completion/completions/sheaf).
# zsh: autoload -U bashcompinit && bashcompinit && source <this file>
#
# The commands, subcommands and options come from the sheaf being completed
# (`sheaf help`, `sheaf CMD --help`), so they always match its version. After
# the options, file names complete (-o default).

_sheaf_help_words() {
    # $1: the help text; prints the subcommands of CMD ($2) named on its usage lines
    # ("usage: sheaf CMD a|b|c ..." or "       sheaf CMD a ...")
    printf '%s\n' "$1" | sed -n "s/^\(usage:\)\{0,1\} *[^ ]*sheaf $2 \([a-z][a-z|-]*\).*/\2/p" | tr '|' '\n'
}

_sheaf() {
    local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} cmd="" sub="" i w help words
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        [ "$w" = "--" ] && return 0          # after `--` (stats run -- COMMAND): files
        case $w in -*) continue ;; esac
        if [ -z "$cmd" ]; then cmd=$w; elif [ -z "$sub" ]; then sub=$w; fi
    done
    if [ -z "$cmd" ]; then
        words=$("$prog" help 2>/dev/null | sed -n '/^commands:/,/^[^ ]/ s/^  \([a-z][a-z-]*\) .*/\1/p')
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
        return 0
    fi
    help=$("$prog" "$cmd" --help 2>&1)
    if [ -z "$sub" ] && [[ $cur != -* ]]; then
        words=$(_sheaf_help_words "$help" "$cmd")
        if [ -n "$words" ]; then
            mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
            return 0
        fi
    fi
    if [[ $cur == -* ]]; then
        # the options on the usage lines of this command (and subcommand)
        [ -n "$sub" ] && help=$(printf '%s\n' "$help" | grep -E "sheaf $cmd ([a-z|]*\|)?$sub([| ]|$)|^ +-")
        words=$(printf '%s\n' "$help" | grep -o -E '(^|[[ ,|])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[[ ,|]//' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
    fi
    return 0
}
complete -o default -o bashdefault -F _sheaf sheaf
