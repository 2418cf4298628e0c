#!/usr/bin/env bash
# The batch line of make bench (issue 11): `traceconv batch` over one tar archive of
# generated traces of mixed formats and sizes (ART traces of 1-4 MB, some gzipped, Chrome
# JSON and systrace HTML written by traceconv from a generated trace, and the project's
# small corpus traces), at least 200 members and 400 MB. Prints members/s, MB/s and peak
# RSS for -j 1 and -j $(nproc), the speed-up, and the cost of three formats at once against
# one. The archive is made once and cached in bench/cache/; the outputs go to a scratch
# directory in bench/cache/ that is emptied between runs (the page cache absorbs them).
#   bench/batch.sh BUILD_DIR     (TC_BENCH_RUNS: runs per line, median and best shown)
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache=$here/cache
runs=${TC_BENCH_RUNS:-3}
ncpu=$(nproc 2>/dev/null || echo 2)
mkdir -p "$cache"
archive=$cache/batch-set.tar

# One archive: 200+ members, 400+ MB, recognized by content (names are only hints).
make_archive() {
  local parts=$cache/batch-parts
  rm -rf "$parts" && mkdir -p "$parts"
  local mb
  for mb in 1 2 3 4; do "$build/tracegen" --bench "$mb" "$parts/art-${mb}mb.trace"; done
  gzip -kn6 "$parts/art-2mb.trace"
  "$build/traceconv" -q -o json "$parts/art-1mb.trace" "$parts/art-1mb.json"
  "$build/traceconv" -q -o systrace "$parts/art-1mb.trace" "$parts/art-1mb.html"
  python3 - "$parts" "$root/corpus" "$archive.part" <<'PY'
import os, sys, tarfile
parts, corpus, out = sys.argv[1:]
members = []                                   # (member path, file)
for i in range(150):                           # ART v3, 1-4 MB
    mb = 1 + i % 4
    members.append((f"device-{i % 10}/run-{i:03}/app-{mb}mb.trace", f"{parts}/art-{mb}mb.trace"))
for i in range(20):                            # gzipped ART
    members.append((f"gz/run-{i:03}.trace.gz", f"{parts}/art-2mb.trace.gz"))
for i in range(15):                            # Chrome JSON, ~11 MB
    members.append((f"json/run-{i:03}.json", f"{parts}/art-1mb.json"))
for i in range(15):                            # systrace HTML, ~8 MB
    members.append((f"systrace/run-{i:03}.html", f"{parts}/art-1mb.html"))
small = sorted(f for f in os.listdir(corpus) if f.endswith(".trace"))
for i, f in enumerate(small):                  # small real-shaped traces of every ART variant
    members.append((f"corpus/{f}", os.path.join(corpus, f)))
with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
    for name, path in members:
        tar.add(path, arcname=name)
total = sum(os.path.getsize(p) for _, p in members)
print(f"bench: batch archive: {len(members)} members, {total / 1e6:.0f} MB")
PY
  mv "$archive.part" "$archive"
  rm -rf "$parts"
}
[ -s "$archive" ] || make_archive

members=$(python3 -c 'import sys, tarfile; print(sum(1 for m in tarfile.open(sys.argv[1]) if m.isfile()))' "$archive")
in_bytes=$(python3 -c 'import sys, tarfile; print(sum(m.size for m in tarfile.open(sys.argv[1]) if m.isfile()))' "$archive")
scratch=$(mktemp -d "$cache/batch-out.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cat "$archive" > /dev/null   # warm the page cache

# One timed `traceconv batch` run: sets t (wall s) and r (peak RSS, KB); checks that every
# member converted (exit 0) so a failing run is never timed as a fast one.
time_batch_once() {
  local stats
  rm -rf "$scratch/out"
  stats=$( { /usr/bin/env time -f '%e %M' "$build/traceconv" batch -q -O "$scratch/out" "$@" "$archive"; } 2>&1 | tail -1)
  read -r t r <<< "$stats"
  [[ "$t" =~ ^[0-9.]+$ ]] || { echo "bench: traceconv batch $* failed: $stats" >&2; exit 1; }
}

. "$here/lib.sh"   # median, best, ratios, ratio_of

row() { # label
  awk -v l="$1" -v n="$members" -v b="$in_bytes" -v m="$med" -v x="$best" -v r="$rss_max" 'BEGIN {
    printf "%-28s %9.1f %9.1f %10.0f %10.0f %8.1f\n", l, n/m, n/x, b/1e6/m, b/1e6/x, r/1024 }'
}

echo "bench: traceconv batch over $(basename "$archive"): $members members, $((in_bytes / 1000000)) MB, $runs runs per line"
printf '%-28s %9s %9s %10s %10s %8s\n' "" "memb/s md" "memb/s bt" "MB/s md" "MB/s best" "RSS MB"
# The three lines are timed in rounds (each round runs each once, a few seconds apart):
# this machine's speed drifts over minutes, and the speed-up is the median of each round's
# own ratio, so a slow spell is not charged to one line.
declare -A times rss
lines=("-o perfetto -j 1" "-o perfetto -j $ncpu" "-o perfetto,pprof,folded -j $ncpu")
for ((round = 0; round < runs; round++)); do
  for l in "${lines[@]}"; do
    time_batch_once $l
    times[$l]+="$t "
    [ "$r" -gt "${rss[$l]:-0}" ] && rss[$l]=$r
  done
done
for l in "${lines[@]}"; do
  med=$(printf '%s\n' ${times[$l]} | median); best=$(printf '%s\n' ${times[$l]} | best)
  rss_max=${rss[$l]}
  row "$l"
done
# per round: -j 1 / -j N (the speed-up) and three formats / one (the cost)
j1=${times[${lines[0]}]}; jn=${times[${lines[1]}]}; three=${times[${lines[2]}]}
speedup=$(ratio_of "$jn" "$j1")
cost=$(ratio_of "$jn" "$three")
echo "rounds, -j 1 / -j $ncpu wall: $(ratios "$jn" "$j1" | awk '{ printf "%.2f ", $1 }')"
awk -v s="$speedup" -v c="$cost" -v n="$ncpu" 'BEGIN {
  printf "-j %d runs %.2fx as fast as -j 1 (median of the rounds; target: at least 1.7x on 2 cores); ", n, s
  printf "three formats cost %.2fx one (target: at most 1.6x)\n", c }'
