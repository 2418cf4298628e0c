#!/usr/bin/env bash
# make bench: converts a large generated ART trace (>= 1 GB, made once by
# tracegen and cached in bench/cache/) with every writer and prints input
# MB/s, peak RSS and output size. Output goes through a pipe to wc, so the
# figures measure traceconv, not the disk.
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
printf '%-10s %10s %10s %12s %12s\n' writer "MB/s" "RSS MB" "out MB" "out/in"
cat "$input" > /dev/null   # warm the page cache so the first writer is not penalized
for w in $writers; do
  out_bytes_file=$(mktemp)
  stats=$( { /usr/bin/env time -f '%e %M' "$build/traceconv" -q -i art -o "$w" "$input" - | wc -c > "$out_bytes_file"; } 2>&1 | tail -1)
  secs=${stats% *}; rss_kb=${stats#* }
  out_bytes=$(cat "$out_bytes_file"); rm -f "$out_bytes_file"
  awk -v w="$w" -v b="$in_bytes" -v s="$secs" -v r="$rss_kb" -v o="$out_bytes" 'BEGIN {
    if (s <= 0) s = 0.01;
    printf "%-10s %10.0f %10.1f %12.1f %12.2f\n", w, b/1e6/s, r/1024, o/1e6, o/b }'
done
