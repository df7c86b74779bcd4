# fish completion for ratchet: every candidate comes from `ratchet __complete`
# (subcommands and flags as the binary defines them; hosts, groups, step ids and
# tags from the files on the line). Installed in /usr/share/fish/vendor_completions.d.
function __ratchet_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    for line in ($tokens[1] __complete $tokens[2..-1] "$cur" 2>/dev/null)
        switch $line
            case ':files'
                __fish_complete_path "$cur"
            case ':files *'
                __fish_complete_suffix (string replace ':files ' '.' -- $line)
            case '*'
                echo $line
        end
    end
end
complete -c ratchet -f -a '(__ratchet_complete)'
