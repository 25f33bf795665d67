# fish completion for redrive: subcommands, options, view names, and system names read
# from the config file ($XDG_CONFIG_HOME/redrive/config or ~/.config/redrive/config, or
# the --config FILE on the command line).

function __redrive_config
    set -l toks (commandline -opc)
    for i in (seq (count $toks))
        if test "$toks[$i]" = --config; and test $i -lt (count $toks)
            echo $toks[(math $i + 1)]
            return
        else if string match -q -- '--config=*' $toks[$i]
            string replace -- '--config=' '' $toks[$i]
            return
        end
    end
    set -q XDG_CONFIG_HOME; and echo $XDG_CONFIG_HOME/redrive/config; or echo $HOME/.config/redrive/config
end

function __redrive_systems
    set -l file (__redrive_config)
    test -r "$file"; or return
    sed -n 's/^[[:space:]]*\[[[:space:]]*system[[:space:]]*"\([^"]*\)"[[:space:]]*\].*/\1/p' -- $file 2>/dev/null
end

set -l cmds snapshot check retry drain undrain deactivate activate
complete -c redrive -f
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a snapshot -d 'print the model once'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a check -d 'is the setup right?'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a retry -d 'retry executions'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a drain -d 'drain (cordon) a worker'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a undrain -d 'undrain a worker'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a deactivate -d 'mark a worker inactive'
complete -c redrive -n "not __fish_seen_subcommand_from $cmds" -a activate -d 'mark a worker active'
complete -c redrive -l config -r -F -d 'configuration file'
complete -c redrive -l system -x -a '(__redrive_systems)' -d 'system section to use'
complete -c redrive -l theme -x -d 'theme name or file'
complete -c redrive -l keymap -x -d 'keymap name or file'
complete -c redrive -l read-only -d 'hide and refuse every action'
complete -c redrive -l ascii -d 'ASCII-only drawing'
complete -c redrive -l no-mouse -d 'do not capture the mouse'
complete -c redrive -l yes -s y -d 'do not ask for confirmation'
complete -c redrive -l help -s h -d 'usage'
complete -c redrive -l version -s V -d 'version'
complete -c redrive -n '__fish_seen_subcommand_from snapshot' -l json -d 'JSON output'
complete -c redrive -n '__fish_seen_subcommand_from snapshot' -l view -x -a 'overview executions chain workers queues dlq'
complete -c redrive -n '__fish_seen_subcommand_from snapshot' -l status -x -d 'status filter'
complete -c redrive -n '__fish_seen_subcommand_from snapshot' -l filter -x -d 'text filter'
complete -c redrive -n '__fish_seen_subcommand_from check' -l json -d 'JSON output'
complete -c redrive -n "__fish_seen_subcommand_from retry drain undrain deactivate activate" -l reason -x
complete -c redrive -n "__fish_seen_subcommand_from retry drain undrain deactivate activate" -l idempotency-key -x
complete -c redrive -n "__fish_seen_subcommand_from retry" -l override-loop -d 'retry a retry loop too'
complete -c redrive -n "__fish_seen_subcommand_from retry drain undrain deactivate activate" -l force -d 'send what the guards hold back'
