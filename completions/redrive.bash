# bash completion for redrive: subcommands, options, view names, and system names read
# from the config file (--config FILE on the line, else $XDG_CONFIG_HOME/redrive/config,
# else ~/.config/redrive/config). Installed by `meson install` into bash-completion's
# completions directory.

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

# [system "NAME"] section names of the config (read as text; never sourced or run).
_redrive_systems()
{
    local file
    file=$(_redrive_config)
    file=${file/#\~/$HOME}
    [[ -r $file ]] || return 0
    sed -n 's/^[[:space:]]*\[[[:space:]]*system[[:space:]]*"\([^"]*\)"[[:space:]]*\].*/\1/p' -- "$file" 2>/dev/null
}

_redrive()
{
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local global="--config --system --theme --keymap --read-only --ascii --no-mouse --yes --help --version"
    local cmds="snapshot check retry drain undrain deactivate activate"
    local views="overview executions chain workers queues dlq"
    local cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
        --config|--system|--theme|--keymap|--view|--status|--filter|--reason|--idempotency-key) ((i++)) ;;
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    case "$prev" in
    --system)
        local IFS=$'\n'
        COMPREPLY=($(compgen -W "$(_redrive_systems)" -- "$cur"))
        return ;;
    --config)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --view)
        COMPREPLY=($(compgen -W "$views" -- "$cur"))
        return ;;
    --theme|--keymap|--status|--filter|--reason|--idempotency-key)
        return ;;
    esac
    local words_now
    case "$cmd" in
    "") words_now="$global $cmds" ;;
    snapshot) words_now="--json --view --status --filter --system --config" ;;
    check) words_now="--json --ascii --system --config" ;;
    retry)
        words_now="--yes --force --reason --idempotency-key --override-loop --system --config --read-only" ;;
    drain|undrain|deactivate|activate)
        words_now="--yes --force --reason --idempotency-key --system --config --read-only" ;;
    *) words_now="" ;;
    esac
    [[ -n $cmd && $cur != -* ]] && return   # ids and workers: nothing to offer
    COMPREPLY=($(compgen -W "$words_now" -- "$cur"))
}

complete -F _redrive redrive
