#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target for FUZZ_SECONDS (default 600), with
# the project corpus (and ../shared/corpus when present) as seeds and the
# format dictionaries. Inputs that crash, hang or leak are written to
# tests/fuzz/regressions/<target>-* (the replay test runs them from then on).
# Prints executions and coverage per target. FUZZ_TARGETS="fuzz_art fuzz_json"
# runs only those (several runs can share the machine's cores).
set -euo pipefail
build=${1:-build-fuzz}
seconds=${FUZZ_SECONDS:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
regressions=$root/tests/fuzz/regressions
mkdir -p "$regressions"
status=0
summary=()
for exe in "$build"/fuzz_*; do
  target=$(basename "$exe")
  case " ${FUZZ_TARGETS:-$target} " in *" $target "*) ;; *) continue ;; esac   # FUZZ_TARGETS="fuzz_a fuzz_b" picks some
  work=$build/fuzz-work/$target
  seeds=$build/fuzz-seeds/$target
  mkdir -p "$work" "$seeds"
  cp "$root"/corpus/*.trace "$root"/tests/ir/*.ir.txt "$root"/tests/json/*.json "$seeds"/ 2>/dev/null || true
  [ -d "$root/../shared/corpus/art" ] && cp "$root"/../shared/corpus/art/* "$seeds"/ 2>/dev/null || true
  # the target's own dictionary (fuzz_art -> art.dict); probe+convert targets take the ART one
  d=$root/tests/fuzz/${target#fuzz_}.dict
  [ -f "$d" ] || d=$root/tests/fuzz/art.dict
  dict=(-dict="$d")
  log=$build/fuzz-work/$target.log
  echo "fuzz: $target for ${seconds}s (log $log)"
  set +e
  ASAN_OPTIONS=detect_leaks=1 "$exe" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 "${dict[@]}" -artifact_prefix="$regressions/$target-" \
    "$work" "$seeds" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  [ $rc -ne 0 ] && status=1
  summary+=("$(printf '%-14s %12s execs %8s cov %8s ft  exit %d' "$target" "$execs" "$cov" "$ft" "$rc")")
done
printf '%s\n' "${summary[@]}"
exit $status
