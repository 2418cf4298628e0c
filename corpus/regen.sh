#!/bin/sh
# Rebuild tracegen (plain gcc, into a temporary directory) and regenerate
# every committed corpus trace and its facts file from its scenario; then
# the RheaTrace/btrace and systrace inputs from their generators (rhea/gen.py,
# systrace/gen.py: Python 3, from the models they state), and merge's pair
# (merge/gen.py: a method trace through tracegen and its atrace capture).
# millions.scn is skipped: its trace is too big to commit; tests generate it.
# The generator is deterministic: running this twice gives identical files.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../tools/tracegen/tracegen.c"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
${CC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -o "$tmp/tracegen" "$src"
n=0
for scn in "$here"/*.scn; do
    name=$(basename "$scn" .scn)
    [ "$name" = millions ] && continue
    "$tmp/tracegen" "$scn" "$here/$name.trace" --facts "$here/$name.facts.json"
    n=$((n + 1))
done
echo "regen.sh: regenerated $n traces in $here"
${PYTHON:-python3} "$here/rhea/gen.py" "$here/rhea"
${PYTHON:-python3} "$here/systrace/gen.py" "$here/systrace"
sh "$here/art-v2/regen.sh"
${PYTHON:-python3} "$here/merge/gen.py" "$tmp/tracegen" "$here/merge"
