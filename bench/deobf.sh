#!/usr/bin/env bash
# The deobfuscation line of make bench (issue 13): a 300 MB R8 mapping.txt applied to an
# ART trace with 100,000 distinct obfuscated methods (both written once by
# bench/gen_deobf.py and cached in bench/cache/). Converts the trace to folded without and
# with --deobfuscate, interleaved, TC_BENCH_RUNS times each, and prints what the mapping
# adds: wall time (median), CPU time (user + system, median: steadier on a loaded machine)
# and peak RSS. The issue's bound: at most 2 s and 64 MB above the plain conversion.
#   bench/deobf.sh BUILD_DIR   (TC_BENCH_DEOBF_MB: mapping size, default 300)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
cache=$here/cache
runs=${TC_BENCH_RUNS:-3}
mb=${TC_BENCH_DEOBF_MB:-300}
mkdir -p "$cache"
mapping=$cache/deobf-${mb}mb-mapping.txt
trace=$cache/deobf-100k-methods.trace
if [ ! -s "$mapping" ] || [ ! -s "$trace" ]; then
  echo "bench: generating $mapping and $trace (once)"
  python3 "$here/gen_deobf.py" "$mapping.part" "$trace.part" "$mb" 100000
  mv "$trace.part" "$trace" && mv "$mapping.part" "$mapping"
fi
cat "$mapping" "$trace" > /dev/null   # the page cache holds both: the disk is not measured

one() { # prints "wall cpu rss_kb" of one conversion
  { /usr/bin/env time -f '%e %U %S %M' "$build/traceconv" -q -o folded "$@" "$trace" /dev/null; } 2>&1 |
    tail -1 | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}
plain=() deobf=()
for ((i = 0; i < runs; i++)); do
  plain+=("$(one)")
  deobf+=("$(one --deobfuscate "$mapping")")
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{ print $k }'; }
pw=$(col 1 "${plain[@]}" | median); pc=$(col 2 "${plain[@]}" | median); pr=$(col 3 "${plain[@]}" | sort -n | tail -1)
dw=$(col 1 "${deobf[@]}" | median); dc=$(col 2 "${deobf[@]}" | median); dr=$(col 3 "${deobf[@]}" | sort -n | tail -1)
echo "deobfuscate: $(($(stat -c %s "$mapping") / 1000000)) MB mapping, 100000 methods, -o folded, $runs runs (median; RSS: max)"
printf '%-22s %8s %8s %8s\n' "" "wall s" "cpu s" "RSS MB"
awk -v w="$pw" -v c="$pc" -v r="$pr" 'BEGIN { printf "%-22s %8.2f %8.2f %8.1f\n", "plain", w, c, r / 1024 }'
awk -v w="$dw" -v c="$dc" -v r="$dr" 'BEGIN { printf "%-22s %8.2f %8.2f %8.1f\n", "--deobfuscate", w, c, r / 1024 }'
awk -v pw="$pw" -v pc="$pc" -v pr="$pr" -v dw="$dw" -v dc="$dc" -v dr="$dr" 'BEGIN {
  aw = dw - pw; ac = dc - pc; ar = (dr - pr) / 1024
  printf "%-22s %8.2f %8.2f %8.1f   (bound: 2 s, 64 MB: %s)\n", "added by the mapping", aw, ac, ar,
         (ac <= 2 && ar <= 64) ? "ok" : "OVER" }'
