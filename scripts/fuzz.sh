#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for FUZZ_SECONDS (default 600), one
# process at a time, with the project corpus (corpus/ and its rhea and
# systrace folders; and TC_EXTRA_CORPUS's art, rhea and systrace folders when
# that variable names a directory) as seeds and the format dictionaries.
# Prints executions and coverage per target.
#
# A fuzz input starts with a control block (tests/fuzz/fuzz_target.h: byte 0
# picks the writer, byte 1 the options), so each seed is given twice, behind
# two different control blocks; libFuzzer mutates the block like the rest.
#
# By default a target stops at its first crash, hang or leak, and the input is
# written to tests/fuzz/regressions/<target>-* (the replay test runs it from
# then on). FUZZ_KEEP_GOING=1 runs libFuzzer's fork mode instead, which goes
# on after a crash: every crashing input lands in
# build-fuzz/fuzz-work/<target>-artifacts/, to be minimized
# (-minimize_crash=1) and kept, one per distinct bug, in tests/fuzz/regressions.
# FUZZ_TARGETS="fuzz_art fuzz_json" runs only those.
#
# fuzz_merge (batch --merge-summaries, tests/fuzz/fuzz_merge.c) takes summaries, not
# traces: its seeds are the summaries the fuzz build's traceconv batch writes for a few
# corpus traces (two and three shards, unsharded, run again), one run's summaries
# joined by the line "%%" its inputs are split at; its messages go to /dev/null
# (-close_fd_mask=2; libFuzzer's and the sanitizers' reports still show).
set -euo pipefail
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
regressions=$root/tests/fuzz/regressions
mkdir -p "$regressions"

# Every seed trace, whatever its format: a reader must refuse the others cleanly.
seed_files() {
  ls "$root"/corpus/*.trace "$root"/tests/ir/*.ir.txt "$root"/tests/json/*.json 2>/dev/null || true
  ls "$root"/tests/fuzz/deobf-seeds/* 2>/dev/null || true   # mappings (fuzz_deobf's input)
  for sub in systrace rhea art-longrun; do   # the traces, side files and non-traces, not the generator and facts
    find "$root/corpus/$sub" -maxdepth 1 -type f ! -name gen.py ! -name facts.json ! -name '*.md' ! -name '*.scn' | sort
  done
  local extra=${TC_EXTRA_CORPUS:-}
  [ -z "$extra" ] || [ "${extra#/}" != "$extra" ] || extra=$root/$extra   # relative: to the source dir, as the tests take it
  for sub in art systrace rhea; do
    [ -n "$extra" ] && [ -d "$extra/$sub" ] || continue
    find "$extra/$sub" -maxdepth 1 -type f ! -name '*.md' ! -name '*.py' ! -name 'LICENSE*' | sort
  done
}

# Copies every seed into $1 behind two control blocks: writer k with default
# options, and writer k+3 with options derived from k, so all writers and
# option bits appear among the seeds.
make_seeds() {
  local dir=$1 k=0 f
  while read -r f; do
    local b=$(( (k * 37 + 11) & 255 ))
    { printf "\\$(printf %03o $((k & 255)))\\000"; cat "$f"; } > "$dir/seed-$k-a"
    { printf "\\$(printf %03o $(((k + 3) & 255)))\\$(printf %03o $b)"; cat "$f"; } > "$dir/seed-$k-b"
    k=$((k + 1))
  done < <(seed_files)
}

# The seeds of fuzz_merge: the summaries of a few small runs of batch, each run's joined.
make_merge_seeds() {
  local dir=$1 tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-merge-seeds.XXXXXX")
  mkdir -p "$tmp/in"
  ls -S -r "$root"/corpus/*.trace | sed -n 1,5p | xargs -I{} cp {} "$tmp/in/"
  printf 'not a trace\n' > "$tmp/in/notes.txt"
  local tc=$build/traceconv k n i
  for n in 2 3 1; do
    for k in a b; do   # b: the same shards run again (their members "existing")
      local files=()
      for ((i = 0; i < n; i++)); do
        local shard=() ; [ "$n" -gt 1 ] && shard=(--shard "$i/$n")
        "$tc" batch -q -j 1 -o json -O "$tmp/out$n" --summary "$tmp/s$n-$i.json" "${shard[@]}" \
          "$tmp/in" "$tmp/no-such-input.zip" > /dev/null 2>&1 || true
        files+=("$tmp/s$n-$i.json")
      done
      local first=1 f
      for f in "${files[@]}"; do
        [ $first = 1 ] || printf '\n%%%%\n'
        first=0
        cat "$f"
      done > "$dir/summaries-$n-$k"
    done
  done
  rm -rf "$tmp"
}

status=0
summary=()
for exe in "$build"/fuzz_*; do
  target=$(basename "$exe")
  case " ${FUZZ_TARGETS:-$target} " in *" $target "*) ;; *) continue ;; esac   # FUZZ_TARGETS="fuzz_a fuzz_b" picks some
  work=$build/fuzz-work/$target
  seeds=$build/fuzz-seeds/$target
  rm -rf "$seeds"
  mkdir -p "$work" "$seeds"
  extra=()
  if [ "$target" = fuzz_merge ]; then
    make_merge_seeds "$seeds"
    extra=(-close_fd_mask=2)
  else
    make_seeds "$seeds"
  fi
  # the target's own dictionary (fuzz_art -> art.dict); the probing target takes the ART one
  d=$root/tests/fuzz/${target#fuzz_}.dict
  [ -f "$d" ] || d=$root/tests/fuzz/art.dict
  log=$build/fuzz-work/$target.log
  mode=(-artifact_prefix="$regressions/$target-")
  artifacts=
  if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    artifacts=$build/fuzz-work/$target-artifacts
    rm -rf "$artifacts"
    mkdir -p "$artifacts"
    mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -artifact_prefix="$artifacts/")
  fi
  echo "fuzz: $target for ${seconds}s (log $log)"
  set +e
  ASAN_OPTIONS=detect_leaks=1 "$exe" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -dict="$d" "${extra[@]}" "${mode[@]}" "$work" "$seeds" > "$log" 2>&1
  rc=$?
  set -e
  # the final stats, or in fork mode the last status line: "#123456: cov: 1234 ft: 5678 ..."
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  if [ -n "$artifacts" ]; then
    crashes=$(find "$artifacts" -type f | wc -l)
  else
    crashes=$(grep -c 'Test unit written to' "$log" || true)
  fi
  [ $rc -ne 0 ] || [ "${crashes:-0}" -gt 0 ] && status=1
  summary+=("$(printf '%-16s %12s execs %8s cov %8s ft %5s crashing inputs  exit %d' \
    "$target" "${execs:-0}" "${cov:-0}" "${ft:-0}" "${crashes:-0}" "$rc")")
done
printf '%s\n' "${summary[@]}"
exit $status
