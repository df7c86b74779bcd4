# bash completion for ratchet: every candidate comes from `ratchet __complete`
# (subcommands and flags as the binary defines them; hosts, groups, step ids and
# tags from the files on the line). Installed as
# /usr/share/bash-completion/completions/ratchet.
_ratchet() {
  local -a words=() out=()
  local i w line files="" want="" glue=0
  # bash splits "--limit=a" and "user@h:22" at = and :; glue them back.
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((${#words[@]} > 0)) && [[ $w == "=" || $w == ":" || $glue == 1 ]]; then
      words[-1]+=$w
    else
      words+=("$w")
    fi
    glue=0
    [[ $w == "=" || $w == ":" ]] && glue=1
  done
  ((${#words[@]} == 0)) && words=("")
  local cur=${words[-1]} bcur=${COMP_WORDS[COMP_CWORD]}
  # What bash replaces is its own word: drop the part of ours before it.
  local drop=${cur%"$bcur"}
  while IFS= read -r line; do
    case $line in
      ":files") files=1 ;;
      ":files "*) files=1 want=${line#:files } ;;
      *) out+=("${line#"$drop"}") ;;
    esac
  done < <("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null)
  COMPREPLY=("${out[@]}")
  if [[ -n $files ]]; then
    local -a names=()
    if [[ -n $want ]]; then
      mapfile -t names < <(compgen -f -X "!*.$want" -- "$bcur"; compgen -d -- "$bcur")
    else
      mapfile -t names < <(compgen -f -- "$bcur")
    fi
    COMPREPLY+=("${names[@]}")
    compopt -o filenames 2>/dev/null
  fi
  return 0
}
complete -F _ratchet ratchet
