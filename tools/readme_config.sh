#!/bin/sh
# README.md's configuration reference, between the lines
# <!-- config:begin --> and <!-- config:end -->, is the output of
# `floe config --markdown` (the config key tables).
#   tools/readme_config.sh README FLOE OUT     README with the block made anew, to OUT
#   tools/readme_config.sh --check README FLOE fail, with a diff, when the block is stale
set -eu
usage() { echo "usage: $0 README FLOE_BIN OUT | --check README FLOE_BIN" >&2; exit 2; }
check=
if [ "${1:-}" = --check ]; then check=1; shift; [ $# -eq 2 ] || usage; else [ $# -eq 3 ] || usage; fi
readme=$1 floe=$2
ref=$(mktemp) new=$(mktemp)
trap 'rm -f "$ref" "$new"' EXIT
"$floe" config --markdown >"$ref"
if ! awk -v ref="$ref" '
  $0 == "<!-- config:begin -->" { print; while ((getline l < ref) > 0) print l; skip = 1; begins++; next }
  $0 == "<!-- config:end -->" { skip = 0; ends++ }
  !skip { print }
  END { exit !(begins == 1 && ends == 1) }' "$readme" >"$new"; then
  echo "$readme: needs exactly one <!-- config:begin --> ... <!-- config:end --> block" >&2
  exit 1
fi
if [ -z "$check" ]; then
  cat "$new" >"$3"
elif cmp -s "$readme" "$new"; then
  echo "config-check: the configuration reference in $readme is current"
else
  diff -u "$readme" "$new" | head -n 40 >&2
  echo "config-check: the configuration reference in $readme is stale: run make gen" >&2
  exit 1
fi
