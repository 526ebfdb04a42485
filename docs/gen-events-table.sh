#!/bin/sh
# docs/gen-events-table.sh - print the markdown table of every event type
# (wire id, name, category, the six argument fields) from proto/events.def,
# and the table of argument fields from proto/fields.def, for docs/FORMAT.md.
#   docs/gen-events-table.sh [TOPDIR]
# Wire ids are line order in events.def from 1; field ids line order from 0.
set -eu
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
echo "| id | type | name | category | arg0 | arg1 | arg2 | arg3 | arg4 | arg5 |"
echo "|---:|---|---|---|---|---|---|---|---|---|"
sed -n 's/^EV(\(.*\))[[:space:]]*$/\1/p' "$top/proto/events.def" |
awk -F, '{
	for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i)
	gsub(/"/, "", $2)
	n++
	printf "| %d | `%s` | `%s` | %s |", n, $1, $2, tolower($3)
	for (i = 4; i <= 9; i++) printf " %s |", ($i == "none" ? "" : $i)
	printf "\n"
}'
echo
echo "| id | field | meaning |"
echo "|---:|---|---|"
sed -n 's/^FIELD(\([a-z_0-9]*\),[[:space:]]*"\(.*\)")[[:space:]]*$/\1\t\2/p' \
	"$top/proto/fields.def" |
awk -F'\t' '{ printf "| %d | `%s` | %s |\n", n++, $1, $2 }'
