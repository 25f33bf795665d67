# fish completion for redrive. The commands, options and view names come from redrive
# itself (`redrive --complete ...`: the same tables as `redrive --help`), so this script
# never lists them; the system names are the [system "NAME"] headers of the config file
# (--config FILE on the line, else $XDG_CONFIG_HOME/redrive/config, else
# ~/.config/redrive/config), read as text, never sourced or run.

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

# The candidates for the token under the cursor, as NAME<TAB>HELP lines.
function __redrive_candidates
    set -l toks (commandline -opc)
    set -l cur (commandline -ct)
    set -l opts (command redrive --complete options 2>/dev/null)
    set -l cmd
    set -l verb
    set -l skip 0
    for tok in $toks[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        set -l row (string match -r -- "^\Q$tok\E\t(.*)\t" $opts)
        if test -n "$row[2]"; and test "$row[2]" != flag
            set skip 1
        else if string match -q -- '-*' $tok
            continue
        else if test -z "$cmd"
            set cmd $tok
            set opts (command redrive --complete options $cmd 2>/dev/null)
        else if test -z "$verb"
            set verb $tok
        end
    end
    if test $skip = 1
        set -l prev $toks[-1]
        set -l row (string match -r -- "^\Q$prev\E\t(.*)\t" $opts)
        switch $row[2]
            case system
                __redrive_systems
            case file
                __fish_complete_path $cur
            case view
                command redrive --complete views 2>/dev/null
            case profile
                command redrive --complete profiles 2>/dev/null
        end
        return
    end
    if string match -q -- '-*' $cur
        string replace -r -- '\t[^\t]*\t' \t $opts
    else if test -z "$cmd"
        command redrive --complete commands 2>/dev/null
    else if test -z "$verb"
        command redrive --complete verbs $cmd 2>/dev/null
    else if test "$cmd" = config
        __fish_complete_path $cur
    else if test "$cmd" = batch; and contains -- $verb show resume abandon
        command redrive --complete batches 2>/dev/null
    end
end

complete -c redrive -f -a '(__redrive_candidates)'
