#!/bin/sh
# Rebuild tracegen (plain gcc, into a temporary directory) and regenerate the
# V2 samples: NAME.trace (ART format V2, the layout named in NAME.scn's first
# line) beside its v3 twin NAME.v3.trace from the same scenario, and
# NAME.facts.json (the scenario's facts: the same for both). Deterministic.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../tools/tracegen/tracegen.c"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
${CC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -o "$tmp/tracegen" "$src"
n=0
while read -r name args; do
    case $name in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086
    "$tmp/tracegen" "$here/$name.scn" "$here/$name.trace" $args
    "$tmp/tracegen" "$here/$name.scn" "$here/$name.v3.trace" --facts "$here/$name.facts.json"
    n=$((n + 1))
done <<LIST
a16-streaming-dual-ns --v2 a16-ns
a16-wall-us           --v2 a16-us
a15-streaming-dual    --v2 a15
a16-writer-bug        --v2 a16-ns --v2-split 4
tids-above-65535      --v2 a16-ns
perfetto-layout       --v2 perfetto
LIST
echo "regen.sh: regenerated $n V2 samples and their v3 twins in $here"
