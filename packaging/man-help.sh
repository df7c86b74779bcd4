#!/bin/sh
# What help2man reads as `ratchet --help` (cmake/Packaging.cmake): the binary's own
# help, then each command's, so ratchet(1) lists every command and option as the
# binary defines them. $RATCHET: the binary.
set -eu
: "${RATCHET:?RATCHET must name the ratchet binary}"
case "${1:-}" in
  --version) "$RATCHET" --version; exit 0 ;;
  --help) ;;
  *) echo "usage: $0 --help|--version" >&2; exit 2 ;;
esac
"$RATCHET" --help
for cmd in $("$RATCHET" __complete ""); do
  echo
  echo "Command $cmd:"
  # CLI11's own first line ("<description>" and "Usage:") reads as help2man's text.
  "$RATCHET" "$cmd" --help | sed 's/^/  /'
done
