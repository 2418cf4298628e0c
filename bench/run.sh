#!/usr/bin/env bash
# make bench: converts a large generated ART trace (>= 1 GB, made once by
# tracegen and cached in bench/cache/) with every writer and prints input
# MB/s (median and best of TC_BENCH_RUNS runs), peak RSS and output size.
# Timed runs write to /dev/null, so the figures measure traceconv, not the
# disk or a pipe; the output size comes from one more, untimed run.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
cache=$here/cache
size_mb=${TC_BENCH_MB:-1024}
mkdir -p "$cache"
input=$cache/bench-${size_mb}mb.trace
if [ ! -s "$input" ]; then
  echo "bench: generating $input (once)"
  "$build/tracegen" --bench "$size_mb" "$input.part" && mv "$input.part" "$input"
fi
in_bytes=$(stat -c %s "$input")
writers=${TC_BENCH_WRITERS:-$("$build/traceconv" --list-formats | awk '/^writers/{w=1;next} w&&NF{print $1}' | grep -v '^ir$')}
runs=${TC_BENCH_RUNS:-3}
echo "bench: $(basename "$input"), $((in_bytes / 1000000)) MB, $runs runs per writer (machine timings vary run to run: median and best shown)"
printf '%-10s %12s %10s %10s %10s %8s\n' writer "MB/s median" "MB/s best" "RSS MB" "out MB" "out/in"
cat "$input" > /dev/null   # warm the page cache so the first writer is not penalized
for w in $writers; do
  times=(); rss_max=0; out_bytes=0
  for ((i = 0; i < runs; i++)); do
    stats=$( { /usr/bin/env time -f '%e %M' "$build/traceconv" -q -i art -o "$w" "$input" - > /dev/null; } 2>&1 | tail -1)
    times+=("${stats% *}")
    rss_kb=${stats#* }; [ "$rss_kb" -gt "$rss_max" ] && rss_max=$rss_kb
  done
  out_bytes=$("$build/traceconv" -q -i art -o "$w" "$input" - | wc -c)   # untimed: the size only
  printf '%s\n' "${times[@]}" | sort -n | awk -v w="$w" -v b="$in_bytes" -v r="$rss_max" -v o="$out_bytes" '
    { t[NR] = ($1 > 0 ? $1 : 0.01) }
    END { med = t[int((NR + 1) / 2)]; best = t[1];
          printf "%-10s %12.0f %10.0f %10.1f %10.1f %8.2f\n", w, b/1e6/med, b/1e6/best, r/1024, o/1e6, o/b }'
done
