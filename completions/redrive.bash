# bash completion for redrive. The commands, options and view names come from redrive
# itself (`redrive --complete ...`: the same tables as `redrive --help`), so this script
# never lists them; the system names are the [system "NAME"] headers of the config file
# (--config FILE on the line, else $XDG_CONFIG_HOME/redrive/config, else
# ~/.config/redrive/config), read as text, never sourced or run.

_redrive_config()
{
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        case "${COMP_WORDS[i]}" in
        --config) printf '%s\n' "${COMP_WORDS[i+1]}"; return ;;
        --config=*) printf '%s\n' "${COMP_WORDS[i]#--config=}"; return ;;
        esac
    done
    printf '%s\n' "${XDG_CONFIG_HOME:-$HOME/.config}/redrive/config"
}

_redrive_systems()
{
    local file
    file=$(_redrive_config)
    file=${file/#\~/$HOME}
    [[ -r $file ]] || return 0
    sed -n 's/^[[:space:]]*\[[[:space:]]*system[[:space:]]*"\([^"]*\)"[[:space:]]*\].*/\1/p' -- "$file" 2>/dev/null
}

# The first column of `redrive --complete ARGS...`.
_redrive_list()
{
    command redrive --complete "$@" 2>/dev/null | cut -f1
}

_redrive()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local -A kind=()
    local name k rest cmd="" verb="" i
    # options before the command, then the command's own: NAME<TAB>KIND<TAB>HELP
    while IFS=$'\t' read -r name k rest; do kind[$name]=$k; done < <(command redrive --complete options 2>/dev/null)
    for ((i = 1; i < COMP_CWORD; i++)); do
        name=${COMP_WORDS[i]}
        if [[ -z $cmd ]]; then
            [[ ${kind[$name]-flag} != flag ]] && ((i++)) && continue
            [[ $name == -* ]] && continue
            cmd=$name
            kind=()
            while IFS=$'\t' read -r name k rest; do kind[$name]=$k; done \
                < <(command redrive --complete options "$cmd" 2>/dev/null)
        elif [[ ${kind[$name]-flag} != flag ]]; then
            ((i++))
        elif [[ $name != -* && -z $verb ]]; then
            verb=$name
        fi
    done
    local -a cands=()
    case "${kind[$prev]-}" in
    system) local IFS=$'\n'; COMPREPLY=($(compgen -W "$(_redrive_systems)" -- "$cur")); return ;;
    file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    view) COMPREPLY=($(compgen -W "$(_redrive_list views)" -- "$cur")); return ;;
    profile) COMPREPLY=($(compgen -W "$(_redrive_list profiles)" -- "$cur")); return ;;
    text) return ;;
    esac
    if [[ $cur == -* ]]; then
        cands=("${!kind[@]}")
    elif [[ -z $cmd ]]; then
        cands=($(_redrive_list commands))
    elif [[ -z $verb ]]; then
        cands=($(_redrive_list verbs "$cmd"))
        # config init [PATH]: a file; ids and workers: nothing to offer
    elif [[ $cmd == config ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    elif [[ $cmd == batch && ( $verb == show || $verb == resume || $verb == abandon ) ]]; then
        cands=($(_redrive_list batches))
    fi
    COMPREPLY=($(compgen -W "${cands[*]}" -- "$cur"))
}

complete -F _redrive redrive
